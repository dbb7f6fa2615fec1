"""claim-reference-invalid: pods and claims that reference claims, requests or templates that do not exist."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.workloads import containers
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.dra_objects import claim_of
from gpulint.lint.world.kinds import DRA_GROUP, only_elsewhere, unproven

SPEC = RuleSpec("claim-reference-invalid", Severity.ERROR)
RULE_ID = SPEC.id

# pkg/apis/core/validation validatePodResourceClaim's words, by "both are set".
ONE_SOURCE = {
    False: "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
    True: "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
}


def _pod_claims(spec: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    claims = spec.get("resourceClaims")
    return [(i, c) for i, c in enumerate(claims) if isinstance(c, dict)] if isinstance(claims, list) else []


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    claim = claim_of(obj)
    if claim is not None:
        for path, message in claim.shape_problems:
            yield Diagnostic(RULE_ID, path, message)
        return
    for site in obj.facts.sites():
        yield from _check_pod(obj, site.spec, site.path, ctx)


def _check_pod(obj: KubeObject, spec: dict[str, Any], base: tuple, ctx: CheckContext) -> Iterator[Diagnostic]:
    entries = _pod_claims(spec)
    names = [str(entry.get("name")) for _, entry in entries]
    requests_by_name: dict[str, set[str] | None] = {}
    for index, entry in entries:
        path = (*base, "resourceClaims", index)
        # Pointers in the API: a key written as null is not set.
        has_claim = entry.get("resourceClaimName") is not None
        has_template = entry.get("resourceClaimTemplateName") is not None
        if has_claim == has_template:
            yield Diagnostic(
                RULE_ID,
                path,
                f"resourceClaims[{index}] ('{entry.get('name')}'): Invalid value: " + ONE_SOURCE[has_claim],
                notes=("the API server rejects the Pod",)
                + (
                    ("the `source:` wrapper was removed in Kubernetes 1.31: move its key up one level",)
                    if "source" in entry
                    else ()
                ),
            )
            continue
        # imported here: the verdicts and the DRA model they use, for a pod that names a claim only
        from gpulint.kube.dra.allocation import claim_spec_of
        from gpulint.lint.verdicts.shared import referenced_claim

        located, kind = referenced_claim(obj, entry, ctx.resolver)
        target = entry.get("resourceClaimTemplateName") or entry.get("resourceClaimName")
        field_name = "resourceClaimTemplateName" if has_template else "resourceClaimName"
        if located is None:
            requests_by_name[str(entry.get("name"))] = None
            resolver = ctx.resolver
            # a claim found nowhere proves nothing unless the set of its kind is known whole (a template
            # may come from a chart not linted, another overlay, or an operator)
            complete = resolver.reference_proven_absent and resolver.catalog_complete(kind, obj.document.path)
            elsewhere = resolver.namespaces_of(DRA_GROUP, kind, str(target)) if obj.ref.namespace else []
            if elsewhere:
                yield _other_namespace(obj, kind, str(target), elsewhere, (*path, field_name), complete)
            elif complete:
                namespace = f"namespace {obj.ref.namespace}" if obj.ref.namespace else "the pod's namespace"
                listed = " or the inventory's claims" if resolver.lists(kind) else ""
                yield Diagnostic(
                    RULE_ID,
                    (*path, field_name),
                    f"{kind} '{target}' is not among the linted files{listed} ({namespace}); the pod stays Pending "
                    "until it exists",
                )
            continue
        parsed = claim_spec_of(located.data, kind)
        requests_by_name[str(entry.get("name"))] = {r.name for r in parsed.requests}
    for container_path, container in containers(spec):
        resources = container.get("resources")
        claims = resources.get("claims") if isinstance(resources, dict) else None
        if not isinstance(claims, list):
            continue
        for index, reference in enumerate(claims):
            if not isinstance(reference, dict):
                continue
            path = (*base, *container_path, "resources", "claims", index)
            name = str(reference.get("name"))
            if name not in names:
                listed = f": {', '.join(names)}" if names else " which is empty"
                yield Diagnostic(
                    RULE_ID,
                    (*path, "name"),
                    f"container '{container.get('name')}' uses claim '{name}': Not found: must be one "
                    f"of the names in pod.spec.resourceClaims{listed}",
                )
                continue
            request = reference.get("request")
            known = requests_by_name.get(name)
            if isinstance(request, str) and request and known is not None and request not in known:
                yield Diagnostic(
                    RULE_ID,
                    (*path, "request"),
                    f"container '{container.get('name')}' asks for request '{request}' of claim "
                    f"'{name}', which has only {', '.join(sorted(known)) or 'no requests'}",
                )


def _other_namespace(
    obj: KubeObject, kind: str, name: str, namespaces: list[str], path: Path, complete: bool
) -> Diagnostic:
    """The claim is written for another namespace: a pod's claims (and the claims made from its templates) live in
    the pod's own namespace (PodResourceClaim, k8s.io/api core/v1), so the pod waits for one that never comes."""
    head = only_elsewhere(f"{kind} '{name}'", namespaces, obj.ref.namespace)
    return Diagnostic(
        RULE_ID,
        path,
        f"{head}: the pod stays Pending until it exists there" if complete else head,
        notes=(
            f"a pod's {kind} is looked up in the pod's own namespace; create it in {obj.ref.namespace} "
            "or move the workload",
            *(() if complete else (unproven(kind),)),
        ),
        severity=None if complete else Severity.INFO,
        pinned=not complete,
    )
