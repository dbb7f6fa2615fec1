"""queue-reference-invalid: the queue a workload is submitted to is missing, stopped, or refuses it."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.argo_sync import semaphore_problems
from gpulint.lint.verdicts.queues import (
    batch_queue_problems,
    kueue_config_problems,
    pod_group_problems,
    queue_route,
    workload_priority_problems,
)

SPEC = RuleSpec("queue-reference-invalid", Severity.ERROR)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    route = queue_route(obj, ctx.resolver)
    problems = [
        *(route.problems if route is not None else []),
        *batch_queue_problems(obj, ctx.resolver),
        *pod_group_problems(obj, ctx.resolver),
        *kueue_config_problems(obj, ctx.resolver),
        *workload_priority_problems(obj, ctx.resolver),
        *semaphore_problems(obj, ctx.resolver),
    ]
    for problem in problems:
        brief, spilled = split_long(problem.message)  # a long name the user gave can still overflow the line
        yield Diagnostic(
            RULE_ID,
            problem.path,
            brief,
            notes=(*spilled, *problem.notes),
            severity=None if problem.proven else Severity.INFO if problem.unknown else Severity.WARNING,
            pinned=problem.unknown,  # no verdict: raising the rule must not make it one
        )
