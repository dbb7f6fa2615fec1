"""The loader: exact positions, Kubernetes' YAML semantics, and hostile input refused cleanly."""

import textwrap

import pytest

from gpulint.lint.findings import Severity
from gpulint.lint.inputs.loader import MAX_DEPTH, detect_encoding, load_bytes, load_text


def load(text: str):
    return load_text("f.yaml", textwrap.dedent(text).lstrip("\n"))


def test_positions_of_keys_and_values_are_one_based():
    loaded = load("""
        apiVersion: v1
        kind: Pod
        spec:
          containers:
          - name: a
            resources:
              limits: {nvidia.com/gpu: 2}
    """)
    doc = loaded.documents[0]
    path = ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    assert doc.locate(path) == (7, 32)
    assert doc.locate(path, on_key=True) == (7, 16)
    assert doc.locate(("spec", "containers", 0)) == (5, 5)
    # a path that does not exist points at its deepest existing ancestor
    assert doc.locate(("spec", "containers", 0, "resources", "requests")) == (6, 5)


def test_positions_count_from_the_file_in_later_documents():
    loaded = load("""
        # header comment
        apiVersion: v1
        kind: ConfigMap
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: second
    """)
    assert [d.index for d in loaded.documents] == [0, 1]
    assert loaded.documents[1].locate(("metadata", "name")) == (8, 9)


def test_yaml_1_1_booleans_as_kubernetes_reads_them():
    data = load("a: yes\nb: on\nc: 'yes'\nd: 0x10\ne: 1e-1\nf: 2021-01-01\n").documents[0].data
    assert data == {"a": True, "b": True, "c": "yes", "d": 16, "e": "1e-1", "f": "2021-01-01"}


def test_keys_become_strings_as_in_yaml_to_json():
    assert load("1: a\ntrue: b\n").documents[0].data == {"1": "a", "true": "b"}


def test_duplicate_keys_are_reported_at_the_second_key():
    loaded = load("""
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: a
          name: b
    """)
    (problem,) = loaded.problems
    assert (problem.line, problem.column) == (5, 3)
    assert 'duplicate key "name"' in problem.message and "line 4" in problem.message
    assert loaded.documents[0].data["metadata"]["name"] == "b"


def test_duplicate_keys_of_what_kubernetes_never_reads_are_not_reported():
    """Helm values (a Terraform helm-values file, as held-out repositories have them): Helm's YAML reader
    keeps the last key, and no Kubernetes object is in the document."""
    loaded = load("""
        prometheus:
          retention: 5h
        grafana:
          enabled: true
        prometheus:
          retention: 10h
    """)
    assert loaded.problems == []
    assert loaded.documents[0].data["prometheus"] == {"retention": "10h"}


def test_duplicate_keys_of_a_kustomization_are_kustomizes_and_the_last_wins():
    """vllm-project/aibrix's config/overlays/dev/gpu-optimizer/kustomization.yaml repeats `apiVersion` at its
    end; kustomize reads it with YAMLToJSON and encoding/json, keeping the last key, and builds it."""
    loaded = load("""
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ../../../gpu-optimizer
        resources:
        - ../../../gateway
        apiVersion: kustomize.config.k8s.io/v1beta1
    """)
    assert loaded.problems == []
    assert loaded.documents[0].data["resources"] == ["../../../gateway"]


def test_duplicate_keys_of_a_flux_kustomization_are_refused():
    """Flux's Kustomization is an object the API server reads strictly (trap for the one above)."""
    loaded = load("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: gpu-operator
          name: gpu-operator-2
    """)
    (problem,) = loaded.problems
    assert 'duplicate key "name"' in problem.message


def test_a_syntax_error_in_a_file_naming_no_kind_is_info():
    """A Terraform template of Helm values (`${indent(4, ...)}` as a mapping entry) is no manifest."""
    loaded = load("""
        labels:
          node-type: head
          ${indent(4, chomp(yamlencode(additional_labels)))}
        serviceAccountName: ${k8s_service_account}
    """)
    (problem,) = loaded.problems
    assert problem.severity is Severity.INFO and "no Kubernetes manifest" in problem.notes[-1]
    broken = load("""
        apiVersion: v1
        kind Pod
        metadata: {name: a}
          x: 1
    """)
    (problem,) = broken.problems
    assert problem.severity is None  # a manifest with a typo: the rule's error


def test_merge_keys_and_aliases():
    loaded = load("""
        base: &base {cpu: "1", memory: 1Gi}
        limits:
          <<: *base
          cpu: "2"
    """)
    assert loaded.documents[0].data["limits"] == {"cpu": "2", "memory": "1Gi"}
    assert loaded.documents[0].locate(("limits", "memory")) == (1, 32)


def test_alias_bomb_is_refused_not_expanded():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        previous, name = chr(96 + level), chr(97 + level)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    loaded = load_text("bomb.yaml", "\n".join(lines) + "\n")
    assert loaded.documents == []
    (problem,) = loaded.problems
    assert "alias bomb" in problem.message


def test_deep_nesting_is_a_clear_problem():
    loaded = load_text("deep.yaml", "- " * (MAX_DEPTH + 10) + "x\n")
    assert "nests deeper" in loaded.problems[0].message
    loaded = load_text("deeper.yaml", "[" * 10000 + "]" * 10000)
    assert loaded.problems and loaded.problems[0].line == 1
    assert "nesting depth" in loaded.problems[0].message or "nests deeper" in loaded.problems[0].message


def test_syntax_error_has_line_and_column_and_later_documents_survive():
    loaded = load("""
        apiVersion: v1
        kind: Pod
        spec: [1, 2
        ---
        apiVersion: v1
        kind: ConfigMap
    """)
    assert len(loaded.problems) == 1
    assert loaded.problems[0].line == 4 and loaded.problems[0].message.startswith("YAML syntax error")
    assert [d.data["kind"] for d in loaded.documents] == ["ConfigMap"]
    assert loaded.documents[0].locate(("kind",)) == (6, 7)


def test_tabs_get_a_hint():
    loaded = load_text("tabs.yaml", "spec:\n\tcontainers: []\n")
    assert loaded.problems[0].line == 2
    assert "tab" in loaded.problems[0].message


def test_helm_templates_are_reported_once():
    loaded = load("""
        apiVersion: v1
        kind: Pod
        metadata:
          name: {{ .Release.Name }}
        {{- if .Values.gpu }}
        spec: {}
        {{- end }}
    """)
    assert loaded.templated and len(loaded.problems) == 1
    assert "helm template" in loaded.problems[0].notes[0]


def test_quoted_braces_are_data_not_templates():
    loaded = load("""
        apiVersion: argoproj.io/v1alpha1
        kind: Workflow
        spec:
          arguments: ["{{inputs.parameters.model}}"]
    """)
    assert not loaded.templated and not loaded.problems
    assert [d.data for d in loaded.documents] == [
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Workflow",
            "spec": {"arguments": ["{{inputs.parameters.model}}"]},
        }
    ]


def test_binary_and_non_utf8_files():
    assert "binary" in load_bytes("b.yaml", b"\x00\x01\x02kind: Pod").problems[0].message
    problem = load_bytes("latin1.yaml", b"kind: Pod\nname: caf\xe9\n").problems[0]
    assert (problem.line, problem.column) == (2, 10) and "UTF-8" in problem.message


def test_utf8_bom_and_utf16_are_read():
    assert load_bytes("bom.yaml", b"\xef\xbb\xbfkind: Pod\n").documents[0].data == {"kind": "Pod"}
    assert load_bytes("u16.yaml", "kind: Pod\n".encode("utf-16")).documents[0].data == {"kind": "Pod"}


def test_empty_and_null_documents():
    for text, count in (("", 0), ("---\n", 1), ("---\n---\n", 2), ("# only a comment\n", 0), ("~\n", 1)):
        loaded = load_text("e.yaml", text)
        assert not loaded.problems
        assert [d.data for d in loaded.documents] == [None] * count, text


def test_json_is_read_with_positions():
    loaded = load_text("pod.json", '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "spec": {"containers": []}\n}\n')
    assert loaded.documents[0].data["kind"] == "Pod"
    assert loaded.documents[0].locate(("spec", "containers")) == (4, 26)


def test_control_characters_are_a_problem_not_a_crash():
    loaded = load_text("ctl.yaml", "kind: Pod\nname: a\x07b\n")
    assert loaded.problems and loaded.problems[0].line == 2


def test_go_templates_inside_strings_are_data_not_helm():
    prometheus = load("""
        apiVersion: monitoring.coreos.com/v1
        kind: PrometheusRule
        metadata: {name: gpu-alerts}
        spec:
          groups:
          - name: gpus
            rules:
            - alert: GPUDown
              expr: DCGM_FI_DEV_GPU_UTIL == 0
              annotations:
                summary: "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is idle"
                description: |
                  {{ $labels.instance }} reports no utilisation.
                  {{ range $i, $v := .Alerts }}{{ $v.Labels.pod }}{{ end }}
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: alertmanager-templates}
        data:
          gpu.tmpl: >
            {{ define "gpu.title" }}[{{ .Status }}] {{ .CommonLabels.alertname }}{{ end }}
          plain: text with {{ braces }} inside
    """)
    assert not prometheus.templated and not prometheus.problems and len(prometheus.documents) == 2
    helm_value = load("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            resources:
              limits:
                nvidia.com/gpu: {{ .Values.gpus }}
    """)
    assert helm_value.templated and helm_value.problems[0].line == 9 and helm_value.documents == []


@pytest.mark.parametrize(
    "codec, bom",
    [
        ("utf-8", b""),
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("utf-32-be", b"\x00\x00\xfe\xff"),
    ],
)
def test_every_encoding_yaml_allows_is_read_and_kept_for_writing_back(codec, bom):
    text = "kind: Pod\nmetadata: {name: café}\n"
    raw = bom + text.encode(codec)
    loaded = load_bytes("p.yaml", raw)
    assert [d.data for d in loaded.documents] == [{"kind": "Pod", "metadata": {"name": "café"}}]
    assert loaded.documents[0].locate(("metadata", "name")) == (2, 18)
    assert loaded.encoding == detect_encoding(raw) and loaded.encoding.encode(loaded.text) == raw


def test_undecodable_bytes_are_placed_in_the_decoded_text():
    (problem,) = load_bytes("p.yaml", b"\xef\xbb\xbfkind: Pod\nname: caf\xe9\n").problems  # after a BOM
    assert (problem.line, problem.column) == (2, 10) and "not valid UTF-8" in problem.message
    (problem,) = load_bytes("p.yaml", b"\xff\xfe" + "a: 1\nb: x".encode("utf-16-le") + b"\x00\xd8").problems
    assert (problem.line, problem.column) == (2, 5) and "not valid UTF-16" in problem.message


@pytest.mark.parametrize(
    "text",
    [
        "- " * (MAX_DEPTH + 10) + "x\n",  # a sequence too deep: refused at its 257th dash
        "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 2)),  # keys too deep: refused at the key
        "- " * MAX_DEPTH + "x\n",  # the deepest allowed
    ],
)
def test_the_depth_limit_is_the_same_with_or_without_aliases(text):
    """Without a `*` in the text the loader checks the depth while building (no separate counting walk):
    the same refusal, at the same line and column, as when the alias count runs (forced by a comment)."""
    without = load_text("deep.yaml", text)
    counted = load_text("deep.yaml", text + "# * forces the alias count\n")
    assert [(p.message, p.line, p.column) for p in without.problems] == [
        (p.message, p.line, p.column) for p in counted.problems
    ]
    assert [d.data for d in without.documents] == [d.data for d in counted.documents]


ENV_ONLY = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: main
        image: trainer:1.0
        env:
        - name: NCCL_DEBUG
          value: INFO
        -   "name": CUDA_VISIBLE_DEVICES
"""


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: MODEL_NAME\n", ("metadata", "name")),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: MODEL_NAME-webapp}\n", ("metadata", "name")),
        ('apiVersion: v1\nkind: Pod\nmetadata:\n  "name": "MODEL_NAME"\n', ("metadata", "name")),
        ("- apiVersion: v1\n  kind: Pod\n  metadata: {name: RELEASE-NAME-redis}\n", None),  # not a mapping
        ("apiVersion: v1\nkind: List\nitems:\n- metadata:\n    name: MODEL_NAME\n", ("items", 0, "metadata", "name")),
        ("apiVersion: v1\nkind: Pod\nm: &m\n  name: MODEL_NAME\nmetadata: *m\n", ("metadata", "name")),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n    name:\n      MODEL_NAME\n", ("metadata", "name")),
        # a namespace alone written as the word a script's sed fills in (`namespace: KUBEFLOW_NAMESPACE`)
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\n  namespace: KUBEFLOW_NAMESPACE\n",
            ("metadata", "namespace"),
        ),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: kubeflow}\n", None),
    ],
)
def test_a_fill_in_name_is_found_beside_env_var_names(text, path):
    # the env vars' `- name: NCCL_DEBUG` lines are passed over by the text's test, the metadata's name is not
    loaded = load_text("f.yaml", ENV_ONLY + "---\n" + text)
    found = [p for document in loaded.documents for p in document.placeholders]
    assert found == ([] if path is None else [path])
    assert any(p.rule == "not-rendered" for p in loaded.problems) is (path is not None)


def test_env_var_names_alone_are_no_reason_to_walk_for_placeholders():
    from gpulint.lint.inputs import loader

    assert not loader._may_hold_name_fill_in(ENV_ONLY)
    assert loader._may_hold_name_fill_in(ENV_ONLY.replace("{name: train}", "{name: TRAIN_JOB}"))
    assert loader._may_hold_name_fill_in(ENV_ONLY.replace("- name: NCCL", "- value: x\n          name: NCCL"))
