"""resource-quota-exceeded: the namespace's ResourceQuota refuses the pods a workload creates, or a
quota is written in a form the API server never charges."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from gpulint.kube.quantity import format_amount
from gpulint.kube.queueing.workload import is_distributed
from gpulint.kube.workloads import api_group
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import FIRST_LINE_MAX, Diagnostic, Path, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.queues import quota_charges
from gpulint.lint.world.resolver import Resolver

if TYPE_CHECKING:  # kube/queueing/namespace is imported when a namespace has a ResourceQuota
    from gpulint.kube.queueing.namespace import Quota

SPEC = RuleSpec("resource-quota-exceeded", Severity.ERROR, of_pods=True)
RULE_ID = SPEC.id
# Who creates the pods, for the message (their FailedCreate events carry the quota error).
CREATORS = {"Deployment": "ReplicaSet", "ReplicaSet": "ReplicaSet", "StatefulSet": "StatefulSet controller"}


@dataclass(frozen=True)
class Row:
    key: str
    requested: Fraction
    used: Fraction
    hard: Fraction


def exceeded(quota: Quota, rows: list[Row]) -> str:
    """The ResourceQuota admission plugin's message."""

    def listing(value: str) -> str:
        return ",".join(f"{row.key}={format_amount(getattr(row, value))}" for row in rows)

    return (
        f"exceeded quota: {quota.name}, requested: {listing('requested')}, used: {listing('used')}, "
        f"limited: {listing('hard')}"
    )


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.kind == "ResourceQuota" and obj.api_version == "v1":
        yield from _uncounted(obj)
        return
    yield from _gke_critical_pods(obj, ctx.resolver)
    for quota, sites in quota_charges(obj, ctx.resolver):
        totals: dict[str, Fraction] = {}
        pods = 0
        for site in sites:
            if site.missing:
                yield Diagnostic(
                    RULE_ID,
                    site.path,
                    first_line(
                        f"the API server refuses every pod of this template: failed quota: {quota.name}: must specify "
                        + "; ".join(site.missing),
                        f"the API server refuses every pod of this template: failed quota: {quota.name}",
                    ),
                    notes=(
                        "must specify " + "; ".join(site.missing),
                        "a quota on cpu or memory makes every container state it, or a LimitRange default",
                    ),
                )
                continue
            yield from _one_pod(site.path, quota, site.charged)
            for key, amount in site.charged.items():
                totals[key] = totals.get(key, Fraction(0)) + amount * site.pods
            pods += site.pods
        if pods > 1:
            yield from _all_pods(obj, quota, totals, pods)


# GKE's API server makes the two system priority classes a limited scope (ResourceQuota admission's
# limitedResources): a pod of either needs a quota in its namespace whose scope selector covers its class, as
# GKE puts in its own namespaces (gcp-critical-pods in kube-system).
CRITICAL_CLASSES = ("system-node-critical", "system-cluster-critical")
GKE_POOL_LABEL = "cloud.google.com/gke-nodepool"
LIMITED_SCOPES = "[{PriorityClass In [system-node-critical system-cluster-critical]}]"


def _gke_critical_pods(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    """A pod of a system priority class, outside kube-system, on a GKE cluster whose ResourceQuotas are known
    (the inventory lists them) with none in its namespace covering that class: the API server refuses it,
    'insufficient quota to match these scopes' (modelplane#202: the NVIDIA DRA driver's kubelet plugin)."""
    namespace = obj.ref.namespace
    if not namespace or namespace == "kube-system" or not resolver.lists("ResourceQuota"):
        return
    if not any(GKE_POOL_LABEL in node.labels for node in resolver.nodes):
        return
    for site in obj.facts.sites():
        name = site.spec.get("priorityClassName")
        if name not in CRITICAL_CLASSES:
            continue
        if any(quota.covers_priority_class(site.spec) for quota in resolver.quotas(namespace)):
            continue
        creator = "the DaemonSet controller" if obj.kind == "DaemonSet" else "the API server"
        yield Diagnostic(
            RULE_ID,
            (*site.path, "priorityClassName"),
            f"GKE refuses pods of {name} in namespace {namespace} without a ResourceQuota for that class: "
            f"insufficient quota to match these scopes: {LIMITED_SCOPES}",
            notes=(
                f"{creator} creates none of them; GKE admits these priority classes only in a namespace whose "
                "ResourceQuota selects them (scopeSelector PriorityClass In [...]), as its own kube-system has",
                f"add such a ResourceQuota to namespace {namespace}, or run the pods without a system priority class",
            ),
            severity=Severity.WARNING,
        )


def _charged_to_claims(key: str) -> bool:
    from gpulint.kube.queueing.namespace import CLAIM_COUNT

    return key == CLAIM_COUNT or key.endswith(".deviceclass.resource.k8s.io/devices")


def _one_pod(path: Path, quota: Quota, charged: dict[str, Fraction]) -> Iterator[Diagnostic]:
    over = [Row(key, charged[key], Fraction(0), hard) for key, hard in quota.hard if charged.get(key, 0) > hard]
    if over:
        claims = any(_charged_to_claims(row.key) for row in over)
        what = "no pod of this template gets its ResourceClaims" if claims else "no pod of this template can be created"
        brief, notes = _with_quota_error(f"{what} in the namespace", exceeded(quota, over))
        yield Diagnostic(RULE_ID, path, brief, notes=notes)
        return
    if not quota.used_known:
        return
    used = dict(quota.used)
    now = [
        Row(key, charged[key], used.get(key, Fraction(0)), hard)
        for key, hard in quota.hard
        if key in charged and used.get(key, Fraction(0)) + charged[key] > hard
    ]
    if now:
        brief, notes = _with_quota_error(
            "with what the namespace uses now, a pod of this template is refused until other pods end",
            exceeded(quota, now),
        )
        yield Diagnostic(
            RULE_ID,
            path,
            brief,
            notes=notes,
            severity=Severity.WARNING,
        )


def _all_pods(obj: KubeObject, quota: Quota, sums: dict[str, Fraction], count: int) -> Iterator[Diagnostic]:
    over = [(key, sums[key], hard) for key, hard in quota.hard if sums.get(key, 0) > hard]
    if not over:
        return
    key, total, hard = over[0]
    per_pod = total / count
    fit = min(int(hard // per_pod), count) if per_pod else count
    creator = CREATORS.get(obj.kind, f"{obj.kind} controller")
    scoped = f", scopes {quota.describe_scopes()}" if quota.scopes else ""
    batch = (api_group(obj.api_version), obj.kind) in (("batch", "Job"), ("batch", "CronJob"))
    waits = batch and not is_distributed(obj.data)
    if _charged_to_claims(key):
        consequence = (
            f"the ResourceClaims of the pods beyond the first {fit} are refused, and those pods stay Pending "
            "(the resourceclaim controller cannot create their claims)"
        )
    elif waits:
        consequence = f"at most {fit} run at once, the rest are created as earlier ones end"
    else:
        consequence = f"the {creator} creates {fit} and the others fail with FailedCreate"
    yield Diagnostic(
        RULE_ID,
        ("spec",) if "spec" in obj.data else (),
        f"the {obj.kind} runs {count} pods that together need {format_amount(total)} {key}, above the namespace's "
        f"quota of {format_amount(hard)}",
        notes=(
            f"ResourceQuota {quota.name}{scoped}: {consequence}",
            exceeded(quota, [Row(key, per_pod, per_pod * fit, hard)]),
        ),
        severity=Severity.WARNING if waits else None,
        on_key=True,
    )


def _uncounted(obj: KubeObject) -> Iterator[Diagnostic]:
    from gpulint.kube.queueing.namespace import Quota, uncounted_keys

    for key, instead in uncounted_keys(Quota.of(obj.data)):
        yield Diagnostic(
            RULE_ID,
            ("spec", "hard", key),
            f"the quota key {key} is accepted but never charged: pods are charged for an extended resource only "
            f"as {instead}",
            notes=(f"extended resources cannot be overcommitted, so quota counts requests; write {instead}",),
            severity=Severity.WARNING,
            on_key=True,
        )


def _with_quota_error(lead: str, error: str) -> tuple[str, tuple[str, ...]]:
    """The lead and the API server's quota error on one line when it fits, else the error as the note."""
    full = f"{lead}: {error}"
    return (full, ()) if len(full) <= FIRST_LINE_MAX else (lead, (error,))
