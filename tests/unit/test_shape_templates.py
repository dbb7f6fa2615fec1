"""Custom resources gpulint has no table row for (issue #28 §6): their pod templates found by shape.

About one unit in six of a held-out set was an operator's own kind (Argo Rollouts, AIBrix, llmaz,
Kubeflow Notebooks...) and was not checked at all. Their pod templates are now found under `spec` by
their shape, the pod rules that read only what the object says run on them, and the rules that need
the whole pod (what the controller adds) or its count stay silent. The manifests follow each
project's published examples.
"""

from __future__ import annotations

import textwrap

from conftest import by_rule, lint_text, run_cli

from gpulint.kube.workloads import MAX_SHAPE_DEPTH, pod_spec_sites

# Argo Rollouts' canary example, serving a model: a Deployment's template under another kind.
ROLLOUT = """
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: vllm
  namespace: inference
spec:
  replicas: 2
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 10m}
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
        resources:
          requests: {nvidia.com/gpu: %s}
          limits: {nvidia.com/gpu: 4}
"""

# AIBrix's RayClusterFleet: a RayCluster's groups two templates deep.
FLEET = """
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: RayClusterFleet
metadata:
  name: qwen-fleet
spec:
  replicas: 1
  template:
    spec:
      headGroupSpec:
        rayStartParams: {dashboard-host: 0.0.0.0}
        template:
          spec:
            containers:
            - name: ray-head
              image: rayproject/ray:2.10.0
      workerGroupSpecs:
      - groupName: gpu-group
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-worker
              image: rayproject/ray:2.10.0
              resources:
                limits: {nvidia.com/gpu: "%s"}
"""


def test_a_rollouts_template_is_checked_as_a_deployments_would_be():
    findings = lint_text(ROLLOUT % 2)
    (found,) = by_rule(findings, "gpu-request-without-limit")
    assert (found.line, found.column) == (24, 38)
    assert "container 'vllm' requests nvidia.com/gpu: 2 but its limit is 4" in found.message
    assert by_rule(lint_text(ROLLOUT % 4), "gpu-request-without-limit") == []  # the fixed twin


def test_templates_nested_in_a_fleet_are_found_with_their_group_names():
    sites = list(pod_spec_sites(__import__("yaml").safe_load(FLEET % 1)))
    assert [(site.path, site.role, site.pods) for site in sites] == [
        (("spec", "template", "spec", "headGroupSpec", "template", "spec"), "headGroupSpec", None),
        (("spec", "template", "spec", "workerGroupSpecs", 0, "template", "spec"), "gpu-group", None),
    ]
    (found,) = by_rule(lint_text(FLEET % "1.5"), "gpu-non-integer")
    assert found.line == 26 and "must be an integer" in found.message
    assert by_rule(lint_text(FLEET % 1), "gpu-non-integer") == []


def test_rules_that_need_the_whole_pod_stay_silent():
    """The trap: the operator may add /dev/shm, a runtime class, or run any number of pods."""
    findings = lint_text(ROLLOUT % 4)
    for rule in ("dev-shm-missing", "parallelism-mismatch", "gpu-runtime-class", "gpu-unschedulable"):
        assert by_rule(findings, rule) == [], rule


def test_lists_of_names_and_images_elsewhere_are_no_pod():
    """Traps: a CR that lists container names or images for another purpose holds no pod spec."""
    config = textwrap.dedent("""\
        apiVersion: example.com/v1
        kind: ImagePolicy
        metadata: {name: p}
        spec:
          allowed:
            containers: [vllm, triton]
          mirrors:
            containers:
            - name: vllm
              registry: mirror.example.com
        """)
    assert list(pod_spec_sites(__import__("yaml").safe_load(config))) == []
    assert [f.rule for f in lint_text(config)] == []


def test_known_kinds_keep_their_rows():
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
    (site,) = pod_spec_sites(deployment)
    assert site.pods == 3 and not site.completed_by


def test_the_walk_is_bounded_in_depth():
    spec: dict = {"containers": [{"name": "c", "image": "i"}]}
    for _ in range(MAX_SHAPE_DEPTH + 5):
        spec = {"nested": spec}
    deep = {"apiVersion": "example.com/v1", "kind": "Deep", "spec": spec}
    assert list(pod_spec_sites(deep)) == []
    wide = {"apiVersion": "example.com/v1", "kind": "Wide", "spec": {"items": [[1]] * 200_000}}
    assert list(pod_spec_sites(wide)) == []


def test_the_kinds_read_by_shape_are_named_once_in_a_note(tmp_path):
    (tmp_path / "rollout.yaml").write_text(textwrap.dedent(ROLLOUT % 4).lstrip())
    (tmp_path / "fleet.yaml").write_text(textwrap.dedent(FLEET % 1).lstrip())
    result = run_cli("check", str(tmp_path))
    assert result.exit_code == 0, result.stdout
    assert "note: schema-invalid: the pod templates of argoproj.io/v1alpha1 Rollout were read by their shape" in (
        result.stdout
    )
    assert "orchestration.aibrix.ai/v1alpha1 RayClusterFleet were read by their shape" in result.stdout
    assert "info[" not in result.stdout  # a fact about the run, not a finding per object
