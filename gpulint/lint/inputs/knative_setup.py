"""Knative feature flags a repository's own setup turns on, read and never run.

A repository that serves through Knative often enables the flags its pods need outside any manifest: a
setup script or CI job runs ``kubectl patch configmap config-features -n knative-serving --patch
'{"data":{"kubernetes.podspec-nodeselector":"enabled"}}'`` (NVIDIA/nim-deploy kserve/scripts/setup.sh,
otwld/ollama-helm's CI), or its install guide sets them in the KnativeServing resource's
``spec.config.features`` (kserve/website, isvc-node-scheduling.md). Such a file says the cluster the
repository deploys to has the flag on; a field behind it is then not refused for want of it.

A file counts when it names the ConfigMap (``config-features``) or a KnativeServing resource and sets the flag
to ``enabled`` or ``allowed`` (Knative's values, case-insensitive: knative/serving pkg/apis/config/features.go
asFlag). Shell scripts, Makefiles, GitHub workflows, Markdown and YAML files are read. Bounded: at most
MAX_FILES files of at most MAX_BYTES each, hidden folders (but ``.github``) and vendored trees skipped.
"""

from __future__ import annotations

import os
import re

MAX_FILES = 5_000
MAX_BYTES = 1024 * 1024
_SUFFIXES = (".sh", ".bash", ".mk", ".md", ".mdx", ".yaml", ".yml")
_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
_SKIPPED = frozenset({"node_modules", "vendor", "third_party"})
_CONTEXT = re.compile(r"config-features|\bKnativeServing\b")
# "kubernetes.podspec-nodeselector": "enabled", kubernetes.podspec-tolerations: enabled, ...=Enabled
_ENABLED = re.compile(r"(kubernetes\.podspec-[a-z0-9-]+)[\"']?\s*[:=]\s*[\"']?(?:enabled|allowed)\b", re.IGNORECASE)


def enabled_flags(root: str) -> dict[str, str]:
    """Flag -> the file (relative to ``root``) that first enables it, over the repository at ``root``."""
    found: dict[str, str] = {}
    for path in _candidates(root):
        text = _read(path)
        if not text or not _CONTEXT.search(text):
            continue
        for match in _ENABLED.finditer(text):
            found.setdefault(match.group(1).lower(), os.path.relpath(path, root))
    return found


def _candidates(root: str) -> list[str]:
    out: list[str] = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in _SKIPPED and (not d.startswith(".") or d == ".github")
        )
        for name in sorted(names):
            if name in _NAMES or name.endswith(_SUFFIXES):
                out.append(os.path.join(directory, name))
                if len(out) >= MAX_FILES:
                    return out
    return out


def _read(path: str) -> str:
    if os.path.islink(path) or not os.path.isfile(path):
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_BYTES)
    except OSError:
        return ""
