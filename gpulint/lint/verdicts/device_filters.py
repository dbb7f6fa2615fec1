"""Filters a GPU-sharing scheduler adds to the kube-scheduler's, judged on the nodes those pass: KAI Scheduler's
GPU-memory predicate and HAMi's and Volcano's vGPU device count. Built once here: gpu-unschedulable and
gpu-sharing word them, `explain` shows them in its capacity step (issue #30)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from gpulint.kube.fields import mapping
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.queueing.batch_queues import KAI_SCHEDULER
from gpulint.kube.refs import Path
from gpulint.kube.resources import scheduler_managed
from gpulint.kube.scheduler import FitResult, NodeInfo, pod_requirements
from gpulint.kube.vgpu import HAMI_GPU, VOLCANO_VGPU, DeviceBound, device_bound
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, containers, template_metadata
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.shared import admitted_pod_spec, gpu_pod_requirements
from gpulint.lint.world.resolver import Resolver

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
    if not isinstance(written, str) or not written.isdigit() or int(written) <= 0:
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
    scheduler's filters pass, leaving out the shares a scheduler extender accounts for (HAMi's gpumem, gpucores:
    on no node, the extender places the pod on the nodes the other filters pass). Only when every such node's
    devices are known (a node where the resource is whole GPUs holds the count: the pod fits there)."""
    pod = gpu_pod_requirements(kind, site, resolver, facts)
    if pod is None:
        return ()
    fit = resolver.model.evaluate(pod)
    if not fit.fits:
        outside = {name for name in pod.requests if scheduler_managed(name)}
        if not outside:
            return ()  # gpu-unschedulable says why
        fit = resolver.model.evaluate(
            replace(pod, requests={k: v for k, v in pod.requests.items() if k not in outside})
        )
        if not fit.fits:
            return ()
    return tuple(_excesses(site, fit, resolver))


def _excesses(site: PodSpecSite, fit: FitResult, resolver: Resolver) -> list[VgpuExcess]:
    found = []
    for container_path, container in containers(site.spec):
        resources = container.get("resources")
        limits = resources.get("limits") if isinstance(resources, dict) else None
        if not isinstance(limits, dict):
            continue
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
    """(node, the resource's per-container bound there) for the nodes that advertise ``resource``."""
    found = []
    for node in nodes:
        if not node.allocatable.get(resource):
            continue
        held = resolver.node_objects.get(node.name)
        found.append((node, device_bound(held.data, node.labels, resource) if held is not None else None))
    return found


def whole_count(raw: object) -> int | None:
    """A positive whole quantity as written (None: not one)."""
    try:
        value = quantity_from_yaml(raw).value
    except QuantityError:
        return None
    return int(value) if value.denominator == 1 and value > Fraction(0) else None
