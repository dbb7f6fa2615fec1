"""Programs of a repository that write the values its charts are rendered with, read and never run.

Some charts are rendered only by a program of their own repository: kubeflow/arena's CLI writes the values of
each job it submits (`pkg/util/helm` GenerateValueFile: a Go struct marshalled to YAML, its fields tagged
``yaml:"nodeSelectors"``) and runs ``helm template -f VALUES CHART``. Such a chart's values.yaml leaves out what
the program always gives, so the chart fails on its own (`len` of a nil value). A value whose key a Go field of
the repository is tagged with is given at install, as one a recipe's values file gives is.

Bounded: at most MAX_FILES Go files of the work tree (.gitignore honoured, vendored trees and hidden folders
skipped, no link followed), the first MAX_BYTES of each.
"""

from __future__ import annotations

import os
import re

from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.sources import SourceError

MAX_FILES = 5_000
MAX_BYTES = 1024 * 1024
GO_SOURCES = Selection(suffixes=(".go",), skipped=frozenset({"node_modules", "vendor", "third_party", "testdata"}))


def written_by_program(root: str, key: str) -> str | None:
    """The first Go file under ``root`` (relative to it) with a struct field tagged ``yaml:"KEY"`` (options after
    a comma allowed), or None."""
    if not re.fullmatch(r"[A-Za-z_][\w-]*", key):
        return None
    tag = re.compile(rb'`[^`\n]*\byaml:"' + re.escape(key.encode()) + rb'[",]')
    walk = Walk(root, (), [], select=GO_SOURCES)
    try:
        for count, candidate in enumerate(walk.files()):
            if count >= MAX_FILES or candidate.follow:
                return None
            if tag.search(read_head(candidate.path, MAX_BYTES)):
                return os.path.relpath(candidate.path, root)
    except SourceError:
        return None
    return None
