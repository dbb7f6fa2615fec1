"""The GPU stack's charts as a GitOps object installs them (a Flux HelmRelease, an Argo CD Application): the
tolerations their values give the DaemonSets, read as Helm merges values (a list given replaces the chart's).

A chart the repository does not hold is not rendered, but its values are in the object: what they set is
known, and what they leave out is the chart's default (the table below, from each chart's values.yaml).
Values that come from elsewhere too (Flux valuesFrom, Argo valueFiles or parameters) leave a list the
inline values do not set unknown. The same charts released by a helmfile, a kustomization's helmCharts or a Zarf
package arrive as entry objects (inputs/chart_entries.py) whose values files are already read, layer by layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gpu_stack import OPERATOR_OPERANDS, STACK_COMPONENTS, StackComponent
from gpulint.kube.refs import Path
from gpulint.kube.workloads import api_group
from gpulint.lint.inputs.helm_values import coalesced
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.inputs.objects import RELEASE_FORMS

MAX_VALUES = 256 * 1024  # an Application's inline values: a chart's values file is a few hundred lines
# The objects that install a chart with values written in them: (group, kind). A GitOps object, or a release of a
# chart repository's chart in a helmfile, a kustomization or a Zarf package (inputs/render/releases.py
# remote_charts: its values files read, each layer where it is written).
CHART_INSTALLERS = (
    ("helm.toolkit.fluxcd.io", "HelmRelease"),
    ("argoproj.io", "Application"),
    *(("", form) for form in RELEASE_FORMS),
)
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


@dataclass(frozen=True)
class ChartValues:
    """A chart a GitOps object installs and the values written in the object."""

    chart: str  # the chart's name (the last part of a path or reference)
    values: dict[str, Any]
    values_path: Path  # to the values, or to the source when none are written
    chart_path: Path
    files: bool  # values also come from files or objects elsewhere (Flux valuesFrom, Argo valueFiles)
    parameters: tuple[str, ...]  # Argo CD helm.parameters names (--set, applied last)
    inside_string: bool  # the values are a YAML string (Argo helm.values): no position inside it is kept
    # the layers helm merges into ``values``, each (where it is, its values, the values file that holds them; "":
    # written in the object, where a position inside them is a position in the object); empty: ``values`` is one
    # layer at ``values_path``
    layers: tuple[tuple[Path, dict[str, Any], str], ...] = ()

    def placed(self, path: tuple[str, ...]) -> tuple[Path, bool, str]:
        """Where the value at ``path`` of the values is written: its own place (a layer written in the object), or
        the layer that holds it (a values string, or a values file, named)."""
        for where, values, file in reversed(self.layers):
            if dig(values, *path) is not None:
                return ((*where, *path), True, "") if not file else (where, False, file)
        if self.inside_string:
            return self.values_path, False, ""
        return (*self.values_path, *path), True, ""

    def outside(self, word: str) -> bool:
        """Whether values given elsewhere may set a value whose path holds ``word``."""
        return self.files or any(word in name for name in self.parameters)


def chart_values(data: dict[str, Any]) -> list[ChartValues]:
    """The charts a Flux HelmRelease, an Argo CD Application or a remote chart's release entry (a helmfile's, a
    kustomization's, a Zarf package's) installs, with the values written for them (empty for other objects, and for
    an Argo source whose values string does not read as a mapping)."""
    group, kind = api_group(text(data.get("apiVersion"))), text(data.get("kind"))
    if not group and kind in RELEASE_FORMS:
        return [_remote(data)]
    if group == "helm.toolkit.fluxcd.io" and kind == "HelmRelease":
        spec = mapping(data.get("spec"))
        chart = text(dig(spec, "chart", "spec", "chart"))
        files = bool(sequence(spec.get("valuesFrom"))) or bool(sequence(dig(spec, "chart", "spec", "valuesFiles")))
        values = mapping(spec.get("values"))
        return [ChartValues(_name(chart), values, ("spec", "values"), ("spec", "chart"), files, (), False)]
    if group == "argoproj.io" and kind == "Application":
        spec = mapping(data.get("spec"))
        sources: list[tuple[Path, Any]] = [(("spec", "source"), spec.get("source"))] if "source" in spec else []
        sources += [(("spec", "sources", i), s) for i, s in enumerate(sequence(spec.get("sources")))]
        return [found for base, source in sources for found in _argo_source(mapping(source), base)]
    return []


def _remote(data: dict[str, Any]) -> ChartValues:
    """A helmfile's, a kustomization's or a Zarf package's release of a chart repository's chart (as
    remote_charts gives it): its layers merged as helm merges them; a value given but not known is named in
    ``unknown`` ("": which ones is not known)."""
    layers = tuple(
        (
            tuple(mapping(layer).get("path") or ()),
            mapping(mapping(layer).get("values")),
            text(mapping(layer).get("file")),
        )
        for layer in sequence(data.get("layers"))
    )
    unknown = [text(name) for name in sequence(data.get("unknown"))]
    values: dict[str, Any] = {}
    for _where, layer, _file in layers:
        values = coalesced(values, layer)
    single = layers[0][0] if len(layers) == 1 and not layers[0][2] else ()
    return ChartValues(
        text(data.get("chart")),
        values,
        single,
        (),
        "" in unknown,
        tuple(name for name in unknown if name),
        False,
        layers,
    )


def chart_version(data: dict[str, Any], given: ChartValues) -> str:
    """The chart version a release pins, as written ("" when none): Flux's spec.chart.spec.version, Argo CD's
    source targetRevision, a helmfile's or a kustomization's version."""
    source = mapping(dig(data, *given.chart_path))
    return text(dig(source, "spec", "version")) or text(source.get("targetRevision")) or text(source.get("version"))


T = TypeVar("T")


@dataclass(frozen=True)
class ReleaseReader(Generic[T]):
    """How one operator's release is read where it is installed: from a Deployment (its images' tags, its labels),
    from one chart a chart installer releases (its version, its values; None: not the operator's chart), and from
    the operator's own kinds (a KnativeServing's spec.version), each ((group, kind), reader)."""

    deployment: Callable[[dict[str, Any]], Iterable[T]]
    chart: Callable[[dict[str, Any], ChartValues], T | None]
    objects: tuple[tuple[tuple[str, str], Callable[[dict[str, Any]], Iterable[T]]], ...] = ()


def operator_installs(linted: LintedSet, reader: ReleaseReader[T]) -> list[tuple[T, str]]:
    """Every release of one operator the linted files install, each with where it is written as a note names it
    ("Deployment kai-scheduler/kai-operator", "HelmRelease kserve"): the Deployments first, then each chart
    installer (CHART_INSTALLERS), then the operator's own objects."""
    found: list[tuple[T, str]] = []
    for obj in linted.of_kind("apps", "Deployment"):
        where = f"Deployment {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        found += [(release, where) for release in reader.deployment(obj.data)]
    for group, kind in CHART_INSTALLERS:
        for obj in linted.of_kind(group, kind):
            for given in chart_values(obj.data):
                release = reader.chart(obj.data, given)
                if release is not None:
                    found.append((release, f"{kind} {obj.ref.name}"))
    for (group, kind), read in reader.objects:
        for obj in linted.of_kind(group, kind):
            found += [(release, f"{kind} {obj.ref.name}") for release in read(obj.data)]
    return found


def _name(chart: str) -> str:
    return chart.rpartition("/")[2]


def _argo_source(source: dict[str, Any], base: Path) -> list[ChartValues]:
    helm = mapping(source.get("helm"))
    files = bool(sequence(helm.get("valueFiles")))
    parameters = tuple(text(mapping(p).get("name")) for p in sequence(helm.get("parameters")))
    chart = _name(text(source.get("chart")))
    if isinstance(helm.get("valuesObject"), dict):  # Argo CD: valuesObject wins over values
        return [
            ChartValues(chart, helm["valuesObject"], (*base, "helm", "valuesObject"), base, files, parameters, False)
        ]
    raw = helm.get("values")
    values: dict[str, Any] = {}
    if isinstance(raw, str) and raw.strip() and len(raw) <= MAX_VALUES:
        loaded = load_text("values", raw)
        documents = [d.data for d in loaded.documents if d.data is not None]
        if loaded.problems or len(documents) != 1 or not isinstance(documents[0], dict):
            return []  # values that do not read as a mapping (a template, a typo): nothing known
        values = documents[0]
    path = (*base, "helm", "values") if isinstance(raw, str) else base
    return [ChartValues(chart, values, path, base, files, parameters, isinstance(raw, str))]


def chart_releases(data: dict[str, Any]) -> list[ChartRelease]:
    """The GPU stack charts a Flux HelmRelease or an Argo CD Application installs (empty for other objects, or
    when the tolerations come from values not in the object)."""
    return [
        release
        for given in chart_values(data)
        for release in _release(
            given.chart,
            given.values,
            given.values_path,
            given.chart_path,
            given.outside("tolerations"),
            given.inside_string,
        )
    ]


def _release(
    chart: str, values: dict[str, Any], values_path: Path, chart_path: Path, outside: bool, inside_string: bool = False
) -> list[ChartRelease]:
    name = chart
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


@dataclass(frozen=True)
class EmbeddedConfigs:
    """Where a chart's values hold device plugin configurations that the chart turns into a ConfigMap."""

    files: tuple[str, ...]  # the values path of the mapping: configuration name -> the plugin's config file
    unless: tuple[str, ...] = ()  # a values path that, when set, names a ConfigMap of its own instead
    only_if: tuple[str, ...] = ()  # a values path that must be true for the ConfigMap to be made

    def configs(self, values: dict[str, Any]) -> dict[str, Any] | None:
        if self.unless and dig(values, *self.unless):
            return None
        if self.only_if and dig(values, *self.only_if) is not True:
            return None
        found = dig(values, *self.files)
        return found if isinstance(found, dict) and found else None


# NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/templates/configmap.yml (v0.12.0 to v0.20.0): the
# ConfigMap "<fullname>-configs" holds each config.map entry as a key; with config.name set the plugin reads that
# ConfigMap instead (_helpers.tpl configMapName). NVIDIA/gpu-operator deployments/gpu-operator/templates/
# plugin_config.yaml (v23.3.0 to v26.7.0): devicePlugin.config.data as the ConfigMap devicePlugin.config.name,
# when devicePlugin.config.create is true.
EMBEDDED_CONFIGS: dict[str, EmbeddedConfigs] = {
    "nvidia-device-plugin": EmbeddedConfigs(("config", "map"), unless=("config", "name")),
    "gpu-operator": EmbeddedConfigs(("devicePlugin", "config", "data"), only_if=("devicePlugin", "config", "create")),
}


@dataclass(frozen=True)
class EmbeddedConfig:
    """A device plugin configuration file a chart's release values hold."""

    path: Path  # to the file's string in the object, or to the values string or values file that holds it
    text: str
    placed: bool  # the path is the file's own string: a position inside the text is a position in the object
    name: str = ""  # its key (the name the plugin's config-manager selects it by)
    values_file: str = ""  # the values file that holds it (a helmfile's, kustomization's or Zarf chart's layer)


def embedded_plugin_configs(data: dict[str, Any]) -> list[EmbeddedConfig]:
    """The device plugin configuration files a GitOps object's GPU stack chart values embed. None when values
    given elsewhere (a valuesFrom, a values file, a parameter) may add or change one, or when one is templated:
    not known."""
    found: list[EmbeddedConfig] = []
    for given in chart_values(data):
        where = EMBEDDED_CONFIGS.get(given.chart)
        configs = where.configs(given.values) if where is not None else None
        if where is None or configs is None or given.outside("config"):
            continue
        if not all(isinstance(v, str) for v in configs.values()) or _templated(configs):
            continue  # a template or a value not a file: what the plugin reads is not known
        for key, value in configs.items():
            path, placed, values_file = given.placed((*where.files, key))
            found.append(EmbeddedConfig(path, value, placed, str(key), values_file))
    return found


@dataclass(frozen=True)
class PolicyView:
    """A GPU operator ClusterPolicy: a linted one, or the one a linted release of the gpu-operator chart makes."""

    name: str  # as findings name it
    data: dict[str, Any]  # the object: apiVersion, kind, spec
    release: str = ""  # the chart release that makes it ("HelmRelease gpu-operator"); empty for a linted one


# NVIDIA/gpu-operator deployments/gpu-operator/templates/clusterpolicy.yaml (v23.3.0 to v26.7.0; from v26.7.0 only
# with clusterPolicy.deployCR, default true): the ClusterPolicy "cluster-policy" takes these values as its spec
# fields (devicePlugin.config only when devicePlugin.config.name is set); the default is the chart's values.yaml.
_POLICY_VALUES: tuple[tuple[tuple[str, ...], Any], ...] = (
    (("mig", "strategy"), "single"),
    (("devicePlugin", "enabled"), True),
    (("devicePlugin", "config", "name"), ""),
    (("devicePlugin", "config", "default"), ""),
    (("gfd", "enabled"), True),
    (("toolkit", "enabled"), True),
    (("toolkit", "env"), []),
)


def cluster_policies(linted: LintedSet) -> list[PolicyView]:
    """The linted ClusterPolicies and those linted gpu-operator chart releases make (once per linted set)."""
    found: list[PolicyView] = linted.fact("cluster policies", _cluster_policies, linted)
    return found


def _cluster_policies(linted: LintedSet) -> list[PolicyView]:
    found = [PolicyView(obj.ref.name, obj.data) for obj in linted.of_kind("nvidia.com", "ClusterPolicy")]
    for kind in CHART_INSTALLERS:
        for obj in linted.of_kind(*kind):
            for given in chart_values(obj.data):
                spec = _operator_policy(given)
                if spec is not None:
                    label = f"cluster-policy (of the gpu-operator chart of {obj.kind} {obj.ref.name})"
                    found.append(
                        PolicyView(
                            label,
                            {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "spec": spec},
                            f"{obj.kind} {obj.ref.name}",
                        )
                    )
    return found


def _operator_policy(given: ChartValues) -> dict[str, Any] | None:
    """The ClusterPolicy spec fields the gpu-operator chart renders from these values; None when the chart makes
    none, or when values given elsewhere or a template leave them unknown."""
    if given.chart != "gpu-operator" or given.files or given.parameters:
        return None
    if dig(given.values, "clusterPolicy", "deployCR") is False:
        return None
    spec: dict[str, Any] = {}
    for path, default in _POLICY_VALUES:
        value = dig(given.values, *path)
        if _templated(value):
            return None
        here = spec
        for key in path[:-1]:
            here = here.setdefault(key, {})
        here[path[-1]] = default if value is None else value
    if not text(dig(spec, "devicePlugin", "config", "name")):
        del spec["devicePlugin"]["config"]
    return spec


def _templated(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "${" in value
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return False
