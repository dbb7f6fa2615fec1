"""A rule's cases as one Markdown file, in the manner of ruff's mdtest: ``tests/rules/<rule-id>.md``.

    # gpu-non-integer                      <- the rule, as the file is named

    Prose: what the cases show and why.

    ## a fractional GPU limit              <- one case: the code blocks under it
    ```yaml                                 <- a manifest (case.yaml; the next one case-2.yaml)
    ...
              nvidia.com/gpu: 0.5   # error: [gpu-non-integer] "must be an integer"
    ```

Info strings: ``yaml`` (a manifest), ``yaml file=PATH`` (a manifest at that path in the case's folder:
charts, overlays, several files), ``yaml inventory`` (an inventory file) and ``yaml config`` (keys of
.gpulint.yaml). A trailing comment ``# SEVERITY: [rule-id]`` marks a finding on that line, optionally with a
quoted fragment of its message or notes; several may follow each other on one line. A line that holds
only such comments marks the next line that is not one: for a line where a trailing comment would
change what is linted (a suppression comment reads the text after it as its reason). The case runs as
``gpulint check`` does, with the file's rule alone (plus any the config selects), and the whole list of
findings must be what the comments say: one missing, one extra, or one on another line fails.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rule_harness import run_files

CASES = Path(__file__).parent / "rules"
ANNOTATION = re.compile(r'#\s*(error|warning|info):\s*\[([a-z0-9-]+)\](?:\s*"([^"]*)")?')
OWN_LINE = re.compile(r"^\s*#\s*(error|warning|info):")  # a line of annotations only: about the next line
FENCE = re.compile(r"^```(\S*)(.*)$")


@dataclass(frozen=True)
class Expected:
    path: str
    line: int
    rule: str
    severity: str
    fragment: str


@dataclass
class Case:
    title: str
    line: int  # of its heading, for messages
    files: dict[str, str] = field(default_factory=dict)
    inventory: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)

    def expected(self) -> list[Expected]:
        found = []
        for path, text in self.files.items():
            lines = text.splitlines()
            pending: list[re.Match[str]] = []
            for number, line in enumerate(lines, 1):
                if OWN_LINE.match(line):
                    pending += ANNOTATION.finditer(line)
                    continue
                found += [Expected(path, number, *_groups(m)) for m in (*pending, *ANNOTATION.finditer(line))]
                pending = []
            # marks with no line after them expect a finding past the end: the case fails, saying where
            found += [Expected(path, len(lines) + 1, *_groups(match)) for match in pending]
        return found


def _groups(match: re.Match[str]) -> tuple[str, str, str]:
    severity, rule, fragment = match.groups()
    return rule, severity, fragment or ""


@dataclass
class RuleCases:
    rule: str
    cases: list[Case]


class CaseFileError(AssertionError):
    """The case file itself is malformed: its path and line say where."""


def parse(path: Path) -> RuleCases:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("# "):
        raise CaseFileError(f"{path}:1: the file must begin with '# <rule-id>'")
    rule = lines[0][2:].strip()
    cases: list[Case] = []
    block: list[str] | None = None
    info = ("", "")
    start = 0
    for number, line in enumerate(lines[1:], 2):
        fence = FENCE.match(line)
        if block is not None:
            if line.startswith("```"):
                _add_block(path, start, cases, info, "\n".join(block) + "\n")
                block = None
            else:
                block.append(line)
        elif line.startswith("## "):
            cases.append(Case(line[3:].strip(), number))
        elif fence is not None:
            block, info, start = [], (fence.group(1), fence.group(2).strip()), number
    if block is not None:
        raise CaseFileError(f"{path}:{start}: a code block is not closed")
    return RuleCases(rule, cases)


def _add_block(path: Path, line: int, cases: list[Case], info: tuple[str, str], text: str) -> None:
    language, attributes = info
    if language != "yaml":
        return  # prose examples in other languages are not cases
    if not cases:
        raise CaseFileError(f"{path}:{line}: a yaml block before the first '## case' heading")
    case = cases[-1]
    if attributes == "config":
        case.config.update(yaml.safe_load(text) or {})
    elif attributes == "inventory":
        case.inventory[f"inventory-{len(case.inventory) + 1}.yaml"] = text
    elif attributes.startswith("file="):
        case.files[attributes.removeprefix("file=")] = text
    elif attributes == "":
        case.files["case.yaml" if not case.files else f"case-{len(case.files) + 1}.yaml"] = text
    else:
        raise CaseFileError(f"{path}:{line}: unknown block '{language} {attributes}' (file=PATH, inventory, config)")


def check(rule: str, case: Case) -> None:
    """Run the case; its findings must be exactly those its comments mark."""
    with tempfile.TemporaryDirectory(prefix="gpulint-case-") as tmp:
        found = run_files(rule, Path(tmp), case.files, inventory=case.inventory, config=case.config)
    expected = case.expected()
    got = Counter((f.path, f.line, f.rule, f.severity) for f in found)
    want = Counter((e.path, e.line, e.rule, e.severity) for e in expected)
    problems = [f"  missing: {p}:{n} {s}[{r}]" for (p, n, r, s), c in (want - got).items() for _ in range(c)]
    problems += [
        f"  extra:   {f.path}:{f.line} {f.severity}[{f.rule}] {f.message.splitlines()[0]}"
        for f in found
        if (got - want)[(f.path, f.line, f.rule, f.severity)] > 0
    ]
    for e in expected:
        if e.fragment and not any(
            (f.path, f.line, f.rule) == (e.path, e.line, e.rule) and e.fragment in f.message for f in found
        ):
            problems.append(f"  no finding at {e.path}:{e.line} [{e.rule}] says {e.fragment!r}")
    if problems:
        listing = "\n".join(f"  {f.path}:{f.line} {f.severity}[{f.rule}] {f.message.splitlines()[0]}" for f in found)
        raise AssertionError(f"case '{case.title}':\n" + "\n".join(problems) + f"\nfound:\n{listing or '  (none)'}")
