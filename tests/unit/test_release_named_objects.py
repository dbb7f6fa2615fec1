"""A chart's object named after its release: rendered without one, helm template calls it `release-name`, and how
long the name is then depends on the release the chart is installed as, not on the repository."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import check_serious

STATEFULSET = """\
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: {name}
    spec:
      serviceName: db
      selector:
        matchLabels: {{app: db}}
      template:
        metadata:
          labels: {{app: db}}
        spec:
          containers:
          - name: server
            image: nvcr.io/nvidia/tritonserver:24.01-py3
            resources:
              limits: {{nvidia.com/gpu: 1}}
    """


def _chart(root: Path, name: str) -> Path:
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: triton-inference-server-multimodel-gpu\nversion: 0.1.0\n")
    (chart / "templates" / "statefulset.yaml").write_text(textwrap.dedent(STATEFULSET).format(name=name))
    return chart


def test_a_statefulset_named_after_the_release_is_not_judged_by_helm_templates_stand_in(tmp_path, helm):
    # the common fullname helper: release-name-triton-inference-server-multimodel-gpu-db is 54 characters as
    # helm template renders it, 48 when installed as "triton"
    chart = _chart(tmp_path, '{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}-db')
    assert check_serious(str(chart), "--helm", str(helm)) == []


def test_a_statefulset_whose_own_part_is_too_long_is_still_refused(tmp_path, helm):
    chart = _chart(tmp_path, "{{ .Release.Name }}-{{ .Chart.Name }}-tensor-parallel-db")  # 56 without the release
    found = check_serious(str(chart), "--helm", str(helm), fields=("rule", "severity"))
    assert found == [("api-rejected", "error")]


RAYJOB = """\
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: {name}
    spec:
      entrypoint: python train.py
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {{}}
          template:
            spec:
              containers:
              - {{name: ray-head, image: "rayproject/ray:2.41.0"}}
    """


def _ray_chart(root: Path, name: str) -> Path:
    chart = _chart(root, "db")
    (chart / "templates" / "statefulset.yaml").unlink()
    (chart / "templates" / "rayjob.yaml").write_text(textwrap.dedent(RAYJOB).format(name=name))
    return chart


def test_kuberays_name_limit_is_not_judged_on_helm_templates_stand_in(tmp_path, helm):
    # release-name-triton-inference-server-multimodel-gpu: 51 characters, past KubeRay's 47 for a RayJob; 40 as "t"
    chart = _ray_chart(tmp_path, "{{ .Release.Name }}-{{ .Chart.Name }}")
    assert check_serious(str(chart), "--helm", str(helm)) == []


def test_kuberays_name_limit_on_the_charts_own_part_is_still_said(tmp_path, helm):
    chart = _ray_chart(tmp_path, "{{ .Release.Name }}-{{ .Chart.Name }}-nightly-eval")  # 50 characters without it
    found = check_serious(str(chart), "--helm", str(helm), fields=("rule", "severity"))
    assert found == [("operator-rejected", "error")]
