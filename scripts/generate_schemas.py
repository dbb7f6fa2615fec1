#!/usr/bin/env python3
"""Generate gpulint's schemas/ from upstream Kubernetes JSON schemas.

Input: a directory laid out like the PyPI package ``kubernetes-validate``
(``v1.37.0-local-strict/_definitions.json`` plus one file per kind).
Output: ``schemas/v1.37/<group>_<version>_<Kind>.json``, each self-contained
(only the definitions it reaches, descriptions dropped), plus ``index.json``.

Two rewrites keep the schemas faithful to how the API server reads objects:
- ``oneOf`` becomes ``anyOf``: upstream writes int-or-string as
  ``oneOf: [{type: [string, null]}, {type: [integer, null]}]``, so ``null``
  (an empty ``maxSurge:``, which Kubernetes treats as unset) would match both
  branches and be rejected.
- ``$ref`` to ``/api/_definitions.json#/$defs/X`` becomes ``#/$defs/X``.

Usage: python scripts/generate_schemas.py ../shared/k8s-openapi schemas
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

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


def closure(root: Any, definitions: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    reached: set[str] = set()
    schema = rewrite(root, reached)
    defs: dict[str, Any] = {}
    pending = list(reached)
    while pending:
        name = pending.pop()
        if name in defs:
            continue
        found: set[str] = set()
        defs[name] = rewrite(definitions[name], found)
        pending.extend(found - defs.keys())
    return schema, defs


def kind_of(schema: dict[str, Any]) -> tuple[str, str] | None:
    props = schema.get("properties", {})
    api = props.get("apiVersion", {}).get("enum")
    kind = props.get("kind", {}).get("enum")
    if not api or not kind:
        return None
    return api[0], kind[0]


def generate_version(src: Path, dest: Path) -> int:
    definitions = json.loads((src / "_definitions.json").read_text())["$defs"]
    dest.mkdir(parents=True, exist_ok=True)
    index: dict[str, str] = {}
    for path in sorted(src.glob("*.json")):
        if path.name.startswith("_"):
            continue
        root = json.loads(path.read_text())
        identity = kind_of(root)
        if identity is None:  # podspec-v1.json etc.: building blocks, not kinds
            continue
        api_version, kind = identity
        schema, defs = closure(root, definitions)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$defs"] = defs
        filename = re.sub(r"[^A-Za-z0-9]+", "_", f"{api_version}_{kind}") + ".json"
        (dest / filename).write_text(json.dumps(schema, separators=(",", ":"), sort_keys=True))
        index[f"{api_version}/{kind}"] = filename
    (dest / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    return len(index)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src_root, dest_root = Path(argv[1]), Path(argv[2])
    for src in sorted(src_root.glob("v*-local-strict")):
        match = re.match(r"v(\d+)\.(\d+)\.\d+-local-strict", src.name)
        if not match:
            continue
        version = f"v{match.group(1)}.{match.group(2)}"
        count = generate_version(src, dest_root / version)
        print(f"{version}: {count} kinds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
