"""The cluster as the linted objects will meet it: the inventory, plus what the linted set adds.

Checks ask the resolver, never the inventory or the linted set directly, so "where is claim X /
group Y / class Z, and does its absence prove anything?" has one answer for every rule and for
``explain``. The cluster inventory is shared (one per run, or one per snapshot in the webhook);
the resolver is cheap and belongs to one run (one review).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from gpulint.kube import kai_admission, knative, kserve, kserve_runtimes, mutating_webhooks, networks, spark, trainjob
from gpulint.kube.crd_templates import CrdTemplates, SchemaBound
from gpulint.kube.dra import compute_domain
from gpulint.kube.dra.gates import DraFeatures, gates_in_use
from gpulint.kube.features import DEFAULT as DEFAULT_GATES
from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gangs.members import group_references, joiner_key
from gpulint.kube.gpu_stack import gpu_nodes
from gpulint.kube.kai_admission import KaiAdmission
from gpulint.kube.mutating_webhooks import Scope
from gpulint.kube.pools.kinds import CAPI_GROUP, CAPI_KINDS, KARPENTER_GROUP
from gpulint.kube.pools.labels import any_pooled
from gpulint.kube.queueing.batch_queues import BatchQueue
from gpulint.kube.queueing.kueue_kinds import KUEUE_GROUP, KUEUE_KINDS
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import ClusterModel, NodeInfo, PodRequirements, names_untolerated_taints, pod_requirements
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import effective_pod_spec, read_by_shape
from gpulint.lint.inputs.autopilot_setup import NO_WORDS, ClusterWords
from gpulint.lint.inputs.knative_setup import NO_SETUP, KnativeSetup
from gpulint.lint.inputs.linted_set import LintedObject, LintedSet
from gpulint.lint.inputs.run_setup import RunSetup
from gpulint.lint.world import kai_install, kserve_install, operator_releases
from gpulint.lint.world.chart_releases import ReleaseReader
from gpulint.lint.world.inventory import (
    GANG_OBJECT_KINDS,
    ClusterInventory,
    HasData,
    InventoryObject,
    config_map_keys,
    dra_extended_resources,
    slices_by_node,
)
from gpulint.lint.world.kai_install import FoundKai, kai_installs
from gpulint.lint.world.kinds import KINDS, Declared
from gpulint.lint.world.kserve_install import FoundInstall, kserve_installs
from gpulint.lint.world.operator_releases import knative_installs, kuberay_installs, kueue_installs
from gpulint.lint.world.rejections import Rejection
from gpulint.lint.world.shapes import PodShapes
from gpulint.lint.world.spark_install import SPARK, spark_switches
from gpulint.lint.world.spark_install import Placed as SparkSwitch
from gpulint.lint.world.spark_install import bound as bound_spark

if TYPE_CHECKING:  # the admission models are imported where a run meets a queue or a namespace policy
    from gpulint.kube.dra.devices import DraModel
    from gpulint.kube.pools.autoscaler_taints import TaintConfig
    from gpulint.kube.pools.catalog import Catalog
    from gpulint.kube.pools.gke import ComputeClass, GkeAutoCreation
    from gpulint.kube.pools.model import NodePool, PoolSpec
    from gpulint.kube.queueing.kueue import KueueSetup
    from gpulint.kube.queueing.namespace import LimitItem, Quota

DRA_GROUP = "resource.k8s.io"
# Kinds of the linted set that change the cluster the allocator sees.
_DRA_CLUSTER_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule")
_DRA_CLUSTER = tuple((DRA_GROUP, kind) for kind in _DRA_CLUSTER_KINDS)  # as (group, kind)s
_F = TypeVar("_F")
_R = TypeVar("_R")
_EMPTY = ClusterInventory()
NOTHING_DECLARED = Declared()
NAMESPACE_POLICY_KINDS = ("LimitRange", "ResourceQuota")
NODE_CLASS_GROUP = "karpenter.k8s.aws"  # EC2NodeClass: the zones its pools' nodes launch in
# Kinds of the linted set that describe node pools or their node classes, as (group, kind)s.
_POOL_KINDS = (
    *((CAPI_GROUP, kind) for kind in CAPI_KINDS),
    (KARPENTER_GROUP, "NodePool"),
    (NODE_CLASS_GROUP, "EC2NodeClass"),
)


# pkg/apis/scheduling: the classes the API server creates at start (SystemPriorityClasses), in every cluster
SYSTEM_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})


@dataclass(frozen=True)
class _Generated:
    """An object a controller creates from a linted one (it exists once that one is applied)."""

    data: dict[str, Any]


class Resolver:
    def __init__(
        self,
        linted: LintedSet,
        cluster: ClusterInventory | None = None,
        gates: FeatureGates = DEFAULT_GATES,
        declared: Declared = NOTHING_DECLARED,
        mapped: bool = False,
        setup: RunSetup | None = None,
        pools_elsewhere: str = "",
        indexed: bool = False,
        shapes: PodShapes | None = None,
        pools_left_out: tuple[str, ...] = (),
    ) -> None:
        self.linted = linted
        self.inventory = cluster  # None: no --inventory was given
        self._cluster = cluster if cluster is not None else _EMPTY
        self.gates = gates  # the target cluster's feature gates
        self.declared = declared  # the kinds the configuration declares complete (`complete:`)
        self.mapped = mapped  # the files of one cluster of `clusters:`: what they describe is that cluster
        # why the cluster has node groups no linted file describes (its Terraform creates them); "": none known
        self.pools_elsewhere = pools_elsewhere
        # the test and example folders ("tests/") whose node pools, queues or quotas it does not read: theirs
        self.pools_left_out = pools_left_out
        # the linted files were read with their repository's other files (the repository index, pre-commit):
        # the pools judged by may be in files not linted
        self.indexed = indexed
        self._setup = setup  # the linted files' repositories' own setup files, each reader walked if read
        self._run_facts: dict[str, Any] = {}  # key -> what run_fact() worked out of the linted set and cluster
        self._shapes = shapes  # the webhook snapshot's verdicts by pod shape (lint/world/shapes.py)

    @property
    def knative_setup(self) -> KnativeSetup:
        """The Knative flags the linted files' own repositories turn on (their work trees walked on the first
        read: only a check that finds config-features unknown reads it)."""
        return self._setup.knative_flags if self._setup is not None else NO_SETUP

    @property
    def cluster_words(self) -> ClusterWords:
        """The GKE clusters the linted files' own repositories create, and which are Autopilot (their work trees
        walked on the first read: only autopilot-rejected reads it, on a GPU pod the inventory does not place)."""
        return self._setup.clusters if self._setup is not None else NO_WORDS

    @property
    def gke_known(self) -> bool:
        """The inventory says what cluster it is: GKE (Autopilot or not), or nodes of another kind."""
        return self.gke_auto_creation is not None or (self.inventory is not None and self._cluster.has_nodes)

    @property
    def knative_flags_known(self) -> bool:
        """The linted files or the inventory hold Knative's config-features: every flag is decided by it (keys
        alone: a key the inventory lists is set), and the setup is never read."""
        return self.config_map_keys(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME) is not None

    def run_fact(self, key: str, work: Callable[..., _F], *args: Any) -> _F:
        """``work(*args)``, a fact of this run's linted files read against its cluster (the linted GPU
        DaemonSets' pods), worked out once per ``key`` per resolver. A function and its arguments, not a
        closure: the checks ask on every object."""
        if key in self._run_facts:
            return self._run_facts[key]  # type: ignore[no-any-return]  # stored by this key's own work
        value = self._run_facts[key] = work(*args)
        return value

    # ------------------------------------------------------------------ the nodes (inventory only)

    def cluster_fact(self, key: Any, compute: Callable[[], _F]) -> _F:
        """A fact of the inventory alone (never of the linted files), computed once per inventory: the
        webhook's reviews share it until the inventory changes."""
        if self.inventory is None:  # no inventory: nothing to share (and no shared empty one to fill)
            return compute()
        return self._cluster.fact(key, compute)

    def shape_fact(self, key: Any, compute: Callable[[], _F]) -> _F:
        """A verdict on one pod shape (``key`` holds it) that reads the inventory's nodes and node pools and
        the target cluster's gates, never the linted objects: kept per inventory for the webhook's reviews
        that follow; worked out afresh when the linted files add node pools or node classes."""
        if self.inventory is None or not self.pools_from_inventory:
            return compute()
        return self._cluster.shape_fact((key, self.gates), compute)

    @cached_property
    def pod_shapes(self) -> PodShapes | None:
        """The snapshot's verdicts by pod shape, when the linted set holds Pods alone: the resolver reads the
        linted set by the kinds that describe the cluster (pools, queues, classes, configurations), never a Pod's,
        so every fact it gives a verdict is the snapshot's. None otherwise (and in every CLI run)."""
        if self._shapes is None or self.linted.outlines:
            return None
        return self._shapes if all(not o.ref.group and o.ref.kind == "Pod" for o in self.linted) else None

    @property
    def has_nodes(self) -> bool:
        """Nodes, or node pools that can add them: what the rules that need hardware need."""
        return self._cluster.has_nodes or bool(self.pools)

    @property
    def nodes(self) -> list[NodeInfo]:
        return self._cluster.nodes

    @property
    def node_objects(self) -> dict[str, InventoryObject]:
        return self._cluster.node_objects

    @property
    def pods(self) -> list[InventoryObject]:
        return self._cluster.pods

    @property
    def inventory_rejections(self) -> list[Rejection]:
        """The inventory's objects the API server would refuse, at their fields (never the linted files')."""
        return self._cluster.rejections

    @cached_property  # the inventory's (built once per inventory), chosen once per run: several rules ask
    def model(self) -> ClusterModel:
        """The scheduler model of the inventory's nodes, its reasons worded as the target version's scheduler."""
        if names_untolerated_taints(self.gates.version):
            return self._cluster.model_naming_taints
        return self._cluster.model

    @property
    def published_resources(self) -> frozenset[str]:
        return self._cluster.published_resources

    # ------------------------------------------------------------------ node pools (inventory and linted)

    @cached_property
    def pools_from_inventory(self) -> bool:
        """The node pools are the inventory's alone: the linted files describe no pool and no node class."""
        return not self.linted.has_any(_POOL_KINDS)

    @cached_property
    def pools_unlisted(self) -> list[str]:
        """The node-pool kinds the live inventory reads but could not list now: the cluster's pool set is not
        whole, so "no pool can add a node for it" is unproven (a pool not read may). Machines too: without them a
        cluster-api group's template is not the live node the autoscaler copies."""
        kinds = {kind for _group, kind in _POOL_KINDS if kind != "EC2NodeClass"}  # a NodeClass only narrows zones
        kinds.add("Machine")
        return sorted(self._cluster.unlisted_kinds & kinds)

    @cached_property
    def unseen_node_groups(self) -> list[str]:
        """The node groups Cluster Autoscaler reports (its status ConfigMap) that may still grow and that no pool
        gpulint reads describes: a node they add may have any shape."""
        groups = self._cluster.autoscaler_groups
        if not groups:
            return []
        from gpulint.lint.world.autoscaler_status import describes

        return sorted({g.name for g in groups if g.can_grow and not any(describes(p.spec, g.name) for p in self.pools)})

    @property
    def pools_whole(self) -> bool:
        """The pools read are every node group that may add nodes: every pool API listed, no node group of the
        autoscaler's status that may grow left undescribed, and no GKE Autopilot creating pools for its pods."""
        return not (self.pools_unlisted or self.pools_elsewhere or self.unseen_node_groups or self.autopilot)

    @property
    def pools_gap(self) -> str:
        """Why the pools read may not be every node group ("" when they are), for a finding's note."""
        if self.pools_unlisted:
            return f"the cluster's {', '.join(kind + 's' for kind in self.pools_unlisted)} could not be listed"
        if self.pools_elsewhere:
            return self.pools_elsewhere
        if self.autopilot:
            from gpulint.kube.pools.gke import AUTOPILOT_GAP

            return AUTOPILOT_GAP
        groups = self.unseen_node_groups
        if not groups:
            return ""
        backoff = {g.name for g in self._cluster.autoscaler_groups if g.backoff is not None}
        named = [f"{name} (in backoff after failed scale-up now)" if name in backoff else name for name in groups]
        return f"Cluster Autoscaler may grow node groups whose nodes no pool read describes: {first_and_more(named)}"

    @cached_property
    def pools(self) -> list[NodePool]:
        """Every pool the inventory or the linted files describe, bound to the catalog and the nodes;
        a linted pool replaces the inventory's of the same name (it is the change under review)."""
        specs: dict[tuple[str, ...], PoolSpec] = {(spec.system, spec.name): spec for spec in self._cluster.pool_specs}
        if not specs and self.pools_from_inventory:
            return []  # most runs (and reviews): no pool anywhere
        linted = [obj for kind in CAPI_KINDS for obj in self.linted.of_kind(CAPI_GROUP, kind)]
        linted += self.linted.of_kind(KARPENTER_GROUP, "NodePool")
        if not specs and not linted:
            return []  # most runs: the pool readers and model are not even imported
        from gpulint.kube.pools.readers import node_class_kubelets, node_class_zones, pools_in_document

        found = [spec for obj in linted for spec in pools_in_document(obj.data, obj.file)]
        files: dict[tuple[str, str], set[str]] = {}
        for spec in found:
            files.setdefault((spec.system, spec.name), set()).add(spec.file)
        for spec in found:
            if len(files[(spec.system, spec.name)]) == 1:
                specs[(spec.system, spec.name)] = spec
            else:  # one name in several folders (clusters/dev, clusters/prod): several pools, never one merged;
                # which of them replaces the inventory's is unknown, so the inventory's stays too
                specs[(spec.system, spec.name, spec.file)] = replace(spec, where=spec.file)
        if not specs:
            return []
        zones = dict(self._cluster.node_class_zones)
        kubelets = dict(self._cluster.node_class_kubelets)
        for obj in self.linted.of_kind(NODE_CLASS_GROUP, "EC2NodeClass"):
            zones.update(node_class_zones(obj.data))
            kubelets.update(node_class_kubelets(obj.data))
        for key, spec in specs.items():
            if spec.karpenter and not spec.zones and spec.node_class in zones:
                specs[key] = replace(spec, zones=zones[spec.node_class])  # nodes launch in its subnets' zones
            if spec.karpenter and spec.kubelet is None and spec.node_class in kubelets:
                specs[key] = replace(specs[key], kubelet=kubelets[spec.node_class])  # what its nodes reserve
            elif spec.karpenter and spec.kubelet is not None and spec.node_class in kubelets:
                # a v1beta1 NodePool's own kubelet block, on its NodeClass's disk
                volume = kubelets[spec.node_class].root_volume
                specs[key] = replace(specs[key], kubelet=replace(spec.kubelet, root_volume=volume))
        from gpulint.kube.pools.binding import bind

        catalog = self.pool_catalog
        taints = self.autoscaler_taints
        capi = self._cluster.capi
        members = capi.groups((name, o.data) for name, o in self._cluster.node_objects.items()) if capi else {}
        pools = [bind(spec, catalog, self.nodes, taints, members) for spec in specs.values()]
        groups = self._cluster.autoscaler_groups
        if groups:
            from gpulint.lint.world.autoscaler_status import describes

            for pool in pools:  # its max size and backoff, as the autoscaler that grows it reports them
                pool.group = next((g for g in groups if describes(pool.spec, g.name)), None)
        return pools

    @cached_property
    def gke_auto_creation(self) -> GkeAutoCreation | None:
        """GKE's node pool auto-creation on a GKE cluster (None: the inventory shows none): one whose node pools
        are read, whose nodes carry ``cloud.google.com/gke-nodepool`` (``kubectl get nodes``, the live inventory),
        or whose description says Autopilot. What the inventory says of node auto-provisioning, Autopilot and the
        ComputeClasses, and what the nodes' names show. Only the inventory's proves auto-creation off; a linted
        ComputeClass is not known to be the cluster's (a repository is not one cluster)."""
        from gpulint.kube.pools.gke import GkeAutoCreation, gke_nodes

        nodes = self.cluster_fact("gke nodes", lambda: gke_nodes((node.name, node.labels) for node in self.nodes))
        described = self._cluster.gke
        if not (nodes.gke or (described is not None and described.autopilot) or any(p.spec.gke for p in self.pools)):
            return None
        return (described or GkeAutoCreation()).with_nodes(nodes)

    @property
    def pool_catalog(self) -> Catalog:
        """The instance types pools launch: the operator's catalog (--node-catalog), else the shipped one."""
        from gpulint.lint.world.node_catalog import shipped_catalog

        return self._cluster.catalog or shipped_catalog()

    @cached_property
    def compute_classes(self) -> dict[str, ComputeClass]:
        """GKE's ComputeClasses by name: the inventory's, and the linted ones (a linted class replaces the
        inventory's of the same name: it is the change under review, and its priorities are what GKE would use)."""
        from gpulint.kube.pools.gke import compute_class

        described = self._cluster.gke
        classes = dict(described.classes) if described is not None else {}
        for obj in self.linted.of_kind("cloud.google.com", "ComputeClass"):
            found = compute_class(obj.data)
            if found.name:
                classes[found.name] = found
        return classes

    def namespace_class(self, namespace: str, kind: str) -> str:
        """The default ComputeClass GKE selects for a pod of ``kind`` in ``namespace`` that selects none: the
        Namespace's label, on a GKE cluster ("" when none, or the namespace is not stated or not known)."""
        if not namespace or self.gke_auto_creation is None:
            return ""
        from gpulint.kube.pools.gke import namespace_class

        return namespace_class(self.namespaces.get(namespace), kind == "DaemonSet")

    @property
    def autopilot(self) -> bool:
        """The cluster is GKE Autopilot: GKE creates the nodes its pods need."""
        auto = self.gke_auto_creation
        return auto is not None and auto.autopilot

    @property
    def autoscaler_taints(self) -> TaintConfig:
        """Cluster Autoscaler's taint flags, from the Deployments that run it in the inventory (the cluster whose
        nodes are copied); UNKNOWN when none is read. A linted one (the change under review, or another cluster's:
        a repository is not one cluster) adds the taints it drops but never makes the flags known."""
        from gpulint.kube.pools.autoscaler_taints import UNKNOWN
        from gpulint.lint.world.autoscaler_status import autoscaler_taints

        found = self._cluster.autoscaler_taints or UNKNOWN
        linted = autoscaler_taints(obj.data for obj in self.linted.of_kind("apps", "Deployment"))
        return found if linted is None else replace(found.merged(linted), known=found.known)

    @property
    def cluster_assumed(self) -> bool:
        """No inventory says which cluster the linted workloads deploy to: the node pools, queues and quotas
        the linted files describe are only assumed to be that cluster's (a repository is not one cluster:
        clusters/dev and clusters/prod, a platform repository's example pools)."""
        return self.inventory is None and not self.mapped

    @cached_property
    def linted_pool_files(self) -> list[str]:
        """The linted files that describe the node pools (for the note that names the assumption)."""
        linted = {spec.file for spec in self._cluster.pool_specs}
        return sorted({pool.spec.file for pool in self.pools} - linted)

    @cached_property
    def daemon_specs(self) -> list[dict[str, Any]]:
        """The pod templates of the DaemonSets, linted or the inventory's (a linted one of the same name replaces
        it)."""
        daemons = dict(self._cluster.daemon_sets)
        for obj in self.linted.of_kind("apps", "DaemonSet"):
            daemons[(obj.ref.namespace, obj.ref.name)] = obj.data
        return [mapping(mapping(mapping(data.get("spec")).get("template")).get("spec")) for data in daemons.values()]

    @cached_property
    def daemon_pods(self) -> list[PodRequirements]:
        """The pods of the DaemonSets, linted or the inventory's (a linted one of the same name replaces
        it): on a node a pool adds they take their requests and one of its pods each before any other pod
        (Karpenter's daemonset overhead, resources.RequestsForPods)."""
        return [pod_requirements(effective_pod_spec("DaemonSet", spec)) for spec in self.daemon_specs]

    @cached_property
    def offered_resources(self) -> frozenset[str]:
        """Extended resources a node has or a pool's new node would have (on GKE Autopilot, the GPU nodes it
        creates: GKE's device plugin publishes nvidia.com/gpu)."""
        names = set(self.published_resources)
        for pool in self.pools:
            for template in pool.templates:
                names.update(name for name, amount in template.allocatable.items() if amount > 0)
        if self.autopilot or self._class_gpus():
            names.add("nvidia.com/gpu")
        return frozenset(names)

    def _class_gpus(self) -> bool:
        """On a GKE cluster, a ComputeClass whose priority states a GPU may get GKE to create nodes with it (its
        nodePoolAutoCreation, or node auto-provisioning not known off): GKE's device plugin publishes
        nvidia.com/gpu there (how-to/gpus)."""
        auto = self.gke_auto_creation
        if auto is None:
            return False
        return any(
            (found.auto_creation or auto.autoprovisioning is not False)
            and any(priority.gpu_count for priority in found.priorities)
            for found in self.compute_classes.values()
        )

    @cached_property
    def extended_resource_toleration(self) -> bool:
        """The ExtendedResourceToleration admission plugin is on: configured, or detected on GKE
        (its nodes carry cloud.google.com/gke-* labels; GKE enables the plugin)."""
        configured = self._cluster.extended_resource_toleration
        if configured is not None:
            return configured
        return any(pool.spec.gke for pool in self.pools) or self.cluster_fact(
            "gke-nodes",
            lambda: any(key.startswith("cloud.google.com/gke-") for node in self.nodes for key in node.labels),
        )

    # ------------------------------------------------------------------ what the inventory can prove absent
    # An autoscaled pool at zero nodes is in no snapshot: absence proves something only when the
    # inventory describes every node the cluster can have.

    @cached_property
    def extended_resources_proven(self) -> bool:
        """An extended resource no node publishes is absent from the cluster: some node publishes one
        (its device plugin runs, so the cluster's names are known). An inventory without any (every GPU
        pool scaled to zero, or not captured) proves nothing about GPU resource names."""
        if self.pools:
            return all(p.accelerators_known for p in self.pools) or any(
                is_extended(n) for n in self.published_resources
            )
        return any(is_extended(name) for name in self.published_resources)

    @cached_property
    def node_labels_proven(self) -> bool:
        """A label no node carries is absent from the cluster: no node comes from an autoscaled or
        managed pool (which may add nodes with other labels when it scales up)."""
        if not self.pools_whole:
            return False  # a node group not read may add nodes with any labels
        return bool(self.pools) or not any_pooled(node.labels for node in self.nodes)

    # ------------------------------------------------------------------ DRA objects (both)

    @cached_property
    def slices(self) -> list[HasData]:
        linted = [
            obj
            for obj in self.linted.of_kind(DRA_GROUP, "ResourceSlice")
            if obj.ref.name not in self._cluster._slice_names
        ]  # the same slice in both: once
        return [*self._cluster.slices, *linted]

    @cached_property
    def device_classes(self) -> dict[str, HasData]:
        classes: dict[str, HasData] = {obj.ref.name: obj for obj in self.linted.of_kind(DRA_GROUP, "DeviceClass")}
        classes.update(self._cluster.device_classes)
        return classes

    @cached_property
    def claims(self) -> list[HasData]:
        return [*self._cluster.claims, *self.linted.of_kind(DRA_GROUP, "ResourceClaim")]

    @cached_property
    def taint_rules(self) -> list[HasData]:
        return [*self._cluster.taint_rules, *self.linted.of_kind(DRA_GROUP, "DeviceTaintRule")]

    def dra_extended_resources(self) -> dict[str, str]:
        """Extended resources DRA serves: none while DRAExtendedResource is off (the scheduler ignores the field)."""
        if not self.gates.enabled("DRAExtendedResource"):
            return {}
        return dra_extended_resources(self.device_classes)

    def slices_for_node(self, node_name: str) -> list[dict[str, Any]]:
        return self._slices_by_node.get(node_name, [])

    @cached_property
    def _slices_by_node(self) -> dict[str, list[dict[str, Any]]]:
        return slices_by_node(self.slices)

    @cached_property
    def dra(self) -> DraModel:
        """The inventory's model (built once per inventory) unless the linted set adds devices,
        classes or claims; then a model of both, for this run."""
        from gpulint.kube.dra.devices import DraModel

        features = self.cluster_fact(
            ("dra-features", self.gates), lambda: DraFeatures.of(self.gates, self._gates_in_use)
        )
        if (
            self.inventory is not None
            and not self.linted.has_any(_DRA_CLUSTER)
            and features == self.inventory.dra.features
        ):
            return self.inventory.dra
        return DraModel(self, features=features)

    @property
    def _gates_in_use(self) -> frozenset[str]:
        """DRA gates the inventory's stored slices prove on (never the linted ones: not stored yet)."""
        return self.cluster_fact(
            "dra-gates-in-use", lambda: gates_in_use(located.data.get("spec") for located in self._cluster.slices)
        )

    @property
    def hardware_from_inventory(self) -> bool:
        """The nodes, node pools and devices are the inventory's alone: the linted files add no pool, node class
        or DRA object (what a review of a workload sees: the inventory's facts serve it)."""
        return self.inventory is not None and self.pools_from_inventory and not self.linted.has_any(_DRA_CLUSTER)

    @property
    def dra_if_any(self) -> DraModel | None:
        """The DRA model, or None when neither an inventory nor a linted DRA object gives one."""
        if self.inventory is None and not self.linted.has_any(_DRA_CLUSTER):
            return None
        return self.dra

    # ------------------------------------------------------------------ references between objects

    def find_claim(self, kind: str, namespace: str, name: str) -> HasData | None:
        """A ResourceClaim or ResourceClaimTemplate by name: the inventory's, else the linted one, else
        the template a linted ComputeDomain's controller will create."""
        found: HasData | None = self._cluster.find_claim(kind, namespace, name)
        if found is None:
            found = self.linted.find(DRA_GROUP, kind, namespace, name)
        if found is None and kind == "ResourceClaimTemplate":
            found = self._compute_domain_templates.get((namespace, name)) or self._compute_domain_templates.get(
                ("", name)
            )
        return found

    @cached_property
    def _compute_domain_templates(self) -> dict[tuple[str, str], HasData]:
        """(namespace, name) -> the channel template of each linted ComputeDomain (the controller makes it)."""
        templates: dict[tuple[str, str], HasData] = {}
        for obj in self.linted.of_kind(compute_domain.GROUP, compute_domain.KIND):
            name = compute_domain.template_name(obj.data)
            if name:
                templates[(obj.ref.namespace, name)] = _Generated(compute_domain.generated_template(obj.data))
        return templates

    def find_gang_object(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        found = self._cluster.find_gang_object(group, kind, namespace, name)
        if found is not None:
            return found
        linted = self.linted.find(group, kind, namespace, name)
        return linted.data if linted is not None else None

    def gang_object_keys(self) -> list[tuple[str, str, str, str]]:
        """(group, kind, namespace, name) of every gang object known (for "did you mean")."""
        keys = list(self._cluster.gang_objects)
        keys += [(o.ref.group, o.ref.kind, o.ref.namespace, o.ref.name) for o in self._linted_gang_objects()]
        return keys

    def _linted_gang_objects(self) -> Iterable[LintedObject]:
        return (obj for obj in self.linted if obj.ref.kind in GANG_OBJECT_KINDS)

    def group_joiners(self, key: tuple[str, str, str, str]) -> list[LintedObject]:
        """The objects (linted, then the repository's) whose pods join the group ``key``."""
        return self._joiners.get(key, [])

    @cached_property
    def _joiners(self) -> dict[tuple[str, str, str, str], list[LintedObject]]:
        found: dict[tuple[str, str, str, str], list[LintedObject]] = {}
        for obj in self.linted:
            keys = {
                joiner_key(ref)
                for site in obj.facts.sites()
                for ref in group_references(obj.facts, site, obj.ref.namespace)
            }
            for key in keys:
                found.setdefault(key, []).append(obj)
        return found

    def gpu_nodes(self, vendor: str = "") -> list[NodeInfo]:
        """The inventory's GPU nodes of ``vendor`` (every vendor's when empty), instance types read in the catalog."""
        from gpulint.lint.world.node_catalog import shipped_catalog

        return gpu_nodes(self.nodes, vendor, (self._cluster.catalog or shipped_catalog()).get)

    def catalog_complete(self, kind: str, file: str) -> bool:
        """The set of ``kind`` is known whole for a reference from ``file``, so a name found nowhere does not
        exist: the inventory lists the kind, or the configuration declares that the linted files hold every
        one (and they are the whole repository, not one object or a partial index). Otherwise the object
        may be made elsewhere (Terraform, an operator, a chart not linted, another overlay)."""
        if self._cluster.lists(kind):
            return True
        return self.linted.complete and self.declared.covers(kind, file)

    def namespaces_of(self, group: str, kind: str, name: str) -> list[str]:
        """The namespaces the linted files and the inventory put an object of ``kind`` named ``name`` in, sorted
        (a copy without a namespace is left out: it lands in whichever namespace it is applied to)."""
        found = {obj.ref.namespace for obj in self.linted.of_kind(group, kind) if obj.ref.name == name}
        return sorted((found | self._cluster.namespaces_of(group, kind, name)) - {""})

    @property
    def reference_proven_absent(self) -> bool:
        """A reference that resolves nowhere is missing only when the linted set is complete (a
        repository, not one object at admission)."""
        return self.linted.complete

    # ------------------------------------------------------------------ the admission layer (both)

    @cached_property
    def kueue(self) -> KueueSetup:
        """Kueue's queues, flavors and cohorts: the linted files' first (about to be applied), then the inventory's."""
        from gpulint.kube.queueing.kueue import KueueSetup

        linted = [obj.data for kind in KUEUE_KINDS for obj in self.linted.of_kind(KUEUE_GROUP, kind)]
        return KueueSetup.of(linted, self._cluster.admission_objects)

    @cached_property
    def _namespace_policies(self) -> dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]]:
        """(kind, namespace) -> (namespace, name) -> LimitRange / ResourceQuota data; a linted object
        replaces the cluster's of the same name (it is about to be applied)."""
        linted = [obj.data for kind in NAMESPACE_POLICY_KINDS for obj in self.linted.of_kind("", kind)]
        if not linted:  # the inventory's alone (every review of an object that is not one): once per inventory
            return self.cluster_fact("namespace policies", lambda: _namespace_policies(self._v1_admission_objects()))
        return _namespace_policies([*self._v1_admission_objects(), *linted])

    def _v1_admission_objects(self) -> list[dict[str, Any]]:
        return [data for data in self._cluster.admission_objects if data.get("apiVersion") == "v1"]

    def limit_items(self, namespace: str) -> list[LimitItem]:
        """The Container items of the namespace's LimitRanges, in name order (the first one's defaults win)."""
        ranges = self._namespace_policies.get(("LimitRange", namespace))
        if not ranges:
            return []
        from gpulint.kube.queueing.namespace import limit_items

        return [item for _, data in sorted(ranges.items()) for item in limit_items(data)]

    def quotas(self, namespace: str) -> list[Quota]:
        quotas = self._namespace_policies.get(("ResourceQuota", namespace))
        if not quotas:
            return []
        from gpulint.kube.queueing.namespace import Quota

        return [Quota.of(data) for _, data in sorted(quotas.items())]

    @cached_property
    def _priority_classes(self) -> dict[str, dict[str, Any]]:
        """The PriorityClasses of the linted files and the inventory, by name (the linted files' first)."""
        classes = {obj.ref.name: obj.data for obj in self.linted.of_kind("scheduling.k8s.io", "PriorityClass")}
        for data in self._cluster.admission_objects:
            if data.get("kind") == "PriorityClass" and data.get("apiVersion") == "scheduling.k8s.io/v1":
                classes.setdefault(text(dig(data, "metadata", "name")), data)
        return classes

    def priority_class_missing(self, name: str, file: str) -> bool:
        """No PriorityClass ``name`` exists, as a complete catalog shows (the API server creates the two
        system classes itself, so they always exist)."""
        if name in SYSTEM_PRIORITY_CLASSES or name in self._priority_classes:
            return False
        return self.catalog_complete("PriorityClass", file)

    def workload_priority_class_missing(self, name: str, file: str) -> bool:
        """No Kueue WorkloadPriorityClass ``name`` exists, as a complete catalog shows."""
        linted = {obj.ref.name for obj in self.linted.of_kind(KUEUE_GROUP, "WorkloadPriorityClass")}
        listed = {
            text(dig(data, "metadata", "name"))
            for data in self._cluster.admission_objects
            if data.get("kind") == "WorkloadPriorityClass" and text(data.get("apiVersion")).startswith(KUEUE_GROUP)
        }
        return name not in linted | listed and self.catalog_complete("WorkloadPriorityClass", file)

    def default_priority_class(self, file: str) -> str | None:
        """The name the Priority admission plugin gives a pod without priorityClassName: the PriorityClass
        marked globalDefault (the API server allows one); "" when none is, as far as a complete catalog of
        PriorityClasses shows; None when not known (several marked, or the set not known whole)."""
        classes = self._priority_classes
        defaults = sorted(name for name, data in classes.items() if data.get("globalDefault") is True)
        if len(defaults) == 1:
            return defaults[0]
        if not defaults and self.catalog_complete("PriorityClass", file):
            return ""
        return None

    def inventory_admission_objects(self) -> list[dict[str, Any]]:
        return self._cluster.admission_objects

    def inventory_admission_policies(self) -> list[InventoryObject]:
        """The cluster's ValidatingAdmissionPolicies and their bindings, as the inventory lists them (never the
        linted files': a repository is not one cluster)."""
        return self._cluster.admission_policies

    @cached_property
    def kai_admission(self) -> KaiAdmission | None:
        """What KAI Scheduler's admission webhook writes into pods, from the linted files' KAI Config (the
        operator's singleton is ``kai-config``; None: no Config linted, or several and none of that name)."""
        configs = self.linted.of_kind(kai_admission.GROUP, "Config")
        chosen = next((c for c in configs if c.ref.name == kai_admission.SINGLETON), None)
        if chosen is None and len(configs) == 1:
            chosen = configs[0]
        return kai_admission.admission_of(chosen.data) if chosen is not None else None

    def batch_queues(self, group: str) -> dict[str, BatchQueue]:
        """Volcano or KAI Scheduler queues (cluster-scoped) by name: the linted files' first."""
        found = {q.name: q for q in map(BatchQueue.of, (o.data for o in self.linted.of_kind(group, "Queue")))}
        for data in self._cluster.admission_objects:
            if data.get("kind") == "Queue" and str(data.get("apiVersion", "")).startswith(group + "/"):
                queue = BatchQueue.of(data)
                found.setdefault(queue.name, queue)
        return found

    def lists(self, kind: str) -> bool:
        """The inventory lists this kind: an object of it found nowhere does not exist in the cluster."""
        return self._cluster.lists(kind)

    @cached_property
    def namespaces(self) -> dict[str, dict[str, Any]]:
        found = {obj.ref.name: obj.data for obj in self.linted.of_kind("", "Namespace")}
        found.update(self._cluster.namespaces)
        return found

    @cached_property
    def runtime_classes(self) -> dict[str, dict[str, Any]]:
        found = {obj.ref.name: obj.data for obj in self.linted.of_kind("node.k8s.io", "RuntimeClass")}
        found.update(self._cluster.runtime_classes)
        return found

    def workload_runtime(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """A runtime a TrainJob names, from the linted files or the inventory (a cluster-scoped one
        in any namespace)."""
        scope = "" if kind.startswith("Cluster") else namespace
        linted = self.linted.find(group, kind, scope, name)
        if linted is not None:
            return linted.data
        return self._cluster.find_workload_runtime(group, kind, scope, name)

    def workload_runtime_names(self, group: str, kind: str) -> set[str]:
        """The names of the runtimes of ``kind`` the linted files and the inventory define."""
        names = {obj.ref.name for obj in self.linted.of_kind(group, kind)}
        return names | {key[3] for key in self._cluster.workload_runtimes if key[:2] == (group, kind)}

    def with_runtime(self, data: dict[str, Any]) -> dict[str, Any]:
        """An object with the runtime it names, when found: a TrainJob's pods are that runtime's,
        overridden; an InferenceService's model is merged into its ServingRuntime's container."""
        namespace = str(mapping(data.get("metadata")).get("namespace") or "")
        if data.get("kind") == "TrainJob":
            ref = trainjob.runtime_ref(data)
            if ref is None or ref.group != trainjob.GROUP:
                return data
            runtime = self.workload_runtime(ref.group, ref.kind, namespace, ref.name)
            return data if runtime is None else trainjob.BoundTrainJob(data, runtime)
        if data.get("kind") == "InferenceService" and str(data.get("apiVersion", "")).startswith(kserve.GROUP + "/"):
            name = kserve.runtime_name(data)
            if not name:
                chosen = self._kserve_chosen_runtime(data, namespace)
                return data if chosen is None else kserve.BoundInferenceService(data, chosen, selected=True)
            for kind in kserve.RUNTIME_KINDS:  # GetServingRuntime: the namespace's first
                runtime = self.workload_runtime(kserve.GROUP, kind, namespace, name)
                if runtime is not None:
                    return kserve.BoundInferenceService(data, runtime)
            return data
        if data.get("kind") in spark.KINDS and str(data.get("apiVersion", "")).startswith(spark.GROUP + "/"):
            return bound_spark(data, (*spark_switches(self.linted), *self._held_spark_switches))
        return self._with_crd_templates(data)

    @cached_property
    def _held_spark_switches(self) -> tuple[SparkSwitch, ...]:
        """The Spark operator's webhook switch as the inventory's operator Deployments set it, and as its
        MutatingWebhookConfigurations do when it lists them (whole: the pod webhook is there or nowhere)."""
        found = self._held_releases(SPARK)
        if not self._cluster.lists(mutating_webhooks.KIND):
            return found
        return (*found, (spark.configurations_switch(self._cluster.mutating_webhooks), "the inventory"))

    def kserve_installs(self) -> tuple[FoundInstall, ...]:
        """The KServe releases the linted files install (lint/world/kserve_install.py), and those the
        inventory's controller Deployments run."""
        held = self._held_releases(kserve_install.KSERVE)
        return kserve_installs(self.linted) + tuple(FoundInstall(install, where) for install, where in held)

    def kai_installs(self) -> tuple[FoundKai, ...]:
        """The KAI Scheduler releases the linted files install (lint/world/kai_install.py), and those the
        inventory's Deployments run."""
        held = self._held_releases(kai_install.KAI)
        return kai_installs(self.linted) + tuple(FoundKai(release, where) for release, where in held)

    def knative_installs(self) -> tuple[tuple[str, str], ...]:
        """The Knative Serving releases the linted files install and the inventory's Deployments run, as written."""
        return knative_installs(self.linted) + self._held_releases(operator_releases.KNATIVE)

    def kueue_installs(self) -> tuple[tuple[str, str], ...]:
        """The Kueue releases the linted files install and the inventory's Deployments run, as written."""
        return kueue_installs(self.linted) + self._held_releases(operator_releases.KUEUE)

    def kuberay_installs(self) -> tuple[tuple[str, str], ...]:
        """The KubeRay releases the linted files install and the inventory's Deployments run, as written."""
        return kuberay_installs(self.linted) + self._held_releases(operator_releases.KUBERAY)

    def operator_installs(self, operator: str) -> tuple[tuple[str, str], ...]:
        """The releases of one of operator_releases.READERS' operators the linted files install and the inventory's
        Deployments run, as written."""
        reader = operator_releases.READERS[operator]
        return operator_releases.installs(self.linted, operator) + self._held_releases(reader)

    def _held_releases(self, reader: ReleaseReader[_R]) -> tuple[tuple[_R, str], ...]:
        """What an operator's reader reads of the inventory's Deployments, each with where it is written."""
        return tuple(
            (release, f"{where} of the inventory")
            for data, where in self._cluster.deployments
            for release in reader.deployment(data)
        )

    def _kserve_chosen_runtime(self, isvc: dict[str, Any], namespace: str) -> dict[str, Any] | None:
        """The runtime KServe selects for a predictor whose model names none (kube/kserve_runtimes): among the
        namespace's ServingRuntimes, then the ClusterServingRuntimes - the inventory's when it lists any (the
        cluster's), else the linted ones beside those each KServe release installs."""
        predictor = mapping(dig(isvc, "spec", "predictor"))
        model = predictor.get("model")
        if not isinstance(model, dict):
            return None
        multinode = isinstance(predictor.get("workerSpec"), dict)
        namespaced = [
            obj.data
            for obj in self.linted.of_kind(kserve.GROUP, "ServingRuntime")
            if obj.ref.namespace in (namespace, "") or not namespace
        ]
        held = self._cluster.workload_runtimes.items()
        namespaced += [
            data for key, data in held if key[:2] == (kserve.GROUP, "ServingRuntime") and key[2] == namespace
        ]
        inventory = [data for key, data in held if key[:2] == (kserve.GROUP, "ClusterServingRuntime")]
        cluster = [obj.data for obj in self.linted.of_kind(kserve.GROUP, "ClusterServingRuntime")]
        if inventory:
            return kserve_runtimes.choose(model, namespaced, [*cluster, *inventory], multinode).runtime
        return kserve_runtimes.choose_installed(model, namespaced, cluster, multinode).runtime

    def _with_crd_templates(self, data: dict[str, Any]) -> dict[str, Any]:
        """A custom resource of a kind gpulint has no model of, with the pod templates its CRD's schema
        describes when the linted files or the inventory hold that CRD (kube/crd_templates)."""
        api_version, kind = data.get("apiVersion"), data.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not read_by_shape(api_version, kind):
            return data
        group, _, version = api_version.rpartition("/")
        templates = self._crd_templates.get(group, version, kind)
        return data if templates is None else SchemaBound(data, templates)

    @cached_property
    def _crd_templates(self) -> CrdTemplates:
        """The pod templates of every CRD of the run (linted, then the inventory's): the inventory's alone
        are kept once per inventory."""
        if self.linted.has_kind("apiextensions.k8s.io", "CustomResourceDefinition"):
            return CrdTemplates(crd for crd, _ in self.custom_resource_definitions)
        return self.cluster_fact(
            "crd pod templates", lambda: CrdTemplates(crd for crd, _ in self.custom_resource_definitions)
        )

    def config_map_keys(self, namespace: str, name: str) -> frozenset[str] | None:
        """The keys of a ConfigMap, from the linted files (with what a linted KnativeServing writes into it) or the
        inventory (None: in neither)."""
        linted = self.linted.find("", "ConfigMap", namespace, name)
        written = self._knative_operator_config(namespace, name)
        if linted is not None or written is not None:
            return (config_map_keys(linted.data) if linted is not None else frozenset()) | frozenset(written or ())
        return self._cluster.find_config_map_keys(namespace, name)

    def agreed_keys(self, kind: str, namespace: str, name: str) -> frozenset[str] | None:
        """The ``data`` keys of a ConfigMap or Secret when known for certain: the linted copies of ``namespace`` when
        they agree (a repository may hold one per cluster), else the inventory's ConfigMap (None: two linted copies
        differ, or none is known)."""
        copies = {
            frozenset(str(key) for key in mapping(obj.data.get("data")))
            for obj in self.linted.of_kind("", kind)
            if obj.ref.name == name and obj.ref.namespace == namespace
        }
        if copies:
            return copies.pop() if len(copies) == 1 else None
        return self.config_map_keys(namespace, name) if kind == "ConfigMap" else None

    def network_attachment(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A Multus NetworkAttachmentDefinition's annotations, from the linted files or the inventory."""
        linted = self.linted.find(networks.GROUP, networks.KIND, namespace, name)
        if linted is not None:
            return dict(mapping(mapping(linted.data.get("metadata")).get("annotations")))
        return self._cluster.find_network_attachment(namespace, name)

    def inventory_config_maps(self, namespace: str) -> dict[str, dict[str, str]]:
        """The inventory's ConfigMaps of ``namespace`` whose values it kept (short values only), by name."""
        return self._cluster.config_maps_of(namespace)

    def config_map_data(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A ConfigMap's data when its values are known (from the linted files: the inventory keeps keys only). A
        linted KnativeServing of the namespace writes its spec.config into Knative's ConfigMaps there (the Knative
        operator's ConfigMapTransform, knative.operator_config): its keys win over the linted ConfigMap's."""
        linted = self.linted.find("", "ConfigMap", namespace, name)
        data = None if linted is None else mapping(linted.data.get("data"))
        written = self._knative_operator_config(namespace, name)
        return data if written is None else {**(data or {}), **written}

    def _knative_operator_config(self, namespace: str, name: str) -> dict[str, Any] | None:
        """What the linted KnativeServings of ``namespace`` write into its ConfigMap ``name`` (None: nothing)."""
        found: dict[str, Any] | None = None
        for serving in self.linted.of_kind(knative.OPERATOR_GROUP, knative.OPERATOR_KIND):
            if serving.ref.namespace and namespace and serving.ref.namespace != namespace:
                continue  # the operator installs Serving, and its ConfigMaps, in the KnativeServing's namespace
            written = knative.operator_config(serving.data, name)
            if written is not None:
                found = {**(found or {}), **written}
        return found

    @cached_property
    def custom_resource_definitions(self) -> list[tuple[dict[str, Any], str]]:
        """(CRD, file) from the linted files, then the inventory: the linted one wins a clash."""
        return self.linted_crds + self.inventory_crds

    @cached_property
    def linted_crds(self) -> list[tuple[dict[str, Any], str]]:
        """(CRD, file) from the linted files and the repository around them."""
        return [(obj.data, obj.file) for obj in self.linted.of_kind("apiextensions.k8s.io", "CustomResourceDefinition")]

    @cached_property
    def inventory_crds(self) -> list[tuple[dict[str, Any], str]]:
        """(CRD, file) from the inventory: the cluster's, whatever the file."""
        return [(obj.data, obj.file) for obj in self._cluster.crds]

    def namespace_labels(self, namespace: str) -> dict[str, Any] | None:
        """A namespace's labels as admission matches them (with the name label the API server adds), None when
        neither the linted files nor the inventory hold the Namespace."""
        if not namespace or namespace not in self.namespaces:
            return None
        return {
            **mapping(mapping(self.namespaces[namespace].get("metadata")).get("labels")),
            mutating_webhooks.NAMESPACE_NAME_LABEL: namespace,
        }

    def mutating_webhook(self, name: str) -> dict[str, Any] | None:
        """A webhook of the linted files' or the inventory's MutatingWebhookConfigurations, by its name (the
        linted first)."""
        webhooks = (
            mapping(entry) for found in self._mutating_configurations for entry in sequence(found.get("webhooks"))
        )
        return next((dict(entry) for entry in webhooks if text(entry.get("name")) == name), None)

    @cached_property
    def _mutating_configurations(self) -> list[dict[str, Any]]:
        """The MutatingWebhookConfigurations of the linted files, then the inventory's."""
        linted = [obj.data for obj in self.linted.of_kind(mutating_webhooks.GROUP, mutating_webhooks.KIND)]
        return linted + self._cluster.mutating_webhooks

    @cached_property
    def _resource_names(self) -> dict[tuple[str, str], tuple[str, Scope]]:
        """(group, Kind) -> its resource and scope: the kind table's rows, then the run's CRDs (the linted first)."""
        found = {row.key: (row.plural, Scope.NAMESPACED if row.namespaced else Scope.CLUSTER) for row in KINDS}
        for crd, _ in reversed(self.custom_resource_definitions):
            spec = mapping(crd.get("spec"))
            names = mapping(spec.get("names"))
            group, kind, plural = text(spec.get("group")), text(names.get("kind")), text(names.get("plural"))
            if kind and plural:
                scope = Scope.CLUSTER if spec.get("scope") == "Cluster" else Scope.NAMESPACED
                found[(group, kind)] = (plural, scope)
        return found

    def mutating_webhooks_on_create(self, data: dict[str, Any]) -> list[str]:
        """The mutating webhooks (of the linted files or the inventory) the API server may call when the object is
        created, before it validates the object: what they add is not missing (kube/mutating_webhooks.py)."""
        configurations = self._mutating_configurations
        api_version, kind = text(data.get("apiVersion")), text(data.get("kind"))
        if not configurations or not kind or not api_version:
            return []
        group, _, version = api_version.rpartition("/")
        plural, scope = self._resource_names.get((group, kind), (mutating_webhooks.guessed_plural(kind), Scope.UNKNOWN))
        metadata = mapping(data.get("metadata"))
        namespace_labels = self.namespace_labels(text(metadata.get("namespace")))
        request = mutating_webhooks.CreateRequest(
            group, version, plural, scope, mapping(metadata.get("labels")), namespace_labels
        )
        names = (name for found in configurations for name in mutating_webhooks.mutating_webhooks(found, request))
        return list(dict.fromkeys(names))  # a repository may hold two copies of one configuration

    @cached_property
    def objects(self) -> list[dict[str, Any]]:
        """Every linted object's data (policies that read ``objects``)."""
        return [obj.data for obj in self.linted]


def _namespace_policies(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]]:
    """(kind, namespace) -> (namespace, name) -> the LimitRange / ResourceQuota data among ``objects`` (a later
    object of the same name replaces an earlier one)."""
    found: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
    for data in objects:
        kind = str(data.get("kind", ""))
        if kind not in NAMESPACE_POLICY_KINDS:
            continue
        meta = mapping(data.get("metadata"))
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        found.setdefault((kind, namespace), {})[(namespace, name)] = data
    return found
