"""Pod templates read from a linted CRD's schema (issue #28): a custom resource gpulint has no table row for
gets its pod templates where its CustomResourceDefinition's schema puts a PodSpec, not only by shape.

Seldon Core's prepackaged servers (its Triton example, seldon-core docs/examples) override a container by name
with its resources alone: the operator sets the image. Found by shape, that template was not seen (no
container has an image); with the CRD its chart installs, the schema says `componentSpecs[].spec` is a PodSpec.
"""

from __future__ import annotations

import textwrap

from conftest import by_rule, lint_text
from support.crds import crd

from gpulint.kube.crd_templates import MAX_SCHEMA_DEPTH, CrdTemplates, SchemaBound, templates_of
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.inputs.sources import Source
from gpulint.lint.world.inventory import load_inventory

# machinelearning.seldon.io_seldondeployments.yaml as controller-gen writes it, cut to the fields read here.
SELDON_CRD = crd(
    "machinelearning.seldon.io",
    "SeldonDeployment",
    """
    type: object
    properties:
      name: {type: string}
      protocol: {type: string}
      predictors:
        type: array
        items:
          type: object
          required: [graph, name]
          properties:
            name: {type: string}
            replicas: {type: integer, format: int32}
            graph:
              type: object
              x-kubernetes-preserve-unknown-fields: true
            componentSpecs:
              type: array
              items:
                type: object
                properties:
                  metadata: {type: object}
                  replicas: {type: integer, format: int32}
                  spec:
                    type: object
                    required: [containers]
                    properties:
                      containers:
                        type: array
                        items:
                          type: object
                          required: [name]
                          properties:
                            name: {type: string}
                            image: {type: string}
                            resources:
                              type: object
                              properties:
                                limits: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
                                requests: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
                      nodeSelector: {type: object, additionalProperties: {type: string}}
            svcOrchSpec:
              type: object
              properties:
                env: {type: array, items: {type: object}}
                resources: {type: object}
""",
    version="v1",
)

# Seldon's Triton example with a GPU: the container named as the graph's model, its resources alone.
SELDON_TRITON = """
apiVersion: machinelearning.seldon.io/v1
kind: SeldonDeployment
metadata:
  name: cifar10
  namespace: seldon
spec:
  name: resnet32
  protocol: v2
  predictors:
  - name: default
    replicas: 1
    componentSpecs:
    - spec:
        containers:
        - name: cifar10
          resources: %s
    graph:
      implementation: TRITON_SERVER
      modelUri: gs://seldon-models/triton/tf_cifar10
      name: cifar10
"""

MISMATCHED = "{requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 1}}"
LIMITED = "{limits: {nvidia.com/gpu: 1}}"


def _with_crd(resource: str) -> str:
    return SELDON_CRD + "---" + resource


def test_a_template_the_crd_names_is_checked_though_no_container_has_an_image():
    text = _with_crd(SELDON_TRITON % MISMATCHED)
    (found,) = by_rule(lint_text(text), "gpu-request-without-limit")
    assert found.message.startswith("container 'cifar10' requests nvidia.com/gpu: 2 but its limit is 1")
    lines = text.lstrip("\n").splitlines()
    assert lines[found.line - 1].lstrip().startswith("resources: {requests")  # in the resource, not the CRD


def test_the_gpus_as_a_limit_are_clean():
    findings = lint_text(_with_crd(SELDON_TRITON % LIMITED))
    assert not by_rule(findings, "gpu-request-without-limit")
    assert not [f for f in findings if f.severity.name == "ERROR"], findings
    assert not [f for f in findings if "read by their shape" in f.message]  # its CRD says where they are


def test_without_the_crd_the_template_is_not_found_by_shape():
    # trap: no image, no CRD: gpulint cannot tell this mapping from any other list of names
    assert not by_rule(lint_text(SELDON_TRITON % MISMATCHED), "gpu-request-without-limit")


def test_a_pod_shape_where_the_schema_keeps_an_opaque_value_is_still_found_by_shape():
    # graph keeps unknown fields: a pod spec with images there is found as before the CRD was read
    resource = (SELDON_TRITON % LIMITED).replace(
        "      name: cifar10\n",
        "      name: cifar10\n      sidecar:\n        containers:\n        - name: proxy\n"
        "          image: envoyproxy/envoy:v1.30\n          resources:\n            requests: {nvidia.com/gpu: 2}\n            limits: {nvidia.com/gpu: 1}\n",
    )
    assert len(by_rule(lint_text(_with_crd(resource)), "gpu-request-without-limit")) == 1


def test_a_pod_shape_in_a_field_the_schema_describes_otherwise_is_no_pod():
    # trap: svcOrchSpec is described (env, resources): the API server prunes a `containers` written there,
    # so no controller ever reads it as a pod (schema-invalid reports the unknown field)
    resource = (SELDON_TRITON % LIMITED).replace(
        "    graph:\n",
        "    svcOrchSpec:\n      containers:\n      - name: orchestrator\n        image: seldonio/engine:1.17\n"
        "        resources:\n          requests: {nvidia.com/gpu: 2}\n          limits: {nvidia.com/gpu: 1}\n    graph:\n",
    )
    findings = lint_text(_with_crd(resource))
    assert not by_rule(findings, "gpu-request-without-limit")
    (unknown,) = by_rule(findings, "schema-invalid")
    assert "containers" in unknown.message and "svcOrchSpec" in unknown.message
    assert by_rule(lint_text(resource), "gpu-request-without-limit")  # by shape alone it was taken as a pod


def test_the_schema_gives_each_pod_spec_its_path_and_role():
    templates = templates_of(_crd_schema())
    assert templates.pod_specs == (("spec", "predictors", "[]", "componentSpecs", "[]", "spec"),)
    assert templates.opaque == (("spec", "predictors", "[]", "graph"),)
    bound = SchemaBound(_yaml(SELDON_TRITON % LIMITED), templates)
    (site,) = pod_spec_sites(bound)
    assert site.path == ("spec", "predictors", 0, "componentSpecs", 0, "spec")
    assert site.template_path == ("spec", "predictors", 0, "componentSpecs", 0)
    assert site.pods is None and "from its CRD" in site.completed_by


def test_a_crd_that_describes_no_spec_is_read_by_shape_under_spec():
    crd = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert templates_of(crd).opaque == (("spec",),) and not templates_of(crd).pod_specs


def test_each_served_version_has_its_own_schema_and_v1beta1_crds_share_one():
    crd = _yaml(SELDON_CRD)
    crd["spec"]["versions"].append({"name": "v1alpha2", "served": True, "schema": {"openAPIV3Schema": {}}})
    crd["spec"]["validation"] = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    found = CrdTemplates([crd])
    assert found.get("machinelearning.seldon.io", "v1", "SeldonDeployment").pod_specs  # type: ignore[union-attr]
    assert found.get("machinelearning.seldon.io", "v1alpha2", "SeldonDeployment").opaque == (("spec",),)  # type: ignore[union-attr]
    assert found.get("machinelearning.seldon.io", "v2", "SeldonDeployment") is None  # a version it does not serve


def test_the_schema_walk_is_bounded_in_depth():
    deep: dict = {"type": "object", "properties": {"containers": {"type": "array", "items": {}}}}
    for _ in range(MAX_SCHEMA_DEPTH + 4):
        deep = {"type": "object", "properties": {"next": deep}}
    assert templates_of({"type": "object", "properties": {"spec": deep}}).pod_specs == ()


def _yaml(text: str) -> dict:
    import yaml

    return yaml.safe_load(textwrap.dedent(text))


def _crd_schema() -> dict:
    return _yaml(SELDON_CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_the_crd_may_come_from_the_inventory():
    # `kubectl get crds -o yaml` beside the nodes: the linted resource's pod templates are read from it
    cluster = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=textwrap.dedent(SELDON_CRD).encode())])
    findings = lint_text(SELDON_TRITON % MISMATCHED, inventory=cluster)
    (found,) = by_rule(findings, "gpu-request-without-limit")
    assert found.message.startswith("container 'cifar10' requests nvidia.com/gpu: 2 but its limit is 1")
    assert not by_rule(lint_text(SELDON_TRITON % LIMITED, inventory=cluster), "gpu-request-without-limit")
