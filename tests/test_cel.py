"""CEL as Kubernetes evaluates DRA selectors: libraries, device semantics, errors, limits."""
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.cel import CelEngine, CelProblem, Compiled, device_value

ENGINE = CelEngine()
DEVICE = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "gpu.nvidia.com": {name: device_value(value) for name, value in {
            "type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"},
            "driverVersion": {"version": "570.124.6"}, "cudaComputeCapability": {"version": "9.0.0"},
            "index": {"int": 3}, "mig": {"bool": False}}.items()},
        "resource.kubernetes.io": {"pcieRoot": "pci0000:17"},
    },
    "capacity": {"gpu.nvidia.com": {"memory": device_value({"value": "80Gi"})}},
    "allowMultipleAllocations": False,
}


def run(expression: str, device=DEVICE):
    compiled = ENGINE.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    return ENGINE.evaluate(compiled, device)


@pytest.mark.parametrize("expression", [
    # the Kubernetes quantity library docs
    'quantity("200M").compareTo(quantity("0.2G")) == 0',
    'quantity("50M").compareTo(quantity("50Mi")) == -1',
    'quantity("1Gi") == quantity("1024Mi")',
    'isQuantity("1.5Gi") && !isQuantity("1.5GiB")',
    'quantity("1.5").add(1).isGreaterThan(quantity("2"))',
    'quantity("2").sub(quantity("500m")).asApproximateFloat() == 1.5',
    'quantity("4").asInteger() == 4 && quantity("4").isInteger() && !quantity("500m").isInteger()',
    'quantity("-3").sign() == -1',
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
    '!device.allowMultipleAllocations',
])
def test_kubernetes_semantics(expression):
    assert run(expression) is True


def test_unknown_attribute_is_a_runtime_error_with_the_kubernetes_hint():
    result = run('device.attributes["gpu.nvidia.com"].model == "H100"')
    assert isinstance(result, str) and "model" in result
    assert result.endswith("consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                           "with has() for optional fields")
    assert isinstance(run('device.attributes["nope.example.com"].model == "x"'), str)


def test_invalid_quantity_is_a_runtime_error():
    assert "suffix" in run('quantity("200K") == quantity("1")')


@pytest.mark.parametrize("expression, words, offset", [
    ('device.productName == "x"', "undefined field 'productName'", 7),
    ('device.attributes["gpu.nvidia.com"].type ==', "compilation failed", None),
    ('device.attributes["gpu.nvidia.com"].type.size()', "must evaluate to bool or the unknown type, not int", 0),
    ("1 + 2", "must evaluate to bool or the unknown type, not int", 0),
    ('device.driver.frobnicate()', "undeclared reference to 'frobnicate'", 24),  # cel reports the call's paren
    ('quantity(1) == quantity("1")', "no matching overload for 'quantity'", 8),
])
def test_compile_errors_have_positions(expression, words, offset):
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert words in problem.message
    if offset is not None:
        assert problem.offset == offset


def test_length_and_cost_limits():
    long = " || ".join(['device.driver == "gpu.nvidia.com"'] * 400)
    assert "10240" in ENGINE.compile(long).message
    nested = "[1,2].all(a, [1,2].all(b, [1,2].all(c, [1,2].all(d, true))))"
    assert "exceeds the selector budget" in ENGINE.compile(nested).message
    assert isinstance(ENGINE.compile("[1,2].all(a, [1,2].exists(b, a == b))"), Compiled)


@pytest.mark.parametrize("expression", [
    'sets.contains(["a"], ["a"])', '["b", "a"].sort()[0] == "a"',
    'device.attributes["gpu.nvidia.com"].productName.find("H1.0") == "H100"',
    'isURL("https://example.com")',
])
def test_kubernetes_functions_it_cannot_run_are_not_errors(expression):
    problem = ENGINE.compile(expression)
    assert isinstance(problem, CelProblem) and not problem.evaluable


def test_regexes_cannot_backtrack_catastrophically():
    device = {**DEVICE, "attributes": {"x": {"s": "a" * 5000 + "!"}}}
    start = time.perf_counter()
    assert run('device.attributes["x"].s.matches("^(a+)+$")', device) is False
    assert time.perf_counter() - start < 1.0


def test_each_expression_compiles_once():
    engine = CelEngine()
    assert engine.compile("true") is engine.compile("true")


TOKENS = st.sampled_from([
    "device", ".", "attributes", "capacity", "driver", '["gpu.nvidia.com"]', "[", "]", "(", ")", "productName",
    "memory", "==", "!=", "&&", "||", "!", '"x"', "1", "2.5", "true", "quantity(", 'quantity("1Gi")', "semver(",
    '"1.2.3"', ".compareTo(", ".isGreaterThan(", ".?", "orValue(", "has(", "cel.bind(", ",", " ", "size(",
    ".exists(", "a", ".all(", ".matches(", '"^a+$"', "sets.contains(", "{", "}", ":", "-", "?", ".major()",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=25).map("".join))
def test_random_expressions_never_crash(expression):
    compiled = ENGINE.compile(expression)
    if isinstance(compiled, CelProblem):
        assert 0 <= compiled.offset <= max(len(expression), 10240)
    else:
        assert isinstance(ENGINE.evaluate(compiled, DEVICE), (bool, str))
