"""Configuration: ``.gpulint.yaml`` or ``[tool.gpulint]`` in pyproject.toml, then flags.

Every key is validated; a bad one is a usage error that names the key and the file.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import type_name
from gpulint.kube.typos import edit_distance
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.render.options import RenderConfigError, RenderOptions
from gpulint.lint.inputs.render.options import from_mapping as render_from_mapping
from gpulint.lint.paths import is_within

CONFIG_FILE = ".gpulint.yaml"
SUPPORTED_KUBERNETES_VERSIONS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
DEFAULT_KUBERNETES_VERSION = "1.37"


class ConfigError(Exception):
    """A configuration or usage error: exit code 2."""


# The render keys that choose what gpulint runs, and why. A pull request writes the repository's
# configuration, so only the command line and a configuration file outside the repository may set them.
USER_ONLY_RENDER_KEYS = {
    "helm": "names a program to run",
    "kustomize": "names a program to run",
    "kubectl": "names a program to run",
    "kustomize-enable-helm": "lets kustomize run helm, which downloads the charts a kustomization names",
}


@dataclass(frozen=True)
class ClusterScope:
    """One cluster of ``clusters:``: the linted files that deploy to it (path globs relative to the
    configuration's directory) and its inventory (files or directories: kubectl output, node-pool files;
    none: the run's --inventory if any, and the node pools, queues and quotas its own files describe)."""

    name: str
    paths: tuple[str, ...]
    inventory: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] | None = None  # None: every rule
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    per_path_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gpu_resources: tuple[str, ...] = ()
    gpu_runtime_class: str = ""  # the RuntimeClass GPU pods need on this cluster (k3s, k0s, RKE2, microk8s); "": none
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    fail_on: Severity = Severity.ERROR
    exclude: tuple[str, ...] = ()
    inventory: tuple[str, ...] = ()  # inventory files/directories (config paths made relative to the config file)
    feature_gates: dict[str, bool] | None = None  # None: not stated (gate findings are info)
    policies: tuple[str, ...] = ()  # policy files/directories, or gpulint:NAME from the shipped library
    node_catalog: tuple[str, ...] = ()  # instance-type catalog files that extend or override the shipped one
    schema_locations: tuple[str, ...] = ()  # --schema-location: kubeconform-style schema folders or templates
    extended_resource_toleration: bool | None = None  # the admission plugin; None: detected (GKE)
    gke_autopilot: bool | None = None  # the clusters are GKE Autopilot; None: detected (inventory, repository files)
    render: RenderOptions = field(default_factory=RenderOptions)  # how charts and overlays are rendered
    # suppressions: a reason required after `--`; unused ones reported; globs where in-manifest ones are not honoured
    require_reason: bool = False
    report_unused: bool = False
    suppressions_disallowed: tuple[str, ...] = ()
    baseline: str = ""  # a baseline file: its findings are not reported (gpulint.lint.output.baseline)
    source: str = ""  # the file it came from, for messages
    root: str = "."  # paths in per-path-ignores and exclude are relative to this directory
    repo_index: bool = True  # files named alone: resolve their references against the rest of the repository
    # kind -> path globs of the files whose references the linted files answer whole ("complete:"): there, a
    # name of that kind found nowhere does not exist (gpulint/lint/world/kinds.py)
    complete: dict[str, tuple[str, ...]] = field(default_factory=dict)
    clusters: tuple[ClusterScope, ...] = ()  # `clusters:`: which files deploy to which cluster's inventory

    @cached_property  # asked per object by several rules; the fields it reads never change (frozen)
    def gates(self) -> FeatureGates:
        """The target cluster's feature gates: its version's defaults, then the stated ones."""
        return FeatureGates.of(self.kubernetes_version, self.feature_gates)

    def enables(self, rule_id: str) -> bool:
        """``select`` and ``ignore`` let the rule run (a check may leave a cause to the rule that
        reports it only when that rule runs)."""
        if self.select is not None and "all" not in self.select and rule_id not in self.select:
            return False
        return rule_id not in self.ignore and "all" not in self.ignore

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def parse_kubernetes_version(value: Any, where: str = "--kubernetes-version") -> str:
    text = _scalar_text(value).strip().lstrip("v")
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", text)
    version = f"{match.group(1)}.{match.group(2)}" if match else text
    if version not in SUPPORTED_KUBERNETES_VERSIONS:
        raise ConfigError(
            f"{where}: Kubernetes version {_shown(value)} is not supported "
            f"(choose one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)})"
        )
    return version


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def parse_runtime_class(value: Any, where: str) -> str:
    """A RuntimeClass name: a DNS subdomain (metadata.name of a cluster-scoped object)."""
    if not isinstance(value, str) or len(value) > 253 or not _DNS_SUBDOMAIN.fullmatch(value):
        raise ConfigError(
            f"{where}: 'gpu-runtime-class' must be the name of a RuntimeClass (a DNS subdomain such as nvidia), "
            f"not {_shown(value)}"
        )
    return value


def parse_feature_gates(value: Any, where: str = "--feature-gates") -> dict[str, bool]:
    """``A=true,B=false`` (as kube-apiserver takes it) or a mapping of gate to bool."""
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, str):
        items = []
        for part in filter(None, (p.strip() for p in value.split(","))):
            name, sep, flag = part.partition("=")
            if not sep:
                raise ConfigError(f"{where}: '{part}' is not NAME=true|false")
            items.append((name.strip(), flag.strip().lower()))
    else:
        raise ConfigError(f"{where}: expected NAME=true|false pairs")
    gates = {}
    for name, flag in items:
        if flag in (True, "true"):
            gates[name] = True
        elif flag in (False, "false"):
            gates[name] = False
        else:
            raise ConfigError(f"{where}: gate '{_shown(name)}' must be true or false, not {_shown(flag)}")
    return gates


def check_rule_ids(ids: tuple[str, ...], known: set[str] | frozenset[str], where: str, key: str) -> None:
    for rule_id in ids:
        if rule_id != "all" and rule_id not in known:
            raise ConfigError(f"{where}: '{key}' names unknown rule {_shown(rule_id)}{rule_hint(rule_id, known)}")


def similar_rules(name: str, known: set[str] | frozenset[str]) -> list[str]:
    """The rule ids ``name`` most likely means: those it begins or is part of (`gpu-request` ->
    gpu-request-without-limit), else one within a few typos; none when nothing is close."""
    if len(name) > 64:  # the edit distance is quadratic: no suggestion for a name no rule id is near anyway
        return []
    lowered = name.lower()
    if len(lowered) >= 3:
        containing = sorted(rule for rule in known if lowered in rule)
        if containing:
            return containing[:3]
    best = min(known, key=lambda rule: (edit_distance(rule, lowered), rule), default=None)
    if best is not None and edit_distance(best, lowered) <= max(2, len(lowered) // 4):
        return [best]
    return []


def rule_hint(name: str, known: set[str] | frozenset[str]) -> str:
    close = similar_rules(name, known)
    if not close:
        return ""
    if len(close) == 1:
        return f"; did you mean '{close[0]}'?"
    return f"; did you mean one of {', '.join(repr(rule) for rule in close)}?"


Locator = Callable[[tuple[str, ...]], str]  # a key path -> "file:line:col" for messages
# The rule ids a configuration may name, given the policies it loads (policies are rules too).
KnownRules = Callable[[tuple[str, ...]], set[str]] | set[str]


def from_mapping(
    raw: Any,
    where: str,
    known_rules: KnownRules,
    root: str = ".",
    locate: Locator | None = None,
    repository: str | None = None,
) -> Config:
    """A configuration from its mapping; ``locate`` places a key's value in the file for messages.

    ``repository``: the work tree a repository's own configuration belongs to. Its paths must stay inside it
    and it may name no program; None for the user's own file outside the linted repository."""
    at: Locator = locate or (lambda keys: where)
    if raw is None:
        return Config(source=where, root=root)
    if not isinstance(raw, dict):
        raise ConfigError(f"{at(())}: the configuration must be a mapping of keys to values, not {type_name(raw)}")
    options = {option.key: option for option in OPTIONS}
    for key in raw:
        if key not in options:
            raise ConfigError(f"{at((str(key),))}: unknown key '{key}' (known keys: {', '.join(sorted(options))})")
    context = ParseContext(root, at, _Confinement(repository, at), frozenset())
    changes = POLICIES.parse(raw[POLICIES.key], context) if POLICIES.key in raw else {}
    # Policies load before the rule ids are checked: `select`, `ignore`, `severity` and
    # `per-path-ignores` may name a policy exactly as they name a built-in rule.
    known = known_rules(changes.get("policies", ())) if callable(known_rules) else set(known_rules)
    context = replace(context, known=frozenset(known))
    for option in OPTIONS:
        if option is not POLICIES and option.key in raw:
            changes.update(option.parse(raw[option.key], context))
    return replace(Config(source=where, root=root), **changes)


@dataclass(frozen=True)
class _Confinement:
    """What a repository's own configuration may not do: name a program to run, or a file outside its
    repository (a pull request writes it, and CI prints what gpulint reads). ``repository`` None: the user's
    own file, which may do both."""

    repository: str | None
    at: Locator

    def path(self, path: str, keys: tuple[str, ...]) -> str:
        if self.repository is None or is_within(path, self.repository):
            return path
        key = ".".join(keys)
        raise ConfigError(
            f"{self.at(keys)}: '{key}' leads outside the repository ({os.path.normpath(path)} is not in {self.repository}): "
            "a repository's configuration reads only the repository's files; give that file on the command "
            "line, or in a --config file kept outside the repository"
        )

    def runs_nothing(self, render: Any) -> None:
        if self.repository is None or not isinstance(render, dict):
            return
        for key, why in USER_ONLY_RENDER_KEYS.items():
            if key in render:
                raise ConfigError(
                    f"{self.at(('render', key))}: 'render.{key}' {why}, and a repository's configuration "
                    "cannot choose what gpulint executes (a pull request could make CI run its own code or "
                    f"reach the network); give --{key} on the command line, or set it in a --config file kept "
                    "outside the repository"
                )

    def chart_paths(self, render: RenderOptions) -> None:
        for directory, chart in render.charts.items():
            for path in (directory, *chart.values):
                self.path(path, ("render", "charts"))


def repository_of(directory: str) -> str:
    """The git work tree that holds ``directory``, or the directory itself outside git."""
    from gpulint.lint.inputs.repo_index import work_tree

    real = os.path.realpath(directory)
    return work_tree(real) or real


def repository_holding(config: Path, places: tuple[str, ...]) -> str | None:
    """The repository a configuration named with --config belongs to: the work tree (or folder) of a
    linted path or of the working directory that holds it. None: it lies outside them all, the user's own."""
    for place in places:
        if place == "-" or not os.path.exists(place):
            continue
        directory = place if os.path.isdir(place) else os.path.dirname(os.path.abspath(place))
        repository = repository_of(directory)
        if is_within(str(config), repository):
            return repository
    return None


EVERYWHERE = ("*",)  # a kind declared complete for every linted file


def parse_complete(raw: Any, at: Locator) -> dict[str, tuple[str, ...]]:
    """``complete: [Kind, ...]`` (for every linted file) or ``complete: {Kind: [path globs]}`` (for the
    files matching them): the linted files hold every object of the kind the cluster has."""
    from gpulint.lint.world.kinds import DECLARABLE

    where = at(("complete",))
    if isinstance(raw, (list, str)):
        kinds = _string_list(raw, "complete", where)
        return {_declarable(kind, DECLARABLE, where): EVERYWHERE for kind in kinds}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{where}: 'complete' must be a list of kinds (LocalQueue, ClusterQueue, ...) or map kinds to path "
            f"globs, not {type_name(raw)}"
        )
    declared: dict[str, tuple[str, ...]] = {}
    for kind, globs in raw.items():
        place = at(("complete", str(kind)))
        name = _declarable(kind, DECLARABLE, place)
        paths = _string_list(globs, f"complete.{name}", place)
        if not paths:
            raise ConfigError(f"{place}: 'complete.{name}' must list at least one path glob")
        declared[name] = paths
    return declared


_CLUSTER_KEYS = ("paths", "inventory")


def parse_clusters(raw: Any, root: str, at: Locator, inside: _Confinement) -> tuple[ClusterScope, ...]:
    """``clusters: {NAME: {paths: [globs], inventory: [files or directories]}}``: the files a cluster's
    workloads are in, judged against its inventory (a repository is not one cluster)."""
    where = at(("clusters",))
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(
            f"{where}: 'clusters' must map cluster names to {{paths: [path globs], inventory: [files or "
            f"directories] (optional)}}, not {type_name(raw) if raw else 'nothing'}"
        )
    scopes = []
    for name, entry in raw.items():
        place = at(("clusters", str(name)))
        if not isinstance(entry, dict):
            raise ConfigError(f"{place}: 'clusters.{name}' must be a mapping with the keys paths and inventory")
        for key in entry:
            if key not in _CLUSTER_KEYS:
                raise ConfigError(
                    f"{place}: unknown key 'clusters.{name}.{key}' (known keys: {', '.join(_CLUSTER_KEYS)})"
                )
        paths = _string_list(entry.get("paths", []), f"clusters.{name}.paths", place)
        inventory = _string_list(entry.get("inventory", []), f"clusters.{name}.inventory", place)
        if not paths:
            raise ConfigError(f"{place}: 'clusters.{name}' needs 'paths': at least one path glob")
        # read as --inventory is: a repository's configuration names only the repository's files
        keys = ("clusters", str(name), "inventory")
        scopes.append(ClusterScope(str(name), paths, tuple(inside.path(str(Path(root) / p), keys) for p in inventory)))
    return tuple(scopes)


def _declarable(kind: Any, known: frozenset[str], where: str) -> str:
    if isinstance(kind, str) and kind in known:
        return kind
    by_lower = {name.lower(): name for name in known}
    close = difflib.get_close_matches(str(kind).lower(), sorted(by_lower), n=1, cutoff=0.8)
    hint = f"; did you mean '{by_lower[close[0]]}'?" if close else ""
    raise ConfigError(
        f"{where}: 'complete' names {_shown(kind)}, which is not a kind whose set gpulint can take as complete{hint} "
        f"(kinds: {', '.join(sorted(known))})"
    )


def parse_schema_location(value: str, where: str = "--schema-location") -> str:
    """A --schema-location folder or kubeconform template, checked (exit 2 when it cannot be used)."""
    from gpulint.lint.schema_locations import SchemaLocationError, parse_location

    try:
        return parse_location(value)
    except SchemaLocationError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def check_schema_files(config: Config) -> None:
    """Every schema file the configured locations could serve is JSON (ConfigError otherwise)."""
    from gpulint.lint.schema_locations import SchemaLocationError, check_files

    try:
        check_files(config.schema_locations, config.kubernetes_version)
    except SchemaLocationError as exc:
        raise ConfigError(f"schema-location: {exc}") from None


def parse_switch(value: Any, where: str) -> bool | None:
    """true, false or auto (None: detected)."""
    if value is True or value is False:
        return value
    text = _scalar_text(value).strip().lower()
    if text in ("true", "false", "auto"):
        return None if text == "auto" else text == "true"
    raise ConfigError(f"{where} must be true, false or auto, not {_shown(value)}")


_SUPPRESSION_KEYS = ("require-reason", "report-unused", "disallow-in")


def _suppressions(raw: Any, at: Locator) -> dict[str, Any]:
    """``suppressions: {require-reason: bool, report-unused: bool, disallow-in: [globs]}``."""
    where = at(("suppressions",))
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'suppressions' must be a mapping with the keys {', '.join(_SUPPRESSION_KEYS)}")
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        place = at(("suppressions", str(key)))
        if key not in _SUPPRESSION_KEYS:
            raise ConfigError(f"{place}: unknown key 'suppressions.{key}' (known keys: {', '.join(_SUPPRESSION_KEYS)})")
        if key == "disallow-in":
            changes["suppressions_disallowed"] = _string_list(value, "suppressions.disallow-in", place)
        elif not isinstance(value, bool):
            raise ConfigError(f"{place}: 'suppressions.{key}' must be true or false, not {_shown(value)}")
        else:
            changes["require_reason" if key == "require-reason" else "report_unused"] = value
    return changes


def _shown(value: Any) -> str:
    """A user value in a message: quoted, and bounded (a configuration may hold anything)."""
    text = repr(_scalar_text(value)) if isinstance(value, str) else _scalar_text(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar_text(value: Any) -> str:
    """A scalar as text for a message or a parse; a list or mapping is shown by its type, not dumped."""
    if isinstance(value, (dict, list)):
        return type_name(value)
    return str(value)


def discover(start: Path) -> Path | None:
    """The nearest .gpulint.yaml, or pyproject.toml with [tool.gpulint], walking up from ``start``."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and "[tool.gpulint" in _read(pyproject):
            return pyproject
    return None


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:  # bounded: only looking for a [tool.gpulint] table
            return handle.read(MAX_CONFIG_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


MAX_CONFIG_BYTES = 1024 * 1024  # a configuration is a few lines; a pull request may plant anything


def load(path: Path, known_rules: KnownRules, repository: str | None = None) -> Config:
    """The configuration in ``path``; ``repository``: the work tree it belongs to, which confines it
    (None: the user's own file outside the linted repository)."""
    from gpulint.lint.inputs.sources import SourceError, read_file

    where = str(path)
    try:
        raw_bytes = read_file(where, limit=MAX_CONFIG_BYTES, limit_name="configuration size").content
    except SourceError as exc:
        raise ConfigError(f"cannot read the configuration: {exc}") from None
    root = str(path.parent)
    if path.name == "pyproject.toml":
        return _load_pyproject(where, raw_bytes, known_rules, root, repository)
    from gpulint.lint.inputs.loader import (
        load_bytes,  # the manifests' reader: YAML 1.1 as Kubernetes reads it, positions
    )

    loaded = load_bytes(where, raw_bytes)
    if loaded.problems:
        problem = loaded.problems[0]
        message = problem.message.removeprefix("YAML syntax error: ")
        raise ConfigError(f"{where}:{problem.line}:{problem.column}: invalid YAML: {message}")
    documents = [document for document in loaded.documents if document.data is not None]
    if len(documents) > 1:
        line, column = documents[1].locate(())
        raise ConfigError(f"{where}:{line}:{column}: the configuration must be one YAML document")
    if not documents:
        return from_mapping(None, where, known_rules, root, repository=repository)
    document = documents[0]

    def locate(keys: tuple[str, ...]) -> str:
        line, column = document.locate(keys)
        return f"{where}:{line}:{column}"

    return from_mapping(document.data, where, known_rules, root, locate, repository)


def _load_pyproject(where: str, raw: bytes, known_rules: KnownRules, root: str, repository: str | None) -> Config:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"{where}:{line}:{column}: invalid TOML: not valid UTF-8") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)$", message)
        if found:
            message = message[: found.start()].rstrip()
            raise ConfigError(f"{where}:{found.group(1)}:{found.group(2)}: invalid TOML: {message}") from None
        raise ConfigError(f"{where}: invalid TOML: {message}") from None
    tool = document.get("tool")
    raw_config = tool.get("gpulint") if isinstance(tool, dict) else None
    locator = _TomlLocator(where, text.splitlines())
    return from_mapping(raw_config, f"{where} [tool.gpulint]", known_rules, root, locator.locate, repository)


@dataclass(frozen=True)
class _TomlLocator:
    """Finds a key of [tool.gpulint] in pyproject.toml well enough to point at it (tomllib keeps no positions)."""

    where: str
    lines: list[str]

    def locate(self, keys: tuple[str, ...]) -> str:
        header = self._table("tool.gpulint")
        # A key of a sub-table ([tool.gpulint.severity]) is in that table; any other in [tool.gpulint].
        sub = self._table(f"tool.gpulint.{keys[0]}") if len(keys) > 1 else None
        for start, key in ((sub, keys[1:2]), (header, keys[:1])):
            found = self._key(start, key[0]) if start is not None and key else None
            if found is not None:
                return f"{self.where}:{found[0]}:{found[1]}"
        table = header if header is not None else sub
        return f"{self.where}:{table + 1}:1" if table is not None else f"{self.where} [tool.gpulint]"

    def _table(self, name: str) -> int | None:
        pattern = re.compile(r"\s*\[\s*" + r"\s*\.\s*".join(re.escape(part) for part in name.split(".")) + r"\s*\]")
        return next((index for index, line in enumerate(self.lines) if pattern.match(line)), None)

    def _key(self, header: int, key: str) -> tuple[int, int] | None:
        pattern = re.compile(r"\s*(?:" + re.escape(key) + r'|"' + re.escape(key) + r'")\s*=\s*')
        for index in range(header + 1, len(self.lines)):
            line = self.lines[index]
            if re.match(r"\s*\[", line):
                return None
            match = pattern.match(line)
            if match:
                return index + 1, match.end() + 1
        return None


# The options table: one row a key of .gpulint.yaml (and [tool.gpulint]). It drives the parsing above, the
# configuration page (docs/configuration.md) and the JSON schema editors complete from (gpulint.schema.json);
# scripts/config_docs.py writes both, and tests/unit/test_config_options.py fails when they are stale.


@dataclass(frozen=True)
class ParseContext:
    """What a row's parser needs besides the value: where paths are relative to, where the key is in the
    file, what a repository's own configuration may not do, and the rule ids it may name."""

    root: str
    at: Locator
    inside: _Confinement
    known: frozenset[str]  # built-in rules and the configuration's policies

    def path(self, value: str, key: str) -> str:
        """A file or directory relative to the configuration, kept inside its repository."""
        return self.inside.path(str(Path(self.root) / value), (key,))

    def paths(self, value: Any, key: str) -> tuple[str, ...]:
        return tuple(self.path(p, key) for p in _string_list(value, key, self.at((key,))))

    def rule_ids(self, value: Any, key: str) -> tuple[str, ...]:
        ids = _string_list(value, key, self.at((key,)))
        check_rule_ids(ids, self.known, self.at((key,)), key)
        return ids


Parse = Callable[[Any, ParseContext], dict[str, Any]]  # a value -> the Config fields it sets


@dataclass(frozen=True)
class Option:
    key: str
    parse: Parse
    schema: dict[str, Any]  # JSON Schema (draft-07) of the value
    example: str  # the value as a user writes it (YAML flow style)
    doc: str  # what it does, one sentence or two (the page's table and the schema's description)
    default: str  # what holds when the key is absent
    flag: str = ""  # the command-line flag that overrides it


def _caseless(*words: str) -> str:
    """A JSON Schema pattern (ECMA 262: no inline flags) for words read as ``.strip().lower()`` reads them."""
    spelled = ("".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in w) for w in words)
    return rf"^\s*(?:{'|'.join(spelled)})\s*$"


# Schemas accept every value the parsers accept (an editor must not mark a good file), so a list of strings
# may also be one comma-separated string, as _string_list reads it.
STRINGS: dict[str, Any] = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}
SOME_STRINGS: dict[str, Any] = {
    "anyOf": [{"type": "array", "items": {"type": "string"}, "minItems": 1}, {"type": "string", "pattern": "[^\\s,]"}]
}
RULE_IDS: dict[str, Any] = {
    "anyOf": [{"type": "array", "items": {"type": "string", "description": "a rule id, or all"}}, {"type": "string"}]
}
SEVERITY: dict[str, Any] = {"type": "string", "pattern": _caseless("error", "warning", "info")}
SWITCH: dict[str, Any] = {
    "anyOf": [{"type": "boolean"}, {"type": "string", "pattern": _caseless("true", "false", "auto")}]
}
KUBERNETES_VERSION: dict[str, Any] = {
    "anyOf": [
        {
            "type": "string",
            "pattern": rf"^\s*v*(?:{'|'.join(re.escape(v) for v in SUPPORTED_KUBERNETES_VERSIONS)})(?:\.[0-9]+)?\s*$",
        },
        # a YAML number: 1.30 reads as 1.3, which is no version
        {"type": "number", "enum": [float(v) for v in SUPPORTED_KUBERNETES_VERSIONS if str(float(v)) == v]},
    ]
}
FEATURE_GATES: dict[str, Any] = {
    "anyOf": [
        {"type": "object", "additionalProperties": {"anyOf": [{"type": "boolean"}, {"enum": ["true", "false"]}]}},
        {"type": "string", "description": "NAME=true|false pairs, comma-separated"},
    ]
}


def _policies(value: Any, context: ParseContext) -> dict[str, Any]:
    where = context.at(("policies",))
    return {
        "policies": tuple(
            p if p.startswith("gpulint:") else context.path(p, "policies")
            for p in _string_list(value, "policies", where)
        )
    }


def _severity(value: Any, context: ParseContext) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{context.at(('severity',))}: 'severity' must map rule ids to error, warning or info")
    parsed: dict[str, Severity] = {}
    for rule_id, level in value.items():
        place = context.at(("severity", str(rule_id)))
        check_rule_ids((str(rule_id),), context.known, place, "severity")
        try:
            parsed[str(rule_id)] = Severity.parse(_scalar_text(level))
        except ValueError as exc:
            raise ConfigError(f"{place}: 'severity.{rule_id}': {exc}") from None
    return {"severity": parsed}


def _per_path_ignores(value: Any, context: ParseContext) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(
            f"{context.at(('per-path-ignores',))}: 'per-path-ignores' must map path globs to lists of rule ids"
        )
    per_path: dict[str, tuple[str, ...]] = {}
    for glob, rules in value.items():
        place = context.at(("per-path-ignores", str(glob)))
        ids = _string_list(rules, f"per-path-ignores.{glob}", place)
        check_rule_ids(ids, context.known, place, f"per-path-ignores.{glob}")
        per_path[str(glob)] = ids
    return {"per_path_ignores": per_path}


def _fail_on(value: Any, context: ParseContext) -> dict[str, Any]:
    try:
        return {"fail_on": Severity.parse(_scalar_text(value))}
    except ValueError as exc:
        raise ConfigError(f"{context.at(('fail-on',))}: 'fail-on': {exc}") from None


def _render(value: Any, context: ParseContext) -> dict[str, Any]:
    context.inside.runs_nothing(value)
    try:
        render = render_from_mapping(value, context.root, context.at(("render",)))
    except RenderConfigError as exc:
        raise ConfigError(str(exc)) from None
    context.inside.chart_paths(render)
    return {"render": render}


def _baseline(value: Any, context: ParseContext) -> dict[str, Any]:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{context.at(('baseline',))}: 'baseline' must be the path of a baseline file")
    return {"baseline": context.path(value, "baseline")}


def _repo_index(value: Any, context: ParseContext) -> dict[str, Any]:
    if not isinstance(value, bool):
        raise ConfigError(f"{context.at(('repo-index',))}: 'repo-index' must be true or false")
    return {"repo_index": value}


def _schema_location(value: Any, context: ParseContext) -> dict[str, Any]:
    where = context.at(("schema-location",))
    return {
        "schema_locations": tuple(
            parse_schema_location(
                p if p.startswith(("http://", "https://")) else context.path(p, "schema-location"),
                where,
            )
            for p in _string_list(value, "schema-location", where)
        )
    }


def _field(name: str, parse: Callable[[Any, ParseContext], Any]) -> Parse:
    """A row whose value sets one Config field."""
    return lambda value, context: {name: parse(value, context)}


def _quoted_key(key: str) -> Callable[[ParseContext], str]:
    """How the older parsers name the key in a message: "FILE:LINE:COL: 'key'"."""
    return lambda context: f"{context.at((key,))}: '{key}'"


POLICIES = Option(
    "policies",
    _policies,
    STRINGS,
    "[policies/, gpulint:require-gpu-memory-limit]",
    "Policy files or directories (CEL rules of your own), or `gpulint:NAME` from the shipped library. "
    "`select`, `ignore`, `severity` and `per-path-ignores` may name their rules.",
    "none",
    "--policy",
)

OPTIONS: tuple[Option, ...] = (
    POLICIES,  # first: the rows after it may name a policy's rules
    Option(
        "select",
        _field("select", lambda value, context: context.rule_ids(value, "select")),
        RULE_IDS,
        "[all]",
        "Only these rules run (`all`: every rule).",
        "every rule",
        "--select",
    ),
    Option(
        "ignore",
        _field("ignore", lambda value, context: context.rule_ids(value, "ignore")),
        RULE_IDS,
        "[schema-invalid]",
        "These rules do not run.",
        "none",
        "--ignore",
    ),
    Option(
        "severity",
        _severity,
        {"type": "object", "additionalProperties": SEVERITY},
        "{gpu-non-integer: warning}",
        "A rule's severity: error, warning or info.",
        "each rule's own",
    ),
    Option(
        "per-path-ignores",
        _per_path_ignores,
        {"type": "object", "additionalProperties": RULE_IDS},
        '{"legacy/*": [gpu-request-without-limit]}',
        "Rules ignored in the files matching a glob (relative to the configuration's directory).",
        "none",
    ),
    Option(
        "gpu-resources",
        _field(
            "gpu_resources", lambda value, context: _string_list(value, "gpu-resources", context.at(("gpu-resources",)))
        ),
        STRINGS,
        "[example.com/accelerator]",
        "Extra extended-resource names treated as GPUs.",
        "none",
    ),
    Option(
        "gpu-runtime-class",
        _field(
            "gpu_runtime_class", lambda value, context: parse_runtime_class(value, context.at(("gpu-runtime-class",)))
        ),
        {"type": "string"},
        "nvidia",
        "The RuntimeClass GPU pods need on this cluster (k3s, k0s, RKE2, microk8s).",
        "none",
    ),
    Option(
        "kubernetes-version",
        _field(
            "kubernetes_version",
            lambda value, context: parse_kubernetes_version(value, _quoted_key("kubernetes-version")(context)),
        ),
        KUBERNETES_VERSION,
        '"1.36"',
        "The target cluster's Kubernetes version: its API, defaults and feature gates.",
        DEFAULT_KUBERNETES_VERSION,
        "--kubernetes-version",
    ),
    Option(
        "fail-on",
        _fail_on,
        SEVERITY,
        "warning",
        "The least severity that makes `gpulint check` exit 1.",
        "error",
        "--fail-on",
    ),
    Option(
        "exclude",
        _field("exclude", lambda value, context: _string_list(value, "exclude", context.at(("exclude",)))),
        STRINGS,
        "[legacy/**]",
        "Paths skipped when walking, by the repository index and by the Knative setup read "
        "(knative-field-disallowed) (with `--force-exclude`, also when named).",
        "none",
    ),
    Option(
        "feature-gates",
        _field(
            "feature_gates", lambda value, context: parse_feature_gates(value, _quoted_key("feature-gates")(context))
        ),
        FEATURE_GATES,
        "{GenericWorkload: true}",
        "The target cluster's feature gates that differ from its version's defaults.",
        "the version's defaults; gate findings are info",
        "--feature-gates",
    ),
    Option(
        "render",
        _render,
        {
            "type": ["object", "null"],  # `render:` left empty: the defaults
            "additionalProperties": False,
            "properties": {
                "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600},
                "enabled": {"type": "boolean"},
                "helm-tests": {"type": "boolean"},
                "kustomize-enable-helm": {"type": "boolean"},
                "helm": {"type": "string"},
                "kustomize": {"type": "string"},
                "kubectl": {"type": "string"},
                "charts": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "values": STRINGS,
                            "set": STRINGS,
                            "release": {"type": "string"},
                            "namespace": {"type": "string"},
                        },
                    },
                },
            },
        },
        "{timeout: 60}",
        "How charts and overlays are rendered (see [charts](charts.md)). `helm`, `kustomize`, `kubectl` and "
        "`kustomize-enable-helm` are refused in a repository's own configuration.",
        "render with helm and kustomize from PATH, 120 s",
        "--no-render",
    ),
    Option(
        "suppressions",
        lambda value, context: _suppressions(value, context.at),
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "require-reason": {"type": "boolean"},
                "report-unused": {"type": "boolean"},
                "disallow-in": STRINGS,
            },
        },
        "{require-reason: true, report-unused: true, disallow-in: [clusters/prod/*]}",
        "In-manifest suppressions: a reason required after `--`, unused ones reported, globs where none is "
        "honoured (see [suppressions](suppressions.md)).",
        "no reason required, unused ones not reported",
        "--report-unused",
    ),
    Option(
        "baseline",
        _baseline,
        {"type": "string", "minLength": 1},
        ".gpulint-baseline.json",
        "A baseline file: its findings are not reported.",
        "none",
        "--baseline",
    ),
    Option(
        "repo-index",
        _repo_index,
        {"type": "boolean"},
        "true",
        "Files named alone resolve their references against the rest of their repository.",
        "true",
    ),
    Option(
        "inventory",
        _field("inventory", lambda value, context: context.paths(value, "inventory")),
        STRINGS,
        "[cluster/]",
        "Cluster inventory files or directories (see [inventory](inventory.md)).",
        "none",
        "--inventory",
    ),
    Option(
        "node-catalog",
        _field("node_catalog", lambda value, context: context.paths(value, "node-catalog")),
        STRINGS,
        "[cluster/instance-types.yaml]",
        "Instance-type catalogs that extend or override the shipped one.",
        "the shipped catalog",
        "--node-catalog",
    ),
    Option(
        "schema-location",
        _schema_location,
        STRINGS,
        "[schemas]",
        "kubeconform-style JSON schema folders or URL templates for custom resources.",
        "the shipped schemas",
        "--schema-location",
    ),
    Option(
        "extended-resource-toleration",
        _field(
            "extended_resource_toleration",
            lambda value, context: parse_switch(value, _quoted_key("extended-resource-toleration")(context)),
        ),
        SWITCH,
        "auto",
        "The ExtendedResourceToleration admission plugin: true, false or auto (on when the inventory shows GKE).",
        "auto",
    ),
    Option(
        "gke-autopilot",
        _field("gke_autopilot", lambda value, context: parse_switch(value, _quoted_key("gke-autopilot")(context))),
        SWITCH,
        "true",
        "The linted files deploy to GKE Autopilot: true, false or auto (the inventory's word, else a cluster the "
        "repository's own Terraform, gcloud commands or Config Connector files create: a warning). false wins over "
        "an inventory that says Autopilot.",
        "auto",
    ),
    Option(
        "complete",
        _field("complete", lambda value, context: parse_complete(value, context.at)),
        {
            "anyOf": [
                STRINGS,
                {"type": "object", "additionalProperties": SOME_STRINGS},
            ]
        },
        "[LocalQueue, ClusterQueue]",
        "Kinds whose every object the linted files hold (or the files matching globs do): a name found nowhere "
        "does not exist (see [catalogs](catalogs.md)).",
        "none: absence proves nothing",
    ),
    Option(
        "clusters",
        _field("clusters", lambda value, context: parse_clusters(value, context.root, context.at, context.inside)),
        {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["paths"],
                "properties": {"paths": SOME_STRINGS, "inventory": STRINGS},
            },
        },
        '{prod: {paths: ["clusters/prod/*"], inventory: [inventory/prod]}}',
        "Which files deploy to which cluster, and that cluster's inventory (see [catalogs](catalogs.md)).",
        "one cluster: the run's inventory and the linted files' pools",
    ),
)
