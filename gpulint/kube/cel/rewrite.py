"""The program the engine runs, rewritten where cel-cpp's runtime differs from cel-go's as Kubernetes
configures it: the format library's optional results (``rewrite``), and Kubernetes' opaque types, cel.bind
and int(bool) (``guard``, below); and the conversions of constants cel-go evaluates when it plans a program
(``constant_conversions``).

The format library's optional results, built from cel-cpp's own optionals.

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

from collections.abc import Callable
from dataclasses import dataclass, field

from gpulint.kube.cel.wire import Field, call_parts, decode, encode, source_positions

VALIDATE = "@kubernetes.format.validate"  # not a CEL identifier: no expression can name them
NAMED = "@kubernetes.format.named"
OPTIONAL_TAG = "\ue000o:"
BIND_VARIABLE = "#unused"  # cel.bind's iteration variable (cel-cpp plans that comprehension as a lazy binding)
LET_VARIABLE = "@let"  # the same comprehension under another name: the value bound at once

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

    def integer(self, number: int) -> bytes:
        return self.node(_CONST, _message((3, number)))

    def call(self, function: str, *args: bytes, target: bytes | None = None) -> bytes:
        parts: list[tuple[int, int | bytes | str]] = [(1, target)] if target is not None else []
        parts += [(2, function), *((3, arg) for arg in args)]
        return self.node(_CALL, _message(*parts))

    def items(self, *elements: bytes) -> bytes:
        return self.node(_LIST, _message(*((1, element) for element in elements)))

    def non_zero(self, value: bytes) -> bytes:
        return self.call("ofNonZeroValue", value, target=self.ident("optional"))

    def bind(self, name: str, value: bytes, result: bytes, iterating: str = BIND_VARIABLE) -> bytes:
        """cel.bind(name, value, result), as the macro expands it: a comprehension over no items whose
        accumulator is ``name``; ``iterating`` names its (unused) iteration variable."""
        body = _message(
            (1, iterating),
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


def _ident_name(expr: bytes) -> str | None:
    for number, _, value in decode(expr):
        if number == _IDENT and isinstance(value, bytes):
            return next((v.decode() for n, _, v in decode(value) if n == 1 and isinstance(v, bytes)), "")
    return None


Visit = Callable[[bytes, list[Field], "_Builder"], bytes]


def _rewrite(expr: bytes, build: _Builder, visit: Visit | None = None) -> bytes:
    """The expression with its children rewritten first, then itself by ``visit`` (the format library's by
    default): each node is visited once, and the nodes a visit builds are not visited again."""
    fields = decode(expr)
    out: list[Field] = []
    for number, wire, value in fields:
        if wire == 2 and isinstance(value, bytes) and number in _NESTED:
            value = _rewrite_kind(number, value, build, visit)
        out.append((number, wire, value))
    return (visit or _format_call)(encode(out), out, build)


def _format_call(rebuilt: bytes, out: list[Field], build: _Builder) -> bytes:
    call = next((v for n, w, v in out if n == _CALL and isinstance(v, bytes)), None)
    if call is None:
        return rebuilt
    target, function, args = call_parts(call)
    if function == "validate" and target is not None and len(args) == 1:
        build.changed = True
        return build.non_zero(build.call(VALIDATE, target, args[0]))
    if function == "named" and target is not None and _ident_name(target) == "format" and len(args) == 1:
        build.changed = True
        return build.non_zero(build.call(NAMED, args[0]))
    return rebuilt


def _rewrite_kind(kind: int, body: bytes, build: _Builder, visit: Visit | None) -> bytes:
    out: list[Field] = []
    for number, wire, value in decode(body):
        if wire == 2 and isinstance(value, bytes):
            if kind == _STRUCT and number == 2:
                value = encode(
                    [
                        (n, w, _rewrite(v, build, visit) if n in _ENTRY_EXPRESSIONS and isinstance(v, bytes) else v)
                        for n, w, v in decode(value)
                    ]
                )
            elif number in _NESTED[kind]:
                value = _rewrite(value, build, visit)
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
    outer, fields, root = _parts(serialized)
    if root is None:
        return None
    build = _Builder(_max_id(root))
    rewritten = _rewrite(root, build)
    if not build.changed:
        return None
    return _wrapped(outer, fields, _unwrapped(rewritten, build))


def _parts(serialized: bytes) -> tuple[list[Field], list[Field], bytes | None]:
    """A serialized parsed expression's parts: the google.protobuf.Any around it (type_url, value), the
    cel.expr.ParsedExpr's fields (expr 2, source_info 3) and its root expression (None: none)."""
    outer = decode(serialized)
    parsed = next((v for n, w, v in outer if n == 2 and isinstance(v, bytes)), None)
    fields = decode(parsed) if parsed is not None else []
    return outer, fields, next((v for n, w, v in fields if n == 2 and isinstance(v, bytes)), None)


# --------------------------------------------------------------------------- Kubernetes' opaque types

# Quantities, versions and named formats travel through the evaluating program as tagged strings (the
# binding has no opaque values); Kubernetes' are types of their own (apiserver pkg/cel: Quantity, Semver,
# Format), with no overload of what strings have. The guard rewrite makes a tagged version fail where
# Kubernetes' Semver has no overload, and compares as cel-go's Equal does.
OPAQUE_TAG = "\ue000"  # every tagged value starts with it
VERSION_TAG = "\ue000v:"
QUANTITY_TAG = "\ue000q:"
# A Quantity's tag ends with its identity: Kubernetes' Quantity is a struct of one pointer, which a Go map (a map
# literal's keys, and lookups in it) hashes and compares; each quantity(), add() or sub() is a new one, a device's
# capacity is one per entry, a value passed on (a variable, a list) keeps it. Equality ignores it.
IDENTITY = "#"
IN_LIST = "@kubernetes.in"  # ([item, container]) -> cel-go's in: a list's Contains (item.Equal), a map's Find
# ([k1, u1, k2, u2, ...], each u whether its key is a uint) -> which entries of a map literal cel-go's Go map keeps:
# the last of each key, keys equal only when of one kind and one value (1, 1u, 1.0 and true are four keys)
MAP_KEEP = "@kubernetes.map_keep"
MAP_LET = "@map"  # the variable a map literal whose keys may repeat binds its keys and values to
QUALIFIER_CHECKS = [  # attributes.go newQualifier: no qualifier of these types, an index by one fails
    (QUANTITY_TAG, "invalid qualifier type: cel.Quantity"),
    (VERSION_TAG, "invalid qualifier type: cel.Semver"),
]
NO_OVERLOAD = "@kubernetes.no_overload"  # (message) -> raises it
EQUAL = "@kubernetes.equal"  # ([a, b]) -> cel-go's Equal(a, b) == true, raising its error
NOT_EQUAL = "@kubernetes.not_equal"  # ([a, b]) -> cel-go's Equal(a, b) != true (evalNe: never an error)
NOT_FALSE = "@kubernetes.not_false"  # ([a, b]) -> cel-go's Equal(a, b) != false (an error counts as equal)
# ([a, b, a == b in cel-cpp, whether values may be tagged]) -> NOT_FALSE's answer where no map keys by an int or a
# bool (which a Python dict merges: 1, 1u and true), else cel-cpp's where it is exact, else no verdict
NOT_FALSE_DEEP = "@kubernetes.not_false_deep"
UNHASHABLE = "internal error: runtime error: hash of unhashable type cel.Semver"
# (message) -> raises it and records it as the whole evaluation's error: cel-go's hash of a Semver panics, and
# Eval recovers the panic as its result, whatever ||, && or a comprehension around it would have absorbed
PANIC = "@kubernetes.panic"
# what a version may be an operand of as it is (its own library, equality and membership handled below,
# the logical operators, which fail on a string as on a Semver, indexing, which fails on both)
VERSION_OPERAND = frozenset(
    {
        "_&&_",
        "_||_",
        "!_",
        "_?_:_",
        "@not_strictly_false",
        "_[_]",
        "_==_",
        "_!=_",
        "@in",
        "type",
        "dyn",
        "compareTo",
        "isGreaterThan",
        "isLessThan",
        "major",
        "minor",
        "patch",
        "includes",
        "of",
        "ofNonZeroValue",
        "none",
        "hasValue",
        "value",
        "orValue",
        "or",
    }
)
SCALARS = ("string", "int", "uint", "double", "bool", "bytes")  # the kinds without fields (cel-go has() is false)
MAP_LOOKUPS = ("string", "int", "uint", "double", "bool")  # the kinds of key cel-cpp looks up in a map
NAMESPACES = frozenset({"optional", "strings", "math", "format", "sets", "lists", "base64", "cel"})
# cel-go folds a type conversion of a constant when it plans the program (interpreter decOptimize)
CONVERSIONS = frozenset({"int", "uint", "double", "string", "bytes", "bool", "dyn", "type", "duration", "timestamp"})
_PRIMITIVE_CONSTANTS = (2, 3, 4, 5, 6)  # cel.expr.Constant bool, int64, uint64, double, string
_PRIMITIVE_CONVERSIONS = frozenset({"int", "uint", "double", "string", "bool"})


def _kind(expr: bytes) -> tuple[int, bytes]:
    """The node's kind (a cel.expr.Expr field number) and its body."""
    for number, wire, value in decode(expr):
        if number != _ID and wire == 2 and isinstance(value, bytes):
            return number, value
    return 0, b""


def _constant(expr: bytes, primitive: bool = False) -> bool:
    """Whether cel-go plans the node as a constant (a literal, a list or map literal of constants, a type
    conversion of a constant); ``primitive``: a constant bool, int, uint, double or string."""
    kind, body = _kind(expr)
    if kind == _CONST:
        return not primitive or any(n in _PRIMITIVE_CONSTANTS for n, _, _ in decode(body))
    if kind == _CALL:
        target, function, args = call_parts(body)
        if target is not None or len(args) != 1 or function not in CONVERSIONS:
            return False
        if primitive and function not in _PRIMITIVE_CONVERSIONS:
            return function == "dyn" and _constant(args[0], primitive=True)
        return _constant(args[0])
    if primitive:
        return False
    if kind == _LIST:
        return all(_constant(v) for n, _, v in decode(body) if n == 1 and isinstance(v, bytes))
    if kind == _STRUCT:
        fields = decode(body)
        if any(n == 1 for n, _, _ in fields):  # a message, not a map
            return False
        entries = [decode(v) for n, _, v in fields if n == 2 and isinstance(v, bytes)]
        return all(
            _constant(v) for entry in entries for n, _, v in entry if n in _ENTRY_EXPRESSIONS and isinstance(v, bytes)
        )
    return False


# functions whose result is never a quantity, a version or a format (a bool, a number, a string, a type), whatever
# their operands: an operand that is such a call needs no guard (most selectors compare such results)
PLAIN_RESULTS = frozenset(
    {
        "_==_",
        "_!=_",
        "_<_",
        "_<=_",
        "_>_",
        "_>=_",
        "_&&_",
        "_||_",
        "!_",
        "@in",
        "@not_strictly_false",
        "size",
        "type",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "bytes",
        "compareTo",
        "isGreaterThan",
        "isLessThan",
        "major",
        "minor",
        "patch",
        "startsWith",
        "endsWith",
        "contains",
        "matches",
        "includes",
        "hasValue",
        "isQuantity",
        "isSemver",
        "isInteger",
        "asInteger",
        "asApproximateFloat",
        "sign",
    }
)
DEVICE_PLAIN_FIELDS = (b"driver", b"allowMultipleAllocations")  # a device's string and bool fields


def _plain(expr: bytes) -> bool:
    """Whether the node's value is never a tagged (opaque) value: a call of PLAIN_RESULTS, a presence test, or
    a device's driver or allowMultipleAllocations."""
    kind, body = _kind(expr)
    if kind == _CALL:
        return call_parts(body)[1] in PLAIN_RESULTS
    if kind == _SELECT:
        fields = decode(body)
        if (3, 0, 1) in fields:  # has(): a bool
            return True
        operand = next((v for n, _, v in fields if n == 1 and isinstance(v, bytes)), b"")
        name = next((v for n, _, v in fields if n == 2 and isinstance(v, bytes)), b"")
        return name in DEVICE_PLAIN_FIELDS and _ident_name(operand) == "device"
    return False


def _hashed_set(expr: bytes) -> bool:
    """A non-empty list of primitive constants: cel-go's ``in`` looks the value up in a Go map of them
    (maybeOptimizeSetMembership), where a Semver cannot be hashed."""
    kind, body = _kind(expr)
    elements = [v for n, _, v in decode(body) if n == 1 and isinstance(v, bytes)] if kind == _LIST else []
    return bool(elements) and all(_constant(element, primitive=True) for element in elements)


def _empty_list(expr: bytes) -> bool:
    """An empty list literal (not dyn([]), which cel-go plans as a call)."""
    kind, body = _kind(expr)
    return kind == _LIST and not any(n == 1 for n, _, _ in decode(body))


def _map_literal(expr: bytes) -> bool:
    """A map literal, or one the guard builds from MAP_KEEP (its children are rewritten before it)."""
    kind, body = _kind(expr)
    if kind == _COMPREHENSION:
        accumulator = next((v for n, _, v in decode(body) if n == 3 and isinstance(v, bytes)), b"")
        return accumulator.startswith(MAP_LET.encode())
    return kind == _STRUCT and not any(n == 1 for n, _, _ in decode(body))


def _empty_map(expr: bytes) -> bool:
    kind, body = _kind(expr)
    return kind == _STRUCT and not any(n == 2 for n, _, _ in decode(body))


@dataclass
class _Guards(_Builder):
    versions: bool = True  # values may be versions (a device, or an expression that calls semver())
    quantities: bool = False  # values may be quantities (a device, or an expression that calls quantity())
    # maps of keys of several kinds may be built (a map literal): lists and maps are compared in cel-cpp, where a
    # Python dict would merge 1 and true; without, no map holds such keys (data maps key by strings)
    maps: bool = True
    # how many levels of lists and maps the values the expression builds may nest (value_depth): lists and maps
    # are compared in cel-cpp that far down
    depth: int = 1

    def name(self) -> str:
        return f"@g{self.next_id}"

    def let(self, name: str, value: bytes, result: bytes) -> bytes:
        """``result`` with ``name`` bound to ``value``: cel.bind's comprehension, except for its iteration
        variable, which makes cel-cpp evaluate the value at once (the lazy binding it plans for cel.bind's
        own may read a value left stale by an exists() that stopped early)."""
        return self.bind(name, value, result, iterating=LET_VARIABLE)

    def tagged(self, name: str, tag: str) -> bytes:
        """type(name) == string && name.startsWith(tag)"""
        is_string = self.is_type(name, "string")
        return self.call("_&&_", is_string, self.call("startsWith", self.string(tag), target=self.ident(name)))

    def scalar(self, name: str) -> bytes:
        """type(name) in [string, int, uint, double, bool, bytes] (a tagged value is a string)"""
        kinds = self.items(*(self.ident(kind) for kind in SCALARS))
        return self.call("@in", self.call("type", self.ident(name)), kinds)

    def keyed(self, name: str) -> bytes:
        """type(name) in [string, int, uint, double, bool]: the kinds cel-cpp looks up in a map (cel-go's Find
        finds no other in the maps gpulint builds)"""
        kinds = self.items(*(self.ident(kind) for kind in MAP_LOOKUPS))
        return self.call("@in", self.call("type", self.ident(name)), kinds)

    def is_type(self, name: str, kind: str) -> bytes:
        return self.call("_==_", self.call("type", self.ident(name)), self.ident(kind))

    def fails(self, message: str) -> bytes:
        return self.call(PANIC if message == UNHASHABLE else NO_OVERLOAD, self.string(message))

    def checked(self, operand: bytes, checks: list[tuple[str, str]]) -> bytes:
        """The operand, bound once, or the error of the first check it fails: each check a (what, error),
        ``what`` a tag (a tagged value) or "bool" (a bool)."""
        name = self.name()
        result = self.ident(name)
        for what, message in reversed(checks):
            condition = self.is_type(name, "bool") if what == "bool" else self.tagged(name, what)
            result = self.call("_?_:_", condition, self.fails(message), result)
        self.changed = True
        return self.let(name, operand, result)

    def equality(self, function: str, left: bytes, right: bytes) -> bytes:
        """a == b (or a != b) as cel-go's Equal: by EQUAL (NOT_EQUAL) when a is a tagged value (which may fail),
        by ``container_equal`` when a is a map or a list (never an error: an element's error counts as
        equal), natively otherwise. Each operand is bound once."""
        a = self.name()
        b = a + "b"
        helper = EQUAL if function == "_==_" else NOT_EQUAL
        exact = self.call(helper, self.items(self.ident(a), self.ident(b)))
        native = self.call(function, self.ident(a), self.ident(b))
        self.changed = True
        if not self.maps:  # lists and maps by EQUAL too: smaller programs (no map keys that Python merges)
            slow = self.call("_||_", self.container(a), self.tagged(a, OPAQUE_TAG))
            return self.let(a, left, self.let(b, right, self.call("_?_:_", slow, exact, native)))
        deep = self.container_equal(a, b, self.depth)
        if function == "_!=_":
            deep = self.call("!_", deep)
        result = self.call("_?_:_", self.tagged(a, OPAQUE_TAG), exact, native)
        result = self.call("_?_:_", self.container(a), deep, result)
        self.changed = True
        return self.let(a, left, self.let(b, right, result))

    def container(self, name: str) -> bytes:
        """type(name) == list || type(name) == map"""
        return self.call("_||_", self.is_type(name, "list"), self.is_type(name, "map"))

    def container_equal(self, a: str, b: str, depth: int) -> bytes:
        """baseList.Equal or baseMap.Equal of ``a`` (a list or a map) and ``b``, in cel-cpp's own values (which keep
        the keys 1, 1u and true apart, as cel-go's maps do; a Python dict merges them): ``b`` of ``a``'s kind and
        size, each element of ``a`` in order (a list) or each key's value (a map, the key found in ``b`` as Find
        finds it) not unequal to ``b``'s (an error counts as equal), lists and maps among them compared so
        ``depth`` - 1 levels further down (``value_equal``). One loop serves both kinds, so that the program grows
        with the depth, not 2^depth, and nests as little as it can (protobuf parses 100 levels): it carries the
        index, -1 once unequal."""
        item, index, x, y = a + "i", a + "a", a + "x", a + "y"
        mine = self.call(
            "_?_:_", self.is_type(a, "map"), self.call("_[_]", self.ident(a), self.ident(item)), self.ident(item)
        )
        theirs = self.call(
            "_?_:_",
            self.is_type(a, "map"),
            self.call("_[_]", self.ident(b), self.ident(item)),
            self.call("_[_]", self.ident(b), self.ident(index)),
        )
        found = self.call(
            "_||_", self.call("!_", self.is_type(a, "map")), self.call("@in", self.ident(item), self.ident(b))
        )
        pair = self.call("_&&_", found, self.let(x, mine, self.let(y, theirs, self.value_equal(x, y, depth - 1))))
        step = self.call("_?_:_", pair, self.call("_+_", self.ident(index), self.integer(1)), self.integer(-1))
        every = _message(
            (1, item),
            (2, self.ident(a)),
            (3, index),
            (4, self.integer(0)),
            (5, self.call("_>=_", self.ident(index), self.integer(0))),
            (6, step),
            (7, self.call("_>=_", self.ident(index), self.integer(0))),
        )
        kinds = self.call("_==_", self.call("type", self.ident(b)), self.call("type", self.ident(a)))
        sizes = self.call("_==_", self.call("size", self.ident(a)), self.call("size", self.ident(b)))
        return self.call("_&&_", self.call("_&&_", kinds, sizes), self.node(_COMPREHENSION, every))

    def value_equal(self, x: str, y: str, depth: int) -> bytes:
        """cel-go's Equal(x, y) != false: lists and maps compared in cel-cpp ``depth`` levels down
        (``container_equal``), deeper and the rest by NOT_FALSE_DEEP, which takes cel-cpp's own answer where no
        tagged value is involved."""
        native = self.call("_==_", self.ident(x), self.ident(y))
        tagged = self.node(_CONST, _message((2, int(self.versions or self.quantities))))
        leaf = self.call(NOT_FALSE_DEEP, self.items(self.ident(x), self.ident(y), native, tagged))
        if depth <= 0:
            return leaf
        return self.call("_?_:_", self.container(x), self.container_equal(x, y, depth), leaf)

    def contains(self, item: str, inside: str, listed: bytes) -> bytes:
        """cel-go's ``item in inside`` for a list ``inside``: its Contains asks ``item.Equal(element)``, True alone
        finding it; a list or a map ``item`` is compared in cel-cpp (``container_equal``), the others by
        ``listed``."""
        element, accumulator = item + "l", item + "r"
        each = self.call("_||_", self.ident(accumulator), self.container_equal(item, element, self.depth))
        any_equal = _message(
            (1, element),
            (2, self.ident(inside)),
            (3, accumulator),
            (4, self.false()),
            (5, self.call("!_", self.ident(accumulator))),
            (6, each),
            (7, self.ident(accumulator)),
        )
        return self.call("_?_:_", self.container(item), self.node(_COMPREHENSION, any_equal), listed)


def _operand_checks(function: str, build: _Guards) -> list[tuple[str, str]]:
    checks = []
    if build.versions:
        shown = function if function.startswith("_") else f"{function}(kubernetes.Semver)"
        checks.append((VERSION_TAG, f"no such overload: {shown}"))
    if function == "int":  # cel-cpp converts a bool to an int; cel-go has no such overload
        checks.append(("bool", "no such overload: int(bool)"))
    return checks


def _guard_in(rebuilt: bytes, item: bytes, container: bytes, build: _Guards) -> bytes:
    """``item in container`` as cel-go plans it: false for ``[]`` (item never read); a lookup in the Go map
    of a list of constants (a hashed set) or of a map literal, where a Semver cannot be hashed (unless the map
    is empty: refValMapAccessor.Find hashes nothing there) and a value of no kind cel-cpp looks up (a null, a
    list or a map, looked up by its pointer) is never found."""
    if _empty_list(container):
        build.changed = True
        return build.false()
    if _map_literal(container) and not _constant(item, primitive=True):
        name = build.name()
        looked_up = build.call(
            "_?_:_", build.keyed(name), build.call("@in", build.ident(name), container), build.false()
        )
        if build.versions and not _empty_map(container):
            looked_up = build.call("_?_:_", build.tagged(name, VERSION_TAG), build.fails(UNHASHABLE), looked_up)
        build.changed = True
        return build.let(name, item, looked_up)
    if _constant(item, primitive=True) or _plain(item):
        return rebuilt
    opaque = build.versions or build.quantities
    if opaque and _hashed_set(container):
        return build.call("@in", build.checked(item, [(VERSION_TAG, UNHASHABLE)]), container)
    if not (opaque or _constant(item)):
        return rebuilt
    # a map is cel-cpp's own (a Python dict would merge the keys 1 and true): looked up natively, as Find, a null
    # never found; in a list a Quantity equals by value, its identity is not (cel-cpp compares the tags)
    found, inside = build.name(), build.name() + "c"
    listed = (
        build.call(IN_LIST, build.items(build.ident(found), build.ident(inside)))
        if build.quantities
        else build.call("@in", build.ident(found), build.ident(inside))
    )
    if build.maps:  # a list or a map looked up in a list is compared in cel-cpp's values, which keep 1 and true apart
        listed = build.contains(found, inside, listed)
    looked_up = build.call(
        "_?_:_", build.keyed(found), build.call("@in", build.ident(found), build.ident(inside)), build.false()
    )
    build.changed = True
    return build.let(
        found, item, build.let(inside, container, build.call("_?_:_", build.is_type(inside, "map"), looked_up, listed))
    )


def _optional_field(operand: bytes, field_name: bytes, build: _Guards) -> bytes:
    """``operand.?field``: none on a scalar (a Semver too), as cel-go's optional selection on a value without
    fields; cel-cpp has no such overload."""
    name = build.name()
    selected = build.call("_?._", build.ident(name), field_name)
    none = build.call("none", target=build.ident("optional"))
    build.changed = True
    return build.let(name, operand, build.call("_?_:_", build.scalar(name), none, selected))


def _guard_call(rebuilt: bytes, call: bytes, build: _Guards) -> bytes:
    target, function, args = call_parts(call)
    binary = target is None and len(args) == 2
    if function == "_[_]" and binary and (build.versions or build.quantities):
        if _constant(args[1]) or _plain(args[1]):
            return rebuilt
        return build.call("_[_]", args[0], build.checked(args[1], QUALIFIER_CHECKS))
    if function in ("_==_", "_!=_") and binary:
        if not (build.versions or build.quantities) or _constant(args[0]) or _plain(args[0]):
            return rebuilt
        if _constant(args[1], primitive=True):
            # against a string, number or bool: != as written (never an error, lists unequal), == fails on a
            # tagged value (which equals no constant)
            if function == "_!=_":
                return rebuilt
            return build.call("_==_", build.checked(args[0], [(OPAQUE_TAG, "no such overload")]), args[1])
        return build.equality(function, args[0], args[1])
    if function == "@in" and binary:
        return _guard_in(rebuilt, args[0], args[1], build)
    if function == "_?._" and binary and build.versions and not _constant(args[0]):
        return _optional_field(args[0], args[1], build)
    if function in VERSION_OPERAND:
        return rebuilt
    checks = _operand_checks(function, build)
    if not checks:
        return rebuilt

    def guarded(operand: bytes) -> bytes:
        # a constant is no version; int(dyn(true)) is a bool all the same, as is int(x > 1)
        if ((_constant(operand) or _plain(operand)) and function != "int") or (
            _kind(operand)[0] == _IDENT and _ident_name(operand) in NAMESPACES
        ):
            return operand
        return build.checked(operand, checks)

    return build.call(function, *(guarded(arg) for arg in args), target=None if target is None else guarded(target))


_MAP_KEY_CONSTANTS = (2, 3, 4, 6)  # cel.expr.Constant bool, int64, uint64, string: the keys cel-cpp's maps hold


def _distinct_constants(keys: list[bytes]) -> bool:
    """Keys that are distinct bool, int, uint or string constants: cel-cpp builds that map as cel-go does."""
    bodies = []
    for key in keys:
        kind, body = _kind(key)
        if kind != _CONST or not any(n in _MAP_KEY_CONSTANTS for n, _, _ in decode(body)):
            return False
        bodies.append(body)
    return len(set(bodies)) == len(bodies)


def _guard_map_keys(rebuilt: bytes, body: bytes, build: _Guards) -> bytes:
    """A map literal hashes its keys into a Go map (cel-go evalMap): a version key fails, a repeated key keeps
    its last value (cel-cpp fails, "duplicate key in map"), a Quantity is its pointer (its tag's identity), and
    keys of different kinds never merge (``{dyn(1): "a", dyn(true): "b"}`` has two entries). A map whose keys
    may repeat (any but distinct bool, int, uint or string constants) binds its keys and values once, in
    cel-go's order, asks MAP_KEEP which entries the Go map keeps, and is built of optional entries, so that
    cel-cpp's own map keys and looks up as cel-go's does (refValMapAccessor.Find: an int finds a uint key and
    the reverse, a bool only a bool)."""
    fields = decode(body)
    if any(n == 1 for n, _, _ in fields):  # a message
        return rebuilt
    entries = [decode(value) for number, _, value in fields if number == 2 and isinstance(value, bytes)]
    keys = [v for entry in entries for n, _, v in entry if n == 3 and isinstance(v, bytes)]
    optional = any(n == 5 and v for entry in entries for n, _, v in entry)
    if optional or len(keys) != len(entries) or _distinct_constants(keys):
        return _checked_keys(rebuilt, fields, build) if build.versions else rebuilt
    pairs: list[bytes] = []
    for entry in entries:
        key = next(v for n, _, v in entry if n == 3 and isinstance(v, bytes))
        value = next((v for n, _, v in entry if n == 4 and isinstance(v, bytes)), None)
        if value is None:
            return rebuilt
        checked = build.versions and not _constant(key)
        pairs += [build.checked(key, [(VERSION_TAG, UNHASHABLE)]) if checked else key, value]
    bound, keep = f"{MAP_LET}{build.next_id}", f"{MAP_LET}{build.next_id}k"

    def element(index: int) -> bytes:
        return build.call("_[_]", build.ident(bound), build.integer(index))

    flags: list[bytes] = []
    for index in range(0, len(pairs), 2):
        flags += [element(index), build.call("_==_", build.call("type", element(index)), build.ident("uint"))]
    built: list[Field] = []
    for index in range(0, len(pairs), 2):
        kept = build.call("_[_]", build.ident(keep), build.integer(index // 2))
        value = build.call(
            "_?_:_",
            kept,
            build.call("of", element(index + 1), target=build.ident("optional")),
            build.call("none", target=build.ident("optional")),
        )
        build.next_id += 1
        built.append((2, 2, _message((1, build.next_id), (3, element(index)), (4, value), (5, 1))))
    build.changed = True
    literal = build.node(_STRUCT, encode(built))
    return build.let(bound, build.items(*pairs), build.let(keep, build.call(MAP_KEEP, build.items(*flags)), literal))


def _checked_keys(rebuilt: bytes, fields: list[Field], build: _Guards) -> bytes:
    """The map literal with each key that is not a constant failing on a version (hashed, cel-go panics)."""
    out: list[Field] = []
    for number, wire, value in fields:
        if number == 2 and isinstance(value, bytes):
            value = encode(
                [
                    (
                        n,
                        w,
                        build.checked(v, [(VERSION_TAG, UNHASHABLE)])
                        if n == 3 and isinstance(v, bytes) and not _constant(v)
                        else v,
                    )
                    for n, w, v in decode(value)
                ]
            )
        out.append((number, wire, value))
    return build.node(_STRUCT, encode(out))


def _eager_bind(rebuilt: bytes, body: bytes, build: _Guards) -> bytes:
    """cel.bind as the ``let`` of the guards: cel-cpp's lazy binding may read a value left stale by an
    exists() that stopped early (``["a", "b"].exists(k, k == "a") && cel.bind(x, m.missing, x == 1)`` is
    false, not "no such key"); bound at once, a value the result does not read still fails nothing."""
    fields = decode(body)
    if (1, 2, BIND_VARIABLE.encode()) not in fields:
        return rebuilt
    build.changed = True
    renamed = encode([(1, 2, LET_VARIABLE.encode()) if n == 1 else (n, w, v) for n, w, v in fields])
    return build.node(_COMPREHENSION, renamed)


def _guard_presence(rebuilt: bytes, body: bytes, build: _Guards) -> bytes:
    """has(v.f) of a scalar (a Semver too) is false: cel-go tests presence on a value without fields so, where
    cel-cpp fails ("Applying SELECT to non-message type"); v.f itself fails in both runtimes."""
    fields = decode(body)
    operand = next((v for n, _, v in fields if n == 1 and isinstance(v, bytes)), None)
    if (3, 0, 1) not in fields or operand is None or _constant(operand):
        return rebuilt
    name = build.name()
    present = build.node(_SELECT, encode([(1, 2, build.ident(name)) if n == 1 else (n, w, v) for n, w, v in fields]))
    build.changed = True
    return build.let(name, operand, build.call("_?_:_", build.scalar(name), build.false(), present))


def _guard(rebuilt: bytes, out: list[Field], build: _Builder) -> bytes:
    assert isinstance(build, _Guards)
    for number, _, value in out:
        if number == _SELECT and isinstance(value, bytes) and build.versions:
            return _guard_presence(rebuilt, value, build)
        if number == _CALL and isinstance(value, bytes):
            return _guard_call(rebuilt, value, build)
        if number == _STRUCT and isinstance(value, bytes):
            return _guard_map_keys(rebuilt, value, build)
        if number == _COMPREHENSION and isinstance(value, bytes):
            return _eager_bind(rebuilt, value, build)
    return rebuilt


# At most this many levels of lists and maps are compared in cel-cpp (each adds ~14 levels of message nesting to
# the program, whose parse stops at 100: the engine compares fewer where it must); deeper, NOT_FALSE_DEEP compares
MAX_COMPARED_DEPTH = 8


def value_depth(expr: bytes, bound: dict[str, int] | None = None) -> int:
    """How many levels of lists and maps the values ``expr`` builds may nest, an upper bound: a list or map literal
    adds one to its elements', a call or a selection passes on its operands', a comprehension's variables are
    bound to its range's and its accumulator's (a macro's step adds a level at most: map() appends a list of its
    body's values). A name it does not bind is data (the object, a device), whose maps key by strings alone: 0."""
    names = bound or {}
    kind, body = _kind(expr)
    if kind == _IDENT:
        return names.get(_ident_name(expr) or "", 0)
    if kind in (_LIST, _STRUCT):
        children = [v for n, _, v in decode(body) if isinstance(v, bytes) and n in _NESTED[kind]]
        if kind == _STRUCT:
            children = [v for entry in children for n, _, v in decode(entry) if n == 4 and isinstance(v, bytes)]
        return 1 + max((value_depth(child, names) for child in children), default=0)
    if kind in (_SELECT, _CALL):
        children = [v for n, _, v in decode(body) if isinstance(v, bytes) and n in _NESTED[kind]]
        return max((value_depth(child, names) for child in children), default=0)
    if kind == _COMPREHENSION:
        parts = {n: v for n, _, v in decode(body)}
        text = {n: v.decode("utf-8", "replace") for n, v in parts.items() if n in (1, 3, 8) and isinstance(v, bytes)}
        expressions = {n: v for n, v in parts.items() if n in (2, 4, 5, 6, 7) and isinstance(v, bytes)}
        inner = dict(names)
        for variable in (text.get(1), text.get(8)):
            if variable:
                inner[variable] = value_depth(expressions.get(2, b""), names)
        accumulated = value_depth(expressions.get(4, b""), names)
        for _ in range(2):  # a macro's step reaches its bound at once: map() is the accumulator plus [body]
            inner[text.get(3, "")] = accumulated
            accumulated = max(accumulated, value_depth(expressions.get(6, b""), inner))
        inner[text.get(3, "")] = accumulated
        return value_depth(expressions.get(7, b""), inner)
    return 0


def compared_depth(serialized: bytes) -> int:
    """How many levels of lists and maps the guards of the serialized parsed expression compare in cel-cpp: as
    deep as its values may nest (value_depth), at most MAX_COMPARED_DEPTH."""
    root = _parts(serialized)[2]
    return 0 if root is None else min(value_depth(root), MAX_COMPARED_DEPTH)


def guard(
    serialized: bytes, versions: bool, quantities: bool = False, maps: bool = True, depth: int | None = None
) -> bytes | None:
    """The serialized parsed expression with operations Kubernetes' opaque types lack guarded: on a version
    (``versions``: values may be versions) every function but its own and the few that treat it as they
    treat a string fails with cel-go's "no such overload"; ``==``/``!=`` follow cel-go's Equal; ``in`` a
    hashed set and map literal keys fail on it; and ``int()`` of a bool fails. Where values may be quantities
    (``quantities``) equality and ``in`` a list compare their values, not their identities; an index by either
    fails; a map literal whose keys may repeat is built as cel-go's Go map (``maps``: the expression builds maps,
    whose keys may be of several kinds), and lists and maps compared in cel-cpp ``depth`` levels down (by default
    compared_depth's). None: nothing to guard."""
    outer, fields, root = _parts(serialized)
    if root is None:
        return None
    if depth is None:
        depth = min(value_depth(root), MAX_COMPARED_DEPTH) if maps else 0
    build = _Guards(_max_id(root), versions=versions, quantities=quantities, maps=maps, depth=depth)
    rewritten = _rewrite(root, build, _guard)
    if not build.changed:
        return None
    return _wrapped(outer, fields, rewritten)


def _wrapped(outer: list[Field], fields: list[Field], root: bytes) -> bytes:
    """The serialized parsed expression (an Any around a ParsedExpr) with ``root`` as its expression."""
    parsed = encode([(n, w, root if n == 2 else v) for n, w, v in fields])
    return encode([(n, w, parsed if n == 2 else v) for n, w, v in outer])


def _node_id(expr: bytes) -> int:
    return next((v for n, w, v in decode(expr) if n == _ID and isinstance(v, int)), 0)


def _null_constant(expr: bytes) -> bool:
    """A null literal, or a conversion of one (``dyn(null)``): a constant cel-go plans."""
    kind, body = _kind(expr)
    if kind == _CONST:
        return any(n == 1 for n, _, _ in decode(body))  # cel.expr.Constant null_value
    if kind == _CALL:
        target, function, args = call_parts(body)
        return target is None and function == "dyn" and len(args) == 1 and _null_constant(args[0])
    return False


def constant_null_indexes(serialized: bytes) -> list[int]:
    """The source offsets of the indexes by a constant null (``m[dyn(null)]``): cel-go makes a constant index
    its qualifier when it plans the program, and null is none (interpreter/attributes.go newQualifier: "invalid
    qualifier type: types.Null", a compile error there)."""
    _, fields, found = _calls_found(serialized, _null_index)
    positions = source_positions(fields, 3)  # ParsedExpr.source_info
    return [positions.get(_node_id(node), 0) for node in found]


def _null_index(body: bytes) -> bool:
    target, function, args = call_parts(body)
    return function == "_[_]" and target is None and len(args) == 2 and _null_constant(args[1])


def constant_conversions(serialized: bytes) -> list[tuple[int, bytes]]:
    """The type conversions of constants cel-go evaluates when it plans the program (interpreter
    decOptimize: maybeOptimizeConstUnary, so that an error there is a compile error, "program instantiation
    failed"), innermost first: each its source offset and a serialized parsed expression of it alone."""
    outer, fields, found = _calls_found(serialized, lambda body: call_parts(body)[1] in CONVERSIONS, constant=True)
    positions = source_positions(fields, 3)  # ParsedExpr.source_info
    return [(positions.get(_node_id(node), 0), _wrapped(outer, fields, node)) for node in found]


def matches_literals(serialized: bytes) -> list[tuple[int, str]]:
    """cel.ValidateRegexLiterals (cel-go v0.29.2 cel/validator.go, in the API server's base environment since
    1.29): each ``matches`` call whose first argument is a string literal (the pattern of ``s.matches(p)``, the
    string of ``matches(s, p)``, as cel-go checks argument 0), its source offset and the literal."""
    outer, fields, found = _calls_found(serialized, lambda body: call_parts(body)[1] == "matches")
    positions = source_positions(fields, 3)  # ParsedExpr.source_info
    out = []
    for node in found:
        _, args = call_parts(_kind(node)[1])[1:]
        if not args:
            continue
        kind, body = _kind(args[0])
        text = (
            next((v for n, _, v in decode(body) if n == 6 and isinstance(v, bytes)), None) if kind == _CONST else None
        )
        if text is not None:
            out.append((positions.get(_node_id(args[0]), 0), text.decode(errors="replace")))
    return out


def _calls_found(
    serialized: bytes, keep: Callable[[bytes], bool], constant: bool = False
) -> tuple[list[Field], list[Field], list[bytes]]:
    """The parts of a serialized parsed expression (_parts) and its calls whose body ``keep`` takes (only those of
    constants when ``constant``), innermost first."""
    outer, fields, root = _parts(serialized)
    found: list[bytes] = []
    if root is None:
        return outer, fields, found

    def visit(rebuilt: bytes, out: list[Field], build: _Builder) -> bytes:
        kind, body = _kind(rebuilt)
        if kind == _CALL and (not constant or _constant(rebuilt)) and keep(body):
            found.append(rebuilt)
        return rebuilt

    _rewrite(root, _Builder(_max_id(root)), visit)
    return outer, fields, found
