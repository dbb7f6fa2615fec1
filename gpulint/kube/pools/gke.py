"""GKE's node pool auto-creation: pools a GKE cluster creates for a pending pod, which no node-pools list shows.

With node auto-provisioning on (``gcloud container clusters describe``: ``autoscaling.enableNodeAutoprovisioning``),
or for a ComputeClass whose ``spec.nodePoolAutoCreation.enabled`` is true (GKE 1.33.3-gke.1136000 and later), GKE's
cluster autoscaler creates a node pool from the pod's GPU requests, node selectors and tolerations, and labels its
nodes with what the pod selected: the ComputeClass (``cloud.google.com/compute-class``), the GPU type
(``cloud.google.com/gke-accelerator``), the machine family, Spot (cloud.google.com/kubernetes-engine/docs: concepts/
node-auto-provisioning, concepts/about-custom-compute-classes, how-to/gpus; read 2026-12-06). So a pod selecting
such a label matches no node of ``gcloud container node-pools list`` and may still get one: "never fits" holds only
once auto-creation is proven off. A GKE cluster shown by its nodes alone (``kubectl get nodes``, the live inventory)
is asked the same: its nodes carry ``cloud.google.com/gke-nodepool``. On GKE Autopilot (the cluster description's
``autopilot.enabled``) GKE creates the nodes every pod it admits needs (concepts/autopilot-overview, how-to/
autopilot-gpus; read 2026-12-06): what no node or pool fits now is unknown, never "never".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.scheduler import PodRequirements, Requirement, Toleration

COMPUTE_CLASS = "cloud.google.com/compute-class"
COMPUTE_CLASS_GROUP = "cloud.google.com"
POOL_LABEL = "cloud.google.com/gke-nodepool"
# The cluster's default ComputeClass: it applies to every pod that selects no class and whose namespace names no
# default class (GKE leaves the pod as it is: docs how-to/run-pods-default-compute-classes, read 2026-12-06; the
# ComputeClass CRD's description: "ComputeClass with name default which will be used for workloads not specifying
# any preferences").
DEFAULT_CLASS = "default"
# A namespace's default ComputeClass: GKE writes it into the node selector of a pod of the namespace that selects
# none, before the cluster's default applies (how-to/run-pods-default-compute-classes, read 2026-12-06); the
# second label for all but DaemonSet pods.
NAMESPACE_CLASS_LABELS = (
    "cloud.google.com/default-compute-class",
    "cloud.google.com/default-compute-class-non-daemonset",
)
# The pool a verdict shows for what GKE may create (system, name), and how to decide it.
AUTO_POOL = ("GKE", "node pool auto-creation")
AUTO_POOL_HINT = (
    "add the cluster's description (gcloud container clusters describe --format json) and its ComputeClasses "
    "(kubectl get computeclasses -o yaml) to the inventory to check"
)
# The pool a verdict shows on GKE Autopilot, where GKE creates the nodes its pods need: nothing more decides it.
AUTOPILOT_POOL = ("GKE", "Autopilot")
AUTOPILOT_WHY = "GKE Autopilot creates the nodes its pods need, which the nodes and node pools read do not show"
# Why the pools read are not all the pools there can be, on Autopilot (for findings' notes).
AUTOPILOT_GAP = "the cluster is GKE Autopilot, which creates a node pool for the pods it admits"
# GKE names an Autopilot cluster's nodes gk3-<cluster>-<pool>-..., a Standard cluster's gke-<cluster>-<pool>-...
# (seen on every Autopilot cluster since its launch: ahmet.im/blog/gke-autopilot, 2021; no GKE page states it,
# so a name alone only ever makes a verdict unknown).
AUTOPILOT_NODE_PREFIX = "gk3-"
# Labels a pod selects that GKE's auto-creation creates a node pool to carry, and what each names.
AUTO_CREATION_KEYS: dict[str, str] = {
    COMPUTE_CLASS: "ComputeClass",
    "cloud.google.com/gke-accelerator": "GPU type",
    "cloud.google.com/gke-tpu-accelerator": "TPU type",
    "cloud.google.com/machine-family": "machine family",
    "cloud.google.com/gke-spot": "Spot VMs",
}


# whenUnsatisfiable: with DoNotScaleUp, GKE's autoscaler drops every node group of the class that matches no
# priority, and for a pod of the class asks only for the node pools its priorities describe (GoogleCloudPlatform/
# cluster-autoscaler 7d25050, 2026-08-21: pkg/computeclass/organizer.go organizeByRules, pkg/autoprovisioning/
# gpu_requests.go: "For ComputeClass pods we want to derive GPU config from ComputeClass"). ScaleUpAnyway falls
# back to any node auto-provisioning would create. Omitted, the API server defaults it by the GKE version the class
# was created on (DoNotScaleUp from 1.33, ScaleUpAnyway before: GKE release notes and concepts/about-custom-compute-
# classes, read 2026-12-07), so only a written value decides.
DO_NOT_SCALE_UP = "DoNotScaleUp"
# The system a priority's candidate pool shows (gke_classes.py): "GKE ComputeClass <class> priority <n>".
CLASS_POOL_SYSTEM = "GKE ComputeClass"


@dataclass(frozen=True)
class ClassPriority:
    """One entry of a ComputeClass's ``spec.priorities``, as far as the nodes it makes go (the CRD reference:
    cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass, read 2026-12-07)."""

    machine_family: str = ""
    machine_type: str = ""
    gpu_type: str = ""
    gpu_count: int | None = None
    driver_version: str = ""
    spot: bool | None = None
    nodepools: tuple[str, ...] = ()  # existing node pools it names: GKE creates none for it
    # fields that decide what its nodes offer in ways gpulint does not model (tpu, podFamily...)
    unmodelled: tuple[str, ...] = ()


@dataclass(frozen=True)
class ComputeClass:
    """A ``cloud.google.com/v1`` ComputeClass: its pool auto-creation, and the nodes its priorities describe."""

    name: str
    auto_creation: bool  # spec.nodePoolAutoCreation.enabled
    priorities: tuple[ClassPriority, ...] = ()
    when_unsatisfiable: str = ""  # as written ("": not stated)
    node_labels: tuple[tuple[str, str], ...] = ()  # spec.nodePoolConfig.nodeLabels: on every node it makes
    image_type: str = ""  # spec.nodePoolConfig.imageType

    @property
    def restricts(self) -> bool:
        """A pod of the class gets only the nodes its priorities describe (DoNotScaleUp, some priority)."""
        return self.when_unsatisfiable == DO_NOT_SCALE_UP and bool(self.priorities)


@dataclass
class GkeAutoCreation:
    """What the inventory says of the cluster's pool auto-creation. ``autoprovisioning``: the cluster's node
    auto-provisioning (None: no ``clusters describe`` read); ``classes``: the ComputeClasses read; ``autopilot``:
    the cluster is Autopilot (its description, or its nodes' names)."""

    autoprovisioning: bool | None = None
    classes: dict[str, ComputeClass] = field(default_factory=dict)
    autopilot: bool = False

    @property
    def pool(self) -> tuple[str, str]:
        """The pool a verdict shows for what GKE may create (system, name)."""
        return AUTOPILOT_POOL if self.autopilot else AUTO_POOL

    def with_nodes(self, nodes: GkeNodes) -> GkeAutoCreation:
        """With what the cluster's nodes show: Autopilot's node names (an Autopilot cluster auto-provisions)."""
        if not nodes.autopilot or self.autopilot:
            return self
        return replace(self, autopilot=True, autoprovisioning=True)

    def add(self, data: Mapping[str, Any]) -> None:
        """Read one inventory document: a ``gcloud container clusters describe`` JSON or a ComputeClass."""
        if text(data.get("kind")) == "ComputeClass":
            found = compute_class(data)
            if found.name:
                self.classes[found.name] = found
        elif _is_description(data):
            enabled = mapping(data.get("autoscaling")).get("enableNodeAutoprovisioning")
            autopilot = mapping(data.get("autopilot")).get("enabled") is True  # Cluster.autopilot (container/v1)
            self.autopilot = autopilot or self.autopilot
            self.autoprovisioning = enabled is True or autopilot or bool(self.autoprovisioning)

    def serves(self, pod: PodRequirements, namespace_class: str = "") -> str:
        """Why GKE may create a pool for ``pod`` that the pools read do not show ("" when it is proven not to).
        ``namespace_class``: the default ComputeClass of the pod's namespace (namespace_class())."""
        if self.autopilot:
            return AUTOPILOT_WHY  # whatever it selects: Autopilot's admission refuses what it cannot serve
        if _values(pod, POOL_LABEL):
            return ""  # a pool it names exists: GKE names the pools it creates itself (nap-...)
        classes = _values(pod, COMPUTE_CLASS) or ([namespace_class] if namespace_class else [])
        default = self.classes.get(DEFAULT_CLASS)
        if not classes and default is not None and default.auto_creation:
            return (
                f"GKE may create a node pool for the cluster's default ComputeClass ({DEFAULT_CLASS}, "
                "nodePoolAutoCreation), which the node pools read do not show"
            )
        keys = selected_keys(pod)
        if not keys and not classes:
            return ""
        if classes:
            named = [self.classes.get(name) for name in classes]
            if self.autoprovisioning is False and all(c is not None and not c.auto_creation for c in named):
                return ""
            origin = "" if _values(pod, COMPUTE_CLASS) else ", its namespace's default"
            return (
                f"GKE may create a node pool for ComputeClass {', '.join(classes)}{origin} (nodePoolAutoCreation or "
                "node auto-provisioning), which the node pools read do not show"
            )
        if self.autoprovisioning is False:
            return ""
        shown = ", ".join(f"{AUTO_CREATION_KEYS.get(key, 'label')} ({key})" for key in keys)
        return (
            f"GKE node auto-provisioning may create a node pool for the {shown} it selects, which the node pools "
            "read do not show (no cluster description says it is off)"
        )


def namespace_class(namespace: Mapping[str, Any] | None, daemon: bool) -> str:
    """The default ComputeClass a Namespace object's labels name for its pods ("" none, or no namespace known)."""
    labels = mapping(mapping(mapping(namespace).get("metadata")).get("labels"))
    keys = NAMESPACE_CLASS_LABELS[:1] if daemon else NAMESPACE_CLASS_LABELS[::-1]
    return next((str(labels[key]) for key in keys if labels.get(key)), "")


def selected_class(pod: PodRequirements, namespace_class: str = "") -> str:
    """The one ComputeClass the pod gets: the one its node selection names, else its namespace's default ("": none,
    or several it may get)."""
    named = _values(pod, COMPUTE_CLASS)
    if not named:
        return namespace_class
    return named[0] if len(named) == 1 and named[0] != "(any)" else ""


def compute_class(data: Mapping[str, Any]) -> ComputeClass:
    spec = mapping(data.get("spec"))
    enabled = mapping(spec.get("nodePoolAutoCreation")).get("enabled") is True
    config = mapping(spec.get("nodePoolConfig"))
    labels = tuple(sorted((str(k), str(v)) for k, v in mapping(config.get("nodeLabels")).items() if v is not None))
    return ComputeClass(
        text(mapping(data.get("metadata")).get("name")),
        enabled,
        tuple(class_priority(item) for item in sequence(spec.get("priorities")) if isinstance(item, Mapping)),
        text(spec.get("whenUnsatisfiable")),
        labels,
        text(config.get("imageType")),
    )


# The priority fields gpulint reads, and those that change nothing it judges (where, how and how long a node is
# bought; its disks, reservations, pods per node): any other field may change what the nodes offer.
_READ = frozenset({"machineFamily", "machineType", "gpu", "spot", "nodepools"})
_GPU_READ = frozenset({"type", "count", "driverVersion"})
_NEUTRAL = frozenset(
    {
        "minCores",
        "minMemoryGb",
        "location",
        "reservations",
        "flexStart",
        "maxRunDurationSeconds",
        "maxPodsPerNode",
        "storage",
        "placement",
        "priorityScore",
        "nodeSystemConfig",
        "minCpuPlatform",
        "taints",
        "nodeLabels",
    }
)


def class_priority(item: Mapping[str, Any]) -> ClassPriority:
    gpu = mapping(item.get("gpu"))
    count = gpu.get("count")
    spot = item.get("spot")
    stated = isinstance(count, int) and not isinstance(count, bool) and count > 0 and bool(text(gpu.get("type")))
    unmodelled = {str(key) for key in item if key not in _READ and key not in _NEUTRAL}
    if "gpu" in item and (not stated or set(gpu) - _GPU_READ):
        # no type or count gpulint can read (a template's ${ACCELERATOR_COUNT}), or a GPU shared or partitioned
        # (gpuSharing, partitionSize: the node offers more nvidia.com/gpu than its GPUs)
        unmodelled.add("gpu")
    return ClassPriority(
        text(item.get("machineFamily")).lower(),
        text(item.get("machineType")).lower(),
        text(gpu.get("type")),
        count if stated else None,
        text(gpu.get("driverVersion")),
        spot if isinstance(spot, bool) else None,
        tuple(str(name) for name in sequence(item.get("nodepools")) if isinstance(name, str)),
        tuple(sorted(unmodelled)),
    )


def selected_keys(pod: PodRequirements) -> list[str]:
    """The labels the pod's node selection asks for (In, Exists) that auto-creation puts on a pool it creates: GKE's
    own, and a custom one the pod also tolerates a taint of (workload separation: the new pool gets the label and
    the taint)."""
    tolerated = {t.key for t in pod.tolerations if t.key}
    return sorted(
        {
            r.key
            for r in pod.requirements()
            if r.operator in ("In", "Exists") and not r.field and (r.key in AUTO_CREATION_KEYS or r.key in tolerated)
        }
    )


def _values(pod: PodRequirements, key: str) -> list[str]:
    found: list[str] = []
    for requirement in pod.requirements():
        if requirement.key == key and requirement.operator == "In":
            found.extend(v for v in requirement.values if v not in found)
        elif requirement.key == key and requirement.operator == "Exists" and "(any)" not in found:
            found.append("(any)")
    return found


def gke_auto_creation(data: Any, state: GkeAutoCreation | None) -> GkeAutoCreation | None:
    """``state`` with what one inventory document says (a ComputeClass, a List of them, a cluster description);
    None while no document has said anything of it."""
    if not isinstance(data, Mapping):
        return state
    items = [data, *(item for item in sequence(data.get("items")) if isinstance(item, Mapping))]
    for item in items:
        if _describes(item):
            state = state or GkeAutoCreation()
            state.add(item)
    return state


def _describes(data: Mapping[str, Any]) -> bool:
    is_class = text(data.get("kind")) == "ComputeClass" and text(data.get("apiVersion")).startswith(COMPUTE_CLASS_GROUP)
    return is_class or _is_description(data)


def _is_description(data: Mapping[str, Any]) -> bool:
    """``gcloud container clusters describe --format json``: its node pools, and its autoscaling or Autopilot."""
    settings = isinstance(data.get("autoscaling"), dict) or isinstance(data.get("autopilot"), dict)
    return isinstance(data.get("nodePools"), list) and settings


@dataclass(frozen=True)
class GkeNodes:
    """What a cluster's nodes show of GKE: some are a GKE node pool's (``gke``), some are named as GKE names an
    Autopilot cluster's nodes (``autopilot``)."""

    gke: bool = False
    autopilot: bool = False


def gke_nodes(nodes: Iterable[tuple[str, Mapping[str, str]]]) -> GkeNodes:
    """From each node's name and labels."""
    gke = autopilot = False
    for name, labels in nodes:
        if labels.get(POOL_LABEL):
            gke = True
            autopilot = autopilot or name.startswith(AUTOPILOT_NODE_PREFIX)
    return GkeNodes(gke, autopilot)


def with_class_tolerations(pod: PodRequirements) -> PodRequirements:
    """The pod as GKE admits it when it selects a ComputeClass: tolerating the class's taint
    (``cloud.google.com/compute-class=<name>:NoSchedule``), which GKE puts on the nodes it creates for the class and
    operators put on the pools they create for it. Pods that select only the label run on such nodes (the GKE 1.32
    "DRA and Custom Compute Class Examples" demo: a Deployment with the nodeSelector alone, Running on pools created
    with ``--node-taints=cloud.google.com/compute-class=inference-1x8x24:NoSchedule``)."""
    wanted = [v for v in _values(pod, COMPUTE_CLASS) if v != "(any)"]
    added = tuple(
        toleration
        for toleration in (Toleration(COMPUTE_CLASS, "Equal", name, "NoSchedule") for name in wanted)
        if toleration not in pod.tolerations
    )
    return replace(pod, tolerations=pod.tolerations + added) if added else pod


def with_namespace_class(pod: PodRequirements, name: str) -> PodRequirements:
    """The pod as GKE admits it in a namespace whose default ComputeClass is ``name``: one that selects no class
    gets the class in its nodeSelector (how-to/run-pods-default-compute-classes, read 2026-12-06), and with it the
    toleration of the class's taint (with_class_tolerations)."""
    if not name or _values(pod, COMPUTE_CLASS):
        return pod
    requirement = Requirement(
        f"nodeSelector {COMPUTE_CLASS}={name} (its namespace's default)",
        ("nodeSelector", COMPUTE_CLASS),
        COMPUTE_CLASS,
        "In",
        (name,),
    )
    return with_class_tolerations(replace(pod, node_selector=(*pod.node_selector, requirement)))
