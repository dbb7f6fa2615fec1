"""The feature gates that change what the structured allocator does (structured/internal/types.go Features).

With a gate off the API server drops the gated fields from new objects, and the allocator ignores
them in stored ones: ``DRAAdminAccess`` (adminAccess requests), ``DRAConsumableCapacity`` (capacity
requests, allowMultipleAllocations), ``DRADeviceTaints`` (device taints and request tolerations),
``DRAPartitionableDevices`` (shared counters, consumesCounters, perDeviceNodeSelection),
``DRAPrioritizedList`` (firstAvailable), ``DRAExtendedResource`` (DeviceClass extendedResourceName),
``DRADeviceBindingConditions`` with ``DRAResourceClaimDeviceStatus`` (the allocator's DeviceBindingAndStatus:
devices with bindingConditions; with either off the allocator never selects them).

A stored object is evidence too: while a gate is off the API server drops its fields from new
ResourceSlices (resourceslice/strategy.go dropDisabledFields), so an inventory slice that carries them
was written with the gate on. A gate that is off only because it is off by default in the target
version (not stated in --feature-gates) is taken as on when the inventory's slices use its fields:
else such a cluster - an alpha gate turned on without gpulint being told - would get "can never be
allocated" for devices it does allocate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import sequence

# The slice fields the gates guard, as dropDisabledFields drops them: (gates, where, fields). Binding
# conditions are kept only with the status feature they report through on as well.
BINDING_GATES = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
SLICE_FIELDS: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = (
    (("DRAPartitionableDevices",), "spec", ("sharedCounters", "perDeviceNodeSelection")),
    (("DRAPartitionableDevices",), "device", ("consumesCounters", "nodeName", "nodeSelector", "allNodes")),
    (("DRADeviceTaints",), "device", ("taints",)),
    (("DRAConsumableCapacity",), "device", ("allowMultipleAllocations",)),
    (BINDING_GATES, "device", ("bindingConditions", "bindingFailureConditions", "bindsToNode")),
)


def gates_in_use(slice_specs: Iterable[Any]) -> frozenset[str]:
    """The gates whose fields stored ResourceSlices carry (so the API server had them on)."""
    found: set[str] = set()
    for spec in slice_specs:
        if not isinstance(spec, dict):
            continue
        devices = [device for device in sequence(spec.get("devices")) if isinstance(device, dict)]
        for gates, where, fields in SLICE_FIELDS:
            holders = [spec] if where == "spec" else devices
            if any(holder.get(name) not in (None, [], {}, False) for holder in holders for name in fields):
                found.update(gates)
    return frozenset(found)


@dataclass(frozen=True)
class DraFeatures:
    admin_access: bool = True
    consumable_capacity: bool = True
    device_taints: bool = True
    partitionable_devices: bool = True
    prioritized_list: bool = True
    extended_resource: bool = True
    binding_conditions: bool = True

    @classmethod
    def of(cls, gates: FeatureGates, in_use: frozenset[str] = frozenset()) -> DraFeatures:
        """The gates as stated or defaulted; ``in_use`` (gates_in_use of the inventory's slices) turns on
        a gate that is off only by default."""

        def on(gate: str) -> bool:
            return gates.enabled(gate) or (gate in in_use and not gates.is_stated(gate))

        return cls(
            admin_access=on("DRAAdminAccess"),
            consumable_capacity=on("DRAConsumableCapacity"),
            device_taints=on("DRADeviceTaints"),
            partitionable_devices=on("DRAPartitionableDevices"),
            prioritized_list=on("DRAPrioritizedList"),
            extended_resource=on("DRAExtendedResource"),
            binding_conditions=all(on(gate) for gate in BINDING_GATES),
        )


ALL_ON = DraFeatures()
