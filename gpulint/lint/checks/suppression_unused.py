"""suppression-unused: a suppression that suppressed nothing (ruff's RUF100), reported only with
--report-unused or `suppressions: {report-unused: true}`. Reported by the engine."""

from __future__ import annotations

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("suppression-unused", Severity.WARNING)
RULE_ID = SPEC.id
check = None  # gpulint.lint.output.suppress finds these; the engine reports them
