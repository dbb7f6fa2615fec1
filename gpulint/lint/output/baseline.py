"""Baselines: record the findings a repository already has, then report only new ones.

A finding is known by a fingerprint that leaves out where it is in the file, so a line
added above it, an edit elsewhere in the file or a reordered list of containers does not
make it new: the rule, the file (relative to the baseline's directory, so every checkout and
working directory agrees), the object (API group, kind, namespace, name), the field inside it
(list items by their `name`: ``spec.containers[name=trainer]``) and the message with
whitespace collapsed and numbers blanked (``0/16 nodes`` and ``0/18 nodes`` are the same
problem). Several findings may share a fingerprint: the baseline keeps each one, and a run may
have as many as the baseline lists before one of them is new.

The file is JSON (a reviewer reads what it accepts in the pull request that adds it):
``{"version": 1, "findings": [{"fingerprint", "rule", "path", "object", "field", "message"}]}``.
Only ``fingerprint`` is matched; the other keys are there for people.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from gpulint.lint.errors import BaselineError as BaselineError  # defined apart: see gpulint.lint.errors
from gpulint.lint.findings import FileReport, Finding, Report

BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 64 * 1024 * 1024
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=4096)  # a report repeats its messages (one per rule and shape): each worked out once
def normalized_message(message: str) -> str:
    return _NUMBER.sub("#", _SPACE.sub(" ", message).strip())


def relative_path(display: str, root: str) -> str:
    """``display`` relative to ``root`` in POSIX spelling; standard input and pipes keep their name."""
    if display.startswith("<"):
        return display
    return _relative_path(display, root, os.getcwd())


@lru_cache(maxsize=1024)  # once per file of a report (its findings share it), for the working directory it was in
def _relative_path(display: str, root: str, cwd: str) -> str:
    relative = os.path.relpath(os.path.abspath(display), os.path.abspath(root))
    return PurePath(relative).as_posix()


def object_identity(finding: Finding) -> str:
    ref = finding.obj
    if not ref.kind:
        return ""
    return f"{ref.group}/{ref.kind}/{ref.namespace}/{ref.name}"


def fingerprint(finding: Finding, root: str = ".") -> str:
    parts = (
        finding.rule,
        relative_path(finding.file, root),
        object_identity(finding),
        finding.field,
        normalized_message(finding.message),
    )
    import hashlib  # here: OpenSSL's loading is paid only by runs that fingerprint (baselines, SARIF, GitLab)

    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass(frozen=True)
class Baseline:
    path: str
    counts: Counter[str]
    files: dict[str, str] = field(default_factory=dict)  # fingerprint -> the file it is about (entry "path")

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def apply(self, report: Report) -> tuple[Report, int]:
        """The report without the findings the baseline holds, and how many baseline entries no
        finding matched any more (fixed since, or changed: a hint to write it again)."""
        matching = self.matching()
        files = [matching.take(file) for file in report.files]
        return Report(files), matching.stale()

    def matching(self) -> BaselineMatch:
        """A match of this baseline against file reports as they pass (a report written file by file)."""
        return BaselineMatch(self, Counter(self.counts))


@dataclass
class BaselineMatch:
    """The baseline's entries not yet matched, and the files seen."""

    baseline: Baseline
    left: Counter[str]
    linted: set[str] = field(default_factory=set)

    def take(self, file: FileReport) -> FileReport:
        """``file`` without the findings the baseline holds (each entry matches one finding)."""
        root = self.baseline.root
        self.linted.add(relative_path(file.path, root))
        kept = []
        for finding in file.findings:
            key = fingerprint(finding, root)
            if self.left[key] > 0:
                self.left[key] -= 1
            else:
                kept.append(finding)
        return replace(file, findings=kept, baselined=file.baselined + len(file.findings) - len(kept))

    def stale(self) -> int:
        """The entries no finding matched, of the files seen: pre-commit passes a few files at a time."""
        files = self.baseline.files
        return sum(count for key, count in self.left.items() if files.get(key) in self.linted)


def render_baseline(report: Report, path: str) -> bytes:
    """The baseline file recording every finding of ``report``, as it will be written to ``path``."""
    root = os.path.dirname(os.path.abspath(path))
    entries = [
        {
            "fingerprint": fingerprint(finding, root),
            "rule": finding.rule,
            "path": relative_path(finding.file, root),
            "object": finding.obj.display(),
            "field": finding.field,
            "message": finding.message,
        }
        for finding in report.findings
    ]
    entries.sort(key=lambda entry: (entry["path"], entry["object"], entry["rule"], entry["field"], entry["message"]))
    document = {"version": BASELINE_VERSION, "generator": "gpulint check --write-baseline", "findings": entries}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")


def load_baseline(path: str) -> Baseline:
    from gpulint.lint.inputs.sources import SourceError, read_file

    hint = f"write one with `gpulint check --write-baseline {path}`"
    if not os.path.exists(path):
        raise BaselineError(f"{path}: no such baseline file ({hint})")
    try:
        raw = read_file(path, limit=MAX_BASELINE_BYTES, limit_name="baseline size").content
    except SourceError as exc:
        raise BaselineError(f"cannot read the baseline: {exc}") from None
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: the baseline is not UTF-8 text ({hint})") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: the baseline is not valid JSON: {exc.msg}") from None
    return Baseline(path, *_fingerprints(document, path, hint))


def _fingerprints(document: Any, path: str, hint: str) -> tuple[Counter[str], dict[str, str]]:
    if not isinstance(document, dict) or "findings" not in document:
        raise BaselineError(f'{path}: not a gpulint baseline (expected {{"version": 1, "findings": [...]}}; {hint})')
    version = document.get("version")
    if version != BASELINE_VERSION:
        raise BaselineError(
            f"{path}: baseline version {version!r} is not supported (this gpulint reads version "
            f"{BASELINE_VERSION}; {hint})"
        )
    findings = document["findings"]
    if not isinstance(findings, list):
        raise BaselineError(f"{path}: 'findings' must be a list")
    counts: Counter[str] = Counter()
    files: dict[str, str] = {}
    for index, entry in enumerate(findings):
        value = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(value, str) or not value:
            raise BaselineError(f"{path}: findings[{index}] has no 'fingerprint' string")
        counts[value] += 1
        if isinstance(entry.get("path"), str):
            files[value] = entry["path"]
    return counts, files
