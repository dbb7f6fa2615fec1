"""Dynamic Resource Allocation offline: claims, devices, and an allocator that proves a claim cannot fit.

Follows kubernetes/dynamic-resource-allocation's structured allocator: per node, the
devices published for it (node-local slices, ``nodeSelector`` slices, ``allNodes`` slices)
are filtered by the class selectors, then the request selectors; a request takes ``count``
devices (ExactCount) or every matching device (All, at least one); ``firstAvailable``
subrequests are tried in order; ``matchAttribute`` / ``distinctAttribute`` constraints hold
across the requests they name; no device serves two requests. A device that an allocated
claim holds is taken (``adminAccess`` requests may use it anyway); an All request needs
every matching device, so one that is taken, or one that breaks a constraint, fails it.
When the search would be too large the answer is "unknown", never "unsatisfiable".
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

from gpulint.kube.cel.cost import dra_within_limits
from gpulint.kube.cel.engine import CACHE_SIZE, LRU, NO_VERDICT, CelEngine, CelProblem, device_value
from gpulint.kube.dra import pools
from gpulint.kube.dra.gates import ALL_ON, DraFeatures
from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.quantity import amount_or_none
from gpulint.kube.refs import Path
from gpulint.kube.scheduler import NodeInfo, pod_requirements

# Attributes that name one device; a selector that does not mention them gives the same
# answer for devices that differ only in them, so results are shared across such devices.
UNIQUE_ATTRIBUTES = frozenset({"uuid", "parentUUID", "pciBusID", "serialNumber", "serial"})
MAX_COMBINATIONS = 2_000  # per node shape; beyond it the allocator says "unknown"
LOCALITY_ATTRIBUTES = ("resource.kubernetes.io/pcieRoot", "resource.kubernetes.io/numaNode")


# --------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class Selector:
    expression: str
    path: Path  # to the expression string, relative to the claim object


@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: the request itself (``exactly``) or one firstAvailable subrequest."""

    name: str  # "gpus" or "gpus/fast"
    class_name: str
    selectors: tuple[Selector, ...]
    all_devices: bool  # allocationMode All
    count: int
    path: Path
    class_path: Path
    admin_access: bool = False  # may use devices that other claims hold (allocator: no deviceInUse check)
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: tuple[tuple[str, Fraction], ...] = ()  # capacity.requests (DRAConsumableCapacity)


@dataclass(frozen=True)
class DeviceToleration:
    """resourceclaim.ToleratesTaint: effect (empty: all), key (empty with Exists: all), then value."""

    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: tuple[str, str, str]) -> bool:
        key, value, effect = taint
        if self.effect and self.effect != effect:
            return False
        if self.key and self.key != key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("", "Equal") and self.value == value


def device_tolerations(raw: Any) -> tuple[DeviceToleration, ...]:
    return tuple(
        DeviceToleration(
            str(t.get("key") or ""),
            str(t.get("operator") or "Equal"),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in sequence(raw)
        if isinstance(t, dict)
    )


@dataclass(frozen=True)
class Request:
    name: str
    path: Path
    alternatives: tuple[Alternative, ...]
    first_available: bool


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...]  # empty: every request of the claim
    attribute: str
    distinct: bool
    path: Path
    claim: int = 0  # which of the pod's claims it belongs to: it holds among that claim's requests only


@dataclass(frozen=True)
class ClaimSpec:
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]
    shape_problems: tuple[tuple[Path, str], ...]  # exactly/firstAvailable both or neither, count with All


def claim_spec_path(kind: str) -> Path:
    return ("spec", "spec", "devices") if kind == "ResourceClaimTemplate" else ("spec", "devices")


def claim_spec_of(data: dict[str, Any], kind: str) -> ClaimSpec:
    """The device claim of a ResourceClaim or ResourceClaimTemplate object, in its version's shape."""
    base = claim_spec_path(kind)
    return parse_claim_spec(str(data.get("apiVersion") or ""), dig(data, *base), base)


def selector_expression(selector: Any) -> Any:
    """A selector's CEL expression; a null one is the empty string Go's decoder leaves (it does not compile)."""
    cel = selector.get("cel") if isinstance(selector, dict) else None
    if isinstance(cel, dict) and "expression" in cel and cel["expression"] is None:
        return ""
    return dig(cel, "expression")


def _alternative(raw: dict[str, Any], name: str, path: Path) -> tuple[Alternative, list[tuple[Path, str]]]:
    problems = []
    selectors = []
    for index, selector in enumerate(sequence(raw.get("selectors"))):
        expression = selector_expression(selector)
        if isinstance(expression, str):
            selectors.append(Selector(expression, (*path, "selectors", index, "cel", "expression")))
    mode = raw.get("allocationMode") or "ExactCount"
    count = raw.get("count")
    if mode == "All" and count not in (None, 0):  # count is a plain int64 there: 0 is unset
        problems.append(
            (
                (*path, "count"),
                f"request '{name}': count: Invalid value: {count}: must not be specified when allocationMode is 'All'",
            )
        )
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        count = 1
    class_name = raw.get("deviceClassName")
    requested = []
    for key, value in mapping(mapping(raw.get("capacity")).get("requests")).items():
        found = amount_or_none(value)
        if found is not None:
            requested.append((str(key), found))
    return Alternative(
        name,
        class_name if isinstance(class_name, str) else "",
        tuple(selectors),
        mode == "All",
        count,
        path,
        (*path, "deviceClassName"),
        raw.get("adminAccess") is True,
        device_tolerations(raw["tolerations"]) if "tolerations" in raw else (),
        tuple(sorted(requested)),
    ), problems


# pkg/apis/resource/validation validateDeviceRequest's words, by "both are set".
ONE_REQUEST_TYPE = {
    False: "Required value: exactly one of `exactly` or `firstAvailable` is required",
    True: "Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
}


# v1beta1's DeviceRequest fields that make an ExactDeviceRequest of it (pkg/apis/resource/v1beta1/conversion.go
# hasAnyMainRequestFieldsSet): each set unless null, or the Go zero value of a plain string or int
_MAIN_REQUEST_FIELDS = ("selectors", "adminAccess", "tolerations", "capacity", "derivedAttributes")
_MAIN_REQUEST_ZEROS = {"deviceClassName": "", "allocationMode": "", "count": 0}


def _main_fields_set(raw: dict[str, Any]) -> bool:
    return any(raw.get(key) is not None for key in _MAIN_REQUEST_FIELDS) or any(
        raw.get(key) not in (None, zero) for key, zero in _MAIN_REQUEST_ZEROS.items()
    )


def parse_claim_spec(api_version: str, devices: Any, base: Path) -> ClaimSpec:
    """The device claim at ``base`` (``spec.devices`` or ``spec.spec.devices``), in any served shape."""
    requests: list[Request] = []
    problems: list[tuple[Path, str]] = []
    # v1beta1 and v1alpha3 have no `exactly`: the request fields sit on the request itself
    flat = not api_version.endswith(("/v1", "/v1beta2"))
    for index, raw in enumerate(sequence(dig(devices, "requests"))):
        if not isinstance(raw, dict):
            continue
        name = str(raw.get("name") or f"#{index}")
        path = (*base, "requests", index)
        first = raw.get("firstAvailable")
        first = first if isinstance(first, list) and first else None  # an empty list is unset
        exactly = (raw if _main_fields_set(raw) else None) if flat else raw.get("exactly")
        if (exactly is not None) == (first is not None):
            both = exactly is not None
            problems.append((path, f"request '{name}': " + ONE_REQUEST_TYPE[both]))
        alternatives: list[Alternative] = []
        if first is not None:
            for sub_index, sub in enumerate(first):
                if isinstance(sub, dict):
                    alternative, found = _alternative(
                        sub, f"{name}/{sub.get('name')}", (*path, "firstAvailable", sub_index)
                    )
                    alternatives.append(alternative)
                    problems.extend(found)
        elif isinstance(exactly, dict):
            alternative, found = _alternative(exactly, name, path if flat else (*path, "exactly"))
            alternatives.append(alternative)
            problems.extend(found)
        requests.append(Request(name, path, tuple(alternatives), first is not None))
    constraints = []
    for index, raw in enumerate(sequence(dig(devices, "constraints"))):
        if not isinstance(raw, dict):
            continue
        attribute = raw.get("matchAttribute") or raw.get("distinctAttribute")
        if isinstance(attribute, str):
            names = tuple(str(r) for r in sequence(raw.get("requests")))
            constraints.append(Constraint(names, attribute, "distinctAttribute" in raw, (*base, "constraints", index)))
    return ClaimSpec(tuple(requests), tuple(constraints), tuple(problems))


def class_selectors(device_class: dict[str, Any]) -> tuple[Selector, ...]:
    out = []
    for index, selector in enumerate(sequence(dig(device_class, "spec", "selectors"))):
        expression = selector_expression(selector)
        if isinstance(expression, str):
            out.append(Selector(expression, ("spec", "selectors", index, "cel", "expression")))
    return tuple(out)


# --------------------------------------------------------------------------- devices


AttributeSet = frozenset[tuple[str, Any]]  # (kind, value): int 1, bool true and string "1" differ
# DeviceAttribute members -> the kind the allocator compares them as (attributeAsSet: a scalar is a set of one)
_ATTRIBUTE_KINDS = {
    "int": "int",
    "bool": "bool",
    "string": "string",
    "version": "version",
    "ints": "int",
    "bools": "bool",
    "strings": "string",
    "versions": "version",
}


def attribute_set(value: Any) -> AttributeSet | None:
    """A ResourceSlice attribute as the set of typed values constraints compare (None: no known member)."""
    if not isinstance(value, dict):
        return None
    for member, kind in _ATTRIBUTE_KINDS.items():
        if member not in value:
            continue
        raw = value[member]
        items = raw if member.endswith("s") and isinstance(raw, list) else [raw]
        if not items or any(isinstance(item, (dict, list)) for item in items):
            return None
        return frozenset((kind, item if kind != "version" else str(item)) for item in items)
    return None


def _qualified_sets(values: Any, driver: str) -> dict[str, AttributeSet]:
    """Attributes by fully qualified name (lookupAttribute: an unqualified name is in the driver's domain;
    a name written with the domain wins over the same name without it)."""
    out: dict[str, AttributeSet] = {}
    if isinstance(values, dict):
        for qualified, value in sorted(values.items(), key=lambda item: "/" in str(item[0])):
            found = attribute_set(value)
            if found is not None:
                name = str(qualified)
                out[name if "/" in name else f"{driver}/{name}"] = found
    return out


def _ceil(amount: Fraction) -> int:
    """Quantity.Value(): rounded up to an integer (the amounts here are not negative)."""
    return -(-amount.numerator // amount.denominator)


@dataclass(frozen=True)
class DeviceCapacity:
    """One capacity of a device with its requestPolicy (consumable_capacity.go)."""

    value: Fraction
    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    minimum: Fraction | None = None
    maximum: Fraction | None = None
    step: Fraction | None = None
    # the range's step arithmetic is exact (milli values, useMilli: DRAFractionalCapacityRange on and every bound a
    # milli value), else on the amounts rounded up to integers (Quantity.Value()), as the allocator does
    exact: bool = True

    def consumed(self, requested: Fraction | None) -> Fraction:
        """calculateConsumedCapacity: the default (else all of it) when not requested, else rounded up."""
        if requested is None:
            return self.default if self.default is not None else self.value
        if self.minimum is not None:
            if requested < self.minimum:
                return self.minimum
            if self.step is None or self.step <= 0:
                return requested
            if not self.exact:  # roundUpRange's integer path: 300m over a 250m min and step consumes 1
                low, step = _ceil(self.minimum), _ceil(self.step)
                return Fraction(low + step * -(-(_ceil(requested) - low) // step))
            steps = -((self.minimum - requested) // self.step)  # ceil
            return self.minimum + self.step * steps
        return next((valid for valid in self.valid_values if requested <= valid), requested)

    def violates(self, consumed: Fraction) -> bool:
        """violatesPolicy: above validRange.max, off its step, or not one of validValues (the default is valid)."""
        if self.default is not None and consumed == self.default:
            return False
        if self.minimum is not None:
            if self.maximum is not None and consumed > self.maximum:
                return True
            if self.step is None or self.step <= 0:
                return False
            if not self.exact:
                return (_ceil(consumed) - _ceil(self.minimum)) % _ceil(self.step) != 0
            return (consumed - self.minimum) % self.step != 0
        return bool(self.valid_values) and consumed not in self.valid_values


def _device_capacity(raw: Any, fractional: bool) -> DeviceCapacity | None:
    """``fractional``: DRAFractionalCapacityRange (the allocator's milli arithmetic for a range of milli values)."""
    value = amount_or_none(mapping(raw).get("value"))
    if value is None:
        return None
    policy = mapping(mapping(raw).get("requestPolicy"))
    valid_range = mapping(policy.get("validRange"))
    minimum = amount_or_none(valid_range.get("min")) if valid_range else None
    maximum = amount_or_none(valid_range["max"]) if minimum is not None and "max" in valid_range else None
    step = amount_or_none(valid_range["step"]) if minimum is not None and "step" in valid_range else None
    # useMilli: every bound given a whole number of milli units (a step of 1m at least)
    milli = all((bound * 1000).denominator == 1 for bound in (minimum, maximum, step) if bound is not None)
    return DeviceCapacity(
        value,
        amount_or_none(policy["default"]) if "default" in policy else None,
        tuple(v for v in (amount_or_none(x) for x in sequence(policy.get("validValues"))) if v is not None),
        minimum,
        maximum,
        step,
        fractional and milli,
    )


@dataclass(frozen=True)
class Device:
    driver: str
    pool: str
    name: str
    cel_view: dict[str, Any] = field(hash=False, compare=False)  # the `device` variable
    shape: tuple[Any, ...] = ()  # driver + attributes + capacity, for caching selector results
    common_shape: tuple[Any, ...] = ()  # the same without per-device identifiers (uuid, PCI address)
    match_values: dict[str, AttributeSet] = field(default_factory=dict, hash=False, compare=False)
    # NoSchedule/NoExecute taints (key, value, effect): only a request that tolerates them gets the device
    taints: tuple[tuple[str, str, str], ...] = ()
    multiple: bool = False  # allowMultipleAllocations (DRAConsumableCapacity)
    consumes: tuple[tuple[str, str, Fraction], ...] = ()  # consumesCounters: (counter set, counter, amount)
    capacities: dict[str, DeviceCapacity] = field(default_factory=dict, hash=False, compare=False)
    binding: bool = False  # has bindingConditions (DRADeviceBindingConditions)
    # the ResourceSlice it is published in (its place in the inventory): the allocator visits a slice's devices in
    # their order, but pools and slices in no fixed order (GatherPools ranges over a map)
    slice_index: int = field(default=-1, hash=False, compare=False)
    slice_name: str = field(default="", hash=False, compare=False)

    def capacity_use(self, requested: tuple[tuple[str, Fraction], ...]) -> dict[str, Fraction] | None:
        """What one allocation for a request with these capacity requests consumes of each capacity, or None
        when the device cannot serve it (CmpRequestOverCapacity: a capacity it lacks, a policy it breaks,
        or more than it has)."""
        asked = dict(requested)
        if any(name not in self.capacities for name in asked):
            return None
        use = {}
        for name, capacity in self.capacities.items():
            consumed = capacity.consumed(asked.get(name))
            if capacity.violates(consumed) or consumed > capacity.value:
                return None
            use[name] = consumed
        return use

    def counter_use(self) -> dict[tuple[str, str, str, str], Fraction]:
        out: dict[tuple[str, str, str, str], Fraction] = {}
        for counter_set, counter, value in self.consumes:
            key = (self.driver, self.pool, counter_set, counter)
            out[key] = out.get(key, Fraction(0)) + value
        return out

    @cached_property
    def within_limits(self) -> bool:
        """Whether it keeps to the sizes the API server enforces (the CEL cost estimate assumes them);
        asked only when a selector is evaluated, not for every published device."""
        return dra_within_limits(self.cel_view)

    @property
    def key(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"

    def values(self, qualified: str) -> AttributeSet | None:
        """The attribute a constraint names (a fully qualified name), or None: such a device is never chosen."""
        return self.match_values.get(qualified)


_MISSING = object()


def _first(item: tuple[Any, Any]) -> Any:
    return item[0]


def _grouped(values: Any, driver: str, convert: bool) -> dict[str, dict[str, Any]]:
    """parseQualifiedName: `name` belongs to the driver's domain, `dom.ain/name` to dom.ain."""
    grouped: dict[str, dict[str, Any]] = {}
    if isinstance(values, dict):
        for index, (qualified, value) in enumerate(values.items()):
            domain, _, name = str(qualified).rpartition("/")
            # each capacity a Quantity of its own (one pointer an entry, as Kubernetes builds them)
            grouped.setdefault(domain or driver, {})[name] = device_value(value, f"c{index}") if convert else value
    return grouped


def _freeze(value: Any) -> Any:
    """A hashable, order-free form (YAML may mix key types, 1 and "a": those sort by type, then text)."""
    if isinstance(value, dict):
        items = [(k, _freeze(v)) for k, v in value.items()]
        try:
            return tuple(sorted(items, key=_first))
        except TypeError:
            return tuple(sorted(items, key=lambda item: (type(item[0]).__name__, str(item[0]))))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):  # YAML !!set
        return tuple(sorted((_freeze(v) for v in value), key=repr))
    return value


def slice_devices(slice_spec: dict[str, Any], fractional_capacity: bool = True) -> list[Device]:
    """``fractional_capacity``: DRAFractionalCapacityRange (DeviceCapacity.exact)."""
    driver = str(slice_spec.get("driver") or "")
    pool = str(dig(slice_spec, "pool", "name") or "")
    devices = []
    for raw in sequence(slice_spec.get("devices")):
        if not isinstance(raw, dict):
            continue
        body = _body(raw)
        attributes = _grouped(body.get("attributes"), driver, True)
        capacity = _grouped(body.get("capacity"), driver, True)
        multiple = body.get("allowMultipleAllocations") is True
        view = {
            "driver": driver,
            "attributes": attributes,
            "capacity": capacity,
            "allowMultipleAllocations": multiple,
        }
        consumes = tuple(
            sorted(
                (
                    str(mapping(c).get("counterSet") or ""),
                    str(counter),
                    amount_or_none(mapping(value).get("value")) or Fraction(0),
                )
                for c in sequence(body.get("consumesCounters"))
                for counter, value in mapping(mapping(c).get("counters")).items()
            )
        )
        capacities = {
            str(name): found
            for name, raw_capacity in mapping(body.get("capacity")).items()
            if (found := _device_capacity(raw_capacity, fractional_capacity)) is not None
        }
        common = {
            domain: {k: v for k, v in values.items() if k not in UNIQUE_ATTRIBUTES}
            for domain, values in attributes.items()
        }
        devices.append(
            Device(
                driver,
                pool,
                str(raw.get("name") or ""),
                view,
                (driver, _freeze(attributes), _freeze(body.get("capacity")), multiple),
                (driver, _freeze(common), _freeze(body.get("capacity")), multiple, consumes),
                _qualified_sets(body.get("attributes"), driver),
                tuple(
                    (str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect")))
                    for t in sequence(body.get("taints"))
                    if isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute")
                ),
                multiple,
                consumes,
                capacities,
                bool(sequence(body.get("bindingConditions"))),
            )
        )
    return devices


def _node_selector_matches(selector: Any, node: NodeInfo) -> bool:
    pod = pod_requirements({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}})
    return pod.matches_affinity(node)


@dataclass(frozen=True)
class NodeDevices:
    devices: list[Device]
    blocked: str = ""  # an incomplete or invalid pool: every allocationMode All request fails on the node
    counters: dict[pools.CounterKey, Fraction] = field(default_factory=dict)  # shared counters of its pools
    invalid: str = ""  # an invalid pool: an allocation that fails on the node says so


def _body(raw: dict[str, Any]) -> dict[str, Any]:
    basic = raw.get("basic")
    return basic if isinstance(basic, dict) else raw  # v1beta1 wraps a device in `basic`


def _places(where: dict[str, Any], node: NodeInfo) -> bool:
    """NodeMatches: nodeName, allNodes or nodeSelector of a slice (or of one device)."""
    if isinstance(where.get("nodeName"), str) and where["nodeName"]:
        return bool(where["nodeName"] == node.name)
    if where.get("allNodes") is True:
        return True
    if isinstance(where.get("nodeSelector"), dict):
        return _node_selector_matches(where["nodeSelector"], node)
    return False


def _targets(spec: dict[str, Any], node: NodeInfo) -> bool:
    if spec.get("perDeviceNodeSelection") is True and not _places(spec, node):
        return any(_places(_body(raw), node) for raw in sequence(spec.get("devices")) if isinstance(raw, dict))
    return _places(spec, node)


_RULE_SELECTOR_FIELDS = frozenset({"driver", "pool", "device"})


def rule_taints(rules: list[dict[str, Any]]) -> list[tuple[dict[str, str], tuple[str, str, str]]]:
    """DeviceTaintRules as (selector, NoSchedule/NoExecute taint), as the ResourceSlice tracker applies them
    (resourceslice/tracker applyPatches: an unset driver, pool or device matches any). A rule that selects
    with anything else (a class or CEL selectors of older versions) is left out: gpulint never adds a
    taint it cannot place. A rule without a deviceSelector taints no device ("No selector matches no
    devices"); an empty one, every device."""
    out = []
    for rule in rules:
        spec = mapping(rule.get("spec"))
        if not isinstance(spec.get("deviceSelector"), dict):
            continue
        selector = mapping(spec.get("deviceSelector"))
        taint = mapping(spec.get("taint"))
        if not set(selector) <= _RULE_SELECTOR_FIELDS or taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        chosen = {key: str(value) for key, value in selector.items() if isinstance(value, str)}
        out.append((chosen, (str(taint.get("key") or ""), str(taint.get("value") or ""), str(taint["effect"]))))
    return out


def _with_rule_taints(device: Device, rules: list[tuple[dict[str, str], tuple[str, str, str]]]) -> Device:
    found = tuple(
        taint
        for selector, taint in rules
        if selector.get("driver", device.driver) == device.driver
        and selector.get("pool", device.pool) == device.pool
        and selector.get("device", device.name) == device.name
    )
    return replace(device, taints=device.taints + found) if found else device


def node_devices(
    slices: list[dict[str, Any]],
    nodes: list[NodeInfo],
    features: DraFeatures = ALL_ON,
    taint_rules: list[dict[str, Any]] | None = None,
    names: list[str] | None = None,
) -> dict[str, NodeDevices]:
    """Every node's devices (node-local slices, slices whose nodeSelector matches it, allNodes slices,
    and with DRAPartitionableDevices the devices of perDeviceNodeSelection slices that select it),
    from the complete, current generation of each pool (kube.dra.pools)."""
    by_pool: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for spec in slices:
        by_pool.setdefault(pools.pool_id(spec), []).append(spec)
    devices_of: dict[int, list[Device]] = {}
    index_of = {id(spec): index for index, spec in enumerate(slices)}
    out: dict[str, NodeDevices] = {}
    partitionable = features.partitionable_devices
    rules = rule_taints(taint_rules or []) if features.device_taints else []
    for node in nodes:
        state = pools.gather(
            [spec for spec in slices if _targets(spec, node)], lambda pool: by_pool.get(pool, []), partitionable
        )
        found: list[Device] = []
        for spec in state.usable:
            if id(spec) not in devices_of:
                devices_of[id(spec)] = [
                    replace(
                        _with_rule_taints(d, rules),
                        slice_index=index_of[id(spec)],
                        slice_name=names[index_of[id(spec)]] if names else "",
                    )
                    for d in slice_devices(spec, features.fractional_capacity_range)
                ]
            if spec.get("perDeviceNodeSelection") is True:
                raws = [raw for raw in sequence(spec.get("devices")) if isinstance(raw, dict)]
                found.extend(d for d, raw in zip(devices_of[id(spec)], raws) if _places(_body(raw), node))
            else:
                found.extend(devices_of[id(spec)])
        out[node.name] = NodeDevices(found, state.blocked, state.counters, state.invalid)
    return out


# --------------------------------------------------------------------------- selectors


@dataclass
class SelectorOutcome:
    matches: bool
    error: str = ""  # a CEL runtime error (the scheduler aborts; here: not selectable, and reported)
    undecided: str = ""  # gpulint's evaluation gave no answer in its time: assumed to match, and said so


class SelectorCache:
    """Each distinct (expression, device shape) is evaluated once (while it is among the most recent:
    a long-running webhook sees new expressions forever)."""

    def __init__(self, engine: CelEngine, size: int = 16 * CACHE_SIZE) -> None:
        self.engine = engine
        self._results: LRU[tuple[str, Any], SelectorOutcome] = LRU(size)

    def outcome(self, selector: Selector, device: Device) -> SelectorOutcome:
        expression = selector.expression
        shape = device.shape if any(name in expression for name in UNIQUE_ATTRIBUTES) else device.common_shape
        key = (expression, shape)
        cached = self._results.get(key)
        if cached is None:
            compiled = self.engine.compile(selector.expression)
            if isinstance(compiled, CelProblem):
                cached = SelectorOutcome(False, "" if not compiled.evaluable else compiled.message)
                if not compiled.evaluable:
                    cached = SelectorOutcome(True)  # cannot evaluate offline: assume it matches (never a false error)
            else:
                result = self.engine.evaluate(compiled, device.cel_view, device.within_limits)
                if isinstance(result, str) and result.startswith(NO_VERDICT):
                    return SelectorOutcome(True, undecided=result)  # never a false error; not kept: asked again
                cached = SelectorOutcome(result is True, result if isinstance(result, str) else "")
            self._results.put(key, cached)
        return cached


# --------------------------------------------------------------------------- allocation


@dataclass
class Slot:
    """One request (or subrequest choice) with its candidate devices on one node.

    ``candidates``: for ExactCount the usable devices (free ones, or any with adminAccess); for All every
    matching device, all of which it must get (``taken`` of them are held by allocated claims;
    ``refused``: why one of them can never be given to it, a taint it does not tolerate, say).
    """

    request: str  # the request name used by constraints ("gpus"; a subrequest answers to its parent too)
    alternative: Alternative
    after_class: list[Device]
    candidates: list[Device]
    taken: int = 0
    unmatched: str = ""  # All: the constraint attribute its devices do not share
    refused: str = ""
    claim: int = 0  # which of the pod's claims it belongs to (adminAccess shares devices across claims)
    unselectable: int = 0  # devices with bindingConditions while DRADeviceBindingConditions is off


@dataclass
class NodeVerdict:
    node: str
    fits: bool | None  # None: unknown (search too large, or a request the allocator refuses to judge)
    reason: str = ""
    score: tuple[int, ...] = (0,)  # how close it came (for "the best node")
    # the allocator errors on this node (not "does not fit"): the scheduler fails the whole attempt
    error: bool = False
    # where it fits: per request, in the order of the claims and their requests, the firstAvailable subrequest the
    # allocator takes ("req/sub"; "" for a request without subrequests); empty when an earlier choice's fit is unknown
    chosen: tuple[str, ...] = ()


def _matching(slots: list[tuple[str, int, list[Device], bool]]) -> bool:
    """Can every slot get its count of distinct devices? (b-matching by augmenting paths)"""
    owner: dict[str, tuple[int, int]] = {}
    units = [(index, unit) for index, (_, count, _, _) in enumerate(slots) for unit in range(count)]

    def assign(unit: tuple[int, int], seen: set[str]) -> bool:
        for device in slots[unit[0]][2]:
            if device.key in seen:
                continue
            seen.add(device.key)
            if device.key not in owner or assign(owner[device.key], seen):
                owner[device.key] = unit
                return True
        return False

    return all(assign(unit, set()) for unit in units)


Consumed = dict[str, dict[str, Fraction]]  # device key -> capacity -> what shared allocations already use
MAX_STEPS = 20_000
RESULTS_MAX = 32  # AllocationResultsMaxSize: the devices one claim's allocation holds
MAX_UNITS = 256  # devices placed by one search (a claim holds at most 32: AllocationResultsMaxSize)  # placements tried by the search with shared counters or shared devices; beyond: unknown


@dataclass
class _Placement:
    """The search state: exclusive devices taken, capacity consumed on shared devices, counters left."""

    counters: dict[pools.CounterKey, Fraction]
    taken: set[str] = field(default_factory=set)
    uses: Counter[str] = field(default_factory=Counter)
    consumed: dict[tuple[str, str], Fraction] = field(default_factory=dict)
    steps: int = 0


@dataclass(frozen=True)
class _Unit:
    slot: int
    device: Device | None  # All: the device it must get; ExactCount: any candidate of the slot
    capacity: tuple[tuple[str, Fraction], ...]


class _Search:
    """Backtracking over the devices of each request, as the allocator's allocateOne does, for what
    a bipartite matching cannot express: devices that consume a pool's shared counters
    (DRAPartitionableDevices) and devices that serve several requests within their capacity
    (allowMultipleAllocations, DRAConsumableCapacity)."""

    def __init__(
        self, slots: list[Slot], counters: dict[pools.CounterKey, Fraction], multiple: bool, consumed: Consumed
    ) -> None:
        self.slots = slots
        self.multiple = multiple
        self.state = _Placement(dict(counters))
        for key, uses in consumed.items():
            self.state.uses[key] += 1  # its counters are already consumed (skipCounterCheck)
            for name, amount in uses.items():
                self.state.consumed[(key, name)] = amount
        self.units = [
            _Unit(index, device, slot.alternative.capacity)
            for index, slot in enumerate(slots)
            for device in (slot.candidates if slot.alternative.all_devices else [None] * slot.alternative.count)
        ]

    def run(self) -> bool | None:
        if len(self.units) > MAX_UNITS:
            return None  # the search recurses per device: beyond what claims can hold, no answer
        return self._place(0, -1)

    def _shared(self, device: Device) -> bool:
        return self.multiple and device.multiple

    def _take(self, device: Device, capacity: tuple[tuple[str, Fraction], ...]) -> Any:
        """Allocate ``device`` for one unit; the undo, or None when it cannot be."""
        state = self.state
        shared = self._shared(device)
        if not shared and device.key in state.taken:
            return None
        use = device.capacity_use(capacity) if shared else {}
        if use is None:
            return None
        for name, amount in use.items():
            if state.consumed.get((device.key, name), Fraction(0)) + amount > device.capacities[name].value:
                return None
        counter_use = device.counter_use() if state.uses[device.key] == 0 else {}
        if any(state.counters.get(key, Fraction(0)) < value for key, value in counter_use.items()):
            return None
        for key, value in counter_use.items():
            state.counters[key] -= value
        for name, amount in use.items():
            state.consumed[(device.key, name)] = state.consumed.get((device.key, name), Fraction(0)) + amount
        state.uses[device.key] += 1
        if not shared:
            state.taken.add(device.key)

        def undo() -> None:
            state.uses[device.key] -= 1
            state.taken.discard(device.key)
            for key, value in counter_use.items():
                state.counters[key] += value
            for name, amount in use.items():
                state.consumed[(device.key, name)] -= amount

        return undo

    def _place(self, index: int, last: int) -> bool | None:
        """Place units ``index``...; ``last``: the candidate position the previous unit of the same slot
        took. Units of one request take devices in list order, each once (allocateOne continues at the
        next device: a shared device serves a request once), so no permutation is tried twice."""
        if index == len(self.units):
            return True
        self.state.steps += 1
        if self.state.steps > MAX_STEPS:
            return None
        unit = self.units[index]
        same_slot = index > 0 and self.units[index - 1].slot == unit.slot
        options = (
            [(0, unit.device)]
            if unit.device is not None
            else list(enumerate(self.slots[unit.slot].candidates))[last + 1 if same_slot else 0 :]
        )
        unknown = False
        for position, device in options:
            undo = self._take(device, unit.capacity)
            if undo is None:
                continue
            found = self._place(index + 1, position)
            undo()
            if found:
                return True
            unknown = unknown or found is None
        return None if unknown else False


class Allocator:
    def __init__(
        self, classes: dict[str, dict[str, Any]], selectors: SelectorCache, features: DraFeatures = ALL_ON
    ) -> None:
        self.classes = classes
        self.selectors = selectors
        self.features = features
        self._class_selectors = {name: class_selectors(data) for name, data in classes.items()}

    def _refusal(self, alternative: Alternative, device: Device) -> str:
        """Why the allocator never gives ``device`` to this request (allocateDevice), "" when it may."""
        if self.features.device_taints:
            for taint in device.taints:
                if not any(t.tolerates(taint) for t in alternative.tolerations):
                    key, value, effect = taint
                    return f"device {device.key} has the taint {key}{'=' + value if value else ''}:{effect}"
        if device.consumes and not self.features.partitionable_devices:
            return f"device {device.key} consumes counters, and DRAPartitionableDevices is off"
        return ""

    def _candidates(self, alternative: Alternative, devices: list[Device]) -> tuple[list[Device], list[Device]]:
        if not self.features.binding_conditions:
            # isSelectable: devices with binding conditions are not supported while the feature is off
            devices = [d for d in devices if not d.binding]
        klass = self._class_selectors.get(alternative.class_name, ())
        after_class = [d for d in devices if all(self.selectors.outcome(s, d).matches for s in klass)]
        chosen = [d for d in after_class if all(self.selectors.outcome(s, d).matches for s in alternative.selectors)]
        if self.features.consumable_capacity:
            # CmpRequestOverCapacity: every capacity it asks for exists and fits, within the device's policy
            chosen = [d for d in chosen if d.capacity_use(alternative.capacity) is not None]
        return after_class, chosen

    def selected(self, alternative: Alternative, devices: list[Device]) -> list[Device]:
        """The devices its class and selectors select (what a request for all devices gets, isSelectable)."""
        return self._candidates(alternative, devices)[1]

    def _slot(
        self,
        request: str,
        alternative: Alternative,
        devices: list[Device],
        in_use: frozenset[str],
        consumed: Consumed,
    ) -> Slot:
        after_class, chosen = self._candidates(alternative, devices)
        if consumed:
            # CmpRequestOverCapacity with what shared allocations of the device already consume
            chosen = [d for d in chosen if _room(d, alternative.capacity, consumed.get(d.key, {}))]
        admin = alternative.admin_access and self.features.admin_access  # the API server drops it otherwise
        if alternative.all_devices:
            refused = next((r for r in (self._refusal(alternative, d) for d in chosen) if r), "")
            taken = 0 if admin else sum(1 for d in chosen if d.key in in_use)
            return Slot(request, alternative, after_class, chosen, taken, "", refused, 0, self._unselectable(devices))
        usable = [d for d in chosen if not self._refusal(alternative, d)]
        if not admin:
            usable = [d for d in usable if d.key not in in_use]  # deviceInUse: dedicated allocations
        return Slot(request, alternative, after_class, usable, unselectable=self._unselectable(devices))

    def _unselectable(self, devices: list[Device]) -> int:
        return 0 if self.features.binding_conditions else sum(1 for d in devices if d.binding)

    def _shared(self, device: Device) -> bool:
        return device.multiple and self.features.consumable_capacity

    def fits(
        self,
        claims: list[ClaimSpec],
        devices: list[Device],
        node: str,
        in_use: frozenset[str] = frozenset(),
        blocked: str = "",
        counters: dict[pools.CounterKey, Fraction] | None = None,
        consumed: Consumed | None = None,
        invalid: str = "",
    ) -> NodeVerdict:
        """Can all ``claims`` (of one pod) be allocated together from ``devices``, of which the ones named
        in ``in_use`` (driver/pool/device) are held by allocated claims? ``blocked``: why every
        allocationMode All request fails on this node (an incomplete or invalid pool); ``counters``: the
        shared counters of the node's pools (DRAPartitionableDevices); ``consumed``: the capacity shared
        allocations (a shareID) already use on devices with allowMultipleAllocations; ``invalid``: the node's
        first invalid pool (an allocation that fails says "invalid resource pools were encountered", as
        Allocate does when it finds no solution and a pool of the node is invalid). A class the inventory lacks
        selects every device: no fewer can fit where all do not, and where all do it is unknown (the scheduler's
        PreFilter refuses a class that does not exist, a subrequest's too, "request %s: device class %s does not
        exist": device-class-unknown's, where the classes are known whole)."""
        named = (a.class_name for c in claims for r in c.requests for a in r.alternatives)
        missing = next((name for name in named if name not in self.classes), None)
        lacking = (
            None if missing is None else NodeVerdict(node, None, f"device class {missing} is not in the inventory")
        )
        consumed = consumed or {}
        # a shared allocation of a device that is not shared (now, or with the gate off) holds it whole
        whole = frozenset(d.key for d in devices if d.key in consumed and not self._shared(d))
        in_use = in_use | whole
        consumed = {key: uses for key, uses in consumed.items() if key not in whole}
        if not self.features.prioritized_list and any(r.first_available for c in claims for r in c.requests):
            # the API server drops firstAvailable (feature-gate-required reports it); nothing left to judge
            return NodeVerdict(node, None, "firstAvailable needs DRAPrioritizedList")
        if blocked:
            # Allocate validates every request and subrequest before it searches (validateDeviceRequest): one
            # asking for all devices errors on an incomplete or invalid pool, whichever subrequest would be chosen
            for claim in claims:
                for request in claim.requests:
                    for alternative in request.alternatives:
                        if alternative.all_devices:
                            why = f"request '{alternative.name}' asks for all devices, but {blocked}"
                            return NodeVerdict(node, False, why, error=True)
        left = dict(counters or {})
        for device in devices:
            if device.key in in_use or device.key in consumed:
                for key, value in device.counter_use().items():
                    left[key] = left.get(key, Fraction(0)) - value  # counters held by allocated devices
        per_request: list[list[Slot]] = []
        listed = [request.first_available for claim in claims for request in claim.requests]
        for index, claim in enumerate(claims):
            for request in claim.requests:
                per_request.append(
                    [
                        replace(self._slot(request.name, a, devices, in_use, consumed), claim=index)
                        for a in request.alternatives
                    ]
                )
        over = _over_claim_limit(per_request)
        if over:
            offered = len({d.key for slots in per_request for slot in slots for d in slot.candidates})
            return NodeVerdict(node, False, over, (0, offered))
        best_reason = ""
        best_score: tuple[int, ...] = (-1,)
        tried = 0
        unknown = False
        # firstAvailable: the allocator's depth-first search (allocateOne) tries a request's subrequests in order,
        # each with every choice of the later requests, and keeps the first that completes: the first fitting
        # choice in this order is the one it allocates, known when no earlier choice was unknown
        for choice in itertools.product(*per_request):
            tried += 1
            if tried > MAX_COMBINATIONS:
                return NodeVerdict(node, None, "search too large")
            ok, reason, score = self._fits_choice(list(choice), claims, left, consumed)
            if ok:
                chosen = () if unknown else tuple(s.alternative.name if f else "" for s, f in zip(choice, listed))
                return lacking or NodeVerdict(node, True, chosen=chosen)
            unknown = unknown or ok is None
            if ok is False and score > best_score:
                best_reason, best_score = reason, score
        if not per_request:
            return lacking or NodeVerdict(node, True)
        if unknown:
            return NodeVerdict(node, None, "search too large")
        if invalid:
            best_reason = f"invalid resource pools were encountered ({invalid}); {best_reason}"
        return NodeVerdict(node, False, best_reason, best_score)

    def _fits_choice(
        self,
        slots: list[Slot],
        claims: list[ClaimSpec],
        counters: dict[pools.CounterKey, Fraction],
        consumed: Consumed,
    ) -> tuple[bool | None, str, tuple[int, ...]]:
        for slot in slots:
            need = 1 if slot.alternative.all_devices else slot.alternative.count
            if len(slot.candidates) < need:
                return False, self._short(slot, need), (len(slot.candidates), len(slot.after_class))
        for slot in slots:
            if slot.refused:
                # allocateOne: each of the "all" devices must be allocatable, or there is no solution
                return (
                    False,
                    f"request '{slot.alternative.name}' (allocationMode All) needs every one of the "
                    f"{len(slot.candidates)} matching devices, and {slot.refused}",
                    (0, len(slot.after_class)),
                )
            if slot.taken:
                # allocator_stable.go: "all" devices must all be allocatable, else there is no solution
                return (
                    False,
                    f"request '{slot.alternative.name}' (allocationMode All) needs every one of the "
                    f"{len(slot.candidates)} matching devices, and {slot.taken} of them "
                    f"{'is' if slot.taken == 1 else 'are'} already allocated (only adminAccess may share them)",
                    (len(slot.candidates) - slot.taken, len(slot.after_class)),
                )
        constraints = [replace(c, claim=index) for index, claim in enumerate(claims) for c in claim.constraints]
        matching = [c for c in constraints if not c.distinct]
        for constraint in (c for c in constraints if c.distinct):
            problem = _distinct_shortfall(slots, constraint)
            if problem is not None:
                return False, problem[0], (problem[1], 0)
        tried = 0
        unknown = False
        best: tuple[str, int] = ("", -1)
        for values, restricted in self._constraint_groups(slots, matching):
            tried += 1
            if tried > MAX_COMBINATIONS:
                return None, "search too large", (0,)
            problem = self._match(restricted, counters, consumed)
            if problem is None:
                return True, "", (0,)
            if problem[1] < 0:
                unknown = True
                continue
            if matching and not any(slot.unmatched for slot in restricted):
                together = len(
                    {d.key for slot in restricted if any(_named(slot, c) for c in matching) for d in slot.candidates}
                )
                needed = sum(
                    len(slot.candidates) if slot.alternative.all_devices else slot.alternative.count
                    for slot in restricted
                    if any(_named(slot, c) for c in matching)
                )
                shown = ", ".join(f"{c.attribute}={_show(v)}" for c, v in zip(matching, values))
                problem = (
                    f"{needed} devices must share one {', '.join(c.attribute for c in matching)}; "
                    f"the most on one value is {together} ({shown})",
                    together,
                )
            best = max(best, problem, key=lambda p: p[1])
        if unknown:
            return None, "search too large", (0,)
        # ranked by the devices usable together, then by all the candidates the node offers
        return False, best[0], (best[1], len({d.key for slot in slots for d in slot.candidates}))

    def _short(self, slot: Slot, need: int) -> str:
        alternative = slot.alternative
        what = (
            "at least 1 device (allocationMode All)"
            if alternative.all_devices
            else f"{need} device{'s' if need != 1 else ''}"
        )
        _, matching = self._candidates(alternative, slot.after_class)
        refusals = [r for r in (self._refusal(alternative, d) for d in matching) if r]
        shown = len(matching) - len(refusals) if refusals else len(slot.candidates)
        held = len(slot.candidates) < len(matching) - len(refusals)
        return (
            f"request '{alternative.name}' needs {what} of class {alternative.class_name}; "
            f"{len(slot.after_class)} pass the class selectors and {shown} its own selectors"
            + (" and are free" if held else "")
            + (f" ({len(refusals)} more it cannot get: {refusals[0]})" if refusals else "")
            + (
                f"; {slot.unselectable} device{'s' if slot.unselectable != 1 else ''} with bindingConditions "
                "not selected (DRADeviceBindingConditions or DRAResourceClaimDeviceStatus is off)"
                if slot.unselectable
                else ""
            )
        )

    def _constraint_groups(
        self, slots: list[Slot], matching: list[Constraint]
    ) -> Iterator[tuple[tuple[Any, ...], list[Slot]]]:
        """Candidate sets restricted to one shared value of every matchAttribute constraint (each in turn).

        A device without the attribute is never chosen for a constrained request; a list attribute
        (DRAListTypeAttributes) shares a value when it holds it (the allocator keeps the intersection
        non-empty). An All request is not narrowed: each of its devices must hold the value.
        """
        if not matching:
            yield (), slots
            return
        value_sets = []
        for constraint in matching:
            values: Counter[Any] = Counter()
            for slot in slots:
                if _named(slot, constraint):
                    for device in slot.candidates:
                        values.update(device.values(constraint.attribute) or ())
            value_sets.append([value for value, _ in values.most_common()] or [_MISSING])
        for chosen in itertools.product(*value_sets):
            restricted = []
            for slot in slots:
                keep = slot.candidates
                unmatched = ""
                for constraint, value in zip(matching, chosen):
                    if _named(slot, constraint):
                        holding = [d for d in keep if value in (d.values(constraint.attribute) or ())]
                        if slot.alternative.all_devices and len(holding) < len(keep):
                            unmatched = constraint.attribute
                        keep = holding
                restricted.append(replace(slot, candidates=keep, taken=0, unmatched=unmatched))
            yield chosen, restricted

    def _assignable(
        self, slots: list[Slot], counters: dict[pools.CounterKey, Fraction], consumed: Consumed, search: bool
    ) -> bool | None:
        """Can the slots get their devices together (None: the search was too large)? allocateDevice lets a
        request with adminAccess take a device a request of another claim took before it (it checks only its own
        claim), never a request without it a device any claim took, adminAccess or not (deviceInUse). Claims
        are allocated in the pod's order, so the slots that must all differ are, per claim, its own with every
        later claim's without adminAccess: each such group must fit (a failure is the scheduler's); that they
        fit one by one is what this proves of a fit with adminAccess across claims."""
        admin = {id(s) for s in slots if s.alternative.admin_access and self.features.admin_access}
        groups = [slots]
        if admin and len({s.claim for s in slots}) > 1:
            groups = [
                [s for s in slots if s.claim == claim or (s.claim > claim and id(s) not in admin)]
                for claim in sorted({s.claim for s in slots})
            ]
        unknown = False
        for group in groups:
            found = (
                _Search(group, counters, self.features.consumable_capacity, consumed).run()
                if search
                else _matching(_plan(group))
            )
            if found is False:
                return False
            unknown = unknown or found is None
        return None if unknown else True

    def _match(
        self, slots: list[Slot], counters: dict[pools.CounterKey, Fraction], consumed: Consumed
    ) -> tuple[str, int] | None:
        """None when the slots can be given devices together; else why, and how many devices came close
        (-1: the search was too large to tell)."""
        plan = []
        for slot in slots:
            if slot.alternative.all_devices:
                if slot.unmatched:
                    return (
                        f"request '{slot.alternative.name}' (allocationMode All) needs every matching device, "
                        f"and they do not all have the same {slot.unmatched}"
                    ), 0
                plan.append((slot.request, len(slot.candidates), slot.candidates, True))
                if not slot.candidates:
                    return f"request '{slot.alternative.name}' (allocationMode All) has no matching device", 0
            else:
                plan.append((slot.request, slot.alternative.count, slot.candidates, False))
        shared = self.features.consumable_capacity and any(d.multiple for s in slots for d in s.candidates)
        counted = self.features.partitionable_devices and any(d.consumes for s in slots for d in s.candidates)
        found = self._assignable(slots, counters, consumed, shared or counted)
        if found is None:
            return "search too large", -1
        if found:
            return None
        needed = sum(count for _, count, _, _ in plan)
        distinct = len({d.key for _, _, candidates, _ in plan for d in candidates})
        if any(slot.candidates != slot.after_class for slot in slots) and len(slots) == 1:
            slot = slots[0]
            return (
                f"request '{slot.alternative.name}' needs {slot.alternative.count} devices that satisfy its "
                f"constraints; {len(slot.candidates)} do"
            ), len(slot.candidates)
        if shared or counted:
            limits = " and ".join(
                what for what, on in (("shared counters", counted), ("capacity of shared devices", shared)) if on
            )
            return (
                f"the requests need {needed} devices together; {distinct} candidate devices satisfy their "
                f"selectors and constraints, but their {limits} do not allow it"
            ), distinct
        return (
            f"the requests need {needed} distinct devices together; {distinct} candidate devices satisfy "
            f"their selectors and constraints"
        ), distinct


def _over_claim_limit(per_request: list[list[Slot]]) -> str:
    """The devices one claim's requests need at the least (each request its cheapest subrequest: count,
    or for All every matching device), over what one allocation holds (allocator: Allocate)."""
    wanted: Counter[int] = Counter()
    for slots in per_request:
        if slots:
            wanted[slots[0].claim] += min(
                len(s.candidates) if s.alternative.all_devices else s.alternative.count for s in slots
            )
    over = [count for count in wanted.values() if count > RESULTS_MAX]
    return f"number of requested devices {over[0]} exceeds the claim limit of {RESULTS_MAX}" if over else ""


def _plan(slots: list[Slot]) -> list[tuple[str, int, list[Device], bool]]:
    return [
        (
            slot.request,
            len(slot.candidates) if slot.alternative.all_devices else slot.alternative.count,
            slot.candidates,
            slot.alternative.all_devices,
        )
        for slot in slots
    ]


def _room(device: Device, capacity: tuple[tuple[str, Fraction], ...], used: dict[str, Fraction]) -> bool:
    """One more allocation of ``device`` fits beside what shared allocations already consume."""
    if not device.multiple or not used:
        return True
    use = device.capacity_use(capacity)
    return use is not None and all(
        used.get(name, Fraction(0)) + amount <= device.capacities[name].value for name, amount in use.items()
    )


def _distinct_shortfall(slots: list[Slot], constraint: Constraint) -> tuple[str, int] | None:
    """distinctAttribute: a sound bound on the different values the named requests need.

    The allocator (structured/internal/*/constraint.go, distinctAttributeConstraint) keeps one value per
    request name and compares each new device with those: the requests' last devices differ pairwise,
    and consecutive devices of one request differ. So it needs as many values as named requests, and
    two when a request takes several devices, not one per device. Lists (pairwise disjoint sets) and
    devices without the attribute are left to the search.
    """
    named = [slot for slot in slots if _named(slot, constraint)]
    if not named:
        return None
    sets = [d.values(constraint.attribute) for slot in named for d in slot.candidates]
    if any(found is not None and len(found) != 1 for found in sets):
        return _no_disjoint_pair(named, constraint)
    several = any(
        len(slot.candidates) > 1 if slot.alternative.all_devices else slot.alternative.count > 1 for slot in named
    )
    needed = max(len({slot.request for slot in named}), 2 if several else 1)
    values = {value for found in sets if found is not None for value in found}
    if len(values) < needed:
        return (
            f"distinctAttribute {constraint.attribute} needs at least {needed} different values among the "
            f"candidates; they have {len(values)}"
        ), len(values)
    return None


def _no_disjoint_pair(named: list[Slot], constraint: Constraint) -> tuple[str, int] | None:
    """distinctAttribute over list attributes (DRAListTypeAttributes): a device is added only when its values
    share none with those of the devices the named requests hold (hasIntersection), so the second device
    placed must be disjoint from the first; when the requests need two devices and no two candidates are
    disjoint (one shared device holds its own values), there is no allocation. Devices without the
    attribute are left to the search."""
    needed = sum(len(slot.candidates) if slot.alternative.all_devices else slot.alternative.count for slot in named)
    found = {d.key: d.values(constraint.attribute) for slot in named for d in slot.candidates}
    if needed < 2 or any(values is None for values in found.values()):
        return None
    sets = [values for values in found.values() if values is not None]
    if any(not first & second for first, second in itertools.combinations(sets, 2)):
        return None
    return (
        f"distinctAttribute {constraint.attribute} needs {needed} devices whose values differ; "
        f"every two of the {len(sets)} candidates share a value"
    ), 0


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(none)"
    kind, item = value
    return ("true" if item else "false") if kind == "bool" else str(item)


def _named(slot: Slot, constraint: Constraint) -> bool:
    if slot.claim != constraint.claim:
        return False
    if not constraint.requests:
        return True
    return slot.request in constraint.requests or slot.alternative.name in constraint.requests
