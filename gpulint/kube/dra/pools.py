"""Resource pools as the allocator gathers them for one node (dynamic-resource-allocation
structured/internal/experimental/pools_experimental.go GatherPools, buildPool).

A pool is the slices of one driver and pool name. Only its newest generation counts; it is
complete when the slices at that generation number ``resourceSliceCount`` (counted over the
whole cluster when the node sees only some of them); a pool with a newer generation elsewhere is
obsolete for this node. An incomplete pool gives no devices, and fails every ``allocationMode:
All`` request on the node ("is currently being updated"); a pool whose slices repeat a device
name is invalid and does the same; an allocation that fails on a node with an invalid pool fails with
"invalid resource pools were encountered" (Allocate), whatever else was missing.

With ``DRAPartitionableDevices`` a slice may hold ``sharedCounters`` (counter sets the pool's
devices consume through ``consumesCounters``; a duplicate set, or a device naming a set or counter
that does not exist, makes the pool invalid) or select nodes per device
(``perDeviceNodeSelection``); with the gate off such slices are skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence
from gpulint.kube.quantity import amount_or_none

CounterKey = tuple[str, str, str, str]  # driver, pool, counter set, counter


@dataclass(frozen=True)
class PoolState:
    usable: list[dict[str, Any]]  # the slice specs whose devices the node may use
    blocked: str = ""  # why an All request fails on this node ("" when it does not)
    counters: dict[CounterKey, Fraction] = field(default_factory=dict)  # the shared counters of the usable pools
    invalid: str = ""  # the first invalid pool: an allocation that fails on the node fails for it (Allocate)


def pool_id(spec: dict[str, Any]) -> tuple[str, str]:
    return str(spec.get("driver") or ""), str(dig(spec, "pool", "name") or "")


def _generation(spec: dict[str, Any]) -> int:
    return integer(dig(spec, "pool", "generation")) or 0


def _slice_count(spec: dict[str, Any]) -> int | None:
    count = integer(dig(spec, "pool", "resourceSliceCount"))
    return count if count is not None and count > 0 else None  # absent (a hand-written inventory): trusted


def is_partitionable(spec: dict[str, Any]) -> bool:
    """A slice only the DRAPartitionableDevices allocator reads (GatherPools skips it with the gate off)."""
    return spec.get("perDeviceNodeSelection") is not None or bool(sequence(spec.get("sharedCounters")))


def _duplicate_device(specs: list[dict[str, Any]]) -> str:
    names: Counter[str] = Counter(
        str(device.get("name"))
        for spec in specs
        for device in sequence(spec.get("devices"))
        if isinstance(device, dict)
    )
    return next((f"duplicate device name {name}" for name, count in names.items() if count > 1), "")


def _counter_sets(pool: tuple[str, str], specs: list[dict[str, Any]]) -> tuple[dict[CounterKey, Fraction], str]:
    """getAndValidateCounterSets: every counter of the pool's sets, or why the pool is invalid."""
    counters: dict[CounterKey, Fraction] = {}
    seen: set[str] = set()
    for spec in specs:
        for counter_set in sequence(spec.get("sharedCounters")):
            name = str(mapping(counter_set).get("name") or "")
            if name in seen:
                return {}, f"duplicate counter set name {name}"
            seen.add(name)
            for counter, value in mapping(mapping(counter_set).get("counters")).items():
                found = amount_or_none(mapping(value).get("value"))
                counters[(*pool, name, str(counter))] = found if found is not None else Fraction(0)
    return counters, ""


def _unknown_counter(pool: tuple[str, str], specs: list[dict[str, Any]], counters: dict[CounterKey, Fraction]) -> str:
    """validateDeviceCounterConsumption over every device slice of the pool."""
    sets = {key[2] for key in counters}
    for spec in specs:
        for device in sequence(spec.get("devices")):
            for consumption in sequence(mapping(device).get("consumesCounters")):
                name = str(mapping(consumption).get("counterSet") or "")
                if name not in sets:
                    return f"counter set {name} not found"
                for counter in mapping(mapping(consumption).get("counters")):
                    if (*pool, name, str(counter)) not in counters:
                        return f"counter {counter} not found in counter set {name}"
    return ""


def gather(
    targeting: list[dict[str, Any]],
    everywhere: Callable[[tuple[str, str]], list[dict[str, Any]]],
    partitionable: bool = True,
) -> PoolState:
    """The pools of the slices ``targeting`` a node; ``everywhere`` gives a pool's slices in the whole cluster."""
    pools: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for spec in targeting:
        if not partitionable and is_partitionable(spec):
            continue
        pool = pool_id(spec)
        current = pools.get(pool)
        if current is None or _generation(spec) > _generation(current[0]):
            pools[pool] = [spec]
        elif _generation(spec) == _generation(current[0]):
            current.append(spec)
    usable: list[dict[str, Any]] = []
    counters: dict[CounterKey, Fraction] = {}
    blocked = invalid = ""
    for pool, specs in pools.items():
        generation, wanted = _generation(specs[0]), _slice_count(specs[0])
        whole = specs
        if wanted is not None and len(specs) != wanted:
            cluster = everywhere(pool)
            if any(_generation(spec) > generation for spec in cluster):
                continue  # obsolete: a newer generation is being published
            whole = [spec for spec in cluster if _generation(spec) == generation]
            if len(whole) != wanted:
                blocked = blocked or f"resource pool {pool[0]}/{pool[1]} is currently being updated"
                continue
        device_specs = [s for s in specs if not (partitionable and sequence(s.get("sharedCounters")))]
        problem = _duplicate_device(device_specs)
        found: dict[CounterKey, Fraction] = {}
        if partitionable and not problem:
            found, problem = _counter_sets(pool, [s for s in whole if sequence(s.get("sharedCounters"))])
            problem = problem or _unknown_counter(
                pool, [s for s in whole if not sequence(s.get("sharedCounters"))], found
            )
        if problem:
            invalid = invalid or f"resource pool {pool[0]}/{pool[1]} is currently invalid ({problem})"
            blocked = blocked or invalid
            continue
        usable.extend(device_specs)
        counters.update(found)
    return PoolState(usable, blocked, counters, invalid)
