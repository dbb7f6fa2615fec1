"""`gpulint serve`: a validating admission webhook over HTTPS.

POST /validate answers AdmissionReviews with the same checks, configuration and suppressions
as the CLI; GET /healthz, /readyz and /metrics (Prometheus text) serve operations. Bodies
over the limit get 413, malformed reviews 400, a crash in a check the configured failure
mode; the inventory is re-read when its files change and replaced only by one that loads.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpulint.admission import BadReview, Decision, decide, parse_review
from gpulint.config import Config
from gpulint.engine import FileLinter
from gpulint.findings import Severity
from gpulint.inventory import Inventory, InventoryError, load_inventory

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
READ_TIMEOUT_SECONDS = 10  # a client that stops sending does not hold a thread forever


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
    live_inventory: bool = False  # list/watch Nodes, ResourceSlices, DeviceClasses from the API server
    kubeconfig: str = ""  # for the live inventory outside the cluster (default: the service account)


@dataclass
class Metrics:
    requests: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, result) -> count
    denials: int = 0
    latency_counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    latency_sum: float = 0.0
    latency_count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, path: str, result: str, seconds: float, denied: bool = False) -> None:
        with self.lock:
            self.requests[(path, result)] = self.requests.get((path, result), 0) + 1
            self.denials += denied
            if path == "/validate":
                index = next((i for i, bound in enumerate(LATENCY_BUCKETS) if seconds <= bound), len(LATENCY_BUCKETS))
                self.latency_counts[index] += 1
                self.latency_sum += seconds
                self.latency_count += 1

    def render(self, inventory_age: float | None) -> str:
        with self.lock:
            lines = ["# HELP gpulint_requests_total Requests served, by path and result.",
                     "# TYPE gpulint_requests_total counter"]
            lines += [f'gpulint_requests_total{{path="{p}",result="{r}"}} {n}'
                      for (p, r), n in sorted(self.requests.items())]
            lines += ["# HELP gpulint_denials_total AdmissionReviews answered allowed=false.",
                      "# TYPE gpulint_denials_total counter", f"gpulint_denials_total {self.denials}",
                      "# HELP gpulint_review_duration_seconds Time to answer an AdmissionReview.",
                      "# TYPE gpulint_review_duration_seconds histogram"]
            cumulative = 0
            for bound, count in zip(LATENCY_BUCKETS, self.latency_counts):
                cumulative += count
                lines.append(f'gpulint_review_duration_seconds_bucket{{le="{bound}"}} {cumulative}')
            lines.append(f'gpulint_review_duration_seconds_bucket{{le="+Inf"}} {self.latency_count}')
            lines.append(f"gpulint_review_duration_seconds_sum {self.latency_sum:.6f}")
            lines.append(f"gpulint_review_duration_seconds_count {self.latency_count}")
        if inventory_age is not None:
            lines += ["# HELP gpulint_inventory_age_seconds Seconds since the inventory was last loaded.",
                      "# TYPE gpulint_inventory_age_seconds gauge", f"gpulint_inventory_age_seconds {inventory_age:.3f}"]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Snapshot:
    """What a request sees: swapped whole, so a request never mixes two inventories."""

    linter: FileLinter
    inventory: Inventory | None
    loaded_at: float | None


_LOG_LOCK = threading.Lock()  # one JSON object per line, even with many request threads


def log(event: str, **fields: Any) -> None:
    line = json.dumps({"time": round(time.time(), 3), "event": event, **fields}) + "\n"
    with _LOG_LOCK:
        sys.stderr.write(line)
        sys.stderr.flush()


class Webhook:
    def __init__(self, config: Config, options: ServeOptions, api: Any = None) -> None:
        config = replace(config, single_object=True)
        self.config = config
        self.options = options
        self.metrics = Metrics()
        self.snapshot = Snapshot(FileLinter(config), None, None)
        self._signature: tuple[Any, ...] | None = None
        self._stop = threading.Event()
        self.live = None
        self.slots = threading.BoundedSemaphore(options.max_concurrency)
        if config.inventory:
            self.reload_inventory()
        if options.live_inventory:
            from gpulint.live_inventory import LiveInventory, api_client

            self.live = LiveInventory(api if api is not None else api_client(options.kubeconfig or None),
                                      self.swap_inventory, log)
            self.live.start()

    @property
    def ready(self) -> bool:
        if self.live is not None:
            return self.live.synced
        return not self.config.inventory or self.snapshot.inventory is not None

    def swap_inventory(self, inventory: Inventory) -> None:
        """Replace the inventory whole: a request sees the old one or the new one, never a mix."""
        self.snapshot = Snapshot(FileLinter(self.config, inventory), inventory, time.time())
        gc.freeze()  # a long-lived inventory: keep the cyclic collector from rescanning it per request

    def _inventory_signature(self) -> tuple[Any, ...]:
        entries = []
        for root in self.config.inventory:
            paths = [root] if os.path.isfile(root) else [
                os.path.join(d, f) for d, _, files in os.walk(root) for f in sorted(files)]
            for path in sorted(paths):
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                entries.append((path, stat.st_mtime_ns, stat.st_size))
        return tuple(entries)

    def reload_inventory(self) -> bool:
        """Load the inventory; keep the old one when the new one does not load (half-written file)."""
        signature = self._inventory_signature()
        if signature == self._signature:
            return False
        try:
            inventory = load_inventory(list(self.config.inventory))
        except InventoryError as exc:
            log("inventory_rejected", error=str(exc).splitlines()[-1][:300])
            return False
        self.swap_inventory(inventory)
        self._signature = signature
        log("inventory_loaded", nodes=len(inventory.nodes), slices=len(inventory.slices))
        return True

    def watch_files(self, context: ssl.SSLContext | None = None) -> None:
        """Re-read the inventory and the serving certificate when they change (cert-manager renews
        the certificate in place: new connections get the new one, no restart needed)."""
        certificate = self._certificate_signature()
        while not self._stop.wait(self.options.inventory_poll_seconds):
            if self.config.inventory:
                self.reload_inventory()
            current = self._certificate_signature()
            if context is not None and current != certificate:
                try:
                    context.load_cert_chain(self.options.tls_cert, self.options.tls_key)
                except (OSError, ssl.SSLError) as exc:  # a half-written pair: keep serving the old one
                    log("certificate_rejected", error=str(exc)[:200])
                    continue
                certificate = current
                log("certificate_reloaded")

    def _certificate_signature(self) -> tuple[Any, ...]:
        out = []
        for path in (self.options.tls_cert, self.options.tls_key):
            try:
                stat = os.stat(path)
                out.append((stat.st_mtime_ns, stat.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def stop(self) -> None:
        self._stop.set()
        if self.live is not None:
            self.live.stop()

    def review(self, body: bytes) -> tuple[int, dict[str, Any], Decision | None]:
        try:
            request = parse_review(body)
        except BadReview as exc:
            return 400, {"error": str(exc)}, None
        snapshot = self.snapshot
        try:
            decision = decide(request, snapshot.linter, self.options.deny_on, self.options.dry_run)
        except Exception as exc:  # noqa: BLE001 - never a crash or a hung request: the failure mode answers
            log("review_failed", uid=request["uid"], error=f"{type(exc).__name__}: {exc}")
            allowed = self.options.failure_mode == "allow"
            decision = Decision(request["uid"], allowed, "gpulint could not check this object",
                                [] if not allowed else [f"gpulint could not check this object ({type(exc).__name__})"])
        return 200, decision.response(), decision


class _Handler(BaseHTTPRequestHandler):
    server_version = "gpulint"
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT_SECONDS
    webhook: Webhook  # set on the subclass made per server

    def setup(self) -> None:
        # Headers and body go out as separate writes; without TCP_NODELAY the client's delayed
        # ACK adds ~40 ms to every answer.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return  # structured logs are written per request instead

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        started = time.perf_counter()
        webhook = self.webhook
        if self.path == "/healthz":
            self._send(200, b"ok\n", "text/plain")
        elif self.path == "/readyz":
            ready = webhook.ready
            self._send(200 if ready else 503, b"ready\n" if ready else b"inventory not loaded\n", "text/plain")
        elif self.path == "/metrics":
            loaded = webhook.snapshot.loaded_at
            text = webhook.metrics.render(time.time() - loaded if loaded else None)
            self._send(200, text.encode(), "text/plain; version=0.0.4")
        else:
            self._send(404, b'{"error": "not found"}')
        webhook.metrics.observe(self.path, "ok", time.perf_counter() - started)

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        started = time.perf_counter()
        webhook = self.webhook
        if self.path != "/validate":
            self._send(404, b'{"error": "not found"}')
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._send(411, b'{"error": "Content-Length required"}')
            webhook.metrics.observe(self.path, "bad_request", time.perf_counter() - started)
            return
        if int(length) > webhook.options.max_body_bytes:
            self.close_connection = True  # the body is not read: the connection cannot be reused
            self._send(413, json.dumps({"error": f"request body over {webhook.options.max_body_bytes} bytes"}).encode())
            webhook.metrics.observe(self.path, "too_large", time.perf_counter() - started)
            return
        if not webhook.slots.acquire(blocking=False):  # a flood must not exhaust threads or memory
            self.close_connection = True
            self._send(503, b'{"error": "too many reviews in progress"}')
            webhook.metrics.observe(self.path, "overloaded", time.perf_counter() - started)
            return
        try:
            body = self.rfile.read(int(length))
            status, answer, decision = webhook.review(body)
        finally:
            webhook.slots.release()
        self._send(status, json.dumps(answer).encode())
        elapsed = time.perf_counter() - started
        result = "bad_request" if status != 200 else ("denied" if decision and not decision.allowed else "allowed")
        webhook.metrics.observe(self.path, result, elapsed, denied=result == "denied")
        log("review", uid=decision.uid if decision else None, kind=decision.kind if decision else None,
            result=result, findings=len(decision.findings) if decision else 0, ms=round(elapsed * 1000, 2))


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A failed handshake or a dropped connection: one JSON log line, not a traceback on stderr."""
        error = sys.exc_info()[1]
        log("connection_error", client=str(client_address[0]) if client_address else None,
            error=f"{type(error).__name__}: {error}"[:300])


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def build_server(config: Config, options: ServeOptions) -> tuple[ThreadingHTTPServer, Webhook, ssl.SSLContext]:
    webhook = Webhook(config, options)
    handler = type("Handler", (_Handler,), {"webhook": webhook})
    server = _Server((options.host, options.port), handler)
    server.daemon_threads = False  # shutdown waits for in-flight requests
    server.block_on_close = True
    # The handshake runs on the first read, in the request's own thread: a slow client cannot
    # stall the accept loop.
    context = tls_context(options.tls_cert, options.tls_key)
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    return server, webhook, context


def run(config: Config, options: ServeOptions) -> None:
    """Serve until SIGTERM or SIGINT; in-flight requests finish before the process exits."""
    server, webhook, context = build_server(config, options)
    watcher = threading.Thread(target=webhook.watch_files, args=(context,), name="file-watch", daemon=True)
    watcher.start()

    def stop(signum: int, _frame: Any) -> None:
        log("shutdown", signal=signal.Signals(signum).name)
        webhook.stop()
        threading.Thread(target=server.shutdown, name="shutdown").start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log("serving", host=options.host, port=server.server_address[1], dry_run=options.dry_run,
        deny_on=str(options.deny_on), inventory=list(config.inventory))
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()  # joins the request threads (block_on_close)
        log("stopped")
