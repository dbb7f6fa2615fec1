"""Causes of false findings met on held-out public repositories (set C, docs/precision.md), each with a
failing, a clean and a trap case written the way those repositories write them (no file of theirs is
copied): overlays filled in by envsubst after `kustomize build`, inputs a build step generates, GPUs held
by tools that share no memory, fill-in words where a number goes, and namespace-less workloads whose
LocalQueue name several examples define."""

from __future__ import annotations

import os
import subprocess
import textwrap
from functools import partial

import pytest
from conftest import errors_and_warnings, lint_text, run_cli, said
from rule_harness import assert_findings, findings_of
from support.crds import crd
from support.trees import write_tree

from gpulint.lint.paths import release_snapshot

serious = partial(errors_and_warnings, fields=("path", "line", "rule", "severity"))


# --------------------------------------------------------------- an overlay that envsubst fills in later

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: "0"
spec:
  serviceName: placeholder
  replicas: 1
  selector:
    matchLabels: {app: placeholder}
  template:
    metadata:
      labels: {app: placeholder}
    spec:
      containers:
      - name: runner
        image: registry.example.com/bench:1.0
"""

# kustomize patches the target it names; `name: 0` is the target, not a value (it becomes "${PROJECT}-0")
PATCH = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: 0
spec:
  serviceName: ${PROJECT}-service
  selector:
    matchLabels: {app: "${PROJECT}-runner"}
  template:
    metadata:
      labels: {app: "${PROJECT}-runner"}
"""

KUSTOMIZATION = """
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${NAMESPACE}
namePrefix: ${PROJECT}-
resources:
- common/statefulset.yaml
patches:
- path: common/patch-statefulset.yaml
"""


def envsubst_overlay(kustomization: str = KUSTOMIZATION, patch: str = PATCH) -> dict[str, str]:
    return {
        "deploy/kustomization.yaml": kustomization,
        "deploy/common/statefulset.yaml": STATEFULSET,
        "deploy/common/patch-statefulset.yaml": patch,
    }


def test_an_overlay_filled_in_by_envsubst_is_no_invalid_name_and_its_patch_no_object(repo, render_tools):
    write_tree(repo, envsubst_overlay())
    for target in (".", "deploy", "deploy/common/patch-statefulset.yaml"):  # CI, the overlay, pre-commit
        result = run_cli("check", target, "--kubectl", render_tools["kubectl"], "--format", "json")
        assert serious(result) == [], (target, result.stdout)
        infos = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
        assert infos and all(f["severity"] == "info" for f in infos)  # said: placeholders, not values yet
        # at a file that wrote the field, not at a line of kustomize's output
        assert all(os.path.isfile(f["path"]) and f["path"].startswith("deploy/common/") for f in infos), infos


def test_the_same_overlay_with_a_real_bad_name_is_still_refused(repo, render_tools):
    # the trap: a literal invalid name in the same overlay is an error at the base that wrote it
    write_tree(repo, envsubst_overlay(patch=PATCH.replace("${PROJECT}-service", "svc")))
    (repo / "deploy/common/statefulset.yaml").write_text(
        textwrap.dedent(STATEFULSET)
        .lstrip("\n")
        .replace("labels: {app: placeholder}", "labels: {app: placeholder, tier: -gpu}"),
        encoding="utf-8",
    )
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [("deploy/common/statefulset.yaml", 12, "api-rejected", "error")], result.stdout


def test_a_patch_in_a_subfolder_of_a_templated_kustomization_is_not_linted_raw(repo, render_tools):
    # without the kustomization's placeholders the same layout was always fine; with them its patch
    # list was lost and `name: 0` reported as a schema error
    write_tree(repo, envsubst_overlay(kustomization=KUSTOMIZATION.replace("${NAMESPACE}", "bench")))
    assert serious(run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")) == []
    write_tree(repo, envsubst_overlay())
    assert serious(run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")) == []


# ------------------------------------------------------------------ an input a build step generates

GENERATED = {
    "deploy/base/kustomization.yaml": "resources:\n- settings.yaml\n",
    "deploy/base/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: agent-env}\ndata: {mode: dev}\n",
    "deploy/overlays/dev/kustomization.yaml": """
        resources:
        - ../../base
        # params.env is written by `make deploy` from your .env
        configMapGenerator:
        - name: agent-env
          behavior: merge
          envs:
          - params.env
        """,
}


def test_an_overlay_input_git_ignores_is_a_warning_not_a_broken_overlay(repo, render_tools):
    write_tree(repo, {**GENERATED, ".gitignore": "deploy/overlays/*/params.env\n"})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert (finding["path"], finding["line"], finding["severity"]) == (
        "deploy/overlays/dev/kustomization.yaml",
        8,
        "warning",
    )
    assert "'params.env' is not in the checkout: a build step writes it (.gitignore leaves it out)" in said(finding)


def test_an_overlay_input_missing_without_an_ignore_rule_is_still_an_error(repo, render_tools):
    write_tree(repo, GENERATED)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert finding["severity"] == "error" and "params.env" in said(finding)


def test_a_generated_input_that_is_present_is_rendered(repo, render_tools):
    write_tree(repo, {**GENERATED, ".gitignore": "deploy/overlays/*/params.env\n"})
    (repo / "deploy/overlays/dev/params.env").write_text("mode=prod\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [f for f in result.json()["findings"] if f["rule"] == "not-rendered"] == []


# ------------------------------------------------------------- GPUs held by programs that share no memory

HELD = """
apiVersion: v1
kind: Pod
metadata: {name: gpu-check}
spec:
  restartPolicy: OnFailure
  containers:
  - name: check
    image: {image}
{command}
    resources:
      limits:
        {resource}: 8
"""


def held(image: str, command: str = "", resource: str = "nvidia.com/gpu") -> str:
    return HELD.replace("{image}", image).replace("{command}", command).replace("{resource}", resource)


@pytest.mark.parametrize(
    "image, command, resource",
    [
        (
            "registry.example.com/gpuburn:latest",
            '    command: ["/bin/sh"]\n    args: ["-c", "/opt/gpuburn/gpu_burn 120"]',
            "nvidia.com/gpu",
        ),
        ("vault.habana.ai/gaudi-docker/1.5.0/installer", '    command: ["hl-smi"]', "habana.ai/gaudi"),
        (
            "nvidia/cuda:12.4.1-base-ubuntu22.04",
            '    command: ["sh", "-c", "nvidia-smi -L; echo done"]',
            "nvidia.com/gpu",
        ),
        ("public.ecr.aws/eks-distro/kubernetes/pause:3.2", "", "nvidia.com/gpu"),  # a scale test's placeholder
        ("registry.k8s.io/pause:3.9", "", "amd.com/gpu"),
        # set D: a preemption test's demand that must stay pending; Kueue's samples' placeholder
        ("busybox:latest", '    command: ["sleep", "600"]', "amd.com/gpu"),
        ("docker.io/library/alpine:3.20", '    command: ["sh", "-c", "echo waiting; sleep 3600"]', "nvidia.com/gpu"),
        ("gcr.io/k8s-staging-perf-tests/sleep:v0.1.0", '    args: ["600s"]', "nvidia.com/gpu"),
        # HAMi's demo pods: a distribution's base image that sleeps, for `kubectl exec ... nvidia-smi`
        ("ubuntu:22.04", '    command: ["bash", "-c", "sleep 86400"]', "nvidia.com/gpu"),
        ("registry.access.redhat.com/ubi9/ubi-minimal:9.4", '    command: ["sleep", "infinity"]', "amd.com/gpu"),
        ("registry.k8s.io/nginx-slim:0.27", "", "nvidia.com/gpu"),  # a web server's own entrypoint
    ],
)
def test_gpus_held_by_a_query_tool_a_burn_in_or_pause_need_no_dev_shm(image, command, resource):
    assert_findings("dev-shm-missing", held(image, command, resource), [])


@pytest.mark.parametrize(
    "command",
    [
        '    command: ["sh", "-c", "nvidia-smi && torchrun --nproc-per-node 8 train.py"]',  # a real job after it
        '    command: ["sleep", "infinity"]',  # mpirun or kubectl exec starts the ranks in it
        '    command: ["/usr/sbin/sshd", "-De"]',
        "",  # the image's own entrypoint: unknown
    ],
)
def test_a_container_that_may_run_collectives_keeps_the_finding(command):
    assert_findings(
        "dev-shm-missing", held("registry.example.com/trainer:2.1", command), [(7, 11, "(8 nvidia.com/gpu)")]
    )


@pytest.mark.parametrize(
    "image, command",
    [
        ("busybox:latest", '    command: ["sh", "-c", "sleep 5; ./train --gpus 8"]'),  # a real program after the wait
        ("busybox:latest", '    command: ["/usr/sbin/sshd", "-D"]'),
        ("registry.example.com/busybox-cuda:1.0", '    command: ["sleep", "600"]'),  # not the base image
        ("gcr.io/k8s-staging-perf-tests/sleep:v0.1.0", '    command: ["/bin/sh", "-c", "torchrun train.py"]'),
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", '    command: ["sleep", "infinity"]'),  # CUDA's image: exec'd into
        ("registry.example.com/ml/ubuntu-cuda:22.04", '    command: ["bash", "-c", "sleep 86400"]'),  # built on ubuntu
        ("ubuntu:22.04", '    command: ["bash", "-c", "pip install torch && torchrun --nproc-per-node 8 t.py"]'),
        ("nginx:1.27", '    command: ["python", "serve.py"]'),  # not nginx's entrypoint
    ],
)
def test_a_base_image_that_runs_more_than_a_wait_keeps_the_finding(image, command):
    assert_findings("dev-shm-missing", held(image, command), [(7, 11, "(8 nvidia.com/gpu)")])


# Kueue's LeaderWorkerSet sample: nginx workers given one GPU each to show topology-aware placement
LWS_RANKS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: nginx-leaderworkerset
  labels: {kueue.x-k8s.io/queue-name: tas-user-queue}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: {image}
          resources:
            requests: {cpu: 200m, nvidia.com/gpu: "1"}
"""


def test_one_gpu_ranks_running_a_web_server_need_no_dev_shm():
    lws = LWS_RANKS.replace("{image}", "registry.k8s.io/nginx-slim:0.27")
    assert_findings("dev-shm-missing", lws, [])


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.8.5", "registry.example.com/nginx-llm:1.0"])
def test_one_gpu_ranks_of_any_other_image_keep_the_finding(image):
    lws = LWS_RANKS.replace("{image}", image)
    assert_findings("dev-shm-missing", lws, [(13, 17, "one rank of a distributed LeaderWorkerSet")])


# ------------------------------------------------------------------- host-network-dns: a lone pod

LONE_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: device-check}
spec:
  template:
    spec:
      hostNetwork: true
      restartPolicy: Never
      containers:
      - name: check
        image: registry.example.com/diag:1.0
        resources:
          limits: {nvidia.com/gpu: 8}
"""


def test_host_network_dns_names_no_rendezvous_for_a_lone_job():
    (finding,) = assert_findings("host-network-dns", LONE_JOB, [(7, 7, "hostNetwork: true with dnsPolicy")])
    assert "rendezvous" not in finding.message and "cluster Service names do not resolve" in finding.message
    found = findings_of("host-network-dns", RANKS)  # the trap: ranks do rendezvous, and are told so
    assert len(found) == 1 and "the rendezvous fails" in found[0].message


RANKS = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pretrain}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          hostNetwork: true
          containers:
          - name: pytorch
            image: registry.example.com/pretrain:2.1
            resources:
              limits: {nvidia.com/gpu: 8}
"""


# ------------------------------------------------------------------- a fill-in word where a number goes

SCTP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: sctp-app}
spec:
  replicas: 1
  selector: {matchLabels: {app: sctp-app}}
  template:
    metadata: {labels: {app: sctp-app}}
    spec:
      containers:
      - name: app
        image: CONTAINER_IMAGE
        ports:
        - containerPort: PORT
          protocol: SCTP
"""


def test_a_capitalised_fill_in_word_in_a_number_field_is_no_schema_error():
    assert_findings("schema-invalid", SCTP, [])
    assert_findings("schema-invalid", SCTP.replace("replicas: 1", "replicas: NUM_REPLICAS"), [])


@pytest.mark.parametrize("value", ["http", "8080x", "Port", "'8080'"])
def test_a_wrong_value_in_a_number_field_is_still_a_schema_error(value):
    found = findings_of("schema-invalid", SCTP.replace("containerPort: PORT", f"containerPort: {value}"))
    assert [(f.line, f.column) for f in found] == [(14, 26)], found


# ------------------------------------------------- a namespace-less workload and two examples' LocalQueues

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: tpu-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [google.com/tpu]
    flavors:
    - name: tpu
      resources:
      - {name: google.com/tpu, nominalQuota: 64}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: tpu-cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 72}
      - {name: memory, nominalQuota: 288Gi}
      - {name: nvidia.com/gpu, nominalQuota: 6}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: llm}
spec: {clusterQueue: cluster-queue}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: tpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi
{namespace}spec:
  replicas: 1
  selector: {matchLabels: {app: tgi}}
  template:
    metadata:
      labels: {app: tgi, kueue.x-k8s.io/queue-name: lq}
    spec:
      containers:
      - name: server
        image: registry.example.com/tgi:2.1
        resources:
          limits: {cpu: "4", memory: 30Gi, nvidia.com/gpu: 2}
"""


def test_a_namespace_less_workload_is_not_judged_by_another_examples_local_queue():
    assert_findings("queue-unadmittable", QUEUES.replace("{namespace}", ""), [])


def test_a_workload_in_the_tpu_queues_namespace_is_still_judged():
    found = findings_of("queue-unadmittable", QUEUES.replace("{namespace}", "  namespace: default\n"))
    assert [f.severity for f in found] == ["warning"] and "can never admit" in found[0].message


# ----------------------------------- a chart whose values the installer gives (set D: a recipe's -f values.yaml)

# A shared chart that recipes install with their own values (`helm install -f recipe/values.yaml CHART`): it
# holds no values of its own, or writes the keys to give with no value.
RECIPE_CHART = {
    "charts/job/Chart.yaml": "apiVersion: v2\nname: job_workload\nversion: 0.1.0\n",
    "charts/job/templates/workload-job.yaml": """
        {{$nodes := div .Values.workload.gpus 8 | max 1}}
        {{$gpusPerNode := min .Values.workload.gpus 8}}
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: "{{ .Release.Name }}"
        spec:
          parallelism: {{ $nodes }}
          completions: {{ $nodes }}
          completionMode: Indexed
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: workload
                image: "{{ .Values.workload.image }}"
                resources:
                  limits:
                    nvidia.com/gpu: {{ $gpusPerNode }}
        """,
}

NCCL_CHART = {
    "nccl-tests/Chart.yaml": "apiVersion: v2\nname: nccl-test\nversion: 0.1.0\n",
    "nccl-tests/values.yaml": """
        queue:
        testSettings:
          nodes: 2
          gcsBucket:
        """,
    "nccl-tests/templates/nccl-tests-job.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: "{{ .Release.Name }}"
        data:
          bucket: {{ required ".Values.testSettings.gcsBucket is required" .Values.testSettings.gcsBucket }}
        """,
}


def not_rendered(result) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["severity"]) for f in result.json()["findings"] if f["rule"] == "not-rendered"]


def test_a_chart_with_no_values_of_its_own_is_not_broken_but_not_checked(repo, render_tools):
    write_tree(repo, RECIPE_CHART)
    for target in (".", "charts/job"):  # CI, pre-commit
        result = run_cli("check", target, "--helm", render_tools["helm"], "--format", "json")
        assert not_rendered(result) == [("charts/job/templates/workload-job.yaml", 1, "warning")], result.stdout
        (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
        assert "no value for .Values.workload.gpus (the chart has no values.yaml)" in said(finding)
        assert "not checked" in said(finding)


def test_a_required_value_left_empty_in_values_yaml_is_not_checked(repo, render_tools):
    write_tree(repo, NCCL_CHART)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert not_rendered(result) == [("nccl-tests/templates/nccl-tests-job.yaml", 6, "warning")], result.stdout
    assert "(values.yaml leaves it empty)" in said(result.json()["findings"][0])


def test_the_recipe_chart_given_its_values_is_rendered_and_checked(repo, render_tools):
    write_tree(repo, {**RECIPE_CHART, "recipe/values.yaml": "workload: {gpus: 16, image: trainer:1.0}\n"})
    result = run_cli(
        "check", "charts/job", "--helm", render_tools["helm"], "--values", "recipe/values.yaml", "--format", "json"
    )
    assert not_rendered(result) == []
    # rendered: its two 8-GPU ranks are checked
    assert {f["rule"] for f in result.json()["findings"]} >= {"gang-missing", "dev-shm-missing"}


@pytest.mark.parametrize(
    "values",
    [
        "workloads:\n  gpus: 16\n  image: trainer:1.0\n",  # not the key the template reads: a typo
        "workload: [16, trainer:1.0]\n",  # written, and not what the template takes
    ],
)
def test_a_chart_whose_own_values_break_it_is_still_an_error(repo, render_tools, values):
    write_tree(repo, {**RECIPE_CHART, "charts/job/values.yaml": values})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert [severity for _, _, severity in not_rendered(result)] == ["error"], result.stdout


def test_a_required_value_the_user_was_asked_to_give_and_did_not_is_still_an_error(repo, render_tools):
    write_tree(repo, {**NCCL_CHART, "nccl.values.yaml": "testSettings: {nodes: 4}\n"})
    result = run_cli(
        "check", "nccl-tests", "--helm", render_tools["helm"], "--values", "nccl.values.yaml", "--format", "json"
    )
    assert [severity for _, _, severity in not_rendered(result)] == ["error"], result.stdout


# ------------------------------------------ a base's remote resource, reached by several environments' overlays

SHARED_BASE = {
    "deps/base/kueue/kustomization.yaml": """
        resources:
        - https://github.com/kubernetes-sigs/kueue/releases/download/v0.12.3/manifests.yaml
        """,
    "deps/base/kustomization.yaml": "resources:\n- kueue\n",
    "deps/overlays/kind-test/kustomization.yaml": "resources:\n- ../../base\n",
    "deps/overlays/vcluster/kustomization.yaml": "resources:\n- ../../base\n",
}


def test_a_bases_remote_resource_is_said_once_not_once_per_overlay(repo, render_tools):
    write_tree(repo, SHARED_BASE)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [("deps/base/kueue/kustomization.yaml", 2, "warning")], result.stdout


def test_two_bases_remote_resources_are_each_said(repo, render_tools):
    # the trap: two places, each said; and the overlay with nothing remote is rendered, no problem
    write_tree(
        repo,
        {
            **SHARED_BASE,
            "deps/overlays/vcluster/kustomization.yaml": "resources:\n- https://example.com/vcluster.yaml\n",
        },
    )
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [
        ("deps/base/kueue/kustomization.yaml", 2, "warning"),
        ("deps/overlays/vcluster/kustomization.yaml", 2, "warning"),
    ], result.stdout


# ------------------------------------------------------- set E: fill-in forms a program replaces before use

# NVIDIA's NIM operator e2e data: `strings.ReplaceAll(data, "{NEMO_ENTITYSTORE_REPO}", repo)` before Unmarshal
BRACED = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: entitystore}
spec:
  selector: {matchLabels: {app: entitystore}}
  template:
    metadata: {labels: {app: entitystore}}
    spec:
      containers:
      - name: api
        image: {image}
"""


def test_a_single_braced_name_a_program_replaces_is_no_schema_error():
    findings = lint_text(BRACED.replace("{image}", "{NEMO_ENTITYSTORE_REPO}"), "test/e2e/data/entitystore.yml")
    assert [(f.rule, f.severity.name.lower()) for f in findings] == [("not-rendered", "info")]
    assert "{NEMO_ENTITYSTORE_REPO} is a placeholder" in findings[0].message


@pytest.mark.parametrize("value", ["{name: api-server}", "{REPO: nginx}", "{repo}"])
def test_a_flow_mapping_where_a_string_goes_is_still_a_schema_error(value):
    findings = lint_text(BRACED.replace("{image}", value))
    assert [(f.rule, f.line) for f in findings if f.severity.name.lower() == "error"] == [("schema-invalid", 11)]


# karpenter-provider-aws's AMI suite: `fmt.Sprintf(string(testdata), cluster, endpoint, ca)` before use
PRINTF = """
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: {value}
    cidr: 10.100.0.0/16
"""


@pytest.mark.parametrize("verb", ["%s", "%q", "%-8d"])
def test_a_printf_format_file_is_a_template_not_a_broken_manifest(verb):
    findings = lint_text(PRINTF.replace("{value}", verb), "testdata/al2023_userdata_input.yaml")
    assert [(f.rule, f.severity.name.lower(), f.line, f.column) for f in findings] == [("not-rendered", "info", 5, 11)]
    assert f"{verb} is a printf verb" in findings[0].message


@pytest.mark.parametrize("text", [PRINTF.replace("{value}", "[a"), "%YAML 1.1\n%TAG ! x\n---\nkind: Pod\n  a: [b\n"])
def test_other_yaml_syntax_errors_stay_errors(text):
    findings = lint_text(text)
    assert [f.rule for f in findings if f.severity.name.lower() == "error"] == ["yaml-invalid"]


# operator-sdk's bundle/tests/scorecard/config.yaml: `apiversion`, read by encoding/json (case-insensitive)
SCORECARD = """
kind: Configuration
apiversion: scorecard.operatorframework.io/v1alpha3
metadata:
  name: config
stages:
- parallel: true
  tests:
  - image: quay.io/operator-framework/scorecard-test:latest
    entrypoint: [scorecard-test, basic-check-spec]
"""


def test_a_tools_configuration_spelling_apiversion_is_no_manifest():
    assert lint_text(SCORECARD, "bundle/tests/scorecard/config.yaml") == []


def test_a_kubernetes_kind_spelling_apiversion_is_still_refused():
    text = "apiversion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"
    findings = lint_text(text)
    assert [(f.rule, f.severity.name.lower(), f.line) for f in findings] == [("schema-invalid", "error", 1)]
    assert "'apiversion' is not apiVersion" in findings[0].notes[0]


# ---------------------------------------------------- set E: one process drives a JAX container's GPUs

JAX = """
apiVersion: v1
kind: Pod
metadata: {name: jax-multi-gpu-pod}
spec:
  restartPolicy: Never
  containers:
  - name: jax
    image: {image}
    command: {command}
    resources:
      limits: {amd.com/gpu: 2}
"""


@pytest.mark.parametrize("image", ["rocm/jax:latest", "nvcr.io/nvidia/jax:24.04"])
def test_a_jax_program_started_as_one_process_needs_no_dev_shm(image):
    text = JAX.replace("{image}", image).replace("{command}", '[python3, -c, "import jax; print(jax.devices())"]')
    assert_findings("dev-shm-missing", text, [])


@pytest.mark.parametrize(
    "image, command",
    [
        ("rocm/jax:latest", "[mpirun, -np, '2', python3, train.py]"),  # a process per GPU
        ("rocm/pytorch:latest", '[python3, -c, "import torch"]'),  # not JAX's image
        ("rocm/jax:latest", "[bash, run.sh]"),  # a script gpulint does not read
    ],
)
def test_a_jax_image_with_a_launcher_or_another_image_keeps_the_finding(image, command):
    text = JAX.replace("{image}", image).replace("{command}", command)
    assert_findings("dev-shm-missing", text, [(7, 11, "(2 amd.com/gpu)")])


# ------------------------------------------ set E: Karpenter's controller runs on the nodes no pool makes

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general-purpose}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
"""

CONTROLLER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system}
spec:
  replicas: 2
  selector: {matchLabels: {app: karpenter}}
  template:
    metadata: {labels: {app: karpenter}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: karpenter.sh/nodepool, operator: {operator}}
      containers:
      - name: controller
        image: mcr.microsoft.com/aks/karpenter/controller:v1.6.0
"""


def affinity_findings(repo, operator: str) -> list[tuple[str, int, str, str]]:
    write_tree(
        repo,
        {"examples/v1/general-purpose.yaml": POOL, "deploy/karpenter.yaml": CONTROLLER.replace("{operator}", operator)},
    )
    result = run_cli("check", ".", "--format", "json")
    return [f for f in serious(result) if f[2] == "over-tight-affinity"]


def test_a_pod_that_must_avoid_every_pools_nodes_is_not_judged_by_the_pools(repo):
    assert affinity_findings(repo, "DoesNotExist") == []


def test_a_pod_that_needs_a_pools_label_is_still_judged_by_the_pools(repo):
    # the trap: a value of the pools' own label that no pool gives is still judged by the pools
    write_tree(repo, {"examples/v1/general-purpose.yaml": POOL})
    text = CONTROLLER.replace("operator: {operator}}", "operator: In, values: [gpu]}")
    write_tree(repo, {"deploy/karpenter.yaml": text})
    result = run_cli("check", ".", "--format", "json")
    assert [f[:3] for f in serious(result) if f[2] == "over-tight-affinity"] == [
        ("deploy/karpenter.yaml", 15, "over-tight-affinity")
    ], result.stdout


KARPENTER_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: aks-general-purpose-x7k2p
  labels: {karpenter.sh/nodepool: general-purpose, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
"""


def test_with_the_nodes_known_a_pod_avoiding_every_pool_is_still_judged(repo):
    # the trap: an inventory whose every node a pool made proves the controller has nowhere to run
    write_tree(repo, {"inventory/nodes.yaml": KARPENTER_NODE})
    affinity_findings(repo, "DoesNotExist")  # writes the pool and the controller
    result = run_cli("check", ".", "--inventory", "inventory", "--format", "json")
    assert [f[:3] for f in serious(result) if f[2] == "over-tight-affinity"] == [
        ("deploy/karpenter.yaml", 15, "over-tight-affinity")
    ], result.stdout


# ----------------------------------------------------------------------------------------------- set F
# Causes met on set F (docs/precision.md): overlay inputs a configure script or Terraform writes, Job names
# made from a placeholder JobSet name, TPU7x chips that are two JAX devices, a ProvisioningRequest's
# PodTemplate and the pods that consume it, Terraform templates, and Chart.yaml or kustomization files that
# set nothing yet.

# A configure script fills each base's env file from its template with envsubst before `kubectl apply -k`;
# neither .gitignore nor the checkout has the env file.
SCRIPTED = {
    "inference/online-gpu/configure_deployment.sh": """
        #!/usr/bin/env bash
        MY_PATH="$(dirname "$0")"
        envsubst <"${MY_PATH}/base/templates/deployment.tpl.env" | sponge "${MY_PATH}/base/deployment.env"
        """,
    "inference/online-gpu/base/templates/deployment.tpl.env": "NAMESPACE=${NAMESPACE}\n",
    "inference/online-gpu/base/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        configMapGenerator:
          - envs:
              - deployment.env
            name: deployment
        """,
    "inference/online-gpu/vllm/kustomization.yaml": "resources:\n- ../base\n- deployment.yaml\n",
    "inference/online-gpu/vllm/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: vllm}
        spec:
          selector: {matchLabels: {app: vllm}}
          template:
            metadata: {labels: {app: vllm}}
            spec:
              containers:
              - name: vllm
                image: vllm/vllm-openai:v0.10.0
        """,
}


def scripted_findings(repo, render_tools, files) -> list[dict]:
    write_tree(repo, files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    return [f for f in result.json()["findings"] if f["rule"] == "not-rendered" and f["severity"] != "info"]


def test_an_overlay_input_a_script_fills_from_its_template_is_a_warning(repo, render_tools):
    (finding,) = scripted_findings(repo, render_tools, SCRIPTED)
    assert (finding["path"], finding["line"], finding["severity"]) == (
        "inference/online-gpu/base/kustomization.yaml",
        5,
        "warning",
    )
    assert "its template templates/deployment.tpl.env is in the repository" in said(finding)


def test_an_overlay_input_terraform_downloads_is_a_warning(repo, render_tools):
    files = {
        "workloads/kueue/main.tf": """
            resource "terraform_data" "manifests" {
              provisioner "local-exec" {
                command = "wget https://example.com/manifests.yaml -O ${self.input.dir}/manifests.yaml"
              }
            }
            """,
        "workloads/kueue/templates/workload/kustomization.yaml": "resources:\n  - manifests.yaml\n",
    }
    (finding,) = scripted_findings(repo, render_tools, files)
    assert finding["severity"] == "warning"
    assert "workloads/kueue/main.tf writes it" in said(finding)


def test_an_overlay_input_a_script_only_reads_is_still_an_error(repo, render_tools):
    files = {**SCRIPTED, "inference/online-gpu/configure_deployment.sh": "cat base/deployment.env\n"}
    del files["inference/online-gpu/base/templates/deployment.tpl.env"]
    (finding,) = scripted_findings(repo, render_tools, files)
    assert finding["severity"] == "error" and "deployment.env" in said(finding)


def test_a_missing_file_nothing_writes_is_said_beside_a_generated_one(repo, render_tools):
    files = {
        **SCRIPTED,
        "inference/online-gpu/eval/kustomization.yaml": """
            resources:
            - ../base
            configMapGenerator:
            - name: script
              files:
              - train.py=src/eval.py
            """,
    }
    found = {(f["path"], f["severity"]) for f in scripted_findings(repo, render_tools, files)}
    assert ("inference/online-gpu/eval/kustomization.yaml", "error") in found
    assert ("inference/online-gpu/base/kustomization.yaml", "warning") in found


# A configsync template: a kustomization that sets nothing until `kustomize edit add resource` runs.
def test_a_kustomization_that_sets_nothing_yet_is_a_warning(repo, render_tools):
    header = "# Licensed under the Apache License, Version 2.0\n"
    files = {
        "templates/_cluster_template/kustomization.yaml": f"{header}apiVersion: v1beta1\nkind: Kustomization\nresources:\n"
    }
    (finding,) = scripted_findings(repo, render_tools, files)
    assert finding["severity"] == "warning" and "it sets nothing yet: a tool fills it in" in said(finding)


def test_a_kustomization_with_a_broken_entry_is_still_an_error(repo, render_tools):
    files = {"overlay/kustomization.yaml": "resources:\n- missing.yaml\n"}
    (finding,) = scripted_findings(repo, render_tools, files)
    assert finding["severity"] == "error"


# kthena's CLI embeds helm/templates with go:embed; its Chart.yaml beside them is empty.
def test_an_empty_chart_yaml_is_no_broken_chart(repo, render_tools):
    write_tree(repo, {"cli/helm/Chart.yaml": "", "cli/helm/templates/job.yaml": "apiVersion: v1\nkind: ConfigMap\n"})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert finding["severity"] == "warning" and "Chart.yaml is empty" in said(finding)


def test_a_chart_yaml_without_a_name_is_still_an_error(repo, render_tools):
    write_tree(repo, {"chart/Chart.yaml": "apiVersion: v2\nversion: 1.0.0\n", "chart/templates/x.yaml": "a: b\n"})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert finding["severity"] == "error"


# tpu-recipes: `envsubst < k8s_manifest.yaml | kubectl apply -f -` with WORKLOAD_NAME set by the README.
JOBSET_NAMED = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
spec:
  replicatedJobs:
    - name: slice-job
      replicas: 1
      template:
        spec:
          parallelism: 1
          completions: 1
          template:
            spec:
              containers:
              - name: jax
                image: python:3.12
"""


def test_job_names_made_from_a_placeholder_jobset_name_are_not_refused():
    findings = lint_text(JOBSET_NAMED.replace("{name}", "${WORKLOAD_NAME}"))
    assert [f.rule for f in findings if f.severity.name.lower() == "error"] == []


@pytest.mark.parametrize("name", ["Gemma_Run", "x" * 60])
def test_job_names_made_from_a_written_jobset_name_are_still_refused(name):
    findings = lint_text(JOBSET_NAMED.replace("{name}", name))
    assert "operator-rejected" in [f.rule for f in findings if f.severity.name.lower() == "error"]


# A vLLM TPU server on one host of 4 chips (2x2x1).
TPU_SERVER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-tpu}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: {accelerator}
        cloud.google.com/gke-tpu-topology: 2x2x1
      containers:
      - name: vllm-tpu
        image: vllm/vllm-tpu:nightly
        command: ["vllm", "serve"]
        args: ["--model=Qwen/Qwen3-32B", "--tensor-parallel-size={tp}"]
        resources:
          limits: {google.com/tpu: 4}
"""


def tpu_parallelism(accelerator: str, tp: int) -> list[tuple[str, str]]:
    text = TPU_SERVER.replace("{accelerator}", accelerator).replace("{tp}", str(tp))
    return [(f.severity.name.lower(), f.message) for f in lint_text(text) if f.rule == "parallelism-mismatch"]


def test_a_tpu7x_chip_is_two_jax_devices():
    assert tpu_parallelism("tpu7x", 8) == []


@pytest.mark.parametrize(("accelerator", "tp"), [("tpu7x", 16), ("tpu-v6e-slice", 8)])
def test_more_ranks_than_the_hosts_jax_devices_is_still_refused(accelerator, tp):
    ((severity, message),) = tpu_parallelism(accelerator, tp)
    assert severity == "error"
    assert "4 google.com/tpu" in message


def test_a_tpu_pod_on_a_generation_gpulint_does_not_know_is_not_judged():
    assert tpu_parallelism("tpu-v9-future", 16) == []


# GKE's DWS samples: a PodTemplate the ProvisioningRequest names, and the Job that consumes the capacity.
PROVISIONING = """
apiVersion: v1
kind: PodTemplate
metadata: {name: h100-job}
template:
  spec:
    containers:
    - name: pi
      image: perl
      command: ["/bin/sh"]
      resources:
        limits: {nvidia.com/gpu: 8}
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: ProvisioningRequest
metadata: {name: h100-job}
spec:
  provisioningClassName: queued-provisioning.gke.io
  podSets:
  - count: 2
    podTemplateRef: {name: h100-job}
---
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    metadata:
      annotations: {annotations}
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.example.com/finetune:1.0
        command: ["accelerate", "launch", "--num_processes", "16", "train.py"]
        resources:
          limits: {nvidia.com/gpu: 8}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def provisioning(annotations: str) -> list[tuple[str, int]]:
    return [
        (f.rule, f.line)
        for f in lint_text(PROVISIONING.replace("{annotations}", annotations))
        if f.severity.name.lower() in ("error", "warning")
    ]


def test_a_provisioning_requests_pod_template_and_the_pods_consuming_it_are_not_flagged():
    consume = '{"cluster-autoscaler.kubernetes.io/consume-provisioning-request": h100-job}'
    assert provisioning(consume) == []
    assert provisioning('{"autoscaling.x-k8s.io/consume-provisioning-request": h100-job}') == []


def test_pods_that_consume_no_provisioning_request_still_need_a_gang():
    found = provisioning('{"gke-gcsfuse/volumes": "true"}')
    assert [place for place in found if place[0] == "gang-missing"] == [("gang-missing", 25)]


def test_a_pod_with_the_same_containers_still_needs_dev_shm():
    text = PROVISIONING.split("---")[0].replace("kind: PodTemplate", "kind: Pod").replace("template:\n  spec:", "spec:")
    text = textwrap.dedent(text.replace("\n    ", "\n  ").replace("\n  spec:", "\nspec:"))
    assert "dev-shm-missing" in [f.rule for f in lint_text(text)]


# Terraform's templatefile() fills `%{ for }` directives in before the file is YAML.
TFTPL = """
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
%{ if can(namespace) }namespace: ${namespace}%{ endif }

resources:
%{ for resource in resources }- ${resource}
%{ endfor }
"""


def test_a_terraform_template_is_no_broken_manifest():
    findings = lint_text(TFTPL, "templates/kustomize/kustomization.tftpl.yaml")
    assert [(f.rule, f.severity.name.lower(), f.line) for f in findings] == [("not-rendered", "info", 3)]
    assert "Terraform template directive" in findings[0].message


def test_a_percent_at_a_line_start_that_is_no_directive_is_still_an_error():
    findings = lint_text("apiVersion: v1\nkind: ConfigMap\n%{ nothing }\n")
    assert [(f.rule, f.severity.name.lower()) for f in findings] == [("yaml-invalid", "error")]


# ------------------------------------------ a past release's documentation judged by the current CRD (set F, Kthena)

# Kthena's ModelBooster CRD as the repository holds it now: the backend's replicas replaced minReplicas/maxReplicas.
CURRENT_CRD = crd(
    "workload.serving.volcano.sh",
    "ModelBooster",
    """
    type: object
    properties:
      name: {type: string}
      backend:
        type: object
        required: [name, replicas]
        properties:
          name: {type: string}
          modelURI: {type: string}
          replicas: {type: integer, format: int32}
""",
)
# The same CRD as release v0.1.0 shipped it.
RELEASED_CRD = CURRENT_CRD.replace("required: [name, replicas]", "required: [name, minReplicas]").replace(
    "replicas: {type: integer, format: int32}",
    "minReplicas: {type: integer, format: int32}\n                  maxReplicas: {type: integer, format: int32}",
)
BOOSTER = """
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata:
  name: deepseek-r1-distill-llama-8b
spec:
  name: deepseek-r1-distill-llama-8b
  backend:
    name: deepseek-r1-distill-llama-8b-vllm
    modelURI: s3://model-bucket/deepseek-r1-distill-llama-8b
{replicas}
"""
OLD_REPLICAS = "    minReplicas: 1\n    maxReplicas: 3"
NEW_REPLICAS = "    replicas: 1"
SNAPSHOT = "docs/kthena/versioned_docs/version-v0.1.0/assets/examples/model-booster/deepseek.yaml"
CHART_CRD = "charts/kthena/charts/workload/crds/workload.serving.volcano.sh_modelboosters.yaml"
KUBEBUILDER_CRD = "config/crd/bases/workload.serving.volcano.sh_modelboosters.yaml"


def booster(replicas: str) -> str:
    return BOOSTER.replace("{replicas}", replicas)


def schema_places(result) -> list[tuple[str, int, str]]:
    assert result.exit_code in (0, 1), result.stderr
    return [(path, line, severity) for path, line, rule, severity in serious(result) if rule == "schema-invalid"]


def kthena_tree(repo, crd_path: str, example: str, files: dict[str, str] | None = None) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, {crd_path: CURRENT_CRD, SNAPSHOT: example, **(files or {})})


@pytest.mark.parametrize("crd_path", [CHART_CRD, KUBEBUILDER_CRD])
def test_a_versioned_docs_example_is_not_judged_by_the_current_crd_alone(repo, crd_path):
    # pre-commit names the snapshot's file alone: the repository context gives it the CRD of today's release
    kthena_tree(repo, crd_path, booster(OLD_REPLICAS))
    assert schema_places(run_cli("check", SNAPSHOT, "--format", "json")) == []


def test_a_versioned_docs_example_is_not_judged_by_the_current_crd_in_the_repository(repo):
    kthena_tree(repo, KUBEBUILDER_CRD, booster(OLD_REPLICAS))
    assert schema_places(run_cli("check", ".", "--format", "json")) == []


# (a run over the repository does not read a chart's crds/ folder: helm template does not print it)
@pytest.mark.parametrize(
    ("crd_path", "mode"), [(CHART_CRD, "alone"), (KUBEBUILDER_CRD, "alone"), (KUBEBUILDER_CRD, "repository")]
)
def test_a_current_example_is_still_judged_by_the_current_crd(repo, crd_path, mode):
    # the trap: the same example outside the snapshot documents today's release, whose CRD requires replicas
    current = "examples/model-booster/deepseek.yaml"
    kthena_tree(repo, crd_path, booster(NEW_REPLICAS), {current: booster(OLD_REPLICAS)})
    result = run_cli("check", current if mode == "alone" else ".", "--format", "json")
    assert schema_places(result) == [(current, 8, "error"), (current, 10, "warning"), (current, 11, "warning")]


@pytest.mark.parametrize("mode", ["alone", "repository"])
def test_a_snapshots_own_crd_judges_its_examples_and_only_them(repo, mode):
    # the trap: a CRD inside the snapshot is that release's: it still refuses the snapshot's example that breaks it,
    # and does not judge today's example (which matches today's CRD)
    current = "examples/model-booster/deepseek.yaml"
    snapshot_crd = "docs/kthena/versioned_docs/version-v0.1.0/assets/crds/modelboosters.yaml"
    files = {snapshot_crd: RELEASED_CRD, current: booster(NEW_REPLICAS)}
    kthena_tree(repo, KUBEBUILDER_CRD, booster(NEW_REPLICAS), files)
    paths = [SNAPSHOT, current] if mode == "alone" else ["."]
    found = [schema_places(run_cli("check", path, "--format", "json")) for path in paths]
    assert [place for places in found for place in places] == [
        (SNAPSHOT, 8, "error"),
        (SNAPSHOT, 10, "warning"),
    ]


# vllm-project/aibrix keeps each release's regression manifests in test/regression/vX.Y.Z; v0.2.1's KVCache has the
# spec of v0.2.1's CRD (replicas, service.port, cacheSpec), which today's CRD (service.ports required) refuses
KVCACHE_CRD = crd(
    "orchestration.aibrix.ai",
    "KVCache",
    """
    type: object
    properties:
      mode: {type: string}
      service:
        type: object
        required: [ports]
        properties:
          type: {type: string}
          ports: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
""",
)
OLD_KVCACHE = """
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: KVCache
metadata:
  name: llama3-1-8b-kvcache
  namespace: default
spec:
  replicas: 1
  service:
    type: ClusterIP
    port: 9600
"""


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("test/regression/v0.2.1/aibrix_kvcache_0.6.1.yaml", []),
        # the trap: the same manifest outside a release's folder is judged by the repository's CRD
        ("samples/kvcache/kvcache.yaml", [(7, "warning"), (9, "error"), (10, "warning")]),
    ],
)
def test_a_releases_regression_manifest_is_not_judged_by_todays_crd(repo, path, found):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, {"config/crd/orchestration/orchestration.aibrix.ai_kvcaches.yaml": KVCACHE_CRD, path: OLD_KVCACHE})
    result = run_cli("check", ".", "--format", "json")
    assert [(line, severity) for _, line, severity in schema_places(result)] == found


@pytest.mark.parametrize(
    ("path", "snapshot"),
    [
        (SNAPSHOT, "docs/kthena/versioned_docs/version-v0.1.0"),
        (
            "website/i18n/zh/docusaurus-plugin-content-docs/version-1.2/jobs.yaml",
            "docusaurus-plugin-content-docs/version-1.2",
        ),
        ("docs/v0.3/examples/job.yaml", "docs/v0.3"),
        ("site/content/en/docs/release-1.2/job.yaml", "docs/release-1.2"),
        ("test/regression/v0.2.1/aibrix_kvcache_0.6.1.yaml", "test/regression/v0.2.1"),
        # the traps: today's docs, API versions, example folders named by an API version, a release under no docs
        ("docs/kthena/docs/assets/examples/job.yaml", None),
        ("config/crd/bases/v1beta1/job.yaml", None),
        ("examples/v1.2/job.yaml", None),
        ("docs/version-1/job.yaml", None),
        ("docs/a/b/c/d/v1.2/job.yaml", None),
        ("test/regression/kvcache/v1.2/job.yaml", None),  # a release two levels under: not the release's own folder
        ("test/e2e/v0.2.1/job.yaml", None),
    ],
)
def test_the_folder_of_a_past_releases_docs(path, snapshot):
    found = release_snapshot(path)
    assert (found is None) is (snapshot is None)
    assert found is None or found.endswith(os.path.normpath(snapshot))


# ----------------------------------------- a placeholder where a list goes in a controller's templates (set F, Kthena)

# Kthena's ModelServing CRD, cut to the engine container its controller fills in.
SERVING_CRD = crd(
    "workload.serving.volcano.sh",
    "ModelServing",
    """
    type: object
    properties:
      replicas: {type: integer, format: int32}
      template:
        type: object
        properties:
          roles:
            type: array
            items:
              type: object
              properties:
                name: {type: string}
                replicas: {type: integer, format: int32}
                workerReplicas: {type: integer, format: int32}
                entryTemplate:
                  type: object
                  properties:
                    spec:
                      type: object
                      properties:
                        containers:
                          type: array
                          items:
                            type: object
                            properties:
                              name: {type: string}
                              image: {type: string}
                              command: {type: array, items: {type: string}}
                              args: {type: array, items: {type: string}}
                              env: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
                              resources: {type: object, x-kubernetes-preserve-unknown-fields: true}
""",
)
SERVING_TEMPLATE = """
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: ${MODEL_SERVING_TEMPLATE_METADATA}
spec:
  replicas: ${BACKEND_REPLICAS}
  template:
    roles:
      - name: leader
        replicas: ${SERVER_REPLICAS}
        workerReplicas: {workers}
        entryTemplate:
          spec:
            containers:
              - name: runtime
                image: ${MODEL_SERVING_RUNTIME_IMAGE}
                args:
                  - --port
                  - ${MODEL_SERVING_RUNTIME_PORT}
              - name: engine
                image: ${ENGINE_SERVER_IMAGE}
                command: {command}
                env: ${ENGINE_ENV}
                resources: ${ENGINE_SERVER_RESOURCES}
"""
SERVING_TEMPLATE_PATH = "pkg/model-booster-controller/convert/templates/vllm.yaml"


def serving_template(command: str, workers: str = "${WORKER_REPLICAS}") -> str:
    return SERVING_TEMPLATE.replace("{command}", command).replace("{workers}", workers)


@pytest.mark.parametrize("command", ["${ENGINE_SERVER_COMMAND}", "$ENGINE_SERVER_COMMAND", '"{{ .EngineCommand }}"'])
def test_a_placeholder_for_the_whole_command_list_is_no_type_error(repo, command):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, {KUBEBUILDER_CRD.replace("modelboosters", "modelservings"): SERVING_CRD})
    write_tree(repo, {SERVING_TEMPLATE_PATH: serving_template(command)})
    assert schema_places(run_cli("check", ".", "--format", "json")) == []


@pytest.mark.parametrize(
    ("command", "workers", "line"),
    [
        # the traps: a placeholder inside a command's text stays text, and a real type error beside the placeholders
        ('"${ENGINE_SERVER} --port 8000"', "${WORKER_REPLICAS}", 21),
        ("${ENGINE_SERVER_COMMAND}", "two", 10),
    ],
)
def test_a_placeholder_inside_the_text_or_a_real_type_error_is_still_refused(repo, command, workers, line):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, {KUBEBUILDER_CRD.replace("modelboosters", "modelservings"): SERVING_CRD})
    write_tree(repo, {SERVING_TEMPLATE_PATH: serving_template(command, workers)})
    assert schema_places(run_cli("check", ".", "--format", "json")) == [(SERVING_TEMPLATE_PATH, line, "error")]


# ------------------------------------------------------------------------------------------------ set G

# An Argo Workflow as CoreWeave's finetuner and KFP's compiled pipelines write it: parameters in a node-affinity
# value and in the keys of a template's labels. Argo substitutes {{...}} across the whole template (marshalled to
# JSON) before it creates the pod (workflow/common/util.go SubstituteParams).
ARGO_GPU_WORKFLOW = """
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: finetune-
spec:
  entrypoint: train
  arguments:
    parameters:
    - name: region
      value: ORD1
  templates:
  - name: train
    inputs:
      parameters:
      - name: label-key
    metadata:
      labels:
        '{{inputs.parameters.label-key}}': '{{inputs.parameters.label-value}}'
    container:
      image: ghcr.io/example/finetuner:1.0
      resources:
        limits: {nvidia.com/gpu: 1}
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: topology.kubernetes.io/region
              operator: In
              values:
              - "{{workflow.parameters.region}}"
"""


def serious_of(text: str, path: str = "manifest.yaml") -> list[tuple]:
    return errors_and_warnings(lint_text(text, path), ("rule", "line"))


def test_argo_parameters_in_a_pods_labels_and_affinity_are_not_refused():
    assert serious_of(ARGO_GPU_WORKFLOW) == []


@pytest.mark.parametrize(
    ("written", "as_is", "line"),
    [
        ('- "{{workflow.parameters.region}}"', "- ORD 1", 31),  # a value as written, with a space
        ("'{{inputs.parameters.label-key}}'", "bad key!", 18),  # a key as written
    ],
)
def test_a_value_argo_leaves_as_written_is_still_refused(written, as_is, line):
    assert ("api-rejected", line) in serious_of(ARGO_GPU_WORKFLOW.replace(written, as_is))


# An Ansible playbook's file with Jinja statements (NVIDIA's cloud-native-stack): not YAML until rendered.
JINJA_POLICY = """
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
{% if deploy_ofed %}
  ofedDriver:
    image: doca-driver
{% endif %}
  rdmaSharedDevicePlugin:
    image: k8s-rdma-shared-dev-plugin
"""


def test_a_jinja_template_is_no_broken_manifest():
    findings = lint_text(JINJA_POLICY, "playbooks/files/nic-cluster-policy.yaml")
    assert [(f.rule, f.severity.name.lower(), f.line) for f in findings] == [("not-rendered", "info", 6)]
    assert "Jinja statement" in said(findings[0])


def test_a_brace_percent_that_is_no_jinja_statement_is_still_an_error():
    text = JINJA_POLICY.replace("{% if deploy_ofed %}", "{% nothing %}").replace("{% endif %}", "{% nothing %}")
    findings = lint_text(text)
    assert [(f.rule, f.severity.name.lower()) for f in findings] == [("yaml-invalid", "error")]


# A tokenizer's vocabulary beside an inference client (CoreWeave's FasterTransformer example): the words
# `kind`, `metadata` and `spec` map to their token ids.
def test_a_vocabulary_with_kind_and_metadata_words_is_no_object():
    vocabulary = '{"!": 0, "kind": 11031, "metadata": 38993, "spec": 16684, "the": 1169}'
    assert lint_text(vocabulary, "client/gpt_bpe/gpt2-vocab.json") == []


def test_a_manifest_that_lost_its_api_version_is_still_refused():
    manifest = '{"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}}'
    assert serious_of(manifest, "pod.json") == [("schema-invalid", 1)]


# Kubernetes' own archived examples: `lun: <ADD LUN ID Here>` asks the reader for a number.
FC_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: fibre-channel-example-pod
spec:
  containers:
  - name: fc
    image: kubernetes/pause
    volumeMounts:
    - {name: fc-vol, mountPath: /mnt/fc}
  volumes:
  - name: fc-vol
    fc:
      targetWWNs: [<ADD Target WWN Here>]
      lun: LUN
"""


def test_a_fill_in_in_words_is_a_placeholder():
    findings = lint_text(FC_POD.replace("lun: LUN", "lun: <ADD LUN ID Here>"))
    assert [(f.rule, f.severity.name.lower()) for f in findings] == [("not-rendered", "info")]


@pytest.mark.parametrize("lun", ["ADD LUN ID Here", "<ADD LUN ID Here> or 0"])
def test_words_that_are_no_whole_fill_in_are_still_refused(lun):
    assert [rule for rule, _ in serious_of(FC_POD.replace("lun: LUN", f"lun: {lun}"))] == ["schema-invalid"]


# ------------------------------------------------ two copies of one CRD: a generated base and a stale bundle

# vllm-project/production-stack's operator: config/crd/bases holds the CRDs controller-gen writes from today's
# types, config/default.yaml an install bundle rendered months earlier; the samples follow today's types. A
# cluster has one of the two, which one the repository does not say.
GENERATED_CRD = "operator/config/crd/bases/workload.serving.volcano.sh_modelboosters.yaml"
INSTALL_BUNDLE = "operator/config/default.yaml"
SAMPLE = "operator/config/samples/deepseek.yaml"
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: operator-system}\n---\n"


def operator_tree(repo, newer: str, example: str) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    older = GENERATED_CRD if newer == INSTALL_BUNDLE else INSTALL_BUNDLE
    bundle = {newer: CURRENT_CRD, older: RELEASED_CRD}
    bundle[INSTALL_BUNDLE] = NAMESPACE + textwrap.dedent(bundle[INSTALL_BUNDLE]).lstrip("\n")
    write_tree(repo, {**bundle, SAMPLE: example})


@pytest.mark.parametrize("newer", [GENERATED_CRD, INSTALL_BUNDLE])
@pytest.mark.parametrize("mode", ["alone", "repository"])
def test_a_resource_another_copy_of_its_crd_takes_is_not_refused(repo, newer, mode):
    operator_tree(repo, newer, booster(NEW_REPLICAS))
    assert schema_places(run_cli("check", SAMPLE if mode == "alone" else ".", "--format", "json")) == []


@pytest.mark.parametrize("newer", [GENERATED_CRD, INSTALL_BUNDLE])
@pytest.mark.parametrize("mode", ["alone", "repository"])
def test_a_field_no_copy_of_the_crd_knows_is_still_refused(repo, newer, mode):
    # the trap: `replicaCount` is in neither copy, and each copy requires a field the sample lacks
    operator_tree(repo, newer, booster("    replicaCount: 1"))
    places = schema_places(run_cli("check", SAMPLE if mode == "alone" else ".", "--format", "json"))
    assert (SAMPLE, 10, "warning") in places
    assert any(path == SAMPLE and severity == "error" for path, _, severity in places)


def test_one_copy_of_the_crd_still_judges_alone(repo):
    # the clean case: with the stale bundle only, today's sample is judged by it (its fields are unknown there)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, {GENERATED_CRD: RELEASED_CRD, SAMPLE: booster(NEW_REPLICAS)})
    assert (SAMPLE, 10, "warning") in schema_places(run_cli("check", SAMPLE, "--format", "json"))


# sgl-project/ome: config/crd/minimal holds each CRD cut down by hack/minimal-crdgen.sh (spec keeps unknown fields),
# beside config/crd/full, which config/crd/kustomization.yaml installs. The minimal copy judges no field.
MINIMAL_CRD = CURRENT_CRD[: CURRENT_CRD.index("          spec:")] + (
    "          spec:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n"
)


@pytest.mark.parametrize(
    "minimal", ["config/crd/minimal/modelboosters.yaml", "config/crd/a-minimal/modelboosters.yaml"]
)
@pytest.mark.parametrize("mode", ["alone", "repository"])
def test_a_minimal_copy_of_the_crd_excuses_no_field(repo, minimal, mode):
    # the trap: a stale sample is refused by the full CRD whether the minimal copy is met before or after it
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    sample = "config/samples/deepseek.yaml"
    write_tree(
        repo, {"config/crd/full/modelboosters.yaml": CURRENT_CRD, minimal: MINIMAL_CRD, sample: booster(OLD_REPLICAS)}
    )
    places = schema_places(run_cli("check", sample if mode == "alone" else ".", "--format", "json"))
    assert places == [(sample, 8, "error"), (sample, 10, "warning"), (sample, 11, "warning")]


# ------------------------------------------- set H: a resource name a program or envsubst fills in (a key)

# NVIDIA/gpu-operator's validator reads a Pod file, writes the namespace, the image and the GPU resource name
# over FILLED_BY_VALIDATOR (cmd/nvidia-validator), then creates it; envsubst fills keys as it fills values.
VALIDATOR_POD = """
apiVersion: v1
kind: Pod
metadata:
  labels: {app: nvidia-device-plugin-validator}
  generateName: nvidia-device-plugin-validator-
  namespace: "FILLED_BY_VALIDATOR"
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  restartPolicy: OnFailure
  initContainers:
  - name: plugin-validation
    image: "FILLED_BY_VALIDATOR"
    command: ['sh', '-c']
    args: ["vectorAdd"]
    resources:
      limits:
        "RESOURCE": 1
  containers:
  - name: nvidia-device-plugin-validator
    image: "FILLED_BY_VALIDATOR"
    command: ['sh', '-c']
    args: ["echo device-plugin workload validation is successful"]
"""


@pytest.mark.parametrize(
    "key", ["FILLED_BY_VALIDATOR", "${GPU_RESOURCE}", "$GPU_RESOURCE", "<GPU_RESOURCE>", "nvidia.com/${GPU_KIND}"]
)
def test_a_resource_name_still_to_be_filled_in_is_a_placeholder(key):
    findings = lint_text(VALIDATOR_POD.replace('"RESOURCE"', f'"{key}"'))
    assert [(f.rule, f.severity.name.lower()) for f in findings] == [("not-rendered", "info")]


def test_the_filled_in_validator_pod_is_clean():
    text = VALIDATOR_POD.replace('"FILLED_BY_VALIDATOR"', "gpu-operator").replace('"RESOURCE"', "nvidia.com/gpu")
    assert [(f.rule, f.severity.name.lower()) for f in lint_text(text)] == []


@pytest.mark.parametrize("key", ["GPU_RESOURCE", "$gpu", "gpu", "nvidia.com/gpu $X"])
def test_a_resource_name_written_wrong_is_still_refused(key):
    text = VALIDATOR_POD.replace('"FILLED_BY_VALIDATOR"', "gpu-operator").replace('"RESOURCE"', f'"{key}"')
    assert "api-rejected" in [rule for rule, _ in serious_of(text)]


# ------------------------------- set H: a patch of a kustomize Component named alone (pre-commit's changed file)

# redhat-ai-services/ai-accelerator: the GPU operator's MIG and time-slicing settings are Components that its
# overlays list; kustomize builds a Component only inside such an overlay ("expected kind != 'Component'").
MIG_COMPONENT_TREE = {
    "gpu/base/kustomization.yaml": "resources:\n- cluster-policy.yaml\n",
    "gpu/base/cluster-policy.yaml": """
        apiVersion: nvidia.com/v1
        kind: ClusterPolicy
        metadata: {name: gpu-cluster-policy}
        spec:
          mig: {strategy: mixed}
        """,
    "gpu/components/mig-single/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component

        patches:
          - path: patch-gpu-cluster-policy.yaml
            target:
              kind: ClusterPolicy
        """,
    "gpu/components/mig-single/patch-gpu-cluster-policy.yaml": """
        apiVersion: nvidia.com/v1
        kind: ClusterPolicy
        metadata: {name: gpu-cluster-policy}
        spec:
          mig: {strategy: single}
        """,
    "gpu/overlays/mig-single/kustomization.yaml": "resources:\n- ../../base\ncomponents:\n- ../../components/mig-single\n",
}


def named_findings(repo, render_tools, files, *named):
    write_tree(repo, files)
    result = run_cli("check", *named, "--kubectl", render_tools["kubectl"], "--format", "json")
    return [(f["path"], f["rule"], f["severity"]) for f in result.json()["findings"]]


def test_a_components_patch_named_alone_is_no_broken_overlay(repo, render_tools):
    named = "gpu/components/mig-single/patch-gpu-cluster-policy.yaml"
    assert named_findings(repo, render_tools, MIG_COMPONENT_TREE, named) == []


def test_the_overlay_listing_the_component_renders(repo, render_tools):
    assert named_findings(repo, render_tools, MIG_COMPONENT_TREE, "gpu/overlays/mig-single") == []


def test_a_patch_of_an_overlay_that_cannot_build_is_still_an_error(repo, render_tools):
    files = {
        **MIG_COMPONENT_TREE,
        "gpu/components/mig-single/kustomization.yaml": (
            "kind: Kustomization\nresources:\n- missing.yaml\npatches:\n- path: patch-gpu-cluster-policy.yaml\n"
        ),
    }
    named = "gpu/components/mig-single/patch-gpu-cluster-policy.yaml"
    assert ("gpu/components/mig-single/kustomization.yaml", "not-rendered", "error") in named_findings(
        repo, render_tools, files, named
    )


# ----------------------------------------------------------------------------------------------- set I
# Causes met on set I (docs/precision.md): load generators on the node group eksctl made with the cluster,
# beside the repository's Karpenter NodePools; a chart that refuses the release namespace 'default'.

GPU_POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: amd-nvidia-a10g}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: amd-nvidia}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""

LOAD_GENERATOR = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: load}
spec:
  selector: {matchLabels: {app: load}}
  template:
    metadata: {labels: {app: load}}
    spec:
      nodeSelector:
        {selector}
      containers:
      - name: load
        image: public.ecr.aws/docker/library/python
        command: [/bin/bash, -c, 'while true; do curl -s http://model:8000/generate; sleep 2; done']
"""


def load_generator_findings(repo, selector: str, *extra: str) -> list[tuple[str, int, str, str]]:
    write_tree(
        repo,
        {
            "nodepools/amd-nvidia-a10g-nodepool.yaml": GPU_POOL,
            "load.yaml": LOAD_GENERATOR.replace("{selector}", selector),
        },
    )
    result = run_cli("check", ".", "--format", "json", *extra)
    return [f for f in serious(result) if f[2] == "over-tight-affinity"]


@pytest.mark.parametrize(
    "selector",
    [
        "alpha.eksctl.io/nodegroup-name: kub316-ng",
        "eks.amazonaws.com/nodegroup: di-ng",
        # a managed node group under Cluster Autoscaler, labelled by its eksctl config (Neuron's Ray samples)
        "{instance-type: trn1-32xl, provisioner: cluster-autoscaler}",
    ],
)
def test_a_pod_on_a_node_group_no_linted_pool_describes_is_not_judged_by_the_pools(repo, selector):
    assert load_generator_findings(repo, selector) == []


def test_a_pod_naming_a_nodepool_the_repository_lacks_is_still_warned(repo):
    # the trap: a Karpenter pool the repository deleted (g5-nodepool) is judged by the pools it has
    assert load_generator_findings(repo, "karpenter.sh/nodepool: g5-nodepool") == [
        ("load.yaml", 10, "over-tight-affinity", "warning")
    ]


def test_a_users_label_a_pool_sets_to_another_value_is_still_judged_by_the_pools(repo):
    # the trap: once a linted pool sets the label, the pools speak for it
    write_tree(
        repo,
        {
            "nodepools/cpu.yaml": GPU_POOL.replace("amd-nvidia-a10g}", "cpu}").replace(
                "    spec:\n      nodeClassRef",
                "    metadata: {labels: {instance-type: c7g}}\n    spec:\n      nodeClassRef",
            )
        },
    )
    assert [f[:3] for f in load_generator_findings(repo, "instance-type: trn1-32xl")] == [
        ("load.yaml", 10, "over-tight-affinity")
    ]


EKSCTL_LESS_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-12.us-west-2.compute.internal
  labels: {karpenter.sh/nodepool: amd-nvidia-a10g, node.kubernetes.io/instance-type: g5.xlarge}
status:
  allocatable: {cpu: "4", memory: 15Gi, pods: "58", nvidia.com/gpu: "1"}
  capacity: {cpu: "4", memory: 16Gi, pods: "58", nvidia.com/gpu: "1"}
"""


def test_with_the_nodes_known_a_pod_on_another_node_group_is_still_judged(repo):
    # the trap: an inventory without the node group's nodes answers for it
    write_tree(repo, {"inventory/nodes.yaml": EKSCTL_LESS_NODE})
    found = load_generator_findings(repo, "alpha.eksctl.io/nodegroup-name: kub316-ng", "--inventory", "inventory")
    assert [f[:3] for f in found] == [("load.yaml", 10, "over-tight-affinity")]


# NVIDIA's device plugin chart refuses the release namespace 'default' on purpose; its README installs it with
# `helm upgrade -i nvdp nvdp/nvidia-device-plugin --namespace nvidia-device-plugin --create-namespace`.
NAMESPACED_CHART = {
    "deployments/helm/nvidia-device-plugin/Chart.yaml": "apiVersion: v2\nname: nvidia-device-plugin\nversion: 0.20.0\n",
    "deployments/helm/nvidia-device-plugin/values.yaml": "allowDefaultNamespace: false\ngpus: 1\n",
    "deployments/helm/nvidia-device-plugin/templates/validation.yml": """
        {{- if and (eq .Release.Namespace "default") (not .Values.allowDefaultNamespace) }}
        {{- $error := "" }}
        {{- $error = printf "%s\\nRunning in the 'default' namespace is not recommended." $error }}
        {{- $error = printf "%s\\nSet 'allowDefaultNamespace=true' to bypass this error." $error }}
        {{- fail $error }}
        {{- end }}
        """,
    "deployments/helm/nvidia-device-plugin/templates/smoke.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: gpu-smoke
          namespace: {{ .Release.Namespace }}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: smi
                image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
                command: [nvidia-smi]
                resources:
                  requests:
                    nvidia.com/gpu: {{ .Values.gpus }}
        """,
}


def test_a_chart_that_refuses_the_default_namespace_is_rendered_in_its_own(repo, render_tools):
    write_tree(repo, NAMESPACED_CHART)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    findings = [(f["path"], f["rule"], f["severity"]) for f in result.json()["findings"]]
    # no broken chart; checked as installed, so the Job's request without a limit is found
    assert ("deployments/helm/nvidia-device-plugin/templates/smoke.yaml", "gpu-request-without-limit", "error") in (
        findings
    ), result.stdout
    assert not [f for f in findings if f[1] == "not-rendered" and f[2] != "info"], result.stdout
    said_namespace = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert "rendered in namespace 'nvidia-device-plugin'" in said(said_namespace[0])


@pytest.mark.parametrize(
    "refusal",
    [
        "Only one of 'config.name' or 'config.map' should ever be set.",  # another fail: the chart's own
        "Setting an explicit 'namespace' in values.yaml is no longer supported.",  # fails in every namespace
    ],
)
def test_a_chart_that_fails_for_another_reason_is_still_an_error(repo, render_tools, refusal):
    template = NAMESPACED_CHART["deployments/helm/nvidia-device-plugin/templates/validation.yml"]
    files = {
        **NAMESPACED_CHART,
        "deployments/helm/nvidia-device-plugin/templates/validation.yml": template.replace(
            '(eq .Release.Namespace "default")', "true"
        ).replace("Running in the 'default' namespace is not recommended.", refusal),
    }
    write_tree(repo, files)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert ("deployments/helm/nvidia-device-plugin/templates/validation.yml", "not-rendered", "error") in [
        (f["path"], f["rule"], f["severity"]) for f in result.json()["findings"]
    ], result.stdout


# -------------------------- set J: charts whose values a program of the repository writes, or `required` asks for

# kubeflow/arena: the CLI marshals a Go struct to the values file (`yaml:"nodeSelectors"`) and runs
# `helm template -f VALUES CHART`; values.yaml leaves those keys out, so the chart alone fails on `len` of nil.
ARENA_CHART = {
    "charts/mpijob/Chart.yaml": "apiVersion: v1\nname: mpijob\nversion: 0.28.0\n",
    "charts/mpijob/values.yaml": "gpuCount: 0 # user define\nshmSize: 2Gi\n",
    "charts/mpijob/templates/mpijob.yaml": """
        {{- $selectors := .Values.tfNodeSelectors -}}
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata:
          name: {{ .Release.Name }}
        spec:
          mpiReplicaSpecs:
            Worker:
              replicas: 2
              template:
                spec:
                  {{- if ne (len .Values.nodeSelectors) 0 }}
                  nodeSelector:
                  {{- range $k, $v := .Values.nodeSelectors }}
                    {{ $k }}: "{{ $v }}"
                  {{- end }}
                  {{- end }}
                  containers:
                  - name: mpi
                    image: kubeflow/mpi-horovod:latest
        """,
}
ARENA_TYPES = """
    package types

    type SubmitArgs struct {
        NodeSelectors map[string]string `yaml:"nodeSelectors"` // --selector
        TFNodeSelectors map[string]map[string]string `yaml:"tfNodeSelectors,omitempty"`
    }
    """


def test_a_chart_rendered_with_values_its_repositorys_program_writes_is_not_checked(repo, render_tools):
    write_tree(repo, {**ARENA_CHART, "pkg/apis/types/submit.go": ARENA_TYPES})
    for target in (".", "charts/mpijob"):  # CI, pre-commit
        result = run_cli("check", target, "--helm", render_tools["helm"], "--format", "json")
        assert not_rendered(result) == [("charts/mpijob/templates/mpijob.yaml", 12, "warning")], result.stdout
        assert "pkg/apis/types/submit.go writes it" in said(result.json()["findings"][0])


def test_a_value_read_through_a_variable_is_traced_to_the_program(repo, render_tools):
    template = ARENA_CHART["charts/mpijob/templates/mpijob.yaml"].replace(
        "len .Values.nodeSelectors", "len $selectors.Worker"
    )
    write_tree(repo, {**ARENA_CHART, "charts/mpijob/templates/mpijob.yaml": template, "cmd/types.go": ARENA_TYPES})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert [severity for _, _, severity in not_rendered(result)] == ["warning"], result.stdout
    assert "no value for .Values.tfNodeSelectors.Worker" in said(result.json()["findings"][0])


@pytest.mark.parametrize(
    "program",
    [
        None,  # nothing writes the values: a chart broken on its own defaults
        'type A struct {\n\tNodeSelector map[string]string `yaml:"nodeSelector"`\n}\n',  # another key
        'var doc = "nodeSelectors: {}"\n',  # named, not a field a program marshals
    ],
)
def test_a_value_values_yaml_does_not_write_is_not_checked_though_no_program_writes_it(repo, render_tools, program):
    """Issue #28, not-rendered inverted: a key values.yaml leaves out, and writes no misspelling of, is the
    installer's (an error before: nothing in the repository named its writer)."""
    files = dict(ARENA_CHART)
    if program is not None:
        files["pkg/types.go"] = "package types\n\n" + program
    write_tree(repo, files)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert [severity for _, _, severity in not_rendered(result)] == ["warning"], result.stdout
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert "values.yaml does not write 'nodeSelectors'" in said(finding) and "writes it" not in said(finding)


# armadaproject/armada and determined-ai/determined: the author asks for the value with `required`, in the
# template itself or in a helper another template includes (a pipeline ending in `| required "..."`).
REQUIRED_CHART = {
    "deployment/binoculars/Chart.yaml": "apiVersion: v2\nname: armada-binoculars\nversion: 0.0.0-latest\n",
    "deployment/binoculars/values.yaml": "replicas: 1\ningress:\n  labels: {}\n",
    "deployment/binoculars/templates/ingressrest.yaml": """
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata:
          name: binoculars-rest
          annotations:
            kubernetes.io/ingress.class: {{ required "A value is required for .Values.ingressClass" .Values.ingressClass }}
        spec:
          rules:
          - http:
              paths:
              - path: /
                pathType: Prefix
                backend: {service: {name: binoculars, port: {number: 8080}}}
        """,
}
INCLUDED_REQUIRED = {
    "helm/determined/Chart.yaml": "apiVersion: v2\nname: determined\nversion: 0.38.0\n",
    "helm/determined/values.yaml": "# initialUserPassword:\nmasterPort: 8080\n",
    "helm/determined/templates/master-config.yaml": """
        {{- $initialPassword := coalesce .Values.initialUserPassword .Values.defaultPassword | required "An initial password for admin and determined users is required!" }}
        apiVersion: v1
        kind: Secret
        metadata:
          name: determined-master-config
        stringData:
          password: {{ $initialPassword | quote }}
        """,
    "helm/determined/templates/master-deployment.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: determined-master
          annotations:
            checksum/config: {{ include (print $.Template.BasePath "/master-config.yaml") . | sha256sum }}
        data:
          port: "{{ .Values.masterPort }}"
        """,
}


@pytest.mark.parametrize(
    ("files", "place", "value"),
    [
        (REQUIRED_CHART, ("deployment/binoculars/templates/ingressrest.yaml", 6, "warning"), "ingressClass"),
        (INCLUDED_REQUIRED, ("helm/determined/templates/master-deployment.yaml", 6, "warning"), "initialUserPassword"),
    ],
)
def test_a_value_the_chart_asks_for_with_required_is_not_checked(repo, render_tools, files, place, value):
    write_tree(repo, files)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert not_rendered(result) == [place], result.stdout
    assert f"no value for .Values.{value} (its template asks for it with `required`)" in said(
        result.json()["findings"][0]
    )


def test_a_fail_the_chart_raises_on_its_own_defaults_is_still_an_error(repo, render_tools):
    template = REQUIRED_CHART["deployment/binoculars/templates/ingressrest.yaml"].replace(
        'required "A value is required for .Values.ingressClass" .Values.ingressClass',
        'fail "A value is required for .Values.ingressClass"',
    )
    write_tree(repo, {**REQUIRED_CHART, "deployment/binoculars/templates/ingressrest.yaml": template})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert [severity for _, _, severity in not_rendered(result)] == ["error"], result.stdout


def test_a_required_value_the_user_values_leave_out_is_still_an_error(repo, render_tools):
    write_tree(repo, {**REQUIRED_CHART, "prod.values.yaml": "replicas: 3\n"})
    result = run_cli(
        "check",
        "deployment/binoculars",
        "--helm",
        render_tools["helm"],
        "--values",
        "prod.values.yaml",
        "--format",
        "json",
    )
    assert [severity for _, _, severity in not_rendered(result)] == ["error"], result.stdout


# ------------------------------------------ set J: fill-ins a reader or a program replaces, in text YAML refuses

# kubeflow/spark-operator's examples/spark-pi-prometheus.yaml: the reader builds the image and writes its registry
SPARK_APP = """
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
spec:
  type: Scala
  mode: cluster
  image: {image}
  mainClass: org.apache.spark.examples.SparkPi
  sparkVersion: 4.0.4
"""


@pytest.mark.parametrize(
    "image",
    [
        "{IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/docker.io/apache/spark:4.0.4",
        "{REGISTRY}:5000/spark:4.0.4",
        "{registry}/spark:4.0.4",  # lower case, as KServe's samples write `{username}/torchserve` (set L)
    ],
)
def test_single_brace_fill_ins_joined_to_text_make_a_template(image):
    findings = lint_text(SPARK_APP.replace("{image}", image), "examples/spark-pi-prometheus.yaml")
    assert [(f.rule, f.severity.name.lower(), f.line) for f in findings] == [("not-rendered", "info", 8)]
    assert "single-brace fill-in" in findings[0].message


@pytest.mark.parametrize("image", ["{a: b}/spark", "{registry} /spark", "[gcr.io/spark"])
def test_other_braces_yaml_refuses_stay_errors(image):
    findings = lint_text(SPARK_APP.replace("{image}", image))
    assert [f.rule for f in findings if f.severity.name.lower() == "error"] == ["yaml-invalid"]


# kubeflow/examples: a pipeline step reads the file and applies data.replace('MODEL_NAME', args.model_name)
SERVE_TEMPLATE = """
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: MODEL_NAME
  name: {name}
  namespace: {namespace}
spec:
  selector:
    matchLabels: {app: MODEL_NAME}
  template:
    metadata:
      labels: {app: MODEL_NAME}
    spec:
      containers:
      - name: serving
        image: tensorflow/serving:1.11.1-gpu
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def serve_template(name: str, namespace: str) -> str:
    return SERVE_TEMPLATE.replace("{name}", name).replace("{namespace}", namespace)


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("MODEL_NAME", "KUBEFLOW_NAMESPACE"),
        ("MODEL_NAME-webapp", "kubeflow"),
        ("RELEASE-NAME-seldon-apiserver", "default"),  # Helm 2's `helm template` release name, kept in a library
    ],
)
def test_an_upper_case_fill_in_word_in_a_name_is_a_placeholder(name, namespace):
    findings = lint_text(serve_template(name, namespace), "tf-serve-template.yaml")
    assert [f.rule for f in findings if f.severity.name.lower() in ("error", "warning")] == []
    assert any(f.rule == "not-rendered" and "is a placeholder" in f.message for f in findings)


@pytest.mark.parametrize("name", ["GPU-TEST", "Model_Name", "model_name", "TRAINER"])
def test_a_name_written_wrongly_is_still_refused(name):
    findings = lint_text(serve_template(name, "default"))
    assert [(f.rule, f.severity.name.lower()) for f in findings if f.rule == "api-rejected"] == [
        ("api-rejected", "error")
    ]


# ------------------------------------------- set J: overlays their repository builds with the load restrictor off

# flyteorg/flyte's docker/devbox-bundled: its overlays list ../namespace.yaml, and its Makefile builds them with
# `kustomize build --load-restrictor=LoadRestrictionsNone`; an unused patch file sits beside namespace.yaml.
DEVBOX = {
    "docker/devbox-bundled/kustomize/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flyte\n",
    "docker/devbox-bundled/kustomize/minio-patch.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: minio
          namespace: flyte
        spec:
          template:
            spec:
              containers:
              - name: minio
                command: [minio, server, /data]
        """,
    "docker/devbox-bundled/kustomize/complete/kustomization.yaml": "resources:\n- ../namespace.yaml\n",
    "docker/devbox-bundled/Makefile": """
        KUSTOMIZE := ../../executor/bin/kustomize

        manifests:
        \t$(KUSTOMIZE) build \\
        \t\t--enable-helm \\
        \t\t--load-restrictor=LoadRestrictionsNone \\
        \t\tkustomize/complete > manifests/complete.yaml
        """,
}


def test_an_overlay_built_with_the_load_restrictor_off_is_not_checked(repo, render_tools):
    write_tree(repo, DEVBOX)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [
        ("docker/devbox-bundled/kustomize/complete/kustomization.yaml", 2, "not-rendered", "warning")
    ], result.stdout
    assert "docker/devbox-bundled/Makefile builds it with --load-restrictor" in said(result.json()["findings"][0])


@pytest.mark.parametrize(
    "makefile",
    [
        "manifests:\n\tkubectl kustomize kustomize/complete > manifests/complete.yaml\n",  # the restrictor on
        "other:\n\tkustomize build --load-restrictor=LoadRestrictionsNone kustomize/other\n",  # another overlay
    ],
)
def test_an_overlay_kustomize_refuses_as_its_repository_builds_it_is_still_an_error(repo, render_tools, makefile):
    write_tree(repo, {**DEVBOX, "docker/devbox-bundled/Makefile": makefile})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [f for f in serious(result) if f[0].endswith("kustomization.yaml")] == [
        ("docker/devbox-bundled/kustomize/complete/kustomization.yaml", 2, "not-rendered", "error")
    ], result.stdout


def test_a_patch_file_in_a_folder_an_overlay_reads_from_is_no_manifest(repo, render_tools):
    write_tree(repo, DEVBOX)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [p for p, *_ in serious(result) if p.endswith("minio-patch.yaml")] == [], result.stdout


def test_a_patch_named_file_in_a_folder_no_overlay_reads_is_still_linted(repo, render_tools):
    files = {k: v for k, v in DEVBOX.items() if "kustomization" not in k and "Makefile" not in k}
    write_tree(repo, files)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert ("docker/devbox-bundled/kustomize/minio-patch.yaml", 7, "schema-invalid", "error") in serious(result)
