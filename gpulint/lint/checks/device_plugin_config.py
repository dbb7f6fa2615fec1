"""device-plugin-config: the NVIDIA device plugin's configuration in a ConfigMap, and the GPU operator's reference to it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpulint.kube import fields
from gpulint.kube.commandline import go_flag, written_words
from gpulint.kube.device_plugin_config import (
    ERROR,
    SHARED_SUFFIX,
    advertised,
    looks_like_config,
    sharing_settings,
    validate,
)
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gpu_stack import NVIDIA_DEVICE_PLUGIN, container_component, image_repository, node_names
from gpulint.kube.mig_profiles import base_profile, profiles_of
from gpulint.kube.refs import Path
from gpulint.kube.runtime import env_value, main_containers
from gpulint.kube.scheduler import NodeInfo
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, split_long
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.loader import load_text, text_offset
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.label_nodes import nodes_labelled
from gpulint.lint.verdicts.plugin_labels import CONFIG_LABEL, labelled_only, no_default
from gpulint.lint.world.chart_releases import (
    CHART_INSTALLERS,
    PolicyView,
    cluster_policies,
    embedded_plugin_configs,
)
from gpulint.lint.world.config_maps import (
    MAX_EMBEDDED,
    device_plugin_configs,
    held_config_maps,
    namespace_config_maps,
    plugin_config_entries,
)
from gpulint.lint.world.kinds import only_elsewhere, unproven
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("device-plugin-config", Severity.ERROR)
RULE_ID = SPEC.id
# The GPU operator's own image (NVIDIA/gpu-operator deployments/gpu-operator: nvcr.io/nvidia/gpu-operator); its
# operands run in the namespace it runs in (assets/state-*/: namespace "FILLED BY THE OPERATOR").
OPERATOR_IMAGE = "gpu-operator"


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.kind == "ConfigMap" and obj.api_version == "v1":
        yield from _config_map(obj, ctx.resolver)
    elif obj.kind == "ClusterPolicy" and obj.ref.group == "nvidia.com":
        yield from _cluster_policy(obj, ctx.resolver)
        yield from _single_strategy_profiles(obj, ctx.resolver)
        yield from _profiles_the_gpus_lack(obj, ctx.resolver)
    else:
        if (obj.ref.group, obj.kind) in CHART_INSTALLERS:
            yield from _release_configs(obj)
        yield from _config_through_env(obj, ctx)
        yield from _mps_without_root(obj, ctx)
        yield from _unshared_product(obj, ctx)
        configured = ctx.resolver.linted.has_any(
            (("", "ConfigMap"), ("nvidia.com", "ClusterPolicy"), *CHART_INSTALLERS)
        )
        if not ctx.resolver.has_nodes and configured:
            yield from _renamed_requests(obj, ctx)
        if configured:
            yield from _labelled_only(obj, ctx)


def _config_through_env(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """An NVIDIA device plugin container given a ConfigMap that holds its configuration through envFrom: each key
    becomes an environment variable, and the plugin reads its configuration only from the file --config-file
    (CONFIG_FILE) names (NVIDIA/k8s-device-plugin cmd/nvidia-device-plugin/main.go), so it runs with its defaults."""
    for site in obj.facts.sites():
        for path, container in main_containers(site.spec):
            if container_component(container) is not NVIDIA_DEVICE_PLUGIN:
                continue
            for index, source in enumerate(sequence(container.get("envFrom"))):
                name = text(mapping(mapping(source).get("configMapRef")).get("name"))
                key = _config_key(namespace_config_maps(ctx, obj.ref.namespace).get(name)) if name else None
                if key is None:
                    continue
                yield Diagnostic(
                    RULE_ID,
                    (*site.path, *path, "envFrom", index, "configMapRef", "name"),
                    f"envFrom turns ConfigMap {name}'s key '{key}', a device plugin configuration, into an "
                    "environment variable: the NVIDIA device plugin reads its configuration only from the file "
                    "--config-file (CONFIG_FILE) names, and runs with its defaults",
                    notes=(
                        f"mount ConfigMap {name} as a volume and set CONFIG_FILE to the path of its key '{key}' "
                        "(the Helm chart's config.map and the GPU operator's devicePlugin.config do this)",
                    ),
                    severity=Severity.WARNING,
                )


def _mps_without_root(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """An NVIDIA device plugin container whose configuration file (a mounted ConfigMap key) shares GPUs with MPS,
    with no MPS root: validateFlags (cmd/nvidia-device-plugin/main.go) refuses to start, 'using MPS requires
    --mps-root to be specified'. The Helm chart sets MPS_ROOT and runs the MPS control daemon; a DaemonSet
    written from the static manifest does neither."""
    for site in obj.facts.sites():
        for path, container in main_containers(site.spec):
            if container_component(container) is not NVIDIA_DEVICE_PLUGIN or _flag_set(container, "mps-root"):
                continue
            found = _mounted_config(container, site.spec, namespace_config_maps(ctx, obj.ref.namespace))
            if found is None:
                continue
            config_map, key, config = found
            if sharing_settings(config)[0] != "mps" or text(_flag(config, "mpsRoot")):
                continue
            yield Diagnostic(
                RULE_ID,
                (*site.path, *path, "name"),
                f"the NVIDIA device plugin refuses to start: its configuration '{key}' (ConfigMap {config_map}) "
                "shares GPUs with MPS, and no MPS root is set (--mps-root, MPS_ROOT): 'using MPS requires "
                "--mps-root to be specified'",
                notes=(
                    "set MPS_ROOT (the Helm chart uses /run/nvidia/mps), mount that host directory and its shm, and "
                    "run the plugin's MPS control daemon beside it, as the chart's daemonset-mps-control-daemon does",
                ),
            )


PRODUCT_LABEL = "nvidia.com/gpu.product"


def _unshared_product(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A pod that selects nvidia.com/gpu.product by a name without -SHARED, where the linted ClusterPolicy's default
    device plugin configuration shares nvidia.com/gpu (time-slicing or MPS) without renaming it: GPU feature
    discovery then labels every node it applies to <product>-SHARED (internal/lm/resource.go getProductName), so
    the selector matches none. Nodes labelled with a configuration of their own (nvidia.com/device-plugin.config)
    may use another: then nothing is said."""
    shared = ctx.resolver.linted.fact("shared product default", _shared_default, ctx.resolver.linted)
    if shared is None or any(CONFIG_LABEL in node.labels for node in ctx.resolver.nodes):
        return
    for site in obj.facts.sites():
        value = mapping(site.spec.get("nodeSelector")).get(PRODUCT_LABEL)
        if isinstance(value, str):
            yield from _unshared(value, (*site.path, "nodeSelector", PRODUCT_LABEL), shared)
        terms = dig(
            site.spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"
        )
        for t, term in enumerate(sequence(terms)):
            for e, expression in enumerate(sequence(mapping(term).get("matchExpressions"))):
                expression = mapping(expression)
                values = [text(v) for v in sequence(expression.get("values"))]
                if expression.get("key") == PRODUCT_LABEL and expression.get("operator") == "In" and values:
                    at = (
                        *site.path,
                        *("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
                        *("nodeSelectorTerms", t, "matchExpressions", e),
                    )
                    yield from _unshared(", ".join(values), at, shared)


def _unshared(value: str, at: Path, shared: tuple[str, str]) -> Iterator[Diagnostic]:
    if any(v.strip().endswith("-SHARED") for v in value.split(",")):
        return
    config_map, key = shared
    yield Diagnostic(
        RULE_ID,
        at,
        f"selects {PRODUCT_LABEL} {value}, but the ClusterPolicy's default device plugin configuration "
        f"('{key}' of ConfigMap {config_map}) shares nvidia.com/gpu without renaming it: GPU feature discovery "
        f"labels those nodes {value.split(',')[0].strip()}-SHARED, and this selector matches none of them",
        notes=(
            "a shared GPU that keeps the name nvidia.com/gpu has its product label suffixed -SHARED (renameByDefault: "
            "true keeps the product label as it was and advertises nvidia.com/gpu.shared)",
            "select the -SHARED value as well, or another label such as nvidia.com/gpu.family",
        ),
        severity=Severity.WARNING,
    )


def _shared_default(linted: LintedSet) -> tuple[str, str] | None:
    """(ConfigMap, key) of the one linted ClusterPolicy's default device plugin configuration, when GFD runs and
    that configuration, linted, shares nvidia.com/gpu under its own name."""
    policies = cluster_policies(linted)
    if len(policies) != 1:
        return None
    spec = mapping(policies[0].data.get("spec"))
    name, key = text(dig(spec, "devicePlugin", "config", "name")), text(dig(spec, "devicePlugin", "config", "default"))
    if not name or not key or dig(spec, "gfd", "enabled") is False:
        return None
    copies = [entries for obj, entries in plugin_config_entries(linted) if obj.ref.name == name]
    config = copies[0].get(key) if len(copies) == 1 else None
    if config is None:
        return None
    strategy, _ = sharing_settings(config)
    section = _key(_key(config, "sharing"), "mps" if strategy == "mps" else "timeSlicing")
    renamed = any(mapping(r).get("name") == "nvidia.com/gpu" and "rename" in mapping(r) for r in _resources(section))
    if advertised(config).get("nvidia.com/gpu") != "nvidia.com/gpu" or renamed:
        return None
    return name, key


def _resources(section: Any) -> list[Any]:
    return list(sequence(mapping(section).get("resources")))


def _key(data: Any, name: str) -> Any:
    """A key of the plugin's configuration, matched as sigs.k8s.io/yaml matches it (case-insensitively)."""
    return next((v for k, v in mapping(data).items() if str(k).lower() == name.lower()), None)


def _flag(config: Any, name: str) -> Any:
    return _key(_key(config, "flags"), name)


def _env(container: Mapping[str, Any], name: str) -> str:
    """The value the container's ``env`` gives ``name`` (its last entry, as the kubelet keeps)."""
    found = env_value(container, name)
    return text(found[1].get("value")) if found else ""


def _flag_set(container: Mapping[str, Any], flag: str) -> bool:
    """The plugin's command-line flag, or its environment variable (urfave/cli: --mps-root or MPS_ROOT), given."""
    if _env(container, flag.upper().replace("-", "_")):
        return True
    return go_flag(_words(container), flag) is not None


def _config_file(container: Mapping[str, Any]) -> str:
    """The path --config-file (CONFIG_FILE) names."""
    given = go_flag(_words(container), "config-file")
    return given if given is not None else _env(container, "CONFIG_FILE")


def _words(container: Mapping[str, Any]) -> list[str]:
    return [text(w) for w in written_words(container) or []]


def _mounted_config(
    container: Mapping[str, Any], spec: Mapping[str, Any], held: Mapping[str, Mapping[str, str]]
) -> tuple[str, str, Any] | None:
    """(ConfigMap, key, parsed configuration) of the file the plugin reads, when a ConfigMap volume mounted in the
    container holds it; None when it is not known to come from one."""
    path = _config_file(container)
    if not path:
        return None
    volumes = {text(mapping(v).get("name")): mapping(v) for v in sequence(spec.get("volumes"))}
    for mount in sequence(container.get("volumeMounts")):
        directory = text(mapping(mount).get("mountPath")).rstrip("/")
        if not directory or not path.startswith(directory + "/") or mapping(mount).get("subPath"):
            continue
        source = mapping(volumes.get(text(mapping(mount).get("name")), {}).get("configMap"))
        name = text(source.get("name"))
        relative = path[len(directory) + 1 :]
        items = {text(mapping(i).get("path")): text(mapping(i).get("key")) for i in sequence(source.get("items"))}
        key = items.get(relative, "" if items else relative)
        data = held.get(name)
        value = data.get(key) if data else None
        if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
            return None
        documents = [d.data for d in load_text(f"ConfigMap {name} data.{key}", value).documents if d.data is not None]
        return (name, key, documents[0]) if len(documents) == 1 and looks_like_config(documents[0]) else None
    return None


def _config_key(data: Mapping[str, str] | None) -> str | None:
    """The first key of a ConfigMap's data whose value is one YAML document shaped as the plugin's configuration."""
    for key, value in (data or {}).items():
        if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
            continue
        loaded = load_text(f"data.{key}", value)
        documents = [d.data for d in loaded.documents if d.data is not None]
        if not loaded.problems and len(documents) == 1 and looks_like_config(documents[0]):
            return str(key)
    return None


def _renamed_requests(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A pod that asks for a shared resource by the name the linted device plugin configurations do not
    advertise: ``nvidia.com/gpu`` when every one of them renames it (renameByDefault), ``nvidia.com/gpu.shared``
    when none does. Without nodes only (their resources are what is advertised)."""
    names = ctx.resolver.linted.fact("device plugin names", _advertised_names, ctx.resolver.linted)
    single = ctx.resolver.linted.fact("single MIG strategy", _single_mig_strategy, ctx.resolver.linted)
    if not names and not single:
        return
    if no_default(ctx.resolver.linted):
        names = {name: {*under, name} for name, under in names.items()}  # unlabelled nodes: the empty one
    for site in obj.facts.sites():
        for path, container in main_containers(site.spec):
            limits = mapping(mapping(container.get("resources")).get("limits"))
            for resource in limits:
                at = (*site.path, *path, "resources", "limits", resource)
                found = _renamed(str(resource), names)
                if found is not None:
                    yield Diagnostic(
                        RULE_ID,
                        at,
                        found,
                        on_key=True,
                        severity=Severity.WARNING,
                        notes=(
                            "the time-slicing or MPS configuration in the linted ConfigMaps (or the device plugin's "
                            "config.map in a chart's release values) decides the name (renameByDefault: true "
                            "advertises <resource>.shared); no node advertises the other",
                        ),
                    )
                elif single and str(resource).startswith(MIG_PREFIX):
                    yield _single_strategy_hides(at, str(resource), single)


def _single_strategy_hides(at: Path, resource: str, policy: PolicyView) -> Diagnostic:
    """A MIG profile resource where the ClusterPolicy's single strategy advertises slices as nvidia.com/gpu."""
    owner = "the gpu-operator chart's ClusterPolicy" if policy.release else "the linted ClusterPolicy"
    made = (
        f"{policy.release} installs the chart, whose ClusterPolicy takes mig.strategy from its values: single "
        "unless they set it"
    )
    return Diagnostic(
        RULE_ID,
        at,
        f"asks for {resource}, but {owner} sets mig.strategy: single, which advertises MIG slices as "
        "nvidia.com/gpu: no node it manages has this resource",
        on_key=True,
        severity=Severity.WARNING,
        notes=(
            *((made,) if policy.release else ()),
            "nvidia.com/mig-<profile> resources exist only with mig.strategy: mixed",
        ),
    )


def _renamed(resource: str, names: dict[str, set[str]]) -> str | None:
    """Why no node with the linted configurations advertises ``resource``; None when some does."""
    if resource in names and names[resource] == {resource + SHARED_SUFFIX}:
        return (
            f"asks for {resource}, but every linted device plugin configuration shares it as "
            f"{resource}{SHARED_SUFFIX} (renameByDefault: true): ask for {resource}{SHARED_SUFFIX}"
        )
    base = resource.removesuffix(SHARED_SUFFIX)
    if base != resource and base in names and resource not in names[base]:
        return (
            f"asks for {resource}, but no linted device plugin configuration renames {base} "
            f"(renameByDefault is not true): the shared resource is advertised as {base}"
        )
    return None


def _labelled_only(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A pod that asks for a resource the ClusterPolicy's device plugin configurations advertise only under a
    nvidia.com/device-plugin.config label no linted object gives a node (verdicts/plugin_labels). Without nodes,
    info: the GPU operator's documented way to give a node its configuration is `kubectl label node`, which no
    file shows. With the inventory's nodes (verdicts/label_nodes): a warning when none carries such an entry,
    nothing when one does or when a pool the inventory does not show whole may add one."""
    for found in labelled_only(obj, ctx.resolver.linted):
        config = found.config
        every = ", ".join(sorted(set(e for v in config.labelled.values() for e in v)))
        values = " or ".join(found.entries)
        labelled = nodes_labelled(ctx.resolver, CONFIG_LABEL, found.entries) if ctx.resolver.has_nodes else None
        if ctx.resolver.has_nodes and labelled != ():
            continue  # nodes carry it, or nodes a pool adds or the inventory does not list may
        yield Diagnostic(
            RULE_ID,
            found.path,
            (
                f"asks for {found.resource}, which no node of the inventory advertises: only nodes labelled "
                f"{CONFIG_LABEL}={values} do"
                if labelled == ()
                else f"asks for {found.resource}, which the device plugin advertises only on nodes labelled "
                f"{CONFIG_LABEL}={values}"
            )
            + f": ClusterPolicy {config.policy}'s devicePlugin.config names ConfigMap {config.config_map} and no "
            "default, so every other node runs the plugin with an empty configuration and advertises nvidia.com/gpu",
            on_key=True,
            severity=Severity.INFO if labelled is None else Severity.WARNING,
            notes=(
                "the GPU operator sets FALLBACK_STRATEGIES=empty: a node without the label and no "
                "devicePlugin.config.default shares nothing",
                f"set devicePlugin.config.default to one of {every}, or label the nodes "
                + (
                    f"{CONFIG_LABEL}=<entry> (nodes labelled with kubectl, not in the files, do advertise "
                    "it: an inventory of the nodes would tell)"
                    if labelled is None
                    else f"that should share their GPUs: kubectl label node <node> {CONFIG_LABEL}=<entry>"
                ),
            ),
        )


MIG_PREFIX = "nvidia.com/mig-"


def _single_mig_strategy(linted: LintedSet) -> PolicyView | None:
    """The one linted ClusterPolicy (or the one a gpu-operator chart's release makes) when it sets mig.strategy
    single and no linted plugin configuration sets another."""
    policies = cluster_policies(linted)
    if len(policies) != 1 or dig(policies[0].data, "spec", "mig", "strategy") != "single":
        return None
    for obj in linted.of_kind("", "ConfigMap"):
        data = obj.data.get("data")
        for value in data.values() if isinstance(data, dict) else ():
            if isinstance(value, str) and "migstrategy" in value.lower() and "single" not in value.lower():
                return None  # a plugin configuration of the policy's may set its own
    for kind in CHART_INSTALLERS:
        for obj in linted.of_kind(*kind):
            for config in embedded_plugin_configs(obj.data):
                if "migstrategy" in config.text.lower() and "single" not in config.text.lower():
                    return None
    return policies[0]


def _advertised_names(linted: LintedSet) -> dict[str, set[str]]:
    """Resource -> the names the linted plugin configurations advertise it under (itself where a configuration
    does not share it)."""
    configs = [advertised(config) for config in device_plugin_configs(linted)]
    shared = {name for config in configs for name in config}
    return {name: {config.get(name, name) for config in configs} for name in shared}


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


def _release_configs(obj: KubeObject) -> Iterator[Diagnostic]:
    """The device plugin configurations a GPU stack chart's release values hold, checked as the ConfigMap the
    chart makes of them is, at the values' own lines; one in a values file the release names, at that name (the
    file is linted as values, where nothing is an object); none inside an Argo helm.values string (no position
    kept)."""
    for config in embedded_plugin_configs(obj.data):
        if not (config.placed or config.values_file) or len(config.text) > MAX_EMBEDDED:
            continue
        documents = [d for d in load_text(obj.document.path, config.text).documents if d.data is not None]
        if len(documents) != 1 or not looks_like_config(documents[0].data):
            continue
        where = f" (in {config.values_file})" if config.values_file else ""
        for problem in validate(documents[0].data):
            line, column = documents[0].locate(problem.path, on_key=problem.on_key)
            brief, notes = split_long(f"device plugin configuration '{config.name}'{where}: {problem.message}")
            yield Diagnostic(
                RULE_ID,
                config.path,
                brief,
                notes=notes,
                severity=Severity.ERROR if problem.level == ERROR else Severity.WARNING,
                offset=text_offset(config.text, line, column) if config.placed else None,
            )


def _cluster_policy(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    config = mapping(mapping(mapping(obj.data.get("spec")).get("devicePlugin")).get("config"))
    name = config.get("name")
    if not isinstance(name, str) or not name:
        return
    base = ("spec", "devicePlugin", "config")
    namespace = operator_namespace(resolver)  # one ClusterPolicy per cluster: worked out once
    keys = resolver.config_map_keys(namespace, name)
    elsewhere = resolver.namespaces_of("", "ConfigMap", name) if keys is None and namespace else []
    if elsewhere:
        # the operator makes its operands in its own namespace; their config volume reads the ConfigMap there
        complete = resolver.catalog_complete("ConfigMap", obj.document.path)
        head = only_elsewhere(
            f"devicePlugin.config.name names ConfigMap {name}, which", elsewhere, namespace, "the GPU operator's"
        )
        yield Diagnostic(
            RULE_ID,
            (*base, "name"),
            head,
            notes=(
                f"the operator runs the device plugin in {namespace} and mounts the ConfigMap there: create it "
                f"with `kubectl create -n {namespace}`",
                "the device plugin waits for it and no node advertises GPUs" if complete else unproven("ConfigMap"),
            ),
            severity=None if complete else Severity.INFO,
            pinned=not complete,
        )
        return
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


# The device plugin's MIG resources under the mixed strategy and GFD's count labels, one per profile.
_MIG_RESOURCE = re.compile(r"nvidia\.com/mig-([0-9]+g\.[0-9]+gb(?:\+[a-z]+)?)")
_MIG_COUNT_LABEL = re.compile(r"nvidia\.com/mig-([0-9]+g\.[0-9]+gb(?:\+[a-z]+)?)\.count")


def _single_strategy_profiles(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    """A ClusterPolicy with mig.strategy single, and an inventory node whose GPUs hold MIG devices of more than one
    profile: the device plugin's single strategy requires one MIG device type per node (internal/rm/device_map.go,
    'more than one MIG device type present on node') and advertises no GPU there. The profiles are read from the
    node's MIG resources and GFD count labels (the mixed strategy's), or from its nvidia.com/mig.config label
    through the linted mig-parted ConfigMap spec.migManager.config.name names. A plugin configuration of the
    operator's (devicePlugin.config) may set its own strategy: then nothing is said."""
    spec = mapping(obj.data.get("spec"))
    if text(dig(spec, "mig", "strategy")) != "single" or text(dig(spec, "devicePlugin", "config", "name")):
        return
    layouts = _mig_parted_layouts(resolver, text(dig(spec, "migManager", "config", "name")))
    for node in resolver.nodes:
        profiles = _node_profiles(node, layouts)
        if len(profiles) < 2:
            continue
        yield Diagnostic(
            RULE_ID,
            ("spec", "mig", "strategy"),
            f"mig.strategy is single, but node {node.name} has MIG devices of {len(profiles)} profiles "
            f"({', '.join(sorted(profiles))}): the device plugin stops there, 'more than one MIG device type "
            "present on node', and the node advertises no nvidia.com/gpu",
            notes=(
                "the single strategy needs one MIG profile on every GPU of a node (all-1g.10gb, all-3g.40gb, ...)",
                "with more than one profile on a node use mig.strategy: mixed, and ask for nvidia.com/mig-<profile>",
            ),
            severity=Severity.WARNING,
        )


def _node_profiles(node: NodeInfo, layouts: Mapping[str, frozenset[str]]) -> frozenset[str]:
    found = {
        m.group(1) for name, amount in node.allocatable.items() if amount > 0 and (m := _MIG_RESOURCE.fullmatch(name))
    }
    for label, value in node.labels.items():
        counted = _MIG_COUNT_LABEL.fullmatch(label)
        if counted and fields.counted(value):
            found.add(counted.group(1))
    found |= layouts.get(node.labels.get("nvidia.com/mig.config", ""), frozenset())
    return frozenset(found)


def _mig_parted_layouts(resolver: Resolver, name: str) -> dict[str, frozenset[str]]:
    """The MIG profiles each layout of the mig-parted configuration in ConfigMap ``name`` surely creates on a node
    (mig-configs: <layout>: [{mig-enabled, mig-devices: {profile: count}}]), when one namespace holds that
    ConfigMap: an entry behind a device-filter applies to some GPU models only, so its profiles are left out."""
    return {
        layout: frozenset(profile for entry in entries if not entry.filtered for profile in entry.profiles)
        for layout, entries in _mig_parted_entries(resolver, name).items()
    }


@dataclass(frozen=True)
class MigEntry:
    """One entry of a mig-parted layout: the profiles it creates on the devices it applies to."""

    profiles: frozenset[str]
    filtered: bool  # a device-filter limits it to some GPU models (PCI device ids)


def _mig_parted_entries(resolver: Resolver, name: str) -> dict[str, list[MigEntry]]:
    """The MIG-enabled entries of each layout of the mig-parted configuration in ConfigMap ``name``, when one
    namespace holds that ConfigMap (mig-configs: <layout>: [{device-filter, mig-enabled, mig-devices}])."""
    namespaces = resolver.namespaces_of("", "ConfigMap", name) if name else []
    if len(namespaces) != 1:
        return {}
    layouts: dict[str, list[MigEntry]] = {}
    for key, value in (held_config_maps(resolver, namespaces[0]).get(name) or {}).items():
        if not isinstance(value, str) or len(value) > MAX_EMBEDDED:
            continue
        for document in load_text(f"ConfigMap {name} data.{key}", value).documents:
            for layout, entries in mapping(mapping(document.data).get("mig-configs")).items():
                layouts[str(layout)] = [
                    MigEntry(
                        frozenset(
                            str(profile)
                            for profile, count in mapping(mapping(entry).get("mig-devices")).items()
                            if isinstance(count, int) and count > 0
                        ),
                        mapping(entry).get("device-filter") not in (None, "", []),
                    )
                    for entry in sequence(entries)
                    if mapping(entry).get("mig-enabled") is True
                ]
    return layouts


def _profiles_the_gpus_lack(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    """A ClusterPolicy's MIG manager configuration (spec.migManager.config: a mig-parted ConfigMap, and the
    layout it applies to MIG-capable nodes without an nvidia.com/mig.config label) whose layout, on an inventory
    node, asks for a MIG profile the node's GPU does not offer (kube/mig_profiles): mig-parted cannot create it
    and the MIG manager marks the node nvidia.com/mig.config.state=failed (NVIDIA/mig-parted#18). Entries with a
    device-filter (some GPU models only) are left out."""
    spec = mapping(obj.data.get("spec"))
    manager = mapping(spec.get("migManager"))
    name = text(dig(manager, "config", "name"))
    if manager.get("enabled") is False or not name:
        return
    layouts = _mig_parted_entries(resolver, name)
    default = text(dig(manager, "config", "default"))
    lacking: dict[tuple[str, str, str], list[NodeInfo]] = {}  # (layout, product, profile) -> nodes
    for node in resolver.nodes:
        labelled = node.labels.get("nvidia.com/mig.config", "")
        layout = labelled or (default if node.labels.get("nvidia.com/mig.capable") == "true" else "")
        offered = profiles_of(node.labels.get(PRODUCT_LABEL, ""))
        if not layout or offered is None:
            continue
        for entry in layouts.get(layout, ()):
            for profile in sorted(entry.profiles):
                if not entry.filtered and base_profile(profile) not in offered:
                    lacking.setdefault((layout, node.labels[PRODUCT_LABEL], profile), []).append(node)
    for (layout, product, profile), nodes in sorted(lacking.items()):
        field = "default" if layout == default else "name"
        yield Diagnostic(
            RULE_ID,
            ("spec", "migManager", "config", field),
            f"MIG configuration {layout} asks for profile {profile}, which {product} does not offer: "
            f"the MIG manager cannot apply it on {node_names(nodes)} (nvidia.com/mig.config.state=failed)",
            notes=(
                f"{product} offers {', '.join(profiles_of(product) or ())} (NVIDIA MIG user guide)",
                f"layout {layout} of ConfigMap {name}; a layout for several GPU models can name each model's "
                "profiles in an entry of its own, with a device-filter",
            ),
            severity=Severity.WARNING,
        )


def operator_namespace(resolver: Resolver) -> str:
    """The namespace the GPU operator runs in, when the linted Deployments or the inventory's pods show exactly one
    ("": unknown, or several)."""
    found = {
        obj.ref.namespace
        for obj in resolver.linted.of_kind("apps", "Deployment")
        if _runs_operator(obj.data) and obj.ref.namespace
    }
    for pod in resolver.pods:
        namespace = text(dig(pod.data, "metadata", "namespace"))
        if namespace and _runs_operator(pod.data):
            found.add(namespace)
    return next(iter(found)) if len(found) == 1 else ""


def _runs_operator(data: dict[str, Any]) -> bool:
    return any(
        image_repository(text(container.get("image"))).rpartition("/")[2] == OPERATOR_IMAGE
        for site in pod_spec_sites(data)
        for _, container in main_containers(site.spec)
    )
