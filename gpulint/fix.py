"""Apply safe fixes through a ruamel.yaml round trip (comments, key order, quoting kept).

Every rewrite is verified before it is written: the new text is read back with the
same reader as the linter, and its data must equal the old data plus the intended
edits and nothing else. A file is written atomically (temporary file + rename) and
only when its text changed.
"""
from __future__ import annotations

import copy
import difflib
import io
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.findings import Fix, Path
from gpulint.loader import load_text


@dataclass(frozen=True)
class FixOutcome:
    path: str
    new_text: str | None  # None: nothing changed, or the fix was refused
    applied: int
    refused: str = ""  # why the file was left alone


def _round_trip_yaml(text: str) -> Any:
    from ruamel.yaml import YAML  # imported only when fixing: a lint run never pays for it
    from ruamel.yaml.util import load_yaml_guess_indent

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never re-wrap long lines
    first = text.split("\n---", 1)[0]
    try:
        _, indent, block_seq_indent = load_yaml_guess_indent(first)
    except Exception:  # noqa: BLE001 - a guess only; fall back to Kubernetes' usual style
        indent, block_seq_indent = 2, 0
    indent = indent or 2
    yaml.indent(mapping=indent, sequence=indent + (block_seq_indent or 0), offset=block_seq_indent or 0)
    yaml.explicit_start = text.lstrip().startswith("---")
    return yaml


def _get(node: Any, path: Path) -> Any:
    for step in path:
        node = node[step]
    return node


def _set(root: Any, path: Path, value: Any, make_map: Any) -> None:
    parent = root
    for depth, step in enumerate(path[:-1]):
        if isinstance(parent, dict) and (step not in parent or parent[step] is None):
            new_map = make_map()
            if getattr(parent, "fa", None) is not None and parent.fa.flow_style():
                new_map.fa.set_flow_style()
            _insert_near(parent, step, new_map, path[depth + 1:])
        parent = parent[step]
    parent[path[-1]] = value


def _insert_near(parent: Any, key: str, value: Any, rest: Path) -> None:
    """Put a new ``limits`` beside ``requests`` (and the like) rather than at the end of the mapping."""
    sibling = {"limits": "requests", "requests": "limits"}.get(key)
    keys = list(parent.keys())
    if sibling in keys and hasattr(parent, "insert"):
        parent.insert(keys.index(sibling) + 1, key, value)
    else:
        parent[key] = value


def _plain_set(root: Any, path: Path, value: Any) -> None:
    parent = root
    for step in path[:-1]:
        if isinstance(parent, dict) and not isinstance(parent.get(step), (dict, list)):
            parent[step] = {}
        parent = parent[step]
    parent[path[-1]] = value


def fix_text(path: str, text: str, fixes: Sequence[Fix]) -> FixOutcome:
    if not fixes:
        return FixOutcome(path, None, 0)
    from ruamel.yaml.comments import CommentedMap

    original = load_text(path, text)
    if original.problems:
        return FixOutcome(path, None, 0, "the file has YAML problems; fix them first")
    yaml = _round_trip_yaml(text)
    try:
        documents = list(yaml.load_all(text))
    except Exception as exc:  # noqa: BLE001 - ruamel's errors are many; the file is left alone either way
        return FixOutcome(path, None, 0, f"ruamel.yaml could not read it for a round trip: {exc}")
    expected = {doc.index: copy.deepcopy(doc.data) for doc in original.documents}
    applied = 0
    for fix in fixes:
        if fix.document >= len(documents) or fix.document not in expected:
            continue
        try:
            value = _get(documents[fix.document], fix.source_path) if fix.source_path else fix.value
            _set(documents[fix.document], fix.path, value, CommentedMap)
        except (KeyError, IndexError, TypeError):
            continue
        plain = _get(expected[fix.document], fix.source_path) if fix.source_path else fix.value
        _plain_set(expected[fix.document], fix.path, plain)
        applied += 1
    if not applied:
        return FixOutcome(path, None, 0)
    buffer = io.StringIO()
    yaml.dump_all(documents, buffer)
    new_text = buffer.getvalue()
    if "\r\n" in text:
        new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    if new_text == text:
        return FixOutcome(path, None, 0)
    reread = load_text(path, new_text)
    if reread.problems or {doc.index: doc.data for doc in reread.documents} != expected:
        return FixOutcome(path, None, 0, "the round trip would have changed more than the fix; left unchanged")
    return FixOutcome(path, new_text, applied)


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
