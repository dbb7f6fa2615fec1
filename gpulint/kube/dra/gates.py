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

from gpulint.kube.features import FeatureGates, stage
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
    device_taint_rules: bool = True  # the ResourceSlice tracker applies DeviceTaintRules (and DeviceTaints must be on)
    partitionable_devices: bool = True
    prioritized_list: bool = True
    extended_resource: bool = True
    binding_conditions: bool = True
    fractional_capacity_range: bool = True  # exact step arithmetic for ranges of milli values

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
            device_taint_rules=on("DRADeviceTaintRules"),
            partitionable_devices=on("DRAPartitionableDevices"),
            prioritized_list=on("DRAPrioritizedList"),
            extended_resource=on("DRAExtendedResource"),
            binding_conditions=all(on(gate) for gate in BINDING_GATES),
            fractional_capacity_range=on("DRAFractionalCapacityRange"),
        )


ALL_ON = DraFeatures()


# What PrepareForCreate drops from a new object while a gate is off, beyond SLICE_FIELDS
# (pkg/registry/resource/resourceslice/strategy.go dropDisabledFields, pkg/api/resourceclaimspec/util.go
# DropDisabledFields, deviceclass/strategy.go; 1.37): a device's list attributes, a capacity's requestPolicy,
# a claim's capacity requests, tolerations, firstAvailable, adminAccess and distinctAttribute constraints, a
# class's extendedResourceName.
LIST_ATTRIBUTES = ("bools", "ints", "strings", "versions")
REQUEST_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("DRAConsumableCapacity", ("capacity",)),
    ("DRADeviceTaints", ("tolerations",)),
)


def _without(holder: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    return {key: value for key, value in holder.items() if key not in names}


def _slice_device(device: Any, gates: FeatureGates) -> Any:
    if not isinstance(device, dict):
        return device
    basic = device.get("basic")
    if isinstance(basic, dict):  # v1beta1: the fields under `basic`
        return {**device, "basic": _slice_device(basic, gates)}
    dropped = [
        name
        for needs, where, fields in SLICE_FIELDS
        if where == "device" and not all(gates.enabled(gate) for gate in needs)
        for name in fields
    ]
    out = _without(device, dropped)
    if not gates.enabled("DRAListTypeAttributes") and isinstance(out.get("attributes"), dict):
        out["attributes"] = {
            name: _without(value, LIST_ATTRIBUTES) if isinstance(value, dict) else value
            for name, value in out["attributes"].items()
        }
    if not gates.enabled("DRAConsumableCapacity") and isinstance(out.get("capacity"), dict):
        out["capacity"] = {
            name: _without(value, ("requestPolicy",)) if isinstance(value, dict) else value
            for name, value in out["capacity"].items()
        }
    return out


def _slice_spec(spec: dict[str, Any], gates: FeatureGates) -> dict[str, Any]:
    dropped = [
        name
        for needs, where, fields in SLICE_FIELDS
        if where == "spec" and not all(gates.enabled(gate) for gate in needs)
        for name in fields
    ]
    out = _without(spec, dropped)
    if isinstance(out.get("devices"), list):
        out["devices"] = [_slice_device(device, gates) for device in out["devices"]]
    return out


def _request(request: Any, gates: FeatureGates, flat: bool) -> Any:
    if not isinstance(request, dict):
        return request
    dropped = tuple(name for gate, names in REQUEST_FIELDS if not gates.enabled(gate) for name in names)
    exact_dropped = dropped + (() if gates.enabled("DRAAdminAccess") else ("adminAccess",))
    out = dict(request)
    if not gates.enabled("DRAPrioritizedList"):
        out.pop("firstAvailable", None)
    if flat:
        out = _without(out, exact_dropped)
    elif isinstance(out.get("exactly"), dict):
        out["exactly"] = _without(out["exactly"], exact_dropped)
    if isinstance(out.get("firstAvailable"), list):
        out["firstAvailable"] = [_without(s, dropped) if isinstance(s, dict) else s for s in out["firstAvailable"]]
    return out


def _claim_spec(spec: dict[str, Any], gates: FeatureGates, flat: bool) -> dict[str, Any]:
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return spec
    devices = dict(devices)
    if isinstance(devices.get("requests"), list):
        devices["requests"] = [_request(r, gates, flat) for r in devices["requests"]]
    if not gates.enabled("DRAConsumableCapacity") and isinstance(devices.get("constraints"), list):
        devices["constraints"] = [
            _without(c, ("distinctAttribute",)) if isinstance(c, dict) else c for c in devices["constraints"]
        ]
    return {**spec, "devices": devices}


def prepared_for_create(kind: str, api_version: str, data: dict[str, Any], gates: FeatureGates) -> dict[str, Any]:
    """A new resource.k8s.io object as the API server validates it: without the fields of disabled gates (the
    registry strategies' PrepareForCreate). Other objects, and objects without a spec to drop from, as they are."""
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return data
    flat = api_version.endswith("/v1beta1")
    if kind == "ResourceSlice":
        return {**data, "spec": _slice_spec(spec, gates)}
    if kind == "ResourceClaim":
        return {**data, "spec": _claim_spec(spec, gates, flat)}
    if kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        return {**data, "spec": {**spec, "spec": _claim_spec(spec["spec"], gates, flat)}}
    if kind == "DeviceClass" and not gates.enabled("DRAExtendedResource"):
        return {**data, "spec": _without(spec, ("extendedResourceName",))}
    return data


# The gates whose fields prepared_for_create drops.
DROPPING_GATES = (
    "DRAAdminAccess",
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRADeviceTaints",
    "DRAExtendedResource",
    "DRAListTypeAttributes",
    "DRAPartitionableDevices",
    "DRAPrioritizedList",
    "DRAResourceClaimDeviceStatus",
)


def gate_extremes(gates: FeatureGates) -> tuple[FeatureGates, ...]:
    """The clusters an object may be created in: ``gates`` itself, or where dropping gates off by default (alpha,
    or beta and off) are not stated, those gates all on and all off: a cluster often turns such a gate on without
    gpulint being told (as DraFeatures.of reads), and an error is the API server's only if both find it. A gate on
    by default is taken as on, as everywhere else."""
    unstated = [
        gate
        for gate in DROPPING_GATES
        if not gates.is_stated(gate) and stage(gate, gates.version) in (("alpha", False), ("beta", False))
    ]
    if not unstated:
        return (gates,)
    stated = dict(gates.stated)
    return tuple(FeatureGates.of(gates.version, {**stated, **dict.fromkeys(unstated, on)}) for on in (True, False))


def _present(data: Any, path: tuple[Any, ...]) -> bool:
    for step in path:
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return False
    return True


def dropped_on_create(
    kind: str, api_version: str, data: dict[str, Any], path: tuple[Any, ...], gates: FeatureGates
) -> bool:
    """Whether the field at ``path`` (or one holding it) is gone once PrepareForCreate dropped the fields of
    disabled gates, in any cluster gate_extremes allows: what lies there is never validated."""
    return _present(data, path) and any(
        not _present(prepared_for_create(kind, api_version, data, each), path) for each in gate_extremes(gates)
    )
