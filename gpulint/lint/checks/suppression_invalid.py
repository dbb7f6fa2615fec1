"""suppression-invalid: an in-manifest suppression that names no rule, lacks a required reason, or
sits where the configuration does not honour one. Reported by the engine as it applies suppressions."""

from __future__ import annotations

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("suppression-invalid", Severity.WARNING)
RULE_ID = SPEC.id
check = None  # gpulint.lint.output.suppress finds these problems; the engine reports them
