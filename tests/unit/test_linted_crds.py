"""A CustomResourceDefinition among the linted files (or in the inventory) validates its instances."""

from __future__ import annotations

from conftest import run_cli, said
from support.crds import CRD, INSTANCE


def findings(write, *files: tuple[str, str], extra: tuple[str, ...] = ()) -> list[dict]:
    paths = [str(write(name, text)) for name, text in files]
    run = run_cli("check", "--select", "schema-invalid", "--format", "json", *extra, *paths)
    assert run.exit_code in (0, 1), run.stderr
    return run.json()["findings"]


def test_a_valid_instance_of_a_linted_crd_is_clean(write):
    assert findings(write, ("crds/finetune.yaml", CRD), ("finetune.yaml", INSTANCE)) == []


def test_an_unknown_field_names_the_crd_and_its_file(write):
    typo = INSTANCE.replace("  output:\n", "  outputs:\n")
    (finding,) = [
        f for f in findings(write, ("crds/finetune.yaml", CRD), ("finetune.yaml", typo)) if "unknown" in f["message"]
    ]
    assert (finding["line"], finding["column"], finding["severity"]) == (20, 3, "warning")
    # the CRD and its file: on the first line when it fits, else the first note
    assert said(finding).startswith('unknown field "spec.outputs" in ml.example.com/v1 FineTune')
    assert "CRD finetunes.ml.example.com in " in said(finding) and "crds/finetune.yaml" in said(finding)


def test_without_the_crd_the_kind_is_not_checked(write):
    assert findings(write, ("finetune.yaml", INSTANCE.replace("  output:\n", "  outputs:\n"))) == []


def test_structural_schema_semantics(write):
    crd = ("crds/finetune.yaml", CRD)
    # int-or-string: an integer and a string are both fine, a boolean is not
    assert findings(write, crd, ("a.yaml", INSTANCE.replace("25%", "1"))) == []
    (wrong,) = findings(write, crd, ("b.yaml", INSTANCE.replace("25%", "true")))
    assert (wrong["line"], wrong["severity"]) == (9, "error") and "must be integer or string" in wrong["message"]
    # preserve-unknown-fields: anything below hyperparameters; the embedded resource keeps apiVersion/kind/metadata
    assert findings(write, crd, ("c.yaml", INSTANCE.replace("lora:", "anything_at_all:"))) == []
    # required: missing workers is an error; strategy has a default so it is never required
    (missing,) = findings(write, crd, ("d.yaml", INSTANCE.replace("  workers: 4\n", "")))
    assert missing["severity"] == "error" and '"workers" is required' in missing["message"]
    # a value outside the schema's bounds
    (low,) = findings(write, crd, ("e.yaml", INSTANCE.replace("workers: 4", "workers: 0")))
    assert low["line"] == 8 and "minimum of 1" in low["message"]


def test_a_version_the_crd_does_not_serve_is_not_checked_against_it(write):
    old = "apiVersion: ml.example.com/v1alpha1\nkind: FineTune\nmetadata: {name: x}\nspec: {model: m, modle: typo}\n"
    assert findings(write, ("crds/finetune.yaml", CRD), ("old.yaml", old)) == []


def test_a_linted_crd_overrides_the_bundled_schema(write):
    # An in-house RayJob CRD that keeps unknown fields in spec (a fork, or a CRD older than the bundled one):
    # what the cluster will enforce is that CRD, not kuberay v1.7.0's.
    ray_crd = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rayjobs.ray.io}
spec:
  group: ray.io
  names: {kind: RayJob, plural: rayjobs}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""
    job = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec:\n  entrypoint: python train.py\n  rayClusterSpc: {}\n"
    (bundled,) = findings(write, ("job.yaml", job))
    assert "(CRD of ray-project/kuberay v1.7.0)" in bundled["message"] and bundled["line"] == 6
    assert findings(write, ("crds/rayjob.yaml", ray_crd), ("job.yaml", job)) == []


def test_a_crd_in_the_inventory_validates_the_linted_instances(write):
    inventory = write("cluster/crds.yaml", CRD).parent
    manifest = write("finetune.yaml", INSTANCE.replace("  workers: 4\n", "  worker: 4\n"))
    run = run_cli(
        "check", "--select", "schema-invalid", "--format", "json", "--inventory", str(inventory), str(manifest)
    )
    messages = sorted(said(f) for f in run.json()["findings"])
    assert len(messages) == 2, messages
    assert messages[0].startswith('spec: Required value: "workers" is required')
    assert 'unknown field "spec.worker"' in messages[1] and "cluster/crds.yaml" in messages[1]


def test_a_crd_whose_schema_cannot_compile_leaves_its_kind_unchecked(write):
    broken = CRD.replace(
        "model: {type: string}\n              workers", "model: {type: string, pattern: '['}\n              workers"
    )
    assert broken != CRD
    assert (
        findings(write, ("crds/finetune.yaml", broken), ("finetune.yaml", INSTANCE.replace("output:", "outputs:")))
        == []
    )


def test_an_instance_of_a_version_its_crd_does_not_serve_is_refused(write):
    crd = write("crds/finetune.yaml", CRD)
    old = write(
        "old.yaml", "apiVersion: ml.example.com/v1alpha1\nkind: FineTune\nmetadata: {name: x}\nspec: {model: m}\n"
    )
    run = run_cli("check", "--select", "api-version-unavailable", "--format", "json", str(crd), str(old))
    (finding,) = run.json()["findings"]
    assert (finding["line"], finding["column"], finding["severity"]) == (1, 13, "error")
    assert said(finding) == (
        "ml.example.com/v1alpha1 FineTune is not served by its CustomResourceDefinition finetunes.ml.example.com\n"
        "served: ml.example.com/v1\n"
        'kubectl refuses it: no matches for kind "FineTune" in version "ml.example.com/v1alpha1"'
    )
    current = write("new.yaml", INSTANCE)
    assert run_cli("check", "--select", "api-version-unavailable", str(crd), str(current)).exit_code == 0
    # without the CRD nothing says which versions exist
    assert run_cli("check", "--select", "api-version-unavailable", str(old)).exit_code == 0


# An enum of objects, as controller-gen writes one for a struct-typed field with `+kubebuilder:validation:Enum`:
# its values are data, not schemas, and are compared as written (the conversion once rewrote {"type": "x"}
# in them as a schema's type, so a correct instance became a false error).
ENUM_OF_OBJECTS = CRD.replace(
    "              hyperparameters:\n",
    "              precision:\n"
    "                type: object\n"
    "                properties: {type: {type: string}, description: {type: string}}\n"
    "                enum:\n"
    "                - {type: bf16, description: brain float}\n"
    "                - {type: fp8, description: e4m3}\n"
    "              hyperparameters:\n",
)


def test_enum_values_are_data_kept_as_written(write):
    crd = ("crds/finetune.yaml", ENUM_OF_OBJECTS)
    listed = INSTANCE.replace("  workers: 4\n", "  workers: 4\n  precision: {type: bf16, description: brain float}\n")
    assert findings(write, crd, ("ok.yaml", listed)) == []
    unlisted = listed.replace("type: bf16", "type: fp16")
    (wrong,) = findings(write, crd, ("bad.yaml", unlisted))
    assert wrong["line"] == 9 and wrong["severity"] == "error"
