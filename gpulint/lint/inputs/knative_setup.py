"""Knative feature flags a repository's own setup turns on, read and never run.

A repository that serves through Knative often enables the flags its pods need outside any manifest: a
setup script or CI job runs ``kubectl patch configmap config-features -n knative-serving --patch
'{"data":{"kubernetes.podspec-nodeselector":"enabled"}}'`` (NVIDIA/nim-deploy kserve/scripts/setup.sh,
otwld/ollama-helm's CI), or its install guide sets them in the KnativeServing resource's
``spec.config.features`` (kserve/website, isvc-node-scheduling.md). Such a file says the cluster the
repository deploys to has the flag on; a field behind it is then not refused for want of it.

A file counts when it names the ConfigMap (``config-features``) or a KnativeServing resource and sets the flag
to ``enabled`` or ``allowed`` (Knative's values, case-insensitive: knative/serving pkg/apis/config/features.go
asFlag). Shell scripts, Makefiles, GitHub workflows, Markdown and YAML files are read.

An input of the run, like the sources: read at most once per run (run_setup.RunSetup, on the first read by the
check: only when neither the linted files nor the inventory hold config-features; a run that forks its workers
reads it before they fork when one of its resolvers lacks config-features, lint.run, so every worker reads the
same), over the work tree of each linted file that may hold an object the flags gate,
walked as ``gpulint check DIR`` walks (file_walk.Walk: .gitignore, ``.git/info/exclude`` and the configured
``exclude`` honoured), the sources' bytes reused. Bounded: at most MAX_FILES files, the first MAX_BYTES of each,
hidden folders (but ``.github``) and vendored trees skipped, no symbolic link followed. An admission review, or
standard input without a file name, has no work tree: nothing is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulint.lint.inputs.file_walk import Selection
from gpulint.lint.inputs.repo_index import work_tree
from gpulint.lint.inputs.setup_walk import Facts, known_contents, roots_mentioning, setup_facts
from gpulint.lint.inputs.sources import Source

SETUP_FILES = Selection(
    suffixes=(".sh", ".bash", ".mk", ".md", ".mdx", ".yaml", ".yml"),
    names=frozenset({"Makefile", "makefile", "GNUmakefile"}),
    hidden=frozenset({".github"}),
    skipped=frozenset({"node_modules", "vendor", "third_party"}),
)
# Text without which a source holds no object whose pod fields the flags gate (a Knative Service or Configuration,
# a KServe or KFServing InferenceService): a run whose sources hold none reads no setup file.
GATED = (b"serving.knative.dev", b"InferenceService")
_CONTEXT = re.compile(r"config-features|\bKnativeServing\b")
# "kubernetes.podspec-nodeselector": "enabled", kubernetes.podspec-tolerations: enabled, ...=Enabled
_ENABLED = re.compile(r"(kubernetes\.podspec-[a-z0-9-]+)[\"']?\s*[:=]\s*[\"']?(?:enabled|allowed)\b", re.IGNORECASE)


@dataclass(frozen=True)
class KnativeSetup:
    """The flags each work tree's setup files enable: work tree (real path) -> flag -> the file (relative to it)
    that first enables it."""

    by_root: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def enabled(self, path: str) -> Mapping[str, str]:
        """The flags the setup of the work tree holding the file ``path`` enables ({}: none, or no file on disk)."""
        if not self.by_root or not os.path.isfile(path):
            return {}
        root = work_tree(os.path.dirname(os.path.realpath(path)))
        return self.by_root.get(root, {}) if root is not None else {}


NO_SETUP = KnativeSetup()


def knative_setup(sources: Sequence[Source], exclude: Sequence[str] = ()) -> KnativeSetup:
    """The setup of the work trees of the ``sources`` that may hold an object the flags gate, each walked once."""
    roots = roots_mentioning(sources, GATED)
    if not roots:
        return NO_SETUP
    known = known_contents(sources)
    return KnativeSetup({root: enabled_flags(root, exclude, known) for root in roots})


def enabled_flags(root: str, exclude: Sequence[str] = (), known: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """Flag -> the file (relative to ``root``) that first enables it, over the work tree at ``root``; ``known``:
    files already read (absolute path -> bytes), not read again."""
    found: dict[str, str] = {}
    for path, flags in setup_facts(root, SETUP_FILES, _READER, exclude, known):
        for flag in flags:
            found.setdefault(flag, path)
    return found


def _flags(_path: str, text: str) -> Facts:
    """The flags a file enables, in its order (kept beside the repository index: setup_walk.setup_facts)."""
    return [match.group(1).lower() for match in _ENABLED.finditer(text)] if _CONTEXT.search(text) else []


def _valid_flags(flags: list[Any]) -> bool:
    return all(isinstance(flag, str) for flag in flags)


_READER = ("setup-knative-v1.json", _flags, _valid_flags)
