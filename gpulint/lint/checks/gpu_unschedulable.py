"""gpu-unschedulable: no node passes the scheduler's filters for a GPU pod, and no node pool can add one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction

from gpulint.kube.fields import dig, mapping
from gpulint.kube.gpu_stack import selects_gpu_nodes
from gpulint.kube.pools.fit import FITS, LIMITED, NEVER, UNKNOWN, PoolFit, summary
from gpulint.kube.pools.gke import AUTO_POOL, AUTO_POOL_HINT, AUTOPILOT_POOL, CLASS_POOL_SYSTEM
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import is_extended
from gpulint.kube.rollout import fenceposts
from gpulint.kube.scheduler import FitResult, PodRequirements, binding_resources
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite, extended_resource_path
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.verdicts.device_filters import (
    GPU_MEMORY_LABEL,
    KAI_GPU_MEMORY,
    KAI_GPU_MEMORY_REFUSAL,
    GpuMemoryVerdict,
    gpu_memory_verdict,
)
from gpulint.lint.verdicts.holders import Starved, scaled, starved, unit_of
from gpulint.lint.verdicts.pod_affinity import LwsPlacement, PodAffinityVerdict, pod_affinity_verdict
from gpulint.lint.verdicts.scheduling import SchedulingVerdict, scheduling_cause, scheduling_verdict
from gpulint.lint.verdicts.shared import (
    emptied_offers,
    gpu_daemons,
    gpu_pod_requirements,
    grows_any,
    kueue_admitted,
    kueue_pins,
    scale_up_verdict,
    spread_limits,
)
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec(
    "gpu-unschedulable", Severity.ERROR, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, of_pods=True
)
RULE_ID = SPEC.id


def check(obj: KubeObject, written: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    if written.completed_by:
        return  # tolerations or affinity may come from the object that completes the pod
    site = kueue_admitted(written, kueue_pins(obj, inventory))  # a queued workload's: its flavor's labels, tolerations
    pod = gpu_pod_requirements(obj.kind, site, inventory, obj.facts)
    if pod is None:
        memory = gpu_memory_verdict(obj, site, inventory)
        if memory is not None:
            yield _gpu_memory(memory)
        elif obj.kind != "DaemonSet":  # GPU infrastructure's reach is daemonset-coverage's
            yield from _gpu_node_pod(obj, site, written, inventory)
        return
    unoffered = {name for name in pod.requests.keys() - inventory.offered_resources if is_extended(name)}
    if unoffered and not unoffered <= emptied_offers(inventory):
        return  # a resource no node publishes: gpu-resource-unknown says so, more precisely
    if inventory.pools and obj.kind == "DaemonSet":
        return  # a DaemonSet's pods never make a pool add a node: they run on the nodes that come
    verdict = scheduling_verdict(obj.kind, site, inventory, written, obj.facts, obj.ref.namespace)  # as explain
    if verdict.cause.selection:
        return  # one cause, one finding: over-tight-affinity words it, with the scheduler's summary
    empty, fits = verdict.fit, list(verdict.pools)
    if not empty.fits:
        yield from _no_node_fits(site, verdict, inventory)
        return
    affinity = pod_affinity_verdict(obj, site, inventory, empty)  # as explain
    if affinity is not None and affinity.blocked:
        if affinity.lws is not None:
            yield _lws_exclusive(affinity, affinity.lws, inventory)
        elif not affinity.missing_key:
            yield _pod_affinity(site, affinity, empty)
        elif (
            ctx.memo((RULE_ID, "jobset-exclusive", obj.document.path, obj.ref, affinity.at), lambda: site.path)
            == site.path
        ):
            yield _exclusive(affinity, inventory)  # once per annotation: the JobSet's own is every replicatedJob's
        return
    if obj.kind != "DaemonSet" and not grows_any(fits):
        held = list(_daemons_hold(site, pod, empty, inventory))
        yield from held
        if not held and obj.kind == "CronJob" and obj.ref.group == "batch":
            yield from _unit_holds(obj, site, pod, empty, inventory)
    if site.pods and site.pods > 1 and verdict.selection_limits is None:  # else over-tight-affinity's
        replicas = list(_replicas(site, pod, empty, fits, inventory))
        yield from replicas
        if not replicas and not grows_any(fits):
            yield from _spread(obj, site, pod, empty, inventory)
    if obj.kind == "Deployment" and obj.ref.group == "apps" and site.pods:
        yield from _rollout(obj, site, pod, fits, inventory)
    grows = any((fit.state == FITS and fit.room != 0) or _gke_created(fit) for fit in fits)  # a scale-up makes room
    if inventory.pods and not pod.node_name and not grows:  # a bound pod is already counted
        now = inventory.model.evaluate(pod, now=True)
        if not now.fits:
            yield Diagnostic(
                RULE_ID,
                _where(site),
                f"{_subject(site)} fits on the empty cluster ({_nodes(empty.fitting_count)}) but not "
                "with the pods running now",
                notes=(
                    *scheduling_cause(now, pod, inventory).notes(),
                    "it waits for capacity, or preempts lower-priority pods if its priority allows",
                ),
                severity=Severity.WARNING,
            )


def _gpu_node_pod(
    obj: KubeObject, site: PodSpecSite, written: PodSpecSite, inventory: Resolver
) -> Iterator[Diagnostic]:
    """A pod that asks for no GPU but whose node selection keeps it to GPU nodes (a GPU label, written or set by
    its operator: the NIM operator's caching Job) is judged as a GPU pod: no node of the selection takes it."""
    if site.spec.get("resourceClaims"):
        return  # its devices come through DRA: the claim rules judge where they can be allocated
    verdict = scheduling_verdict(obj.kind, site, inventory, written, obj.facts, obj.ref.namespace)
    held = selects_gpu_nodes(verdict.written)
    if not held or verdict.fit.fits or verdict.cause.selection:
        return  # the selection itself leaves no node: over-tight-affinity's
    shown = first_and_more([r.description for r in held])
    if "nodeSelector" in site.defaulted:
        kept = f"its {obj.kind}'s operator gives it {shown} (the object sets no nodeSelector)"
    else:
        kept = f"its {shown} keeps it to GPU nodes"
    for found in _no_node_fits(site, verdict, inventory):
        yield replace(
            found, path=(*site.path, *held[0].path), notes=(*found.notes, f"it requests no GPU resource, but {kept}")
        )


def _gke_created(fit: PoolFit) -> bool:
    """The pool GKE may create for the pod (auto-creation, Autopilot), which no pool read describes."""
    return (fit.pool.spec.system, fit.pool.name) in (AUTO_POOL, AUTOPILOT_POOL)


def _unknown_hints(chosen: list[PoolFit]) -> tuple[str, ...]:
    """What would decide the unknown pools: the catalog, or the autoscaler's taint flags (its Deployment)."""
    created = [fit for fit in chosen if _gke_created(fit)]
    chosen = [fit for fit in chosen if fit not in created]
    flags = any(fit.pool.template_node and not fit.pool.flags_known for fit in chosen)
    catalog = any(fit.pool.unknown_types or fit.pool.open_types for fit in chosen) or not (flags or created)
    hints: tuple[str, ...] = (
        ("add the instance types to the node catalog (--node-catalog) to check",) if catalog else ()
    )
    if any((fit.pool.spec.system, fit.pool.name) == AUTO_POOL for fit in created):
        hints += (AUTO_POOL_HINT,)  # on Autopilot nothing more decides it
    if flags:
        hints += ("add the Deployment that runs Cluster Autoscaler to the inventory to check",)
    return hints


def _no_node_fits(site: PodSpecSite, verdict: SchedulingVerdict, inventory: Resolver) -> Iterator[Diagnostic]:
    pod, empty, fits = verdict.pod, verdict.fit, list(verdict.pools)
    where = _where(site)
    state, chosen = scale_up_verdict(fits) if fits else (NEVER, [])
    by_class = [fit for fit in fits if fit.pool.spec.system == CLASS_POOL_SYSTEM]
    if state == NEVER and by_class:  # its class's priorities are all GKE may create for it: no pool unread adds more
        yield _class_never(site, empty, fits, by_class)
        return
    if state == NEVER and not inventory.pools_whole:
        yield _pools_unknown(site, empty, fits, inventory)
        return
    if not fits:
        yield Diagnostic(
            RULE_ID,
            where,
            f"{_subject(site)} can never be scheduled on this cluster, even empty",
            notes=verdict.cause.notes(),
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
            notes=(f"nodes: {nodes}", summary(chosen), *_unknown_hints(chosen)),
            severity=Severity.INFO,
            pinned=True,
        )
        return
    if state == LIMITED:
        waiting = all(fit.pool.group is not None and fit.pool.group.in_backoff for fit in chosen)
        yield Diagnostic(
            RULE_ID,
            where,
            f"{_subject(site)} fits a node that a pool can add, but "
            + ("Cluster Autoscaler will not grow the pool now" if waiting else "the pool's limits leave no room"),
            notes=(
                summary(chosen),
                "it stays Pending until the backoff ends and the autoscaler retries the group"
                if waiting
                else "it stays Pending until the pool's nodes are freed or its limits raised",
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


def _class_never(site: PodSpecSite, empty: FitResult, fits: list[PoolFit], by_class: list[PoolFit]) -> Diagnostic:
    """No node fits, and no node its ComputeClass's priorities describe would: with whenUnsatisfiable
    DoNotScaleUp GKE creates no other (a warning: GKE's own words for it are not published)."""
    name = by_class[0].pool.name.rpartition(" priority ")[0]
    return Diagnostic(
        RULE_ID,
        _where(site),
        f"no node fits {_subject(site)}, and no node of the {len(by_class)} shapes the priorities of ComputeClass "
        f"{name} describe would hold it; with whenUnsatisfiable DoNotScaleUp GKE creates no other",
        notes=(
            summary(fits),
            f"nodes: {empty.summary() if empty.total else 'the inventory has no node'}",
            "the pod stays Pending (GKE's autoscaler reports noScaleUp); give the class a priority whose nodes "
            "offer what the pod asks for, or set whenUnsatisfiable: ScaleUpAnyway",
        ),
        severity=Severity.WARNING,
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
    short = _short_of(pod, empty) if placed else ""
    if pod.host_ports and placed == empty.fitting_count:  # one per node: the ports bind, not the resources
        ports = ", ".join(map(str, pod.host_ports))
        network = (
            " (hostNetwork makes every container port a host port)" if site.spec.get("hostNetwork") is True else ""
        )
        short = (
            f"each pod takes host port {ports}{network}: the scheduler places at most one per node, and the others "
            'report "node(s) didn\'t have free ports for the requested pod ports"'
        )
    never = summary([fit for fit in fits if fit.state == NEVER])  # why those pools add no room (their words)
    pools = f", and its node pools may add room for {added} more" if fits else ""
    yield Diagnostic(
        RULE_ID,
        _where(site),
        f"the workload runs {site.pods} of these pods, but {now}{pools}; the other "
        f"{site.pods - placed - added} would stay Pending",
        notes=((rooms,) if fits and rooms else ()) + ((never,) if never else ()) + ((short,) if short else ()),
        severity=Severity.WARNING,
    )


def _short_of(pod: PodRequirements, empty: FitResult) -> str:
    """What the next copy finds short on every node that fits, as the scheduler names it ("Insufficient
    aws.amazon.com/neuron"), when one resource runs out first on all of them; "" otherwise."""
    binding = {binding_resources(pod, group.representative) for group in empty.fitting_groups}
    if len(binding) != 1:
        return ""
    (resources,) = binding
    if len(resources) != 1 or "pods" in resources:
        return ""
    resource = next(iter(resources))
    return f"{resource} runs out first on each of those nodes: the next pod reports Insufficient {resource}"


def _spread(
    obj: KubeObject, site: PodSpecSite, pod: PodRequirements, empty: FitResult, inventory: Resolver
) -> Iterator[Diagnostic]:
    """A hard topology spread over the workload's own pods that counts domains where no node can hold one
    (verdicts.shared.spread_limits): each other domain takes at most maxSkew of them, the rest stay Pending."""
    assert site.pods is not None
    for bound in spread_limits(obj.data, site, pod, empty.fitting, inventory):
        constraint, skew = bound.constraint, bound.constraint.max_skew
        counted = "the nodes the pod's node affinity and selector allow" if constraint.honor_affinity else "all nodes"
        yield Diagnostic(
            RULE_ID,
            (*site.path, *constraint.path),
            f"the workload runs {site.pods} of these pods, but its topology spread over {constraint.key} lets "
            f"at most {bound.most} run: it counts {first_and_more(bound.empty, 5)}, where no node can hold one",
            notes=(
                f"maxSkew {skew}: {skew} in each of {first_and_more(bound.holding, 5)}; the other {site.pods - bound.most} "
                "would stay Pending",
                f"whenUnsatisfiable DoNotSchedule: the scheduler counts every {constraint.key} of {counted}, and a "
                "domain left with none of these pods caps every other at maxSkew; the Pending pods report "
                '"node(s) didn\'t match pod topology spread constraints"',
                "select the nodes that can run the pod (nodeSelector or node affinity), so only their domains "
                "count, or use whenUnsatisfiable: ScheduleAnyway",
            ),
            severity=Severity.WARNING,
        )


def _daemons_hold(
    site: PodSpecSite, pod: PodRequirements, empty: FitResult, inventory: Resolver
) -> Iterator[Diagnostic]:
    """The linted DaemonSets that ask for the pod's accelerators run on every node it fits, and what they hold
    leaves too few there: the DaemonSet's pod is on each node first (it tolerates and selects it), so the pod
    fits none of them."""
    held_by: dict[str, set[str]] = {}
    for group in empty.fitting_groups:
        node = group.representative
        holders = [held for held in gpu_daemons(inventory) if held.lands_on(node)]
        short = False
        for resource, amount in pod.requests.items():
            if not is_extended(resource):
                continue
            taken = sum((held.pod.requests.get(resource, Fraction(0)) for held in holders), Fraction(0))
            if taken and node.allocatable.get(resource, Fraction(0)) - taken < amount:
                short = True
                for held in holders:
                    if held.pod.requests.get(resource):
                        held_by.setdefault(held.name, set()).add(resource)
        if not short:
            return
    names = sorted(held_by)
    resources = sorted({r for found in held_by.values() for r in found})
    yield Diagnostic(
        RULE_ID,
        _where(site),
        f"{_subject(site)} fits no node once DaemonSet {', '.join(names)} takes its {', '.join(resources)} there",
        notes=(
            f"the {_nodes(empty.fitting_count)} it fits on each run a pod of {', '.join(names)}, which asks for "
            f"{', '.join(resources)}: what is left is less than this pod asks for",
            "a DaemonSet that requests GPUs holds a device on every node it runs on, away from workloads",
        ),
        severity=Severity.WARNING,
    )


def _rollout(
    obj: KubeObject, site: PodSpecSite, pod: PodRequirements, fits: list[PoolFit], inventory: Resolver
) -> Iterator[Diagnostic]:
    """A Deployment whose replicas are all the empty cluster (and its pools) holds, rolled with maxUnavailable 0:
    its next rollout's first new pod fits nowhere, and the controller never scales the old ReplicaSet down."""
    posts = fenceposts(obj.data)
    if posts is None or posts.unavailable != 0 or site.pods is None or _autoscaled(obj, inventory):
        return
    growing = [fit for fit in fits if fit.state == FITS]
    if any(fit.room is None for fit in growing) or any(fit.state == UNKNOWN for fit in fits):
        return  # a pool without a known bound can add the surge pod's node
    room = inventory.model.placeable(pod) + sum(fit.room or 0 for fit in growing)
    if room != site.pods:
        return  # room to spare; or fewer than the replicas (_replicas says so)
    written = mapping(mapping(dig(obj.data, "spec", "strategy")).get("rollingUpdate"))
    defaults = "" if written else " (the default RollingUpdate)"
    yield Diagnostic(
        RULE_ID,
        ("spec", "strategy") if "strategy" in mapping(obj.data.get("spec")) else ("spec", "replicas"),
        f"this Deployment's next rollout never completes: its {site.pods} replicas fill all the room its pods have "
        "and maxUnavailable is 0",
        on_key=True,
        notes=(
            f"maxSurge {posts.surge_text} -> {posts.surge}, maxUnavailable {posts.unavailable_text} -> 0{defaults}: "
            f"the first new pod needs room for {site.pods + 1} at once; the cluster holds {room}",
            "the new pod stays Pending, every old pod is kept until it is ready, and the Deployment reports "
            "ProgressDeadlineExceeded",
            "set strategy.rollingUpdate.maxUnavailable to 1 (and maxSurge to 0), or use the Recreate strategy",
        ),
        severity=Severity.WARNING,
    )


def _autoscaled(obj: KubeObject, inventory: Resolver) -> bool:
    return scaled(obj.ref, inventory)


# Annotations that run a Job at one moment of a release (Helm's hooks, Argo CD's sync hooks), not beside it.
_HOOKS = ("helm.sh/hook", "argocd.argoproj.io/hook")


def _unit_holds(
    obj: KubeObject, site: PodSpecSite, pod: PodRequirements, empty: FitResult, inventory: Resolver
) -> Iterator[Diagnostic]:
    """The long-running workloads deployed with the CronJob (one namespace; one render, file or Helm release) hold
    its devices on every node its pods can use: each run stays Pending as long as they run. Only CronJobs:
    a Job applied with them races them for the device, a CronJob's runs come after they hold it."""
    if mapping(obj.data.get("spec")).get("suspend") is True or any(key in obj.annotations() for key in _HOOKS):
        return
    found = starved(obj, unit_of(obj, obj.document.path, obj.document.render), pod, empty, inventory)
    if found is None:
        return
    names = _holder_names(found)
    yield Diagnostic(
        RULE_ID,
        _where(site),
        f"this CronJob's pods fit no node once {names} run{'s' if len(found.holders) == 1 else ''}: "
        f"{'it holds' if len(found.holders) == 1 else 'they hold'} the {', '.join(found.resources)} of every node "
        "they can use",
        notes=(
            f"once {names} run{'s' if len(found.holders) == 1 else ''}: {found.summary}",
            *_held_notes(found),
            f"{names} deploy{'s' if len(found.holders) == 1 else ''} with the CronJob (same namespace; same render, "
            f"file or Helm release) and keep{'s' if len(found.holders) == 1 else ''} the devices while it runs: "
            "every run of the CronJob stays Pending",
            "give the nodes more of the device, let the device plugin share it (Intel's -shared-dev-num, NVIDIA's "
            "time-slicing), or drop the CronJob's request if its pods do not use the device",
        ),
        severity=Severity.WARNING,
    )


def _holder_names(found: Starved) -> str:
    return ", ".join(f"{holder.kind} {holder.name}" for holder in found.holders)


def _held_notes(found: Starved) -> Iterator[str]:
    for resource in found.resources:
        held = "; ".join(
            f"{holder.kind} {holder.name} holds {format_amount(holder.held[resource])}"
            for holder in found.holders
            if holder.held.get(resource)
        )
        yield (
            f"{resource}: the {_nodes(found.nodes)} the CronJob's pods can use "
            f"{'has' if found.nodes == 1 else 'have'} {format_amount(found.offered[resource])}; "
            f"{held}"
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
    if pool.group is not None and pool.group.skipped():
        bounds.append(pool.group.skipped())
    shown = f" ({', '.join(bounds)})" if bounds else ""
    return f"{pool.title}: {fit.room or 0} pods{shown}"


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _subject(site: PodSpecSite) -> str:
    return f"the '{site.role}' pod template" if site.role else "this pod"


def _pod_affinity(site: PodSpecSite, verdict: PodAffinityVerdict, empty: FitResult) -> Diagnostic:
    """InterPodAffinity refuses every node the other filters leave: the pods its required pod affinity names
    cannot run in the topology domain of any of them. A warning: pods outside the linted files may match."""
    peers, where = verdict.peers_text(), verdict.peer_nodes_text()
    own = first_and_more([node.name for node in empty.fitting])
    return Diagnostic(
        RULE_ID,
        (*site.path, *verdict.terms[0].path),
        f"{_subject(site)} cannot be scheduled beside the pods its required pod affinity "
        f"({verdict.topology()}) matches: {peers} cannot run in the domain of any node where it fits",
        severity=Severity.WARNING,
        notes=(
            verdict.fit.summary(),
            f"{peers} can run on {where}; this pod fits only on {own}",
            "pods outside the linted files that the selector matches are not known: place the pods it follows "
            "where it can run (tolerations, node selector), or drop the required pod affinity",
        ),
    )


def _exclusive(verdict: PodAffinityVerdict, inventory: Resolver) -> Diagnostic:
    """JobSet's pod webhook gives each Job's leader pod a required pod affinity and anti-affinity on the
    exclusive-topology key, and no node the pod fits on carries it: no leader is scheduled, so no follower is
    created. An error when the inventory's nodes are all there can be."""
    key, proven = verdict.missing_key, inventory.node_labels_proven
    carriers = [node.name for node in inventory.nodes if key in node.labels]
    return Diagnostic(
        RULE_ID,
        verdict.at,
        f"JobSet exclusive-topology '{key}': no node the pods may use has the label {key}, so no Job's leader pod "
        "is scheduled and no follower pod is created",
        severity=Severity.ERROR if proven else Severity.WARNING,
        pinned=not proven,
        notes=(
            f"JobSet's pod webhook gives each Job's leader pod (completion index 0) a required podAffinity and "
            f"podAntiAffinity with topologyKey {key}; the scheduler refuses every node without that label",
            verdict.fit.summary(),
            f"nodes that carry {key}, where the pods may not run: {first_and_more(carriers)}"
            if carriers
            else f"no node has the label {key}",
            "name a node label that marks the domains (each Job is placed alone in one), such as the node pool's",
        ),
    )


def _lws_exclusive(verdict: PodAffinityVerdict, lws: LwsPlacement, inventory: Resolver) -> Diagnostic:
    """LWS's pod webhook ties the leader to workers by a required podAffinity on an exclusive-topology key, and no
    value of it is on both a node the leader can run on and one the workers fit on: the leader, created first, is
    placed and the workers that must join it never are. An error when the inventory's nodes are all there can be."""
    shared, proven = lws.shared, inventory.node_labels_proven
    return Diagnostic(
        RULE_ID,
        verdict.at,
        f"LeaderWorkerSet {shared.name} '{shared.key}' puts {shared.who} in one domain, but the leader's nodes "
        f"have {_listed(lws.leader_values)} and the workers' {_listed(lws.worker_values)}, so the workers that must "
        "join the leader are never scheduled",
        severity=Severity.ERROR if proven else Severity.WARNING,
        pinned=not proven,
        notes=(
            f"LWS's pod webhook gives them a required podAffinity with topologyKey {shared.key}; the leader is "
            "created first, so its partners must join its domain",
            verdict.fit.summary(),
            "give the leader template nodes in the workers' domains, or, for subgroups, set "
            "leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType: LeaderExcluded",
        ),
    )


def _listed(values: tuple[str, ...]) -> str:
    return first_and_more(list(values), 3, last=", and ")


def _gpu_memory(verdict: GpuMemoryVerdict) -> Diagnostic:
    """KAI Scheduler's GPU-memory predicate refuses every node the pod can use (the verdict explain shows)."""
    usable = len(verdict.usable)
    return Diagnostic(
        RULE_ID,
        verdict.path,
        f"KAI Scheduler places a {KAI_GPU_MEMORY} pod only on a node labelled {GPU_MEMORY_LABEL}, and "
        + (
            "the one node it can use has no such label"
            if usable == 1
            else f"none of the {usable} nodes it can use has the label"
        ),
        severity=Severity.WARNING,
        notes=(
            KAI_GPU_MEMORY_REFUSAL,
            "GPU feature discovery sets the label from the memory the GPU reports; a GPU that reports none "
            "(unified memory: memory.total [N/A]) gets none - ask for a gpu-fraction instead, or label the node",
        ),
    )
