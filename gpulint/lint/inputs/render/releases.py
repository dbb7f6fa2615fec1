"""Releases: a chart of the repository installed with values the repository gives it elsewhere, read, never run.

A chart's values.yaml holds its defaults; the values it is deployed with are often written beside the tool that
installs it. One table, SOURCES, says for each such tool where the chart's path and its values are:

- helmfile (`helmfile.yaml`, `helmfile.yaml.gotmpl`, `helmfile.d/*`): `releases[].chart` a local path (relative to
  the helmfile), `values` files and inline maps, `set` (helmfile pkg/state/state.go ReleaseSpec);
- Argo CD `Application` (and an `ApplicationSet`'s template): `spec.source(s).path` a chart of this repository
  (relative to its root), `helm.valueFiles` (relative to the chart), `helm.values` (a string) or
  `helm.valuesObject` (which wins), `helm.parameters` (`--set`; `forceString`: `--set-string`), release name
  `helm.releaseName` else the Application's name, namespace `destination.namespace` (argo-cd
  reposerver/repository/repository.go helmTemplate: value files, then values, then parameters);
- Flux `HelmRelease` (helm.toolkit.fluxcd.io): `spec.chart.spec.chart` a local path of a GitRepository (this
  repository, relative to its root), `valuesFiles`, then `valuesFrom` (a ConfigMap or Secret of the repository,
  key `valuesKey`, default `values.yaml`; `targetPath` sets one value in its place), then `spec.values`
  (helm-controller internal/chartutil/values.go ChartValuesFromReferences, ReplacePathValue); release name `releaseName`, else
  `[targetNamespace-]name`;
- kustomize `helmCharts`: the chart at `chartHome/name`, `valuesInline` joined with `valuesFile` as `valuesMerge`
  says, then `additionalValuesFiles` (v5.8.1 api/types/helmchartargs.go, HelmChartInflationGenerator.go);
- Terraform `helm_release` (hashicorp/terraform-provider-helm v2.17.0 and v3.0.2 helm/resource_helm_release.go
  getValues): `chart` a local path (relative to the `.tf`'s folder, the root module's) and no `repository`,
  `values` in order (`file(...)`, `templatefile(...)`, `yamlencode({...})`, heredocs), then `set` (v2 blocks, v3 a
  list of objects; `type = "string"`: --set-string), `set_list` (`name={a,b}`) and `set_string`. The HCL is read,
  never evaluated (inputs/hcl.py): a value written with an expression only Terraform computes (`${module.eks...}`,
  `local.azs`) is given but not known, so it is left out, and a chart that then fails is "not checked" as that
  release (never rendered with a value gpulint made up).

- Zarf `zarf.yaml` (`kind: ZarfPackageConfig`): `components[].charts[].localPath` and `valuesFiles`, relative to
  the package folder; what Zarf fills in (`###ZARF_VAR_X###`), `variables[].path` and `values[].targetPath` are given,
  not known (zarf-dev/zarf src/api/v1alpha1/component.go ZarfChart);
- a Validated Pattern's cluster group (`values-<group>.yaml` beside `values-global.yaml`): the Argo CD Applications
  the clustergroup chart makes of `clusterGroup.applications` (validatedpatterns/clustergroup-chart v0.9.55
  templates/plumbing/applications.yaml), the pattern operator's `global.*` parameters given, not known.

Whether a repository URL names this repository is not knowable from its files: a path that exists in it is taken
as its own. An entry with a template (`{{`, `${`, Argo's `$values/` reference), a values file missing, or a
ConfigMap not found is skipped: its values are not known, and the chart renders with its defaults as before.

Walked as ``gpulint check DIR`` walks (file_walk.Walk: .gitignore, ``.git/info/exclude`` and the configured
``exclude`` honoured). Bounded: at most MAX_ENTRIES names listed and MAX_FILES YAML files visited (`node_modules`,
`vendor`, hidden folders and charts' `templates/` skipped, no link followed), files of at most MAX_BYTES, at most
MAX_RELEASES per chart.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.workloads import api_group
from gpulint.lint.inputs import hcl
from gpulint.lint.inputs.file_walk import Selection, Walk, read_head
from gpulint.lint.inputs.loader import LocatedDocument, load_bytes
from gpulint.lint.inputs.parsed_once import Parses
from gpulint.lint.inputs.repo_index import shown_root
from gpulint.lint.inputs.sources import SourceError
from gpulint.lint.paths import is_within

MAX_FILES = 5000  # YAML files read
MAX_ENTRIES = 100_000  # names listed, of any kind: what bounds the walk's time
MAX_BYTES = 512 * 1024
MAX_RELEASES = 8
_YAML = (".yaml", ".yml", ".gotmpl")
_TERRAFORM = ".tf"
_RELEASE_FILES = Selection(
    suffixes=(*_YAML, _TERRAFORM),
    names=frozenset({"Kustomization"}),
    skipped=frozenset({"node_modules", "vendor", "templates", "__pycache__"}),
)
_HELMFILE = re.compile(r"^helmfile(?:\.[\w-]+)*\.(?:ya?ml|gotmpl)$")
_KUSTOMIZATION = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
# Markers that a YAML file may hold a ConfigMap or Secret a valuesFrom names.
_HOLDERS = (b"ConfigMap", b"Secret", b"configMapGenerator")

Layer = str | dict[str, Any]  # a values file (absolute path) or values written inline, in the order helm merges them


@dataclass(frozen=True)
class Release:
    chart: str  # the chart's directory (real path)
    name: str  # the release name ('': helm template's default)
    namespace: str
    layers: tuple[Layer, ...]
    set_values: tuple[str, ...] = ()  # --set
    set_strings: tuple[str, ...] = ()  # --set-string
    origin: str = ""  # where it is given: "deploy/helmfile.yaml:12", relative to the repository
    unknown: tuple[str, ...] = ()  # values it gives that gpulint does not know ("nodepool.zone"), left out

    @property
    def label(self) -> str:
        return f"release '{self.name or 'release-name'}' of {self.origin}"


@dataclass
class _File:
    path: str  # absolute
    documents: list[LocatedDocument]
    readers: tuple[Callable[[_Scan, _File], Iterator[Release]], ...] = ()
    raw: bytes = b""  # a file that is not YAML (Terraform): its text


@dataclass
class _Scan:
    root: str
    parses: Parses
    sources: list[_File] = field(default_factory=list)  # files that may give releases
    holders: list[_File] | None = None  # files that may hold ConfigMaps and Secrets (read when first asked)
    candidates: list[str] = field(default_factory=list)  # every YAML file visited, for the holders


def _templated(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "${" in value or value.startswith("$")
    if isinstance(value, dict):
        return any(_templated(k) or _templated(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return False


def _line(document: LocatedDocument, path: tuple[Any, ...]) -> int:
    try:
        return document.locate(path)[0]
    except (IndexError, KeyError, TypeError, ValueError):
        return 1


def _chart_dir(root: str, base: str, relative: Any) -> str | None:
    """A local chart's real directory: ``relative`` to ``base``, a folder with a Chart.yaml inside the repository."""
    if not isinstance(relative, str) or not relative or _templated(relative) or "://" in relative:
        return None
    directory = os.path.realpath(os.path.join(base, relative))
    if not is_within(directory, root) or not os.path.isfile(os.path.join(directory, "Chart.yaml")):
        return None
    return directory


def _values_file(root: str, base: str, relative: Any) -> str | None:
    if not isinstance(relative, str) or not relative or _templated(relative) or "://" in relative:
        return None
    path = os.path.realpath(os.path.join(base, relative))
    if not is_within(path, root) or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
        return None  # out of the repository (a link), not a file, or larger than helm values are
    return path


def _set_value(name: Any, value: Any) -> str | None:
    """``name=value`` as `--set` reads it (a comma in the value escaped, as Argo CD and helmfile escape it)."""
    if not isinstance(name, str) or not name or _templated(name) or _templated(value):
        return None
    if isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        return None
    return f"{name}={str(value).replace(',', chr(92) + ',')}"


# ---------------------------------------------------------------------------------------------- the sources


def _helmfile(scan: _Scan, found: _File) -> Iterator[Release]:
    base = os.path.dirname(found.path)
    for document in found.documents:
        for index, entry in enumerate(sequence(mapping(document.data).get("releases"))):
            entry = mapping(entry)
            chart = _chart_dir(scan.root, base, entry.get("chart"))
            if chart is None or _templated(entry.get("name")) or _templated(entry.get("namespace")):
                continue
            if "valuesTemplate" in entry or "setTemplate" in entry or entry.get("installed", True) is not True:
                continue  # values helmfile computes, or a release not installed (or installed on a condition)
            given = _helmfile_values(scan.root, base, entry)
            if None in given:
                continue
            layers = [layer for layer in given if layer is not None]
            sets = [_set_value(mapping(s).get("name"), mapping(s).get("value")) for s in sequence(entry.get("set"))]
            if None in sets or not (layers or sets):
                continue
            yield Release(
                chart,
                text(entry.get("name")),
                text(entry.get("namespace")),
                tuple(layers),
                tuple(s for s in sets if s),
                origin=_origin(scan, found, document, ("releases", index)),
            )


def _helmfile_values(root: str, base: str, entry: dict[str, Any]) -> list[Layer | None]:
    """A helmfile release's ``values`` in order (helmfile pkg/state/state.go ReleaseSpec.Values): a map written
    inline, or a file relative to the helmfile; None for one not known (a template, a ``.gotmpl`` file helmfile
    renders, a file missing or outside the repository)."""
    layers: list[Layer | None] = []
    for item in sequence(entry.get("values")):
        if isinstance(item, dict) and not _templated(item):
            layers.append(item)
        elif (path := _values_file(root, base, item)) is not None and not path.endswith(".gotmpl"):
            layers.append(path)
        else:
            layers.append(None)
    return layers


def _argo(scan: _Scan, found: _File) -> Iterator[Release]:
    for document in found.documents:
        data = mapping(document.data)
        if api_group(text(data.get("apiVersion"))) != "argoproj.io":
            continue
        kind = text(data.get("kind"))
        prefix: tuple[Any, ...] = ("spec",)
        if kind == "ApplicationSet":
            prefix = ("spec", "template", "spec")
            name = dig(data, "spec", "template", "metadata", "name")
            name = name if isinstance(name, str) and not _templated(name) else text(dig(data, "metadata", "name"))
        elif kind == "Application":
            name = text(dig(data, "metadata", "name"))
        else:
            continue
        spec = mapping(dig(data, *prefix))
        namespace = dig(spec, "destination", "namespace")
        namespace = namespace if isinstance(namespace, str) and not _templated(namespace) else ""
        sources: list[tuple[tuple[Any, ...], Any]] = [(("source",), spec.get("source"))] if "source" in spec else []
        sources += [(("sources", i), s) for i, s in enumerate(sequence(spec.get("sources")))]
        for where, source in sources:
            release = _argo_source(scan, mapping(source), name, namespace)
            if release is not None:
                yield replace(release, origin=_origin(scan, found, document, (*prefix, *where)))


def _argo_source(scan: _Scan, source: dict[str, Any], name: str, namespace: str) -> Release | None:
    helm = mapping(source.get("helm"))
    chart = _chart_dir(scan.root, scan.root, source.get("path"))
    if chart is None or not helm or source.get("chart"):
        return None
    release = helm.get("releaseName")
    if release is not None and (not isinstance(release, str) or _templated(release)):
        return None
    layers: list[Layer] = []
    for item in sequence(helm.get("valueFiles")):
        path = _argo_values_file(scan.root, scan.root, chart, item)
        if path is None:
            if helm.get("ignoreMissingValueFiles") is True and isinstance(item, str) and not _templated(item):
                continue
            return None
        layers.append(path)
    if isinstance(helm.get("valuesObject"), dict):  # Argo CD: valuesObject wins over values
        inline: Any = helm["valuesObject"]
    elif isinstance(helm.get("values"), str) and helm["values"].strip():
        loaded = load_bytes("values", helm["values"].encode()[:MAX_BYTES])
        documents = [d.data for d in loaded.documents if d.data is not None]
        if loaded.problems or len(documents) != 1:
            return None
        inline = documents[0]
    else:
        inline = None
    if inline is not None:
        if not isinstance(inline, dict) or _templated(inline):
            return None
        layers.append(inline)
    sets: list[str] = []
    strings: list[str] = []
    for parameter in map(mapping, sequence(helm.get("parameters"))):
        said = _set_value(parameter.get("name"), parameter.get("value"))
        if said is None:
            return None
        (strings if parameter.get("forceString") is True else sets).append(said)
    if not (layers or sets or strings):
        return None  # nothing the chart's defaults do not say
    return Release(chart, release or name, namespace, tuple(layers), tuple(sets), tuple(strings))


def _flux(scan: _Scan, found: _File) -> Iterator[Release]:
    for document in found.documents:
        data = mapping(document.data)
        if api_group(text(data.get("apiVersion"))) != "helm.toolkit.fluxcd.io" or data.get("kind") != "HelmRelease":
            continue
        spec = mapping(data.get("spec"))
        chart_spec = mapping(dig(spec, "chart", "spec"))
        if text(dig(chart_spec, "sourceRef", "kind")) != "GitRepository":
            continue
        chart = _chart_dir(scan.root, scan.root, chart_spec.get("chart"))
        name, namespace = text(dig(data, "metadata", "name")), text(dig(data, "metadata", "namespace"))
        target = text(spec.get("targetNamespace"))
        if chart is None or _templated([name, namespace, target, spec.get("releaseName")]):
            continue
        layers: list[Layer] = []
        files = [
            *sequence(chart_spec.get("valuesFiles")),
            *([chart_spec["valuesFile"]] if "valuesFile" in chart_spec else []),
        ]
        paths = [_values_file(scan.root, scan.root, item) for item in files]
        if None in paths:
            continue
        layers += [p for p in paths if p]
        targets: list[tuple[str, str, int]] = []  # targetPath, its value, how many layers came before it
        known = True
        for reference in map(mapping, sequence(spec.get("valuesFrom"))):
            given = _held_values(scan, reference, namespace)
            if given is None:
                known = reference.get("optional") is True
                if not known:
                    break
                continue
            target_path = text(reference.get("targetPath"))
            if target_path and isinstance(given, str):
                targets.append((target_path, given, len(layers)))
            elif isinstance(given, dict):
                layers.append(given)
            else:
                known = False
                break
        values = spec.get("values")
        if not known or (values is not None and (not isinstance(values, dict) or _templated(values))):
            continue
        if values:
            layers.append(values)
        sets, strings = _flux_targets(targets, layers)
        if sets is None or not (layers or sets or strings):
            continue
        release = text(spec.get("releaseName")) or (f"{target}-{name}" if target else name)
        origin = _origin(scan, found, document, ())
        yield Release(chart, release, target or namespace, tuple(layers), tuple(sets), tuple(strings), origin=origin)


def _flux_targets(targets: list[tuple[str, str, int]], layers: list[Layer]) -> tuple[list[str] | None, list[str]]:
    """The targetPath values as --set and --set-string (None: one not known). helm-controller merges them in their
    place among the layers (ChartValuesFromReferences, ReplacePathValue): a value a later layer writes at the same
    path is that layer's, so it is dropped here, where --set comes after every layer; a value in quotes is a string
    without them (strvals.ParseIntoString)."""
    sets: list[str] = []
    strings: list[str] = []
    for path, given, before in targets:
        if any(isinstance(layer, dict) and _writes(layer, path) for layer in layers[before:]):
            continue
        quoted = len(given) > 0 and given[0] == given[-1] and given[0] in "'\""
        said = _set_value(path, given.strip("'\"") if quoted else given)
        if said is None:
            return None, []
        (strings if quoted else sets).append(said)
    return sets, strings


def _writes(layer: dict[str, Any], path: str) -> bool:
    """The layer writes the dotted ``path`` or a value that is not a map above it (a path in brackets or escapes:
    not known, False)."""
    if not re.fullmatch(r"[\w-]+(?:\.[\w-]+)*", path):
        return False
    node: Any = layer
    for key in path.split("."):
        if not isinstance(node, dict):
            return True
        if key not in node:
            return False
        node = node[key]
    return True


def _held_values(scan: _Scan, reference: dict[str, Any], namespace: str) -> Any:
    """What a valuesFrom reference reads: the key (default values.yaml) of a ConfigMap or Secret written in the
    repository (a manifest, or a kustomize configMapGenerator's file), parsed as values when it has no targetPath."""
    kind, name = text(reference.get("kind")), text(reference.get("name"))
    key = text(reference.get("valuesKey")) or "values.yaml"
    if kind not in ("ConfigMap", "Secret") or not name or _templated([name, key]):
        return None
    for raw in _held(scan, kind, name, namespace, key):
        if reference.get("targetPath"):
            return raw
        loaded = load_bytes(key, raw.encode()[:MAX_BYTES])
        documents = [d.data for d in loaded.documents if d.data is not None]
        if not loaded.problems and len(documents) == 1 and isinstance(documents[0], dict):
            return None if _templated(documents[0]) else documents[0]
        return None
    return None


def _held(scan: _Scan, kind: str, name: str, namespace: str, key: str) -> Iterator[str]:
    if scan.holders is None:
        scan.holders = []
        for path in scan.candidates:
            raw = read_head(path, MAX_BYTES + 1)
            if len(raw) <= MAX_BYTES and any(marker in raw for marker in _HOLDERS):
                scan.holders.append(_File(path, scan.parses.load(path, raw).documents))
    for found in scan.holders:
        for document in found.documents:
            data = mapping(document.data)
            if os.path.basename(found.path) in _KUSTOMIZATION and kind == "ConfigMap":
                yield from _generated(found.path, data, name, key, scan.root)
                continue
            meta = mapping(data.get("metadata"))
            if data.get("kind") != kind or meta.get("name") != name:
                continue
            if namespace and meta.get("namespace") not in (None, namespace):
                continue
            value = mapping(data.get("stringData")).get(key) if kind == "Secret" else None
            if value is None and kind == "Secret" and isinstance(mapping(data.get("data")).get(key), str):
                try:
                    value = base64.b64decode(mapping(data.get("data"))[key], validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    continue
            elif value is None:
                value = mapping(data.get("data")).get(key)
            if isinstance(value, str):
                yield value


def _generated(kustomization: str, data: dict[str, Any], name: str, key: str, root: str) -> Iterator[str]:
    """A configMapGenerator's file given under ``key`` (``files: [values.yaml=path]``, or a file of that name)."""
    base = os.path.dirname(kustomization)
    for generator in map(mapping, sequence(data.get("configMapGenerator"))):
        if generator.get("name") != name:
            continue
        for entry in sequence(generator.get("files")):
            if not isinstance(entry, str):
                continue
            given, _, path = entry.partition("=") if "=" in entry else (os.path.basename(entry), "", entry)
            if given != key:
                continue
            file = _values_file(root, base, path)
            raw = read_head(file, MAX_BYTES) if file else b""
            if raw:
                yield raw.decode("utf-8", "replace")


def _kustomize(scan: _Scan, found: _File) -> Iterator[Release]:
    base = os.path.dirname(found.path)
    for document in found.documents:
        data = mapping(document.data)
        home = text(mapping(data.get("helmGlobals")).get("chartHome")) or "charts"
        for index, entry in enumerate(map(mapping, sequence(data.get("helmCharts")))):
            if not isinstance(entry.get("name"), str) or _templated(entry):
                continue
            chart = _chart_dir(scan.root, os.path.join(base, home), entry["name"])
            if chart is None:
                continue
            layers = _kustomize_layers(scan.root, base, chart, entry)
            if layers:
                origin = _origin(scan, found, document, ("helmCharts", index))
                yield Release(
                    chart, text(entry.get("releaseName")), text(entry.get("namespace")), tuple(layers), origin=origin
                )


def _kustomize_layers(root: str, base: str, chart: str, entry: dict[str, Any]) -> list[Layer] | None:
    """The values of a helmCharts entry in helm's order (kustomize v5.8.1 HelmChartInflationGenerator.go
    replaceValuesInline, types/helmchartargs.go AsHelmArgs): valuesInline joined with valuesFile (default: the
    chart's values.yaml) as valuesMerge says (override, the default: the inline values win; merge: the file's win;
    replace: the inline values alone), then additionalValuesFiles over both. None: not known."""
    mode, inline = entry.get("valuesMerge") or "override", entry.get("valuesInline")
    if mode not in ("override", "merge", "replace") or (inline is not None and not isinstance(inline, dict)):
        return None  # kustomize refuses the entry
    own: list[Any] = []
    if not inline or mode != "replace":
        own = [entry["valuesFile"]] if "valuesFile" in entry else []
        if inline and mode == "merge" and not own:  # the chart's defaults win over the inline values
            own = [os.path.join(chart, "values.yaml")]
    paths = [_values_file(root, base, item) for item in (*own, *sequence(entry.get("additionalValuesFiles")))]
    if None in paths:
        return None
    files: list[Layer] = [p for p in paths[: len(own)] if p]
    joined = [*files, inline] if mode == "override" else [inline, *files]
    return [*(joined if inline else files), *(p for p in paths[len(own) :] if p)]


# A hole Terraform fills in, while a heredoc or template file is read as YAML: a value that holds one is not known.
_HOLE = "gpulint-terraform-computes-this"


def _terraform(scan: _Scan, found: _File) -> Iterator[Release]:
    try:
        blocks = hcl.parse(found.raw.decode("utf-8", "replace"))
    except hcl.HclError:
        return  # not HCL this reader follows: its releases are not known
    base = os.path.dirname(found.path)
    for block in blocks:
        if block.type != "resource" or block.labels[:1] != ("helm_release",):
            continue
        given = block.attributes
        if given.get("repository") not in (None, ""):
            continue  # a chart of a chart repository, not of this one
        chart = given.get("chart")
        if isinstance(chart, hcl.Template) or (chart := _chart_dir(scan.root, base, chart)) is None:
            continue
        layers: list[Layer] = []
        unknown: list[str] = []
        values = given.get("values")
        for item in values if isinstance(values, list) else []:
            layer = _terraform_values(scan.root, base, item, unknown)
            if layer:
                layers.append(layer)
        if values is not None and not isinstance(values, list):
            unknown.append("")  # values of an expression: any of them
        sets, strings = _terraform_sets(block, unknown)
        name, namespace = given.get("name"), given.get("namespace")
        yield Release(
            chart,
            name if isinstance(name, str) else "",
            namespace if isinstance(namespace, str) else "",
            tuple(layers),
            tuple(sets),
            tuple(strings),
            origin=f"{os.path.relpath(found.path, scan.root)}:{block.line}",
            unknown=tuple(dict.fromkeys(unknown)),
        )


def _terraform_values(root: str, base: str, item: Any, unknown: list[str]) -> dict[str, Any] | None:
    """One entry of a helm_release's ``values``, the values it gives that are not known left out and named in
    ``unknown`` ("": which ones is not known either; None: nothing of it known)."""
    if isinstance(item, hcl.Call) and item.name in ("yamlencode", "jsonencode") and len(item.args) == 1:
        known = _known(item.args[0], "", unknown) if isinstance(item.args[0], dict) else None
        if not isinstance(known, dict):
            unknown.append("")
        return known if isinstance(known, dict) else None
    if isinstance(item, hcl.Call) and item.name in ("file", "templatefile") and item.args:
        path = _values_file(root, base, item.args[0]) if isinstance(item.args[0], str) else None
        raw = read_head(path, MAX_BYTES).decode("utf-8", "replace") if path else ""
        if item.name == "templatefile":  # its `${...}` and `%{...}` are filled in by Terraform
            try:
                item = hcl.template_parts(raw)
            except hcl.HclError:
                unknown.append("")
                return None
        else:
            item = raw
    if isinstance(item, hcl.Template) and not item.directive:
        item = "".join(_HOLE if part is None else part for part in item.parts)
    if isinstance(item, str) and not item.strip():
        return None
    loaded = load_bytes("values", item.encode()[:MAX_BYTES]) if isinstance(item, str) else None
    documents = [d.data for d in loaded.documents if d.data is not None] if loaded is not None else []
    if loaded is None or loaded.problems or len(documents) != 1 or not isinstance(documents[0], dict):
        unknown.append("")
        return None
    known = _known(documents[0], "", unknown)
    return known if isinstance(known, dict) else None


def _known(value: Any, path: str, unknown: list[str]) -> Any:
    """The value at ``path`` with what is not known left out (and its path added to ``unknown``): a map's unknown
    entries dropped; a list, a string or a key with a hole is unknown as a whole (hcl.UNKNOWN)."""
    if (
        value is hcl.UNKNOWN
        or isinstance(value, (hcl.Template, hcl.Call))
        or (isinstance(value, str) and _HOLE in value)
    ):
        unknown.append(path)
        return hcl.UNKNOWN
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if _HOLE in str(key):
                unknown.append(path)  # which key is not known: anything under the map
                continue
            known = _known(item, f"{path}.{key}".lstrip("."), unknown)
            if known is not hcl.UNKNOWN and (known or not item):
                kept[key] = known  # a map left empty by what is not known is not known either
        return kept if kept or not value else hcl.UNKNOWN
    if isinstance(value, list):
        items = [_known(item, path, []) for item in value]
        if any(item is hcl.UNKNOWN for item in items):
            unknown.append(path)
            return hcl.UNKNOWN
        return items
    return value


def _terraform_sets(block: hcl.Block, unknown: list[str]) -> tuple[list[str], list[str]]:
    """``set`` (v2 blocks, v3 a list of objects), ``set_list`` and ``set_string`` as --set and --set-string, in
    the provider's order; an entry whose name or value is not known is left out and named in ``unknown``."""
    entries: list[tuple[str, Any]] = []
    for kind in ("set", "set_list", "set_string"):
        written = block.attributes.get(kind)
        objects = written if isinstance(written, list) else []
        objects += [b.attributes for b in block.blocks if b.type == kind]
        entries += [(kind, mapping(entry)) for entry in objects]
    sets: list[str] = []
    strings: list[str] = []
    for kind, entry in entries:
        name, value = entry.get("name"), entry.get("value")
        if kind == "set_list":
            if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
                unknown.append(name if isinstance(name, str) else "")
                continue
            items = ",".join(str(v).replace(",", chr(92) + ",") for v in value)
            said = f"{name}={{{items}}}" if isinstance(name, str) and name else None
        else:
            said = _set_value(name, value) if not isinstance(value, hcl.Template) else None
        if said is None:
            unknown.append(name if isinstance(name, str) else "")
        else:
            (strings if kind == "set_string" or entry.get("type") == "string" else sets).append(said)
    return sets, strings


# Zarf fills these in at `zarf package create` (PKG_TMPL) or deploy (VAR, CONST, and its own): given, not known.
_ZARF_HOLE = re.compile(r"###ZARF_[A-Z0-9_]+###")


def _zarf(scan: _Scan, found: _File) -> Iterator[Release]:
    """A Zarf package's charts of this repository (zarf-dev/zarf src/api/v1alpha1/component.go ZarfChart, v0.40 to
    v0.60): ``components[].charts[].localPath`` a chart folder and ``valuesFiles`` merged in order, both relative to
    the package folder (where `zarf package create` runs); release name ``releaseName`` else ``name``. What Zarf fills
    in (``###ZARF_VAR_X###`` and the like in a values file) and what ``variables[].path`` and ``values[].targetPath``
    set at deploy time is given, not known. A component ``import``ed from another package is not read."""
    base = os.path.dirname(found.path)
    for document in found.documents:
        data = mapping(document.data)
        if data.get("kind") != "ZarfPackageConfig":
            continue
        for c, component in enumerate(map(mapping, sequence(data.get("components")))):
            if "import" in component:
                continue
            for index, entry in enumerate(map(mapping, sequence(component.get("charts")))):
                chart = _chart_dir(scan.root, base, entry.get("localPath"))
                if chart is None or entry.get("url"):
                    continue
                unknown: list[str] = []
                layers: list[Layer] = []
                for item in sequence(entry.get("valuesFiles")):
                    path = _values_file(scan.root, base, item)
                    if path is None:
                        unknown.append("")  # a remote or missing file: which values, not known
                        continue
                    layer = _zarf_values(path, unknown)
                    if layer:
                        layers.append(layer)
                for given in (*sequence(entry.get("variables")), *sequence(entry.get("values"))):
                    target = mapping(given).get("path", mapping(given).get("targetPath"))
                    unknown.append(target.lstrip(".") if isinstance(target, str) else "")
                if not (layers or unknown):
                    continue  # nothing the chart's defaults do not say
                name = next((n for n in (entry.get("releaseName"), entry.get("name")) if isinstance(n, str)), "")
                namespace = entry.get("namespace")
                yield Release(
                    chart,
                    "" if _ZARF_HOLE.search(name) else name,
                    namespace if isinstance(namespace, str) and not _ZARF_HOLE.search(namespace) else "",
                    tuple(layers),
                    origin=_origin(scan, found, document, ("components", c, "charts", index)),
                    unknown=tuple(dict.fromkeys(unknown)),
                )


def _zarf_values(path: str, unknown: list[str]) -> Layer | None:
    """A Zarf values file: the file itself, or, where Zarf fills a value in, the file with that value written as the
    placeholder gpulint knows (``${ZARF_VAR_X}``: the fields it reaches are not checked) and its path in
    ``unknown``; left out, the chart's default would stand in for a value the package gives."""
    raw = read_head(path, MAX_BYTES).decode("utf-8", "replace")
    if not _ZARF_HOLE.search(raw):
        return path
    holes = load_bytes("values", _ZARF_HOLE.sub(_HOLE, raw).encode())
    marked = load_bytes("values", _ZARF_HOLE.sub(lambda m: "${" + m.group()[3:-3] + "}", raw).encode())
    documents = [d.data for d in marked.documents if d.data is not None]
    if holes.problems or marked.problems or len(documents) != 1 or not isinstance(documents[0], dict):
        unknown.append("")
        return None
    _known(next(d.data for d in holes.documents if d.data is not None), "", unknown)
    return documents[0]


# validatedpatterns/clustergroup-chart v0.9.55 templates/plumbing/applications.yaml and _helpers.tpl: the global.*
# parameters every Application gets from the pattern operator (the cluster's, not the repository's), and the
# per-application lists whose names get a value the operator or Argo CD knows.
_PATTERN_PARAMETERS = tuple(
    f"global.{name}"
    for name in (
        "repoURL originURL targetRevision namespace pattern clusterDomain localClusterName clusterVersion "
        "clusterPlatform hubClusterDomain multiSourceSupport multiSourceRepoUrl multiSourceTargetRevision "
        "localClusterDomain privateRepo"
    ).split()
)
_PATTERN_FIELDS = (
    "extraHubClusterDomainFields",
    "extraLocalClusterDomainFields",
    "extraRepoURLFields",
    "extraTargetRevisionFields",
    "extraNamespaceFields",
    "extraPatternNameFields",
)
_PATTERN_FILE = re.compile(r"^values-[\w.-]+\.ya?ml$")


def _is_pattern_group(name: str, raw: bytes, _in_helmfile_d: bool) -> bool:
    return _PATTERN_FILE.match(name) is not None and name != "values-global.yaml" and b"clusterGroup" in raw


def _pattern(scan: _Scan, found: _File) -> Iterator[Release]:
    """A Validated Pattern's cluster group (``values-<group>.yaml`` beside ``values-global.yaml``): the clustergroup
    chart makes an Argo CD Application of each ``clusterGroup.applications`` entry (validatedpatterns/clustergroup-chart
    v0.9.55 templates/plumbing/applications.yaml). One with a ``path`` in this repository and no ``chart``,
    ``chartVersion`` (a path of another repository), ``repoURL``, ``kustomize`` or ``plugin`` is a helm release named
    as the entry, with ``ignoreMissingValueFiles``: ``/values-global.yaml``, ``/values-<clusterGroup.name>.yaml``, the
    files named by the cluster's platform, version and name (not known here), ``global.extraValueFiles``,
    ``clusterGroup.sharedValueFiles`` and the entry's ``extraValueFiles`` (a leading ``/``: the repository's root, as
    argo-cd util/io/path/resolved.go resolveFileOrDirectory reads it; a template: not known), then the operator's
    ``global.*`` parameters (not known) and the entry's ``overrides`` (``--set``; ``forceString``: ``--set-string``)."""
    base = os.path.dirname(found.path)
    global_file = _values_file(scan.root, base, "values-global.yaml")
    if global_file is None:
        return  # none, or a link out of the repository: never read
    given = scan.parses.load(global_file, read_head(global_file, MAX_BYTES)).documents
    global_values = mapping(given[0].data) if len(given) == 1 else {}
    for document in found.documents:
        group = mapping(mapping(document.data).get("clusterGroup"))
        name = group.get("name")
        if not isinstance(name, str) or _templated(name):
            name = os.path.splitext(os.path.basename(found.path))[0].removeprefix("values-")
        applications = group.get("applications")
        entries = applications.items() if isinstance(applications, dict) else enumerate(sequence(applications))
        for key, entry in entries:
            entry = mapping(entry)
            if (
                not entry
                or entry.get("disabled")
                or any(entry.get(f) for f in ("chart", "chartVersion", "repoURL", "kustomize", "plugin"))
            ):
                continue
            chart = _chart_dir(scan.root, base, entry.get("path"))
            if chart is None:
                continue
            unknown: list[str] = list(_PATTERN_PARAMETERS)
            layers: list[Layer] = [global_file]
            own = _values_file(scan.root, base, f"values-{name}.yaml")
            if own is not None:
                layers.append(own)
            elif os.path.lexists(os.path.join(base, f"values-{name}.yaml")):
                unknown.append("")  # out of the repository (a link, a name with ..) or too large: not read
            if _platform_files(scan.root, base, global_file, found.path):
                unknown.append("")  # values-<platform>.yaml and the like: which one, the cluster says
            for item in (
                *sequence(mapping(global_values.get("global")).get("extraValueFiles")),
                *sequence(group.get("sharedValueFiles")),
                *sequence(entry.get("extraValueFiles")),
            ):
                path = _argo_values_file(scan.root, base, chart, item)
                if path is not None:
                    layers.append(path)
                elif not isinstance(item, str) or _templated(item):
                    unknown.append("")  # ignoreMissingValueFiles: a file not there is no values
            unknown += [text(n) for f in _PATTERN_FIELDS for n in sequence(entry.get(f))]
            unknown += [text(mapping(p).get("name")) for p in sequence(entry.get("fileParameters"))]
            sets: list[str] = []
            strings: list[str] = []
            for override in map(mapping, sequence(entry.get("overrides"))):
                said = _set_value(override.get("name"), override.get("value"))
                if said is None:
                    unknown.append(text(override.get("name")))
                else:
                    (strings if override.get("forceString") is True else sets).append(said)
            release = text(entry.get("name")) or str(key)
            namespace = entry.get("namespace")
            yield Release(
                chart,
                "" if _templated(release) else release,
                namespace if isinstance(namespace, str) and not _templated(namespace) else "",
                tuple(layers),
                tuple(sets),
                tuple(strings),
                origin=_origin(scan, found, document, ("clusterGroup", "applications", key)),
                unknown=tuple(dict.fromkeys(unknown)),
            )


def _platform_files(root: str, base: str, *known: str) -> bool:
    """Whether the pattern's folder holds a values file other than the global and the cluster groups' ones (one the
    operator names by the cluster's platform, version or name may be among them)."""
    try:
        names = os.listdir(base)
    except OSError:
        return True
    known_names = {os.path.basename(k) for k in known}
    for name in names:
        if not _PATTERN_FILE.match(name) or name in known_names or name.startswith("values-secret"):
            continue
        path = os.path.join(base, name)
        if not is_within(path, root) or b"clusterGroup" not in read_head(path, MAX_BYTES):
            return True  # a link out of the repository is never read: it may be one
    return False


def _argo_values_file(root: str, repository: str, chart: str, item: Any) -> str | None:
    """An Argo CD value file: relative to the chart, or with a leading ``/`` to the repository's root
    (argo-cd util/io/path/resolved.go resolveFileOrDirectory)."""
    if isinstance(item, str) and item.startswith("/"):
        return _values_file(root, repository, item.lstrip("/"))
    return _values_file(root, chart, item)


def _origin(scan: _Scan, found: _File, document: LocatedDocument, path: tuple[Any, ...]) -> str:
    return f"{os.path.relpath(found.path, scan.root)}:{_line(document, path)}"


def _is_helmfile(name: str, raw: bytes, in_helmfile_d: bool) -> bool:
    return _HELMFILE.match(name) is not None or (in_helmfile_d and name.endswith(_YAML))


# Each source: which files may hold it (by name, head and folder), and how its releases are read.
SOURCES: tuple[tuple[str, Callable[[str, bytes, bool], bool], Callable[[_Scan, _File], Iterator[Release]]], ...] = (
    ("helmfile", _is_helmfile, _helmfile),
    ("Argo CD Application", lambda name, raw, _: not name.endswith(".gotmpl") and b"argoproj.io" in raw, _argo),
    ("Flux HelmRelease", lambda name, raw, _: not name.endswith(".gotmpl") and b"HelmRelease" in raw, _flux),
    ("kustomize helmCharts", lambda name, raw, _: name in _KUSTOMIZATION and b"helmCharts" in raw, _kustomize),
    ("Terraform helm_release", lambda name, raw, _: name.endswith(_TERRAFORM) and b"helm_release" in raw, _terraform),
    ("Zarf package", lambda name, raw, _: name == "zarf.yaml" and b"ZarfPackageConfig" in raw, _zarf),
    ("Validated Patterns cluster group", _is_pattern_group, _pattern),
)


class Releases:
    """The releases a repository gives its charts, found by one bounded walk (when first asked)."""

    def __init__(self, root: str, exclude: Sequence[str] = (), parses: Parses | None = None) -> None:
        self.root = os.path.realpath(root)
        self.exclude = tuple(exclude)
        self.parses = parses if parses is not None else Parses()  # the collection's: the run lints these parses
        self._by_chart: dict[str, list[Release]] | None = None

    def of(self, chart: str) -> list[Release]:
        if self._by_chart is None:
            self._by_chart = {}
            scan = _walk(self.root, self.exclude, self.parses)
            for found in scan.sources:
                for read in found.readers:
                    for release in read(scan, found):
                        kept = self._by_chart.setdefault(release.chart, [])
                        if release not in kept:
                            kept.append(release)
        return self._by_chart.get(os.path.realpath(chart), [])[:MAX_RELEASES]


def _walk(root: str, exclude: Sequence[str], parses: Parses) -> _Scan:
    """The repository's YAML files, walked as ``gpulint check DIR`` walks (file_walk.Walk: .gitignore,
    ``.git/info/exclude`` and the configured ``exclude`` honoured, hidden folders skipped, no link followed)."""
    scan = _Scan(root, parses)
    shown = shown_root(root)  # as the manifest walk shows paths, for `exclude` to match alike
    walk = Walk(shown, exclude, [], select=_RELEASE_FILES, max_entries=MAX_ENTRIES)  # notes: the manifest walk's
    visited = 0
    try:
        for candidate in walk.files():
            name = os.path.basename(candidate.path)
            if candidate.follow or not (name.endswith((*_YAML, _TERRAFORM)) or name == "Kustomization"):
                continue  # in-tree links come last: none is followed
            visited += 1
            if visited > MAX_FILES:
                return scan
            path = os.path.join(root, os.path.relpath(candidate.path, shown))
            in_helmfile_d = os.path.basename(os.path.dirname(path)) == "helmfile.d"
            raw = read_head(path, MAX_BYTES + 1)
            if len(raw) > MAX_BYTES:
                continue
            readers = tuple(read for _what, holds, read in SOURCES if holds(name, raw, in_helmfile_d))
            if name.endswith(_TERRAFORM):
                if readers:
                    scan.sources.append(_File(path, [], readers, raw))
                continue
            scan.candidates.append(path)
            if readers:
                scan.sources.append(_File(path, parses.load(path, raw).documents, readers))
    except SourceError:
        pass  # a folder that cannot be read ends the walk: what came before it stands
    return scan


# ---------------------------------------------------------------------------------------------- remote charts


# A layer of a remote chart's values: (its path in the entry, its values, the values file that holds them relative
# to the entry's folder; "": written in the entry, where a position inside them is a position in the entry).
ValuesLayer = tuple[tuple[Any, ...], dict[str, Any], str]


@dataclass(frozen=True)
class RemoteChart:
    """A chart of a chart repository (not of this one) a helmfile, a kustomization or a Zarf package installs: the
    values it gives, each layer in helm's order with where it is written (a path in the entry), as known values."""

    form: str  # how findings name the entry: "helmfile release", "Zarf chart"
    chart: str  # the chart's name (the last part of its reference)
    name: str  # the release's
    namespace: str
    entry: tuple[Any, ...]  # the entry's path in its document
    layers: tuple[ValuesLayer, ...]
    unknown: tuple[str, ...] = ()  # values it gives that are not known ("": which ones is not known either)
    version: str = ""  # the chart version the entry pins, as written

    def as_data(self) -> dict[str, Any]:
        """The entry as the object the checks read (plain data: it crosses to forked workers and caches)."""
        return {
            "kind": self.form,
            "metadata": {"name": self.name, "namespace": self.namespace},
            "chart": self.chart,
            "layers": [{"path": list(p), "values": v, "file": f} for p, v, f in self.layers],
            "unknown": list(self.unknown),
            "version": self.version,
        }


def _file_layer(path: str, where: tuple[Any, ...], unknown: list[str], base: str) -> ValuesLayer | None:
    """A values file as a layer: None for an empty one (it gives nothing), and None with "" in ``unknown`` for one
    that does not read as one mapping without a template."""
    raw = read_head(path, MAX_BYTES)
    if not raw.strip():
        return None
    loaded = load_bytes("values", raw)
    documents = [d.data for d in loaded.documents if d.data is not None]
    if loaded.problems or len(documents) != 1 or not isinstance(documents[0], dict) or _templated(documents[0]):
        unknown.append("")
        return None
    return (where, documents[0], os.path.relpath(path, base))


def _remote_helmfile(root: str, base: str, data: dict[str, Any], charts: frozenset[str]) -> Iterator[RemoteChart]:
    """helmfile releases of a repository's chart (helmfile pkg/state/state.go ReleaseSpec, v0.169 and v1.1):
    ``chart: <repository>/<chart>`` (a name of ``repositories:``) or ``oci://...``; ``values`` (inline maps and files
    relative to the helmfile) in order, then ``set`` (--set, not known here). ``valuesTemplate``, ``setTemplate``,
    ``inherit`` (a template's values), ``installedTemplate``, a ``.gotmpl`` values file and a ``{{ }}`` are what
    helmfile computes: not known. A release ``installed: false`` (or a template there) is not installed. A chart is
    remote as pkg/state/util.go isLocalChart has it (v1.7.4): ``<repository>/<chart>`` here of a repository this
    helmfile names."""
    repositories = {text(mapping(r).get("name")) for r in sequence(data.get("repositories"))}
    for index, entry in enumerate(map(mapping, sequence(data.get("releases")))):
        chart = entry.get("chart")
        if not isinstance(chart, str) or _templated(chart) or entry.get("installed", True) is not True:
            continue
        repository, _, name = chart.rpartition("/")
        if not (chart.startswith("oci://") or (repository in repositories and "/" not in repository)):
            continue  # a local path, or a repository this helmfile does not name
        if name not in charts:
            continue
        unknown: list[str] = []
        layers: list[ValuesLayer] = []
        for i, layer in enumerate(_helmfile_values(root, base, entry)):
            if isinstance(layer, dict):
                layers.append((("values", i), layer, ""))
            elif layer is None:
                unknown.append("")
            elif (read := _file_layer(layer, ("values", i), unknown, base)) is not None:
                layers.append(read)
        if any(key in entry for key in ("valuesTemplate", "setTemplate", "inherit", "installedTemplate")):
            unknown.append("")  # values, or whether it is installed at all, helmfile works out
        unknown += [text(mapping(s).get("name")) for s in sequence(entry.get("set"))]
        release = entry.get("name")
        namespace = entry.get("namespace")
        yield RemoteChart(
            "helmfile release",
            name,
            release if isinstance(release, str) and not _templated(release) else name,
            namespace if isinstance(namespace, str) and not _templated(namespace) else "",
            ("releases", index),
            tuple(layers),
            tuple(dict.fromkeys(unknown)),
            _version(entry),
        )


def _version(entry: dict[str, Any]) -> str:
    """The chart version a helmfile release, a kustomize helmChart or a Zarf chart pins (``version``)."""
    version = entry.get("version")
    return version if isinstance(version, str) else ""


def _remote_kustomize(root: str, base: str, data: dict[str, Any], charts: frozenset[str]) -> Iterator[RemoteChart]:
    """A kustomization's helmCharts of a chart repository (kustomize v5.8.1 api/types/helmchartargs.go: ``name`` and
    ``repo``; findings name it by ``releaseName``, else by the chart), the values as _kustomize_layers orders them. ``valuesMerge: merge`` without a ``valuesFile`` lets the chart's own defaults
    (not read here) win over the inline values: not known."""
    for index, entry in enumerate(map(mapping, sequence(data.get("helmCharts")))):
        name = entry.get("name")
        if not isinstance(name, str) or not entry.get("repo") or name not in charts or _templated(entry):
            continue
        unknown: list[str] = []
        chart_first = entry.get("valuesMerge") == "merge" and entry.get("valuesInline") and "valuesFile" not in entry
        given = None if chart_first else _kustomize_layers(root, base, base, entry)  # no chart folder is read
        if given is None:
            unknown.append("")
        own = _values_file(root, base, entry.get("valuesFile"))
        layers: list[ValuesLayer] = []
        for layer in given or ():
            if isinstance(layer, dict):
                layers.append((("valuesInline",), layer, ""))
            elif read := _file_layer(
                layer, ("valuesFile",) if layer == own else ("additionalValuesFiles",), unknown, base
            ):
                layers.append(read)
        release, namespace = entry.get("releaseName"), entry.get("namespace")
        yield RemoteChart(
            "kustomize helmChart",
            name,
            release if isinstance(release, str) and release else name,
            namespace if isinstance(namespace, str) else "",
            ("helmCharts", index),
            tuple(layers),
            tuple(dict.fromkeys(unknown)),
            _version(entry),
        )


def _remote_zarf(root: str, base: str, data: dict[str, Any], charts: frozenset[str]) -> Iterator[RemoteChart]:
    """A Zarf package's charts of a chart repository (zarf-dev/zarf src/api/v1alpha1/component.go ZarfChart, v0.40
    to v0.60): ``url`` (a helm repository, ``oci://``, or a git repository), the chart ``repoName`` else ``name``
    (an OCI reference: its last part); ``valuesFiles`` in order (relative to the package); what Zarf fills in
    (``###ZARF_VAR_X###``), ``variables[].path`` and ``values[].targetPath`` are given, not known."""
    if data.get("kind") != "ZarfPackageConfig":
        return
    for c, component in enumerate(map(mapping, sequence(data.get("components")))):
        if "import" in component:
            continue
        for index, entry in enumerate(map(mapping, sequence(component.get("charts")))):
            url = entry.get("url")
            if not isinstance(url, str) or not url or entry.get("localPath"):
                continue
            repo_name = entry.get("repoName") or entry.get("name")
            name = url.rstrip("/").rpartition("/")[2].partition(":")[0] if url.startswith("oci://") else repo_name
            if not isinstance(name, str) or name not in charts:
                continue
            unknown: list[str] = []
            layers: list[ValuesLayer] = []
            for i, item in enumerate(sequence(entry.get("valuesFiles"))):
                path = _values_file(root, base, item)
                layer = _zarf_values(path, unknown) if path is not None else None
                if path is None:
                    unknown.append("")
                elif isinstance(layer, str) and (read := _file_layer(layer, ("valuesFiles", i), unknown, base)):
                    layers.append(read)
                elif isinstance(layer, dict):
                    layers.append((("valuesFiles", i), layer, os.path.relpath(path, base)))
            for given in (*sequence(entry.get("variables")), *sequence(entry.get("values"))):
                target = mapping(given).get("path", mapping(given).get("targetPath"))
                unknown.append(target.lstrip(".") if isinstance(target, str) else "")
            release, namespace = entry.get("releaseName") or entry.get("name"), entry.get("namespace")
            yield RemoteChart(
                "Zarf chart",
                name,
                release if isinstance(release, str) and not _ZARF_HOLE.search(release) else name,
                namespace if isinstance(namespace, str) and not _ZARF_HOLE.search(namespace) else "",
                ("components", c, "charts", index),
                tuple(layers),
                tuple(dict.fromkeys(unknown)),
                _version(entry),
            )


# Each form of a remote chart's release: which files hold it (by name), and how its entries are read.
REMOTE_FORMS: tuple[
    tuple[str, Callable[[str], bool], Callable[[str, str, dict[str, Any], frozenset[str]], Iterator[RemoteChart]]], ...
] = (
    ("helmfile", lambda path: _is_helmfile(*_named(path)), _remote_helmfile),
    ("kustomize helmCharts", lambda path: os.path.basename(path) in _KUSTOMIZATION, _remote_kustomize),
    ("Zarf package", lambda path: os.path.basename(path) == "zarf.yaml", _remote_zarf),
)


def _named(path: str) -> tuple[str, bytes, bool]:
    return os.path.basename(path), b"", os.path.basename(os.path.dirname(os.path.abspath(path))) == "helmfile.d"


def remote_charts(path: str, data: Any, charts: frozenset[str]) -> list[RemoteChart]:
    """The releases of the repository charts named ``charts`` a document of the file at ``path`` gives (empty for
    a document of no such form), their values files read inside the file's repository (view.boundary), bounded as
    the releases' walk is."""
    readers = [read for _what, holds, read in REMOTE_FORMS if holds(path)]
    if not readers or not isinstance(data, dict):
        return []
    from gpulint.lint.inputs.render.view import boundary  # with the render tools: not for a plain manifest

    base = os.path.dirname(os.path.abspath(path))
    root = boundary(base)
    return [found for read in readers for found in read(root, base, data, charts)][:MAX_RELEASES]
