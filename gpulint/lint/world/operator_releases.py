"""The Knative Serving, Kueue and KubeRay releases the linted files install, each with where it is written (the walk is
chart_releases.operator_installs; the readers, what each operator's install writes, are the operators' modules).

Knative Serving (gpulint/kube/knative.py serving_releases): a Serving Deployment's version label or image tag, a
KnativeServing's spec.version. Kueue (gpulint/kube/operators/kueue.py): the controller image's tag, a release of
the ``kueue`` chart (its values' image tag, else its version). KubeRay (gpulint/kube/operators/kuberay.py): the
operator image's tag, a release of the ``kuberay-operator`` chart (likewise). Volcano, the Training Operator,
JobSet and LeaderWorkerSet (their modules' INSTALLED): their images' tags, a release of their chart, and a git
reference to their repository: a kustomization's remote base (``?ref=v1.8.1``) or release asset, its ``images``
newTag, a Flux GitRepository's tag, an Argo CD git source's targetRevision.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from gpulint.kube import knative
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.kai_admission import image_releases
from gpulint.kube.kserve_runtimes import controller_releases
from gpulint.kube.operators import jobset, kuberay, kueue, lws, training_operator, volcano
from gpulint.kube.releases import Installed, chart_release, git_release, reference
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.objects import REMOTE_BASES
from gpulint.lint.world.chart_releases import ChartValues, ReleaseReader, chart_version, operator_installs

Found = tuple[tuple[str, str], ...]  # (the release as written, "": none; where it is written)


def _no_chart(_data: dict[str, Any], _given: ChartValues) -> str | None:
    return None  # Knative Serving ships no chart of its own (the operator's chart installs the operator)


def _kueue_chart(data: dict[str, Any], given: ChartValues) -> str | None:
    return kueue.chart_release(chart_version(data, given), given.values) if given.chart == kueue.CHART else None


KNATIVE = ReleaseReader(
    knative.serving_releases, _no_chart, (((knative.OPERATOR_GROUP, knative.OPERATOR_KIND), knative.operator_releases),)
)
KUEUE = ReleaseReader(kueue.controller_releases, _kueue_chart)


def _kuberay_chart(data: dict[str, Any], given: ChartValues) -> str | None:
    return kuberay.chart_release(chart_version(data, given), given.values) if given.chart == kuberay.CHART else None


KUBERAY = ReleaseReader(kuberay.operator_releases, _kuberay_chart)


GIT_REPOSITORY = ("source.toolkit.fluxcd.io", "GitRepository")


def _chart(installed: Installed, data: dict[str, Any], given: ChartValues) -> str | None:
    """A release of the operator's chart, or an Argo CD git source of its repository at a revision."""
    if given.chart in installed.charts:
        return chart_release(chart_version(data, given), given.values, installed.tag_value)
    source = mapping(dig(data, *given.chart_path))
    if given.chart or git_release(text(source.get("repoURL")), installed.repositories) is None:
        return None
    written = reference(text(source.get("targetRevision")))
    return written if installed.mine(written) else None


def _remote_bases(installed: Installed, data: dict[str, Any]) -> list[str]:
    """The releases a kustomization's remote bases and release assets pin, and the tags it gives the images."""
    found = [
        release
        for entry in sequence(data.get("resources"))
        if (release := git_release(text(entry), installed.repositories)) is not None
    ]
    for image in map(mapping, sequence(data.get("images"))):
        if any(text(image.get("name")).endswith(repository) for repository in installed.images):
            found.append(text(image.get("newTag")))
    return [release for release in found if installed.mine(release)]


def _git_repository(installed: Installed, data: dict[str, Any]) -> list[str]:
    """A Flux GitRepository of the operator's repository: its tag ("" for a branch, a semver range, a commit)."""
    if git_release(text(dig(data, "spec", "url")), installed.repositories) is None:
        return []
    written = reference(text(dig(data, "spec", "ref", "tag")))
    return [written] if installed.mine(written) else []


def reader(installed: Installed) -> ReleaseReader[str]:
    """How an operator's releases are read, from where INSTALLED says it writes them."""
    return ReleaseReader(
        installed.image_releases,
        partial(_chart, installed),
        (
            (("", REMOTE_BASES), partial(_remote_bases, installed)),
            (GIT_REPOSITORY, partial(_git_repository, installed)),
        ),
    )


# The operators whose checks differ by release (kube/operators RELEASED), each read so.
READERS: dict[str, ReleaseReader[str]] = {
    "volcano": reader(volcano.INSTALLED),
    "training-operator": reader(training_operator.INSTALLED),
    "jobset": reader(jobset.INSTALLED),
    "lws": reader(lws.INSTALLED),
}


def installs(linted: LintedSet, operator: str) -> Found:
    """Every release of one of READERS' operators the linted files install (once per linted set and operator)."""
    found: Found = linted.fact(f"{operator} installs", _installs, linted, READERS[operator])
    return found


def knative_installs(linted: LintedSet) -> Found:
    """Every Knative Serving release the linted files install (once per linted set)."""
    found: Found = linted.fact("knative installs", _installs, linted, KNATIVE)
    return found


def kueue_installs(linted: LintedSet) -> Found:
    """Every Kueue release the linted files install (once per linted set)."""
    found: Found = linted.fact("kueue installs", _installs, linted, KUEUE)
    return found


def kuberay_installs(linted: LintedSet) -> Found:
    """Every KubeRay operator release the linted files install (once per linted set)."""
    found: Found = linted.fact("kuberay installs", _installs, linted, KUBERAY)
    return found


def _installs(linted: LintedSet, reader: ReleaseReader[str]) -> Found:
    return tuple(operator_installs(linted, reader))


def runs_an_operator(deployment: dict[str, Any]) -> bool:
    """Whether a Deployment runs a controller whose release a reader reads (KAI, KServe, Knative Serving, Kueue,
    KubeRay, READERS'): what a live read keeps of its containers."""
    return bool(
        image_releases(deployment)
        or controller_releases(deployment)
        or any(reader.deployment(deployment) for reader in (KNATIVE, KUEUE, KUBERAY, *READERS.values()))
    )
