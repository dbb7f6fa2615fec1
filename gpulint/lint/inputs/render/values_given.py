"""Where else a chart's repository gives a value the chart's values.yaml does not, read and never run.

A chart is often installed with a values file that is not its own values.yaml: one beside it or in a folder
above it (NVIDIA/nim-deploy's cds-blueprint-aks installs `visual-search` with `--values values.yaml` of the
folder above; a chart's `ci/*-values.yaml`), or a `--set KEY=...` a README, script or install guide passes
(NVIDIA/k8s-dra-driver-gpu's chart fails on its own default until `--set gpuResourcesEnabledOverride=true`,
which docs/install.md gives). Such a value is the installer's, not a template's typo.

Walked as ``gpulint check DIR`` walks (file_walk.Walk: .gitignore, ``.git/info/exclude`` and the configured
``exclude`` honoured, hidden entries skipped). Bounded: the chart's folder two levels deep (its templates/, charts/
and crds/ skipped), the files directly in at most MAX_LEVELS folders above it inside the repository and in their
`docs`/`doc` folders (two levels), at most MAX_FILES files, the first MAX_BYTES of each; no link followed.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpulint.kube.fields import dig
from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.gitignore import scope_for_walk
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.inputs.repo_index import shown_root
from gpulint.lint.inputs.sources import SourceError, excluded
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


@dataclass(frozen=True)
class _Text:
    path: str  # relative to the repository root
    text: str
    values: tuple[object, ...]  # its YAML documents, when it is a values file other than the chart's values.yaml


class GivenElsewhere:
    """The chart's candidate files, read once (lazily, at the first key asked about) and searched per key:
    a failing chart asks about up to MAX_VALUES_READ values, each of which would otherwise walk them again."""

    def __init__(self, chart: str, root: str, exclude: Sequence[str] = ()) -> None:
        self.chart = chart
        self.root = root
        self.exclude = tuple(exclude)
        self._texts: list[_Text] | None = None

    def texts(self) -> list[_Text]:
        if self._texts is None:
            own = os.path.realpath(os.path.join(self.chart, "values.yaml"))
            self._texts = []
            for path in itertools.islice(_candidates(self.chart, self.root, self.exclude), MAX_FILES):
                raw = read_head(path, MAX_BYTES)
                if not raw:
                    continue
                values: tuple[object, ...] = ()
                if (
                    path.endswith(_VALUES_FILES)
                    and os.path.basename(path) not in _NOT_VALUES
                    and os.path.realpath(path) != own
                ):
                    values = tuple(d.data for d in load_bytes(path, raw).documents if isinstance(d.data, dict))
                text = raw.decode("utf-8", "replace")
                self._texts.append(_Text(os.path.relpath(path, self.root), text, values))
        return self._texts

    def find(self, keys: list[str], current: object = ABSENT) -> str | None:
        """The first file (relative to the root) that gives the value at ``keys`` otherwise than values.yaml does
        (``current``): a YAML file other than the chart's values.yaml whose mapping holds another value there, or a
        text passing ``--set KEY=VALUE`` (also --set-string, --set-json, one of a comma-separated list) with
        another value; None when nothing does."""
        if not keys or not all(re.fullmatch(r"[A-Za-z_][\w-]*", key) for key in keys):
            return None
        dotted = ".".join(keys)
        flag = re.compile(
            r"--set(?:-string|-json|-file)?[=\s]+['\"]?(?:[^\s,'\"]+=[^\s,'\"]*,)*"
            + re.escape(dotted)
            + r"=(?P<value>[^\s,'\"]*)"
        )
        for candidate in self.texts():
            if dotted in candidate.text and any(
                _differs(_scalar(m.group("value")), current) for m in flag.finditer(candidate.text)
            ):
                return candidate.path
            if any(_differs(found, current) for data in candidate.values if (found := dig(data, *keys)) is not None):
                return candidate.path
        return None


def _differs(value: object, current: object) -> bool:
    return current is ABSENT or str(value).lower() != str(current).lower()


def _scalar(text: str) -> object:
    """A `--set` value as helm's strvals reads it: true/false are booleans, the rest compared as written."""
    return {"true": True, "false": False}.get(text, text)


def _candidates(chart: str, root: str, exclude: tuple[str, ...]) -> Iterator[str]:
    """The chart's own files (two levels), then the files directly in each folder above it, nearest first, and
    their docs."""
    yield from _walked(chart, exclude, 2, _SKIPPED)
    current = os.path.abspath(chart)
    for _ in range(MAX_LEVELS):
        above = os.path.dirname(current)
        if above == current or not is_within(above, root):
            return
        current = above
        yield from _walked(current, exclude, 0)
        for guide in ("docs", "doc"):
            folder = os.path.join(current, guide)
            if os.path.isdir(folder) and not os.path.islink(folder) and not _left_out(folder, exclude):
                yield from _walked(folder, exclude, 1)


def _left_out(folder: str, exclude: tuple[str, ...]) -> bool:
    """A folder the walk of the one above it would not enter (walked alone, its own rules alone would apply)."""
    above, name = os.path.split(os.path.realpath(folder))
    return excluded(os.path.normpath(shown_root(folder)), exclude) or scope_for_walk(above, []).ignored(name, True)


def _walked(folder: str, exclude: tuple[str, ...], depth: int, skipped: frozenset[str] = frozenset()) -> Iterator[str]:
    """The texts of ``folder`` to ``depth`` folders down, walked as ``gpulint check DIR`` walks (file_walk.Walk:
    .gitignore, ``.git/info/exclude`` and the configured ``exclude`` honoured, hidden entries skipped, no link
    followed); a folder that cannot be read ends it."""
    shown = shown_root(folder)  # as the manifest walk shows paths, for `exclude` to match alike
    select = Selection(suffixes=_TEXTS, names=_TEXT_NAMES, skipped=skipped)
    walk = Walk(shown, exclude, [], select=select, max_depth=depth)  # its notes are the manifest walk's
    try:
        for candidate in walk.files():
            name = os.path.basename(candidate.path)
            if not candidate.follow and (name.endswith(_TEXTS) or name in _TEXT_NAMES):
                yield os.path.join(folder, os.path.relpath(candidate.path, shown))
    except SourceError:
        return
