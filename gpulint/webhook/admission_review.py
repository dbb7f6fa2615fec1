"""AdmissionReview in, AdmissionReview out: the request's object reviewed by the inventory snapshot
(gpulint.lint.review). Pure logic, no I/O: the server (gpulint.webhook.server) reads the body and
writes the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import mapping, text
from gpulint.lint.review import MAX_DEPTH, Deadline, Finding, ReviewSnapshot, json_depth

ADMISSION_API = "admission.k8s.io/v1"
# JSON nesting allowed in a review body: the object itself may nest MAX_DEPTH levels (the same limit
# as a YAML file), plus the AdmissionReview envelope around it.
MAX_BODY_DEPTH = MAX_DEPTH + 4


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


def decide(request: dict[str, Any], snapshot: ReviewSnapshot, deadline: Deadline | None = None) -> Decision:
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
    review = snapshot.review(obj, deadline)
    return Decision(uid, review.allowed, review.message, review.warnings, review.findings, text(obj.get("kind")), dry)
