"""Where else a chart's repository gives a value the chart's values.yaml does not, read and never run.

A chart is often installed with a values file that is not its own values.yaml: one beside it or in a folder
above it (NVIDIA/nim-deploy's cds-blueprint-aks installs `visual-search` with `--values values.yaml` of the
folder above; a chart's `ci/*-values.yaml`), or a `--set KEY=...` a README, script or install guide passes
(NVIDIA/k8s-dra-driver-gpu's chart fails on its own default until `--set gpuResourcesEnabledOverride=true`,
which docs/install.md gives). Such a value is the installer's, not a template's typo.

Bounded: the chart's folder two levels deep (its templates/, charts/ and crds/ skipped), the files directly in
at most MAX_LEVELS folders above it inside the repository and in their `docs`/`doc` folders (two levels), at
most MAX_FILES files, the first MAX_BYTES of each; no link followed.
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
_NOT_VALUES = frozenset({"Chart.yaml", "Chart.lock", "requirements.yaml", "kustomization.yaml", "kustomization.yml"})


ABSENT = object()  # the chart's values.yaml does not write the value


def given_elsewhere(chart: str, root: str, keys: list[str], current: object = ABSENT) -> str | None:
    """The first file (relative to ``root``) that gives the value at ``keys`` otherwise than values.yaml does
    (``current``): a YAML file other than the chart's values.yaml whose mapping holds another value there, or a
    text passing ``--set KEY=VALUE`` (also --set-string, --set-json, one of a comma-separated list) with another
    value; None when nothing does."""
    if not keys or not all(re.fullmatch(r"[A-Za-z_][\w-]*", key) for key in keys):
        return None
    dotted = re.escape(".".join(keys))
    flag = re.compile(
        r"--set(?:-string|-json|-file)?[=\s]+['\"]?(?:[^\s,'\"]+=[^\s,'\"]*,)*" + dotted + r"=(?P<value>[^\s,'\"]*)"
    )
    own = os.path.realpath(os.path.join(chart, "values.yaml"))
    for count, path in enumerate(_candidates(chart, root)):
        if count >= MAX_FILES:
            return None
        raw = read_head(path, MAX_BYTES)
        if not raw:
            continue
        if any(_differs(_scalar(m.group("value")), current) for m in flag.finditer(raw.decode("utf-8", "replace"))):
            return os.path.relpath(path, root)
        values_file = path.endswith(_VALUES_FILES) and os.path.basename(path) not in _NOT_VALUES
        if values_file and os.path.realpath(path) != own and _holds(path, raw, keys, current):
            return os.path.relpath(path, root)
    return None


def _holds(path: str, raw: bytes, keys: list[str], current: object) -> bool:
    loaded = load_bytes(path, raw)
    found = [dig(d.data, *keys) for d in loaded.documents if isinstance(d.data, dict)]
    return any(value is not None and _differs(value, current) for value in found)


def _differs(value: object, current: object) -> bool:
    return current is ABSENT or str(value).lower() != str(current).lower()


def _scalar(text: str) -> object:
    """A `--set` value as helm's strvals reads it: true/false are booleans, the rest compared as written."""
    return {"true": True, "false": False}.get(text, text)


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
        for guide in ("docs", "doc"):
            folder = os.path.join(current, guide)
            if guide in names and not os.path.islink(folder):
                for directory, subdirectories, files in os.walk(folder):
                    subdirectories[:] = sorted(d for d in subdirectories if directory == folder)
                    yield from _texts(directory, files)


def _texts(directory: str, names: list[str]) -> Iterator[str]:
    for name in sorted(names):
        path = os.path.join(directory, name)
        if (name.endswith(_TEXTS) or name in _TEXT_NAMES) and not os.path.islink(path) and os.path.isfile(path):
            yield path
