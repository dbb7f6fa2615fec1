"""Where else a chart's repository gives a value the chart's values.yaml does not, read and never run.

A chart is often installed with a values file that is not its own values.yaml: one beside it or in a folder
above it (NVIDIA/nim-deploy's cds-blueprint-aks installs `visual-search` with `--values values.yaml` of the
folder above; a chart's `ci/*-values.yaml`), or a `--set KEY=...` a README or script passes. Such a value is
the installer's, not a template's typo.

Bounded: the chart's folder two levels deep (its templates/, charts/ and crds/ skipped), the files directly in
at most MAX_LEVELS folders above it inside the repository, at most MAX_FILES files, the first MAX_BYTES of
each; no link followed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from gpulint.kube.fields import dig
from gpulint.lint.inputs.file_walk import read_head
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.paths import is_within

MAX_FILES = 200
MAX_BYTES = 256 * 1024
MAX_LEVELS = 3
_SKIPPED = frozenset({"templates", "charts", "crds", "node_modules", "vendor"})
_VALUES_FILES = (".yaml", ".yml")
_TEXTS = (".md", ".rst", ".txt", ".sh", ".bash", ".yaml", ".yml", ".mk", ".tf")
_TEXT_NAMES = frozenset({"Makefile", "Justfile", "Taskfile", "README"})


def given_elsewhere(chart: str, root: str, keys: list[str]) -> str | None:
    """The first file (relative to ``root``) that gives the value at ``keys``: a YAML file other than the chart's
    values.yaml whose mapping holds it, or a text passing ``--set KEY=`` (also --set-string, --set-json, one of
    a comma-separated list); None when nothing does."""
    if not keys or not all(re.fullmatch(r"[A-Za-z_][\w-]*", key) for key in keys):
        return None
    dotted = re.escape(".".join(keys))
    flag = re.compile(r"--set(?:-string|-json|-file)?[=\s]+['\"]?(?:[^\s,'\"]+=[^\s,'\"]*,)*" + dotted + "=")
    own = os.path.realpath(os.path.join(chart, "values.yaml"))
    for count, path in enumerate(_candidates(chart, root)):
        if count >= MAX_FILES:
            return None
        raw = read_head(path, MAX_BYTES)
        if not raw:
            continue
        if flag.search(raw.decode("utf-8", "replace")):
            return os.path.relpath(path, root)
        if path.endswith(_VALUES_FILES) and os.path.realpath(path) != own and _holds(path, raw, keys):
            return os.path.relpath(path, root)
    return None


def _holds(path: str, raw: bytes, keys: list[str]) -> bool:
    loaded = load_bytes(path, raw)
    return any(isinstance(d.data, dict) and dig(d.data, *keys) is not None for d in loaded.documents)


def _candidates(chart: str, root: str) -> Iterator[str]:
    """The chart's own files (two levels), then the files directly in each folder above it, nearest first."""
    for directory, subdirectories, files in os.walk(chart):
        depth = os.path.relpath(directory, chart).count(os.sep) + (directory != chart)
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in _SKIPPED and not d.startswith(".") and depth < 2
        )
        yield from _texts(directory, files)
    current = os.path.abspath(chart)
    for _ in range(MAX_LEVELS):
        above = os.path.dirname(current)
        if above == current or not is_within(above, root):
            return
        current = above
        try:
            names = os.listdir(current)
        except OSError:
            return
        yield from _texts(current, names)


def _texts(directory: str, names: list[str]) -> Iterator[str]:
    for name in sorted(names):
        path = os.path.join(directory, name)
        if (name.endswith(_TEXTS) or name in _TEXT_NAMES) and not os.path.islink(path) and os.path.isfile(path):
            yield path
