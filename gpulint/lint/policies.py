"""Policies as code: team rules in CEL (``gpulint.io/v1alpha1`` Policy), and the cluster's
ValidatingAdmissionPolicies (with their bindings and params) evaluated offline.

A policy becomes a rule like any built-in one: its id is ``metadata.name``, its docs come
from ``spec.docs``, and its findings go through the same suppressions, formats, exit codes
and webhook. Policies are validated when loaded (shape and CEL) with file:line:col errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel.engine import COST_EXCEEDED, PER_CALL_LIMIT, CelEngine, CelProblem, Compiled
from gpulint.kube.fields import mapping, sequence, type_name
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.checks import field_path
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.loader import load_bytes
from gpulint.lint.objects import KubeObject, objects_in
from gpulint.lint.sources import SourceError, collect_all

if TYPE_CHECKING:
    from gpulint.lint.checks import CheckContext

POLICY_API = "gpulint.io/v1alpha1"
VAP_API = "admissionregistration.k8s.io/v1"
POLICY_VARIABLES = (
    "object",
    "oldObject",
    "podSpecs",
    "inventory",
    "objects",
    "variables",
    "params",
    "request",
    "namespaceObject",
    "authorizer",
)
NOT_OFFLINE_VARIABLES = ("authorizer",)
RUNTIME_COST_BUDGET = 10_000_000  # kubernetes/apiserver RuntimeCELCostBudget (CRD and VAP validation)
ACTION_SEVERITY = {"Deny": Severity.ERROR, "Warn": Severity.WARNING, "Audit": Severity.INFO}
_IRREGULAR_PLURALS = {
    "Endpoints": "endpoints",
    "Ingress": "ingresses",
    "NetworkPolicy": "networkpolicies",
    "PodSecurityPolicy": "podsecuritypolicies",
    "StorageClass": "storageclasses",
    "PriorityClass": "priorityclasses",
    "DeviceClass": "deviceclasses",
    "RuntimeClass": "runtimeclasses",
    "IngressClass": "ingressclasses",
}


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
    resources: tuple[
        tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...
    ] = ()  # (groups, versions, resources)
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

_TYPE_WORDS: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


@dataclass
class _Loader:
    engine: CelEngine
    problems: list[str] = field(default_factory=list)

    def problem(self, obj: KubeObject, path: Path, message: str, offset: int | None = None) -> None:
        line, column = obj.locate_in_string(path, offset) if offset is not None else obj.locate(path)
        self.problems.append(f"{obj.document.path}:{line}:{column}: policy: {message}")

    def typed(self, obj: KubeObject, path: Path, value: Any, kind: type, default: Any) -> Any:
        """``value`` when it is of ``kind`` (or ``default`` when absent); a wrong type is a problem."""
        if value is None:
            return default
        if isinstance(value, kind):
            return value
        self.problem(obj, path, f"{field_path(path)} must be {_TYPE_WORDS[kind]}, not {type_name(value)}")
        return default

    def strings(self, obj: KubeObject, path: Path, value: Any) -> tuple[str, ...]:
        """A list of strings (absent: empty)."""
        items = self.typed(obj, path, value, list, [])
        for index, item in enumerate(items):
            if not isinstance(item, str):
                self.problem(obj, (*path, index), f"{field_path(path)} must list strings, not {type_name(item)}")
                return ()
        return tuple(items)

    def selector(self, obj: KubeObject, path: Path, value: Any) -> dict[str, Any] | None:
        """A metav1.LabelSelector, checked so that matching it cannot fail (None when absent or broken)."""
        raw = self.typed(obj, path, value, dict, None)
        if raw is None:
            return None
        problems = len(self.problems)
        labels = self.typed(obj, (*path, "matchLabels"), raw.get("matchLabels"), dict, {})
        for key, label in labels.items():
            if isinstance(label, (dict, list)) or label is None:
                self.problem(
                    obj, (*path, "matchLabels", key), f"label {key!r} must be a string, not {type_name(label)}"
                )
        expressions = self.typed(obj, (*path, "matchExpressions"), raw.get("matchExpressions"), list, [])
        for index, expression in enumerate(expressions):
            where = (*path, "matchExpressions", index)
            if not isinstance(expression, dict):
                self.problem(obj, where, f"a match expression must be a mapping, not {type_name(expression)}")
                continue
            if not isinstance(expression.get("key"), str) or not expression["key"]:
                self.problem(obj, (*where, "key"), "a match expression needs a key (a string)")
            if expression.get("operator") not in _SELECTOR_OPERATORS:
                self.problem(
                    obj,
                    (*where, "operator"),
                    f"operator must be one of {', '.join(_SELECTOR_OPERATORS)}, "
                    f"not {_shown(expression.get('operator'))}",
                )
            self.strings(obj, (*where, "values"), expression.get("values"))
        return raw if len(self.problems) == problems else None

    def expression(self, obj: KubeObject, data: Any, path: Path) -> Expression | None:
        if not isinstance(data, str) or not data.strip():
            self.problem(obj, path, "an expression must be a non-empty string")
            return None
        uses = [v for v in NOT_OFFLINE_VARIABLES if re.search(rf"\b{v}\b", data)]
        if uses:  # the authorizer's library is the API server's: not compiled, not evaluated here
            return Expression(data, path, None, f"uses '{uses[0]}', which only the API server has")
        compiled = self.engine.compile(data)
        if isinstance(compiled, CelProblem):
            if compiled.evaluable:
                self.problem(obj, path, f"CEL {compiled.message}", compiled.offset)
                return None
            return Expression(data, path, None, compiled.message)
        return Expression(data, path, compiled)


def _shown(value: Any) -> str:
    """A user value in a message, bounded (a policy file may hold anything)."""
    text = repr(value) if isinstance(value, str) else type_name(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _list(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _validations(loader: _Loader, obj: KubeObject, raw: Any, base: Path) -> tuple[Validation, ...]:
    out = []
    if not isinstance(raw, list) or not raw:
        loader.problem(obj, base, "validations must be a non-empty list")
        return ()
    for index, item in enumerate(raw):
        path = (*base, index)
        if not isinstance(item, dict):
            loader.problem(obj, path, f"a validation must be a mapping, not {type_name(item)}")
            continue
        expression = loader.expression(obj, item.get("expression"), (*path, "expression"))
        message_expression = None
        if "messageExpression" in item:
            message_expression = loader.expression(obj, item["messageExpression"], (*path, "messageExpression"))
        field_path_text = item.get("fieldPath")
        parsed_path = parse_field_path(field_path_text) if field_path_text else ()
        if parsed_path is None:
            loader.problem(
                obj,
                (*path, "fieldPath"),
                f"fieldPath {_shown(field_path_text)} is not a field path such as spec.containers[0].resources",
            )
            parsed_path = ()
        message = loader.typed(obj, (*path, "message"), item.get("message"), str, "")
        if expression is not None:
            out.append(Validation(expression, message, message_expression, parsed_path))
    return tuple(out)


def _variables(loader: _Loader, obj: KubeObject, raw: Any, base: Path) -> tuple[tuple[str, Expression], ...]:
    out = []
    for index, item in enumerate(loader.typed(obj, base, raw, list, [])):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            expression = loader.expression(obj, item.get("expression"), (*base, index, "expression"))
            if expression is not None:
                out.append((item["name"], expression))
        else:
            loader.problem(obj, (*base, index), "a variable needs a name and an expression")
    return tuple(out)


def _metadata_name(loader: _Loader, obj: KubeObject, pattern: re.Pattern[str], message: str) -> str | None:
    """metadata.name when it is a string that matches ``pattern`` (else a problem, and None)."""
    metadata = obj.data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        loader.problem(obj, ("metadata",), f"metadata must be a mapping, not {type_name(metadata)}")
        return None
    name = mapping(metadata).get("name")
    if not isinstance(name, str) or not pattern.fullmatch(name):
        loader.problem(obj, ("metadata", "name"), message)
        return None
    return name


def _spec(loader: _Loader, obj: KubeObject) -> dict[str, Any] | None:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        loader.problem(
            obj, ("spec",), "spec is required" if spec is None else f"spec must be a mapping, not {type_name(spec)}"
        )
        return None
    return spec


def _gpulint_policy(loader: _Loader, obj: KubeObject) -> Policy | None:
    name = _metadata_name(loader, obj, _NAME, "metadata.name (the rule id) must be a kebab-case name")
    if name is None:
        return None
    spec = _spec(loader, obj)
    if spec is None:
        return None
    try:
        severity = Severity.parse(str(spec.get("severity", "error")))
    except ValueError as exc:
        loader.problem(obj, ("spec", "severity"), str(exc))
        severity = Severity.ERROR
    raw_match = loader.typed(obj, ("spec", "match"), spec.get("match"), dict, {})
    match = Match(
        kinds=loader.strings(obj, ("spec", "match", "kinds"), raw_match.get("kinds")),
        namespaces=loader.strings(obj, ("spec", "match", "namespaces"), raw_match.get("namespaces")),
        label_selector=loader.selector(obj, ("spec", "match", "labelSelector"), raw_match.get("labelSelector")),
    )
    return Policy(
        name,
        severity,
        match,
        _variables(loader, obj, spec.get("variables"), ("spec", "variables")),
        _validations(loader, obj, spec.get("validations"), ("spec", "validations")),
        loader.typed(obj, ("spec", "docs"), spec.get("docs"), dict, {}),
        obj.document.path,
    )


def _vap(loader: _Loader, obj: KubeObject) -> tuple[str, dict[str, Any]]:
    name = (
        _metadata_name(
            loader,
            obj,
            _DNS_SUBDOMAIN,
            "metadata.name must be a DNS subdomain name (lower case letters, digits, '-' and '.')",
        )
        or ""
    )
    spec = _spec(loader, obj) or {}
    constraints = loader.typed(obj, ("spec", "matchConstraints"), spec.get("matchConstraints"), dict, {})
    conditions = []
    for index, item in enumerate(loader.typed(obj, ("spec", "matchConditions"), spec.get("matchConditions"), list, [])):
        if not isinstance(item, dict):
            loader.problem(
                obj, ("spec", "matchConditions", index), f"a match condition must be a mapping, not {type_name(item)}"
            )
            continue
        expression = loader.expression(obj, item.get("expression"), ("spec", "matchConditions", index, "expression"))
        if expression is not None:
            conditions.append((str(item.get("name") or index), expression))
    parsed = {
        "match": _resource_match(loader, obj, constraints, ("spec", "matchConstraints"), tuple(conditions)),
        "variables": _variables(loader, obj, spec.get("variables"), ("spec", "variables")),
        "validations": _validations(loader, obj, spec.get("validations"), ("spec", "validations")),
        "paramKind": loader.typed(obj, ("spec", "paramKind"), spec.get("paramKind"), dict, None),
        "source": obj.document.path,
    }
    return name, parsed


def _resource_match(
    loader: _Loader, obj: KubeObject, constraints: dict[str, Any], base: Path, conditions: tuple = ()
) -> Match:
    resources = []
    for index, rule in enumerate(
        loader.typed(obj, (*base, "resourceRules"), constraints.get("resourceRules"), list, [])
    ):
        path = (*base, "resourceRules", index)
        if not isinstance(rule, dict):
            loader.problem(obj, path, f"a resource rule must be a mapping, not {type_name(rule)}")
            continue
        operations = loader.strings(obj, (*path, "operations"), rule.get("operations"))
        groups = loader.strings(obj, (*path, "apiGroups"), rule.get("apiGroups"))
        versions = loader.strings(obj, (*path, "apiVersions"), rule.get("apiVersions"))
        names = loader.strings(obj, (*path, "resources"), rule.get("resources"))
        if "CREATE" in operations or "*" in operations:
            resources.append((groups, versions, names))
    return Match(
        resources=tuple(resources) or ((("*",), ("*",), ("__none__",)),),
        namespace_selector=loader.selector(obj, (*base, "namespaceSelector"), constraints.get("namespaceSelector"))
        or None,
        label_selector=loader.selector(obj, (*base, "objectSelector"), constraints.get("objectSelector")) or None,
        conditions=conditions,
    )


BUILTIN_PREFIX = "gpulint:"


def resolve(paths: tuple[str, ...]) -> list[str]:
    """``gpulint:NAME`` (or ``gpulint:all``) names a policy of the library shipped in rules/policies/."""
    from gpulint.lint.data import data_dir

    out: list[str] = []
    for path in paths:
        if path.startswith(BUILTIN_PREFIX):
            name = path[len(BUILTIN_PREFIX) :]
            library = data_dir("rules") / "policies"
            packaged = {p.stem: p for p in sorted(library.glob("*.yaml"))}
            if name == "all":
                out.extend(str(p) for p in packaged.values())
            elif name in packaged:  # a plain name from the list, never a path (gpulint:../../x)
                out.append(str(packaged[name]))
            else:
                raise PolicyError(
                    f"--policy {_shown(path)}: no such library policy (known: {', '.join(sorted(packaged))})"
                )
        else:
            out.append(path)
    return out


def load_policies(paths: tuple[str, ...]) -> list[Policy]:
    """gpulint Policies and ValidatingAdmissionPolicies (+ bindings, params) from files or directories."""
    loader = _Loader(policy_engine())
    try:
        collected = collect_all(resolve(paths))
    except SourceError as exc:
        raise PolicyError(f"--policy: {exc}") from None
    sources = collected.sources
    # A policy file a directory walk had to skip (a broken link, a FIFO) is a rule silently not
    # enforced: refuse to run without it.
    loader.problems.extend(f"{note} (a policy file must be a regular file)" for note in collected.notes)
    policies: list[Policy] = []
    vaps: dict[str, dict[str, Any]] = {}
    bindings: list[KubeObject] = []
    others: list[dict[str, Any]] = []
    for source in sources:
        try:
            raw = source.read()
        except OSError as exc:  # a dangling symlink, a directory named *.yaml, no permission...
            loader.problems.append(f"{source.display}:1:1: policy: cannot read: {exc.strerror or exc}")
            continue
        loaded = load_bytes(source.display, raw)
        loader.problems.extend(f"{source.display}:{p.line}:{p.column}: policy: {p.message}" for p in loaded.problems)
        for document in loaded.documents:
            for obj in objects_in(document):
                if obj.api_version == POLICY_API and obj.kind == "Policy":
                    policy = _gpulint_policy(loader, obj)
                    if policy is not None:
                        policies.append(policy)
                elif obj.api_version == VAP_API and obj.kind == "ValidatingAdmissionPolicy":
                    name, parsed = _vap(loader, obj)
                    vaps[name] = parsed
                elif obj.api_version == VAP_API and obj.kind == "ValidatingAdmissionPolicyBinding":
                    bindings.append(obj)
                else:
                    others.append(obj.data)  # params objects
    for binding in bindings:
        policy = _bound(loader, binding, vaps, others)
        if policy is not None:
            policies.append(policy)
    if loader.problems:
        raise PolicyError("the policies cannot be loaded:\n" + "\n".join(loader.problems))
    return policies


def _bound(
    loader: _Loader, obj: KubeObject, vaps: dict[str, dict[str, Any]], others: list[dict[str, Any]]
) -> Policy | None:
    spec = _spec(loader, obj)
    if spec is None:
        return None
    name = spec.get("policyName")
    if not isinstance(name, str) or name not in vaps:
        loader.problem(
            obj,
            ("spec", "policyName"),
            f"binding names ValidatingAdmissionPolicy {_shown(name)}, which the policy files do not define",
        )
        return None
    vap = vaps[name]
    actions = loader.strings(obj, ("spec", "validationActions"), spec.get("validationActions")) or ("Deny",)
    unknown = [action for action in actions if action not in ACTION_SEVERITY]
    if unknown:
        loader.problem(
            obj,
            ("spec", "validationActions"),
            f"unknown validation action {_shown(unknown[0])} (one of {', '.join(ACTION_SEVERITY)})",
        )
    severity = max(ACTION_SEVERITY.get(a, Severity.ERROR) for a in actions)
    params: tuple[dict[str, Any], ...] = ()
    kind = vap["paramKind"]
    reference = loader.typed(obj, ("spec", "paramRef"), spec.get("paramRef"), dict, None)
    if kind and reference:
        candidates = [
            o for o in others if o.get("kind") == kind.get("kind") and o.get("apiVersion") == kind.get("apiVersion")
        ]
        selector = loader.selector(obj, ("spec", "paramRef", "selector"), reference.get("selector"))
        if isinstance(reference.get("name"), str):
            candidates = [o for o in candidates if mapping(o.get("metadata")).get("name") == reference["name"]]
        elif selector is not None:
            candidates = [o for o in candidates if selector_matches(selector, _labels(o))]
        params = tuple(candidates)
    extra: tuple[Match, ...] = ()
    resources = loader.typed(obj, ("spec", "matchResources"), spec.get("matchResources"), dict, None)
    if resources is not None:
        base = ("spec", "matchResources")
        extra = (
            _resource_match(loader, obj, resources, base)
            if resources.get("resourceRules")
            else Match(
                namespace_selector=loader.selector(
                    obj, (*base, "namespaceSelector"), resources.get("namespaceSelector")
                )
                or None,
                label_selector=loader.selector(obj, (*base, "objectSelector"), resources.get("objectSelector")) or None,
            ),
        )
    binding_name = mapping(obj.data.get("metadata")).get("name")
    return Policy(
        name,
        severity,
        vap["match"],
        vap["variables"],
        vap["validations"],
        {"summary": f"ValidatingAdmissionPolicy {name} (binding {binding_name}, {'/'.join(actions)})"},
        vap["source"],
        params,
        bool(kind),
        extra,
    )


def _labels(data: dict[str, Any]) -> dict[str, Any]:
    return mapping(mapping(data.get("metadata")).get("labels"))


# --------------------------------------------------------------------------- matching


def selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """A metav1.LabelSelector (matchLabels ANDed with matchExpressions); shapes checked when loaded."""
    for key, value in mapping(selector.get("matchLabels")).items():
        if key not in labels or _label_text(labels.get(key)) != _label_text(value):
            return False
    for expression in sequence(selector.get("matchExpressions")):
        expression = mapping(expression)
        label, operator = expression.get("key"), expression.get("operator")
        values = [_label_text(v) for v in sequence(expression.get("values"))]
        present = isinstance(label, str) and label in labels
        current = _label_text(labels[label]) if isinstance(label, str) and present else None
        if operator == "In" and not (present and current in values):
            return False
        if operator == "NotIn" and present and current in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _label_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
    group, version = obj.ref.group, obj.ref.version
    plural = resource_name(obj.kind)
    return any(
        (("*" in groups) or group in groups)
        and (("*" in versions) or version in versions)
        and (("*" in resources) or plural in resources)
        for groups, versions, resources in match.resources
    )


def _matches(match: Match, obj: KubeObject, namespaces: dict[str, dict[str, Any]]) -> bool | None:
    """True/False, or None when it depends on something no file holds (a namespace's labels)."""
    if match.kinds and "*" not in match.kinds:
        group = obj.ref.group
        if obj.kind not in match.kinds and f"{group}/{obj.kind}" not in match.kinds:
            return False
    if match.namespaces and obj.ref.namespace not in match.namespaces:
        return False
    if not _matches_resources(match, obj):
        return False
    labels = _labels(obj.data)
    if match.label_selector is not None and not selector_matches(match.label_selector, labels):
        return False
    if match.namespace_selector and (
        match.namespace_selector.get("matchLabels") or match.namespace_selector.get("matchExpressions")
    ):
        namespace = namespaces.get(obj.ref.namespace)
        if namespace is None:
            return None
        if not selector_matches(match.namespace_selector, _labels(namespace)):
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
    for name, expression in policy.variables:
        value, error = _run(engine, expression, data)
        if error.startswith(COST_EXCEEDED):  # fails in the API server too (failurePolicy Fail denies)
            yield Diagnostic(
                policy.name, (), f"policy {policy.name}: variable {name}: {error}", severity=policy.severity
            )
            return
        variables[name] = value if not error else None
    for validation in policy.validations:
        value, error = _run(engine, validation.expression, data)
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
        if validation.message_expression is not None:
            text, message_error = _run(engine, validation.message_expression, data)
            if not message_error and isinstance(text, str) and text.strip():
                message = text
        yield Diagnostic(
            policy.name, validation.field_path, message, severity=policy.severity, on_key=bool(validation.field_path)
        )


def policy_signature(paths: tuple[str, ...]) -> tuple[Any, ...]:
    """The policy files as they are now (a changed file is loaded again)."""
    entries: list[Any] = []
    for path in paths:
        target = FilePath(path)
        try:
            files = sorted(target.rglob("*")) if target.is_dir() else [target]
        except OSError:  # a name too long, a loop: load_policies says what is wrong with it
            files = [target]
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
    return CelEngine(POLICY_VARIABLES, max_cost=PER_CALL_LIMIT)  # cel.CostLimit per expression, as the API server
