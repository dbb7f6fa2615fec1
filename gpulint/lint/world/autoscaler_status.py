"""Cluster Autoscaler's status ConfigMap (kube-system/cluster-autoscaler-status): the node groups it manages.

The autoscaler writes it every loop (``--write-status-configmap``, on by default): ``data.status`` is YAML
from release 1.30 (``nodeGroups[].name`` and ``health.minSize``, ``maxSize``, ``cloudProviderTarget``;
cluster-autoscaler/clusterstate/api/types.go) and plain text before (``Name: ...`` then ``Health: Healthy
(ready=1 ... cloudProviderTarget=1 (minSize=1, maxSize=5))``; clusterstate.go buildHealthStatusNodeGroup).

A node group it may still grow whose nodes no pool gpulint reads describes (an EKS node group or a scale
set only the cloud knows) may add a node of any shape: "no node can be added for this pod" is then unproven.
A pool gpulint reads that a group describes takes the group's max size and backoff from the status: the
autoscaler skips a group at its max size ("max node group size reached") or in backoff after a failed
scale-up ("in backoff after failed scale-up"; core/scaleup/orchestrator/orchestrator.go, 1.36.1), whose
``scaleUp.status`` is ``Backoff`` with ``backoffInfo`` (errorCode, errorMessage) from 1.30, and whose text
line reads ``ScaleUp:     Backoff (...)`` before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpulint.kube.fields import integer, mapping, sequence, text
from gpulint.kube.pools.autoscaler_taints import TaintConfig, autoscaler_taint_config
from gpulint.kube.pools.model import NodeGroupStatus, PoolSpec
from gpulint.lint.inputs.loader import load_bytes

STATUS_NAMESPACE, STATUS_NAME = "kube-system", "cluster-autoscaler-status"
MAX_STATUS_BYTES = 1024 * 1024  # a ConfigMap holds at most 1 MiB (validation: MaxSecretSize)
MAX_GROUPS = 10_000
_LEGACY = re.compile(
    r"^\s*Name:\s+(?P<name>\S+)\s*\n\s*Health:\s+\S+\s+\((?P<counts>[^\n]*?)\(minSize=(?P<min>\d+), maxSize=(?P<max>\d+)\)\)",
    re.MULTILINE,
)
_TARGET = re.compile(r"cloudProviderTarget=(\d+)")
_REGISTERED = re.compile(r"\bregistered=(\d+)")
_LEGACY_NAME = re.compile(r"^\s*Name:\s+\S+", re.MULTILINE)
_LEGACY_SCALE_UP = re.compile(r"^\s*ScaleUp:\s+(?P<status>\S+)", re.MULTILINE)
BACKOFF = "Backoff"  # the scale-up status of a group in backoff (types.go ClusterAutoscalerBackoff)
_CAPI_ID = re.compile(r"^(MachineDeployment|MachineSet|MachinePool)/[^/]+/(.+)$")
_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def autoscaler_taints(objects: Iterable[dict[str, Any]], found: TaintConfig | None = None) -> TaintConfig | None:
    """The taint flags of the Deployments among ``objects`` that run Cluster Autoscaler, merged with ``found``
    (None: none runs it)."""
    for data in objects:
        config = autoscaler_taint_config(data)
        if config is not None:
            found = config if found is None else found.merged(config)
    return found


def is_status_config_map(data: dict[str, Any]) -> bool:
    metadata = mapping(data.get("metadata"))
    return (
        data.get("kind") == "ConfigMap"
        and text(data.get("apiVersion")) == "v1"
        and (text(metadata.get("namespace")), text(metadata.get("name"))) == (STATUS_NAMESPACE, STATUS_NAME)
    )


def node_groups(objects: Iterable[dict[str, Any]]) -> list[NodeGroupStatus]:
    """The node groups of the status ConfigMaps among ``objects`` (none: no autoscaler status read)."""
    found: list[NodeGroupStatus] = []
    for data in objects:
        if is_status_config_map(data):
            found.extend(_groups(text(mapping(data.get("data")).get("status"))))
    return found


def _groups(status: str) -> list[NodeGroupStatus]:
    raw = status.encode("utf-8", "replace")
    if not raw.strip() or len(raw) > MAX_STATUS_BYTES:
        return []
    if _LEGACY.search(status):
        return [
            NodeGroupStatus(
                m["name"],
                int(m["min"]),
                int(m["max"]),
                _count(_TARGET, m["counts"]),
                _count(_REGISTERED, m["counts"]),
                _legacy_backoff(status, m),
            )
            for m in _LEGACY.finditer(status)
        ][:MAX_GROUPS]
    loaded = load_bytes(STATUS_NAME, raw, max_bytes=MAX_STATUS_BYTES)
    if loaded.problems or len(loaded.documents) != 1:
        return []
    groups = []
    for group in sequence(mapping(loaded.documents[0].data).get("nodeGroups"))[:MAX_GROUPS]:
        health = mapping(mapping(group).get("health"))
        name = text(mapping(group).get("name"))
        if name:
            groups.append(
                NodeGroupStatus(
                    name,
                    integer(health.get("minSize")),
                    integer(health.get("maxSize")),
                    integer(health.get("cloudProviderTarget")),
                    _registered(health),
                    _backoff(mapping(mapping(group).get("scaleUp"))),
                )
            )
    return groups


def _backoff(scale_up: dict[str, Any]) -> str | None:
    """The group's backoff, from ``scaleUp.status`` and ``backoffInfo`` (clusterstate.go
    buildScaleUpStatusNodeGroup): None when it is not in backoff."""
    if text(scale_up.get("status")) != BACKOFF:
        return None
    info = mapping(scale_up.get("backoffInfo"))
    code, message = text(info.get("errorCode")), text(info.get("errorMessage"))
    return ": ".join(part for part in (code, message) if part)


def _legacy_backoff(status: str, health: re.Match[str]) -> str | None:
    """The text before 1.30 gives the group's scale-up status on its own line (``ScaleUp:     Backoff (ready=1
    cloudProviderTarget=1)``, api/utils.go getConditionsString), with no error: the line before the next group."""
    following = _LEGACY_NAME.search(status, health.end())
    scale_up = _LEGACY_SCALE_UP.search(status, health.end(), following.start() if following else len(status))
    return "" if scale_up is not None and scale_up["status"] == BACKOFF else None


def _count(pattern: re.Pattern[str], counts: str) -> int | None:
    found = pattern.search(counts)
    return int(found.group(1)) if found else None


def _registered(health: dict[str, Any]) -> int | None:
    """``nodeCounts.registered.total``; the autoscaler leaves out a zero count (omitempty), so a group with
    sizes but no count has no node registered."""
    if "maxSize" not in health:
        return None
    return integer(mapping(mapping(health.get("nodeCounts")).get("registered")).get("total"), 0)


def describes(spec: PoolSpec, group: str) -> bool:
    """The pool is this node group, by the id each cloud provider of the autoscaler gives it: cluster-api's
    ``<Kind>/<namespace>/<name>`` (clusterapi_nodegroup.go Id), an Auto Scaling group's name, the group an EKS
    managed node group runs on (``eks-<nodegroup>-<uuid>``), an AKS pool's scale set (``aks-<pool>-<n>-vmss``).
    Only exact forms: a pool taken for a group it is not would hide a group that may grow."""
    capi = _CAPI_ID.match(group)
    if capi:
        return (spec.system, spec.name) == (capi.group(1), capi.group(2))
    if spec.system == "Auto Scaling group":
        return group == spec.name
    if spec.system == "EKS node group":
        return re.fullmatch(f"eks-{re.escape(spec.name)}-{_UUID}", group) is not None
    if spec.system == "AKS node pool":
        return re.fullmatch(rf"aks-{re.escape(spec.name)}-\d+-vmss", group) is not None
    return False
