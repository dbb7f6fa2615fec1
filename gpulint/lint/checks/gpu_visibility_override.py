"""gpu-visibility-override: GPU visibility variables set by hand, and CUDA images that see every GPU of the node."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gpu_stack import NVIDIA, node_names
from gpulint.kube.lru import short_strings_remembered
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
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.world.config_maps import namespace_config_maps

SPEC = RuleSpec("gpu-visibility-override", Severity.WARNING, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id

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


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    patterns = ctx.config.gpu_resources
    daemon = obj.kind == "DaemonSet"  # GPU infrastructure (device plugin, DCGM exporter) needs every GPU
    pod_has_gpu: bool | None = None  # read for the first container that runs a CUDA image
    for container_path, container in main_containers(site.spec):
        base = (*site.path, *container_path)
        gpus = container_gpus(container, patterns, obj.facts)
        privileged = dig(container, "securityContext", "privileged") is True
        held = namespace_config_maps(ctx, obj.ref.namespace) if _reads_config_maps(container) else {}
        written = env_settings(container, VISIBILITY_VARIABLES, held)
        if written and gpus:  # only the variables the device's runtime reads (not CUDA's on a TPU)
            read = container_family(container, patterns, obj.facts).visibility_variables
            written = {name: entry for name, entry in written.items() if name in read}
            if not written:
                continue  # an image's CUDA variables on another device: nothing to see or override
        ignored = "" if gpus or privileged else _envvar_ignored(ctx)
        if written:  # most containers set neither variable
            yield from _nvidia_visible(container, written, base, gpus, daemon or privileged, patterns, ignored)
            yield from _cuda_visible(container, written, base, gpus)
        if privileged and gpus and not daemon:
            yield from _privileged_sees_all(obj, site, ctx, container, base, gpus, patterns)
        if daemon or privileged or "NVIDIA_VISIBLE_DEVICES" in written:
            continue
        if unknown_env_sources(container, ("NVIDIA_VISIBLE_DEVICES",), held):
            continue  # a Secret or an unheld ConfigMap may set it (to void): unknown
        if not _cuda_image(text(container.get("image"))) or ignored:
            continue  # ignored: the toolkit reads no NVIDIA_VISIBLE_DEVICES of an unprivileged container
        if pod_has_gpu is None:
            pod_has_gpu = _pod_has_devices(site, patterns)
        if not pod_has_gpu:
            yield from _cuda_image_on_gpu_nodes(
                container, base, _gpu_node_reason(site.spec) or _only_gpu_nodes(obj, site, ctx)
            )


# NVIDIA/gpu-operator: ClusterPolicy spec.toolkit.env reaches the container toolkit's DaemonSet, which writes
# accept-nvidia-visible-devices-envvar-when-unprivileged into the runtime's config.toml from
# ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED; false makes the runtime ignore NVIDIA_VISIBLE_DEVICES
# in an unprivileged container (nvidia-container-toolkit: the device list then comes from volume mounts only).
_ENVVAR_GATE = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"


def _envvar_ignored(ctx: CheckContext) -> str:
    """The name of the one linted GPU operator ClusterPolicy whose toolkit ignores NVIDIA_VISIBLE_DEVICES in
    unprivileged containers ("" when there is none, or several)."""

    def find() -> str:
        policies = ctx.resolver.linted.of_kind("nvidia.com", "ClusterPolicy")
        if len(policies) != 1:
            return ""
        toolkit = mapping(dig(policies[0].data, "spec", "toolkit"))
        if toolkit.get("enabled") is False:
            return ""
        for item in sequence(toolkit.get("env")):
            if mapping(item).get("name") == _ENVVAR_GATE and text(mapping(item).get("value")).lower() == "false":
                return policies[0].ref.name
        return ""

    found: str = ctx.memo(("clusterpolicy-envvar-gate",), find)
    return found


def _pod_has_devices(site: PodSpecSite, patterns: tuple[str, ...]) -> bool:
    if sequence(site.spec.get("resourceClaims")):
        return True  # DRA devices: the driver decides what the container sees
    for _, container in containers(site.spec):
        resources = mapping(container.get("resources"))
        if any(
            is_gpu(name, patterns) for section in ("limits", "requests") for name in mapping(resources.get(section))
        ):
            return True
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
) -> Iterator[Diagnostic]:
    found = _variable(written.get("NVIDIA_VISIBLE_DEVICES"))
    if found is None:
        return
    path, value, origin = found
    name = text(container.get("name"))
    if gpus:
        if value.lower() in _NO_GPU:
            shown = value or '""'
            yield Diagnostic(
                RULE_ID,
                (*base, *path),
                f"container '{name}' asks for {gpus} {gpu_resource_name(container, patterns)} but sets "
                f"NVIDIA_VISIBLE_DEVICES={shown}{origin}: the NVIDIA container runtime then exposes no GPU",
                notes=("the allocated GPUs stay idle: remove the variable",),
            )
            return
        yield Diagnostic(
            RULE_ID,
            (*base, *path),
            f"container '{name}' sets NVIDIA_VISIBLE_DEVICES={value}{origin} by hand: it replaces the GPUs the device "
            "plugin allocated",
            notes=(
                "with the device plugin's default envvar strategy the container may use GPUs allocated to other pods",
                "remove the variable: the device plugin sets it",
            ),
        )
        return
    if infrastructure or value.lower() in _NO_GPU:
        return
    if ignored:
        yield Diagnostic(
            RULE_ID,
            (*base, *path),
            f"container '{name}' requests no GPU and sets NVIDIA_VISIBLE_DEVICES={value}{origin}, which the GPU "
            f"operator's ClusterPolicy {ignored} has the toolkit ignore: the container gets no GPU",
            notes=(
                f"ClusterPolicy {ignored} sets the toolkit's ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED="
                "false: an unprivileged container gets only the GPUs the device plugin allocates it "
                "(NVIDIA/aicr#1354: runtimeClassName nvidia and NVIDIA_VISIBLE_DEVICES=all, then nvidia-smi: not found)",
                "request the GPUs it needs",
            ),
        )
        return
    yield Diagnostic(
        RULE_ID,
        (*base, *path),
        f"container '{name}' requests no GPU but sets NVIDIA_VISIBLE_DEVICES={value}{origin}",
        notes=(
            "on a node whose default runtime is nvidia it sees those GPUs without the scheduler counting them, and "
            "competes with the pods they are allocated to (NVIDIA/k8s-device-plugin#61)",
            "request the GPUs it needs, or set NVIDIA_VISIBLE_DEVICES=void",
        ),
    )


def _cuda_visible(
    container: dict[str, Any], written: dict[str, EnvSetting], base: Path, gpus: int | None
) -> Iterator[Diagnostic]:
    found = _variable(written.get("CUDA_VISIBLE_DEVICES"))
    if found is None or not gpus:
        return  # without GPUs the CUDA variable changes nothing the node accounts for
    path, value, origin = found
    name = text(container.get("name"))
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    if not entries or any(not entry.isdigit() for entry in entries):
        if any(entry.upper().startswith(("GPU-", "MIG-")) for entry in entries):
            yield Diagnostic(
                RULE_ID,
                (*base, *path),
                f"container '{name}' sets CUDA_VISIBLE_DEVICES to device UUIDs{origin}, which are usually not the GPUs "
                "allocated to it",
                notes=(
                    "the device plugin allocates whichever GPUs are free, so named devices are usually not the ones "
                    'in the container and CUDA finds none ("no CUDA-capable device is detected")',
                    "remove the variable",
                ),
            )
        return
    indexes = [int(entry) for entry in entries]
    missing = [index for index in indexes if index >= gpus]
    if missing:
        yield Diagnostic(
            RULE_ID,
            (*base, *path),
            f"container '{name}' sets CUDA_VISIBLE_DEVICES={value}{origin} but sees {gpus} GPU{'s' if gpus > 1 else ''} "
            f"(numbered 0 to {gpus - 1} inside the container)",
            notes=(
                f"CUDA stops at the first index that does not exist ({missing[0]}), so the process gets "
                f"{_usable(indexes, gpus)} of them",
                f"remove the variable or use indexes below {gpus}",
            ),
        )
    elif len(set(indexes)) < gpus:
        yield Diagnostic(
            RULE_ID,
            (*base, *path),
            f"container '{name}' holds {gpus} GPUs but CUDA_VISIBLE_DEVICES={value}{origin} shows the process "
            f"{len(set(indexes))}: {gpus - len(set(indexes))} GPUs stay idle while allocated",
            notes=(f"request {len(set(indexes))} GPUs, or remove the variable",),
        )


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


def _fitting_nodes(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> list[NodeInfo]:
    """The inventory's nodes the pod can be scheduled on (none without an inventory of nodes)."""
    resolver = ctx.cluster
    if resolver is None or not resolver.nodes:
        return []
    # only with nodes: a plain check of a file loads no scheduling model (tests/unit/test_startup.py)
    from gpulint.lint.verdicts.shared import admitted_pod_spec

    pod = pod_requirements(
        admitted_pod_spec(obj.kind, site.spec, resolver), resolver.gates.enabled("TaintTolerationComparisonOperators")
    )
    fit = resolver.model.evaluate(pod)
    return fit.fitting if fit.fits else []


def _only_gpu_nodes(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> str:
    """The inventory's answer when the manifest does not select GPU nodes: every node the pod can be scheduled on
    has NVIDIA GPUs (not with node pools: a pool may add a node without them)."""
    resolver = ctx.cluster
    if resolver is None or resolver.pools:
        return ""
    fitting = _fitting_nodes(obj, site, ctx)
    if not fitting:
        return ""
    gpu = {id(node) for node in resolver.gpu_nodes(NVIDIA)}
    if any(id(node) not in gpu for node in fitting):
        return ""
    return f"every node it can be scheduled on has NVIDIA GPUs ({node_names(fitting)})"


def _privileged_sees_all(
    obj: KubeObject,
    site: PodSpecSite,
    ctx: CheckContext,
    container: dict[str, Any],
    base: Path,
    gpus: int,
    patterns: tuple[str, ...],
) -> Iterator[Diagnostic]:
    """A privileged container gets every device of its host, the node's /dev/nvidia* among them, whatever the
    device plugin allocated. Said where the inventory shows a node it can be scheduled on with more of the
    resource than it takes: on a node it fills, it sees only its own."""
    resource = gpu_resource_name(container, patterns, obj.facts)
    if not resource.startswith("nvidia.com/"):
        return
    larger = [node for node in _fitting_nodes(obj, site, ctx) if node.allocatable.get(resource, 0) > gpus]
    if not larger:
        return
    name = text(container.get("name"))
    most = max(int(node.allocatable.get(resource, 0)) for node in larger)
    yield Diagnostic(
        RULE_ID,
        (*base, "securityContext", "privileged"),
        f"container '{name}' asks for {gpus} {resource} but is privileged: it sees every GPU of its node, not just "
        f"the {gpus} allocated to it",
        notes=(
            f"a privileged container gets all of the host's devices: on {node_names(larger)} ({most} {resource}) "
            "nvidia-smi and CUDA list the GPUs allocated to other pods too (NVIDIA/k8s-device-plugin#336, "
            "kubernetes/kubernetes#81256)",
            "drop privileged: true and add the capabilities it needs (securityContext.capabilities.add)",
        ),
        on_key=True,
    )


def _cuda_image_on_gpu_nodes(container: dict[str, Any], base: Path, reason: str) -> Iterator[Diagnostic]:
    """A container without GPUs, without NVIDIA_VISIBLE_DEVICES, running a CUDA image (the caller asks), on GPU
    nodes for ``reason`` (nothing when empty)."""
    image = text(container.get("image"))
    if not reason:
        return
    yield Diagnostic(
        RULE_ID,
        (*base, "image"),
        f"container '{text(container.get('name'))}' requests no GPU but {reason} and runs a CUDA image, "
        "which sets NVIDIA_VISIBLE_DEVICES=all",
        notes=(
            f"the image {image}: where nvidia is the node's default runtime the container sees every GPU of the "
            "node, unaccounted",
            "set NVIDIA_VISIBLE_DEVICES=void in its env (or request the GPUs it uses)",
        ),
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
