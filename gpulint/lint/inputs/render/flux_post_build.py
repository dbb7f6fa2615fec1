"""What the one Flux Kustomization that builds an overlay's folder adds to the build, as kustomize-controller adds it.

- ``spec.targetNamespace`` becomes the generated kustomization's ``namespace`` (fluxcd/pkg kustomize v1.39.0,
  kustomize_generator.go ``GenerateManifest``: ``kus.Namespace = tg``), so kustomize sets it on every namespaced
  object of the build.
- ``spec.commonMetadata``: its labels and annotations on every object's own metadata (fluxcd/pkg ssa utils.go
  ``SetCommonMetadata``, when kustomize-controller applies them).
- ``spec.postBuild``: after the build, each object's YAML goes through envsubst (kustomize_varsub.go
  ``SubstituteVariables``): the variables of each ``substituteFrom`` ConfigMap or Secret in order (a later one wins),
  then ``substitute`` (which wins over them all); an object labelled or annotated
  ``kustomize.toolkit.fluxcd.io/substitute: disabled`` is left as written.

Read from the repository's files only, never a cluster: a ConfigMap named in ``substituteFrom`` counts when exactly
one ConfigMap of that name (in the Kustomization's namespace, or with none) is in the repository, or in the
``clusters/<name>`` folder of the cluster the Kustomization deploys to, with no ``${`` in the value. A Secret (its
values are encrypted or absent), a ConfigMap not in the files or in several, may set any variable: the variables of the sources before it become unknown, as do the defaults (``${VAR:=default}``) and every
variable no known source sets. An unknown variable is left as written: the field stays a placeholder, not checked,
never a guess. Without ``postBuild`` nothing is substituted (kustomize-controller substitutes only when it is set).
When several Flux Kustomizations build the folder and differ in these fields, none is applied.

A Flux Kustomization is itself an object of its parent's build (the Kustomization whose ``spec.path`` holds its file),
so the parent's post-build substitution runs over its YAML too: ``CLUSTER: ${CLUSTER}`` in an app's
``postBuild.substitute`` (often added by the parent's own ``spec.patches``) reaches the app with the parent's value,
``$${VAR}`` as ``${VAR}``, and ``spec.path: ./apps/${CLUSTER}/x`` names one folder. Nothing else passes down: each
object's YAML is substituted with its own Kustomization's variables only (kustomize_varsub.go
``SubstituteVariables``, run per resource of the build). Parents that differ in what they set substitute nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.embedded import NotParsed, load_embedded
from gpulint.kube.fields import dig
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.inputs.render.flux_builds import (
    FluxObjects,
    cluster_folder,
    covers,
    flux_kustomizations,
    flux_objects,
    parent_folders,
    parents_patches,
)

_DISABLED = "kustomize.toolkit.fluxcd.io/substitute"
# kustomize_varsub.go varsubRegex: a name outside it makes Flux refuse the Kustomization
_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
_DOCUMENT_BREAK = re.compile(rb"^---[ \t]*$\n?", re.MULTILINE)


@dataclass(frozen=True)
class Variable:
    value: str
    source: str  # where it is set: "ConfigMap cluster-settings (FILE:LINE)", "spec.postBuild.substitute (FILE:LINE)"


@dataclass(frozen=True)
class FluxBuild:
    """The fields of the Flux Kustomization at ``at`` (``FILE:LINE`` of its ``spec.path``) that change the build."""

    at: str
    target_namespace: str | None
    post_build: bool  # spec.postBuild is set: envsubst runs
    variables: Mapping[str, Variable] = field(default_factory=dict)
    # every variable is known: no Secret, every ConfigMap in the files; an unset variable then takes its default
    complete: bool = True
    # spec.commonMetadata: labels and annotations set on every object's own metadata (never a template's or a
    # selector's), a key already there overridden (fluxcd/pkg ssa utils.go SetCommonMetadata, at apply time)
    common_metadata: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})


def flux_build(
    overlay: str, repository: str, objects: FluxObjects | None = None, *, reading: frozenset[str] = frozenset()
) -> FluxBuild | None:
    """The fields the Flux Kustomizations whose ``spec.path`` is the overlay's folder add; None when none builds it,
    or when those that do differ in them (two clusters' Kustomizations with their own variables). Once per folder
    and FluxObjects (overlays render in threads: only finished builds are kept); a folder met again while its own
    build is read (``reading``: Kustomizations that build each other) is None."""
    objects = objects if objects is not None else flux_objects(os.path.realpath(repository))
    key = os.path.realpath(overlay)
    if key in reading:
        return None
    if key not in objects.builds:
        objects.builds[key] = _flux_build(overlay, repository, objects, reading | {key})
    found: FluxBuild | None = objects.builds[key]
    return found


def _flux_build(overlay: str, repository: str, objects: FluxObjects, reading: frozenset[str]) -> FluxBuild | None:
    relative = os.path.relpath(os.path.realpath(overlay), os.path.realpath(repository)).replace(os.sep, "/")
    found = []
    for data, at in flux_kustomizations(overlay, repository, objects):
        file = os.path.join(repository, at.rsplit(":", 1)[0])
        patched = _patched(data, file, repository, objects)
        if patched is None:
            return None  # a parent's patch changes it in a way not read
        patched = _substituted_by_parent(patched, file, repository, objects, reading)
        if not covers(dig(patched, "spec", "path"), relative):
            continue  # ./apps/${CLUSTER}/x, its parent's CLUSTER another cluster's folder
        found.append((patched, at))
    if not found:
        return None
    fields = ("targetNamespace", "postBuild", "commonMetadata")
    if len({repr([dig(data, "spec", name) for name in fields]) for data, _ in found}) != 1:
        return None
    data, at = found[0]
    namespace = dig(data, "spec", "targetNamespace")
    post_build = dig(data, "spec", "postBuild")
    target = namespace if isinstance(namespace, str) and namespace else None
    common = (
        _strings(dig(data, "spec", "commonMetadata", "labels")),
        _strings(dig(data, "spec", "commonMetadata", "annotations")),
    )
    if not isinstance(post_build, dict):
        return FluxBuild(at, target, False, common_metadata=common)
    variables: dict[str, Variable] = {}
    complete = True
    sources = post_build.get("substituteFrom")
    for source in sources if isinstance(sources, list) else []:
        found_values = (
            _config_map(source, _namespace(data), objects, (at.rsplit(":", 1)[0], os.path.realpath(repository)))
            if isinstance(source, dict)
            else None
        )
        if found_values is None:  # a Secret, or a ConfigMap not known: it may set any variable
            variables, complete = {}, False
            continue
        values, shown = found_values
        for name, value in values.items():
            if value is None:
                variables.pop(name, None)
            else:
                variables[name] = Variable(value, shown)
    inline = post_build.get("substitute")
    for name, value in (inline if isinstance(inline, dict) else {}).items():
        if not isinstance(value, str):
            return FluxBuild(at, target, False, common_metadata=common)  # Flux refuses a substitute no string map
        variables[str(name)] = Variable(value.replace("\n", ""), f"spec.postBuild.substitute ({at.rsplit(':', 1)[0]})")
    if any(_NAME.fullmatch(name) is None for name in variables):
        return FluxBuild(at, target, False)  # Flux refuses the Kustomization: nothing it builds is known
    return FluxBuild(at, target, True, variables, complete, common)


def _substituted_by_parent(
    data: dict[str, Any], file: str, repository: str, objects: FluxObjects, reading: frozenset[str]
) -> dict[str, Any]:
    """The Flux Kustomization ``data`` (of ``file``) after its parents' post-build substitution: each Kustomization
    whose ``spec.path`` is a folder above the file builds it; they must agree on what they fill in."""
    if _disabled_object(data):
        return data
    folders = parent_folders(file, repository, objects)
    builds = [flux_build(folder, repository, objects, reading=reading) for folder in folders]
    if not builds or any(repr(other) != repr(builds[0]) for other in builds[1:]):
        return data
    build = builds[0]
    if build is None or not build.post_build or not build.variables and build.complete:
        return data
    substituted: dict[str, Any] = _substitute_strings(data, build)
    return substituted


def _substitute_strings(value: Any, build: FluxBuild) -> Any:
    if isinstance(value, str):
        return _envsubst(value, build, {}) if "$" in value else value
    if isinstance(value, dict):
        return {_substitute_strings(key, build): _substitute_strings(item, build) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute_strings(item, build) for item in value]
    return value


def _disabled_object(data: dict[str, Any]) -> bool:
    return any(dig(data, "metadata", part, _DISABLED) == "disabled" for part in ("labels", "annotations"))


def _strings(values: object) -> dict[str, str]:
    """A commonMetadata map as Flux applies it: string keys and values only (its API types are map[string]string);
    one with a variable is left out (Flux sets them after substitution, as written)."""
    if not isinstance(values, dict):
        return {}
    return {
        key: value
        for key, value in values.items()
        if isinstance(key, str) and isinstance(value, str) and "$" not in key + value
    }


def _patched(data: dict[str, Any], file: str, repository: str, objects: FluxObjects) -> dict[str, Any] | None:
    """The Flux Kustomization as the parent Kustomization that applies its file patches it (kustomize's strategic
    merge of a custom resource: maps merged, lists and values replaced, null removes); None when a patch that
    targets it is one not read (a JSON 6902 list, a string that is no object) and names the fields read here."""
    for patch, target in parents_patches(file, repository, objects):
        if not _targets(target, data):
            continue
        parsed = load_embedded(patch) if isinstance(patch, str) else NotParsed("no patch")
        if isinstance(parsed, NotParsed) or not isinstance(parsed, dict):
            if isinstance(patch, str) and ("postBuild" in patch or "targetNamespace" in patch):
                return None
            continue
        if parsed.get("kind") not in (None, "Kustomization"):
            continue
        data = _merge(data, {key: value for key, value in parsed.items() if key == "spec"})
    return data


def _merge(base: Any, patch: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return patch
    merged = dict(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge(merged.get(key), value)
    return merged


def _targets(target: dict[str, Any], data: dict[str, Any]) -> bool:
    """Whether a kustomize patch ``target`` selects the Flux Kustomization ``data`` (group, version, kind, name and
    namespace as regular expressions, label and annotation selectors; api/types/selector.go)."""
    api = str(data.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    wanted = {
        "group": group,
        "version": version,
        "kind": "Kustomization",
        "name": dig(data, "metadata", "name"),
        "namespace": dig(data, "metadata", "namespace"),
    }
    for key, actual in wanted.items():
        pattern = target.get(key)
        if pattern in (None, ""):
            continue
        if not isinstance(pattern, str) or not isinstance(actual, str):
            return False
        try:
            if re.fullmatch(pattern, actual) is None:
                return False
        except re.error:
            return False
    for key, field_name in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        selector = target.get(key)
        if selector in (None, ""):
            continue
        values = dig(data, "metadata", field_name)
        if not isinstance(selector, str) or not _selects(selector, values if isinstance(values, dict) else {}):
            return False
    return True


_REQUIREMENT = re.compile(
    r"\s*(?:!\s*(?P<absent>[\w./-]+)|(?P<key>[\w./-]+)"
    r"(?:\s*(?P<op>==|!=|=)\s*(?P<value>[\w./-]*)|\s+(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?)\s*(?:,|$)"
)


def _selects(selector: str, labels: dict[str, Any]) -> bool:
    """A label selector in its string form (``a=b,c notin (d),!e``); False for one not read."""
    position = 0
    while position < len(selector):
        found = _REQUIREMENT.match(selector, position)
        if found is None or found.end() == position:
            return False
        position = found.end()
        if found["absent"]:
            if found["absent"] in labels:
                return False
            continue
        key, value = found["key"], labels.get(found["key"])
        shown = None if value is None else str(value)
        if found["op"] in ("=", "=="):
            ok = shown == found["value"]
        elif found["op"] == "!=":
            ok = shown != found["value"]
        elif found["set"]:
            members = {item.strip() for item in found["values"].split(",")}
            ok = shown in members if found["set"] == "in" else shown not in members
        else:
            ok = key in labels
        if not ok:
            return False
    return True


def _namespace(data: dict[str, Any]) -> str | None:
    namespace = dig(data, "metadata", "namespace")
    return namespace if isinstance(namespace, str) and namespace else None


def _config_map(
    source: dict[str, Any], namespace: str | None, objects: FluxObjects, where: tuple[str, str]
) -> tuple[dict[str, str | None], str] | None:
    """The data of the one ConfigMap of the repository ``source`` names (a value with ``${`` in it as None: another
    Kustomization may fill it in), and how it is shown; None for a Secret or a ConfigMap not found exactly once, or
    once in the ``clusters/<name>`` folder of the cluster the Kustomization deploys to (``where``: its file relative
    to the repository, and the repository's real path), as ``flux bootstrap --path=clusters/<name>`` lays one out
    per cluster, each applying its own."""
    name = source.get("name")
    if source.get("kind") != "ConfigMap" or not isinstance(name, str) or not name:
        return None
    found = [
        (data, at)
        for data, at in objects.config_maps
        if dig(data, "metadata", "name") == name and _namespace(data) in (None, namespace)
    ]
    cluster = cluster_folder(*where, objects) if len(found) > 1 else None
    if cluster is not None:
        found = [(data, at) for data, at in found if at.startswith(cluster + "/")]
    if len(found) != 1:
        return None
    data, at = found[0]
    values = data.get("data")
    if not isinstance(values, dict):
        return {}, f"ConfigMap {name} ({at})"
    known: dict[str, str | None] = {}
    for key, value in values.items():
        text = value if isinstance(value, str) else None
        known[str(key)] = text.replace("\n", "") if text is not None and "$" not in text else None
    return known, f"ConfigMap {name} ({at})"


def substitute(output: bytes, build: FluxBuild, used: dict[str, Variable] | None = None) -> bytes:
    """The build's output after Flux's post-build substitution, each document (object) on its own; the variables
    not known are left as written. ``used`` gets each variable filled in."""
    if not build.post_build or not build.variables and build.complete:
        return output  # kustomize-controller runs envsubst only with variables to fill in
    pieces = _DOCUMENT_BREAK.split(output)
    used = {} if used is None else used
    return b"---\n".join(_substitute_document(piece, build, used) for piece in pieces)


def _substitute_document(document: bytes, build: FluxBuild, used: dict[str, Variable]) -> bytes:
    if b"$" not in document or _DISABLED.encode() in document and _disabled(document):
        return document
    text = document.decode("utf-8", errors="surrogateescape")
    return _envsubst(text, build, used).encode("utf-8", errors="surrogateescape")


def filled_in_notes(lines: list[str], line: int, substituted: Mapping[str, str]) -> tuple[str, ...]:
    """A note for each variable Flux fills in (``substituted``: name -> "'value' from source") that the template
    names on the finding's ``line`` (1-based) or elsewhere in the list item that holds it (a container: its limit
    beside the request a finding is at), each at the first line naming it."""
    if not 0 < line <= len(lines):
        return ()  # the file's text is not held: nothing to read the variables from
    first, last = _item(lines, line - 1)
    notes = []
    for name, said in substituted.items():
        named = re.compile(rf"\$\{{?{re.escape(name)}(?![A-Za-z0-9_])")
        at = next((index for index in (line - 1, *range(first, last)) if named.search(lines[index])), None)
        if at is not None:
            notes.append(f"Flux's post-build substitution sets ${{{name}}} (line {at + 1}) to {said}")
    return tuple(notes)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _item(lines: list[str], index: int) -> tuple[int, int]:
    """The lines (0-based, end excluded) of the innermost list item holding line ``index``; only that line when
    none does."""
    if not 0 <= index < len(lines):
        return 0, 0
    indent, start = _indent(lines[index]), None
    for above in range(index, -1, -1):
        text = lines[above]
        if not text.strip() or text.lstrip().startswith("#") or (above != index and _indent(text) >= indent):
            continue
        indent = _indent(text)
        if text.lstrip().startswith("- "):
            start = above
            break
        if indent == 0:
            break
    if start is None:
        return index, index + 1
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > _indent(lines[start])):
        end += 1
    return start, end


def said(used: Mapping[str, Variable]) -> dict[str, str]:
    return {name: f"'{variable.value}' from {variable.source}" for name, variable in used.items()}


def _disabled(document: bytes) -> bool:
    """Labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` (kustomize_varsub.go)."""
    loaded = load_bytes("<output>", document).documents
    data = loaded[0].data if loaded else None
    if not isinstance(data, dict):
        return True  # not read: left as written
    return _disabled_object(data)


def _envsubst(text: str, build: FluxBuild, used: dict[str, Variable]) -> str:
    """envsubst as fluxcd/pkg envsubst reads it: ``$$`` is a ``$``; ``${NAME}``, ``$NAME``, ``${NAME:=default}`` and
    ``${NAME:-default}`` (the default when the value is empty or unset; ``${NAME=..}``/``${NAME-..}`` only when
    unset, which Flux's lookup never is) are filled in from known variables; anything else is left as written."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
            continue
        if following == "{":
            end = _closing(text, i + 2)
            if end < 0:
                out.append(text[i:])
                break
            out.append(_expression(text[i + 2 : end], text[i : end + 1], build, used))
            i = end + 1
            continue
        bare = _NAME.match(text, i + 1)
        if bare is not None and bare.group() in build.variables:
            used[bare.group()] = build.variables[bare.group()]
            out.append(build.variables[bare.group()].value)
            i = bare.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _closing(text: str, start: int) -> int:
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
        elif text[index] == "\n":
            return -1
    return -1


def _expression(inner: str, written: str, build: FluxBuild, used: dict[str, Variable]) -> str:
    name = _NAME.match(inner)
    if name is None:
        return written
    rest = inner[name.end() :]
    variable = build.variables.get(name.group())
    if variable is not None and (not rest or variable.value or rest[:1] in ("=", "-")):
        used[name.group()] = variable
    if not rest:
        return variable.value if variable is not None else written
    for operator in (":=", ":-", "=", "-"):
        if not rest.startswith(operator):
            continue
        if variable is not None and (variable.value or operator in ("=", "-")):
            return variable.value
        if variable is None and (operator in ("=", "-") or not build.complete):
            return written  # unset here, maybe set by a source not read; or Flux's lookup never leaves it unset
        return _envsubst(rest[len(operator) :], build, used)  # a default may name another variable: ${SUB:=${APP}}
    return written
