"""What the API server validates of an object beyond its schema, by kind: the metadata every object gets
(ValidateObjectMeta) and the specs of the resource.k8s.io kinds (kubernetes/kubernetes
pkg/apis/resource/validation/validation.go ValidateResourceClaim, ValidateResourceClaimTemplate,
ValidateDeviceClass, ValidateResourceSlice, ValidateDeviceTaintRule). Pods, which also need the
feature gates, are api-rejected's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping
from gpulint.kube.validation import core, resource, resource_slice, scheduling
from gpulint.kube.validation.errors import FieldError

DRA_API = "resource.k8s.io/"
BUILT_IN = frozenset({"v1", "apps/v1", "batch/v1"})  # validated as pods by the API server itself
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
        "DeviceTaintRule",
    }
)
SLICE_VERSIONS = ("/v1", "/v1beta2", "/v1beta1")  # v1alpha3 slices have another shape


def object_meta(kind: str, api_version: str, data: dict[str, Any]) -> Iterator[FieldError]:
    """ValidateObjectMeta as far as gpulint checks it: the name of the kinds it knows, labels, annotations."""
    metadata = mapping(data.get("metadata"))
    if (kind in SUBDOMAIN_NAMED and (api_version in BUILT_IN or api_version.startswith(DRA_API))) or (
        scheduling.validated(kind, api_version)
    ):
        yield from core.object_name(metadata.get("name"), ("metadata", "name"))
    if metadata.get("labels"):  # nothing to say of an empty or absent map
        yield from core.labels(metadata["labels"], ("metadata", "labels"))
    if metadata.get("annotations"):
        yield from core.metadata_annotations(metadata["annotations"], ("metadata", "annotations"))


def _claim(kind: str, api_version: str, data: dict[str, Any], stored: bool) -> Iterator[FieldError]:
    from gpulint.kube.dra.allocation import claim_spec_path  # the DRA model: for DRA claims only

    base = claim_spec_path(kind)
    flat = not api_version.endswith(("/v1", "/v1beta2"))
    return resource.device_claim(dig(data, *base), base, flat)


def admin_access_request(kind: str, api_version: str, data: dict[str, Any]) -> FieldError | None:
    """A ResourceClaim's or ResourceClaimTemplate's request for admin access (None: none asks for it)."""
    if kind not in ("ResourceClaim", "ResourceClaimTemplate") or not api_version.startswith(DRA_API):
        return None
    from gpulint.kube.dra.allocation import claim_spec_path

    base = claim_spec_path(kind)
    flat = not api_version.endswith(("/v1", "/v1beta2"))
    return resource.admin_access_request(dig(data, *base), base, flat)


def _device_class(kind: str, api_version: str, data: dict[str, Any], stored: bool) -> Iterator[FieldError]:
    return resource.device_class_spec(data.get("spec"), ("spec",), stored)


def _resource_slice(kind: str, api_version: str, data: dict[str, Any], stored: bool) -> Iterator[FieldError]:
    if api_version.endswith(SLICE_VERSIONS):
        yield from resource_slice.resource_slice_spec(data.get("spec"), ("spec",))


def _device_taint_rule(kind: str, api_version: str, data: dict[str, Any], stored: bool) -> Iterator[FieldError]:
    return resource_slice.device_taint_rule_spec(data.get("spec"), ("spec",))


DRA_SPECS: dict[str, Callable[[str, str, dict[str, Any], bool], Iterator[FieldError]]] = {
    "ResourceClaim": _claim,
    "ResourceClaimTemplate": _claim,
    "DeviceClass": _device_class,
    "ResourceSlice": _resource_slice,
    "DeviceTaintRule": _device_taint_rule,
}


def dra_spec(kind: str, api_version: str, data: dict[str, Any], stored: bool = False) -> Iterator[FieldError]:
    """The spec validation of a resource.k8s.io object; nothing for other objects. ``stored``: an object the
    cluster holds (an inventory's), validated as an update that keeps its spec: limits introduced after it was
    created (a DeviceClass's opaque parameters over 10 KiB, from 1.32) do not apply."""
    validate = DRA_SPECS.get(kind)
    if validate is None or not api_version.startswith(DRA_API):
        return iter(())  # most objects: no generator to start
    return validate(kind, api_version, data, stored)


def object_errors(kind: str, api_version: str, data: dict[str, Any], stored: bool = False) -> Iterator[FieldError]:
    """Metadata, then spec: what the API server says of a DRA object (pods aside)."""
    yield from object_meta(kind, api_version, data)
    yield from dra_spec(kind, api_version, data, stored)


def unique_errors(errors: Iterator[FieldError]) -> Iterator[FieldError]:
    """Each message once (a field reached two ways is reported once)."""
    seen: set[str] = set()
    for error in errors:
        message = error.message()
        if message not in seen:
            seen.add(message)
            yield error
