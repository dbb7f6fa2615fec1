"""GitLab Code Quality: a JSON array of issues for `artifacts: reports: codequality:`.

The fields GitLab reads (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format):
``description``, ``check_name``, ``fingerprint`` (unique per issue: GitLab shows only the first
issue of a fingerprint), ``severity`` (info, minor, major, critical, blocker) and
``location.path`` (relative to the repository) with ``location.lines.begin``. The fingerprint
is the baseline's, so the merge request widget tracks a finding across line shifts; findings
that share one get an occurrence number.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePath
from typing import Any

from gpulint.lint.findings import Report, Severity
from gpulint.lint.output.baseline import fingerprint
from gpulint.lint.rule import Rule
from gpulint.report.indented_json import dumps
from gpulint.report.options import FormatOptions

# errors fail the pipeline: "major" ranks them above warnings in the widget, as GitLab's own analyzers do
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _path(display: str) -> str:
    return PurePath(display).as_posix().removeprefix("./")


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    issues: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for finding in report.findings:
        key = fingerprint(finding)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        if occurrence:
            key = hashlib.sha256(f"{key}\0{occurrence}".encode()).hexdigest()[:32]
        subject = f"{finding.obj.display()}: " if finding.obj.kind else ""
        issue: dict[str, Any] = {
            "type": "issue",
            "description": f"{subject}{finding.message}",
            "check_name": f"gpulint/{finding.rule}",
            "fingerprint": key,
            "severity": SEVERITY[finding.severity],
            "categories": ["Bug Risk"],
            "location": {"path": _path(finding.file), "lines": {"begin": finding.line}},
        }
        if finding.notes:
            issue["content"] = {"body": "\n".join(finding.notes)}
        issues.append(issue)
    return dumps(issues) + "\n"  # json.dumps(issues, indent=2, ensure_ascii=False)
