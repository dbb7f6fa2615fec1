"""The KAI Scheduler releases the linted files install, where each is written: a KAI image's tag (the operator's
Deployment, or a component's), or a Flux HelmRelease / Argo CD Application / helmfile release of KAI's chart
(its version).

Sources, kai-scheduler/KAI-Scheduler deployments/kai-scheduler (v0.9.0-v0.17.0): the chart ``kai-scheduler``
(installed from oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler, its version the release: ``v0.17.0``) runs the
operator image ``<global.registry>/operator`` tagged with the release, and the operator the other components with
the same tag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.kai_admission import image_releases
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.world.chart_releases import ChartValues, ReleaseReader, chart_version, operator_installs

CHART = "kai-scheduler"


@dataclass(frozen=True)
class FoundKai:
    release: str  # as written: "v0.17.0", "${KAI_VERSION}" ("": the release pins none)
    where: str  # as a note names it: "HelmRelease kai-scheduler", "Deployment kai-scheduler/kai-operator"


def kai_installs(linted: LintedSet) -> tuple[FoundKai, ...]:
    """Every KAI release the linted files install (once per linted set): a repository may hold several
    clusters' installs, so a verdict stands only where all of them agree."""
    found: tuple[FoundKai, ...] = linted.fact("kai installs", _installs, linted)
    return found


def _installs(linted: LintedSet) -> tuple[FoundKai, ...]:
    return tuple(FoundKai(release, where) for release, where in operator_installs(linted, KAI))


def _chart(data: dict[str, Any], given: ChartValues) -> str | None:
    return chart_version(data, given) if given.chart == CHART else None


KAI = ReleaseReader(image_releases, _chart)
