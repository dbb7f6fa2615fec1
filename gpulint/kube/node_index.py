"""Which nodes a set of node-selector requirements matches, found through an index of label values.

Matching each requirement against each node costs nodes x requirements: a valid pod of 1,000 terms
naming nodes by hostname (which the model cannot group) took seconds against 1,000 nodes, and a
webhook review past its deadline is admitted unchecked under ``failurePolicy: Ignore`` (issue #33).
Through the index, ``In`` and ``Exists`` cost what they select, and ``NotIn`` and ``DoesNotExist``
what they remove from the nodes still in the running; other operators (``Gt``, ``Lt``, an unknown
one) and other fields are asked of each node still in the running, by the requirement itself, so the
answer is by construction the one per-node matching gives (tests/test_node_index.py compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


class Labelled(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


class Selecting(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def operator(self) -> str: ...

    @property
    def values(self) -> tuple[str, ...]: ...

    @property
    def field(self) -> bool: ...


Fallback = Callable[[int], bool]  # a node's position -> whether this requirement matches it
R = TypeVar("R", bound=Selecting)


@dataclass(frozen=True)
class LabelIndex:
    everyone: frozenset[int]  # every node's position
    by_value: dict[str, dict[str, frozenset[int]]]  # label key -> value -> the nodes with it
    having: dict[str, frozenset[int]]  # label key -> the nodes that have it
    by_name: dict[str, frozenset[int]]  # metadata.name -> the node (or nodes) of that name

    @classmethod
    def of(cls, nodes: Sequence[Labelled]) -> LabelIndex:
        by_value: dict[str, dict[str, set[int]]] = {}
        by_name: dict[str, set[int]] = {}
        for position, node in enumerate(nodes):
            by_name.setdefault(node.name, set()).add(position)
            for key, value in node.labels.items():
                by_value.setdefault(key, {}).setdefault(value, set()).add(position)
        return cls(
            frozenset(range(len(nodes))),
            {key: {value: frozenset(found) for value, found in values.items()} for key, values in by_value.items()},
            {key: frozenset().union(*values.values()) for key, values in by_value.items()},
            {name: frozenset(found) for name, found in by_name.items()},
        )

    def select(
        self, requirements: Iterable[R], candidates: frozenset[int], fallback: Callable[[R], Fallback]
    ) -> frozenset[int]:
        """The ``candidates`` every requirement matches: the narrowing ones first, then those that remove
        nodes, then those asked node by node (``fallback(requirement)`` answers for one position)."""
        ordered = sorted(requirements, key=_order)
        for requirement in ordered:
            if not candidates:
                break
            candidates = self._narrowed(requirement, candidates, fallback)
        return candidates

    def _narrowed(self, r: R, candidates: frozenset[int], fallback: Callable[[R], Fallback]) -> frozenset[int]:
        if r.field:
            if r.key == "metadata.name" and r.operator in ("In", "NotIn"):
                named = self._union(self.by_name, r.values)
                return candidates & named if r.operator == "In" else candidates - named
        elif r.operator in ("In", "NotIn"):
            with_value = self._union(self.by_value.get(r.key, {}), r.values)
            return candidates & with_value if r.operator == "In" else candidates - with_value
        elif r.operator in ("Exists", "DoesNotExist"):
            having = self.having.get(r.key, frozenset())
            return candidates & having if r.operator == "Exists" else candidates - having
        matches = fallback(r)
        return frozenset(position for position in candidates if matches(position))

    @staticmethod
    def _union(table: Mapping[str, frozenset[int]], values: Iterable[str]) -> frozenset[int]:
        found: set[int] = set()
        for value in set(values):
            found.update(table.get(value, ()))
        return frozenset(found)


def _order(r: Selecting) -> int:
    if r.operator in ("In", "Exists") and not (r.field and r.key != "metadata.name"):
        return 0  # narrows to what it names
    if r.operator in ("NotIn", "DoesNotExist") and not (r.field and r.key != "metadata.name"):
        return 1
    return 2  # asked of each node still in the running
