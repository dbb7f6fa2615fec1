"""The instance-type catalog: rows of what a node of each type carries and offers.

A catalog document (the shipped ones, or a user's ``--node-catalog`` file)::

    provider: aws
    source: https://karpenter.sh/docs/reference/instance-types/
    instance-types:
    - name: g5.xlarge
      gpu: {model: NVIDIA A10G, memory: 22888Mi}
      labels: {karpenter.k8s.aws/instance-gpu-count: "1", ...}
      capacity: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}
      allocatable: {cpu: 3920m, memory: 14162Mi, pods: "58", nvidia.com/gpu: "1"}

A row of a later document replaces the row of the same name (a user's catalog overrides the
shipped one). Rows without ``allocatable`` use their capacity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import mapping, text, type_name
from gpulint.kube.pools.model import InstanceType
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass
class Catalog:
    rows: dict[str, InstanceType] = field(default_factory=dict)

    def get(self, name: str) -> InstanceType | None:
        return self.rows.get(name)

    def of_provider(self, provider: str) -> list[InstanceType]:
        return [row for row in self.rows.values() if row.provider == provider]

    def extend(self, rows: Iterable[InstanceType]) -> None:
        for row in rows:
            self.rows[row.name] = row


def parse_catalog(data: Any, default_source: str = "") -> tuple[list[InstanceType], list[tuple[Path, str]]]:
    """The rows of one catalog document, and (path, message) for each malformed part."""
    problems: list[tuple[Path, str]] = []
    if not isinstance(data, dict):
        return [], [((), f"a node catalog must be a mapping with 'instance-types', not {type_name(data)}")]
    provider = text(data.get("provider")) or "user"
    source = text(data.get("source")) or default_source
    entries = data.get("instance-types")
    if not isinstance(entries, list):
        return [], [(("instance-types",), "'instance-types' must be a list of instance types")]
    rows = []
    for index, entry in enumerate(entries):
        path: Path = ("instance-types", index)
        if not isinstance(entry, dict) or not text(entry.get("name")):
            problems.append((path, "an instance type needs a name (a string)"))
            continue
        found = _row(entry, provider, source, path)
        if isinstance(found, InstanceType):
            rows.append(found)
        else:
            problems.extend(found)
    return rows, problems


def _row(entry: dict[str, Any], provider: str, source: str, path: Path) -> InstanceType | list[tuple[Path, str]]:
    problems: list[tuple[Path, str]] = []
    resources: dict[str, dict[str, Fraction]] = {}
    for section in ("capacity", "allocatable"):
        values = entry.get(section)
        if values is not None and not isinstance(values, dict):
            problems.append(((*path, section), f"{section} must be a mapping of resource names to quantities"))
            continue
        parsed: dict[str, Fraction] = {}
        for name, value in mapping(values).items():
            try:
                parsed[str(name)] = quantity_from_yaml(value).value
            except QuantityError as exc:
                problems.append(((*path, section, name), f"{section}[{name}]: {exc}"))
        resources[section] = parsed
    labels = entry.get("labels")
    if labels is not None and not isinstance(labels, dict):
        problems.append(((*path, "labels"), "labels must be a mapping of label keys to values"))
    if not resources.get("capacity") and not resources.get("allocatable"):
        problems.append((path, "an instance type needs capacity or allocatable"))
    if problems:
        return problems
    name = entry["name"]
    capacity = resources.get("capacity") or resources["allocatable"]
    row_labels = {str(k): _label(v) for k, v in mapping(labels).items()}
    row_labels.setdefault(INSTANCE_TYPE_LABEL, name)
    gpu = mapping(entry.get("gpu"))
    return InstanceType(
        name,
        provider,
        row_labels,
        capacity,
        resources.get("allocatable") or dict(capacity),
        text(gpu.get("model")),
        _label(gpu.get("memory")) if gpu.get("memory") is not None else "",
        text(entry.get("source")) or source,
    )


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
