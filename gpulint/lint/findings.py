"""The values that flow out of checks: severities, object references, findings, fixes."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from dataclasses import field as dataclass_field  # Finding has a member named field
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


# The first line of a finding (its message) fits in this many characters; the rest goes into its notes.
FIRST_LINE_MAX = 160


def first_line(*candidates: str) -> str:
    """The first of ``candidates`` (longest and most complete first) that fits in FIRST_LINE_MAX characters,
    else the last (user data such as a long field path or CEL expression may still make it longer)."""
    return next((text for text in candidates if len(text) <= FIRST_LINE_MAX), candidates[-1])


def split_long(text: str) -> tuple[str, tuple[str, ...]]:
    """A message that quotes another program's words (a CEL compiler, a driver, the API server) as a first
    line and notes: when it is too long, a closing parenthetical, or what follows a "; " or ". " outside
    parentheses and quotes (the last that leaves a line that fits), becomes a note."""
    if len(text) <= FIRST_LINE_MAX:
        return text, ()
    if text.endswith(")") and " (" in text:
        head, _, inner = text.rpartition(" (")
        if inner.count("(") + 1 == inner.count(")") and len(head) <= FIRST_LINE_MAX:
            return head, (inner[:-1],)
    for separators in ((";", "."), (":",), (",",)):  # a clause's end, else the end of a lead-in
        cuts = _top_level_breaks(text, separators)
        fitting = [cut for cut in cuts if cut <= FIRST_LINE_MAX]
        if fitting:
            return text[: fitting[-1]].rstrip(".;:,"), (text[fitting[-1] :].strip(),)
    return text, ()


def tail_or_note(head: str, tail: str, note: str, *notes: str) -> tuple[str, tuple[str, ...]]:
    """``head + tail`` as the first line when it fits in FIRST_LINE_MAX, else ``head`` alone with ``note`` (the
    tail worded to stand alone: the names listed, a did-you-mean) leading ``notes``."""
    if not tail or len(head + tail) <= FIRST_LINE_MAX:
        return head + tail, notes
    return head, (note, *notes)


# A run note names at most this many places; the rest are counted ("and 2 more places").
RUN_NOTE_PLACES = 3


def run_note(line: str, details: Sequence[str] = ()) -> str:
    """A run note as one string: its first line (a fact, at most FIRST_LINE_MAX characters of gpulint's
    words), then its details - the list it names, a hint - one per line; text indents them under it."""
    return "\n".join((line, *details))


def _top_level_breaks(text: str, separators: tuple[str, ...]) -> list[int]:
    """Where a separator followed by a space ends a clause outside parentheses, brackets and double quotes."""
    depth, quoted, breaks = 0, False, []
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "([{":
            depth += 1
        elif not quoted and char in ")]}":
            depth = max(depth - 1, 0)
        elif not quoted and depth == 0 and char in separators and text[index + 1 : index + 2] == " " and index > 0:
            breaks.append(index + 1)
    return breaks


class FixSafety(enum.Enum):
    """Whether ``--fix`` may apply a fix on its own (ruff's safe/unsafe split).

    A fix is SAFE when the object after it asks for and consumes what the author evidently
    meant (a missing limit copied from the request the author wrote). It is UNSAFE when it has
    to choose between readings that change what a pod holds (a request of 1 with a limit of 2:
    raising the request doubles the GPUs the pod holds, lowering the limit halves them); those
    are applied only with ``--unsafe-fixes``, and the finding's notes show every choice.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Append:
    """Add ``item`` (a mapping or a scalar) at the end of the list at ``path``; a missing list is created."""

    path: Path
    item: Any


@dataclass(frozen=True)
class Fix:
    """A mechanical edit: set the value at ``path`` of document ``document``.

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
    appends: tuple[Append, ...] = ()  # list items added with the fix, all or none (``path`` () sets nothing)
    safety: FixSafety = FixSafety.SAFE  # the Diagnostic that proposes it always states it

    @property
    def applicable(self) -> bool:
        return not self.refused

    @property
    def safe(self) -> bool:
        return self.safety is FixSafety.SAFE


class Refuses(enum.Enum):
    """What a finding says is refused at admission: the admission verdict reads it, and words the info that stands
    for the object's held-back pod findings from it (verdicts/refusal.py)."""

    OBJECT = "object"  # the object's own create (the API server's validation, an operator's webhook): no pods
    PODS = "pods"  # each pod made from it, at the pod's create (LimitRanger, the Priority plugin); a Pod is one
    SERVICE = "knative service"  # the Knative Service KServe's controller makes for it (Knative's webhook): no pods
    RECONCILE = "reconcile"  # admitted, but its controller refuses to reconcile it and makes nothing: no pods


@dataclass(frozen=True)
class Refused:
    """A refusal a finding words: of what, and whether it is certain (a hedged warning's never counts)."""

    what: Refuses
    certain: bool = True


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
    # What follows the one-line message: the scheduler's reasons, the choices, a suggestion.
    # Shown under the finding in text, as more lines of the SARIF message, as "notes" in JSON.
    notes: tuple[str, ...] = ()
    # Required with a fix: every check says whether its fix is safe (see FixSafety).
    fix_safety: FixSafety | None = None
    # Not a verdict on this object but a fact about the run ("not checked: no DeviceClasses in the
    # inventory"): printed once as a run note naming the places, never as one finding per object.
    run_note: bool = False
    # Other fields the verdict is computed from (a JobSet's Job names join its metadata.name): a verdict on a
    # value made from a placeholder (``${WORKLOAD_NAME}``) is none, as one on the placeholder's own field.
    inputs: tuple[Path, ...] = ()
    refused: Refused | None = None  # what it says is refused at admission (the admission verdict reads it)

    def __post_init__(self) -> None:
        if (self.fix_path is not None or self.fix_appends) and self.fix_safety is None:
            raise ValueError(
                f"{self.rule}: a Diagnostic with a fix must state fix_safety=FixSafety.SAFE or FixSafety.UNSAFE"
            )


def refusing(diagnostics: Iterable[Diagnostic], what: Refuses) -> Iterator[Diagnostic]:
    """A check's diagnostics as refusals of ``what``: certain unless the check lowers one below an error."""
    for diagnostic in diagnostics:
        certain = diagnostic.severity is None or diagnostic.severity >= Severity.ERROR
        yield replace(diagnostic, refused=Refused(what, certain))


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
    notes: tuple[str, ...] = ()
    run_note: bool = False  # see Diagnostic.run_note
    # The field inside the object, list items named by their `name` where they have one
    # (spec.containers[name=trainer].resources): what a baseline fingerprint keeps across edits.
    field: str = ""
    refused: Refused | None = dataclass_field(default=None, compare=False)  # Diagnostic.refused; never output

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
            "fix": None if self.fix is None else {"description": self.fix.description, "safety": self.fix.safety.value},
            "notes": list(self.notes),
            "field": self.field,
        }


def stable_field(data: Any, path: Path) -> str:
    """``path`` in Kubernetes' spelling, with a list item that has a string ``name`` shown as
    ``[name=NAME]`` rather than by its index, so inserting a container before it changes nothing."""
    out = ""
    node = data
    for step in path:
        child = None
        if isinstance(step, int):
            child = node[step] if isinstance(node, list) and -len(node) <= step < len(node) else None
            name = child.get("name") if isinstance(child, dict) else None
            out += f"[name={name}]" if isinstance(name, str) and name else f"[{step}]"
        else:
            child = node.get(step) if isinstance(node, dict) else None
            text = str(step)
            out += f"[{text}]" if "." in text or "/" in text else (f".{text}" if out else text)
        node = child
    return out


MAX_EXCERPT = 300  # characters of a source line kept for the formatters that quote it


def excerpts(text: str, lines: set[int]) -> dict[int, str]:
    """The source text of ``lines`` (1-based), each cut at MAX_EXCERPT characters."""
    if not lines or not text:
        return {}
    source = text.splitlines()  # one split in C; the lines asked for are then picked by their index
    out = {}
    for number in sorted(lines):
        if 1 <= number <= len(source):
            line = source[number - 1]
            out[number] = line if len(line) <= MAX_EXCERPT else line[:MAX_EXCERPT] + "…"
    return out


@dataclass
class FileReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    not_objects: int = 0  # documents that are not Kubernetes objects (values files, patches)
    suppressed: int = 0
    templated: bool = False
    baselined: int = 0  # findings left out because the baseline holds them
    excerpts: dict[int, str] = field(default_factory=dict)  # line -> its source text, for the lines with findings
    inventory: bool = False  # an inventory file (--inventory) with findings about its objects: not a checked file
    # what capped() left out beyond the findings that count it, for the summary: severities, (fixable, unsafe)
    unlisted: Counter[Severity] = field(default_factory=Counter)
    unlisted_fixes: tuple[int, int] = (0, 0)


# A report lists at most this many findings of one file (docs/limits.md): 20,000 generated pods with three findings
# each would otherwise print 60,000 and hold them all; what is left out is counted, rule by rule.
MAX_FILE_FINDINGS = 1000


def capped(report: FileReport, limit: int = MAX_FILE_FINDINGS) -> FileReport:
    """``report`` with its first ``limit`` findings (they are in place order), then, for each rule with findings
    left out, one finding at the first of them saying how many: at the worst severity left out, so the exit code
    and the formatters' annotations stay what the whole list would give."""
    if len(report.findings) <= limit:
        return report
    left: dict[str, tuple[Finding, int, Severity]] = {}  # rule -> its first left out, how many, the worst
    for finding in report.findings[limit:]:
        first, count, worst = left.get(finding.rule, (finding, 0, finding.severity))
        left[finding.rule] = (first, count + 1, max(worst, finding.severity))
    counted = [
        Finding(
            rule,
            worst,
            f"{count} more {rule} finding{'s' if count > 1 else ''} in this file, from here on, not listed",
            first.file,
            first.line,
            first.column,
            document=first.document,
            notes=(f"a report lists at most {limit} findings of one file",),
        )
        for rule, (first, count, worst) in left.items()
    ]
    unlisted = Counter(f.severity for f in report.findings[limit:])
    unlisted.subtract(f.severity for f in counted)
    fixes = [f.fix for f in report.findings[limit:] if f.fix is not None and f.fix.applicable]
    safe = sum(fix.safe for fix in fixes)
    return replace(
        report,
        findings=[*report.findings[:limit], *counted],
        unlisted=unlisted,
        unlisted_fixes=(safe, len(fixes) - safe),
    )


@dataclass
class Tally:
    """The summary of file reports, counted as they pass: what a report written file by file says at its end."""

    files: int = 0
    documents: int = 0
    objects: int = 0
    not_objects: int = 0
    suppressed: int = 0
    baselined: int = 0
    severities: Counter[Severity] = field(default_factory=Counter)
    fixable: int = 0
    unsafe_fixable: int = 0

    def add(self, report: FileReport) -> None:
        self.files += not report.inventory
        self.documents += report.documents
        self.objects += report.objects
        self.not_objects += report.not_objects
        self.suppressed += report.suppressed
        self.baselined += report.baselined
        self.severities.update(report.unlisted)  # the summary counts the whole list, as ruff's does
        self.fixable += report.unlisted_fixes[0]
        self.unsafe_fixable += report.unlisted_fixes[1]
        for finding in report.findings:
            self.severities[finding.severity] += 1
            if finding.fix is not None and finding.fix.applicable:
                if finding.fix.safe:
                    self.fixable += 1
                else:
                    self.unsafe_fixable += 1

    def worst(self) -> Severity | None:
        return max((severity for severity, count in self.severities.items() if count), default=None)

    def summary(self) -> dict[str, int]:
        return {
            "files": self.files,
            "documents": self.documents,
            "objects": self.objects,
            "not_objects": self.not_objects,
            "errors": self.severities[Severity.ERROR],
            "warnings": self.severities[Severity.WARNING],
            "infos": self.severities[Severity.INFO],
            "suppressed": self.suppressed,
            "baselined": self.baselined,
            "fixable": self.fixable,
            "unsafe_fixable": self.unsafe_fixable,
        }


@dataclass
class RunNotes:
    """The findings that are facts about the run, taken out of the file reports as they pass and given as
    notes: one per rule and message, naming where it applies (the first few places)."""

    # (rule, message) -> the first places, and how many there are
    grouped: dict[tuple[str, str], tuple[list[Finding], int]] = field(default_factory=dict)

    def take(self, report: FileReport) -> FileReport:
        """``report`` without its run-note findings (the same report when it has none)."""
        if not any(finding.run_note for finding in report.findings):
            return report
        for finding in report.findings:
            if finding.run_note:
                places, count = self.grouped.get((finding.rule, finding.message), ([], 0))
                if count < RUN_NOTE_PLACES:
                    places.append(finding)
                self.grouped[finding.rule, finding.message] = (places, count + 1)
        return replace(report, findings=[f for f in report.findings if not f.run_note])

    def notes(self) -> tuple[str, ...]:
        notes = []
        for (rule, message), (places, count) in self.grouped.items():
            shown = [f"{f.file}:{f.line}:{f.column}" for f in places]
            more = count - RUN_NOTE_PLACES
            rest = [f"and {more} more place{'s' if more > 1 else ''}"] if more > 0 else []
            notes.append(run_note(f"{rule}: {message}", (*places[0].notes, *shown, *rest)))
        return tuple(notes)


@dataclass
class Report:
    files: list[FileReport]

    @property
    def findings(self) -> list[Finding]:
        return [finding for report in self.files for finding in report.findings]

    def each_finding(self) -> Iterator[Finding]:
        for report in self.files:
            yield from report.findings

    def without_run_notes(self) -> tuple[Report, tuple[str, ...]]:
        """The report without the findings that are facts about the run, and those facts as notes."""
        taken = RunNotes()
        files = [taken.take(file) for file in self.files]
        notes = taken.notes()
        return (Report(files), notes) if notes else (self, ())

    def count(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def worst(self) -> Severity | None:
        return max((finding.severity for finding in self.findings), default=None)

    def summary(self) -> dict[str, int]:
        tally = Tally()
        for report in self.files:
            tally.add(report)
        return tally.summary()


class StreamedReport:
    """A report read once, file by file as the files are checked (``gpulint check`` writing its report as it
    goes): its findings are given once, in file order, and the summary counted as they pass, so no more than
    a few files' findings are held at a time."""

    def __init__(self, files: Iterable[FileReport]) -> None:
        self._files = iter(files)
        self.tally = Tally()

    def each_finding(self) -> Iterator[Finding]:
        for report in self._files:
            self.tally.add(report)
            yield from report.findings

    def summary(self) -> dict[str, int]:
        """The summary of the files given so far (all of them once each_finding() is read to its end)."""
        return self.tally.summary()

    def worst(self) -> Severity | None:
        return self.tally.worst()
