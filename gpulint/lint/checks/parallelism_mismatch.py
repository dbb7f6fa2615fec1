"""parallelism-mismatch: the processes a launcher starts do not match the GPUs the pod holds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from gpulint.kube import ray_serve
from gpulint.kube.commandline import ConfigMaps, Origin, Word
from gpulint.kube.distributed import ranks_of_one_program
from gpulint.kube.fields import counted, decimal, dig, integer, mapping, sequence, text
from gpulint.kube.kserve import SELECTED_RUNTIME
from gpulint.kube.launchers import Launch
from gpulint.kube.refs import Path
from gpulint.kube.runtime import (
    VISIBILITY_VARIABLES,
    DeviceRanks,
    container_family,
    container_gpus,
    container_launches,
    controller_files,
    device_ranks,
    env_settings,
    gpu_resource_name,
    injected_env,
    main_containers,
    unknown_env_sources,
)
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, api_group
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.loader import load_text, text_offset
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.config_maps import namespace_config_maps

SPEC = RuleSpec("parallelism-mismatch", Severity.WARNING, of_pods=True)
RULE_ID = SPEC.id
_GROUP_KINDS = {("ray.io", "RayCluster"), ("ray.io", "RayJob"), ("ray.io", "RayService")}


@dataclass(frozen=True)
class _Demand:
    """GPU processes a launch starts in one pod, and the flag that decides it."""

    processes: int
    formula: str  # "tensor-parallel-size 4 x pipeline-parallel-size 2"
    where: Origin  # the value of the deciding flag
    certain: bool  # the program itself refuses more processes than GPUs (vLLM, SGLang)
    program: str


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    key = (api_group(obj.api_version), obj.kind)
    patterns = ctx.config.gpu_resources
    sites = [site for site in obj.facts.sites() if site.runs]  # a PodTemplate object starts nothing
    torchruns: list[tuple[PodSpecSite, Path, Launch]] = []  # the torchrun launches of GPU containers
    for site in sites:
        if site.completed_by and site.completed_by != SELECTED_RUNTIME:
            continue  # the command and arguments may come from the object that completes the pod
        injected: dict[str, str | None] | None = None  # read for the first GPU container
        for container_path, container in main_containers(site.spec):
            gpus = container_gpus(container, patterns, obj.facts)
            if not gpus:
                continue
            if injected is None:
                injected = injected_env(obj.data, site)
            if any(name in injected for name in VISIBILITY_VARIABLES):
                continue
            config_maps = namespace_config_maps(ctx, obj.ref.namespace)
            found = container_launches(container, injected, config_maps, obj.facts)
            if not found.launches:
                continue  # no launcher (most containers): no process count to compare
            base = (*site.path, *container_path)
            held = device_ranks(container, site.spec, patterns, obj.facts)
            if held is None:
                continue  # a Neuron device on an instance type the pod does not pin: its NeuronCores are not known
            # A Secret or a ConfigMap gpulint does not hold may set NVIDIA_VISIBLE_DEVICES=all (the node's other GPUs
            # show): more processes than the pod's GPUs is then unknown; fewer still leaves its GPUs idle.
            may_show_more = bool(unknown_env_sources(container, VISIBILITY_VARIABLES, config_maps))
            for launch in found.launches:
                if any(name in launch.assignments for name in VISIBILITY_VARIABLES) or _sets_visibility(
                    container, config_maps
                ):
                    continue  # the process sees another set of GPUs: gpu-visibility-override's subject
                size = _lws_size(obj)
                lws = key == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") and (size is None or size > 1)
                if lws and launch.launcher.name == "vLLM":
                    yield from _lws_group(obj, site, sites, launch, base, patterns)
                    continue
                if key in _GROUP_KINDS:
                    continue  # a Ray cluster spreads ranks over its pods: not modelled
                if launch.launcher.name == "torchrun":
                    torchruns.append((site, base, launch))
                if launch.launcher.name == "Ray":
                    yield from _ray_start(launch, held, base, text(container.get("name")))
                    continue
                demand = _demand(obj, launch)
                if demand is not None and not (may_show_more and demand.processes > held.ranks):
                    compared = _compare(demand, held, base, f"container '{text(container.get('name'))}'")
                    yield from (_assumed(d) for d in compared) if site.completed_by else compared
    yield from _operator_fields(obj, sites, patterns)
    yield from _torchrun_rendezvous(obj, sites, torchruns, patterns)


def _assumed(diagnostic: Diagnostic) -> Diagnostic:
    """A finding on a KServe predictor completed by the runtime selected for its model format: a warning, since
    a ServingRuntime the files do not show (another launcher) may be selected first."""
    note = f"the program is that of {SELECTED_RUNTIME}"
    return replace(diagnostic, severity=None, notes=(*diagnostic.notes, note))


def _sets_visibility(container: dict[str, Any], config_maps: ConfigMaps) -> bool:
    """The container sets a visibility variable in its ``env``, or through a ConfigMap it reads."""
    return bool(env_settings(container, VISIBILITY_VARIABLES, config_maps))


def _size(launch: Launch, flag: str) -> tuple[int, bool]:
    """(value, known): an absent flag is the launcher's default of 1; one gpulint cannot read is unknown."""
    if not launch.has(flag):
        return 1, True
    value = launch.number(flag)
    return (value, True) if value is not None else (0, False)


def _demand(obj: KubeObject, launch: Launch) -> _Demand | None:
    if launch.opaque:
        return None  # a word gpulint cannot read may give any flag ($(EXTRA_ARGS)): the count is not known
    name = launch.launcher.name
    if name in ("vLLM", "SGLang"):
        if launch.has("config"):
            return None  # a config file may set the sizes
        if name == "vLLM" and (launch.has("omni") or launch.has("stage-configs-path")):
            # vLLM-Omni runs each stage of the model in its own process on the devices its stage config names
            # (stage_configs/qwen2_5_omni.yaml: thinker on "0", talker on "1"), not tensor x pipeline x data
            return None
        if name == "vLLM" and (
            launch.has("nnodes")
            or text(getattr(launch.values.get("distributed-executor-backend"), "text", "")) == "ray"
        ):
            return None  # ranks spread over several pods
        factors = ["tensor-parallel-size", "pipeline-parallel-size"]
        if name == "vLLM":
            factors.append(
                "data-parallel-size-local" if launch.has("data-parallel-size-local") else "data-parallel-size"
            )
        elif not launch.has("enable-dp-attention"):
            factors.append("data-parallel-size")
        product, parts = 1, []
        for flag in factors:
            value, known = _size(launch, flag)
            if not known:
                return None
            product *= value
            if launch.has(flag):
                parts.append(f"{flag} {value}")
        nodes, known = _size(launch, "nnodes")
        if not known or product % nodes:
            return None
        if nodes > 1:
            parts.append(f"/ nnodes {nodes}")
            product //= nodes
        where = next((launch.values[f].origin for f in factors if launch.has(f)), None)
        if where is None:
            where = launch.program.origin if launch.program else Origin(("args",), 0)
        formula = " x ".join(p for p in parts if not p.startswith("/")) or "no parallelism flag: 1"
        formula += "".join(f" {p}" for p in parts if p.startswith("/"))
        return _Demand(product, formula, where, True, name)
    if name == "torchrun":
        word = launch.values.get("nproc-per-node")
        written = (word.text or "").strip() if word is not None else ""
        nproc = decimal(written)
        if nproc is None or word is None:
            return None  # "gpu" and "auto" start one process per visible GPU
        return _Demand(nproc, f"--nproc-per-node {written}", word.origin, False, name)
    if name == "DeepSpeed":
        if launch.has("include") or launch.has("exclude"):
            return None
        gpus = launch.number("num-gpus")
        if gpus is None:
            return None
        return _Demand(gpus, f"--num_gpus {gpus}", launch.values["num-gpus"].origin, False, name)
    return None


def _ray_start(launch: Launch, held: DeviceRanks, base: Path, name: str) -> Iterator[Diagnostic]:
    """`ray start --num-gpus N` in a container's own command: the GPUs the node advertises to Ray's scheduler,
    in place of the ones it detects (as rayStartParams num-gpus in KubeRay's pods, _ray)."""
    declared = launch.number("num-gpus")
    if launch.opaque or declared is None or declared == held.ranks or not held.family.noun.endswith("GPU"):
        return  # no flag: Ray counts the GPUs the container sees
    word = launch.values["num-gpus"]
    if declared > held.ranks:
        message = (
            f"ray start --num-gpus {declared} but container '{name}' has {held.holding()}: Ray schedules tasks "
            f"and placement group bundles on {declared - held.ranks} GPUs that do not exist, and they fail with "
            "CUDA errors"
        )
    else:
        message = (
            f"ray start --num-gpus {declared} but container '{name}' holds {held.holding()}: Ray never schedules "
            f"work on {held.ranks - declared} of them, which stay idle while allocated"
        )
    yield Diagnostic(
        RULE_ID,
        (*base, *word.origin.path),
        message,
        notes=(f"drop --num-gpus (Ray then counts the GPUs the container sees) or set it to {held.ranks}",),
        offset=word.origin.offset,
    )


def _compare(demand: _Demand, held: DeviceRanks, base: Path, subject: str) -> Iterator[Diagnostic]:
    path = (*base, *demand.where.path)
    ranks = held.ranks
    if demand.processes > ranks:
        yield Diagnostic(
            RULE_ID,
            path,
            f"{demand.program} starts {_processes(demand.processes, held)} ({demand.formula}) but {subject} has "
            f"{held.holding()}",
            notes=(
                _too_many(demand, held),
                f"request {demand.processes} {held.unit(demand.processes)} or lower the parallelism",
            ),
            severity=Severity.ERROR if demand.certain else None,
            offset=demand.where.offset,
        )
    elif demand.processes < ranks:
        yield Diagnostic(
            RULE_ID,
            path,
            f"{demand.program} starts {_processes(demand.processes, held)} ({demand.formula}) but {subject} holds "
            f"{held.holding()}: {ranks - demand.processes} {held.unit(ranks - demand.processes)} stay idle while "
            "allocated",
            notes=(f"request {demand.processes} or raise the parallelism to {ranks}",),
            offset=demand.where.offset,
        )


def _processes(count: int, held: DeviceRanks) -> str:
    """ "4 GPU processes" on GPUs; "4 ranks" where a rank holds a NeuronCore or a TPU chip."""
    if held.family.noun.endswith("GPU"):
        return f"{count} GPU process{'es' if count != 1 else ''}"
    return f"{count} rank{'s' if count != 1 else ''}"


def _too_many(demand: _Demand, held: DeviceRanks) -> str:
    """What happens to the ranks beyond the devices, as the device's runtime words it where it is known."""
    ranks, error = held.ranks, held.family.missing_device
    if demand.program == "vLLM" and error:
        return (
            f'vLLM refuses to start ("local_world_size ({demand.processes}) must be less than or equal to the '
            f'number of visible devices ({ranks})")'
        )
    if not error:
        return f"{demand.program} cannot place {demand.processes} ranks on {ranks} {held.unit(ranks)}"
    if demand.certain:
        extra = demand.processes - ranks
        return (
            f"{demand.program}'s {_ranks(ranks, demand.processes - 1)} find{'s' if extra == 1 else ''} no "
            f'{held.family.noun} of {"its" if extra == 1 else "their"} own ("{error}")'
        )
    return f'the processes beyond the {ranks} {held.unit(ranks)} share a device or fail ("{error}")'


def _ranks(first: int, last: int) -> str:
    return f"rank {first}" if first == last else f"ranks {first} to {last}"


# --- LeaderWorkerSet: one server over the group's pods ------------------------------------------


def _lws_size(obj: KubeObject) -> int | None:
    """The group's pods (None: not known offline, a placeholder)."""
    return integer(dig(obj.data, "spec", "leaderWorkerTemplate", "size"), 1)


def _lws_group(
    obj: KubeObject, site: PodSpecSite, sites: list[PodSpecSite], launch: Launch, base: Path, patterns: tuple[str, ...]
) -> Iterator[Diagnostic]:
    if site.role != "leader" and any(s.role == "leader" for s in sites):
        return  # the workers join the leader's server (ray start, --headless, --node-rank)
    size = _lws_size(obj)
    if size is None:
        return  # the group's size is filled in later: its GPUs are not known
    held = [
        container_family(c, patterns, obj.facts)
        for s in sites
        for _, c in main_containers(s.spec)
        if container_gpus(c, patterns, obj.facts)
    ]
    if not all(family.noun.endswith("GPU") for family in held):
        return  # vLLM spreads its ranks over the group's GPUs with Ray; other devices are not modelled
    gpus = {s.role: sum(container_gpus(c, patterns, obj.facts) or 0 for _, c in main_containers(s.spec)) for s in sites}
    leader = gpus.get("leader", gpus.get("worker", 0))
    group = leader + (size - 1) * gpus.get("worker", 0)
    if not group or launch.has("config") or launch.opaque:
        return
    product, parts = 1, []
    for flag in ("tensor-parallel-size", "pipeline-parallel-size"):
        value, known = _size(launch, flag)
        if not known:
            return
        product *= value
        if launch.has(flag):
            parts.append(f"{flag} {value}")
    where = next(
        (launch.values[f].origin for f in ("tensor-parallel-size", "pipeline-parallel-size") if launch.has(f)), None
    )
    if where is None:
        return
    subject = f"the LeaderWorkerSet group ({size} pods, {group} GPUs)"
    demand = _Demand(product, " x ".join(parts), where, True, "vLLM")
    if product > group:
        yield Diagnostic(
            RULE_ID,
            (*base, *where.path),
            f"vLLM needs {product} GPUs across the group ({demand.formula}) but {subject} has {group}",
            notes=(
                "the Ray placement group cannot be created and vLLM does not start",
                "raise size or the GPUs per pod, or lower the parallelism",
            ),
            severity=Severity.ERROR,
            offset=where.offset,
        )
    elif product < group:
        yield Diagnostic(
            RULE_ID,
            (*base, *where.path),
            f"vLLM uses {product} GPUs ({demand.formula}) but {subject} holds {group}: {group - product} GPUs "
            "stay idle while allocated",
            offset=where.offset,
        )


# --- counts the operators take from the workload's own fields --------------------------------------


def _operator_fields(obj: KubeObject, sites: list[PodSpecSite], patterns: tuple[str, ...]) -> Iterator[Diagnostic]:
    key = (api_group(obj.api_version), obj.kind)
    spec = mapping(obj.data.get("spec"))
    if key == ("kubeflow.org", "MPIJob"):
        yield from _mpijob(obj, spec, sites, patterns)
    elif key == ("kubeflow.org", "PyTorchJob"):
        yield from _pytorchjob(spec, sites, patterns)
    elif key == ("trainer.kubeflow.org", "TrainJob"):
        yield from _trainjob(obj, spec, sites, patterns)
    elif key == ("batch.volcano.sh", "Job"):
        yield from _volcano_mpirun(obj, sites, patterns)
    elif key == ("serving.kserve.io", "LLMInferenceService"):
        yield from _llm_pipeline(obj, spec, sites, patterns)
        yield from _llm_ranks(obj, spec, sites, patterns)
    elif key in _GROUP_KINDS:
        yield from _ray(obj, sites, patterns)
        if key == ("ray.io", "RayService"):
            yield from _ray_serve(obj, sites, patterns)


# KServe v0.20.0 config/llmisvcconfig: config-llm-template.yaml (and the decode and prefill templates) start
# vLLM with `--tensor-parallel-size {{ .Spec.Parallelism.Tensor }}` and config-llm-worker-data-parallel.yaml
# with the tensor, data and data-local sizes; no preset renders spec.parallelism.pipeline, and no controller code
# reads it (pkg/apis/serving/v1alpha2 llm_inference_service_validation.go only checks it is positive).
_KSERVE_PRESET = "kserve-config-llm-"


def _llm_pipeline(
    obj: KubeObject, spec: dict[str, Any], sites: list[PodSpecSite], patterns: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """An LLMInferenceService's parallelism.pipeline, which KServe's presets never pass to vLLM."""
    if any(not text(mapping(ref).get("name")).startswith(_KSERVE_PRESET) for ref in _sequence(spec.get("baseRefs"))):
        return  # a preset of the operator's own may render it
    for part, prefix in ((spec, ("spec",)), (mapping(spec.get("prefill")), ("spec", "prefill"))):
        parallelism = mapping(part.get("parallelism"))
        pipeline = integer(parallelism.get("pipeline"), 1)
        if pipeline is None or pipeline <= 1:
            continue
        site = next((s for s in sites if s.path == (*prefix, "template")), None)
        if site is not None and _passes_pipeline(site):
            continue  # the container's own arguments set it: KServe appends them
        tensor = integer(parallelism.get("tensor"), 1) or 1
        notes = [
            f"its presets start vLLM with --tensor-parallel-size {tensor} and no --pipeline-parallel-size "
            "(KServe v0.20.0 config/llmisvcconfig), so the engine's world size is the tensor size alone "
            "(kserve/kserve#6044)",
        ]
        found = _first_gpu_container(site, patterns, obj.facts) if site is not None else None
        if found is not None and found[1].ranks > tensor:
            notes.append(
                f"{found[1].ranks - tensor} of the {found[1].holding()} of container "
                f"'{text(found[0].get('name'))}' stay idle"
            )
        notes.append(
            f"set parallelism.tensor to the GPUs each replica holds, or pass --pipeline-parallel-size "
            f"{pipeline} in the main container's args"
        )
        yield Diagnostic(
            RULE_ID,
            (*prefix, "parallelism", "pipeline"),
            f"KServe ignores parallelism.pipeline {pipeline}: vLLM runs {tensor} rank{'s' if tensor > 1 else ''} "
            f"(tensor {tensor}), not tensor x pipeline = {tensor * pipeline}",
            notes=tuple(notes),
        )


def _llm_ranks(
    obj: KubeObject, spec: dict[str, Any], sites: list[PodSpecSite], patterns: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """The GPU ranks KServe's presets start in each pod of an LLMInferenceService (tensor, times dataLocal when
    the workload is multi-node data parallel) against the GPUs its main container holds."""
    if any(not text(mapping(ref).get("name")).startswith(_KSERVE_PRESET) for ref in _sequence(spec.get("baseRefs"))):
        return  # a preset of the operator's own may start vLLM otherwise
    for part, prefix in ((spec, ("spec",)), (mapping(spec.get("prefill")), ("spec", "prefill"))):
        parallelism = mapping(part.get("parallelism"))
        formula = _llm_formula(parallelism, isinstance(part.get("worker"), dict))
        if formula is None:
            continue
        ranks, words = formula
        for role in ("template", "worker"):
            site = next((s for s in sites if s.path == (*prefix, role)), None)
            found = _llm_main(site, patterns, obj.facts) if site is not None else None
            if found is None or found[1].ranks >= ranks:
                continue
            container, held = found
            yield Diagnostic(
                RULE_ID,
                (*prefix, "parallelism", "tensor"),
                f"KServe starts vLLM with {words} = {ranks} GPU ranks in each pod, but container "
                f"'{text(container.get('name'))}' of the {role} holds {held.holding()}: vLLM cannot place "
                f"{ranks - held.ranks} of its ranks",
                notes=(
                    "KServe's presets (v0.20 config/llmisvcconfig) pass --tensor-parallel-size from "
                    "parallelism.tensor and, for a multi-node data parallel workload, --data-parallel-size-local "
                    "from parallelism.dataLocal; the pods of a group are data / dataLocal (GetSize), tensor "
                    "ranks are never spread over pods (kserve/kserve#4946)",
                    f"give each pod {ranks} GPUs, or lower parallelism.tensor to the GPUs a pod holds",
                ),
            )
            break


def _llm_formula(parallelism: dict[str, Any], worker: bool) -> tuple[int, str] | None:
    """(GPU ranks per pod, how) for the preset KServe picks: no worker, the single-node template (tensor only);
    a worker and data or dataLocal set, the data parallel one (tensor x dataLocal); else not known here."""
    tensor = integer(parallelism.get("tensor"), 1)
    if tensor is None or tensor < 1 or "tensor" not in parallelism:
        return None  # without tensor, vLLM's own default of 1 rank: never more than a GPU container holds
    if not worker:
        return tensor, f"--tensor-parallel-size {tensor}"
    data, local = integer(parallelism.get("data"), 0), integer(parallelism.get("dataLocal"), 0)
    if data is None or local is None or (data <= 0 and local <= 0):
        return None  # a pipeline parallel worker: another preset
    local = max(local, 1)
    return tensor * local, f"--tensor-parallel-size {tensor} x --data-parallel-size-local {local}"


def _llm_main(
    site: PodSpecSite, patterns: tuple[str, ...], facts: ObjectFacts
) -> tuple[dict[str, Any], DeviceRanks] | None:
    """The container named main, which the presets run vLLM in, with its devices; None when its own command,
    arguments or VLLM_ADDITIONAL_ARGS may set the sizes, or its devices are not known."""
    for _, container in main_containers(site.spec):
        if text(container.get("name")) != "main":
            continue
        if container.get("command") or _sequence(container.get("args")):
            return None  # the container's own command replaces the preset's; its args are appended to vLLM's
        if any(text(mapping(env).get("name")) == "VLLM_ADDITIONAL_ARGS" for env in _sequence(container.get("env"))):
            return None
        if not container_gpus(container, patterns, facts):
            return None
        held = device_ranks(container, site.spec, patterns, facts)
        return (container, held) if held is not None else None
    return None


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _passes_pipeline(site: PodSpecSite) -> bool:
    return any(
        "pipeline-parallel" in str(word) or "pipeline_parallel" in str(word)
        for _, container in main_containers(site.spec)
        for field in ("command", "args")
        for word in _sequence(container.get(field))
    )


def _first_gpu_container(
    site: PodSpecSite, patterns: tuple[str, ...], facts: ObjectFacts
) -> tuple[dict[str, Any], DeviceRanks] | None:
    """The first container with devices whose ranks are known, and what they hold."""
    for _, container in main_containers(site.spec):
        if container_gpus(container, patterns, facts):
            held = device_ranks(container, site.spec, patterns, facts)
            return (container, held) if held is not None else None
    return None


def _mpijob(
    obj: KubeObject, spec: dict[str, Any], sites: list[PodSpecSite], patterns: tuple[str, ...]
) -> Iterator[Diagnostic]:
    worker = next((s for s in sites if s.role == "Worker"), None)
    launcher = next((s for s in sites if s.role == "Launcher"), None)
    slots = integer(spec.get("slotsPerWorker"), 1)
    if worker is None or not worker.pods or not slots:
        return  # no workers, or slotsPerWorker not known offline (a placeholder)
    found = _first_gpu_container(worker, patterns, obj.facts)
    if found is not None and slots > found[1].ranks and "slotsPerWorker" in spec:
        container, held = found
        error = held.family.missing_device
        yield Diagnostic(
            RULE_ID,
            ("spec", "slotsPerWorker"),
            f"slotsPerWorker {slots} puts {slots} MPI ranks on each worker, but worker container "
            f"'{text(container.get('name'))}' has {held.holding()}",
            notes=(
                f"the ranks beyond {held.ranks} share a device or fail" + (f' ("{error}")' if error else ""),
                f"set slotsPerWorker to {held.ranks}",
            ),
        )
    if launcher is None:
        return
    total = slots * worker.pods
    if spec.get("runLauncherAsWorker") is True:
        total += slots
    for container_path, container in main_containers(launcher.spec):
        for launch in container_launches(container, facts=obj.facts).launches:
            if launch.launcher.name != "mpirun" or _own_hosts(launch) or launch.has("oversubscribe") or launch.opaque:
                continue
            np = launch.number("np")
            if np is None and launch.has("np"):
                continue  # -np $(RANKS): not known
            word = launch.values["np"] if np is not None else launch.program
            if word is None:
                continue
            path = (*launcher.path, *container_path, *word.origin.path)
            if np is not None and np > total and text(spec.get("mpiImplementation")) in ("", "OpenMPI"):
                yield _not_enough_slots(
                    path,
                    word,
                    np,
                    f"the hostfile has slots ({worker.pods} workers x slotsPerWorker {slots} = {total})",
                    f"use -np {total}, or more workers",
                )
            elif (np is None or np == total) and found is not None and slots < found[1].ranks:
                open_mpi = text(spec.get("mpiImplementation")) in ("", "OpenMPI")  # one rank per slot without -np
                if (np is not None or open_mpi) and not _ranks_per_node_set(launch) and _one_gpu_per_rank(launch.rest):
                    yield _ranks_below_gpus(spec, path, word.origin.offset, worker.pods, slots, found[1].ranks)
            elif np is not None and np < total and found is not None and slots == found[1].ranks:
                yield Diagnostic(
                    RULE_ID,
                    path,
                    f"mpirun -np {np} starts fewer ranks than the workers' GPUs ({worker.pods} workers x "
                    f"{slots} = {total}, one slot per GPU): {total - np} GPUs stay idle while allocated",
                    offset=word.origin.offset,
                )


def _not_enough_slots(path: Path, word: Word, np: int, slots: str, fix: str) -> Diagnostic:
    """Open MPI's refusal of more ranks than slots, in its own words (help-orte-rmaps-base.txt)."""
    return Diagnostic(
        RULE_ID,
        path,
        f"mpirun -np {np} asks for more ranks than {slots}: Open MPI refuses",
        notes=(
            f'"There are not enough slots available in the system to satisfy the {np} slots that were requested '
            'by the application"',
            fix,
        ),
        severity=Severity.ERROR,
        offset=word.origin.offset,
    )


def _own_hosts(launch: Launch) -> bool:
    """mpirun is given its hosts (a hostfile, or -H/--host) rather than the operator's hostfile."""
    return launch.has("hosts") or launch.has("host_list")


def _volcano_mpirun(obj: KubeObject, sites: list[PodSpecSite], patterns: tuple[str, ...]) -> Iterator[Diagnostic]:
    """A Volcano Job whose tasks hold GPUs and whose mpirun gets its hosts with --host: the list as written, or read
    from the svc plugin's host file or VC_<TASK>_HOSTS (known from the tasks' replicas)."""
    if not any(_first_gpu_container(site, patterns, obj.facts) for site in sites):
        return
    files = controller_files(obj.data)
    for site in sites:
        injected = injected_env(obj.data, site)
        for container_path, container in main_containers(site.spec):
            for launch in container_launches(container, injected, None, obj.facts, files).launches:
                found = _host_list_over_slots(launch)
                if found is not None:
                    np, slots, word = found
                    yield _not_enough_slots(
                        (*site.path, *container_path, *word.origin.path),
                        word,
                        np,
                        f"its --host list has slots ({slots}: one a host, or :N)",
                        f"name each host once per rank (host:N), or use -np {slots}",
                    )


def _host_list_over_slots(launch: Launch) -> tuple[int, int, Word] | None:
    """(-np, the --host list's slots, the -np word) when Open MPI's mpirun is asked for more ranks than its --host
    list has slots. Open MPI only (--allow-run-as-root, orterun, prterun): MPICH's hydra wraps ranks round-robin."""
    if launch.launcher.name != "mpirun" or launch.opaque or launch.has("oversubscribe") or launch.has("hosts"):
        return None
    program = (launch.program.text or "") if launch.program else ""
    if not launch.has("run_as_root") and program.rsplit("/", 1)[-1] not in ("orterun", "prterun"):
        return None
    hosts, np = launch.values.get("host_list"), launch.number("np")
    slots = host_slots(hosts.text) if hosts is not None and hosts.text is not None else None
    if np is None or slots is None or np <= slots:
        return None
    return np, slots, launch.values["np"]


def host_slots(hosts: str) -> int | None:
    """The slots of an Open MPI --host list: one per entry, N for ``host:N``; duplicates add up (PRRTE
    docs/hosts/cli.rst; Open MPI v4.1 orte/mca/rmaps/base/help-orte-rmaps-base.txt). None when not read."""
    total = 0
    for entry in hosts.split(","):
        if not entry:
            continue  # a trailing comma (tr '\n' ',' of a file ending in a newline)
        name, colon, count = entry.rpartition(":")
        if not colon:
            total += 1
        elif name and (slots := counted(count)):
            total += slots
        else:
            return None
    return total or None


def _ranks_per_node_set(launch: Launch) -> bool:
    """mpirun places ranks per node itself (-npernode, -N, --map-by ppr:N:node), not one per hostfile slot."""
    mapping_word = launch.values.get("map_by")
    return launch.has("per_node") or (mapping_word is not None and (mapping_word.text or "ppr").startswith("ppr"))


def _one_gpu_per_rank(rest: tuple[str | None, ...]) -> bool:
    """What mpirun runs uses one GPU per rank: a Python script (Horovod, mpi4py: a rank pins its local GPU),
    or an nccl-tests benchmark without ``-g`` (GPUs per rank, default 1). Not a launcher that starts its own
    processes per node (torchrun, deepspeed, a shell script): those use a node's GPUs from one rank."""
    if not rest or rest[0] is None:
        return False
    program = rest[0].rsplit("/", 1)[-1]
    if program.endswith("_perf"):
        return not any(word in ("-g", "--ngpus") or (word or "").startswith("--ngpus=") for word in rest[1:])
    if program.rstrip("0123456789.") != "python":
        return False
    script = next((word for word in rest[1:] if word is None or not word.startswith("-")), None)
    return script is not None and script.endswith(".py") and "-m" not in rest[1 : rest.index(script)]


def _ranks_below_gpus(spec: dict[str, Any], at: Path, offset: int, workers: int, slots: int, gpus: int) -> Diagnostic:
    """slotsPerWorker (1 when unset: the MPI operator's default) below the workers' GPUs, and mpirun starting one
    rank per slot: the GPUs past the slots are never used."""
    written = "slotsPerWorker" in spec
    how = f"slotsPerWorker {slots}" if written else "slotsPerWorker unset (the MPI operator's default, 1)"
    return Diagnostic(
        RULE_ID,
        ("spec", "slotsPerWorker") if written else at,
        f"{how} gives each worker {slots} MPI rank(s), but each worker holds {gpus} GPUs: "
        f"{workers * (gpus - slots)} GPUs stay idle while allocated",
        notes=(
            f"the hostfile lists each worker with slots={slots}; mpirun without -np starts one rank per slot",
            f"set slotsPerWorker to {gpus}",
        ),
        offset=None if written else offset,
    )


def _pytorchjob(spec: dict[str, Any], sites: list[PodSpecSite], patterns: tuple[str, ...]) -> Iterator[Diagnostic]:
    """nprocPerNode becomes PET_NPROC_PER_NODE, which torchrun reads when --nproc-per-node is not given."""
    field = "nprocPerNode" if "nprocPerNode" in spec else None
    value = spec.get("nprocPerNode")
    if field is None:
        return
    nproc = _written_number(value)
    if nproc is None:
        return  # auto, gpu, cpu
    for site in sites:
        injected = injected_env({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "spec": spec}, site)
        for _, container in main_containers(site.spec):
            held = device_ranks(container, site.spec, patterns)
            if held is None or _sets_visibility(container, {}):
                continue
            launches = container_launches(container, injected).launches
            if not any(launch.launcher.name == "torchrun" and launch.absent("nproc-per-node") for launch in launches):
                continue
            demand = _Demand(nproc, f"nprocPerNode {nproc}", Origin((), 0), False, "torchrun")
            subject = f"the '{site.role}' container '{text(container.get('name'))}'"
            for diagnostic in _compare(demand, held, ("spec", "nprocPerNode"), subject):
                yield Diagnostic(
                    diagnostic.rule,
                    ("spec", "nprocPerNode"),
                    diagnostic.message,
                    severity=diagnostic.severity,
                    notes=diagnostic.notes,
                )
            return


def _trainjob(
    obj: KubeObject, spec: dict[str, Any], sites: list[PodSpecSite], patterns: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """The TrainJob's numProcPerNode against the GPUs of a node: resourcesPerNode, else the runtime's trainer
    container (the torch plugin reads both so). A runtime's own mlPolicy.torch.numProcPerNode is not read: the
    field is gone since Trainer v2.2.0, where torchrun then runs one process per GPU (auto)."""
    trainer = mapping(spec.get("trainer"))
    value = trainer.get("numProcPerNode")
    nproc = _written_number(value)
    if nproc is None:
        return
    holder = {"resources": mapping(trainer.get("resourcesPerNode"))}
    held = device_ranks(holder, {}, patterns, obj.facts)
    if not container_gpus(holder, patterns, obj.facts) and isinstance(getattr(obj.data, "runtime", None), dict):
        found = next(
            (f for f in (_first_gpu_container(site, patterns, obj.facts) for site in sites) if f is not None), None
        )
        held = found[1] if found is not None else None
    if held is None:
        return
    demand = _Demand(nproc, f"numProcPerNode {nproc}", Origin((), 0), False, "torchrun")
    subject = "resourcesPerNode" if "resourcesPerNode" in trainer else "the runtime's trainer container"
    for diagnostic in _compare(demand, held, (), subject):
        yield Diagnostic(
            diagnostic.rule,
            ("spec", "trainer", "numProcPerNode"),
            diagnostic.message,
            notes=diagnostic.notes,
            severity=diagnostic.severity,
        )


def _ray(obj: KubeObject, sites: list[PodSpecSite], patterns: tuple[str, ...]) -> Iterator[Diagnostic]:
    """rayStartParams num-gpus overrides what KubeRay reads from the Ray container's GPU limit."""
    for site in sites:
        if site.role == "submitter":
            continue
        owner = site.template_path[:-1]
        containers = [c for _, c in main_containers(site.spec)]
        raw = dig(obj.data, *owner, "rayStartParams", "num-gpus")
        declared = _written_number(raw)
        if not containers or declared is None:
            continue
        gpus = container_gpus(containers[0], patterns, obj.facts)  # KubeRay: the first container runs Ray
        resource = gpu_resource_name(containers[0], patterns, obj.facts)
        if not gpus or declared == gpus or not resource.endswith("gpu"):
            # no GPU limit: num-gpus is then a logical resource (or the head kept at 0); KubeRay derives num-gpus
            # from limits whose name ends in "gpu" only (TPUs and NeuronCores are Ray resources of their own)
            continue
        name = text(containers[0].get("name"))
        path = (*owner, "rayStartParams", "num-gpus")
        if declared > gpus:
            message = (
                f"rayStartParams num-gpus {declared} but the Ray container '{name}' has {gpus} {resource}: Ray "
                f"schedules tasks on {declared - gpus} GPUs that do not exist, and they fail with CUDA errors. "
                "Drop num-gpus (KubeRay then uses the container's limit) or set it to the limit"
            )
        else:
            message = (
                f"rayStartParams num-gpus {declared} but the Ray container '{name}' holds {gpus} {resource}: Ray "
                f"never schedules work on {gpus - declared} of them, which stay idle while allocated. Drop "
                "num-gpus (KubeRay then uses the container's limit) or set it to the limit"
            )
        yield Diagnostic(RULE_ID, path, message)


MAX_SERVE_CONFIG = 256 * 1024  # a Serve config is a few dozen lines


def _ray_serve(obj: KubeObject, sites: list[PodSpecSite], patterns: tuple[str, ...]) -> Iterator[Diagnostic]:
    """The GPUs a RayService's Serve deployments ask per replica against its Ray cluster's nodes."""
    raw = dig(obj.data, "spec", "serveConfigV2")
    if not isinstance(raw, str) or len(raw) > MAX_SERVE_CONFIG:
        return
    loaded = load_text(f"{obj.document.path} spec.serveConfigV2", raw)
    documents = [d for d in loaded.documents if d.data is not None]
    if loaded.problems or len(documents) != 1:
        return
    document = documents[0]
    deployments = ray_serve.serve_deployments(document.data)
    groups = _ray_groups(obj, sites, patterns)
    if not deployments or groups is None:
        return
    largest = max((group.gpus_per_node for group in groups if group.nodes != 0), default=Fraction(0))
    for deployment in deployments:
        if deployment.gpus > largest:
            line, column = document.locate(deployment.path)
            yield Diagnostic(
                RULE_ID,
                ("spec", "serveConfigV2"),
                f"Serve deployment '{deployment.name}' asks num_gpus {_show(deployment.gpus)} per replica, but no node "
                f"of the Ray cluster has more than {_show(largest)} GPU{'' if largest == 1 else 's'}: Ray never places the replica",
                notes=(
                    f"application '{deployment.application}' stays DEPLOYING and the RayService never becomes ready",
                    "the nodes' GPUs: " + ", ".join(f"{g.name} {_show(g.gpus_per_node)}" for g in groups),
                ),
                severity=Severity.ERROR,
                offset=text_offset(raw, line, column),
            )
    if any(deployment.gpus > largest for deployment in deployments) or any(g.nodes is None for g in groups):
        return
    needed = sum((d.gpus * d.replicas for d in deployments), Fraction(0))
    supply = sum((g.gpus_per_node * (g.nodes or 0) for g in groups), Fraction(0))
    if needed > supply:
        yield Diagnostic(
            RULE_ID,
            ("spec", "serveConfigV2"),
            f"the Serve deployments need at least {_show(needed)} GPUs for the replicas they start, but the Ray "
            f"cluster has {_show(supply)}: replicas stay pending",
            notes=tuple(f"'{d.name}': {d.replicas} replica(s) x num_gpus {_show(d.gpus)}" for d in deployments),
            on_key=True,
        )


def _ray_groups(
    obj: KubeObject, sites: list[PodSpecSite], patterns: tuple[str, ...]
) -> list[ray_serve.RayGroup] | None:
    """The Ray cluster's node groups (the head included); None when a group's GPUs or nodes are not known."""
    autoscaling = dig(obj.data, "spec", "rayClusterConfig", "enableInTreeAutoscaling") is True
    groups = []
    for site in sites:
        if site.role == "submitter":
            continue
        group = mapping(dig(obj.data, *site.template_path[:-1]))
        containers = [c for _, c in main_containers(site.spec)]
        gpus = ray_serve.node_gpus(group, container_gpus(containers[0], patterns, obj.facts) if containers else None)
        nodes = 1 if site.role == "head" else ray_serve.group_nodes(group, autoscaling)
        if gpus is None:
            return None
        groups.append(ray_serve.RayGroup(text(group.get("groupName")) or site.role, gpus, nodes))
    return groups


def _show(amount: Fraction) -> str:
    return str(amount.numerator) if amount.denominator == 1 else f"{float(amount):g}"


def _written_number(value: object) -> int | None:
    """A count written as a YAML number or as text (``"8"``); None for ``auto``, ``gpu``, a template or a flag."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    return decimal(value.strip()) if isinstance(value, str) else None


# --- torchrun's rendezvous against the pods that run it -----------------------------------------------------
# torch/distributed/run.py and torch/distributed/elastic/rendezvous (PyTorch 2.x): --nnodes N (not a MIN:MAX range)
# is how many agents, one per pod, join the rendezvous before any rank starts, and the job waits for them;
# the static backend (the default when --rdzv-backend is not given) takes each agent's --node-rank as given, so
# two agents with the same rank never complete it; c10d and etcd assign ranks themselves and ignore --node-rank.
# The pods are those of one program: a LeaderWorkerSet is one program per group, an MPIJob is mpirun's.
_RENDEZVOUS_KINDS_LEFT_OUT = {("leaderworkerset.x-k8s.io", "LeaderWorkerSet"), ("kubeflow.org", "MPIJob")}
STATIC_RENDEZVOUS = "static"


def _word_text(launch: Launch, flag: str) -> str | None:
    """The flag's value as written; None when absent or not known (a variable, a substitution)."""
    word = launch.values.get(flag)
    return None if word is None or word.text is None else word.text.strip()


def _names_torchrun(site: PodSpecSite) -> bool:
    """Whether a container of the pod names torchrun (or torch.distributed.run/launch) in its command or args."""
    for _, container in main_containers(site.spec):
        words = [*sequence(container.get("command")), *sequence(container.get("args"))]
        if any(isinstance(word, str) and launcher in word for word in words for launcher in _TORCHRUN_WORDS):
            return True
    return False


_TORCHRUN_WORDS = ("torchrun", "torch.distributed.run", "torch.distributed.launch")


def _one_world(obj: KubeObject, gpu_sites: list[PodSpecSite]) -> bool:
    """The GPU pods form one torchrun world: not an elastic PyTorchJob (its node count moves between bounds), and no
    JobSet replicated job with several replicas (each may be a world of its own)."""
    if (api_group(obj.api_version), obj.kind) == ("kubeflow.org", "PyTorchJob"):
        return "elasticPolicy" not in mapping(obj.data.get("spec"))
    if obj.kind == "JobSet":
        for site in gpu_sites:
            replicated = dig(obj.data, *site.path[:3])
            if integer(mapping(replicated).get("replicas"), 1) != 1:
                return False
    return True


def _torchrun_rendezvous(
    obj: KubeObject,
    sites: list[PodSpecSite],
    torchruns: list[tuple[PodSpecSite, Path, Launch]],
    patterns: tuple[str, ...],
) -> Iterator[Diagnostic]:
    if not torchruns or not ranks_of_one_program(obj.api_version, obj.kind, obj.data):
        return
    if (api_group(obj.api_version), obj.kind) in _RENDEZVOUS_KINDS_LEFT_OUT:
        return
    gpu_sites = [
        site
        for site in sites
        if any(container_gpus(container, patterns, obj.facts) for _, container in main_containers(site.spec))
    ]
    launched = {site.path for site, _, _ in torchruns}
    if any(site.pods is None or site.path not in launched for site in gpu_sites) or not _one_world(obj, gpu_sites):
        return  # a GPU pod that runs something else, or pods the cluster decides: the world is not known
    gpu_paths = {site.path for site in gpu_sites}
    if any(_names_torchrun(site) for site in sites if site.path not in gpu_paths):
        return  # a pod without a GPU (a CPU master) whose agent may join the rendezvous too: not counted here
    if any(launch.opaque for _, _, launch in torchruns):
        return  # a word gpulint cannot read may give any flag
    pods = sum(site.pods or 0 for site in gpu_sites)
    written = {_word_text(launch, "nnodes") for _, _, launch in torchruns}
    nodes = decimal(next(iter(written)) or "") if len(written) == 1 else None
    if nodes is None:
        return  # absent (1:1, a world per pod), a range, a variable, or values that differ
    if nodes != pods:
        site, base, launch = torchruns[0]
        word = launch.values["nnodes"]
        if nodes > pods:
            message = (
                f"torchrun --nnodes {nodes} waits for {nodes} nodes at its rendezvous, but the {obj.kind} makes {pods} "
                f"{'pods that run' if pods != 1 else 'pod that runs'} it: no rank starts, and the job fails when the rendezvous "
                "times out"
            )
        else:
            message = (
                f"torchrun --nnodes {nodes} closes its rendezvous at {nodes} nodes, but the {obj.kind} makes {pods} "
                f"pods that run it: {pods - nodes} of them are left out of the world"
            )
        yield Diagnostic(
            RULE_ID,
            (*base, *word.origin.path),
            message,
            notes=(f"set --nnodes {pods}, the pods the {obj.kind} makes, or make {nodes} pods",),
            offset=word.origin.offset,
        )
        return
    yield from _shared_node_rank(obj, torchruns, nodes)


def _shared_node_rank(
    obj: KubeObject, torchruns: list[tuple[PodSpecSite, Path, Launch]], nodes: int
) -> Iterator[Diagnostic]:
    """A static rendezvous whose pods give the same written --node-rank."""
    if nodes < 2:
        return
    claimed: dict[int, int] = {}
    for site, base, launch in torchruns:
        backend = _word_text(launch, "rdzv-backend") if launch.has("rdzv-backend") else STATIC_RENDEZVOUS
        rank = decimal(_word_text(launch, "node-rank") or "")
        if backend != STATIC_RENDEZVOUS or rank is None or not site.pods:
            return  # c10d assigns ranks, or a rank gpulint cannot read (each pod's own, as written to be)
        claimed[rank] = claimed.get(rank, 0) + site.pods
        if claimed[rank] > 1:
            word = launch.values["node-rank"]
            yield Diagnostic(
                RULE_ID,
                (*base, *word.origin.path),
                f"{claimed[rank]} pods of the {obj.kind} run torchrun with --node-rank {rank} on a static "
                f"rendezvous: they claim the same node rank, so the rendezvous of its {nodes} nodes never completes",
                notes=(
                    "give each pod its own rank (an Indexed Job's JOB_COMPLETION_INDEX, the operator's "
                    "PET_NODE_RANK), or use --rdzv-backend=c10d, which assigns the ranks itself",
                ),
                offset=word.origin.offset,
            )
            return
