"""Checks: one module per rule. Each yields Diagnostics; none prints or decides severity."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint.config import Config
from gpulint.findings import Diagnostic, Path

if TYPE_CHECKING:
    from gpulint.objects import KubeObject
    from gpulint.schema import SchemaStore


@dataclass
class CheckContext:
    config: Config
    schemas: "SchemaStore"
    cache: dict[str, Any] = field(default_factory=dict)  # per-run memo for checks


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
    from gpulint.checks import gpu_non_integer, gpu_request_without_limit, schema_invalid

    return {module.RULE_ID: module.check for module in (gpu_request_without_limit, gpu_non_integer, schema_invalid)}


OBJECT_CHECKS: dict[str, ObjectCheck] = _registry()
