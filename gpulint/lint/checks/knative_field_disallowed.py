"""knative-field-disallowed: Knative's webhook refuses a pod field its feature flags keep off, or
container ports it cannot route (more than one across the containers, or none among several)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube import knative
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("knative-field-disallowed", Severity.ERROR, kinds=frozenset(knative.KINDS), scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.ref.group != knative.GROUP:
        return
    values = ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    keys = None if values is not None else ctx.resolver.config_map_keys(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    for problem in knative.port_problems(site.spec):
        yield Diagnostic(
            RULE_ID,
            (*site.path, *problem.path),
            f"Knative's webhook rejects the {obj.kind}: {problem.message}: {field_path(site.path)}.containers[*].ports",
            on_key=True,
            notes=tuple(
                note
                for note in (
                    problem.details,
                    "Knative routes requests to the one container that declares a port; the others are "
                    "sidecars without ports",
                )
                if note
            ),
        )
    for field, flag in knative.FEATURE_FLAGS.items():
        if site.spec.get(field) in (None, False, "", [], {}):
            continue
        state = knative.flag_state(flag, values, keys)
        if state in (knative.FlagState.ALLOWED, knative.FlagState.SET):
            continue  # SET: the operator chose a value gpulint cannot see; no proof either way
        path = (*site.path, field)
        refused = f"must not set the field(s): {field_path(path)}"
        if state is knative.FlagState.DISABLED:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind}: {refused} ({flag} is disabled in "
                f"{knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME})",
                on_key=True,
                notes=(f'set {flag}: "enabled" in the ConfigMap {knative.CONFIG_NAME} to allow it',),
            )
        else:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind} ({refused}) unless {flag} is enabled: it is "
                "disabled by default",
                severity=Severity.WARNING,
                on_key=True,
                notes=(
                    f"gpulint does not know {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME}: lint it with the "
                    "manifests, or add it to the inventory, to turn this into a verdict",
                ),
            )
