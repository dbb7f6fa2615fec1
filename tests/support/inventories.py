"""An inventory's GPU node and the three commands that read an inventory (`inventory`, `check`, `explain`):
the inventory size and value tests ask each the same."""

from __future__ import annotations

from pathlib import Path

# Two CPU nodes and one tainted GPU node, each with its hostname label: the cluster of the required pod affinity
# trees (a GPU pod that follows a helper or a node-local cache; loft-sh/devpod-provider-kubernetes#63).
TWO_CPU_ONE_GPU = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: cpu-1, labels: {kubernetes.io/hostname: cpu-1}}, status: {allocatable: {cpu: "8", memory: 31Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: cpu-2, labels: {kubernetes.io/hostname: cpu-2}}, status: {allocatable: {cpu: "8", memory: 31Gi, pods: "110"}}}
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-1, labels: {kubernetes.io/hostname: gpu-1}}
  spec: {taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
  status: {allocatable: {cpu: "16", memory: 62Gi, pods: "110", nvidia.com/gpu: "1"}}
"""

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1", "nvidia.com/gpu.present": "true"}},
    "status": {
        "capacity": {"cpu": "96", "memory": "1024Gi", "pods": "110", "nvidia.com/gpu": "8"},
        "allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "8"},
    },
}


def inventory_commands(inventory: Path, manifests: Path) -> dict[str, list[str]]:
    return {
        "inventory": ["inventory", "--inventory", str(inventory), "--format", "json"],
        "check": ["check", str(manifests), "--inventory", str(inventory), "--format", "json"],
        "explain": ["explain", str(manifests), "--inventory", str(inventory), "--format", "json"],
    }
