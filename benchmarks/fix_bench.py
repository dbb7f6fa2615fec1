#!/usr/bin/env python3
"""Benchmark --fix on one file with many fixes: one pass (now) against one parse per fix (before #11).

Both run in this process on the same text: a Pod with N containers, each requesting a GPU
without a limit (N fixes). The baseline applies the same edits one fix at a time and parses
the text again after each, as `--fix` did before; its cost grows with N squared (at
--fixes 1000 the baseline alone takes a minute or more).

    python benchmarks/fix_bench.py [--fixes 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulint.lint.config import Config  # noqa: E402
from gpulint.lint.findings import Fix  # noqa: E402
from gpulint.lint.inputs.loader import load_text  # noqa: E402
from gpulint.lint.inputs.sources import Source  # noqa: E402
from gpulint.lint.output.fix import _apply, _file_newline, _Plan, _plan_fix, _render, _Style, fix_text  # noqa: E402
from gpulint.lint.run import LintRun  # noqa: E402


def manifest(containers: int) -> str:
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: many", "spec:", "  containers:"]
    for i in range(containers):
        lines += [f"  - name: c{i}", "    image: i", "    resources:", "      requests:", "        nvidia.com/gpu: 1"]
    return "\n".join(lines) + "\n"


def one_parse_per_fix(path: str, text: str, fixes: list[Fix]) -> str:
    """The pre-#11 loop: plan one fix on the current text, apply it, parse again."""
    style = _Style(json=False, default_newline=_file_newline(text))
    loaded = load_text(path, text)
    for fix in fixes:
        document = next(d for d in loaded.documents if d.index == fix.document)
        plan = _Plan()
        if not _plan_fix(text, document.node, fix, plan):
            continue
        edits = _render(text, plan, style)
        assert edits is not None
        text = _apply(text, edits) or text
        loaded = load_text(path, text)
        assert not loaded.problems
    return text


def timed(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = manifest(args.fixes)
    report = LintRun(Config(), [Source("bench.yaml", content=text.encode())]).report().files[0]
    fixes = [finding.fix for finding in report.findings if finding.fix is not None]
    assert len(fixes) == args.fixes, len(fixes)
    now, outcome = timed(lambda: fix_text("bench.yaml", text, fixes), args.repeat)
    before, baseline = timed(lambda: one_parse_per_fix("bench.yaml", text, fixes), 1)
    assert outcome.new_text == baseline, "the two approaches must produce the same text"  # type: ignore[union-attr]
    print(f"{args.fixes} fixes in a {len(text) // 1024} KiB file")
    print(f"  one pass, one verifying parse: {now * 1000:8.1f} ms (median of {args.repeat})")
    print(f"  one parse per fix (before):    {before * 1000:8.1f} ms")
    print(f"  ratio: {before / now:.0f}x faster")


if __name__ == "__main__":
    main()
