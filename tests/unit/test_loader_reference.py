"""The loader's fast path (issue #19) holds to the loader it replaced, kept here as the reference.

The loader resolves tags through a memo of PyYAML's own resolver, and builds values with scalars read
in their parent's loop and no alias memo when the text has no ``*``. The reference below is the
loader as it was before that: libyaml's composer with PyYAML's resolver (``yaml.CSafeLoader``) and the
node-by-node builder. Both must agree on every text: the node tree (kind, tag, style and position of
every node), each document's value (types too: 1, 1.0 and True), duplicate keys, depth and alias-bomb
refusals (message and position), and syntax errors.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import REPO
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpulint.lint.inputs import loader
from gpulint.lint.inputs.loader import (
    _CONSTRUCTOR,
    _MERGE,
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    MAX_EXPANSION_RATIO,
    LoadError,
    _key_text,
    _scalar,
)


class ReferenceBuilder:
    """The builder before issue #19's parse work, verbatim but for its name (its own depth check)."""

    def __init__(self) -> None:
        self.duplicates: list[tuple[str, int, int]] = []
        self._built: dict[int, Any] = {}
        self._sizes: dict[int, int] = {}
        self._physical = 0
        self._depth_checked = False

    def build(self, root: Node, aliases: bool) -> Any:
        if not aliases:
            self._depth_checked = True
            return self._build(root, 0)
        expanded = self._size(root, 0)
        if expanded > MAX_EXPANDED_NODES and expanded > MAX_EXPANSION_RATIO * self._physical:
            mark = root.start_mark
            raise LoadError(
                f"document refused: its aliases expand {self._physical} nodes into {expanded} "
                "(an alias bomb); Kubernetes' YAML reader refuses excessive aliasing too",
                mark.line + 1,
                mark.column + 1,
            )
        return self._build(root, 0)

    def _size(self, node: Node, depth: int) -> int:
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if depth > MAX_DEPTH:
            mark = node.start_mark
            raise LoadError(f"document nests deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1)
        self._physical += 1
        if isinstance(node, MappingNode):
            total = 1 + sum(self._size(k, depth + 1) + self._size(v, depth + 1) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            total = 1 + sum(self._size(item, depth + 1) for item in node.value)
        else:
            total = 1
        self._sizes[id(node)] = total
        return total

    def _build(self, node: Node, depth: int) -> Any:
        if depth > MAX_DEPTH and self._depth_checked:
            mark = node.start_mark
            raise LoadError(f"document nests deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1)
        if isinstance(node, ScalarNode):
            return _scalar(node, _CONSTRUCTOR)
        built = self._built.get(id(node))
        if built is not None:
            return built
        if isinstance(node, SequenceNode):
            items: list[Any] = []
            self._built[id(node)] = items
            items.extend(self._build(item, depth + 1) for item in node.value)
            return items
        mapping: dict[str, Any] = {}
        self._built[id(node)] = mapping
        merges: list[Node] = []
        seen: dict[str, Node] = {}
        for key_node, value_node in node.value:
            if depth + 1 > MAX_DEPTH and self._depth_checked:
                mark = key_node.start_mark
                raise LoadError(f"document nests deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1)
            if key_node.tag == _MERGE:
                merges.append(value_node)
                continue
            key = _key_text(key_node) if isinstance(key_node, ScalarNode) else str(self._build(key_node, depth + 1))
            first = seen.get(key)
            if first is not None:
                mark = key_node.start_mark
                self.duplicates.append(
                    (
                        f'duplicate key "{key}" (first defined at line {first.start_mark.line + 1}); '
                        "Kubernetes rejects it: mapping key already defined",
                        mark.line + 1,
                        mark.column + 1,
                    )
                )
            seen[key] = key_node
            mapping[key] = self._build(value_node, depth + 1)
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            inner = depth + 2 if isinstance(merge, SequenceNode) else depth + 1
            for source in sources:
                merged = self._build(source, inner)
                if isinstance(merged, dict):
                    for key, value in merged.items():
                        mapping.setdefault(key, value)
        return mapping


def reference_child(node: Node, step: Any) -> tuple[Node | None, Node] | None:
    """``locate``'s step before issue #19's parse work, verbatim but for its name."""
    if isinstance(node, MappingNode) and isinstance(step, str):
        found = None
        for key, value in node.value:
            if key.tag == _MERGE:
                continue
            if isinstance(key, ScalarNode) and _key_text(key) == step:
                found = (key, value)
        if found is not None:
            return found
        for key, value in node.value:
            if key.tag == _MERGE:
                sources = value.value if isinstance(value, SequenceNode) else [value]
                for source in sources:
                    hit = reference_child(source, step)
                    if hit is not None:
                        return hit
        return None
    if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        return None, node.value[step]
    return None


def paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 300) -> list[tuple[Any, ...]]:
    """Every path into the value, and one step past each (a missing key or index), breadth first."""
    out: list[tuple[Any, ...]] = []
    queue, seen = [(value, prefix)], set()
    while queue and len(out) < limit:
        current, path = queue.pop(0)
        out.append(path)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, dict):
            out.append((*path, "missing"))
            queue.extend((child, (*path, key)) for key, child in current.items())
        elif isinstance(current, list):
            out.append((*path, len(current)))
            queue.extend((child, (*path, index)) for index, child in enumerate(current))
    return out


def tree(node: Node) -> list[tuple[Any, ...]]:
    """Every node once, in order: what fix.py and locate() read from it."""
    out: list[tuple[Any, ...]] = []
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            out.append(("alias", current.start_mark.index))
            continue
        seen.add(id(current))
        end = current.end_mark.index if current.end_mark is not None else None
        style = getattr(current, "style", None) if isinstance(current, ScalarNode) else current.flow_style
        out.append((type(current).__name__, current.tag, style, current.start_mark.index, end))
        if isinstance(current, MappingNode):
            stack.extend(node for pair in reversed(current.value) for node in reversed(pair))
        elif isinstance(current, SequenceNode):
            stack.extend(reversed(current.value))
        else:
            out.append(("value", current.value))
    return out


def read(text: str, loader_class: Any, builder_class: Any) -> list[Any]:
    out: list[Any] = []
    try:
        for root in yaml.compose_all(text, Loader=loader_class):
            if root is None:
                out.append(None)
                continue
            builder = builder_class() if builder_class is ReferenceBuilder else builder_class("doc.yaml")
            try:
                value = builder.build(root, "*" in text)
            except LoadError as exc:
                result: Any = ("refused", exc.message, exc.line, exc.column)
            else:
                duplicates = [d if isinstance(d, tuple) else (d.message, d.line, d.column) for d in builder.duplicates]
                result = (repr(value), duplicates)  # types too: 1, 1.0 and True; NaN as nan
            out.append((tree(root), result))
    except yaml.YAMLError as exc:
        out.append(("syntax", str(exc)))
    except RecursionError:
        out.append("too deep")
    return out


def assert_same(text: str) -> None:
    ours = read(text, loader._Loader, loader._Builder)
    reference = read(text, yaml.CSafeLoader, ReferenceBuilder)
    assert ours == reference, text


def assert_located_the_same(text: str) -> None:
    """Every path of every document is placed where the reference step places it, on the value and
    on the key; a string's characters too."""
    loaded = loader.load_text("doc.yaml", text)
    for document in loaded.documents:
        for path in paths(document.data):
            for on_key in (False, True):
                ours = document.locate(path, on_key)
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(loader, "_child", reference_child)
                    reference = document.locate(path, on_key)
                    reference_in_string = document.locate_in_string(path, 3)
                assert ours == reference, (text, path, on_key)
            assert document.locate_in_string(path, 3) == reference_in_string, (text, path)


FRAGMENTS = [
    "apiVersion: v1\n", "kind: Pod\n", "metadata:\n", "  name: x\n", "  labels:\n", "    app: a\n",
    "spec:\n", "  containers:\n", "  - name: main\n", "    resources:\n", "      limits:\n",
    "        nvidia.com/gpu: ", "- ", "  ", ": ", "? ", "---\n", "...\n", "\n", "{", "}", "[", "]", ", ",
    "&a ", "&b ", "*a", "*b", "<<: *a\n", "<<: [*a, *b]\n", "<<: {x: 1}\n", "!!str ", "!!int ", "!!float ",
    "!!bool ", "!!null ", "!!binary ", "!custom ", "!!merge ", "!!seq ", "!!map ", '"', "'", "|\n", ">-\n",
    "name: x\n", "name: y\n", "yes", "no", "on", "Off", "y", "n", "true", "False", "null", "~", "NULL",
    "010", "0o17", "0x1F", "0b101", "1_000", "+1", "-0", "1.", ".5", "1e3", "1.5e3", "6.02E+23", "12:30",
    "1:20:30.5", "99999999999999999999999", "0x10000000000000000", "1.0e+400", ".inf", "-.Inf", ".nan",
    "2026-01-01", "2026-01-01T10:00:00Z", "10.0.0.1", "3750Gi", "v1.2.3", "=", "<<", "-", "8", "0", "abc",
    "é", "# comment\n", "\t",
]  # fmt: skip

TEXTS = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
@example("a: 1\na: 2\na: 3\n")  # the second duplicate names the one before it
@example("&a {x: 1}: 1\n{x: 1}: 2\n*a : 3\n")  # complex keys, duplicated, one through an alias
@example("- &a {k: v}\n- {<<: *a, k: w, j: *a}\n")
@example("!!int abc\n")
@example("x: !!float 1.5\ny: !!bool yes\nz: !!null ''\n")
def test_the_loader_reads_every_text_as_the_reference_does(text):
    assert_same(text)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
@example("a: 1\na: 2\nb: {c: [x, y]}\n")  # the last duplicate is the one located
@example("base: &a {x: 1, y: 2}\nuse: {<<: *a, y: 3}\nmany: {<<: [*a, {z: 4}], x: 0}\n")
@example("yes: 1\n1e3: 2\n~: 3\n!!str 010: 4\n? [a, b]\n: 5\n")  # keys whose text is not their spelling
def test_every_path_is_located_as_the_reference_locates_it(text):
    assert_located_the_same(text)


@pytest.mark.parametrize("aliases", [False, True])
@pytest.mark.parametrize("shape", ["sequence", "mapping", "flow", "scalar-in-sequence", "scalar-in-mapping"])
def test_the_depth_refusal_is_the_same_at_every_boundary(shape, aliases):
    """At the limit and one past it, in each kind of collection, with and without an alias in the text."""
    tail = " # *" if aliases else ""
    for depth in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1):
        if shape == "sequence":
            text = "".join(" " * i + "-\n" for i in range(depth)) + " " * depth + "- x" + tail + "\n"
        elif shape == "mapping":
            text = "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "k: x" + tail + "\n"
        elif shape == "flow":
            text = "[" * depth + "{a: 1}" + "]" * depth + tail + "\n"
        elif shape == "scalar-in-sequence":
            text = "[" * depth + "1, 2" + "]" * depth + tail + "\n"
        else:
            text = "{a: " * depth + "1" + "}" * depth + tail + "\n"
        assert_same(text)


@pytest.mark.slow
def test_the_repositorys_own_manifests_read_as_the_reference_reads_them():
    texts = [
        path.read_text(encoding="utf-8")
        for folder in ("examples", "tests")
        for path in sorted((REPO / folder).rglob("*"))
        if path.suffix in (".yaml", ".yml", ".json") and path.is_file()
    ]
    assert len(texts) > 40
    for text in texts:
        assert_same(text)
        assert_located_the_same(text)


def test_the_resolver_memo_answers_as_pyyaml_resolver_for_every_spelling():
    """The memo is PyYAML's resolver's answer: asked twice (a miss, then a hit), the same tag."""
    resolver = yaml.resolver.Resolver()
    long_ones = ["1" * 200, "x" * 200, "y" * 129, "0x" + "f" * 127]
    for spelling in [*FRAGMENTS, "", "<<", "yes", "Yes", "YES", "yEs", "0x_1", "-.5e-3", "190_000m", *long_ones]:
        for implicit in ((True, False), (False, True), (False, False), (True, True)):
            for _ in range(2):
                ours = loader._tag(ScalarNode, spelling, implicit)
                assert ours == resolver.resolve(ScalarNode, spelling, implicit), (spelling, implicit)
    for kind in (MappingNode, SequenceNode):
        for implicit in (True, False):
            assert loader._tag(kind, None, implicit) == resolver.resolve(kind, None, implicit)


def test_a_long_value_is_resolved_but_not_remembered():
    """A remembered value stays in memory: a ConfigMap's script must not, for as long as a webhook runs."""
    script = "#!/bin/sh\n" + "echo warming the GPUs up\n" * 2000
    before = loader._plain_tag.cache_info()
    assert loader._tag(ScalarNode, script, (False, True)) == "tag:yaml.org,2002:str"
    assert loader._tag(ScalarNode, "y" * 129, (True, False)) == "tag:yaml.org,2002:str"
    assert loader._plain_tag.cache_info().misses == before.misses  # neither went into the memo
    assert loader._tag(ScalarNode, "y" * 128, (True, False)) == "tag:yaml.org,2002:str"
    assert loader._plain_tag.cache_info().misses + loader._plain_tag.cache_info().hits > (
        before.misses + before.hits
    )  # the longest remembered one did
