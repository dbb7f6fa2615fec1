"""Charts and overlays on disk: which directory is one, and which files it consumes.

A directory with ``Chart.yaml`` is a Helm chart; one with ``kustomization.yaml`` (``.yml``,
``Kustomization``) is a kustomize overlay or base. The files an overlay consumes (its resources
and its patches, as its kustomization lists them) are linted through the render, never raw: a
patch is a partial object (sigs.k8s.io/kustomize api/internal/builtins PatchTransformer), not an
object to schema-check.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.loader import LocatedDocument, load_bytes

CHART_FILE = "Chart.yaml"
# kustomize's own order of preference (api/konfig/general.go RecognizedKustomizationFileNames)
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_KUSTOMIZATION_BYTES = 1024 * 1024
# Fields whose entries are files (or, for resources/bases/components, directories) of the overlay.
_RESOURCE_FIELDS = ("resources", "bases", "components", "crds")
_PATCH_FILE_FIELDS = ("patchesStrategicMerge",)
_PLUGIN_FIELDS = ("transformers", "generators", "validators")


def is_chart(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, CHART_FILE))


def holds_nothing(path: str) -> bool:
    """The file sets nothing: comments, or only apiVersion and kind with every other key empty (`resources:`
    with no entry). A Chart.yaml or kustomization a tool fills in (`kustomize edit add resource`) or a program
    embeds, not one anybody builds as written; kustomize says "kustomization.yaml is empty", helm that the
    chart has no name."""
    try:
        with open(path, "rb") as handle:
            documents = load_bytes(path, handle.read(64 * 1024)).documents
    except OSError:
        return False
    if len(documents) > 1:
        return False
    data = documents[0].data if documents else None
    if data is None:
        return True
    return isinstance(data, dict) and all(
        value in (None, "", [], {}) for key, value in data.items() if key not in ("apiVersion", "kind")
    )


def kustomization_file(directory: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def is_remote(entry: str) -> bool:
    """A resource kustomize fetches (a git repository or a URL), not a local path."""
    return "://" in entry or entry.startswith(("github.com/", "gitlab.com/", "bitbucket.org/", "git@", "git::"))


@dataclass(frozen=True)
class Patch:
    """One patch of a kustomization: in a file of its own, or inline (``patch: |``)."""

    kustomization: str  # the kustomization file that lists it
    file: str | None  # the patch file (absolute), or None for an inline patch
    entry: Path  # where it is listed in the kustomization (for an inline patch, its text)
    target: dict[str, Any]  # the ``target:`` selector, if any
    json6902: bool  # a list of operations (RFC 6902) rather than a partial object


Path = tuple[Any, ...]


@dataclass
class Kustomization:
    path: str  # the file (absolute)
    data: dict[str, Any]
    document: LocatedDocument | None
    problem: str = ""  # why it could not be read (then data is empty)
    local_files: list[str] = field(default_factory=list)  # files it consumes (absolute)
    local_dirs: list[str] = field(default_factory=list)  # directories it builds from (absolute)
    chart_homes: list[str] = field(default_factory=list)  # where its helmCharts are (absolute), when they exist
    patches: list[Patch] = field(default_factory=list)
    remote: list[str] = field(default_factory=list)
    helm_charts: bool = False
    commented: list[str] = field(default_factory=list)  # local paths listed only in comments (disabled)

    @property
    def directory(self) -> str:
        return os.path.dirname(self.path)


def read_kustomization(path: str) -> Kustomization:
    from gpulint.lint.inputs.sources import SourceError, read_file

    path = os.path.abspath(path)
    try:
        raw = read_file(path, limit=MAX_KUSTOMIZATION_BYTES, limit_name="kustomization size").content
    except SourceError as exc:
        return Kustomization(path, {}, None, problem=str(exc))
    loaded = load_bytes(path, raw)
    documents = [d for d in loaded.documents if isinstance(d.data, dict)]
    # an info is no failure: `namespace: ${NAMESPACE}` (envsubst, Flux) leaves its patches and resources known
    failures = [p for p in loaded.problems if p.severity is not Severity.INFO]
    if failures or not documents:
        problems = failures or loaded.problems
        return Kustomization(path, {}, None, problem=problems[0].message if problems else "empty")
    document = documents[0]
    kustomization = Kustomization(path, document.data, document)
    _consumed(kustomization)
    kustomization.commented = _commented(loaded.text, kustomization.directory)
    return kustomization


# `#- ../components/certmanager`, `#  - path: manager_webhook_patch.yaml`: an entry switched off
_COMMENTED_ENTRY = re.compile(
    r"^\s*#+\s*(?:-\s*)?(?:path:\s*)?([A-Za-z0-9_.][A-Za-z0-9_./-]*)\s*(?:#.*)?$", re.MULTILINE
)


def _commented(text: str, directory: str) -> list[str]:
    """Existing local files and directories a kustomization names only in a comment line."""
    found = []
    for match in _COMMENTED_ENTRY.finditer(text):
        entry = match.group(1)
        if "/" in entry or entry.endswith((".yaml", ".yml", ".json")):
            local = _local(directory, entry)
            if os.path.exists(local):
                found.append(local)
    return found


def disabled_files(kustomizations: list[Kustomization]) -> dict[str, str]:
    """Real path -> the kustomization whose comment lists it, for files no kustomization uses."""
    used = consumed_files(kustomizations)
    disabled: dict[str, str] = {}
    for k in kustomizations:
        for path in k.commented:
            real = os.path.realpath(path)
            if os.path.isfile(real) and real not in used:
                disabled.setdefault(real, k.path)
    return disabled


# A folder named for patches (`patches`, `patch`, `gpu-patches`), not one that holds the word (`dispatcher`)
_PATCH_FOLDER = re.compile(r"(?:^|[-_.])patch(?:es)?(?:$|[-_.])", re.IGNORECASE)


def unused_patch_files(kustomizations: list[Kustomization]) -> dict[str, str]:
    """Real path -> the kustomization beside it, or reading other files of its folder, for files named as patches
    (kubebuilder scaffolds ``manager_config_patch.yaml`` and leaves it unused; flyteorg/flyte keeps
    ``kustomize/minio-patch.yaml`` beside the ``namespace.yaml`` its ``complete`` and ``dev`` overlays list), or kept
    in a patch folder a kustomization reads patches from (kubeflow/manifests' tensorboard-controller
    ``base/patches/add_service_account.yaml`` beside the ``add_controller_config.yaml`` it lists), that no
    kustomization reads: partial objects, not manifests. One listed as a resource is consumed and rendered, not
    skipped."""
    used = consumed_files(kustomizations)
    unused: dict[str, str] = {}
    for k in kustomizations:
        for directory in dict.fromkeys([k.directory, *(os.path.dirname(f) for f in k.local_files), *_patch_folders(k)]):
            try:
                names = sorted(os.listdir(directory))
            except OSError:
                continue
            patch_folder = directory != k.directory and _PATCH_FOLDER.search(os.path.basename(directory)) is not None
            for name in names:
                lowered = name.lower()
                if (patch_folder or "patch" in lowered) and lowered.endswith((".yaml", ".yml", ".json")):
                    real = os.path.realpath(os.path.join(directory, name))
                    if real not in used and os.path.isfile(real):
                        unused.setdefault(real, k.path)
    return unused


def _patch_folders(k: Kustomization) -> list[str]:
    """The folders named for patches directly inside an overlay's folder, read from or not (Cluster API Azure's
    ``templates/flavors/aks-clusterclass/patches``, left when the flavor stopped patching): what they hold is
    patches by their name and place. One holding a kustomization of its own is an overlay or a component, not
    patches."""
    try:
        entries = sorted(os.listdir(k.directory))
    except OSError:
        return []
    found = []
    for name in entries:
        folder = os.path.join(k.directory, name)
        if _PATCH_FOLDER.search(name) is not None and os.path.isdir(folder) and not _has_kustomization(folder):
            found.append(folder)
    return found


def _has_kustomization(directory: str) -> bool:
    return any(os.path.isfile(os.path.join(directory, name)) for name in KUSTOMIZATION_FILES)


def disabled_directories(kustomizations: list[Kustomization]) -> set[str]:
    """Overlays and components a kustomization lists only in a comment and none uses: not rendered
    on their own (a kubebuilder scaffold's optional parts)."""
    used = {os.path.realpath(d) for k in kustomizations for d in k.local_dirs}
    return {os.path.realpath(path) for k in kustomizations for path in k.commented if os.path.isdir(path)} - used


def _local(directory: str, entry: str) -> str:
    return os.path.normpath(os.path.join(directory, entry))


def _consumed(k: Kustomization) -> None:
    data, directory = k.data, k.directory
    for key in _RESOURCE_FIELDS:
        for entry in sequence(data.get(key)):
            if not isinstance(entry, str) or not entry:
                continue
            if is_remote(entry):
                k.remote.append(entry)
                continue
            local = _local(directory, entry)
            (k.local_dirs if os.path.isdir(local) else k.local_files).append(local)
    for key in _PATCH_FILE_FIELDS:
        for index, entry in enumerate(sequence(data.get(key))):
            if isinstance(entry, str) and not is_remote(entry):
                if "\n" in entry:  # an inline patch in patchesStrategicMerge
                    k.patches.append(Patch(k.path, None, (key, index), {}, False))
                else:
                    file = _local(directory, entry)
                    k.local_files.append(file)
                    k.patches.append(Patch(k.path, file, (key, index), {}, _is_json6902_file(file)))
    for key in ("patches", "patchesJson6902"):
        for index, raw in enumerate(sequence(data.get(key))):
            item = mapping(raw)
            target = mapping(item.get("target"))
            file_entry = text(item.get("path"))
            if file_entry and is_remote(file_entry):
                k.remote.append(file_entry)
            elif file_entry:
                file = _local(directory, file_entry)
                k.local_files.append(file)
                json6902 = key == "patchesJson6902" or _is_json6902_file(file)
                k.patches.append(Patch(k.path, file, (key, index, "path"), target, json6902))
            elif isinstance(item.get("patch"), str):
                inline = item["patch"]
                json6902 = key == "patchesJson6902" or inline.lstrip().startswith(("-", "["))
                k.patches.append(Patch(k.path, None, (key, index, "patch"), target, json6902))
    for key in ("configMapGenerator", "secretGenerator"):
        for generator in sequence(data.get(key)):
            for file_key in ("files", "envs"):
                for entry in sequence(mapping(generator).get(file_key)):
                    if isinstance(entry, str):
                        k.local_files.append(_local(directory, entry.rpartition("=")[2]))
            env = text(mapping(generator).get("env"))
            if env:
                k.local_files.append(_local(directory, env))
    for key in ("configurations", "openapi", "replacements", "transformers", "generators", "validators"):
        for entry in sequence(data.get(key)) if key != "openapi" else [mapping(data.get(key)).get("path")]:
            if isinstance(entry, str) and "\n" not in entry and is_remote(entry):
                k.remote.append(entry)  # a remote transformer or generator kustomization
            elif isinstance(entry, str) and "\n" not in entry:
                local = _local(directory, entry)
                # a transformers/generators/validators folder is a kustomization kustomize accumulates as it
                # does a resource (api/internal/target/kusttarget.go), with the bases it names in turn
                folder = key in _PLUGIN_FIELDS and os.path.isdir(local)
                (k.local_dirs if folder else k.local_files).append(local)
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                k.local_files.append(_local(directory, entry["path"]))
    k.helm_charts = bool(data.get("helmCharts") or data.get("helmChartInflationGenerator"))
    if k.helm_charts:
        k.chart_homes = _chart_homes(data, directory)


def _chart_homes(data: dict[str, Any], directory: str) -> list[str]:
    """kustomize looks for a chart in its chart home on the disk, not through its loader: the home may be
    outside the kustomization's root (``chartHome: ../charts``; api/internal/builtins
    HelmChartInflationGenerator.go absChartHome, default ``charts``)."""
    homes = [text(mapping(data.get("helmGlobals")).get("chartHome")) or "charts"]
    homes += [text(mapping(item).get("chartHome")) for item in sequence(data.get("helmChartInflationGenerator"))]
    found = (_local(directory, home) for home in homes if home)
    return list(dict.fromkeys(home for home in found if os.path.isdir(home)))


def _is_json6902_file(path: str) -> bool:
    """A patch file holding a list of operations (kustomize tells them apart the same way: a JSON6902
    patch parses as a list, a strategic-merge patch as an object)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    for line in head.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return stripped.startswith(("-", "["))
    return False


def consumed_files(kustomizations: list[Kustomization]) -> set[str]:
    """Real paths of every file the overlays read (resources, patches, generator inputs, their own files)."""
    files: set[str] = set()
    for k in kustomizations:
        files.add(os.path.realpath(k.path))
        files.update(os.path.realpath(f) for f in k.local_files)
    return files


def patch_files(kustomizations: list[Kustomization]) -> set[str]:
    return {os.path.realpath(p.file) for k in kustomizations for p in k.patches if p.file}


def roots(kustomizations: list[Kustomization]) -> list[Kustomization]:
    """The overlays no other overlay of the set builds from: each is rendered once, and the bases and
    components it uses are rendered as part of it."""
    used = {os.path.realpath(d) for k in kustomizations for d in k.local_dirs}
    return [k for k in kustomizations if os.path.realpath(k.directory) not in used]


MAX_BUILDER_LEVELS = 4  # overlays over a base: kubeflow's manager/ <- default/ <- base/ <- overlays/kubeflow
MAX_BUILDERS = 4  # the overlays a base named alone is built by, each its own render


def builders(base: Kustomization, neighbours: list[Kustomization]) -> list[Kustomization]:
    """The overlays that really build ``base``: those of ``neighbours`` over it (listing it as a resource, or
    listing one that does, up to MAX_BUILDER_LEVELS) that nothing else builds, by path; none when nothing
    builds it. A base built alone misses what its overlays give it (kubeflow/manifests' notebook-controller
    ``manager/``: a Deployment whose selector ``default/``'s ``commonLabels`` makes, built by
    ``overlays/kubeflow`` and ``overlays/standalone``). Components are no builders: kustomize builds them only
    inside an overlay; nor is an overlay with a remote resource, which gpulint does not fetch (its failure would
    leave the base unchecked where the overlay below it builds)."""
    by_directory = {
        os.path.realpath(k.directory): k for k in neighbours if k.data.get("kind") != "Component" and not k.remote
    }
    over: dict[str, list[str]] = {}  # a folder -> the overlays that list it
    for key, k in sorted(by_directory.items()):
        for listed in dict.fromkeys(map(os.path.realpath, k.local_dirs)):
            over.setdefault(listed, []).append(key)
    level = [os.path.realpath(base.directory)]
    reached, tops = set(level), []
    for depth in range(MAX_BUILDER_LEVELS):
        above = []
        for key in level:
            for builder in over.get(key, []):
                if builder not in reached:
                    reached.add(builder)
                    above.append(builder)
        tops += [key for key in above if not over.get(key) or depth == MAX_BUILDER_LEVELS - 1]
        level = [key for key in above if over.get(key)]
    return [by_directory[key] for key in sorted(tops)]


def component_users(component: Kustomization, kustomizations: list[Kustomization]) -> list[Kustomization]:
    """The plain kustomizations of the set (no Component, no remote resource: gpulint does not fetch it) that list
    ``component`` in ``components:``, by path: kustomize builds it inside each of them."""
    wanted = os.path.realpath(component.directory)
    users = []
    for k in sorted(kustomizations, key=lambda k: k.path):
        if k.data.get("kind") == "Component" or k.remote:
            continue
        listed = [e for e in (k.data.get("components") or []) if isinstance(e, str) and e and not is_remote(e)]
        if wanted in {os.path.realpath(os.path.join(k.directory, e)) for e in listed}:
            users.append(k)
    return users


def closure(root: Kustomization, kustomizations: list[Kustomization]) -> list[Kustomization]:
    """The overlay and every base and component of the set it builds from, transitively."""
    by_directory = {os.path.realpath(k.directory): k for k in kustomizations}
    found: dict[str, Kustomization] = {}
    stack = [root]
    while stack:
        k = stack.pop()
        key = os.path.realpath(k.directory)
        if key in found:
            continue
        found[key] = k
        stack.extend(by_directory[d] for d in map(os.path.realpath, k.local_dirs) if d in by_directory)
    return list(found.values())


def enclosing_kustomizations(path: str, levels: int = 3) -> Iterator[Kustomization]:
    """Kustomizations in the file's directory and the few above it (a patch is usually listed by the
    overlay beside it, sometimes by one a level up: ``patches: [{path: ../patches/gpu.yaml}]``)."""
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(levels):
        found = kustomization_file(directory)
        if found is not None:
            yield read_kustomization(found)
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent
