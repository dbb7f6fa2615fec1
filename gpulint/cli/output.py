"""Writing what gpulint produces (a report, a baseline) without ever leaving half a file."""

from __future__ import annotations

from collections.abc import Iterable

from gpulint.lint.atomic import replace_file


def write_report(output: str, data: bytes | Iterable[bytes]) -> None:
    """Write the report whole, as a new file that replaces ``output``: a symlink a pull request planted
    at the report's path is replaced, never followed, and a reader never sees half a report."""
    replace_file(output, data, 0o644)
