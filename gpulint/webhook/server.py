"""`gpulint serve`: a validating admission webhook over HTTPS.

POST /validate answers AdmissionReviews with the same checks, configuration and suppressions as the CLI;
GET /healthz, /readyz and /metrics (Prometheus text) serve operations. Every stage is bounded, so that no
client can take the server down or make it hang: the head and body are read under a per-request deadline
before a review slot is taken; bodies over the limit get 413 from their headers alone; malformed bodies get
400; a review runs under the deadline the API server sent (``?timeout=5s``) and is answered by the failure
mode when it cannot finish; the inventory and the certificate are replaced only by ones that load.
"""

from __future__ import annotations

import io
import json
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.quantity import go_duration
from gpulint.lint.review import (
    CLIENT_GONE,
    KNOWN_PATHS,
    ByteBudget,
    Certificates,
    Config,
    Connections,
    Deadline,
    DeadlineExceeded,
    DeadlineReader,
    Inventories,
    Metrics,
    ReadDeadline,
    Severity,
    Snapshot,
    Watchdog,
    error_text,
    log,
    peer_closed,
)
from gpulint.webhook.admission_review import BadReview, Decision, decide, parse_review
from gpulint.webhook.headers import Fields, Refused, body_length, field_problem

OWES_NOTHING = ("answered", "abandoned")  # a connection's phases once the watchdog took its review over
# The metrics' result of each error status the server answers itself (any other: bad_request).
ERROR_RESULTS = (
    {404: "not_found", 408: "timeout", 503: "overloaded"}
    | dict.fromkeys((405, 501), "method_not_allowed")
    | dict.fromkeys((413, 414, 431), "too_large")
)
ROUTES = dict.fromkeys(KNOWN_PATHS, "GET, HEAD") | {"/validate": "POST"}  # the methods each path answers
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT")  # others get 501
# Pending connections the kernel queues while the accept loop is busy (capped by net.core.somaxconn):
# socketserver's 5 left a burst of clients waiting on SYN retransmission for 15-21 s.
LISTEN_BACKLOG = 1024
WRITE_SECONDS = 10.0  # a client that does not read its answer does not hold a thread forever
SHUTDOWN_READ_GRACE = 2.0  # on SIGTERM, a request still arriving gets this long to finish arriving
MAX_REMEMBERED_QUERY = 64  # query strings longer than this are parsed each time, never remembered
MAX_LINE_BYTES = 64 * 1024  # the request line; more gets 414
MAX_HEAD_BYTES = 64 * 1024  # all headers together; more gets 431
# The API server sends ?timeout= (its timeoutSeconds: 1-30 s, 10 s by default). The answer must be back
# before it gives up, so a review gets the timeout less a margin for the way back.
DEFAULT_TIMEOUT = 10.0
MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 30.0


@dataclass(frozen=True)
class ServeOptions:
    host: str = "0.0.0.0"
    port: int = 8443
    tls_cert: str = ""
    tls_key: str = ""
    deny_on: Severity = Severity.ERROR
    dry_run: bool = False
    max_body_bytes: int = 3 * 1024 * 1024  # the API server's own request limit is ~3 MiB
    failure_mode: str = "allow"  # allow (with a warning) or deny, when gpulint itself fails
    inventory_poll_seconds: float = 10.0
    max_concurrency: int = 64  # reviews in progress at once; more get 503 (the API server retries or ignores)
    # Request bodies being read or reviewed, in bytes, at once: a review needs up to ~35 bytes of memory per byte
    # of its body (docs/webhook-limits.md), so this, not the count, bounds the reviews' memory. A review that
    # would go over waits (its body unread) until others finish, up to its deadline, then gets 503.
    max_inflight_bytes: int = 16 * 1024 * 1024
    live_inventory: bool = False  # discover, list and watch the inventory APIs the API server serves
    kubeconfig: str = ""  # for the live inventory outside the cluster (default: the service account)
    kube_context: str = ""  # a context of that kubeconfig (default: its current context)
    live_pods: bool = False  # also watch running Pods (the "does not fit now" view; memory grows with pods)
    max_connections: int = 256  # open connections (each holds a thread); more are closed at once
    # open connections from one address (None: half of max_connections): one client cannot hold every slot. The
    # API server needs one a review in progress (--max-concurrency, 64), well under half of 256.
    max_connections_per_peer: int | None = None
    # A new connection must finish its TLS handshake and begin its first request within this: the API server and
    # kubelet's probes send theirs at once, and a connection that never speaks must not hold a slot for idle_seconds.
    handshake_seconds: float = 5.0
    read_seconds: float = 10.0  # request line, headers and body must all arrive within this, from the first byte
    idle_seconds: float = 30.0  # a keep-alive connection may wait this long for its next request


@short_strings_remembered(64, max_chars=MAX_REMEMBERED_QUERY)  # the API server sends the same query every time
def review_budget(query: str) -> float:
    """Seconds a review may take: the API server's ``timeout`` (clamped to 1-30 s) less a margin (a tenth, at
    most half a second) for the answer's way back. Raises ValueError when malformed (raised again every time:
    an exception is never remembered)."""
    values = parse_qs(query, keep_blank_values=True).get("timeout")
    timeout = DEFAULT_TIMEOUT
    if values:
        parsed = go_duration(values[-1])
        if parsed is None or not math.isfinite(parsed):
            raise ValueError(f"timeout {values[-1][:40]!r} is not a duration such as 5s or 2500ms")
        timeout = min(MAX_TIMEOUT, max(MIN_TIMEOUT, parsed))
    return timeout - min(0.5, timeout / 10)


@dataclass(frozen=True)
class Answer:
    """What the server sends back for one review."""

    status: int
    body: dict[str, Any]
    result: str  # the metrics label: allowed, denied, bad_request, overloaded, timeout, failed
    decision: Decision | None = None
    sent_at: float | None = None  # sent already, at this time.monotonic(): the watchdog's answer at the deadline


class Webhook:
    def __init__(self, config: Config, options: ServeOptions, api: Any = None) -> None:
        # api: a kubernetes client Configuration for the live inventory (tests pass one for a local server)
        self.config = config
        self.options = options
        self.metrics = Metrics()
        self.inventories = Inventories(config, options.deny_on, options.dry_run, log)
        self._stop = threading.Event()
        self._wake = threading.Event()  # SIGHUP: re-read now
        self.certificates: Certificates | None = None
        # Held from the start of a review until its work really ends (an abandoned review keeps its
        # slot until it stops at its next deadline check), so abandoned work cannot pile up.
        self.slots = threading.BoundedSemaphore(options.max_concurrency)
        self.body_bytes = ByteBudget(options.max_inflight_bytes)
        self.watchdog = Watchdog()
        if config.inventory:
            self.inventories.reload()
        if options.live_inventory:
            self.inventories.start_live(api, options.kubeconfig, options.kube_context, options.live_pods)

    @property
    def snapshot(self) -> Snapshot:
        return self.inventories.snapshot

    @property
    def ready(self) -> bool:
        return self.inventories.ready

    def waiting_for(self) -> str:
        """What readiness waits for, in words (the /readyz body)."""
        return "shutting down" if self.stopping else self.inventories.waiting_for()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def page(self, route: str) -> tuple[int, bytes, str]:
        """A GET of /healthz, /readyz or /metrics: its status, body and content type."""
        if route == "/metrics":
            text = self.metrics.render(self.body_bytes.in_flight, self.inventories.metrics())
            return 200, text.encode(), "text/plain; version=0.0.4"
        if route == "/healthz":
            return 200, b"ok\n", "text/plain"
        if self.ready and not self.stopping:
            return 200, f"{self.inventories.readiness()}\n".encode(), "text/plain"
        return 503, f"not ready: {self.waiting_for()}\n".encode(), "text/plain"

    def request_reload(self) -> None:
        """SIGHUP: re-read the inventory and the certificate now (a signal handler only sets a flag)."""
        self._wake.set()

    def watch_files(self) -> None:
        """Re-read the inventory and the serving certificate when they change, or at once on SIGHUP."""
        self.inventories.watch(
            self._stop,
            self._wake,
            self.options.inventory_poll_seconds,
            lambda forced: self.certificates is not None and self.certificates.reload(force=forced),
        )

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.watchdog.stop()
        self.inventories.stop()

    def review(
        self,
        body: bytes,
        deadline_at: float | None = None,
        client_gone: Callable[[], bool] | None = None,
        on_late: Callable[[Answer | None], None] | None = None,
    ) -> Answer | None:
        """Answer one AdmissionReview, in this thread. When it has not finished by ``deadline_at``
        (time.monotonic()) the watchdog takes it over: it calls ``on_late`` with the failure mode's answer
        to send in its place, or with None when the client left first (``client_gone``), and the review
        stops at its next deadline check. Returns the answer to send, one ``on_late`` has sent (its
        ``sent_at`` set), or None when the client left."""
        try:
            request = parse_review(body)
        except BadReview as exc:
            return Answer(400, {"error": str(exc)}, "bad_request")
        if not self.slots.acquire(blocking=False):  # a flood must not exhaust threads or memory
            return Answer(503, {"error": "too many reviews in progress"}, "overloaded")
        deadline = Deadline(deadline_at if deadline_at is not None else time.monotonic() + review_budget(""))
        late_answers: list[Answer] = []

        def late(reason: str) -> None:  # in a thread of the watchdog's, while the review runs on
            deadline.cancel()
            if reason == CLIENT_GONE:
                log("review_abandoned", uid=request["uid"], reason="client disconnected")
                if on_late is not None:
                    on_late(None)
                return
            answer = self._unfinished(request)
            if on_late is not None:
                on_late(answer)
                answer = replace(answer, sent_at=time.monotonic())
            late_answers.append(answer)

        own, decision, error = self.watchdog.run(
            deadline.at,
            lambda: decide(request, self.snapshot.reviewer, deadline),
            late,
            client_gone,
            self.slots.release,  # held until the review's work really ends: abandoned work cannot pile up
        )
        if not own:
            return late_answers[0] if late_answers else None
        if isinstance(error, DeadlineExceeded):
            return self._unfinished(request)
        if isinstance(error, Exception):
            name = "TimeoutError"  # the review itself raised a TimeoutError: not logged
            if not isinstance(error, TimeoutError):
                name = type(error).__name__
                log("review_failed", uid=request["uid"], error=error_text(error))
            return self._failure(request, f"gpulint could not check this object ({name})", "failed")
        if error is not None:
            raise error  # SystemExit, KeyboardInterrupt: not the review's to answer
        assert decision is not None
        return Answer(200, decision.response(), "allowed" if decision.allowed else "denied", decision)

    def _unfinished(self, request: dict[str, Any]) -> Answer:
        log("review_timeout", uid=request["uid"], failure_mode=self.options.failure_mode)
        return self._failure(
            request, "gpulint could not finish checking this object before the review's deadline", "timeout"
        )

    def _failure(self, request: dict[str, Any], reason: str, result: str) -> Answer:
        allowed = self.options.failure_mode == "allow"
        decision = Decision(
            request["uid"], allowed, reason, [f"{reason}; it was admitted unchecked"] if allowed else []
        )
        return Answer(200, decision.response(), result, decision)


class _HeadReader(io.BufferedIOBase):
    """The buffered reader as the stdlib's header parser sees it: readline only, with one budget for all the
    headers together (the stdlib bounds each line and their count, not their sum)."""

    def __init__(self, reader: io.BufferedIOBase, budget: int) -> None:
        super().__init__()
        self.reader = reader
        self.left = budget
        self.lines: list[bytes] = []  # as read, for the strict checks the stdlib's lenient parser does not make

    def readable(self) -> bool:
        return True

    def readline(self, limit: int | None = -1) -> bytes:
        allowed = self.left + 1 if limit is None or limit < 0 else min(limit, self.left + 1)
        line = self.reader.readline(allowed)
        self.lines.append(line)
        self.left -= len(line)
        if self.left < 0:
            raise Refused(431, f"request headers over {MAX_HEAD_BYTES} bytes")
        return line


class _Handler(BaseHTTPRequestHandler):
    server_version = "gpulint"
    protocol_version = "HTTP/1.1"
    webhook: Webhook  # set on the subclass made per server
    server: _Server

    def setup(self) -> None:
        # Headers and body go out as separate writes; without TCP_NODELAY the client's delayed
        # ACK adds ~40 ms to every answer.
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.raw_reader = DeadlineReader(self.connection)
        self.buffered = io.BufferedReader(self.raw_reader, 64 * 1024)
        self.rfile = self.buffered
        self.phase = "idle"
        self.requests_begun = 0
        self.server.connections.attach(id(self.request), self)

    def finish(self) -> None:
        pass  # the connection is given back when the server shuts it (shutdown_request)

    def shutdown_started(self) -> None:
        """Called by the server on SIGTERM: idle connections close now, arriving requests get a grace."""
        now = time.monotonic()
        if self.phase == "idle":
            self.raw_reader.until(now)
        elif self.phase == "reading" and now + SHUTDOWN_READ_GRACE < self.raw_reader.deadline:
            grace = f"the {SHUTDOWN_READ_GRACE:g} s a request may take to arrive once shutting down"
            self.raw_reader.until(now + SHUTDOWN_READ_GRACE, grace)

    def log_message(self, format: str, *args: Any) -> None:
        return  # structured logs are written per request instead

    def _observe(self, path: str, result: str) -> None:
        self.webhook.metrics.observe(path, result, time.monotonic() - getattr(self, "started", time.monotonic()))

    # ------------------------------------------------------------------ reading a request

    def handle_one_request(self) -> None:
        self.phase = "idle"
        options = self.webhook.options
        # The first request's wait includes the TLS handshake (it runs on the first read): a short deadline of
        # its own, so connections that never speak cannot hold every slot for the keep-alive idle time.
        wait = options.handshake_seconds if self.requests_begun == 0 else options.idle_seconds
        self.raw_reader.until(time.monotonic() + (0 if self.webhook.stopping else wait))
        try:
            if not self.buffered.peek(1):  # the client closed a keep-alive connection
                self.close_connection = True
                return
        except ReadDeadline:
            self.close_connection = True  # idle for too long, or shutting down: close quietly
            return
        self.phase = "reading"
        self.requests_begun += 1
        self.started = time.monotonic()
        self.raw_reader.until(self.started + options.read_seconds, f"{options.read_seconds:g} s (the read deadline)")
        if self.webhook.stopping:
            self.shutdown_started()
        self.command, self.path, self.request_version = "", "", ""
        self.expect_continue = False
        try:
            self.raw_requestline = self.buffered.readline(MAX_LINE_BYTES + 1)
            if len(self.raw_requestline) > MAX_LINE_BYTES:
                raise Refused(414, "request line too long")
            if not self.raw_requestline:
                self.close_connection = True
                return
            self.rfile = _HeadReader(self.buffered, MAX_HEAD_BYTES)  # what parse_request reads: the headers
            if not self.parse_request():
                return  # the stdlib answered (400, 431, 505) through send_error
            self.rfile = self.buffered
            if self.request_version != "HTTP/1.1":
                self.close_connection = True  # HTTP/1.0 keep-alive is not spoken: one request, then close
            if self.command not in METHODS:
                raise Refused(501, f"unsupported method {self.command[:20]!r}")
            self._route()
        except Refused as refused:  # every error the server finds itself, answered here
            self.send_error(refused.status, str(refused), extra=refused.headers, close=refused.close)
        except ReadDeadline:
            self.send_error(408, f"request not received within {self.raw_reader.deadline_name}")
        finally:
            self.rfile = self.buffered
            self.phase = "done"

    def parse_request(self) -> bool:
        """The stdlib's, then what its lenient reading lets through refused with 400 (RFC 9112)."""
        if not super().parse_request():
            return False  # the stdlib answered (400, 431, 505) through send_error
        problem = field_problem(self.rfile.lines) if isinstance(self.rfile, _HeadReader) else None
        hosts = self.headers.get_all("Host") or []
        if problem is None and self.request_version == "HTTP/1.1" and len(hosts) != 1:
            problem = "no Host header (RFC 9112 section 3.2)" if not hosts else "more than one Host header"
        if problem is not None:
            raise Refused(400, problem)
        if self.command != "POST" and (
            self.headers.get("Transfer-Encoding") is not None
            or any(length.strip() != "0" for length in self.headers.get_all("Content-Length") or [])
        ):
            self.close_connection = True  # a body we do not read: it must not be taken for the next request
        return True

    def handle_expect_100(self) -> bool:
        """100 Continue is sent only once the body is wanted: after its length is accepted and admitted (_validate),
        never ahead of a 413 or a 503 (RFC 9110 section 10.1.1: a final status instead is allowed)."""
        self.expect_continue = True
        return True

    # ------------------------------------------------------------------ answering

    def send_error(
        self, code: int, message: str | None = None, explain: str | None = None, extra: Fields = (), close: bool = True
    ) -> None:
        """Every error as JSON, and the connection closed (what follows a bad request cannot be trusted) unless
        ``close`` is False."""
        if close:
            self.close_connection = True
        try:
            body = json.dumps({"error": message or self.responses.get(code, ("error",))[0]}).encode()
            self._send(code, body, extra=extra)
        except OSError:
            pass  # the client is gone
        self._observe(urlsplit(self.path).path if self.path else "", ERROR_RESULTS.get(code, "bad_request"))

    def _send(self, status: int, body: bytes, content_type: str = "application/json", extra: Fields = ()) -> None:
        """The status line, headers and body in one write: one TLS record and one system call, not the
        stdlib's two (its header buffer, then the body). An answer to HEAD has no body."""
        if self.webhook.stopping:
            self.close_connection = True
        self.connection.settimeout(WRITE_SECONDS)
        length = len(body)
        if self.command == "HEAD":
            body = b""
        if self.request_version == "HTTP/0.9":  # as the stdlib: no status line and no headers
            self.connection.sendall(body)
            return
        reason = self.responses[status][0] if status in self.responses else ""
        lines = [
            f"{self.protocol_version} {status} {reason}",
            f"Server: {self.version_string()}",
            f"Date: {self.server.date_header()}",
            *(f"{name}: {value}" for name, value in extra),
            f"Content-Type: {content_type}",
            f"Content-Length: {length}",
        ]
        if self.close_connection:
            lines.append("Connection: close")
        self.connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    # ------------------------------------------------------------------ routing

    def _route(self) -> None:
        """Every method's one entry, routed on the path (the API server always adds ?timeout=): 404 for a path
        not served, 405 for a method the path does not take, then a review or a page."""
        route = urlsplit(self.path).path
        allowed = ROUTES.get(route)
        if allowed is None:  # a GET has no body: its connection stays open
            raise Refused(404, "not found", close=self.command not in ("GET", "HEAD"))
        if self.command not in allowed.split(", "):  # a body we do not read may follow: the connection closes
            raise Refused(405, f"method {self.command} not allowed; use {allowed}", (("Allow", allowed),))
        if self.command == "POST":
            self._validate()
            return
        status, body, content_type = self.webhook.page(route)
        self._send(status, body, content_type)
        self._observe(route, "ok")

    def _validate(self) -> None:
        """POST /validate: the body's length checked and its bytes admitted from the headers alone, then the
        body read and reviewed under the API server's deadline."""
        webhook, options = self.webhook, self.webhook.options
        try:
            budget = review_budget(urlsplit(self.path).query)
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        length = body_length(self.headers)
        if length > options.max_body_bytes:  # answered from the headers: the body is never read
            raise Refused(413, f"request body over {options.max_body_bytes} bytes")
        # Memory is bounded by the bytes admitted, before a body is read: unread, it waits in the kernel's buffers.
        if not webhook.body_bytes.acquire(length, self.started + budget, lambda: webhook.stopping):
            raise Refused(503, f"too many review bytes in flight (over {options.max_inflight_bytes}); try again")
        try:
            if self.expect_continue:  # the body is wanted now: its length is accepted and its bytes admitted
                self.connection.settimeout(WRITE_SECONDS)
                self.connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = self._read_body(length)
            self.phase = "reviewing"
            answer = webhook.review(body, self.started + budget, lambda: peer_closed(self.connection), self._taken_over)
        finally:
            webhook.body_bytes.release(length)  # the review's work has ended (an abandoned one too)
        if answer is None:  # the client left: nobody to answer
            self.close_connection = True
            self._observe("/validate", "abandoned")
        elif answer.sent_at is not None:  # answered at the deadline by the watchdog, and recorded
            self.close_connection = True
        else:
            if answer.status == 503:
                self.close_connection = True
            self.phase = "writing"
            self._send(answer.status, json.dumps(answer.body).encode())
            self._record(answer, time.monotonic() - self.started)

    def _taken_over(self, answer: Answer | None) -> None:
        """The watchdog took this connection's review over (from its thread, while this connection's thread
        is still in the review, which stops at its next deadline check): it sends the failure mode's answer
        at the deadline, or nothing when the client left. Either way the connection closes after the review
        (a client that sent its next request would wait for nothing), and shutdown no longer waits for it."""
        self.close_connection = True
        if answer is None:
            self.phase = "abandoned"
            return
        self.phase = "writing"
        try:
            self._send(answer.status, json.dumps(answer.body).encode())
        except OSError:
            pass  # the client is gone
        self.phase = "answered"
        self._record(answer, time.monotonic() - self.started)

    def _record(self, answer: Answer, elapsed: float) -> None:
        decision = answer.decision
        self.webhook.metrics.observe("/validate", answer.result, elapsed, denied=answer.result == "denied")
        log(
            "review",
            uid=decision.uid if decision else None,
            kind=decision.kind if decision else None,
            result=answer.result,
            findings=len(decision.findings) if decision else 0,
            dry_run=decision.dry_run if decision else None,
            ms=round(elapsed * 1000, 2),
        )

    def _read_body(self, length: int) -> bytes:
        """The body, read under the request's deadline; Refused (400) when it does not all arrive."""
        chunks, received = [], 0
        try:
            while received < length:
                chunk = self.buffered.read1(min(length - received, 64 * 1024))
                if not chunk:
                    break
                chunks.append(chunk)
                received += len(chunk)
        except ReadDeadline:
            arrived = f"arrived within {self.raw_reader.deadline_name}"
            message = f"request body incomplete: {received} of {length} bytes (Content-Length) {arrived}"
            raise Refused(400, message) from None
        if received < length:
            ended = f"the connection ended after {received} of {length} bytes (Content-Length)"
            raise Refused(400, f"request body incomplete: {ended}")
        return b"".join(chunks)


class _Server(ThreadingHTTPServer):
    # Shutdown waits for in-flight requests itself (server_close), but not for a connection whose thread is
    # still in a review the watchdog has answered: a check stuck past its deadline never keeps the process up.
    daemon_threads = True
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG
    webhook: Webhook

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], webhook: Webhook, certificates: Certificates
    ) -> None:
        self.webhook = webhook
        self.certificates = certificates
        options = webhook.options
        self.connections: Connections[_Handler] = Connections(
            options.max_connections, options.max_connections_per_peer or max(1, options.max_connections // 2)
        )
        self._date: tuple[int, str] = (0, "")
        super().__init__(address, handler)

    def date_header(self) -> str:
        """The Date header's text, formatted once a second (the stdlib formats it for every answer)."""
        second = int(time.time())
        cached = self._date
        if cached[0] != second:
            cached = self._date = (second, formatdate(second, usegmt=True))
        return cached[1]

    def get_request(self) -> tuple[Any, Any]:
        """Each connection is wrapped with the current certificate; the handshake runs on the first
        read, in the connection's own thread, so a slow client cannot stall the accept loop."""
        sock, address = self.socket.accept()
        return self.certificates.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Counted here, in the accept loop, and given back in shutdown_request."""
        accepted = self.connections.take(id(request), str(client_address[0]) if client_address else "")
        if not accepted:
            self.webhook.metrics.refused()
        return accepted

    def shutdown_request(self, request: Any) -> None:
        self.connections.give_back(id(request))
        super().shutdown_request(request)

    def begin_shutdown(self) -> None:
        for handler in self.connections.handlers():
            handler.shutdown_started()

    def server_close(self) -> None:
        """Close the listening socket, then wait for the connections to end: each phase is bounded (the
        arriving requests' grace, a review's deadline, the answer's write). A connection whose review the
        watchdog has taken over owes its client nothing more and is not waited for: its thread ends at the
        review's next deadline check."""
        super().server_close()
        self.connections.wait(lambda handler: handler.phase in OWES_NOTHING)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A failed handshake or a dropped connection: one JSON log line, not a traceback on stderr."""
        client = str(client_address[0]) if client_address else None
        log("connection_error", client=client, error=error_text(sys.exc_info()[1]))


def build_server(config: Config, options: ServeOptions, api: Any = None) -> tuple[_Server, Webhook]:
    webhook = Webhook(config, options, api)
    webhook.certificates = Certificates(options.tls_cert, options.tls_key)
    handler = type("Handler", (_Handler,), {"webhook": webhook})
    server = _Server((options.host, options.port), handler, webhook, webhook.certificates)
    return server, webhook


def run(config: Config, options: ServeOptions) -> None:
    """Serve until SIGTERM or SIGINT; in-flight requests finish before the process exits."""
    server, webhook = build_server(config, options)
    watcher = threading.Thread(target=webhook.watch_files, name="file-watch", daemon=True)
    watcher.start()

    def shut_down(signum: int) -> None:
        log("shutdown", signal=signal.Signals(signum).name)
        webhook.stop()
        server.begin_shutdown()
        server.shutdown()

    def stop(signum: int, _frame: Any) -> None:
        # Only start a thread here: the handler runs in the main thread, which may hold a lock it needs.
        if not webhook.stopping:
            threading.Thread(target=shut_down, args=(signum,), name="shutdown").start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, lambda _signum, _frame: webhook.request_reload())
    log(
        "serving",
        host=options.host,
        port=server.server_address[1],
        dry_run=options.dry_run,
        deny_on=str(options.deny_on),
        inventory=list(config.inventory),
    )
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.begin_shutdown()  # connections accepted after the signal close too
        server.server_close()  # joins the request threads (block_on_close)
        log("stopped")
