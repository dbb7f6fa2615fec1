"""JupyterHub's user pods, as KubeSpawner makes them from zero-to-jupyterhub's Helm values.

A z2jh values file (the `config.yaml` given to `helm upgrade --values`) is no Kubernetes object, but every user
server is a pod built from it: zero-to-jupyterhub-k8s 4.4.0 `jupyterhub/files/hub/jupyterhub_config.py` maps
`singleuser.*` to KubeSpawner's traits (`extraResource.limits` -> extra_resource_limits, `nodeSelector` ->
node_selector, `scheduling.userPods.tolerations` + `extraTolerations` -> tolerations, `storage.extraVolumes` ->
volumes, ...), then `hub.config.KubeSpawner` sets traits as written. Each profile of `singleuser.profileList`
is a pod: kubespawner 7 (`spawner.py` KubeSpawner._load_profile, _apply_overrides) applies the profile's
`kubespawner_override`, then the chosen (or default) choice of each of its `profile_options`, a dict merged into a
dict trait and any other value replacing it; `objects.py` make_pod builds the pod (the container `notebook`,
its requests and limits, tolerations, node selector, volumes; `extra_pod_config` last, over the pod spec).

Each field of the pod is aliased to where it was written (the profile's override, a choice's, the singleuser
default), so a finding is placed at the profile's lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.pod_views import PodView
from gpulint.kube.refs import Path

ROOT_KEYS = ("hub", "proxy", "scheduling", "cull", "prePuller")  # z2jh's other top-level sections
UMBRELLA = "jupyterhub"  # z2jh's chart name: a chart that depends on it keeps its values under it (or its alias)
NOTEBOOK = "notebook"  # make_pod's container name
POD = "pod"  # the virtual element under a profile (or choice) that holds its pod (no key KubeSpawner reads)
# z2jh values.yaml: the user pods' tolerations of its dedicated user nodes, and the memory guarantee
DEFAULT_TOLERATIONS = tuple(
    {"key": key, "operator": "Equal", "value": "user", "effect": "NoSchedule"}
    for key in ("hub.jupyter.org/dedicated", "hub.jupyter.org_dedicated")
)
DEFAULT_MEM_GUARANTEE = "1G"
EXTRA_CONFIG = "the Python code of hub.extraConfig (run by the hub after the values)"
MAX_PROFILES = 64  # profiles and choices read per values file
# (trait, where its value sits under singleuser) - jupyterhub_config.py's table, the traits that shape the pod
SINGLEUSER_TRAITS: tuple[tuple[str, Path], ...] = (
    ("node_selector", ("nodeSelector",)),
    ("extra_resource_limits", ("extraResource", "limits")),
    ("extra_resource_guarantees", ("extraResource", "guarantees")),
    ("cpu_limit", ("cpu", "limit")),
    ("cpu_guarantee", ("cpu", "guarantee")),
    ("mem_limit", ("memory", "limit")),
    ("mem_guarantee", ("memory", "guarantee")),
    ("extra_pod_config", ("extraPodConfig",)),
    ("extra_containers", ("extraContainers",)),
    ("init_containers", ("initContainers",)),
    ("node_affinity_required", ("extraNodeAffinity", "required")),
    ("environment", ("extraEnv",)),
)
# make_pod: trait -> (the container's resources section, the resource) for the scalar resources
SCALAR_RESOURCES = {
    "cpu_limit": ("limits", "cpu"),
    "mem_limit": ("limits", "memory"),
    "cpu_guarantee": ("requests", "cpu"),
    "mem_guarantee": ("requests", "memory"),
}


class JupyterHubValues(dict[str, Any]):
    """A z2jh values document (or its ``jupyterhub:`` section's parent), read as the pods it makes; ``prefix`` is
    where z2jh's sections sit in it (``()`` at the root, or the umbrella chart's key)."""

    def __init__(self, data: dict[str, Any], prefix: Path = ()) -> None:
        super().__init__(data)
        self.prefix: Path = prefix


@dataclass
class _Trait:
    """A trait's value and where it was written: the whole (``at``), or per key of a dict / item of a list."""

    value: Any
    at: Path
    keys: dict[str, Path] = field(default_factory=dict)
    items: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class HubPod:
    path: Path  # the virtual pod spec, under the profile (or choice) that makes it
    role: str
    view: PodView


def values_of(data: Any, section: str = UMBRELLA) -> JupyterHubValues | None:
    """``data`` as z2jh values when it is shaped so: a ``singleuser`` mapping beside another of z2jh's sections,
    or holding a ``profileList`` (at the root, or under ``section``, the key of a chart that depends on z2jh)."""
    if isinstance(data, JupyterHubValues):
        return data
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    for prefix in ((), (section,)):
        hub = mapping(data.get(prefix[0])) if prefix else data
        singleuser = hub.get("singleuser")
        if isinstance(singleuser, dict) and (
            isinstance(singleuser.get("profileList"), list) or any(isinstance(hub.get(k), dict) for k in ROOT_KEYS)
        ):
            return JupyterHubValues(data, prefix)
    return None


def hub_pods(values: JupyterHubValues) -> Iterator[HubPod]:
    """The user pods: one per profile and per choice of its options; the default pod without profiles."""
    prefix = values.prefix
    section = mapping(values.get(prefix[0])) if prefix else dict(values)
    singleuser = mapping(section.get("singleuser"))
    completed_by = EXTRA_CONFIG if mapping(mapping(section.get("hub")).get("extraConfig")) else ""
    base = _defaults(section, singleuser, (*prefix, "singleuser"))
    spawner = mapping(mapping(mapping(section.get("hub")).get("config")).get("KubeSpawner"))
    for trait, value in spawner.items():  # hub.config.KubeSpawner: set as written, after the chart's
        base[str(trait)] = _written(value, (*prefix, "hub", "config", "KubeSpawner", trait))
    profiles = [(i, p) for i, p in enumerate(sequence(singleuser.get("profileList"))) if isinstance(p, dict)]
    if not profiles:
        at = (*prefix, "singleuser")
        yield HubPod((*at, POD), "JupyterHub user server", _view(base, (*at, POD), at, completed_by))
        return
    made = 0
    for index, profile in profiles:
        if made >= MAX_PROFILES:
            return
        at = (*prefix, "singleuser", "profileList", index)
        traits = _copied(base)
        _override(traits, mapping(profile.get("kubespawner_override")), (*at, "kubespawner_override"))
        options = [(str(name), mapping(o)) for name, o in mapping(profile.get("profile_options")).items()]
        name = text(profile.get("display_name")) or text(profile.get("slug")) or str(index)
        yield HubPod(
            (*at, POD), f"profile {name}", _view(_chosen(traits, options, at, {}), (*at, POD), at, completed_by)
        )
        made += 1
        for option, settings in options:  # each other choice, the other options at their defaults
            for choice, chosen in mapping(settings.get("choices")).items():
                if (
                    made >= MAX_PROFILES
                    or choice == _default_choice(settings)
                    or not _choice_overrides(settings, choice)
                ):
                    continue
                choice_at = (*at, "profile_options", option, "choices", choice)
                pod = _chosen(traits, options, at, {option: str(choice)})
                role = f"profile {name}, {option} {text(mapping(chosen).get('display_name')) or choice}"
                yield HubPod((*choice_at, POD), role, _view(pod, (*choice_at, POD), choice_at, completed_by))
                made += 1


def _chosen(
    traits: dict[str, _Trait], options: list[tuple[str, dict[str, Any]]], at: Path, picked: dict[str, str]
) -> dict[str, _Trait]:
    """The profile's traits with the override of each option's picked choice (else its default) applied."""
    pod = _copied(traits)
    for option, settings in options:
        choice = picked.get(option, _default_choice(settings))
        if choice is not None:
            where = (*at, "profile_options", option, "choices", choice, "kubespawner_override")
            _override(pod, _choice_overrides(settings, choice), where)
    return pod


def _choice_overrides(settings: dict[str, Any], choice: str) -> dict[str, Any]:
    return mapping(mapping(mapping(settings.get("choices")).get(choice)).get("kubespawner_override"))


def _default_choice(settings: dict[str, Any]) -> str | None:
    """The choice KubeSpawner takes when the user picks none: the one marked ``default`` (else the first, as
    the form shows it selected)."""
    choices = [(str(k), mapping(v)) for k, v in mapping(settings.get("choices")).items()]
    marked = next((k for k, v in choices if v.get("default") is True), None)
    return marked if marked is not None else (choices[0][0] if choices else None)


def _written(value: Any, at: Path) -> _Trait:
    if isinstance(value, dict):
        return _Trait(dict(value), at, keys={str(k): (*at, k) for k in value})
    if isinstance(value, list):
        return _Trait(list(value), at, items=[(*at, i) for i in range(len(value))])
    return _Trait(value, at)


def _copied(traits: dict[str, _Trait]) -> dict[str, _Trait]:
    """The traits, each container copied one level (the document's values are shared, never changed: a merge
    copies what it changes), so a pod per profile costs its traits, not the document's size."""
    return {
        name: _Trait(_shallow(trait.value), trait.at, dict(trait.keys), list(trait.items))
        for name, trait in traits.items()
    }


def _shallow(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


def _defaults(section: dict[str, Any], singleuser: dict[str, Any], at: Path) -> dict[str, _Trait]:
    """The traits jupyterhub_config.py sets from the values (and the chart's defaults it relies on)."""
    traits: dict[str, _Trait] = {"mem_guarantee": _Trait(DEFAULT_MEM_GUARANTEE, at)}
    for trait, where in SINGLEUSER_TRAITS:
        value: Any = singleuser
        for step in where:
            value = mapping(value).get(step)
        if value is not None:
            traits[trait] = _written(value, (*at, *where))
    image = mapping(singleuser.get("image"))
    if text(image.get("name")):
        tag = text(image.get("tag"))
        traits["image"] = _Trait(f"{image['name']}:{tag}" if tag else text(image["name"]), (*at, "image", "name"))
    scheduling_at = (*at[:-1], "scheduling", "userPods", "tolerations")
    user_pods = mapping(mapping(section.get("scheduling")).get("userPods"))
    written = user_pods.get("tolerations")
    common = (
        _written(written, scheduling_at)
        if isinstance(written, list)
        else _Trait(list(DEFAULT_TOLERATIONS), at, items=[at] * 2)
    )
    extra = _written(sequence(singleuser.get("extraTolerations")), (*at, "extraTolerations"))
    traits["tolerations"] = _Trait([*common.value, *extra.value], at, items=[*common.items, *extra.items])
    storage = mapping(singleuser.get("storage"))
    traits["volumes"], traits["volume_mounts"] = _storage(storage, (*at, "storage"))
    return traits


def _storage(storage: dict[str, Any], at: Path) -> tuple[_Trait, _Trait]:
    """volumes and volume_mounts as z2jh makes them (dicts keyed by name; list entries keyed by their name)."""
    volumes = _Trait({}, at)
    mounts = _Trait({}, at)
    if (text(storage.get("type")) or "dynamic") == "dynamic":
        name = "volume-{user_server}"
        volumes.value[name] = {"name": name, "persistentVolumeClaim": {"claimName": "{pvc_name}"}}
        volumes.keys[name] = at
        mounts.value[name] = {"mountPath": text(storage.get("homeMountPath")) or "/home/jovyan", "name": name}
        mounts.keys[name] = at
    for key, trait in (("extraVolumes", volumes), ("extraVolumeMounts", mounts)):
        written = storage.get(key)
        if isinstance(written, dict):
            for name, item in written.items():
                trait.value[str(name)] = item
                trait.keys[str(name)] = (*at, key, name)
        for index, item in enumerate(sequence(written)):
            name = (
                text(mapping(item).get("name"))
                if key == "extraVolumes"
                else f"{index}-{text(mapping(item).get('name'))}"
            )
            trait.value[name] = item
            trait.keys[name] = (*at, key, index)
    return volumes, mounts


def _override(traits: dict[str, _Trait], overrides: dict[str, Any], at: Path) -> None:
    """KubeSpawner._apply_overrides: a dict merged into a dict trait (recursive_update), anything else set."""
    for trait, value in overrides.items():
        name = str(trait)
        current = traits.get(name)
        if isinstance(value, dict) and current is not None and isinstance(current.value, dict):
            _merge(current.value, value)
            for key in value:
                current.keys[str(key)] = (*at, trait, key)
        else:
            traits[name] = _written(value, (*at, trait))


def _merge(target: dict[str, Any], changes: dict[str, Any]) -> None:
    """kubespawner utils.recursive_update: a None value removes the key."""
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            target[key] = dict(target[key])  # shared with the document and other pods: changed as a copy
            _merge(target[key], value)
        else:
            target[key] = value


def _view(traits: dict[str, _Trait], base: Path, home: Path, completed_by: str) -> PodView:
    """make_pod's pod from the traits, each field aliased to where it was written; anything else at ``home``."""
    aliases: list[tuple[Path, Path]] = [(base, home)]
    notebook: dict[str, Any] = {"name": NOTEBOOK}
    at_container = (*base, "containers", 0)
    image = traits.get("image")
    if image is not None and isinstance(image.value, str):
        notebook["image"] = image.value
        aliases.append(((*at_container, "image"), image.at))
    resources: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}}
    for trait, (section, resource) in SCALAR_RESOURCES.items():
        found = traits.get(trait)
        if found is not None and found.value is not None:
            resources[section][resource] = found.value
            aliases.append(((*at_container, "resources", section, resource), found.at))
    for trait, section in (("extra_resource_guarantees", "requests"), ("extra_resource_limits", "limits")):
        found = traits.get(trait)
        for key, value in mapping(found.value if found else None).items():
            resources[section][str(key)] = value
            aliases.append(
                ((*at_container, "resources", section, key), found.keys.get(str(key), found.at) if found else home)
            )
    notebook["resources"] = {k: v for k, v in resources.items() if v}
    environment = traits.get("environment")
    if environment is not None and mapping(environment.value):
        notebook["env"] = _env(environment, (*at_container, "env"), aliases)
    mounts = traits.get("volume_mounts")
    notebook["volumeMounts"] = _listed(mounts, (*at_container, "volumeMounts"), aliases)
    spec: dict[str, Any] = {"containers": [notebook]}
    extra = traits.get("extra_containers")
    for index, container in enumerate(sequence(extra.value if extra else None)):
        spec["containers"].append(container)
        aliases.append(
            ((*base, "containers", index + 1), extra.items[index] if extra and index < len(extra.items) else home)
        )
    init = traits.get("init_containers")
    if init is not None and sequence(init.value):
        spec["initContainers"] = list(sequence(init.value))
        aliases += [((*base, "initContainers", i), p) for i, p in enumerate(init.items)]
    selector = traits.get("node_selector")
    if selector is not None and mapping(selector.value):
        spec["nodeSelector"] = dict(mapping(selector.value))
        aliases += [((*base, "nodeSelector", k), p) for k, p in selector.keys.items()]
        aliases.append(((*base, "nodeSelector"), selector.at))
    tolerations = traits.get("tolerations")
    if tolerations is not None and sequence(tolerations.value):
        spec["tolerations"] = list(sequence(tolerations.value))
        aliases += [((*base, "tolerations", i), p) for i, p in enumerate(tolerations.items)]
        aliases.append(((*base, "tolerations"), tolerations.at))
    volumes = traits.get("volumes")
    listed = _listed(volumes, (*base, "volumes"), aliases)
    if listed:
        spec["volumes"] = listed
    required = traits.get("node_affinity_required")
    if required is not None and sequence(required.value):
        terms = list(sequence(required.value))
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
        terms_at = (
            *base,
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        )
        aliases += [((*terms_at, i), p) for i, p in enumerate(required.items)]
    extra_pod = traits.get("extra_pod_config")
    for key, value in mapping(extra_pod.value if extra_pod else None).items():  # update_k8s_model: set over the spec
        name = _camel(str(key))
        spec[name] = value
        if extra_pod is not None:
            aliases.append(((*base, name), extra_pod.keys.get(str(key), extra_pod.at)))
    # the pod's own paths in messages (the API server's `spec.containers[0]...`), unless written elsewhere
    return PodView(spec, tuple(aliases), completed_by, faithful=False, names=((base, "spec"),))


def _listed(trait: _Trait | None, at: Path, aliases: list[tuple[Path, Path]]) -> list[Any]:
    """A dict trait of named items (volumes, volume_mounts) as make_pod lists them, each aliased."""
    if trait is None:
        return []
    if isinstance(trait.value, list):
        aliases += [((*at, i), p) for i, p in enumerate(trait.items)]
        return list(trait.value)
    listed: list[Any] = []
    for key, item in mapping(trait.value).items():
        if isinstance(item, dict):
            aliases.append(((*at, len(listed)), trait.keys.get(str(key), trait.at)))
            listed.append(item)
    return listed


def _env(environment: _Trait, at: Path, aliases: list[tuple[Path, Path]]) -> list[dict[str, Any]]:
    """make_pod's env of the environment trait: a value, or an EnvVar's fields (valueFrom) under the name, in
    the order of the names (make_pod sorts them, those another one's $(NAME) reads after it)."""
    listed: list[dict[str, Any]] = []
    for key, value in sorted(mapping(environment.value).items(), key=lambda item: str(item[0])):
        var = {"name": str(key), **value} if isinstance(value, dict) else {"name": str(key), "value": str(value)}
        aliases.append(((*at, len(listed)), environment.keys.get(str(key), environment.at)))
        listed.append(var)
    return listed


def _camel(name: str) -> str:
    """update_k8s_model takes snake_case or camelCase attribute names."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
