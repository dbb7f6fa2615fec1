"""`gpulint check` end to end: collect -> lint -> (fix) -> format -> exit decision."""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulint.cli.adoption import AdoptionOptions
from gpulint.cli.fix_passes import fix_to_fixpoint
from gpulint.cli.live import LiveCluster, load_cluster, load_scoped
from gpulint.cli.render_options import SourceOptions
from gpulint.lint.config import Config
from gpulint.lint.engine import enabled_rules
from gpulint.lint.errors import BaselineError, PolicyError, ToolError
from gpulint.lint.findings import FileReport, Report, RunNotes, Severity, StreamedReport, capped
from gpulint.lint.inputs.collect import collect_all
from gpulint.lint.inputs.linted_set import LintedObject
from gpulint.lint.inputs.repo_index import build_context, repository_of
from gpulint.lint.inputs.sources import STDIN, Collection, CollectOptions, SourceError
from gpulint.lint.rule import Rule
from gpulint.lint.run import LintRun
from gpulint.lint.world.cross_file import crosses_files
from gpulint.lint.world.inventory import InventoryError
from gpulint.lint.world.pod_outlines import names_pod_affinity, outlines_of
from gpulint.report import FormatOptions, StreamedPieces, get_pieces, get_streamed

if TYPE_CHECKING:  # a run with a baseline imports it
    from gpulint.lint.output.baseline import Baseline


@dataclass
class CheckResult:
    # The output: its text, or its pieces, made as they are read (the report's text need never be whole)
    output: str | Iterable[str]
    failed: bool  # a report written as its files are checked knows it once its pieces are read
    messages: list[str] = field(default_factory=list)  # for stderr
    usage_error: bool = False
    # The run, parsed files and all: kept by the caller until the process leaves (cli.main.leave_now), as
    # freeing them object by object costs more than the rest of the exit.
    run: LintRun | None = field(default=None, repr=False)

    def pieces(self) -> Iterable[str]:
        """The output's pieces, to be read once."""
        return (self.output,) if isinstance(self.output, str) else self.output

    @property
    def rendered(self) -> str:
        """The output whole (read once it replaces the pieces)."""
        if not isinstance(self.output, str):
            self.output = "".join(self.output)
        return self.output


def repository_context(
    paths: list[str], collected: Collection, config: Config
) -> tuple[Sequence[LintedObject], bool, list[str], bool]:
    """Files named one by one (pre-commit, ``gpulint check changed.yaml``) are part of something
    larger: the objects of the rest of their git repository, for references to resolve against,
    whether the linted set is still partial (no repository, or the index was cut short), and whether
    the repository was indexed without the pod templates of the other files (then those are read only for
    what crosses files: LintRun.indexed). The index hands them as outlines when a linted file names podAffinity."""
    if not paths or any(path == STDIN or os.path.isdir(path) for path in paths):
        return [], False, [], False  # a directory walked, or a rendered stream: the set is what is applied
    if not config.repo_index:
        return [], True, [], False
    sources = collected.sources
    root = repository_of(sources)
    if root is None:  # no repository to index: the files named are taken as the whole set, as before
        return [], False, [], False
    pods = names_pod_affinity(sources)
    context = build_context(
        root, sources, crosses_files, outlines_of, config.exclude, pods=pods, scripts=collected.scripts
    )
    return context.objects, not context.complete, context.notes, not context.pods


def run_check(
    paths: list[str],
    config: Config,
    output_format: str,
    *,
    fix: bool = False,
    show_diff: bool = False,
    jobs: int = 0,
    color: bool = False,
    live: LiveCluster | None = None,
    sources: SourceOptions | None = None,
    adoption: AdoptionOptions | None = None,
) -> CheckResult:
    sources = sources or SourceOptions()
    adoption = adoption or AdoptionOptions()
    if adoption.baseline:
        config = config.with_overrides(baseline=adoption.baseline)
    if adoption.report_unused:
        config = config.with_overrides(report_unused=True)
    try:
        rules = enabled_rules(config)  # loads the policies: a policy that clashes with a built-in rule is a usage error
        baseline = _baseline(config.baseline) if config.baseline and not adoption.write_baseline else None
        render = config.render.with_overrides(kubernetes_version=config.kubernetes_version)
        collect_options = CollectOptions(
            config.exclude,
            force_exclude=sources.force_exclude,
            stdin_filename=sources.stdin_filename,
            render=render,
        )
        collected = collect_all(paths, options=collect_options)
        cluster, _ = load_cluster(config, live)
        scoped = load_scoped(config)
    except (SourceError, InventoryError, PolicyError, ToolError, BaselineError) as exc:
        return CheckResult("", True, [f"gpulint: error: {exc}"], usage_error=True)
    if cluster is not None:
        gc.freeze()  # the inventory lives for the whole run: keep the collector from rescanning it
    context, partial, index_notes, indexed = repository_context(paths, collected, config)
    fixing = fix or show_diff
    run = LintRun(
        config,
        collected.sources,
        cluster,
        rules=rules,
        context=context,
        partial=partial,
        scoped=scoped,
        streamed=not fixing,  # fixing reuses the parsed files
        indexed=indexed,
    )
    streamed = None if fixing or adoption.write_baseline else get_streamed(output_format)
    if streamed is not None:
        notes_before = (*collected.notes, *index_notes)
        notes_after = tuple(collected.debug_notes) if sources.verbose else ()
        result = CheckResult((), False, run=run)
        result.output = _streamed_output(
            result, run, jobs, baseline, streamed, rules, color, config.fail_on, notes_before, notes_after
        )
        return result
    messages: list[str] = []
    converged = True
    if fixing:

        def rendered_again() -> tuple[LintRun, Collection]:
            again = collect_all(paths, options=collect_options)
            return LintRun(
                config,
                again.sources,
                cluster,
                rules=rules,
                context=context,
                partial=partial,
                scoped=scoped,
                indexed=indexed,
            ), again

        try:
            fixed = fix_to_fixpoint(
                run,
                collected.sources,
                show_diff=show_diff,
                unsafe=adoption.unsafe_fixes,
                rendered_again=rendered_again,
                messages=messages,
            )
        except (SourceError, ToolError) as exc:
            return CheckResult("", True, [*messages, f"gpulint: error: {exc}"], usage_error=True)
        if show_diff:
            return CheckResult(fixed.diff, bool(fixed.diff) or not fixed.converged, messages)
        report, run, collected = fixed.report, fixed.run, fixed.collected or collected
        converged = fixed.converged
    else:
        report = run.report(jobs)
    report = Report([*report.files, *run.inventory_reports()])  # the inventory's own objects, at their fields
    if adoption.write_baseline:
        return _write_baseline(report, adoption.write_baseline, messages)
    report, facts = report.without_run_notes()
    notes: tuple[str, ...] = (
        *collected.notes,
        *index_notes,
        *run.notes(),
        *facts,
        *(collected.debug_notes if sources.verbose else ()),
    )
    if baseline is not None:
        report, stale = baseline.apply(report)
        if stale:
            notes += (_stale_note(stale, baseline.path),)
    report = Report([capped(file) for file in report.files])
    options = FormatOptions(color=color, notes=notes, annotate_from=min(config.fail_on, Severity.WARNING))
    pieces = get_pieces(output_format)(report, rules, options)
    worst = report.worst()
    failed = worst is not None and worst >= config.fail_on
    return CheckResult(pieces, failed or not converged, messages, run=run)


def _streamed_output(
    result: CheckResult,
    run: LintRun,
    jobs: int,
    baseline: Baseline | None,
    formatter: tuple[StreamedPieces, StreamedPieces],
    rules: dict[str, Rule],
    color: bool,
    fail_on: Severity,
    notes_before: tuple[str, ...],
    notes_after: tuple[str, ...],
) -> Iterator[str]:
    """The report's text as its files are checked (json, text): each file's report goes through what the
    whole report would (run notes taken out, the baseline matched) and is written, then dropped; the notes
    and the summary come last, as they always did, and ``result.failed`` is set once all is written. The
    text is the same as a whole report's: the findings are in file order either way."""
    run_notes = RunNotes()
    matching = baseline.matching() if baseline is not None else None

    def passed(file: FileReport) -> FileReport:
        file = run_notes.take(file)
        return capped(matching.take(file) if matching is not None else file)

    report = StreamedReport(map(passed, itertools.chain(run.file_reports(jobs), _later(run.inventory_reports))))
    annotate_from = min(fail_on, Severity.WARNING)
    body, tail = formatter
    yield from body(report, rules, FormatOptions(color=color, annotate_from=annotate_from))
    notes = (*notes_before, *run.notes(), *run_notes.notes(), *notes_after)
    if matching is not None and (stale := matching.stale()):
        assert baseline is not None
        notes += (_stale_note(stale, baseline.path),)
    yield from tail(report, rules, FormatOptions(color=color, notes=notes, annotate_from=annotate_from))
    worst = report.worst()
    result.failed = worst is not None and worst >= fail_on


def _later(make: Callable[[], list[FileReport]]) -> Iterator[FileReport]:
    """``make()``'s reports, made when they are first asked for."""
    yield from make()


def _stale_note(stale: int, path: str) -> str:
    shown = _shown_path(path)
    return (
        f"{stale} finding{'s' if stale > 1 else ''} in the baseline {shown} no longer "
        f"occur{'' if stale > 1 else 's'}; `--write-baseline {shown}` drops {'them' if stale > 1 else 'it'}"
    )


def _baseline(path: str) -> Baseline:
    """The baseline at ``path`` (gpulint.lint.output.baseline is imported by the runs that have one)."""
    from gpulint.lint.output.baseline import load_baseline

    return load_baseline(path)


def _shown_path(path: str) -> str:
    """``path`` as the user would type it here: relative to the working directory when it is below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _write_baseline(report: Report, path: str, messages: list[str]) -> CheckResult:
    from gpulint.cli.output import write_report
    from gpulint.lint.output.baseline import render_baseline

    try:
        write_report(path, render_baseline(report, path))
    except OSError as exc:
        return CheckResult(
            "",
            True,
            [f"gpulint: error: --write-baseline: cannot write {path}: {exc.strerror or exc}"],
            usage_error=True,
        )
    count = len(report.findings)
    messages.append(
        f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to the baseline {path}; "
        f"`gpulint check --baseline {path}` (or `baseline:` in .gpulint.yaml) now reports only new ones"
    )
    return CheckResult("", False, messages)
