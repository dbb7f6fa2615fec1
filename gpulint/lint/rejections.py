"""What the API server would refuse, worded as it words it, at the field: api-rejected's wording, and the
inventory's objects that fail the same validation (a ResourceSlice, DeviceClass or DeviceTaintRule a
cluster cannot hold as written: an inventory written or edited by hand, or exported from another
Kubernetes version).

Inventories are read without positions (gpulint/lint/inventory.py): their objects are validated on their
data, and only a file with a failing object is parsed again with positions, for the field's line and
column. `check` reports them as api-rejected warnings in the inventory file, `gpulint inventory` lists
them, `explain` names those among the slices its allocation read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from gpulint.kube.validation.errors import FieldError
from gpulint.kube.validation.objects import object_errors, unique_errors
from gpulint.lint.findings import FileReport, Finding, ObjectRef, Severity, excerpts, first_line, stable_field
from gpulint.lint.loader import LocatedDocument, load_bytes
from gpulint.lint.objects import KubeObject, object_ref, objects_in

API_REJECTED = "api-rejected"
# The inventory kinds the allocator and the scheduler model read whose validation gpulint knows. Not
# ResourceClaims: their spec is immutable, so a claim created under an older release's rules stays as it was.
VALIDATED_KINDS = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule"})
INVENTORY_SUBJECT = "the API server would reject this inventory object"
INVENTORY_NOTE = (
    "A cluster does not store an object its API server rejects: this inventory was written or edited by hand, "
    "or exported from another Kubernetes version. gpulint's models read the object as it is written."
)


def rejection_text(error: FieldError, subject: str) -> tuple[str, tuple[str, ...]]:
    """The API server's error as it words it, after ``subject``; when that is too long for one line, the line
    shortens the field path to its last steps (the finding points at the field) and the whole error is the note."""
    full = f"{subject}: {error.message()}"
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
            notes=(*notes, INVENTORY_NOTE),
            field=self.field,
        )


def object_rejected(obj: KubeObject) -> list[FieldError]:
    """The validation errors of an inventory object of a kind gpulint validates, on its data alone."""
    if obj.kind not in VALIDATED_KINDS:
        return []
    return list(unique_errors(object_errors(obj.kind, obj.api_version, obj.data)))


def file_rejections(display: str, raw: bytes, objects: list[KubeObject]) -> list[Rejection]:
    """The errors of the inventory objects read from ``raw``, at their fields: validated on their data, and the
    file parsed again with positions only when one of them fails (its objects were read without positions)."""
    failing = [(index, errors) for index, obj in enumerate(objects) for errors in (object_rejected(obj),) if errors]
    if not failing:
        return []
    loaded = load_bytes(display, raw, max_bytes=max(len(raw), 1))
    placed = _match(objects, list(_positioned(loaded.documents)))
    found = []
    for index, errors in failing:
        obj = objects[index]
        where = placed.get(index)
        for error in errors:
            line, column = where.locate(error.path, error.at_key) if where is not None else (1, 1)
            document = where.document.index if where is not None else obj.document.index
            found.append(Rejection(display, line, column, obj.ref, error, document, stable_field(obj.data, error.path)))
    shown = excerpts(loaded.text, {rejection.line for rejection in found})
    return [
        Rejection(r.file, r.line, r.column, r.ref, r.error, r.document, r.field, shown.get(r.line, "")) for r in found
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
    to the rule itself (an error there); one whose per-path-ignores name the rule counts them as suppressed."""
    reports: dict[str, FileReport] = {}
    for rejection in rejections:
        if rejection.file in linted:
            continue
        report = reports.setdefault(rejection.file, FileReport(rejection.file, inventory=True))
        if ignored(rejection.file):
            report.suppressed += 1
            continue
        report.findings.append(rejection.finding())
        if rejection.excerpt:
            report.excerpts[rejection.line] = rejection.excerpt
    for report in reports.values():
        report.findings.sort(key=Finding.sort_key)
    return list(reports.values())
