"""gpulint's runtime cost budget and lazy variables against the API server's own validator code (tests/oracle
policy_budget.go: k8s.io/apiserver v0.37.2 pkg/admission/plugin/cel, the composited compiler, ForInput with
RuntimeCELCostBudget or RuntimeCELCostBudgetMatchConditions): out of budget exactly where the API server is,
and the spent budget counted as cel-go counts it, variables included once, when first read."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from support.cel_cost import CONTAINS, budget_pod

from gpulint.kube.cel.actual_cost import Composition
from gpulint.kube.cel.engine import Compiled
from gpulint.lint.policies.evaluation import (
    MATCH_CONDITIONS_BUDGET,
    RUNTIME_BUDGET,
    CostBudget,
    policy_engine,
)
from gpulint.lint.policies.model import Expression

pytestmark = pytest.mark.oracle

A, B = "object.metadata.annotations.a", "object.metadata.annotations.b"
CHEAP = 'object.metadata.name == "trainer"'
# over the per-call limit in one call (2,000 x 1,000 on the long object): cheap to count
HUGE = "(object.metadata.annotations.a + object.metadata.annotations.a).contains(object.metadata.annotations.a)"
VARIABLES = [("big", CONTAINS), ("small", CHEAP), ("huge", HUGE), ("through", "variables.big || false")]
READS = [
    CONTAINS,
    CHEAP,
    "variables.big",
    "variables.small && variables.big",
    "false && variables.huge",
    "true && variables.huge",
    "variables.through",
    "variables.small ? true : variables.big",
]


def expression(text: str) -> Expression:
    compiled = policy_engine().compile(text)
    assert isinstance(compiled, Compiled), compiled
    return Expression(text, (), compiled)


def ours(texts: list[str], obj: dict[str, Any], limit: int) -> tuple[bool, int | None]:
    """(out of budget, the exact spend when every expression is counted here)."""
    engine = policy_engine()
    defined = {name: expression(text) for name, text in VARIABLES}
    budget = CostBudget.of(limit, engine, {"object": obj, "variables": {}}, defined)
    out = any(budget.spend(expression(text)) for text in texts)
    composition = Composition(
        {n: e.compiled.checked for n, e in defined.items() if e.compiled}, {"object": obj}, engine.max_cost
    )
    spent: int | None = 0
    for text in texts:
        counted = engine.count(expression(text).compiled, {"object": obj}, composition)  # type: ignore[arg-type]
        spent = None if counted is None or spent is None else spent + counted.cost + composition.take()
    return out, spent


def cases() -> list[tuple[list[str], bool]]:
    sets = [[text] * n for text in READS for n in (1, 3, 11)]
    sets += [list(pair) for pair in itertools.permutations(READS, 2)]
    sets += [[f"({CONTAINS}) == ({A} + {A}).contains({B} + {B})"] * 11]  # computed concatenations cost 1
    sets += [[CONTAINS] * 10, [CONTAINS] * 11, ["variables.big"] * 11, [CONTAINS] * 9 + ["variables.big"] * 2]
    return [(texts, conditions) for texts in sets for conditions in (False, True)]


def test_the_budget_is_spent_as_the_api_server_spends_it(oracle):
    found = []
    for long in (True, False):
        obj = budget_pod(long)
        batch = cases()
        answers = oracle.ask(
            "policy_budget",
            [
                {"variables": VARIABLES, "expressions": texts, "match_conditions": conditions, "object": obj}
                for texts, conditions in batch
            ],
        )
        for (texts, conditions), answer in zip(batch, answers):
            assert "oracle_error" not in answer, answer
            limit = MATCH_CONDITIONS_BUDGET if conditions else RUNTIME_BUDGET
            out, spent = ours(texts, obj, limit)
            if out != answer.get("out_of_budget", False):
                found.append(f"{texts} (limit {limit:,}): ours {out}, the API server {answer}")
            if not out and spent is not None and spent != answer["spent"]:
                found.append(f"{texts}: counted {spent:,}, the API server spent {answer['spent']:,}")
    assert not found, "\n".join(found[:20])


MESSAGES = [f'{CONTAINS} ? "a" : "b"', '"m" + string(variables.big)', '"cheap"']


def ours_with_messages(texts: list[str], messages: list[str], obj: dict[str, Any]) -> tuple[bool, bool]:
    """(out of budget in the validations, in the messageExpressions after them)."""
    engine = policy_engine()
    defined = {name: expression(text) for name, text in VARIABLES}
    budget = CostBudget.of(RUNTIME_BUDGET, engine, {"object": obj, "variables": {}}, defined)
    if any(budget.spend(expression(text)) for text in texts):
        return True, False
    budget.new_context()
    return False, any(budget.spend(expression(text)) for text in messages)


def test_message_expressions_spend_what_is_left_as_the_api_server_spends_it(oracle):
    batch = [
        (texts, messages)
        for texts in ([CONTAINS] * 9, [CONTAINS] * 10, ["variables.big"] * 10, [CHEAP])
        for messages in ([m] * n for m in MESSAGES for n in (1, 2, 11))
    ]
    obj = budget_pod(True)
    answers = oracle.ask(
        "policy_budget",
        [{"variables": VARIABLES, "expressions": t, "messages": m, "object": obj} for t, m in batch],
    )
    found = []
    for (texts, messages), answer in zip(batch, answers):
        assert "oracle_error" not in answer, answer
        theirs = (answer.get("out_of_budget", False), answer.get("messages_out_of_budget", False))
        if ours_with_messages(texts, messages, obj) != theirs:
            found.append(f"{texts[:1]} x {len(texts)}, {messages[:1]} x {len(messages)}: the API server {theirs}")
    assert not found, "\n".join(found[:20])


ADMISSION = [
    "variables['big']",
    "variables['small'] == true",
    "variables[1] == true",
    "object.metadata.name.size() > 0 && variables['small']",
    "[1].all(v, variables['small'])",
    "variables.small",
    "has(variables.small) && variables.small",
    "[1].all(variables, variables == 1)",
    "cel.bind(y, variables.small, y)",
    "cel.bind(y, 1, y == 1) || true",
    "cel.bind(a, 'x', cel.bind(b, a + a, cel.bind(c, b + b, c.size() > 0)))",  # a bind bomb
    "'cel.bind(' != '' && variables.small",
    "[1, 2].map(x, x * 2).size() == 2",
]


def test_the_admission_environment_refuses_what_the_api_server_refuses(oracle):
    """cel.bind is not declared for admission policies (apiserver v0.37.2 cel/environment/base.go: ext.Bindings
    only in the DRA environment) and `variables` is an object type read by field (plugin/cel/composition.go)."""
    from gpulint.kube.features import FeatureGates

    engine = policy_engine()
    answers = oracle.ask(
        "policy_budget",
        [{"variables": VARIABLES, "expressions": [text], "object": budget_pod(False)} for text in ADMISSION],
    )
    found = []
    for text, answer in zip(ADMISSION, answers):
        theirs = any("compilation" in r.get("error", "") for r in answer.get("results", []))
        compiled = engine.compile(text)
        ours = not isinstance(compiled, Compiled) or engine.new_expression_problem(text, FeatureGates()) is not None
        if ours != theirs:
            found.append(f"{text}: gpulint refuses {ours}, the API server {answer}")
    assert not found, "\n".join(found)
