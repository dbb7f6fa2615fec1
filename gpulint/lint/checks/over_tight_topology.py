"""over-tight-topology: a gang's topology requirement that makes it unplaceable, or leaves one domain."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.gangs.members import Gang, reported_gangs
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts.scheduling import gang_answer
from gpulint.lint.verdicts.shared import gang_pool_domains
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("over-tight-topology", Severity.WARNING, needs=frozenset({Need.NODES}))
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if ctx.cluster is None:
        return
    for gang in reported_gangs(obj, ctx.resolver):
        if not gang.topology_key:
            continue
        where = gang.topology_path or gang.path
        if ctx.cluster.pools:
            yield from _with_pools(gang, where, ctx.cluster)
            continue
        constrained = gang_answer(gang, ctx.cluster, ctx.memo).packed  # the one explain shows
        assert constrained is not None
        if constrained.unsatisfiable:
            continue  # one cause, one finding: gang-unsatisfiable words it, naming the requirement as the cause
        only = constrained.only_domain()  # every other domain proven not to hold it
        if only is not None and len(constrained.placements) > 1:
            yield Diagnostic(
                RULE_ID,
                where,
                f"only {gang.topology_key}={only.domain} can host the whole gang "
                f"({len(constrained.placements)} domains exist); any failure there blocks it",
            )


def _with_pools(gang: Gang, where: Path, resolver: Resolver) -> Iterator[Diagnostic]:
    """The domains of the nodes and of the nodes the pools may add (their zones: GKE locations, zone
    requirements, EC2NodeClass subnets): every other domain proven not to hold the gang leaves one.
    Unknown domains (a pool launching in any zone) are not judged; an unplaceable gang is gang-unsatisfiable's."""
    verdict = gang_pool_domains(gang, resolver)
    if verdict is None or verdict.unsatisfiable:
        return
    only = verdict.only_domain()
    if only is not None and len(verdict.placements) > 1:
        yield Diagnostic(
            RULE_ID,
            where,
            f"only {gang.topology_key}={only.domain} can host the whole gang "
            f"({len(verdict.placements)} domains exist); any failure there blocks it",
            notes=(f"the {gang.topology_key} domains include those its node pools can add nodes in",),
        )
