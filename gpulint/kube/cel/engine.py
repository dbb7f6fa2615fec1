"""CEL the way Kubernetes evaluates DRA device selectors, offline.

The engine is cel-expr-python (Google's cel-cpp): it parses everything Kubernetes'
cel-go accepts for selectors (optional chaining, ``cel.bind``, the string extensions),
reports errors in the same ``<input>:line:col`` form, uses RE2 for ``matches`` (no
catastrophic backtracking), and evaluates ~500,000 selectors/s. Kubernetes' own
libraries are provided here on top of it:

- quantity: ``quantity()``, ``isQuantity()``, ``compareTo``, ``isGreaterThan``,
  ``isLessThan``, ``add``, ``sub``, ``asInteger``, ``isInteger``, ``asApproximateFloat``,
  ``sign`` (exact arithmetic; ``==`` compares values, so ``quantity("1Gi") == quantity("1024Mi")``);
- semver: ``semver()``, ``isSemver()`` (with the normalize flag), ``major``/``minor``/
  ``patch``, ``compareTo``, ``isGreaterThan``, ``isLessThan``.

Quantities and versions travel through CEL as tagged strings (the binding has no
opaque values); their canonical form makes ``==`` mean what it means in Kubernetes, and
the program is rewritten (gpulint.kube.cel.rewrite.guard) so that a version fails
wherever Kubernetes' Semver type has no overload (orderings, string functions, ``size``,
``+``, ``==`` with another type, hashed ``in``, map keys), ``int()`` of a bool fails, and
cel.bind binds at once, as in cel-go.
The base environment's other libraries (IP, CIDR, lists, regex, format, the strings
extension at Kubernetes' version) come from gpulint.kube.cel.library, per Kubernetes
version. Library functions Kubernetes has and this engine cannot run (sets, the list
extensions, URLs, optionals from the format library) make an expression "not evaluable
offline", never "invalid".
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube.cel import actual_cost, library, literals, rewrite
from gpulint.kube.cel import cost as cel_cost
from gpulint.kube.features import FeatureGates
from gpulint.kube.lru import LRU as LRU  # re-exported: the engine's caches are LRUs
from gpulint.kube.quantity import QuantityError, format_amount, parse_quantity

if TYPE_CHECKING:
    from gpulint.kube.cel.sandbox import Sandbox

MAX_EXPRESSION_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost: validation refuses a higher estimate, the scheduler stops at it
PER_CALL_LIMIT = 1_000_000  # k8s.io/apiserver pkg/apis/cel PerCallLimit: admission CEL, per expression evaluation
# cel-go concatenates lists in O(1) (a view); cel-cpp copies them, so a value Kubernetes builds
# cheaply can exhaust memory here. Evaluations that may build more than this run in the sandbox.
MAX_BUILT = 1 << 24
COST_EXCEEDED = actual_cost.COST_EXCEEDED  # cel-go's runtime message
# No verdict: the evaluation worker did not get its CPU time (a busy machine) or could not start.
UNDECIDED = "evaluation timed out, undecided"
# cel-go keys a map by a double, a null, a timestamp or a duration; cel-cpp's maps cannot hold one: no verdict
UNREPRESENTED = (
    "undecided: a map keyed by a double, null, timestamp or duration, or by both 1 and true nested deeper than gpulint "
    "compares beside a Quantity or a Semver (gpulint's CEL runtime has none)"
)
NO_VERDICT = (UNDECIDED, UNREPRESENTED)  # evaluation errors that are no verdict on the object
MUTABLE_ROOTS = ("variables",)  # policy variables are added to this map between expressions
CACHE_SIZE = 4096  # compiled expressions (and their cost verdicts) kept per engine: the webhook sees new ones forever
DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")
# DeviceAttribute's list members (k8s.io/api resource/v1 types.go, gate DRAListTypeAttributes)
LIST_ATTRIBUTE_KINDS = ("ints", "bools", "strings", "versions")
QUANTITY_TYPE = "kubernetes.Quantity"  # the type names cel-go prints (k8s.io/apiserver pkg/cel)
SEMVER_TYPE = "kubernetes.Semver"

QUANTITY_TAG = rewrite.QUANTITY_TAG  # a private-use character: no manifest string starts with it
SEMVER_TAG = rewrite.VERSION_TAG
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with "
    "has() for optional fields"
)

# Kubernetes CEL library functions that this engine does not provide (base.go, by version).
NOT_OFFLINE = frozenset(
    {
        "sets.contains",
        "sets.equivalent",
        "sets.intersects",
        "slice",
        "flatten",
        "distinct",
        "reverse",
        "sort",
        "sortBy",
        "lists.range",
        "first",
        "last",
        "url",
        "isURL",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "transformList",
        "transformMap",
        "transformMapEntry",
        "format",
        "authorizer",
        # the quantity library's arithmetic of a release after the base environment gpulint translates
        # (library_compatibility_test.go lists them without a release yet)
        "mul",
        "div",
        "divInt",
    }
)
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'|no matching overload for '([^']+)'")
_ERROR_POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")
_DOMAIN_LITERAL = re.compile(r"\b(?:attributes|capacity)\s*\[\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*\]")
_DEVICE_FIELD = re.compile(r"(?<![\w.])device\s*\.\s*\??\s*([A-Za-z_]\w*)")
# has() on a field of kubernetes.DRADevice: always true (the fields are required)
_DEVICE_HAS = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(?:driver|attributes|capacity|allowMultipleAllocations)\s*\)")
_INCLUDES = re.compile(r"\.\s*(includes)\s*\(")
_MACRO = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(")
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


# --------------------------------------------------------------------------- values


def quantity_value(fraction: Fraction, identity: str) -> str:
    """A Quantity: its value, and its identity (rewrite.IDENTITY): each Quantity Kubernetes builds is a new
    pointer, so each new one here takes an identity no other value of its evaluation has."""
    return f"{QUANTITY_TAG}{fraction.numerator}/{fraction.denominator}{rewrite.IDENTITY}{identity}"


class Identities:
    """The identities of the Quantities an engine's evaluations make (quantity(), add(), sub()), given to the
    functions bound to its environment. Not renewed per evaluation: a policy's variables carry the Quantities one
    evaluation made into the next. Numbers, never a device capacity's (device_value). No verdict reads their
    values, only whether two are the same (itertools.count is atomic under the GIL; os.urandom cost more than
    parsing the quantity)."""

    def __init__(self) -> None:
        self._next = itertools.count()

    def new(self) -> str:
        return str(next(self._next))


def _without_identity(value: Any) -> Any:
    """A tagged Quantity as its value alone (equality ignores the identity); any other value as it is."""
    return value.split(rewrite.IDENTITY, 1)[0] if isinstance(value, str) and value.startswith(QUANTITY_TAG) else value


def _fraction(tagged: Any) -> Fraction:
    if not isinstance(tagged, str) or not tagged.startswith(QUANTITY_TAG):
        raise ValueError("no such overload: the value is not a Quantity")
    numerator, denominator = _without_identity(tagged)[len(QUANTITY_TAG) :].split("/")
    return Fraction(int(numerator), int(denominator))


def _quantity(text: str, identity: str) -> str:
    try:
        return quantity_value(parse_quantity(text).value, identity)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None  # resource.ParseQuantity's error, as the library returns it


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def tag(self) -> str:
        pre = "-" + ".".join(self.pre) if self.pre else ""
        return f"{SEMVER_TAG}{self.major}.{self.minor}.{self.patch}{pre}"


def parse_semver(text: str, normalize: bool = False) -> Version:
    """blang/semver strict parsing; ``normalize`` allows a leading v, missing parts and leading zeros."""
    if len(text) > 256:  # no real version is this long; bounds the regex work on hostile input
        raise ValueError("invalid semver: longer than 256 characters")
    if normalize:
        match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)", text.removeprefix("v"), re.DOTALL)
        if match:
            parts = [str(int(part)) for part in match.group(1, 2, 3) if part is not None]
            text = ".".join(parts + ["0"] * (3 - len(parts))) + match.group(4)
    match = _SEMVER.fullmatch(text)
    if match is None:
        if len(text.split(".", 2)) != 3:  # blang/semver Parse's first check
            raise ValueError("No Major.Minor.Patch elements found")
        raise ValueError(f"invalid semver: {text!r}")
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    return Version(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre)


def _version(tagged: Any) -> Version:
    if not isinstance(tagged, str) or not tagged.startswith(SEMVER_TAG):
        raise ValueError("no such overload: the value is not a Semver")
    return parse_semver(tagged[len(SEMVER_TAG) :])


def _compare_pre(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if not a or not b:
        return (not a) - (not b)  # a release is greater than any pre-release
    for x, y in zip(a, b):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return (int(x) > int(y)) - (int(x) < int(y))
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return (x > y) - (x < y)
    return (len(a) > len(b)) - (len(a) < len(b))


def compare_versions(a: Version, b: Version) -> int:
    left, right = (a.major, a.minor, a.patch), (b.major, b.minor, b.patch)
    if left != right:
        return (left > right) - (left < right)
    return _compare_pre(a.pre, b.pre)


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, str) and a.startswith(SEMVER_TAG):
        return compare_versions(_version(a), _version(b))
    x, y = _fraction(a), _fraction(b)
    return (x > y) - (x < y)


def _arith(a: Any, b: Any, sign: int, identity: str) -> str:
    other = Fraction(b) if isinstance(b, int) and not isinstance(b, bool) else _fraction(b)
    return quantity_value(_fraction(a) + sign * other, identity)


def _is_integer(a: Any) -> bool:
    """Quantity.AsInt64 succeeds: a whole number within int64 (quantity("9999999999999999999999999999999999999G")
    is whole but not an integer here, as in k8s.io/apiserver pkg/cel/library/quantity_test.go)."""
    value = _fraction(a)
    return value.denominator == 1 and -(2**63) <= value.numerator < 2**63


def _approximate_float(a: Any) -> float:
    """Quantity.AsApproximateFloat64: +Inf or -Inf past float's range (a long quantity), not an error."""
    value = _fraction(a)
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _as_integer(a: Any) -> int:
    if not _is_integer(a):
        raise ValueError("cannot convert value to integer")
    return _fraction(a).numerator


def counted_library(identities: Identities) -> dict[str, Any]:
    """The quantity and semver libraries on tagged values, for the cost count (gpulint.kube.cel.actual_cost
    checks the operands' kinds first); the same implementations as the engine's own (_kubernetes_functions)."""
    return {
        "quantity": lambda s: _quantity(s, identities.new()),
        "add": lambda a, b: _arith(a, b, 1, identities.new()),
        "sub": lambda a, b: _arith(a, b, -1, identities.new()),
        **_PURE_LIBRARY,
    }


# the functions of the quantity and semver libraries that make no Quantity
_PURE_LIBRARY: dict[str, Any] = {
    "isQuantity": _is_quantity,
    "semver": lambda s, normalize=False: parse_semver(s, normalize).tag(),
    "isSemver": lambda s, normalize=False: _valid(parse_semver, s, normalize),
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "asInteger": _as_integer,
    "isInteger": _is_integer,
    "asApproximateFloat": _approximate_float,
    "sign": lambda a: (_fraction(a) > 0) - (_fraction(a) < 0),
    "major": lambda v: _version(v).major,
    "minor": lambda v: _version(v).minor,
    "patch": lambda v: _version(v).patch,
}

_TAGGED = re.compile(r"\ue000([qvf]):([^\s\"',)\]}]*)")


def _readable_tag(match: re.Match[str]) -> str:
    if match.group(1) == "v":
        return match.group(2)
    if match.group(1) == "f":  # a named format (library.FORMAT_TAG)
        return f"format.{match.group(2)}()"
    try:
        numerator, denominator = match.group(2).split(rewrite.IDENTITY, 1)[0].split("/")
        return format_amount(Fraction(int(numerator), int(denominator)))
    except (ValueError, ZeroDivisionError):
        return match.group(2)


# cel-cpp's runtime messages -> cel-go's, which Kubernetes shows
_STATUS = re.compile(r"^(?:UNKNOWN|NOT_FOUND|INVALID_ARGUMENT|OUT_OF_RANGE|FAILED_PRECONDITION|INTERNAL): ")
_CEL_GO_WORDING = (
    (re.compile(r'Key not found in map : "?((?:[^"\\]|\\.)*?)"?(?=$|\. )'), r"no such key: \1"),
    (re.compile(r"No matching overloads found : <iter_range>"), "expected iterable type"),
    # the format library's helpers (gpulint.kube.cel.rewrite) on a value that is not a format
    (re.compile(r"No matching overloads found : @kubernetes\.format\.\w+\([^)]*\)"), "no such overload"),
    (re.compile(r"no such overload: validate"), "no such overload"),
)


def readable(text: str) -> str:
    """A runtime message as Kubernetes (cel-go) words it, with the engine's internal value tags written
    as the values they stand for (never shown)."""
    text = _STATUS.sub("", text)
    for pattern, replacement in _CEL_GO_WORDING:
        text = pattern.sub(replacement, text)
    return _TAGGED.sub(_readable_tag, text) if "\ue000" in text else text


def device_value(value: Any, identity: str = "c0") -> Any:
    """A ResourceSlice attribute ({int|bool|string|version: ...}) or capacity ({value: ...}) as the CEL value
    Kubernetes gives it. A capacity is a Quantity of its own: ``identity`` is distinct per capacity of one
    device (the allocator numbers them), and never an engine's (Identities: numbers alone)."""
    if isinstance(value, dict):
        if "version" in value:
            try:
                return parse_semver(str(value["version"])).tag()
            except ValueError:
                return str(value["version"])
        for kind in ("int", "bool", "string"):
            if kind in value:
                return value[kind]
        if "value" in value:  # a capacity: {value: 80Gi}
            try:
                return _quantity(str(value["value"]), identity)
            except ValueError:
                return value["value"]
        for kind in LIST_ATTRIBUTE_KINDS:  # DRAListTypeAttributes: CEL lists of the same values
            if isinstance(value.get(kind), list):
                return [_scalar_value(kind, item) for item in value[kind]]
    return value


def _scalar_value(kind: str, item: Any) -> Any:
    if kind == "versions":
        try:
            return parse_semver(str(item)).tag()
        except ValueError:
            return str(item)
    return item


# --------------------------------------------------------------------------- compiling


@dataclass(frozen=True)
class CelProblem:
    message: str
    offset: int  # character offset into the expression
    evaluable: bool = True  # False: valid Kubernetes CEL this engine cannot run ("not evaluable offline")


@dataclass(frozen=True)
class Compiled:
    expression: str
    program: Any
    domains: tuple[str, ...]  # attribute/capacity domains the expression names (unknown ones read as {})
    checked: cel_cost.Checked | None = field(default=None, compare=False, repr=False)  # None: not estimable
    bounded: bool = False  # True: the estimate with the declared input sizes is within the limit
    roots: tuple[str, ...] = ()  # the environment's variables it reads


def _offset(expression: str, line: int, column: int) -> int:
    lines = expression.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + max(column - 1, 0)


def _strip_strings(expression: str) -> str:
    """The expression with string literals blanked (same length), so regexes see only code."""
    return re.sub(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", lambda m: " " * len(m.group(0)), expression)


DEVICE_VARIABLES = ("device",)


@dataclass(frozen=True)
class Verdict:
    """How one evaluation may run, from the estimate with the inputs' actual sizes."""

    in_process: bool  # the estimate bounds it: run here
    exceeded: str = ""  # the estimate's minimum is over the limit: it fails in Kubernetes too
    high: int = cel_cost.U64  # the estimate's maximum: cel-go's actual cost is never more


class CelEngine:
    """Compiles each distinct expression once; evaluates against device maps (or, with other
    ``variables``, against objects: the policy environment).

    Cost, as Kubernetes bounds it: every expression gets cel-go's static estimate (gpulint.kube.cel.cost).
    A DRA selector over ``max_cost`` with the declared device sizes is refused at compile time.
    An evaluation runs in-process when the estimate with its inputs' sizes is within ``max_cost``;
    otherwise in a worker process with memory and time limits (gpulint.kube.cel.sandbox), where running
    out is reported as Kubernetes reports it: "operation cancelled: actual cost limit exceeded".
    ``guarded=False`` (the worker itself) skips all of that.
    """

    def __init__(
        self,
        variables: tuple[str, ...] = DEVICE_VARIABLES,
        max_cost: int = MAX_COST,
        guarded: bool = True,
        cache_size: int = CACHE_SIZE,
        version: str = "",
    ) -> None:
        # the libraries of the base environment at the compatibility version (base.go): new expressions
        # may use what the release before the cluster's declared
        self.libraries = library.compatibility_version(version or FeatureGates().version)
        self.max_cost = max_cost
        self.guarded = guarded
        self._env: Any = None
        self._typed_envs: dict[tuple[int, int], Any] = {}  # by the libraries' Kubernetes version
        self._compiled: LRU[str, Compiled | CelProblem] = LRU(cache_size)
        self._verdicts: LRU[tuple[str, tuple[int, ...]], Verdict] = LRU(cache_size)
        self._dyn_results: LRU[str, bool] = LRU(cache_size)  # _explicit_dyn: a type check and a decode each
        # _version_problem by (expression, version): two type checks each (a 1-tuple: None is a verdict too)
        self._version_results: LRU[tuple[str, str], tuple[CelProblem | None]] = LRU(cache_size)
        self._new_problems: LRU[tuple[str, FeatureGates], tuple[CelProblem | None]] = LRU(cache_size)
        self._bounds: LRU[int, tuple[Any, int]] = LRU(256)  # id(value) -> (value, its size bound)
        self._sandbox: Sandbox | None = None
        self._panics = Panics()
        self._identities = Identities()
        self.counted_library = counted_library(self._identities)  # for actual_cost, as the engine evaluates
        self.unavailable: str = ""
        self.variables = variables

    @property
    def devices(self) -> bool:
        return self.variables == DEVICE_VARIABLES

    def _environment(self) -> Any:
        if self._env is None:
            try:
                from cel_expr_python import cel
                from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
            except ImportError as exc:  # a platform without the wheel: report, never crash
                self.unavailable = f"the CEL engine is not available ({exc})"
                return None
            self._env = cel.NewEnv(
                variables={name: cel.Type.DYN for name in self.variables}
                if not self.devices
                else {"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings(), ext_bindings.ExtBindings()],
                functions=_kubernetes_functions(
                    cel, libraries=self.libraries, panics=self._panics, identities=self._identities
                ),
            )
        return self._env

    def _typed_environment(self, libraries: tuple[int, int] | None = None) -> Any:
        """The environment the API server type-checks with: Quantity and Semver are their own types and,
        for DRA selectors, ``device`` is kubernetes.DRADevice (dynamic-resource-allocation cel/compile.go);
        the base environment's libraries of ``libraries`` (a Kubernetes version; the engine's by default).
        Only for checking: evaluation runs in the untyped environment (the binding has no opaque values)."""
        version = libraries or self.libraries
        env = self._typed_envs.get(version)
        if env is None:
            from cel_expr_python import cel
            from cel_expr_python.ext import ext_bindings, ext_optional

            t = cel.Type
            if self.devices:
                # the object's fields as qualified names: the binding declares no object types
                variables = {
                    "device": t.Map(t.STRING, t.DYN),
                    "device.driver": t.STRING,
                    "device.attributes": t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
                    "device.capacity": t.Map(t.STRING, t.Map(t.STRING, t.AbstractType(QUANTITY_TYPE))),
                    "device.allowMultipleAllocations": t.BOOL,
                }
            else:
                variables = {name: t.DYN for name in self.variables}
            # type identifiers such as net.IP: declared (as dyn: the binding has no type-of-type values), so
            # `type(x) == net.IP` checks; this engine cannot evaluate it
            variables.update({name: t.DYN for name in library.type_names(version)})
            # the strings extension at the version Kubernetes pins is declared by the library table
            env = cel.NewEnv(
                variables=variables,
                extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
                functions=_kubernetes_functions(cel, typed=True, libraries=version, base=not self.devices),
            )
            self._typed_envs[version] = env
        return env

    def _type_check(self, expression: str, libraries: tuple[int, int] | None = None, offline: bool = True) -> Any:
        """The expression checked as the API server checks it (a typed program), or a CelProblem (``offline``:
        a library function the checker does not know is "not evaluable offline", else the checker's error)."""
        return self._type_checked(expression, libraries, offline)[0]

    def _type_checked(
        self, expression: str, libraries: tuple[int, int] | None = None, offline: bool = True
    ) -> tuple[Any, str]:
        """(the typed program or a CelProblem, the expression this engine runs): the text the engine runs differs
        from the expression when an ordering of different numeric types had to be wrapped (see _numeric_ordering)."""
        checked = _DEVICE_HAS.sub(lambda m: "true".ljust(len(m.group(0))), expression) if self.devices else expression
        runs = expression
        inserted: list[tuple[int, int]] = []  # (position in the converted text, characters inserted there)
        for _ in range(MAX_CONVERSIONS + 1):
            try:
                return self._typed_environment(libraries).compile(checked), runs
            except RuntimeError as exc:
                # string(ip(x)), string(cidr(x)): the binding cannot add overloads to string(), so the check
                # retries with the libraries' own conversion at that call (same length, same positions)
                converted = _library_conversion(str(exc), checked)
                if converted is not None:
                    checked = converted
                    continue
                wrapped = _numeric_ordering(str(exc), checked)
                if wrapped is not None:
                    start, end = wrapped
                    checked, runs = (_wrap_numeric(text, start, end) for text in (checked, runs))
                    inserted = [(p + (len(NUMERIC_OPEN) if p >= start else 0), n) for p, n in inserted]
                    inserted += [(start, len(NUMERIC_OPEN)), (end + len(NUMERIC_OPEN), 1)]
                    continue
                # cel-go prints the attribute values' declared type as `any` (dyn only with DRAListTypeAttributes)
                message = str(exc).replace("map(string, map(string, dyn))", "map(string, map(string, any))")
                declared = library.declared_names(libraries or self.libraries)
                problem = _compile_problem(message, checked, offline, declared)
                at = problem.offset - sum(n for p, n in inserted if p < problem.offset)
                return replace(problem, offset=max(at, 0)), runs
        return _compile_problem("compilation failed: too many conversions in one expression", expression), runs

    def checked(self, expression: str) -> cel_cost.Checked | CelProblem:
        """The expression as the API server checks it (typed, for the cost estimate), whether or not this
        engine can evaluate it."""
        typed = self._type_check(expression)
        if isinstance(typed, CelProblem):
            return typed
        checked = self._checked(typed)
        return checked if checked is not None else CelProblem("the checked expression cannot be decoded", 0, False)

    def new_expression_problem(self, expression: str, gates: FeatureGates) -> CelProblem | None:
        """What the API server adds for an expression it is asked to store (the NewExpressions environment,
        which follows the cluster's version and gates; stored expressions keep compiling): the libraries of
        the version's compatibility version (apiserver cel/environment base.go), and for DRA selectors
        (dynamic-resource-allocation cel/compile.go) allowMultipleAllocations with DRAConsumableCapacity and
        includes() with DRAListTypeAttributes. The expression has compiled in the full environment already.
        Remembered per expression and gates, as compile() is: every claim made from a template asks again."""
        # kept in a tuple: None (no problem) is an answer, and the memo's "absent"
        known = self._new_problems.get_or_compute(
            (expression, gates), lambda: (self._new_expression_problem(expression, gates),)
        )
        return known[0]

    def _new_expression_problem(self, expression: str, gates: FeatureGates) -> CelProblem | None:
        versioned = self._version_problem(expression, gates.version)
        if versioned is not None:
            return versioned
        if not self.devices:
            compiled = self.compile(expression)
            return _admission_problem(expression, compiled.checked if isinstance(compiled, Compiled) else None)
        code = _strip_strings(expression)
        if not gates.enabled("DRAConsumableCapacity"):
            for match in _DEVICE_FIELD.finditer(code):
                if match.group(1) == "allowMultipleAllocations":
                    return CelProblem(
                        "compilation failed: undefined field 'allowMultipleAllocations' "
                        f"({gates.why_off('DRAConsumableCapacity')})",
                        match.start(1),
                    )
        if not gates.enabled("DRAListTypeAttributes"):
            found = _INCLUDES.search(code)
            if found is not None:
                return CelProblem(
                    "compilation failed: undeclared reference to 'includes' (in container '') "
                    f"({gates.why_off('DRAListTypeAttributes')})",
                    found.start(1),
                )
            ranged = self._attribute_range(expression)
            if ranged is not None:
                # the attribute type is google.protobuf.Any without the gate: no comprehension ranges over it
                return CelProblem(
                    "compilation failed: expression of type 'any' cannot be range of a comprehension (must be "
                    f"list, map, or dynamic) ({gates.why_off('DRAListTypeAttributes')})",
                    ranged,
                )
            if self._explicit_dyn(expression):
                # the attribute type is google.protobuf.Any without the gate (dyn with it): a dyn() result is
                # neither bool nor the attribute type
                return CelProblem(
                    f"must evaluate to bool or the unknown type, not dyn ({gates.why_off('DRAListTypeAttributes')})",
                    0,
                )
        return None

    def _attribute_range(self, expression: str) -> int | None:
        """The offset of an attribute value a comprehension (exists, all, map, ...) ranges over, if one does."""
        checked = self.checked(expression)
        if isinstance(checked, CelProblem):
            return None
        stack = [checked.root]
        while stack:
            node = stack.pop()
            if node.kind == "comprehension" and node.iter_range is not None and _attribute_value(node.iter_range):
                return checked.positions.get(node.iter_range.id, 0)
            stack.extend(node.children())
        return None

    def _explicit_dyn(self, expression: str) -> bool:
        """Whether the selector's result is a dyn() call (as written, or cel.bind's result); remembered per
        expression, as compile() is: every claim made from a template asks it again of the same text."""
        return self._dyn_results.get_or_compute(expression, lambda: self._dyn_result(expression))

    def _dyn_result(self, expression: str) -> bool:
        typed = self._type_check(expression)
        checked = None if isinstance(typed, CelProblem) else self._checked(typed)
        node = checked.root if checked is not None else None
        while node is not None and cel_cost.is_bind(node):
            node = node.result
        return node is not None and node.kind == "call" and node.name == "dyn" and node.target is None

    def _version_problem(self, expression: str, version: str) -> CelProblem | None:
        """The type check with the libraries Kubernetes ``version`` gives a new expression, when they are not
        the engine's; a library function it does not have yet is an undeclared reference. Remembered per
        expression and version, as compile() is."""
        # kept in a tuple: None (no problem) is an answer, and the memo's "absent"
        known = self._version_results.get_or_compute(
            (expression, version), lambda: (self._version_result(expression, version),)
        )
        return known[0]

    def _version_result(self, expression: str, version: str) -> CelProblem | None:
        libraries = library.compatibility_version(version)
        if libraries == self.libraries or isinstance(self._type_check(expression), CelProblem):
            return None  # the same libraries, or an expression that fails whatever the version (compile says)
        typed = self._type_check(expression, libraries, offline=False)
        if not isinstance(typed, CelProblem):
            return None
        arrives = library.introduced(typed.message, _strip_strings(expression))
        if arrives is None:
            return typed
        major, minor = arrives
        return CelProblem(
            f"{typed.message} (Kubernetes {version} gives new expressions the CEL libraries of "
            f"{libraries[0]}.{libraries[1]}; this function arrives in {major}.{minor}, usable in new expressions "
            f"from {major}.{minor + 1})",
            typed.offset,
        )

    def compile(self, expression: str) -> Compiled | CelProblem:
        return self._compiled.get_or_compute(expression, lambda: self._compile(expression))

    def _compile(self, expression: str) -> Compiled | CelProblem:
        if len(expression) > MAX_EXPRESSION_LENGTH:
            return CelProblem(
                f"expression is {len(expression)} characters, over Kubernetes' limit of "
                f"{MAX_EXPRESSION_LENGTH} (CELSelectorExpressionMaxLength)",
                MAX_EXPRESSION_LENGTH,
            )
        code = _strip_strings(expression)
        for match in _DEVICE_FIELD.finditer(code) if self.devices else ():
            if match.group(1) not in DEVICE_FIELDS:
                return CelProblem(
                    f"undefined field '{match.group(1)}' (device has driver, attributes, capacity and "
                    "allowMultipleAllocations; attributes are read as "
                    'device.attributes["<domain>"].<name>)',
                    match.start(1),
                )
        env = self._environment()
        if env is None:
            return CelProblem(self.unavailable, 0, evaluable=False)
        # As the API server: type-check, check the result type, estimate the cost; then build the
        # program this engine runs (which may lack a library function: "not evaluable offline").
        typed, runs = self._type_checked(expression)
        if isinstance(typed, CelProblem):
            return typed
        checked = self._checked(typed) if self.guarded or self.devices else None
        if self.devices:
            # dynamic-resource-allocation cel/compile.go: the output type must be exactly bool or the attribute type
            output = declared_result(typed.return_type().name(), checked)
            if output is not None:
                return CelProblem(f"must evaluate to bool or the unknown type, not {output}", 0)
        if "matches" in code:
            pattern = _invalid_pattern(env, expression, runs)
            if pattern is not None:
                return pattern
        if self.devices and ("[" in code or "{" in code):
            mixed = _mixed_literal(typed, expression, runs)
            if mixed is not None:
                return mixed
        if not self.guarded:
            checked = None
        if checked is not None and self.devices:
            refused = self._refused(checked)
            if refused is not None:
                return refused
        try:
            program = _program(env, runs, self.devices)
        except RuntimeError as exc:
            # valid as the API server checks it, yet this engine cannot build it: a function it lacks
            problem = _compile_problem(str(exc), expression)
            if not problem.evaluable:
                return problem
            name = _UNDECLARED.search(problem.message)
            what = f"'{name.group(1) or name.group(2)}'" if name else "a function"
            return CelProblem(
                f"uses {what}, valid in Kubernetes, in a way gpulint's CEL engine cannot evaluate offline "
                f"({problem.message.removeprefix('compilation failed: ')})",
                problem.offset,
                evaluable=False,
            )
        folded = _constant_conversion_problem(env, runs, expression)
        if folded is not None:
            return folded
        domains = tuple(sorted({_literal(m.group(1)) for m in _DOMAIN_LITERAL.finditer(expression)}))
        if not self.guarded:
            return Compiled(expression, program, domains)
        return self._costed(Compiled(expression, program, domains), checked)

    @staticmethod
    def _checked(typed: Any) -> cel_cost.Checked | None:
        """The checked AST as the API server has it (typed), for the cost estimate."""
        try:
            return cel_cost.decode(typed.serialize())
        except (RuntimeError, ValueError, IndexError, RecursionError, UnicodeDecodeError):
            return None

    def _refused(self, checked: cel_cost.Checked) -> CelProblem | None:
        """pkg/apis/resource/validation: a selector whose estimated cost is over the limit is refused."""
        try:
            static = cel_cost.estimate(checked, cel_cost.dra_sizes, self.max_cost)
        except RecursionError:
            return None
        if static.cost[1] > self.max_cost:
            return CelProblem(
                f"too complex, exceeds cost limit: {cel_cost.exceeds_message(static.cost[1], self.max_cost)}"
                f" (CELSelectorExpressionMaxCost is {self.max_cost:,}); the API server refuses it",
                static.hot_offset,
            )
        return None

    def _costed(self, compiled: Compiled, checked: cel_cost.Checked | None) -> Compiled | CelProblem:
        """The compiled expression with its checked AST and Kubernetes' verdict on its estimated cost."""
        if checked is None:
            return compiled  # not estimable: every evaluation goes to the sandbox
        roots = tuple(sorted(cel_cost.identifiers(checked.root) & set(self.variables)))
        bounded = False
        if self.devices:
            try:
                static = cel_cost.estimate(checked, cel_cost.dra_sizes, self.max_cost)
            except RecursionError:
                return Compiled(compiled.expression, compiled.program, compiled.domains, checked, False, roots)
            if static.cost[1] > self.max_cost:
                # pkg/apis/resource/validation: field.Forbidden(..., "too complex, exceeds cost limit")
                return CelProblem(
                    f"too complex, exceeds cost limit: {cel_cost.exceeds_message(static.cost[1], self.max_cost)}"
                    f" (CELSelectorExpressionMaxCost is {self.max_cost:,}); the API server refuses it",
                    static.hot_offset,
                )
            if static.built > MAX_BUILT:
                return CelProblem(
                    f"builds values of up to {static.built:,} elements (list concatenation), which "
                    "Kubernetes shares and gpulint's engine copies",
                    static.hot_offset,
                    evaluable=False,
                )
            bounded = True
        return Compiled(compiled.expression, compiled.program, compiled.domains, checked, bounded, roots)

    # -- deciding where an evaluation runs

    def _bound(self, name: str, value: Any) -> int:
        """The largest string or container inside ``value``, rounded up to a power of two (cached by identity:
        the policy environment passes the same inventory and object lists to every expression; not for
        ``variables``, which it fills in place between expressions)."""
        if value is None or isinstance(value, (bool, int, float)):
            return 0
        if name in MUTABLE_ROOTS:
            return _bucket(cel_cost.data_bound(value))
        cached = self._bounds.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        bound = _bucket(cel_cost.data_bound(value))
        self._bounds.put(id(value), (value, bound))
        return bound

    def _verdict(self, compiled: Compiled, data: dict[str, Any]) -> Verdict:
        """Run here when the estimate with the inputs' size bounds is within the limit (cached per bounds:
        the common case); else estimate with the inputs' exact sizes (uncached: the rare case)."""
        if compiled.checked is None:
            return Verdict(False)
        bounds = tuple(self._bound(name, data.get(name)) for name in compiled.roots)
        key = (compiled.expression, bounds)
        verdict = self._verdicts.get(key)
        if verdict is None:
            found = self._estimate(compiled.checked, cel_cost.uniform_sizes(dict(zip(compiled.roots, bounds))))
            verdict = Verdict(
                found is not None and found.cost[1] <= self.max_cost and found.built <= MAX_BUILT,
                high=found.cost[1] if found is not None else cel_cost.U64,
            )
            self._verdicts.put(key, verdict)
        if verdict.in_process:
            return verdict
        found = self._estimate(compiled.checked, cel_cost.actual_sizes(data))
        if found is None:
            return verdict
        if found.cost[0] > self.max_cost:
            return Verdict(
                False,
                f"{COST_EXCEEDED} (its cost with these inputs is at least {found.cost[0]:,}, "
                f"over the limit of {self.max_cost:,})",
                min(found.cost[1], verdict.high),
            )
        return Verdict(
            found.cost[1] <= self.max_cost and found.built <= MAX_BUILT, high=min(found.cost[1], verdict.high)
        )

    def _estimate(self, checked: cel_cost.Checked, sizes: cel_cost.SizeModel) -> cel_cost.Estimate | None:
        try:
            # bounds on the actual cost from both sides: the runtime counts a select on a dyn value, the estimator
            # does not; and cel-go's own minimum is no bound on its runtime count (low)
            return cel_cost.estimate(checked, sizes, self.max_cost, dyn_select=cel_cost.SELECT_AND_IDENT_COST, low=True)
        except RecursionError:
            return None

    def cost_ceiling(self, compiled: Compiled, data: dict[str, Any]) -> int:
        """What cel-go's actual cost of this evaluation can be at most (the estimate with the inputs' sizes,
        cached as the evaluation's own verdict is; cel_cost.U64 when not estimable)."""
        return self._verdict(compiled, data).high if compiled.checked is not None else cel_cost.U64

    def count(
        self, compiled: Compiled, data: dict[str, Any], composition: actual_cost.Composition | None = None
    ) -> actual_cost.Counted | None:
        """cel-go's actual cost of this evaluation counted from below (gpulint.kube.cel.actual_cost); None: not
        counted here. With a ``composition``, its variables are read lazily and their cost reported to it."""
        if compiled.checked is None:
            return None
        return actual_cost.count(compiled.checked, data, self.max_cost, composition, self.counted_library)

    def _counted(self, compiled: Compiled, data: dict[str, Any]) -> tuple[Any, str]:
        """The evaluation's actual cost counted as cel-go counts it (gpulint.kube.cel.actual_cost): Kubernetes'
        error when the count passes the limit; else the worker's answer, where a worker that runs out of time or
        memory is no verdict when the count stayed under the limit (cel-go's count is the one that decides)."""
        counted = None
        if compiled.checked is not None:
            roots = {name: data.get(name) for name in compiled.roots}
            counted = actual_cost.count(compiled.checked, roots, self.max_cost, library=self.counted_library)
        if counted is not None and counted.exceeded:
            return None, (
                f"{COST_EXCEEDED} (counted as Kubernetes counts it, its cost with these inputs passes the limit of "
                f"{self.max_cost:,})"
            )
        return self._stopped(compiled, data, False, counted is not None)

    def device_count(self, compiled: Compiled, device: dict[str, Any]) -> actual_cost.Counted | None:
        """The selector's actual cost on this device, counted as cel-go counts it (the allocator runs it with
        cel.CostLimit(CELSelectorExpressionMaxCost), k8s.io/dynamic-resource-allocation v0.37.2 cel/compile.go);
        None when it cannot be counted here (the worker then decides)."""
        if compiled.checked is None:
            return None
        view = {key: _plain(value) for key, value in device.items()}
        for key in ("attributes", "capacity"):  # an unknown domain is an empty map (newStringInterfaceMapWithDefault)
            groups = view.get(key)
            if isinstance(groups, dict):
                view[key] = {**groups, **{d: {} for d in compiled.domains if d not in groups}}
        return actual_cost.count(compiled.checked, {"device": view}, self.max_cost, library=self.counted_library)

    def _stopped(
        self, compiled: Compiled, data: dict[str, Any], device: bool, counted_under: bool = False
    ) -> tuple[Any, str]:
        """Evaluate in the worker: (value, "") or (None, error). ``counted_under``: cel-go's count of this
        evaluation stays under the limit, so a worker that stops is no verdict (gpulint's engine copies what
        cel-go shares: a long map() of lists, a concatenation of long strings)."""
        if self._sandbox is None:
            from gpulint.kube.cel.sandbox import Sandbox  # a child process: only for unbounded evaluations

            self._sandbox = Sandbox(self.variables)
        if not device:  # only what it reads crosses the pipe (not the whole inventory)
            data = {name: data.get(name) for name in compiled.roots}
        outcome = self._sandbox.evaluate(compiled.expression, data, device)
        if outcome.undecided or (outcome.stopped and counted_under):
            return None, f"{UNDECIDED} (gpulint's evaluation worker {outcome.stopped}; not a verdict on this object)"
        if outcome.stopped:
            return None, (
                f"{COST_EXCEEDED} (its estimated cost with these inputs is over the limit of "
                f"{self.max_cost:,}, and gpulint {outcome.stopped}; Kubernetes allows about 0.1 s)"
            )
        return outcome.value, readable(outcome.error)

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()

    # -- evaluating

    def run(self, compiled: Compiled, data: dict[str, Any]) -> tuple[Any, str]:
        """(value, "") or (None, the runtime error): any result type, for policies."""
        if self.guarded:
            verdict = self._verdict(compiled, data)
            if verdict.exceeded:
                return None, verdict.exceeded
            if not verdict.in_process:
                return self._counted(compiled, data)
        self._panics.take()
        self._panics.took_unrepresented()
        try:
            value = compiled.program.eval(data=data)
        except Exception as exc:
            return None, readable(str(exc))
        panic = self._panics.take()
        if self._panics.took_unrepresented() and (panic or value.type().name() == "ERROR"):
            return None, UNREPRESENTED
        if panic:
            return None, panic
        if value.type().name() == "ERROR":
            return None, readable(str(value.value()))
        return optional_value(value.plain_value() if hasattr(value, "plain_value") else value.value()), ""

    def evaluate(self, compiled: Compiled, device: dict[str, Any], within_limits: bool | None = None) -> bool | str:
        """True/False, or the runtime error message (an error, never false, as in the scheduler).

        ``within_limits``: whether the device keeps to the sizes the API server enforces (computed when None).
        """
        if self.guarded and not (
            compiled.bounded and (within_limits if within_limits is not None else cel_cost.dra_within_limits(device))
        ):
            verdict = self._verdict(compiled, {"device": device})
            if verdict.exceeded:
                return verdict.exceeded
            if not verdict.in_process:
                counted = self.device_count(compiled, device)
                if counted is not None and counted.exceeded:
                    return (
                        f"{COST_EXCEEDED} (counted as Kubernetes counts it, its cost on this device passes the limit "
                        f"of {self.max_cost:,})"
                    )
                value, error = self._stopped(compiled, device, True, counted is not None)
                return error or bool(value)
        for key in ("attributes", "capacity"):
            groups = device[key]
            missing = [d for d in compiled.domains if d not in groups]
            if missing:  # an unknown domain is an empty map in Kubernetes, not an error
                device = {**device, key: {**groups, **{d: {} for d in missing}}}
        self._panics.take()
        self._panics.took_unrepresented()
        try:
            value = compiled.program.eval(data={"device": device})
        except Exception as exc:
            return readable(str(exc))
        panic = self._panics.take()
        if self._panics.took_unrepresented() and (panic or value.type().name() == "ERROR"):
            return UNREPRESENTED
        if panic:
            return panic
        result = value.value()
        if value.type().name() == "ERROR":
            message = readable(str(result))
            if "not found" in message.lower() or "no such key" in message.lower():
                message += NO_SUCH_KEY_HINT
            return message
        if isinstance(result, list) and isinstance(optional_value(value.plain_value()), CelOptional):
            return "CEL result of type optional_type could not be converted to bool"
        if not isinstance(result, bool):
            return f"CEL result of type {_value_type(result, value.type().name())} could not be converted to bool"
        return result


_BIND_MACRO = re.compile(r"\bcel\s*\.\s*bind\s*\(")
VARIABLES_TYPE = "kubernetes.variables"  # apiserver v0.37.2 pkg/admission/plugin/cel/composition.go variablesTypeName


def _admission_problem(expression: str, checked: cel_cost.Checked | None) -> CelProblem | None:
    """What the API server's admission environment refuses that this engine's policy environment accepts
    (k8s.io/apiserver v0.37.2): ``cel.bind``, declared (ext.Bindings) only for DRA selectors, not in
    cel/environment/base.go; and ``variables`` indexed, an object type with a field per variable
    (plugin/cel/composition.go), read only as ``variables.name``."""
    found = _BIND_MACRO.search(_strip_strings(expression))
    if found is not None:
        return CelProblem(
            "compilation failed: undeclared reference to 'cel' (in container ''); undeclared reference to 'bind' "
            "(the API server declares cel.bind for DRA selectors, not for admission policies)",
            found.start(),
        )
    if checked is None:
        return None
    pending: list[tuple[cel_cost.Node, frozenset[str]]] = [(checked.root, frozenset())]
    while pending:
        node, bound = pending.pop()
        if node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
            operand, key = node.args
            if operand.kind == "ident" and operand.name == "variables" and "variables" not in bound:
                return CelProblem(
                    f"compilation failed: found no matching overload for '_[_]' applied to "
                    f"'({VARIABLES_TYPE}, {checked.types.get(key.id, 'dyn')})'",
                    checked.positions.get(node.id, 0),
                )
        inner = bound | {node.iter_var, node.iter_var2, node.accu_var} if node.kind == "comprehension" else bound
        for child in node.children():
            scoped = inner if child is not node.iter_range and child is not node.accu_init else bound
            pending.append((child, scoped))
    return None


class Panics:
    """The panic of the evaluation running in each thread. cel-go's Eval recovers a runtime panic (a Semver
    hashed: rewrite.PANIC) as the error of the whole evaluation, which no ||, && or comprehension around it
    absorbs; cel-cpp would absorb the error the guard raises in its place, so the guard records it here too."""

    def __init__(self) -> None:
        self._local = threading.local()  # an engine may serve several review threads at once

    def fail(self, message: str) -> Any:
        self._local.message = message
        raise ValueError(message)

    def take(self) -> str:
        """The panic recorded since the last take ("" if none), cleared."""
        message: str = getattr(self._local, "message", "")
        self._local.message = ""
        return message

    def unrepresented(self) -> Any:
        """A value cel-go has and cel-cpp cannot hold (engine.UNREPRESENTED): an error here, recorded so that an
        evaluation that ends in an error, whichever, is no verdict (an || or && that absorbed it decided
        without its value, as cel-go's would)."""
        self._local.unrepresented = True
        raise ValueError(UNREPRESENTED)

    def took_unrepresented(self) -> bool:
        """Whether a value was unrepresented since the last call, cleared."""
        found: bool = getattr(self._local, "unrepresented", False)
        self._local.unrepresented = False
        return found


@dataclass(frozen=True)
class CelOptional:
    """An optional value a program returned (the binding hands none to Python: the rewritten program
    returns it as a tagged list)."""

    present: bool
    value: Any = None


def optional_value(result: Any) -> Any:
    """The result, with a rewritten program's tagged optional as a CelOptional."""
    if isinstance(result, list) and 1 <= len(result) <= 2 and result[0] == rewrite.OPTIONAL_TAG:
        return CelOptional(len(result) == 2, result[1] if len(result) == 2 else None)
    return result


_FORMAT_CALL = re.compile(r"\.\s*(?:validate|named)\s*\(")


_INT_CALL = re.compile(r"(?<![\w.])int\s*\(|\bin\s*\[\s*\]")  # int(), or `in []`
_CONVERSION_CALL = re.compile(r"(?<![\w.])(?:" + "|".join(sorted(rewrite.CONVERSIONS)) + r")\s*\(")


def _constant_conversion_problem(env: Any, runs: str, expression: str) -> CelProblem | None:
    """cel-go evaluates a type conversion of a constant when it plans the program (``int(dyn(true))``,
    ``timestamp("x")``), and makes a constant index its qualifier (``m[dyn(null)]``): an error there is a compile
    error, "program instantiation failed"."""
    code = _strip_strings(runs)
    nulls = rewrite.constant_null_indexes(env.compile(runs, disable_check=True).serialize()) if "null" in code else []
    if nulls:
        message = "program instantiation failed: invalid qualifier type: types.Null"
        return CelProblem(message, nulls[0] if runs == expression else 0)
    if not _CONVERSION_CALL.search(code):
        return None
    for offset, serialized in rewrite.constant_conversions(env.compile(runs, disable_check=True).serialize()):
        try:
            program = _guarded(env, serialized, True, False, True, False) or env.deserialize(serialized)
            value = program.eval(data={})
            error = str(value.value()) if value.type().name() == "ERROR" else ""
        except Exception as exc:  # the binding raises some runtime errors
            error = str(exc)
        if error and UNREPRESENTED not in error:  # a value cel-go holds and cel-cpp cannot: for the evaluation
            return CelProblem(f"program instantiation failed: {readable(error)}", offset if runs == expression else 0)
    return None


def _program(env: Any, expression: str, devices: bool) -> Any:
    """The program this engine runs: the checked expression, unless the parsed one has to be rewritten
    (gpulint.kube.cel.rewrite): operations Kubernetes' opaque types lack guarded, where values may be
    versions (a device's attributes, or semver() results) or an int() may convert a bool; cel.bind bound
    at once; the format library's optional results built from cel-cpp's optionals."""
    code = _strip_strings(expression)
    formats = _FORMAT_CALL.search(code) is not None
    # a function this engine lacks fails the check; the format library's helpers are the rewrite's own
    checked = None if formats else env.compile(expression)
    parsed = env.compile(expression, disable_check=True).serialize() if formats else None
    versions = devices or "semver" in code
    quantities = devices or "quantity" in code
    if versions or quantities or _INT_CALL.search(code) or "bind" in code or "{" in code:
        serialized = env.compile(expression, disable_check=True).serialize()
        guarded = _guarded(env, serialized, versions, quantities, "{" in code, formats)
        if guarded is not None:
            return guarded
    if parsed is not None:
        rewritten = rewrite.rewrite(parsed)
        if rewritten is not None:
            return env.deserialize(rewritten)
    return checked if checked is not None else env.compile(expression)


def _guarded(env: Any, serialized: bytes, versions: bool, quantities: bool, maps: bool, formats: bool) -> Any:
    """The program of the serialized parsed expression with its guards (rewrite.guard), lists and maps compared in
    cel-cpp as deep as its values nest, or fewer levels where protobuf's parse (100 levels of nesting) stops; None:
    nothing to guard, or an expression of ~30 nested operators, which runs as written."""
    for depth in range(rewrite.compared_depth(serialized) if maps else 0, -1, -1):
        guarded = rewrite.guard(serialized, versions, quantities, maps=maps, depth=depth)
        if guarded is None:
            return None
        try:
            return env.deserialize((rewrite.rewrite(guarded) or guarded) if formats else guarded)
        except RuntimeError:
            continue
    return None


def _invalid_pattern(env: Any, expression: str, runs: str) -> CelProblem | None:
    """cel.ValidateRegexLiterals: a literal pattern Go's regexp refuses does not compile ("invalid matches
    argument", at the literal)."""
    for offset, pattern in rewrite.matches_literals(env.compile(runs, disable_check=True).serialize()):
        try:
            library.regex(pattern)
        except ValueError:
            return CelProblem("compilation failed: invalid matches argument", offset if runs == expression else 0)
    return None


def _mixed_literal(typed: Any, expression: str, runs: str) -> CelProblem | None:
    """cel.HomogeneousAggregateLiterals (apiserver cel/environment base.go): a list or map literal of mixed
    types does not compile (gpulint.kube.cel.literals). Only for DRA selectors, whose variables gpulint types as
    Kubernetes does; a policy's are dyn here, typed objects there."""
    try:
        found = literals.mismatches(typed.serialize())
    except (RuntimeError, ValueError, IndexError, RecursionError):
        return None
    if not found:
        return None
    first = found[0]
    return CelProblem(
        f"compilation failed: expected type '{first.expected}' but found '{first.found}'",
        first.offset if runs == expression else 0,  # a wrapped numeric operand shifted the positions
    )


def _value_type(value: Any, name: str) -> str:
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return QUANTITY_TYPE
    if isinstance(value, str) and value.startswith(SEMVER_TAG):
        return SEMVER_TYPE
    return _type_name(name)


_SIMPLE_TYPES = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "DYN": "dyn",
    "NULL": "null_type",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "ERROR": "error",
}
_TYPE_PART = re.compile(r"\s*([^<>,\s]+)\s*(<)?")


def cel_go_type(name: str) -> str:
    """A type cel-cpp names (``LIST<INT>``, ``optional_type<DYN>``) as cel-go's Type.String() prints it
    (``list(int)``, ``optional_type(dyn)``), the form of Kubernetes' compile-time messages."""

    def parse(at: int) -> tuple[str, int]:
        found = _TYPE_PART.match(name, at)
        if found is None:
            return name[at:], len(name)
        head, at = found.group(1), found.end()
        head = _SIMPLE_TYPES.get(head, head)
        if found.group(2) is None:
            return head, at
        params = []
        while True:
            param, at = parse(at)
            params.append(param)
            while at < len(name) and name[at] == " ":
                at += 1
            if at >= len(name) or name[at] != ",":
                break
            at += 1
        at += 1  # the closing >
        head = {"LIST": "list", "MAP": "map", "TYPE": "type"}.get(head, head)
        return f"{head}({', '.join(params)})", at

    return parse(0)[0]


# the format library's optional results (apiserver pkg/cel/library/format.go), which this engine's
# type check declares as dyn: the binding cannot declare optional_type
_OPTIONAL_RESULTS = {
    "format-validate": "optional_type(list(string))",
    "format-named": "optional_type(kubernetes.NamedFormat)",
}


def _optional_origin(checked: cel_cost.Checked, node: Any) -> str | None:
    """The optional type a node has in the API server's check when this engine's check says dyn: a format
    library call, or what passes its value through (cel.bind's result, ``or``, a conditional's branches)."""
    if cel_cost.is_bind(node) and node.result is not None:
        return _optional_origin(checked, node.result)
    if node.kind != "call":
        return None
    for overload in checked.overloads.get(node.id, ()):
        if overload in _OPTIONAL_RESULTS:
            return _OPTIONAL_RESULTS[overload]
    if node.name == "or" and node.target is not None and len(node.args) == 1:
        return _optional_origin(checked, node.target) or _optional_origin(checked, node.args[0])
    if node.name == "_?_:_" and len(node.args) == 3:
        branches = [_optional_origin(checked, branch) for branch in node.args[1:]]
        known = {branch for branch in branches if branch is not None}
        others = [checked.types.get(b.id, "") for b, o in zip(node.args[1:], branches) if o is None]
        if len(known) == 1 and all(kind.startswith("optional:") for kind in others):
            return known.pop()
    return None


ATTRIBUTE_TYPE = (
    "google.protobuf.Any"  # compile.go's attribute type without DRAListTypeAttributes (apiservercel.AnyType)
)
_OPTIONAL_ACCESS = ("_?._", "_[?_]")


def _attribute_value(node: Any) -> bool:
    """device.attributes["<domain>"].<name> (or ["<name>"]): an attribute's value."""
    if node.kind == "select" and not node.test_only and node.target is not None:
        return _attributes_of(node.target) == 1
    return node.kind == "call" and node.name == "_[_]" and bool(node.args) and _attributes_of(node.args[0]) == 1


def _attributes_of(node: Any) -> int:
    """How deep inside ``device.attributes`` a node is: 1 for the map of one domain, 0 for the outer map,
    -1 for anything else."""
    if node.kind == "ident" and node.name == "device.attributes":
        return 0
    if node.kind == "call" and node.name in ("_[_]", *_OPTIONAL_ACCESS) and node.args:
        outer = _attributes_of(node.args[0])
        return outer + 1 if outer == 0 else -1
    if node.kind == "select" and not node.test_only and node.target is not None:
        outer = _attributes_of(node.target)
        return outer + 1 if outer == 0 else -1
    return -1


def declared_result(name: str, checked: cel_cost.Checked | None) -> str | None:
    """The selector's output type as cel-go prints it when it is neither bool nor the attribute type (None:
    accepted). Dyn is accepted (the attribute type), unless the API server types it as a format optional.
    An optional read of an attribute is ``optional_type(google.protobuf.Any)``, as the API server declares
    attributes (this engine declares them dyn)."""
    if name in ("BOOL", "ERROR"):
        return None
    root = checked.root if checked is not None else None
    origin = _optional_origin(checked, root) if checked is not None and root is not None else None
    if name == "DYN" or origin is not None:
        return origin
    if root is not None and root.kind == "call" and root.name in _OPTIONAL_ACCESS and root.args:
        depth = _attributes_of(root.args[0])
        if depth == 1:
            return f"optional_type({ATTRIBUTE_TYPE})"
        if depth == 0:
            return f"optional_type(map(string, {ATTRIBUTE_TYPE}))"
    if root is not None and _attributes_of(root) == 1 and name.startswith("MAP<"):
        return f"map(string, {ATTRIBUTE_TYPE})"
    if root is not None and _attributes_of(root) == 0:
        return f"map(string, map(string, {ATTRIBUTE_TYPE}))"
    return cel_go_type(name)


def _type_name(name: str) -> str:
    """A type as cel-go prints it: ``string``, ``int``, ``list``, ``kubernetes.Quantity``."""
    return name if "." in name else name.split("<")[0].lower()


def _bucket(bound: int) -> int:
    """A size bound rounded up to a power of two (at least 64): few distinct bounds, so verdicts cache well."""
    return 1 << max(bound - 1, 63).bit_length() if bound < cel_cost.U64 else bound


def _literal(text: str) -> str:
    return text[1:-1].replace('\\"', '"').replace("\\'", "'")


def _compile_problem(
    message: str, expression: str, offline: bool = True, declared: frozenset[str] = frozenset()
) -> CelProblem:
    """The checker's error as a problem; ``offline``: a Kubernetes library function this engine does not
    declare is "not evaluable offline" (unless it is among the ``declared`` names: then the error is real,
    e.g. ``format.portName()``, whose ``format`` cel-go, too, reports as undeclared)."""
    first = message.split("\n", 1)[0]
    position = _ERROR_POSITION.search(first)
    offset = _offset(expression, int(position.group(1)), int(position.group(2))) if position else 0
    detail = position.group(3) if position else first
    detail = re.sub(r"\s*\[INVALID_ARGUMENT\]$", "", detail)
    undeclared = _UNDECLARED.search(detail)
    name = undeclared and (undeclared.group(1) or undeclared.group(2))
    if (
        offline
        and name
        and name not in declared
        and (name in NOT_OFFLINE or name.split(".")[-1] in NOT_OFFLINE or name in ("sets", "lists", "strings"))
    ):
        return CelProblem(
            f"uses '{name}', a Kubernetes CEL library function gpulint cannot evaluate offline", offset, evaluable=False
        )
    return CelProblem(f"compilation failed: {detail}", offset)


def _kubernetes_functions(
    cel: Any,
    typed: bool = False,
    libraries: tuple[int, int] = (1, 36),
    base: bool = False,
    panics: Panics | None = None,
    identities: Identities | None = None,
) -> list[Any]:
    """The quantity and semver libraries (k8s.io/apiserver pkg/cel/library quantity.go, semver.go),
    then the other libraries of the base environment at version ``libraries`` (gpulint.kube.cel.library).

    ``typed``: Quantity and Semver are their own types, as the API server declares them, for type
    checking; otherwise both travel as (tagged) strings, which is how this engine evaluates them.
    ``base``: the base environment alone (not a DRA selector's, which has quantity, semver and includes
    whatever the version): quantity, semver and includes only from the release base.go adds them in.
    ``panics``: where the guard's panics are recorded (evaluating).
    ``identities``: the engine's, for the Quantities its evaluations make (type checking makes none).
    """
    new = (identities or Identities()).new
    t = cel.Type
    S, B, I, D = t.STRING, t.BOOL, t.INT, t.DOUBLE  # noqa: E741 - the CEL type letters, as in signatures
    Q = t.AbstractType(QUANTITY_TYPE) if typed else S
    V = t.AbstractType(SEMVER_TYPE) if typed else S
    # name -> (overload id, result, parameters, member?, implementation); ids as in the library sources
    table: dict[str, list[tuple[str, Any, list[Any], bool, Any]]] = {
        "quantity": [("string_to_quantity", Q, [S], False, lambda s: _quantity(s, new()))],
        "isQuantity": [("is_quantity_string", B, [S], False, _is_quantity)],
        "semver": [
            ("string_to_semver", V, [S], False, lambda s: parse_semver(s).tag()),
            ("string_bool_to_semver", V, [S, B], False, lambda s, n: parse_semver(s, n).tag()),
        ],
        "isSemver": [
            ("is_semver_string", B, [S], False, lambda s: _valid(parse_semver, s)),
            ("is_semver_string_bool", B, [S, B], False, lambda s, n: _valid(parse_semver, s, n)),
        ],
        "compareTo": [
            ("quantity_compare_to", I, [Q, Q], True, _compare),
            ("semver_compare_to", I, [V, V], True, _compare),
        ],
        "isGreaterThan": [
            ("quantity_is_greater_than", B, [Q, Q], True, lambda a, b: _compare(a, b) > 0),
            ("semver_is_greater_than", B, [V, V], True, lambda a, b: _compare(a, b) > 0),
        ],
        "isLessThan": [
            ("quantity_is_less_than", B, [Q, Q], True, lambda a, b: _compare(a, b) < 0),
            ("semver_is_less_than", B, [V, V], True, lambda a, b: _compare(a, b) < 0),
        ],
        "add": [
            ("quantity_add", Q, [Q, Q], True, lambda a, b: _arith(a, b, 1, new())),
            ("quantity_add_int", Q, [Q, I], True, lambda a, b: _arith(a, b, 1, new())),
        ],
        "sub": [
            ("quantity_sub", Q, [Q, Q], True, lambda a, b: _arith(a, b, -1, new())),
            ("quantity_sub_int", Q, [Q, I], True, lambda a, b: _arith(a, b, -1, new())),
        ],
        "asInteger": [("quantity_get_int", I, [Q], True, _as_integer)],
        "isInteger": [("quantity_is_integer", B, [Q], True, _is_integer)],
        "asApproximateFloat": [("quantity_get_float", D, [Q], True, _approximate_float)],
        # a global function in Kubernetes (cel.Overload, not MemberOverload): sign(q), never q.sign()
        "sign": [("quantity_sign", I, [Q], False, lambda a: (_fraction(a) > 0) - (_fraction(a) < 0))],
        "major": [("semver_major", I, [V], True, lambda v: _version(v).major)],
        "minor": [("semver_minor", I, [V], True, lambda v: _version(v).minor)],
        "patch": [("semver_patch", I, [V], True, lambda v: _version(v).patch)],
    }
    # one overload per numeric kind, as the runtime dispatches on concrete kinds; typed dyn, so the ordering checks
    table[NUMERIC] = [(f"k8s_cross_numeric_{k.name()}", t.DYN, [k], False, lambda value: value) for k in (I, t.UINT, D)]
    # DRA (dynamic-resource-allocation cel/compile.go includesFunc): membership in a list attribute, equality on a scalar
    if typed:
        table["includes"] = [("dra_includes_dyn_dyn", B, [t.DYN, t.DYN], True, _includes)]
    else:  # the runtime dispatches on concrete kinds, not dyn
        # the guard rewrite's helpers (gpulint.kube.cel.rewrite.guard); two operands travel as one list
        table[rewrite.NO_OVERLOAD] = [("k8s_no_overload", t.DYN, [S], False, _no_overload)]
        recorder = panics or Panics()
        table[rewrite.PANIC] = [("k8s_panic", t.DYN, [S], False, recorder.fail)]
        table[rewrite.EQUAL] = [("k8s_equal", B, [t.List(t.DYN)], False, lambda pair: _equal_or_fail(*pair))]
        table[rewrite.IN_LIST] = [("k8s_in", B, [t.List(t.DYN)], False, lambda pair: _contains(*pair))]
        table[rewrite.MAP_KEEP] = [
            ("k8s_map_keep", t.List(t.DYN), [t.List(t.DYN)], False, lambda keyed: _map_keep(keyed, recorder))
        ]
        table[rewrite.NOT_FALSE] = [
            ("k8s_not_false", B, [t.List(t.DYN)], False, lambda pair: kubernetes_equal(*pair) is not False)
        ]
        table[rewrite.NOT_FALSE_DEEP] = [
            ("k8s_not_false_deep", B, [t.List(t.DYN)], False, lambda given: _not_false(given, recorder))
        ]
        table[rewrite.NOT_EQUAL] = [
            ("k8s_not_equal", B, [t.List(t.DYN)], False, lambda pair: kubernetes_equal(*pair) is not True)
        ]
        scalars = {"string": S, "int": I, "bool": B, "double": D}
        table["includes"] = [
            (f"dra_includes_{target}_{arg}", B, [kind, scalars[arg]], True, _includes)
            for target, kind in (*scalars.items(), ("list", t.List(t.DYN)))
            for arg in scalars
        ]
    if base:
        table = {
            name: [row for row in overloads if library.base_function_available(row[0], libraries)]
            for name, overloads in table.items()
        }
        table = {name: overloads for name, overloads in table.items() if overloads}
    for fn in library.rows(libraries, typed):
        params = [library.cel_type(cel, code, typed) for code in fn.params]
        # evaluating, a list function's overloads collapse into one (one list type): its result is dyn
        lists = not typed and any(code.startswith("list(") for code in fn.params)
        result = t.DYN if lists else library.cel_type(cel, fn.result, typed)
        table.setdefault(fn.name, []).append((fn.overload, result, params, fn.member, fn.impl))
    out = []
    for name, overloads in table.items():
        seen: set[tuple[Any, ...]] = set()
        declared = []
        for oid, ret, params, member, impl in overloads:
            signature = (member, tuple(p.name() for p in params))
            if signature in seen:  # untyped: the quantity and semver overloads coincide
                continue
            seen.add(signature)
            declared.append(cel.Overload(oid, ret, params, is_member=member, impl=impl))
        out.append(cel.FunctionDecl(name, declared))
    return out


_STRING_CONVERSION = re.compile(
    r"<input>:(\d+):(\d+): found no matching overload for 'string' applied to '\((net\.IP|net\.CIDR)\)'"
)
MAX_CONVERSIONS = 16
CONVERSION = library.CONVERSION
# cel.CrossTypeNumericComparisons (base.go, from 1.28): cel-go orders an int, a uint and a double against each
# other; cel-cpp's checker does not and the binding cannot add operator overloads, so the right operand of
# such an ordering is passed through this identity (typed dyn; no cost, as cel-go adds none)
NUMERIC = "_k8snum"
NUMERIC_OPEN = f" {NUMERIC}("
_CROSS_NUMERIC = re.compile(
    r"<input>:(\d+):(\d+): found no matching overload for '_(<=|>=|<|>)_' applied to "
    r"'\((int|uint|double), (int|uint|double)\)'"
)
_OPERAND_END = re.compile(r"&&|\|\||[?:,<>=!]|\bin\b")


def _numeric_ordering(message: str, expression: str) -> tuple[int, int] | None:
    """The span of the right operand of the ordering of two different numeric types the checker refused (it
    places the error at the operator); None when the error is something else."""
    found = _CROSS_NUMERIC.search(message)
    if found is None or found.group(4) == found.group(5):
        return None
    at = _offset(expression, int(found.group(1)), int(found.group(2)))
    code = _strip_strings(expression)
    operator = found.group(3)
    if code[at : at + len(operator)] != operator:
        return None
    start = at + len(operator)
    depth, index = 0, start
    while index < len(code):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and _OPERAND_END.match(code, index) and (char != "!" or code[index : index + 2] == "!="):
            break
        index += 1
    end = index
    while end > start and code[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _wrap_numeric(text: str, start: int, end: int) -> str:
    return text[:start] + NUMERIC_OPEN + text[start:end] + ")" + text[end:]


def _library_conversion(message: str, expression: str) -> str | None:
    """The expression with the ``string`` call the checker refused (an IP or a CIDR) renamed to the
    libraries' conversion; None when the error is something else."""
    found = _STRING_CONVERSION.search(message)
    if found is None:
        return None
    at = _offset(expression, int(found.group(1)), int(found.group(2)))
    start = expression.rfind("string", 0, at + 1)
    if start < 0 or not re.match(r"string\s*\(", expression[start:]):
        return None
    return expression[:start] + CONVERSION + expression[start + len("string") :]


MAX_LIST_ATTRIBUTE_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice


def _cel_equal(a: Any, b: Any) -> bool:
    """CEL equality: values of different types are unequal (true != 1), numbers compare by value."""
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, numbers) and isinstance(b, numbers):
        return a == b
    return type(a) is type(b) and a == b


def _plain(value: Any) -> Any:
    """A device value for the cost count: a Quantity or a Semver (a tagged string here) is an Opaque one."""
    if isinstance(value, str):
        return actual_cost.Opaque(value) if _opaque(value) else value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _opaque(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(rewrite.OPAQUE_TAG)


def _find(mapping: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """A map lookup as CEL finds keys (1 == 1u == 1.0, true != 1)."""
    for candidate, value in mapping.items():
        if _cel_equal(candidate, key):
            return True, value
    return False, None


def kubernetes_equal(a: Any, b: Any) -> bool | None:
    """cel-go's types.Equal(a, b): True, False, or None for its error. A Quantity, a Semver or a Format on
    the left of anything but its own type (or null) is "no such overload" (their Equal methods); lists and
    maps compare element by element, where an error counts as equal (baseList.Equal, baseMap.Equal)."""
    if a is None or b is None:
        return a is None and b is None
    if _opaque(a):
        return _without_identity(a) == _without_identity(b) if _opaque(b) and a[:3] == b[:3] else None
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(kubernetes_equal(x, y) is not False for x, y in zip(a, b))
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            found, other = _find(b, key)
            if not found or kubernetes_equal(value, other) is False:
                return False
        return True
    return _cel_equal(a, b)


def _contains(item: Any, container: Any) -> bool:
    """cel-go's ``in``: a list's Contains asks ``item.Equal(element)``, True alone finding it (a Quantity or a
    Semver equals its own type by value, nothing else); a map's Find looks the key up (a Quantity by its
    identity)."""
    if isinstance(container, list):
        if _opaque(item):
            return any(kubernetes_equal(item, element) is True for element in container if element is not None)
        return any(not _opaque(element) and kubernetes_equal(item, element) is True for element in container)
    if isinstance(container, dict):
        return _find(container, item)[0]
    raise ValueError("no such overload")


def _map_keep(keyed: list[Any], recorder: Panics) -> list[bool]:
    """Which entries of a map literal cel-go's evalMap keeps in its Go map of ref.Val (``keyed``: each key and
    whether it is a uint): the last of each key, two keys one only when of one kind and one value (Int(1),
    Uint(1), Double(1) and Bool(true) are four keys; a Quantity's tag carries its pointer)."""
    keys: list[tuple[str, Any]] = []
    for key, unsigned in zip(keyed[::2], keyed[1::2]):
        if isinstance(key, (list, dict)):
            raise ValueError(f"Invalid map key type: '{'list' if isinstance(key, list) else 'map'}'")
        if not isinstance(key, (bool, int, str)):
            recorder.unrepresented()
        keys.append(("uint" if unsigned is True else type(key).__name__, key))
    return [key not in keys[index + 1 :] for index, key in enumerate(keys)]


def _not_false(given: list[Any], recorder: Panics) -> bool:
    """cel-go's Equal(a, b) != false, ``given`` [a, b, cel-cpp's a == b, whether values may be tagged (a Quantity,
    a Semver)]. ``a`` and ``b`` are Python values, whose dicts merge the keys 1, 1u and true that
    cel-cpp's maps, as cel-go's, keep apart: where no map keys by an int or a bool they are whole, and compared
    as cel-go does (kubernetes_equal); else cel-cpp's answer stands where it is true or no tagged value may
    differ from its equal by identity alone, and there is no verdict otherwise."""
    a, b, native, tagged = given
    if not (_int_keyed(a) or _int_keyed(b)):
        return kubernetes_equal(a, b) is not False
    if native is True or (tagged is False and native is False):
        return bool(native)
    return bool(recorder.unrepresented())


def _int_keyed(value: Any) -> bool:
    """Whether ``value`` holds a map with a key that is not a string (an int, a uint or a bool in Python)."""
    if isinstance(value, list):
        return any(_int_keyed(item) for item in value)
    if isinstance(value, dict):
        return any(not isinstance(key, str) or _int_keyed(item) for key, item in value.items())
    return False


def _equal_or_fail(a: Any, b: Any) -> bool:
    found = kubernetes_equal(a, b)
    if found is None:
        raise ValueError("no such overload")
    return found


def _no_overload(message: str) -> Any:
    raise ValueError(message)


def _includes(target: Any, value: Any) -> bool:
    if isinstance(target, list):
        if len(target) > MAX_LIST_ATTRIBUTE_VALUES:
            raise ValueError(
                f"'includes' function cannot be applied to lists longer than {MAX_LIST_ATTRIBUTE_VALUES} values"
            )
        return any(_cel_equal(_without_identity(item), _without_identity(value)) for item in target)
    return _cel_equal(_without_identity(target), _without_identity(value))


def _valid(parse: Any, *args: Any) -> bool:
    try:
        parse(*args)
    except ValueError:
        return False
    return True
