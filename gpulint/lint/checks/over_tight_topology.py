"""over-tight-topology: a gang's topology requirement that makes it unplaceable, or leaves one domain."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.gangs.members import reported_gangs
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts import describe_gang, gang_detail, gang_verdict

SPEC = RuleSpec("over-tight-topology", Severity.WARNING, needs=frozenset({Need.NODES}))
RULE_ID = SPEC.id
GANG_RULE = "gang-unsatisfiable"  # reports the gangs the requirement makes unplaceable


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if ctx.cluster is None or ctx.cluster.pools:
        return  # with node pools, zones come from nodes that do not exist yet: not judged
    for gang in reported_gangs(obj, ctx.resolver):
        if not gang.topology_key:
            continue
        where = gang.topology_path or gang.path
        constrained = gang_verdict(gang, ctx.cluster, ctx.memo)
        if constrained.unsatisfiable:
            if ctx.config.enables(GANG_RULE):
                continue  # one cause, one finding: gang-unsatisfiable names the requirement as the cause
            free = gang_verdict(gang, ctx.cluster, ctx.memo, topology_key="")
            if free.fitting_domains():  # proven to fit without the requirement
                yield Diagnostic(
                    RULE_ID,
                    where,
                    f"the topology requirement '{gang.topology_key}' makes the gang unplaceable while "
                    "the cluster as a whole could hold it",
                    notes=(
                        describe_gang(gang, constrained, gang.topology_key),
                        *gang_detail(gang, constrained, gang.topology_key),
                    ),
                )
            continue
        only = constrained.only_domain()  # every other domain proven not to hold it
        if only is not None and len(constrained.placements) > 1:
            yield Diagnostic(
                RULE_ID,
                where,
                f"only {gang.topology_key}={only.domain} can host the whole gang "
                f"({len(constrained.placements)} domains exist); any failure there blocks it",
            )
