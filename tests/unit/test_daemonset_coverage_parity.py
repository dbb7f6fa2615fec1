"""Where a DaemonSet's pods run: daemonset-coverage's finding and `explain`'s "DaemonSet coverage" step read one
DaemonCoverage (issue #30). NVIDIA's device plugin DaemonSet (NVIDIA/k8s-device-plugin
deployments/static/nvidia-device-plugin.yml) with and without its nvidia.com/gpu toleration, against GPU nodes
tainted nvidia.com/gpu:NoSchedule (some, all or none) beside a CPU node, and a Karpenter NodePool tainting the
GPU nodes it adds sku=gpu (as AKS's GPU pools are)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin-daemonset, namespace: kube-system}
spec:
  selector:
    matchLabels: {name: nvidia-device-plugin-ds}
  template:
    metadata:
      labels: {name: nvidia-device-plugin-ds}
    spec:
      TOLERATIONS
      priorityClassName: system-node-critical
      containers:
      - image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        name: nvidia-device-plugin-ctr
        volumeMounts:
        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}
      volumes:
      - name: device-plugin
        hostPath: {path: /var/lib/kubelet/device-plugins}
"""
TOLERATES = "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4]}
      taints:
      - {key: sku, value: gpu, effect: NoSchedule}
---
"""
CPU = """\
- apiVersion: v1
  kind: Node
  metadata: {name: cpu-0, labels: {kubernetes.io/hostname: cpu-0, kubernetes.io/os: linux}}
  status:
    capacity: {cpu: "32", memory: 128Gi, pods: "110"}
    allocatable: {cpu: "31", memory: 120Gi, pods: "110"}
"""
GPU = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-INDEX
    labels: {kubernetes.io/hostname: a100-INDEX, kubernetes.io/os: linux, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8"}
  spec:
    taints: TAINTS
  status:
    capacity: {cpu: "128", memory: 1Ti, pods: "110"}
    allocatable: {cpu: "126", memory: 1000Gi, pods: "110"}
"""
GPU_TAINT = "[{key: nvidia.com/gpu, effect: NoSchedule}]"
STATUS = {"error": "FAIL", "warning": "info", None: "ok"}


def _run(write, tolerates: bool, tainted: int, gpus: int, pool: bool = False) -> tuple[list[dict], dict]:
    manifest = (POOL if pool else "") + PLUGIN.replace("TOLERATIONS", TOLERATES if tolerates else "")
    nodes = CPU + "".join(
        GPU.replace("INDEX", str(index)).replace("TAINTS", GPU_TAINT if index < tainted else "[]")
        for index in range(gpus)
    )
    path = write("repo/plugin.yaml", manifest)
    inventory = write("inventory/nodes.yaml", "apiVersion: v1\nkind: List\nitems:\n" + nodes)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert explained.exit_code == checked.exit_code, explained.stderr  # 1: an error among the findings
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (step,) = [step for step in explanation["steps"] if step["title"] == "DaemonSet coverage"]
    return [f for f in checked.json()["findings"] if f["rule"] == "daemonset-coverage"], step


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize("tolerates", [False, True])
@pytest.mark.parametrize(("tainted", "gpus"), [(0, 2), (1, 2), (2, 2), (3, 3), (0, 0)])
def test_the_coverage_step_fails_where_check_errs_and_says_info_where_it_warns(write, tolerates, tainted, gpus, pool):
    findings, step = _run(write, tolerates, tainted, gpus, pool)
    worst = "error" if any(f["severity"] == "error" for f in findings) else "warning" if findings else None
    assert step["status"] == STATUS[worst], (findings, step)


def test_a_plugin_that_reaches_no_gpu_node_fails_the_step_naming_the_taint(write):
    (finding,), step = _run(write, tolerates=False, tainted=2, gpus=2)
    assert finding["severity"] == "error"
    assert finding["message"].startswith("this DaemonSet (NVIDIA device plugin) selects 0 of 2 NVIDIA GPU nodes")
    assert step == {
        "title": "DaemonSet coverage",
        "status": "FAIL",
        "lines": [
            "runs on 0 of 2 NVIDIA GPU nodes (NVIDIA device plugin)",
            "2 carry the untolerated taint nvidia.com/gpu:NoSchedule (a100-0, a100-1)",
        ],
    }


def test_a_plugin_missing_one_of_two_gpu_nodes_is_a_warning_and_info(write):
    (finding,), step = _run(write, tolerates=False, tainted=1, gpus=2)
    assert finding["severity"] == "warning"
    assert step["status"] == "info"
    assert step["lines"][:2] == [
        "runs on 1 of 2 NVIDIA GPU nodes (NVIDIA device plugin)",
        "1 carry the untolerated taint nvidia.com/gpu:NoSchedule (a100-0)",
    ]


def test_the_plugin_with_nvidias_toleration_passes_and_check_is_silent(write):
    findings, step = _run(write, tolerates=True, tainted=2, gpus=2)
    assert findings == []
    assert step == {
        "title": "DaemonSet coverage",
        "status": "ok",
        "lines": ["runs on 2 of 2 NVIDIA GPU nodes (NVIDIA device plugin)"],
    }


def test_a_pool_adding_nodes_it_never_reaches_is_the_steps_failure_and_checks_error(write):
    """The GPU nodes that exist are covered; the nodes the pool adds carry sku=gpu:NoSchedule."""
    (finding,), step = _run(write, tolerates=True, tainted=2, gpus=2, pool=True)
    assert finding["severity"] == "error"
    assert "cannot run on the nodes Karpenter NodePool gpu adds" in finding["message"]
    assert step["status"] == "FAIL"
    assert step["lines"][-1] == (
        "Karpenter NodePool gpu adds GPU nodes with the untolerated taint sku=gpu:NoSchedule: it never runs there"
    )


def test_a_cluster_without_gpu_nodes_says_so_and_passes(write):
    findings, step = _run(write, tolerates=False, tainted=0, gpus=0)
    assert findings == []
    assert step["status"] == "ok"
    assert step["lines"] == ["GPU infrastructure (NVIDIA device plugin): the inventory has no GPU node of its vendor"]
