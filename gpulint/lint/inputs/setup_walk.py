"""What the readers of a repository's own setup share (knative_setup, autopilot_setup): the work tree a source
comes from, a file's text read once and bounded, and whether a source may hold what a reader looks for."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence

from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.repo_index import shown_root, work_tree
from gpulint.lint.inputs.sources import Source, SourceError

MAX_FILES = 5_000
MAX_BYTES = 1024 * 1024


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


def setup_files(
    root: str, select: Selection, exclude: Sequence[str] = (), known: Mapping[str, bytes] | None = None
) -> Iterator[tuple[str, str]]:
    """Each file of the work tree at ``root`` that ``select`` takes, walked as ``gpulint check DIR`` walks: its
    path relative to ``root`` and its text (``known``: files already read, absolute path -> bytes). At most
    MAX_FILES files, no link followed; a folder that cannot be read ends the walk (what came before it stands)."""
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
                yield os.path.relpath(path, shown), file_text(path, known or {})
                continue
            absolute = path if os.path.isabs(path) else here + path
            yield path[len(inside) :], file_text(path, known or {}, absolute)
    except SourceError:
        return
