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
