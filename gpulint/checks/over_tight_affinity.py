"""over-tight-affinity: required node affinity / nodeSelector that leaves too few nodes."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from gpulint.checks import CheckContext
from gpulint.findings import Diagnostic, Severity
from gpulint.inventory import Inventory
from gpulint.objects import KubeObject
from gpulint.resources import is_extended
from gpulint.scheduler import NodeInfo, PodRequirements, Requirement, pod_requirements
from gpulint.workloads import effective_pod_spec, pod_spec_sites

RULE_ID = "over-tight-affinity"


def _matching(pod: PodRequirements, nodes: list[NodeInfo]) -> list[NodeInfo]:
    return [node for node in nodes if pod.matches_affinity(node)]


def most_excluding(pod: PodRequirements, nodes: list[NodeInfo]) -> tuple[Requirement, int]:
    """The single requirement that, on its own, excludes the most nodes."""
    best: tuple[Requirement, int] | None = None
    for requirement in pod.requirements():
        excluded = sum(1 for node in nodes if not requirement.matches(node))
        if best is None or excluded > best[1]:
            best = (requirement, excluded)
    assert best is not None
    return best


def values_in_cluster(key: str, nodes: list[NodeInfo], limit: int = 5) -> str:
    counts = Counter(node.labels[key] for node in nodes if key in node.labels)
    if not counts:
        return f"no node has the label {key}"
    shown = ", ".join(f"{value} ({count})" for value, count in counts.most_common(limit))
    more = f", and {len(counts) - limit} more" if len(counts) > limit else ""
    return f"nodes carry {key} = {shown}{more}"


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    nodes = inventory.nodes
    for site in pod_spec_sites(obj.data):
        pod = pod_requirements(effective_pod_spec(obj.kind, site.spec))
        if not pod.requirements():
            continue  # no constraint, or only empty terms (which match nothing: gpu-unschedulable says so)
        matching = ctx.memo(("affinity", pod.node_selector, pod.affinity_terms), lambda: _matching(pod, nodes))
        requirement, excluded = most_excluding(pod, nodes)
        path = (*site.path, *requirement.path)
        if not matching:
            context = "" if requirement.field else f"; {values_in_cluster(requirement.key, nodes)}"
            yield Diagnostic(RULE_ID, path,
                             f"the required node affinity/selector matches none of the {len(nodes)} nodes; "
                             f"'{requirement.description}' alone excludes {excluded}{context}",
                             severity=Severity.ERROR)
            continue
        gpu_resources = [name for name in pod.requests if is_extended(name)]
        offering = [node for node in matching
                    if all(node.allocatable.get(name, 0) > 0 for name in gpu_resources)]
        if gpu_resources and not offering:
            yield Diagnostic(RULE_ID, path,
                             f"the required node affinity/selector matches {len(matching)} nodes, but none of them "
                             f"offers {', '.join(gpu_resources)}; '{requirement.description}' excludes {excluded} "
                             f"of {len(nodes)} nodes")
            continue
        yield from _replicas(site.pods, pod, inventory, offering or matching, path, requirement)


def _replicas(pods: int | None, pod: PodRequirements, inventory: Inventory, allowed: list[NodeInfo],
              path: tuple, requirement: Requirement) -> Iterator[Diagnostic]:
    if not pods or pods < 2 or not pod.requests:
        return
    model = inventory.model
    passing = [n for n in model.evaluate(pod).fitting]
    fit_here = model.pods_that_fit(pod, passing)
    if fit_here >= pods:
        return
    unconstrained = PodRequirements(pod.requests, (), None, pod.tolerations, pod.node_name)
    fit_anywhere = model.pods_that_fit(unconstrained, model.evaluate(unconstrained).fitting)
    if fit_anywhere >= pods:
        yield Diagnostic(RULE_ID, path,
                         f"the workload needs {pods} pods, but the {len(allowed)} nodes its required node "
                         f"affinity/selector allows hold only {fit_here} of them on the empty cluster "
                         f"({fit_anywhere} would fit without '{requirement.description}')")
