"""--kubernetes-version 1.30 through 1.37: each release's schemas, served API versions and feature-gate defaults."""

from __future__ import annotations

import json

import jsonschema_rs
import pytest
from conftest import REPO, by_rule, lint_text, run_cli

from gpulint.lint.config import SUPPORTED_KUBERNETES_VERSIONS, Config
from gpulint.lint.findings import Severity

CLAIM = """
    apiVersion: {api}
    kind: ResourceClaim
    metadata: {{name: gpu, namespace: ml}}
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {{deviceClassName: gpu.nvidia.com}}
"""

# A training pod that asks for its GPU through a claim template (the shape of the NVIDIA DRA driver's
# quickstart); the claim source changed from `source:` (1.30) to resourceClaimTemplateName (1.31).
POD_WITH_CLAIM = """
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer, namespace: ml}
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:25.01-py3
        resources:
          claims: [{name: gpu}]
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
"""


def lint_on(version: str, text: str, **config: object) -> list:
    return lint_text(text, config=Config(kubernetes_version=version, **config))  # type: ignore[arg-type]


# ----------------------------------------------------------------- schemas of every release


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
def test_every_supported_release_has_compilable_schemas_for_the_workload_kinds(version):
    folder = REPO / "schemas" / f"v{version}"
    index = json.loads((folder / "index.json").read_text())
    shared = json.loads((folder / "_definitions.json").read_text())["$defs"]
    for key in ("v1/Pod", "v1/PodTemplate", "v1/Node", "apps/v1/Deployment", "apps/v1/StatefulSet", "batch/v1/Job"):
        assert key in index, (version, key)
    for key, filename in index.items():
        schema = json.loads((folder / filename).read_text())
        validator = jsonschema_rs.validator_for({**schema, "$defs": shared})
        api_version, _, kind = key.rpartition("/")
        assert validator.is_valid({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}) in (
            True,
            False,
        )
    sources = json.loads((REPO / "schemas" / "sources.json").read_text())
    assert f"v{version}" in sources["releases"] and len(sources["sha256"]) == 64


@pytest.mark.parametrize(
    "version, unknown",
    [("1.30", ["spec.resourceClaims[0].resourceClaimTemplateName"]), ("1.31", []), ("1.34", [])],
)
def test_the_pod_claim_source_follows_the_release(version, unknown):
    # 1.30 still had resourceClaims[].source.resourceClaimTemplateName; 1.31 flattened it
    findings = by_rule(lint_on(version, POD_WITH_CLAIM), "schema-invalid")
    assert [f.message.split('"')[1] for f in findings] == unknown
    if unknown:
        assert "(Kubernetes 1.30)" in findings[0].message and (findings[0].line, findings[0].column) == (12, 5)


# ----------------------------------------------------------------- API versions served per release


@pytest.mark.parametrize(
    "api, version, served",
    [
        ("resource.k8s.io/v1", "1.33", "resource.k8s.io/v1beta2"),
        ("resource.k8s.io/v1", "1.34", None),
        ("resource.k8s.io/v1beta2", "1.32", "resource.k8s.io/v1beta1"),
        ("resource.k8s.io/v1beta2", "1.33", None),
        ("resource.k8s.io/v1beta1", "1.31", "resource.k8s.io/v1alpha3"),
        ("resource.k8s.io/v1beta1", "1.32", None),
        ("resource.k8s.io/v1alpha3", "1.30", "resource.k8s.io/v1alpha2"),
        ("resource.k8s.io/v1alpha3", "1.31", None),
        ("resource.k8s.io/v1alpha3", "1.33", None),
        ("resource.k8s.io/v1alpha3", "1.34", "resource.k8s.io/v1"),
    ],
)
def test_dra_api_versions_served_per_release(api, version, served):
    findings = by_rule(lint_on(version, CLAIM.format(api=api)), "api-version-unavailable")
    if served is None:
        assert findings == []
        return
    (finding,) = findings
    assert finding.message == f"{api} ResourceClaim is not served by Kubernetes {version}; use {served}"
    assert finding.notes[0].startswith("served: ") and (finding.line, finding.column) == (1, 13)


def test_a_kind_the_release_does_not_have_at_all_is_one_error():
    device_class = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec: {}\n"
    findings = lint_on("1.30", device_class)
    (finding,) = findings  # not also feature-gate-required for an API that is not there
    assert finding.rule == "api-version-unavailable" and finding.severity == Severity.ERROR
    assert finding.message == (
        "resource.k8s.io/v1 DeviceClass is not served by Kubernetes 1.30, which has no DeviceClass API; "
        "resource.k8s.io/v1 DeviceClass arrives in 1.34"
    )
    assert by_rule(lint_on("1.34", device_class), "api-version-unavailable") == []


@pytest.mark.parametrize("version, expected", [("1.34", 1), ("1.35", 0)])
def test_the_workload_api_arrives_in_1_35(version, expected):
    workload = """
        apiVersion: scheduling.k8s.io/v1alpha1
        kind: Workload
        metadata: {name: llm, namespace: ml}
        spec:
          podGroups:
          - name: workers
            policy: {gang: {minCount: 8}}
    """
    findings = by_rule(lint_on(version, workload), "api-version-unavailable")
    assert len(findings) == expected
    if expected:
        assert "which has no Workload API; scheduling.k8s.io/v1alpha1 Workload arrives in 1.35" in findings[0].message


def test_pod_groups_of_other_schedulers_are_not_kubernetes_apis():
    # Volcano's and scheduler-plugins' PodGroup share the kind, not the group
    volcano = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: 4}\n"
    plugins = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: 4}\n"
    for text in (volcano, plugins):
        assert by_rule(lint_on("1.30", text), "api-version-unavailable") == []


# ----------------------------------------------------------------- feature gates per release


@pytest.mark.parametrize(
    "version, gates, expected",
    [
        ("1.31", None, ("alpha", Severity.INFO)),
        ("1.33", None, ("beta", Severity.INFO)),
        ("1.34", None, None),  # GA, on by default
        ("1.33", {"DynamicResourceAllocation": True}, None),
        ("1.34", {"DynamicResourceAllocation": False}, ("GA", Severity.WARNING)),
    ],
)
def test_dynamic_resource_allocation_is_on_by_default_from_1_34(version, gates, expected):
    findings = by_rule(lint_on(version, POD_WITH_CLAIM, feature_gates=gates), "feature-gate-required")
    if expected is None:
        assert findings == []
        return
    (finding,) = findings
    phase, severity = expected
    assert finding.severity == severity and (finding.line, finding.column) == (11, 3)
    assert finding.message.startswith(
        f"uses pod spec.resourceClaims, which needs the DynamicResourceAllocation feature gate ({phase} in Kubernetes"
    )
    assert any("--runtime-config" in note for note in finding.notes)


def test_a_dra_object_on_a_release_where_dra_is_beta_and_off():
    (finding,) = by_rule(lint_on("1.33", CLAIM.format(api="resource.k8s.io/v1beta2")), "feature-gate-required")
    assert "uses the ResourceClaim API, which needs the DynamicResourceAllocation feature gate (beta" in finding.message
    assert any("resource.k8s.io/v1beta2=true" in note for note in finding.notes)


def test_a_field_of_a_later_release_is_an_unknown_field_not_a_gate():
    pod = """
        apiVersion: v1
        kind: Pod
        metadata: {name: worker-0, namespace: ml}
        spec:
          workloadRef: {name: llm, podGroup: workers}
          containers: [{name: c, image: vllm/vllm-openai:v0.9.0}]
    """
    assert by_rule(lint_on("1.34", pod), "feature-gate-required") == []
    (unknown,) = by_rule(lint_on("1.34", pod), "schema-invalid")
    assert 'unknown field "spec.workloadRef" in v1 Pod (Kubernetes 1.34)' in unknown.message
    (gate,) = by_rule(lint_on("1.35", pod), "feature-gate-required")
    assert "GenericWorkload feature gate (alpha in Kubernetes 1.35)" in gate.message


# ----------------------------------------------------------------- the option


@pytest.mark.parametrize("given", ["1.30", "v1.31.4", "1.34"])
def test_older_releases_are_accepted(given, tmp_path):
    path = tmp_path / "claim.yaml"
    path.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: g}\nspec: {}\n")
    run = run_cli("check", "--kubernetes-version", given, "--format", "json", str(path))
    assert run.exit_code in (0, 1), run.stderr
    rules = [f["rule"] for f in run.json()["findings"]]
    assert rules == ([] if given == "1.34" else ["api-version-unavailable"])


def test_a_release_without_schemas_is_a_usage_error(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n")
    run = run_cli("check", "--kubernetes-version", "1.29", str(path))
    assert run.exit_code == 2
    assert "Kubernetes version '1.29' is not supported (choose one of 1.30, 1.31, 1.32" in run.stderr


def test_an_object_of_an_unserved_version_is_one_finding_not_gate_notes_too():
    # the shape of the dra-example-driver's PodGroup demo, written for 1.36 and linted for 1.37
    group = """
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: PodGroup
        metadata: {name: training-workers, namespace: default}
        spec:
          schedulingPolicy: {gang: {minCount: 2}}
          resourceClaims:
          - name: shared-gpu
            resourceClaimTemplateName: gpu-template
    """
    findings = lint_on("1.37", group)
    assert [f.rule for f in findings if f.rule in ("api-version-unavailable", "feature-gate-required")] == [
        "api-version-unavailable"
    ]
    assert {f.rule for f in lint_on("1.36", group)} >= {"feature-gate-required"}
