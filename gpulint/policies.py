"""Policies as code: team rules in CEL (``gpulint.io/v1alpha1`` Policy), and the cluster's
ValidatingAdmissionPolicies (with their bindings and params) evaluated offline.

A policy becomes a rule like any built-in one: its id is ``metadata.name``, its docs come
from ``spec.docs``, and its findings go through the same suppressions, formats, exit codes
and webhook. Policies are validated when loaded (shape and CEL) with file:line:col errors.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path as FilePath
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from gpulint.cel import CelEngine, CelProblem, Compiled
from gpulint.findings import Diagnostic, Path, Severity
from gpulint.loader import LocatedDocument, load_bytes
from gpulint.objects import KubeObject, objects_in
from gpulint.sources import SourceError, collect
from gpulint.workloads import pod_spec_sites
from gpulint.fields import mapping

if TYPE_CHECKING:
    from gpulint.checks import CheckContext

POLICY_API = "gpulint.io/v1alpha1"
VAP_API = "admissionregistration.k8s.io/v1"
POLICY_VARIABLES = ("object", "oldObject", "podSpecs", "inventory", "objects", "variables", "params", "request",
                    "namespaceObject", "authorizer")
NOT_OFFLINE_VARIABLES = ("authorizer",)
RUNTIME_COST_BUDGET = 10_000_000  # kubernetes/apiserver RuntimeCELCostBudget (CRD and VAP validation)
ACTION_SEVERITY = {"Deny": Severity.ERROR, "Warn": Severity.WARNING, "Audit": Severity.INFO}
_IRREGULAR_PLURALS = {"Endpoints": "endpoints", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
                      "PodSecurityPolicy": "podsecuritypolicies", "StorageClass": "storageclasses",
                      "PriorityClass": "priorityclasses", "DeviceClass": "deviceclasses",
                      "RuntimeClass": "runtimeclasses", "IngressClass": "ingressclasses"}


class PolicyError(Exception):
    """Policies that cannot be loaded: a usage error (exit 2) listing file:line:col problems."""


@dataclass(frozen=True)
class Expression:
    text: str
    path: Path  # inside the policy document, for load errors
    compiled: Compiled | None = None
    not_offline: str = ""  # why it cannot be evaluated offline


@dataclass(frozen=True)
class Validation:
    expression: Expression
    message: str
    message_expression: Expression | None
    field_path: Path


@dataclass
class Match:
    kinds: tuple[str, ...] = ()  # "Pod", "apps/Deployment", "*"
    resources: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = ()  # (groups, versions, resources)
    namespaces: tuple[str, ...] = ()
    label_selector: dict[str, Any] | None = None
    namespace_selector: dict[str, Any] | None = None
    conditions: tuple[tuple[str, Expression], ...] = ()


@dataclass
class Policy:
    name: str
    severity: Severity
    match: Match
    variables: tuple[tuple[str, Expression], ...]
    validations: tuple[Validation, ...]
    docs: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    params: tuple[dict[str, Any], ...] = ()  # VAP: the params objects the binding selects
    needs_params: bool = False
    extra_matches: tuple[Match, ...] = ()  # VAP binding matchResources

    @property
    def uses_objects(self) -> bool:
        texts = [e.text for _, e in self.variables] + [v.expression.text for v in self.validations]
        return any(re.search(r"\bobjects\b", t) for t in texts)


# --------------------------------------------------------------------------- loading

@dataclass
class _Loader:
    engine: CelEngine
    problems: list[str] = field(default_factory=list)

    def problem(self, document: LocatedDocument, path: Path, message: str, offset: int | None = None) -> None:
        line, column = document.locate_in_string(path, offset) if offset is not None else document.locate(path)
        self.problems.append(f"{document.path}:{line}:{column}: policy: {message}")

    def expression(self, document: LocatedDocument, data: Any, path: Path) -> Expression | None:
        if not isinstance(data, str) or not data.strip():
            self.problem(document, path, "an expression must be a non-empty string")
            return None
        uses = [v for v in NOT_OFFLINE_VARIABLES if re.search(rf"\b{v}\b", data)]
        if uses:  # the authorizer's library is the API server's: not compiled, not evaluated here
            return Expression(data, path, None, f"uses '{uses[0]}', which only the API server has")
        compiled = self.engine.compile(data)
        if isinstance(compiled, CelProblem):
            if compiled.evaluable:
                self.problem(document, path, f"CEL {compiled.message}", compiled.offset)
                return None
            return Expression(data, path, None, compiled.message)
        return Expression(data, path, compiled)


def _list(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _validations(loader: _Loader, document: LocatedDocument, raw: Any, base: Path) -> tuple[Validation, ...]:
    out = []
    if not isinstance(raw, list) or not raw:
        loader.problem(document, base, "validations must be a non-empty list")
        return ()
    for index, item in enumerate(raw):
        path = (*base, index)
        if not isinstance(item, dict):
            loader.problem(document, path, "a validation must be a mapping")
            continue
        expression = loader.expression(document, item.get("expression"), (*path, "expression"))
        message_expression = None
        if "messageExpression" in item:
            message_expression = loader.expression(document, item["messageExpression"], (*path, "messageExpression"))
        field_path = parse_field_path(item.get("fieldPath")) if item.get("fieldPath") else ()
        if field_path is None:
            loader.problem(document, (*path, "fieldPath"), f"fieldPath {item.get('fieldPath')!r} is not a field path "
                                                           "such as spec.containers[0].resources")
            field_path = ()
        if expression is not None:
            out.append(Validation(expression, str(item.get("message") or ""), message_expression, field_path))
    return tuple(out)


def _variables(loader: _Loader, document: LocatedDocument, raw: Any, base: Path) -> tuple[tuple[str, Expression], ...]:
    out = []
    for index, item in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            expression = loader.expression(document, item.get("expression"), (*base, index, "expression"))
            if expression is not None:
                out.append((item["name"], expression))
        else:
            loader.problem(document, (*base, index), "a variable needs a name and an expression")
    return tuple(out)


def _gpulint_policy(loader: _Loader, document: LocatedDocument, data: dict[str, Any]) -> Policy | None:
    spec = data.get("spec")
    name = (data.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
        loader.problem(document, ("metadata", "name"), "metadata.name (the rule id) must be a kebab-case name")
        return None
    if not isinstance(spec, dict):
        loader.problem(document, ("spec",), "spec is required")
        return None
    try:
        severity = Severity.parse(str(spec.get("severity", "error")))
    except ValueError as exc:
        loader.problem(document, ("spec", "severity"), str(exc))
        severity = Severity.ERROR
    raw_match = mapping(spec.get("match"))
    match = Match(kinds=_list(raw_match.get("kinds")), namespaces=_list(raw_match.get("namespaces")),
                  label_selector=raw_match.get("labelSelector") if isinstance(raw_match.get("labelSelector"), dict)
                  else None)
    return Policy(name, severity, match, _variables(loader, document, spec.get("variables"), ("spec", "variables")),
                  _validations(loader, document, spec.get("validations"), ("spec", "validations")),
                  mapping(spec.get("docs")), document.path)


def _vap(loader: _Loader, document: LocatedDocument, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    spec = mapping(data.get("spec"))
    constraints = mapping(spec.get("matchConstraints"))
    conditions = []
    for index, item in enumerate(spec.get("matchConditions") or []):
        if isinstance(item, dict):
            expression = loader.expression(document, item.get("expression"), ("spec", "matchConditions", index,
                                                                               "expression"))
            if expression is not None:
                conditions.append((str(item.get("name") or index), expression))
    parsed = {
        "match": _resource_match(constraints, tuple(conditions)),
        "variables": _variables(loader, document, spec.get("variables"), ("spec", "variables")),
        "validations": _validations(loader, document, spec.get("validations"), ("spec", "validations")),
        "paramKind": spec.get("paramKind") if isinstance(spec.get("paramKind"), dict) else None,
        "source": document.path,
    }
    return str((data.get("metadata") or {}).get("name") or ""), parsed


def _resource_match(constraints: dict[str, Any], conditions: tuple = ()) -> Match:
    resources = []
    for rule in constraints.get("resourceRules") or []:
        if isinstance(rule, dict) and ("CREATE" in _list(rule.get("operations")) or "*" in _list(rule.get("operations"))):
            resources.append((_list(rule.get("apiGroups")), _list(rule.get("apiVersions")), _list(rule.get("resources"))))
    return Match(resources=tuple(resources) or ((("*",), ("*",), ("__none__",)),),
                 namespace_selector=constraints.get("namespaceSelector") or None,
                 label_selector=constraints.get("objectSelector") or None, conditions=conditions)


BUILTIN_PREFIX = "gpulint:"


def resolve(paths: tuple[str, ...]) -> list[str]:
    """``gpulint:NAME`` (or ``gpulint:all``) names a policy of the library shipped in rules/policies/."""
    from gpulint.data import data_dir

    out = []
    for path in paths:
        if path.startswith(BUILTIN_PREFIX):
            name = path[len(BUILTIN_PREFIX):]
            library = data_dir("rules") / "policies"
            if name == "all":
                out.extend(str(p) for p in sorted(library.glob("*.yaml")))
            elif (library / f"{name}.yaml").is_file():
                out.append(str(library / f"{name}.yaml"))
            else:
                known = ", ".join(sorted(p.stem for p in library.glob("*.yaml")))
                raise PolicyError(f"--policy {path}: no such library policy (known: {known})")
        else:
            out.append(path)
    return out


def load_policies(paths: tuple[str, ...]) -> list[Policy]:
    """gpulint Policies and ValidatingAdmissionPolicies (+ bindings, params) from files or directories."""
    loader = _Loader(policy_engine())
    try:
        sources = collect(resolve(paths))
    except SourceError as exc:
        raise PolicyError(f"--policy: {exc}") from None
    policies: list[Policy] = []
    vaps: dict[str, dict[str, Any]] = {}
    bindings: list[tuple[LocatedDocument, dict[str, Any]]] = []
    others: list[dict[str, Any]] = []
    for source in sources:
        loaded = load_bytes(source.display, source.read())
        loader.problems.extend(f"{source.display}:{p.line}:{p.column}: policy: {p.message}" for p in loaded.problems)
        for document in loaded.documents:
            for obj in objects_in(document):
                if obj.api_version == POLICY_API and obj.kind == "Policy":
                    policy = _gpulint_policy(loader, document, obj.data)
                    if policy is not None:
                        policies.append(policy)
                elif obj.api_version == VAP_API and obj.kind == "ValidatingAdmissionPolicy":
                    name, parsed = _vap(loader, document, obj.data)
                    vaps[name] = parsed
                elif obj.api_version == VAP_API and obj.kind == "ValidatingAdmissionPolicyBinding":
                    bindings.append((document, obj.data))
                else:
                    others.append(obj.data)  # params objects
    for document, binding in bindings:
        policy = _bound(loader, document, binding, vaps, others)
        if policy is not None:
            policies.append(policy)
    if loader.problems:
        raise PolicyError("the policies cannot be loaded:\n" + "\n".join(loader.problems))
    return policies


def _bound(loader: _Loader, document: LocatedDocument, binding: dict[str, Any], vaps: dict[str, dict[str, Any]],
           others: list[dict[str, Any]]) -> Policy | None:
    spec = mapping(binding.get("spec"))
    name = spec.get("policyName")
    if name not in vaps:
        loader.problem(document, ("spec", "policyName"), f"binding names ValidatingAdmissionPolicy {name!r}, "
                                                         "which the policy files do not define")
        return None
    vap = vaps[name]
    actions = _list(spec.get("validationActions")) or ("Deny",)
    severity = max(ACTION_SEVERITY.get(a, Severity.ERROR) for a in actions)
    params: tuple[dict[str, Any], ...] = ()
    kind = vap["paramKind"]
    reference = spec.get("paramRef") if isinstance(spec.get("paramRef"), dict) else None
    if kind and reference:
        candidates = [o for o in others if o.get("kind") == kind.get("kind")
                      and o.get("apiVersion") == kind.get("apiVersion")]
        if isinstance(reference.get("name"), str):
            candidates = [o for o in candidates if (o.get("metadata") or {}).get("name") == reference["name"]]
        elif isinstance(reference.get("selector"), dict):
            candidates = [o for o in candidates if selector_matches(reference["selector"],
                                                                    (o.get("metadata") or {}).get("labels") or {})]
        params = tuple(candidates)
    extra = ()
    if isinstance(spec.get("matchResources"), dict):
        extra = (_resource_match(spec["matchResources"]) if spec["matchResources"].get("resourceRules")
                 else Match(namespace_selector=spec["matchResources"].get("namespaceSelector") or None,
                            label_selector=spec["matchResources"].get("objectSelector") or None),)
    return Policy(str(name), severity, vap["match"], vap["variables"], vap["validations"],
                  {"summary": f"ValidatingAdmissionPolicy {name} (binding {(binding.get('metadata') or {}).get('name')},"
                              f" {'/'.join(actions)})"}, vap["source"], params, bool(kind), extra)


# --------------------------------------------------------------------------- matching

def selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """A metav1.LabelSelector (matchLabels ANDed with matchExpressions)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        values = [str(v) for v in expression.get("values") or []]
        present = key in labels
        if operator == "In" and not (present and str(labels[key]) in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def resource_name(kind: str) -> str:
    if kind in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[kind]
    lower = kind.lower()
    if lower.endswith("y") and not lower.endswith(("ay", "ey", "oy")):
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def _matches_resources(match: Match, obj: KubeObject) -> bool:
    if not match.resources:
        return True
    group, _, version = obj.api_version.rpartition("/")
    plural = resource_name(obj.kind)
    return any((("*" in groups) or group in groups) and (("*" in versions) or version in versions)
               and (("*" in resources) or plural in resources) for groups, versions, resources in match.resources)


def _matches(match: Match, obj: KubeObject, namespaces: dict[str, dict[str, Any]]) -> bool | None:
    """True/False, or None when it depends on something no file holds (a namespace's labels)."""
    if match.kinds and "*" not in match.kinds:
        group = obj.api_version.rpartition("/")[0]
        if obj.kind not in match.kinds and f"{group}/{obj.kind}" not in match.kinds:
            return False
    if match.namespaces and obj.ref.namespace not in match.namespaces:
        return False
    if not _matches_resources(match, obj):
        return False
    labels = (obj.data.get("metadata") or {}).get("labels") or {}
    if match.label_selector is not None and not selector_matches(match.label_selector, labels):
        return False
    if match.namespace_selector and (match.namespace_selector.get("matchLabels")
                                     or match.namespace_selector.get("matchExpressions")):
        namespace = namespaces.get(obj.ref.namespace)
        if namespace is None:
            return None
        if not selector_matches(match.namespace_selector, (namespace.get("metadata") or {}).get("labels") or {}):
            return False
    return True


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
    return [{"path": ".".join(str(p) for p in site.path), "spec": site.spec, "pods": site.pods, "role": site.role}
            for site in pod_spec_sites(data)]


def inventory_view(ctx: CheckContext) -> dict[str, Any]:
    inventory = ctx.inventory
    if inventory is None:
        return {"nodes": [], "deviceClasses": [], "resourceSlices": []}
    return {"nodes": [located.data for located in inventory.node_objects.values()],
            "deviceClasses": [located.data for located in inventory.device_classes.values()],
            "resourceSlices": [located.data for located in inventory.slices]}


def policy_check(policy: Policy, engine_of: Callable[[], CelEngine]) -> Callable[[KubeObject, CheckContext],
                                                                                 Iterator[Diagnostic]]:
    def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
        yield from evaluate(policy, obj, ctx, engine_of())
    return check


def _not_offline(policy: Policy, why: str) -> Diagnostic:
    return Diagnostic(policy.name, (), f"policy {policy.name} cannot be evaluated offline: {why}",
                      severity=Severity.INFO)


def evaluate(policy: Policy, obj: KubeObject, ctx: CheckContext, engine: CelEngine) -> Iterator[Diagnostic]:
    namespaces = ctx.inventory.namespaces if ctx.inventory is not None else {}
    verdicts = [_matches(m, obj, namespaces) for m in (policy.match, *policy.extra_matches)]
    if any(v is False for v in verdicts):
        return
    if any(v is None for v in verdicts):
        yield _not_offline(policy, "its namespaceSelector needs the namespace's labels")
        return
    if policy.needs_params and not policy.params:
        yield _not_offline(policy, "no params object matches its binding's paramRef (add it to the policy files)")
        return
    data: dict[str, Any] = {
        "object": obj.data, "oldObject": None, "podSpecs": pod_specs(obj.data),
        "inventory": ctx.memo("policy-inventory", lambda: inventory_view(ctx)),
        "objects": ctx.inventory.linted_objects if ctx.inventory is not None else [],
        "request": {"operation": "CREATE", "namespace": obj.ref.namespace, "name": obj.ref.name,
                    "kind": {"group": obj.api_version.rpartition("/")[0], "version": obj.api_version.rpartition("/")[2],
                             "kind": obj.kind}},
        "namespaceObject": None, "authorizer": None, "variables": {},
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
    for name, expression in policy.variables:
        value, error = _run(engine, expression, data)
        variables[name] = value if not error else None
    for validation in policy.validations:
        value, error = _run(engine, validation.expression, data)
        if error:
            yield Diagnostic(policy.name, validation.field_path,
                             f"policy {policy.name} could not be evaluated offline on this object: {error}",
                             severity=Severity.INFO)
            continue
        if value is True:
            continue
        message = validation.message or f"failed: {validation.expression.text}"
        if validation.message_expression is not None:
            text, message_error = _run(engine, validation.message_expression, data)
            if not message_error and isinstance(text, str) and text.strip():
                message = text
        yield Diagnostic(policy.name, validation.field_path, message, severity=policy.severity,
                         on_key=bool(validation.field_path))


def policy_signature(paths: tuple[str, ...]) -> tuple[Any, ...]:
    """The policy files as they are now (a changed file is loaded again)."""
    entries: list[Any] = []
    for path in paths:
        target = FilePath(path)
        files = sorted(target.rglob("*")) if target.is_dir() else [target]
        for file in files:
            try:
                stat = file.stat()
            except OSError:
                continue
            entries.append((str(file), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


def cached_policies(paths: tuple[str, ...]) -> tuple[Policy, ...]:
    return _cached_policies(paths, policy_signature(paths))


@cache
def _cached_policies(paths: tuple[str, ...], signature: tuple[Any, ...]) -> tuple[Policy, ...]:
    return tuple(load_policies(paths))


@cache
def policy_engine() -> CelEngine:
    """One CEL environment per process for every policy (expressions compile once each)."""
    return CelEngine(POLICY_VARIABLES, max_cost=RUNTIME_COST_BUDGET)
