"""gpu-visibility-override: visibility variables by hand, and CUDA images that see every GPU."""

from __future__ import annotations

import pytest
from rule_harness import assert_findings

RULE = "gpu-visibility-override"


def pod(container: str, spec_extra: str = "") -> str:
    return (
        """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
"""
        + spec_extra
        + """  containers:
"""
        + container
    )


def train(variable: str, value: str, gpus: int) -> str:
    """A one-container training pod that sets ``variable`` by hand (the env item at line 10)."""
    return pod(f"""
  - name: train
    image: registry.example.com/train:1
    env:
    - {{name: {variable}, value: "{value}"}}
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
""")


@pytest.mark.parametrize(
    ("variable", "value", "gpus", "expected"),
    [
        pytest.param("NVIDIA_VISIBLE_DEVICES", "all", 2, "sets NVIDIA_VISIBLE_DEVICES=all by hand", id="all-replaces"),
        pytest.param("NVIDIA_VISIBLE_DEVICES", "void", 1, "the allocated GPUs stay idle", id="void-hides"),
        pytest.param(
            "CUDA_VISIBLE_DEVICES",
            "2,3",
            2,
            "CUDA stops at the first index that does not exist (2), so the process gets none",
            id="index-past-the-gpus",
        ),
        pytest.param("CUDA_VISIBLE_DEVICES", "0", 4, "3 GPUs stay idle", id="fewer-than-allocated"),
        pytest.param("CUDA_VISIBLE_DEVICES", "0,1,2,3", 4, None, id="matching-four"),
    ],
)
def test_visibility_set_by_hand_in_a_gpu_container(variable: str, value: str, gpus: int, expected: str | None):
    column = len("    - {name: ") + len(variable) + len(", value: ") + 1
    assert_findings(RULE, train(variable, value, gpus), [(10, column, expected)] if expected else [])


def test_unrequested_all_outside_infrastructure():
    text = pod("""
  - name: notebook
    image: jupyter/base-notebook
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
""")
    assert_findings(RULE, text, [(11, 14, "requests no GPU but sets NVIDIA_VISIBLE_DEVICES=all")])


def test_gpu_infrastructure_daemonset_is_clean():
    assert_findings(
        RULE,
        """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: dcgm-exporter, namespace: gpu-operator}
        spec:
          selector: {matchLabels: {app: dcgm-exporter}}
          template:
            metadata: {labels: {app: dcgm-exporter}}
            spec:
              nodeSelector: {nvidia.com/gpu.present: "true"}
              tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
              containers:
              - name: dcgm-exporter
                image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
                env:
                - {name: NVIDIA_VISIBLE_DEVICES, value: all}
        """,
        [],
    )


def test_cuda_visible_devices_matching_the_allocation_and_without_gpus_are_clean():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - {name: CUDA_VISIBLE_DEVICES, value: "0,1"}
    resources: {limits: {nvidia.com/gpu: 2}}
  - name: cpu
    image: registry.example.com/tools:1
    env:
    - {name: CUDA_VISIBLE_DEVICES, value: ""}
"""),
        [],
    )


def test_cuda_image_tolerating_gpu_nodes_without_a_request():
    assert_findings(
        RULE,
        pod(
            """
  - name: sidecar
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    command: [sleep, infinity]
""",
            "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n",
        ),
        [(10, 12, "tolerates the GPU nodes' taint nvidia.com/gpu and runs a CUDA image")],
    )


def test_cuda_image_in_a_gpu_pod_or_with_void_or_on_any_node_is_clean():
    # A sidecar in a pod that holds GPUs, a CPU pod with void, a CUDA image not aimed at GPU nodes.
    assert_findings(
        RULE,
        pod(
            """
  - name: server
    image: vllm/vllm-openai:v0.10.1
    resources: {limits: {nvidia.com/gpu: 1}}
  - name: exporter
    image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
""",
            "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n",
        ),
        [],
    )
    assert_findings(
        RULE,
        pod("""
  - name: build
    image: nvidia/cuda:12.4.1-devel-ubuntu22.04
    command: [make]
"""),
        [],
    )


def test_value_from_a_secret_is_not_read():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - name: CUDA_VISIBLE_DEVICES
      valueFrom: {configMapKeyRef: {name: gpus, key: list}}
    resources: {limits: {nvidia.com/gpu: 2}}
"""),
        [],
    )


def test_cuda_images_beside_gpus_of_an_init_container_or_a_claim_or_with_the_variable_from_a_secret():
    """What hides every GPU from a CUDA image, or gives the pod devices, is looked up only for a CUDA image
    without the variable - and then still decides: GPUs of an init container or a DRA claim make the pod a GPU
    pod; NVIDIA_VISIBLE_DEVICES from a Secret is set, value unknown; two CUDA sidecars are each reported."""
    taint = "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    sidecars = """
  - name: sidecar
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
  - name: probe
    image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
"""
    assert_findings(
        RULE,
        pod(sidecars, taint),
        [
            (10, 12, "container 'sidecar' requests no GPU but tolerates the GPU nodes' taint nvidia.com/gpu"),
            (12, 12, "container 'probe' requests no GPU but tolerates the GPU nodes' taint nvidia.com/gpu"),
        ],
    )
    init = "  initContainers:\n  - name: warm\n    image: busybox\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    assert_findings(RULE, pod(sidecars, taint + init), [])
    claim = "  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
    assert_findings(RULE, pod(sidecars, taint + claim), [])
    secret = """
  - name: sidecar
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      valueFrom: {secretKeyRef: {name: gpus, key: list}}
"""
    assert_findings(RULE, pod(secret, taint), [])


# A runtime's template is completed by the workloads that use it: Kubeflow Trainer gives the trainer's
# 'node' container each TrainJob's trainer.resourcesPerNode, KServe merges the predictor's model resources
# into 'kserve-container'. A runtime that asks no GPU itself is the usual shape (the Trainer's own
# torch-distributed, KServe's huggingfaceserver); the pods are judged where they are made.
TRAINING_RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-gpu, namespace: ml}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                tolerations:
                - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
                containers:
                - name: node
                  image: pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: run, namespace: ml}
spec:
  runtimeRef: {name: torch-gpu, apiGroup: trainer.kubeflow.org, kind: TrainingRuntime}
  trainer:
    resourcesPerNode:
      limits: {RESOURCE: 1}
"""
SERVING_RUNTIME = """
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm, namespace: ml}
spec:
  supportedModelFormats: [{name: vllm, autoSelect: true}]
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.9.1
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: chat, namespace: ml}
spec:
  predictor:
    model:
      modelFormat: {name: vllm}
      runtime: vllm
      resources:
        limits: {RESOURCE: 1}
"""


@pytest.mark.parametrize(
    ("text", "workload_at"),
    [pytest.param(TRAINING_RUNTIME, (25, 16), id="trainjob"), pytest.param(SERVING_RUNTIME, (17, 5), id="isvc")],
)
def test_a_runtime_without_gpus_is_judged_in_the_workloads_that_use_it(text: str, workload_at: tuple[int, int]):
    assert_findings(RULE, text.replace("RESOURCE", "nvidia.com/gpu"), [])
    # the trap: a workload that asks for none is told so (the TrainJob's pod at the runtime's image it runs)
    line, column = workload_at
    assert_findings(RULE, text.replace("RESOURCE", "cpu"), [(line, column, "requests no GPU but tolerates")])
