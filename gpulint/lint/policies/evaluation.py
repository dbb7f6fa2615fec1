"""Evaluating a policy on an object offline: CEL with the object, its pod specs, the inventory and the linted objects."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel.actual_cost import Composition
from gpulint.kube.cel.cost import U64
from gpulint.kube.cel.engine import COST_EXCEEDED, NO_VERDICT, PER_CALL_LIMIT, CelEngine, Compiled
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.findings import Diagnostic, Path, Severity, split_long
from gpulint.lint.inputs.objects import KubeObject
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


def pod_specs(sites: Iterable[PodSpecSite]) -> list[dict[str, Any]]:
    return [
        {"path": ".".join(str(p) for p in site.path), "spec": site.spec, "pods": site.pods, "role": site.role}
        for site in sites
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
        "podSpecs": pod_specs(obj.facts.sites()),
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
    matched = _match_conditions(policy, data, engine)
    if isinstance(matched, Diagnostic):
        yield matched
    if matched is not True:
        return
    defined = {name: expression for name, expression in policy.variables}
    values: dict[str, Any] = {}
    failed: dict[str, str] = {}  # a variable's error, which only an expression that reads it meets
    data = {**data, "variables": values}
    for name in read_variables(policy):  # in definition order; one nothing reads is never evaluated
        value, error = _run(engine, defined[name], data)
        if error:  # left out of the map: reading it fails there, as reading it fails in the API server
            failed[name] = f'composited variable "{name}" fails to evaluate: {_as_read(error, failed)}'
        else:
            values[name] = value
    budget = CostBudget.of(RUNTIME_BUDGET, engine, data, defined)
    results = []
    for validation in policy.validations:
        value, error = _run(engine, validation.expression, data)
        results.append((validation, value, _as_read(error, failed)))
        if budget.spend(validation.expression):
            yield _out_of_budget(policy, budget, "the validations and the variables they read")
            return
    # validator.go: every messageExpression is evaluated, in a new composition context, on what is left; out
    # of budget there turns every decision into an error, passing ones too
    budget.new_context()
    for validation in policy.validations:
        if validation.message_expression is not None and budget.spend(validation.message_expression):
            yield _out_of_budget(
                policy,
                budget,
                "the validations, their messageExpressions and the variables they read",
                "failed messageExpression: ",
            )
            return
    for validation, value, error in results:
        cause = _cause(error)
        if cause.startswith(NO_VERDICT):
            yield _undecided(policy, validation.field_path, error)
            continue
        if cause.startswith(COST_EXCEEDED):  # fails in the API server too (failurePolicy Fail denies)
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
            message_error = _as_read(message_error, failed)
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


def _match_conditions(policy: Policy, data: dict[str, Any], engine: CelEngine) -> bool | Diagnostic:
    """matchconditions/matcher.go: every condition is evaluated (within their own budget); any false means no
    match, whatever the others did; then an error fails the policy (failurePolicy Fail, the default)."""
    conditions = policy.match.conditions
    if not conditions:
        return True
    budget = CostBudget.of(MATCH_CONDITIONS_BUDGET, engine, data, {name: e for name, e in policy.variables})
    errors: list[tuple[str, str]] = []
    false = False
    for name, expression in conditions:
        value, error = _run(engine, expression, data)
        if budget.spend(expression):
            return _out_of_budget(policy, budget, "its matchConditions")
        if error:
            errors.append((name, error))
        elif value is not True:
            false = True
    if false:
        return False
    for name, error in errors:
        if _cause(error).startswith(COST_EXCEEDED):
            return Diagnostic(
                policy.name, (), f"policy {policy.name}: matchCondition {name}: {error}", severity=policy.severity
            )
    if errors:
        name, error = errors[0]
        return _not_offline(policy, f"matchCondition {name}: {error}")
    return True


RUNTIME_BUDGET = 10_000_000  # k8s.io/apiserver v0.37.2 pkg/apis/cel/config.go RuntimeCELCostBudget, per binding
MATCH_CONDITIONS_BUDGET = 2_500_000  # RuntimeCELCostBudgetMatchConditions, per object
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
_COMPOSITED = re.compile(r'^composited variable "[^"]*" fails to evaluate: ')
_MISSING_VARIABLE = re.compile(r"no such key: ([A-Za-z_]\w*)")


def _as_read(error: str, failed: dict[str, str]) -> str:
    """The error as the API server words it when it is a failed variable's (left out of the map here)."""
    missing = _MISSING_VARIABLE.fullmatch(error) if failed else None
    return failed[missing.group(1)] if missing is not None and missing.group(1) in failed else error


def _cause(error: str) -> str:
    """The error under the variables it came through."""
    while _COMPOSITED.match(error):
        error = _COMPOSITED.sub("", error, count=1)
    return error


@dataclass
class CostBudget:
    """One evaluation set's runtime cost budget, spent as the API server spends it (pkg/admission/plugin/cel
    activation.go Evaluate): each expression's actual cost, plus that of the variables it reads first. Held
    from both sides: ``high`` sums the estimates' maxima (cached: cheap); only once that passes the budget is
    cel-go's actual cost counted, from below (``low``), for every expression so far. Out of budget only when
    ``low`` passes it: never on a guess."""

    limit: int
    engine: CelEngine
    data: dict[str, Any]
    variables: dict[str, Expression]
    composition: Composition
    high: int = 0
    low: int = 0
    charged: set[str] = field(default_factory=set)  # variables in ``high`` already
    pending: list[tuple[Compiled, Composition]] = field(default_factory=list)  # spent, not yet counted

    @classmethod
    def of(cls, limit: int, engine: CelEngine, data: dict[str, Any], variables: dict[str, Expression]) -> CostBudget:
        plain = {name: value for name, value in data.items() if name != "variables"}
        checked = {name: e.compiled.checked if e.compiled is not None else None for name, e in variables.items()}
        return cls(limit, engine, data, variables, Composition(checked, plain, engine.max_cost, engine.counted_library))

    def new_context(self) -> None:
        """A new ForInput: variables are evaluated, and charged, again on their first read."""
        self.charged = set()
        old = self.composition
        self.composition = Composition(old.expressions, old.data, old.limit, old.library)

    def spend(self, expression: Expression) -> bool:
        """Charge one evaluation of ``expression``; True: the API server has run out of budget by now."""
        compiled = expression.compiled
        if compiled is None:
            return False  # not evaluable here: nothing is known of its cost
        reads = reached_variables([expression.text], self.variables) - self.charged
        self.charged |= reads
        self.high += self.engine.cost_ceiling(compiled, self.data)
        for name in reads:
            read = self.variables[name].compiled
            self.high += self.engine.cost_ceiling(read, self.data) if read is not None else U64
        self.pending.append((compiled, self.composition))
        if self.high <= self.limit:
            return False
        for counted_one, composition in self.pending:
            counted = self.engine.count(counted_one, self.data, composition)
            self.low += (counted.cost if counted is not None else 0) + composition.take()
            if self.low > self.limit:
                return True
        self.pending.clear()
        return False


def failed_to_evaluate(message: str) -> bool:
    """A finding of an evaluation that failed (a cost limit or the budget exceeded), not of a false validation: the
    API server's failurePolicy decides it (validating/validator.go: Fail denies, Ignore admits)."""
    return COST_EXCEEDED in message or OUT_OF_BUDGET in message


def _out_of_budget(policy: Policy, budget: CostBudget, what: str, prefix: str = "") -> Diagnostic:
    return Diagnostic(
        policy.name,
        (),
        f"policy {policy.name}: {prefix}{OUT_OF_BUDGET} ({what} cost at least {budget.low:,} as Kubernetes counts it, "
        f"over its budget of {budget.limit:,})",
        severity=policy.severity,
    )


_VARIABLE_READ = re.compile(r"""\bvariables\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*(?:"([^"]*)"|'([^']*)')\s*\])""")


def read_variables(policy: Policy) -> list[str]:
    """The variables a validation may read, directly or through other variables, in definition order: the API
    server evaluates a variable lazily, when an expression first reads it, so one nothing reads never fails a
    request (one read only behind a short circuit fails only where it is read: _as_read)."""
    texts = [v.expression.text for v in policy.validations]
    texts += [v.message_expression.text for v in policy.validations if v.message_expression is not None]
    read = reached_variables(texts, dict(policy.variables))
    return [name for name, _ in policy.variables if name in read]


def reached_variables(texts: list[str], defined: dict[str, Expression]) -> set[str]:
    """The variables ``texts`` name, directly or through the variables they name."""
    read: set[str] = set()
    pending = texts
    while pending:
        found = {next(g for g in m.groups() if g is not None) for t in pending for m in _VARIABLE_READ.finditer(t)}
        new = {name for name in found if name in defined and name not in read}
        read |= new
        pending = [defined[name].text for name in new]
    return read


def _undecided(policy: Policy, path: Path, error: str) -> Diagnostic:
    """An evaluation that gave no answer (no CPU time, or a map key gpulint cannot hold): neither a pass nor a
    failure (never more than info)."""
    brief, notes = split_long(f"policy {policy.name}: {error}")
    return Diagnostic(policy.name, path, brief, notes=notes, severity=Severity.INFO, pinned=True)


@cache
def policy_engine() -> CelEngine:
    """One CEL environment per process for every policy (expressions compile once each)."""
    return CelEngine(POLICY_VARIABLES, max_cost=PER_CALL_LIMIT)  # cel.CostLimit per expression, as the API server
