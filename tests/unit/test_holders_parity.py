"""gpu-unschedulable's CronJob holders (issue #29) in one plain file: the same in one process, split over workers
(--jobs 2 and 3) and checked one parse at a time (a streamed run), which give each file's checks only the objects kept of
every file (its own too). A Deployment without Helm release labels crosses no file, yet a CronJob of its own file
waits for it: trueforge-org/truecharts#18712's two objects (Nextcloud holding the node's iGPU, its preview
CronJob asking for it) as one manifest applied whole, the way a home-lab repository writes them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

import gpulint.lint.run

DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nextcloud
      namespace: nextcloud
    spec:
      replicas: 1
      strategy: {type: Recreate}
      selector:
        matchLabels: {app: nextcloud}
      template:
        metadata:
          labels: {app: nextcloud}
        spec:
          containers:
            - name: nextcloud
              image: nextcloud:28.0.2
              resources:
                limits: {memory: 8Gi, gpu.intel.com/i915: 1}
"""
CRONJOB = """
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: nextcloud-preview-cron
      namespace: nextcloud
    spec:
      schedule: "*/5 * * * *"
      concurrencyPolicy: Forbid
      jobTemplate:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: preview
                  image: nextcloud:28.0.2
                  command: ["php", "occ", "preview:pre-generate"]
                  resources:
                    limits: {memory: 8Gi, gpu.intel.com/i915: 1}
"""
OTHER = """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: nextcloud-php, namespace: nextcloud}
    data: {memory_limit: 2G}
"""
STARVED = "this CronJob's pods fit no node once Deployment nextcloud runs"


def _text(*documents: str) -> str:
    return "---\n".join(textwrap.dedent(document).lstrip("\n") for document in documents)


def _node(igpus: int) -> str:
    """A single node whose Intel device plugin publishes ``igpus`` gpu.intel.com/i915."""
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110", "gpu.intel.com/i915": str(igpus)}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "truenas", "labels": {"kubernetes.io/hostname": "truenas"}},
            "status": {"capacity": resources, "allocatable": resources},
        }
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def _starved(repo: Path, igpus: int, files: dict[str, str], monkeypatch) -> list[tuple[str, int]]:
    """The CronJob holder findings of `gpulint check .`, after asserting that one process, two workers and a
    streamed run (one and two workers) print the same."""
    for name, text in {**files, "apps/php.yaml": _text(OTHER)}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    inventory = repo.parent / "node.json"
    inventory.write_text(_node(igpus), encoding="utf-8")
    args = ["check", ".", "--inventory", str(inventory), "--select", "gpu-unschedulable", "--format", "json"]
    kept = run_cli(*args, "--jobs", "1")
    assert kept.exit_code in (0, 1), kept.stderr
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    for jobs in ("2", "3"):
        assert run_cli(*args, "--jobs", jobs).stdout == kept.stdout, jobs
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    for jobs in ("1", "2", "3"):
        assert run_cli(*args, "--jobs", jobs).stdout == kept.stdout, jobs
    return [(f["path"], f["line"]) for f in kept.json()["findings"] if STARVED in f["message"]]


def test_a_deployment_without_release_labels_starves_the_cronjob_of_its_file_in_every_run(repo, monkeypatch):
    found = _starved(repo, 1, {"nextcloud/nextcloud.yaml": _text(DEPLOYMENT, CRONJOB)}, monkeypatch)
    assert found == [("nextcloud/nextcloud.yaml", 39)]  # the CronJob's i915 limit


def test_the_cronjob_written_first_is_starved_all_the_same(repo, monkeypatch):
    found = _starved(repo, 1, {"nextcloud/nextcloud.yaml": _text(CRONJOB, DEPLOYMENT)}, monkeypatch)
    assert found == [("nextcloud/nextcloud.yaml", 19)]


def test_clean_a_second_igpu_leaves_room_for_the_cronjob(repo, monkeypatch):
    assert _starved(repo, 2, {"nextcloud/nextcloud.yaml": _text(DEPLOYMENT, CRONJOB)}, monkeypatch) == []


@pytest.mark.parametrize(
    "files",
    [
        # two files without a kustomization or release labels: nothing says they are applied together
        {"nextcloud/deployment.yaml": _text(DEPLOYMENT), "nextcloud/cronjob.yaml": _text(CRONJOB)},
        # one file, two namespaces: a repository is not one cluster's one namespace
        {"nextcloud/nextcloud.yaml": _text(DEPLOYMENT.replace("namespace: nextcloud", "namespace: web"), CRONJOB)},
    ],
    ids=["two-files", "two-namespaces"],
)
def test_trap_a_deployment_of_another_unit_starves_nothing(repo, monkeypatch, files):
    assert _starved(repo, 1, files, monkeypatch) == []
