"""AdmissionReview in, AdmissionReview out: one object through the same pipeline as `gpulint check`.

Pure logic, no I/O: the server (gpulint.webhook.server) reads the body and writes the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from gpulint.kube.fields import mapping, text
from gpulint.lint.config import Config
from gpulint.lint.engine import Deadline, Routes
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inventory import ClusterInventory
from gpulint.lint.loader import MAX_DEPTH
from gpulint.lint.registry import import_checks
from gpulint.lint.run import LintRun

ADMISSION_API = "admission.k8s.io/v1"
MAX_WARNINGS = 20
MAX_WARNING_LENGTH = 256  # the API server shortens longer warnings; keep ours readable
MAX_DENIAL_LINES = 20  # the denial message lists this many findings, then a count: the answer stays small
# JSON nesting allowed in a review body: the object itself may nest MAX_DEPTH levels (the same limit
# as a YAML file), plus the AdmissionReview envelope around it.
MAX_BODY_DEPTH = MAX_DEPTH + 4

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_BRACKET_STEP = [0] * 256
for _open, _close in (b"[]", b"{}"):
    _BRACKET_STEP[_open], _BRACKET_STEP[_close] = 1, -1


class BadReview(Exception):
    """The request is not an AdmissionReview: answered with 400."""


@dataclass
class Decision:
    uid: str
    allowed: bool
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    kind: str = ""
    # The request's dryRun: the API server calls a webhook that declares sideEffects None on dry runs too
    # (kubectl --dry-run=server); the answer is the same, and the log says which it was.
    dry_run: bool = False

    def response(self) -> dict[str, Any]:
        body: dict[str, Any] = {"uid": self.uid, "allowed": self.allowed}
        if not self.allowed:
            body["status"] = {"code": 403, "reason": "Forbidden", "message": self.message}
        if self.warnings:
            body["warnings"] = self.warnings
        return {"apiVersion": ADMISSION_API, "kind": "AdmissionReview", "response": body}


@dataclass(frozen=True)
class Reviewer:
    """What every review of one inventory snapshot shares; each review is a LintRun of its own."""

    config: Config
    routes: Routes  # the enabled rules, routed once: not per review
    cluster: ClusterInventory | None = None

    @classmethod
    def build(cls, config: Config, cluster: ClusterInventory | None = None) -> Reviewer:
        routes = Routes.of(config)
        import_checks(routes.rules)  # a server imports every check once, up front: no review pays for it
        return cls(config, routes, cluster)

    def findings(self, obj: dict[str, Any], deadline: Deadline | None = None) -> list[Finding]:
        run = LintRun.for_object(self.config, obj, self.cluster, self.routes)
        # An info run note is a fact about a CLI run (how a kind was read), said once there: not a warning
        # to print at every `kubectl apply`.
        return [f for f in run.report(deadline=deadline).findings if not (f.run_note and f.severity is Severity.INFO)]


def json_depth(body: bytes) -> int:
    """Deepest nesting of arrays and objects in valid JSON, counted in C-speed passes (strings removed
    first: their brackets are text)."""
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)))


def parse_review(body: bytes) -> dict[str, Any]:
    try:
        review = json.loads(body)
    except RecursionError:
        raise BadReview(f"request body nests deeper than {MAX_BODY_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadReview(f"request body is not JSON: {exc}") from None
    # Checks walk objects recursively: refuse what they cannot walk. A body with fewer brackets than the
    # limit cannot nest deeper than it: counting them is cheaper than finding the depth.
    if body.count(b"[") + body.count(b"{") > MAX_BODY_DEPTH and json_depth(body) > MAX_BODY_DEPTH:
        raise BadReview(f"request body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(review, dict):
        raise BadReview("request body is not a JSON object")
    if review.get("apiVersion") != ADMISSION_API or review.get("kind") != "AdmissionReview":
        raise BadReview(
            f"expected apiVersion {ADMISSION_API} kind AdmissionReview, got "
            f"{review.get('apiVersion')!r} {review.get('kind')!r}"
        )
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise BadReview("AdmissionReview has no request.uid")
    return request


def _warning(finding: Finding) -> str:
    text = f"gpulint {finding.rule}: {finding.message}"
    return text if len(text) <= MAX_WARNING_LENGTH else text[: MAX_WARNING_LENGTH - 3] + "..."


def decide(
    request: dict[str, Any], reviewer: Reviewer, deny_on: Severity, dry_run: bool, deadline: Deadline | None = None
) -> Decision:
    uid = request["uid"]
    operation = request.get("operation")
    obj = request.get("object")
    dry = request.get("dryRun") is True
    if operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return Decision(uid, True, dry_run=dry)  # DELETE, CONNECT: nothing to check
    namespace = text(request.get("namespace"))
    metadata = mapping(obj.get("metadata"))  # user data: metadata may be anything
    if namespace and isinstance(obj.get("metadata"), dict) and not metadata.get("namespace"):
        obj = {**obj, "metadata": {**metadata, "namespace": namespace}}
    kind = text(obj.get("kind"))
    # The object is linted as parsed: re-serialising it to go through the YAML loader cost seconds and
    # hundreds of MB for an object with a million values, for positions nobody is shown.
    findings = reviewer.findings(obj, deadline)
    denying = [f for f in findings if f.severity >= deny_on]
    rest = [f for f in findings if f.severity < deny_on]
    if dry_run:
        rest, denying = denying + rest, []
    warnings = [_warning(f) for f in rest[:MAX_WARNINGS]]
    if len(rest) > MAX_WARNINGS:
        warnings.append(f"gpulint: {len(rest) - MAX_WARNINGS} more findings not shown")
    if denying:
        # the notes carry the API server's own wording and the choices: kubectl prints them under the line
        lines = [
            "\n".join((f"- {f.rule}: {f.message}", *(f"  {note}" for note in f.notes)))
            for f in denying[:MAX_DENIAL_LINES]
        ]
        if len(denying) > MAX_DENIAL_LINES:
            lines.append(f"- and {len(denying) - MAX_DENIAL_LINES} more")
        message = "gpulint denied this object:\n" + "\n".join(lines)
        return Decision(uid, False, message, warnings, findings, kind, dry)
    return Decision(uid, True, "", warnings, findings, kind, dry)
