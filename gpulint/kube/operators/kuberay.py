"""KubeRay's controller validation of a RayCluster, RayJob or RayService (no webhook).

KubeRay (ray-project/kuberay ray-operator, controllers/ray/utils/validation.go, read at v1.7.0): before each
reconcile the controller validates the object's metadata (ValidateRayClusterMetadata, ValidateRayJobMetadata,
ValidateRayServiceMetadata, v1.4.0 on: the name a DNS-1035 label of at most 53 characters, 47 for a RayJob or
RayService whose cluster adds a 6-character suffix), then its cluster spec (ValidateRayClusterSpec, on a
RayCluster, a RayJob's rayClusterSpec and a RayService's rayClusterConfig): the head group's, then each worker
group's, resources given both in rayStartParams and in `resources` (v1.5.0 on) or labels in rayStartParams, and a
worker group's replica bounds negative or crossed (v1.6.0 on; before, maxReplicas workers ran). It stops at the
first error, records the event Invalid<Kind>Metadata or Invalid<Kind>Spec and creates nothing. The CRD defaults
minReplicas to 0 and maxReplicas to 2147483647.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gpulint.kube import releases
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.names import (
    dns1035_label,
)
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.refs import Path
from gpulint.kube.releases import all_before, image_tags

GROUP = "ray.io"
KUBERAY_CLUSTER_SPECS: dict[str, Path] = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
}
KUBERAY_NAME_MAX = {"RayCluster": 53, "RayJob": 47, "RayService": 47}  # MaxRayClusterNameLength (- 6)
_KUBERAY_START_RESOURCES = ("num-cpus", "num-gpus", "memory", "resources")
# The release that began each check (utils/validation.go, read at each tag): ValidateRayClusterMetadata and a
# RayJob's TTL without shutdownAfterJobFinishes v1.4.0; the resources in both places and validateRayGroupLabels
# v1.5.0; the replica bounds v1.6.0. A check every release found predates is skipped, and the controller goes on to
# the next, as that release does.
NAME_CHECK, START_PARAMS_CHECK, REPLICAS_CHECK = (1, 4), (1, 5), (1, 6)
TTL_CHECK = NAME_CHECK
# The operator's image, tagged with the release (helm-chart/kuberay-operator values.yaml image.repository
# quay.io/kuberay/operator, image.tag the release); the chart kuberay-operator is versioned as the release ("1.4.0").
OPERATOR_IMAGE = "kuberay/operator"
CHART = "kuberay-operator"


def _kuberay_cluster(data: dict[str, Any], kind: str, releases: tuple[str, ...]) -> Iterator[Refusal]:
    """The first error KubeRay's controller finds in the metadata, then in the cluster spec."""
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name and _checks(releases, NAME_CHECK):
        words = ""
        if len(name) > KUBERAY_NAME_MAX[kind]:
            words = f"{kind} name should be no more than {KUBERAY_NAME_MAX[kind]} characters"
        elif problems := dns1035_label(name):
            words = f"{kind} name should be a valid DNS1035 label: [{' '.join(problems)}]"
        if words:
            prefix = "" if kind == "RayCluster" else f"The {kind} metadata is invalid: "
            done = f"KubeRay validates the name before it reconciles (event Invalid{kind}Metadata) and creates nothing"
            yield Refusal(("metadata", "name"), "KubeRay", prefix + words, controller=done)
            return
    done = f"KubeRay validates the spec before it reconciles (event Invalid{kind}Spec) and creates no pods"
    if kind == "RayJob" and (problem := _rayjob_before_cluster(mapping(data.get("spec")), releases)) is not None:
        yield replace(problem, controller=done)
        return
    path = KUBERAY_CLUSTER_SPECS[kind]
    if kind == "RayJob" and not mapping(dig(data, *path)):
        return  # a RayJob on an existing cluster (clusterSelector) makes no cluster of its own
    head = mapping(dig(data, *path, "headGroupSpec"))
    groups = [("Head", (*path, "headGroupSpec"), head)] + [
        (text(mapping(raw).get("groupName")), (*path, "workerGroupSpecs", index), mapping(raw))
        for index, raw in enumerate(sequence(dig(data, *path, "workerGroupSpecs")))
    ]
    for number, (group_name, at, group) in enumerate(groups):
        problem = _kuberay_group(group_name, at, group, number > 0, releases)
        if problem is not None:
            yield replace(problem, controller=done)
            return
    if kind == "RayJob" and (problem := _rayjob_after_cluster(mapping(data.get("spec")))) is not None:
        yield replace(problem, controller=done)


# ValidateRayJobSpec (utils/validation.go, v1.7.0), the checks before the cluster spec, in its order (its
# "one of RayClusterSpec or ClusterSelector must be set" is left out: a RayJob written without either is more often
# a fragment another tool completes than one submitted as is). The TTL check
# is v1.4.0's (#3653); before it a TTL without shutdownAfterJobFinishes was ignored.
_RAYJOB_INVALID = "The RayJob spec is invalid: "
TTL_WITHOUT_SHUTDOWN = "a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished"
TTL_IGNORED = (
    "releases before v1.4.0 ignore ttlSecondsAfterFinished without shutdownAfterJobFinishes: the RayCluster, and "
    "every GPU its pods hold, stays after the job ends"
)


def _rayjob_before_cluster(spec: dict[str, Any], releases: tuple[str, ...]) -> Refusal | None:
    shutdown = spec.get("shutdownAfterJobFinishes") is True
    suspend = spec.get("suspend") is True
    ttl = integer(spec.get("ttlSecondsAfterFinished"))
    selector = mapping(spec.get("clusterSelector"))
    if suspend and not shutdown:
        words = "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended"
        return Refusal(("spec", "suspend"), "KubeRay", _RAYJOB_INVALID + words)
    if ttl is not None and ttl < 0:
        words = "TTLSecondsAfterFinished must be a non-negative integer"
        return Refusal(("spec", "ttlSecondsAfterFinished"), "KubeRay", _RAYJOB_INVALID + words)
    if ttl is not None and ttl > 0 and not shutdown and _checks(releases, TTL_CHECK):
        words = _RAYJOB_INVALID + TTL_WITHOUT_SHUTDOWN
        return Refusal(("spec", "ttlSecondsAfterFinished"), "KubeRay", words, before=TTL_IGNORED)
    if suspend and selector:
        words = "the ClusterSelector mode doesn't support the suspend operation"
        return Refusal(("spec", "suspend"), "KubeRay", _RAYJOB_INVALID + words)
    return None


def _rayjob_after_cluster(spec: dict[str, Any]) -> Refusal | None:
    deadline, backoff = integer(spec.get("activeDeadlineSeconds")), integer(spec.get("backoffLimit"))
    if deadline is not None and deadline <= 0:
        words = "activeDeadlineSeconds must be a positive integer"
        return Refusal(("spec", "activeDeadlineSeconds"), "KubeRay", _RAYJOB_INVALID + words)
    if backoff is not None and backoff < 0:
        return Refusal(("spec", "backoffLimit"), "KubeRay", _RAYJOB_INVALID + "backoffLimit must be a positive integer")
    return None


def _checks(releases: tuple[str, ...], since: tuple[int, int]) -> bool:
    """Whether the KubeRay releases found run a check begun in ``since``: not when every one is older."""
    return all_before(releases, since) is not True


def _kuberay_group(
    name: str, at: Path, group: dict[str, Any], worker: bool, releases: tuple[str, ...]
) -> Refusal | None:
    """One group's first error, in ValidateRayClusterSpec's order."""
    if worker and _checks(releases, REPLICAS_CHECK):
        low, high = integer(group.get("minReplicas")), integer(group.get("maxReplicas"))
        for key, value in (("minReplicas", low), ("maxReplicas", high)):
            if value is not None and value < 0:
                return Refusal((*at, key), "KubeRay", f"worker group {name} has negative {key} {value}")
        if low is not None and high is not None and low > high:
            words = f"worker group {name} has minReplicas {low} greater than maxReplicas {high}"
            return Refusal((*at, "minReplicas"), "KubeRay", words)
    params = mapping(group.get("rayStartParams"))
    if not _checks(releases, START_PARAMS_CHECK):
        return None
    if any(text(params.get(key)) for key in _KUBERAY_START_RESOURCES) and mapping(group.get("resources")):
        words = f"resource fields should not be set in both rayStartParams and Resources for {name} group; please use only one"
        return Refusal((*at, "resources"), "KubeRay", words)
    if "labels" in params:
        words = (
            f"rayStartParams['labels'] is not supported for {name} group; please use the top-level Labels field instead"
        )
        return Refusal((*at, "rayStartParams", "labels"), "KubeRay", words)
    return None


# KubeRay's validating webhook (ray-operator/pkg/webhooks/v1/raycluster_webhook.go validateWorkerGroups, v1.1.0 on,
# opt-in: the chart installs it only when asked) refuses a RayCluster whose worker groups share a groupName,
# field.Invalid at the second one. The controller does not check it (utils/validation.go), and it selects a group's
# pods by the labels ray.io/cluster and ray.io/group (common/association.go RayClusterGroupPodsAssociationOptions),
# so groups of one name each count the other's pods as their own.
DUPLICATE_GROUP = "worker group names must be unique"
DUPLICATE_GROUP_WITHOUT_WEBHOOK = (
    "KubeRay's validating webhook is opt-in; where it is not installed the cluster is created, and its controller, "
    "which selects a worker group's pods by the ray.io/group label, counts the pods of both groups as each group's "
    "own: replicas are deleted and recreated across the two pod templates"
)


def _duplicate_groups(data: dict[str, Any], kind: str) -> Iterator[Refusal]:
    """The first worker group whose groupName an earlier one has (the webhook stops there); a RayCluster's only, the
    kind the webhook validates so."""
    if kind != "RayCluster":
        return
    path = KUBERAY_CLUSTER_SPECS[kind]
    seen: set[str] = set()
    for index, raw in enumerate(sequence(dig(data, *path, "workerGroupSpecs"))):
        name = text(mapping(raw).get("groupName"))
        if name in seen:
            at = (*path, "workerGroupSpecs", index, "groupName")
            words = f"{'.'.join(str(p) for p in path)}.workerGroupSpecs[{index}]: Invalid value: {DUPLICATE_GROUP}"
            yield Refusal(at, "KubeRay", words, optional=DUPLICATE_GROUP_WITHOUT_WEBHOOK)
            return
        seen.add(name)


def refusals(submitted: Submitted) -> list[Refusal]:
    """The first error KubeRay's controller finds (a RayJob's or RayCluster's Kueue refusals are kueue.py's), and the
    duplicate worker group its opt-in webhook refuses."""
    releases = tuple(release for release, _ in submitted.kuberay_releases)
    return [
        *_kuberay_cluster(submitted.data, submitted.kind, releases),
        *_duplicate_groups(submitted.data, submitted.kind),
    ]


def operator_releases(deployment: dict[str, Any]) -> list[str]:
    """The tags of the KubeRay operator images a Deployment runs (none for another Deployment)."""
    return image_tags(deployment, OPERATOR_IMAGE)


def chart_release(version: str, values: dict[str, Any]) -> str:
    """The release a kuberay-operator chart runs: the image tag its values give, else the chart's version."""
    return releases.chart_release(version, values, ("image", "tag"))
