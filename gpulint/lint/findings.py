"""The values that flow out of checks: severities, object references, findings, fixes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

# re-exported: the findings name objects and places
from gpulint.kube.refs import ObjectRef as ObjectRef
from gpulint.kube.refs import Path as Path


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Append:
    """Add ``item`` (a mapping or a scalar) at the end of the list at ``path``; a missing list is created."""

    path: Path
    item: Any


@dataclass(frozen=True)
class Fix:
    """A safe, mechanical edit: set the value at ``path`` of document ``document``.

    ``path`` is relative to the document root; ``value`` is a plain YAML scalar.
    When the parent mapping of ``path`` does not exist yet, it is created.
    """

    document: int
    path: Path
    value: Any
    description: str
    source_path: Path | None = None  # copy the scalar found here (keeps its quoting) instead of ``value``
    # A rendered object's fix goes to the file that holds the field (a base, a patch): ``file`` as shown
    # and ``fs_path`` on disk ("" for the finding's own file); ``refused`` says why it cannot be applied.
    file: str = ""
    fs_path: str = ""
    refused: str = ""

    @property
    def applicable(self) -> bool:
        return not self.refused

    appends: tuple[Append, ...] = ()  # list items added with the fix, all or none (``path`` () sets nothing)


@dataclass(frozen=True)
class Diagnostic:
    """What a check yields: a rule, a place in the object and a message.

    The engine turns it into a Finding (severity from the configuration, line and
    column from the document), so checks need to know neither.
    """

    rule: str
    path: Path
    message: str
    on_key: bool = False  # point at the key of ``path`` rather than at its value
    fix_value: Any = None
    fix_path: Path | None = None
    fix_description: str = ""
    fix_source: Path | None = None
    severity: Severity | None = None  # a check may lower/raise one finding (e.g. unknown fields)
    # An answer that is no verdict ("could not decide", "not evaluable offline") stays at ``severity``
    # whatever the configuration sets for the rule: raising the rule must not turn "unknown" into an error.
    pinned: bool = False
    offset: int | None = None  # a character offset inside the string at ``path`` (a CEL error's position)
    fix_appends: tuple[Append, ...] = ()  # list items the fix adds (with or without ``fix_path``)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    obj: ObjectRef = field(default_factory=ObjectRef)
    fix: Fix | None = None
    document: int = 0

    def sort_key(self) -> tuple[Any, ...]:
        return (self.file, self.line, self.column, self.rule, self.message)

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "message": self.message,
            "path": self.file,
            "line": self.line,
            "column": self.column,
            "object": self.obj.as_json(),
            "fixable": self.fix is not None and self.fix.applicable,
        }


@dataclass
class FileReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    not_objects: int = 0  # documents that are not Kubernetes objects (values files, patches)
    suppressed: int = 0
    templated: bool = False


@dataclass
class Report:
    files: list[FileReport]

    @property
    def findings(self) -> list[Finding]:
        return [finding for report in self.files for finding in report.findings]

    def count(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def worst(self) -> Severity | None:
        return max((finding.severity for finding in self.findings), default=None)

    def summary(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "documents": sum(r.documents for r in self.files),
            "objects": sum(r.objects for r in self.files),
            "not_objects": sum(r.not_objects for r in self.files),
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
            "infos": self.count(Severity.INFO),
            "suppressed": sum(r.suppressed for r in self.files),
            "fixable": sum(1 for f in self.findings if f.fix is not None and f.fix.applicable),
        }
