"""Loading policies: gpulint Policies and ValidatingAdmissionPolicies (with bindings and params), shape-checked with file:line:col."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel.engine import CelEngine, CelProblem
from gpulint.kube.features import DEFAULT as DEFAULT_GATES
from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import mapping, type_name
from gpulint.lint.checks import field_path
from gpulint.lint.findings import Path, Severity
from gpulint.lint.inputs.collect import collect_all
from gpulint.lint.inputs.loader import LocatedDocument, load_bytes
from gpulint.lint.inputs.objects import KubeObject, objects_in
from gpulint.lint.inputs.sources import SourceError
from gpulint.lint.policies.evaluation import parse_field_path, policy_engine
from gpulint.lint.policies.matching import labels_of, selector_matches
from gpulint.lint.policies.model import (
    ACTION_SEVERITY,
    NOT_OFFLINE_VARIABLES,
    POLICY_API,
    VAP_API,
    Expression,
    Match,
    Policy,
    PolicyError,
    Validation,
)

if TYPE_CHECKING:
    pass

# --------------------------------------------------------------------------- loading

_TYPE_WORDS: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


@dataclass
class _Loader:
    engine: CelEngine
    problems: list[str] = field(default_factory=list)
    kubernetes_version: str = DEFAULT_GATES.version  # the target cluster's (--kubernetes-version)
    # True for a ValidatingAdmissionPolicy's expressions: the API server compiles them with the libraries
    # its version gives new expressions (apiserver cel/environment base.go); gpulint's own policies run
    # only in gpulint and get every library
    versioned: bool = False

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
        if self.versioned and (not isinstance(compiled, CelProblem) or not compiled.evaluable):
            refused = self.engine.new_expression_problem(data, FeatureGates(self.kubernetes_version))
            if refused is not None:
                self.problem(obj, path, f"CEL {refused.message}", refused.offset)
                return None
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
    loader = replace(loader, versioned=True)  # the same problems list
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


# A library policy whose namespaces or models are placeholders: loaded only by its own name, never by
# gpulint:all (an example hard-coded to the namespaces of docs/policies.md would fail real repositories).
EXAMPLE_ANNOTATION = "gpulint.io/example"


@dataclass(frozen=True)
class LibraryPolicy:
    name: str
    path: FilePath
    example: str  # why it is an example ("" : ready to use as shipped)


def library() -> dict[str, LibraryPolicy]:
    """The policies shipped in rules/policies/, by name."""
    import yaml

    from gpulint.lint.data import data_dir

    found = {}
    for path in sorted((data_dir("rules") / "policies").glob("*.yaml")):
        try:
            document = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (OSError, yaml.YAMLError):
            document = None
        metadata = document.get("metadata") if isinstance(document, dict) else None
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        note = annotations.get(EXAMPLE_ANNOTATION) if isinstance(annotations, dict) else None
        found[path.stem] = LibraryPolicy(path.stem, path, str(note or ""))
    return found


def resolve(paths: tuple[str, ...]) -> list[str]:
    """``gpulint:NAME`` names a policy of the library shipped in rules/policies/; ``gpulint:all``
    every one of them that is ready to use as shipped (not the examples to adapt)."""
    out: list[str] = []
    for path in paths:
        if path.startswith(BUILTIN_PREFIX):
            name = path[len(BUILTIN_PREFIX) :]
            packaged = library()
            if name == "all":
                out.extend(str(p.path) for p in packaged.values() if not p.example)
            elif name in packaged:  # a plain name from the list, never a path (gpulint:../../x)
                out.append(str(packaged[name].path))
            else:
                raise PolicyError(
                    f"--policy {_shown(path)}: no such library policy (known: {', '.join(sorted(packaged))})"
                )
        else:
            out.append(path)
    return out


def load_policies(paths: tuple[str, ...], kubernetes_version: str = DEFAULT_GATES.version) -> list[Policy]:
    """gpulint Policies and ValidatingAdmissionPolicies (+ bindings, params) from files or directories; a
    ValidatingAdmissionPolicy's CEL as an API server of ``kubernetes_version`` compiles it."""
    loader = _Loader(policy_engine(), kubernetes_version=kubernetes_version)
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
            candidates = [o for o in candidates if selector_matches(selector, labels_of(o))]
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
        str(binding_name or ""),
    )


def cluster_policies(located: Sequence[tuple[dict[str, Any], str]], kubernetes_version: str) -> tuple[Policy, ...]:
    """The cluster's own ValidatingAdmissionPolicies with their bindings, from (object, file) pairs (an
    inventory's). A policy or binding the loader finds fault with is left out rather than failing the run: the
    API server would not have stored it as it is, and the user did not give it to gpulint as a rule."""
    documents = (LocatedDocument(path=file, index=0, data=data, node=None) for data, file in located)
    objects = [obj for document in documents for obj in objects_in(document)]
    vaps: dict[str, dict[str, Any]] = {}
    for obj in objects:
        if obj.kind == "ValidatingAdmissionPolicy":
            loader = _Loader(policy_engine(), kubernetes_version=kubernetes_version)
            name, parsed = _vap(loader, obj)
            if name and not loader.problems:
                vaps.setdefault(name, parsed)
    policies = []
    for obj in objects:
        if obj.kind == "ValidatingAdmissionPolicyBinding":
            loader = _Loader(policy_engine(), kubernetes_version=kubernetes_version)
            policy = _bound(loader, obj, vaps, [])
            if policy is not None and not loader.problems:
                policies.append(policy)
    return tuple(policies)


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


def cached_policies(paths: tuple[str, ...], kubernetes_version: str = DEFAULT_GATES.version) -> tuple[Policy, ...]:
    return _cached_policies(paths, policy_signature(paths), kubernetes_version)


# Policy sets remembered by their files' signature: a webhook reads them again each time the files change (a
# ConfigMap update), for months; a bounded memo drops the old ones.
POLICY_SETS = 8


@lru_cache(maxsize=POLICY_SETS)
def _cached_policies(paths: tuple[str, ...], signature: tuple[Any, ...], kubernetes_version: str) -> tuple[Policy, ...]:
    return tuple(load_policies(paths, kubernetes_version))
