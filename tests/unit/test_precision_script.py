"""benchmarks/precision.py on a repository it can judge: per unit and per repository, true and false."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import yaml
from conftest import REPO

JOB = textwrap.dedent("""\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: finetune}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: trainer
            image: trainer:1
            resources:
              requests: {nvidia.com/gpu: 1}
              limits: {nvidia.com/gpu: 2}
    """)


def test_precision_per_unit_and_repository(tmp_path: Path):
    checkout = tmp_path / "repos" / "example+gpu-demos"
    (checkout / "jobs").mkdir(parents=True)
    (checkout / "jobs" / "finetune.yaml").write_text(JOB)
    (checkout / "jobs" / "again.yaml").write_text(JOB.replace("finetune", "again"))
    labels = tmp_path / "labels.yaml"
    entry = {"line": 12, "rule": "gpu-request-without-limit", "why": "request != limit is refused"}
    labels.write_text(
        yaml.safe_dump(
            {
                "repositories": {
                    "example/gpu-demos": {
                        "findings": [
                            {"path": "jobs/finetune.yaml", "verdict": True, **entry},
                            {"path": "jobs/again.yaml", "verdict": False, **entry},
                        ]
                    }
                }
            }
        )
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "precision.py"), "--repos", str(tmp_path / "repos"),
         "--labels", str(labels), "--ignore-rules", "dev-shm-missing", "--unlabelled", str(tmp_path / "todo.yaml")],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    rows = {
        tuple(line.split()[:2]): line.split()[2:] for line in done.stdout.splitlines() if line[:4] in ("repo", "unit")
    }
    assert rows[("repo", "example/gpu-demos")] == ["1", "1", "0", "0", "50.0%"]
    assert rows[("unit", "example/gpu-demos")] == ["1", "1", "0", "0", "50.0%"]
    assert "false (repo): example/gpu-demos/jobs/again.yaml:12 gpu-request-without-limit" in done.stdout
    assert yaml.safe_load((tmp_path / "todo.yaml").read_text()) == {"repositories": {}}


def test_a_label_for_one_severity_judges_only_findings_of_that_severity(tmp_path: Path):
    checkout = tmp_path / "repos" / "example+gpu-demos"
    (checkout / "jobs").mkdir(parents=True)
    (checkout / "jobs" / "finetune.yaml").write_text(JOB)
    entry = {"path": "jobs/finetune.yaml", "line": 12, "rule": "gpu-request-without-limit", "why": "-"}
    labels = tmp_path / "labels.yaml"

    def rows(*findings: dict) -> dict[tuple[str, ...], list[str]]:
        labels.write_text(yaml.safe_dump({"repositories": {"example/gpu-demos": {"findings": list(findings)}}}))
        done = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "precision.py"), "--repos", str(tmp_path / "repos"),
             "--labels", str(labels), "--ignore-rules", "dev-shm-missing", "--mode", "repo"],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        return {tuple(line.split()[:2]): line.split()[2:] for line in done.stdout.splitlines() if line[:4] == "repo"}

    # the finding is an error: the warning's verdict does not judge it, the error's does
    both = rows({**entry, "severity": "warning", "verdict": True}, {**entry, "severity": "error", "verdict": False})
    assert both[("repo", "example/gpu-demos")] == ["0", "1", "0", "0", "0.0%"]
    assert rows({**entry, "severity": "warning", "verdict": True})[("repo", "example/gpu-demos")][:3] == ["0", "0", "1"]
    assert rows({**entry, "verdict": True})[("repo", "example/gpu-demos")][:3] == ["1", "0", "0"]


def test_gpu_units_leave_out_files_that_name_no_accelerator(tmp_path: Path):
    checkout = tmp_path / "repos" / "example+gpu-demos"
    (checkout / "jobs").mkdir(parents=True)
    (checkout / "jobs" / "finetune.yaml").write_text(JOB)
    # a CPU job with the same defect: request above limit (refused), but nothing in it can hold a GPU
    (checkout / "jobs" / "etl.yaml").write_text(
        JOB.replace("finetune", "etl").replace("nvidia.com/gpu: 1", "cpu: 2").replace("nvidia.com/gpu: 2", "cpu: 1")
    )

    def units_counted(choice: str) -> str:
        done = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "precision.py"), "--repos", str(tmp_path / "repos"),
             "--labels", str(tmp_path / "none.yaml"), "--mode", "unit", "--units", choice],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        return next(line for line in done.stdout.splitlines() if line.startswith("units: "))

    (tmp_path / "none.yaml").write_text("repositories: {}\n")
    assert units_counted("all") == "units: 2 files"
    assert units_counted("gpu") == "units: 1 files"
