"""A pod template's required inter-pod affinity against the linted pods it names: the InterPodAffinity filter
(gpulint.kube.pod_affinity) run after the node filters, so that gpu-unschedulable words it and `explain` shows
the step. The pods it may join are those of the linted files whose templates match every term; each can run
only on the nodes that pass the scheduler's filters for it (the same model, ClusterModel.evaluate), and the
pod passes a node only when one of them can run in that node's topology domain.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from gpulint.kube import jobset_placement, lws_placement
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.pod_affinity import REASON_POD_AFFINITY, AffinityTerm, required_affinity_terms, unfilled_labels
from gpulint.kube.refs import ObjectLike, Path
from gpulint.kube.scheduler import FitResult, NodeGroup, NodeInfo, pod_requirements
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite, effective_pod_spec, template_metadata
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.world.pod_outlines import outlines_of
from gpulint.lint.world.resolver import Resolver


@dataclass(frozen=True)
class PodAffinityVerdict:
    terms: tuple[AffinityTerm, ...]
    peers: tuple[str, ...]  # the linted pod templates every term matches ("Pod/devpod/helper")
    peer_nodes: tuple[str, ...]  # the nodes where one of them passes the scheduler's filters
    fit: FitResult  # the pod's verdict with InterPodAffinity's filter run on the nodes that passed the others
    missing_key: str = ""  # a topology key of the terms JobSet's pod webhook adds that no usable node carries
    at: Path = ()  # then: the exclusive-topology annotation that makes the webhook add them
    lws: LwsPlacement | None = None  # the term LWS's pod webhook gives the workers, when it is what refuses them

    @property
    def blocked(self) -> bool:
        return not self.fit.fits

    def peers_text(self) -> str:
        return first_and_more(list(self.peers))

    def peer_nodes_text(self) -> str:
        return first_and_more(list(self.peer_nodes)) or "no node"

    def topology(self) -> str:
        keys = sorted({term.topology_key for term in self.terms})
        return ", ".join(keys)


@dataclass(frozen=True)
class LwsPlacement:
    """LeaderWorkerSet's exclusive placement judged for the workers: the values of its key on the nodes the
    leader can run on, and on those the workers fit on (none shared: the workers never join the leader)."""

    shared: lws_placement.SharedDomain
    leader_values: tuple[str, ...]
    worker_values: tuple[str, ...]


@dataclass(frozen=True)
class _Template:
    """A linted pod template as another pod's affinity sees it (its outline: lint/world/pod_outlines.py)."""

    name: str  # "Pod/devpod/helper", with the template's role
    namespace: str
    labels: dict[str, Any]
    kind: str
    completed: bool  # another object completes its spec (PodSpecSite.completed_by)
    spec: dict[str, Any]  # the fields of its pod spec the scheduler's filters read


def _templates(linted: LintedSet) -> tuple[_Template, ...]:
    """Every pod template of the linted objects that starts pods, each read through its outline, and those
    carried for the objects of other files that did not cross (read once per linted set)."""
    outlines = [outline for obj in linted for outline in outlines_of(obj)]
    outlines += [mapping(outline) for carried in linted.outlines for outline in sequence(carried.data.get("templates"))]
    return tuple(
        _Template(
            text(outline.get("name")),
            text(outline.get("namespace")),
            mapping(outline.get("labels")),
            text(outline.get("kind")),
            outline.get("completed") is True,
            mapping(outline.get("spec")),
        )
        for outline in outlines
    )


def pod_affinity_verdict(
    obj: ObjectLike, site: PodSpecSite, resolver: Resolver, fit: FitResult
) -> PodAffinityVerdict | None:
    """The verdict once the pod's required pod affinity is judged, with the terms JobSet's pod webhook gives a
    leader pod of exclusive placement (blocked when no node that fits carries their topology key: the filter
    refuses a node without it, 'All topology labels must exist on the node'); None when it cannot be: no term, no node fits
    already (the other filters' finding), node pools that may add nodes for both pods, the pod matching its own
    terms (the scheduler lets the first one pass), a selector on a label a controller adds, or no linted pod
    matching (pods outside the linted files may), a label, selector or namespace still to be filled in (the pod's,
    or that of a template it may then match), or a linted set without every pod template of the files applied
    (a run through the repository index without outlines: a pod of another file that can reach the pod's nodes
    may match)."""
    if not fit.fits or resolver.pools:
        return None
    namespace = obj.ref.namespace
    labels = mapping(template_metadata(obj.data, site).get("labels"))
    exclusive = _jobset_exclusive(obj, site)
    spec = jobset_placement.leader_spec(site.spec, exclusive[0]) if exclusive else site.spec
    terms = required_affinity_terms(spec, labels, namespace)
    if exclusive and not any(exclusive[0] in node.labels for node in fit.fitting):
        reasons = Counter(fit.reasons)
        reasons[REASON_POD_AFFINITY] += fit.fitting_count
        judged = FitResult(fit.total, [], reasons, fit.failing)
        return PodAffinityVerdict(terms, (), (), judged, missing_key=exclusive[0], at=exclusive[1])
    lws = _lws_exclusive(obj, site, resolver, fit)
    if lws is not None:
        return lws
    if not resolver.linted.pods_whole:
        return None
    if not terms or any(term.uses_controller_labels() or term.unfilled for term in terms) or unfilled_labels(labels):
        return None
    if all(term.matches(labels, namespace) for term in terms):
        return None  # it may be the first of pods that gather with each other
    peers: list[str] = []
    nodes: dict[str, NodeInfo] = {}
    for template in resolver.linted.fact("pod templates", _templates, resolver.linted):
        if any(term.undecided(template.labels, template.namespace) for term in terms):
            return None  # its labels are still to be filled in: it may be a pod the terms match
        if not all(term.matches(template.labels, template.namespace) for term in terms):
            continue
        if template.completed:
            return None  # its node selection may come from elsewhere
        peers.append(template.name)
        wanted = pod_requirements(effective_pod_spec(template.kind, template.spec))
        nodes.update((node.name, node) for node in resolver.model.evaluate(wanted).fitting)
    by_name = {node.name: node for node in resolver.nodes}
    for running in resolver.pods:  # the inventory's running pods: they count where they run
        metadata = mapping(running.data.get("metadata"))
        node = by_name.get(text(dig(running.data, "spec", "nodeName")))
        pod_labels, pod_namespace = mapping(metadata.get("labels")), text(metadata.get("namespace"))
        if node is not None and all(term.matches(pod_labels, pod_namespace) for term in terms):
            peers.append(f"running Pod/{pod_namespace}/{text(metadata.get('name'))}")
            nodes[node.name] = node
    if not peers or not nodes:
        return None  # none of them fits anywhere: their own findings say why, and nothing here is evidence
    domains = [{node.labels.get(term.topology_key) for node in nodes.values()} - {None} for term in terms]
    passing: list[NodeGroup] = []
    failing = 0
    for group in fit.fitting_groups:
        for node in group.nodes:
            if all(node.labels.get(term.topology_key) in domain for term, domain in zip(terms, domains, strict=True)):
                passing.append(NodeGroup([node]))
            else:
                failing += 1
    reasons = Counter(fit.reasons)
    if failing:
        reasons[REASON_POD_AFFINITY] += failing
    judged = FitResult(fit.total, passing, reasons, fit.failing)
    return PodAffinityVerdict(terms, tuple(peers), tuple(sorted(nodes)), judged)


def _jobset_exclusive(obj: ObjectLike, site: PodSpecSite) -> tuple[str, Path] | None:
    """(topology key, the annotation) when JobSet's pod webhook gives the leader pods of ``site``'s Jobs
    exclusive-placement affinities (kube/jobset_placement): a JobSet's exclusive-topology annotation without
    the node-selector strategy, under which the pods select nodes a script labelled instead."""
    if obj.ref.kind != "JobSet" or obj.ref.group != jobset_placement.GROUP:
        return None
    found = jobset_placement.exclusive_topology(obj.data, site.path)
    if found is None or found[2] or not found[0]:
        return None
    return found[0], found[1]


def _lws_exclusive(obj: ObjectLike, site: PodSpecSite, resolver: Resolver, fit: FitResult) -> PodAffinityVerdict | None:
    """The workers of a LeaderWorkerSet as LWS's pod webhook makes them (kube/lws_placement): a required
    podAffinity to their group's (or subgroup 0's) pods over the annotation's key, whose first pod is the leader,
    made first. Blocked when no node the workers fit on has a value of the key that a node the leader can run on
    has; None otherwise (or when either has no such node: another finding), so that the written terms are judged."""
    if obj.ref.kind != "LeaderWorkerSet" or obj.ref.group != lws_placement.GROUP:
        return None
    if tuple(site.path) != lws_placement.WORKER_SPEC:
        return None
    leader_spec = lws_placement.leader_spec(obj.data)
    if leader_spec is None:
        return None  # the leader is made from the worker template: the same nodes
    leader = resolver.model.evaluate(pod_requirements(effective_pod_spec(obj.ref.kind, leader_spec)))
    for shared in lws_placement.shared_domains(obj.data):
        key = shared.key
        leader_values = {node.labels[key] for node in leader.fitting if key in node.labels}
        worker_values = {node.labels[key] for node in fit.fitting if key in node.labels}
        if not leader_values or not worker_values or leader_values & worker_values:
            continue
        term = AffinityTerm(
            ("affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
            {"matchExpressions": [{"key": shared.pod_label, "operator": "Exists"}]},
            None,
            key,
        )
        reasons = Counter(fit.reasons)
        reasons[REASON_POD_AFFINITY] += fit.fitting_count
        judged = FitResult(fit.total, [], reasons, fit.failing)
        peer = f"{obj.ref.display()} ('leader')"
        nodes = tuple(sorted(node.name for node in leader.fitting))
        placement = LwsPlacement(shared, tuple(sorted(leader_values)), tuple(sorted(worker_values)))
        return PodAffinityVerdict((term,), (peer,), nodes, judged, at=shared.annotation, lws=placement)
    return None
