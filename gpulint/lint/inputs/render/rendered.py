"""A rendered source: the renderer's output, how each of its documents maps back to its own file,
and what went wrong (findings at the file the renderer names)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gpulint.lint.findings import Fix, Path, Severity
from gpulint.lint.inputs.loader import LoadedFile, LoadProblem, LocatedDocument
from gpulint.lint.inputs.render.flux_post_build import Variable, said
from gpulint.lint.inputs.render.tools import MAX_OUTPUT_BYTES, Result

RENDER_FAILED = "not-rendered"


@dataclass(frozen=True)
class RenderProblem:
    file: str  # the file the renderer names (a template, a kustomization, Chart.yaml)
    line: int
    column: int
    message: str
    severity: Severity  # error: the chart/overlay is broken; warning: the environment (offline, not vendored)

    def as_load_problem(self) -> LoadProblem:
        return LoadProblem(
            self.message, self.line, self.column, rule=RENDER_FAILED, severity=self.severity, file=self.file
        )


def stopped(result: Result, file: str, what: str, unit: str, timeout: float) -> RenderProblem | None:
    """The warning for a render its bounds stopped (``what``: the command, "helm template"; ``unit``: "chart" or
    "overlay"), or None when it ran to its end."""
    if result.timed_out:
        said = f"did not finish within {timeout:g} s"
    elif result.too_large:
        said = f"printed more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB"
    else:
        return None
    return RenderProblem(file, 1, 1, f"{what} {said}; the {unit} was not checked", Severity.WARNING)


@dataclass
class MappedDocument(LocatedDocument):
    """A document of rendered output whose positions are those of the file that produced it.

    ``path`` is that file (a template, a base resource); ``place`` turns a position in the rendered
    text (1-based line and column, as LocatedDocument computes them) into one in that file, and
    ``place_path`` (kustomize) finds a field in the file that set it."""

    place: Callable[[int, int], tuple[int, int]] | None = None
    place_path: Callable[[Path, bool], tuple[str, int, int] | None] | None = None
    place_fix: Callable[[Fix], Fix] | None = None  # kustomize: the fix in the base or patch file
    fix_refusal: str = ""  # why a fix cannot be applied to the source (template logic)

    def retarget(self, fix: Fix) -> Fix:
        if self.place_fix is not None:
            return self.place_fix(fix)
        return replace(fix, refused=self.fix_refusal or "the object was rendered; its source cannot be fixed")

    def locate(self, path: Path, on_key: bool = False) -> tuple[int, int]:
        if self.place_path is not None:
            placed = self.place_path(path, on_key)
            if placed is not None:
                return placed[1], placed[2]
        line, column = super().locate(path, on_key)
        return self.place(line, column) if self.place is not None else (line, column)

    def locate_in_string(self, path: Path, offset: int) -> tuple[int, int]:
        if self.place_path is not None:
            return self.locate(path)
        line, column = super().locate_in_string(path, offset)
        return self.place(line, column) if self.place is not None else (line, column)

    def file_of(self, path: Path, on_key: bool = False) -> str:
        """The file a finding at ``path`` belongs to (a patch may have set the field)."""
        if self.place_path is not None:
            placed = self.place_path(path, on_key)
            if placed is not None:
                return placed[0]
        return self.path


def mapped(document: LocatedDocument, file: str, **extra: Any) -> MappedDocument:
    """The rendered document at ``file``'s positions; its placeholder fields go with it (a kustomize
    ``namePrefix: ${PROJECT}-`` makes ``${PROJECT}-web``: not a name yet, so not an invalid one)."""
    return MappedDocument(
        file,
        document.index,
        document.data,
        document.node,
        document.line_offset,
        document.text,
        document.placeholders,
        **extra,
    )


@dataclass
class Rendered:
    """What the sources layer hands on for one chart or overlay."""

    kind: str  # "helm" or "kustomize"
    directory: str  # the chart or overlay, as displayed
    output: bytes = b""
    problems: list[RenderProblem] = field(default_factory=list)
    # Applied to the parsed output: documents become MappedDocuments (and annotations are stripped).
    mapper: Callable[[LoadedFile], LoadedFile] | None = None
    texts: dict[str, str] = field(default_factory=dict)  # file shown -> its text (for suppression comments)
    fix_refusal: str = ""  # why --fix does not edit this render's sources
    # documents of the chart's own files read beside its output: values that make pods (kube/jupyterhub)
    held: list[LoadedFile] = field(default_factory=list)
    release: str = ""  # the release the repository gives the chart, as labelled (render/releases): its own unit
    # an overlay over a base named alone: only findings in the base's own files (real paths) are the unit's
    reported: frozenset[str] | None = None
    # the folders of the components a Flux Kustomization appends, built into the overlay as Flux builds it: their
    # files are the overlay's, not read on their own
    components: tuple[str, ...] = ()
    # files of those components an earlier render of the run was built with and reports: not reported again
    unreported: frozenset[str] = frozenset()
    # the variables Flux's post-build substitution filled in (render/flux_post_build): named in the findings' notes
    substituted: dict[str, Variable] = field(default_factory=dict)

    def loaded(self, loaded: LoadedFile) -> LoadedFile:
        if self.mapper is not None:
            loaded = self.mapper(loaded)
            loaded.problems = [_at_source(problem, loaded.documents) for problem in loaded.problems]
        for held in self.held:
            loaded.documents.extend(held.documents)
            loaded.texts[held.path] = held.text
        for document in loaded.documents:  # one `helm template` (a release) or `kustomize build` (an overlay)
            document.render = f"{self.directory} ({self.release})" if self.release else self.directory
            document.release = self.release
        loaded.problems.extend(problem.as_load_problem() for problem in self.problems)
        loaded.texts.update(self.texts)
        loaded.reported = self.reported
        loaded.unreported = self.unreported
        loaded.substituted = said(self.substituted)
        return loaded


def _at_source(problem: LoadProblem, documents: list[LocatedDocument]) -> LoadProblem:
    """A placeholder found in the rendered output (`${PROJECT}-web` that `namePrefix: ${PROJECT}-` made),
    said at the file and line that wrote it rather than at a line of the renderer's output."""
    if problem.file or problem.document is None:
        return problem
    document = next((d for d in documents if d.index == problem.document), None)
    if not isinstance(document, MappedDocument):
        return problem
    for path in document.placeholders:
        if LocatedDocument.locate(document, path) == (problem.line, problem.column):
            line, column = document.locate(path)
            return replace(problem, file=document.file_of(path), line=line, column=column)
    return problem


def not_renderable(kind: str, display: str, own_file: str | None) -> Rendered:
    """A chart or overlay with no renderer on this machine: a warning at its Chart.yaml or kustomization,
    counted like any finding, so a pre-commit hook or CI job without helm cannot pass what it never read."""
    from gpulint.lint.inputs.render.tools import INSTALL_HINTS

    if kind == "helm":
        file = os.path.join(display, "Chart.yaml")
        message = f"Helm chart not rendered: no helm binary ({INSTALL_HINTS['helm']}); its templates were not checked"
    else:
        file = os.path.join(display, os.path.basename(own_file or "kustomization.yaml"))
        message = (
            f"kustomize overlay not rendered: no kustomize or kubectl binary ({INSTALL_HINTS['kustomize']}); "
            "its resources were checked file by file, its patches not at all"
        )
    return Rendered(kind, display, problems=[RenderProblem(file, 1, 1, message, Severity.WARNING)])
