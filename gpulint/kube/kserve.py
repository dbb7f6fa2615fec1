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

from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.pod_views import PodView, Slot, slotted
from gpulint.kube.refs import Path

GROUP = "serving.kserve.io"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")

KSERVE_CONTAINER = "kserve-container"
# The model-format shorthand (``model``) and the framework fields it replaced: one container each,
# completed by the ServingRuntime the InferenceService selects (its image, args, and pod fields).
KSERVE_FRAMEWORKS = (
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
KSERVE_PREDICTOR_SLOTS = (
    *(Slot((name,), KSERVE_CONTAINER) for name in KSERVE_FRAMEWORKS),
    Slot(("containers",), KSERVE_CONTAINER, is_list=True),
)


def _kserve_runtime_completes(spec: dict[str, Any]) -> str:
    if any(isinstance(spec.get(name), dict) for name in KSERVE_FRAMEWORKS):
        return "the ServingRuntime (the model-format shorthand is merged into its container and pod spec)"
    return ""


_SHORTHAND_VIEW = slotted(KSERVE_PREDICTOR_SLOTS, _kserve_runtime_completes)
KSERVE_EXPLAINER = slotted(
    (Slot(("art",), KSERVE_CONTAINER), Slot(("containers",), KSERVE_CONTAINER, is_list=True)),
    lambda spec: "the explainer's configured image (the ART shorthand)" if isinstance(spec.get("art"), dict) else "",
)
KSERVE_CUSTOM = slotted((Slot(("containers",), KSERVE_CONTAINER, is_list=True),))
KSERVE_WORKER = slotted(
    (Slot(("containers",), "worker-container", is_list=True),),
    lambda spec: "the ServingRuntime's workerSpec (KServe merges the two)",
)


def kserve_predictor_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """minReplicas (default 1); a component scaled to zero still runs one pod when it serves."""
    value = integer(owner.get("minReplicas"), 1)
    return None if value is None else max(value, 1)


class BoundInferenceService(dict[str, Any]):
    """An InferenceService's data with the ServingRuntime its predictor names (found by the resolver)."""

    def __init__(self, data: dict[str, Any], runtime: dict[str, Any]) -> None:
        super().__init__(data)
        self.runtime = runtime


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
    names = tuple(((*spec_path, key), f"{runtime_ref} spec.{key}") for key in from_runtime)
    unfaithful = tuple((*spec_path, key) for key in from_runtime if key != "volumes")
    return PodView(pod, tuple(aliases), unfaithful=unfaithful, names=names)


KSERVE_PREDICTOR = predictor_view
