"""LeaderWorkerSet's webhook.

LeaderWorkerSet (kubernetes-sigs/lws v0.10.0): ``pkg/webhooks/leaderworkerset_webhook.go`` generalValidate:
the name is a DNS-1035 label (it names the headless Service), ``subGroupSize`` divides ``size`` or
``size - 1`` (``size - 1`` with LeaderExcluded) and is not larger, and a rolling update may not have
both ``maxSurge`` and ``maxUnavailable`` at 0; size, replicas, the rolling update's numbers and percents, and the
subgroup-exclusive-topology annotation only with a subGroupPolicy. The defaults (webhook Default): size 1,
replicas 1, maxUnavailable 1, maxSurge 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.names import (
    dns1035_label,
    regex_error,
)
from gpulint.kube.operators.common import Refusal, Submitted, gated
from gpulint.kube.refs import Path
from gpulint.kube.releases import Installed, Span
from gpulint.kube.validation.errors import (
    INVALID,
    FieldError,
)

GROUP = "leaderworkerset.x-k8s.io"
# Where a LeaderWorkerSet release is written: its image (config/manager registry.k8s.io/lws/lws:<release>), the chart
# ``lws`` (charts/lws, its values' image.manager.tag, else its appVersion), kubernetes-sigs/lws
# (releases/download/<release>/manifests.yaml, a remote base's ref).
INSTALLED = Installed(("lws/lws",), ("lws",), ("image", "manager", "tag"), ("kubernetes-sigs/lws",))
# subGroupPolicy.subGroupPolicyType came with v0.6.0 (api/leaderworkerset/v1 leaderworkerset_types.go, and the
# webhook's LeaderExcluded check): an older release's CRD prunes it, and checks size or size - 1 alone.
LEADER_EXCLUDED = Span((0, 6))
SUB_GROUP_SHOWN = ("spec", "leaderWorkerTemplate", "SubGroupPolicy", "subGroupSize")  # as LWS names the field


LWS_MAX_REPLICAS = 1_000_000  # v0.10.0
INT32_MAX = 2**31 - 1
LWS_SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
PERCENT = re.compile(r"[0-9]+%")  # validation.IsValidPercent
PERCENT_ERROR = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%"
)
_ROLLING: Path = ("spec", "rolloutStrategy", "rollingUpdateConfiguration")


def _leader_worker_set(data: dict[str, Any]) -> Iterator[FieldError]:
    """generalValidate in its order, on the CRD's defaults (replicas 1, size 1, maxUnavailable 1, maxSurge 0)."""
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name:
        for message in dns1035_label(name):
            yield FieldError(("metadata", "name"), INVALID, name, message)
    template = mapping(dig(data, "spec", "leaderWorkerTemplate"))
    replicas = integer(dig(data, "spec", "replicas"), 1)
    size = integer(template.get("size"), 1)
    if replicas is not None and replicas < 0:
        yield FieldError(("spec", "replicas"), INVALID, replicas, "replicas must be equal or greater than 0")
    if replicas is not None and replicas > LWS_MAX_REPLICAS:  # v0.10.0 on
        yield FieldError(("spec", "replicas"), INVALID, replicas, "replicas must be equal or less than 1000000")
    if size is not None and size < 1:
        where = ("spec", "leaderWorkerTemplate", "size")
        yield FieldError(where, INVALID, size, "size must be equal or greater than 1")
    if replicas is not None and size is not None and replicas * size > INT32_MAX:
        detail = f"the product of replicas and worker replicas must not exceed {INT32_MAX}"
        yield FieldError(("spec", "replicas"), INVALID, replicas, detail)
    rolling = dig(data, *_ROLLING)
    if isinstance(rolling, dict):
        for key in ("maxUnavailable", "maxSurge"):
            yield from _int_or_percent(rolling.get(key), (*_ROLLING, key))
        partition = integer(rolling.get("partition"))
        if partition is not None and partition < 0:
            yield FieldError((*_ROLLING, "partition"), INVALID, partition, "must be greater than or equal to 0")
    if isinstance(rolling, dict) and replicas:
        unavailable = _scaled(rolling.get("maxUnavailable", 1), replicas, False)
        surge = _scaled(rolling.get("maxSurge", 0), replicas, True)
        if unavailable == 0 and surge == 0:
            at = (*_ROLLING, "maxUnavailable")
            where = at if "maxUnavailable" in rolling else at[:-1]
            value = rolling.get("maxUnavailable", 1)
            yield FieldError(where, INVALID, value, "must not be 0 when `maxSurge` is 0", shown=at)
    if "subGroupPolicy" in template:
        yield from _lws_sub_groups(template, size)
    else:
        annotations = mapping(dig(data, "metadata", "annotations"))
        if LWS_SUBGROUP_EXCLUSIVE in annotations:  # v0.3.0 on
            at = ("metadata", "annotations", LWS_SUBGROUP_EXCLUSIVE)
            detail = "cannot have subgroup-exclusive-topology without subGroupSize set"
            yield FieldError(at, INVALID, text(annotations[LWS_SUBGROUP_EXCLUSIVE]), detail, keys=frozenset({2}))


def _int_or_percent(value: Any, at: Path) -> Iterator[FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent (a value neither int nor string is the schema's)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and value < 0:
        yield FieldError(at, INVALID, value, "must be greater than or equal to 0")
    elif isinstance(value, str) and not PERCENT.fullmatch(value):
        yield FieldError(at, INVALID, value, PERCENT_ERROR)
    elif isinstance(value, str) and (len(value[:-1].lstrip("0")) > 3 or int(value[:-1]) > 100):  # Atoi saturates
        yield FieldError(at, INVALID, value, "must not be greater than 100%")


def _lws_sub_groups(template: dict[str, Any], size: int | None) -> Iterator[FieldError]:
    """validateUpdateSubGroupPolicy."""
    policy = mapping(template.get("subGroupPolicy"))
    sub = integer(policy.get("subGroupSize"))
    if size is None or sub is None:
        return
    at = ("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
    if sub < 1:
        yield FieldError(at, INVALID, sub, "subGroupSize must be equal or greater than 1", shown=SUB_GROUP_SHOWN)
        return  # LWS would divide by it
    if size % sub and (size - 1) % sub:
        detail = "size or size - 1 must be divisible by subGroupSize"
        yield FieldError(at, INVALID, sub, detail, shown=SUB_GROUP_SHOWN)
    if size < sub:
        yield FieldError(at, INVALID, sub, "subGroupSize cannot be larger than size", shown=SUB_GROUP_SHOWN)


def _leader_excluded(data: dict[str, Any]) -> Iterator[FieldError]:
    """validateUpdateSubGroupPolicy with subGroupPolicyType LeaderExcluded (v0.6.0 on): the workers alone split."""
    template = mapping(dig(data, "spec", "leaderWorkerTemplate"))
    policy = mapping(template.get("subGroupPolicy"))
    size, sub = integer(template.get("size"), 1), integer(policy.get("subGroupSize"))
    if size is None or sub is None or sub < 1 or "subGroupPolicy" not in template:
        return
    if policy.get("subGroupPolicyType") == "LeaderExcluded" and (size - 1) % sub:
        detail = "size-1 must be divisible by subGroupSize when using LeaderExcluded"
        at = ("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
        yield FieldError(at, INVALID, sub, detail, shown=SUB_GROUP_SHOWN)


def _scaled(value: Any, total: int, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent; None when it is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and PERCENT.fullmatch(value) and len(value) <= 19:  # Atoi fails past int64
        scaled = int(value[:-1]) * total
        return -(-scaled // 100) if round_up else scaled // 100
    return None


def refusals(submitted: Submitted) -> list[Refusal]:
    """The LeaderWorkerSet webhook's own (Kueue's on the pod set groups are kueue.py's)."""
    found = [_refusal(error) for error in _leader_worker_set(submitted.data)]
    for error in _leader_excluded(submitted.data):
        found += gated(_refusal(error), LEADER_EXCLUDED, submitted.releases)
    return found


def _refusal(error: FieldError) -> Refusal:
    return Refusal(error.path, "LeaderWorkerSet", error.message(), error)
