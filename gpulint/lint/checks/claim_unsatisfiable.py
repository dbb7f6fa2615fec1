"""claim-unsatisfiable: no node's devices can satisfy a claim (or all the claims of a pod) on the empty cluster."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts.scheduling import (
    ClaimVerdict,
    DraVerdict,
    asks_dra,
    claim_verdict,
    dra_verdict,
    scheduling_verdict,
)
from gpulint.lint.verdicts.shared import kueue_admitted, kueue_pins

SPEC = RuleSpec("claim-unsatisfiable", Severity.ERROR, needs=frozenset({Need.NODES, Need.DEVICES}))
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    world = ctx.cluster
    if world is None or not world.dra.has_devices or not _pools_whole(ctx):
        return
    claim = claim_verdict(obj, world)
    if claim is not None:
        yield from _check_claim(claim, ctx)
        return
    pins = kueue_pins(obj, world)  # a queued workload's pods as Kueue starts them
    for written in obj.facts.sites():
        if not asks_dra(written, world):
            continue  # most pods: no scheduling verdict needed here
        site = kueue_admitted(written, pins)
        fit = scheduling_verdict(obj.kind, site, world, written, obj.facts, obj.ref.namespace).fit  # as explain
        verdict = dra_verdict(obj, site, world, fit)
        if verdict is not None:
            yield from _check_pod(site, verdict, ctx)


def _check_claim(verdict: ClaimVerdict, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not verdict.requests or not verdict.judgeable:
        return
    where = verdict.where
    if verdict.reason is not None:
        head, notes = _split(verdict.reason)
        pools = _pools_unknown(ctx)
        if pools:
            yield _unknown(where, "the claim", head, (*notes, pools))
        else:
            yield Diagnostic(RULE_ID, where, f"the claim can never be allocated: {head}", notes=notes)
    elif verdict.now is not None:
        head, notes = _split(verdict.now)
        yield Diagnostic(
            RULE_ID,
            where,
            f"the claim fits the empty cluster but not the devices that allocated claims leave free now: {head}",
            notes=notes,
            severity=Severity.WARNING,
        )


def _check_pod(site: PodSpecSite, verdict: DraVerdict, ctx: CheckContext) -> Iterator[Diagnostic]:
    if verdict.extended is not None:
        where, why = verdict.extended
        head, notes = _split(why)
        pools = _pools_unknown(ctx)
        if pools:
            yield _unknown(where, "this extended resource (served by DRA)", head, (*notes, pools))
            return
        yield Diagnostic(
            RULE_ID,
            where,
            f"this extended resource is served by DRA and can never be allocated: {head}",
            notes=(*notes, "a DeviceClass's extendedResourceName serves it"),
        )
        return
    # Each claim alone is judged on its own object; here they are judged together, on the nodes the pod may use
    # (taints, affinity and resources decide which nodes it can use at all).
    if not verdict.found or not verdict.judgeable:
        return
    total, allowed = verdict.total, verdict.allowed
    if verdict.found == 1 and allowed == total and verdict.error is None:
        return  # the claim's own finding speaks
    if not allowed:
        return  # gpu-unschedulable (or nothing: a pod without GPUs) speaks for the filters
    reason = verdict.together()
    if reason is not None and _pools_unknown(ctx):
        head, notes = _split(reason)
        yield _unknown((*site.path, "resourceClaims"), "the pod's claims", head, (*notes, _pools_unknown(ctx)))
    elif reason is not None:
        what = (
            "the pod's claims cannot be allocated together on one node"
            if verdict.found > 1
            else "the pod's claim cannot be allocated on any node the pod may use"
        )
        scope = (
            ()
            if allowed == total
            else (f"its tolerations, affinity and requests allow {allowed} of the {total} nodes",)
        )
        head, notes = _split(reason)
        yield Diagnostic(RULE_ID, (*site.path, "resourceClaims"), f"{what}: {head}", notes=(*scope, *notes))


def _pools_whole(ctx: CheckContext) -> bool:
    """The pools read are every node group there is (proof or silence): no pool API left unlisted, no node
    group of Cluster Autoscaler's status that may grow undescribed, and no node of an autoscaled pool while
    the inventory holds no pool. Otherwise a node group not read may add nodes with any devices."""
    return ctx.cluster is None or ctx.cluster.node_labels_proven


def _pools_unknown(ctx: CheckContext) -> str:
    """With node pools, the nodes they can add publish ResourceSlices no template describes (Cluster
    Autoscaler copies them from a node of the group; Karpenter does not model them): "" without pools."""
    pools = ctx.cluster.pools if ctx.cluster is not None else []
    if not pools:
        return ""
    names = first_and_more([pool.title for pool in pools])
    return f"the devices of the nodes {names} can add are not described by any ResourceSlice in the inventory"


def _unknown(where: Path, what: str, head: str, notes: tuple[str, ...]) -> Diagnostic:
    """Info, never an error: the nodes that exist cannot allocate it; those the pools can add are unknown."""
    return Diagnostic(
        RULE_ID,
        where,
        f"no node that exists can allocate {what} ({head}); whether a node a pool can add could is unknown",
        notes=notes,
        severity=Severity.INFO,
    )


def _split(reason: str) -> tuple[str, tuple[str, ...]]:
    """The allocator's answer as a headline ("no node of 16 can satisfy it") and the detail under it
    (which request failed, and on the node that came closest)."""
    head, sep, detail = reason.partition(": ")
    return (head, (detail,)) if sep and detail else (reason, ())
