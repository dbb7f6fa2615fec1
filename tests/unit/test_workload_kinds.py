"""Workload kinds whose pods a controller builds (#16): KServe, Argo Workflows, Knative, the NIM
operator, the vLLM production-stack operator. Each finding is asserted at the line of the field the
user wrote, with a clean twin; the shapes follow each project's own docs and API types."""

from __future__ import annotations

import re
import textwrap

import yaml
from conftest import DATA, by_rule, lint_text, run_cli

from gpulint.kube.trainjob import BoundTrainJob
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.config import Config

FLEET = str(DATA / "fleet")

# ------------------------------------------------------------------------------------------- KServe

# KServe's own vLLM/Hugging Face example (docs: "Deploy the LLaMA3 model with Hugging Face LLM Serving
# Runtime"): the model-format shorthand, no container name, the runtime supplies image and args.
ISVC_SHORTHAND = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
  namespace: kserve-test
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      args:
        - --model_name=llama3
        - --model_id=meta-llama/meta-llama-3-8b-instruct
      resources:
        limits:
          cpu: "6"
          memory: 24Gi
          nvidia.com/gpu: "%s"
        requests:
          cpu: "6"
          memory: 24Gi
          nvidia.com/gpu: "1"
"""


def test_kserve_shorthand_container_is_checked_at_its_line():
    findings = lint_text(ISVC_SHORTHAND % "0.5")
    (finding,) = by_rule(findings, "gpu-non-integer")
    assert (finding.line, finding.column) == (18, 27)
    assert finding.message.startswith("spec.predictor.model.resources.limits[nvidia.com/gpu]: Invalid value")
    (mismatch,) = by_rule(findings, "gpu-request-without-limit")
    assert mismatch.line == 22 and "container 'kserve-container'" in mismatch.message
    assert "spec.predictor.model.resources.requests: Invalid value" in mismatch.notes[0]


def test_kserve_shorthand_clean_and_its_false_positive_traps():
    assert lint_text(ISVC_SHORTHAND % "1") == []
    # 4 GPUs and requests only: KServe selects kserve-huggingfaceserver for the format, which sets no GPU
    # limit; but a ServingRuntime the files do not show may be selected first, so nothing is refused on the
    # assumption (gpu-request-without-limit is an error), and its /dev/shm depends on how KServe was
    # installed (kube/kserve_runtimes: the YAML install mounts one from v0.14, the chart does not): silent.
    partial = ISVC_SHORTHAND.replace('          nvidia.com/gpu: "%s"\n', "").replace('gpu: "1"', 'gpu: "4"')
    assert partial != ISVC_SHORTHAND % "1"
    assert lint_text(partial) == []


ISVC_CUSTOM = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: custom-vllm
spec:
  predictor:
    minReplicas: 2
    containers:
      - name: kserve-container
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources:
          %s:
            nvidia.com/gpu: 1
"""


def test_kserve_custom_container_is_a_whole_pod():
    (finding,) = by_rule(lint_text(ISVC_CUSTOM % "requests"), "gpu-request-without-limit")
    assert (finding.line, finding.column) == (14, 13)
    assert finding.fix is not None and finding.fix.path == (
        "spec",
        "predictor",
        "containers",
        0,
        "resources",
        "limits",
        "nvidia.com/gpu",
    )
    assert lint_text(ISVC_CUSTOM % "limits") == []
    (site,) = pod_spec_sites(yaml.safe_load(ISVC_CUSTOM % "limits"))
    assert (site.role, site.pods) == ("predictor", 2)


def test_kserve_serving_runtime_and_worker_spec():
    runtime = textwrap.dedent("""
        apiVersion: serving.kserve.io/v1alpha1
        kind: ClusterServingRuntime
        metadata:
          name: kserve-huggingfaceserver-multinode
        spec:
          supportedModelFormats:
            - name: huggingface
              autoSelect: true
          containers:
            - name: kserve-container
              image: kserve/huggingfaceserver:latest-gpu
              resources:
                limits:
                  nvidia.com/gpu: "1"
          workerSpec:
            pipelineParallelSize: 2
            tensorParallelSize: 1
            containers:
              - name: worker-container
                image: kserve/huggingfaceserver:latest-gpu
                resources:
                  limits:
                    nvidia.com/gpu: 0.5
    """)
    (finding,) = by_rule(lint_text(runtime), "gpu-non-integer")
    assert (finding.line, finding.obj.kind) == (23, "ClusterServingRuntime")
    assert [site.pods for site in pod_spec_sites(yaml.safe_load(runtime))] == [0, 0]  # no pods itself


def test_kserve_llm_inference_service_template_and_prefill():
    text = textwrap.dedent("""
        apiVersion: serving.kserve.io/v1alpha1
        kind: LLMInferenceService
        metadata:
          name: qwen2-7b
        spec:
          model:
            uri: hf://Qwen/Qwen2.5-7B-Instruct
          replicas: 2
          template:
            containers:
              - name: main
                resources:
                  limits:
                    nvidia.com/gpu: "1"
          prefill:
            replicas: 1
            template:
              containers:
                - name: main
                  resources:
                    limits:
                      nvidia.com/gpu: "1.5"
    """)
    (finding,) = by_rule(lint_text(text), "gpu-non-integer")
    assert finding.line == 22 and finding.message.startswith("spec.prefill.template.containers[0]")
    sites = list(pod_spec_sites(yaml.safe_load(text)))
    assert [(s.role, s.pods) for s in sites] == [("decode", 2), ("prefill", 1)]
    # requests only: the presets may supply the limit (and /dev/shm): silent
    partial = re.sub(r'limits:\n(\s+)nvidia.com/gpu: "1.5"', r"requests:\n\1nvidia.com/gpu: 2", text)
    assert partial != text and lint_text(partial) == []


# --------------------------------------------------------------------------------------------- Argo

WORKFLOW = """
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: finetune-
  namespace: argo
spec:
  entrypoint: pipeline
  nodeSelector:
    nvidia.com/gpu.product: %s
  tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
  templates:
    - name: pipeline
      steps:
        - - name: prepare
            template: prepare
        - - name: train
            template: train
    - name: prepare
      script:
        image: python:3.12
        command: [python]
        source: |
          print("tokenize")
    - name: train
      container:
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: [torchrun, --nproc-per-node=2, train.py]
        volumeMounts:
          - {name: dshm, mountPath: /dev/shm}
        resources:
          %s:
            nvidia.com/gpu: 2
"""


def test_argo_template_container_is_checked_at_its_line():
    text = WORKFLOW % ("NVIDIA-H100-80GB-HBM3", "requests")
    (finding,) = by_rule(lint_text(text), "gpu-request-without-limit")
    assert (finding.line, finding.column) == (38, 13)
    assert "container 'main'" in finding.message
    assert finding.fix is not None and finding.fix.path[:4] == ("spec", "templates", 2, "container")
    assert lint_text(WORKFLOW % ("NVIDIA-H100-80GB-HBM3", "limits")) == []  # dshm from the workflow's volumes


def test_argo_workflow_scheduling_fields_apply_to_templates_that_set_none(tmp_path):
    path = tmp_path / "wf.yaml"
    path.write_text(textwrap.dedent(WORKFLOW % ("NVIDIA-A100-SXM4-80GB", "limits")).lstrip("\n"))
    result = run_cli("check", str(path), "--inventory", FLEET, "--format", "json")
    found = [f for f in result.json()["findings"] if f["rule"] == "over-tight-affinity"]
    # both pod templates (prepare and train) inherit it: one finding, at the workflow's nodeSelector
    assert [(f["line"], f["column"]) for f in found] == [(9, 29)]
    # a template's own nodeSelector replaces the workflow's (workflowpod.go addSchedulingConstraints)
    own = WORKFLOW.replace(
        "    - name: train\n      container:",
        "    - name: train\n      nodeSelector: {nvidia.com/gpu.product: %s}\n      container:",
    )
    path.write_text(textwrap.dedent(own % ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "limits")).lstrip("\n"))
    result = run_cli("check", str(path), "--inventory", FLEET, "--format", "json")
    found = [f for f in result.json()["findings"] if f["rule"] == "over-tight-affinity"]
    assert [(f["line"], f["column"]) for f in found] == [(31, 46)]  # the train template's own, not the workflow's
    path.write_text(textwrap.dedent(own % ("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "limits")).lstrip("\n"))
    result = run_cli("check", str(path), "--inventory", FLEET, "--format", "json")
    found = [f for f in result.json()["findings"] if f["rule"] == "over-tight-affinity"]
    assert [(f["line"], f["column"]) for f in found] == [(9, 29)]  # only prepare takes the workflow's


def test_argo_kinds_and_container_sets():
    for kind, prefix in (
        ("WorkflowTemplate", "spec"),
        ("ClusterWorkflowTemplate", "spec"),
        ("CronWorkflow", "spec.workflowSpec"),
    ):
        body = (
            "templates:\n- name: infer\n  containerSet:\n    containers:\n"
            "    - name: server\n      image: i\n      resources: {limits: {nvidia.com/gpu: 0.5}}\n"
        )
        indent = "  " * (prefix.count(".") + 1)
        nested = "spec:\n" + ("  workflowSpec:\n" if "workflowSpec" in prefix else "")
        text = (
            f"apiVersion: argoproj.io/v1alpha1\nkind: {kind}\nmetadata: {{name: w}}\n"
            + nested
            + textwrap.indent(body, indent)
        )
        (finding,) = by_rule(lint_text(text), "gpu-non-integer")
        assert finding.line == text.count("\n") and finding.obj.kind == kind
        assert "containerSet.containers[0]" in finding.message


def test_argo_boundary_templates_make_absence_unprovable():
    unmounted = WORKFLOW.replace("        volumeMounts:\n          - {name: dshm, mountPath: /dev/shm}\n", "")
    assert len(by_rule(lint_text(unmounted % ("NVIDIA-H100-80GB-HBM3", "limits")), "dev-shm-missing")) == 1
    bounded = unmounted.replace("    - name: pipeline\n", "    - name: pipeline\n      nodeSelector: {pool: gpu}\n")
    assert by_rule(lint_text(bounded % ("NVIDIA-H100-80GB-HBM3", "limits")), "dev-shm-missing") == []


# argo-workflows examples/pod-spec-yaml-patch.yaml: the workflow's podSpecPatch, a YAML string that
# patches the main container; here it mounts the shared-memory volume the template's container lacks.
PATCHED_WORKFLOW = WORKFLOW.replace(
    "        volumeMounts:\n          - {name: dshm, mountPath: /dev/shm}\n", ""
).replace(
    "  entrypoint: pipeline\n",
    """  entrypoint: pipeline
  podSpecPatch: |
    containers:
      - name: main
        volumeMounts:
          - {name: dshm, mountPath: %(mount)s}
""",
)


def _patched(mount: str = "/dev/shm", product: str = "NVIDIA-H100-80GB-HBM3", gpus: str = "limits") -> str:
    return PATCHED_WORKFLOW.replace("%(mount)s", mount) % (product, gpus)


def test_argo_pod_spec_patch_is_a_strategic_merge_patch_of_the_pod():
    assert by_rule(lint_text(_patched()), "dev-shm-missing") == []  # the patch mounts it: clean
    (finding,) = by_rule(lint_text(_patched(mount="/dev/shm-data")), "dev-shm-missing")  # merged by mountPath
    assert "container 'main'" in finding.message
    (site,) = [s for s in pod_spec_sites(yaml.safe_load(_patched())) if s.role == "train"]
    assert site.spec["containers"][0]["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert site.spec["containers"][0]["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"  # the rest of the container stays


def test_argo_template_pod_spec_patch_applies_after_the_workflows_and_is_reported_there():
    # argo-workflows examples/pod-spec-patch.yaml: a template's podSpecPatch as a JSON string
    template_patch = (
        "    - name: train\n"
        '      podSpecPatch: \'{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"%s"}}}]}\'\n'
    )
    text = _patched().replace("    - name: train\n", template_patch % "0.5")
    findings = lint_text(text)
    (finding,) = by_rule(findings, "gpu-non-integer")
    assert (finding.line, finding.column) == (36, 7)  # the template's podSpecPatch: the value is in its string
    assert finding.fix is None  # gpulint does not rewrite a string Argo parses
    assert by_rule(findings, "dev-shm-missing") == []  # the workflow's patch still applies first
    assert by_rule(lint_text(_patched().replace("    - name: train\n", template_patch % "4")), "gpu-non-integer") == []
    # $patch: delete removes the workflow patch's mount again: absence is proven
    deleting = "    - name: train\n      podSpecPatch: |\n        containers:\n          - name: main\n"
    deleting += "            volumeMounts:\n              - {mountPath: /dev/shm, $patch: delete}\n"
    assert len(by_rule(lint_text(_patched().replace("    - name: train\n", deleting)), "dev-shm-missing")) == 1


def test_argo_parameterized_pod_spec_patch_stays_unknown_and_explain_says_so(tmp_path):
    parameterized = _patched(mount='"{{workflow.parameters.shm}}"')
    assert by_rule(lint_text(parameterized), "dev-shm-missing") == []  # the patch may mount it
    (site,) = [s for s in pod_spec_sites(yaml.safe_load(parameterized)) if s.role == "train"]
    assert site.completed_by == (
        "the workflow's podSpecPatch (its {{...}} parameters are substituted when Argo creates the pod)"
    )
    path = tmp_path / "wf.yaml"
    path.write_text(textwrap.dedent(parameterized).lstrip("\n"))
    result = run_cli("explain", str(path), "--inventory", FLEET)
    assert "not all of the pod is known here: the workflow's podSpecPatch (its {{...}} parameters" in result.stdout
    broken = _patched().replace("    containers:\n", "    containers: [\n")
    (site,) = [s for s in pod_spec_sites(yaml.safe_load(broken)) if s.role == "train"]
    assert "Argo fails the pod with 'invalid podSpecPatch'" in site.completed_by


def test_argo_parameters_are_values_argo_fills_in():
    # argo-workflows examples/node-selector.yaml: the selector's value is a workflow parameter
    text = textwrap.dedent("""
        apiVersion: argoproj.io/v1alpha1
        kind: Workflow
        metadata:
          generateName: node-selector-
        spec:
          entrypoint: print-arch
          arguments:
            parameters:
            - name: arch
              value: amd64
          templates:
          - name: print-arch
            inputs:
              parameters:
              - name: gpus
            nodeSelector:
              beta.kubernetes.io/arch: "{{inputs.parameters.arch}}"
            container:
              image: nvcr.io/nvidia/pytorch:24.05-py3
              command: [torchrun, --nproc-per-node=4, train.py]
              resources:
                limits:
                  nvidia.com/gpu: "{{inputs.parameters.gpus}}"
                requests:
                  nvidia.com/gpu: 4
    """)
    # neither the label value nor the GPU limit is known: no api-rejected, no request-without-limit, no shm
    assert lint_text(text) == []
    (site,) = pod_spec_sites(yaml.safe_load(text))
    assert site.spec["nodeSelector"] == {} and "parameters" in site.completed_by


def test_argo_workflow_resource_claims_reach_the_templates_that_set_none():
    # argo-workflows examples/resource-claims.yaml: DRA claims at the workflow level
    text = textwrap.dedent("""
        apiVersion: argoproj.io/v1alpha1
        kind: Workflow
        metadata:
          generateName: resource-claims-
        spec:
          entrypoint: show-devices
          resourceClaims:
          - name: accelerator
            resourceClaimTemplateName: example-device-claim-template
          templates:
          - name: show-devices
            container:
              image: busybox
              command: [sh, -c]
              args: ["echo using the allocated device"]
              resources:
                claims:
                - name: %s
    """)
    # the template is made elsewhere (the example's cluster has it): found nowhere proves nothing (before: a
    # warning), unless the configuration declares the linted files hold every ResourceClaimTemplate
    assert by_rule(lint_text(text % "accelerator"), "claim-reference-invalid") == []
    complete = Config(complete={"ResourceClaimTemplate": ("*",)})
    (missing,) = by_rule(lint_text(text % "accelerator", config=complete), "claim-reference-invalid")
    assert missing.severity.name == "ERROR" and "'example-device-claim-template'" in missing.message
    (finding,) = [f for f in by_rule(lint_text(text % "gpu"), "claim-reference-invalid") if f.line == 18]
    assert "uses claim 'gpu'" in finding.message


# ------------------------------------------------------------------------------------------ Knative

KNATIVE = """
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: whisper
  namespace: default
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "3"
    spec:
      containers:
        - image: ghcr.io/example/whisper-server:1.2
          ports:
            - containerPort: 8080
          resources:
            limits:
              nvidia.com/gpu: "%s"
"""


def test_knative_service_container():
    (finding,) = by_rule(lint_text(KNATIVE % "0.5"), "gpu-non-integer")
    assert (finding.line, finding.column) == (18, 31)
    assert lint_text(KNATIVE % "1") == []
    (site,) = pod_spec_sites(yaml.safe_load(KNATIVE % "1"))
    assert site.pods == 3 and site.spec["containers"][0]["name"] == "user-container"


# ------------------------------------------------------------------------------------- NIM operator

NIM_SERVICE = """
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: meta-llama3-8b-instruct
  namespace: nim-service
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
    tag: "1.3.3"
    pullPolicy: IfNotPresent
    pullSecrets:
      - ngc-secret
  authSecret: ngc-api-secret
  storage:
    nimCache:
      name: meta-llama3-8b-instruct
      profile: ''
  replicas: 2
  resources:
    limits:
      nvidia.com/gpu: 1
    requests:
      nvidia.com/gpu: %s
  expose:
    service:
      type: ClusterIP
      port: 8000
"""


def test_nim_service_resources_are_the_containers():
    (finding,) = by_rule(lint_text(NIM_SERVICE % "2"), "gpu-request-without-limit")
    assert (finding.line, finding.column) == (23, 23)
    assert "container 'meta-llama3-8b-instruct-ctr'" in finding.message
    assert finding.notes[0].startswith("spec.resources.requests: Invalid value")
    # the operator builds the container from spec.resources: no fix is offered, and no note promises one
    assert finding.fix is None and not any("--unsafe-fixes" in note for note in finding.notes)
    # the operator mounts the dshm emptyDir itself: no dev-shm-missing, even for 4 GPUs
    assert lint_text(NIM_SERVICE % "1") == []
    assert lint_text((NIM_SERVICE % "4").replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 4\n")) == []
    (site,) = pod_spec_sites(yaml.safe_load(NIM_SERVICE % "1"))
    assert site.pods == 2


def test_nim_service_multi_node_gets_the_tensor_parallel_gpus():
    text = (NIM_SERVICE % "1").replace(
        "  resources:\n    limits:\n      nvidia.com/gpu: 1\n    requests:\n      nvidia.com/gpu: 1\n",
        "  multiNode:\n    backendType: lws\n    parallelism:\n      pipeline: 2\n      tensor: 8\n",
    )
    leader, worker = pod_spec_sites(yaml.safe_load(text))
    # a LeaderWorkerSet (k8s-nim-operator manifests/lws.yaml): 2 groups of size pipeline 2, one leader each
    assert (leader.role, leader.pods, leader.spec["containers"][0]["name"]) == ("leader", 2, "nim-leader")
    assert (worker.role, worker.pods, worker.spec["containers"][0]["name"]) == ("worker", 2, "nim-worker")
    for site in (leader, worker):
        assert site.spec["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8}
    # findings name the container as the operator names it, at the field the user wrote
    odd = text.replace("      tensor: 8\n", "      tensor: 8\n  resources:\n    requests:\n      nvidia.com/gpu: 8\n")
    found = by_rule(lint_text(odd), "gpu-request-without-limit")
    assert sorted(re.findall(r"container '([^']+)'", " ".join(f.message for f in found))) == [
        "nim-leader",
        "nim-worker",
    ]
    assert {(f.line, f.column) for f in found} == {(26, 7)}  # spec.resources.requests[nvidia.com/gpu]
    single = pod_spec_sites(yaml.safe_load(NIM_SERVICE % "1"))
    assert [(s.role, s.spec["containers"][0]["name"]) for s in single] == [("", "meta-llama3-8b-instruct-ctr")]


def test_nim_cache_has_no_gpu_and_no_finding():
    text = """
        apiVersion: apps.nvidia.com/v1alpha1
        kind: NIMCache
        metadata:
          name: meta-llama3-8b-instruct
        spec:
          source:
            ngc:
              modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3
              pullSecret: ngc-secret
              authSecret: ngc-api-secret
              model:
                engine: tensorrt_llm
                tensorParallelism: "1"
          storage:
            pvc:
              create: true
              storageClass: standard
              size: "50Gi"
              volumeAccessMode: ReadWriteMany
          resources:
            cpu: "4"
            memory: 16Gi
    """
    assert lint_text(text) == []


# ------------------------------------------------------------------------------ vLLM production-stack

VLLM_RUNTIME = """
apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata:
  name: vllm-llama3
spec:
  model:
    modelURL: meta-llama/Llama-3.1-8B-Instruct
    maxModelLen: 4096
  vllmConfig:
    tensorParallelSize: %s
    port: 8000
  deploymentConfig:
    replicas: 1
    shmSize: 20Gi
    resources:
      cpu: "10"
      memory: 32Gi
      gpu: "%s"
    image:
      registry: docker.io
      name: lmcache/vllm-openai:latest
"""


def test_vllm_runtime_tensor_parallelism_against_its_gpus():
    (finding,) = by_rule(lint_text(VLLM_RUNTIME % (4, 2)), "parallelism-mismatch")
    assert finding.line == 10  # vllmConfig.tensorParallelSize
    assert "tensor-parallel-size 4" in finding.message and "container 'vllm' has 2" in finding.message
    assert lint_text(VLLM_RUNTIME % (2, 2)) == []


def test_vllm_runtime_gpu_field_and_shm():
    (finding,) = by_rule(lint_text(VLLM_RUNTIME % (1, "0.5")), "gpu-non-integer")
    assert finding.line == 18 and finding.fix is None  # deploymentConfig.resources.gpu
    no_shm = (VLLM_RUNTIME % (2, 2)).replace("    shmSize: 20Gi\n", "")
    (shm,) = by_rule(lint_text(no_shm), "dev-shm-missing")
    assert shm.fix is None  # the operator's field is shmSize; gpulint does not write it


# ----------------------------------------------------------------------------- Kubeflow Trainer v2

# The Trainer's own torch-distributed runtime (manifests/base/runtimes/torch_distributed.yaml).
TORCH_RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
"""

TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fine-tune-llama
  namespace: ml
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: %(nodes)s
    numProcPerNode: %(gpus)s
    resourcesPerNode:
      limits:
        nvidia.com/gpu: %(gpus)s
  runtimePatches:
    - manager: platform.example.com/gpu-defaults
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector:
                          nvidia.com/gpu.product: %(product)s
                        tolerations:
                          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
                        volumes:
                          - name: dshm
                            emptyDir: {medium: Memory}
                        containers:
                          - name: node
                            volumeMounts:
                              - {name: dshm, mountPath: /dev/shm}
"""


def _trainjob_tree(tmp_path, runtime: str = TORCH_RUNTIME, **values: object):
    values = {"nodes": 2, "gpus": 4, "product": "NVIDIA-H100-80GB-HBM3", **values}
    (tmp_path / "runtimes").mkdir(exist_ok=True)
    (tmp_path / "runtimes" / "torch.yaml").write_text(textwrap.dedent(runtime).lstrip("\n"))
    (tmp_path / "jobs").mkdir(exist_ok=True)
    (tmp_path / "jobs" / "train.yaml").write_text(textwrap.dedent(TRAINJOB % values).lstrip("\n"))
    return tmp_path


def _findings(*args: str) -> list[tuple[str, str, int, int]]:
    result = run_cli("check", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return [(f["rule"], f["path"].rsplit("/", 1)[-1], f["line"], f["column"]) for f in result.json()["findings"]]


def test_trainjob_pods_are_the_runtime_template_with_its_overrides(tmp_path):
    tree = _trainjob_tree(tmp_path)
    assert _findings(str(tree), "--inventory", FLEET) == []  # 2 x 4 H100s, tolerated, /dev/shm from the patch
    job = yaml.safe_load((tree / "jobs" / "train.yaml").read_text())

    (site,) = pod_spec_sites(BoundTrainJob(job, yaml.safe_load(textwrap.dedent(TORCH_RUNTIME))))
    assert (site.role, site.pods) == ("node", 2)  # trainer.numNodes over the runtime's mlPolicy.numNodes
    (container,) = site.spec["containers"]
    assert container["image"].startswith("pytorch/pytorch")
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert site.spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def test_trainjob_findings_point_at_the_trainjob_field_that_set_them(tmp_path):
    tree = _trainjob_tree(tmp_path, gpus=16)
    found = _findings(str(tree), "--inventory", FLEET)
    # 16 GPUs per node: more than any node has, reported at resourcesPerNode
    assert ("gpu-unschedulable", "train.yaml", 14, 25) in found
    tree = _trainjob_tree(tmp_path, product="NVIDIA-A100-SXM4-80GB")
    found = _findings(str(tree), "--inventory", FLEET)
    assert ("over-tight-affinity", "train.yaml", 27, 51) in found  # the patch's nodeSelector


def test_trainjob_fields_the_runtime_supplies_are_reported_at_the_runtime_ref(tmp_path):
    no_shm = TRAINJOB.split("                        volumes:")[0]
    tree = _trainjob_tree(tmp_path)
    (tree / "jobs" / "train.yaml").write_text(
        textwrap.dedent(no_shm % {"nodes": 2, "gpus": 4, "product": "NVIDIA-H100-80GB-HBM3"})
    )
    result = run_cli("check", str(tree), "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "dev-shm-missing"]
    assert (finding["path"].rsplit("/", 1)[-1], finding["line"]) == ("train.yaml", 9)  # spec.runtimeRef.name
    assert finding["fix"] is None  # the volume belongs in the runtime or a patch: gpulint does not write it
    assert not any("--fix" in note for note in finding["notes"])


def test_trainjob_v2_0_pod_template_overrides():
    job = yaml.safe_load(
        textwrap.dedent("""
            apiVersion: trainer.kubeflow.org/v1alpha1
            kind: TrainJob
            metadata: {name: t, namespace: ml}
            spec:
              runtimeRef: {name: torch-distributed}
              podTemplateOverrides:
                - targetJobs: [{name: node}]
                  spec:
                    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
                    tolerations: [{key: nvidia.com/gpu, operator: Exists}]
        """)
    )
    (site,) = pod_spec_sites(BoundTrainJob(job, yaml.safe_load(textwrap.dedent(TORCH_RUNTIME))))
    assert site.spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L4"}
    assert site.spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    assert site.pods == 1  # the runtime's mlPolicy.numNodes
    # a runtime Job beside the trainer's (an initializer) counts its JobSet replicas times its pods
    runtime = yaml.safe_load(textwrap.dedent(TORCH_RUNTIME))
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    jobs.insert(
        0,
        {
            "name": "dataset-initializer",
            "replicas": 2,
            "template": {
                "spec": {
                    "parallelism": 3,
                    "completions": 2,
                    "template": {"spec": {"containers": [{"name": "dataset-initializer", "image": "i"}]}},
                }
            },
        },
    )
    counts = {site.role: site.pods for site in pod_spec_sites(BoundTrainJob(job, runtime))}
    assert counts == {"dataset-initializer": 4, "node": 1}  # 2 replicas x min(3, 2)


def test_trainjob_runtime_missing_proof_or_silence(tmp_path):
    job = tmp_path / "train.yaml"
    job.write_text(textwrap.dedent(TRAINJOB % {"nodes": 1, "gpus": 4, "product": "x"}).lstrip("\n"))
    # a runtime the Trainer installs, not in the files: nothing to say (and nothing to build pods from)
    assert _findings(str(job)) == []
    typo = job.read_text().replace("name: torch-distributed", "name: torch-distribued")
    job.write_text(typo)
    result = run_cli("check", str(job), "--format", "json")
    (finding,) = result.json()["findings"]
    # a near-miss of a name the Trainer installs: a likely typo, said as info (a chart may install its own)
    assert (finding["rule"], finding["severity"], finding["line"]) == ("training-runtime-unknown", "info", 8)
    assert "did you mean 'torch-distributed'?" in finding["message"]
    # the inventory lists the cluster's ClusterTrainingRuntimes: a missing one is refused by the webhook
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "nodes.yaml").write_text((DATA / "fleet" / "nodes.yaml").read_text())
    (inventory / "runtimes.yaml").write_text(textwrap.dedent(TORCH_RUNTIME).lstrip("\n"))
    result = run_cli("check", str(job), "--inventory", str(inventory), "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "training-runtime-unknown"]
    assert finding["severity"] == "error" and finding["message"].startswith("ClusterTrainingRuntime 'torch-distribued'")
    assert "the Trainer webhook rejects the TrainJob" in " ".join([finding["message"], *finding["notes"]])
    # the runtime from the inventory builds the pods: 8 GPUs per node on the fleet's H100s, untolerated selector
    job.write_text(typo.replace("torch-distribued", "torch-distributed").replace("product: x", "product: y"))
    found = _findings(str(job), "--inventory", str(inventory))
    assert [f[0] for f in found] == ["over-tight-affinity"]


def test_a_namespaced_training_runtime_must_be_in_the_trainjobs_namespace(tmp_path):
    runtime = TORCH_RUNTIME.replace("kind: ClusterTrainingRuntime", "kind: TrainingRuntime").replace(
        "  name: torch-distributed\n", "  name: torch-distributed\n  namespace: other\n", 1
    )
    tree = _trainjob_tree(tmp_path, runtime=runtime, gpus=16)
    job = (
        (tree / "jobs" / "train.yaml")
        .read_text()
        .replace("    name: torch-distributed\n", "    name: torch-distributed\n    kind: TrainingRuntime\n", 1)
    )
    (tree / "jobs" / "train.yaml").write_text(job)
    found = _findings(str(tree), "--inventory", FLEET)
    assert not any(rule == "gpu-unschedulable" for rule, *_ in found)  # another namespace's runtime: not this one's
    assert ("training-runtime-unknown", "train.yaml", 8, 11) in found
    result = run_cli("check", str(tree), "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "training-runtime-unknown"]
    # the TrainingRuntime of the job's namespace may be made elsewhere (a platform chart): info, unless the
    # configuration declares the linted files hold every TrainingRuntime
    assert "is defined only in another namespace" in finding["message"] and finding["severity"] == "info"
    (tree / ".gpulint.yaml").write_text("complete: [TrainingRuntime]\n")
    result = run_cli("check", str(tree), "--format", "json", "--config", str(tree / ".gpulint.yaml"))
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "training-runtime-unknown"]
    assert "is defined only in another namespace" in finding["message"] and finding["severity"] == "warning"
    (tree / ".gpulint.yaml").unlink()
    (tree / "runtimes" / "torch.yaml").write_text(
        textwrap.dedent(runtime.replace("namespace: other", "namespace: ml")).lstrip("\n")
    )
    found = _findings(str(tree), "--inventory", FLEET)
    assert ("gpu-unschedulable", "train.yaml", 15, 25) in found


def test_a_trainjob_named_alone_finds_its_runtime_in_the_rest_of_the_repository(tmp_path, monkeypatch):
    tree = _trainjob_tree(tmp_path, gpus=16)
    (tree / ".git").mkdir()  # a work tree is all the repository index needs
    monkeypatch.chdir(tree)
    found = _findings("jobs/train.yaml", "--inventory", FLEET)  # as pre-commit names a changed file
    assert ("gpu-unschedulable", "train.yaml", 14, 25) in found
    (tree / ".gpulint.yaml").write_text("repo-index: false\n")  # without the index the runtime is not seen
    assert not any(rule == "gpu-unschedulable" for rule, *_ in _findings("jobs/train.yaml", "--inventory", FLEET))


KNATIVE_GPU_NODES = KNATIVE.replace(
    "    spec:\n      containers:",
    "    spec:\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L4\n      containers:",
)
CONFIG_FEATURES = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-features
  namespace: knative-serving
data:
  kubernetes.podspec-nodeselector: %s
---
"""


def test_knative_rejects_a_node_selector_its_feature_flag_keeps_off(tmp_path):
    service = KNATIVE_GPU_NODES % "1"
    (finding,) = by_rule(lint_text(service), "knative-field-disallowed")  # config-features unknown
    assert (finding.line, finding.column, finding.severity.name) == (12, 7, "WARNING")
    assert "must not set the field(s): spec.template.spec.nodeSelector" in finding.message
    (finding,) = by_rule(lint_text(CONFIG_FEATURES % "Disabled" + service), "knative-field-disallowed")
    assert (finding.line, finding.severity.name) == (21, "ERROR")
    assert lint_text(CONFIG_FEATURES % "Enabled" + service) == []
    assert lint_text(CONFIG_FEATURES % "allowed" + service) == []
    # the inventory keeps the ConfigMap's keys only: a flag it sets is not judged, a flag it lacks is off
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "config.yaml").write_text(textwrap.dedent(CONFIG_FEATURES % "enabled").split("---")[0])
    path = tmp_path / "svc.yaml"
    path.write_text(textwrap.dedent(service).lstrip("\n"))
    assert _findings(str(path), "--inventory", str(inventory)) == []
    config = (
        (inventory / "config.yaml")
        .read_text()
        .replace("kubernetes.podspec-nodeselector", "kubernetes.podspec-affinity")
    )
    (inventory / "config.yaml").write_text(config)
    assert _findings(str(path), "--inventory", str(inventory)) == [("knative-field-disallowed", "svc.yaml", 12, 7)]


# A ServingRuntime as KServe's docs write one (vLLM behind the Hugging Face server), named by the predictor.
SERVING_RUNTIME = """
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime
  namespace: kserve-test
spec:
  supportedModelFormats:
    - name: huggingface
      autoSelect: false
  containers:
    - name: kserve-container
      image: kserve/huggingfaceserver:v0.15.0-gpu
      args: ["--backend=vllm"]
      resources:
        limits:
          nvidia.com/gpu: "%(gpus)s"
%(shm)s"""
SHM = """      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
"""
ISVC_NAMED_RUNTIME = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama3
  namespace: kserve-test
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      runtime: vllm-runtime
      args: ["--model_id=meta-llama/meta-llama-3-8b-instruct", "--tensor-parallel-size=%(tp)s"]
      resources:
        requests:
          nvidia.com/gpu: "%(requested)s"
"""


def _serving(runtime: dict, isvc: dict) -> list:
    return lint_text(SERVING_RUNTIME % runtime + "---" + ISVC_NAMED_RUNTIME % isvc)


def test_kserve_predictor_merged_with_the_serving_runtime_it_names():
    # the runtime's limit and the model's request: one whole pod, valid
    assert _serving({"gpus": 1, "shm": ""}, {"requested": 1, "tp": 1}) == []
    # the model asks for 2 where the runtime limits 1: the merged container is refused
    (finding,) = by_rule(_serving({"gpus": 1, "shm": ""}, {"requested": 2, "tp": 1}), "gpu-request-without-limit")
    assert (finding.obj.kind, finding.line) == ("InferenceService", 32)  # model.resources.requests
    assert "must be equal to nvidia.com/gpu limit of 1" in finding.notes[0]


def test_kserve_named_runtime_makes_absence_provable():
    # 4 GPUs and no /dev/shm in either object: now reported (the runtime is known), and fixable in the ISVC
    findings = _serving({"gpus": 4, "shm": ""}, {"requested": 4, "tp": 4})
    (shm,) = [f for f in by_rule(findings, "dev-shm-missing") if f.obj.kind == "InferenceService"]
    assert shm.line == 25  # the model container
    assert shm.fix is not None
    assert [a.path for a in shm.fix.appends] == [
        ("spec", "predictor", "volumes"),
        ("spec", "predictor", "model", "volumeMounts"),
    ]
    assert _serving({"gpus": 4, "shm": SHM}, {"requested": 4, "tp": 4}) == []  # the runtime mounts it
    # a model-format shorthand without a runtime named: KServe selects one by format, and the namespace's
    # runtime only when its format has autoSelect (else the ClusterServingRuntime KServe installs, here
    # kserve-huggingfaceserver, whose /dev/shm the way KServe was installed decides: no verdict)
    unnamed = (ISVC_NAMED_RUNTIME % {"requested": 4, "tp": 4}).replace("      runtime: vllm-runtime\n", "")
    for auto in ("false", "true"):
        own = (SERVING_RUNTIME % {"gpus": 4, "shm": ""}).replace("autoSelect: false", f"autoSelect: {auto}")
        found = by_rule(lint_text(own + "---" + unnamed), "dev-shm-missing")
        assert [f.obj.kind for f in found] == ["ServingRuntime"] + (["InferenceService"] if auto == "true" else [])
        own_shm = (SERVING_RUNTIME % {"gpus": 4, "shm": SHM}).replace("autoSelect: false", f"autoSelect: {auto}")
        assert by_rule(lint_text(own_shm + "---" + unnamed), "dev-shm-missing") == []


# A TrainJob through Kueue (Kueue docs, "Run A TrainJob": the queue label on the TrainJob; Kueue's
# trainjob integration builds the runtime's JobSet with the TrainJob applied and takes its pod sets).
QUEUED_TRAINJOB = (
    """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: default-flavor
          resources:
            - {name: cpu, nominalQuota: "256"}
            - {name: memory, nominalQuota: 2Ti}
            - {name: nvidia.com/gpu, nominalQuota: %(quota)s}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: user-queue
  namespace: ml
spec:
  clusterQueue: cluster-queue
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: pytorch-distributed
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: %(nodes)s
    resourcesPerNode:
      requests:
        cpu: "8"
        memory: 64Gi
      limits:
        nvidia.com/gpu: 8
---"""
    + TORCH_RUNTIME
)


def test_a_queued_trainjob_is_admitted_by_the_pods_of_its_runtime():
    from rule_harness import findings_of

    text = QUEUED_TRAINJOB % {"quota": 16, "nodes": 4}
    (finding,) = findings_of("queue-unadmittable", text)
    assert (finding.line, finding.column) == (35, 32)  # the TrainJob's queue label
    assert finding.message.startswith("ClusterQueue cluster-queue can never admit this workload")
    assert "couldn't assign flavors to pod set node: insufficient quota for nvidia.com/gpu" in finding.message
    assert findings_of("queue-unadmittable", QUEUED_TRAINJOB % {"quota": 16, "nodes": 2}) == []
    # without its runtime no pods are known: nothing to say
    alone = text.split("---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime")[0]
    assert findings_of("queue-unadmittable", alone) == []


def test_a_queued_trainjob_is_one_gang_of_its_nodes():
    from rule_harness import findings_of

    racks = str(DATA / "racks")  # six nodes hold 8 GPUs each
    text = QUEUED_TRAINJOB % {"quota": 128, "nodes": 7}
    (finding,) = findings_of("gang-unsatisfiable", text, inventory=racks)
    assert "Kueue workload (queue user-queue) needs 7 node pods x 8 nvidia.com/gpu placed at once" in finding.message
    assert "the cluster fits 6" in finding.message
    assert (finding.line, finding.column) == (35, 32)
    assert findings_of("gang-unsatisfiable", QUEUED_TRAINJOB % {"quota": 128, "nodes": 6}, inventory=racks) == []


def test_strategic_merge_of_a_pod_spec_follows_the_pod_specs_tags():
    from gpulint.kube.strategic import patch_pod_spec

    pod = {
        "nodeSelector": {"pool": "gpu", "zone": "a"},
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "containers": [{"name": "main", "env": [{"name": "X", "value": "1"}], "resources": {"limits": {"cpu": "1"}}}],
        "priorityClassName": "high",
    }
    patch = yaml.safe_load(
        "nodeSelector: {zone: b}\ntolerations: [{key: b, operator: Exists}]\npriorityClassName: null\n"
        "containers:\n- name: main\n  env: [{name: Y, value: '2'}]\n  resources: {limits: {nvidia.com/gpu: 1}}\n"
        "- name: sidecar\n  image: busybox\n"
    )
    patched = patch_pod_spec(pod, patch)
    assert patched["nodeSelector"] == {"pool": "gpu", "zone": "b"}  # maps merge
    assert patched["tolerations"] == [{"key": "b", "operator": "Exists"}]  # no merge key: replaced
    assert "priorityClassName" not in patched  # null deletes
    main, sidecar = patched["containers"]
    assert main["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]  # merged by name
    assert main["resources"] == {"limits": {"cpu": "1", "nvidia.com/gpu": 1}}
    assert sidecar == {"name": "sidecar", "image": "busybox"}
    replaced = patch_pod_spec(pod, {"nodeSelector": {"$patch": "replace", "zone": "c"}})
    assert replaced["nodeSelector"] == {"zone": "c"} and pod["nodeSelector"] == {"pool": "gpu", "zone": "a"}


# KServe's multi-node runtime (config/runtimes/kserve-huggingfaceserver-multinode.yaml, trimmed) and the
# multi-node docs' InferenceService: the head is the predictor's pod, the workers the runtime's workerSpec.
MULTINODE_RUNTIME = """
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: kserve-huggingfaceserver-multinode
spec:
  annotations:
    multinode/executor-backend: %(backend)s
  supportedModelFormats:
    - name: huggingface
      version: "1"
      autoSelect: true
  containers:
    - name: kserve-container
      image: kserve/huggingfaceserver:v0.15.0-gpu
      resources:
        requests: {cpu: "2", memory: 6Gi%(head)s}
        limits: {cpu: "4", memory: 12Gi}
      volumeMounts:
        - {name: shm, mountPath: /dev/shm}
  volumes:
    - name: shm
      emptyDir: {medium: Memory, sizeLimit: 3Gi}
  workerSpec:
    pipelineParallelSize: 1
    tensorParallelSize: 1
    containers:
      - name: worker-container
        image: kserve/huggingfaceserver:v0.15.0-gpu
        resources:
          requests: {cpu: "2", memory: 6Gi%(worker)s}
          limits: {cpu: "4", memory: 12Gi}
        volumeMounts:
          - {name: shm, mountPath: /dev/shm}
"""
MULTINODE_ISVC = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
  namespace: kserve-test
  annotations:
    serving.kserve.io/deploymentMode: RawDeployment
    serving.kserve.io/autoscalerClass: none  # KServe refuses a multi-node predictor without it
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      runtime: kserve-huggingfaceserver-multinode
      storageUri: pvc://llama-3-8b-pvc/hf/8b_instruction_tuned
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    workerSpec:
      pipelineParallelSize: %(pp)s
      tensorParallelSize: %(tp)s
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
"""


def _multinode(backend: str = "ray", head: str = "", worker: str = "", pp: int = 2, tp: int = 1) -> str:
    runtime = MULTINODE_RUNTIME % {"backend": backend, "head": head, "worker": worker}
    return textwrap.dedent(MULTINODE_ISVC % {"pp": pp, "tp": tp}).lstrip("\n") + "---" + textwrap.dedent(runtime)


def _multinode_sites(text: str) -> list[tuple[str, int | None, object]]:
    from gpulint.kube.kserve import BoundInferenceService

    isvc, runtime = yaml.safe_load_all(text)
    sites = pod_spec_sites(BoundInferenceService(isvc, runtime))
    return [(s.role, s.pods, s.spec["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")) for s in sites]


def test_kserve_multi_node_workers_and_gpus_as_the_controller_computes_them():
    # ray (the default): no GPUs in the runtime - one GPU per pod, pp x tp pods (computeRayNodeAndGPUs case 4)
    assert _multinode_sites(_multinode()) == [("predictor", 1, 1), ("predictor worker", 1, 1)]
    # the workers ask for 4: 8 GPUs are two nodes, the head gets the rest
    sites = _multinode_sites(_multinode(worker=", nvidia.com/gpu: '4'", pp=2, tp=4))
    assert sites == [("predictor", 1, 4), ("predictor worker", 1, 4)]
    # the head alone holds them all: no worker pod
    sites = _multinode_sites(_multinode(head=", nvidia.com/gpu: '8'", worker=", nvidia.com/gpu: '4'", pp=1, tp=8))
    assert sites == [("predictor", 1, 8), ("predictor worker", 0, 0)]
    # mp: pipelineParallelSize nodes of tensorParallelSize GPUs each (computeMpNodeAndGPUs)
    assert _multinode_sites(_multinode(backend="mp", pp=3, tp=8)) == [("predictor", 1, 8), ("predictor worker", 2, 8)]


def test_kserve_multi_node_fit_verdicts_at_the_parallel_size(tmp_path):
    path = tmp_path / "isvc.yaml"
    path.write_text(_multinode(backend="mp", pp=2, tp=4))
    assert _findings(str(path), "--inventory", FLEET) == []  # two pods of 4 GPUs on the H100 nodes
    path.write_text(_multinode(backend="mp", pp=2, tp=16))
    found = _findings(str(path), "--inventory", FLEET)
    # 16 GPUs per pod: the head and the worker, each reported at the predictor's tensorParallelSize
    assert found == [("gpu-unschedulable", "isvc.yaml", 20, 7)] * 2
    # the worker's own nodeSelector is its pod's: a product no node has is the worker's finding alone
    path.write_text(
        _multinode(backend="mp", pp=2, tp=4).replace("HBM3}\n      tolerations", "HBM9}\n      tolerations")
    )
    assert _findings(str(path), "--inventory", FLEET) == [("over-tight-affinity", "isvc.yaml", 21, 46)]
    # without the runtime the workers' count and GPUs are unknown: nothing said
    path.write_text(_multinode(backend="mp", pp=2, tp=16).split("---")[0])
    assert not any(rule == "gpu-unschedulable" for rule, *_ in _findings(str(path), "--inventory", FLEET))


# Knative's multi-container docs (serving/configuration/multi-container): one serving container with the
# port, sidecars without; here a GPU model server and a metrics sidecar.
KNATIVE_MULTI = """
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: llm
  namespace: default
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          ports:
            - containerPort: 8000
          resources:
            limits: {nvidia.com/gpu: "1"}
        - name: metrics
          image: ghcr.io/example/gpu-metrics:1.0
%s"""


def test_knative_allows_one_port_across_its_containers():
    assert by_rule(lint_text(KNATIVE_MULTI % ""), "knative-field-disallowed") == []  # the docs' shape
    assert by_rule(lint_text(KNATIVE % "1"), "knative-field-disallowed") == []  # one container, one port
    sidecar_port = "          ports:\n            - containerPort: 9400\n"
    (finding,) = by_rule(lint_text(KNATIVE_MULTI % sidecar_port), "knative-field-disallowed")
    assert (finding.line, finding.column) == (19, 15)  # the second port
    assert finding.severity.name == "ERROR"
    assert finding.message == (
        "Knative's webhook rejects the Service: more than one container port is set: "
        "spec.template.spec.containers[*].ports"
    )
    assert finding.notes[0] == "Only a single port is allowed across all containers"
    # two ports on one container are two ports too (validateContainersPorts counts them all)
    two = KNATIVE % "1"
    two = two.replace(
        "            - containerPort: 8080\n", "            - containerPort: 8080\n            - containerPort: 9090\n"
    )
    (finding,) = by_rule(lint_text(two), "knative-field-disallowed")
    assert "more than one container port is set" in finding.message and finding.line == 16
    # several containers and no port: Knative cannot tell which one serves
    portless = (KNATIVE_MULTI % "").replace("          ports:\n            - containerPort: 8000\n", "")
    (finding,) = by_rule(lint_text(portless), "knative-field-disallowed")
    assert finding.message.endswith("missing field(s): spec.template.spec.containers[*].ports")
    assert (finding.line, finding.column) == (9, 7)


def test_a_trainjob_whose_runtime_asks_for_a_pod_group_is_one_gang(tmp_path):
    # the Trainer's coscheduling plugin: one PodGroup named after the TrainJob, minMember = all its pods
    runtime = TORCH_RUNTIME.replace(
        "  mlPolicy:\n", "  podGroupPolicy:\n    coscheduling:\n      scheduleTimeoutSeconds: 120\n  mlPolicy:\n"
    )
    racks = str(DATA / "racks")  # six nodes hold 8 GPUs each
    tree = _trainjob_tree(tmp_path, runtime=runtime, nodes=7, gpus=8, product="x")
    job = (tree / "jobs" / "train.yaml").read_text()
    (tree / "jobs" / "train.yaml").write_text(job.split("  runtimePatches:")[0])  # no node selection
    result = run_cli("check", str(tree), "--inventory", racks, "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "gang-unsatisfiable"]
    assert finding["message"].startswith("coscheduling PodGroup fine-tune-llama needs 7 node pods x 8 nvidia.com/gpu")
    assert (finding["path"].rsplit("/", 1)[-1], finding["line"]) == ("train.yaml", 8)  # spec.runtimeRef.name
    (tree / "jobs" / "train.yaml").write_text(job.split("  runtimePatches:")[0].replace("numNodes: 7", "numNodes: 6"))
    assert not any(rule == "gang-unsatisfiable" for rule, *_ in _findings(str(tree), "--inventory", racks))
    # the same TrainJob on a runtime without a podGroupPolicy: each pod on its own, no gang
    tree = _trainjob_tree(tmp_path, nodes=7, gpus=8)
    (tree / "jobs" / "train.yaml").write_text(job.split("  runtimePatches:")[0])
    assert not any(rule == "gang-unsatisfiable" for rule, *_ in _findings(str(tree), "--inventory", racks))
