"""What is not a manifest, or not one yet, is no error: chart metadata, values, CI files, JSON with
comments, kustomize patches, and template files with placeholders - named on the command line (as
pre-commit names them) or met in a walk."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_cli

JOB_WITH_PLACEHOLDERS = """
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune-${RUN_ID}
  namespace: ${NAMESPACE:-ml}
spec:
  parallelism: ${WORKERS}
  completions: $(WORKERS)
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.example.com/trainer:${TAG}
        command: ["sh", "-c", "torchrun --nproc-per-node=${GPUS} train.py"]
        args: ["--rank", "$(RANK)"]
        env:
        - name: RANK
          value: "$(JOB_COMPLETION_INDEX)"
        resources:
          limits:
            nvidia.com/gpu: ${GPUS}
"""


def put(root, name: str, text: str):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


NOT_MANIFESTS = {
    "charts/gpu/Chart.yaml": "apiVersion: v2\nname: gpu\nversion: 0.1.0\n",
    "charts/gpu/Chart.lock": "dependencies: []\ndigest: sha256:0\n",
    ".gitlab-ci.yml": "lint:\n  script: [gpulint check .]\n",
    ".github/workflows/ci.yml": "on: push\njobs:\n  lint: {runs-on: ubuntu-latest, steps: [{run: gpulint check .}]}\n",
    ".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks: [{id: gpulint, name: gpulint, entry: gpulint, language: system}]\n",
    "overlays/prod/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
}


@pytest.mark.parametrize("name", sorted(NOT_MANIFESTS))
def test_files_that_are_no_manifests_are_skipped_when_named(repo, name):
    put(repo, name, NOT_MANIFESTS[name])
    result = run_cli("check", name, "--no-render", "-v")
    assert result.exit_code == 0, result.stdout
    assert "error[" not in result.stdout and "warning[" not in result.stdout
    assert f"note: {name}: skipped: " in result.stdout and "not a Kubernetes manifest" in result.stdout
    quiet = run_cli("check", name, "--no-render")
    assert "note: " + name not in quiet.stdout  # a debug note: only with --verbose


def test_json_with_comments_and_braces_in_strings_is_no_invalid_yaml(repo):
    put(
        repo,
        ".devcontainer/devcontainer.json",
        """
        {
          // the image the team develops in
          "name": "gpulint",
          "image": "mcr.microsoft.com/devcontainers/python:3.12",
          /* forwarded for the webhook */
          "forwardPorts": [8443,],
        }
        """,
    )
    put(
        repo,
        "dashboards/gpu-usage.json",
        """
        {
          // Grafana
          "title": "GPU usage",
          "panels": [{"targets": [{"expr": "sum(DCGM_FI_DEV_GPU_UTIL{namespace=\\"{{ namespace }}\\"})"}]}]
        }
        """,
    )
    result = run_cli("check", ".devcontainer/devcontainer.json", "dashboards/gpu-usage.json", "-v")
    assert result.exit_code == 0, result.stdout
    assert "[yaml-invalid]" not in result.stdout and "[not-rendered]" not in result.stdout
    assert "1 document skipped (not Kubernetes objects)" in result.stdout  # the dashboard; devcontainer by name


def test_a_manifest_with_json_comments_is_still_invalid(repo):
    put(
        repo,
        "pod.json",
        '{\n  // kubectl refuses this\n  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}\n}\n',
    )
    result = run_cli("check", "pod.json")
    assert result.exit_code == 1 and "pod.json:2:3: error[yaml-invalid]" in result.stdout


def test_placeholders_are_one_info_finding_and_never_cascade(repo):
    put(repo, "jobs/finetune.yaml", JOB_WITH_PLACEHOLDERS)
    result = run_cli("check", "jobs", "--format", "json")
    assert result.exit_code == 0, result.stdout
    (finding,) = result.json()["findings"]
    assert (finding["rule"], finding["severity"], finding["line"], finding["column"]) == ("not-rendered", "info", 4, 9)
    assert "${RUN_ID} is a placeholder" in finding["message"]


def test_kubernetes_own_variable_syntax_is_no_placeholder(repo):
    text = JOB_WITH_PLACEHOLDERS
    for placeholder, value in (
        ("finetune-${RUN_ID}", "finetune"),
        ("${NAMESPACE:-ml}", "ml"),
        ("${WORKERS}", "4"),
        ("$(WORKERS)", "4"),
        (":${TAG}", ":1.0"),
        ("nvidia.com/gpu: ${GPUS}", "nvidia.com/gpu: 8"),
    ):
        text = text.replace(placeholder, value)
    put(repo, "job.yaml", text)  # $(RANK) in args and env, ${GPUS} in a shell command: Kubernetes' and sh's
    result = run_cli("check", "job.yaml")
    assert result.exit_code == 0 and "[not-rendered]" not in result.stdout, result.stdout


def test_a_placeholder_in_a_gpu_quantity_hides_only_that_field(repo):
    put(
        repo,
        "pod.yaml",
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: a
            image: i
            resources: {limits: {nvidia.com/gpu: "${GPUS}"}}
          - name: b
            image: i
            resources: {requests: {nvidia.com/gpu: 1}}
        """,
    )
    result = run_cli("check", "pod.yaml", "--color", "never")
    lines = [line for line in result.stdout.splitlines() if "[" in line and line.startswith("pod.yaml")]
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in lines] == [
        "pod.yaml:8:42: info[not-rendered]",
        "pod.yaml:11:28: error[gpu-request-without-limit]",  # the other container is still checked
    ]


def test_a_helm_template_outside_a_chart_is_one_info(repo):
    put(
        repo,
        "templates/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  parallelism: {{ .Values.workers }}\n",
    )
    result = run_cli("check", "templates/job.yaml", "--format", "json")
    assert result.exit_code == 0
    (finding,) = result.json()["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == ("not-rendered", "info", 4)


def test_kustomize_patches_named_on_the_command_line_are_skipped(repo):
    put(
        repo,
        "overlays/prod/kustomization.yaml",
        "resources: [../../base]\npatches:\n- path: gpu.yaml\n- path: replicas.yaml\n  target: {kind: Deployment}\n",
    )
    put(
        repo,
        "overlays/prod/gpu.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n      containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: 2}}}]\n",
    )
    put(repo, "overlays/prod/replicas.yaml", "- op: replace\n  path: /spec/replicas\n  value: 3\n")
    result = run_cli("check", "overlays/prod/gpu.yaml", "overlays/prod/replicas.yaml", "-v", "--no-render")
    assert result.exit_code == 0, result.stdout
    assert "schema-invalid" not in result.stdout
    assert "note: overlays/prod/gpu.yaml: skipped: a kustomize patch" in result.stdout


# kubebuilder's scaffold, as a held-out operator repository left it: config/default holds
# manager_config_patch.yaml, which its kustomization no longer lists.
SCAFFOLD_KUSTOMIZATION = "resources:\n- manager.yaml\npatches:\n- path: manager_webhook_patch.yaml\n"
PARTIAL_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: controller-manager, namespace: system}\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        args: [--config=cfg.yaml]\n"
)
MANAGER = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: controller-manager}\nspec:\n"
    "  selector: {matchLabels: {app: m}}\n  template:\n    metadata: {labels: {app: m}}\n"
    "    spec:\n      containers: [{name: manager, image: m}]\n"
)


@pytest.mark.parametrize("named", [False, True], ids=["walked", "named"])
def test_a_patch_file_its_kustomization_does_not_use_is_no_manifest(repo, named):
    put(repo, "config/default/kustomization.yaml", SCAFFOLD_KUSTOMIZATION)
    put(repo, "config/default/manager.yaml", MANAGER)
    put(repo, "config/default/manager_webhook_patch.yaml", PARTIAL_DEPLOYMENT)
    put(repo, "config/default/manager_config_patch.yaml", PARTIAL_DEPLOYMENT)
    target = "config/default/manager_config_patch.yaml" if named else "config"
    result = run_cli("check", target, "-v", "--no-render")
    assert result.exit_code == 0, result.stdout
    assert "schema-invalid" not in result.stdout  # before: 'spec: Required value: "selector" is required'
    assert "manager_config_patch.yaml: skipped: a kustomize patch" in result.stdout


def test_a_resource_named_like_a_patch_is_still_read(repo):
    """The trap: a kustomization that lists `gpu-patch.yaml` under resources deploys it."""
    put(repo, "apps/kustomization.yaml", "resources:\n- gpu-patch.yaml\n")
    put(repo, "apps/gpu-patch.yaml", PARTIAL_DEPLOYMENT)
    result = run_cli("check", "apps", "--no-render")
    assert "schema-invalid" in result.stdout and '"selector" is required' in result.stdout


def test_a_helm_repository_index_is_no_object(repo):
    """A chart repository's index.yaml (apiVersion, entries, generated) was 'object has no kind'."""
    put(
        repo,
        "index.yaml",
        "apiVersion: v1\nentries:\n  gateway-helm:\n  - apiVersion: v2\n    name: gateway-helm\n"
        "    version: 1.2.0\n    urls: [charts/gateway-helm-1.2.0.tgz]\ngenerated: '2025-04-23T00:00:31Z'\n",
    )
    result = run_cli("check", ".")
    assert result.exit_code == 0 and "schema-invalid" not in result.stdout, result.stdout
    put(repo, "lost-kind.yaml", "apiVersion: v1\nmetadata: {name: gpu-quota}\nspec: {hard: {}}\n")
    assert "no kind" in run_cli("check", "lost-kind.yaml").stdout  # a manifest that lost its kind still is one


def test_force_exclude_applies_exclude_to_named_files(repo):
    put(repo, ".gpulint.yaml", "exclude: [charts/**, legacy]\n")
    bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}]\n"
    put(repo, "charts/old/pod.yaml", bad)
    put(repo, "legacy/pod.yaml", bad)
    put(repo, "apps/pod.yaml", bad)
    named = ("charts/old/pod.yaml", "legacy/pod.yaml", "apps/pod.yaml")
    assert run_cli("check", *named).stdout.count("gpu-request-without-limit") == 3  # named: always read
    forced = run_cli("check", *named, "--force-exclude")
    assert forced.stdout.count("gpu-request-without-limit") == 1 and "apps/pod.yaml:" in forced.stdout


def test_the_pre_commit_hook_passes_force_exclude():
    from conftest import REPO

    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "entry: gpulint check --force-exclude" in hooks


def test_values_files_are_no_objects_unless_a_document_is_one(repo):
    put(
        repo,
        "charts/dcgm/values.yaml",
        "kind: DaemonSet  # the chart's choice of workload\nimage: {tag: 3.3.8}\nresources:\n  limits: {nvidia.com/gpu: x}\n",
    )
    put(
        repo,
        "values-prod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}]\n",
    )
    result = run_cli("check", "charts/dcgm/values.yaml", "values-prod.yaml", "--no-render")
    assert "charts/dcgm" not in result.stdout and "1 document skipped (not Kubernetes objects)" in result.stdout
    assert "values-prod.yaml:5:" in result.stdout and "gpu-request-without-limit" in result.stdout


# A held-out repository's RayCluster, filled in by a setup script with sed before it is applied.
SED_TEMPLATE = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: verl}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: verl:latest}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: PLACEHOLDER_NUM_NODES
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: worker
          image: verl:latest
          env:
          - {name: YOUR_TOKEN_NAME, value: x}
          resources:
            limits: {nvidia.com/gpu: PLACEHOLDER_NUM_GPU_PER_NODE, vpc.amazonaws.com/efa: REPLACE_ME}
"""


def test_a_value_that_says_it_is_to_be_replaced_is_a_placeholder(repo):
    """Before: schema-invalid and gpu-non-integer on every PLACEHOLDER_* field (8 findings in the repository)."""
    put(repo, "raycluster.yaml", SED_TEMPLATE)
    result = run_cli("check", "raycluster.yaml", "--format", "json")
    assert result.exit_code == 0, result.stdout
    (finding,) = result.json()["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == ("not-rendered", "info", 12)
    assert "PLACEHOLDER_NUM_NODES is a placeholder" in finding["message"]
    # The trap: an ordinary upper-case value (an env var's name, an enum) is no placeholder.
    put(
        repo,
        "plain.yaml",
        SED_TEMPLATE.replace("PLACEHOLDER_NUM_NODES", "2")
        .replace("PLACEHOLDER_NUM_GPU_PER_NODE", "8")
        .replace("REPLACE_ME", "4"),
    )
    plain = run_cli("check", "plain.yaml", "--format", "json", "--ignore", "dev-shm-missing,gang-missing")
    assert [f["rule"] for f in plain.json()["findings"]] == []
