"""kustomize overlays: `kustomize build` (or `kubectl kustomize`), each object mapped to the file
that introduced the offending field - the base resource, or the patch that changed it.

The overlay is built through a one-line wrapper kustomization that adds
``buildMetadata: [originAnnotations, transformerAnnotations]`` (kustomize api/types/kustomization.go):
kustomize then records each object's origin (``config.kubernetes.io/origin: path: base/job.yaml``)
and the kustomizations whose transformers changed it (``alpha.config.kubernetes.io/transformations``,
each ``configuredIn`` a kustomization, ``configuredBy`` a PatchTransformer ...). Both annotations are
stripped before linting. The annotation names the kustomization, not the patch, so the patches it
lists are read to find the one that sets the field.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from gpulint.kube.embedded import NotParsed, load_embedded
from gpulint.kube.fields import decimal, dig, mapping, sequence, text
from gpulint.lint.findings import Fix, Path, Severity
from gpulint.lint.inputs.loader import LoadedFile, LocatedDocument, load_bytes, load_text
from gpulint.lint.inputs.render.flux_builds import FluxObjects, built_by_flux, flux_components, flux_objects
from gpulint.lint.inputs.render.flux_post_build import flux_build, substitute
from gpulint.lint.inputs.render.generated import built_after_edit, built_unrestricted, written_by_build_step
from gpulint.lint.inputs.render.generator_places import GENERATOR, place_in_source, written
from gpulint.lint.inputs.render.layout import (
    Kustomization,
    Patch,
    holds_nothing,
    is_remote,
    kustomization_file,
    read_kustomization,
)
from gpulint.lint.inputs.render.options import RenderOptions
from gpulint.lint.inputs.render.rendered import Rendered, RenderProblem, mapped, stopped
from gpulint.lint.inputs.render.tools import Result, Tool, run
from gpulint.lint.inputs.render.view import View, ViewError, boundary, left_out
from gpulint.lint.paths import is_within

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
_PATCH_TRANSFORMERS = {"PatchTransformer", "PatchStrategicMergeTransformer", "PatchJson6902Transformer"}
MAX_RESOURCE_BYTES = 16 * 1024 * 1024
# strategic-merge list keys (the patchMergeKey of the Kubernetes types kustomize merges with)
_MERGE_KEYS = {
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
_ENVIRONMENT = (
    "no such host",
    "dial tcp",
    "Could not resolve host",
    "unable to access",
    "git fetch",
    "git clone",
    "i/o timeout",
    "must specify --enable-helm",
    # a generator or transformer run as a plugin (exec, container, Go): kustomize's --enable-alpha-plugins
    # (api/types/erronlybuiltinpluginsallowed.go), which gpulint never turns on: it runs nothing a repository names
    "external plugins disabled",
    'exec: "helm"',
    "executable file not found",
    # a remote base's server answered badly: TLS, a reset, a plain-HTTP answer (what it says varies with timing)
    "tls: ",
    "x509: ",
    "connection reset by peer",
    "connection refused",
    "server gave HTTP response",
    "remote error",
    "accumulating resources from 'http",  # kustomize's words for a resource at a URL it could not use
)


def build_argv(overlay_root: str, options: RenderOptions, kustomize: Tool, helm: Tool | None) -> list[str]:
    argv = (
        [kustomize.path, "build", overlay_root]
        if kustomize.name == "kustomize"
        else [kustomize.path, "kustomize", overlay_root]
    )
    if options.kustomize_helm:
        argv.append("--enable-helm")
        if helm is not None:
            argv += ["--helm-command", helm.path]
    return argv


def render_overlay(
    directory: str,
    display: str,
    options: RenderOptions,
    kustomize: Tool,
    helm: Tool | None = None,
    named: str = ".",
    flux_index: Callable[[str], FluxObjects] = flux_objects,
) -> Rendered:
    """``named``: the path the user named for linting (what may be read outside git); ``flux_index``: the
    repository's Flux objects from its real path (a run's Renderer reads them once)."""
    rendered = Rendered("kustomize", display)
    own = kustomization_file(directory) or os.path.join(directory, "kustomization.yaml")
    own_display = os.path.join(display, os.path.basename(own))
    with tempfile.TemporaryDirectory(prefix="gpulint-kustomize-") as temporary:
        view = View(boundary(directory, named), os.path.join(temporary, "tree"))
        try:
            outside, remote, generated = _copy_overlay(view, directory)
        except ViewError as exc:
            rendered.problems.append(
                RenderProblem(own_display, 1, 1, f"the overlay was not rendered: {exc}", Severity.WARNING)
            )
            return rendered
        rendered.problems.extend(left_out(view, directory, display))
        for kustomization, entry in outside:
            rendered.problems.append(
                _at_entry(
                    kustomization,
                    entry,
                    directory,
                    display,
                    f"'{entry}' leads outside the repository; it was left out of the render "
                    "(a renderer reads nothing outside the repository)",
                )
            )
        refused = [(k, entry) for k, entry in remote if not (options.remote_bases and _https(entry))]
        for kustomization, entry in refused:
            why = (
                "only https remote bases are fetched"
                if options.remote_bases
                else "gpulint opens no network connection unless --render-remote-bases is given (https only)"
            )
            rendered.problems.append(
                _at_entry(
                    kustomization,
                    entry,
                    directory,
                    display,
                    f"remote base '{entry}' was not fetched: {why}; the overlay was not rendered, "
                    "its resources were checked file by file",
                )
            )
        absent = [(k, entry) for k, entry, shown in generated if not shown]
        generated = [entry for entry in generated if entry[2]]
        if generated:  # kustomize stops at the first absent file: a missing one nothing writes is said too
            rendered.problems.extend(
                replace(
                    _at_entry(
                        k,
                        entry,
                        directory,
                        display,
                        f"kustomize refuses the overlay: '{entry}' does not exist and nothing in the repository writes it",
                    ),
                    severity=Severity.ERROR,
                )
                for k, entry in absent
            )
        if generated:  # one warning for the overlay, at the first such entry
            names = ", ".join(f"'{entry}'" for _, entry, _ in generated)
            verb, it = ("is", "it") if len(generated) == 1 else ("are", "them")
            shown = generated[0][2] if len(generated) == 1 else f"'{generated[0][1]}': {generated[0][2]}"
            rendered.problems.append(
                _at_entry(
                    generated[0][0],
                    generated[0][1],
                    directory,
                    display,
                    f"{names} {verb} not in the checkout: a build step writes {it} ({shown}); "
                    f"the overlay was not rendered: generate {it} and lint again to check it",
                )
            )
        if refused or generated:
            return rendered
        objects = flux_index(os.path.realpath(view.repository))
        flux = flux_build(directory, view.repository, objects)
        if flux is not None and flux.target_namespace is not None and kustomization_file(directory) is not None:
            _in_view_copy(view, own, namespace=flux.target_namespace)
        if flux is not None and any(flux.common_metadata) and kustomization_file(directory) is not None:
            _with_common_metadata(view, own, *flux.common_metadata)
        wrapper = os.path.join(temporary, "wrapper")
        os.mkdir(wrapper)
        copied = view.inside(directory)
        target = os.path.relpath(copied, wrapper)
        # a Component is built as kustomize builds one named directly (api/krusty/component_test.go, v5.8.1,
        # "applying-component-directly-should-be-same-as-kustomization"); listed as a resource it is refused
        field = "components" if _is_component(own) else "resources"
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            handle.write(
                "# written by gpulint: build the overlay with the origin of every object recorded\n"
                f"{field}:\n- {_quoted(target)}\n"
                "buildMetadata: [originAnnotations, transformerAnnotations]\n"
            )

        def build() -> Result:
            return run(
                build_argv(wrapper, options, kustomize, helm),
                cwd=copied,
                timeout=options.timeout,
                git_protocols="https" if options.remote_bases else "",
            )

        # built as Flux builds it: with the components its Kustomization appends (the copy's file kept to go back)
        as_copied = _contents(view.inside(own))
        components = _with_flux_components(view, directory, objects) if as_copied is not None else ()
        result = build()
        what = "kustomize build" if kustomize.name == "kustomize" else "kubectl kustomize"
        unfinished = stopped(result, own_display, what, "overlay", options.timeout)
        if unfinished is not None:
            rendered.problems.append(unfinished)
            return rendered
        if components and result.returncode != 0:
            # Flux's build fails as well: what is said is the overlay as written, as kubectl builds it
            with open(view.inside(own), "wb") as restored:
                restored.write(as_copied or b"")
            result, components = build(), ()
            unfinished = stopped(result, own_display, what, "overlay", options.timeout)
            if unfinished is not None:
                rendered.problems.append(unfinished)
                return rendered
        if result.returncode != 0:
            rendered.problems.append(
                _failure(what, view.unmasked(result.stderr), directory, display, own, own_display, view.repository)
            )
            return rendered
        rendered.components = components
        places = _Places(os.path.abspath(directory), display, wrapper, view)
    rendered.output = substitute(result.stdout, flux, rendered.substituted) if flux is not None else result.stdout
    rendered.mapper = partial(map_documents, places=places)
    return rendered


MAX_KUSTOMIZATIONS = 1000
# kustomize's load restrictor refusing a file outside the kustomization's root (api/loader fileloader.go)
_RESTRICTED = "is not in or below"
# kustomize's refusals of a patch or replacement whose target the build does not hold (api/resmap/reswrangler.go,
# api/filters/replacement/replacement.go, api/filters/patchstrategicmerge): a component the builder adds may hold it
_TARGET_MISSING = re.compile(
    r"\bno matches for Id\b|\bfailed to find unique target for patch\b|\bno resource matches strategic merge patch\b"
    r"|\bnothing selected by\b"
)


# kustomize fetches these over https (api/internal/git/repospec.go: a host shorthand is cloned with https)
_HTTPS = ("https://", "git::https://", "github.com/", "gitlab.com/", "bitbucket.org/")


def _https(entry: str) -> bool:
    return entry.startswith(_HTTPS)


def _at_entry(kustomization: Kustomization, entry: str, directory: str, display: str, message: str) -> RenderProblem:
    shown = os.path.normpath(os.path.join(display, os.path.relpath(kustomization.path, directory)))
    return RenderProblem(shown, _line_of_entry(kustomization.path, f"'{entry}'"), 1, message, Severity.WARNING)


Entries = list[tuple[Kustomization, str]]


Generated = list[tuple[Kustomization, str, str]]  # the entry, and what shows a build step writes it


def _copy_overlay(view: View, directory: str) -> tuple[Entries, Entries, Generated]:
    """Copy the overlay and every base, component and file it names, transitively, into ``view``. Returns
    the entries that lead outside the repository, which are not copied, the remote bases, and the absent
    files, each with what shows a build step writes it (git ignores it, its template, its writer; "" when
    nothing does: the overlay is broken)."""
    outside: Entries = []
    remote: Entries = []
    generated: Generated = []
    from gpulint.lint.inputs.gitignore import git_ignored  # reads with the sources layer, which renders overlays

    stack, seen = [os.path.realpath(directory)], set[str]()
    view.add(directory)
    while stack and len(seen) < MAX_KUSTOMIZATIONS:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        found = kustomization_file(current)
        if found is None:
            continue
        kustomization = read_kustomization(found)
        remote.extend((kustomization, entry) for entry in kustomization.remote)
        for path in (*kustomization.local_dirs, *kustomization.local_files):
            if not view.add(path):
                outside.append((kustomization, os.path.relpath(path, current)))
            elif not os.path.lexists(path):
                real = os.path.realpath(path)
                shown = (
                    ".gitignore leaves it out" if git_ignored(real) else written_by_build_step(real, view.repository)
                )
                generated.append((kustomization, os.path.relpath(path, current), shown))
        for home in kustomization.chart_homes:
            if not view.add(home):
                outside.append((kustomization, os.path.relpath(home, current)))
        stack.extend(os.path.realpath(d) for d in kustomization.local_dirs if is_within(d, view.repository))
    return outside, remote, generated


def _with_flux_components(view: View, directory: str, objects: FluxObjects) -> tuple[str, ...]:
    """When a Flux Kustomization of the repository builds the overlay's folder with components, the overlay as Flux
    builds it: those components (inside the repository, each a kustomize Component, copied with what they read)
    appended to the copy's kustomization, never to the user's file (fluxcd/pkg kustomize v1.39.0,
    kustomize_generator.go appends ``spec.components`` as listed, relative to ``spec.path``, and skips an absent one
    under ``spec.ignoreMissingComponents``). Returns the components' folders; () when it does not apply or a
    component is missing, outside the repository, remote or no Component: the overlay is built as written."""
    flux = flux_components(directory, view.repository, objects)
    own = kustomization_file(directory)
    if flux is None or own is None:
        return ()
    folders: list[str] = []
    entries: list[str] = []  # as Flux appends them: an absent one it ignores is left out
    for entry in flux.entries:
        folder = os.path.normpath(os.path.join(directory, entry))
        if not entry or is_remote(entry) or os.path.isabs(entry) or not is_within(folder, view.repository):
            return ()
        found = kustomization_file(folder) if os.path.isdir(folder) else None
        if found is None:
            if flux.ignore_missing and not os.path.lexists(folder):
                continue
            return ()
        if read_kustomization(found).data.get("kind") != "Component":
            return ()
        outside, remote, generated = _copy_overlay(view, folder)
        if outside or remote or generated:
            return ()
        folders.append(folder)
        entries.append(entry)
    if not entries:
        return ()
    listed = read_kustomization(view.inside(own)).data.get("components")
    _in_view_copy(view, own, components=[*(listed if isinstance(listed, list) else []), *entries])
    return tuple(folders)


# Flux's commonMetadata as kustomize transformers: each object's own metadata only (fieldSpecs), not the templates and
# selectors kustomize's labels/commonAnnotations fields also reach
_COMMON_METADATA = (("LabelTransformer", "labels"), ("AnnotationsTransformer", "annotations"))


def _with_common_metadata(view: View, own: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> None:
    """The view's copy of the overlay's kustomization with transformers that set the Flux Kustomization's
    ``spec.commonMetadata`` on every object, as kustomize-controller sets it when it applies them."""
    copy = read_kustomization(view.inside(own))
    if copy.problem or not copy.data:
        return
    listed = copy.data.get("transformers")
    added: list[str] = []
    for (kind, key), values in zip(_COMMON_METADATA, (labels, annotations), strict=True):
        if not values:
            continue
        name = f"gpulint-flux-common-{key}.yaml"
        with open(os.path.join(os.path.dirname(view.inside(own)), name), "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "apiVersion": "builtin",
                    "kind": kind,
                    "metadata": {"name": f"flux-common-metadata-{key}"},
                    key: dict(values),
                    "fieldSpecs": [{"path": f"metadata/{key}", "create": True}],
                },
                handle,
            )
        added.append(name)
    _in_view_copy(view, own, transformers=[*(listed if isinstance(listed, list) else []), *added])


def _contents(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _in_view_copy(view: View, own: str, **fields: Any) -> None:
    """The view's copy of the overlay's kustomization with ``fields`` set as Flux's generator sets them; the user's
    file is untouched."""
    copy = read_kustomization(view.inside(own))
    if copy.problem or not copy.data:
        return  # kustomize refuses it as written: said by the build
    data = dict(copy.data)
    data.update(fields)
    with open(view.inside(own), "w", encoding="utf-8") as handle:  # JSON is YAML: kustomize reads it as written
        json.dump(data, handle, default=str)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# kustomize's words for the wrapper gpulint adds (accumulating the overlay as a resource), not the user's
_WRAPPER = re.compile(
    r"^accumulating resources: accumulation err='accumulating resources from '[^']*': '[^']*' must resolve to a "
    r"file': (?:recursed accumulation of path|couldn't make target for path) '[^']*': "
)


# kustomize wraps a builtin's failure with the builtin's whole config before the cause (api/internal/target/kusttarget.go
# configureBuiltinPlugin: "trouble configuring builtin %s with config: `\n%s`: CAUSE"): the cause is what the user reads
_BUILTIN_CONFIG = re.compile(r"trouble configuring builtin (\w+) with config: `.*?`: ", re.S)


# kubectl kustomize reports through klog: `E1207 07:28:09.522672 1971 run.go:72] "command failed" err="<error>"`.
_KLOG = re.compile(r'^[EWF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] "command failed" err="(.*)"$')


# ... or, for an error of several lines, opens it with `err=<` and closes it with a line `>`.
_KLOG_OPEN = re.compile(r'^[EWF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] "command failed" err=<$')


def _klog_error(found: re.Match[str]) -> str:
    """The error of a klog line, its Go-quoted escapes read back."""
    return found.group(1).replace('\\"', '"').replace("\\\\", "\\")


def _failure(
    what: str, stderr: str, directory: str, display: str, own: str, own_display: str, repository: str = ""
) -> RenderProblem:
    lines = [_KLOG.sub(_klog_error, line.strip()) for line in stderr.strip().splitlines() if line.strip()]
    if any(_KLOG_OPEN.match(line) for line in lines):
        lines = [line for line in lines if not _KLOG_OPEN.match(line) and line != ">"]
    # kustomize's deprecation notes come first on stderr ("# Warning: 'commonLabels' is deprecated..."): the error
    # is what follows them.
    lines = [line for line in lines if not line.startswith("# Warning:")] or lines
    message = " ".join(lines).removeprefix("error: ").removeprefix("Error: ") or f"{what} failed"
    message = _BUILTIN_CONFIG.sub(r"builtin \1: ", _WRAPPER.sub("", message))
    # An EOF while fetching a URL is the network's too (the server closed the connection mid-answer).
    environment = any(marker in message for marker in _ENVIRONMENT) or ("://" in message and "EOF" in message)
    line = _line_of_entry(own, message)
    restricted = bool(repository) and _RESTRICTED in message
    builder = built_unrestricted(directory, repository) if restricted else ""
    flux = built_by_flux(directory, repository) if restricted and not builder else ""
    if flux:
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; the Flux Kustomization at {flux} builds it, and Flux builds with kustomize's "
            "load restrictor off inside the repository, which gpulint does not turn on: the overlay was not checked",
            Severity.WARNING,
        )
    if builder:
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; {os.path.relpath(builder, repository)} builds it with "
            "--load-restrictor=LoadRestrictionsNone, which gpulint does not turn on: the overlay was not checked",
            Severity.WARNING,
        )
    missing = bool(repository) and not flux and not builder and _TARGET_MISSING.search(message) is not None
    if _TARGET_MISSING.search(message) is not None and _is_component(own):
        # built alone because no kustomization found lists it: its targets are its users' (maybe outside the repository)
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; a kustomize Component patches what the kustomizations that list it in "
            "components: hold, and none found in the repository builds with it: the Component was not checked",
            Severity.INFO,
        )
    completed = built_by_flux(directory, repository, with_components=True) if missing else ""
    if completed:
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; the Flux Kustomization at {completed} builds it with the components it lists "
            "(spec.components), which gpulint adds only when each is a kustomize Component inside the repository and "
            "the overlay builds with them: the overlay was not checked",
            Severity.WARNING,
        )
    edited = built_after_edit(directory, repository) if repository and not environment else ""
    if edited:
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; {os.path.relpath(edited, repository)} changes kustomizations with "
            "`kustomize edit` before it builds this overlay, which gpulint does not run: the overlay was not checked",
            Severity.WARNING,
        )
    if holds_nothing(own):
        return RenderProblem(
            own_display,
            line,
            1,
            f"{what} failed: {message}; it sets nothing yet: a tool fills it in (kustomize edit add), the overlay "
            "was not checked",
            Severity.WARNING,
        )
    if environment:
        hint = (
            "render helmCharts with --kustomize-enable-helm"
            if "--enable-helm" in message
            else "it runs a plugin, which needs kustomize's --enable-alpha-plugins; gpulint runs no program a "
            "repository names"
            if "external plugins disabled" in message
            else "a remote base or chart could not be fetched; render where it is reachable, or vendor it"
        )
        return RenderProblem(
            own_display, line, 1, f"{what} failed: {message}; the overlay was not checked ({hint})", Severity.WARNING
        )
    return RenderProblem(own_display, line, 1, f"{what} failed: {message}", Severity.ERROR)


def _line_of_entry(kustomization: str, message: str) -> int:
    """The line of the kustomization entry the message quotes ('missing.yaml', a patch's target)."""
    try:
        with open(kustomization, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1024 * 1024).splitlines()
    except OSError:
        return 1
    for quoted in re.findall(r"'([^'\s]+)'", message):
        for number, line in enumerate(lines, 1):
            if quoted in line and not line.lstrip().startswith("#"):
                return number
    return 1


@dataclass
class _Places:
    """The overlay on disk, how its files are shown, and the files read to place findings (cached)."""

    directory: str
    display: str
    wrapper: str
    view: View
    kustomizations: dict[str, Kustomization] = field(default_factory=dict)
    files: dict[str, LoadedFile | None] = field(default_factory=dict)
    inline: dict[tuple[str, Path], tuple[list[LocatedDocument], int, int]] = field(default_factory=dict)

    def shown(self, absolute: str) -> str:
        relative = os.path.relpath(absolute, self.directory)
        return os.path.normpath(os.path.join(self.display, relative))

    def resolve(self, recorded: str) -> str:
        """A path kustomize recorded (relative to the wrapper) -> absolute."""
        return self.view.original(os.path.join(self.wrapper, recorded))

    def kustomization(self, path: str) -> Kustomization:
        if path not in self.kustomizations:
            self.kustomizations[path] = read_kustomization(path)
        return self.kustomizations[path]

    def file(self, path: str) -> LoadedFile | None:
        if path not in self.files:
            from gpulint.lint.inputs.sources import SourceError, read_file

            try:
                raw = read_file(path, limit=MAX_RESOURCE_BYTES).content
                self.files[path] = load_bytes(self.shown(path), raw)
            except SourceError:
                self.files[path] = None
        return self.files[path]


def _annotation(data: dict[str, Any], name: str) -> Any:
    raw = dig(data, "metadata", "annotations", name)
    if not isinstance(raw, str):
        return None
    value = load_embedded(raw)  # an object of the repository's may carry an annotation of that name
    return None if isinstance(value, NotParsed) else value


def _strip(data: dict[str, Any]) -> None:
    annotations = dig(data, "metadata", "annotations")
    if isinstance(annotations, dict):
        annotations.pop(ORIGIN, None)
        annotations.pop(TRANSFORMATIONS, None)
        if not annotations:
            del data["metadata"]["annotations"]


def map_documents(loaded: LoadedFile, places: _Places) -> LoadedFile:
    documents: list[LocatedDocument] = []
    for document in loaded.documents:
        data = document.data
        if not isinstance(data, dict):
            documents.append(document)
            continue
        origin = mapping(_annotation(data, ORIGIN))
        transformations = [mapping(t) for t in sequence(_annotation(data, TRANSFORMATIONS))]
        _strip(data)
        origin_object = _ObjectOrigin(places, data, origin, transformations)
        file, _, _ = origin_object.root()
        documents.append(mapped(document, file, place_path=origin_object.place, place_fix=origin_object.fix))
        if file not in loaded.texts:
            source = places.file(places.resolve(text(origin.get("path")))) if origin.get("path") else None
            if source is not None:
                loaded.texts[file] = source.text
        for generated in origin_object.generated_sources():  # their comments suppress findings placed in them
            source = places.file(generated)
            if source is not None:
                loaded.texts.setdefault(places.shown(generated), source.text)
    loaded.documents = documents
    return loaded


@dataclass
class _ObjectOrigin:
    places: _Places
    data: dict[str, Any]
    origin: dict[str, Any]
    transformations: list[dict[str, Any]]
    _resource: tuple[LocatedDocument, str] | None = None
    _looked: bool = False

    def resource(self) -> tuple[LocatedDocument, str] | None:
        """The document of the base resource the object came from, and its file as shown."""
        if not self._looked:
            self._looked = True
            recorded = text(self.origin.get("path"))
            if recorded and not self.origin.get("repo") and not self.origin.get("configuredBy"):
                absolute = self.places.resolve(recorded)
                loaded = self.places.file(absolute)
                if loaded is not None:
                    found = _same_object(loaded.documents, self.data)
                    if found is not None:
                        self._resource = (found, loaded.path)
        return self._resource

    def root(self) -> tuple[str, int, int]:
        resource = self.resource()
        if resource is not None:
            line, column = resource[0].locate(())
            return resource[1], line, column
        configured_in = text(self.origin.get("configuredIn"))
        if configured_in:  # a generated object: its generator's kustomization
            return self.places.shown(self.places.resolve(configured_in)), 1, 1
        own = kustomization_file(self.places.directory) or os.path.join(self.places.directory, "kustomization.yaml")
        return self.places.shown(own), 1, 1

    def place(self, path: Path, on_key: bool) -> tuple[str, int, int] | None:
        patched = self._patched(path, on_key)
        if patched is not None:
            return patched
        resource = self.resource()
        if resource is not None:
            document, shown = resource
            line, column = document.locate(path, on_key)
            return shown, line, column
        return self._generated(path, on_key) or self.root()

    def _generator(self) -> Kustomization | None:
        """The kustomization whose configMapGenerator made the object, if one did."""
        configured_in = text(self.origin.get("configuredIn"))
        if text(mapping(self.origin.get("configuredBy")).get("kind")) != GENERATOR or not configured_in:
            return None
        return self.places.kustomization(self.places.resolve(configured_in))

    def generated_sources(self) -> list[str]:
        """The files (absolute) a generator read for the object's data, one per key."""
        kustomization = self._generator()
        if kustomization is None:
            return []
        name = text(dig(self.data, "metadata", "name"))
        found = (written(kustomization, name, key) for key in mapping(self.data.get("data")) if isinstance(key, str))
        return list(dict.fromkeys(source.file for source in found if source is not None))

    def _generated(self, path: Path, on_key: bool) -> tuple[str, int, int] | None:
        """A data field of a ConfigMap a generator made: in the file (or line) the generator read for its key."""
        kustomization = self._generator()
        if kustomization is None or len(path) < 2 or path[0] != "data" or not isinstance(path[1], str):
            return None
        source = written(kustomization, text(dig(self.data, "metadata", "name")), path[1])
        if source is None:
            return None
        line, column = place_in_source(source, path[2:], on_key, self.places.file)
        return self.places.shown(source.file), line, column

    def fix(self, fix: Fix) -> Fix:
        """The fix applied to the plain YAML that holds the field: the patch that set it, else the base
        resource. A field of an inline patch, a generated or a remote object is not edited."""
        target = self._fix_target(fix.path)
        if isinstance(target, str):
            return replace(fix, refused=target)
        file, fs_path, index, inner = target
        source = None
        if fix.source_path is not None:
            found = self._fix_target(fix.source_path)
            if not isinstance(found, str) and found[1] == fs_path and found[2] == index:
                source = found[3]  # the value to copy is in the same document: keep its spelling
        return replace(fix, document=index, path=inner, source_path=source, file=file, fs_path=fs_path)

    def _fix_target(self, path: Path) -> tuple[str, str, int, Path] | str:
        for kustomization, patch, document, inner in self._patches_setting(path):
            if patch.file is None:
                return f"the field is set by an inline patch in {self.places.shown(kustomization.path)}; edit it there"
            return self.places.shown(patch.file), patch.file, document.index, inner
        resource = self.resource()
        if resource is None:
            return "the object is generated by kustomize or comes from a remote base; edit its source"
        document, shown = resource
        absolute = self.places.resolve(text(self.origin.get("path")))
        return shown, absolute, document.index, path

    def _names(self) -> set[str]:
        names = {text(dig(self.data, "metadata", "name"))}
        resource = self.resource()
        if resource is not None:
            names.add(text(dig(resource[0].data, "metadata", "name")))
        return names - {""}

    def _patched(self, path: Path, on_key: bool) -> tuple[str, int, int] | None:
        for kustomization, patch, document, inner in self._patches_setting(path):
            shown, line_shift, column_shift = self._patch_place(kustomization, patch)
            line, column = document.locate(inner, on_key)
            return shown, line + line_shift, column + column_shift
        return None

    def _patch_place(self, kustomization: Kustomization, patch: Patch) -> tuple[str, int, int]:
        if patch.file is not None:
            return self.places.shown(patch.file), 0, 0
        _, line_shift, column_shift = self.places.inline[(kustomization.path, patch.entry)]
        return self.places.shown(kustomization.path), line_shift, column_shift

    def _patches_setting(self, path: Path) -> Iterator[tuple[Kustomization, Patch, LocatedDocument, Path]]:
        """The patches that set the field at ``path``, the last applied first."""
        if not path:
            return
        configured = [
            self.places.resolve(text(t.get("configuredIn")))
            for t in self.transformations
            if text(mapping(t.get("configuredBy")).get("kind")) in _PATCH_TRANSFORMERS and t.get("configuredIn")
        ]
        # the last patch applied wins: kustomizations outermost first, and each one's patches last first
        for kustomization_path in reversed(list(dict.fromkeys(configured))):
            kustomization = self.places.kustomization(kustomization_path)
            for patch in reversed(kustomization.patches):
                for document in self._patch_documents(kustomization, patch):
                    if patch.json6902:
                        if patch.target and not self._targets(patch, None):
                            continue
                        inner = _json6902_path(document.data, path, self.data)
                    else:
                        if not self._targets(patch, document.data):
                            continue
                        inner = _merge_path(document.data, path, self.data)
                    if inner is not None:
                        yield kustomization, patch, document, inner

    def _targets(self, patch: Patch, patch_data: Any) -> bool:
        kind, names = text(self.data.get("kind")), self._names()
        target = patch.target
        if target:
            if target.get("kind") and text(target.get("kind")) != kind:
                return False
            wanted = text(target.get("name"))
            if wanted and not any(_name_matches(wanted, name) for name in names):
                return False
            return True
        if not isinstance(patch_data, dict):
            return False
        return text(patch_data.get("kind")) == kind and text(dig(patch_data, "metadata", "name")) in names

    def _patch_documents(self, kustomization: Kustomization, patch: Patch) -> list[LocatedDocument]:
        if patch.file is not None:
            loaded = self.places.file(patch.file)
            return loaded.documents if loaded else []
        key = (kustomization.path, patch.entry)
        if key not in self.places.inline:
            self.places.inline[key] = _inline_patch(kustomization, patch.entry)
        return self.places.inline[key][0]


def _inline_patch(kustomization: Kustomization, entry: Path) -> tuple[list[LocatedDocument], int, int]:
    """An inline patch (``patch: |``) parsed on its own, with the shift of its lines and columns
    into the kustomization file."""
    document = kustomization.document
    value = dig(kustomization.data, *entry)
    if document is None or not isinstance(value, str):
        return [], 0, 0
    line, column = document.locate(entry)  # the scalar's first line: `|` or `|-`
    text_lines = document.text.split("\n")
    header = text_lines[line - 1] if line - 1 < len(text_lines) else ""
    block = header[column - 1 :].lstrip().startswith(("|", ">"))
    if not block:  # a quoted or plain patch: every finding at the entry
        return [], 0, 0
    following = next((t for t in text_lines[line:] if t.strip()), "")
    indent = len(following) - len(following.lstrip(" "))
    parsed = load_text(document.path, value)
    return parsed.documents, line, indent


def _same_object(documents: list[LocatedDocument], data: dict[str, Any]) -> LocatedDocument | None:
    """The document of a resource file that became ``data`` (its name may have gained a prefix)."""
    kind, name = text(data.get("kind")), text(dig(data, "metadata", "name"))
    candidates = [d for d in documents if isinstance(d.data, dict) and text(d.data.get("kind")) == kind]
    for document in candidates:
        if text(dig(document.data, "metadata", "name")) == name:
            return document
    for document in candidates:
        own = text(dig(document.data, "metadata", "name"))
        if own and own in name:
            return document
    return candidates[0] if len(candidates) == 1 else None


def _name_matches(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None  # kustomize selects target names by regexp
    except re.error:
        return pattern == name


def _merge_path(patch: Any, path: Path, rendered: Any) -> Path | None:
    """``path`` of the rendered object as a path in a strategic-merge patch, when the patch sets it.

    List items are matched by their merge key (``name`` for containers, env, volumes ...), as the
    strategic merge matches them; a list without one is replaced whole, so it is matched by index."""
    inner: list[Any] = []
    node, seen = patch, rendered
    parent_key = ""
    for step in path:
        if isinstance(step, str):
            if not isinstance(node, dict) or step not in node:
                return None
            node, seen = node[step], seen.get(step) if isinstance(seen, dict) else None
            inner.append(step)
            parent_key = step
            continue
        if not isinstance(node, list) or not isinstance(seen, list) or not 0 <= step < len(seen):
            return None
        item = seen[step]
        key = _MERGE_KEYS.get(parent_key, "name")
        if isinstance(item, dict) and key in item:
            index = next((i for i, p in enumerate(node) if isinstance(p, dict) and p.get(key) == item[key]), None)
        else:
            index = step if step < len(node) else None
        if index is None:
            return None
        node, seen = node[index], item
        inner.append(index)
    return tuple(inner)


def _pointer(pointer: str, rendered: Any) -> list[Any]:
    steps: list[Any] = []
    node = rendered
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            index = len(node) - 1 if token == "-" else (_list_index(token))
            steps.append(index)
            node = node[index] if 0 <= index < len(node) else None
        else:
            steps.append(token)
            node = node.get(token) if isinstance(node, dict) else None
    return steps


def _json6902_path(operations: Any, path: Path, rendered: Any) -> Path | None:
    """Where in a JSON6902 patch (a list of operations) the field at ``path`` was set: the ``value``
    of the last add/replace/copy/move whose ``path`` is the field or one of its parents."""
    found = None
    for index, operation in enumerate(sequence(operations)):
        operation = mapping(operation)
        if text(operation.get("op")) not in ("add", "replace", "copy", "move") or not isinstance(
            operation.get("path"), str
        ):
            continue
        steps = tuple(_pointer(operation["path"], rendered))
        if tuple(path[: len(steps)]) == steps:
            rest = tuple(path[len(steps) :])
            found = (index, "value", *rest) if "value" in operation else (index, "path")
    return found


def _list_index(token: str) -> int:
    """A JSON pointer's list index; -1 (no item) for anything but a decimal an int64 holds."""
    index = decimal(token)
    return -1 if index is None else index


def _is_component(own: str) -> bool:
    return os.path.isfile(own) and read_kustomization(own).data.get("kind") == "Component"
