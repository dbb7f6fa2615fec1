"""The rules: each one's docs and default severity (rules/<id>.yaml) tied to its check."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from gpulint.checks import OBJECT_CHECKS, ObjectCheck
from gpulint.data import data_dir
from gpulint.findings import Severity

_REQUIRED = ("id", "severity", "summary", "what", "why", "kubernetes", "example", "use-instead")


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    what: str
    why: str
    kubernetes: tuple[str, ...]  # the Kubernetes rule it mirrors, with the source
    example: str  # a manifest that triggers it
    use_instead: str  # the same manifest, fixed
    fix_safety: str
    check: ObjectCheck | None  # None: reported by the loader, not by an object check

    def markdown(self) -> str:
        parts = [f"# {self.id} ({self.severity})", "", self.summary, "", "## What it does", "", self.what.strip(),
                 "", "## Why is this bad?", "", self.why.strip(), "", "## Kubernetes rule", ""]
        parts += [f"- {line}" for line in self.kubernetes]
        parts += ["", "## Example", "", "```yaml", self.example.rstrip(), "```", "",
                  "## Use instead", "", "```yaml", self.use_instead.rstrip(), "```"]
        if self.fix_safety:
            parts += ["", "## Fix safety", "", self.fix_safety.strip()]
        return "\n".join(parts) + "\n"


def _rule_from(raw: Any, source: str) -> Rule:
    if not isinstance(raw, dict) or any(key not in raw for key in _REQUIRED):
        raise ValueError(f"{source}: a rule file needs the keys {', '.join(_REQUIRED)}")
    rule_id = raw["id"]
    return Rule(
        id=rule_id,
        severity=Severity.parse(raw["severity"]),
        summary=str(raw["summary"]).strip(),
        what=str(raw["what"]),
        why=str(raw["why"]),
        kubernetes=tuple(str(line) for line in raw["kubernetes"]),
        example=str(raw["example"]),
        use_instead=str(raw["use-instead"]),
        fix_safety=str(raw.get("fix-safety", "")),
        check=OBJECT_CHECKS.get(rule_id),
    )


@cache
def all_rules() -> dict[str, Rule]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rules: dict[str, Rule] = {}
    for path in sorted(data_dir("rules").glob("*.yaml")):
        rule = _rule_from(yaml.load(path.read_text(encoding="utf-8"), Loader=loader), str(path))
        if rule.id != path.stem:
            raise ValueError(f"{path}: id {rule.id!r} does not match the file name")
        rules[rule.id] = rule
    missing = set(OBJECT_CHECKS) - set(rules)
    if missing:
        raise ValueError(f"checks without docs in rules/: {', '.join(sorted(missing))}")
    return rules


def policy_rules(paths: tuple[str, ...]) -> dict[str, Rule]:
    """Policies as rules: their id, severity, docs and check (several bindings of one VAP: one rule)."""
    from gpulint.policies import policy_signature

    return _policy_rules(paths, policy_signature(paths))


@cache
def _policy_rules(paths: tuple[str, ...], signature: tuple[Any, ...]) -> dict[str, Rule]:
    from gpulint.policies import PolicyError, cached_policies, policy_check, policy_engine

    policies = cached_policies(paths)

    builtin = all_rules()
    grouped: dict[str, list] = {}
    for policy in policies:
        if policy.name in builtin:
            raise PolicyError(f"{policy.source}: policy '{policy.name}' has the id of a built-in rule")
        grouped.setdefault(policy.name, []).append(policy)
    rules = {}
    for name, policies in grouped.items():
        first = policies[0]
        checks = [policy_check(policy, policy_engine) for policy in policies]
        docs = first.docs
        rules[name] = Rule(
            id=name, severity=max(p.severity for p in policies),
            summary=str(docs.get("summary") or f"team policy {name}"),
            what=str(docs.get("what") or docs.get("rationale") or "A team policy written in CEL."),
            why=str(docs.get("rationale") or "See the policy file."),
            kubernetes=(f"policy file {first.source}",),
            example=str(docs.get("example") or ""), use_instead=str(docs.get("useInstead") or docs.get("fix") or ""),
            fix_safety="", check=_combined(checks))
    return rules


def _combined(checks: list) -> ObjectCheck:
    def check(obj, ctx):  # type: ignore[no-untyped-def]
        for one in checks:
            yield from one(obj, ctx)
    return check
