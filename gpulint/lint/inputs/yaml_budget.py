"""How much memory a YAML text will take to parse, bounded before it is parsed.

gpulint composes each file with libyaml into nodes that keep their positions (gpulint.lint.inputs.loader), and
a node costs about 310-420 bytes of memory whatever its text (docs/limits.md, measured): a manifest of
ordinary density (10-75 bytes of text a node) takes 5-40 bytes of memory a byte, but a flow list of
one-character items (``[1,1,1,...]``) takes about 160, so a 57 MiB file under the 64 MiB size limit
needed about 9 GiB. The size limit bounds bytes; this bounds nodes.

Counting is cheap first: a few ``bytes.count`` passes give an upper bound on the nodes a text can hold
(every node but the first follows one of ``, : - ? [ {``). Only a text whose bound is over the budget is
counted exactly, on libyaml's event stream (no node is built, and the count stops at the budget).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ~1.9 GiB at the ~400 bytes a node measured; a 64 MiB file reaches it only below 13 bytes a node,
# denser than any real manifest measured (the densest, a Volcano policy bundle, 29 bytes a node)
MAX_YAML_NODES = 5_000_000
BYTES_PER_NODE = 400  # measured (Python 3.11, libyaml's composer with positions): 310-420
LIMIT_NAME = "max YAML nodes"


@dataclass(frozen=True)
class TooManyNodes:
    line: int  # 1-based, where the count passed the budget
    column: int
    limit: int
    bytes_per_node: int = BYTES_PER_NODE  # what the reader that would read it needs per value

    def message(self) -> str:
        limit = self.limit
        memory = limit * self.bytes_per_node
        size = f"{memory / (1 << 30):.1f} GiB" if memory >= 1 << 30 else f"{memory >> 20} MiB"
        return (
            f"holds more than {limit:,} YAML values, lists and maps (parsing it would take more than "
            f"{size} of memory, about {self.bytes_per_node} bytes each); not read ({LIMIT_NAME})"
        )


class ReadStopped(Exception):
    """A reader stopped at the item past its bound (an inventory's objects): no other reader is tried."""


_MARKS = b",:-?[{"
_ALL_BUT_MARKS = bytes(sorted(set(range(256)) - set(_MARKS)))
_COUNTED = 1 << 22  # bytes a pass: the marks of a file made only of them are copied a slice at a time


def _marks(raw: bytes) -> dict[int, int]:
    """How many times each of ``_MARKS`` occurs in ``raw``: one C pass a slice keeps only them (bytes.translate),
    then each is counted in what is left (2-3x faster than six counts over the whole text)."""
    counts = dict.fromkeys(_MARKS, 0)
    for start in range(0, len(raw), _COUNTED):
        kept = raw[start : start + _COUNTED].translate(None, _ALL_BUT_MARKS)
        for mark in _MARKS:
            counts[mark] += kept.count(mark)
    return counts


def node_bound(raw: bytes) -> int:
    """At least the number of nodes ``raw`` can hold (a key and its value per ``:``, an item per ``-`` or
    ``,``, a collection and an implicit null per ``[`` and ``{``)."""
    marks = _marks(raw)
    separators = marks[ord(",")] + marks[ord(":")] + marks[ord("-")] + marks[ord("?")]
    return 1 + 2 * separators + 3 * (marks[ord("[")] + marks[ord("{")])


def too_many_nodes(raw: bytes, limit: int | None = None) -> TooManyNodes | None:
    """Where ``raw`` passes ``limit`` nodes (MAX_YAML_NODES), or None (within it, or not YAML: the loader
    says why)."""
    limit = MAX_YAML_NODES if limit is None else limit
    if node_bound(raw) <= limit:
        return None
    import yaml
    from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    nodes = 0
    try:
        for event in yaml.parse(raw, Loader=loader):
            if isinstance(event, (ScalarEvent, CollectionStartEvent, AliasEvent)):
                nodes += 1
                if nodes > limit:
                    mark = event.start_mark
                    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                    return TooManyNodes(line, column, limit)
    except yaml.YAMLError:
        return None
    return None


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
JSON_BYTES_PER_VALUE = 80  # the inventory readers' worst measured: an empty list a value (docs/limits.md)


def too_many_values(raw: bytes, limit: int, bytes_per_node: int = BYTES_PER_NODE) -> TooManyNodes | None:
    """Where ``raw`` passes ``limit`` values, lists and maps, whatever reads it: JSON is counted exactly, on its
    text outside strings (1 + commas + colons + containers; its position is the file's start), anything else as
    too_many_nodes counts it."""
    if raw.lstrip()[:1] in (b"{", b"["):
        marks = _marks(raw)
        # the exact count below, strings included: at least as many (a 20,000-node `kubectl get -o json` holds
        # ~12.8 million; the exact count costs a pass of the regular expression and a copy of the text: ~15 s)
        if 1 + marks[ord(",")] + marks[ord(":")] + marks[ord("[")] + marks[ord("{")] <= limit:
            return None
        code = _JSON_STRING.sub(b"", raw)
        found = 1 + code.count(b",") + code.count(b":") + code.count(b"[") + code.count(b"{")
        return TooManyNodes(1, 1, limit, min(bytes_per_node, JSON_BYTES_PER_VALUE)) if found > limit else None
    refused = too_many_nodes(raw, limit)
    return None if refused is None else TooManyNodes(refused.line, refused.column, limit, bytes_per_node)


# Objects (documents and a List's items) a manifest file may hold. Each costs ~3.3 KB linted whatever its values
# (an object, a finding: a List of 100,000 `{}` took 322 MB), more with more findings, so the node budget alone let
# a 6 MB file of `{}` take ~15 GB. The largest real files hold ~120 (docs/limits.md).
MAX_OBJECTS = 20_000
OBJECTS_LIMIT_NAME = "max objects a file"


@dataclass(frozen=True)
class TooManyObjects:
    line: int  # 1-based, the first object past the bound
    column: int
    limit: int

    def message(self) -> str:
        return f"holds more than {self.limit:,} objects (documents and List items); not read ({OBJECTS_LIMIT_NAME})"


def over_budget(
    raw: bytes, node_limit: int | None = None, object_limit: int | None = None
) -> TooManyNodes | TooManyObjects | None:
    """Where ``raw`` first passes ``node_limit`` nodes (MAX_YAML_NODES) or ``object_limit`` objects (MAX_OBJECTS:
    documents and the items of a document's top-level ``items`` list), or None (within both, or not YAML: the
    loader says why). Both are counted in one pass over libyaml's events, and only when the cheap bound is over
    one of them (a document or an item is at least one node)."""
    node_limit = MAX_YAML_NODES if node_limit is None else node_limit
    object_limit = MAX_OBJECTS if object_limit is None else object_limit
    if node_bound(raw) <= min(node_limit, object_limit):
        return None
    import yaml
    from yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
        DocumentStartEvent,
        MappingStartEvent,
        NodeEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    nodes = objects = 0
    open_collections: list[_Open] = []
    items_depth = -1  # while a document's top-level ``items`` list is open: 2 (its items' parents), else -1
    try:
        for event in yaml.parse(raw, Loader=loader):
            counted = isinstance(event, DocumentStartEvent)
            if isinstance(event, (ScalarEvent, CollectionStartEvent, AliasEvent)):
                nodes += 1
                if nodes > node_limit:
                    line, column = _position(event)
                    return TooManyNodes(line, column, node_limit)
            if isinstance(event, NodeEvent) and open_collections:
                parent = open_collections[-1]
                counted = len(open_collections) == items_depth and isinstance(event, MappingStartEvent)
                if parent.mapping and parent.held % 2 == 0:  # a key
                    parent.items_next = isinstance(event, ScalarEvent) and event.value == "items"
                elif parent.items_next and len(open_collections) == 1 and isinstance(event, SequenceStartEvent):
                    items_depth = 2
                parent.held += 1
            if isinstance(event, CollectionStartEvent):
                open_collections.append(_Open(isinstance(event, MappingStartEvent)))
            elif isinstance(event, CollectionEndEvent):
                open_collections.pop()
                if len(open_collections) < items_depth:
                    items_depth = -1
            if counted:
                objects += 1
                if objects > object_limit:
                    line, column = _position(event)
                    return TooManyObjects(line, column, object_limit)
    except yaml.YAMLError:
        return None
    return None


def _position(event: object) -> tuple[int, int]:
    mark = getattr(event, "start_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


@dataclass
class _Open:
    """A collection open in the event stream: a mapping's even nodes are its keys."""

    mapping: bool
    held: int = 0
    items_next: bool = False  # its last key was ``items``
