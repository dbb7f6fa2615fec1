#!/usr/bin/env python3
"""Start-up of gpulint at two commits, side by side: what a pre-commit hook pays on every commit.

    python benchmarks/startup_bench.py --before <commit> [--before <commit> ...] [--after HEAD] [--runs 11]

Each commit is exported (``git archive``) to a temporary directory and its bytecode compiled, as
``pip install`` leaves it; then the runs alternate between them (in turn, the order reversed every
other round) so that a change in the machine's load hits all alike. A run is a fresh interpreter running
``python -m gpulint`` on one GPU Pod (or ``--version``); its CPU time (user + system, from wait4) is
the figure, as wall time on a shared machine says more about the neighbours than about gpulint. It
prints the median and the ratio, the modules each commit's run imports and the dataclasses it
creates (creating one is ~0.5 ms on Python 3.11: most of a start-up is that), with the date and the
load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
"""

CASES = {
    "`gpulint --version`": ["--version"],
    "`gpulint check pod.yaml` (one GPU Pod, every rule)": ["check", "pod.yaml"],
}

# Counts what one run imports and how many dataclasses it creates (run in the tree under test).
_PROBE = """
import atexit, dataclasses, json, os, sys
made = [0]
process = dataclasses._process_class
def counted(cls, *args, **kwargs):
    made[0] += 1
    return process(cls, *args, **kwargs)
dataclasses._process_class = counted
def probe(*_):
    sys.__stderr__.write("PROBE " + json.dumps([len([m for m in sys.modules if m.startswith("gpulint")]), made[0]]) + "\\n")
    sys.__stderr__.flush()
atexit.register(probe)
leave = os._exit  # gpulint check leaves without the interpreter's teardown (and its atexit calls)
os._exit = lambda status: (probe(), leave(status))
sys.argv = ["gpulint", *sys.argv[1:]]
from gpulint.cli.main import main
main()
"""


def export(commit: str, into: Path) -> Path:
    """The commit's files in ``into``, bytecode compiled (as an installed gpulint has it)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "gpulint")], check=True, env=_env(into))
    return into


def _env(tree: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree)}


def cpu_seconds(tree: Path, args: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one ``python -m gpulint ARGS`` run of this tree."""
    return usage(tree, args, cwd)[0]


def usage(tree: Path, args: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, user + system; peak RSS in MiB) of one ``python -m gpulint ARGS`` run of ``tree``, from wait4."""
    process = subprocess.Popen(
        [sys.executable, "-m", "gpulint", *args],
        cwd=cwd,
        env=_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, used = os.wait4(process.pid, 0)
    return used.ru_utime + used.ru_stime, used.ru_maxrss / 1024


def probe(tree: Path, args: list[str], cwd: Path) -> tuple[int, int]:
    """(gpulint modules imported, dataclasses created) by one run."""
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=cwd, env=_env(tree), capture_output=True, text=True, timeout=120
    )
    line = next(line for line in run.stderr.splitlines() if line.startswith("PROBE "))
    modules, dataclasses = json.loads(line.removeprefix("PROBE "))
    return modules, dataclasses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, action="append", help="a commit to compare against (repeatable)")
    parser.add_argument("--after", default="HEAD", help="the commit measured (default: HEAD)")
    parser.add_argument("--runs", type=int, default=11, help="runs of each commit per case (default: 11)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpulint-startup-") as temp:
        work = Path(temp)
        commits = [*args.before, args.after]
        trees = {commit: export(commit, work / f"tree{index}") for index, commit in enumerate(commits)}
        (work / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
        load = os.getloadavg()[0]
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f}, {args.runs} runs each")
        print("CPU seconds (median), gpulint modules imported / dataclasses created, and the ratio to the last\n")
        print(f"| run | {' | '.join(commits)} |")
        print(f"|---|{'---:|' * len(commits)}")
        for name, case in CASES.items():
            seconds: dict[str, list[float]] = {commit: [] for commit in commits}
            for index in range(args.runs):
                for commit in commits if index % 2 == 0 else commits[::-1]:
                    seconds[commit].append(cpu_seconds(trees[commit], case, work))
            after = statistics.median(seconds[args.after])
            cells = []
            for commit in commits:
                median = statistics.median(seconds[commit])
                modules, made = probe(trees[commit], case, work)
                ratio = "" if commit == args.after else f", after {after / median:.2f}x"
                cells.append(f"{median:.3f} s ({modules} / {made}{ratio})")
            print(f"| {name} | {' | '.join(cells)} |")
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
