"""A gang whose topology requirement leaves one domain: over-tight-topology's warning, and `explain`'s gang
step says it too (issue #30): the same packed GangAnswer. Two racks of two 8 x H100 nodes, a PodGroup of two
workers in one rack (the scheduling.k8s.io Workload API's shape)."""

from __future__ import annotations

import json

from conftest import run_cli

JOB = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: llm-workers}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: llm}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      schedulingGroup: {podGroupName: llm-workers}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [REPAIR]}]
      restartPolicy: Never
      containers:
      - name: worker
        image: registry.example.com/llm:1.0
        resources: {limits: {nvidia.com/gpu: 8}}
"""
NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: h100-rRACK-INDEX
    labels: {kubernetes.io/hostname: h100-rRACK-INDEX, topology.kubernetes.io/zone: us-east-1a, topology.kubernetes.io/rack: rack-RACK, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}
  status:
    capacity: {cpu: "192", memory: 2015Gi, pods: "110", nvidia.com/gpu: "8"}
    allocatable: {cpu: "190", memory: 1990Gi, pods: "110", nvidia.com/gpu: "8"}
"""
ONLY = (
    "  only topology.kubernetes.io/rack=rack-1 can host the whole gang (2 domains exist); any failure there blocks it"
)


def _nodes(racks: int) -> str:
    items = "".join(
        NODE.replace("RACK", str(rack)).replace("INDEX", str(index))
        for rack in range(1, racks + 1)
        for index in range(2)
    )
    return "apiVersion: v1\nkind: List\nitems:\n" + items


def _run(write, repair: str, racks: int) -> tuple[list[dict], dict]:
    path = write("repo/job.yaml", JOB.replace("REPAIR", repair))
    inventory = write("inventory/nodes.yaml", _nodes(racks))
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json", "--object", "Job/llm")
    assert checked.exit_code == explained.exit_code == 0, explained.stderr
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (gang,) = [step for step in explanation["steps"] if step["title"] == "Gang and topology"]
    return [f for f in checked.json()["findings"] if f["rule"] == "over-tight-topology"], gang


def test_one_rack_left_by_a_node_out_for_repair_is_info_in_the_gang_step_check_warns_on(write):
    (finding,), gang = _run(write, "h100-r2-1", 2)
    assert f"  {finding['message']}" == ONLY
    assert gang["status"] == "info"
    assert ONLY in gang["lines"]


def test_two_racks_that_hold_the_gang_pass_and_check_is_silent(write):
    findings, gang = _run(write, "none", 2)
    assert findings == []
    assert gang["status"] == "ok"
    assert "  fits in 2 domain(s): rack-1, rack-2" in gang["lines"]


def test_a_cluster_of_one_rack_is_no_verdict_trap(write):
    """One rack is every domain there is: nothing to fail over to, nothing over-tight."""
    findings, gang = _run(write, "none", 1)
    assert findings == []
    assert gang["status"] == "ok"
    assert not any("can host the whole gang" in line for line in gang["lines"])
