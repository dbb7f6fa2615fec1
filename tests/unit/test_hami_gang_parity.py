"""A gang of HAMi pods asking for HAMi's shares (nvidia.com/gpumem, nvidia.com/gpucores): its scheduler extender
accounts for them (ignoredByScheduler in HAMi's KubeSchedulerConfiguration, charts/hami/templates/_helpers.tpl),
no node publishes them. The gang is packed on the requests each pod's own verdict judges (issue #30): before, the
packing kept the shares, so check skipped the gang as asking for a resource no node publishes while `explain`'s
gang step failed it on them. A Volcano Job whose workers are HAMi's example pod (Project-HAMi/HAMi
examples/nvidia/default_use.yaml: nvidia.com/gpu, gpumem 3000, gpucores 30) on two nodes whose HAMi device plugin
publishes 4 GPUs split 10 ways."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: hami-workers}
spec:
  minAvailable: WORKERS
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: WORKERS
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: ubuntu-container
          image: ubuntu:22.04
          command: ["bash", "-c", "sleep 86400"]
          resources:
            limits: {nvidia.com/gpu: 4 SHARES}
"""
NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-INDEX
    labels: {kubernetes.io/hostname: a100-INDEX, nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB, gpu: "on"}
  status:
    capacity: {cpu: "32", memory: 256Gi, pods: "110", RESOURCE: "40"}
    allocatable: {cpu: "32", memory: 256Gi, pods: "110", RESOURCE: "40"}
"""
SHARES = {
    "none": "",
    "gpumem": ", nvidia.com/gpumem: 3000",
    "gpumem and gpucores": ", nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30",
}
GANG_STEP = "Gang and topology"


def _run(write, workers: int, shares: str, resource: str = "nvidia.com/gpu") -> tuple[list[dict], dict]:
    path = write("repo/job.yaml", JOB.replace("WORKERS", str(workers)).replace(" SHARES", SHARES[shares]))
    nodes = "".join(NODE.replace("INDEX", str(index)).replace("RESOURCE", resource) for index in range(2))
    inventory = write("inventory/nodes.yaml", "apiVersion: v1\nkind: List\nitems:\n" + nodes)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli(
        "explain", str(path), "--inventory", str(inventory), "--format", "json", "--object", "Job/hami-workers"
    )
    assert explained.exit_code == checked.exit_code, explained.stderr
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (step,) = [step for step in explanation["steps"] if step["title"] == GANG_STEP]
    return checked.json()["findings"], step


def _gang_errors(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "gang-unsatisfiable"]


@pytest.mark.parametrize("shares", sorted(SHARES))
@pytest.mark.parametrize("workers", [2, 20, 21])
def test_the_gang_step_fails_exactly_where_gang_unsatisfiable_errs_whatever_the_shares(write, workers, shares):
    findings, step = _run(write, workers, shares)
    errors = _gang_errors(findings)
    assert (step["status"] == "FAIL") == bool(errors), (findings, step)
    assert bool(errors) == (workers > 20)  # 80 vGPUs on the two nodes: 20 workers of 4
    assert all(f["severity"] == "info" for f in findings if f["rule"] == "gpu-resource-unknown")


def test_a_gang_of_hami_pods_that_the_nodes_hold_fits_with_its_shares(write):
    findings, step = _run(write, 20, "gpumem and gpucores")
    assert _gang_errors(findings) == []
    assert step["status"] == "ok"
    assert step["lines"][0] == "Volcano Job: 20 of 20 pods at once"
    assert step["lines"][1].startswith("  fits in 1 domain(s)")


def test_one_worker_too_many_is_unsatisfiable_for_the_vgpus_not_the_shares(write):
    """The fixed miss: a share no node publishes made check skip the gang."""
    findings, step = _run(write, 21, "gpumem")
    (error,) = _gang_errors(findings)
    assert error["severity"] == "error"
    assert error["message"].startswith("Volcano Job needs 21 worker pods x 4 nvidia.com/gpu placed at once")
    assert "gpumem" not in error["message"] + " ".join(error["notes"])
    assert step["status"] == "FAIL"
    assert f"  cannot be placed: {error['message']}" in step["lines"]


def test_a_gang_whose_vgpus_no_node_publishes_is_left_to_gpu_resource_unknown_trap(write):
    """Without the shares, the gang still asks for nvidia.com/gpu, which these nodes (HAMi's own resource name
    renamed away) do not publish: no gang verdict, gpu-resource-unknown speaks."""
    findings, _ = _run(write, 2, "gpumem", resource="example.com/other")
    assert _gang_errors(findings) == []
    assert [(f["rule"], f["severity"], f["message"].split(" asks for ")[1][:18]) for f in findings] == [
        ("gpu-resource-unknown", "warning", "nvidia.com/gpu (ad"),
        ("gpu-resource-unknown", "info", "nvidia.com/gpumem,"),
    ]
