"""Where a field of a ConfigMap that kustomize's configMapGenerator made was written: the file the generator read.

kustomize records only the generator's kustomization as the origin of a generated object (``configuredIn``).
The data key says which source the generator read for it (api/kv/kv.go, api/types/kvpairsources.go): a
``files:`` entry (``key=path``, or ``path`` keyed by its file name), a line ``KEY=VALUE`` of an ``envs:`` file
(or the older ``env:``), or a ``literals:`` entry of the kustomization. A field inside the value (a pod
template the ConfigMap holds, kube/held_pods) is placed at its line and column in that file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from gpulint.kube.fields import mapping, sequence, text
from gpulint.lint.findings import Path
from gpulint.lint.inputs.file_walk import read_head
from gpulint.lint.inputs.loader import LoadedFile, LocatedDocument
from gpulint.lint.inputs.render.layout import Kustomization

GENERATOR = "ConfigMapGenerator"  # a Secret's data is base64: nothing in it is placed by its text
KEYS = "configMapGenerator"


@dataclass(frozen=True)
class Written:
    """The source a generator read for one data key: a file (``line`` 0: the whole file is the value), or a
    line of an env file or the kustomization (a ``KEY=VALUE`` whose value starts at ``column``)."""

    file: str  # absolute
    line: int = 0
    column: int = 0


def written(kustomization: Kustomization, name: str, key: str) -> Written | None:
    """Where the generator of ``kustomization`` whose object is named ``name`` (after any prefix, suffix and
    hash kustomize added) read the data key ``key``; None when no generator there says."""
    generators = [mapping(g) for g in sequence(kustomization.data.get(KEYS))]
    # the generator's own name is inside the object's (namePrefix, nameSuffix, the content hash): the longest wins
    named = sorted(
        ((index, g) for index, g in enumerate(generators) if text(g.get("name")) and text(g.get("name")) in name),
        key=lambda item: -len(text(item[1].get("name"))),
    )
    for index, generator in named:
        found = _in_generator(kustomization, index, generator, key)
        if found is not None:
            return found
    return None


def _in_generator(kustomization: Kustomization, index: int, generator: dict[str, object], key: str) -> Written | None:
    directory = kustomization.directory
    for entry in sequence(generator.get("files")):
        if not isinstance(entry, str):
            continue
        named, equals, source = entry.partition("=")
        source = source if equals else named
        if (named.strip() if equals else os.path.basename(source)) == key:
            return Written(os.path.normpath(os.path.join(directory, source.strip())))
    env_files = [e for e in sequence(generator.get("envs")) if isinstance(e, str)]
    env_files += [text(generator.get("env"))] if text(generator.get("env")) else []
    for entry in env_files:
        file = os.path.normpath(os.path.join(directory, entry))
        place = _env_line(file, key)
        if place is not None:
            return Written(file, *place)
    document = kustomization.document
    for item, literal in enumerate(sequence(generator.get("literals"))):
        if isinstance(literal, str) and literal.partition("=")[0].strip() == key and document is not None:
            line, column = document.locate((KEYS, index, "literals", item))
            return Written(kustomization.path, line, column + literal.index("=") + 1)
    return None


MAX_ENV_BYTES = 1024 * 1024


def _env_line(file: str, key: str) -> tuple[int, int] | None:
    """Line and column (1-based) of ``key``'s value in an env file (api/kv/kv.go: ``KEY=VALUE`` lines, ``#``
    comments; the last line of a key wins, as kustomize keeps the last)."""
    content = read_head(file, MAX_ENV_BYTES).decode("utf-8", "replace")  # a link, a FIFO: nothing read
    found = None
    for number, line in enumerate(content.splitlines(), 1):
        stripped = line.lstrip()
        named, equals, _ = stripped.partition("=")
        if equals and not stripped.startswith("#") and named.strip() == key:
            found = (number, len(line) - len(stripped) + len(named) + 2)
    return found


def place_in_source(
    source: Written, inner: Path, on_key: bool, load: Callable[[str], LoadedFile | None]
) -> tuple[int, int]:
    """Line and column of the field ``inner`` (a path inside the value) in the source the generator read."""
    if source.line:
        return source.line, source.column  # a one-line value: its fields all start there
    loaded = load(source.file)
    document = _first_document(loaded) if loaded is not None else None
    if document is None or not inner:
        return 1, 1
    return document.locate(inner, on_key)


def _first_document(loaded: LoadedFile) -> LocatedDocument | None:
    return next((d for d in loaded.documents if isinstance(d.data, dict)), None)
