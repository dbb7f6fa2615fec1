"""The NVIDIA device plugin's configuration file (NVIDIA/k8s-device-plugin api/config/v1), checked as the plugin reads it.

The plugin reads the file with sigs.k8s.io/yaml: YAML becomes JSON, then Go's encoding/json
fills the structs. So an unknown key is dropped without a word, a key that differs only in
case still matches a field of the plainly decoded structs (Config, Flags, Sharing, ...), and
a value of the wrong type fails the whole file - the plugin exits and the DaemonSet crash-loops.
The sharing structs have their own decoders (replicas.go) that read exact keys and refuse a
missing ``resources``, ``name`` or ``replicas`` and fewer than 2 replicas. ``validateFlags``
(cmd/nvidia-device-plugin/main.go) then refuses unknown strategy values at start.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import type_name

ERROR = "error"
WARNING = "warning"
Path = tuple[Any, ...]


@dataclass(frozen=True)
class Problem:
    path: Path  # inside the configuration document
    message: str
    level: str  # ERROR: the plugin refuses the file; WARNING: it ignores what is written
    on_key: bool = False


@dataclass(frozen=True)
class Field:
    kind: str  # str, bool, int, duration, enum, struct, list, devices, strategies, channels
    of: str = ""  # the struct (for struct and list)
    values: tuple[str, ...] = ()  # for enum and strategies
    refused: str = ""  # the plugin's message for a value outside ``values`` ({} is the value)


@dataclass(frozen=True)
class Struct:
    exact: bool  # a custom decoder reading exact keys (else encoding/json: case-insensitive)
    fields: dict[str, Field]


_MIG = ("none", "single", "mixed")
STRUCTS: dict[str, Struct] = {
    "Config": Struct(
        False,
        {
            "version": Field("enum", values=("v1",), refused="unknown version: {}"),
            "flags": Field("struct", "Flags"),
            "resources": Field("struct", "Resources"),
            "sharing": Field("struct", "Sharing"),
            "imex": Field("struct", "Imex"),
        },
    ),
    "Flags": Struct(
        False,
        {
            "migStrategy": Field("enum", values=_MIG, refused="unknown MIG strategy: {}"),
            "failOnInitError": Field("bool"),
            "mpsRoot": Field("str"),
            "nvidiaDriverRoot": Field("str"),
            "nvidiaDevRoot": Field("str"),
            "gdrcopyEnabled": Field("bool"),
            "gdsEnabled": Field("bool"),
            "mofedEnabled": Field("bool"),
            "useNodeFeatureAPI": Field("bool"),
            "deviceDiscoveryStrategy": Field(
                "enum", values=("auto", "nvml", "tegra"), refused="invalid --device-discovery-strategy option {}"
            ),
            "plugin": Field("struct", "Plugin"),
            "gfd": Field("struct", "GFD"),
        },
    ),
    "Plugin": Struct(
        False,
        {
            "passDeviceSpecs": Field("bool"),
            "deviceListStrategy": Field(
                "strategies",
                values=("envvar", "volume-mounts", "cdi-annotations", "cdi-cri"),
                refused="invalid --device-list-strategy option: invalid strategy: {}",
            ),
            "deviceIDStrategy": Field(
                "enum", values=("uuid", "index"), refused="invalid --device-id-strategy option: {}"
            ),
            "cdiAnnotationPrefix": Field("str"),
            "nvidiaCTKPath": Field("str"),
            "containerDriverRoot": Field("str"),
            "sharedDevicesAllocationPolicy": Field(
                "enum",
                values=("distributed", "packed"),
                refused="invalid --shared-devices-allocation-policy option: {}",
            ),
        },
    ),
    "GFD": Struct(
        False,
        {
            "oneshot": Field("bool"),
            "noTimestamp": Field("bool"),
            "sleepInterval": Field("duration"),
            "outputFile": Field("str"),
            "machineTypeFile": Field("str"),
        },
    ),
    "Resources": Struct(False, {"gpus": Field("list", "Resource"), "mig": Field("list", "Resource")}),
    "Resource": Struct(True, {"pattern": Field("str"), "name": Field("str")}),
    "Sharing": Struct(False, {"timeSlicing": Field("struct", "Replicated"), "mps": Field("struct", "Replicated")}),
    "Replicated": Struct(
        True,
        {
            "renameByDefault": Field("bool"),
            "failRequestsGreaterThanOne": Field("bool"),
            "resources": Field("list", "ReplicatedResource"),
        },
    ),
    "ReplicatedResource": Struct(
        True,
        {"name": Field("str"), "rename": Field("str"), "devices": Field("devices"), "replicas": Field("int")},
    ),
    "Imex": Struct(False, {"channelIDs": Field("channels"), "required": Field("bool")}),
}

# Where each key lives (lower-cased key -> its paths), for "it belongs at ...".
HOMES: dict[str, list[str]] = {}


def _index_homes(struct: str, prefix: str) -> None:
    for key, spec in STRUCTS[struct].fields.items():
        where = f"{prefix}{key}"
        HOMES.setdefault(key.lower(), []).append(where)
        if spec.kind == "struct":
            _index_homes(spec.of, f"{where}.")
        elif spec.kind == "list":
            _index_homes(spec.of, f"{where}[].")


_index_homes("Config", "")


def _home(key: str, where: str) -> str:
    """The one place ``key`` belongs, preferring those below ``where`` (replicas under timeSlicing: its resources)."""
    homes = HOMES.get(key.lower(), [])
    below = [home for home in homes if home.startswith(f"{where}.")]
    chosen = below or homes
    return chosen[0] if len(chosen) == 1 else ""


_RESOURCE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_GO_DURATION = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*|0")
_DEVICE_REF = re.compile(
    r"\d+|\d+:\d+|(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|MIG-GPU-[0-9a-fA-F-]{36}/\d+/\d+"
)
_TOP_LEVEL_MARKERS = frozenset({"flags", "sharing", "resources", "imex"})


def looks_like_config(data: Any) -> bool:
    """A mapping with the plugin's ``version`` and at least one of its sections (or a sharing key misplaced at the top)."""
    if not isinstance(data, dict) or "version" not in data:
        return False
    keys = {str(k).lower() for k in data}
    return bool(keys & (_TOP_LEVEL_MARKERS | {"timeslicing", "mps", "migstrategy"}))


def validate(data: Any) -> list[Problem]:
    """Every problem of one configuration document, in document order."""
    problems = list(_struct(data, "Config", ()))
    problems.extend(_cross_checks(data))
    return problems


def _struct(value: Any, name: str, path: Path) -> Iterator[Problem]:
    struct = STRUCTS[name]
    if value is None:
        return
    if not isinstance(value, dict):
        yield Problem(path, f"must be a mapping, not {type_name(value)}: the plugin cannot read the file", ERROR)
        return
    by_lower = {key.lower(): key for key in struct.fields}
    present: set[str] = set()
    for raw_key, item in value.items():
        key = str(raw_key)
        here = (*path, raw_key)
        field_name = key if key in struct.fields else ("" if struct.exact else by_lower.get(key.lower(), ""))
        if not field_name:
            yield _unknown(key, here, struct, by_lower)
            continue
        present.add(field_name)
        yield from _value(item, struct.fields[field_name], here, field_name)
    yield from _required(name, value, present, path)


def _unknown(key: str, path: Path, struct: Struct, by_lower: dict[str, str]) -> Problem:
    location = ".".join(str(p) for p in path[:-1] if not isinstance(p, int))
    where = location or "the top level"
    home = _home(key, location)
    if struct.exact and key.lower() in by_lower:
        hint = f"; this part of the file is read by exact key: write {by_lower[key.lower()]}"
    elif home:
        hint = f"; it belongs at {home}"
    else:
        close = difflib.get_close_matches(key, list(struct.fields), n=1, cutoff=0.7)
        hint = f"; did you mean {close[0]}?" if close else f" (known here: {', '.join(struct.fields)})"
    return Problem(
        path, f"'{key}' is not a field at {where}: the device plugin ignores it without a word{hint}", WARNING, True
    )


def _value(value: Any, spec: Field, path: Path, name: str) -> Iterator[Problem]:
    if value is None:
        return
    kind = spec.kind
    if kind == "struct":
        yield from _struct(value, spec.of, path)
    elif kind == "list":
        if not isinstance(value, list):
            yield _type(path, name, "a list", value)
            return
        for index, item in enumerate(value):
            yield from _struct(item, spec.of, (*path, index))
    elif kind == "bool" and not isinstance(value, bool):
        yield _type(path, name, "true or false", value)
    elif kind == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        yield _type(path, name, "a whole number", value)
    elif kind == "str" and not isinstance(value, str):
        yield _type(path, name, "a string", value)
    elif kind == "enum":
        if not isinstance(value, str):
            yield _type(path, name, "a string", value)
        elif value not in spec.values:
            yield Problem(path, _refused(spec, value), ERROR)
    elif kind == "strategies":
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, str):
                yield _type(path, name, "a string or a list of strings", value)
                return
            if item not in spec.values:
                yield Problem(path, _refused(spec, item), ERROR)
                return
    elif kind == "duration":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            yield _type(path, name, "a duration such as 60s", value)
        elif isinstance(value, str) and value != "infinite" and not _GO_DURATION.fullmatch(value):
            yield Problem(path, f'time: invalid duration "{value}": {name} must be a duration such as 60s', ERROR)
    elif kind == "devices":
        yield from _devices(value, path)
    elif kind == "channels":
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            yield _type(path, name, "a list of whole numbers", value)
        elif value not in ([], [0]):
            yield Problem(path, f"invalid IMEX channel IDs: channelIDs must be [] or [0]; found {value}", ERROR)


def _refused(spec: Field, value: str) -> str:
    return f"the device plugin refuses to start: {spec.refused.format(value)} (valid: {', '.join(spec.values)})"


def _type(path: Path, name: str, wanted: str, value: Any) -> Problem:
    return Problem(
        path,
        f"{name} must be {wanted}, not {type_name(value)}: the whole file fails to parse and the device plugin "
        "exits (its DaemonSet crash-loops)",
        ERROR,
    )


def _devices(value: Any, path: Path) -> Iterator[Problem]:
    if isinstance(value, str):
        if value != "all":
            yield Problem(path, f"devices set as '{value}' but the only valid string input is 'all'", ERROR)
    elif isinstance(value, int) and not isinstance(value, bool):
        if value <= 0:
            yield Problem(path, f"devices set as '{value}' but a count of devices must be > 0", ERROR)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, bool) or not (
                isinstance(item, int) or (isinstance(item, str) and _DEVICE_REF.fullmatch(item))
            ):
                yield Problem(path, f"unsupported type for device in devices list: {item}", ERROR)
                return
    else:
        yield Problem(path, f"unrecognized type for devices spec: {type_name(value)}", ERROR)


def _required(name: str, value: dict[str, Any], present: set[str], path: Path) -> Iterator[Problem]:
    """What the custom decoders of replicas.go and resources.go refuse, and what they drop with a warning."""
    if name == "Replicated":
        resources = value.get("resources")
        if "resources" not in present or (isinstance(resources, list) and not resources):
            yield Problem(path, "no resources specified: the device plugin refuses the file", ERROR, True)
    elif name == "ReplicatedResource":
        if "name" not in present:
            yield Problem(path, "no resource name specified: the device plugin refuses the file", ERROR)
        elif isinstance(value.get("name"), str) and not _valid_resource_name(value["name"]):
            yield Problem((*path, "name"), f"incorrect format for resource name '{value['name']}'", ERROR)
        if "replicas" not in present:
            yield Problem(path, "no replicas specified: the device plugin refuses the file", ERROR)
        elif (
            isinstance(value.get("replicas"), int) and not isinstance(value["replicas"], bool) and value["replicas"] < 2
        ):
            yield Problem(
                (*path, "replicas"), "number of replicas must be >= 2: the device plugin refuses the file", ERROR
            )
        if "rename" in present:
            yield Problem(
                (*path, "rename"),
                "the device plugin does not support 'rename' yet and ignores it (only renameByDefault renames)",
                WARNING,
                True,
            )
        if "devices" in present and value.get("devices") not in ("all", None):
            yield Problem(
                (*path, "devices"),
                "the device plugin does not support choosing 'devices' yet and shares all of them",
                WARNING,
                True,
            )
    elif name == "Resource":
        for key in ("pattern", "name"):
            if key not in present:
                yield Problem(path, f"resources must have a '{key}' field set", ERROR)
    elif name == "Resources" and present:
        yield Problem(
            path,
            "customizing 'resources' is not yet supported by the device plugin; it ignores this section",
            WARNING,
            True,
        )


def _valid_resource_name(name: str) -> bool:
    full = name if name.startswith("nvidia.com/") else f"nvidia.com/{name}"
    short = full.split("/", 1)[1]
    return len(full) <= 63 and bool(_RESOURCE_NAME.fullmatch(short)) and len(short) <= 253


def _cross_checks(data: Any) -> Iterator[Problem]:
    """validateFlags: MPS does not go with the mixed MIG strategy."""
    if not isinstance(data, dict):
        return
    flags = _get(data, "flags")
    sharing = _get(data, "sharing")
    mps = _get(sharing, "mps") if isinstance(sharing, dict) else None
    if not (isinstance(flags, dict) and isinstance(mps, dict)):
        return
    resources = mps.get("resources")
    replicated = any(
        isinstance(r, dict) and isinstance(r.get("replicas"), int) and r["replicas"] > 1
        for r in (resources if isinstance(resources, list) else [])
    )
    strategy_key = next((k for k in flags if str(k).lower() == "migstrategy"), None)
    if replicated and strategy_key is not None and flags[strategy_key] == "mixed":
        flags_key = next(k for k in data if str(k).lower() == "flags")
        yield Problem(
            (flags_key, strategy_key),
            "the device plugin refuses to start: using --mig-strategy=mixed is not supported with MPS",
            ERROR,
        )


def _get(data: dict[str, Any], key: str) -> Any:
    """A field of a plainly decoded struct (encoding/json matches its key case-insensitively)."""
    for raw, value in data.items():
        if str(raw).lower() == key.lower():
            return value
    return None


def sharing_settings(data: Any) -> tuple[str, bool | None]:
    """(sharing strategy, failRequestsGreaterThanOne) of a configuration, as config.go and sharing.go settle them:
    MPS with replicas wins over time-slicing; MPS defaults failRequestsGreaterThanOne to true."""
    if not isinstance(data, dict):
        return "none", None
    sharing = _get(data, "sharing")
    if not isinstance(sharing, dict):
        return "none", None
    for key, strategy in (("mps", "mps"), ("timeSlicing", "time-slicing")):
        section = _get(sharing, key)
        if not isinstance(section, dict):
            continue
        resources = section.get("resources")
        listed = resources if isinstance(resources, list) else []
        if any(isinstance(r, dict) and isinstance(r.get("replicas"), int) and r["replicas"] > 1 for r in listed):
            fail = section.get("failRequestsGreaterThanOne")
            if not isinstance(fail, bool):
                fail = True if strategy == "mps" else None
            return strategy, fail
    return "none", None


SHARED_SUFFIX = ".shared"  # what renameByDefault appends (api/config/v1/replicas.go)


def advertised(data: Any) -> dict[str, str]:
    """The resources a configuration shares, by name, as the node advertises them: ``<name>.shared`` with
    ``renameByDefault: true``, else the name itself (a resource's own ``rename`` is ignored by the plugin).
    The section sharing_settings picks (MPS before time-slicing), its resources with replicas above 1."""
    strategy, _ = sharing_settings(data)
    if strategy == "none":
        return {}
    section = _get(_get(data, "sharing"), "mps" if strategy == "mps" else "timeSlicing")
    rename = section.get("renameByDefault") is True
    found = {}
    for resource in section.get("resources") or ():
        if (
            isinstance(resource, dict)
            and isinstance(resource.get("name"), str)
            and isinstance(resource.get("replicas"), int)
        ):
            if resource["replicas"] > 1:
                found[resource["name"]] = resource["name"] + SHARED_SUFFIX if rename else resource["name"]
    return found
