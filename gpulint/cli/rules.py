"""`gpulint rules` and `gpulint rule NAME`: the built-in rules, the loaded policies and the shipped library."""

from __future__ import annotations

import json
from dataclasses import dataclass

from gpulint.lint.config import rule_hint
from gpulint.lint.policies import BUILTIN_PREFIX, PolicyError, library
from gpulint.lint.registry import Rule, policy_rules


@dataclass(frozen=True)
class LibraryEntry:
    name: str
    rule: Rule
    example: str  # "" : ready to use; else why it must be adapted first


def library_entries() -> list[LibraryEntry]:
    entries = []
    for name, policy in library().items():
        rule = policy_rules((f"{BUILTIN_PREFIX}{name}",)).get(name)
        if rule is not None:
            entries.append(LibraryEntry(name, rule, policy.example))
    return entries


def render_rules(rules: dict[str, Rule], output_format: str) -> str:
    shipped = library_entries()
    if output_format == "json":
        listed: list[dict[str, object]] = [
            {"id": r.id, "severity": str(r.severity), "summary": r.summary} for r in rules.values()
        ]
        listed += [
            {
                "id": f"{BUILTIN_PREFIX}{entry.name}",
                "severity": str(entry.rule.severity),
                "summary": entry.rule.summary,
                "library": True,
                "example": bool(entry.example),
            }
            for entry in shipped
            if entry.name not in rules
        ]
        return json.dumps(listed, indent=2) + "\n"
    width = max(len(rule_id) for rule_id in rules)
    lines = [f"{rule.id:<{width}}  {str(rule.severity):<7}  {rule.summary}" for rule in rules.values()]
    if shipped:
        lines += [
            "",
            "Library policies (--policy gpulint:NAME; gpulint:all loads those not marked example;",
            "`gpulint rule gpulint:NAME` prints one's docs):",
        ]
        names = [f"{BUILTIN_PREFIX}{entry.name}" for entry in shipped]
        width = max(map(len, names))
        for name, entry in zip(names, shipped, strict=True):
            mark = " (example: adapt before use)" if entry.example else ""
            lines.append(f"{name:<{width}}  {str(entry.rule.severity):<7}  {entry.rule.summary}{mark}")
    return "\n".join(lines) + "\n"


class UnknownRule(Exception):
    """A name `gpulint rule` cannot show: a usage error with the closest names."""


def rule_docs(name: str, rules: dict[str, Rule]) -> str:
    """The docs of ``name``: a rule, a loaded policy, or ``gpulint:NAME`` from the shipped library."""
    if name in rules:
        return rules[name].markdown()
    shipped = library()
    bare = name.removeprefix(BUILTIN_PREFIX)
    if bare in shipped and (name.startswith(BUILTIN_PREFIX) or bare not in rules):
        try:
            rule = policy_rules((f"{BUILTIN_PREFIX}{bare}",))[bare]
        except (PolicyError, KeyError) as exc:
            raise UnknownRule(f"gpulint rule: cannot load the library policy {name}: {exc}") from None
        text = rule.markdown()
        usage = f"Load it with `--policy {BUILTIN_PREFIX}{bare}`"
        if shipped[bare].example:
            usage += f". This is {shipped[bare].example}; `--policy gpulint:all` leaves it out"
        else:
            usage += " (or `--policy gpulint:all`)"
        heading, _, rest = text.partition("\n")
        return f"{heading}\n\n{usage}.\n{rest}"
    known = set(rules) | {f"{BUILTIN_PREFIX}{policy}" for policy in shipped}
    raise UnknownRule(
        f"gpulint rule: no rule or library policy '{name}'{rule_hint(name, known) or ' (`gpulint rules` lists them)'}"
    )
