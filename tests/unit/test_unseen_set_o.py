"""Causes of false findings met on set O of held-out public repositories (docs/precision.md, "Set O"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied)."""

from __future__ import annotations

import json

import pytest
from conftest import check_serious, lint_text
from support.trees import write_tree

# ---------------------------------------- another tool's configuration that borrows `kind`, with no apiVersion

# A Zarf package and a UDS bundle that deploy a GPU chart: their schemas have `kind` and no apiVersion.
ZARF = """
    kind: ZarfPackageConfig
    metadata:
      name: vllm
      version: '###ZARF_PKG_TMPL_IMAGE_VERSION###'
    components:
      - name: vllm-model
        required: true
        charts:
          - name: vllm-model
            namespace: leapfrogai
            localPath: chart
            version: 0.14.0
            valuesFiles:
              - values/upstream-values.yaml
    """
UDS_BUNDLE = """
    kind: UDSBundle
    metadata:
      name: leapfrogai
      version: dev
    packages:
      - name: vllm
        path: ../../../packages/vllm
        ref: dev
        overrides:
          vllm-model:
            vllm-model:
              variables:
                - name: GPU_LIMIT
                  path: gpu.limit
    """


@pytest.mark.parametrize(
    ("name", "text"), [("packages/vllm/zarf.yaml", ZARF), ("bundles/gpu/uds-bundle.yaml", UDS_BUNDLE)]
)
def test_a_tool_configuration_whose_kind_no_api_serves_is_not_refused(name, text):
    assert not [f for f in lint_text(text, name) if f.rule == "schema-invalid"]


@pytest.mark.parametrize("kind", ["Deployment", "Job", "RayCluster"])
def test_a_served_kind_without_apiversion_stays_refused(kind):
    findings = lint_text(f"kind: {kind}\nmetadata:\n  name: serve\n", "deploy.yaml")
    assert [f.message for f in findings if f.rule == "schema-invalid"] == [
        f"{kind} has no apiVersion: kubectl refuses it (apiVersion not set)"
    ]


def test_a_kind_the_linted_crds_serve_without_apiversion_stays_refused(repo):
    # the trap: a kind no bundled schema knows, but a CRD of the repository serves it
    write_tree(
        repo,
        {
            "crd.yaml": """
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata:
                  name: zarfpackageconfigs.example.com
                spec:
                  group: example.com
                  names: {kind: ZarfPackageConfig, plural: zarfpackageconfigs, singular: zarfpackageconfig}
                  scope: Namespaced
                  versions:
                    - name: v1
                      served: true
                      storage: true
                      schema:
                        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                """,
            "zarf.yaml": ZARF,
        },
    )
    found = check_serious(".")
    assert [(path, rule, severity) for path, _line, rule, severity, _said in found] == [
        ("zarf.yaml", "schema-invalid", "error")
    ]


# ---------------------------------------- a chart whose values.schema.json asks the installer for values

SCHEMA_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: data-ingestor\nversion: 0.1.0\n",
    "values.yaml": """
        image:
          repository: ""
          tag: ""
        gpu: 1
        sourceData:
          create: true
          storageClassName: ""
          size: 200Gi
        """,
    "templates/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}
        spec:
          selector:
            matchLabels: {app: ingestor}
          template:
            metadata:
              labels: {app: ingestor}
            spec:
              containers:
                - name: ingestor
                  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .Values.gpu }}
        """,
}
SCHEMA = {
    "$schema": "https://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["image", "gpu", "sourceData"],
    "properties": {
        "image": {
            "type": "object",
            "required": ["repository", "tag"],
            "properties": {"repository": {"type": "string", "minLength": 1}, "tag": {"type": "string", "minLength": 1}},
        },
        "gpu": {"type": "integer", "minimum": 1},
        "sourceData": {
            "type": "object",
            "properties": {"size": {"type": "string"}},
            "allOf": [
                {
                    "if": {"properties": {"create": {"const": True}}, "required": ["create"]},
                    "then": {"properties": {"storageClassName": {"type": "string", "minLength": 1}}},
                }
            ],
        },
    },
}


def schema_chart(repo, values: str | None = None, schema: dict | None = None) -> None:
    files = dict(SCHEMA_CHART)
    if values is not None:
        files["values.yaml"] = values
    write_tree(repo / "chart", files)
    (repo / "chart" / "values.schema.json").write_text(json.dumps(schema or SCHEMA))


def test_a_schema_that_asks_the_installer_for_empty_defaults_is_not_checked_not_broken(repo, render_tools):
    schema_chart(repo)
    ((path, line, rule, severity, message),) = check_serious("chart", "--helm", render_tools["helm"])
    assert (path, line, rule, severity) == ("chart/Chart.yaml", 1, "not-rendered", "warning")
    assert "asks the installer for image.repository, image.tag, sourceData.storageClassName" in message
    assert "given at install" in message


def test_a_required_key_the_defaults_lack_is_asked_of_the_installer(repo, render_tools):
    schema = {**SCHEMA, "required": ["image", "gpu", "sourceData", "endpoint"]}
    values = 'image: {repository: nvcr.io/ingestor, tag: "1.0"}\ngpu: 1\nsourceData: {create: false}\n'
    schema_chart(repo, values, schema)
    ((_path, _line, _rule, severity, message),) = check_serious("chart", "--helm", render_tools["helm"])
    assert severity == "warning"
    assert "asks the installer for endpoint," in message


def test_the_installers_values_given_render_and_check_the_chart(repo, render_tools):
    values = 'image: {repository: nvcr.io/ingestor, tag: "1.0"}\ngpu: 1\nsourceData: {create: true, storageClassName: gcnv}\n'
    schema_chart(repo, values)
    assert not [f for f in check_serious("chart", "--helm", render_tools["helm"]) if f[2] == "not-rendered"]


@pytest.mark.parametrize(
    "values",
    [
        # the chart's own default contradicts its schema: a number where an integer >= 1 is asked
        'image: {repository: "", tag: ""}\ngpu: 0\nsourceData: {create: false}\n',
        'image: {repository: nvcr.io/ingestor, tag: "1.0"}\ngpu: "one"\nsourceData: {create: false}\n',
    ],
)
def test_a_default_the_chart_writes_against_its_schema_stays_an_error(repo, render_tools, values):
    schema_chart(repo, values)
    ((path, _line, rule, severity, message),) = check_serious("chart", "--helm", render_tools["helm"])
    assert (path, rule, severity) == ("chart/Chart.yaml", "not-rendered", "error")
    assert "asks the installer" not in message


# ---------------------------------------- a chart that depends on another chart of the checkout (`file://`)

# A vLLM chart, and an application chart that depends on it by path and gives it its model and replicas.
LOCAL_DEPENDENCY = {
    "charts/vllm/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
    "charts/vllm/values.yaml": "model: facebook/opt-125m\nreplicas: 1\ngpus: 1\n",
    "charts/vllm/templates/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}-vllm
        spec:
          replicas: {{ .Values.replicas }}
          selector:
            matchLabels: {app: vllm}
          template:
            metadata:
              labels: {app: vllm}
            spec:
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.9.2
                  args: ["--model", "{{ .Values.model }}"]
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .Values.gpus }}
        """,
    "charts/chat/Chart.yaml": """
        apiVersion: v2
        name: chat
        version: 0.1.0
        dependencies:
          - name: vllm
            version: ">=0-0"
            repository: "file://../vllm/"
        """,
}


def local_dependency(repo, parent_values: str, repository: str = "file://../vllm/") -> None:
    files = {**LOCAL_DEPENDENCY, "charts/chat/values.yaml": parent_values}
    files["charts/chat/Chart.yaml"] = files["charts/chat/Chart.yaml"].replace("file://../vllm/", repository)
    write_tree(repo, files)


def test_a_local_dependency_is_rendered_with_the_values_its_parent_gives(repo, render_tools):
    local_dependency(repo, "vllm:\n  model: deepseek-ai/deepseek-llm-7b-chat\n  replicas: two\n")
    found = check_serious("charts/chat", "--helm", render_tools["helm"])
    # the parent's value, judged where the dependency's template writes it
    assert [(path, rule, severity) for path, _line, rule, severity, _said in found] == [
        ("charts/vllm/templates/deployment.yaml", "schema-invalid", "error")
    ]


def test_a_local_dependency_given_good_values_renders_clean(repo, render_tools):
    local_dependency(repo, "vllm:\n  model: deepseek-ai/deepseek-llm-7b-chat\n  replicas: 2\n")
    assert check_serious("charts/chat", "--helm", render_tools["helm"]) == []


@pytest.mark.parametrize("repository", ["file://../absent/", "https://charts.example.com/vllm"])
def test_a_dependency_not_in_the_checkout_stays_not_vendored(repo, render_tools, repository):
    local_dependency(repo, "vllm:\n  replicas: two\n", repository)
    ((path, _line, rule, severity, message),) = check_serious("charts/chat", "--helm", render_tools["helm"])
    assert (path, rule, severity) == ("charts/chat/Chart.yaml", "not-rendered", "warning")
    assert "missing in charts/ directory: vllm" in message


def test_a_local_dependencys_own_local_dependency_comes_with_it(repo, render_tools):
    # OPEA's layout: every common chart includes helpers of a library chart it takes by path
    files = {
        **LOCAL_DEPENDENCY,
        "charts/chat/values.yaml": "vllm:\n  replicas: 2\n",
        "charts/commonlib/Chart.yaml": "apiVersion: v2\nname: commonlib\nversion: 0.1.0\ntype: library\n",
        "charts/commonlib/templates/_annotations.tpl": '{{- define "common.annotations" -}}\nannotations: {}\n{{- end -}}\n',
        "charts/vllm/Chart.yaml": """
            apiVersion: v2
            name: vllm
            version: 0.1.0
            dependencies:
              - name: commonlib
                version: 0.1.0
                repository: "file://../commonlib"
            """,
    }
    files["charts/vllm/templates/deployment.yaml"] = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: vllm\n"
        '  {{- include "common.annotations" . | nindent 2 }}\n'
        "spec:\n  ports: [{port: 8000}]\n"
    )
    write_tree(repo, files)
    assert "common.annotations" in (repo / "charts/vllm/templates/deployment.yaml").read_text()
    assert check_serious("charts/chat", "--helm", render_tools["helm"]) == []
