"""The workloads whose pods are ranks of one distributed program (NCCL and rendezvous between them).

One table for the runtime rules (each rank needs /dev/shm, a DNS name for its peers) and for
gang-missing (whose pods only work when all of them run at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping
from gpulint.kube.workloads import api_group


@dataclass(frozen=True)
class DistributedKind:
    group: str
    kind: str
    # All ranks must run at once for any to make progress: without a gang policy a partial placement holds
    # GPUs idle (gang-missing). False for Ray: its head and workers are one Ray program, but Ray schedules
    # tasks on whichever workers exist (the autoscaler adds and removes them), so a partial cluster works.
    all_at_once: bool = True


DISTRIBUTED_KINDS: tuple[DistributedKind, ...] = (
    DistributedKind("kubeflow.org", "PyTorchJob"),
    DistributedKind("kubeflow.org", "MPIJob"),
    DistributedKind("kubeflow.org", "TFJob"),
    DistributedKind("kubeflow.org", "JAXJob"),
    DistributedKind("kubeflow.org", "XGBoostJob"),
    DistributedKind("kubeflow.org", "PaddleJob"),
    DistributedKind("jobset.x-k8s.io", "JobSet"),
    DistributedKind("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    DistributedKind("ray.io", "RayCluster", all_at_once=False),
    DistributedKind("ray.io", "RayJob", all_at_once=False),
    DistributedKind("ray.io", "RayService", all_at_once=False),
    DistributedKind("batch.volcano.sh", "Job"),
)
_BY_KEY = {(entry.group, entry.kind): entry for entry in DISTRIBUTED_KINDS}


def distributed_kind(api_version: str, kind: str) -> DistributedKind | None:
    """The table's entry for this kind, None when its pods are not ranks of one program."""
    return _BY_KEY.get((api_group(api_version), kind))


def ranks_of_one_program(api_version: str, kind: str, data: dict[str, Any]) -> bool:
    """Whether the object's pods are ranks that all run at once: a kind of the table so marked, or an Indexed Job
    (each pod its completion index, the shape torchrun and MPI launch lines are written for)."""
    found = distributed_kind(api_version, kind)
    if found is not None:
        return found.all_at_once
    indexed = mapping(data.get("spec")).get("completionMode") == "Indexed"
    return (api_group(api_version), kind) == ("batch", "Job") and indexed
