"""device-plugin-config: the NVIDIA device plugin's configuration in a ConfigMap, and the GPU operator's reference to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.device_plugin_config import ERROR, looks_like_config, validate
from gpulint.kube.fields import mapping, text
from gpulint.kube.gpu_stack import node_names
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, split_long
from gpulint.lint.loader import load_text, text_offset
from gpulint.lint.objects import KubeObject
from gpulint.lint.resolver import Resolver
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("device-plugin-config", Severity.ERROR, kinds=frozenset({"ConfigMap", "ClusterPolicy"}))
RULE_ID = SPEC.id
MAX_EMBEDDED = 256 * 1024  # a plugin configuration is a few lines
CONFIG_LABEL = "nvidia.com/device-plugin.config"


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.kind == "ConfigMap" and obj.api_version == "v1":
        yield from _config_map(obj, ctx.resolver)
    elif obj.kind == "ClusterPolicy" and obj.ref.group == "nvidia.com":
        yield from _cluster_policy(obj, ctx.resolver)


def _referenced(obj: KubeObject, resolver: Resolver) -> bool:
    """A ConfigMap the GPU operator's ClusterPolicy names as the device plugin's configuration."""
    return any(
        text(mapping(mapping(mapping(policy.data.get("spec")).get("devicePlugin")).get("config")).get("name"))
        == obj.ref.name
        for policy in resolver.linted.of_kind("nvidia.com", "ClusterPolicy")
    )


def _config_map(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    data = obj.data.get("data")
    if not isinstance(data, dict):
        return
    referenced = _referenced(obj, resolver)
    for key, value in data.items():
        if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
            continue
        loaded = load_text(f"{obj.document.path} data.{key}", value)
        documents = [d for d in loaded.documents if d.data is not None]
        if loaded.problems or len(documents) != 1:
            if referenced and loaded.problems:
                broken = loaded.problems[0]
                yield Diagnostic(
                    RULE_ID,
                    ("data", key),
                    f"the device plugin configuration '{key}' is not valid YAML: the plugin cannot read it and exits",
                    notes=(broken.message,),
                    offset=text_offset(value, broken.line, broken.column),
                )
            continue
        document = documents[0]
        if not (looks_like_config(document.data) or (referenced and isinstance(document.data, dict))):
            continue
        for problem in validate(document.data):
            line, column = document.locate(problem.path, on_key=problem.on_key)
            brief, notes = split_long(f"device plugin configuration '{key}': {problem.message}")
            yield Diagnostic(
                RULE_ID,
                ("data", key),
                brief,
                notes=notes,
                severity=Severity.ERROR if problem.level == ERROR else Severity.WARNING,
                offset=text_offset(value, line, column),
            )


def _cluster_policy(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    config = mapping(mapping(mapping(obj.data.get("spec")).get("devicePlugin")).get("config"))
    name = config.get("name")
    if not isinstance(name, str) or not name:
        return
    base = ("spec", "devicePlugin", "config")
    keys = resolver.config_map_keys("", name)
    if keys is None:
        if resolver.catalog_complete("ConfigMap", obj.document.path):
            yield Diagnostic(
                RULE_ID,
                (*base, "name"),
                f"devicePlugin.config.name names ConfigMap {name}, which neither the linted files nor the inventory "
                "holds",
                notes=("the operator's device plugin waits for it and no node advertises GPUs",),
            )
        return
    default = config.get("default")
    if isinstance(default, str) and default and default not in keys:
        yield Diagnostic(
            RULE_ID,
            (*base, "default"),
            f"devicePlugin.config.default is '{default}', which is not a key of ConfigMap {name}: "
            "the device plugin has no configuration to start with",
            notes=(f"keys: {', '.join(sorted(keys)) or 'none'}",),
        )
    yield from _node_labels(resolver, name, keys, base)


def _node_labels(resolver: Resolver, name: str, keys: frozenset[str], base: tuple[Any, ...]) -> Iterator[Diagnostic]:
    """Nodes whose nvidia.com/device-plugin.config label names a key the ConfigMap lacks: the plugin keeps its config."""
    wrong: dict[str, list[Any]] = {}
    for node in resolver.nodes:
        value = node.labels.get(CONFIG_LABEL)
        if value and value not in keys:
            wrong.setdefault(value, []).append(node)
    for value, nodes in sorted(wrong.items()):
        yield Diagnostic(
            RULE_ID,
            (*base, "name"),
            f"{len(nodes)} node{'s carry' if len(nodes) > 1 else ' carries'} the label "
            f"{CONFIG_LABEL}={value}, but ConfigMap {name} has no key '{value}'",
            notes=(
                f"nodes: {node_names(nodes)}; keys: {', '.join(sorted(keys))}",
                "the device plugin skips reconfiguration there and keeps the default",
            ),
            severity=Severity.WARNING,
        )
