"""limit-range-violation: the namespace's LimitRange defaults or bounds make the API server reject the pod,
or give its containers GPUs they do not ask for."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.resources import is_extended
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Refuses, Severity, first_line, refusing
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("limit-range-violation", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: LimitRanger judges each pod at its create, never the workload."""
    return refusing(_found(obj, site, ctx), Refuses.PODS)


def _found(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    items = ctx.resolver.limit_items(obj.ref.namespace)
    if not items:
        return
    from gpulint.kube.queueing.namespace import limit_violations, with_limit_ranges  # namespaces with LimitRanges only

    sources = ", ".join(sorted({item.source for item in items}))
    if site.completed_by:
        return  # limits may come from the object that completes the pod
    defaulted, injected = with_limit_ranges(site.spec, items)
    subject = f"the '{site.role}' pod template" if site.role else "the pod"
    # only what the LimitRange causes: a request above its own limit is the API's error without it
    # (gpu-request-without-limit and schema checks say so)
    own = set(limit_violations(with_limit_ranges(site.spec, ())[0], ()))
    for violation in limit_violations(defaulted, items):
        if violation in own:
            continue
        filled = [i for i in injected if violation.path[:2] == i.path]
        cause = (
            " (after LimitRange "
            + ", ".join(sorted({i.source for i in filled}))
            + " filled in "
            + ", ".join(f"{i.section}.{i.resource}={i.text}" for i in filled)
            + ")"
            if filled
            else f" (LimitRange {sources})"
        )
        full = f"the API server rejects {subject}{cause}: {violation.message}"
        brief = first_line(full, f"the API server rejects {subject}: {violation.message}")
        yield Diagnostic(
            RULE_ID,
            (*site.path, *violation.path),
            brief,
            notes=() if brief == full else (cause.strip(" ()"),),
        )
    for added in injected:
        if added.section != "limits" or not is_extended(added.resource):
            continue
        origin = "max (a LimitRange's max is also its default limit)" if added.from_max else "default"
        yield Diagnostic(
            RULE_ID,
            (*site.path, *added.path),
            f"LimitRange {added.source} gives container {added.container} {added.text} "
            f"{added.resource} it does not ask for (from its {origin.split(' ', 1)[0]})",
            notes=(
                *(("a LimitRange's max is also its default limit",) if added.from_max else ()),
                "every such container, sidecars and init containers included, requests and holds that many devices",
            ),
            severity=Severity.WARNING,
        )
