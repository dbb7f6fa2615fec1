"""Issue #28: a chart installed by a Zarf package (`zarf.yaml` charts[].localPath + valuesFiles, as LeapfrogAI's
packages install theirs) or by a Validated Pattern's cluster group (`values-global.yaml` + `values-<group>.yaml`
clusterGroup.applications, as rag-llm-gitops installs its vLLM chart) renders with those values (render/releases),
with real helm. What the tool fills in at deploy time (`###ZARF_VAR_X###`, the pattern operator's `global.*`) is
given and not known: never the chart's default in its place.
"""

from __future__ import annotations

import os
import textwrap

import pytest
from conftest import run_cli, said
from support.manifests import vllm_deployment
from support.trees import write_tree

from gpulint.lint.inputs.render.releases import Releases

pytestmark = pytest.mark.integration

CHART = {
    "packages/vllm/chart/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.14.0\n",
    "packages/vllm/chart/values.yaml": """
        model:
          name: ""
        gpus: 1
        tensorParallel: 1
        """,
    "packages/vllm/chart/templates/deployment.yaml": vllm_deployment(
        "metadata:\n  name: {{ .Release.Name }}",
        """
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", {{ required "model.name is required" .Values.model.name | quote }}, "--tensor-parallel-size", "{{ .Values.tensorParallel }}"]
        resources:
          limits:
            nvidia.com/gpu: {{ .Values.gpus | quote }}
        """,
    ),
}

ZARF = """
    kind: ZarfPackageConfig
    metadata:
      name: vllm
      version: "###ZARF_PKG_TMPL_IMAGE_VERSION###"
    variables:
      - name: GPU_LIMIT
        pattern: "^[1-9][0-9]*$"
    components:
      - name: vllm-model
        required: true
        only:
          flavor: upstream
        charts:
          - name: vllm-model
            namespace: leapfrogai
            localPath: chart
            version: 0.14.0
            valuesFiles:
              - "values/upstream-values.yaml"
    """


def findings(repo, render_tools, files: dict[str, str], chart: dict[str, str] = CHART) -> list[dict]:
    write_tree(repo, {**chart, **files})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return result.json()["findings"]


def serious(found: list[dict]) -> list[tuple[str, str]]:
    return [(f["rule"], f["severity"]) for f in found if f["severity"] != "info"]


def test_alone_the_chart_is_not_checked(repo, render_tools):
    assert serious(findings(repo, render_tools, {})) == [("not-rendered", "warning")]


@pytest.mark.parametrize(("gpus", "errors"), [("2", 1), ("4", 0)])
def test_zarf_chart_renders_with_its_values_files(repo, render_tools, gpus, errors):
    files = {
        "packages/vllm/zarf.yaml": ZARF,
        "packages/vllm/values/upstream-values.yaml": f"model:\n  name: m\ntensorParallel: 4\ngpus: {gpus}\n",
    }
    found = findings(repo, render_tools, files)
    assert not [f for f in found if f["rule"] == "not-rendered"]
    mismatches = [f for f in found if f["rule"] == "parallelism-mismatch"]
    assert [f["severity"] for f in mismatches] == ["error"] * errors
    for mismatch in mismatches:
        assert "rendered as release 'vllm-model' of packages/vllm/zarf.yaml:14" in said(mismatch)
        assert mismatch["object"]["name"] == "vllm-model"


def test_trap_a_value_zarf_fills_in_is_not_the_charts_default(repo, render_tools):
    """LeapfrogAI's values give `nvidia.com/gpu: "###ZARF_VAR_GPU_LIMIT###"`: with the chart's default (1) in its
    place, `--tensor-parallel-size 4` would be a false parallelism error; the value is a placeholder instead."""
    files = {
        "packages/vllm/zarf.yaml": ZARF,
        "packages/vllm/values/upstream-values.yaml": (
            'model:\n  name: "###ZARF_CONST_MODEL_PATH###"\ntensorParallel: 4\ngpus: "###ZARF_VAR_GPU_LIMIT###"\n'
        ),
    }
    found = findings(repo, render_tools, files)
    assert serious(found) == []
    assert any("${ZARF_VAR_GPU_LIMIT} is a placeholder" in said(f) for f in found)


def test_zarf_release_reads_variables_as_given_not_known(tmp_path):
    files = {
        "packages/vllm/zarf.yaml": ZARF.replace(
            "            valuesFiles:",
            "            variables:\n              - name: GPU_LIMIT\n                path: .gpus\n            valuesFiles:",
        ),
        "packages/vllm/values/upstream-values.yaml": 'image:\n  tag: "###ZARF_CONST_IMAGE_VERSION###"\ngpus: 2\n',
    }
    write_tree(tmp_path, {**CHART, **files})
    (release,) = Releases(str(tmp_path)).of(str(tmp_path / "packages/vllm/chart"))
    assert (release.name, release.namespace) == ("vllm-model", "leapfrogai")
    assert release.layers == ({"image": {"tag": "${ZARF_CONST_IMAGE_VERSION}"}, "gpus": 2},)
    assert release.unknown == ("image.tag", "gpus")


@pytest.mark.parametrize(
    "entry",
    [
        "url: oci://ghcr.io/example/vllm\n            localPath: chart",  # a remote chart
        "localPath: chart.tgz",  # an archive, not this folder
    ],
)
def test_zarf_chart_that_is_not_this_folder_is_no_release(repo, render_tools, entry):
    files = {
        "packages/vllm/zarf.yaml": ZARF.replace("localPath: chart", entry),
        "packages/vllm/values/upstream-values.yaml": "model:\n  name: m\ntensorParallel: 4\ngpus: 2\n",
    }
    assert serious(findings(repo, render_tools, files)) == [("not-rendered", "warning")]


def test_trap_an_imported_zarf_component_is_not_read(repo, render_tools):
    files = {
        "packages/vllm/zarf.yaml": ZARF.replace(
            "        required: true", "        required: true\n        import:\n          path: ../common"
        ),
        "packages/vllm/values/upstream-values.yaml": "model:\n  name: m\ntensorParallel: 4\ngpus: 2\n",
    }
    assert serious(findings(repo, render_tools, files)) == [("not-rendered", "warning")]


# ------------------------------------------------------------------------------------------ Validated Patterns

PATTERN_CHART = {
    path.replace("packages/vllm/chart", "charts/all/vllm-inference-service"): (
        content.replace(".Values.model.name", ".Values.global.model.vllm").replace(
            'name: ""', 'name: ""\n        global:\n          model:\n            vllm: ""'
        )
    )
    for path, content in CHART.items()
}
VALUES_GLOBAL = """
    global:
      pattern: rag-llm-gitops
      model:
        vllm: ibm-granite/granite-3.3-8b-instruct
    main:
      clusterGroupName: hub
    """
VALUES_HUB = """
    clusterGroup:
      name: hub
      isHubCluster: true
      sharedValueFiles:
        - '/overrides/values-{{ $.Values.global.clusterPlatform }}.yaml'
      applications:
        vault:
          name: vault
          namespace: vault
          project: hub
          chart: hashicorp-vault
          chartVersion: 0.1.*
        vllm-inference-service:
          name: vllm-inference-service
          namespace: rag-llm
          project: hub
          path: charts/all/vllm-inference-service
          extraValueFiles:
            - /overrides/gpus.yaml
          overrides:
            - name: tensorParallel
              value: 4
    """


@pytest.mark.parametrize(("gpus", "errors"), [("2", 1), ("4", 0)])
def test_pattern_application_renders_with_the_patterns_values(repo, render_tools, gpus, errors):
    files = {
        "values-global.yaml": VALUES_GLOBAL,
        "values-hub.yaml": VALUES_HUB,
        "overrides/gpus.yaml": f"gpus: {gpus}\n",
    }
    found = findings(repo, render_tools, files, PATTERN_CHART)
    assert not [f for f in found if f["rule"] == "not-rendered"]
    mismatches = [f for f in found if f["rule"] == "parallelism-mismatch"]
    assert [f["severity"] for f in mismatches] == ["error"] * errors
    for mismatch in mismatches:
        assert "rendered as release 'vllm-inference-service' of values-hub.yaml:14" in said(mismatch)


def test_trap_a_value_the_pattern_operator_gives_is_not_checked(repo, render_tools):
    """The chart reads `global.clusterDomain`, which the operator passes as a parameter from the cluster: a template
    that fails on it is "not checked" as the release, never an error."""
    chart = dict(PATTERN_CHART)
    chart["charts/all/vllm-inference-service/templates/route.yaml"] = textwrap.dedent(
        """
        apiVersion: route.openshift.io/v1
        kind: Route
        metadata:
          name: vllm
        spec:
          host: {{ printf "vllm.%s" (required "global.clusterDomain" .Values.global.clusterDomain) }}
          to: {kind: Service, name: vllm}
        """
    )
    files = {"values-global.yaml": VALUES_GLOBAL, "values-hub.yaml": VALUES_HUB, "overrides/gpus.yaml": "gpus: 4\n"}
    found = findings(repo, render_tools, files, chart)
    assert serious(found) == [("not-rendered", "warning")]
    assert "which gives .Values.global.clusterDomain" in said(found[0])


@pytest.mark.parametrize("entry", ["kustomize: true", "chart: vllm-inference-service", "disabled: true"])
def test_pattern_application_not_a_chart_of_this_repository_is_no_release(repo, render_tools, entry):
    files = {
        "values-global.yaml": VALUES_GLOBAL,
        "values-hub.yaml": VALUES_HUB.replace("path: charts/all/vllm-inference-service", f"{entry}\n      path: x"),
        "overrides/gpus.yaml": "gpus: 2\n",
    }
    assert serious(findings(repo, render_tools, files, PATTERN_CHART)) == [("not-rendered", "warning")]


def test_trap_a_group_file_without_values_global_is_no_pattern(repo, render_tools):
    files = {"values-hub.yaml": VALUES_HUB, "overrides/gpus.yaml": "gpus: 2\n"}
    assert serious(findings(repo, render_tools, files, PATTERN_CHART)) == [("not-rendered", "warning")]


def test_argo_value_file_with_a_leading_slash_is_at_the_repository_root(repo, render_tools):
    """argo-cd util/io/path/resolved.go: `/envs/prod.yaml` is the repository's, not the chart's."""
    files = {
        "argocd/llama.yaml": """
            apiVersion: argoproj.io/v1alpha1
            kind: Application
            metadata: {name: llama, namespace: argocd}
            spec:
              source:
                repoURL: https://github.com/example/k8s-config
                path: packages/vllm/chart
                helm:
                  valueFiles: [/envs/prod.yaml]
              destination: {namespace: serving}
            """,
        "envs/prod.yaml": "model:\n  name: m\ntensorParallel: 4\ngpus: 2\n",
    }
    found = findings(repo, render_tools, files)
    assert [(f["rule"], f["severity"]) for f in found if f["rule"] == "parallelism-mismatch"] == [
        ("parallelism-mismatch", "error")
    ]


@pytest.mark.parametrize("linked", ["values-global.yaml", "values-hub-own.yaml"])
def test_trap_a_pattern_values_file_linked_out_of_the_repository_is_not_read(tmp_path, linked):
    """`values-global.yaml` and the group's own `values-<name>.yaml` are read as the repository's only when they are
    in it: a link to a file outside (or a group name with `..`) is never read, as no other values file is."""
    outside = tmp_path / "outside.yaml"
    outside.write_text("gpus: 2\nglobal:\n  model:\n    vllm: m\n")
    repo = tmp_path / "repo"
    hub = VALUES_HUB.replace("      name: hub", "      name: hub-own")
    files = {"values-global.yaml": VALUES_GLOBAL, "values-hub.yaml": hub, "overrides/gpus.yaml": "gpus: 4\n"}
    write_tree(repo, {**PATTERN_CHART, **{k: v for k, v in files.items() if k != linked}})
    (repo / linked).symlink_to(outside)
    releases = Releases(str(repo)).of(str(repo / "charts/all/vllm-inference-service"))
    # without a values-global.yaml of its own the folder is no pattern; with it, the group's file is not known
    assert bool(releases) == (linked != "values-global.yaml")
    assert all(str(outside) not in map(os.path.realpath, map(str, release.layers)) for release in releases)
    assert all("" in release.unknown for release in releases)


def test_trap_a_pattern_group_named_out_of_the_repository_is_not_read(tmp_path):
    (tmp_path / "values-outside.yaml").write_text("gpus: 2\n")  # values-x/../../values-outside.yaml
    repo = tmp_path / "repo"
    files = {
        "values-global.yaml": VALUES_GLOBAL,
        "values-hub.yaml": VALUES_HUB.replace("      name: hub", "      name: x/../../values-outside"),
        "values-x/keep.yaml": "{}\n",
        "overrides/gpus.yaml": "gpus: 4\n",
    }
    write_tree(repo, {**PATTERN_CHART, **files})
    (release,) = Releases(str(repo)).of(str(repo / "charts/all/vllm-inference-service"))
    assert str(tmp_path / "values-outside.yaml") not in map(os.path.realpath, map(str, release.layers))
