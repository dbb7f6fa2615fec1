"""CEL as Kubernetes evaluates DRA selectors: libraries, device semantics, errors, limits."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.kube.cel import cost as cel_cost
from gpulint.kube.cel import rewrite
from gpulint.kube.cel.engine import UNREPRESENTED, CelEngine, CelProblem, Compiled, device_value
from gpulint.kube.cel.sandbox import WALL_SECONDS

ENGINE = CelEngine()
DEVICE = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "gpu.nvidia.com": {
            name: device_value(value)
            for name, value in {
                "type": {"string": "gpu"},
                "productName": {"string": "NVIDIA H100 80GB HBM3"},
                "driverVersion": {"version": "570.124.6"},
                "cudaComputeCapability": {"version": "9.0.0"},
                "index": {"int": 3},
                "mig": {"bool": False},
            }.items()
        },
        "resource.kubernetes.io": {"pcieRoot": "pci0000:17"},
    },
    "capacity": {"gpu.nvidia.com": {"memory": device_value({"value": "80Gi"})}},
    "allowMultipleAllocations": False,
}


def run(expression: str, device=DEVICE):
    compiled = ENGINE.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    return ENGINE.evaluate(compiled, device)


@pytest.mark.parametrize(
    "expression",
    [
        # the Kubernetes quantity library docs
        'quantity("200M").compareTo(quantity("0.2G")) == 0',
        'quantity("50M").compareTo(quantity("50Mi")) == -1',
        'quantity("1Gi") == quantity("1024Mi")',
        'isQuantity("1.5Gi") && !isQuantity("1.5GiB")',
        'quantity("1.5").add(1).isGreaterThan(quantity("2"))',
        'quantity("2").sub(quantity("500m")).asApproximateFloat() == 1.5',
        'quantity("4").asInteger() == 4 && quantity("4").isInteger() && !quantity("500m").isInteger()',
        'sign(quantity("-3")) == -1',
        # the semver library docs
        'semver("v1.0.0", true) == semver("1.0.0")',
        'semver("1.0", true) == semver("1.0.0")',
        '!isSemver("v1.0") && isSemver("v1.0", true)',
        'semver("1.2.3-alpha").isLessThan(semver("1.2.3"))',
        'semver("1.2.3-alpha.10").isGreaterThan(semver("1.2.3-alpha.9"))',
        'semver("2.0.0").major() == 2 && semver("2.7.1").minor() == 7 && semver("2.7.1").patch() == 1',
        # device attributes with their Kubernetes types
        'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
        'device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("9.0.0")) >= 0',
        'device.attributes["gpu.nvidia.com"].index == 3 && !device.attributes["gpu.nvidia.com"].mig',
        'device.attributes["resource.kubernetes.io"].pcieRoot.matches("^pci0000:[0-9a-f]+$")',
        # the extensions Kubernetes enables
        'device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100")',
        'device.attributes["gpu.nvidia.com"].productName.split(" ")[1] == "H100"',
        'cel.bind(gpu, device.attributes["gpu.nvidia.com"], gpu.type == "gpu" && gpu.index > 1)',
        'device.attributes["gpu.nvidia.com"].?nvlink.orValue(false) == false',
        'has(device.attributes["gpu.nvidia.com"].productName) && !has(device.attributes["gpu.nvidia.com"].nope)',
        # an unknown domain is an empty map, not an error
        '!has(device.attributes["other.example.com"].model)',
        'device.attributes["other.example.com"].?model.orValue("") == ""',
        "!device.allowMultipleAllocations",
    ],
)
def test_kubernetes_semantics(expression):
    assert run(expression) is True


def test_unknown_attribute_is_a_runtime_error_with_the_kubernetes_hint():
    result = run('device.attributes["gpu.nvidia.com"].model == "H100"')
    assert isinstance(result, str) and "model" in result
    assert result.endswith(
        "consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
        "with has() for optional fields"
    )
    assert isinstance(run('device.attributes["nope.example.com"].model == "x"'), str)


def test_invalid_quantity_is_a_runtime_error():
    assert "suffix" in run('quantity("200K") == quantity("1")')


# resource.ParseQuantity has no length limit (apimachinery v0.37.2): a long amount is a value, not an error;
# past float's range asApproximateFloat is +Inf or -Inf (Quantity.AsApproximateFloat64), as the oracle answers
@pytest.mark.parametrize(
    "expression",
    [
        f'quantity("{"1" * 121}").isGreaterThan(device.capacity["gpu.nvidia.com"].memory)',
        f'isQuantity("{"9" * 150}Ei") && quantity("{"9" * 150}Ei") == quantity("8Ei")',  # both capped at int64's maximum
        f'quantity("1{"0" * 250}e-250") == quantity("1")',
        f'quantity("{"1" * 400}").asApproximateFloat() > 1e308',
        f'quantity("-{"1" * 400}").asApproximateFloat() < -1e308',
    ],
    ids=["121-digits", "capped-Ei", "scaled-down", "past-float", "past-float-negative"],
)
def test_long_quantities_are_values(expression):
    assert run(expression) is True


@pytest.mark.parametrize(
    "expression, words, offset",
    [
        ('device.productName == "x"', "undefined field 'productName'", 7),
        ('device.attributes["gpu.nvidia.com"].type ==', "compilation failed", None),
        ('device.attributes["gpu.nvidia.com"].type.size()', "must evaluate to bool or the unknown type, not int", 0),
        ("1 + 2", "must evaluate to bool or the unknown type, not int", 0),
        ("device.driver.frobnicate()", "undeclared reference to 'frobnicate'", 24),  # cel reports the call's paren
        ('quantity(1) == quantity("1")', "no matching overload for 'quantity'", 8),
    ],
)
def test_compile_errors_have_positions(expression, words, offset):
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert words in problem.message
    if offset is not None:
        assert problem.offset == offset


@pytest.mark.parametrize(
    "expression, output",
    [
        # dynamic-resource-allocation cel/compile.go: "must evaluate to %v or the unknown type, not %v" with
        # cel-go's Type.String(); attributes are google.protobuf.Any (apiservercel.AnyType) there
        ('device.attributes["gpu.nvidia.com"].?model', "optional_type(google.protobuf.Any)"),
        ('device.attributes["gpu.nvidia.com"][?"model"]', "optional_type(google.protobuf.Any)"),
        ('device.attributes.?["gpu.nvidia.com"]', None),  # not CEL syntax: a parse error instead
        ("device.attributes.?x", "optional_type(map(string, google.protobuf.Any))"),
        ('device.attributes["gpu.nvidia.com"]', "map(string, google.protobuf.Any)"),
        ('device.capacity["gpu.nvidia.com"].?memory', "optional_type(kubernetes.Quantity)"),
        ("optional.of(true)", "optional_type(bool)"),
        ("[true]", "list(bool)"),
        ('{"a": [1]}', "map(string, list(int))"),
        ("format.uuid().validate(device.driver)", "optional_type(list(string))"),
        ('format.named("uuid")', "optional_type(kubernetes.NamedFormat)"),
        ("cel.bind(f, format.uuid(), f.validate(device.driver))", "optional_type(list(string))"),
        ('device.driver == "x" ? format.uuid().validate("a") : optional.none()', "optional_type(list(string))"),
        ('format.uuid().validate("a").or(optional.none())', "optional_type(list(string))"),
    ],
)
def test_optional_and_other_results_are_refused_when_compiled(expression, output):
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable
    if output is None:
        assert problem.message.startswith("compilation failed")
    else:
        assert problem.message == f"must evaluate to bool or the unknown type, not {output}"
        assert problem.offset == 0


@pytest.mark.parametrize(
    "expression",
    [
        # the same reads made bool: accepted (boundary pairs of the cases above)
        'device.attributes["gpu.nvidia.com"].?model.orValue("") == "H100"',
        'device.attributes["gpu.nvidia.com"].?model.hasValue()',
        "optional.of(true).value()",
        "format.uuid().validate(device.driver).hasValue()",
        '!format.named("uuid").hasValue()',
        'format.uuid().validate("a").orValue([]).size() == 0',
        # the attribute type (dyn here, google.protobuf.Any in Kubernetes) is accepted when compiled, fails
        # at run time if it is not a bool
        'device.attributes["gpu.nvidia.com"].model',
        'device.attributes["gpu.nvidia.com"].?model.orValue(false)',
        'cel.bind(a, device.attributes["gpu.nvidia.com"], a.model)',
    ],
)
def test_bool_and_attribute_results_compile(expression):
    assert isinstance(ENGINE.compile(expression), Compiled)


@pytest.mark.parametrize(
    "expression, value",
    [
        # cel.CrossTypeNumericComparisons (apiserver base.go, from 1.28): int, uint and double order against
        # each other; cel-cpp's checker alone refuses these
        ("1.5 > 1", True),
        ("1 < 1.5 && 2.5 > 2 && 3u >= 3", True),
        ("2 <= 1.5 || 3u < 4 ? true : false", True),
        ("1.5 > 1 + 1", False),  # the whole right operand: 1 + 1
        ("1.5 > 1 in [true]", True),  # (1.5 > 1) in [true]: `in` ends the operand
        ("[1.5, 0.5].filter(v, v > 1).size() == 1", True),
        ("double(object.n) >= 2 && int(object.s) < 3.5", True),
    ],
)
def test_cross_numeric_orderings_check_and_run(expression, value):
    compiled = POLICY_ENGINE.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    assert POLICY_ENGINE.run(compiled, {"object": {"n": 2, "s": "3"}}) == (value, "")


def test_the_pass_through_costs_nothing():
    same = [POLICY_ENGINE.checked(text) for text in ("[1.0, 2.0].all(x, x > 1)", "[1.0, 2.0].all(x, x > 1.0)")]
    estimates = [cel_cost.estimate(checked, lambda path: None, 1_000_000).cost for checked in same]
    assert estimates[0] == estimates[1] == (17, 21)


def test_cross_numeric_orderings_keep_the_positions_of_later_errors():
    problem = POLICY_ENGINE.compile("1.5 > 1 && frobnicate()")
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert "undeclared reference to 'frobnicate'" in problem.message
    assert problem.offset == len("1.5 > 1 && frobnicate")  # at the call's parenthesis, in the text as written
    # an ordering of a string with an int is no numeric ordering: refused, as in cel-go
    refused = POLICY_ENGINE.compile('"a" > 1')
    assert isinstance(refused, CelProblem) and "found no matching overload for '_>_'" in refused.message


def test_a_selector_compares_a_quantity_as_a_float_with_an_int():
    compiled = ENGINE.compile('device.capacity["gpu.nvidia.com"].memory.asApproximateFloat() > 1')
    assert isinstance(compiled, Compiled), compiled
    device = {
        "driver": "gpu.nvidia.com",
        "attributes": {},
        "capacity": {"gpu.nvidia.com": {"memory": device_value({"value": "80Gi"})}},
        "allowMultipleAllocations": False,
    }
    assert ENGINE.evaluate(compiled, device) is True


def test_an_explicit_dyn_result_needs_list_type_attributes():
    """compile.go: the result must be bool or the attribute type, google.protobuf.Any without
    DRAListTypeAttributes (a new expression's environment) and dyn with it."""
    from gpulint.kube.features import FeatureGates

    off, on = FeatureGates("1.37"), FeatureGates.of("1.37", {"DRAListTypeAttributes": True})
    for expression in ('dyn(device.attributes["d"].b)', 'cel.bind(a, device.attributes["d"], dyn(a.b))'):
        assert isinstance(ENGINE.compile(expression), Compiled)  # stored expressions: the newest device type
        problem = ENGINE.new_expression_problem(expression, off)
        assert problem is not None and problem.offset == 0
        assert problem.message.startswith("must evaluate to bool or the unknown type, not dyn (DRAListTypeAttributes")
        assert ENGINE.new_expression_problem(expression, on) is None
    # the twins: the attribute itself, and a dyn() compared to a bool
    for expression in ('device.attributes["d"].b', 'dyn(device.attributes["d"].b) == true'):
        assert ENGINE.new_expression_problem(expression, off) is None


def test_an_explicit_dyn_verdict_is_worked_out_once_per_expression(monkeypatch):
    """Claims stamped from one template repeat their selector: the type check and decode behind the dyn()
    verdict run once per expression, and every claim still gets the verdict (the refusal, or none)."""
    from gpulint.kube.features import FeatureGates

    engine, off = CelEngine(), FeatureGates("1.37")
    asked: list[str] = []
    work = CelEngine._dyn_result
    monkeypatch.setattr(CelEngine, "_dyn_result", lambda self, text: asked.append(text) or work(self, text))
    refused, plain = 'dyn(device.attributes["d"].b)', 'device.attributes["d"].b'
    for _ in range(3):
        problem = engine.new_expression_problem(refused, off)
        assert problem is not None and problem.message.startswith("must evaluate to bool or the unknown type, not dyn")
        assert engine.new_expression_problem(plain, off) is None  # a False verdict is remembered too
    assert asked == [refused, plain]
    assert CelEngine().new_expression_problem(refused, off) is not None and asked == [refused, plain, refused]


def test_a_version_verdict_is_worked_out_once_per_expression_and_version(monkeypatch):
    """--kubernetes-version older than the engine's libraries: each new expression is type-checked twice (the
    engine's libraries, the version's); claims stamped from one template ask it once per version."""
    engine = CelEngine()
    asked: list[tuple[str, str]] = []
    work = CelEngine._version_result
    monkeypatch.setattr(
        CelEngine,
        "_version_result",
        lambda self, text, version: asked.append((text, version)) or work(self, text, version),
    )
    plain, ip = 'device.attributes["d"].b', 'isIP(device.attributes["dra.net"].ip)'  # the IP library: 1.30
    first = [engine._version_problem(text, version) for text in (plain, ip) for version in ("1.30", "1.37")]
    again = [engine._version_problem(text, version) for text in (plain, ip) for version in ("1.30", "1.37")]
    assert first == again
    assert first[:2] == [None, None] and first[3] is None  # a None verdict is remembered too
    assert first[2] is not None and "this function arrives in 1.30, usable in new expressions from 1.31" in str(
        first[2]
    )
    assert asked == [(plain, "1.30"), (plain, "1.37"), (ip, "1.30"), (ip, "1.37")]


def test_a_new_expression_verdict_is_worked_out_once_per_expression_and_gates(monkeypatch):
    """Claims stamped from one template ask the new-expression verdict of the same selector: it is worked out
    once per expression and feature gates, and each set of gates keeps its own verdict."""
    from gpulint.kube.features import FeatureGates

    engine = CelEngine()
    off = FeatureGates.of("1.37", {"DRAListTypeAttributes": False, "DRAConsumableCapacity": False})
    on = FeatureGates.of("1.37", {"DRAListTypeAttributes": True, "DRAConsumableCapacity": True})
    asked: list[tuple[str, FeatureGates]] = []
    work = CelEngine._new_expression_problem
    monkeypatch.setattr(
        CelEngine,
        "_new_expression_problem",
        lambda self, text, gates: asked.append((text, gates)) or work(self, text, gates),
    )
    includes = 'device.attributes["dra.net"].ifs.includes("eth0")'
    multiple = "device.allowMultipleAllocations == true"
    for _ in range(3):
        for text, field in ((includes, "includes"), (multiple, "allowMultipleAllocations")):
            refused = engine.new_expression_problem(text, off)
            assert refused is not None and f"'{field}'" in refused.message, refused
            assert refused.offset == text.index(field)
            assert engine.new_expression_problem(text, on) is None  # a None verdict is remembered too
    assert asked == [(includes, off), (includes, on), (multiple, off), (multiple, on)]


def test_length_limit():
    long = " || ".join(['device.driver == "gpu.nvidia.com"'] * 400)
    assert "10240" in ENGINE.compile(long).message


def bind_chain(levels: int, seed: str = '"ab"') -> str:
    text = f"cel.bind(a0, {seed}, "
    for i in range(1, levels):
        text += f"cel.bind(a{i}, a{i - 1} + a{i - 1}, "
    return text + f"a{levels - 1}.size() > 0" + ")" * levels


def test_cost_is_estimated_as_kubernetes_does():
    # literal lists have their exact sizes: 2**4 iterations are cheap (the old regex guess refused this)
    assert isinstance(ENGINE.compile("[1,2].all(a, [1,2].all(b, [1,2].all(c, [1,2].all(d, true))))"), Compiled)
    # device maps have their declared sizes (32 domains x 32 attributes): four nested loops are too many
    nested = (
        "device.attributes.all(d, device.attributes[d].all(k, device.attributes.all(e, "
        "device.attributes[e].all(j, device.attributes[d][k] == device.attributes[e][j]))))"
    )
    problem = ENGINE.compile(nested)
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert problem.message.startswith("too complex, exceeds cost limit: estimated cost ")
    assert "exceeds budget by factor of" in problem.message and "CELSelectorExpressionMaxCost" in problem.message
    # string concatenation costs a tenth of the result size, which is the sum of the operands
    assert isinstance(ENGINE.compile(bind_chain(16)), Compiled)  # 2**16 characters: cost ~13,000
    doubled = 'cel.bind(a, "' + "x" * 100 + '", ' + " + ".join(["a"] * 20) + ' != "")'
    assert isinstance(ENGINE.compile(doubled), Compiled)


def test_cost_finding_points_at_the_part_over_the_limit():
    seed = 'device.attributes["gpu.nvidia.com"].productName'  # at most 64 characters: x4 per level
    names = "abcdefghij"
    expression = f'device.driver == "gpu.nvidia.com" && cel.bind(a, {seed}, '
    for prev, name in zip(names, names[1:]):
        expression += f"cel.bind({name}, {prev} + {prev} + {prev} + {prev}, "
    expression += 'j + j + j + j != ""' + ")" * len(names)
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and "too complex" in problem.message
    assert expression[problem.offset :].startswith("j + j + j + j")


def test_the_compile_cache_is_bounded():
    engine = CelEngine(cache_size=8)
    for index in range(100):
        engine.compile(f'device.driver == "d{index}.example.com"')
    assert len(engine._compiled) == 8
    recent = engine.compile('device.driver == "d99.example.com"')
    assert engine.compile('device.driver == "d99.example.com"') is recent


def test_mixed_attribute_types_are_errors_for_the_device_not_the_run():
    compiled = ENGINE.compile('device.attributes["gpu.nvidia.com"].index > 2')
    for value, expected in ((3, True), (1, False)):
        device = {**DEVICE, "attributes": {"gpu.nvidia.com": {"index": value}}}
        assert ENGINE.evaluate(compiled, device) is expected
    for value in ("three", True, [1]):
        device = {**DEVICE, "attributes": {"gpu.nvidia.com": {"index": value}}}
        assert "No matching overloads" in ENGINE.evaluate(compiled, device)


def test_inputs_over_the_declared_sizes_are_estimated_with_their_own_sizes():
    engine = CelEngine()
    try:
        compiled = engine.compile('device.attributes["x"].s.replace("", device.attributes["x"].s).size() > 0')
        assert isinstance(compiled, Compiled) and compiled.bounded
        assert engine.evaluate(compiled, {**DEVICE, "attributes": {"x": {"s": "a" * 64}}}) is True
        assert engine._sandbox is None  # within the API server's sizes: in-process
        # 5,000 characters: Kubernetes' cost is 1,000 (fine), but the result has 25 million: evaluated in the
        # worker (which, on a loaded machine, may need more than its second)
        result = engine.evaluate(compiled, {**DEVICE, "attributes": {"x": {"s": "a" * 5000}}})
        assert result is True or "gpulint stopped after 1 s" in result
        assert engine._sandbox is not None
        # 3,000,000 characters: each replace() traverses at least 3,000,000 (cost 600,000): over the limit for sure
        twice = engine.compile('device.attributes["x"].s.replace("a", "bb").replace("b", "cc").size() > 0')
        result = engine.evaluate(twice, {**DEVICE, "attributes": {"x": {"s": "a" * 3_000_000}}})
        assert result == (
            "operation cancelled: actual cost limit exceeded (its cost with these inputs is at least "
            "1,200,004, over the limit of 1,000,000)"
        )
    finally:
        engine.close()


def test_policy_expressions_run_here_when_their_inputs_bound_them():
    engine = CelEngine(("object",), max_cost=1_000_000)
    compiled = engine.compile('object.items.all(i, i.name.startsWith("gpu"))')
    data = {"object": {"items": [{"name": f"gpu-{n}"} for n in range(200)]}}
    assert engine.run(compiled, data) == (True, "")
    assert engine._sandbox is None  # the common path never starts the worker


@pytest.mark.timed
@pytest.mark.slow
def test_the_sandbox_answers_and_stops():
    engine = CelEngine(("object",), max_cost=1_000_000)
    try:
        name = "object.s"
        grows = f'{name}.replace("", {name}).replace("", {name}).replace("", {name})'
        small = engine.compile(f'({name}.startsWith("a") ? {grows} : "").size() >= 0')
        value, error = engine.run(small, {"object": {"s": "b" * 600}})  # the short branch: the worker answers
        assert (value, error) == (True, "") and engine._sandbox is not None
        # Timed from here, not from the worker's start-up, which a loaded machine may slow at will: the
        # stop itself is bounded by the sandbox's wall limit for waiting on its CPU second.
        start = time.perf_counter()
        value, error = engine.run(small, {"object": {"s": "a" * 600}})  # 600**3 x 600 characters: stopped
        assert value is None and error.startswith("operation cancelled: actual cost limit exceeded")
        assert "gpulint stopped" in error and time.perf_counter() - start < WALL_SECONDS + 2
        assert engine.run(engine.compile("object.s.size() == 1"), {"object": {"s": "b"}}) == (True, "")
    finally:
        engine.close()


@pytest.mark.parametrize(
    "expression",
    [
        'sets.contains(["a"], ["a"])',
        '["b", "a"].sort()[0] == "a"',
        'isURL("https://example.com")',
        # indexOf on a list shares its name with the strings extension's
        "[1, 2].indexOf(2) == 1",
    ],
)
def test_kubernetes_functions_it_cannot_run_are_not_errors(expression):
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and not problem.evaluable


@pytest.mark.timed
def test_regexes_cannot_backtrack_catastrophically():
    device = {**DEVICE, "attributes": {"x": {"s": "a" * 5000 + "!"}}}
    start = time.perf_counter()
    assert run('device.attributes["x"].s.matches("^(a+)+$")', device) is False
    assert time.perf_counter() - start < 1.0


def test_each_expression_compiles_once():
    engine = CelEngine()
    assert engine.compile("true") is engine.compile("true")


TOKENS = st.sampled_from(
    [
        "device",
        ".",
        "attributes",
        "capacity",
        "driver",
        '["gpu.nvidia.com"]',
        "[",
        "]",
        "(",
        ")",
        "productName",
        "memory",
        "==",
        "!=",
        "&&",
        "||",
        "!",
        '"x"',
        "1",
        "2.5",
        "true",
        "quantity(",
        'quantity("1Gi")',
        "semver(",
        '"1.2.3"',
        ".compareTo(",
        ".isGreaterThan(",
        ".?",
        "orValue(",
        "has(",
        "cel.bind(",
        ",",
        " ",
        "size(",
        ".exists(",
        "a",
        ".all(",
        ".matches(",
        '"^a+$"',
        "sets.contains(",
        "{",
        "}",
        ":",
        "-",
        "?",
        ".major()",
    ]
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=25).map("".join))
def test_random_expressions_never_crash(expression):
    compiled = ENGINE.compile(expression)
    if isinstance(compiled, CelProblem):
        assert 0 <= compiled.offset <= max(len(expression), 10240)
    else:
        assert isinstance(ENGINE.evaluate(compiled, DEVICE), (bool, str))


def test_policy_variables_filled_in_place_are_measured_each_time():
    engine = CelEngine(("variables",), max_cost=1_000_000)
    variables: dict = {}
    assert engine.run(engine.compile("size(variables) == 0"), {"variables": variables}) == (True, "")
    variables["big"] = "a" * 3_000_000  # the policy environment adds each variable's value to the same map
    value, error = engine.run(
        engine.compile('variables.big.replace("a", "bb").replace("b", "cc").size() > 0'), {"variables": variables}
    )
    assert value is None and error.startswith(
        "operation cancelled: actual cost limit exceeded (its cost with these inputs is at least"
    )


POLICY_ENGINE = CelEngine(variables=("object",))
POD = {"status": {"podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}, {"ip": "fd00:10:244::7"}]}}


def policy(expression: str, obj=POD):
    compiled = POLICY_ENGINE.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    return POLICY_ENGINE.run(compiled, {"object": obj})


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        # the IP and CIDR libraries (apiserver pkg/cel/library ip.go, cidr.go)
        ('cidr("10.244.0.0/16").containsIP(object.status.podIP)', True),
        ('cidr("10.245.0.0/16").containsIP(ip(object.status.podIP))', False),
        ("object.status.podIPs.all(p, isIP(p.ip) && ip(p.ip).family() in [4, 6])", True),
        ("object.status.podIPs.filter(p, ip(p.ip).family() == 6).size()", 1),
        ('string(ip("2001:0db8:0000:0000:0000:0000:0000:0001"))', "2001:db8::1"),  # canonical form
        ('ip("2001:db8::1") == ip("2001:DB8:0::1")', True),  # equal addresses, different texts
        ('ip.isCanonical("2001:db8::1") && !ip.isCanonical("2001:db8:0::1")', True),
        ('cidr("10.0.0.7/8").masked() == cidr("10.0.0.0/8")', True),
        ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR("10.0.0.0/8")', True),
        ('cidr("10.0.0.0/8").containsIP("fd00::1")', False),  # another family: not contained
        ('isCIDR("10.0.0.0/33") || isCIDR("10.0.0.0/08") || isIP("::ffff:1.2.3.4") || isIP("fe80::1%eth0")', False),
        # the lists library (lists.go)
        ("[1, 2, 2, 3].isSorted() && ![2, 1].isSorted()", True),
        ("[3, 1, 2].sum()", 6),
        ("[1.5, 2.5].sum()", 4.0),
        ("[].sum()", 0),
        ('["b", "c", "a"].min() + ["b", "c", "a"].max()', "ac"),
        # the regex library (regex.go): RE2 as Go's regexp
        ('"gpu-0 gpu-12 cpu-3".find("gpu-[0-9]+")', "gpu-0"),
        ('"gpu-0 gpu-12 cpu-3".findAll("gpu-[0-9]+")', ["gpu-0", "gpu-12"]),
        ('"gpu-0 gpu-12 cpu-3".findAll("[0-9]+", 2)', ["0", "12"]),
        ('"abc".findAll("b*")', ["", "b", ""]),  # Go: no empty match right after a match (Python's re adds one)
        ('"abc".find("x")', ""),
    ],
)
def test_kubernetes_libraries_evaluate_as_the_api_server_does(expression, value):
    assert policy(expression) == (value, "")


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ('ip("10.0.0.01")', 'ParseAddr("10.0.0.01"): IPv4 field has octet with leading zero'),
        ('ip("fe80::1%eth0")', 'IP address "fe80::1%eth0" with zone value is not allowed'),
        ('ip("::ffff:1.2.3.4")', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
        ('cidr("10.0.0.0/33")', 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
        ("[].max()", "max called on empty list"),
        ('"a".find("(")', "Illegal regex: error parsing regexp: missing ): ("),
    ],
)
def test_kubernetes_library_errors_are_worded_as_kubernetes_words_them(expression, error):
    value, found = policy(expression)
    assert value is None and error in found


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ('isIP(cidr("10.0.0.0/8"))', "found no matching overload for 'isIP' applied to '(net.CIDR)'"),
        ('cidr("10.0.0.0/8").containsIP(1)', "found no matching overload for 'containsIP'"),
        ('["a"].sum()', "found no matching overload for 'sum' applied to '(list(string))'"),
        ('"abc".charAt("1")', "found no matching overload for 'charAt'"),  # the strings extension, declared
    ],
)
def test_library_type_errors_are_compile_errors(expression, words):
    problem = POLICY_ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable and words in problem.message


def test_the_libraries_follow_the_kubernetes_version():
    """base.go: IP and CIDR from 1.30, format from 1.31, join (strings v2) from 1.29; a new expression gets
    the libraries of the compatibility version, the release before the cluster's."""
    for version, available in (("1.30", False), ("1.31", True)):
        compiled = CelEngine(variables=("object",), version=version).compile('isIP("10.0.0.1")')
        assert isinstance(compiled, Compiled) is available, (version, compiled)
    old = CelEngine(variables=("object",), version="1.28").compile('["a", "b"].join("-") == "a-b"')
    assert isinstance(old, CelProblem) and "undeclared reference to 'join'" in old.message
    assert isinstance(CelEngine(variables=("object",), version="1.30").compile('["a"].join("-")'), Compiled)


def test_library_costs_are_estimated_as_kubernetes_does():
    checked = POLICY_ENGINE.checked('cidr("10.0.0.0/8").containsIP(object.status.podIP)')
    assert not isinstance(checked, CelProblem)
    from gpulint.kube.cel import cost as cel_cost

    # cidr("10.0.0.0/8") 1, containsIP 1..4 (two 4- or 16-byte addresses) plus parsing the string (0..64
    # characters: 0..7), object.status.podIP 1 (object is dyn: cel-go's costSelect charges a field only of a
    # map, a message or a type parameter)
    assert cel_cost.estimate(checked, cel_cost.uniform_sizes({"object": 64}), 10**6).cost == (3, 13)


@pytest.mark.parametrize(
    ("ip", "matches"),
    [("10.1.2.3", True), ("10.255.255.255", True), ("11.0.0.0", False), ("fd00::1", False)],
)
def test_a_selector_on_a_network_device_address(ip, matches):
    """A DRA NIC's address attribute, selected by subnet as a driver's docs do (the IP/CIDR libraries)."""
    device = {**DEVICE, "attributes": {"dra.net": {"ip": ip, "rdma": True}}}
    assert (
        run(
            'device.attributes["dra.net"].rdma && cidr("10.0.0.0/8").containsIP(device.attributes["dra.net"].ip)',
            device,
        )
        is matches
    )


def test_a_selector_on_an_address_that_does_not_parse_is_a_runtime_error():
    device = {**DEVICE, "attributes": {"dra.net": {"ip": "10.0.0.300"}}}
    error = run('cidr("10.0.0.0/8").containsIP(device.attributes["dra.net"].ip)', device)
    assert (
        error
        == 'IP Address "10.0.0.300" parse error during conversion from string: ParseAddr("10.0.0.300"): IPv4 field has value >255'
    )


def _version_device() -> dict:
    from cel_versions import DEVICE
    from oracle_families import cel_device

    return cel_device(DEVICE)


def _outcome(expression: str) -> bool | str:
    from cel_versions import COMPILE, ERROR, TOO_COMPLEX

    compiled = ENGINE.compile(expression)
    if isinstance(compiled, CelProblem):
        assert compiled.evaluable, compiled
        return TOO_COMPLEX if compiled.message.startswith("too complex") else COMPILE
    result = ENGINE.evaluate(compiled, _version_device())
    return result if isinstance(result, bool) else ERROR


def _version_cases():
    from cel_versions import HASH_CASES, INT_CASES, LITERAL_CASES, MAP_KEY_CASES, VERSION_CASES

    return VERSION_CASES + INT_CASES + HASH_CASES + LITERAL_CASES + MAP_KEY_CASES


@pytest.mark.parametrize("expression, kubernetes", _version_cases())
def test_version_attributes_behave_as_kubernetes_semver(expression, kubernetes):
    """A version attribute is kubernetes.Semver, not a string (tests/cel_versions.py: Kubernetes' outcomes,
    from the oracle); int() of a bool has no overload, as in cel-go; a conversion of a constant that fails
    is a compile error."""
    assert _outcome(expression) == kubernetes


def _unrepresented_cases():
    from cel_versions import UNREPRESENTED_CASES

    return UNREPRESENTED_CASES


@pytest.mark.parametrize("expression, kubernetes", _unrepresented_cases())
def test_a_map_keyed_by_a_double_or_a_null_is_no_verdict(expression, kubernetes):
    """cel-go keys a map by a double or a null (``kubernetes``: its outcome); cel-cpp's maps cannot hold one, so
    gpulint claims nothing, even when another error ends the evaluation, and absorbs it where cel-go would."""
    compiled = ENGINE.compile(expression)
    assert isinstance(compiled, Compiled)
    assert ENGINE.evaluate(compiled, _version_device()) == UNREPRESENTED
    if kubernetes is True:
        compiled = ENGINE.compile(f"({expression}) || true")
        assert isinstance(compiled, Compiled)
        assert ENGINE.evaluate(compiled, _version_device()) is True
    compiled = ENGINE.compile(f'device.attributes["x"].missing == 1 && ({expression})')
    assert isinstance(compiled, Compiled)
    assert ENGINE.evaluate(compiled, _version_device()) == UNREPRESENTED


def test_an_operation_semver_lacks_is_worded_as_kubernetes_words_it():
    assert _outcome('device.attributes["gpu.example.com"].v > "a"') == "error"
    compiled = ENGINE.compile('device.attributes["gpu.example.com"].v.startsWith("1")')
    assert isinstance(compiled, Compiled)
    message = ENGINE.evaluate(compiled, _version_device())
    assert isinstance(message, str) and message.startswith("no such overload"), message
    assert "\ue000" not in message


def test_a_binding_after_a_comprehension_that_stopped_early_reads_its_own_value():
    """cel-cpp's lazy cel.bind read a value left stale by an exists() that stopped at its first element:
    false where Kubernetes says "no such key" (policies as selectors)."""
    engine = CelEngine(variables=("object",))
    compiled = engine.compile('["a", "b"].exists(k, k == "a") && cel.bind(x, object.missing, x == 1)')
    assert isinstance(compiled, Compiled)
    value, error = engine.run(compiled, {"object": {"present": 1}})
    assert value is None and "missing" in error
    clean = engine.compile('["a", "b"].exists(k, k == "a") && cel.bind(x, object.present, x == 1)')
    assert isinstance(clean, Compiled) and engine.run(clean, {"object": {"present": 1}}) == (True, "")
    unused = engine.compile("cel.bind(x, object.missing, true)")  # never read: no error, as in cel-go
    assert isinstance(unused, Compiled) and engine.run(unused, {"object": {}}) == (True, "")


def test_a_version_hashed_fails_the_whole_evaluation_and_only_that_one():
    """cel-go panics hashing a Semver and Eval returns the panic as its error, past the || that would absorb an
    error; the next evaluation on the same engine starts clean (the panic is recorded per evaluation)."""
    engine = CelEngine()
    device = _version_device()
    hashed = engine.compile('device.attributes["gpu.example.com"].v in ["1.2.3"] || true')
    assert isinstance(hashed, Compiled)
    assert engine.evaluate(hashed, device) == "internal error: runtime error: hash of unhashable type cel.Semver"
    clean = engine.compile('device.attributes["gpu.example.com"].s in ["1.2.3"] || true')
    assert isinstance(clean, Compiled) and engine.evaluate(clean, device) is True
    policy = CelEngine(variables=("object",))
    hashed_in_policy = policy.compile('{semver("1.0.0"): 1}.size() == 1 || true')
    assert isinstance(hashed_in_policy, Compiled)
    assert policy.run(hashed_in_policy, {"object": {}}) == (None, rewrite.UNHASHABLE)
    after = policy.compile("true || false")
    assert isinstance(after, Compiled) and policy.run(after, {"object": {}}) == (True, "")


def test_a_literal_of_mixed_types_is_refused_where_kubernetes_refuses_it():
    """cel.HomogeneousAggregateLiterals: the first element of another type than the first, with its offset."""
    expression = 'device.attributes["gpu.example.com"].model in ["A100", 80]'
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert problem.message == "compilation failed: expected type 'string' but found 'int'"
    assert expression[problem.offset :] == "80]"
    # a type gpulint declares more loosely than Kubernetes (dyn for a library's type parameter) decides nothing
    assert isinstance(ENGINE.compile('[device.attributes["gpu.example.com"].models[0], "a"].size() == 2'), Compiled)


def test_a_failing_conversion_of_a_constant_is_a_compile_error_at_the_call():
    problem = ENGINE.compile('device.driver == "x" || int(dyn(true)) == 1')
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert problem.message == "program instantiation failed: no such overload: int(bool)"
    assert 'device.driver == "x" || int(dyn(true)) == 1'[problem.offset :].startswith("(dyn(true))")


def test_an_expression_too_deep_for_the_guarded_program_runs_as_written():
    """The guards nest each operand deeper; past the depth protobuf parses, the program runs unguarded
    (30 chained + evaluate, as Kubernetes does, instead of "cannot evaluate offline")."""
    chained = " + ".join(["a"] * 30)
    compiled = ENGINE.compile(f'cel.bind(a, device.attributes["gpu.nvidia.com"].type, {chained} != "")')
    assert isinstance(compiled, Compiled), compiled
    assert ENGINE.evaluate(compiled, DEVICE) is True


def test_quantity_identities_are_the_engines_own_and_carried_across_its_evaluations():
    """Each quantity() is a new Quantity (a new pointer in Kubernetes, its tag's identity here). The identities are
    the engine's own, not the process's: a fresh engine makes the same ones whatever other engines made. A policy's
    variable carries a Quantity one evaluation made into the next, where a new quantity() of the same value is still
    another map key (cel-go's map literal hashes the pointer), so an engine never renews them per evaluation."""

    def evaluate(engine: CelEngine, expression: str, variables: dict) -> object:
        compiled = engine.compile(expression)
        assert isinstance(compiled, Compiled), compiled
        value, error = engine.run(compiled, {"object": {}, "variables": variables})
        assert not error, error
        return value

    policies = CelEngine(("object", "variables"))
    made = evaluate(policies, 'quantity("1")', {})
    assert evaluate(policies, 'quantity("1")', {}) != made  # another Quantity, of the same value
    assert evaluate(policies, '{variables.q: 1, quantity("1"): 2}.size() == 2', {"q": made}) is True
    assert evaluate(policies, "{variables.q: 1, variables.q: 2}.size() == 1", {"q": made}) is True
    assert evaluate(policies, 'variables.q == quantity("1")', {"q": made}) is True  # equal by value
    other = CelEngine(("object", "variables"))
    evaluate(other, 'quantity("2").add(1)', {})
    assert evaluate(CelEngine(("object", "variables")), 'quantity("1")', {}) == made
