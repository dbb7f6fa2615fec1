"""What GPU sharing refuses on the nodes the kube-scheduler's filters pass: KAI Scheduler's GPU-memory predicate,
HAMi's and Volcano's vGPU device count, and the device plugin's refusal of several shared units. Built once
here: gpu-unschedulable and gpu-sharing word them, `explain` shows them in its capacity step (issue #30)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from gpulint.kube.device_plugin_config import sharing_settings
from gpulint.kube.fields import counted, mapping
from gpulint.kube.gpu_sharing import MPS, NVIDIA_GPU, NodeResource, node_resource
from gpulint.kube.kai_admission import (
    DEFAULT_TOLERATED,
    FRACTION_ANNOTATIONS,
    RESERVATION_TOLERATES,
    is_fraction_pod,
)
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.queueing.batch_queues import KAI_SCHEDULER
from gpulint.kube.refs import Path
from gpulint.kube.releases import release_of
from gpulint.kube.scheduler import FitResult, NodeInfo, pod_requirements
from gpulint.kube.vgpu import HAMI_GPU, VOLCANO_VGPU, DeviceBound, device_bound
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, containers, template_metadata
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.shared import admitted_pod_spec, gpu_pod_requirements
from gpulint.lint.world.config_maps import device_plugin_configs
from gpulint.lint.world.resolver import Resolver
from gpulint.lint.world.shapes import of_shape

KAI_GPU_MEMORY = "gpu-memory"  # KAI's annotation: MiB of a GPU (pkg/common/constants GpuMemory)
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"  # GPU feature discovery's; KAI's GpuMemoryLabel
# KAI's predicate, as its scheduler words it (pkg/scheduler/plugins/predicates)
KAI_GPU_MEMORY_REFUSAL = "KAI: node is not a gpu node or the gpu memory count on the node was not synced yet"


@dataclass(frozen=True)
class GpuMemoryVerdict:
    """A KAI ``gpu-memory`` pod (MiB of a GPU, no GPU resource) that the kube-scheduler's filters let onto some
    nodes, none of which carries ``nvidia.com/gpu.memory``: KAI places it on none of them."""

    asked: int  # MiB, as the annotation writes it
    usable: tuple[str, ...]  # the nodes the other filters pass
    path: Path  # the annotation


def gpu_memory_verdict(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> GpuMemoryVerdict | None:
    """KAI Scheduler's GPU-memory sharing fits a pod only on a node whose ``nvidia.com/gpu.memory`` label says how
    much its GPUs hold (NVIDIA/KAI-Scheduler v0.17.0 api/node_info getNodeGpuMemory, GpuMemorySynced;
    plugins/predicates). Judged on the inventory's nodes alone (None with node pools: a node a pool adds gets
    its labels from GPU feature discovery), for a pod that asks for no extended resource; ``site`` as it starts."""
    if site.spec.get("schedulerName") != KAI_SCHEDULER or resolver.pools:
        return None
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    written = annotations.get(KAI_GPU_MEMORY)
    if not isinstance(written, str) or counted(written) is None:
        return None  # KAI's binder refuses any other value (gpu_request_validator.go); not this verdict's
    if gpu_pod_requirements(obj.kind, site, resolver, obj.facts) is not None:
        return None  # a GPU resource too: the resource's own verdicts judge it
    pod = pod_requirements(
        admitted_pod_spec(obj.kind, site.spec, resolver), resolver.gates.enabled("TaintTolerationComparisonOperators")
    )
    fit = resolver.model.evaluate(pod)
    if not fit.fits or any(node.labels.get(GPU_MEMORY_LABEL, "").isdigit() for node in fit.fitting):
        return None  # no node at all is another cause; a labelled node can take it
    return GpuMemoryVerdict(
        int(written),
        tuple(node.name for node in fit.fitting),
        (*site.template_path, "metadata", "annotations", KAI_GPU_MEMORY),
    )


@dataclass(frozen=True)
class VgpuExcess:
    """A container asking for more vGPUs than every node it can use has physical GPUs: HAMi and Volcano's vGPU
    plugin give a container at most one vGPU of each (kube/vgpu.py), so they place it on none."""

    container: str
    resource: str
    amount: int
    bounds: tuple[tuple[str, DeviceBound], ...]  # (node, its devices) for the nodes it can use
    path: Path  # the container's limit

    @property
    def most(self) -> tuple[str, DeviceBound]:
        """The node with the most devices (the first such)."""
        return max(self.bounds, key=lambda pair: pair[1].devices)

    @property
    def refusal(self) -> str:
        """The scheduler's words for the node with the most devices."""
        node, bound = self.most
        return bound.refusal(node, self.amount)


def vgpu_excesses(
    kind: str, site: PodSpecSite, resolver: Resolver, facts: ObjectFacts | None = None
) -> tuple[VgpuExcess, ...]:
    """The containers of ``site`` whose vGPU count no node they can use holds. The nodes are those the kube-
    scheduler's filters pass for the pod gpu_pod_requirements judges (without the shares a scheduler extender
    accounts for: HAMi's gpumem, gpucores, which the extender judges on the nodes the other filters pass). Only
    when every such node's devices are known (a node where the resource is whole GPUs holds the count: the pod
    fits there)."""
    if not any(_bounds(resolver, name) for name in (HAMI_GPU, VOLCANO_VGPU)):
        return ()  # no node registered its devices: nothing to bound
    pod = gpu_pod_requirements(kind, site, resolver, facts)
    if pod is None:
        return ()
    fit = resolver.model.evaluate(pod)
    if not fit.fits:
        return ()  # gpu-unschedulable says why
    return tuple(_excesses(site, fit, resolver))


def _limits(site: PodSpecSite) -> Iterator[tuple[Path, dict[str, Any], dict[str, Any]]]:
    """(path, container, its limits) for each container of ``site`` that states limits: what the device plugin
    and the vGPU schedulers allocate from."""
    for container_path, container in containers(site.spec):
        resources = container.get("resources")
        limits = resources.get("limits") if isinstance(resources, dict) else None
        if isinstance(limits, dict):
            yield container_path, container, limits


def _excesses(site: PodSpecSite, fit: FitResult, resolver: Resolver) -> list[VgpuExcess]:
    found = []
    for container_path, container, limits in _limits(site):
        for name in (HAMI_GPU, VOLCANO_VGPU):
            amount = whole_count(limits.get(name)) if name in limits else None
            if amount is None or amount < 2:
                continue
            bounds = _device_bounds(resolver, fit.fitting, name)
            if not bounds or any(bound is None or bound.devices >= amount for _, bound in bounds):
                continue
            known = tuple((node.name, bound) for node, bound in bounds if bound is not None)
            path = (*site.path, *container_path, "resources", "limits", name)
            found.append(VgpuExcess(str(container.get("name") or ""), name, amount, known, path))
    return found


def _device_bounds(
    resolver: Resolver, nodes: list[NodeInfo], resource: str
) -> list[tuple[NodeInfo, DeviceBound | None]]:
    """(node, the resource's per-container bound there) for the nodes that advertise ``resource``; empty when no
    inventory node has a bound for it (nothing to say, and a review skips the walk)."""
    table = _bounds(resolver, resource)
    if not table:
        return []
    found = []
    for node in nodes:
        if not node.allocatable.get(resource):
            continue
        known = table.get(id(node))
        found.append((node, known[1] if known is not None and known[0] is node else _bound(resolver, node, resource)))
    return found


def _bound(resolver: Resolver, node: NodeInfo, resource: str) -> DeviceBound | None:
    held = resolver.node_objects.get(node.name)
    return device_bound(held.data, node.labels, resource) if held is not None else None


def _bounds(resolver: Resolver, resource: str) -> dict[int, tuple[NodeInfo, DeviceBound | None]]:
    """id(node) -> the node and its bound for ``resource``, for the inventory's nodes that advertise it, once per
    inventory (a webhook review would otherwise read every node's registration); empty when none has a bound (no
    vGPU scheduler registered the devices)."""

    def compute() -> dict[int, tuple[NodeInfo, DeviceBound | None]]:
        table = {
            id(node): (node, _bound(resolver, node, resource))
            for node in resolver.nodes
            if node.allocatable.get(resource)
        }
        return table if any(bound is not None for _, bound in table.values()) else {}

    return resolver.cluster_fact(("gpu-sharing", "bounds", resource), compute)


def whole_count(raw: object) -> int | None:
    """A positive whole quantity as written (None: not one)."""
    try:
        value = quantity_from_yaml(raw).value
    except QuantityError:
        return None
    return int(value) if value.denominator == 1 and value > Fraction(0) else None


# The device plugin's refusal of a container asking for more than one shared unit (NVIDIA/k8s-device-plugin
# internal/rm/allocate.go, with failRequestsGreaterThanOne; api/config/v1/config.go: MPS sets it by default)
SHARED_REFUSAL = "the device plugin refuses more than one shared unit per container"


@dataclass(frozen=True)
class _Sharing:
    """What the inventory's nodes share, worked out once per inventory."""

    shared: frozenset[str]  # the resources shared (time-slicing, MPS) on some node
    gpu_mixed: bool  # nvidia.com/gpu is a MIG slice on some nodes, a whole GPU on others


def sharing(resolver: Resolver) -> _Sharing:
    def compute() -> _Sharing:
        advertised = [  # what each node's resources are (None: not an NVIDIA resource, or none of it)
            info
            for node in resolver.nodes
            for name in node.allocatable
            if (info := node_resource(node, name)) is not None
        ]
        gpu_slices = {info.mig_slice for info in advertised if info.resource == NVIDIA_GPU}
        return _Sharing(frozenset(info.resource for info in advertised if info.shared), len(gpu_slices) == 2)

    return resolver.cluster_fact(("gpu-sharing", "sharing"), compute)


def _advertised(resolver: Resolver, resource: str) -> dict[int, tuple[NodeInfo, NodeResource | None]]:
    """id(node) -> the inventory node and what ``resource`` is there, worked out once per inventory (a webhook
    review would otherwise redo it for every node)."""
    return resolver.cluster_fact(
        ("gpu-sharing", resource), lambda: {id(node): (node, node_resource(node, resource)) for node in resolver.nodes}
    )


def on_nodes(resolver: Resolver, nodes: list[NodeInfo], resource: str) -> list[tuple[NodeInfo, NodeResource]]:
    """(node, what ``resource`` is there) for the nodes that advertise it."""
    table = _advertised(resolver, resource)
    found = []
    for node in nodes:
        known = table.get(id(node))
        info = known[1] if known is not None and known[0] is node else node_resource(node, resource)
        if info is not None:
            found.append((node, info))
    return found


@dataclass(frozen=True)
class SharedRequest:
    """A container asking for more than one unit of a resource that is a time-sliced or MPS share on nodes it
    can use: the device plugin allocates per container, so more units are not more GPU, and with
    failRequestsGreaterThanOne it refuses the pod."""

    container: str
    resource: str
    amount: int
    path: Path  # the container's limit
    usable: int  # nodes it can use that advertise the resource
    shared: tuple[NodeInfo, ...]  # of those, the nodes where it is a share
    unit: str  # what one unit is there (the first such node), in words
    strategies: frozenset[str]
    refused: bool | None  # the device plugin refuses it (failRequestsGreaterThanOne); None: not known

    @property
    def everywhere(self) -> bool:
        return len(self.shared) == self.usable

    @property
    def admission_error(self) -> str:
        """The kubelet's words for the pod the device plugin refuses."""
        default = " (the MPS default)" if MPS in self.strategies else ""
        return (
            f"failRequestsGreaterThanOne{default}: the pod fails with UnexpectedAdmissionError (maximum request "
            f"size for shared resources is 1; found {self.amount})"
        )


def shared_requests(site: PodSpecSite, fit: FitResult, resolver: Resolver) -> tuple[SharedRequest, ...]:
    """The containers of ``site`` asking for several units of a resource shared on nodes among ``fit``'s (the
    nodes the pod can use). Listed only for a resource some inventory node shares."""
    shared_somewhere = sharing(resolver).shared  # the candidates are the inventory's nodes
    if not shared_somewhere:
        return ()
    found = []
    for container_path, container, limits in _limits(site):
        for name, raw in limits.items():
            if str(name) not in shared_somewhere:
                continue
            amount = whole_count(raw)
            if amount is None or amount < 2:
                continue
            infos = on_nodes(resolver, fit.fitting, str(name))
            shared = [(node, info) for node, info in infos if info.shared]
            if not shared:
                continue
            strategies = frozenset(info.strategy for _, info in shared)
            found.append(
                SharedRequest(
                    str(container.get("name") or ""),
                    str(name),
                    amount,
                    (*site.path, *container_path, "resources", "limits", name),
                    len(infos),
                    tuple(node for node, _ in shared),
                    shared[0][1].describe(),
                    strategies,
                    _refused(strategies, resolver),
                )
            )
    return tuple(found)


def _refused(strategies: frozenset[str], resolver: Resolver) -> bool | None:
    """Whether the device plugin refuses requests > 1 for these strategies: from the configurations among the
    linted files (config.go: MPS defaults failRequestsGreaterThanOne to true); None: not known."""
    settings = _plugin_settings(resolver)  # only for a multi-unit request of a shared resource: rare
    answers = []
    for strategy in strategies:
        found = [fail for kind, fail in settings if kind == strategy]
        if found:
            answers.append(all(found))
        elif strategy == MPS:
            answers.append(True)
        else:
            return None  # time-slicing without a configuration at hand: the default is false, but who knows
    return all(answers) if answers else None


def _plugin_settings(resolver: Resolver) -> list[tuple[str, bool | None]]:
    settings: list[tuple[str, bool | None]] = []
    for config in device_plugin_configs(resolver.linted):
        strategy, fail = sharing_settings(config)
        if strategy != "none":
            settings.append((strategy, fail is True))
    return settings


@dataclass(frozen=True)
class MigMixture:
    """Under the single MIG strategy nvidia.com/gpu is a MIG slice on some of the nodes a pod can use and a whole
    GPU (or a replica of one) on others: where it lands decides which it gets."""

    slices: tuple[NodeInfo, ...]
    whole: tuple[NodeInfo, ...]
    slice_products: tuple[str, ...]
    whole_products: tuple[str, ...]
    whole_shared: bool  # some whole-GPU node shares it (time-slicing, MPS)

    @property
    def whole_unit(self) -> str:
        return "a whole GPU or a replica of one" if self.whole_shared else "a whole GPU"


def mig_mixture(fit: FitResult, resolver: Resolver) -> MigMixture | None:
    """The mixture on ``fit``'s nodes, for a pod asking for nvidia.com/gpu (None: one kind everywhere)."""
    if not sharing(resolver).gpu_mixed:
        return None
    slices: list[tuple[NodeInfo, NodeResource]] = []
    whole: list[tuple[NodeInfo, NodeResource]] = []
    for node, info in on_nodes(resolver, fit.fitting, NVIDIA_GPU):
        (slices if info.mig_slice else whole).append((node, info))
    if not (slices and whole):
        return None
    return MigMixture(
        tuple(node for node, _ in slices),
        tuple(node for node, _ in whole),
        tuple(sorted({info.product for _, info in slices if info.product})),
        tuple(sorted({info.product for _, info in whole if info.product})),
        any(info.shared for _, info in whole),
    )


@dataclass(frozen=True)
class SharingVerdict:
    """What GPU sharing makes of a pod on the nodes it can use: gpu-sharing words it, `explain` shows it."""

    shared: tuple[SharedRequest, ...] = ()
    mixture: MigMixture | None = None


def sharing_verdict(
    kind: str, site: PodSpecSite, resolver: Resolver, facts: ObjectFacts | None = None
) -> SharingVerdict:
    """On the nodes the pod as written can use (nothing when it fits no node: gpu-unschedulable says why)."""
    key = ("sharing verdict", kind, site.path)
    return of_shape(resolver.pod_shapes, key, (site.spec,), facts, _sharing_verdict, kind, site, resolver, facts)


def _sharing_verdict(kind: str, site: PodSpecSite, resolver: Resolver, facts: ObjectFacts | None) -> SharingVerdict:
    pod = gpu_pod_requirements(kind, site, resolver, facts)
    if pod is None:
        return SharingVerdict()
    fit = resolver.model.evaluate(pod)
    if not fit.fits:
        return SharingVerdict()
    return SharingVerdict(
        shared_requests(site, fit, resolver), mig_mixture(fit, resolver) if NVIDIA_GPU in pod.requests else None
    )


@dataclass(frozen=True)
class ReservationEvicted:
    """A KAI GPU-fraction pod whose every usable node has a NoExecute taint its GPU reservation pod does not
    tolerate (the binder's reservation pod, before KAI v0.17.0, carries none)."""

    key: str  # the annotation that makes it a fraction pod
    fraction: str  # the annotation as written: gpu-fraction 0.25
    taints: tuple[tuple[str, str], ...]  # (node, taint) per usable node, the first such taint
    release: str  # the KAI release and where it is written: "v0.16.2 (HelmRelease kai)"; "" when not known
    proven: bool  # every release the files or the inventory may run lacks the fix (else only some may)


@dataclass(frozen=True)
class _KaiRelease:
    """What the files and the inventory prove of the KAI release: every one found, and whether it has the fix."""

    shown: str
    tolerates: bool | None  # the reservation pod gets the fraction pod's tolerations (None: some may, some not)


def _kai_release(resolver: Resolver) -> _KaiRelease:
    """The linted KAI Config's image tag when it names a release; else every release a KAI install in the files or
    the inventory pins (chart version, image tag), decided only when all are known and agree."""
    kai = resolver.kai_admission
    named = release_of(kai.release) if kai is not None else None
    if kai is not None and named is not None:
        return _KaiRelease(f"{kai.release} (Config {kai.config})", named >= RESERVATION_TOLERATES)
    installs = resolver.kai_installs()
    releases = [release_of(found.release) for found in installs]
    shown = ", ".join(f"{found.release or 'no version'} ({found.where})" for found in installs)
    if not installs or None in releases:
        return _KaiRelease(shown, None)
    fixed = {release >= RESERVATION_TOLERATES for release in releases if release is not None}
    return _KaiRelease(shown, fixed.pop() if len(fixed) == 1 else None)


def kai_reservation_evicted(
    kind: str, site: PodSpecSite, resolver: Resolver, annotations: dict[str, Any]
) -> ReservationEvicted | None:
    """KAI binds a GPU fraction by a reservation pod it places by nodeName (which passes NoSchedule taints) with no
    tolerations (pkg/binder/binding/resourcereservation createResourceReservationPod, v0.13.4 to v0.16.8): the taint
    manager evicts it from a node with a NoExecute taint, so the fraction is never bound there."""
    kai = resolver.kai_admission
    scheduler = kai.scheduler_name if kai is not None else KAI_SCHEDULER
    if site.spec.get("schedulerName") != scheduler or not is_fraction_pod(annotations):
        return None
    release = _kai_release(resolver)
    if release.tolerates:
        return None
    pod = pod_requirements(admitted_pod_spec(kind, site.spec, resolver))
    pod = replace(pod, requests={**pod.requests, NVIDIA_GPU: pod.requests.get(NVIDIA_GPU) or Fraction(1)})
    fit = resolver.model.evaluate(pod)
    if not fit.fits:
        return None  # it fits no GPU node at all: gpu-unschedulable says why
    taints = []
    for node in fit.fitting:
        evicting = next((t for t in node.taints if t.effect == "NoExecute" and t.key not in DEFAULT_TOLERATED), None)
        if evicting is None:
            return None  # a node keeps the reservation pod: KAI may bind the fraction there
        taints.append(
            (node.name, f"{evicting.key}={evicting.value}:NoExecute" if evicting.value else f"{evicting.key}:NoExecute")
        )
    key = next(key for key in FRACTION_ANNOTATIONS if key in annotations)
    return ReservationEvicted(
        key, f"{key} {annotations[key]}", tuple(taints), release.shown, proven=release.tolerates is False
    )
