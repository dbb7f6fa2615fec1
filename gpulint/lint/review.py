"""One inventory snapshot's admission reviews: the webhook's only door into gpulint.lint (#30 step 7).

A ``ReviewSnapshot`` is built once per inventory (and per configuration): the enabled rules routed and
their checks imported, the inventory's facts held. ``review(object, deadline)`` is its whole API: the
object goes through the same LintRun as `gpulint check`, and comes back as the decision, the denial's
reasons and the warnings, worded as the API server shows them. Nothing is kept from one review to the
next. The rest of this module is what the server needs around it, named here so that gpulint.webhook
imports nothing else from gpulint.lint (an import-linter contract): the configuration, the deadline a
review stops at, and the inventory it reads (files, or the live inventory when it is asked for).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint.lint.config import Config
from gpulint.lint.engine import Deadline, DeadlineExceeded, Routes
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inventory import ClusterInventory, InventoryError, load_configured_inventory
from gpulint.lint.loader import MAX_DEPTH
from gpulint.lint.registry import import_checks
from gpulint.lint.run import LintRun

if TYPE_CHECKING:  # the live inventory (the Kubernetes client) is imported only when it is used
    from gpulint.lint.live_inventory import LiveInventory

__all__ = [
    "MAX_DEPTH",
    "ClusterInventory",
    "Config",
    "Deadline",
    "DeadlineExceeded",
    "Finding",
    "InventoryError",
    "LiveInventory",
    "Review",
    "ReviewSnapshot",
    "Severity",
    "inventory_counts",
    "inventory_signature",
    "live_inventory",
    "load_configured_inventory",
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
        run = LintRun.for_object(self._config, obj, self._cluster, self._routes)
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


def inventory_signature(paths: tuple[str, ...]) -> tuple[Any, ...]:
    """The inventory files as they are now (path, inode, mtime, size): a change means a reload."""
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
            entries.append((path, stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


def inventory_counts(inventory: ClusterInventory) -> dict[str, int]:
    """What the server logs of an inventory it loaded. Objects the API server would refuse (an edited
    inventory) are counted, never a reason to deny a review."""
    return {
        "nodes": len(inventory.nodes),
        "slices": len(inventory.slices),
        "rejected_objects": len({(r.file, r.ref) for r in inventory.rejections}),
    }


def live_inventory(
    api: Any,
    kubeconfig: str,
    context: str,
    pods: bool,
    publish: Callable[[ClusterInventory], None],
    log: Callable[..., None],
) -> LiveInventory:
    """The inventory listed and watched from the API server (``api``: a kubernetes client Configuration, or
    None for the kubeconfig's or the service account's), not started."""
    from gpulint.lint.live_inventory import LiveInventory, Transport, api_configuration, selected_apis

    configuration = api or api_configuration(kubeconfig or None, context or None)
    return LiveInventory(Transport(configuration), publish, log, selected_apis(pods))
