"""Evaluating a CEL expression where it can be stopped.

cel-expr-python has no cost tracking and no interruption (kubernetes' ``cel.CostLimit`` and
``InterruptCheckFrequency`` have no equivalent), so an evaluation that the static estimate
cannot bound runs in a separate worker process: address space limited with RLIMIT_AS,
wall time limited by the parent, which kills it and reports "operation cancelled: actual cost
limit exceeded". The worker is a plain ``python -m gpulint.kube.cel.sandbox`` child (not a fork of
this possibly multi-threaded process), started on first use and reused; the common path
never reaches it.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

TIMEOUT_SECONDS = 1.0  # Kubernetes: the 1,000,000 cost limit is "roughly 0.1 second" of evaluation
MEMORY_BYTES = 512 << 20  # on top of what the worker uses once started
MAX_REPLY_BYTES = 16 << 20
_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class Outcome:
    """``stopped`` is why the worker was stopped ("" when it answered)."""

    value: Any = None
    error: str = ""
    stopped: str = ""


class Sandbox:
    """One worker process per engine; requests are serialized (the webhook's threads share it)."""

    def __init__(
        self, variables: tuple[str, ...], timeout: float = TIMEOUT_SECONDS, memory: int = MEMORY_BYTES
    ) -> None:
        self.variables = variables
        self.timeout = timeout
        self.memory = memory
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def evaluate(self, expression: str, data: dict[str, Any], device: bool) -> Outcome:
        payload = pickle.dumps((expression, data, device), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            try:
                process = self._worker()
                assert process.stdin is not None
                process.stdin.write(_HEADER.pack(len(payload)) + payload)
                process.stdin.flush()
                answer = self._read(process, time.monotonic() + self.timeout)
            except (OSError, ValueError, EOFError) as exc:
                self.close()
                return Outcome(stopped=f"the evaluation worker failed ({exc.__class__.__name__})")
            if answer is None:
                self.close()
                return Outcome(stopped=f"stopped after {self.timeout:g} s")
            kind, value = pickle.loads(answer)
            if kind == "memory":
                self.close()
                return Outcome(stopped=f"stopped at {self.memory >> 20} MiB")
            return Outcome(value=value) if kind == "ok" else Outcome(error=str(value))

    def _worker(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "gpulint.kube.cel.sandbox", ",".join(self.variables), str(self.memory)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        return self._process

    def _read(self, process: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        """The answer, or None when the deadline passes or the worker dies (memory limit, crash)."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        buffer = bytearray()
        need = _HEADER.size
        while len(buffer) < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, max(need - len(buffer), 1 << 16))
            if not chunk:
                return None  # the worker died: its memory limit or a crash in the engine
            buffer += chunk
            if need == _HEADER.size and len(buffer) >= need:
                need += _HEADER.unpack_from(buffer)[0]
        return bytes(buffer[_HEADER.size : need])

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# --------------------------------------------------------------------------- the worker


def _limit_memory(extra: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        resource.setrlimit(resource.RLIMIT_AS, (pages * os.sysconf("SC_PAGE_SIZE") + extra,) * 2)
    except (ImportError, OSError, ValueError):
        pass  # no /proc or no rlimits: the parent's timeout still stops it


def _read_exactly(stream: Any, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


def _serve(variables: tuple[str, ...], memory: int) -> None:
    from gpulint.kube.cel.engine import CelEngine, Compiled

    engine = CelEngine(variables, guarded=False)
    engine.compile("true")  # load the engine before the limit applies to what comes next
    _limit_memory(memory)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exactly(stdin, _HEADER.size))
            expression, data, device = pickle.loads(_read_exactly(stdin, size))
        except EOFError:
            return
        try:
            compiled = engine.compile(expression)
            if not isinstance(compiled, Compiled):
                answer: tuple[str, Any] = ("error", compiled.message)
            elif device:
                result = engine.evaluate(compiled, data)
                answer = ("ok", result) if isinstance(result, bool) else ("error", result)
            else:
                value, error = engine.run(compiled, data)
                answer = ("ok", value) if not error else ("error", error)
            if isinstance(answer[1], str) and "bad_alloc" in answer[1]:
                answer = ("memory", "")
            reply = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
            if len(reply) > MAX_REPLY_BYTES:  # e.g. a message expression that built a huge string
                reply = pickle.dumps(("memory", ""))
        except MemoryError:
            reply = pickle.dumps(("memory", ""))
        stdout.write(_HEADER.pack(len(reply)) + reply)
        stdout.flush()


if __name__ == "__main__":
    _serve(tuple(sys.argv[1].split(",")), int(sys.argv[2]))
