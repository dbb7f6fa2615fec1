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

Flux's bootstrap layout is the third: ``flux bootstrap --path=clusters/<name>`` gives each cluster a folder, and the
Flux Kustomizations there name in ``spec.path`` the folders that deploy to it (``./kubernetes/apps/main``). With two
or more such folders, each is a cluster that also holds the folders only it builds (ClusterRoot.builds).

Walked as setup_walk walks (file_walk.Walk: .gitignore and ``exclude`` honoured, at most setup_walk.MAX_FILES
files, the first MAX_BYTES of each, no link followed), over the work trees of the sources, once per run and only
when the run holds a cluster's node pool, queue or quota.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.lint.inputs import hcl
from gpulint.lint.inputs.file_walk import Selection, read_head
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
    # the folders (real paths) the Flux Kustomizations of a `clusters/<name>` folder build: that cluster's too
    builds: tuple[str, ...] = ()
    fixture: bool = False  # a test or example folder (FIXTURE_FOLDERS): ``where`` is its path, "tests/"

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
            for folder in (root.folder, *root.builds):
                if is_within(real, folder) and folder.count(os.sep) > depth:
                    best, depth = index, folder.count(os.sep)
        return best


NO_ROOTS = ClusterRoots()

# A repository's test, fixture and example folders (Karpenter's examples/ and test/, a chart's tests/, testdata/ of
# Go code): what describes a cluster there is a fixture of the workloads beside it, not the cluster the repository's
# other workloads deploy to, and theirs is not an example's (issue #28 §2; measured in docs/precision.md).
FIXTURE_FOLDERS = frozenset({"test", "tests", "testdata", "e2e", "fixtures", "examples", "example", "hack"})


def with_fixtures(roots: ClusterRoots, trees: Sequence[str], files: Iterable[str]) -> ClusterRoots:
    """``roots`` and, as a cluster of its own, each outermost fixture folder of the work trees ``trees`` that holds
    one of ``files`` (the linted ones and the repository index's): its pools are its own files' only, and its files
    see no other folder's pools. A folder already a root stays that root."""
    known = {folder for root in roots.roots for folder in (root.folder, *root.builds)}
    found: dict[str, ClusterRoot] = {}
    seen: set[str] = set()
    for file in files:
        folder = os.path.dirname(file)
        if folder in seen:
            continue
        seen.add(folder)
        fixture = fixture_folder(os.path.realpath(folder), trees)
        if fixture and fixture not in known and fixture not in found:
            where = os.path.relpath(fixture, _tree_of(fixture, trees)) + "/"
            found[fixture] = ClusterRoot(fixture, where, fixture=True)
    if not found:
        return roots
    return ClusterRoots((*roots.roots, *sorted(found.values(), key=lambda root: root.folder)))


# a Cluster API Cluster (cluster.x-k8s.io): a file that holds one with its MachineDeployments is one cluster
_CAPI_API = re.compile(r"^apiVersion:\s*['\"]?cluster\.x-k8s\.io/", re.MULTILINE)
_CAPI_CLUSTER = re.compile(r"^kind:\s*['\"]?Cluster['\"]?\s*$", re.MULTILINE)


def with_cluster_files(roots: ClusterRoots, pooled: Iterable[str], trees: Sequence[str]) -> ClusterRoots:
    """``roots`` and, when two or more of the files ``pooled`` (those holding Cluster API pools) each hold a Cluster
    API ``Cluster`` too, each such file as a cluster of its own: a cluster template per file (kubernetes-sigs/
    cluster-api-provider-azure ``templates/cluster-template-*.yaml``, ``clusterctl generate cluster --flavor``) or a
    test's cluster, its ``${CLUSTER_NAME}-md-0`` not the next file's. One such file alone is the repository's cluster,
    as it was."""
    found: list[ClusterRoot] = []
    for file in dict.fromkeys(os.path.realpath(file) for file in pooled):
        text = read_head(file, MAX_BYTES).decode("utf-8", errors="replace")
        cluster = _CAPI_CLUSTER.search(text)
        if cluster is None or _CAPI_API.search(text) is None:
            continue
        tree = _tree_of(file, trees)
        shown = os.path.relpath(file, tree) if tree else os.path.basename(file)
        found.append(ClusterRoot(file, f"{shown}:{text.count(chr(10), 0, cluster.start()) + 1}"))
    if len(found) < 2:
        return roots
    known = {root.folder for root in roots.roots}
    return ClusterRoots((*roots.roots, *(root for root in found if root.folder not in known)))


def fixture_folder(real: str, trees: Sequence[str]) -> str:
    """The outermost fixture folder (real path) that holds the real folder ``real`` below its work tree ("": none)."""
    tree = _tree_of(real, trees)
    if not tree or real == tree:
        return ""
    parts = os.path.relpath(real, tree).split(os.sep)
    for depth, part in enumerate(parts, 1):
        if part in FIXTURE_FOLDERS:
            return os.path.join(tree, *parts[:depth])
    return ""


def _tree_of(real: str, trees: Sequence[str]) -> str:
    """The deepest of ``trees`` that holds ``real`` ("": none)."""
    holding = [tree for tree in trees if is_within(real, tree)]
    return max(holding, key=len) if holding else ""


def cluster_roots(sources: Sequence[Source], exclude: Sequence[str] = ()) -> ClusterRoots:
    """The cluster roots of the work trees of the ``sources`` (read when the run holds a pool, a queue or a quota:
    a file linted alone, as pre-commit runs it, is judged by the pools the repository index reads)."""
    trees = work_trees(sources)
    if not trees:
        return NO_ROOTS
    known = known_contents(sources)
    found: dict[str, ClusterRoot] = {}
    for tree in trees:
        for root in roots_of_tree(tree, exclude, known):
            kept = found.get(root.folder)
            if kept is None or (not kept.pools_elsewhere and root.pools_elsewhere):
                found[root.folder] = (
                    root if kept is None else ClusterRoot(kept.folder, kept.where, root.pools_elsewhere, kept.builds)
                )
    return ClusterRoots(tuple(found.values()))


def work_trees(sources: Sequence[Source]) -> list[str]:
    """The work trees of the ``sources``, each once and in order."""
    return list(dict.fromkeys(tree for source in sources if (tree := root_of(source)) is not None))


def roots_of_tree(
    tree: str, exclude: Sequence[str] = (), known: Mapping[str, bytes] | None = None
) -> list[ClusterRoot]:
    clusters: dict[str, str] = {}  # folder -> where
    pools: dict[str, str] = {}
    flux: dict[str, tuple[str, list[str]]] = {}  # a clusters/<name> folder -> where, the folders it builds
    for relative, facts in setup_facts(tree, CLUSTER_FILES, _READER, exclude, known):
        if len(facts) == 4:  # a Flux Kustomization of a clusters/<name> folder
            folder = os.path.realpath(os.path.join(tree, facts[2]))
            built = flux.setdefault(folder, (facts[3].split("\n", 1)[0], []))[1]
            built.extend(os.path.realpath(os.path.join(tree, p)) for p in facts[3].split("\n")[1:])
            continue
        if not facts:
            continue
        folder = os.path.realpath(os.path.join(tree, os.path.dirname(relative)))
        made, pooled = facts
        if made:
            clusters.setdefault(folder, made)
        if pooled:
            pools.setdefault(folder, pooled)
    roots = [ClusterRoot(folder, where, pools.get(folder, "")) for folder, where in clusters.items()]
    return roots + _flux_clusters(flux, clusters)


def _flux_clusters(flux: Mapping[str, tuple[str, list[str]]], made: Mapping[str, str]) -> list[ClusterRoot]:
    """Flux's ``clusters/<name>`` layout: each such folder bootstraps one cluster, and the folders its Flux
    Kustomizations name in ``spec.path`` (``./kubernetes/apps/main``) deploy to it. With two or more, each is a
    cluster (one alone is the repository's one cluster, as without it); a folder two clusters build is shared,
    in neither; a folder Terraform or eksctl already makes a cluster of is left to that."""
    if len(flux) < 2:
        return []
    claims: dict[str, int] = {}
    for _, built in flux.values():
        for folder in set(built):
            claims[folder] = claims.get(folder, 0) + 1
    return [
        ClusterRoot(folder, where, "", tuple(sorted({b for b in built if claims[b] == 1 and b != folder})))
        for folder, (where, built) in flux.items()
        if folder not in made
    ]


def _facts(relative: str, text: str) -> Facts:
    """Where the file creates a cluster and where node groups, as the cache keeps them ([]: neither); for a Flux
    Kustomization in a ``clusters/<name>`` folder: ["", "", that folder, "FILE:LINE" and each spec.path, one a
    line]."""
    if relative.endswith(".tf"):
        made, pooled = _terraform(relative, text)
    elif _EKSCTL.search(text) and _EKSCTL_KIND.search(text):
        made = f"{relative}:{_line(text, _EKSCTL_KIND)}"
        pooled = f"{relative}:{_line(text, _EKSCTL_POOLS)}" if _EKSCTL_POOLS.search(text) else ""
    else:
        return _flux_facts(relative, text)
    return [made, pooled] if made or pooled else []


# a Flux bootstrap folder: clusters/<name>/... (flux bootstrap --path=clusters/<name>)
_CLUSTERS_FOLDER = re.compile(r"^(?:.*/)?clusters/[^/]+(?=/)")
_FLUX_KUSTOMIZATION = re.compile(r"^apiVersion:\s*['\"]?kustomize\.toolkit\.fluxcd\.io/", re.MULTILINE)
_SPEC_PATH = re.compile(r"^  path:\s*['\"]?(\.?/?[\w./-]+?)['\"]?\s*(?:#.*)?$", re.MULTILINE)


def _flux_facts(relative: str, text: str) -> Facts:
    """A Flux Kustomization's ``spec.path`` values, read by line (``  path:`` under ``spec:``; one of variables or
    leading out of the source is no folder), in a file under a ``clusters/<name>`` folder."""
    folder = _CLUSTERS_FOLDER.match(relative)
    if folder is None or _FLUX_KUSTOMIZATION.search(text) is None:
        return []
    paths = [found.group(1) for found in _SPEC_PATH.finditer(text[:MAX_BYTES])]
    paths = [path for path in paths if ".." not in path.split("/") and path.strip("./")]
    return ["", "", folder.group(), "\n".join([f"{relative}:{_line(text, _FLUX_KUSTOMIZATION)}", *paths])]


def _valid_facts(facts: list[Any]) -> bool:
    return not facts or (len(facts) in (2, 4) and all(isinstance(fact, str) for fact in facts))


_READER = ("setup-clusters-v2.json", _facts, _valid_facts)


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
