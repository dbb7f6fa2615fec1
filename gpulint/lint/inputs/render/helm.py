"""Helm charts: `helm template`, and each rendered document mapped back to its template and line.

Helm names the template of every document it prints (``# Source: CHART/templates/x.yaml``, in
pkg/action/action.go renderResources), with the chart's name (Chart.yaml ``name``) in place of its
directory, and subcharts under ``CHART/charts/SUB/``. Errors name the template too:
``execution error at (CHART/templates/x.yaml:12:20): ...`` (Go text/template), ``parse error at
(CHART/templates/x.yaml:3)``, ``YAML parse error on CHART/templates/x.yaml: ...``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.jupyterhub import UMBRELLA, values_of
from gpulint.kube.typos import typo_of
from gpulint.lint.findings import Fix, Path, Severity
from gpulint.lint.inputs.helm_values import coalesced
from gpulint.lint.inputs.loader import LoadedFile, LocatedDocument, load_bytes
from gpulint.lint.inputs.render.layout import holds_nothing
from gpulint.lint.inputs.render.mapping import LineMap, align, template_column
from gpulint.lint.inputs.render.options import DEFAULT_RELEASE, ChartSettings, RenderOptions
from gpulint.lint.inputs.render.releases import Release
from gpulint.lint.inputs.render.rendered import Rendered, RenderProblem, mapped, stopped
from gpulint.lint.inputs.render.tools import Result, Tool, run
from gpulint.lint.inputs.render.values_given import GivenElsewhere
from gpulint.lint.inputs.render.values_writers import written_by_program
from gpulint.lint.inputs.render.view import View, ViewError, boundary, left_out
from gpulint.lint.paths import is_within

_REFUSAL = (
    "the field is rendered by a Helm template; gpulint does not rewrite template logic - "
    "edit the template at this line, or the value it reads in values.yaml"
)
SOURCE_COMMENT = re.compile(r"^# Source: (\S[^\n]*?)\s*$", re.MULTILINE)
_DOCUMENT_START = re.compile(r"^---", re.MULTILINE)
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024
# chart/templates/x.yaml:12:20 (execution), :3 (parse); a YAML error names only the file.
_ERROR_PLACE = re.compile(r"(?P<file>[\w.+@-]+(?:/[\w.+@-]+)+):(?P<line>\d+)(?::(?P<column>\d+))?")
_YAML_ERROR = re.compile(r"YAML parse error on (?P<file>\S+?): (?P<rest>.*?yaml: line (?P<line>\d+): .*)$", re.M)
# What the environment causes, not the chart: a dependency that is not vendored, a repository offline.
_ENVIRONMENT = (
    "missing in charts/ directory",
    "helm dependency build",
    "helm dependency update",
    "no such host",
    "dial tcp",
    "i/o timeout",
    "could not download",
    "no cached repository",
    "repo not found",
)
# Helm's words for a fault in the chart's own text, whatever values it is given: a template that does not parse
# or calls a function that does not exist (pkg/engine/engine.go cleanupParseError: "parse error at (FILE:LINE):
# function \"x\" not defined"), an include of a template nobody defines (text/template exec.go: "no template
# %q associated with template"), output that is not YAML (pkg/release/v1/util/manifest_sorter.go: "YAML parse
# error on FILE"), a Chart.yaml or values.yaml helm refuses (chart/v3 metadata.go: "validation: chart.metadata.name
# is required", loader/load.go: "cannot load values.yaml: ...").
_CHART_TEXT = (
    "parse error at (",
    "parse error in (",
    'no template "',
    "YAML parse error on",
    "validation: chart.metadata",
    "cannot load values.yaml",
    "cannot load Chart.yaml",
)
# What a flag decides, not the chart: the Kubernetes version it is rendered for (pkg/action/action.go: "chart
# requires kubeVersion: %s which is incompatible with Kubernetes %s").
_KUBE_VERSION = "chart requires kubeVersion"
# A template that reads the cluster: `helm template` has none (lookup returns an empty map, pkg/engine/funcs.go;
# .Capabilities are helm's defaults unless --api-versions/--kube-version are given)
_CLUSTER = re.compile(r"\.Capabilities\b|\blookup\s")


def chart_name(directory: str) -> str:
    """Chart.yaml's ``name`` (what `# Source:` comments start with), else the directory's name."""
    try:
        with open(os.path.join(directory, "Chart.yaml"), "rb") as handle:
            head = handle.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return os.path.basename(os.path.abspath(directory))
    match = re.search(r"^name:\s*['\"]?([^'\"#\s]+)", head, re.MULTILINE)
    return match.group(1) if match else os.path.basename(os.path.abspath(directory))


def is_library(directory: str) -> bool:
    """``type: library`` in Chart.yaml: helpers for other charts, which `helm template` refuses to
    render on its own ("library charts are not installable"); its parents render them."""
    try:
        with open(os.path.join(directory, "Chart.yaml"), "rb") as handle:
            head = handle.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(r"^type:\s*['\"]?library['\"]?\s*(?:#.*)?$", head, re.MULTILINE) is not None


@dataclass(frozen=True)
class ChartPlace:
    """Where a chart named in `# Source:` lives, and how its files are shown."""

    name: str
    directory: str  # on disk
    display: str  # as shown in findings (the directory as the user named it)
    within: str = ""  # what may be read (gpulint.lint.inputs.render.view.boundary); empty: the directory's
    exclude: tuple[str, ...] = ()  # the run's `exclude`: not read for values given elsewhere

    def file(self, source: str) -> tuple[str, str] | None:
        """``CHART/templates/x.yaml`` -> (path on disk, path shown); subcharts by their directory."""
        head, _, rest = source.partition("/")
        if head != self.name or not rest:
            return None
        parts = rest.split("/")
        directory, display = self.directory, self.display
        while len(parts) > 2 and parts[0] == "charts":  # CHART/charts/SUB/templates/x.yaml (SUB: alias or name)
            inner = subchart_directory(directory, parts[1])
            directory, display = inner, os.path.normpath(os.path.join(display, os.path.relpath(inner, directory)))
            parts = parts[2:]
        disk = os.path.join(directory, *parts)
        return (disk, os.path.normpath(os.path.join(display, *parts))) if self.readable(disk) else None

    def readable(self, path: str) -> bool:
        """A file of the chart's repository (read to place findings and fixes); a link out is not read."""
        return os.path.isfile(path) and is_within(path, self.within or boundary(self.directory))


def subchart_folder(directory: str, shown: str) -> str:
    """The folder under ``directory``/charts of the subchart helm names ``shown`` in its template paths: the
    dependency's alias when Chart.yaml gives one (pkg/chart/v2/util/dependencies.go sets the alias as the
    subchart's name), else its name; the folder holds the chart of that name."""
    charts = os.path.join(directory, "charts")
    if os.path.isdir(os.path.join(charts, shown)):
        return shown
    lines = _read_template(os.path.join(directory, "Chart.yaml"))
    loaded = load_bytes("Chart.yaml", "\n".join(lines or ()).encode()).documents
    dependencies = sequence(mapping(loaded[0].data if loaded else None).get("dependencies"))
    name = next((text(d.get("name")) for d in map(mapping, dependencies) if d.get("alias") == shown), "")
    if not name:
        return shown
    if os.path.isdir(os.path.join(charts, name)):
        return name
    try:
        folders = sorted(os.listdir(charts))
    except OSError:
        return shown
    return next(
        (f for f in folders if os.path.isdir(os.path.join(charts, f)) and chart_name(os.path.join(charts, f)) == name),
        shown,
    )


def subchart_directory(directory: str, shown: str) -> str:
    """The directory of the subchart helm names ``shown``: its folder under charts/, else the chart of the
    repository a `file://` dependency of that name or alias points at (rendered from there, _add_local)."""
    folder = subchart_folder(directory, shown)
    vendored = os.path.join(directory, "charts", folder)
    if os.path.isdir(vendored):
        return vendored
    local = dict(local_dependencies(directory))
    return local.get(shown, vendored)


def local_dependencies(directory: str) -> list[tuple[str, str]]:
    """(the name helm gives it: alias, else name; its directory) of each dependency Chart.yaml takes from a
    folder of the checkout (`repository: file://../x`) that charts/ does not vendor: `helm dependency build`
    packages it with no network (pkg/downloader/manager.go, a `file://` repository is a path), so it is what
    an install renders."""
    lines = _read_template(os.path.join(directory, "Chart.yaml"))
    loaded = load_bytes("Chart.yaml", "\n".join(lines or ()).encode()).documents
    found: list[tuple[str, str]] = []
    for dependency in map(mapping, sequence(mapping(loaded[0].data if loaded else None).get("dependencies"))):
        name, repository = text(dependency.get("name")), text(dependency.get("repository"))
        if not name or not repository.startswith("file://"):
            continue
        source = os.path.normpath(os.path.join(directory, repository.removeprefix("file://")))
        if not os.path.isfile(os.path.join(source, "Chart.yaml")) or _vendored(directory, name):
            continue
        found.append((text(dependency.get("alias")) or name, source))
    return found


def _vendored(directory: str, name: str) -> bool:
    charts = os.path.join(directory, "charts")
    try:
        entries = os.listdir(charts)
    except OSError:
        return False
    return any(
        entry == name or (entry.startswith(f"{name}-") and entry.endswith(".tgz"))
        for entry in entries
        if os.path.isdir(os.path.join(charts, entry)) or entry.endswith(".tgz")
    )


MAX_LOCAL_DEPTH = 4


def _add_local(view: View, directory: str, copied: str, depth: int = 0) -> None:
    """Put each local dependency of the chart ``directory`` (local_dependencies) under charts/ of its copy
    ``copied``, as `helm dependency build` would, and theirs under theirs in turn; one outside the repository
    is not copied (helm then says it is missing, as before)."""
    if depth >= MAX_LOCAL_DEPTH:
        return
    for _shown, source in local_dependencies(directory):
        if not is_within(source, view.repository):
            continue
        target = os.path.join(copied, "charts", chart_name(source))
        if view.add_at(source, target):
            _add_local(view, source, target, depth + 1)


def render_chart(
    directory: str,
    display: str,
    options: RenderOptions,
    helm: Tool,
    named: str = ".",
    release: Release | None = None,
) -> Rendered:
    """``named``: the path the user named for linting (what may be read outside git); ``release``: a release the
    repository gives the chart (render/releases), rendered with its name, namespace and values."""
    settings = options.for_chart(directory)
    if release is not None:
        settings = replace(
            settings,
            release=release.name or settings.release,
            namespace=release.namespace or settings.namespace,
            layers=release.layers,
            set_values=(*release.set_values, *settings.set_values),
            set_strings=release.set_strings,
            label=release.label,
            unknown=release.unknown,
        )
    within = boundary(directory, named)
    place = ChartPlace(chart_name(directory), os.path.abspath(directory), display, within, options.exclude)
    rendered = Rendered("helm", display, release=settings.label)
    if not settings.given:  # the chart's own values are the release's
        rendered.held = _hub_values(place)
    with tempfile.TemporaryDirectory(prefix="gpulint-values-") as written:
        argv = _template_argv(directory, options, settings, helm, written)
        result = _template(argv, directory, display, options, settings, place, rendered)
    if result is None:
        return rendered
    if result.returncode != 0:
        rendered.problems.append(failure(result.stderr, place, os.path.join(display, "Chart.yaml"), settings))
        return rendered
    rendered.output = result.stdout
    rendered.mapper = partial(map_documents, places=(place,), fix_values=not settings.given)
    return rendered


def _template_argv(
    directory: str, options: RenderOptions, settings: ChartSettings, helm: Tool, written: str
) -> list[str]:
    """`helm template` as helm takes the chart's settings: values files, then --set, then --set-string (helm's
    pkg/cli/values/options.go MergeValues order); a release's inline values written to files in ``written``."""
    argv = [helm.path, "template", settings.release or DEFAULT_RELEASE, os.path.abspath(directory)]
    if not options.helm_tests:
        argv.append("--skip-tests")
    if settings.namespace:
        argv += ["--namespace", settings.namespace]
    if options.kubernetes_version:
        argv += ["--kube-version", f"v{options.kubernetes_version}.0"]
    for index, layer in enumerate((*settings.layers, *settings.values)):
        if isinstance(layer, dict):
            path = os.path.join(written, f"values-{index}.yaml")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(layer, handle, default=str)  # JSON is YAML helm reads
            argv += ["--values", path]
        else:
            argv += ["--values", os.path.abspath(layer)]
    for value in settings.set_values:
        argv += ["--set", value]
    for value in settings.set_strings:
        argv += ["--set-string", value]
    return argv


def _template(
    argv: list[str],
    directory: str,
    display: str,
    options: RenderOptions,
    settings: ChartSettings,
    place: ChartPlace,
    rendered: Rendered,
) -> Result | None:
    """Run `helm template` on a copy of the chart (View); None when it did not run to its end (said in
    ``rendered.problems``). Its stderr speaks of the chart's own paths."""
    chart_file = os.path.join(display, "Chart.yaml")
    with tempfile.TemporaryDirectory(prefix="gpulint-chart-") as copy:
        view = View(place.within, copy)
        try:
            view.add(directory)
            _add_local(view, directory, view.inside(directory))
        except ViewError as exc:
            rendered.problems.append(
                RenderProblem(chart_file, 1, 1, f"the chart was not rendered: {exc}", Severity.WARNING)
            )
            return None
        argv[3] = view.inside(directory)
        result = run(argv, cwd=argv[3], timeout=options.timeout)
        refused = _refuses_default_namespace(result.returncode, result.stderr, settings)
        if refused:
            # the chart `fail`s in the release namespace 'default' and its docs install it with --namespace
            # (NVIDIA's device plugin, templates/validation.yml): render it where it installs
            retried = run([*argv, "--namespace", place.name], cwd=argv[3], timeout=options.timeout)
            if not retried.timed_out and not retried.too_large and (retried.returncode == 0 or retried.stderr):
                # rendered there, or stopped by what comes next: that is the failure to judge
                result = retried
                rendered.problems.append(_in_its_namespace(chart_file, place.name, refused))
        result = replace(result, stderr=view.unmasked(result.stderr))
    rendered.problems.extend(left_out(view, directory, display))
    unfinished = stopped(result, chart_file, "helm template", "chart", options.timeout)
    if unfinished is not None:
        rendered.problems.append(unfinished)
        return None
    return result


def _refuses_default_namespace(returncode: int, stderr: str, settings: ChartSettings) -> str:
    """The sentence of a chart's `fail` that refuses the release namespace 'default' ("" otherwise), when
    no namespace was given for the chart: "Running in the 'default' namespace is not recommended."
    (NVIDIA's k8s-device-plugin, templates/validation.yml)."""
    if returncode == 0 or settings.namespace or "execution error" not in stderr:
        return ""
    for sentence in re.split(r"[.\n]", stderr):
        words = sentence.lower()
        if "namespace" in words and "default" in words:
            return sentence.rsplit("): ", 1)[-1].strip()
    return ""


def _in_its_namespace(chart_file: str, namespace: str, refusal: str) -> RenderProblem:
    return RenderProblem(
        chart_file,
        1,
        1,
        f"the chart refuses the namespace 'default' ({refusal.strip()}): rendered in namespace '{namespace}', "
        "as it installs with --namespace; give its namespace under render.charts in .gpulint.yaml",
        Severity.INFO,
    )


def failure(stderr: str, place: ChartPlace, chart_file: str, settings: ChartSettings | None = None) -> RenderProblem:
    settings = settings or ChartSettings()
    lines = [line for line in stderr.strip().splitlines() if line.strip() and not line.startswith("Use --debug flag")]
    text = " ".join(line.strip() for line in lines).removeprefix("Error: ").strip() or "helm template failed"
    severity = Severity.WARNING if any(marker in text for marker in _ENVIRONMENT) else Severity.ERROR
    message = f"helm template failed: {text}"
    templated = _templated_chart_file(text, place.directory)
    if templated is not None:
        name, line = templated
        message += (
            f"; {name} holds template actions ({{{{ at line {line}), which helm never evaluates in it: a tool "
            "renders this chart before helm reads it (a generator such as gomplate), so the chart was not checked"
        )
        return RenderProblem(chart_file, 1, 1, message, Severity.WARNING)
    if holds_nothing(os.path.join(place.directory, "Chart.yaml")):
        message += "; Chart.yaml is empty: the folder is no chart helm installs (a program may embed its templates), not checked"
        return RenderProblem(chart_file, 1, 1, message, Severity.WARNING)
    if severity is Severity.WARNING:
        message += "; the chart was not checked (vendor its dependencies with `helm dependency build`, or render where the repository is reachable)"
        return RenderProblem(chart_file, _dependencies_line(place.directory), 1, message, severity)
    if _KUBE_VERSION in text:
        message += (
            "; rendered for the Kubernetes version helm assumes, so the chart was not checked - give the cluster's "
            "with --kubernetes-version (kubernetes-version in .gpulint.yaml)"
        )
        return RenderProblem(chart_file, 1, 1, message, Severity.WARNING)
    own_text = any(marker in text for marker in _CHART_TEXT)
    if settings.label and not own_text:  # a fault in the chart's text is the same in every release: said once
        # rendered with what the release gives: a value it leaves to what gpulint does not read (a secret, an
        # entry with a template, the cluster) may be the one the template lacks
        message += (
            f"; rendered as {settings.label} with the values given there, so the chart was not checked as it "
            "installs - give the rest of its values under render.charts in .gpulint.yaml, or --values/--set"
        )
        severity = Severity.WARNING
    asked = _schema_asks_installer(stderr, place) if not settings.given else []
    if asked:
        message += (
            f"; the chart's values.schema.json asks the installer for {', '.join(asked)}, which values.yaml leaves "
            "empty: they are given at install (-f/--set), so the chart was not checked - give its values under "
            "render.charts in .gpulint.yaml, or --values/--set"
        )
        return RenderProblem(chart_file, 1, 1, message, Severity.WARNING)
    unset = _unset_value(stderr, place) if not own_text and not settings.given else None
    if unset is not None and unset.misspelt:
        message += (
            f"; the template reads .Values.{unset.value}, which values.yaml does not write and nothing in the "
            f"repository gives: values.yaml writes '{unset.misspelt}' (a misspelling?)"
        )
        return RenderProblem(unset.display, unset.line, unset.column, message, Severity.ERROR)
    if unset is not None and unset.cluster:
        message += (
            "; the template reads the cluster (.Capabilities or lookup), which helm template does not know: "
            "the chart was not checked"
        )
        return RenderProblem(unset.display, unset.line, unset.column, message, Severity.WARNING)
    if unset is not None:
        message += (
            f"; {unset.said()}: it is given at install "
            "(-f/--set), so the chart was not checked - give its values under render.charts in .gpulint.yaml, or "
            "--values/--set"
        )
        return RenderProblem(unset.display, unset.line, unset.column, message, Severity.WARNING)
    not_known = _not_known(stderr, place, settings)
    if not_known is not None:
        return not_known
    yaml_error = _YAML_ERROR.search(stderr)
    if yaml_error:
        found = place.file(yaml_error.group("file"))
        if found:
            return RenderProblem(
                found[1], 1, 1, f"{message} (line {yaml_error.group('line')} of the template's output)", severity
            )
    if not own_text and not settings.label and ("execution error" in text or "executing" in text):
        message += (
            f" (rendered as release '{settings.release or DEFAULT_RELEASE}' in namespace "
            f"'{settings.namespace or 'default'}': give this chart's values, release or namespace under "
            "render.charts in .gpulint.yaml, or --values/--set)"
        )
    for match in _ERROR_PLACE.finditer(stderr):
        found = place.file(match.group("file"))
        if found:
            # text/template's ErrorContext gives the byte offset in the line, from 0
            column = int(match.group("column")) + 1 if match.group("column") else 1
            return RenderProblem(found[1], int(match.group("line")), column, message, severity)
    return RenderProblem(chart_file, 1, 1, message, severity)


# helm loads Chart.yaml and values.yaml as plain YAML (pkg/chart/v2/loader/load.go); a `{{` there is another
# tool's template action (deployKF's gomplate `{{< ... >}}`), never helm's
_LOAD_REFUSED = re.compile(r"cannot load (Chart\.yaml|values\.yaml)")
_TEMPLATE_ACTION = re.compile(r"\{\{.*\}\}")
MAX_CHART_FILE = 1_000_000


def _templated_chart_file(text: str, directory: str) -> tuple[str, int] | None:
    """(file, first line with a template action) when helm refused to load the chart's Chart.yaml or values.yaml
    and that file holds template actions: the chart is itself a template, rendered by some tool before helm."""
    refused = _LOAD_REFUSED.search(text)
    if refused is None:
        return None
    try:
        with open(os.path.join(directory, refused.group(1)), "rb") as handle:
            lines = handle.read(MAX_CHART_FILE).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    first = next((n for n, line in _plain_lines(lines) if _TEMPLATE_ACTION.search(_QUOTED.sub("", line))), None)
    return (refused.group(1), first) if first is not None else None


_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_BLOCK_SCALAR = re.compile(r"[:-]\s*[|>][-+0-9]*\s*(?:#.*)?$")


def _plain_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line number, text without its comment) of the lines outside block scalars: a `{{` inside a quoted
    string or a `|` block is a value a chart's `tpl` may expand, valid YAML, not the cause of a refusal."""
    block_indent = -1
    for number, line in enumerate(lines, 1):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent >= 0 and (not line.strip() or indent > block_indent):
            continue
        block_indent = indent if _BLOCK_SCALAR.search(line) else -1
        yield number, line.split(" #", 1)[0]


# helm's refusal of values against a chart's values.schema.json (pkg/chart/v2/util/jsonschema.go), and where: a
# JSON pointer (santhosh-tekuri/jsonschema: "- at '/image/tag': minLength: got 0, want 1", "missing property 'x'")
# or gojsonschema's dotted field ("- image.tag: String length must be ...", "- (root): x is required")
_SCHEMA_REFUSAL = "values don't meet the specifications of the schema"
_SCHEMA_POINTER = re.compile(r"^\s*- at '(?P<pointer>[^']*)': (?P<why>.*)$", re.MULTILINE)
_SCHEMA_FIELD = re.compile(r"^\s*- (?P<field>[\w.()-]+): (?P<why>.*)$", re.MULTILINE)
_MISSING = re.compile(r"missing propert(?:y|ies) (?P<names>'[^']*'(?:, '[^']*')*)|^(?P<name>[\w-]+) is required$")
MAX_ASKED_SHOWN = 4


def _schema_asks_installer(stderr: str, place: ChartPlace) -> list[str]:
    """The values a chart's schema refuses when each is one its values.yaml leaves empty (absent, null, "", [] or
    {}): the schema makes the installer give them (a `minLength: 1` on an empty default, a required key the
    defaults lack), as `required` does in a template. [] when helm refused something else, or a default the
    chart writes itself (a value of the wrong type, a pattern it does not match): then the chart contradicts its
    own schema."""
    if _SCHEMA_REFUSAL not in stderr:
        return []
    defaults = _values_mapping(place, place.directory)
    if defaults is None:
        return []
    places: list[tuple[str, ...]] = []
    for match in _SCHEMA_POINTER.finditer(stderr):
        keys = tuple(part.replace("~1", "/").replace("~0", "~") for part in match.group("pointer").split("/")[1:])
        places.extend(_refused_at(keys, match.group("why")))
    if not places:
        for match in _SCHEMA_FIELD.finditer(stderr):
            field = match.group("field")
            keys = () if field == "(root)" else tuple(field.split("."))
            places.extend(_refused_at(keys, match.group("why")))
    # a place above another refused one only holds it ("- at '/image': validation failed")
    leaves = sorted({keys for keys in places if not any(other[: len(keys)] == keys != other for other in places)})
    if not leaves or not all(_empty(_value_at(defaults, keys)) for keys in leaves):
        return []
    shown = [".".join(keys) for keys in leaves]
    return shown[:MAX_ASKED_SHOWN] + ([f"{len(shown) - MAX_ASKED_SHOWN} more"] if len(shown) > MAX_ASKED_SHOWN else [])


def _refused_at(keys: tuple[str, ...], why: str) -> list[tuple[str, ...]]:
    missing = _MISSING.search(why.strip())
    if missing is None:
        return [keys]
    names = re.findall(r"'([^']*)'", missing.group("names")) if missing.group("names") else [missing.group("name")]
    return [(*keys, name) for name in names]


def _value_at(values: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if isinstance(values, list) and key.isdigit() and int(key) < len(values):
            values = values[int(key)]
        elif isinstance(values, dict) and key in values:
            values = values[key]
        else:
            return None
    return values


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _not_known(stderr: str, place: ChartPlace, settings: ChartSettings) -> RenderProblem | None:
    """A failure of a template that reads a value the release gives but gpulint does not know (an expression only
    its tool computes, render/releases): not checked, a warning at the template, whatever helm said."""
    if not settings.unknown:
        return None
    failed = _YAML_ERROR.search(stderr) or _ERROR_PLACE.search(stderr)
    found = place.file(failed.group("file")) if failed else None
    if failed is None or found is None:
        return None
    try:
        with open(found[0], encoding="utf-8", errors="replace") as template:
            read = {m.group(1).lstrip(".") for m in _VALUES_READ.finditer(template.read(MAX_TEMPLATE_BYTES))}
    except OSError:
        return None
    given = next(
        (
            u
            for u in settings.unknown
            if any(not u or r == u or f"{r}.".startswith(f"{u}.") or f"{u}.".startswith(f"{r}.") for r in read)
        ),
        None,
    )
    if given is None:
        return None
    what = f".Values.{given}" if given else "values"
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    text = " ".join(line for line in lines if not line.startswith("Use --debug")).removeprefix("Error: ")
    line = int(failed.group("line")) if failed.re is _ERROR_PLACE else 1
    return RenderProblem(
        found[1],
        line,
        1,
        f"helm template failed: {text}; rendered as {settings.label}, which gives {what} with an expression gpulint "
        "does not evaluate, so the chart was not checked as it installs - give its values under render.charts in "
        ".gpulint.yaml, or --values/--set",
        Severity.WARNING,
    )


MAX_TEMPLATE_BYTES = 512 * 1024
# `.Values.a.b` as a template reads it (also `$.Values`, `$root.Values`); `index .Values "a-b"` is not read
_VALUES_READ = re.compile(r"\.Values((?:\.[A-Za-z_]\w*)+)")
_ACTION = re.compile(r"\{\{.*?(?:\}\}|$)")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
MAX_VALUES_READ = 8


@dataclass(frozen=True)
class _Unset:
    """A value the failing template reads and the chart leaves for the installer to give (or, with ``misspelt``,
    a key its values.yaml writes under another spelling; with ``cluster``, what the cluster serves)."""

    display: str  # the template, as shown
    line: int
    column: int
    value: str  # `workload.gpus`
    where: str  # why the installer gives it: "the chart has no values.yaml", ...
    misspelt: str = ""  # the key values.yaml writes that the template's is a misspelling of: an error
    cluster: bool = False  # the template reads .Capabilities or lookup
    overridden: bool = False  # values.yaml sets it; the repository's install gives another value

    def said(self) -> str:
        if self.overridden:
            return f"the install gives .Values.{self.value} another value than the chart's default ({self.where})"
        return f"the chart gives no value for .Values.{self.value} ({self.where})"


def _unset_value(stderr: str, place: ChartPlace) -> _Unset | None:
    """Why an execution error depends on what the installer gives, or None (the chart is broken on its own).

    The failing action (or, for a `fail`, the condition of the `if` around it) reads a value the chart leaves to
    the installer: it has no values.yaml at all, writes the key (or one above it) with no value (`gcsBucket:`),
    asks for it with `required` (the message helm printed is the one a template gives `required`), a program of
    the repository writes it (a Go field tagged `yaml:"nodeSelectors"`: kubeflow/arena), another file of the
    repository gives it (a values file beside or above the chart, a `--set KEY=` in a README or script), or its
    values.yaml does not write it at all (`helm install -f recipe/values.yaml CHART`). Or the template reads the
    cluster (.Capabilities, lookup). A key values.yaml does not write that is a misspelling of one it writes at
    the same level (`imgae` beside `image`), which nothing in the repository gives, is the template's typo:
    ``misspelt``, an error. A value that is set (a wrong type) is no sign either way: None, an error. A template of
    the chart or of a subchart one level down (judged by the values its parent passes it, _PassedValues) is read;
    in an error raised inside an `include`, the innermost template."""
    if "execution error" not in stderr and "executing" not in stderr:
        return None
    placed = [(m, found) for m in _ERROR_PLACE.finditer(stderr) if (found := place.file(m.group("file")))]
    if not placed:
        return None
    match, found = placed[-1]
    parts = match.group("file").split("/")
    if parts[1] == "charts" and len(parts) > 4 and parts[3] == "templates":  # a subchart's: its parent's values
        section = _PassedValues.of(place, parts[2])
        if section is None:
            return None
    elif parts[1] == "templates":
        section = None
    else:
        return None
    lines = _read_template(found[0])
    number = int(match.group("line"))
    if lines is None or not 1 <= number <= len(lines):
        return None
    column = int(match.group("column") or 0)  # text/template's byte offset in the line, from 0
    text = lines[number - 1]
    action = next((a.group(0) for a in _ACTION.finditer(text) if a.start() <= column <= a.end()), text)
    node = stderr.rsplit(" at <", 1)[1].split(">", 1)[0] if " at <" in stderr else ""  # `at <.Values.x.y>`
    condition = _condition_above(lines, number, column) if _FAIL.search(action) else ""
    code = [_STRINGS.sub('""', part) for part in (node, action, condition)]  # a message names, it does not read
    read = [m.group(1)[1:] for part in code for m in _VALUES_READ.finditer(part)]
    read += _variables_read(node, lines)
    read += _set_in_message(stderr)
    read = list(dict.fromkeys(read))[:MAX_VALUES_READ]
    shown = (found[1], number, column + 1)
    if _CLUSTER.search(action) or _CLUSTER.search(condition):
        return _Unset(*shown, "", "", cluster=True)
    if section is not None:
        values: Any = section.values
        said = section.said
        if read and not values:
            return _Unset(*shown, read[0], f"neither the subchart's values.yaml nor {said} writes any")
    else:
        said = "values.yaml"
        values_path = os.path.join(place.directory, "values.yaml")
        if read and not place.readable(values_path):
            return _Unset(*shown, read[0], "the chart has no values.yaml")
        values_lines = _read_template(values_path) if place.readable(values_path) else []
        if values_lines is None:
            return None
        loaded = load_bytes(values_path, "\n".join(values_lines).encode())
        documents = [d.data for d in loaded.documents if d.data is not None]
        if read and not loaded.problems and not documents:  # an empty values.yaml: every value is the installer's
            return _Unset(*shown, read[0], "the chart has no values.yaml")
        values = documents[0] if documents and not loaded.problems else None  # None: values.yaml not read
    for value in read if values is not None else ():
        if _left_empty(values, value.split(".")):
            return _Unset(*shown, value, f"{said} leaves it empty")
    required = _required_values(stderr, place, section.directory if section else place.directory)
    if required:
        return _Unset(*shown, required[0], "its template asks for it with `required`")
    root = place.within or boundary(place.directory)
    elsewhere = GivenElsewhere(place.directory, root, place.exclude)  # read once for all the values judged
    for value in read if values is not None else ():
        keys = value.split(".")
        asked = section.installed(keys) if section else keys  # as the parent's install gives it
        missing = _missing_at(values, keys)
        if missing is None:
            current = dig(values, *keys)
            given = elsewhere.find(asked, current) if current is not None else None
            if given is not None:  # the chart's default is one the repository's install does not keep
                return _Unset(
                    *shown, value, f"{said} sets {json.dumps(current)}; {given} gives another", overridden=True
                )
            continue
        depth, level = missing
        writer = written_by_program(root, keys[depth])
        if writer is not None:
            return _Unset(
                *shown, value, f"{said} has none; {writer} writes it to the values the chart is rendered with"
            )
        given = elsewhere.find(asked)
        if given is not None:
            return _Unset(*shown, value, f"{said} has none; {given} gives it")
        misspelt = typo_of(keys[depth], [k for k in level if isinstance(k, str)])
        if misspelt is not None:
            return _Unset(*shown, value, "", misspelt=misspelt)
        return _Unset(*shown, value, f"{said} does not write '{'.'.join(keys[: depth + 1])}'")
    return None


@dataclass(frozen=True)
class _PassedValues:
    """A subchart's values as helm renders it inside its parent (pkg/chart/v2/util/coalesce.go): its own
    values.yaml under the parent's section for it (the dependency's alias, else its name) and the parent's
    `global:` (which the parent's wins)."""

    directory: str  # the subchart's, on disk
    key: str  # the parent's section for it
    values: dict[str, Any]
    said: str  # how a message names them

    @staticmethod
    def of(place: ChartPlace, key: str) -> _PassedValues | None:
        """``key``: the subchart as helm names it in template paths, the parent's section for its values."""
        directory = subchart_directory(place.directory, key)
        own, parent = _values_mapping(place, directory), _values_mapping(place, place.directory)
        if own is None or parent is None:
            return None  # a values.yaml that does not read: nothing to judge by
        values = coalesced(own, mapping(parent.get(key)))
        if isinstance(own.get("global"), dict) or isinstance(parent.get("global"), dict):
            values["global"] = coalesced(mapping(own.get("global")), mapping(parent.get("global")))
        said = f"its parent's '{key}:' and 'global:' over its values.yaml"
        return _PassedValues(directory, key, values, said)

    def installed(self, keys: list[str]) -> list[str]:
        """The keys an install of the parent sets the value at (`--set SUB.x`, `global.x` as written)."""
        return keys if keys[:1] == ["global"] else [self.key, *keys]


def _values_mapping(place: ChartPlace, directory: str) -> dict[str, Any] | None:
    """A chart's values.yaml as a mapping ({} when it has none or it is empty; None when it does not read)."""
    path = os.path.join(directory, "values.yaml")
    if not place.readable(path):
        return {}
    lines = _read_template(path)
    if lines is None:
        return None
    loaded = load_bytes(path, "\n".join(lines).encode())
    documents = [d.data for d in loaded.documents if d.data is not None]
    if loaded.problems or (documents and not isinstance(documents[0], dict)):
        return None
    return documents[0] if documents else {}


# `{{ fail "..." }}`, `{{- fail (printf ...) }}`: the chart stops on purpose; the `if` around it says when
_FAIL = re.compile(r"\{\{-?\s*fail\b")
_OPENS = re.compile(r"^\{\{-?\s*(?:if|with|range|define|block)\b")
_ELSE_IF = re.compile(r"^\{\{-?\s*else\s+(?:if|with)\b")
_ENDS = re.compile(r"^\{\{-?\s*end\b")
MAX_CONDITION_LINES = 200


def _condition_above(lines: list[str], number: int, column: int) -> str:
    """The action that opens the innermost `if` (or `else if`, `with`) around the action at ``number``:``column``
    (1-based line, 0-based column), looking up at most MAX_CONDITION_LINES lines; "" when there is none."""
    depth = 0
    for index in range(number - 1, max(number - 1 - MAX_CONDITION_LINES, -1), -1):
        text = lines[index] if index != number - 1 else lines[index][:column]
        for action in reversed([a.group(0) for a in _ACTION.finditer(text)]):
            if _ENDS.match(action):
                depth += 1
            elif _ELSE_IF.match(action) and depth == 0:
                return action
            elif _OPENS.match(action):
                if depth == 0:
                    return action if not action.lstrip("{- ").startswith(("define", "block", "range")) else ""
                depth -= 1
    return ""


# `set aws.enabled=true`: a value path in helm's `--set` form, in the message a failing `fail` or `required` printed
_SET_FORM = re.compile(r"(?<![\w.$/-])([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+)=")


def _set_in_message(stderr: str) -> list[str]:
    """The values a chart's own failure message tells the installer to set (`fail (printf "Exactly one cloud
    provider must be enabled: set %s" ...)` printing `set aws.enabled=true, azure.enabled=true`): helm names only
    the place of the outermost action, an `include` whose template holds the `fail`, so its condition is not
    read; the message says which values decide."""
    found = _EXECUTION_MESSAGE.search(stderr)
    return [m.group(1) for m in _SET_FORM.finditer(found.group("message"))] if found else []


# `{{- $tfNodeSelectors := .Values.tfNodeSelectors -}}`: a variable that holds a value
_VARIABLE_SET = re.compile(r"\$(\w+)\s*:?=\s*(?:\$|\$root)?\.Values((?:\.[A-Za-z_]\w*)+)")
_VARIABLE_USED = re.compile(r"\$(\w+)((?:\.[A-Za-z_]\w*)*)")


def _variables_read(node: str, lines: list[str]) -> list[str]:
    """The values a failing node reads through variables its template set from them (`len $sel.Worker`, with
    `$sel := .Values.tfNodeSelectors`: `tfNodeSelectors.Worker`)."""
    used = [(m.group(1), m.group(2)) for m in _VARIABLE_USED.finditer(node) if m.group(1) not in ("", "root")]
    if not used:
        return []
    assigned: dict[str, str] = {}
    for line in lines:
        for m in _VARIABLE_SET.finditer(line):
            assigned.setdefault(m.group(1), m.group(2)[1:])
    return [assigned[name] + rest for name, rest in used if name in assigned]


# helm prints a failed `required`'s own message: `execution error at (chart/templates/x.yaml:7:36): MESSAGE`
_EXECUTION_MESSAGE = re.compile(r"execution error at \([^)]*\): (?P<message>[^\n]+)")
MAX_TEMPLATES = 500


def _required_values(stderr: str, place: ChartPlace, chart: str) -> list[str]:
    """The values read by the chart's own `required` call whose message helm printed (``required "A value is
    required for .Values.ingressClass" .Values.ingressClass``, or a pipeline ending in ``| required "..."``): the
    chart's author asks the installer for them. The templates folder of ``chart`` (the chart or the subchart whose
    template failed) is read, helpers included."""
    found = _EXECUTION_MESSAGE.search(stderr)
    if found is None:
        return []
    message = found.group("message").strip()
    call = re.compile(r"required\s+(?:\"" + re.escape(message) + r"\"|`" + re.escape(message) + "`)")
    templates = os.path.join(chart, "templates")
    names: list[str] = []
    for directory, subdirectories, files in os.walk(templates):
        subdirectories.sort()
        names.extend(os.path.join(directory, name) for name in sorted(files))
        if len(names) > MAX_TEMPLATES:
            return []
    for name in names:
        lines = _read_template(name) if place.readable(name) else None
        for line in lines or ():
            hit = call.search(line)
            if hit is None:
                continue
            action = next((a.group(0) for a in _ACTION.finditer(line) if a.start() <= hit.start() <= a.end()), line)
            return [m.group(1)[1:] for m in _VALUES_READ.finditer(action)]
    return []


def _missing_at(values: object, keys: list[str]) -> tuple[int, dict[object, object]] | None:
    """The index of the first key of the path that values.yaml does not write (under keys it writes as mappings),
    and the mapping it is missing from; None when it writes the whole path (or something else than a mapping)."""
    for depth, key in enumerate(keys):
        if not isinstance(values, dict):
            return None
        if key not in values:
            return depth, values
        values = values[key]
    return None


def _left_empty(values: object, keys: list[str]) -> bool:
    """The key, or one above it, is written with no value (null or ""); a key that is absent is not."""
    for key in keys:
        if not isinstance(values, dict) or key not in values:
            return False
        values = values[key]
        if values is None or values == "":
            return True
    return False


def _hub_values(place: ChartPlace) -> list[LoadedFile]:
    """A chart that depends on zero-to-jupyterhub: its values.yaml, when the section it gives z2jh (the
    dependency's alias, else its name) makes user pods (kube/jupyterhub), read whether or not helm renders it."""
    chart = _read_template(os.path.join(place.directory, "Chart.yaml"))
    if chart is None or UMBRELLA not in "\n".join(chart):
        return []
    manifest = load_bytes("Chart.yaml", "\n".join(chart).encode()).documents
    dependencies = sequence(mapping(manifest[0].data if manifest else None).get("dependencies"))
    sections = [text(d.get("alias")) or UMBRELLA for d in map(mapping, dependencies) if d.get("name") == UMBRELLA]
    values_path = os.path.join(place.directory, "values.yaml")
    lines = _read_template(values_path) if sections and place.readable(values_path) else None
    if lines is None:
        return []
    loaded = load_bytes(os.path.join(place.display, "values.yaml"), "\n".join(lines).encode())
    held = [d for d in loaded.documents if any(values_of(d.data, section) for section in sections)]
    for document in held:
        document.data = next(v for section in sections if (v := values_of(document.data, section)) is not None)
    loaded.documents = held
    return [loaded] if held else []


def _dependencies_line(directory: str) -> int:
    try:
        with open(os.path.join(directory, "Chart.yaml"), encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if line.startswith("dependencies:"):
                    return number
    except OSError:
        pass
    return 1


@dataclass
class _Template:
    display: str
    lines: list[str]


def _read_template(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TEMPLATE_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_TEMPLATE_BYTES:
        return None
    return raw.decode("utf-8", "replace").split("\n")


def map_documents(loaded: LoadedFile, places: tuple[ChartPlace, ...], fix_values: bool = False) -> LoadedFile:
    """Each document of `helm template` output placed in its template: the file its `# Source:`
    names, at the template line that printed the field. ``fix_values``: the chart was rendered with its
    own values.yaml alone, so a fix to a value it printed may go there."""
    values_cache: dict[str, _Values | None] = {}
    text = loaded.text
    sources = [(match.start(), match.group(1)) for match in SOURCE_COMMENT.finditer(text)]
    if not sources:
        return loaded
    starts = [match.start() for match in _DOCUMENT_START.finditer(text)]
    line_starts = _line_starts(text)
    templates: dict[str, _Template | None] = {}
    maps: dict[tuple[int, str], LineMap] = {}
    documents = []
    for document in loaded.documents:
        node = document.node
        if node is None:
            documents.append(document)
            continue
        begin = _offset(line_starts, document.line_offset) + node.start_mark.index
        source = next((s for s in reversed(sources) if s[0] < begin), None)
        if source is None:
            documents.append(document)
            continue
        offset, name = source
        first_line = text.count("\n", 0, offset) + 1  # the line after "# Source:" (0-based)
        end = next((s for s in starts if s > offset), len(text))
        template = templates.get(name)
        if name not in templates:
            template = _locate_template(name, places)
            templates[name] = template
            if template is not None:
                loaded.texts[template.display] = "\n".join(template.lines)
        if template is None:  # rendered elsewhere (piped in from another directory): the name Helm gave
            documents.append(
                mapped(document, name, place=partial(_relative, first_line=first_line), fix_refusal=_REFUSAL)
            )
            continue
        key = (offset, name)
        if key not in maps:
            rendered_lines = text[_offset(line_starts, first_line) : end].split("\n")
            maps[key] = align(rendered_lines, template.lines)
        values = _values_for(template, places, values_cache) if fix_values else None
        documents.append(
            mapped(
                document,
                template.display,
                place=partial(
                    _place,
                    line_map=maps[key],
                    first_line=first_line,
                    text_lines=_Lines(text, line_starts),
                    template=template,
                ),
                place_fix=partial(
                    _values_fix,
                    document=document,
                    line_map=maps[key],
                    first_line=first_line,
                    template=template,
                    values=values,
                ),
            )
        )
    loaded.documents = documents
    return loaded


@dataclass(frozen=True)
class _Values:
    display: str
    fs_path: str
    document: LocatedDocument


# `{{- toYaml .Values.resources | nindent 12 }}`, `{{ .Values.resources | toYaml | nindent 12 }}`
_TO_YAML = re.compile(r"\{\{-?\s*(?:toYaml\s+\$?\.Values\.([\w.]+)|\$?\.Values\.([\w.]+)\s*\|\s*toYaml)\b[^}]*\}\}")
# `nvidia.com/gpu: {{ .Values.gpus }}`: the whole value is one value of values.yaml
_VALUE = re.compile(r":\s*\{\{-?\s*\$?\.Values\.([\w.]+)\s*-?\}\}\s*$")


def _values_for(
    template: _Template, places: tuple[ChartPlace, ...], cache: dict[str, _Values | None]
) -> _Values | None:
    """The values.yaml of the chart whose own templates/ holds ``template`` (not a subchart's)."""
    for place in places:
        if os.path.dirname(os.path.dirname(template.display)) != os.path.normpath(place.display):
            continue
        path = os.path.join(place.directory, "values.yaml")
        if path not in cache:
            cache[path] = None
            lines = _read_template(path) if place.readable(path) else None
            if lines is not None:
                loaded = load_bytes(os.path.join(place.display, "values.yaml"), "\n".join(lines).encode())
                documents = [d for d in loaded.documents if isinstance(d.data, dict)]
                if documents and not loaded.problems:
                    cache[path] = _Values(loaded.path, path, documents[0])
        return cache[path]
    return None


def _values_fix(
    fix: Fix,
    *,
    document: LocatedDocument,
    line_map: LineMap,
    first_line: int,
    template: _Template,
    values: _Values | None,
) -> Fix:
    """A fix to a field the chart printed from values.yaml (``toYaml .Values.x`` or ``{{ .Values.x }}``)
    goes to values.yaml; anything else the template computes is refused: gpulint edits no template logic."""
    refused = replace(fix, refused=_REFUSAL)
    if values is None or document.node is None:
        return refused
    target = _values_path(fix.path, document, line_map, first_line, template)
    if target is None:
        return refused
    values_path, rendered_prefix, values_prefix = target
    if dig(values.document.data, *values_prefix) != dig(document.data, *rendered_prefix):
        return refused  # the chart printed something else than values.yaml holds (a default, a merge)
    source = None
    if fix.source_path is not None and fix.source_path[: len(rendered_prefix)] == rendered_prefix:
        source = (*values_prefix, *fix.source_path[len(rendered_prefix) :])
    return replace(
        fix,
        document=values.document.index,
        path=values_path,
        source_path=source,
        file=values.display,
        fs_path=values.fs_path,
    )


def _values_path(
    path: Path, document: LocatedDocument, line_map: LineMap, first_line: int, template: _Template
) -> tuple[Path, Path, Path] | None:
    """(the path in values.yaml, the rendered path that maps to its values key, that key's path)."""
    chain = _nodes(document, path)

    def template_line(node: Node) -> tuple[str, bool]:
        index = node.start_mark.line + document.line_offset - first_line
        line = line_map.line(index)
        exact = line_map.exact[index] if 0 <= index < len(line_map.exact) else False
        return (template.lines[line] if line < len(template.lines) else ""), exact

    for depth in range(len(chain) - 1, -1, -1):
        node = chain[depth]
        if isinstance(node, MappingNode) and node.value:
            lines = {template_line(key) for key, _ in node.value}
            if len(lines) == 1:
                ((line, exact),) = lines
                match = _TO_YAML.search(line)
                if match and not exact:
                    prefix = tuple((match.group(1) or match.group(2)).split("."))
                    return (*prefix, *path[depth:]), path[:depth], prefix
    if len(chain) == len(path) + 1 and path:
        line, exact = template_line(chain[-1])
        match = _VALUE.search(line)
        if match and exact:
            prefix = tuple(match.group(1).split("."))
            return prefix, path, prefix
    return None


def _nodes(document: LocatedDocument, path: Path) -> list[Node]:
    """The nodes along ``path`` from the root, as far as they exist."""
    assert document.node is not None
    chain: list[Node] = [document.node]
    for step in path:
        node = chain[-1]
        child = None
        if isinstance(node, MappingNode) and isinstance(step, str):
            child = next(
                (value for key, value in node.value if isinstance(key, ScalarNode) and key.value == step), None
            )
        elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            child = node.value[step]
        if child is None:
            break
        chain.append(child)
    return chain


def _locate_template(name: str, places: tuple[ChartPlace, ...]) -> _Template | None:
    for place in places:
        found = place.file(name)
        if found is not None:
            lines = _read_template(found[0])
            if lines is not None:
                return _Template(found[1], lines)
    return None


@dataclass(frozen=True)
class _Lines:
    text: str
    starts: list[int]

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < len(self.starts):
            return ""
        end = self.text.find("\n", self.starts[index])
        return self.text[self.starts[index] : end if end >= 0 else len(self.text)]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in re.finditer("\n", text))
    return starts


def _offset(line_starts: list[int], line: int) -> int:
    return line_starts[line] if line < len(line_starts) else line_starts[-1]


def _place(
    line: int, column: int, *, line_map: LineMap, first_line: int, text_lines: _Lines, template: _Template
) -> tuple[int, int]:
    index = line - 1 - first_line
    template_index = line_map.line(index)
    exact = line_map.exact[index] if 0 <= index < len(line_map.exact) else False
    template_line = template.lines[template_index] if template_index < len(template.lines) else ""
    return template_index + 1, template_column(text_lines[line - 1], column, template_line, exact)


def _relative(line: int, column: int, *, first_line: int) -> tuple[int, int]:
    """No template to align with: the line within the document Helm printed for it."""
    return max(line - first_line, 1), column


def places_for_stdin(text: str, start: str = ".") -> tuple[ChartPlace, ...]:
    """Charts that piped `helm template` output may come from: the current directory (``helm template
    .``) or a directory beside it named as the chart (``helm template ./gpu-job``)."""
    names = {match.group(1).split("/", 1)[0] for match in SOURCE_COMMENT.finditer(text)}
    places = []
    for name in sorted(names):
        for directory in (start, os.path.join(start, name), os.path.join(start, "charts", name)):
            if os.path.isfile(os.path.join(directory, "Chart.yaml")) and chart_name(directory) == name:
                display = os.path.normpath(directory)
                places.append(ChartPlace(name, os.path.abspath(directory), display))
                break
    return tuple(places)


def stdin_rendered(display: str, raw: bytes) -> Rendered | None:
    """Piped `helm template` output (it has `# Source:` comments): its documents named by template."""
    head = raw[: 1024 * 1024].decode("utf-8", "replace")
    if not SOURCE_COMMENT.search(head):
        return None
    text = raw.decode("utf-8", "replace")
    rendered = Rendered("helm", display, output=raw)
    rendered.mapper = partial(map_documents, places=places_for_stdin(text))
    return rendered
