"""The scripts of a folder, read never run: the readers of what a script does to the manifests beside it (the words
it fills in with sed, inputs/sed_words.py; the manifests it writes, render/generated.py) read them here.

Bounded by the caller: the first ``max_files`` names that match, in sorted order, each read up to ``max_chars``.
A link or anything but a regular file is not read (a repository's files are read, never followed or waited on).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from gpulint.lint.inputs.gitignore import scope_for_walk
from gpulint.lint.inputs.sources import excluded


def script_texts(
    directory: str,
    suffixes: tuple[str, ...],
    names: Collection[str],
    max_files: int,
    max_chars: int,
    exclude: Sequence[str] | None = None,
) -> list[tuple[str, str]]:
    """(path, text) of the files of ``directory`` named one of ``names`` or ending in one of ``suffixes``. With
    ``exclude`` (gpulint's patterns), a file the directory walk leaves out is not read either: one those patterns
    name, or one git ignores (.gitignore, .git/info/exclude), as a generated or local script is."""
    try:
        listed = sorted(os.listdir(directory))
    except OSError:
        return []
    scripts = [name for name in listed if name in names or name.endswith(suffixes)]
    if exclude is not None:
        scope = scope_for_walk(os.path.realpath(directory), [])  # the walk noted what it could not read
        scripts = [
            name
            for name in scripts
            if not excluded(os.path.normpath(os.path.join(directory, name)), exclude)
            and not scope.ignored(name, is_dir=False)
        ]
    scripts = scripts[:max_files]
    texts: list[tuple[str, str]] = []
    for name in scripts:
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                texts.append((path, handle.read(max_chars)))
        except OSError:
            continue
    return texts
