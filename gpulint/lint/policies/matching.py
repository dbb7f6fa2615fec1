"""Which objects a policy applies to: kinds, resources, namespaces and label selectors, as the API server matches them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulint.kube.fields import mapping
from gpulint.kube.selectors import selector_matches
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.policies.model import Match

if TYPE_CHECKING:
    pass

# --------------------------------------------------------------------------- matching

_IRREGULAR_PLURALS = {
    "Endpoints": "endpoints",
    "Ingress": "ingresses",
    "NetworkPolicy": "networkpolicies",
    "PodSecurityPolicy": "podsecuritypolicies",
    "StorageClass": "storageclasses",
    "PriorityClass": "priorityclasses",
    "DeviceClass": "deviceclasses",
    "RuntimeClass": "runtimeclasses",
    "IngressClass": "ingressclasses",
}


def resource_name(kind: str) -> str:
    if kind in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[kind]
    lower = kind.lower()
    if lower.endswith("y") and not lower.endswith(("ay", "ey", "oy")):
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def _matches_resources(match: Match, obj: KubeObject) -> bool:
    if not match.resources:
        return True
    group, version = obj.ref.group, obj.ref.version
    plural = resource_name(obj.kind)
    return any(
        (("*" in groups) or group in groups)
        and (("*" in versions) or version in versions)
        and (("*" in resources) or plural in resources)
        for groups, versions, resources in match.resources
    )


def policy_applies(match: Match, obj: KubeObject, namespaces: dict[str, dict[str, Any]]) -> bool | None:
    """True/False, or None when it depends on something no file holds (a namespace's labels)."""
    if match.kinds and "*" not in match.kinds:
        group = obj.ref.group
        if obj.kind not in match.kinds and f"{group}/{obj.kind}" not in match.kinds:
            return False
    if match.namespaces and obj.ref.namespace not in match.namespaces:
        return False
    if not _matches_resources(match, obj):
        return False
    labels = labels_of(obj.data)
    if match.label_selector is not None and not selector_matches(match.label_selector, labels):
        return False
    if match.namespace_selector and (
        match.namespace_selector.get("matchLabels") or match.namespace_selector.get("matchExpressions")
    ):
        namespace = namespaces.get(obj.ref.namespace)
        if namespace is None:
            return None
        if not selector_matches(match.namespace_selector, labels_of(namespace)):
            return False
    return True


def labels_of(data: dict[str, Any]) -> dict[str, Any]:
    return mapping(mapping(data.get("metadata")).get("labels"))
