"""A LimitRange item as the API server stores it: SetDefaults_LimitRangeItem (kubernetes/kubernetes v1.34.0,
pkg/apis/core/v1/defaults.go). The LimitRanger admission plugin and ValidateLimitRange both read an item
after this defaulting: it is written here once for both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

Value = TypeVar("Value")

# A LimitRangeItem's resource lists that the defaulting reads or fills (maxLimitRequestRatio is neither)
RESOURCE_LISTS = ("max", "min", "default", "defaultRequest")
# SetDefaults_LimitRangeItem's fills for a Container item, in its order: (the list filled, the list it is filled
# from). A resource the filled list already names keeps its value: a max without a default makes the default
# limit; a default limit without a defaultRequest makes the default request, else the min does.
CONTAINER_ITEM_FILLS = (("default", "max"), ("defaultRequest", "default"), ("defaultRequest", "min"))


def defaulted_item(item_type: Any, lists: Mapping[str, Mapping[str, Value]]) -> dict[str, dict[str, Value]]:
    """A LimitRange item's resource lists (list -> resource -> value, in any form: a quantity, its amount, its
    text) after SetDefaults_LimitRangeItem (kubernetes/kubernetes v1.34.0, pkg/apis/core/v1/defaults.go):
    only a Container item is defaulted. The lists given are not changed."""
    out = {name: dict(values) for name, values in lists.items()}
    if item_type != "Container":
        return out
    for filled, source in CONTAINER_ITEM_FILLS:
        into = out.setdefault(filled, {})
        for resource, value in out.get(source, {}).items():
            into.setdefault(resource, value)
    return out
