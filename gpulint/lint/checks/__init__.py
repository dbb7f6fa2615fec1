"""Checks: one module per rule. Each yields Diagnostics; none prints or decides severity."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from gpulint.kube import kserve
from gpulint.kube.fields import mapping
from gpulint.kube.lru import LRU
from gpulint.lint.config import Config
from gpulint.lint.findings import Diagnostic, Path

if TYPE_CHECKING:
    from gpulint.lint.inputs.objects import KubeObject
    from gpulint.lint.schema import SchemaStore
    from gpulint.lint.world.resolver import Resolver


MEMO_SIZE = 1024  # results kept per distinct pod (each may hold a verdict per node group)


@dataclass
class CheckContext:
    config: Config
    schemas: SchemaStore
    resolver: Resolver
    # per-run memo for checks (a run is one invocation, or one admission review); bounded all the same
    cache: LRU[Any, Any] = field(default_factory=lambda: LRU(MEMO_SIZE))

    @cached_property  # asked by every rule that needs hardware; the resolver's nodes and pools are fixed
    def cluster(self) -> Resolver | None:
        """The resolver when the inventory has nodes: the rules that need hardware are skipped otherwise."""
        return self.resolver if self.resolver.has_nodes else None

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        return self.cache.get_or_compute(key, compute)

    def kserve_default_mode(self) -> str | None:
        """defaultDeploymentMode of a linted inferenceservice-config (kserve, or kubeflow in Kubeflow), read once."""
        return self.memo(("kserve-default-mode",), self._kserve_default_mode)

    def _kserve_default_mode(self) -> str | None:
        for config in self.resolver.linted.of_kind("", "ConfigMap"):
            if config.ref.name == kserve.CONFIG_MAP:
                return kserve.default_mode(mapping(config.data.get("data")).get("deploy"))
        return None


ObjectCheck = Callable[["KubeObject", CheckContext], Iterator[Diagnostic]]


def field_path(path: Path) -> str:
    """Kubernetes' spelling of a field path: spec.containers[0].resources.limits[nvidia.com/gpu]."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif "." in step or "/" in step:
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out
