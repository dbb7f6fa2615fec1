"""A pod template held in a ConfigMap that kustomize's configMapGenerator made (render/generator_places.py): each
finding sits at its field's line and column in the file the generator read, through `gpulint check` on the
overlay (rendered by the real `kubectl kustomize`) and on the file alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import check_json

from gpulint.lint.inputs.render.generator_places import written
from gpulint.lint.inputs.render.layout import read_kustomization

SHM = "dev-shm-missing"

# Shaped like an ARC runner scale set's hook extension kept in a kustomize base (as pytorch/ci-infra and
# ARC's docs keep it): the template a file of its own, the ConfigMap generated.
TEMPLATE = """\
metadata:
  labels:
    runner-type: gpu
spec:
  tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
  containers:
    - name: "$job"
      resources:
        limits:
          nvidia.com/gpu: 4
"""
WITH_SHM = TEMPLATE.replace(
    "          nvidia.com/gpu: 4\n",
    "          nvidia.com/gpu: 4\n      volumeMounts:\n        - name: dshm\n          mountPath: /dev/shm\n"
    "  volumes:\n    - name: dshm\n      emptyDir:\n        medium: Memory\n",
)
BASE = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: arc-runners
configMapGenerator:
  - name: hook
    literals:
      - owner=ci
  - name: hook-extension
    files:
      - job-pod.yaml=templates/gpu-pod.yaml
  - name: runner-env
    envs:
      - runner.env
"""


def _overlay(tmp_path: Path, template: str, kustomization: str = BASE) -> Path:
    """The base and a production overlay in one git repository (the overlay reads its base from there)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    base = tmp_path / "runners" / "base"
    (base / "templates").mkdir(parents=True)
    (base / "kustomization.yaml").write_text(kustomization, encoding="utf-8")
    (base / "templates" / "gpu-pod.yaml").write_text(template, encoding="utf-8")
    (base / "runner.env").write_text("# runner settings\nRUNNER_LABELS=gpu\nMAX_RUNNERS=4\n", encoding="utf-8")
    overlay = tmp_path / "runners" / "prod"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n  - ../base\nnamePrefix: prod-\n", encoding="utf-8")
    return overlay


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _shm(findings: list[dict]) -> list[tuple[str, int, int]]:
    return [(Path(f["path"]).name, f["line"], f["column"]) for f in findings if f["rule"] == SHM]


def test_a_held_pod_of_a_generated_config_map_is_placed_in_the_file_the_generator_read(tmp_path: Path, kubectl: Path):
    overlay = _overlay(tmp_path, TEMPLATE)
    found = check_json(str(overlay), "--kubectl", str(kubectl))
    # the value of the container's name, as for a ConfigMap written by hand (not 1:1 of the kustomization)
    assert _shm(found) == [("gpu-pod.yaml", _line(TEMPLATE, '- name: "$job"'), 13)], found


def test_the_file_alone_gives_the_same_place(tmp_path: Path, kubectl: Path):
    """Per file (a pre-commit hook names the changed template): the overlay holding it is rendered, and the
    finding is in that file."""
    overlay = _overlay(tmp_path, TEMPLATE)
    template = overlay.parent / "base" / "templates" / "gpu-pod.yaml"
    found = check_json(str(template), "--kubectl", str(kubectl))
    assert _shm(found) == [("gpu-pod.yaml", _line(TEMPLATE, '- name: "$job"'), 13)], found


def test_the_fixed_template_is_clean(tmp_path: Path, kubectl: Path):
    overlay = _overlay(tmp_path, WITH_SHM)
    assert _shm(check_json(str(overlay), "--kubectl", str(kubectl))) == []


def test_a_comment_in_the_generators_file_suppresses_it(tmp_path: Path, kubectl: Path):
    marked = TEMPLATE.replace('- name: "$job"', '- name: "$job"  # gpulint: disable=dev-shm-missing -- NCCL off')
    overlay = _overlay(tmp_path, marked)
    assert _shm(check_json(str(overlay), "--kubectl", str(kubectl))) == []


def test_a_file_named_by_its_base_name_and_a_hashed_name(tmp_path: Path, kubectl: Path):
    """No `key=`: the key is the file's name; no disableNameSuffixHash: the name gains a hash, and the generator
    whose name is the longest inside it is the one (`hook` is inside `prod-hook-extension-...` too)."""
    kustomization = BASE.replace("job-pod.yaml=templates/gpu-pod.yaml", "templates/gpu-pod.yaml")
    kustomization = kustomization.replace("  - name: hook\n", "  - name: hook\n    files:\n      - runner.env\n")
    overlay = _overlay(tmp_path, TEMPLATE, kustomization)
    found = check_json(str(overlay), "--kubectl", str(kubectl))
    assert _shm(found) == [("gpu-pod.yaml", _line(TEMPLATE, '- name: "$job"'), 13)], found


@pytest.mark.parametrize(
    ("name", "key", "where"),
    [
        ("prod-runner-env-7h2c5m", "MAX_RUNNERS", ("runner.env", 3, 13)),  # the value after `MAX_RUNNERS=`
        ("prod-hook-5fk7d", "owner", ("kustomization.yaml", 7, 15)),  # the literal's value in the kustomization
        ("prod-hook-extension-9t6b", "job-pod.yaml", ("gpu-pod.yaml", 0, 0)),  # the whole file
        ("prod-hook-extension-9t6b", "other.yaml", None),  # no source says: the kustomization, 1:1
        ("unrelated", "owner", None),
    ],
)
def test_each_source_kind_of_a_generator(tmp_path: Path, name: str, key: str, where: tuple[str, int, int] | None):
    base = _overlay(tmp_path, TEMPLATE).parent / "base"
    source = written(read_kustomization(str(base / "kustomization.yaml")), name, key)
    placed = None if source is None else (Path(source.file).name, source.line, source.column)
    assert placed == where


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_an_env_file_that_is_no_regular_file_is_not_read(tmp_path: Path, kind: str):
    # A working tree (pre-commit runs on one) may hold a FIFO or a link where the generator's env file was: the
    # place is then not found, and nothing waits on the FIFO or reads through the link.
    base = _overlay(tmp_path, TEMPLATE).parent / "base"
    env = base / "runner.env"
    outside = tmp_path / "outside.env"
    outside.write_text(env.read_text())
    env.unlink()
    if kind == "fifo":
        os.mkfifo(env)
    else:
        env.symlink_to(outside)
    assert (
        written(read_kustomization(str(base / "kustomization.yaml")), "prod-runner-env-7h2c5m", "MAX_RUNNERS") is None
    )
