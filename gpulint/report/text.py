"""path:line:col: severity[rule] message, one per line, then a summary."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.findings import Finding, Report, Severity, StreamedReport
from gpulint.lint.rule import Rule
from gpulint.report.escaping import line_start, shown
from gpulint.report.options import FormatOptions

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(report: Report | StreamedReport) -> str:
    stats = report.summary()
    checked = f"{_plural(stats['files'], 'file')}, {_plural(stats['objects'], 'object')}"
    extras = []
    if stats["not_objects"]:
        extras.append(f"{_plural(stats['not_objects'], 'document')} skipped (not Kubernetes objects)")
    if stats["suppressed"]:
        extras.append(f"{stats['suppressed']} suppressed")
    if stats.get("baselined"):
        extras.append(f"{stats['baselined']} in the baseline")
    if stats["fixable"]:
        extras.append(f"{stats['fixable']} fixable with --fix")
    if stats["unsafe_fixable"]:
        extras.append(f"{stats['unsafe_fixable']} more with --unsafe-fixes")
    tail = f" ({'; '.join(extras)})" if extras else ""
    counts = [_plural(stats["errors"], "error"), _plural(stats["warnings"], "warning")]
    if stats["infos"]:
        counts.append(_plural(stats["infos"], "info"))
    if not stats["errors"] + stats["warnings"] + stats["infos"]:
        return f"No problems found in {checked}{tail}."
    return f"Found {', '.join(counts)} in {checked}{tail}."


NOTE_INDENT = "    "


def detail_lines(finding: Finding) -> list[str]:
    """The finding's notes, then its fix and how to apply it, indented under its first line."""
    lines = [f"{NOTE_INDENT}{line_start(note)}" for note in finding.notes]
    if finding.fix is not None:
        how = "--fix" if finding.fix.safe else "--unsafe-fixes"
        lines.append(f"{NOTE_INDENT}fix ({finding.fix.safety.value}, {how}): {shown(finding.fix.description)}")
    return lines


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    return "".join(pieces(report, rules, options))


def pieces(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """render()'s text, a line at a time (each with its newline)."""
    yield from body(report, rules, options)
    yield from tail(report, rules, options)


def body(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """The findings' lines, the findings read once, as they come."""
    for finding in report.each_finding():
        severity = str(finding.severity)
        location = f"{line_start(finding.file)}:{finding.line}:{finding.column}:"
        if options.color:
            location = f"{_BOLD}{location}{_RESET}"
            severity = f"{_COLORS[finding.severity]}{severity}{_RESET}"
        subject = f" {shown(finding.obj.display())}:" if finding.obj.kind else ""
        yield f"{location} {severity}[{shown(finding.rule)}]{subject} {shown(finding.message)}\n"
        for line in detail_lines(finding):
            yield f"{line}\n"


def tail(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """The notes and the summary line, once the findings are written."""
    for note in options.notes:  # a run note's first line, its details (the places, the rules) under it
        first, *details = note.split("\n")
        yield f"note: {shown(first)}\n"
        for detail in details:
            yield f"{NOTE_INDENT}{line_start(detail)}\n"
    yield f"{summary_line(report)}\n"
