"""over-tight-topology: a gang's topology requirement that makes it unplaceable, or leaves one domain."""
from __future__ import annotations

from collections.abc import Iterator

from gpulint.checks import CheckContext
from gpulint.checks.gang_unsatisfiable import describe, verdict
from gpulint.findings import Diagnostic
from gpulint.gangs import gangs_of
from gpulint.objects import KubeObject

RULE_ID = "over-tight-topology"


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if ctx.cluster is None:
        return
    for gang in gangs_of(obj, ctx.resolver):
        if not gang.topology_key:
            continue
        where = gang.topology_path or gang.path
        constrained = verdict(gang, ctx)
        if constrained.unsatisfiable:
            free = verdict(gang, ctx, topology_key="")
            if free.fitting_domains():  # proven to fit without the requirement
                yield Diagnostic(RULE_ID, where,
                                 f"the topology requirement '{gang.topology_key}' makes the gang unplaceable while "
                                 f"the cluster as a whole could hold it: {describe(gang, constrained, gang.topology_key)}")
            continue
        only = constrained.only_domain()  # every other domain proven not to hold it
        if only is not None and len(constrained.placements) > 1:
            yield Diagnostic(RULE_ID, where,
                             f"only {gang.topology_key}={only.domain} can host the whole gang "
                             f"({len(constrained.placements)} domains exist); any failure there blocks it")
