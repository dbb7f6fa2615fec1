"""The instance-type catalog as a run uses it: the shipped rows (catalog/*.yaml), then the user's
``--node-catalog`` files (a row of the same name replaces the shipped one)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from gpulint.kube.pools.catalog import Catalog, parse_catalog, parse_machine_sizes
from gpulint.lint.data import data_dir
from gpulint.lint.errors import InventoryError
from gpulint.lint.inputs.collect import collect
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.inputs.sources import SourceError

MAX_CATALOG_BYTES = 8 * 1024 * 1024


class CatalogError(InventoryError):
    """A node catalog cannot be read: a usage error (exit 2) with file:line:col."""


@cache
def shipped_catalog() -> Catalog:
    catalog = Catalog()
    for path in sorted(data_dir("catalog").glob("*.yaml")):
        rows, problems = _parse(str(path), path.read_bytes(), vouch=True)
        assert not problems, problems  # tests/unit/test_node_catalog.py keeps the shipped files clean
        catalog.extend(rows)
        for document in load_bytes(str(path), path.read_bytes()).documents:
            catalog.sizes.update(parse_machine_sizes(document.data))
    return catalog


def load_catalog(paths: tuple[str, ...] | list[str]) -> Catalog:
    """The shipped catalog extended by ``paths``; a malformed file is a CatalogError naming every problem."""
    catalog = Catalog(dict(shipped_catalog().rows), dict(shipped_catalog().sizes))
    if not paths:
        return catalog
    try:
        sources = collect(list(paths))
    except SourceError as exc:
        raise CatalogError(f"--node-catalog: {exc}") from None
    messages: list[str] = []
    for source in sources:
        try:
            raw = source.read()
        except OSError as exc:
            messages.append(f"{source.display}: cannot read: {exc.strerror or exc}")
            continue
        if len(raw) > MAX_CATALOG_BYTES:
            messages.append(f"{source.display}: a node catalog is at most {MAX_CATALOG_BYTES // 1024 // 1024} MiB")
            continue
        rows, problems = _parse(source.display, raw)
        messages.extend(problems)
        catalog.extend(rows)
    if messages:
        raise CatalogError("the node catalog cannot be read:\n" + "\n".join(messages))
    return catalog


def _parse(display: str, raw: bytes, vouch: bool = False) -> tuple[list, list[str]]:
    """``vouch``: a shipped file, whose rows stand for what their sources state; a user's catalog is the
    operator's word, like an inventory, and stands whole."""
    loaded = load_bytes(display, raw)
    messages = [f"{display}:{p.line}:{p.column}: node catalog: {p.message}" for p in loaded.problems]
    rows = []
    for document in loaded.documents:
        if document.data is None:
            continue
        found, problems = parse_catalog(document.data, Path(display).name, vouch)
        rows.extend(found)
        for path, message in problems:
            line, column = document.locate(path)
            messages.append(f"{display}:{line}:{column}: node catalog: {message}")
    return rows, messages
