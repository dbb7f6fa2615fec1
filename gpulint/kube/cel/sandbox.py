"""Evaluating a CEL expression where it can be stopped.

cel-expr-python has no cost tracking and no interruption (kubernetes' ``cel.CostLimit`` and
``InterruptCheckFrequency`` have no equivalent), so an evaluation that the static estimate
cannot bound runs in a separate worker process: address space limited with RLIMIT_AS,
CPU time limited by the parent, which kills it and reports "operation cancelled: actual cost
limit exceeded". The worker is a plain ``python -m gpulint.kube.cel.sandbox_worker`` child (not a fork of
this possibly multi-threaded process), started on first use and reused; the common path
never reaches it.

A verdict must not depend on how busy the machine is: the limit counts the CPU time the worker
spends on the expression (/proc/PID/stat), not wall time, and the worker's start-up (a Python
interpreter and the CEL engine, seconds on a loaded machine) is waited for before the clock starts.
Only when the machine does not give the worker its CPU second within WALL_SECONDS (or cannot start
it) is the outcome ``undecided``: no verdict, said as such.
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
from dataclasses import dataclass, field
from typing import Any

TIMEOUT_SECONDS = 1.0  # CPU seconds. Kubernetes: the 1,000,000 cost limit is "roughly 0.1 second" of evaluation
WALL_SECONDS = 10.0  # waiting longer than this for that CPU second: undecided (a busy machine, not a verdict)
STARTUP_SECONDS = 60.0  # for the worker to load (not counted in the evaluation's time)
POLL_SECONDS = 0.05  # how often the worker's CPU time is read while waiting
MEMORY_BYTES = 512 << 20  # on top of what the worker uses once started
MAX_REPLY_BYTES = 16 << 20
FRAME_HEADER = struct.Struct("<Q")
READY = b"ready"  # the worker's first message, once it has loaded


@dataclass(frozen=True)
class Outcome:
    """``stopped`` is why the worker was stopped ("" when it answered); ``undecided`` when that says
    nothing about the expression (the machine was too busy, the worker could not start)."""

    value: Any = None
    error: str = ""
    stopped: str = ""
    undecided: bool = False


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
                if process is None:
                    self.close()
                    return Outcome(
                        stopped=f"the evaluation worker did not start in {STARTUP_SECONDS:g} s", undecided=True
                    )
                assert process.stdin is not None
                process.stdin.write(FRAME_HEADER.pack(len(payload)) + payload)
                process.stdin.flush()
                clock = _CpuClock(process.pid, self.timeout)
                answer = self._read(process, clock)
            except (OSError, ValueError, EOFError) as exc:
                self.close()
                return Outcome(stopped=f"the evaluation worker failed ({exc.__class__.__name__})", undecided=True)
            if answer is None:
                outcome = self._why_stopped(clock)  # before the worker is gone: its CPU time is read
                self.close()
                return outcome
            kind, value = pickle.loads(answer)
            if kind == "memory":
                self.close()
                return Outcome(stopped=f"stopped at {self.memory >> 20} MiB")
            return Outcome(value=value) if kind == "ok" else Outcome(error=str(value))

    def _why_stopped(self, clock: _CpuClock) -> Outcome:
        if clock.cpu_exhausted():
            return Outcome(stopped=f"stopped after {self.timeout:g} s of CPU time")
        if clock.wall_exhausted():
            return Outcome(
                stopped=f"got less than {self.timeout:g} s of CPU time in {WALL_SECONDS:g} s: a busy machine",
                undecided=True,
            )
        return Outcome(stopped="stopped: the worker ended (its memory limit or a crash)")

    def _worker(self) -> subprocess.Popen[bytes] | None:
        """The running worker, started (and waited for until it says it is ready) when there is none."""
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "gpulint.kube.cel.sandbox_worker", ",".join(self.variables), str(self.memory)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
            if self._read(self._process, _WallClock(STARTUP_SECONDS)) != READY:
                return None
        return self._process

    def _read(self, process: subprocess.Popen[bytes], clock: _Clock) -> bytes | None:
        """The answer, or None when the clock runs out or the worker dies (memory limit, crash)."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        buffer = bytearray()
        need = FRAME_HEADER.size
        while len(buffer) < need:
            if clock.exhausted():
                return None
            ready, _, _ = select.select([fd], [], [], POLL_SECONDS)
            if not ready:
                continue
            chunk = os.read(fd, max(need - len(buffer), 1 << 16))
            if not chunk:
                return None  # the worker died: its memory limit or a crash in the engine
            buffer += chunk
            if need == FRAME_HEADER.size and len(buffer) >= need:
                need += FRAME_HEADER.unpack_from(buffer)[0]
        return bytes(buffer[FRAME_HEADER.size : need])

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


class _Clock:
    def exhausted(self) -> bool:
        raise NotImplementedError


@dataclass
class _WallClock(_Clock):
    seconds: float
    start: float = field(default_factory=time.monotonic)

    def exhausted(self) -> bool:
        return time.monotonic() - self.start > self.seconds


@dataclass
class _CpuClock(_Clock):
    """The CPU time a worker spends from now (the limit), within WALL_SECONDS of waiting for it."""

    pid: int
    seconds: float
    wall: _WallClock = field(default_factory=lambda: _WallClock(WALL_SECONDS))
    start_cpu: float | None = None

    def __post_init__(self) -> None:
        self.start_cpu = _cpu_seconds(self.pid)

    def cpu_exhausted(self) -> bool:
        now = _cpu_seconds(self.pid)
        if now is None or self.start_cpu is None:  # no /proc: wall time stands in for CPU time
            return time.monotonic() - self.wall.start > self.seconds
        return now - self.start_cpu > self.seconds

    def wall_exhausted(self) -> bool:
        return self.wall.exhausted()

    def exhausted(self) -> bool:
        return self.cpu_exhausted() or self.wall_exhausted()


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (/proc/PID/stat fields 14 and 15), or None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
