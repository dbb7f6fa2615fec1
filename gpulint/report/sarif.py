"""SARIF 2.1.0 with rule metadata (from rules/) and exact regions."""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from gpulint import __version__
from gpulint.lint.baseline import fingerprint
from gpulint.lint.findings import Report, Severity
from gpulint.lint.rule import Rule
from gpulint.report import FormatOptions, valid_unicode
from gpulint.report.indented_json import dumps

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
    ordered = sorted(rules)
    index = {rule_id: position for position, rule_id in enumerate(ordered)}
    results = []
    for finding in report.findings:
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
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        if finding.obj.kind:
            result["locations"][0]["logicalLocations"] = [
                {"fullyQualifiedName": finding.obj.display(), "kind": "object"}
            ]
        properties: dict[str, Any] = {}
        if finding.notes:
            properties["notes"] = list(finding.notes)
        if finding.fix is not None:
            properties["fix"] = finding.fix.description
            properties["fixSafety"] = finding.fix.safety.value
        if properties:
            result["properties"] = properties
        results.append(result)
    log = {
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
    return valid_unicode(dumps(log)) + "\n"  # json.dumps(log, indent=2, ensure_ascii=False)
