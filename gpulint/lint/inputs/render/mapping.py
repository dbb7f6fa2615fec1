"""Lines of a rendered document -> the lines of the template that produced them.

Helm prints ``# Source: chart/templates/x.yaml`` above every document it renders, and nothing
maps a rendered line back to its template line. So the template is aligned with its output: a
template line without actions must equal a rendered line, and one with actions is a pattern
(``image: "{{ .Values.image }}"`` matches ``image: "vllm:0.6"``); the longest monotone alignment
(LCS) of the two is kept. A rendered line no template line matches (a ``toYaml .Values.resources``
block, a second ``range`` iteration) goes to a template line that matches it (the loop's body), or
else to the action between its aligned neighbours that printed it, or else to the enclosing line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
# Actions that print nothing: control flow, definitions, comments, variable assignments.
_SILENT = re.compile(r"^\{\{-?\s*(?:/\*|if\b|else\b|end\b|range\b|with\b|define\b|block\b|template\b|\$[\w]*\s*:?=)")
MAX_CELLS = 600_000  # rendered lines x template lines aligned exactly; beyond, matched greedily


@dataclass(frozen=True)
class _TemplateLine:
    text: str  # stripped
    indent: int
    pattern: re.Pattern[str] | None  # None: a literal line
    only_actions: bool  # nothing but actions (and whitespace): prints zero or more whole lines
    silent: bool  # only actions that print nothing

    def matches(self, rendered: str) -> bool:
        if self.only_actions:
            return False
        if self.pattern is None:
            return self.text == rendered
        return self.pattern.fullmatch(rendered) is not None


def _template_line(line: str) -> _TemplateLine:
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    if "{{" not in stripped:
        return _TemplateLine(stripped, indent, None, False, False)
    remainder = _ACTION.sub("", stripped).strip()
    actions = _ACTION.findall(stripped)
    if not remainder:
        silent = all(_SILENT.match(action) for action in actions) if actions else False
        return _TemplateLine(stripped, indent, None, True, silent)
    parts = _ACTION.split(stripped)
    pattern = re.compile(
        ".*?".join(re.escape(part.strip() if i in (0, len(parts) - 1) else part) for i, part in enumerate(parts))
    )
    return _TemplateLine(stripped, indent, pattern, False, False)


@dataclass(frozen=True)
class LineMap:
    """Rendered line (0-based within the document) -> template line (0-based) and its indentation."""

    lines: tuple[int, ...]
    template_indent: tuple[int, ...]
    exact: tuple[bool, ...]  # the template line equals/matches the rendered one (vs. the action that printed it)

    def line(self, rendered_index: int) -> int:
        if not self.lines:
            return 0
        return self.lines[min(max(rendered_index, 0), len(self.lines) - 1)]


def align(rendered: list[str], template: list[str]) -> LineMap:
    tlines = [_template_line(line) for line in template]
    rstripped = [line.strip() for line in rendered]
    n, m = len(rstripped), len(tlines)
    if n == 0:
        return LineMap((), tuple(t.indent for t in tlines), ())
    pairs = _lcs(rstripped, tlines) if n * m <= MAX_CELLS else _greedy(rstripped, tlines)
    matched: dict[int, int] = dict(pairs)
    lines: list[int] = []
    exact: list[bool] = []
    for i in range(n):
        if i in matched:
            lines.append(matched[i])
            exact.append(True)
            continue
        before = max((j for k, j in pairs if k < i), default=-1)
        after = min((j for k, j in pairs if k > i), default=m)
        target, is_exact = _unmatched(rstripped[i], tlines, before, after)
        lines.append(target)
        exact.append(is_exact)
    return LineMap(tuple(lines), tuple(t.indent for t in tlines), tuple(exact))


def _unmatched(rendered: str, tlines: list[_TemplateLine], before: int, after: int) -> tuple[int, bool]:
    if rendered:
        candidates = [j for j, t in enumerate(tlines) if t.matches(rendered)]
        inside = [j for j in candidates if before < j < after]
        if inside:
            return inside[0], True
        if candidates:  # a loop's later iteration: the body line nearest the aligned neighbour
            anchor = before if before >= 0 else after
            return min(candidates, key=lambda j: (abs(j - anchor), j)), True
    printers = [
        j for j in range(before + 1, min(after, len(tlines))) if tlines[j].only_actions and not tlines[j].silent
    ]
    if printers:
        return printers[0], False
    if before >= 0:
        return before, False
    return (after if after < len(tlines) else 0), False


def _lcs(rendered: list[str], tlines: list[_TemplateLine]) -> list[tuple[int, int]]:
    n, m = len(rendered), len(tlines)
    # lengths[i][j]: the longest alignment of rendered[i:] with tlines[j:]
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lengths[i], lengths[i + 1]
        line = rendered[i]
        for j in range(m - 1, -1, -1):
            if line and tlines[j].matches(line):
                row[j] = below[j + 1] + 1
            else:
                row[j] = below[j] if below[j] >= row[j + 1] else row[j + 1]
    pairs = []
    i = j = 0
    while i < n and j < m:
        if rendered[i] and tlines[j].matches(rendered[i]) and lengths[i][j] == lengths[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i += 1
            j += 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _greedy(rendered: list[str], tlines: list[_TemplateLine]) -> list[tuple[int, int]]:
    pairs = []
    j = 0
    for i, line in enumerate(rendered):
        if not line:
            continue
        for k in range(j, len(tlines)):
            if tlines[k].matches(line):
                pairs.append((i, k))
                j = k + 1
                break
    return pairs


def template_column(rendered_line: str, rendered_column: int, template_line: str, exact: bool) -> int:
    """1-based column in the template line for a 1-based column in the rendered line: the same offset
    from the first non-blank character when the lines correspond, else the template line's first."""
    template_indent = len(template_line) - len(template_line.lstrip())
    if not exact:
        return template_indent + 1
    rendered_indent = len(rendered_line) - len(rendered_line.lstrip())
    offset = max(rendered_column - 1 - rendered_indent, 0)
    if "{{" in template_line:
        literal_prefix = template_line.lstrip().split("{{", 1)[0]
        offset = min(offset, len(literal_prefix))
    return template_indent + offset + 1
