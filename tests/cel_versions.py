"""DRA selectors on version attributes, with the outcome Kubernetes gives each (the oracle's answers with
k8s.io/dynamic-resource-allocation v0.37.2, recorded here; tests/upstream/test_oracle.py asks it again).

A version attribute is a ``kubernetes.Semver`` in Kubernetes' CEL (apiserver pkg/cel/semver.go): its own
type, with no overload of the ordering operators, ``size``, ``+`` or the string functions; ``==`` with
anything but a Semver or null is "no such overload" when the version is on the left (Semver.Equal) and
false on the right (String.Equal); ``!=`` never errs (cel-go's evalNe: not equal-to-true); ``in`` a list
of constants or a map literal hashes it and fails ("hash of unhashable type cel.Semver"). Lists and maps
compare element by element, an error counting as equal (cel-go baseList.Equal, baseMap.Equal).

ERROR: an evaluation error (no device matches); TOO_COMPLEX: the API server refuses the selector in a new
claim, its cost estimate over the limit (an element of a list attribute has no size bound there);
COMPILE: the selector does not compile (cel-go evaluates a
type conversion of a constant when it plans the program: "program instantiation failed"). The device is
``DEVICE`` below.
"""

from __future__ import annotations

ERROR = "error"
COMPILE = "compile error"
TOO_COMPLEX = "too complex"  # a new selector is refused ("too complex, exceeds cost limit")
DRIVER = "gpu.example.com"
ATTRIBUTES = {
    "v": {"version": "1.2.3"},
    "pre": {"version": "2.0.0-rc.1"},
    "b": {"version": "1.2.3+build.5"},
    "s": {"string": "1.2.3"},
    "i": {"int": 3},
    "t": {"bool": True},
}
LIST_ATTRIBUTES = {"vs": {"versions": ["1.0.0", "1.2.3"]}, "ss": {"strings": ["a", "1.2.3"]}}
DEVICE = {
    "driver": DRIVER,
    "attributes": {**ATTRIBUTES, **LIST_ATTRIBUTES},
    "capacity": {"mem": {"value": "40Gi"}},
}

_V = f'device.attributes["{DRIVER}"].v'
_A = f'device.attributes["{DRIVER}"]'

# (expression, Kubernetes' outcome)
VERSION_CASES: list[tuple[str, bool | str]] = [
    # equality: an error with the version on the left, false on the right
    (f'{_V} == "1.2.3"', ERROR),
    (f'"1.2.3" == {_V}', False),
    (f"{_V} == 1", ERROR),
    (f"1 == {_V}", False),
    (f"{_V} == [1]", ERROR),
    (f'{_V} == dyn("1.2.3")', ERROR),
    (f"{_V} == {_A}.s", ERROR),
    (f"{_A}.s == {_V}", False),
    (f'{_V} == device.capacity["{DRIVER}"].mem', ERROR),
    (f'device.capacity["{DRIVER}"].mem == {_V}', ERROR),
    (f'cel.bind(x, {_V}, x == "a")', ERROR),
    (f'{_A}.vs.exists(x, x == "1.2.3")', ERROR),
    (f'{_A}.vs[0] == "1.0.0"', ERROR),
    (f'{_A}.?v.orValue("x") == "x"', ERROR),
    (f'!({_V}.isGreaterThan(semver("1.0.0"))) || ({_V} == "a100")', ERROR),
    # ... and what works: null, another version (build metadata ignored), != (never an error)
    (f"{_V} == null", False),
    (f"null == {_V}", False),
    (f'{_V} == semver("1.2.3")', True),
    (f'{_A}.b == semver("1.2.3")', True),
    (f"{_V} == {_A}.b", True),
    (f'{_V} == dyn(semver("1.2.3"))', True),
    (f'{_V} != "1.2.3"', True),
    (f'"1.2.3" != {_V}', True),
    (f"{_V} != 1", True),
    (f"{_V} != {_A}.pre", True),
    (f'{_A}.vs[0] == semver("1.0.0")', TOO_COMPLEX),
    # lists and maps: element by element, an error counting as equal
    (f'{_A}.vs == ["1.0.0", "1.2.3"]', True),
    (f'{_A}.vs.map(x, x) == ["1.0.0", "1.2.3"]', True),
    (f'[{_V}] == ["1.2.3"]', True),
    (f'["1.2.3"] == [{_V}]', False),
    (f'[{_V}] == ["9.9.9"]', True),
    (f'{{"k": {_V}}} == {{"k": "1.2.3"}}', True),
    (f'{{"k": "1.2.3"}} == {{"k": {_V}}}', False),
    (f'[{_V}] != ["1.2.3"]', False),
    (f'{_A}.vs == [semver("1.0.0"), semver("1.2.3")]', True),
    # orderings: no overload, whichever side, even between two versions
    (f'{_V} > "a100"', ERROR),
    (f'"a100" > {_V}', ERROR),
    (f"{_V} > {_A}.pre", ERROR),
    (f"{_V} < 1", ERROR),
    # string functions, size, concatenation, conversions
    (f'{_V}.startsWith("1")', ERROR),
    (f'{_V}.endsWith("3")', ERROR),
    (f'{_V}.contains("2")', ERROR),
    (f'{_V}.matches("1")', ERROR),
    (f"size({_V}) > 0", ERROR),
    (f"{_V}.size() > 0", ERROR),
    (f'{_V} + "x" == "1.2.3x"', ERROR),
    (f'"x" + {_V} == "x1.2.3"', ERROR),
    (f'{_V}.lowerAscii() == "1.2.3"', ERROR),
    (f'{_V}.split(".").size() == 3', ERROR),
    (f'string({_V}) == "1.2.3"', ERROR),
    (f"isSemver({_V})", ERROR),
    (f"isIP({_V})", ERROR),
    # in: a list of constants (a hashed set) or a map literal fails; other lists compare element by element
    (f'{_V} in ["1.2.3"]', ERROR),
    (f"{_V} in [1, 2]", ERROR),
    (f'{_V} in [dyn("x")]', ERROR),
    (f'{_V} in {{"1.2.3": 1}}', ERROR),
    (f"{_V} in {{{_A}.s: 1}}", ERROR),
    (f"{_V} in []", False),
    (f"{_A}.nope in []", False),  # planned as false: the missing key is never read
    (f"{_A}.nope in dyn([])", ERROR),
    (f"{_V} in [null]", False),
    (f'{_V} in [semver("1.0.0"), semver("1.2.3")]', True),
    (f'"1.2.3" in [{_V}]', False),
    (f'semver("1.2.3") in [{_V}]', True),
    (f"{_V} in {_A}.vs", True),
    (f"{_V} in {_A}.ss", False),
    (f"{_V} in {_A}", False),
    (f'{_A}.ss in {{"a": 1}} || {_A}.vs in {{{_A}.s: 1}}', False),  # a list in a map literal: not found
    # fields: none, optionally; has() is false; selecting one fails
    (f"has({_V}.x)", False),
    (f"{_V}.?x.orValue(1) == 1", True),
    (f"{_V}.x == 1", ERROR),
    (f"has({_A}.s.x) || has({_A}.i.x) || has({_A}.t.x) || {_A}.s.?x.hasValue()", False),  # any scalar
    (f"has({_A}.ss.x)", ERROR),
    (f'has({_A}.v) && {_A}.?v.hasValue() && has(device.attributes["other.example.com"].v) == false', True),
    # map keys
    (f"{{{_V}: true}}.size() == 1", ERROR),
    (f'{{"1.2.3": true}}[{_V}]', ERROR),
    (f'{{"k": {_V}}}["k"] == semver("1.2.3")', True),
    # the semver library, includes, type
    (f'{_V}.isGreaterThan(semver("1.0.0"))', True),
    (f'{_V}.compareTo(semver("1.2.3")) == 0 && {_V}.major() == 1', True),
    (f'{_V}.includes(semver("1.2.3"))', True),
    (f'{_V}.includes("1.2.3")', False),
    (f'{_A}.vs.includes(semver("1.2.3"))', True),
    (f'[{_V}].all(x, x == semver("1.2.3"))', True),
    (f'optional.of({_V}).value() == semver("1.2.3")', TOO_COMPLEX),
    (f'{_A}.?v.orValue(semver("0.0.1")) == semver("1.2.3")', TOO_COMPLEX),
    # the guards bind each operand once; a comprehension that stopped early leaves no stale value behind
    (f'["a", "b"].exists(k, k == "a") && {_A}.nope == "x"', ERROR),
    (f'["a", "b"].exists(k, k == "a") && {_V}.startsWith("1")', ERROR),
    # ... and neither does a cel.bind after it (cel-cpp's lazy binding read a stale value: false)
    (f'["a", "b"].exists(k, k == "a") && cel.bind(x, {_A}.nope, x == "x")', ERROR),
    (f"cel.bind(x, {_A}.nope, true)", True),
    (f"cel.bind(x, {_A}.i, cel.bind(y, x + 1, y * 2)) == 8", True),
    # a string attribute that looks like a version is a string
    (f'{_A}.s == "1.2.3" && {_A}.s.startsWith("1.") && size({_A}.s) == 5 && {_A}.s > "1"', True),
    (f'{_A}.s in ["1.2.3"] && {{{_A}.s: 1}}.size() == 1', True),
]

# int() of a bool: cel-go has no such overload (cel-cpp has one); a conversion of a constant fails at compile
INT_CASES: list[tuple[str, bool | str]] = [
    (f"int({_A}.t) == 1", ERROR),
    ("int(dyn(true)) == 1", COMPILE),
    (f'{_A}.i == 3 || int(dyn("x")) == 5', COMPILE),
    ("uint(-1) == 1u", COMPILE),
    ('bool("maybe")', COMPILE),
    ('bool("true") && int(dyn(1.5)) == 1 && string(dyn(1)) == "1"', True),
    (f"[1].all(x, int(x) == 1) && int({_A}.i) == 3", True),
    (f"int({_A}.i) == 3", True),
    (f'int({_A}.s.size()) == 5 && int("5") == 5', True),
    (f"uint({_A}.t) == 1u", ERROR),
    (f'string({_A}.t) == "true"', True),
]

# A version hashed (`in` a list of constants or a map literal, a map literal's key) panics in cel-go; Eval
# recovers the panic as the error of the whole evaluation, which no ||, && or comprehension absorbs. Only a
# hash that is evaluated fails: a branch that short-circuits it away decides.
HASH_CASES: list[tuple[str, bool | str]] = [
    (f'{_V} in ["1.2.3", "1.2.4"] || {_A}.s == "1.2.3"', ERROR),
    (f'{_A}.s == "1.2.3" || {_V} in ["1.2.3"]', True),  # || stops at true: the hash is never evaluated
    (f'{_V} in {{"1.2.3": true}} && false', ERROR),
    (f'false && {_V} in ["1.2.3"]', False),
    (f"{{{_V}: 1}}.size() == 1 || true", ERROR),
    (f'!({_V} in ["9.9.9"]) || true', ERROR),
    (f'({_V} in ["1.2.3"]) ? true : true', ERROR),
    (f'{_A}.t ? true : {_V} in ["1.2.3"]', True),
    (f'[1, 2].exists(x, x == 1 || {_V} in ["1.2.3"])', True),  # exists stops at true too
    (f'[1, 2].exists(x, {_V} in ["1.2.3"] || x == 1)', ERROR),
    (f'{_A}.vs.exists(x, x in ["1.0.0"]) || true', ERROR),
    (f'{_A}.s in ["1.2.3"] || false', True),  # a string hashes
    # an error that is not a panic is absorbed as before
    (f'{_V}.startsWith("1") || true', True),
]

# Literals of mixed types do not compile: the API server's environment has cel.HomogeneousAggregateLiterals
# (apiserver pkg/cel/environment base.go), "expected type 'int' but found 'string'".
LITERAL_CASES: list[tuple[str, bool | str]] = [
    (f'{_A}.s in ["a100", 1]', COMPILE),
    (f"[1, {_A}.i].exists(x, x == 3)", COMPILE),  # an attribute is dyn, 1 an int
    (f'{_V} in ["x", semver("1.0.0")]', COMPILE),
    ("[1, 2.0].size() == 2", COMPILE),
    ("[1u, 1].size() == 2", COMPILE),
    ('[[1], ["a"]].size() == 2', COMPILE),
    ("[null, 1].size() == 2", COMPILE),
    ('{"a": 1, "b": "x"}.size() == 2', COMPILE),
    (f'{{"a": 1, {_A}.s: 1}}.size() == 2', COMPILE),
    ('[1, dyn("a")].size() == 2', COMPILE),
    # ... and literals of one type do
    (f'{_A}.s in ["a100", "1.2.3"]', True),
    (f"[{_A}.i, {_A}.s].size() == 2", True),  # both attributes: dyn
    (f"[{_A}.i, dyn(1)].size() == 2", True),
    ("[[], [1]].size() == 2 && [{}, {1: 2}].size() == 2", True),
    ("[optional.of(1), optional.none()].size() == 2", True),
    (f'[{_V}, {_A}.pre].all(x, x.isGreaterThan(semver("1.0.0")))', True),
    ('"%s-%d".format(["a", 1]) == "a-1"', True),  # lists inside format() are exempt
    # cel.ValidateRegexLiterals: a literal pattern Go's regexp refuses does not compile (the dra validate family)
    (f'{_A}.s.matches("[")', COMPILE),
    ('"a".matches("(") || true', COMPILE),
    ('matches("[", "a")', COMPILE),  # the global form: cel-go checks its argument 0, the string
    (f'{_A}.s.matches("^1[.]2")', True),
    (f"{_A}.s.matches({_A}.s)", True),  # no literal: the pattern is the attribute itself
]

# Operands the guard leaves alone because their value is never a version (a comparison, a count, a device's
# driver): the outcome stays Kubernetes'
VERSION_CASES += [
    (f'{_V}.compareTo(semver("1.0.0")) == 1', True),
    (f'device.driver == "{DRIVER}" && {_V}.major() == 1', True),
    (f"has({_V}) == true", True),
    (f"{_A}.s.size() == {_V}", False),
    (f"size({_V}) == 5", ERROR),
]
INT_CASES += [
    (f"int({_A}.i > 1) == 1", COMPILE),
    (f'string({_A}.i > 1) == "true"', True),
]

# Map keys built with dyn() (issue #33): cel-go's map literal is a Go map of ref.Val, where Int(1), Uint(1) and
# Bool(true) are three keys and a repeated key keeps its last value; Find looks an int up as a uint and the
# reverse, never as a bool, and a null (or any kind it holds no key of) is not found (cel-go v0.29.2
# interpreter/interpretable.go evalMap, common/types map.go refValMapAccessor.Find). gpulint's Python dict took
# true for 1. A constant null index is no qualifier (attributes.go newQualifier), refused when cel-go plans it.
MAP_KEY_CASES: list[tuple[str, bool | str]] = [
    ('{dyn(1): "a", dyn(true): "b"}.size() == 2', True),
    ('{dyn(1): "a", dyn(1u): "b"}.size() == 2', True),
    ('{dyn(1): "a", dyn(1): "b"}[1] == "b"', True),
    ('{1: "a", 1: "b"}.size() == 1', True),
    ('{dyn(1u): "a", dyn(true): "b"}[1] == "a"', True),
    ('{dyn(1): "a", dyn(1u): "b"}[1.0] == "a"', True),
    ('{dyn(1): "a", dyn(1u): "b"}[1u] == "b"', True),
    ('dyn(true) in {dyn(1): "a"}', False),
    ('dyn(1u) in {dyn(1): "a"}', True),
    ('dyn(null) in {dyn(1): "a"}', False),
    ("dyn(null) in {}", False),
    ("cel.bind(m, {dyn(true): 0}, dyn(null) in m)", False),
    ('{dyn(1): "a", dyn(true): "b"} == {dyn(true): "b", dyn(1): "a"}', True),
    ('{dyn(1): "a", dyn(true): "b"} != {dyn(true): "a", dyn(1): "b"}', True),
    ('{dyn(1): "a"} == {dyn(1u): "a"}', True),
    ('cel.bind(m, {dyn(1): "a", dyn(true): "b"}, dyn(true) in m && dyn(1u) in m && !(dyn(2) in m))', True),
    ("{dyn(0): 1, dyn(false): 2, dyn(0u): 3}.exists(k, k == false)", True),
    ('{"k": {dyn(1): 0, dyn(true): 1}} == {"k": {dyn(true): 1, dyn(1): 0}}', True),
    ("[{dyn(1): 0, dyn(true): 1}] == [{dyn(true): 1, dyn(1): 0}]", True),
    ("[{dyn(1): 0, dyn(true): 1}] != [{dyn(true): 0, dyn(1): 1}]", True),
    ("cel.bind(m, {}, m[dyn(null)] == 2)", COMPILE),
    ("cel.bind(m, {1: 0, 2: 1}, 1 in m)", True),
    # two levels down and more, and `in` a list (baseList.Equal, baseMap.Equal and Contains recurse; a Python dict
    # merged 1 and true: false, where Kubernetes says true)
    ('{"a": [{dyn(1): 0, dyn(true): 1}]} == {"a": [{dyn(true): 1, dyn(1): 0}]}', True),
    ("[[{dyn(1): 0, dyn(true): 1}]] == [[{dyn(true): 1, dyn(1): 0}]]", True),
    ('{"a": {"b": {dyn(1): 0, dyn(true): 1}}} == {"a": {"b": {dyn(true): 1, dyn(1): 0}}}', True),
    ("[[{dyn(1): 0, dyn(1u): 1}]] == [[{dyn(1u): 1, dyn(1): 0}]]", True),
    ("[[[{dyn(1): 0, dyn(true): 1}]]] != [[[{dyn(true): 0, dyn(1): 1}]]]", True),
    ("[{dyn(1): 0, dyn(true): 1}] in [[{dyn(true): 1, dyn(1): 0}]]", True),
    ("[{dyn(1): 0, dyn(true): 1}] in [[{dyn(true): 0, dyn(1): 1}]]", False),
    ('[{"k": [{dyn(1): 0, dyn(true): 1}]}].exists(x, x == {"k": [{dyn(true): 1, dyn(1): 0}]})', True),
    (
        '[[{dyn(1): dyn(quantity("1")), dyn(true): dyn(1)}]] == [[{dyn(true): dyn(1), dyn(1): dyn(quantity("1000m"))}]]',
        True,
    ),
]
# keys cel-go holds and cel-cpp cannot (a double, a null): Kubernetes' outcome, where gpulint gives no verdict
UNREPRESENTED_CASES: list[tuple[str, bool | str]] = [
    ('{dyn(1.0): "a"}.size() == 1', True),
    ('{dyn(1): "a", dyn(1.0): "b"}.size() == 2', True),
    ('{dyn(1.0): "a"}[1] == "a"', ERROR),  # an int never finds a double key
    ("{dyn(null): 1}.size() == 1", True),
    # cel-go folds the conversion of a constant map at planning: gpulint refused it ("program instantiation failed")
    ("dyn({dyn(1.5): 0}).size() == 1", True),
    # keyed by 1 and true beside a Quantity, nested past the levels gpulint compares in cel-cpp (7)
    (
        "[{" + '"k": [{"k": [{"k": [{dyn(1): dyn(quantity("1")), dyn(true): dyn(1)}]}]}]}] == '
        "[{" + '"k": [{"k": [{"k": [{dyn(true): dyn(1), dyn(1): dyn(quantity("1000m"))}]}]}]}]',
        True,
    ),
]
