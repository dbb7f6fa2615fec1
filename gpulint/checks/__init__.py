"""Checks: one module per rule. Each yields Diagnostics; none prints or decides severity."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint.cel import LRU
from gpulint.config import Config
from gpulint.findings import Diagnostic, Path

if TYPE_CHECKING:
    from gpulint.objects import KubeObject
    from gpulint.resolver import Resolver
    from gpulint.schema import SchemaStore


MEMO_SIZE = 1024  # results kept per distinct pod (each may hold a verdict per node group)

@dataclass
class CheckContext:
    config: Config
    schemas: "SchemaStore"
    resolver: "Resolver"
    # per-run memo for checks (a run is one invocation, or one admission review); bounded all the same
    cache: LRU[Any, Any] = field(default_factory=lambda: LRU(MEMO_SIZE))

    @property
    def cluster(self) -> "Resolver | None":
        """The resolver when the inventory has nodes: the rules that need hardware are skipped otherwise."""
        return self.resolver if self.resolver.has_nodes else None

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        value = self.cache.get(key)
        if value is None:
            value = compute()
            self.cache.put(key, value)
        return value


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


def _registry() -> dict[str, ObjectCheck]:
    from gpulint.checks import (api_version_unavailable, cel_invalid, claim_reference_invalid, claim_unsatisfiable,
                                device_class_unknown, feature_gate_required, gang_inconsistent, gang_missing,
                                gang_unsatisfiable, gpu_nic_locality, gpu_non_integer, gpu_request_without_limit,
                                gpu_resource_unknown, gpu_unschedulable, over_tight_affinity, over_tight_topology,
                                schema_invalid, stale_gpu_label)

    modules = (gpu_request_without_limit, gpu_non_integer, schema_invalid, gpu_resource_unknown, gpu_unschedulable,
               over_tight_affinity, stale_gpu_label, cel_invalid, device_class_unknown, claim_reference_invalid,
               claim_unsatisfiable, gpu_nic_locality, api_version_unavailable, gang_unsatisfiable, gang_inconsistent,
               gang_missing, over_tight_topology, feature_gate_required)
    return {module.RULE_ID: module.check for module in modules}


OBJECT_CHECKS: dict[str, ObjectCheck] = _registry()
