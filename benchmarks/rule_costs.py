#!/usr/bin/env python3
"""Each rule's CPU in `gpulint check --jobs 1`, in process: the engine's checks wrapped by a timer
(time.process_time around each check's whole answer), on bench.py's generated corpus or given paths.
The run's own CPU and the checks' sum are printed beside the table, with the load average: on a shared
machine compare runs made back to back, not absolute times.

    python benchmarks/rule_costs.py [--documents 5000] [--top 20] [PATH ... -- gpulint check options]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench import generate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("paths", nargs="*", help="check these instead of a generated corpus (and any options)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpulint-rules-") as tmp:
        paths = args.paths
        if not paths:
            generate(Path(tmp), args.documents, max(1, args.documents // 10))
            paths = [tmp]
        totals, calls, run = _timed_check(paths)
    print(
        f"`gpulint check --jobs 1` in process: {run:.2f} s CPU, the checks {sum(totals.values()):.2f} s; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print("| rule | CPU | calls | per call |\n|---|---:|---:|---:|")
    for rule_id, seconds in sorted(totals.items(), key=lambda item: -item[1])[: args.top]:
        print(f"| {rule_id} | {seconds * 1000:.0f} ms | {calls[rule_id]:,} | {seconds / calls[rule_id] * 1e6:.1f} µs |")
    return 0


def _timed_check(paths: list[str]) -> tuple[dict[str, float], dict[str, int], float]:
    """Run the check with every rule's check timed: (CPU per rule, calls per rule, the run's CPU)."""
    from gpulint.cli.main import cli
    from gpulint.lint import engine

    totals: dict[str, float] = {}
    calls: dict[str, int] = {}
    checks_of = engine.Engine._checks_of

    def timed(rule_id: str, check: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def run(*args: Any) -> Iterator[Any]:
            started = time.process_time()
            answer = list(check(*args))
            totals[rule_id] = totals.get(rule_id, 0.0) + time.process_time() - started
            calls[rule_id] = calls.get(rule_id, 0) + 1
            return iter(answer)

        return run

    def timed_checks(self: engine.Engine, kind: str) -> dict[str, Callable[..., Iterator[Any]]]:
        found = self._checks_by_kind.get(kind)
        if found is None:
            found = {rule_id: timed(rule_id, check) for rule_id, check in checks_of(self, kind).items()}
            self._checks_by_kind[kind] = found
        return found

    engine.Engine._checks_of = timed_checks  # type: ignore[method-assign]
    lint = ["check", "--jobs", "1", "--format", "json", "--output", os.devnull, "--exit-zero"]
    started = time.process_time()
    try:
        cli([*lint, *paths], standalone_mode=False)
    except SystemExit:
        pass
    finally:
        engine.Engine._checks_of = checks_of  # type: ignore[method-assign]
    return totals, calls, time.process_time() - started


if __name__ == "__main__":
    sys.exit(main())
