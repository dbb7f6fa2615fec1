"""SARIF 2.1.0 with rule metadata (from rules/) and exact regions."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from gpulint import __version__
from gpulint.lint.findings import Finding, Report, Severity, StreamedReport
from gpulint.lint.output.baseline import fingerprint
from gpulint.lint.rule import Rule
from gpulint.report.escaping import valid_unicode
from gpulint.report.indented_json import INDENT, dumps, json_string
from gpulint.report.options import FormatOptions

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@lru_cache(maxsize=1024)  # once per file of a report: its findings share it
def _uri(path: str) -> str:
    """A URI for ``path``, percent-encoding its bytes as the file system has them (a name that is
    not valid UTF-8 included: it reaches Python as lone surrogates, PEP 383)."""
    posix = PurePath(path).as_posix()
    prefix = "file://" if posix.startswith("/") else ""
    return prefix + quote(_fs_bytes(posix.removeprefix("./")))


def _fs_bytes(path: str) -> bytes:
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file system produced (typed by hand): shown as U+FFFD
        return valid_unicode(path).encode("utf-8")


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what.strip()},
        "help": {
            "text": f"{rule.why.strip()}\n\nFix: see the example in `gpulint rule {rule.id}`.",
            "markdown": rule.markdown(),
        },
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": ["kubernetes", "gpu"]},
    }


def render(report: Report, rules: dict[str, Rule], options: FormatOptions) -> str:
    """``json.dumps(log, indent=2, ensure_ascii=False)`` of the log below, its results written a finding at a
    time (most of a SARIF file; tests/unit/test_formatters.py holds the two to the same text)."""
    return "".join(body(report, rules, options))


def body(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """render()'s text, a result at a time: the results are the log's last key, and the rules it lists are the
    run's, not the findings', so the findings are read once, as they come."""
    ordered = sorted(rules)
    index = {rule_id: position for position, rule_id in enumerate(ordered)}
    # the last key of the document: the same text inside a string would have its quotes escaped
    head, _, after = dumps(_log(rules, ordered, [])).rpartition('"results": []')
    yield valid_unicode(head) + '"results": ['
    separator = _N[4]
    for finding in report.each_finding():
        yield separator + valid_unicode(_result_text(finding, index.get(finding.rule)))
        separator = "," + _N[4]
    yield ("]" if separator == _N[4] else _N[3] + "]") + valid_unicode(after) + "\n"


def tail(report: Report | StreamedReport, rules: dict[str, Rule], options: FormatOptions) -> Iterator[str]:
    """Nothing: a SARIF log has no summary and no notes after its results."""
    return iter(())


def _log(rules: dict[str, Rule], ordered: list[str], results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpulint",
                        "version": __version__,
                        "informationUri": "https://github.com/gpulint/gpulint",
                        "rules": [_rule(rules[rule_id]) for rule_id in ordered],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _result(finding: Finding, rule_index: int | None) -> dict[str, Any]:
    """One finding as a SARIF result."""
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVEL[finding.severity],
        # the first line is the summary viewers show; the notes follow it
        "message": {"text": "\n".join((finding.message, *finding.notes))},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.file)},
                    "region": {"startLine": finding.line, "startColumn": finding.column},
                },
            }
        ],
    }
    # the baseline's fingerprint: code scanning tracks an alert across line shifts with it
    result["partialFingerprints"] = {"gpulint/v1": fingerprint(finding)}
    if rule_index is not None:
        result["ruleIndex"] = rule_index
    if finding.obj.kind:
        result["locations"][0]["logicalLocations"] = [{"fullyQualifiedName": finding.obj.display(), "kind": "object"}]
    properties = _properties(finding)
    if properties:
        result["properties"] = properties
    return result


def _properties(finding: Finding) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    if finding.notes:
        properties["notes"] = list(finding.notes)
    if finding.fix is not None:
        properties["fix"] = finding.fix.description
        properties["fixSafety"] = finding.fix.safety.value
    return properties


_N = ["\n" + INDENT * depth for depth in range(11)]  # a line break and the indentation of each depth


def _result_text(finding: Finding, rule_index: int | None) -> str:
    """``dumps(_result(finding, rule_index), 4)``, an item of the results list, written field by field."""
    line, column, n = finding.line, finding.column, _N
    if type(line) is not int or type(column) is not int:  # not its declared type: json's own way
        return dumps(_result(finding, rule_index), 4)
    try:
        rule, level = json_string(finding.rule), json_string(_LEVEL[finding.severity])
        message = json_string("\n".join((finding.message, *finding.notes)))
        uri, identity = json_string(_uri(finding.file)), json_string(fingerprint(finding))
        logical = (
            f',{n[7]}"logicalLocations": [{n[8]}{{{n[9]}"fullyQualifiedName": {json_string(finding.obj.display())},'
            f'{n[9]}"kind": "object"{n[8]}}}{n[7]}]'
            if finding.obj.kind
            else ""
        )
    except TypeError:  # a field that is not of its declared type: json's own way, whatever it is
        return dumps(_result(finding, rule_index), 4)
    index = "" if rule_index is None else f',{n[5]}"ruleIndex": {rule_index}'
    properties = _properties(finding)
    listed = f',{n[5]}"properties": {dumps(properties, 5)}' if properties else ""
    return (
        f'{{{n[5]}"ruleId": {rule},{n[5]}"level": {level},{n[5]}"message": {{{n[6]}"text": {message}{n[5]}}},'
        f'{n[5]}"locations": [{n[6]}{{{n[7]}"physicalLocation": {{{n[8]}"artifactLocation": {{{n[9]}"uri": {uri}'
        f'{n[8]}}},{n[8]}"region": {{{n[9]}"startLine": {line},{n[9]}"startColumn": {column}{n[8]}}}{n[7]}}}'
        f'{logical}{n[6]}}}{n[5]}],{n[5]}"partialFingerprints": {{{n[6]}"gpulint/v1": {identity}{n[5]}}}'
        f"{index}{listed}{n[4]}}}"
    )
