"""The webhook's bounds that are not HTTP's: a review's deadline (Watchdog), the bytes of the bodies being
read or reviewed at once (ByteBudget), the open connections, in all and from one address (Connections), and
a connection's reads under one deadline (DeadlineReader), with whether its peer has left (peer_closed).

A review used to run in a thread of its own so that the request's thread could answer at the
deadline however long a check took. Handing every review to another thread and back cost ~0.1 ms of
CPU and two context switches per review (docs/speed.md). Now the connection's thread runs its review,
and one watchdog thread keeps every review's deadline instead: it sleeps until the earliest deadline of
the reviews in progress (or POLL_SECONDS, to ask the clients of long reviews whether they are still
there), and takes over a review that has not finished by then. Taking over calls the review's
``late`` in a short-lived thread of its own - the failure mode's answer is written from there, so a
client that does not read its answer cannot hold up the others' deadlines - while the review itself
stops at its next deadline check (Python threads cannot be killed). Exactly one of the two answers:
``finish`` tells the review's thread whether it still may.
"""

from __future__ import annotations

import io
import math
import select
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Generic, TypeVar

# How often a running review's client is asked whether it is still there, and how often waiters and blocked
# reads look at their deadline (and at a shutdown).
POLL_SECONDS = 0.2

DEADLINE = "deadline"  # the reasons a review is taken over, passed to its ``late``
CLIENT_GONE = "client gone"
_T = TypeVar("_T")
_C = TypeVar("_C")


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

    def run(
        self,
        deadline_at: float,
        work: Callable[[], _T],
        late: Callable[[str], None],
        client_gone: Callable[[], bool] | None = None,
        done: Callable[[], object] = lambda: None,
    ) -> tuple[bool, _T | None, BaseException | None]:
        """``work()`` in this thread, its deadline kept from now until it ends; ``done()`` as soon as it ends,
        however it ends. (True, its value, what it raised), or (False, None, None) when the watchdog took it
        over first: its ``late`` has returned by then. A SystemExit or KeyboardInterrupt is raised again then."""
        watch = self.watch(deadline_at, late, client_gone)
        value: _T | None = None
        error: BaseException | None = None
        try:
            value = work()
        except BaseException as exc:
            error = exc
        finally:
            done()
        if self.finish(watch):
            return True, value, error
        watch.join_late()
        if error is not None and not isinstance(error, Exception):
            raise error  # not the review's to answer
        return False, None, None

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


class ByteBudget:
    """Admission by bytes in flight: a review's body is admitted, before it is read, only while the bodies
    admitted and not yet done with add up to at most ``capacity`` (one body alone is always admitted, so a
    body the size limit accepts is never refused for its size). Waiters are served in arrival order: a large
    body is not starved by a stream of small ones."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_flight = 0  # the gauge gpulint_review_bytes_in_flight
        self._queue: list[object] = []  # tickets of the waiters, oldest first
        self._changed = threading.Condition(threading.Lock())

    def _fits(self, size: int) -> bool:
        return self.in_flight == 0 or self.in_flight + size <= self.capacity

    def acquire(self, size: int, until: float, stopping: Callable[[], bool]) -> bool:
        """Wait, up to ``until`` (time.monotonic()), for ``size`` bytes; False when they did not come."""
        with self._changed:
            if not self._queue and self._fits(size):  # nobody waits and it fits: the common case, without a ticket
                self.in_flight += size
                return True
            ticket = object()
            self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and self._fits(size)):
                    remaining = until - time.monotonic()
                    if remaining <= 0 or stopping():
                        return False
                    self._changed.wait(min(remaining, POLL_SECONDS))
                self.in_flight += size
                return True
            finally:
                self._queue.remove(ticket)
                self._changed.notify_all()

    def release(self, size: int) -> None:
        with self._changed:
            self.in_flight -= size
            if self._queue:
                self._changed.notify_all()


class Connections(Generic[_C]):
    """Open connections: at most ``total``, and at most ``per_peer`` from one address (one client cannot hold
    every slot). Taken in the accept loop and given back when the connection closes: a burst accepted before
    its threads start is counted whole. Each connection's handler is held from when its thread starts, so
    that a shutdown can reach every one and wait for those that still owe their client an answer."""

    def __init__(self, total: int, per_peer: int) -> None:
        self.total, self.per_peer = total, per_peer
        self._peers: Counter[str] = Counter()  # open connections by address
        self._peer_of: dict[int, str] = {}  # a connection's key -> its address, for the connections counted
        self._handlers: dict[int, _C] = {}  # a connection's key -> its handler, once its thread runs
        self._changed = threading.Condition(threading.Lock())

    def take(self, key: int, peer: str) -> bool:
        with self._changed:
            if len(self._peer_of) >= self.total or self._peers[peer] >= self.per_peer:
                return False
            self._peers[peer] += 1
            self._peer_of[key] = peer
            return True

    def attach(self, key: int, handler: _C) -> None:
        with self._changed:
            self._handlers[key] = handler

    def give_back(self, key: int) -> None:
        with self._changed:
            self._handlers.pop(key, None)
            self._changed.notify_all()
            peer = self._peer_of.pop(key, None)
            if peer is not None:
                self._peers[peer] -= 1
                if not self._peers[peer]:
                    del self._peers[peer]

    def handlers(self) -> list[_C]:
        with self._changed:
            return list(self._handlers.values())

    def wait(self, done: Callable[[_C], bool]) -> None:
        """Until every handler is ``done`` or its connection closed."""
        with self._changed:
            while not all(done(handler) for handler in self._handlers.values()):
                self._changed.wait(POLL_SECONDS)


class ReadDeadline(Exception):
    """The request did not arrive in time (not a TimeoutError: the stdlib would swallow that silently)."""


class DeadlineReader(io.RawIOBase):
    """Socket reads under one deadline for a whole request, not a timeout per recv: a client that trickles a
    byte every few seconds cannot hold a connection forever. Blocked reads wake every POLL_SECONDS, so a
    deadline moved by a shutdown is noticed promptly."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline = math.inf
        self.deadline_name = ""  # which deadline it is, in words, for the answer that it passed

    def until(self, at: float, name: str = "") -> None:
        """Reads from now on end at ``at`` (time.monotonic()); ``name`` says which deadline it is."""
        self.deadline, self.deadline_name = at, name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while True:
            remaining = self.deadline - time.monotonic()
            # Past the deadline, bytes that have arrived are still read (without waiting): a request sent whole
            # while this thread was not running (a busy process, a shutdown's grace) is not cut short.
            self.sock.settimeout(min(remaining, POLL_SECONDS) if remaining > 0 else 0.0)
            try:
                return self.sock.recv_into(buffer)
            except (TimeoutError, BlockingIOError, ssl.SSLWantReadError):
                if remaining <= 0:
                    raise ReadDeadline() from None


def peer_closed(sock: socket.socket) -> bool:
    """Has the peer closed its side? (Asked while its review runs: a gone client frees its slot.)"""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    try:
        return bool(poller.poll(0))
    except OSError:
        return True
