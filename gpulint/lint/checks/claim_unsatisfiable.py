"""claim-unsatisfiable: no node's devices can satisfy a claim (or all the claims of a pod) on the empty cluster."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.cel.engine import CelProblem
from gpulint.kube.dra.allocation import ClaimSpec
from gpulint.kube.dra.devices import DraModel
from gpulint.kube.scheduler import pod_requirements
from gpulint.kube.workloads import PodSpecSite, effective_pod_spec, pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.dra_objects import claim_of
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts import allocation_failure, extended_resource_claim, referenced_claims

SPEC = RuleSpec("claim-unsatisfiable", Severity.ERROR, needs=frozenset({Need.NODES, Need.DEVICES}))
RULE_ID = SPEC.id


def _dra(ctx: CheckContext) -> DraModel | None:
    world = ctx.cluster
    if world is None or not world.dra.has_devices:
        return None
    return world.dra


def _allocated(obj: KubeObject) -> bool:
    """A claim that is itself allocated already holds its devices."""
    status = obj.data.get("status")
    return isinstance(status, dict) and isinstance(status.get("allocation"), dict)


def _judgeable(claim: ClaimSpec, dra: DraModel) -> bool:
    """A claim naming a class that does not exist, or whose selectors do not compile, is
    device-class-unknown's or cel-invalid's finding, not this one's."""
    alternatives = [a for r in claim.requests for a in r.alternatives]
    return all(a.class_name in dra.classes for a in alternatives) and not any(
        isinstance(dra.engine.compile(s.expression), CelProblem) for a in alternatives for s in a.selectors
    )


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    dra = _dra(ctx)
    if dra is None or not _pools_whole(ctx):
        return
    claim = claim_of(obj)
    if claim is not None:
        if claim.requests and all(r.alternatives for r in claim.requests) and _judgeable(claim, dra):
            where = claim.requests[0].path[:-1]
            reason = allocation_failure(dra.verdicts((claim,)), len(ctx.resolver.nodes))
            if reason is not None:
                head, notes = _split(reason)
                pools = _pools_unknown(ctx)
                if pools:
                    yield _unknown(where, "the claim", head, (*notes, pools))
                else:
                    yield Diagnostic(RULE_ID, where, f"the claim can never be allocated: {head}", notes=notes)
            elif dra.allocated and not _allocated(obj):
                now = allocation_failure(dra.verdicts_now((claim,)), len(ctx.resolver.nodes))
                if now is not None:
                    head, notes = _split(now)
                    yield Diagnostic(
                        RULE_ID,
                        where,
                        f"the claim fits the empty cluster but not the devices that allocated claims leave free now: {head}",
                        notes=notes,
                        severity=Severity.WARNING,
                    )
        return
    for site in pod_spec_sites(obj.data):
        yield from _check_pod(obj, site, ctx, dra)


def _check_pod(obj: KubeObject, site: PodSpecSite, ctx: CheckContext, dra: DraModel) -> Iterator[Diagnostic]:
    total = len(ctx.resolver.nodes)
    parts = referenced_claims(obj, site, ctx.resolver)
    extended = extended_resource_claim(site, ctx.resolver)
    if extended is not None:
        claim, where = extended
        reason = allocation_failure(dra.verdicts((claim,)), total)
        if reason is not None:
            head, notes = _split(reason)
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
        parts.append(claim)
    # Each claim alone is judged on its own object; here they are judged together, on the nodes the pod may use.
    if (
        not parts
        or not all(_judgeable(part, dra) for part in parts)
        or any(allocation_failure(dra.verdicts((part,)), total) is not None for part in parts)
    ):
        return
    # Taints, affinity and resources decide which nodes the pod can use at all.
    pod = pod_requirements(effective_pod_spec(obj.kind, site.spec))
    allowed = frozenset(node.name for node in ctx.resolver.model.evaluate(pod).fitting)
    if len(parts) == 1 and len(allowed) == total:
        return
    if not allowed:
        return  # gpu-unschedulable (or nothing: a pod without GPUs) speaks for the filters
    reason = allocation_failure(dra.verdicts(tuple(parts), allowed), len(allowed))
    if reason is not None and _pools_unknown(ctx):
        head, notes = _split(reason)
        yield _unknown((*site.path, "resourceClaims"), "the pod's claims", head, (*notes, _pools_unknown(ctx)))
    elif reason is not None:
        what = (
            "the pod's claims cannot be allocated together on one node"
            if len(parts) > 1
            else "the pod's claim cannot be allocated on any node the pod may use"
        )
        scope = (
            ()
            if len(allowed) == total
            else (f"its tolerations, affinity and requests allow {len(allowed)} of the {total} nodes",)
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
    names = ", ".join(pool.title for pool in pools[:3]) + (f" and {len(pools) - 3} more" if len(pools) > 3 else "")
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
