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

from gpulint.lint.inputs.sources import ReadFile, SkippedEntry, SourceError, read_file

GIT = ".git"
MAX_IGNORE_FILE_BYTES = 16 * 1024 * 1024  # git reads any size; generated monorepo ignore files hold 100,000 lines
MAX_INDEX_BYTES = 256 * 1024 * 1024  # the index of a monorepo with a million files is ~100 MiB
IGNORE_LIMIT_NAME, INDEX_LIMIT_NAME = "max-ignore-file-bytes", "max-index-bytes"
_ENTRY_FIXED = 40  # ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size: 4 bytes each
# A path git can check out is at most PATH_MAX (4,096) bytes. Index version 4 writes each path as the one
# before it minus N bytes plus a suffix, so 3.7 MiB of one-byte suffixes spelled paths of 1.9 GiB in all:
# the paths read may spell at most this many bytes for each byte of the index (a real version 4 index of a
# monorepo spells about one; docs/gitignore.md).
MAX_INDEX_PATH_BYTES = 4096
MAX_INDEX_EXPANSION = 8
_OBJECT_FORMAT_SHA256 = re.compile(rb"(?im)^\s*objectformat\s*=\s*sha256\s*$")

if TYPE_CHECKING:
    import re2

# RE2 compiles a set of patterns within a memory budget (8 MiB by default): 5,000 plain patterns exceed it,
# so an ignore file is compiled a set of this many patterns at a time (generated monorepo ignore files hold
# 100,000 lines; docs/gitignore.md has the measurements).
MAX_SET_PATTERNS = 1000
# pathspec's gitignore regexes mark a directory with this group (pathspec/patterns/gitignore/spec.py, 1.1):
# the pattern then matches through a "/", which RE2's sets, with no capture groups, match as two regexes.
_DIR_MARK = "(?P<ps_d>/)"
_DIR_MARK_OR_END = f"(?:{_DIR_MARK}|$)"


@dataclass(frozen=True)
class _Regex:
    include: bool  # False: a negation (!pattern) re-includes
    line: int  # the pattern's place in its file: among matches of the same rank the last one wins
    directory: bool  # matched only through a directory of the path (``build/`` in ``build/x``)


# A pattern that is a plain path (most of a generated ignore file: `services/a/out-12.bin`, `node_modules/`):
# looked up by name instead of matched, so 100,000 of them cost a lookup per directory level of a path.
_LITERAL = re.compile(r"(?P<negated>!?)(?P<anchor>/?)(?P<path>[\w.+-]+(?:/[\w.+-]+)*)(?P<directory>/?)")


@dataclass
class _Literals:
    """Plain-path patterns by the name (unanchored) or the path (anchored) they match."""

    anywhere: dict[str, list[_Regex]] = field(default_factory=dict)  # `foo`, `foo/`: a name at any level
    anchored: dict[str, list[_Regex]] = field(default_factory=dict)  # `/foo`, `a/b`: a path from the base
    only_directories: set[int] = field(default_factory=set)  # the lines of `foo/` patterns

    def add(self, line: str, number: int) -> bool:
        """Index ``line`` when it is a plain path; False: it is not (a glob, an escape, a `.` part)."""
        match = _LITERAL.fullmatch(line)
        if match is None or any(part in (".", "..") for part in match["path"].split("/")):
            return False
        include = not match["negated"]
        table = self.anchored if match["anchor"] or "/" in match["path"] else self.anywhere
        table.setdefault(match["path"], []).append(_Regex(include, number, False))
        if match["directory"]:
            self.only_directories.add(number)
        return True

    def matches(self, path: str) -> list[_Regex]:
        """As the pattern's regex would match ``path``: a whole path or a name ending it ranks as the path's
        own match; a leading path or a name followed by "/" as a directory's (``directory`` True)."""
        found: list[_Regex] = []
        start = 0
        while start <= len(path):
            end = path.find("/", start)
            end = len(path) if end < 0 else end
            if end == start:
                break
            directory = end < len(path)  # the name is followed by "/": a directory of the path
            for table, key in ((self.anywhere, path[start:end]), (self.anchored, path[:end])):
                for regex in table.get(key, ()):
                    if directory or regex.line not in self.only_directories:
                        found.append(_Regex(regex.include, regex.line, directory))
            start = end + 1
        return found


@dataclass(frozen=True)
class _Layer:
    """The patterns of one ignore file, matched against paths relative to its directory."""

    base: str  # the directory, relative to the work tree's top: "" or ending in "/"
    sets: tuple[tuple[re2.Set, tuple[_Regex, ...]], ...]
    literals: _Literals = field(default_factory=_Literals)

    def verdict(self, relative: str) -> bool | None:
        """True: ignored, False: re-included by a negation, None: no pattern matches."""
        if not relative.startswith(self.base):
            return None
        path = relative[len(self.base) :]
        found = self.literals.matches(path)
        for regex_set, regexes in self.sets:
            found.extend(regexes[i] for i in _matches(regex_set, path))
        # As pathspec's gitignore matcher decides: the last pattern that matches the path itself wins; without
        # one, the last pattern that matches one of its directories.
        best: tuple[bool, int, bool] | None = None  # (of the path itself, line, include)
        for regex in found:
            candidate = (not regex.directory, regex.line, regex.include)
            if best is None or candidate[:2] > best[:2]:
                best = candidate
        return None if best is None else best[2]


def _matches(regex_set: re2.Set, path: str) -> list[int]:
    try:
        return regex_set.Match(path) or []
    except UnicodeEncodeError:  # a name that is not UTF-8 (PEP 383 surrogates): matched as git sees bytes
        return regex_set.Match(path.encode("utf-8", "surrogateescape")) or []


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


def git_ignored(path: str) -> bool:
    """Whether git leaves the file at ``path`` (a real path; it may not exist) out of its work tree: a file
    a build step writes (`params.env` that `make deploy` generates) is absent from every checkout."""
    notes: list[str] = []
    directory, name = os.path.split(path)
    return scope_for_walk(directory, notes).ignored(name, is_dir=False)


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
    layer = layer_of(lines, prefix)
    # no pattern (the .git/info/exclude every `git init` writes holds comments only): no layer to ask per file
    return () if not (layer.sets or layer.literals.anywhere or layer.literals.anchored) else (layer,)


def layer_of(lines: list[str], prefix: str = "") -> _Layer:
    """The patterns of an ignore file: plain paths indexed, the others compiled into RE2 sets."""
    literals = _Literals()
    # comments and empty lines match nothing: left out before pathspec (imported only for a pattern) is asked
    rest = [
        (number, line)
        for number, line in enumerate(lines)
        if line and not line.startswith("#") and not literals.add(line, number)
    ]
    return _Layer(prefix, _compile(_regexes(rest)) if rest else (), literals)


def _regexes(lines: list[tuple[int, str]]) -> list[tuple[str, _Regex]]:
    """Each pattern's regexes (a directory pattern gives two); git skips a pattern it cannot parse, and so
    do we, keeping the others' order."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern  # only when a repository has ignore rules

    regexes = []
    for number, line in lines:
        try:
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
        except Exception:  # pathspec's errors for a bad pattern are of several types
            continue
        if regex is None or include is None:
            continue  # a blank line or a comment
        text = regex if isinstance(regex, str) else regex.decode("utf-8", "surrogateescape")
        if text.endswith(_DIR_MARK_OR_END):
            base = text[: -len(_DIR_MARK_OR_END)]
            regexes += [(f"{base}/", _Regex(include, number, True)), (f"{base}$", _Regex(include, number, False))]
        elif _DIR_MARK in text:
            regexes.append((text.replace(_DIR_MARK, "/"), _Regex(include, number, True)))
        else:
            regexes.append((text, _Regex(include, number, False)))
    return regexes


def _compile(regexes: list[tuple[str, _Regex]]) -> tuple[tuple[re2.Set, tuple[_Regex, ...]], ...]:
    """RE2 sets of at most MAX_SET_PATTERNS regexes; a set over RE2's memory budget is split in two, and a
    regex RE2 cannot compile on its own is left out. Never a backtracking matcher: a pattern could hang it."""
    try:
        import re2
    except ImportError as exc:
        raise SourceError(f"gitignore matching needs google-re2 (pip install 'pathspec[re2]'): {exc}") from None
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    sets = []
    pending = [regexes[start : start + MAX_SET_PATTERNS] for start in range(0, len(regexes), MAX_SET_PATTERNS)]
    while pending:
        chunk = pending.pop(0)
        regex_set = re2.Set.SearchSet(options)
        kept: dict[int, _Regex] = {}
        for text, regex in chunk:
            try:
                kept[regex_set.Add(text)] = regex
            except re2.error:
                continue
        try:
            regex_set.Compile()
        except re2.error:
            if len(chunk) > 1:
                half = len(chunk) // 2
                pending[:0] = [chunk[:half], chunk[half:]]
            continue
        sets.append((regex_set, tuple(kept[index] for index in sorted(kept))))
    return tuple(sets)


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
    budget = MAX_INDEX_EXPANSION * len(raw)  # bytes the paths may spell in all
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
        budget -= len(name)
        if len(name) > MAX_INDEX_PATH_BYTES or budget < 0:
            return None  # no path git checks out, or a crafted index: not read
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
