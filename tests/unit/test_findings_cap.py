"""A report lists at most MAX_FILE_FINDINGS findings of one file (issue #33): a generated file of many pods with
findings each gives the first ones, then one finding per rule saying how many of it were left out, at the worst
severity left out, in every format; the exit code is the one the whole list gives."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.lint.findings import MAX_FILE_FINDINGS, FileReport, Finding, Report, Severity, capped
from gpulint.report import FORMATS

# Two findings a pod: an error (the API server refuses a request below the limit) and the info that holds back
# the warning about its pods (no /dev/shm for two GPUs: verdicts/refusal.py), so 600 pods give 1,200 findings,
# past the cap.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer-{index}
spec:
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      requests:
        nvidia.com/gpu: 1
      limits:
        nvidia.com/gpu: 2
"""
PODS = 600


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cap") / "pods.yaml"
    path.write_text("---\n".join(POD.format(index=index) for index in range(PODS)))
    return path


def _finding(rule: str, severity: Severity, line: int) -> Finding:
    return Finding(rule, severity, f"{rule} at {line}", "a.yaml", line, 3)


def test_a_file_under_the_cap_is_the_same_report() -> None:
    report = FileReport("a.yaml", [_finding("dev-shm-missing", Severity.WARNING, line) for line in range(1, 4)])
    assert capped(report, 3) is report


def test_what_is_left_out_is_counted_by_rule_at_its_worst_severity() -> None:
    findings = [
        _finding("dev-shm-missing", Severity.INFO, 1),
        _finding("dev-shm-missing", Severity.INFO, 2),
        _finding("gpu-non-integer", Severity.INFO, 3),
        _finding("dev-shm-missing", Severity.WARNING, 4),
        _finding("gpu-non-integer", Severity.ERROR, 5),
        _finding("dev-shm-missing", Severity.INFO, 6),
    ]
    shown = capped(FileReport("a.yaml", findings), 2).findings
    assert shown[:2] == findings[:2]
    assert [(f.rule, f.severity, f.line, f.message) for f in shown[2:]] == [
        (
            "gpu-non-integer",
            Severity.ERROR,
            3,
            "2 more gpu-non-integer findings in this file, from here on, not listed",
        ),
        (
            "dev-shm-missing",
            Severity.WARNING,
            4,
            "2 more dev-shm-missing findings in this file, from here on, not listed",
        ),
    ]
    assert all(f.fix is None and f.notes == ("a report lists at most 2 findings of one file",) for f in shown[2:])


def test_json_lists_the_first_findings_then_the_counts(many: Path) -> None:
    result = run_cli("check", str(many), "--format", "json")
    assert result.exit_code == 1  # errors among the listed and the left out alike
    found = json.loads(result.stdout)["findings"]
    assert len(found) == MAX_FILE_FINDINGS + 2
    counts = found[MAX_FILE_FINDINGS:]
    left = 2 * PODS - MAX_FILE_FINDINGS
    assert sorted((f["rule"], f["severity"], f["message"]) for f in counts) == [
        (
            "dev-shm-missing",
            "info",
            f"{left // 2} more dev-shm-missing findings in this file, from here on, not listed",
        ),
        (
            "gpu-request-without-limit",
            "error",
            f"{left // 2} more gpu-request-without-limit findings in this file, from here on, not listed",
        ),
    ]
    # each count stands at the first place it leaves out: the pod after the last one listed
    first_left = min(counts, key=lambda f: f["line"])["line"]
    assert first_left > max(f["line"] for f in found[:MAX_FILE_FINDINGS])


def test_the_exit_code_follows_what_is_left_out(tmp_path: Path) -> None:
    # 1,001 warnings then one error: the error is left out, and its count keeps the exit code
    pods = [
        POD.format(index=index).replace("requests:\n        nvidia.com/gpu: 1\n      ", "") for index in range(1001)
    ]
    pods.append(POD.format(index="last"))
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(pods))
    result = run_cli("check", str(path), "--format", "json")
    found = json.loads(result.stdout)["findings"]
    assert [f["severity"] for f in found[:MAX_FILE_FINDINGS]] == ["warning"] * MAX_FILE_FINDINGS
    assert {f["rule"]: f["severity"] for f in found[MAX_FILE_FINDINGS:]} == {
        "dev-shm-missing": "warning",
        "gpu-request-without-limit": "error",
    }
    assert result.exit_code == 1


# markdown: a comment's own limit (65,536 characters) comes first and counts what it does not show
@pytest.mark.parametrize("name", [name for name in FORMATS if name != "markdown"])
def test_every_format_says_how_many_were_left_out(many: Path, name: str) -> None:
    result = run_cli("check", str(many), "--format", name)
    assert result.exit_code == 1
    left = (2 * PODS - MAX_FILE_FINDINGS) // 2
    assert f"{left} more gpu-request-without-limit findings in this file" in result.stdout
    if name == "sarif":
        results = json.loads(result.stdout)["runs"][0]["results"]
        assert len(results) == MAX_FILE_FINDINGS + 2
    if name == "junit":
        ET.fromstring(result.stdout)  # still well-formed


NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-{index}
  labels: {{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}
spec:
  unschedulabel: true
status:
  capacity: {{nvidia.com/gpu: "8"}}
  allocatable: {{nvidia.com/gpu: "8"}}
"""


def test_gpulint_inventory_lists_as_many(tmp_path: Path) -> None:
    # a misspelt field on each of 1,100 Nodes: schema-invalid of the inventory's own objects
    path = tmp_path / "nodes.yaml"
    path.write_text("---\n".join(NODE.format(index=index) for index in range(1100)))
    result = run_cli("inventory", "--inventory", str(path), "--format", "json")
    assert result.exit_code == 0, result.stderr
    found = result.json()["findings"]
    assert len(found) == MAX_FILE_FINDINGS + 1
    assert found[-1]["message"] == "100 more schema-invalid findings in this file, from here on, not listed"


# A Node the loader refuses (exit 2): `unschedulable: "yes"` is a string where Kubernetes' bool is
UNREADABLE = 'apiVersion: v1\nkind: Node\nmetadata: {{name: gpu-{index}}}\nspec: {{unschedulable: "yes"}}\n'


def _unreadable(path: Path, nodes: int) -> Path:
    path.write_text("---\n".join(UNREADABLE.format(index=index) for index in range(nodes)))
    return path


@pytest.mark.parametrize("command", [("inventory",), ("check", "{pod}")])
def test_an_unreadable_inventorys_errors_are_listed_as_findings_are(tmp_path: Path, command: tuple[str, ...]) -> None:
    nodes = _unreadable(tmp_path / "nodes.yaml", 1100)
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.format(index=0))
    result = run_cli(*(part.format(pod=pod) for part in command), "--inventory", str(nodes))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "gpulint: error: the inventory cannot be read:"
    listed = lines[1:-1]
    assert len(listed) == MAX_FILE_FINDINGS
    assert (
        listed[-1]
        == f"{nodes}:4999:23: inventory: Node/gpu-999: spec.unschedulable must be true or false, not a string"
    )
    # at the first one left out: the next Node's field (five lines a Node with its separator)
    assert lines[-1] == (
        f"{nodes}:5004:23: inventory: 100 more problems in this file, from here on, not listed "
        f"(at most {MAX_FILE_FINDINGS} are listed a file)"
    )


def test_each_inventory_file_is_bounded_on_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "inventory"
    folder.mkdir()
    many = _unreadable(folder / "a.yaml", MAX_FILE_FINDINGS + 1)
    few = _unreadable(folder / "b.yaml", 3)
    result = run_cli("inventory", "--inventory", str(folder))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()[1:]
    assert len(lines) == MAX_FILE_FINDINGS + 1 + 3
    assert lines[MAX_FILE_FINDINGS].startswith(f"{many}:5004:23: inventory: 1 more problem in this file,")
    assert lines[-3:] == [
        f"{few}:{5 * index + 4}:23: inventory: Node/gpu-{index}: spec.unschedulable must be true or false, not a string"
        for index in range(3)
    ]


def test_the_summary_counts_every_finding_listed_or_not(many: Path) -> None:
    """As ruff's and kube-linter's totals: the summary (and what `--fix` would fix) counts the whole list, not the
    1,002 lines that stand for it. Each pod gives an error with an unsafe fix and an info (the held-back warning)."""
    summary = json.loads(run_cli("check", str(many), "--format", "json").stdout)["summary"]
    assert (summary["errors"], summary["warnings"], summary["infos"]) == (PODS, 0, PODS)
    assert (summary["fixable"], summary["unsafe_fixable"]) == (0, PODS)
    text = run_cli("check", str(many)).stdout
    assert f"Found {PODS} errors, 0 warnings, {PODS} infos in 1 file, {PODS} objects ({PODS} more with --unsafe" in text


def test_a_whole_reports_summary_counts_what_is_left_out() -> None:
    findings = [_finding("dev-shm-missing", Severity.INFO, line) for line in range(1, 4)]
    findings += [_finding("gpu-non-integer", Severity.ERROR, line) for line in range(4, 8)]
    summary = Report([capped(FileReport("a.yaml", findings), 2)]).summary()
    assert (summary["infos"], summary["errors"]) == (3, 4)
