#!/usr/bin/env python3
"""Generate gpulint's schemas/ from upstream Kubernetes JSON schemas.

Input: the PyPI wheel of ``kubernetes-validate`` (or a directory laid out like its
``kubernetes_validate/kubernetes-json-schema/``): ``v1.3x.0-local-strict/_definitions.json`` plus one
file per kind, made from each release's ``api/openapi-spec``. One wheel carries every release;
1.37.0 carries 1.25-1.37, of which gpulint ships 1.30-1.37 (SUPPORTED below).

Output, per release: ``schemas/v1.3x/<group>_<version>_<Kind>.json`` for the kinds gpulint reads
(KINDS below; the wheel has every kind of the API), ``_definitions.json`` holding the definitions
those kinds reach, once (descriptions dropped; the Pod spec alone is most of every workload kind,
so sharing them makes a release ~150 KB instead of ~600 KB), and ``index.json``. A kind file
refers to ``#/$defs/X``; gpulint.lint.schema attaches the release's definitions when it compiles
it. ``schemas/sources.json`` records the wheel, its sha256 and the directory of each release.

Two rewrites keep the schemas faithful to how the API server reads objects:
- ``oneOf`` becomes ``anyOf``: upstream writes int-or-string as
  ``oneOf: [{type: [string, null]}, {type: [integer, null]}]``, so ``null``
  (an empty ``maxSurge:``, which Kubernetes treats as unset) would match both
  branches and be rejected.
- ``$ref`` to ``/api/_definitions.json#/$defs/X`` becomes ``#/$defs/X``.

Usage: python scripts/generate_schemas.py kubernetes_validate-1.37.0-py3-none-any.whl schemas
  (pip download --no-deps kubernetes-validate==1.37.0 -d /tmp)
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

# The Kubernetes releases gpulint ships schemas for (gpulint.lint.config.SUPPORTED_KUBERNETES_VERSIONS).
SUPPORTED = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
# API group -> the kinds gpulint reads from it, in whichever versions a release serves.
KINDS: dict[str, frozenset[str]] = {
    "": frozenset({"Pod", "PodTemplate", "Node"}),
    "apps": frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    "batch": frozenset({"Job", "CronJob"}),
    "resource.k8s.io": frozenset(
        {"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule"}
    ),
    "scheduling.k8s.io": frozenset({"Workload", "PodGroup", "CompositePodGroup"}),
}
WHEEL_ROOT = "kubernetes_validate/kubernetes-json-schema/"

REF_PREFIXES = ("/api/_definitions.json#/$defs/", "#/$defs/")
DROP_KEYS = {"description", "$schema", "$id"}


def ref_prefix(value: Any) -> str | None:
    if isinstance(value, str):
        for prefix in REF_PREFIXES:
            if value.startswith(prefix):
                return prefix
    return None


def rewrite(node: Any, reached: set[str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in DROP_KEYS and not isinstance(value, dict):
                continue
            prefix = ref_prefix(value) if key == "$ref" else None
            if prefix is not None:
                name = value[len(prefix) :]
                reached.add(name)
                out[key] = "#/$defs/" + name
            elif key == "oneOf":
                out["anyOf"] = rewrite(value, reached)
            else:
                out[key] = rewrite(value, reached)
        return out
    if isinstance(node, list):
        return [rewrite(item, reached) for item in node]
    return node


def closure(root: Any, definitions: dict[str, Any], defs: dict[str, Any]) -> Any:
    """``root`` rewritten; the definitions it reaches are added to ``defs`` (shared by a release's kinds)."""
    reached: set[str] = set()
    schema = rewrite(root, reached)
    pending = list(reached)
    while pending:
        name = pending.pop()
        if name in defs:
            continue
        found: set[str] = set()
        defs[name] = rewrite(definitions[name], found)
        pending.extend(found - defs.keys())
    return schema


def kind_of(schema: dict[str, Any]) -> tuple[str, str] | None:
    props = schema.get("properties", {})
    api = props.get("apiVersion", {}).get("enum")
    kind = props.get("kind", {}).get("enum")
    if not api or not kind:
        return None
    return api[0], kind[0]


def wanted(api_version: str, kind: str) -> bool:
    group = api_version.rpartition("/")[0]
    return kind in KINDS.get(group, frozenset())


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, separators=(",", ":"), sort_keys=True))


def generate_version(files: dict[str, bytes], dest: Path) -> int:
    """``files``: one release's directory (name -> content)."""
    definitions = json.loads(files["_definitions.json"])["$defs"]
    dest.mkdir(parents=True, exist_ok=True)
    for stale in dest.glob("*.json"):
        stale.unlink()
    index: dict[str, str] = {}
    defs: dict[str, Any] = {}
    for name in sorted(files):
        if name.startswith("_") or not name.endswith(".json"):
            continue
        root = json.loads(files[name])
        identity = kind_of(root)
        if identity is None or not wanted(*identity):  # podspec-v1.json etc.: building blocks, not kinds
            continue
        api_version, kind = identity
        schema = closure(root, definitions, defs)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        filename = re.sub(r"[^A-Za-z0-9]+", "_", f"{api_version}_{kind}") + ".json"
        write_json(dest / filename, schema)
        index[f"{api_version}/{kind}"] = filename
    write_json(dest / "_definitions.json", {"$defs": defs})
    (dest / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    return len(index)


def releases(src: Path) -> dict[str, dict[str, bytes]]:
    """``v1.3x.0-local-strict`` -> its files, from the wheel or an unpacked directory."""
    found: dict[str, dict[str, bytes]] = {}
    if src.is_file():
        with zipfile.ZipFile(src) as wheel:
            for name in wheel.namelist():
                if name.startswith(WHEEL_ROOT) and name.count("/") == 3:
                    folder, _, filename = name[len(WHEEL_ROOT) :].partition("/")
                    found.setdefault(folder, {})[filename] = wheel.read(name)
        return found
    for folder in src.glob("v*-local-strict"):
        found[folder.name] = {path.name: path.read_bytes() for path in folder.glob("*.json")}
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, dest_root = Path(argv[1]), Path(argv[2])
    origin: dict[str, Any] = {
        "package": src.name,
        "sha256": hashlib.sha256(src.read_bytes()).hexdigest() if src.is_file() else "",
        "upstream": "https://github.com/willthames/kubernetes-validate (from kubernetes/kubernetes api/openapi-spec)",
        "releases": {},
    }
    for folder, files in sorted(releases(src).items()):
        match = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local-strict", folder)
        if not match or f"{match.group(1)}.{match.group(2)}" not in SUPPORTED:
            continue
        version = f"v{match.group(1)}.{match.group(2)}"
        count = generate_version(files, dest_root / version)
        origin["releases"][version] = WHEEL_ROOT + folder
        print(f"{version}: {count} kinds")
    (dest_root / "sources.json").write_text(json.dumps(origin, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
