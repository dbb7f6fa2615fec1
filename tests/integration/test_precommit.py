"""A real `pre-commit try-repo` run of this repository's hook against a temporary git repository."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO
from support.manifests import BAD_POD, GOOD_POD

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_pre_commit_try_repo_flags_the_bad_manifest_only(tmp_path):
    if not (REPO / ".pre-commit-hooks.yaml").is_file() or not (REPO / ".git").exists():
        raise AssertionError("run the tests from a git checkout of gpulint")
    work = tmp_path / "gitops"
    work.mkdir()
    (work / "bad.yaml").write_text(BAD_POD.lstrip())
    (work / "good.yaml").write_text(GOOD_POD.lstrip())
    (work / "notes.txt").write_text("not a manifest\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or "pre-commit"

    def try_repo(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [pre_commit, "try-repo", str(REPO), "gpulint", "--files", *files],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    failing = try_repo("bad.yaml", "good.yaml", "notes.txt")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.yaml:9:18: error[gpu-request-without-limit]" in failing.stdout
    assert not any(line.startswith("good.yaml:") for line in failing.stdout.splitlines())
    passing = try_repo("good.yaml")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
