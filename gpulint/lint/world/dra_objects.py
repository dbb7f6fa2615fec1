"""The DRA objects among the linted ones (claims, claim templates) and the classes they reference: shared by rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.lint.findings import Path
from gpulint.lint.inputs.objects import KubeObject

if TYPE_CHECKING:
    from gpulint.kube.dra.allocation import ClaimSpec

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def is_dra(obj: KubeObject, *kinds: str) -> bool:
    return obj.api_version.startswith("resource.k8s.io/") and obj.kind in kinds


def claim_of(obj: KubeObject) -> ClaimSpec | None:
    """The device claim of a ResourceClaim or ResourceClaimTemplate object (parsed once while it is
    checked: most DRA rules read it)."""
    if not is_dra(obj, *CLAIM_KINDS):
        return None
    # imported here: the DRA claim model (and the CEL engine under it) only for DRA claims, not for every pod
    from gpulint.kube.dra.allocation import claim_spec_of

    return obj.facts.fact("claim spec", None, claim_spec_of, obj.data, obj.kind)


def class_references(obj: KubeObject) -> Iterator[tuple[str, Path]]:
    claim = claim_of(obj)
    if claim is None:
        return
    for request in claim.requests:
        for alternative in request.alternatives:
            yield alternative.class_name, alternative.class_path
