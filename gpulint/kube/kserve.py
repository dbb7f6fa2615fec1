"""KServe: the pods of an InferenceService's components, and of the ServingRuntime a predictor names.

Sources: kserve/kserve pkg/apis/serving/v1beta1 (predictor.go, component.go: each component inlines a
PodSpec; the model-format shorthand is a container; the container is named
constants.InferenceServiceContainerName "kserve-container", the worker "worker-container");
pkg/controller/v1beta1/inferenceservice/utils/utils.go (MergeServingRuntimeAndInferenceServiceSpecs:
the runtime's kserve-container strategic-merged with the predictor's ``model`` (its args appended
to the runtime's, MergeRuntimeContainers), and the runtime's nodeSelector, affinity, tolerations,
volumes, imagePullSecrets, schedulerName and resourceClaims strategic-merged with the predictor's
PodSpec, MergePodSpec); GetServingRuntime (a ServingRuntime of the namespace first, then a
ClusterServingRuntime).
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.kserve_runtimes import Installed
from gpulint.kube.pod_views import PodView, Slot, slotted
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path

GROUP = "serving.kserve.io"
# KFServing, KServe before v0.7 renamed its API group (kserve/kserve v0.6.1 pkg/constants/constants.go
# KFServingAPIGroupName): the same v1beta1 InferenceService (pkg/apis/serving/v1beta1, the predictor's
# framework fields and an inlined PodSpec), every component a Knative Service - v0.6.1 declares
# serving.kubeflow.org/raw but its controller never reads it, and v0.5 has no other mode.
KFSERVING_GROUP = "serving.kubeflow.org"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
# the predictor's status when GetServingRuntime finds no runtime of the name (components/predictor.go reconcileModel)
RUNTIME_NOT_RECOGNIZED = "RuntimeNotRecognized: Waiting for runtime to become available"

KSERVE_CONTAINER = "kserve-container"
# The framework fields the model-format shorthand replaced, in the order setPredictorModelDefaults
# (inference_service_defaults.go, v0.9 on, the defaulting webhook, before validation) reads them: the first written
# becomes the predictor's model (replacing a model written beside it).
KSERVE_LEGACY_FRAMEWORKS = (
    "sklearn",
    "tensorflow",
    "xgboost",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
# The model-format shorthand (``model``) and those framework fields: one container each,
# completed by the ServingRuntime the InferenceService selects (its image, args, and pod fields).
KSERVE_FRAMEWORKS = ("model", *KSERVE_LEGACY_FRAMEWORKS)
KSERVE_PREDICTOR_SLOTS = (
    *(Slot((name,), KSERVE_CONTAINER) for name in KSERVE_FRAMEWORKS),
    Slot(("containers",), KSERVE_CONTAINER, is_list=True),
)


def _kserve_runtime_completes(spec: dict[str, Any]) -> str:
    if any(isinstance(spec.get(name), dict) for name in KSERVE_FRAMEWORKS):
        return "the ServingRuntime (the model-format shorthand is merged into its container and pod spec)"
    return ""


_SHORTHAND_VIEW = slotted(KSERVE_PREDICTOR_SLOTS, _kserve_runtime_completes)
# KFServing's framework fields are completed from inferenceservice-config's predictors (no ServingRuntime)
KFSERVING_PREDICTOR = slotted(
    KSERVE_PREDICTOR_SLOTS,
    lambda spec: (
        "the predictor image inferenceservice-config names for the framework"
        if any(isinstance(spec.get(name), dict) for name in KSERVE_FRAMEWORKS)
        else ""
    ),
)
KSERVE_EXPLAINER = slotted(
    (Slot(("art",), KSERVE_CONTAINER), Slot(("containers",), KSERVE_CONTAINER, is_list=True)),
    lambda spec: "the explainer's configured image (the ART shorthand)" if isinstance(spec.get("art"), dict) else "",
)
KSERVE_CUSTOM = slotted((Slot(("containers",), KSERVE_CONTAINER, is_list=True),))
_WORKER_ALONE = slotted(
    (Slot(("containers",), "worker-container", is_list=True),),
    lambda spec: "the ServingRuntime's workerSpec (KServe merges the two)",
)
KSERVE_RUNTIME_WORKER = _WORKER_ALONE  # a ServingRuntime's own workerSpec: a template, no pods


def kserve_predictor_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """minReplicas (default 1); a component scaled to zero still runs one pod when it serves."""
    value = integer(owner.get("minReplicas"), 1)
    return None if value is None else max(value, 1)


class BoundInferenceService(dict[str, Any]):
    """An InferenceService's data with the ServingRuntime its predictor names, or that KServe selects for its
    model format (``selected``), found by the resolver."""

    def __init__(self, data: dict[str, Any], runtime: dict[str, Any], selected: bool = False) -> None:
        super().__init__(data)
        self.runtime = runtime
        self.selected = selected


def installed_runtime(isvc: dict[str, Any]) -> str:
    """The name of the ClusterServingRuntime KServe installs that the resolver chose for the predictor by its
    model format (kube/kserve_runtimes), "" when the runtime is named, written in the files or not known."""
    runtime = getattr(isvc, "runtime", None)
    return text(dig(runtime, "metadata", "name")) if isinstance(runtime, Installed) else ""


def runtime_name(isvc: dict[str, Any]) -> str:
    """The runtime the predictor's model names (``model.runtime``); "" when KServe picks one itself."""
    return text(dig(isvc, "spec", "predictor", "model", "runtime"))


# ModelSpec fields that are no container fields (the rest of it is a corev1.Container inlined)
_MODEL_FIELDS = ("modelFormat", "runtime", "storageUri", "storage", "protocolVersion", "runtimeVersion")
_CONTAINER_MERGE_KEYS = {
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "volumeDevices": "devicePath",
}
_RUNTIME_POD_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "imagePullSecrets",
    "schedulerName",
    "resourceClaims",
)
_POD_MERGE_KEYS = {"volumes": "name", "imagePullSecrets": "name", "resourceClaims": "name"}
_POD_REPLACED = ("tolerations", "schedulerName")  # lists without a merge key, and scalars


def _deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overlay.items():
        out[key] = (
            _deep_merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
        )
    return out


def _merge_by(base: list[Any], overlay: list[Any], key: str) -> list[Any]:
    out = list(base)
    for item in overlay:
        same = next((i for i, old in enumerate(out) if mapping(old).get(key) == mapping(item).get(key)), None)
        if same is None:
            out.append(item)
        else:
            out[same] = _deep_merge(mapping(out[same]), mapping(item))
    return out


def merge_container(base: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """The runtime's container with the predictor's model spec merged in (MergeRuntimeContainers)."""
    out = dict(base)
    for key, value in model.items():
        if key in _MODEL_FIELDS:
            continue
        if key == "args":
            out["args"] = [*sequence(base.get("args")), *sequence(value)]
        elif key in _CONTAINER_MERGE_KEYS and isinstance(value, list):
            out[key] = _merge_by(sequence(base.get(key)), value, _CONTAINER_MERGE_KEYS[key])
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _deep_merge(base[key], value)
        else:
            out[key] = value
    return out


def _merge_pod(runtime_spec: dict[str, Any], predictor: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The pod fields (MergePodSpec), and those the runtime alone supplies."""
    pod = {key: predictor[key] for key in predictor if key not in KSERVE_FRAMEWORKS}
    from_runtime = []
    for key in _RUNTIME_POD_FIELDS:
        if key not in runtime_spec:
            continue
        if key not in predictor:
            pod[key] = runtime_spec[key]
            from_runtime.append(key)
        elif key in _POD_MERGE_KEYS and isinstance(predictor[key], list):
            pod[key] = _merge_by(sequence(runtime_spec[key]), predictor[key], _POD_MERGE_KEYS[key])
        elif key not in _POD_REPLACED and isinstance(predictor[key], dict) and isinstance(runtime_spec[key], dict):
            pod[key] = _deep_merge(runtime_spec[key], predictor[key])
    return pod, from_runtime


def predictor_view(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView | None:
    """The predictor's pod: with its ServingRuntime merged in when the resolver found the one it names."""
    runtime = getattr(obj, "runtime", None)
    model = spec.get("model")
    if not isinstance(runtime, dict) or not isinstance(model, dict):
        return _SHORTHAND_VIEW(obj, owner_path, owner, spec_path, spec)
    runtime_spec = mapping(runtime.get("spec"))
    base = next(
        (
            c
            for c in sequence(runtime_spec.get("containers"))
            if isinstance(c, dict) and c.get("name") == KSERVE_CONTAINER
        ),
        None,
    )
    if base is None:  # KServe refuses it ("failed to find kserve-container in ServingRuntime containers")
        return _SHORTHAND_VIEW(obj, owner_path, owner, spec_path, spec)
    pod, from_runtime = _merge_pod(runtime_spec, spec)
    others = [c for c in sequence(spec.get("containers")) if isinstance(c, dict)]
    pod["containers"] = [merge_container(base, model), *others]
    model_path = (*spec_path, "model")
    reference = (*model_path, "runtime")
    aliases: list[tuple[Path, Path]] = [((*spec_path, "containers", 0), model_path)]
    aliases += [((*spec_path, "containers", i + 1), (*spec_path, "containers", i)) for i in range(len(others))]
    aliases += [((*spec_path, key), reference) for key in from_runtime]
    runtime_ref = f"{text(runtime.get('kind'))}/{text(dig(runtime, 'metadata', 'name'))}"
    if isinstance(runtime, Installed):
        runtime_ref += " (as KServe installs it)"
    names = tuple(((*spec_path, key), f"{runtime_ref} spec.{key}") for key in from_runtime)
    unfaithful = tuple((*spec_path, key) for key in from_runtime if key != "volumes")
    nodes = multi_node(spec, pod, runtime_spec)
    if nodes is not None:  # the controller sets the head's GPUs (addGPUResourceToDeployment)
        at = _set_gpus(pod, 0, nodes.gpu, nodes.head_gpus, spec_path)
        aliases.append((at, _parallelism_path(spec, spec_path, reference)))
        unfaithful += (at,)
    completed_by = SELECTED_RUNTIME if getattr(obj, "selected", False) else ""
    return PodView(pod, tuple(aliases), completed_by, unfaithful=unfaithful, names=names)


# A predictor completed by the runtime KServe selects for its model format (kube/kserve_runtimes): its pod is
# known as far as the files and the inventory show the cluster's runtimes. Rules that raise errors treat it as
# completed by another object (a ServingRuntime the files do not show may be selected first); the warnings
# dev-shm-missing and parallelism-mismatch judge it.
SELECTED_RUNTIME = "the runtime KServe selects for the model format (another the files do not show may come first)"

KSERVE_PREDICTOR = predictor_view

# ----------------------------------------------------------------------------------------- multi-node
# pkg/controller/v1beta1/inferenceservice/components/predictor.go (reconcileWorker: the runtime's
# workerSpec merged with the predictor's as the predictor is merged with the runtime's container, the
# predictor's pipelineParallelSize and tensorParallelSize over the runtime's (default 1);
# computeRayNodeAndGPUs, computeMpNodeAndGPUs) and reconcilers/deployment (the worker Deployment runs
# RAY_NODE_COUNT - 1 pods; addGPUResourceToDeployment sets each container's GPU limit and request).
WORKER_CONTAINER = "worker-container"
GPU_TYPES = ("nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu", "habana.ai/gaudi")  # DefaultGPUResourceTypeList
EXECUTOR_BACKEND = "multinode/executor-backend"


@dataclass(frozen=True)
class MultiNode:
    nodes: int  # the head and the workers
    head_gpus: int
    worker_gpus: int
    gpu: str  # the resource the controller sets


def _amount(value: Any) -> int:
    """A quantity's Value() (rounded up), 0 when it is not one."""
    try:
        return math.ceil(quantity_from_yaml(value).value)
    except QuantityError:
        return 0


def _requested_gpus(pod: dict[str, Any]) -> int:
    """GetGPUResourceQtyByType on the first container's requests."""
    requests = mapping(dig(pod, "containers", 0, "resources", "requests"))
    return next((_amount(requests[name]) for name in GPU_TYPES if name in requests), 0)


def _gpu_name(pod: dict[str, Any]) -> str:
    """The GPU resource the first container names (a non-zero limit or request), else nvidia.com/gpu."""
    resources = mapping(dig(pod, "containers", 0, "resources"))
    for name in GPU_TYPES:
        if any(_amount(mapping(resources.get(section)).get(name)) > 0 for section in ("limits", "requests")):
            return name
    return GPU_TYPES[0]


def _sizes(predictor: dict[str, Any], runtime_spec: dict[str, Any]) -> tuple[int, int] | None:
    own, theirs = mapping(predictor.get("workerSpec")), mapping(runtime_spec.get("workerSpec"))
    pipeline = integer(own.get("pipelineParallelSize", theirs.get("pipelineParallelSize")), 1)
    tensor = integer(own.get("tensorParallelSize", theirs.get("tensorParallelSize")), 1)
    return None if pipeline is None or tensor is None or pipeline < 1 or tensor < 1 else (pipeline, tensor)


def multi_node(predictor: dict[str, Any], head: dict[str, Any], runtime_spec: dict[str, Any]) -> MultiNode | None:
    """The pods and GPUs of a multi-node predictor (its workerSpec set, its runtime's found); None
    when it is not multi-node or KServe refuses it."""
    if not isinstance(predictor.get("workerSpec"), dict) or not isinstance(runtime_spec.get("workerSpec"), dict):
        return None
    sizes = _sizes(predictor, runtime_spec)
    worker = _worker_pod(predictor, runtime_spec)
    if sizes is None or worker is None:
        return None
    pipeline, tensor = sizes
    gpu = _gpu_name(head)
    annotations = mapping(dig(runtime_spec, "annotations")) or {}
    if text(annotations.get(EXECUTOR_BACKEND)) == "mp":
        return MultiNode(pipeline, tensor, tensor, gpu)
    counts = _ray_nodes(pipeline * tensor, _requested_gpus(head), _requested_gpus(worker))
    return None if counts is None else MultiNode(*counts, gpu)


def _ray_nodes(total: int, head: int, worker: int) -> tuple[int, int, int] | None:
    """computeRayNodeAndGPUs: (nodes, head GPUs, worker GPUs), None where KServe reports
    ErrRayClusterInsufficientGPUs."""
    if worker > 0:
        nodes = -(-total // worker)
        if head > 0:
            if -(-total // head) == 1:
                nodes = 1
        else:
            head = total - worker * (nodes - 1)
        if nodes == 1:
            worker, head = 0, total
    elif head > 0:
        nodes, worker = 1, 1
        if total - head > 0:
            nodes = (total - head) + 1
    else:
        return total, 1, 1
    return None if total > head + worker * (nodes - 1) else (nodes, head, worker)


def _worker_pod(predictor: dict[str, Any], runtime_spec: dict[str, Any]) -> dict[str, Any] | None:
    theirs = mapping(runtime_spec.get("workerSpec"))
    own = mapping(predictor.get("workerSpec"))
    base = next((c for c in sequence(theirs.get("containers")) if isinstance(c, dict)), None)
    if base is None:  # "No workerSpec container configuration found in selected serving runtime"
        return None
    change = next((c for c in sequence(own.get("containers")) if isinstance(c, dict)), {})
    pod, _ = _merge_pod(theirs, {k: v for k, v in own.items() if k not in _WORKER_FIELDS})
    pod["containers"] = [{**merge_container(base, change), "name": WORKER_CONTAINER}]
    return pod


_WORKER_FIELDS = ("pipelineParallelSize", "tensorParallelSize", "containers", "size")


def _set_gpus(pod: dict[str, Any], index: int, gpu: str, count: int, spec_path: Path) -> Path:
    containers = [dict(c) for c in sequence(pod.get("containers"))]
    resources = dict(mapping(containers[index].get("resources")))
    for section in ("limits", "requests"):
        resources[section] = {**mapping(resources.get(section)), gpu: count}
    containers[index]["resources"] = resources
    pod["containers"] = containers
    return (*spec_path, "containers", index, "resources")


def _parallelism_path(predictor: dict[str, Any], predictor_path: Path, reference: Path) -> Path:
    """Where the GPUs per pod were decided: the predictor's tensorParallelSize, else the runtime's."""
    own = mapping(predictor.get("workerSpec"))
    for key in ("tensorParallelSize", "pipelineParallelSize"):
        if key in own:
            return (*predictor_path, "workerSpec", key)
    return reference


def worker_view(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView | None:
    """The worker Deployment's pod: the runtime's workerSpec with the predictor's merged in."""
    runtime = getattr(obj, "runtime", None)
    head = predictor_view(obj, owner_path, owner, owner_path, owner)
    runtime_spec = mapping(runtime.get("spec")) if isinstance(runtime, dict) else {}
    worker = _worker_pod(owner, runtime_spec) if runtime_spec else None
    nodes = multi_node(owner, head.spec, runtime_spec) if head is not None and runtime_spec else None
    if worker is None or nodes is None:
        return _WORKER_ALONE(obj, owner_path, owner, spec_path, spec)
    reference = (*owner_path, "model", "runtime")
    at = _set_gpus(worker, 0, nodes.gpu, nodes.worker_gpus, spec_path)
    aliases: list[tuple[Path, Path]] = [(at, _parallelism_path(owner, owner_path, reference))]
    if isinstance(spec.get("containers"), list) and spec["containers"]:
        aliases.append(((*spec_path, "containers", 0), (*spec_path, "containers", 0)))
    aliases.append(((*spec_path, "containers"), reference))
    runtime_ref = f"{text(runtime.get('kind'))}/{text(dig(runtime, 'metadata', 'name'))}" if runtime else ""
    names = (((*spec_path, "containers"), f"{runtime_ref} spec.workerSpec.containers"),)
    return PodView(worker, tuple(aliases), unfaithful=(at, (*spec_path, "containers")), names=names)


def kserve_worker_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """RAY_NODE_COUNT - 1 (the head is the predictor's own pod); unknown without the runtime."""
    runtime = getattr(obj, "runtime", None)
    if not isinstance(runtime, dict):
        return None
    runtime_spec = mapping(runtime.get("spec"))
    head = predictor_view(obj, ("spec", "predictor"), owner, ("spec", "predictor"), owner)
    nodes = multi_node(owner, head.spec, runtime_spec) if head is not None else None
    return None if nodes is None else nodes.nodes - 1


# How KServe makes an InferenceService's component pods: through a Knative Service (Knative mode, formerly
# Serverless), whose pod fields Knative's feature flags gate, or through a Deployment (Standard, formerly
# RawDeployment; ModelMesh). Sources, kserve/kserve v0.20.0-rc0: pkg/constants/constants.go (the annotation
# serving.kserve.io/deploymentMode; ParseDeploymentMode reads Serverless as Knative, RawDeployment as
# Standard); config/configmap/inferenceservice.yaml ("deploy": {"defaultDeploymentMode": "Serverless"}) and
# charts/kserve-resources/values.yaml (kserve.controller.deploymentMode: Knative): the shipped default.
DEPLOYMENT_MODE_ANNOTATION = GROUP + "/deploymentMode"
CONFIG_MAP = "inferenceservice-config"
KNATIVE_MODES = frozenset({"Serverless", "Knative"})


class DeploymentMode(enum.Enum):
    KNATIVE = "Knative"  # the annotation or the installation's configuration says so
    ASSUMED_KNATIVE = "assumed Knative"  # neither is known: KServe's shipped default
    OTHER = "Standard"  # Standard, RawDeployment, ModelMesh: no Knative Service


def default_mode(deploy: object) -> str | None:
    """defaultDeploymentMode of inferenceservice-config's ``deploy`` value (JSON), or None."""
    if not isinstance(deploy, str):
        return None
    try:
        value = json.loads(deploy)
    except ValueError:
        return None
    mode = value.get("defaultDeploymentMode") if isinstance(value, dict) else None
    return mode if isinstance(mode, str) and mode else None


# The note of a KServe component judged in Knative mode without being told so (no annotation, no linted config)
ASSUMED_KNATIVE_NOTE = (
    f"no {DEPLOYMENT_MODE_ANNOTATION} annotation and no linted {CONFIG_MAP}: KServe's shipped default, "
    "Knative mode (Serverless), is assumed; Standard mode makes a Deployment instead"
)
# The annotations KServe does not copy onto a component's Knative Service (constants.ServiceAnnotationDisallowedList):
# it writes min-scale and max-scale itself, from minReplicas and maxReplicas.
KNATIVE_SCALE_SET_BY_KSERVE = frozenset({"autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/max-scale"})


# The components of an InferenceService, each made into its own Knative Service in Knative mode
KNATIVE_COMPONENTS = ("predictor", "transformer", "explainer")


def deployment_mode(isvc: dict[str, Any], configured: str | None) -> DeploymentMode:
    """The mode of an InferenceService: its annotation, else the installation's default (``configured``).
    KFServing's (serving.kubeflow.org) always runs in Knative mode."""
    if text(isvc.get("apiVersion")).startswith(KFSERVING_GROUP + "/"):
        return DeploymentMode.KNATIVE
    annotated = text(mapping(dig(isvc, "metadata", "annotations")).get(DEPLOYMENT_MODE_ANNOTATION))
    mode = annotated or configured
    if mode is None:
        return DeploymentMode.ASSUMED_KNATIVE
    return DeploymentMode.KNATIVE if mode in KNATIVE_MODES else DeploymentMode.OTHER
