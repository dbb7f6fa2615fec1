"""The GPU stack's charts as a GitOps object installs them (a Flux HelmRelease, an Argo CD Application): the
tolerations their values give the DaemonSets, read as Helm merges values (a list given replaces the chart's).

A chart the repository does not hold is not rendered, but its values are in the object: what they set is
known, and what they leave out is the chart's default (the table below, from each chart's values.yaml).
Values that come from elsewhere too (Flux valuesFrom, Argo valueFiles or parameters) leave a list the
inline values do not set unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gpu_stack import OPERATOR_OPERANDS, STACK_COMPONENTS, StackComponent
from gpulint.kube.refs import Path
from gpulint.kube.workloads import api_group
from gpulint.lint.inputs.loader import load_text

MAX_VALUES = 256 * 1024  # an Application's inline values: a chart's values file is a few hundred lines
_GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True)
class ChartDaemons:
    """Where a chart's values put the tolerations of the DaemonSets it makes, and their defaults."""

    component: StackComponent
    tolerations: tuple[str, ...]  # the values path
    default: tuple[dict[str, Any], ...]
    node_selection: bool  # the values' nodeSelector and affinity are the DaemonSet's
    default_affinity: dict[str, Any] | None = None
    # Helm's condition (Chart.yaml dependencies): the first of these values paths that is set decides
    enabled_by: tuple[tuple[str, ...], ...] = ()
    enabled_default: bool = True
    title: str = "DaemonSets"  # what the chart's findings call them ("the <chart> chart's <title>")

    def enabled(self, values: dict[str, Any]) -> bool:
        for path in self.enabled_by:
            value = dig(values, *path)
            if isinstance(value, bool):
                return value
        return self.enabled_default


_DEVICE_PLUGIN = next(c for c in STACK_COMPONENTS if c.name == "NVIDIA device plugin")
# NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml (v0.17): tolerations
# CriticalAddonsOnly and nvidia.com/gpu:NoSchedule (the device plugin and GFD DaemonSets). NVIDIA/gpu-operator
# deployments/gpu-operator/values.yaml: daemonsets.tolerations nvidia.com/gpu:NoSchedule, rendered into the
# ClusterPolicy's spec.daemonsets (templates/clusterpolicy.yaml), which every operand then carries.
# The device plugin chart's default affinity: a node NFD (pci-10de, or an NVIDIA CPU on Tegra) or the user
# (nvidia.com/gpu.present) marks as an NVIDIA GPU node.
_NVIDIA_NODE_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
                for key, value in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
_NFD_WORKER = next(c for c in STACK_COMPONENTS if c.name == "NFD worker")
# The device plugin chart's node-feature-discovery dependency (condition nfd.enabled,gfd.enabled: off unless one
# is set): its worker tolerates nvidia.com/gpu=present only (nfd.worker.tolerations, Equal "present").
_NFD_TOLERATIONS = (
    {"key": "node-role.kubernetes.io/master", "operator": "Equal", "value": "", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
)
CHARTS: dict[str, tuple[ChartDaemons, ...]] = {
    "nvidia-device-plugin": (
        ChartDaemons(
            _DEVICE_PLUGIN,
            ("tolerations",),
            ({"key": "CriticalAddonsOnly", "operator": "Exists"}, _GPU_TOLERATION),
            True,
            _NVIDIA_NODE_AFFINITY,
            (("devicePlugin", "enabled"),),
        ),
        ChartDaemons(
            _NFD_WORKER,
            ("nfd", "worker", "tolerations"),
            _NFD_TOLERATIONS,
            False,
            enabled_by=(("nfd", "enabled"), ("gfd", "enabled")),
            enabled_default=False,
            title="NFD worker",
        ),
    ),
    "gpu-operator": (ChartDaemons(OPERATOR_OPERANDS, ("daemonsets", "tolerations"), (_GPU_TOLERATION,), False),),
}


@dataclass(frozen=True)
class ChartRelease:
    """One GPU stack chart a GitOps object installs, with its DaemonSets' tolerations as the values make them."""

    chart: str
    daemons: ChartDaemons
    tolerations: list[Any]
    node_selector: dict[str, Any]
    affinity: dict[str, Any] | None  # None: none
    path: Path  # to the tolerations when written, else to the values (or the chart) to write them in
    written: bool


def chart_releases(data: dict[str, Any]) -> list[ChartRelease]:
    """The GPU stack charts a Flux HelmRelease or an Argo CD Application installs (empty for other objects, or
    when the tolerations come from values not in the object)."""
    group, kind = api_group(text(data.get("apiVersion"))), text(data.get("kind"))
    if group == "helm.toolkit.fluxcd.io" and kind == "HelmRelease":
        spec = mapping(data.get("spec"))
        chart = text(dig(spec, "chart", "spec", "chart"))
        outside = bool(sequence(spec.get("valuesFrom")))
        return _release(chart, mapping(spec.get("values")), ("spec", "values"), ("spec", "chart"), outside)
    if group == "argoproj.io" and kind == "Application":
        spec = mapping(data.get("spec"))
        sources: list[tuple[Path, Any]] = [(("spec", "source"), spec.get("source"))] if "source" in spec else []
        sources += [(("spec", "sources", i), s) for i, s in enumerate(sequence(spec.get("sources")))]
        return [release for base, source in sources for release in _argo_source(mapping(source), base)]
    return []


def _argo_source(source: dict[str, Any], base: Path) -> list[ChartRelease]:
    helm = mapping(source.get("helm"))
    outside = bool(sequence(helm.get("valueFiles"))) or any(
        "tolerations" in text(mapping(p).get("name")) for p in sequence(helm.get("parameters"))
    )
    if isinstance(helm.get("valuesObject"), dict):  # Argo CD: valuesObject wins over values
        return _release(text(source.get("chart")), helm["valuesObject"], (*base, "helm", "valuesObject"), base, outside)
    raw = helm.get("values")
    values: dict[str, Any] = {}
    if isinstance(raw, str) and raw.strip() and len(raw) <= MAX_VALUES:
        loaded = load_text("values", raw)
        documents = [d.data for d in loaded.documents if d.data is not None]
        if loaded.problems or len(documents) != 1 or not isinstance(documents[0], dict):
            return []  # values that do not read as a mapping (a template, a typo): nothing known
        values = documents[0]
    path = (*base, "helm", "values") if isinstance(raw, str) else base
    return _release(text(source.get("chart")), values, path, base, outside, inside_string=isinstance(raw, str))


def _release(
    chart: str, values: dict[str, Any], values_path: Path, chart_path: Path, outside: bool, inside_string: bool = False
) -> list[ChartRelease]:
    name = chart.rpartition("/")[2]
    found = []
    for daemons in CHARTS.get(name, ()):
        if daemons.enabled(values) or (outside and daemons.enabled_default):
            release = _daemons(name, daemons, values, values_path, chart_path, outside, inside_string)
            found += [release] if release is not None else []
    return found


def _daemons(
    name: str,
    daemons: ChartDaemons,
    values: dict[str, Any],
    values_path: Path,
    chart_path: Path,
    outside: bool,
    inside_string: bool,
) -> ChartRelease | None:
    written = dig(values, *daemons.tolerations)
    if written is None and outside:
        return None  # a values file or valuesFrom may set them
    if written is not None and not isinstance(written, list):
        return None
    tolerations = written if written is not None else list(daemons.default)
    affinity = values.get("affinity") if "affinity" in values else daemons.default_affinity
    if inside_string:
        path = values_path  # the finding is at the values string (no position inside it is kept)
    elif written is not None:
        path = (*values_path, *daemons.tolerations)
    else:
        path = values_path if values else chart_path
    return ChartRelease(
        name,
        daemons,
        tolerations,
        mapping(values.get("nodeSelector")) if daemons.node_selection else {},
        mapping(affinity) if daemons.node_selection and affinity is not None else None,
        path,
        written is not None,
    )


def daemon_spec(release: ChartRelease) -> dict[str, Any]:
    """The pod spec fields of the chart's DaemonSets that decide where they land."""
    spec: dict[str, Any] = {"tolerations": release.tolerations}
    if release.node_selector:
        spec["nodeSelector"] = release.node_selector
    if release.affinity:
        spec["affinity"] = release.affinity
    return spec
