"""What Cluster Autoscaler's GCE template gives a new node of a GKE pool whose machine type's size is known.

The template (kubernetes/autoscaler cluster-autoscaler-1.36.1 cloudprovider/gce/templates.go BuildCapacity,
CalculateAllocatable) takes the machine type's vCPUs, and its memory less what the kernel reserves
(gce_reserved.go CalculateKernelReserved); allocatable subtracts the kube-reserved the node pool's kube-env
states and the memory eviction threshold (100Mi unless the kube-env says otherwise). GKE writes kube-reserved by
its published formula (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes). A machine type's size
is known from its name only for a custom type (machine_types.go NewCustomMachineType: "<family>-custom-<vCPUs>-
<MiB>", "custom-..." for N1); a predefined type's from the shipped catalog's row, where a source states them
(catalog/gcp.yaml: the Compute Engine API's machine-types list); other types stay unjudged.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

MIB = 2**20
GIB = 2**30

# GKE kube-reserved: (tier size, share of it reserved), in order; the last tier takes the rest.
_MEMORY_TIERS = ((4 * GIB, Fraction(25, 100)), (4 * GIB, Fraction(20, 100)), (8 * GIB, Fraction(10, 100)),
                 (112 * GIB, Fraction(6, 100)), (None, Fraction(2, 100)))  # fmt: skip
_SMALL_MACHINE = (GIB, 255 * MIB)  # below 1GiB of memory: 255MiB
_CPU_TIERS = ((1, Fraction(6, 100)), (1, Fraction(1, 100)), (2, Fraction(5, 1000)), (None, Fraction(25, 10000)))
EVICTION_HARD_MEMORY = 100 * MIB  # gce_reserved.go defaultKubeletEvictionHardMemory; GKE's memory.available too
# The GKE image types whose kernel reservation the template estimates as above (templates.go
# extractOperatingSystemDistributionFromImageType); "" is GKE's default, COS_CONTAINERD
LINUX_IMAGES = frozenset({"", "COS", "COS_CONTAINERD", "UBUNTU", "UBUNTU_CONTAINERD"})
# The shipped GCP rows' memory is gcloud's MEMORY_GB: the API's memoryMb in GiB to two decimals, so up to 0.01GiB
# (10.24MiB) may be missing from it; the template takes the most it can be (a figure too high only ever silences).
GCLOUD_MEMORY_SLACK = 11 * MIB
_DIGITS = 7  # the largest custom type is far below 10^7 vCPUs or MiB: longer is no machine type
_E2_SHARED_CORE = {"micro", "small", "medium"}  # e2-custom-micro-*: 2 guest CPUs (parseCustomCpu)


@dataclass(frozen=True)
class MachineSize:
    cpu: int
    memory: int  # bytes
    maybe_arm: bool = False  # its architecture is not stated (a predefined type may be Arm: A4X, C4A, T2A)


def custom_machine(name: str) -> MachineSize | None:
    """The size a custom machine type's name states (None: not a custom type, or not parseable)."""
    parts = name.split("-")
    if len(parts) < 2 or "custom" not in (parts[0], parts[1]):
        return None
    at = parts.index("custom")
    if at + 2 >= len(parts):
        return None
    family = "n1" if parts[0] == "custom" else parts[0]
    cpu_part, memory_part = parts[at + 1], parts[at + 2]
    if family == "e2" and cpu_part in _E2_SHARED_CORE:
        cpu_part = "2"
    if not all(part.isascii() and part.isdigit() and len(part) <= _DIGITS for part in (cpu_part, memory_part)):
        return None
    size = MachineSize(int(cpu_part), int(memory_part) * MIB)
    return size if size.cpu and size.memory else None  # Compute Engine has no such type


_ARM_OFFSET = Fraction(9971, 10000)  # gce_reserved.go architectureOffsetRatio (COS on Arm64)


def kernel_reserved(memory: int, maybe_arm: bool = False) -> int:
    """Linux's reservation as the template estimates it for Container-Optimized OS on amd64, the smallest of its
    Linux estimates (Ubuntu adds 4MiB), so that the template's figure is never understated; ``maybe_arm``: on
    Arm64 if the machine may be Arm, whose estimate is smaller still."""
    reserved = memory // 64 + 16 * MIB
    if memory > 3 * GIB:
        reserved += 64 * MIB  # software IO TLB
    if memory <= 8 * GIB:
        reserved += 8 * MIB
    reserved += int(min(Fraction(175, 100000) * memory, Fraction(248 * MIB)))
    return int(reserved * _ARM_OFFSET) if maybe_arm else reserved  # rounded down: Go rounds, 1 byte at most


def _tiered(total: Fraction, tiers: tuple[tuple[int | None, Fraction], ...]) -> Fraction:
    reserved, left = Fraction(0), total
    for size, share in tiers:
        part = left if size is None else min(left, Fraction(size))
        reserved += part * share
        left -= part
        if left <= 0:
            break
    return reserved


def kube_reserved_memory(memory: int) -> int:
    """In whole MiB, rounded down: a kube-env states it so, and a figure too low only ever silences."""
    if memory < _SMALL_MACHINE[0]:
        return _SMALL_MACHINE[1]
    return int(_tiered(Fraction(memory), _MEMORY_TIERS) // MIB) * MIB


def kube_reserved_cpu(cpu: int) -> Fraction:
    """In whole millicores, rounded down."""
    return Fraction(int(_tiered(Fraction(cpu), _CPU_TIERS) * 1000), 1000)


def template_capacity(size: MachineSize) -> int:
    """The memory capacity of the autoscaler's template for a Linux node of this size."""
    return size.memory - kernel_reserved(size.memory, size.maybe_arm)


def template_allocatable(size: MachineSize) -> dict[str, Fraction]:
    """The cpu and memory allocatable of the autoscaler's template for a Linux GKE node of this size."""
    return {
        "cpu": size.cpu - kube_reserved_cpu(size.cpu),
        "memory": Fraction(template_capacity(size) - kube_reserved_memory(size.memory) - EVICTION_HARD_MEMORY),
    }
