"""Kubernetes JSON schemas (generated into schemas/ by scripts/generate_schemas.py).

Validators are compiled lazily, once per (Kubernetes version, apiVersion, kind),
with jsonschema-rs: a compiled validator ~80x faster than the pure-Python one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpulint.lint.data import data_dir
from gpulint.lint.findings import Path

if TYPE_CHECKING:
    from gpulint.lint.crd_schema import OpenApiSchema

# jsonschema-rs builds every error of an object before yielding the first, superlinearly and holding
# the GIL (a million invalid values: ~40 s). Past this many values only the first error is reported.
MAX_DETAILED_VALUES = 5_000
# jsonschema-rs refuses values nested deeper than its recursion limit; objects nesting deeper are
# validated down to this depth (no Kubernetes schema comes near it).
VALIDATED_DEPTH = 64


@dataclass(frozen=True)
class SchemaError:
    path: Path  # the offending field (for an unknown field: the field itself)
    message: str
    unknown_field: bool  # strict field validation: a warning, as the API server reports it
    # the schema's rule: "Type" (the API server's JSON decoder refuses the value), "Null" (a null it reads as
    # the zero value), "Required", "Enum", ...
    rule: str = ""


@dataclass(frozen=True)
class CustomSchema:
    """A schema from outside gpulint's bundle: a CustomResourceDefinition among the linted files or
    in the inventory. Converted when a kind it defines is first validated: a cluster's hundreds of
    CRDs are not converted again at each inventory rebuild (the webhook's, once a second)."""

    source: OpenApiSchema
    origin: str  # for messages: "CRD rayjobs.ray.io in crds/ray.yaml"


@dataclass
class SchemaStore:
    kubernetes_version: str
    locations: tuple[str, ...] = ()  # --schema-location folders and templates (gpulint.lint.schema_locations)
    # group/version/Kind -> schema that overrides the bundled one (a linted or inventory CRD)
    custom: dict[str, CustomSchema] = field(default_factory=dict)
    # group/version/Kind -> the other linted copies of its CRD that differ from the one in `custom`
    rivals: dict[str, tuple[CustomSchema, ...]] = field(default_factory=dict)
    _custom_validators: dict[str, Any] = field(default_factory=dict)
    # (group, Kind) -> (versions served by the CRDs that define it, their names): linted and inventory CRDs
    crd_served: dict[tuple[str, str], tuple[frozenset[str], str]] = field(default_factory=dict)
    _located: dict[str, Any] = field(default_factory=dict)  # key -> schema file of a location (None: none)
    _index: dict[str, str] | None = None
    _validators: dict[str, Any] = field(default_factory=dict)
    _shared: dict[str, dict[str, Any]] = field(default_factory=dict)  # folder -> its _definitions.json

    _origins: dict[str, str] | None = None

    def _load_index(self) -> dict[str, str]:
        """apiVersion/kind -> schema file under schemas/: the Kubernetes release's own kinds, then the
        custom resources gpulint reads (schemas/crds/, the same for every Kubernetes version)."""
        if self._index is None:
            index: dict[str, str] = {}
            for folder in ("crds", f"v{self.kubernetes_version}"):  # built-in kinds win a clash
                index_file = data_dir("schemas") / folder / "index.json"
                if index_file.is_file():
                    index.update({key: f"{folder}/{name}" for key, name in json.loads(index_file.read_text()).items()})
            self._index = index
        return self._index

    def with_crds(
        self, crds: Iterable[tuple[dict[str, Any], str]], cluster: Iterable[tuple[dict[str, Any], str]] = ()
    ) -> SchemaStore:
        """This store with the served versions of these CRDs (data, file) validating their kinds, the
        first CRD of a kind winning; the bundled validators stay shared. ``crds`` are the linted files':
        a repository may hold several copies of one CRD (a generated base and an older install bundle,
        two releases), of which a cluster has one, so the others are its rivals and a custom resource is
        refused only where every copy refuses it. A copy that keeps its spec's fields unknown (a "minimal" CRD
        cut from the full one) judges no field: it is no rival, and gives way to a full copy. ``cluster`` (the inventory's) defines only the kinds no
        linted CRD defines: a cluster has one copy."""
        from gpulint.lint.crd_schema import crd_open_api, served_versions

        custom: dict[str, CustomSchema] = {}
        rivals: dict[str, tuple[CustomSchema, ...]] = {}
        served: dict[tuple[str, str], tuple[frozenset[str], str]] = {}
        sources = [*((data, file, True) for data, file in crds), *((data, file, False) for data, file in cluster)]
        for data, file, linted in sources:
            meta = data.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            for key, source in crd_open_api(data).items():
                schema = CustomSchema(source, f"CRD {name or key} in {file}")
                first = custom.get(key)
                if first is None or (linted and not judges_fields(first.source) and judges_fields(source)):
                    custom[key] = schema  # a copy without field schemas (a "minimal" CRD) gives way to a full one
                    continue
                known = (first, *rivals.get(key, ()))
                if linted and judges_fields(source) and all(c.source.open_api != source.open_api for c in known):
                    rivals[key] = (*rivals.get(key, ()), schema)
            for kind_key, versions in served_versions(data).items():
                before, names = served.get(kind_key, (frozenset(), ""))
                served[kind_key] = (before | versions, f"{names}, {name}" if names else str(name))
        if not custom and not served:
            return self
        return replace(
            self,
            custom={**self.custom, **custom},
            rivals={**{k: v for k, v in self.rivals.items() if k not in custom}, **rivals},
            _custom_validators={},
            crd_served={**self.crd_served, **served},
        )

    def origin(self, api_version: str, kind: str) -> str:
        """Where the schema of a kind comes from, for messages: a Kubernetes release or a CRD."""
        found = self.custom.get(f"{api_version}/{kind}")
        if found is not None:
            return found.origin
        located = self._location_file(api_version, kind)
        if located is not None:
            return f"schema {located}"
        if self._origins is None:
            sources = data_dir("schemas") / "crds" / "sources.json"
            self._origins = json.loads(sources.read_text()) if sources.is_file() else {}
        key = f"{api_version}/{kind}"
        if key in self._origins and not self._load_index()[key].startswith("v"):
            return "CRD of " + " ".join(self._origins[key].split()[:2])  # "owner/repo tag path ..."
        return f"Kubernetes {self.kubernetes_version}"

    def _definitions(self, folder: str) -> dict[str, Any]:
        if folder not in self._shared:
            path = data_dir("schemas") / folder / "_definitions.json"
            self._shared[folder] = json.loads(path.read_text())["$defs"]
        return self._shared[folder]

    def has_schema(self, api_version: str, kind: str) -> bool:
        key = f"{api_version}/{kind}"
        return key in self.custom or key in self._load_index() or self._location_file(api_version, kind) is not None

    def _location_file(self, api_version: str, kind: str) -> Any | None:
        """The --schema-location file of a kind that is not one of the release's own kinds (a location
        overrides the bundled CRD schemas, never the Kubernetes release's: ``job_v1.json`` of some
        CRD must not validate batch/v1 Jobs)."""
        if not self.locations or self._load_index().get(f"{api_version}/{kind}", "").startswith("v"):
            return None
        key = f"{api_version}/{kind}"
        if key not in self._located:
            from gpulint.lint.schema_locations import find

            self._located[key] = find(self.locations, api_version, kind, self.kubernetes_version)
        return self._located[key]

    def first_release(self, api_version: str, kind: str) -> str | None:
        """The oldest Kubernetes release gpulint has schemas for that serves ``api_version`` ``kind``."""
        key = f"{api_version}/{kind}"
        releases = sorted(
            (tuple(int(part) for part in folder.name[1:].split(".")), folder)
            for folder in data_dir("schemas").glob("v*.*")
            if (folder / "index.json").is_file()
        )
        for numbers, folder in releases:
            if key in json.loads((folder / "index.json").read_text()):
                return ".".join(map(str, numbers))
        return None

    def known_kinds(self) -> list[str]:
        return sorted({*self._load_index(), *self.custom})

    def validator(self, api_version: str, kind: str) -> Any | None:
        key = f"{api_version}/{kind}"
        if key in self.custom:
            return self._custom_validator(key)
        located = self._location_file(api_version, kind)
        if located is not None:
            return self._located_validator(key, located)
        if key in self._validators:
            return self._validators[key]
        filename = self._load_index().get(key)
        validator = None
        if filename is not None:
            import jsonschema_rs  # imported on first use: a file without known kinds never pays for it

            schema = json.loads((data_dir("schemas") / filename).read_text())
            if filename.startswith("v"):  # a release's kind: its definitions are shared (_definitions.json)
                schema["$defs"] = self._definitions(filename.partition("/")[0])
            validator = jsonschema_rs.validator_for(schema)
        self._validators[key] = validator
        return validator

    def _custom_validator(self, key: str, rival: int | None = None) -> Any | None:
        """The validator of a kind's CRD, or of its rival copy number ``rival``."""
        cache_key = key if rival is None else f"{key}#{rival}"
        if cache_key not in self._custom_validators:
            import jsonschema_rs

            schema = self.custom[key] if rival is None else self.rivals[key][rival]
            try:
                self._custom_validators[cache_key] = jsonschema_rs.validator_for(schema.source.converted())
            except (ValueError, jsonschema_rs.ValidationError):  # a pattern or keyword the validator cannot compile
                self._custom_validators[cache_key] = None
        return self._custom_validators[cache_key]

    def _located_validator(self, key: str, path: Any) -> Any | None:
        cache_key = f"location:{key}"
        if cache_key not in self._validators:
            import jsonschema_rs

            from gpulint.lint.schema_locations import load

            try:
                self._validators[cache_key] = jsonschema_rs.validator_for(load(path))
            except ValueError:  # checked at the start (check_files); a file changed since, or uncompilable
                self._validators[cache_key] = None
        return self._validators[cache_key]

    def validate(self, data: dict[str, Any]) -> list[SchemaError]:
        api_version, kind = data.get("apiVersion"), data.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return []
        validator = self.validator(api_version, kind)
        if validator is None:
            return []
        errors = self._validated(validator, data)
        key = f"{api_version}/{kind}"
        for index in range(len(self.rivals.get(key, ()))):
            if not errors:
                break
            # an error stands only where every copy of the CRD makes it: the cluster may have any of them (a
            # copy the validator cannot compile judges nothing, so it excuses everything)
            rival = self._custom_validator(key, index)
            refused = {(e.path, e.unknown_field) for e in self._validated(rival, data)} if rival is not None else set()
            errors = [error for error in errors if (error.path, error.unknown_field) in refused]
        return errors

    def _validated(self, validator: Any, data: dict[str, Any]) -> list[SchemaError]:
        try:
            return self._check(validator, data)
        except ValueError as exc:  # jsonschema-rs: "Recursion limit reached" on a value nested very deep
            if "Recursion limit" not in str(exc):
                raise
            # No schema nests that deep (the deepest built-in ones are ~30 levels): what lies below
            # VALIDATED_DEPTH is free-form data, so the errors above it are the object's errors.
            return self._check(validator, _truncated(data, VALIDATED_DEPTH))

    def _check(self, validator: Any, data: dict[str, Any]) -> list[SchemaError]:
        if validator.is_valid(data):  # the common case, and fast whatever the size
            return []
        if _more_values_than(data, MAX_DETAILED_VALUES):
            import jsonschema_rs

            try:
                validator.validate(data)  # stops at the first error
            except jsonschema_rs.ValidationError as first:
                return self._errors([first])
            return []
        return self._errors(validator.iter_errors(data))

    @staticmethod
    def _errors(found: Any) -> list[SchemaError]:
        errors: list[SchemaError] = []
        for error in found:
            path = tuple(error.instance_path)
            kind_name = type(error.kind).__name__
            if kind_name == "AdditionalProperties":
                for name in error.kind.unexpected:
                    errors.append(SchemaError((*path, name), "", True))
            elif error.instance is None and len(path) >= 2 and path[-2] in _QUANTITY_MAPS:
                continue  # apimachinery's Quantity.UnmarshalJSON reads null as 0: the API server takes it
            elif kind_name == "Type" and _fill_in(error):
                continue  # `containerPort: PORT`: a value the reader is told to fill in, not a value yet
            else:
                # null where a type is required: Go's JSON decoder leaves the zero value, no error of its own
                rule = "Null" if kind_name == "Type" and error.instance is None else kind_name
                errors.append(SchemaError(path, _message(error, kind_name), False, rule))
        return errors


def judges_fields(source: OpenApiSchema) -> bool:
    """Whether a CRD version's schema says which fields its spec has: not when the spec keeps unknown fields
    and lists none (OME's config/crd/minimal, which hack/minimal-crdgen.sh cuts from the full CRDs)."""
    properties = source.open_api.get("properties")
    spec = properties.get("spec") if isinstance(properties, dict) else None
    if not isinstance(spec, dict) or not spec.get("x-kubernetes-preserve-unknown-fields"):
        return True
    return bool(spec.get("properties"))


# A word in capitals where a number or a boolean goes (`containerPort: PORT`, `replicas: NUM_NODES`): the
# docs' "replace PORT with your port" convention. No number or boolean is spelt so; a typo in a string field
# (`protocol: TCPP`) is no type error and stays reported.
_FILL_IN = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_NOT_TEXT = frozenset({"integer", "number", "boolean"})


def _fill_in(error: Any) -> bool:
    expected = {str(t) for t in error.kind.types}
    return (
        isinstance(error.instance, str)
        and len(error.instance) >= 2
        and _FILL_IN.fullmatch(error.instance) is not None
        and bool(expected & _NOT_TEXT)
        and not expected & {"string", "object", "array"}
    )


# Maps of resource.Quantity values (ResourceRequirements, a ResourceQuota's hard, a node's capacity).
_QUANTITY_MAPS = frozenset({"requests", "limits", "hard", "capacity", "allocatable"})


def _truncated(value: Any, depth: int) -> Any:
    """``value`` with every mapping or list nested below ``depth`` levels emptied."""
    if isinstance(value, dict):
        return {k: _truncated(v, depth - 1) for k, v in value.items()} if depth > 0 else {}
    if isinstance(value, list):
        return [_truncated(v, depth - 1) for v in value] if depth > 0 else []
    return value


def _more_values_than(data: Any, limit: int) -> bool:
    stack, seen = [data], 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _message(error: Any, kind_name: str) -> str:
    if kind_name == "Required":
        return f'Required value: "{error.kind.property}" is required'
    if kind_name == "AnyOf":  # int-or-string and quantities: say what was expected
        expected = sorted({t for branch in error.kind.context for e in branch for t in _types(e)})
        if expected:
            return f"Invalid value: {_short(error.instance)}: must be {' or '.join(expected)}"
    return f"Invalid value: {error.message}"


def _types(error: Any) -> list[str]:
    if type(error.kind).__name__ == "Type":
        return [str(t) for t in error.kind.types if str(t) != "null"]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
