"""A crafted git index costs no more memory than its size (issue #33, medium).

Index version 4 writes each path as the previous one minus N bytes plus a suffix. Entries that strip nothing
and add one byte spell paths of 1, 2, 3 ... bytes: 3.7 MiB of index became 1.9 GiB of paths. A path is now
at most PATH_MAX (4,096) bytes and the paths spell at most 8 bytes for each byte of the index; past that the
index is not read (a note says so, and .gitignore still applies). Each case parses in a child process whose
address space is limited to 768 MiB, as a runner's memory would be.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXED = 40 + 20 + 2  # stat data, SHA-1, flags


def v4_index(names: list[tuple[int, bytes]]) -> bytes:
    """An index of version 4 whose entries are (bytes to strip from the previous path, suffix)."""
    entries = b"".join(b"\0" * FIXED + bytes([strip]) + suffix + b"\0" for strip, suffix in names)
    return b"DIRC" + (4).to_bytes(4, "big") + len(names).to_bytes(4, "big") + entries


def parse_limited(tmp_path: Path, raw: bytes) -> str:
    (tmp_path / "index").write_bytes(raw)
    script = textwrap.dedent(f"""\
        import resource, time
        resource.setrlimit(resource.RLIMIT_AS, (768 * 1024 * 1024, 768 * 1024 * 1024))
        from gpulint.lint.inputs.gitignore import index_paths
        started = time.monotonic()
        paths = index_paths(open({str(tmp_path / "index")!r}, "rb").read())
        print("none" if paths is None else len(paths), round(time.monotonic() - started, 2))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()[0]


def test_growing_prefix_compressed_paths(tmp_path):
    """The attack as found: every entry adds one byte to the previous path (3.7 MiB -> 1.9 GiB)."""
    raw = v4_index([(0, b"a")] * 60_000)
    assert 3.5 * 2**20 < len(raw) < 4 * 2**20
    assert parse_limited(tmp_path, raw) == "none"


def test_long_paths_under_path_max_each(tmp_path):
    """One more of the class: one 4,000-byte path, then entries that swap its last byte: every path is
    a legal length, and each 65 bytes of index still spells 4,000 bytes of path."""
    names = [(0, b"d/" * 1999 + b"x")] + [(1, bytes([97 + i % 26])) for i in range(60_000)]
    assert parse_limited(tmp_path, v4_index(names)) == "none"


@pytest.mark.parametrize("count", [1, 5_000])
def test_a_real_shape_of_version_4_is_read(tmp_path, count):
    """The trap: paths sharing directories, as git writes them, are all read."""
    names = [(0, b"services/team/module-0.yaml")] + [
        (len(f"{i - 1}.yaml"), f"{i}.yaml".encode()) for i in range(1, count)
    ]
    assert parse_limited(tmp_path, v4_index(names)) == str(count)
