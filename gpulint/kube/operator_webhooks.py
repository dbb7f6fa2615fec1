"""What the operators' own admission webhooks refuse, worded as they word it.

- Kueue (kubernetes-sigs/kueue v0.19.2): ``pkg/controller/jobs/rayjob/rayjob_webhook.go`` validateCreate,
  ``pkg/controller/jobs/raycluster/common.go`` ValidateCreate (a RayJob's cluster) and
  ``raycluster_webhook.go`` validateCreate: a RayJob or RayCluster Kueue manages (it carries the
  queue-name label) must not autoscale unless it is an elastic job (annotation
  ``kueue.x-k8s.io/elastic-job: "true"``), has at most ``jobframework.MaxPodSets`` pod sets (18 in
  v0.19; earlier releases allowed fewer, so more than 18 is refused by every one), names no worker group
  ``head``; a RayJob must delete its cluster after finishing, and must not both give a cluster spec and
  select an existing cluster. The field errors are k8s.io/apimachinery's (``field.Invalid`` ...).
  On a JobSet or LeaderWorkerSet it manages, its pod set groups (``kueue.x-k8s.io/podset-group-name``):
  gpulint/kube/queueing/podset_groups.py.
- JobSet (kubernetes-sigs/jobset v0.12.0): ``pkg/webhooks/jobset_webhook.go`` ValidateCreate: the names
  of the Jobs and pods it generates (``pkg/util/placement`` GenJobName ``<jobset>-<replicatedJob>-<index>``,
  GenPodName ``<job>-<pod index>`` plus a 5-character suffix) must be DNS-1035 labels, dependsOn may
  name only an earlier replicatedJob (and not be set on the first), and the success policy, the
  failure policy's rules and the coordinator must name replicatedJobs that exist; validateFailurePolicy (rule names,
  Job failure reasons), validateCoordinator (its indices) and the network subdomain (a DNS-1035 label).
- The Training Operator (kubeflow/trainer v1.9.4, ``pkg/webhooks/<framework>/*_webhook.go``): a job's name is
  a DNS-1035 label; each replica type is one the framework has (after the defaulting webhook's
  case fix, ``master`` -> ``Master``), has containers with images and one named for the framework
  (``pytorch``, ``tensorflow``, ``xgboost``, ``paddle``, ``jax``); a PyTorchJob's or XGBoostJob's
  Master has 1 replica (unset is defaulted to 1), an XGBoostJob has a Master, a TFJob at most one
  Chief or Master.
- LeaderWorkerSet (kubernetes-sigs/lws v0.10.0): ``pkg/webhooks/leaderworkerset_webhook.go`` generalValidate:
  the name is a DNS-1035 label (it names the headless Service), ``subGroupSize`` divides ``size`` or
  ``size - 1`` (``size - 1`` with LeaderExcluded) and is not larger, and a rolling update may not have
  both ``maxSurge`` and ``maxUnavailable`` at 0; size, replicas, the rolling update's numbers and percents, and the
  subgroup-exclusive-topology annotation only with a subGroupPolicy. The defaults (webhook Default): size 1,
  replicas 1, maxUnavailable 1, maxSurge 0.
- Kueue's ClusterQueue: ``pkg/webhooks/clusterqueue_webhook.go`` validateFlavorQuotas (since v0.8.0): each
  flavor's resources[i] must be coveredResources[i] ("must match the name in coveredResources"), asked only
  once the CRD's own rule passed (``apis/kueue/v1beta1|v1beta2/clusterqueue_types.go`` ResourceGroup, since
  v0.10.0, the API server's: cluster_queue_schema_errors, reported by api-rejected); read at kueue ff69552e
  (v0.20.0-devel).
- The Training Operator's PyTorchJob elastic policy (v1.9.4 ``pytorchjob_webhook.go`` validateSpec): a Worker spec
  with at least one replica, and not both ``elasticPolicy.nProcPerNode`` and ``nprocPerNode``.
- Kueue's ClusterQueue with no cohort and a ``borrowingLimit``: the CRD's rule (``clusterqueue_types.go``, v1beta1
  ``cohort``, v1beta2 ``cohortName``), reported by api-rejected with the resource-group rule.
- Volcano's Queue (v1.15.1 ``pkg/webhooks/admission/queues/validate/validate_queue.go``
  validateResourceQuantityOfQueue): guarantee <= deserved <= capability per resource both name.
- KAITO (kaito-project/kaito v0.12.0, ``api/v1alpha1|v1beta1/workspace_validation.go`` Validate, since v0.4.0):
  a Workspace's name is a DNS-1123 label; the controller names the Workspace's Service after it
  (``pkg/workspace/manifests/manifests.go`` GenerateServiceManifest), which must be a DNS-1035 label.
- Katib (kubeflow/katib v0.19.0, ``pkg/webhook/v1beta1/experiment/validator/validator.go`` ValidateExperiment,
  after the mutating webhook's defaults): the name and the trial counts; the controller names the suggestion's
  Service ``<experiment>-<algorithm>`` (``pkg/controller.v1beta1/util/suggestion.go`` GetSuggestionServiceName).
- The NIM operator (NVIDIA/k8s-nim-operator v3.1.2): its NIMService webhook does not check the name, and the
  standalone controller renders the NIMService's Service with its name (``api/apps/v1alpha1/nimservice_types.go``
  GetServiceParams, ``manifests/service.yaml``), which must be a DNS-1035 label.
- Volcano (volcano-sh/volcano v1.15.1): ``pkg/webhooks/admission/jobs/validate/admit_job.go``
  validateJobCreate: tasks, task names, a task's minAvailable, the job plugins
  (``pkg/controllers/job/plugins/factory.go``) and the MPI plugin's master task
  (``plugins/distributed-framework/mpi/mpi.go``, ``--master``, default ``master``). Its messages are
  joined, each with a leading space and a trailing ``;``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube.commandline import go_flag
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.kserve import KSERVE_CONTAINER, KSERVE_LEGACY_FRAMEWORKS, WORKER_CONTAINER
from gpulint.kube.names import (
    DNS1123_LABEL_MAX,
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    max_len_error,
    qualified_name,
    regex_error,
)
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.trainjob import GROUP as TRAINER_GROUP
from gpulint.kube.trainjob import BoundTrainJob
from gpulint.kube.validation.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    FieldError,
    not_supported,
    too_many,
)

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ELASTIC_JOB = "kueue.x-k8s.io/elastic-job"
MAX_POD_SETS = 18  # jobframework.MaxPodSets in v0.19 (8, then 10, before)
HEAD_GROUP = "head"
# Every plugin name some Volcano release registers (ray and hcclrank are the newest).
VOLCANO_PLUGINS = frozenset({"ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"})
VOLCANO_MPI_MASTER = "master"
# pkg/webhooks/admission/jobs/validate/util.go policyEventMap / policyActionMap: the ones users may write
# (RestartPod and RestartPartition are newer actions: accepted, as some release takes them).
VOLCANO_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
VOLCANO_ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)


@dataclass(frozen=True)
class Refusal:
    """One reason an operator's webhook refuses the object: where, and its words."""

    path: Path
    operator: str
    words: str
    error: FieldError | None = None  # Kueue's: a field.Error, worded as apimachinery words it
    inputs: tuple[Path, ...] = ()  # other fields the refused value is made from (a Job name from metadata.name)
    controller: str = ""  # set when the operator's controller refuses it (no webhook): what it does then
    before: str = ""  # what older releases, which took the object, did with it instead
    since: str = ""  # the release that began refusing it, when releases still run that accept it (a warning)


def refusals(
    data: dict[str, Any], group: str, kind: str, kserve_gpu_types: frozenset[str] = frozenset()
) -> list[Refusal]:
    """``kserve_gpu_types``: the GPU resource types a linted inferenceservice-config adds to KServe's."""
    if group == "ray.io" and kind in KUBERAY_CLUSTER_SPECS:
        own = list(_kuberay_cluster(data, kind))
        if kind == "RayService" or not text(dig(data, "metadata", "labels", QUEUE_LABEL)):
            return own  # Kueue validates what it manages: the label (manageJobsWithoutQueueName aside)
        elastic = text(dig(data, "metadata", "annotations", ELASTIC_JOB)) == "true"
        errors = _kueue_rayjob(data, elastic) if kind == "RayJob" else _kueue_cluster(data, ("spec",), elastic, True)
        return [*own, *(Refusal(error.path, "Kueue", error.message(), error) for error in errors)]
    if group == KSERVE_GROUP and kind == "InferenceService":
        first = next(iter(_kserve_isvc(data, kserve_gpu_types)), None)  # it stops at the first
        if first is None:
            return []
        path, words = first
        since = next((release for end, release in KSERVE_SINCE.items() if words.endswith(end)), "")
        return [Refusal(path, "KServe", words, since=since)]
    if group == KSERVE_GROUP and kind in ("ServingRuntime", "ClusterServingRuntime"):
        problem = next(iter(_kserve_runtime(data, kind, kserve_gpu_types)), None)
        if problem is None:
            return []
        path, words = problem
        since = next((release for end, release in KSERVE_SINCE.items() if words.endswith(end)), "")
        return [Refusal(path, "KServe", words, since=since)]
    if group == "kubeflow.org" and kind == "MPIJob" and text(data.get("apiVersion")) == MPI_V2:
        found = list(_mpi_job(data))
        if not found:
            return []
        words = f"Found validation errors: {_aggregate([error.message() for error in found])}"
        return [Refusal(found[0].path, "The MPI operator", words, controller=MPI_REFUSES)]
    if group == "batch.volcano.sh" and kind == "Job":
        return list(_volcano_job(data))
    if group == "scheduling.volcano.sh" and kind == "Queue":
        return list(_volcano_queue(data))
    if group == "kueue.x-k8s.io" and kind == "ClusterQueue":
        return [Refusal(error.path, "Kueue", error.message(), error) for error in _kueue_cluster_queue(data)]
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        return [*_jobset(data), *_kueue_podset_groups(data)]
    if group == "kubeflow.org" and kind in TRAINING_JOBS:
        return [
            Refusal(error.path, "The Training Operator", error.message(), error) for error in _training_job(data, kind)
        ]
    if group == KAITO_GROUP and kind == "Workspace":
        return list(_kaito_workspace(data))
    if group == "kubeflow.org" and kind == "Experiment":
        return list(_katib_experiment(data))
    if group == NIM_GROUP and kind == "NIMService":
        return list(_nim_service(data))
    if group == TRAINER_GROUP and kind == "TrainJob" and isinstance(data, BoundTrainJob):
        return list(_trainjob_reserved_envs(data))
    if group == "leaderworkerset.x-k8s.io" and kind == "LeaderWorkerSet":
        own = [Refusal(error.path, "LeaderWorkerSet", error.message(), error) for error in _leader_worker_set(data)]
        return [*own, *_kueue_podset_groups(data)]
    return []


# KubeRay (ray-project/kuberay ray-operator, controllers/ray/utils/validation.go, read at v1.7.0): before each
# reconcile the controller validates the object's metadata (ValidateRayClusterMetadata, ValidateRayJobMetadata,
# ValidateRayServiceMetadata, v1.4.0 on: the name a DNS-1035 label of at most 53 characters, 47 for a RayJob or
# RayService whose cluster adds a 6-character suffix), then its cluster spec (ValidateRayClusterSpec, on a
# RayCluster, a RayJob's rayClusterSpec and a RayService's rayClusterConfig): the head group's, then each worker
# group's, resources given both in rayStartParams and in `resources` (v1.5.0 on) or labels in rayStartParams, and a
# worker group's replica bounds negative or crossed (v1.6.0 on; before, maxReplicas workers ran). It stops at the
# first error, records the event Invalid<Kind>Metadata or Invalid<Kind>Spec and creates nothing. The CRD defaults
# minReplicas to 0 and maxReplicas to 2147483647.
KUBERAY_CLUSTER_SPECS: dict[str, Path] = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
}
KUBERAY_NAME_MAX = {"RayCluster": 53, "RayJob": 47, "RayService": 47}  # MaxRayClusterNameLength (- 6)
_KUBERAY_START_RESOURCES = ("num-cpus", "num-gpus", "memory", "resources")


def _kuberay_cluster(data: dict[str, Any], kind: str) -> Iterator[Refusal]:
    """The first error KubeRay's controller finds in the metadata, then in the cluster spec."""
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name:
        words = ""
        if len(name) > KUBERAY_NAME_MAX[kind]:
            words = f"{kind} name should be no more than {KUBERAY_NAME_MAX[kind]} characters"
        elif problems := dns1035_label(name):
            words = f"{kind} name should be a valid DNS1035 label: [{' '.join(problems)}]"
        if words:
            prefix = "" if kind == "RayCluster" else f"The {kind} metadata is invalid: "
            done = f"KubeRay validates the name before it reconciles (event Invalid{kind}Metadata) and creates nothing"
            yield Refusal(("metadata", "name"), "KubeRay", prefix + words, controller=done)
            return
    path = KUBERAY_CLUSTER_SPECS[kind]
    done = f"KubeRay validates the spec before it reconciles (event Invalid{kind}Spec) and creates no pods"
    head = mapping(dig(data, *path, "headGroupSpec"))
    groups = [("Head", (*path, "headGroupSpec"), head)] + [
        (text(mapping(raw).get("groupName")), (*path, "workerGroupSpecs", index), mapping(raw))
        for index, raw in enumerate(sequence(dig(data, *path, "workerGroupSpecs")))
    ]
    for number, (group_name, at, group) in enumerate(groups):
        problem = _kuberay_group(group_name, at, group, worker=number > 0)
        if problem is not None:
            yield replace(problem, controller=done)
            return


def _kuberay_group(name: str, at: Path, group: dict[str, Any], worker: bool) -> Refusal | None:
    """One group's first error, in ValidateRayClusterSpec's order."""
    if worker:
        low, high = integer(group.get("minReplicas")), integer(group.get("maxReplicas"))
        for key, value in (("minReplicas", low), ("maxReplicas", high)):
            if value is not None and value < 0:
                return Refusal((*at, key), "KubeRay", f"worker group {name} has negative {key} {value}")
        if low is not None and high is not None and low > high:
            words = f"worker group {name} has minReplicas {low} greater than maxReplicas {high}"
            return Refusal((*at, "minReplicas"), "KubeRay", words)
    params = mapping(group.get("rayStartParams"))
    if any(text(params.get(key)) for key in _KUBERAY_START_RESOURCES) and mapping(group.get("resources")):
        words = f"resource fields should not be set in both rayStartParams and Resources for {name} group; please use only one"
        return Refusal((*at, "resources"), "KubeRay", words)
    if "labels" in params:
        words = (
            f"rayStartParams['labels'] is not supported for {name} group; please use the top-level Labels field instead"
        )
        return Refusal((*at, "rayStartParams", "labels"), "KubeRay", words)
    return None


# The MPI operator (kubeflow/mpi-operator v0.4.0 to v0.8.0, kubeflow.org/v2beta1): no webhook; the controller
# defaults the MPIJob (pkg/apis/kubeflow/v2beta1/default.go: Launcher replicas 1 and restartPolicy OnFailure, Worker
# replicas 0 and restartPolicy Never, cleanPodPolicy None, slotsPerWorker 1, sshAuthMountPath /root/.ssh,
# mpiImplementation OpenMPI), then validates it (pkg/apis/kubeflow/validation/validation.go ValidateMPIJob) and on an
# error records the event ValidationError "Found validation errors: ..." and does nothing more. The CRD's schema
# has the mpiImplementation enum (the API server's, api-rejected); the rest is the controller's alone.
MPI_V2 = "kubeflow.org/v2beta1"
MPI_REFUSES = "the controller records the event ValidationError and creates no launcher, workers or Services"
# sets.String.List(): sorted. managedBy since v0.6.0 (releases before have no such field: it is dropped).
MPI_RESTART_POLICIES = ("Never", "OnFailure")
MPI_CLEAN_POD_POLICIES = ("All", "None", "Running")
MPI_MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
MPI_RUN_POLICY_COUNTS = ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit")  # ValidateNonnegativeField
NEGATIVE = "must be greater than or equal to 0"  # apimachinery's IsNegativeErrorMsg
_MPI_DEFAULTS = {"Launcher": (1, "OnFailure"), "Worker": (0, "Never")}  # replicas, restartPolicy


def _mpi_job(data: dict[str, Any]) -> Iterator[FieldError]:
    """ValidateMPIJob on the defaulted job, in its order, the checks the CRD's schema does not make."""
    specs = dig(data, "spec", "mpiReplicaSpecs")
    workers = mapping(specs).get("Worker")
    count = integer(workers.get("replicas"), 0) if isinstance(workers, dict) else None
    name = text(dig(data, "metadata", "name"))
    if name:  # validateMPIJobName: the last worker's hostname, <name>-worker-<replicas - 1> (worker-0 at least)
        hostname = f"{name}-worker-{max((count or 0) - 1, 0)}"
        problems = dns1035_label(hostname)
        if problems:
            detail = (
                f'will not able to create pod and service with invalid DNS label "{hostname}": {", ".join(problems)}'
            )
            yield FieldError(("metadata", "name"), INVALID, name, detail)
    if not isinstance(specs, dict):
        return  # absent: the schema requires it (schema-invalid)
    for role in ("Launcher", "Worker"):
        yield from _mpi_replica(specs, role)
    spec = mapping(data.get("spec"))
    slots = integer(spec.get("slotsPerWorker"))
    if slots is not None and slots < 0:
        yield FieldError(("spec", "slotsPerWorker"), INVALID, slots, NEGATIVE)
    yield from _mpi_run_policy(mapping(spec.get("runPolicy")))


def _mpi_replica(specs: dict[str, Any], role: str) -> Iterator[FieldError]:
    """validateLauncherReplicaSpec / validateWorkerReplicaSpec, after the defaults (an omitted Worker is not checked)."""
    at: Path = ("spec", "mpiReplicaSpecs", role)
    keys = frozenset({2})
    spec = specs.get(role)
    if not isinstance(spec, dict):
        if role == "Launcher":
            yield FieldError(at, REQUIRED, detail="must have Launcher replica spec", keys=keys)
        return
    default_replicas, default_policy = _MPI_DEFAULTS[role]
    policy = spec.get("restartPolicy") or default_policy
    if isinstance(policy, str) and policy not in MPI_RESTART_POLICIES:
        yield replace(not_supported((*at, "restartPolicy"), policy, MPI_RESTART_POLICIES), keys=keys)
    containers = dig(spec, "template", "spec", "containers")
    if isinstance(containers, list) and not containers:
        where: Path = (*at, "template", "spec", "containers")
        yield FieldError(where, REQUIRED, detail="must define at least one container", keys=keys)
    replicas = integer(spec.get("replicas"), default_replicas)
    if replicas is None:
        return  # not a number: the schema's
    if role == "Launcher" and replicas != 1:
        yield FieldError((*at, "replicas"), INVALID, replicas, "must be 1", keys=keys)
    if role == "Worker" and replicas <= 0:
        shown: Path = (*at, "replicas")
        place = shown if "replicas" in spec else at  # defaulted to 0: the spec that omits it
        yield FieldError(place, INVALID, replicas, "must be greater than or equal to 1", shown=shown, keys=keys)


def _mpi_run_policy(policy: dict[str, Any]) -> Iterator[FieldError]:
    """validateRunPolicy: cleanPodPolicy (None when unset), the counts not negative, managedBy one of two."""
    at: Path = ("spec", "runPolicy")
    clean = policy.get("cleanPodPolicy")
    if isinstance(clean, str) and clean not in MPI_CLEAN_POD_POLICIES:
        yield not_supported((*at, "cleanPodPolicy"), clean, MPI_CLEAN_POD_POLICIES)
    for key in MPI_RUN_POLICY_COUNTS:
        value = integer(policy.get(key))
        if value is not None and value < 0:
            yield FieldError((*at, key), INVALID, value, NEGATIVE)
    managed = policy.get("managedBy")
    if isinstance(managed, str) and managed not in MPI_MANAGED_BY:
        yield not_supported((*at, "managedBy"), managed, MPI_MANAGED_BY)


# KServe (kserve/kserve v0.20.0, pkg/apis/serving/v1beta1/inference_service_validation.go): the InferenceService
# webhook's validateInferenceService returns its first error, checking in this order: the name
# (validateInferenceServiceName, v0.5 on: the Knative Service and the model's host are named after it), the
# serving.kserve.io/autoscalerClass annotation (validateInferenceServiceAutoscaler: a class no release takes),
# PYTHONPATH in a container (validateBlockedEnvVars, pkg/validation/env_policy.go, v0.18 on), a multi-node predictor
# (validateMultiNodeVariables: one worker container, no parallel sizes in the env, resources only of the GPU types
# KServe knows, storageUri pvc:// or oci://, autoscaler class 'none' (v0.15.2 on; v0.15.0 asked for 'external', so
# only a class that is neither is said), sizes of at least 1), STORAGE_URI in a collocated transformer container
# (validateCollocationStorageURI, v0.12 on), a `name` on the predictor's model or framework container
# (validatePredictor, v0.16 on); then per component: exactly one implementation (validateExactlyOneImplementation,
# the predictor's), ComponentExtensionSpec.Validate (component.go: containerConcurrency, then the replica bounds:
# minReplicas (default 1) and maxReplicas (0: no limit) not negative, minReplicas not above a maxReplicas that is not
# 0) and validateAutoScalingCompExtension (scaleMetric and scaleTarget for the deployment mode and class written).
KSERVE_GROUP = "serving.kserve.io"
KSERVE_AUTOSCALER_CLASS = "serving.kserve.io/autoscalerClass"
KSERVE_DEPLOYMENT_MODE = "serving.kserve.io/deploymentMode"
KSERVE_GPU_TYPES_ANNOTATION = "serving.kserve.io/gpu-resource-types"
KSERVE_AUTOSCALER_CLASSES = ("hpa", "external", "keda", "none")  # every release's: keda v0.15.0 on, none v0.15.1 on
KSERVE_MULTINODE_CLASSES = ("none", "external")
KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")
KSERVE_PARALLEL_ENVS = ("PIPELINE_PARALLEL_SIZE", "TENSOR_PARALLEL_SIZE")  # set from the workerSpec by KServe
KSERVE_MULTINODE_STORAGE = ("pvc", "oci")  # oci since v0.16.0: v0.15 refuses it too, which is not said
KSERVE_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")  # IsvcNameFmt
KSERVE_NAME_ERROR = (
    "a InferenceService name must consist of lower case alphanumeric characters or '-', and must start with "
    'alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
)
KSERVE_BLOCKED_ENVS = ("PYTHONPATH",)  # validation.DefaultBlockedEnvVars
# constants.DefaultGPUResourceTypeList; a cluster adds to it in inferenceservice-config's multiNode
# customGPUResourceTypeList, an InferenceService in its serving.kserve.io/gpu-resource-types annotation (a JSON list).
KSERVE_GPU_TYPES = ("nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu", "habana.ai/gaudi")
KSERVE_BASIC_RESOURCES = frozenset({"cpu", "memory", "storage", "ephemeral-storage"})
KSERVE_UNKNOWN_GPU = (
    "Unknown GPU resource type. Set 'serving.kserve.io/gpu-resource-types' annotation to use custom gpu resource type"
)
KSERVE_TRANSFORMER_CONTAINER = "transformer-container"
KSERVE_RUNTIME_UNKNOWN_GPU = "unknown GPU resource type in a container"
KSERVE_NAMED_PREDICTOR = "the 'name' field is not allowed in standard predictor"
# Refusals recent enough that clusters still run releases that accept them (by the end of KServe's words): said as
# warnings, with the release that began refusing them.
KSERVE_SINCE = {KSERVE_NAMED_PREDICTOR: "v0.16.0", "is not allowed for security reasons": "v0.18.0"}
# PredictorSpec's implementations (GetImplementations) and, for the message, its Go fields but the last
# (ExactlyOneErrorFor names every field of the struct but ComponentExtensionSpec), at v0.20.0.
KSERVE_PREDICTOR_FIELDS = (
    "Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, "
    "StorageUris, StorageContainerName, WorkerSpec, PodSpec"
)
KSERVE_STANDARD_MODES = ("Standard", "RawDeployment")  # the defaulter reads RawDeployment as Standard (v0.19 on)
KSERVE_KNATIVE_MODES = ("Serverless", "Knative")
KNATIVE_HPA_CLASS = "hpa.autoscaling.knative.dev"
KSERVE_HPA_METRICS = ("cpu", "memory")
KSERVE_KPA_METRICS = ("concurrency", "rps")


def _kserve_model_key(predictor: dict[str, Any]) -> str:
    """The predictor field that holds the model container once defaulted ("" when none does)."""
    legacy = [key for key in KSERVE_LEGACY_FRAMEWORKS if isinstance(predictor.get(key), dict)]
    if legacy:
        return legacy[0]
    return "model" if isinstance(predictor.get("model"), dict) else ""


def kserve_config_gpu_types(multi_node: object) -> frozenset[str]:
    """inferenceservice-config's multiNode value (JSON): its customGPUResourceTypeList."""
    try:
        value = json.loads(multi_node) if isinstance(multi_node, str) else None
    except (ValueError, RecursionError):  # a hostile document nests without end
        return frozenset()
    listed = value.get("customGPUResourceTypeList") if isinstance(value, dict) else None
    return frozenset(item for item in listed if isinstance(item, str)) if isinstance(listed, list) else frozenset()


def _kserve_isvc(data: dict[str, Any], cluster_gpu_types: frozenset[str]) -> Iterator[tuple[Path, str]]:
    raw_name = text(dig(data, "metadata", "name"))
    name = json.dumps(raw_name)  # Go's %q, for the names Kubernetes allows
    invalid = f"the InferenceService {name} is invalid"
    if raw_name and not dns1123_subdomain(raw_name) and not KSERVE_NAME.fullmatch(raw_name):
        yield ("metadata", "name"), f'the InferenceService "{raw_name}" is invalid: {KSERVE_NAME_ERROR}'
    annotations = mapping(dig(data, "metadata", "annotations"))
    written = annotations.get(KSERVE_AUTOSCALER_CLASS)
    if isinstance(written, str) and written not in KSERVE_AUTOSCALER_CLASSES:
        yield (
            ("metadata", "annotations", KSERVE_AUTOSCALER_CLASS),
            f"[{written}] is not a supported autoscaler class type",
        )
    for at, variable, container in _kserve_blocked_envs(data):
        yield (
            at,
            f"{invalid}: setting {variable} in container {json.dumps(container)} is not allowed for security reasons",
        )
    predictor = mapping(dig(data, "spec", "predictor"))
    if isinstance(predictor.get("workerSpec"), dict):
        yield from _kserve_multinode(data, invalid, predictor, cluster_gpu_types)
    yield from _kserve_predictor(predictor)
    for component in KSERVE_COMPONENTS:
        spec = dig(data, "spec", component)
        if isinstance(spec, dict):
            yield from _kserve_component(component, spec, annotations)


_KSERVE_CONTAINER_LISTS = (
    ("predictor", "containers"),
    ("predictor", "initContainers"),
    None,  # the predictor's model or framework container
    ("predictor", "workerSpec", "containers"),
    ("predictor", "workerSpec", "initContainers"),
    ("transformer", "containers"),
    ("transformer", "initContainers"),
    ("explainer", "containers"),
    ("explainer", "initContainers"),
)


def _kserve_blocked_envs(data: dict[str, Any]) -> Iterator[tuple[Path, str, str]]:
    """validateBlockedEnvVars: the first blocked variable, in its order of containers."""
    spec = mapping(data.get("spec"))
    for where in _KSERVE_CONTAINER_LISTS:
        if where is None:
            framework = _kserve_model_key(mapping(spec.get("predictor")))
            found: list[tuple[Path, Any]] = (
                [(("predictor", framework), dig(spec, "predictor", framework))] if framework else []
            )
        else:
            found = [((*where, index), item) for index, item in enumerate(sequence(dig(spec, *where)))]
        for at, container in found:
            for position, env in enumerate(map(mapping, sequence(mapping(container).get("env")))):
                if text(env.get("name")) in KSERVE_BLOCKED_ENVS:
                    yield (
                        ("spec", *at, "env", position, "name"),
                        text(env.get("name")),
                        text(mapping(container).get("name")),
                    )
                    return


def _unknown_gpu_types(resources: dict[str, Any], annotations: dict[str, Any], cluster: frozenset[str]) -> list[str]:
    """HasUnknownGpuResourceType: the resources a container names that are neither basic nor a known GPU type."""
    known = {*KSERVE_GPU_TYPES, *cluster}
    custom = annotations.get(KSERVE_GPU_TYPES_ANNOTATION)
    if isinstance(custom, str) and custom:
        try:
            listed = json.loads(custom)
        except (ValueError, RecursionError):
            listed = None
        if not isinstance(listed, list) or not listed or not all(isinstance(item, str) and item for item in listed):
            return []  # KServe's own error ("invalid GPU format"), not said here
        known.update(listed)
    named = [*mapping(resources.get("limits")), *mapping(resources.get("requests"))]
    return [str(name) for name in dict.fromkeys(named) if name not in KSERVE_BASIC_RESOURCES and name not in known]


def _kserve_multinode(
    data: dict[str, Any], invalid: str, predictor: dict[str, Any], cluster: frozenset[str]
) -> Iterator[tuple[Path, str]]:
    """validateMultiNodeVariables in its order."""
    worker: Path = ("spec", "predictor", "workerSpec")
    annotations = mapping(dig(data, "metadata", "annotations"))
    if len(sequence(dig(predictor, "workerSpec", "containers"))) > 1:
        yield (*worker, "containers"), f"{invalid}: setting multiple containers in workerSpec is not allowed"
    key = _kserve_model_key(predictor)  # a framework written is the model once defaulted
    model = predictor.get(key) if key else None
    if isinstance(model, dict):
        env = {text(mapping(item).get("name")): index for index, item in enumerate(sequence(model.get("env")))}
        for variable in KSERVE_PARALLEL_ENVS:
            if variable in env:
                at: Path = ("spec", "predictor", key, "env", env[variable], "name")
                yield at, f"{invalid}: setting {variable} in environment variables is not allowed"
        unknown = _unknown_gpu_types(mapping(model.get("resources")), annotations, cluster)
        if unknown:
            yield ("spec", "predictor", key, "resources"), f"{invalid}: {KSERVE_UNKNOWN_GPU}"
        uri = model.get("storageUri")
        if not isinstance(uri, str):
            yield ("spec", "predictor", key), f"{invalid}: StorageURI must be set for multinode enabled"
        elif (protocol := uri.split("://")[0]) not in KSERVE_MULTINODE_STORAGE:
            at = ("spec", "predictor", key, "storageUri")
            yield at, f"{invalid}: Multinode only supports 'pvc' and 'oci' Storage Protocol({protocol})"
        written = annotations.get(KSERVE_AUTOSCALER_CLASS)
        chosen = text(written)
        if chosen not in KSERVE_MULTINODE_CLASSES:
            place: Path = ("metadata", "annotations", KSERVE_AUTOSCALER_CLASS) if written is not None else worker
            yield place, f"{invalid}: Multinode only supports 'none' autoscaler({chosen})"
    for key, words in (("pipelineParallelSize", "PipelineParallelSize"), ("tensorParallelSize", "TensorParallelSize")):
        size = integer(dig(predictor, "workerSpec", key))
        if size is not None and size < 1:
            yield (*worker, key), f"{invalid}: WorkerSpec.{words} cannot be less than 1({size})"
    for index, container in enumerate(map(mapping, sequence(dig(predictor, "workerSpec", "containers")))):
        if _unknown_gpu_types(mapping(container.get("resources")), annotations, cluster):
            yield (*worker, "containers", index, "resources"), f"{invalid}: {KSERVE_UNKNOWN_GPU}"


def _kserve_runtime(data: dict[str, Any], kind: str, cluster: frozenset[str]) -> Iterator[tuple[Path, str]]:
    """The ServingRuntime webhook (pkg/webhook/admission/servingruntime/servingruntime_webhook.go, v0.15 on): a
    disabled runtime is let be; validateMultiNodeSpec (one worker container, no parallel sizes in the
    kserve-container's env, resources of known GPU types only, in the runtime's spec.annotations' list too, sizes
    of at least 1), then validateBlockedEnvVars. The priorities against the namespace's other runtimes are not
    judged (a repository is not one namespace)."""
    spec = mapping(data.get("spec"))
    if spec.get("disabled") is True:
        return
    name = text(dig(data, "metadata", "name"))
    invalid = f"the {kind} {name} is invalid"
    worker = spec.get("workerSpec")
    if isinstance(worker, dict):
        at: Path = ("spec", "workerSpec")
        annotations = mapping(spec.get("annotations"))
        workers = [mapping(item) for item in sequence(worker.get("containers"))]
        if len(workers) > 1:
            yield (*at, "containers"), f"{invalid}: setting multiple containers in workerSpec is not allowed"
            return
        for index, container in enumerate(map(mapping, sequence(spec.get("containers")))):
            if text(container.get("name")) != KSERVE_CONTAINER:
                continue
            env = {text(mapping(item).get("name")): i for i, item in enumerate(sequence(container.get("env")))}
            for variable in KSERVE_PARALLEL_ENVS:
                if variable in env:
                    place: Path = ("spec", "containers", index, "env", env[variable], "name")
                    yield place, f"{invalid}: setting {variable} in environment variables is not allowed"
                    return
            if _unknown_gpu_types(mapping(container.get("resources")), annotations, cluster):
                yield (
                    ("spec", "containers", index, "resources"),
                    f"{invalid}: {KSERVE_RUNTIME_UNKNOWN_GPU}({KSERVE_CONTAINER})",
                )
                return
        if workers and text(workers[0].get("name")) == WORKER_CONTAINER:
            if _unknown_gpu_types(mapping(workers[0].get("resources")), annotations, cluster):
                where: Path = (*at, "containers", 0, "resources")
                yield where, f"{invalid}: {KSERVE_RUNTIME_UNKNOWN_GPU}({WORKER_CONTAINER})"
                return
        for key, words in (
            ("pipelineParallelSize", "PipelineParallelSize"),
            ("tensorParallelSize", "TensorParallelSize"),
        ):
            size = integer(worker.get(key), 1)
            if size is not None and size < 1:
                yield (*at, key), f"{invalid}: the WorkerSpec.{words} cannot be less than 1({size})"
                return
    for where_list in (("spec", "containers"), ("spec", "workerSpec", "containers")):
        for index, container in enumerate(map(mapping, sequence(dig(data, *where_list)))):
            for position, env in enumerate(map(mapping, sequence(container.get("env")))):
                if text(env.get("name")) in KSERVE_BLOCKED_ENVS:
                    variable, owner = text(env.get("name")), json.dumps(text(container.get("name")))
                    words = f"the {kind} {json.dumps(name)} is invalid: setting {variable} in container {owner} is not allowed for security reasons"
                    yield (*where_list, index, "env", position, "name"), words
                    return


def _kserve_predictor(predictor: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """validateCollocationStorageURI, validatePredictor and the predictor's validateExactlyOneImplementation."""
    at: Path = ("spec", "predictor")
    containers = [mapping(item) for item in sequence(predictor.get("containers"))]
    for index, container in enumerate(containers):
        if text(container.get("name")) == KSERVE_TRANSFORMER_CONTAINER:
            for position, env in enumerate(map(mapping, sequence(container.get("env")))):
                if text(env.get("name")) == "STORAGE_URI":
                    yield (
                        (*at, "containers", index, "env", position),
                        "storage uri should not be specified in transformer container",
                    )
            break
    # What the defaults leave (setPredictorModelDefaults): the first framework written is the model, the other
    # frameworks stay. validatePredictor refuses a name on any of them.
    legacy = [key for key in KSERVE_LEGACY_FRAMEWORKS if isinstance(predictor.get(key), dict)]
    model_key = _kserve_model_key(predictor)
    left = [*legacy[1:], model_key] if model_key else []
    named_key = next((key for key in left if text(mapping(predictor[key]).get("name"))), None)
    if named_key is not None:
        yield (*at, named_key, "name"), KSERVE_NAMED_PREDICTOR
    # GetImplementations: each of them, and a custom predictor for each container named kserve-container (for the
    # containers when no other is). None at all is not said: a predictor key gpulint does not know may be one.
    implementations = len(left)
    named = sum(text(container.get("name")) == KSERVE_CONTAINER for container in containers)
    if implementations + named > 1:
        place: Path = (*at, legacy[1]) if len(legacy) > 1 else (*at, "containers")
        yield place, f"exactly one of [{KSERVE_PREDICTOR_FIELDS}] must be specified in PredictorSpec"


def _kserve_component(component: str, spec: dict[str, Any], annotations: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """ComponentExtensionSpec.Validate, then validateAutoScalingCompExtension for the deployment mode written."""
    where: Path = ("spec", component)
    concurrency = integer(spec.get("containerConcurrency"))
    if concurrency is not None and concurrency < 0:
        yield (*where, "containerConcurrency"), "parallelism cannot be less than 0"
    low, high = integer(spec.get("minReplicas"), 1), integer(spec.get("maxReplicas"), 0)
    if low is not None and high is not None:  # not numbers: the schema's to say
        if low < 0:
            yield (*where, "minReplicas"), "'MinReplicas' cannot be less than 0"
        elif high < 0:
            yield (*where, "maxReplicas"), "'MaxReplicas' cannot be less than 0"
        elif low > high and high != 0:
            yield (
                (*where, "minReplicas" if "minReplicas" in spec else "maxReplicas"),
                "'MinReplicas' cannot be greater than MaxReplicas",
            )
    yield from _kserve_scaling(where, spec, annotations)


def _kserve_scaling(where: Path, spec: dict[str, Any], annotations: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """validateAutoScalingCompExtension, only where the InferenceService writes its deployment mode (without it the
    installation's default decides): Standard with the hpa or keda class, Knative (the Knative HPA class aside)."""
    mode = text(annotations.get(KSERVE_DEPLOYMENT_MODE))
    autoscaler = text(annotations.get(KSERVE_AUTOSCALER_CLASS))
    metric_written = spec.get("scaleMetric")
    metric = text(metric_written)
    target = integer(spec.get("scaleTarget"))
    if mode in KSERVE_STANDARD_MODES and autoscaler == "keda" and metric_written is not None:
        yield (*where, "scaleMetric"), "ScaleMetric is not supported for KEDA"
    hpa = (mode in KSERVE_STANDARD_MODES and autoscaler == "hpa") or (
        mode in KSERVE_KNATIVE_MODES and text(annotations.get("autoscaling.knative.dev/class")) == KNATIVE_HPA_CLASS
    )
    if hpa:
        metric = metric or "cpu"
        if metric not in KSERVE_HPA_METRICS:
            yield (*where, "scaleMetric"), f"[{metric}] is not a supported metric"
        elif target is not None and ((metric == "cpu" and target < 1) or target > 100):  # KServe's precedence
            yield (*where, "scaleTarget"), "the target utilization percentage should be a [1-100] integer"
        elif target is not None and metric == "memory" and target < 1:
            yield (*where, "scaleTarget"), "the target memory should be greater than 1 MiB"
    elif mode in KSERVE_KNATIVE_MODES:
        metric = metric or "concurrency"
        if spec.get("deploymentStrategy") is not None:
            yield (
                (*where, "deploymentStrategy"),
                "customizing deploymentStrategy is only supported for raw deployment mode",
            )
        elif metric not in KSERVE_KPA_METRICS:
            yield (*where, "scaleMetric"), f"[{metric}] is not a supported metric"
        elif metric == "rps" and target is not None and target < 1:
            yield (*where, "scaleTarget"), "the target for rps should be greater than 1"


def _aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several as [a, b]."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _kueue_podset_groups(data: dict[str, Any]) -> list[Refusal]:
    """Kueue's webhook on the pod set groups of a JobSet or LeaderWorkerSet it manages (the queue-name label)."""
    if not text(dig(data, "metadata", "labels", QUEUE_LABEL)):
        return []
    from gpulint.kube.queueing.podset_groups import group_errors

    return [Refusal(error.path, "Kueue", error.message(), error) for error in group_errors(data)]


# The CRD's rule on ClusterQueueSpec (apis/kueue/v1beta1 and v1beta2 clusterqueue_types.go): a ClusterQueue in no
# cohort borrows from no one, so it may set no borrowingLimit. The cohort field per version.
_COHORT_FIELD = {"v1beta1": "cohort", "v1beta2": "cohortName"}
BORROWING_WITHOUT_COHORT = "borrowingLimit must be nil when cohort is empty"


def cluster_queue_schema_errors(data: dict[str, Any]) -> list[FieldError]:
    """The CRD's rules on a ClusterQueue, which the API server enforces (api-rejected reports them): each flavor
    gives as many quotas as the group covers resources; a queue with no cohort sets no borrowingLimit."""
    errors = _borrowing_without_cohort(data)
    for i, group in enumerate(sequence(dig(data, "spec", "resourceGroups"))):
        covered = sequence(mapping(group).get("coveredResources"))
        flavors = sequence(mapping(group).get("flavors"))
        if any(len(sequence(mapping(flavor).get("resources"))) != len(covered) for flavor in flavors):
            errors.append(
                FieldError(
                    ("spec", "resourceGroups", i),
                    INVALID,
                    "object",
                    "flavors must have the same number of resources as the coveredResources",
                )
            )
    return errors


def _borrowing_without_cohort(data: dict[str, Any]) -> list[FieldError]:
    """``!has(self.cohort) ... all(r, !has(r.borrowingLimit))``: the field absent, not empty (``has`` is true for
    ""), as the CEL rule reads it. Reported at the first borrowingLimit, the message naming ``spec`` as the API
    server does for a rule on the spec."""
    cohort = _COHORT_FIELD.get(text(data.get("apiVersion")).rpartition("/")[2])
    spec = data.get("spec")
    if cohort is None or not isinstance(spec, dict) or cohort in spec:
        return []
    for i, group in enumerate(sequence(spec.get("resourceGroups"))):
        for j, flavor in enumerate(sequence(mapping(group).get("flavors"))):
            for k, quota in enumerate(sequence(mapping(flavor).get("resources"))):
                if "borrowingLimit" in mapping(quota):
                    at: Path = ("spec", "resourceGroups", i, "flavors", j, "resources", k, "borrowingLimit")
                    return [FieldError(at, INVALID, "object", BORROWING_WITHOUT_COHORT, shown=("spec",))]
    return []


def _kueue_cluster_queue(data: dict[str, Any]) -> Iterator[FieldError]:
    """validateResourceGroups: each flavor's quotas in the order of the covered resources; a borrowing or lending
    limit only in a cohort (``hasParent``: the cohort's name not empty), a lending limit at most the nominal quota;
    a covered resource or a flavor named once across the groups. The CRD's rules come first (the API server
    validates before any validating webhook): when one refuses, the webhook is never asked."""
    if cluster_queue_schema_errors(data):
        return
    spec = mapping(data.get("spec"))
    cohort = spec.get(_COHORT_FIELD.get(text(data.get("apiVersion")).rpartition("/")[2], "cohort"))
    in_cohort = isinstance(cohort, str) and cohort != ""
    resources: set[str] = set()
    flavors: set[str] = set()
    for i, group in enumerate(sequence(spec.get("resourceGroups"))):
        covered = [text(name) for name in sequence(mapping(group).get("coveredResources"))]
        for j, resource in enumerate(covered):
            if resource in resources:
                yield FieldError(("spec", "resourceGroups", i, "coveredResources", j), DUPLICATE, resource)
            resources.add(resource)
        for j, flavor in enumerate(sequence(mapping(group).get("flavors"))):
            at: Path = ("spec", "resourceGroups", i, "flavors", j)
            for k, quota in enumerate(map(mapping, sequence(mapping(flavor).get("resources")))):
                yield from _flavor_quota(quota, covered[k], (*at, "resources", k), in_cohort)
            name = text(mapping(flavor).get("name"))
            if name in flavors:
                yield FieldError((*at, "name"), DUPLICATE, name)
            flavors.add(name)


LIMIT_WITHOUT_COHORT = "must be nil when cohort is empty"


def _quantity_text(value: Any) -> str:
    try:
        return str(quantity_from_yaml(value))
    except QuantityError:
        return str(value)


def _flavor_quota(quota: dict[str, Any], covered: str, at: Path, in_cohort: bool) -> Iterator[FieldError]:
    name = text(quota.get("name"))
    if name and name != covered:
        yield FieldError((*at, "name"), INVALID, name, "must match the name in coveredResources")
    for limit in ("borrowingLimit", "lendingLimit"):
        if limit in quota and not in_cohort:
            yield FieldError((*at, limit), INVALID, _quantity_text(quota[limit]), LIMIT_WITHOUT_COHORT)
    try:
        lending, nominal = quantity_from_yaml(quota.get("lendingLimit")), quantity_from_yaml(quota.get("nominalQuota"))
    except QuantityError:
        return  # either absent or not a quantity (the schema's)
    if lending.value > nominal.value:
        yield FieldError((*at, "lendingLimit"), INVALID, str(lending), "must be less than or equal to the nominalQuota")


def _kueue_rayjob(data: dict[str, Any], elastic: bool) -> Iterator[FieldError]:
    spec = mapping(data.get("spec"))
    selector = mapping(spec.get("clusterSelector"))
    cluster = spec.get("rayClusterSpec")
    if selector and isinstance(cluster, dict):
        yield FieldError(
            ("spec", "clusterSelector"), INVALID, selector, "a kueue managed job should not use an existing cluster"
        )
        return
    if selector:
        return  # a RayJob on an existing cluster is not Kueue's to admit
    if not isinstance(cluster, dict):
        yield FieldError(
            ("spec",),
            REQUIRED,
            detail="rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector",
            shown=("spec", "rayClusterSpec"),
        )
        return
    if spec.get("shutdownAfterJobFinishes") is not True:
        where: Path = ("spec", "shutdownAfterJobFinishes") if "shutdownAfterJobFinishes" in spec else ("spec",)
        yield FieldError(
            where,
            INVALID,
            False,
            "a kueue managed job should delete the cluster after finishing",
            shown=("spec", "shutdownAfterJobFinishes"),
        )
    yield from _kueue_cluster(cluster, ("spec", "rayClusterSpec"), elastic, False)


def _kueue_cluster(spec_or_data: dict[str, Any], path: Path, elastic: bool, is_cluster: bool) -> Iterator[FieldError]:
    spec = mapping(spec_or_data.get("spec")) if is_cluster else spec_or_data
    if spec.get("enableInTreeAutoscaling") is True and not elastic:
        detail = (
            "a kueue-managed RayCluster can use autoscaling only as an elastic job: enable the "
            f'ElasticJobsViaWorkloadSlices feature gate and set the "{ELASTIC_JOB}": "true" annotation'
            if is_cluster
            else "a kueue managed job should only use autoscaling when workload slicing is enabled"
        )
        yield FieldError((*path, "enableInTreeAutoscaling"), INVALID, True, detail)
    groups = sequence(spec.get("workerGroupSpecs"))
    if len(groups) + 1 > MAX_POD_SETS:
        yield too_many((*path, "workerGroupSpecs"), len(groups) + 1, MAX_POD_SETS)
    for index, group in enumerate(groups):
        if text(mapping(group).get("groupName")) == HEAD_GROUP:
            at = (*path, "workerGroupSpecs", index, "groupName")
            yield FieldError(at, FORBIDDEN, detail=f'"{HEAD_GROUP}" is reserved for the head group')


def _volcano_job(data: dict[str, Any]) -> Iterator[Refusal]:
    spec = mapping(data.get("spec"))
    tasks = [mapping(task) for task in sequence(spec.get("tasks"))]
    if "tasks" in spec and not tasks:
        yield Refusal(("spec", "tasks"), "Volcano", "No task specified in job spec")
        return
    plugins = mapping(spec.get("plugins"))
    if "mpi" in plugins:
        master = go_flag(sequence(plugins["mpi"]), "master") or VOLCANO_MPI_MASTER
        if master not in {text(task.get("name")) for task in tasks}:
            yield Refusal(("spec", "plugins", "mpi"), "Volcano", "The specified mpi master task was not found")
            return
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        name = text(task.get("name"))
        minimum, replicas = integer(task.get("minAvailable")), integer(task.get("replicas"))
        if minimum is not None and replicas is not None and minimum > replicas:
            yield Refusal(
                ("spec", "tasks", index, "minAvailable"),
                "Volcano",
                f"'minAvailable' is greater than 'replicas' in task: {name}, job: {text(dig(data, 'metadata', 'name'))};",
            )
        if name in seen:
            yield Refusal(("spec", "tasks", index, "name"), "Volcano", f"duplicated task name {name};")
            break  # Volcano stops at the first duplicate
        seen.add(name)
    for index, task in enumerate(tasks):
        yield from _volcano_policies(
            sequence(task.get("policies")), ("spec", "tasks", index, "policies"), "spec.tasks.policies"
        )
    yield from _volcano_policies(sequence(spec.get("policies")), ("spec", "policies"), "spec.policies")
    for plugin in plugins:
        if plugin not in VOLCANO_PLUGINS:
            yield Refusal(("spec", "plugins", plugin), "Volcano", f"unable to find job plugin: {plugin};")
    yield from _volcano_names(data, tasks)
    yield from _volcano_partitions(data, tasks)
    yield from _volcano_task_order(tasks)


def _go_list(errors: list[str]) -> str:
    """A Go []string as %v prints it."""
    return "[" + " ".join(errors) + "]"


def _volcano_names(data: dict[str, Any], tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateK8sPodNameLength and validateJobName: the name ``<job>-<task>-<task's index>`` (jobhelpers.MakePodName,
    checked with the task's position, not a replica's) and the Job's name must be qualified names (at most 63
    characters). A name from a generateName is not known here."""
    job = dig(data, "metadata", "name")
    if not isinstance(job, str) or not job:
        return
    for index, task in enumerate(tasks):
        pod = f"{job}-{text(task.get('name'))}-{index}"
        if errors := qualified_name(pod):
            yield Refusal(
                ("spec", "tasks", index, "name"),
                "Volcano",
                f"create pod with name {pod} validate failed {_go_list(errors)};",
                inputs=(("metadata", "name"),),
            )
    if errors := qualified_name(job):
        yield Refusal(("metadata", "name"), "Volcano", f"create job with name {job} validate failed {_go_list(errors)}")


def _volcano_partitions(data: dict[str, Any], tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validatePartitionPolicy (v1.14 and later): partitions and their size positive, the replicas exactly
    totalPartitions x partitionSize, and a task minAvailable, when minPartitions is set, minPartitions x
    partitionSize; the first problem of a task only."""
    job = text(dig(data, "metadata", "name"))
    for index, task in enumerate(tasks):
        policy = task.get("partitionPolicy")
        if not isinstance(policy, dict):
            continue
        name = text(task.get("name"))
        total, size = integer(policy.get("totalPartitions"), 0), integer(policy.get("partitionSize"), 0)
        least, replicas = integer(policy.get("minPartitions"), 0), integer(task.get("replicas"), 0)
        minimum = integer(task.get("minAvailable"))
        if total is None or size is None or least is None or replicas is None:
            continue  # not integers: the schema's
        at: Path = ("spec", "tasks", index, "partitionPolicy")
        problem = ""
        if total <= 0:
            problem = "'TotalPartitions' must be greater than 0"
        elif size <= 0:
            problem = "'PartitionSize' must be greater than 0"
        elif replicas != total * size:
            problem = "'Replicas' are not equal to TotalPartitions*PartitionSize"
        elif minimum is not None and least > 0 and least * size != minimum:
            problem = "'MinAvailable' is not equal to MinPartitions*PartitionSize"
        if problem:
            yield Refusal(at, "Volcano", f"{problem} in task: {name}, job: {job}")


def _volcano_task_order(tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateJobCreate's topoSort (util.go makeGraph): with any task's dependsOn, every task must be reached from
    the tasks that depend on nothing. A cycle, or a dependsOn naming no task (its edge is never released), is not
    a DAG."""
    waiting = [i for i, task in enumerate(tasks) if task.get("dependsOn") is not None]
    if not waiting:
        return
    names = [text(task.get("name")) for task in tasks]
    graph: dict[str, dict[str, None]] = {}  # a set of edges, in order: a dependsOn written twice counts twice
    degree = dict.fromkeys(names, 0)  # in the in-degree only, as in Volcano's map, so it is never released
    for name, task in zip(names, tasks, strict=True):
        for before in map(text, sequence(mapping(task.get("dependsOn")).get("name"))):
            graph.setdefault(before, {})[name] = None
            degree[name] += 1
    ready = [name for name, count in degree.items() if count == 0]
    placed = 0
    while ready:
        placed += 1
        for after in graph.get(ready.pop(), ()):
            degree[after] -= 1
            if degree[after] == 0:
                ready.append(after)
    if placed != len(names):
        yield Refusal(
            ("spec", "tasks", waiting[0], "dependsOn"),
            "Volcano",
            "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);",
        )


def _volcano_queue(data: dict[str, Any]) -> Iterator[Refusal]:
    """validateResourceQuantityOfQueue, guarantee <= deserved <= capability, for a resource both sides name (every
    release since v1.13 refuses those; v1.13-v1.14 word it "deserved should less equal than capability", and only
    v1.15 also wants a deserved for each guaranteed resource, not judged here). Worded as v1.15.1 words it."""
    spec = mapping(data.get("spec"))
    pairs = (
        ("deserved", mapping(spec.get("deserved")), "capability", mapping(spec.get("capability")), ">"),
        ("deserved", mapping(spec.get("deserved")), "guarantee", mapping(dig(spec, "guarantee", "resource")), "<"),
    )
    for field_name, values, other_name, others, refused in pairs:
        for name, written in values.items():
            if name not in others:
                continue  # an unset capability does not restrict; an unset deserved is v1.15's own check
            try:
                amount, other = quantity_from_yaml(written), quantity_from_yaml(others[name])
            except QuantityError:
                continue  # not a quantity: the CRD's schema refuses it (schema-invalid)
            if (amount.value > other.value) if refused == ">" else (amount.value < other.value):
                relation = "<=" if refused == ">" else ">="
                yield Refusal(
                    ("spec", field_name, name),
                    "Volcano",
                    f'requestBody.spec.{field_name}.{name}: Invalid value: "{amount}": '
                    f"{field_name}[{name}]={amount} must be {relation} {other_name}[{name}]={other}",
                )


def _volcano_policies(policies: list[Any], at: Path, shown: str) -> Iterator[Refusal]:
    """validatePolicies: each policy names events or an exit code, events and exit codes once across policies;
    it stops at the first problem, as Volcano does."""
    events: set[str] = set()
    codes: set[int] = set()
    for index, policy in enumerate(map(mapping, policies)):
        where = (*at, index)
        listed = [text(e) for e in sequence(policy.get("events"))] + (
            [text(policy["event"])] if policy.get("event") else []
        )
        code = policy.get("exitCode")
        if listed and code is not None:
            yield Refusal(where, "Volcano", "must not specify event and exitCode simultaneously")
            return
        if not listed and code is None:
            yield Refusal(where, "Volcano", "either event and exitCode should be specified")
            return
        if not listed:
            if code == 0 or code in codes:
                yield Refusal(
                    where, "Volcano", "0 is not a valid error code" if code == 0 else f"duplicate exitCode {code}"
                )
                return
            if isinstance(code, int):
                codes.add(code)
            continue
        for event in dict.fromkeys(listed):
            problem = ""
            if event not in VOLCANO_EVENTS:
                problem = f'{shown}: Invalid value: "{event}": invalid policy event'
            elif text(policy.get("action")) not in VOLCANO_ACTIONS:
                problem = f'{shown}: Invalid value: "{text(policy.get("action"))}": invalid policy action'
            elif event in events:
                problem = f"duplicate event {event}  across different policy"  # Volcano's two spaces
            if problem:
                yield Refusal(where, "Volcano", problem)
                return
            events.add(event)
    if "*" in events and len(events) > 1:
        yield Refusal(at, "Volcano", "if there's * here, no other policy should be here")


JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
POD_SUFFIX = "-abcde"  # the 5 random characters the Job controller appends to a pod's name


def _jobset(data: dict[str, Any]) -> Iterator[Refusal]:
    spec = mapping(data.get("spec"))
    name = text(dig(data, "metadata", "name"))
    jobs = [mapping(job) for job in sequence(spec.get("replicatedJobs"))]
    names: list[str] = []
    for index, job in enumerate(jobs):
        at: Path = ("spec", "replicatedJobs", index)
        job_name = text(job.get("name"))
        if name and job_name:
            yield from _generated_names(name, job, at)
        names.append(job_name)  # as JobSet inserts it before checking dependsOn
        depends = sequence(job.get("dependsOn"))
        if index == 0 and job.get("dependsOn") is not None:
            yield Refusal((*at, "dependsOn"), "JobSet", "DependsOn can't be set for the first ReplicatedJob")
        for position, item in enumerate(map(mapping, depends)):
            other = text(item.get("name"))
            if other not in names:
                yield Refusal(
                    (*at, "dependsOn", position, "name"),
                    "JobSet",
                    f"replicatedJob: {job_name} cannot depend on replicatedJob: {other}",
                )
    known = set(names)
    for position, target in enumerate(sequence(dig(spec, "successPolicy", "targetReplicatedJobs"))):
        if text(target) not in known:
            yield Refusal(
                ("spec", "successPolicy", "targetReplicatedJobs", position),
                "JobSet",
                f"invalid replicatedJob name '{text(target)}' does not appear in .spec.ReplicatedJobs",
            )
    yield from _jobset_failure_rules(spec, known)
    coordinator = mapping(spec.get("coordinator"))
    if isinstance(coordinator.get("replicatedJob"), str):
        yield from _jobset_coordinator(coordinator, jobs)
    subdomain = dig(spec, "network", "subdomain")
    if isinstance(subdomain, str) and subdomain:
        yield from _jobset_subdomain(subdomain)


# pkg/webhooks/jobset_webhook.go validateFailurePolicy (v0.6.0 on, with the rules): a rule's name (the defaulting
# webhook names an unnamed rule failurePolicyRule<index>) of 1 to 128 characters matching ruleNameFmt, named once;
# onJobFailureReasons among the Job conditions' reasons.
JOBSET_RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
JOBSET_RULE_NAME_MAX = 128
JOBSET_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"


def _jobset_failure_rules(spec: dict[str, Any], known: set[str]) -> Iterator[Refusal]:
    at: Path = ("spec", "failurePolicy", "rules")
    named: dict[str, list[int]] = {}
    for rule_index, rule in enumerate(map(mapping, sequence(dig(spec, "failurePolicy", "rules")))):
        name = text(rule.get("name")) or f"failurePolicyRule{rule_index}"
        if len(name) > JOBSET_RULE_NAME_MAX:
            words = (
                f"invalid failure policy rule name of length {len(name)}, the rule name must be at least 1 characters "
                f"long and at most {JOBSET_RULE_NAME_MAX} characters long"
            )
            yield Refusal((*at, rule_index, "name"), "JobSet", words)
        named.setdefault(name, []).append(rule_index)
        if not JOBSET_RULE_NAME.fullmatch(name):
            words = (
                f"invalid failure policy rule name '{name}', a failure policy rule name must start with an alphabetic "
                "character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an "
                "alphanumeric character or '_'"
            )
            yield Refusal((*at, rule_index, "name"), "JobSet", words)
        for position, target in enumerate(sequence(rule.get("targetReplicatedJobs"))):
            if text(target) not in known:
                yield Refusal(
                    (*at, rule_index, "targetReplicatedJobs", position),
                    "JobSet",
                    f"invalid replicatedJob name '{text(target)}' in failure policy does not appear in "
                    ".spec.ReplicatedJobs",
                )
        for position, reason in enumerate(sequence(rule.get("onJobFailureReasons"))):
            if text(reason) not in JOBSET_FAILURE_REASONS:
                words = f"invalid job failure reason '{text(reason)}' in failure policy is not a recognized job failure reason"
                yield Refusal((*at, rule_index, "onJobFailureReasons", position), "JobSet", words)
    for name, indices in named.items():
        if len(indices) > 1:
            shown = "[" + " ".join(map(str, indices)) + "]"  # Go's %v of a []int
            words = f"rule names are not unique, rules with indices {shown} all have the same name '{name}'"
            yield Refusal((*at, indices[1], "name"), "JobSet", words)


def _jobset_coordinator(coordinator: dict[str, Any], jobs: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateCoordinator: the replicatedJob exists, the job index is one of its replicas, its Job is Indexed with
    completions, and the pod index is one of them (the first problem only, as JobSet returns it)."""
    at: Path = ("spec", "coordinator")
    name = text(coordinator.get("replicatedJob"))
    job = next((job for job in jobs if text(job.get("name")) == name), None)
    if job is None:
        yield Refusal((*at, "replicatedJob"), "JobSet", f"coordinator replicatedJob {name} does not exist")
        return
    job_index, pod_index = integer(coordinator.get("jobIndex"), 0), integer(coordinator.get("podIndex"), 0)
    replicas = integer(job.get("replicas"), 1)
    if job_index is None or pod_index is None or replicas is None:
        return
    if job_index < 0 or job_index >= replicas:
        yield Refusal(
            (*at, "jobIndex"), "JobSet", f"coordinator job index {job_index} is invalid for replicatedJob {name}"
        )
        return
    template = mapping(dig(job, "template", "spec"))
    completions = integer(template.get("completions"))
    if not _indexed(template) or completions is None:
        words = "job for coordinator pod must be indexed completion mode, and completions number must be set"
        yield Refusal((*at, "replicatedJob"), "JobSet", words)
        return
    if pod_index < 0 or pod_index >= completions:
        words = f"coordinator pod index {pod_index} is invalid for replicatedJob {name} job index {job_index}"
        yield Refusal((*at, "podIndex"), "JobSet", words)


def _indexed(job_spec: dict[str, Any]) -> bool:
    """Whether a replicatedJob's Job is Indexed once JobSet's defaulting webhook (v0.3 on) set an unset
    completionMode to Indexed."""
    return job_spec.get("completionMode", "Indexed") in ("Indexed", None)


def _jobset_subdomain(subdomain: str) -> Iterator[Refusal]:
    """spec.network.subdomain: a DNS-1123 subdomain and a DNS-1035 label (no dot: it is the headless Service's
    name)."""
    at: Path = ("spec", "network", "subdomain")
    messages = [*dns1123_subdomain(subdomain)]
    for message in dns1035_label(subdomain):
        messages.append(SUBDOMAIN_TOO_LONG if message == max_len_error(DNS1123_LABEL_MAX) else message)
    for message in messages:
        error = FieldError(at, INVALID, subdomain, message)
        yield Refusal(at, "JobSet", error.message(), error)


_JOBSET_NAME: tuple[Path, ...] = (("metadata", "name"),)  # the generated names start with it


def _generated_names(jobset: str, job: dict[str, Any], at: Path) -> Iterator[Refusal]:
    """The longest Job name (the last replica's) and, for an Indexed Job with completions, the longest pod name."""
    replicas = integer(job.get("replicas"), 1)
    if replicas is None or replicas < 1:
        return
    longest_job = f"{jobset}-{text(job.get('name'))}-{replicas - 1}"
    for message in dns1035_label(longest_job):
        message = JOB_NAME_TOO_LONG if message == max_len_error(DNS1123_LABEL_MAX) else message
        error = FieldError((*at, "name"), INVALID, longest_job, message)
        yield Refusal(error.path, "JobSet", error.message(), error, _JOBSET_NAME)
    template = mapping(dig(job, "template", "spec"))
    completions = integer(template.get("completions"))
    if _indexed(template) and completions is not None and completions > 0:
        longest_pod = f"{longest_job}-{completions - 1}{POD_SUFFIX}"
        for message in dns1035_label(longest_pod):
            if message == max_len_error(DNS1123_LABEL_MAX):
                # JobSet names the Job's name as the invalid value, whatever the pod's
                error = FieldError((*at, "name"), INVALID, longest_job, POD_NAME_TOO_LONG)
                yield Refusal(error.path, "JobSet", error.message(), error, _JOBSET_NAME)


SUB_GROUP_SHOWN = ("spec", "leaderWorkerTemplate", "SubGroupPolicy", "subGroupSize")  # as LWS names the field


LWS_MAX_REPLICAS = 1_000_000  # v0.10.0
INT32_MAX = 2**31 - 1
LWS_SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
PERCENT = re.compile(r"[0-9]+%")  # validation.IsValidPercent
PERCENT_ERROR = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%"
)
_ROLLING: Path = ("spec", "rolloutStrategy", "rollingUpdateConfiguration")


def _leader_worker_set(data: dict[str, Any]) -> Iterator[FieldError]:
    """generalValidate in its order, on the CRD's defaults (replicas 1, size 1, maxUnavailable 1, maxSurge 0)."""
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name:
        for message in dns1035_label(name):
            yield FieldError(("metadata", "name"), INVALID, name, message)
    template = mapping(dig(data, "spec", "leaderWorkerTemplate"))
    replicas = integer(dig(data, "spec", "replicas"), 1)
    size = integer(template.get("size"), 1)
    if replicas is not None and replicas < 0:
        yield FieldError(("spec", "replicas"), INVALID, replicas, "replicas must be equal or greater than 0")
    if replicas is not None and replicas > LWS_MAX_REPLICAS:  # v0.10.0 on
        yield FieldError(("spec", "replicas"), INVALID, replicas, "replicas must be equal or less than 1000000")
    if size is not None and size < 1:
        where = ("spec", "leaderWorkerTemplate", "size")
        yield FieldError(where, INVALID, size, "size must be equal or greater than 1")
    if replicas is not None and size is not None and replicas * size > INT32_MAX:
        detail = f"the product of replicas and worker replicas must not exceed {INT32_MAX}"
        yield FieldError(("spec", "replicas"), INVALID, replicas, detail)
    rolling = dig(data, *_ROLLING)
    if isinstance(rolling, dict):
        for key in ("maxUnavailable", "maxSurge"):
            yield from _int_or_percent(rolling.get(key), (*_ROLLING, key))
        partition = integer(rolling.get("partition"))
        if partition is not None and partition < 0:
            yield FieldError((*_ROLLING, "partition"), INVALID, partition, "must be greater than or equal to 0")
    if isinstance(rolling, dict) and replicas:
        unavailable = _scaled(rolling.get("maxUnavailable", 1), replicas, False)
        surge = _scaled(rolling.get("maxSurge", 0), replicas, True)
        if unavailable == 0 and surge == 0:
            at = (*_ROLLING, "maxUnavailable")
            where = at if "maxUnavailable" in rolling else at[:-1]
            value = rolling.get("maxUnavailable", 1)
            yield FieldError(where, INVALID, value, "must not be 0 when `maxSurge` is 0", shown=at)
    if "subGroupPolicy" in template:
        yield from _lws_sub_groups(template, size)
    else:
        annotations = mapping(dig(data, "metadata", "annotations"))
        if LWS_SUBGROUP_EXCLUSIVE in annotations:  # v0.3.0 on
            at = ("metadata", "annotations", LWS_SUBGROUP_EXCLUSIVE)
            detail = "cannot have subgroup-exclusive-topology without subGroupSize set"
            yield FieldError(at, INVALID, text(annotations[LWS_SUBGROUP_EXCLUSIVE]), detail, keys=frozenset({2}))


def _int_or_percent(value: Any, at: Path) -> Iterator[FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent (a value neither int nor string is the schema's)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and value < 0:
        yield FieldError(at, INVALID, value, "must be greater than or equal to 0")
    elif isinstance(value, str) and not PERCENT.fullmatch(value):
        yield FieldError(at, INVALID, value, PERCENT_ERROR)
    elif isinstance(value, str) and (len(value[:-1].lstrip("0")) > 3 or int(value[:-1]) > 100):  # Atoi saturates
        yield FieldError(at, INVALID, value, "must not be greater than 100%")


def _lws_sub_groups(template: dict[str, Any], size: int | None) -> Iterator[FieldError]:
    """validateUpdateSubGroupPolicy."""
    policy = mapping(template.get("subGroupPolicy"))
    sub = integer(policy.get("subGroupSize"))
    if size is None or sub is None:
        return
    at = ("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
    if sub < 1:
        yield FieldError(at, INVALID, sub, "subGroupSize must be equal or greater than 1", shown=SUB_GROUP_SHOWN)
        return  # LWS would divide by it
    if size % sub and (size - 1) % sub:
        detail = "size or size - 1 must be divisible by subGroupSize"
        yield FieldError(at, INVALID, sub, detail, shown=SUB_GROUP_SHOWN)
    if size < sub:
        yield FieldError(at, INVALID, sub, "subGroupSize cannot be larger than size", shown=SUB_GROUP_SHOWN)
    if policy.get("subGroupPolicyType") == "LeaderExcluded" and (size - 1) % sub:
        detail = "size-1 must be divisible by subGroupSize when using LeaderExcluded"
        yield FieldError(at, INVALID, sub, detail, shown=SUB_GROUP_SHOWN)


def _scaled(value: Any, total: int, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent; None when it is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and PERCENT.fullmatch(value) and len(value) <= 19:  # Atoi fails past int64
        scaled = int(value[:-1]) * total
        return -(-scaled // 100) if round_up else scaled // 100
    return None


@dataclass(frozen=True)
class TrainingJob:
    specs: str  # the replica specs field
    container: str  # the container the operator runs the framework in
    roles: tuple[str, ...]  # the replica types, in the operator's case
    master_of_one: bool = False  # Master must have exactly 1 replica
    master_required: bool = False


TRAINING_JOBS = {
    "PyTorchJob": TrainingJob("pytorchReplicaSpecs", "pytorch", ("Master", "Worker"), master_of_one=True),
    "TFJob": TrainingJob("tfReplicaSpecs", "tensorflow", ("PS", "Worker", "Chief", "Master", "Evaluator")),
    "XGBoostJob": TrainingJob(
        "xgbReplicaSpecs", "xgboost", ("Master", "Worker"), master_of_one=True, master_required=True
    ),
    "PaddleJob": TrainingJob("paddleReplicaSpecs", "paddle", ("Master", "Worker")),
    "JAXJob": TrainingJob("jaxReplicaSpecs", "jax", ("Worker",)),
}
_CHECKED_ROLES = frozenset({"PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"})  # TFJob checks no role names


def _training_job(data: dict[str, Any], kind: str) -> Iterator[FieldError]:
    job = TRAINING_JOBS[kind]
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name:
        errors = dns1035_label(name)
        if errors:
            yield FieldError(("metadata", "name"), INVALID, name, f"should match: {','.join(errors)}")
    specs = dig(data, "spec", job.specs)
    if not isinstance(specs, dict):
        return  # absent: the schema requires it (schema-invalid)
    camel = {role.lower(): role for role in job.roles}
    roles = []
    for written, replica in specs.items():
        role = camel.get(str(written).lower(), str(written))  # the defaulting webhook fixes the case first
        roles.append(role)
        at: Path = ("spec", job.specs, written)
        keys = frozenset({2})
        if kind in _CHECKED_ROLES and role not in job.roles:
            yield replace(not_supported(at, role, job.roles), keys=keys)
        containers = dig(replica, "template", "spec", "containers")
        if not isinstance(containers, list) or not containers:
            yield FieldError((*at, "template", "spec", "containers"), REQUIRED, detail="must be specified", keys=keys)
            continue
        named = [mapping(container) for container in containers]
        if not any(text(container.get("name")) == job.container for container in named):
            shown = job.container if kind != "PaddleJob" else f'"{job.container}"'
            yield FieldError(
                (*at, "template", "spec", "containers"),
                REQUIRED,
                detail=f"must have at least one container with name {shown}",
                keys=keys,
            )
        if job.master_of_one and role == "Master" and integer(mapping(replica).get("replicas"), 1) != 1:
            yield FieldError((*at, "replicas"), FORBIDDEN, detail="must be 1", keys=keys)
        elif role != "Master" and kind == "PyTorchJob":
            replicas = integer(mapping(replica).get("replicas"))
            if replicas is not None and replicas < 1:
                yield FieldError((*at, "replicas"), FORBIDDEN, detail="must be at least 1", keys=keys)
    if kind == "PyTorchJob":
        yield from _pytorch_elastic(data, specs)
    if job.master_required and "Master" not in roles:
        at = ("spec", job.specs)
        yield FieldError(at, REQUIRED, detail="must be present", shown=(*at, "Master"), keys=frozenset({2}))
    if kind == "TFJob" and sum(role in ("Chief", "Master") for role in roles) > 1:
        yield FieldError(("spec", job.specs), FORBIDDEN, detail="must not have more than 1 Chief or Master role")


def _pytorch_elastic(data: dict[str, Any], specs: dict[str, Any]) -> Iterator[FieldError]:
    """validateSpec: an elastic PyTorchJob rendezvouses through its workers, so it needs a Worker spec with at
    least one replica; ``elasticPolicy.nProcPerNode`` (deprecated) may not be given beside ``nprocPerNode``.
    The replica types are read as the defaulting webhook leaves them (case fixed)."""
    spec = mapping(data.get("spec"))
    elastic = spec.get("elasticPolicy")
    if not isinstance(elastic, dict):
        return
    workers = [replica for written, replica in specs.items() if str(written).lower() == "worker"]
    at: Path = ("spec", "pytorchReplicaSpecs", "Worker")
    if not workers:
        detail = "must be configured if elastic policy is used"
        yield FieldError(at[:-1], REQUIRED, detail=detail, shown=at)  # found where the Worker would be
    else:
        replicas = integer(mapping(workers[0]).get("replicas"))
        if replicas is not None and replicas < 1:
            detail = "must be at least 1 worker if elastic policy is used"
            yield FieldError((*at, "replicas"), FORBIDDEN, detail=detail)
    if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        yield FieldError(
            ("spec", "elasticPolicy", "nProcPerNode"), FORBIDDEN, detail="must not be used with spec.nprocPerNode"
        )


# Kubeflow Trainer v2 (v2.3.0 pkg/constants/constants.go): the variables its ML policy plugins set in the trainer's
# container, which a TrainJob's spec.trainer.env may not set (torch.go and mpi.go Validate).
RESERVED_TRAINER_ENVS = {
    "torch": frozenset({"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}),
    "mpi": frozenset(
        {
            "OMPI_MCA_orte_default_hostfile",
            "OMPI_MCA_plm_rsh_args",
            "OMPI_MCA_orte_keep_fqdn_hostnames",
            "OMPI_MCA_orte_set_default_slots",
        }
    ),
}


def _trainjob_reserved_envs(data: BoundTrainJob) -> Iterator[Refusal]:
    """The Trainer's TrainJob webhook runs its runtime's ML policy plugins' Validate: with mlPolicy.torch (or
    .mpi), spec.trainer.env must not set the variables the plugin sets ("must not have reserved envs")."""
    policy = mapping(dig(data.runtime, "spec", "mlPolicy"))
    env = sequence(dig(data, "spec", "trainer", "env"))
    names = [text(mapping(item).get("name")) for item in env]
    for source, reserved in RESERVED_TRAINER_ENVS.items():
        if source not in policy:
            continue
        found = [index for index, name in enumerate(names) if name in reserved]
        if found:
            listed = " ".join(sorted({names[index] for index in found}))
            yield Refusal(
                ("spec", "trainer", "env", found[0], "name"),
                "The Trainer",
                f"spec.trainer.env: must not have reserved envs, invalid envs configured: [{listed}]",
            )


def _service_refused(service: str) -> str:
    """The API server's answer to a Service of this name (ValidateObjectMeta with NameIsDNS1035Label), or ""."""
    problems = dns1035_label(service)
    errors = [FieldError(("metadata", "name"), INVALID, service, problem).message() for problem in problems]
    return f'Service "{service}" is invalid: {_aggregate(errors)}' if errors else ""


# KAITO's webhook is knative's: apis.ErrInvalidValue(<IsDNS1123Label's messages>, "name"), denied as
# "validation failed: invalid value: <messages>: name". A name it takes may still start with a digit (a DNS-1123
# label may, a DNS-1035 one may not), and releases before v0.4.0 took any name (kaito#725): the Service the
# controller names after the Workspace is then refused.
KAITO_GROUP = "kaito.sh"
KAITO_SERVICE_FAILS = "the controller's create of the Service fails on each reconcile: the Workspace gets no endpoint"


def _kaito_workspace(data: dict[str, Any]) -> Iterator[Refusal]:
    name = text(dig(data, "metadata", "name"))
    if not name:
        return
    service = _service_refused(name)
    if problems := dns1123_label(name):
        words = f"validation failed: invalid value: {', '.join(problems)}: name"
        before = (
            f"releases before v0.4.0 took it and the Service named after it was refused: {service}" if service else ""
        )
        yield Refusal(("metadata", "name"), "KAITO", words, before=before)
    elif service:
        yield Refusal(("metadata", "name"), "KAITO", service, controller=KAITO_SERVICE_FAILS)


# Katib's name check is regexp MatchString, anchored at the start only: a name that starts like a DNS-1035 label
# passes even with a dot later, and its suggestion's Service (<experiment>-<algorithm>) is then refused.
KATIB_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?")
KATIB_NAME_MAX = 40
KATIB_NAME_WORDS = (
    "name must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
    "with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is "
    "'^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
)
KATIB_PARALLEL_DEFAULT = 3  # experiment_defaults.go setDefaultParallelTrialCount (DefaultTrialParallelCount)
KATIB_SERVICE_FAILS = "the suggestion's Service is never created: the Experiment runs no trials"


def _katib_experiment(data: dict[str, Any]) -> Iterator[Refusal]:
    found = list(_katib_webhook(data))
    yield from (Refusal(error.path, "Katib", error.message(), error) for error in found)
    name = text(dig(data, "metadata", "name"))
    algorithm = text(dig(data, "spec", "algorithm", "algorithmName"))
    if not found and name and algorithm and (words := _service_refused(f"{name}-{algorithm}")):
        yield Refusal(("metadata", "name"), "Katib", words, controller=KATIB_SERVICE_FAILS)


def _katib_webhook(data: dict[str, Any]) -> Iterator[FieldError]:
    name = text(dig(data, "metadata", "name"))
    if name and (not KATIB_NAME.match(name) or len(name) > KATIB_NAME_MAX):
        yield FieldError(("metadata", "name"), INVALID, name, KATIB_NAME_WORDS)
    spec = mapping(data.get("spec"))
    failed, most = integer(spec.get("maxFailedTrialCount")), integer(spec.get("maxTrialCount"))
    parallel = integer(spec.get("parallelTrialCount"), KATIB_PARALLEL_DEFAULT)
    if failed is not None and failed < 0:
        yield FieldError(("spec", "maxFailedTrialCount"), INVALID, failed, "should not be less than 0")
    for key, value in (("maxTrialCount", most), ("parallelTrialCount", parallel)):
        if value is not None and value <= 0:
            yield FieldError(("spec", key), INVALID, value, "must be greater than 0")
    if most is None:
        return
    for key, value in (("maxFailedTrialCount", failed), ("parallelTrialCount", parallel)):
        if value is not None and value > most:
            yield FieldError(("spec", key), INVALID, value, "should be less than or equal to spec.maxTrialCount")


# The NIM operator names the NIMService's Service after it; a model name with a dot (llama-3.1-8b-instruct) is a
# valid NIMService and Deployment name, not a Service one.
NIM_GROUP = "apps.nvidia.com"
NIM_SERVICE_FAILS = "the controller's render of the Service fails on each reconcile: the NIMService never gets ready"


def _nim_service(data: dict[str, Any]) -> Iterator[Refusal]:
    if text(dig(data, "spec", "inferencePlatform")) not in ("", "standalone"):
        return  # on KServe it makes an InferenceService, which KServe's own rules judge
    name = text(dig(data, "metadata", "name"))
    if name and (words := _service_refused(name)):
        yield Refusal(("metadata", "name"), "The NIM operator", words, controller=NIM_SERVICE_FAILS)
