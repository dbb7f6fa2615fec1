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
