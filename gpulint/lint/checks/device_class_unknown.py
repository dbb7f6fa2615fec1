"""device-class-unknown: a claim names a DeviceClass that neither the linted files nor the inventory define."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from gpulint.lint.checks import CheckContext
from gpulint.lint.dra_objects import class_references
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import DRA_CLAIM_KINDS, RuleSpec

SPEC = RuleSpec("device-class-unknown", Severity.ERROR, kinds=DRA_CLAIM_KINDS)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    known = sorted(ctx.resolver.device_classes)
    for class_name, path in class_references(obj):
        if not class_name:
            yield Diagnostic(RULE_ID, path, "the request names no deviceClassName (required)")
        elif not known:
            yield Diagnostic(
                RULE_ID,
                path,
                f"DeviceClass '{class_name}' not checked: no DeviceClass is defined in "
                "the linted files or the inventory (drivers install their classes; add "
                "`kubectl get deviceclasses -o yaml` to the inventory)",
                severity=Severity.INFO,
            )
        elif class_name not in known:
            close = difflib.get_close_matches(class_name, known, n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f"; defined: {', '.join(known[:8])}"
            if ctx.resolver.classes_listed:
                yield Diagnostic(
                    RULE_ID,
                    path,
                    f"DeviceClass '{class_name}' does not exist: the scheduler leaves the pod Pending "
                    f'with "device class {class_name} does not exist"{hint}',
                )
            else:  # only the linted files' classes are known; a driver's chart may install this one
                yield Diagnostic(
                    RULE_ID,
                    path,
                    f"DeviceClass '{class_name}' is not defined in the linted files{hint} (if a driver "
                    "installs it, add `kubectl get deviceclasses -o yaml` to the inventory)",
                    severity=Severity.WARNING,
                )
