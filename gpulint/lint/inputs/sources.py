"""Which files to lint, and their bytes: paths on the command line, directories walked, or stdin.

Every source is read exactly once, here, and its bytes travel with it: a pipe
(``<(helm template …)``) cannot be read twice, and every consumer (the cross-file
inventory, cross-object policies, the per-file checks) must see the same bytes.

Nothing here runs a program: ``.gitignore`` rules are evaluated by gpulint/gitignore.py,
never by calling git, which would run commands a repository's ``.git/config`` chooses
(``core.fsmonitor``). Reads are bounded: the
file type and size are checked before a byte is read, and no more than the limit
plus one byte is ever read.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.lint.inputs.parsed_once import Parsed
    from gpulint.lint.inputs.render.options import RenderOptions
    from gpulint.lint.inputs.render.rendered import Rendered
    from gpulint.lint.inputs.sed_words import FolderScripts

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_DISPLAY = "<stdin>"
# The same limit as the YAML loader's (gpulint.lint.inputs.loader.MAX_FILE_BYTES). The API server takes
# 3 MiB per request, but repositories hold bigger multi-document files and inventories.
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
LIMIT_NAME = "max-file-bytes"
_CHUNK = 1024 * 1024


class SourceError(Exception):
    """An input that cannot be read as asked: a usage error (exit code 2)."""


@dataclass(frozen=True)
class Source:
    display: str  # the path shown in findings
    fs_path: str | None = None  # the regular file on disk (for --fix); None for stdin and pipes
    content: bytes | None = None  # read once by collect(); None: read fs_path when asked
    rendered: Rendered | None = None  # a chart or overlay (or piped `helm template` output): content is its output
    values: bool = False  # named like Helm values: only documents with both apiVersion and kind are objects
    # the release readers' parse of the file, made while the sources were collected: the run lints it (parsed_once)
    parsed: Parsed | None = field(default=None, compare=False, repr=False)
    # a kustomization read for its helmCharts of the GPU stack's remote charts only (inputs/chart_entries.py): none
    # of its documents is linted as an object (its overlay's render is)
    chart_entries: bool = False
    # the collection's reader of the scripts beside the manifests (inputs/sed_words.py): the run's parse reads each
    # folder once; None: the file's folder is read for it alone
    scripts: FolderScripts | None = field(default=None, compare=False, repr=False)

    def read(self) -> bytes:
        if self.rendered is not None:
            return self.rendered.output
        if self.content is not None:
            return self.content
        assert self.fs_path is not None
        try:
            return read_file(self.fs_path, display=self.display).content
        except SourceError as exc:  # the callers report unreadable files (OSError) as findings
            raise OSError(errno.EIO, str(exc).removeprefix(f"{self.display}: ")) from None

    def fresh(self) -> Source:
        """The same file, to be read again when linted (after --fix rewrote it)."""
        return replace(self, content=None, parsed=None) if self.fs_path is not None else self


@dataclass(frozen=True)
class ReadFile:
    content: bytes
    identity: tuple[int, int]  # (st_dev, st_ino): one file reached by two names is linted once
    regular: bool


class SkippedEntry(Exception):
    """A directory entry the walk does not read (the reason becomes a note)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _size_text(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def _too_large(display: str, limit: int, size: int | None, limit_name: str = LIMIT_NAME) -> SourceError:
    what = f"file is {size} bytes" if size is not None else f"input is more than {limit} bytes"
    return SourceError(f"{display}: {what}, over the limit of {limit} bytes ({_size_text(limit)}, {limit_name})")


def kind_of_mode(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
    )
    return next((name for test, name in kinds if test(mode)), "an entry of unknown type")


def _read_bounded(fd: int, limit: int, expected: int) -> bytes | None:
    """At most ``limit`` + 1 bytes; None when there are more than ``limit``."""
    chunks: list[bytes] = []
    total = 0
    while True:
        # A regular file is read in one call sized by fstat (+1 to notice growth); a pipe in chunks.
        chunk = os.read(fd, max(1, min(max(expected - total, _CHUNK), limit + 1 - total)))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None


def read_file(
    path: str,
    *,
    display: str | None = None,
    limit: int = DEFAULT_MAX_FILE_BYTES,
    limit_name: str = LIMIT_NAME,
    walked: bool = False,
    follow: bool = True,
) -> ReadFile:
    """Read one file, bounded. Named by the user (``walked`` False), a FIFO is read (``<(cat f)``);
    met in a directory walk, anything but a regular file is skipped (raises SkippedEntry). Devices and
    sockets are refused either way: ``/dev/zero`` never ends."""
    display = display or path
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = None if walked else os.stat(path).st_mode
        if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            # Not even opened: opening a device can act on it (a tape rewinds, a terminal hangs up).
            raise SourceError(f"{display}: {kind_of_mode(mode)}, not a regular file or pipe; not read")
        if mode is not None and stat.S_ISFIFO(mode):
            fd = os.open(path, flags)  # blocking: a named pipe's writer may come later
        else:
            # Non-blocking, so a FIFO swapped in after the walk looked cannot hang the open.
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if walked and exc.errno == errno.ELOOP:
            raise SkippedEntry("a symbolic link") from None  # replaced by a link after the walk looked
        raise SourceError(f"{display}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode)
        if not regular and (walked or not stat.S_ISFIFO(info.st_mode)):
            if walked:
                raise SkippedEntry(kind_of_mode(info.st_mode))
            raise SourceError(f"{display}: {kind_of_mode(info.st_mode)}, not a regular file or pipe; not read")
        if regular and info.st_size > limit:
            raise _too_large(display, limit, info.st_size, limit_name)
        content = _read_bounded(fd, limit, info.st_size + 1 if regular else _CHUNK)
        if content is None:  # a pipe, or a file that grew since fstat
            raise _too_large(display, limit, os.fstat(fd).st_size if regular else None, limit_name)
        return ReadFile(content, (info.st_dev, info.st_ino), regular)
    except OSError as exc:
        raise SourceError(f"{display}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_stdin(limit: int) -> bytes:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        raise SourceError(f"{STDIN}: standard input is closed")
    try:
        content = stream.read(limit + 1)
    except OSError as exc:
        raise SourceError(f"{STDIN_DISPLAY}: cannot read: {exc.strerror or exc}") from None
    if len(content) > limit:
        raise _too_large(STDIN_DISPLAY, limit, None)
    return content


@dataclass
class Collection:
    sources: list[Source]
    notes: list[str]  # what a directory walk skipped, and why
    # the words the scripts beside the manifests fill in with sed, each folder read once for the sources, the
    # release readers' parses and the repository index
    scripts: FolderScripts
    debug_notes: list[str] = field(default_factory=list)  # files skipped as no manifests (shown with --verbose)


@dataclass(frozen=True)
class CollectOptions:
    exclude: Sequence[str] = ()
    limit: int = DEFAULT_MAX_FILE_BYTES
    force_exclude: bool = False  # files named on the command line honour `exclude` too (ruff's --force-exclude)
    stdin_filename: str = ""  # the name of piped input (--stdin-filename)
    render: RenderOptions | None = None  # None: charts and overlays are read file by file
    limit_name: str = LIMIT_NAME  # how a message past the limit names it
    # manifests are refused past gpulint.lint.inputs.yaml_budget.MAX_YAML_NODES; inventories are read by leaner readers
    node_budget: bool = True


def excluded(path: str, patterns: Sequence[str]) -> bool:
    normalized = path.replace(os.sep, "/")
    return any(
        fnmatch.fnmatch(normalized, p)
        or fnmatch.fnmatch(normalized, f"*/{p}")
        or fnmatch.fnmatch(normalized, f"{p}/*")
        or fnmatch.fnmatch(normalized, f"*/{p}/*")
        for p in patterns
    )
