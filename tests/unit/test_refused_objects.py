"""An object its operator or the API server refuses makes no pods (verdicts/refusal.py): the rules about its pods
hold their findings back beside the reported refusal, one info per rule; a warning-only refusal, a suppressed one
or one whose rule is not run holds nothing back; `explain` says the object is not scheduled.

Every run is the whole rule set over one file, as `gpulint check` runs it (rule_harness), with the shipped example
inventory where a rule needs nodes.
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli
from rule_harness import Found, findings_of

from gpulint.lint.verdicts.refusal import NOT_JUDGED, NOT_SCHEDULED

INVENTORY = [str(Path(__file__).parents[2] / "examples" / "inventory")]
HELDOUT = Path(__file__).parents[1] / "heldout14" / "pytorchop55-two-master-replicas"


def serious(found: list[Found]) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in found if f.severity in ("error", "warning")]


def held(found: list[Found]) -> list[str]:
    return [f.rule for f in found if f.severity == "info" and f.message.startswith(NOT_JUDGED)]


# A vLLM server whose template label value the API server refuses ('+' is not allowed), asking 16 GPUs with
# --tensor-parallel-size 4 and no /dev/shm: dev-shm-missing, parallelism-mismatch and gpu-unschedulable speak of
# its pods once it is admitted.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-llama
  namespace: serving
spec:
  replicas: 1
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels:
        app: vllm
        app.kubernetes.io/version: "0.6.3+cu121"
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
        resources:
          limits: {nvidia.com/gpu: "16"}
"""

# A RayJob queued in Kueue without shutdownAfterJobFinishes: Kueue's RayJob webhook refuses it (kueue v0.19.2
# pkg/controller/jobs/rayjob/rayjob_webhook.go); its Ray head runs a GPU image without a GPU.
QUEUED_RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: lora-finetune
  namespace: ml-train
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  entrypoint: python /app/finetune.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray-ml:2.35.0-py310-gpu
    workerGroupSpecs:
    - groupName: gpu-workers
      replicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray-ml:2.35.0-py310-gpu
            resources:
              limits: {nvidia.com/gpu: "4"}
"""

RAY_CLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: lora-finetune
  namespace: ml-train
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray-ml:2.35.0-py310-gpu
  workerGroupSpecs:
  - groupName: gpu-workers
    replicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray-ml:2.35.0-py310-gpu
          resources:
            limits: {nvidia.com/gpu: "4"}
"""

KUEUE_WITHOUT_RAY = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    integrations:
      frameworks: [batch/job]
"""


def test_a_pytorchjob_with_two_masters_holds_gang_missing_back():
    broken = findings_of(None, (HELDOUT / "broken.yaml").read_text(encoding="utf-8"))
    assert serious(broken) == [("operator-rejected", "error")]
    (info,) = [f for f in broken if f.rule == "gang-missing"]
    assert info.severity == "info"
    # the info names the refusal and keeps the held finding's words
    assert "refused by the Training Operator's webhook: spec.pytorchReplicaSpecs[Master].replicas" in info.message
    assert "held back: warning 8:1: PyTorchJob starts 2 GPU pods" in info.message
    # the fixed twin is admitted: gang-missing judges its two pods
    fixed = findings_of(None, (HELDOUT / "fixed.yaml").read_text(encoding="utf-8"))
    assert serious(fixed) == [("gang-missing", "warning")]
    assert held(fixed) == []


def test_a_rayjob_name_over_47_makes_no_pods():
    name = "llama3-70b-lora-finetune-rayjob-nightly-eval-0001"  # 49 characters: KubeRay's controller refuses it
    text = (
        QUEUED_RAYJOB.replace("name: lora-finetune", f"name: {name}")
        .replace("  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n", "")
        .replace("  entrypoint:", "  shutdownAfterJobFinishes: true\n  entrypoint:")
    )
    found = findings_of(None, text, inventory=INVENTORY)
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == ["gpu-visibility-override"]
    # the same RayJob under 47 characters is admitted, and its pods judged
    found = findings_of(None, text.replace(name, "llama3-lora-nightly"), inventory=INVENTORY)
    assert ("gpu-visibility-override", "warning") in serious(found)
    assert held(found) == []


def test_a_deployment_the_api_server_refuses_makes_no_pods():
    found = findings_of(None, DEPLOYMENT, inventory=INVENTORY)
    assert serious(found) == [("api-rejected", "error")]
    assert sorted(held(found)) == ["dev-shm-missing", "gpu-unschedulable", "parallelism-mismatch"]
    admitted = findings_of(None, DEPLOYMENT.replace("+cu121", "-cu121"), inventory=INVENTORY)
    assert sorted(serious(admitted)) == [
        ("dev-shm-missing", "warning"),
        ("gpu-unschedulable", "error"),
        ("parallelism-mismatch", "warning"),
    ]


def test_a_job_in_a_shape_kueue_refuses_makes_no_pods_unless_kueue_leaves_its_kind_alone():
    found = findings_of(None, QUEUED_RAYJOB, inventory=INVENTORY)
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == ["gpu-visibility-override"]
    # trap: a linted Kueue Configuration whose integrations leave RayJob out registers no webhook for it
    found = findings_of(None, QUEUED_RAYJOB + KUEUE_WITHOUT_RAY, inventory=INVENTORY)
    assert ("gpu-visibility-override", "warning") in serious(found)
    assert "operator-rejected" not in [rule for rule, _ in serious(found)]
    assert held(found) == []


def test_a_refusal_of_some_releases_or_an_opt_in_webhook_holds_nothing_back():
    # trap: KubeRay's second worker group of the same name is refused only by its opt-in webhook (a warning):
    # without it the cluster is created and its pods run
    cluster = RAY_CLUSTER + RAY_CLUSTER[RAY_CLUSTER.index("  - groupName: gpu-workers") :]
    found = findings_of(None, cluster, inventory=INVENTORY)
    assert ("operator-rejected", "warning") in serious(found), found
    assert ("gpu-visibility-override", "warning") in serious(found)
    assert held(found) == []


def test_a_suppressed_or_unrun_refusal_gives_the_pod_findings_back():
    broken = (HELDOUT / "broken.yaml").read_text(encoding="utf-8")
    # the user says the operator admits it (a patched release, no webhook installed): its pods are judged
    suppressed = broken.replace("      replicas: 2", "      replicas: 2  # gpulint: disable=operator-rejected")
    assert serious(findings_of(None, suppressed)) == [("gang-missing", "warning")]
    assert serious(findings_of(None, broken, config={"ignore": ["operator-rejected"]})) == [("gang-missing", "warning")]
    # a rule about pods suppressed on its own stays suppressed: nothing is held back, nothing said
    quiet = "# gpulint: disable-file=gang-missing\n" + broken
    found = findings_of(None, quiet)
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == []


def test_explain_says_the_refused_object_is_not_scheduled(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT, encoding="utf-8")
    result = run_cli("explain", str(path), "--inventory", INVENTORY[0])
    assert result.exit_code in (0, 1), result.stderr
    assert "Admission (the object's create): FAIL" in result.stdout
    assert 'refused by the API server: spec.template.metadata.labels: Invalid value: "0.6.3+cu121"' in result.stdout
    assert f"{NOT_SCHEDULED}: refused by the API server" in result.stdout
    # admitted, it is explained as the scheduler sees it
    path.write_text(DEPLOYMENT.replace("+cu121", "-cu121"), encoding="utf-8")
    result = run_cli("explain", str(path), "--inventory", INVENTORY[0])
    assert NOT_SCHEDULED not in result.stdout
    assert "Admission (the object's create)" not in result.stdout


# Knative's webhook refuses autoscaling annotations on a Service's own metadata (knative/serving knative-v1.23
# pkg/apis/serving/metadata_validation.go ValidateHasNoAutoscalingAnnotation: they belong on the revision template).
KNATIVE_SERVICE = """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: llm-serve
  namespace: serving
  annotations:
    autoscaling.knative.dev/min-scale: "1"
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"]
        resources:
          limits: {nvidia.com/gpu: "2"}
"""


def test_a_knative_service_its_webhook_refuses_makes_no_pods():
    found = findings_of(None, KNATIVE_SERVICE)
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == ["dev-shm-missing"]
    # trap: the annotation where Knative reads it, on the revision template, is admitted
    moved = KNATIVE_SERVICE.replace(
        '  annotations:\n    autoscaling.knative.dev/min-scale: "1"\nspec:\n  template:\n',
        'spec:\n  template:\n    metadata:\n      annotations:\n        autoscaling.knative.dev/min-scale: "1"\n',
    )
    found = findings_of(None, moved)
    assert serious(found) == [("dev-shm-missing", "warning")]
    assert held(found) == []
