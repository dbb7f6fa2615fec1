"""GitHub Actions workflow commands: one ::error/::warning annotation per finding.

Info findings become ::notice annotations only when they fail the run (``--fail-on info``): a
pull request covered in notices hides the findings that matter (GitHub shows at most 10
annotations of each type per step, and 50 per job)."""

from __future__ import annotations

from gpulint.lint.findings import Report, Severity
from gpulint.lint.rule import Rule
from gpulint.report.escaping import shown
from gpulint.report.options import FormatOptions
from gpulint.report.text import summary_line

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    lines = [
        f"::{_COMMAND[f.severity]} file={_property(shown(f.file))},line={f.line},col={f.column},"
        f"title={_property('gpulint ' + shown(f.rule))}::{_data(chr(10).join(map(shown, (f.message, *f.notes))))}"
        for f in report.findings
        if f.severity >= options.annotate_from
    ]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
