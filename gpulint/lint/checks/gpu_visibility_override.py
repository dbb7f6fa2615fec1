"""gpu-visibility-override: GPU visibility variables set by hand, and CUDA images that see every GPU of the node."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.visibility import (
    CUDA_IDLE,
    CUDA_IMAGE,
    CUDA_OUT_OF_RANGE,
    CUDA_UUIDS,
    HIDES_GPUS,
    IGNORED_ENVVAR,
    MIG_DEVICES,
    PRIVILEGED_SEES_ALL,
    REPLACES_GPUS,
    UNCOUNTED_GPUS,
    VisibilityProblem,
    envvar_gate,
    visibility_problems,
)
from gpulint.lint.world.config_maps import namespace_config_maps

SPEC = RuleSpec("gpu-visibility-override", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    gate: str = ctx.memo(("clusterpolicy-envvar-gate",), lambda: envvar_gate(ctx.resolver.linted))
    problems = visibility_problems(  # the ones explain shows
        obj, site, ctx.config.gpu_resources, lambda namespace: namespace_config_maps(ctx, namespace), ctx.cluster, gate
    )
    for problem in problems:
        message, notes = _WORDS[problem.kind](problem)
        yield Diagnostic(RULE_ID, problem.path, message, notes=notes, on_key=problem.kind == PRIVILEGED_SEES_ALL)


def _hides(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' asks for {p.gpus} {p.resource} but sets NVIDIA_VISIBLE_DEVICES={p.written}"
        f"{p.origin}: the NVIDIA container runtime then exposes no GPU",
        ("the allocated GPUs stay idle: remove the variable",),
    )


def _replaces(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' sets NVIDIA_VISIBLE_DEVICES={p.value}{p.origin} by hand: it replaces the GPUs "
        "the device plugin allocated",
        (
            "with the device plugin's default envvar strategy the container may use GPUs allocated to other pods",
            "remove the variable: the device plugin sets it",
        ),
    )


def _uncounted(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    if p.given_by:  # a runtime: its users' resources decide whether it holds GPUs
        return (
            f"container '{p.container}' sets NVIDIA_VISIBLE_DEVICES={p.value}{p.origin} by hand, and takes its GPUs "
            f"from {p.given_by}",
            (
                "where they give it GPUs, the variable replaces those the device plugin allocated; where they give "
                "none, on a node whose default runtime is nvidia it sees GPUs the scheduler does not count "
                "(NVIDIA/k8s-device-plugin#61)",
                "remove the variable: the device plugin sets it for the GPUs they request",
            ),
        )
    return (
        f"container '{p.container}' requests no GPU but sets NVIDIA_VISIBLE_DEVICES={p.value}{p.origin}",
        (
            "on a node whose default runtime is nvidia it sees those GPUs without the scheduler counting them, and "
            "competes with the pods they are allocated to (NVIDIA/k8s-device-plugin#61)",
            "request the GPUs it needs, or set NVIDIA_VISIBLE_DEVICES=void",
        ),
    )


def _ignored(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    asks = f"takes its GPUs from {p.given_by}" if p.given_by else "requests no GPU"
    gets = "it gets only the GPUs they request" if p.given_by else "the container gets no GPU"
    return (
        f"container '{p.container}' {asks} and sets NVIDIA_VISIBLE_DEVICES={p.value}{p.origin}, which the GPU "
        f"operator's ClusterPolicy {p.policy} has the toolkit ignore: {gets}",
        (
            f"ClusterPolicy {p.policy} sets the toolkit's ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED="
            "false: an unprivileged container gets only the GPUs the device plugin allocates it "
            "(NVIDIA/aicr#1354: runtimeClassName nvidia and NVIDIA_VISIBLE_DEVICES=all, then nvidia-smi: not found)",
            "request the GPUs through the objects that use it" if p.given_by else "request the GPUs it needs",
        ),
    )


def _privileged(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' asks for {p.gpus} {p.resource} but is privileged: it sees every GPU of its node, "
        f"not just the {p.gpus} allocated to it",
        (
            f"a privileged container gets all of the host's devices: on {p.nodes} ({p.most} {p.resource}) "
            "nvidia-smi and CUDA list the GPUs allocated to other pods too (NVIDIA/k8s-device-plugin#336, "
            "kubernetes/kubernetes#81256)",
            "drop privileged: true and add the capabilities it needs (securityContext.capabilities.add)",
        ),
    )


def _uuids(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' sets CUDA_VISIBLE_DEVICES to device UUIDs{p.origin}, which are usually not the "
        "GPUs allocated to it",
        (
            "the device plugin allocates whichever GPUs are free, so named devices are usually not the ones "
            'in the container and CUDA finds none ("no CUDA-capable device is detected")',
            "remove the variable",
        ),
    )


def _out_of_range(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' sets CUDA_VISIBLE_DEVICES={p.value}{p.origin} but sees {p.gpus} "
        f"GPU{'s' if p.gpus > 1 else ''} (numbered 0 to {p.gpus - 1} inside the container)",
        (
            f"CUDA stops at the first index that does not exist ({p.first_missing}), so the process gets "
            f"{p.usable} of them",
            f"remove the variable or use indexes below {p.gpus}",
        ),
    )


def _idle(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' holds {p.gpus} GPUs but CUDA_VISIBLE_DEVICES={p.value}{p.origin} shows the "
        f"process {p.shown}: {p.gpus - p.shown} GPUs stay idle while allocated",
        (f"request {p.shown} GPUs, or remove the variable",),
    )


def _cuda_image(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    return (
        f"container '{p.container}' requests no GPU but {p.reason} and runs a CUDA image, "
        "which sets NVIDIA_VISIBLE_DEVICES=all",
        (
            f"the image {p.image}: where nvidia is the node's default runtime the container sees every GPU of the "
            "node, unaccounted",
            "set NVIDIA_VISIBLE_DEVICES=void in its env (or request the GPUs it uses)",
        ),
    )


def _mig_devices(p: VisibilityProblem) -> tuple[str, tuple[str, ...]]:
    seen = (
        "each MIG profile's device plugin sets NVIDIA_VISIBLE_DEVICES and the kubelet keeps one value per "
        "container, so it sees one profile's devices only"
        if p.most > 1
        else "it sees them all, but CUDA runs on one MIG device"
    )
    return (
        f"container '{p.container}' asks for {p.gpus} MIG devices ({p.value}): {seen}",
        (
            "one MIG device per container: a CUDA process can use a single MIG instance (NVIDIA/k8s-device-plugin#728)",
            "ask for one larger MIG profile, or split the work over containers with one MIG device each",
        ),
    )


_WORDS: dict[str, Callable[[VisibilityProblem], tuple[str, tuple[str, ...]]]] = {
    HIDES_GPUS: _hides,
    REPLACES_GPUS: _replaces,
    UNCOUNTED_GPUS: _uncounted,
    CUDA_UUIDS: _uuids,
    CUDA_OUT_OF_RANGE: _out_of_range,
    CUDA_IDLE: _idle,
    CUDA_IMAGE: _cuda_image,
    IGNORED_ENVVAR: _ignored,
    PRIVILEGED_SEES_ALL: _privileged,
    MIG_DEVICES: _mig_devices,
}
