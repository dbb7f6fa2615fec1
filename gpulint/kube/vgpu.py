"""vGPU resources that give a container at most one unit of each physical GPU: HAMi and Volcano's vGPU plugin.

HAMi (Project-HAMi/HAMi v2.10.0): its device plugin registers a node's GPUs in the node annotation
``hami.io/node-nvidia-register`` (pkg/device/nvidia/device.go RegisterAnnos; pkg/device/devices.go
EncodeNodeDevices: ``id,count,devmem,devcore,type,numa,health[,index,mode]`` per device with ``:`` after
each, or MarshalNodeDevices' JSON list) and advertises ``nvidia.com/gpu`` as the devices times their split
count. Its scheduler takes a container's ``nvidia.com/gpu`` as the number of distinct devices it needs and
rejects a node with fewer devices of the type (pkg/scheduler/score.go: ``NodeInsufficientDevice``).

Volcano's vGPU plugin (volcano-sh/volcano pkg/scheduler/api/devices/nvidia/vgpu/utils.go
checkNodeGPUSharingPredicate, with Project-HAMi/volcano-vgpu-device-plugin): ``volcano.sh/vgpu-number``
likewise; "no enough gpu cards on node %s" when a container asks for more than the node's cards, which the
plugin registers in ``volcano.sh/node-vgpu-register`` (GPU feature discovery's ``nvidia.com/gpu.count``
counts the same cards).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import decimal, dig, mapping

HAMI_REGISTER = "hami.io/node-nvidia-register"
VOLCANO_REGISTER = "volcano.sh/node-vgpu-register"
GFD_COUNT = "nvidia.com/gpu.count"
HAMI_GPU = "nvidia.com/gpu"  # HAMi's default resourceName (charts/hami/values.yaml)
VOLCANO_VGPU = "volcano.sh/vgpu-number"


@dataclass(frozen=True)
class DeviceBound:
    """The most units of a vGPU resource one container can get on a node: one per physical GPU."""

    devices: int
    scheduler: str  # "HAMi" or "Volcano"

    def refusal(self, node: str, amount: int) -> str:
        """The scheduler's words for a node with too few devices."""
        if self.scheduler == "HAMi":
            return (
                f"HAMi's scheduler: NodeInsufficientDevice on {node} "
                f"(request devices nums {amount}, node device nums {self.devices})"
            )
        return f"Volcano: no enough gpu cards on node {node} ({self.devices})"


def registered_devices(annotation: object) -> int | None:
    """The devices a registration annotation lists (None: not one that reads)."""
    if not isinstance(annotation, str) or not annotation.strip():
        return None
    text = annotation.strip()
    if text.startswith("["):
        try:
            listed = json.loads(text)
        except ValueError:
            return None
        return len(listed) if isinstance(listed, list) else None
    entries = [entry for entry in text.split(":") if entry.strip()]
    return len(entries) if entries and all(entry.count(",") >= 4 for entry in entries) else None


def device_bound(node: dict[str, Any], labels: dict[str, str], resource: str) -> DeviceBound | None:
    """The per-container bound ``resource`` has on this node (None: not a per-device vGPU here, or not known)."""
    annotations = mapping(dig(node, "metadata", "annotations"))
    if resource == HAMI_GPU:
        devices = registered_devices(annotations.get(HAMI_REGISTER))
        return DeviceBound(devices, "HAMi") if devices else None
    if resource == VOLCANO_VGPU:
        devices = registered_devices(annotations.get(VOLCANO_REGISTER))
        if devices is None:
            devices = decimal(labels.get(GFD_COUNT, ""))
        return DeviceBound(devices, "Volcano") if devices else None
    return None
