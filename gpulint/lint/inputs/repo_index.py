"""The repository around a partial file set: the objects other files may refer to.

Pre-commit (and ``gpulint check changed.yaml``) passes only some files of a repository. A Pod in
one of them may join a PodGroup, or use a ResourceClaimTemplate, defined in a file that did not
change. The index holds the objects of the rest of the repository that references cross files
for (gpulint.lint.world.cross_file.crosses_files), so those references resolve and a group's members are
counted whole; its files are never reported on. Of the others it keeps the outlines of their pod templates
(gpulint.lint.world.pod_outlines), which a pod's required pod affinity may join: the run is handed them when a
linted file names podAffinity.

The walk is the one ``gpulint check DIR`` does: .gitignore files, ``.git/info/exclude``, the
index and the configured ``exclude`` are honoured; no program is run. Parsed objects are cached
by file stat under ``<repository>/.gpulint_cache/`` (ignored by git through its own .gitignore),
so a second run parses only what changed. The cache is data from disk, never trusted: it is
size-bounded, read as JSON (never unpickled), validated field by field, and dropped whole when
anything in its table is off (a file's objects' data and outlines, kept as JSON text after the table and decoded
only when read, are validated then: that file is indexed again when they are off); it is never followed through a
symbolic link nor written outside the repository. The cache file is one line of JSON, the table (each file's
stat, its objects' references with the span of their data, and its outlines' span), then the objects' JSON texts
and the outlines' back to back: a warm run decodes the table, the data of the kinds its checks look up, and the
outlines only when a linted file names podAffinity (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulint import __version__
from gpulint.lint.atomic import replace_file
from gpulint.lint.findings import ObjectRef
from gpulint.lint.inputs.file_walk import Walk
from gpulint.lint.inputs.linted_set import KeptObjects, LintedObject, outline_object, secret_outline
from gpulint.lint.inputs.loader import collector_paused, load_bytes
from gpulint.lint.inputs.objects import parse_file
from gpulint.lint.inputs.sed_words import FolderScripts
from gpulint.lint.inputs.sources import DEFAULT_MAX_FILE_BYTES, SkippedEntry, Source, SourceError, read_file
from gpulint.lint.inputs.yaml_budget import over_budget

CACHE_DIR = ".gpulint_cache"
CACHE_FILE = "repo-index-v1.json"
CACHE_FORMAT = (
    8  # 2: the cross-file table of gpulint/lint/world/cross_file.py (more kinds than 1 kept); 3: NADs; 4: Secrets;
    # 5: Secrets kept as their outline (keys, no values); 6: the pod templates of the others' objects as outlines;
    # 7: the outlines after the table's line, each file's as a span of those bytes (a run without them decodes none);
    # 8: each object's data after the table too, its span beside its reference (decoded when a check reads it)
)
MAX_INDEXED_FILES = 20_000  # beyond: the index is partial, and absence proves nothing
MAX_CACHE_BYTES = 64 * 1024 * 1024
GIT = ".git"

Stat = tuple[int, int, int]  # size, mtime in ns, inode: a file whose three agree is read from the cache
# A kept object as the table holds it: apiVersion, kind, namespace, name, and its data's JSON text (indexed this run)
# or that text's start and end in the bytes after the table (read from the cache)
Kept = list[Any]
Keep = Callable[[LintedObject], bool]
Outline = Callable[[LintedObject], list[dict[str, Any]]]
# An outline's fields as the cache holds them, and their types (lint/world/pod_outlines.outlines_of: each but the
# name and kind left out when empty)
_OUTLINE_FIELDS: dict[str, type] = {
    "name": str,
    "kind": str,
    "namespace": str,
    "labels": dict,
    "completed": bool,
    "spec": dict,
}
_OUTLINE_NEEDS = ("name", "kind")


@dataclass
class RepoContext:
    root: str  # the work tree's real path
    objects: KeptObjects = field(default_factory=KeptObjects)  # each kind made when a check first looks it up
    complete: bool = True  # every manifest of the repository was indexed
    pods: bool = False  # ``objects`` carries the outlines of the pod templates of the objects not kept
    notes: list[str] = field(default_factory=list)
    parsed: int = 0  # files parsed this run (the others came from the cache)


def repository_of(sources: Sequence[Source]) -> str | None:
    """The git work tree that holds every linted file on disk and every chart or overlay rendered (None: none, or
    several)."""
    roots = set()
    for source in sources:
        if source.fs_path is not None:
            roots.add(work_tree(os.path.dirname(os.path.realpath(source.fs_path))))
        elif source.rendered is not None:  # a file named alone that its chart or overlay renders in its place
            roots.add(work_tree(os.path.realpath(source.rendered.directory)))
    return roots.pop() if len(roots) == 1 and None not in roots else None


def work_tree(directory: str) -> str | None:
    """The nearest directory at or above ``directory`` with a ``.git`` directory or file (None: none)."""
    while True:
        try:
            mode = os.lstat(os.path.join(directory, GIT)).st_mode
        except OSError:
            mode = 0
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def build_context(
    root: str,
    linted: Sequence[Source],
    keep: Keep,
    outline: Outline,
    exclude: Sequence[str] = (),
    *,
    pods: bool = False,
    use_cache: bool = True,
    limit: int = DEFAULT_MAX_FILE_BYTES,
    max_files: int = MAX_INDEXED_FILES,
    scripts: FolderScripts | None = None,
) -> RepoContext:
    """The objects ``keep(obj)`` selects from every manifest of the repository at ``root`` except the
    ``linted`` files; with ``pods``, and the ``outline(obj)`` of the others, one object per file (indexed
    always, cached with the objects). ``scripts``: the collection's reader of the scripts beside the manifests."""
    context = RepoContext(root, pods=pods)
    linted_files = {_identity(source.fs_path) for source in linted if source.fs_path is not None}
    # a chart or overlay rendered in place of a file named alone: its own files are linted through the render
    rendered = tuple(os.path.abspath(s.rendered.directory) + os.sep for s in linted if s.rendered is not None)
    cache, written, data_end = _load_cache(root) if use_cache else ({}, b"", 0)
    # the objects' texts, kept for their decode (the outlines after them are not); sliced once, when a file is read
    texts = _Texts(written, data_end)
    again = _Again(keep, outline, limit, scripts or FolderScripts())
    fresh: dict[str, dict[str, Any]] = {}
    shown = shown_root(root)
    walk = Walk(shown, tuple(exclude), context.notes)
    for count, candidate in enumerate(walk.files()):
        if count >= max_files:
            context.complete = False
            context.notes.append(
                f"repository index: stopped after {max_files:,} files; references into the others "
                "are not resolved, and a missing object is not reported"
            )
            break
        path = candidate.path
        try:
            info = os.stat(path) if candidate.follow else os.lstat(path)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in linted_files or not stat.S_ISREG(info.st_mode):
            continue
        if rendered and os.path.abspath(path).startswith(rendered):
            continue
        key = _key(path, shown, root, candidate.follow)
        signature: Stat = (info.st_size, info.st_mtime_ns, info.st_ino)
        entry = cache.get(key)
        outlines = None
        if entry is not None and tuple(entry["stat"]) == signature:
            start, end = entry["outlines"]
            outlines = _outlines(written[start:end]) if pods else []
        if entry is None or outlines is None:  # not cached, changed, or its outlines not as written
            try:
                objects, outlines = _index_file(path, keep, outline, limit, scripts or FolderScripts())
            except _OverBudget as over:  # not cached: said again on every run, as the catalog stays incomplete
                context.complete = False
                context.notes.append(f"repository index: {path}:{over}; skipped, a missing object is not reported")
                continue
            entry = {"stat": list(signature), "objects": [[*r, _json(d)] for r, d in objects]}
            entry["outlines"] = _json(outlines) if outlines else b""
            context.parsed += 1
            for ref, data in objects:
                context.objects.add(LintedObject(ObjectRef(*ref), data, path))
        elif entry["objects"]:
            kept = entry["objects"]
            context.objects.defer(_CachedFile(path, kept, texts.get(), again), (item[:2] for item in kept))
        fresh[key] = entry
        if pods and outlines:
            context.objects.add(outline_object(outlines, path, key))
    if use_cache and (context.parsed or set(fresh) != set(cache)):
        _save_cache(root, fresh, written)
    return context


@dataclass
class _Texts:
    """The bytes of the objects' JSON texts after the cache's table, sliced from what was read once a file is read
    from the cache (the outlines after them are left behind: they are decoded, or not, while the walk runs)."""

    written: bytes
    end: int
    kept: bytes | None = None

    def get(self) -> bytes:
        if self.kept is None:
            self.kept = self.written[: self.end]
        return self.kept


@dataclass
class _Again:
    """How the index reads a file (build_context's arguments): for a cached file whose data is not as written."""

    keep: Keep
    outline: Outline
    limit: int
    scripts: FolderScripts


@dataclass
class _CachedFile:
    """A file's kept objects as the cache holds them: their data decoded when a check first reads it, each alone
    (a run reads only the kinds its files' checks look up). Data that is not a JSON object as written is a cold
    miss: the file is indexed again and its object at the same place, of the same reference, read from that."""

    path: str
    kept: list[Kept]
    texts: bytes
    again: _Again
    parsed: list[tuple[list[str], dict[str, Any]]] | None = None

    def made(self, at: int) -> LintedObject:
        return LintedObject.deferred(ObjectRef(*self.kept[at][:4]), self, at, self.path)

    def data(self, at: int) -> dict[str, Any]:
        start, end = self.kept[at][4:6]
        try:
            data = json.loads(self.texts[start:end])
        except (ValueError, RecursionError):
            data = None
        return data if isinstance(data, dict) else self._indexed_again(at)

    def _indexed_again(self, at: int) -> dict[str, Any]:
        if self.parsed is None:
            try:
                again = self.again
                self.parsed = _index_file(self.path, again.keep, again.outline, again.limit, again.scripts)[0]
            except _OverBudget:
                self.parsed = []
        ref = self.kept[at][:4]
        found = self.parsed[at] if at < len(self.parsed) else None
        # the table's reference stands (the file's stat agreed); an object the file no longer holds has no data
        return found[1] if found is not None and found[0] == ref else {}


def _key(path: str, shown: str, root: str, link: bool) -> str:
    """The file's path from the work tree's root, as the cache keys it. The walk descends real directories only
    (a link to a directory is never followed), so a file it met as a directory entry is where its walked path
    says: its key is that path less the root's, without resolving every component again (a realpath is a
    stat per component: most of a warm run's time in a repository of 10,000 files). A link is resolved."""
    if not link:
        if shown == os.curdir:
            return path.replace(os.sep, "/")
        if path.startswith(shown + os.sep):
            return path[len(shown) + 1 :].replace(os.sep, "/")
    return os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")


def _identity(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)


def shown_root(root: str) -> str:
    """The root as paths in messages show it: relative to the current directory when inside it."""
    relative = os.path.relpath(root)
    return relative if not relative.startswith("..") else root


class _OverBudget(Exception):
    """A file the index does not parse: more nodes or objects than a run parses in bounded memory."""


def _index_file(
    path: str, keep: Keep, outline: Outline, limit: int, scripts: FolderScripts
) -> tuple[list[tuple[list[str], dict[str, Any]]], list[Any]]:
    """The objects of the file ``keep`` selects, and the outlines of the pod templates of the others."""
    try:
        read = read_file(path, display=path, limit=limit, walked=True, follow=True)
    except (SourceError, SkippedEntry, OSError):
        return [], []  # too large, unreadable, not a regular file: nothing to resolve against
    over = over_budget(read.content)
    if over is not None:
        raise _OverBudget(f"{over.line}:{over.column}: {over.message()}")
    with collector_paused():
        parsed = parse_file(load_bytes(path, read.content, scripts=scripts))
    out: list[tuple[list[str], dict[str, Any]]] = []
    outlines: list[Any] = []
    for obj in parsed.objects:
        # a Secret as the linted set holds it (run.linted_object): its keys, stringData's too, and never a value on disk
        data = secret_outline(obj.data) if obj.ref.kind == "Secret" and not obj.ref.group else obj.data
        linted = LintedObject(obj.ref, data, path)
        if keep(linted):
            out.append(([obj.ref.api_version, obj.ref.kind, obj.ref.namespace, obj.ref.name], data))
        else:
            outlines.extend(outline(linted))
    return out, outlines


# --------------------------------------------------------------------------- the cache (untrusted data)


def _cache_dir(root: str) -> str:
    return os.path.join(root, CACHE_DIR)


def _load_cache(root: str) -> tuple[dict[str, dict[str, Any]], bytes, int]:
    """The cached entries, the bytes their spans point into and where the objects' texts in them end (the
    outlines' begin), or ({}, b"", 0) when there is no cache or anything in its table is not as written."""
    raw = read_cache_bytes(root, CACHE_FILE)
    if raw is None:
        return {}, b"", 0
    table, _, written = raw.partition(b"\n")
    try:
        document = json.loads(table)
    except (ValueError, RecursionError):
        return {}, b"", 0
    files = _validated(document, root, len(written))
    return (files, written, document["data"]) if files else ({}, b"", 0)


def read_cache(root: str, name: str, limit: int = MAX_CACHE_BYTES) -> Any:
    """The JSON document of the cache file ``name`` of the work tree at ``root`` (None: no cache directory, no such
    file, or not JSON). Data from disk: the caller validates it."""
    raw = read_cache_bytes(root, name, limit)
    try:
        return None if raw is None else json.loads(raw)
    except (ValueError, RecursionError):
        return None


def read_cache_bytes(root: str, name: str, limit: int = MAX_CACHE_BYTES) -> bytes | None:
    """The bytes of the cache file ``name`` (None: no cache directory, no such file, or over ``limit``)."""
    path = os.path.join(_cache_dir(root), name)
    try:
        if not stat.S_ISDIR(os.lstat(_cache_dir(root)).st_mode):
            return None
        return read_file(path, display=path, limit=limit, walked=True, follow=False).content
    except (OSError, SourceError, SkippedEntry):
        return None


def has_cache(root: str) -> bool:
    """The work tree holds gpulint's cache directory (the repository index made it: pre-commit runs there)."""
    try:
        return stat.S_ISDIR(os.lstat(_cache_dir(root)).st_mode)
    except OSError:
        return False


def _validated(document: Any, root: str, written: int) -> dict[str, dict[str, Any]]:
    if not isinstance(document, dict) or document.get("format") != CACHE_FORMAT:
        return {}
    if document.get("gpulint") != __version__ or document.get("root") != root:
        return {}  # another version parses differently; another checkout has other files
    files, data = document.get("files"), document.get("data")
    if not isinstance(files, dict) or type(data) is not int or not 0 <= data <= written:
        return {}
    for key, entry in files.items():
        if not _valid_entry(key, entry, data, written):
            return {}
    return files


def _valid_entry(key: Any, entry: Any, data: int, written: int) -> bool:
    """``data``: where the objects' texts end in the ``written`` bytes after the table, and the outlines' begin.
    Unpacked and tested by exact type, with no generator per row: every run tests every row (docs/performance.md)."""
    if type(key) is not str or type(entry) is not dict:
        return False
    signature, objects, outlines = entry.get("stat"), entry.get("objects"), entry.get("outlines")
    if type(signature) is not list or len(signature) != 3 or type(objects) is not list:
        return False
    size, mtime, inode = signature
    if not (type(size) is int and type(mtime) is int and type(inode) is int and min(size, mtime, inode) >= 0):
        return False
    for item in objects:  # a reference and the span of its data's JSON text (decoded, and checked, when read)
        if type(item) is not list or len(item) != 6:
            return False
        api_version, kind, namespace, name, start, end = item
        if not (type(api_version) is str and type(kind) is str and type(namespace) is str and type(name) is str):
            return False
        if not (type(start) is int and type(end) is int and 0 <= start <= end <= data):
            return False
    return _valid_span(outlines, data, written)  # the file's outlines' JSON text, after the objects'


def _valid_span(span: Any, low: int, high: int) -> bool:
    if type(span) is not list or len(span) != 2:
        return False
    start, end = span
    return type(start) is int and type(end) is int and low <= start <= end <= high


def _json(value: Any) -> bytes:
    """An object's data or a file's outlines as the cache holds them: JSON text after the table, decoded only by a
    run that reads them (most runs read few: no linted file names podAffinity, few kinds are looked up)."""
    return json.dumps(value, separators=(",", ":"), default=str).encode()


def _outlines(written: bytes) -> list[dict[str, Any]] | None:
    """The outlines of a cached file's text, or None when they are not as written (the file is indexed again)."""
    try:
        outlines = json.loads(written) if written else []
    except (ValueError, RecursionError):
        return None
    if not isinstance(outlines, list) or not all(_valid_outline(outline) for outline in outlines):
        return None
    return outlines


def _valid_outline(outline: Any) -> bool:
    if not isinstance(outline, dict) or not all(key in outline for key in _OUTLINE_NEEDS):
        return False
    return all(isinstance(value, _OUTLINE_FIELDS.get(key, ())) for key, value in outline.items())


def _save_cache(root: str, files: dict[str, dict[str, Any]], written: bytes) -> None:
    """``files``' entries hold their objects' and outlines' texts (indexed this run) or their spans of ``written``
    (the cache read): the objects' texts are written first, then the outlines'."""
    table: dict[str, dict[str, Any]] = {}
    texts: list[bytes] = []
    at = 0
    for key, entry in files.items():
        objects = []
        for item in entry["objects"]:
            text = item[4] if len(item) == 5 else written[item[4] : item[5]]
            texts.append(text)
            objects.append([*item[:4], at, at + len(text)])
            at += len(text)
        table[key] = {"stat": entry["stat"], "objects": objects}
    data = at
    for key, entry in files.items():
        outlines = entry["outlines"]
        text = outlines if isinstance(outlines, bytes) else written[outlines[0] : outlines[1]]
        texts.append(text)
        table[key]["outlines"] = [at, at + len(text)]
        at += len(text)
    document = {"format": CACHE_FORMAT, "gpulint": __version__, "root": root, "data": data, "files": table}
    try:
        head = json.dumps(document, separators=(",", ":"), default=str).encode()  # ASCII: no line break in it
    except (ValueError, TypeError, RecursionError):
        return
    write_cache_bytes(root, CACHE_FILE, [head, b"\n", *texts], len(head) + 1 + at)


def write_cache(root: str, name: str, document: Any, limit: int = MAX_CACHE_BYTES) -> None:
    """The JSON ``document`` as the cache file ``name`` (write_cache_bytes)."""
    try:
        data = json.dumps(document, separators=(",", ":"), default=str).encode()
    except (ValueError, TypeError, RecursionError):
        return
    write_cache_bytes(root, name, [data], len(data), limit)


def write_cache_bytes(root: str, name: str, blocks: list[bytes], size: int, limit: int = MAX_CACHE_BYTES) -> None:
    """Written whole through a new file (a reader never sees half of it); a cache that cannot be
    written is no error: the next run parses again."""
    if size > limit:
        return
    directory = _cache_dir(root)
    try:
        try:
            os.mkdir(directory, 0o755)
            with open(os.path.join(directory, ".gitignore"), "x", encoding="utf-8") as ignore:
                ignore.write("# Created by gpulint: its repository index, never committed.\n*\n")
        except FileExistsError:
            pass
        if not stat.S_ISDIR(os.lstat(directory).st_mode):  # a symbolic link or a file: never written through
            return
        path = os.path.join(directory, name)
        replace_file(path, blocks, _kept_mode(path))
    except OSError:
        return


def _kept_mode(path: str) -> int | None:
    """The permissions of the cache file ``path`` replaces, kept (a team's shared work tree may read it); None, so
    mkstemp's owner-only 0600, when there is none or it is no regular file (a planted link lends no mode)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
