"""The releases a helmfile, a kustomization or a Zarf package gives the GPU stack's charts of a chart repository, as objects at their
entries: their values (files read, inline maps placed) are the settings lint/world/chart_releases.py reads."""

from __future__ import annotations

import os
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.lint.findings import ObjectRef
from gpulint.lint.inputs.objects import REMOTE_BASES, KubeObject, ParsedFile
from gpulint.lint.inputs.render.layout import KUSTOMIZATION_FILES
from gpulint.lint.inputs.render.releases import remote_charts

# The charts whose releases are read: a release of any other remote chart is nothing gpulint reads (KAI's and
# Kueue's and KubeRay's for their versions: lint/world/kai_install.py, operator_releases.py).
REMOTE_CHARTS = frozenset({"gpu-operator", "nvidia-device-plugin", "kai-scheduler", "kueue", "kuberay-operator"})


def with_chart_entries(parsed: ParsedFile) -> ParsedFile:
    """The file's objects and, after them, each release of a GPU stack chart its documents give (a file as
    written, never a render's output)."""
    for document in parsed.loaded.documents:
        for found in remote_charts(parsed.path, document.data, REMOTE_CHARTS):
            ref = ObjectRef("", found.form, found.namespace, found.name)
            parsed.objects.append(KubeObject(found.as_data(), document, found.entry, ref))
        bases = remote_bases(parsed.path, document.data)
        if bases is not None:
            ref = ObjectRef("", REMOTE_BASES, "", parsed.path)
            parsed.objects.append(KubeObject(bases, document, (), ref))
    return parsed


def remote_bases(path: str, data: Any) -> dict[str, Any] | None:
    """A kustomization's entries that name a URL (kustomize fetches those from another repository) and its images'
    new tags, as the object operator_releases reads; None for another document, or a kustomization with no URL."""
    if os.path.basename(path) not in KUSTOMIZATION_FILES or not isinstance(data, dict):
        return None
    entries = [text(e) for key in ("resources", "bases", "components") for e in sequence(data.get(key))]
    remote = [entry for entry in entries if "://" in entry or entry.startswith(("github.com/", "git@"))]
    images = [
        {"name": text(image.get("newName")) or text(image.get("name")), "newTag": text(image.get("newTag"))}
        for image in map(mapping, sequence(data.get("images")))
        if text(image.get("newTag"))
    ]
    if not remote:
        return None
    return {"kind": REMOTE_BASES, "metadata": {"name": path}, "resources": remote, "images": images}
