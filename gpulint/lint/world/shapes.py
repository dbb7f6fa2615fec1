"""Verdicts on a pod shape, kept for one webhook snapshot (issue #31).

The reviews of one inventory snapshot repeat a few pod shapes (a Deployment's replicas, a Job's
pods: the same spec under another name), and the scheduler's verdicts on a pod read its spec, its
kind and the snapshot alone. ``PodShapes`` keeps them by a canonical key of the spec (its JSON with
sorted keys), bounded, in the ``ReviewSnapshot`` that owns it: dropped with the snapshot, never
shared by two. Only a resolver whose linted set holds Pods alone reads it (``Resolver.pod_shapes``):
no fact the resolver works out of the linted set then depends on the reviewed object, so the
verdict depends on nothing the key leaves out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from gpulint.kube.lru import LRU
from gpulint.kube.workloads import ObjectFacts, part_fact

_T = TypeVar("_T")

SHAPES = 512  # verdicts kept per snapshot (each a few small records; measured in docs/performance.md)
# A spec whose canonical form is longer is judged afresh at each review: the key is held with its verdict, and a
# client's megabyte-long pod must not stay in memory for the snapshot's life.
MAX_SHAPE_CHARS = 16_384
# made once: json.dumps with any option builds an encoder per call, which cost as much as the encoding
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


class PodShapes:
    """A snapshot's verdicts by pod shape: bounded, thread-safe (the server's reviews run in threads)."""

    def __init__(self, size: int = SHAPES) -> None:
        # each value boxed in a 1-tuple: the LRU reads None as absent, and a pod that asks for no GPU is None
        self._kept: LRU[Hashable, tuple[Any]] = LRU(size)

    def __len__(self) -> int:
        return len(self._kept)

    def get_or_compute(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        return self._kept.get_or_compute(key, lambda: (compute(),))[0]


def spec_shape(spec: object, facts: ObjectFacts | None) -> str | None:
    """The canonical key of a pod spec (once per spec while its object is checked); None: too long to keep, or
    not JSON (an object parsed from YAML may hold dates)."""
    return part_fact(facts, spec, ("pod shape",), _spec_shape, spec)


def _spec_shape(spec: object) -> str | None:
    if not _small(spec, MAX_SHAPE_CHARS):
        return None  # not encoded at all: a hostile megabyte pod is not turned into a megabyte string per review
    try:
        text = _CANONICAL.encode(spec)
    except (TypeError, ValueError, RecursionError):
        return None
    return text if len(text) <= MAX_SHAPE_CHARS else None


def of_shape(
    shapes: PodShapes | None,
    key: tuple[Hashable, ...],
    specs: tuple[object, ...],
    facts: ObjectFacts | None,
    work: Callable[..., _T],
    *args: Any,
) -> _T:
    """``work(*args)``, kept in ``shapes`` under ``key`` and the canonical form of each of ``specs`` (what
    ``work`` reads of the pod: ``key`` holds the rest); worked out afresh when ``shapes`` is None."""
    if shapes is None:
        return work(*args)
    found = tuple(spec_shape(spec, facts) for spec in specs)
    if None in found:
        return work(*args)
    return shapes.get_or_compute((*key, *found), lambda: work(*args))


def _small(value: object, budget: int) -> bool:
    """Whether ``value``'s strings and items come to at most ``budget`` characters, walked only that far."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item) + 2
        elif isinstance(item, dict):
            budget -= 2 * len(item)
            for key in item:
                budget -= len(key) + 3 if isinstance(key, str) else 8
            stack.extend(item.values())
        elif isinstance(item, list):
            budget -= len(item) + 1
            stack.extend(item)
        else:
            budget -= 8
        if budget < 0:
            return False
    return True
