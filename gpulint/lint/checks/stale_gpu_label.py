"""stale-gpu-label: node labels that disagree with the GPUs the node actually publishes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.quantity import amount_or_none
from gpulint.kube.resources import is_gpu
from gpulint.kube.scheduler import NodeInfo, PodRequirements, pod_requirements, resource_list
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("stale-gpu-label", Severity.WARNING, of_pods=True)
RULE_ID = SPEC.id
NVIDIA_DRIVER = "gpu.nvidia.com"
# Labels that describe the GPUs a node has; a workload selecting on them trusts them.
GPU_LABEL_PREFIXES = ("nvidia.com/gpu.", "nvidia.com/mig.", "nvidia.com/cuda.", "amd.com/gpu.", "beta.amd.com/gpu.")
AMD_LABEL_PREFIXES = ("amd.com/gpu.", "beta.amd.com/gpu.")
MEMORY_TOLERANCE = Fraction(1, 10)  # GFD reports usable MiB; the DRA driver total bytes: allow 10 %


@dataclass(frozen=True)
class Staleness:
    path: Path  # within the Node object
    message: str


def _labels(node: dict[str, Any]) -> dict[str, str]:
    metadata = mapping(node.get("metadata"))
    labels = mapping(metadata.get("labels"))
    return {str(k): str(v) for k, v in labels.items()}


def _parse_int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _devices(slice_spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Devices of a ResourceSlice with attributes flattened (v1/v1beta2 flat, v1beta1 under ``basic``)."""
    out: list[dict[str, Any]] = []
    for device in sequence(slice_spec.get("devices")):
        if isinstance(device, dict):
            basic = device.get("basic")
            out.append(basic if isinstance(basic, dict) else device)
    return out


def _attribute(device: dict[str, Any], name: str) -> Any:
    attributes = mapping(device.get("attributes"))
    value = attributes.get(name) or attributes.get(f"{NVIDIA_DRIVER}/{name}")
    if isinstance(value, dict):
        for kind in ("string", "int", "bool", "version"):
            if kind in value:
                return value[kind]
    return None


def _capacity(device: dict[str, Any], name: str) -> Fraction | None:
    capacity = mapping(device.get("capacity"))
    value = capacity.get(name)
    if isinstance(value, dict):
        value = value.get("value")
    return amount_or_none(value)


def _gpu_amounts(raw: Any, gpu_resources: tuple[str, ...]) -> dict[str, Fraction]:
    """The GPU resources of a node's ResourceList as quantities (the only ones this rule reads)."""
    return resource_list({name: value for name, value in mapping(raw).items() if is_gpu(str(name), gpu_resources)})


def node_staleness(
    node: dict[str, Any],
    slices: list[dict[str, Any]],
    gpu_resources: tuple[str, ...] = (),
    slices_unknown: bool = False,
) -> list[Staleness]:
    """``slices_unknown``: the NVIDIA DRA driver serves the cluster's GPUs but the inventory does not list
    ResourceSlices, so a node publishing no nvidia.com/gpu may well publish its GPUs in a slice."""
    labels = _labels(node)
    status = mapping(node.get("status"))
    capacity = _gpu_amounts(status.get("capacity"), gpu_resources)
    allocatable = _gpu_amounts(status.get("allocatable"), gpu_resources)
    nvidia_slices = [s for s in slices if s.get("driver") == NVIDIA_DRIVER]
    found: list[Staleness] = []

    nvidia_label = next(
        (
            k
            for k in ("nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.present")
            if k in labels and labels[k] not in ("", "false", "0")
        ),
        None,
    )
    nvidia_published = any(
        amount > 0
        for name, amount in capacity.items()
        if name.startswith("nvidia.com/gpu") or name.startswith("nvidia.com/mig-")
    )
    if nvidia_label and not nvidia_published and not nvidia_slices and not slices_unknown:
        found.append(
            Staleness(
                ("metadata", "labels", nvidia_label),
                f"labelled {nvidia_label}={labels[nvidia_label]} but the node advertises no "
                "nvidia.com/gpu and no gpu.nvidia.com ResourceSlice: the device plugin or DRA driver "
                "is not running there, or the labels are stale",
            )
        )
    # the first AMD GPU label by name ('in' before startswith: a node has many labels, few of them AMD's)
    amd_label = min((k for k in labels if "amd.com/gpu." in k and k.startswith(AMD_LABEL_PREFIXES)), default=None)
    if amd_label and capacity.get("amd.com/gpu", Fraction(0)) <= 0:
        found.append(
            Staleness(
                ("metadata", "labels", amd_label),
                f"labelled {amd_label}={labels[amd_label]} but the node advertises no amd.com/gpu: "
                "the ROCm device plugin is not running there, or the labels are stale",
            )
        )

    count = _parse_int(labels.get("nvidia.com/gpu.count"))
    mig = labels.get("nvidia.com/mig.strategy", "none")
    if count is not None and mig in ("", "none") and nvidia_published:
        replicas = max(_parse_int(labels.get("nvidia.com/gpu.replicas")) or 1, 1)
        resource = "nvidia.com/gpu.shared" if capacity.get("nvidia.com/gpu.shared") else "nvidia.com/gpu"
        advertised = capacity.get(resource)
        if advertised is not None and advertised != count * replicas:
            sharing = f" x {replicas} replicas" if replicas > 1 else ""
            found.append(
                Staleness(
                    ("metadata", "labels", "nvidia.com/gpu.count"),
                    f"nvidia.com/gpu.count={count}{sharing} but the node's capacity is "
                    f"{advertised} {resource}: the label is stale (GPU Feature Discovery not "
                    "re-run) or devices are missing",
                )
            )

    for resource, total in sorted(capacity.items()):  # GPU resources only
        if resource in allocatable and allocatable[resource] < total:
            found.append(
                Staleness(
                    ("status", "allocatable", resource),
                    f"{resource}: capacity {total} but allocatable {allocatable[resource]}: "
                    f"{total - allocatable[resource]} device(s) are unhealthy or withheld by the "
                    "device plugin; workloads sized for the full node will not fit",
                )
            )

    gpus = [d for s in nvidia_slices for d in _devices(s) if _attribute(d, "type") in (None, "gpu")]
    product = labels.get("nvidia.com/gpu.product")
    names = {str(_attribute(d, "productName")).replace(" ", "-") for d in gpus if _attribute(d, "productName")}
    if product and names and product.removesuffix("-SHARED") not in names:
        found.append(
            Staleness(
                ("metadata", "labels", "nvidia.com/gpu.product"),
                f"nvidia.com/gpu.product={product} but the node's ResourceSlice publishes "
                f"{', '.join(sorted(names))}: a workload selecting on the label lands on a different "
                "GPU than it asked for",
            )
        )
    memory = _parse_int(labels.get("nvidia.com/gpu.memory"))
    sizes = {c for c in (_capacity(d, "memory") for d in gpus) if c}
    if memory and sizes:
        labelled = Fraction(memory) * 2**20
        if all(abs(size - labelled) > size * MEMORY_TOLERANCE for size in sizes):
            shown = ", ".join(f"{int(size / 2**20)} MiB" for size in sorted(sizes))
            found.append(
                Staleness(
                    ("metadata", "labels", "nvidia.com/gpu.memory"),
                    f"nvidia.com/gpu.memory={memory} (MiB) but the node's ResourceSlice publishes GPUs with {shown}",
                )
            )
    return found


def nvidia_slices_unlisted(resolver: Resolver) -> bool:
    """A DeviceClass selects the NVIDIA DRA driver's devices while no ResourceSlice list is known: the
    driver, not the device plugin, may publish the GPUs (nvidia.com/gpu.present without nvidia.com/gpu is
    then no evidence of stale labels)."""
    if resolver.lists("ResourceSlice") or resolver.slices:
        return False
    return any(_selects_nvidia_driver(mapping(c.data.get("spec"))) for c in resolver.device_classes.values())


def _selects_nvidia_driver(spec: dict[str, Any]) -> bool:
    expressions = (
        mapping(mapping(selector).get("cel")).get("expression") for selector in sequence(spec.get("selectors"))
    )
    return any(isinstance(e, str) and NVIDIA_DRIVER in e for e in expressions)


def stale_nodes(
    inventory: Resolver, gpu_resources: tuple[str, ...] = (), unknown: bool = False
) -> dict[str, list[Staleness]]:
    """Nodes whose GPU *labels* are wrong (unhealthy devices alone do not make a label stale)."""
    out = {}
    for name, located in inventory.node_objects.items():
        problems = [
            p
            for p in node_staleness(located.data, inventory.slices_for_node(name), gpu_resources, unknown)
            if p.path[:2] == ("metadata", "labels")
        ]
        if problems:
            out[name] = problems
    return out


def _check_node(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    slices = ctx.resolver.slices_for_node(obj.ref.name)
    unknown = nvidia_slices_unlisted(ctx.resolver)
    for problem in node_staleness(obj.data, slices, ctx.config.gpu_resources, unknown):
        brief, notes = split_long(problem.message)
        yield Diagnostic(RULE_ID, problem.path, brief, on_key=problem.path[0] == "metadata", notes=notes)


def _check_workload(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    gpu_resources = ctx.config.gpu_resources
    unknown = nvidia_slices_unlisted(inventory)  # the linted files may add a DeviceClass: part of the key

    def stale_of() -> dict[str, list[Staleness]]:
        return inventory.cluster_fact(
            ("stale-nodes", gpu_resources, unknown), lambda: stale_nodes(inventory, gpu_resources, unknown)
        )

    if inventory.inventory is not None and not stale_of():
        return  # kept per inventory: with no stale node (the common case) no pod's node selection is read
    for site in obj.facts.sites():
        pod = pod_requirements(site.spec, facts=obj.facts)
        gpu_requirements = [
            r
            for r in pod.requirements()
            if not r.field and r.key.startswith(GPU_LABEL_PREFIXES) and r.operator in ("In", "Exists")
        ]
        if not gpu_requirements:
            continue
        stale = stale_of()
        if not stale:
            continue  # no node has stale labels: the selected nodes need not be listed
        selected = inventory.model.matching_affinity(pod)
        if selected and all(n.name in stale for n in selected) and not _a_pool_serves(pod, inventory):
            example: NodeInfo = selected[0]
            requirement = gpu_requirements[0]
            yield Diagnostic(
                RULE_ID,
                (*site.path, *requirement.path),
                f"selects on '{requirement.description}', but "
                + (
                    "the one node the pod's node selection allows has stale GPU labels"
                    if len(selected) == 1
                    else f"all {len(selected)} nodes the pod's node selection allows have stale GPU labels"
                ),
                notes=(f"e.g. {example.name}: {stale[example.name][0].message}",),
            )


def _a_pool_serves(pod: PodRequirements, inventory: Resolver) -> bool:
    """A node pool may add a node for the pod (its template carrying the labels selected on, or the
    answer unknown): the pod, unschedulable on the stale nodes, triggers the scale-up. A pool set that is
    not whole (a pool API not listed, a node group of the autoscaler's status no pool read describes, or
    nodes of autoscaled pools with no pool read) proves nothing: a pool not read may add a fresh node."""
    if not inventory.node_labels_proven:
        return True
    if not inventory.pools:
        return False
    # imported here: the pool verdicts (and their models) only for an inventory with node pools
    from gpulint.kube.pools.fit import FITS, UNKNOWN
    from gpulint.lint.verdicts.shared import pool_fits, with_extended_resource_tolerations

    fits = pool_fits(with_extended_resource_tolerations(pod, inventory), inventory)
    return any(fit.state in (FITS, UNKNOWN) for fit in fits)


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.kind == "Node" and obj.api_version == "v1":
        yield from _check_node(obj, ctx)
    else:
        yield from _check_workload(obj, ctx)
