"""A workload whose required node selection holds fewer of its pods than the cluster would: over-tight-
affinity's warning, and `explain`'s affinity step says it (issue #30): the SchedulingVerdict's
selection_limits both read. 8-GPU vLLM replicas pinned to a rack of two 8 x H100 nodes, of two racks."""

from __future__ import annotations

import json

from conftest import run_cli

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-405b}
spec:
  replicas: REPLICAS
  strategy: {type: Recreate}  # a rollout never needs a spare 8-GPU node
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      nodeSelector: {topology.kubernetes.io/rack: rack-1}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.10.1
        resources: {limits: {nvidia.com/gpu: 8}}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""
NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: h100-rRACK-INDEX
    labels: {kubernetes.io/hostname: h100-rRACK-INDEX, topology.kubernetes.io/rack: rack-RACK, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}
  status:
    capacity: {cpu: "192", memory: 2015Gi, pods: "110", nvidia.com/gpu: "8"}
    allocatable: {cpu: "190", memory: 1990Gi, pods: "110", nvidia.com/gpu: "8"}
"""
LIMITED = "the nodes its required node affinity/selector allows hold only 2 of the workload's 3 pods"


def _run(write, replicas: int, racks: int) -> tuple[list[dict], dict]:
    nodes = "".join(
        NODE.replace("RACK", str(rack)).replace("INDEX", str(index))
        for rack in range(1, racks + 1)
        for index in range(2)
    )
    path = write("repo/deploy.yaml", DEPLOYMENT.replace("REPLICAS", str(replicas)))
    inventory = write("inventory/nodes.yaml", "apiVersion: v1\nkind: List\nitems:\n" + nodes)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert checked.exit_code == explained.exit_code == 0, explained.stderr
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (step,) = [step for step in explanation["steps"] if step["title"] == "Node affinity and taints"]
    return [f for f in checked.json()["findings"] if f["rule"] in ("over-tight-affinity", "gpu-unschedulable")], step


def test_three_replicas_a_rack_of_two_holds_fail_the_affinity_step_check_warns_on(write):
    (finding,), step = _run(write, 3, 2)
    assert finding["rule"] == "over-tight-affinity" and finding["severity"] == "warning"
    assert "allows hold only 2 of them on the empty cluster" in finding["message"]
    assert finding["notes"][0].startswith("4 would fit without ")
    assert step["status"] == "FAIL"
    assert step["lines"][-1] == f"{LIMITED} on the empty cluster; 4 would fit without it"


def test_two_replicas_the_rack_holds_pass_and_check_is_silent(write):
    findings, step = _run(write, 2, 2)
    assert findings == []
    assert step["status"] == "ok"


def test_replicas_the_whole_cluster_cannot_hold_are_not_the_selections_trap(write):
    """One rack is the cluster: the selection excludes nothing, gpu-unschedulable words the shortfall."""
    (finding,), step = _run(write, 3, 1)
    assert finding["rule"] == "gpu-unschedulable"
    assert step["status"] == "ok"
    assert not any(LIMITED in line for line in step["lines"])
