"""`gpulint check` end to end: collect -> lint -> (fix) -> format -> exit decision."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

from gpulint.cli.live import LiveCluster, read_live
from gpulint.lint.config import Config
from gpulint.lint.engine import enabled_rules
from gpulint.lint.findings import Report
from gpulint.lint.inventory import ClusterInventory, InventoryError, load_configured_inventory
from gpulint.lint.policies import PolicyError
from gpulint.lint.run import LintRun
from gpulint.lint.sources import Source, SourceError, collect_all
from gpulint.report import FormatOptions, get_formatter


@dataclass
class CheckResult:
    rendered: str
    failed: bool
    messages: list[str] = field(default_factory=list)  # for stderr
    usage_error: bool = False


def _apply_fixes(
    report: Report, sources: list[Source], show_diff: bool, messages: list[str]
) -> tuple[list[Source], str]:
    """Fix files in place (or collect their diff); returns the sources that changed and the diff text."""
    from gpulint.lint.fix import FixRefused, prepare_fix, write_fix

    by_display = {source.display: source for source in sources}
    changed: list[Source] = []
    diffs: list[str] = []
    for file in report.files:
        fixes = [finding.fix for finding in file.findings if finding.fix is not None]
        source = by_display.get(file.path)
        if not fixes or source is None:
            continue
        if source.fs_path is None:
            messages.append(f"gpulint: {file.path}: fixes are not applied to standard input or a pipe")
            continue
        try:
            linted = source.read()  # the bytes the findings came from: the file must still hold them
            prepared = prepare_fix(file.path, source.fs_path, fixes, linted)
            if prepared is None:
                continue
            if show_diff:
                diffs.append(prepared.diff())
                continue
            write_fix(prepared)
        except FixRefused as exc:
            messages.append(f"gpulint: {file.path}: not fixed: {exc}")
            continue
        except OSError as exc:  # a full disk, a read-only file: the file is as it was
            messages.append(f"gpulint: {file.path}: not fixed: cannot write it ({exc.strerror or exc}); left unchanged")
            continue
        messages.append(f"gpulint: {file.path}: applied {prepared.applied} fix{'es' if prepared.applied > 1 else ''}")
        changed.append(source)
    return changed, "".join(diffs)


def load_cluster(config: Config, live: LiveCluster | None = None) -> ClusterInventory | None:
    """The cluster read now (``--live-inventory``), the configured inventory (``--inventory`` /
    ``inventory:``), or None."""
    if live is not None:
        return read_live(live)[0]
    return load_configured_inventory(config) if config.inventory else None


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
) -> CheckResult:
    try:
        rules = enabled_rules(config)  # loads the policies: a policy that clashes with a built-in rule is a usage error
        collected = collect_all(paths, config.exclude)
        cluster = load_cluster(config, live)
    except (SourceError, InventoryError, PolicyError) as exc:
        return CheckResult("", True, [f"gpulint: error: {exc}"], usage_error=True)
    if cluster is not None:
        gc.freeze()  # the inventory lives for the whole run: keep the collector from rescanning it
    run = LintRun(config, collected.sources, cluster, rules=rules)
    fixing = fix or show_diff
    report = run.report(1 if fixing else jobs)  # fixing reuses the parsed files: one process holds them
    messages: list[str] = []
    if fixing:
        changed, diff = _apply_fixes(report, collected.sources, show_diff, messages)
        if show_diff:
            return CheckResult(diff, bool(diff), messages)
        if changed:  # report what is left after the fixes
            report = run.relinted(changed).report(1)
    notes = (*collected.notes, *run.notes())
    rendered = get_formatter(output_format)(report, rules, FormatOptions(color=color, notes=notes))
    worst = report.worst()
    return CheckResult(rendered, worst is not None and worst >= config.fail_on, messages)
