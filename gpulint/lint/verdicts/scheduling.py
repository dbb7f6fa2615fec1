"""A pod template's scheduling verdict, its gangs' and its claims', built in the lint layer: `explain` renders
them and the rules word them, so neither re-derives what the other decided.

Modelled on the kube-scheduler's framework: a Filter returns one Status with a reason, and the framework
composes the summary "0/N nodes are available: ..." (kubernetes/kubernetes pkg/scheduler/framework/
interface.go, FitError.Error in types.go). A verdict here holds the decision, that summary in the
scheduler's words, and its causes: which nodes each filter excluded, what each pool answers, which node
comes closest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube.dra.allocation import ClaimSpec, NodeVerdict, claim_spec_of
from gpulint.kube.gangs.members import Gang, GangVerdict, gangs_of, reported_gangs
from gpulint.kube.gangs.packing import WORK_BUDGET
from gpulint.kube.pools.fit import EXCLUDED, FITS, LIMITED, NEVER, UNKNOWN, PoolFit
from gpulint.kube.quantity import format_amount
from gpulint.kube.queueing.workload import template_labels as workload_template_labels
from gpulint.kube.refs import Path
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import (
    AFFINITY_REASONS,
    REASON_NODE_NAME,
    REASON_UNSCHEDULABLE,
    FitResult,
    PodRequirements,
)
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, part_fact
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.shared import (
    PoolGangVerdict,
    admitted_gang,
    allocation_error,
    allocation_failure,
    asks_pools,
    claim_entries,
    extended_resource_claim,
    extender_shares,
    gang_pool_domains,
    gang_verdict,
    gang_with_pools,
    gke_created_pool,
    gpu_pod_requirements,
    pool_fits,
    referenced_claims,
    scale_up_verdict,
    scheduling_hint,
    selection_leaves_no_node,
    selection_limits_replicas,
    written_requirements,
)
from gpulint.lint.world.dra_objects import claim_of
from gpulint.lint.world.kinds import DRA_GROUP
from gpulint.lint.world.resolver import Resolver
from gpulint.lint.world.shapes import of_shape

if TYPE_CHECKING:  # the DRA model (and CEL with it) loads only when a check needs it
    from gpulint.kube.dra.devices import DeviceGroup

# What the renderers word verdicts with: a quantity as Kubernetes prints it, and the gang search's budget.
__all__ = [
    "WORK_BUDGET",
    "Capacity",
    "Cause",
    "ClaimVerdict",
    "DraVerdict",
    "Exclusions",
    "GangAnswer",
    "LoneDomain",
    "NodeRow",
    "PodSpecSite",
    "SchedulingVerdict",
    "SiteDetail",
    "asks_dra",
    "claim_verdict",
    "dra_verdict",
    "format_amount",
    "gang_answer",
    "gang_answers",
    "lone_domain",
    "pod_sites",
    "pool_answer",
    "scheduling_cause",
    "scheduling_verdict",
    "site_detail",
    "template_labels",
]

POOL_STATES = {
    NEVER: "never fits",
    EXCLUDED: "cannot be chosen",
    LIMITED: "cannot grow",  # its limits, its max size, or Cluster Autoscaler's backoff
    UNKNOWN: "unknown",
}


@dataclass(frozen=True)
class Cause:
    """Why no node takes the pod, as the scheduler says it: FitError's summary, and the smallest change that
    would help, read off the nodes the pod's node selection allows (" ..." with a leading space, or "")."""

    reason: str
    hint: str = ""
    # The pod's own required node affinity/selector leaves no node (or pool) that offers what it asks: the
    # cause over-tight-affinity words, with the requirement that excludes most; gpu-unschedulable leaves it.
    selection: bool = False

    def notes(self) -> tuple[str, ...]:
        """The summary, then the hint: a finding's notes."""
        return (self.reason, self.hint.strip()) if self.hint.strip() else (self.reason,)


def scheduling_cause(result: FitResult, pod: PodRequirements, resolver: Resolver) -> Cause:
    """Why the pod fits none of the nodes ``result`` judged (on the empty cluster, or with the pods running now)."""
    return Cause(result.summary(), scheduling_hint(result, pod, resolver))


@dataclass(frozen=True)
class Exclusions:
    """Nodes each filter excluded (a node counts under its first failing filter, as the scheduler counts it)."""

    affinity: int  # NodeAffinity: the pod's nodeSelector and required node affinity
    taints: int  # TaintToleration
    other: int  # NodeUnschedulable (cordoned) and NodeName


@dataclass(frozen=True)
class Capacity:
    """One extended resource the pod asks for, against the largest node that exists and that a pool can add."""

    resource: str
    asked: Fraction
    by_dra: bool  # no node publishes it; a DeviceClass's extendedResourceName serves it
    capacity: Fraction = Fraction(0)
    allocatable: Fraction = Fraction(0)
    free: Fraction = Fraction(0)
    largest_new: tuple[Fraction, str] | None = None  # (allocatable, instance type) of a pool's largest node
    extender: str = ""  # the plugin whose scheduler extender accounts for it (a share no node publishes)


@dataclass(frozen=True)
class NodeRow:
    """Nodes that give one result ("fits", or their failing filters' reasons joined)."""

    nodes: tuple[str, ...]
    result: str


@dataclass(frozen=True)
class SchedulingVerdict:
    """A pod template against the nodes on the empty cluster and the node pools: what gpu-unschedulable words
    and `explain` shows."""

    pod: PodRequirements  # what the scheduler judges (extended resources only DRA serves are DRA's)
    written: PodRequirements  # the pod as written, before Kueue's pins (its node selection is over-tight-affinity's)
    fit: FitResult  # on the empty cluster
    pools: tuple[PoolFit, ...]  # each pool's answer (none for a DaemonSet: it never makes a pool add a node)
    placeable: int | None  # copies the empty cluster holds at once, for a workload of several pods that fits
    cause: Cause  # the scheduler's summary; its hint only when no pool answers
    # (pods the nodes its node selection allows hold, pods that would fit without it) when the selection is why
    # the workload's pods do not all fit: over-tight-affinity words it
    selection_limits: tuple[int, int] | None = None

    @property
    def extended(self) -> dict[str, Fraction]:
        """The extended resources the pod asks for, as written."""
        return {name: amount for name, amount in self.written.requests.items() if is_extended(name)}

    @property
    def scales_up(self) -> bool:
        """A pool adds a node the pod fits."""
        return any(fit.state == FITS for fit in self.pools)

    @property
    def scale_up_doubtful(self) -> bool:
        """No pool is proven to add a node, but one may (its answer is unknown, or its limits bind now)."""
        return scale_up_verdict(list(self.pools))[0] in (UNKNOWN, LIMITED)

    def scale_up(self) -> PoolFit | None:
        """The first pool that adds a node the pod fits."""
        return next((fit for fit in self.pools if fit.state == FITS), None)


@dataclass(frozen=True)
class SiteDetail:
    """What `explain` adds to the verdict: the resources' names and the largest nodes, the per-node table, and
    the causes per filter (left out of the verdict: no rule asks, and it costs a pass over the nodes)."""

    unknown: tuple[str, ...]  # extended resources no node, pool or DeviceClass offers
    unproven: str  # why the inventory cannot prove those absent (gpu-resource-unknown's warning); "": it can
    shares: tuple[tuple[str, str], ...]  # (resource, plugin): a scheduler extender's share, never published
    fractional: tuple[str, ...]  # extended resources asked in a fraction (the API server rejects it)
    capacity: tuple[Capacity, ...]
    excluded: Exclusions
    rows: tuple[NodeRow, ...]
    touched: str  # a node the pod's selection reaches and that rejects it ("" when none)


def pod_sites(obj: KubeObject) -> list[PodSpecSite]:
    return list(obj.facts.sites())


def template_labels(obj: KubeObject, site: PodSpecSite) -> dict[str, Any]:
    return workload_template_labels(obj.data, site)


def scheduling_verdict(
    kind: str,
    site: PodSpecSite,
    resolver: Resolver,
    as_written: PodSpecSite | None = None,
    facts: ObjectFacts | None = None,
    namespace: str = "",
) -> SchedulingVerdict:
    """The requirements gpu-unschedulable judges (DRA-backed extended resources are the DRA step's; a pod
    without extended resources as written), fitted once on the empty cluster and against the pools.
    ``site`` is the pod as it starts (a queued workload's with Kueue's pins), ``as_written`` the site before
    them (default ``site``): its node selection is the pod's own. ``namespace``: its object's, as written (a
    GKE namespace may name the ComputeClass GKE selects for it). Built once per pod template and inventory
    in the ``facts`` of its object while it is checked."""
    ask = _SchedulingAsk(
        kind,
        site,
        site if as_written is None else as_written,
        resolver,
        facts,
        resolver.namespace_class(namespace, kind),
    )
    key = ("scheduling verdict", kind, site.pods, namespace)
    return part_fact(facts, site.spec, key, _scheduling_verdict_of_shape, ask, against=resolver)


@dataclass(frozen=True)
class _SchedulingAsk:
    """One pod template as the scheduling verdict judges it: ``site`` as it starts (with Kueue's pins),
    ``as_written`` before them, in a namespace whose GKE ComputeClass is ``namespace_class``."""

    kind: str
    site: PodSpecSite
    as_written: PodSpecSite
    resolver: Resolver
    facts: ObjectFacts | None
    namespace_class: str


def _scheduling_verdict_of_shape(ask: _SchedulingAsk) -> SchedulingVerdict:
    # the pod as it starts and as written: Kueue's pins may tell them apart
    site, as_written = ask.site, ask.as_written
    key = ("scheduling verdict", ask.kind, site.path, site.pods, as_written.path, as_written.pods, ask.namespace_class)
    specs = (site.spec,) if as_written is site else (site.spec, as_written.spec)
    return of_shape(ask.resolver.pod_shapes, (*key, len(specs)), specs, ask.facts, _scheduling_verdict, ask)


def _scheduling_verdict(ask: _SchedulingAsk) -> SchedulingVerdict:
    site, resolver = ask.site, ask.resolver
    written = written_requirements(ask.kind, ask.as_written.spec, resolver, ask.facts)
    started = written if ask.as_written is site else written_requirements(ask.kind, site.spec, resolver, ask.facts)
    pod = gpu_pod_requirements(ask.kind, site, resolver, ask.facts) or started  # with Kueue's pins
    model = resolver.model
    result = model.evaluate(pod)
    fits = (
        pool_fits(pod, resolver, ask.namespace_class, priorities=True)
        if asks_pools(resolver) and ask.kind != "DaemonSet"
        else []
    )
    return SchedulingVerdict(
        pod,
        written,
        result,
        tuple(fits),
        model.placeable(pod) if result.fits and site.pods and site.pods > 1 else None,
        replace(
            Cause(result.summary()) if result.fits or fits else scheduling_cause(result, pod, resolver),
            selection=selection_leaves_no_node(written, resolver, ask.namespace_class),
        ),
        selection_limits_replicas(written, site.pods, resolver) if result.fits else None,
    )


def resource_names_unproven(inventory: Resolver, file: str) -> str:
    """Why the inventory cannot prove an extended resource no node publishes absent ("": it can): no node publishes any extended resource,
    or DRA may serve it through a DeviceClass's extendedResourceName and the DeviceClasses are not all known."""
    if not inventory.extended_resources_proven:
        return _cannot_tell(inventory)
    if inventory.pools_elsewhere:
        return f"{inventory.pools_elsewhere}, so it cannot tell"
    if inventory.gates.enabled("DRAExtendedResource") and not inventory.catalog_complete("DeviceClass", file):
        return (
            "the inventory does not list the cluster's DeviceClasses, and with DRAExtendedResource on a DeviceClass "
            "may back it (spec.extendedResourceName), so it cannot tell (add DeviceClasses to the inventory: "
            "gpulint inventory lists them)"
        )
    return ""


def _cannot_tell(inventory: Resolver) -> str:
    unknown = [pool for pool in inventory.pools if not pool.accelerators_known]
    if unknown:
        names = ", ".join(pool.title for pool in unknown[:3])
        return (
            f"{names} may add nodes whose instance types the node catalog does not describe, so it cannot tell "
            "whether they would (describe them with --node-catalog)"
        )
    return (
        "no node in it publishes any extended resource, so it cannot tell whether a GPU pool that scales from "
        "zero would (add the node pools to the inventory)"
    )


def site_detail(verdict: SchedulingVerdict, resolver: Resolver, file: str = "") -> SiteDetail:
    extended = verdict.extended
    known = resolver.offered_resources | resolver.dra_extended_resources().keys()
    unknown = [name for name in extended if name not in known]
    shares = extender_shares(unknown, resolver)
    unshared = tuple(name for name in unknown if name not in shares)
    return SiteDetail(
        unshared,
        resource_names_unproven(resolver, file) if unshared else "",
        tuple(shares.items()),
        tuple(name for name, amount in extended.items() if amount.denominator != 1),
        _capacity(extended, resolver),
        _exclusions(verdict.fit),
        _rows(verdict.fit),
        _touched(verdict.pod, verdict.fit),
    )


def _capacity(extended: dict[str, Fraction], resolver: Resolver) -> tuple[Capacity, ...]:
    dra_backed = set(resolver.dra_extended_resources()) - resolver.published_resources
    nodes = resolver.nodes
    shares = extender_shares(extended, resolver)
    rows = []
    for name, amount in sorted(extended.items()):
        if name in dra_backed:
            rows.append(Capacity(name, amount, True))
            continue
        plugin = shares.get(name)
        if plugin:  # left out of the verdict's pod, as gpu_pod_requirements leaves it
            rows.append(Capacity(name, amount, False, extender=plugin))
            continue
        offered = [(t.allocatable.get(name, Fraction(0)), t.name) for p in resolver.pools for t in p.templates]
        rows.append(
            Capacity(
                name,
                amount,
                False,
                max((n.capacity.get(name, Fraction(0)) for n in nodes), default=Fraction(0)),
                max((n.allocatable.get(name, Fraction(0)) for n in nodes), default=Fraction(0)),
                max((n.free(name) for n in nodes), default=Fraction(0)),
                max(offered, default=None),
            )
        )
    return tuple(rows)


def _exclusions(result: FitResult) -> Exclusions:
    reasons = result.reasons.items()
    return Exclusions(
        sum(c for r, c in reasons if r in AFFINITY_REASONS),
        sum(c for r, c in reasons if r.startswith("node(s) had untolerated taint")),
        sum(c for r, c in reasons if r in (REASON_UNSCHEDULABLE, REASON_NODE_NAME)),
    )


def _rows(result: FitResult) -> tuple[NodeRow, ...]:
    by_result: dict[str, list[str]] = {}
    if result.fitting:
        by_result["fits"] = [node.name for node in result.fitting]
    for group, reasons in result.failing:  # rows with the same verdict are shown once
        by_result.setdefault("; ".join(reasons), []).extend(node.name for node in group.nodes)
    return tuple(NodeRow(tuple(names), verdict) for verdict, names in by_result.items())


def _touched(pod: PodRequirements, result: FitResult) -> str:
    """A node the pod's node selection allows and that rejects it. A node the selection excludes is never one
    the pod touches (the scheduler names only a node's first failing filter, so a tainted node may be outside
    the selection too)."""
    return next(
        (
            group.representative.name
            for group, _ in result.failing
            if pod.matches_affinity(group.representative) and pod.node_name in ("", group.representative.name)
        ),
        "",
    )


def pool_answer(fit: PoolFit) -> tuple[str, str]:
    """A pool's answer in words (its state, why), as `explain` lists it; ("", "") when it adds a node."""
    return ("", "") if fit.state == FITS else (POOL_STATES[fit.state], fit.why)


@dataclass(frozen=True)
class GangAnswer:
    """A gang the object starts, packed on the nodes (no pools) or against the nodes its pools can add: what
    gang-unsatisfiable and over-tight-topology word and `explain` shows."""

    gang: Gang
    with_pools: PoolGangVerdict | None  # with node pools: gang-unsatisfiable's verdict
    packed: GangVerdict | None  # without pools: where it fits on the nodes
    # packed without its topology requirement, when the requirement makes it unplaceable: the cause when it fits
    free: GangVerdict | None = None
    unpublished: bool = False  # a member asks for an extended resource no node publishes (gpu-resource-unknown's)
    # without pools read: why GKE may create a node pool for a member ("" when it is not known to), which the
    # nodes do not show (Autopilot, node pool auto-creation): "never" on the nodes is then unknown
    created: str = ""

    @property
    def topology_is_cause(self) -> bool:
        """The topology requirement, not the cluster, keeps the gang from being placed."""
        return self.free is not None and bool(self.free.fitting_domains())


Memo = Callable[[Any, Callable[[], Any]], Any]


def _no_memo(key: Any, work: Callable[[], Any]) -> Any:
    return work()


def gang_answers(
    obj: KubeObject, resolver: Resolver, memo: Memo = _no_memo, reported_only: bool = False
) -> list[GangAnswer]:
    """``memo``: the run's, to pack each distinct gang shape once; ``reported_only``: the gangs whose findings
    this object carries (a group joined by several objects is reported on the first)."""
    gangs = reported_gangs(obj, resolver) if reported_only else gangs_of(obj, resolver)
    chosen = resolver.namespace_class(obj.ref.namespace, obj.kind)
    return [gang_answer(in_namespace_class(gang, chosen), resolver, memo) for gang in gangs]


def in_namespace_class(gang: Gang, name: str) -> Gang:
    """The gang's members as GKE admits their pods in a namespace whose default ComputeClass is ``name`` (the
    class in their nodeSelector, as every single pod's verdict reads it)."""
    if not name:
        return gang
    from gpulint.kube.pools.gke import with_namespace_class

    return replace(gang, members=[replace(m, pod=with_namespace_class(m.pod, name)) for m in gang.members])


def gang_answer(gang: Gang, resolver: Resolver, memo: Memo = _no_memo) -> GangAnswer:
    """The gang as its pods are scheduled (admitted_gang: the requests each pod's own verdict judges), packed."""
    gang = admitted_gang(gang, resolver)
    if resolver.pools:
        return GangAnswer(gang, gang_with_pools(gang, resolver), None)
    packed = gang_verdict(gang, resolver, memo)
    free = gang_verdict(gang, resolver, memo, topology_key="") if packed.unsatisfiable and gang.topology_key else None
    created = next((fit.why for m in gang.members if (fit := gke_created_pool(m.pod, resolver)) is not None), "")
    return GangAnswer(gang, None, packed, free, unpublished_demand(gang, resolver), created)


@dataclass(frozen=True)
class LoneDomain:
    """Of several domains of a gang's topology key, one alone can host the whole gang: over-tight-topology's
    warning, which `explain`'s gang step shows."""

    key: str
    domain: str
    domains: int  # the domains that exist (with pools: those its node pools can add nodes in too)
    with_pools: bool


def lone_domain(
    gang: Gang, resolver: Resolver, memo: Memo = _no_memo, packed: GangVerdict | None = None
) -> LoneDomain | None:
    """On the nodes (``packed``: the gang's verdict there, when already packed), or with node pools on the
    nodes and the nodes the pools may add per domain (unknown domains are not judged). An unplaceable gang is
    gang-unsatisfiable's: none."""
    if not gang.topology_key:
        return None
    gang = admitted_gang(gang, resolver)
    if resolver.pools:
        verdict = gang_pool_domains(gang, resolver)
        if verdict is None:
            return None
    else:
        verdict = packed if packed is not None else gang_verdict(gang, resolver, memo)
    if verdict.unsatisfiable:
        return None
    only = verdict.only_domain()  # every other domain proven not to hold it
    if only is None or len(verdict.placements) <= 1:
        return None
    return LoneDomain(gang.topology_key, only.domain, len(verdict.placements), bool(resolver.pools))


def unpublished_demand(gang: Gang, resolver: Resolver) -> bool:
    """A member asks for an extended resource no node publishes: packing would only restate that."""
    published = resolver.published_resources
    return any(is_extended(name) and name not in published for m in gang.members for name in m.pod.requests)


@dataclass(frozen=True)
class DraVerdict:
    """A pod template's resource claims (and DRA-backed extended resources) against the nodes that pass its
    other filters: what claim-unsatisfiable words and `explain` shows."""

    entries: int  # resourceClaims entries written
    found: int  # claims the linted files or the inventory hold (and the extended resources' claims)
    evaluated: bool  # some claim found and ResourceSlices to allocate from
    allowed: int  # nodes that pass the other filters
    fitting: int  # of those, nodes the claims can be allocated on
    total: int = 0  # nodes in the inventory
    # the allocator's answer per device group, for the claims together on the allowed nodes
    answers: tuple[tuple[DeviceGroup, NodeVerdict], ...] = ()
    # each claim found names classes that exist and selectors that compile (else device-class-unknown's or
    # cel-invalid's finding) and alone fits some node (else the claim's own finding)
    judgeable: bool = False
    extended: tuple[Path, str] | None = None  # a DRA-backed extended resource no node can ever serve: where, why
    absent: tuple[str, ...] = ()  # DeviceClasses the claims name that the cluster does not define (absent_classes)

    @property
    def error(self) -> str | None:
        """Why the allocator errors on a node the pod may use: the pod stays Pending whatever others offer."""
        return allocation_error(list(self.answers))

    @property
    def reason(self) -> str | None:
        """Why none fits, from the node that came closest, counted against every node."""
        return None if self.fitting or not self.answers else allocation_failure(list(self.answers), self.total)

    @property
    def unknown(self) -> str | None:
        """Why the allocator cannot tell on some node (a class the inventory lacks, a search too large)."""
        return next((verdict.reason for _, verdict in self.answers if verdict.fits is None), None)

    def subrequests(self) -> str | None:
        """Which firstAvailable subrequest the allocator takes where the claims fit, with the nodes it takes it on
        (its search tries a request's subrequests in order and keeps the first that completes); None without
        subrequests, or where an earlier one's fit is unknown on some node."""
        taken: dict[str, int] = {}
        for group, verdict in self.answers:
            if verdict.fits and not verdict.chosen:
                return None
            for name in dict.fromkeys(verdict.chosen) if verdict.fits else ():  # two claims may name one alike
                if name:
                    taken[name] = taken.get(name, 0) + len(group.nodes)
        shown = ", ".join(f"{name} on {count} node{'s' if count != 1 else ''}" for name, count in taken.items())
        return f"firstAvailable: the allocator takes {shown}" if taken else None

    def together(self) -> str | None:
        """Why the claims cannot be allocated on any node the pod may use, counted against those nodes (an
        allocator error on one of them first: it fails every attempt)."""
        if not self.answers:
            return None
        return self.error or allocation_failure(list(self.answers), self.allowed)


def asks_dra(site: PodSpecSite, resolver: Resolver) -> bool:
    """The pod names a resource claim or asks for a DRA-backed extended resource (dra_verdict is not None)."""
    entries = site.spec.get("resourceClaims")
    return bool(entries if isinstance(entries, list) else None) or extended_resource_claim(site, resolver) is not None


def dra_verdict(obj: KubeObject, site: PodSpecSite, resolver: Resolver, result: FitResult) -> DraVerdict | None:
    """None for a pod that names no claim and asks for no DRA-backed extended resource. ``result``: the
    scheduling verdict's fit (the nodes that pass the pod's other filters)."""
    entries = site.spec.get("resourceClaims")
    entries = entries if isinstance(entries, list) else []
    extended = extended_resource_claim(site, resolver)
    if not entries and extended is None:
        return None
    claims = referenced_claims(obj, site, resolver)
    dra, total = resolver.dra, len(resolver.nodes)
    unserved = None
    if extended is not None:
        claims.append(extended[0])
        if dra.has_devices:
            why = allocation_failure(dra.verdicts((extended[0],)), total)
            unserved = (extended[1], why) if why is not None else None
    allowed = frozenset(node.name for node in result.fitting)
    absent = absent_classes(linted_claims(obj, site, resolver), resolver, obj.document.path)
    if not claims or not dra.has_devices:
        return DraVerdict(len(entries), len(claims), False, len(allowed), 0, total, absent=absent)
    answers = dra.verdicts(tuple(claims), allowed)
    fitting = sum(len(group.nodes) for group, verdict in answers if verdict.fits)
    judgeable = all(judgeable_claim(claim, resolver) for claim in claims) and not any(
        allocation_failure(dra.verdicts((claim,)), total) is not None for claim in claims
    )
    return DraVerdict(
        len(entries), len(claims), True, len(allowed), fitting, total, tuple(answers), judgeable, unserved, absent
    )


def linted_claims(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> list[ClaimSpec]:
    """The claims the pod references that are linted objects, which device-class-unknown judges (not the
    inventory's, which exist already, nor the template a ComputeDomain's controller makes with its driver's
    class)."""
    claims = []
    for entry, located, kind in claim_entries(obj, site, resolver):
        name = entry.get("resourceClaimTemplateName") or entry.get("resourceClaimName")
        linted = resolver.linted.find(DRA_GROUP, kind, obj.ref.namespace, str(name)) if kind else None
        if located is not None and linted is not None and located is linted:
            claims.append(claim_spec_of(linted.data, kind))
    return claims


def absent_classes(claims: list[ClaimSpec], resolver: Resolver, file: str) -> tuple[str, ...]:
    """The DeviceClasses the claims name that the cluster does not define, when its classes are known whole
    (device-class-unknown's error): the scheduler leaves the pod Pending ("request %s: device class %s does not
    exist", kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go)."""
    if not resolver.catalog_complete("DeviceClass", file):
        return ()
    defined = resolver.device_classes
    named = {a.class_name for claim in claims for r in claim.requests for a in r.alternatives}
    return tuple(sorted(name for name in named if name and name not in defined))


def judgeable_claim(claim: ClaimSpec, resolver: Resolver) -> bool:
    """Every request has alternatives naming classes that exist, with selectors that compile: else the claim is
    device-class-unknown's or cel-invalid's finding, and its allocation is not judged."""
    from gpulint.kube.cel.engine import CelProblem  # CEL only for DRA claims

    dra = resolver.dra
    alternatives = [a for r in claim.requests for a in r.alternatives]
    return (
        all(r.alternatives for r in claim.requests)
        and all(a.class_name in dra.classes for a in alternatives)
        and not any(isinstance(dra.engine.compile(s.expression), CelProblem) for a in alternatives for s in a.selectors)
    )


@dataclass(frozen=True)
class ClaimVerdict:
    """A ResourceClaim or ResourceClaimTemplate of the linted files against every node's devices: what
    claim-unsatisfiable words and `explain` shows."""

    evaluated: bool  # nodes and ResourceSlices to allocate from
    requests: int
    fitting: int  # nodes the claim can be allocated on
    reason: str | None  # why it can never be allocated
    where: Path = ()  # its first request's list
    judgeable: bool = False  # requests whose classes exist and whose selectors compile (judgeable_claim)
    now: str | None = None  # why the devices allocated claims leave free now cannot hold it (it fits the empty cluster)
    absent: tuple[str, ...] = ()  # DeviceClasses it names that the cluster does not define (absent_classes)


def claim_verdict(obj: KubeObject, resolver: Resolver) -> ClaimVerdict | None:
    """None for an object that is not a resource.k8s.io claim or claim template."""
    claim = claim_of(obj)
    if claim is None:
        return None
    verdict = _claim_verdict(obj, claim, resolver)
    absent = absent_classes([claim], resolver, obj.document.path)
    return replace(verdict, absent=absent) if absent else verdict


def _claim_verdict(obj: KubeObject, claim: ClaimSpec, resolver: Resolver) -> ClaimVerdict:
    dra = resolver.dra
    if not resolver.has_nodes or not dra.has_devices:
        return ClaimVerdict(False, len(claim.requests), 0, None)
    if not claim.requests:
        return ClaimVerdict(True, 0, 0, None)
    where, judgeable = claim.requests[0].path[:-1], judgeable_claim(claim, resolver)
    answers = dra.verdicts((claim,))
    reason = allocation_failure(answers, len(resolver.nodes))
    if reason is not None:
        return ClaimVerdict(True, len(claim.requests), 0, reason, where, judgeable)
    fitting = sum(len(group.nodes) for group, verdict in answers if verdict.fits)
    now = (
        allocation_failure(dra.verdicts_now((claim,)), len(resolver.nodes))
        if dra.allocated and not _allocated(obj)
        else None
    )
    return ClaimVerdict(True, len(claim.requests), fitting, None, where, judgeable, now)


def _allocated(obj: KubeObject) -> bool:
    """A claim that is itself allocated already holds its devices."""
    status = obj.data.get("status")
    return isinstance(status, dict) and isinstance(status.get("allocation"), dict)
