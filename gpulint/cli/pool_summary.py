"""The node pools as `gpulint inventory` summarises them: size, GPUs per node, limits, what runs now."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.pools.model import NodePool
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import is_extended
from gpulint.kube.wording import first_and_more
from gpulint.lint.world.resolver import Resolver


@dataclass
class PoolRow:
    title: str
    system: str
    name: str
    source: str
    min_size: int | None
    max_size: int | None
    nodes: int
    types: list[str]
    accelerators: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)  # per node: (min, max)
    limits: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)  # resource -> (limit, in use)
    unknown: str = ""  # why its nodes are not all described


def pool_rows(resolver: Resolver) -> list[PoolRow]:
    return [_row(pool) for pool in sorted(resolver.pools, key=lambda p: (p.spec.system, p.spec.name))]


def _row(pool: NodePool) -> PoolRow:
    spec = pool.spec
    accelerators: dict[str, tuple[Fraction, Fraction]] = {}
    for template in pool.templates:
        for name, amount in template.allocatable.items():
            if is_extended(name) and amount > 0 and not name.startswith("vpc.amazonaws.com/"):
                low, high = accelerators.get(name, (amount, amount))
                accelerators[name] = (min(low, amount), max(high, amount))
    unknown = ""
    absent = [name for name in pool.unknown_types if name not in pool.unvouched_types]
    if absent:
        unknown = f"not in the node catalog: {', '.join(absent)}"
    if pool.unvouched_types:
        unvouched = f"no source vouches for: {', '.join(pool.unvouched_types)}"
        unknown = f"{unknown}; {unvouched}" if unknown else unvouched
    if not pool.unknown_types and pool.open_types:
        unknown = "may launch instance types the catalog does not describe"
    return PoolRow(
        pool.title,
        spec.system,
        spec.name,
        spec.file,
        spec.min_size,
        spec.max_size,
        pool.nodes,
        [t.name for t in pool.templates],
        accelerators,
        {name: (limit, pool.in_use(name)) for name, limit in sorted(spec.limits.items())},
        unknown,
    )


def _number(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


def pools_json(rows: list[PoolRow]) -> list[dict[str, Any]]:
    return [
        {
            "system": row.system,
            "name": row.name,
            "source": row.source,
            "minSize": row.min_size,
            "maxSize": row.max_size,
            "nodes": row.nodes,
            "instanceTypes": row.types,
            "acceleratorsPerNode": {
                k: {"min": _number(a), "max": _number(b)} for k, (a, b) in row.accelerators.items()
            },
            "limits": {k: {"limit": _number(a), "inUse": _number(b)} for k, (a, b) in row.limits.items()},
            "unknown": row.unknown or None,
        }
        for row in rows
    ]


def render_pools(rows: list[PoolRow]) -> list[str]:
    if not rows:
        return []
    lines = ["Node pools:"]
    for row in rows:
        size = f"{_size(row.min_size)}..{_size(row.max_size)} nodes, {row.nodes} now"
        gpus = ", ".join(f"{_range(low, high)} {name}" for name, (low, high) in sorted(row.accelerators.items()))
        per_node = f"; per node: {gpus}" if gpus else ""
        limits = ", ".join(
            f"{name} {format_amount(limit)} ({format_amount(used)} in use)"
            for name, (limit, used) in row.limits.items()
        )
        shown = first_and_more(row.types, 4)
        lines.append(f"  {row.title}: {size}{per_node}" + (f"; limits: {limits}" if limits else ""))
        if shown:
            lines.append(f"    instance types: {shown}")
        if row.unknown:
            lines.append(f"    {row.unknown}")
    return lines


def _size(value: int | None) -> str:
    return "?" if value is None else str(value)


def _range(low: Fraction, high: Fraction) -> str:
    return format_amount(low) if low == high else f"{format_amount(low)}-{format_amount(high)}"
