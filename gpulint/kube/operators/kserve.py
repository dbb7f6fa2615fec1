"""KServe's InferenceService and ServingRuntime webhooks.

KServe (kserve/kserve v0.20.0, pkg/apis/serving/v1beta1/inference_service_validation.go): the InferenceService
webhook's validateInferenceService returns its first error, checking in this order: the name
(validateInferenceServiceName, v0.5 on: the Knative Service and the model's host are named after it), the
serving.kserve.io/autoscalerClass annotation (validateInferenceServiceAutoscaler: a class no release takes),
PYTHONPATH in a container (validateBlockedEnvVars, pkg/validation/env_policy.go, v0.18 on), a multi-node predictor
(validateMultiNodeVariables: one worker container, no parallel sizes in the env, resources only of the GPU types
KServe knows, storageUri pvc:// or oci://, autoscaler class 'none' (v0.15.2 on; v0.15.0 asked for 'external', so
only a class that is neither is said), sizes of at least 1), STORAGE_URI in a collocated transformer container
(validateCollocationStorageURI, v0.12 on), a `name` on the predictor's model or framework container
(validatePredictor, v0.16 on); then per component: exactly one implementation (validateExactlyOneImplementation,
the predictor's), ComponentExtensionSpec.Validate (component.go: containerConcurrency, then the replica bounds:
minReplicas (default 1) and maxReplicas (0: no limit) not negative, minReplicas not above a maxReplicas that is not
0) and validateAutoScalingCompExtension (scaleMetric and scaleTarget for the deployment mode and class written).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.go_text import quote
from gpulint.kube.kserve import KSERVE_CONTAINER, KSERVE_LEGACY_FRAMEWORKS, WORKER_CONTAINER
from gpulint.kube.mutating_webhooks import CreateRequest, Scope, webhook_may_mutate
from gpulint.kube.names import (
    dns1123_subdomain,
)
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.refs import Path

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
    name = quote(raw_name)  # apierrors.NewInvalid: %q
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
            f"{invalid}: setting {variable} in container {quote(container)} is not allowed for security reasons",
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
                    variable, owner = text(env.get("name")), quote(text(container.get("name")))
                    words = f"the {kind} {quote(name)} is invalid: setting {variable} in container {owner} is not allowed for security reasons"
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


GROUP = KSERVE_GROUP


def _since(words: str) -> str:
    return next((release for end, release in KSERVE_SINCE.items() if words.endswith(end)), "")


def inference_service_refusals(submitted: Submitted) -> list[Refusal]:
    """The webhook's first error (it stops there)."""
    first = next(iter(_kserve_isvc(submitted.data, submitted.kserve_gpu_types)), None)
    if first is None:
        return []
    path, words = first
    return [Refusal(path, "KServe", words, since=_since(words))]


def runtime_refusals(submitted: Submitted) -> list[Refusal]:
    """A ServingRuntime's or ClusterServingRuntime's first error."""
    problem = next(iter(_kserve_runtime(submitted.data, submitted.kind, submitted.kserve_gpu_types)), None)
    if problem is None:
        return []
    path, words = problem
    return [Refusal(path, "KServe", words, since=_since(words))]


# KServe's pod mutator (pkg/webhook/admission/pod/mutator.go: the storage initializer, the agent, the metrics
# aggregator), as config/webhook/manifests.yaml installs it (v0.15.0, v0.16.0): never in a namespace labelled
# control-plane (KServe's own, and Kubeflow's `kubeflow`), on the pods labelled with their InferenceService.
POD_MUTATOR = "inferenceservice.kserve-webhook-server.pod-mutator"
POD_LABEL = "serving.kserve.io/inferenceservice"  # constants.InferenceServicePodLabelKey
SHIPPED_POD_MUTATOR: dict[str, Any] = {
    "name": POD_MUTATOR,
    "namespaceSelector": {"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]},
    "objectSelector": {"matchExpressions": [{"key": POD_LABEL, "operator": "Exists"}]},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
}


def predictor_storage_uri(isvc: dict[str, Any]) -> tuple[Path, str] | None:
    """The storageUri of the predictor's model (or framework), which the pod mutator's storage initializer fetches."""
    predictor = mapping(dig(isvc, "spec", "predictor"))
    key = _kserve_model_key(predictor)
    uri = mapping(predictor.get(key)).get("storageUri") if key else None
    return (("spec", "predictor", key, "storageUri"), uri) if isinstance(uri, str) and uri else None


def pod_mutator_reaches(webhook: dict[str, Any], isvc: str, namespace_labels: dict[str, Any]) -> bool:
    """Whether the API server calls the pod mutator on the InferenceService's pods (the namespace's labels known)."""
    request = CreateRequest("", "v1", "pods", Scope.NAMESPACED, {POD_LABEL: isvc}, namespace_labels)
    return webhook_may_mutate(webhook, request)


def selector_words(selector: Any) -> str:
    """A label selector as kubectl describes its requirements: `control-plane DoesNotExist`, `team In (a, b)`."""
    words = [f"{key}={value}" for key, value in mapping(mapping(selector).get("matchLabels")).items()]
    for expression in map(mapping, sequence(mapping(selector).get("matchExpressions"))):
        values = ", ".join(text(value) for value in sequence(expression.get("values")))
        words.append(" ".join(w for w in (text(expression.get("key")), text(expression.get("operator"))) if w))
        if values:
            words[-1] += f" ({values})"
    return ", ".join(words)
