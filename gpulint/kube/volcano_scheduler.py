"""Volcano's scheduler configuration (``volcano-scheduler.conf`` in its ConfigMap): the device-sharing switches.

Volcano allocates a shared GPU in its scheduler: for a pod asking ``volcano.sh/gpu-memory`` (or ``gpu-number``,
or a vGPU) a device-share predicate picks the card and writes it on the pod, and the device plugin's Allocate
reads it back (volcano-sh/devices ``pkg/plugin/nvidia/server.go``: "failed to find candidate pod", "failed to
find gpu id" without it). The predicate runs only when its switch is true in the plugin's arguments
(``framework.Arguments.GetBool``): the ``deviceshare`` plugin's ``deviceshare.<switch>`` from v1.9.0
(``pkg/scheduler/plugins/deviceshare/deviceshare.go``), the ``predicates`` plugin's ``predicate.<switch>``
before (v1.8.2 ``pkg/scheduler/plugins/predicates/predicates.go``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.embedded import load_embedded
from gpulint.kube.fields import mapping, sequence, text

CONF_KEY = "volcano-scheduler.conf"  # the ConfigMap key the scheduler's --scheduler-conf file is mounted from
# The resource a pod asks, and the switch that lets the scheduler allocate it (pkg/scheduler/api/devices:
# nvidia/gpushare/type.go VolcanoGPUResource, VolcanoGPUNumber; config/vgpu.go VolcanoVGPUNumber and its
# memory and cores).
SWITCHES = {
    "volcano.sh/gpu-memory": "GPUSharingEnable",
    "volcano.sh/gpu-number": "GPUNumberEnable",
    "volcano.sh/vgpu-number": "VGPUEnable",
    "volcano.sh/vgpu-memory": "VGPUEnable",
    "volcano.sh/vgpu-cores": "VGPUEnable",
}
# The plugin that reads a switch, and the prefix of its argument: since v1.9.0, and before.
SWITCH_PLUGINS = (("deviceshare", "deviceshare"), ("predicates", "predicate"))
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # strconv.ParseBool


def enabled_switches(conf: str) -> frozenset[str] | None:
    """The switches a scheduler configuration turns on, or None when it is not one gpulint can read."""
    data = load_embedded(conf)
    if not isinstance(data, dict) or not isinstance(data.get("tiers"), list):
        return None
    on: set[str] = set()
    for plugin in _plugins(data):
        name = text(plugin.get("name"))
        arguments = mapping(plugin.get("arguments"))
        for plugin_name, prefix in SWITCH_PLUGINS:
            if name != plugin_name:
                continue
            for switch in set(SWITCHES.values()):
                if _true(arguments.get(f"{prefix}.{switch}")):
                    on.add(switch)
    return frozenset(on)


def switch_words(switch: str) -> str:
    return f"deviceshare.{switch}: true in the deviceshare plugin (v1.9.0 on; predicate.{switch} in predicates before)"


def _plugins(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for tier in sequence(data.get("tiers")):
        for plugin in sequence(mapping(tier).get("plugins")):
            if isinstance(plugin, dict):
                yield plugin


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value in _TRUE)
