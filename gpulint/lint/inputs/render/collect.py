"""The sources layer's side of rendering: which walked files a chart or overlay consumes, what they
render to, and which files are skipped as no manifests (with a debug note)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from gpulint.kube.fields import mapping, sequence
from gpulint.lint.inputs.parsed_once import Parses
from gpulint.lint.inputs.render import layout
from gpulint.lint.inputs.render.flux_builds import FluxObjects, built_with_component, flux_objects
from gpulint.lint.inputs.render.noise import not_kubernetes
from gpulint.lint.inputs.render.options import RenderOptions

if TYPE_CHECKING:  # the renderers' tools (gpulint.lint.inputs.render.tools) are imported for charts and overlays
    from gpulint.lint.inputs.render.releases import Releases
    from gpulint.lint.inputs.render.rendered import Rendered, RenderProblem
    from gpulint.lint.inputs.render.tools import Tool
    from gpulint.lint.inputs.sources import Collection, CollectOptions, Source


class Renderer:
    """One per collection: finds the binaries once, reads each kustomization once."""

    def __init__(self, options: RenderOptions | None, collection: Collection) -> None:
        self.options = options
        self.active = options is not None  # None: plain reading (inventories, policies): nothing skipped
        self.enabled = options is not None and options.enabled
        self.collection = collection
        self._tools: dict[str, Tool | None] = {}
        self._kustomizations: dict[str, list[layout.Kustomization]] = {}
        self._neighbour_sets: dict[str, list[layout.Kustomization]] = {}  # folder -> the kustomizations under it
        self._partial_files: dict[str, set[str]] = {}  # folder -> the patches its kustomizations read or leave
        self._rendered: set[str] = set()  # real paths of the charts and overlays rendered: each once
        self._judged: set[str] = set()  # real paths of the Components named alone, checked through a Flux build
        self._builds: dict[str, bool] = {}  # real path of an overlay over a base named alone -> whether it builds
        self._releases: dict[str, Releases] = {}  # per repository: the releases it gives its charts
        self._entries_read: set[str] = set()  # real paths of the kustomizations read for their helmCharts: each once
        self._flux: dict[str, FluxObjects] = {}  # per repository (real path): its Flux objects, read once
        self._flux_lock = threading.Lock()  # the overlays render in threads
        # the files the release readers parse, handed to the sources that are them
        self.parses = Parses(scripts=collection.scripts)

    def flux_objects(self, top: str) -> FluxObjects:
        """The Flux Kustomizations and ConfigMaps of the repository at ``top``, read once per run."""
        with self._flux_lock:
            if top not in self._flux:
                self._flux[top] = flux_objects(top)
            return self._flux[top]

    def _first_time(self, directory: str) -> bool:
        key = os.path.realpath(directory)
        if key in self._rendered:
            return False
        self._rendered.add(key)
        return True

    # ------------------------------------------------------------------ binaries

    def tool(self, name: str) -> Tool | None:
        if name not in self._tools:
            from gpulint.lint.inputs.render.tools import find

            assert self.options is not None
            self._tools[name] = find(name, getattr(self.options, name))
        return self._tools[name]

    def kustomize_tool(self) -> Tool | None:
        """kustomize when named (or on PATH without kubectl named), else `kubectl kustomize`."""
        assert self.options is not None
        if self.options.kustomize:
            return self.tool("kustomize")
        if self.options.kubectl:
            return self.tool("kubectl")
        return self.tool("kustomize") or self.tool("kubectl")

    # ------------------------------------------------------------------ named files

    def skipped(self, display: str) -> bool:
        """A file that is no manifest (by its name or place): a debug note, never read."""
        if not self.active:
            return False
        what = not_kubernetes(display)
        if what is None:
            return False
        self.collection.debug_notes.append(f"{display}: skipped: {what}, not a Kubernetes manifest")
        return True

    def values_file(self, display: str) -> bool:
        from gpulint.lint.inputs.render.noise import values_file

        return self.active and values_file(display)

    def keep_named(self, path: str) -> bool:
        """A file named on the command line (as pre-commit names them): read unless it is no manifest
        or a kustomize patch (a partial object, checked when its overlay is rendered)."""
        if self.skipped(path):
            return False
        if not self.active:
            return True
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in self._kustomizations:
            self._kustomizations[directory] = list(layout.enclosing_kustomizations(path))
        partial = self._partial_files.get(directory)
        if partial is None:  # once per folder: pre-commit names many files of one overlay
            enclosing = self._kustomizations[directory]
            partial = self._partial_files[directory] = layout.patch_files(enclosing) | set(
                layout.unused_patch_files(enclosing)
            )
        if os.path.realpath(path) in partial:
            self.collection.debug_notes.append(
                f"{path}: skipped: a kustomize patch (a partial object); lint its overlay's directory to check it rendered"
            )
            return False
        return True

    def named_owner(self, path: str, sources: list[Source]) -> bool:
        """A file named on the command line (pre-commit names the changed files) that belongs to a chart
        (its templates, values or Chart.yaml) or is listed by a kustomization (a resource or a patch):
        the chart or overlay is rendered instead, once. True when the file is covered so."""
        if not self.enabled:
            return False
        owner = self._owner(path)
        if owner is None:
            return False
        kind, directory = owner
        display = os.path.normpath(
            os.path.join(os.path.dirname(path), os.path.relpath(directory, os.path.dirname(os.path.abspath(path))))
        )
        if kind == "helm":  # without helm, _chart's warning stands for the chart: its templates are not manifests
            if self._first_time(directory):
                rendered = [job() for job in self._chart(display, path)]
                _said_once(rendered)  # a chart's own fault, found by each release's render
                sources.extend(rendered)
            return True
        found = layout.kustomization_file(directory)
        if found is None:
            return False
        kustomization = layout.read_kustomization(found)
        if os.path.realpath(path) == os.path.realpath(found):  # named alone: its helmCharts, as its folder's walk
            sources.extend(self._chart_entries([(kustomization, os.path.normpath(path))]))
        if kustomization.data.get("kind") == "Component":
            if os.path.realpath(directory) in self._judged:  # another of its files named: that render covers it
                return True
            judged = self._judge_component(kustomization, display, path)
            if judged is None:  # no kustomize: its patches are partial objects, its other files read raw
                if os.path.realpath(path) not in layout.patch_files([kustomization]):
                    return False
                self.collection.debug_notes.append(
                    f"{os.path.relpath(path)}: skipped: a patch of the kustomize Component {display}, not rendered"
                )
                return True
            self._judged.add(os.path.realpath(directory))
            sources.extend(judged)
            return True
        built = self._as_built(kustomization, display, path)
        if built is not None:  # a base: built as the overlays over it build it
            sources.extend(built)
        elif self._first_time(directory):
            job = self._overlay(kustomization, display, path)
            if job is not None:
                sources.append(job())
        return self.kustomize_tool() is not None  # without one, the overlay's warning, and the file read raw

    def _as_built(self, base: layout.Kustomization, display: str, named: str) -> list[Source] | None:
        """A base named alone (a file of it, or its folder), built as each overlay over it builds it, each its own
        render (two overlays that disagree are never merged); None when nothing builds it or no overlay over it
        builds (a failure of theirs is no fault of the base's): the base is then built alone, as named."""
        if not self.enabled or self.kustomize_tool() is None:
            return None
        neighbours = self._neighbours(base.directory)
        over = layout.builders(base, neighbours)
        if not over:
            return None
        shown = [os.path.normpath(os.path.join(display, os.path.relpath(b.directory, base.directory))) for b in over]
        if len(over) > layout.MAX_BUILDERS:
            self.collection.debug_notes.append(
                f"{display}: built by {len(over)} overlays; checked as the first {layout.MAX_BUILDERS} build it, "
                f"not as {', '.join(shown[layout.MAX_BUILDERS :])}"
            )
        keys = [os.path.realpath(b.directory) for b in over[: layout.MAX_BUILDERS]]
        todo = [(key, where, b) for key, where, b in zip(keys, shown, over, strict=False) if self._first_time(key)]
        jobs = [job for _, where, b in todo if (job := self._overlay(b, where, named)) is not None]
        built: list[Source] = []
        own = frozenset(layout.consumed_files(layout.closure(base, neighbours)))
        for (key, where, _), source in zip(todo, _run_all(jobs), strict=True):
            self._builds[key] = source.rendered is not None and not source.rendered.problems
            if self._builds[key]:
                assert source.rendered is not None
                source.rendered.reported = own  # the overlay's other resources are their own units'
                built.append(source)
            else:  # its own fault is its own unit's to say
                self.collection.debug_notes.append(f"{display}: the overlay {where} over it does not build; not used")
        if not any(self._builds.get(key, True) for key in keys):
            return None
        self.collection.debug_notes.append(
            f"{display}: a kustomize base, checked as the overlays over it build it: "
            + ", ".join(where for key, where in zip(keys, shown, strict=False) if self._builds.get(key, True))
        )
        return built

    def _through_flux(self, component: layout.Kustomization, display: str, named: str) -> Source | None:
        """A Component's file named alone, judged as the first overlay a Flux Kustomization builds with it builds it
        (as the whole repository's walk says a component's findings once, from the first render built with it), its
        findings limited to the Component's files; None when no Flux Kustomization appends it or none of those
        overlays builds with it (the file is then read as before)."""
        from gpulint.lint.inputs.render.view import boundary

        if not self.enabled or self.kustomize_tool() is None:
            return None
        tree = boundary(component.directory, named)  # what the overlay's render reads: the work tree
        users = built_with_component(component.directory, tree, self.flux_objects(tree))
        own = frozenset(layout.consumed_files([component]))
        tried = 0
        for folder in users:
            found = layout.kustomization_file(folder)
            if found is None or tried >= layout.MAX_BUILDERS or not self._first_time(folder):
                continue
            tried += 1
            where = os.path.normpath(os.path.join(display, os.path.relpath(folder, component.directory)))
            job = self._overlay(layout.read_kustomization(found), where, named)
            source = job() if job is not None else None
            result = source.rendered if source is not None else None
            if (
                result is None
                or result.problems
                or os.path.realpath(component.directory) not in {os.path.realpath(c) for c in result.components}
            ):
                continue
            result.reported = own  # the overlay's other resources are their own units'
            self.collection.debug_notes.append(
                f"{display}: a kustomize Component, checked as {where} builds it with it (Flux spec.components)"
            )
            return source
        return None

    def _judge_component(self, component: layout.Kustomization, display: str, named: str) -> list[Source] | None:
        """A Component checked alone: through a Flux build that appends it, else as kustomize builds it."""
        through = self._through_flux(component, display, named)
        return [through] if through is not None else self._as_component(component, display, named)

    def _as_component(self, component: layout.Kustomization, display: str, named: str) -> list[Source] | None:
        """A Component checked alone (a file of it, or its folder), as the whole repository's walk checks it: through
        the first plain kustomization that lists it in ``components:`` and builds, its findings limited to the
        Component's files; else built alone, as kustomize builds a Component named directly (api/krusty/
        component_test.go, v5.8.1). [] when a render of this run already holds it; None without kustomize."""
        if not self.enabled or self.kustomize_tool() is None:
            return None
        users = self._component_users(component)
        if any(os.path.realpath(u.directory) in self._rendered for u in users):
            return []  # that overlay's render reports the Component's files
        own = frozenset(layout.consumed_files([component]))
        for user in users[: layout.MAX_BUILDERS]:
            self._rendered.add(os.path.realpath(user.directory))
            where = os.path.normpath(os.path.join(display, os.path.relpath(user.directory, component.directory)))
            job = self._overlay(user, where, named)
            source = job() if job is not None else None
            if source is None or source.rendered is None or source.rendered.problems:
                self.collection.debug_notes.append(f"{display}: {where}, which lists it, does not build; not used")
                continue
            source.rendered.reported = own  # the overlay's other resources are their own units'
            self.collection.debug_notes.append(
                f"{display}: a kustomize Component, checked as {where} builds it with it (components:)"
            )
            return [source]
        if not self._first_time(component.directory):
            return []
        job = self._overlay(component, display, named)
        if job is None:
            return None
        alone = job()
        if alone.rendered is not None:  # what it builds from is its own units' (said once, there)
            alone.rendered.reported = own
        return [alone]

    def _component_users(self, component: layout.Kustomization) -> list[layout.Kustomization]:
        """The plain kustomizations that list the Component in ``components:``, found in the nearest folder above it
        that holds one (``components/gpu`` is listed from ``apps/x/overlays/prod``), within the git work tree."""
        directory = component.directory
        for _ in range(MAX_COMPONENT_LEVELS):
            users = layout.component_users(component, self._neighbours(directory))
            if users:
                return users
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        return []

    def _neighbours(self, directory: str) -> list[layout.Kustomization]:
        """The kustomizations under the folder above an overlay's (its siblings' and their subfolders'), where the
        overlays that build a base usually are; the walk honours .gitignore and is bounded, and never leaves the git
        work tree (none: no walk, the overlay is built as named)."""
        from gpulint.lint.inputs.file_walk import Walk
        from gpulint.lint.inputs.repo_index import work_tree

        region = os.path.dirname(directory)
        tree = work_tree(directory)
        if tree is None or not (region == tree or region.startswith(tree + os.sep)):
            return []
        if region not in self._neighbour_sets:
            walk = Walk(region, ())
            for count, _ in enumerate(walk.files()):
                if count >= MAX_NEIGHBOUR_FILES:
                    break
            found = (layout.kustomization_file(d) for d in walk.directories)
            self._neighbour_sets[region] = [layout.read_kustomization(f) for f in found if f is not None]
        return self._neighbour_sets[region]

    def _owner(self, path: str) -> tuple[str, str] | None:
        from gpulint.lint.inputs.render.noise import values_file

        absolute = os.path.abspath(path)
        directory = os.path.dirname(absolute)
        for _ in range(8):
            if layout.is_chart(directory):
                relative = os.path.relpath(absolute, directory)
                top = relative.split(os.sep, 1)[0]
                if (
                    top == "templates"
                    or relative == layout.CHART_FILE
                    or (os.sep not in relative and values_file(relative))
                ):
                    return "helm", directory
                return None
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        parent_directory = os.path.dirname(absolute)
        if layout.kustomization_file(parent_directory) == absolute:  # pre-commit names it when only it changed
            return "kustomize", parent_directory
        if parent_directory not in self._kustomizations:
            self._kustomizations[parent_directory] = list(layout.enclosing_kustomizations(path))
        real = os.path.realpath(absolute)
        for kustomization in self._kustomizations[parent_directory]:
            if real in {os.path.realpath(f) for f in kustomization.local_files}:
                return "kustomize", kustomization.directory
        return None

    def stdin(self, display: str, raw: bytes, options: CollectOptions) -> Source | None:
        from gpulint.lint.inputs.sources import STDIN_DISPLAY, Source, excluded

        if display != STDIN_DISPLAY:
            if options.force_exclude and excluded(display, options.exclude):
                return None
            if self.skipped(display):
                return None
        if self.active:
            from gpulint.lint.inputs.render.helm import stdin_rendered

            rendered = stdin_rendered(display, raw)
            if rendered is not None:
                return Source(display, content=raw, rendered=rendered)
        return Source(display, content=raw, scripts=self.collection.scripts)

    # ------------------------------------------------------------------ walked directories

    def directory(
        self, root: str, directories: Sequence[str], charts: Sequence[str], sources: list[Source]
    ) -> set[str]:
        """Render the charts and overlays of a walked directory (appending their sources); returns the
        real paths of the files they consume, which are not read raw."""
        if not self.active:
            return set()
        consumed: set[str] = set()
        jobs: list[Callable[[], Source]] = [
            job for chart in charts if self._first_time(chart) for job in self._chart(chart, root)
        ]
        kustomizations = []
        for directory in directories:
            found = layout.kustomization_file(directory)
            if found is not None:
                kustomizations.append(layout.read_kustomization(found))
        if kustomizations:
            consumed |= self._not_raw(kustomizations)
            shown = [os.path.join(_display(root, k.directory), os.path.basename(k.path)) for k in kustomizations]
            sources.extend(self._chart_entries(list(zip(kustomizations, shown, strict=True))))
        pending = layout.roots(kustomizations) if kustomizations else []
        disabled = layout.disabled_directories(kustomizations) if kustomizations else set()
        rendered: list[Source] = []
        claimed: set[str] = set()  # files of the Flux components a render of this walk reports
        named = next((k for k in pending if os.path.realpath(k.directory) == os.path.realpath(root)), None)
        if named is not None and os.path.realpath(root) not in disabled and named.data.get("kind") != "Component":
            # a base folder named alone (the overlays over it are outside the walk): built as they build it
            built = self._as_built(named, _display(root, named.directory), root)
            if built is not None:
                rendered += built
                consumed |= layout.consumed_files(layout.closure(named, kustomizations))
                pending = [k for k in pending if k is not named]
        elif named is not None and os.path.realpath(root) not in disabled:  # a Component's folder named alone
            judged = self._judge_component(named, _display(root, named.directory), root)
            if judged is not None:
                rendered += judged
                pending = [k for k in pending if k is not named]
                if all(s.rendered is not None and not s.rendered.problems for s in judged):
                    consumed |= layout.consumed_files(layout.closure(named, kustomizations))
        for level in range(MAX_FALLBACK_LEVELS):
            overlays: list[tuple[layout.Kustomization, int]] = []  # each with its job's index
            for kustomization in pending:
                if os.path.realpath(kustomization.directory) in disabled:  # switched off: neither rendered nor raw
                    consumed |= layout.consumed_files(layout.closure(kustomization, kustomizations))
                    continue
                if kustomization.data.get("kind") == "Component":
                    continue
                if not self._first_time(kustomization.directory):
                    consumed |= layout.consumed_files(layout.closure(kustomization, kustomizations))
                    continue
                job = self._overlay(kustomization, _display(root, kustomization.directory), root)
                if job is not None:
                    overlays.append((kustomization, len(jobs)))
                    jobs.append(job)
            done = _run_all(jobs)
            failed: list[layout.Kustomization] = []
            for kustomization, index in overlays:
                result = done[index].rendered
                if result is not None and not result.problems:
                    # rendered: its resources (and its bases') are checked in the render, not raw
                    consumed |= layout.consumed_files(layout.closure(kustomization, kustomizations))
                    consumed |= _claim_components(result, kustomizations, claimed)
                elif result is not None:
                    failed.append(kustomization)
            if level:  # the failed overlay's problem stands for its tree: these renders only spare files a raw read
                for source in done:
                    if source.rendered is not None:
                        source.rendered.problems.clear()
            rendered += done
            jobs = []
            # An overlay that failed (a remote base, a file outside its root) builds from others that may build alone
            # (kubeflow/manifests' example/ lists every application's overlay): they are rendered, so that their
            # files are not read raw (a base's Deployment whose selector commonLabels makes).
            pending = _built_from(failed, kustomizations)
            if not pending:
                break
        _said_once(rendered)
        sources.extend(rendered)
        return consumed

    def _chart_entries(self, shown: list[tuple[layout.Kustomization, str]]) -> list[Source]:
        """The kustomizations (each with its path as shown) with helmCharts of the GPU stack's remote charts, read
        once for those releases' values (inputs/chart_entries.py), unless kustomize renders helmCharts
        (--kustomize-enable-helm): then the render holds what the charts make; and those with remote bases, read
        for the releases they install (a render holds no trace of a ref)."""
        from gpulint.lint.inputs.chart_entries import REMOTE_CHARTS, remote_bases
        from gpulint.lint.inputs.sources import Source

        assert self.options is not None
        sources = []
        for k, display in shown:
            if os.path.realpath(k.path) in self._entries_read:
                continue
            charts = not self.options.kustomize_helm and any(
                mapping(entry).get("name") in REMOTE_CHARTS and mapping(entry).get("repo")
                for entry in sequence(k.data.get("helmCharts"))
            )
            if charts or remote_bases(k.path, k.data) is not None:
                self._entries_read.add(os.path.realpath(k.path))
                sources.append(Source(display, k.path, chart_entries=True))
        return sources

    def _not_raw(self, kustomizations: list[layout.Kustomization]) -> set[str]:
        """Patches (partial objects), and what a kustomization lists only in a comment (a disabled
        patch, resource or component, as kubebuilder scaffolds them): never linted raw."""
        skipped: set[str] = set()
        for path in sorted(layout.patch_files(kustomizations)):
            skipped.add(path)
            self.collection.debug_notes.append(
                f"{os.path.relpath(path)}: skipped: a kustomize patch (a partial object), checked as its overlay renders it"
            )
        for path, where in sorted(layout.disabled_files(kustomizations).items()):
            if path not in skipped:
                skipped.add(path)
                self.collection.debug_notes.append(
                    f"{os.path.relpath(path)}: skipped: listed only in a comment of {os.path.relpath(where)} (disabled)"
                )
        for path, where in sorted(layout.unused_patch_files(kustomizations).items()):
            if path not in skipped:
                skipped.add(path)
                self.collection.debug_notes.append(
                    f"{os.path.relpath(path)}: skipped: a kustomize patch {os.path.relpath(where)} does not use"
                )
        return skipped

    def keep(self, path: str, consumed: set[str]) -> bool:
        if self.skipped(path):
            return False
        return not consumed or os.path.realpath(path) not in consumed

    def _chart(self, directory: str, named: str) -> list[Callable[[], Source]]:
        from gpulint.lint.inputs.render.helm import is_library, render_chart
        from gpulint.lint.inputs.render.rendered import not_renderable
        from gpulint.lint.inputs.sources import Source

        options = self.options
        assert options is not None
        if is_library(directory):
            self.collection.debug_notes.append(
                f"{directory}: skipped: a library chart (helpers for other charts; rendered as part of them)"
            )
            return []
        helm = self.tool("helm")
        display = os.path.normpath(directory)
        if helm is None:
            return [lambda: Source(directory, rendered=not_renderable("helm", display, None))]
        # a chart the repository installs with values it gives (helmfile, Argo CD, Flux, kustomize) is checked as
        # each of those releases installs it, instead of with its defaults alone; .gpulint.yaml's settings win
        releases = [] if options.configured(directory) else self.releases(directory, named).of(directory)
        if releases:
            return [
                partial(
                    lambda r: Source(directory, rendered=render_chart(directory, display, options, helm, named, r)), r
                )
                for r in releases
            ]
        return [lambda: Source(directory, rendered=render_chart(directory, display, options, helm, named))]

    def releases(self, directory: str, named: str) -> Releases:
        """The releases of the repository that holds the chart (its boundary: the git work tree), found once."""
        from gpulint.lint.inputs.render.releases import Releases
        from gpulint.lint.inputs.render.view import boundary

        root = boundary(directory, named)
        if root not in self._releases:
            assert self.options is not None
            self._releases[root] = Releases(root, self.options.exclude, self.parses)
        return self._releases[root]

    def _overlay(self, kustomization: layout.Kustomization, display: str, named: str) -> Callable[[], Source] | None:
        from gpulint.lint.inputs.render.kustomize import render_overlay
        from gpulint.lint.inputs.render.rendered import not_renderable
        from gpulint.lint.inputs.sources import Source

        assert self.options is not None
        if not self.enabled:
            return None
        kustomize = self.kustomize_tool()
        if kustomize is None:
            return lambda: Source(display, rendered=not_renderable("kustomize", display, kustomization.path))
        options = self.options
        helm = self.tool("helm") if kustomization.helm_charts and options.kustomize_helm else None
        return lambda: Source(
            display,
            rendered=render_overlay(
                kustomization.directory, display, options, kustomize, helm, named, flux_index=self.flux_objects
            ),
        )


# How many times the overlays a failed overlay builds from are rendered in its place, a level down each time
MAX_FALLBACK_LEVELS = 4


def _built_from(
    failed: list[layout.Kustomization], kustomizations: list[layout.Kustomization]
) -> list[layout.Kustomization]:
    """The overlays of the set the failed ones list (their bases and sub-overlays), each once."""
    by_directory = {os.path.realpath(k.directory): k for k in kustomizations}
    listed = dict.fromkeys(os.path.realpath(d) for k in failed for d in k.local_dirs)
    return [by_directory[d] for d in listed if d in by_directory]


MAX_COMPONENT_LEVELS = 4  # folders above a Component searched for the kustomizations that list it
MAX_NEIGHBOUR_FILES = 2_000  # files walked around a named file's overlay for the overlays that build it
MAX_PARALLEL_RENDERS = 4  # renderers are processes: threads only wait for them


def _run_all(jobs: list[Callable[[], Source]]) -> list[Source]:
    """The renders, several at a time (kustomize and helm spend their time in their own process)."""
    if len(jobs) <= 1:
        return [job() for job in jobs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_RENDERS, len(jobs))) as pool:
        return list(pool.map(lambda job: job(), jobs))


def _claim_components(result: Rendered, kustomizations: list[layout.Kustomization], claimed: set[str]) -> set[str]:
    """The files of the components an overlay was built with as Flux builds it (and of what they build from): checked
    in that render, so not read raw as well, and reported by the first render built with them (the apps of a Flux
    repository share its components, their objects alike: ``${APP}`` is Flux's to fill in), so each finding in them
    is said once, where the build placed it."""
    consumed: set[str] = set()
    for folder in result.components:
        found = layout.kustomization_file(folder)
        if found is not None:
            consumed |= layout.consumed_files(layout.closure(layout.read_kustomization(found), kustomizations))
    result.unreported = frozenset(consumed & claimed)
    claimed |= consumed
    return consumed


def _said_once(sources: list[Source]) -> None:
    """A problem of a base several overlays build from (its remote resource, a file it lacks) is found by
    each of their renders, at the same line of the base: it is said once, by the first."""
    seen: set[RenderProblem] = set()
    for source in sources:
        if source.rendered is None:
            continue
        kept = []
        for problem in source.rendered.problems:
            if problem not in seen:
                seen.add(problem)
                kept.append(problem)
        source.rendered.problems[:] = kept


def _display(root: str, directory: str) -> str:
    """The overlay as a walk shows its files (relative to the directory named)."""
    relative = os.path.relpath(directory, os.path.abspath(root))
    return os.path.normpath(os.path.join(root, relative))
