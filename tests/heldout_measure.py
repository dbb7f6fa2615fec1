"""The held-out measure of issue #29: is each reported failure variant caught, with no false flag?

Each variant in ``tests/heldout/variants.yaml`` (the first set) and every later set's
``tests/heldout<N>/variants.yaml`` (each collected blind after the one before was fixed) has ``broken.yaml``, its ``fixed.yaml``
twin and maybe an ``inventory.yaml``; each set records its outcomes in its own ``outcomes.yaml``. Both files are linted with every rule, as ``gpulint check`` does (rule_harness).

A finding *names the cause* when its rule is one the report points to, it is an error or a warning, and
its message (with its notes) matches the variant's expression. A variant is **caught** when the broken
file has such a finding, the fixed file has none, and every error or warning on the fixed file is one the
broken file has too (same rule, same message): a finding the fix itself brings is a false flag. What both
twins share is something else in the reporter's manifest (a 2-GPU worker without /dev/shm, a multi-pod job
without a gang) and is listed per variant in ``tests/heldout/outcomes.yaml``, reviewed by hand, so a new
shared finding shows too.

A fixed-twin finding of a rule whose findings the broken twin held back (an info saying the object "makes no
pods while it is refused at admission": verdicts/refusal.py) is not one the fix brings: the fix lets the object
be admitted, and the rule judges its pods again: both twins have what it says (held back on the broken one), so it
counts among the shared.

``python tests/heldout_measure.py`` prints the table (docs/precision.md, "Depth: held-out variants").
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rule_harness import Found, findings_of

from gpulint.lint.verdicts.refusal import NOT_JUDGED


def _set_number(folder: Path) -> int:
    return int(folder.name.removeprefix("heldout") or 1)


# Every set folder, in the order they were collected: tests/heldout/, then heldout2/, heldout3/, ...
SETS = tuple(
    sorted(
        (p for p in Path(__file__).parent.glob("heldout*") if p.is_dir() and (p / "variants.yaml").is_file()),
        key=_set_number,
    )
)
SHOWN = ("error", "warning")


@dataclass(frozen=True)
class Outcome:
    slug: str
    caught: bool
    cause: tuple[Found, ...]  # findings on broken.yaml that name the reported cause
    left: tuple[Found, ...]  # findings on fixed.yaml that still name it
    brought: tuple[Found, ...]  # errors and warnings on fixed.yaml that broken.yaml does not have
    shared: tuple[str, ...]  # rules of the errors and warnings both twins have (sorted, unique)


def variants() -> list[dict[str, Any]]:
    """Every variant of every set, each with ``folder``: the directory of its twins."""
    found: list[dict[str, Any]] = []
    for held in SETS:
        data = yaml.load((held / "variants.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        found.extend({**variant, "folder": held / variant["slug"]} for variant in data["variants"])
    return found


def recorded() -> dict[str, dict[str, Any]]:
    outcomes: dict[str, dict[str, Any]] = {}
    for held in SETS:
        path = held / "outcomes.yaml"
        if path.exists():
            outcomes.update(yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["outcomes"])
    return outcomes


def _names_cause(found: Found, expect: dict[str, Any]) -> bool:
    message = expect.get("message")
    return (
        found.rule in expect["rules"]
        and found.severity in SHOWN
        and (not message or re.search(message, found.message) is not None)
    )


def _lint(folder: Path, name: str) -> list[Found]:
    inventory = folder / "inventory.yaml"
    return findings_of(
        None,
        (folder / name).read_text(encoding="utf-8"),
        inventory=inventory if inventory.exists() else None,
        file_name=name,
    )


def measure(variant: dict[str, Any]) -> Outcome:
    folder = variant["folder"]
    expect = variant["expect"]
    linted = _lint(folder, "broken.yaml")
    broken = [f for f in linted if f.severity in SHOWN]
    held = {f.rule for f in linted if f.severity == "info" and f.message.startswith(NOT_JUDGED)}
    fixed = [f for f in _lint(folder, "fixed.yaml") if f.severity in SHOWN]
    on_broken = {(f.rule, f.message) for f in broken}
    cause = tuple(f for f in broken if _names_cause(f, expect))
    left = tuple(f for f in fixed if _names_cause(f, expect))
    brought = tuple(f for f in fixed if (f.rule, f.message) not in on_broken and f.rule not in held and f not in left)
    shared = tuple(
        sorted({f.rule for f in fixed if ((f.rule, f.message) in on_broken or f.rule in held) and f not in left})
    )
    return Outcome(variant["slug"], bool(cause) and not left and not brought, cause, left, brought, shared)


def main() -> int:
    for held in SETS:
        outcomes = [measure(v) for v in variants() if v["folder"].parent == held]
        print(f"== {held.name}")
        for o in outcomes:
            print(f"{'caught' if o.caught else 'MISSED'}  {o.slug}  shared={list(o.shared)}")
            if not o.caught:
                for label, found in (("no cause", () if o.cause else ("-",)), ("left", o.left), ("brought", o.brought)):
                    for f in found:
                        print(f"    {label}: {f if isinstance(f, str) else f.brief().splitlines()[0]}")
        caught = sum(o.caught for o in outcomes)
        print(f"{held.name}: {caught}/{len(outcomes)} caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
