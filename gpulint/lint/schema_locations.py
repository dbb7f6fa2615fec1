"""``--schema-location``: folders of JSON schemas laid out as kubeconform reads them.

kubeconform (github.com/yannh/kubeconform, pkg/registry/registry.go ``schemaPath``) takes a location
that ends in ``.json`` as a Go template over these variables, and any other location as a folder in
its own layout. gpulint reads local folders only (it never downloads), and for a folder tries, in
order, the layouts kubeconform users keep their custom-resource schemas in:

- ``{kind}_{version}.json``: what kubeconform's ``openapi2jsonschema.py`` writes by default
  (``FILENAME_FORMAT={kind}_{version}``);
- ``{group}/{kind}_{version}.json``: the ``{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json``
  layout kubeconform's README documents for CRD catalogs;
- ``v1.37.0-standalone-strict/{kind}-{group}-{version}.json`` (and ``-standalone``): kubeconform's
  default layout (kubernetes-json-schema).

As kubeconform does, ``ResourceKind`` is the kind in lower case, ``Group`` the apiVersion's group
(``v1`` for the core group), ``ResourceAPIVersion`` its version and ``KindSuffix``
``-{first label of the group}-{version}``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

VARIABLES = ("NormalizedKubernetesVersion", "StrictSuffix", "ResourceKind", "ResourceAPIVersion", "Group", "KindSuffix")
_VARIABLE = re.compile(r"\{\{-?\s*\.(\w+)\s*-?\}\}")
FOLDER_LAYOUTS = (
    "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json",
    "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json",
    "{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json",
)
MAX_SCHEMA_BYTES = 64 * 1024 * 1024  # a schema file bigger than this is not a schema


class SchemaLocationError(ValueError):
    """A location that cannot be used, or a schema file that is not JSON: a usage error (exit 2)."""


def parse_location(value: str) -> str:
    """A location as given (a folder, or a template ending in .json), checked; raises SchemaLocationError."""
    if value.startswith(("http://", "https://")):
        raise SchemaLocationError(
            f"{value}: gpulint reads schema folders offline; download the schemas and give their folder"
        )
    if not value.endswith(".json"):
        if not Path(value).is_dir():
            raise SchemaLocationError(f"{value}: no such folder")
        return value
    unknown = sorted({name for name in _VARIABLE.findall(value) if name not in VARIABLES})
    if unknown:
        raise SchemaLocationError(
            f"{value}: unknown template variable .{unknown[0]} (kubeconform's are .{', .'.join(VARIABLES)})"
        )
    if "{{" in _VARIABLE.sub("", value):
        raise SchemaLocationError(f"{value}: only {{{{ .Variable }}}} substitutions are supported in a template")
    root = _static_folder(value)
    if not root.is_dir():
        raise SchemaLocationError(f"{value}: no such folder {root}")
    return value


def templates(location: str) -> tuple[str, ...]:
    if location.endswith(".json"):
        return (location,)
    return tuple(f"{location.rstrip('/')}/{layout}" for layout in FOLDER_LAYOUTS)


def render(template: str, api_version: str, kind: str, kubernetes_version: str, strict: bool) -> str:
    group, _, version = api_version.rpartition("/")
    group = group or version  # kubeconform: the first part of "v1" is "v1"
    suffix = f"-{group.split('.')[0].lower()}" + (f"-{version.lower()}" if "/" in api_version else "")
    values = {
        "NormalizedKubernetesVersion": f"v{kubernetes_version}.0",
        "StrictSuffix": "-strict" if strict else "",
        "ResourceKind": kind.lower(),
        "ResourceAPIVersion": version,
        "Group": group,
        "KindSuffix": suffix,
    }
    return _VARIABLE.sub(lambda match: values[match.group(1)], template)


def find(locations: tuple[str, ...], api_version: str, kind: str, kubernetes_version: str) -> Path | None:
    """The first schema file of any location for this apiVersion and kind (strict before lax)."""
    if not api_version or not kind or "/" in kind or ".." in api_version:
        return None
    for location in locations:
        for template in templates(location):
            for strict in (True, False) if "StrictSuffix" in template else (True,):
                path = Path(render(template, api_version, kind, kubernetes_version, strict))
                if path.is_file():
                    return path
    return None


def load(path: Path) -> dict[str, Any]:
    """A schema file's content; raises SchemaLocationError with file:line:col for what is not a JSON object."""
    try:
        if path.stat().st_size > MAX_SCHEMA_BYTES:
            raise SchemaLocationError(f"{path}: larger than {MAX_SCHEMA_BYTES // (1024 * 1024)} MB, not a schema")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaLocationError(f"{path}: cannot read: {exc}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaLocationError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise SchemaLocationError(f"{path}:1:1: not a JSON schema: the document is not an object")
    return value


def check_files(locations: tuple[str, ...], kubernetes_version: str) -> None:
    """Read every schema file the locations could serve, once, so that a bad one is a usage error at
    the start and not a surprise in the middle of a run. Raises SchemaLocationError."""
    for location in locations:
        for path in sorted(_candidate_files(location, kubernetes_version)):
            load(path)


def _candidate_files(location: str, kubernetes_version: str) -> set[Path]:
    if location.endswith(".json"):
        root = _static_folder(location)
        depth = location.count("/") - location.split("{{", 1)[0].count("/") + 1
        return {path for path in root.rglob("*.json") if len(path.relative_to(root).parts) <= depth}
    root = Path(location)
    found = set(root.glob("*.json"))
    for folder in root.iterdir():
        if not folder.is_dir():
            continue
        standalone = folder.name.endswith(("-standalone", "-standalone-strict"))
        if not standalone or folder.name.startswith(f"v{kubernetes_version}.0-"):  # other releases are not read
            found.update(folder.glob("*.json"))
    return found


def _static_folder(template: str) -> Path:
    """The folder a template's paths all lie in: the part before its first variable."""
    head = template.split("{{", 1)[0]
    return Path(head).parent if not head.endswith("/") else Path(head)
