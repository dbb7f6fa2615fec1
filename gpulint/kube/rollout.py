"""A Deployment's rolling update as the deployment controller sizes it (kubernetes/kubernetes
pkg/controller/deployment/util/deployment_util.go ResolveFenceposts, v1.34).

maxSurge is scaled from the replicas rounding up, maxUnavailable rounding down (both default to
25% in apps/v1); when both come to 0, maxUnavailable is 1. With maxUnavailable 0 the controller
scales the old ReplicaSet down only as new pods become available: the first surge pods need room
beside every old one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text

DEFAULT_SURGE = "25%"
DEFAULT_UNAVAILABLE = "25%"


@dataclass(frozen=True)
class Fenceposts:
    surge: int
    unavailable: int
    surge_text: str  # as written (or the default), for messages
    unavailable_text: str


def _scaled(value: Any, total: int, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent; None for a value the API server would refuse."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    written = text(value)
    if not written.endswith("%"):
        return None
    try:
        percent = int(written[:-1])
    except ValueError:
        return None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def fenceposts(deployment: dict[str, Any]) -> Fenceposts | None:
    """The surge and unavailability of the Deployment's rolling update (None: a Recreate strategy, or values
    not known)."""
    strategy = mapping(dig(deployment, "spec", "strategy"))
    if text(strategy.get("type")) not in ("", "RollingUpdate"):
        return None
    replicas = integer(dig(deployment, "spec", "replicas"), 1)
    if replicas is None:
        return None
    rolling = mapping(strategy.get("rollingUpdate"))
    surge_value = rolling.get("maxSurge", DEFAULT_SURGE)
    unavailable_value = rolling.get("maxUnavailable", DEFAULT_UNAVAILABLE)
    surge = _scaled(surge_value, replicas, True)
    unavailable = _scaled(unavailable_value, replicas, False)
    if surge is None or unavailable is None:
        return None
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return Fenceposts(surge, unavailable, str(surge_value), str(unavailable_value))
