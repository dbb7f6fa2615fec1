"""What a formatter is told besides the report: colour, run-level notes, the severity CI formats flag."""

from __future__ import annotations

from dataclasses import dataclass

from gpulint.lint.findings import Severity


@dataclass(frozen=True)
class FormatOptions:
    color: bool = False
    notes: tuple[str, ...] = ()  # run-level notes for the summary (e.g. "inventory rules skipped")
    # The lowest severity the CI formats flag (GitHub annotations, JUnit failures): warning, or info
    # with --fail-on info. An annotation or a failed test for every info finding buries the ones that matter.
    annotate_from: Severity = Severity.WARNING
