"""Gangs: the pods that must be placed together, from every gang system in use, and a packer
that proves when they cannot be.

Sources of gangs: Volcano Jobs (minAvailable), Kubeflow jobs with runPolicy.schedulingPolicy,
native Job ``spec.scheduling`` (1.37), and pod templates that join a group: native
``spec.schedulingGroup.podGroupName`` (1.36+) or ``spec.workloadRef`` (1.35), scheduler-plugins
coscheduling (label ``scheduling.x-k8s.io/pod-group``), Volcano (annotation
``scheduling.k8s.io/group-name``), Kueue plain-pod groups (``kueue.x-k8s.io/pod-group-name`` +
``pod-group-total-count``) and Kueue topology-aware scheduling annotations.

The packer (gpulint.kube.gangs.packing) never claims "unsatisfiable" without a proof. It works on
counts - identical pods as one shape, identical nodes as one kind - so it is polynomial except
for its exact search, which a work budget bounds: a gang it cannot decide in time is "undecided",
never unsatisfiable.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube import trainjob
from gpulint.kube.fields import dig, integer, mapping, sequence
from gpulint.kube.quantity import format_amount
from gpulint.kube.queueing.workload import integration, is_distributed, pod_sets, queue_name
from gpulint.kube.refs import GangLookup, ObjectLike, Path
from gpulint.kube.scheduler import ClusterModel, NodeGroup, NodeInfo, PodRequirements, pod_requirements
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, effective_pod_spec, template_metadata

if TYPE_CHECKING:
    from gpulint.kube.gangs.packing import Budget, Decision, NodeKind, PoolLimit, Shape
    from gpulint.kube.queueing.assign import FlavorPin

# The packer (gpulint.kube.gangs.packing) is imported by the functions that pack, on a cluster with nodes:
# the gang rules read every workload, and one without an inventory never packs.

COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
KUEUE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
KUEUE_SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
KUEUE_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
# the annotations that make a pod template join a group (_group_references; its fields and labels: _none_of)
_GROUP_ANNOTATIONS = frozenset(VOLCANO_ANNOTATIONS)
_GANG_ANNOTATIONS = _GROUP_ANNOTATIONS | {KUEUE_REQUIRED_TOPOLOGY, KUEUE_SLICE_TOPOLOGY}


@dataclass(frozen=True)
class Member:
    role: str
    path: Path  # the pod spec in the object
    pod: PodRequirements
    count: int  # pods of this template in the gang
    scheduler: str
    counted: bool = True  # False: the count is not written (`replicas: ${N}`), 0 stands in for it


@dataclass
class Gang:
    system: str  # "Volcano Job", "coscheduling PodGroup g", ...
    members: list[Member]
    required: int  # pods that must be placed at once
    path: Path  # where findings about the gang point
    topology_key: str = ""
    topology_path: Path | None = None
    declared_by_group: bool = False  # the minimum comes from a group object, not from this object
    parent: str = ""  # 1.37 CompositePodGroup the group belongs to (multi-level topology)
    slice_key: str = ""  # Kueue podset slices: every `slice_size` pods within one domain of this label
    slice_size: int = 0
    joiners: int = 1  # objects whose pods are members (a group joined by several Pods, Deployments...)
    shared: bool = False  # another object that joins the group reports on it (one cause, one finding)

    @property
    def total(self) -> int:
        return sum(member.count for member in self.members)

    @property
    def counted(self) -> bool:
        """Every member's pod count is known, so ``total`` is the gang's size, not a lower bound."""
        return all(member.counted for member in self.members)

    def roles(self) -> str:
        """The members by role, for messages: "launcher 1, worker 4" ("" when all are one role)."""
        counts: dict[str, int] = {}
        for member in self.members:
            counts[member.role] = counts.get(member.role, 0) + member.count
        return ", ".join(f"{role} {count}" for role, count in counts.items()) if len(counts) > 1 else ""


# --------------------------------------------------------------------------- extraction


def _member(
    kind: str,
    site: PodSpecSite,
    count: int | None = None,
    default_scheduler: str = "default-scheduler",
    facts: ObjectFacts | None = None,
) -> Member:
    scheduler = site.spec.get("schedulerName") or default_scheduler
    return Member(
        site.role or "pod",
        site.path,
        pod_requirements(effective_pod_spec(kind, site.spec), facts=facts),
        max(count if count is not None else (site.pods or 0), 0),  # a negative count makes no pods
        scheduler if isinstance(scheduler, str) else default_scheduler,
        count is not None or site.pods is not None,
    )


@dataclass(frozen=True)
class GroupReference:
    system: str
    namespace: str
    name: str
    path: Path  # to the label/annotation/field that makes the reference
    pod_group: str = ""  # v1alpha1 workloadRef: the Workload's pod group


def group_references(facts: ObjectFacts, site: PodSpecSite, namespace: str) -> list[GroupReference]:
    """The gang groups a pod template of the object joins (read once per template in its ``facts`` while it is
    checked: the gang rules, the resolver and the Kueue pod group all ask)."""
    obj_data = facts.data
    if _none_of(obj_data, site, _GROUP_ANNOTATIONS):
        return []  # most templates join no group: one look at their keys
    key = ("group references", site.path, site.template_path, namespace)
    return list(facts.part(site.spec, key, _group_references, obj_data, site, namespace))


def _group_references(obj_data: dict[str, Any], site: PodSpecSite, namespace: str) -> list[GroupReference]:
    meta = template_metadata(obj_data, site)
    labels = mapping(meta.get("labels"))
    annotations = mapping(meta.get("annotations"))
    meta_path = (*site.template_path, "metadata")
    refs = []
    group = dig(site.spec, "schedulingGroup", "podGroupName")
    if isinstance(group, str):
        refs.append(GroupReference("PodGroup", namespace, group, (*site.path, "schedulingGroup", "podGroupName")))
    workload = dig(site.spec, "workloadRef", "name")
    if isinstance(workload, str):
        group_name = dig(site.spec, "workloadRef", "podGroup")
        refs.append(
            GroupReference(
                "Workload",
                namespace,
                workload,
                (*site.path, "workloadRef", "name"),
                group_name if isinstance(group_name, str) else "",
            )
        )
    if isinstance(labels.get(COSCHEDULING_LABEL), str):
        refs.append(
            GroupReference(
                "coscheduling", namespace, labels[COSCHEDULING_LABEL], (*meta_path, "labels", COSCHEDULING_LABEL)
            )
        )
    for key in VOLCANO_ANNOTATIONS:
        if isinstance(annotations.get(key), str):
            refs.append(GroupReference("volcano", namespace, annotations[key], (*meta_path, "annotations", key)))
            break
    if obj_data.get("kind") == "Pod" and isinstance(labels.get(KUEUE_GROUP_LABEL), str) and labels[KUEUE_GROUP_LABEL]:
        # Kueue's pod integration: bare Pods of one group name make one Workload (no group object)
        refs.append(
            GroupReference("kueue", namespace, labels[KUEUE_GROUP_LABEL], (*meta_path, "labels", KUEUE_GROUP_LABEL))
        )
    return refs


def kueue_group_total(obj_data: dict[str, Any]) -> int | None:
    """A Kueue pod group member's ``pod-group-total-count`` annotation (a string, "4"); None when unreadable."""
    count = str(mapping(dig(obj_data, "metadata", "annotations")).get(KUEUE_TOTAL_ANNOTATION, ""))
    return int(count) if count.isdecimal() and len(count) <= 18 else None  # never a 5,000-digit parse


def kueue_group_of(obj: ObjectLike) -> GroupReference | None:
    """The Kueue pod group a bare Pod belongs to."""
    if obj.data.get("kind") != "Pod":
        return None  # only a Pod's reference is Kueue's (group_references)
    if KUEUE_GROUP_LABEL not in mapping(dig(obj.data, "metadata", "labels")):
        return None  # a Pod's template metadata is its own: without the label it joins no Kueue group
    sites = list(obj.facts.sites())
    refs = [ref for site in sites[:1] for ref in group_references(obj.facts, site, obj.ref.namespace)]
    return next((ref for ref in refs if ref.system == "kueue"), None)


def kueue_group_members(
    obj: ObjectLike, inventory: GangLookup | None
) -> tuple[GroupReference, list[ObjectLike]] | None:
    """The group and the known Pods of it (this one when no other is known), the first one first: it speaks
    for the group's one Workload."""
    ref = kueue_group_of(obj)
    if ref is None:
        return None
    joiners = list(inventory.group_joiners(joiner_key(ref))) if inventory is not None else []
    return ref, joiners if len(joiners) > 1 else [obj]


def _native_policy(spec: Any) -> tuple[int | None, str, bool]:
    """(gang minCount, topology key, is a gang) of a PodGroup spec or a Workload podGroupTemplate."""
    policy = dig(spec, "schedulingPolicy") or dig(spec, "policy")
    gang = dig(policy, "gang")
    key = dig(spec, "schedulingConstraints", "topology")
    topology = key[0].get("key") if isinstance(key, list) and key and isinstance(key[0], dict) else ""
    return integer(dig(gang, "minCount")), topology if isinstance(topology, str) else "", isinstance(gang, dict)


def group_minimum(ref: GroupReference, inventory: GangLookup | None) -> tuple[int | None, str, bool, bool]:
    """(minimum, topology key, is a gang, the group object was found)."""
    if ref.system == "kueue":
        return None, "", True, True  # no group object: the count is on the pods (kueue_group_total)
    if inventory is None:
        return None, "", True, False
    if ref.system == "PodGroup":
        data = inventory.find_gang_object("scheduling.k8s.io", "PodGroup", ref.namespace, ref.name)
        if data is None:
            return None, "", True, False
        minimum, topology, is_gang = _native_policy(data.get("spec"))
        return minimum, topology, is_gang, True
    if ref.system == "Workload":
        data = inventory.find_gang_object("scheduling.k8s.io", "Workload", ref.namespace, ref.name)
        if data is None:
            return None, "", True, False
        for group in sequence(dig(data, "spec", "podGroups")):  # 1.35 v1alpha1: spec.podGroups[].policy.gang
            if isinstance(group, dict) and group.get("name") == ref.pod_group:
                minimum, topology, is_gang = _native_policy(group)
                return minimum, topology, is_gang, True
        return None, "", False, True
    group = "scheduling.x-k8s.io" if ref.system == "coscheduling" else "scheduling.volcano.sh"
    data = inventory.find_gang_object(group, "PodGroup", ref.namespace, ref.name)
    if data is None:
        return None, "", True, False
    return integer(dig(data, "spec", "minMember")), "", True, True


def gangs_of(obj: ObjectLike, inventory: GangLookup | None, reported_only: bool = False) -> list[Gang]:
    """The gangs an object starts (empty for objects without a gang policy); ``reported_only``: not the
    groups another object that joins them reports on. Built once per object while the engine checks
    it (every gang rule asks), afresh otherwise."""
    key = "gangs reported" if reported_only else "gangs"
    return list(obj.facts.fact(key, inventory, _gangs_of, obj, inventory, reported_only))


def _gangs_of(obj: ObjectLike, inventory: GangLookup | None, reported_only: bool) -> list[Gang]:
    data, kind, group = obj.data, obj.kind, obj.ref.group
    sites = list(obj.facts.sites())
    if not sites:
        return []
    if group == "batch.volcano.sh" and kind == "Job":
        topology, topology_path = _template_topology(data, sites)
        scheduler = dig(data, "spec", "schedulerName")
        members = [
            _member(
                kind, site, default_scheduler=scheduler if isinstance(scheduler, str) else "volcano", facts=obj.facts
            )
            for site in sites
        ]
        total = sum(m.count for m in members)
        return [
            Gang(
                "Volcano Job",
                members,
                integer(dig(data, "spec", "minAvailable"), total) or total,
                ("spec", "minAvailable") if "minAvailable" in mapping(data.get("spec")) else ("spec",),
                topology,
                topology_path,
            )
        ]
    if group == "kubeflow.org" and isinstance(dig(data, "spec", "runPolicy", "schedulingPolicy"), dict):
        topology, topology_path = _template_topology(data, sites)
        members = [_member(kind, site, facts=obj.facts) for site in sites]
        total = sum(m.count for m in members)
        minimum = integer(dig(data, "spec", "runPolicy", "schedulingPolicy", "minAvailable"), total) or total
        return [
            Gang(
                f"{kind} schedulingPolicy",
                members,
                minimum,
                ("spec", "runPolicy", "schedulingPolicy"),
                topology,
                topology_path,
            )
        ]
    scheduling = dig(data, "spec", "scheduling") if group == "batch" and kind == "Job" else None
    if isinstance(scheduling, dict):
        declared, topology, is_gang = _native_policy(scheduling)
        if is_gang:
            members = [_member(kind, site, facts=obj.facts) for site in sites]
            total = sum(m.count for m in members)
            return [
                Gang(
                    "Job spec.scheduling gang",
                    members,
                    declared or total,
                    ("spec", "scheduling", "schedulingPolicy", "gang"),
                    topology,
                    ("spec", "scheduling", "schedulingConstraints", "topology") if topology else None,
                )
            ]
    if group == KUEUE_GROUP and kind == "Workload":
        return _written_workload_gangs(obj, sites)
    policy = trainjob.pod_group_policy(data)
    if policy:  # the Trainer makes one PodGroup of all the TrainJob's pods
        topology, topology_path = _template_topology(data, sites)
        members = [_member(kind, site, facts=obj.facts) for site in sites]
        label = {"coscheduling": "coscheduling PodGroup", "volcano": "Volcano PodGroup"}[policy]
        total = sum(m.count for m in members)
        return [Gang(f"{label} {obj.ref.name}", members, total, trainjob.REF_NAME, topology, topology_path)]
    if all(_none_of(data, site, _GANG_ANNOTATIONS) for site in sites):
        return _kueue_workload_gang(obj, inventory)  # the common case: no template joins a group
    found = _referenced_gangs(obj, sites, inventory, reported_only) + _kueue_gangs(obj, sites, inventory)
    found += _kueue_pod_group(obj, inventory, reported_only)
    if not found:  # Kueue admits the whole workload at once: its pods as one gang
        found = _kueue_workload_gang(obj, inventory)
    return found


def _none_of(data: dict[str, Any], site: PodSpecSite, annotations: frozenset[str]) -> bool:
    """The template has no field or label that joins a group, and none of ``annotations``: a look at its keys
    (_GROUP_ANNOTATIONS: what _group_references reads; _GANG_ANNOTATIONS: what _kueue_gangs reads too)."""
    spec = site.spec
    if "schedulingGroup" in spec or "workloadRef" in spec:
        return False
    meta = template_metadata(data, site)
    labels, written = meta.get("labels"), meta.get("annotations")
    if isinstance(labels, dict) and (COSCHEDULING_LABEL in labels or KUEUE_GROUP_LABEL in labels):
        return False
    return not isinstance(written, dict) or written.keys().isdisjoint(annotations)


def _template_topology(data: dict[str, Any], sites: list[PodSpecSite]) -> tuple[str, Path | None]:
    """A Kueue required topology on a pod template of a gang workload: the gang's domain."""
    for site in sites:
        annotations = template_metadata(data, site).get("annotations")
        value = annotations.get(KUEUE_REQUIRED_TOPOLOGY) if isinstance(annotations, dict) else None
        if isinstance(value, str) and value:
            return value, (*site.template_path, "metadata", "annotations", KUEUE_REQUIRED_TOPOLOGY)
    return "", None


def joiner_key(ref: GroupReference) -> tuple[str, str, str, str]:
    return (ref.system, ref.namespace, ref.name, ref.pod_group)


def _same_object(a: ObjectLike, b: ObjectLike) -> bool:
    # the same dict in one process; equal data once pickled to a worker
    return a.ref == b.ref and (a.data is b.data or a.data == b.data)


def _referenced_gangs(
    obj: ObjectLike, sites: list[PodSpecSite], inventory: GangLookup | None, reported_only: bool = False
) -> list[Gang]:
    by_group: dict[GroupReference, list[Member]] = defaultdict(list)
    first_path: dict[GroupReference, Path] = {}
    for site in sites:
        for ref in group_references(obj.facts, site, obj.ref.namespace):
            key = GroupReference(ref.system, ref.namespace, ref.name, (), ref.pod_group)
            by_group[key].append(_member(obj.kind, site, facts=obj.facts))
            first_path.setdefault(key, ref.path)
    gangs = []
    for ref, members in by_group.items():
        minimum, topology, is_gang, _found = group_minimum(ref, inventory)
        if not is_gang or minimum is None:
            continue
        # Pods of one group may come from several objects (coscheduling with bare Pods): the gang
        # is all of them, and the first object that joins it speaks for it.
        joiners = list(inventory.group_joiners(joiner_key(ref))) if inventory is not None else []
        shared = False
        if len(joiners) > 1:
            shared = not _same_object(joiners[0], obj)
            if shared and reported_only:
                continue  # the first joiner reports; its members are not built N times over
            # the object itself among them: its own facts, kept while it is checked
            members = [
                member
                for joiner in joiners
                for member in _pinned_members(obj if _same_object(joiner, obj) else joiner, inventory)
            ]
        else:
            joiners = [obj]
        parent = ""
        if ref.system == "PodGroup" and inventory is not None:
            group = inventory.find_gang_object("scheduling.k8s.io", "PodGroup", ref.namespace, ref.name) or {}
            parent = str(dig(group, "spec", "parentCompositePodGroupName") or "")
        label = {"coscheduling": "coscheduling PodGroup", "volcano": "Volcano PodGroup"}.get(ref.system, ref.system)
        gangs.append(
            Gang(
                f"{label} {ref.name}",
                members,
                minimum,
                first_path[ref],
                topology,
                first_path[ref] if topology else None,
                declared_by_group=True,
                parent=parent,
                joiners=len(joiners),
                shared=shared,
            )
        )
    return gangs


def reported_gangs(obj: ObjectLike, inventory: GangLookup | None) -> list[Gang]:
    """The gangs whose findings this object carries: a group joined by several objects is reported
    once, on the first of them (`explain` shows every object its gang: gangs_of)."""
    return [gang for gang in gangs_of(obj, inventory, reported_only=True) if not gang.shared]


def _flavor_pins(inventory: GangLookup | None, obj: ObjectLike) -> dict[Path, FlavorPin]:
    """Kueue's flavor pins of the object's pod sets, given an inventory (kube/queueing/assign is imported then:
    a run without one never assigns flavors)."""
    if inventory is None:
        return {}
    from gpulint.kube.queueing.assign import flavor_pins

    return flavor_pins(inventory.kueue, obj.ref.namespace, obj.facts)


def _kueue_gangs(obj: ObjectLike, sites: list[PodSpecSite], inventory: GangLookup | None = None) -> list[Gang]:
    """Kueue admits a workload whole; a required topology makes each pod set one domain, on the nodes
    of its flavor when that flavor is certain. A pod set counts the pods of ONE Workload (a
    LeaderWorkerSet group, not every replica)."""
    asking = [site for site in sites if _asks_kueue_topology(obj.data, site)]
    if not asking or kueue_group_of(obj) is not None:
        return []  # no pod set asks for a topology; a Kueue pod group's is its own gang (_kueue_pod_group)
    gangs = []
    pins = _flavor_pins(inventory, obj)
    per_workload = {pod_set.site.path: pod_set.count for pod_set in pod_sets(obj.facts)}
    for site in asking:
        pin = pins.get(site.path)
        if pin is not None or site.path in per_workload:
            site = PodSpecSite(
                site.path,
                pin.apply(site.spec) if pin is not None else site.spec,
                per_workload.get(site.path, site.pods),
                site.role,
                site.template_path,
            )
        meta = template_metadata(obj.data, site)
        annotations = mapping(meta.get("annotations"))
        topology = annotations.get(KUEUE_REQUIRED_TOPOLOGY)
        if site.pods:
            key = KUEUE_REQUIRED_TOPOLOGY if isinstance(topology, str) else KUEUE_SLICE_TOPOLOGY
            path = (*site.template_path, "metadata", "annotations", key)
            slice_key = annotations.get(KUEUE_SLICE_TOPOLOGY)
            size = str(annotations.get(KUEUE_SLICE_SIZE, ""))
            gangs.append(
                Gang(
                    f"Kueue pod set {site.role or 'pods'}",
                    [_member(obj.kind, site, facts=obj.facts)],
                    site.pods,
                    path,
                    topology if isinstance(topology, str) else "",
                    path,
                    slice_key=slice_key if isinstance(slice_key, str) else "",
                    slice_size=int(size) if size.isdecimal() and len(size) <= 18 else 0,
                )
            )
    return gangs


def _asks_kueue_topology(data: dict[str, Any], site: PodSpecSite) -> bool:
    annotations = template_metadata(data, site).get("annotations")
    return isinstance(annotations, dict) and (
        isinstance(annotations.get(KUEUE_REQUIRED_TOPOLOGY), str)
        or isinstance(annotations.get(KUEUE_SLICE_TOPOLOGY), str)
    )


def _pinned_members(joiner: ObjectLike, inventory: GangLookup | None) -> list[Member]:
    """The pods of an object that joins a group (a Pod of a Kueue pod group, a JobSet or Deployment of a
    PodGroup) as members, each template with its own pod count and what admission adds to it (its flavor's
    nodeLabels and tolerations; judged for this object alone, so every flavor the group could get is among
    its candidates)."""
    pins = _flavor_pins(inventory, joiner)
    members = []
    for site in joiner.facts.sites():
        pin = pins.get(site.path)
        spec = pin.apply(site.spec) if pin is not None else site.spec
        site_as_admitted = PodSpecSite(site.path, spec, site.pods, site.role, site.template_path)
        members.append(_member(joiner.kind, site_as_admitted, facts=joiner.facts))
    return members


def _kueue_pod_group(obj: ObjectLike, inventory: GangLookup | None, reported_only: bool) -> list[Gang]:
    """A Kueue pod group is one Workload of every Pod that carries its name (constructGroupPodSets: a pod
    set per distinct pod, counted), admitted whole. Its pods are summed across the objects that are known;
    pods the annotation counts but no known object creates (the same manifest created N times, a
    controller's pods) are not guessed at: the known ones are judged, all of them at once."""
    found = kueue_group_members(obj, inventory)
    if found is None:
        return []  # not a Pod of a Kueue pod group (most objects)
    total = kueue_group_total(obj.data)
    if not total:
        return []
    ref, joiners = found
    shared = not _same_object(joiners[0], obj)
    if shared and reported_only:
        return []  # the first Pod of the group reports on it
    members = [member for joiner in joiners for member in _pinned_members(joiner, inventory)]
    known = sum(member.count for member in members)
    shown = "" if known >= total else f" ({known} of its {total} pods known)"
    key = mapping(dig(obj.data, "metadata", "annotations")).get(KUEUE_REQUIRED_TOPOLOGY)
    return [
        Gang(
            f"Kueue pod group {ref.name}{shown}",
            members,
            min(total, known),
            ref.path,
            key if isinstance(key, str) else "",
            None,
            declared_by_group=True,
            joiners=len(joiners),
            shared=shared,
        )
    ]


KUEUE_GROUP = "kueue.x-k8s.io"


def _written_workload_gangs(obj: ObjectLike, sites: list[PodSpecSite]) -> list[Gang]:
    """A Kueue Workload written as an object (kueue v0.19.2 apis/kueue/v1beta2/workload_types.go PodSet).
    Kueue admits it whole: every pod set at once. With PartialAdmission (beta, on by default since v0.5:
    pkg/features/kube_features.go) a pod set with minCount may start with as few as minCount pods
    (pkg/scheduler/flavorassigner/podset_reducer.go): the gang asks the least Kueue admits. The pods run
    together only for a distributed owner (ownerReferences: a JobSet, an MPIJob...). A pod set whose
    topologyRequest names a required level (or a slice level) is placed within one domain of it, and is its
    own gang, as a pod set of a job asking for a Kueue topology is (_kueue_gangs)."""
    by_path = {site.path: site for site in sites}
    members: list[Member] = []
    placed: list[Gang] = []
    for index, raw in enumerate(sequence(dig(obj.data, "spec", "podSets"))):
        site = by_path.get(("spec", "podSets", index, "template", "spec"))
        if site is None or not isinstance(raw, dict) or not site.pods:
            continue
        minimum = integer(raw.get("minCount"), site.pods)
        member = _member(
            obj.kind, site, min(site.pods, minimum) if minimum and minimum > 0 else site.pods, facts=obj.facts
        )
        members.append(member)
        request = mapping(raw.get("topologyRequest"))
        required, slice_key = request.get("required"), request.get("podSetSliceRequiredTopology")
        if (isinstance(required, str) and required) or (isinstance(slice_key, str) and slice_key):
            path = ("spec", "podSets", index, "topologyRequest")
            size = integer(request.get("podSetSliceSize"), 0)
            placed.append(
                Gang(
                    f"Kueue Workload pod set {site.role or 'main'}",
                    [member],
                    member.count,
                    path,
                    required if isinstance(required, str) else "",
                    path,
                    slice_key=slice_key if isinstance(slice_key, str) else "",
                    slice_size=size if size and size > 0 else 0,
                )
            )
    if placed:
        return placed
    total = sum(member.count for member in members)
    if total < 2 or not _distributed_owner(obj.data):
        return []  # a plain Job's pods each make progress alone; an owner not known proves nothing
    return [Gang(f"Kueue Workload {obj.ref.name}", members, total, ("spec", "podSets"))]


def _distributed_owner(data: dict[str, Any]) -> bool:
    """The Workload was made for a distributed job (a JobSet, an MPIJob, a RayCluster...): its pods run together."""
    return any(
        is_distributed({"apiVersion": ref.get("apiVersion"), "kind": ref.get("kind")})
        for ref in sequence(dig(data, "metadata", "ownerReferences"))
        if isinstance(ref, dict)
    )


def _kueue_workload_gang(obj: ObjectLike, inventory: GangLookup | None) -> list[Gang]:
    """A distributed workload Kueue admits whole (one Workload: every pod set at once, each on the
    nodes its flavor selects when that flavor is certain). Only distributed kinds: the pods of a
    plain Job each make progress alone (gpu-unschedulable says how many fit at once)."""
    name = queue_name(obj.facts)
    if name is None or name.as_annotation or not is_distributed(obj.data):
        return []
    pins = _flavor_pins(inventory, obj)
    members = []
    for pod_set in pod_sets(obj.facts):
        pin = pins.get(pod_set.site.path)
        spec = pin.apply(pod_set.site.spec) if pin is not None else pod_set.site.spec
        members.append(
            _member(
                obj.kind,
                PodSpecSite(pod_set.site.path, spec, pod_set.count, pod_set.site.role, pod_set.site.template_path),
                facts=obj.facts,
            )
        )
    total = sum(member.count for member in members)
    if total < 2:
        return []
    on = sorted({pin.describe() for pin in pins.values()})
    flavored = f" on the nodes of {'; '.join(on)}" if on else ""
    return [Gang(f"Kueue workload (queue {name.name}){flavored}", members, total, name.path)]


@dataclass
class CompositeGang:
    """1.37 multi-level placement: child groups together in one outer domain (a zone), each
    child within its own domain (a rack)."""

    name: str
    children: list[Gang]
    outer_key: str
    path: Path


def composites_of(obj: ObjectLike, inventory: GangLookup | None) -> list[CompositeGang]:
    if inventory is None:
        return []
    by_parent: dict[str, list[Gang]] = defaultdict(list)
    for gang in reported_gangs(obj, inventory):
        if gang.parent:
            by_parent[gang.parent].append(gang)
    out = []
    for parent, children in by_parent.items():
        data = inventory.find_gang_object("scheduling.k8s.io", "CompositePodGroup", obj.ref.namespace, parent) or {}
        _minimum, outer, _gang = _native_policy(data.get("spec"))
        if outer:
            out.append(CompositeGang(parent, children, outer, children[0].path))
    return out


@dataclass
class CompositeVerdict:
    unsatisfiable: bool
    undecided: bool  # the work budget ran out before every outer domain was decided
    why: str = ""


def pack_composite(composite: CompositeGang, model: ClusterModel, budget: Budget | None = None) -> CompositeVerdict:
    """Proven unsatisfiable when every outer domain fails: for one child within its own inner
    domain, or for all children together (their pods, ignoring the inner domains, which only
    restrict further)."""
    from gpulint.kube.gangs.packing import Budget

    budget = budget or Budget()
    reasons, undecided = [], False
    for domain, nodes in sorted(_domains(model.nodes, composite.outer_key).items()):
        failure, unknown = _composite_domain(composite, model, nodes, budget)
        if not failure:
            undecided = undecided or unknown
            if not unknown:
                return CompositeVerdict(False, False)
            continue
        reasons.append(f"{domain}: {failure}")
    if undecided or not reasons:
        return CompositeVerdict(False, undecided)
    more = f" (and {len(reasons) - 4} more)" if len(reasons) > 4 else ""
    return CompositeVerdict(True, False, "; ".join(reasons[:4]) + more)


def _composite_domain(
    composite: CompositeGang, model: ClusterModel, nodes: list[NodeInfo], budget: Budget
) -> tuple[str, bool]:
    """(why the outer domain cannot hold the children, or ""; whether that was left undecided)."""
    unknown = False
    for child in composite.children:
        verdict = _pack_nodes(child, model, nodes, child.topology_key, budget)
        if verdict.unsatisfiable:
            return f"{child.system} does not fit in one {child.topology_key or 'domain'}", False
        unknown = unknown or verdict.undecided
    parts = [(child.system, _required_members(child)) for child in composite.children]
    if len(parts) > 1 and all(part for _, part in parts):
        members = [
            Member(system, member.path, member.pod, count, member.scheduler)  # named for messages
            for system, part in parts
            for member, count in part or []
        ]
        joint = Gang("the groups together", members, sum(m.count for m in members), composite.path)
        together = _pack_nodes(joint, model, nodes, "", budget)
        if together.unsatisfiable:
            best = together.best()
            return f"the groups together do not fit ({best.reason if best else ''})", False
        unknown = unknown or together.undecided
    return "", unknown


# Pods that consume a ProvisioningRequest: the cluster autoscaler provisions (best-effort-atomic-scale-up, GKE's
# queued-provisioning.gke.io) or finds (check-capacity) the capacity of all its pods at once and books it for
# them (kubernetes/autoscaler apis/provisioningrequest v1 types.go; GKE's DWS docs use the older key).
CONSUME_PROVISIONING_REQUEST = (
    "autoscaling.x-k8s.io/consume-provisioning-request",
    "cluster-autoscaler.kubernetes.io/consume-provisioning-request",
)


def has_gang_policy(obj: ObjectLike, inventory: GangLookup | None) -> bool:
    """Any sign that the pods are placed together (or admitted together, with Kueue)."""
    if gangs_of(obj, inventory, reported_only=True):  # a group's other joiners: group_references below
        return True
    queue = queue_name(obj.facts)
    if queue is not None and not queue.as_annotation and integration(obj.data) is not None:
        return True  # Kueue admits the workload whole (for the kinds it manages; it reads the label only)
    for site in obj.facts.sites():
        if group_references(obj.facts, site, obj.ref.namespace):
            return True
        annotations = mapping(dig(obj.data, *site.template_path, "metadata", "annotations"))
        if any(key in annotations for key in CONSUME_PROVISIONING_REQUEST):
            return True
        if site.spec.get("schedulerName") in (
            "volcano",
            "kai-scheduler",
            "scheduler-plugins-scheduler",
            "yunikorn",
        ):
            return True
    return False


# --------------------------------------------------------------------------- packing
# --------------------------------------------------------------------------- packing


@dataclass
class Placement:
    """The answer for one domain (or the whole cluster)."""

    domain: str
    proven_unsatisfiable: bool
    fits: bool  # proven to fit (exact for one member type, or a placement was built)
    placeable: int  # copies of the main member the domain holds (for messages)
    reason: str = ""
    undecided: bool = False  # the work budget ran out before either was proven
    layout: tuple[str, ...] = ()  # when it fits: which nodes take how many pods of each role

    @classmethod
    def of(
        cls,
        domain: str,
        decision: Decision,
        main: int,
        shapes: Sequence[Shape] = (),
        names: Mapping[Any, str] | None = None,
    ) -> Placement:
        """``names``: a node of each kind (or the pool's new nodes), for the layout."""
        from gpulint.kube.gangs.packing import Outcome

        return cls(
            domain,
            decision.outcome is Outcome.UNSATISFIABLE,
            decision.outcome is Outcome.FITS,
            decision.copies[main] if decision.copies else 0,
            decision.reason,
            decision.outcome is Outcome.UNKNOWN,
            _layout(decision, shapes, names or {}) if shapes else (),
        )


MAX_LAYOUT_LINES = 8


def _layout(decision: Decision, shapes: Sequence[Shape], names: Mapping[Any, str]) -> tuple[str, ...]:
    """A placement in words: "2 new nodes (NodePool gpu: g5.xlarge), each: 1 worker"."""
    lines = []
    for part in sorted(decision.placement, key=lambda p: (-p.nodes, p.pods))[:MAX_LAYOUT_LINES]:
        pods = ", ".join(f"{count} {shapes[i].name or 'pod'}" for i, count in enumerate(part.pods) if count)
        name = names.get(part.kind, "")
        plural = "s" if part.nodes > 1 else ""
        if part.kind.pool:
            where = f"{part.nodes} new node{plural} ({name})"
        else:
            where = f"{part.nodes} node{plural} like {name}" if part.nodes > 1 else f"node {name}"
        lines.append(f"{where}{', each' if part.nodes > 1 else ''}: {pods}")
    if len(decision.placement) > MAX_LAYOUT_LINES:
        lines.append(f"and {len(decision.placement) - MAX_LAYOUT_LINES} more kinds of node")
    return tuple(lines)


@dataclass
class GangVerdict:
    placements: list[Placement]
    required_main: int
    main: Member | None

    @property
    def unsatisfiable(self) -> bool:
        return bool(self.placements) and all(p.proven_unsatisfiable for p in self.placements)

    @property
    def undecided(self) -> bool:
        """Not proven either way because the work budget ran out (never an error)."""
        return not self.unsatisfiable and not self.fitting_domains() and any(p.undecided for p in self.placements)

    def best(self) -> Placement | None:
        return max(self.placements, key=lambda p: (p.fits, p.placeable), default=None)

    def fitting_domains(self) -> list[Placement]:
        return [p for p in self.placements if p.fits]

    def only_domain(self) -> Placement | None:
        """The one domain that hosts the gang, when every other one is proven not to."""
        fitting = self.fitting_domains()
        if len(fitting) == 1 and all(p.proven_unsatisfiable for p in self.placements if p is not fitting[0]):
            return fitting[0]
        return None


def _required_members(gang: Gang) -> list[tuple[Member, int]] | None:
    """The pods that must be placed, per member; None when which ones is not determined."""
    if gang.required >= gang.total:
        return [(member, member.count) for member in gang.members if member.count]
    distinct = {member.pod.signature() for member in gang.members}
    if len(distinct) == 1:  # any `required` of identical pods
        return [(gang.members[0], gang.required)]
    return None


def _domains(nodes: list[NodeInfo], key: str) -> dict[str, list[NodeInfo]]:
    if not key:
        return {"": nodes}
    domains: dict[str, list[NodeInfo]] = defaultdict(list)
    for node in nodes:
        if key in node.labels:
            domains[node.labels[key]].append(node)
    return dict(domains)


@dataclass
class _Packing:
    """A gang's pods as shapes (identical pods once, with a count) and every node as a NodeKind
    (identical nodes alike), computed once per verdict and shared by all its domains."""

    shapes: list[Shape]
    main: int  # the shape of the main member
    units: dict[str, Fraction]  # what the node kinds count in
    kind_of: dict[int, NodeKind]  # id(node) -> its kind

    @classmethod
    def of(
        cls, required: list[tuple[Member, int]], main: Member, model: ClusterModel, nodes: list[NodeInfo]
    ) -> _Packing:
        from gpulint.kube.gangs.packing import Shape, node_kind, request_units

        groups: dict[tuple[Any, ...], list[tuple[Member, int]]] = {}
        for member, count in required:
            groups.setdefault(member.pod.signature(), []).append((member, count))
        shapes = [
            Shape(_roles(group), tuple(sorted(group[0][0].pod.requests.items())), sum(c for _, c in group))
            for group in groups.values()
        ]
        # the shapes passing each node's filters, one bit each: gathered per group of identical nodes
        # (the groups are shared between shapes), then handed to the group's nodes
        by_group: dict[int, tuple[NodeGroup, int]] = {}
        for index, group in enumerate(groups.values()):
            for fitting in model.evaluate(group[0][0].pod).fitting_groups:
                _, seen = by_group.get(id(fitting), (fitting, 0))
                by_group[id(fitting)] = (fitting, seen | 1 << index)
        bits: dict[int, int] = defaultdict(int)  # id(node) -> its bits
        for fitting, mask in by_group.values():
            for node in fitting.nodes:
                bits[id(node)] |= mask
        masks: dict[int, frozenset[int]] = {}
        units = request_units(shapes)
        amounts: dict[int, NodeKind] = {}  # id(node) -> its amounts; once per group of identical nodes
        for node_group in model.groups():
            amount = node_kind(node_group.representative.allocatable, units)
            for node in node_group.nodes:
                amounts[id(node)] = amount
        interned: dict[NodeKind, NodeKind] = {}
        kind_of: dict[int, NodeKind] = {}
        for node in nodes:
            amount = amounts.get(id(node)) or node_kind(node.allocatable, units)
            mask = bits[id(node)]
            if mask not in masks:
                masks[mask] = frozenset(i for i in range(len(shapes)) if mask >> i & 1)
            kind = amount.allowing(masks[mask])
            kind_of[id(node)] = interned.setdefault(kind, kind)
        return cls(shapes, list(groups).index(main.pod.signature()), units, kind_of)

    def kinds(self, nodes: list[NodeInfo]) -> Counter[NodeKind]:
        return Counter(self.kind_of[id(node)] for node in nodes)

    def names(self, nodes: list[NodeInfo], decision: Decision) -> dict[NodeKind, str]:
        """A node of each kind the decision's placement uses, for its layout (none when it has none)."""
        needed = {part.kind for part in decision.placement if not part.kind.pool}
        names: dict[NodeKind, str] = {}
        for node in nodes if needed else ():
            kind = self.kind_of[id(node)]
            if kind in needed and kind not in names:
                names[kind] = node.name
                if len(names) == len(needed):
                    break
        return names


def _roles(members: list[tuple[Member, int]], shown: int = 3) -> str:
    """The roles of identical members, for messages: worker/evaluator."""
    roles = list(dict.fromkeys(member.role for member, _ in members))
    return "/".join(roles[:shown]) + (f"/+{len(roles) - shown}" if len(roles) > shown else "")


def pack(gang: Gang, model: ClusterModel, topology_key: str | None = None, budget: Budget | None = None) -> GangVerdict:
    """Where the gang fits: per domain of its topology key (the whole cluster without one)."""
    from gpulint.kube.gangs.packing import Budget

    key = gang.topology_key if topology_key is None else topology_key
    return _pack_nodes(gang, model, model.nodes, key, budget or Budget())


def _pack_nodes(gang: Gang, model: ClusterModel, nodes: list[NodeInfo], key: str, budget: Budget) -> GangVerdict:
    from gpulint.kube.gangs.packing import decide

    required = _required_members(gang)
    if not required:
        return GangVerdict([], 0, None)
    main, _ = max(required, key=lambda item: (item[1], sum(item[0].pod.requests.values())))
    # members alike (the bare Pods of one group) are one shape: the main count is all of them
    main_count = sum(count for member, count in required if member.pod.signature() == main.pod.signature())
    packing = _Packing.of(required, main, model, nodes)
    placements = []
    decided: dict[frozenset[tuple[NodeKind, int]], Decision] = {}  # racks alike are decided once
    domains = _domains(nodes, key)
    if key and not domains:  # no node carries the label: not one domain to place the gang in
        return GangVerdict([Placement("", True, False, 0, f"no topology domains at level: {key}")], main_count, main)
    for domain, domain_nodes in domains.items():
        kinds = frozenset(packing.kinds(domain_nodes).items())
        if kinds not in decided:
            decided[kinds] = decide(packing.shapes, dict(kinds), budget)
        names = packing.names(domain_nodes, decided[kinds])
        placement = Placement.of(domain, decided[kinds], packing.main, packing.shapes, names)
        if gang.slice_key and gang.slice_size and len(packing.shapes) == 1 and not placement.proven_unsatisfiable:
            placement = _place_slices(domain, domain_nodes, packing, main_count, gang)
        placements.append(placement)
    return GangVerdict(placements, main_count, main)


@dataclass(frozen=True)
class NewNodes:
    """Nodes a pool may still add for a gang: at most ``count`` alike, taking the members whose pod
    signature is in ``takes``, all the kinds of ``pool`` together within ``limit`` (each node counting
    its ``cost`` against the limits); ``domains``: the values of the topology key they may carry (the
    pool may put all of them in any one), None when every new node is its own domain (hostname)."""

    name: str  # for messages: "NodePool gpu: g5.12xlarge"
    allocatable: Mapping[str, Fraction]  # after the DaemonSets' overhead
    takes: frozenset[tuple[Any, ...]]
    count: int
    domains: tuple[str, ...] | None = ()
    pool: str = ""  # the pool's title: its kinds share ``limit``
    limit: PoolLimit | None = None
    cost: Mapping[str, Fraction] | None = None  # a node's capacity of each resource ``limit`` names


NEW_NODE_DOMAIN = "(a new node)"


def pack_with_new_nodes(
    gang: Gang, model: ClusterModel, new: Sequence[NewNodes], key: str, budget: Budget | None = None
) -> GangVerdict:
    """Where the gang fits on the nodes and the nodes pools may add (``new``), per domain of ``key``:
    a pool's kinds share its limit, so a pool of several instance types is packed exactly."""
    from gpulint.kube.gangs.packing import Budget, decide, node_kind

    required = _required_members(gang)
    if not required:
        return GangVerdict([], 0, None)
    main, _ = max(required, key=lambda item: (item[1], sum(item[0].pod.requests.values())))
    main_count = sum(count for member, count in required if member.pod.signature() == main.pod.signature())
    packing = _Packing.of(required, main, model, model.nodes)
    signatures = list(dict.fromkeys(member.pod.signature() for member, _ in required))
    by_domain = _domains(model.nodes, key)
    per_domain: dict[str, Counter[NodeKind]] = {domain: packing.kinds(nodes) for domain, nodes in by_domain.items()}
    pools: dict[str, PoolLimit] = {}
    new_names: dict[Any, str] = {}
    for nodes in new:
        allowed = frozenset(i for i, signature in enumerate(signatures) if signature in nodes.takes)
        kind = node_kind(nodes.allocatable, packing.units, allowed, nodes.pool, nodes.cost)
        new_names.setdefault(kind, nodes.name)
        if nodes.pool and nodes.limit is not None:
            pools[nodes.pool] = nodes.limit
        if not key:
            per_domain.setdefault("", Counter())[kind] += nodes.count
        elif nodes.domains is None:
            per_domain.setdefault(f"{NEW_NODE_DOMAIN} {nodes.name}", Counter())[kind] += 1
        else:
            for domain in nodes.domains:
                per_domain.setdefault(domain, Counter())[kind] += nodes.count
    if key and not per_domain:
        return GangVerdict([Placement("", True, False, 0, f"no topology domains at level: {key}")], main_count, main)
    budget = budget or Budget()
    decided: dict[frozenset[tuple[NodeKind, int]], Decision] = {}
    placements = []
    for domain, kinds in per_domain.items():
        frozen = frozenset(kinds.items())
        if frozen not in decided:
            decided[frozen] = decide(packing.shapes, dict(frozen), budget, pools)
        names = packing.names(by_domain.get(domain, []), decided[frozen]) | new_names
        placements.append(Placement.of(domain, decided[frozen], packing.main, packing.shapes, names))
    return GangVerdict(placements, main_count, main)


def _place_slices(domain: str, nodes: list[NodeInfo], packing: _Packing, count: int, gang: Gang) -> Placement:
    """Slices of `slice_size` identical pods, each within one domain of `slice_key` (exact: a
    sub-domain holding c copies holds floor(c / size) slices)."""
    from gpulint.kube.gangs.packing import copies_on_kind

    needed = -(-count // gang.slice_size)
    slices = 0
    for _sub, sub_nodes in _domains(nodes, gang.slice_key).items():
        copies = sum(
            number * copies_on_kind(packing.shapes[0], kind, packing.units)
            for kind, number in packing.kinds(sub_nodes).items()
            if kind.allowed
        )
        slices += copies // gang.slice_size
    if slices < needed:
        return Placement(
            domain,
            True,
            False,
            slices * gang.slice_size,
            f"slices of {gang.slice_size} in one {gang.slice_key}: {slices} of {needed} fit",
        )
    return Placement(domain, False, True, slices * gang.slice_size)


def member_demand(member: Member) -> str:
    gpus = [f"{format_amount(a)} {r}" for r, a in sorted(member.pod.requests.items()) if "/" in r]
    return (
        ", ".join(gpus)
        or ", ".join(f"{format_amount(a)} {r}" for r, a in sorted(member.pod.requests.items()))
        or "no resources"
    )
