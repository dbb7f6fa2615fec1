"""Issue #28: a chart the repository installs with values it gives elsewhere (helmfile, an Argo CD Application,
a Flux HelmRelease, kustomize helmCharts) is checked as each release installs it (render/releases), with real helm.

The chart below leaves its model to the installer (`required`, values.yaml writes it empty): alone it is not
checked (a not-rendered warning); with a release's values it renders, and what the release gives is judged.
"""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest
import yaml
from conftest import run_cli, said
from support.manifests import vllm_deployment
from support.trees import write_tree

from gpulint.lint.inputs import loader
from gpulint.lint.inputs.render.helm import render_chart
from gpulint.lint.inputs.render.options import RenderOptions
from gpulint.lint.inputs.render.releases import Releases
from gpulint.lint.inputs.render.tools import Tool
from gpulint.lint.inputs.sed_words import FolderScripts

pytestmark = pytest.mark.integration

CHART = {
    "charts/inference/Chart.yaml": "apiVersion: v2\nname: inference\nversion: 0.1.0\n",
    "charts/inference/values.yaml": """
        model:
          name: ""
        gpus: 1
        tensorParallel: 1
        """,
    "charts/inference/templates/deployment.yaml": vllm_deployment(
        "metadata:\n  name: {{ .Release.Name }}",
        """
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", {{ required "model.name is required" .Values.model.name | quote }}, "--tensor-parallel-size", "{{ .Values.tensorParallel }}"]
        resources:
          limits:
            nvidia.com/gpu: {{ .Values.gpus }}
        """,
    ),
}
TEMPLATE = "charts/inference/templates/deployment.yaml"


def findings(repo, render_tools, files: dict[str, str], *target: str) -> list[dict]:
    write_tree(repo, {**CHART, **files})  # a file given replaces the chart's
    result = run_cli("check", *(target or (".",)), "--helm", render_tools["helm"], "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return result.json()["findings"]


def by_rule(found: list[dict], rule: str) -> list[dict]:
    return [f for f in found if f["rule"] == rule]


def test_alone_the_chart_is_not_checked(repo, render_tools):
    found = findings(repo, render_tools, {})
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


HELMFILE = """
    repositories:
      - name: nvidia
        url: https://helm.ngc.nvidia.com/nvidia
    releases:
      - name: llama
        namespace: inference
        chart: ./charts/inference
        values:
          - values/llama.yaml
          - gpus: GPUS
      - name: operator
        namespace: gpu-operator
        chart: nvidia/gpu-operator
        version: v24.9.0
    """


def test_helmfile_release_renders_with_its_values_files_and_inline_maps(repo, render_tools):
    files = {
        "helmfile.yaml": HELMFILE.replace("GPUS", "2"),
        "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files)
    assert not by_rule(found, "not-rendered")
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert (mismatch["severity"], mismatch["path"], mismatch["line"]) == ("error", TEMPLATE, 15)
    assert "tensor-parallel-size 4" in mismatch["message"] and "2 nvidia.com/gpu" in mismatch["message"]
    assert "rendered as release 'llama' of helmfile.yaml:5" in said(mismatch)
    assert mismatch["object"]["name"] == "llama"  # {{ .Release.Name }}


def test_helmfile_release_that_fits_gives_no_error(repo, render_tools):
    files = {
        "helmfile.yaml": HELMFILE.replace("GPUS", "4"),
        "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files)
    assert not [f for f in found if f["severity"] == "error"] and not by_rule(found, "not-rendered")
    assert by_rule(found, "dev-shm-missing")  # rendered and checked: 4 GPUs with no /dev/shm


def test_helmfile_release_not_installed_is_no_release(repo, render_tools):
    files = {
        "helmfile.yaml": HELMFILE.replace("GPUS", "2").replace(
            "chart: ./charts/inference", "chart: ./charts/inference\n        installed: false"
        ),
        "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files)
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


def test_precommit_naming_a_template_renders_the_release(repo, render_tools):
    """pre-commit names the changed files: the chart they belong to renders as the repository's release."""
    files = {
        "helmfile.yaml": HELMFILE.replace("GPUS", "2"),
        "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files, TEMPLATE)
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert "rendered as release 'llama' of helmfile.yaml:5" in said(mismatch)


def test_helmfile_entry_with_a_template_is_skipped(repo, render_tools):
    """helmfile renders `{{ .Environment.Name }}` itself: the values are not known, the chart renders as before."""
    files = {
        "helmfile.yaml": """
            environments:
              prod: {}
            ---
            releases:
              - name: llama
                chart: ./charts/inference
                values:
                  - values/{{ .Environment.Name }}.yaml
            """,
        "values/prod.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files)
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


ARGO = """
    apiVersion: argoproj.io/v1alpha1
    kind: Application
    metadata:
      name: llama
      namespace: argocd
    spec:
      project: default
      sources:
        - repoURL: https://github.com/example/k8s-config
          path: deploy/manifests
          targetRevision: main
        - repoURL: https://github.com/example/k8s-config
          path: charts/inference
          targetRevision: main
          helm:
            valueFiles:
              - ../../envs/prod/llama.yaml
            valuesObject:
              gpus: 2
            parameters:
              - name: tensorParallel
                value: "TP"
      destination:
        server: https://kubernetes.default.svc
        namespace: serving
    """


@pytest.mark.parametrize(("tp", "errors"), [("4", 1), ("2", 0)])
def test_argo_application_gives_value_files_values_and_parameters(repo, render_tools, tp, errors):
    files = {
        "argocd/llama.yaml": ARGO.replace("TP", tp),
        "envs/prod/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 8\n",
    }
    found = findings(repo, render_tools, files)
    assert not by_rule(found, "not-rendered")
    mismatches = by_rule(found, "parallelism-mismatch")
    assert len(mismatches) == errors  # the parameter wins over the value file's 8, as Argo CD passes it last
    for mismatch in mismatches:
        assert "rendered as release 'llama' of argocd/llama.yaml:12" in said(mismatch)


def test_argo_application_of_a_remote_chart_is_no_release_of_the_local_one(repo, render_tools):
    files = {
        "argocd/llama.yaml": """
            apiVersion: argoproj.io/v1alpha1
            kind: Application
            metadata: {name: inference}
            spec:
              source:
                repoURL: https://charts.example.com
                chart: inference
                targetRevision: 0.1.0
                helm:
                  valuesObject: {model: {name: x}}
              destination: {namespace: serving}
            """,
    }
    found = findings(repo, render_tools, files)
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


FLUX = """
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata:
      name: llama
      namespace: serving
    spec:
      interval: 10m
      chart:
        spec:
          chart: ./charts/inference
          sourceRef:
            kind: GitRepository
            name: flux-system
            namespace: flux-system
      valuesFrom:
        - kind: ConfigMap
          name: llama-values
      values:
        gpus: 2
    """


def test_flux_helmrelease_reads_values_from_a_generated_configmap(repo, render_tools):
    files = {
        "clusters/prod/llama.yaml": FLUX,
        "clusters/prod/kustomization.yaml": """
            apiVersion: kustomize.config.k8s.io/v1beta1
            kind: Kustomization
            namespace: serving
            resources: [llama.yaml]
            configMapGenerator:
              - name: llama-values
                files: [values.yaml=llama-values.yaml]
            configurations: [kustomizeconfig.yaml]
            """,
        "clusters/prod/kustomizeconfig.yaml": "nameReference:\n- kind: ConfigMap\n  version: v1\n  fieldSpecs:\n  - path: spec/valuesFrom/name\n    kind: HelmRelease\n",
        "clusters/prod/llama-values.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files, "charts")
    assert not by_rule(found, "not-rendered")
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert "rendered as release 'llama' of clusters/prod/llama.yaml:1" in said(mismatch)


def test_flux_helmrelease_whose_configmap_is_not_in_the_repository_is_skipped(repo, render_tools):
    found = findings(repo, render_tools, {"clusters/prod/llama.yaml": FLUX}, "charts")
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


def test_each_release_is_its_own_unit(repo, render_tools):
    """Two releases of one chart: each rendered and labelled; a failing one is not checked, the other is."""
    files = {
        "helmfile.yaml": """
            releases:
              - name: small
                chart: ./charts/inference
                values: [{model: {name: m}, gpus: 1, tensorParallel: 2}]
              - name: big
                chart: ./charts/inference
                set:
                  - name: tensorParallel
                    value: 8
            """,
    }
    found = findings(repo, render_tools, files)
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert mismatch["object"]["name"] == "small" and "release 'small' of helmfile.yaml:2" in said(mismatch)
    (failed,) = by_rule(found, "not-rendered")
    assert failed["severity"] == "warning" and "release 'big' of helmfile.yaml:5" in said(failed)


def test_kustomize_helm_charts_values_inline(repo, render_tools):
    files = {
        "deploy/kustomization.yaml": """
            helmGlobals:
              chartHome: ../charts
            helmCharts:
              - name: inference
                releaseName: llama
                valuesInline:
                  model: {name: meta-llama/Llama-3.1-8B}
                  tensorParallel: 2
            """,
    }
    found = findings(repo, render_tools, files, "charts")
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert "rendered as release 'llama' of deploy/kustomization.yaml:4" in said(mismatch)


# A chart that renders its values, each written by one of the places kustomize reads values from.
VALUES_CHART = {
    "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "charts/app/values.yaml": "a: chart\nb: chart\nc: chart\nd: chart\n",
    "charts/app/templates/values.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: values}\ndata: {{ toJson .Values }}\n",
    "file.yaml": "a: file\nb: file\n",
    "extra.yaml": "b: extra\n",
}


@pytest.mark.parametrize(
    "entry",
    [
        "valuesFile: file.yaml",  # valuesMerge override, the default: the inline values win over the file's
        "valuesFile: file.yaml\n  valuesMerge: merge",  # the file's win
        "valuesFile: file.yaml\n  valuesMerge: replace",  # the file is not read
        "valuesMerge: merge",  # the chart's defaults win over the inline values
    ],
)
def test_kustomize_joins_inline_values_and_files_as_kustomize_does(tmp_path, render_tools, entry):
    """The values a helmCharts release renders with are those `kubectl kustomize --enable-helm` renders with:
    valuesInline joined with valuesFile as valuesMerge says, additionalValuesFiles over both."""
    kustomization = f"helmCharts:\n- name: app\n  {entry}\n  additionalValuesFiles: [extra.yaml]\n"
    kustomization += "  valuesInline: {a: inline, b: inline, c: inline}\n"
    write_tree(tmp_path, {**VALUES_CHART, "kustomization.yaml": kustomization}, dedent=False)
    helm, kubectl = render_tools["helm"], render_tools["kubectl"]
    argv = [kubectl, "kustomize", "--enable-helm", "--helm-command", helm, str(tmp_path)]
    built = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    (release,) = Releases(str(tmp_path)).of(str(tmp_path / "charts" / "app"))
    chart = str(tmp_path / "charts" / "app")
    rendered = render_chart(chart, "charts/app", RenderOptions(), Tool("helm", helm), release=release)
    assert not rendered.problems
    assert yaml.safe_load(rendered.output)["data"] == yaml.safe_load(built.stdout)["data"]


def test_the_configuration_wins_over_the_releases(repo, render_tools):
    files = {
        "helmfile.yaml": HELMFILE.replace("GPUS", "2"),
        "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
        "ci/values.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\n",
        ".gpulint.yaml": "render:\n  charts:\n    charts/inference:\n      values: [ci/values.yaml]\n",
    }
    found = findings(repo, render_tools, files)
    assert not by_rule(found, "parallelism-mismatch") and not by_rule(found, "not-rendered")


# A subchart's template judged by the values its parent passes it: helm names it by the dependency's alias.
PARENT = {
    "platform/Chart.yaml": """
        apiVersion: v2
        name: platform
        version: 0.1.0
        dependencies:
          - name: worker
            alias: trainer
            version: 0.1.0
        """,
    "platform/values.yaml": "global:\n  image: nvcr.io/nvidia/pytorch:24.05-py3\ntrainer:\n  gpus: 8\nPASSED\n",
    "platform/charts/worker/Chart.yaml": "apiVersion: v2\nname: worker\nversion: 0.1.0\n",
    "platform/charts/worker/values.yaml": "gpus: 1\ndataset: ''\n",
    "platform/charts/worker/templates/job.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: {{ .Release.Name }}-train
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: train
                image: {{ required "global.image is required" .Values.global.image }}
                args: ["--data", {{ .Values.dataset | required "dataset is required" | quote }}, "--workers", "{{ .Values.WORKERS }}"]
                resources:
                  limits:
                    nvidia.com/gpu: {{ .Values.gpus }}
        """,
}


def subchart(repo, render_tools, passed: str, read: str = "gpus") -> list[dict]:
    files = {name: body.replace("PASSED", passed).replace("WORKERS", read) for name, body in PARENT.items()}
    for name, body in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    result = run_cli("check", "platform", "--helm", render_tools["helm"], "--format", "json")
    return result.json()["findings"]


def test_subchart_value_its_parent_leaves_empty_is_the_installers(repo, render_tools):
    """On main: an error at the parent's Chart.yaml (the alias `trainer` is no folder)."""
    (failed,) = subchart(repo, render_tools, "")
    assert failed["severity"] == "warning" and failed["path"] == "platform/charts/worker/templates/job.yaml"
    assert "its parent's 'trainer:' and 'global:' over its values.yaml leaves it empty" in said(failed)


def test_subchart_renders_with_the_value_its_parent_passes(repo, render_tools):
    found = subchart(repo, render_tools, "  dataset: s3://bucket/train")
    assert not by_rule(found, "not-rendered")
    assert all(f["object"]["name"] == "release-name-train" for f in found)


def test_subchart_value_of_the_wrong_shape_is_an_error(repo, render_tools):
    (failed,) = subchart(repo, render_tools, "  dataset: s3://bucket/train", read="gpus.count")
    assert failed["severity"] == "error" and failed["line"] == 12


def test_a_fault_in_the_charts_text_is_one_error_whatever_the_releases(repo, render_tools):
    files = {
        "helmfile.yaml": """
            releases:
              - name: small
                chart: ./charts/inference
                values: [{model: {name: m}}]
              - name: big
                chart: ./charts/inference
                values: [{model: {name: m}, gpus: 8}]
            """,
        TEMPLATE: textwrap.dedent(CHART[TEMPLATE]).replace("{{ .Values.gpus }}", "{{ .Values.gpus }"),
    }
    (failed,) = findings(repo, render_tools, files)
    assert (failed["rule"], failed["severity"], failed["line"]) == ("not-rendered", "error", 18)
    assert "parse error" in failed["message"]


HELMFILE_IN_DEPLOY = {
    "deploy/helmfile.yaml": HELMFILE.replace("GPUS", "2")
    .replace("./charts/inference", "../charts/inference")
    .replace("values/llama.yaml", "../values/llama.yaml"),
    "values/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 4\n",
}


@pytest.mark.parametrize(
    "files",
    [
        {".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "deploy/\n"},  # a local helmfile git never sees
        {".git/info/exclude": "/deploy/\n"},
        {".gpulint.yaml": "exclude: [deploy]\n"},  # the configuration's exclude
    ],
    ids=["gitignored-folder", "info-exclude", "configured-exclude"],
)
def test_a_release_in_an_ignored_or_excluded_folder_is_not_read(repo, render_tools, files):
    """The release walk is the manifest walk (file_walk.Walk): what `gpulint check .` leaves out gives no values."""
    found = findings(repo, render_tools, {**HELMFILE_IN_DEPLOY, **files})
    assert [(f["rule"], f["severity"]) for f in found] == [("not-rendered", "warning")]


def test_trap_a_release_the_ignore_rules_do_not_reach_is_read(repo, render_tools):
    files = {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitignore": "/charts/deploy/\n",
        ".gpulint.yaml": "exclude: [old]\n",
    }
    found = findings(repo, render_tools, {**HELMFILE_IN_DEPLOY, **files})
    (mismatch,) = by_rule(found, "parallelism-mismatch")
    assert "rendered as release 'llama' of deploy/helmfile.yaml:5" in said(mismatch)


def test_each_yaml_file_is_parsed_once_per_run(repo, render_tools, monkeypatch):
    """The Argo CD Application and the Flux HelmRelease give the chart its releases and are linted too, as is the
    ConfigMap a valuesFrom names: the run lints the release readers' parse of them (parsed_once), not a second."""
    parsed: list[tuple[str, str]] = []  # (real path, the text parsed): a value held in a file is parsed on its own
    real = loader.load_text

    def counted(path: str, text: str, scripts: FolderScripts | None = None) -> loader.LoadedFile:
        parsed.append((os.path.realpath(path), text))
        return real(path, text, scripts)

    monkeypatch.setattr(loader, "load_text", counted)
    files = {
        "argocd/llama.yaml": ARGO.replace("TP", "2"),
        "envs/prod/llama.yaml": "model:\n  name: meta-llama/Llama-3.1-8B\ntensorParallel: 8\n",
        "flux/llama.yaml": FLUX.replace("./charts/inference", "charts/inference"),
        "flux/llama-values.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: llama-values, namespace: serving}\n"
        "data:\n  values.yaml: |\n    model:\n      name: meta-llama/Llama-3.1-8B\n    tensorParallel: 4\n",
    }
    found = findings(repo, render_tools, files)
    labels = {said(f).split("rendered as ")[1].split("\n")[0] for f in by_rule(found, "parallelism-mismatch")}
    assert labels == {"release 'llama' of flux/llama.yaml:1"}  # both releases rendered, the ConfigMap's values read
    whole = [path for path, text in parsed if os.path.isfile(path) and text == open(path, encoding="utf-8").read()]
    for name in ("argocd/llama.yaml", "flux/llama.yaml", "flux/llama-values.yaml"):  # release readers' and linted
        assert whole.count(os.path.realpath(repo / name)) == 1, name
    assert len(whole) == len(set(whole)), sorted(whole)
