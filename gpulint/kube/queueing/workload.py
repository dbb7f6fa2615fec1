"""The Kueue Workload an object becomes: its queue, and its pod sets with their counts.

Kueue's job integrations (kubernetes-sigs/kueue ``pkg/controller/jobs/*``) turn each kind into
Workloads: a batch Job is one pod set ``main``; a JobSet one per replicatedJob; Kubeflow jobs one
per replica type; a RayJob/RayCluster the head, each worker group (and the submitter); a
LeaderWorkerSet one Workload per group (leader + workers); a StatefulSet one pod group of every
replica; a Deployment one Workload per pod. The queue is read from the object's label
``kueue.x-k8s.io/queue-name`` (``jobframework.QueueNameForObject``); the annotation of the same
name is no longer read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, mapping
from gpulint.kube.refs import Path
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, api_group, template_metadata

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"

# Topology-aware scheduling: pod template annotations naming a level (a node label) of the flavor's Topology
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
# Pod sets of one group are given their flavors together (a leader and its workers in one domain)
PODSET_GROUP = "kueue.x-k8s.io/podset-group-name"
TOPOLOGY_ANNOTATIONS = (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, SLICE_TOPOLOGY)

WHOLE, PER_POD, PER_REPLICA = "whole", "per-pod", "per-replica"
# (api group, kind) -> how Kueue makes Workloads of it.
INTEGRATIONS: dict[tuple[str, str], str] = {
    ("batch", "Job"): WHOLE,
    ("batch", "CronJob"): WHOLE,  # each Job it creates, labelled from the jobTemplate
    ("jobset.x-k8s.io", "JobSet"): WHOLE,
    ("kubeflow.org", "PyTorchJob"): WHOLE,
    ("kubeflow.org", "TFJob"): WHOLE,
    ("kubeflow.org", "MPIJob"): WHOLE,
    ("kubeflow.org", "XGBoostJob"): WHOLE,
    ("kubeflow.org", "PaddleJob"): WHOLE,
    ("kubeflow.org", "JAXJob"): WHOLE,
    ("ray.io", "RayJob"): WHOLE,
    ("ray.io", "RayCluster"): WHOLE,
    # trainjob_controller.go: the runtime's JobSet built with the TrainJob applied, its pod sets (a
    # TrainJob bound to its runtime: kube/trainjob's composed pods; without its runtime, no pod sets)
    ("trainer.kubeflow.org", "TrainJob"): WHOLE,
    ("apps", "StatefulSet"): WHOLE,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): PER_REPLICA,
    ("apps", "Deployment"): PER_POD,
    ("", "Pod"): WHOLE,
}
# Kueue integrations whose Workloads gpulint does not build (their pods are described in the operator's own
# fields, not pod templates): only whether Kueue manages them at all is judged. kueue pkg/controller/jobs/
# sparkapplication, appwrapper and rayservice FrameworkName (ff69552e, v0.20.0-devel).
UNMODELLED_INTEGRATIONS = frozenset(
    {
        ("sparkoperator.k8s.io", "SparkApplication"),
        ("workload.codeflare.dev", "AppWrapper"),
        ("ray.io", "RayService"),
    }
)
# Kinds whose pods are one distributed program: a Workload of them that cannot run whole never makes progress.
DISTRIBUTED = frozenset(
    {
        ("jobset.x-k8s.io", "JobSet"),
        ("kubeflow.org", "PyTorchJob"),
        ("kubeflow.org", "TFJob"),
        ("kubeflow.org", "MPIJob"),
        ("kubeflow.org", "XGBoostJob"),
        ("kubeflow.org", "PaddleJob"),
        ("kubeflow.org", "JAXJob"),
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
        ("ray.io", "RayJob"),
        ("ray.io", "RayCluster"),
        ("trainer.kubeflow.org", "TrainJob"),
    }
)


@dataclass(frozen=True)
class QueueName:
    name: str
    path: Path  # to the label's key
    as_annotation: bool = False  # given as an annotation, which Kueue does not read
    on_pods: bool = False  # read from the pod template: the pods carry it, not the controller's object


def labels_path(data: dict[str, Any]) -> Path:
    """Where the workload's labels are: a CronJob's Jobs carry its job template's."""
    if data.get("kind") == "CronJob" and api_group(str(data.get("apiVersion", ""))) == "batch":
        return ("spec", "jobTemplate", "metadata")
    return ("metadata",)


def queue_name(facts: ObjectFacts) -> QueueName | None:
    """The LocalQueue the object is submitted to (the label), or the annotation Kueue ignores (found
    once while the object is checked: the queue and gang rules all ask)."""
    return facts.fact("queue name", None, _queue_name, facts)


def _queue_name(facts: ObjectFacts) -> QueueName | None:
    data = facts.data
    meta_path = labels_path(data)
    meta = mapping(dig(data, *meta_path))
    label = mapping(meta.get("labels")).get(QUEUE_LABEL)
    if isinstance(label, str) and label:
        return QueueName(label, (*meta_path, "labels", QUEUE_LABEL))
    if data.get("kind") in ("Deployment", "StatefulSet") and integration(data) in (PER_POD, WHOLE):
        for site in facts.sites():  # the pods carry it when the controller's object does not
            label = template_labels(data, site).get(QUEUE_LABEL)
            if isinstance(label, str) and label:
                return QueueName(label, (*site.template_path, "metadata", "labels", QUEUE_LABEL), on_pods=True)
    annotation = mapping(meta.get("annotations")).get(QUEUE_LABEL)
    if isinstance(annotation, str) and annotation:
        return QueueName(annotation, (*meta_path, "annotations", QUEUE_LABEL), as_annotation=True)
    return None


def integration(data: dict[str, Any]) -> str | None:
    """How Kueue turns the object into Workloads; None for kinds Kueue does not manage."""
    return INTEGRATIONS.get((api_group(str(data.get("apiVersion", ""))), str(data.get("kind", ""))))


def is_kueue_framework(data: dict[str, Any]) -> bool:
    """A kind some Kueue integration manages, whether or not gpulint builds its Workloads."""
    key = (api_group(str(data.get("apiVersion", ""))), str(data.get("kind", "")))
    return key in INTEGRATIONS or key in UNMODELLED_INTEGRATIONS


def is_distributed(data: dict[str, Any]) -> bool:
    key = (api_group(str(data.get("apiVersion", ""))), str(data.get("kind", "")))
    return key in DISTRIBUTED or (key == ("batch", "Job") and dig(data, "spec", "completionMode") == "Indexed")


@dataclass(frozen=True)
class TopologyRequest:
    """The levels a pod set asks of its flavor's Topology (empty: no topology-aware scheduling asked)."""

    levels: tuple[tuple[str, str], ...] = ()  # (annotation, node label), in TOPOLOGY_ANNOTATIONS order
    unconstrained: bool = False
    path: Path = ()  # the first annotation
    group: str = ""  # podset-group-name, read only with a required or preferred level (tas.go Build)

    @property
    def explicit(self) -> bool:
        return bool(self.levels) or self.unconstrained


def topology_request(data: dict[str, Any], site: PodSpecSite) -> TopologyRequest:
    annotations = mapping(template_metadata(data, site).get("annotations"))
    levels = tuple(
        (key, annotations[key])
        for key in TOPOLOGY_ANNOTATIONS
        if isinstance(annotations.get(key), str) and annotations[key]
    )
    unconstrained = str(annotations.get(UNCONSTRAINED_TOPOLOGY, "")).lower() == "true"
    first = levels[0][0] if levels else UNCONSTRAINED_TOPOLOGY if unconstrained else ""
    path = (*site.template_path, "metadata", "annotations", first) if first else ()
    group = annotations.get(PODSET_GROUP)
    levelled = any(key in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY) for key, _ in levels)
    return TopologyRequest(levels, unconstrained, path, group if isinstance(group, str) and levelled else "")


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    site: PodSpecSite


def pod_sets(facts: ObjectFacts) -> list[PodSet]:
    """The pod sets of ONE Workload of the object (for a LeaderWorkerSet: one group; for a
    Deployment: one pod; for a Pod of a Kueue pod group: this Pod's part of the group's Workload)."""
    data = facts.data
    how = integration(data)
    if how is None:
        return []
    sites = facts.sites()
    if how == PER_POD:
        return [PodSet(_name(site), 1, site) for site in sites]
    if how == PER_REPLICA:
        replicas = integer(dig(data, "spec", "replicas"), 1) or 0
        return [
            PodSet(_name(site), (site.pods or 0) // replicas if replicas else 0, site) for site in sites if replicas
        ]
    if data.get("kind") == "Pod":  # one Pod; the other Pods of a Kueue pod group are other objects
        return [PodSet("main", 1, site) for site in sites]
    return [PodSet(_name(site), site.pods or 0, site) for site in sites if site.pods is not None]


def _name(site: PodSpecSite) -> str:
    return (site.role or "main").lower()


def template_labels(data: dict[str, Any], site: PodSpecSite) -> dict[str, Any]:
    return mapping(template_metadata(data, site).get("labels"))
