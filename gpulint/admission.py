"""AdmissionReview in, AdmissionReview out: one object through the same pipeline as `gpulint check`.

Pure logic, no I/O: the server (gpulint.serve) reads the body and writes the answer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gpulint.engine import FileLinter
from gpulint.findings import Finding, Severity
from gpulint.sources import Source

ADMISSION_API = "admission.k8s.io/v1"
MAX_WARNINGS = 20
MAX_WARNING_LENGTH = 256  # the API server shortens longer warnings; keep ours readable


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

    def response(self) -> dict[str, Any]:
        body: dict[str, Any] = {"uid": self.uid, "allowed": self.allowed}
        if not self.allowed:
            body["status"] = {"code": 403, "reason": "Forbidden", "message": self.message}
        if self.warnings:
            body["warnings"] = self.warnings
        return {"apiVersion": ADMISSION_API, "kind": "AdmissionReview", "response": body}


def parse_review(body: bytes) -> dict[str, Any]:
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadReview(f"request body is not JSON: {exc}") from None
    if not isinstance(review, dict):
        raise BadReview("request body is not a JSON object")
    if review.get("apiVersion") != ADMISSION_API or review.get("kind") != "AdmissionReview":
        raise BadReview(f"expected apiVersion {ADMISSION_API} kind AdmissionReview, got "
                        f"{review.get('apiVersion')!r} {review.get('kind')!r}")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise BadReview("AdmissionReview has no request.uid")
    return request


def _warning(finding: Finding) -> str:
    text = f"gpulint {finding.rule}: {finding.message}"
    return text if len(text) <= MAX_WARNING_LENGTH else text[:MAX_WARNING_LENGTH - 3] + "..."


def decide(request: dict[str, Any], linter: FileLinter, deny_on: Severity, dry_run: bool) -> Decision:
    uid = request["uid"]
    operation = request.get("operation")
    obj = request.get("object")
    if operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return Decision(uid, True)  # DELETE, CONNECT: nothing to check
    if request.get("namespace") and isinstance(obj.get("metadata"), dict) and not obj["metadata"].get("namespace"):
        obj = {**obj, "metadata": {**obj["metadata"], "namespace": request["namespace"]}}
    kind = str(obj.get("kind") or "")
    name = str((obj.get("metadata") or {}).get("name") or (obj.get("metadata") or {}).get("generateName") or "")
    source = Source(f"{kind}/{request.get('namespace') or ''}/{name}", content=json.dumps(obj).encode())
    findings = linter.lint(source).findings
    denying = [f for f in findings if f.severity >= deny_on]
    rest = [f for f in findings if f.severity < deny_on]
    if dry_run:
        rest, denying = denying + rest, []
    warnings = [_warning(f) for f in rest[:MAX_WARNINGS]]
    if len(rest) > MAX_WARNINGS:
        warnings.append(f"gpulint: {len(rest) - MAX_WARNINGS} more findings not shown")
    if denying:
        message = "gpulint denied this object:\n" + "\n".join(f"- {f.rule}: {f.message}" for f in denying)
        return Decision(uid, False, message, warnings, findings, kind)
    return Decision(uid, True, "", warnings, findings, kind)
