"""gpu-unschedulable names the resource the next replica finds short (the scheduler's "Insufficient <resource>")
only when that one resource runs out first on every node the pod fits (aws/aws-neuron-sdk#392)."""

from __future__ import annotations

from pathlib import Path

from rule_harness import findings_of

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: encoder, namespace: default}
spec:
  replicas: %(replicas)d
  selector:
    matchLabels: {app: encoder}
  template:
    metadata:
      labels: {app: encoder}
    spec:
      containers:
      - name: encoder
        image: registry.example.com/encoder:2.1
        resources:
          requests: {cpu: "4", memory: 8Gi}
          limits: {%(resource)s: 1}
"""
NODE = """
- apiVersion: v1
  kind: Node
  metadata:
    name: %(name)s
    labels: {kubernetes.io/hostname: %(name)s}
  status:
    capacity: {cpu: "%(cpu)s", memory: 128Gi, pods: "110", %(resource)s: "%(count)s"}
    allocatable: {cpu: "%(cpu)s", memory: 120Gi, pods: "110", %(resource)s: "%(count)s"}
"""


def _short(tmp_path: Path, replicas: int, resource: str, nodes: list[tuple[str, int, int]]) -> list[str]:
    inventory = tmp_path / "inventory.yaml"
    items = "".join(NODE % {"name": n, "cpu": cpu, "count": count, "resource": resource} for n, cpu, count in nodes)
    inventory.write_text("apiVersion: v1\nkind: List\nitems:" + items)
    found = findings_of(
        "gpu-unschedulable", DEPLOYMENT % {"replicas": replicas, "resource": resource}, inventory=inventory
    )
    assert len(found) == 1 and "would stay Pending" in found[0].message  # the replicas finding, and it alone
    return [line for f in found for line in f.message.splitlines() if "Insufficient" in line]


def test_one_resource_short_on_every_node_is_named(tmp_path: Path) -> None:
    short = _short(tmp_path, 2, "aws.amazon.com/neuron", [("inf1-a", 8, 1)])
    assert short == [
        "aws.amazon.com/neuron runs out first on each of those nodes: the next pod reports Insufficient "
        "aws.amazon.com/neuron"
    ]


def test_nodes_short_of_different_resources_name_none(tmp_path: Path) -> None:
    # gpu-a: 1 GPU for 8 pods' CPUs; gpu-b: 4 GPUs for 2 pods' CPUs
    assert _short(tmp_path, 6, "nvidia.com/gpu", [("gpu-a", 32, 1), ("gpu-b", 8, 4)]) == []
