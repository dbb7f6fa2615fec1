"""What the API server would refuse, worded as it words it, at the field: api-rejected's wording, and the
inventory's objects that fail the same validation (a ResourceSlice, DeviceClass or DeviceTaintRule a
cluster cannot hold as written: an inventory written or edited by hand, or exported from another
Kubernetes version).

Inventories are read without positions (gpulint/lint/world/inventory.py): their objects are validated on their
data, and only a file with a failing object is parsed again with positions, for the field's line and
column. `check` reports them as api-rejected warnings in the inventory file, `gpulint inventory` lists
them, `explain` names those among the slices its allocation read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from gpulint.kube.validation.errors import FieldError
from gpulint.kube.validation.objects import object_errors, unique_errors
from gpulint.lint.findings import (
    FIRST_LINE_MAX,
    FileReport,
    Finding,
    ObjectRef,
    Severity,
    excerpts,
    first_line,
    stable_field,
)
from gpulint.lint.inputs.loader import MAX_FILE_BYTES, LocatedDocument, load_bytes
from gpulint.lint.inputs.objects import KubeObject, object_ref, objects_in

API_REJECTED = "api-rejected"
# The inventory kinds the allocator and the scheduler model read whose validation gpulint knows. Not
# ResourceClaims: their spec is immutable, so a claim created under an older release's rules stays as it was.
VALIDATED_KINDS = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule"})
INVENTORY_SUBJECT = "the API server would reject this inventory object"
MAX_PER_FILE = 50  # findings per inventory file; one more counts the rest
INVENTORY_NOTE = (
    "A cluster does not store an object its API server rejects: this inventory was written or edited by hand, "
    "put together from several exports, or exported from another Kubernetes version. gpulint's models read the "
    "object as it is written."
)


def rejection_text(error: FieldError, subject: str) -> tuple[str, tuple[str, ...]]:
    """The API server's error as it words it, after ``subject``; when that is too long for one line, the line
    shortens the field path to its last steps (the finding points at the field) and the whole error is the note."""
    full = f"{subject}: {error.message()}"
    if len(full) <= FIRST_LINE_MAX:
        return full, ()  # the common case: the shorter forms below are not needed
    detail = f": {error.detail}" if error.detail else ""
    shown = error.message().removeprefix(error.field)  # ": Invalid value: "x": detail"
    tails = [f"...{tail}" for tail in _field_tails(error.field)]
    brief = first_line(
        full,
        *(f"{subject}: {tail}{shown}" for tail in tails),
        *(f"{subject}: {field}: {error.kind}{detail}" for field in (error.field, *tails)),
        f"{subject}: {error.kind}{detail}",
        f"{subject}: {error.message(detail=False)}",
        f"{subject}: {error.field}: {error.kind}",
        f"{subject}: {error.kind}",
    )
    return brief, () if brief == full else (error.message(),)


def _field_tails(field: str) -> list[str]:
    """The last two steps of a field path, then the last one: ...matchExpressions[0].values."""
    steps = field.split(".")
    return [".".join(steps[-count:]) for count in (2, 1) if len(steps) > count]


@dataclass(frozen=True)
class Rejection:
    """One error of an inventory object the API server would refuse, placed at its field in the inventory file."""

    file: str
    line: int
    column: int
    ref: ObjectRef
    error: FieldError
    document: int = 0
    field: str = ""  # the field as a baseline keeps it (stable_field)
    excerpt: str = ""  # the source line
    note: str = ""  # why it is not at the field

    def summary_line(self) -> str:
        """As `gpulint inventory` lists it."""
        return f"{self.file}:{self.line}:{self.column}: {self.ref.kind} {self.ref.name or '?'}: {self.error.message()}"

    def finding(self) -> Finding:
        """api-rejected as a warning whatever the rule's severity: the inventory is what the cluster stored (or
        someone's copy of it), not the manifest under review."""
        message, notes = rejection_text(self.error, INVENTORY_SUBJECT)
        return Finding(
            API_REJECTED,
            Severity.WARNING,
            message,
            self.file,
            self.line,
            self.column,
            self.ref,
            document=self.document,
            notes=(*notes, INVENTORY_NOTE, *((self.note,) if self.note else ())),
            field=self.field,
        )


def object_rejected(obj: KubeObject) -> list[FieldError]:
    """The validation errors of an inventory object of a kind gpulint validates, on its data alone."""
    if obj.kind not in VALIDATED_KINDS:
        return []
    return list(unique_errors(object_errors(obj.kind, obj.api_version, obj.data, stored=True)))


def file_rejections(
    display: str, raw: bytes, objects: list[KubeObject], more: Mapping[int, list[FieldError]] | None = None
) -> list[Rejection]:
    """The errors of the inventory objects read from ``raw`` (and ``more``, by object index: a second copy of a
    name), at their fields: validated on their data, and the file parsed again with positions only when one of
    them fails and was read without them (JSON, yaml-rs)."""
    more = more or {}
    failing = [
        (index, errors)
        for index, obj in enumerate(objects)
        for errors in ([*object_rejected(obj), *more.get(index, ())],)
        if errors
    ]
    if not failing:
        return []
    if all(objects[index].document.node is not None for index, _ in failing):
        placed = {index: objects[index] for index, _ in failing}  # gpulint's loader read it: positions are there
    elif len(raw) > MAX_FILE_BYTES:  # parsing it with positions would cost more than the whole run: at 1:1
        size = f"{len(raw) // (1024 * 1024)} MiB, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        note = f"not placed at the field: the file is {size} gpulint parses with positions"
        return [
            Rejection(display, 1, 1, obj.ref, error, obj.document.index, stable_field(obj.data, error.path), note=note)
            for index, errors in failing
            for obj in (objects[index],)
            for error in errors
        ]
    else:
        placed = _match(objects, list(_positioned(load_bytes(display, raw, max_bytes=MAX_FILE_BYTES).documents)))
    found = []
    for index, errors in failing:
        obj = placed.get(index, objects[index])  # not found again (it should be): at 1:1
        for error in errors:
            line, column = obj.locate(error.path, error.at_key)
            field = stable_field(obj.data, error.path)
            found.append(Rejection(display, line, column, obj.ref, error, obj.document.index, field))
    return _with_excerpts(
        found, [placed.get(index, objects[index]).document for index, errors in failing for _ in errors]
    )


def _with_excerpts(found: list[Rejection], documents: list[LocatedDocument]) -> list[Rejection]:
    """Each rejection with its source line, read once per text the documents were parsed from."""
    wanted: dict[int, tuple[LocatedDocument, set[int]]] = {}
    for rejection, document in zip(found, documents, strict=True):
        if document.node is not None:
            wanted.setdefault(id(document.text), (document, set()))[1].add(rejection.line - document.line_offset)
    texts = {key: excerpts(document.text, lines) for key, (document, lines) in wanted.items()}
    return [
        replace(rejection, excerpt=texts.get(id(document.text), {}).get(rejection.line - document.line_offset, ""))
        for rejection, document in zip(found, documents, strict=True)
    ]


def _positioned(documents: list[LocatedDocument]) -> Iterator[KubeObject]:
    """The objects of documents read with positions, as the fast readers list them: a JSON array's items too."""
    for document in documents:
        if isinstance(document.data, list):  # a bare JSON array (the clouds' list commands): one object per item
            for index, item in enumerate(document.data):
                if isinstance(item, dict):
                    yield KubeObject(item, document, (index,), object_ref(item))
        else:
            yield from objects_in(document)


def _match(objects: list[KubeObject], positioned: list[KubeObject]) -> dict[int, KubeObject]:
    """Each object (by index) and its positioned twin: the same reference, the same occurrence of it."""
    twins: dict[tuple[ObjectRef, int], KubeObject] = {}
    seen: Counter[ObjectRef] = Counter()
    for obj in positioned:
        twins[(obj.ref, seen[obj.ref])] = obj
        seen[obj.ref] += 1
    seen.clear()
    out = {}
    for index, obj in enumerate(objects):
        twin = twins.get((obj.ref, seen[obj.ref]))
        seen[obj.ref] += 1
        if twin is not None:
            out[index] = twin
    return out


def inventory_reports(
    rejections: Sequence[Rejection], linted: Collection[str], ignored: Callable[[str], bool]
) -> list[FileReport]:
    """The rejections as api-rejected warnings, one report per inventory file. A file that is linted too is left
    to the rule itself (an error there); one whose per-path-ignores name the rule counts them as suppressed.
    Past MAX_PER_FILE in a file (an inventory from another release can fail the same way on every slice), one
    finding counts the rest."""
    reports: dict[str, FileReport] = {}
    left: dict[str, list[Rejection]] = {}
    for rejection in rejections:
        if rejection.file in linted:
            continue
        report = reports.setdefault(rejection.file, FileReport(rejection.file, inventory=True))
        if ignored(rejection.file):
            report.suppressed += 1
        elif len(report.findings) >= MAX_PER_FILE:
            left.setdefault(rejection.file, []).append(rejection)
        else:
            report.findings.append(rejection.finding())
            if rejection.excerpt:
                report.excerpts[rejection.line] = rejection.excerpt
    for file, rest in left.items():
        reports[file].findings.append(_more(rest))
    for report in reports.values():
        report.findings.sort(key=Finding.sort_key)
    return list(reports.values())


def _more(rest: list[Rejection]) -> Finding:
    """One finding for the rejections of a file past MAX_PER_FILE, at the first of them."""
    first = rest[0]
    objects = len({r.ref for r in rest})
    return Finding(
        API_REJECTED,
        Severity.WARNING,
        f"and {len(rest)} more errors in {objects} inventory object{'s' if objects > 1 else ''} of this file that "
        "the API server would reject, not listed one by one",
        first.file,
        first.line,
        first.column,
        first.ref,
        document=first.document,
        notes=(
            f"the first: {first.summary_line()}",
            "`gpulint inventory --format json` lists every one (rejectedObjects)",
        ),
    )
