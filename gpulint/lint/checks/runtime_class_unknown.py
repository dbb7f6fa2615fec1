"""runtime-class-unknown: the RuntimeClass admission plugin rejects the pod (unknown class, nodeSelector conflict)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.runtime_classes import runtime_class_verdict

SPEC = RuleSpec("runtime-class-unknown", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    verdict = runtime_class_verdict(site.spec, ctx.resolver, obj.document.path)  # the one explain shows
    if verdict is None:
        return
    if verdict.missing:
        close = verdict.close()
        yield Diagnostic(
            RULE_ID,
            (*site.path, "runtimeClassName"),
            f'{_who(obj, site)}: pod rejected: RuntimeClass "{verdict.name}" not found',
            notes=(
                *((f"did you mean {close}?",) if close else ()),
                f"RuntimeClasses in the cluster: {', '.join(verdict.known or ()) or 'none'}",
            ),
        )
    elif verdict.admitted is not None and verdict.conflict:
        yield Diagnostic(
            RULE_ID,
            (*site.path, "nodeSelector", verdict.admitted.conflict_key),
            f"{_who(obj, site)}: {verdict.conflict}",
            notes=(
                f"RuntimeClass {verdict.name} adds its nodeSelector to every pod that names it; drop the pod's own "
                "entry",
            ),
        )


def _who(obj: KubeObject, site: PodSpecSite) -> str:
    """Who meets the rejection: the user creating a Pod, or the controller creating the workload's pods."""
    if obj.kind == "Pod":
        return "the API server rejects this pod"
    role = f"'{site.role}' " if site.role else ""
    return f"the API server rejects every {role}pod {obj.kind} {obj.ref.name} creates (FailedCreate)"
