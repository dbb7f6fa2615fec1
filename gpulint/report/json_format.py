"""The JSON contract (version 1): {"version", "findings": [...], "summary": {...}}."""

from __future__ import annotations

import json

from gpulint.lint.findings import Report
from gpulint.lint.rule import Rule
from gpulint.report import FormatOptions

CONTRACT_VERSION = 1


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    document = {
        "version": CONTRACT_VERSION,
        "findings": [finding.as_json() for finding in report.findings],
        "summary": report.summary(),
        "notes": list(options.notes),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
