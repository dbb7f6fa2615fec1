"""Which Cluster API node group a node belongs to, as Cluster Autoscaler's clusterapi provider finds it.

kubernetes/autoscaler cluster-autoscaler-1.36.1 cloudprovider/clusterapi/clusterapi_controller.go
``nodeGroupForNode`` / ``findScalableResourceByProviderID``: the node's ``spec.providerID``, normalized
(``normalizedProviderString``: what follows the last ``/``, an Azure scale-set ID whole), is looked up first in
the MachinePools' ``spec.providerIDList``, then in the Machines' ``spec.providerID`` (a Machine without one is
found through the node's ``cluster.x-k8s.io/machine`` and ``cluster.x-k8s.io/cluster-namespace`` annotations,
``findMachineByProviderID``); the Machine's MachineSet owner (``ownerReferences`` of that kind, by name, in its
namespace) must exist, and its MachineDeployment owner, when it has one, is the node group, else the MachineSet.
A link gpulint does not hold (a Machine or MachineSet absent from the inventory) matches the node to no group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.pools.kinds import CAPI_GROUP

MACHINE_ANNOTATION = "cluster.x-k8s.io/machine"
NAMESPACE_ANNOTATION = "cluster.x-k8s.io/cluster-namespace"

Group = tuple[str, str, str]  # (kind, namespace, name) of a MachineDeployment, MachineSet or MachinePool


def normalized_provider_id(provider_id: str) -> str:
    if provider_id.startswith("azure://") and "virtualMachineScaleSets" in provider_id:
        return provider_id
    return provider_id.rsplit("/", 1)[-1]


@dataclass
class CapiIndex:
    """The Machines, MachineSets and MachinePools of a cluster, as the links from a node to its group."""

    machines: dict[str, tuple[str, str]] = field(default_factory=dict)  # providerID -> (namespace, name)
    machine_sets: dict[tuple[str, str], str] = field(default_factory=dict)  # Machine -> its MachineSet owner
    set_owners: dict[tuple[str, str], str] = field(default_factory=dict)  # MachineSet -> MachineDeployment ("")
    pools: dict[str, tuple[str, str]] = field(default_factory=dict)  # providerID -> MachinePool

    def add(self, data: Mapping[str, Any]) -> None:
        group, kind = text(data.get("apiVersion")).rpartition("/")[0], text(data.get("kind"))
        if group != CAPI_GROUP:
            return
        metadata, spec = mapping(data.get("metadata")), mapping(data.get("spec"))
        key = (text(metadata.get("namespace")) or "default", text(metadata.get("name")))
        if not key[1]:
            return
        if kind == "Machine":
            owner = _owner(metadata, "MachineSet")
            if owner:
                self.machine_sets[key] = owner
            provider = text(spec.get("providerID"))
            if provider:
                self.machines[normalized_provider_id(provider)] = key
        elif kind == "MachineSet":
            self.set_owners[key] = _owner(metadata, "MachineDeployment")
        elif kind == "MachinePool":
            for provider in sequence(spec.get("providerIDList")):
                if text(provider):
                    self.pools[normalized_provider_id(text(provider))] = key

    def group_of(self, node: Mapping[str, Any]) -> Group | None:
        """The node group of a Node object (None: none the links held lead to)."""
        provider = text(mapping(node.get("spec")).get("providerID"))
        if not provider:
            return None
        normalized = normalized_provider_id(provider)
        if normalized in self.pools:
            return ("MachinePool", *self.pools[normalized])
        machine = self.machines.get(normalized)
        if machine is None:
            annotations = mapping(mapping(node.get("metadata")).get("annotations"))
            name, namespace = text(annotations.get(MACHINE_ANNOTATION)), text(annotations.get(NAMESPACE_ANNOTATION))
            machine = (namespace, name) if name and namespace else None  # path.Join(ns, machineID): both needed
        machine_set = self.machine_sets.get(machine) if machine is not None else None
        if machine is None or not machine_set:
            return None
        set_key = (machine[0], machine_set)
        if set_key not in self.set_owners:
            return None  # its MachineSet is not held: the autoscaler would find no group either
        deployment = self.set_owners[set_key]
        return ("MachineDeployment", machine[0], deployment) if deployment else ("MachineSet", *set_key)

    def groups(self, nodes: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Group]:
        """Node name -> its node group, for the nodes the links lead from."""
        found = {}
        for name, node in nodes:
            group = self.group_of(node)
            if group is not None:
                found[name] = group
        return found

    def __bool__(self) -> bool:  # a MachineSet alone is a link too: its Machines may come from another file
        return bool(self.machines or self.machine_sets or self.set_owners or self.pools)


def _owner(metadata: Mapping[str, Any], kind: str) -> str:
    """getOwnerForKind: the first owner reference of that kind with a name."""
    for owner in sequence(metadata.get("ownerReferences")):
        owner = mapping(owner)
        if owner.get("kind") == kind and text(owner.get("name")):
            return text(owner.get("name"))
    return ""
