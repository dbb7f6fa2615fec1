"""ResourceSlice validation as the API server does it (kubernetes/kubernetes
pkg/apis/resource/validation/validation.go validateResourceSliceSpec, validateDevice,
validateCounterSet), beyond the OpenAPI schema: driver and pool names, exactly one node selection,
device names and limits, attribute and capacity names, capacity request policies, taints, shared
counters and their consumption, per-device node selection.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from gpulint.kube import names
from gpulint.kube.quantity import amount_or_none
from gpulint.kube.refs import Path
from gpulint.kube.validation import core
from gpulint.kube.validation.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    OMIT,
    REQUIRED,
    FieldError,
    not_supported,
    too_long,
    too_many,
)
from gpulint.kube.validation.resource import driver_name, qualified_name, qualified_name_errors

MAX_DEVICES = 128  # ResourceSliceMaxDevices
MAX_DEVICES_ADVANCED = 64  # ResourceSliceMaxDevicesWithAdvancedFeatures: taints, consumesCounters, list attributes
MAX_ATTRIBUTES_AND_CAPACITIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_COUNTER_SETS = 8  # ResourceSliceMaxCounterSets
MAX_COUNTERS_PER_SET = 32  # ResourceSliceMaxCountersPerCounterSet
MAX_CONSUMPTIONS = 2  # ResourceSliceMaxDeviceCounterConsumptionsPerDevice
MAX_COUNTERS_PER_CONSUMPTION = 32  # ResourceSliceMaxCountersPerDeviceCounterConsumption
MAX_TAINTS = 16  # DeviceTaintsMaxLength
MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength
MAX_ATTRIBUTE_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice (list attributes count each value)
POOL_NAME_MAX = 253  # PoolNameMaxLength
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
DEVICE_NODE_SELECTION = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set "
    "to true in the ResourceSlice spec"
)
# DeviceAttribute members: the scalars, then the lists (DRAListTypeAttributes)
ATTRIBUTE_VALUES = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")  # the union's order
UNION_MEMBERS = ", ".join(f"`{member}`" for member in ATTRIBUTE_VALUES)
_MEMBER_ORDER = {member: index for index, member in enumerate(ATTRIBUTE_VALUES)}
_LISTS = frozenset(member for member in ATTRIBUTE_VALUES if member.endswith("s"))
_SCALARS = frozenset(ATTRIBUTE_VALUES) - _LISTS
_TEXTS = frozenset({"string", "version", "strings", "versions"})
_VERSIONS = frozenset({"version", "versions"})
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"
)


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _dns_label(value: Any, path: Path) -> Iterator[FieldError]:
    if not isinstance(value, str) or not value:
        yield FieldError(path, REQUIRED)
        return
    for message in names.dns1123_label(value):
        yield FieldError(path, INVALID, value, message)


def _node_name(value: str, path: Path) -> Iterator[FieldError]:
    for message in names.dns1123_subdomain(value):
        yield FieldError(path, INVALID, value, message)


def pool_name(value: Any, path: Path) -> Iterator[FieldError]:
    """validatePoolName: required, at most 253 characters, DNS subdomains separated by slashes."""
    if not isinstance(value, str) or not value:
        yield FieldError(path, REQUIRED)
        return
    if len(value) > POOL_NAME_MAX:
        yield too_long(path, POOL_NAME_MAX)
    for part in value.split("/"):
        for message in names.dns1123_subdomain(part):
            yield FieldError(path, INVALID, part, message)


def _pool(pool: Any, path: Path) -> Iterator[FieldError]:
    pool = _map(pool)
    yield from pool_name(pool.get("name"), (*path, "name"))
    count = pool.get("resourceSliceCount", 0)  # absent or null: Go's zero value
    count = 0 if count is None else count
    if isinstance(count, int) and not isinstance(count, bool) and count <= 0:
        yield FieldError((*path, "resourceSliceCount"), INVALID, count, "must be greater than zero")
    generation = pool.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        yield FieldError((*path, "generation"), INVALID, generation, "must be greater than or equal to zero")


def _selection(holder: dict[str, Any], path: Path, per_device: bool) -> tuple[list[str], list[FieldError]]:
    """The node selection fields set on a slice (or a device), and the errors of their values."""
    chosen: list[str] = []
    errors: list[FieldError] = []
    if isinstance(holder.get("nodeName"), str):
        if holder["nodeName"]:
            chosen.append("`nodeName`")
            errors.extend(_node_name(holder["nodeName"], (*path, "nodeName")))
        else:
            detail = "must not be empty" if per_device else "must be either unset or set to a non-empty string"
            errors.append(FieldError((*path, "nodeName"), INVALID, "", detail))
    if isinstance(holder.get("nodeSelector"), dict):
        chosen.append("`nodeSelector`")
        errors.extend(core.node_selector(holder["nodeSelector"], (*path, "nodeSelector")))
        terms = _items(holder["nodeSelector"].get("nodeSelectorTerms"))
        if not per_device and len(terms) != 1:
            errors.append(
                FieldError(
                    (*path, "nodeSelector", "nodeSelectorTerms"),
                    INVALID,
                    terms,
                    "must have exactly one node selector term",
                )
            )
    fields = ("allNodes",) if per_device else ("allNodes", "perDeviceNodeSelection")
    for field in fields:
        if isinstance(holder.get(field), bool):
            if holder[field]:
                chosen.append(f"`{field}`")
            else:
                errors.append(FieldError((*path, field), INVALID, False, "must be either unset or set to true"))
    return chosen, errors


def _keyed(errors: Iterator[FieldError], position: int) -> Iterator[FieldError]:
    """Errors under a map entry: the key at ``position`` prints as [key] (field.Path.Key)."""
    for error in errors:
        yield FieldError(error.path, error.kind, error.value, error.detail, error.shown, error.keys | {position})


def _attribute(value: Any, path: Path) -> Iterator[FieldError]:
    """validateDeviceAttribute: exactly one value; strings and versions at most 64 characters, versions semver."""
    value = _map(value)
    present = [member for member in value if member in _MEMBER_ORDER and value[member] is not None]
    present.sort(key=_MEMBER_ORDER.__getitem__)
    # worded by the declarative union validation, which the API server reports for these (1.37)
    if not present:
        yield FieldError(path, INVALID, "", f"must specify one of: {UNION_MEMBERS}")
    elif len(present) > 1:
        yield FieldError(path, INVALID, "{" + ", ".join(present) + "}", f"must specify exactly one of: {UNION_MEMBERS}")
    for member in present:
        if member in _LISTS and value[member] == []:
            yield FieldError((*path, member), INVALID, [], "must not be empty if specified")
        if member not in _TEXTS:
            continue
        items = _items(value[member]) if member in _LISTS else [value[member]]
        for index, item in enumerate(items):
            if not isinstance(item, str):
                continue
            at = (*path, member, index) if member in _LISTS else (*path, member)
            if member in _VERSIONS and not _SEMVER.match(item):
                yield FieldError(at, INVALID, item, "must be a string compatible with semver.org spec 2.0.0")
            if len(item) > MAX_VALUE_LENGTH:
                yield too_long(at, MAX_VALUE_LENGTH)


def _plain_attribute(value: Any) -> bool:
    """An attribute of exactly one scalar that _attribute would accept without a word: checked without it."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((member, item),) = value.items()
    if member in ("int", "bool"):
        return item is not None
    if member == "string":
        return isinstance(item, str) and len(item) <= MAX_VALUE_LENGTH
    return member == "version" and isinstance(item, str) and len(item) <= MAX_VALUE_LENGTH and bool(_SEMVER.match(item))


def _request_policy(capacity: dict[str, Any], path: Path, shared: bool) -> Iterator[FieldError]:
    """validateSingleAllocatableDeviceCapacity / the policy's shape for a device with allowMultipleAllocations."""
    policy = capacity.get("requestPolicy")
    if policy is None:
        return
    at = (*path, "requestPolicy")
    if not shared:
        yield FieldError(at, FORBIDDEN, detail="allowMultipleAllocations must be true")
        return
    policy = _map(policy)
    if policy.get("validValues") and policy.get("validRange") is not None:
        yield FieldError(
            at,
            FORBIDDEN,
            detail='exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
        )
        return
    value = amount_or_none(capacity.get("value"))
    if policy.get("validValues"):
        if policy.get("default") is None:
            yield FieldError((*at, "default"), REQUIRED, detail="required when validValues is defined")
        elif value is not None:
            options = [amount_or_none(v) for v in _items(policy["validValues"])]
            if amount_or_none(policy["default"]) not in options:
                yield FieldError(
                    (*at, "validValues"),
                    INVALID,
                    str(policy["default"]),
                    "default value is not valid according to the requestPolicy",
                )
            for index, option in enumerate(options):
                if option is not None and option > value:
                    shown = str(_items(policy["validValues"])[index])
                    yield FieldError(
                        (*at, "validValues", index),
                        INVALID,
                        shown,
                        f"option is larger than capacity value: {capacity.get('value')}",
                    )
    elif isinstance(policy.get("validRange"), dict):
        valid_range = policy["validRange"]
        # validateRequestPolicyRange runs only with a default, and stops without a min
        if policy.get("default") is None:
            yield FieldError((*at, "default"), REQUIRED, detail="required when validRange is defined")
            return
        if valid_range.get("min") is None:
            yield FieldError((*at, "validRange", "min"), REQUIRED, detail="required when validRange is defined")
            return
        step = amount_or_none(valid_range.get("step")) if valid_range.get("step") is not None else None
        if step is not None and step <= 0:
            yield FieldError(
                (*at, "validRange", "step"), INVALID, str(valid_range["step"]), "must be greater than zero"
            )


def _capacity(value: Any, path: Path, shared: bool) -> Iterator[FieldError]:
    yield from _request_policy(_map(value), path, shared)


def _taint(taint: Any, path: Path) -> Iterator[FieldError]:
    """validateDeviceTaint: a label key, a label value, a known effect."""
    taint = _map(taint)
    key = taint.get("key") or ""  # validated when absent or null too: "name part must be non-empty"
    if isinstance(key, str):
        yield from core.label_name(key, (*path, "key"))
    value = taint.get("value")
    if isinstance(value, str):
        for message in names.label_value(value):
            yield FieldError((*path, "value"), INVALID, value, message)
    effect = taint.get("effect")
    if not effect:
        yield FieldError((*path, "effect"), REQUIRED)
    elif effect not in TAINT_EFFECTS:
        yield not_supported((*path, "effect"), effect, TAINT_EFFECTS)


def _counters(value: Any, path: Path, maximum: int) -> Iterator[FieldError]:
    counters = _map(value)
    if not counters:
        yield FieldError(path, REQUIRED)
        return
    if len(counters) > maximum:
        yield too_many(path, len(counters), maximum)
        return
    for name in counters:
        for message in names.dns1123_label(str(name)):
            yield FieldError((*path, name), INVALID, str(name), message, shown=path, at_key=True)


def _entry(at: Path, section: str, name: Any, found: Iterator[FieldError]) -> Iterator[FieldError]:
    """validateMap: the key's errors (naming the map), then the value's (naming the key as [key])."""
    where = (*at, section, name)
    for error in qualified_name(str(name), where):
        yield FieldError(error.path, error.kind, error.value, error.detail, shown=(*at, section), at_key=True)
    yield from _keyed(found, len(where) - 1)


def _unique(items: list[Any], key: str, path: Path) -> Iterator[FieldError]:
    seen: set[str] = set()
    for index, item in enumerate(items):
        found = _map(item).get(key)
        if isinstance(found, str):
            if found in seen:
                yield FieldError((*path, index), DUPLICATE, found)
            seen.add(found)


_PLAIN_DEVICE_KEYS = frozenset({"name", "attributes", "capacity"})


def _plain_device(raw: Any) -> bool:
    """A device _device accepts without a word, recognised cheaply (most of a fleet's: a name, scalar attributes,
    capacities without a request policy); anything else - taints, counters, node selection, v1beta1's
    ``basic`` - goes through _device. Only for slices without perDeviceNodeSelection."""
    if not isinstance(raw, dict) or not raw.keys() <= _PLAIN_DEVICE_KEYS or not _label_ok(raw.get("name")):
        return False
    attributes, capacity = raw.get("attributes", {}), raw.get("capacity", {})
    if not isinstance(attributes, dict) or not isinstance(capacity, dict):
        return False
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:  # (plain attributes: one value each)
        return False
    if not _names_ok(tuple(attributes), tuple(capacity)):  # the same few names on every device of a fleet
        return False
    return all(_plain_attribute(value) for value in attributes.values()) and all(
        isinstance(value, dict) and "requestPolicy" not in value for value in capacity.values()
    )


def _label_ok(name: Any) -> bool:
    return isinstance(name, str) and bool(name) and _dns_label_ok(name)


@lru_cache(maxsize=4096)
def _dns_label_ok(name: str) -> bool:
    return not names.dns1123_label(name)


@lru_cache(maxsize=1024)
def _names_ok(attributes: tuple[Any, ...], capacity: tuple[Any, ...]) -> bool:
    return all(isinstance(name, str) and not qualified_name_errors(name) for name in (*attributes, *capacity))


def _device(raw: Any, path: Path, per_device: bool) -> Iterator[FieldError]:
    raw = _map(raw)
    basic = raw.get("basic")
    body, at = (basic, (*path, "basic")) if isinstance(basic, dict) else (raw, path)
    yield from _dns_label(raw.get("name"), (*path, "name"))
    attributes, capacity = _map(body.get("attributes")), _map(body.get("capacity"))
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        yield FieldError(
            at,
            INVALID,
            total,
            f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}",
        )
    shared = body.get("allowMultipleAllocations") is True
    plain = [_plain_attribute(value) for value in attributes.values()]
    values_total = sum(1 if simple else _value_count(value) for simple, value in zip(plain, attributes.values()))
    if values_total > MAX_ATTRIBUTE_VALUES:
        yield FieldError(
            at, INVALID, values_total, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"
        )
    for simple, (name, value) in zip(plain, attributes.items()):
        if not simple or qualified_name_errors(str(name)):  # most attributes of a fleet: nothing to say
            yield from _entry(at, "attributes", name, _attribute(value, (*at, "attributes", name)))
    for name, value in capacity.items():
        policy = isinstance(value, dict) and "requestPolicy" in value
        if policy or qualified_name_errors(str(name)):
            yield from _entry(at, "capacity", name, _capacity(value, (*at, "capacity", name), shared))
    taints = _items(body.get("taints"))
    if len(taints) > MAX_TAINTS:
        yield too_many((*at, "taints"), len(taints), MAX_TAINTS)
    else:
        for index, taint in enumerate(taints):
            yield from _taint(taint, (*at, "taints", index))
    consumptions = _items(body.get("consumesCounters"))
    if len(consumptions) > MAX_CONSUMPTIONS:
        yield too_many((*at, "consumesCounters"), len(consumptions), MAX_CONSUMPTIONS)
    else:
        for index, consumption in enumerate(consumptions):
            where = (*at, "consumesCounters", index)
            yield from _dns_label(_map(consumption).get("counterSet"), (*where, "counterSet"))
            yield from _counters(_map(consumption).get("counters"), (*where, "counters"), MAX_COUNTERS_PER_CONSUMPTION)
        yield from _unique(consumptions, "counterSet", (*at, "consumesCounters"))
    yield from _binding(body, at)
    chosen, errors = _selection(body, at, True)
    if per_device:
        yield from errors
        if len(chosen) != 1:
            shown = OMIT if not chosen else "{" + ", ".join(chosen) + "}"
            yield FieldError(at, REQUIRED if not chosen else INVALID, shown, DEVICE_NODE_SELECTION)
    elif any(body.get(field) is not None for field in ("nodeName", "nodeSelector", "allNodes")):
        yield FieldError(
            at,
            INVALID,
            None,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true "
            "in the ResourceSlice spec",
        )


MAX_BINDING_CONDITIONS = 4  # BindingConditionsMaxSize, BindingFailureConditionsMaxSize


def _binding(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    """validateDeviceBindingParameters: at most 4 of each, label names, no repeats, no condition in both lists,
    and each list only with the other."""
    conditions = [c for c in _items(body.get("bindingConditions")) if isinstance(c, str)]
    failures = [c for c in _items(body.get("bindingFailureConditions")) if isinstance(c, str)]
    for name, items in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if len(items) > MAX_BINDING_CONDITIONS:
            yield too_many((*path, name), len(items), MAX_BINDING_CONDITIONS)
        else:
            for index, item in enumerate(items):
                yield from core.label_name(item, (*path, name, index))
    seen: set[str] = set()
    for index, condition in enumerate(conditions):
        if condition in seen:
            yield FieldError((*path, "bindingConditions", index), DUPLICATE, condition)
        seen.add(condition)
    failed: set[str] = set()
    for index, condition in enumerate(failures):
        if condition in failed:
            yield FieldError((*path, "bindingFailureConditions", index), DUPLICATE, condition)
        failed.add(condition)
        if condition in seen:
            yield FieldError(
                (*path, "bindingFailureConditions", index),
                INVALID,
                condition,
                "bindingFailureConditions must not overlap with bindingConditions",
            )
    if failures and not conditions:
        yield FieldError(
            (*path, "bindingConditions"), INVALID, [], "bindingConditions are required to use bindingFailureConditions"
        )
    if conditions and not failures:
        yield FieldError(
            (*path, "bindingFailureConditions"),
            INVALID,
            [],
            "bindingFailureConditions are required to use bindingConditions",
        )


def _counter_set(counter_set: Any, path: Path) -> Iterator[FieldError]:
    counter_set = _map(counter_set)
    yield from _dns_label(counter_set.get("name"), (*path, "name"))
    yield from _counters(counter_set.get("counters"), (*path, "counters"), MAX_COUNTERS_PER_SET)


def _advanced(body: dict[str, Any]) -> bool:
    """Taints, counter consumption or a list attribute: the slice holds at most 64 devices."""
    if body.get("taints") or body.get("consumesCounters"):
        return True
    return any(_has_list(v) for v in _map(body.get("attributes")).values())


def _has_list(value: Any) -> bool:
    if not isinstance(value, dict) or (len(value) == 1 and next(iter(value)) in _SCALARS):
        return False
    return any(m in _LISTS and v is not None for m, v in value.items())


def _value_count(value: Any) -> int:
    """The values an attribute holds (ResourceSliceMaxAttributeValuesPerDevice counts each of a list's)."""
    if not isinstance(value, dict):
        return 0
    count = 0
    for member, item in value.items():
        if item is not None and member in _MEMBER_ORDER:
            count += len(_items(item)) if member in _LISTS else 1
    return count


def _body(device: Any) -> dict[str, Any]:
    basic = _map(device).get("basic")
    return basic if isinstance(basic, dict) else _map(device)


def resource_slice_spec(spec: Any, path: Path) -> Iterator[FieldError]:
    """validateResourceSliceSpec (on create)."""
    if spec is None:
        spec = {}  # absent or null: the zero spec, validated as such
    if not isinstance(spec, dict):
        return
    yield from driver_name(spec.get("driver"), (*path, "driver"))
    yield from _pool(spec.get("pool"), (*path, "pool"))
    chosen, errors = _selection(spec, path, False)
    yield from errors
    if not chosen:
        yield FieldError(path, REQUIRED, detail=NODE_SELECTION)
    elif len(chosen) > 1:
        yield FieldError(path, INVALID, "{" + ", ".join(chosen) + "}", NODE_SELECTION + ", but multiple fields are set")
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        yield FieldError(path, INVALID, "", "only one of `sharedCounters` or `devices` is allowed")
    devices = _items(spec.get("devices"))
    # (up to 64 devices, whether the advanced features lower the limit does not matter)
    limited = len(devices) > MAX_DEVICES_ADVANCED and any(_advanced(_body(d)) for d in devices)
    maximum = MAX_DEVICES_ADVANCED if limited else MAX_DEVICES
    if len(devices) > maximum:
        yield too_many((*path, "devices"), len(devices), maximum)
    else:
        per_device = spec.get("perDeviceNodeSelection") is True
        for index, device in enumerate(devices):
            if per_device or not _plain_device(device):
                yield from _device(device, (*path, "devices", index), per_device)
        yield from _unique(devices, "name", (*path, "devices"))
    counter_sets = _items(spec.get("sharedCounters"))
    if len(counter_sets) > MAX_COUNTER_SETS:
        yield too_many((*path, "sharedCounters"), len(counter_sets), MAX_COUNTER_SETS)
    else:
        for index, counter_set in enumerate(counter_sets):
            yield from _counter_set(counter_set, (*path, "sharedCounters", index))
        yield from _unique(counter_sets, "name", (*path, "sharedCounters"))


def device_taint_rule_spec(spec: Any, path: Path) -> Iterator[FieldError]:
    """validateDeviceTaintRuleSpec (on create): the selector's driver, pool and device names, and the taint."""
    if not isinstance(spec, dict):
        return
    selector = spec.get("deviceSelector")
    if isinstance(selector, dict):
        at = (*path, "deviceSelector")
        if isinstance(selector.get("driver"), str):
            yield from driver_name(selector["driver"], (*at, "driver"))
        if isinstance(selector.get("pool"), str):
            yield from pool_name(selector["pool"], (*at, "pool"))
        if isinstance(selector.get("device"), str):
            yield from _dns_label(selector["device"], (*at, "device"))
    yield from _taint(spec.get("taint"), (*path, "taint"))
