"""A directory walked for manifests (or another Selection of files): sorted, depth first, .gitignore honoured,
hidden entries and links out of it skipped, chart directories yielded whole (for the renderer), what was skipped
noted."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from gpulint.lint.inputs.gitignore import Scope, scope_for_walk
from gpulint.lint.inputs.render.layout import is_chart
from gpulint.lint.inputs.sources import (
    MANIFEST_SUFFIXES,
    SourceError,
    excluded,
    kind_of_mode,
)

CRDS_FOLDER = "crds"
SUBCHARTS_FOLDER = "charts"
MAX_SUBCHART_DEPTH = 8  # charts/a/charts/b/...: deeper than any real chart nests


@dataclass(frozen=True)
class Candidate:
    path: str
    follow: bool  # an in-tree symbolic link (the walk checked where it points)
    chart: bool = False  # a Helm chart directory: rendered, not walked


@dataclass(frozen=True)
class Selection:
    """The files a walk yields: by suffix (any case) or by name; the hidden folders it enters all the same, and the
    folders it never enters."""

    suffixes: tuple[str, ...] = MANIFEST_SUFFIXES
    names: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()
    skipped: frozenset[str] = frozenset()


MANIFESTS = Selection()


@dataclass
class Walk:
    """One named directory: its files in sorted order, depth first; notes for what was skipped."""

    root: str
    exclude: Sequence[str]
    notes: list[str] = field(default_factory=list)
    charts: bool = False  # yield chart directories (to be rendered) instead of their files
    directories: list[str] = field(default_factory=list)  # every directory walked (kustomizations are looked for there)
    select: Selection = MANIFESTS
    max_depth: int | None = None  # how many folders below the root it enters (None: all)
    max_entries: int = 0  # the walk ends once it has listed this many names, of any kind (0: never)

    def __post_init__(self) -> None:
        self.real_root = os.path.realpath(self.root)

    def files(self) -> Iterator[Candidate]:
        links: list[str] = []  # in-tree links come last, so a file is shown under its own name
        select = self.select
        listed = 0
        stack: list[tuple[str, Scope, int]] = [(self.root, scope_for_walk(self.real_root, self.notes), 0)]
        while stack:
            directory, scope, depth = stack.pop()
            if self.charts and is_chart(directory):
                yield Candidate(directory, follow=False, chart=True)
                stack.extend(
                    (folder, inner, depth + 1) for folder, inner in reversed(list(self._crd_folders(directory, scope)))
                )
                continue
            self.directories.append(directory)
            subdirs: list[tuple[str, Scope, int]] = []
            entries = self._entries(directory)
            listed += len(entries)
            if self.max_entries and listed > self.max_entries:
                return  # a tree of many files the selection does not take ends the walk too
            inside = _prefix(directory)
            for entry in entries:
                path = inside + entry.name  # a listed name: no separator, never "." nor ".."
                if (entry.name.startswith(".") and entry.name not in select.hidden) or excluded(path, self.exclude):
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir and entry.name in select.skipped:
                    continue
                if not is_dir and not entry.name.lower().endswith(select.suffixes) and entry.name not in select.names:
                    continue
                if scope.ignored(entry.name, is_dir):
                    continue
                if is_dir:
                    if self.max_depth is None or depth < self.max_depth:
                        subdirs.append((path, scope.enter(entry.name, path, self.notes), depth + 1))
                elif entry.is_symlink():
                    links.append(path)
                elif entry.is_file(follow_symlinks=False):
                    yield Candidate(path, follow=False)
                else:  # never opened: opening a FIFO blocks, opening a device can act on it
                    self.notes.append(f"{path}: skipped: {kind_of_mode(self._mode(entry))}, not a regular file")
            stack.extend(reversed(subdirs))
        for link in links:
            if self._link_inside(link):
                yield Candidate(link, follow=True)

    def _crd_folders(self, chart: str, scope: Scope, depth: int = 0) -> Iterator[tuple[str, Scope]]:
        """The ``crds/`` folders of a chart and of the subcharts under its ``charts/``: Helm applies their
        files as they are (not templated), before the templates (pkg/chart CRDObjects, pkg/action install);
        `helm template` does not print them, so they are walked as files."""
        for entry in self._entries(chart):
            path = os.path.normpath(os.path.join(chart, entry.name))
            if entry.name not in (CRDS_FOLDER, SUBCHARTS_FOLDER) or not entry.is_dir(follow_symlinks=False):
                continue
            if excluded(path, self.exclude) or scope.ignored(entry.name, True):
                continue
            inner = scope.enter(entry.name, path, self.notes)
            if entry.name == CRDS_FOLDER:
                yield path, inner
            elif depth < MAX_SUBCHART_DEPTH:
                for sub in self._entries(path):
                    sub_path = os.path.normpath(os.path.join(path, sub.name))
                    if sub.name.startswith(".") or not sub.is_dir(follow_symlinks=False) or not is_chart(sub_path):
                        continue
                    if excluded(sub_path, self.exclude) or inner.ignored(sub.name, True):
                        continue
                    yield from self._crd_folders(sub_path, inner.enter(sub.name, sub_path, self.notes), depth + 1)

    def _entries(self, directory: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory) as entries:
                return sorted(entries, key=lambda entry: entry.name)
        except OSError as exc:
            raise SourceError(f"{directory}: cannot read the directory: {exc.strerror or exc}") from None

    @staticmethod
    def _mode(entry: os.DirEntry[str]) -> int:
        try:
            return entry.stat(follow_symlinks=False).st_mode
        except OSError:
            return 0

    def _link_inside(self, link: str) -> bool:
        """Follow a link only to a file inside the named directory; never to a directory (no loops,
        and an in-tree directory is walked under its own name)."""
        target = os.path.realpath(link)
        if os.path.commonpath([target, self.real_root]) != self.real_root:
            self.notes.append(f"{link}: skipped: a symbolic link to {target}, outside {self.root}")
            return False
        try:
            mode = os.stat(link).st_mode
        except OSError:
            self.notes.append(f"{link}: skipped: a broken symbolic link")
            return False
        if stat.S_ISDIR(mode):
            return False
        if not stat.S_ISREG(mode):
            self.notes.append(f"{link}: skipped: a symbolic link to {kind_of_mode(mode)}, not a regular file")
            return False
        return True


def _prefix(directory: str) -> str:
    """What makes a name listed in ``directory`` its normalized path: os.path.normpath(os.path.join(directory,
    name)) without the two calls for every file of a walk (a third of a warm pre-commit run's walk)."""
    base = os.path.normpath(directory)
    if base == os.curdir:
        return ""
    return base if base.endswith(os.sep) else base + os.sep


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_head(path: str, limit: int) -> bytes:
    """The first ``limit`` bytes of a regular file a walk found; nothing for a link, a FIFO or a file that
    cannot be read (a repository's files are read, never waited on)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return b""
    try:
        with open(fd, "rb") as handle:
            return handle.read(limit) if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else b""
    except OSError:
        return b""
