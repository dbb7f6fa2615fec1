"""resource.k8s.io validation (kubernetes/kubernetes pkg/apis/resource/validation/validation.go):
ResourceClaim, ResourceClaimTemplate and DeviceClass, beyond what the OpenAPI schema says.

Left to other rules: a request with both or neither of `exactly` and `firstAvailable` and
`count` with `allocationMode: All` (claim-reference-invalid), CEL that does not compile or
costs too much (cel-invalid).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import lru_cache
from typing import Any

from gpulint.kube import names
from gpulint.kube.fields import mapping
from gpulint.kube.quantity import FORMAT_HINT, QuantityError, parse_quantity
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    FieldError,
    not_supported,
    too_long,
    too_many,
)

REQUESTS_MAX = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize)
CONSTRAINTS_MAX = 32  # DeviceConstraintsMaxSize
CONFIG_MAX = 32  # DeviceConfigMaxSize
SELECTORS_MAX = 32  # DeviceSelectorsMaxSize
FIRST_AVAILABLE_MAX = 8  # FirstAvailableDeviceRequestMaxSize
TOLERATIONS_MAX = 16  # DeviceTolerationsMaxLength
OPAQUE_PARAMETERS_MAX = 10 * 1024  # OpaqueParametersMaxLength
DEVICE_ID_MAX = 32  # DeviceMaxIDLength
DRIVER_NAME_MAX = 63  # DriverNameMaxLength
ALLOCATION_MODES = ("All", "ExactCount")
REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

Validator = Callable[[Any, Path], Iterator[FieldError]]


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _set(
    value: Any, maximum: int, path: Path, validate: Validator, key: Callable[[Any], Any] | None = None
) -> Iterator[FieldError]:
    """validateSlice / validateSet: too many short-circuits; each item; then duplicates by key."""
    items = _items(value)
    if maximum >= 0 and len(items) > maximum:
        yield too_many(path, len(items), maximum)
        return
    for index, item in enumerate(items):
        yield from validate(item, (*path, index))
    if key is not None:
        seen: set[Any] = set()
        for index, item in enumerate(items):
            found = key(item)
            if found is None:
                continue
            if found in seen:
                yield FieldError((*path, index), DUPLICATE, found)
            seen.add(found)


def _name(item: Any) -> Any:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else None


def _text(item: Any) -> Any:
    return item if isinstance(item, str) else None


def _dns_label(value: Any, path: Path) -> Iterator[FieldError]:
    if value is None:
        value = ""  # null (or absent): Go's zero value, an invalid label (a missing one is schema-invalid's too)
    if isinstance(value, str):
        for message in names.dns1123_label(value):
            yield FieldError(path, INVALID, value, message)


def _dns_subdomain(value: Any, path: Path) -> Iterator[FieldError]:
    if isinstance(value, str):
        for message in names.dns1123_subdomain(value):
            yield FieldError(path, INVALID, value, message)


def driver_name(value: Any, path: Path) -> Iterator[FieldError]:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain."""
    if value is None:
        yield FieldError(path, REQUIRED)
        return
    if not isinstance(value, str):
        return
    if not value:
        yield FieldError(path, REQUIRED)
    if len(value) > DRIVER_NAME_MAX:
        yield too_long(path, DRIVER_NAME_MAX)
    for message in names.dns1123_subdomain(value.lower()):
        yield FieldError(path, INVALID, value, message)


def _c_identifier(value: str, path: Path) -> Iterator[FieldError]:
    if len(value) > DEVICE_ID_MAX:
        yield too_long(path, DEVICE_ID_MAX)
    for message in names.c_identifier(value):
        yield FieldError(path, INVALID, value, message)


def qualified_name(value: str, path: Path) -> Iterator[FieldError]:
    """validateQualifiedName: `identifier` or `domain/identifier`."""
    for error in qualified_name_errors(value):
        yield replace(error, path=path)


@lru_cache(maxsize=4096)
def qualified_name_errors(value: str) -> tuple[FieldError, ...]:
    """qualified_name's errors without a path: the same few names are on every device of a fleet, checked once."""
    return tuple(_qualified_name_errors(value, ()))


def _qualified_name_errors(value: str, path: Path) -> Iterator[FieldError]:
    parts = value.split("/")
    if len(parts) == 1:
        yield from _c_identifier(parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            yield FieldError(path, INVALID, "", "the domain must not be empty")
        else:
            yield from driver_name(parts[0], path)
        if not parts[1]:
            yield FieldError(path, INVALID, "", "the name must not be empty")
        else:
            yield from _c_identifier(parts[1], path)
    # more than one slash ("a/b/c"): accepted in 1.37 (validateQualifiedName's TODO, and the declarative
    # resourcesQualifiedName alike), so no error


def fully_qualified_name(value: Any, path: Path) -> Iterator[FieldError]:
    if not isinstance(value, str):
        return
    yield from qualified_name(value, path)
    if "/" not in value:
        yield FieldError(
            path, INVALID, value, "a fully qualified name must be a domain and a name separated by a slash"
        )


# --------------------------------------------------------------------------- claims


def _request_names(devices: dict[str, Any]) -> dict[str, set[str] | None]:
    """gatherRequestNames: each request, with its subrequests' names when it has firstAvailable."""
    out: dict[str, set[str] | None] = {}
    for request in _items(devices.get("requests")):
        if not isinstance(request, dict) or not isinstance(request.get("name"), str):
            continue
        first = _items(request.get("firstAvailable"))
        out[request["name"]] = {str(s.get("name")) for s in first if isinstance(s, dict)} if first else None
    return out


def _has_request(known: dict[str, set[str] | None], reference: str) -> bool:
    segments = reference.split("/")
    if len(segments) > 2 or segments[0] not in known:
        return False
    if len(segments) == 1:
        return True
    subrequests = known[segments[0]]
    return subrequests is not None and segments[1] in subrequests


def _request_refs(value: Any, path: Path, known: dict[str, set[str] | None]) -> Iterator[FieldError]:
    def one(reference: Any, at: Path) -> Iterator[FieldError]:
        if not isinstance(reference, str):
            return
        segments = reference.split("/")
        if len(segments) > 2:
            yield FieldError(at, INVALID, reference, REQUEST_REF)
            return
        for segment in segments:
            yield from _dns_label(segment, at)
        if not _has_request(known, reference):
            yield FieldError(at, INVALID, reference, REQUEST_REF)

    yield from _set(value, REQUESTS_MAX, path, one, _text)


def _selectors(value: Any, path: Path) -> Iterator[FieldError]:
    def one(selector: Any, at: Path) -> Iterator[FieldError]:
        if isinstance(selector, dict) and selector.get("cel") is None:
            yield FieldError((*at, "cel"), REQUIRED)

    yield from _set(value, SELECTORS_MAX, path, one)


def _allocation_mode(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    mode = body.get("allocationMode") or "ExactCount"  # defaulted before validation
    count = body.get("count")
    if isinstance(count, bool) or not isinstance(count, int):
        count = 0  # absent (or null): Go's zero, as the decoder leaves it
    if mode == "ExactCount":
        # SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest: an ExactCount without a count asks for 1
        if count < 0:
            yield FieldError((*path, "count"), INVALID, count, "must be greater than zero")
    elif mode != "All" and isinstance(mode, str):  # a count beside All: claim-reference-invalid's
        yield not_supported((*path, "allocationMode"), mode, ALLOCATION_MODES)


def _device_class_name(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    name = body.get("deviceClassName")
    if name == "" or (name is None and "deviceClassName" in body):
        yield FieldError((*path, "deviceClassName"), REQUIRED)
    else:
        yield from _dns_subdomain(name, (*path, "deviceClassName"))


TOLERATION_OPERATORS = ("Equal", "Exists")  # validDeviceTolerationOperators
TOLERATION_EFFECTS = ("NoExecute", "NoSchedule", "None")  # validDeviceTaintEffects, sorted as sets.List words them


def _toleration(toleration: Any, path: Path) -> Iterator[FieldError]:
    """validateDeviceToleration: a label key when set, the value its operator allows, a known effect when set."""
    if not isinstance(toleration, dict):
        return
    key, value = toleration.get("key") or "", toleration.get("value") or ""
    # the operator is defaulted to Equal (DeviceToleration's +default in k8s.io/api/resource)
    operator, effect = toleration.get("operator") or "Equal", toleration.get("effect") or ""
    if isinstance(key, str) and key:
        for message in names.qualified_name(key):  # ValidateLabelName
            yield FieldError((*path, "key"), INVALID, key, message)
    if not isinstance(value, str) or not isinstance(operator, str) or not isinstance(effect, str):
        return  # a type error: schema-invalid's
    if operator == "Exists":
        if value:
            yield FieldError((*path, "value"), INVALID, value, "must be empty for operator `Exists`")
    elif operator == "Equal":
        for message in names.label_value(value):
            yield FieldError((*path, "value"), INVALID, value, message)
    else:
        yield not_supported((*path, "operator"), operator, TOLERATION_OPERATORS)
    if effect and effect not in TOLERATION_EFFECTS:
        yield not_supported((*path, "effect"), effect, TOLERATION_EFFECTS)


def _exact(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    yield from _device_class_name(body, path)
    yield from _selectors(body.get("selectors"), (*path, "selectors"))
    yield from _allocation_mode(body, path)
    yield from _set(body.get("tolerations"), TOLERATIONS_MAX, (*path, "tolerations"), _toleration)


def _request(request: Any, path: Path, flat: bool) -> Iterator[FieldError]:
    if not isinstance(request, dict):
        return
    yield from _dns_label(request.get("name"), (*path, "name"))
    first = request.get("firstAvailable")
    if isinstance(first, list) and first:

        def sub(item: Any, at: Path) -> Iterator[FieldError]:
            if isinstance(item, dict):
                yield from _dns_label(item.get("name"), (*at, "name"))
                yield from _exact(item, at)

        yield from _set(first, FIRST_AVAILABLE_MAX, (*path, "firstAvailable"), sub, _name)
    elif flat:
        yield from _exact(request, path)
    elif isinstance(request.get("exactly"), dict):
        yield from _exact(request["exactly"], (*path, "exactly"))


def _constraint(constraint: Any, path: Path, known: dict[str, set[str] | None]) -> Iterator[FieldError]:
    if not isinstance(constraint, dict):
        return
    yield from _request_refs(constraint.get("requests"), (*path, "requests"), known)
    if constraint.get("matchAttribute") is not None:
        yield from fully_qualified_name(constraint["matchAttribute"], (*path, "matchAttribute"))
    elif constraint.get("distinctAttribute") is not None:
        yield from fully_qualified_name(constraint["distinctAttribute"], (*path, "distinctAttribute"))
    else:
        yield FieldError((*path, "matchAttribute"), REQUIRED)


def _opaque(config: Any, path: Path, stored: bool = False) -> Iterator[FieldError]:
    if not isinstance(config, dict):
        return
    opaque = config.get("opaque")
    if not isinstance(opaque, dict):
        yield FieldError((*path, "opaque"), REQUIRED)
        return
    yield from driver_name(opaque.get("driver"), (*path, "opaque", "driver"))
    yield from raw_extension(opaque, "parameters", (*path, "opaque", "parameters"), OPAQUE_PARAMETERS_MAX, stored)


def raw_extension(
    parent: dict[str, Any], key: str, path: Path, maximum: int, stored: bool = False
) -> Iterator[FieldError]:
    """validateRawExtension: required, at most ``maximum`` bytes of JSON (on create: a ``stored`` object's
    parameters predate the limit, 1.32, and are grandfathered in), a JSON object."""
    if key not in parent or parent[key] is None:
        yield FieldError(path, REQUIRED)
        return
    value = parent[key]
    try:
        # the compact JSON kubectl sends, UTF-8 as Go writes it (not \u escapes, which would count more)
        raw = json.dumps(value, separators=(",", ":"), default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return
    if not stored and len(raw.encode()) > maximum:
        yield too_long(path, maximum)
    elif not isinstance(value, dict):
        yield FieldError(path, INVALID, "<value omitted>", "must be a valid JSON object")


def _config(config: Any, path: Path, known: dict[str, set[str] | None]) -> Iterator[FieldError]:
    if isinstance(config, dict):
        yield from _request_refs(config.get("requests"), (*path, "requests"), known)
        yield from _opaque(config, path)


def device_claim(devices: Any, path: Path, flat: bool) -> Iterator[FieldError]:
    """validateDeviceClaim. ``flat``: v1beta1, whose requests hold the request fields themselves."""
    if not isinstance(devices, dict):
        return
    known = _request_names(devices)
    yield from _set(
        devices.get("requests"), REQUESTS_MAX, (*path, "requests"), lambda r, at: _request(r, at, flat), _name
    )
    yield from _set(
        devices.get("constraints"), CONSTRAINTS_MAX, (*path, "constraints"), lambda c, at: _constraint(c, at, known)
    )
    yield from _set(devices.get("config"), CONFIG_MAX, (*path, "config"), lambda c, at: _config(c, at, known))


# Fields the schema lists as required whose Go type is a plain value, its zero valid: ResourcePool.Generation
# (int64), DeviceCapacity.Value and Counter.Value (resource.Quantity, 0). Absent, the API server reads 0.
ZERO_VALUED_REQUIRED = frozenset({"generation", "value"})

ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"  # DRAAdminNamespaceLabelKey (pkg/apis/resource)


def admin_access_request(devices: Any, path: Path, flat: bool) -> FieldError | None:
    """AuthorizedForAdmin (pkg/registry/resource/utils.go, v1.33+): the first request with adminAccess,
    as the error the API server gives when the claim's namespace lacks the admin-access label. The
    finding points at the field; the message names it as the registry does (spec.devices.requests[i])."""
    if not isinstance(devices, dict):
        return None
    for index, request in enumerate(_items(devices.get("requests"))):
        body = request if flat else mapping(mapping(request).get("exactly"))
        if mapping(body).get("adminAccess") is True:
            at = (*path, "requests", index) if flat else (*path, "requests", index, "exactly")
            return FieldError(
                (*at, "adminAccess"),
                FORBIDDEN,
                detail=f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the "
                "containing namespace",
                shown=("spec", "devices", "requests", index, "adminAccess"),
            )
    return None


# --------------------------------------------------------------------------- classes


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native (has a domain other than *kubernetes.io), not
    `requests.*`, and `requests.<name>` is a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not names.qualified_name("requests." + name)


def device_class_spec(spec: Any, path: Path, stored: bool = False) -> Iterator[FieldError]:
    """validateDeviceClassSpec; ``stored``: a class the cluster holds (its config as stored: no size limit)."""
    if not isinstance(spec, dict):
        return
    yield from _selectors(spec.get("selectors"), (*path, "selectors"))
    yield from _set(spec.get("config"), CONFIG_MAX, (*path, "config"), lambda c, at: _opaque(c, at, stored))
    name = spec.get("extendedResourceName")
    if isinstance(name, str) and not is_extended_resource_name(name):
        yield FieldError((*path, "extendedResourceName"), INVALID, name, "must be a valid extended resource name")


# --------------------------------------------------------------------------- quantities, as the decoder reads them


def _amounts(holder: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    """The values of a map of counters or capacities ({name: {value: q}}): each at its path."""
    for name, entry in mapping(holder).items():
        if isinstance(entry, dict) and "value" in entry:
            yield (*path, name, "value"), entry["value"]


def _device_quantities(device: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    device = mapping(device)
    if isinstance(device.get("basic"), dict):  # v1beta1
        device, path = device["basic"], (*path, "basic")
    for name, capacity in mapping(device.get("capacity")).items():
        at = (*path, "capacity", name)
        if not isinstance(capacity, dict):
            continue
        if "value" in capacity:
            yield (*at, "value"), capacity["value"]
        policy = mapping(capacity.get("requestPolicy"))
        if "default" in policy:
            yield (*at, "requestPolicy", "default"), policy["default"]
        for index, value in enumerate(_items(policy.get("validValues"))):
            yield (*at, "requestPolicy", "validValues", index), value
        for bound, value in mapping(policy.get("validRange")).items():
            yield (*at, "requestPolicy", "validRange", bound), value
    for index, consumption in enumerate(_items(device.get("consumesCounters"))):
        yield from _amounts(mapping(consumption).get("counters"), (*path, "consumesCounters", index, "counters"))


def _request_quantities(body: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    for name, value in mapping(mapping(mapping(body).get("capacity")).get("requests")).items():
        yield (*path, "capacity", "requests", name), value


def quantities(kind: str, api_version: str, data: dict[str, Any]) -> Iterator[tuple[Path, Any]]:
    """Each resource.Quantity field of a ResourceSlice's devices and counters or a claim's capacity requests, with
    its value as written."""
    spec = mapping(data.get("spec"))
    if kind == "ResourceSlice":
        for index, device in enumerate(_items(spec.get("devices"))):
            yield from _device_quantities(device, ("spec", "devices", index))
        for index, counter_set in enumerate(_items(spec.get("sharedCounters"))):
            yield from _amounts(mapping(counter_set).get("counters"), ("spec", "sharedCounters", index, "counters"))
        return
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return
    base: Path = ("spec", "spec", "devices") if kind == "ResourceClaimTemplate" else ("spec", "devices")
    devices = mapping(
        mapping(spec.get("spec")).get("devices") if kind == "ResourceClaimTemplate" else spec.get("devices")
    )
    flat = not api_version.endswith(("/v1", "/v1beta2"))
    for index, request in enumerate(_items(devices.get("requests"))):
        at = (*base, "requests", index)
        request = mapping(request)
        if flat:
            yield from _request_quantities(request, at)
        else:
            yield from _request_quantities(request.get("exactly"), (*at, "exactly"))
        for sub_index, sub in enumerate(_items(request.get("firstAvailable"))):
            yield from _request_quantities(sub, (*at, "firstAvailable", sub_index))


def undecodable_quantities(kind: str, api_version: str, data: dict[str, Any]) -> Iterator[FieldError]:
    """Quantity.UnmarshalJSON (apimachinery v0.37.2 api/resource/quantity.go): a string ParseQuantity refuses,
    spaces trimmed, ends the request before validation (a 400, worded with ParseQuantity's error). Only
    ParseQuantity's own refusals: gpulint's bounds on length and exponent are no error of Kubernetes'."""
    for path, value in quantities(kind, api_version, data):
        if not isinstance(value, str):
            continue  # a number is read as its text; null is zero; another type is the schema's
        try:
            parse_quantity(value.strip())
        except QuantityError as error:
            message = str(error)
            if message.startswith(("quantity is longer", "quantity exponent")):
                continue
            if message.startswith("unable to parse quantity's suffix"):
                message = "unable to parse quantity's suffix"  # ErrSuffix names no suffix
            yield FieldError(path, INVALID, value, FORMAT_HINT if message == "quantity is empty" else message)
