"""A GKE cluster as the pool tests see it (test_pool_gke_*.py): its nodes as `kubectl get nodes -o yaml` prints
them (an e2 default pool beside a g2-standard-8 pool with one L4 a node, labelled and tainted as GKE does), an
inventory folder holding them, and the vLLM Deployment that selects them.

Standard nodes are named gke-<cluster>-<pool>-..., Autopilot's gk3-<cluster>-<pool>-...: ``prefix`` picks one."""

from __future__ import annotations

import json
from pathlib import Path

_DEFAULT_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {prefix}-ml-default-pool-8f2c1d3e-k9wz
    labels:
      cloud.google.com/gke-nodepool: default-pool
      cloud.google.com/gke-os-distribution: cos
      cloud.google.com/machine-family: e2
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: {prefix}-ml-default-pool-8f2c1d3e-k9wz
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: e2-standard-4
      topology.kubernetes.io/zone: us-central1-a
  status:
    capacity: {{cpu: "4", memory: 16374524Ki, pods: "110"}}
    allocatable: {{cpu: 3920m, memory: 13207804Ki, pods: "110"}}
"""
_L4_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {prefix}-ml-{pool}-5b7e9a21-tq4m
    labels:
      cloud.google.com/gke-accelerator: nvidia-l4
      cloud.google.com/gke-boot-disk: pd-balanced
      cloud.google.com/gke-gpu: "true"
      cloud.google.com/gke-nodepool: {pool}
      cloud.google.com/machine-family: g2
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: {prefix}-ml-{pool}-5b7e9a21-tq4m
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: g2-standard-8
      topology.kubernetes.io/zone: us-central1-a
  spec:
    taints:
    - {{key: nvidia.com/gpu, value: present, effect: NoSchedule}}
  status:
    capacity: {{cpu: "8", memory: 32880372Ki, nvidia.com/gpu: "1", pods: "110"}}
    allocatable: {{cpu: 7910m, memory: 29004532Ki, nvidia.com/gpu: "1", pods: "110"}}
"""


def default_node(prefix: str = "gke") -> str:
    """The e2-standard-4 node of the cluster's default pool, as an item of a List."""
    return _DEFAULT_NODE.format(prefix=prefix)


def l4_node(prefix: str = "gke", pool: str = "l4-pool") -> str:
    """A g2-standard-8 node of ``pool`` with one L4, as an item of a List."""
    return _L4_NODE.format(prefix=prefix, pool=pool)


def node_list(*items: str) -> str:
    """`kubectl get nodes -o yaml` of ``items`` (default_node, l4_node)."""
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(items)


NODES = node_list(default_node(), l4_node())


def inventory(folder: Path, nodes: str = NODES, *objects: dict, described: dict | None = None) -> str:
    """An inventory folder: the nodes, ``objects`` (ComputeClasses, Namespaces) as one List, and ``described``
    as `gcloud container clusters describe --format json` prints the cluster."""
    folder.mkdir(parents=True)
    (folder / "nodes.yaml").write_text(nodes)
    if objects:
        (folder / "objects.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    if described is not None:
        (folder / "cluster.json").write_text(json.dumps(described))
    return str(folder)


_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-l4, namespace: %s}
spec:
  replicas: 1
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      nodeSelector: {%s}
      %s
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.4
        resources:
          limits: {nvidia.com/gpu: "%d"}
"""


def deployment(selector: str = "", gpus: int = 1, *, namespace: str = "inference", tolerations: str = "") -> str:
    """vLLM serving on ``gpus`` GPUs; ``selector`` is its nodeSelector's text (`key: value`), ``tolerations`` a
    line of the pod spec."""
    return _DEPLOYMENT % (namespace, selector, tolerations, gpus)


def placement(found: list[dict]) -> dict[str, dict]:
    """The findings of the two rules that place a pod on nodes, by rule."""
    return {f["rule"]: f for f in found if f["rule"] in ("over-tight-affinity", "gpu-unschedulable")}
