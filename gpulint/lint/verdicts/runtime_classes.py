"""What the RuntimeClass admission plugin makes of a pod naming a RuntimeClass: runtime-class-unknown words it,
`explain` shows it, and the scheduling verdicts read the pod it leaves. Light: a plain check of a file that
names a RuntimeClass loads no scheduling model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.runtime_class import Admitted, admit
from gpulint.kube.typos import typo_of
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


def runtime_class_verdict(spec: dict[str, Any], resolver: Resolver, file: str) -> RuntimeClassVerdict | None:
    """None when the pod names no RuntimeClass."""
    name = spec.get("runtimeClassName")
    if not isinstance(name, str) or not name:
        return None
    if name in resolver.runtime_classes:
        return RuntimeClassVerdict(
            name, tuple(sorted(resolver.runtime_classes)), runtime_class_admission(spec, resolver)
        )
    complete = resolver.catalog_complete("RuntimeClass", file)
    return RuntimeClassVerdict(name, tuple(sorted(resolver.runtime_classes)) if complete else None, None)
