"""JUnit XML: one testcase per file, one failure element per finding (GitLab, Jenkins)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpulint.lint.findings import Report
from gpulint.lint.rule import Rule
from gpulint.report import FormatOptions, valid_xml


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    failures = sum(1 for file in report.files if file.findings)
    suites = ET.Element("testsuites", name="gpulint", tests=str(len(report.files)), failures=str(failures))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="gpulint",
        tests=str(len(report.files)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for file in report.files:
        case = ET.SubElement(suite, "testcase", classname="gpulint", name=file.path, file=file.path)
        for finding in file.findings:
            failure = ET.SubElement(
                case,
                "failure",
                type=finding.rule,
                message=f"{finding.line}:{finding.column}: {finding.severity}[{finding.rule}] {finding.message}",
            )
            failure.text = (
                f"{finding.file}:{finding.line}:{finding.column}: {finding.severity}[{finding.rule}] "
                f"{finding.obj.display()} {finding.message}"
            )
    ET.indent(suites)
    # ElementTree writes control characters and lone surrogates as they are, which no XML parser accepts
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + valid_xml(ET.tostring(suites, encoding="unicode")) + "\n"
