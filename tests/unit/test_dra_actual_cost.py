"""A DRA selector's actual cost on a device (issue #33): the allocator runs each selector with
cel.CostLimit(CELSelectorExpressionMaxCost), 1,000,000 (k8s.io/dynamic-resource-allocation v0.37.2
cel/compile.go), and fails the evaluation with "operation cancelled: actual cost limit exceeded" past it.
Only a device past the sizes the API server enforces (an inventory file can hold one) can get there; gpulint
used to decide such an evaluation by its estimate and then by the worker's CPU time, so a selector that
short-circuits past a cheap term was run to its end and matched. The cost is now counted as cel-go counts it
(gpulint.kube.cel.actual_cost); the oracle holds the same cases against the allocator's own code."""

from __future__ import annotations

from typing import Any

import pytest
from oracle_families import cel_device

from gpulint.kube.cel.engine import COST_EXCEEDED, CelEngine, Compiled

DRIVER = "gpu.example.com"
ATTRIBUTES = f'device.attributes["{DRIVER}"]'
SHORT_CIRCUIT = f"{ATTRIBUTES}.serial == 'no' || {ATTRIBUTES}.serial.contains({ATTRIBUTES}.model)"
# a loop that stops at the first match: the estimate's minimum is one iteration
LOOP = f'["a", "b", "c"].exists(s, {ATTRIBUTES}.serial.endsWith(s) || {ATTRIBUTES}.serial.contains({ATTRIBUTES}.model))'


def case(expression: str, serial: int, model: int) -> dict[str, Any]:
    attributes = {"serial": {"string": "x" * serial}, "model": {"string": "x" * model}}
    return {"expression": expression, "driver": DRIVER, "attributes": attributes, "capacity": {}}


def evaluate(expression: str, serial: int, model: int) -> bool | str:
    engine = CelEngine()
    compiled = engine.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    try:
        return engine.evaluate(compiled, cel_device(case(expression, serial, model)))
    finally:
        engine.close()


def test_a_selector_that_passes_the_limit_after_a_short_circuit_fails_as_in_the_allocator():
    # before: the estimate's minimum (the left side alone) was under the limit, the worker finished the
    # contains() of 20,000 and 10,000 characters in its second, and the device matched
    result = evaluate(SHORT_CIRCUIT, 20_000, 10_000)
    assert isinstance(result, str) and result.startswith(COST_EXCEEDED)
    assert "counted as Kubernetes counts it" in result


def test_a_loop_that_reaches_the_expensive_term_fails_too():
    result = evaluate(LOOP, 20_000, 10_000)
    assert isinstance(result, str) and result.startswith(COST_EXCEEDED)


def test_the_same_selectors_on_devices_of_allowed_or_moderate_sizes_match():
    assert evaluate(SHORT_CIRCUIT, 20, 10) is True
    assert evaluate(SHORT_CIRCUIT, 2_000, 1_000) is True  # 200 x 100: far under the limit
    assert evaluate(LOOP, 2_000, 1_000) is True


@pytest.mark.oracle
def test_the_allocator_cancels_exactly_these(oracle):
    cases = [case(e, s, m) for e in (SHORT_CIRCUIT, LOOP) for s, m in ((20_000, 10_000), (2_000, 1_000), (9, 3))]
    answers = oracle.ask("cel", cases, {"DRAListTypeAttributes": True})
    for item, answer in zip(cases, answers):
        ours = evaluate(
            item["expression"], len(item["attributes"]["serial"]["string"]), len(item["attributes"]["model"]["string"])
        )
        cancelled = COST_EXCEEDED in answer.get("eval_error", "")
        assert (isinstance(ours, str) and ours.startswith(COST_EXCEEDED)) == cancelled, (item["expression"], answer)
        if not cancelled:
            assert ours == answer["match"], (item["expression"], answer)


# Quantity and Semver values (issue #33): counted with Kubernetes' library costs (k8s.io/apiserver v0.37.2
# pkg/cel/library/cost.go); they used to go to the worker uncounted, which finished the contains() and matched
CAPACITY = f'device.capacity["{DRIVER}"]'
EXPENSIVE = f"{ATTRIBUTES}.serial.contains({ATTRIBUTES}.model)"
QUANTITY_FIRST = f'{CAPACITY}.memory.isGreaterThan(quantity("40Gi")) && {EXPENSIVE}'
SEMVER_FIRST = f'{ATTRIBUTES}.driverVersion.compareTo(semver("1.0.0")) > 0 && {EXPENSIVE}'
# a Semver hashed (a list of constants is a Go map after OptOptimize): cel-go panics, the evaluation ends there
SEMVER_HASHED = f'{ATTRIBUTES}.driverVersion in ["1.2.3"] || {EXPENSIVE}'


def typed_case(expression: str, memory: str, version: str, serial: int = 20_000, model: int = 10_000) -> dict[str, Any]:
    item = case(expression, serial, model)
    item["attributes"]["driverVersion"] = {"version": version}
    item["capacity"] = {"memory": {"value": memory}}
    return item


def evaluate_typed(item: dict[str, Any]) -> bool | str:
    engine = CelEngine()
    compiled = engine.compile(item["expression"])
    assert isinstance(compiled, Compiled), compiled
    try:
        return engine.evaluate(compiled, cel_device(item))
    finally:
        engine.close()


def test_a_quantity_or_semver_test_before_the_expensive_term_is_counted():
    for expression in (QUANTITY_FIRST, SEMVER_FIRST):
        result = evaluate_typed(typed_case(expression, "80Gi", "1.2.3"))
        assert isinstance(result, str) and result.startswith(COST_EXCEEDED), expression
        assert "counted as Kubernetes counts it" in result


def test_a_quantity_or_semver_test_that_short_circuits_does_not_match_and_is_no_error():
    assert evaluate_typed(typed_case(QUANTITY_FIRST, "1Gi", "1.2.3")) is False
    assert evaluate_typed(typed_case(SEMVER_FIRST, "80Gi", "0.9.0")) is False
    # devices of the sizes the API server allows: evaluated as before
    assert evaluate_typed(typed_case(QUANTITY_FIRST, "80Gi", "1.2.3", 20, 10)) is True


def test_a_hashed_semver_fails_with_cel_go_s_panic_not_the_cost_limit():
    result = evaluate_typed(typed_case(SEMVER_HASHED, "80Gi", "1.2.3"))
    assert result == "internal error: runtime error: hash of unhashable type cel.Semver"


@pytest.mark.oracle
def test_the_allocator_cancels_exactly_these_quantity_and_semver_selectors(oracle):
    cases = [
        typed_case(e, memory, version, s, m)
        for e in (QUANTITY_FIRST, SEMVER_FIRST, SEMVER_HASHED)
        for memory, version in (("80Gi", "1.2.3"), ("1Gi", "0.9.0"))
        for s, m in ((20_000, 10_000), (20, 10))
    ]
    answers = oracle.ask("cel", cases, {"DRAListTypeAttributes": True})
    for item, answer in zip(cases, answers):
        ours = evaluate_typed(item)
        cancelled = COST_EXCEEDED in answer.get("eval_error", "")
        assert (isinstance(ours, str) and ours.startswith(COST_EXCEEDED)) == cancelled, (item["expression"], answer)
        if not cancelled:
            assert ours == answer.get("match", answer.get("eval_error")), (item["expression"], answer)


# Quantities and Semvers inside lists and maps, and looked up with `in` (issue #33): cel-go's in_list charges the
# list's size and baseList.Contains asks value.Equal(item); list and map equality let a failing element comparison
# ("no such overload") count as equal (cel-go v0.29.2 common/types list.go, map.go). They went to the worker
# uncounted, which finished the contains() and matched
LISTED_QUANTITY = f'quantity("1Gi") in [{CAPACITY}.memory, quantity("2Gi")] || {EXPENSIVE}'
LISTED_SEMVER = f'semver("9.1.0") in [{ATTRIBUTES}.driverVersion] || {EXPENSIVE}'
# Semver.Equal("0.0.0") fails: inside a list that counts as equal, so the list equality is true and decides
LIST_EQUALITY_DECIDES = f'[{ATTRIBUTES}.driverVersion] == ["0.0.0"] || {EXPENSIVE}'
# cel-go's evalList stops at the first failing element: the contains() after it is never evaluated
LIST_STOPS_AT_ERROR = f'[quantity("x").isInteger(), {EXPENSIVE}].size() > 0'
LISTED_CASES = (LISTED_QUANTITY, LISTED_SEMVER, LIST_EQUALITY_DECIDES, LIST_STOPS_AT_ERROR)


def test_a_quantity_or_semver_in_a_list_before_the_expensive_term_is_counted():
    for expression in (LISTED_QUANTITY, LISTED_SEMVER):
        result = evaluate_typed(typed_case(expression, "80Gi", "1.2.3"))
        assert isinstance(result, str) and result.startswith(COST_EXCEEDED), expression
        assert "counted as Kubernetes counts it" in result


def test_the_same_listed_selectors_on_devices_of_allowed_sizes_are_evaluated():
    assert evaluate_typed(typed_case(LISTED_QUANTITY, "80Gi", "1.2.3", 20, 10)) is True
    assert evaluate_typed(typed_case(LISTED_SEMVER, "80Gi", "1.2.3", 20, 10)) is True
    assert evaluate_typed(typed_case(LISTED_QUANTITY, "1Gi", "1.2.3")) is True  # found: nothing expensive
    assert evaluate_typed(typed_case(LISTED_SEMVER, "80Gi", "9.1.0")) is True


def test_a_failing_element_comparison_or_a_failing_element_ends_before_the_expensive_term():
    assert evaluate_typed(typed_case(LIST_EQUALITY_DECIDES, "80Gi", "1.2.3")) is True
    result = evaluate_typed(typed_case(LIST_STOPS_AT_ERROR, "80Gi", "1.2.3"))
    assert isinstance(result, str) and not result.startswith(COST_EXCEEDED), result
    assert result.startswith("quantities must match")


@pytest.mark.oracle
def test_the_allocator_counts_these_listed_selectors_alike(oracle):
    cases = [
        typed_case(e, memory, version, s, m)
        for e in LISTED_CASES
        for memory, version in (("80Gi", "1.2.3"), ("1Gi", "9.1.0"))
        for s, m in ((20_000, 10_000), (20, 10))
    ]
    answers = oracle.ask("cel", cases, {"DRAListTypeAttributes": True})
    for item, answer in zip(cases, answers):
        ours = evaluate_typed(item)
        cancelled = COST_EXCEEDED in answer.get("eval_error", "")
        assert (isinstance(ours, str) and ours.startswith(COST_EXCEEDED)) == cancelled, (item["expression"], answer)
        if not cancelled:
            assert ours == answer.get("match", answer.get("eval_error")), (item["expression"], answer)


# Reads on literals and calls, keys and ?: branches (issue #33). cel-go plans `x.f` and `x[k]` on a value that is
# no attribute (a literal, a call) as a relative attribute, charged 1 as any attribute beside its qualifiers
# (cel-go v0.29.2 interpreter/planner.go relativeAttr, runtimecost.go Observe): gpulint counted 1 below. An
# attribute that is an index's key or a ?: branch is resolved as a part of another attribute, never observed
# itself: its qualifiers are charged, its own 1 is not (attributes.go attrQualifier, conditionalAttribute):
# gpulint counted a key 1 above cel-go and a branch's qualifiers not at all. Costs are the oracle's.
DEVICE = {"memory": "40Gi", "version": "1.2.3", "model": "a100"}
MEMORY = f"{CAPACITY}.memory"
CORES = f"{CAPACITY}.cores"
VERSION = f"{ATTRIBUTES}.driverVersion"
READS = [
    ('{"a": 1}.a == 1', 3),
    (f'["a100"][0] == {ATTRIBUTES}.model', 7),
    ('{"a": {"b": 1}}.a.b == 1', 4),
    ("[1, 2][[0][0]] == 1", 4),
    ('!has({"a": 1}.b)', 2),
    ('{"a": device.driver}.a == "gpu.example.com"', 36),
    ('{"a100": 1}["a" + "100"] == 1', 4),
    # above cel-go before: an attribute key (its own 1 is not charged)
    (f"{ATTRIBUTES}[{ATTRIBUTES}.model] == 1 || true", 8),
    ('device.attributes[device.driver].model == "a100"', 6),
    # a branch's qualifiers are charged (gpulint said 1 and 2)
    (f'(true ? {ATTRIBUTES}.model : "x") == "a100"', 4),
    (f'(true ? {ATTRIBUTES} : {{}}).model == "a100"', 4),
    ("(true ? [1][0] : 2) == 1", 2),
    # clean: a ?: operand is an attribute itself, a variable is one
    ('(true ? {"a": 1} : {"a": 2}).a == 1', 2),
    ('cel.bind(m, {"a": 1}, m.a == 1)', 3),
]


def device_case(expression: str) -> dict[str, Any]:
    attributes = {"model": {"string": DEVICE["model"]}, "driverVersion": {"version": DEVICE["version"]}}
    capacity = {"memory": {"value": DEVICE["memory"]}, "cores": {"value": "40Gi"}}
    return {"expression": expression, "driver": DRIVER, "attributes": attributes, "capacity": capacity}


def count_and_outcome(expression: str) -> tuple[int | None, bool | str]:
    engine = CelEngine()
    try:
        compiled = engine.compile(expression)
        assert isinstance(compiled, Compiled), compiled
        device = cel_device(device_case(expression))
        counted = engine.device_count(compiled, device)
        return (None if counted is None else counted.cost), engine.evaluate(compiled, device)
    finally:
        engine.close()


@pytest.mark.parametrize("expression, cost", READS)
def test_reads_on_literals_keys_and_branches_count_as_cel_go_counts(expression, cost):
    assert count_and_outcome(expression) == (cost, True)


# Quantities and Semvers as map keys and looked up in maps (issue #33). cel-go's map literal is a Go map of
# ref.Val (interpreter/interpretable.go evalMap): a repeated key keeps its last value (cel-cpp failed, "duplicate
# key in map"), and Kubernetes' Quantity (apiserver pkg/cel/quantity.go, a struct of one pointer) is hashed by its
# pointer: two quantity() calls are two keys, a capacity read twice is one. An index by a Quantity or a Semver is
# no qualifier ("invalid qualifier type", attributes.go newQualifier); `in` an empty map hashes nothing.
KEYED = [
    ('{quantity("1Gi"): 1}[quantity("1Gi")] == 1', 35, "invalid qualifier type: cel.Quantity"),
    ('cel.bind(q, quantity("1"), {q: 1}[q] == 1)', 35, "invalid qualifier type: cel.Quantity"),
    (f'{{"1.0.0": 1}}[{VERSION}] == 1 || true', 6, True),
    ('{quantity("1Gi"): 1, quantity("1Gi"): 2}.size() == 2', 34, True),
    ('quantity("1") in {quantity("1"): 1}', 33, False),
    ('{quantity("1"): 1} == {quantity("1"): 1}', 63, False),
    ('{quantity("1").add(1): 1}.size() == 1', 34, True),
    (f"{MEMORY} in {{{MEMORY}: 1}}", 39, True),
    (f"{{{MEMORY}: 1, {MEMORY}: 2}}.size() == 1", 40, True),
    (f"{{{MEMORY}: 1, {CORES}: 2}}.size() == 2", 40, True),
    (f"{{{MEMORY}: 1}} == {{{MEMORY}: 1}}", 69, True),
    ('[quantity("1")].exists(q, q in {q: 1})', 49, True),
    ('quantity("1") in [quantity("1")]', 13, True),  # a list compares values
    ('{"a": 1, "a": 2}.a == 2', 3, True),
    (f"{VERSION} in {{}}", 5, False),
    (f'{VERSION} in {{"1.2.3": 1}} || true', 4, "internal error: runtime error: hash of unhashable type cel.Semver"),
    # an int or a bool looked up in a literal's Go map (the count found only strings: false, then && stopped)
    ("cel.bind(m, {1: 0, 2: 1}, 1 in m) && device.driver == 'x'", 5, False),
    ("cel.bind(m, {true: 0}, true in m && !(false in m)) && device.driver == 'x'", 8, False),
]


@pytest.mark.parametrize("expression, cost, outcome", KEYED)
def test_quantities_and_semvers_as_map_keys_count_and_evaluate_as_in_kubernetes(expression, cost, outcome):
    assert count_and_outcome(expression) == (cost, outcome)


@pytest.mark.oracle
def test_the_allocator_counts_and_evaluates_these_reads_and_keys_alike(oracle):
    cases = [(e, c, True) for e, c in READS] + KEYED
    answers = oracle.ask("cel", [device_case(e) for e, _, _ in cases], {"DRAListTypeAttributes": True})
    for (expression, cost, outcome), answer in zip(cases, answers):
        assert answer.get("actual_cost") == cost, (expression, answer)
        assert answer.get("match", answer.get("eval_error")) == outcome, (expression, answer)


# Optionals (issue #33: they went to the worker uncounted). An optional qualifier (`.?f`, `[?k]`) and every one
# after it are charged only when present (cel-go interpretable.go evalWatchConstQual.QualifyIfPresent); orValue()
# and or() are no call to the cost tracker (cel/library.go decorateOptionalOr) and evaluate their argument only on
# none; hasValue(), value(), optional.of() and optional.none() cost 1. Costs from the oracle.
OPTIONALS = [
    ('{"a": 1}.?a.orValue(2) == 1', 3),
    ('{"a": 1}.?b.orValue(2) == 2', 2),
    (f'{ATTRIBUTES}.?model.orValue("") == "a100"', 5),
    (f'{ATTRIBUTES}.?missing.orValue("") == ""', 3),  # "" == "" costs 0
    (f"{ATTRIBUTES}.?missing.hasValue() == false", 5),
    (f'{ATTRIBUTES}.?model.value() == "a100"', 6),
    ('device.attributes["other.example.com"].?model.orValue("x") == "x"', 4),
    (f'device.attributes[?"{DRIVER}"].?model.orValue("x") == "a100"', 5),
    ("device.?attributes.orValue({}).size() > 0", 4),
    (f'{ATTRIBUTES}.?missing.or(optional.of("y")).value() == "y"', 6),
    (f'{ATTRIBUTES}.?missing.orValue({ATTRIBUTES}.model) == "a100"', 8),
    (f'{ATTRIBUTES}.?model.orValue({ATTRIBUTES}.model) == "a100"', 5),  # the argument is not evaluated
    ('{"a": {"b": 1}}.?c.b.orValue(0) == 0', 2),
    ("[1, 2][?5].orValue(5) == 5", 2),
    ('optional.ofNonZeroValue("").hasValue() == false', 3),
]


@pytest.mark.parametrize("expression, cost", OPTIONALS)
def test_optionals_count_as_cel_go_counts(expression, cost):
    assert count_and_outcome(expression) == (cost, True)


@pytest.mark.oracle
def test_the_allocator_counts_these_optionals_alike(oracle):
    answers = oracle.ask("cel", [device_case(e) for e, _ in OPTIONALS], {"DRAListTypeAttributes": True})
    for (expression, cost), answer in zip(OPTIONALS, answers):
        assert (answer.get("actual_cost"), answer.get("match")) == (cost, True), (expression, answer)
