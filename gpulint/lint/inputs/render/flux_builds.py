"""Overlays a Flux Kustomization of the repository builds, read and never run.

Flux's kustomize-controller builds the folder a Flux ``Kustomization`` (kustomize.toolkit.fluxcd.io) names in
``spec.path``, relative to its source's root, with kustomize's load restrictor off on a filesystem that refuses
paths outside that root (fluxcd/pkg kustomize v1.39.0, kustomize_generator.go ``SecureBuild``/``Build``:
``LoadRestrictions: LoadRestrictionsNone``). A folder under it that holds a kustomization is built in the same run
(with no kustomization at ``spec.path``, the controller generates one that lists each such folder). So a GitOps
monorepo's ``replacements: - path: ../../../components/replacements/ks.yaml`` or a ``configMapGenerator`` over
``../notebooks/`` loads under Flux where ``kubectl kustomize`` refuses it.

Whether the source is this repository is not knowable from its files: a path that is a folder of the repository is
taken as its own, as a release's chart path is (render/releases.py). A path of variables alone, or the root itself,
names no overlay. Bounded: at most MAX_FILES YAML files (.gitignore honoured, hidden folders, ``node_modules``,
``vendor`` and charts' ``templates`` skipped, no link followed), the first MAX_BYTES of each.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import dig
from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.inputs.render.layout import KUSTOMIZATION_FILES
from gpulint.lint.inputs.sources import SourceError
from gpulint.lint.paths import is_within

MAX_FILES = 5_000
MAX_BYTES = 512 * 1024
_GROUP = "kustomize.toolkit.fluxcd.io"
FILES = Selection(suffixes=(".yaml", ".yml"), skipped=frozenset({"node_modules", "vendor", "templates"}))
# Flux's post-build substitution (${CLUSTER}, ${CLUSTER:=main}) in a path a parent Kustomization fills in: one folder
_VARIABLE = re.compile(r"\$\{[^}/\n]*\}")


def built_by_flux(
    overlay: str, repository: str, *, with_components: bool = False, objects: FluxObjects | None = None
) -> str:
    """``FILE:LINE`` (relative to ``repository``) of the first Flux Kustomization whose ``spec.path`` is the
    overlay's folder or a folder above it; "" when none is. ``with_components``: one whose ``spec.path`` is the
    overlay's folder itself and that lists ``spec.components``, which kustomize-controller appends to that folder's
    kustomization before it builds (fluxcd/pkg kustomize v1.39.0, kustomize_generator.go: ``kus.Components =
    append(kus.Components, components...)``): the overlay alone is not what Flux builds."""
    found = _building(overlay, repository, with_components=with_components, objects=objects)
    return found.at if found is not None else ""


@dataclass(frozen=True)
class FluxComponents:
    """The components a Flux Kustomization appends to the overlay's kustomization, as it lists them (relative to
    its ``spec.path``, the overlay's folder), and where it lists them (``FILE:LINE`` relative to the repository)."""

    at: str
    entries: tuple[str, ...]
    ignore_missing: bool  # spec.ignoreMissingComponents: an absent component is skipped, not refused


def flux_components(overlay: str, repository: str, objects: FluxObjects | None = None) -> FluxComponents | None:
    """The components the first Flux Kustomization that builds the overlay's folder itself appends; None when none
    lists any. An entry that is no string is kept as "" (Flux refuses the Kustomization)."""
    return _building(overlay, repository, with_components=True, objects=objects)


def built_with_component(component: str, repository: str, objects: FluxObjects | None = None) -> list[str]:
    """The folders (real paths, sorted as a walk meets them) Flux Kustomizations of the repository build with the
    component folder ``component`` appended (a literal ``spec.path``, an entry of ``spec.components`` that names it):
    kustomize builds a Component only inside an overlay, so these are what it is judged through."""
    top, wanted = os.path.realpath(repository), os.path.realpath(component)
    found: set[str] = set()
    for _, data, _, _ in (objects or flux_objects(top)).kustomizations:
        path, components = dig(data, "spec", "path"), dig(data, "spec", "components")
        if not isinstance(path, str) or _VARIABLE.search(path) or not isinstance(components, list):
            continue
        folder = os.path.realpath(os.path.join(top, path.strip()))
        if folder == top or not is_within(folder, top) or not os.path.isdir(folder):
            continue
        named = (os.path.realpath(os.path.join(folder, c)) for c in components if isinstance(c, str) and c)
        if wanted in named:
            found.add(folder)
    return sorted(found)


# a Flux bootstrap folder: clusters/<name>/... (flux bootstrap --path=clusters/<name>), as terraform_clusters reads it
_CLUSTERS_FOLDER = re.compile(r"^(?:.*/)?clusters/[^/]+(?=/)")


def cluster_folder(file: str, top: str, objects: FluxObjects) -> str | None:
    """The ``clusters/<name>`` folder (relative to the repository at ``top``, a real path) of the cluster the file at
    ``file`` (relative) deploys to: the one it is in, else the one whose Flux Kustomizations alone build a folder
    above it; None when none or several do."""
    own = _CLUSTERS_FOLDER.match(file)
    if own is not None:
        return own.group()
    folder = os.path.dirname(file).replace(os.sep, "/")
    building = set()
    for path, data, _, _ in objects.kustomizations:
        cluster = _CLUSTERS_FOLDER.match(os.path.relpath(path, top).replace(os.sep, "/"))
        if cluster is not None and covers(dig(data, "spec", "path"), folder):
            building.add(cluster.group())
    return building.pop() if len(building) == 1 else None


def flux_kustomizations(
    overlay: str, repository: str, objects: FluxObjects | None = None
) -> list[tuple[dict[str, Any], str]]:
    """Each Flux Kustomization of the repository that builds the overlay's folder as its own: its ``spec.path`` is
    that folder, or a folder above with no kustomization, where kustomize-controller generates one listing each
    folder below that holds a kustomization, the topmost only (fluxcd/pkg kustomize v1.39.0, kustomize_generator.go
    ``generateKustomization``: a folder with a kustomization file is listed and not descended into), those only
    when none of the first kind is; with ``FILE:LINE`` (relative to the repository) of its ``spec.path``."""
    overlay, top = os.path.realpath(overlay), os.path.realpath(repository)
    if not is_within(overlay, top) or overlay == top:
        return []
    relative = os.path.relpath(overlay, top).replace(os.sep, "/")
    found = (objects or flux_objects(top)).kustomizations
    own = [
        (data, f"{os.path.relpath(p, top)}:{line}")
        for p, data, line, _ in found
        if covers(dig(data, "spec", "path"), relative, exact=True)
    ]
    if own:  # a Kustomization of the overlay's own: an ancestor's generated build of it is a layout's accident
        return own
    return [
        (data, f"{os.path.relpath(p, top)}:{line}")
        for p, data, line, _ in found
        if _generated_over(dig(data, "spec", "path"), relative, top)
    ]


def _generated_over(path: object, overlay: str, top: str) -> bool:
    """Whether ``path`` (a Flux ``spec.path``) is a folder above the overlay with no kustomization, none between them
    holding one either: the kustomization Flux generates there lists the overlay."""
    if not covers(path, overlay) or covers(path, overlay, exact=True):
        return False
    assert isinstance(path, str)
    depth = len([part for part in path.strip().split("/") if part not in ("", ".")])
    parts = overlay.split("/")
    return not any(_holds_kustomization(os.path.join(top, *parts[:level])) for level in range(depth, len(parts)))


def _holds_kustomization(folder: str) -> bool:
    return any(os.path.isfile(os.path.join(folder, name)) for name in KUSTOMIZATION_FILES)


def parent_folders(child: str, repository: str, objects: FluxObjects | None = None) -> list[str]:
    """The folders (real paths) the Flux Kustomizations that may build the file ``child`` (a Flux Kustomization's)
    name: each one's literal ``spec.path`` is a folder above it; [] when one of them names a path with a variable
    (which folder it is depends on its own parent)."""
    top = os.path.realpath(repository)
    folder = os.path.relpath(os.path.dirname(os.path.realpath(child)), top).replace(os.sep, "/")
    found: list[str] = []
    for path, data, _, _ in (objects or flux_objects(top)).kustomizations:
        spec_path = dig(data, "spec", "path")
        if folder == "." or os.path.realpath(path) == os.path.realpath(child) or not covers(spec_path, folder):
            continue
        assert isinstance(spec_path, str)
        if _VARIABLE.search(spec_path):
            return []
        real = os.path.realpath(os.path.join(top, spec_path.strip()))
        if real not in found:
            found.append(real)
    return found


def parents_patches(
    child: str, repository: str, objects: FluxObjects | None = None
) -> list[tuple[Any, dict[str, Any]]]:
    """The ``spec.patches`` entries (each its ``patch`` and ``target``) of every Flux Kustomization whose
    ``spec.path`` is a folder above the file ``child``: the one that builds that file patches the Kustomizations in
    it before applying them (a monorepo's ``cluster-apps`` adds ``postBuild.substituteFrom`` to each app's)."""
    top = os.path.realpath(repository)
    folder = os.path.relpath(os.path.dirname(os.path.realpath(child)), top).replace(os.sep, "/")
    found: list[tuple[Any, dict[str, Any]]] = []
    for path, data, _, _ in (objects or flux_objects(top)).kustomizations:
        patches = dig(data, "spec", "patches")
        if os.path.realpath(path) == os.path.realpath(child) or not isinstance(patches, list):
            continue
        if folder != "." and covers(dig(data, "spec", "path"), folder):
            for entry in patches:
                target = entry.get("target") if isinstance(entry, dict) else None
                if isinstance(entry, dict):
                    found.append((entry.get("patch"), target if isinstance(target, dict) else {}))
    return found


@dataclass(frozen=True)
class FluxObjects:
    """What the render reads of a repository's YAML: its Flux Kustomizations (file, object, line of ``spec.path`` and
    of ``spec.components``) and its ConfigMaps (object, ``FILE:LINE`` relative to the repository)."""

    kustomizations: tuple[tuple[str, dict[str, Any], int, int], ...]
    config_maps: tuple[tuple[dict[str, Any], str], ...]
    # what Flux adds to the build of each folder (real path), once per run: flux_post_build.flux_build's memo
    builds: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def flux_objects(top: str) -> FluxObjects:
    """The repository's FluxObjects (``top``: its real path). A run reads them once (render/collect.Renderer asks
    for every overlay); the ConfigMaps are parsed only when a Flux Kustomization substitutes from any."""
    kustomizations: list[tuple[str, dict[str, Any], int, int]] = []
    holding: list[str] = []  # the files that name a ConfigMap
    try:
        for count, candidate in enumerate(Walk(top, (), [], select=FILES).files()):
            if count >= MAX_FILES:
                break
            if candidate.follow:
                continue
            raw = read_head(candidate.path, MAX_BYTES)
            if b"ConfigMap" in raw:
                holding.append(candidate.path)
            if _GROUP.encode() not in raw:
                continue
            for document in load_bytes(candidate.path, raw).documents:
                data = document.data
                if isinstance(data, dict) and _is_flux_kustomization(data):
                    lines = document.locate(("spec", "path"))[0], document.locate(("spec", "components"))[0]
                    kustomizations.append((candidate.path, data, *lines))
    except SourceError:
        return FluxObjects((), ())
    if not any("substituteFrom" in repr(data.get("spec")) for _, data, _, _ in kustomizations):
        return FluxObjects(tuple(kustomizations), ())
    config_maps = [
        (document.data, f"{os.path.relpath(path, top)}:{document.locate(())[0]}")
        for path in holding
        for document in load_bytes(path, read_head(path, MAX_BYTES)).documents
        if isinstance(document.data, dict) and document.data.get("kind") == "ConfigMap"
    ]
    return FluxObjects(tuple(kustomizations), tuple(config_maps))


def _is_flux_kustomization(data: dict[str, Any]) -> bool:
    return data.get("kind") == "Kustomization" and str(data.get("apiVersion") or "").startswith(_GROUP + "/")


def _building(
    overlay: str, repository: str, *, with_components: bool, objects: FluxObjects | None
) -> FluxComponents | None:
    overlay, top = os.path.realpath(overlay), os.path.realpath(repository)
    if not is_within(overlay, top) or overlay == top:
        return None
    relative = os.path.relpath(overlay, top).replace(os.sep, "/")
    for path, data, path_line, components_line in (objects or flux_objects(top)).kustomizations:
        components = dig(data, "spec", "components")
        if with_components and not (isinstance(components, list) and components):
            continue
        if covers(dig(data, "spec", "path"), relative, exact=with_components):
            line = components_line if with_components else path_line
            return FluxComponents(
                f"{os.path.relpath(path, top)}:{line}",
                tuple(c if isinstance(c, str) else "" for c in components) if isinstance(components, list) else (),
                dig(data, "spec", "ignoreMissingComponents") is True,
            )
    return None


def covers(path: object, overlay: str, *, exact: bool = False) -> bool:
    """Whether a Flux ``spec.path`` (``./kubernetes/apps/main``, ``kubernetes/apps/${CLUSTER}``) is the overlay's
    folder (relative to the root, '/'-separated) or, unless ``exact``, a folder above it."""
    if not isinstance(path, str):
        return False
    parts = [part for part in path.strip().split("/") if part not in ("", ".")]
    if not parts or ".." in parts or not any(_VARIABLE.sub("", part) for part in parts):
        return False
    pattern = "/".join(_part_pattern(part) for part in parts)
    return re.fullmatch(pattern if exact else rf"{pattern}(?:/.*)?", overlay) is not None


def _part_pattern(part: str) -> str:
    pieces = re.split(f"({_VARIABLE.pattern})", part)
    return "".join("[^/]+" if _VARIABLE.fullmatch(piece) else re.escape(piece) for piece in pieces if piece)
