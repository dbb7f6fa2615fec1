"""GPU visibility: gpu-visibility-override's warnings and `explain`'s "GPU visibility" step read one tuple of
VisibilityProblems (issue #30). A vLLM Deployment (vllm/vllm-openai, built FROM a CUDA image) holding 0-2
GPUs, with the variables real manifests set by hand (NVIDIA_VISIBLE_DEVICES=all or void, CUDA_VISIBLE_DEVICES
by index or by UUID), selecting GPU nodes or not, on a cluster of GPU nodes only or with a CPU node."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      SELECTOR
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: [--model, Qwen/Qwen2.5-7B-Instruct]
        ENV
        resources:
          limits: {cpu: "4", memory: 16Gi GPUS}
"""
GPU_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: l4-0
    labels: {kubernetes.io/hostname: l4-0, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: "4"}
  status:
    capacity: {cpu: "48", memory: 192Gi, pods: "110", nvidia.com/gpu: "4"}
    allocatable: {cpu: "47", memory: 180Gi, pods: "110", nvidia.com/gpu: "4"}
"""
CPU_NODE = """\
- apiVersion: v1
  kind: Node
  metadata: {name: cpu-0, labels: {kubernetes.io/hostname: cpu-0}}
  status:
    capacity: {cpu: "32", memory: 128Gi, pods: "110"}
    allocatable: {cpu: "31", memory: 120Gi, pods: "110"}
"""
ENVS = {
    "none": "",
    "nvidia all": "env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]",
    "nvidia void": "env: [{name: NVIDIA_VISIBLE_DEVICES, value: void}]",
    "cuda 0": 'env: [{name: CUDA_VISIBLE_DEVICES, value: "0"}]',
    "cuda 1,2": 'env: [{name: CUDA_VISIBLE_DEVICES, value: "1,2"}]',
    "cuda uuid": "env: [{name: CUDA_VISIBLE_DEVICES, value: GPU-5d1a4c1e-29b0-7f4f-8a5e-1c0d2e3f4a5b}]",
}
SELECTORS = {"none": "", "gpu nodes": "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}"}


def _run(write, gpus: int, env: str, selector: str, cpu_node: bool) -> tuple[list[dict], list[dict]]:
    manifest = (
        DEPLOYMENT.replace("SELECTOR", SELECTORS[selector])
        .replace("ENV", ENVS[env])
        .replace(" GPUS", f", nvidia.com/gpu: {gpus}" if gpus else "")
    )
    path = write("repo/vllm.yaml", manifest)
    nodes = GPU_NODE + (CPU_NODE if cpu_node else "")
    inventory = write("inventory/nodes.yaml", "apiVersion: v1\nkind: List\nitems:\n" + nodes)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert explained.exit_code == checked.exit_code, explained.stderr  # 1: an error among the findings
    (explanation,) = json.loads(explained.stdout)["explanations"]
    steps = [step for step in explanation["steps"] if step["title"] == "GPU visibility"]
    return [f for f in checked.json()["findings"] if f["rule"] == "gpu-visibility-override"], steps


@pytest.mark.parametrize("cpu_node", [False, True])
@pytest.mark.parametrize("selector", sorted(SELECTORS))
@pytest.mark.parametrize("env", sorted(ENVS))
@pytest.mark.parametrize("gpus", [0, 1, 2])
def test_the_visibility_step_says_one_line_per_warning_check_gives(write, gpus, env, selector, cpu_node):
    findings, steps = _run(write, gpus, env, selector, cpu_node)
    if not findings:
        assert steps == []
        return
    (step,) = steps
    assert step["status"] == "info"
    assert len(step["lines"]) == len(findings), (findings, step)


def test_void_beside_a_gpu_exposes_none(write):
    (finding,), (step,) = _run(write, 1, "nvidia void", "gpu nodes", cpu_node=True)
    assert finding["message"].startswith(
        "container 'vllm' asks for 1 nvidia.com/gpu but sets NVIDIA_VISIBLE_DEVICES=void: the NVIDIA container"
    )
    assert step["lines"] == [
        "container 'vllm' asks for 1 nvidia.com/gpu, but NVIDIA_VISIBLE_DEVICES=void exposes none of them"
    ]


def test_an_index_past_the_gpus_held(write):
    (finding,), (step,) = _run(write, 2, "cuda 1,2", "none", cpu_node=True)
    assert finding["notes"][0] == "CUDA stops at the first index that does not exist (2), so the process gets 1 of them"
    assert step["lines"] == [
        "container 'vllm': CUDA_VISIBLE_DEVICES=1,2 names index 2, past its 2 GPUs: the process gets 1"
    ]


def test_a_cuda_image_without_gpus_on_a_cluster_of_gpu_nodes_only(write):
    """No selection names GPU nodes; the inventory says every node it can use has one."""
    (finding,), (step,) = _run(write, 0, "none", "none", cpu_node=False)
    assert "every node it can be scheduled on has NVIDIA GPUs (l4-0)" in finding["message"]
    assert step["lines"] == [
        "container 'vllm' requests no GPU, but every node it can be scheduled on has NVIDIA GPUs (l4-0) and runs "
        "a CUDA image (vllm/vllm-openai:v0.6.3): it sees every GPU of the node"
    ]


def test_a_cuda_image_without_gpus_that_may_land_on_a_cpu_node_is_clean_in_both(write):
    findings, steps = _run(write, 0, "none", "none", cpu_node=True)
    assert findings == [] and steps == []
