#!/usr/bin/env python3
"""The repository index and the streamed run at two commits, side by side: what the pod outlines cost.

    python benchmarks/index_bench.py --before main [--after HEAD] [--documents 5000] [--runs 5]
    python benchmarks/index_bench.py --before main --streamed 50000

Each commit is exported (``git archive``) and byte-compiled, as startup_bench.py does; runs alternate between
the commits (the order reversed every other round) so that the machine's load weighs on both alike. A run is a
fresh interpreter running ``python -m gpulint``; its CPU (user + system) and peak RSS come from wait4.

Pre-commit (the default): bench.py's corpus of ``--documents`` documents (ten a file) in a git work tree per
commit (the index's cache is each commit's own: its format differs), and one changed file checked from the top,
cold (no ``.gpulint_cache``) and warm: a GPU Pod, and the same Pod following a helper by required pod affinity
(then the index hands the run the other files' outlines).

``--streamed N``: the memory goal of issue #31 with pod affinity named: a corpus of N documents (over 6 MiB: a
streamed run) and the trainer's file, ``check --jobs 1`` and ``--jobs 2``; the peak of the largest process
(wait4) and of every process together (sampled, bench.peak_memory).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import generate  # noqa: E402
from startup_bench import _env, export, usage  # noqa: E402

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: trainer, namespace: team-1, labels: {{app: trainer}}}}
spec:{affinity}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      limits: {{nvidia.com/gpu: 1}}
"""
AFFINITY = """
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: app-18}}
        topologyKey: kubernetes.io/hostname"""
CASES = {"a GPU Pod": POD.format(affinity=""), "the Pod with a required pod affinity": POD.format(affinity=AFFINITY)}
CHANGED = "changed/trainer.yaml"


def repository(root: Path, documents: int) -> None:
    generate(root, documents, max(1, documents // 10))
    (root / "changed").mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def pre_commit(trees: dict[str, Path], work: Path, documents: int, runs: int) -> None:
    commits = list(trees)
    repos = {}
    for index, commit in enumerate(commits):
        repos[commit] = work / f"repo{index}"
        repository(repos[commit], documents)
    args = ["check", CHANGED, "--format", "json", "--output", os.devnull, "--exit-zero"]
    print(f"| one changed file, {documents:,} documents | {' | '.join(commits)} | ratio |")
    print(f"|---|{'---:|' * (len(commits) + 1)}")
    for case, text in CASES.items():
        for repo in repos.values():
            (repo / CHANGED).write_text(text, encoding="utf-8")
        for state in ("cold", "warm"):
            results: dict[str, list[tuple[float, float]]] = {commit: [] for commit in commits}
            for index in range(runs):
                for commit in commits if index % 2 == 0 else commits[::-1]:
                    cache = repos[commit] / ".gpulint_cache"
                    if state == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    elif not cache.exists():
                        usage(trees[commit], args, repos[commit])  # warmed first
                    results[commit].append(usage(trees[commit], args, repos[commit]))
            cells = [
                f"{statistics.median(c for c, _ in r):.2f} s / {max(m for _, m in r):.0f} MiB" for r in results.values()
            ]
            first, last = (results[commits[0]], results[commits[-1]])
            cpu = statistics.median(c for c, _ in last) / statistics.median(c for c, _ in first)
            peak = max(m for _, m in last) / max(m for _, m in first)
            print(f"| {case}, {state} | {' | '.join(cells)} | {cpu:.2f}x CPU, {peak:.2f}x peak |")
    sizes = []
    for commit, repo in repos.items():
        cache = next((repo / ".gpulint_cache").glob("repo-index-*.json"))
        table, _, after = cache.read_bytes().partition(b"\n")  # since format 7: the outlines after the table's line
        files = json.loads(table)["files"]
        written = [entry.get("outlines") or [] for entry in files.values()]  # a list, its JSON text, or its span
        outlines = sum(len(_outlines(o, after)) for o in written)
        sizes.append(f"{commit}: {cache.stat().st_size / 2**20:.1f} MiB, {outlines:,} outlines")
    print(f"\ncache on disk: {'; '.join(sizes)}")


def _outlines(written: object, after: bytes) -> list[object]:
    """A file's outlines as any format of the cache keeps them."""
    if isinstance(written, str):
        return list(json.loads(written)) if written else []
    if isinstance(written, list) and len(written) == 2 and all(isinstance(n, int) for n in written):
        return list(json.loads(after[written[0] : written[1]])) if written[1] > written[0] else []
    return list(written) if isinstance(written, list) else []


def streamed(trees: dict[str, Path], work: Path, documents: int, runs: int) -> None:
    corpus = work / "corpus"
    generate(corpus, documents, max(1, documents // 10))
    (corpus / "trainer.yaml").write_text(CASES["the Pod with a required pod affinity"], encoding="utf-8")
    size = sum(path.stat().st_size for path in corpus.rglob("*.yaml"))
    print(f"| {documents:,} documents ({size / 2**20:.1f} MiB) and the trainer | {' | '.join(trees)} |")
    print(f"|---|{'---:|' * len(trees)}")
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench; "
        "print(json.dumps(bench.peak_memory(sys.argv[2:])))"
    )
    for jobs in ("1", "2"):
        results: dict[str, list[list[float]]] = {commit: [] for commit in trees}
        for index in range(runs):
            for commit in list(trees) if index % 2 == 0 else list(trees)[::-1]:
                command = [sys.executable, "-m", "gpulint", "check", str(corpus), "--jobs", jobs]
                command += ["--format", "json", "--output", os.devnull, "--exit-zero"]
                out = subprocess.run(
                    [sys.executable, "-c", script, str(Path(__file__).parent), *command],
                    env=_env(trees[commit]),
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                results[commit].append(json.loads(out))
        cells = [
            f"{statistics.median(r[0] for r in rs):.1f} s / {max(r[1] for r in rs):.0f} MiB largest / "
            f"{max(r[2] for r in rs):.0f} MiB together"
            for rs in results.values()
        ]
        print(f"| `--jobs {jobs}`: CPU / peak | {' | '.join(cells)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the commit to compare against")
    parser.add_argument("--after", default="HEAD", help="the commit measured (default: HEAD)")
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5, help="runs of each commit per case (default: 5)")
    parser.add_argument("--streamed", type=int, metavar="DOCUMENTS", help="the streamed run instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpulint-index-") as temp:
        work = Path(temp)
        commits = [args.before, args.after]
        trees = {commit: export(commit, work / f"tree{index}") for index, commit in enumerate(commits)}
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}")
        print("CPU seconds (median) and peak RSS (largest) of each commit, and the last's ratio to the first\n")
        if args.streamed:
            streamed(trees, work, args.streamed, args.runs)
        else:
            pre_commit(trees, work, args.documents, args.runs)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
