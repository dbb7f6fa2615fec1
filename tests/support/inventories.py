"""An inventory's GPU node and the three commands that read an inventory (`inventory`, `check`, `explain`):
the inventory size and value tests ask each the same."""

from __future__ import annotations

from pathlib import Path

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
