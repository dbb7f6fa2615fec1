"""What the RuntimeClass admission plugin makes of a pod naming a RuntimeClass: runtime-class-unknown words it,
`explain` shows it, and the scheduling verdicts read the pod it leaves. Light: a plain check of a file that
names a RuntimeClass loads no scheduling model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping
from gpulint.kube.kai_admission import injected_runtime_class
from gpulint.kube.runtime_class import Admitted, admit
from gpulint.kube.typos import typo_of
from gpulint.kube.workloads import PodSpecSite, template_metadata
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.world.resolver import Resolver


def runtime_class_admission(spec: dict[str, Any], resolver: Resolver) -> Admitted | None:
    """What the RuntimeClass admission plugin makes of the pod (None: no class named, or the class is unknown)."""
    name = spec.get("runtimeClassName")
    runtime_class = resolver.runtime_classes.get(name) if isinstance(name, str) else None
    return admit(spec, runtime_class) if runtime_class is not None else None


@dataclass(frozen=True)
class RuntimeClassVerdict:
    """A pod naming a RuntimeClass, as the RuntimeClass admission plugin answers it: runtime-class-unknown's
    verdict, which `explain` shows."""

    name: str
    known: tuple[str, ...] | None  # the classes the cluster defines (None: no complete catalog proves one absent)
    admitted: Admitted | None  # None: the class is not among those the inventory or the linted files hold
    injected_by: str = ""  # who wrote the name into the pod ("" when the pod names it itself)

    @property
    def missing(self) -> bool:
        """The class is proven absent: the API server rejects the pod."""
        return self.admitted is None and self.known is not None

    @property
    def conflict(self) -> str:
        """The admission error when the class's nodeSelector contradicts the pod's ("" when none)."""
        return self.admitted.conflict if self.admitted is not None else ""

    def close(self) -> str | None:
        """The defined class the name was likely meant to be (nvidia-container-runtime beside nvidia, a typo)."""
        known = list(self.known or ())
        return typo_of(self.name, known) or next((k for k in known if k in self.name or self.name in k), None)


def runtime_class_verdict(
    spec: dict[str, Any], resolver: Resolver, file: str, annotations: dict[str, Any] | None = None
) -> RuntimeClassVerdict | None:
    """None when the pod names no RuntimeClass and no admission webhook the linted files configure gives it one
    (``annotations``: the pod's, which KAI's webhook reads)."""
    name = spec.get("runtimeClassName")
    injected_by = ""
    if not isinstance(name, str) or not name:
        kai = resolver.kai_admission
        injected = injected_runtime_class(spec, annotations or {}, kai) if kai is not None else None
        if injected is None or kai is None:
            return None
        name, spec = injected, {**spec, "runtimeClassName": injected}
        release = f" {kai.release}" if kai.release else ""
        injected_by = f"KAI Scheduler's admission webhook{release} (KAI Config {kai.config})"
    if name in resolver.runtime_classes:
        return RuntimeClassVerdict(
            name, tuple(sorted(resolver.runtime_classes)), runtime_class_admission(spec, resolver), injected_by
        )
    complete = resolver.catalog_complete("RuntimeClass", file)
    return RuntimeClassVerdict(name, tuple(sorted(resolver.runtime_classes)) if complete else None, None, injected_by)


def site_runtime_class_verdict(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> RuntimeClassVerdict | None:
    """runtime_class_verdict of one pod template, its annotations read (runtime-class-unknown's, and explain's)."""
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    return runtime_class_verdict(site.spec, resolver, obj.document.path, annotations)
