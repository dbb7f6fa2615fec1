"""Large differential batches against the Kubernetes oracle (tests/upstream/test_oracle.py, docs/oracle.md).

    python scripts/oracle_batch.py --cases 100000
    python scripts/oracle_batch.py -k selectors_agree --runs 20 --seed 101

Runs the oracle tests with ORACLE_CASES cases per family (random, not CI's derandomized ones) and
prints the cases each family ran, the outcome and the time, for the table in docs/oracle.md. ``--runs``
repeats the session with hypothesis seeds ``--seed``, ``--seed`` + 1, ... (each run explores other cases;
a failing seed reproduces with ``pytest tests/upstream/test_oracle.py --hypothesis-seed=<seed>``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(cases: int, k: str, seed: int | None) -> tuple[int, dict[str, int], float]:
    """One pytest session: (its exit code, the cases each family ran, seconds)."""
    with tempfile.TemporaryDirectory() as scratch:
        counts = Path(scratch) / "counts.json"
        environment = {**os.environ, "ORACLE_CASES": str(cases), "ORACLE_COUNTS": str(counts)}
        environment.pop("CI", None)  # random examples: each large run explores new cases
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "oracle"]
        command += [str(ROOT / "tests" / "upstream" / "test_oracle.py")] + (["-k", k] if k else [])
        command += [f"--hypothesis-seed={seed}"] if seed is not None else []
        started = time.monotonic()
        completed = subprocess.run(command, cwd=ROOT, env=environment, check=False)
        elapsed = time.monotonic() - started
        asked = json.loads(counts.read_text(encoding="utf-8")) if counts.exists() else {}
    return completed.returncode, asked, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases per family and run")
    parser.add_argument("-k", default="", help="pytest -k expression (one family)")
    parser.add_argument("--runs", type=int, default=1, help="sessions, each with its own hypothesis seed")
    parser.add_argument("--seed", type=int, default=None, help="the first run's hypothesis seed (default: random)")
    args = parser.parse_args()
    total: dict[str, int] = {}
    failed: list[str] = []
    started = time.monotonic()
    for run in range(args.runs):
        seed = None if args.seed is None else args.seed + run
        code, asked, elapsed = run_once(args.cases, args.k, seed)
        for family, count in asked.items():
            total[family] = total.get(family, 0) + count
        print(
            f"run {run + 1}/{args.runs} (seed {seed if seed is not None else 'random'}): exit {code}, {elapsed:.0f} s"
        )
        if code != 0:
            failed.append(str(seed))
    today = datetime.date.today().isoformat()
    print(f"\n{today}: {args.runs - len(failed)}/{args.runs} runs passed in {time.monotonic() - started:.0f} s")
    if failed:
        print(f"failing seeds: {', '.join(failed)}")
    for family, count in sorted(total.items()):
        print(f"| {family} | {count:,} | {today} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
