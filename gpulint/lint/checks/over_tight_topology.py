"""over-tight-topology: a gang's topology requirement that makes it unplaceable, or leaves one domain."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.gangs.members import reported_gangs
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts.scheduling import lone_domain

SPEC = RuleSpec("over-tight-topology", Severity.WARNING, needs=frozenset({Need.NODES}), of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if ctx.cluster is None:
        return
    for gang in reported_gangs(obj, ctx.resolver):
        lone = lone_domain(gang, ctx.cluster, ctx.memo)  # the one explain shows
        if lone is None:
            continue
        yield Diagnostic(
            RULE_ID,
            gang.topology_path or gang.path,
            f"only {lone.key}={lone.domain} can host the whole gang ({lone.domains} domains exist); any failure "
            "there blocks it",
            notes=(f"the {lone.key} domains include those its node pools can add nodes in",) if lone.with_pools else (),
        )
