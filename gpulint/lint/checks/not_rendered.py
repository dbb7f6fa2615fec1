"""not-rendered: a chart, overlay or template file that was not rendered into objects.

Reported by the renderers and the loader (a chart that fails `helm template`, an overlay kustomize
cannot build, a file with ``{{ }}`` or ``${VAR}`` placeholders), so no check."""

from __future__ import annotations

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("not-rendered", Severity.ERROR)
RULE_ID = SPEC.id
check = None  # the renderers' and the loader's problems become this rule's findings (gpulint.lint.engine)
