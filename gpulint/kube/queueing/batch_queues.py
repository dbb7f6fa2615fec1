"""The queues of the batch schedulers that are not Kueue: Volcano and NVIDIA KAI Scheduler.

Volcano (volcano-sh/apis scheduling/v1beta1 Queue, cluster-scoped): a Volcano Job names its queue
in ``spec.queue`` (default ``default``, created at install), a PodGroup in ``spec.queue``, a pod
with the annotation ``scheduling.volcano.sh/queue-name``. Volcano's job admission webhook
(pkg/webhooks/admission/jobs/validate/admit_job.go) refuses a Job whose queue does not exist
(``unable to find job queue``) or is not Open (``can only submit job to queue with state `Open`,
queue `%s` status is `%s```). Its proportion plugin (pkg/scheduler/plugins/proportion) never lets a
queue's allocation pass its ``spec.capability`` (deserved is capped at it; ``queueAllocatable``), and
does not enqueue a PodGroup whose minResources exceed it (``queue resource quota insufficient``).

KAI Scheduler (NVIDIA/KAI-Scheduler, ``scheduling.run.ai/v2`` Queue, cluster-scoped): a workload
joins a queue with the label ``kai.scheduler/queue`` (its pod grouper's default queue label key);
``runai/queue`` is the label of the Run:ai releases KAI came from. Its proportion plugin
(pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go isOverLimit) refuses a job whose
requests would take a queue, or any parent queue, past ``spec.resources.{gpu,cpu,memory}.limit``: GPUs
(fractions allowed), millicpus and megabytes (10^6 bytes; apis/scheduling/v2/resources.go, proportion.go
createQueueResourceAttrs). Only ``-1`` is unlimited (UnlimitedResourceQuantity); the field is a float64
without a default, so a limit not written is 0 and allows nothing (docs/queues: "`0` or unset: No
additional resources allowed (default)"). What a job asks at once is the tasks of its PodGroup that are
allocated together (podgroup_info GetTasksToAllocateInitResource): for a Kubeflow job the pod grouper sets
the PodGroup's minAvailable to ``runPolicy.schedulingPolicy.minAvailable`` or every replica
(podgrouper/plugins/kubeflow/distributed_common.go); other kinds' pods are allocated one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.gpu_sharing import NVIDIA_GPU
from gpulint.kube.queueing.keys import metadata_places
from gpulint.kube.refs import Path
from gpulint.kube.scheduler import resource_list
from gpulint.kube.workloads import ObjectFacts, api_group, template_metadata

VOLCANO_GROUP = "scheduling.volcano.sh"
KAI_GROUP = "scheduling.run.ai"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
RUNAI_QUEUE_LABEL = "runai/queue"
KAI_SCHEDULER = "kai-scheduler"
VOLCANO_DEFAULT_QUEUE = "default"  # created when Volcano is installed
KAI_DEFAULT_QUEUE = "default-queue"  # the queue KAI's quick start and chart create


@dataclass(frozen=True)
class QueueUse:
    system: str  # "Volcano" or "KAI Scheduler"
    group: str  # the Queue's API group
    name: str
    path: Path
    defaulted: bool = False  # the system's default queue (written or not): assumed to exist unless listed


def volcano_queue(facts: ObjectFacts) -> QueueUse | None:
    """The Volcano queue the workload joins (found once while the object is checked: the queue rules ask)."""
    return facts.fact("volcano queue", None, _volcano_queue, facts)


def _volcano_queue(facts: ObjectFacts) -> QueueUse | None:
    data = facts.data
    group, kind = api_group(text(data.get("apiVersion"))), data.get("kind")
    if (group, kind) in (("batch.volcano.sh", "Job"), (VOLCANO_GROUP, "PodGroup")):
        queue = dig(data, "spec", "queue")
        if isinstance(queue, str) and queue:
            return QueueUse("Volcano", VOLCANO_GROUP, queue, ("spec", "queue"))
        return QueueUse("Volcano", VOLCANO_GROUP, VOLCANO_DEFAULT_QUEUE, ("spec",), defaulted=True)
    for site in facts.sites():
        if site.spec.get("schedulerName") != "volcano":
            continue
        annotations = mapping(template_metadata(data, site).get("annotations"))
        queue = annotations.get(VOLCANO_QUEUE_ANNOTATION)
        if isinstance(queue, str) and queue:
            path = (*site.template_path, "metadata", "annotations", VOLCANO_QUEUE_ANNOTATION)
            return QueueUse("Volcano", VOLCANO_GROUP, queue, path)
    return None


def kai_queue(facts: ObjectFacts) -> tuple[QueueUse | None, Path | None]:
    """(the KAI queue the workload joins, the path of a legacy ``runai/queue`` label used instead; found once
    while the object is checked)."""
    return facts.fact("kai queue", None, _kai_queue, facts)


def _kai_queue(facts: ObjectFacts) -> tuple[QueueUse | None, Path | None]:
    legacy: Path | None = None
    for path, meta in metadata_places(facts):
        labels = mapping(meta.get("labels"))
        if KAI_QUEUE_LABEL not in labels and RUNAI_QUEUE_LABEL not in labels:
            continue
        queue = labels.get(KAI_QUEUE_LABEL)
        if isinstance(queue, str) and queue:
            use = QueueUse(
                "KAI Scheduler", KAI_GROUP, queue, (*path, "labels", KAI_QUEUE_LABEL), queue == KAI_DEFAULT_QUEUE
            )
            return use, None
        if legacy is None and isinstance(labels.get(RUNAI_QUEUE_LABEL), str):
            legacy = (*path, "labels", RUNAI_QUEUE_LABEL)
    if legacy is None:
        return None, None
    uses_kai = any(site.spec.get("schedulerName") == KAI_SCHEDULER for site in facts.sites())
    return None, legacy if uses_kai else None


@dataclass(frozen=True)
class BatchQueue:
    group: str
    name: str
    state: str  # Volcano status.state (Open, Closed, Closing, Unknown); "" when not reported
    # Volcano spec.capability: the most the queue ever allocates, per resource (a value at or below
    # zero, or a resource not named, is no limit: the proportion plugin treats it as the cluster's)
    capability: tuple[tuple[str, Fraction], ...] = ()
    # Volcano spec.guarantee.resource: reserved for this queue; other queues' share is the cluster minus every
    # queue's guarantee (proportion and capacity plugins: realCapability = ExceededPart(total, totalGuarantee)
    # + own guarantee)
    guarantee: tuple[tuple[str, Fraction], ...] = ()
    # KAI spec.parentQueue (Volcano spec.parent, hierarchical queues), and KAI spec.resources' limits in
    # Kubernetes units (GPUs, cores, bytes); a resource
    # whose limit is -1 (no limit) or not a number is absent
    parent: str = ""
    limits: tuple[KaiLimit, ...] = ()

    @classmethod
    def of(cls, data: dict[str, Any]) -> BatchQueue:
        state = dig(data, "status", "state") or dig(data, "spec", "state")
        group = api_group(text(data.get("apiVersion")))
        capability = resource_list(dig(data, "spec", "capability")) if group == VOLCANO_GROUP else {}
        guarantee = resource_list(dig(data, "spec", "guarantee", "resource")) if group == VOLCANO_GROUP else {}
        return cls(
            group,
            text(dig(data, "metadata", "name")),
            state if isinstance(state, str) else "",
            tuple(sorted((name, amount) for name, amount in capability.items() if amount > 0)),
            tuple(sorted((name, amount) for name, amount in guarantee.items() if amount > 0)),
            text(dig(data, "spec", "parentQueue" if group == KAI_GROUP else "parent")),
            _kai_limits(mapping(dig(data, "spec", "resources"))) if group == KAI_GROUP else (),
        )


@dataclass(frozen=True)
class KaiUnit:
    key: str  # under spec.resources
    resource: str  # the Kubernetes resource it limits
    per_unit: Fraction  # Kubernetes units in one of KAI's (a millicpu is 1/1000 core, a megabyte 10^6 bytes)
    words: str  # GetJobOverMaxAllowedMessageForQueue's names: the resource, and its unit
    unit: str
    shown: Fraction  # Kubernetes units in one shown unit (memory is shown in GB)

    def show(self, amount: Fraction) -> str:
        """An amount in Kubernetes units as KAI's message shows it (HumanizeResource: at most 3 decimals)."""
        return f"{float(amount / self.shown):.3f}".rstrip("0").rstrip(".")


KAI_UNITS = (
    KaiUnit("gpu", NVIDIA_GPU, Fraction(1), "GPUs", "GPUs", Fraction(1)),
    KaiUnit("cpu", "cpu", Fraction(1, 1000), "CPU cores", "cores", Fraction(1)),
    KaiUnit("memory", "memory", Fraction(10**6), "memory", "GB", Fraction(10**9)),
)


@dataclass(frozen=True)
class KaiLimit:
    unit: KaiUnit
    limit: Fraction  # in Kubernetes units
    written: bool  # False: the field is absent, which KAI reads as 0


def _kai_limits(resources: dict[str, Any]) -> tuple[KaiLimit, ...]:
    out = []
    for unit in KAI_UNITS:
        value = mapping(resources.get(unit.key)).get("limit")
        if value is None:
            out.append(KaiLimit(unit, Fraction(0), False))
        elif not isinstance(value, bool) and isinstance(value, (int, float)) and value != -1:
            out.append(KaiLimit(unit, Fraction(value).limit_denominator(1000) * unit.per_unit, True))
    return tuple(out)


# The Kubeflow jobs whose pods KAI's pod grouper gathers into one PodGroup of minAvailable pods (pkg/podgrouper/
# podgrouper/plugins/kubeflow: mpi, pytorch, tensorflow, xgboost, jax); other kinds' pods are placed alone
KAI_GANG_KINDS = frozenset(("kubeflow.org", kind) for kind in ("PyTorchJob", "MPIJob", "TFJob", "XGBoostJob", "JAXJob"))


def kai_at_once(
    data: dict[str, Any], per_pod: list[tuple[dict[str, Fraction], int]]
) -> tuple[dict[str, Fraction], int]:
    """(what KAI allocates at least at once for the workload, per resource; how many pods that is). For a Kubeflow
    job its PodGroup's minAvailable pods (the smallest requests summed); otherwise its largest single pod."""
    if (api_group(text(data.get("apiVersion"))), data.get("kind")) in KAI_GANG_KINDS:
        written = dig(data, "spec", "runPolicy", "schedulingPolicy", "minAvailable")
        total = sum(copies for _, copies in per_pod)
        required = written if isinstance(written, int) and not isinstance(written, bool) and written > 0 else total
        return least_at_once(per_pod, min(required, total)), min(required, total)
    largest: dict[str, Fraction] = {}
    for requests, _ in per_pod:
        for name, amount in requests.items():
            largest[name] = max(largest.get(name, Fraction(0)), amount)
    return largest, 1


MAX_QUEUE_DEPTH = 16  # KAI queue hierarchies are two or three deep; a longer or cyclic chain is not followed


def kai_ancestry(queues: dict[str, BatchQueue], name: str) -> list[BatchQueue]:
    """The queue and its parents (KAI checks a job against the limit of each: resultsOverLimit)."""
    chain: list[BatchQueue] = []
    while name and len(chain) < MAX_QUEUE_DEPTH and name not in {q.name for q in chain}:
        queue = queues.get(name)
        if queue is None:
            break
        chain.append(queue)
        name = queue.parent
    return chain


# Volcano's job controller sorts the tasks by priority with sort.Sort, whose pdqsort insertion-sorts (stably) up to
# 12 elements: equal priorities then keep the order written.
_STABLE_TASKS = 12


@dataclass(frozen=True)
class FirstPods:
    """The pods a Volcano Job's PodGroup minResources are summed from, as its controller picks them."""

    requests: dict[str, Fraction]
    taken: tuple[tuple[str, int], ...]  # (task name, pods) in the order taken


def volcano_first_pods(data: dict[str, Any], per_task: list[dict[str, Fraction] | None]) -> FirstPods | None:
    """A Volcano Job's PodGroup minResources when its minAvailable is below the tasks' minAvailable (or replicas)
    summed: the requests of the first minAvailable pods, tasks sorted by priority (volcano pkg/controllers/job
    job_controller_actions.go calcPGMinResources, job_controller_util.go CalcFirstCountResources). None when that
    is not the case, or the order is not known here (priority classes that differ, more than 12 tasks, a task's
    requests not known). ``per_task``: each task's pod requests, in the order written."""
    tasks = [mapping(task) for task in sequence(dig(data, "spec", "tasks"))]
    classes = {text(dig(task, "template", "spec", "priorityClassName")) for task in tasks}
    if not tasks or len(tasks) != len(per_task) or len(tasks) > _STABLE_TASKS or len(classes) > 1:
        return None
    replicas = [integer(task.get("replicas"), 0) for task in tasks]
    minimum = [integer(task.get("minAvailable"), count) for task, count in zip(tasks, replicas)]
    wanted = integer(dig(data, "spec", "minAvailable"), 0)
    if None in replicas or None in minimum or not wanted or wanted >= sum(m or 0 for m in minimum):
        return None
    left = wanted
    total: dict[str, Fraction] = {}
    taken: list[tuple[str, int]] = []
    for task, count, requests in zip(tasks, replicas, per_task):
        pods = min(left, count or 0)
        if requests is None:
            return None
        if pods:
            for name, amount in requests.items():
                total[name] = total.get(name, Fraction(0)) + amount * pods
            taken.append((text(task.get("name")), pods))
        left -= pods
        if not left:
            break
    return FirstPods(total, tuple(taken))


def least_at_once(per_pod: list[tuple[dict[str, Fraction], int]], required: int) -> dict[str, Fraction]:
    """Per resource, the least that ``required`` pods out of these (requests, copies) can ask for together:
    the smallest requests summed. A bound whatever pods the scheduler picks for the gang's minimum."""
    out: dict[str, Fraction] = {}
    for resource in sorted({name for requests, _ in per_pod for name in requests}):
        amounts = sorted((requests.get(resource, Fraction(0)), copies) for requests, copies in per_pod)
        left, total = required, Fraction(0)
        for amount, copies in amounts:
            taken = min(left, copies)
            total += amount * taken
            left -= taken
            if not left:
                break
        if total:
            out[resource] = total
    return out
