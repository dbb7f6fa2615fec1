"""`gpulint check --fix` and `--diff` to their fixpoint, as ruff does: apply the fixes, lint the fixed
files again, apply what the new findings fix, until a pass applies nothing.

One pass is not enough once a fix can expose others: a Deployment the API server refuses for a GPU
request without a limit makes no pods, so its pods' findings (and their fixes) are held back until the
limit is set. ``--fix`` writes each pass (a base or patch of a render must be on disk to be rendered
again); ``--diff`` holds each plain file's fixed bytes in memory and lints them again, so its diff is
what ``--fix`` would write (a render's base or patch gets its first pass only: rendering it again needs
it written).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpulint.lint.findings import Fix, Report
from gpulint.lint.inputs.sources import Collection, Source
from gpulint.lint.run import LintRun

if TYPE_CHECKING:  # a run that fixes imports the fixer (gpulint.lint.output.fix) when it first fixes
    from gpulint.lint.output.fix import PreparedFix

# The passes that may change a file before gpulint gives up (ruff allows 100). No gpulint fix undoes
# another: each sets a field or adds a volume that later passes leave alone, and the longest chain is a
# refusal's fix, then its pods' (docs/usage.md). Ten leaves room for chains through a render's bases
# while bounding the worst case, a chart rendered again each pass, at ten renders.
MAX_PASSES = 10


@dataclass
class _FixJob:
    display: str
    fs_path: str | None
    fixes: list[Fix]
    source: Source | None  # the linted source it is (None: a template, base or patch of a render)


@dataclass
class _FileFixed:
    """One file's fixes over the passes: as it was before the first, as it is after the last."""

    first: PreparedFix
    last: PreparedFix
    applied: int
    last_pass: int  # the pass that changed it last

    def diff(self) -> str:
        return replace(self.first, new_raw=self.last.new_raw, new_text=self.last.new_text).diff()


@dataclass
class FixedRun:
    """What the passes left: the report of the last lint and the run that made it."""

    report: Report
    run: LintRun
    collected: Collection | None  # the paths collected again (after a render's base or patch was written)
    diff: str  # --diff: every file's change over all the passes
    converged: bool


def _fix_jobs(report: Report, sources: list[Source], unsafe: bool, messages: list[str]) -> list[_FixJob]:
    """Fixes by the file they edit: a plain file its own; a rendered object's go to the base or patch
    that holds the field, and those that would edit template logic are refused with a message. Safe
    fixes only, unless ``unsafe`` (``--unsafe-fixes``)."""
    by_display = {source.display: source for source in sources}
    jobs: list[_FixJob] = []
    rendered: dict[tuple[str, str], _FixJob] = {}
    for file in report.files:
        source = by_display.get(file.path)
        fixes = [f.fix for f in file.findings if f.fix is not None and (f.fix.safe or unsafe)]
        if not fixes or source is None:
            continue
        if source.rendered is None:
            jobs.append(_FixJob(file.path, source.fs_path, fixes, source))
            continue
        refused = sorted(
            {(finding.file, finding.fix.refused) for finding in file.findings if finding.fix and finding.fix.refused}
        )
        messages.extend(f"gpulint: {shown}: not fixed: {reason}" for shown, reason in refused)
        for fix in fixes:
            if fix.applicable and fix.fs_path:
                job = rendered.setdefault((fix.file, fix.fs_path), _FixJob(fix.file, fix.fs_path, [], None))
                if all((f.document, f.path) != (fix.document, fix.path) for f in job.fixes):  # two overlays, one base
                    job.fixes.append(fix)
    return jobs + list(rendered.values())


@dataclass
class _Pass:
    show_diff: bool
    unsafe: bool
    number: int  # 1 for the first pass: --diff fixes a render's bases and patches in the first pass only
    fixed: dict[str, _FileFixed]  # by the file's display, across passes
    messages: list[str]


def _prepared(job: _FixJob, in_memory: bool) -> PreparedFix | None:
    # a linted file must still hold the bytes the findings came from; --diff's later passes fix the bytes
    # its earlier ones made, which only the memory holds
    from gpulint.lint.output.fix import prepare_fix, prepare_fix_of_content

    linted = job.source.read() if job.source is not None else None
    if linted is not None and (job.fs_path is None or in_memory):
        return prepare_fix_of_content(job.display, linted, job.fixes)
    assert job.fs_path is not None
    return prepare_fix(job.display, job.fs_path, job.fixes, linted)


def _one_pass(report: Report, sources: list[Source], state: _Pass) -> tuple[list[Source], bool]:
    """Apply (or, for --diff, make in memory) this pass's fixes; returns the sources to lint again
    and whether a file a render read changed (then everything is rendered again)."""
    from gpulint.lint.output.fix import FixRefused, write_fix

    changed: list[Source] = []
    rerender = False
    for job in _fix_jobs(report, sources, state.unsafe, state.messages):
        if job.source is None and state.show_diff and state.number > 1:
            continue
        if job.fs_path is None and not (state.show_diff and job.source is not None):
            state.messages.append(
                f"gpulint: {job.display}: fixes are not applied to standard input or a pipe (--diff prints them)"
            )
            continue
        try:
            prepared = _prepared(job, state.show_diff and job.display in state.fixed)
            if prepared is None:
                continue
            if not state.show_diff:
                write_fix(prepared)
        except FixRefused as exc:
            state.messages.append(f"gpulint: {job.display}: not fixed: {exc}")
            continue
        except OSError as exc:  # a full disk, a read-only file: the file is as it was
            state.messages.append(
                f"gpulint: {job.display}: not fixed: cannot write it ({exc.strerror or exc}); left unchanged"
            )
            continue
        done = state.fixed.get(job.display)
        if done is None:
            state.fixed[job.display] = _FileFixed(prepared, prepared, prepared.applied, state.number)
        else:
            done.last, done.last_pass = prepared, state.number
            done.applied += prepared.applied
        if job.source is None:
            rerender = rerender or not state.show_diff  # --diff wrote nothing: a render again shows the same
        elif state.show_diff:
            changed.append(replace(job.source, content=prepared.new_raw, parsed=None))
        else:
            changed.append(job.source.fresh())
    return changed, rerender


def fix_to_fixpoint(
    run: LintRun,
    sources: list[Source],
    *,
    show_diff: bool,
    unsafe: bool,
    rendered_again: Callable[[], tuple[LintRun, Collection]],
    messages: list[str],
) -> FixedRun:
    """Fix until a pass fixes nothing, at most MAX_PASSES passes that change a file; the report is the
    last lint's, so it shows what the fixes left. ``rendered_again`` collects and renders the paths
    again after a base or patch was written (it may raise the collection's errors)."""
    state = _Pass(show_diff, unsafe, 1, {}, [])
    report = run.report(1)  # fixing reuses the parsed files: one process holds them
    collected: Collection | None = None
    converged = False
    try:
        for state.number in range(1, MAX_PASSES + 1):
            changed, rerender = _one_pass(report, sources, state)
            if not changed and not rerender:
                converged = True
                break
            if rerender:
                run, collected = rendered_again()
                sources = collected.sources
            else:
                run = run.relinted(changed)
                sources = list(run.sources)
            report = run.report(1)
    finally:  # a collection that fails after a pass still says what was fixed
        messages.extend(dict.fromkeys(state.messages))  # a pass repeats what the one before could not fix
        messages.extend(
            f"gpulint: {display}: applied {done.applied} fix{'es' if done.applied > 1 else ''}"
            for display, done in state.fixed.items()
            if not show_diff
        )
    if not converged:  # ruff: "Failed to converge after 100 iterations"
        held = "the diff shows" if show_diff else "it holds"
        messages.extend(
            f"gpulint: error: {display}: its fixes failed to converge after {MAX_PASSES} passes (each changed it "
            f"again); {held} the last pass, and the findings are what that pass left"
            for display, done in state.fixed.items()
            if done.last_pass == MAX_PASSES
        )
    diff = "".join(done.diff() for done in state.fixed.values()) if show_diff else ""
    return FixedRun(report, run, collected, diff, converged)
