"""A copy of the part of a repository a renderer reads, holding no symbolic link that leads out of it.

helm follows symbolic links in a chart (``.Files.Get "leak.txt"`` on ``leak.txt -> ../../secret`` prints
the runner's file into the rendered output, and from there into a finding), and kustomize follows a
directory link or a ``../..`` path to a base anywhere on the disk. A renderer therefore never sees the
repository itself: it renders a copy in a temporary directory, laid out as the repository is, where a
link that stays inside the repository is copied as what it points at and a link that leads out is left
out (and named in a note). What lies outside the repository does not exist in the copy.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from gpulint.lint.findings import Severity
from gpulint.lint.inputs.render.rendered import RenderProblem
from gpulint.lint.paths import is_within

# A chart or an overlay is a few hundred files; the bounds only stop a copy that would fill the disk.
MAX_VIEW_FILES = 50_000
MAX_VIEW_BYTES = 512 * 1024 * 1024
MAX_VIEW_DEPTH = 64


class ViewError(Exception):
    """The part to render is larger than a copy may be: it is not rendered."""


def boundary(directory: str, named: str = ".") -> str:
    """What a render of ``directory`` may read: its git work tree; outside git, the working directory
    or else the folder the user named for linting (``named``) when it holds the directory, else the
    directory itself."""
    from gpulint.lint.inputs.repo_index import work_tree

    real = os.path.realpath(directory)
    tree = work_tree(real)
    if tree:
        return os.path.realpath(tree)
    for top in (os.getcwd(), named if os.path.isdir(named) else os.path.dirname(named) or "."):
        if is_within(real, top):
            return os.path.realpath(top)
    return real


@dataclass
class View:
    """``root`` mirrors ``repository``: ``root/x`` is a copy of ``repository/x``."""

    repository: str  # real path
    root: str
    left_out: list[str] = field(default_factory=list)  # links leading out, relative to the repository
    _copied: set[str] = field(default_factory=set)  # relative directories and files already copied
    _files: int = 0
    _bytes: int = 0

    def inside(self, original: str) -> str:
        """Where a path of the repository is in the copy."""
        return os.path.join(self.root, os.path.relpath(os.path.realpath(original), self.repository))

    def original(self, copied: str) -> str:
        """The repository's path of a path in the copy (paths outside the copy are returned unchanged)."""
        relative = os.path.relpath(os.path.normpath(copied), self.root)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return copied
        return os.path.normpath(os.path.join(self.repository, relative))

    def unmasked(self, message: str) -> str:
        """A renderer's message with the copy's paths replaced by the repository's."""
        return message.replace(self.root, self.repository)

    def add(self, original: str) -> bool:
        """Copy a directory (recursively) or a file of the repository; False when it is not inside it."""
        if not is_within(original, self.repository):
            return False
        real = os.path.realpath(original)
        relative = os.path.relpath(real, self.repository)
        if relative in self._copied:
            return True
        if os.path.isdir(real):
            self._directory(real, os.path.join(self.root, relative), relative, (real,))
        elif os.path.isfile(real):
            os.makedirs(os.path.dirname(os.path.join(self.root, relative)), exist_ok=True)
            self._file(real, os.path.join(self.root, relative), relative)
        return True

    def add_at(self, original: str, copied: str) -> bool:
        """Copy a directory of the repository to ``copied``, a path inside the copy that is not its own place
        (a chart's local dependency under its charts/); False when it is not inside the repository or
        ``copied`` exists."""
        real = os.path.realpath(original)
        if not is_within(real, self.repository) or not os.path.isdir(real) or os.path.lexists(copied):
            return False
        if not is_within(copied, self.root):
            return False
        self._directory(real, copied, os.path.relpath(copied, self.root), (real,))
        return True

    def _directory(self, source: str, target: str, relative: str, ancestors: tuple[str, ...]) -> None:
        if len(ancestors) > MAX_VIEW_DEPTH:
            raise ViewError(f"{relative}: more than {MAX_VIEW_DEPTH} nested directories")
        self._copied.add(relative)
        os.makedirs(target, exist_ok=True)
        try:
            entries = sorted(os.scandir(source), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if entry.name == ".git":
                continue
            inner_relative = os.path.join(relative, entry.name)
            inner_target = os.path.join(target, entry.name)
            path = entry.path
            if entry.is_symlink():
                real = os.path.realpath(path)
                if not is_within(real, self.repository):
                    self.left_out.append(os.path.normpath(inner_relative))
                    continue
                if real in ancestors:  # a loop: helm and kustomize would not end either
                    continue
                path = real
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                self._directory(path, inner_target, inner_relative, (*ancestors, os.path.realpath(path)))
            elif stat.S_ISREG(mode):
                self._file(path, inner_target, inner_relative)
            # FIFOs, sockets and devices are not copied: a renderer reading one would block

    def _file(self, source: str, target: str, relative: str) -> None:
        self._copied.add(relative)
        self._files += 1
        try:
            self._bytes += os.stat(source).st_size
        except OSError:
            return
        if self._files > MAX_VIEW_FILES or self._bytes > MAX_VIEW_BYTES:
            raise ViewError(
                f"more than {MAX_VIEW_FILES} files or {MAX_VIEW_BYTES // (1024 * 1024)} MiB to copy for rendering"
            )
        try:  # opened without following a link: the file checked is the file copied
            descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return  # unreadable: the renderer reports the missing file as it would have
        with os.fdopen(descriptor, "rb") as handle, open(target, "wb") as out:
            if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                out.write(handle.read(MAX_VIEW_BYTES + 1))


def left_out(view: View, directory: str, display: str) -> list[RenderProblem]:
    """A warning at each link that was left out of the copy, as the chart or overlay shows it."""
    problems = []
    top = os.path.realpath(directory)
    for relative in view.left_out:
        shown = os.path.relpath(os.path.join(view.repository, relative), top)
        problems.append(
            RenderProblem(
                os.path.normpath(os.path.join(display, shown)),
                1,
                1,
                "a symbolic link that leads out of the repository; it was left out of the render "
                "(a renderer reads nothing outside the repository)",
                Severity.WARNING,
            )
        )
    return problems
