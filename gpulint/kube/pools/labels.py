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
# Labels only one system's managed node groups set, beside the pool's name (an EKS managed node group: its capacity
# type and AMI, aws/amazon-eks-ami and the EKS docs "Managed node groups"; Karpenter writes karpenter.sh/capacity-type
# instead). A selector on one asks for such a node group, which Karpenter's NodePools cannot make.
GROUP_ONLY_LABELS: dict[str, str] = {
    "eks.amazonaws.com/capacityType": "EKS managed node group",
    "eks.amazonaws.com/nodegroup-image": "EKS managed node group",
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


ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# Deprecated node labels and their stable twins (k8s.io/api core/v1 well_known_labels.go). Every node
# carries both, with one value; Karpenter reads the deprecated ones as the stable ones:
# kubernetes-sigs/karpenter pkg/apis/v1/labels.go NormalizedLabels (v1.14, this very table), applied to
# the pod's and the NodePool's requirements alike (pkg/scheduling/requirement.go NewRequirementWithFlexibility).
DEPRECATED_LABELS: dict[str, str] = {
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": REGION,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
}
# What a Karpenter cloud provider adds to that table: karpenter-provider-aws pkg/cloudprovider (init:
# topology.ebs.csi.aws.com/zone), karpenter-provider-azure pkg/operator (topology.disk.csi.azure.com/zone).
PROVIDER_NORMALIZED: dict[str, dict[str, str]] = {
    "aws": {"topology.ebs.csi.aws.com/zone": ZONE},
    "azure": {"topology.disk.csi.azure.com/zone": ZONE},
}


def karpenter_key(key: str, provider: str) -> str:
    """The label key Karpenter matches a requirement on ``key`` as."""
    return DEPRECATED_LABELS.get(key) or PROVIDER_NORMALIZED.get(provider, {}).get(key) or key


def node_key(key: str) -> str:
    """The stable label a node carries with the same value as a deprecated one: the kubelet sets the
    instance-type and zone labels in both forms, and the node lifecycle controller keeps the beta os and
    arch labels equal to the stable ones (kubernetes pkg/controller/nodelifecycle labelReconcileInfo)."""
    return DEPRECATED_LABELS.get(key, key)


# EKS Auto Mode: a Karpenter NodePool whose nodeClassRef group is eks.amazonaws.com launches the EC2 types of
# Karpenter's AWS provider, but "EKS Auto Mode uses different labels than Karpenter. Labels related to EC2
# managed instances start with eks.amazonaws.com" (eks.amazonaws.com/instance-family, -gpu-name, -gpu-memory,
# ... with Karpenter's values), and it marks its nodes eks.amazonaws.com/compute-type=auto
# (awsdocs/amazon-eks-user-guide latest/ug/automode/create-node-pool.adoc, "EKS Auto Mode Supported Labels").
EKS_AUTO_GROUP = "eks.amazonaws.com"
EKS_AUTO_NODE_LABELS: dict[str, str] = {"eks.amazonaws.com/compute-type": "auto"}
_KARPENTER_AWS_INSTANCE = "karpenter.k8s.aws/instance-"
EKS_AUTO_INSTANCE = "eks.amazonaws.com/instance-"


def eks_auto_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels an EKS Auto Mode node of a catalog type carries: Karpenter's instance labels renamed."""
    return {
        EKS_AUTO_INSTANCE + key.removeprefix(_KARPENTER_AWS_INSTANCE)
        if key.startswith(_KARPENTER_AWS_INSTANCE)
        else key: value
        for key, value in labels.items()
    }
