"""gpu-sharing: GPUs that are replicas or MIG slices, asked for as if they were whole GPUs."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.gpu_sharing import NVIDIA_GPU
from gpulint.kube.gpu_stack import node_names
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite, extended_resource_path
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.verdicts.device_filters import (
    SHARED_REFUSAL,
    MigMixture,
    SharedRequest,
    VgpuExcess,
    sharing_verdict,
    vgpu_excesses,
)

SPEC = RuleSpec("gpu-sharing", Severity.WARNING, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    resolver = ctx.cluster
    if resolver is None:
        return
    verdict = sharing_verdict(obj.kind, site, resolver, obj.facts)  # the one explain shows
    yield from (_shared_request(request) for request in verdict.shared)
    # HAMi and Volcano's device count, on the nodes the other filters pass (the verdict explain shows)
    yield from (_too_many_vgpus(excess) for excess in vgpu_excesses(obj.kind, site, resolver, obj.facts))
    if verdict.mixture is not None:
        yield _mig_mixture(site, verdict.mixture)


def _too_many_vgpus(excess: VgpuExcess) -> Diagnostic:
    """A container asking for more vGPUs than the nodes it can use have GPUs (the verdict explain shows)."""
    node, most = excess.most
    head = (
        f"container '{excess.container}' asks for {excess.amount} {excess.resource}, but {most.scheduler} gives a "
        f"container at most one of each physical GPU and the nodes it can use have at most {most.devices}"
    )
    known = excess.bounds
    return Diagnostic(
        RULE_ID,
        excess.path,
        first_line(f"{head}: its pods stay Pending", head),
        notes=(
            f"physical GPUs: {first_and_more([f'{n} {b.devices}' for n, b in known], 5, noun='nodes')}",
            excess.refusal,
            f"ask for at most {most.devices}, or pin nodes with more GPUs",
        ),
    )


def _shared_request(request: SharedRequest) -> Diagnostic:
    """More than one unit of a shared resource is not more GPU (the verdict explain shows)."""
    name, amount = request.resource, request.amount
    where = (
        "every node it can use"
        if request.everywhere
        else f"{len(request.shared)} of the {request.usable} nodes it can use"
    )
    head = f"container '{request.container}' asks for {amount} {name}, but on {where} {name} is {request.unit}"
    what = (f"the nodes: {node_names(request.shared)}",) if not request.everywhere else ()
    if request.refused is True and request.everywhere:
        return Diagnostic(
            RULE_ID,
            request.path,
            first_line(f"{head}: {SHARED_REFUSAL}", head),
            severity=Severity.ERROR,
            notes=(*what, SHARED_REFUSAL, request.admission_error, "ask for 1, or for whole GPUs"),
        )
    maybe = (
        ("the device plugin rejects it with UnexpectedAdmissionError where failRequestsGreaterThanOne is set",)
        if request.refused is None
        else ()
    )
    return Diagnostic(
        RULE_ID,
        request.path,
        head,
        notes=(
            *what,
            f"the {amount} units may be replicas of the same physical GPU, each shared with other pods: "
            "no more compute or memory than 1 is guaranteed",
            *maybe,
            "ask for 1, or pin nodes with whole GPUs",
        ),
    )


def _mig_mixture(site: PodSpecSite, mixture: MigMixture) -> Diagnostic:
    """Under the single MIG strategy nvidia.com/gpu is a slice on some nodes and a whole GPU on others."""
    slices, whole = mixture.slices, mixture.whole
    return Diagnostic(
        RULE_ID,
        extended_resource_path(site, frozenset({NVIDIA_GPU})) or site.path,
        f"nvidia.com/gpu is a MIG slice on {len(slices)} of the {len(slices) + len(whole)} nodes this pod can use "
        f"and {mixture.whole_unit} on {len(whole)}",
        notes=(
            f"MIG slices (the single MIG strategy): {', '.join(mixture.slice_products) or node_names(slices)}; "
            f"whole: {', '.join(mixture.whole_products) or node_names(whole)}",
            "where it lands decides which it gets: pin the product with a nodeSelector on nvidia.com/gpu.product",
        ),
    )
