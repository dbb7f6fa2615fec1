"""Writing what gpulint produces (a report, a baseline) without ever leaving half a file."""

from __future__ import annotations

import os


def write_report(output: str, data: bytes) -> None:
    """Write the report whole, as a new file that replaces ``output``: a symlink a pull request planted
    at the report's path is replaced, never followed, and a reader never sees half a report."""
    import tempfile

    directory = os.path.dirname(os.path.abspath(output))
    descriptor, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, output)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
