"""Namespaced references resolve in the referrer's own namespace (issue #29 section 4): a ResourceClaimTemplate,
a PodGroup or the GPU operator's device plugin ConfigMap of the same name in another namespace is no match."""

from __future__ import annotations

import textwrap

from conftest import DATA, by_rule, lint_text

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

DRA = str(DATA / "dra")

# The NVIDIA DRA driver's demo (k8s-dra-driver-gpu demo/specs/quickstart/gpu-test1.yaml), as users copy it
# into their own namespace.
DEMO = """
apiVersion: v1
kind: Namespace
metadata: {{name: gpu-test1}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  namespace: {template_namespace}
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
---
apiVersion: v1
kind: Pod
metadata:
  namespace: {pod_namespace}
  name: pod1
  labels: {{app: pod}}
spec:
  containers:
  - name: ctr
    image: ubuntu:22.04
    command: ["bash", "-c"]
    args: ["nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait"]
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: single-gpu
"""

CLAIMS_COMPLETE = {"complete": {"ResourceClaimTemplate": ("*",)}}


def _claims(pod_namespace: str, template_namespace: str, **config) -> list:
    text = DEMO.format(pod_namespace=pod_namespace, template_namespace=template_namespace)
    findings = lint_text(text, "gpu-test1.yaml", Config(**config), load_inventory([DRA]))
    return by_rule(findings, "claim-reference-invalid")


def test_a_claim_template_of_another_namespace_is_no_match_with_a_complete_catalog():
    (finding,) = _claims("default", "gpu-test1", **CLAIMS_COMPLETE)
    assert finding.severity == Severity.ERROR
    assert finding.message == (
        "ResourceClaimTemplate 'single-gpu' is only in namespace gpu-test1, not in the pod's namespace default: "
        "the pod stays Pending until it exists there"
    )
    assert finding.line == 35  # resourceClaimTemplateName


def test_a_claim_template_of_another_namespace_without_a_catalog_is_info():
    (finding,) = _claims("default", "gpu-test1")
    assert finding.severity == Severity.INFO
    assert "is only in namespace gpu-test1, not in the pod's namespace default" in finding.message
    assert any("complete: [ResourceClaimTemplate]" in note for note in finding.notes)


def test_the_claim_template_of_the_pods_namespace_is_clean():
    assert _claims("gpu-test1", "gpu-test1", **CLAIMS_COMPLETE) == []


def test_trap_a_template_without_a_namespace_or_a_pod_without_one_matches():
    # kustomize's namespace: or `kubectl apply -n` puts them in one namespace: no proof either way
    text = DEMO.format(pod_namespace="gpu-test1", template_namespace="gpu-test1").replace(
        "  namespace: gpu-test1\n  name: single-gpu", "  name: single-gpu"
    )
    findings = lint_text(text, "gpu-test1.yaml", Config(**CLAIMS_COMPLETE), load_inventory([DRA]))
    assert by_rule(findings, "claim-reference-invalid") == []
    assert _claims('""', "gpu-test1", **CLAIMS_COMPLETE) == []


def test_trap_a_copy_in_the_pods_namespace_besides_others_is_a_match():
    text = DEMO.format(pod_namespace="default", template_namespace="gpu-test1")
    text += textwrap.dedent("""\
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {namespace: default, name: single-gpu}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly: {deviceClassName: gpu.nvidia.com}
        """)
    findings = lint_text(text, "gpu-test1.yaml", Config(**CLAIMS_COMPLETE), load_inventory([DRA]))
    assert by_rule(findings, "claim-reference-invalid") == []


# Volcano's PodGroup for a plain Deployment (volcano.sh docs: "scheduling.k8s.io/group-name"), the group kept with
# the team's other objects and the Deployment moved to the serving namespace.
VOLCANO_GROUP = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: llm-serving
  namespace: {group_namespace}
spec:
  minMember: 2
  queue: default
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-serving
  namespace: {pod_namespace}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: llm-serving}}
  template:
    metadata:
      labels: {{app: llm-serving}}
      annotations:
        scheduling.k8s.io/group-name: llm-serving
    spec:
      schedulerName: volcano
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def _gang(pod_namespace: str, group_namespace: str, **config) -> list:
    text = VOLCANO_GROUP.format(pod_namespace=pod_namespace, group_namespace=group_namespace)
    return by_rule(lint_text(text, "serving.yaml", Config(**config)), "gang-inconsistent")


def test_a_pod_group_of_another_namespace_is_no_match():
    (finding,) = _gang("serving", "ml-team", complete={"PodGroup": ("*",)})
    assert finding.severity == Severity.ERROR
    assert finding.message.startswith(
        "the pods join Volcano PodGroup 'llm-serving', which is only in namespace ml-team, not in the pods' "
        "namespace serving"
    )
    (unproven,) = _gang("serving", "ml-team")
    assert unproven.severity == Severity.INFO and "complete: [PodGroup]" in unproven.notes[-1]


def test_trap_the_pod_group_of_the_pods_namespace_or_an_unnamespaced_one_is_a_match():
    assert _gang("serving", "serving", complete={"PodGroup": ("*",)}) == []
    text = VOLCANO_GROUP.format(pod_namespace="serving", group_namespace="serving").replace(
        "  namespace: serving\nspec:\n  minMember", "spec:\n  minMember", 1
    )
    assert by_rule(lint_text(text, "serving.yaml", Config(complete={"PodGroup": ("*",)})), "gang-inconsistent") == []


# The GPU operator's time-slicing setup as NVIDIA's guide writes it (gpu-sharing.html: `kubectl create -n
# gpu-operator -f time-slicing-config-all.yaml`), with the ConfigMap's namespace written into the file instead,
# and the operator's Deployment (deployments/gpu-operator/templates/operator.yaml, rendered).
TIME_SLICING = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config-all
  namespace: {config_namespace}
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-operator
  namespace: gpu-operator
spec:
  selector:
    matchLabels: {{app: gpu-operator}}
  template:
    metadata:
      labels: {{app: gpu-operator}}
    spec:
      serviceAccountName: gpu-operator
      containers:
      - name: gpu-operator
        image: nvcr.io/nvidia/gpu-operator:v24.9.0
        command: ["gpu-operator"]
        env:
        - name: OPERATOR_NAMESPACE
          valueFrom:
            fieldRef: {{fieldPath: metadata.namespace}}
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
    config:
      name: time-slicing-config-all
      default: any
"""


def _policy(config_namespace: str, **config) -> list:
    text = TIME_SLICING.format(config_namespace=config_namespace)
    return by_rule(lint_text(text, "gpu-operator.yaml", Config(**config)), "device-plugin-config")


def test_the_device_plugin_configmap_of_another_namespace_than_the_operators_is_no_match():
    (finding,) = _policy("default", complete={"ConfigMap": ("*",)})
    assert finding.severity == Severity.ERROR
    assert finding.message == (
        "devicePlugin.config.name names ConfigMap time-slicing-config-all, which is only in namespace default, not "
        "in the GPU operator's namespace gpu-operator"
    )
    assert "kubectl create -n gpu-operator" in finding.notes[0]
    (unproven,) = _policy("default")
    assert unproven.severity == Severity.INFO


def test_trap_the_operators_namespace_or_an_unknown_operator_namespace():
    assert _policy("gpu-operator", complete={"ConfigMap": ("*",)}) == []
    # no operator Deployment among the files: where it runs is unknown, so any namespace's copy is read
    text = TIME_SLICING.format(config_namespace="default")
    start = text.index("apiVersion: apps/v1")
    text = text[:start] + text[text.index("apiVersion: nvidia.com/v1") :]
    findings = lint_text(text, "gpu-operator.yaml", Config(complete={"ConfigMap": ("*",)}))
    assert by_rule(findings, "device-plugin-config") == []
