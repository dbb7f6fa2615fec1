"""How the model names objects and the places in them, and what it asks of an object and of the world.

The lint pipeline's objects (with positions) and resolver satisfy these protocols; the model never
imports the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gpulint.kube.queueing.kueue import KueueSetup
    from gpulint.kube.workloads import ObjectFacts

Path = tuple[Any, ...]  # a path into a document: mapping keys and sequence indexes


@dataclass(frozen=True)
class ObjectRef:
    api_version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def group(self) -> str:
        """The API group: "" for the core group (``v1``), ``batch`` for ``batch/v1``."""
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def display(self) -> str:
        name = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind}/{name}" if self.kind else name

    def as_json(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace, "name": self.name}


class ObjectLike(Protocol):
    """An object as the model reads it: its data and its reference."""

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def ref(self) -> ObjectRef: ...

    @property
    def kind(self) -> str: ...

    @property
    def api_version(self) -> str: ...

    @property
    def facts(self) -> ObjectFacts:
        """What is worked out of it once while it is checked (its pod templates first)."""
        ...


class GangLookup(Protocol):
    """Where the model finds the groups (PodGroups, Workloads) that pods join, and the objects that join
    one (a group's pods may come from several objects, in several files)."""

    def find_gang_object(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    @property
    def kueue(self) -> KueueSetup:
        """Kueue's queues and flavors: a queued workload is admitted whole, on its flavors' nodes."""
        ...

    def group_joiners(self, key: tuple[str, str, str, str]) -> Sequence[ObjectLike]:
        """Every object whose pod templates join the group (system, namespace, name, pod group)."""
        ...
