"""gpulint's verdicts against Kubernetes' own code (tests/oracle, docs/oracle.md), family by family.

Each example is a batch of generated cases, answered by both sides in one round trip to the oracle. A
disagreement fails with the shrunk batch (hypothesis drops the cases that agree). ORACLE_BATCHES sets
the examples per family (scripts/oracle_batch.py runs large ones); CI's derandomized profile keeps
them reproducible.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from oracle_allocate import (
    ALLOCATE_GATES,
    accepted_cases,
    admin_order_case,
    allocate_case,
    compare_allocate,
    empty_cluster,
)
from oracle_dra import DRA_CASE, DRA_GATES, compare_dra_validate
from oracle_families import (
    ALLOCATE_CASES,
    CEL_CASE,
    GANG_CASE,
    GANG_GATES,
    QUANTITY_CASE,
    SCHEDULE_CASE,
    VALIDATE_CASE,
    cel_device,
    compare_cel,
    compare_gang_validate,
    compare_gate_defaults,
    compare_quantity,
    compare_schedule,
    compare_validate,
    dumps,
    family_settings,
    gang_gates,
)

from gpulint.kube.cel.engine import CelEngine, CelProblem
from gpulint.kube.features import GATES, FeatureGates
from gpulint.kube.go_text import quote
from gpulint.kube.validation.errors import INVALID, FieldError, not_supported

pytestmark = pytest.mark.oracle


def batches(case: st.SearchStrategy, size: int) -> st.SearchStrategy[list]:
    return st.lists(case, min_size=size, max_size=size)


def report(disagreements: list[tuple[object, list[str]]]) -> str:
    return "\n".join(f"{dumps(case)}\n  " + "\n  ".join(found) for case, found in disagreements[:5])


@family_settings(100)
@given(cases=batches(QUANTITY_CASE, 100))
def test_quantities_agree(oracle, cases):
    answers = oracle.ask("quantity", cases)
    found = [(case, compare_quantity(case, answer)) for case, answer in zip(cases, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(10)
@given(cases=batches(SCHEDULE_CASE, 10), taint_comparisons=st.booleans())
def test_scheduler_filters_agree(oracle, cases, taint_comparisons):
    gates = {"TaintTolerationComparisonOperators": taint_comparisons}
    answers = oracle.ask("schedule", cases, gates)
    found = [(case, compare_schedule(case, answer, taint_comparisons)) for case, answer in zip(cases, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(50)
@given(cases=batches(CEL_CASE, 50), list_attributes=st.booleans())
def test_dra_cel_selectors_agree(oracle, cases, list_attributes):
    gates = {"DRAListTypeAttributes": list_attributes}
    answers = oracle.ask("cel", cases, gates)
    engine = CelEngine()
    mine = FeatureGates.of(FeatureGates().version, gates)
    found = [(case, compare_cel(case, answer, engine, mine)) for case, answer in zip(cases, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(20)
@given(cases=batches(VALIDATE_CASE, 20), comparisons=st.booleans())
def test_pod_validation_agrees(oracle, cases, comparisons):
    gates = {"TaintTolerationComparisonOperators": comparisons}
    answers = oracle.ask("validate", cases, gates)
    found = [(case, compare_validate(case, answer, gates)) for case, answer in zip(cases, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(20)
@given(cases=batches(GANG_CASE, 20), gates=GANG_GATES)
def test_gang_validation_agrees(oracle, cases, gates):
    """Workload, PodGroup and CompositePodGroup (scheduling.k8s.io) created through the API server's strategies,
    under the gates of the fields they drop, against the rules of gpulint's that say the API server refuses an
    object."""
    found = []
    by_gates: dict[str, tuple[dict[str, bool], list[dict]]] = {}
    for case in cases:  # a CompositePodGroup is created under its own gates
        case_gates = gang_gates(case, gates)
        by_gates.setdefault(dumps(case_gates), (case_gates, []))[1].append(case)
    for case_gates, group in by_gates.values():
        answers = oracle.ask("gang_validate", group, case_gates)
        found += [(case, compare_gang_validate(case, answer, case_gates)) for case, answer in zip(group, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(20)
@given(cases=batches(DRA_CASE, 20), gates=DRA_GATES)
def test_dra_validation_agrees(oracle, cases, gates):
    """ResourceClaim, ResourceClaimTemplate, DeviceClass and ResourceSlice (resource.k8s.io v1, v1beta2, v1beta1)
    created through the API server's strategies, under the beta gates whose fields they drop, against the rules
    of gpulint's that say the API server refuses an object."""
    answers = oracle.ask("dra_validate", cases, gates)
    found = [(case, compare_dra_validate(case, answer, gates)) for case, answer in zip(cases, answers)]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


@family_settings(10, ALLOCATE_CASES)
@given(cases=batches(allocate_case(), 10), gates=ALLOCATE_GATES)
def test_dra_allocation_agrees(oracle, cases, gates):
    """A pod with ResourceClaims (or claim templates) on nodes, ResourceSlices and DeviceClasses, scheduled by the
    scheduler's filters with DynamicResources and its structured allocator, against gpulint's check: it must not
    say the pod stays Pending where Kubernetes schedules it, and should where Kubernetes does not. A case whose
    objects the API server refuses (the dra validate family) is no cluster: left out."""
    valid = accepted_cases(oracle, cases)
    answers = oracle.ask("dra_allocate", [case["oracle"] for case in valid], gates)
    # without the claims other pods hold: what claim-unsatisfiable's errors judge
    emptied = iter(oracle.ask("dra_allocate", [empty_cluster(case) for case in valid if case["held"]], gates))
    empty = [next(emptied) if case["held"] else answer for case, answer in zip(valid, answers)]
    found = [
        ({**case["oracle"], "gates": gates}, compare_allocate(case, answer, emptied_answer, gates))
        for case, answer, emptied_answer in zip(valid, answers, empty)
    ]
    disagreements = [(case, problems) for case, problems in found if problems]
    assert not disagreements, report(disagreements)


def test_recorded_admin_access_claim_order_agrees(oracle):
    """A device an earlier claim's adminAccess request takes is in use for a later claim's request without it; the
    other way round they share it (docs/oracle.md, dra allocate, session 22)."""
    cases = [admin_order_case(admin_first) for admin_first in (True, False)]
    assert len(accepted_cases(oracle, cases)) == 2
    answers = oracle.ask("dra_allocate", [case["oracle"] for case in cases], {})
    assert [bool(answer["summary"]) for answer in answers] == [True, False], answers
    for case, answer in zip(cases, answers):
        assert not compare_allocate(case, answer, answer, {})


# Shrunk counterexamples of the dra validate family (docs/oracle.md), each with the gates it was found under and
# whether Kubernetes refuses it: gpulint's verdict was the other one.
_REQUEST = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 0}}
_SLICE = {
    "driver": "gpu.nvidia.com",
    "pool": {"name": "node-a", "generation": None, "resourceSliceCount": 1},
    "nodeName": "node-a",
    "devices": [{"name": "gpu-0", "attributes": {"type": {"strings": ["gpu"]}, "a/b/c": {"int": 1}}}],
}
RECORDED_DRA = [
    ("ResourceClaim", "v1", {"devices": {"requests": [_REQUEST]}}, {}, False),
    (
        "ResourceClaim",
        "v1",
        {"devices": {"requests": [_REQUEST], "constraints": [{"matchAttribute": "example.com/a/b"}]}},
        {},
        False,
    ),
    ("ResourceClaim", "v1beta1", {"devices": {"requests": [{"name": "gpu"}]}}, {}, True),
    (
        "ResourceClaim",
        "v1",
        {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "tolerations": [{"value": "a b"}]}}
                ]
            }
        },
        {},
        True,
    ),
    ("ResourceSlice", "v1", _SLICE, {"DRAListTypeAttributes": True}, False),
    ("ResourceSlice", "v1", _SLICE, {"DRAListTypeAttributes": False}, True),
    (
        "ResourceSlice",
        "v1",
        {**_SLICE, "devices": [], "sharedCounters": [{"name": "gpu-0-counters", "counters": {}}]},
        {"DRAPartitionableDevices": False},
        False,
    ),
    ("ResourceSlice", "v1", None, {}, True),
]


@pytest.mark.parametrize(("kind", "version", "spec", "gates", "refused"), RECORDED_DRA)
def test_recorded_dra_objects_agree(oracle, kind, version, spec, gates, refused):
    metadata = {"name": "gpus", **({"namespace": "default"} if kind == "ResourceClaim" else {})}
    obj = {"apiVersion": f"resource.k8s.io/{version}", "kind": kind, "metadata": metadata, "spec": spec}
    case = {"object": obj, "admin_namespace": False}
    (answer,) = oracle.ask("dra_validate", [case], gates)
    assert bool(answer["errors"]) == refused, answer
    assert not compare_dra_validate(case, answer, gates)


def test_recorded_gang_objects_agree(oracle):
    """The Workloads and PodGroups tests/unit/test_scheduling_validation.py holds: Kubernetes still refuses
    exactly those it records errors for, with the same fields."""
    from support.gang_objects import CASES

    wrong = []
    for case in CASES:
        obj = yaml.safe_load(case.text)
        found = []  # per cluster the configuration may describe: the fields Kubernetes refuses
        for gates in case.settings:
            (answer,) = oracle.ask("gang_validate", [{"object": obj}], gates)
            assert not answer.get("decode_error"), answer
            found.append({f"{e['field']}: {e['type']}" for e in answer["errors"]})
        theirs = sorted(set.intersection(*found))  # refused whatever the unstated gates
        expected = sorted(": ".join(error.split(": ")[:2]) for error in case.errors)
        if theirs != expected:
            wrong.append(f"{case.name}: recorded {expected}, Kubernetes {theirs} (per setting: {found})")
    assert not wrong, "\n".join(wrong)


def test_feature_gate_defaults_agree(oracle):
    """gpulint's table of the gates it models (gpulint/kube/features.py) against the release's own."""
    (answer,) = oracle.ask("gate_defaults", [{"names": sorted(GATES)}])
    assert not compare_gate_defaults(FeatureGates().version, answer), compare_gate_defaults(
        FeatureGates().version, answer
    )


def test_version_attributes_and_int_conversions_agree(oracle):
    """Regression cases the property test found (docs/oracle.md): operations on version attributes that
    Kubernetes' Semver type has no overload for, a version hashed (the whole evaluation fails), literals of
    mixed types, and int() of a bool. tests/cel_versions.py records
    Kubernetes' outcome of each (a match, or an evaluation error); the oracle must still give it, and
    gpulint must answer the same. (Cost estimates are the property test's.)"""
    from cel_versions import (
        COMPILE,
        DEVICE,
        ERROR,
        HASH_CASES,
        INT_CASES,
        LITERAL_CASES,
        MAP_KEY_CASES,
        TOO_COMPLEX,
        UNREPRESENTED_CASES,
        VERSION_CASES,
    )

    table = VERSION_CASES + INT_CASES + HASH_CASES + LITERAL_CASES + MAP_KEY_CASES
    # Kubernetes' outcome still recorded; gpulint gives no verdict (tests/unit/test_cel.py)
    for expression, recorded in UNREPRESENTED_CASES:
        (answer,) = oracle.ask("cel", [{"expression": expression, **DEVICE}], {"DRAListTypeAttributes": True})
        assert answer.get("match", ERROR) == recorded, (expression, answer)
    cases = [{"expression": expression, **DEVICE} for expression, _ in table]
    answers = oracle.ask("cel", cases, {"DRAListTypeAttributes": True})
    engine = CelEngine()
    device = cel_device(cases[0])
    wrong = []
    for (expression, recorded), answer in zip(table, answers):
        theirs = (
            TOO_COMPLEX
            if answer.get("create_error", "").startswith("too complex")
            else COMPILE
            if answer.get("compile_error")
            else ERROR
            if answer.get("match") is None
            else answer["match"]
        )
        compiled = engine.compile(expression)
        if isinstance(compiled, CelProblem):
            mine: bool | str = TOO_COMPLEX if compiled.message.startswith("too complex") else COMPILE
        else:
            found = engine.evaluate(compiled, device)
            mine = found if isinstance(found, bool) else ERROR
        if theirs != recorded or mine != recorded:
            wrong.append(f"{expression}: recorded {recorded!r}, Kubernetes {theirs!r}, gpulint {mine!r}")
    assert not wrong, "\n".join(wrong)


# Python's Unicode tables are older than Go's: a character assigned since then is escaped by gpulint and
# printed by Go (gpulint/kube/go_text.py), so the texts keep to characters both know.
ASSIGNED_TEXT = st.text(st.characters(exclude_categories=["Cs", "Cn"]), max_size=12)
QUOTED_EDGES = ["", "n\u00e9", "\x00\x7f\u0085\u00a0\u2028", '"\\', "\a\b\f\n\r\t\v", "\U0001f600\U000e0001\ufeff"]


@family_settings(50)
@given(texts=st.lists(ASSIGNED_TEXT, min_size=50, max_size=50))
def test_values_in_messages_are_quoted_as_go_quotes_them(oracle, texts):
    """A message shows a value as Kubernetes does: strconv.Quote, printable characters as they are (a JSON
    escape of "é" is not what the API server says)."""
    texts = [*QUOTED_EDGES, *texts]
    answers = oracle.ask("go_text", [{"text": text} for text in texts])
    path = ("metadata", "labels")
    mine = [
        {
            "quote": quote(text),
            "invalid": FieldError(path, INVALID, text, "must be valid").message(),
            "not_supported": not_supported(path, text, (text, "a")).message(),
        }
        for text in texts
    ]
    disagreements = [(text, f"{m} != {a}") for text, m, a in zip(texts, mine, answers) if m != a]
    assert not disagreements, disagreements[:5]
