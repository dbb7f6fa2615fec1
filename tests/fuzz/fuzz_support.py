"""Support for the fuzz properties: per-example time and memory bounds, and (for long local runs)
writing failures down instead of stopping at the first."""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import re
import resource
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import reject
from hypothesis.errors import UnsatisfiedAssumption

SOFT_SECONDS = float(os.environ.get("GPULINT_FUZZ_SECONDS") or 10)  # per example, asserted
HARD_SECONDS = 3 * SOFT_SECONDS  # per example, enforced with SIGALRM (a hang must not hang CI)
MAX_RSS_MB = 2048  # the whole process, where one example's own share cannot be measured
MAX_EXAMPLE_MB = 1024  # one example
COLLECT = os.environ.get("GPULINT_FUZZ_COLLECT")  # a directory: failures are written there, the run goes on
FIXTURES = ("webhooks", "https_server")  # test arguments that are not generated inputs


@dataclass(frozen=True)
class KnownBug:
    """A bug the fuzzers found whose owner has not fixed it yet; its xfail test is in tests/hostile/test_fuzz.py.
    Remove the entry when that test passes."""

    what: str
    pattern: re.Pattern[str]  # matched against the traceback, or the "internal error" finding's message


KNOWN_BUGS: tuple[KnownBug, ...] = ()  # none open; add one (with its own failing test) when found


def skip_known(text: str) -> None:
    """Discard the example when the failure is a known, reported bug: the property goes on testing
    everything else (a bug hit by chance must not make CI flaky), and the bug's own test tracks it."""
    if any(bug.pattern.search(text) for bug in KNOWN_BUGS):
        reject()


def _signature(test: str, exc: BaseException) -> str:
    """What makes two failures the same bug: the innermost gpulint frame and the exception type,
    or the failed check's rule, or the assertion's first line."""
    text = "".join(traceback.format_exception(exc))
    internal = re.search(r"internal error in gpulint's ([\w-]+) check \((\w+)", text)
    if internal:
        return f"{test} {internal[1]} {internal[2]}"
    frames = re.findall(r'File "[^"]*/gpulint/([\w/]+\.py)", line \d+, in (\w+)', text)
    errors = re.findall(r"^(\w+(?:Error|Exception|Timeout)):", text, re.MULTILINE)
    if frames and errors:
        return f"{test} {frames[-1][0]}:{frames[-1][1]} {errors[-1]}"
    first = re.sub(r"\d+|/tmp/\S+", "N", str(exc).strip().split("\n")[0].split(":")[0])[:100]
    return f"{test} {type(exc).__name__} {first}"


def _record(test: str, exc: BaseException, kwargs: dict[str, Any]) -> None:
    """DIR/<id>.txt: the failure with its inputs shortened; DIR/<id>.inputs: the whole inputs."""
    signature = _signature(test, exc)
    inputs = {name: value for name, value in kwargs.items() if name not in FIXTURES}
    whole = "\n".join(f"{name} = {value!r}" for name, value in inputs.items())
    stem = Path(COLLECT or ".") / hashlib.sha1(signature.encode()).hexdigest()[:12]
    previous = stem.with_suffix(".inputs")
    if previous.exists() and previous.stat().st_size <= len(whole):
        return  # keep the smallest input seen for each failure
    stem.parent.mkdir(parents=True, exist_ok=True)
    short = "\n".join(f"{name} = {value!r:.1500}" for name, value in inputs.items())
    failure = "".join(traceback.format_exception(exc))[-6000:]
    stem.with_suffix(".txt").write_text(f"{signature}\n\n{short}\n\n{failure}")
    previous.write_text(whole)


def collecting(test: Callable[..., None]) -> Callable[..., None]:
    """With GPULINT_FUZZ_COLLECT set, a failing example is written down and the run goes on."""
    if not COLLECT:
        return test

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            test(*args, **kwargs)
        except UnsatisfiedAssumption:  # hypothesis' own control flow (assume), not a failure
            raise
        except (Exception, ExampleTimeout) as exc:  # noqa: BLE001 - every failure is recorded
            _record(test.__name__, exc, kwargs)

    return run


# --------------------------------------------------------------------------- bounds


class ExampleTimeout(BaseException):
    """Raised by SIGALRM; a BaseException so no `except Exception` in gpulint swallows it."""


def _status_mib(field: str) -> int | None:
    """A memory figure of this process from /proc (Linux), in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the peak resident size (VmHWM) so it measures one example (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


@contextlib.contextmanager
def bounded(what: str) -> Iterator[None]:
    """Time and memory bounds for one example: the memory the example itself took (peak resident
    size over where it started), where /proc tells; else the process's peak."""

    def expire(signum: int, frame: Any) -> None:
        raise ExampleTimeout(f"{what}: still running after {HARD_SECONDS:.0f} s")

    baseline = _status_mib("VmRSS") if _reset_peak() else None
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, HARD_SECONDS)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        gc.unfreeze()  # a run freezes what it parsed, right for one invocation; this process makes many
    elapsed = time.monotonic() - started
    assert elapsed < SOFT_SECONDS, f"{what}: took {elapsed:.1f} s (limit {SOFT_SECONDS:.0f} s)"
    peak = _status_mib("VmHWM")
    if baseline is not None and peak is not None:
        assert peak - baseline < MAX_EXAMPLE_MB, f"{what}: took {peak - baseline} MiB (limit {MAX_EXAMPLE_MB} MiB)"
    else:
        peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        assert peak < MAX_RSS_MB, f"{what}: the process grew to {peak} MiB"
