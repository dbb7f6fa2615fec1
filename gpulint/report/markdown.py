"""A pull-request comment: a summary table, then the findings grouped by file with their source line."""

from __future__ import annotations

from gpulint.lint.findings import FileReport, Finding, Report, Severity
from gpulint.lint.rule import Rule
from gpulint.report import FormatOptions
from gpulint.report.text import summary_line

# GitHub refuses a comment over 65,536 characters; GitLab notes allow more, so GitHub's limit decides
MAX_COMMENT_CHARS = 65_536
_ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟡", Severity.INFO: "🔵"}


def _cell(text: str) -> str:
    """Text safe inside a table cell or a list item: no pipes, no line breaks, no raw HTML."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _finding(finding: Finding, excerpt: str | None) -> list[str]:
    subject = f"`{_cell(finding.obj.display())}`: " if finding.obj.kind else ""
    lines = [
        f"- {_ICON[finding.severity]} **{finding.severity}** [`{finding.rule}`] line {finding.line}, "
        f"column {finding.column}: {subject}{_cell(finding.message)}"
    ]
    if excerpt is not None:
        fence = _fence(excerpt)
        lines += [f"  {fence}yaml", f"  {excerpt}", f"  {fence}"]
    lines += [f"  - {_cell(note)}" for note in finding.notes]
    if finding.fix is not None:
        how = "--fix" if finding.fix.safe else "--unsafe-fixes"
        lines.append(f"  - fix ({finding.fix.safety.value}, `{how}`): {_cell(finding.fix.description)}")
    return lines


def _file(file: FileReport) -> list[str]:
    lines = ["", f"### `{_cell(file.path)}`", ""]
    for finding in file.findings:
        lines += _finding(finding, file.excerpts.get(finding.line))
    return lines


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    stats = report.summary()
    lines = [
        "## gpulint",
        "",
        "| errors | warnings | infos | files | objects | suppressed | in the baseline |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {stats['errors']} | {stats['warnings']} | {stats['infos']} | {stats['files']} | {stats['objects']} "
        f"| {stats['suppressed']} | {stats['baselined']} |",
    ]
    size = sum(len(line) + 1 for line in lines)
    shown = 0
    total = len(report.findings)
    for file in report.files:
        if not file.findings:
            continue
        block = _file(file)
        block_size = sum(len(line) + 1 for line in block)
        if size + block_size > MAX_COMMENT_CHARS - 2000:  # room for the notes and the summary
            lines += [
                "",
                f"… and {total - shown} more findings, not shown: a comment holds at most "
                f"{MAX_COMMENT_CHARS:,} characters (the full report is in the job's log or artifacts).",
            ]
            break
        lines += block
        size += block_size
        shown += len(file.findings)
    for index, note in enumerate(options.notes):  # one quoted paragraph each, its details as a list
        first, *details = note.split("\n")
        lines += ["" if index == 0 else ">", f"> {_cell(first)}", *(f"> - {_cell(detail)}" for detail in details)]
    lines += ["", summary_line(report)]
    return "\n".join(lines) + "\n"
