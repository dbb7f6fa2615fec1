"""What an NVIDIA GPU resource means on a node: a whole GPU, a time-sliced or MPS replica, or a MIG slice.

Read from the labels GPU feature discovery writes (NVIDIA/k8s-device-plugin internal/lm/resource.go):
``<resource>.replicas`` (0: sharing off, else the replicas per GPU), ``<resource>.sharing-strategy``
(none, time-slicing, mps), ``<resource>.product`` (``-SHARED`` appended when replicas > 1 and the
resource keeps its name; ``-MIG-<profile>`` under the single MIG strategy, where
``nvidia.com/gpu`` is a MIG slice) and ``<resource>.count`` (the devices behind the resource).
A resource renamed by ``renameByDefault`` (``nvidia.com/gpu.shared``) is labelled under its
original name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from gpulint.kube.scheduler import NodeInfo

NVIDIA_GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"  # the device plugin's mixed MIG strategy: one resource per MIG profile
SHARED_SUFFIX = ".shared"
NONE, TIME_SLICING, MPS = "none", "time-slicing", "mps"


@dataclass(frozen=True)
class NodeResource:
    """One NVIDIA resource on one node."""

    resource: str
    advertised: int  # allocatable
    replicas: int  # per physical device (1: not shared)
    strategy: str  # none, time-slicing or mps
    mig_slice: bool  # each unit is a MIG slice, not a whole GPU
    product: str

    @property
    def shared(self) -> bool:
        return self.replicas > 1 or self.strategy != NONE

    @property
    def devices(self) -> int | None:
        """Physical devices (GPUs or MIG slices) behind the advertised units (None: not known)."""
        if self.replicas > 1:
            return self.advertised // self.replicas
        return None if self.shared else self.advertised

    def describe(self) -> str:
        unit = f"a MIG slice ({self.product})" if self.mig_slice else "a whole GPU"
        if not self.shared:
            return unit
        how = "an MPS share" if self.strategy == MPS else "a time-sliced replica"
        per = f", {self.replicas} per device" if self.replicas > 1 else ""
        return f"{how} of {unit}{per}"


def _label_base(resource: str) -> str:
    return resource.removesuffix(SHARED_SUFFIX)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def node_resource(node: NodeInfo, resource: str) -> NodeResource | None:
    """What ``resource`` is on ``node`` (None: the node does not advertise it, or it is not an NVIDIA resource)."""
    if not (resource == NVIDIA_GPU or resource.startswith(("nvidia.com/gpu.", "nvidia.com/mig-"))):
        return None
    amount = node.allocatable.get(resource, Fraction(0))
    if amount <= 0:
        return None
    base = _label_base(resource)
    labels = node.labels
    product = labels.get(f"{base}.product", "")
    replicas = _int(labels.get(f"{base}.replicas")) or 1
    strategy = labels.get(f"{base}.sharing-strategy", NONE)
    if strategy not in (TIME_SLICING, MPS):
        strategy = NONE
    shared_name = product.endswith("-SHARED") or resource.endswith(SHARED_SUFFIX)
    if strategy == NONE and (replicas > 1 or shared_name):
        strategy = TIME_SLICING  # older GFD releases wrote no sharing-strategy label
    mig_slice = resource.startswith("nvidia.com/mig-") or "-MIG-" in product
    return NodeResource(resource, int(amount), replicas, strategy, mig_slice, product)


@dataclass
class GpuBreakdown:
    """NVIDIA GPUs of a cluster counted as what they are, not as the sum of advertised units."""

    physical: int = 0  # whole GPUs behind nvidia.com/gpu (where known)
    physical_unknown_nodes: int = 0  # shared nodes without a replicas label: the GPUs behind them are not known
    whole: int = 0  # nvidia.com/gpu units that are whole GPUs
    replicas: Counter[str] = field(default_factory=Counter)  # strategy -> shared units
    replicated_gpus: Counter[str] = field(default_factory=Counter)  # strategy -> physical devices behind them
    mig: Counter[str] = field(default_factory=Counter)  # resource -> MIG slices (single strategy: the product)
    nodes: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "physicalGpus": self.physical,
            "nodesWithUnknownPhysicalCount": self.physical_unknown_nodes,
            "wholeGpus": self.whole,
            "sharedUnits": dict(self.replicas),
            "sharedPhysicalDevices": dict(self.replicated_gpus),
            "migSlices": dict(self.mig),
            "nodes": self.nodes,
        }


def breakdown(nodes: Iterable[NodeInfo]) -> GpuBreakdown:
    out = GpuBreakdown()
    for node in nodes:
        found = [info for name in sorted(node.allocatable) if (info := node_resource(node, name)) is not None]
        if not found:
            continue
        out.nodes += 1
        for info in found:
            devices = info.devices
            if info.shared:
                out.replicas[info.strategy] += info.advertised
                if devices is None:
                    out.physical_unknown_nodes += 1
                else:
                    out.replicated_gpus[info.strategy] += devices
            if info.mig_slice:
                key = info.resource if info.resource.startswith("nvidia.com/mig-") else info.product or info.resource
                out.mig[key] += devices if devices is not None else info.advertised
            elif not info.shared:
                out.whole += info.advertised
            if not info.mig_slice and devices is not None:
                out.physical += devices
    return out
