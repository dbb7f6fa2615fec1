"""Which files to lint: paths on the command line, directories walked, or stdin."""
from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_DISPLAY = "<stdin>"


@dataclass(frozen=True)
class Source:
    display: str  # the path shown in findings
    fs_path: str | None = None  # read lazily (in the worker) when set
    content: bytes | None = None  # stdin

    def read(self) -> bytes:
        if self.content is not None:
            return self.content
        assert self.fs_path is not None
        with open(self.fs_path, "rb") as handle:
            return handle.read()


class SourceError(Exception):
    pass


def _git_visible(directory: str) -> set[str] | None:
    """Files git does not ignore under ``directory`` (None when it is not in a git work tree)."""
    try:
        result = subprocess.run(
            ["git", "-C", directory, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--full-name"],
            capture_output=True, timeout=20, check=False)
        top = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0 or top.returncode != 0:
        return None
    root = top.stdout.strip()
    return {os.path.normpath(os.path.join(root, name)) for name in result.stdout.decode("utf-8", "replace").split("\0")
            if name}


def _excluded(path: str, patterns: Sequence[str]) -> bool:
    normalized = path.replace(os.sep, "/")
    return any(fnmatch.fnmatch(normalized, p) or fnmatch.fnmatch(normalized, f"*/{p}")
               or fnmatch.fnmatch(normalized, f"{p}/*") or fnmatch.fnmatch(normalized, f"*/{p}/*") for p in patterns)


def _walk(directory: str, exclude: Sequence[str]) -> Iterator[str]:
    visible = _git_visible(directory)
    root = os.path.normpath(os.path.abspath(directory)) + os.sep
    if visible is not None and not any(path.startswith(root) for path in visible):
        visible = None  # the directory named is itself ignored (a venv, a build dir): the user asked for it
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _excluded(os.path.join(root, d), exclude))
        for name in sorted(files):
            if name.startswith(".") or not name.lower().endswith(MANIFEST_SUFFIXES):
                continue
            path = os.path.join(root, name)
            if _excluded(path, exclude):
                continue
            if visible is not None and os.path.normpath(os.path.abspath(path)) not in visible:
                continue  # ignored by .gitignore
            yield path


def collect(paths: Sequence[str], exclude: Sequence[str] = ()) -> list[Source]:
    """Sources in command-line order; directories expanded (sorted), duplicates dropped."""
    sources: list[Source] = []
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            sources.append(Source(STDIN_DISPLAY, content=sys.stdin.buffer.read()))
            continue
        if os.path.isdir(path):
            candidates = list(_walk(path, exclude))
        elif os.path.exists(path):
            candidates = [path]  # a file named explicitly is always linted
        else:
            raise SourceError(f"{path}: no such file or directory")
        for candidate in candidates:
            key = os.path.realpath(candidate)
            if key not in seen:
                seen.add(key)
                sources.append(Source(os.path.normpath(candidate) if candidate != path else candidate, fs_path=candidate))
    return sources
