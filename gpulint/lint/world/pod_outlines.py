"""A pod template as another pod's required pod affinity sees it, as plain data that crosses files.

The pods a pod may join (lint/verdicts/pod_affinity.py) are every running pod template of the files applied
with it, of any kind: a run split over workers hands each worker the other files' objects only as they cross
(lint/world/cross_file.py), and these outlines stand for the others. The verdict reads every template through
its outline, whether the object is held whole or not, so a split run and one process answer alike.
"""

from __future__ import annotations

from typing import Any

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.refs import ObjectRef
from gpulint.kube.workloads import template_metadata
from gpulint.lint.inputs.linted_set import OUTLINE_API_VERSION, OUTLINE_KIND, LintedObject

# Without this word in any file no pod has a pod affinity: a split run carries no outline (and judges none: a
# name spelled with escapes is not seen, and the verdict then says nothing).
AFFINITY_WORD = b"podAffinity"
# The pod spec fields the scheduler's filters read for a pod that may be joined (kube/scheduler.py
# pod_requirements: nodeSelector, required node affinity, tolerations, nodeName, requests; hostNetwork: a
# DaemonSet's added toleration), and of each container the fields pod_requests reads.
_SPEC_FIELDS = ("nodeSelector", "tolerations", "nodeName", "hostNetwork", "overhead", "resources")
_CONTAINER_FIELDS = ("name", "resources", "restartPolicy")


def outlines_of(obj: LintedObject) -> list[dict[str, Any]]:
    """One outline per running pod template of ``obj``: its name (with the template's role), namespace, kind,
    labels, whether another object completes its spec, and the fields of the spec the filters read."""
    facts = obj.facts  # worked out afresh on each read: once here
    found = []
    for site in facts.sites():
        if site.runs:
            found.append(
                {
                    "name": obj.ref.display() + (f" ('{site.role}')" if site.role else ""),
                    "namespace": obj.ref.namespace,
                    "kind": obj.kind,
                    "labels": mapping(template_metadata(obj.data, site).get("labels")),
                    "completed": bool(site.completed_by),
                    "spec": _spec_outline(site.spec),
                }
            )
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
    ref = ObjectRef(OUTLINE_API_VERSION, OUTLINE_KIND, obj.ref.namespace, obj.ref.display())
    return LintedObject(ref, {"templates": found}, obj.file, obj.render)
