"""One inventory snapshot's admission reviews: the webhook's only door into gpulint.lint (#30 step 7).

A ``ReviewSnapshot`` is built once per inventory (and per configuration): the enabled rules routed and
their checks imported, the inventory's facts held. ``review(object, deadline)`` is its whole API: the
object goes through the same LintRun as `gpulint check`, and comes back as the decision, the denial's
reasons and the warnings, worded as the API server shows them. Nothing of one object is kept for the
next review but the scheduler's verdicts on its pod shape, by a canonical key of the shape
(lint/world/shapes.py). The rest of this module is what the server needs around it, named here so that
gpulint.webhook imports nothing else from gpulint.lint (an import-linter contract): the configuration, the deadline a
review stops at and the watchdog that keeps it, the bytes in flight, the inventory it reads (files, or the
live inventory when it is asked for) and its metrics, and the serving certificate, re-read as the inventory
files are and likewise replaced only by a pair that loads.
"""

from __future__ import annotations

import gc
import os
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from gpulint.lint.bounds import (
    CLIENT_GONE,
    ByteBudget,
    Connections,
    DeadlineReader,
    ReadDeadline,
    Watchdog,
    peer_closed,
)
from gpulint.lint.config import Config
from gpulint.lint.engine import Deadline, DeadlineExceeded, Routes
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inputs.loader import MAX_DEPTH
from gpulint.lint.registry import import_checks
from gpulint.lint.run import LintRun
from gpulint.lint.telemetry import KNOWN_PATHS, Metrics, error_text, log, metric
from gpulint.lint.world.inventory import ClusterInventory, InventoryError, load_configured_inventory
from gpulint.lint.world.shapes import PodShapes

if TYPE_CHECKING:  # the live inventory (the Kubernetes client) is imported only when it is used
    from gpulint.lint.world.live_inventory import LiveInventory

__all__ = [
    "CLIENT_GONE",
    "MAX_DEPTH",
    "ByteBudget",
    "Certificates",
    "ClusterInventory",
    "Connections",
    "Config",
    "Deadline",
    "DeadlineExceeded",
    "DeadlineReader",
    "Finding",
    "Inventories",
    "InventoryError",
    "KNOWN_PATHS",
    "Metrics",
    "ReadDeadline",
    "Review",
    "ReviewSnapshot",
    "Severity",
    "Snapshot",
    "Watchdog",
    "error_text",
    "files_signature",
    "json_depth",
    "log",
    "metric",
    "peer_closed",
]

MAX_WARNINGS = 20
MAX_WARNING_LENGTH = 256  # the API server shortens longer warnings; keep ours readable
MAX_DENIAL_LINES = 20  # the denial message lists this many findings, then a count: the answer stays small


@dataclass(frozen=True)
class Review:
    """One object's review, as the AdmissionReview answer needs it."""

    allowed: bool
    message: str = ""  # why it is denied: the findings that deny it, with their notes
    warnings: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class ReviewSnapshot:
    """What every review of one inventory snapshot shares; each review is a LintRun of its own."""

    _config: Config
    _routes: Routes  # the enabled rules, routed once: not per review
    _cluster: ClusterInventory | None
    _deny_on: Severity
    _dry_run: bool  # everything is a warning: nothing is denied
    # verdicts on the pod shapes reviewed against this snapshot: bounded, dropped with it (lint/world/shapes.py)
    _shapes: PodShapes = field(default_factory=PodShapes, compare=False)

    @classmethod
    def build(
        cls,
        config: Config,
        cluster: ClusterInventory | None = None,
        deny_on: Severity = Severity.ERROR,
        dry_run: bool = False,
    ) -> ReviewSnapshot:
        routes = Routes.of(config)
        import_checks(routes.rules)  # a server imports every check once, up front: no review pays for it
        return cls(config, routes, cluster, deny_on, dry_run)

    def review(self, obj: dict[str, Any], deadline: Deadline | None = None) -> Review:
        """The object linted as parsed (re-serialising it for the YAML loader cost seconds and hundreds of MB
        for an object with a million values, for positions nobody is shown). Raises DeadlineExceeded."""
        run = LintRun.for_object(self._config, obj, self._cluster, self._routes, self._shapes)
        # An info run note is a fact about a CLI run (how a kind was read), said once there: not a warning
        # to print at every `kubectl apply`.
        findings = [
            f for f in run.report(deadline=deadline).findings if not (f.run_note and f.severity is Severity.INFO)
        ]
        denying = [f for f in findings if f.severity >= self._deny_on]
        rest = [f for f in findings if f.severity < self._deny_on]
        if self._dry_run:
            rest, denying = denying + rest, []
        warnings = [_warning(f) for f in rest[:MAX_WARNINGS]]
        if len(rest) > MAX_WARNINGS:
            warnings.append(f"gpulint: {len(rest) - MAX_WARNINGS} more findings not shown")
        if not denying:
            return Review(True, "", warnings, findings)
        # the notes carry the API server's own wording and the choices: kubectl prints them under the line
        lines = [
            "\n".join((f"- {f.rule}: {f.message}", *(f"  {note}" for note in f.notes)))
            for f in denying[:MAX_DENIAL_LINES]
        ]
        if len(denying) > MAX_DENIAL_LINES:
            lines.append(f"- and {len(denying) - MAX_DENIAL_LINES} more")
        return Review(False, "gpulint denied this object:\n" + "\n".join(lines), warnings, findings)


def _warning(finding: Finding) -> str:
    text = f"gpulint {finding.rule}: {finding.message}"
    return text if len(text) <= MAX_WARNING_LENGTH else text[: MAX_WARNING_LENGTH - 3] + "..."


@dataclass(frozen=True)
class Snapshot:
    """What a request sees: swapped whole, so a request never mixes two inventories."""

    reviewer: ReviewSnapshot
    inventory: ClusterInventory | None
    loaded_at: float | None


class Inventories:
    """The inventory the reviews read - the configured files, re-read when they change, or the live
    inventory - and the snapshot built from each: replaced whole, and only by one that loads (a half-written
    file or a list that failed keeps the one before)."""

    def __init__(self, config: Config, deny_on: Severity, dry_run: bool, log: Callable[..., None]) -> None:
        self.config, self.deny_on, self.dry_run, self.log = config, deny_on, dry_run, log
        self.snapshot = Snapshot(self._reviews(None), None, None)
        self.live: LiveInventory | None = None
        self._signature: tuple[Any, ...] | None = None
        self._swap_lock = threading.Lock()

    def _reviews(self, inventory: ClusterInventory | None) -> ReviewSnapshot:
        return ReviewSnapshot.build(self.config, inventory, self.deny_on, self.dry_run)

    def start_live(self, api: Any, kubeconfig: str, context: str, pods: bool) -> None:
        """List and watch the inventory APIs the API server serves (``api``: a kubernetes client Configuration,
        or None for the kubeconfig's or the service account's). Imported only here: the Kubernetes client."""
        from gpulint.lint.world.live_inventory import LiveInventory, Transport, api_configuration, selected_apis

        configuration = api or api_configuration(kubeconfig or None, context or None)
        self.live = LiveInventory(Transport(configuration), self.swap, self.log, selected_apis(pods, watching=True))
        self.live.start()

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()

    def watch(
        self, stop: threading.Event, wake: threading.Event, poll_seconds: float, also: Callable[[bool], object]
    ) -> None:
        """Until ``stop``: re-read the inventory files, and ``also`` (the serving certificate), when they change,
        or at once when ``wake`` is set (SIGHUP); ``also`` is told whether the re-read is forced."""
        while not stop.is_set():
            wake.wait(poll_seconds)
            if stop.is_set():
                return
            forced = wake.is_set()
            wake.clear()
            if forced:
                self.log("reload", reason="SIGHUP")
            try:
                if self.config.inventory:
                    self.reload(force=forced)
                also(forced)
            except Exception as exc:
                self.log("reload_failed", error=error_text(exc))

    @property
    def ready(self) -> bool:
        if self.live is not None:
            return self.live.ready
        return not self.config.inventory or self.snapshot.inventory is not None

    def readiness(self) -> str:
        """The /readyz body when ready: an API that cannot be listed does not make the webhook unready (the others
        are still served), but it is named, with its last error, so that a frozen part of the inventory shows."""
        stale = self.live.stale() if self.live is not None else []
        return "ready; stale: " + "; ".join(stale) if stale else "ready"

    def waiting_for(self) -> str:
        """What readiness waits for, in words."""
        if self.live is not None:
            return "listing " + ", ".join(self.live.pending())
        return "loading the inventory"

    def swap(self, inventory: ClusterInventory) -> None:
        """Replace the inventory whole: a request sees the old one or the new one, never a mix."""
        with self._swap_lock:
            self.snapshot = Snapshot(self._reviews(inventory), inventory, time.time())
            # gc.freeze keeps the collector from rescanning a long-lived inventory per request, but a
            # frozen object is never collected: the old snapshot (its models point back at it: cycles)
            # would stay forever. Thaw, collect what the swap released, freeze what is alive now.
            gc.unfreeze()
            gc.collect()
            gc.freeze()

    def reload(self, force: bool = False) -> bool:
        """Load the configured files when they changed; keep the old inventory when the new one does not load."""
        signature = files_signature(self.config.inventory)
        if signature == self._signature and not force:
            return False
        try:
            inventory = load_configured_inventory(self.config)
        except InventoryError as exc:
            self.log("inventory_rejected", error=str(exc).splitlines()[-1][:300])
            return False
        self.swap(inventory)
        self._signature = signature
        # objects the API server would refuse (an edited inventory): counted here, never a reason to deny a review
        self.log(
            "inventory_loaded",
            nodes=len(inventory.nodes),
            slices=len(inventory.slices),
            rejected_objects=len({(r.file, r.ref) for r in inventory.rejections}),
        )
        return True

    def metrics(self) -> tuple[str, ...]:
        """The inventory's Prometheus lines: its age, and the live inventory's APIs (listed now or not, when
        last listed, failures) and credentials (a token that expired leaves every list failing)."""
        loaded = self.snapshot.loaded_at
        lines = []
        if loaded:
            age = f"{time.time() - loaded:.3f}"
            lines += metric("inventory_age_seconds", "gauge", "Seconds since the inventory was last loaded.", ("", age))
        live = self.live
        if live is None:
            return tuple(lines)
        states = live.sync_states()
        for name, kind, text, samples in (
            (
                "inventory_unauthorized_total",
                "counter",
                "Answers 401 Unauthorized from the API server (an expired or revoked token).",
                [("", live.unauthorized)],
            ),
            (
                "inventory_credentials_rejected",
                "gauge",
                "1 while the API server's last answer was 401 Unauthorized.",
                [("", int(live.credentials_rejected))],
            ),
            (
                "inventory_api_synced",
                "gauge",
                "1 when the API's objects are those of its last list and watch, 0 while it cannot be listed.",
                [(f'{{api="{state.name}"}}', int(state.listed)) for state in states],
            ),
            (
                "inventory_api_errors_total",
                "counter",
                "Lists and watches of the API that failed.",
                [(f'{{api="{state.name}"}}', state.errors) for state in states],
            ),
            (
                "inventory_api_last_sync_timestamp_seconds",
                "gauge",
                "When the API was last listed whole.",
                [(f'{{api="{s.name}"}}', f"{s.synced_at:.3f}") for s in states if s.synced_at is not None],
            ),
        ):
            lines += metric(name, kind, text, *samples)
        return tuple(lines)


def json_depth(body: bytes) -> int:
    """Deepest nesting of arrays and objects in valid JSON, counted in C-speed passes (strings removed
    first: their brackets are text)."""
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)))


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_BRACKET_STEP = [0] * 256
for _open, _close in (b"[]", b"{}"):
    _BRACKET_STEP[_open], _BRACKET_STEP[_close] = 1, -1


def files_signature(paths: Iterable[str]) -> tuple[Any, ...]:
    """The files (and the files under the directories) as they are now: a change means a reload. Stat follows
    symbolic links: a Secret volume's ``..data`` swap changes the inode."""
    entries = []
    for root in paths:
        found = (
            [root]
            if os.path.isfile(root)
            else [os.path.join(d, f) for d, _, files in os.walk(root) for f in sorted(files)]
        )
        for path in sorted(found):
            try:
                stat = os.stat(path)
            except OSError:
                continue
            entries.append((path, stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


class Certificates:
    """The serving pair. cert-manager renews it through the Secret volume's ``..data`` symlink swap; a new
    pair is loaded into a fresh context and used for new connections only once it loads whole (a truncated
    PEM or a key that does not match the certificate never replaces a good pair)."""

    def __init__(self, cert: str, key: str) -> None:
        self.cert, self.key = cert, key
        self.context = tls_context(cert, key)
        self.signature = files_signature((cert, key))
        self._rejected: tuple[Any, ...] | None = None

    def reload(self, force: bool = False) -> bool:
        signature = files_signature((self.cert, self.key))
        if signature == self.signature and not force:
            return False
        try:
            context = tls_context(self.cert, self.key)
        except (OSError, ssl.SSLError, ValueError) as exc:
            if signature != self._rejected:  # once per bad pair, not once per poll
                log("certificate_rejected", error=error_text(exc))
                self._rejected = signature
            return False
        self.context, self.signature, self._rejected = context, signature, None
        log("certificate_reloaded")
        return True


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context
