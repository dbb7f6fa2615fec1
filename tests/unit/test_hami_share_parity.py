"""HAMi's shares (nvidia.com/gpumem, nvidia.com/gpucores): its scheduler extender accounts for them and its
KubeSchedulerConfiguration marks them ignoredByScheduler, so NodeResourcesFit skips them and no node publishes
them. gpu-unschedulable and `explain`'s capacity step read one SchedulingVerdict that leaves them out (issue
#30): before, explain failed the capacity step on "Insufficient nvidia.com/gpumem" where check said info, and
check judged no vGPU count at all beside a share. HAMi's own example pod (Project-HAMi/HAMi
examples/nvidia/default_use.yaml) on a node whose HAMi device plugin publishes 4 GPUs split 10 ways."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  containers:
  - name: ubuntu-container
    image: ubuntu:18.04
    command: ["bash", "-c", "sleep 86400"]
    resources:
      limits: {nvidia.com/gpu: GPUS SHARES}
"""
NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-0
    labels: {kubernetes.io/hostname: a100-0, nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB, gpu: "on"}
  status:
    capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "40"}
    allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "40"}
"""
SHARES = {
    "none": "",
    "gpumem": ", nvidia.com/gpumem: 3000",
    "gpumem and gpucores": ", nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30",
}


def _run(write, gpus: int, shares: str) -> tuple[list[dict], dict]:
    path = write("repo/pod.yaml", POD.replace("GPUS", str(gpus)).replace(" SHARES", SHARES[shares]))
    inventory = write("inventory/nodes.yaml", NODES)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert explained.exit_code == checked.exit_code, explained.stderr  # 1: an error among the findings
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (step,) = [step for step in explanation["steps"] if step["title"] == "Capacity vs allocatable"]
    return checked.json()["findings"], step | {"scheduler": explanation["scheduler"]}


@pytest.mark.parametrize("shares", sorted(SHARES))
@pytest.mark.parametrize("gpus", [1, 40, 41])
def test_the_capacity_step_fails_exactly_where_gpu_unschedulable_errs(write, gpus, shares):
    findings, step = _run(write, gpus, shares)
    unschedulable = [f for f in findings if f["rule"] == "gpu-unschedulable"]
    assert (step["status"] == "FAIL") == bool(unschedulable), (findings, step)
    assert all(f["severity"] == "info" for f in findings if f["rule"] == "gpu-resource-unknown")


def test_a_share_beside_a_vgpu_the_node_holds_passes_and_check_says_info(write):
    findings, step = _run(write, 1, "gpumem and gpucores")
    assert [(f["rule"], f["severity"]) for f in findings] == [("gpu-resource-unknown", "info")]
    assert step["status"] == "ok"
    assert step["lines"][1:] == [
        f"nvidia.com/{name}: asks {amount}; HAMi's scheduler extender accounts for it on the nodes the other "
        "filters pass (the kube-scheduler ignores it)"
        for name, amount in (("gpucores", 30), ("gpumem", 3000))
    ]
    assert step["scheduler"] == "1/1 nodes pass every filter"


def test_more_vgpus_than_the_node_publishes_is_an_error_with_a_share_too(write):
    """The fixed miss: a share no node publishes made check skip the vGPU count."""
    findings, step = _run(write, 41, "gpumem")
    (error,) = [f for f in findings if f["rule"] == "gpu-unschedulable"]
    assert error["severity"] == "error"
    assert "Insufficient nvidia.com/gpu" in " ".join(error["notes"])
    assert "gpumem" not in " ".join(error["notes"])
    assert step["status"] == "FAIL"
    assert step["scheduler"].startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
