"""Resources the GPU operator's device plugin advertises only on nodes labelled with a configuration of its
ConfigMap: the ClusterPolicy names that ConfigMap and no default, so a node without the
nvidia.com/device-plugin.config label runs the plugin with an empty configuration (NVIDIA/gpu-operator
controllers/object_controls.go: DEFAULT_CONFIG from devicePlugin.config.default, FALLBACK_STRATEGIES empty;
NVIDIA/k8s-device-plugin cmd/config-manager/main.go). Built here from the linted configurations;
device-plugin-config words it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.device_plugin_config import advertised
from gpulint.kube.fields import dig, mapping, text
from gpulint.kube.refs import Path
from gpulint.kube.runtime import main_containers
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.world.chart_releases import cluster_policies
from gpulint.lint.world.config_maps import plugin_config_entries

CONFIG_LABEL = "nvidia.com/device-plugin.config"


@dataclass(frozen=True)
class NoDefault:
    """The one linted ClusterPolicy names its device plugin's ConfigMap and no ``default`` entry: a node without
    the nvidia.com/device-plugin.config label runs the plugin with an empty configuration (the operator sets
    FALLBACK_STRATEGIES=empty), and advertises only what that does."""

    policy: str
    config_map: str
    labelled: dict[str, tuple[str, ...]]  # a renamed resource -> the entries (label values) that advertise it


def no_default(linted: LintedSet) -> NoDefault | None:
    """NoDefault, when every entry of the named ConfigMap is a configuration gpulint reads and some renames a
    resource (once per linted set)."""
    found: NoDefault | None = linted.fact("device plugin configs without default", _no_default, linted)
    return found


def _no_default(linted: LintedSet) -> NoDefault | None:
    policies = cluster_policies(linted)
    if len(policies) != 1:
        return None
    config = mapping(dig(policies[0].data, "spec", "devicePlugin", "config"))
    name = text(config.get("name"))
    if not name or text(config.get("default")) or dig(policies[0].data, "spec", "devicePlugin", "enabled") is False:
        return None
    copies = [entries for obj, entries in plugin_config_entries(linted) if obj.ref.name == name]
    labelled: dict[str, list[str]] = {}
    for key, parsed in copies[0].items() if len(copies) == 1 else ():
        if parsed is None:
            return None  # an entry gpulint cannot read may advertise anything
        for resource, shared in advertised(parsed).items():
            if shared != resource:  # renamed: the empty configuration advertises the resource itself
                labelled.setdefault(shared, []).append(str(key))
    if not labelled:
        return None
    return NoDefault(policies[0].name, name, {k: tuple(v) for k, v in labelled.items()})


@dataclass(frozen=True)
class LabelledOnly:
    """A container's limit on a resource the plugin advertises only under the label values ``entries``."""

    path: Path  # the limit
    resource: str
    entries: tuple[str, ...]
    config: NoDefault


def labelled_only(obj: KubeObject, linted: LintedSet) -> tuple[LabelledOnly, ...]:
    """The limits of ``obj``'s containers on a resource only labelled nodes advertise, when no linted object
    writes the nvidia.com/device-plugin.config label (a node pool's labels, a NodeFeatureRule, a node itself:
    then nodes may carry it, and what they advertise is theirs)."""
    found = no_default(linted)
    if found is None or obj.kind in ("ClusterPolicy", "ConfigMap"):
        return ()
    if linted.fact("device plugin config label written", _labels_nodes, linted):
        return ()
    return tuple(
        LabelledOnly((*site.path, *path, "resources", "limits", resource), str(resource), entries, found)
        for site in obj.facts.sites()
        for path, container in main_containers(site.spec)
        for resource in mapping(mapping(container.get("resources")).get("limits"))
        if (entries := found.labelled.get(str(resource))) is not None
    )


def _labels_nodes(linted: LintedSet) -> bool:
    return any(_holds_text(obj.data, CONFIG_LABEL) for obj in linted if obj.kind not in ("ClusterPolicy", "ConfigMap"))


def _holds_text(value: Any, word: str, depth: int = 0) -> bool:
    """Some key or string anywhere in ``value`` contains ``word``."""
    if depth > 64:
        return True  # deeper than any manifest: taken as saying it
    if isinstance(value, str):
        return word in value
    if isinstance(value, dict):
        return any(_holds_text(k, word, depth + 1) or _holds_text(v, word, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_text(v, word, depth + 1) for v in value)
    return False
