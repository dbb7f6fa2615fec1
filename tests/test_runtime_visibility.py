"""gpu-visibility-override: visibility variables by hand, and CUDA images that see every GPU."""

from __future__ import annotations

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


def test_nvidia_visible_devices_with_a_gpu_request_replaces_the_allocation():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
    resources: {limits: {nvidia.com/gpu: 2}}
"""),
        [(10, 45, "sets NVIDIA_VISIBLE_DEVICES=all by hand")],
    )


def test_nvidia_visible_devices_void_with_a_gpu_request_hides_the_gpus():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: void}
    resources: {limits: {nvidia.com/gpu: 1}}
"""),
        [(10, 45, "the allocated GPUs stay idle")],
    )


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


def test_cuda_visible_devices_index_past_the_containers_gpus():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - {name: CUDA_VISIBLE_DEVICES, value: "2,3"}
    resources: {limits: {nvidia.com/gpu: 2}}
"""),
        [(10, 43, "CUDA stops at the first index that does not exist (2), so the process gets none")],
    )


def test_cuda_visible_devices_fewer_than_allocated():
    assert_findings(
        RULE,
        pod("""
  - name: train
    image: registry.example.com/train:1
    env:
    - {name: CUDA_VISIBLE_DEVICES, value: "0"}
    resources: {limits: {nvidia.com/gpu: 4}}
"""),
        [(10, 43, "3 GPUs stay idle")],
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
