"""The DNS names the operators give a workload's pods: ``<hostname>.<subdomain>`` in the pod's namespace.

A pod is reachable by its hostname only through a headless Service named as its ``spec.subdomain`` that
selects it (kubernetes/kubernetes pkg/controller/endpointslice: a hostname record only when the Service's name
is the pod's subdomain). Each operator sets both, in its own way (a table below, one entry per kind):

- JobSet (kubernetes-sigs/jobset v0.12.0 pkg/controllers/jobset_controller.go): the child Job of replicated job
  ``r``, index ``j`` is ``<jobset>-<r>-<j>`` (pkg/util/placement GenJobName); with ``spec.network
  .enableDNSHostnames`` (true unless false: pkg/webhooks/jobset_webhook.go Default) its pods get the subdomain
  ``spec.network.subdomain``, else the JobSet's name (GetSubdomain), and the controller creates the headless
  Service of that name selecting ``jobset.sigs.k8s.io/jobset-name`` (createHeadlessSvcIfNecessary) - unless one
  of that name exists already. Its replicated jobs are Indexed (the webhook's default).
- an Indexed Job (kubernetes/kubernetes pkg/controller/job/job_controller.go): pod ``i`` gets the hostname
  ``<job>-<i>``; its template's ``subdomain`` is the user's, and so is the Service.
- StatefulSet (pkg/controller/statefulset/stateful_set_utils.go initIdentity): hostname ``<sts>-<ordinal>``,
  subdomain ``spec.serviceName``.
- LeaderWorkerSet (kubernetes-sigs/lws v0.10.0 pkg/controllers/leaderworkerset_controller.go
  reconcileHeadlessServices; pkg/utils/pod LWS_LEADER_ADDRESS ``<lws>-<group>.<subdomain>.<namespace>``): leaders
  ``<lws>-<group>``, workers ``<lws>-<group>-<index>`` (1 to size-1); the Shared subdomain policy (the default)
  names the headless Service after the LeaderWorkerSet; UniquePerReplica gives each group its own, named as its
  leader ``<lws>-<group>`` (pkg/webhooks/pod_webhook.go: the leader's subdomain is its name;
  pkg/controllers/pod_controller.go: the workers' StatefulSet serviceName is the leader's name, the Service made
  per leader pod).
- MPIJob v2beta1 (kubeflow/mpi-operator v0.8.0 pkg/controller/mpi_job_controller.go newWorker, newLauncherPodTemplate):
  hostnames ``<job>-worker-<i>`` and ``<job>-launcher``, subdomain the MPIJob's name, its Service the operator's.
- PyTorchJob (kubeflow/trainer v1.9.4 pkg/controller.v1/common/service.go CreateNewService, pkg/core/utils.go
  GenGeneralName): no pod hostname, but a headless Service per replica, ``<job>-<master|worker>-<i>``, selecting
  that one pod; with a Master replica the operator appends ``MASTER_ADDR`` and ``PET_MASTER_ADDR``
  ``<job>-master-0`` after the container's own (pkg/controller.v1/pytorch/envvar.go setPodEnv, master.go), and
  the kubelet keeps the last of a name.
- RayCluster (ray-project/kuberay v1.7.0 ray-operator/controllers/ray/utils/util.go GenerateHeadServiceName):
  the head Service ``<cluster>-head-svc``, or ``spec.headGroupSpec.headService.metadata.name``; the operator
  sets ``RAY_ADDRESS`` only where the container does not (common/pod.go setContainerEnvVars, EnvVarExists).
- TrainJob (Kubeflow Trainer v2, kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/torch/torch.go): the
  JobSet its runtime's template makes, named after the TrainJob, the trainer's replicated job running numNodes
  pods; the torch plugin's PET_MASTER_ADDR is ``<trainjob>-node-0-0.<trainjob>``.
- Volcano Job with the svc plugin (volcano-sh/volcano v1.15.1 pkg/controllers/job/plugins/svc/svc.go): hostnames
  ``<job>-<task>-<i>``, subdomain the Job's name (unless a task sets its own), the headless Service the plugin's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube import trainjob
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.workloads import api_group

# DNS label digits as Go's %d writes them: no leading zero
_INDEX = r"(0|[1-9][0-9]{0,8})"
# A cluster's search domains: <subdomain>.<namespace>.svc.<cluster domain> (pkg/kubelet/network/dns)
_SVC = "svc"


@dataclass(frozen=True)
class PodSet:
    """Pods named ``<stem><i>[-<j>...]`` with each index below its count (None: not known)."""

    stem: str
    counts: tuple[int | None, ...]
    first: tuple[int, ...] = ()  # the lowest value of each index (0 unless given)

    def index_of(self, hostname: str) -> tuple[int, ...] | None:
        """The indices of ``hostname`` when it has this set's shape (whether or not they are in range)."""
        if not hostname.startswith(self.stem):
            return None
        found = re.fullmatch("-".join([_INDEX] * len(self.counts)), hostname[len(self.stem) :])
        return None if found is None else tuple(int(group) for group in found.groups())

    def holds(self, indices: tuple[int, ...]) -> bool | None:
        """Whether every index is in range (None: a count is not known)."""
        lows = self.first or (0,) * len(self.counts)
        if any(index < low for index, low in zip(indices, lows, strict=True)):
            return False
        if any(count is None for count in self.counts):
            return None
        return all(index < low + count for index, low, count in zip(indices, lows, self.counts, strict=True))  # type: ignore[operator]

    def show(self) -> str:
        """The names, as `pytorch-workers-0-{0..1}`."""
        lows = self.first or (0,) * len(self.counts)
        parts = []
        for low, count in zip(lows, self.counts, strict=True):
            if count == 1:
                parts.append(str(low))
            else:
                parts.append(f"{{{low}..{'N' if count is None else low + count - 1}}}")
        return self.stem + "-".join(parts)


@dataclass(frozen=True)
class PodNames:
    """How a workload's pods are reached: ``<hostname>.<subdomain>`` for each hostname of its pod sets."""

    owner: str  # "JobSet 'pytorch'"
    subdomain: str
    subdomain_from: str  # where the subdomain comes from, for the message
    sets: tuple[PodSet, ...]
    service_made: bool  # the operator creates the headless Service (else the user must)
    per_group: bool = False  # the subdomain is ``<subdomain>-<first index>``: one Service per group

    def hostname(self, label: str) -> tuple[tuple[int, ...], bool | None] | None:
        """The indices of ``label`` in the first set whose shape it has, and whether they are in range."""
        for pod_set in self.sets:
            indices = pod_set.index_of(label)
            if indices is not None:
                return indices, pod_set.holds(indices)
        return None

    def subdomain_of(self, indices: tuple[int, ...]) -> str:
        """The subdomain of the pod with these indices."""
        return f"{self.subdomain}-{indices[0]}" if self.per_group and indices else self.subdomain

    @property
    def service(self) -> str:
        """The headless Service's name as the messages write it."""
        return f"{self.subdomain}-<group>" if self.per_group else self.subdomain

    def show(self) -> str:
        return ", ".join(f"{pod_set.show()}.{self.service}" for pod_set in self.sets)


def _jobset(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    network = mapping(spec.get("network"))
    if not name or network.get("enableDNSHostnames") is False:
        return None
    sets = []
    for rjob in sequence(spec.get("replicatedJobs")):
        rjob = mapping(rjob)
        job = mapping(dig(rjob, "template", "spec"))
        if text(rjob.get("name")) == "" or job.get("completionMode") not in (None, "Indexed"):
            continue
        pods = integer(job.get("completions"), None) if "completions" in job else integer(job.get("parallelism"), 1)
        sets.append(PodSet(f"{name}-{text(rjob.get('name'))}-", (integer(rjob.get("replicas"), 1), pods)))
    subdomain = text(network.get("subdomain"))
    source = "spec.network.subdomain" if subdomain else "the JobSet's name; spec.network.subdomain is not set"
    return PodNames(f"JobSet '{name}'", subdomain or name, source, tuple(sets), True)


def _train_job(data: dict[str, Any]) -> PodNames | None:
    if not isinstance(data, trainjob.BoundTrainJob):
        return None  # its runtime is not among the linted objects: its replicated jobs are not known
    name, template = text(dig(data, "metadata", "name")), mapping(dig(data.runtime, "spec", "template", "spec"))
    nodes = dig(data, "spec", "trainer", "numNodes")
    nodes = nodes if nodes is not None else dig(data.runtime, "spec", "mlPolicy", "numNodes")
    jobs = []
    for rjob in sequence(template.get("replicatedJobs")):
        rjob = mapping(rjob)
        if text(dig(rjob, "template", "metadata", "labels", trainjob.ANCESTOR_LABEL)) == trainjob.TRAINER:
            job = {**mapping(dig(rjob, "template", "spec")), "parallelism": nodes or 1, "completions": nodes or 1}
            rjob = {**rjob, "template": {**mapping(rjob.get("template")), "spec": job}}
        jobs.append(rjob)
    names = _jobset({"metadata": {"name": name}, "spec": {**template, "replicatedJobs": jobs}})
    return None if names is None else replace(names, owner=f"the JobSet of TrainJob '{name}'")


def _job(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    subdomain = text(dig(spec, "template", "spec", "subdomain"))
    if not name or not subdomain or spec.get("completionMode") != "Indexed":
        return None
    pods = integer(spec.get("completions"), None)
    return PodNames(f"Job '{name}'", subdomain, "its pod template's subdomain", (PodSet(f"{name}-", (pods,)),), False)


def _stateful_set(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    service = text(spec.get("serviceName"))
    if not name or not service:
        return None
    start = integer(dig(spec, "ordinals", "start"), 0) or 0
    pod_set = PodSet(f"{name}-", (integer(spec.get("replicas"), 1),), (start,))
    return PodNames(f"StatefulSet '{name}'", service, "spec.serviceName", (pod_set,), False)


def _leader_worker_set(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    policy = text(dig(spec, "networkConfig", "subdomainPolicy")) or "Shared"
    if not name or policy not in _LWS_POLICIES:
        return None
    groups, size = integer(spec.get("replicas"), 1), integer(dig(spec, "leaderWorkerTemplate", "size"), 1)
    sets = [PodSet(f"{name}-", (groups,))]
    if size is None or size > 1:
        sets.append(PodSet(f"{name}-", (groups, None if size is None else size - 1), (0, 1)))
    shared = policy == "Shared"
    source = "the LeaderWorkerSet's name" if shared else "the group's leader, subdomainPolicy UniquePerReplica"
    return PodNames(f"LeaderWorkerSet '{name}'", name, source, tuple(sets), True, per_group=not shared)


_LWS_POLICIES = ("Shared", "UniquePerReplica")


def _mpi_job(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    if not name or text(data.get("apiVersion")).rpartition("/")[2] != "v2beta1":
        return None
    workers = integer(dig(spec, "mpiReplicaSpecs", "Worker", "replicas"), None)  # unset: the defaulting decides
    sets = (PodSet(f"{name}-launcher", ()), PodSet(f"{name}-worker-", (workers,)))
    return PodNames(f"MPIJob '{name}'", name, "the MPIJob's name", sets, True)


def _volcano_job(data: dict[str, Any]) -> PodNames | None:
    name, spec = text(dig(data, "metadata", "name")), mapping(data.get("spec"))
    if not name or "svc" not in mapping(spec.get("plugins")):
        return None
    tasks = [mapping(task) for task in sequence(spec.get("tasks"))]
    if any(_own_name(task) or text(task.get("name")) == "" for task in tasks):
        return None  # a task that names its pods itself: they answer under its names
    sets = tuple(PodSet(f"{name}-{text(task.get('name'))}-", (integer(task.get("replicas"), 1),)) for task in tasks)
    return PodNames(f"Volcano Job '{name}'", name, "the Job's name", sets, True)


def _own_name(task: dict[str, Any]) -> bool:
    pod = mapping(dig(task, "template", "spec"))
    return bool(text(pod.get("subdomain")) or text(pod.get("hostname")))


_NAMING: dict[tuple[str, str], Callable[[dict[str, Any]], PodNames | None]] = {
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    (trainjob.GROUP, "TrainJob"): _train_job,
    ("batch", "Job"): _job,
    ("apps", "StatefulSet"): _stateful_set,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _leader_worker_set,
    ("kubeflow.org", "MPIJob"): _mpi_job,
    ("batch.volcano.sh", "Job"): _volcano_job,
}


def pod_names(data: dict[str, Any]) -> PodNames | None:
    """How the object's pods are reached by name (None: its kind gives them no hostname and subdomain)."""
    naming = _NAMING.get((api_group(text(data.get("apiVersion"))), text(data.get("kind"))))
    return naming(data) if naming is not None else None


@dataclass(frozen=True)
class ServiceNames:
    """The Services an operator creates for a workload, one per pod, each named ``<stem><i>``."""

    owner: str  # "PyTorchJob 'mnist'"
    name: str  # the workload's
    sets: tuple[PodSet, ...]
    shape: re.Pattern[str]  # any such workload's Service names: (<workload>)-<role>-<i>
    appended: tuple[tuple[str, str], ...]  # variables the operator appends after the container's own

    def show(self) -> str:
        return ", ".join(pod_set.show() for pod_set in self.sets)


# PyTorchJob's replica types as the Service names write them (strings.ToLower of the ReplicaType)
_PYTORCH_ROLES = {"Master": "master", "Worker": "worker"}
_PYTORCH_SHAPE = re.compile(rf"([a-z0-9][-a-z0-9]*)-(?:master|worker)-{_INDEX}")


def _pytorch_job(data: dict[str, Any]) -> ServiceNames | None:
    name = text(dig(data, "metadata", "name"))
    specs = mapping(dig(data, "spec", "pytorchReplicaSpecs"))
    if not name or text(data.get("apiVersion")).rpartition("/")[2] != "v1":
        return None
    sets = tuple(
        PodSet(f"{name}-{role}-", (integer(dig(specs, kind, "replicas"), 1),))  # unset: the defaulter's 1
        for kind, role in _PYTORCH_ROLES.items()
        if kind in specs
    )
    master = f"{name}-master-0"
    appended = (("MASTER_ADDR", master), ("PET_MASTER_ADDR", master)) if "Master" in specs else ()
    return ServiceNames(f"PyTorchJob '{name}'", name, sets, _PYTORCH_SHAPE, appended)


_RAY_SHAPE = re.compile(r"([a-z0-9][-a-z0-9]*)-head-svc")


def _ray_cluster(data: dict[str, Any]) -> ServiceNames | None:
    name = text(dig(data, "metadata", "name"))
    if not name:
        return None
    head = text(dig(data, "spec", "headGroupSpec", "headService", "metadata", "name")) or f"{name}-head-svc"
    return ServiceNames(f"RayCluster '{name}'", name, (PodSet(head, ()),), _RAY_SHAPE, ())


# A RayJob's and a RayService's cluster is named <owner>-<5 random characters> (GenerateRayClusterName), its own
# head Service <cluster>-head-svc unknown to the files; the operator adds a head Service named after the owner,
# <owner>-head-svc, that follows the cluster serving it (GenerateHeadServiceName for RayJobCRD and RayServiceCRD:
# common/job.go BuildHeadServiceForRayJob, unless the RayJob selects a running cluster with clusterSelector;
# common/service.go BuildHeadServiceForRayService), and a RayService its serve Service <owner>-serve-svc
# (GenerateServeServiceName). A headService name in the cluster spec names the cluster's own head Service.
_RAY_OWNERS = {"RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}


def _ray_owner(data: dict[str, Any]) -> ServiceNames | None:
    kind, name = text(data.get("kind")), text(dig(data, "metadata", "name"))
    if not name or (kind == "RayJob" and mapping(dig(data, "spec", "clusterSelector"))):
        return None  # a RayJob on a running cluster: that cluster's Services, not the files'
    names = [f"{name}-head-svc", *([f"{name}-serve-svc"] if kind == "RayService" else [])]
    own = text(dig(data, "spec", _RAY_OWNERS[kind], "headGroupSpec", "headService", "metadata", "name"))
    names += [own] if own else []
    return ServiceNames(f"{kind} '{name}'", name, tuple(PodSet(n, ()) for n in names), _RAY_SHAPE, ())


_SERVICES: dict[tuple[str, str], Callable[[dict[str, Any]], ServiceNames | None]] = {
    ("kubeflow.org", "PyTorchJob"): _pytorch_job,
    ("ray.io", "RayCluster"): _ray_cluster,
    ("ray.io", "RayJob"): _ray_owner,
    ("ray.io", "RayService"): _ray_owner,
}


def service_names(data: dict[str, Any]) -> ServiceNames | None:
    """The per-pod Services the object's operator creates (None: its kind gets none)."""
    naming = _SERVICES.get((api_group(text(data.get("apiVersion"))), text(data.get("kind"))))
    return naming(data) if naming is not None else None


@dataclass(frozen=True)
class ServiceHost:
    """A host read as a Service's name: ``<service>[.<namespace>[.svc[.<domain>]]]``."""

    service: str
    namespace: str  # "" when not written
    plain: bool  # bare, or with ``.svc``: not a pod's ``<hostname>.<subdomain>`` either


def service_host(value: str) -> ServiceHost | None:
    """The Service a ``value`` names (``svc``, ``svc.ns``, ``svc.ns.svc[.<domain>]``, with a port or a URL's
    scheme and path); None for what is not such a name."""
    host = value.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].rsplit(":", 1)[0] if host.count(":") <= 1 else ""
    labels = host.rstrip(".").split(".")
    if not all(_LABEL.fullmatch(label) for label in labels) or (len(labels) > 2 and labels[2] != _SVC):
        return None
    return ServiceHost(labels[0], labels[1] if len(labels) > 1 else "", len(labels) != 2)


def service_mismatch(
    variable: str, value: str, host: ServiceHost, names: ServiceNames, known: Callable[[str], bool]
) -> Mismatch | None:
    """Whether ``host`` (written in ``variable``) has the shape of the operator's Service names but is none of
    this workload's. ``known(name)``: a linted Service of that name is in the pod's namespace."""
    service = host.service
    services = f"the {names.owner.split(' ')[0]} operator creates the Services {names.show()}"
    for pod_set in names.sets:
        indices = pod_set.index_of(service)
        if indices is not None:
            if pod_set.holds(indices) is not False or known(service):
                return None
            return Mismatch(f"{variable} names {value}, but {names.owner} has no replica {service}: {services}", True)
    other = names.shape.fullmatch(service)
    if other is None or not host.plain or known(service):
        # <a>.<b> may as well be another workload's pod <hostname>.<subdomain>
        return None
    if other.group(1) == names.name:  # its own default name, which the spec replaces
        return Mismatch(f"{variable} names {value}, but {names.owner} has no Service {service}: {services}", True)
    return Mismatch(f"{variable} names {value}, a Service of a workload named {other.group(1)}: {services}", False)


@dataclass(frozen=True)
class HostName:
    """A host name split as the cluster DNS reads it: ``<first>.<second>[.<namespace>[.svc[.<domain>]]]``."""

    first: str
    second: str
    namespace: str  # "" when not written (the pod's own: its search path)


_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def host_name(value: str) -> HostName | None:
    """The host of ``value`` (``host``, ``host:port``, a URL's ``scheme://host:port/...``) when it is a cluster
    name of two labels or more; None for an address, a bare name (a Service's) or what is not a DNS name."""
    host = value.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].rsplit(":", 1)[0] if host.count(":") <= 1 else ""
    labels = host.rstrip(".").split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    if len(labels) > 2 and (len(labels) > 3 and labels[3] != _SVC):
        return None  # another domain than the cluster's: <a>.<b>.<c>.com
    return HostName(labels[0], labels[1], labels[2] if len(labels) > 2 else "")


@dataclass(frozen=True)
class Mismatch:
    """A host named like the workload's own pods that none of them answers to."""

    message: str
    certain: bool  # the host has the shape of the pods' names with one part wrong (a warning; else info)


def mismatch(
    variable: str, value: str, host: HostName, names: PodNames, services: Callable[[str], bool]
) -> Mismatch | None:
    """Whether ``host`` (written in ``variable``) misses the pods ``names`` describes. ``services(name)``: a
    Service of that name is among the linted objects in the pod's namespace (it may make the name resolve)."""
    found = names.hostname(host.first)
    if found is None:
        return None  # not named like these pods: another workload's, or a Service's
    indices, in_range = found
    subdomain = names.subdomain_of(indices)
    pods = f"the pods of {names.owner} are reached as {names.show()}"
    if host.second == subdomain:
        if in_range is not False:
            return None
        return Mismatch(f"{variable} names {value}, but no pod of {names.owner} is named {host.first}: {pods}", True)
    if services(host.second):
        return None  # a Service of that name in the linted files: it may be made to answer
    wrong = f"{variable} names {value}, but the pods' subdomain is {subdomain} ({names.subdomain_from}): {pods}"
    return Mismatch(wrong, in_range is not False)
