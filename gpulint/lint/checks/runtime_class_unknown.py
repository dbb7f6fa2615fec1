"""runtime-class-unknown: the RuntimeClass admission plugin rejects the pod (unknown class, nodeSelector conflict)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.typos import typo_of
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("runtime-class-unknown", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    resolver = ctx.resolver
    name = site.spec.get("runtimeClassName")
    if not isinstance(name, str) or not name:
        return
    if name not in resolver.runtime_classes:
        if not resolver.catalog_complete("RuntimeClass", obj.document.path):
            return  # neither the inventory nor the configuration says which RuntimeClasses exist: no proof
        known = sorted(resolver.runtime_classes)
        close = typo_of(name, known) or next(
            (k for k in known if k in name or name in k), None
        )  # nvidia-container-runtime for nvidia: a chart default beside the usual name
        hint = (f"did you mean {close}?",) if close else ()
        yield Diagnostic(
            RULE_ID,
            (*site.path, "runtimeClassName"),
            f'{_who(obj, site)}: pod rejected: RuntimeClass "{name}" not found',
            notes=(*hint, f"RuntimeClasses in the cluster: {', '.join(known) or 'none'}"),
        )
        return
    from gpulint.lint.verdicts.shared import runtime_class_admission  # here: only for a class the inventory lists

    admitted = runtime_class_admission(site.spec, resolver)
    if admitted is not None and admitted.conflict:
        yield Diagnostic(
            RULE_ID,
            (*site.path, "nodeSelector", admitted.conflict_key),
            f"{_who(obj, site)}: {admitted.conflict}",
            notes=(f"RuntimeClass {name} adds its nodeSelector to every pod that names it; drop the pod's own entry",),
        )


def _who(obj: KubeObject, site: PodSpecSite) -> str:
    """Who meets the rejection: the user creating a Pod, or the controller creating the workload's pods."""
    if obj.kind == "Pod":
        return "the API server rejects this pod"
    role = f"'{site.role}' " if site.role else ""
    return f"the API server rejects every {role}pod {obj.kind} {obj.ref.name} creates (FailedCreate)"
