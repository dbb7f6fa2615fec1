"""An offline model of the kube-scheduler filters that decide where a GPU pod can land.

Each filter follows the upstream plugin (kubernetes/kubernetes pkg/scheduler/framework/plugins):
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity and NodeResourcesFit, run in
the default profile's order; like the scheduler, a node is rejected by the first filter
that fails, and the summary uses the scheduler's own words:
``0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector.``
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.lru import LRU
from gpulint.kube.names import decimal_integer, field_requirement_errors, selector_requirement_errors
from gpulint.kube.node_index import LabelIndex
from gpulint.kube.pools.labels import DEPRECATED_LABELS
from gpulint.kube.quantity import amount_or_none, amounts
from gpulint.kube.workloads import ObjectFacts, part_fact

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
# NodeAffinity's PreFilter (nodeaffinity/node_affinity.go): when every required term names nodes by
# matchFields metadata.name In, only those are filtered; the framework words the others by the plugin
# (framework/runtime RunPreFilterPlugins), and terms that name no common node fail the PreFilter itself
REASON_AFFINITY_PREFILTER = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"
AFFINITY_REASONS = (REASON_AFFINITY, REASON_AFFINITY_PREFILTER, REASON_AFFINITY_CONFLICT)
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_TOO_MANY_PODS = "Too many pods"


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


# TaintToleration's Filter reason (tainttoleration/taint_toleration.go). It named the first untolerated
# taint ("node(s) had untolerated taint {key: value}") until kubernetes#134740 (1.35, and the 1.34 patch
# releases through the cherry-pick #135023) made it a fixed text: taint keys and values may be sensitive.
REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_LAST_NAMING_TAINTS = (1, 33)


def names_untolerated_taints(kubernetes_version: str) -> bool:
    """Whether the scheduler of this "major.minor" names the untolerated taint in its reason."""
    major, _, minor = kubernetes_version.partition(".")
    return (int(major), int(minor)) <= _LAST_NAMING_TAINTS


def untolerated(taint: Taint, named: bool = False) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}" if named else REASON_UNTOLERATED


# --------------------------------------------------------------------------- quantities


_CACHED_TEXT = 100  # longer request text is rare: parsed each time rather than held in the cache


def to_amount(value: Any) -> Fraction | None:
    kind = value.__class__  # a bool is a class of its own: never a quantity
    if kind is int or kind is float or (kind is str and len(value) <= _CACHED_TEXT):  # small and hashable
        return _scalar_amount(value)
    return amount_or_none(value)


@lru_cache(maxsize=4096, typed=True)  # a pure function of a scalar; requests repeat the same few values
def _scalar_amount(value: str | int | float) -> Fraction | None:
    return amount_or_none(value)


def resource_list(raw: Any) -> dict[str, Fraction]:
    """A ResourceList (name -> quantity); values that are not quantities are left out."""
    return amounts(raw, to_amount)


_ZERO = Fraction(0)


def _add(total: dict[str, Fraction], more: dict[str, Fraction]) -> None:
    for name, amount in more.items():
        total[name] = total[name] + amount if name in total else amount


def _max(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
    if not b:  # no init containers (most pods): what a asks, never below zero
        # a Fraction's sign is its numerator's (compared without Fraction's comparison: three Python frames)
        return {name: amount if amount.numerator >= 0 else _ZERO for name, amount in a.items()}
    return {name: max(a.get(name, _ZERO), b.get(name, _ZERO)) for name in a.keys() | b.keys()}


def container_requests(container: dict[str, Any]) -> dict[str, Fraction]:
    """Requests after API defaulting: a resource with only a limit is requested at the limit."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return {}
    requests = resource_list(resources.get("requests"))
    for name, amount in resource_list(resources.get("limits")).items():
        requests.setdefault(name, amount)
    return requests


def pod_requests(spec: dict[str, Any], facts: ObjectFacts | None = None) -> dict[str, Fraction]:
    """The effective pod request NodeResourcesFit uses (k8s.io/component-helpers resource.PodRequests).

    max(sum of app containers + restartable sidecars, each init container + the sidecars
    started before it), plus pod overhead; pod-level resources replace cpu/memory when set.
    Worked out once per pod spec in the ``facts`` of its object while it is checked (a copy each time:
    callers may change it).
    """
    return dict(part_fact(facts, spec, "pod requests", _pod_requests, spec))


def _pod_requests(spec: dict[str, Any]) -> dict[str, Fraction]:
    app: dict[str, Fraction] = {}
    for container in _containers(spec, "containers"):
        _add(app, container_requests(container))
    init_peak: dict[str, Fraction] = {}
    sidecars: dict[str, Fraction] = {}
    for container in _containers(spec, "initContainers"):
        requests = container_requests(container)
        if container.get("restartPolicy") == "Always":  # a restartable sidecar runs beside the app
            _add(sidecars, requests)
            init_peak = _max(init_peak, sidecars)
        else:
            during = dict(sidecars)
            _add(during, requests)
            init_peak = _max(init_peak, during)
    _add(app, sidecars)
    total = _max(app, init_peak)
    pod_level = spec.get("resources")  # PodLevelResources: the pod's own requests win
    if isinstance(pod_level, dict):
        level = resource_list(pod_level.get("requests"))
        for name, amount in resource_list(pod_level.get("limits")).items():
            level.setdefault(name, amount)
        total.update(level)
    _add(total, resource_list(spec.get("overhead")))
    return {name: amount for name, amount in total.items() if amount.numerator > 0}  # positive (as _max)


def _containers(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [c for c in sequence(spec.get(key)) if isinstance(c, dict)]


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass
class NodeInfo:
    name: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: dict[str, Fraction]
    capacity: dict[str, Fraction]
    used: dict[str, Fraction] = field(default_factory=dict)  # by running pods (the "now" view)
    pod_count: int = 0

    @classmethod
    def from_object(cls, data: dict[str, Any]) -> NodeInfo:
        metadata = mapping(data.get("metadata"))
        spec = mapping(data.get("spec"))
        status = mapping(data.get("status"))
        labels = mapping(metadata.get("labels"))
        taints = []
        for taint in sequence(spec.get("taints")):
            if isinstance(taint, dict) and isinstance(taint.get("key"), str):
                taints.append(Taint(taint["key"], str(taint.get("value") or ""), str(taint.get("effect") or "")))
        capacity = resource_list(status.get("capacity"))
        allocatable = resource_list(status.get("allocatable")) or dict(capacity)
        return cls(
            str(metadata.get("name") or ""),
            _with_deprecated_twins({str(k): _label_value(v) for k, v in labels.items()}),
            tuple(taints),
            spec.get("unschedulable") is True,
            allocatable,
            capacity,
        )

    def free(self, resource: str) -> Fraction:
        return self.allocatable.get(resource, Fraction(0)) - self.used.get(resource, Fraction(0))


def _with_deprecated_twins(labels: dict[str, str]) -> dict[str, str]:
    """A node's labels with the deprecated twin of each stable label it carries (kubernetes.io/arch ->
    beta.kubernetes.io/arch): the kubelet and the node lifecycle controller keep both on every node, so an
    inventory written with the stable ones only still answers a selector written with the old ones."""
    for deprecated, stable in DEPRECATED_LABELS.items():
        if deprecated not in labels and stable in labels:
            labels[deprecated] = labels[stable]
    return labels


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


# --------------------------------------------------------------------------- pod requirements


@dataclass(frozen=True)
class Requirement:
    """One nodeSelector entry or one match expression, evaluated on its own for explanations."""

    description: str  # e.g. "nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"
    path: tuple[Any, ...]  # from the pod spec
    key: str
    operator: str
    values: tuple[str, ...]
    field: bool = False  # matchFields (metadata.name)
    parse_errors: tuple[str, ...] = ()  # the scheduler cannot parse it: its term matches no node

    def matches(self, node: NodeInfo) -> bool:
        if self.field:  # a node has one field, metadata.name; any other reads as ""
            present, value = True, node.name if self.key == "metadata.name" else ""
        else:
            present, value = self.key in node.labels, node.labels.get(self.key, "")
        op = self.operator
        if op == "In":
            return present and value in self.values
        if op == "NotIn":
            return not present or value not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt"):
            if not present or len(self.values) != 1:
                return False
            try:
                have, want = int(value), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False  # an unknown operator matches nothing (validation would reject it)


def _requirement_fields(requirement: Requirement) -> tuple[Any, ...]:
    """A requirement's fields in order (what its dataclass equality compares), without dataclasses.astuple's deep copy
    (tests/unit/test_scheduler.py fails when a field is left out)."""
    r = requirement
    return (r.description, r.path, r.key, r.operator, r.values, r.field, r.parse_errors)


@dataclass(frozen=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str
    comparisons: bool = False  # TaintTolerationComparisonOperators: Gt and Lt compare integers

    def tolerates(self, taint: Taint) -> bool:
        """v1 helper ToleratesTaint: effect, then key (empty key + Exists matches all), then value."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator in ("Gt", "Lt") and self.comparisons:
            # compareNumericValues: both canonical decimal integers; the taint's value against the toleration's
            mine, theirs = decimal_integer(self.value), decimal_integer(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs > mine if self.operator == "Gt" else theirs < mine
        return False


@dataclass(frozen=True)
class PodRequirements:
    requests: dict[str, Fraction]
    node_selector: tuple[Requirement, ...]  # all must match
    affinity_terms: tuple[tuple[Requirement, ...], ...] | None  # ORed terms of ANDed requirements
    tolerations: tuple[Toleration, ...]
    node_name: str
    # extended resources a DeviceClass backs (DRAExtendedResource): on a node with none allocatable,
    # NodeResourcesFit leaves them to the DRA plugin (shouldDelegateResourceToDRA)
    dra_resources: frozenset[str] = frozenset()
    # the host ports its containers take (NodePorts: a node holds one pod per host port, so one copy of the pod)
    host_ports: tuple[int, ...] = ()

    def requirements(self) -> list[Requirement]:
        out = list(self.node_selector)
        for term in self.affinity_terms or ():
            out.extend(term)
        return out

    def label_keys(self) -> frozenset[str]:
        return frozenset(r.key for r in self.requirements() if not r.field)

    def uses_node_identity(self) -> bool:
        return bool(self.node_name) or any(r.field for r in self.requirements())

    @cached_property
    def pinned_node_names(self) -> frozenset[str] | None:
        """The nodes NodeAffinity's PreFilter keeps (None: all): the union over the required terms of the nodes
        each names by matchFields metadata.name In, when every term names some."""
        if not self.affinity_terms:
            return None
        names: set[str] = set()
        for term in self.affinity_terms:
            named: set[str] | None = None
            for r in term:
                if r.field and r.key == "metadata.name" and r.operator == "In":
                    named = set(r.values) if named is None else named & set(r.values)
            if named is None:
                return None
            names |= named
        return frozenset(names)

    def tolerates(self, taint: Taint) -> bool:
        """Whether any of the pod's tolerations tolerates ``taint``: asked once per distinct taint (a fleet has
        few), not once per node and taint, which a pod of tens of thousands of tolerations made seconds."""
        known = self._tolerated
        answer = known.get(taint)
        if answer is None:
            answer = known[taint] = any(t.tolerates(taint) for t in self.tolerations)
        return answer

    @cached_property
    def _tolerated(self) -> dict[Taint, bool]:
        return {}

    def matches_affinity(self, node: NodeInfo) -> bool:
        if not all(r.matches(node) for r in self.node_selector):
            return False
        if self.affinity_terms is None:
            return True
        # A term with no requirements matches nothing (NodeSelectorTerm semantics), and neither does
        # one the scheduler cannot parse (component-helpers nodeaffinity: LazyErrorNodeSelector).
        return any(
            term and not any(r.parse_errors for r in term) and all(r.matches(node) for r in term)
            for term in self.affinity_terms
        )

    def signature(self) -> tuple[Any, ...]:
        return self._signature

    def selection_signature(self) -> tuple[Any, ...]:
        """The node selector and the affinity terms alone, as plain values: what matches_affinity reads."""
        return self._selection

    @cached_property  # the model's memo keys and the gang rules ask for it again and again (nothing changes a pod's)
    def _signature(self) -> tuple[Any, ...]:
        """The pod's scheduling shape as plain strings, numbers and tuples, equal exactly when the fields are:
        the memos hash it on every lookup, and a Fraction's or a dataclass's hash is Python code."""
        return (
            tuple(sorted((name, amount.numerator, amount.denominator) for name, amount in self.requests.items())),
            *self._selection,
            tuple((t.key, t.operator, t.value, t.effect, t.comparisons) for t in self.tolerations),
            self.node_name,
            self.dra_resources,
            self.host_ports,
        )

    @cached_property
    def _selection(self) -> tuple[Any, ...]:
        terms = self.affinity_terms
        return (
            tuple(map(_requirement_fields, self.node_selector)),
            None if terms is None else tuple(tuple(map(_requirement_fields, term)) for term in terms),
        )


def pod_requirements(
    spec: dict[str, Any], taint_comparisons: bool = False, facts: ObjectFacts | None = None
) -> PodRequirements:
    """``taint_comparisons``: the TaintTolerationComparisonOperators gate (Gt/Lt tolerations). Read once per
    pod spec in the ``facts`` of its object while it is checked (several rules run the scheduler's filters;
    nothing changes it)."""
    key = ("pod requirements", taint_comparisons)
    return part_fact(facts, spec, key, _pod_requirements, spec, taint_comparisons, facts)


def _pod_requirements(spec: dict[str, Any], taint_comparisons: bool, facts: ObjectFacts | None) -> PodRequirements:
    selector: list[Requirement] = []
    node_selector = spec.get("nodeSelector")
    if isinstance(node_selector, dict):
        for key, value in node_selector.items():
            selector.append(
                Requirement(
                    f"nodeSelector {key}={_label_value(value)}",
                    ("nodeSelector", key),
                    str(key),
                    "In",
                    (_label_value(value),),
                )
            )
    terms: list[tuple[Requirement, ...]] | None = None
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_affinity, dict) else None
    )
    if isinstance(required, dict):
        terms = []
        base = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        for t_index, term in enumerate(sequence(required.get("nodeSelectorTerms"))):
            parsed: list[Requirement] = []
            if isinstance(term, dict):
                for kind in ("matchExpressions", "matchFields"):
                    for e_index, expression in enumerate(sequence(term.get(kind))):
                        if isinstance(expression, dict):
                            parsed.append(
                                _expression(expression, (*base, t_index, kind, e_index), kind == "matchFields")
                            )
            terms.append(tuple(parsed))
    tolerations = []
    for toleration in sequence(spec.get("tolerations")):
        if isinstance(toleration, dict):
            tolerations.append(
                Toleration(
                    str(toleration.get("key") or ""),
                    str(toleration.get("operator") or ""),
                    _label_value(toleration.get("value")),
                    str(toleration.get("effect") or ""),
                    taint_comparisons,
                )
            )
    node_name = spec.get("nodeName")
    return PodRequirements(
        pod_requests(spec, facts),
        tuple(selector),
        tuple(terms) if terms is not None else None,
        tuple(tolerations),
        node_name if isinstance(node_name, str) else "",
        host_ports=host_ports(spec),
    )


def host_ports(spec: dict[str, Any]) -> tuple[int, ...]:
    """The host ports a pod's containers take, sorted: each port's hostPort, which with hostNetwork defaults to its
    containerPort (pkg/apis/core/v1/defaults.go defaultHostNetworkPorts). The NodePorts filter
    (pkg/scheduler/framework/plugins/nodeports) lets no two pods take one host port on a node."""
    network = spec.get("hostNetwork") is True
    found: set[int] = set()
    for container in sequence(spec.get("containers")):
        for port in sequence(mapping(container).get("ports")):
            port = mapping(port)
            number = port.get("hostPort") or (port.get("containerPort") if network else None)
            if isinstance(number, int) and not isinstance(number, bool) and number > 0:
                found.add(number)
    return tuple(sorted(found))


def _expression(expression: dict[str, Any], path: tuple[Any, ...], field_match: bool) -> Requirement:
    key = str(expression.get("key") or "")
    operator = str(expression.get("operator") or "")
    values = tuple(_label_value(v) for v in sequence(expression.get("values")) if not isinstance(v, (dict, list)))
    shown = f"{key} {operator}" + (f" [{', '.join(values)}]" if values else "")
    errors = (
        field_requirement_errors(operator, list(values))
        if field_match
        else selector_requirement_errors(key, operator, list(values))
    )
    return Requirement(
        ("matchFields " if field_match else "") + shown, path, key, operator, values, field_match, tuple(errors)
    )


# --------------------------------------------------------------------------- the filters


def filter_reasons(
    pod: PodRequirements, node: NodeInfo, now: bool, named_taints: bool = False, affinity_matched: bool | None = None
) -> list[str]:
    """The reasons the first failing filter gives for ``node`` (empty: the node fits), worded as the
    scheduler words them (``named_taints``: a scheduler older than 1.34 names the untolerated taint).

    A pod with ``spec.nodeName`` bypasses the scheduler: the kubelet admits it (resources,
    node affinity) even on a cordoned node or past NoSchedule taints; NoExecute still evicts it.
    """
    bound = bool(pod.node_name)
    if bound and pod.node_name != node.name:
        return [REASON_NODE_NAME]
    pinned = None if bound else pod.pinned_node_names
    if pinned is not None and node.name not in pinned:  # PreFilter runs before every Filter
        return [REASON_AFFINITY_PREFILTER if pinned else REASON_AFFINITY_CONFLICT]
    if not bound and node.unschedulable and not pod.tolerates(Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule")):
        return [REASON_UNSCHEDULABLE]
    effects = ("NoExecute",) if bound else ("NoSchedule", "NoExecute")
    for taint in node.taints:
        if taint.effect in effects and not pod.tolerates(taint):
            return [untolerated(taint, named_taints)]
    if not (pod.matches_affinity(node) if affinity_matched is None else affinity_matched):
        return [REASON_AFFINITY]
    return resource_reasons(pod.requests, node, now, pod.dra_resources)


def resource_reasons(
    requests: dict[str, Fraction], node: NodeInfo, now: bool, dra_resources: frozenset[str] = frozenset()
) -> list[str]:
    """NodeResourcesFit's reasons; ``dra_resources`` the node publishes none of are the DRA plugin's."""
    reasons = []
    pods_allowed = node.allocatable.get("pods")
    if pods_allowed is not None and (node.pod_count if now else 0) + 1 > pods_allowed:
        reasons.append(REASON_TOO_MANY_PODS)
    for resource, amount in sorted(requests.items()):
        if resource in dra_resources and node.allocatable.get(resource, Fraction(0)) <= 0:
            continue
        available = node.free(resource) if now else node.allocatable.get(resource, Fraction(0))
        if amount > available:
            reasons.append(insufficient(resource))
    return reasons


def affinity_positions(pod: PodRequirements, nodes: Sequence[NodeInfo], index: LabelIndex) -> frozenset[int]:
    """matches_affinity over every node at once (``index`` is ``nodes``'): the positions of the nodes that
    match the node selector and any valid term of the required node affinity."""

    def fallback(requirement: Requirement) -> Callable[[int], bool]:
        return lambda at: requirement.matches(nodes[at])

    chosen = index.select(pod.node_selector, index.everyone, fallback)
    if pod.affinity_terms is None:
        return chosen
    found: frozenset[int] = frozenset()
    for term in pod.affinity_terms:
        if term and not any(r.parse_errors for r in term):  # an empty or unparsable term matches nothing
            found |= index.select(term, chosen - found, fallback)
    return found


# --------------------------------------------------------------------------- groups of identical nodes


@dataclass
class NodeGroup:
    nodes: list[NodeInfo]

    @property
    def representative(self) -> NodeInfo:
        return self.nodes[0]

    def __len__(self) -> int:
        return len(self.nodes)


def identity_label_keys(nodes: Sequence[NodeInfo]) -> frozenset[str]:
    """Label keys that (nearly) name each node, such as kubernetes.io/hostname: left out of grouping."""
    if len(nodes) < 4:
        return frozenset()
    values: dict[str, set[str]] = {}
    for node in nodes:
        for key, value in node.labels.items():
            values.setdefault(key, set()).add(value)
    return frozenset(key for key, seen in values.items() if len(seen) > len(nodes) // 2)


def group_nodes(nodes: Iterable[NodeInfo], ignore_labels: frozenset[str]) -> list[NodeGroup]:
    groups: dict[tuple[Any, ...], NodeGroup] = {}
    for node in nodes:
        labels = tuple(sorted((k, v) for k, v in node.labels.items() if k not in ignore_labels))
        key = (
            labels,
            node.taints,
            node.unschedulable,
            tuple(sorted(node.allocatable.items())),
            tuple(sorted(node.used.items())),
            node.pod_count,
        )
        group = groups.get(key)
        if group is None:
            groups[key] = NodeGroup([node])
        else:
            group.nodes.append(node)
    return list(groups.values())


@dataclass
class FitResult:
    total: int
    fitting_groups: list[NodeGroup]
    reasons: Counter[str]  # reason -> number of nodes
    failing: list[tuple[NodeGroup, list[str]]]  # per group, the reasons it fails (for tables)

    @property
    def fitting(self) -> list[NodeInfo]:
        return [node for group in self.fitting_groups for node in group.nodes]

    @property
    def fitting_count(self) -> int:
        return sum(len(group) for group in self.fitting_groups)

    @property
    def fits(self) -> bool:
        return bool(self.fitting_groups)

    def summary(self) -> str:
        """FitError.Error(): the histogram sorted on the whole "count reason" string (a failed PreFilter's
        message stands alone)."""
        if self.total and set(self.reasons) == {REASON_AFFINITY_CONFLICT}:
            return f"0/{self.total} nodes are available: {REASON_AFFINITY_CONFLICT}."
        histogram = ", ".join(sorted(f"{count} {reason}" for reason, count in self.reasons.items()))
        return (
            f"0/{self.total} nodes are available: {histogram}." if histogram else f"0/{self.total} nodes are available."
        )


def copies_in(
    pod: PodRequirements, allocatable: Mapping[str, Fraction], judged: Callable[[str], bool] | None = None
) -> int:
    """How many copies of ``pod`` fit in an empty node's ``allocatable`` (its most constraining resource decides;
    a resource ``judged`` rejects, whose figure is not known, decides nothing)."""
    copies: int | None = None
    for resource, amount in pod.requests.items():
        if judged is not None and not judged(resource):
            continue
        fit = int(allocatable.get(resource, Fraction(0)) // amount)
        copies = fit if copies is None else min(copies, fit)
    pods_allowed = allocatable.get("pods")
    if pods_allowed is not None:
        copies = int(pods_allowed) if copies is None else min(copies, int(pods_allowed))
    if pod.host_ports:  # a second copy finds its host ports taken
        copies = 1 if copies is None else min(copies, 1)
    return copies if copies is not None else 1_000_000


def binding_resources(pod: PodRequirements, node: NodeInfo) -> frozenset[str]:
    """The resources of an empty ``node`` that run out first for copies of ``pod`` (the next copy finds them
    Insufficient); "pods" when the node's pod count binds."""
    copies = copies_on(pod, node)
    found = {
        resource
        for resource, amount in pod.requests.items()
        if int(node.allocatable.get(resource, Fraction(0)) // amount) == copies
    }
    pods_allowed = node.allocatable.get("pods")
    if pods_allowed is not None and int(pods_allowed) == copies:
        found.add("pods")
    return frozenset(found)


def copies_on(pod: PodRequirements, node: NodeInfo) -> int:
    """How many copies of ``pod`` fit on an empty ``node`` (its most constraining resource decides)."""
    return copies_in(pod, node.allocatable)


MEMO_SIZE = 1024  # results kept per distinct pod (each may hold a verdict per node group)
# Node groups x requirements past which a pod's node affinity is matched through the label index: below
# it, matching each group's representative is cheaper than the index's set operations.
INDEXED_FROM = 4096


@dataclass
class ClusterModel:
    """Nodes grouped once; each distinct pod evaluated once, group by group."""

    nodes: list[NodeInfo]
    named_taints: bool = False  # the scheduler names the untolerated taint (before 1.34)
    indexed_from: int = INDEXED_FROM  # groups x requirements from which affinity goes through the label index
    _identity: frozenset[str] = frozenset()
    _groups: LRU[str, list[NodeGroup]] = field(default_factory=lambda: LRU(1))  # grouped once, by one thread
    _index: LRU[str, tuple[LabelIndex, dict[int, int]]] = field(default_factory=lambda: LRU(1))  # built on first use
    # per distinct pod; bounded: the webhook's model lives for every review of a snapshot
    _cache: LRU[tuple[Any, ...], Any] = field(default_factory=lambda: LRU(MEMO_SIZE))

    def __post_init__(self) -> None:
        self._identity = identity_label_keys(self.nodes)

    def groups(self) -> list[NodeGroup]:
        return self._groups.get_or_compute("groups", lambda: group_nodes(self.nodes, self._identity))

    def _groups_for(self, pod: PodRequirements) -> list[NodeGroup]:
        if pod.uses_node_identity() or pod.label_keys() & self._identity:
            return [NodeGroup([node]) for node in self.nodes]  # the pod names nodes: no grouping
        return self.groups()

    def evaluate(self, pod: PodRequirements, now: bool = False) -> FitResult:
        # the memo's get_or_compute: concurrent reviews of one pod shape evaluate it once
        return self._cache.get_or_compute(("fit", pod.signature(), now), lambda: self._evaluate(pod, now))

    def _evaluate(self, pod: PodRequirements, now: bool) -> FitResult:
        fitting: list[NodeGroup] = []
        reasons: Counter[str] = Counter()
        failing: list[tuple[NodeGroup, list[str]]] = []
        groups = self._groups_for(pod)
        matched = self._affinity_matched(pod, groups)
        for group in groups:
            found = filter_reasons(
                pod, group.representative, now, self.named_taints, None if matched is None else matched(group)
            )
            if found:
                for reason in found:
                    reasons[reason] += len(group)
                failing.append((group, found))
            else:
                fitting.append(group)
        return FitResult(len(self.nodes), fitting, reasons, failing)

    def placeable(self, pod: PodRequirements) -> int:
        """Copies of ``pod`` the empty cluster holds at once on the nodes that pass every filter."""
        return self._cache.get_or_compute(
            ("placeable", pod.signature()),
            lambda: sum(
                copies_on(pod, group.representative) * len(group) for group in self.evaluate(pod).fitting_groups
            ),
        )

    def matching_groups(self, pod: PodRequirements) -> list[NodeGroup]:
        return self._cache.get_or_compute(
            ("affinity", *pod.selection_signature()),
            lambda: self._matching_groups(pod),
        )

    def _matching_groups(self, pod: PodRequirements) -> list[NodeGroup]:
        groups = self._groups_for(pod)
        matched = self._affinity_matched(pod, groups)
        if matched is None:
            return [group for group in groups if pod.matches_affinity(group.representative)]
        return [group for group in groups if matched(group)]

    def _affinity_matched(self, pod: PodRequirements, groups: list[NodeGroup]) -> Callable[[NodeGroup], bool] | None:
        """Whether a group's nodes match the pod's node selector and affinity, through the label index; None
        when matching each group directly is cheap enough (see INDEXED_FROM)."""
        if len(groups) * len(pod.requirements()) < self.indexed_from:
            return None
        index, position = self._index.get_or_compute(
            "index", lambda: (LabelIndex.of(self.nodes), {id(node): i for i, node in enumerate(self.nodes)})
        )
        chosen = self._cache.get_or_compute(
            ("affinity positions", *pod.selection_signature()), lambda: affinity_positions(pod, self.nodes, index)
        )
        return lambda group: position[id(group.representative)] in chosen

    def matching_affinity(self, pod: PodRequirements) -> list[NodeInfo]:
        return [node for group in self.matching_groups(pod) for node in group.nodes]

    def excluded_by(self, requirement: Requirement) -> int:
        def count() -> int:
            if requirement.field or requirement.key in self._identity:
                return sum(1 for node in self.nodes if not requirement.matches(node))
            return sum(len(g) for g in self.groups() if not requirement.matches(g.representative))

        return self._cache.get_or_compute(("excluded", _requirement_fields(requirement)), count)
