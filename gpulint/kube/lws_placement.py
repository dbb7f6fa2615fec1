"""LeaderWorkerSet's exclusive placement: the pods of a group, or of a subgroup, in one domain of a topology key.

kubernetes-sigs/lws pkg/webhooks/pod_webhook.go (Default, SetExclusiveAffinities; v0.3.0 on): with the annotation
``leaderworkerset.sigs.k8s.io/exclusive-topology`` every pod of a group (the leader and its workers) gets a
required podAffinity, and a podAntiAffinity, on that topology key; with ``subgroup-exclusive-topology`` each
subgroup does. The leader always lands on subgroup 0 ("The leader pod always lands on SubGroup 0"), and
getSubGroupIndex puts the first workers there with it, unless ``subGroupPolicy.subGroupPolicyType`` is
``LeaderExcluded`` (the leader in no subgroup, api/leaderworkerset/v1 leaderworkerset_types.go). So the leader
template's nodes and the worker template's must share a value of the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, mapping, text
from gpulint.kube.refs import Path

GROUP = "leaderworkerset.x-k8s.io"
EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
LEADER_EXCLUDED = "LeaderExcluded"
TEMPLATE: Path = ("spec", "leaderWorkerTemplate")
WORKER_SPEC: Path = (*TEMPLATE, "workerTemplate", "spec")
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"  # the controller's labels on a group's, a subgroup's pods: hashes
SUBGROUP_KEY = "leaderworkerset.sigs.k8s.io/subgroup-key"


@dataclass(frozen=True)
class SharedDomain:
    """A topology key whose one value the leader and some workers of a group must share."""

    key: str
    annotation: Path  # where it is written
    name: str  # the annotation's name without its prefix
    who: str  # the pods that share it, in words
    pod_label: str  # the label the webhook's podAffinity selects them by (GROUP_KEY or SUBGROUP_KEY)


def shared_domains(data: dict[str, Any]) -> list[SharedDomain]:
    """The keys that tie the leader to workers (none when the LWS has no workers or no such annotation)."""
    template = mapping(dig(data, *TEMPLATE))
    size = template.get("size", 1)
    if not isinstance(size, int) or isinstance(size, bool) or size < 2:
        return []
    annotations = mapping(dig(data, "metadata", "annotations"))
    found = []
    key = text(annotations.get(EXCLUSIVE))
    if key:
        found.append(
            SharedDomain(
                key, ("metadata", "annotations", EXCLUSIVE), "exclusive-topology", "every pod of a group", GROUP_KEY
            )
        )
    policy = mapping(template.get("subGroupPolicy"))
    key = text(annotations.get(SUBGROUP_EXCLUSIVE))
    if key and policy.get("subGroupSize") is not None and policy.get("subGroupPolicyType") != LEADER_EXCLUDED:
        who = "the leader and the first workers (subgroup 0)"
        found.append(
            SharedDomain(
                key, ("metadata", "annotations", SUBGROUP_EXCLUSIVE), "subgroup-exclusive-topology", who, SUBGROUP_KEY
            )
        )
    return found


def leader_spec(data: dict[str, Any]) -> dict[str, Any] | None:
    """The leader template's pod spec; None when there is none (the leader is made from the worker template)."""
    spec = dig(data, *TEMPLATE, "leaderTemplate", "spec")
    return spec if isinstance(spec, dict) else None
