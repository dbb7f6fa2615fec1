"""gpulint's count of a policy expression's actual cost against cel-go's, as the API server runs a
ValidatingAdmissionPolicy (tests/oracle policy_cost.go: k8s.io/apiserver pkg/admission/plugin/cel, the
stored-expressions environment, PerCallLimit). The count is a lower bound: never more than cel-go's, and
"exceeded" only where cel-go cancels the evaluation."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from oracle_client import Oracle
from support.cel_cost import UNIQUE_ENV, counted, nested_all, pod_with_env

pytestmark = pytest.mark.oracle

COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"


def disagreements(oracle: Oracle, cases: list[tuple[str, dict[str, Any]]]) -> list[str]:
    answers = oracle.ask("policy_cost", [{"expression": e, "object": obj} for e, obj in cases])
    found = []
    for (expression, obj), answer in zip(cases, answers):
        if answer.get("compile_error"):
            continue
        ours = counted(expression, obj)
        if ours is None:
            continue
        theirs = answer.get("cost")
        cancelled = COST_EXCEEDED in answer.get("eval_error", "")
        if theirs is not None and ours.cost > theirs:
            found.append(f"{expression} on {obj}: counted {ours.cost:,}, cel-go {theirs:,}")
        if ours.exceeded and not cancelled:
            found.append(f"{expression} on {obj}: counted over the limit, cel-go {answer}")
    return found


def test_the_attacks_and_the_clean_cases_count_as_cel_go_counts(oracle):
    cases = [
        (nested_all(6), {}),
        (nested_all(4), {}),
        (nested_all(6, "a5 > 100"), {}),
        (UNIQUE_ENV, pod_with_env([f"E{i}" for i in range(30)])),
        (UNIQUE_ENV, pod_with_env([f"E{i}" for i in range(400)])),
    ]
    answers = oracle.ask("policy_cost", [{"expression": e, "object": obj} for e, obj in cases])
    for (expression, obj), answer in zip(cases, answers):
        ours = counted(expression, obj)
        assert ours is not None
        assert ours.exceeded == (COST_EXCEEDED in answer.get("eval_error", "")), (expression, answer)
        assert ours.cost == answer["cost"], (expression, answer)  # the subset is counted exactly


NAMES = st.sampled_from(["a", "b", "main", "E1", ""])
CONTAINERS = st.lists(
    st.fixed_dictionaries(
        {
            "name": NAMES,
            "env": st.lists(
                st.fixed_dictionaries({"name": NAMES, "value": st.sampled_from(["v", "vv", ""])}), max_size=12
            ),
            "ports": st.lists(st.integers(-3, 70_000), max_size=6),
        }
    ),
    min_size=1,
    max_size=4,
)


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> str:
    """Bodies over the container (c), its env (e, f) and numbers, with the macros cel-go expands."""
    leaves = [
        'c.name == "main"',
        'c.name.startsWith("m")',
        "c.name.size() > 0",
        "c.env.size() < 5",
        "has(c.env) && c.env.size() * 2 - 1 > 0",
        '"E1" in c.env.map(x, x.name)',
        "c.ports.all(p, p > 0 && p < 65536)",
        "c.ports.exists(p, p % 2 == 0)",
        '(c.name + "-x").contains("a")',
        "c.missing == 1 || true",
        'c.env.filter(x, x.value != "").size() >= 0',
        'c.name in ["a", "b"]',
        'c.env.exists(x, x.name.matches("^E[0-9]+$"))',
    ]
    if depth >= 3 or draw(st.booleans()):
        return draw(st.sampled_from(leaves))
    inner = draw(expressions(depth + 1))
    macro = draw(st.sampled_from(["all", "exists", "exists_one"]))
    join = draw(st.sampled_from(["&&", "||"]))
    if draw(st.booleans()):
        return f"object.spec.containers.{macro}(c{depth}, {inner.replace('c.', f'c{depth}.')}) {join} {inner}"
    return f"c.env.{macro}(e{depth}, e{depth}.name != c.name {join} {inner})"


@settings(
    max_examples=int(os.environ.get("ORACLE_CASES", "2000")) // 50,
    deadline=None,
    derandomize=os.environ.get("CI") == "true" or os.environ.get("ORACLE_DERANDOMIZE") == "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(st.lists(st.tuples(expressions(), CONTAINERS), min_size=50, max_size=50))
def test_counts_are_never_above_cel_go_and_exceeded_only_where_it_cancels(oracle, batch):
    cases = [
        (f"object.spec.containers.all(c, {body})", {"kind": "Pod", "spec": {"containers": containers}})
        for body, containers in batch
    ]
    found = disagreements(oracle, cases)
    assert not found, "\n".join(found[:5])
