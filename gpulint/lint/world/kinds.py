"""One table of the kinds gpulint looks up across objects: a row per kind.

A row says where the kind's objects come from and what their absence proves:

- ``group``, ``versions`` (newest first), ``plural`` and ``namespaced``: how the API serves it (the live
  inventory lists and watches it at these: gpulint/lint/world/live_inventory.py);
- ``crosses_files``: the checks of one file read the objects of this kind in other files (the
  forked workers and the repository index hand them over: gpulint/lint/world/cross_file.py);
- ``wins``: which copy the resolver reads when the linted files and the inventory both hold an object
  of that name (the linted one is the change under review; the inventory's is what the cluster runs);
- ``complete``: when the set of the kind is known whole, so that a name found nowhere does not exist.
  An object may be made by Terraform, an operator, a chart the repository does not hold, or sit in
  another folder or overlay: a name missing from the linted files proves nothing by itself. The set is
  whole when the inventory lists the kind (a static inventory holding objects of it, or a live one
  that listed its API), or when ``.gpulint.yaml`` declares it complete (``complete:``) for the files
  that refer to it.

Adding a kind is one row here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpulint.kube import kai_admission, knative, kserve, networks, trainjob
from gpulint.kube.dra import compute_domain
from gpulint.kube.pools.kinds import CAPI_GROUP, KARPENTER_GROUP
from gpulint.kube.queueing.batch_queues import KAI_GROUP, VOLCANO_GROUP
from gpulint.kube.queueing.kueue_config import CONFIG_GROUP, CONFIG_KIND
from gpulint.kube.queueing.kueue_kinds import KUEUE_GROUP
from gpulint.kube.wording import first_and_more
from gpulint.lint.inputs.objects import RELEASE_FORMS, REMOTE_BASES
from gpulint.lint.paths import path_matches

DRA_GROUP = "resource.k8s.io"
SCHEDULER_CONFIG_GROUP = "kubescheduler.config.k8s.io"


class Wins(enum.Enum):
    """The copy read when the linted files and the inventory both hold the object."""

    LINTED = "linted"  # the change under review replaces what the cluster holds
    INVENTORY = "inventory"  # the cluster's object stands (the linted copy is another cluster's, or stale)


class Complete(enum.Enum):
    """When the set of the kind is known whole."""

    LISTED = "listed or declared"  # the inventory lists it, or the configuration declares it complete
    DECLARED = "declared"  # only the configuration can say so (no API lists it)
    NEVER = "never"  # no "does not exist" is ever said of it


@dataclass(frozen=True)
class KindRow:
    group: str
    kind: str
    versions: tuple[str, ...]
    plural: str  # "" when no API serves it (a configuration file's kind)
    namespaced: bool
    crosses_files: bool
    wins: Wins
    complete: Complete
    # Describes the cluster itself (its node pools, quotas, queues' capacity): read as a cluster's only from
    # its inventory and the files `clusters:` maps to it, never from a shared folder or another cluster's
    describes_cluster: bool = False
    # A cluster's own, read by name from the pods' namespace (a pod's env, a semaphore, a plugin's config): a copy
    # in one cluster's folder is not another's, so the linted files holding one split the run by cluster as pools do
    per_cluster: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.kind)


_L, _I = Wins.LINTED, Wins.INVENTORY
_LISTED, _DECLARED, _NEVER = Complete.LISTED, Complete.DECLARED, Complete.NEVER
_DRA = ("v1", "v1beta2", "v1beta1")
_KUEUE = ("v1beta2", "v1beta1")
_CAPI = ("v1beta2", "v1beta1")
_AKS = ("v1beta1", "v1alpha2")


def _row(
    group: str,
    kind: str,
    versions: tuple[str, ...],
    plural: str,
    namespaced: bool,
    crosses: bool,
    wins: Wins,
    complete: Complete = _LISTED,
    *,
    cluster: bool = False,
    per_cluster: bool = False,
) -> KindRow:
    return KindRow(group, kind, versions, plural, namespaced, crosses, wins, complete, cluster, per_cluster)


KINDS: tuple[KindRow, ...] = (
    # core
    _row("", "Node", ("v1",), "nodes", False, False, _I, _NEVER),  # an autoscaled pool's nodes are in no snapshot
    _row("", "Pod", ("v1",), "pods", True, False, _I, _NEVER),
    _row("", "Namespace", ("v1",), "namespaces", False, True, _I),
    _row("", "ConfigMap", ("v1",), "configmaps", True, True, _L, per_cluster=True),
    # a pod's <hostname>.<subdomain> answers through the Service named as its subdomain (service-dns-mismatch)
    _row("", "Service", ("v1",), "services", True, True, _L, _NEVER),
    # a container's env reads them by name; no inventory holds Secrets (their values): complete only by declaration
    _row("", "Secret", ("v1",), "secrets", True, True, _L, _DECLARED, per_cluster=True),
    _row("", "LimitRange", ("v1",), "limitranges", True, True, _L, cluster=True),
    _row("", "ResourceQuota", ("v1",), "resourcequotas", True, True, _L, cluster=True),
    # the global default class names a pod without priorityClassName: a PriorityClass quota scope reads it
    _row("scheduling.k8s.io", "PriorityClass", ("v1",), "priorityclasses", False, True, _L, cluster=True),
    _row("node.k8s.io", "RuntimeClass", ("v1",), "runtimeclasses", False, True, _I),
    _row("apiextensions.k8s.io", "CustomResourceDefinition", ("v1",), "customresourcedefinitions", False, True, _L),
    # a new pool node runs the DaemonSets' pods first; a Deployment may start a scheduler (by content)
    _row("apps", "DaemonSet", ("v1",), "daemonsets", True, True, _L, _NEVER),
    # DRA
    _row(DRA_GROUP, "ResourceSlice", _DRA, "resourceslices", False, True, _I, _NEVER),
    _row(DRA_GROUP, "DeviceClass", _DRA, "deviceclasses", False, True, _I),
    _row(DRA_GROUP, "ResourceClaim", _DRA, "resourceclaims", True, True, _I),
    _row(DRA_GROUP, "ResourceClaimTemplate", _DRA, "resourceclaimtemplates", True, True, _I),
    _row(DRA_GROUP, "DeviceTaintRule", ("v1", "v1beta2", "v1alpha3"), "devicetaintrules", False, True, _I, _NEVER),
    _row(compute_domain.GROUP, compute_domain.KIND, ("v1beta1",), "computedomains", True, True, _L, _NEVER),
    _row("nvidia.com", "ClusterPolicy", ("v1",), "clusterpolicies", False, True, _L, _NEVER),
    # GitOps releases of a GPU stack chart: their values are the ClusterPolicy and plugin configs (chart_releases)
    _row("helm.toolkit.fluxcd.io", "HelmRelease", ("v2", "v2beta2", "v2beta1"), "helmreleases", True, True, _L, _NEVER),
    _row("argoproj.io", "Application", ("v1alpha1",), "applications", True, True, _L, _NEVER),
    # ... and a helmfile's, a kustomization's or a Zarf package's release of one (inputs/chart_entries.py): no API
    *(_row("", form, (), "", True, True, _L, _NEVER) for form in RELEASE_FORMS),
    # a kustomization's remote bases: the operators' releases it installs (lint/world/operator_releases.py)
    _row("", REMOTE_BASES, (), "", False, True, _L, _NEVER),
    # ... and a Flux GitRepository's tag of an operator's repository (read from the files only: no live list)
    _row("source.toolkit.fluxcd.io", "GitRepository", ("v1",), "", True, True, _L, _NEVER),
    # Node Feature Discovery's rules: the node labels they write (a node selector may wait for them)
    _row("nfd.k8s-sigs.io", "NodeFeatureRule", ("v1alpha1",), "nodefeaturerules", False, True, _L, _NEVER),
    # gangs
    _row("scheduling.k8s.io", "Workload", ("v1beta1", "v1alpha3", "v1alpha2", "v1alpha1"), "workloads", True, True, _I),
    _row("scheduling.k8s.io", "PodGroup", ("v1beta1", "v1alpha3", "v1alpha2"), "podgroups", True, True, _I),
    _row("scheduling.k8s.io", "CompositePodGroup", ("v1alpha3",), "compositepodgroups", True, True, _I),
    _row("scheduling.x-k8s.io", "PodGroup", ("v1alpha1",), "podgroups", True, True, _I),
    _row(VOLCANO_GROUP, "PodGroup", ("v1beta1",), "podgroups", True, True, _I),
    # admission: Kueue, Volcano, KAI Scheduler
    _row(KUEUE_GROUP, "ClusterQueue", _KUEUE, "clusterqueues", False, True, _L, cluster=True),
    _row(KUEUE_GROUP, "LocalQueue", _KUEUE, "localqueues", True, True, _L),
    _row(KUEUE_GROUP, "ResourceFlavor", _KUEUE, "resourceflavors", False, True, _L, cluster=True),
    _row(KUEUE_GROUP, "Cohort", (*_KUEUE, "v1alpha1"), "cohorts", False, True, _L, cluster=True),
    _row(KUEUE_GROUP, "Topology", (*_KUEUE, "v1alpha1"), "topologies", False, True, _L),
    _row(KUEUE_GROUP, "AdmissionCheck", _KUEUE, "admissionchecks", False, True, _L),
    # the parameters of the built-in admission checks (a check whose parameters are missing is inactive)
    _row(KUEUE_GROUP, "ProvisioningRequestConfig", _KUEUE, "provisioningrequestconfigs", False, True, _L),
    _row(KUEUE_GROUP, "MultiKueueConfig", _KUEUE, "multikueueconfigs", False, True, _L),
    _row(KUEUE_GROUP, "MultiKueueCluster", _KUEUE, "multikueueclusters", False, True, _L),
    # the class a job's kueue.x-k8s.io/priority-class label names (no Workload is made while it is missing)
    _row(KUEUE_GROUP, "WorkloadPriorityClass", _KUEUE, "workloadpriorityclasses", False, True, _L, cluster=True),
    # Kueue's manager Configuration (a file, or its ConfigMap's; no API serves it)
    _row(CONFIG_GROUP, CONFIG_KIND, ("v1beta2", "v1beta1"), "", False, True, _L, _NEVER, cluster=True),
    _row(VOLCANO_GROUP, "Queue", ("v1beta1",), "queues", False, True, _L),
    _row(KAI_GROUP, "Queue", ("v2",), "queues", False, True, _L),
    # KAI's operator Config (the singleton kai-config, cluster-scoped): what its admission webhook adds to pods
    _row(kai_admission.GROUP, "Config", ("v1",), "configs", False, True, _L, _NEVER, cluster=True),
    # the runtimes TrainJobs and InferenceServices name
    *(
        _row(trainjob.GROUP, kind, ("v1alpha1",), kind.lower() + "s", kind == "TrainingRuntime", True, _L)
        for kind in trainjob.RUNTIME_KINDS
    ),
    *(
        _row(kserve.GROUP, kind, ("v1alpha1",), kind.lower() + "s", kind == "ServingRuntime", True, _L)
        for kind in kserve.RUNTIME_KINDS
    ),
    # the Knative operator's KnativeServing: its spec.config is what it writes into Knative's ConfigMaps
    _row(knative.OPERATOR_GROUP, "KnativeServing", ("v1beta1",), "knativeservings", True, True, _L, _NEVER),
    # node pools: the nodes that can exist (a linted pool is the change under review)
    _row(KARPENTER_GROUP, "NodePool", ("v1", "v1beta1"), "nodepools", False, True, _L, _NEVER, cluster=True),
    _row(
        "karpenter.k8s.aws", "EC2NodeClass", ("v1", "v1beta1"), "ec2nodeclasses", False, True, _L, _NEVER, cluster=True
    ),
    _row(CAPI_GROUP, "MachineDeployment", _CAPI, "machinedeployments", True, True, _L, _NEVER, cluster=True),
    _row(CAPI_GROUP, "MachineSet", _CAPI, "machinesets", True, True, _L, _NEVER, cluster=True),
    _row(CAPI_GROUP, "MachinePool", _CAPI, "machinepools", True, True, _L, _NEVER, cluster=True),
    # GKE's ComputeClasses: the node pools GKE may create for a pod of the class (its priorities), read by the
    # name a pod or its namespace selects, in any file
    _row("cloud.google.com", "ComputeClass", ("v1",), "computeclasses", False, True, _L, _NEVER, cluster=True),
    # Azure's node classes: read from a cluster's inventory alone (a linted one is read by no check yet), a
    # cluster's all the same: a shared folder's is no mapped cluster's
    _row("karpenter.azure.com", "AKSNodeClass", _AKS, "aksnodeclasses", False, False, _L, _NEVER, cluster=True),
    # read from a cluster for the pool model alone, never looked up by name: the Machines that tie a node to its
    # cluster-api group and Cluster Autoscaler's Deployment (its taint flags; a Deployment crosses files by
    # content: cross_file.py)
    _row(CAPI_GROUP, "Machine", _CAPI, "machines", True, False, _L, _NEVER),
    _row("apps", "Deployment", ("v1",), "deployments", True, False, _L, _NEVER),
    # Multus secondary networks a pod joins (k8s.v1.cni.cncf.io/networks)
    _row(networks.GROUP, networks.KIND, ("v1",), "network-attachment-definitions", True, True, _L),
    # autoscalers that set a workload's replicas (spec.scaleTargetRef): its count is theirs, not its manifest's
    _row("autoscaling", "HorizontalPodAutoscaler", ("v2", "v1"), "horizontalpodautoscalers", True, True, _L, _NEVER),
    _row("keda.sh", "ScaledObject", ("v1alpha1",), "scaledobjects", True, True, _L, _NEVER),
    # mutating admission runs before the schema check: a required field a webhook may add is not missing
    _row(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        ("v1",),
        "mutatingwebhookconfigurations",
        False,
        True,
        _L,
        _NEVER,
    ),
    # the cluster's admission policies: only the inventory's are read (api-rejected), a repository is not one cluster
    *(
        _row("admissionregistration.k8s.io", kind, ("v1",), plural, False, False, _I, _NEVER)
        for kind, plural in (
            ("ValidatingAdmissionPolicy", "validatingadmissionpolicies"),
            ("ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"),
        )
    ),
    # the scheduler names a cluster answers to: profiles of a KubeSchedulerConfiguration (no API lists them)
    _row(SCHEDULER_CONFIG_GROUP, "KubeSchedulerConfiguration", ("v1",), "", False, False, _L, _DECLARED),
)

BY_KEY: dict[tuple[str, str], KindRow] = {row.key: row for row in KINDS}
# The kinds whose completeness a configuration may declare, by kind (several groups may share one: Queue).
DECLARABLE: frozenset[str] = frozenset(row.kind for row in KINDS if row.complete is not Complete.NEVER)


# The (group, kind)s that describe a cluster itself.
CLUSTER_KINDS: frozenset[tuple[str, str]] = frozenset(row.key for row in KINDS if row.describes_cluster)
# The (group, kind)s whose linted objects split a run by cluster (lint.run LintRun.cluster_roots).
PER_CLUSTER_KINDS: frozenset[tuple[str, str]] = CLUSTER_KINDS | frozenset(row.key for row in KINDS if row.per_cluster)


def crossing_kinds() -> frozenset[tuple[str, str]]:
    """The (group, kind)s whose every object other files' checks may read."""
    return frozenset(row.key for row in KINDS if row.crosses_files)


@dataclass(frozen=True)
class Declared:
    """The kinds ``.gpulint.yaml`` declares complete (``complete:``), each for the files its globs match
    (relative to ``root``, the configuration's directory)."""

    kinds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    root: str = "."

    def covers(self, kind: str, file: str) -> bool:
        """The linted files hold every object of ``kind`` that a reference from ``file`` may name."""
        globs = self.kinds.get(kind)
        return bool(globs) and any(path_matches(file, glob, self.root) for glob in globs or ())


def unproven(kind: str) -> str:
    """Why a name of ``kind`` found nowhere is no error, and how to make it one."""
    listable = all(row.complete is Complete.LISTED for row in KINDS if row.kind == kind)
    inventory = "give --inventory, or " if listable else ""
    return (
        f"the linted files may not hold every {kind} (another folder, a chart, an operator or Terraform may make "
        f"it): {inventory}declare the kind complete in .gpulint.yaml (complete: [{kind}]) to check the name"
    )


def only_elsewhere(subject: str, namespaces: list[str], own: str, reader: str = "the pod's") -> str:
    """A namespaced reference (``subject``: "ResourceClaimTemplate 'x'") whose object the files or the inventory
    hold only in other namespaces: Kubernetes resolves it in the referrer's own namespace, so those are no match."""
    shown = first_and_more(namespaces)
    plural = "s" if len(namespaces) > 1 else ""
    return f"{subject} is only in namespace{plural} {shown}, not in {reader} namespace {own}"
