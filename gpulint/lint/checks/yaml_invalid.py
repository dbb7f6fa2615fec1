"""yaml-invalid: a file that is not valid YAML (or JSON) for Kubernetes. Reported by the loader, so no check."""

from __future__ import annotations

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("yaml-invalid", Severity.ERROR)
RULE_ID = SPEC.id
check = None  # the loader's problems become this rule's findings (gpulint.lint.engine)
