"""Which of the cluster's nodes carry a label with one of some values, where the inventory can say: its nodes (a
file's, or the live list), and no node pool that may add a node carrying it.

A configuration reached only by a node label (the GPU operator's nvidia.com/device-plugin.config) is given to a
node with `kubectl label node` (NVIDIA GPU operator docs, time-slicing, "Applying multiple node-specific
configurations"), which no manifest shows; the nodes an inventory lists do show it.
"""

from __future__ import annotations

from gpulint.lint.world.resolver import Resolver


def nodes_labelled(resolver: Resolver, label: str, values: tuple[str, ...]) -> tuple[str, ...] | None:
    """The inventory's nodes whose ``label`` is one of ``values``; None when it is not known: no inventory nodes,
    node pools not all read, or a pool whose nodes carry the label (its template's value may be one of them)."""
    if not resolver.nodes or not resolver.pools_whole:
        return None
    for pool in resolver.pools:
        if label in pool.labels or label in pool.spec.labels or any(label in t.labels for t in pool.templates):
            return None
    return tuple(node.name for node in resolver.nodes if node.labels.get(label) in values)
