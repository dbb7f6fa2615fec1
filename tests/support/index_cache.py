"""The repository index's cache file as the tests read and plant it: one line of JSON (the table: each file's stat,
its objects' references with their data's spans, and its outlines' span), then the objects' JSON texts and the
outlines' back to back (lint/inputs/repo_index.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_index(path: Path) -> tuple[dict[str, Any], bytes]:
    """The table and the bytes after it."""
    table, _, written = path.read_bytes().partition(b"\n")
    return json.loads(table), written


def outlines_text(path: Path, key: str) -> bytes:
    """The JSON text of the outlines the cache keeps for the file ``key``."""
    document, written = read_index(path)
    start, end = document["files"][key]["outlines"]
    return written[start:end]


def write_index(path: Path, document: dict[str, Any], written: bytes = b"") -> None:
    path.write_bytes(json.dumps(document).encode() + b"\n" + written)
