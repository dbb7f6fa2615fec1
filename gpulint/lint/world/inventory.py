"""The cluster inventory: what `kubectl get nodes,resourceslices,deviceclasses -o yaml` prints.

Optionally also running Pods (they consume node capacity: the "does not fit now" view)
and ResourceClaims (allocated claims consume devices).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from gpulint.kube.fields import mapping, type_name
from gpulint.kube.lru import LRU
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.queueing.kueue_kinds import KUEUE_KINDS
from gpulint.kube.scheduler import ClusterModel, NodeInfo, pod_requests
from gpulint.kube.validation.errors import DUPLICATE, FieldError
from gpulint.lint.config import Config
from gpulint.lint.errors import InventoryError as InventoryError  # re-exported: raised here
from gpulint.lint.findings import MAX_FILE_FINDINGS, Path
from gpulint.lint.inputs.collect import collect
from gpulint.lint.inputs.loader import LoadProblem, LocatedDocument, collector_paused, detect_encoding, load_bytes
from gpulint.lint.inputs.objects import KubeObject, is_list, is_object, objects_in
from gpulint.lint.inputs.sources import Source, SourceError
from gpulint.lint.inputs.yaml_budget import JSON_BYTES_PER_VALUE, MAX_YAML_NODES, ReadStopped, too_many_values
from gpulint.lint.world.rejections import Rejection, file_rejections

if TYPE_CHECKING:  # the pool model and readers are imported when an inventory is read
    from gpulint.kube.dra.devices import DraModel
    from gpulint.kube.pools.autoscaler_taints import TaintConfig
    from gpulint.kube.pools.capi import CapiIndex
    from gpulint.kube.pools.catalog import Catalog
    from gpulint.kube.pools.gke import GkeAutoCreation
    from gpulint.kube.pools.kubelet import KubeletSettings
    from gpulint.kube.pools.model import PoolSpec
    from gpulint.lint.world.autoscaler_status import NodeGroupStatus

CAPI_MEMBER_KINDS = ("Machine", "MachineSet", "MachinePool")  # the links from a node to its cluster-api group
GANG_OBJECT_KINDS = ("Workload", "PodGroup", "CompositePodGroup")
# Objects of the admission layer: Kueue's queues and flavors, namespace quotas and limits.
ADMISSION_KINDS = (
    *KUEUE_KINDS,
    "WorkloadPriorityClass",
    "ResourceQuota",
    "LimitRange",
    "Queue",  # Volcano's and KAI's
    "PriorityClass",
)
# The cluster's own admission policies: what it denies is refused (lint/checks/api_rejected)
ADMISSION_POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
ADMISSION_POLICY_API = "admissionregistration.k8s.io/v1"
# The runtimes TrainJobs and InferenceServices name
WORKLOAD_RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime", "ServingRuntime", "ClusterServingRuntime")
INVENTORY_KINDS = (
    "Node",
    "ResourceSlice",
    "DeviceClass",
    "DeviceTaintRule",
    "Pod",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Namespace",
    "RuntimeClass",
    "ConfigMap",
    "CustomResourceDefinition",
    *GANG_OBJECT_KINDS,
    *ADMISSION_KINDS,
    *WORKLOAD_RUNTIME_KINDS,
    *ADMISSION_POLICY_KINDS,
    "NetworkAttachmentDefinition",
    "DaemonSet",  # the cluster's: their pods land first on a node a pool adds (Karpenter's daemonset overhead)
    "MutatingWebhookConfiguration",  # what they may add before the schema check is not missing
)
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
DUPLICATE_CHECKED_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")  # read once per name
# An inventory is what the user's own cluster holds: `kubectl get nodes -o yaml` of 20,000 nodes
# is ~250 MB, well past the limit for a manifest. Still bounded: a 10 GB file is refused unread.
MAX_INVENTORY_FILE_BYTES = 1024 * 1024 * 1024
# Values, lists and maps an inventory file may hold, counted before any reader runs. JSON and kubectl's YAML
# are read without positions, at most ~70 bytes a value (docs/limits.md, measured): ~1.7 GiB, where a
# 20,000-node `kubectl get nodes -o json` holds ~15,000,000. Anything else goes through the loader, which keeps
# a position on every value (~400 bytes): it is held to the manifests' MAX_YAML_NODES (~1.9 GiB).
MAX_INVENTORY_NODES = 25_000_000
# Objects an inventory file may hold (documents and List items): what one live list may hold (twice the 150,000 pods
# Kubernetes is tested at). Each costs ~500 bytes as an object and a finding when it is malformed (~5 KB), whatever
# its values: 2,000,000 `{}` items (6 MB, 2 million values) took 10 GiB in `gpulint inventory`. Counted as a List's
# items are read, before any object is made of them.
MAX_INVENTORY_OBJECTS = 300_000
INVENTORY_LIMIT_NAME = "inventory file size"
TERMINAL_PHASES = ("Succeeded", "Failed")
# An inventory's ConfigMap is kept with its values when it has at most MAX_KEPT_KEYS values of at most
# MAX_KEPT_VALUE characters each (an environment's settings); one holding a file or a certificate is not.
MAX_KEPT_VALUE = 1024
MAX_KEPT_KEYS = 256
MAX_KEPT_TOTAL = 16 * 1024 * 1024  # characters of ConfigMap values kept per inventory; past it, values are unknown
INVENTORY_FACTS = 64  # facts kept per inventory (each may hold a value per node)
SHAPE_FACTS = 1024  # verdicts on pod shapes kept per inventory (each small: a few findings' words)
_F = TypeVar("_F")


# Sees an inventory file's data: (file, what, data), what being "document", "item" (a List's, before it is
# compacted) or "object" (as objects_in finds them)
Inspect = Callable[[str, str, Any], None]


@dataclass
class InventoryObject:
    """An inventory object and the file it came from."""

    data: dict[str, Any]
    file: str


@dataclass
class ClusterInventory:
    """What ``--inventory`` (or the webhook's live watch) says the cluster holds; never the linted files."""

    nodes: list[NodeInfo] = field(default_factory=list)
    node_objects: dict[str, InventoryObject] = field(default_factory=dict)
    slices: list[InventoryObject] = field(default_factory=list)
    device_classes: dict[str, InventoryObject] = field(default_factory=dict)
    pods: list[InventoryObject] = field(default_factory=list)
    claims: list[InventoryObject] = field(default_factory=list)
    taint_rules: list[InventoryObject] = field(default_factory=list)  # DeviceTaintRules (DRADeviceTaints)
    claim_templates: dict[tuple[str, str], InventoryObject] = field(default_factory=dict)  # (namespace, name)
    named_claims: dict[tuple[str, str], InventoryObject] = field(default_factory=dict)
    # (api group, kind, namespace, name) -> object: native, coscheduling and Volcano groups
    gang_objects: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    runtime_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (api group, kind, namespace, name) -> a training runtime (Kubeflow Trainer)
    workload_runtimes: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    admission_objects: list[dict[str, Any]] = field(default_factory=list)  # ADMISSION_KINDS, in file order
    admission_policies: list[InventoryObject] = field(default_factory=list)  # ADMISSION_POLICY_KINDS, in file order
    daemon_sets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (namespace, name)
    crds: list[InventoryObject] = field(default_factory=list)  # their schemas validate the linted custom resources
    mutating_webhooks: list[dict[str, Any]] = field(default_factory=list)  # MutatingWebhookConfigurations
    # (the Deployment, "Deployment namespace/name"): the inventory's Deployments, whose images and labels name the
    # releases of the operators they run (chart_releases.ReleaseReader)
    deployments: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    # (namespace, name) -> a Multus NetworkAttachmentDefinition's annotations (its CNI config is not kept)
    network_attachments: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # (namespace, name) -> the ConfigMap's keys (its values are not kept: they may be large)
    config_map_keys: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    # (namespace, name) -> the ConfigMap's short string values (MAX_KEPT_VALUE): what a container's env reads
    config_map_values: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # Kinds the inventory lists (even when it lists none of them, a live watch says so): for these,
    # an object absent from the inventory is absent from the cluster.
    listed_kinds: set[str] = field(default_factory=set)
    # Kinds a live inventory reads whose API it could not list now (forbidden, a conversion webhook down):
    # what it holds of them is the last listing's, and it may miss some (the node pools: a pod may fit one).
    unlisted_kinds: frozenset[str] = frozenset()
    sources: tuple[str, ...] = ()
    # Node pools (Karpenter NodePools, MachineDeployments, the clouds' node-pool JSON): the nodes that can exist
    pool_specs: list[PoolSpec] = field(default_factory=list)
    node_class_zones: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)  # EC2NodeClass subnets
    node_class_kubelets: dict[tuple[str, str], KubeletSettings] = field(default_factory=dict)  # EC2NodeClass kubelet
    # The node groups Cluster Autoscaler's status ConfigMap reports (lint/world/autoscaler_status.py)
    autoscaler_groups: list[NodeGroupStatus] = field(default_factory=list)
    # Cluster Autoscaler's taint flags, from the Deployments that run it (None: none read)
    autoscaler_taints: TaintConfig | None = None
    # cluster-api Machines, MachineSets and MachinePools: which node group each node belongs to (None: none read)
    capi: CapiIndex | None = None
    # GKE's node pool auto-creation: the cluster's node auto-provisioning and its ComputeClasses (None: none read)
    gke: GkeAutoCreation | None = None
    catalog: Catalog | None = None  # the instance-type catalog (None: the shipped one)
    extended_resource_toleration: bool | None = None  # the admission plugin is on (None: detect)
    # Objects of the inventory files the API server would refuse, at their fields (lint/world/rejections.py); the
    # webhook's live watch does not validate what it reads (the cluster stored it).
    rejections: list[Rejection] = field(default_factory=list)
    _slice_names: set[str] = field(default_factory=set)
    _kept_value_chars: int = 0  # of config_map_values: bounded by MAX_KEPT_TOTAL
    # The DRA objects read by (kind, name), with the file and spec of the copy read: a cluster holds one object
    # per name, so a second copy is not read, and one with another spec is reported (second_copy)
    _first_copies: dict[tuple[str, str], tuple[str, Any]] = field(default_factory=dict)
    # Facts computed from the inventory alone (which nodes' labels are stale, what a resource is on each
    # node): once per inventory, not once per object checked - the webhook checks every review against
    # the same inventory until it changes. Bounded: some keys come from the objects (resource names).
    _facts: LRU[Any, Any] = field(default_factory=lambda: LRU(INVENTORY_FACTS), repr=False, compare=False)

    # Verdicts on one pod shape against this inventory alone: the webhook's reviews of a workload's pods
    # repeat the shape. Apart from the facts above, so that many shapes never push out a per-node table.
    _shape_facts: LRU[Any, Any] = field(default_factory=lambda: LRU(SHAPE_FACTS), repr=False, compare=False)

    def fact(self, key: Any, compute: Callable[[], _F]) -> _F:
        """``compute()`` once per inventory and ``key``; ``compute`` must read this inventory only."""
        return self._facts.get_or_compute(key, compute)  # concurrent reviews compute it once

    def shape_fact(self, key: Any, compute: Callable[[], _F]) -> _F:
        """As ``fact``, for a verdict on one pod shape (``key`` holds the shape)."""
        return self._shape_facts.get_or_compute(key, compute)

    def lists(self, kind: str) -> bool:
        return kind in self.listed_kinds

    def find_gang_object(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return _namespaced(self.gang_objects, namespace, name, lambda key: key[:2] == (group, kind))

    def find_claim(self, kind: str, namespace: str, name: str) -> InventoryObject | None:
        table = self.claim_templates if kind == "ResourceClaimTemplate" else self.named_claims
        return _namespaced(table, namespace, name, lambda key: True)

    def find_workload_runtime(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = _namespaced(
            self.workload_runtimes, namespace, name, lambda key: key[:2] == (group, kind)
        )
        return found

    def find_network_attachment(self, namespace: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = _namespaced(self.network_attachments, namespace, name, lambda key: True)
        return found

    def find_config_map_keys(self, namespace: str, name: str) -> frozenset[str] | None:
        found: frozenset[str] | None = _namespaced(self.config_map_keys, namespace, name, lambda key: True)
        return found

    def config_maps_of(self, namespace: str) -> dict[str, dict[str, str]]:
        """The short values of the ConfigMaps of ``namespace`` by name (a container reads its own namespace's)."""
        found: dict[str, dict[str, str]] = self.fact(
            ("config-maps", namespace),
            lambda: {name: values for (ns, name), values in self.config_map_values.items() if ns == namespace},
        )
        return found

    def namespaces_of(self, group: str, kind: str, name: str) -> set[str]:
        """The namespaces that hold an object of ``kind`` named ``name`` (a copy without one: not counted)."""
        tables: dict[str, dict[Any, Any]] = {
            "ResourceClaimTemplate": self.claim_templates,
            "ResourceClaim": self.named_claims,
            "ConfigMap": self.config_map_keys,
            "NetworkAttachmentDefinition": self.network_attachments,
        }
        if kind in tables:
            return {key[0] for key in tables[kind] if key[1] == name and key[0]}
        found = {**self.gang_objects, **self.workload_runtimes}
        return {key[2] for key in found if key[:2] == (group, kind) and key[3] == name and key[2]}

    def __getstate__(self) -> dict[str, Any]:
        # Derived models (compiled CEL programs among them) are rebuilt lazily in each worker.
        return {k: v for k, v in self.__dict__.items() if k not in ("model", "dra", "published_resources")}

    @property
    def has_nodes(self) -> bool:
        return bool(self.nodes)

    def add(self, obj: KubeObject) -> None:
        located = InventoryObject(obj.data, obj.document.path)
        name = obj.ref.name
        kind, group = obj.kind, obj.ref.group
        self.listed_kinds.add(kind)
        if kind == "Node" and obj.api_version == "v1":
            self.nodes.append(NodeInfo.from_object(obj.data))
            # compact whichever reader read it (the fast readers did already): the same node either way
            self.node_objects[name] = InventoryObject(compact_item(dict(obj.data)), obj.document.path)
        elif kind == "ResourceSlice" and group == "resource.k8s.io":
            if name not in self._slice_names:
                self._slice_names.add(name)
                self.slices.append(located)
        elif kind == "DeviceClass" and group == "resource.k8s.io":
            self.device_classes.setdefault(name, located)
        elif kind == "DeviceTaintRule" and group == "resource.k8s.io":
            if all(mapping(rule.data.get("metadata")).get("name") != name for rule in self.taint_rules):
                self.taint_rules.append(located)
        elif kind == "Pod" and obj.api_version == "v1":
            self.pods.append(located)
        elif kind == "ResourceClaim" and group == "resource.k8s.io":
            self.claims.append(located)
            self.named_claims.setdefault((obj.ref.namespace, name), located)
        elif kind == "ResourceClaimTemplate" and group == "resource.k8s.io":
            self.claim_templates.setdefault((obj.ref.namespace, name), located)
        elif kind == "Namespace" and obj.api_version == "v1":
            self.namespaces.setdefault(name, obj.data)
        elif kind == "ConfigMap" and obj.api_version == "v1":
            self.config_map_keys.setdefault((obj.ref.namespace, name), config_map_keys(obj.data))
            values = short_values(obj.data)
            size = sum(len(key) + len(value) for key, value in values.items()) if values is not None else 0
            if values is not None and self._kept_value_chars + size <= MAX_KEPT_TOTAL:
                self._kept_value_chars += size
                self.config_map_values.setdefault((obj.ref.namespace, name), values)
        elif kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            self.crds.append(located)
        elif kind == "RuntimeClass" and group == "node.k8s.io":
            self.runtime_classes.setdefault(name, obj.data)
        elif kind == "NetworkAttachmentDefinition" and group == "k8s.cni.cncf.io":
            annotations = mapping(mapping(obj.data.get("metadata")).get("annotations"))
            self.network_attachments.setdefault((obj.ref.namespace, name), dict(annotations))
        elif kind in WORKLOAD_RUNTIME_KINDS:
            self.workload_runtimes.setdefault((group, kind, obj.ref.namespace, name), obj.data)
        elif kind in GANG_OBJECT_KINDS:
            self.gang_objects.setdefault((group, kind, obj.ref.namespace, name), obj.data)
        elif kind in ADMISSION_POLICY_KINDS and obj.api_version == ADMISSION_POLICY_API:
            self.admission_policies.append(located)
        elif kind in ADMISSION_KINDS:
            self.admission_objects.append(obj.data)
        elif kind == "DaemonSet" and group == "apps":
            self.daemon_sets.setdefault((obj.ref.namespace, name), obj.data)
        elif kind == "MutatingWebhookConfiguration" and group == "admissionregistration.k8s.io":
            self.mutating_webhooks.append(obj.data)

    def second_copy(self, obj: KubeObject, file: str) -> FieldError | None:
        """A ResourceSlice, DeviceClass or DeviceTaintRule whose name an object read before has, with another spec:
        creating it, the API server answers that it already exists; gpulint reads the first copy."""
        name = obj.ref.name
        if obj.kind not in DUPLICATE_CHECKED_KINDS or obj.ref.group != "resource.k8s.io" or not name:
            return None
        spec = obj.data.get("spec")
        first = self._first_copies.setdefault((obj.kind, name), (file, spec))
        if first[1] is spec or first[1] == spec:
            return None
        where = "earlier in this file" if first[0] == file else f"in {first[0]}"
        return FieldError(
            ("metadata", "name"),
            DUPLICATE,
            name,
            f"another {obj.kind} of this name, with another spec, is {where}: a cluster holds one object per name, "
            "and gpulint reads the first",
        )

    def account_running_pods(self) -> None:
        """Non-terminal pods bound to a node consume its capacity in the "now" view."""
        by_name = {node.name: node for node in self.nodes}
        for pod in self.pods:
            spec = mapping(pod.data.get("spec"))
            status = mapping(pod.data.get("status"))
            node_name = spec.get("nodeName")
            node = by_name.get(node_name if isinstance(node_name, str) else "")
            if node is None or status.get("phase") in TERMINAL_PHASES:
                continue
            for resource, amount in pod_requests(spec).items():
                node.used[resource] = node.used.get(resource, Fraction(0)) + amount
            node.pod_count += 1

    @cached_property
    def model(self) -> ClusterModel:
        return ClusterModel(self.nodes)

    @cached_property
    def model_naming_taints(self) -> ClusterModel:
        """The same nodes for a scheduler that names the untolerated taint in its reason (before 1.34)."""
        return ClusterModel(self.nodes, named_taints=True)

    @cached_property
    def dra(self) -> DraModel:
        from gpulint.kube.dra.devices import DraModel

        return DraModel(self)

    @cached_property
    def published_resources(self) -> frozenset[str]:
        names: set[str] = set()
        for node in self.nodes:
            names.update(name for name, amount in node.capacity.items() if amount > 0)
            names.update(name for name, amount in node.allocatable.items() if amount > 0)
        return frozenset(names)


def config_map_keys(data: dict[str, Any]) -> frozenset[str]:
    return frozenset(str(k) for section in ("data", "binaryData") for k in mapping(data.get(section)))


def short_values(data: dict[str, Any]) -> dict[str, str] | None:
    """A ConfigMap's ``data``, kept when every value is short: what a container's environment reads is a word or a
    list. A ConfigMap holding a file or a certificate is not kept (None): its values, and the names its
    ``envFrom`` defines, stay unknown."""
    values = mapping(data.get("data"))
    if len(values) > MAX_KEPT_KEYS:
        return None
    kept = {str(key): value for key, value in values.items() if isinstance(value, str) and len(value) <= MAX_KEPT_VALUE}
    return kept if len(kept) == len(values) else None


class HasData(Protocol):
    """An object whose data is read (never replaced): an inventory object or a linted one."""

    @property
    def data(self) -> dict[str, Any]: ...


def dra_extended_resources(device_classes: Mapping[str, HasData]) -> dict[str, str]:
    """Extended resource name -> DeviceClass that backs it (explicit name or the implicit one)."""
    names: dict[str, str] = {}
    for class_name, located in sorted(device_classes.items()):
        names[DEVICE_CLASS_PREFIX + class_name] = class_name
        spec = mapping(located.data.get("spec"))
        explicit = spec.get("extendedResourceName")
        if isinstance(explicit, str) and explicit:
            names.setdefault(explicit, class_name)
    return names


def slices_by_node(slices: Iterable[HasData]) -> dict[str, list[dict[str, Any]]]:
    by_node: dict[str, list[dict[str, Any]]] = {}
    for located in slices:
        spec = located.data.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("nodeName"), str):
            by_node.setdefault(spec["nodeName"], []).append(spec)
    return by_node


def _namespaced(table: dict[Any, Any], namespace: str, name: str, wanted: Any) -> Any:
    """An object by namespace and name; a manifest without a namespace matches any (it is
    applied to whatever namespace kubectl or the GitOps tool targets)."""
    for key, value in table.items():
        key_namespace, key_name = key[-2], key[-1]
        if wanted(key) and key_name == name and (key_namespace == namespace or not key_namespace or not namespace):
            return value
    return None


def _problem_message(path: str, problem: LoadProblem) -> str:
    return f"{path}:{problem.line}:{problem.column}: inventory: {problem.message}"


_PLACE = re.compile(r"(\d+):(\d+): ")


def _bounded_problems(display: str, problems: list[str], limit: int = MAX_FILE_FINDINGS) -> list[str]:
    """A file's first ``limit`` problems, then one line at the first left out saying how many more: as a report
    lists a file's findings (lint.findings.capped), so 20,000 malformed Nodes are not 20,000 error lines."""
    if len(problems) <= limit:
        return problems
    first = problems[limit]
    place = _PLACE.match(first, len(display) + 1) if first.startswith(display + ":") else None
    line, column = place.groups() if place else ("1", "1")
    more = len(problems) - limit
    return [
        *problems[:limit],
        f"{display}:{line}:{column}: inventory: {more} more problem{'s' if more > 1 else ''} in this file, "
        f"from here on, not listed (at most {limit} are listed a file)",
    ]


def load_inventory(
    paths: list[str],
    sources: list[Source] | None = None,
    catalog: Catalog | None = None,
    extended_resource_toleration: bool | None = None,
    inspect: Inspect | None = None,
) -> ClusterInventory:
    """``sources``: ``paths`` already collected (and read: a pipe cannot be read twice); ``inspect``: see add_sources."""
    inventory = ClusterInventory(
        sources=tuple(paths), catalog=catalog, extended_resource_toleration=extended_resource_toleration
    )
    sources = collect_inventory(paths) if sources is None else sources
    problems: list[str] = []
    for source in sources:
        found: list[str] = []
        add_sources(inventory, [source], found, inspect)
        problems.extend(_bounded_problems(source.display, found))
    if problems:
        raise InventoryError("the inventory cannot be read:\n" + "\n".join(problems))
    inventory.account_running_pods()
    return inventory


def collect_inventory(paths: list[str]) -> list[Source]:
    """The inventory files, each read once under the inventory limit: the one size rule of every command
    (`inventory`, `check`, `explain`, `serve`); InventoryError (exit 2) naming the file past it."""
    try:
        # no node budget: JSON and kubectl's YAML are read item by item, without positions (fast_yaml)
        return collect(paths, limit=MAX_INVENTORY_FILE_BYTES, limit_name=INVENTORY_LIMIT_NAME, node_budget=False)
    except SourceError as exc:
        raise InventoryError(f"--inventory: {exc}") from None


def load_configured_inventory(
    config: Config, sources: list[Source] | None = None, inspect: Inspect | None = None
) -> ClusterInventory:
    """The inventory ``config`` names, with its node catalog and ExtendedResourceToleration setting."""
    from gpulint.lint.world.node_catalog import load_catalog

    catalog = load_catalog(config.node_catalog)
    return load_inventory(list(config.inventory), sources, catalog, config.extended_resource_toleration, inspect)


def add_sources(
    inventory: ClusterInventory,
    sources: list[Source],
    problems: list[str] | None = None,
    inspect: Inspect | None = None,
) -> None:
    from gpulint.kube.pools.capi import CapiIndex
    from gpulint.kube.pools.gke import gke_auto_creation
    from gpulint.kube.pools.readers import node_class_kubelets, node_class_zones, pools_in_document  # inventories
    from gpulint.lint.world.autoscaler_status import autoscaler_taints, node_groups

    for source in sources:
        try:
            raw = source.read()
        except OSError as exc:
            if problems is not None:
                problems.append(f"{source.display}: cannot read: {exc.strerror or exc}")
            continue
        with collector_paused():  # the parse tree is dropped before the collector runs again
            documents = _documents(source.display, raw, problems, _keeper(source.display, inspect))
            objects = [obj for document in documents for obj in objects_in(document)]
            if inspect is not None:
                for document in documents:
                    inspect(source.display, "document", document.data)
                for obj in objects:
                    inspect(source.display, "object", obj.data)
            if problems is not None:
                found = _shape_problems(source.display, raw, objects, problems)
                if found:
                    problems.extend(found)
                    continue
            copies: dict[int, list[FieldError]] = {}
            for index, obj in enumerate(objects):
                if obj.kind in INVENTORY_KINDS:
                    again = inventory.second_copy(obj, source.display)
                    if again is not None:
                        copies[index] = [again]
                    inventory.add(obj)
            inventory.rejections.extend(file_rejections(source.display, raw, objects, copies))
            inventory.autoscaler_groups.extend(node_groups(obj.data for obj in objects if obj.kind == "ConfigMap"))
            capi = [obj.data for obj in objects if obj.kind in CAPI_MEMBER_KINDS]
            if capi:
                inventory.capi = inventory.capi or CapiIndex()
                for data in capi:
                    inventory.capi.add(data)
            inventory.autoscaler_taints = autoscaler_taints(
                (obj.data for obj in objects if obj.kind == "Deployment"), inventory.autoscaler_taints
            )
            inventory.deployments += [
                (obj.data, f"Deployment {obj.ref.namespace}/{obj.ref.name}".replace(" /", " "))
                for obj in objects
                if obj.kind == "Deployment" and obj.ref.group == "apps"
            ]
            for document in documents:
                inventory.pool_specs.extend(pools_in_document(document.data, source.display))
                inventory.gke = gke_auto_creation(document.data, inventory.gke)
                inventory.node_class_zones.update(node_class_zones(document.data))
                inventory.node_class_kubelets.update(node_class_kubelets(document.data))


def _keeper(display: str, inspect: Inspect | None) -> Callable[[Any], Any]:
    """compact_item, after ``inspect`` has seen the item whole."""
    if inspect is None:
        return compact_item

    def keep(item: Any) -> Any:
        inspect(display, "item", item)
        return compact_item(item)

    return keep


# kubectl's `-o yaml` List: its items, a block sequence at column 0, are read a chunk at a time (fast_yaml._ITEMS)
_BLOCK_ITEMS = re.compile(rb"^items:[ \t]*\n(?=- )", re.MULTILINE)
LARGE_AS_KUBECTL = "; gpulint reads an inventory this large only as `kubectl get -o json` or `-o yaml` prints it"


def _documents(
    display: str, raw: bytes, problems: list[str] | None, keep: Callable[[Any], Any] | None = None
) -> list[LocatedDocument]:
    """The documents of one inventory file, without positions when they can be read faster so.

    ``kubectl get -o json`` output is read by the json module (~10x faster than any YAML parser;
    a JSON array is one document per item: the clouds' ``list`` commands print arrays). YAML that
    means the same in YAML 1.1 and 1.2 (``kubectl get -o yaml`` output) is read by yaml-rs
    (gpulint/lint/inputs/fast_yaml.py). Anything else goes through gpulint's loader, for its error
    positions, its YAML 1.1 reading and its refusal of alias bombs; an inventory object that turns
    out to be malformed is read again with positions (``_shape_problems``)."""
    # only JSON and kubectl's block List are read an item at a time: anything else is held whole (yaml-rs, the
    # loader), to the manifests' budget, counted once and only so far
    item_by_item = raw.lstrip()[:1] in (b"{", b"[") or _BLOCK_ITEMS.search(raw) is not None
    if item_by_item:
        refused = too_many_values(raw, MAX_INVENTORY_NODES, JSON_BYTES_PER_VALUE)
    else:
        refused = too_many_values(raw, MAX_YAML_NODES)
    if refused is not None:
        if problems is not None:
            problems.append(
                f"{display}:{refused.line}:{refused.column}: inventory: {refused.message()}"
                + ("" if item_by_item else LARGE_AS_KUBECTL)
            )
        return []
    try:
        fast = _fast_documents(display, raw, keep or compact_item)
    except ReadStopped:
        if problems is not None:
            problems.append(f"{display}:1:1: inventory: {_objects_past()}")
        return []
    if fast is not None:
        return _within_objects(display, fast, problems)
    # the loader keeps a position on every node: ~400 bytes each (counted above already when not item by item)
    refused = too_many_values(raw, MAX_YAML_NODES) if item_by_item else None
    if refused is not None:
        if problems is not None:
            problems.append(
                f"{display}:{refused.line}:{refused.column}: inventory: {refused.message()}{LARGE_AS_KUBECTL}"
            )
        return []
    loaded = load_bytes(display, raw, max_bytes=MAX_INVENTORY_FILE_BYTES)
    if problems is not None:
        problems.extend(_problem_message(display, p) for p in loaded.problems)
    return _within_objects(display, loaded.documents, problems)


def _objects_past() -> str:
    return (
        f"holds more than {MAX_INVENTORY_OBJECTS:,} objects (documents and List items); not read (max inventory "
        "objects)"
    )


def _within_objects(
    display: str, documents: list[LocatedDocument], problems: list[str] | None
) -> list[LocatedDocument]:
    """``documents``, or none (and the problem, at the first object past it) when they hold more objects than
    MAX_INVENTORY_OBJECTS: counted before objects_in makes any."""
    count = 0
    for document in documents:
        data = document.data
        items = data.get("items") if is_object(data) and is_list(data) else None
        held = len(items) if isinstance(items, list) else 1
        if count + held > MAX_INVENTORY_OBJECTS:
            path = () if items is None else ("items", MAX_INVENTORY_OBJECTS - count)
            line, column = document.locate(path)
            if problems is not None:
                problems.append(f"{display}:{line}:{column}: inventory: {_objects_past()}")
            return []
        count += held
    return documents


def _fast_documents(display: str, raw: bytes, keep: Callable[[Any], Any]) -> list[LocatedDocument] | None:
    """JSON, or YAML that reads the same in YAML 1.1 and 1.2, without positions; None: read it with them.
    A List's items pass through ``keep`` as they are read (``compact_item``: its Nodes compacted)."""
    items: list[Any] | None = None
    if raw.lstrip()[:1] in (b"{", b"["):
        try:
            data = _json(raw, keep, MAX_INVENTORY_OBJECTS)
        except (ValueError, RecursionError):
            pass  # not JSON after all, or nested too deep: the YAML reader says where it breaks
        else:
            items = data if isinstance(data, list) else [data]
    elif not detect_encoding(raw).bom:  # a byte-order mark: the loader decodes it
        from gpulint.lint.inputs.fast_yaml import load_unambiguous  # yaml-rs: imported by inventories only

        try:
            # the images kubectl printed are cut unread: compact_item drops them, and an ``inspect`` (QuietFiles, which
            # validates each Node against its schema) meets a Node without them, as valid as with them
            fast, data = load_unambiguous(
                raw.decode("utf-8"),
                keep,
                raw,
                node_images_dropped="images" in NODE_STATUS_DROPPED,
                max_items=MAX_INVENTORY_OBJECTS,
            )
        except UnicodeDecodeError:
            fast = False
        if fast:
            items = [data]
    if items is None:
        return None
    return [LocatedDocument(display, index, item, None) for index, item in enumerate(items)]


# What a Node carries that no part of gpulint reads, and that makes most of its size in `kubectl get nodes`: the
# images cached on it (~40 names with digests), the volumes attached, the server-side apply bookkeeping, the
# last-applied copy (the live inventory drops the last two as well: lint/world/live_inventory.py _trimmed).
NODE_STATUS_DROPPED = ("images", "volumesAttached", "volumesInUse")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def compact_item(item: Any) -> Any:
    """An item of an inventory List as the inventory keeps it: a v1 Node without the fields above (a copy of the
    mappings changed; anything else as it is). Every field a rule, a model or a shape check reads stays."""
    if not isinstance(item, dict) or item.get("kind") != "Node" or item.get("apiVersion") != "v1":
        return item
    status, metadata = item.get("status"), item.get("metadata")
    if isinstance(status, dict) and any(key in status for key in NODE_STATUS_DROPPED):
        item["status"] = {k: v for k, v in status.items() if k not in NODE_STATUS_DROPPED}
    if isinstance(metadata, dict):
        annotations = metadata.get("annotations")
        if "managedFields" in metadata or (isinstance(annotations, dict) and LAST_APPLIED in annotations):
            metadata = {k: v for k, v in metadata.items() if k != "managedFields"}
            if isinstance(annotations, dict) and LAST_APPLIED in annotations:
                metadata["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
            item["metadata"] = metadata
    return item


_JSON = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _after_space(text: str, at: int) -> int:
    """Where the JSON whitespace at ``text[at]`` ends."""
    space = _JSON_SPACE.match(text, at)
    return at if space is None else space.end()


def _json(raw: bytes, keep: Callable[[Any], Any] = compact_item, max_items: int | None = None) -> Any:
    """``json.loads(raw)``, with the items of a top-level array, or of a top-level object's ``items``, read one at a
    time and compacted as they are read (``compact_item``): a fleet's nodes are never held whole. The same answer
    as json.loads (a repeated key: the last value, at the first one's place) and the same errors (ValueError);
    ReadStopped at the item past ``max_items``."""
    if raw.startswith(b"\xef\xbb\xbf") or b"\x00" in raw[:4]:
        return json.loads(raw)  # a byte-order mark, or UTF-16 or -32 without one: json.loads tells them apart
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return json.loads(raw)  # UTF-16 or -32 (json.loads detects them), or an error to report
    at = _after_space(text, 0)
    data: Any
    if text.startswith("[", at):
        data, at = _json_array(text, at, keep, max_items)
    elif text.startswith("{", at):
        data, at = _json_object(text, at, keep, max_items)
    else:
        data, at = _JSON.raw_decode(text, at)
    if _after_space(text, at) != len(text):
        raise ValueError("extra data after the JSON value")
    return data


def _json_array(text: str, at: int, keep: Callable[[Any], Any], max_items: int | None) -> tuple[list[Any], int]:
    """The array starting at ``text[at]`` ("["), its items compacted one by one; and where it ends."""
    items: list[Any] = []
    at = _after_space(text, at + 1)
    if text.startswith("]", at):
        return items, at + 1
    while True:
        if max_items is not None and len(items) >= max_items:
            raise ReadStopped(f"more than {max_items} items")
        item, at = _JSON.raw_decode(text, at)
        items.append(keep(item))
        at = _after_space(text, at)
        if text.startswith("]", at):
            return items, at + 1
        if not text.startswith(",", at):
            raise ValueError(f"expected ',' or ']' at character {at}")
        at = _after_space(text, at + 1)


def _json_object(text: str, at: int, keep: Callable[[Any], Any], max_items: int | None) -> tuple[dict[str, Any], int]:
    """The top-level object starting at ``text[at]`` ("{"), its ``items`` array read by ``_json_array``."""
    data: dict[str, Any] = {}
    at = _after_space(text, at + 1)
    if text.startswith("}", at):
        return data, at + 1
    while True:
        if not text.startswith('"', at):
            raise ValueError(f"expected a key at character {at}")
        key, at = _JSON.raw_decode(text, at)
        at = _after_space(text, at)
        if not text.startswith(":", at):
            raise ValueError(f"expected ':' at character {at}")
        at = _after_space(text, at + 1)
        if key == "items" and text.startswith("[", at):
            value, at = _json_array(text, at, keep, max_items)
        else:
            value, at = _JSON.raw_decode(text, at)
        data[key] = value
        at = _after_space(text, at)
        if text.startswith("}", at):
            return data, at + 1
        if not text.startswith(",", at):
            raise ValueError(f"expected ',' or '}}' at character {at}")
        at = _after_space(text, at + 1)


def _located_objects(display: str, raw: bytes, problems: list[str] | None) -> list[KubeObject]:
    loaded = load_bytes(display, raw, max_bytes=MAX_INVENTORY_FILE_BYTES)
    if problems is not None:
        problems.extend(_problem_message(display, p) for p in loaded.problems)
    return [obj for document in loaded.documents for obj in objects_in(document)]


def _shape_problems(display: str, raw: bytes, objects: list[KubeObject], problems: list[str]) -> list[str]:
    """``file:line:col`` messages for the inventory objects whose fields gpulint's model reads are of
    the wrong type (a Node whose ``spec.taints`` is a number): used as they are, they would give
    wrong answers without a word."""
    if not any(node_problems(obj) for obj in objects if _is_node(obj)):
        return []
    if any(obj.document.node is None for obj in objects):  # read as JSON: read again for positions
        if too_many_values(raw, MAX_YAML_NODES) is not None:  # too large to hold with positions: without them
            return [
                f"{display}: inventory: {obj.ref.kind}/{obj.ref.name or '?'}: {'.'.join(map(str, path))}: {message}"
                for obj in objects
                if _is_node(obj)
                for path, message in node_problems(obj)
            ]
        objects = _located_objects(display, raw, problems)
    return [
        f"{display}:{line}:{column}: inventory: {obj.ref.kind}/{obj.ref.name or '?'}: {message}"
        for obj in objects
        if _is_node(obj)
        for path, message in node_problems(obj)
        for line, column in (obj.locate(path),)
    ]


def _is_node(obj: KubeObject) -> bool:
    return obj.kind == "Node" and obj.api_version == "v1"


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def node_problems(obj: KubeObject) -> list[tuple[Path, str]]:
    """Fields of a Node that the scheduler model reads, when they are of the wrong type."""
    data = obj.data
    found: list[tuple[Path, str]] = []
    for key in ("metadata", "spec", "status"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            found.append(((key,), f"{key} must be a mapping, not {type_name(data[key])}"))
    metadata, spec, status = (mapping(data.get(key)) for key in ("metadata", "spec", "status"))
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        found.append((("metadata", "name"), "a Node needs metadata.name (a string)"))
    labels = metadata.get("labels")
    if labels is not None and not isinstance(labels, dict):
        found.append((("metadata", "labels"), f"metadata.labels must be a mapping, not {type_name(labels)}"))
    for key, value in mapping(labels).items():
        if isinstance(value, (dict, list)):
            found.append(
                (("metadata", "labels", key), f"label {key}: a value must be a string, not {type_name(value)}")
            )
    found.extend(_taint_problems(spec.get("taints")))
    if spec.get("unschedulable") is not None and not isinstance(spec["unschedulable"], bool):
        found.append(
            (
                ("spec", "unschedulable"),
                f"spec.unschedulable must be true or false, not {type_name(spec['unschedulable'])}",
            )
        )
    for section in ("capacity", "allocatable"):
        values = status.get(section)
        if values is not None and not isinstance(values, dict):
            found.append(
                (
                    ("status", section),
                    f"status.{section} must be a mapping of resource names to quantities, not {type_name(values)}",
                )
            )
        for name, value in mapping(values).items():
            try:
                quantity_from_yaml(value)
            except QuantityError as exc:
                found.append((("status", section, name), f"status.{section}[{name}]: {exc}"))
    return found


def _taint_problems(taints: Any) -> list[tuple[Path, str]]:
    if taints is None:
        return []
    if not isinstance(taints, list):
        return [(("spec", "taints"), f"spec.taints must be a list of taints, not {type_name(taints)}")]
    found: list[tuple[Path, str]] = []
    for index, taint in enumerate(taints):
        path = ("spec", "taints", index)
        if not isinstance(taint, dict):
            found.append((path, f"spec.taints[{index}] must be a mapping (key, value, effect), not {type_name(taint)}"))
        elif not isinstance(taint.get("key"), str) or not taint["key"]:
            found.append(((*path, "key"), f"spec.taints[{index}] needs a key (a string)"))
        elif taint.get("effect") not in TAINT_EFFECTS:
            found.append(((*path, "effect"), f"spec.taints[{index}].effect must be one of {', '.join(TAINT_EFFECTS)}"))
        elif isinstance(taint.get("value"), (dict, list)):
            found.append(
                ((*path, "value"), f"spec.taints[{index}].value must be a string, not {type_name(taint['value'])}")
            )
    return found
