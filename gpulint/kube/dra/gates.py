"""The feature gates that change what the structured allocator does (structured/internal/types.go Features).

With a gate off the API server drops the gated fields from new objects, and the allocator ignores
them in stored ones: ``DRAAdminAccess`` (adminAccess requests), ``DRAConsumableCapacity`` (capacity
requests, allowMultipleAllocations), ``DRADeviceTaints`` (device taints and request tolerations),
``DRAPartitionableDevices`` (shared counters, consumesCounters, perDeviceNodeSelection),
``DRAPrioritizedList`` (firstAvailable), ``DRAExtendedResource`` (DeviceClass extendedResourceName),
``DRADeviceBindingConditions`` with ``DRAResourceClaimDeviceStatus`` (the allocator's DeviceBindingAndStatus:
devices with bindingConditions; with either off the allocator never selects them).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulint.kube.features import FeatureGates


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
    def of(cls, gates: FeatureGates) -> DraFeatures:
        return cls(
            admin_access=gates.enabled("DRAAdminAccess"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            device_taints=gates.enabled("DRADeviceTaints"),
            partitionable_devices=gates.enabled("DRAPartitionableDevices"),
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            extended_resource=gates.enabled("DRAExtendedResource"),
            binding_conditions=gates.enabled("DRADeviceBindingConditions")
            and gates.enabled("DRAResourceClaimDeviceStatus"),
        )


ALL_ON = DraFeatures()
