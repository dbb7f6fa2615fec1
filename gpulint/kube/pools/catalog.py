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

A shipped row (``vouch=True``) also names the ``sources`` its figures were read from, each with the
``facts`` read there (scripts/catalog_from_sources.py writes them; docs/catalogs.md). Only the
figures a source states are vouched for; ``open-labels`` lists labels a node carries with a value no
source states.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import mapping, text, type_name
from gpulint.kube.pools.gce import MachineSize
from gpulint.kube.pools.model import InstanceType
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.resources import is_gpu

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass
class Catalog:
    rows: dict[str, InstanceType] = field(default_factory=dict)
    # vCPUs and memory of machine types that are no row (a shipped file's machine-sizes): GKE pools only
    sizes: dict[str, MachineSize] = field(default_factory=dict)

    def get(self, name: str) -> InstanceType | None:
        return self.rows.get(name)

    def of_provider(self, provider: str) -> list[InstanceType]:
        return [row for row in self.rows.values() if row.provider == provider]

    def extend(self, rows: Iterable[InstanceType]) -> None:
        for row in rows:
            self.rows[row.name] = row


# A source's fact and the resource whose figure it vouches for ("gpus": the row's GPU-like resource).
FACT_RESOURCES = {
    "cpu": "cpu",
    "memory": "memory",
    "efa": "vpc.amazonaws.com/efa",
    "neuroncores": "aws.amazon.com/neuroncore",
}


def parse_catalog(
    data: Any, default_source: str = "", vouch: bool = False
) -> tuple[list[InstanceType], list[tuple[Path, str]]]:
    """The rows of one catalog document, and (path, message) for each malformed part. ``vouch``: a
    shipped catalog, whose rows stand only for the figures their sources state."""
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
        found = _row(entry, provider, source, path, vouch)
        if isinstance(found, InstanceType):
            rows.append(found)
        else:
            problems.extend(found)
    return rows, problems


def _row(
    entry: dict[str, Any], provider: str, source: str, path: Path, vouch: bool = False
) -> InstanceType | list[tuple[Path, str]]:
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
    allocatable = resources.get("allocatable") or dict(capacity)
    sources = [mapping(s) for s in entry.get("sources") or [] if isinstance(s, dict)]
    cited = "; ".join(_cited(s) for s in sources)
    return InstanceType(
        name,
        provider,
        row_labels,
        capacity,
        allocatable,
        text(gpu.get("model")),
        _label(gpu.get("memory")) if gpu.get("memory") is not None else "",
        text(entry.get("source")) or cited or source,
        _vouched(sources, capacity, resources.get("allocatable")) if vouch else None,
        tuple(str(k) for k in entry.get("open-labels") or [] if isinstance(k, str)),
    )


def parse_machine_sizes(data: Any) -> dict[str, MachineSize]:
    """The ``machine-sizes`` of a shipped catalog document: each entry's vCPUs and memory as its dated sources
    state them (a size they do not state whole, or state differently, is none). The architecture is never
    stated: each may be Arm."""
    sizes = {}
    for entry in data.get("machine-sizes") or [] if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or not text(entry.get("name")):
            continue
        facts = source_facts([mapping(s) for s in entry.get("sources") or [] if isinstance(s, dict)])
        cpu, memory = facts.get("cpu"), facts.get("memory")
        if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu <= 0 or memory is None:
            continue
        try:
            amount = quantity_from_yaml(memory).value
        except QuantityError:
            continue
        if amount > 0 and amount.denominator == 1:
            sizes[text(entry["name"])] = MachineSize(cpu, int(amount), maybe_arm=True)
    return sizes


def _cited(source: dict[str, Any]) -> str:
    return f"{text(source.get('repo'))} {text(source.get('path'))}@{text(source.get('commit'))[:12]} ({source.get('date')})"


def source_facts(sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The facts of a row's sources; a fact two sources state differently is stated by neither."""
    facts: dict[str, Any] = {}
    conflicting: set[str] = set()
    for source in sources:
        if not (text(source.get("repo")) and text(source.get("commit")) and source.get("date")):
            continue  # a source gpulint cannot name is none
        for key, value in mapping(source.get("facts")).items():
            if key in facts and facts[key] != value:
                conflicting.add(key)
            facts.setdefault(key, value)
    return {k: v for k, v in facts.items() if k not in conflicting}


def _vouched(
    sources: list[dict[str, Any]], capacity: dict[str, Fraction], allocatable: dict[str, Fraction] | None
) -> frozenset[str]:
    """The figures of a shipped row its sources state, as resource names (and "allocatable", "labels")."""
    facts = source_facts(sources)
    if not facts:
        return frozenset()
    vouched = {"labels"}  # scripts/catalog_from_sources.py writes only labels its sources give, or open ones
    for fact, resource in FACT_RESOURCES.items():
        if fact in facts and _same(facts[fact], capacity.get(resource, Fraction(0))):
            vouched.add(resource)
    for resource, amount in capacity.items():
        if resource not in FACT_RESOURCES.values() and is_gpu(resource) and _same(facts.get("gpus"), amount):
            vouched.add(resource)
    stated = mapping(facts.get("allocatable"))
    if allocatable is None or (
        stated.keys() == allocatable.keys() and all(_same(stated[k], allocatable[k]) for k in stated)
    ):
        vouched.add("allocatable")
    return frozenset(vouched)


def _same(fact: Any, amount: Fraction) -> bool:
    if fact is None or isinstance(fact, bool):
        return False
    try:
        return quantity_from_yaml(fact).value == amount
    except QuantityError:
        return False


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
