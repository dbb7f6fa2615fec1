"""The opaque device configuration of NVIDIA's DRA driver, checked as the driver decodes it.

The driver (NVIDIA/k8s-dra-driver-gpu) decodes ``opaque.parameters`` with a strict decoder
(api/nvidia.com/resource/v1beta1/api.go: StrictDecoder; unknown fields are errors), then calls
``Normalize`` and ``Validate`` on the result; its admission webhook (cmd/webhook/main.go) and
the kubelet plugins (cmd/gpu-kubelet-plugin/device_state.go) do the same. The shapes below are
those Go types (gpuconfig.go, migconfig.go, sharing.go, computedomainconfig.go,
vfiodeviceconfig.go, iommu.go) and the checks their Validate methods (validate.go), as a table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path

GROUP_VERSION = "resource.nvidia.com/v1beta1"
DRIVERS = frozenset({"gpu.nvidia.com", "compute-domain.nvidia.com"})


@dataclass(frozen=True)
class Field:
    type: str  # "string", "int", "bool", "quantity", "map-quantity", or the name of a type in TYPES
    enum: tuple[str, ...] = ()
    required: bool = False  # Validate refuses it absent or empty
    minimum: int | None = None
    maximum: int | None = None


_SHARING_STRATEGIES = ("TimeSlicing", "MPS")
TYPES: dict[str, dict[str, Field]] = {
    "GpuConfig": {"sharing": Field("GpuSharing")},
    "MigDeviceConfig": {"sharing": Field("MigDeviceSharing")},
    "VfioDeviceConfig": {"iommu": Field("IOMMUConfig")},
    "ComputeDomainChannelConfig": {"domainID": Field("string", required=True), "allocationMode": Field("string")},
    "ComputeDomainDaemonConfig": {"domainID": Field("string", required=True)},
    "GpuSharing": {
        "strategy": Field("string", _SHARING_STRATEGIES, required=True),
        "timeSlicingConfig": Field("TimeSlicingConfig"),
        "mpsConfig": Field("MpsConfig"),
    },
    "MigDeviceSharing": {
        "strategy": Field("string", _SHARING_STRATEGIES, required=True),
        "mpsConfig": Field("MpsConfig"),
    },
    "TimeSlicingConfig": {"interval": Field("string", ("Default", "Short", "Medium", "Long"))},
    "MpsConfig": {
        "defaultActiveThreadPercentage": Field("int", minimum=0, maximum=100),
        "defaultPinnedDeviceMemoryLimit": Field("quantity"),
        "defaultPerDevicePinnedMemoryLimit": Field("map-quantity"),
    },
    "IOMMUConfig": {
        "backendPolicy": Field("string", ("LegacyOnly", "PreferIommuFD")),
        "enableAPIDevice": Field("bool"),
    },
}
KINDS = ("GpuConfig", "MigDeviceConfig", "VfioDeviceConfig", "ComputeDomainChannelConfig", "ComputeDomainDaemonConfig")
# The messages of validate.go, by field.
_ENUM_MESSAGES = {
    "strategy": "unknown GPU sharing strategy: {value}, supported GPU sharing strategies: TimeSlicing, MPS",
    "interval": "unknown time-slice interval: {value}, supported time-slice intervals: Default, Short, Medium, Long",
    "backendPolicy": "unknown IOMMU backend policy: {value}, supported IOMMU backend policies: LegacyOnly, PreferIommuFD",
}
MEBIBYTE = 1024 * 1024


# Versions earlier driver releases decoded: a cluster may still run one, so these are a warning.
EARLIER_VERSIONS = frozenset({"gpu.nvidia.com/v1alpha1", "resource.nvidia.com/v1alpha1"})


@dataclass(frozen=True)
class Problem:
    path: Path  # inside ``parameters``
    message: str
    on_key: bool = False
    certain: bool = True  # False: refused by current releases only


def problems(parameters: Any) -> Iterator[Problem]:
    """What the driver refuses in ``parameters`` (strict decoding, then Validate)."""
    if not isinstance(parameters, dict):
        yield Problem((), "parameters must be an object with apiVersion and kind")
        return
    api_version, kind = parameters.get("apiVersion"), parameters.get("kind")
    if api_version != GROUP_VERSION:
        yield Problem(
            ("apiVersion",) if "apiVersion" in parameters else (),
            f'no kind "{kind}" is registered for version "{api_version}": the driver decodes only '
            f"{GROUP_VERSION} (gpu.nvidia.com/v1alpha1 and resource.nvidia.com/v1alpha1 were earlier releases' "
            "versions)",
            certain=api_version not in EARLIER_VERSIONS,
        )
        return
    if kind not in KINDS:
        yield Problem(
            ("kind",) if "kind" in parameters else (),
            f'no kind "{kind}" is registered for version "{GROUP_VERSION}" (known: {", ".join(KINDS)})',
        )
        return
    body = {k: v for k, v in parameters.items() if k not in ("apiVersion", "kind")}
    yield from _object(body, str(kind), ())
    if kind in ("GpuConfig", "MigDeviceConfig"):
        yield from _sharing_combination(body.get("sharing"))


def _object(value: Any, type_name: str, path: Path) -> Iterator[Problem]:
    fields = TYPES[type_name]
    if not isinstance(value, dict):
        yield Problem(path, f"json: cannot unmarshal {_json_type(value)} into Go value of type {type_name}")
        return
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            dotted = ".".join(str(step) for step in (*path, key))
            yield Problem((*path, key), f'strict decoding error: unknown field "{dotted}"', on_key=True)
            continue
        yield from _value(item, field, (*path, key), type_name)
    for key, field in fields.items():
        if field.required and value.get(key) in (None, ""):
            yield Problem(path, _required(type_name, key))


def _required(type_name: str, key: str) -> str:
    if key == "domainID":
        return "domainID cannot be empty"
    return f"unknown GPU sharing strategy: , supported GPU sharing strategies: TimeSlicing, MPS ({key} is required)"


def _value(item: Any, field: Field, path: Path, owner: str) -> Iterator[Problem]:
    if item is None:
        return
    if field.type in TYPES:
        yield from _object(item, field.type, path)
    elif field.type == "string":
        if not isinstance(item, str):
            yield Problem(
                path,
                f"json: cannot unmarshal {_json_type(item)} into Go struct field {owner}.{path[-1]} of type string",
            )
        elif field.enum and item not in field.enum:
            yield Problem(path, _ENUM_MESSAGES.get(str(path[-1]), "unknown value {value}").format(value=item))
    elif field.type == "bool":
        if not isinstance(item, bool):
            yield Problem(
                path, f"json: cannot unmarshal {_json_type(item)} into Go struct field {owner}.{path[-1]} of type bool"
            )
    elif field.type == "int":
        if isinstance(item, bool) or not isinstance(item, int):
            yield Problem(
                path, f"json: cannot unmarshal {_json_type(item)} into Go struct field {owner}.{path[-1]} of type int"
            )
        elif field.minimum is not None and item < field.minimum:
            yield Problem(path, "active thread percentage must not be negative")
        elif field.maximum is not None and item > field.maximum:
            yield Problem(path, "active thread percentage must not be greater than 100")
    elif field.type == "quantity":
        yield from _quantity(item, path)
    elif field.type == "map-quantity":
        if not isinstance(item, dict):
            yield Problem(
                path, f"json: cannot unmarshal {_json_type(item)} into Go value of type map[string]resource.Quantity"
            )
            return
        for key, limit in item.items():
            yield from _quantity(limit, (*path, key))


def _quantity(item: Any, path: Path) -> Iterator[Problem]:
    try:
        quantity = quantity_from_yaml(item)
    except QuantityError:
        yield Problem(
            path, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
        return
    if quantity.value < MEBIBYTE:
        yield Problem(path, f"invalid limit: value set too low: {item} (under 1Mi, the MPS limit in MiB is 0)")


def _sharing_combination(sharing: Any) -> Iterator[Problem]:
    """sharing.go GetTimeSlicingConfig / GetMpsConfig: a strategy's settings exclude the other's."""
    if not isinstance(sharing, dict):
        return
    strategy = sharing.get("strategy")
    if strategy == "TimeSlicing" and sharing.get("mpsConfig") is not None:
        yield Problem(("sharing", "mpsConfig"), "cannot use MpsConfig with the 'TimeSlicing' strategy", on_key=True)
    if strategy == "MPS" and sharing.get("timeSlicingConfig") is not None:
        yield Problem(
            ("sharing", "timeSlicingConfig"), "cannot use TimeSlicingConfig with the 'MPS' strategy", on_key=True
        )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"
