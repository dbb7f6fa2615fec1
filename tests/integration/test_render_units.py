"""One render deploys together (issue #29): the objects one `kubectl kustomize` of an overlay or one `helm template`
of a chart makes are one unit for gpu-unschedulable's CronJob holders, whatever files and labels they come from.
Rendered with the real kubectl and helm (tests/k8s_binaries.py); each run split (--jobs) and streamed too."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

import gpulint.lint.run

pytestmark = pytest.mark.integration

# A self-hosted Nextcloud written as a kustomize base, one file per object and no Helm labels: the app keeps the
# node's iGPU for its video previews, and the preview CronJob asks for it too (trueforge-org/truecharts#18712,
# the same two objects as a chart).
DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nextcloud
      labels:
        app.kubernetes.io/name: nextcloud
    spec:
      replicas: 1
      strategy:
        type: Recreate
      selector:
        matchLabels:
          app.kubernetes.io/name: nextcloud
      template:
        metadata:
          labels:
            app.kubernetes.io/name: nextcloud
        spec:
          containers:
            - name: nextcloud
              image: nextcloud:28.0.2
              resources:
                requests: {cpu: 10m, memory: 50Mi}
                limits:
                  memory: 8Gi
                  gpu.intel.com/i915: 1
"""
CRONJOB = """
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: nextcloud-preview-cron
      labels:
        app.kubernetes.io/name: nextcloud
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
                    limits:
                      memory: 8Gi
                      gpu.intel.com/i915: 1
"""
BASE = {
    "base/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - deployment.yaml
          - cronjob.yaml
    """,
    "base/deployment.yaml": DEPLOYMENT,
    "base/cronjob.yaml": CRONJOB,
}


def _overlay(namespace: str) -> str:
    return f"""
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: {namespace}
        resources:
          - ../../base
    """


# A file checked alongside, so that --jobs splits the run (PARALLEL_MIN_FILES is lowered below).
OTHER = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: nextcloud-php
      namespace: nextcloud
    data:
      memory_limit: 2G
"""
STARVED = (
    "this CronJob's pods fit no node once Deployment nextcloud runs: it holds the gpu.intel.com/i915 of every "
    "node they can use"
)


def _node(igpus: int) -> str:
    """A TrueNAS-like single node; the Intel device plugin publishes ``igpus`` gpu.intel.com/i915 (-shared-dev-num)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": "truenas",
                "labels": {"kubernetes.io/hostname": "truenas", "kubernetes.io/os": "linux"},
            },
            "status": {
                "capacity": {"cpu": "8", "memory": "32Gi", "pods": "250", "gpu.intel.com/i915": str(igpus)},
                "allocatable": {"cpu": "8", "memory": "31Gi", "pods": "250", "gpu.intel.com/i915": str(igpus)},
            },
        }
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def _starved(repo: Path, igpus: int, *paths: str, tool: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """The CronJob findings (file, line, message) of `gpulint check PATHS`; the same in a split and a streamed run."""
    inventory = repo.parent / f"node-{igpus}.json"
    inventory.write_text(_node(igpus), encoding="utf-8")
    args = ["check", *paths, *tool, "--inventory", str(inventory), "--select", "gpu-unschedulable", "--format", "json"]
    kept = run_cli(*args, "--jobs", "1")
    assert kept.exit_code in (0, 1), kept.stderr
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
        assert run_cli(*args, "--jobs", "2").stdout == kept.stdout  # each worker sees the render's holders
        patched.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
        for jobs in ("1", "2"):
            assert run_cli(*args, "--jobs", jobs).stdout == kept.stdout  # streamed: the holders are shared objects
    found = json.loads(kept.stdout)["findings"]
    return [(f["path"], f["line"], f["message"]) for f in found if "this CronJob" in f["message"]]


def _line(text: str, needle: str) -> int:
    """The line of the CronJob's i915 limit in the file as written."""
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    return max(number for number, line in enumerate(lines, 1) if needle in line)


def test_an_overlay_s_deployment_holds_the_igpu_its_cronjob_of_another_base_file_needs(repo, render_tools):
    _write(repo, {**BASE, "overlays/home/kustomization.yaml": _overlay("nextcloud"), "apps/php.yaml": OTHER})
    kubectl = ("--kubectl", render_tools["kubectl"])
    line = _line(CRONJOB, "gpu.intel.com/i915")
    assert _starved(repo, 1, ".", tool=kubectl) == [("base/cronjob.yaml", line, STARVED)]
    # the overlay named alone, beside the other file
    assert _starved(repo, 1, "overlays/home", "apps", tool=kubectl) == [("base/cronjob.yaml", line, STARVED)]


def test_trap_plain_files_in_one_folder_without_release_labels_are_separate(repo):
    # the same two files without a kustomization: nothing says they are applied together
    _write(repo, {"nextcloud/deployment.yaml": DEPLOYMENT, "nextcloud/cronjob.yaml": CRONJOB, "apps/php.yaml": OTHER})
    assert _starved(repo, 1, ".", tool=()) == []


def test_trap_two_overlays_of_one_base_are_two_units(repo, render_tools):
    # one cluster each (the same namespace, the same names): each overlay's CronJob waits for its own app only
    _write(
        repo,
        {
            **BASE,
            "overlays/site-a/kustomization.yaml": _overlay("nextcloud"),
            "overlays/site-b/kustomization.yaml": _overlay("nextcloud"),
            "apps/php.yaml": OTHER,
        },
    )
    kubectl = ("--kubectl", render_tools["kubectl"])
    # the node's two shared iGPUs: one for each overlay's app leaves one for its CronJob (both apps would take both)
    assert _starved(repo, 2, ".", tool=kubectl) == []
    # one iGPU: each overlay's CronJob is starved by its own app alone (both apps would not even fit: no finding)
    line = _line(CRONJOB, "gpu.intel.com/i915")
    assert _starved(repo, 1, ".", tool=kubectl) == [("base/cronjob.yaml", line, STARVED)] * 2


CHART = {
    "Chart.yaml": """
        apiVersion: v2
        name: nextcloud
        version: 1.0.0
        appVersion: "28.0.2"
    """,
    "values.yaml": """
        image: nextcloud:28.0.2
        igpu: 1
    """,
    # a hand-written chart: name labels only, no app.kubernetes.io/instance or helm.sh/chart
    "templates/deployment.yaml": DEPLOYMENT.replace("image: nextcloud:28.0.2", "image: {{ .Values.image }}").replace(
        "gpu.intel.com/i915: 1", "gpu.intel.com/i915: {{ .Values.igpu }}"
    ),
    "templates/cronjob.yaml": CRONJOB.replace("image: nextcloud:28.0.2", "image: {{ .Values.image }}").replace(
        "gpu.intel.com/i915: 1", "gpu.intel.com/i915: {{ .Values.igpu }}"
    ),
}


def test_a_chart_without_release_labels_is_one_release(repo, render_tools):
    _write(repo, {**{f"charts/nextcloud/{name}": text for name, text in CHART.items()}, "apps/php.yaml": OTHER})
    line = _line(CRONJOB, "gpu.intel.com/i915")
    found = _starved(repo, 1, ".", tool=("--helm", render_tools["helm"]))
    assert found == [("charts/nextcloud/templates/cronjob.yaml", line, STARVED)]
