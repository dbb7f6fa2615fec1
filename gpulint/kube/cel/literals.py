"""Homogeneous aggregate literals, as the API server's CEL environment requires them.

Kubernetes compiles every expression with ``cel.HomogeneousAggregateLiterals()`` (apiserver pkg/cel/environment
base.go): after the type check, cel-go's validator (checker, homogeneousAggregateLiteralValidator) refuses a list
literal whose elements, or a map literal whose keys or values, are not all of one type (``IsEquivalentType``:
``[1, "a"]``, ``[1, dyn(2)]``, ``{"a": 1, "b": "x"}``), with "expected type 'int' but found 'string'" at the
first element that differs from the first one. Lists inside a call to ``format`` (the strings extension) are
exempt. cel-cpp's checker has no such option, so this reads the types of the checked expression it produced.

gpulint's checker declares some types more loosely than Kubernetes (dyn for a library function's type parameter,
a format library's optional result, or a value derived from them): a type involving dyn is trusted only where
Kubernetes, too, types the element dyn (a ``dyn()`` call, an attribute's value). Otherwise the literal is left
alone: a miss, never a false error.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulint.kube.cel.wire import call_parts, decode, source_positions, varint

# cel.expr.Expr fields
_ID, _CONST, _IDENT, _SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION = 2, 3, 4, 5, 6, 7, 8, 9
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "google.protobuf.Any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}
_UNTRUSTED = ("dyn", "google.protobuf.Any", "*error*", "<type parameter>", "<unknown>")
EXEMPT_FUNCTIONS = frozenset({"format"})  # cel-go ext strings: HomogeneousAggregateLiteralExemptFunctions


def type_name(data: bytes) -> str:
    """A ``cel.expr.Type`` as cel-go's FormatCELType prints it (``int``, ``list(int)``, ``map(string, dyn)``)."""
    for number, _, value in decode(data):
        if number == 1:
            return "dyn"
        if number == 2:
            return "null"
        if number == 3 and isinstance(value, int):
            return _PRIMITIVES.get(value, "<unknown>")
        if number == 4 and isinstance(value, int):
            return f"wrapper({_PRIMITIVES.get(value, '<unknown>')})"
        if number == 5 and isinstance(value, int):
            return _WELL_KNOWN.get(value, "<unknown>")
        if not isinstance(value, bytes):
            return "<unknown>"
        if number == 6:
            element = next((v for n, _, v in decode(value) if n == 1 and isinstance(v, bytes)), b"")
            return f"list({type_name(element)})"
        if number == 7:
            parts = {n: v for n, _, v in decode(value) if isinstance(v, bytes)}
            return f"map({type_name(parts.get(1, b''))}, {type_name(parts.get(2, b''))})"
        if number == 9:
            return value.decode("utf-8", "replace")
        if number == 10:
            return "<type parameter>"
        if number == 11:
            return f"type({type_name(value)})"
        if number == 12:
            return "*error*"
        if number == 14:
            fields = decode(value)
            name = next((v.decode("utf-8", "replace") for n, _, v in fields if n == 1 and isinstance(v, bytes)), "")
            params = [type_name(v) for n, _, v in fields if n == 2 and isinstance(v, bytes)]
            return f"{name}({', '.join(params)})" if params else name
        return "<unknown>"
    return "<unknown>"


@dataclass(frozen=True)
class Mismatch:
    """An element whose type differs from the literal's first: expected, found; ``offset`` where it starts
    (characters into the expression)."""

    node: int
    expected: str
    found: str
    offset: int = 0


def _node_id(expr: bytes) -> int:
    return next((v for n, _, v in decode(expr) if n == _ID and isinstance(v, int)), 0)


def _kind(expr: bytes) -> tuple[int, bytes]:
    for number, wire, value in decode(expr):
        if number != _ID and wire == 2 and isinstance(value, bytes):
            return number, value
    return 0, b""


def _attributes_depth(expr: bytes) -> int:
    """0 for ``device.attributes``, 1 for one domain's map of it, -1 for anything else."""
    kind, body = _kind(expr)
    if kind == _IDENT:
        name = next((v for n, _, v in decode(body) if n == 1 and isinstance(v, bytes)), b"")
        return 0 if name == b"device.attributes" else -1
    if kind == _SELECT:
        fields = decode(body)
        operand = next((v for n, _, v in fields if n == 1 and isinstance(v, bytes)), None)
        if operand is None or (3, 0, 1) in fields:
            return -1
        outer = _attributes_depth(operand)
        if outer == 0:
            return 1
        # the checker names device.attributes as one identifier; a parsed tree selects it from device
        name = next((v for n, _, v in fields if n == 2 and isinstance(v, bytes)), b"")
        return 0 if name == b"attributes" and _is_ident(operand, b"device") else -1
    if kind == _CALL:
        target, function, args = call_parts(body)
        if function == "_[_]" and target is None and len(args) == 2:
            return 1 if _attributes_depth(args[0]) == 0 else -1
    return -1


def _is_ident(expr: bytes, name: bytes) -> bool:
    kind, body = _kind(expr)
    return kind == _IDENT and (1, 2, name) in decode(body)


def _dyn_as_in_kubernetes(expr: bytes) -> bool:
    """An element Kubernetes, too, types dyn: a ``dyn()`` call or an attribute's value (dyn with
    DRAListTypeAttributes, google.protobuf.Any without: unequal to any other element type either way)."""
    kind, body = _kind(expr)
    if kind == _CALL:
        target, function, args = call_parts(body)
        if function == "dyn" and target is None and len(args) == 1:
            return True
        return function == "_[_]" and target is None and len(args) == 2 and _attributes_depth(args[0]) == 1
    if kind == _SELECT:
        fields = decode(body)
        operand = next((v for n, _, v in fields if n == 1 and isinstance(v, bytes)), None)
        return operand is not None and (3, 0, 1) not in fields and _attributes_depth(operand) == 1
    return False


def _trusted(expr: bytes, name: str) -> bool:
    if not any(part in name for part in _UNTRUSTED):
        return True
    return name == "dyn" and _dyn_as_in_kubernetes(expr)


def _unwrapped(name: str) -> str:
    """An optional element's (``[?x]``, ``{?k: v}``) type: the optional's parameter."""
    return name[len("optional_type(") : -1] if name.startswith("optional_type(") and name.endswith(")") else name


def _first_mismatch(elements: list[tuple[bytes, str]]) -> Mismatch | None:
    """Each element against the first, as the validator does, while gpulint's types can be trusted."""
    if len(elements) < 2:
        return None
    first, expected = elements[0]
    for expr, found in elements[1:]:
        if found == expected:
            continue
        if _trusted(first, expected) and _trusted(expr, found):
            return Mismatch(_node_id(expr), expected, found)
        return None
    return None


@dataclass
class _Walk:
    types: dict[int, str]
    found: list[Mismatch]

    def visit(self, expr: bytes, exempt: bool) -> None:
        kind, body = _kind(expr)
        if kind == _CALL:
            target, function, args = call_parts(body)
            exempt = exempt or function in EXEMPT_FUNCTIONS
            for child in ([target] if target is not None else []) + args:
                self.visit(child, exempt)
            return
        if kind == _LIST:
            fields = decode(body)
            items = [v for n, _, v in fields if n == 1 and isinstance(v, bytes)]
            optional: set[int] = set()  # optional_indices, packed or not
            for n, _, v in fields:
                if n == 2:
                    optional.update([v] if isinstance(v, int) else _packed(v))
            if not exempt:
                typed = [(item, self._type(item, i in optional)) for i, item in enumerate(items)]
                self._add(_first_mismatch(typed))
            for item in items:
                self.visit(item, exempt)
            return
        if kind == _STRUCT:
            fields = decode(body)
            entries = [decode(v) for n, _, v in fields if n == 2 and isinstance(v, bytes)]
            keys: list[tuple[bytes, str]] = []
            values: list[tuple[bytes, str]] = []
            for entry in entries:
                optional_entry = (5, 0, 1) in entry
                for n, _, v in entry:
                    if n == 3 and isinstance(v, bytes):
                        keys.append((v, self._type(v, False)))
                    elif n == 4 and isinstance(v, bytes):
                        values.append((v, self._type(v, optional_entry)))
            if not exempt and not any(n == 1 for n, _, _ in fields):  # a map, not a message
                for group in (keys, values):
                    self._add_all(group)
            for expr_, _ in keys + values:
                self.visit(expr_, exempt)
            return
        if kind == _SELECT:
            operand = next((v for n, _, v in decode(body) if n == 1 and isinstance(v, bytes)), None)
            if operand is not None:
                self.visit(operand, exempt)
            return
        if kind == _COMPREHENSION:
            for n, _, v in decode(body):
                if n in (2, 4, 5, 6, 7) and isinstance(v, bytes):
                    self.visit(v, exempt)

    def _type(self, expr: bytes, optional: bool) -> str:
        name = self.types.get(_node_id(expr), "<unknown>")
        return _unwrapped(name) if optional else name

    def _add(self, mismatch: Mismatch | None) -> None:
        if mismatch is not None:
            self.found.append(mismatch)

    def _add_all(self, group: list[tuple[bytes, str]]) -> None:
        """A map's keys (or values): every entry that differs from the first is reported (no early stop)."""
        if len(group) < 2:
            return
        first, expected = group[0]
        for expr, found in group[1:]:
            if found == expected:
                continue
            if not (_trusted(first, expected) and _trusted(expr, found)):
                return
            self.found.append(Mismatch(_node_id(expr), expected, found))


def _packed(data: bytes) -> list[int]:
    out, i = [], 0
    while i < len(data):
        value, i = varint(data, i)
        out.append(value)
    return out


def mismatches(serialized: bytes) -> list[Mismatch]:
    """The literals of a checked expression (``Expression.serialize()``: an Any around a CheckedExpr) that
    cel.HomogeneousAggregateLiterals refuses, as far as gpulint's types show it."""
    outer = decode(serialized)
    checked = next((v for n, _, v in outer if n == 2 and isinstance(v, bytes)), serialized)
    fields = decode(checked)
    root = next((v for n, _, v in fields if n == 4 and isinstance(v, bytes)), None)
    if root is None:
        return []
    types: dict[int, str] = {}
    for number, _, value in fields:
        if number == 3 and isinstance(value, bytes):
            entry = {n: v for n, _, v in decode(value)}
            key, data = entry.get(1), entry.get(2)
            if isinstance(key, int) and isinstance(data, bytes):
                types[key] = type_name(data)
    walk = _Walk(types, [])
    walk.visit(root, False)
    positions = source_positions(fields, 5)  # CheckedExpr.source_info
    return sorted(
        (Mismatch(m.node, m.expected, m.found, positions.get(m.node, 0)) for m in walk.found), key=lambda m: m.offset
    )
