"""Would a pool add a node for this pod? Karpenter's and Cluster Autoscaler's answers, offline.

Karpenter (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling): a NodePool whose
taints (every effect; not startupTaints) the pod does not tolerate is skipped ("did not tolerate
taint"); the pod's node requirements must be compatible with the pool's: a label the pool does not
define and that is not well-known fails ("label %q does not have known values"), defined labels must
intersect; then an instance type must satisfy the requirements and have the resources
(allocatable after kube-reserved, system-reserved and eviction thresholds); limits filter out the
types whose capacity exceeds what is left ("all available instance types exceed limits for
nodepool"). Cluster Autoscaler runs the scheduler's filters against the node group's template
node, and never grows a group past its max size.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from gpulint.kube.pools.binding import ACCELERATORS_COMPLETE, PROVIDER_PREFIXES
from gpulint.kube.pools.labels import karpenter_key, node_key
from gpulint.kube.pools.model import ABSENT, Domain, NodePool, Template
from gpulint.kube.quantity import format_amount, format_bytes
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import PodRequirements, Requirement, Toleration, copies_in, untolerated
from gpulint.kube.wording import first_and_more

FITS, LIMITED, NEVER, EXCLUDED, UNKNOWN = "fits", "limited", "never", "excluded", "unknown"


@dataclass
class PoolFit:
    pool: NodePool
    state: str
    why: str = ""  # for every state but FITS
    fitting: list[Template] = field(default_factory=list)  # the types a new node for the pod may have
    room: int | None = None  # copies of the pod the pool may still add (None: no bound known)

    def best(self) -> Template | None:
        return self.fitting[0] if self.fitting else None


def daemon_overhead(template: Template, pool: NodePool, daemons: Sequence[PodRequirements]) -> dict[str, Fraction]:
    """What the DaemonSets that would run on a new node of this type request (Karpenter subtracts it
    before fitting the pod: scheduler.go isDaemonPodCompatible - the template's taints tolerated,
    PreferNoSchedule ignored, the node requirements compatible)."""
    total: dict[str, Fraction] = {}
    for daemon in daemons:
        tolerant = replace(daemon, tolerations=(*daemon.tolerations, _PREFER_NO_SCHEDULE))
        # a taint the autoscaler's template may not carry keeps the daemon off too: less overhead, never more
        if _untolerated(tolerant, pool)[0] or label_failure(daemon, template.labels, pool, template):
            continue
        for name, amount in daemon.requests.items():
            total[name] = total.get(name, Fraction(0)) + amount
        total[PODS] = total.get(PODS, Fraction(0)) + 1  # each daemon pod takes one of the node's pods
    return total


PODS = "pods"  # the kubelet's maxPods, as allocatable
_PREFER_NO_SCHEDULE = Toleration("", "Exists", "", "PreferNoSchedule")


def fit_pool(
    pod: PodRequirements, pool: NodePool, daemons: Sequence[PodRequirements] = (), named_taints: bool = False
) -> PoolFit:
    """How the pool answers the pod. ``named_taints``: the scheduler the Cluster Autoscaler runs names the
    untolerated taint in its reason (before 1.34, see scheduler.names_untolerated_taints)."""
    state, why = _untolerated(pod, pool, named_taints)
    if state:
        return PoolFit(pool, state, why)
    failure = label_failure(pod, pool.labels, pool, None)
    if failure:
        return PoolFit(pool, EXCLUDED, failure)
    fitting: list[Template] = []
    short: dict[str, list[tuple[Fraction, str]]] = {}
    after_overhead: set[str] = set()  # resources short because of the DaemonSets' requests
    filtered = 0
    for template in pool.templates:
        if label_failure(pod, template.labels, pool, template):
            filtered += 1
            continue
        overhead = daemon_overhead(template, pool, daemons) if daemons else {}
        missing = _insufficient(pod, template, overhead)
        if missing:
            for resource in missing:
                # what the DaemonSets leave, never below none (maxPods 1 with 4 daemon pods leaves 0, not -3)
                left = max(
                    Fraction(0), template.allocatable.get(resource, Fraction(0)) - overhead.get(resource, Fraction(0))
                )
                short.setdefault(resource, []).append((left, template.name))
                if overhead.get(resource):
                    after_overhead.add(resource)
            continue
        fitting.append(template)
    if not fitting:
        if pool.unknown_types:
            return PoolFit(pool, UNKNOWN, _unknown_why(pool))
        if pool.open_types:
            # A pool that may launch types outside the catalog: decided only when it has no type with the
            # accelerator at all (a CPU pool), on a provider whose catalog lists every accelerator type.
            wanted = [name for name in pod.requests if is_extended(name)]
            offered = any(t.allocatable.get(name, 0) > 0 for t in pool.templates for name in wanted)
            if not wanted or offered or pool.spec.provider not in ACCELERATORS_COMPLETE:
                known = f"{_never_why(pod, pool, short, filtered, after_overhead)}, but " if short else ""
                return PoolFit(pool, UNKNOWN, known + _unknown_why(pool))
            return PoolFit(pool, NEVER, f"none of the instance types it allows offers {', '.join(wanted)}")
        return PoolFit(pool, NEVER, _never_why(pod, pool, short, filtered, after_overhead))
    return _within_limits(pod, pool, fitting)


def _untolerated(pod: PodRequirements, pool: NodePool, named: bool = False) -> tuple[str, str]:
    """(EXCLUDED, why) when the pool's taints keep the pod off its nodes: Karpenter's words for a NodePool, the
    scheduler's (which the Cluster Autoscaler runs) for the other pools. (UNKNOWN, why) when only a taint of the
    live node the autoscaler copies does, which a flag of the autoscaler gpulint has not read may drop.
    ("", "") when the pod tolerates them."""
    spec = pool.spec
    effects = ("NoSchedule", "PreferNoSchedule", "NoExecute") if spec.karpenter else ("NoSchedule", "NoExecute")
    unproven = None
    for taint in pool.taints:
        if taint.effect not in effects or pod.tolerates(taint):
            continue
        if not pool.taint_proven(taint):
            unproven = unproven or taint
            continue
        if spec.karpenter:
            return EXCLUDED, f"did not tolerate taint (taint={taint.key}={taint.value}:{taint.effect})"
        return EXCLUDED, untolerated(taint, named)
    if unproven is not None:
        return UNKNOWN, (
            f"its node {pool.template_node} carries taint {unproven.key}={unproven.value}:{unproven.effect}, which "
            "the pod does not tolerate; Cluster Autoscaler copies it into the template unless its --startup-taint "
            "or --status-taint flags name it, and no Deployment of the autoscaler was read"
        )
    return "", ""


def label_failure(pod: PodRequirements, labels: dict[str, Domain], pool: NodePool, template: Template | None) -> str:
    """Why the pod's nodeSelector / required node affinity rules out nodes with these labels ("" if not)."""
    failure = _requirements_failure(pod.node_selector, labels, pool, template)
    if failure or pod.affinity_terms is None:
        return failure
    failures = [
        _requirements_failure(term, labels, pool, template) if term else "an empty term matches nothing"
        for term in pod.affinity_terms
    ]
    if not failures:
        return "no nodeSelectorTerms"
    return "" if "" in failures else failures[0]


def _requirements_failure(
    requirements: tuple[Requirement, ...], labels: dict[str, Domain], pool: NodePool, template: Template | None
) -> str:
    karpenter = pool.spec.karpenter
    prefixes = PROVIDER_PREFIXES.get(template.instance_type.provider, ()) if template and template.instance_type else ()
    domains = labels
    for requirement in requirements:
        if requirement.field:
            return f"{requirement.description}: a new node's name is not known in advance"
        # a deprecated label is read as its stable twin: Karpenter normalizes it, and other pools' nodes carry both
        key = karpenter_key(requirement.key, pool.spec.provider) if karpenter else node_key(requirement.key)
        domain = domains.get(key)
        if domain is None and prefixes and key.startswith(prefixes):
            domain = ABSENT
        if (
            domain is None
            and karpenter
            and template is None
            and key.startswith(("karpenter.k8s.aws/", "karpenter.azure.com/"))
        ):
            domain = Domain(None)  # the provider's well-known labels: defined by the instance types
        if domain is None or domain is ABSENT:
            if requirement.operator in ("NotIn", "DoesNotExist"):
                continue
            if karpenter and domain is None:
                return f'incompatible requirements, label "{key}" does not have known values'
            return f"{requirement.description}: its nodes do not carry {key}"
        narrowed = domain.narrow(requirement.operator, requirement.values)
        if narrowed is None or narrowed.empty:
            if karpenter:
                return f"incompatible requirements, key {key}, {_shown(requirement)} not in {domain.describe()}"
            return f"{requirement.description}: its nodes carry {key} {domain.describe()}"
        if domains is labels:
            domains = dict(labels)  # narrowed for the next requirement on the same key only
        domains[key] = narrowed
    return ""


def _shown(requirement: Requirement) -> str:
    values = f" [{', '.join(requirement.values)}]" if requirement.values else ""
    return f"{requirement.operator}{values}"


def _insufficient(pod: PodRequirements, template: Template, overhead: dict[str, Fraction]) -> list[str]:
    missing = []
    requests = dict(pod.requests)
    if PODS in template.allocatable:
        requests[PODS] = Fraction(1)  # Karpenter counts the pod itself (resources.RequestsForPods)
    for resource, amount in sorted(requests.items()):
        if not template.judged(resource):
            continue  # unknown for this type: never a reason
        if amount + overhead.get(resource, Fraction(0)) > template.allocatable.get(resource, Fraction(0)):
            missing.append(resource)
    return missing


def shown(resource: str, amount: Fraction) -> str:
    return format_bytes(amount) if resource in ("memory", "ephemeral-storage") else format_amount(amount)


def _never_why(
    pod: PodRequirements,
    pool: NodePool,
    short: dict[str, list[tuple[Fraction, str]]],
    filtered: int,
    after_overhead: Collection[str] = (),
) -> str:
    if not short:
        if filtered:
            return f"no instance type it allows matches the pod's node requirements ({filtered} ruled out)"
        if pool.emptied_by:  # Karpenter: "no instance type satisfied resources and requirements"
            return (
                "its requirements leave no instance type in the catalog: without "
                f"{' or without '.join(pool.emptied_by)} some would be left"
            )
        return "its requirements leave no instance type in the catalog"
    parts = []
    for resource, offers in sorted(short.items()):
        largest = max(amount for amount, _ in offers)
        names = sorted({name for amount, name in offers if amount == largest})
        listed = first_and_more(names)
        left = " left after the DaemonSets' requests" if resource in after_overhead else ""
        if len(offers) > 1:
            every = "every instance type it allows has"
        elif offers[0][1] == "(template)":
            every = "its nodes have"  # capacity stated outright
        else:
            every = f"its instance type {offers[0][1]} has"
        if len(offers) == 1:
            parts.append(
                f"{every} {shown(resource, largest)} {resource}{left}; the pod asks for "
                f"{shown(resource, pod.requests.get(resource, Fraction(1)))}"
            )
        else:
            parts.append(
                f"{every} at most {shown(resource, largest)} {resource}{left} ({listed}); the pod asks for "
                f"{shown(resource, pod.requests.get(resource, Fraction(1)))}"
            )
    return "; ".join(parts)


def _unknown_why(pool: NodePool) -> str:
    absent = [name for name in pool.unknown_types if name not in pool.unvouched_types]
    reasons = []
    if absent:
        reasons.append(f"instance type(s) {', '.join(absent)} are not in the node catalog")
    if pool.unvouched_types:
        reasons.append(
            f"no source vouches for what instance type(s) {', '.join(pool.unvouched_types)} offer in the node catalog"
        )
    if reasons:
        return "; ".join(reasons)
    return "it may launch instance types the node catalog does not describe (its requirements name no type or family)"


def _within_limits(pod: PodRequirements, pool: NodePool, fitting: list[Template]) -> PoolFit:
    skipped = pool.group.skipped() if pool.group is not None else ""
    if skipped:  # Cluster Autoscaler's status: the group at its max size, or in backoff (no scale-up now)
        return PoolFit(pool, LIMITED, skipped, fitting, 0)
    left = pool.nodes_left()
    if left == 0:
        spec = pool.spec
        if spec.karpenter:
            return PoolFit(pool, LIMITED, "node limits have been exhausted for nodepool", fitting, 0)
        return PoolFit(pool, LIMITED, f"it is at its max size ({spec.max_size} nodes)", fitting, 0)
    remaining = pool.remaining()
    within = [t for t in fitting if all(t.capacity.get(r, Fraction(0)) <= left_r for r, left_r in remaining.items())]
    if not within:
        shown = ", ".join(
            f"{r} {format_amount(pool.spec.limits[r])} ({format_amount(pool.in_use(r))} in use)"
            for r in sorted(remaining)
            if any(t.capacity.get(r, Fraction(0)) > remaining[r] for t in fitting)
        )
        return PoolFit(
            pool, LIMITED, f"all available instance types exceed limits for nodepool (limits: {shown})", fitting, 0
        )
    rooms = [_room(pod, t, left, remaining) for t in within]
    room = None if any(r is None for r in rooms) else max(r for r in rooms if r is not None)
    within.sort(key=lambda t: -(_room(pod, t, left, remaining) or math.inf))
    return PoolFit(pool, FITS, "", within, room)


def _room(pod: PodRequirements, template: Template, left: int | None, remaining: dict[str, Fraction]) -> int | None:
    """Copies of the pod the pool may still add with nodes of this type (None: unbounded)."""
    nodes: int | None = left
    for resource, rest in remaining.items():
        per_node = template.capacity.get(resource, Fraction(0))
        if per_node > 0:
            allowed = int(rest // per_node)
            nodes = allowed if nodes is None else min(nodes, allowed)
    return None if nodes is None else nodes * copies_in(pod, template.allocatable, template.judged)


def summary(fits: list[PoolFit]) -> str:
    """Each pool that cannot add a node for the pod, and why (the autoscalers' words)."""
    return "; ".join(f"{fit.pool.title}: {fit.why}" for fit in fits if fit.state != FITS)


def counts(fits: list[PoolFit]) -> Counter[str]:
    return Counter(fit.state for fit in fits)
