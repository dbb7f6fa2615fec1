"""gpu-unschedulable: no node passes the scheduler's filters for a GPU pod, and no node pool can add one."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.pools.fit import FITS, LIMITED, NEVER, UNKNOWN, PoolFit, summary
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import FitResult, PodRequirements, pod_requirements
from gpulint.kube.workloads import PodSpecSite, effective_pod_spec, extended_resource_path, pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.resolver import Resolver
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts import (
    gpu_pod_requirements,
    pool_fits,
    scale_up_verdict,
    scheduling_hint,
    selection_leaves_no_node,
    selection_limits_replicas,
)

SPEC = RuleSpec("gpu-unschedulable", Severity.ERROR, needs=frozenset({Need.NODES}))
RULE_ID = SPEC.id
AFFINITY_RULE = "over-tight-affinity"  # reports the pods whose node selection is the cause


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    model = inventory.model
    for site in pod_spec_sites(obj.data):
        if site.completed_by:
            continue  # tolerations or affinity may come from the object that completes the pod
        pod = gpu_pod_requirements(obj.kind, site, inventory)
        if pod is None or any(is_extended(name) for name in pod.requests.keys() - inventory.offered_resources):
            continue  # a resource no node publishes: gpu-resource-unknown says so, more precisely
        selection = pod_requirements(effective_pod_spec(obj.kind, site.spec))  # as over-tight-affinity reads it
        by_affinity = ctx.config.enables(AFFINITY_RULE)
        if by_affinity and selection_leaves_no_node(selection, inventory):
            continue  # one cause, one finding: over-tight-affinity reports it with the scheduler's summary
        empty = model.evaluate(pod, now=False)
        # A DaemonSet's pods never make a pool add a node: they run on the nodes that come
        fits = pool_fits(pod, inventory) if inventory.pools and obj.kind != "DaemonSet" else []
        if inventory.pools and obj.kind == "DaemonSet":
            continue
        if not empty.fits:
            yield from _no_node_fits(site, pod, empty, fits, inventory)
            continue
        if (
            site.pods
            and site.pods > 1
            and not (by_affinity and selection_limits_replicas(selection, site.pods, inventory))
        ):
            yield from _replicas(site, pod, empty, fits, inventory)
        grows = any(fit.state == FITS and fit.room != 0 for fit in fits)  # a scale-up makes room
        if inventory.pods and not pod.node_name and not grows:  # a bound pod is already counted
            now = model.evaluate(pod, now=True)
            if not now.fits:
                yield Diagnostic(
                    RULE_ID,
                    _where(site),
                    f"{_subject(site)} fits on the empty cluster ({_nodes(empty.fitting_count)}) but not "
                    "with the pods running now",
                    notes=(
                        *_reasons(now.summary(), scheduling_hint(now, pod, inventory)),
                        "it waits for capacity, or preempts lower-priority pods if its priority allows",
                    ),
                    severity=Severity.WARNING,
                )


def _no_node_fits(
    site: PodSpecSite, pod: PodRequirements, empty: FitResult, fits: list[PoolFit], inventory: Resolver
) -> Iterator[Diagnostic]:
    where = _where(site)
    state, chosen = scale_up_verdict(fits) if fits else (NEVER, [])
    if state == NEVER and not inventory.pools_whole:
        yield _pools_unknown(site, empty, fits, inventory)
        return
    if not fits:
        yield Diagnostic(
            RULE_ID,
            where,
            f"{_subject(site)} can never be scheduled on this cluster, even empty",
            notes=_reasons(empty.summary(), scheduling_hint(empty, pod, inventory)),
        )
        return
    # With pools, the nodes that exist are often only the system pool's: their hint would mislead.
    nodes = empty.summary() if empty.total else "the inventory has no node"
    if state == FITS:  # fits after a scale-up: `explain` names the pool and the instance type
        if site.pods and site.pods > 1:
            yield from _replicas(site, pod, empty, fits, inventory)
        return
    pools = f"{len(fits)} node pool{'s' if len(fits) != 1 else ''}"
    if state == UNKNOWN:
        yield Diagnostic(
            RULE_ID,
            where,
            f"no node fits {_subject(site)} now, and whether a node pool can add one is unknown",
            notes=(
                f"nodes: {nodes}",
                summary(chosen),
                "add the instance types to the node catalog (--node-catalog) to check",
            ),
            severity=Severity.INFO,
            pinned=True,
        )
        return
    if state == LIMITED:
        yield Diagnostic(
            RULE_ID,
            where,
            f"{_subject(site)} fits a node that a pool can add, but the pool's limits leave no room",
            notes=(
                summary(chosen),
                "it stays Pending until the pool's nodes are freed or its limits raised",
                f"no node fits now: {nodes}",
            ),
            severity=Severity.WARNING,
        )
        return
    yield Diagnostic(
        RULE_ID,
        where,
        f"{_subject(site)} can never be scheduled on this cluster, even empty, and none of its {pools} can add "
        "a node for it",
        notes=(summary(fits), f"nodes: {nodes}"),
    )


def _pools_unknown(site: PodSpecSite, empty: FitResult, fits: list[PoolFit], inventory: Resolver) -> Diagnostic:
    """No node and no pool read fits, but a pool API could not be listed, or the autoscaler manages node groups
    no pool read describes: a pool not read may add one."""
    return Diagnostic(
        RULE_ID,
        _where(site),
        f"no node fits {_subject(site)} now, and whether a node pool can add one is unknown",
        notes=(
            f"nodes: {empty.summary() if empty.total else 'the inventory has no node'}",
            *((summary(fits),) if fits else ()),
            inventory.pools_gap,
        ),
        severity=Severity.INFO,
        pinned=True,
    )


def _replicas(
    site: PodSpecSite, pod: PodRequirements, empty: FitResult, fits: list[PoolFit], inventory: Resolver
) -> Iterator[Diagnostic]:
    assert site.pods is not None
    placed = inventory.model.placeable(pod)
    growing = [fit for fit in fits if fit.state == FITS]
    if any(fit.room is None for fit in growing) or any(fit.state == UNKNOWN for fit in fits):
        return  # a pool without a known bound can add what is missing
    added = sum(fit.room or 0 for fit in growing)
    if placed + added >= site.pods:
        return
    rooms = "; ".join(_room(fit) for fit in fits if fit.state in (FITS, LIMITED))
    now = (
        f"only {placed} fit on the empty cluster at once (on {_nodes(empty.fitting_count)} that pass every filter)"
        if placed
        else "no node that exists fits one"
    )
    pools = f", and its node pools may add room for {added} more" if fits else ""
    yield Diagnostic(
        RULE_ID,
        _where(site),
        f"the workload runs {site.pods} of these pods, but {now}{pools}; the other "
        f"{site.pods - placed - added} would stay Pending",
        notes=(rooms,) if fits and rooms else (),
        severity=Severity.WARNING,
    )


def _where(site: PodSpecSite) -> Path:
    """Where a finding points: the first extended resource asked for (found only for a finding)."""
    return extended_resource_path(site) or site.path


def _room(fit: PoolFit) -> str:
    pool = fit.pool
    bounds = []
    if pool.spec.max_size is not None:
        bounds.append(f"max {pool.spec.max_size} nodes, {pool.nodes} now")
    bounds += [
        f"limit {name} {format_amount(amount)}, {format_amount(pool.in_use(name))} in use"
        for name, amount in sorted(pool.spec.limits.items())
    ]
    shown = f" ({', '.join(bounds)})" if bounds else ""
    return f"{pool.title}: {fit.room or 0} pods{shown}"


def _reasons(summary: str, hint: str) -> tuple[str, ...]:
    """The scheduler's own summary (``0/N nodes are available: ...``), then the smallest change that helps."""
    return (summary, hint.strip()) if hint.strip() else (summary,)


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _subject(site: PodSpecSite) -> str:
    return f"the '{site.role}' pod template" if site.role else "this pod"
