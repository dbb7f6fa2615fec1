"""A strategic merge patch of a PodSpec, as k8s.io/apimachinery's strategicpatch applies one with
the PodSpec's own tags (k8s.io/api core/v1 types.go: ``patchStrategy:"merge"`` and
``patchMergeKey``): maps merge key by key, a list with a merge key merges item by item (a
container by name, an env var by name, a mount by mountPath), any other list is replaced, a null
deletes the field, and the directives ``$patch: delete`` (an item) and ``$patch: replace`` (a map
or a list) do what they say. Argo applies a template's ``podSpecPatch`` this way
(workflow/util ApplyPodSpecPatch).
"""

from __future__ import annotations

from typing import Any

from gpulint.kube.refs import Path

# PodSpec lists merged item by item: field -> merge key (types.go)
POD_MERGE_KEYS = {
    "volumes": "name",
    "initContainers": "name",
    "containers": "name",
    "ephemeralContainers": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
}
CONTAINER_MERGE_KEYS = {
    "ports": "containerPort",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
DIRECTIVE = "$patch"


def patch_pod_spec(spec: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with ``patch`` applied (neither is changed)."""
    return _merge_map(spec, patch, POD_MERGE_KEYS)


def patched_paths(spec: dict[str, Any], patch: dict[str, Any]) -> list[Path]:
    """The places of the patched ``spec`` (relative to the pod spec) whose value the patch set: a
    pod field, or a field of a container the patch names."""
    paths: list[Path] = []
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if key in CONTAINER_LISTS and isinstance(value, list):
            merged = [item for item in spec.get(key) or () if isinstance(item, dict)]
            for change in value:
                if not isinstance(change, dict) or change.get(DIRECTIVE) == "delete":
                    continue
                index = next((i for i, c in enumerate(merged) if c.get("name") == change.get("name")), None)
                if index is not None:
                    paths += [(key, index, field) for field in change if field != "name" and not field.startswith("$")]
        else:
            paths.append((key,))
    return paths


def _merge_map(base: dict[str, Any], patch: dict[str, Any], keyed: dict[str, str]) -> dict[str, Any]:
    if patch.get(DIRECTIVE) == "replace":
        return _clean(patch)
    out = dict(base)
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        old = base.get(key)
        if value is None:
            out.pop(key, None)
        elif key in keyed and isinstance(value, list):
            inner = CONTAINER_MERGE_KEYS if keyed is POD_MERGE_KEYS and key in CONTAINER_LISTS else {}
            out[key] = _merge_list(old if isinstance(old, list) else [], value, keyed[key], inner)
        elif isinstance(value, dict) and isinstance(old, dict):
            out[key] = _merge_map(old, value, {})
        else:
            out[key] = _clean(value)
    return out


def _merge_list(base: list[Any], items: list[Any], merge_key: str, inner: dict[str, str]) -> list[Any]:
    if any(isinstance(item, dict) and item.get(DIRECTIVE) == "replace" and len(item) == 1 for item in items):
        return [_clean(item) for item in items if not (isinstance(item, dict) and item.get(DIRECTIVE) == "replace")]
    out = list(base)
    for item in items:
        if not isinstance(item, dict):
            out.append(item)
            continue
        same = next(
            (i for i, old in enumerate(out) if isinstance(old, dict) and old.get(merge_key) == item.get(merge_key)),
            None,
        )
        if item.get(DIRECTIVE) == "delete":
            if same is not None:
                del out[same]
        elif same is None:
            out.append(_merge_map({}, item, inner))
        else:
            out[same] = _merge_map(out[same], item, inner)
    return out


def _clean(value: Any) -> Any:
    """A patch value without its directives."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value
