"""KAI Scheduler's release read from wherever a repository or a cluster pins it (gpu-sharing's reservation pod
warning, KAI-Scheduler#1986): a helmfile release of KAI's chart (its ``version``, or a ``{{ }}`` helmfile fills
in) and the KAI operator Deployment an inventory lists, through the gpulint CLI on repositories laid out as real
ones are (helmfile.yaml beside the workloads)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook-jdoe
  namespace: research
  annotations: {gpu-fraction: "0.25"}
spec:
  schedulerName: kai-scheduler
  tolerations:
  - {key: hpc, operator: Equal, value: "true", effect: NoSchedule}
  - {key: hpc, operator: Equal, value: "true", effect: NoExecute}
  containers:
  - name: jupyter
    image: quay.io/jupyter/pytorch-notebook:cuda12-2024-11-25
    resources: {limits: {memory: 8Gi}}
"""
NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: hpc-gpu-01
  labels: {kubernetes.io/hostname: hpc-gpu-01, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
spec:
  taints:
  - {key: hpc, value: "true", effect: NoSchedule}
  - {key: hpc, value: "true", effect: NoExecute}
status:
  capacity: {cpu: "128", memory: 1000Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "126", memory: 980Gi, pods: "110", nvidia.com/gpu: "8"}
"""
# deployments/kai-scheduler templates: the operator Deployment, its image <global.registry>/operator:<release>
OPERATOR = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: kai-operator, namespace: kai-scheduler}
spec:
  selector: {matchLabels: {app: kai-operator}}
  template:
    metadata: {labels: {app: kai-operator}}
    spec:
      containers:
      - name: operator
        image: ghcr.io/nvidia/kai-scheduler/operator:%s
"""
HELMFILE = """\
repositories:
  - name: kai
    url: ghcr.io/nvidia/kai-scheduler
    oci: true
releases:
  - name: kai-scheduler
    namespace: kai-scheduler
    createNamespace: true
    chart: kai/kai-scheduler
    version: %s
    values:
      - global:
          gpuSharing: true
"""


def _severities(root: Path, *args: str) -> list[str]:
    run = run_cli("check", str(root), *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return [
        f["severity"]
        for f in json.loads(run.stdout)["findings"]
        if f["rule"] == "gpu-sharing" and "reservation pod" in f["message"]
    ]


@pytest.mark.parametrize(
    ("version", "expected"),
    [("v0.16.3", ["warning"]), ("v0.17.0", []), ('"{{ .Values.kaiVersion }}"', ["info"])],
)
def test_helmfile_release_version(tmp_path: Path, version: str, expected: list[str]) -> None:
    (tmp_path / "helmfile.yaml").write_text(textwrap.dedent(HELMFILE % version))
    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "notebook.yaml").write_text(POD)
    (tmp_path / "nodes.yaml").write_text(NODES)
    repo = tmp_path / "helmfile.yaml"
    assert _severities(repo, str(tmp_path / "workloads"), "--inventory", str(tmp_path / "nodes.yaml")) == expected


@pytest.mark.parametrize(("tag", "expected"), [("v0.14.2", ["warning"]), ("v0.17.2", []), ("latest", ["info"])])
def test_inventory_operator_image(tmp_path: Path, tag: str, expected: list[str]) -> None:
    (tmp_path / "notebook.yaml").write_text(POD)
    (tmp_path / "cluster.yaml").write_text(NODES + OPERATOR % tag)
    assert _severities(tmp_path / "notebook.yaml", "--inventory", str(tmp_path / "cluster.yaml")) == expected
