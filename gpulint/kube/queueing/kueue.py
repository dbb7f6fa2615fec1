"""Kueue's admission objects (kueue.x-k8s.io v1beta1 and v1beta2) and its quota arithmetic.

Shapes from kubernetes-sigs/kueue ``apis/kueue/v1beta{1,2}/*_types.go``; the two versions differ,
for what is read here, only in the ClusterQueue's cohort (``spec.cohort`` in v1beta1,
``spec.cohortName`` in v1beta2). The arithmetic translates ``pkg/cache/scheduler/resource_node.go``:
a ClusterQueue's subtree quota is its nominal quota; a Cohort's is its own nominal quota plus
what each child lends it (the child's subtree quota less what its lendingLimit keeps local);
``potential_available`` is the largest request the queue could ever be granted (no usage),
``available`` what it can be granted with the usage the queues report now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.quantity import amount_or_none
from gpulint.kube.queueing.kueue_kinds import KUEUE_GROUP, KUEUE_KINDS
from gpulint.kube.scheduler import Taint, Toleration
from gpulint.kube.selectors import label_text, selector_matches

STOPPED = ("Hold", "HoldAndDrain")  # stopPolicy values that stop admission (None admits)
UNLIMITED = Fraction(2**63 - 1)  # Kueue's saturated Amount
MAX_DEPTH = 64  # cohort levels followed (Kueue's trees are a few deep; a longer chain is hostile input)
FlavorResource = tuple[str, str]  # (flavor, resource)
CHECK_CONFIG_KINDS = ("ProvisioningRequestConfig", "MultiKueueConfig")  # the built-in checks' parameters


@dataclass(frozen=True)
class Quota:
    nominal: Fraction
    borrowing_limit: Fraction | None = None  # None: borrow without limit
    lending_limit: Fraction | None = None  # None: lend everything


@dataclass(frozen=True)
class FlavorQuotas:
    name: str
    resources: tuple[tuple[str, Quota], ...]

    def quota(self, resource: str) -> Quota | None:
        return dict(self.resources).get(resource)


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


def _resource_groups(spec: Any) -> tuple[ResourceGroup, ...]:
    groups = []
    for group in sequence(dig(spec, "resourceGroups")):
        covered = tuple(str(name) for name in sequence(mapping(group).get("coveredResources")) if name)
        flavors = []
        for flavor in sequence(mapping(group).get("flavors")):
            quotas = []
            for resource in sequence(mapping(flavor).get("resources")):
                resource = mapping(resource)
                nominal = amount_or_none(resource.get("nominalQuota", 0))
                if not isinstance(resource.get("name"), str) or nominal is None:
                    continue
                quotas.append(
                    (
                        resource["name"],
                        Quota(
                            nominal,
                            amount_or_none(resource["borrowingLimit"]) if "borrowingLimit" in resource else None,
                            amount_or_none(resource["lendingLimit"]) if "lendingLimit" in resource else None,
                        ),
                    )
                )
            flavors.append(FlavorQuotas(text(mapping(flavor).get("name")), tuple(quotas)))
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups)


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort: str
    groups: tuple[ResourceGroup, ...]
    namespace_selector: dict[str, Any] | None  # None (absent): no namespace may submit
    stop_policy: str
    usage: tuple[tuple[FlavorResource, Fraction], ...] = ()  # status.flavorsReservation (what is reserved now)
    usage_known: bool = False
    admission_checks: tuple[str, ...] = ()  # spec.admissionChecks (v1beta1) and admissionChecksStrategy
    checks_per_flavor: tuple[str, ...] = ()  # checks whose onFlavors name only some of the queue's flavors

    @classmethod
    def of(cls, data: dict[str, Any]) -> ClusterQueue:
        spec = mapping(data.get("spec"))
        cohort = spec.get("cohortName", spec.get("cohort"))  # v1beta2, v1beta1
        selector = spec.get("namespaceSelector")
        status = mapping(data.get("status"))
        reserved = status.get("flavorsReservation", status.get("flavorsUsage"))
        usage = []
        for flavor in sequence(reserved):
            for resource in sequence(mapping(flavor).get("resources")):
                total = amount_or_none(mapping(resource).get("total", 0))
                if total:
                    usage.append(((text(mapping(flavor).get("name")), text(mapping(resource).get("name"))), total))
        return cls(
            text(dig(data, "metadata", "name")),
            text(cohort),
            _resource_groups(spec),
            selector if isinstance(selector, dict) else None,
            text(spec.get("stopPolicy")) or "None",
            tuple(usage),
            isinstance(reserved, list),
            *_admission_checks(spec, text(data.get("apiVersion")) == f"{KUEUE_GROUP}/v1beta1"),
        )

    @property
    def stopped(self) -> bool:
        return self.stop_policy in STOPPED

    def group_for(self, resource: str) -> ResourceGroup | None:
        """RGByResource: the resource group that covers ``resource``."""
        return next((group for group in self.groups if resource in group.covered), None)

    def admits_namespace(self, labels: dict[str, Any]) -> bool:
        return self.namespace_selector is not None and selector_matches(self.namespace_selector, labels)

    def flavor_names(self) -> list[str]:
        return list(dict.fromkeys(flavor.name for group in self.groups for flavor in group.flavors))


def _admission_checks(spec: dict[str, Any], v1beta1: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the AdmissionChecks a ClusterQueue names, those limited to some of its flavors). ``admissionChecks``
    exists in v1beta1 only (converted to strategy rules for all flavors); v1beta2 has only the rules of
    ``admissionChecksStrategy`` (pkg/util/admissioncheck NewAdmissionChecks: no onFlavors means all)."""
    names = [text(name) for name in sequence(spec.get("admissionChecks"))] if v1beta1 else []
    flavors = {
        text(mapping(f).get("name"))
        for group in sequence(spec.get("resourceGroups"))
        for f in sequence(mapping(group).get("flavors"))
    }
    per_flavor = []
    for rule in map(mapping, sequence(dig(spec, "admissionChecksStrategy", "admissionChecks"))):
        names.append(text(rule.get("name")))
        on = {text(flavor) for flavor in sequence(rule.get("onFlavors"))}
        if on and on != flavors:
            per_flavor.append(text(rule.get("name")))
    return tuple(dict.fromkeys(n for n in names if n)), tuple(dict.fromkeys(n for n in per_flavor if n))


def _active(data: dict[str, Any], condition_type: str = "Active") -> bool | None:
    """The status condition ``condition_type`` (None when the object carries none, as a manifest does)."""
    active = None
    for condition in map(mapping, sequence(dig(data, "status", "conditions"))):
        if condition.get("type") == condition_type:
            active = condition.get("status") == "True"
    return active


@dataclass(frozen=True)
class ParametersRef:
    """An AdmissionCheck's ``spec.parameters``: the configuration object its controller reads."""

    api_group: str
    kind: str
    name: str


@dataclass(frozen=True)
class AdmissionCheck:
    """An AdmissionCheck (cluster-scoped): its controller, its parameters, and whether that controller reports
    it Active (status condition ``Active``; None when the object carries no such condition)."""

    name: str
    controller: str
    active: bool | None
    parameters: ParametersRef | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> AdmissionCheck:
        raw = dig(data, "spec", "parameters")
        parameters = None
        if isinstance(raw, dict):
            parameters = ParametersRef(text(raw.get("apiGroup")), text(raw.get("kind")), text(raw.get("name")))
        return cls(
            text(dig(data, "metadata", "name")), text(dig(data, "spec", "controllerName")), _active(data), parameters
        )


@dataclass(frozen=True)
class CheckConfig:
    """What the built-in checks' parameters name: a ProvisioningRequestConfig, or a MultiKueueConfig and the
    MultiKueueClusters it dispatches to (``spec.clusters``)."""

    kind: str
    name: str
    clusters: tuple[str, ...] = ()

    @classmethod
    def of(cls, data: dict[str, Any]) -> CheckConfig:
        clusters = tuple(text(c) for c in sequence(dig(data, "spec", "clusters")) if text(c))
        return cls(text(data.get("kind")), text(dig(data, "metadata", "name")), clusters)


@dataclass(frozen=True)
class MultiKueueCluster:
    """A worker cluster of MultiKueue; ``active``: its status condition Active (its kubeconfig connects)."""

    name: str
    active: bool | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> MultiKueueCluster:
        return cls(text(dig(data, "metadata", "name")), _active(data))


@dataclass(frozen=True)
class Cohort:
    name: str
    parent: str
    groups: tuple[ResourceGroup, ...]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Cohort:
        spec = mapping(data.get("spec"))
        return cls(text(dig(data, "metadata", "name")), text(spec.get("parentName")), _resource_groups(spec))


@dataclass(frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> LocalQueue:
        spec = mapping(data.get("spec"))
        return cls(
            text(dig(data, "metadata", "namespace")),
            text(dig(data, "metadata", "name")),
            text(spec.get("clusterQueue")),
            text(spec.get("stopPolicy")) or "None",
        )

    @property
    def stopped(self) -> bool:
        return self.stop_policy in STOPPED


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: tuple[tuple[str, str], ...]
    node_taints: tuple[Taint, ...]
    tolerations: tuple[Toleration, ...]
    topology_name: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> ResourceFlavor:
        spec = mapping(data.get("spec"))
        taints = tuple(
            Taint(text(t.get("key")), label_text(t.get("value")), text(t.get("effect")))
            for t in map(mapping, sequence(spec.get("nodeTaints")))
            if t.get("key")
        )
        tolerations = tuple(
            Toleration(text(t.get("key")), text(t.get("operator")), label_text(t.get("value")), text(t.get("effect")))
            for t in map(mapping, sequence(spec.get("tolerations")))
        )
        labels = tuple(sorted((str(k), label_text(v)) for k, v in mapping(spec.get("nodeLabels")).items()))
        return cls(text(dig(data, "metadata", "name")), labels, taints, tolerations, text(spec.get("topologyName")))


@dataclass(frozen=True)
class Topology:
    name: str
    levels: tuple[str, ...]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Topology:
        levels = tuple(text(mapping(level).get("nodeLabel")) for level in sequence(dig(data, "spec", "levels")))
        return cls(text(dig(data, "metadata", "name")), tuple(level for level in levels if level))


@dataclass
class KueueSetup:
    """Every Kueue object known (the inventory's and the linted files'), and the quota tree they make."""

    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    topologies: dict[str, Topology] = field(default_factory=dict)
    admission_checks: dict[str, AdmissionCheck] = field(default_factory=dict)
    check_configs: dict[tuple[str, str], CheckConfig] = field(default_factory=dict)  # (kind, name)
    multikueue_clusters: dict[str, MultiKueueCluster] = field(default_factory=dict)

    ambiguous: set[tuple[str, Any]] = field(default_factory=set)  # (kind, key) defined twice, differently
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)  # the tree, once built

    @classmethod
    def of(cls, linted: Iterable[dict[str, Any]], cluster: Iterable[dict[str, Any]] = ()) -> KueueSetup:
        """The linted files' objects win (they are what is about to be applied); the cluster's fill in
        the rest, and their status the usage of a queue the files redefine. Two different linted
        definitions of one name leave it ambiguous: judged by neither."""
        setup = cls()
        for data in linted:
            setup._add(data, strict=True)
        for data in cluster:
            setup._add(data, strict=False)
        return setup

    def _add(self, data: dict[str, Any], strict: bool) -> None:
        self._cache.clear()
        kind = str(data.get("kind", ""))
        if not text(data.get("apiVersion")).startswith(KUEUE_GROUP + "/") or kind not in KUEUE_KINDS:
            return
        table, key, parsed = self._entry(kind, data)
        known = table.get(key)
        if known is None:
            table[key] = parsed
        elif strict and known != parsed:
            self.ambiguous.add((kind, key))
        elif not strict and isinstance(known, ClusterQueue) and isinstance(parsed, ClusterQueue):
            if not known.usage_known and parsed.usage_known:  # the file's spec, the cluster's usage
                table[key] = replace(known, usage=parsed.usage, usage_known=True)
        elif not strict and isinstance(known, AdmissionCheck) and isinstance(parsed, AdmissionCheck):
            if known.active is None and (known.controller, known.parameters) == (parsed.controller, parsed.parameters):
                table[key] = replace(known, active=parsed.active)  # the controller's status of the same check
        elif not strict and isinstance(known, MultiKueueCluster) and isinstance(parsed, MultiKueueCluster):
            if known.active is None:
                table[key] = parsed  # the cluster's status: whether Kueue connects to it

    def _entry(self, kind: str, data: dict[str, Any]) -> tuple[dict[Any, Any], Any, Any]:
        """(the table of the kind, the object's key in it, the parsed object)."""
        if kind == "LocalQueue":
            local = LocalQueue.of(data)
            return self.local_queues, (local.namespace, local.name), local
        if kind in CHECK_CONFIG_KINDS:
            config = CheckConfig.of(data)
            return self.check_configs, (kind, config.name), config
        tables: dict[str, tuple[dict[Any, Any], Any]] = {
            "ClusterQueue": (self.cluster_queues, ClusterQueue.of),
            "Cohort": (self.cohorts, Cohort.of),
            "ResourceFlavor": (self.flavors, ResourceFlavor.of),
            "Topology": (self.topologies, Topology.of),
            "AdmissionCheck": (self.admission_checks, AdmissionCheck.of),
            "MultiKueueCluster": (self.multikueue_clusters, MultiKueueCluster.of),
        }
        table, parse = tables[kind]
        parsed = parse(data)
        return table, parsed.name, parsed

    def __bool__(self) -> bool:
        return bool(self.cluster_queues or self.local_queues)

    def local_queue(self, namespace: str, name: str) -> LocalQueue | None:
        """A manifest without a namespace is applied to whichever namespace it targets: any matches."""
        found = self.local_queues.get((namespace, name))
        if found is None:
            found = next(
                (q for (ns, n), q in self.local_queues.items() if n == name and (not ns or not namespace)),
                None,
            )
        return found

    def is_ambiguous(self, kind: str, key: Any) -> bool:
        return (kind, key) in self.ambiguous

    def cluster_queue(self, name: str) -> ClusterQueue | None:
        return self.cluster_queues.get(name)

    # ------------------------------------------------------------------ the quota tree

    def tree_is_sound(self, queue: ClusterQueue) -> bool:
        """The queue's cohorts lead to a root without a cycle (Kueue refuses a cycle: ErrCohortHasCycle)
        within MAX_DEPTH levels. Otherwise its quota is not judged."""
        seen: set[str] = set()
        parent = queue.cohort
        while parent:
            if parent in seen or len(seen) >= MAX_DEPTH:
                return False
            seen.add(parent)
            parent = self._parent(self._cohort_node(parent))
        return True

    def _children(self, cohort: str) -> list[ClusterQueue | Cohort]:
        index = self._cache.get("children")
        if index is None:  # built once: a cohort of hundreds of queues is walked for every request
            index = {}
            for queue in self.cluster_queues.values():
                index.setdefault(queue.cohort, []).append(queue)
            for child in self.cohorts.values():
                if child.parent != child.name:
                    index.setdefault(child.parent, []).append(child)
            self._cache["children"] = index
        return list(index.get(cohort, []))

    def _memo(self, key: tuple[Any, ...], compute: Any) -> Fraction:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def _parent(self, node: ClusterQueue | Cohort) -> str:
        parent = node.cohort if isinstance(node, ClusterQueue) else node.parent
        return parent if parent and parent != node.name else ""

    @staticmethod
    def _own_quota(node: ClusterQueue | Cohort, fr: FlavorResource) -> Quota | None:
        for group in node.groups:
            for flavor in group.flavors:
                if flavor.name == fr[0]:
                    quota = flavor.quota(fr[1])
                    if quota is not None:
                        return quota
        return None

    def subtree_quota(
        self, node: ClusterQueue | Cohort, fr: FlavorResource, seen: frozenset[str] = frozenset()
    ) -> Fraction:
        return self._memo(("subtree", type(node).__name__, node.name, fr), lambda: self._subtree(node, fr, seen))

    def _subtree(self, node: ClusterQueue | Cohort, fr: FlavorResource, seen: frozenset[str]) -> Fraction:
        own = self._own_quota(node, fr)
        total = own.nominal if own is not None else Fraction(0)
        if isinstance(node, Cohort) and node.name not in seen and len(seen) < MAX_DEPTH:
            for child in self._children(node.name):
                if isinstance(child, Cohort) and child.name in seen | {node.name}:
                    continue  # a cycle: Kueue refuses it (ErrCohortHasCycle); counted once here
                quota = self.subtree_quota(child, fr, seen | {node.name})
                total += quota - self._local_quota(child, fr, quota)
        return min(total, UNLIMITED)

    def _local_quota(self, node: ClusterQueue | Cohort, fr: FlavorResource, subtree: Fraction) -> Fraction:
        """What a lendingLimit keeps from the parent cohort."""
        own = self._own_quota(node, fr)
        if own is None or own.lending_limit is None:
            return Fraction(0)
        return max(Fraction(0), subtree - own.lending_limit)

    def _cohort_node(self, name: str) -> Cohort:
        return self.cohorts.get(name) or Cohort(name, "", ())  # a cohort no object defines exists implicitly

    def potential_available(self, queue: ClusterQueue, fr: FlavorResource) -> Fraction:
        """PotentialAvailable: the largest amount the queue could ever be granted (nothing in use)."""
        return self._potential(queue, fr, frozenset())

    def _potential(self, node: ClusterQueue | Cohort, fr: FlavorResource, seen: frozenset[str]) -> Fraction:
        subtree = self.subtree_quota(node, fr)
        parent = self._parent(node)
        if not parent or parent in seen or len(seen) >= MAX_DEPTH:
            return subtree
        avail = self._local_quota(node, fr, subtree) + self._potential(self._cohort_node(parent), fr, seen | {parent})
        own = self._own_quota(node, fr)
        if own is not None and own.borrowing_limit is not None:
            avail = min(subtree + own.borrowing_limit, avail)
        return min(avail, UNLIMITED)

    def usage(self, node: ClusterQueue | Cohort, fr: FlavorResource, seen: frozenset[str] = frozenset()) -> Fraction:
        """A queue's reserved usage; a cohort's is what its children use beyond what they keep local."""
        if isinstance(node, ClusterQueue):
            return dict(node.usage).get(fr, Fraction(0))
        if len(seen) >= MAX_DEPTH:
            return Fraction(0)
        total = Fraction(0)
        for child in self._children(node.name):
            if isinstance(child, Cohort) and child.name in seen | {node.name}:
                continue
            local = self._local_quota(child, fr, self.subtree_quota(child, fr))
            total += max(Fraction(0), self.usage(child, fr, seen | {node.name}) - local)
        return total

    def available(self, queue: ClusterQueue, fr: FlavorResource) -> Fraction:
        """Available: what the queue can be granted now, given the usage the queues report."""
        return max(Fraction(0), self._available(queue, fr, frozenset()))

    def _available(self, node: ClusterQueue | Cohort, fr: FlavorResource, seen: frozenset[str]) -> Fraction:
        subtree = self.subtree_quota(node, fr)
        used = self.usage(node, fr)
        parent = self._parent(node)
        if not parent or parent in seen or len(seen) >= MAX_DEPTH:
            return subtree - used
        parent_available = self._available(self._cohort_node(parent), fr, seen | {parent})
        local = self._local_quota(node, fr, subtree)
        own = self._own_quota(node, fr)
        if own is not None and own.borrowing_limit is not None:
            stored_in_parent = subtree - local
            used_in_parent = max(Fraction(0), used - local)
            parent_available = min(stored_in_parent - used_in_parent + own.borrowing_limit, parent_available)
        return max(Fraction(0), local - used) + parent_available
