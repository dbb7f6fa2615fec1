"""The sources a run lints, in command-line order: directories walked, paths named, stdin; charts and
overlays rendered; each file read once (gpulint.lint.inputs.sources reads the bytes, bounded)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from gpulint.lint.inputs.file_walk import Candidate, Walk
from gpulint.lint.inputs.render.collect import Renderer
from gpulint.lint.inputs.sed_words import FolderScripts
from gpulint.lint.inputs.sources import (
    DEFAULT_MAX_FILE_BYTES,
    LIMIT_NAME,
    STDIN,
    STDIN_DISPLAY,
    Collection,
    CollectOptions,
    SkippedEntry,
    Source,
    SourceError,
    excluded,
    read_file,
    read_stdin,
)
from gpulint.lint.inputs.yaml_budget import over_budget


def collect_all(
    paths: Sequence[str],
    exclude: Sequence[str] = (),
    limit: int = DEFAULT_MAX_FILE_BYTES,
    options: CollectOptions | None = None,
) -> Collection:
    """Sources in command-line order, each read once; directories expanded (sorted), duplicates dropped;
    charts and overlays rendered (when ``options.render``); files that are no manifests skipped."""
    options = options or CollectOptions(exclude, limit)
    exclude, limit = options.exclude, options.limit
    sources: list[Source] = []
    notes: list[str] = []
    collection = Collection(sources, notes, FolderScripts(tuple(exclude)))
    render = options.render
    if render is not None and tuple(exclude) != render.exclude:
        render = replace(render, exclude=tuple(exclude))
    renderer = Renderer(render, collection)
    seen: set[tuple[int, int]] = set()
    stdin_read = False
    for path in paths:
        if path == STDIN:
            if not stdin_read:
                stdin_read = True
                display = options.stdin_filename or STDIN_DISPLAY
                content = read_stdin(limit)
                source = renderer.stdin(display, within_node_budget(display, content, options), options)
                if source is not None:
                    sources.append(source)
            continue
        if os.path.isdir(path):
            walk = Walk(path, exclude, notes, charts=renderer.enabled)
            walked = list(walk.files())
            files = renderer.directory(path, walk.directories, [c.path for c in walked if c.chart], sources)
            candidates = [(c, c.path, True) for c in walked if not c.chart and renderer.keep(c.path, files)]
        elif os.path.lexists(path):
            if options.force_exclude and excluded(path, exclude):
                continue
            if renderer.named_owner(path, sources) or not renderer.keep_named(path):
                continue  # rendered as part of its chart or overlay, or no manifest
            candidates = [(Candidate(path, follow=True), path, False)]  # a file named explicitly is always read
        else:
            raise SourceError(f"{path}: no such file or directory")
        for candidate, display, walked_file in candidates:
            try:
                read = read_file(
                    candidate.path,
                    display=display,
                    limit=limit,
                    limit_name=options.limit_name,
                    walked=walked_file,
                    follow=candidate.follow,
                )
            except SkippedEntry as skipped:
                notes.append(f"{display}: skipped: {skipped.reason}, not a regular file")
                continue
            if read.identity in seen and read.regular:
                continue
            seen.add(read.identity)
            fs_path = candidate.path if read.regular else None
            content = within_node_budget(display, read.content, options)
            parsed = renderer.parses.taken(candidate.path) if fs_path is not None else None
            values = renderer.values_file(display)
            sources.append(Source(display, fs_path, content, values=values, parsed=parsed, scripts=collection.scripts))
    for source in sources:  # a chart's or an overlay's output, as a file is
        if source.rendered is not None and options.node_budget:
            within_budget(source.display, source.rendered.output)
    return collection


def within_node_budget(display: str, content: bytes, options: CollectOptions) -> bytes:
    """``content``, unless parsing it would take more memory than the budget: a usage error (exit 2), as a file
    over the size limit is."""
    return within_budget(display, content) if options.node_budget else content


def within_budget(display: str, content: bytes) -> bytes:
    """``content``, unless it holds more nodes (MAX_YAML_NODES) or objects (MAX_OBJECTS) than a run can lint in
    bounded memory: a usage error (exit 2) at the first node or object past the bound."""
    found = over_budget(content)
    if found is not None:
        raise SourceError(f"{display}:{found.line}:{found.column}: {found.message()}")
    return content


def collect(
    paths: Sequence[str],
    exclude: Sequence[str] = (),
    limit: int = DEFAULT_MAX_FILE_BYTES,
    limit_name: str = LIMIT_NAME,
    node_budget: bool = True,
) -> list[Source]:
    options = CollectOptions(exclude, limit, limit_name=limit_name, node_budget=node_budget)
    return collect_all(paths, options=options).sources
