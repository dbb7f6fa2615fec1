"""Pod topology spread as the scheduler bounds a workload's own pods (PodTopologySpread's Filter,
kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, v1.33).

A hard constraint (``whenUnsatisfiable: DoNotSchedule``) admits a pod to a domain only while that domain's
count of matching pods stays within ``maxSkew`` of the least-loaded eligible domain. Eligible domains are
the topology values of the nodes that pass the pod's node affinity and selector (``nodeAffinityPolicy``
Honor, the default) and, with ``nodeTaintsPolicy: Honor``, tolerate their taints (the default Ignore
counts tainted nodes too). A domain where no node can hold the pod keeps 0 of them forever, so each
other domain holds at most ``maxSkew`` of the workload's pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.refs import Path
from gpulint.kube.scheduler import NodeInfo, PodRequirements
from gpulint.kube.selectors import selector_matches

HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True)
class SpreadConstraint:
    """A hard constraint whose selector counts the workload's own pods."""

    path: Path  # from the pod spec to the constraint
    key: str
    max_skew: int
    honor_affinity: bool  # nodeAffinityPolicy (default Honor)
    honor_taints: bool  # nodeTaintsPolicy (default Ignore)


def own_hard_constraints(spec: dict[str, Any], labels: dict[str, Any]) -> Iterator[SpreadConstraint]:
    """The pod's DoNotSchedule constraints whose labelSelector selects the pod's own labels (a selector
    counting other pods, or none, counts what the linted files do not say). ``minDomains`` is left out: it
    changes the least count the skew is measured from."""
    for index, raw in enumerate(sequence(spec.get("topologySpreadConstraints"))):
        constraint = mapping(raw)
        key, skew, selector = constraint.get("topologyKey"), constraint.get("maxSkew"), constraint.get("labelSelector")
        if constraint.get("whenUnsatisfiable") != "DoNotSchedule" or "minDomains" in constraint:
            continue
        if not isinstance(key, str) or not key or not isinstance(skew, int) or isinstance(skew, bool) or skew < 1:
            continue
        if not isinstance(selector, dict) or not selector_matches(selector, labels):
            continue
        yield SpreadConstraint(
            ("topologySpreadConstraints", index),
            key,
            skew,
            constraint.get("nodeAffinityPolicy", HONOR) != IGNORE,
            constraint.get("nodeTaintsPolicy", IGNORE) == HONOR,
        )


@dataclass(frozen=True)
class SpreadBound:
    constraint: SpreadConstraint
    domains: tuple[str, ...]  # every eligible domain, sorted
    holding: tuple[str, ...]  # the domains with a node that can hold the pod, sorted

    @property
    def most(self) -> int:
        """How many of the workload's pods the constraint lets in at once."""
        return len(self.holding) * self.constraint.max_skew

    @property
    def empty(self) -> tuple[str, ...]:
        return tuple(domain for domain in self.domains if domain not in self.holding)


def spread_bound(
    constraint: SpreadConstraint,
    pod: PodRequirements,
    nodes: Iterable[NodeInfo],
    selected: Iterable[NodeInfo],
    holding: Iterable[NodeInfo],
) -> SpreadBound | None:
    """The bound ``constraint`` puts on the workload, or None when every eligible domain can hold its pods.
    ``selected``: the nodes passing the pod's node affinity and selector; ``holding``: those where the pod
    passes every filter on the empty cluster."""
    counted = selected if constraint.honor_affinity else nodes
    domains = {
        node.labels[constraint.key]
        for node in counted
        if constraint.key in node.labels
        and (not constraint.honor_taints or all(pod.tolerates(t) for t in node.taints if _filters(t.effect)))
    }
    holds = {node.labels[constraint.key] for node in holding if constraint.key in node.labels} & domains
    if not holds or holds == domains:
        return None  # nowhere to run at all is another finding's; every domain holding pods bounds nothing
    return SpreadBound(constraint, tuple(sorted(domains)), tuple(sorted(holds)))


def _filters(effect: str) -> bool:
    """The taints a scheduler filter honours: NoSchedule and NoExecute (PreferNoSchedule only scores)."""
    return effect in ("NoSchedule", "NoExecute")
