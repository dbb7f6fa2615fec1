"""The GitHub Action and pre-commit hook definitions point at commands and formats that exist."""

import yaml
from conftest import REPO

from gpulint.report import FORMATS


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
