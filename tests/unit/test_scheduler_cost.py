"""The scheduler model's cost follows the pod, not nodes x its terms or tolerations (issue #33: valid pods
of hostname terms or of many tolerations took seconds per webhook review), with the same answers: node
affinity through the label index gives what matching node by node gives."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.kube.node_index import LabelIndex
from gpulint.kube.scheduler import (
    ClusterModel,
    NodeInfo,
    Requirement,
    Taint,
    Toleration,
    affinity_positions,
    pod_requirements,
)

KEYS = ("zone", "gpu", "kubernetes.io/hostname", "size")
VALUES = ("a", "b", "c", "1", "7", "12", "-3", "")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus", "")


def _node(name: str, labels: dict[str, str], taints: tuple[Taint, ...] = ()) -> NodeInfo:
    return NodeInfo(name, labels, taints, False, {"cpu": Fraction(8)}, {"cpu": Fraction(8)})


nodes_strategy = st.lists(
    st.tuples(
        st.sampled_from(("n1", "n2", "n3", "n4")), st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES))
    ),
    max_size=8,
).map(lambda rows: [_node(name, labels) for name, labels in rows])

expression = st.fixed_dictionaries(
    {
        "key": st.sampled_from((*KEYS, "metadata.name", "bad key!")),
        "operator": st.sampled_from(OPERATORS),
        "values": st.lists(st.sampled_from((*VALUES, "n1", "n3")), max_size=3),
    }
)
term = st.fixed_dictionaries(
    {}, optional={"matchExpressions": st.lists(expression, max_size=3), "matchFields": st.lists(expression, max_size=2)}
)
spec_strategy = st.fixed_dictionaries(
    {},
    optional={
        "nodeSelector": st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
        "affinity": st.fixed_dictionaries(
            {
                "nodeAffinity": st.fixed_dictionaries(
                    {
                        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                            {"nodeSelectorTerms": st.lists(term, max_size=3)}
                        )
                    }
                )
            }
        ),
    },
)


@settings(max_examples=400, deadline=None)
@given(nodes_strategy, spec_strategy)
def test_the_index_matches_exactly_the_nodes_matching_one_by_one_does(nodes, spec):
    pod = pod_requirements(spec)
    expected = frozenset(at for at, node in enumerate(nodes) if pod.matches_affinity(node))
    assert affinity_positions(pod, nodes, LabelIndex.of(nodes)) == expected


@settings(max_examples=100, deadline=None)
@given(nodes_strategy, spec_strategy)
def test_the_model_answers_the_same_through_the_index(nodes, spec):
    pod = pod_requirements(spec)
    direct = ClusterModel(list(nodes), indexed_from=1 << 62)
    indexed = ClusterModel(list(nodes), indexed_from=0)  # every pod through the index
    through_index = indexed.evaluate(pod), [len(g) for g in indexed.matching_groups(pod)]
    scheduler_answer = direct.evaluate(pod), [len(g) for g in direct.matching_groups(pod)]
    assert through_index[1] == scheduler_answer[1]
    assert through_index[0].summary() == scheduler_answer[0].summary()
    assert through_index[0].fitting_count == scheduler_answer[0].fitting_count


def _fleet(count: int) -> list[NodeInfo]:
    return [
        _node(f"node-{i}", {"kubernetes.io/hostname": f"node-{i}", "topology.kubernetes.io/zone": f"zone-{i % 3}"})
        for i in range(count)
    ]


def _hostname_terms(terms: int, expressions: int) -> dict[str, object]:
    """A valid pod as the attack wrote it: many terms, each naming nodes by hostname."""
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": [f"node-{t}-{e}", "x"]}
                                for e in range(expressions)
                            ]
                        }
                        for t in range(terms)
                    ]
                }
            }
        }
    }


@dataclass
class CallCount:
    calls: int = 0


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: type, method: str) -> CallCount:
    """Counts the calls of owner.method for the rest of the test; operations, not seconds, so the
    machine's load cannot change the answer."""
    count = CallCount()
    original = getattr(owner, method)

    def counted(self: object, *args: object) -> object:
        count.calls += 1
        return original(self, *args)

    monkeypatch.setattr(owner, method, counted)
    return count


def test_a_pod_of_many_hostname_terms_is_not_matched_node_by_node(monkeypatch):
    matches = count_calls(monkeypatch, Requirement, "matches")
    model = ClusterModel(_fleet(1000))
    pod = pod_requirements(_hostname_terms(1000, 10))
    result = model.evaluate(pod)
    assert (
        not result.fits
        and result.summary() == "0/1000 nodes are available: 1000 node(s) didn't match Pod's node affinity/selector."
    )
    assert model.matching_groups(pod) == []
    assert matches.calls == 0  # node by node, this was 1,000 terms x 1,000 nodes = 1,000,000 matches


def test_the_index_keeps_what_a_term_matches():
    model = ClusterModel(_fleet(1000))
    spec = _hostname_terms(2000, 1)
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # type: ignore[index]
    terms.append({"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-7"]}]})
    terms.append(
        {
            "matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["zone-0", "zone-1"]},
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-8", "node-9"]},
            ]
        }
    )
    pod = pod_requirements(spec)
    assert sorted(node.name for node in model.matching_affinity(pod)) == ["node-7", "node-8"]


def test_a_webhook_review_of_such_a_pod_stays_within_its_deadline(tmp_path):
    """The attack as found, through the handler: a 0.9 MB pod against a 1,000-node inventory."""
    from gpulint.lint.config import Config
    from gpulint.webhook import server

    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n.name, "labels": n.labels},
            "status": {"capacity": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"}},
        }
        for n in _fleet(1000)
    ]
    inventory = tmp_path / "nodes.json"
    inventory.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    webhook = server.Webhook(Config(inventory=(str(inventory),)), server.ServeOptions())
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            **_hostname_terms(1000, 10),
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        },
    }
    body = json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "CREATE", "namespace": "ml", "object": pod},
        }
    ).encode()
    answer = webhook.review(body, time.monotonic() + 60)
    response = answer.body["response"]  # type: ignore[union-attr]
    assert response["allowed"] is False
    assert "matches none of the 1000 nodes" in response["status"]["message"]


def test_each_distinct_taint_is_held_against_the_tolerations_once(monkeypatch):
    tolerates = count_calls(monkeypatch, Toleration, "tolerates")
    gpu = Taint("nvidia.com/gpu", "present", "NoSchedule")
    nodes = [_node(f"node-{i}", {"kubernetes.io/hostname": f"node-{i}"}, (gpu,)) for i in range(1000)]
    spec = {
        "tolerations": [
            {"key": f"k{i}", "operator": "Equal", "value": "v", "effect": "NoSchedule"} for i in range(5000)
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]}
                    ]
                }
            }
        },
    }
    result = ClusterModel(nodes).evaluate(pod_requirements(spec))
    assert result.summary() == "0/1000 nodes are available: 1000 node(s) had untolerated taint(s)."
    assert tolerates.calls == 5000  # once per toleration for the one taint; node by node it was 5,000,000
    spec["tolerations"].append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
    assert ClusterModel(nodes).evaluate(pod_requirements(spec)).fitting_count == 1000
