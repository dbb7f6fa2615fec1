"""Causes of false findings met on set P of held-out public repositories (docs/precision.md, "Set P"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied)."""

from __future__ import annotations

import textwrap

import pytest
from conftest import check_serious, lint_text
from support.trees import write_tree

# ---------------------------------------- strategic-merge patches by their own shape (`$patch: delete`)

# A platform's removals, which a templated kustomization lists under `patches:` to drop what upstream bakes in.
REMOVALS = """
    ## removes the bundled object store
    ---
    $patch: delete
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: minio
    ---
    $patch: delete
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: minio-pvc
    ---
    $patch: replace
    apiVersion: metacontroller.k8s.io/v1alpha1
    kind: CompositeController
    metadata:
      name: kubeflow-pipelines-profile-controller
    """


def test_a_document_with_a_patch_directive_is_no_object_to_create():
    assert not [f for f in lint_text(REMOVALS, "manifests/pipelines/patches/removals/minio.yaml") if f.rule]


def test_a_deployment_beside_the_removals_is_still_checked():
    # the trap: the same file with an object that is no patch - its missing spec is still refused
    text = (
        textwrap.dedent(REMOVALS).lstrip("\n")
        + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\n"
    )
    trainer = len(text.splitlines()) - 3  # its apiVersion line, where a document's refusal is placed
    refused = [(f.line, f.message) for f in lint_text(text, "manifests/removals.yaml") if f.rule == "schema-invalid"]
    assert (trainer, 'Deployment: Required value: "spec" is required') in refused


def test_a_delete_directive_on_a_list_item_leaves_the_object_checked():
    # `$patch: delete` on a container is inside an object: the document is not a patch by its top level
    text = """
        apiVersion: v1
        kind: Pod
        metadata:
          name: GPU-Pod
        spec:
          containers:
            - name: sidecar
              $patch: delete
            - name: cuda
              image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
        """
    assert "api-rejected" in {f.rule for f in lint_text(text, "pod.yaml")}


# ---------------------------------------- a chart that is itself a template of another tool (gomplate)

GOMPLATE_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: deploykf-auth\nversion: 1.0.0\n",
    "values.yaml": """
        deployKF_helpers:
          gateway:
            http_endpoint: {{< (tmpl.Exec "gateway.http_endpoint" .) | quote >}}
        extraManifests:
          {{<- range $manifest := .Values.extraManifests >}}
          - {{< (tpl $manifest $) | quote >}}
          {{<- end >}}
        """,
    "templates/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: auth
        spec:
          selector: {matchLabels: {app: auth}}
          template:
            metadata: {labels: {app: auth}}
            spec:
              containers:
                - name: auth
                  image: ghcr.io/deploykf/auth:0.1.0
        """,
}


def test_a_chart_whose_values_file_is_a_template_is_not_checked_not_broken(repo, render_tools):
    write_tree(repo / "auth", GOMPLATE_CHART)
    ((path, line, rule, severity, message),) = check_serious("auth", "--helm", render_tools["helm"])
    assert (path, line, rule, severity) == ("auth/Chart.yaml", 1, "not-rendered", "warning")
    assert "cannot load values.yaml" in message
    assert "values.yaml holds template actions ({{ at line 3)" in message


def test_a_chart_whose_chart_file_is_a_template_says_so(repo, render_tools):
    chart = dict(GOMPLATE_CHART)
    chart["values.yaml"] = "replicas: 1\n"
    chart["Chart.yaml"] = """
        apiVersion: v2
        name: deploykf-istio-gateway
        version: 1.0.0
        dependencies:
          - alias: gateway
            name: {{< .Values.charts.istioGateway.name | quote >}}
            version: {{< .Values.charts.istioGateway.version | quote >}}
        """
    write_tree(repo / "gateway", chart)
    ((_path, _line, _rule, severity, message),) = check_serious("gateway", "--helm", render_tools["helm"])
    assert severity == "warning"
    assert "Chart.yaml holds template actions ({{ at line 6)" in message
    assert "Chart.yaml is empty" not in message


@pytest.mark.parametrize(
    "values",
    [
        # the traps: a values.yaml that helm refuses for its own fault, beside `{{` that `tpl` expands later
        'podAnnotations: "{{ .Release.Name }}"\nresources:\n  limits: {nvidia.com/gpu: 1\n',
        "config: |\n  name: {{ .Release.Name }}\nresources:\n  limits: [nvidia.com/gpu: 1\n",
    ],
)
def test_a_broken_values_file_with_tpl_strings_stays_an_error(repo, render_tools, values):
    chart = dict(GOMPLATE_CHART)
    chart["values.yaml"] = values
    write_tree(repo / "auth", chart)
    ((_path, _line, rule, severity, message),) = check_serious("auth", "--helm", render_tools["helm"])
    assert (rule, severity) == ("not-rendered", "error")
    assert "template actions" not in message


# ---------------------------------------- a `fail` inside an included template that names the values to set

XKS_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: rhai-on-xks\nversion: 0.1.0\n",
    "values.yaml": """
        enabled: true
        aws:
          enabled: false
        azure:
          enabled: false
        """,
    "templates/_helpers.tpl": """
        {{- define "xks.providers" -}}
        aws: {}
        azure: {}
        {{- end }}
        {{- define "xks.validateCloudProvider" -}}
        {{- $registry := include "xks.providers" . | fromYaml }}
        {{- $count := 0 -}}
        {{- range $name := keys $registry | sortAlpha }}
          {{- if (index $.Values $name | default dict).enabled }}{{- $count = add $count 1 }}{{- end }}
        {{- end }}
        {{- if and .Values.enabled (eq (int $count) 0) -}}
        {{- fail (printf "Exactly one cloud provider must be enabled: set %s" (join ".enabled=true, " (keys $registry | sortAlpha) | printf "%s.enabled=true")) -}}
        {{- end }}
        {{- end }}
        """,
    "templates/validation.yaml": '{{- include "xks.validateCloudProvider" . -}}\n',
    "templates/gpu-job.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: probe
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: probe
                  image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
                  resources:
                    limits:
                      nvidia.com/gpu: 1
        """,
}
README = "Install on EKS:\n\n    helm upgrade rhaii ./charts/xks \\\n      --set aws.enabled=true\n"


def test_a_fail_the_install_answers_with_set_is_not_checked_not_broken(repo, render_tools):
    write_tree(repo / "charts/xks", {**XKS_CHART, "README.md": README})
    ((path, line, rule, severity, message),) = check_serious("charts/xks", "--helm", render_tools["helm"])
    assert (path, line, rule, severity) == ("charts/xks/templates/validation.yaml", 1, "not-rendered", "warning")
    assert "the install gives .Values.aws.enabled another value" in message
    assert "README.md gives another" in message


def test_a_fail_nothing_in_the_repository_answers_stays_an_error(repo, render_tools):
    # the trap: no README, script or values file gives aws.enabled: the chart fails as the repository installs it
    write_tree(repo / "charts/xks", XKS_CHART)
    ((_path, _line, rule, severity, _message),) = check_serious("charts/xks", "--helm", render_tools["helm"])
    assert (rule, severity) == ("not-rendered", "error")


def test_the_chart_given_a_cloud_renders_clean(repo, render_tools):
    write_tree(repo / "charts/xks", XKS_CHART)
    found = check_serious("charts/xks", "--helm", render_tools["helm"], "--set", "aws.enabled=true")
    assert not [f for f in found if f[2] == "not-rendered"]
