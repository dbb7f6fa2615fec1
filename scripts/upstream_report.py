#!/usr/bin/env python3
"""How often gpulint reaches Kubernetes' verdict on the cases translated from Kubernetes' own tests.

Reads tests/upstream/<family>/*.yaml (see tests/upstream/judges.py), asks gpulint for each case's
verdict and prints, per family, the cases covered, those that agree, the deliberate (documented)
differences and the disagreements. ``--markdown`` prints the table docs/upstream.md shows; ``-v`` lists
every disagreement. Exit code 1 when a case disagrees without a documented difference.

Usage: python scripts/upstream_report.py [--markdown] [-v]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from upstream.judges import agrees, load_cases, verdict  # noqa: E402


def main(argv: list[str]) -> int:
    markdown = "--markdown" in argv
    verbose = "-v" in argv
    covered: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    differs: Counter[str] = Counter()
    versions: dict[str, set[str]] = {}
    sources: dict[str, set[str]] = {}
    wrong = []
    for case in load_cases():
        family = case.family
        covered[family] += 1
        versions.setdefault(family, set()).add(str(case.header["kubernetes"]))
        sources.setdefault(family, set()).add(str(case.header["source"]))
        found = verdict(case)
        if agrees(case.expected, found):
            agreed[family] += 1
        elif case.differs and agrees(str(case.data.get("gpulint")), found):
            differs[family] += 1
        else:
            wrong.append((case.id, case.expected, found))
    rows = [
        (family, ", ".join(sorted(versions[family])), covered[family], agreed[family], differs[family])
        for family in sorted(covered)
    ]
    total = (sum(covered.values()), sum(agreed.values()), sum(differs.values()))
    if markdown:
        print("| family | Kubernetes | cases | agree | deliberate differences |")
        print("| --- | --- | ---: | ---: | ---: |")
        for family, version, count, ok, diff in rows:
            print(f"| {family} | {version} | {count} | {ok} | {diff} |")
        print(f"| **all** | | **{total[0]}** | **{total[1]}** | **{total[2]}** |")
    else:
        print(f"{'family':<28}{'kubernetes':<12}{'cases':>7}{'agree':>7}{'differ':>8}{'wrong':>7}")
        for family, version, count, ok, diff in rows:
            print(f"{family:<28}{version:<12}{count:>7}{ok:>7}{diff:>8}{count - ok - diff:>7}")
        print(f"{'all':<40}{total[0]:>7}{total[1]:>7}{total[2]:>8}{len(wrong):>7}")
    if verbose or (wrong and not markdown):
        for case_id, expected, found in wrong:
            print(f"\n{case_id}\n  kubernetes: {expected}\n  gpulint:    {found}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
