"""Volcano's Job and Queue webhooks.

Volcano (volcano-sh/volcano v1.15.1): ``pkg/webhooks/admission/jobs/validate/admit_job.go``
validateJobCreate: tasks, task names, a task's minAvailable, the job plugins
(``pkg/controllers/job/plugins/factory.go``) and the MPI plugin's master task
(``plugins/distributed-framework/mpi/mpi.go``, ``--master``, default ``master``). Its messages are
joined, each with a leading space and a trailing ``;``. The ray plugin's head task is checked by the
controller only (``plugins/distributed-framework/ray/ray.go`` OnPodCreate, ``--head``, default ``head``:
``job %v doesn't have head task %v``; volcano-sh/volcano#5658 asks the webhook to check it).

Volcano's Queue (v1.15.1 ``pkg/webhooks/admission/queues/validate/validate_queue.go``
validateResourceQuantityOfQueue): guarantee <= deserved <= capability per resource both name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.commandline import go_flag
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.names import (
    qualified_name,
)
from gpulint.kube.operators.common import Refusal, Submitted, gated, service_refused
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.releases import Installed, Span

JOB_GROUP = "batch.volcano.sh"
QUEUE_GROUP = "scheduling.volcano.sh"
# Where a Volcano release is written: its images, tagged with the release (installer/helm/chart/volcano values.yaml
# basic.*_image_name, tagged basic.image_tag_version, v1.14.0), the chart ``volcano`` (versioned as the release,
# "1.14.0"), and volcano-sh/volcano (installer/volcano-development.yaml at a tag).
INSTALLED = Installed(
    ("volcanosh/vc-webhook-manager", "volcanosh/vc-controller-manager", "volcanosh/vc-scheduler"),
    ("volcano",),
    ("basic", "image_tag_version"),
    ("volcano-sh/volcano",),
)
# Every plugin name some Volcano release registers (ray and hcclrank are the newest).
VOLCANO_PLUGINS = frozenset({"ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"})
VOLCANO_MPI_MASTER = "master"
VOLCANO_RAY_HEAD = "head"
VOLCANO_RAY_FAILS = (
    "the ray plugin's OnPodCreate fails for every pod of the Job: no pod of the Ray cluster is made and the Job "
    "stays Pending"
)
# pkg/webhooks/admission/jobs/mutate/mutate_job.go patchDefaultPlugins: these plugins depend on svc, which the
# mutating webhook adds when it is not written.
VOLCANO_SVC_IMPLIED = ("svc", "tensorflow", "mpi")
VOLCANO_SERVICE_FAILS = (
    "the svc plugin's OnJobAdd fails on every sync (Execute plugin when job add failed): no pod is made and the "
    "Job stays Pending"
)
VOLCANO_MPI_WORKER = "worker"
# The releases that run a check (admit_job.go and validate_queue.go, read at each tag): the MPI plugin's worker task
# v1.6.0 to v1.14.x (dropped in v1.15.0, "mpi job could only have master"); partitionPolicy v1.14.0 on (no such
# field before: the CRD prunes it), its minAvailable against minPartitions x partitionSize even with minPartitions
# unset in v1.14.x only (v1.15.0 checks it only when minPartitions > 0); the queue's deserved <= capability and
# guarantee <= deserved v1.13.0 on.
MPI_WORKER_CHECK = Span((1, 6), (1, 15))
PARTITION_CHECK = Span((1, 14))
UNSET_MIN_PARTITIONS_CHECK = Span((1, 14), (1, 15))
QUEUE_CHECK = Span((1, 13))
Releases = tuple[tuple[str, str], ...]
# pkg/webhooks/admission/jobs/validate/util.go policyEventMap / policyActionMap: the ones users may write
# (RestartPod and RestartPartition are newer actions: accepted, as some release takes them).
VOLCANO_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
VOLCANO_ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)


def _volcano_job(data: dict[str, Any], releases: Releases) -> Iterator[Refusal]:
    spec = mapping(data.get("spec"))
    tasks = [mapping(task) for task in sequence(spec.get("tasks"))]
    if "tasks" in spec and not tasks:
        yield Refusal(("spec", "tasks"), "Volcano", "No task specified in job spec")
        return
    plugins = mapping(spec.get("plugins"))
    if "mpi" in plugins:
        master = go_flag(sequence(plugins["mpi"]), "master") or VOLCANO_MPI_MASTER
        if master not in {text(task.get("name")) for task in tasks}:
            yield Refusal(("spec", "plugins", "mpi"), "Volcano", "The specified mpi master task was not found")
            return
        worker = go_flag(sequence(plugins["mpi"]), "worker") or VOLCANO_MPI_WORKER
        if worker not in {text(task.get("name")) for task in tasks}:
            refused = Refusal(("spec", "plugins", "mpi"), "Volcano", "The specified mpi worker task was not found")
            found = list(gated(refused, MPI_WORKER_CHECK, releases))
            yield from found
            if found:
                return
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        name = text(task.get("name"))
        minimum, replicas = integer(task.get("minAvailable")), integer(task.get("replicas"))
        if minimum is not None and replicas is not None and minimum > replicas:
            yield Refusal(
                ("spec", "tasks", index, "minAvailable"),
                "Volcano",
                f"'minAvailable' is greater than 'replicas' in task: {name}, job: {text(dig(data, 'metadata', 'name'))};",
            )
        if name in seen:
            yield Refusal(("spec", "tasks", index, "name"), "Volcano", f"duplicated task name {name};")
            break  # Volcano stops at the first duplicate
        seen.add(name)
    for index, task in enumerate(tasks):
        yield from _volcano_policies(
            sequence(task.get("policies")), ("spec", "tasks", index, "policies"), "spec.tasks.policies"
        )
    yield from _volcano_policies(sequence(spec.get("policies")), ("spec", "policies"), "spec.policies")
    for plugin in plugins:
        if plugin not in VOLCANO_PLUGINS:
            yield Refusal(("spec", "plugins", plugin), "Volcano", f"unable to find job plugin: {plugin};")
    yield from _volcano_names(data, tasks)
    yield from _volcano_partitions(data, tasks, releases)
    yield from _volcano_task_order(tasks)
    yield from _volcano_service(data, plugins)
    yield from _volcano_ray_head(data, plugins, tasks)


def _volcano_ray_head(data: dict[str, Any], plugins: dict[str, Any], tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """The ray plugin finds the head task by the name its ``--head`` argument gives (default ``head``)."""
    if "ray" not in plugins:
        return
    head = go_flag(sequence(plugins["ray"]), "head") or VOLCANO_RAY_HEAD
    if head not in {text(task.get("name")) for task in tasks}:
        job = text(dig(data, "metadata", "name"))
        words = f"job {job} doesn't have head task {head}"
        yield Refusal(("spec", "plugins", "ray"), "Volcano", words, controller=VOLCANO_RAY_FAILS)


def _volcano_service(data: dict[str, Any], plugins: dict[str, Any]) -> Iterator[Refusal]:
    """The headless Service the svc plugin names after the Job (pkg/controllers/job/plugins/svc/svc.go
    createServiceIfNotExist) must be a DNS-1035 label; the webhook checks the Job's name as a qualified name only
    (dots allowed), so a name it takes can still make a Service the API server refuses."""
    job = dig(data, "metadata", "name")
    if not isinstance(job, str) or not job or qualified_name(job) or not any(p in plugins for p in VOLCANO_SVC_IMPLIED):
        return  # no name, a name the webhook refuses already, or no svc plugin
    if words := service_refused(job):
        yield Refusal(("metadata", "name"), "Volcano", words, controller=VOLCANO_SERVICE_FAILS)


def _go_list(errors: list[str]) -> str:
    """A Go []string as %v prints it."""
    return "[" + " ".join(errors) + "]"


def _volcano_names(data: dict[str, Any], tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateK8sPodNameLength and validateJobName: the name ``<job>-<task>-<task's index>`` (jobhelpers.MakePodName,
    checked with the task's position, not a replica's) and the Job's name must be qualified names (at most 63
    characters). A name from a generateName is not known here."""
    job = dig(data, "metadata", "name")
    if not isinstance(job, str) or not job:
        return
    for index, task in enumerate(tasks):
        pod = f"{job}-{text(task.get('name'))}-{index}"
        if errors := qualified_name(pod):
            yield Refusal(
                ("spec", "tasks", index, "name"),
                "Volcano",
                f"create pod with name {pod} validate failed {_go_list(errors)};",
                inputs=(("metadata", "name"),),
            )
    if errors := qualified_name(job):
        yield Refusal(("metadata", "name"), "Volcano", f"create job with name {job} validate failed {_go_list(errors)}")


def _volcano_partitions(data: dict[str, Any], tasks: list[dict[str, Any]], releases: Releases) -> Iterator[Refusal]:
    """validatePartitionPolicy (v1.14 and later): partitions and their size positive, the replicas exactly
    totalPartitions x partitionSize, and a task minAvailable, when minPartitions is set (in v1.14 also when it is
    not), minPartitions x partitionSize; the first problem of a task only."""
    job = text(dig(data, "metadata", "name"))
    for index, task in enumerate(tasks):
        policy = task.get("partitionPolicy")
        if not isinstance(policy, dict):
            continue
        name = text(task.get("name"))
        total, size = integer(policy.get("totalPartitions"), 0), integer(policy.get("partitionSize"), 0)
        least, replicas = integer(policy.get("minPartitions"), 0), integer(task.get("replicas"), 0)
        minimum = integer(task.get("minAvailable"))
        if total is None or size is None or least is None or replicas is None:
            continue  # not integers: the schema's
        at: Path = ("spec", "tasks", index, "partitionPolicy")
        problem, span = "", PARTITION_CHECK
        if total <= 0:
            problem = "'TotalPartitions' must be greater than 0"
        elif size <= 0:
            problem = "'PartitionSize' must be greater than 0"
        elif replicas != total * size:
            problem = "'Replicas' are not equal to TotalPartitions*PartitionSize"
        elif minimum is not None and least * size != minimum:
            problem = "'MinAvailable' is not equal to MinPartitions*PartitionSize"
            span = PARTITION_CHECK if least > 0 else UNSET_MIN_PARTITIONS_CHECK
        if problem:
            yield from gated(Refusal(at, "Volcano", f"{problem} in task: {name}, job: {job}"), span, releases)


def _volcano_task_order(tasks: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateJobCreate's topoSort (util.go makeGraph): with any task's dependsOn, every task must be reached from
    the tasks that depend on nothing. A cycle, or a dependsOn naming no task (its edge is never released), is not
    a DAG."""
    waiting = [i for i, task in enumerate(tasks) if task.get("dependsOn") is not None]
    if not waiting:
        return
    names = [text(task.get("name")) for task in tasks]
    graph: dict[str, dict[str, None]] = {}  # a set of edges, in order: a dependsOn written twice counts twice
    degree = dict.fromkeys(names, 0)  # in the in-degree only, as in Volcano's map, so it is never released
    for name, task in zip(names, tasks, strict=True):
        for before in map(text, sequence(mapping(task.get("dependsOn")).get("name"))):
            graph.setdefault(before, {})[name] = None
            degree[name] += 1
    ready = [name for name, count in degree.items() if count == 0]
    placed = 0
    while ready:
        placed += 1
        for after in graph.get(ready.pop(), ()):
            degree[after] -= 1
            if degree[after] == 0:
                ready.append(after)
    if placed != len(names):
        yield Refusal(
            ("spec", "tasks", waiting[0], "dependsOn"),
            "Volcano",
            "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);",
        )


def _volcano_queue(data: dict[str, Any], releases: Releases) -> Iterator[Refusal]:
    """validateResourceQuantityOfQueue, guarantee <= deserved <= capability, for a resource both sides name (every
    release since v1.13 refuses those; v1.13-v1.14 word it "deserved should less equal than capability", and only
    v1.15 also wants a deserved for each guaranteed resource, not judged here). Worded as v1.15.1 words it."""
    spec = mapping(data.get("spec"))
    pairs = (
        ("deserved", mapping(spec.get("deserved")), "capability", mapping(spec.get("capability")), ">"),
        ("deserved", mapping(spec.get("deserved")), "guarantee", mapping(dig(spec, "guarantee", "resource")), "<"),
    )
    for field_name, values, other_name, others, refused in pairs:
        for name, written in values.items():
            if name not in others:
                continue  # an unset capability does not restrict; an unset deserved is v1.15's own check
            try:
                amount, other = quantity_from_yaml(written), quantity_from_yaml(others[name])
            except QuantityError:
                continue  # not a quantity: the CRD's schema refuses it (schema-invalid)
            if (amount.value > other.value) if refused == ">" else (amount.value < other.value):
                relation = "<=" if refused == ">" else ">="
                refusal = Refusal(
                    ("spec", field_name, name),
                    "Volcano",
                    f'requestBody.spec.{field_name}.{name}: Invalid value: "{amount}": '
                    f"{field_name}[{name}]={amount} must be {relation} {other_name}[{name}]={other}",
                )
                yield from gated(refusal, QUEUE_CHECK, releases)


def _volcano_policies(policies: list[Any], at: Path, shown: str) -> Iterator[Refusal]:
    """validatePolicies: each policy names events or an exit code, events and exit codes once across policies;
    it stops at the first problem, as Volcano does."""
    events: set[str] = set()
    codes: set[int] = set()
    for index, policy in enumerate(map(mapping, policies)):
        where = (*at, index)
        listed = [text(e) for e in sequence(policy.get("events"))] + (
            [text(policy["event"])] if policy.get("event") else []
        )
        code = policy.get("exitCode")
        if listed and code is not None:
            yield Refusal(where, "Volcano", "must not specify event and exitCode simultaneously")
            return
        if not listed and code is None:
            yield Refusal(where, "Volcano", "either event and exitCode should be specified")
            return
        if not listed:
            if code == 0 or code in codes:
                yield Refusal(
                    where, "Volcano", "0 is not a valid error code" if code == 0 else f"duplicate exitCode {code}"
                )
                return
            if isinstance(code, int):
                codes.add(code)
            continue
        for event in dict.fromkeys(listed):
            problem = ""
            if event not in VOLCANO_EVENTS:
                problem = f'{shown}: Invalid value: "{event}": invalid policy event'
            elif text(policy.get("action")) not in VOLCANO_ACTIONS:
                problem = f'{shown}: Invalid value: "{text(policy.get("action"))}": invalid policy action'
            elif event in events:
                problem = f"duplicate event {event}  across different policy"  # Volcano's two spaces
            if problem:
                yield Refusal(where, "Volcano", problem)
                return
            events.add(event)
    if "*" in events and len(events) > 1:
        yield Refusal(at, "Volcano", "if there's * here, no other policy should be here")


def job_refusals(submitted: Submitted) -> list[Refusal]:
    return list(_volcano_job(submitted.data, submitted.releases))


def queue_refusals(submitted: Submitted) -> list[Refusal]:
    return list(_volcano_queue(submitted.data, submitted.releases))
