"""Writing what gpulint produces (a report, a baseline) without ever leaving half a file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from gpulint.lint.atomic import replace_file


def write_report(output: str, data: bytes | Iterable[bytes]) -> None:
    """Write the report whole, as a new file that replaces ``output``: a symlink a pull request planted
    at the report's path is replaced, never followed, and a reader never sees half a report. A device or
    a pipe at ``output`` (``/dev/null``, a FIFO) is written into: replacing it would leave a regular file
    where the device was (run as root, ``--output /dev/null`` did)."""
    if not _write_into_device(output, data):
        replace_file(output, data, 0o644)


def _write_into_device(output: str, data: bytes | Iterable[bytes]) -> bool:
    """Whether ``output`` was a character device or a FIFO (not through a symlink), now written."""
    try:
        if not _is_device(os.lstat(output).st_mode):
            return False
        descriptor = os.open(output, os.O_WRONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    with os.fdopen(descriptor, "wb") as handle:
        if not _is_device(os.fstat(handle.fileno()).st_mode):  # swapped for a file since lstat: replace it
            return False
        handle.write(data) if isinstance(data, bytes) else handle.writelines(data)
    return True


def _is_device(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)
