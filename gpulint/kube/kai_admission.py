"""What KAI Scheduler's admission webhook writes into a pod before the API server's own admission plugins run:
its ``runtimeClassName`` (kai-scheduler/KAI-Scheduler pkg/admission/webhook/v1alpha2/runtimeenforcement).

The webhook handles the pods whose ``schedulerName`` is the Config's ``spec.global.schedulerName`` (default
kai-scheduler: pkg/operator/operands/admission/resources.go buildSchedulerNameMatchConditions, and the pod
mutator's own check). From v0.10.0 to v0.15.x it gives every pod that asks for a GPU (``nvidia.com/gpu`` in a
container's requests or limits, or the ``gpu-fraction`` / ``gpu-memory`` annotation: pkg/common/resources
RequestsGPU) and names no RuntimeClass ``spec.admission.gpuPodRuntimeClassName`` (default ``nvidia``; an empty
string turns it off). From v0.16.0 (#1543) only GPU-fraction pods get one, ``gpuFractionRuntimeClassName``
(the deprecated ``gpuPodRuntimeClassName`` when only it is set; default ``nvidia``). The release is read from
the Config's admission image tag, as KAI's chart renders it; without it, only what every release since
v0.10.0 does is assumed, and only when the Config names the class (a field v0.10.0 introduced).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.releases import release_of

GROUP = "kai.scheduler"
SINGLETON = "kai-config"  # the Config the operator reconciles (constants.DefaultKAIConfigSingeltonInstanceName, sic)
DEFAULT_SCHEDULER_NAME = "kai-scheduler"  # pkg/common/constants DefaultSchedulerName
DEFAULT_RUNTIME_CLASS = "nvidia"  # constants.DefaultRuntimeClassName
FRACTION_ANNOTATIONS = ("gpu-fraction", "gpu-memory")
GPU_RESOURCE = "nvidia.com/gpu"
FIRST = (0, 10)  # the runtime enforcement plugin's first release
FRACTION_ONLY = (0, 16)  # whole-GPU pods are no longer mutated
# The binder's GPU reservation pod inherits the fraction pod's tolerations (#2000); before, it had none
RESERVATION_TOLERATES = (0, 17)
# What the DefaultTolerationSeconds admission plugin adds to every pod, the reservation pod's only tolerations
DEFAULT_TOLERATED = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
# KAI's images, one tag per release: ghcr.io/nvidia/kai-scheduler/<component> (deployments/kai-scheduler
# values.yaml global.registry; the operator renders the others from its Config with the same tag)
IMAGE_REPOSITORY = "kai-scheduler"
COMPONENTS = frozenset(
    {"operator", "binder", "scheduler", "admission", "podgrouper", "podgroupcontroller", "queuecontroller"}
)


@dataclass(frozen=True)
class KaiAdmission:
    scheduler_name: str
    whole_gpu: str | None  # the class a whole-GPU pod gets (None: none, or not known)
    fraction: str | None  # the class a GPU-fraction pod gets (None: none, or not known)
    release: str  # as the Config's image tag says it ("" when it does not)
    config: str = SINGLETON  # the Config's name


def _release(config: dict[str, Any]) -> tuple[int, int] | None:
    return release_of(dig(config, "spec", "admission", "service", "image", "tag"))


def image_releases(deployment: dict[str, Any]) -> list[str]:
    """The tags of the KAI Scheduler images a Deployment runs (the release each names; none for another
    Deployment)."""
    pod = mapping(dig(deployment, "spec", "template", "spec"))
    found = []
    for container in map(mapping, sequence(pod.get("containers"))):
        image = container.get("image")
        name, _, tag = (image if isinstance(image, str) else "").partition("@")[0].rpartition(":")
        parts = name.rsplit("/", 2)
        if len(parts) == 3 and parts[1] == IMAGE_REPOSITORY and parts[2] in COMPONENTS and "/" not in tag:
            found.append(tag)
    return found


def is_fraction_pod(annotations: dict[str, Any]) -> bool:
    """A GPU-fraction pod (the gpu-fraction or gpu-memory annotation): KAI's binder reserves its GPU with a pod."""
    return any(key in annotations for key in FRACTION_ANNOTATIONS)


def admission_of(config: dict[str, Any]) -> KaiAdmission:
    """What the webhook configured by this Config does (the operator's defaults filled in)."""
    admission = mapping(dig(config, "spec", "admission"))
    scheduler = dig(config, "spec", "global", "schedulerName")
    scheduler_name = scheduler if isinstance(scheduler, str) and scheduler else DEFAULT_SCHEDULER_NAME
    pod_class, fraction_class = admission.get("gpuPodRuntimeClassName"), admission.get("gpuFractionRuntimeClassName")
    named = isinstance(pod_class, str) or isinstance(fraction_class, str)
    release = _release(config)
    tag = dig(config, "spec", "admission", "service", "image", "tag")
    shown = tag if isinstance(tag, str) else ""
    name = dig(config, "metadata", "name")
    made = partial(KaiAdmission, scheduler_name, release=shown, config=name if isinstance(name, str) else SINGLETON)
    if release is None:  # every release since v0.10.0 gives a fraction pod the class it names
        fraction = fraction_class if isinstance(fraction_class, str) else pod_class
        return made(None, (fraction or None) if named else None)
    if release < FIRST:
        return made(None, None)
    if release < FRACTION_ONLY:
        whole = pod_class if isinstance(pod_class, str) else DEFAULT_RUNTIME_CLASS
        return made(whole or None, whole or None)
    chosen = fraction_class if isinstance(fraction_class, str) else pod_class if isinstance(pod_class, str) else None
    chosen = DEFAULT_RUNTIME_CLASS if chosen is None else chosen
    return made(None, chosen or None)


# KAI's pod admission refuses a gpu-fraction that is not a number strictly between 0 and 1
# (pkg/binder/plugins/gpusharing/gpu-request/gpu_request_validator.go validateGpuFractionAnnotation,
# strconv.ParseFloat; NaN refused since v0.16, #1798): a whole GPU is asked for with nvidia.com/gpu.
GPU_FRACTION = "gpu-fraction"
FRACTION_REFUSED = "gpu-fraction annotation value must be a positive number smaller than 1.0"
_GO_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def fraction_refusal(spec: dict[str, Any], annotations: dict[str, Any], scheduler_name: str) -> str | None:
    """Why KAI's webhook refuses the pod's gpu-fraction annotation (None: it does not, or the pod is not KAI's)."""
    value = annotations.get(GPU_FRACTION)
    if spec.get("schedulerName") != scheduler_name or not isinstance(value, str) or not value:
        return None  # an empty value is not a fraction request; a non-string is the schema's to refuse
    if not _GO_FLOAT.fullmatch(value):
        return FRACTION_REFUSED  # ParseFloat fails (or NaN / Inf, refused either way)
    return None if 0 < float(value) < 1 else FRACTION_REFUSED


def _asks_whole_gpu(spec: dict[str, Any]) -> bool:
    """RequestsWholeGPU: nvidia.com/gpu written in a container's requests or limits (init containers aside)."""
    for container in sequence(spec.get("containers")):
        resources = mapping(mapping(container).get("resources"))
        if GPU_RESOURCE in mapping(resources.get("requests")) or GPU_RESOURCE in mapping(resources.get("limits")):
            return True
    return False


def injected_runtime_class(spec: dict[str, Any], annotations: dict[str, Any], admission: KaiAdmission) -> str | None:
    """The runtimeClassName KAI's webhook gives the pod (None: it leaves the pod's alone)."""
    if spec.get("schedulerName") != admission.scheduler_name or spec.get("runtimeClassName"):
        return None
    if any(key in annotations for key in FRACTION_ANNOTATIONS):
        return admission.fraction
    return admission.whole_gpu if _asks_whole_gpu(spec) else None
