"""Keeps a review's deadline while the review runs in the connection's own thread.

A review used to run in a thread of its own so that the request's thread could answer at the
deadline however long a check took. Handing every review to another thread and back cost ~0.1 ms of
CPU and two context switches per review (docs/speed.md). Now the connection's thread runs its review,
and this one thread keeps every review's deadline instead: it sleeps until the earliest deadline of
the reviews in progress (or POLL_SECONDS, to ask the clients of long reviews whether they are still
there), and takes over a review that has not finished by then. Taking over calls the review's
``late`` in a short-lived thread of its own - the failure mode's answer is written from there, so a
client that does not read its answer cannot hold up the others' deadlines - while the review itself
stops at its next deadline check (Python threads cannot be killed). Exactly one of the two answers:
``finish`` tells the review's thread whether it still may.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

POLL_SECONDS = 0.2  # how often a running review's client is asked whether it is still there

DEADLINE = "deadline"  # the reasons a review is taken over, passed to its ``late``
CLIENT_GONE = "client gone"


class Watch:
    """One review in progress, as the watchdog sees it."""

    __slots__ = ("deadline_at", "started", "late", "client_gone", "taken", "_late_thread")

    def __init__(self, deadline_at: float, late: Callable[[str], None], client_gone: Callable[[], bool] | None) -> None:
        self.deadline_at = deadline_at
        self.started = time.monotonic()
        self.late = late
        self.client_gone = client_gone
        self.taken = False
        self._late_thread: threading.Thread | None = None

    def join_late(self) -> None:
        """Wait for the review's ``late`` to return (it ran because the review was taken over)."""
        if self._late_thread is not None:
            self._late_thread.join()


class Watchdog:
    def __init__(self, poll_seconds: float = POLL_SECONDS) -> None:
        self.poll_seconds = poll_seconds
        self._cond = threading.Condition(threading.Lock())
        self._running: set[Watch] = set()
        self._wake_at = math.inf  # when the watchdog's thread wakes next: a new earlier deadline wakes it sooner
        self._thread: threading.Thread | None = None
        self._stopping = False

    def watch(
        self, deadline_at: float, late: Callable[[str], None], client_gone: Callable[[], bool] | None = None
    ) -> Watch:
        """Keep this review's deadline from now until ``finish``."""
        watch = Watch(deadline_at, late, client_gone)
        with self._cond:
            self._running.add(watch)
            if self._thread is None:
                self._start()
            elif deadline_at < self._wake_at:
                self._cond.notify()
        return watch

    def _start(self) -> None:
        thread = threading.Thread(target=self._run, name="review-watchdog", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread to be had (the process at its limit): the reviews keep their own
            return  # deadline checks meanwhile, and the next review tries again
        self._thread = thread

    def finish(self, watch: Watch) -> bool:
        """The review has ended: True when its own thread answers it, False when the watchdog took it over
        first (its ``late`` has run or is running: ``watch.join_late()`` waits for it)."""
        with self._cond:
            if watch.taken:
                return False
            self._running.discard(watch)
            return True

    def stop(self) -> None:
        """End the watchdog's thread once no review is running (reviews that start later start it again)."""
        with self._cond:
            self._stopping = True
            self._cond.notify()

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def _run(self) -> None:
        with self._cond:
            try:
                while self._running or not self._stopping:
                    now = time.monotonic()
                    self._wake_at = self._take_due(now)
                    self._cond.wait(max(0.0, self._wake_at - now))
            finally:  # however it ends (a MemoryError too), the next review starts a new one
                self._thread = None

    def _take_due(self, now: float) -> float:
        """Take over the reviews past their deadline or whose client left; when to look next. (A function of
        its own: a loop variable left in ``_run``'s frame would keep the last review alive while it sleeps.)"""
        wake_at = now + self.poll_seconds
        for watch in list(self._running):
            if now >= watch.deadline_at:
                self._take(watch, DEADLINE)
            elif now - watch.started >= self.poll_seconds and _left(watch):
                self._take(watch, CLIENT_GONE)
            else:
                wake_at = min(wake_at, watch.deadline_at)
        return wake_at

    def _take(self, watch: Watch, reason: str) -> None:
        thread = threading.Thread(target=watch.late, args=(reason,), name="review-late", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread to be had (the process at its limit): left to answer itself when it
            return  # stops at its next deadline check, and tried again at the next look
        watch.taken = True
        watch._late_thread = thread
        self._running.discard(watch)


def _left(watch: Watch) -> bool:
    """Has the review's client left? A question that fails counts as yes: the review is then stopped
    rather than left running for nobody."""
    if watch.client_gone is None:
        return False
    try:
        return watch.client_gone()
    except Exception:
        return True
