"""JUnit XML: one testcase per file; each error or warning a failure, info findings as output
(infos are failures too with ``--fail-on info``).

A clean run must show no failed test in GitLab or Jenkins: info findings ("not evaluable
offline", "gate off by default") go into the file's passed testcase as ``system-out``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpulint.lint.findings import Finding, Report
from gpulint.lint.rule import Rule
from gpulint.report.escaping import line_start, shown, valid_xml
from gpulint.report.options import FormatOptions


def _line(finding: Finding) -> str:
    subject = f" {shown(finding.obj.display())}:" if finding.obj.kind else ""
    text = (
        f"{line_start(finding.file)}:{finding.line}:{finding.column}: {finding.severity}[{shown(finding.rule)}]"
        f"{subject} {shown(finding.message)}"
    )
    return "\n".join((text, *(f"    {line_start(note)}" for note in finding.notes)))


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    failing = [[f for f in file.findings if f.severity >= options.annotate_from] for file in report.files]
    failures = sum(1 for found in failing if found)
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
    for file, found in zip(report.files, failing, strict=True):
        case = ET.SubElement(suite, "testcase", classname="gpulint", name=shown(file.path), file=shown(file.path))
        for finding in found:
            failure = ET.SubElement(
                case,
                "failure",
                type=shown(finding.rule),
                message=f"{finding.line}:{finding.column}: {finding.severity}[{shown(finding.rule)}] {shown(finding.message)}",
            )
            failure.text = _line(finding)
        infos = [finding for finding in file.findings if finding.severity < options.annotate_from]
        if infos:
            ET.SubElement(case, "system-out").text = "\n".join(map(_line, infos))
    ET.indent(suites)
    # ElementTree writes control characters and lone surrogates as they are, which no XML parser accepts
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + valid_xml(ET.tostring(suites, encoding="unicode")) + "\n"
