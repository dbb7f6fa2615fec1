"""The ConfigMaps a pod's variables may come from, as the linted files hold them.

A container reads a ConfigMap of its own namespace only (``configMapKeyRef``, ``configMapRef``).
When the linted files hold two copies of one name that differ (two overlays, an example folder),
which one the cluster gets is not known: the name is left out and its values stay unknown.
"""

from __future__ import annotations

from gpulint.kube.commandline import ConfigMaps
from gpulint.kube.fields import mapping
from gpulint.lint.checks import CheckContext
from gpulint.lint.linted_set import LintedSet


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
