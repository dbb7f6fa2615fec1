"""Git's ignore rules for the directory walk, evaluated without running git.

Running ``git ls-files`` would run whatever a repository's ``.git/config`` asks for
(``core.fsmonitor`` is a command): linting a fork's pull request would run the fork's
code on the CI runner. So the rules are read here, as data:

- ``.gitignore`` in every directory from the work tree's top down (a deeper file's
  patterns win over a shallower one's; within a file the last match wins), then
  ``$GIT_DIR/info/exclude`` below them all; negations and directory patterns as git
  has them (a file inside an ignored directory cannot be re-included);
- files in the index (committed or added, ``git add -f``) are never ignored, as
  ``git ls-files --cached`` lists them; the index is read, not executed;
- a nested repository (a submodule, a clone inside the tree) follows its own rules;
- a symlinked ``.gitignore`` is not followed (git does not follow it either).

The user's global excludes file (``core.excludesFile``) is not read: which files are
linted must not depend on who runs gpulint. Patterns are matched with RE2 (linear
time): a hostile ``*a*a*a*a*c`` pattern would make a backtracking matcher hang.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from gpulint.lint.sources import ReadFile, SkippedEntry, SourceError, read_file

GIT = ".git"
MAX_IGNORE_FILE_BYTES = 1024 * 1024  # git itself reads any size; a megabyte of patterns is not a real file
MAX_INDEX_BYTES = 256 * 1024 * 1024  # the index of a monorepo with a million files is ~100 MiB
IGNORE_LIMIT_NAME, INDEX_LIMIT_NAME = "max-ignore-file-bytes", "max-index-bytes"
_ENTRY_FIXED = 40  # ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size: 4 bytes each
_OBJECT_FORMAT_SHA256 = re.compile(rb"(?im)^\s*objectformat\s*=\s*sha256\s*$")

if TYPE_CHECKING:
    import pathspec


@dataclass(frozen=True)
class _Layer:
    """The patterns of one ignore file, matched against paths relative to its directory."""

    base: str  # the directory, relative to the work tree's top: "" or ending in "/"
    spec: pathspec.GitIgnoreSpec

    def verdict(self, relative: str) -> bool | None:
        """True: ignored, False: re-included by a negation, None: no pattern matches."""
        if not relative.startswith(self.base):
            return None
        return self.spec.check_file(relative[len(self.base) :]).include


@dataclass(eq=False)
class _Repository:
    """A work tree. Its index is read only when a pattern ignores something (most walks: never)."""

    top: str  # the work tree's top directory
    git_dir: str | None  # where the index is
    common_dir: str | None  # where info/exclude and config are
    notes: list[str] = field(repr=False)

    @cached_property
    def tracked(self) -> frozenset[str]:
        """Paths in the index, "/"-separated, relative to the top."""
        return _tracked(self.git_dir, self.common_dir, self.notes) if self.git_dir else frozenset()

    @cached_property
    def tracked_dirs(self) -> frozenset[str]:
        """Every directory holding a tracked path, ending in "/"."""
        return frozenset(path[: cut + 1] for path in self.tracked for cut in _slashes(path))


@dataclass(frozen=True)
class Scope:
    """The ignore rules that apply inside one directory of a walk."""

    repository: _Repository | None = None
    prefix: str = ""  # this directory, relative to the work tree's top: "" or ending in "/"
    layers: tuple[_Layer, ...] = ()  # lowest precedence first

    def ignored(self, name: str, is_dir: bool) -> bool:
        if self.repository is None:
            return False  # outside a git work tree, as git: no .gitignore applies
        relative = self.prefix + name + ("/" if is_dir else "")
        verdict = next(
            (v for v in (layer.verdict(relative) for layer in reversed(self.layers)) if v is not None), False
        )
        # What git tracks is listed whatever the patterns say (and so is the directory holding it).
        return verdict and relative not in (self.repository.tracked_dirs if is_dir else self.repository.tracked)

    def enter(self, name: str, path: str, notes: list[str]) -> Scope:
        """The rules inside subdirectory ``name`` (at ``path``) of this one."""
        if _is_work_tree(path):
            return _top_scope(path, notes)
        if self.repository is None:
            return self
        prefix = f"{self.prefix}{name}/"
        return replace(self, prefix=prefix, layers=self.layers + _gitignore(path, prefix, notes))


def scope_for_walk(directory: str, notes: list[str]) -> Scope:
    """The rules inside ``directory`` (a real path), named on the command line.

    When the directory itself is ignored (a vendored chart, a build output), the user asked
    for it anyway: the rules from above it are dropped, and its own .gitignore files apply.
    """
    top = next((d for d in _self_and_parents(directory) if _is_work_tree(d)), None)
    if top is None:
        return Scope()
    scope = _top_scope(top, notes)
    parts = [] if directory == top else os.path.relpath(directory, top).split(os.sep)
    path = top
    for name in parts:
        path = os.path.join(path, name)
        if scope.ignored(name, is_dir=True):
            assert scope.repository is not None
            prefix = os.path.relpath(directory, top).replace(os.sep, "/") + "/"
            return Scope(scope.repository, prefix, _gitignore(directory, prefix, notes))
        scope = scope.enter(name, path, notes)
    return scope


def _self_and_parents(directory: str) -> list[str]:
    chain = [directory]
    while os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    return chain


def _is_work_tree(directory: str) -> bool:
    """A directory with a ``.git`` directory, or a ``.git`` file (a worktree, a submodule)."""
    try:
        mode = os.lstat(os.path.join(directory, GIT)).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


def _top_scope(top: str, notes: list[str]) -> Scope:
    git_dir, common_dir = _git_dirs(top, notes)
    layers: tuple[_Layer, ...] = ()
    if common_dir:
        layers = _layer(os.path.join(common_dir, "info", "exclude"), "", notes)
    return Scope(_Repository(top, git_dir, common_dir, notes), "", layers + _gitignore(top, "", notes))


def _slashes(path: str) -> list[int]:
    return [index for index, char in enumerate(path) if char == "/"]


def _git_dirs(top: str, notes: list[str]) -> tuple[str | None, str | None]:
    """The repository's own directory (index) and its common directory (info/exclude, config)."""
    dot_git = os.path.join(top, GIT)
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git, dot_git
    read = _read_optional(dot_git, notes, MAX_IGNORE_FILE_BYTES, IGNORE_LIMIT_NAME)
    line = read.content.decode("utf-8", "replace").strip() if read else ""
    if not line.startswith("gitdir:"):
        return None, None
    git_dir = os.path.join(top, line[len("gitdir:") :].strip())
    common = _read_optional(os.path.join(git_dir, "commondir"), notes, MAX_IGNORE_FILE_BYTES, IGNORE_LIMIT_NAME)
    common_dir = os.path.join(git_dir, common.content.decode("utf-8", "replace").strip()) if common else git_dir
    return git_dir, common_dir


def _read_optional(path: str, notes: list[str], limit: int, limit_name: str) -> ReadFile | None:
    """A file of git's, read as data; absent, a link or not a regular file: None (with a note)."""
    if not os.path.lexists(path):
        return None
    try:
        return read_file(path, limit=limit, limit_name=limit_name, walked=True, follow=False)
    except SkippedEntry as skipped:
        notes.append(f"{path}: not used: {skipped.reason}, not a regular file")
        return None
    except SourceError as exc:
        if os.path.basename(path) == ".gitignore":
            raise  # an ignore file that cannot be honoured is a bad input, not a silent change
        notes.append(f"{exc}; not used")
        return None


def _gitignore(directory: str, prefix: str, notes: list[str]) -> tuple[_Layer, ...]:
    return _layer(os.path.join(directory, ".gitignore"), prefix, notes)


def _layer(path: str, prefix: str, notes: list[str]) -> tuple[_Layer, ...]:
    read = _read_optional(path, notes, MAX_IGNORE_FILE_BYTES, IGNORE_LIMIT_NAME)
    if read is None:
        return ()
    lines = read.content.decode("utf-8", "replace").splitlines()
    try:
        spec = _compile(lines)
    except SourceError:
        raise
    except Exception:
        # Git skips a pattern it cannot parse; so do we, keeping the others' order.
        lines = [line if _valid(line) else "" for line in lines]
        spec = _compile(lines)
    return (_Layer(prefix, spec),)


def _compile(lines: list[str]) -> pathspec.GitIgnoreSpec:
    import pathspec  # only when a repository has ignore rules: it costs tens of milliseconds

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except ImportError as exc:  # never fall back to a backtracking matcher: a pattern could hang it
        raise SourceError(f"gitignore matching needs google-re2 (pip install 'pathspec[re2]'): {exc}") from None


def _valid(line: str) -> bool:
    try:
        _compile([line])
    except SourceError:
        raise
    except Exception:
        return False
    return True


def _tracked(git_dir: str, common_dir: str | None, notes: list[str]) -> frozenset[str]:
    """Paths in the index (``git ls-files --cached``), or none when it cannot be read."""
    read = _read_optional(os.path.join(git_dir, "index"), notes, MAX_INDEX_BYTES, INDEX_LIMIT_NAME)
    if read is None:
        return frozenset()
    config = _read_optional(
        os.path.join(common_dir or git_dir, "config"), notes, MAX_IGNORE_FILE_BYTES, IGNORE_LIMIT_NAME
    )
    hash_size = 32 if config and _OBJECT_FORMAT_SHA256.search(config.content) else 20
    paths = index_paths(read.content, hash_size)
    if paths is None:
        notes.append(
            f"{os.path.join(git_dir, 'index')}: not a git index gpulint can read; "
            "committed files that .gitignore matches are skipped"
        )
        return frozenset()
    return paths


def index_paths(raw: bytes, hash_size: int = 20) -> frozenset[str] | None:
    """The paths of a git index (format versions 2, 3 and 4; Documentation/gitformat-index.txt)."""
    if len(raw) < 12 or raw[:4] != b"DIRC":
        return None
    version, count = int.from_bytes(raw[4:8], "big"), int.from_bytes(raw[8:12], "big")
    if version not in (2, 3, 4):
        return None
    position, previous, paths = 12, b"", []
    fixed = _ENTRY_FIXED + hash_size + 2  # + the 16-bit flags
    for _ in range(count):  # every entry takes at least `fixed` bytes: a lying count runs out of data
        start = position
        if position + fixed > len(raw):
            return None
        flags = int.from_bytes(raw[position + fixed - 2 : position + fixed], "big")
        position += fixed + (2 if version >= 3 and flags & 0x4000 else 0)  # extended flags
        if version == 4:  # the name is the previous one minus N bytes, plus a suffix
            strip, position = _varint(raw, position)
            end = raw.find(b"\0", position)
            if strip is None or end < 0 or strip > len(previous):
                return None
            name = previous[: len(previous) - strip] + raw[position:end]
            position = end + 1
        else:  # NUL-terminated, padded with 1-8 NULs to a multiple of 8 bytes
            end = raw.find(b"\0", position)
            if end < 0:
                return None
            name = raw[position:end]
            position = start + (end - start + 8) // 8 * 8
        previous = name
        paths.append(name.decode("utf-8", "surrogateescape"))
    return frozenset(paths)


def _varint(raw: bytes, position: int) -> tuple[int | None, int]:
    """Git's offset varint (varint.c): 7 bits a byte, high bit set on all but the last;
    each continuation adds one before shifting, so no number has two encodings."""
    value = 0
    for offset in range(10):  # 64-bit values take at most 10 bytes
        if position + offset >= len(raw):
            break
        byte = raw[position + offset]
        value = (((value + 1) << 7) if offset else 0) | (byte & 0x7F)
        if not byte & 0x80:
            return value, position + offset + 1
    return None, position
