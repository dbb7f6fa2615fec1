"""The counting packer against brute force, with nodes pools may still add: small random clusters of
up to four node kinds (some of them a pool's, sharing the pool's node count and GPU limit) and up
to three roles. The exact answer must equal brute force; cut off by its work budget, the packer
may only say "unknown" or be right; every placement it returns must be one."""

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.kube.gangs.packing import (
    SLOTS,
    Budget,
    Decision,
    NodeKind,
    Outcome,
    Placed,
    PoolLimit,
    Shape,
    _Problem,
    decide,
    node_kind,
    request_units,
)

GPU, CPU = "nvidia.com/gpu", "cpu"
POOLS = ("", "p0", "p1")  # "": nodes that exist


def _shapes(roles: list[tuple[int, int, int]]) -> list[Shape]:
    return [
        Shape(f"role{i}", tuple((r, Fraction(a)) for r, a in ((GPU, gpus), (CPU, cpu)) if a), count)
        for i, (gpus, cpu, count) in enumerate(roles)
    ]


def _kinds(shapes: list[Shape], nodes: list[tuple[int, int, int, frozenset[int], str, int]]) -> Counter[NodeKind]:
    """(gpus, cpu, pods, allowed roles, pool, count): a pool's node costs its GPU capacity."""
    kinds: Counter[NodeKind] = Counter()
    for gpus, cpu, slots, allowed, pool, count in nodes:
        allocatable = {GPU: Fraction(gpus), CPU: Fraction(cpu), SLOTS: Fraction(slots)}
        cost = {GPU: Fraction(gpus)} if pool else None
        kinds[node_kind(allocatable, request_units(shapes), allowed, pool, cost)] += count
    return kinds


def _brute_force(shapes: list[Shape], nodes: list[tuple], pools: dict[str, PoolLimit]) -> bool:
    """Every pod, one after another, on every node (nodes of one kind in the same state tried once);
    a pool's node is charged to its pool when it takes its first pod."""
    concrete = [
        (gpus, cpu, slots, allowed, pool) for gpus, cpu, slots, allowed, pool, count in nodes for _ in range(count)
    ]
    pods = [index for index, shape in enumerate(shapes) for _ in range(shape.count)]

    def place(position: int, used: tuple[tuple[int, int, int], ...], spent: dict[str, tuple[int, int]]) -> bool:
        if position == len(pods):
            return True
        shape = shapes[pods[position]]
        asked = dict(shape.requests)
        tried = set()
        for number, (gpus, cpu, slots, allowed, pool) in enumerate(concrete):
            state = (used[number], gpus, cpu, slots, allowed, pool)
            if pods[position] not in allowed or state in tried:
                continue
            tried.add(state)
            g, c, s = used[number]
            after = (g + asked.get(GPU, 0), c + asked.get(CPU, 0), s + 1)
            if after[0] > gpus or after[1] > cpu or after[2] > slots:
                continue
            charged = dict(spent)
            if pool and used[number] == (0, 0, 0):
                nodes_used, gpus_used = spent.get(pool, (0, 0))
                limit = pools[pool]
                if limit.nodes is not None and nodes_used + 1 > limit.nodes:
                    continue
                if any(r == GPU and gpus_used + gpus > a for r, a in limit.limits):
                    continue
                charged[pool] = (nodes_used + 1, gpus_used + gpus)
            if place(position + 1, (*used[:number], after, *used[number + 1 :]), charged):
                return True
        return False

    return place(0, tuple((0, 0, 0) for _ in concrete), {})


def _assert_a_placement(
    decision: Decision, shapes: list[Shape], kinds: Counter[NodeKind] | None, pools: dict[str, PoolLimit]
):
    """Every pod placed, on nodes that exist in those numbers, within each node's and each pool's room."""
    units = request_units(shapes)
    placed = [0] * len(shapes)
    per_kind: Counter[NodeKind] = Counter()
    spent: dict[str, list[Fraction]] = {}
    for part in decision.placement:
        assert part.nodes > 0 and any(part.pods)
        per_kind[part.kind] += part.nodes
        capacity = dict(part.kind.amounts)
        for resource, unit in units.items():
            need = sum(count * dict(shapes[i].requests).get(resource, 0) for i, count in enumerate(part.pods))
            assert need <= capacity[resource] * unit, (part, resource)
        assert part.kind.slots is None or sum(part.pods) <= part.kind.slots
        for i, count in enumerate(part.pods):
            assert not count or i in part.kind.allowed
            placed[i] += count * part.nodes
        if part.kind.pool:
            used = spent.setdefault(part.kind.pool, [Fraction(0), Fraction(0)])
            used[0] += part.nodes
            used[1] += part.nodes * dict(part.kind.cost).get(GPU, 0)
    assert placed == [shape.count for shape in shapes]
    assert kinds is None or all(per_kind[kind] <= kinds[kind] for kind in per_kind)
    for pool, (nodes, gpus) in spent.items():
        limit = pools[pool]
        assert limit.nodes is None or nodes <= limit.nodes
        assert all(gpus <= amount for r, amount in limit.limits if r == GPU)


clusters = st.tuples(
    st.lists(
        st.tuples(
            st.integers(0, 8),  # GPUs
            st.integers(0, 16),  # CPUs
            st.sampled_from([2, 3, 110]),  # pods
            st.just(frozenset({0, 1, 2})) | st.frozensets(st.integers(0, 2)),  # the roles its filters admit
            st.sampled_from(POOLS),
            st.integers(1, 3),  # how many (a pool: at most)
        ),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(0, 3)), min_size=1, max_size=3),
    st.fixed_dictionaries(
        {
            pool: st.builds(
                PoolLimit,
                st.none() | st.integers(0, 3),
                st.sampled_from([(), ((GPU, Fraction(8)),), ((GPU, Fraction(12)),), ((GPU, Fraction(4)),)]),
            )
            for pool in POOLS[1:]
        }
    ),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters)
def test_the_exact_packer_equals_brute_force(cluster):
    nodes, roles, pools = cluster
    shapes = _shapes(roles)
    nodes = [(g, c, s, frozenset(i for i in allowed if i < len(shapes)), p, n) for g, c, s, allowed, p, n in nodes]
    kinds = _kinds(shapes, nodes)
    feasible = _brute_force(shapes, nodes, pools)
    decision = decide(shapes, kinds, Budget(10**6), pools)
    assert decision.outcome is (Outcome.FITS if feasible else Outcome.UNSATISFIABLE), decision
    if feasible:
        _assert_a_placement(decision, shapes, kinds, pools)
    # the search alone (no bounds, no greedy packer) is exact too, and its placement is one
    problem = _Problem.build(shapes, kinds, pools)
    if problem.classes and any(shape.count for shape in shapes):
        found = problem.search(Budget(10**6))
        assert (found is not None) is feasible
        if found is not None:
            by_class: Counter[int] = Counter()
            for k, _config, nodes in found:
                by_class[k] += nodes
            assert all(nodes <= problem.classes[k].count for k, nodes in by_class.items())
            placed = Decision(Outcome.FITS, [], placement=tuple(
                Placed(problem.classes[k].kinds[0][0], nodes, config) for k, config, nodes in found
            ))  # fmt: skip
            _assert_a_placement(placed, problem.shapes, None, pools)  # nodes per class counted above


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters, st.integers(0, 30))
def test_out_of_budget_the_packer_never_says_never_falsely(cluster, steps):
    """The bounds and the greedy packer alone (no search steps, or a few): the path a large gang takes."""
    nodes, roles, pools = cluster
    shapes = _shapes(roles)
    nodes = [(g, c, s, frozenset(i for i in allowed if i < len(shapes)), p, n) for g, c, s, allowed, p, n in nodes]
    kinds = _kinds(shapes, nodes)
    decision = decide(shapes, kinds, Budget(steps), pools)
    if decision.outcome is Outcome.UNSATISFIABLE:
        assert not _brute_force(shapes, nodes, pools), decision.reason
    if decision.outcome is Outcome.FITS:
        _assert_a_placement(decision, shapes, kinds, pools)


def _two_types(shapes: list[Shape]) -> tuple[NodeKind, NodeKind]:
    """A pool's two instance types: 8 CPUs (admits every role) and 4 CPUs (admits role 1), 1 GPU each."""
    units = request_units(shapes)
    return tuple(  # type: ignore[return-value]
        node_kind(
            {GPU: Fraction(1), CPU: Fraction(cpu), SLOTS: Fraction(110)}, units, allowed, "gpu", {GPU: 1, CPU: cpu}
        )
        for cpu, allowed in ((8, frozenset({0, 1})), (4, frozenset({1})))
    )


def test_a_pool_of_two_instance_types_is_packed_as_a_mix():
    # A launcher needs 6 CPUs (only the 8-CPU type holds it), a worker 3 CPUs; the pool's limit of 2
    # GPUs and 12 CPUs (of capacity) allows one node of each type, never two of the 8-CPU type
    limit = {"gpu": PoolLimit(None, ((CPU, Fraction(12)), (GPU, Fraction(2))))}
    shapes = _shapes([(1, 6, 1), (1, 3, 1)])
    big, small = _two_types(shapes)
    decision = decide(shapes, {big: 2, small: 2}, Budget(), limit)
    assert decision.outcome is Outcome.FITS
    assert sorted((p.kind == big, p.nodes, p.pods) for p in decision.placement) == [
        (False, 1, (0, 1)),
        (True, 1, (1, 0)),
    ]
    # trap: a 6-CPU worker needs the 8-CPU type too, and two of them exceed the 12-CPU limit
    shapes = _shapes([(1, 6, 1), (1, 6, 1)])
    big, small = _two_types(shapes)
    decision = decide(shapes, {big: 2, small: 2}, Budget(), limit)
    assert decision.outcome is Outcome.UNSATISFIABLE, decision
    # every type at its full count (the old over-approximation) would have held both
    assert decide(shapes, {big: 2, small: 2}, Budget()).outcome is Outcome.FITS


def test_a_pool_node_count_is_shared_by_its_types():
    # three 8-GPU workers; the pool may add 2 nodes, of either of two 8-GPU types: never 3
    shapes = _shapes([(8, 1, 3)])
    units = request_units(shapes)
    kinds = {
        node_kind({GPU: Fraction(8), CPU: Fraction(c), SLOTS: Fraction(110)}, units, frozenset({0}), "p"): 2
        for c in (64, 96)
    }
    decision = decide(shapes, kinds, Budget(), {"p": PoolLimit(2)})
    assert decision.outcome is Outcome.UNSATISFIABLE
    assert decision.reason == "role0: at most 2 of 3 fit"
    assert decide(shapes, kinds, Budget(), {"p": PoolLimit(3)}).outcome is Outcome.FITS


def test_a_limit_in_fractions_of_a_unit_is_counted_exactly():
    # a node of 7.5 CPUs of capacity (Karpenter counts capacity, e.g. 7500m), two 1-GPU workers, one a node
    shapes = _shapes([(1, 1, 2)])
    units = request_units(shapes)
    kind = node_kind({GPU: Fraction(1), CPU: Fraction(7), SLOTS: Fraction(110)}, units, frozenset({0}), "p",
                     {CPU: Fraction(15, 2)})  # fmt: skip
    for limit, outcome in (("15", Outcome.FITS), ("15.4", Outcome.FITS), ("14.999", Outcome.UNSATISFIABLE)):
        pools = {"p": PoolLimit(None, ((CPU, Fraction(limit)),))}
        assert decide(shapes, {kind: 3}, Budget(), pools).outcome is outcome, limit
