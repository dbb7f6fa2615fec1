"""What a rule declares next to its check: id, the kinds it reads, what it needs, its default severity.

The engine routes on it (objects of other kinds never reach the check; a rule whose needs are
unmet is skipped, and the run says so); the docs live in rules/<id>.yaml.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpulint.lint.findings import Severity


class Need(enum.Enum):
    """What a rule cannot judge without; the value is the note printed when it is missing."""

    NODES = "no cluster inventory with nodes (--inventory)"
    DEVICES = "no ResourceSlices in the inventory"


class Scope(enum.Enum):
    """What a check is given: the whole object, or one pod template of it at a time (the engine finds an
    object's pod templates once and hands each to every such check)."""

    OBJECT = "object"  # check(obj, ctx)
    POD_TEMPLATE = "pod template"  # check(obj, site, ctx), once per pod template, in the object's order


@dataclass(frozen=True)
class RuleSpec:
    id: str  # kebab-case, the name of rules/<id>.yaml
    severity: Severity  # the default; the configuration may change it
    kinds: frozenset[str] | None = None  # object kinds the check reads; None: any object
    needs: frozenset[Need] = frozenset()
    scope: Scope = Scope.OBJECT
    in_part: bool = False  # with its needs unmet it still runs: what the linted files alone show (the note says so)
    # it judges the pods the object makes (their scheduling, gangs, what runs in them): on an object refused at
    # admission, which makes none, its findings are held back beside the reported refusal (verdicts/refusal.py)
    of_pods: bool = False

    def reads(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds


# Kind tables shared by several rules.
DRA_CLAIM_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
DRA_SELECTOR_KINDS = DRA_CLAIM_KINDS | {"DeviceClass"}
