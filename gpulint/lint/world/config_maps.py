"""The ConfigMaps a pod's variables may come from, as the linted files and the inventory hold them.

A container reads a ConfigMap of its own namespace only (``configMapKeyRef``, ``configMapRef``).
When the linted files hold two copies of one name that differ (two overlays, an example folder),
which one the cluster gets is not known: the name is left out and its values stay unknown. A name
the linted files do not hold is read from the inventory (the cluster's copy), when it kept the values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpulint.kube.commandline import ConfigMaps
from gpulint.kube.device_plugin_config import looks_like_config
from gpulint.kube.fields import mapping
from gpulint.lint.checks import CheckContext
from gpulint.lint.inputs.linted_set import LintedObject, LintedSet
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.world.chart_releases import CHART_INSTALLERS, embedded_plugin_configs
from gpulint.lint.world.resolver import Resolver

MAX_EMBEDDED = 256 * 1024  # a configuration held in a ConfigMap value is a few lines: no larger one is parsed


def namespace_config_maps(ctx: CheckContext, namespace: str) -> ConfigMaps:
    """The ConfigMaps of ``namespace`` by name, their string ``data`` (once per run and namespace): the linted
    files' copy, else the inventory's (the change under review replaces what the cluster holds)."""
    found: ConfigMaps = ctx.memo(("config-maps", namespace), lambda: _held(ctx, namespace))
    return found


def _held(ctx: CheckContext, namespace: str) -> ConfigMaps:
    return held_config_maps(ctx.resolver, namespace)


def held_config_maps(resolver: Resolver, namespace: str) -> ConfigMaps:
    """namespace_config_maps without a run's memo (`explain`, one object at a time)."""
    found = {**resolver.inventory_config_maps(namespace), **_config_maps(resolver.linted, namespace)}
    return {name: data for name, data in found.items() if data is not None}


def _config_maps(linted: LintedSet, namespace: str) -> dict[str, dict[str, str] | None]:
    """The linted copies by name; None for a name whose copies differ (it shadows the inventory's: unknown)."""
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
    return {name: found[0] if all(each == found[0] for each in found) else None for name, found in copies.items()}


def device_plugin_configs(linted: LintedSet) -> list[Any]:
    """The NVIDIA device plugin configurations the linted ConfigMaps hold, parsed (once per linted set):
    a value that is one YAML document shaped as the plugin's config file."""
    found: list[Any] = linted.fact("device plugin configs", _device_plugin_configs, linted)
    return found


def _device_plugin_configs(linted: LintedSet) -> list[Any]:
    configs = [
        config for _, entries in plugin_config_entries(linted) for config in entries.values() if config is not None
    ]
    for kind in CHART_INSTALLERS:  # a GPU stack chart's values the chart makes a ConfigMap of
        for obj in linted.of_kind(*kind):
            configs += _parsed(obj.file, [config.text for config in embedded_plugin_configs(obj.data)])
    return configs


def plugin_config_entries(linted: LintedSet) -> tuple[tuple[LintedObject, dict[Any, Any]], ...]:
    """Each linted ConfigMap with its ``data`` entries parsed (once per linted set): the device plugin configuration
    an entry holds, or None where it holds none gpulint reads (not one YAML document shaped as the plugin's config
    file, or larger than MAX_EMBEDDED)."""
    found: tuple[tuple[LintedObject, dict[Any, Any]], ...] = linted.fact(
        "device plugin config entries", _config_entries, linted
    )
    return found


def _config_entries(linted: LintedSet) -> tuple[tuple[LintedObject, dict[Any, Any]], ...]:
    return tuple(
        (obj, {key: _config_of(obj.file, value) for key, value in mapping(obj.data.get("data")).items()})
        for obj in linted.of_kind("", "ConfigMap")
    )


def _config_of(file: str, value: Any) -> Any:
    if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
        return None
    documents = [d.data for d in load_text(file, value).documents if d.data is not None]
    return documents[0] if len(documents) == 1 and looks_like_config(documents[0]) else None


def _parsed(file: str, values: Iterable[Any]) -> list[Any]:
    return [config for config in (_config_of(file, value) for value in values) if config is not None]
