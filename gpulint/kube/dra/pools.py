"""Resource pools as the allocator gathers them for one node (dynamic-resource-allocation
structured/internal/stable/pools_stable.go GatherPools).

A pool is the slices of one driver and pool name. Only its newest generation counts; it is
complete when the slices at that generation number ``resourceSliceCount`` (counted over the
whole cluster when the node sees only some of them); a pool with a newer generation elsewhere is
obsolete for this node. An incomplete pool gives no devices, and fails every ``allocationMode:
All`` request on the node ("is currently being updated"); a pool whose slices repeat a device
name is invalid and does the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, sequence


@dataclass(frozen=True)
class PoolState:
    usable: list[dict[str, Any]]  # the slice specs whose devices the node may use
    blocked: str = ""  # why an All request fails on this node ("" when it does not)


def _pool_id(spec: dict[str, Any]) -> tuple[str, str]:
    return str(spec.get("driver") or ""), str(dig(spec, "pool", "name") or "")


def _generation(spec: dict[str, Any]) -> int:
    return integer(dig(spec, "pool", "generation")) or 0


def _slice_count(spec: dict[str, Any]) -> int | None:
    count = integer(dig(spec, "pool", "resourceSliceCount"))
    return count if count is not None and count > 0 else None  # absent (a hand-written inventory): trusted


def _duplicate_device(specs: list[dict[str, Any]]) -> str:
    names: Counter[str] = Counter(
        str(device.get("name"))
        for spec in specs
        for device in sequence(spec.get("devices"))
        if isinstance(device, dict)
    )
    return next((name for name, count in names.items() if count > 1), "")


def gather(
    targeting: list[dict[str, Any]],
    everywhere: Callable[[tuple[str, str]], list[dict[str, Any]]],
) -> PoolState:
    """The pools of the slices ``targeting`` a node; ``everywhere`` gives a pool's slices in the whole cluster."""
    pools: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for spec in targeting:
        pool = _pool_id(spec)
        current = pools.get(pool)
        if current is None or _generation(spec) > _generation(current[0]):
            pools[pool] = [spec]
        elif _generation(spec) == _generation(current[0]):
            current.append(spec)
    usable: list[dict[str, Any]] = []
    blocked = ""
    for pool, specs in pools.items():
        generation, wanted = _generation(specs[0]), _slice_count(specs[0])
        if wanted is not None and len(specs) != wanted:
            cluster = everywhere(pool)
            if any(_generation(spec) > generation for spec in cluster):
                continue  # obsolete: a newer generation is being published
            if sum(1 for spec in cluster if _generation(spec) == generation) != wanted:
                blocked = blocked or f"resource pool {pool[0]}/{pool[1]} is currently being updated"
                continue
        duplicate = _duplicate_device(specs)
        if duplicate:
            blocked = (
                blocked or f"resource pool {pool[0]}/{pool[1]} is currently invalid (duplicate device name {duplicate})"
            )
            continue
        usable.extend(specs)
    return PoolState(usable, blocked)
