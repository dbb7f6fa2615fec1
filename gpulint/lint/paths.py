"""Where a path lies: inside a directory (links resolved), and whether a configuration's glob names it."""

from __future__ import annotations

import fnmatch
import os
from pathlib import PurePath


def is_within(path: str, directory: str) -> bool:
    """``path``, links resolved, is ``directory`` or lies below it."""
    real, top = os.path.realpath(path), os.path.realpath(directory)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _candidates(path: str, root: str) -> set[str]:
    candidates = {path, PurePath(path).as_posix()}
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if not relative.startswith(".."):
        candidates.add(PurePath(relative).as_posix())
    return candidates


def path_matches(path: str, glob: str, root: str) -> bool:
    """``glob`` (relative to the configuration's directory) matches ``path``."""
    return any(
        fnmatch.fnmatch(candidate, glob) or fnmatch.fnmatch(candidate, f"*/{glob}")
        for candidate in _candidates(path, root)
    )
