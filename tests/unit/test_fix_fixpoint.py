"""`gpulint check --fix` and `--diff` reach their fixpoint (cli/fix_passes.py), as ruff's fix loop does: a fix that
exposes others is followed by theirs in the same run, and fixes that keep changing a file stop at MAX_PASSES with
ruff's "failed to converge" message.

The two-pass shape is refused2's (tests/unit/test_refused_by_rules.py): a vLLM Deployment asking GPUs through
requests alone is refused by the API server ("Limit must be set for non overcommitable resources"), so its pods'
dev-shm-missing finding, and its fix, is held back until the limit is set.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.cli import check as check_module
from gpulint.cli.fix_passes import MAX_PASSES
from gpulint.lint.findings import Diagnostic, FixSafety, Severity
from gpulint.lint.rule_spec import Scope

# A vLLM server asking two GPUs through requests alone (no limit), without /dev/shm.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-llama
  namespace: serving
spec:
  replicas: 1
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "2"]
        resources:
          requests: {nvidia.com/gpu: "2"}
"""

# A Job whose Pod spec asks one GPU under a limit of two: refused (the request must equal the limit), and which
# reading is meant is a choice: an unsafe fix, applied with --unsafe-fixes only.
UNEQUAL = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
        command: ["torchrun", "--nproc_per_node=2", "train.py"]
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 2}
"""


def _write(tmp_path: Path, text: str) -> Path:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text)
    return manifest


def test_a_refusals_fix_and_the_fixes_it_held_back_in_one_run(tmp_path: Path) -> None:
    manifest = _write(tmp_path, DEPLOYMENT)
    before = json.loads(run_cli("check", str(manifest), "--format", "json").stdout)["findings"]
    shm = [(f["severity"], f["fix"]) for f in before if f["rule"] == "dev-shm-missing"]
    assert shm == [("info", None)]  # held back behind the refusal, its fix with it
    result = run_cli("check", "--fix", str(manifest))
    fixed = manifest.read_text()
    assert 'limits:\n            nvidia.com/gpu: "2"' in fixed  # the refusal's fix, first pass
    assert "emptyDir: {medium: Memory}" in fixed and "mountPath: /dev/shm" in fixed  # the held-back one, second
    assert result.stderr == f"gpulint: {manifest}: applied 2 fixes\n"
    assert result.exit_code == 0 and "No problems found" in result.stdout  # the report is the last pass's
    again = run_cli("check", "--fix", str(manifest))
    assert manifest.read_text() == fixed and again.stderr == ""


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_the_diff_shows_every_pass_and_is_what_fix_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _write(tmp_path, DEPLOYMENT)
    diff = run_cli("check", "--diff", "manifest.yaml")
    assert diff.exit_code == 1 and manifest.read_text() == DEPLOYMENT  # --diff writes nothing
    assert "+          limits:" in diff.stdout and "+      volumes: [{name: dshm" in diff.stdout
    patched = tmp_path / "patched"
    patched.mkdir()
    (patched / "manifest.yaml").write_text(DEPLOYMENT)
    subprocess.run(["patch", "-s", "-p1"], cwd=patched, input=diff.stdout.encode(), check=True)
    run_cli("check", "--fix", "manifest.yaml")
    assert (patched / "manifest.yaml").read_text() == manifest.read_text()


def test_unsafe_fixes_reach_the_fixpoint_too(tmp_path: Path) -> None:
    manifest = _write(tmp_path, UNEQUAL)
    safe = run_cli("check", "--fix", str(manifest))
    # no safe fix lifts the refusal, and the fix held behind it is not offered: the file is left alone
    assert manifest.read_text() == UNEQUAL and safe.stderr == "" and safe.exit_code == 1
    unsafe = run_cli("check", "--fix", "--unsafe-fixes", str(manifest))
    fixed = manifest.read_text()
    assert "mountPath: /dev/shm" in fixed and unsafe.stderr == f"gpulint: {manifest}: applied 2 fixes\n"
    assert "gpu-request-without-limit" not in unsafe.stdout
    assert run_cli("check", "--diff", "--unsafe-fixes", str(manifest)).stdout == ""


def test_standard_input_diff_reaches_the_fixpoint() -> None:
    diff = run_cli("check", "--diff", "-", input=DEPLOYMENT)
    assert "+          limits:" in diff.stdout and "mountPath: /dev/shm" in diff.stdout
    assert diff.stdout.count("--- a/") == 1  # one file, one diff over both passes


# --- the bound --------------------------------------------------------------------------------------------------
# No gpulint fix undoes another (each sets a field or adds a volume that no other fix touches), so the bound is hit
# with a rule made here: it sets a label to the value it does not have, so every pass changes the file again.

FLIP = "test-flip-flop"


def _flip(obj, ctx) -> Iterator[Diagnostic]:  # type: ignore[no-untyped-def]
    value = ((obj.data.get("metadata") or {}).get("labels") or {}).get("flip")
    yield Diagnostic(
        FLIP,
        ("metadata", "labels", "flip"),
        "flips",
        fix_path=("metadata", "labels", "flip"),
        fix_value="b" if value == "a" else "a",
        fix_description="flip it",
        fix_safety=FixSafety.SAFE,
    )


def _with_flip(enabled):  # type: ignore[no-untyped-def]
    def rules(config):  # type: ignore[no-untyped-def]
        found = enabled(config)
        template = next(iter(found.values()))
        return {
            **found,
            FLIP: replace(
                template,
                id=FLIP,
                severity=Severity.WARNING,
                check=_flip,
                kinds=None,
                needs=frozenset(),
                scope=Scope.OBJECT,
            ),
        }

    return rules


def test_fixes_that_never_settle_stop_at_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_module, "enabled_rules", _with_flip(check_module.enabled_rules))
    manifest = _write(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    result = run_cli("check", "--fix", str(manifest))
    assert f"gpulint: error: {manifest}: its fixes failed to converge after {MAX_PASSES} passes" in result.stderr
    assert f"gpulint: {manifest}: applied {MAX_PASSES} fixes" in result.stderr
    assert result.exit_code == 1
    assert 'flip: "b"' in manifest.read_text()  # ten passes: a, b, ..., b; the last pass is kept
    assert f"warning[{FLIP}]" in result.stdout  # what the last pass left
    diff = run_cli("check", "--diff", str(manifest))
    assert "failed to converge" in diff.stderr and diff.exit_code == 1
