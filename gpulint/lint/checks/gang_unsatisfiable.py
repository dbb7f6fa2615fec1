"""gang-unsatisfiable: the members a gang needs at once cannot all be placed, even on the empty cluster."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction

from gpulint.kube.fields import mapping
from gpulint.kube.gangs.members import Gang, GangVerdict, composites_of, pack_composite
from gpulint.kube.gangs.packing import WORK_BUDGET
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import accelerator_noun, is_extended
from gpulint.kube.scheduler import resource_list
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts.scheduling import gang_answers
from gpulint.lint.verdicts.shared import (
    CLUSTER_WHOLE,
    PoolGangVerdict,
    admitted_gang,
    describe_gang,
    gang_detail,
    pools_in_backoff,
    topology_cause,
)
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("gang-unsatisfiable", Severity.ERROR, needs=frozenset({Need.NODES}), of_pods=True)
RULE_ID = SPEC.id


MIN_RESOURCES_GROUPS = ("scheduling.volcano.sh", "scheduling.x-k8s.io")


def _min_resources(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Volcano and coscheduling PodGroups admit the gang only when minResources are free at once."""
    spec = mapping(obj.data.get("spec"))
    wanted = resource_list(spec.get("minResources"))
    if not wanted or ctx.cluster is None:
        return
    nodes = [node for node in ctx.cluster.nodes if not node.unschedulable]
    for resource, amount in sorted(wanted.items()):
        total = sum((node.allocatable.get(resource, Fraction(0)) for node in nodes), Fraction(0))
        if amount > total:
            yield Diagnostic(
                RULE_ID,
                ("spec", "minResources", resource),
                f"the PodGroup needs minResources {resource}: {format_amount(amount)} at once, but the "
                f"schedulable nodes have {format_amount(total)} in all; the gang is never admitted",
            )


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if ctx.cluster is None:
        return
    if obj.kind == "PodGroup" and obj.ref.group in MIN_RESOURCES_GROUPS:
        yield from _min_resources(obj, ctx)
    for composite in composites_of(obj, ctx.resolver):
        children = [admitted_gang(child, ctx.cluster) for child in composite.children]  # as each pod is judged
        placed = pack_composite(replace(composite, children=children), ctx.cluster.model)
        groups = ", ".join(child.system for child in composite.children)
        if placed.unsatisfiable:
            yield Diagnostic(
                RULE_ID,
                composite.path,
                f"CompositePodGroup {composite.name} needs its groups in one {composite.outer_key}, each group "
                f"within its own domain; no {composite.outer_key.rsplit('/', 1)[-1]} can hold them",
                notes=(f"the groups: {groups}", placed.why),
            )
        elif placed.undecided:
            yield undecided(
                composite.path, f"CompositePodGroup {composite.name} ({groups})", f" in one {composite.outer_key}"
            )
    for answer in gang_answers(obj, ctx.cluster, ctx.memo, reported_only=True):  # the ones explain shows
        gang = answer.gang
        if answer.with_pools is not None:
            yield from _with_pools(gang, answer.with_pools, ctx.cluster)
            continue
        if answer.unpublished:
            continue  # gpu-resource-unknown speaks for a resource no node publishes
        result = answer.packed
        assert result is not None
        if result.unsatisfiable and answer.created:
            yield _created(gang, result, answer.created)
        elif result.unsatisfiable:
            cause: tuple[str, ...] = ()
            if answer.topology_is_cause:
                cause = (topology_cause(gang.topology_key, CLUSTER_WHOLE),)
            gap = ctx.cluster.pools_gap  # a node group not read may add what the gang lacks
            if gap:
                cause = (*cause, gap)
            yield Diagnostic(
                RULE_ID,
                gang.path,
                describe_gang(gang, result, gang.topology_key),
                notes=(
                    *gang_detail(gang, result, gang.topology_key),
                    *cause,
                    f"partial placement would hold {_held(gang)} idle while the gang waits for peers that cannot start",
                ),
                severity=Severity.WARNING if gap else Severity.ERROR,
                pinned=bool(gap),
            )
        elif result.undecided:
            yield undecided(gang.path, gang.system, f" in one {gang.topology_key}" if gang.topology_key else "")


def _created(gang: Gang, result: GangVerdict, why: str) -> Diagnostic:
    """The nodes cannot hold the gang, but GKE may create nodes for its members that they do not show: unknown
    (info), as a single pod no node fits there is."""
    return Diagnostic(
        RULE_ID,
        gang.path,
        f"{describe_gang(gang, result, gang.topology_key)}; whether GKE creates nodes that hold it is unknown",
        notes=(*gang_detail(gang, result, gang.topology_key), why),
        severity=Severity.INFO,
        pinned=True,
    )


def _with_pools(gang: Gang, result: PoolGangVerdict, resolver: Resolver) -> Iterator[Diagnostic]:
    """The nodes that can exist: the whole gang must fit within what the nodes hold and the pools may
    still add (max size, limits, what already runs): an error when proven not to."""
    if result.state == "unsatisfiable":
        gap = resolver.pools_gap  # a node group not read may add what the gang lacks
        # a pool that fits a member but is in backoff adds nothing now, and may once it ends: "never" is unproven
        backoff = tuple(
            f"{pool.title}: {pool.group.skipped()}; it may add nodes once the backoff ends"
            for pool in pools_in_backoff(gang, resolver)
            if pool.group is not None
        )
        yield Diagnostic(
            RULE_ID,
            gang.path,
            result.message,
            notes=(
                *result.notes,
                f"partial placement would hold {_held(gang)} idle while the gang waits for peers that cannot start",
                *backoff,
                *((gap,) if gap else ()),
            ),
            severity=Severity.WARNING if gap or backoff else Severity.ERROR,
            pinned=bool(gap or backoff),
        )


def _held(gang: Gang) -> str:
    """What a partial placement holds idle, by the resource requested (TPUs, not GPUs)."""
    extended = {name for member in gang.members for name in member.pod.requests if is_extended(name)}
    return f"{accelerator_noun(extended)}s" if extended else "nodes"


def undecided(path: Path, who: str, where: str) -> Diagnostic:
    """Info, never an error: no proof either way (the exact search is cut off by its work budget)."""
    return Diagnostic(
        RULE_ID,
        path,
        f"{who}: could not decide within the work budget whether the pods fit at once{where}",
        notes=(
            f"the capacity totals allow it but no placement was found in {WORK_BUDGET:,} search steps; "
            "not reported as unsatisfiable",
        ),
        severity=Severity.INFO,
        pinned=True,
    )
