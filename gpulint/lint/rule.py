"""A rule as the rest of gpulint sees it: its spec, its docs and its check (built by gpulint.lint.registry)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpulint.lint.data import data_dir
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.rule_spec import Need, Scope

_INVENTORY_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # a file name, never a path

ExpectedFinding = tuple[int, int, str]  # line, column, a fragment of the message


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    what: str
    why: str
    kubernetes: tuple[str, ...]  # the Kubernetes rule it mirrors, with the source
    example: str  # a manifest that triggers it
    use_instead: str  # the same manifest, fixed
    fix_safety: str
    check: Callable[..., Iterator[Diagnostic]] | None  # None: reported by the loader, not by an object check
    example_findings: tuple[ExpectedFinding, ...] = ()  # what the rule alone reports on `example`
    false_positives_avoided: tuple[str, ...] = ()  # look-alikes the rule stays silent on
    example_inventory: str = ""  # a shipped inventory's name (rules/inventories/)
    # .gpulint.yaml keys for the example's / use-instead's run (dicts: not part of the hash)
    example_config: Mapping[str, Any] = field(default_factory=dict, hash=False)
    use_instead_config: Mapping[str, Any] = field(default_factory=dict, hash=False)
    use_instead_allow: Mapping[str, str] = field(default_factory=dict, hash=False)  # rule id -> reason
    reads_objects: bool = False  # a policy that reads every linted object (`objects`)
    kinds: frozenset[str] | None = None  # object kinds the check reads (None: any)
    needs: frozenset[Need] = frozenset()  # what the check cannot judge without
    in_part: bool = False  # runs without its needs too, judging what the linted files alone show
    scope: Scope = Scope.OBJECT  # POD_TEMPLATE: check(obj, site, ctx), once per pod template
    of_pods: bool = False  # judges the pods the object makes: held back on an object refused at admission

    def reads(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def inventory_path(self) -> Path | None:
        return shipped_inventory(self.example_inventory) if self.example_inventory else None

    def markdown(self) -> str:
        parts = [
            f"# {self.id} ({self.severity})",
            "",
            self.summary,
            "",
            "## What it does",
            "",
            self.what.strip(),
            "",
            "## Why is this bad?",
            "",
            self.why.strip(),
            "",
            "## Kubernetes rule",
            "",
        ]
        parts += [f"- {line}" for line in self.kubernetes]
        if self.false_positives_avoided:
            parts += ["", "## False positives avoided", ""]
            parts += [f"- {line}" for line in self.false_positives_avoided]
        parts += ["", "## Example", "", "```yaml", self.example.rstrip(), "```", ""]
        if self.example_inventory:
            path = shipped_inventory(self.example_inventory)
            shown = f"rules/inventories/{path.name}{'/' if path.is_dir() else ''}"
            parts += [
                f"Assumes the cluster inventory `{self.example_inventory}` (`--inventory`; shipped with "
                f"gpulint as {shown}), for this example and the one below.",
                "",
            ]
        parts += _config_note(self.example_config)
        if self.example_findings:
            where = ", ".join(f"{line}:{column}" for line, column, _ in self.example_findings)
            parts += [f"gpulint reports it at {where} (line:column).", ""]
        parts += ["## Use instead", "", "```yaml", self.use_instead.rstrip(), "```"]
        if self.use_instead_config:
            parts += ["", *_config_note(self.use_instead_config)[:-1]]
        if self.fix_safety:
            parts += ["", "## Fix safety", "", self.fix_safety.strip()]
        return "\n".join(parts) + "\n"


def _config_note(config: Mapping[str, Any]) -> list[str]:
    if not config:
        return []
    flow = yaml.safe_dump(dict(config), default_flow_style=True, sort_keys=True, width=1000).strip()
    return [f"Linted with the configuration `{flow}` (.gpulint.yaml keys).", ""]


def shipped_inventory(name: str) -> Path:
    """rules/inventories/<name>.yaml or the folder rules/inventories/<name>/ (in a wheel: gpulint/_data/...)."""
    if not _INVENTORY_NAME.fullmatch(name):
        raise ValueError(
            f"example-inventory {name!r} must be the name of a file in rules/inventories/, such as h100-racks"
        )
    base = data_dir("rules") / "inventories"
    for candidate in (base / f"{name}.yaml", base / name):
        if candidate.exists():
            return candidate
    raise ValueError(f"example-inventory {name!r}: neither {base / name}.yaml nor the folder {base / name} exists")
