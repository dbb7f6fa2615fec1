"""queue-unadmittable: Kueue can never assign the workload a flavor within its ClusterQueue's quota, or a
Volcano Queue's capability is below what the gang needs at once."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.admission import (
    admission_verdict,
    kai_limit_problems,
    speaks_for_group,
    volcano_capability_problems,
)
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("queue-unadmittable", Severity.ERROR)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    for problem in [*volcano_capability_problems(obj, ctx.resolver), *kai_limit_problems(obj, ctx.resolver)]:
        yield Diagnostic(RULE_ID, problem.path, problem.message)
    found = admission_verdict(obj, ctx.resolver) if speaks_for_group(obj, ctx.resolver) else None
    if found is None:
        return
    route, verdict = found
    queue = verdict.queue.name
    if verdict.never:
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            f"ClusterQueue {queue} can never admit this workload (it stays suspended): "
            + "; ".join(verdict.never[:3])
            + (f" (and {len(verdict.never) - 3} more)" if len(verdict.never) > 3 else ""),
        )
    elif verdict.doubtful:
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            f"ClusterQueue {queue} does not cover a resource the workload requests: "
            + "; ".join(verdict.doubtful[:3])
            + ". Kueue (quotaCheckStrategy BlockUndeclared, its default) never admits it unless its "
            "configuration transforms the resource into a covered one (resources.transformations) or "
            "excludes it (resources.excludeResourcePrefixes)",
            severity=Severity.INFO,
            pinned=True,  # not a verdict: Kueue's configuration decides, and it is not in the manifests
        )
    elif verdict.waits:
        yield Diagnostic(
            RULE_ID,
            route.queue.path,
            f"ClusterQueue {queue} cannot admit this workload with the usage it reports now; it waits for "
            "quota (or preempts, if the queue's preemption policy allows): " + "; ".join(verdict.waits[:3]),
            severity=Severity.WARNING,
        )
