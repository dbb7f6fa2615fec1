"""scripts/new_rule.py starts a rule in a checkout: its check, docs and cases, then the index and pages
regenerated from that working tree, so the rule is listed with nothing counted by hand. Run on a copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

SCRIPT = [sys.executable, "scripts/new_rule.py"]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "gpulint"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("gpulint", "rules", "scripts", "schemas", "catalog", "docs/rules", "tests/rules"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([*SCRIPT, *args], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _listed(root: Path) -> str:
    """`gpulint rules` as the copy's code lists them."""
    code = "import sys; from gpulint.cli.main import cli; sys.argv = ['gpulint', 'rules']; cli()"
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", code], cwd=root.parent, env=env, capture_output=True, text=True)
    return done.stdout


def test_a_new_rule_is_written_indexed_and_paged(checkout):
    done = _run(checkout, "gpu-example-thing", "--severity", "warning", "--summary", "An example finding.")
    assert done.returncode == 0, done.stderr
    check = checkout / "gpulint" / "lint" / "checks" / "gpu_example_thing.py"
    assert 'SPEC = RuleSpec("gpu-example-thing", Severity.WARNING)' in check.read_text()
    assert (checkout / "rules" / "gpu-example-thing.yaml").read_text().startswith("id: gpu-example-thing\n")
    assert (checkout / "tests" / "rules" / "gpu-example-thing.md").read_text().startswith("# gpu-example-thing\n")
    assert (
        '("gpu_example_thing", RuleSpec("gpu-example-thing", Severity.WARNING)'
        in (checkout / "gpulint" / "lint" / "rule_index.py").read_text()
    )
    assert (checkout / "docs" / "rules" / "gpu-example-thing.md").is_file()
    assert "gpu-example-thing" in (checkout / "docs" / "rules" / "index.md").read_text()
    assert "gpu-example-thing" in _listed(checkout)


def test_it_never_overwrites_a_rule_and_refuses_a_bad_id(checkout):
    docs = checkout / "rules" / "gpu-non-integer.yaml"
    before = docs.read_bytes()
    taken = _run(checkout, "gpu-non-integer", "--severity", "error", "--summary", "x")
    assert taken.returncode == 2 and "gpu-non-integer exists already" in taken.stderr
    assert docs.read_bytes() == before
    bad = _run(checkout, "GPU_thing", "--severity", "error", "--summary", "x")
    assert bad.returncode == 2 and "lowercase words joined by hyphens" in bad.stderr
