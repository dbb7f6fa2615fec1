"""The admission verdict counts every certain refusal a rule words (RuleSpec.refuses): its errors, never its
warnings, hold the object's pod findings back, worded for what is refused (verdicts/refusal.py).

Kubernetes v1.37 pkg/apis/core/validation/validation.go ValidateResourceRequirements (through ValidatePodSpec, which
ValidatePodTemplateSpec runs for a Deployment or Job) refuses an extended resource requested without an equal limit
("Limit must be set for non overcommitable resources") or not a whole number ("must be an integer"): a built-in
workload is refused at its create, a custom resource's pods at theirs. LimitRanger (plugin/pkg/admission/limitranger)
judges pods only: a Deployment is admitted and each pod its ReplicaSet makes is refused.
"""

from __future__ import annotations

from pathlib import Path

from rule_harness import Found, findings_of

from gpulint.lint.verdicts.refusal import HELD_BACK, NOT_JUDGED, POD_REFUSED, PODS_REFUSED, RECONCILE_REFUSED

INVENTORY = [str(Path(__file__).parents[2] / "examples" / "inventory")]


def serious(found: list[Found]) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in found if f.severity in ("error", "warning")]


def held(found: list[Found]) -> list[tuple[str, str]]:
    """Each held-back info: its rule and its first line."""
    return [
        (f.rule, f.message.splitlines()[0]) for f in found if f.severity == "info" and f.message.startswith(NOT_JUDGED)
    ]


# A vLLM server asking two GPUs through requests alone (no limit), without /dev/shm.
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
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "2"]
        resources:
          requests: {nvidia.com/gpu: "2"}
"""

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama-ft
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
            command: ["torchrun", "--nproc_per_node=4", "train.py"]
            resources:
              requests: {nvidia.com/gpu: 4}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
            command: ["torchrun", "--nproc_per_node=4", "train.py"]
            resources:
              requests: {nvidia.com/gpu: 4}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: llama-finetune
  namespace: ml
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      requests: {nvidia.com/gpu: 4}
"""


def test_a_deployment_with_a_gpu_request_and_no_limit_makes_no_pods():
    found = findings_of(None, DEPLOYMENT)
    assert serious(found) == [("gpu-request-without-limit", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Deployment {HELD_BACK}")]
    (info,) = [f for f in found if f.rule == "dev-shm-missing"]
    assert "the API server rejects the Pod (see gpu-request-without-limit)" in info.message
    # clean: with the limit it is admitted, and its pods are judged
    fixed = DEPLOYMENT.replace('requests: {nvidia.com/gpu: "2"}', 'limits: {nvidia.com/gpu: "2"}')
    found = findings_of(None, fixed)
    assert serious(found) == [("dev-shm-missing", "warning")]
    assert held(found) == []


def test_a_custom_resource_without_gpu_limits_makes_pods_that_are_refused():
    found = findings_of(None, PYTORCHJOB)
    assert serious(found) == [("gpu-request-without-limit", "error")] * 2
    assert held(found) == [
        ("gang-missing", f"not judged (1 finding held back): this PyTorchJob {PODS_REFUSED}"),
        ("dev-shm-missing", f"not judged (2 findings held back): this PyTorchJob {PODS_REFUSED}"),
    ]


def test_a_pod_without_a_gpu_limit_is_refused_itself():
    found = findings_of(None, POD)
    assert serious(found) == [("gpu-request-without-limit", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Pod {POD_REFUSED}")]


def test_a_suppressed_or_demoted_refusal_gives_the_pod_findings_back():
    # trap: the user says the object is admitted (a cluster whose API server is patched): its pods are judged
    for config in ({"ignore": ["gpu-request-without-limit"]}, {"severity": {"gpu-request-without-limit": "warning"}}):
        found = findings_of(None, DEPLOYMENT, config=config)
        assert ("dev-shm-missing", "warning") in serious(found), config
        assert held(found) == []
    suppressed = DEPLOYMENT.replace(
        'requests: {nvidia.com/gpu: "2"}',
        'requests: {nvidia.com/gpu: "2"}  # gpulint: disable=gpu-request-without-limit',
    )
    found = findings_of(None, suppressed)
    assert serious(found) == [("dev-shm-missing", "warning")]


# Half a GPU on a product the example inventory's nodes are not: gpu-unschedulable speaks of its pods once admitted.
NOTEBOOK = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notebook-gpu
  namespace: team-a
spec:
  replicas: 1
  selector:
    matchLabels: {app: nb}
  template:
    metadata:
      labels: {app: nb}
    spec:
      containers:
      - name: nb
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {nvidia.com/gpu: 0.5}
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
"""


def test_a_fractional_gpu_holds_back_the_schedulers_verdict():
    found = findings_of(None, NOTEBOOK, inventory=INVENTORY)
    assert serious(found) == [("gpu-non-integer", "error")]
    (info,) = [f for f in found if f.severity == "info"]
    assert info.rule == "gpu-unschedulable"
    assert info.message.startswith(f"not judged (1 finding held back): this Deployment {HELD_BACK}")
    assert 'Invalid value: "0.5": must be an integer (see gpu-non-integer)' in info.message
    assert "held back: error" in info.message
    # clean: one whole GPU is admitted, and the scheduler's verdict speaks
    found = findings_of(None, NOTEBOOK.replace("0.5", "1"), inventory=INVENTORY)
    assert serious(found) == [("gpu-unschedulable", "error")]


LIMIT_RANGE = """\
apiVersion: v1
kind: LimitRange
metadata:
  name: gpu-cap
  namespace: serving
spec:
  limits:
  - type: Container
    max: {nvidia.com/gpu: "1"}
"""


def test_a_limit_range_refuses_the_pods_not_the_deployment(tmp_path: Path):
    (tmp_path / "limitrange.yaml").write_text(LIMIT_RANGE, encoding="utf-8")
    limited = DEPLOYMENT.replace('requests: {nvidia.com/gpu: "2"}', 'limits: {nvidia.com/gpu: "2"}')
    found = findings_of(None, limited, inventory=[str(tmp_path)])
    assert serious(found) == [("limit-range-violation", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Deployment {PODS_REFUSED}")]
    # trap: the LimitRange only in the linted files, the cluster unnamed: an assumption (a warning) holds nothing
    found = findings_of(None, limited + "---\n" + LIMIT_RANGE)
    assert ("limit-range-violation", "warning") in serious(found)
    assert ("dev-shm-missing", "warning") in serious(found)
    assert held(found) == []


# Knative Serving knative-v1.23 pkg/apis/serving/k8s_validation.go: a pod-spec field behind a config-features flag
# that is disabled is refused ("must not set the field(s)").
KNATIVE_SERVICE = """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: llm
  namespace: serving
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      containers:
      - image: vllm/vllm-openai:v0.6.3
        args: ["--tensor-parallel-size", "2"]
        resources:
          limits: {nvidia.com/gpu: 2}
"""

FEATURES = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-features
  namespace: knative-serving
data:
  kubernetes.podspec-nodeselector: %s
"""


def test_a_knative_service_with_a_disallowed_field_makes_no_pods():
    found = findings_of(None, KNATIVE_SERVICE + FEATURES % "disabled")
    assert serious(found) == [("knative-field-disallowed", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Service {HELD_BACK}")]
    # clean: the flag enabled, the Service is admitted
    found = findings_of(None, KNATIVE_SERVICE + FEATURES % "enabled")
    assert serious(found) == [("dev-shm-missing", "warning")]
    assert held(found) == []


SCHEMA = DEPLOYMENT.replace("  replicas: 1", '  replicas: "two"').replace(
    'requests: {nvidia.com/gpu: "2"}', 'limits: {nvidia.com/gpu: "2"}'
)


def test_an_object_the_api_servers_schema_refuses_makes_no_pods():
    found = findings_of(None, SCHEMA)
    assert serious(found) == [("schema-invalid", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Deployment {HELD_BACK}")]


# GKE Warden answers `kubectl apply` of the Deployment itself (rules/autopilot-rejected.yaml): a vLLM server asking
# two GPUs with no GPU type selected, its cluster described as Autopilot in the inventory (tests/rules/
# autopilot-rejected.md has the nodes and the description, from `gcloud container clusters describe`).
AUTOPILOT_CLUSTER = Path(__file__).parents[1] / "rules" / "autopilot-rejected.md"


def _autopilot_inventory(tmp_path: Path, described: bool) -> list[str]:
    text = AUTOPILOT_CLUSTER.read_text(encoding="utf-8")
    opening = text.index("```yaml inventory\n") + len("```yaml inventory\n")
    block = text[opening : text.index("```\n", opening)]
    if not described:  # only the nodes' names (gk3-...) say Autopilot: a warning
        block = block[: block.index("---\n")]
    (tmp_path / "cluster.yaml").write_text(block, encoding="utf-8")
    return [str(tmp_path)]


def test_a_deployment_gke_warden_refuses_makes_no_pods(tmp_path: Path):
    deployment = DEPLOYMENT.replace('requests: {nvidia.com/gpu: "2"}', 'limits: {nvidia.com/gpu: "2"}').replace(
        "namespace: serving", "namespace: llm"
    )
    found = findings_of(None, deployment, inventory=_autopilot_inventory(tmp_path, described=True))
    assert serious(found) == [("autopilot-rejected", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Deployment {HELD_BACK}")]
    # trap: Autopilot only inferred from the nodes' names is a warning, and the pods are judged
    found = findings_of(None, deployment, inventory=_autopilot_inventory(tmp_path, described=False))
    assert ("autopilot-rejected", "warning") in serious(found)
    assert ("dev-shm-missing", "warning") in serious(found)
    assert held(found) == []


# What is refused is the finding's (Finding.refused), set where its rule words it. The Priority admission plugin
# (kubernetes v1.37 plugin/pkg/admission/priority/admission.go admitPod) judges pods only: a Deployment naming a
# PriorityClass the cluster lacks is admitted and each pod its ReplicaSet makes is forbidden.
PRIORITY_CLASSES = """\
apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: batch-low}
  value: 1000
"""

WITH_LIMIT = DEPLOYMENT.replace('requests: {nvidia.com/gpu: "2"}', 'limits: {nvidia.com/gpu: "2"}')


def _inventory(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "cluster.yaml").write_text(text, encoding="utf-8")
    return [str(tmp_path)]


def test_a_missing_priority_class_refuses_the_pods_not_the_deployment(tmp_path: Path):
    inventory = _inventory(tmp_path, PRIORITY_CLASSES)
    named = WITH_LIMIT.replace(
        "    spec:\n      containers:", "    spec:\n      priorityClassName: inference-high\n      containers:"
    )
    found = findings_of(None, named, inventory=inventory)
    assert serious(found) == [("api-rejected", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Deployment {PODS_REFUSED}")]
    pod = POD.replace("spec:\n  containers:", "spec:\n  priorityClassName: inference-high\n  containers:").replace(
        "requests: {nvidia.com/gpu: 4}", "limits: {nvidia.com/gpu: 4}"
    )
    pod = pod.replace(
        "image: nvcr.io/nvidia/pytorch:24.05-py3",
        'image: vllm/vllm-openai:v0.6.3\n    args: ["--tensor-parallel-size", "4"]',
    )
    found = findings_of(None, pod, inventory=inventory)
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this Pod {POD_REFUSED}")]
    # clean: a class the cluster has
    found = findings_of(None, named.replace("inference-high", "batch-low"), inventory=inventory)
    assert serious(found) == [("dev-shm-missing", "warning")]
    # trap: no catalog of PriorityClasses, so the class may exist: nothing refused, the pods judged
    found = findings_of(None, named)
    assert serious(found) == [("dev-shm-missing", "warning")]
    assert held(found) == []


# The StatefulSet controller labels each pod controller-revision-hash=<name>-<hash of up to 10 characters>
# (kubernetes pkg/controller/history/controller_history.go ControllerRevisionName) and a label value holds 63
# characters: a StatefulSet named past 52 is admitted, every pod it makes refused (kubernetes/kubernetes#64023).
STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: NAME
  namespace: serving
spec:
  serviceName: vllm
  replicas: 1
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "2"]
        resources:
          limits: {nvidia.com/gpu: "2"}
"""


def test_a_statefulset_named_past_the_revision_label_makes_pods_that_are_refused():
    name = "vllm-llama-3-70b-instruct-tensor-parallel-two-gpus-ab1"  # 54 characters: no hash fits
    found = findings_of(None, STATEFULSET.replace("NAME", name))
    assert serious(found) == [("api-rejected", "error")]
    assert held(found) == [("dev-shm-missing", f"not judged (1 finding held back): this StatefulSet {PODS_REFUSED}")]
    # trap: at 53 characters a hash below 10^9 fits (a warning), so the pods are judged
    found = findings_of(None, STATEFULSET.replace("NAME", name[:-1]))
    assert serious(found) == [("api-rejected", "warning"), ("dev-shm-missing", "warning")]
    assert held(found) == []
    # clean: a short name
    found = findings_of(None, STATEFULSET.replace("NAME", "vllm-llama"))
    assert serious(found) == [("dev-shm-missing", "warning")]


# KServe v0.15 pkg/controller/v1beta1/inferenceservice/components/predictor.go: a runtime found neither among the
# namespace's ServingRuntimes nor the ClusterServingRuntimes (GetServingRuntime) stops the reconcile: no Deployment,
# no Knative Service, so no pod. Said an error only from a complete catalog of both kinds.
INFERENCE_SERVICE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama3-70b, namespace: kserve-test}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: platform-vllm
      env:
      - {name: CUDA_VISIBLE_DEVICES, value: "0"}
      resources:
        limits: {nvidia.com/gpu: "2"}
"""

SERVING_RUNTIME = """\
---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: platform-vllm, namespace: kserve-test}
spec:
  supportedModelFormats:
  - {name: huggingface, autoSelect: true}
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.8.5
"""


def test_an_inference_service_whose_runtime_is_missing_makes_no_pods():
    complete = {"complete": ["ServingRuntime", "ClusterServingRuntime"]}
    found = findings_of(None, INFERENCE_SERVICE, config=complete)
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == [
        ("gpu-visibility-override", f"not judged (1 finding held back): this InferenceService {RECONCILE_REFUSED}")
    ]
    # clean: the runtime in the namespace, the controller reconciles it and its pods are judged
    found = findings_of(None, INFERENCE_SERVICE + SERVING_RUNTIME, config=complete)
    assert serious(found) == [("dev-shm-missing", "warning"), ("gpu-visibility-override", "warning")]
    assert held(found) == []
    # trap: the namespace's ServingRuntimes not known whole (a warning): the pods are judged
    found = findings_of(None, INFERENCE_SERVICE, config={"complete": ["ClusterServingRuntime"]})
    assert serious(found) == [("operator-rejected", "warning"), ("gpu-visibility-override", "warning")]
    assert held(found) == []


# A ValidatingAdmissionPolicy and a Deny binding the inventory lists refuse the create they match and fail
# (kubernetes v1.37 staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go): the
# RayCluster is never stored, so KubeRay makes no pod. OpenShift AI 2.21's policy (rh-aiservices-bu/fraud-detection#96).
VAP_CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: fraud-detection, labels: {kueue.openshift.io/managed: "true"}}
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicy
  metadata: {name: kueue-validating-admission-policy}
  spec:
    failurePolicy: Fail
    matchConstraints:
      resourceRules:
      - {apiGroups: [ray.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [rayclusters, rayjobs]}
    validations:
    - expression: "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels"
      message: "The label 'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicyBinding
  metadata: {name: kueue-validating-admission-policy-binding}
  spec:
    policyName: kueue-validating-admission-policy
    validationActions: [ACTION]
    matchResources:
      namespaceSelector: {matchLabels: {kueue.openshift.io/managed: "true"}}
"""

RAY_CLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: raycluster-gpu, namespace: fraud-detection}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: ray-head, image: "quay.io/modh/ray:2.35.0-py311-cu121"}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: worker
          image: quay.io/modh/ray:2.35.0-py311-cu121
          env:
          - {name: CUDA_VISIBLE_DEVICES, value: "0"}
          resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_a_deny_bindings_policy_refuses_the_object(tmp_path: Path):
    found = findings_of(None, RAY_CLUSTER, inventory=_inventory(tmp_path, VAP_CLUSTER.replace("ACTION", "Deny")))
    assert serious(found) == [("api-rejected", "error")]
    assert held(found) == [
        ("gpu-visibility-override", f"not judged (1 finding held back): this RayCluster {HELD_BACK}")
    ]
    # trap: a Warn binding admits it with a warning, and its pods are judged
    found = findings_of(None, RAY_CLUSTER, inventory=_inventory(tmp_path, VAP_CLUSTER.replace("ACTION", "Warn")))
    assert serious(found) == [("api-rejected", "warning"), ("gpu-visibility-override", "warning")]
    assert held(found) == []
    # clean: the queue label it asks for
    labelled = RAY_CLUSTER.replace(
        "namespace: fraud-detection}", "namespace: fraud-detection, labels: {kueue.x-k8s.io/queue-name: gpu}}"
    )
    found = findings_of(None, labelled, inventory=_inventory(tmp_path, VAP_CLUSTER.replace("ACTION", "Deny")))
    assert ("api-rejected", "error") not in serious(found)
    assert ("gpu-visibility-override", "warning") in serious(found)
    assert held(found) == []


def test_a_raycluster_kuberays_controller_refuses_is_admitted_and_makes_no_pods():
    # KubeRay v1.4 ray-operator/controllers/ray/utils/validation.go ValidateRayClusterMetadata: the controller, not
    # a webhook, refuses a name past 53 characters (event InvalidRayClusterMetadata) and creates nothing
    named = RAY_CLUSTER.replace("raycluster-gpu, namespace: fraud-detection", "NAME, namespace: ml")
    found = findings_of(None, named.replace("NAME", "raycluster-gpu-llama-3-70b-instruct-fine-tuning-team-a"))
    assert serious(found) == [("operator-rejected", "error")]
    assert held(found) == [
        ("gpu-visibility-override", f"not judged (1 finding held back): this RayCluster {RECONCILE_REFUSED}")
    ]
    # clean: a name within 53 characters
    found = findings_of(None, named.replace("NAME", "raycluster-gpu-llama-3-70b-instruct-fine-tuning-tm-a"))
    assert serious(found) == [("gpu-visibility-override", "warning")]
