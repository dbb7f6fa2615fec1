"""The cluster's DRA view, built once per run: devices per node, grouped by shape, and the allocator."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from gpulint.kube.cel.engine import CACHE_SIZE, LRU, CelEngine
from gpulint.kube.dra.allocation import Allocator, ClaimSpec, Device, NodeVerdict, SelectorCache, node_devices
from gpulint.kube.dra.gates import ALL_ON, DraFeatures
from gpulint.kube.dra.pools import CounterKey
from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.quantity import amount_or_none
from gpulint.kube.scheduler import NodeInfo


class DraInputs(Protocol):
    """What the model is built from: the cluster inventory, or the resolver (inventory + linted objects)."""

    @property
    def nodes(self) -> list[NodeInfo]: ...

    @property
    def slices(self) -> Sequence[Any]: ...  # objects with .data

    @property
    def device_classes(self) -> Mapping[str, Any]: ...

    @property
    def claims(self) -> Sequence[Any]: ...

    @property
    def taint_rules(self) -> Sequence[Any]: ...  # DeviceTaintRules


@dataclass
class DeviceGroup:
    """Nodes whose devices have identical shapes: the allocator answers once for all of them."""

    nodes: list[NodeInfo]
    devices: list[Device]
    blocked: str = ""  # an incomplete or invalid pool on these nodes: All requests fail
    counters: dict[CounterKey, Fraction] = field(default_factory=dict)  # the shared counters of their pools
    invalid: str = ""  # an invalid pool on these nodes: a failed allocation says so


@dataclass
class DraModel:
    inventory: DraInputs
    engine: CelEngine = field(default_factory=CelEngine)
    features: DraFeatures = ALL_ON  # the gates that reach the allocator
    _groups: list[DeviceGroup] | None = None
    # per distinct set of claims (their selectors): bounded, the webhook reviews new claims forever
    _verdicts: LRU[Any, list[tuple[DeviceGroup, NodeVerdict]]] = field(default_factory=lambda: LRU(CACHE_SIZE))
    _allocated: frozenset[str] | None = None
    _dedicated: frozenset[str] | None = None
    _shared_use: dict[str, dict[str, Fraction]] | None = None

    def __post_init__(self) -> None:
        self.selectors = SelectorCache(self.engine)
        self.classes = {name: located.data for name, located in self.inventory.device_classes.items()}
        self.allocator = Allocator(self.classes, self.selectors, self.features)

    @property
    def has_devices(self) -> bool:
        return bool(self.inventory.slices) and bool(self.inventory.nodes)

    def groups(self) -> list[DeviceGroup]:
        if self._groups is None:
            published = [located for located in self.inventory.slices if isinstance(located.data.get("spec"), dict)]
            slices = [located.data["spec"] for located in published]
            names = [str(mapping(located.data.get("metadata")).get("name") or "") for located in published]
            # the scheduler's tracker applies them with DRADeviceTaintRules (resourceslice/tracker
            # EnableDeviceTaintRules), its allocator heeds taints with DRADeviceTaints
            applied = self.features.device_taints and self.features.device_taint_rules
            rules = [located.data for located in self.inventory.taint_rules] if applied else []
            by_node = node_devices(slices, self.inventory.nodes, self.features, rules, names)
            grouped: dict[Any, DeviceGroup] = {}
            for node in self.inventory.nodes:
                found = by_node[node.name]
                devices = found.devices
                # order-free without sorting: shapes of different devices may hold values of different types
                key = (
                    frozenset(Counter((d.common_shape, d.name, d.taints) for d in devices).items()),
                    found.blocked,
                    found.invalid,
                    frozenset(found.counters.items()),
                )
                if key in grouped:
                    grouped[key].nodes.append(node)
                else:
                    grouped[key] = DeviceGroup([node], devices, found.blocked, found.counters, found.invalid)
            self._groups = list(grouped.values())
        return self._groups

    def all_devices(self) -> list[Device]:
        """Every published device once (an allNodes slice appears in many nodes' lists)."""
        seen: dict[str, Device] = {}
        for group in self.groups():
            for device in group.devices:
                seen.setdefault(device.key, device)
        return list(seen.values())

    def verdicts(
        self, claims: tuple[ClaimSpec, ...], node_names: frozenset[str] | None = None
    ) -> list[tuple[DeviceGroup, NodeVerdict]]:
        """The allocator's answer for each device group (restricted to ``node_names`` when given)."""
        key = (claims, node_names)
        cached = self._verdicts.get(key)
        if cached is None:
            out = []
            for group in self.groups():
                nodes = [n for n in group.nodes if node_names is None or n.name in node_names]
                if nodes:
                    out.append(
                        (
                            DeviceGroup(nodes, group.devices, group.blocked, group.counters, group.invalid),
                            self.allocator.fits(
                                list(claims),
                                group.devices,
                                nodes[0].name,
                                blocked=group.blocked,
                                counters=group.counters,
                                invalid=group.invalid,
                            ),
                        )
                    )
            self._verdicts.put(key, out)
            cached = out
        return cached

    def _read_allocations(self) -> None:
        dedicated: set[str] = set()
        shared: dict[str, dict[str, Fraction]] = {}
        for located in self.inventory.claims:
            for result in sequence(dig(located.data, "status", "allocation", "devices", "results")):
                if not isinstance(result, dict) or result.get("adminAccess"):
                    continue
                key = f"{result.get('driver')}/{result.get('pool')}/{result.get('device')}"
                if result.get("shareID"):  # a shared allocation (allowMultipleAllocations): it uses capacity
                    uses = shared.setdefault(key, {})
                    for name, value in mapping(result.get("consumedCapacity")).items():
                        found = amount_or_none(value)
                        if found is not None:
                            uses[str(name)] = uses.get(str(name), Fraction(0)) + found
                else:
                    dedicated.add(key)
        self._dedicated, self._shared_use = frozenset(dedicated), shared
        self._allocated = frozenset(dedicated | set(shared))

    @property
    def allocated(self) -> frozenset[str]:
        """Devices held by the allocated ResourceClaims of the inventory (driver/pool/device)."""
        if self._allocated is None:
            self._read_allocations()
        assert self._allocated is not None
        return self._allocated

    @property
    def dedicated(self) -> frozenset[str]:
        """Devices allocated without a shareID: no other claim gets them."""
        if self._dedicated is None:
            self._read_allocations()
        assert self._dedicated is not None
        return self._dedicated

    @property
    def shared_use(self) -> dict[str, dict[str, Fraction]]:
        """Capacity that shared allocations (with a shareID) consume, per device."""
        if self._shared_use is None:
            self._read_allocations()
        assert self._shared_use is not None
        return self._shared_use

    def verdicts_now(self, claims: tuple[ClaimSpec, ...]) -> list[tuple[DeviceGroup, NodeVerdict]]:
        """The same, with the devices that allocated claims hold taken (node by node)."""
        out = []
        for group in self.groups():
            held = frozenset(d.key for d in group.devices if d.key in self.dedicated)
            used = {d.key: self.shared_use[d.key] for d in group.devices if d.key in self.shared_use}
            # device keys name pools, so a group with taken devices has one node
            out.append(
                (
                    group,
                    self.allocator.fits(
                        list(claims),
                        group.devices,
                        group.nodes[0].name,
                        held,
                        group.blocked,
                        group.counters,
                        used,
                        group.invalid,
                    ),
                )
            )
        return out
