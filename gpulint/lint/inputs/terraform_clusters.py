"""The Kubernetes clusters a repository's own Terraform (or eksctl) creates, each a folder: read, never run.

A platform repository of patterns (aws-ia/terraform-aws-eks-blueprints ``patterns/<name>/``, one Terraform root
each) or a monorepo of ``clusters/dev`` and ``clusters/prod`` creates one cluster per folder. What a folder that
creates a cluster holds deploys to that cluster: its node pools, queues and quotas are that cluster's, never the
cluster of a workload in another folder (issue #28 §2; lint.run scopes the checks by these folders).

A folder creates a cluster when a ``.tf`` file in it (a Terraform module is a folder) declares
``resource "aws_eks_cluster"`` (hashicorp/terraform-provider-aws), ``"google_container_cluster"``
(terraform-provider-google), ``"azurerm_kubernetes_cluster"`` (terraform-provider-azurerm), or a module whose
``source`` is terraform-aws-modules/eks/aws, terraform-google-modules/kubernetes-engine/google or Azure/aks/azurerm
(or a module named ``eks``, ``gke`` or ``aks``); or when a YAML file in it is an eksctl ``ClusterConfig``
(eksctl.io). Such a cluster's node pools are not all in the linted files when the same folder creates node groups
itself (POOL_WORDS: EKS managed and self-managed node groups, Auto Mode's built-in pools, GKE and AKS node pools,
eksctl's nodeGroups): then what its linted pools lack is unknown, never absent.

Walked as setup_walk walks (file_walk.Walk: .gitignore and ``exclude`` honoured, at most setup_walk.MAX_FILES
files, the first MAX_BYTES of each, no link followed), over the work trees of the sources, once per run and only
when the run holds a cluster's node pool, queue or quota.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.lint.inputs import hcl
from gpulint.lint.inputs.file_walk import Selection
from gpulint.lint.inputs.setup_walk import Facts, known_contents, root_of, setup_facts
from gpulint.lint.inputs.sources import Source
from gpulint.lint.paths import is_within

CLUSTER_FILES = Selection(
    suffixes=(".tf", ".yaml", ".yml"),
    skipped=frozenset({"node_modules", "vendor", "third_party", "templates", ".terraform"}),
)
CLUSTER_RESOURCES = frozenset({"aws_eks_cluster", "google_container_cluster", "azurerm_kubernetes_cluster"})
CLUSTER_MODULES = (
    "terraform-aws-modules/eks/aws",
    "terraform-google-modules/kubernetes-engine/google",
    "Azure/aks/azurerm",
)
CLUSTER_MODULE_NAMES = frozenset({"eks", "gke", "aks"})
# What creates node groups beside the cluster (each provider's and module's name for it): the folder's pool set
# is not all in YAML. GKE and AKS clusters always have a default pool.
POOL_RESOURCES = frozenset(
    {
        "aws_eks_node_group",
        "aws_autoscaling_group",
        "google_container_node_pool",
        "google_container_cluster",
        "azurerm_kubernetes_cluster",
        "azurerm_kubernetes_cluster_node_pool",
    }
)
POOL_ATTRIBUTES = frozenset(
    {
        "eks_managed_node_groups",
        "self_managed_node_groups",
        "fargate_profiles",
        "cluster_compute_config",  # EKS Auto Mode's built-in pools (terraform-aws-modules/eks v20.31+)
        "compute_config",
        "node_pools",
        "default_node_pool",
        "agents_count",
    }
)
_EKSCTL = re.compile(r"^apiVersion:\s*['\"]?eksctl\.io/", re.MULTILINE)
_EKSCTL_KIND = re.compile(r"^kind:\s*['\"]?ClusterConfig\b", re.MULTILINE)
_EKSCTL_POOLS = re.compile(r"^(?:managedNodeGroups|nodeGroups|autoModeConfig):", re.MULTILINE)
MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class ClusterRoot:
    """A folder (real path) whose files create a Kubernetes cluster, where, and what node groups it creates
    beside its linted pools ("": none)."""

    folder: str
    where: str  # "patterns/x/main.tf:12", relative to its work tree
    pools_elsewhere: str = ""  # "patterns/x/main.tf:40 (eks_managed_node_groups)"

    @property
    def gap(self) -> str:
        """Why the pools of its linted files may not be every node group of the cluster ("" when they are)."""
        if not self.pools_elsewhere:
            return ""
        return (
            f"{self.pools_elsewhere} creates node groups of the cluster {self.where} creates, which gpulint does not "
            "read, so its node pools in the linted files are not all of them"
        )


@dataclass(frozen=True)
class ClusterRoots:
    roots: tuple[ClusterRoot, ...] = ()

    def of(self, path: str) -> int:
        """The index (from 1) of the deepest root that holds ``path``; 0: none."""
        if not self.roots:
            return 0
        real = os.path.realpath(path)
        best, depth = 0, -1
        for index, root in enumerate(self.roots, 1):
            if is_within(real, root.folder) and root.folder.count(os.sep) > depth:
                best, depth = index, root.folder.count(os.sep)
        return best


NO_ROOTS = ClusterRoots()


def cluster_roots(sources: Sequence[Source], exclude: Sequence[str] = ()) -> ClusterRoots:
    """The cluster roots of the work trees of the ``sources`` (read when the run holds a pool, a queue or a quota:
    a file linted alone, as pre-commit runs it, is judged by the pools the repository index reads)."""
    trees = list(dict.fromkeys(tree for source in sources if (tree := root_of(source)) is not None))
    if not trees:
        return NO_ROOTS
    known = known_contents(sources)
    found: dict[str, ClusterRoot] = {}
    for tree in trees:
        for root in roots_of_tree(tree, exclude, known):
            kept = found.get(root.folder)
            if kept is None or (not kept.pools_elsewhere and root.pools_elsewhere):
                found[root.folder] = (
                    root if kept is None else ClusterRoot(kept.folder, kept.where, root.pools_elsewhere)
                )
    return ClusterRoots(tuple(found.values()))


def roots_of_tree(
    tree: str, exclude: Sequence[str] = (), known: Mapping[str, bytes] | None = None
) -> list[ClusterRoot]:
    clusters: dict[str, str] = {}  # folder -> where
    pools: dict[str, str] = {}
    for relative, facts in setup_facts(tree, CLUSTER_FILES, _READER, exclude, known):
        if not facts:
            continue
        folder = os.path.realpath(os.path.join(tree, os.path.dirname(relative)))
        made, pooled = facts
        if made:
            clusters.setdefault(folder, made)
        if pooled:
            pools.setdefault(folder, pooled)
    return [ClusterRoot(folder, where, pools.get(folder, "")) for folder, where in clusters.items()]


def _facts(relative: str, text: str) -> Facts:
    """Where the file creates a cluster and where node groups, as the cache keeps them ([]: neither)."""
    if relative.endswith(".tf"):
        made, pooled = _terraform(relative, text)
    elif _EKSCTL.search(text) and _EKSCTL_KIND.search(text):
        made = f"{relative}:{_line(text, _EKSCTL_KIND)}"
        pooled = f"{relative}:{_line(text, _EKSCTL_POOLS)}" if _EKSCTL_POOLS.search(text) else ""
    else:
        return []
    return [made, pooled] if made or pooled else []


def _valid_facts(facts: list[Any]) -> bool:
    return not facts or (len(facts) == 2 and all(isinstance(fact, str) for fact in facts))


_READER = ("setup-clusters-v1.json", _facts, _valid_facts)


def _line(text: str, pattern: re.Pattern[str]) -> int:
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _terraform(relative: str, text: str) -> tuple[str, str]:
    """Where the file creates a cluster and where node groups ("" each when it does not)."""
    if not any(word in text for word in ("resource", "module")):
        return "", ""
    try:
        blocks = hcl.parse(text[:MAX_BYTES])
    except hcl.HclError:
        return "", ""
    made = pooled = ""
    for block in blocks:
        kind = block.labels[0] if block.labels else ""
        source = block.attributes.get("source")
        cluster = (block.type == "resource" and kind in CLUSTER_RESOURCES) or (
            block.type == "module"
            and (
                (isinstance(source, str) and any(module in source for module in CLUSTER_MODULES))
                or kind in CLUSTER_MODULE_NAMES
            )
        )
        if cluster and not made:
            made = f"{relative}:{block.line}"
        if not pooled:
            words = [a for a in block.attributes if a in POOL_ATTRIBUTES and block.attributes[a] not in ({}, [], None)]
            words += [b.type for b in block.blocks if b.type in POOL_ATTRIBUTES or b.type == "node_pool"]
            if block.type == "resource" and kind in POOL_RESOURCES:
                words.append(kind)
            if words and (cluster or block.type == "resource"):
                pooled = f"{relative}:{block.line} ({words[0]})"
    return made, pooled
