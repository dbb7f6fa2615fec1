#!/usr/bin/env python3
"""Precision on public repositories gpulint was not built from (issue #28).

Runs gpulint over checkouts of held-out repositories the two ways users run it, and compares every
error and warning with a labelled verdict (true or false, with the reason):

- **per unit**, as pre-commit runs it: each Helm chart, each kustomize overlay (one nothing else builds
  from) and each other YAML or JSON file, alone;
- **per repository**, as a CI gate runs it: `gpulint check .` at the checkout's root.

    python benchmarks/precision.py --repos /tmp/heldout [--labels benchmarks/precision-labels.yaml]
        [--helm PATH --kubectl PATH] [--mode unit|repo|both] [--units all|gpu] [--unlabelled FILE]

``--repos`` holds one folder per repository, named ``owner+name`` (as the search tool's `fetch` names
its snapshots), checked out at the commit the labels name. The labels are this project's own verdicts
on findings; the repositories' files are never copied here. A finding no label covers is counted as
unlabelled and listed (``--unlabelled FILE`` writes them as label entries to fill in). Precision is
true / (true + false); it is printed per repository, per unit kind and overall.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SERIOUS = ("error", "warning")
SKIPPED_DIRECTORIES = {".git", "node_modules", "vendor", "third_party", ".github"}
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# `--units gpu`: the units that can hold a GPU workload - every chart and overlay, and the files whose text
# says "gpu" (any case) or names a TPU, Neuron or Gaudi resource, DRA (resource.k8s.io) or EFA (first 4 MB).
GPU_MARK = re.compile(
    rb"gpu|google\.com/tpu|aws\.amazon\.com/neuron|habana\.ai/|resource\.k8s\.io|vpc\.amazonaws\.com/efa", re.I
)


@dataclass(frozen=True)
class Key:
    """A finding as a label names it: the file (relative to the repository), line, column and rule."""

    repo: str
    path: str
    line: int
    rule: str


@dataclass
class Tally:
    true: int = 0
    false: int = 0
    unlabelled: int = 0
    crashes: int = 0
    misses: list[str] = field(default_factory=list)  # false findings, for the printout

    @property
    def precision(self) -> float | None:
        judged = self.true + self.false
        return self.true / judged if judged else None

    def add(self, verdict: bool | None, shown: str) -> None:
        if verdict is None:
            self.unlabelled += 1
        elif verdict:
            self.true += 1
        else:
            self.false += 1
            self.misses.append(shown)


# A label may name a severity: its verdict is then for findings of that severity only (an overlay whose
# generated input is absent is no broken overlay - false as an error - but not checked - true as a warning).
Labels = dict[Key, dict[str | None, bool]]


def load_labels(path: Path) -> Labels:
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    labels: Labels = {}
    for repo, entries in (raw.get("repositories") or {}).items():
        for entry in entries.get("findings") or []:
            key = Key(repo, entry["path"], int(entry["line"]), entry["rule"])
            labels.setdefault(key, {})[entry.get("severity")] = bool(entry["verdict"])
    return labels


def verdict_of(labels: Labels, key: Key, severity: str) -> bool | None:
    by_severity = labels.get(key, {})
    return by_severity.get(severity, by_severity.get(None))


def units(root: Path) -> list[tuple[str, str]]:
    """(kind, path relative to root): charts, overlays no other overlay builds from, and other files."""
    charts: list[str] = []
    overlays: list[str] = []
    files: list[str] = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES and not d.startswith("."))
        relative = os.path.relpath(directory, root)
        if "Chart.yaml" in names:
            charts.append(relative)
            subdirectories[:] = []  # its templates are the chart's
            continue
        if any(name in names for name in ("kustomization.yaml", "kustomization.yml", "Kustomization")):
            overlays.append(relative)
        files.extend(
            os.path.normpath(os.path.join(relative, name)) for name in sorted(names) if name.endswith(MANIFEST_SUFFIXES)
        )
    return [("chart", c) for c in charts] + [("overlay", o) for o in overlays] + [("file", f) for f in files]


def can_hold_gpus(root: Path, kind: str, target: str) -> bool:
    if kind != "file":
        return True
    try:
        with open(root / target, "rb") as handle:
            return GPU_MARK.search(handle.read(4_000_000)) is not None
    except OSError:
        return False


def run_gpulint(command: list[str], cwd: Path, target: str, extra: list[str]) -> tuple[list[dict], bool]:
    """The serious findings of `gpulint check TARGET`, and whether it crashed (exit 3 or a traceback)."""
    done = subprocess.run(
        [*command, "check", target, "--format", "json", "--exit-zero", *extra],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode == 3 or "Traceback" in done.stderr:
        return [], True
    if done.returncode != 0 or not done.stdout.strip():
        return [], False  # exit 2: gpulint could not use the input (said on stderr), no findings
    report = json.loads(done.stdout)
    return [f for f in report["findings"] if f["severity"] in SERIOUS], False


def judge(repo: str, findings: list[dict], labels: Labels, tally: Tally, unlabelled: dict[Key, dict]) -> None:
    for finding in findings:
        key = Key(repo, os.path.normpath(finding["path"]), int(finding["line"]), finding["rule"])
        verdict = verdict_of(labels, key, finding["severity"])
        shown = f"{repo}/{key.path}:{key.line} {key.rule}: {finding['message'][:120]}"
        tally.add(verdict, shown)
        if verdict is None:
            unlabelled.setdefault(key, finding)


def percent(tally: Tally) -> str:
    value = tally.precision
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, required=True, help="one folder per repository, named owner+name")
    parser.add_argument("--labels", type=Path, default=Path(__file__).with_name("precision-labels.yaml"))
    parser.add_argument("--mode", choices=("unit", "repo", "both"), default="both")
    parser.add_argument("--helm", default="", help="the helm binary that renders charts")
    parser.add_argument("--kubectl", default="", help="the kubectl binary that builds overlays")
    parser.add_argument("--unlabelled", type=Path, help="write the unlabelled findings here, as label entries")
    parser.add_argument("--units", choices=("all", "gpu"), default="all", help="gpu: only units that can hold GPUs")
    parser.add_argument("--ignore-rules", default="", help="rule ids gpulint leaves out (its --ignore)")
    args = parser.parse_args()
    labels = load_labels(args.labels)
    command = [sys.executable, "-m", "gpulint"]
    extra = [*(["--helm", args.helm] if args.helm else []), *(["--kubectl", args.kubectl] if args.kubectl else [])]
    extra += ["--ignore", args.ignore_rules] if args.ignore_rules else []
    repositories = sorted(p for p in args.repos.iterdir() if p.is_dir())
    by_mode: dict[str, Tally] = {}
    by_repo: dict[tuple[str, str], Tally] = {}
    by_unit_kind: Counter[str] = Counter()
    unlabelled: dict[Key, dict] = {}
    for checkout in repositories:
        repo = checkout.name.replace("+", "/", 1)
        if args.mode in ("repo", "both"):
            tally = by_repo.setdefault(("repo", repo), Tally())
            findings, crashed = run_gpulint(command, checkout, ".", extra)
            tally.crashes += crashed
            judge(repo, findings, labels, tally, unlabelled)
            by_mode.setdefault("repo", Tally())
        if args.mode in ("unit", "both"):
            tally = by_repo.setdefault(("unit", repo), Tally())
            for kind, target in units(checkout):
                if args.units == "gpu" and not can_hold_gpus(checkout, kind, target):
                    continue
                by_unit_kind[kind] += 1
                findings, crashed = run_gpulint(command, checkout, target, extra)
                tally.crashes += crashed
                judge(repo, findings, labels, tally, unlabelled)
    print(f"{'mode':5} {'repository':42} {'true':>5} {'false':>5} {'unlab.':>6} {'crash':>5} precision")
    for (mode, repo), tally in sorted(by_repo.items()):
        total = by_mode.setdefault(mode, Tally())
        total.true, total.false = total.true + tally.true, total.false + tally.false
        total.unlabelled += tally.unlabelled
        total.crashes += tally.crashes
        total.misses += tally.misses
        print(
            f"{mode:5} {repo:42} {tally.true:5} {tally.false:5} {tally.unlabelled:6} {tally.crashes:5} {percent(tally)}"
        )
    for mode, tally in sorted(by_mode.items()):
        print(
            f"{mode:5} {'ALL':42} {tally.true:5} {tally.false:5} {tally.unlabelled:6} {tally.crashes:5} {percent(tally)}"
        )
    if by_unit_kind:
        print("units: " + ", ".join(f"{count} {kind}s" for kind, count in sorted(by_unit_kind.items())))
    for mode, tally in sorted(by_mode.items()):
        for shown in sorted(set(tally.misses)):
            print(f"false ({mode}): {shown}")
    if args.unlabelled is not None:
        entries: dict[str, dict[str, list[dict]]] = {}
        for key, finding in sorted(unlabelled.items(), key=lambda item: (item[0].repo, item[0].path, item[0].line)):
            entries.setdefault(key.repo, {"findings": []})["findings"].append(
                {
                    "path": key.path,
                    "line": key.line,
                    "rule": key.rule,
                    "severity": finding["severity"],
                    "verdict": None,
                    "why": finding["message"][:160],
                }
            )
        args.unlabelled.write_text(yaml.safe_dump({"repositories": entries}, sort_keys=False, width=120))
    crashed = sum(tally.crashes for tally in by_mode.values())
    return 1 if crashed else 0


if __name__ == "__main__":
    raise SystemExit(main())
