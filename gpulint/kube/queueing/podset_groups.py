"""What Kueue's webhook refuses of pod set groups (``kueue.x-k8s.io/podset-group-name``) on a JobSet or
LeaderWorkerSet it manages.

From kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobframework/tas_validation.go``: per pod template,
ValidateTASPodSetRequest (a group name that is a number; a group next to a slice size or slice topology;
a group without a required or preferred topology level), then ValidatePodSetGroupingTopology over the
pod sets that joined a group (exactly 2 per group, at least one of 1 pod, the same topology request).
The JobSet and LeaderWorkerSet webhooks (``pkg/controller/jobs/{jobset,leaderworkerset}/*_webhook.go``)
run both on create when TopologyAwareScheduling is on (the default).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping
from gpulint.kube.queueing.workload import (
    PODSET_GROUP,
    PREFERRED_TOPOLOGY,
    REQUIRED_TOPOLOGY,
    SLICE_TOPOLOGY,
    pod_sets,
)
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import FORBIDDEN, INVALID, OMIT, FieldError
from gpulint.kube.workloads import ObjectFacts, template_metadata

SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
_UINT = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class GroupedPodSet:
    name: str
    count: int
    annotations: dict[str, Any]
    path: Path  # the template's annotations

    @property
    def request(self) -> tuple[str, str] | None:
        """PodSetTopologyRequest's Required or Preferred (tas.go Build: required first)."""
        for key in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY):
            if key in self.annotations:
                return (key, str(self.annotations[key]))
        return None


def _grouped(data: dict[str, Any]) -> list[GroupedPodSet]:
    found = []
    for pod_set in pod_sets(ObjectFacts.afresh(data)):  # a JobSet or LeaderWorkerSet Kueue manages: rare
        annotations = mapping(template_metadata(data, pod_set.site).get("annotations"))
        path = (*pod_set.site.template_path, "metadata", "annotations")
        found.append(GroupedPodSet(pod_set.name, pod_set.count, annotations, path))
    return found


def group_errors(data: dict[str, Any]) -> Iterator[FieldError]:
    pod_sets_found = _grouped(data)
    for pod_set in pod_sets_found:
        yield from _annotation_errors(pod_set)
    yield from _grouping_errors(pod_sets_found)


def _annotation_errors(pod_set: GroupedPodSet) -> Iterator[FieldError]:
    """ValidateTASPodSetRequest, the part about the group annotation."""
    if PODSET_GROUP not in pod_set.annotations:
        return
    name = pod_set.annotations[PODSET_GROUP]
    at = (*pod_set.path, PODSET_GROUP)
    if isinstance(name, str) and _UINT.fullmatch(name) and int(name) < 2**64:
        yield FieldError(at, INVALID, name, "must not be a number")
    for other in (SLICE_SIZE, SLICE_TOPOLOGY):
        if other in pod_set.annotations:
            yield FieldError(at, FORBIDDEN, detail=f"may not be set when '{other}' is specified")
    if pod_set.request is None:
        yield FieldError(
            at,
            FORBIDDEN,
            detail=f"may not be set when neither '{PREFERRED_TOPOLOGY}' nor '{REQUIRED_TOPOLOGY}' is specified",
        )


def _shown(path: Path) -> str:
    return FieldError(path, INVALID).field


def _grouping_errors(pod_sets_found: list[GroupedPodSet]) -> Iterator[FieldError]:
    """ValidatePodSetGroupingTopology over the pod sets whose topology request names a group."""
    groups: dict[str, list[GroupedPodSet]] = {}
    for pod_set in pod_sets_found:
        name = pod_set.annotations.get(PODSET_GROUP)
        if isinstance(name, str) and pod_set.request is not None:
            groups.setdefault(name, []).append(pod_set)
    for name, members in groups.items():
        if len(members) != 2:
            for member in members:
                yield FieldError(
                    (*member.path, PODSET_GROUP),
                    INVALID,
                    name,
                    f"can only define groups of exactly 2 pod sets, got: {len(members)} pod set(s)",
                )
            continue
        first, second = members
        if first.count != 1 and second.count != 1:
            words = (
                "can only define groups where at least one pod set has only 1 replica, got: "
                f"{first.count} replica(s) and {second.count} replica(s) in the group"
            )
            for member in members:
                yield FieldError((*member.path, PODSET_GROUP), INVALID, name, words)
        if first.request != second.request:
            for member, other in ((first, second), (second, first)):
                yield FieldError(
                    member.path,
                    INVALID,
                    OMIT,
                    f"must specify '{REQUIRED_TOPOLOGY}' or '{PREFERRED_TOPOLOGY}' topology consistent with "
                    f"'{_shown(other.path)}' in group '{name}'",
                )
