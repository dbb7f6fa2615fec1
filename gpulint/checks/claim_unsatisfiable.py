"""claim-unsatisfiable: no node's devices can satisfy a claim (or all the claims of a pod) on the empty cluster."""
from __future__ import annotations

from collections.abc import Iterator

from gpulint.cel import CelProblem
from gpulint.checks import CheckContext
from gpulint.checks._dra import claim_of
from gpulint.checks.claim_reference_invalid import referenced_claim
from gpulint.dra import Alternative, ClaimSpec, Request, claim_spec_of
from gpulint.dra_model import DraModel
from gpulint.fields import mapping
from gpulint.findings import Diagnostic, Severity
from gpulint.resolver import Resolver
from gpulint.objects import KubeObject
from gpulint.quantity import QuantityError, quantity_from_yaml
from gpulint.resources import is_extended
from gpulint.scheduler import pod_requirements
from gpulint.workloads import PodSpecSite, containers, effective_pod_spec, pod_spec_sites

RULE_ID = "claim-unsatisfiable"


def _dra(ctx: CheckContext) -> DraModel | None:
    world = ctx.cluster
    if world is None or not world.dra.has_devices:
        return None
    return world.dra


def explain_failure(verdicts: list, total: int) -> str | None:
    """None when some node fits or the answer is unknown; else why, from the node that came closest."""
    if any(verdict.fits is not False for _, verdict in verdicts):
        return None
    group, best = max(verdicts, key=lambda item: item[1].score)
    if best.score[0] <= 0 and max(best.score) <= 0:
        return f"no node of {total} has a device for it: {best.reason}"
    others = f" (and {len(group.nodes) - 1} identical)" if len(group.nodes) > 1 else ""
    return f"no node of {total} can satisfy it: {best.reason}, on the node that comes closest, " \
           f"{group.nodes[0].name}{others}"


def _allocated(obj: KubeObject) -> bool:
    """A claim that is itself allocated already holds its devices."""
    status = obj.data.get("status")
    return isinstance(status, dict) and isinstance(status.get("allocation"), dict)


def _judgeable(claim: ClaimSpec, dra: DraModel) -> bool:
    """A claim naming a class that does not exist, or whose selectors do not compile, is
    device-class-unknown's or cel-invalid's finding, not this one's."""
    alternatives = [a for r in claim.requests for a in r.alternatives]
    return (all(a.class_name in dra.classes for a in alternatives)
            and not any(isinstance(dra.engine.compile(s.expression), CelProblem)
                        for a in alternatives for s in a.selectors))


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    dra = _dra(ctx)
    if dra is None:
        return
    claim = claim_of(obj)
    if claim is not None:
        if claim.requests and all(r.alternatives for r in claim.requests) and _judgeable(claim, dra):
            where = claim.requests[0].path[:-1]
            reason = explain_failure(dra.verdicts((claim,)), len(ctx.resolver.nodes))
            if reason is not None:
                yield Diagnostic(RULE_ID, where, f"the claim can never be allocated: {reason}")
            elif dra.allocated and not _allocated(obj):
                now = explain_failure(dra.verdicts_now((claim,)), len(ctx.resolver.nodes))
                if now is not None:
                    yield Diagnostic(RULE_ID, where, "the claim fits the empty cluster but not the devices that "
                                                     f"allocated claims leave free now: {now}",
                                     severity=Severity.WARNING)
        return
    for site in pod_spec_sites(obj.data):
        yield from _check_pod(obj, site, ctx, dra)


def referenced_claims(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> list[ClaimSpec]:
    """The parsed claims a pod template references (those the linted files or the inventory hold)."""
    claims = []
    entries = site.spec.get("resourceClaims")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        located, kind = referenced_claim(obj, entry, resolver)
        if located is None:
            continue  # claim-reference-invalid reports it
        claims.append(claim_spec_of(located.data, kind))
    return claims


def _check_pod(obj: KubeObject, site: PodSpecSite, ctx: CheckContext, dra: DraModel) -> Iterator[Diagnostic]:
    total = len(ctx.resolver.nodes)
    parts = referenced_claims(obj, site, ctx.resolver)
    extended = extended_resource_claim(site, ctx.resolver)
    if extended is not None:
        claim, where = extended
        reason = explain_failure(dra.verdicts((claim,)), total)
        if reason is not None:
            yield Diagnostic(RULE_ID, where, f"this extended resource is served by DRA (a DeviceClass's "
                                             f"extendedResourceName) and can never be allocated: {reason}")
            return
        parts.append(claim)
    # Each claim alone is judged on its own object; here they are judged together, on the nodes the pod may use.
    if not parts or not all(_judgeable(part, dra) for part in parts) or any(explain_failure(dra.verdicts((part,)), total) is not None for part in parts):
        return
    # Taints, affinity and resources decide which nodes the pod can use at all.
    pod = pod_requirements(effective_pod_spec(obj.kind, site.spec))
    allowed = frozenset(node.name for node in ctx.resolver.model.evaluate(pod).fitting)
    if len(parts) == 1 and len(allowed) == total:
        return
    if not allowed:
        return  # gpu-unschedulable (or nothing: a pod without GPUs) speaks for the filters
    reason = explain_failure(dra.verdicts(tuple(parts), allowed), len(allowed))
    if reason is not None:
        what = "the pod's claims cannot be allocated together on one node" if len(parts) > 1 \
            else "the pod's claim cannot be allocated on any node the pod may use"
        scope = "" if len(allowed) == total else \
            f" (its tolerations, affinity and requests allow {len(allowed)} of the {total} nodes)"
        yield Diagnostic(RULE_ID, (*site.path, "resourceClaims"), f"{what}{scope}: {reason}")


def extended_resource_claim(site: PodSpecSite, resolver: Resolver) -> tuple[ClaimSpec, tuple] | None:
    """A DRA-backed extended resource (DeviceClass.extendedResourceName) as the claim the scheduler makes for it."""
    backed = resolver.dra_extended_resources()
    published = resolver.published_resources
    requests = []
    where: tuple = ()
    for container_path, container in containers(site.spec):
        limits = mapping(mapping(container.get("resources")).get("limits"))
        for name, value in limits.items():
            if not (is_extended(name) and name in backed and name not in published):
                continue
            try:
                quantity = quantity_from_yaml(value)
            except QuantityError:
                continue  # gpu-non-integer reports it
            if not quantity.is_integer() or quantity.value < 1:
                continue
            alternative = Alternative(name, backed[name], (), False, int(quantity.value), (), ())
            requests.append(Request(f"{container.get('name')}-{name}", (), (alternative,), False))
            where = where or (*site.path, *container_path, "resources", "limits", name)
    if not requests:
        return None
    return ClaimSpec(tuple(requests), (), ()), where
