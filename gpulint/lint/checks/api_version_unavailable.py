"""api-version-unavailable: an API version the target Kubernetes version no longer (or not yet) serves."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

RULE_ID = "api-version-unavailable"
# Preference when suggesting a version: stable, then the newest beta, then alpha.
_RANK = {"v1": 0, "v1beta2": 1, "v1beta1": 2, "v1alpha3": 3, "v1alpha2": 4, "v1alpha1": 5}


# The kinds whose every served version is in gpulint's schema set (DeviceTaintRule is not:
# its alpha version may still be served beside v1, so it is left alone).
CHECKED_KINDS = frozenset(
    {
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "ResourceSlice",
        "Workload",
        "PodGroup",
        "CompositePodGroup",
    }
)


# The Kubernetes API groups of CHECKED_KINDS: a kind of theirs that no version of the target
# release serves is missing from that release (a custom resource of another group is not).
BUILT_IN_GROUPS = frozenset({"resource.k8s.io", "scheduling.k8s.io"})

SPEC = RuleSpec(RULE_ID, Severity.ERROR)  # every kind: a linted or inventory CRD may define it


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    api_version, kind = obj.api_version, obj.kind
    defined = ctx.schemas.crd_served.get((obj.ref.group, kind))
    if defined is not None:
        yield from _crd_version(obj, *defined)
        return
    if kind not in CHECKED_KINDS or "/" not in api_version or ctx.schemas.has_schema(api_version, kind):
        return
    group = api_version.rpartition("/")[0]
    served = [
        key.rsplit("/", 1)[0]
        for key in ctx.schemas.known_kinds()
        if key.endswith(f"/{kind}") and key.startswith(f"{group}/")
    ]
    version = ctx.config.kubernetes_version
    if not served:
        if group in BUILT_IN_GROUPS:
            yield Diagnostic(RULE_ID, ("apiVersion",), _missing_kind(api_version, kind, version, ctx))
        return  # a kind of another group (a CRD): nothing to say
    best = min(served, key=lambda v: _RANK.get(v.rpartition("/")[2], 9))
    yield Diagnostic(
        RULE_ID,
        ("apiVersion",),
        f"{api_version} {kind} is not served by Kubernetes {version}; use {best}",
        notes=(
            f"served: {', '.join(sorted(served))}",
            "check the object's shape: DRA and scheduling objects changed between versions",
        ),
    )


def _missing_kind(api_version: str, kind: str, version: str, ctx: CheckContext) -> str:
    first = ctx.schemas.first_release(api_version, kind)
    since = f"; {api_version} {kind} arrives in {first}" if first else ""
    return f"{api_version} {kind} is not served by Kubernetes {version}, which has no {kind} API{since}"


def _crd_version(obj: KubeObject, served: frozenset[str], crds: str) -> Iterator[Diagnostic]:
    """A custom resource of a version its CustomResourceDefinition (linted or in the inventory) does not serve."""
    version = obj.api_version.rpartition("/")[2]
    if version in served or "/" not in obj.api_version:
        return
    group = obj.ref.group
    listed = ", ".join(f"{group}/{name}" for name in sorted(served)) or "none"
    yield Diagnostic(
        RULE_ID,
        ("apiVersion",),
        f"{obj.api_version} {obj.kind} is not served by its CustomResourceDefinition {crds}",
        notes=(
            f"served: {listed}",
            f'kubectl refuses it: no matches for kind "{obj.kind}" in version "{obj.api_version}"',
        ),
    )
