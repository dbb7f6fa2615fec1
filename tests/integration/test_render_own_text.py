"""Issue #28, `not-rendered` inverted: an error only for a fault in the chart's or overlay's own text; a failure
that depends on what the repository does not hold (a value, the cluster, a flag) is a "not checked" warning.

Real helm and kubectl (tests/k8s_binaries.py) render each chart; the class is read from their own messages.
"""

from __future__ import annotations

import pytest
from conftest import run_cli, said
from support.manifests import vllm_deployment
from support.trees import write_tree

pytestmark = pytest.mark.integration

CHART_YAML = "apiVersion: v2\nname: inference\nversion: 0.1.0\n"
VALUES = """
    image:
      repository: vllm/vllm-openai
      tag: v0.6.3
    resources:
      limits:
        nvidia.com/gpu: 1
    """
DEPLOYMENT = vllm_deployment(
    "metadata:\n  name: {{ .Release.Name }}",
    """
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
    LINE
    resources:
      {{- toYaml .Values.resources | nindent 14 }}
    """,
)


def chart(line: str, **extra: str) -> dict[str, str]:
    """The chart with ``line`` written where the container's args would be (line 15 of the template)."""
    return {
        "charts/inference/Chart.yaml": CHART_YAML,
        "charts/inference/values.yaml": VALUES,
        "charts/inference/templates/deployment.yaml": DEPLOYMENT.replace("LINE", line),
        **extra,
    }


def rendered(repo, render_tools, files: dict[str, str], target: str = ".") -> list[dict]:
    write_tree(repo, files)
    result = run_cli("check", target, "--helm", render_tools["helm"], "--format", "json")
    return [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]


@pytest.mark.parametrize(
    ("line", "said_by_helm", "place"),
    [
        ("args: [{{ .Values.image.tag }]", "parse error at", 15),  # a template that does not parse
        ("args: [{{ quotee .Values.image.tag }}]", 'function "quotee" not defined', 15),  # no such function
        ('args: [{{ include "inference.args" . }}]', 'no template "inference.args"', 15),  # no such template
        ("args: [--port {{ .Values.image.tag }}]: x", "YAML parse error on", 1),  # output that is not YAML
        ('{{- fail "this chart is retired: use charts/serving" }}', "this chart is retired", 15),  # fails always
        ('{{- if .Values.image.tag }}{{ fail "give a digest, not a tag" }}{{ end }}', "give a digest", 15),
        ("args: [{{ .Values.imgae.tag }}]", "nil pointer evaluating", 15),  # a misspelling of `image`
    ],
)
def test_a_fault_in_the_charts_own_text_is_an_error(repo, render_tools, line, said_by_helm, place):
    (finding,) = rendered(repo, render_tools, chart(line))
    assert (finding["path"], finding["line"], finding["severity"]) == (
        "charts/inference/templates/deployment.yaml",
        place,
        "error",
    ), said(finding)
    assert said_by_helm in said(finding) and "not checked" not in said(finding)


def test_a_misspelt_value_names_the_key_values_yaml_writes(repo, render_tools):
    (finding,) = rendered(repo, render_tools, chart("args: [{{ .Values.imgae.tag }}]"))
    assert "values.yaml writes 'image' (a misspelling?)" in said(finding)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        # a value values.yaml leaves out and writes nothing like: the installer's
        ("args: [--served-model-name, {{ .Values.model.name }}]", "values.yaml does not write 'model'"),
        ('args: [{{ index .Values.engineArgs "model" }}]', "values.yaml does not write 'engineArgs'"),
        ('{{- if not .Values.hfTokenSecret }}{{ fail "set hfTokenSecret" }}{{ end }}', "'hfTokenSecret'"),
        # what the cluster serves: helm template has no cluster
        (
            '{{- if not (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}'
            '{{ fail "install the Prometheus operator first" }}{{ end }}',
            "reads the cluster (.Capabilities or lookup)",
        ),
        ('args: [{{ (lookup "v1" "Secret" "models" "hf").data.token }}]', "reads the cluster"),
    ],
)
def test_a_failure_on_what_the_repository_does_not_hold_is_not_checked(repo, render_tools, line, why):
    for target in (".", "charts/inference"):  # CI, pre-commit
        (finding,) = rendered(repo, render_tools, chart(line), target)
        assert (finding["path"], finding["line"], finding["severity"]) == (
            "charts/inference/templates/deployment.yaml",
            15,
            "warning",
        ), said(finding)
        assert why in said(finding) and "not checked" in said(finding)


def test_a_kubernetes_version_the_chart_requires_is_a_flag(repo, render_tools):
    files = chart("args: []", **{"charts/inference/Chart.yaml": CHART_YAML + 'kubeVersion: "<1.31.0-0"\n'})
    (finding,) = rendered(repo, render_tools, files)
    assert (finding["path"], finding["severity"]) == ("charts/inference/Chart.yaml", "warning")
    assert "chart requires kubeVersion" in said(finding) and "--kubernetes-version" in said(finding)
    write_tree(repo, {".gpulint.yaml": "kubernetes-version: '1.30'\n"})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert [f for f in result.json()["findings"] if f["rule"] == "not-rendered"] == []  # given: rendered


# NVIDIA/nim-deploy cds-blueprint-aks: `helm upgrade --install visual-search visual-search --values values.yaml`,
# the values file of the folder above the chart, which the chart's own values.yaml does not repeat.
@pytest.mark.parametrize(
    "given",
    [
        {"values.yaml": "imgae:\n  tag: v1\n"},  # a values file above the chart
        {"charts/inference/ci/gpu-values.yaml": "imgae: {tag: v1}\n"},  # the chart's ci/ values
        {"README.md": "helm install vllm charts/inference --set replicas=2,imgae.tag=v1\n"},  # a README's --set
    ],
)
def test_a_key_another_file_of_the_repository_gives_is_no_typo(repo, render_tools, given):
    (finding,) = rendered(repo, render_tools, chart("args: [{{ .Values.imgae.tag }}]", **given))
    assert finding["severity"] == "warning", said(finding)
    assert f"values.yaml has none; {next(iter(given))} gives it" in said(finding)


@pytest.mark.parametrize(
    "elsewhere",
    [
        {"values.yaml": "image:\n  tag: v1\n"},  # another key than the one the template reads
        {"examples/other/README.md": "--set imgae.tag=v1\n"},  # another folder's guide, for another chart
        {"charts/inference/NOTES.md": "imgae.tag: see the chart's values\n"},  # named, not given
    ],
)
def test_a_misspelling_nothing_gives_stays_an_error(repo, render_tools, elsewhere):
    (finding,) = rendered(repo, render_tools, chart("args: [{{ .Values.imgae.tag }}]", **elsewhere))
    assert finding["severity"] == "error", said(finding)


def test_a_value_set_with_the_wrong_shape_stays_an_error(repo, render_tools):
    files = chart("args: [{{ .Values.image.tag.name }}]")  # `tag` is a string: the chart's own default is wrong
    (finding,) = rendered(repo, render_tools, files)
    assert finding["severity"] == "error", said(finding)


def test_an_overlay_that_runs_a_plugin_is_not_checked(repo, render_tools):
    write_tree(
        repo,
        {
            "deploy/kustomization.yaml": "resources:\n- deployment.yaml\ntransformers:\n- sops.yaml\n",
            "deploy/deployment.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            "deploy/sops.yaml": "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata: {name: secrets}\n",
        },
    )
    result = run_cli("check", "deploy", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert (finding["path"], finding["severity"]) == ("deploy/kustomization.yaml", "warning"), said(finding)
    assert "external plugins disabled" in said(finding) and "--enable-alpha-plugins" in said(finding)


# intel/helm-charts trusted-attestation-controller: values.yaml writes `plugin: ""` for the installer to choose.
PLUGIN_CHECK = """
    {{ $plugins := list "null" "kmra" "isecl" }}
    {{- if not .Values.plugin }}
    {{ $message := printf "No plugin name selected. Available plugins are: %v" $plugins }}
    {{- fail $message }}
    {{- else if not (has .Values.plugin $plugins) }}
    {{ $message := printf "Invalid plugin name: %q. Valid plugins are: %v" .Values.plugin $plugins }}
    {{- fail $message }}
    {{- end }}
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ .Release.Name }}
    """


@pytest.mark.parametrize(
    ("plugin", "severity", "line"),
    [
        ('""', "warning", 4),  # left for the installer to choose: the `if` around the fail reads it empty
        ("tdx", "error", 7),  # the chart's own default is one it refuses
        ("kmra", None, 0),  # renders
    ],
)
def test_a_fail_is_judged_by_the_condition_around_it(repo, render_tools, plugin, severity, line):
    files = {
        "tac/Chart.yaml": "apiVersion: v2\nname: tac\nversion: 0.2.0\n",
        "tac/values.yaml": f"plugin: {plugin}\n",
        "tac/templates/deployment.yaml": PLUGIN_CHECK,
    }
    found = rendered(repo, render_tools, files, "tac")
    assert [(f["line"], f["severity"]) for f in found] == ([(line, severity)] if severity else []), found
    if severity == "warning":
        assert "no value for .Values.plugin (values.yaml leaves it empty)" in said(found[0])


# NVIDIA/k8s-dra-driver-gpu: the chart refuses the namespace 'default', then its own default
# `resources.gpus.enabled: true` until the installer sets `gpuResourcesEnabledOverride=true` (docs/install.md).
DRA_VALIDATION = """
    {{- if and (eq .Release.Namespace "default") (not .Values.allowDefaultNamespace) }}
    {{- fail "Running in the 'default' namespace is not recommended." }}
    {{- end }}
    {{- if and .Values.resources.gpus.enabled (not .Values.gpuResourcesEnabledOverride) }}
    {{- fail "The default value of 'resources.gpus.enabled == true' ... you must also: --set 'gpuResourcesEnabledOverride=true'" }}
    {{- end }}
    """


@pytest.mark.parametrize(
    ("guide", "severity"),
    [
        (
            "helm install dra oci://registry.k8s.io/dra --namespace dra --set gpuResourcesEnabledOverride=true\n",
            "warning",
        ),
        ("helm install dra oci://registry.k8s.io/dra --namespace dra --set resources.gpus.enabled=false\n", "warning"),
        (
            "helm install dra oci://registry.k8s.io/dra --namespace dra --set gpuResourcesEnabledOverride=false\n",
            "error",
        ),
        (None, "error"),  # nothing in the repository installs it otherwise: the chart refuses its own defaults
    ],
)
def test_a_fail_on_a_default_the_repositorys_install_changes_is_not_checked(repo, render_tools, guide, severity):
    files = {
        "deployments/helm/dra/Chart.yaml": "apiVersion: v2\nname: dra\nversion: 25.8.0\n",
        "deployments/helm/dra/values.yaml": (
            "allowDefaultNamespace: false\ngpuResourcesEnabledOverride: false\nresources:\n  gpus:\n    enabled: true\n"
        ),
        "deployments/helm/dra/templates/validation.yaml": DRA_VALIDATION,
    }
    if guide is not None:
        files["docs/install.md"] = guide
    found = [f for f in rendered(repo, render_tools, files, "deployments/helm/dra") if f["severity"] != "info"]
    # rendered again in a namespace of its own (an info), then judged by what stops it there: line 5
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [
        ("deployments/helm/dra/templates/validation.yaml", 5, severity)
    ], found
    if severity == "warning":
        assert "another value than the chart's default" in said(found[0]) and "docs/install.md" in said(found[0])


@pytest.mark.parametrize(
    ("file", "text", "said_by_helm"),
    [
        ("values.yaml", "image: [vllm/vllm-openai\n", "cannot load values.yaml"),  # not YAML
        ("Chart.yaml", "apiVersion: v2\nversion: 0.1.0\n", "chart.metadata.name is required"),
    ],
)
def test_a_chart_file_helm_refuses_is_an_error(repo, render_tools, file, text, said_by_helm):
    (finding,) = rendered(repo, render_tools, chart("args: []", **{f"charts/inference/{file}": text}))
    assert (finding["path"], finding["severity"]) == ("charts/inference/Chart.yaml", "error"), said(finding)
    assert said_by_helm in said(finding)


# kubernetes-sigs/lws test/e2e/config/certmanager: a replacement whose source hack/e2e-test.sh adds to the base with
# `kustomize edit` before it builds the overlay.
LWS_CERT_MANAGER = {
    "config/default/kustomization.yaml": "commonLabels: {app: lws}\nresources:\n- cm.yaml\n",
    "config/default/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    "test/e2e/config/certmanager/kustomization.yaml": """
        resources:
        - ../../../../config/default
        replacements:
        - source: {kind: Certificate, group: cert-manager.io, name: serving-cert, fieldPath: .metadata.namespace}
          targets:
          - select: {kind: ConfigMap}
            fieldPaths: [.metadata.annotations.x]
    """,
}
E2E_SCRIPT = """
    pushd "$CWD/config/default"
      $KUSTOMIZE edit add resource "../certmanager"
      $KUSTOMIZE build $CWD/test/e2e/config/certmanager | $KUBECTL apply --server-side -f -
    popd
"""


def test_a_kustomize_failure_is_said_by_its_error_not_its_deprecation_notes(repo, render_tools):
    # kubectl prints klog's prefix, and kustomize's deprecation note before the error.
    write_tree(repo, LWS_CERT_MANAGER)
    result = run_cli("check", "test/e2e/config/certmanager", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert finding["message"].startswith(
        "kubectl kustomize failed: nothing selected by Certificate.[noVer].cert-manager.io/serving-cert"
    ), said(finding)
    assert "# Warning" not in finding["message"] and "run.go" not in finding["message"]
    assert finding["severity"] == "error"  # nothing in the repository changes the overlay before it is built


@pytest.mark.parametrize(
    ("script", "text", "severity"),
    [
        ("hack/e2e-test.sh", E2E_SCRIPT, "warning"),  # edits, then builds this overlay
        (
            "Makefile",
            "e2e:\n\tcd config/default && $(KUSTOMIZE) edit add resource ../certmanager\n"
            "\t$(KUSTOMIZE) build test/e2e/config/certmanager | kubectl apply -f -\n",
            "warning",
        ),
        ("hack/e2e-test.sh", E2E_SCRIPT.replace("$KUSTOMIZE edit add resource", "echo"), "error"),  # builds, no edit
        (
            "Makefile",
            "deploy:\n\tcd config/default && $(KUSTOMIZE) edit set image controller=x\n"
            "\t$(KUSTOMIZE) build test/e2e/config/certmanager | kubectl apply -f -\n",
            "error",
        ),  # sets a value only
        ("hack/e2e-test.sh", E2E_SCRIPT.replace("test/e2e/config/certmanager", "test/e2e/config/default"), "error"),
        ("docs/e2e-test.sh", E2E_SCRIPT, "error"),  # a folder no build step is read from
    ],
)
def test_an_overlay_a_script_edits_before_it_builds_is_not_checked(repo, render_tools, script, text, severity):
    write_tree(repo, {**LWS_CERT_MANAGER, script: text})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert (finding["path"], finding["severity"]) == ("test/e2e/config/certmanager/kustomization.yaml", severity)
    assert ("`kustomize edit` before it builds this overlay" in said(finding)) is (severity == "warning")
