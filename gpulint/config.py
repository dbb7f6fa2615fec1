"""Configuration: ``.gpulint.yaml`` or ``[tool.gpulint]`` in pyproject.toml, then flags.

Every key is validated; a bad one is a usage error that names the key and the file.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from gpulint.findings import Severity

CONFIG_FILE = ".gpulint.yaml"
SUPPORTED_KUBERNETES_VERSIONS = ("1.35", "1.36", "1.37")
DEFAULT_KUBERNETES_VERSION = "1.37"


class ConfigError(Exception):
    """A configuration or usage error: exit code 2."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] | None = None  # None: every rule
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    per_path_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gpu_resources: tuple[str, ...] = ()
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    fail_on: Severity = Severity.ERROR
    exclude: tuple[str, ...] = ()
    inventory: tuple[str, ...] = ()  # inventory files/directories (config paths made relative to the config file)
    feature_gates: dict[str, bool] | None = None  # None: not stated (gate findings are info)
    # The webhook sees one object at a time: a reference to another object (a claim template,
    # a PodGroup) cannot be judged missing there, only in a linted set.
    single_object: bool = False
    policies: tuple[str, ...] = ()  # policy files/directories, or gpulint:NAME from the shipped library
    source: str = ""  # the file it came from, for messages
    root: str = "."  # paths in per-path-ignores and exclude are relative to this directory

    def with_overrides(self, **changes: Any) -> "Config":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def parse_kubernetes_version(value: Any, where: str = "--kubernetes-version") -> str:
    text = str(value).strip().lstrip("v")
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", text)
    version = f"{match.group(1)}.{match.group(2)}" if match else text
    if version not in SUPPORTED_KUBERNETES_VERSIONS:
        raise ConfigError(f"{where}: Kubernetes version {value!r} is not supported "
                          f"(choose one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)})")
    return version


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
            raise ConfigError(f"{where}: gate '{name}' must be true or false, not {flag!r}")
    return gates


def check_rule_ids(ids: tuple[str, ...], known: set[str], where: str, key: str) -> None:
    for rule_id in ids:
        if rule_id != "all" and rule_id not in known:
            close = sorted(known, key=lambda k: _distance(k, rule_id))[:1]
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"{where}: '{key}' names unknown rule '{rule_id}'{hint}")


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def from_mapping(raw: Any, where: str, known_rules: set[str], root: str = ".") -> Config:
    if raw is None:
        return Config(source=where, root=root)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the configuration must be a mapping of keys to values")
    handlers = {
        "select", "ignore", "severity", "per-path-ignores", "gpu-resources",
        "kubernetes-version", "fail-on", "exclude", "inventory", "feature-gates", "policies",
    }
    for key in raw:
        if key not in handlers:
            raise ConfigError(f"{where}: unknown key '{key}' (known keys: {', '.join(sorted(handlers))})")
    config = Config(source=where, root=root)
    changes: dict[str, Any] = {}
    if "select" in raw:
        changes["select"] = _string_list(raw["select"], "select", where)
        check_rule_ids(changes["select"], known_rules, where, "select")
    if "ignore" in raw:
        changes["ignore"] = _string_list(raw["ignore"], "ignore", where)
        check_rule_ids(changes["ignore"], known_rules, where, "ignore")
    if "severity" in raw:
        severities = raw["severity"]
        if not isinstance(severities, dict):
            raise ConfigError(f"{where}: 'severity' must map rule ids to error, warning or info")
        parsed: dict[str, Severity] = {}
        for rule_id, level in severities.items():
            check_rule_ids((str(rule_id),), known_rules, where, "severity")
            try:
                parsed[str(rule_id)] = Severity.parse(str(level))
            except ValueError as exc:
                raise ConfigError(f"{where}: 'severity.{rule_id}': {exc}") from None
        changes["severity"] = parsed
    if "per-path-ignores" in raw:
        mapping = raw["per-path-ignores"]
        if not isinstance(mapping, dict):
            raise ConfigError(f"{where}: 'per-path-ignores' must map path globs to lists of rule ids")
        per_path: dict[str, tuple[str, ...]] = {}
        for glob, rules in mapping.items():
            ids = _string_list(rules, f"per-path-ignores.{glob}", where)
            check_rule_ids(ids, known_rules, where, f"per-path-ignores.{glob}")
            per_path[str(glob)] = ids
        changes["per_path_ignores"] = per_path
    if "gpu-resources" in raw:
        changes["gpu_resources"] = _string_list(raw["gpu-resources"], "gpu-resources", where)
    if "kubernetes-version" in raw:
        changes["kubernetes_version"] = parse_kubernetes_version(raw["kubernetes-version"],
                                                                 f"{where}: 'kubernetes-version'")
    if "fail-on" in raw:
        try:
            changes["fail_on"] = Severity.parse(str(raw["fail-on"]))
        except ValueError as exc:
            raise ConfigError(f"{where}: 'fail-on': {exc}") from None
    if "exclude" in raw:
        changes["exclude"] = _string_list(raw["exclude"], "exclude", where)
    if "feature-gates" in raw:
        changes["feature_gates"] = parse_feature_gates(raw["feature-gates"], f"{where}: 'feature-gates'")
    if "policies" in raw:
        changes["policies"] = tuple(p if p.startswith("gpulint:") else str(Path(root) / p)
                                    for p in _string_list(raw["policies"], "policies", where))
    if "inventory" in raw:
        changes["inventory"] = tuple(str(Path(root) / p) for p in _string_list(raw["inventory"], "inventory", where))
    return replace(config, **changes)


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
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def load(path: Path, known_rules: set[str]) -> Config:
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read the configuration: {exc}") from None
    root = str(path.parent)
    if path.name == "pyproject.toml":
        try:
            raw = tomllib.loads(text).get("tool", {}).get("gpulint")
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: invalid TOML: {exc}") from None
        return from_mapping(raw, f"{where} [tool.gpulint]", known_rules, root)
    try:
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        position = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{where}{position}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    return from_mapping(raw, where, known_rules, root)
