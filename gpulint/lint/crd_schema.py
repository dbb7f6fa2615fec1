"""A CustomResourceDefinition's ``openAPIV3Schema`` as a JSON schema that validates its instances.

The conversion is kubeconform's ``openapi2jsonschema.py --strict`` (github.com/yannh/kubeconform,
scripts/openapi2jsonschema.py) with the structural-schema semantics of the API server
(apiextensions-apiserver, pkg/apiserver/schema):

- an object with ``properties`` and no ``additionalProperties`` gets ``additionalProperties: false``
  (an unknown field is pruned: reported as unknown) unless it is
  ``x-kubernetes-preserve-unknown-fields``;
- ``x-kubernetes-int-or-string`` is "integer or string";
- ``x-kubernetes-embedded-resource`` objects, and the root, always have ``apiVersion``, ``kind``
  and ``metadata`` (the API server keeps and validates them whatever the schema lists);
- every value may be ``null``: a null field of a structural schema is pruned before validation
  (pkg/apiserver/schema/defaulting/prunenulls.go), so an empty ``resources:`` is not an error;
- a required field with a schema ``default``, or one the project's mutating webhook fills in
  (WEBHOOK_DEFAULTED), is not required: defaulting and admission run before validation.

Used by scripts/generate_crd_schemas.py for the bundled schemas and by gpulint.lint.schema for the
CRDs among the linted files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping

# Required fields that the project's mutating webhook fills in before the API server validates the
# schema (admission runs before validation), so a manifest without them is accepted.
WEBHOOK_DEFAULTED: dict[str, tuple[str, ...]] = {
    # jobset pkg/webhooks/jobset_webhook.go, (*jobSetWebhook).Default
    "jobset.x-k8s.io/JobSet": ("spec.failurePolicy.rules[].name", "spec.volumeClaimPolicies[].retentionPolicy"),
    # lws pkg/webhooks/leaderworkerset_webhook.go, (*LeaderWorkerSetWebhook).Default
    "leaderworkerset.x-k8s.io/LeaderWorkerSet": ("spec.networkConfig.subdomainPolicy", "spec.rolloutStrategy.type"),
}

# Where a schema node holds schemas (the rest of its values are data: default, enum, example).
SCHEMA_MAPS = ("properties", "patternProperties", "$defs")  # name -> schema
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
SCHEMA_ONES = ("items", "additionalProperties", "not")  # a schema (or a bool)
DROP_KEYS = frozenset({"description", "example", "externalDocs"})
# What the API server keeps on the root and on an embedded resource, whatever the schema lists.
OBJECT_FIELDS: dict[str, Any] = {
    "apiVersion": {"type": ["string", "null"]},
    "kind": {"type": ["string", "null"]},
    "metadata": {"type": ["object", "null"]},
}


def convert(node: Any) -> Any:
    """One node of an ``openAPIV3Schema``, converted (see the module docstring)."""
    if isinstance(node, list):
        return [convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROP_KEYS or key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: convert(sub) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list) or key in SCHEMA_ONES:
            out[key] = convert(value)
        else:  # data (default, enum, const) or a keyword's own value: kept as written
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        branches: list[Any] = [{"type": "integer"}, {"type": "string"}]
        extra = node.get("anyOf", [])
        out["anyOf"] = branches + [
            convert(b) for b in extra if isinstance(b, dict) and b.get("type") not in ("integer", "string")
        ]
    if isinstance(out.get("required"), list):  # a field with a schema default is filled in before validation
        props = node.get("properties", {}) if isinstance(node.get("properties"), dict) else {}
        out["required"] = [name for name in out["required"] if "default" not in props.get(name, {})]
    if node.get("x-kubernetes-embedded-resource") and isinstance(out.get("properties"), dict):
        out["properties"] = {**OBJECT_FIELDS, **out["properties"]}
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def drop_required(schema: dict[str, Any], dotted: str) -> None:
    *parents, name = dotted.replace("[]", ".[]").split(".")
    node: Any = schema
    for part in parents:
        node = node.get("items", {}) if part == "[]" else node.get("properties", {}).get(part, {})
    required = node.get("required", [])
    if name in required:
        required.remove(name)


def version_schema(group: str, kind: str, open_api: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of one served version of a CRD."""
    schema = convert(open_api)
    if isinstance(schema.get("properties"), dict):  # the root is an object whatever it lists
        schema["properties"] = {**schema["properties"], **OBJECT_FIELDS}
    for dotted in WEBHOOK_DEFAULTED.get(f"{group}/{kind}", ()):
        drop_required(schema, dotted)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


@dataclass(frozen=True)
class OpenApiSchema:
    """One served version's ``openAPIV3Schema`` as the CRD has it; converted only when asked for."""

    group: str
    kind: str
    open_api: dict[str, Any]

    def converted(self) -> dict[str, Any]:
        return version_schema(self.group, self.kind, self.open_api)


def crd_open_api(crd: dict[str, Any]) -> dict[str, OpenApiSchema]:
    """``group/version/Kind`` -> the unconverted schema, for each served version of an
    apiextensions.k8s.io/v1 CRD that has one. A CRD without the fields that make it one yields nothing."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return {}
    group, names, versions = spec.get("group"), spec.get("names"), spec.get("versions")
    if not isinstance(group, str) or not isinstance(names, dict) or not isinstance(versions, list):
        return {}
    kind = names.get("kind")
    if not isinstance(kind, str):
        return {}
    found: dict[str, OpenApiSchema] = {}
    for version in versions:
        if not isinstance(version, dict) or version.get("served", True) is False:
            continue
        name, schema = version.get("name"), version.get("schema")
        open_api = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if isinstance(name, str) and isinstance(open_api, dict):
            found[f"{group}/{name}/{kind}"] = OpenApiSchema(group, kind, open_api)
    return found


def crd_schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``group/version/Kind`` -> JSON schema, for each served version of a CRD that has a schema."""
    return {key: found.converted() for key, found in crd_open_api(crd).items()}


def without_docs(node: Any) -> Any:
    """A schema node without its ``description``s (most of a CRD's bytes): what :func:`convert` drops anyway."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: without_docs(sub) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [without_docs(sub) for sub in value]
        elif key in SCHEMA_ONES:
            out[key] = without_docs(value)
        else:
            out[key] = value
    return out


def crd_essentials(crd: dict[str, Any]) -> dict[str, Any]:
    """What :func:`crd_schemas` and :func:`served_versions` read of a CRD: its name, group, names and each
    version's name, served and schema (without descriptions). Status, conversion and printer columns go."""
    spec, metadata = mapping(crd.get("spec")), mapping(crd.get("metadata"))
    versions = []
    for version in spec.get("versions") or []:
        if not isinstance(version, dict):
            continue
        kept = {key: version[key] for key in ("name", "served") if key in version}
        schema = version.get("schema")
        if isinstance(schema, dict) and isinstance(schema.get("openAPIV3Schema"), dict):
            kept["schema"] = {"openAPIV3Schema": without_docs(schema["openAPIV3Schema"])}
        versions.append(kept)
    return {
        **{key: crd[key] for key in ("apiVersion", "kind") if key in crd},
        "metadata": {key: metadata[key] for key in ("name", "uid", "resourceVersion") if key in metadata},
        "spec": {
            **{key: spec[key] for key in ("group", "names", "scope") if key in spec},
            "versions": versions,
        },
    }


def served_versions(crd: dict[str, Any]) -> dict[tuple[str, str], frozenset[str]]:
    """(group, Kind) -> the versions the CRD serves (``served: false`` ones left out)."""
    spec = crd.get("spec")
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("names"), dict)
        or not isinstance(spec.get("versions"), list)
    ):
        return {}
    group, kind = spec.get("group"), spec["names"].get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return {}
    names = frozenset(
        v["name"]
        for v in spec["versions"]
        if isinstance(v, dict) and isinstance(v.get("name"), str) and v.get("served", True) is not False
    )
    return {(group, kind): names}


def union(newer: Any, older: Any) -> Any:
    """A schema that accepts the fields of both releases of a CRD (for an alpha API whose fields
    moved between releases still in use): properties merged, required only where both require,
    enums and types joined. Everything else is ``newer``'s."""
    if not isinstance(newer, dict) or not isinstance(older, dict):
        return newer
    out = dict(newer)
    for key in ("properties", "patternProperties"):
        if isinstance(newer.get(key), dict) and isinstance(older.get(key), dict):
            mine, theirs = newer[key], older[key]
            out[key] = {
                name: union(mine[name], theirs[name])
                if name in mine and name in theirs
                else mine.get(name, theirs.get(name))
                for name in {**theirs, **mine}
            }
    for key in ("items", "additionalProperties"):
        if isinstance(newer.get(key), dict) and isinstance(older.get(key), dict):
            out[key] = union(newer[key], older[key])
    if isinstance(newer.get("required"), list):
        theirs_required = older.get("required")
        both = theirs_required if isinstance(theirs_required, list) else []
        out["required"] = [name for name in newer["required"] if name in both]
    for key in ("enum", "type"):
        if isinstance(newer.get(key), list) and isinstance(older.get(key), list):
            out[key] = newer[key] + [value for value in older[key] if value not in newer[key]]
    return out
