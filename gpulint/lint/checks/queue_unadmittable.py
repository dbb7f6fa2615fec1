"""queue-unadmittable: Kueue can never assign the workload a flavor within its ClusterQueue's quota, or a
Volcano Queue's capability is below what the gang needs at once."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.queues import (
    admission_verdict,
    kai_limit_problems,
    speaks_for_group,
    volcano_capability_problems,
    volcano_guarantee_problems,
    volcano_task_order_problems,
)

SPEC = RuleSpec("queue-unadmittable", Severity.ERROR, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    for problem in [*volcano_capability_problems(obj, ctx.resolver), *kai_limit_problems(obj, ctx.resolver)]:
        yield Diagnostic(RULE_ID, problem.path, problem.message, notes=problem.notes)
    for problem in [*volcano_guarantee_problems(obj, ctx.resolver), *volcano_task_order_problems(obj, ctx.resolver)]:
        yield Diagnostic(RULE_ID, problem.path, problem.message, notes=problem.notes, severity=Severity.WARNING)
    found = admission_verdict(obj, ctx.resolver) if speaks_for_group(obj, ctx.resolver) else None
    if found is None:
        return
    route, verdict = found
    queue = verdict.queue.name
    if verdict.never:
        full = f"ClusterQueue {queue} can never admit this workload (it stays suspended): {verdict.never[0]}"
        brief = first_line(full, f"ClusterQueue {queue} can never admit this workload (it stays suspended)")
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            brief,
            notes=_reasons(verdict.never)[1 if brief == full else 0 :],
        )
    elif verdict.doubtful:
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            f"ClusterQueue {queue} does not cover a resource the workload requests",
            notes=(
                *_reasons(verdict.doubtful),
                "Kueue (quotaCheckStrategy BlockUndeclared, its default) never admits it unless its "
                "configuration transforms the resource into a covered one (resources.transformations) or "
                "excludes it (resources.excludeResourcePrefixes)",
            ),
            severity=Severity.INFO,
            pinned=True,  # not a verdict: Kueue's configuration decides, and it is not in the manifests
        )
    elif verdict.waits:
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            f"ClusterQueue {queue} cannot admit this workload with the usage it reports now; it waits for "
            "quota (or preempts, if the queue's preemption policy allows)",
            notes=_reasons(verdict.waits),
            severity=Severity.WARNING,
        )


def _reasons(reasons: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Kueue's reasons, as it words them, the first three and how many more."""
    more = (f"and {len(reasons) - 3} more",) if len(reasons) > 3 else ()
    return (*reasons[:3], *more)
