"""The linted set: every object of the files being linted, indexed for the checks that look across files.

Built from the parsed documents (YAML and JSON alike), never from the raw bytes, so a
ResourceClaimTemplate in ``claim.json`` is found exactly like one in ``claim.yaml``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, overload

from gpulint.kube.fields import mapping
from gpulint.kube.workloads import ObjectFacts
from gpulint.lint.findings import ObjectRef

_T = TypeVar("_T")

# The pod templates of an object that does not cross files, carried in its place to the checks of the others
# (lint/world/pod_outlines.py): held apart from the objects, which no lookup or walk of the set meets.
OUTLINE_API_VERSION = "outline.gpulint.dev/v1"
OUTLINE_KIND = "PodTemplates"


def secret_outline(data: dict[str, Any]) -> dict[str, Any]:
    """A Secret as other objects' checks see it: its name and its keys (``data``'s and ``stringData``'s, as the
    API server merges them into ``data``), never its values (the linted set crosses to forked workers, and the
    repository index's objects are cached on disk)."""
    keys = {str(key): "" for section in ("data", "stringData") for key in mapping(data.get(section))}
    return {"apiVersion": data.get("apiVersion"), "kind": "Secret", "metadata": data.get("metadata"), "data": keys}


class DeferredData(Protocol):
    """Where a deferred object's data is decoded from (lint/inputs/repo_index.py: a file read from the cache)."""

    def data(self, at: int) -> dict[str, Any]: ...


class LintedObject:
    """One linted object as other objects see it: its data and the file it is in (no positions).

    The repository index hands most of its objects with their data still JSON text (``deferred``): decoded when a
    check first reads ``data``, so a run reads only the kinds its files' checks look up (docs/performance.md)."""

    __slots__ = ("ref", "file", "render", "_data", "_source", "_at")

    def __init__(self, ref: ObjectRef, data: dict[str, Any], file: str, render: str = "") -> None:
        self.ref = ref
        self.file = file
        self.render = render  # the chart or overlay that made it ('': a file as written, LocatedDocument.render)
        self._data: dict[str, Any] | None = data
        self._source: DeferredData | None = None
        self._at = 0

    @classmethod
    def deferred(cls, ref: ObjectRef, source: DeferredData, at: int, file: str) -> LintedObject:
        """The object whose data ``source.data(at)`` gives when first read (no closure each: the index makes one
        such object for every object it keeps, on every run)."""
        obj = cls.__new__(cls)
        obj.ref, obj.file, obj.render, obj._data, obj._source, obj._at = ref, file, "", None, source, at
        return obj

    @property
    def data(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            assert self._source is not None  # set together: deferred()
            data = self._data = self._source.data(self._at)
            self._source = None
        return data

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def api_version(self) -> str:
        return self.ref.api_version

    @property
    def facts(self) -> ObjectFacts:
        """Worked out afresh: only the object the engine checks keeps its facts (KubeObject.kept_facts)."""
        return ObjectFacts.afresh(self.data)

    def _fields(self) -> tuple[ObjectRef, dict[str, Any], str, str]:
        return (self.ref, self.data, self.file, self.render)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LintedObject) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # its data is a mapping: unhashable, as the dataclass it was

    def __repr__(self) -> str:
        return f"LintedObject(ref={self.ref!r}, data={self.data!r}, file={self.file!r}, render={self.render!r})"

    def __reduce__(self) -> tuple[type[LintedObject], tuple[ObjectRef, dict[str, Any], str, str]]:
        return (LintedObject, self._fields())  # decoded: a worker's pipe carries data, not a decoder


def outline_object(
    outlines: list[dict[str, Any]], file: str, name: str, namespace: str = "", render: str = ""
) -> LintedObject:
    """The pod templates' ``outlines`` (lint/world/pod_outlines.py) of an object or a file as one object that
    crosses files in their place (the linted set holds it apart)."""
    return LintedObject(
        ObjectRef(OUTLINE_API_VERSION, OUTLINE_KIND, namespace, name), {"templates": outlines}, file, render
    )


def _is_outline(obj: LintedObject) -> bool:
    return obj.ref.kind == OUTLINE_KIND and obj.ref.api_version == OUTLINE_API_VERSION


class KeptSource(Protocol):
    """Where kept objects are made from (lint/inputs/repo_index.py: a file read from the index's cache)."""

    def made(self, at: int) -> LintedObject: ...


class KeptObjects(Sequence[LintedObject]):
    """The objects of a repository's other files (the repository index), in the order its walk met them, each made
    only when a lookup of its kind or a walk of every object first reads it: a warm pre-commit run looks up a few
    kinds of the thousands of objects the index keeps (docs/performance.md). The outlines are held apart, made."""

    def __init__(self) -> None:
        self._made: list[LintedObject | None] = []
        self._from: list[tuple[KeptSource, int] | None] = []
        self._kinds: dict[tuple[str, str], list[int]] = {}
        self.outlines: list[LintedObject] = []

    def add(self, obj: LintedObject) -> None:
        if _is_outline(obj):
            self.outlines.append(obj)
            return
        self._kinds.setdefault((obj.ref.group, obj.ref.kind), []).append(len(self._made))
        self._made.append(obj)
        self._from.append(None)

    def defer(self, source: KeptSource, kinds: Iterable[tuple[str, str]]) -> None:
        """The objects ``source.made(0)``, ``(1)``... will make, of these (apiVersion, kind)s."""
        for at, (api_version, kind) in enumerate(kinds):
            self._kinds.setdefault((api_version.rpartition("/")[0], kind), []).append(len(self._made))
            self._made.append(None)
            self._from.append((source, at))

    def kinds(self) -> Iterable[tuple[str, str]]:
        """Every (API group, kind) held, none made for it."""
        return self._kinds.keys()

    def of_kind(self, key: tuple[str, str]) -> list[LintedObject]:
        return [self[index] for index in self._kinds.get(key, ())]

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, index: int) -> LintedObject: ...

    @overload
    def __getitem__(self, index: slice) -> list[LintedObject]: ...

    def __getitem__(self, index: int | slice) -> LintedObject | list[LintedObject]:
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(len(self)))]
        made = self._made[index]
        if made is None:
            where = self._from[index]
            assert where is not None  # set together: defer()
            made = self._made[index] = where[0].made(where[1])
            self._from[index] = None
        return made


class LintedSet:
    """Objects by (API group, kind, namespace, name).

    ``complete`` says whether the set is everything the user is about to apply (a
    repository, a rendered chart) or a single object seen on its own (an admission
    review): only a complete set proves that a referenced object does not exist.

    ``pods_whole`` says whether it holds every pod template of the files applied with it, in its object or in
    an outline carried for it (``outlines``): a streamed run, or one through the repository index, holds only
    the objects that cross files (gpulint/lint/world/cross_file.py), so a pod another pod may join can be missing.
    """

    def __init__(
        self,
        objects: Iterable[LintedObject] = (),
        complete: bool = True,
        *,
        pods_whole: bool = True,
        kept: Sequence[LintedObject] = (),
    ) -> None:
        """``kept``: the objects of the files not linted, after ``objects`` (a KeptObjects: each kind made on its
        first lookup)."""
        self.complete = complete
        self.pods_whole = pods_whole
        self._objects: list[LintedObject] = []
        self._outlines: list[LintedObject] = []
        self._by_kind: dict[tuple[str, str], list[LintedObject]] = {}
        self._facts: dict[str, Any] = {}  # key -> what fact() worked out of these objects
        self._kept: KeptObjects | None = None
        self._pending: set[tuple[str, str]] = set()  # the kept kinds not yet in _by_kind
        for obj in objects:
            self.add(obj)
        if isinstance(kept, KeptObjects):
            self._kept, self._pending = kept, set(kept.kinds())
            self._outlines.extend(kept.outlines)
        else:
            for obj in kept:
                self.add(obj)

    def add(self, obj: LintedObject) -> None:
        self._settle()  # what was kept comes before what is added
        if _is_outline(obj):
            self._outlines.append(obj)
            self._facts.clear()
            return
        self._objects.append(obj)
        self._by_kind.setdefault((obj.ref.group, obj.ref.kind), []).append(obj)
        self._facts.clear()  # worked out of fewer objects

    def _settle(self) -> None:
        """Every kept object made and in place: a walk of all the objects, or an object added after them."""
        if self._kept is not None:
            kept, self._kept = self._kept, None
            for key in self._pending:
                self._by_kind.setdefault(key, []).extend(kept.of_kind(key))
            self._pending = set()
            self._objects.extend(kept)

    def fact(self, key: str, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)``, a fact of these objects alone (the device plugin configurations, the Kueue
        configuration), worked out once per ``key`` for as long as the set is not added to. A function and
        its arguments, not a closure: the checks ask on every object."""
        if key in self._facts:
            return self._facts[key]  # type: ignore[no-any-return]  # stored by this key's own work
        value = self._facts[key] = work(*args)
        return value

    @property
    def outlines(self) -> list[LintedObject]:
        """The outlines carried for the objects of other files that did not cross (pod_outlines.outlined)."""
        return self._outlines

    def __iter__(self) -> Iterator[LintedObject]:
        self._settle()
        return iter(self._objects)

    def __len__(self) -> int:
        self._settle()
        return len(self._objects)

    def of_kind(self, group: str, kind: str) -> list[LintedObject]:
        key = (group, kind)
        if key in self._pending and self._kept is not None:
            self._pending.discard(key)
            self._by_kind.setdefault(key, []).extend(self._kept.of_kind(key))
        return self._by_kind.get(key, [])

    def find(self, group: str, kind: str, namespace: str, name: str) -> LintedObject | None:
        """The object of that kind and name; a manifest without a namespace matches any namespace
        (kubectl or the GitOps tool applies it to the namespace it targets)."""
        for obj in self.of_kind(group, kind):
            if obj.ref.name == name and (obj.ref.namespace == namespace or not obj.ref.namespace or not namespace):
                return obj
        return None

    def has_kind(self, group: str, kind: str) -> bool:
        return bool(self._by_kind.get((group, kind))) or (group, kind) in self._pending

    def has_any(self, kinds: Iterable[tuple[str, str]]) -> bool:
        """An object of any of these (group, kind)s (a kind is listed only once an object of it is added)."""
        kinds = set(kinds)
        return not (self._by_kind.keys().isdisjoint(kinds) and self._pending.isdisjoint(kinds))
