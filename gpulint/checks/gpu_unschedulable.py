"""gpu-unschedulable: no node passes the scheduler's filters for a GPU pod."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from fractions import Fraction

from gpulint.checks import CheckContext
from gpulint.findings import Diagnostic, Severity
from gpulint.resolver import Resolver
from gpulint.objects import KubeObject
from gpulint.resources import is_extended
from gpulint.scheduler import REASON_AFFINITY, FitResult, PodRequirements, pod_requirements
from gpulint.workloads import PodSpecSite, effective_pod_spec, extended_resource_path, pod_spec_sites

RULE_ID = "gpu-unschedulable"


def gpu_pod_requirements(kind: str, site: PodSpecSite, inventory: Resolver) -> PodRequirements | None:
    """Scheduler requirements of a pod that asks for an extended resource (None for other pods).

    Extended resources backed by a DeviceClass (DRA extended resources) and published by
    no node are served by the DynamicResources plugin, not NodeResourcesFit: left out here.
    """
    requirements = pod_requirements(effective_pod_spec(kind, site.spec))
    extended = [name for name in requirements.requests if is_extended(name)]
    if not extended:
        return None
    dra_only = set(inventory.dra_extended_resources()) - inventory.published_resources
    if dra_only & set(extended):
        requests = {k: v for k, v in requirements.requests.items() if k not in dra_only}
        requirements = PodRequirements(requests, requirements.node_selector, requirements.affinity_terms,
                                       requirements.tolerations, requirements.node_name)
    return requirements


def hint(result: FitResult, pod: PodRequirements, inventory: Resolver) -> str:
    """The smallest change that would help, read off why the nodes failed."""
    first = Counter()
    for group, reasons in result.failing:
        first[reasons[0]] += len(group)
    if not first:
        return ""
    reason, _ = first.most_common(1)[0]
    if reason.startswith("Insufficient "):
        resource = reason.removeprefix("Insufficient ")
        candidates = [g.representative for g, r in result.failing if all(x.startswith("Insufficient") for x in r)]
        largest = max((n.allocatable.get(resource, Fraction(0)) for n in candidates), default=Fraction(0))
        asked = pod.requests.get(resource, Fraction(0))
        return (f" The largest node that passes the other filters offers {_amount(largest)} {resource}; "
                f"this pod asks for {_amount(asked)}.")
    if reason == REASON_AFFINITY:
        return " No node matches the pod's nodeSelector/required node affinity."
    if reason.startswith("node(s) had untolerated taint"):
        taint = reason.removeprefix("node(s) had untolerated taint ")
        return f" Most nodes carry the taint {taint}: add a matching toleration if the pod belongs there."
    return ""


def _amount(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    model = inventory.model
    for site in pod_spec_sites(obj.data):
        pod = gpu_pod_requirements(obj.kind, site, inventory)
        if pod is None or any(is_extended(name) and name not in inventory.published_resources
                              for name in pod.requests):
            continue  # a resource no node publishes: gpu-resource-unknown says so, more precisely
        where = extended_resource_path(site) or site.path
        empty = model.evaluate(pod, now=False)
        if not empty.fits:
            yield Diagnostic(RULE_ID, where, f"{_subject(site)} can never be scheduled on this cluster, even empty: "
                                             f"{empty.summary()}{hint(empty, pod, inventory)}")
            continue
        if site.pods and site.pods > 1:
            placed = model.placeable(pod)
            if placed < site.pods:
                yield Diagnostic(RULE_ID, where,
                                 f"the workload runs {site.pods} of these pods, but only {placed} fit on the empty "
                                 f"cluster at once (on {_nodes(empty.fitting_count)} that pass every filter); the "
                                 f"other {site.pods - placed} would stay Pending", severity=Severity.WARNING)
        if inventory.pods and not pod.node_name:  # a bound pod is already counted in the inventory
            now = model.evaluate(pod, now=True)
            if not now.fits:
                yield Diagnostic(RULE_ID, where,
                                 f"{_subject(site)} fits on the empty cluster ({_nodes(empty.fitting_count)}) but not "
                                 f"with the pods running now: {now.summary()}{hint(now, pod, inventory)} "
                                 "(it waits for capacity, or preempts lower-priority pods if its priority allows)",
                                 severity=Severity.WARNING)


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _subject(site: PodSpecSite) -> str:
    return f"the '{site.role}' pod template" if site.role else "this pod"
