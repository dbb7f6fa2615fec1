"""Files parsed once per run. The release readers (render/releases) parse YAML files while the sources are
collected: Argo CD Applications, Flux HelmReleases, the ConfigMaps and Secrets a valuesFrom names. Those files are
linted too; the run lints the readers' parse of the same bytes instead of parsing them again."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from gpulint.lint.inputs.loader import LoadedFile, load_bytes
from gpulint.lint.inputs.sed_words import FolderScripts


@dataclass
class Parsed:
    """One file's parse and the bytes it was made from, handed to the run once: a second parse of the file (a
    split run's worker, a fix's rerun) makes its own, so no two parses share their objects."""

    raw: bytes
    loaded: LoadedFile | None

    def take(self, raw: bytes, shown: str) -> LoadedFile | None:
        """The parse, its documents under the path ``shown``, when ``raw`` are the bytes it was made from."""
        loaded, self.loaded = self.loaded, None
        same, self.raw = raw == self.raw, b""
        if loaded is None or not same:
            return None
        documents = [replace(document, path=shown) for document in loaded.documents]
        return replace(loaded, path=shown, documents=documents)


@dataclass
class Parses:
    """The files parsed while the sources are collected, by real path; ``scripts``: the collection's reader of the
    scripts beside them (inputs/sed_words.py)."""

    by_path: dict[str, Parsed] = field(default_factory=dict)
    scripts: FolderScripts = field(default_factory=FolderScripts)

    def load(self, path: str, raw: bytes) -> LoadedFile:
        """``loader.load_bytes(path, raw)``, once for the same file and bytes."""
        key = os.path.realpath(path)
        kept = self.by_path.get(key)
        if kept is not None and kept.loaded is not None and kept.raw == raw:
            return kept.loaded
        loaded = load_bytes(path, raw, scripts=self.scripts)
        self.by_path[key] = Parsed(raw, loaded)
        return loaded

    def taken(self, path: str) -> Parsed | None:
        """The parse of the file at ``path``, for its source to carry to the run (no longer kept here)."""
        return self.by_path.pop(os.path.realpath(path), None)
