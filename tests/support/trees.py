"""A repository written from a mapping of paths to texts, as the render and precision tests shape them."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_tree(root: Path, files: dict[str, str], *, dedent: bool = True) -> None:
    """Write each text at its path under ``root`` (folders made), dedented and without its leading newlines so
    tests can write files as indented triple-quoted strings; ``dedent=False`` writes the bytes as given."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n") if dedent else text, encoding="utf-8")
