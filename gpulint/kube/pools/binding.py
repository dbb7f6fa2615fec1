"""A pool bound to the catalog and to the nodes that exist: the templates of the nodes it can add."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction

from gpulint.kube.pools.autoscaler_taints import UNKNOWN, TaintConfig
from gpulint.kube.pools.capi import Group
from gpulint.kube.pools.catalog import Catalog
from gpulint.kube.pools.gce import (
    GCLOUD_MEMORY_SLACK,
    LINUX_IMAGES,
    MachineSize,
    custom_machine,
    template_allocatable,
    template_capacity,
)
from gpulint.kube.pools.kinds import CAPI_KINDS
from gpulint.kube.pools.kubelet import allocatable_with
from gpulint.kube.pools.labels import EKS_AUTO_GROUP, EKS_AUTO_INSTANCE, eks_auto_labels
from gpulint.kube.pools.model import ABSENT, Domain, InstanceType, NodePool, PoolSpec, Template
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import NodeInfo

ZONE = "topology.kubernetes.io/zone"
# Labels every node carries whose value gpulint may not know for a pool: any value is possible.
ALWAYS_SET = (
    ZONE,
    "topology.kubernetes.io/region",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
)
# Karpenter's well-known labels (kubernetes-sigs/karpenter pkg/apis/v1/labels.go WellKnownLabels):
# a pod may ask for them although the NodePool does not define them.
KARPENTER_WELL_KNOWN = (
    "karpenter.sh/nodepool",
    ZONE,
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.sh/capacity-type",
    "node.kubernetes.io/windows-build",
)
# The provider's instance-type labels: a type the catalog describes either has one or has none
# (karpenter-provider-aws sets DoesNotExist for the GPU labels of a type without GPUs).
PROVIDER_PREFIXES = {
    "aws": ("karpenter.k8s.aws/",),
    "azure": ("karpenter.azure.com/",),
    EKS_AUTO_GROUP: (EKS_AUTO_INSTANCE,),
}
# Catalogs that name every extended resource their provider's types offer (karpenter-provider-aws
# models a fixed set: nvidia.com/gpu, amd.com/gpu, aws.amazon.com/neuron, habana.ai/gaudi...), so a
# resource none of their rows offers is one no node of the provider will: the name question is decided.
ACCELERATORS_COMPLETE = ("aws",)


def bind(
    spec: PoolSpec,
    catalog: Catalog,
    nodes: Sequence[NodeInfo],
    taints: TaintConfig = UNKNOWN,
    groups: Mapping[str, Group] | None = None,
) -> NodePool:
    """``taints``: Cluster Autoscaler's taint flags, as its Deployment sets them (UNKNOWN: not read); ``groups``:
    the cluster-api node group of each node the Machines lead to (capi.CapiIndex)."""
    pool = _bind(spec, catalog, nodes, taints, groups or {})
    pool.labels = dict(pool.templates[0].labels) if pool.template_node else _pool_labels(pool)
    pool.accelerators_known = not pool.unknown_types and (
        not pool.open_types or spec.provider in ACCELERATORS_COMPLETE or bool(spec.accelerators)
    )
    pool.accelerators_known = pool.accelerators_known or spec.accelerators_complete
    return pool


def _pool_labels(pool: NodePool) -> dict[str, Domain]:
    """The labels every node of the pool carries whatever its type: the pool's own, narrowed by its
    requirements; the labels of its instance types may take any value."""
    labels = _base_labels(pool.spec)
    if pool.spec.instance_types:
        labels["node.kubernetes.io/instance-type"] = Domain(frozenset(pool.spec.instance_types))
    for template in pool.templates:
        for key in template.labels:
            labels.setdefault(key, Domain(None))
    for requirement in pool.spec.requirements:
        narrowed = labels.get(requirement.key, Domain(None)).narrow(requirement.operator, requirement.values)
        labels[requirement.key] = narrowed if narrowed is not None else ABSENT
    return labels


def _bind(
    spec: PoolSpec, catalog: Catalog, nodes: Sequence[NodeInfo], taints: TaintConfig, groups: Mapping[str, Group]
) -> NodePool:
    members = _members(spec, nodes, groups)
    pool = _from_catalog(spec, catalog, members)
    copied = None if spec.karpenter else _live_template(pool, members, taints)
    if copied is not None:  # the node the autoscaler copies, whatever the catalog or the pool's annotations say
        live, node = copied
        pool.templates = [live]
        pool.template_node, pool.node_taints, pool.flags_known = node.name, taints.kept(node.taints), taints.known
        pool.unknown_types = pool.unvouched_types = ()
        pool.open_types = pool.filtered_out = False
    return pool


def _members(spec: PoolSpec, nodes: Sequence[NodeInfo], groups: Mapping[str, Group]) -> list[NodeInfo]:
    """The pool's nodes: by the label that names the pool, or (cluster-api) by the Machines that own them."""
    if spec.system in CAPI_KINDS:
        key = (spec.system, spec.namespace, spec.name)
        return [n for n in nodes if groups.get(n.name) == key]
    return [n for n in nodes if spec.node_label and n.labels.get(spec.node_label) == spec.name]


# Cluster Autoscaler builds a node group's template from a live node of the group when one is a good candidate,
# and asks the cloud provider's template (the catalog, a scale-from-zero annotation) only when none is
# (kubernetes/autoscaler cluster-autoscaler-1.36.1 processors/nodeinfosprovider/mixed_nodeinfos_processor.go
# Process, isNodeGoodTemplateCandidate): ready, schedulable and not being deleted. A node with a GPU label and
# no GPU allocatable counts as unready (processors/customresources/gpu_processor.go
# FilterOutNodesWithUnreadyResources), and so does a node with a startup taint (utils/taints/taints.go
# FilterOutNodesWithStartupTaints). Karpenter never copies a node: it launches from the instance types.
NODE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
UNREADY_TAINTS = frozenset(
    {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "ToBeDeletedByClusterAutoscaler"}
)


def _live_template(
    pool: NodePool, members: Sequence[NodeInfo], taints: TaintConfig
) -> tuple[Template, NodeInfo] | None:
    """The first of the pool's nodes the autoscaler would copy, as a template, and the node (None: none would).
    Its labels, except those every node sets with its own value (hostname, zone: any value, or the pool's zones),
    and its allocatable: a node whose extended resources (or those the catalog says its type has) are not all
    allocatable yet is passed over, as the autoscaler passes over a node with an unready GPU."""
    offered = {name for t in pool.templates for name, amount in t.allocatable.items() if is_extended(name) and amount}
    # the node's labels only: the pool's own (a scale-from-zero annotation's, a node-template tag's) are what the
    # cloud provider's template would say, and the copy does not read them
    base = {key: domain for key, domain in _base_labels(pool.spec).items() if key in ALWAYS_SET}
    for node in members:
        if node.unschedulable or any(t.key in UNREADY_TAINTS or taints.is_startup(t.key) for t in node.taints):
            continue
        extended = offered | {name for name in node.capacity if is_extended(name)}
        if any(node.allocatable.get(name, Fraction(0)) <= 0 for name in extended):
            continue
        labels = dict(base)
        labels.update({key: Domain.of(value) for key, value in node.labels.items() if key not in ALWAYS_SET})
        name = node.labels.get("node.kubernetes.io/instance-type") or f"(node {node.name})"
        # a node every kubelet lists these for, trimmed of one in the inventory: only its extended resources judged
        exact = all(resource in node.allocatable for resource in NODE_RESOURCES)
        return Template(name, labels, dict(node.allocatable), dict(node.capacity), exact), node
    return None


def _from_catalog(spec: PoolSpec, catalog: Catalog, members: Sequence[NodeInfo]) -> NodePool:
    used: dict[str, Fraction] = {}
    for node in members:
        for name, amount in node.capacity.items():
            used[name] = used.get(name, Fraction(0)) + amount
    base = _base_labels(spec)
    pool = NodePool(spec, [], nodes=len(members), used=used)
    if spec.capacity is not None:  # stated outright (scale-from-zero annotations)
        pool.templates.append(Template("(template)", base, dict(spec.capacity), dict(spec.capacity)))
        return pool
    if spec.instance_types:
        rows: list[InstanceType] = []
        unknown = []
        for name in spec.instance_types:
            row = catalog.get(name)
            if row is not None and (row.vouched_gpus or spec.accelerators_complete):
                rows.append(row)
            else:
                unknown.append(name)  # absent, or no source vouches for what it offers: as the pool states
        pool.templates = _templates(spec, base, rows, pool)
        for name in unknown:
            partial = _gke_sized(spec, base, name, catalog) or _partial(spec, base, name)
            if partial is None:
                pool.unknown_types += (name,)
                if catalog.get(name) is not None:
                    pool.unvouched_types += (name,)
            else:
                pool.templates.append(partial)
        return pool
    if spec.karpenter:
        rows = catalog.of_provider(spec.provider) if spec.provider else list(catalog.rows.values())
        pool.templates = _templates(spec, base, rows, pool)
        pool.filtered_out = not pool.templates and not pool.unvouched_types
        if pool.filtered_out:
            pool.emptied_by, pool.emptied_offers = _emptied_by(spec, rows)
        # Closed only when its requirements name the types or families, all in the catalog: otherwise
        # it may launch a type the catalog does not describe (unknown, never "never fits").
        pool.open_types = not _closed(spec, rows)
        return pool
    partial = _partial(spec, base, "")
    if partial is not None:
        pool.templates.append(partial)
    pool.open_types = True
    return pool


CLOSING_KEYS = {  # requirement keys whose In values pin the instance types, and the catalog label naming them
    "node.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family": "karpenter.k8s.aws/instance-family",
    "eks.amazonaws.com/instance-family": "karpenter.k8s.aws/instance-family",
}


def _closed(spec: PoolSpec, rows: list[InstanceType]) -> bool:
    for requirement in spec.requirements:
        label = CLOSING_KEYS.get(requirement.key)
        if label and requirement.operator == "In" and requirement.values:
            known = {row.labels.get(label) for row in rows}
            if all(value in known for value in requirement.values):
                return True
    return False


def _emptied_by(spec: PoolSpec, rows: Sequence[InstanceType]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The requirements of a pool that allows no catalogued type which, each dropped alone, leave some (as
    written: "key Operator [values]"), and the extended resources of the types the pool names (its instance-type
    and instance-family requirements alone): what it would offer but for its other requirements. Karpenter's
    words for such a pool are "no instance type satisfied resources and requirements"."""
    culprits: list[str] = []
    for index, requirement in enumerate(spec.requirements):
        relaxed = replace(spec, requirements=[r for i, r in enumerate(spec.requirements) if i != index])
        base = _base_labels(relaxed)
        if any(_narrowed(relaxed, base, row) is not None for row in rows):
            values = f" [{', '.join(requirement.values)}]" if requirement.values else ""
            culprits.append(f"{requirement.key} {requirement.operator}{values}")
    naming = [r for r in spec.requirements if r.key in CLOSING_KEYS and r.operator == "In"]
    if not naming:
        return tuple(culprits), frozenset()  # it names no types: what it would offer is anyone's guess
    named = replace(spec, requirements=naming)
    base = _base_labels(named)
    offers = {
        name
        for row in rows
        if _narrowed(named, base, row) is not None
        for name, amount in row.capacity.items()
        if is_extended(name) and amount
    }
    return tuple(culprits), frozenset(offers)


def _base_labels(spec: PoolSpec) -> dict[str, Domain]:
    labels = {key: Domain.of(value) for key, value in spec.labels.items()}
    if spec.zones:
        labels[ZONE] = Domain(frozenset(spec.zones))
    for key in ALWAYS_SET:
        labels.setdefault(key, Domain(None))
    if spec.karpenter:
        for key in KARPENTER_WELL_KNOWN:
            labels.setdefault(key, Domain(None))
    return labels


def _templates(spec: PoolSpec, base: dict[str, Domain], rows: Iterable[InstanceType], pool: NodePool) -> list[Template]:
    """The templates of the rows the pool allows. A row whose accelerators no source vouches for is no
    template: the pool may add such nodes, but what they offer is unknown (never "never fits")."""
    templates = []
    eks_auto = spec.node_class[0] == EKS_AUTO_GROUP
    for row in rows:
        if eks_auto:  # the same EC2 type, its labels as EKS Auto Mode names them
            row = replace(row, labels=eks_auto_labels(row.labels), provider=EKS_AUTO_GROUP)
        labels = _narrowed(spec, base, row)
        if labels is None:
            continue
        if not row.vouched_gpus and not spec.accelerators_complete:
            pool.unknown_types += (row.name,)
            pool.unvouched_types += (row.name,)
            continue
        reserved = (
            row.allocatable if spec.kubelet is None else allocatable_with(row.allocatable, row.capacity, spec.kubelet)
        )
        allocatable = {**reserved, **spec.accelerators}
        capacity = {**row.capacity, **spec.accelerators}
        unjudged: frozenset[str] = frozenset()
        if not spec.karpenter and row.provider == "aws" and row.vouched is not None:
            allocatable, unjudged = _autoscaler_bound(allocatable, capacity)
        # a row with a kubelet's allocatable (pods and all: Karpenter's AWS figures) states all a node offers;
        # one with its capacity only (GCP, Azure) leaves out what no source states (ephemeral-storage, pods)
        listed_only = "pods" not in row.allocatable
        template = Template(row.name, labels, allocatable, capacity, row.exact, row, unjudged, listed_only=listed_only)
        templates.append(_gke_predefined(spec, row, template) or template)
    return templates


def _gke_predefined(spec: PoolSpec, row: InstanceType, template: Template) -> Template | None:
    """A GKE pool's predefined machine type whose vCPUs and memory the shipped catalog states: the cpu and memory
    allocatable of Cluster Autoscaler's GCE template (see gce.py), as for a custom type (None: not such a pool or
    row, or an image whose kernel reservation the template does not estimate: the row's capacity bounds it)."""
    if not spec.gke or row.provider != "gcp" or row.vouched is None or spec.image_type.upper() not in LINUX_IMAGES:
        return None
    if not {"cpu", "memory"} <= row.vouched or row.capacity["cpu"].denominator != 1:
        return None
    size = MachineSize(int(row.capacity["cpu"]), int(row.capacity["memory"]) + GCLOUD_MEMORY_SLACK, maybe_arm=True)
    allocatable = {**template.allocatable, **template_allocatable(size)}
    capacity = {**template.capacity, "cpu": Fraction(size.cpu), "memory": Fraction(template_capacity(size))}
    return replace(
        template, allocatable=allocatable, capacity=capacity, exact=False, bounded=frozenset({"cpu", "memory"})
    )


# Cluster Autoscaler's AWS template takes a node's allocatable to be its capacity: 110 pods, the type's vCPUs and
# memory (cloudprovider/aws/aws_manager.go buildNodeFromTemplate, cluster-autoscaler-1.36.1, "TODO: use proper
# allocatable"). What the node that comes up reserves is its AMI's and launch template's (max pods, kube-reserved,
# eviction thresholds, the disk), which an EKS node group's or an Auto Scaling group's JSON does not show;
# Karpenter's figures in the shipped rows (its own estimate of the VM's overhead, 7.5%) are no bound on it. So
# cpu and memory are bounded by capacity (a pod larger is refused by the autoscaler too), pods by at least the
# autoscaler's 110, and ephemeral-storage is not judged. An operator's --node-catalog row stands as written.
AUTOSCALER_TEMPLATE_PODS = Fraction(110)
_CAPACITY_BOUND = ("cpu", "memory")


def _autoscaler_bound(
    allocatable: dict[str, Fraction], capacity: dict[str, Fraction]
) -> tuple[dict[str, Fraction], frozenset[str]]:
    bound = dict(allocatable)
    for resource in _CAPACITY_BOUND:
        if resource in capacity:
            bound[resource] = capacity[resource]
    if "pods" in bound:
        bound["pods"] = max(bound["pods"], AUTOSCALER_TEMPLATE_PODS)
    return bound, frozenset({"ephemeral-storage"})


def _narrowed(spec: PoolSpec, base: dict[str, Domain], row: InstanceType) -> dict[str, Domain] | None:
    """The labels of a node of type ``row`` in the pool, or None when the pool's labels or
    requirements rule the type out."""
    labels = dict(base)
    for key in row.open_labels:
        labels.setdefault(key, Domain(None))  # carried, with a value no source states: any value
    for key, value in row.labels.items():
        domain = labels.get(key, Domain(None))
        if domain.values is not None and value not in domain.values or value in domain.excluded:
            return None
        labels[key] = Domain.of(value)
    prefixes = PROVIDER_PREFIXES.get(row.provider, ())
    for requirement in spec.requirements:
        key = requirement.key
        if key not in labels and key.startswith(prefixes):
            labels[key] = ABSENT  # the type has no such label (a CPU type's GPU labels)
        domain = labels.get(key, Domain(None))
        if domain is ABSENT:
            if requirement.operator in ("NotIn", "DoesNotExist"):
                continue
            return None
        narrowed = domain.narrow(requirement.operator, requirement.values)
        if narrowed is None or narrowed.empty:
            return None
        labels[key] = narrowed
    return labels


def _gke_sized(spec: PoolSpec, base: dict[str, Domain], name: str, catalog: Catalog) -> Template | None:
    """A GKE pool's machine type whose vCPUs and memory are known but that is no catalog row: a custom type, whose
    name states them, or one of the shipped catalog's machine sizes (an N1 type the pool attaches GPUs to): the
    cpu and memory allocatable of Cluster Autoscaler's GCE template (see gce.py), its GPUs as the pool attaches
    them. Only on the Linux images whose kernel reservation the template estimates (COS, Ubuntu; GKE's default)."""
    if not spec.gke or spec.image_type.upper() not in LINUX_IMAGES:
        return None
    size = custom_machine(name)
    if size is None and name in catalog.sizes:
        listed = catalog.sizes[name]
        size = replace(listed, memory=listed.memory + GCLOUD_MEMORY_SLACK)
    if size is None:
        return None
    template = _partial(spec, base, name)
    if template is None:
        return None
    allocatable = {**template.allocatable, **template_allocatable(size)}
    capacity = {**template.capacity, "cpu": Fraction(size.cpu), "memory": Fraction(template_capacity(size))}
    return replace(template, allocatable=allocatable, capacity=capacity, bounded=frozenset({"cpu", "memory"}))


def _partial(spec: PoolSpec, base: dict[str, Domain], name: str) -> Template | None:
    """A template whose extended resources are known but not its cpu or memory: the pool states its
    accelerators (a GKE pool's accelerators, Cluster Autoscaler's node-template resources)."""
    if not spec.accelerators and not spec.accelerators_complete:
        return None  # nothing known of it (a type absent from the catalog may be a GPU type newer than it)
    labels = dict(base)
    if name:
        labels["node.kubernetes.io/instance-type"] = Domain.of(name)
    resources = {k: v for k, v in spec.accelerators.items() if is_extended(k)}
    return Template(name or "(template)", labels, resources, resources, exact=False)
