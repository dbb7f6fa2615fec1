"""Helm's merge of values: one place for the release readers and the chart renderer."""

from __future__ import annotations

from typing import Any


def coalesced(defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` merged over ``defaults`` as helm merges values (pkg/chart/v2/util/coalesce.go, helm v3/v4):
    mappings merged key by key, anything else replaced, a null deleting the key."""
    merged = dict(defaults)
    for key, value in given.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = coalesced(merged[key], value)
        else:
            merged[key] = value
    return merged
