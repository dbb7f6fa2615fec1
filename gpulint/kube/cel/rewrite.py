"""The format library's optional results, built from cel-cpp's own optionals.

The binding cannot return an optional from a Python function, so the parsed expression (a
``cel.expr.ParsedExpr`` in an ``Any``, as the binding serializes it) is rewritten before it is
planned: ``f.validate(s)`` becomes ``optional.ofNonZeroValue(<validate>(f, s))`` (none when the
format's validator finds no problem, else ``optional.of`` the problems: format.go formatValidate)
and ``format.named(n)`` becomes ``optional.ofNonZeroValue(<named>(n))`` (the format, or "" for an
unknown name: none). Each operand is evaluated once, as upstream. The root is wrapped so that an
optional result reaches Python as a tagged list (``[OPTIONAL_TAG]``: none; ``[OPTIONAL_TAG, v]``).

Only the program this engine runs is rewritten: the type check and the cost estimate use the
expression as the API server compiles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpulint.kube.cel.wire import Field, decode, encode

VALIDATE = "@kubernetes.format.validate"  # not a CEL identifier: no expression can name them
NAMED = "@kubernetes.format.named"
OPTIONAL_TAG = "\ue000o:"

# cel.expr.Expr fields, and the fields of its kinds that hold expressions
_ID, _CONST, _IDENT, _SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION = 2, 3, 4, 5, 6, 7, 8, 9
_NESTED = {_SELECT: (1,), _CALL: (1, 3), _LIST: (1,), _STRUCT: (2,), _COMPREHENSION: (2, 4, 5, 6, 7)}
_ENTRY_EXPRESSIONS = (3, 4)  # CreateStruct.Entry map_key, value


def _message(*fields: tuple[int, int | bytes | str]) -> bytes:
    """A message of length-delimited (bytes, str) and varint (int) fields."""
    out: list[Field] = []
    for number, value in fields:
        if isinstance(value, int):
            out.append((number, 0, value))
        else:
            out.append((number, 2, value.encode() if isinstance(value, str) else value))
    return encode(out)


@dataclass
class _Builder:
    """New expression nodes, with ids past the parser's."""

    next_id: int
    changed: bool = field(default=False)

    def node(self, kind: int, body: bytes) -> bytes:
        self.next_id += 1
        return _message((_ID, self.next_id), (kind, body))

    def ident(self, name: str) -> bytes:
        return self.node(_IDENT, _message((1, name)))

    def string(self, text: str) -> bytes:
        return self.node(_CONST, _message((6, text)))

    def false(self) -> bytes:
        return self.node(_CONST, _message((2, 0)))

    def call(self, function: str, *args: bytes, target: bytes | None = None) -> bytes:
        parts: list[tuple[int, int | bytes | str]] = [(1, target)] if target is not None else []
        parts += [(2, function), *((3, arg) for arg in args)]
        return self.node(_CALL, _message(*parts))

    def items(self, *elements: bytes) -> bytes:
        return self.node(_LIST, _message(*((1, element) for element in elements)))

    def non_zero(self, value: bytes) -> bytes:
        return self.call("ofNonZeroValue", value, target=self.ident("optional"))

    def bind(self, name: str, value: bytes, result: bytes) -> bytes:
        """cel.bind(name, value, result), as the macro expands it."""
        body = _message(
            (1, "#unused"),
            (2, self.items()),
            (3, name),
            (4, value),
            (5, self.false()),
            (6, self.ident(name)),
            (7, result),
        )
        return self.node(_COMPREHENSION, body)


def _max_id(data: bytes) -> int:
    best = 0
    for number, wire, value in decode(data):
        if number == _ID and wire == 0 and isinstance(value, int):
            best = max(best, value)
        elif isinstance(value, bytes) and wire == 2 and number in _NESTED:
            best = max(best, _max_id_in(number, value))
    return best


def _max_id_in(kind: int, body: bytes) -> int:
    best = 0
    for number, wire, value in decode(body):
        if wire != 2 or not isinstance(value, bytes):
            continue
        if kind == _STRUCT and number == 2:
            best = max(
                [best, *(_max_id(v) for n, w, v in decode(value) if n in _ENTRY_EXPRESSIONS and isinstance(v, bytes))]
            )
        elif number in _NESTED[kind]:
            best = max(best, _max_id(value))
    return best


def _call_parts(body: bytes) -> tuple[bytes | None, str, list[bytes]]:
    target, function, args = None, "", []
    for number, _, value in decode(body):
        if isinstance(value, bytes):
            if number == 1:
                target = value
            elif number == 2:
                function = value.decode()
            elif number == 3:
                args.append(value)
    return target, function, args


def _ident_name(expr: bytes) -> str | None:
    for number, _, value in decode(expr):
        if number == _IDENT and isinstance(value, bytes):
            return next((v.decode() for n, _, v in decode(value) if n == 1 and isinstance(v, bytes)), "")
    return None


def _rewrite(expr: bytes, build: _Builder) -> bytes:
    fields = decode(expr)
    out: list[Field] = []
    for number, wire, value in fields:
        if wire == 2 and isinstance(value, bytes) and number in _NESTED:
            value = _rewrite_kind(number, value, build)
        out.append((number, wire, value))
    rebuilt = encode(out)
    call = next((v for n, w, v in out if n == _CALL and isinstance(v, bytes)), None)
    if call is None:
        return rebuilt
    target, function, args = _call_parts(call)
    if function == "validate" and target is not None and len(args) == 1:
        build.changed = True
        return build.non_zero(build.call(VALIDATE, target, args[0]))
    if function == "named" and target is not None and _ident_name(target) == "format" and len(args) == 1:
        build.changed = True
        return build.non_zero(build.call(NAMED, args[0]))
    return rebuilt


def _rewrite_kind(kind: int, body: bytes, build: _Builder) -> bytes:
    out: list[Field] = []
    for number, wire, value in decode(body):
        if wire == 2 and isinstance(value, bytes):
            if kind == _STRUCT and number == 2:
                value = encode(
                    [
                        (n, w, _rewrite(v, build) if n in _ENTRY_EXPRESSIONS and isinstance(v, bytes) else v)
                        for n, w, v in decode(value)
                    ]
                )
            elif number in _NESTED[kind]:
                value = _rewrite(value, build)
        out.append((number, wire, value))
    return encode(out)


def _unwrapped(root: bytes, build: _Builder) -> bytes:
    """cel.bind(@r, root, type(@r) == optional_type ? (@r.hasValue() ? [tag, @r.value()] : [tag]) : @r)."""
    result = "@r"
    is_optional = build.call("_==_", build.call("type", build.ident(result)), build.ident("optional_type"))
    present = build.items(build.string(OPTIONAL_TAG), build.call("value", target=build.ident(result)))
    optional = build.call(
        "_?_:_", build.call("hasValue", target=build.ident(result)), present, build.items(build.string(OPTIONAL_TAG))
    )
    return build.bind(result, root, build.call("_?_:_", is_optional, optional, build.ident(result)))


def rewrite(serialized: bytes) -> bytes | None:
    """The serialized parsed expression with the format library's calls rewritten; None: none to rewrite."""
    outer = decode(serialized)  # google.protobuf.Any: type_url, value
    parsed = next((v for n, w, v in outer if n == 2 and isinstance(v, bytes)), None)
    if parsed is None:
        return None
    fields = decode(parsed)  # cel.expr.ParsedExpr: expr (2), source_info (3)
    root = next((v for n, w, v in fields if n == 2 and isinstance(v, bytes)), None)
    if root is None:
        return None
    build = _Builder(_max_id(root))
    rewritten = _rewrite(root, build)
    if not build.changed:
        return None
    rewritten = _unwrapped(rewritten, build)
    parsed = encode([(n, w, rewritten if n == 2 else v) for n, w, v in fields])
    return encode([(n, w, parsed if n == 2 else v) for n, w, v in outer])
