"""The GKE clusters a repository's own files create, and which of them are Autopilot: read, never run.

A repository that deploys GPU workloads to GKE often creates its cluster too, and says there whether it is
Autopilot: Terraform's ``google_container_cluster`` with ``enable_autopilot = true`` (hashicorp/terraform-provider-
google; GoogleCloudPlatform/accelerated-platforms ``container_cluster_ap/container_cluster.tf``), the
``terraform-google-modules/kubernetes-engine`` modules ``beta-autopilot-private-cluster`` and
``beta-autopilot-public-cluster`` (GoogleCloudPlatform/ai-on-gke ``modules/gke-autopilot-*``), ``gcloud container
clusters create-auto`` in a script, Makefile, workflow or install guide, Config Connector's ``ContainerCluster``
with ``spec.enableAutopilot: true`` or Crossplane's ``container.gcp.upbound.io`` ``Cluster`` with
``enableAutopilot: true``. The same files say Standard: a ``google_container_cluster`` without
``enable_autopilot``, a ``google_container_node_pool``, the module's other clusters, ``gcloud container clusters
create`` or ``node-pools create``, a ``ContainerNodePool``. A mode written as a variable
(``enable_autopilot = var.autopilot``) is a cluster of unknown mode.

A repository is not one cluster: a file deploys to the clusters whose words lie nearest to it (the deepest
folder they share with it); it is on Autopilot only when every one of them is (``ClusterWords.autopilot``).

Walked as knative_setup walks (setup_walk.setup_facts: file_walk.Walk, .gitignore and ``exclude`` honoured, at
most MAX_FILES files, the first MAX_BYTES of each, no link followed), over the work tree of each source that may
hold a GPU pod, once per run on the first read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulint.lint.inputs.file_walk import Selection
from gpulint.lint.inputs.repo_index import work_tree
from gpulint.lint.inputs.setup_walk import Facts, known_contents, roots_mentioning, setup_facts
from gpulint.lint.inputs.sources import Source

CLUSTER_FILES = Selection(
    suffixes=(".tf", ".sh", ".bash", ".mk", ".md", ".mdx", ".yaml", ".yml"),
    names=frozenset({"Makefile", "makefile", "GNUmakefile"}),
    hidden=frozenset({".github"}),
    skipped=frozenset({"node_modules", "vendor", "third_party"}),
)
# Text without which a source holds no pod Autopilot's GPU rules judge: a run whose sources hold none walks nothing.
GPU_WORDS = (b"nvidia.com/gpu",)
# Text without which a file says nothing of a GKE cluster (a cheap test before any pattern runs): substring tests,
# since a pattern of alternatives is tried at every position of every pod manifest a repository holds.
_CONTEXT_WORDS = (
    "google_container_",
    "kubernetes-engine/google",
    "ContainerCluster",
    "ContainerNodePool",
    "container.gcp.upbound.io",
)
_GCLOUD_CONTEXT = re.compile(r"container\s+(?:clusters|node-pools)")  # only in a file that names gcloud
# --- Terraform (hashicorp/terraform-provider-google; terraform-google-modules/terraform-google-kubernetes-engine)
# a string (kept: a module source holds "//modules/"), else a comment (dropped)
_TF_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|(?:#|//)[^\n]*', re.DOTALL)
_TF_BLOCK = re.compile(r'^[ \t]*(resource|module)\s+"([^"]+)"(?:\s+"[^"]*")?\s*\{', re.MULTILINE)
_TF_AUTOPILOT = re.compile(r"^\s*enable_autopilot\s*=\s*(\S+)", re.MULTILINE)
_TF_SOURCE = re.compile(r'^\s*source\s*=\s*"([^"]*)"', re.MULTILINE)
_ENGINE_MODULES = "terraform-google-modules/kubernetes-engine/google"
# --- gcloud (cloud.google.com/sdk/gcloud/reference/container/clusters/create-auto): a command that starts a line
# (after a prompt, a list dash, a `run:` key or make's `@`), never words in prose
_GCLOUD = re.compile(
    r"^[ \t]*(?:[-$>@]\s*)?(?:run:\s*)?(?:sudo\s+)?gcloud\s+(?:(?:alpha|beta)\s+)?container\s+"
    r"(clusters\s+create-auto|clusters\s+create|node-pools\s+create)(?=\s|\\|$)",
    re.MULTILINE,
)
# --- Config Connector (container.cnrm.cloud.google.com ContainerCluster) and Crossplane (container.gcp.upbound.io)
_DOCUMENT = re.compile(r"^---[ \t]*$", re.MULTILINE)
_KIND = re.compile(r"^kind:\s*['\"]?(\w+)", re.MULTILINE)
_API_VERSION = re.compile(r"^apiVersion:\s*['\"]?([\w.-]+)/", re.MULTILINE)
_YAML_AUTOPILOT = re.compile(r"^\s*enableAutopilot:\s*(\S+)", re.MULTILINE)
_CLUSTER_KINDS = {("container.cnrm.cloud.google.com", "ContainerCluster"), ("container.gcp.upbound.io", "Cluster")}
_POOL_KINDS = {("container.cnrm.cloud.google.com", "ContainerNodePool"), ("container.gcp.upbound.io", "NodePool")}


@dataclass(frozen=True)
class ClusterWord:
    """A file's word on a GKE cluster: where (relative to its work tree), and whether Autopilot (None: the mode
    is a variable the file does not resolve)."""

    path: str
    line: int
    autopilot: bool | None
    says: str  # what the file writes, briefly: `enable_autopilot = true`

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class ClusterWords:
    """The cluster words of each work tree: work tree (real path) -> its words, in walk order."""

    by_root: Mapping[str, tuple[ClusterWord, ...]] = field(default_factory=dict)

    def autopilot(self, path: str) -> ClusterWord | None:
        """The word that the file ``path`` deploys to GKE Autopilot: the nearest clusters' words (those sharing the
        deepest folder with it) all say Autopilot; None when any of them says Standard or leaves the mode to a
        variable, or the work tree creates no cluster."""
        if not self.by_root or not os.path.isfile(path):
            return None
        folder = os.path.dirname(os.path.realpath(path))
        root = work_tree(folder)
        words = self.by_root.get(root, ()) if root is not None else ()
        if not words or root is None:
            return None
        mine = _parts(os.path.relpath(folder, root))
        depth = {word: _shared(mine, _parts(os.path.dirname(word.path))) for word in words}
        deepest = max(depth.values())
        nearest = [word for word in words if depth[word] == deepest]
        return nearest[0] if all(word.autopilot is True for word in nearest) else None


NO_WORDS = ClusterWords()


def cluster_words(sources: Sequence[Source], exclude: Sequence[str] = ()) -> ClusterWords:
    """The cluster words of the work trees of the ``sources`` that may hold a GPU pod, each walked once."""
    roots = roots_mentioning(sources, GPU_WORDS)
    if not roots:
        return NO_WORDS
    known = known_contents(sources)
    return ClusterWords({root: tuple(words_of_tree(root, exclude, known)) for root in roots})


def words_of_tree(
    root: str, exclude: Sequence[str] = (), known: Mapping[str, bytes] | None = None
) -> list[ClusterWord]:
    """Every cluster word of the work tree at ``root`` (paths relative to it); what each file says kept beside the
    repository index (setup_walk.setup_facts)."""
    return [
        ClusterWord(path, line, autopilot, says)
        for path, facts in setup_facts(root, CLUSTER_FILES, _READER, exclude, known)
        for line, autopilot, says in facts
    ]


def _facts(path: str, text: str) -> Facts:
    """A file's cluster words as the cache keeps them: [line, autopilot, says] each."""
    return [[w.line, w.autopilot, w.says] for w in words_of_file(path, text)] if _says_cluster(text) else []


def _valid_facts(facts: list[Any]) -> bool:
    return all(
        isinstance(word, list)
        and len(word) == 3
        and type(word[0]) is int
        and (word[1] is None or type(word[1]) is bool)
        and isinstance(word[2], str)
        for word in facts
    )


_READER = ("setup-autopilot-v1.json", _facts, _valid_facts)


def _says_cluster(text: str) -> bool:
    return any(word in text for word in _CONTEXT_WORDS) or (
        "gcloud" in text and _GCLOUD_CONTEXT.search(text) is not None
    )


def words_of_file(path: str, text: str) -> list[ClusterWord]:
    """The cluster words of one file's text, by its kind (Terraform, YAML, or a script or guide)."""
    words = list(_terraform(path, text)) if path.endswith(".tf") else []
    if path.endswith((".yaml", ".yml")):
        words += _resources(path, text)
    if not path.endswith(".tf"):
        words += _gcloud(path, text)
    return words


def _terraform(path: str, text: str) -> Iterator[ClusterWord]:
    code = _TF_COMMENT.sub(_uncommented, text)
    for block in _TF_BLOCK.finditer(code):
        kind, name = block.group(1), block.group(2)
        body = _braced(code, block.end())
        line = code.count("\n", 0, block.start()) + 1
        if kind == "resource" and name in ("google_container_cluster", "google_container_node_pool"):
            setting = _TF_AUTOPILOT.search(body) if name == "google_container_cluster" else None
            if setting is None:
                yield ClusterWord(path, line, False, f'resource "{name}"')
            else:
                value = setting.group(1).strip()
                mode = True if value == "true" else False if value == "false" else None
                at = code.count("\n", 0, block.end() + setting.start(1)) + 1  # the setting's own line
                yield ClusterWord(path, at, mode, f"enable_autopilot = {value}")
        elif kind == "module":
            source = _TF_SOURCE.search(body)
            module = source.group(1).rpartition("//modules/")[2] if source is not None else ""
            if source is not None and _ENGINE_MODULES in source.group(1) and (not module or "cluster" in module):
                module = module or "kubernetes-engine"  # the root module: a Standard cluster
                yield ClusterWord(path, line, module.startswith("beta-autopilot-"), f"module {module}")


def _uncommented(match: re.Match[str]) -> str:
    """A string as it is; a comment as the line ends it spans (lines keep their numbers)."""
    text = match.group(0)
    return text if text.startswith('"') else "\n" * text.count("\n")


def _braced(code: str, start: int) -> str:
    """The text of a block from just after its ``{`` to its matching ``}`` (to the end when unclosed)."""
    depth = 1
    for index in range(start, len(code)):
        char = code[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return code[start:index]
    return code[start:]


def _resources(path: str, text: str) -> Iterator[ClusterWord]:
    starts = [0, *(m.end() for m in _DOCUMENT.finditer(text))]
    ends = [*(m.start() for m in _DOCUMENT.finditer(text)), len(text)]
    for start, end in zip(starts, ends, strict=True):
        document = text[start:end]
        kind, version = _KIND.search(document), _API_VERSION.search(document)
        if kind is None or version is None:
            continue
        shape = (version.group(1), kind.group(1))
        line = text.count("\n", 0, start + kind.start()) + 1
        if shape in _CLUSTER_KINDS:
            setting = _YAML_AUTOPILOT.search(document)
            value = setting.group(1).strip("'\"") if setting is not None else ""
            mode = True if value == "true" else None if value and value != "false" else False
            yield ClusterWord(path, line, mode, f"{shape[1]} enableAutopilot: {value or 'unset'}")
        elif shape in _POOL_KINDS:
            yield ClusterWord(path, line, False, shape[1])


def _gcloud(path: str, text: str) -> Iterator[ClusterWord]:
    for match in _GCLOUD.finditer(text):
        command = " ".join(match.group(1).split())
        line = text.count("\n", 0, match.start()) + 1
        yield ClusterWord(path, line, command == "clusters create-auto", f"gcloud container {command}")


def _parts(relative: str) -> tuple[str, ...]:
    return tuple(part for part in relative.replace(os.sep, "/").split("/") if part not in ("", "."))


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
