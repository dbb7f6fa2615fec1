"""Apply safe fixes as exact text edits at the positions the YAML parser reported.

Only the bytes a fix changes are touched: comments, key order, quoting, indentation,
blank lines and line endings elsewhere stay as they were. (A ruamel.yaml round trip
re-indents a whole file to one style, which rewrites most lines of a file that mixes
indented and flush sequences - common in GitOps repositories.)

Each fix is planned on the current text, applied, and the text is parsed again
before the next one. The final text must parse cleanly and its data must equal the
original data plus the intended edits, or the file is left alone. Files are written
atomically (temporary file + rename), and only when their text changed.
"""
from __future__ import annotations

import copy
import difflib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpulint.findings import Fix, Path
from gpulint.loader import LoadedFile, _child, load_text

_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_SIBLING = {"limits": "requests", "requests": "limits"}


@dataclass(frozen=True)
class FixOutcome:
    path: str
    new_text: str | None  # None: nothing changed, or the fix was refused
    applied: int
    refused: str = ""  # why the file was left alone


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str

    def apply(self, text: str) -> str:
        return text[:self.start] + self.text + text[self.end:]


def _walk(root: Node, path: Path) -> tuple[list[Node], Path]:
    """The nodes along ``path`` that exist, and the missing rest of the path."""
    nodes = [root]
    for depth, step in enumerate(path):
        child = _child(nodes[-1], step)
        if child is None:
            return nodes, path[depth:]
        nodes.append(child[1])
    return nodes, ()


def _key_text(key: Any) -> str:
    key = str(key)
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def _line_end(text: str, index: int) -> int:
    """Offset just after the line break of the line holding ``index``."""
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _last_index(node: Node) -> int:
    """Character offset of the last character that belongs to ``node``'s subtree."""
    while isinstance(node, (MappingNode, SequenceNode)) and node.value and not node.flow_style:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return max(node.start_mark.index, node.end_mark.index - 1)


def _insert_into_mapping(text: str, mapping: MappingNode, missing: Path, value: str, newline: str) -> _Edit | None:
    if mapping.flow_style or not mapping.value:
        close = mapping.end_mark.index - 1
        if close < 0 or text[close] != "}":
            return None
        nested = value
        for key in reversed(missing[1:]):
            nested = f"{{{_key_text(key)}: {nested}}}"
        separator = ", " if mapping.value else ""
        return _Edit(close, close, f"{separator}{_key_text(missing[0])}: {nested}")
    first_key = mapping.value[0][0]
    indent = first_key.start_mark.column
    step = _child_step(mapping) or 2
    anchor = mapping.value[-1]
    sibling = _SIBLING.get(str(missing[0]))
    for key_node, value_node in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == sibling:
            anchor = (key_node, value_node)
    position = _line_end(text, _last_index(anchor[1]))
    lines = []
    for depth, key in enumerate(missing):
        prefix = " " * (indent + depth * step) + f"{_key_text(key)}:"
        lines.append(prefix + (f" {value}" if depth == len(missing) - 1 else ""))
    snippet = newline.join(lines) + newline
    if position == len(text) and text and not text.endswith("\n"):
        snippet = newline + snippet
    return _Edit(position, position, snippet)


def _child_step(mapping: MappingNode) -> int | None:
    """The indentation step this file uses under a key (for keys we create)."""
    for key_node, value_node in mapping.value:
        if isinstance(value_node, MappingNode) and value_node.value and not value_node.flow_style:
            return value_node.value[0][0].start_mark.column - key_node.start_mark.column
    return None


def _plan(loaded: LoadedFile, fix: Fix) -> _Edit | None:
    document = next((d for d in loaded.documents if d.index == fix.document), None)
    if document is None or document.line_offset:
        return None
    text = loaded.text
    newline = "\r\n" if "\r\n" in text else "\n"
    value = _value_text(fix.value)
    if fix.source_path is not None:
        source_nodes, source_missing = _walk(document.node, fix.source_path)
        source = source_nodes[-1]
        if source_missing or not isinstance(source, ScalarNode):
            return None
        value = text[source.start_mark.index:source.end_mark.index]
    nodes, missing = _walk(document.node, fix.path)
    if not missing:
        target = nodes[-1]
        if not isinstance(target, ScalarNode):
            return None
        return _Edit(target.start_mark.index, target.end_mark.index, value)
    parent = nodes[-1]
    if not isinstance(parent, MappingNode):
        return None
    return _insert_into_mapping(text, parent, missing, value, newline)


def _plain_set(root: Any, path: Path, value: Any) -> None:
    parent = root
    for step in path[:-1]:
        if isinstance(parent, dict) and not isinstance(parent.get(step), (dict, list)):
            parent[step] = {}
        parent = parent[step]
    parent[path[-1]] = value


def _plain_get(root: Any, path: Path) -> Any:
    for step in path:
        root = root[step]
    return root


def fix_text(path: str, text: str, fixes: Sequence[Fix]) -> FixOutcome:
    if not fixes:
        return FixOutcome(path, None, 0)
    loaded = load_text(path, text)
    if loaded.problems:
        return FixOutcome(path, None, 0, "the file has YAML problems; fix them first")
    expected = {doc.index: copy.deepcopy(doc.data) for doc in loaded.documents}
    current, applied = text, 0
    for fix in fixes:
        edit = _plan(loaded, fix)
        if edit is None or fix.document not in expected:
            continue
        current = edit.apply(current)
        plain = _plain_get(expected[fix.document], fix.source_path) if fix.source_path else fix.value
        _plain_set(expected[fix.document], fix.path, plain)
        applied += 1
        loaded = load_text(path, current)
        if loaded.problems:
            return FixOutcome(path, None, 0, "a fix would have broken the YAML; left unchanged")
    if not applied or current == text:
        return FixOutcome(path, None, 0)
    if {doc.index: doc.data for doc in loaded.documents} != expected:
        return FixOutcome(path, None, 0, "the edit would have changed more than the fix; left unchanged")
    return FixOutcome(path, current, applied)


def write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    descriptor, temporary = tempfile.mkstemp(prefix=".gpulint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))
