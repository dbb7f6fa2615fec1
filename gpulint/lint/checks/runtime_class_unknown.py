"""runtime-class-unknown: the RuntimeClass admission plugin rejects the pod (unknown class, nodeSelector conflict)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.runtime_classes import site_runtime_class_verdict

SPEC = RuleSpec("runtime-class-unknown", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    verdict = site_runtime_class_verdict(obj, site, ctx.resolver)  # the one explain shows
    if verdict is None:
        return
    if verdict.missing:
        close = verdict.close()
        injected = (
            f"{verdict.injected_by} gives the pod runtimeClassName {verdict.name} (it handles pods for this "
            "schedulerName that ask for a GPU and name no RuntimeClass); define the RuntimeClass, or set "
            "the Config's spec.admission.gpuPodRuntimeClassName (gpuFractionRuntimeClassName from v0.16) to one "
            "the cluster has"
        )
        yield Diagnostic(
            RULE_ID,
            (*site.path, "schedulerName" if verdict.injected_by else "runtimeClassName"),
            f'{_who(obj, site)}: pod rejected: RuntimeClass "{verdict.name}" not found',
            notes=(
                *((injected,) if verdict.injected_by else ()),
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
