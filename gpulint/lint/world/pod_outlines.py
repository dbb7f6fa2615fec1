"""A pod template as another pod's required pod affinity sees it, as plain data that crosses files.

The pods a pod may join (lint/verdicts/pod_affinity.py) are every running pod template of the files applied
with it, of any kind: a run split over workers hands each worker the other files' objects only as they cross
(lint/world/cross_file.py), and these outlines stand for the others. The verdict reads every template through
its outline, whether the object is held whole or not, so a split run and one process answer alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.workloads import template_metadata
from gpulint.lint.inputs.linted_set import LintedObject, outline_object
from gpulint.lint.inputs.setup_walk import mentions
from gpulint.lint.inputs.sources import Source

# Without this word in any file no pod has a pod affinity: a split run carries no outline (and judges none: a
# name spelled with escapes is not seen, and the verdict then says nothing).
AFFINITY_WORD = b"podAffinity"
# The pod spec fields the scheduler's filters read for a pod that may be joined (kube/scheduler.py
# pod_requirements: nodeSelector, required node affinity, tolerations, nodeName, requests; hostNetwork: a
# DaemonSet's added toleration), and of each container the fields pod_requests reads.
_SPEC_FIELDS = ("nodeSelector", "tolerations", "nodeName", "hostNetwork", "overhead", "resources")
_CONTAINER_FIELDS = ("name", "resources", "restartPolicy")


def names_pod_affinity(sources: Sequence[Source]) -> bool:
    """Whether a source may hold a pod with a pod affinity: then a split, streamed or indexed run carries the pod
    templates of the objects that do not cross files as outlines (AFFINITY_WORD)."""
    return any(mentions(source, (AFFINITY_WORD,)) for source in sources)


def outlines_of(obj: LintedObject) -> list[dict[str, Any]]:
    """One outline per running pod template of ``obj``: its name (with the template's role), kind, and, when
    there is one, its namespace, labels, whether another object completes its spec, and the fields of the spec
    the filters read. Compact: a field left out is empty (the repository index caches them on disk, split runs
    pickle them)."""
    facts = obj.facts  # worked out afresh on each read: once here
    found = []
    for site in facts.sites():
        if site.runs:
            outline: dict[str, Any] = {
                "name": obj.ref.display() + (f" ('{site.role}')" if site.role else ""),
                "kind": obj.kind,
                "namespace": obj.ref.namespace,
                "labels": mapping(template_metadata(obj.data, site).get("labels")),
                "completed": bool(site.completed_by),
                "spec": _spec_outline(site.spec),
            }
            found.append({key: value for key, value in outline.items() if value})
    return found


def _spec_outline(spec: dict[str, Any]) -> dict[str, Any]:
    outline = {key: spec[key] for key in _SPEC_FIELDS if key in spec}
    node_affinity = mapping(spec.get("affinity")).get("nodeAffinity")
    if node_affinity is not None:
        outline["affinity"] = {"nodeAffinity": node_affinity}
    for part in ("containers", "initContainers"):
        if part in spec:
            outline[part] = [
                {key: container[key] for key in _CONTAINER_FIELDS if key in container}
                for container in sequence(spec.get(part))
                if isinstance(container, dict)
            ]
    return outline


def outlined(obj: LintedObject) -> LintedObject | None:
    """``obj``'s pod templates as one object that crosses files in its place (None: it starts no pod)."""
    found = outlines_of(obj)
    if not found:
        return None
    return outline_object(found, obj.file, obj.ref.display(), obj.ref.namespace, obj.render)
