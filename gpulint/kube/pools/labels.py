"""Labels that say a node belongs to a pool that an autoscaler or a cloud grows and shrinks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# label key -> the pool system that sets it on every node it creates
POOL_LABELS: dict[str, str] = {
    "karpenter.sh/nodepool": "Karpenter NodePool",  # karpenter.sh/v1 (kubernetes-sigs/karpenter apis/v1/labels.go)
    "karpenter.sh/provisioner-name": "Karpenter Provisioner",  # v1alpha5, before NodePools
    "cloud.google.com/gke-nodepool": "GKE node pool",
    "eks.amazonaws.com/nodegroup": "EKS managed node group",
    "alpha.eksctl.io/nodegroup-name": "eksctl node group",
    "kubernetes.azure.com/agentpool": "AKS node pool",
    "agentpool": "AKS node pool",
}


def pool_of(labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(system, pool name) of a node that an autoscaled or managed pool created, if its labels say so."""
    for key, system in POOL_LABELS.items():
        value = labels.get(key)
        if value:
            return system, value
    return None


def any_pooled(nodes_labels: Iterable[Mapping[str, str]]) -> bool:
    return any(pool_of(labels) is not None for labels in nodes_labels)
