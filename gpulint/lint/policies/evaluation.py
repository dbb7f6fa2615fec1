"""Evaluating a policy on an object offline: CEL with the object, its pod specs, the inventory and the linted objects."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel.engine import COST_EXCEEDED, PER_CALL_LIMIT, UNDECIDED, CelEngine
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.findings import Diagnostic, Path, Severity, split_long
from gpulint.lint.objects import KubeObject
from gpulint.lint.policies.matching import policy_applies
from gpulint.lint.policies.model import POLICY_VARIABLES, Expression, Policy

if TYPE_CHECKING:
    from gpulint.lint.checks import CheckContext

# --------------------------------------------------------------------------- evaluating


def parse_field_path(text: Any) -> Path | None:
    """``spec.containers[0].resources`` / ``metadata.labels['app']`` -> a path."""
    if not isinstance(text, str):
        return None
    path: list[Any] = []
    for match in re.finditer(r"\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]|(.)", text):
        name, index, key, junk = match.groups()
        if junk is not None:
            return None
        path.append(name if name is not None else int(index) if index is not None else key)
    return tuple(path)


def pod_specs(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"path": ".".join(str(p) for p in site.path), "spec": site.spec, "pods": site.pods, "role": site.role}
        for site in pod_spec_sites(data)
    ]


def inventory_view(ctx: CheckContext) -> dict[str, Any]:
    inventory = ctx.resolver
    return {
        "nodes": [located.data for located in inventory.node_objects.values()],
        "deviceClasses": [located.data for located in inventory.device_classes.values()],
        "resourceSlices": [located.data for located in inventory.slices],
    }


def policy_check(
    policy: Policy, engine_of: Callable[[], CelEngine]
) -> Callable[[KubeObject, CheckContext], Iterator[Diagnostic]]:
    def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
        yield from evaluate(policy, obj, ctx, engine_of())

    return check


def _not_offline(policy: Policy, why: str) -> Diagnostic:
    return Diagnostic(
        policy.name, (), f"policy {policy.name} cannot be evaluated offline: {why}", severity=Severity.INFO, pinned=True
    )


def evaluate(policy: Policy, obj: KubeObject, ctx: CheckContext, engine: CelEngine) -> Iterator[Diagnostic]:
    namespaces = ctx.resolver.namespaces
    verdicts = [policy_applies(m, obj, namespaces) for m in (policy.match, *policy.extra_matches)]
    if any(v is False for v in verdicts):
        return
    if any(v is None for v in verdicts):
        yield _not_offline(policy, "its namespaceSelector needs the namespace's labels")
        return
    if policy.needs_params and not policy.params:
        yield _not_offline(policy, "no params object matches its binding's paramRef (add it to the policy files)")
        return
    data: dict[str, Any] = {
        "object": obj.data,
        "oldObject": None,
        "podSpecs": pod_specs(obj.data),
        "inventory": ctx.memo("policy-inventory", lambda: inventory_view(ctx)),
        "objects": ctx.resolver.objects,
        "request": {
            "operation": "CREATE",
            "namespace": obj.ref.namespace,
            "name": obj.ref.name,
            "kind": {
                "group": obj.ref.group,
                "version": obj.ref.version,
                "kind": obj.kind,
            },
        },
        "namespaceObject": None,
        "authorizer": None,
        "variables": {},
    }
    for params in policy.params or (None,):
        data["params"] = params
        yield from _evaluate_once(policy, obj, data, engine)


def _run(engine: CelEngine, expression: Expression, data: dict[str, Any]) -> tuple[Any, str]:
    if expression.compiled is None or expression.not_offline:
        return None, expression.not_offline or "not evaluable"
    return engine.run(expression.compiled, data)


def _evaluate_once(policy: Policy, obj: KubeObject, data: dict[str, Any], engine: CelEngine) -> Iterator[Diagnostic]:
    for name, expression in policy.match.conditions:
        value, error = _run(engine, expression, data)
        if error:
            yield _not_offline(policy, f"matchCondition {name}: {error}")
            return
        if value is not True:
            return
    variables: dict[str, Any] = {}
    data = {**data, "variables": variables}
    read = read_variables(policy)
    for name, expression in policy.variables:
        if name not in read:  # never evaluated in the API server either
            variables[name] = None
            continue
        value, error = _run(engine, expression, data)
        if error.startswith(UNDECIDED):  # no value, so no verdict from what reads it
            yield _undecided(policy, (), f"variable {name}: {error}")
            return
        if error.startswith(COST_EXCEEDED):  # fails in the API server too (failurePolicy Fail denies)
            yield Diagnostic(
                policy.name, (), f"policy {policy.name}: variable {name}: {error}", severity=policy.severity
            )
            return
        variables[name] = value if not error else None
    for validation in policy.validations:
        value, error = _run(engine, validation.expression, data)
        if error.startswith(UNDECIDED):
            yield _undecided(policy, validation.field_path, error)
            continue
        if error.startswith(COST_EXCEEDED):
            yield Diagnostic(
                policy.name,
                validation.field_path,
                f"policy {policy.name}: {error}",
                severity=policy.severity,
                on_key=bool(validation.field_path),
            )
            continue
        if error:
            yield Diagnostic(
                policy.name,
                validation.field_path,
                f"policy {policy.name} could not be evaluated offline on this object: {error}",
                severity=Severity.INFO,
                pinned=True,
            )
            continue
        if value is True:
            continue
        message = validation.message or f"failed: {validation.expression.text}"
        notes: tuple[str, ...] = ()
        if validation.message_expression is not None:
            text, message_error = _run(engine, validation.message_expression, data)
            if not message_error and isinstance(text, str) and text.strip():
                message = text
            elif message_error:  # the API server, too, falls back to the message (or the expression)
                notes = (f"its messageExpression failed: {message_error}",)
        yield Diagnostic(
            policy.name,
            validation.field_path,
            message,
            severity=policy.severity,
            on_key=bool(validation.field_path),
            notes=notes,
        )


_VARIABLE_READ = re.compile(r"""\bvariables\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*(?:"([^"]*)"|'([^']*)')\s*\])""")


def read_variables(policy: Policy) -> frozenset[str]:
    """The variables a validation reads, directly or through other variables: the API server evaluates a
    variable lazily, when an expression first reads it, so one nothing reads never fails a request."""
    texts = [v.expression.text for v in policy.validations]
    texts += [v.message_expression.text for v in policy.validations if v.message_expression is not None]
    defined = dict(policy.variables)
    read: set[str] = set()
    pending = texts
    while pending:
        found = {next(g for g in m.groups() if g is not None) for t in pending for m in _VARIABLE_READ.finditer(t)}
        new = {name for name in found if name in defined and name not in read}
        read |= new
        pending = [defined[name].text for name in new]
    return frozenset(read)


def _undecided(policy: Policy, path: Path, error: str) -> Diagnostic:
    """An evaluation that gave no answer in its time: neither a pass nor a failure (never more than info)."""
    brief, notes = split_long(f"policy {policy.name}: {error}")
    return Diagnostic(policy.name, path, brief, notes=notes, severity=Severity.INFO, pinned=True)


@cache
def policy_engine() -> CelEngine:
    """One CEL environment per process for every policy (expressions compile once each)."""
    return CelEngine(POLICY_VARIABLES, max_cost=PER_CALL_LIMIT)  # cel.CostLimit per expression, as the API server
