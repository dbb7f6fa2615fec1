"""CEL expressions and objects for the policy cost tests: gpulint's count of cel-go's actual cost
(test_cel_actual_cost.py), the runtime budget (test_policy_budget.py) and both against the oracle."""

from __future__ import annotations

from typing import Any

from gpulint.kube.cel import actual_cost
from gpulint.kube.cel.engine import PER_CALL_LIMIT, Compiled
from gpulint.lint.policies.evaluation import policy_engine

TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def nested_all(levels: int, body: str = "a0 >= 0") -> str:
    """``levels`` nested all() over ten literal items: 10**levels innermost iterations when the body holds."""
    text = body
    for level in reversed(range(levels)):
        text = f"{TEN}.all(a{level}, {text})"
    return text


def counted(expression: str, obj: dict[str, Any] | None = None) -> actual_cost.Counted | None:
    compiled = policy_engine().compile(expression)
    assert isinstance(compiled, Compiled) and compiled.checked is not None
    return actual_cost.count(compiled.checked, {"object": obj or {}}, PER_CALL_LIMIT)


def pod_with_env(names: list[str]) -> dict[str, Any]:
    env = [{"name": name, "value": "v"} for name in names]
    return {"kind": "Pod", "spec": {"containers": [{"name": "main", "image": "i", "env": env}]}}


UNIQUE_ENV = "object.spec.containers.all(c, c.env.all(e, c.env.all(f, e.name != f.name || e == f)))"


# one call of cel-go's contains: ceil(10,000 x 0.1) x ceil(9,900 x 0.1) = 990,000, under the per-call limit
CONTAINS = "object.metadata.annotations.a.contains(object.metadata.annotations.b)"


def budget_pod(long: bool = True) -> dict[str, Any]:
    size = 10_000 if long else 10
    annotations = {"a": "x" * size, "b": "x" * (size - size // 100)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml", "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "example.com/trainer:1"}]},
    }
