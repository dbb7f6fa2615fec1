"""Kueue's flavor assignment, for the question "can this Workload ever be admitted, and now?".

Translated from kubernetes-sigs/kueue ``pkg/scheduler/flavorassigner/flavorassigner.go``:
pod sets in order; for each resource, the resource group that covers it (none: ``resource X
unavailable in ClusterQueue``), that group's flavors in order; a flavor is skipped when one of
its nodeTaints (NoSchedule/NoExecute) is tolerated neither by the pod nor by the flavor
(``untolerated taint ... in flavor F``) or when the pod's nodeSelector / required node affinity,
restricted to the label keys the flavor sets, does not match its nodeLabels (``flavor F doesn't
match node affinity``); then every resource of the group is checked against the flavor's
quota: above PotentialAvailable (nominal quota plus what the cohort can lend, within
borrowingLimit) it never fits (``insufficient quota ... > maximum capacity``); above Available
(what the queues use now) it waits (``insufficient unused quota``).

Pod sets of one group (the ``kueue.x-k8s.io/podset-group-name`` annotation, with a required or
preferred topology level) are assigned together, as Kueue's assignFlavors does: their requests summed,
and a flavor kept only if it serves every one of them; each pod set of the group carries the group's
verdict.

"Never" is claimed only with a proof: a pod set that no flavor of a group could ever hold, or
pod sets whose sum exceeds the maximum capacity of every flavor they could use.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.quantity import format_amount
from gpulint.kube.queueing.kueue import ClusterQueue, KueueSetup, ResourceFlavor, ResourceGroup
from gpulint.kube.queueing.namespace import LimitItem, with_limit_ranges
from gpulint.kube.queueing.workload import TopologyRequest, pod_sets, queue_name, topology_request
from gpulint.kube.refs import Path
from gpulint.kube.scheduler import NodeInfo, PodRequirements, Taint, Toleration, pod_requirements
from gpulint.kube.workloads import ObjectFacts, effective_pod_spec

PODS = "pods"


@dataclass(frozen=True)
class PodSetDemand:
    """A pod set as Kueue counts it: per-pod requests (limits as missing requests, LimitRange
    defaults applied) times the pod count."""

    name: str
    count: int
    per_pod: tuple[tuple[str, Fraction], ...]
    pod: PodRequirements  # nodeSelector, affinity, tolerations
    path: Path = ()
    topology: TopologyRequest = TopologyRequest()

    def total(self, queue: ClusterQueue) -> dict[str, Fraction]:
        requests = {name: amount * self.count for name, amount in self.per_pod if amount}
        if queue.group_for(PODS) is not None:  # a queue that covers "pods" counts them
            requests[PODS] = Fraction(self.count)
        return requests


@dataclass(frozen=True)
class Attempt:
    flavor: str
    reason: str  # why it cannot (ever, or now); "" when it fits now
    ever: bool  # the flavor could hold the pod set with nothing else admitted
    now: bool = False  # ... with the usage the queues report


@dataclass
class GroupChoice:
    """One pod set's (or one group of pod sets') resources of one resource group, and what each flavor said."""

    pod_set: str  # its name, or the group's name and its pod sets' names
    covered: tuple[str, ...]
    requests: dict[str, Fraction]
    attempts: list[Attempt]
    members: tuple[str, ...] = ()  # the pod sets the flavor is for (those that request one of the resources)

    @property
    def candidates(self) -> list[str]:
        return [a.flavor for a in self.attempts if a.ever]


@dataclass
class AdmissionVerdict:
    queue: ClusterQueue
    never: list[str] = field(default_factory=list)  # Kueue's words for why no assignment can ever exist
    # never, unless Kueue's configuration maps the resource to another (resources.transformations)
    doubtful: list[str] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)  # why it is not admitted with today's usage
    choices: list[GroupChoice] = field(default_factory=list)
    usage_known: bool = False

    def flavors_of(self, pod_set: str) -> list[list[str]]:
        """Per resource group of the pod set, the flavors it could ever be given."""
        return [choice.candidates for choice in self.choices if pod_set in (choice.members or (choice.pod_set,))]


def _taint_text(taint: Taint) -> str:
    """corev1.Taint.ToString: key=value:effect."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def flavor_mismatch(flavor: ResourceFlavor, pod: PodRequirements) -> str:
    """checkFlavorForPodSets: "" when the flavor's taints and labels admit the pod."""
    tolerations = (*pod.tolerations, *flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in tolerations):
            return f"untolerated taint {_taint_text(taint)} in flavor {flavor.name}"
    labels = dict(flavor.node_labels)
    node = NodeInfo(flavor.name, labels, (), False, {}, {})
    # flavorSelector: only the requirements on the flavor's own label keys count
    if not all(r.matches(node) for r in pod.node_selector if not r.field and r.key in labels):
        return f"flavor {flavor.name} doesn't match node affinity"
    if pod.affinity_terms is not None:
        terms = [tuple(r for r in term if not r.field and r.key in labels) for term in pod.affinity_terms]
        if terms and all(terms) and not any(all(r.matches(node) for r in term) for term in terms):
            return f"flavor {flavor.name} doesn't match node affinity"
    return ""


def _quota_attempt(
    setup: KueueSetup,
    queue: ClusterQueue,
    flavor: str,
    requests: dict[str, Fraction],
    used: dict[tuple[str, str], Fraction],
) -> Attempt:
    for resource, amount in sorted(requests.items()):
        fr = (flavor, resource)
        maximum = setup.potential_available(queue, fr)
        if amount > maximum:
            return Attempt(
                flavor,
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests (0) + "
                f"current podset request ({format_amount(amount)}) > maximum capacity ({format_amount(maximum)})",
                False,
            )
    for resource, amount in sorted(requests.items()):
        fr = (flavor, resource)
        wanted = used.get(fr, Fraction(0)) + amount
        available = setup.available(queue, fr)
        if wanted > available:
            return Attempt(
                flavor,
                f"insufficient unused quota for {resource} in flavor {flavor}, "
                f"{format_amount(wanted - available)} more needed",
                True,
            )
    return Attempt(flavor, "", True, True)


def podset_groups(pod_sets: list[PodSetDemand]) -> list[list[PodSetDemand]]:
    """The pod sets as Kueue assigns them flavors: those of one podset-group-name together, in the order of
    each group's first pod set; the others alone (orderedgroups keyed by the group name or the index)."""
    groups: dict[str, list[PodSetDemand]] = {}
    for index, pod_set in enumerate(pod_sets):
        groups.setdefault(f"group/{pod_set.topology.group}" if pod_set.topology.group else str(index), []).append(
            pod_set
        )
    return list(groups.values())


def assign(setup: KueueSetup, queue: ClusterQueue, pod_sets: list[PodSetDemand]) -> AdmissionVerdict:
    verdict = AdmissionVerdict(queue, usage_known=queue.usage_known)
    used: dict[tuple[str, str], Fraction] = defaultdict(Fraction)  # by earlier pod sets (the "now" view)
    now_ok = True
    for members in podset_groups(pod_sets):
        names = [member.name for member in members]
        requests: dict[str, Fraction] = defaultdict(Fraction)
        for member in members:
            for name, amount in member.total(queue).items():
                requests[name] += amount
        handled: set[str] = set()
        for resource in sorted(requests):
            if resource in handled:
                continue
            group = queue.group_for(resource)
            if group is None:
                for name in names:  # each pod set of the group carries the group's status
                    message = (
                        f"couldn't assign flavors to pod set {name}: resource {resource} unavailable in ClusterQueue"
                    )
                    (verdict.doubtful if _maybe_transformed(resource, queue, pod_sets) else verdict.never).append(
                        message
                    )
                continue
            wanted = {name: amount for name, amount in requests.items() if name in group.covered}
            handled.update(wanted)
            choice = _choose(setup, queue, group, members, wanted, used)
            verdict.choices.append(choice)
            if not choice.candidates:
                reasons = ", ".join(a.reason for a in choice.attempts) or "the resource group has no flavors"
                verdict.never.extend(f"couldn't assign flavors to pod set {name}: {reasons}" for name in names)
                continue
            fitting = next((a for a in choice.attempts if a.now), None)
            if fitting is None:
                now_ok = False
                verdict.waits.append(
                    f"pod set {choice.pod_set}: " + ", ".join(a.reason for a in choice.attempts if a.ever)
                )
                continue
            for name, amount in wanted.items():
                used[(fitting.flavor, name)] += amount
    if not verdict.never:
        verdict.never.extend(_together(setup, queue, verdict.choices))
    if not queue.usage_known or verdict.never or now_ok:
        verdict.waits = []
    return verdict


def _maybe_transformed(resource: str, queue: ClusterQueue, pod_sets: list[PodSetDemand]) -> bool:
    """An extended resource the queue does not cover, while it covers one no pod set asks for: the
    sign of a resource transformation in Kueue's configuration (HAMi's nvidia.com/gpucores counted
    as total-gpucores, MIG profiles as GPU memory), which only that configuration shows."""
    if "/" not in resource or "kubernetes.io/" in resource:
        return False
    requested = {name for demand in pod_sets for name, _ in demand.per_pod} | {PODS}
    return any(name not in requested for group in queue.groups for name in group.covered)


def _topology_mismatch(
    setup: KueueSetup, queue: ClusterQueue, group: ResourceGroup, flavor: ResourceFlavor, pod_set: PodSetDemand
) -> str:
    """checkPodSetAndFlavorMatchForTAS (its messages): a flavor serves topology-aware pod sets only with a
    Topology that has every level they name; a TAS flavor serves only them, unless every flavor of the
    queue is one (TAS is then implied)."""
    if not pod_set.topology.explicit:
        flavors = [setup.flavors.get(name) for name in queue.flavor_names()]
        tas_only = all(f is not None and f.topology_name for f in flavors)  # TAS implied for every pod set
        unknown = any(f is None for f in flavors)
        if flavor.topology_name and not tas_only and not unknown:
            return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
        return ""
    if not flavor.topology_name:
        requested = {name for name, _ in pod_set.per_pod}
        if requested & set(group.covered):
            return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
        return ""
    topology = setup.topologies.get(flavor.topology_name)
    if topology is not None and any(level not in topology.levels for _, level in pod_set.topology.levels):
        return f'Flavor "{flavor.name}" does not contain the requested level'
    return ""


def _choose(
    setup: KueueSetup,
    queue: ClusterQueue,
    group: ResourceGroup,
    members: list[PodSetDemand],
    requests: dict[str, Fraction],
    used: dict[tuple[str, str], Fraction],
) -> GroupChoice:
    """findFlavorForPodSets: the group's flavors in order, each checked against every pod set given it together
    (checkFlavorForPodSets: the first that refuses it names why), then the quota of their summed requests."""
    attempts = []
    for flavor_quotas in group.flavors:
        name = flavor_quotas.name
        flavor = setup.flavors.get(name)
        if flavor is not None:
            mismatch = next(
                (
                    found
                    for pod_set in members
                    if (
                        found := _topology_mismatch(setup, queue, group, flavor, pod_set)
                        or flavor_mismatch(flavor, pod_set.pod)
                    )
                ),
                "",
            )
            if mismatch:
                attempts.append(Attempt(name, mismatch, False))
                continue
        attempts.append(_quota_attempt(setup, queue, name, requests, used))
    names = [m.name for m in members]
    served = tuple(m.name for m in members if set(m.total(queue)) & set(requests))
    shown = members[0].name if len(members) == 1 else f"group {members[0].topology.group} ({', '.join(names)})"
    return GroupChoice(shown, group.covered, requests, attempts, served)


def _together(setup: KueueSetup, queue: ClusterQueue, choices: list[GroupChoice]) -> list[str]:
    """Pod sets that each fit alone but not together: the sum of a resource over every pod set
    against the maximum capacity of every flavor any of them could use (a bound, so a proof)."""
    demand: dict[str, Fraction] = defaultdict(Fraction)
    flavors: dict[str, set[str]] = defaultdict(set)
    pod_sets: dict[str, list[str]] = defaultdict(list)
    for choice in choices:
        for resource, amount in choice.requests.items():
            demand[resource] += amount
            flavors[resource].update(choice.candidates)
            pod_sets[resource].append(choice.pod_set)
    out = []
    for resource, total in sorted(demand.items()):
        if len(pod_sets[resource]) < 2:
            continue
        capacity = sum(
            (setup.potential_available(queue, (f, resource)) for f in sorted(flavors[resource])), Fraction(0)
        )
        if total > capacity:
            names = ", ".join(sorted(flavors[resource]))
            out.append(
                f"insufficient quota for {resource}: the pod sets ({', '.join(pod_sets[resource])}) need "
                f"{format_amount(total)} together > maximum capacity ({format_amount(capacity)}) of flavor(s) {names}"
            )
    return out


def demands_of(facts: ObjectFacts, limit_ranges: Iterable[LimitItem] = ()) -> list[PodSetDemand]:
    """The pod sets of one Workload of the object, with the requests Kueue counts: the namespace's
    LimitRange defaults applied, limits standing in for missing requests (workload.AdjustResources)."""
    kind = str(facts.data.get("kind", ""))
    items = list(limit_ranges)
    out = []
    for pod_set in pod_sets(facts):
        spec, _ = with_limit_ranges(effective_pod_spec(kind, pod_set.site.spec), items)
        requirements = pod_requirements(spec, facts=facts)
        out.append(
            PodSetDemand(
                pod_set.name,
                pod_set.count,
                tuple(sorted(requirements.requests.items())),
                requirements,
                pod_set.site.path,
                topology_request(facts.data, pod_set.site),
            )
        )
    return out


MAX_ALTERNATIVE_TERMS = 64  # node affinity terms a pin may write (flavor alternatives x the pod's own terms)
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class FlavorPin:
    """What admission adds to a pod set's pods: its flavor's nodeLabels (as a nodeSelector) and tolerations.

    A resource group whose pod set could get one of several flavors adds each flavor's labels as an
    alternative (node affinity terms, ORed): the pods land on the nodes of one of them. A relaxation -
    every flavor's nodes at once, the tolerations of all - so a pod set that does not fit there never fits.
    """

    node_labels: Labels
    tolerations: tuple[Toleration, ...]
    flavors: tuple[str, ...] = ()
    alternatives: tuple[tuple[Labels, ...], ...] = ()  # per resource group with several flavors: their labels

    def describe(self) -> str:
        labels = ", ".join(f"{k}={v}" for k, v in self.node_labels)
        return f"flavor {' or '.join(self.flavors) if self.alternatives else ', '.join(self.flavors)}" + (
            f" ({labels})" if labels else ""
        )

    def apply(self, spec: dict[str, Any]) -> dict[str, Any]:
        selector = spec.get("nodeSelector")
        tolerations = spec.get("tolerations")
        extra = [{"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect} for t in self.tolerations]
        pinned = {
            **spec,
            "nodeSelector": {**(selector if isinstance(selector, dict) else {}), **dict(self.node_labels)},
            "tolerations": [*(tolerations if isinstance(tolerations, list) else []), *extra],
        }
        return _with_alternatives(pinned, self.alternatives) if self.alternatives else pinned


def _with_alternatives(spec: dict[str, Any], alternatives: tuple[tuple[Labels, ...], ...]) -> dict[str, Any]:
    """The pod's required node affinity ANDed with one of each group's flavor label sets: every term of
    the pod's own, extended by every combination (the terms stay ORed)."""
    required = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    terms = [mapping(t) for t in sequence(mapping(required).get("nodeSelectorTerms"))] or [{}]
    for choices in alternatives:
        terms = [
            {
                **term,
                "matchExpressions": [
                    *sequence(term.get("matchExpressions")),
                    *({"key": k, "operator": "In", "values": [v]} for k, v in labels),
                ],
            }
            for term in terms
            for labels in choices
        ]
    affinity = mapping(spec.get("affinity"))
    node_affinity = mapping(affinity.get("nodeAffinity"))
    return {
        **spec,
        "affinity": {
            **affinity,
            "nodeAffinity": {
                **node_affinity,
                "requiredDuringSchedulingIgnoredDuringExecution": {**mapping(required), "nodeSelectorTerms": terms},
            },
        },
    }


def flavor_pins(setup: KueueSetup, namespace: str, facts: ObjectFacts) -> dict[Path, FlavorPin]:
    """Pod spec path -> the pin of the pod set's flavors: the labels of every resource group whose flavor
    is certain (the only one that could ever hold the pod set), the alternatives of those with several."""
    name = queue_name(facts)
    if name is None or name.as_annotation or not setup:
        return {}
    local = setup.local_queue(namespace, name.name)
    queue = setup.cluster_queues.get(local.cluster_queue) if local is not None else None
    if queue is None or not setup.tree_is_sound(queue):
        return {}
    demands = [d for d in demands_of(facts) if d.count > 0]
    verdict = assign(setup, queue, demands)
    if verdict.never:
        return {}
    pins = {}
    for demand in demands:
        pin = _pin(setup, verdict.flavors_of(demand.name))
        if pin is not None:
            pins[demand.path] = pin
    return pins


def _pin(setup: KueueSetup, groups: list[list[str]]) -> FlavorPin | None:
    labels: dict[str, str] = {}
    tolerations: list[Toleration] = []
    names: list[str] = []
    alternatives: list[tuple[Labels, ...]] = []
    terms = 1
    for candidates in groups:
        flavors = [setup.flavors.get(c) for c in candidates]
        if not candidates or any(f is None for f in flavors):
            continue  # a flavor not known: where its pods go is not known
        known = [f for f in flavors if f is not None]
        tolerations.extend(t for f in known for t in f.tolerations)
        if len(known) == 1:
            labels.update(known[0].node_labels)
            names.append(known[0].name)
            continue
        choices = tuple(dict.fromkeys(f.node_labels for f in known))
        if () in choices or terms * len(choices) > MAX_ALTERNATIVE_TERMS:
            continue  # one of the flavors selects every node (or too many combinations): no narrowing
        terms *= len(choices)
        alternatives.append(choices)
        names.extend(f.name for f in known)
    if not (labels or tolerations or alternatives):
        return None
    return FlavorPin(
        tuple(sorted(labels.items())), tuple(tolerations), tuple(dict.fromkeys(names)), tuple(alternatives)
    )
