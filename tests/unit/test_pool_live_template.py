"""Cluster Autoscaler copies a live node of a node group as the group's template when one is a good candidate
(kubernetes/autoscaler cluster-autoscaler-1.36.1 processors/nodeinfosprovider/mixed_nodeinfos_processor.go):
the pool model takes that node's labels and allocatable, not the catalog's, when the inventory holds one."""

from __future__ import annotations

import shutil

import pytest
from conftest import DATA, run_cli

GKE = DATA / "elastic" / "gke"

# An L4 node of the GKE pool l4-pool (g2-standard-24: the catalog knows its 2 GPUs, not its CPUs), as
# `kubectl get nodes -o yaml` prints it, trimmed.
L4_NODE = """\
---
apiVersion: v1
kind: Node
metadata:
  name: gke-ml-l4-pool-3b7e9a10-x2vq
  labels:
    cloud.google.com/gke-nodepool: l4-pool
    cloud.google.com/gke-accelerator: nvidia-l4
    cloud.google.com/gke-spot: "true"
    cloud.google.com/machine-family: g2
    team: inference
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: g2-standard-24
    topology.kubernetes.io/zone: us-central1-a
spec:
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}<TAINTS>]<CORDONED>
status:
  capacity: {cpu: "24", memory: 98884852Ki, ephemeral-storage: 202891036Ki, pods: "110", nvidia.com/gpu: "2"}
  allocatable: {cpu: 22800m, memory: 88157428Ki, ephemeral-storage: 93492209510, pods: "110", nvidia.com/gpu: "<GPUS>"}
"""


def _job(cpu: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: infer, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]
      containers:
      - name: c
        image: registry.example.com/infer:1.0
        resources:
          requests: {{cpu: "{cpu}"}}
          limits: {{nvidia.com/gpu: 2}}
"""


def _inventory(tmp_path, node: str = ""):
    folder = tmp_path / "inventory"
    folder.mkdir()
    shutil.copy(GKE / "cluster.json", folder / "cluster.json")
    (folder / "nodes.yaml").write_text((GKE / "nodes.yaml").read_text() + node)
    return folder


def _node(gpus: str = "2", cordoned: bool = False, extra_taints: str = "") -> str:
    unschedulable = "\n  unschedulable: true" if cordoned else ""
    return L4_NODE.replace("<TAINTS>", extra_taints).replace("<CORDONED>", unschedulable).replace("<GPUS>", gpus)


def _unschedulable(write, tmp_path, cpu: str, node: str) -> list[dict]:
    path = write("job.yaml", _job(cpu))
    report = run_cli("check", str(path), "--inventory", str(_inventory(tmp_path, node)), "--format", "json").json()
    return [f for f in report["findings"] if f["rule"] == "gpu-unschedulable"]


def test_the_live_node_the_autoscaler_copies_is_too_small(write, tmp_path):
    """23 CPUs: the catalog does not know g2-standard-24's CPUs, the live node allocates 22.8."""
    (finding,) = _unschedulable(write, tmp_path, "23", _node())
    assert finding["severity"] == "error"
    assert "none of its 2 node pools can add a node for it" in finding["message"]
    assert "GKE node pool l4-pool" in finding["notes"][0] and "22.8" in finding["notes"][0]


def test_without_a_node_of_the_group_the_catalog_template_stands(write, tmp_path):
    assert _unschedulable(write, tmp_path, "23", "") == []


def test_what_the_live_node_holds_fits(write, tmp_path):
    assert _unschedulable(write, tmp_path, "22", _node()) == []


def test_a_node_trimmed_of_a_resource_is_judged_on_its_extended_resources_only(write, tmp_path):
    """No ephemeral-storage listed (an inventory trimmed by hand): its CPUs are not taken as known either."""
    trimmed = _node().replace("ephemeral-storage: 93492209510, ", "")
    assert _unschedulable(write, tmp_path, "23", trimmed) == []


@pytest.mark.parametrize(
    "node",
    [
        _node(cordoned=True),  # not schedulable: not a good candidate
        _node(gpus="0"),  # its GPUs not allocatable yet: the autoscaler takes it as unready
        _node(extra_taints=", {key: ToBeDeletedByClusterAutoscaler, effect: NoSchedule}"),  # being scaled down
        _node(extra_taints=", {key: node.kubernetes.io/not-ready, effect: NoSchedule}"),
    ],
    ids=["cordoned", "gpu-not-ready", "being-deleted", "not-ready"],
)
def test_a_node_the_autoscaler_would_not_copy_leaves_the_catalog_template(write, tmp_path, node):
    assert _unschedulable(write, tmp_path, "23", node) == []
