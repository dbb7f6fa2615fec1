"""Large differential batches against the Kubernetes oracle (tests/test_oracle.py, docs/oracle.md).

    python scripts/oracle_batch.py --cases 100000

Runs the oracle tests with ORACLE_CASES cases per family (random, not CI's derandomized ones) and
prints the cases each family ran, the outcome and the time, for the table in docs/oracle.md.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases per family")
    parser.add_argument("-k", default="", help="pytest -k expression (one family)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        counts = Path(scratch) / "counts.json"
        environment = {**os.environ, "ORACLE_CASES": str(args.cases), "ORACLE_COUNTS": str(counts)}
        environment.pop("CI", None)  # random examples: each large run explores new cases
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "oracle"]
        command += [str(ROOT / "tests" / "test_oracle.py")] + (["-k", args.k] if args.k else [])
        started = time.monotonic()
        completed = subprocess.run(command, cwd=ROOT, env=environment, check=False)
        elapsed = time.monotonic() - started
        asked = json.loads(counts.read_text(encoding="utf-8")) if counts.exists() else {}
    today = datetime.date.today().isoformat()
    print(f"\n{today}: pytest exit {completed.returncode} in {elapsed:.0f} s")
    for family, count in sorted(asked.items()):
        print(f"| {family} | {count:,} | {today} |")
    return completed.returncode


if __name__ == "__main__":
    raise SystemExit(main())
