"""gpu-unschedulable: no node passes the scheduler's filters for a GPU pod."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.resources import is_extended
from gpulint.kube.workloads import PodSpecSite, extended_resource_path, pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts import gpu_pod_requirements, scheduling_hint

SPEC = RuleSpec("gpu-unschedulable", Severity.ERROR, needs=frozenset({Need.NODES}))
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    model = inventory.model
    for site in pod_spec_sites(obj.data):
        pod = gpu_pod_requirements(obj.kind, site, inventory)
        if pod is None or any(is_extended(name) and name not in inventory.published_resources for name in pod.requests):
            continue  # a resource no node publishes: gpu-resource-unknown says so, more precisely
        where = extended_resource_path(site) or site.path
        empty = model.evaluate(pod, now=False)
        if not empty.fits:
            yield Diagnostic(
                RULE_ID,
                where,
                f"{_subject(site)} can never be scheduled on this cluster, even empty: "
                f"{empty.summary()}{scheduling_hint(empty, pod, inventory)}",
            )
            continue
        if site.pods and site.pods > 1:
            placed = model.placeable(pod)
            if placed < site.pods:
                yield Diagnostic(
                    RULE_ID,
                    where,
                    f"the workload runs {site.pods} of these pods, but only {placed} fit on the empty "
                    f"cluster at once (on {_nodes(empty.fitting_count)} that pass every filter); the "
                    f"other {site.pods - placed} would stay Pending",
                    severity=Severity.WARNING,
                )
        if inventory.pods and not pod.node_name:  # a bound pod is already counted in the inventory
            now = model.evaluate(pod, now=True)
            if not now.fits:
                yield Diagnostic(
                    RULE_ID,
                    where,
                    f"{_subject(site)} fits on the empty cluster ({_nodes(empty.fitting_count)}) but not "
                    f"with the pods running now: {now.summary()}{scheduling_hint(now, pod, inventory)} "
                    "(it waits for capacity, or preempts lower-priority pods if its priority allows)",
                    severity=Severity.WARNING,
                )


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _subject(site: PodSpecSite) -> str:
    return f"the '{site.role}' pod template" if site.role else "this pod"
