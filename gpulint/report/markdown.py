"""A pull-request comment: a summary table, then the findings grouped by file with their source line."""

from __future__ import annotations

from gpulint.lint.findings import FileReport, Finding, Report, Severity
from gpulint.lint.rule import Rule
from gpulint.report.escaping import line_start, shown
from gpulint.report.options import FormatOptions
from gpulint.report.text import summary_line

# GitHub refuses a comment over 65,536 characters; GitLab notes allow more, so GitHub's limit decides
MAX_COMMENT_CHARS = 65_536
_ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟡", Severity.INFO: "🔵"}


def _code(text: str) -> str:
    """Text gpulint did not write, as a code span: inside one, GitHub and GitLab make no @mention, link,
    image, heading, emphasis or HTML of it. The span's backticks outnumber any run of backticks in the text,
    so none can end it early; control characters and line breaks are escaped (report.shown)."""
    text = shown(text)
    if not text:
        return ""
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _longest_backticks(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    return "`" * max(3, _longest_backticks(text) + 1)


def _finding(finding: Finding, excerpt: str | None) -> list[str]:
    subject = f"{_code(finding.obj.display())}: " if finding.obj.kind else ""
    lines = [
        f"- {_ICON[finding.severity]} **{finding.severity}** [{_code(finding.rule)}] line {finding.line}, "
        f"column {finding.column}: {subject}{_code(finding.message)}"
    ]
    if excerpt is not None:
        excerpt = line_start(excerpt)
        fence = _fence(excerpt)
        lines += [f"  {fence}yaml", f"  {excerpt}", f"  {fence}"]
    lines += [f"  - {_code(note)}" for note in finding.notes]
    if finding.fix is not None:
        how = "--fix" if finding.fix.safe else "--unsafe-fixes"
        lines.append(f"  - fix ({finding.fix.safety.value}, `{how}`): {_code(finding.fix.description)}")
    return lines


def _file(file: FileReport) -> list[str]:
    lines = ["", f"### {_code(file.path)}", ""]
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
        lines += ["" if index == 0 else ">", f"> {_code(first)}", *(f"> - {_code(detail)}" for detail in details)]
    lines += ["", summary_line(report)]
    return "\n".join(lines) + "\n"
