"""How charts and overlays are rendered: from the command line and the ``render:`` configuration key."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

DEFAULT_TIMEOUT_SECONDS = 120.0
DEFAULT_RELEASE = "release-name"  # what `helm template` calls a release it is not given a name for


class RenderConfigError(ValueError):
    """A bad ``render:`` key: the configuration's usage error."""


@dataclass(frozen=True)
class ChartSettings:
    """Values for one chart, as `helm template` takes them (paths relative to the configuration file)."""

    values: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()
    release: str = ""
    namespace: str = ""
    # a release the repository gives the chart (gpulint.lint.inputs.render.releases): its values files and inline
    # values, in helm's order, before ``values``; its --set-string values; where it is given
    layers: tuple[str | dict[str, Any], ...] = ()
    set_strings: tuple[str, ...] = ()
    label: str = ""
    unknown: tuple[str, ...] = ()  # values the release gives that gpulint does not know ("": any)

    @property
    def given(self) -> bool:
        """Values other than the chart's own values.yaml."""
        return bool(self.values or self.set_values or self.layers or self.set_strings)


@dataclass(frozen=True)
class RenderOptions:
    enabled: bool = True  # False (--no-render): charts and overlays are linted file by file, as before
    helm: str = ""  # an explicit binary; empty: `helm` on PATH
    kustomize: str = ""
    kubectl: str = ""
    values: tuple[str, ...] = ()  # --values for every chart rendered (the command line's)
    set_values: tuple[str, ...] = ()
    helm_tests: bool = False  # chart tests (templates/tests/) are rendered only when asked
    kustomize_helm: bool = False  # kustomize's helmCharts (runs helm); off as kustomize has it
    remote_bases: bool = False  # --render-remote-bases (command line only): kustomize fetches https bases
    charts: dict[str, ChartSettings] = field(default_factory=dict)  # per chart directory (absolute)
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    kubernetes_version: str = ""  # Capabilities.KubeVersion for the chart's templates
    # the run's `exclude` (set by the collection): the walks for values given elsewhere honour it, as its own walk
    exclude: tuple[str, ...] = ()

    def with_overrides(self, **changes: Any) -> RenderOptions:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def configured(self, directory: str) -> bool:
        """The chart has settings under render.charts in .gpulint.yaml (they win over the releases found)."""
        import os

        return os.path.realpath(directory) in self.charts

    def for_chart(self, directory: str) -> ChartSettings:
        """The configured settings of this chart, plus the command line's values (which come last,
        so they win as later --values do in helm)."""
        import os

        own = self.charts.get(os.path.realpath(directory), ChartSettings())
        return replace(own, values=(*own.values, *self.values), set_values=(*own.set_values, *self.set_values))


_KEYS = {"helm", "kustomize", "kubectl", "helm-tests", "kustomize-enable-helm", "timeout", "charts", "enabled"}
_CHART_KEYS = {"values", "set", "release", "namespace"}


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RenderConfigError(f"{where} must be a list of strings")
    return tuple(value)


def from_mapping(raw: Any, root: str, where: str) -> RenderOptions:
    """The ``render:`` key of .gpulint.yaml; chart directories and values files relative to ``root``."""
    import os

    if raw is None:
        return RenderOptions()
    if not isinstance(raw, dict):
        raise RenderConfigError(f"{where}: 'render' must be a mapping")
    unknown = sorted(str(key) for key in raw if key not in _KEYS)
    if unknown:
        raise RenderConfigError(f"{where}: unknown key 'render.{unknown[0]}' (known keys: {', '.join(sorted(_KEYS))})")
    changes: dict[str, Any] = {}
    for key, name in (("helm", "helm"), ("kustomize", "kustomize"), ("kubectl", "kubectl")):
        if key in raw:
            if not isinstance(raw[key], str):
                raise RenderConfigError(f"{where}: 'render.{key}' must be a path")
            changes[name] = os.path.join(root, raw[key]) if os.sep in raw[key] else raw[key]
    for key, name in (
        ("helm-tests", "helm_tests"),
        ("kustomize-enable-helm", "kustomize_helm"),
        ("enabled", "enabled"),
    ):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise RenderConfigError(f"{where}: 'render.{key}' must be true or false")
            changes[name] = raw[key]
    if "timeout" in raw:
        timeout = raw["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            raise RenderConfigError(f"{where}: 'render.timeout' must be a number of seconds (at most 3600)")
        changes["timeout"] = float(timeout)
    if "charts" in raw:
        charts = raw["charts"]
        if not isinstance(charts, dict):
            raise RenderConfigError(f"{where}: 'render.charts' must map chart directories to their values")
        parsed: dict[str, ChartSettings] = {}
        for directory, settings in charts.items():
            place = f"{where}: 'render.charts.{directory}'"
            if not isinstance(settings, dict):
                raise RenderConfigError(f"{place} must be a mapping (values, set, release, namespace)")
            bad = sorted(str(key) for key in settings if key not in _CHART_KEYS)
            if bad:
                raise RenderConfigError(
                    f"{place}: unknown key '{bad[0]}' (known keys: {', '.join(sorted(_CHART_KEYS))})"
                )
            for key in ("release", "namespace"):
                if key in settings and not isinstance(settings[key], str):
                    raise RenderConfigError(f"{place}.{key} must be a string")
            parsed[os.path.realpath(os.path.join(root, str(directory)))] = ChartSettings(
                values=tuple(os.path.join(root, v) for v in _strings(settings.get("values", []), f"{place}.values")),
                set_values=_strings(settings.get("set", []), f"{place}.set"),
                release=settings.get("release", ""),
                namespace=settings.get("namespace", ""),
            )
        changes["charts"] = parsed
    return replace(RenderOptions(), **changes)
