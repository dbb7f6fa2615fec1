"""The Kubernetes oracle (tests/oracle): built once, cached under ~/.cache, asked in batches.

The Go program answers each case with the upstream code of one release (docs/oracle.md). One process
serves a whole test session: cases go in as JSON lines, answers come back in the same order.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).parent / "oracle"
BUILD_TIMEOUT = 1800  # a cold module download and build of the scheduler and the API server's packages
GO_FALLBACK = Path("/usr/local/go/bin/go")


def go_command() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    return str(GO_FALLBACK) if GO_FALLBACK.exists() else None


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpulint" / "oracle"


def source_key(go: str) -> str:
    """go.mod, go.sum, the Go sources and the toolchain's version: a change to any is a new build."""
    digest = hashlib.sha256()
    for path in sorted(SOURCE.iterdir()):
        if path.suffix == ".go" or path.name in ("go.mod", "go.sum"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True, timeout=60).stdout
    digest.update(version.encode())
    return digest.hexdigest()[:24]


def build(go: str) -> Path:
    """The oracle's binary, built unless the cache holds it (modules and build cache: Go's, under ~)."""
    binary = cache_root() / source_key(go) / "oracle"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(f".{os.getpid()}.partial")
    environment = {**os.environ, "GOFLAGS": "-mod=readonly"}
    completed = subprocess.run(
        [go, "build", "-o", str(partial), "."],
        cwd=SOURCE,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=BUILD_TIMEOUT,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"go build of tests/oracle failed:\n{completed.stderr[-4000:]}")
    partial.replace(binary)  # atomic: a concurrent session sees the whole binary or none
    return binary


@dataclass
class Oracle:
    """One running oracle; ``ask`` sends a batch and returns its answers in order."""

    binary: Path
    _process: subprocess.Popen[bytes] | None = None
    asked: dict[str, int] = field(default_factory=dict)  # family -> cases answered (for the reports)

    def start(self) -> None:
        self._process = subprocess.Popen(
            [str(self.binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # klog's notices; answers carry their own errors
        )

    def close(self) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=60)
            self._process = None

    def ask(self, family: str, cases: Iterable[Any], gates: dict[str, bool] | None = None) -> list[dict[str, Any]]:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        lines = [
            json.dumps({"family": family, "gates": gates or {}, "case": case}, ensure_ascii=False).encode() + b"\n"
            for case in cases
        ]
        stdin = process.stdin

        def write() -> None:  # a thread: the oracle answers while it reads (pipes are bounded)
            for line in lines:
                stdin.write(line)
            stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers = []
        for _ in lines:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"the oracle stopped (exit {process.poll()})")
            answers.append(json.loads(line))
        writer.join()
        self.asked[family] = self.asked.get(family, 0) + len(lines)
        for answer in answers:
            if isinstance(answer, dict) and "oracle_error" in answer:
                raise RuntimeError(f"the oracle could not answer a {family} case: {answer['oracle_error']}")
        return answers


def main() -> int:
    """`python tests/oracle_client.py`: build (or find) the oracle and say where and how long it took."""
    import sys
    import time

    go = go_command()
    if go is None:
        print("the Go toolchain is not installed", file=sys.stderr)
        return 2
    started = time.monotonic()
    binary = build(go)
    print(f"oracle: {binary} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
