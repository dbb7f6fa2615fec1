"""The rules: each one's docs and default severity (rules/<id>.yaml) tied to its check.

A rule file has these keys (unknown keys are refused, so a misspelt one cannot go unnoticed):

- ``id``, ``severity``, ``summary``, ``what``, ``why``, ``kubernetes`` (a list of sources),
  ``example`` (a manifest that triggers the rule) and ``use-instead`` (the same manifest, fixed);
- ``example-findings``: every finding the rule, run alone, reports on ``example``, as
  ``[line, column, "a fragment of the message"]`` lists - tests/rules/test_rule_docs.py compares the
  whole list, so a doc whose example stops firing (or fires twice) fails the tests;
- ``example-inventory``: optional, the cluster inventory both examples are linted against:
  ``rules/inventories/<name>.yaml`` or the folder ``rules/inventories/<name>/`` (shipped with
  gpulint, so ``gpulint rule <id>`` can name it);
- ``example-config`` / ``use-instead-config``: optional mappings with the keys of
  ``.gpulint.yaml`` (``feature-gates``, ``kubernetes-version``, ...) for that example's run;
- ``use-instead-allow``: optional ``{rule-id: reason}``. With every rule enabled, ``use-instead``
  must produce no error or warning except from the rules listed here;
- ``fix-safety``: optional, what ``--fix`` does and why it is safe;
- ``false-positives-avoided``: optional list, the look-alike cases the rule stays silent on
  (each taken from how real repositories are written, each with a test).

Which rules exist, their severity, kinds and needs come from ``gpulint/lint/rule_index.py``,
generated from the rule modules' SPECs (``python scripts/generate_rule_index.py``; a test holds
it in step): listing rules, validating a configuration or checking one Pod imports no check
module, and a run imports a rule's module when the first object of a kind it reads reaches it.

Library policies (rules/policies/) carry the same information in ``spec.docs`` in the
policy's camelCase: ``example``, ``useInstead``, ``exampleFindings``, ``exampleInventory``,
``exampleConfig``, ``useInsteadConfig``, ``useInsteadAllow``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache, lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

import yaml

from gpulint.kube.features import DEFAULT as DEFAULT_GATES
from gpulint.lint.checks import CheckContext, ObjectCheck
from gpulint.lint.data import data_dir
from gpulint.lint.findings import Diagnostic
from gpulint.lint.rule import ExpectedFinding, shipped_inventory
from gpulint.lint.rule import Rule as Rule  # re-exported: callers that load rules name their type from here
from gpulint.lint.rule_index import RULE_INDEX
from gpulint.lint.rule_spec import RuleSpec

CHECKS_PACKAGE = "gpulint.lint.checks"

if TYPE_CHECKING:
    from gpulint.lint.inputs.objects import KubeObject
    from gpulint.lint.policies import Policy

_REQUIRED = ("id", "summary", "what", "why", "kubernetes", "example", "use-instead", "example-findings")
_OPTIONAL = (
    "fix-safety",
    "false-positives-avoided",
    "example-inventory",
    "example-config",
    "use-instead-config",
    "use-instead-allow",
)


def _expected_findings(raw: Any, source: str, key: str) -> tuple[ExpectedFinding, ...]:
    def is_position(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1

    if not isinstance(raw, list):
        raise ValueError(f"{source}: '{key}' must be a list of [line, column, \"message fragment\"]")
    out = []
    for item in raw:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and is_position(item[0])
            and is_position(item[1])
            and isinstance(item[2], str)
            and item[2].strip()
        ):
            raise ValueError(
                f"{source}: '{key}' entry {item!r} is not [line, column, \"message fragment\"] "
                "(line and column from 1, a non-empty fragment)"
            )
        out.append((item[0], item[1], item[2]))
    return tuple(sorted(out))


def _mapping(raw: Any, source: str, key: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: '{key}' must be a mapping")
    return {str(k): v for k, v in raw.items()}


class DeferredCheck:
    """A built-in rule's check, imported when it is first needed (``resolve``); calling it resolves it."""

    __slots__ = ("module", "spec")

    def __init__(self, module: str, spec: RuleSpec) -> None:
        self.module = module  # the name inside gpulint.lint.checks
        self.spec = spec  # what the index says of it: the module's SPEC must say the same

    def resolve(self) -> ObjectCheck:
        return _imported_check(self.module, self.spec)

    def __call__(self, obj: KubeObject, *rest: Any) -> Iterator[Diagnostic]:
        return self.resolve()(obj, *rest)  # (ctx), or (site, ctx) for a pod-template check

    def __repr__(self) -> str:
        return f"DeferredCheck({self.module!r})"


def resolved(check: ObjectCheck) -> ObjectCheck:
    """The function a rule's check runs: a deferred check's module imported."""
    return check.resolve() if isinstance(check, DeferredCheck) else check


def import_checks(rules: dict[str, Rule]) -> None:
    """Every deferred check of these rules imported now (before forking workers, so each does not import them)."""
    for rule in rules.values():
        if rule.check is not None:
            resolved(rule.check)


@cache
def _imported_check(module_name: str, spec: RuleSpec) -> ObjectCheck:
    module = importlib.import_module(f"{CHECKS_PACKAGE}.{module_name}")
    if getattr(module, "SPEC", None) != spec or module.check is None:
        raise RuntimeError(
            f"gpulint/lint/rule_index.py is out of date for {module_name} (run python scripts/generate_rule_index.py)"
        )
    check: ObjectCheck = module.check
    return check


def _rule_from(raw: Any, source: str, spec: RuleSpec, check: ObjectCheck | None) -> Rule:
    if not isinstance(raw, dict) or any(key not in raw for key in _REQUIRED):
        raise ValueError(f"{source}: a rule file needs the keys {', '.join(_REQUIRED)}")
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {', '.join(unknown)} (optional keys: {', '.join(_OPTIONAL)})")
    rule_id = raw["id"]
    inventory = str(raw.get("example-inventory") or "")
    if inventory:
        try:
            shipped_inventory(inventory)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
    allow = _mapping(raw.get("use-instead-allow"), source, "use-instead-allow")
    if not all(isinstance(reason, str) and reason.strip() for reason in allow.values()):
        raise ValueError(f"{source}: every rule in 'use-instead-allow' needs a reason")
    for key in ("kubernetes", "false-positives-avoided"):  # a block string would read as one line per character
        if key in raw and not isinstance(raw[key], list):
            raise ValueError(f"{source}: '{key}' must be a list of lines")
    return Rule(
        id=rule_id,
        severity=spec.severity,
        summary=str(raw["summary"]).strip(),
        what=str(raw["what"]),
        why=str(raw["why"]),
        kubernetes=tuple(str(line) for line in raw["kubernetes"]),
        example=str(raw["example"]),
        use_instead=str(raw["use-instead"]),
        fix_safety=str(raw.get("fix-safety", "")),
        false_positives_avoided=tuple(str(line) for line in raw.get("false-positives-avoided") or ()),
        check=check,
        kinds=spec.kinds,
        needs=spec.needs,
        in_part=spec.in_part,
        scope=spec.scope,
        of_pods=spec.of_pods,
        example_findings=_expected_findings(raw["example-findings"], source, "example-findings"),
        example_inventory=inventory,
        example_config=_mapping(raw.get("example-config"), source, "example-config"),
        use_instead_config=_mapping(raw.get("use-instead-config"), source, "use-instead-config"),
        use_instead_allow=allow,
    )


@cache
def all_rules() -> dict[str, Rule]:
    """The built-in rules: every module of gpulint.lint.checks with a SPEC (as the rule index lists them, their
    checks deferred), and its docs in rules/<id>.yaml."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    indexed = {spec.id: (module, spec, has_check) for module, spec, has_check in RULE_INDEX}
    docs = {path.stem: path for path in sorted(data_dir("rules").glob("*.yaml"))}
    if set(indexed) != set(docs):
        raise ValueError(
            f"rules without docs in rules/: {', '.join(sorted(set(indexed) - set(docs))) or 'none'}; "
            f"docs without a rule module: {', '.join(sorted(set(docs) - set(indexed))) or 'none'}"
        )
    rules: dict[str, Rule] = {}
    for rule_id in sorted(indexed):
        path = docs[rule_id]
        module, spec, has_check = indexed[rule_id]
        check = DeferredCheck(module, spec) if has_check else None
        rule = _rule_from(yaml.load(path.read_text(encoding="utf-8"), Loader=loader), str(path), spec, check)
        if rule.id != path.stem:
            raise ValueError(f"{path}: id {rule.id!r} does not match the file name")
        rules[rule.id] = rule
    return rules


@cache
def rule_modules() -> dict[str, ModuleType]:
    """Rule id -> its module, every one imported: discovered, so adding a rule is adding a module (and its docs,
    and regenerating the rule index, which is what a run reads)."""
    import gpulint.lint.checks

    found = {}
    for info in pkgutil.iter_modules(gpulint.lint.checks.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{CHECKS_PACKAGE}.{info.name}")
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, RuleSpec):
            found[spec.id] = module
    return found


def policy_rules(paths: tuple[str, ...], kubernetes_version: str | None = None) -> dict[str, Rule]:
    """Policies as rules: their id, severity, docs and check (several bindings of one VAP: one rule); a
    ValidatingAdmissionPolicy's CEL compiled as an API server of ``kubernetes_version`` (default: the
    version gpulint targets) compiles it."""
    from gpulint.lint.policies import policy_signature

    return _policy_rules(paths, policy_signature(paths), kubernetes_version or DEFAULT_GATES.version)


@lru_cache(maxsize=8)  # bounded as policies.loading.POLICY_SETS: a webhook builds them again when the files change
def _policy_rules(paths: tuple[str, ...], signature: tuple[Any, ...], kubernetes_version: str) -> dict[str, Rule]:
    from gpulint.lint.policies import PolicyError, cached_policies, policy_check, policy_engine

    policies = cached_policies(paths, kubernetes_version)

    builtin = all_rules()
    grouped: dict[str, list[Policy]] = {}
    for policy in policies:
        if policy.name in builtin:
            raise PolicyError(f"{policy.source}: policy '{policy.name}' has the id of a built-in rule")
        grouped.setdefault(policy.name, []).append(policy)
    rules = {}
    for name, group in grouped.items():
        first = group[0]
        checks = [policy_check(policy, policy_engine) for policy in group]
        docs = first.docs
        rules[name] = Rule(
            id=name,
            severity=max(p.severity for p in group),
            summary=str(docs.get("summary") or f"team policy {name}"),
            what=str(docs.get("what") or docs.get("rationale") or "A team policy written in CEL."),
            why=str(docs.get("rationale") or "See the policy file."),
            kubernetes=(f"policy file {first.source}",),
            example=str(docs.get("example") or ""),
            use_instead=str(docs.get("useInstead") or docs.get("fix") or ""),
            fix_safety="",
            check=_combined(checks),
            reads_objects=any(p.uses_objects for p in group),
            **_policy_example_run(docs, first.source),
        )
    return rules


def _policy_example_run(docs: dict[str, Any], source: str) -> dict[str, Any]:
    """The example-run keys of a policy's docs. They only serve the docs and their tests, so a
    malformed one in a team's policy is left out rather than failing every run that loads it."""
    out: dict[str, Any] = {}
    for key, field_name, parse in (
        ("exampleFindings", "example_findings", _expected_findings),
        ("exampleConfig", "example_config", _mapping),
        ("useInsteadConfig", "use_instead_config", _mapping),
        ("useInsteadAllow", "use_instead_allow", _mapping),
    ):
        if key in docs:
            try:
                out[field_name] = parse(docs[key], source, key)
            except ValueError:
                continue
    name = docs.get("exampleInventory")
    if isinstance(name, str) and name:
        try:
            shipped_inventory(name)
            out["example_inventory"] = name
        except ValueError:
            pass
    return out


def _combined(checks: list[ObjectCheck]) -> ObjectCheck:
    def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
        for one in checks:
            yield from one(obj, ctx)

    return check


def rule_ids(policies: tuple[str, ...] = ()) -> set[str]:
    """Every rule id a run with these policies knows: built-in rules and policies alike."""
    return set(all_rules()) | (set(policy_rules(policies)) if policies else set())
