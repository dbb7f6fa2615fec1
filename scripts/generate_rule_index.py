#!/usr/bin/env python3
"""Write gpulint/lint/rule_index.py from the rule modules' SPECs (run it after adding a rule or changing a SPEC).

The registry lists rules from this index so that a run imports only the rule modules its objects need;
tests/rules/test_rule_index.py fails when the index and the modules disagree. The file is then formatted with
ruff (the project's formatter, from the test extra) so that ``ruff format --check`` accepts it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpulint.lint.registry import rule_modules
from gpulint.lint.rule_spec import RuleSpec, Scope

INDEX = Path(__file__).resolve().parent.parent / "gpulint" / "lint" / "rule_index.py"

HEADER = '''"""Every built-in rule: its module in gpulint.lint.checks, its SPEC and whether it has a check.

Generated from the rule modules by ``python scripts/generate_rule_index.py``: do not edit. The registry
reads it so that a run imports only the rule modules its objects need (tests/rules/test_rule_index.py holds it in
step with the modules).
"""

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import Need, RuleSpec, Scope

RULE_INDEX: tuple[tuple[str, RuleSpec, bool], ...] = (
'''


def spec_source(spec: RuleSpec) -> str:
    out = f"RuleSpec({spec.id!r}, Severity.{spec.severity.name}"
    if spec.kinds is not None:
        out += f", kinds=frozenset({{{', '.join(repr(kind) for kind in sorted(spec.kinds))}}})"
    if spec.needs:
        out += f", needs=frozenset({{{', '.join(f'Need.{need.name}' for need in sorted(spec.needs, key=str))}}})"
    if spec.scope is not Scope.OBJECT:
        out += f", scope=Scope.{spec.scope.name}"
    if spec.in_part:
        out += ", in_part=True"
    if spec.of_pods:
        out += ", of_pods=True"
    return out + ")"


def index_source() -> str:
    rows = [
        f"    ({module.__name__.rsplit('.', 1)[1]!r}, {spec_source(module.SPEC)}, {module.check is not None}),\n"
        for _, module in sorted(rule_modules().items())
    ]
    return HEADER + "".join(rows) + ")\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else INDEX  # another path: to compare without touching the repository
    target.write_text(index_source(), encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff", "format", "--quiet", "--config", str(INDEX.parents[2] / "pyproject.toml")]
    return subprocess.run([*ruff, str(target)], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
