"""--schema-location: kubeconform users' schema folders (and templates) validate custom resources."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, said

# What kubeconform's openapi2jsonschema.py --strict writes for a small CRD (finetune_v1.json).
FINETUNE_SCHEMA = {
    "description": "FineTune is the Schema for the finetunes API",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["model"],
            "properties": {"model": {"type": "string"}, "workers": {"type": "integer", "minimum": 1}},
            "additionalProperties": False,
        },
    },
}

FINETUNE = """
apiVersion: ml.example.com/v1
kind: FineTune
metadata: {name: llama-sft, namespace: ml}
spec:
  model: meta-llama/Llama-3.1-8B
  workers: 4
"""
TYPO = FINETUNE.replace("  workers: 4", "  worker: 4")


def schema_findings(*args: str) -> list[dict]:
    run = run_cli("check", "--select", "schema-invalid", "--format", "json", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.json()["findings"]


@pytest.mark.parametrize(
    "layout",
    [
        "finetune_v1.json",  # openapi2jsonschema's default {kind}_{version}
        "ml.example.com/finetune_v1.json",  # {{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json
        "v1.37.0-standalone-strict/finetune-ml-v1.json",  # kubeconform's own layout
    ],
)
def test_a_folder_in_each_kubeconform_layout(write, layout):
    schema = write(f"schemas/{layout}", json.dumps(FINETUNE_SCHEMA, indent=2))
    folder = str(schema.parents[layout.count("/")])
    manifest = write("finetune.yaml", FINETUNE)
    assert schema_findings("--schema-location", folder, str(manifest)) == []
    typo = write("typo.yaml", TYPO)
    (finding,) = schema_findings("--schema-location", folder, str(typo))
    assert (finding["line"], finding["column"], finding["severity"]) == (6, 3, "warning")
    # the schema file: on the first line when it fits, else the first note
    assert said(finding).startswith('unknown field "spec.worker" in ml.example.com/v1 FineTune')
    assert f"schema {schema}" in said(finding)
    assert schema_findings(str(typo)) == []  # without the location the kind has no schema


def test_a_template_location(write):
    layout = "/{{ .ResourceKind }}-{{.Group}}-{{ .ResourceAPIVersion }}.json"
    upper = write("upper/FineTune-ml.example.com-v1.json", json.dumps(FINETUNE_SCHEMA)).parent
    lower = write("lower/finetune-ml.example.com-v1.json", json.dumps(FINETUNE_SCHEMA)).parent
    # kubeconform lower-cases the kind: FineTune-... is not finetune-...
    assert schema_findings("--schema-location", f"{upper}{layout}", str(write("a.yaml", TYPO))) == []
    (finding,) = schema_findings("--schema-location", f"{lower}{layout}", str(write("b.yaml", TYPO)))
    assert 'unknown field "spec.worker"' in finding["message"] and "finetune-ml.example.com-v1.json" in said(finding)


def test_the_first_location_that_has_the_schema_wins(write):
    lax = {**FINETUNE_SCHEMA, "properties": {**FINETUNE_SCHEMA["properties"], "spec": {"type": "object"}}}
    first = write("first/finetune_v1.json", json.dumps(lax)).parent
    second = write("second/finetune_v1.json", json.dumps(FINETUNE_SCHEMA)).parent
    empty = write("empty/README", "nothing\n").parent
    typo = str(write("t.yaml", TYPO))
    assert (
        schema_findings(
            "--schema-location", str(empty), "--schema-location", str(first), "--schema-location", str(second), typo
        )
        == []
    )
    assert len(schema_findings("--schema-location", str(second), "--schema-location", str(first), typo)) == 1


def test_a_location_overrides_the_bundled_crd_schema_but_not_the_kubernetes_kinds(write):
    folder = write("schemas/ray.io/rayjob_v1.json", json.dumps({"type": "object"})).parent.parent
    # a CRD folder's job_v1.json (some CRD's Job) must not validate batch/v1 Jobs
    write("schemas/job_v1.json", json.dumps({"type": "object", "required": ["tasks"]}))
    job = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec:\n  entrypoint: python train.py\n  rayClusterSpc: {}\n"
    batch = """
apiVersion: batch/v1
kind: Job
metadata: {name: embed}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: python:3.12}]
"""
    assert len(schema_findings(str(write("job.yaml", job)))) == 1  # bundled kuberay v1.7.0 schema
    assert schema_findings("--schema-location", str(folder), str(write("job2.yaml", job))) == []
    assert schema_findings("--schema-location", str(folder), str(write("batch.yaml", batch))) == []


def test_the_configuration_key_is_relative_to_the_configuration_file(write):
    write("repo/schemas/finetune_v1.json", json.dumps(FINETUNE_SCHEMA))
    config = write("repo/.gpulint.yaml", "schema-location: [schemas]\n")
    typo = write("repo/deploy/finetune.yaml", TYPO)
    (finding,) = schema_findings("--config", str(config), str(typo))
    assert "repo/schemas/finetune_v1.json" in said(finding)


@pytest.mark.parametrize(
    "given, expected",
    [
        ("{root}/missing", "--schema-location: {root}/missing: no such folder"),
        (
            "https://raw.githubusercontent.com/datreeio/CRDs-catalog/main/{{{{.Group}}}}/x.json",
            "gpulint reads schema folders offline",
        ),
        (
            "{root}/schemas/{{{{ .Kind }}}}.json",
            "unknown template variable .Kind (kubeconform's are .NormalizedKubernetesVersion",
        ),
        ("{root}/nowhere/{{{{ .ResourceKind }}}}.json", "no such folder {root}/nowhere"),
    ],
)
def test_a_location_that_cannot_be_used_is_a_usage_error(write, given, expected):
    root = str(write("schemas/ok.json", "{}").parent.parent)
    manifest = write("m.yaml", FINETUNE)
    run = run_cli("check", "--schema-location", given.format(root=root), str(manifest))
    assert run.exit_code == 2
    assert expected.format(root=root) in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


@pytest.mark.parametrize(
    "content, where",
    [
        (
            '{\n  "type": "object",\n  "properties": {\n    "spec": {"type": "object",}\n  }\n}\n',
            ":4:31: not valid JSON",
        ),
        ("[1, 2]\n", ":1:1: not a JSON schema: the document is not an object"),
    ],
)
def test_a_schema_file_that_is_not_json_is_a_usage_error_with_its_position(write, content, where):
    bad = write("schemas/ml.example.com/finetune_v1.json", content)
    run = run_cli("check", "--schema-location", str(bad.parent.parent), str(write("m.yaml", FINETUNE)))
    assert run.exit_code == 2
    assert f"{bad}{where}" in run.stderr


def test_explain_reads_the_configured_locations_as_check_does(write):
    write("repo/schemas/finetune_v1.json", "{not json\n")
    config = write("repo/.gpulint.yaml", "schema-location: [schemas]\n")
    nodes = write("repo/cluster/nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    manifest = write("repo/finetune.yaml", FINETUNE)
    run = run_cli("explain", "--config", str(config), "--inventory", str(nodes), str(manifest))
    assert run.exit_code == 2
    assert "schemas/finetune_v1.json:1:2: not valid JSON" in run.stderr
