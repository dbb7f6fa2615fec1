"""What the webhook tells its operators: one JSON log line per event on stderr, and Prometheus metrics -
requests by path and result, denials, refused connections, bytes in flight and the reviews' latency (the
inventory's own lines come from gpulint.lint.review.Inventories)."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
KNOWN_PATHS = ("/validate", "/healthz", "/readyz", "/metrics")  # metric labels; anything else is "other"
REVIEWED = ("allowed", "denied", "timeout", "failed")  # results of reviews (the latency histogram's)


def metric(name: str, kind: str, text: str, *samples: tuple[str, object]) -> list[str]:
    """One Prometheus metric, ``gpulint_`` + ``name``: its HELP and TYPE lines, then each sample (what follows
    the name - a suffix, labels - and its value)."""
    name = "gpulint_" + name
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *(f"{name}{tail} {value}" for tail, value in samples)]


@dataclass
class Metrics:
    requests: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, result) -> count
    denials: int = 0
    latency_counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    latency_sum: float = 0.0
    latency_count: int = 0
    connections_refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, path: str, result: str, seconds: float, denied: bool = False) -> None:
        label = path if path in KNOWN_PATHS else "other"  # never a client-chosen string as a label
        with self.lock:
            self.requests[(label, result)] = self.requests.get((label, result), 0) + 1
            self.denials += denied
            if result in REVIEWED:
                index = next((i for i, bound in enumerate(LATENCY_BUCKETS) if seconds <= bound), len(LATENCY_BUCKETS))
                self.latency_counts[index] += 1
                self.latency_sum += seconds
                self.latency_count += 1

    def refused(self) -> None:
        with self.lock:
            self.connections_refused += 1

    def render(self, in_flight: int, extra: tuple[str, ...] = ()) -> str:
        """The Prometheus text: these metrics, the bytes in flight, then ``extra`` (the inventory's)."""
        with self.lock:
            requests = [(f'{{path="{p}",result="{r}"}}', n) for (p, r), n in sorted(self.requests.items())]
            cumulative = accumulate(self.latency_counts[: len(LATENCY_BUCKETS)])
            latency = [
                *((f'_bucket{{le="{bound}"}}', count) for bound, count in zip(LATENCY_BUCKETS, cumulative)),
                ('_bucket{le="+Inf"}', self.latency_count),
                ("_sum", f"{self.latency_sum:.6f}"),
                ("_count", self.latency_count),
            ]
            lines = [
                *metric("requests_total", "counter", "Requests served, by path and result.", *requests),
                *metric("denials_total", "counter", "AdmissionReviews answered allowed=false.", ("", self.denials)),
                *metric(
                    "connections_refused_total",
                    "counter",
                    "Connections closed at once: too many open, or too many from one address.",
                    ("", self.connections_refused),
                ),
                *metric(
                    "review_bytes_in_flight", "gauge", "Bytes of review bodies being read or reviewed.", ("", in_flight)
                ),
                *metric("review_duration_seconds", "histogram", "Time to answer an AdmissionReview.", *latency),
            ]
        return "\n".join([*lines, *extra]) + "\n"


_LOG_LOCK = threading.Lock()  # one JSON object per line, even with many request threads


def log(event: str, **fields: Any) -> None:
    """One JSON line on stderr. A line that cannot be written is dropped: when the log's reader has gone
    (a broken pipe, a closed stream) the server must still answer reviews and still stop on SIGTERM."""
    line = json.dumps({"time": round(time.time(), 3), "event": event, **fields}) + "\n"
    with _LOG_LOCK:
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (OSError, ValueError):  # EPIPE, EBADF, "I/O operation on closed file"
            pass


def error_text(exc: BaseException | None) -> str:
    """An error as the log shows it: its type and message, at most 300 characters."""
    return f"{type(exc).__name__}: {exc}"[:300]
