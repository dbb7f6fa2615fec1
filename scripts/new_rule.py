#!/usr/bin/env python3
"""Start a new rule: its check, its docs and its cases, then the generated index and pages.

    python scripts/new_rule.py RULE-ID --severity warning --summary "One sentence: what it finds."

writes, and never overwrites:
- gpulint/lint/checks/<rule_id>.py: the SPEC and a check that finds nothing yet;
- rules/<rule-id>.yaml: the docs, each key saying what it must hold (tests/rules/test_rule_docs.py runs its
  example and fails until the example and example-findings agree with the check);
- tests/rules/<rule-id>.md: a failing and a clean case to fill in (tests/rules/test_rule_cases.py runs them);
then regenerates gpulint/lint/rule_index.py and docs/rules/ from the working tree, so no count or list is
kept by hand. ``--root`` writes into another checkout of gpulint.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULE_ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")

CHECK = '''"""{id}: {summary_lower}"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("{id}", Severity.{severity})
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Yield a Diagnostic(RULE_ID, path, message) for each finding, worded as Kubernetes words it."""
    yield from ()
'''

DOCS = """id: {id}
summary: {summary}
what: |
  What the rule reads and when it reports, in a paragraph.
why: |
  What Kubernetes (or the operator, or the autoscaler) does with such a workload, in its own words.
kubernetes:
  - "the upstream source this rule follows: repository, file and release, and the function or message"
example: |
  # a manifest as real repositories write it, that the rule reports
example-findings:  # [line, column, message fragment] of every finding; tests/rules/test_rule_docs.py
- [1, 1, "the message"]
use-instead: |
  # the same manifest, fixed
"""

CASES = """# {id}

What these cases show, and the upstream behaviour they follow.

## a manifest the rule reports

```yaml
# the failing manifest; mark each finding's line with a trailing comment:   # {severity_lower}: [{id}] "fragment"
```

## its fixed twin stays silent

```yaml
# the clean manifest
```

## a trap: what looks like the failure but is fine

```yaml
# the look-alike that must stay silent
```
"""


def targets(root: Path, rule_id: str) -> dict[Path, str]:
    return {
        root / "gpulint" / "lint" / "checks" / f"{rule_id.replace('-', '_')}.py": CHECK,
        root / "rules" / f"{rule_id}.yaml": DOCS,
        root / "tests" / "rules" / f"{rule_id}.md": CASES,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rule_id")
    parser.add_argument("--severity", choices=("error", "warning", "info"), required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--root", type=Path, default=ROOT, help="the gpulint checkout to write into")
    args = parser.parse_args(argv)
    if not RULE_ID.fullmatch(args.rule_id):
        parser.error(f"{args.rule_id!r}: a rule id is lowercase words joined by hyphens (gpu-non-integer)")
    root: Path = args.root.resolve()
    files = targets(root, args.rule_id)
    taken = [str(path) for path in files if path.exists()]
    if taken:
        parser.error(f"{args.rule_id} exists already: {', '.join(taken)}")
    summary = args.summary.strip()
    values = {
        "id": args.rule_id,
        "summary": summary,
        "summary_lower": summary[:1].lower() + summary[1:],
        "severity": args.severity.upper(),
        "severity_lower": args.severity,
    }
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never overwrite what is there
            handle.write(template.format(**values))
        print(f"wrote {path.relative_to(root)}")
    # the generators import gpulint from the checkout written into, not from wherever it is installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))}
    for script in ("generate_rule_index.py", "rule_pages.py"):
        subprocess.run([sys.executable, str(root / "scripts" / script)], check=True, env=env, cwd=root)
    print("regenerated gpulint/lint/rule_index.py and docs/rules/; now write the check, the docs and the cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
