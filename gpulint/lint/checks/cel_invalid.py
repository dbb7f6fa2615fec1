"""cel-invalid: a DRA selector that does not compile, names a field device lacks, is not a bool,
or fails at runtime on the cluster's devices."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.cel.engine import CelEngine, CelProblem
from gpulint.kube.dra.allocation import Alternative, Device, Selector, class_selectors
from gpulint.kube.dra.devices import DeviceGroup, DraModel
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import DRA_SELECTOR_KINDS, RuleSpec
from gpulint.lint.world.dra_objects import claim_of, is_dra

SPEC = RuleSpec("cel-invalid", Severity.ERROR, kinds=DRA_SELECTOR_KINDS)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not is_dra(obj, "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
        return
    dra = ctx.resolver.dra_if_any
    engine: CelEngine = dra.engine if dra is not None else ctx.memo("cel-engine", CelEngine)
    for selector, devices, alternative, tried in _selectors_and_devices(obj, dra):
        compiled = engine.compile(selector.expression)
        if not isinstance(compiled, CelProblem) or not compiled.evaluable:
            # the object is being created: the cluster's version and gates decide the environment
            compiled = engine.new_expression_problem(selector.expression, ctx.config.gates) or compiled
        if isinstance(compiled, CelProblem):
            if compiled.evaluable:
                brief, notes = split_long(f"CEL selector {compiled.message}")
                yield Diagnostic(RULE_ID, selector.path, brief, offset=compiled.offset, notes=notes)
            else:
                brief, notes = split_long(f"CEL selector cannot be evaluated offline: {compiled.message}")
                yield Diagnostic(
                    RULE_ID,
                    selector.path,
                    brief,
                    notes=notes,
                    offset=compiled.offset,
                    severity=Severity.INFO,
                    pinned=True,
                )
            continue
        if dra is None:  # no model, no devices to evaluate the selector on
            continue
        failing: list[tuple[Device, str, str]] = []  # (device, error, when it is evaluated: "" always)
        for device in devices:
            outcome = dra.selectors.outcome(selector, device)
            if outcome.undecided:
                brief, notes = split_long(f"CEL selector on device {device.key}: {outcome.undecided}")
                yield Diagnostic(RULE_ID, selector.path, brief, notes=notes, severity=Severity.INFO, pinned=True)
                break
            if outcome.error:
                when = _UNTRIED if not tried else _held(alternative, device, dra) or _counted(alternative, device, dra)
                failing.append((device, outcome.error, when))
                if not failing[-1][2]:
                    break
        if failing:
            # the error the allocator always reaches, else the first
            device, error, when = next((f for f in failing if not f[2]), failing[0])
            yield Diagnostic(
                RULE_ID,
                selector.path,
                f"CEL runtime error on device {device.key}: {error}",
                notes=(
                    "the scheduler aborts allocation for the whole claim on such an error (it is not false)",
                    *((when,) if when else ()),
                ),
                severity=Severity.WARNING if when else Severity.ERROR,
            )


# k8s.io/dynamic-resource-allocation allocator_stable.go (v0.37): a firstAvailable subrequest is tried only when
# the ones before it cannot be allocated on the node
_UNTRIED = "the allocator evaluates it only when the subrequests before it cannot be allocated on the node"


def _held(alternative: Alternative | None, device: Device, dra: DraModel) -> str:
    """A note where another claim holds ``device`` now: an ExactCount request skips a device in use before it
    evaluates selectors (allocator_stable.go v0.37.2 allocateOne: "Checking for "in use" is cheap and thus gets
    done first"), an adminAccess one only the devices of its own claim, and an All request none (it gathers every
    selectable device first)."""
    if alternative is None or alternative.all_devices or alternative.admin_access or device.key not in dra.dedicated:
        return ""
    return (
        "another claim holds this device now: the allocator skips a device in use before it evaluates selectors, "
        "and meets the error once the device is freed"
    )


def _counted(alternative: Alternative | None, device: Device, dra: DraModel) -> str:
    """A note saying when the allocator evaluates the selector on ``device``, or "" where it always does. An
    ExactCount request stops once it has its count (allocator_stable.go, v0.37.2: allocateOne visits a node's
    pools and their slices in no fixed order, GatherPools ranging over a map, and each slice's devices in order,
    and returns at the count): where on every node with ``device`` at least that many devices the selectors match
    without an error may come before it (any device of another slice, the devices before it in its own),
    whether ``device`` is reached depends on that order; where on one fewer may, the allocator reaches it there
    whatever the order: the first device of a node's only slice, say."""
    if alternative is None or alternative.all_devices:
        return ""
    klass = class_selectors(dra.classes[alternative.class_name]) if alternative.class_name in dra.classes else ()
    selectors = (*klass, *alternative.selectors)
    groups = [g for g in dra.groups() if any(d.key == device.key for d in g.devices)]
    for group in groups:
        clean = sum(all(dra.selectors.outcome(s, d).matches for s in selectors) for d in _ahead(group, device, dra))
        if clean < alternative.count:
            return ""
    if not groups:
        return ""
    return (
        f"the allocator evaluates it on this device only when it reaches the device before {alternative.count}"
        " device(s) the selectors match on the node"
    )


def _ahead(group: DeviceGroup, device: Device, dra: DraModel) -> list[Device]:
    """The devices of ``group`` the allocator may visit before ``device``. Its incubating variant, which the
    scheduler runs while DRAConsumableCapacity or the binding conditions' gates are on (structured/allocator.go
    picks the most stable variant that supports the enabled features), visits pools by driver and name (those
    with binding conditions last) and a pool's slices by name (pools_incubating.go sortPoolsByID,
    sortSlicesByName); the stable one ranges over a map of pools: any device of another slice may come first."""
    position, mine = next((i, d) for i, d in enumerate(group.devices) if d.key == device.key)
    if dra.features.consumable_capacity or dra.features.binding_conditions:
        binding = {(d.driver, d.pool) for d in group.devices if d.binding}

        def order(index: int, d: Device) -> tuple[bool, str, str, str, int, int]:
            return ((d.driver, d.pool) in binding, d.driver, d.pool, d.slice_name, d.slice_index, index)

        return [d for i, d in enumerate(group.devices) if order(i, d) < order(position, mine)]
    return [d for i, d in enumerate(group.devices) if d.slice_index != mine.slice_index or i < position]


def _selectors_and_devices(
    obj: KubeObject, dra: DraModel | None
) -> Iterator[tuple[Selector, list[Device], Alternative | None, bool]]:
    """Each selector with the devices the allocator would evaluate it on, its request (None: a class's), and
    whether it is always tried (not a firstAvailable subrequest after the first, which is tried only when those
    before it fail): a class's selectors see every device; a request's selectors only the devices its class
    selected. Either list is evaluated in order, and a device the earlier selectors did not match is not evaluated
    again (isSelectable stops at the first selector that does not match, k8s.io/dynamic-resource-allocation
    v0.37.2 allocator_stable.go)."""
    devices = dra.all_devices() if dra is not None and dra.has_devices else []
    if is_dra(obj, "DeviceClass"):
        yield from _in_order(class_selectors(obj.data), devices, dra, None, True)
        return
    claim = claim_of(obj)
    for request in claim.requests if claim is not None else ():
        for index, alternative in enumerate(request.alternatives):
            selected: list[Device] = []
            if dra is not None and devices and alternative.class_name in dra.classes:
                klass = class_selectors(dra.classes[alternative.class_name])
                selected = [d for d in devices if all(dra.selectors.outcome(s, d).matches for s in klass)]
            # Allocate validates every request and subrequest before it searches (validateDeviceRequest): one for
            # all devices evaluates its selectors on every device of the node then, whichever subrequest is taken
            tried = index == 0 or alternative.all_devices
            yield from _in_order(alternative.selectors, selected, dra, alternative, tried)


def _in_order(
    selectors: tuple[Selector, ...],
    devices: list[Device],
    dra: DraModel | None,
    alternative: Alternative | None,
    tried: bool,
) -> Iterator[tuple[Selector, list[Device], Alternative | None, bool]]:
    for selector in selectors:
        yield selector, devices, alternative, tried
        if dra is not None:
            devices = [d for d in devices if dra.selectors.outcome(selector, d).matches]
