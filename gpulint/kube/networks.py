"""Multus secondary networks as Multus reads a pod's annotation (k8snetworkplumbingwg/multus-cni
pkg/k8sclient/k8sclient.go, v4.1: parsePodNetworkAnnotation, getKubernetesDelegate).

``k8s.v1.cni.cncf.io/networks`` is a comma-separated list of ``[<namespace>/]<name>[@<interface>]``, or a JSON
list of NetworkSelectionElements (``name``, ``namespace``, ``interface``); a network without a namespace is the
pod's. Each is a NetworkAttachmentDefinition looked up in that namespace; its annotation
``k8s.v1.cni.cncf.io/resourceName`` names the device-plugin resource whose allocated devices Multus hands the
CNI, one device per network that names it, in order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
GROUP = "k8s.cni.cncf.io"
KIND = "NetworkAttachmentDefinition"
MAX_ANNOTATION = 64 * 1024  # a pod joins a handful of networks
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class NetworkSelection:
    name: str
    namespace: str  # "" : the pod's


def pod_networks(annotation: str) -> list[NetworkSelection] | None:
    """The networks the annotation selects, or None when Multus would refuse to parse it (or it is too long)."""
    text = annotation.strip()
    if not text or len(text) > MAX_ANNOTATION:
        return None
    if any(char in text for char in '[{"'):
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        if not isinstance(parsed, list) or not all(isinstance(item, dict) for item in parsed):
            return None
        found = [NetworkSelection(str(item.get("name") or ""), str(item.get("namespace") or "")) for item in parsed]
        return found if all(selection.name for selection in found) else None
    selections = []
    for item in text.split(","):
        parts = item.strip().split("/")
        if len(parts) > 2:
            return None
        namespace, name = (parts[0].strip(), parts[1]) if len(parts) == 2 else ("", parts[0])
        name = name.split("@")[0].strip()
        if not _NAME.fullmatch(name) or (namespace and not _NAME.fullmatch(namespace)):
            return None
        selections.append(NetworkSelection(name, namespace))
    return selections
