"""A chart's ``crds/`` folder in a run over the repository (issue #28, set F: volcano-sh/kthena).

Helm applies the files of a chart's ``crds/`` folder, and of its subcharts', as they are and before the
templates (pkg/chart CRDObjects, pkg/action install; ``--skip-crds`` skips them); ``helm template`` does not
print them. A file linted alone takes those CRDs from the repository index, so a run over the repository
must read them too, or the two modes disagree. The layout is Kthena's: an umbrella chart whose subchart
ships the CRD, custom resources in the templates and in an examples folder outside the chart."""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest
from conftest import run_cli
from support.crds import crd
from support.trees import write_tree

from gpulint.lint.inputs.file_walk import Walk

MODEL_SERVING_CRD = crd(
    "workload.serving.example.io",
    "ModelServing",
    """
    type: object
    required: [template]
    properties:
      replicas: {type: integer, format: int32, default: 1}
      schedulerName: {type: string, default: volcano}
      template:
        type: object
        properties:
          roles:
            type: array
            items:
              type: object
              required: [name]
              properties:
                name: {type: string}
                replicas: {type: integer, format: int32}
""",
)

# A field the CRD dropped (kthena e7c37ae6 removed spec.topologySpreadConstraints) still set by an example.
STALE_EXAMPLE = """
apiVersion: workload.serving.example.io/v1alpha1
kind: ModelServing
metadata:
  name: qwen
spec:
  replicas: 2
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
  template:
    roles:
    - name: leader
      replicas: 1
"""

GOOD_EXAMPLE = """
apiVersion: workload.serving.example.io/v1alpha1
kind: ModelServing
metadata:
  name: qwen
spec:
  replicas: 2
  template:
    roles:
    - name: leader
      replicas: 1
"""

CHART = {
    "charts/serving/Chart.yaml": """
        apiVersion: v2
        name: serving
        version: 0.1.0
        dependencies:
        - name: workload
          version: 0.1.0
        """,
    "charts/serving/values.yaml": "replicas: 1\n",
    "charts/serving/charts/workload/Chart.yaml": "apiVersion: v2\nname: workload\nversion: 0.1.0\n",
    "charts/serving/charts/workload/crds/workload.serving.example.io_modelservings.yaml": MODEL_SERVING_CRD,
    "charts/serving/charts/workload/templates/configmap.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {{ .Release.Name }}-workload
        data:
          replicas: "{{ .Values.replicas | default 1 }}"
        """,
}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # a file linted alone reads the repository
    return tmp_path


def serious(run) -> list[tuple[str, int, str, str]]:
    assert run.exit_code in (0, 1), run.stderr
    return [
        (f["path"], f["line"], f["rule"], f["message"])
        for f in run.json()["findings"]
        if f["severity"] in ("error", "warning")
    ]


def check(*args: str, helm: str) -> list[tuple[str, int, str, str]]:
    return serious(run_cli("check", *args, "--helm", helm, "--format", "json"))


# --------------------------------------------------------------- the walk


def walked(root: str) -> list[tuple[str, bool]]:
    return [(os.path.relpath(c.path, root), c.chart) for c in Walk(root, (), [], charts=True).files()]


def test_a_walk_yields_the_charts_and_its_subcharts_crds_files_beside_the_chart(repo):
    write_tree(repo, {**CHART, "charts/serving/crds/nested/extra.yml": MODEL_SERVING_CRD})
    found = walked(str(repo))
    assert ("charts/serving", True) in found
    assert ("charts/serving/crds/nested/extra.yml", False) in found
    assert ("charts/serving/charts/workload/crds/workload.serving.example.io_modelservings.yaml", False) in found
    # the subchart is rendered with its parent, never on its own, and its templates are not read raw
    assert not any(path.startswith("charts/serving/charts/workload/templates") for path, _ in found)
    assert ("charts/serving/charts/workload", True) not in found


def test_a_walk_reads_no_crds_folder_helm_does_not_apply(repo):
    write_tree(
        repo,
        {
            **CHART,
            # a template that installs CRDs when a value says so: a template, not a file Helm applies as it is
            "charts/serving/templates/crds/modelservings.yaml": "{{- if .Values.crds.install }}\nkind: X\n{{- end }}\n",
            # a folder under charts/ that is no chart (no Chart.yaml): Helm loads no subchart from it
            "charts/serving/charts/notes/crds/crd.yaml": MODEL_SERVING_CRD,
            # crds/ that git ignores
            "charts/serving/charts/workload/crds/generated/big.yaml": MODEL_SERVING_CRD,
            "charts/serving/charts/workload/.gitignore": "crds/generated/\n",
        },
    )
    found = [path for path, _ in walked(str(repo))]
    assert not any("templates" in path for path in found)
    assert "charts/serving/charts/notes/crds/crd.yaml" not in found
    assert "charts/serving/charts/workload/crds/generated/big.yaml" not in found


def test_without_charts_rendered_the_walk_is_as_before(repo):
    # no renderer (or the repository index): every file, once, the crds/ files among them
    write_tree(repo, CHART)
    plain = [os.path.relpath(c.path, repo) for c in Walk(str(repo), (), []).files()]
    assert plain.count("charts/serving/charts/workload/crds/workload.serving.example.io_modelservings.yaml") == 1
    assert "charts/serving/charts/workload/templates/configmap.yaml" in plain


# --------------------------------------------------------------- the run over the repository


def test_the_subcharts_crd_validates_an_example_in_the_repository_run(repo, helm):
    write_tree(repo, {**CHART, "examples/model-serving.yaml": STALE_EXAMPLE})
    found = check(".", helm=str(helm))
    assert [(path, line, rule) for path, line, rule, _ in found] == [
        ("examples/model-serving.yaml", 7, "schema-invalid")
    ], found
    assert found[0][3] == (
        'unknown field "spec.topologySpreadConstraints" in workload.serving.example.io/v1alpha1 ModelServing'
    )


def test_the_repository_run_and_the_file_alone_agree(repo, helm):
    write_tree(repo, {**CHART, "examples/model-serving.yaml": STALE_EXAMPLE})
    whole = [f[:3] for f in check(".", helm=str(helm))]
    alone = [f[:3] for f in check("examples/model-serving.yaml", helm=str(helm))]
    assert whole == alone == [("examples/model-serving.yaml", 7, "schema-invalid")]


def test_the_charts_crd_validates_the_charts_own_templates(repo, helm):
    files = {
        **CHART,
        "charts/serving/templates/modelserving.yaml": """
            apiVersion: workload.serving.example.io/v1alpha1
            kind: ModelServing
            metadata:
              name: {{ .Release.Name }}
            spec:
              replicas: {{ .Values.replicas }}
              template:
                roles:
                - replicas: 1
            """,
    }
    write_tree(repo, files)
    found = check(".", helm=str(helm))
    assert [(path, rule) for path, _, rule, _ in found] == [
        ("charts/serving/templates/modelserving.yaml", "schema-invalid")
    ], found
    assert "name" in found[0][3]


def test_a_custom_resource_the_charts_crd_accepts_is_clean(repo, helm):
    write_tree(repo, {**CHART, "examples/model-serving.yaml": GOOD_EXAMPLE})
    assert check(".", helm=str(helm)) == []


def test_a_chart_linted_alone_reads_its_crds(repo, helm):
    write_tree(repo, {**CHART, "charts/serving/templates/modelserving.yaml": STALE_EXAMPLE})
    found = check("charts/serving", helm=str(helm))
    assert [(path, rule) for path, _, rule, _ in found] == [
        ("charts/serving/templates/modelserving.yaml", "schema-invalid")
    ], found


def test_a_templated_crd_is_not_read_as_a_file(repo, helm):
    # the CRD is a template installed when a value says so (`crds.install`): not in crds/, not read raw; with it
    # off nothing validates the example, so nothing is said about it
    files = {
        "charts/serving/Chart.yaml": "apiVersion: v2\nname: serving\nversion: 0.1.0\n",
        "charts/serving/values.yaml": "crds:\n  install: false\n",
        "charts/serving/templates/crds/modelservings.yaml": "{{- if .Values.crds.install }}"
        + textwrap.dedent(MODEL_SERVING_CRD)
        + "{{- end }}\n",
        "examples/model-serving.yaml": STALE_EXAMPLE,
    }
    write_tree(repo, files)
    assert check(".", helm=str(helm)) == []
