"""Kueue's webhooks: the RayJobs and RayClusters, JobSets and LeaderWorkerSets it manages, and ClusterQueues.

Kueue (kubernetes-sigs/kueue v0.19.2): ``pkg/controller/jobs/rayjob/rayjob_webhook.go`` validateCreate,
``pkg/controller/jobs/raycluster/common.go`` ValidateCreate (a RayJob's cluster) and
``raycluster_webhook.go`` validateCreate: a RayJob or RayCluster Kueue manages (it carries the
queue-name label) must not autoscale unless it is an elastic job (annotation
``kueue.x-k8s.io/elastic-job: "true"``), has at most ``jobframework.MaxPodSets`` pod sets (18 in
v0.19; earlier releases allowed fewer, so more than 18 is refused by every one), names no worker group
``head``; a RayJob must delete its cluster after finishing, and must not both give a cluster spec and
select an existing cluster. The field errors are k8s.io/apimachinery's (``field.Invalid`` ...).
On a JobSet or LeaderWorkerSet it manages, its pod set groups (``kueue.x-k8s.io/podset-group-name``):
gpulint/kube/queueing/podset_groups.py.

Kueue's ClusterQueue: ``pkg/webhooks/clusterqueue_webhook.go`` validateFlavorQuotas (since v0.8.0): each
flavor's resources[i] must be coveredResources[i] ("must match the name in coveredResources"), asked only
once the CRD's own rule passed (``apis/kueue/v1beta1|v1beta2/clusterqueue_types.go`` ResourceGroup, since
v0.10.0, the API server's: cluster_queue_schema_errors, reported by api-rejected); read at kueue ff69552e
(v0.20.0-devel).

Kueue's ClusterQueue with no cohort and a ``borrowingLimit``: the CRD's rule (``clusterqueue_types.go``, v1beta1
``cohort``, v1beta2 ``cohortName``), reported by api-rejected with the resource-group rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube import releases
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.releases import image_tags, release_of
from gpulint.kube.validation.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    TOO_MANY,
    FieldError,
    too_many,
)

GROUP = "kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ELASTIC_JOB = "kueue.x-k8s.io/elastic-job"
MAX_POD_SETS = 18  # jobframework.MaxPodSets in v0.19 (8, then 10, before)
# The worker groups a RayJob's or RayCluster's webhook allows, per release: (the first release, the limit as the
# field error words it, whether the head group counts). kubernetes-sigs/kueue v0.9.0-v0.17.8 rayjob_webhook.go and
# raycluster_webhook.go: more than 7 worker groups, TooMany(workerGroupSpecs, len, 7) (the Workload's 8 pod sets);
# v0.18.0-v0.18.6: jobframework.MaxPodSets = 10 (#11388), more than MaxPodSets-1; v0.19.0 on: MaxPodSets = 18
# (#12819), ExpectedPodSetsCount (the workers and the head) over MaxPodSets.
POD_SET_LIMITS = (((0, 0), 7, False), ((0, 18), 9, False), ((0, 19), MAX_POD_SETS, True))
# The controller's image, tagged with the release (config/components/manager, charts/kueue values.yaml
# controllerManager.manager.image: registry.k8s.io/kueue/kueue, or the staging registry's); the chart ``kueue``
# (oci://registry.k8s.io/kueue/charts/kueue) is versioned as the release from v0.13 ("0.13.4"; 0.1.0 before).
CONTROLLER_IMAGE = "/kueue/kueue"
CHART = "kueue"
_CHART_IMAGE_TAG = ("controllerManager", "manager", "image", "tag")
HEAD_GROUP = "head"


# The CRD's rule on ClusterQueueSpec (apis/kueue/v1beta1 and v1beta2 clusterqueue_types.go): a ClusterQueue in no
# cohort borrows from no one, so it may set no borrowingLimit. The cohort field per version.
_COHORT_FIELD = {"v1beta1": "cohort", "v1beta2": "cohortName"}
BORROWING_WITHOUT_COHORT = "borrowingLimit must be nil when cohort is empty"


def cluster_queue_schema_errors(data: dict[str, Any]) -> list[FieldError]:
    """The CRD's rules on a ClusterQueue, which the API server enforces (api-rejected reports them): each flavor
    gives as many quotas as the group covers resources; a queue with no cohort sets no borrowingLimit."""
    errors = _borrowing_without_cohort(data)
    for i, group in enumerate(sequence(dig(data, "spec", "resourceGroups"))):
        covered = sequence(mapping(group).get("coveredResources"))
        flavors = sequence(mapping(group).get("flavors"))
        if any(len(sequence(mapping(flavor).get("resources"))) != len(covered) for flavor in flavors):
            errors.append(
                FieldError(
                    ("spec", "resourceGroups", i),
                    INVALID,
                    "object",
                    "flavors must have the same number of resources as the coveredResources",
                )
            )
    return errors


def _borrowing_without_cohort(data: dict[str, Any]) -> list[FieldError]:
    """``!has(self.cohort) ... all(r, !has(r.borrowingLimit))``: the field absent, not empty (``has`` is true for
    ""), as the CEL rule reads it. Reported at the first borrowingLimit, the message naming ``spec`` as the API
    server does for a rule on the spec."""
    cohort = _COHORT_FIELD.get(text(data.get("apiVersion")).rpartition("/")[2])
    spec = data.get("spec")
    if cohort is None or not isinstance(spec, dict) or cohort in spec:
        return []
    for i, group in enumerate(sequence(spec.get("resourceGroups"))):
        for j, flavor in enumerate(sequence(mapping(group).get("flavors"))):
            for k, quota in enumerate(sequence(mapping(flavor).get("resources"))):
                if "borrowingLimit" in mapping(quota):
                    at: Path = ("spec", "resourceGroups", i, "flavors", j, "resources", k, "borrowingLimit")
                    return [FieldError(at, INVALID, "object", BORROWING_WITHOUT_COHORT, shown=("spec",))]
    return []


def _kueue_cluster_queue(data: dict[str, Any]) -> Iterator[FieldError]:
    """validateResourceGroups: each flavor's quotas in the order of the covered resources; a borrowing or lending
    limit only in a cohort (``hasParent``: the cohort's name not empty), a lending limit at most the nominal quota;
    a covered resource or a flavor named once across the groups. The CRD's rules come first (the API server
    validates before any validating webhook): when one refuses, the webhook is never asked."""
    if cluster_queue_schema_errors(data):
        return
    spec = mapping(data.get("spec"))
    cohort = spec.get(_COHORT_FIELD.get(text(data.get("apiVersion")).rpartition("/")[2], "cohort"))
    in_cohort = isinstance(cohort, str) and cohort != ""
    resources: set[str] = set()
    flavors: set[str] = set()
    for i, group in enumerate(sequence(spec.get("resourceGroups"))):
        covered = [text(name) for name in sequence(mapping(group).get("coveredResources"))]
        for j, resource in enumerate(covered):
            if resource in resources:
                yield FieldError(("spec", "resourceGroups", i, "coveredResources", j), DUPLICATE, resource)
            resources.add(resource)
        for j, flavor in enumerate(sequence(mapping(group).get("flavors"))):
            at: Path = ("spec", "resourceGroups", i, "flavors", j)
            for k, quota in enumerate(map(mapping, sequence(mapping(flavor).get("resources")))):
                yield from _flavor_quota(quota, covered[k], (*at, "resources", k), in_cohort)
            name = text(mapping(flavor).get("name"))
            if name in flavors:
                yield FieldError((*at, "name"), DUPLICATE, name)
            flavors.add(name)


LIMIT_WITHOUT_COHORT = "must be nil when cohort is empty"


def _quantity_text(value: Any) -> str:
    try:
        return str(quantity_from_yaml(value))
    except QuantityError:
        return str(value)


def _flavor_quota(quota: dict[str, Any], covered: str, at: Path, in_cohort: bool) -> Iterator[FieldError]:
    name = text(quota.get("name"))
    if name and name != covered:
        yield FieldError((*at, "name"), INVALID, name, "must match the name in coveredResources")
    for limit in ("borrowingLimit", "lendingLimit"):
        if limit in quota and not in_cohort:
            yield FieldError((*at, limit), INVALID, _quantity_text(quota[limit]), LIMIT_WITHOUT_COHORT)
    try:
        lending, nominal = quantity_from_yaml(quota.get("lendingLimit")), quantity_from_yaml(quota.get("nominalQuota"))
    except QuantityError:
        return  # either absent or not a quantity (the schema's)
    if lending.value > nominal.value:
        yield FieldError((*at, "lendingLimit"), INVALID, str(lending), "must be less than or equal to the nominalQuota")


def _kueue_rayjob(data: dict[str, Any], elastic: bool, releases: tuple[str, ...]) -> Iterator[FieldError]:
    spec = mapping(data.get("spec"))
    selector = mapping(spec.get("clusterSelector"))
    cluster = spec.get("rayClusterSpec")
    if selector and isinstance(cluster, dict):
        yield FieldError(
            ("spec", "clusterSelector"), INVALID, selector, "a kueue managed job should not use an existing cluster"
        )
        return
    if selector:
        return  # a RayJob on an existing cluster is not Kueue's to admit
    if not isinstance(cluster, dict):
        yield FieldError(
            ("spec",),
            REQUIRED,
            detail="rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector",
            shown=("spec", "rayClusterSpec"),
        )
        return
    if spec.get("shutdownAfterJobFinishes") is not True:
        where: Path = ("spec", "shutdownAfterJobFinishes") if "shutdownAfterJobFinishes" in spec else ("spec",)
        yield FieldError(
            where,
            INVALID,
            False,
            "a kueue managed job should delete the cluster after finishing",
            shown=("spec", "shutdownAfterJobFinishes"),
        )
    yield from _kueue_cluster(cluster, ("spec", "rayClusterSpec"), elastic, False, releases)


def worker_group_limit(releases: tuple[str, ...]) -> tuple[tuple[int, int], int, bool]:
    """The pod-set limit (POD_SET_LIMITS) of the newest of the Kueue releases found; the newest release's when one
    is not known (or none is found), the limit every release enforces."""
    known = [release_of(release) for release in releases]
    newest = max((found for found in known if found is not None), default=None)
    if not known or None in known or newest is None:
        return POD_SET_LIMITS[-1]
    return [limit for limit in POD_SET_LIMITS if limit[0] <= newest][-1]


def controller_releases(deployment: dict[str, Any]) -> list[str]:
    """The tags of the Kueue controller images a Deployment runs (none for another Deployment)."""
    return image_tags(deployment, CONTROLLER_IMAGE)


def chart_release(version: str, values: dict[str, Any]) -> str:
    """The release a kueue chart runs: the image tag its values give, else the chart's version."""
    return releases.chart_release(version, values, _CHART_IMAGE_TAG)


def _kueue_cluster(
    spec_or_data: dict[str, Any], path: Path, elastic: bool, is_cluster: bool, releases: tuple[str, ...] = ()
) -> Iterator[FieldError]:
    spec = mapping(spec_or_data.get("spec")) if is_cluster else spec_or_data
    if spec.get("enableInTreeAutoscaling") is True and not elastic:
        detail = (
            "a kueue-managed RayCluster can use autoscaling only as an elastic job: enable the "
            f'ElasticJobsViaWorkloadSlices feature gate and set the "{ELASTIC_JOB}": "true" annotation'
            if is_cluster
            else "a kueue managed job should only use autoscaling when workload slicing is enabled"
        )
        yield FieldError((*path, "enableInTreeAutoscaling"), INVALID, True, detail)
    groups = sequence(spec.get("workerGroupSpecs"))
    _since, limit, with_head = worker_group_limit(releases)
    counted = len(groups) + 1 if with_head else len(groups)
    if counted > limit:
        yield too_many((*path, "workerGroupSpecs"), counted, limit)
    for index, group in enumerate(groups):
        if text(mapping(group).get("groupName")) == HEAD_GROUP:
            at = (*path, "workerGroupSpecs", index, "groupName")
            yield FieldError(at, FORBIDDEN, detail=f'"{HEAD_GROUP}" is reserved for the head group')


def ray_refusals(submitted: Submitted) -> list[Refusal]:
    """A RayJob or RayCluster Kueue manages: the label (manageJobsWithoutQueueName aside). A RayService is not
    Kueue's."""
    data, kind = submitted.data, submitted.kind
    if kind == "RayService" or not text(dig(data, "metadata", "labels", QUEUE_LABEL)):
        return []
    elastic = text(dig(data, "metadata", "annotations", ELASTIC_JOB)) == "true"
    releases = tuple(release for release, _ in submitted.kueue_releases)
    if kind == "RayJob":
        errors = _kueue_rayjob(data, elastic, releases)
    else:
        errors = _kueue_cluster(data, ("spec",), elastic, True, releases)
    since, limit, _head = worker_group_limit(releases)
    release = ""
    if since != POD_SET_LIMITS[-1][0]:
        line = "before v0.18" if since < POD_SET_LIMITS[1][0] else f"v{since[0]}.{since[1]}"
        release = (
            f"Kueue installed: {', '.join(f'{r} ({where})' for r, where in submitted.kueue_releases)}; Kueue {line} allows at most {limit} worker groups "
            f"(v0.19 and later {MAX_POD_SETS - 1}: jobframework.MaxPodSets)"
        )
    return [
        Refusal(error.path, "Kueue", error.message(), error, release=release if error.kind == TOO_MANY else "")
        for error in errors
    ]


def podset_group_refusals(submitted: Submitted) -> list[Refusal]:
    """Kueue's webhook on the pod set groups of a JobSet or LeaderWorkerSet it manages (the queue-name label)."""
    data = submitted.data
    if not text(dig(data, "metadata", "labels", QUEUE_LABEL)):
        return []
    from gpulint.kube.queueing.podset_groups import group_errors

    return [Refusal(error.path, "Kueue", error.message(), error) for error in group_errors(data)]


def cluster_queue_refusals(submitted: Submitted) -> list[Refusal]:
    return [Refusal(error.path, "Kueue", error.message(), error) for error in _kueue_cluster_queue(submitted.data)]
