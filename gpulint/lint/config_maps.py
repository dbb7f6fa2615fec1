"""The ConfigMaps a pod's variables may come from, as the linted files hold them.

A container reads a ConfigMap of its own namespace only (``configMapKeyRef``, ``configMapRef``).
When the linted files hold two copies of one name that differ (two overlays, an example folder),
which one the cluster gets is not known: the name is left out and its values stay unknown.
"""

from __future__ import annotations

from typing import Any

from gpulint.kube.commandline import ConfigMaps
from gpulint.kube.device_plugin_config import looks_like_config
from gpulint.kube.fields import mapping
from gpulint.kube.workloads import remembered_part
from gpulint.lint.checks import CheckContext
from gpulint.lint.linted_set import LintedSet
from gpulint.lint.loader import load_text

MAX_EMBEDDED = 256 * 1024  # a configuration held in a ConfigMap value is a few lines: no larger one is parsed


def namespace_config_maps(ctx: CheckContext, namespace: str) -> ConfigMaps:
    """The linted ConfigMaps of ``namespace`` by name, their string ``data`` (once per run and namespace)."""
    found: ConfigMaps = ctx.memo(("config-maps", namespace), lambda: _config_maps(ctx.resolver.linted, namespace))
    return found


def _config_maps(linted: LintedSet, namespace: str) -> ConfigMaps:
    copies: dict[str, list[dict[str, str]]] = {}
    for obj in linted.of_kind("", "ConfigMap"):
        if obj.ref.namespace != namespace:
            continue
        data = {
            key: value
            for key, value in mapping(obj.data.get("data")).items()
            if isinstance(key, str) and isinstance(value, str)
        }
        copies.setdefault(obj.ref.name, []).append(data)
    return {name: found[0] for name, found in copies.items() if all(each == found[0] for each in found)}


def device_plugin_configs(linted: LintedSet) -> list[Any]:
    """The NVIDIA device plugin configurations the linted ConfigMaps hold, parsed (once per linted set):
    a value that is one YAML document shaped as the plugin's config file."""
    found: list[Any] = remembered_part(linted, "device plugin configs", _device_plugin_configs, linted)
    return found


def _device_plugin_configs(linted: LintedSet) -> list[Any]:
    configs = []
    for obj in linted.of_kind("", "ConfigMap"):
        for value in mapping(obj.data.get("data")).values():
            if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
                continue
            documents = [d.data for d in load_text(obj.file, value).documents if d.data is not None]
            if len(documents) == 1 and looks_like_config(documents[0]):
                configs.append(documents[0])
    return configs
