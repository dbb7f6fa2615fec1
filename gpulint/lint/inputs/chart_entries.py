"""The releases a helmfile, a kustomization or a Zarf package gives the GPU stack's charts of a chart repository, as objects at their
entries: their values (files read, inline maps placed) are the settings lint/world/chart_releases.py reads."""

from __future__ import annotations

from gpulint.lint.findings import ObjectRef
from gpulint.lint.inputs.objects import KubeObject, ParsedFile
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
    return parsed
