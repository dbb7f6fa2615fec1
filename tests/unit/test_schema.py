"""schema-invalid against the generated Kubernetes schemas."""

import json

import pytest
from conftest import REPO, by_rule, lint_text

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity


def test_v1beta1_shape_under_v1_is_reported_as_unknown_fields_with_positions():
    findings = by_rule(
        lint_text("""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: gpu}
        spec:
          devices:
            requests:
            - name: gpu
              deviceClassName: gpu.nvidia.com
    """),
        "schema-invalid",
    )
    (finding,) = findings
    assert finding.severity == Severity.WARNING
    assert (finding.line, finding.column) == (8, 7)
    assert 'unknown field "spec.devices.requests[0].deviceClassName"' in finding.message


def test_wrong_type_is_an_error_at_the_value():
    (finding,) = by_rule(
        lint_text("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          replicas: many
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers: [{name: c, image: i}]
    """),
        "schema-invalid",
    )
    assert finding.severity == Severity.ERROR
    assert (finding.line, finding.column) == (5, 13)
    assert finding.message.startswith("spec.replicas: Invalid value")


def test_missing_required_field():
    (finding,) = by_rule(
        lint_text("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - image: nginx
    """),
        "schema-invalid",
    )
    assert '"name" is required' in finding.message and finding.line == 6


def test_int_or_string_null_is_not_an_error():
    findings = lint_text("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          selector: {matchLabels: {a: b}}
          strategy:
            rollingUpdate: {maxSurge: , maxUnavailable: 25%}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers: [{name: c, image: i}]
    """)
    assert findings == []


def test_kinds_without_schema_are_skipped_silently():
    assert lint_text("apiVersion: example.com/v1\nkind: Whatever\nspec: {anything: [1, 2]}\n") == []


def test_missing_kind_or_api_version():
    (finding,) = lint_text("apiVersion: v1\nmetadata: {name: x}\n")
    assert finding.rule == "schema-invalid" and "no kind" in finding.message
    (finding,) = lint_text("kind: Pod\nmetadata: {name: x}\n")
    assert "no apiVersion" in finding.message and finding.line == 1


def test_documents_that_are_not_objects_are_skipped():
    assert lint_text("replicaCount: 2\nimage: {tag: latest}\n") == []
    assert lint_text("- op: add\n  path: /spec/replicas\n  value: 3\n") == []


@pytest.mark.parametrize("version, expected", [("1.35", 0), ("1.37", 1)])
def test_kubernetes_version_picks_the_schema_set(version, expected):
    # scheduling.k8s.io/v1beta1 Workload exists only from 1.37; on 1.35 it has no schema and is skipped
    text = """
        apiVersion: scheduling.k8s.io/v1beta1
        kind: Workload
        metadata: {name: w}
        spec:
          podGroupTemplates:
          - name: workers
            schedulingPolicy: {gang: {minCount: many}}
    """
    findings = by_rule(lint_text(text, config=Config(kubernetes_version=version)), "schema-invalid")
    assert len(findings) == expected


def test_generated_schemas_cover_the_required_kinds():
    index = json.loads((REPO / "schemas" / "v1.37" / "index.json").read_text())
    for key in (
        "v1/Pod",
        "v1/Node",
        "v1/PodTemplate",
        "apps/v1/Deployment",
        "batch/v1/CronJob",
        "resource.k8s.io/v1/ResourceClaim",
        "resource.k8s.io/v1beta1/ResourceSlice",
        "resource.k8s.io/v1beta2/DeviceClass",
        "scheduling.k8s.io/v1beta1/Workload",
        "scheduling.k8s.io/v1beta1/PodGroup",
    ):
        assert key in index
    for version in ("v1.35", "v1.36"):
        assert (REPO / "schemas" / version / "index.json").is_file()


def test_a_value_nested_past_the_validators_recursion_limit_is_still_checked():
    """Found by the pipeline fuzzer: jsonschema-rs raised "Recursion limit reached" (an internal
    error in schema-invalid) on an unknown field holding a 250-deep value."""
    deep: dict = {"replicas": 0}
    for _ in range(250):
        deep = {"a": deep}
    findings = lint_text(
        json.dumps(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "deployment"},
                "spec": {
                    **deep,
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": {
                        "metadata": {"labels": {"app": "x"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                },
            }
        ),
        path="deep.json",
    )
    assert not [f for f in findings if "internal error" in f.message]
    assert [f.message.split(" (")[0] for f in findings if f.rule == "schema-invalid"] == [
        'unknown field "spec.a" in apps/v1 Deployment'
    ]


# EMR on EKS's and Spark's own examples: spark.kubernetes.driver.podTemplateFile names a Pod with no
# containers; Spark adds the driver's. A held-out blueprint's driver-pod-template.yaml was an error.
SPARK_DRIVER_TEMPLATE = """
apiVersion: v1
kind: Pod
metadata:
  name: xgboost-driver
  namespace: emr-ml-team-a
spec:
  volumes:
  - name: spark-local-dir-1
    hostPath: {path: /local1}
  nodeSelector:
    NodeGroupType: spark-driver
"""


def test_a_pod_template_file_needs_no_containers():
    assert lint_text(SPARK_DRIVER_TEMPLATE, path="examples/driver-pod-template.yaml") == []
    assert lint_text(SPARK_DRIVER_TEMPLATE, path="executor_podtemplate.yml") == []
    (finding,) = lint_text(SPARK_DRIVER_TEMPLATE, path="driver.yaml")  # the trap: a Pod anyone would apply
    assert finding.rule == "schema-invalid" and '"containers" is required' in finding.message


def test_a_null_quantity_is_zero_as_the_api_server_decodes_it():
    """apimachinery's Quantity.UnmarshalJSON reads null as 0 (a held-out Nsight example left
    `nvidia.com/gpu:` empty): no schema error, no gpu-non-integer; a string that is no quantity still is."""
    pod = """
        apiVersion: v1
        kind: Pod
        metadata: {name: fsdp}
        spec:
          containers:
          - name: c
            image: i
            resources:
              requests: {nvidia.com/gpu: %s, vpc.amazonaws.com/efa: 4}
              limits: {nvidia.com/gpu: %s, vpc.amazonaws.com/efa: 4}
    """
    assert lint_text(pod % ("null", "")) == []
    assert {f.rule for f in lint_text(pod % ("lots", "lots"))} == {"gpu-non-integer"}


def test_a_status_the_api_server_resets_is_only_decoded():
    """A PodGroup's or a Deployment's status is dropped on create and on update (their registry strategies'
    PrepareForCreate and PrepareForUpdate; the oracle's gang_validate family found the PodGroup's): a
    condition without its reason and message is no error, a value of the wrong type still is (the JSON
    decoder refuses it). A Node keeps the status it is created with: its conditions are still validated."""
    pod_group = """
        apiVersion: scheduling.k8s.io/v1beta1
        kind: PodGroup
        metadata: {name: workers, namespace: default}
        spec:
          schedulingPolicy: {gang: {minCount: 2}}
        status:
          conditions:
          - {type: PodGroupInitiallyScheduled, status: "True"}
          - {type: DisruptionTarget, status: null}
        """
    assert by_rule(lint_text(pod_group), "schema-invalid") == []  # a null is the zero value to the decoder
    (finding,) = by_rule(lint_text(pod_group.replace('status: "True"', "status: true")), "schema-invalid")
    assert finding.message == 'status.conditions[0].status: Invalid value: true is not of type "string"'
    deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: trainer}
        spec:
          selector: {matchLabels: {app: trainer}}
          template:
            metadata: {labels: {app: trainer}}
            spec:
              containers: [{name: trainer, image: trainer:1.0}]
        status:
          conditions:
          - {status: "True"}
        """
    assert by_rule(lint_text(deployment), "schema-invalid") == []
    node = """
        apiVersion: v1
        kind: Node
        metadata: {name: gpu-node-1}
        status:
          conditions:
          - {status: "True"}
        """
    (finding,) = by_rule(lint_text(node), "schema-invalid")
    assert finding.message == 'status.conditions[0]: Required value: "type" is required'
