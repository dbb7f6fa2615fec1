"""Packing a gang by counts: identical nodes and identical pods are grouped, and placement is
decided on the counts, never pod by pod.

The answer is one of three, and each is a proof or an admission:

* FITS - for one pod shape on existing nodes, exact (a node holds ``min(floor(free / request))``
  copies and nodes are independent); otherwise a placement the greedy packer or the search built,
  returned with the decision (which kind of node, how many of them, how many pods of each shape).
* UNSATISFIABLE - a necessary condition fails (copies of a shape, a resource's demand against
  what the nodes the pods may use can offer, pods that need more than half a node), or the
  exact search ran to completion without a placement.
* UNKNOWN - the search ran out of its work budget. Never reported as unsatisfiable.

Nodes a pool may still add are node kinds tagged with the pool: all its kinds share what the pool
may still add (``PoolLimit``: a node count, and the capacity its limits leave), so a pool of several
instance types is packed exactly, never as every type at its full count. The necessary conditions
see a pool through ``_Problem._offer``, an upper bound on what any mix of its nodes offers.

Multi-dimensional bin packing is NP-hard, so only the search can take long; it is bounded by
``WORK_BUDGET`` steps per verdict, shared by every domain the verdict looks at.
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Any

from gpulint.kube.wording import first_and_more

# Steps (node configurations tried) the exact search may spend on one gang verdict, across all
# of its topology domains: about 0.25 s of CPU (5 us a step; ~0.35 s with node pools, whose use
# is tracked), so a webhook review stays quick.
WORK_BUDGET = 50_000
SUBSET_BOUND_WORK = 20_000  # the resource bound is checked for every subset of shapes while
# node kinds x 2^shapes stays under this (six shapes on 300 kinds); otherwise for all shapes at once
SLOTS = "pods"  # the per-node pod limit (allocatable `pods`), a resource every pod takes one of


Vector = tuple[int, ...]  # per resource, in whole units


class Outcome(enum.Enum):
    FITS = "fits"
    UNSATISFIABLE = "unsatisfiable"
    UNKNOWN = "unknown"


@dataclass
class Budget:
    """Work left for one verdict; passed down explicitly so concurrent verdicts never share it."""

    remaining: int = WORK_BUDGET

    def spend(self) -> None:
        self.remaining -= 1
        if self.remaining < 0:
            raise _OutOfBudget


class _OutOfBudget(Exception):
    pass


@dataclass(frozen=True)
class Shape:
    """Identical pods: the same requests and the same nodes passing their filters."""

    name: str  # for messages: the member role(s)
    requests: tuple[tuple[str, Fraction], ...]
    count: int


@dataclass(frozen=True)
class NodeKind:
    """Identical nodes, as far as the gang can tell: the same allocatable amounts of the
    resources the gang requests, counted in that resource's unit (see ``request_units``), the
    same pod limit, and the same shapes passing the filters on them. A node a pool may still add
    names the pool and what one node of it counts against the pool's limits (its capacity)."""

    amounts: tuple[tuple[str, int], ...]  # (resource, whole units), sorted by resource
    slots: int | None  # allocatable `pods`; None: no limit
    allowed: frozenset[int]  # indexes into the shapes
    pool: str = ""  # "": a node that exists
    cost: tuple[tuple[str, Fraction], ...] = ()  # (limited resource, this node's capacity of it)

    def allowing(self, allowed: frozenset[int]) -> NodeKind:
        return NodeKind(self.amounts, self.slots, allowed, self.pool, self.cost)


@dataclass(frozen=True)
class PoolLimit:
    """What a pool may still add, shared by every kind of node it adds: a node count (None: no
    maximum) and, per resource its limits name, the capacity left (Karpenter's spec.limits)."""

    nodes: int | None
    limits: tuple[tuple[str, Fraction], ...] = ()


@dataclass(frozen=True)
class Placed:
    """Part of a placement: ``nodes`` nodes of ``kind``, each holding ``pods[i]`` pods of shape i."""

    kind: NodeKind
    nodes: int
    pods: tuple[int, ...]


@dataclass
class Decision:
    outcome: Outcome
    copies: list[int]  # per shape, the copies the nodes hold with no other shape present (at most)
    reason: str = ""
    placement: tuple[Placed, ...] = ()  # FITS: where every pod goes


def request_units(shapes: Sequence[Shape]) -> dict[str, Fraction]:
    """Per resource, the greatest common divisor of the shapes' requests: every sum of requests
    is a multiple of it, so a capacity counted in whole units admits exactly the same pods, and
    nodes a few KiB of memory apart become one kind."""
    amounts: dict[str, list[Fraction]] = {}
    for shape in shapes:
        for resource, amount in shape.requests:
            if amount > 0 and resource != SLOTS:
                amounts.setdefault(resource, []).append(Fraction(amount))
    units = {}
    for resource, values in sorted(amounts.items()):
        common = math.lcm(*(value.denominator for value in values))
        units[resource] = Fraction(math.gcd(*(int(value * common) for value in values)), common)
    return units


def node_kind(
    allocatable: Mapping[str, Fraction],
    units: Mapping[str, Fraction],
    allowed: frozenset[int] = frozenset(),
    pool: str = "",
    cost: Mapping[str, Fraction] | None = None,
) -> NodeKind:
    amounts = tuple((r, math.floor(allocatable.get(r, Fraction(0)) / unit)) for r, unit in sorted(units.items()))
    slots = math.floor(allocatable[SLOTS]) if SLOTS in allocatable else None
    return NodeKind(amounts, slots, allowed, pool, tuple(sorted((cost or {}).items())))


NO_LIMIT = 1_000_000  # copies of a pod that requests nothing on a node without a pod limit


def copies_on_kind(shape: Shape, kind: NodeKind, units: Mapping[str, Fraction]) -> int:
    """Copies of one shape a node of ``kind`` holds: its most constraining resource, and its pod limit."""
    return _fit(_in_units(shape, units), _capacity(kind, NO_LIMIT))


def decide(
    shapes: list[Shape], kinds: Mapping[NodeKind, int], budget: Budget, pools: Mapping[str, PoolLimit] | None = None
) -> Decision:
    """Can every pod of every shape be placed at once on these nodes (``kinds``: how many of each,
    in the units of ``request_units(shapes)``; a kind of a pool: at most that many, all the pool's
    kinds together within ``pools[name]``)?"""
    units = request_units(shapes)
    order = _largest_first([_in_units(shape, units) for shape in shapes], kinds)
    position = {old: new for new, old in enumerate(order)}
    renumbered: Counter[NodeKind] = Counter()
    for kind, count in kinds.items():
        renumbered[kind.allowing(frozenset(position[i] for i in kind.allowed if i in position))] += count
    problem = _Problem.build([shapes[i] for i in order], renumbered, pools or {})
    held = problem.copies()
    copies = [held[position[i]] for i in range(len(shapes))]

    def placed(found: list[tuple[int, Vector, int]]) -> tuple[Placed, ...]:
        """The problem's placement, in the caller's shape numbering, each class's nodes taken from the
        kinds merged into it in turn."""
        left = {k: [count for _, count in c.kinds] for k, c in enumerate(problem.classes)}
        out = []
        for klass, config, nodes in found:
            pods = tuple(config[position[i]] for i in range(len(shapes)))
            for index, (kind, _) in enumerate(problem.classes[klass].kinds):
                taken = min(nodes, left[klass][index])
                if taken:
                    out.append(Placed(kind.allowing(frozenset(order[i] for i in kind.allowed)), taken, pods))
                    left[klass][index] -= taken
                    nodes -= taken
        return tuple(out)

    for index, shape in enumerate(shapes):
        if copies[index] < shape.count:
            who = f"{shape.name}: " if shape.name not in ("", "pod") else ""  # never "pod: 6 of 7 fit"
            what = "pods " if not who else ""
            fit = (
                f"{copies[index]} of {shape.count}"
                if not problem.pooled
                else f"at most {copies[index]} of {shape.count}"
            )
            return Decision(Outcome.UNSATISFIABLE, copies, f"{who}{fit} {what}fit")
    if sum(1 for shape in shapes if shape.count) <= 1 and not problem.pooled:
        return Decision(Outcome.FITS, copies, placement=placed(problem.one_shape()))  # exact: nodes are independent
    reason = problem.bound_violated()
    if reason:
        return Decision(Outcome.UNSATISFIABLE, copies, reason)
    found = problem.greedy()
    if found is not None:
        return Decision(Outcome.FITS, copies, placement=placed(found))
    try:
        found = problem.search(budget)
    except _OutOfBudget:
        return Decision(Outcome.UNKNOWN, copies, "could not decide within the work budget")
    if found is not None:
        return Decision(Outcome.FITS, copies, placement=placed(found))
    return Decision(Outcome.UNSATISFIABLE, copies, "no placement of all members")


def _largest_first(requests: list[Vector], kinds: Mapping[NodeKind, int]) -> list[int]:
    """Shape indexes by their largest share of the biggest node: the search fills nodes with big
    pods first, where a wrong choice is found out soonest."""
    peaks = [max(column, default=0) for column in zip(*(_capacity(kind, 0) for kind in kinds))]

    def share(request: Vector) -> float:
        return max((need / peak for need, peak in zip(request, peaks) if peak), default=0.0)

    return sorted(range(len(requests)), key=lambda i: (-share(requests[i]), i))


def _in_units(shape: Shape, units: Mapping[str, Fraction]) -> Vector:
    """A shape's requests in whole units (the resources of ``units``, sorted), then its pod slots:
    one, or what it names as the `pods` resource."""
    asked = dict(shape.requests)
    slots = max(1, math.ceil(asked.get(SLOTS, Fraction(0))))
    return (*(int(asked.get(r, Fraction(0)) / unit) for r, unit in sorted(units.items())), slots)


def _capacity(kind: NodeKind, unlimited: int) -> Vector:
    return (*(amount for _, amount in kind.amounts), kind.slots if kind.slots is not None else unlimited)


# --------------------------------------------------------------------------- the integer problem


@dataclass
class _Class:
    capacity: Vector
    count: int  # for a pool's kind: at most this many (all the pool's kinds together within its caps)
    allowed: frozenset[int]  # shapes with at least one copy fitting here
    fits: list[int]  # per shape, copies of it alone (0 when not allowed)
    kinds: list[tuple[NodeKind, int]]  # the kinds merged here and how many of each, for the placement
    pool: int = -1  # index into _Problem.caps; -1: nodes that exist
    cost: tuple[int, ...] = ()  # against the pool's caps: one node, then its capacity of each limited resource


Placement = list[tuple[int, Vector, int]]  # (class, configuration of one node, nodes with it)


@dataclass
class _Problem:
    """Requests and capacities in whole units of each resource, the pod limit as the last
    resource (every pod takes at least one slot). Each pool has caps: its node count, then the
    capacity left under each of its limits; a node of its kinds costs one node and its capacity."""

    names: list[str]
    units: list[Fraction]  # what one unit of each resource is (the pod slot: one)
    shapes: list[Shape]
    demand: list[int]
    requests: list[Vector]
    classes: list[_Class] = field(default_factory=list)
    caps: list[tuple[int, ...]] = field(default_factory=list)  # per pool, in whole units of each cap
    # filled by _suffix() for the search: per class, its room and what the classes after it hold
    _room: list[list[int]] = field(default_factory=list)
    _room_after: list[list[int]] = field(default_factory=list)
    _copies_after: list[list[int]] = field(default_factory=list)
    # and with pools, by _pool_suffix(): per position, per pool (and per cap)
    _plain_after: list[list[int]] = field(default_factory=list)
    _pool_sum_after: list[list[list[int]]] = field(default_factory=list)
    _pool_best_after: list[list[list[list[Any]]]] = field(default_factory=list)  # Fraction, then float

    @classmethod
    def build(
        cls, shapes: list[Shape], kinds: Mapping[NodeKind, int], pools: Mapping[str, PoolLimit] | None = None
    ) -> _Problem:
        """``kinds`` counted in ``request_units(shapes)``; ``pools``: the caps of the pools the kinds
        name (a pool not in it: no cap but the kinds' counts)."""
        units = request_units(shapes)
        requests = [_in_units(shape, units) for shape in shapes]
        names = [*sorted(units), SLOTS]
        problem = cls(
            names,
            [*(units[r] for r in sorted(units)), Fraction(1)],
            shapes,
            [shape.count for shape in shapes],
            requests,
        )
        total = sum(shape.count for shape in shapes)  # a node without a pod limit: never binding
        pool_names = sorted({kind.pool for kind in kinds if kind.pool})
        limited: list[list[str]] = []
        scales: list[list[int]] = []
        for name in pool_names:
            limit = (pools or {}).get(name, PoolLimit(None))
            nodes = total if limit.nodes is None else min(limit.nodes, total)  # never a node more than pods
            limited.append([r for r, _ in sorted(limit.limits)])
            caps = (Fraction(nodes), *(max(Fraction(a), Fraction(0)) for _, a in sorted(limit.limits)))
            scales.append(_scales(caps, kinds, name, limited[-1]))
            problem.caps.append(tuple(_whole(caps, scales[-1])))
        merged: Counter[tuple[Vector, frozenset[int], int, tuple[int, ...]]] = Counter()
        examples: dict[tuple[Vector, frozenset[int], int, tuple[int, ...]], list[tuple[NodeKind, int]]] = {}
        for kind, count in kinds.items():
            pool = pool_names.index(kind.pool) if kind.pool else -1
            cost: tuple[int, ...] = ()
            if pool >= 0:
                costs = dict(kind.cost)
                raw = (Fraction(1), *(Fraction(costs.get(r, 0)) for r in limited[pool]))
                cost = tuple(_whole(raw, scales[pool]))
            key = (_capacity(kind, total), kind.allowed, pool, cost)
            merged[key] += count
            examples.setdefault(key, []).append((kind, count))
        for key, count in merged.items():
            capacity, allowed, pool, cost = key
            fits = [_fit(request, capacity) if index in allowed else 0 for index, request in enumerate(requests)]
            usable = frozenset(index for index in allowed if fits[index] > 0)
            if pool >= 0:
                count = min(count, _afford(problem.caps[pool], cost, None))
            if usable and count:
                problem.classes.append(_Class(capacity, count, usable, fits, examples[key], pool, cost))
        # big nodes first: the search finds placements sooner, and its order is deterministic
        peaks = [max((c.capacity[r] for c in problem.classes), default=0) for r in range(len(names))]
        problem.classes.sort(
            key=lambda c: (
                sum(v / p for v, p in zip(c.capacity, peaks) if p),
                c.capacity,
                sorted(c.allowed),
                -c.pool,
                c.cost,
            ),
            reverse=True,
        )
        return problem

    @property
    def pooled(self) -> bool:
        return any(c.pool >= 0 for c in self.classes)

    def copies(self) -> list[int]:
        """Per shape, the copies the nodes hold with no other shape present (for a pool: at most)."""
        return [self._offer([c.fits[index] for c in self.classes]) for index in range(len(self.shapes))]

    def _offer(self, values: Sequence[int]) -> int:
        """At most the sum of ``values`` (one per class, per node) over the nodes that exist and any
        nodes the pools may add. A pool's part is bounded by its kinds at their full counts, and per
        cap by the cap times the best value per unit of it (its node count: the best node)."""
        total = sum(c.count * value for c, value in zip(self.classes, values) if c.pool < 0)
        for pool, caps in enumerate(self.caps):
            members = [(c, value) for c, value in zip(self.classes, values) if c.pool == pool and value > 0]
            if not members:
                continue
            best = sum(c.count * value for c, value in members)
            for index, cap in enumerate(caps):
                if all(c.cost[index] > 0 for c, _ in members):
                    best = min(best, math.floor(cap * max(Fraction(value, c.cost[index]) for c, value in members)))
            total += best
        return total

    def _show(self, resource: int, amount: int) -> str:
        value = amount * self.units[resource]
        return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"

    def _names(self, shapes: Sequence[int], shown: int = 3) -> str:
        names = list(dict.fromkeys(self.shapes[i].name for i in shapes))  # two shapes of one role: once
        return first_and_more(names, shown, sep=" and ")

    def _pods(self, shapes: Sequence[int]) -> str:
        """ "worker pods", or just "pods" for members named only "pod" (never "pod pods")."""
        names = self._names(shapes)
        return "pods" if names in ("", "pod") else f"{names} pods"

    # ----------------------------------------------------------------------- necessary conditions

    def bound_violated(self) -> str:
        """A proof that no placement exists, or ""."""
        active = [i for i, count in enumerate(self.demand) if count]
        subsets: list[tuple[int, ...]] = [tuple(active)]
        if len(self.classes) << len(active) <= SUBSET_BOUND_WORK:
            subsets = [s for size in range(1, len(active) + 1) for s in combinations(active, size)]
        for subset in subsets:
            for resource in range(len(self.names)):
                need = sum(self.demand[i] * self.requests[i][resource] for i in subset)
                if not need:
                    continue
                offer = self._offer([self._usable(c, subset, resource) for c in self.classes])
                if need > offer:
                    who = "the gang" if len(subset) == len(active) else self._pods(subset)
                    name = self.names[resource]
                    where = "the domain offers" if who == "the gang" else "the nodes they may use offer"
                    return (
                        f"{who} need{'s' if who == 'the gang' else ''} {self._show(resource, need)} {name}; "
                        f"{where} {'at most ' if self.pooled else ''}{self._show(resource, offer)}"
                    )
        for resource in range(len(self.names)):
            reason = self._halves_violated(active, resource) or self._bins_violated(active, resource)
            if reason:
                return reason
        return ""

    def _usable(self, c: _Class, subset: tuple[int, ...], resource: int) -> int:
        """What pods of ``subset`` can use of a node's ``resource``: its capacity, and no more
        than the copies of each that fit there."""
        most = sum(c.fits[i] * self.requests[i][resource] for i in subset if i in c.allowed)
        return min(c.capacity[resource], most)

    def _halves_violated(self, active: list[int], resource: int) -> str:
        """Pods that need more than half of ``resource`` on every node they may use: one per node."""
        big = [
            i
            for i in active
            if self.requests[i][resource]
            and all(2 * self.requests[i][resource] > c.capacity[resource] for c in self.classes if i in c.allowed)
        ]
        if len(big) < 2:
            return ""  # one shape alone is covered by its copies
        pods = sum(self.demand[i] for i in big)
        nodes = self._offer([1 if c.allowed & set(big) else 0 for c in self.classes])
        if pods <= nodes:
            return ""
        return (
            f"{pods} {self._pods(big)} each need more than half of a node's {self.names[resource]}, so at most "
            f"one per node, and {nodes} nodes can take them"
        )

    def _bins_violated(self, active: list[int], resource: int) -> str:
        """Martello and Toth's L2 lower bound on the bins of one-dimensional bin packing, for
        ``resource`` alone, every node enlarged to the largest: a relaxation, so more bins
        than nodes is a proof."""
        nodes = [c for c in self.classes if c.allowed & set(active)]
        size = max((c.capacity[resource] for c in nodes), default=0)
        items = [(self.requests[i][resource], self.demand[i]) for i in active if self.requests[i][resource]]
        if not size or not items:
            return ""
        available = self._offer([1 if c.allowed & set(active) else 0 for c in self.classes])
        needed = max(_l2(items, size, k) for k in {0, *(w for w, _ in items if 2 * w <= size)})
        if needed <= available:
            return ""
        return (
            f"the pods' {self.names[resource]} requests cannot be packed onto fewer than {needed} nodes of "
            f"{self._show(resource, size)}; {available} nodes can take them"
        )

    # ----------------------------------------------------------------------- one shape

    def one_shape(self) -> Placement:
        """The placement of the one shape with pods, nodes filled in order (exact without pools)."""
        shape = next((i for i, count in enumerate(self.demand) if count), None)
        if shape is None:
            return []
        left, out = self.demand[shape], []
        for k, c in enumerate(self.classes):
            per_node = c.fits[shape]
            if not left or not per_node:
                continue
            nodes = min(c.count, left // per_node)
            if nodes:
                out.append((k, _one(len(self.shapes), shape, per_node), nodes))
                left -= nodes * per_node
            if left and nodes < c.count and left < per_node:
                out.append((k, _one(len(self.shapes), shape, left), 1))
                left = 0
        return out

    # ----------------------------------------------------------------------- greedy by counts

    def greedy(self) -> Placement | None:
        """Largest (or most constrained) shape first, each on the best-fitting group of identical
        nodes, a whole group at a time. A success is a placement; a failure proves nothing."""
        by_size = sorted(range(len(self.shapes)), key=lambda i: (-self._dominant(i), i))
        by_scarcity = sorted(
            range(len(self.shapes)),
            key=lambda i: (sum(c.count for c in self.classes if i in c.allowed), -self._dominant(i)),
        )
        for order in (by_size, by_scarcity):
            for contention_first in (True, False):
                found = self._greedy(order, contention_first)
                if found is not None:
                    return found
        return None

    def _dominant(self, shape: int) -> float:
        """The request's largest share of the biggest node offering that resource."""
        peaks = [
            max((c.capacity[r] for c in self.classes if shape in c.allowed), default=0) for r in range(len(self.names))
        ]
        return max((q / p for q, p in zip(self.requests[shape], peaks) if p), default=0.0)

    def _greedy(self, order: list[int], contention_first: bool) -> Placement | None:
        # states: [class index, remaining capacity, how many nodes are in exactly this state, what they hold]
        empty = (0,) * len(self.shapes)
        states: list[list] = [[k, c.capacity, c.count, empty] for k, c in enumerate(self.classes)]
        spent = [[0] * len(caps) for caps in self.caps]
        pending = {i for i in order if self.demand[i]}
        for shape in order:
            left = self.demand[shape]
            pending.discard(shape)
            if not left:
                continue
            # the states ranked once per shape, then filled in turn: O(states log states) a shape
            ranked = []
            for state in states:
                klass = self.classes[state[0]]
                per_node = min(_fit(self.requests[shape], state[1]), left) if shape in klass.allowed else 0
                if per_node:
                    leftover = sum(
                        (have - per_node * need) / full
                        for have, need, full in zip(state[1], self.requests[shape], klass.capacity)
                        if full
                    )
                    contention = len(pending & klass.allowed)
                    ranked.append(((contention, leftover) if contention_first else (leftover, contention), state))
            ranked.sort(key=lambda item: item[0])
            filled: list[list] = []
            for _score, state in ranked:
                if not left:
                    break
                left = self._fill(filled, state, shape, left, spent)
            if left:
                return None
            states = [state for state in states + filled if state[2]]
        return [(state[0], state[3], state[2]) for state in states if any(state[3])]

    def _fill(self, states: list[list], state: list, shape: int, left: int, spent: list[list[int]]) -> int:
        """Put copies of ``shape`` on the nodes of ``state``, each node as full as it gets; a pool's
        empty nodes only while the pool can still add them."""
        request = self.requests[shape]
        klass = self.classes[state[0]]
        per_node = min(_fit(request, state[1]), left)
        fresh = klass.pool >= 0 and not any(state[3])
        room = _afford(self.caps[klass.pool], klass.cost, spent[klass.pool]) if fresh else state[2]
        nodes = min(state[2], left // per_node, room)
        config = _one(len(self.shapes), shape, per_node)
        if nodes:
            state[2] -= nodes
            states.append([state[0], _minus(state[1], request, per_node), nodes, _plus(state[3], config)])
            left -= nodes * per_node
            if fresh:
                _charge(spent[klass.pool], klass.cost, nodes)
        if left and state[2] and left < per_node and room > nodes:  # the rest on one more node
            state[2] -= 1
            states.append(
                [state[0], _minus(state[1], request, left), 1, _plus(state[3], _one(len(config), shape, left))]
            )
            left = 0
            if fresh:
                _charge(spent[klass.pool], klass.cost, 1)
        return left

    # ----------------------------------------------------------------------- exact, bounded search

    def search(self, budget: Budget) -> Placement | None:
        """Node by node, each node taking a maximal configuration (no pod still waiting fits
        beside it), identical nodes in non-increasing order: the lexicographically greatest
        placement has both properties, so nothing is missed. A pool's node may also stay empty
        (using it costs the pool a node), which ends its group. Iterative: gangs of thousands.
        Positions that failed are remembered with the greatest bound they failed under: the same
        demand and pool use at the same node under a bound no greater fails too."""
        self._suffix()
        demand = list(self.demand)
        spent = [[0] * len(caps) for caps in self.caps]
        failed: dict[tuple[int, int, tuple[Any, ...]], Vector | None] = {}
        if not self._may_fit(demand, 0, 0, spent):
            return None
        stack: list[_Frame] = [_Frame(self._configs(0, demand, None, budget, spent), 0, 0, None, _state(demand, spent))]
        while stack:
            frame = stack[-1]
            klass = self.classes[frame.klass]
            if frame.applied is not None:
                _apply(demand, frame.applied, -1)
                if klass.pool >= 0 and any(frame.applied):
                    _charge(spent[klass.pool], klass.cost, -1)
                frame.applied = None
            config = next(frame.configs, None)
            if config is None:
                failed[(frame.klass, frame.used, frame.state)] = frame.bound
                stack.pop()
                continue
            budget.spend()
            _apply(demand, config, +1)
            if klass.pool >= 0 and any(config):
                _charge(spent[klass.pool], klass.cost, 1)
            frame.applied = config
            if not any(demand):
                return _grouped([(f.klass, f.applied) for f in stack if f.applied is not None and any(f.applied)])
            index, used = frame.klass, frame.used + 1
            bound: Vector | None = config
            if not any(config) or used == klass.count:
                index, used, bound = index + 1, 0, None  # the rest of this group can take nothing more
            if index == len(self.classes) or not self._may_fit(demand, index, used, spent):
                continue
            key = (index, used, _state(demand, spent))
            if key in failed and _no_greater(bound, failed[key]):
                continue
            stack.append(_Frame(self._configs(index, demand, bound, budget, spent), index, used, bound, key[2]))
        return None

    def _suffix(self) -> None:
        """Per position in the node order, what all later groups hold: for pruning in O(shapes + resources)."""
        shapes, resources = len(self.shapes), len(self.names)
        self._copies_after = [[0] * shapes for _ in range(len(self.classes) + 1)]
        self._room_after = [[0] * resources for _ in range(len(self.classes) + 1)]
        everyone = tuple(range(shapes))
        self._room = [[self._usable(c, everyone, r) for r in range(resources)] for c in self.classes]
        for k in range(len(self.classes) - 1, -1, -1):
            c = self.classes[k]
            self._copies_after[k] = [a + c.count * f for a, f in zip(self._copies_after[k + 1], c.fits)]
            self._room_after[k] = [a + c.count * u for a, u in zip(self._room_after[k + 1], self._room[k])]
        if self.caps:
            self._pool_suffix()

    def _pool_suffix(self) -> None:
        """For pruning with pools: per position, what the later nodes that exist hold, what each pool's
        later kinds hold at their full counts, and the most a node of them offers per unit of each of
        the pool's caps (None: a kind that costs nothing of that cap offers some)."""
        dims = len(self.shapes) + len(self.names)
        plain = [0] * dims
        sums = [[0] * dims for _ in self.caps]
        best: list[list[list[Fraction | None]]] = [[[Fraction(0)] * dims for _ in caps] for caps in self.caps]
        self._plain_after = [plain]
        self._pool_sum_after = [sums]
        self._pool_best_after = [best]
        for k in range(len(self.classes) - 1, -1, -1):
            c = self.classes[k]
            values = (*c.fits, *self._room[k])
            if c.pool < 0:
                plain = [a + c.count * v for a, v in zip(plain, values)]
            else:
                sums = [list(row) for row in sums]
                sums[c.pool] = [a + c.count * v for a, v in zip(sums[c.pool], values)]
                best = [[list(row) for row in pool] for pool in best]
                for j, each in enumerate(c.cost):
                    best[c.pool][j] = [_better(b, v, each) for b, v in zip(best[c.pool][j], values)]
            self._plain_after.append(plain)
            self._pool_sum_after.append(sums)
            self._pool_best_after.append(best)
        for table in (self._plain_after, self._pool_sum_after, self._pool_best_after):
            table.reverse()  # [k]: from position k on
        self._pool_best_after = [
            [[[None if r is None else float(r) for r in row] for row in pool] for pool in position]
            for position in self._pool_best_after
        ]

    def _may_fit(self, demand: list[int], klass: int, used: int, spent: list[list[int]] | None = None) -> bool:
        """Every later node at its full count (a relaxation); then, with pools, each pool within what it
        has left (``spent``), through the same bound as ``_offer``."""
        c = self.classes[klass]
        left = c.count - used
        for i, wanted in enumerate(demand):
            if wanted and wanted > left * c.fits[i] + self._copies_after[klass + 1][i]:
                return False
        needs = [sum(d * request[r] for d, request in zip(demand, self.requests)) for r in range(len(self.names))]
        for r, need in enumerate(needs):
            if need > left * self._room[klass][r] + self._room_after[klass + 1][r]:
                return False
        if not self.caps or spent is None:
            return True
        values = (*c.fits, *self._room[klass])
        # what each pool has left of each cap, as floats (the bound below rounds up: never prunes wrongly)
        rest = [[float(cap - had) for cap, had in zip(caps, spent[p])] for p, caps in enumerate(self.caps)]
        for d, need in enumerate((*demand, *needs)):
            if not need:
                continue
            offer = self._plain_after[klass][d] - (used * values[d] if c.pool < 0 else 0)
            for p, left_of in enumerate(rest):
                total = self._pool_sum_after[klass][p][d] - (used * values[d] if c.pool == p else 0)
                for j, amount in enumerate(left_of):
                    ratio = self._pool_best_after[klass][p][j][d]
                    if ratio is not None and total:
                        total = min(total, math.floor(amount * ratio * _SLACK + _SLACK - 1))
                offer += total
                if need <= offer:
                    break
            if need > offer:
                return False
        return True

    def _configs(
        self, klass: int, demand: list[int], bound: Vector | None, budget: Budget, spent: list[list[int]]
    ) -> Iterator[Vector]:
        """The maximal configurations of one node of ``klass``, greatest first, at most ``bound``;
        for a pool's node, then the empty one (and only it once the pool can add no more).
        Depth-first over the shapes with an explicit stack: a gang may have many shapes."""
        c = self.classes[klass]
        shapes = len(self.shapes)
        empty = (0,) * shapes
        if c.pool >= 0 and _afford(self.caps[c.pool], c.cost, spent[c.pool]) < 1:
            yield empty
            return
        wanted = tuple(demand)  # the demand when this node's turn came
        config = [0] * shapes
        stack = [_ShapeStep(0, self._most(c, wanted, 0, c.capacity, bound), c.capacity, bound is not None)]
        gave_empty = False
        while stack:
            step = stack[-1]
            index, count = step.index, step.count
            if count < 0:
                stack.pop()
                continue
            step.count -= 1
            budget.spend()
            config[index] = count
            after = _minus(step.room, self.requests[index], count)
            tight = step.tight and bound is not None and count == bound[index]
            if index + 1 < shapes:
                stack.append(
                    _ShapeStep(
                        index + 1, self._most(c, wanted, index + 1, after, bound if tight else None), after, tight
                    )
                )
            elif all(not (wanted[i] - config[i]) or _fit(self.requests[i], after) == 0 for i in c.allowed):
                if c.pool >= 0:
                    gave_empty = gave_empty or not any(config)
                yield tuple(config)
        if c.pool >= 0 and not gave_empty:
            yield empty

    def _most(self, c: _Class, wanted: Vector, index: int, room: Vector, bound: Vector | None) -> int:
        """The greatest count of shape ``index`` to try on a node: what is wanted, fits, and keeps
        the configuration at most ``bound``."""
        top = min(wanted[index], _fit(self.requests[index], room)) if index in c.allowed else 0
        return min(top, bound[index]) if bound is not None else top


@dataclass
class _Frame:
    configs: Iterator[Vector]
    klass: int
    used: int  # nodes of the group placed before this one
    bound: Vector | None  # the configuration of the node before, in the same group
    state: tuple[Any, ...]  # the demand and the pools' use when this node's turn came
    applied: Vector | None = None


@dataclass(slots=True)
class _ShapeStep:
    """One shape's turn in the depth-first search of ``_Problem._configs``."""

    index: int  # the shape
    count: int  # the next count of it to try
    room: Vector  # what the node has left before it
    tight: bool  # the configuration so far still equals the bound


def _afford(caps: tuple[int, ...], cost: tuple[int, ...], spent: list[int] | None) -> int:
    """Nodes of one kind a pool can still add: its caps less what it spent, per node's cost."""
    used = spent or [0] * len(caps)
    return max(0, min((cap - had) // each for cap, had, each in zip(caps, used, cost) if each > 0))


def _scales(caps: tuple[Fraction, ...], kinds: Mapping[NodeKind, int], pool: str, limited: list[str]) -> list[int]:
    """Per cap of a pool (its node count, then its limits), the unit that makes the cap and what every
    kind of the pool costs of it whole numbers: the search then spends and refunds integers."""
    costs = [dict(kind.cost) for kind in kinds if kind.pool == pool]
    return [1] + [
        math.lcm(cap.denominator, *(Fraction(cost.get(resource, 0)).denominator for cost in costs))
        for cap, resource in zip(caps[1:], limited)
    ]


def _whole(amounts: tuple[Fraction, ...], scales: list[int]) -> list[int]:
    return [int(amount * scale) for amount, scale in zip(amounts, scales)]


def _charge(spent: list[int], cost: tuple[int, ...], nodes: int) -> None:
    for index, each in enumerate(cost):
        spent[index] += nodes * each


_SLACK = 1 + 1e-9  # floats of exact ratios are off by ~1e-16: a bound this much larger is still one


def _better(best: Fraction | None, value: int, cost: int) -> Fraction | None:
    """The greater of ``best`` and ``value`` per unit of ``cost`` (None: unbounded, a free offer)."""
    if best is None or (not cost and value):
        return None
    return max(best, Fraction(value, cost)) if cost else best


def _state(demand: list[int], spent: list[list[int]]) -> tuple[Any, ...]:
    """The demand, and what each pool has spent (when there are pools: the common case has none)."""
    return (*demand, *(tuple(used) for used in spent)) if spent else tuple(demand)


def _grouped(nodes: list[tuple[int, Vector]]) -> Placement:
    counted = Counter(nodes)
    return [(klass, config, count) for (klass, config), count in counted.items()]


def _one(shapes: int, shape: int, count: int) -> Vector:
    return tuple(count if i == shape else 0 for i in range(shapes))


def _plus(a: Vector, b: Vector) -> Vector:
    return tuple(x + y for x, y in zip(a, b))


def _l2(items: list[tuple[int, int]], size: int, k: int) -> int:
    """L(k) of Martello and Toth (1990): items (size, count) above size - k take a bin each, and
    so do those above half; items from k to half fill what the latter leave, then whole bins."""
    big = sum(count for w, count in items if w > size - k)
    over_half = [(w, count) for w, count in items if 2 * w > size and w <= size - k]
    middle = sum(w * count for w, count in items if k <= w and 2 * w <= size)
    halves = sum(count for _, count in over_half)
    room = halves * size - sum(w * count for w, count in over_half)
    return big + halves + max(0, -(-(middle - room) // size))


def _no_greater(bound: Vector | None, failed: Vector | None) -> bool:
    """Is ``bound`` at most ``failed`` (None: no bound, the greatest)?"""
    return failed is None or (bound is not None and bound <= failed)


def _fit(request: Vector, room: Vector) -> int:
    return max(0, min((have // need for have, need in zip(room, request) if need), default=0))


def _minus(room: Vector, request: Vector, copies: int) -> Vector:
    return tuple(have - copies * need for have, need in zip(room, request))


def _apply(demand: list[int], config: Vector, sign: int) -> None:
    for index, count in enumerate(config):
        demand[index] -= sign * count
