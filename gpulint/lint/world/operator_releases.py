"""The Knative Serving, Kueue and KubeRay releases the linted files install, each with where it is written (the walk is
chart_releases.operator_installs; the readers, what each operator's install writes, are the operators' modules).

Knative Serving (gpulint/kube/knative.py serving_releases): a Serving Deployment's version label or image tag, a
KnativeServing's spec.version. Kueue (gpulint/kube/operators/kueue.py): the controller image's tag, a release of
the ``kueue`` chart (its values' image tag, else its version). KubeRay (gpulint/kube/operators/kuberay.py): the
operator image's tag, a release of the ``kuberay-operator`` chart (likewise).
"""

from __future__ import annotations

from typing import Any

from gpulint.kube import knative
from gpulint.kube.kai_admission import image_releases
from gpulint.kube.kserve_runtimes import controller_releases
from gpulint.kube.operators import kuberay, kueue
from gpulint.lint.inputs.linted_set import LintedSet
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
    KubeRay): what a live read keeps of its containers."""
    return bool(
        image_releases(deployment)
        or controller_releases(deployment)
        or any(reader.deployment(deployment) for reader in (KNATIVE, KUEUE, KUBERAY))
    )
