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
