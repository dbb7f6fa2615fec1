"""Kubeflow Trainer v2: the pods of a TrainJob are its runtime's JobSet template with the TrainJob's
overrides applied, as the trainer controller applies them.

Source: kubeflow/trainer pkg/runtime/core/trainingruntime.go (newRuntimeInfo: the replicated job
labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` runs mlPolicy.numNodes pods, its
container ``node`` takes trainer.resourcesPerNode merged key by key (MergeResourceRequirements);
mergeRuntimePatches: runtimePatches are strategic-merge patches of the JobSet spec, replicated jobs
and containers matched by name), pkg/runtime/framework/plugins/torch (trainer.numNodes overrides the
count; image, command, args and env go to the ``node`` container), and the v2.0 API's
podTemplateOverrides (targetJobs by name; nodeSelector, affinity, tolerations, volumes, ...).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.pod_views import PodView
from gpulint.kube.refs import Path

GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER = "trainer"
NODE = "node"  # the trainer's container (constants.Node)
_TRAINER_FIELDS = ("image", "command", "args")
# Pod fields a patch or override sets: merged maps, lists merged by a key, or replaced.
_MERGED_MAPS = ("nodeSelector",)
_MERGED_LISTS = {"tolerations": None, "volumes": "name", "imagePullSecrets": "name", "schedulingGates": "name"}
_REPLACED = ("affinity", "serviceAccountName", "securityContext", "terminationGracePeriodSeconds")
_CONTAINER_LISTS = {"env": "name", "volumeMounts": "mountPath"}


class BoundTrainJob(dict[str, Any]):
    """A TrainJob's data with the runtime its runtimeRef names (found by the resolver), so the model
    can build its pods; the mapping itself is the TrainJob as written."""

    def __init__(self, data: dict[str, Any], runtime: dict[str, Any]) -> None:
        super().__init__(data)
        self.runtime = runtime


@dataclass(frozen=True)
class RuntimeRef:
    group: str
    kind: str
    name: str


def runtime_ref(trainjob: dict[str, Any]) -> RuntimeRef | None:
    ref = mapping(dig(trainjob, "spec", "runtimeRef"))
    name = text(ref.get("name"))
    if not name:
        return None
    return RuntimeRef(text(ref.get("apiGroup")) or GROUP, text(ref.get("kind")) or "ClusterTrainingRuntime", name)


@dataclass(frozen=True)
class ComposedPod:
    path: Path  # the pod's virtual place in the TrainJob (aliases map its fields to where they were written)
    view: PodView
    pods: int | None
    role: str
    names: tuple[tuple[Path, str], ...]  # how messages name the runtime's part of the pod


REF_NAME = ("spec", "runtimeRef", "name")
# The runtime's podGroupPolicy: the Trainer's plugins (pkg/runtime/framework/plugins/coscheduling,
# volcano) create a PodGroup named after the TrainJob whose minMember is every pod of every pod set.
POD_GROUP_POLICIES = ("coscheduling", "volcano")


def pod_group_policy(data: dict[str, Any]) -> str:
    """The gang scheduler the bound TrainJob's runtime asks for ("" without a runtime or a policy)."""
    if not isinstance(data, BoundTrainJob):
        return ""
    policy = mapping(dig(data.runtime, "spec", "podGroupPolicy"))
    return next((name for name in POD_GROUP_POLICIES if isinstance(policy.get(name), dict)), "")


def composed_pods(trainjob: dict[str, Any], runtime: dict[str, Any]) -> Iterator[ComposedPod]:
    """One pod per replicated job of the runtime's JobSet template, with the TrainJob's overrides."""
    spec = mapping(trainjob.get("spec"))
    trainer = mapping(spec.get("trainer"))
    runtime_name = f"{text(runtime.get('kind'))}/{text(dig(runtime, 'metadata', 'name'))}"
    jobs = sequence(dig(runtime, "spec", "template", "spec", "replicatedJobs"))
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            continue
        name = text(job.get("name")) or str(index)
        pod = copy.deepcopy(mapping(dig(job, "template", "spec", "template", "spec")))
        base: Path = ("spec", "runtimeRef", name)
        aliases: list[tuple[Path, Path]] = []
        for patch_path, patch in _patches(spec, name):
            aliases += _apply(pod, patch, patch_path, base)
        ancestor = text(dig(job, "template", "metadata", "labels", ANCESTOR_LABEL))
        if ancestor == TRAINER:
            aliases += _trainer(pod, trainer, base)
        aliases.append((base, REF_NAME))  # anything else: the runtime's, reported at the reference
        pods = _pods(job, ancestor, trainer, runtime)
        where = f"{runtime_name} replicatedJobs[{name}]"
        yield ComposedPod(
            base,
            PodView(pod, tuple(aliases), unfaithful=(base,)),
            pods,
            name,
            ((base, where),),
        )


def _pods(job: dict[str, Any], ancestor: str, trainer: dict[str, Any], runtime: dict[str, Any]) -> int | None:
    """The JobSet's replicas (default 1) of the Job's pods: the trainer's numNodes (the controller
    sets parallelism and completions to it), else the runtime Job's parallelism capped by completions."""
    replicas = integer(job.get("replicas"), 1)
    if ancestor == TRAINER:
        per_job = integer(trainer.get("numNodes"), integer(dig(runtime, "spec", "mlPolicy", "numNodes"), 1))
    else:
        job_spec = mapping(dig(job, "template", "spec"))
        parallelism = integer(job_spec.get("parallelism"), 1)
        completions = integer(job_spec.get("completions"), None)
        per_job = min(parallelism, completions) if parallelism is not None and completions is not None else parallelism
    return None if replicas is None or per_job is None else replicas * per_job


def _patches(spec: dict[str, Any], job_name: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path, pod spec patch) for the replicated job, in the order the controller applies them."""
    for i, patch in enumerate(sequence(spec.get("runtimePatches"))):
        jobs = sequence(dig(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs"))
        for j, job in enumerate(jobs):
            pod = dig(job, "template", "spec", "template", "spec")
            if isinstance(job, dict) and job.get("name") == job_name and isinstance(pod, dict):
                path = ("spec", "runtimePatches", i, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", j)
                yield (*path, "template", "spec", "template", "spec"), pod
    for i, override in enumerate(sequence(spec.get("podTemplateOverrides"))):  # the v2.0 API
        targets = [text(mapping(t).get("name")) for t in sequence(mapping(override).get("targetJobs"))]
        if job_name in targets and isinstance(mapping(override).get("spec"), dict):
            yield ("spec", "podTemplateOverrides", i, "spec"), override["spec"]


def _apply(pod: dict[str, Any], patch: dict[str, Any], patch_path: Path, base: Path) -> list[tuple[Path, Path]]:
    aliases: list[tuple[Path, Path]] = []
    for key in _MERGED_MAPS:
        if isinstance(patch.get(key), dict):
            pod[key] = {**mapping(pod.get(key)), **patch[key]}
            aliases += [((*base, key, label), (*patch_path, key, label)) for label in patch[key]]
    for key, merge_key in _MERGED_LISTS.items():
        if isinstance(patch.get(key), list):
            aliases += _merge_list(pod, key, patch[key], merge_key, (*base, key), (*patch_path, key))
    for key in _REPLACED:
        if key in patch:
            pod[key] = patch[key]
            aliases.append(((*base, key), (*patch_path, key)))
    for list_name in ("initContainers", "containers"):
        own = [c for c in sequence(pod.get(list_name)) if isinstance(c, dict)]
        for j, change in enumerate(sequence(patch.get(list_name))):
            target = next((i for i, c in enumerate(own) if c.get("name") == mapping(change).get("name")), None)
            if target is None:
                continue
            container = own[target] = dict(own[target])
            for key, merge_key in _CONTAINER_LISTS.items():
                if isinstance(change.get(key), list):
                    aliases += _merge_list(
                        container,
                        key,
                        change[key],
                        merge_key,
                        (*base, list_name, target, key),
                        (*patch_path, list_name, j, key),
                    )
            if isinstance(change.get("securityContext"), dict):
                container["securityContext"] = change["securityContext"]
                aliases.append(
                    ((*base, list_name, target, "securityContext"), (*patch_path, list_name, j, "securityContext"))
                )
        if own:
            pod[list_name] = own
    return aliases


def _merge_list(
    holder: dict[str, Any], key: str, items: list[Any], merge_key: str | None, virtual: Path, real: Path
) -> list[tuple[Path, Path]]:
    """Items merged by ``merge_key`` (replacing the one of the same key) or appended."""
    merged = list(sequence(holder.get(key)))
    aliases: list[tuple[Path, Path]] = []
    for j, item in enumerate(items):
        same = (
            next(
                (i for i, old in enumerate(merged) if mapping(old).get(merge_key) == mapping(item).get(merge_key)), None
            )
            if merge_key
            else None
        )
        if same is None:
            merged.append(item)
            same = len(merged) - 1
        else:
            merged[same] = item
        aliases.append(((*virtual, same), (*real, j)))
    holder[key] = merged
    return aliases


def _trainer(pod: dict[str, Any], trainer: dict[str, Any], base: Path) -> list[tuple[Path, Path]]:
    """The TrainJob's trainer fields on the ``node`` container."""
    containers = [c for c in sequence(pod.get("containers")) if isinstance(c, dict)]
    index = next((i for i, c in enumerate(containers) if c.get("name") == NODE), None)
    if index is None:
        return []
    container = containers[index] = dict(containers[index])
    pod["containers"] = containers
    at: Path = (*base, "containers", index)
    aliases: list[tuple[Path, Path]] = []
    for key in _TRAINER_FIELDS:
        if key in trainer:
            container[key] = trainer[key]
            aliases.append(((*at, key), ("spec", "trainer", key)))
    if isinstance(trainer.get("env"), list):
        aliases += _merge_list(container, "env", trainer["env"], "name", (*at, "env"), ("spec", "trainer", "env"))
    wanted = mapping(trainer.get("resourcesPerNode"))
    if wanted:
        resources = dict(mapping(container.get("resources")))
        for section in ("limits", "requests"):
            if isinstance(wanted.get(section), dict):
                resources[section] = {**mapping(resources.get(section)), **wanted[section]}
                aliases += [
                    ((*at, "resources", section, name), ("spec", "trainer", "resourcesPerNode", section, name))
                    for name in wanted[section]
                ]
                aliases.append(((*at, "resources", section), ("spec", "trainer", "resourcesPerNode", section)))
        container["resources"] = resources
        aliases.append(((*at, "resources"), ("spec", "trainer", "resourcesPerNode")))
    return aliases
