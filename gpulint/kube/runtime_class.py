"""What the RuntimeClass admission plugin does to a pod (kubernetes/kubernetes plugin/pkg/admission/runtimeclass).

On create, a pod whose ``runtimeClassName`` names no RuntimeClass is rejected
(``pod rejected: RuntimeClass "x" not found``). Otherwise ``setScheduling`` merges the
class's ``scheduling.nodeSelector`` into the pod's (a key with another value is a
conflict, and the pod is rejected) and appends its ``scheduling.tolerations``
(``tolerations.MergeTolerations``); ``setOverhead`` copies ``overhead.podFixed`` into
``spec.overhead``. The scheduler then sees the merged pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence


@dataclass(frozen=True)
class Admitted:
    spec: dict[str, Any]  # the pod spec after admission
    conflict: str = ""  # the admission error when the class's nodeSelector contradicts the pod's
    conflict_key: str = ""


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def admit(spec: dict[str, Any], runtime_class: dict[str, Any]) -> Admitted:
    """``spec`` as the RuntimeClass admission plugin leaves it (the input is not changed)."""
    scheduling = mapping(runtime_class.get("scheduling"))
    wanted = mapping(scheduling.get("nodeSelector"))
    merged = dict(spec)
    pod_selector = spec.get("nodeSelector")
    if wanted:
        selector = dict(pod_selector) if isinstance(pod_selector, dict) else {}
        for key, value in wanted.items():
            if key in selector and _label(selector[key]) != _label(value):
                return Admitted(
                    spec,
                    f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {_label(value)}; "
                    f"pod.spec.nodeSelector[{key}] = {_label(selector[key])}",
                    str(key),
                )
            selector[key] = value
        merged["nodeSelector"] = selector
    added = [t for t in sequence(scheduling.get("tolerations")) if isinstance(t, dict)]
    if added:
        own = [t for t in sequence(spec.get("tolerations")) if isinstance(t, dict)]
        merged["tolerations"] = [*own, *(t for t in added if t not in own)]
    overhead = mapping(mapping(runtime_class.get("overhead")).get("podFixed"))
    if overhead:
        merged["overhead"] = overhead
    return Admitted(merged)
