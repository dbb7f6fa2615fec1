"""Run rules on a manifest the way `gpulint check` does, and compare the WHOLE list of findings.

    assert_findings("gpu-non-integer", text, [(14, 29, "must be an integer")])

writes ``text`` to a real file, builds the configuration from a ``.gpulint.yaml``-style mapping
(the parser the CLI uses), and runs ``gpulint.cli.check.run_check`` - sources, inventory (with the
cluster objects among the linted files), policies, the engine with its suppressions, the JSON
formatter - with only ``rule_id`` enabled. Every finding of the run is compared, in position
order, with ``expected``: one missing, one extra, or one at another line:column fails.

The public API is ``findings_of``, ``assert_findings`` and ``Found``; when the run is moved
onto a shared ``LintRun`` object only ``_run`` changes.
"""

from __future__ import annotations

import gc
import json
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulint.cli.check import run_check
from gpulint.lint.config import Config, from_mapping
from gpulint.lint.registry import rule_ids

Expected = tuple[int, int, str]  # line, column, a fragment of the message
InventoryArg = str | Path | Sequence[str | Path] | None


@dataclass(frozen=True)
class Found:
    rule: str
    severity: str  # "error", "warning", "info"
    line: int
    column: int
    message: str

    def brief(self) -> str:
        return f"{self.line}:{self.column} {self.severity}[{self.rule}] {self.message}"


class HarnessError(AssertionError):
    """The run itself failed (a usage error: bad configuration, unreadable inventory)."""


def findings_of(
    rule_id: str | None,
    text: str,
    *,
    inventory: InventoryArg = None,
    config: Mapping[str, Any] | None = None,
    file_name: str = "manifest.yaml",
) -> list[Found]:
    """The findings of one run over ``text`` (dedented), in position order.

    ``rule_id`` None runs every rule (the configuration's ``select``/``ignore`` still apply).
    ``inventory``: inventory files or folders. ``config``: ``.gpulint.yaml`` keys
    (``feature-gates``, ``policies: [gpulint:NAME]``, ``severity``, ...).
    """
    raw = raw_findings_of(rule_id, text, inventory=inventory, config=config, file_name=file_name)
    # a fragment may be in the message or in the notes under it: both are what the user reads
    found = [
        Found(f["rule"], f["severity"], f["line"], f["column"], "\n".join((f["message"], *f["notes"]))) for f in raw
    ]
    return sorted(found, key=lambda f: (f.line, f.column, f.rule, f.message))


def raw_findings_of(
    rule_id: str | None,
    text: str,
    *,
    inventory: InventoryArg = None,
    config: Mapping[str, Any] | None = None,
    file_name: str = "manifest.yaml",
) -> list[dict[str, Any]]:
    """As findings_of, the findings as the JSON formatter writes them (message and notes apart)."""
    body = textwrap.dedent(text).lstrip("\n")
    with tempfile.TemporaryDirectory(prefix="gpulint-harness-") as tmp:
        path = Path(tmp) / file_name
        path.write_text(body, encoding="utf-8")
        return _run(rule_id, path, _config(rule_id, config, inventory, tmp))


@dataclass(frozen=True)
class FoundIn(Found):
    path: str = ""  # relative to the folder the files were written to


def run_files(
    rule_id: str | None,
    folder: Path,
    files: Mapping[str, str],
    *,
    inventory: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> list[FoundIn]:
    """The findings of one run over several files written into ``folder`` (paths relative to it; charts and
    overlays keep their layout), with inventory files beside them, in path and position order."""
    linted = folder / "repo"
    for name, text in files.items():
        target = linted / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    inventories = []
    for name, text in (inventory or {}).items():
        target = folder / "inventory" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        inventories.append(str(target))
    raw = _run(rule_id, linted, _config(rule_id, config, inventories or None, str(linted)), within=True)
    found = [
        FoundIn(
            f["rule"],
            f["severity"],
            f["line"],
            f["column"],
            "\n".join((f["message"], *f["notes"])),
            str(Path(f["path"]).relative_to(linted)),
        )
        for f in raw
    ]
    return sorted(found, key=lambda f: (f.path, f.line, f.column, f.rule, f.message))


def assert_findings(
    rule_id: str,
    text: str,
    expected: Sequence[Expected],
    *,
    inventory: InventoryArg = None,
    config: Mapping[str, Any] | None = None,
) -> list[Found]:
    """Run ``rule_id`` alone on ``text``; its findings must be exactly ``expected`` (any order given)."""
    found = findings_of(rule_id, text, inventory=inventory, config=config)
    wanted = sorted(expected, key=lambda item: (item[0], item[1]))
    mismatch = len(found) != len(wanted) or any(
        (f.line, f.column) != (line, column) or fragment not in f.message
        for f, (line, column, fragment) in zip(found, wanted)
    )
    if mismatch:
        raise AssertionError(
            f"{rule_id}: the findings differ from the expected ones\n"
            "expected:\n"
            + "".join(f"  {line}:{column} ...{fragment}...\n" for line, column, fragment in wanted)
            + "found:\n"
            + "".join(f"  {f.brief()}\n" for f in found)
            + ("  (none)\n" if not found else "")
        )
    return found


def _config(rule_id: str | None, mapping: Mapping[str, Any] | None, inventory: InventoryArg, root: str) -> Config:
    config = from_mapping(dict(mapping or {}), "<harness config>", rule_ids, root)
    paths = _inventory_paths(inventory)
    changes: dict[str, Any] = {}
    if rule_id is not None:
        # the rule alone, plus any rule the example's configuration selects (a rule about other rules'
        # suppressions needs them to run)
        changes["select"] = (rule_id, *(config.select or ()))
        changes["ignore"] = ()
    if paths:
        changes["inventory"] = (*config.inventory, *paths)
    return config.with_overrides(**changes)


def _inventory_paths(inventory: InventoryArg) -> tuple[str, ...]:
    if inventory is None:
        return ()
    items = [inventory] if isinstance(inventory, (str, Path)) else list(inventory)
    missing = [str(item) for item in items if not Path(item).exists()]
    if missing:  # a typo in a test must not turn into "no inventory, rule skipped, no findings"
        raise HarnessError(f"inventory not found: {', '.join(missing)}")
    return tuple(str(item) for item in items)


def _run(rule_id: str | None, path: Path, config: Config, within: bool = False) -> list[dict[str, Any]]:
    """``within``: ``path`` is a folder, and every finding must be about a file in it."""
    result = run_check([str(path)], config, "json", jobs=1)
    gc.unfreeze()  # run_check freezes the heap for a CLI process; a test process runs many
    if result.usage_error:
        raise HarnessError(f"{rule_id or 'all rules'}: the run failed: {' '.join(result.messages)}")
    findings: list[dict[str, Any]] = json.loads(result.rendered)["findings"]
    for finding in findings:
        if finding["path"] != str(path) and not (within and Path(finding["path"]).is_relative_to(path)):
            raise AssertionError(f"a finding about another file: {finding['path']}: {finding['message']}")
    return findings
