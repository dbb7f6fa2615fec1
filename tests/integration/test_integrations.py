"""The GitHub Action, the pre-commit hook and the CI recipes of docs/ci.md: real commands that run as written."""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from gpulint.report import FORMATS

pytestmark = pytest.mark.integration


def test_action_runs_gpulint_with_real_formats_and_uploads_sarif():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "gpulint check --format github" in scripts and "gpulint check --format sarif" in scripts
    assert {"github", "sarif"} <= set(FORMATS)
    assert any(step.get("uses", "").startswith("github/codeql-action/upload-sarif") for step in steps)
    assert set(action["inputs"]) >= {"paths", "args", "sarif-file", "upload-sarif"}


def test_pre_commit_hook_definition():
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "gpulint" and hook["language"] == "python"
    assert hook["entry"] == "gpulint check --force-exclude" and set(hook["types_or"]) == {"yaml", "json"}


# --- the CI recipes (docs/ci.md), run as written --------------------------------------------------

BAD_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {nvidia.com/gpu: 1}
"""


def recipe(name: str) -> dict:
    """The YAML block after `<!-- recipe: NAME -->` in docs/ci.md."""
    page = (REPO / "docs" / "ci.md").read_text()
    found = re.search(rf"<!-- recipe: {name} -->\n```yaml\n(.*?)```", page, re.S)
    assert found, f"docs/ci.md has no recipe {name}"
    return yaml.safe_load(found.group(1))


def _gpulint_bin() -> str:
    return os.path.dirname(sys.executable)


def _action_step(name: str) -> dict:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    return next(step for step in action["runs"]["steps"] if step.get("name") == name)


def _run_lint_step(workdir: Path, paths: str, args: str = "") -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """The action's "Run gpulint" step, with its inputs as GitHub would pass them."""
    step = _action_step("Run gpulint")
    output = workdir / "github_output"
    output.write_text("")
    env = {
        **os.environ,
        "PATH": f"{_gpulint_bin()}{os.pathsep}{os.environ['PATH']}",
        "GPULINT_PATHS": paths,
        "GPULINT_ARGS": args,
        "GPULINT_SARIF": "gpulint.sarif",
        "GITHUB_OUTPUT": str(output),
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        ["bash", "-c", step["run"]], cwd=workdir, env=env, capture_output=True, text=True, timeout=300
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return done, outputs


@pytest.mark.slow
def test_action_lint_step_writes_sarif_and_the_exit_code(tmp_path):
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps/job.yaml").write_text(BAD_JOB)
    done, outputs = _run_lint_step(tmp_path, "apps/")
    assert done.returncode == 0, done.stderr
    assert outputs == {"exit-code": "1", "sarif": "gpulint.sarif"}
    assert done.stdout.startswith("::error file=apps/job.yaml,line=12,col=22,title=gpulint gpu-request-without-limit::")
    log = json.loads((tmp_path / "gpulint.sarif").read_text())
    assert log["runs"][0]["results"][0]["ruleId"] == "gpu-request-without-limit"
    fail = _action_step("Fail on findings")
    code = subprocess.run(["bash", "-c", fail["run"]], env={**os.environ, "GPULINT_EXIT": outputs["exit-code"]})
    assert code.returncode == 1


def test_action_installs_a_renderer_only_where_the_runner_lacks_it(tmp_path):
    """A chart the runner cannot render is only a warning (issue #28), so the action brings helm and kubectl."""
    step = _action_step("Find helm and kubectl")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "helm").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "helm").chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {"PATH": str(tmp_path / "bin"), "GITHUB_OUTPUT": str(output)}  # the step uses only bash builtins
    subprocess.run(["/bin/bash", "-c", step["run"]], env=env, check=True, timeout=30)
    assert dict(line.split("=") for line in output.read_text().splitlines()) == {"helm": "found", "kubectl": "missing"}
    assert _action_step("Install helm")["if"] == "${{ steps.renderers.outputs.helm == 'missing' }}"
    assert _action_step("Install kubectl")["if"] == "${{ steps.renderers.outputs.kubectl == 'missing' }}"
    names = [step.get("name") for step in yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]]
    assert names.index("Install kubectl") < names.index("Run gpulint")


def test_action_skips_the_upload_with_a_message_when_gpulint_fails(tmp_path):
    done, outputs = _run_lint_step(tmp_path, "missing/", "--kubernetes-version 1.20")
    assert outputs == {"exit-code": "2", "sarif": ""}
    assert "::error title=gpulint::gpulint could not run (exit code 2" in done.stdout
    assert "the code scanning upload is skipped" in done.stdout
    assert not (tmp_path / "gpulint.sarif").exists()
    upload = _action_step("Upload SARIF")
    assert "steps.lint.outputs.sarif != ''" in upload["if"]
    assert "!github.event.pull_request.head.repo.fork" in upload["if"]  # forks get a read-only token
    assert upload["with"]["sarif_file"] == "${{ steps.lint.outputs.sarif }}"
    fork = _action_step("Skip the SARIF upload on a pull request from a fork")
    assert "github.event.pull_request.head.repo.fork" in fork["if"] and "::notice" in fork["run"]
    fail = _action_step("Fail on findings")
    assert subprocess.run(["bash", "-c", fail["run"]], env={**os.environ, "GPULINT_EXIT": "2"}).returncode == 2
    # a step that never ran leaves the output empty: the job must fail, not pass
    assert subprocess.run(["bash", "-c", fail["run"]], env={**os.environ, "GPULINT_EXIT": ""}).returncode == 3


def test_readme_github_workflow_uses_this_action_with_the_permissions_it_needs():
    workflow = recipe("github")
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    steps = workflow["jobs"]["gpulint"]["steps"]
    uses = steps[1]["uses"]
    assert uses.startswith("gpulint/gpulint@")
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert set(steps[1]["with"]) <= set(action["inputs"])


@pytest.mark.slow
def test_readme_gitlab_job_runs_as_written(tmp_path):
    job = recipe("gitlab")["gpulint"]
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests/job.yaml").write_text(BAD_JOB)
    env = {**os.environ, "PATH": f"{_gpulint_bin()}{os.pathsep}{os.environ['PATH']}", **job["variables"]}
    install, *commands = job["script"]
    assert install == 'pip install "git+https://github.com/gpulint/gpulint@${GPULINT_REF}"'  # this gpulint instead
    codes = [
        subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, timeout=300).returncode for command in commands
    ]
    assert codes == [0, 1]  # the report never fails the job; the JUnit run does, on the error
    reports = job["artifacts"]["reports"]
    issues = json.loads((tmp_path / reports["codequality"]).read_text())
    assert issues[0]["check_name"] == "gpulint/gpu-request-without-limit"
    assert issues[0]["location"] == {"path": "manifests/job.yaml", "lines": {"begin": 12}}
    suite = ET.parse(tmp_path / reports["junit"]).getroot().find("testsuite")
    assert suite.get("failures") == "1"
    assert job["artifacts"]["when"] == "always"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_release_procedure_creates_the_refs_the_recipes_pin(tmp_path):
    clone = tmp_path / "gpulint"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "r",
        "GIT_AUTHOR_EMAIL": "r@example.com",
        "GIT_COMMITTER_NAME": "r",
        "GIT_COMMITTER_EMAIL": "r@example.com",
    }
    version = re.search(r'(?m)^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text()).group(1)
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts/release.py"), version, "--root", str(clone)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "git push origin" in done.stdout and f"v{version}" in done.stdout
    pins = {
        recipe("github")["jobs"]["gpulint"]["steps"][1]["uses"].split("@", 1)[1],
        recipe("pre-commit")["repos"][0]["rev"],
        recipe("gitlab")["gpulint"]["variables"]["GPULINT_REF"],
    }
    assert pins == {f"v{version.split('.')[0]}", f"v{version}"}
    for ref in pins:
        for path in ("action.yml", ".pre-commit-hooks.yaml", "pyproject.toml"):
            subprocess.run(["git", "cat-file", "-e", f"{ref}:{path}"], cwd=clone, check=True)
    again = subprocess.run(
        [sys.executable, str(REPO / "scripts/release.py"), version, "--root", str(clone)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert again.returncode != 0 and f"v{version} exists already" in again.stderr


def test_release_bumps_the_version_everywhere_and_commits(tmp_path):
    clone = tmp_path / "gpulint"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "r",
        "GIT_AUTHOR_EMAIL": "r@example.com",
        "GIT_COMMITTER_NAME": "r",
        "GIT_COMMITTER_EMAIL": "r@example.com",
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts/release.py"), "7.8.9", "--root", str(clone)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert 'version = "7.8.9"' in (clone / "pyproject.toml").read_text()
    assert '__version__ = "7.8.9"' in (clone / "gpulint/__init__.py").read_text()
    log = subprocess.run(["git", "log", "-1", "--format=%s", "v7"], cwd=clone, capture_output=True, text=True).stdout
    assert log.strip() == "Release 7.8.9"
    assert "git push --force origin v7" in done.stdout
