"""Suppressions: object annotations, line comments, file comments and per-path config.

- ``metadata.annotations["gpulint.io/ignore"]: "rule-a,rule-b # reason"`` (or ``-- reason``)
- ``# gpulint: disable=rule-a,rule-b -- reason`` at the end of the offending line, or alone on the line above
- ``# gpulint: disable-file=rule-a -- reason`` anywhere in the file (conventionally at the top)
``all`` matches every rule.

Every in-manifest suppression is a Directive with its place, so the engine can say which ones
name no rule (suppression-invalid, with the closest id), which lack a reason when the
configuration requires one, which sit where the configuration does not honour them
(``suppressions.disallow-in``), and - on request - which suppressed nothing (suppression-unused,
ruff's RUF100).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint.lint.findings import Finding
from gpulint.lint.paths import path_matches

if TYPE_CHECKING:
    from gpulint.kube.workloads import PodSpecSite

# The rule ids (comma-separated); anything after them is a free-text reason, conventionally after `--`.
_COMMENT = re.compile(r"#\s*gpulint:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)")
_REASON = re.compile(r"\s*(?:--|#)\s*(\S.*)")
ANNOTATION = "gpulint.io/ignore"
ALL = "all"


@dataclass(frozen=True)
class RuleId:
    name: str
    line: int
    column: int


@dataclass(frozen=True)
class Directive:
    """One in-manifest suppression: a `disable=`/`disable-file=` comment or a `gpulint.io/ignore` annotation."""

    kind: str  # "line", "file" or "annotation"
    line: int
    column: int
    ids: tuple[RuleId, ...]
    reason: str
    target: int = 0  # the line a `disable=` comment covers
    scope: Any = None  # an annotation's object and path prefix: (document index, object prefix, template path)

    def names(self) -> frozenset[str]:
        return frozenset(rule.name for rule in self.ids)

    def covers(self, rule: str) -> bool:
        names = self.names()
        return rule in names or ALL in names

    @property
    def spelled(self) -> str:
        if self.kind == "annotation":
            return f"annotation {ANNOTATION}"
        return f"comment `# gpulint: {'disable' if self.kind == 'line' else 'disable-file'}=...`"


def _ids_with_offsets(text: str, start: int) -> list[tuple[str, int]]:
    """The comma-separated ids in ``text`` with their offsets (``start`` added)."""
    out = []
    position = 0
    for part in text.split(","):
        stripped = part.strip()
        if stripped:
            out.append((stripped, start + position + part.index(stripped)))
        position += len(part) + 1
    return out


def annotation_directive(
    value: Any, scope: Any, locate: Callable[[int], tuple[int, int]], line: int, column: int
) -> Directive | None:
    """The annotation's directive; ``locate`` turns an offset in the value into line and column."""
    if not isinstance(value, str):
        return None
    head, sep, rest = value.partition("#")
    if not sep:
        head, sep, rest = value.partition(" -- ")
    ids = tuple(RuleId(name, *locate(offset)) for name, offset in _ids_with_offsets(head, 0))
    if not ids:
        return None
    return Directive("annotation", line, column, ids, rest.strip(), scope=scope)


def template_annotations(data: dict[str, Any], sites: Iterable[PodSpecSite]) -> list[tuple[tuple[Any, ...], str]]:
    """(template path, annotation value) of every pod template (``sites``, the object's) that carries the
    annotation."""
    from gpulint.kube.workloads import template_metadata

    found = []
    for site in sites:
        if not site.template_path:
            continue  # a Pod: its own metadata is the object's
        annotations = template_metadata(data, site).get("annotations")
        if isinstance(annotations, dict) and isinstance(annotations.get(ANNOTATION), str):
            found.append((tuple(site.template_path), annotations[ANNOTATION]))
    return found


@dataclass
class FileSuppressions:
    directives: list[Directive] = field(default_factory=list)

    @classmethod
    def scan(cls, text: str) -> FileSuppressions:
        found = cls()
        if "gpulint:" not in text:  # the common case costs one substring search
            return found
        for number, line in enumerate(text.splitlines(), 1):
            if "gpulint:" not in line:
                continue
            # A comment on a line of its own covers the next line; a trailing one, its own line.
            target = number + 1 if line.lstrip().startswith("#") else number
            for match in _COMMENT.finditer(line):
                ids = tuple(
                    RuleId(name, number, offset + 1)
                    for name, offset in _ids_with_offsets(match.group(2), match.start(2))
                )
                reason = _REASON.match(line, match.end())
                kind = "file" if match.group(1) == "disable-file" else "line"
                found.directives.append(
                    Directive(kind, number, match.start() + 1, ids, reason.group(1).strip() if reason else "", target)
                )
        return found


def path_ignores(path: str, per_path: dict[str, tuple[str, ...]], root: str) -> frozenset[str]:
    """Rules ignored for ``path`` by per-path-ignores globs (relative to the config's directory)."""
    if not per_path:
        return frozenset()
    ignored: set[str] = set()
    for glob, ids in per_path.items():
        if path_matches(path, glob, root):
            ignored.update(ids)
    return frozenset(ignored)


# --- applying them --------------------------------------------------------------------------

INVALID = "suppression-invalid"
UNUSED = "suppression-unused"


@dataclass(frozen=True)
class SuppressionPolicy:
    """What the configuration and the run say about one file's suppressions."""

    known: frozenset[str]  # every rule id a suppression may name (built-in rules, loaded policies)
    ran: frozenset[str]  # the rules that ran on this file: only their suppressions can be called unused
    require_reason: bool = False
    report_unused: bool = False
    disallowed_by: str = ""  # the `suppressions.disallow-in` glob that matches this file ("" : honoured)
    by_path: frozenset[str] = frozenset()  # per-path-ignores of this file


@dataclass(frozen=True)
class Problem:
    rule: str  # INVALID or UNUSED
    line: int
    column: int
    message: str
    notes: tuple[str, ...] = ()


def closest_rule(name: str, known: frozenset[str]) -> str:
    """The hint after an unknown id: the rule it most likely misspells, or where the ids are listed."""
    from gpulint.lint.config import rule_hint

    return rule_hint(name, known) or " (`gpulint rules` lists them)"


def apply(
    findings: list[tuple[Finding, tuple[Directive, ...]]],
    comments: list[Directive],
    annotations: list[Directive],
    policy: SuppressionPolicy,
) -> tuple[list[Finding], int, list[Problem]]:
    """The findings left after suppressions, how many were suppressed, and what is wrong with the
    suppressions themselves. Each finding comes with the annotation directives whose object (or pod
    template) holds it."""
    directives = [*comments, *annotations]
    honoured = {id(d): _honoured(d, policy) for d in directives}
    used: set[tuple[int, str]] = set()
    kept = []
    for finding, covering in findings:
        if finding.rule in policy.by_path or ALL in policy.by_path:
            continue
        candidates = [d for d in comments if d.kind == "file" or d.target == finding.line]
        candidates += covering
        hits = [d for d in candidates if honoured[id(d)] and d.covers(finding.rule)]
        for directive in hits:
            used.add((id(directive), finding.rule if finding.rule in directive.names() else ALL))
        if not hits:
            kept.append(finding)
    return kept, len(findings) - len(kept), _problems(directives, honoured, used, policy)


def _honoured(directive: Directive, policy: SuppressionPolicy) -> bool:
    if policy.disallowed_by:
        return False
    return bool(directive.reason) or not policy.require_reason


def _problems(
    directives: list[Directive], honoured: dict[int, bool], used: set[tuple[int, str]], policy: SuppressionPolicy
) -> list[Problem]:
    problems = []
    every_rule_ran = policy.known <= policy.ran
    for directive in directives:
        if policy.disallowed_by:
            problems.append(
                Problem(
                    INVALID,
                    directive.line,
                    directive.column,
                    f"{directive.spelled} is not honoured here: in-manifest suppressions are disallowed for "
                    f"'{policy.disallowed_by}' (suppressions.disallow-in); its findings are reported",
                )
            )
            continue
        if policy.require_reason and not directive.reason:
            example = "# gpulint: disable=RULE -- why" if directive.kind != "annotation" else '"RULE -- why"'
            problems.append(
                Problem(
                    INVALID,
                    directive.line,
                    directive.column,
                    f"{directive.spelled} gives no reason, which the configuration requires "
                    f"(suppressions.require-reason); it suppresses nothing until it does: {example}",
                )
            )
        for rule in directive.ids:
            if rule.name != ALL and rule.name not in policy.known:
                hint = closest_rule(rule.name, policy.known)
                problems.append(
                    Problem(INVALID, rule.line, rule.column, f"suppression names unknown rule '{rule.name}'{hint}")
                )
            elif policy.report_unused and honoured[id(directive)] and (id(directive), rule.name) not in used:
                if rule.name == ALL and not every_rule_ran or rule.name != ALL and rule.name not in policy.ran:
                    continue  # a rule skipped in this run (no inventory, --select) may well need it
                what = "every rule" if rule.name == ALL else f"'{rule.name}'"
                problems.append(
                    Problem(UNUSED, rule.line, rule.column, f"unused suppression: {what} reports nothing it covers")
                )
    return problems
