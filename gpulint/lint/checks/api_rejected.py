"""api-rejected: the API server refuses the object (validation beyond the OpenAPI schema), worded as it words it."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import dig, mapping
from gpulint.kube.validation import core, resource, resource_slice
from gpulint.kube.validation.errors import FieldError
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.dra_objects import is_dra
from gpulint.lint.findings import Diagnostic, Severity, first_line
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("api-rejected", Severity.ERROR)
BUILT_IN = frozenset({"v1", "apps/v1", "batch/v1"})  # validated as pods by the API server itself
RULE_ID = SPEC.id
# Kinds whose names are DNS subdomains (NameIsDNSSubdomain): the workloads and DRA objects gpulint reads.
SUBDOMAIN_NAMED = frozenset(
    {
        "Pod",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Job",
        "CronJob",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "ResourceSlice",
    }
)


def _pod_errors(obj: KubeObject, ctx: CheckContext) -> Iterator[FieldError]:
    for site in pod_spec_sites(obj.data):
        if site.template_path:  # a template's labels (a Pod's are its own metadata's)
            template = mapping(dig(obj.data, *site.template_path, "metadata"))
            yield from core.labels(template.get("labels"), (*site.template_path, "metadata", "labels"))
            yield from core.metadata_annotations(
                template.get("annotations"), (*site.template_path, "metadata", "annotations")
            )
        yield from core.pod_spec(site.spec, site.path, ctx.config.gates)


def _errors(obj: KubeObject, ctx: CheckContext) -> Iterator[FieldError]:
    metadata = mapping(obj.data.get("metadata"))
    if obj.kind in SUBDOMAIN_NAMED and (obj.api_version in BUILT_IN or obj.api_version.startswith("resource.k8s.io/")):
        yield from core.object_name(metadata.get("name"), ("metadata", "name"))
    yield from core.labels(metadata.get("labels"), ("metadata", "labels"))
    yield from core.metadata_annotations(metadata.get("annotations"), ("metadata", "annotations"))
    if obj.api_version in BUILT_IN:
        yield from _pod_errors(obj, ctx)
    if is_dra(obj, "ResourceClaim", "ResourceClaimTemplate"):
        from gpulint.kube.dra.allocation import claim_spec_path  # the DRA model: for DRA claims only

        base = claim_spec_path(obj.kind)
        flat = not obj.api_version.endswith(("/v1", "/v1beta2"))
        yield from resource.device_claim(dig(obj.data, *base), base, flat)
    elif is_dra(obj, "DeviceClass"):
        yield from resource.device_class_spec(obj.data.get("spec"), ("spec",))
    elif is_dra(obj, "ResourceSlice") and obj.api_version.endswith(("/v1", "/v1beta2", "/v1beta1")):
        yield from resource_slice.resource_slice_spec(obj.data.get("spec"), ("spec",))


def _diagnostic(error: FieldError, subject: str) -> Diagnostic:
    """The API server's error as it words it; when that is too long for one line, the line shortens the
    field path to its last steps (the finding points at the field) and the whole error is the note."""
    full = f"{subject}: {error.message()}"
    detail = f": {error.detail}" if error.detail else ""
    shown = error.message().removeprefix(error.field)  # ": Invalid value: "x": detail"
    tails = [f"...{tail}" for tail in _field_tails(error.field)]
    brief = first_line(
        full,
        *(f"{subject}: {tail}{shown}" for tail in tails),
        *(f"{subject}: {field}: {error.kind}{detail}" for field in (error.field, *tails)),
        f"{subject}: {error.kind}{detail}",
        f"{subject}: {error.field}: {error.kind}",
        f"{subject}: {error.kind}",
    )
    return Diagnostic(
        RULE_ID, error.path, brief, on_key=error.at_key, notes=() if brief == full else (error.message(),)
    )


def _field_tails(field: str) -> list[str]:
    """The last two steps of a field path, then the last one: ...matchExpressions[0].values."""
    steps = field.split(".")
    return [".".join(steps[-count:]) for count in (2, 1) if len(steps) > count]


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for error in _errors(obj, ctx):
        message = error.message()
        if message not in seen:
            seen.add(message)
            yield _diagnostic(error, "the API server rejects this object")
    if obj.api_version not in BUILT_IN:
        # a custom resource's pod templates are not validated as pods until its controller creates them
        for error in _pod_errors(obj, ctx):
            message = error.message()
            if message not in seen:
                seen.add(message)
                yield _diagnostic(error, "the API server rejects the pods it creates")
