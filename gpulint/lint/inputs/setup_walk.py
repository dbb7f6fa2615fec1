"""What the readers of a repository's own setup share (knative_setup, autopilot_setup): the work tree a source
comes from, a file's text read once and bounded, and whether a source may hold what a reader looks for."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from gpulint.lint.inputs.file_walk import read_head
from gpulint.lint.inputs.repo_index import work_tree
from gpulint.lint.inputs.sources import Source

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


def file_text(path: str, known: Mapping[str, bytes]) -> str:
    content = known.get(os.path.abspath(path))
    if content is None:
        content = read_head(path, MAX_BYTES)
    return content[:MAX_BYTES].decode("utf-8", errors="replace")
