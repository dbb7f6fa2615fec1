"""The JSON contract (version 1): {"version", "findings": [...], "summary": {...}}."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.findings import Finding, Report, StreamedReport
from gpulint.lint.rule import Rule
from gpulint.report.indented_json import dumps, json_string
from gpulint.report.options import FormatOptions

CONTRACT_VERSION = 1


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)`` of the document below, written a finding at a
    time (tests/unit/test_formatters.py holds the two to the same text)::

        {"version": 1, "findings": [f.as_json() for f in findings], "summary": report.summary(), "notes": [...]}
    """
    return "".join(pieces(report, rules, options))


def pieces(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """render()'s text, a finding at a time."""
    yield from body(report, rules, options)
    yield from tail(report, rules, options)


def body(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """The text up to the end of the findings, which are read once, as they come."""
    yield f'{{\n  "version": {CONTRACT_VERSION},\n  "findings": '
    any_finding = False
    for finding in report.each_finding():
        yield ",\n" if any_finding else "[\n"
        any_finding = True
        yield _finding(finding)
    yield "\n  ]" if any_finding else "[]"


def tail(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """The summary and the notes, once the findings are written."""
    yield f',\n  "summary": {dumps(report.summary(), 1)},\n  "notes": {dumps(list(options.notes), 1)}\n}}\n'


def _finding(finding: Finding) -> str:
    """``finding.as_json()`` as an item of the findings list, written field by field."""
    try:
        obj, fix = finding.obj, finding.fix
        fix_text = (
            "null"
            if fix is None
            else f'{{\n        "description": {json_string(fix.description)},\n'
            f'        "safety": {json_string(fix.safety.value)}\n      }}'
        )
        return (
            f'    {{\n      "rule": {json_string(finding.rule)},\n'
            f'      "severity": {json_string(str(finding.severity))},\n'
            f'      "message": {json_string(finding.message)},\n'
            f'      "path": {json_string(finding.file)},\n'
            f'      "line": {int.__repr__(finding.line)},\n'
            f'      "column": {int.__repr__(finding.column)},\n'
            f'      "object": {{\n        "apiVersion": {json_string(obj.api_version)},\n'
            f'        "kind": {json_string(obj.kind)},\n'
            f'        "namespace": {json_string(obj.namespace)},\n'
            f'        "name": {json_string(obj.name)}\n      }},\n'
            f'      "fixable": {"true" if fix is not None and fix.applicable else "false"},\n'
            f'      "fix": {fix_text},\n'
            f'      "notes": {dumps(finding.notes, 3)},\n'
            f'      "field": {json_string(finding.field)}\n    }}'
        )
    except TypeError:  # a field that is not of its declared type: json's own way, whatever it is
        return "    " + dumps(finding.as_json(), 2)
