"""`gpulint check` end to end: collect -> lint -> (fix) -> format -> exit decision."""
from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from typing import Any

from gpulint.config import Config
from gpulint.engine import Report, enabled_rules, lint
from gpulint.formatters import FormatOptions, get_formatter
from gpulint.inventory import LINTED_CLUSTER_KINDS, Inventory, InventoryError, add_sources, load_inventory
from gpulint.policies import PolicyError, cached_policies
from gpulint.registry import policy_rules
from gpulint.sources import Source, SourceError, collect_all


@dataclass
class CheckResult:
    rendered: str
    failed: bool
    messages: list[str] = field(default_factory=list)  # for stderr
    usage_error: bool = False


def _apply_fixes(report: Report, sources: list[Source], show_diff: bool, messages: list[str]) -> tuple[list[Source], str]:
    """Fix files in place (or collect their diff); returns the sources that changed and the diff text."""
    from gpulint.fix import FixRefused, prepare_fix, write_fix

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
            messages.append(f"gpulint: {file.path}: not fixed: cannot write it ({exc.strerror or exc}); "
                            "left unchanged")
            continue
        messages.append(f"gpulint: {file.path}: applied {prepared.applied} fix{'es' if prepared.applied > 1 else ''}")
        changed.append(source)
    return changed, "".join(diffs)


INVENTORY_RULES = ("gpu-resource-unknown", "gpu-unschedulable", "over-tight-affinity")
_CLUSTER_OBJECT = re.compile(
    rb"kind:\s*[\"']?(?:DeviceClass|ResourceSlice|Workload|PodGroup|CompositePodGroup|Namespace)\b")
_CLUSTER_WORDS = (b"DeviceClass", b"ResourceSlice", b"Workload", b"PodGroup", b"Namespace")  # cheap pre-filter
_CLAIM_OBJECT = re.compile(rb"kind:\s*[\"']?(?:ResourceClaim|ResourceClaimTemplate)\b")
_CLAIM_REFERENCE = re.compile(rb"resourceClaim(?:Template)?Name")


def build_inventory(config: Config, sources: list[Source]) -> Inventory | None:
    """The configured inventory, plus the DRA and gang objects among the linted files.

    The bytes were read once by collect(); only files that hold such objects are parsed
    twice: DeviceClasses, ResourceSlices and gang groups always, claims and claim
    templates only when some pod references one.
    """
    inventory = load_inventory(list(config.inventory)) if config.inventory else None
    contents = [(source, source.read()) for source in sources]
    wants_claims = any(b"resourceClaim" in raw and _CLAIM_REFERENCE.search(raw) for _, raw in contents)
    cluster_files = [source for source, raw in contents
                     if (any(word in raw for word in _CLUSTER_WORDS) and _CLUSTER_OBJECT.search(raw))
                     or (wants_claims and b"ResourceClaim" in raw and _CLAIM_OBJECT.search(raw))]
    if cluster_files:
        inventory = inventory or Inventory()
        add_sources(inventory, cluster_files, kinds=LINTED_CLUSTER_KINDS, from_inventory=False)
    return inventory


def all_objects(sources: list[Source]) -> list[dict[str, Any]]:
    from gpulint.loader import load_bytes
    from gpulint.objects import objects_in

    return [obj.data for source in sources for document in load_bytes(source.display, source.read()).documents
            for obj in objects_in(document)]


def inventory_note(config: Config, inventory: Inventory | None) -> tuple[str, ...]:
    if inventory is not None and inventory.has_nodes:
        return ()
    skipped = [rule for rule in INVENTORY_RULES if rule in enabled_rules(config)]
    if not skipped:
        return ()
    return (f"no cluster inventory with nodes (--inventory): skipped {', '.join(skipped)}",)


def run_check(paths: list[str], config: Config, output_format: str, *, fix: bool = False, show_diff: bool = False,
              jobs: int = 0, color: bool = False) -> CheckResult:
    try:
        policies = cached_policies(config.policies) if config.policies else ()
        if policies:
            policy_rules(config.policies)  # a policy that clashes with a built-in rule is a usage error
        collected = collect_all(paths, config.exclude)
        sources = collected.sources
        inventory = build_inventory(config, sources)
    except (SourceError, InventoryError, PolicyError) as exc:
        return CheckResult("", True, [f"gpulint: error: {exc}"], usage_error=True)
    if any(policy.uses_objects for policy in policies):  # cross-object policies see every linted object
        inventory = inventory or Inventory()
        inventory.linted_objects = all_objects(sources)
    if inventory is not None:
        gc.freeze()  # the inventory lives for the whole run: keep the collector from rescanning it
    report = lint(sources, config, jobs, inventory)
    messages: list[str] = []
    if fix or show_diff:
        changed, diff = _apply_fixes(report, sources, show_diff, messages)
        if show_diff:
            return CheckResult(diff, bool(diff), messages)
        if changed:  # report what is left after the fixes
            relinted = {r.path: r for r in lint([s.fresh() for s in changed], config, jobs, inventory).files}
            report = Report([relinted.get(r.path, r) for r in report.files])
    rules = enabled_rules(config)
    notes = (*collected.notes, *inventory_note(config, inventory))
    rendered = get_formatter(output_format)(report, rules, FormatOptions(color=color, notes=notes))
    worst = report.worst()
    return CheckResult(rendered, worst is not None and worst >= config.fail_on, messages)
