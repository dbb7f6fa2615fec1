"""A GKE ComputeClass's priorities as node pools: the nodes GKE may create for a pod of the class.

With ``whenUnsatisfiable: DoNotScaleUp`` a pod selecting the class gets a new node only of a shape one of its
priorities describes: GKE's autoscaler drops the class's node groups that match no priority, and takes the GPU
of the pools it creates from the priority, not from the pod (GoogleCloudPlatform/cluster-autoscaler 7d25050,
2026-08-21: pkg/computeclass/organizer.go organizeByRules, pkg/autoprovisioning/gpu_requests.go and injection.go
GpuRequestGenerator; a priority's GPU count is per node: pkg/computeclass/rules/gpu.go). Each priority is one
candidate pool: its machine type from the catalog (the GCE template's cpu and memory, gce.py), its GPUs as it
states them, its labels as GKE labels the nodes (concepts/about-custom-compute-classes, how-to/gpus; read
2026-12-07). A priority whose nodes gpulint cannot tell (a TPU, a Pod family, an accelerator-optimized family
without its GPU stated, existing node pools it names) leaves the class's answer unknown.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction

from gpulint.kube.pools.binding import bind
from gpulint.kube.pools.catalog import Catalog
from gpulint.kube.pools.gke import CLASS_POOL_SYSTEM, COMPUTE_CLASS, ClassPriority, ComputeClass
from gpulint.kube.pools.model import ABSENT, Domain, NodePool, PoolSpec

GPU = "nvidia.com/gpu"
GPU_LABEL = "cloud.google.com/gke-accelerator"
DRIVER_LABEL = "cloud.google.com/gke-gpu-driver-version"
SPOT_LABEL = "cloud.google.com/gke-spot"
FAMILY_LABEL = "cloud.google.com/machine-family"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# Compute Engine's accelerator-optimized families: their machine types come with GPUs attached, so a priority
# naming one without its GPU may still give some (cloud.google.com/compute/docs/accelerator-optimized-machines,
# read 2026-12-07). Any other family gets a GPU only as a priority states it.
ACCELERATOR_FAMILIES = frozenset({"a2", "a3", "a4", "a4x", "g2", "g4"})


@dataclass(frozen=True)
class ClassPools:
    """The candidate pools of a class's priorities (``pools``), or why they do not decide (``undecided``)."""

    pools: tuple[NodePool, ...] = ()
    undecided: str = ""


def priority_spec(compute_class: ComputeClass, index: int, priority: ClassPriority) -> PoolSpec | None:
    """The pool of the nodes GKE creates for one priority (None: what they offer is not known from it)."""
    if priority.unmodelled or priority.nodepools:
        return None
    family = priority.machine_family or priority.machine_type.partition("-")[0]
    labels = {**dict(compute_class.node_labels), COMPUTE_CLASS: compute_class.name}
    accelerators: dict[str, Fraction] = {}
    if priority.gpu_count is not None:
        labels[GPU_LABEL] = priority.gpu_type
        accelerators[GPU] = Fraction(priority.gpu_count)
    elif not family or family in ACCELERATOR_FAMILIES:
        return None  # any family, or one whose types come with GPUs no priority field states
    if priority.driver_version:
        labels[DRIVER_LABEL] = priority.driver_version
    if priority.spot is True:
        labels[SPOT_LABEL] = "true"
    if family:
        labels[FAMILY_LABEL] = family
    if priority.machine_type:
        labels[INSTANCE_TYPE] = priority.machine_type
    return PoolSpec(
        CLASS_POOL_SYSTEM,
        f"{compute_class.name} priority {index + 1}",
        "",
        labels=labels,
        instance_types=(priority.machine_type,) if priority.machine_type else (),
        accelerators=accelerators,
        accelerators_complete=True,  # its GPUs are the priority's (or none): GKE attaches no other
        gke=True,
        image_type=compute_class.image_type,
        provider="gcp",
    )


def class_pools(
    compute_class: ComputeClass, catalog: Catalog, read: Collection[str], keys: Collection[str]
) -> ClassPools:
    """The candidate pools of the class's priorities, for a pod whose node selection reads ``keys``. ``read``: the
    names of the GKE node pools read (a priority naming node pools refers to those: they answer for themselves)."""
    pools = []
    for index, priority in enumerate(compute_class.priorities):
        if priority.nodepools and not priority.unmodelled:
            missing = [name for name in priority.nodepools if name not in read]
            if missing:
                return ClassPools(undecided=f"its priority {index + 1} names node pools not read: {', '.join(missing)}")
            continue
        spec = priority_spec(compute_class, index, priority)
        if spec is None:
            return ClassPools(undecided=f"what the nodes of its priority {index + 1} offer is not known from it")
        pools.append(_labelled(bind(spec, catalog, []), priority, keys))
    return ClassPools(tuple(pools))


def _labelled(pool: NodePool, priority: ClassPriority, keys: Collection[str]) -> NodePool:
    """The pool's label domains as GKE labels the nodes: Spot or not as the priority says (any, unsaid), no GPU
    label without a GPU, and any value for the labels the pod reads that gpulint does not model (a node label
    of the class's workload separation, GKE's own)."""
    domains: dict[str, Domain] = {}
    if priority.spot is False:
        domains[SPOT_LABEL] = ABSENT
    elif priority.spot is None:
        domains[SPOT_LABEL] = Domain(None)
    if priority.gpu_count is None:
        domains[GPU_LABEL] = ABSENT
    for labels in (pool.labels, *(template.labels for template in pool.templates)):
        for key, domain in domains.items():
            if key not in labels or domain is ABSENT:
                labels[key] = domain
        for key in keys:
            labels.setdefault(key, Domain(None))
    pool.open_types = False  # a node of any machine type GKE picks has the priority's GPUs: judged all the same
    return pool
