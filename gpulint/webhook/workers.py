"""The threads reviews run in, kept for the next review instead of one started per review.

A review runs in a thread of its own so that its answer never waits past its deadline: the request's
thread waits for it with a timeout and answers by the failure mode when it has not finished. Starting
that thread cost about as much CPU as the HTTP exchange around the review; an idle one is reused
instead (the most recently idle first: its memory is the warmest). A review that nobody waits for any
more keeps its thread until it stops at its next deadline check, as before; how many run at once is
bounded by the webhook's review slots, not here. The threads are daemons: one stuck in a check never
keeps the process from exiting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

IDLE_SECONDS = 60.0  # an idle thread ends after this long without a review

Job = Callable[[], None]
T = TypeVar("T")


class Outcome(Generic[T]):
    """A review's result or its exception, handed from the review's thread to the request's: a bare lock,
    held until the outcome is in (a concurrent.futures.Future does the same with a condition variable, a
    waiter lock per wait and a notify: measured, the handoff cost about twice the CPU). One thread waits."""

    def __init__(self) -> None:
        self._done = threading.Lock()
        self._done.acquire()
        self.value: T | None = None
        self.error: BaseException | None = None

    def set(self, value: T) -> None:
        self.value = value
        self._done.release()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._done.release()

    def wait(self, timeout: float) -> bool:
        """True once the outcome is in (then ``value`` or ``error`` holds it); False after ``timeout`` seconds."""
        return self._done.acquire(timeout=timeout)


class ReviewThreads:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._idle: list[queue.SimpleQueue[Job | None]] = []  # each idle thread's inbox, the latest last
        self._lock = threading.Lock()
        self._stopped = False

    def run(self, job: Job) -> None:
        """Run ``job`` in an idle thread, or a new one when none is idle. ``job`` handles its own errors."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name="review", daemon=True).start()
        inbox.put(job)

    def stop(self) -> None:
        """End the idle threads; the busy ones end after their review."""
        with self._lock:
            self._stopped = True
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)

    @property
    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def _serve(self, inbox: queue.SimpleQueue[Job | None]) -> None:
        while True:
            try:
                job = inbox.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # nobody has taken it: end
                        self._idle.remove(inbox)
                        return
                continue  # taken just now: its job is on the way
            if job is None:
                return
            job()
            # An idle thread must not keep its last review alive: its closure holds the request and the
            # inventory snapshot, and a snapshot swapped out while still held would be frozen for good.
            del job
            with self._lock:
                if self._stopped:
                    return
                self._idle.append(inbox)
