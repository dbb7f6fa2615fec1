"""Replacing a file whole: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
from collections.abc import Iterable


def replace_file(path: str, data: bytes | Iterable[bytes], mode: int | None = None) -> None:
    """Write ``data`` (or its blocks, as they come) to a new file beside ``path`` and rename it over ``path``:
    a symbolic link planted at ``path`` is replaced, never followed. ``mode``: the new file's permissions
    (mkstemp's 0600 otherwise)."""
    import tempfile  # only when a file is written: kept out of start-up

    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
