"""A node pool as the nodes it can add: label domains, taints, instance types, sizes and limits.

Every reader (Karpenter NodePool, cluster-api MachineDeployment/MachinePool, the JSON of the
clouds' node-pool commands, Cluster Autoscaler node-template tags) produces a ``PoolSpec``;
binding it to the instance-type catalog and to the nodes that already exist gives a ``NodePool``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.pools.kubelet import KubeletSettings
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import Taint


@dataclass(frozen=True)
class Domain:
    """The values a label may take on a node of the pool (``values`` None: any value but ``excluded``)."""

    values: frozenset[str] | None
    excluded: frozenset[str] = frozenset()

    @classmethod
    def of(cls, *values: str) -> Domain:
        return cls(frozenset(values))

    @property
    def empty(self) -> bool:
        return self.values is not None and not (self.values - self.excluded)

    def allowed(self) -> list[str]:
        return sorted((self.values or frozenset()) - self.excluded)

    def narrow(self, operator: str, values: Iterable[str]) -> Domain | None:
        """The domain left once a requirement on this key holds; None when the requirement needs the key absent."""
        wanted = frozenset(values)
        if operator == "In":
            return Domain(wanted if self.values is None else self.values & wanted, self.excluded)
        if operator == "NotIn":
            return Domain(self.values, self.excluded | wanted)
        if operator == "Exists":
            return self
        if operator in ("Gt", "Lt") and len(wanted) == 1:
            if self.values is None:
                return self  # some value may satisfy it
            return Domain(
                frozenset(v for v in self.values if _compares(v, operator, next(iter(wanted)))), self.excluded
            )
        return None  # DoesNotExist, or an operator nothing satisfies

    def describe(self) -> str:
        if self.values is None:
            return f"NotIn [{', '.join(sorted(self.excluded))}]" if self.excluded else "Exists"
        return f"In [{', '.join(self.allowed())}]"


def _compares(value: str, operator: str, bound: str) -> bool:
    try:
        have, want = int(value), int(bound)
    except ValueError:
        return False
    return have > want if operator == "Gt" else have < want


@dataclass(frozen=True)
class InstanceType:
    """One row of the instance-type catalog: what a node of this type carries and offers."""

    name: str
    provider: str  # aws, gcp, azure, or the user's catalog
    labels: Mapping[str, str]  # the well-known labels a node of this type carries
    capacity: Mapping[str, Fraction]
    allocatable: Mapping[str, Fraction]  # after kubelet reservations (as the source computes them)
    gpu_model: str = ""
    gpu_memory: str = ""  # per GPU, as the source gives it
    source: str = ""  # where the figures come from
    # The figures a source vouches for (resource names, "allocatable", "labels"); None: the operator's own
    # catalog (--node-catalog), whose every figure stands. A shipped row's figure no source states is
    # never a reason for "never": see vouched_gpus and exact.
    vouched: frozenset[str] | None = None
    open_labels: tuple[str, ...] = ()  # labels a node of the type carries with a value no source states

    @property
    def vouched_gpus(self) -> bool:
        """Every extended resource it offers (its GPU count above all) is stated by a source."""
        if self.vouched is None:
            return True
        offered = set(self.capacity) | set(self.allocatable)
        return "labels" in self.vouched and all(r in self.vouched for r in offered if is_extended(r))

    @property
    def exact(self) -> bool:
        """Its cpu and memory are stated (by a source, or by the operator's catalog)."""
        if self.vouched is None:
            return True
        return {"cpu", "memory", "allocatable"} <= self.vouched


@dataclass(frozen=True)
class PoolRequirement:
    key: str
    operator: str
    values: tuple[str, ...]


@dataclass
class PoolSpec:
    """A pool as its object or file describes it, before the catalog is consulted."""

    system: str  # "Karpenter NodePool", "MachineDeployment", "GKE node pool", ...
    name: str
    file: str
    path: tuple[Any, ...] = ()  # where in the object the pool is described (for findings on the pool)
    namespace: str = ""  # cluster-api: the namespace of its MachineDeployment, MachineSet or MachinePool
    labels: dict[str, str] = field(default_factory=dict)  # set on every node
    requirements: list[PoolRequirement] = field(default_factory=list)  # Karpenter requirements
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()  # Karpenter: removed once the node is ready; pods need not tolerate
    instance_types: tuple[str, ...] = ()  # named explicitly (empty: from the requirements, or unknown)
    capacity: dict[str, Fraction] | None = None  # a node's capacity stated outright (scale-from-zero annotations)
    min_size: int | None = None
    max_size: int | None = None
    limits: dict[str, Fraction] = field(default_factory=dict)  # Karpenter spec.limits (capacity of all its nodes)
    usage: dict[str, Fraction] = field(default_factory=dict)  # what the pool's nodes hold now (status)
    node_label: str = ""  # the label whose value names the pool on its nodes
    weight: int = 0
    karpenter: bool = False  # Karpenter's compatibility rules (undefined labels, every taint effect)
    gke: bool = False  # GKE: automatic GPU taint, and ExtendedResourceToleration on by default
    image_type: str = ""  # GKE: the node image (COS_CONTAINERD, UBUNTU_CONTAINERD, WINDOWS_LTSC_CONTAINERD...)
    provider: str = ""  # the catalog its instance types come from (aws, gcp, azure; "" unknown)
    zones: tuple[str, ...] = ()
    accelerators: dict[str, Fraction] = field(default_factory=dict)  # extended resources a node offers, stated
    accelerators_complete: bool = False  # ``accelerators`` is all it offers (GKE attaches GPUs only so)
    node_class: tuple[str, str] = ("", "")  # Karpenter: the NodeClass it references (group, name)
    kubelet: KubeletSettings | None = None  # Karpenter: the kubelet settings of its NodeClass (or v1beta1 NodePool)
    # Where it is shown from when another file describes a pool of the same name (two clusters' folders)
    where: str = ""


ABSENT = Domain(frozenset())  # the label is known not to be on the node


@dataclass
class Template:
    """A node the pool can add, of one instance type: the domain of each label it may carry."""

    name: str  # the instance type, or "(template)" for capacity stated outright
    labels: dict[str, Domain]
    allocatable: Mapping[str, Fraction]
    capacity: Mapping[str, Fraction]
    exact: bool = True  # False: only the extended resources are known (cpu, memory... are not)
    instance_type: InstanceType | None = None
    unjudged: frozenset[str] = frozenset()  # resources whose figure bounds nothing: never a reason
    bounded: frozenset[str] = frozenset()  # not exact, yet these figures are known (a GKE custom machine type's)
    # A catalog row's: a native resource it does not list (ephemeral-storage, pods, hugepages on a GCP or Azure
    # row) is one no source states, not one the node lacks
    listed_only: bool = False

    def judged(self, resource: str) -> bool:
        """Whether a request for ``resource`` beyond the template's figure means it cannot hold the pod."""
        if self.listed_only and resource not in self.allocatable and not is_extended(resource):
            return False
        known = self.exact or is_extended(resource) or resource in self.bounded
        return known and resource not in self.unjudged


@dataclass(frozen=True)
class NodeGroupStatus:
    """One node group as Cluster Autoscaler's status ConfigMap reports it (kubernetes/autoscaler
    cluster-autoscaler-1.36.1 clusterstate/api/types.go NodeGroupStatus; the text before 1.30)."""

    name: str  # its id: MachineDeployment/<namespace>/<name>, an Auto Scaling group, a scale set, a MIG URL
    min_size: int | None
    max_size: int | None
    target: int | None  # cloudProviderTarget: the size it asked the cloud for
    registered: int | None = None  # its nodes registered with the API server (nodeCounts.registered.total)
    # scaleUp status Backoff: no scale-up is tried until the backoff ends (None: not in backoff); its
    # backoffInfo "errorCode: errorMessage", or "" when the status gives none (the text before 1.30)
    backoff: str | None = None

    @property
    def can_grow(self) -> bool:
        """Nodes may still join it: fewer registered than its max size, whether asked for already or not (unknown
        sizes: they may). A group in backoff may still grow once the backoff ends."""
        left = self.left()
        if left is not None:
            return left > 0
        return self.max_size is None or self.target is None or self.target < self.max_size

    def left(self) -> int | None:
        """Nodes that may still join for it under its max size (None: unknown): those a scale-up may add and
        those asked for that have not registered yet (cloudProviderTarget above the registered count)."""
        if self.max_size is None or self.registered is None:
            return None
        return max(self.max_size - self.registered, 0)

    @property
    def in_backoff(self) -> bool:
        """Skipped now for its backoff alone: below its max size, it may grow once the backoff ends."""
        return self.backoff is not None and self.left() != 0

    def skipped(self) -> str:
        """Why the autoscaler adds no node to the group now, in its words (core/scaleup/orchestrator
        skippedreasons.go), with what its status says; "" when it may."""
        if self.left() == 0:
            return (
                f"max node group size reached (Cluster Autoscaler's status: maxSize={self.max_size}, "
                f"{self.registered} nodes registered)"
            )
        if self.backoff is not None:
            return "in backoff after failed scale-up" + (f" ({self.backoff})" if self.backoff else "")
        return ""


@dataclass
class NodePool:
    """A pool bound to the catalog and to the nodes it already has."""

    spec: PoolSpec
    templates: list[Template]
    labels: dict[str, Domain] = field(default_factory=dict)  # what every node carries, whatever its type
    unknown_types: tuple[str, ...] = ()  # named by the pool, absent from the catalog (or unvouched_types)
    unvouched_types: tuple[str, ...] = ()  # in the catalog, but no source vouches for what they offer
    open_types: bool = False  # the pool may launch types the catalog does not list
    filtered_out: bool = False  # its requirements leave no catalogued type
    # when filtered out: the requirements that alone do it (each dropped leaves types), as written, and the
    # extended resources those types would offer
    emptied_by: tuple[str, ...] = ()
    emptied_offers: frozenset[str] = frozenset()
    accelerators_known: bool = True  # the extended resources of every node it can add are known
    nodes: int = 0  # its nodes in the inventory
    used: dict[str, Fraction] = field(default_factory=dict)  # capacity of its nodes (what limits count)
    group: NodeGroupStatus | None = None  # its node group in Cluster Autoscaler's status, when one describes it
    # The live node Cluster Autoscaler copies as its template ("": none), with the taints the copy keeps; those
    # are the pool's taints then. ``flags_known``: the autoscaler's taint flags were read (its Deployment).
    template_node: str = ""
    node_taints: tuple[Taint, ...] = ()
    flags_known: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def title(self) -> str:
        where = f" ({self.spec.where})" if self.spec.where else ""
        return f"{self.spec.system} {self.spec.name}{where}"

    @property
    def taints(self) -> tuple[Taint, ...]:
        """The taints of a node it adds, as the autoscaler sees them."""
        return self.node_taints if self.template_node else self.spec.taints

    def taint_proven(self, taint: Taint) -> bool:
        """The autoscaler's template surely carries ``taint``: the pool states it, or the autoscaler's flags are
        known not to drop it (a flag may name any taint as a startup or status taint)."""
        return not self.template_node or self.flags_known or taint in self.spec.taints

    @property
    def known(self) -> bool:
        """Every node it can add is described (no instance type outside the catalog)."""
        return not self.unknown_types and not self.open_types

    def in_use(self, resource: str) -> Fraction:
        """What the pool's nodes hold (its status, or its nodes in the inventory: the larger)."""
        return max(self.spec.usage.get(resource, Fraction(0)), self.used.get(resource, Fraction(0)))

    def remaining(self) -> dict[str, Fraction]:
        """What the limits still allow (Karpenter counts the capacity of the pool's nodes)."""
        return {name: limit - self.in_use(name) for name, limit in self.spec.limits.items()}

    def nodes_left(self) -> int | None:
        """Nodes it may still add under its max size (None: no max known): its own, and the autoscaler's
        status for its group (maxSize less the registered nodes: those asked for but not registered still come)."""
        own = None if self.spec.max_size is None else max(self.spec.max_size - self.nodes, 0)
        status = self.group.left() if self.group is not None else None
        if own is None or status is None:
            return status if own is None else own
        return min(own, status)
