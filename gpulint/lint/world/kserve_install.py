"""The KServe release the linted files install, where it is written: the controller's image tag, or a Flux
HelmRelease / Argo CD Application of KServe's chart (its version, and the values that decide its runtimes).

Sources, kserve/kserve: config/manager/manager.yaml and charts/kserve-resources templates/deployment.yaml
(v0.11.0-v0.20.0): the controller Deployment ``kserve-controller-manager`` runs ``kserve/kserve-controller``
tagged with the release; the chart is named ``kserve`` in charts/kserve-resources up to v0.16.0 and
``kserve-resources`` from v0.17.0, which leaves the ClusterServingRuntimes to ``kserve-runtime-configs``; each
chart's version is the release (``v0.14.0``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig
from gpulint.kube.kserve_runtimes import KServeInstall, controller_releases, release_minor
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.world.chart_releases import ChartValues, ReleaseReader, chart_version, operator_installs

CHARTS = ("kserve", "kserve-resources", "kserve-runtime-configs")
# kserve-resources v0.14.0-v0.16.0 values.yaml (false by default); kserve-runtime-configs from v0.17.0
_DEV_SHM = ("kserve", "servingruntime", "huggingfaceserver", "devShm", "enabled")


@dataclass(frozen=True)
class FoundInstall:
    install: KServeInstall
    where: str  # as a note names it: "HelmRelease kserve", "Deployment kserve/kserve-controller-manager"


def kserve_installs(linted: LintedSet) -> tuple[FoundInstall, ...]:
    """Every KServe release the linted files install (once per linted set): a repository may hold several
    clusters' installs, so a verdict stands only where all of them agree."""
    found: tuple[FoundInstall, ...] = linted.fact("kserve installs", _installs, linted)
    return found


def _installs(linted: LintedSet) -> tuple[FoundInstall, ...]:
    return tuple(FoundInstall(install, where) for install, where in operator_installs(linted, KSERVE))


def _controller_installs(deployment: dict[str, Any]) -> list[KServeInstall]:
    return [KServeInstall(minor) for minor in controller_releases(deployment)]


def _chart_install(data: dict[str, Any], given: ChartValues) -> KServeInstall | None:
    if given.chart not in CHARTS:
        return None
    minor = release_minor(chart_version(data, given))
    if minor is None:
        return None
    enabled = dig(given.values, *_DEV_SHM)
    if isinstance(enabled, bool):
        dev_shm: bool | None = enabled
    else:
        dev_shm = None if enabled is not None or given.outside("devShm") else False
    return KServeInstall(minor, chart_dev_shm=dev_shm)


KSERVE = ReleaseReader(_controller_installs, _chart_install)
