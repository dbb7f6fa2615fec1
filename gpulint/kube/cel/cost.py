"""Kubernetes' static CEL cost estimate, over the checked AST that cel-expr-python serializes.

Kubernetes bounds CEL two ways (cel-go ``checker/cost.go`` with kubernetes/apiserver
``pkg/cel/library/cost.go``): an *estimated* worst-case cost from the checked AST and the
declared maximum sizes of the inputs (a DRA selector over ``CELSelectorExpressionMaxCost``
is refused by validation: "too complex, exceeds cost limit"), and an *actual* cost counted
while evaluating (``cel.CostLimit``: "operation cancelled: actual cost limit exceeded").
cel-expr-python (cel-cpp) has neither, so this module ports the estimator: the same cost
units (1 per select/ident/call, 0.1 per string character traversed, list literal 10, map
literal 30, comprehensions = iterations x body, ``cel.bind`` = init + body once, ``+`` on
strings costs the result size and the result size is the sum, ``replace`` grows by the
worst-case replacement count, ...). The estimate is an upper bound of cel-go's actual cost
for inputs within the declared sizes, so an expression estimated under the limit cannot
blow up; the caller decides what to do with the rest.

The expression's ``Expression.serialize()`` is a ``google.protobuf.Any`` holding a
``cel.expr.CheckedExpr``; it is decoded with the minimal protobuf wire reader of ``wire`` (no
protobuf dependency for five message types).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.kube.cel import wire

U64 = (1 << 64) - 1  # cel-go saturates at math.MaxUint64
Size = tuple[int, int]  # (min, max), cel-go's SizeEstimate / CostEstimate
UNKNOWN: Size = (0, U64)

# cel-go common/cost.go
SELECT_AND_IDENT_COST = 1
CONST_COST = 0
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
STRUCT_CREATE_BASE_COST = 40
STRING_TRAVERSAL = Fraction(1, 10)
REGEX_STRING_LENGTH = Fraction(1, 4)
NUMERIC_PASS = "_k8snum"  # gpulint.kube.cel.engine.NUMERIC
ACCUMULATORS = ("@result", "__result__", "@__result__")


def _sat(x: int) -> int:
    return x if x < U64 else U64


def add(a: Size, b: Size) -> Size:
    return _sat(a[0] + b[0]), _sat(a[1] + b[1])


def mul(a: Size, b: Size) -> Size:
    return _sat(a[0] * b[0]), _sat(a[1] * b[1])


def union(a: Size, b: Size) -> Size:
    return min(a[0], b[0]), max(a[1], b[1])


def factor(a: Size, f: Fraction) -> Size:
    """multiplyByCostFactor: rounded up, exactly (no float drift at 2**64)."""
    return _sat(-(-a[0] * f.numerator // f.denominator)), _sat(-(-a[1] * f.numerator // f.denominator))


def fixed(n: int) -> Size:
    return n, n


# --------------------------------------------------------------------------- the checked AST


def _fields(data: bytes) -> list[tuple[int, Any]]:
    return [(number, value) for number, _wire, value in wire.decode(data)]


@dataclass(eq=False)
class Node:
    """One ``cel.expr.Expr``: kind is const, ident, select, call, list, map, struct or comprehension."""

    id: int
    kind: str = ""
    name: str = ""  # ident name, select field, call function
    const: Any = None  # ("string", "abc") / ("bool", False) / ...
    test_only: bool = False
    target: Node | None = None  # select operand, member-call target
    args: list[Node] = field(default_factory=list)  # call args, list elements, map/struct values (keys after)
    keys: list[Node] = field(default_factory=list)
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None

    def children(self) -> list[Node]:
        parts = [
            self.target,
            *self.args,
            *self.keys,
            self.iter_range,
            self.accu_init,
            self.loop_condition,
            self.loop_step,
            self.result,
        ]
        return [p for p in parts if p is not None]


def _constant(data: bytes) -> tuple[str, Any]:
    for number, value in _fields(data):
        if number == 6:
            return "string", value.decode("utf-8", "replace")
        if number == 7:
            return "bytes", value
        if number == 2:
            return "bool", bool(value)
        return "scalar", value
    return "scalar", None


def _expr(data: bytes) -> Node:
    node = Node(0)
    for number, value in _fields(data):
        if number == 2:
            node.id = value
        elif number == 3:
            node.kind, node.const = "const", _constant(value)
        elif number == 4:
            node.kind = "ident"
            node.name = next((v.decode() for n, v in _fields(value) if n == 1), "")
        elif number == 5:
            node.kind = "select"
            for n, v in _fields(value):
                if n == 1:
                    node.target = _expr(v)
                elif n == 2:
                    node.name = v.decode()
                elif n == 3:
                    node.test_only = bool(v)
        elif number == 6:
            node.kind = "call"
            for n, v in _fields(value):
                if n == 1:
                    node.target = _expr(v)
                elif n == 2:
                    node.name = v.decode()
                elif n == 3:
                    node.args.append(_expr(v))
        elif number == 7:
            node.kind = "list"
            node.args = [_expr(v) for n, v in _fields(value) if n == 1]
        elif number == 8:
            fields_ = _fields(value)
            node.kind = "map" if not any(n == 1 and v for n, v in fields_) else "struct"
            for n, v in fields_:
                if n == 2:
                    entry = dict(_fields(v))
                    if 3 in entry:
                        node.keys.append(_expr(entry[3]))
                    if 4 in entry:
                        node.args.append(_expr(entry[4]))
        elif number == 9:
            node.kind = "comprehension"
            for n, v in _fields(value):
                if n == 1:
                    node.iter_var = v.decode()
                elif n == 8:
                    node.iter_var2 = v.decode()
                elif n == 3:
                    node.accu_var = v.decode()
                elif n in (2, 4, 5, 6, 7):
                    setattr(
                        node,
                        {2: "iter_range", 4: "accu_init", 5: "loop_condition", 6: "loop_step", 7: "result"}[n],
                        _expr(v),
                    )
    return node


MAX_FORMAT_SIZE = 64  # apiserver pkg/cel limits.go MaxFormatSize
# types whose == apiserver's library estimates at 1 (cost.go EstimateCallCost "_==_", both sides of the type)
_O1_EQUALITY = frozenset({"opaque:kubernetes.Quantity", "opaque:kubernetes.Semver", "opaque:net.IP", "opaque:net.CIDR"})


def _type_kind(data: bytes) -> str:
    """The cel-go Kind of a ``cel.expr.Type`` (only what the estimator asks)."""
    for number, value in _fields(data):
        if number == 3:
            return {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}.get(value, "dyn")
        if number == 5:
            return {2: "timestamp", 3: "duration"}.get(value, "dyn")
        if number == 6:
            return "list"
        if number == 7:
            return "map"
        if number == 9:
            return "struct"
        if number == 10:
            return "typeparam"
        if number == 14:
            name = next((v.decode() for n, v in _fields(value) if n == 1), "")
            params = [v for n, v in _fields(value) if n == 2]
            if name == "optional_type" and params:
                return "optional:" + _type_kind(params[0])
            return "opaque:" + name
        return "dyn"
    return "dyn"


def _element_kind(data: bytes) -> str | None:
    """A list type's element kind (None: not a list)."""
    for number, value in _fields(data):
        if number == 6:
            element = next((v for n, v in _fields(value) if n == 1), b"")
            return _type_kind(element)
        return None
    return None


@dataclass
class Checked:
    root: Node
    overloads: dict[int, list[str]]
    types: dict[int, str]
    positions: dict[int, int]
    elements: dict[int, str] = field(default_factory=dict)  # a list-typed node's element kind


def decode(serialized: bytes) -> Checked:
    """``Expression.serialize()`` (an Any with a CheckedExpr) as a tree and its side tables."""
    outer = dict(_fields(serialized))
    checked = outer.get(2, serialized) if isinstance(outer.get(1), bytes) else serialized
    root = Node(0)
    overloads: dict[int, list[str]] = {}
    types: dict[int, str] = {}
    positions: dict[int, int] = {}
    elements: dict[int, str] = {}
    for number, value in _fields(checked):
        if number == 4:
            root = _expr(value)
        elif number == 2:
            entry = dict(_fields(value))
            reference = _fields(entry.get(2, b""))
            overloads[entry.get(1, 0)] = [v.decode() for n, v in reference if n == 3]
        elif number == 3:
            entry = dict(_fields(value))
            types[entry.get(1, 0)] = _type_kind(entry.get(2, b""))
            element = _element_kind(entry.get(2, b""))
            if element is not None:
                elements[entry.get(1, 0)] = element
        elif number == 5:
            for n, v in _fields(value):
                if n == 4:
                    entry = dict(_fields(v))
                    positions[entry.get(1, 0)] = entry.get(2, 0)
    return Checked(root, overloads, types, positions, elements)


def is_bind(node: Node) -> bool:
    """A comprehension that is cel.bind's expansion (no range, a false condition, the bound name as accumulator)."""
    rng, cond = node.iter_range, node.loop_condition
    return (
        node.kind == "comprehension"
        and rng is not None
        and rng.kind == "list"
        and not rng.args
        and cond is not None
        and cond.kind == "const"
        and cond.const == ("bool", False)
        and node.accu_var not in ACCUMULATORS
    )


def folded(node: Node) -> bool:
    """A list or map literal of constants (recursively): cel-go's OptOptimize builds it once, at plan time."""
    if node.kind == "const":
        return True
    return node.kind in ("list", "map") and all(folded(child) for child in (*node.keys, *node.args))


# --------------------------------------------------------------------------- input sizes

Path = tuple[str, ...]
SizeModel = Callable[[Path], "Size | None"]


def dra_sizes(path: Path) -> Size | None:
    """The DRA ``device`` as kubernetes/dynamic-resource-allocation cel/compile.go declares it: driver
    <= 63 (DriverNameMaxLength), attribute/capacity maps <= 32 entries per domain and domains
    (ResourceSliceMaxAttributesAndCapacitiesPerDevice), domain keys <= 63, ids <= 32, attribute
    values <= 64 (DeviceAttributeMaxValueLength; list attributes <= 48 values). A capacity value (a
    Quantity) and an item of a list attribute have no size there (cel-go's estimate: unknown)."""
    if not path or path[0] != "device":
        return None
    rest = path[1:]
    if rest == ("driver",):
        return 0, 63
    if rest == ("allowMultipleAllocations",):
        return 1, 1
    if not rest or rest[0] not in ("attributes", "capacity"):
        return None
    depth = len(rest)
    if depth == 1:
        return 0, 32
    if depth == 2:
        return (0, 63) if rest[1] == "@keys" else (0, 32)
    if depth == 3:
        if rest[2] == "@keys":
            return 0, 32
        return (0, 64) if rest[0] == "attributes" else None
    return None  # an item of a list attribute


def uniform_sizes(bounds: dict[str, int]) -> SizeModel:
    """Every string, list and map reachable from variable ``v`` has at most ``bounds[v]`` elements."""

    def model(path: Path) -> Size | None:
        bound = bounds.get(path[0]) if path else None
        return None if bound is None else (0, bound)

    return model


def identifiers(root: Node) -> set[str]:
    """Every identifier the expression reads (iteratively: a 10 KiB expression can nest deeply)."""
    names: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "ident":
            names.add(node.name)
            names.add(node.name.split(".")[0])  # a field declared as a qualified name: device.attributes
        stack.extend(node.children())
    return names


def dra_within_limits(device: dict[str, Any]) -> bool:
    """Whether a ``device`` view keeps to the sizes :func:`dra_sizes` assumes (the API server
    enforces them on ResourceSlices; an inventory file need not)."""
    driver = device.get("driver")
    if not isinstance(driver, str) or len(driver) > 63:
        return False
    for key in ("attributes", "capacity"):
        groups = device.get(key)
        if not isinstance(groups, dict) or len(groups) > 32:
            return False
        for domain, values in groups.items():
            if not isinstance(values, dict) or len(values) > 32 or len(str(domain)) > 63:
                return False
            for name, value in values.items():
                if len(str(name)) > 64 or not _small_value(value):
                    return False
    return True


def _small_value(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return len(value) <= 64
    if isinstance(value, list):
        return len(value) <= 48 and all(
            isinstance(v, (str, bytes, bool, int, float)) and _small_value(v) for v in value
        )
    return isinstance(value, (bool, int, float)) or value is None


def actual_sizes(data: dict[str, Any], budget: int = 1 << 20) -> SizeModel:
    """Exact (min, max) sizes of the values at each path of ``data`` (the inputs of one evaluation):
    with them the estimate's minimum is a cost the evaluation cannot stay under."""
    cache: dict[Path, Size | None] = {}

    def model(path: Path) -> Size | None:
        if not path or path[0] not in data:
            return None
        if path not in cache:
            cache[path] = _sizes_at(data[path[0]], path[1:], budget)
        return cache[path]

    return model


def _sizes_at(root: Any, steps: Path, budget: int) -> Size | None:
    values = [root]
    for step in steps:
        found: list[Any] = []
        for value in values:
            if step == "@elements":  # what a comprehension over a dyn value iterates
                found.extend(value if isinstance(value, list) else value.keys() if isinstance(value, dict) else ())
            elif step in ("@items", "@values"):
                found.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else ())
            elif step in ("@keys", "@indices"):
                found.extend(
                    value.keys() if isinstance(value, dict) else [1] * len(value) if isinstance(value, list) else ()
                )
            elif isinstance(value, dict) and step in value:
                found.append(value[step])
        if len(found) > budget:
            return None
        values = found
    sizes = [len(v) if isinstance(v, (str, bytes, list, dict)) else 1 for v in values]
    return (min(sizes), max(sizes)) if sizes else (0, 0)  # nothing there: the evaluation fails before using it


def data_bound(value: Any, budget: int = 1 << 22) -> int:
    """The largest string length or container size inside ``value`` (iterative; stops counting
    after ``budget`` nodes and then answers 2**64-1, i.e. unknown)."""
    best = 0
    stack = [value]
    seen = 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget:
            return U64
        if isinstance(item, (str, bytes)):
            best = max(best, len(item))
        elif isinstance(item, dict):
            best = max(best, len(item))
            stack.extend(item.values())
            stack.extend(k for k in item if isinstance(k, str) and len(k) > best)
        elif isinstance(item, (list, tuple)):
            best = max(best, len(item))
            stack.extend(item)
    return best


# --------------------------------------------------------------------------- the estimator


@dataclass(frozen=True)
class Estimate:
    cost: Size
    built: int  # the largest string/list/map the evaluation may build (cel-cpp copies; cel-go may not)
    hot_offset: int  # where the most expensive part starts (character offset), for findings
    hot_cost: int


@dataclass
class _Var:
    path: Path | None
    size: Size | None
    entry: tuple[str, Size, Size] | None


class _Coster:
    """A port of cel-go's checker.coster plus the Kubernetes library's EstimateCallCost."""

    def __init__(self, checked: Checked, sizes: SizeModel, dyn_select: int = 0, low: bool = False) -> None:
        self.checked = checked
        self.sizes = sizes
        self.dyn_select = dyn_select
        self.low = low  # minima that bound cel-go's runtime count from below (see estimate)
        self.paths: dict[int, Path] = {}
        self.local: dict[str, list[_Var]] = {}
        self.computed: dict[int, Size] = {}
        self.entries: dict[int, tuple[str, Size, Size]] = {}
        self.costs: dict[int, Size] = {}
        self.built = 0

    # -- bookkeeping

    def kind(self, node: Node) -> str:
        return self.checked.types.get(node.id, "dyn")

    def path(self, node: Node) -> Path | None:
        if node.kind == "ident" and self.local.get(node.name):
            return self.local[node.name][-1].path
        return self.paths.get(node.id)

    def push(self, name: str, path: Path | None, size: Size | None, entry: tuple[str, Size, Size] | None) -> None:
        self.local.setdefault(name, []).append(_Var(path, size, entry))

    def pop(self, name: str) -> None:
        self.local[name].pop()

    def size(self, node: Node) -> Size | None:
        if node.id in self.computed:
            return self.computed[node.id]
        if node.kind == "const":
            kind, value = node.const
            return fixed(len(value)) if kind in ("string", "bytes") else fixed(1)
        if node.kind == "list":
            return fixed(len(node.args))
        if node.kind == "map":
            return fixed(len(node.args))
        path = self.path(node)
        if path and path[0] not in ACCUMULATORS:
            estimate = self.sizes(path)
            if estimate is not None:
                return estimate
        if self.kind(node) in ("bool", "int", "uint", "double", "timestamp", "duration") or self.kind(node) in (
            "optional:bool",
            "optional:int",
            "optional:uint",
            "optional:double",
        ):
            return fixed(1)
        if node.kind == "ident" and self.local.get(node.name):
            return self.local[node.name][-1].size
        return None

    def size_or_unknown(self, node: Node) -> Size:
        size = self.size(node)
        return size if size is not None else UNKNOWN

    def entry(self, node: Node) -> tuple[str, Size, Size] | None:
        if node.id in self.entries:
            return self.entries[node.id]
        if node.kind == "ident" and self.local.get(node.name):
            return self.local[node.name][-1].entry
        return None

    def set_size(self, node: Node, size: Size | None, built: bool = False) -> None:
        if size is not None:
            self.computed[node.id] = size
            if built:
                self.built = max(self.built, size[1])

    # -- costs

    def cost(self, node: Node | None) -> Size:
        if node is None:
            return 0, 0
        if node.kind == "const":
            result = fixed(CONST_COST)
        elif node.kind == "ident":
            if self.local.get(node.name):
                result = fixed(SELECT_AND_IDENT_COST)
            else:
                # a qualified name (the typed check declares device.attributes so) is an ident and its selects
                self.paths[node.id] = tuple(node.name.split("."))
                result = fixed(SELECT_AND_IDENT_COST * len(self.paths[node.id]))
        elif node.kind == "select":
            result = self.cost_select(node)
        elif node.kind == "call":
            result = self.cost_call(node)
        elif node.kind == "list":
            result = self.cost_list(node)
        elif node.kind in ("map", "struct"):
            result = self.cost_map(node)
        elif node.kind == "comprehension":
            result = self.cost_bind(node) if self.is_bind(node) else self.cost_comprehension(node)
        else:
            result = 0, 0
        self.costs[node.id] = result
        return result

    def cost_select(self, node: Node) -> Size:
        assert node.target is not None
        if node.test_only:
            # has() costs 0 in Kubernetes (PresenceTestHasCost(false)); at run time its operand is not charged either
            operand = self.cost(node.target)
            return (0, operand[1]) if self.low else add(fixed(0), operand)
        total = self.cost(node.target)
        kind = self.kind(node.target)
        # at run time a select after a missing field is not charged (cel-go stops qualifying)
        charge = fixed if not self.low else lambda n: (0, n)
        if kind in ("map", "struct", "typeparam"):
            total = add(total, charge(SELECT_AND_IDENT_COST))
        elif kind == "dyn":  # cel-go's costSelect charges nothing here; its runtime counts 1 (see estimate)
            total = add(total, charge(self.dyn_select))
        base = self.path(node.target)
        if base is not None:
            self.paths[node.id] = (*base, node.name)
        return total

    def cost_list(self, node: Node) -> Size:
        total: Size = 0, 0
        first = 0  # the first element's minimum
        item: Size = (U64 if node.args else 0, 0)
        for index, element in enumerate(node.args):
            cost = self.cost(element)
            first = cost[0] if index == 0 else first
            total = add(total, cost)
            item = union(item, self.size_or_unknown(element))
        self.entries[node.id] = ("list", fixed(1), item)
        self.built = max(self.built, len(node.args))
        if self.low and folded(node):
            return 0, add(total, fixed(LIST_CREATE_BASE_COST))[1]  # OptOptimize builds it once, uncharged
        if self.low:  # cel-go's evalList stops at the first element that fails (interpreter/interpretable.go)
            total = first, total[1]
        return add(total, fixed(LIST_CREATE_BASE_COST))

    def cost_map(self, node: Node) -> Size:
        total: Size = 0, 0
        first = 0  # the first key's minimum
        keys: Size = (U64 if node.args else 0, 0)
        values: Size = (U64 if node.args else 0, 0)
        for index, key in enumerate(node.keys):
            cost = self.cost(key)
            first = cost[0] if index == 0 else first
            total = add(total, cost)
            keys = union(keys, self.size_or_unknown(key))
        for value in node.args:
            total = add(total, self.cost(value))
            values = union(values, self.size_or_unknown(value))
        if node.kind == "map":
            self.entries[node.id] = ("map", keys, values)
            if self.low and folded(node):
                return 0, add(total, fixed(MAP_CREATE_BASE_COST))[1]
            if self.low:  # evalMap stops at the first key or value that fails: the first key is all that is sure
                total = first, total[1]
        return add(total, fixed(MAP_CREATE_BASE_COST if node.kind == "map" else STRUCT_CREATE_BASE_COST))

    def is_bind(self, node: Node) -> bool:
        return is_bind(node)

    def cost_bind(self, node: Node) -> Size:
        total = add(self.cost(node.iter_range), self.lazy(self.cost(node.accu_init)))
        assert node.accu_init is not None and node.result is not None
        self.push(node.accu_var, self.path(node.accu_init), self.size(node.accu_init), self.entry(node.accu_init))
        total = add(total, self.cost(node.result))
        self.pop(node.accu_var)
        self.set_size(node, self.size(node.result))
        if (entry := self.entry(node.result)) is not None:
            self.entries[node.id] = entry
        return total

    def _iter_vars(self, node: Node) -> list[str]:
        rng = node.iter_range
        assert rng is not None
        entry = self.entry(rng)
        container = entry[0] if entry else ("list" if self.kind(rng) == "list" else "map")
        base = self.path(rng)
        if node.iter_var2:
            key_path = (*base, "@indices" if container == "list" else "@keys") if base is not None else None
            value_path = (*base, "@items" if container == "list" else "@values") if base is not None else None
            self.push(node.iter_var, key_path, entry[1] if entry else None, None)
            self.push(node.iter_var2, value_path, entry[2] if entry else None, None)
            return [node.iter_var, node.iter_var2]
        if container == "list":
            self.push(node.iter_var, (*base, "@items") if base is not None else None, entry[2] if entry else None, None)
        else:
            # a dyn range (a policy's object) is a list or a map as the value turns out: its items or its keys
            step = "@keys" if entry or self.kind(rng) == "map" else "@elements"
            self.push(node.iter_var, (*base, step) if base is not None else None, entry[1] if entry else None, None)
        return [node.iter_var]

    def lazy(self, cost: Size) -> Size:
        """An accumulator's initial value: cel-go evaluates it on its first read, which may never come."""
        return (0, cost[1]) if self.low else cost

    def cost_comprehension(self, node: Node) -> Size:
        assert node.iter_range is not None and node.accu_init is not None
        total = add(self.cost(node.iter_range), self.lazy(self.cost(node.accu_init)))
        self.push(node.accu_var, self.path(node.accu_init), self.size(node.accu_init), self.entry(node.accu_init))
        names = self._iter_vars(node)
        loop = self.cost(node.loop_condition)
        step = self.cost(node.loop_step)
        for name in names:
            self.pop(name)
        total = add(total, self.cost(node.result))
        self.pop(node.accu_var)
        count = self.size_or_unknown(node.iter_range)
        condition = node.loop_condition
        if self.low and not (condition is not None and condition.kind == "const" and condition.const == ("bool", True)):
            count = 0, count[1]  # all(), exists() stop at their first decisive item
        total = add(total, mul(count, add(step, loop)))
        if node.accu_init.kind == "const":
            self.set_size(node, self.size(node.accu_init))
        elif node.accu_init.kind in ("list", "map"):
            self.set_size(node, count, built=True)  # map()/filter() build a list as long as the range
            if node.loop_step is not None and (entry := self.entry(node.loop_step)) is not None:
                self.entries[node.id] = entry
        return total

    def cost_call(self, node: Node) -> Size:
        if node.name in ("dyn", NUMERIC_PASS) and node.args:
            # the engine's pass-through for a cross-numeric ordering is not in Kubernetes' AST: no cost of its own
            cost = add(fixed(1 if node.name == "dyn" else 0), self.cost(node.args[0]))
            self.set_size(node, self.size(node.args[0]))
            if (entry := self.entry(node.args[0])) is not None:
                self.entries[node.id] = entry
            return cost
        arg_costs = [self.cost(arg) for arg in node.args]
        overloads = self.checked.overloads.get(node.id) or []
        if not overloads:
            return 0, 0
        if "in_list" in overloads and "in_map" in overloads and len(node.args) == 2 and self._is_map(node.args[1]):
            overloads = [o for o in overloads if o != "in_list"]  # `in` a map is O(1)
        total: Size = 0, 0
        if node.target is not None:
            total = add(total, self.cost(node.target))
        function_cost: Size = (U64, 0)
        result: Size | None = None
        for overload in overloads:
            cost, size = self.function_cost(node, overload, arg_costs)
            function_cost = union(function_cost, cost)
            if size is not None:
                result = size if result is None else union(result, size)
            if (
                overload in ("index_list", "index_map", "optional_map_index_value", "optional_list_index_int")
                and node.args
            ):
                entry = self.entry(node.args[0])
                result = entry[2] if entry else None
                base = self.path(node.args[0])
                if base is not None:
                    self.paths[node.id] = (*base, "@items" if overload.endswith("list") else "@values")
            if result is None:
                result = self.size(node)
        self.set_size(node, result, built=node.name in _BUILDERS)
        return add(total, function_cost)

    def function_cost(self, node: Node, overload: str, arg_costs: list[Size]) -> tuple[Size, Size | None]:
        args_sum: Size = 0, 0
        for cost in arg_costs:
            args_sum = add(args_sum, cost)
        estimate = self.kubernetes_call_cost(node, overload)
        if estimate is not None:
            return add(estimate[0], args_sum), estimate[1]
        target, args = node.target, node.args
        size = self.size_or_unknown
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return add(factor(size(args[0]), STRING_TRAVERSAL), args_sum), None
        if overload in ("string_to_bytes", "bytes_to_string") and len(args) == 1:
            sz = size(args[0])
            grown = (sz[0], _sat(sz[1] * 4)) if overload == "string_to_bytes" else (sz[0] // 4, sz[1])
            return add(factor(sz, STRING_TRAVERSAL), args_sum), grown
        if overload in ("in_list",) and len(args) == 2:
            if self.low and folded(args[1]):
                return (0, add(factor(size(args[1]), Fraction(1)), args_sum)[1]), None  # OptOptimize: a set lookup
            return add(factor(size(args[1]), Fraction(1)), args_sum), None
        if overload in ("matches_string", "matches") and (target is not None and len(args) == 1 or len(args) == 2):
            text, regex = (target, args[0]) if target is not None else (args[0], args[1])
            str_cost = factor(add(size(text), fixed(1)), STRING_TRAVERSAL)
            return add(mul(str_cost, factor(size(regex), REGEX_STRING_LENGTH)), args_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return add(
                mul(factor(size(target), STRING_TRAVERSAL), factor(size(args[0]), STRING_TRAVERSAL)), args_sum
            ), None
        if overload in ("logical_or", "logical_and") and len(arg_costs) == 2:
            lhs, rhs = arg_costs
            return (lhs[0], add(lhs, rhs)[1]), None
        if overload == "conditional" and len(args) == 3:
            result = union(size(args[1]), size(args[2]))
            left, right = self.entry(args[1]), self.entry(args[2])
            if left and right:
                self.entries[node.id] = (left[0], union(left[1], right[1]), union(left[2], right[2]))
            branches = union(arg_costs[1], arg_costs[2])
            if self.low:  # a branch that is an attribute is resolved unobserved (planner.go planCallConditional)
                branches = 0, branches[1]
            return add(arg_costs[0], branches), result
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = add(size(args[0]), size(args[1]))
            left, right = self.entry(args[0]), self.entry(args[1])
            if left and right:
                self.entries[node.id] = (left[0], union(left[1], right[1]), union(left[2], right[2]))
            if overload == "add_list":
                return add(fixed(1), args_sum), result  # O(1) in cel-go; cel-cpp copies (see Estimate.built)
            return add(factor(result, STRING_TRAVERSAL), args_sum), result
        if overload.startswith(
            (
                "less_string",
                "greater_string",
                "less_equals_string",
                "greater_equals_string",
                "less_bytes",
                "greater_bytes",
                "less_equals_bytes",
                "greater_equals_bytes",
            )
        ) or overload in ("equals", "not_equals"):
            if overload == "equals" and len(args) == 2 and self.kind(args[0]) == self.kind(args[1]):
                # apiserver library cost.go EstimateCallCost "_==_" (not "_!=_"): both sides of one type
                if self.kind(args[0]) in _O1_EQUALITY:
                    return add(fixed(1), args_sum), None
                if self.kind(args[0]) == "opaque:kubernetes.NamedFormat":
                    return add(factor((1, MAX_FORMAT_SIZE), STRING_TRAVERSAL), args_sum), None
            if len(args) == 2:
                smallest = min(size(args[0])[1], size(args[1])[1])
                return add(factor((1 if smallest > 0 else 0, smallest), STRING_TRAVERSAL), args_sum), None
        if self.low and node.name == "_[_]":
            return add((0, 1), args_sum), None  # a qualifier: not charged after a missing field
        return add(fixed(1), args_sum), None

    def _is_map(self, node: Node) -> bool:
        """A map by its checked type, or by where it is in the DRA device (attributes, a domain's attributes)."""
        path = self.path(node)
        declared = path is not None and len(path) in (2, 3) and path[:1] == ("device",)
        return self.kind(node) == "map" or (declared and path is not None and path[1] in ("attributes", "capacity"))

    def kubernetes_call_cost(self, node: Node, overload: str) -> tuple[Size, Size | None] | None:
        """kubernetes/apiserver pkg/cel/library/cost.go EstimateCallCost, for the functions this engine has."""
        name, target, args = node.name, node.target, node.args
        size = self.size_or_unknown
        if name == "includes" and target is not None:
            # the lists library's includes (apiserver library cost.go, which DRA selectors use from 1.37):
            # one comparison per element of the target (an attribute, as dyn: its size)
            cost = self.list_function_cost(target) if self.kind(target) == "list" else size(target)
            return cost, fixed(1)
        if name in ("find", "findAll") and target is not None and args:
            # the regex library's cost, as for matches
            str_cost = factor(add(size(target), fixed(1)), STRING_TRAVERSAL)
            return mul(str_cost, factor(size(args[0]), REGEX_STRING_LENGTH)), (0, size(target)[1])
        if name in ("lowerAscii", "upperAscii", "substring", "trim", "reverse") and target is not None:
            sz = size(target)
            return factor(sz, STRING_TRAVERSAL), sz
        if name == "replace" and target is not None and len(args) >= 2:
            sz, old, new = size(target), size(args[0]), size(args[1])
            if old[0] == 0:
                count_max, kept_max = (sz[1] + 1 if sz[1] < U64 else sz[1]), sz[1]
            elif new[1] <= old[0]:
                count_max, kept_max = 0, sz[1]
            else:
                count_max, kept_max = _sat(math.ceil(Fraction(sz[1], old[0]))), 0
            if old[1] == 0:
                count_min, kept_min = (sz[0] + 1 if sz[0] < U64 else sz[0]), sz[0]
            elif old[1] <= new[0]:
                count_min, kept_min = 0, sz[0]
            else:
                count_min, kept_min = _sat(math.ceil(Fraction(sz[0], old[1]))), 0
            result = add(mul((count_min, count_max), new), (kept_min, kept_max))
            return factor(sz, 2 * STRING_TRAVERSAL), result
        if name == "split" and target is not None:
            sz = size(target)
            return factor(sz, 2 * STRING_TRAVERSAL), (0, sz[1])
        if name == "join" and target is not None:
            count = size(target)
            entry = self.entry(target)
            result = mul(count, entry[2]) if entry else (0, 0)
            if args:
                separators = (max(count[0] - 1, 0), max(count[1] - 1, 0))
                result = add(result, mul(size(args[0]), separators))
            return factor(result, STRING_TRAVERSAL), result
        if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            return self.list_function_cost(target), None
        if name == "format" and target is not None and args:
            result = add(size(target), size(args[0]))
            return factor(size(target), STRING_TRAVERSAL), result
        if name == "strings.quote" and args:
            sz = size(args[0])
            return factor(sz, STRING_TRAVERSAL), (sz[0] + 2, _sat(sz[1] * 2 + 2))
        # A Quantity or a Semver has no size in Kubernetes (cel-go's estimate: unknown): == between two costs
        # 1 (_O1_EQUALITY), == with a dyn value the dyn value's size (cel-go's default, the smaller size).
        # (cel-go hands the library a target for global calls too, so their cases apply to them.)
        if name in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return factor(size(args[0]), STRING_TRAVERSAL), None
        # the IP and CIDR libraries: parsing is a traversal, accessors are nominal; IPs and CIDRs have no
        # size, as Quantity (an == between two costs 1)
        if name in ("ip", "cidr", "isIP", "isCIDR"):
            # cidr.ip() reads a field
            return (factor(size(args[0]), STRING_TRAVERSAL) if args else fixed(1)), None
        if name == "ip.isCanonical" and args:
            return factor(size(args[0]), 2 * STRING_TRAVERSAL), None  # parsed, then compared with the text
        if name in _NOMINAL_NET:
            return fixed(1), fixed(1)
        if name in ("containsIP", "containsCIDR") and target is not None and args:
            addresses: Size = 4, 16  # the byte lists compared: IPv4 or IPv6
            cost = factor(add(addresses, addresses), STRING_TRAVERSAL)
            if name == "containsCIDR":
                cost = add(add(cost, factor(addresses, STRING_TRAVERSAL)), fixed(1))
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                cost = add(cost, factor(size(args[0]), STRING_TRAVERSAL))
            return cost, None
        if name in (
            "sign",
            "asInteger",
            "isInteger",
            "asApproximateFloat",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
            "major",
            "minor",
            "patch",
        ):
            return fixed(1), fixed(1)
        return None

    def list_function_cost(self, target: Node) -> Size:
        """The lists library (isSorted, sum, max, min, indexOf, lastIndexOf): one comparison per element,
        plus traversing each element when they are strings or bytes; on a string target (indexOf,
        lastIndexOf) a traversal of the string."""
        if self.kind(target) != "list":
            return factor(self.size_or_unknown(target), STRING_TRAVERSAL)
        element_cost: Size = fixed(1)
        kind = self.checked.elements.get(target.id)
        if kind in ("string", "bytes"):
            base = self.path(target)
            # by the items' path, else by their type (the size estimator's EstimateSize sees both)
            element = self.sizes((*base, "@items")) if base is not None else self.sizes(("@type", kind))
            element_cost = add(element_cost, factor(element if element is not None else UNKNOWN, STRING_TRAVERSAL))
        return mul(self.size_or_unknown(target), element_cost)

    # -- the hot spot

    def hot_spot(self, limit: int) -> tuple[int, int]:
        """The deepest sub-expression whose own estimate exceeds ``limit`` (or the root): (start offset, cost)."""
        node = self.checked.root
        while True:
            over = [c for c in node.children() if self.costs.get(c.id, (0, 0))[1] > limit]
            if not over:
                break
            node = max(over, key=lambda c: self.costs[c.id][1])
        cost = self.costs.get(node.id, (0, 0))[1]
        # where the sub-expression starts: its leftmost position (cel records an operator's own position)
        positions = self.checked.positions
        stack, start = [node], positions.get(node.id, 0)
        while stack:
            item = stack.pop()
            start = min(start, positions.get(item.id, start))
            stack.extend(item.children())
        return start, cost


# IP and CIDR accessors, nominal cost (library cost.go)
_NOMINAL_NET = frozenset(
    {"masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast"}
)

_BUILDERS = frozenset(
    {
        "_+_",
        "replace",
        "split",
        "join",
        "lowerAscii",
        "upperAscii",
        "format",
        "strings.quote",
        "substring",
        "trim",
        "reverse",
    }
)


def estimate(checked: Checked, sizes: SizeModel, limit: int, dyn_select: int = 0, low: bool = False) -> Estimate:
    """cel-go's estimate. ``dyn_select``: what a field select on a dyn value costs: 0 in cel-go's estimator
    (costSelect: a field of a map, a message or a type parameter only), but 1 in its runtime count, so an
    estimate that has to bound the actual cost (a policy's ``object.spec.x``: object is dyn) passes 1.

    ``low``: minima that bound cel-go's *runtime* count from below, with the inputs' exact sizes. cel-go's own
    minima do not: all() and exists() stop at their first decisive item, OptOptimize folds literals of
    constants and ``in`` over them (decorators.go), a conditional resolves an attribute branch unobserved, a
    select after a missing field and an accumulator never read are not charged (issue #33: six such shapes
    were reported "exceeded" on the minimum where cel-go's count stayed under the limit)."""
    coster = _Coster(checked, sizes, dyn_select, low)
    cost = coster.cost(checked.root)
    offset, hot = coster.hot_spot(limit)
    return Estimate(cost, coster.built, offset, hot)


def exceeds_message(cost: int, limit: int) -> str:
    """Kubernetes' wording ("estimated rule cost exceeds budget by factor of ...", apiserver
    pkg/apiserver/schema/cel/validation.go) with the numbers."""
    if cost >= U64:
        return "estimated cost is unbounded"
    ratio = cost / limit
    how = "more than 100x" if ratio > 100 else f"{ratio:.1f}x"
    return f"estimated cost {cost:,} exceeds budget by factor of {how}"
