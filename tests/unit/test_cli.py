"""The command line: exit codes, stdin, output files, colour, configuration and suppressions."""

import json
import os
import subprocess
import sys

import pytest
from conftest import run_cli
from support.manifests import BAD_POD, GOOD_POD, WARN_POD


def test_exit_codes(write, tmp_path):
    bad, good, warn = write("bad.yaml", BAD_POD), write("good.yaml", GOOD_POD), write("warn.yaml", WARN_POD)
    assert run_cli("check", str(good)).exit_code == 0
    assert run_cli("check", str(bad)).exit_code == 1
    assert run_cli("check", str(bad), "--exit-zero").exit_code == 0
    assert run_cli("check", str(warn)).exit_code == 0
    assert run_cli("check", str(warn), "--fail-on", "warning").exit_code == 1
    assert run_cli("check", str(tmp_path / "missing.yaml")).exit_code == 2
    assert run_cli("check", str(good), "--select", "no-such-rule").exit_code == 2
    assert run_cli("check", str(good), "--kubernetes-version", "1.20").exit_code == 2


def test_text_output_is_path_line_col(write):
    bad = write("bad.yaml", BAD_POD)
    result = run_cli("check", str(bad), "--color", "never")
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{bad}:9:18: error[gpu-request-without-limit] Pod/ml/bad: ")
    assert result.stdout.splitlines()[-1].startswith("Found 1 error, 0 warnings in 1 file, 1 object")
    assert "\033[" not in result.stdout


def test_color_only_when_asked_or_on_a_terminal(write):
    bad = write("bad.yaml", BAD_POD)
    assert "\033[31m" in run_cli("check", str(bad), "--color", "always").stdout
    assert "\033[" not in run_cli("check", str(bad)).stdout  # CliRunner's stdout is not a terminal


@pytest.mark.slow
def test_no_color_environment_is_honoured(write):
    bad = write("bad.yaml", BAD_POD)
    env = {**os.environ, "NO_COLOR": "1"}
    # `script` would give a real tty; the decision function is what matters:
    from gpulint.cli.main import _use_color

    os.environ["NO_COLOR"] = "1"
    try:
        assert _use_color("auto", None) is False
    finally:
        del os.environ["NO_COLOR"]
    result = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", str(bad)], capture_output=True, text=True, env=env
    )
    assert "\033[" not in result.stdout and result.returncode == 1


def test_stdin(write):
    result = run_cli("check", "-", input=BAD_POD.lstrip())
    assert result.exit_code == 1
    assert result.stdout.startswith("<stdin>:9:18: error[gpu-request-without-limit]")


def test_output_file_and_json_contract(write, tmp_path):
    bad = write("bad.yaml", BAD_POD)
    out = tmp_path / "report.json"
    result = run_cli("check", str(bad), "--format", "json", "--output", str(out))
    assert result.exit_code == 1 and result.stdout == ""
    report = json.loads(out.read_text())
    (finding,) = report["findings"]
    assert finding == {
        "rule": "gpu-request-without-limit",
        "severity": "error",
        "message": finding["message"],
        "path": str(bad),
        "line": 9,
        "column": 18,
        "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "bad"},
        "fixable": True,
        "fix": {"description": "add limits.nvidia.com/gpu: 1", "safety": "safe"},
        "notes": [
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
            "set limits.nvidia.com/gpu to 1: extended resources are requested through limits "
            "(the request defaults to the limit)",
        ],
        "field": "spec.containers[name=c].resources.requests[nvidia.com/gpu]",
    }
    assert report["summary"]["errors"] == 1 and report["summary"]["objects"] == 1
    assert report["version"] == 1


def test_directories_are_walked_skipping_hidden_and_non_manifests(write, tmp_path):
    write("apps/a.yaml", BAD_POD)
    write("apps/b.yml", BAD_POD)
    write(
        "apps/c.json",
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "j"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": 1}}}]},
            }
        ),
    )
    write(".hidden/d.yaml", BAD_POD)
    write("apps/notes.txt", BAD_POD)
    report = run_cli("check", str(tmp_path), "--format", "json").json()
    assert sorted(os.path.basename(f["path"]) for f in report["findings"]) == ["a.yaml", "b.yml", "c.json"]


def test_gitignored_files_are_skipped(write, tmp_path):
    write("a.yaml", BAD_POD)
    write("build/out.yaml", BAD_POD)
    write(".gitignore", "build/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    report = run_cli("check", str(tmp_path), "--format", "json").json()
    assert [os.path.basename(f["path"]) for f in report["findings"]] == ["a.yaml"]


def test_gitignore_comments_and_empty_lines_match_nothing(write, tmp_path):
    """As git: a line starting with "#" is a comment (escaped, "\\#" starts a pattern), an empty line a separator.
    An ignore file of comments only - the .git/info/exclude `git init` writes - adds no rules to ask per file."""
    from gpulint.lint.inputs.gitignore import _layer

    for name in ("a.yaml", "#b.yaml", "c.yaml"):
        write(name, BAD_POD)
    write(".gitignore", "# a.yaml\n\n\\#b.yaml\n#c.yaml\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    report = run_cli("check", str(tmp_path), "--format", "json").json()
    assert sorted({os.path.basename(f["path"]) for f in report["findings"]}) == ["a.yaml", "c.yaml"]
    assert _layer(str(tmp_path / ".git" / "info" / "exclude"), "", []) == ()
    assert _layer(str(tmp_path / ".gitignore"), "", []) != ()


def test_config_file_select_ignore_severity_and_per_path(write, tmp_path, monkeypatch):
    write("manifests/bad.yaml", BAD_POD)
    write("legacy/bad.yaml", BAD_POD)
    write(
        ".gpulint.yaml",
        """
        severity:
          gpu-request-without-limit: warning
        per-path-ignores:
          legacy/*: [gpu-request-without-limit]
    """,
    )
    monkeypatch.chdir(tmp_path / "manifests")  # discovered by walking up
    report = run_cli("check", str(tmp_path), "--format", "json")
    findings = report.json()["findings"]
    assert [(f["path"].split(os.sep)[-2], f["severity"]) for f in findings] == [("manifests", "warning")]
    assert report.exit_code == 0
    assert run_cli("check", str(tmp_path), "--fail-on", "warning").exit_code == 1
    assert run_cli("check", str(tmp_path), "--ignore", "gpu-request-without-limit", "--fail-on", "info").exit_code == 0


def test_pyproject_configuration(write, tmp_path, monkeypatch):
    write("bad.yaml", BAD_POD)
    write("pyproject.toml", '[project]\nname = "x"\n\n[tool.gpulint]\nignore = ["gpu-request-without-limit"]\n')
    monkeypatch.chdir(tmp_path)
    assert run_cli("check", "bad.yaml").exit_code == 0


@pytest.mark.parametrize(
    "config, words",
    [
        ("severity:\n  gpu-request-without-limit: fatal\n", "severity.gpu-request-without-limit"),
        ("selec: [a]\n", "unknown key 'selec'"),
        ("ignore: [gpu-request-without-limits]\n", "did you mean 'gpu-request-without-limit'"),
        ("kubernetes-version: '1.10'\n", "kubernetes-version"),
        ("select: [\n", "invalid YAML"),
        ("- a\n- b\n", "must be a mapping"),
    ],
)
def test_invalid_configuration_is_a_usage_error_naming_the_key(write, tmp_path, monkeypatch, config, words):
    write("good.yaml", GOOD_POD)
    write(".gpulint.yaml", config)
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "good.yaml")
    assert result.exit_code == 2
    assert words in result.stderr and ".gpulint.yaml" in result.stderr


def test_suppression_comments_and_annotation(write):
    path = write(
        "s.yaml",
        """
        # gpulint: disable-file=schema-invalid
        apiVersion: v1
        kind: Pod
        metadata: {name: a}
        spec:
          containers:
          - name: c
            image: i
            resource: {}
            resources:
              requests:
                # gpulint: disable=gpu-request-without-limit
                nvidia.com/gpu: 1
                amd.com/gpu: 1  # gpulint: disable=gpu-request-without-limit
                example.com/fpga: 1
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: b
          annotations:
            gpulint.io/ignore: "gpu-request-without-limit, gpu-non-integer # legacy"
        spec:
          containers:
          - name: c
            image: i
            resources:
              requests: {nvidia.com/gpu: 0.5}
    """,
    )
    report = run_cli("check", str(path), "--format", "json").json()
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("gpu-request-without-limit", 15)]
    assert report["summary"]["suppressed"] == 5


def test_rules_and_rule_docs():
    listing = run_cli("rules")
    assert listing.exit_code == 0
    for rule in ("gpu-request-without-limit", "gpu-non-integer", "schema-invalid", "yaml-invalid"):
        assert rule in listing.stdout
    docs = run_cli("rule", "gpu-request-without-limit").stdout
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Kubernetes rule",
        "## Example",
        "## Use instead",
        "Limit must be set for non overcommitable resources",
    ):
        assert section in docs
    unknown = run_cli("rule", "gpu-request-without-limits")
    assert unknown.exit_code == 2 and "did you mean" in unknown.stderr


@pytest.mark.slow
def test_installed_console_script_runs_from_another_directory(tmp_path, write):
    bad = write("bad.yaml", BAD_POD)
    script = os.path.join(os.path.dirname(sys.executable), "gpulint")
    result = subprocess.run([script, "check", str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "gpu-request-without-limit" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_directory_named_explicitly_is_read_even_when_git_ignores_it(write, tmp_path):
    write(".gitignore", "vendor/\n")
    write("vendor/charts/bad.yaml", BAD_POD)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    report = run_cli("check", str(tmp_path / "vendor"), "--format", "json").json()
    assert len(report["findings"]) == 1
    assert run_cli("check", str(tmp_path), "--format", "json").json()["findings"] == []


def test_suppression_comments_may_carry_a_reason(write):
    path = write(
        "r.yaml",
        BAD_POD.replace(
            "requests: {nvidia.com/gpu: 1}",
            "requests: {nvidia.com/gpu: 1}  # gpulint: disable=gpu-request-without-limit"
            " -- the platform webhook adds the limit",
        ),
    )
    report = run_cli("check", str(path), "--format", "json").json()
    assert report["findings"] == [] and report["summary"]["suppressed"] == 1


def test_pod_template_annotation_suppresses_findings_inside_the_template(write):
    path = write(
        "d.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata:
              labels: {a: b}
              annotations: {gpulint.io/ignore: gpu-non-integer}
            spec:
              containers:
              - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 0.5}, requests: {amd.com/gpu: 1}}}
    """,
    )
    report = run_cli("check", str(path), "--format", "json").json()
    assert [f["rule"] for f in report["findings"]] == ["gpu-request-without-limit"]
    assert report["summary"]["suppressed"] == 1
