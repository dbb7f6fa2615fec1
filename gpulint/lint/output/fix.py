"""Apply safe fixes as exact text edits at the positions the YAML parser reported.

Only the bytes a fix changes are touched: comments, key order, quoting, indentation,
blank lines and line endings elsewhere stay as they were. (A ruamel.yaml round trip
re-indents a whole file to one style, which rewrites most lines of a file that mixes
indented and flush sequences - common in GitOps repositories.)

All the fixes of a file are planned on one parse and applied in one pass; the result
is parsed once more and its data must equal the original data plus the intended
edits, or the file is left alone. JSON is fixed in JSON, in the file's own layout.

Writing keeps what the file was: its encoding and byte-order mark, mode and (where
permitted) owner, the target of a symbolic link (the link stays), the inode of a
hard-linked file. A file that changed since it was linted is refused, and no
temporary file is left behind, whatever fails.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpulint.lint.findings import Append, Fix, Path
from gpulint.lint.inputs.loader import DecodeError, Encoding, _child, decode, detect_encoding, load_text

_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_SIBLING = {"limits": "requests", "requests": "limits"}
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()


class FixRefused(Exception):
    """The file is left exactly as it was; the message says why."""


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
    on_new_line: bool = False  # a block snippet: must start a line (matters at an unterminated last line)


@dataclass(frozen=True)
class _Leaf:
    text: str  # the value as it is written into the file


_Tree = dict[str, Union["_Tree", _Leaf]]


@dataclass
class _Insertion:
    """Keys to create under one existing mapping (several fixes may share a new parent)."""

    mapping: MappingNode
    ancestors: list[Node]  # root .. mapping: where the key quoting style is looked up
    tree: _Tree = field(default_factory=dict)


@dataclass
class _ListAppend:
    """Items to add at the end of one existing list."""

    sequence: SequenceNode
    items: list[Any] = field(default_factory=list)


@dataclass
class _Plan:
    replacements: dict[int, tuple[ScalarNode, str]] = field(default_factory=dict)  # by id(node)
    insertions: dict[int, _Insertion] = field(default_factory=dict)  # by id(mapping)
    appends: dict[int, _ListAppend] = field(default_factory=dict)  # by id(sequence)

    def copy(self) -> _Plan:
        """A copy to plan a group of edits on: kept whole, or dropped whole."""
        insertions = {
            key: _Insertion(i.mapping, i.ancestors, copy.deepcopy(i.tree)) for key, i in self.insertions.items()
        }
        appends = {key: _ListAppend(a.sequence, list(a.items)) for key, a in self.appends.items()}
        return _Plan(dict(self.replacements), insertions, appends)


@dataclass(frozen=True)
class _Style:
    json: bool  # the file is JSON: keys always double-quoted, and it must stay JSON
    default_newline: str


# --- planning -------------------------------------------------------------------------------


def _walk(root: Node, path: Path) -> tuple[list[Node], Path]:
    """The nodes along ``path`` that exist, and the missing rest of the path."""
    nodes = [root]
    for depth, step in enumerate(path):
        child = _child(nodes[-1], step)
        if child is None:
            return nodes, path[depth:]
        nodes.append(child[1])
    return nodes, ()


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def _tree_put(tree: _Tree, keys: Path, leaf: _Leaf) -> bool:
    """Add ``keys`` -> ``leaf`` to the keys to create; False when it clashes with an earlier fix."""
    node: _Tree = tree
    for key in keys[:-1]:  # check the whole way first, so a refused fix leaves no half-made branch
        child = node.get(key)
        if isinstance(child, _Leaf):
            return False
        if child is None:
            break
        node = child
    else:
        if isinstance(node.get(keys[-1]), dict):
            return False
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})  # type: ignore[assignment]
    tree[keys[-1]] = leaf
    return True


def _plan_fix(text: str, root: Node, fix: Fix, plan: _Plan) -> bool:
    """Record the edit ``fix`` needs; False when it cannot be made as a text edit."""
    value = _value_text(fix.value)
    if fix.source_path is not None:
        source_nodes, source_missing = _walk(root, fix.source_path)
        source = source_nodes[-1]
        if source_missing or not isinstance(source, ScalarNode):
            return False
        pending = plan.replacements.get(id(source))  # an earlier fix in this pass changed the source
        value = pending[1] if pending else _without_anchor(text[source.start_mark.index : source.end_mark.index])
        if "\n" in value or "\r" in value:
            return False  # a multi-line scalar does not read the same elsewhere
    nodes, missing = _walk(root, fix.path)
    if not missing:
        target = nodes[-1]
        if not isinstance(target, ScalarNode):
            return False
        plan.replacements[id(target)] = (target, value)
        return True
    parent = nodes[-1]
    if not isinstance(parent, MappingNode) or not all(isinstance(step, str) for step in missing):
        return False
    insertion = plan.insertions.setdefault(id(parent), _Insertion(parent, nodes))
    return _tree_put(insertion.tree, missing, _Leaf(value))


def _plan_append(root: Node, append: Append, plan: _Plan) -> bool:
    """Record an item to add to the list at ``append.path`` (or the one-item list to create there)."""
    nodes, missing = _walk(root, append.path)
    if not missing:
        target = nodes[-1]
        if not isinstance(target, SequenceNode) or (
            target.value and target.value[-1].start_mark.index < target.start_mark.index
        ):
            return False  # not a list, or one that ends in an alias of a node elsewhere
        plan.appends.setdefault(id(target), _ListAppend(target)).items.append(append.item)
        return True
    parent = nodes[-1]
    if not isinstance(parent, MappingNode) or not all(isinstance(step, str) for step in missing):
        return False
    insertion = plan.insertions.setdefault(id(parent), _Insertion(parent, nodes))
    return _tree_put(insertion.tree, missing, _Leaf(_flow([append.item])))


_PLAIN_VALUE = re.compile(r"[A-Za-z/][A-Za-z0-9/._-]*")


def _flow(value: Any, json_style: bool = False) -> str:
    """A value written inline: JSON in a JSON file, YAML flow style (plain scalars where they read back the same) otherwise."""
    if json_style:
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key_text(str(k), False)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if (
        isinstance(value, str)
        and _PLAIN_VALUE.fullmatch(value)
        and _RESOLVER.resolve(ScalarNode, value, (True, False)) == _STR_TAG
    ):
        return value
    return _value_text(value)


def _block_item(item: Any, dash_indent: str, step: int) -> list[str]:
    """A list item in block style: ``- key: value`` and the item's other keys below it."""
    if not isinstance(item, dict) or not item:
        return [f"{dash_indent}- {_flow(item)}"]
    lines = []
    inner = dash_indent + " " * 2
    for index, (key, value) in enumerate(item.items()):
        lead = f"{dash_indent}- " if index == 0 else inner
        if isinstance(value, dict) and value:
            lines.append(f"{lead}{_key_text(str(key), False)}:")
            lines.extend(_block_lines(_as_tree(value), len(inner) + step, step, False))
        else:
            lines.append(f"{lead}{_key_text(str(key), False)}: {_flow(value)}")
    return lines


def _as_tree(value: dict[str, Any]) -> _Tree:
    return {str(k): _as_tree(v) if isinstance(v, dict) and v else _Leaf(_flow(v)) for k, v in value.items()}


def _append_edits(text: str, append: _ListAppend, style: _Style) -> list[_Edit] | None:
    sequence = append.sequence
    if sequence.flow_style or not sequence.value:
        close = sequence.end_mark.index - 1
        if close < 0 or text[close] != "]":
            return None
        items = ", ".join(_flow(item, style.json) for item in append.items)
        if not sequence.value:
            return [_Edit(close, close, items)]
        end = sequence.value[-1].end_mark.index
        return [_Edit(end, end, ", " + items)]
    first = sequence.value[0]
    line_start = _line_start(text, first.start_mark.index)
    dash = text.rfind("-", line_start, first.start_mark.index)
    if dash < 0 or text[line_start:dash].strip():
        return None  # an item that does not start its line ("- - x"): not written here
    last = _last_index(None, sequence)
    if last is None:
        return None
    position = _line_end(text, last)
    newline = _newline_before(text, position, style.default_newline)
    step = 2
    if isinstance(first, MappingNode):
        step = _child_step(first) or 2
    lines: list[str] = []
    for item in append.items:
        lines.extend(_block_item(item, text[line_start:dash], step))
    return [_Edit(position, position, newline.join(lines) + newline, on_new_line=True)]


def _without_anchor(scalar: str) -> str:
    """A scalar's text as copied elsewhere: its tag kept, its anchor (``&name``, defined once) dropped."""
    properties = []
    while scalar.startswith(("&", "!")):
        token, _, scalar = scalar.partition(" ")
        scalar = scalar.lstrip(" ")
        if token.startswith("!"):
            properties.append(token)
    return " ".join([*properties, scalar])


def _plain_set(root: Any, path: Path, value: Any) -> None:
    parent = root
    for step in path[:-1]:
        if isinstance(parent, dict) and not isinstance(parent.get(step), (dict, list)):
            parent[step] = {}
        parent = parent[step]
    parent[path[-1]] = value


def _plain_append(root: Any, append: Append) -> None:
    parent = root
    for step in append.path[:-1]:
        if isinstance(parent, dict) and not isinstance(parent.get(step), (dict, list)):
            parent[step] = {}
        parent = parent[step]
    last = append.path[-1]
    if isinstance(parent, dict) and not isinstance(parent.get(last), list):
        parent[last] = []
    parent[last].append(copy.deepcopy(append.item))


def _plain_get(root: Any, path: Path) -> Any:
    for step in path:
        root = root[step]
    return root


# --- rendering ------------------------------------------------------------------------------


def _line_end(text: str, index: int) -> int:
    """Offset just after the line break of the line holding ``index`` (CRLF, LF or a lone CR)."""
    for position in range(index, len(text)):
        char = text[position]
        if char == "\n":
            return position + 1
        if char == "\r":
            return position + 2 if text.startswith("\r\n", position) else position + 1
    return len(text)


def _line_start(text: str, index: int) -> int:
    return max(text.rfind("\n", 0, index), text.rfind("\r", 0, index)) + 1


def _newline_before(text: str, position: int, default: str) -> str:
    """The line break that ends the line before ``position``: a new line matches its neighbour."""
    if text.endswith("\r\n", 0, position):
        return "\r\n"
    if position and text[position - 1] in "\r\n":
        return text[position - 1]
    return default


def _file_newline(text: str) -> str:
    match = re.search(r"\r\n|\r|\n", text)
    return match.group(0) if match else "\n"


def _last_index(key: Node | None, node: Node) -> int | None:
    """Offset of the last character written for ``node`` (the value of ``key``) here.

    An alias (``*name``) shares its node with the anchor elsewhere in the file, so its marks
    point there; what is written here ends on the key's line. None: the end cannot be told.
    """
    while True:
        if key is not None and node.start_mark.index < key.end_mark.index:
            return key.end_mark.index
        if not isinstance(node, (MappingNode, SequenceNode)) or not node.value or node.flow_style:
            return max(node.start_mark.index, node.end_mark.index - 1)
        last = node.value[-1]
        if isinstance(last, tuple):
            key, node = last
        elif last.start_mark.index < node.start_mark.index:
            return None  # a sequence whose last item is an alias
        else:
            key, node = None, last


def _quoted_keys(style: _Style, ancestors: Sequence[Node]) -> bool:
    """Whether new keys are written double-quoted: always in JSON, else as the nearest mapping does."""
    if style.json:
        return True
    for node in reversed(ancestors):
        if isinstance(node, MappingNode) and node.value:
            key = node.value[0][0]
            return isinstance(key, ScalarNode) and key.style == '"'
    return False


def _key_text(key: str, quoted: bool) -> str:
    plain = (
        not quoted
        and _PLAIN_KEY.fullmatch(key) is not None
        and _RESOLVER.resolve(ScalarNode, key, (True, False)) == _STR_TAG
    )  # not "yes", "null", "1"
    return key if plain else json.dumps(key)


def _child_step(mapping: MappingNode) -> int | None:
    """The indentation step this file uses under a key (for keys we create)."""
    for key_node, value_node in mapping.value:
        if isinstance(value_node, MappingNode) and value_node.value and not value_node.flow_style:
            return value_node.value[0][0].start_mark.column - key_node.start_mark.column
    return None


def _block_lines(tree: _Tree, indent: int, step: int, quoted: bool) -> list[str]:
    lines = []
    for key, child in tree.items():
        prefix = " " * indent + _key_text(key, quoted) + ":"
        if isinstance(child, _Leaf):
            lines.append(f"{prefix} {child.text}")
        else:
            lines.append(prefix)
            lines.extend(_block_lines(child, indent + step, step, quoted))
    return lines


def _block_edits(text: str, insertion: _Insertion, style: _Style) -> list[_Edit] | None:
    mapping = insertion.mapping
    indent = mapping.value[0][0].start_mark.column
    step = _child_step(mapping) or 2
    quoted = _quoted_keys(style, insertion.ancestors)
    edits = []
    for key, child in insertion.tree.items():
        anchor = mapping.value[-1]
        sibling = _SIBLING.get(key)
        for key_node, value_node in mapping.value:  # limits right after requests, and the reverse
            if isinstance(key_node, ScalarNode) and key_node.value == sibling:
                anchor = (key_node, value_node)
        last = _last_index(*anchor)
        if last is None:
            return None
        position = _line_end(text, last)
        newline = _newline_before(text, position, style.default_newline)
        lines = _block_lines({key: child}, indent, step, quoted)
        edits.append(_Edit(position, position, newline.join(lines) + newline, on_new_line=True))
    return edits


@dataclass(frozen=True)
class _FlowLayout:
    colon: str  # ": " or ":" (compact JSON)
    comma: str  # between entries on one line: ", " or ","
    indent: str | None  # entries one per line at this indentation (None: on one line)
    step: str  # one more level of indentation
    newline: str


def _flow_layout(text: str, mapping: MappingNode, style: _Style) -> _FlowLayout:
    quoted = _quoted_keys(style, [mapping])
    colon, comma, indent, step = ": ", ", ", None, "  "
    if mapping.value:
        first_key, first_value = mapping.value[0]
        between = text[first_key.end_mark.index : first_value.start_mark.index]
        if quoted and between == ":":  # a plain key needs the space; a quoted one may go without
            colon = ":"
        if len(mapping.value) > 1:
            gap = text[first_value.end_mark.index : mapping.value[1][0].start_mark.index]
            comma = "," if gap == "," else ", "
        elif colon == ":":
            comma = ","
        if first_key.start_mark.line > mapping.start_mark.line:  # one entry per line
            start = _line_start(text, first_key.start_mark.index)
            indent = text[start : first_key.start_mark.index]
            if indent.strip():
                indent = " " * first_key.start_mark.column
            outer_start = _line_start(text, mapping.start_mark.index)
            outer = re.match(r"[ \t]*", text[outer_start:]).group(0)  # type: ignore[union-attr]
            if indent.startswith(outer) and len(indent) > len(outer):
                step = indent[len(outer) :]
    newline = _newline_before(text, _line_end(text, mapping.start_mark.index), style.default_newline)
    return _FlowLayout(colon, comma, indent, step, newline)


def _flow_value(child: _Tree | _Leaf, layout: _FlowLayout, indent: str | None, quoted: bool) -> str:
    if isinstance(child, _Leaf):
        return child.text
    if indent is None:
        return "{" + _flow_entries(child, layout, None, quoted) + "}"
    inner = indent + layout.step
    return "{" + layout.newline + _flow_entries(child, layout, inner, quoted) + layout.newline + indent + "}"


def _flow_entries(tree: _Tree, layout: _FlowLayout, indent: str | None, quoted: bool) -> str:
    entries = [
        f"{indent or ''}{_key_text(key, quoted)}{layout.colon}{_flow_value(child, layout, indent, quoted)}"
        for key, child in tree.items()
    ]
    return ("," + layout.newline if indent is not None else layout.comma).join(entries)


def _flow_edits(text: str, insertion: _Insertion, style: _Style) -> list[_Edit] | None:
    mapping = insertion.mapping
    close = mapping.end_mark.index - 1
    if close < 0 or text[close] != "}":
        return None
    quoted = _quoted_keys(style, insertion.ancestors)
    layout = _flow_layout(text, mapping, style)
    if not mapping.value:
        return [_Edit(close, close, _flow_entries(insertion.tree, layout, None, quoted))]
    end = mapping.value[-1][1].end_mark.index
    if not mapping.start_mark.index < end <= close:
        return None  # the last value is an alias of a node elsewhere
    if layout.indent is None:
        return [_Edit(end, end, layout.comma + _flow_entries(insertion.tree, layout, None, quoted))]
    entries = _flow_entries(insertion.tree, layout, layout.indent, quoted)
    line_end = _line_end(text, end)
    rest = text[end:line_end].strip()
    if (not rest or rest.startswith("#")) and line_end <= close:
        # The comma after the last value (before its comment), the new entries on lines of their own.
        return [_Edit(end, end, ","), _Edit(line_end, line_end, entries + layout.newline)]
    return [_Edit(end, end, "," + layout.newline + entries)]


def _render(text: str, plan: _Plan, style: _Style) -> list[_Edit] | None:
    edits = [_Edit(node.start_mark.index, node.end_mark.index, value) for node, value in plan.replacements.values()]
    for append in plan.appends.values():
        made_append = _append_edits(text, append, style)
        if made_append is None:
            return None
        edits.extend(made_append)
    # Inner mappings first: two insertions at one offset (the end of both blocks) must nest.
    for insertion in sorted(plan.insertions.values(), key=lambda i: -i.mapping.start_mark.index):
        mapping = insertion.mapping
        flow = mapping.flow_style or not mapping.value
        made = _flow_edits(text, insertion, style) if flow else _block_edits(text, insertion, style)
        if made is None:
            return None
        edits.extend(made)
    return edits


def _apply(text: str, edits: list[_Edit]) -> str | None:
    """All edits in one pass (None when two of them overlap)."""
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    pieces: list[str] = []
    position = 0
    for _, edit in ordered:
        if edit.start < position:
            return None
        pieces.append(text[position : edit.start])
        last = next((piece[-1] for piece in reversed(pieces) if piece), "")
        added = edit.text
        if edit.on_new_line and last not in ("", "\r", "\n"):
            # After an unterminated last line: break that line, and leave the new last line unterminated too.
            newline = _newline_before(added, len(added), "\n")
            added = newline + (added.removesuffix(newline) if edit.start == len(text) else added)
        pieces.append(added)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def fix_text(path: str, text: str, fixes: Sequence[Fix]) -> FixOutcome:
    """The text with every fix that can be made applied, verified by parsing it again."""
    if not fixes:
        return FixOutcome(path, None, 0)
    loaded = load_text(path, text)
    if loaded.problems:
        return FixOutcome(path, None, 0, "the file has YAML problems; fix them first")
    documents = {doc.index: doc for doc in loaded.documents if not doc.line_offset}
    expected = {doc.index: copy.deepcopy(doc.data) for doc in loaded.documents}
    plans: dict[int, _Plan] = {}
    applied = 0
    for fix in fixes:
        document = documents.get(fix.document)
        if document is None or document.node is None:  # parsed from text, so never; the type allows it
            continue
        plan = plans.setdefault(fix.document, _Plan())
        if fix.appends:
            plan = plan.copy()  # several edits: planned all or none
        if fix.path and not _plan_fix(text, document.node, fix, plan):
            continue
        if not all(_plan_append(document.node, append, plan) for append in fix.appends):
            continue
        plans[fix.document] = plan
        try:
            if fix.path:
                plain = _plain_get(expected[fix.document], fix.source_path) if fix.source_path else fix.value
                _plain_set(expected[fix.document], fix.path, plain)
            for append in fix.appends:
                _plain_append(expected[fix.document], append)
        except (KeyError, IndexError, TypeError, AttributeError):
            return FixOutcome(path, None, 0, "a fix does not match the file's data; left unchanged")
        applied += 1
    if not applied:
        return FixOutcome(path, None, 0)
    # JSON is kept JSON whatever the file is called (kubectl get -o json > x.yaml); YAML in a .json file stays YAML.
    style = _Style(json=_is_json(text), default_newline=_file_newline(text))
    edits: list[_Edit] = []
    for plan in plans.values():
        rendered = _render(text, plan, style)
        if rendered is None:
            return FixOutcome(path, None, 0, "a fix cannot be written as a text edit here; left unchanged")
        edits.extend(rendered)
    fixed = _apply(text, edits)
    if fixed is None:
        return FixOutcome(path, None, 0, "two fixes overlap; left unchanged")
    if fixed == text:
        return FixOutcome(path, None, 0)
    return _verified(path, fixed, applied, expected, must_be_json=style.json)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _verified(path: str, fixed: str, applied: int, expected: dict[int, Any], must_be_json: bool) -> FixOutcome:
    reparsed = load_text(path, fixed)
    if reparsed.problems:
        return FixOutcome(path, None, 0, "a fix would have broken the YAML; left unchanged")
    if {doc.index: doc.data for doc in reparsed.documents} != expected:
        return FixOutcome(path, None, 0, "the edit would have changed more than the fix; left unchanged")
    if must_be_json and not _is_json(fixed):  # YAML reads more than JSON: a JSON file must stay JSON
        return FixOutcome(path, None, 0, "the fixed file would not be valid JSON; left unchanged")
    return FixOutcome(path, fixed, applied)


# --- files ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedFix:
    """A file's fixed content, built and verified, not written yet."""

    display: str
    target: str  # the real file (symbolic links resolved); "" for standard input or a pipe (diff only)
    identity: tuple[int, int]  # st_dev, st_ino
    encoding: Encoding
    old_raw: bytes
    new_raw: bytes
    old_text: str
    new_text: str
    applied: int

    def diff(self) -> str:
        # A UTF-8 BOM is part of the first line, so the patch applies byte for byte;
        # UTF-16/32 text is shown decoded (no patch tool applies it anyway).
        bom = "\ufeff" if self.encoding.bom and self.encoding.codec == "utf-8" else ""
        return unified_diff(self.display, bom + self.old_text, bom + self.new_text)


def prepare_fix(display: str, fs_path: str, fixes: Sequence[Fix], linted: bytes | None = None) -> PreparedFix | None:
    """Read the file again and build its fixed content (None: nothing to change).

    ``linted`` is the content the fixes were found in. Raises FixRefused when the file is
    no longer that content or cannot be fixed safely.
    """
    target = os.path.realpath(fs_path)
    try:
        status = os.stat(target)
        if not stat.S_ISREG(status.st_mode):
            raise FixRefused("not a regular file")  # a pipe or device: reading it again would not give the same
        with open(target, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise FixRefused(f"cannot read it again ({exc.strerror or exc})") from None
    if linted is not None and raw != linted:
        raise FixRefused("it changed after it was linted; run gpulint again")
    return _prepare(display, target, (status.st_dev, status.st_ino), raw, fixes)


def prepare_fix_of_content(display: str, raw: bytes, fixes: Sequence[Fix]) -> PreparedFix | None:
    """The fixed content of bytes read once (standard input, a pipe): for ``--diff``, never written."""
    return _prepare(display, "", (0, 0), raw, fixes)


def _prepare(
    display: str, target: str, identity: tuple[int, int], raw: bytes, fixes: Sequence[Fix]
) -> PreparedFix | None:
    encoding = detect_encoding(raw)
    try:
        text = decode(raw)
    except DecodeError as exc:
        raise FixRefused(f"{exc.line}:{exc.column}: {exc.message}") from None
    if encoding.encode(text) != raw:
        raise FixRefused(f"its {encoding.codec} text does not encode back to the same bytes")
    outcome = fix_text(display, text, fixes)
    if outcome.refused:
        raise FixRefused(outcome.refused)
    if outcome.new_text is None:
        return None
    return PreparedFix(
        display,
        target,
        identity,
        encoding,
        raw,
        encoding.encode(outcome.new_text),
        text,
        outcome.new_text,
        outcome.applied,
    )


def write_fix(prepared: PreparedFix) -> None:
    """Write the fixed content; raises FixRefused or OSError, with the file left as it was."""
    target = prepared.target
    try:
        status = os.stat(target)
        with open(target, "rb") as handle:
            current = handle.read()
    except OSError as exc:
        raise FixRefused(f"cannot read it again ({exc.strerror or exc})") from None
    if (status.st_dev, status.st_ino) != prepared.identity or current != prepared.old_raw:
        raise FixRefused("it changed while it was being fixed; left unchanged")
    # A rename would go round a read-only file, and root may write any file: the mode bits decide, as an
    # editor's "readonly" does. No write bit for anyone (chmod a-w, 0444) is read-only to root too.
    if not os.access(target, os.W_OK) or not status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise FixRefused("the file is read-only; left unchanged")
    if status.st_nlink > 1:  # replacing it would split the hard link: write into the same inode
        _write_in_place(target, prepared.old_raw, prepared.new_raw)
    else:
        _replace_atomically(target, status, prepared.new_raw)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(descriptor, view[offset:], offset)


def _write_in_place(target: str, old: bytes, new: bytes) -> None:
    descriptor = os.open(target, os.O_WRONLY)
    try:
        if len(new) > len(old):
            try:  # reserve the room first: a full disk fails here, before a byte is overwritten
                os.posix_fallocate(descriptor, 0, len(new))
            except OSError:
                os.ftruncate(descriptor, len(old))  # drop whatever was reserved past the old end
                raise
        try:
            _write_all(descriptor, new)
            os.ftruncate(descriptor, len(new))
            os.fsync(descriptor)
        except OSError:
            _write_all(descriptor, old)  # put the old bytes back (their blocks are still allocated)
            os.ftruncate(descriptor, len(old))
            raise
    finally:
        os.close(descriptor)


def _replace_atomically(target: str, status: os.stat_result, data: bytes) -> None:
    directory = os.path.dirname(target)
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".gpulint-tmp", dir=directory
        )
    except OSError as exc:
        raise FixRefused(
            f"cannot create a temporary file next to it in {directory} ({exc.strerror or exc}); left unchanged"
        ) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            _copy_metadata(target, handle.fileno(), status)
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _copy_metadata(source: str, descriptor: int, status: os.stat_result) -> None:
    """Owner (where permitted), mode and extended attributes of ``source`` onto the new file."""
    mine = os.fstat(descriptor)
    if (mine.st_uid, mine.st_gid) != (status.st_uid, status.st_gid):
        try:
            os.fchown(descriptor, status.st_uid, status.st_gid)
        except PermissionError:
            try:  # not root: a user may still hand the file to one of their groups
                os.fchown(descriptor, -1, status.st_gid)
            except PermissionError:
                pass
    os.fchmod(descriptor, stat.S_IMODE(status.st_mode))  # after chown, which clears set-id bits
    _copy_extended_attributes(source, descriptor)


def _copy_extended_attributes(source: str, descriptor: int) -> None:
    """ACLs (system.posix_acl_*), SELinux labels and user attributes, where the system has them."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(descriptor, name, os.getxattr(source, name))
        except OSError:
            pass  # not permitted, or not supported here: the content and mode matter more


def _fsync_directory(directory: str) -> None:
    """Make the rename durable; not every file system lets a directory be opened or synced."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# --- diff -----------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines split at LF only, as patch(1) reads them (a CR stays part of its line)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{path}", tofile=f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
