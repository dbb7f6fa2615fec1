"""Policies over Kubernetes' per-call CEL cost limit (issue #33, item 7): cel-go's actual cost, counted from
below by gpulint.kube.cel.actual_cost; over the limit is Kubernetes' "operation cancelled: actual cost limit
exceeded" at the policy's severity. tests/upstream/test_oracle_policy_cost.py holds the counts against cel-go's."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from conftest import run_cli
from support.cel_cost import TEN, UNIQUE_ENV, counted, nested_all, pod_with_env

from gpulint.kube.cel.engine import PER_CALL_LIMIT, Compiled
from gpulint.lint.policies.evaluation import policy_engine


def test_six_nested_all_passes_the_limit():
    found = counted(nested_all(6))
    assert found is not None and found.exceeded and found.cost > PER_CALL_LIMIT


def test_four_nested_all_is_counted_under_the_limit():
    # 10,000 innermost iterations: an estimate says "maybe too much", the count says ~70,000
    found = counted(nested_all(4))
    assert found is not None and not found.exceeded
    assert 50_000 < found.cost < 100_000


def test_nested_comprehensions_that_stop_early_are_cheap():
    # the estimate's maximum is over the limit; the innermost all() is false at once, so each loop stops
    found = counted(nested_all(6, "a5 > 100"))
    assert found is not None and not found.exceeded and found.cost < 100
    found = counted(f"{TEN}.exists(a, {TEN}.exists(b, {TEN}.exists(c, a + b + c == 3)))")
    assert found is not None and not found.exceeded and found.cost < 100


def test_a_pairwise_uniqueness_check_over_a_large_object_passes_the_limit():
    # a policy as written in the wild ("env names are unique"); quadratic in the object
    small = counted(UNIQUE_ENV, pod_with_env([f"E{i}" for i in range(30)]))
    assert small is not None and not small.exceeded
    large = counted(UNIQUE_ENV, pod_with_env([f"E{i}" for i in range(400)]))
    assert large is not None and large.exceeded


def test_what_the_counter_does_not_evaluate_gives_no_answer():
    # the Kubernetes libraries are not counted here: no verdict, never a guess
    assert counted('object.metadata.name.lowerAscii() == "a"', {"metadata": {"name": "A"}}) is None
    assert counted('object.metadata.name.matches("^a+$")', {"metadata": {"name": "aaa"}}) is not None
    # a map iterated with an early stop: its order is Go's random map order
    assert counted('object.metadata.labels.all(k, k != "x")', {"metadata": {"labels": {"a": "1"}}}) is None


def test_errors_are_values_as_in_cel_go():
    # a missing field is an error value; `false && error` is false; the later selects are not charged
    found = counted("false && object.spec.missing.deeper", {"spec": {}})
    assert found is not None and found.cost == 0
    found = counted("object.spec.missing.deeper == 1 || true", {"spec": {}})
    assert found is not None and not found.exceeded


POD = """
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: main
    image: example.com/trainer:1
    env:
ENV
"""


def policy(name: str, expression: str, severity: str = "error") -> str:
    return textwrap.dedent(
        f"""
        apiVersion: gpulint.io/v1alpha1
        kind: Policy
        metadata: {{name: {name}}}
        spec:
          severity: {severity}
          match: {{kinds: [Pod]}}
          validations:
          - expression: '{expression}'
            message: never
        """
    )


def check(write, env_count: int, *policies: str) -> dict:
    env = "\n".join(f"    - {{name: E{i}, value: v}}" for i in range(env_count))
    pod = write("pod.yaml", POD.replace("ENV", env))
    paths: list[str] = []
    for index, text in enumerate(policies):
        paths += ["--policy", str(write(f"policies/p{index}.yaml", text))]
    result = run_cli("check", str(pod), *paths, "--format", "json")
    return result.json()


@pytest.mark.slow
def test_a_policy_over_the_cost_limit_is_a_finding_at_its_severity(write):
    # before: "could not be evaluated offline ... Iteration budget exceeded", info
    report = check(write, 1, policy("six-nested", nested_all(6)), policy("unique-env", UNIQUE_ENV, "warning"))
    by_rule = {f["rule"]: f for f in report["findings"]}
    six = by_rule["six-nested"]
    assert six["severity"] == "error"
    assert "operation cancelled: actual cost limit exceeded" in six["message"]
    assert "passes the limit of 1,000,000" in six["message"]
    assert "unique-env" not in by_rule  # one env entry: cheap, and it holds


@pytest.mark.slow
def test_a_quadratic_policy_fails_only_on_the_object_that_makes_it_expensive(write):
    report = check(write, 400, policy("unique-env", UNIQUE_ENV, "warning"))
    (finding,) = [f for f in report["findings"] if f["rule"] == "unique-env"]
    assert finding["severity"] == "warning" and "actual cost limit exceeded" in finding["message"]
    report = check(write, 30, policy("unique-env", UNIQUE_ENV, "warning"))
    assert not [f for f in report["findings"] if f["rule"] == "unique-env"]


def test_the_estimate_with_actual_sizes_follows_a_dyn_list_into_its_items():
    # a policy's object is dyn: a comprehension over one of its lists binds the items, not the indices (the
    # estimate used to size `c.env` as a field of an index, found nothing, and bounded the cost at 10)
    from gpulint.kube.cel import cost as cel_cost

    compiled = policy_engine().compile(UNIQUE_ENV)
    assert isinstance(compiled, Compiled) and compiled.checked is not None
    obj = pod_with_env([f"E{i}" for i in range(400)])
    found = cel_cost.estimate(compiled.checked, cel_cost.actual_sizes({"object": obj}), PER_CALL_LIMIT)
    assert found.cost[1] > 400 * 400


def pod_review(uid: str, env_count: int) -> dict[str, Any]:
    pod = pod_with_env([f"E{i}" for i in range(env_count)])
    pod.update({"apiVersion": "v1", "metadata": {"name": uid, "namespace": "ml"}})
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": "CREATE",
            "namespace": "ml",
            "object": pod,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
        },
    }


@pytest.mark.slow
def test_the_webhook_denies_what_kubernetes_fails_on_cost_and_admits_the_rest(tmp_path):
    # before: the info "could not be evaluated offline" never denied, so the expensive pod was admitted
    from webhook_helpers import Server

    policies = tmp_path / "policies.yaml"
    policies.write_text(policy("unique-env", UNIQUE_ENV))
    server = Server(tmp_path, "--policy", str(policies), "--failure-mode", "allow")
    try:
        # the count runs to the limit (~1.5 s of CPU; cel-go's estimated minimum, which answered at once, is no
        # bound of its count): the API server's longest timeout, so a loaded machine still decides in time
        status, answer = server.post(pod_review("wide", 400), path="/validate?timeout=30s", timeout=40)
        assert status == 200 and answer["response"]["allowed"] is False, answer
        assert "actual cost limit exceeded" in answer["response"]["status"]["message"]
        status, answer = server.post(pod_review("narrow", 30), timeout=30)
        assert status == 200 and answer["response"]["allowed"] is True, answer
    finally:
        server.stop()


def test_whole_floats_in_the_object_count_as_the_ints_kubernetes_reads():
    # the API server decodes `replicas: 1.0` as int64 1: `+ 1` is defined, so `||` stops; as a double it
    # would be an error and `||` would go on to the expensive side
    found = counted(f"object.spec.replicas + 1 == 2 || {nested_all(6)}", {"spec": {"replicas": 1.0}})
    assert found is not None and not found.exceeded and found.cost < 10
    found = counted(f"object.spec.ratio + 1.0 == 2.5 || {nested_all(6)}", {"spec": {"ratio": 1.5}})
    assert found is not None and not found.exceeded


def policy_with_variables(variables: dict[str, str], validation: str) -> str:
    lines = "\n".join(f"  - name: {name}\n    expression: '{text}'" for name, text in variables.items())
    return (
        "apiVersion: gpulint.io/v1alpha1\nkind: Policy\nmetadata: {name: lazy}\nspec:\n"
        "  severity: error\n  match: {kinds: [Pod]}\n  variables:\n"
        f"{lines}\n  validations:\n  - expression: '{validation}'\n    message: never\n"
    )


@pytest.mark.slow
def test_an_expensive_variable_fails_only_when_an_expression_reads_it(write):
    # the API server evaluates a variable when an expression first reads it
    expensive = {"expensive": nested_all(6), "cheap": "true"}
    unread = check(write, 1, policy_with_variables(expensive, "variables.cheap"))
    assert not [f for f in unread["findings"] if f["rule"] == "lazy"]
    read = check(write, 1, policy_with_variables(expensive, "variables.expensive"))
    (finding,) = [f for f in read["findings"] if f["rule"] == "lazy"]
    assert (
        'composited variable "expensive" fails to evaluate: operation cancelled: actual cost limit'
        in finding["message"]
    )
    through = {"expensive": nested_all(6), "wrapped": "variables.expensive || false"}
    (finding,) = [f for f in check(write, 1, policy_with_variables(through, 'variables["wrapped"]'))["findings"]]
    assert finding["severity"] == "error" and 'variable "expensive"' in finding["message"]


LONG = {"metadata": {"annotations": {"s": "a" * 100_000, "t": "b" * 100_000}}, "spec": {"items": ["x"] * 200}}
S, T = "object.metadata.annotations.s", "object.metadata.annotations.t"


def test_a_call_dispatched_on_dyn_values_costs_one_as_in_cel_go():
    # the checker leaves `<`, `+` and `in` on a policy's dyn values several overloads, so cel-go's planner gives
    # the call no overload ID and its tracker charges 1 (the oracle: `object.s < object.t` on two 1,000-character
    # strings costs 5). Before, 200 orderings of two 100,000-character strings counted 2,000,000: "exceeded".
    found = counted(f"object.spec.items.all(i, {S} < {T})", LONG)
    assert found is not None and not found.exceeded and found.cost < 5_000
    found = counted(f'object.spec.items.all(i, {S} + {T} != "")', LONG)
    assert found is not None and not found.exceeded
    # one overload (a typed operand, or `==`, which cel-go always plans as `equals`): charged by the sizes
    found = counted(f"object.spec.items.exists(i, {S} == {T} + {T})", LONG)
    assert found is not None and found.exceeded
    found = counted(f'object.spec.items.all(i, ("x" + {S}).size() > 0)', LONG)
    assert found is not None and found.exceeded


@pytest.mark.slow
def test_a_policy_ordering_long_strings_is_not_reported_over_the_limit(write):
    # the attack as found: the finding said "actual cost limit exceeded" where the API server admits the pod
    items = "\n".join(f"    - name: c{i}\n      image: {'a' * 5_000}" for i in range(60))
    pod = write("pod.yaml", f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n{items}\n")
    expression = "object.spec.containers.all(c, object.spec.containers.all(d, c.image <= d.image))"
    path = write("policies/order.yaml", policy("ordered", expression))
    report = run_cli("check", str(pod), "--policy", str(path), "--format", "json").json()
    assert not [f for f in report["findings"] if f["rule"] == "ordered"]


@pytest.mark.parametrize(
    "expression, n",
    [
        ('object.spec.items.exists(i, i == "a")', 300_000),  # stops at the first item
        ('object.spec.items.all(i, i in ["a", "b"])', 200_000),  # a folded literal: a set lookup, uncharged
        ("object.spec.items.map(i, [1, 2]).size() > 0", 50_000),  # the same, built once
    ],
)
def test_the_estimate_s_minimum_is_no_verdict_where_cel_go_stays_under_the_limit(expression, n):
    # before: "exceeded (its cost with these inputs is at least 1,200,004...)" from cel-go's estimated minimum;
    # cel-go counts 13, about 800,000 and 120,006 (tests/upstream/test_oracle_policy_cost.py)
    engine = policy_engine()
    compiled = engine.compile(expression)
    assert isinstance(compiled, Compiled)
    _value, error = engine.run(compiled, {"object": {"spec": {"items": ["a"] * n}}})
    assert "actual cost limit exceeded" not in error


@pytest.mark.slow
def test_a_worker_that_runs_out_after_a_count_under_the_limit_gives_no_verdict():
    # cel-go counts 42,006 (its `+` on dyn values costs 1); gpulint's engine builds 2,000 strings of 240,000
    # characters and its worker runs out: before, that was "actual cost limit exceeded" at the policy's severity
    engine = policy_engine()
    text = f"object.spec.items.map(i, {S} + {S}).size() >= 0"
    compiled = engine.compile(text)
    assert isinstance(compiled, Compiled)
    obj = {"metadata": {"annotations": {"s": "a" * 120_000}}, "spec": {"items": ["a"] * 2_000}}
    value, error = engine.run(compiled, {"object": obj})
    assert value is True or error.startswith("evaluation timed out, undecided"), error


def engine_counted(expression: str, obj: dict[str, Any]) -> Any:
    engine = policy_engine()
    compiled = engine.compile(expression)
    assert isinstance(compiled, Compiled)
    return engine.count(compiled, {"object": obj})


# quantity() and semver() charge a traversal of their string (k8s.io/apiserver v0.37.2 pkg/cel/library/cost.go):
# 10,000 per call on a 100,000-character annotation; they used to give no count (the worker decided)
PARSED = nested_all(3, "isQuantity(object.metadata.annotations.s) || semver(object.metadata.annotations.t).major() > 0")


def test_quantity_and_semver_calls_are_counted_by_their_strings_length():
    over = engine_counted(PARSED, LONG)
    assert over is not None and over.exceeded
    short = {"metadata": {"annotations": {"s": "1Gi", "t": "1.2.3"}}}
    under = engine_counted(PARSED, short)
    assert under is not None and not under.exceeded
    one = engine_counted('quantity(object.metadata.annotations.s).isGreaterThan(quantity("1Gi"))', short)
    assert one is not None and not one.exceeded


@pytest.mark.oracle
def test_quantity_and_semver_policies_count_as_cel_go_counts(oracle):
    short = {"metadata": {"annotations": {"s": "1Gi", "t": "1.2.3"}}}
    cases = [
        (PARSED, LONG),
        (PARSED, short),
        ('quantity(object.metadata.annotations.s).isGreaterThan(quantity("1Gi"))', short),
        ('semver(object.metadata.annotations.t, true) == semver("1.2.3")', short),
        ('quantity("1Gi") == quantity("1024Mi") && isSemver(object.metadata.annotations.s)', LONG),
    ]
    answers = oracle.ask("policy_cost", [{"expression": e, "object": obj} for e, obj in cases])
    for (expression, obj), answer in zip(cases, answers):
        ours = engine_counted(expression, obj)
        cancelled = "actual cost limit exceeded" in answer.get("eval_error", "")
        assert ours is not None and ours.exceeded == cancelled, (expression, answer)
        if not cancelled:
            assert ours.cost == answer["cost"], (expression, answer)


def test_a_variable_parsing_quantities_is_counted_when_it_is_read():
    # composition.go: the variable's cost is reported to the evaluation set; it used to give no count here
    from gpulint.lint.policies.evaluation import CostBudget
    from gpulint.lint.policies.model import Expression

    engine = policy_engine()
    parsed = Expression("v", (), engine.compile(PARSED))
    reads = engine.compile("variables.parsed")
    assert isinstance(reads, Compiled)
    for obj, exceeded in ((LONG, True), ({"metadata": {"annotations": {"s": "1Gi", "t": "1.2.3"}}}, False)):
        budget = CostBudget.of(10_000_000, engine, {"object": obj}, {"parsed": parsed})
        counted = engine.count(reads, {"object": obj}, budget.composition)
        assert counted is not None and not counted.exceeded  # the read itself costs 2
        assert (budget.composition.take() > PER_CALL_LIMIT) == exceeded


# has(): cel-go charges its operand as any attribute, and only the presence test itself nothing
# (PresenceTestHasCost false); under has() the qualifier that fails is not charged. The count was 2 below
# cel-go on `!has(object.spec.x) || ...` (the operand object.spec charged nothing); cel-go's costs below are
# the oracle's (test_has_counts_as_cel_go_counts)
HAS_OBJECT = {"spec": {"containers": [{"name": "a"}], "x": {"y": 1}}}
HAS_CASES = [
    ("!has(object.spec.x) || object.spec.x.y == 1", 8),  # was 6
    ("has(object.spec.x)", 2),  # was 0
    ("!has(object.spec.x.y) || object.spec.x.y == 1", 9),
    ("has(object.spec.containers[0].name) || true", 4),
    # the trap: a missing field before the test is not charged under has() (but is in a plain select: 4)
    ("has(object.spec.z.y) || true", 2),
    ("object.spec.z.y == 1 || true", 4),
    ("has(object.spec.containers[5].name) || true", 3),
]


@pytest.mark.parametrize("expression, cost", HAS_CASES)
def test_has_charges_its_operand_as_cel_go_does(expression, cost):
    found = counted(expression, HAS_OBJECT)
    assert found is not None and found.cost == cost and not found.exceeded


@pytest.mark.oracle
def test_has_counts_as_cel_go_counts(oracle):
    answers = oracle.ask("policy_cost", [{"expression": e, "object": HAS_OBJECT} for e, _ in HAS_CASES])
    for (expression, cost), answer in zip(HAS_CASES, answers):
        assert answer["cost"] == cost, (expression, answer)


# Reads on a call's result or a literal (cel-go's relative attribute: 1 beside its qualifiers), an attribute as
# an index's key (its own 1 not charged) and a ?: branch (its qualifiers charged): issue #33, costs from the
# policy_cost family (the first two were 1 below cel-go, the keys 1 above)
READS_OBJECT = {
    "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}], "x": {"y": 1}},
    "metadata": {"name": "n", "labels": {"k": "v"}},
}
READ_CASES = [
    ('object.spec.containers.filter(c, c.name == "a")[0].name == "a"', 27),
    ('object.spec.containers.map(c, c.name)[1] == "b"', 35),
    ('[object.metadata.name][0] == "n"', 16),
    ('{"k": object.metadata.name}.k == "n"', 36),
    ('object.metadata.labels[object.metadata.name] == "v" || true', 7),
    ('object.spec.containers[object.spec.x.y].name == "b"', 9),
    ('(object.spec.x.y == 1 ? object.metadata : object.spec).name == "n"', 8),
    ('(true ? object.metadata.name : "x") == "n"', 3),
    ('has({"a": 1}.a) && has(object.spec.x)', 3),
    ('{"a": 1, "a": 2}.a == 2', 3),  # a repeated key keeps its last value (a Go map), no error
    # optionals: a qualifier after .? charged only when present, orValue() nothing
    ("object.?spec.?x.?y.orValue(0) == 1", 5),
    ("object.?spec.?z.?y.orValue(0) == 0", 3),
    ("object.spec.containers[?5].orValue({}).size() == 0", 5),
    ('object.?metadata.?labels.missing.orValue("x") == "x"', 4),
]


@pytest.mark.parametrize("expression, cost", READ_CASES)
def test_reads_on_results_keys_and_branches_count_as_cel_go_counts(expression, cost):
    found = counted(expression, READS_OBJECT)
    assert found is not None and found.cost == cost and not found.exceeded


@pytest.mark.oracle
def test_reads_on_results_keys_and_branches_agree_with_cel_go(oracle):
    answers = oracle.ask("policy_cost", [{"expression": e, "object": READS_OBJECT} for e, _ in READ_CASES])
    for (expression, cost), answer in zip(READ_CASES, answers):
        assert answer["cost"] == cost, (expression, answer)
