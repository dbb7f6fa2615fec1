"""What a policy is once loaded: expressions, validations, match rules, and the constants of the two APIs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel.engine import Compiled
from gpulint.lint.errors import PolicyError as PolicyError  # defined apart: see gpulint.lint.errors
from gpulint.lint.findings import Path, Severity

if TYPE_CHECKING:
    pass


POLICY_API = "gpulint.io/v1alpha1"
VAP_API = "admissionregistration.k8s.io/v1"
POLICY_VARIABLES = (
    "object",
    "oldObject",
    "podSpecs",
    "inventory",
    "objects",
    "variables",
    "params",
    "request",
    "namespaceObject",
    "authorizer",
)
NOT_OFFLINE_VARIABLES = ("authorizer",)
ACTION_SEVERITY = {"Deny": Severity.ERROR, "Warn": Severity.WARNING, "Audit": Severity.INFO}


@dataclass(frozen=True)
class Expression:
    text: str
    path: Path  # inside the policy document, for load errors
    compiled: Compiled | None = None
    not_offline: str = ""  # why it cannot be evaluated offline


@dataclass(frozen=True)
class Validation:
    expression: Expression
    message: str
    message_expression: Expression | None
    field_path: Path


@dataclass
class Match:
    kinds: tuple[str, ...] = ()  # "Pod", "apps/Deployment", "*"
    resources: tuple[
        tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...
    ] = ()  # (groups, versions, resources)
    namespaces: tuple[str, ...] = ()
    label_selector: dict[str, Any] | None = None
    namespace_selector: dict[str, Any] | None = None
    conditions: tuple[tuple[str, Expression], ...] = ()


@dataclass
class Policy:
    name: str
    severity: Severity
    match: Match
    variables: tuple[tuple[str, Expression], ...]
    validations: tuple[Validation, ...]
    docs: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    params: tuple[dict[str, Any], ...] = ()  # VAP: the params objects the binding selects
    needs_params: bool = False
    extra_matches: tuple[Match, ...] = ()  # VAP binding matchResources
    binding: str = ""  # VAP: the binding's name (the API server names both in a denial)

    @property
    def uses_objects(self) -> bool:
        texts = [e.text for _, e in self.variables] + [v.expression.text for v in self.validations]
        return any(re.search(r"\bobjects\b", t) for t in texts)
