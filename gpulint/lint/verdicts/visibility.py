"""GPU visibility variables set by hand, and CUDA images that see every GPU of the node: what the NVIDIA
container runtime and CUDA make of a container's NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES, the verdict
gpu-visibility-override words and `explain` shows. Light: a plain check loads no scheduling model."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.commandline import ConfigMaps
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gpu_stack import NVIDIA, node_names
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.resources import is_gpu
from gpulint.kube.runtime import (
    VISIBILITY_VARIABLES,
    EnvSetting,
    container_family,
    container_gpus,
    env_settings,
    gpu_resource_name,
    main_containers,
    unknown_env_sources,
)
from gpulint.kube.scheduler import NodeInfo, pod_requirements
from gpulint.kube.workloads import PodSpecSite, containers
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.world.chart_releases import cluster_policies
from gpulint.lint.world.resolver import Resolver

# NVIDIA_VISIBLE_DEVICES values that expose no GPU (nvidia-container-toolkit: "void", "none", empty).
_NO_GPU = frozenset({"void", "none", ""})
# Images built FROM a CUDA base image, which sets ENV NVIDIA_VISIBLE_DEVICES=all.
_CUDA_IMAGE = re.compile(
    r"(^|/)(nvidia/cuda|nvcr\.io/nvidia/.+|nvidia/.+|pytorch/pytorch:.*cuda.*|vllm/vllm-openai|lmsysorg/sglang|"
    r"tensorflow/tensorflow:.*gpu.*|rayproject/ray(-ml)?:.*gpu.*|huggingface/text-generation-inference)",
)
# Node labels and taints that only GPU nodes carry, where the nvidia container runtime is the default
# (NVIDIA GPU feature discovery and the GPU operator, EKS and Karpenter). Not GKE: its device plugin
# mounts the devices itself and NVIDIA_VISIBLE_DEVICES in an image exposes nothing there.
_GPU_NODE_KEYS = re.compile(
    r"nvidia\.com/gpu(\..*)?|nvidia\.com/mig\..*|"
    r"k8s\.amazonaws\.com/accelerator|karpenter\.k8s\.aws/instance-gpu-.*|node\.kubernetes\.io/instance-type-gpu|"
    r"feature\.node\.kubernetes\.io/pci-10de\.present|amd\.com/gpu.*"
)


# What goes wrong, per container (VisibilityProblem.kind).
HIDES_GPUS = "hides-gpus"  # NVIDIA_VISIBLE_DEVICES=void/none/"" beside allocated GPUs: none is exposed
REPLACES_GPUS = "replaces-gpus"  # NVIDIA_VISIBLE_DEVICES set by hand beside allocated GPUs
UNCOUNTED_GPUS = "uncounted-gpus"  # NVIDIA_VISIBLE_DEVICES names GPUs a container without GPUs then sees
CUDA_UUIDS = "cuda-uuids"  # CUDA_VISIBLE_DEVICES names devices by UUID
CUDA_OUT_OF_RANGE = "cuda-out-of-range"  # an index at or past the GPUs the container holds
CUDA_IDLE = "cuda-idle"  # fewer distinct indexes than GPUs held
CUDA_IMAGE = "cuda-image"  # a CUDA image without GPUs on GPU nodes: it sees every GPU of the node
IGNORED_ENVVAR = "ignored-envvar"  # NVIDIA_VISIBLE_DEVICES without GPUs, which the toolkit is set to ignore
PRIVILEGED_SEES_ALL = "privileged-sees-all"  # a privileged container with fewer GPUs than a node it can run on
MIG_DEVICES = "mig-devices"  # more than one MIG device in one container: one is used (one profile's are seen)

# The device plugin's MIG resources under the mixed strategy, one per profile (nvidia.com/mig-1g.10gb).
_MIG_RESOURCE = re.compile(r"nvidia\.com/mig-[0-9]+g\.[0-9]+gb(\+[a-z]+)?")

# NVIDIA/gpu-operator: ClusterPolicy spec.toolkit.env reaches the container toolkit's DaemonSet, which writes
# accept-nvidia-visible-devices-envvar-when-unprivileged into the runtime's config.toml from
# ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED; false makes the runtime ignore NVIDIA_VISIBLE_DEVICES
# in an unprivileged container (nvidia-container-toolkit: the device list then comes from volume mounts only).
_ENVVAR_GATE = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"


@dataclass(frozen=True)
class VisibilityProblem:
    """One container's GPU visibility that differs from what the scheduler allocated."""

    kind: str
    container: str
    path: Path  # the variable (or the image)
    value: str = ""  # the variable's value, stripped
    origin: str = ""  # " (from ConfigMap 'x', key 'K')" when a ConfigMap sets it
    gpus: int = 0  # the GPUs the container holds
    resource: str = ""  # the GPU resource it asks for
    first_missing: int = 0  # CUDA_OUT_OF_RANGE: the first index that does not exist
    usable: str = ""  # CUDA_OUT_OF_RANGE: the GPUs the process gets ("none", "1", ...)
    shown: int = 0  # CUDA_IDLE: the distinct GPUs the process sees
    reason: str = ""  # CUDA_IMAGE: why the pod lands on GPU nodes
    image: str = ""  # CUDA_IMAGE
    policy: str = ""  # IGNORED_ENVVAR: the ClusterPolicy that has the toolkit ignore the variable
    nodes: str = ""  # PRIVILEGED_SEES_ALL: the nodes with more of the resource than the container holds
    most: int = 0  # PRIVILEGED_SEES_ALL: the most of the resource one of them has
    given_by: str = ""  # UNCOUNTED_GPUS, IGNORED_ENVVAR: a runtime's users, who merge their resources in

    @property
    def written(self) -> str:
        """The value as the manifest writes it ("" shown as "")."""
        return self.value or '""'


def envvar_gate(linted: LintedSet) -> str:
    """The name of the one linted GPU operator ClusterPolicy whose toolkit ignores NVIDIA_VISIBLE_DEVICES in
    unprivileged containers ("" when there is none, or several)."""
    policies = cluster_policies(linted)
    if len(policies) != 1:
        return ""
    toolkit = mapping(dig(policies[0].data, "spec", "toolkit"))
    if toolkit.get("enabled") is False:
        return ""
    for item in sequence(toolkit.get("env")):
        if mapping(item).get("name") == _ENVVAR_GATE and text(mapping(item).get("value")).lower() == "false":
            return policies[0].name
    return ""


def visibility_problems(
    obj: KubeObject,
    site: PodSpecSite,
    patterns: tuple[str, ...],
    config_maps: Callable[[str], ConfigMaps],
    resolver: Resolver | None,
    gate: str = "",
) -> tuple[VisibilityProblem, ...]:
    """The pod template's problems, container by container. ``config_maps``: the ConfigMaps of a namespace
    (read only for a container whose environment may come from one); ``resolver``: the cluster, when the
    inventory has nodes (whether every node the pod can use has GPUs); ``gate``: the ClusterPolicy whose toolkit
    ignores NVIDIA_VISIBLE_DEVICES in unprivileged containers (``envvar_gate``), if any."""
    return tuple(_problems(obj, site, patterns, config_maps, resolver, gate))


def _problems(
    obj: KubeObject,
    site: PodSpecSite,
    patterns: tuple[str, ...],
    config_maps: Callable[[str], ConfigMaps],
    resolver: Resolver | None,
    gate: str,
) -> Iterator[VisibilityProblem]:
    daemon = obj.kind == "DaemonSet"  # GPU infrastructure (device plugin, DCGM exporter) needs every GPU
    pod_has_gpu: bool | None = None  # read for the first container that runs a CUDA image
    for container_path, container in main_containers(site.spec):
        base = (*site.path, *container_path)
        yield from _mig_devices(container, base)
        gpus = container_gpus(container, patterns, obj.facts)
        privileged = dig(container, "securityContext", "privileged") is True
        held = config_maps(obj.ref.namespace) if _reads_config_maps(container) else {}
        written = env_settings(container, VISIBILITY_VARIABLES, held)
        if written and gpus:  # only the variables the device's runtime reads (not CUDA's on a TPU)
            read = container_family(container, patterns, obj.facts).visibility_variables
            written = {name: entry for name, entry in written.items() if name in read}
            if not written:
                continue  # an image's CUDA variables on another device: nothing to see or override
        ignored = "" if gpus or privileged else gate
        if written:  # most containers set neither variable
            yield from _nvidia_visible(
                container, written, base, gpus, daemon or privileged, patterns, ignored, site.resources_from
            )
            yield from _cuda_visible(container, written, base, gpus)
        if privileged and gpus and not daemon:
            yield from _privileged_sees_all(obj, site, resolver, container, base, gpus, patterns)
        if daemon or privileged or "NVIDIA_VISIBLE_DEVICES" in written:
            continue
        if unknown_env_sources(container, ("NVIDIA_VISIBLE_DEVICES",), held):
            continue  # a Secret or an unheld ConfigMap may set it (to void): unknown
        image = text(container.get("image"))
        if not _cuda_image(image) or ignored:
            continue  # ignored: the toolkit reads no NVIDIA_VISIBLE_DEVICES of an unprivileged container
        if pod_has_gpu is None:
            pod_has_gpu = _pod_has_devices(site, patterns)
        if not pod_has_gpu and not site.resources_from:  # a runtime: its users give the GPUs
            reason = _gpu_node_reason(site.spec) or _only_gpu_nodes(obj, site, resolver)
            if reason:
                yield VisibilityProblem(
                    CUDA_IMAGE, text(container.get("name")), (*base, "image"), reason=reason, image=image
                )


def _mig_devices(container: dict[str, Any], base: Path) -> Iterator[VisibilityProblem]:
    """More than one MIG device in one container. Each MIG resource's plugin answers Allocate with its own
    NVIDIA_VISIBLE_DEVICES and the kubelet keeps one value per variable (pkg/kubelet/cm/devicemanager
    pod_devices.go), so the container sees one profile's devices; and CUDA runs on one MIG device anyway
    (NVIDIA/k8s-device-plugin#728)."""
    limits = mapping(mapping(container.get("resources")).get("limits"))
    counts: dict[str, int] = {}
    for name, amount in limits.items():
        if not _MIG_RESOURCE.fullmatch(str(name)):
            continue
        try:
            quantity = quantity_from_yaml(amount)
        except QuantityError:
            continue
        if quantity.is_integer() and quantity.value > 0:
            counts[str(name)] = int(quantity.value)
    if sum(counts.values()) < 2:
        return
    listed = ", ".join(f"{name}: {count}" for name, count in counts.items())
    first = next(iter(counts))
    yield VisibilityProblem(
        MIG_DEVICES,
        text(container.get("name")),
        (*base, "resources", "limits", first),
        value=listed,
        gpus=sum(counts.values()),
        most=len(counts),
    )


def _pod_has_devices(site: PodSpecSite, patterns: tuple[str, ...]) -> bool:
    if sequence(site.spec.get("resourceClaims")):
        return True  # DRA devices: the driver decides what the container sees
    for _, container in containers(site.spec):
        resources = mapping(container.get("resources"))
        if any(
            is_gpu(name, patterns) and not _zero(amount)
            for section in ("limits", "requests")
            for name, amount in mapping(resources.get(section)).items()
        ):
            return True
    return False


def _zero(amount: Any) -> bool:
    """nvidia.com/gpu: 0 allocates nothing: the kubelet asks no device plugin for it, and the image's
    NVIDIA_VISIBLE_DEVICES stays as it is (NVIDIA/k8s-device-plugin#61)."""
    try:
        return quantity_from_yaml(amount).value == 0
    except QuantityError:
        return False


def _reads_config_maps(container: dict[str, Any]) -> bool:
    """The container's environment may come from a ConfigMap (most containers write theirs, or set none)."""
    return bool(container.get("envFrom")) or any(
        isinstance(item, dict) and "valueFrom" in item for item in sequence(container.get("env"))
    )


def _variable(found: EnvSetting | None) -> tuple[Path, str, str] | None:
    """(path, value, where the value is written: "" or " (from ConfigMap 'x', key 'K')")."""
    if found is None or found.value is None:
        return None  # from a Secret or the downward API: not known offline
    return found.path, found.value.strip(), f" (from {found.source})" if found.source else ""


def _nvidia_visible(
    container: dict[str, Any],
    written: dict[str, EnvSetting],
    base: Path,
    gpus: int | None,
    infrastructure: bool,
    patterns: tuple[str, ...],
    ignored: str = "",
    given_by: str = "",
) -> Iterator[VisibilityProblem]:
    """``given_by``: a runtime's users, whose resources are merged into the container (its own ask no GPU)."""
    found = _variable(written.get("NVIDIA_VISIBLE_DEVICES"))
    if found is None:
        return
    path, value, origin = found
    name = text(container.get("name"))
    if gpus:
        kind = HIDES_GPUS if value.lower() in _NO_GPU else REPLACES_GPUS
        resource = gpu_resource_name(container, patterns) if kind == HIDES_GPUS else ""
        yield VisibilityProblem(kind, name, (*base, *path), value, origin, gpus, resource)
        return
    if infrastructure or value.lower() in _NO_GPU:
        return
    if ignored:
        yield VisibilityProblem(IGNORED_ENVVAR, name, (*base, *path), value, origin, policy=ignored, given_by=given_by)
        return
    yield VisibilityProblem(UNCOUNTED_GPUS, name, (*base, *path), value, origin, given_by=given_by)


def _cuda_visible(
    container: dict[str, Any], written: dict[str, EnvSetting], base: Path, gpus: int | None
) -> Iterator[VisibilityProblem]:
    found = _variable(written.get("CUDA_VISIBLE_DEVICES"))
    if found is None or not gpus:
        return  # without GPUs the CUDA variable changes nothing the node accounts for
    path, value, origin = found
    name = text(container.get("name"))
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    if not entries or any(not entry.isdigit() for entry in entries):
        if any(entry.upper().startswith(("GPU-", "MIG-")) for entry in entries):
            yield VisibilityProblem(CUDA_UUIDS, name, (*base, *path), value, origin, gpus)
        return
    indexes = [int(entry) for entry in entries]
    missing = [index for index in indexes if index >= gpus]
    if missing:
        yield VisibilityProblem(
            CUDA_OUT_OF_RANGE,
            name,
            (*base, *path),
            value,
            origin,
            gpus,
            first_missing=missing[0],
            usable=_usable(indexes, gpus),
        )
    elif len(set(indexes)) < gpus:
        yield VisibilityProblem(CUDA_IDLE, name, (*base, *path), value, origin, gpus, shown=len(set(indexes)))


def _usable(indexes: list[int], gpus: int) -> str:
    usable = 0
    for index in indexes:
        if index >= gpus:
            break
        usable += 1
    return "none" if usable == 0 else str(usable)


@short_strings_remembered(1024)
def _cuda_image(image: str) -> bool:
    """Built FROM a CUDA base image (remembered per image: real manifests repeat a few)."""
    return _CUDA_IMAGE.search(image) is not None


def _fitting_nodes(obj: KubeObject, site: PodSpecSite, resolver: Resolver | None) -> list[NodeInfo]:
    """The inventory's nodes the pod can be scheduled on (none without an inventory of nodes)."""
    if resolver is None or not resolver.has_nodes or not resolver.nodes:
        return []
    # only with nodes: a plain check of a file loads no scheduling model (tests/unit/test_startup.py)
    from gpulint.lint.verdicts.shared import admitted_pod_spec

    pod = pod_requirements(
        admitted_pod_spec(obj.kind, site.spec, resolver), resolver.gates.enabled("TaintTolerationComparisonOperators")
    )
    fit = resolver.model.evaluate(pod)
    return fit.fitting if fit.fits else []


def _only_gpu_nodes(obj: KubeObject, site: PodSpecSite, resolver: Resolver | None) -> str:
    """The inventory's answer when the manifest does not select GPU nodes: every node the pod can be scheduled on
    has NVIDIA GPUs (not with node pools: a pool may add a node without them)."""
    if resolver is None or resolver.pools:
        return ""
    fitting = _fitting_nodes(obj, site, resolver)
    if not fitting:
        return ""
    gpu = {id(node) for node in resolver.gpu_nodes(NVIDIA)}
    if any(id(node) not in gpu for node in fitting):
        return ""
    return f"every node it can be scheduled on has NVIDIA GPUs ({node_names(fitting)})"


def _privileged_sees_all(
    obj: KubeObject,
    site: PodSpecSite,
    resolver: Resolver | None,
    container: dict[str, Any],
    base: Path,
    gpus: int,
    patterns: tuple[str, ...],
) -> Iterator[VisibilityProblem]:
    """A privileged container gets every device of its host, the node's /dev/nvidia* among them, whatever the
    device plugin allocated. Said where the inventory shows a node it can be scheduled on with more of the
    resource than it takes: on a node it fills, it sees only its own."""
    resource = gpu_resource_name(container, patterns, obj.facts)
    if not resource.startswith("nvidia.com/"):
        return
    larger = [node for node in _fitting_nodes(obj, site, resolver) if node.allocatable.get(resource, 0) > gpus]
    if not larger:
        return
    most = max(int(node.allocatable.get(resource, 0)) for node in larger)
    path = (*base, "securityContext", "privileged")
    name = text(container.get("name"))
    yield VisibilityProblem(
        PRIVILEGED_SEES_ALL, name, path, gpus=gpus, resource=resource, nodes=node_names(larger), most=most
    )


def _gpu_node_reason(spec: dict[str, Any]) -> str:
    for key in mapping(spec.get("nodeSelector")):
        if _GPU_NODE_KEYS.fullmatch(str(key)):
            return f"selects GPU nodes (nodeSelector {key})"
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    for term in sequence(terms):
        for expression in sequence(mapping(term).get("matchExpressions")):
            key = str(mapping(expression).get("key"))
            if _GPU_NODE_KEYS.fullmatch(key) and mapping(expression).get("operator") in ("In", "Exists", "Gt"):
                return f"selects GPU nodes (node affinity on {key})"
    for toleration in sequence(spec.get("tolerations")):
        key = str(mapping(toleration).get("key"))
        if _GPU_NODE_KEYS.fullmatch(key):
            return f"tolerates the GPU nodes' taint {key}"
    return ""
