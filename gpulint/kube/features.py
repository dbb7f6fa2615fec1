"""Feature gates as Kubernetes versions them, and the set a target cluster runs with.

The table is kubernetes/kubernetes ``pkg/features/kube_features.go``
(``defaultVersionedKubernetesFeatureGates``) for the gates that change what gpulint models:
each gate's stage and default from the release it changed in (checked against the 1.37 file,
whose versioned specs keep every gate's history since its alpha). A cluster's gates are the
defaults of its version with the ``--feature-gates`` it states on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

# gate -> ((since "major.minor", stage, on by default), ...), oldest first
GATES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "DRAAdminAccess": (("1.32", "alpha", False), ("1.34", "beta", True), ("1.36", "GA", True)),
    "DRAConsumableCapacity": (("1.34", "alpha", False), ("1.36", "beta", True)),
    "DRADeviceBindingConditions": (("1.34", "alpha", False), ("1.36", "beta", True)),
    # on by default only where the cluster's minimum compatibility version is 1.37 (the 1.37 API server's is 1.36)
    "DRAFractionalCapacityRange": (("1.37", "beta", False),),
    "DRAResourceClaimDeviceStatus": (("1.32", "alpha", False), ("1.33", "beta", True), ("1.37", "GA", True)),
    "DRADeviceTaints": (("1.33", "alpha", False), ("1.36", "beta", True), ("1.37", "GA", True)),
    "DRADeviceTaintRules": (("1.35", "alpha", False), ("1.36", "beta", False), ("1.37", "GA", True)),
    "DRAExtendedResource": (("1.34", "alpha", False), ("1.36", "beta", True), ("1.37", "GA", True)),
    "DRAListTypeAttributes": (("1.36", "alpha", False),),
    "DRAPartitionableDevices": (("1.33", "alpha", False), ("1.36", "beta", True)),
    "DRAPrioritizedList": (("1.33", "alpha", False), ("1.34", "beta", True), ("1.36", "GA", True)),
    "DRAWorkloadResourceClaims": (("1.36", "alpha", False), ("1.37", "beta", False)),
    "DynamicResourceAllocation": (("1.26", "alpha", False), ("1.32", "beta", False), ("1.34", "GA", True)),
    "TaintTolerationComparisonOperators": (("1.35", "alpha", False),),
    "PodLevelResources": (("1.32", "alpha", False), ("1.34", "beta", True)),
    "GenericWorkload": (("1.35", "alpha", False), ("1.37", "beta", False)),
    "TopologyAwareWorkloadScheduling": (("1.36", "alpha", False),),
    "CompositePodGroup": (("1.37", "alpha", False),),
    "PodGroupPreemptionPolicy": (("1.37", "alpha", False),),
    "WorkloadWithJob": (("1.37", "alpha", False),),
}


def _minor(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


@cache  # bounded: the table's gates times the versions a process is asked about
def stage(gate: str, version: str) -> tuple[str, bool]:
    """(stage, on by default) of ``gate`` in Kubernetes ``version`` ("unavailable", False before it exists)."""
    found = ("unavailable", False)
    for since, name, default in GATES.get(gate, ()):
        if _minor(since) <= _minor(version):
            found = (name, default)
    return found


@dataclass(frozen=True)
class FeatureGates:
    """The gates of one target cluster: its version's defaults, then the stated ones."""

    version: str = "1.37"
    stated: tuple[tuple[str, bool], ...] = ()  # from --feature-gates / feature-gates:, in order

    @classmethod
    def of(cls, version: str, stated: dict[str, bool] | None) -> FeatureGates:
        return cls(version, tuple(sorted((stated or {}).items())))

    def enabled(self, gate: str) -> bool:
        for name, value in self.stated:
            if name == gate:
                return value
        return stage(gate, self.version)[1]

    def is_stated(self, gate: str) -> bool:
        """Whether --feature-gates names ``gate`` (else it has its version's default)."""
        return any(name == gate for name, _ in self.stated)

    def why_off(self, gate: str) -> str:
        """How a disabled gate came to be off, for messages."""
        if any(name == gate for name, _ in self.stated):
            return f"{gate} is disabled in --feature-gates"
        name, _ = stage(gate, self.version)
        if name == "unavailable":
            return f"Kubernetes {self.version} has no {gate} feature"
        return f"{gate} is {name} and off by default in Kubernetes {self.version}"


DEFAULT = FeatureGates()
