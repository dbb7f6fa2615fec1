"""A policy's runtime cost budget and lazy variables (issue #33): the API server gives one binding's
validations, with the variables they read, 10,000,000 of cel-go's cost units (RuntimeCELCostBudget), and its
matchConditions 2,500,000 (RuntimeCELCostBudgetMatchConditions), k8s.io/apiserver v0.37.2 pkg/apis/cel
config.go; past it the whole policy fails with "validation failed due to running out of cost budget, no
further validation rules will be run". A variable is evaluated when an expression first reads it
(pkg/admission/plugin/cel composition.go), so one read only behind a short circuit never fails anything.
tests/upstream/test_oracle_policy_budget.py holds the same cases against the API server's own code."""

from __future__ import annotations

import json
from typing import Any

from conftest import run_cli
from support.cel_cost import CONTAINS, budget_pod, nested_all

OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


def vap(validations: list[str], variables: dict[str, str] | None = None, conditions: list[str] | None = None) -> str:
    """A ValidatingAdmissionPolicy and its binding (JSON is YAML: no quoting of the expressions)."""
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
            ]
        },
        "validations": [{"expression": text, "message": f"rule {i}"} for i, text in enumerate(validations)],
    }
    if variables:
        spec["variables"] = [{"name": name, "expression": text} for name, text in variables.items()]
    if conditions:
        spec["matchConditions"] = [{"name": f"c{i}", "expression": text} for i, text in enumerate(conditions)]
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "costly"},
        "spec": spec,
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "costly"},
        "spec": {"policyName": "costly", "validationActions": ["Deny"]},
    }
    return f"{json.dumps(policy)}\n---\n{json.dumps(binding)}\n"


def findings(tmp_path, policy: str, long: bool = True) -> list[dict[str, Any]]:
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps(budget_pod(long)))
    policies = tmp_path / "policy.yaml"
    policies.write_text(policy)
    result = run_cli("check", str(manifest), "--policy", str(policies), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "costly"]


def test_eleven_validations_under_the_per_call_limit_run_the_binding_out_of_budget(tmp_path):
    # before: each expression was held to 1,000,000 alone, so 11 x 990,000 passed
    (finding,) = findings(tmp_path, vap([CONTAINS] * 11))
    assert finding["severity"] == "error"
    assert OUT_OF_BUDGET in finding["message"] and "10,000,000" in " ".join(finding["notes"])


def test_ten_such_validations_fit_the_budget_and_a_small_object_is_cheap(tmp_path):
    assert findings(tmp_path, vap([CONTAINS] * 10)) == []
    assert findings(tmp_path, vap([CONTAINS] * 11), long=False) == []


def test_variables_read_by_cheap_validations_spend_the_same_budget(tmp_path):
    # each validation costs 2; each variable 990,000, charged to the budget when first read (not per call)
    variables = {f"v{i}": CONTAINS for i in range(11)}
    (finding,) = findings(tmp_path, vap([f"variables.v{i}" for i in range(11)], variables))
    assert OUT_OF_BUDGET in finding["message"]
    # a variable is evaluated once per binding, however many expressions read it
    assert findings(tmp_path, vap(["variables.v0"] * 11, variables)) == []


def test_message_expressions_spend_what_the_validations_leave(tmp_path):
    # validator.go evaluates every messageExpression on the remaining budget, whether its validation failed or
    # not; out of budget there fails every decision ("failed messageExpression: ...")
    policy = json.loads(vap([CONTAINS] * 10).split("\n---\n")[0])
    policy["spec"]["validations"][0]["messageExpression"] = f'{CONTAINS} ? "long" : "short"'
    binding = vap([]).split("\n---\n")[1]
    (finding,) = findings(tmp_path, f"{json.dumps(policy)}\n---\n{binding}")
    assert finding["message"] == f"policy costly: failed messageExpression: {OUT_OF_BUDGET}"
    assert findings(tmp_path, f"{json.dumps(policy)}\n---\n{binding}", long=False) == []


def test_match_conditions_have_their_own_smaller_budget(tmp_path):
    (finding,) = findings(tmp_path, vap(["true"], conditions=[CONTAINS] * 3))
    assert OUT_OF_BUDGET in finding["message"] and "2,500,000" in " ".join(finding["notes"])
    assert findings(tmp_path, vap(["false"], conditions=[CONTAINS] * 2))[0]["message"] == "rule 0"


def test_a_false_match_condition_decides_even_after_one_that_fails(tmp_path):
    # matcher.go evaluates every condition; a false one means no match, whatever the others did
    assert findings(tmp_path, vap(["false"], conditions=["object.spec.nothing == 1", "false"]), long=False) == []
    (finding,) = findings(tmp_path, vap(["false"], conditions=["object.spec.nothing == 1", "true"]), long=False)
    assert finding["severity"] == "info" and "matchCondition c0" in finding["message"]


def test_a_variable_read_only_behind_a_short_circuit_is_never_evaluated(tmp_path):
    # before: read_variables saw `variables.expensive` in the text and failed the policy on its cost
    expensive = {"expensive": nested_all(6)}
    assert findings(tmp_path, vap(["false && variables.expensive || true"], expensive), long=False) == []
    assert findings(tmp_path, vap(["object.kind == 'Pod' ? true : variables.expensive"], expensive), long=False) == []
    (finding,) = findings(tmp_path, vap(["true && variables.expensive"], expensive), long=False)
    assert finding["severity"] == "error"
    assert 'composited variable "expensive" fails to evaluate: operation cancelled' in finding["message"]


def test_a_failed_variable_is_an_error_where_it_is_read_not_a_null(tmp_path):
    # before: a variable that failed was null, so `variables.missing == null` held
    variables = {"missing": "object.spec.nothing"}
    (finding,) = findings(tmp_path, vap(["variables.missing == null"], variables), long=False)
    assert finding["severity"] == "info"
    assert 'composited variable "missing" fails to evaluate: no such key: nothing' in finding["message"]
    assert findings(tmp_path, vap(["true || variables.missing == null"], variables), long=False) == []
