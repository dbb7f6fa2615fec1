"""The GPU stack: which nodes are GPU nodes, and which DaemonSets make their GPUs usable.

A GPU node is known by what it publishes (an accelerator resource in capacity/allocatable)
or by the labels node-feature-discovery and GPU feature discovery put on it; the GPU
infrastructure (device plugin, GPU feature discovery, DCGM exporter, DRA kubelet plugins,
NFD worker, the GPU operator's validator) is known by its image, as a table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpulint.kube.commandline import written_words
from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.scheduler import NodeInfo, PodRequirements, Requirement
from gpulint.kube.wording import first_and_more

if TYPE_CHECKING:  # the pool model is imported where a run meets a node pool
    from gpulint.kube.pools.model import InstanceType, NodePool

# A node's instance type (the kubelet sets both forms; k8s.io/api core/v1 well_known_labels.go).
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")

NVIDIA = "NVIDIA"
AMD = "AMD"
ANY_VENDOR = ""

# vendor -> (resource-name patterns it publishes, labels (key, value or "" for any) that mark its GPU nodes)
# Sources: NVIDIA/k8s-device-plugin (resources nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*;
# GFD label nvidia.com/gpu.present), node-feature-discovery (feature.node.kubernetes.io/pci-<class>_<vendor>
# or pci-<vendor> with deviceLabelFields [vendor]; 10de = NVIDIA, 1002 = AMD), ROCm/k8s-device-plugin.
_VENDOR_RESOURCES: dict[str, re.Pattern[str]] = {
    NVIDIA: re.compile(r"^nvidia\.com/(gpu(\.shared)?|mig-.+)$"),
    AMD: re.compile(r"^amd\.com/gpu$"),
}
_VENDOR_LABELS: dict[str, tuple[tuple[str, str], ...]] = {
    NVIDIA: (
        ("nvidia.com/gpu.present", "true"),
        ("feature.node.kubernetes.io/pci-10de.present", "true"),
        ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
        ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
        ("nvidia.com/gpu.count", ""),
        ("nvidia.com/gpu.product", ""),
    ),
    AMD: (
        ("feature.node.kubernetes.io/amd-gpu", "true"),
        ("feature.node.kubernetes.io/amd-vgpu", "true"),  # ROCm/gpu-operator NodeFeatureLabelAmdVGpu: SR-IOV VFs
        ("amd.com/gpu.product-name", ""),
        ("amd.com/gpu.device-id", ""),
    ),
}
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"


def node_vendors(node: NodeInfo) -> frozenset[str]:
    """The GPU vendors whose GPUs ``node`` has (empty: not a GPU node)."""
    found = set()
    published = [name for name, amount in (*node.capacity.items(), *node.allocatable.items()) if amount > 0]
    for vendor, pattern in _VENDOR_RESOURCES.items():
        if any(pattern.match(name) for name in published):
            found.add(vendor)
    for vendor, labels in _VENDOR_LABELS.items():
        for key, value in labels:
            if key in node.labels and (not value or node.labels[key] == value):
                found.add(vendor)
                break
    return frozenset(found)


def gpu_node_requirement(requirement: Requirement) -> bool:
    """A node selection requirement only a GPU node meets: In (or Exists) on a label of a vendor's GPU nodes."""
    for labels in _VENDOR_LABELS.values():
        for key, value in labels:
            if requirement.key != key or requirement.field:
                continue
            if requirement.operator == "Exists" and not value:
                return True
            if (
                requirement.operator == "In"
                and requirement.values
                and (not value or set(requirement.values) == {value})
            ):
                return True
    return False


def selects_gpu_nodes(pod: PodRequirements) -> tuple[Requirement, ...]:
    """The requirements that keep ``pod`` to GPU nodes: a nodeSelector entry, or one in every required node
    affinity term, that only a GPU node meets (empty: the pod may land on any node)."""
    held = tuple(r for r in pod.node_selector if gpu_node_requirement(r))
    if held:
        return held
    terms = pod.affinity_terms or ()
    found = [next((r for r in term if gpu_node_requirement(r)), None) for term in terms]
    return tuple(r for r in found if r is not None) if terms and all(found) else ()


def type_vendors(row: InstanceType | None) -> frozenset[str]:
    """The GPU vendors a catalogued instance type offers GPUs of, when a source vouches for them."""
    if row is None or not row.vouched_gpus:
        return frozenset()
    offered = [name for name, amount in (*row.capacity.items(), *row.allocatable.items()) if amount > 0]
    return frozenset(vendor for vendor, pattern in _VENDOR_RESOURCES.items() if any(map(pattern.match, offered)))


def gpu_nodes(
    nodes: Iterable[NodeInfo],
    vendor: str = ANY_VENDOR,
    instance_type: Callable[[str], InstanceType | None] | None = None,
) -> list[NodeInfo]:
    """The GPU nodes (of ``vendor``): by what they publish or are labelled with, or, with ``instance_type`` (the
    catalog's lookup), by an instance type the catalog describes with that vendor's GPUs: a GPU node whose device
    plugin and feature discovery never ran publishes and carries neither."""
    found = []
    for node in nodes:
        vendors = node_vendors(node)
        if instance_type is not None:
            name = next((node.labels[key] for key in INSTANCE_TYPE_LABELS if node.labels.get(key)), "")
            vendors = vendors | (type_vendors(instance_type(name)) if name else frozenset())
        if vendor in vendors if vendor else vendors:
            found.append(node)
    return found


def pool_vendors(pool: NodePool) -> frozenset[str]:
    """The GPU vendors whose GPUs every node the pool can add has (its catalogued instance types all offer them,
    or it states its accelerators outright); empty for a pool that may also add nodes without them."""
    stated = {name for name, amount in pool.spec.accelerators.items() if amount > 0}
    found = set()
    for vendor, pattern in _VENDOR_RESOURCES.items():
        if any(pattern.match(name) for name in stated):
            found.add(vendor)
            continue
        offers = [
            any(pattern.match(name) and amount > 0 for name, amount in (*t.capacity.items(), *t.allocatable.items()))
            for t in pool.templates
        ]
        if offers and all(offers):
            found.add(vendor)
    return frozenset(found)


def vendor_of_resource(name: str) -> str:
    return next((vendor for vendor, pattern in _VENDOR_RESOURCES.items() if pattern.match(name)), "")


def advertises_gpus(node: NodeInfo, vendor: str) -> bool:
    pattern = _VENDOR_RESOURCES.get(vendor)
    published = [name for name, amount in (*node.capacity.items(), *node.allocatable.items()) if amount > 0]
    return any(pattern.match(name) for name in published) if pattern else True


def present_but_silent(nodes: Iterable[NodeInfo]) -> list[NodeInfo]:
    """Nodes GFD/NFD label as NVIDIA GPU nodes (nvidia.com/gpu.present=true) that publish no NVIDIA resource:
    the device plugin is not running (or not registered) there."""
    return [
        node for node in nodes if node.labels.get(GPU_PRESENT_LABEL) == "true" and not advertises_gpus(node, NVIDIA)
    ]


def node_names(nodes: Iterable[NodeInfo], shown: int = 5) -> str:
    return first_and_more([node.name for node in nodes], shown)


# --------------------------------------------------------------------------- the infrastructure


@dataclass(frozen=True)
class StackComponent:
    """A piece of GPU infrastructure that has to run on every GPU node of its vendor."""

    name: str
    vendor: str  # "" for every vendor's GPU nodes (NFD labels them all)
    image: re.Pattern[str]  # on the image repository (registry/path, without tag or digest)
    command: re.Pattern[str] | None = None  # on the container's command and args, when the image is shared
    not_command: re.Pattern[str] | None = None  # a command that makes it another component (or none)
    advertises: bool = False  # the component that makes the node publish its GPUs


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


NFD_WORKER = StackComponent("NFD worker", ANY_VENDOR, _re(r"(^|/)node-feature-discovery$"), _re(r"nfd-worker"))
NVIDIA_DEVICE_PLUGIN = StackComponent(
    "NVIDIA device plugin",
    NVIDIA,
    _re(r"(^|/)(?<!rocm/)k8s-device-plugin$"),
    not_command=_re(r"gpu-feature-discovery|mps-control-daemon|config-manager"),
    advertises=True,
)
# One image serves several daemons (the NVIDIA image holds the device plugin, GFD and the MPS
# control daemon; NFD's holds master, worker and topology-updater): the command tells them apart.
# Sources: NVIDIA/k8s-device-plugin deployments/static and its Helm chart; NVIDIA/dcgm-exporter;
# NVIDIA/k8s-dra-driver-gpu deployments/helm (kubelet plugin DaemonSet); kubernetes-sigs/
# node-feature-discovery (nfd-worker DaemonSet); NVIDIA/gpu-operator (nvidia-operator-validator);
# ROCm/k8s-device-plugin (device plugin and node labeller); Project-HAMi/HAMi (its device plugin).
STACK_COMPONENTS: tuple[StackComponent, ...] = (
    StackComponent(
        "GPU feature discovery",
        NVIDIA,
        _re(r"(^|/)(?<!rocm/)(k8s-device-plugin|gpu-feature-discovery)$"),
        _re(r"gpu-feature-discovery"),
    ),
    NVIDIA_DEVICE_PLUGIN,
    # HAMi's chart runs its own NVIDIA device plugin (Project-HAMi/HAMi charts/hami/templates/device-plugin/
    # daemonsetnvidia.yaml: image projecthami/hami, command nvidia-device-plugin, beside vGPUmonitor); the same
    # image runs its scheduler extender and webhook under other commands.
    StackComponent(
        "HAMi device plugin", NVIDIA, _re(r"(^|/)hami$"), _re(r"(^|\s)nvidia-device-plugin(\s|$)"), advertises=True
    ),
    StackComponent("DCGM exporter", NVIDIA, _re(r"(^|/)dcgm-exporter$")),
    StackComponent(
        "NVIDIA DRA kubelet plugin",
        NVIDIA,
        _re(r"(^|/)(k8s-dra-driver-gpu|k8s-dra-driver|dra-driver-nvidia-gpu)$"),
        _re(r"kubelet-plugin"),
    ),
    StackComponent("GPU operator validator", NVIDIA, _re(r"(^|/)gpu-operator-validator$")),
    NFD_WORKER,
    StackComponent(
        "AMD GPU device plugin",
        AMD,
        _re(r"(^|/)rocm/k8s-device-plugin$"),
        not_command=_re(r"labeller"),
        advertises=True,
    ),
    StackComponent("AMD GPU node labeller", AMD, _re(r"(^|/)rocm/k8s-device-plugin$"), _re(r"labeller")),
)


# Device plugins of the extended resources GPU jobs use beside their GPUs: image repository -> the resource the
# plugin makes its node advertise. Source: aws/eks-charts stable/aws-efa-k8s-device-plugin (image
# .../eks/aws-efa-k8s-device-plugin, resource vpc.amazonaws.com/efa).
RESOURCE_PLUGINS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (_re(r"(^|/)aws-efa-k8s-device-plugin$"), "vpc.amazonaws.com/efa", "AWS EFA device plugin"),
)


def resource_plugin(spec: dict[str, Any]) -> tuple[str, str] | None:
    """(resource, plugin name) of the non-GPU device plugin a pod spec runs (None: not one)."""
    for container in sequence(spec.get("containers")):
        repository = image_repository(text(mapping(container).get("image")))
        for pattern, resource, name in RESOURCE_PLUGINS:
            if pattern.search(repository):
                return resource, name
    return None


# What a GPU operator ClusterPolicy deploys on every NVIDIA GPU node (with spec.daemonsets.tolerations).
OPERATOR_OPERANDS = StackComponent(
    "the GPU operator's device plugin, GFD, DCGM exporter and validator", NVIDIA, _re(r"$^"), advertises=True
)


def image_repository(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.17.0@sha256:...`` -> ``nvcr.io/nvidia/k8s-device-plugin``."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def _command_line(container: dict[str, Any]) -> str:
    parts = written_words(container) or []  # over the bounds: no command is known
    return " ".join(str(part) for part in parts if isinstance(part, (str, int, float)))


def stack_component(spec: dict[str, Any]) -> StackComponent | None:
    """The GPU infrastructure a pod spec runs, known by its app containers' images (None: not one)."""
    for container in sequence(spec.get("containers")):
        found = container_component(container) if isinstance(container, dict) else None
        if found is not None:
            return found
    return None


def container_component(container: dict[str, Any]) -> StackComponent | None:
    """The GPU infrastructure one container runs, known by its image and command (None: not one)."""
    candidates = _image_components(image_repository(text(container.get("image"))))
    if not candidates:
        return None  # most containers: no component runs their image, and their command line is not read
    command = _command_line(container)
    for component in candidates:
        if component.command is not None and not component.command.search(command):
            continue
        if component.not_command is not None and component.not_command.search(command):
            continue
        return component
    return None


@short_strings_remembered(1024)  # a run and a webhook see few images, each asked by several rules and containers
def _image_components(repository: str) -> tuple[StackComponent, ...]:
    """The components whose image ``repository`` is, in STACK_COMPONENTS' order (their commands tell them apart)."""
    return tuple(component for component in STACK_COMPONENTS if component.image.search(repository))


def taint_text(key: str, value: str, effect: str) -> str:
    """A taint as ``kubectl taint`` writes it: key=value:Effect (key:Effect without a value)."""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"
