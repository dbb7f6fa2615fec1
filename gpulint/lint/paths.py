"""Where a path lies: inside a directory (links resolved), and whether a configuration's glob names it."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import PurePath

# Folders that hold the documentation of one past release: Docusaurus's versioned_docs/version-X (and its
# translations, i18n/<lang>/docusaurus-plugin-content-docs/version-X), or a release-named folder a few levels
# under a documentation folder (docs/v0.3, website/docs/1.2.x, docs/release-0.3), or one right under a regression
# folder: the manifests a release's regression test replays against that release (aibrix's test/regression/v0.2.1).
_SNAPSHOT_PARENTS = frozenset({"versioned_docs", "docusaurus-plugin-content-docs"})
_DOCS_FOLDERS = frozenset({"docs", "doc", "documentation", "website", "site"})
_RELEASE_FOLDER = re.compile(r"(?:v|release-)?\d+\.\d+(?:\.\d+)?(?:\.x)?", re.IGNORECASE)
_REGRESSION_FOLDERS = frozenset({"regression", "regressions"})
_DOCS_DEPTH = 3  # docs/<project>/<section>/v0.3 at most: a "site" folder far above is no documentation tree


def is_within(path: str, directory: str) -> bool:
    """``path``, links resolved, is ``directory`` or lies below it."""
    real, top = os.path.realpath(path), os.path.realpath(directory)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def release_snapshot(path: str) -> str | None:
    """The folder above ``path`` that documents one past release (None: none). Its manifests match that release's
    CRDs, not the repository's current ones."""
    parts = PurePath(os.path.abspath(path)).parts[:-1]
    for index, name in enumerate(parts):
        if index and name.startswith("version-") and parts[index - 1] in _SNAPSHOT_PARENTS:
            return os.path.join(*parts[: index + 1])
        above = parts[max(0, index - _DOCS_DEPTH) : index]
        if _RELEASE_FOLDER.fullmatch(name) and (
            any(folder.lower() in _DOCS_FOLDERS for folder in above)
            or (index and parts[index - 1].lower() in _REGRESSION_FOLDERS)
        ):
            return os.path.join(*parts[: index + 1])
    return None


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
