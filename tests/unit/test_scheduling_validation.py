"""api-rejected on scheduling.k8s.io Workloads and PodGroups: what the 1.37 API server refuses on create
(gpulint/kube/validation/scheduling.py). The cases (tests/support/gang_objects.py) are ones the oracle's
gang_validate family answered; tests/upstream/test_oracle.py checks Kubernetes still answers them so."""

import pytest
from conftest import by_rule, lint_text
from support.gang_objects import ALL_OFF, ALL_ON, CASES, NULL_NAMED_COMPOSITE, GangObject, pod_group, workload

from gpulint.lint.config import Config

SUBJECT = "the API server rejects this object: "


def rejected(text: str, gates: dict[str, bool] | None) -> list[str]:
    """The API server's errors: a finding's message, or its note when the line was shortened to fit."""
    found = by_rule(lint_text(text, config=Config(feature_gates=gates)), "api-rejected")
    return sorted(f.notes[0] if f.notes else f.message.removeprefix(SUBJECT) for f in found)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_api_servers_verdict(case: GangObject):
    found = rejected(case.text, case.gates)
    assert len(found) == len(case.errors), found
    for message, start in zip(found, sorted(case.errors)):
        assert message.startswith(start), (message, start)


def test_older_shapes_are_left_to_api_version_unavailable():
    """1.36's v1alpha2 PodGroup has another shape (podGroupTemplateRef); 1.37 does not serve it."""
    old = "schedulingPolicy: {}\npodGroupTemplateRef: {workload: {workloadName: w, podGroupTemplateName: t}}"
    assert rejected(pod_group(old, "v1alpha2"), ALL_ON) == []


def test_a_null_in_a_field_the_gate_drops_is_no_schema_error():
    """Go's JSON decoder reads a null name as "" (no decoding error), and without CompositePodGroup the API server
    drops the composite templates before it validates them: the oracle's gang_validate family found
    schema-invalid calling that null refused. With the gate on, it is (a required name)."""
    text = workload(NULL_NAMED_COMPOSITE)
    assert by_rule(lint_text(text, config=Config(feature_gates=ALL_OFF)), "schema-invalid") == []
    (found,) = by_rule(lint_text(text, config=Config(feature_gates=ALL_ON)), "schema-invalid")
    assert found.message == 'spec.compositePodGroupTemplates[0].name: Invalid value: null is not of type "string"'
    wrong_type = text.replace("name: null", "name: [a]")  # the decoder refuses it, dropped field or not
    (found,) = by_rule(lint_text(wrong_type, config=Config(feature_gates=ALL_OFF)), "schema-invalid")
    assert found.message.startswith("spec.compositePodGroupTemplates[0].name: Invalid value:")
