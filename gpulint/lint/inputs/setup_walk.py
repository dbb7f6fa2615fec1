"""What the readers of a repository's own setup share (knative_setup, autopilot_setup, terraform_clusters): the work
tree a source comes from, a file's text read once and bounded, whether a source may hold what a reader looks for, and
what a reader took from each file kept beside the repository index (setup_facts)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from gpulint import __version__
from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.repo_index import has_cache, read_cache, shown_root, work_tree, write_cache
from gpulint.lint.inputs.sources import Source, SourceError

MAX_FILES = 5_000
MAX_BYTES = 1024 * 1024
MAX_FACTS_BYTES = 16 * 1024 * 1024  # a reader's cache file: 5,000 files' facts, each a few words
Facts = list[Any]  # what a reader takes from one file, as JSON holds it


def root_of(source: Source) -> str | None:
    """The work tree of the file (or the chart's or overlay's folder) a source comes from."""
    where = source.fs_path or source.display
    if os.path.isdir(where):
        return work_tree(os.path.realpath(where))
    if os.path.isfile(where):
        return work_tree(os.path.dirname(os.path.realpath(where)))
    return None


def mentions(source: Source, words: Sequence[bytes]) -> bool:
    """The source's text (a chart's or overlay's: its render) holds one of ``words``, or is not known."""
    content = source.rendered.output if source.rendered is not None else source.content
    return content is None or any(word in content for word in words)


def roots_mentioning(sources: Sequence[Source], words: Sequence[bytes]) -> list[str]:
    """The work trees, each once and in order, of the sources that may hold one of ``words`` (their text first: a
    path costs system calls)."""
    roots: list[str] = []
    for source in sources:
        root = root_of(source) if mentions(source, words) else None
        if root is not None and root not in roots:
            roots.append(root)
    return roots


def known_contents(sources: Sequence[Source]) -> dict[str, bytes]:
    """The sources' bytes already read, by absolute path: a setup walk does not read them again."""
    return {os.path.abspath(s.fs_path): s.content for s in sources if s.fs_path and s.content is not None}


def file_text(path: str, known: Mapping[str, bytes], absolute: str | None = None) -> str:
    """``absolute``: the path made absolute, when the caller knows it cheaper than os.path.abspath."""
    content = known.get(absolute or os.path.abspath(path))
    if content is None:
        content = read_head(path, MAX_BYTES)
    return content[:MAX_BYTES].decode("utf-8", errors="replace")


def setup_facts(
    root: str,
    select: Selection,
    reader: tuple[str, Callable[[str, str], Facts], Callable[[Any], bool]],
    exclude: Sequence[str] = (),
    known: Mapping[str, bytes] | None = None,
) -> list[tuple[str, Facts]]:
    """Each file of the work tree at ``root`` that ``select`` takes, walked as ``gpulint check DIR`` walks (at most
    MAX_FILES files, no link followed; a folder that cannot be read ends the walk, what came before it stands): its
    path relative to ``root`` and what the ``reader`` takes from it: (its cache file's name, the facts of a file's
    path and text, whether cached facts are as it writes them). ``known``: files already read (absolute path ->
    bytes), not read again.

    In a work tree that holds gpulint's cache directory (the repository index made it: pre-commit runs there), each
    file's facts are kept there by the index's test, its size, mtime and inode: a file whose three agree is not read
    again (a warm pre-commit run read up to MAX_FILES files for the words of a few). The cache is data from disk:
    bounded, read as JSON, validated entry by entry and dropped whole when anything is off."""
    name, facts_of, valid = reader
    cached = _cached_facts(root, name, valid) if has_cache(root) else None
    found: list[tuple[str, Facts]] = []
    fresh: dict[str, list[Any]] = {}
    for path, relative, absolute in _walked(root, select, exclude):
        signature = _signature(path)
        entry = cached.get(relative) if cached is not None and signature is not None else None
        if entry is not None and entry[:3] == signature:
            facts = entry[3]
        else:
            facts = facts_of(relative, file_text(path, known or {}, absolute))
        found.append((relative, facts))
        if signature is not None:
            fresh[relative] = [*signature, facts]
    if cached is not None and fresh != cached:
        document = {"gpulint": __version__, "root": root, "files": fresh}
        write_cache(root, name, document, MAX_FACTS_BYTES)
    return found


def _signature(path: str) -> list[int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _cached_facts(root: str, name: str, valid: Callable[[Any], bool]) -> dict[str, list[Any]]:
    """The reader's cached entries (relative path -> size, mtime, inode, facts), or {} when anything is off."""
    document = read_cache(root, name, MAX_FACTS_BYTES)
    if not isinstance(document, dict) or document.get("gpulint") != __version__ or document.get("root") != root:
        return {}
    files = document.get("files")
    if not isinstance(files, dict):
        return {}
    # by exact type, unpacked, and a file's facts only when it has some (every reader takes none as valid): every
    # warm run tests every entry, most of them a file that says nothing
    for key, entry in files.items():
        if type(key) is not str or type(entry) is not list or len(entry) != 4:
            return {}
        size, mtime, inode, facts = entry
        if not (type(size) is int and type(mtime) is int and type(inode) is int and min(size, mtime, inode) >= 0):
            return {}
        if type(facts) is not list or (facts and not valid(facts)):
            return {}
    return files


def _walked(root: str, select: Selection, exclude: Sequence[str]) -> Iterator[tuple[str, str, str | None]]:
    """Each file setup_facts reads: its walked path, its path relative to ``root``, and its absolute path (None:
    not known cheaper than os.path.abspath)."""
    shown = shown_root(root)
    walk = Walk(shown, tuple(exclude), [], select=select)  # its notes are the manifest walk's to give
    # The walk's paths are normalized and under ``shown``: a prefix cut, not os.path.relpath and abspath per file
    # (their normpath calls were a third of a warm pre-commit run's walk).
    inside = "" if shown == os.curdir else shown if shown.endswith(os.sep) else shown + os.sep
    here = os.path.join(os.getcwd(), "")
    try:
        for count, candidate in enumerate(walk.files()):
            if count >= MAX_FILES or candidate.follow:
                return  # in-tree links come last: none is followed
            path = candidate.path
            if not path.startswith(inside) or path.startswith(os.pardir):
                yield path, os.path.relpath(path, shown), None
                continue
            yield path, path[len(inside) :], path if os.path.isabs(path) else here + path
    except SourceError:
        return
