"""dev-shm-missing: a multi-GPU or distributed GPU container left with the runtime's 64 MiB /dev/shm."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.kube.commandline import container_commands, dataloader_workers, image_name
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.kserve import SELECTED_RUNTIME, installed_runtime
from gpulint.kube.kserve_runtimes import dev_shm_depends_on_install, dev_shm_mounted
from gpulint.kube.pod_views import ARGO_PARAMETERS, argo_storage_known
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.runtime import (
    SINGLE_PROCESS_IMAGES,
    container_family,
    container_gpus,
    gpu_resource_name,
    injected_env,
    is_distributed,
    main_containers,
    mounts_dev_shm,
    multiprocess_server,
    one_jax_process,
    pod_gpus,
    runs_no_shared_memory,
)
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Append, Diagnostic, FixSafety, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.world.config_maps import namespace_config_maps

SPEC = RuleSpec("dev-shm-missing", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id
VOLUME_NAMES = ("dshm", "dev-shm", "shm")
RUNTIME_SHM_BYTES = 64 * 1024 * 1024  # containerd's and CRI-O's /dev/shm


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    patterns = ctx.config.gpu_resources
    spec = site.spec
    if site.completed_by and not _mounts_written(obj, site):
        return  # another object supplies volumes (a ServingRuntime, presets): absence proves nothing
    if not site.runs:
        return  # a PodTemplate object: the autoscaler reads its shape, no process of it ever starts
    if spec.get("hostIPC") is True or not pod_gpus(spec, patterns, obj.facts):
        return  # hostIPC: the host's /dev/shm; no GPU: not this rule's business
    affected: list[_Unmounted] = []
    for path, container in main_containers(spec):
        gpus = container_gpus(container, patterns, obj.facts)
        if not gpus:
            continue
        if _kuberay_mounts_shm(obj, site, path):
            continue
        family = container_family(container, patterns, obj.facts)
        if not family.processes_share_memory:
            continue  # TPUs: one process per host drives every chip, over ICI
        small = _small_shm(spec, container) if mounts_dev_shm(container) else None
        if mounts_dev_shm(container) and small is None:
            continue
        # the object's other pod templates count too: a rank of several pods
        # an unknown program's device count is no evidence: judged as one GPU (a server's workers, ranks still count)
        counted = 1 if _program_unknown(obj, (*site.path, *path), container) else gpus
        reason = _reason(obj, obj.facts.sites(), site, container, counted, patterns, ctx)
        if reason and small is not None:
            yield _small_finding(site, container, reason, *small)
        elif reason:
            affected.append(_Unmounted(path, container, *reason, family.collective_shm))
    if not affected:
        return
    runtime = installed_runtime(obj.data) if site.path == ("spec", "predictor") else ""
    if not runtime:
        yield _finding(site, affected, "")
    elif not dev_shm_depends_on_install(runtime):
        yield _finding(
            site, affected, _installed_runtime_note(runtime, "KServe's Helm chart installs it", " (its default values)")
        )
    else:
        installed = _install_without_shm(runtime, ctx)
        if installed:
            yield _finding(site, affected, _installed_runtime_note(runtime, installed))


def _install_without_shm(runtime: str, ctx: CheckContext) -> str:
    """Where the files say how KServe is installed, when every install they show gives the built-in ``runtime``
    no /dev/shm ("" when none is shown, or one mounts it or may: the release decides, kube/kserve_runtimes)."""
    found = ctx.resolver.kserve_installs()
    if not found or any(dev_shm_mounted(runtime, f.install) is not False for f in found):
        return ""
    releases = ", ".join(sorted({f"v0.{f.install.minor} ({f.where})" for f in found}))
    return f"KServe {releases} installs it"


def _installed_runtime_note(runtime: str, installed: str, why: str = "") -> str:
    """Why an InferenceService's predictor, completed by a runtime the files do not hold, is judged at all."""
    return (
        f"the predictor's runtime is ClusterServingRuntime/{runtime}, which KServe selects for its model format "
        f"(autoSelect): {installed} with no /dev/shm{why}"
    )


def _kuberay_mounts_shm(obj: KubeObject, site: PodSpecSite, path: Path) -> bool:
    """KubeRay mounts a memory-backed emptyDir ("shared-mem", sized to the memory limit) at /dev/shm in the Ray
    container (the first) of every head and worker pod it builds, unless rayStartParams sets plasma-directory
    (ray-operator/controllers/ray/common/pod.go, BuildPod and addEmptyDir)."""
    if obj.ref.group != "ray.io" or site.role not in ("head", "worker") or path != ("containers", 0):
        return False
    return "plasma-directory" not in mapping(dig(obj.data, *site.path[:-2], "rayStartParams"))


def _program_unknown(obj: KubeObject, path: Path, container: dict[str, Any]) -> bool:
    """The image is a placeholder (``image: ${CONTAINER_IMAGE_URL}``, filled in by envsubst) and the container
    sets no command or args: what runs is the image's own entrypoint, and the manifest names no image. Its
    device count alone is then no evidence that processes share memory (a gunicorn BLIP-2 server whose
    workers each use one GPU holds two)."""
    if container.get("command") or container.get("args"):
        return False
    return (*obj.prefix, *path, "image") in obj.document.placeholders


def _mounts_written(obj: KubeObject, site: PodSpecSite) -> bool:
    """An Argo template whose only unknowns are {{...}} parameters outside its volumes and mounts: its
    /dev/shm is as written, whatever Argo substitutes. A KServe predictor merged with the runtime KServe
    selects for its model format: its volumes are that runtime's and its own."""
    if site.completed_by == SELECTED_RUNTIME:
        return True
    return site.completed_by == ARGO_PARAMETERS and argo_storage_known(obj.data, site.path)


def _small_shm(spec: dict[str, Any], container: dict[str, Any]) -> tuple[Path, str] | None:
    """The memory-backed emptyDir mounted at /dev/shm when its sizeLimit is no more than the runtime's 64 MiB
    (the tmpfs is sized to the limit): (the limit's path in the pod spec, the limit as written)."""
    names = {
        text(mount.get("name"))
        for mount in sequence(container.get("volumeMounts"))
        if isinstance(mount, dict) and text(mount.get("mountPath")).rstrip("/") == "/dev/shm"
    }
    for index, volume in enumerate(sequence(spec.get("volumes"))):
        empty_dir = mapping(mapping(volume).get("emptyDir"))
        if text(mapping(volume).get("name")) not in names or empty_dir.get("medium") != "Memory":
            continue
        try:
            limit = quantity_from_yaml(empty_dir["sizeLimit"]).value if "sizeLimit" in empty_dir else None
        except QuantityError:
            continue
        if limit is not None and 0 < limit <= RUNTIME_SHM_BYTES:
            return ("volumes", index, "emptyDir", "sizeLimit"), str(empty_dir["sizeLimit"])
    return None


def _small_finding(
    site: PodSpecSite, container: dict[str, Any], reason: tuple[str, str], at: Path, limit: str
) -> Diagnostic:
    name = text(container.get("name"))
    return Diagnostic(
        RULE_ID,
        (*site.path, *at),
        f"container '{name}' ({reason[0]}) mounts a /dev/shm of sizeLimit {limit}: no more than the runtime's "
        "64 MiB default it replaces",
        notes=(
            f"'{name}': {reason[1]}",
            "a memory-backed emptyDir is a tmpfs of its sizeLimit: raise it (16Gi is common) or leave it unset",
        ),
    )


@dataclass(frozen=True)
class _Unmounted:
    """A GPU container without /dev/shm that needs more than the runtime's 64 MiB, and why."""

    path: Path  # from the pod spec
    container: dict[str, Any]
    tag: str  # the reason in short, for the first line
    why: str  # the reason, for the notes
    nccl: bool  # its devices' collective library (NCCL, RCCL) uses /dev/shm too


def _reason(
    obj: KubeObject,
    sites: Sequence[PodSpecSite],
    site: PodSpecSite,
    container: dict[str, Any],
    gpus: int,
    patterns: tuple[str, ...],
    ctx: CheckContext,
) -> tuple[str, str] | None:
    """Why the container needs more than 64 MiB: a short tag for the first line, and the reason for the notes."""
    # GPUs held by a device query tool, a burn-in, a placeholder or a web server: no processes share memory
    if runs_no_shared_memory(container):
        return None
    family = container_family(container, patterns, obj.facts)
    one_process = image_name(container) in SINGLE_PROCESS_IMAGES or one_jax_process(container)
    if gpus >= 2 and family.peers and not one_process:
        resource = gpu_resource_name(container, patterns, obj.facts)
        if family.collective_shm:
            library = f"{family.collective}'s shared memory" if family.collective else "shared memory"
            return f"{gpus} {resource}", f"multi-GPU programs exchange data through {library}"
        return (
            f"{gpus} {resource}",
            f"programs over several {family.name}s run a process per device (and DataLoader workers, Ray's object "
            "store) that share memory through /dev/shm",
        )
    server = multiprocess_server(
        container, injected_env(obj.data, site), namespace_config_maps(ctx, obj.ref.namespace), obj.facts
    )
    # vLLM and SGLang start a process per rank on GPUs; on Neuron one process drives every NeuronCore
    gpu = family.noun.endswith("GPU")
    if server is not None and (gpu or server[0] not in ("vLLM", "SGLang")):
        noun = "GPU" if gpu else family.noun
        return (
            f"{server[0]}, {server[1]} {noun} processes",
            f"{server[0]} starts {server[1]} {noun} processes that share memory",
        )
    workers = dataloader_workers(container_commands(container))
    if workers is not None:
        return (
            f"DataLoader, {workers[0]} workers",
            f"{workers[1]}: PyTorch DataLoader workers hand each batch to the training process through /dev/shm",
        )
    if _one_rank_of_several(obj, sites, site, patterns):
        library = f"{family.collective} and " if family.collective_shm and family.collective else ""
        return (
            f"one rank of a distributed {obj.kind}",
            f"one rank of a distributed {obj.kind}: {library}DataLoader workers use /dev/shm",
        )
    return None


def _one_rank_of_several(
    obj: KubeObject, sites: Sequence[PodSpecSite], site: PodSpecSite, patterns: tuple[str, ...]
) -> bool:
    """The object's pods are ranks of one distributed program, and more than one of them holds GPUs. A Ray
    head is none: it runs Ray's control plane and the driver, and Ray places the program's GPU ranks on the
    workers (Ray's object store falls back to /tmp when /dev/shm is small)."""
    if not is_distributed(obj.api_version, obj.kind) or (obj.ref.group == "ray.io" and site.role == "head"):
        return False
    return sum(site.pods or 0 for site in sites if pod_gpus(site.spec, patterns, obj.facts)) > 1


def _finding(site: PodSpecSite, affected: list[_Unmounted], runtime_note: str = "") -> Diagnostic:
    first = affected[0]
    quoted = [f"'{text(each.container.get('name'))}'" for each in affected]
    names = ", ".join([f"{name} ({each.tag})" for name, each in zip(quoted, affected)])
    bare = ", ".join(quoted)
    reasons = tuple([f"{name}: {each.why}" for name, each in zip(quoted, affected)])
    volume, exists = _volume_name(site.spec)
    fixable = all(isinstance(each.container.get("volumeMounts", []), list) for each in affected) and isinstance(
        site.spec.get("volumes", []), list
    )
    appends: list[Append] = []
    if fixable:  # else the notes say what to mount
        if not exists:
            appends.append(Append((*site.path, "volumes"), {"name": volume, "emptyDir": {"medium": "Memory"}}))
        appends += [
            Append((*site.path, *each.path, "volumeMounts"), {"name": volume, "mountPath": "/dev/shm"})
            for each in affected
        ]
    where = (*site.path, *first.path, "name") if "name" in first.container else (*site.path, *first.path)
    plural = len(affected) > 1
    return Diagnostic(
        RULE_ID,
        where,
        first_line(
            f"container{'s' if plural else ''} {names} {'have' if plural else 'has'} no memory-backed emptyDir at "
            "/dev/shm: the runtime's 64 MiB default applies",
            f"container{'s' if plural else ''} {bare} {'have' if plural else 'has'} no memory-backed emptyDir at "
            "/dev/shm: the runtime's 64 MiB default applies",
        ),
        notes=(
            *reasons,
            *((runtime_note,) if runtime_note else ()),
            (
                'NCCL fails with "Error while creating shared memory segment /dev/shm/nccl-... No space left on '
                'device" and PyTorch DataLoader workers with "Unexpected bus error encountered in worker. This '
                'might be caused by insufficient shared memory (shm)"'
                if any(each.nccl for each in affected)
                else 'PyTorch DataLoader workers fail with "Unexpected bus error encountered in worker. This might '
                'be caused by insufficient shared memory (shm)"'
            ),
            *(() if fixable else ("mount an emptyDir with medium: Memory at /dev/shm",)),  # else the fix says it
        ),
        fix_appends=tuple(appends),
        # the runtime rules decide; gpulint#17 made the attribute explicit: revisit (a memory-backed volume)
        fix_safety=FixSafety.SAFE,
        fix_description=f"add the emptyDir volume '{volume}' (medium: Memory) and mount it at /dev/shm",
    )


def _volume_name(spec: dict[str, Any]) -> tuple[str, bool]:
    """A name no volume of the pod uses (a volume of its own: never shared with another mount)."""
    taken = {text(v.get("name")) for v in sequence(spec.get("volumes")) if isinstance(v, dict)}
    for name in VOLUME_NAMES:
        if name not in taken:
            return name, False
    index = 1
    while f"dshm-{index}" in taken:
        index += 1
    return f"dshm-{index}", False
