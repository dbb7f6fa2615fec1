"""Where the DaemonSet controller puts a daemon pod (kubernetes/kubernetes pkg/controller/daemon).

``NodeShouldRunDaemonPod`` (daemon_controller.go) runs three predicates on the pod the
controller would make for a node (``NewPod``: the template plus the tolerations of
``util.AddOrUpdateDaemonPodTolerations``): ``spec.nodeName`` must name the node, the
required node affinity and nodeSelector must match it, and no NoSchedule/NoExecute taint may
go untolerated. Resources and ``spec.unschedulable`` do not count there (the daemon pod
tolerates ``node.kubernetes.io/unschedulable``); the scheduler places the pod afterwards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulint.kube.scheduler import NodeInfo, PodRequirements, Requirement, Taint

if TYPE_CHECKING:  # the pool model is imported where a run meets a node pool
    from gpulint.kube.pools.model import Domain

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


def untolerated_taint(pod: PodRequirements, node: NodeInfo) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint for NoSchedule and NoExecute, in the node's order."""
    return first_untolerated(pod, node.taints)


def first_untolerated(pod: PodRequirements, taints: Iterable[Taint]) -> Taint | None:
    for taint in taints:
        if taint.effect in SCHEDULING_EFFECTS and not pod.tolerates(taint):
            return taint
    return None


def may_select(pod: PodRequirements, labels: Mapping[str, Domain]) -> bool:
    """The DaemonSet's node selection can match a node with these label domains (a pool's new nodes). A label
    the pool does not set may come later (NFD and GPU feature discovery label a node once it runs): no
    contradiction. The node's name is not known in advance."""
    if not all(_may_hold(requirement, labels) for requirement in pod.node_selector):
        return False
    if pod.affinity_terms is None:
        return True
    return any(all(_may_hold(requirement, labels) for requirement in term) for term in pod.affinity_terms if term)


def _may_hold(requirement: Requirement, labels: Mapping[str, Domain]) -> bool:
    domain = labels.get(requirement.key)
    if requirement.field or domain is None:
        return True
    if requirement.operator == "DoesNotExist":
        return domain.values is not None and not (domain.values - domain.excluded)
    narrowed = domain.narrow(requirement.operator, requirement.values)
    return narrowed is not None and not narrowed.empty


def selects(pod: PodRequirements, node: NodeInfo) -> bool:
    """fitsNodeName and fitsNodeAffinity: the node is one the DaemonSet's node selection names."""
    if pod.node_name and pod.node_name != node.name:
        return False
    return pod.matches_affinity(node)


@dataclass
class Coverage:
    """How a DaemonSet covers a set of nodes it is expected to run on."""

    target: list[NodeInfo]
    runs: list[NodeInfo] = field(default_factory=list)
    outside_selection: list[NodeInfo] = field(default_factory=list)
    blocked: dict[Taint, list[NodeInfo]] = field(default_factory=dict)  # first untolerated taint -> nodes

    def blocked_nodes(self) -> list[NodeInfo]:
        return [node for nodes in self.blocked.values() for node in nodes]

    def taints_by_count(self) -> list[tuple[Taint, int]]:
        counts = Counter({taint: len(nodes) for taint, nodes in self.blocked.items()})
        return sorted(counts.items(), key=lambda item: (-item[1], item[0].key, item[0].value, item[0].effect))


def coverage(pod: PodRequirements, nodes: Iterable[NodeInfo]) -> Coverage:
    result = Coverage(list(nodes))
    for node in result.target:
        if not selects(pod, node):
            result.outside_selection.append(node)
            continue
        taint = untolerated_taint(pod, node)
        if taint is None:
            result.runs.append(node)
        else:
            result.blocked.setdefault(taint, []).append(node)
    return result
