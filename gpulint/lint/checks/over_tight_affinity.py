"""over-tight-affinity: required node affinity / nodeSelector that leaves too few nodes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.gpu_sharing import MIG_PREFIX, NVIDIA_GPU
from gpulint.kube.gpu_stack import stack_component
from gpulint.kube.pools.labels import GROUP_ONLY_LABELS, POOL_LABELS
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import ClusterModel, NodeGroup, NodeInfo, PodRequirements, Requirement
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.verdicts.shared import (
    gke_created_pool,
    pool_label_reasons,
    pools_matching,
    selection_limits_replicas,
    written_requirements,
)
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec(
    "over-tight-affinity", Severity.WARNING, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, of_pods=True
)
RULE_ID = SPEC.id
# (path in the pod spec, message, severity, pinned: no verdict either way, whatever the configuration)
Verdict = tuple[tuple, str, Severity, bool, tuple[str, ...]]  # path, message, severity, pinned, notes


def most_excluding(pod: PodRequirements, model: ClusterModel) -> tuple[Requirement, int]:
    """The single requirement that, on its own, excludes the most nodes."""
    best: tuple[Requirement, int] | None = None
    for requirement in pod.requirements():
        excluded = model.excluded_by(requirement)
        if best is None or excluded > best[1]:
            best = (requirement, excluded)
    assert best is not None
    return best


def values_in_cluster(key: str, nodes: list[NodeInfo], limit: int = 5) -> str:
    counts = Counter(node.labels[key] for node in nodes if key in node.labels)
    if not counts:
        return f"no node has the label {key}"
    shown = first_and_more([f"{value} ({count})" for value, count in counts.most_common()], limit, last=", and ")
    return f"nodes carry {key} = {shown}"


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    if obj.kind == "DaemonSet" and (inventory.pools or not inventory.node_labels_proven):
        return  # its pods follow the nodes that come and go (agents label them after boot), never add one
    if obj.kind == "DaemonSet" and stack_component(site.spec) is not None:
        return  # GPU infrastructure must reach every GPU node: daemonset-coverage says which it selects
    if site.completed_by:
        return  # the selector that applies may come from the object that completes the pod
    if "nodeSelector" in site.defaulted:
        return  # an operator's default (NFD's label): a label no listed node carries may still be added by NFD
    pod = written_requirements(obj.kind, site.spec, ctx.resolver, obj.facts)
    if not pod.requirements():
        return  # no constraint, or only empty terms (which match nothing: gpu-unschedulable says so)
    written: frozenset[str] = ctx.memo((RULE_ID, "nfd-labels"), lambda: nfd_rule_labels(ctx.resolver.linted))
    if any(not r.field and r.key in written for r in pod.requirements()):
        return  # a linted NodeFeatureRule writes the label: NFD puts it on the nodes whose features match, later
    # Workloads repeat: judge each distinct (pod, replica count) once per run, and once per inventory
    # for the webhook's reviews (the verdict reads the nodes and pools, never the object's other fields).
    # The default ComputeClass its GKE namespace names (GKE selects it for the pod) is part of the shape.
    chosen = inventory.namespace_class(obj.ref.namespace, obj.kind)
    key = (RULE_ID, pod.signature(), site.pods, chosen)
    verdicts = ctx.memo(
        key, lambda: inventory.shape_fact(key, lambda: tuple(_judge(pod, site.pods, inventory, chosen)))
    )
    for relative_path, message, severity, pinned, notes in verdicts:
        yield Diagnostic(RULE_ID, (*site.path, *relative_path), message, severity=severity, pinned=pinned, notes=notes)


# Node Feature Discovery's default label namespace: a rule's label name without one gets it (NFD nfd-master).
_NFD_PREFIX = "feature.node.kubernetes.io/"


def nfd_rule_labels(linted: LintedSet) -> frozenset[str]:
    """The node labels the linted NodeFeatureRules write (nfd.k8s-sigs.io spec.rules[].labels): NFD's master
    adds them to every node whose features match once the rule is applied, so a node of the inventory without
    one is no evidence that no node will carry it."""
    found: set[str] = set()
    for rule_object in linted.of_kind("nfd.k8s-sigs.io", "NodeFeatureRule"):
        for rule in sequence(dig(rule_object.data, "spec", "rules")):
            for name in mapping(mapping(rule).get("labels")):
                found.add(str(name) if "/" in str(name) else _NFD_PREFIX + str(name))
    return frozenset(found)


def _judge(pod: PodRequirements, pods: int | None, inventory: Resolver, namespace_class: str = "") -> Iterator[Verdict]:
    nodes = inventory.nodes
    groups = inventory.model.matching_groups(pod)
    requirement, excluded = most_excluding(pod, inventory.model)
    if not inventory.pools and gke_created_pool(pod, inventory, namespace_class) is not None:
        return  # GKE may create a node pool for it (auto-creation, Autopilot): gpu-unschedulable says it is unknown
    if inventory.pools:
        if pools_matching(pod, inventory, namespace_class):
            return  # a pool can add nodes it matches: gpu-unschedulable judges what they offer
        if not nodes and _outside_every_pool(pod, inventory):
            return  # it asks for a node no pool makes: only the nodes could answer, and none are known
        if not groups:
            yield (
                requirement.path,
                f"the required node affinity/selector matches {_none_of(len(nodes))}no node that "
                f"its {_pools(len(inventory.pools))} can add",
                _pooled_severity(inventory),
                not inventory.pools_whole,
                (pool_label_reasons(pod, inventory), _pending(pod, inventory), *_not_whole(inventory)),
            )
            return
        yield from _no_pool_offers(pod, inventory, groups, requirement, excluded)
        return
    if not groups:
        message = (
            f"the required node affinity/selector matches none of the {len(nodes)} nodes; "
            f"'{requirement.description}' alone excludes {excluded}"
        )
        severity = _unproven_severity(pod, inventory)
        notes = (
            *(() if requirement.field else (values_in_cluster(requirement.key, nodes),)),
            _pending(pod, inventory),
            *((_UNPROVEN[severity],) if severity in _UNPROVEN else ()),
        )
        yield (requirement.path, message, severity, severity != Severity.ERROR, notes)
        return
    matched = sum(len(group) for group in groups)
    gpu_resources = [name for name in pod.requests if is_extended(name)]
    offering = [
        group for group in groups if all(group.representative.allocatable.get(name, 0) > 0 for name in gpu_resources)
    ]
    if gpu_resources and not offering and not uses_unpublished(pod, inventory):
        # the pod is unschedulable for it: proven when the inventory holds every node there can be
        severity = Severity.ERROR if inventory.node_labels_proven else Severity.WARNING
        lacking, offered = _lacking(groups, gpu_resources, "none of them offers")
        yield (
            requirement.path,
            f"the required node affinity/selector matches {matched} nodes, but {lacking}; "
            f"'{requirement.description}' excludes {excluded} of {len(nodes)} nodes",
            severity,
            severity != Severity.ERROR,
            (*offered, _pending(pod, inventory), *((_UNPROVEN[severity],) if severity in _UNPROVEN else ())),
        )
        return
    allowed = sum(len(group) for group in offering) if gpu_resources else matched
    yield from _replicas(pods, pod, inventory, allowed, requirement)


def _outside_every_pool(pod: PodRequirements, inventory: Resolver) -> bool:
    """The pod's nodes are ones no pool in the linted files makes, so only the nodes could answer:
    - it requires a label every pool stamps on its nodes to be absent (`karpenter.sh/nodepool DoesNotExist`:
      Karpenter's controller, which must not run on the nodes it makes): the cluster's others, a managed
      system pool;
    - it requires a label no pool sets that names another pool system's node group
      (`alpha.eksctl.io/nodegroup-name`, `eks.amazonaws.com/nodegroup`: a load generator on the node group
      eksctl made with the cluster, beside the repository's Karpenter NodePools; `eks.amazonaws.com/capacityType: SPOT`,
      which only a managed node group sets: the EKS workshop's spot module), or that is the user's own
      (a key without a prefix, `instance-type: trn1-32xl`: Kubernetes leaves those to users, and no
      Karpenter, cloud or agent label is one), which the node group's own configuration sets."""
    return any(
        not requirement.field
        and (
            requirement.operator == "DoesNotExist"
            and all(requirement.key in pool.labels for pool in inventory.pools)
            or requirement.operator in ("In", "Exists")
            and (requirement.key in POOL_LABELS or requirement.key in GROUP_ONLY_LABELS or "/" not in requirement.key)
            and not any(requirement.key in pool.labels for pool in inventory.pools)
        )
        for requirement in pod.requirements()
    )


def _no_pool_offers(
    pod: PodRequirements, inventory: Resolver, groups: list[NodeGroup], requirement: Requirement, excluded: int
) -> Iterator[Verdict]:
    """No pool can add a node the selection matches, and the nodes it matches offer none of the pod's
    extended resources (those some node or pool offers: an unknown name is gpu-resource-unknown's)."""
    wanted = [name for name in pod.requests if is_extended(name) and name in inventory.offered_resources]
    if not wanted or any(all(g.representative.allocatable.get(n, 0) > 0 for n in wanted) for g in groups):
        return
    matched = sum(len(group) for group in groups)
    lacking, offered = _lacking(groups, wanted, "which does not offer" if matched == 1 else "none of which offers")
    yield (
        requirement.path,
        f"the required node affinity/selector matches {_nodes(matched)}, {lacking}, "
        f"and no node that its {_pools(len(inventory.pools))} can add",
        _pooled_severity(inventory),
        not inventory.pools_whole,
        (
            *offered,
            f"'{requirement.description}' excludes {excluded} of {len(inventory.nodes)} nodes",
            pool_label_reasons(pod, inventory),
            _pending(pod, inventory),
            *_not_whole(inventory),
        ),
    )


def _lacking(groups: list[NodeGroup], wanted: list[str], none_offers: str) -> tuple[str, tuple[str, ...]]:
    """What the matched nodes lack of the extended resources the pod asks, after ``none_offers`` ("none of
    them offers", "which does not offer"), and what they do offer as a note. kube-scheduler's NodeResourcesFit
    fails a node once per resource (`Insufficient <resource>`), so nodes that offer the GPUs but not the EFA
    adapters are said to lack the adapters, never the GPUs:
    - every node lacks every resource: "none of them offers A" ("A or B");
    - every node lacks the same ones: "none of them offers B", noted "those nodes offer A";
    - else: "none of them offers all of A and B", noted "3 nodes lack B, one node lacks A"."""
    lacks: Counter[tuple[str, ...]] = Counter()
    for group in groups:
        lacks[tuple(n for n in wanted if group.representative.allocatable.get(n, 0) <= 0)] += len(group)
    if len(lacks) > 1:
        each = ", ".join(
            f"{_nodes(count)} {'lacks' if count == 1 else 'lack'} {_and(gap)}" for gap, count in lacks.most_common()
        )
        return f"{none_offers} all of {_and(wanted)}", (each,)
    ((missing, count),) = lacks.items()
    offered = [n for n in wanted if n not in missing]
    those = "that node offers" if count == 1 else "those nodes offer"
    notes = (f"{those} {_and(offered)}",) if offered else ()
    return f"{none_offers} {_and(missing, 'or')}", (*notes, *_mig_instead(groups, missing, count))


def _mig_instead(groups: list[NodeGroup], missing: tuple[str, ...], count: int) -> tuple[str, ...]:
    """Why nodes without nvidia.com/gpu still hold GPUs: under the mixed MIG strategy the device plugin advertises a
    GPU in MIG mode only as its slices, one resource per profile (the pod asks for the wrong name, not the node)."""
    if NVIDIA_GPU not in missing:
        return ()
    slices = sorted(
        {
            n
            for g in groups
            for n, amount in g.representative.allocatable.items()
            if n.startswith(MIG_PREFIX) and amount > 0
        }
    )
    if not slices:
        return ()
    those = "that node advertises" if count == 1 else "those nodes advertise"
    return (
        f"{those} MIG devices instead ({_and(slices)}): under the mixed MIG strategy a GPU in MIG mode is offered "
        f"only as {MIG_PREFIX}<profile>, never as {NVIDIA_GPU}; request one of them, or use the single strategy",
    )


def _and(names: tuple[str, ...] | list[str], conjunction: str = "and") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


_UNPROVEN = {
    Severity.INFO: "the pod's nodes may come from a GPU pool at zero nodes, which the inventory does not describe "
    "(add the node pools to it)",
    Severity.WARNING: "some nodes come from autoscaled or managed pools, and the inventory does not describe the "
    "pools: one at zero nodes may carry these labels (add the node pools to it)",
}


def _unproven_severity(pod: PodRequirements, inventory: Resolver) -> Severity:
    """An error only when the inventory holds every node the cluster can have. Nodes from autoscaled
    pools, or a GPU pod on an inventory without any GPU node, leave room for a pool at zero nodes
    whose nodes carry the labels: info when gpu-resource-unknown already says so, else a warning."""
    if uses_unpublished(pod, inventory):
        return Severity.INFO
    return Severity.ERROR if inventory.node_labels_proven else Severity.WARNING


def _pooled_severity(inventory: Resolver) -> Severity:
    """An error only when the pools read are all the node groups there are."""
    return Severity.ERROR if inventory.pools_whole else Severity.WARNING


def _not_whole(inventory: Resolver) -> tuple[str, ...]:
    """Why the pools read may not be all of them (nothing when they are)."""
    return (inventory.pools_gap,) if inventory.pools_gap else ()


def _none_of(nodes: int) -> str:
    """No nodes known (node pools only, from the linted files): say nothing of nodes, not "none of the 0"."""
    return f"none of the {nodes} nodes and " if nodes else ""


def _pools(count: int) -> str:
    return f"{count} node pool{'' if count == 1 else 's'}"


def uses_unpublished(pod: PodRequirements, inventory: Resolver) -> bool:
    """The pod asks for an extended resource that no node publishes while no node publishes any."""
    return not inventory.extended_resources_proven and any(is_extended(name) for name in pod.requests)


def _pending(pod: PodRequirements, inventory: Resolver) -> str:
    """The consequence, as the scheduler words it (gpu-unschedulable leaves this pod to this rule)."""
    return f"the pod stays Pending: {inventory.model.evaluate(pod, now=False).summary()}"


def _replicas(
    pods: int | None, pod: PodRequirements, inventory: Resolver, allowed: int, requirement: Requirement
) -> Iterator[Verdict]:
    counts = selection_limits_replicas(pod, pods, inventory)
    if counts is not None:
        fit_here, fit_anywhere = counts
        yield (
            requirement.path,
            f"the workload needs {pods} pods, but the {_nodes(allowed)} its required node affinity/selector "
            f"allows hold only {fit_here} of them on the empty cluster",
            Severity.WARNING,
            False,
            (f"{fit_anywhere} would fit without '{requirement.description}'",),
        )


def _nodes(count: int) -> str:
    return "one node" if count == 1 else f"{count} nodes"
