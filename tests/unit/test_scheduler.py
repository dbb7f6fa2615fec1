"""The scheduler model, filter by filter, against the Kubernetes rules as documented."""

from dataclasses import fields, replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.kube.scheduler import (
    ClusterModel,
    NodeInfo,
    PodRequirements,
    Requirement,
    Taint,
    Toleration,
    copies_on,
    filter_reasons,
    names_untolerated_taints,
    pod_requests,
    pod_requirements,
    resource_list,
)


def node(name="n", labels=None, taints=(), unschedulable=False, **allocatable):
    alloc = {k.replace("_", "/").replace("nvidia/com", "nvidia.com"): Fraction(v) for k, v in allocatable.items()}
    return NodeInfo(
        name, {"kubernetes.io/hostname": name, **(labels or {})}, tuple(taints), unschedulable, alloc, dict(alloc)
    )


def reasons(spec, n, now=False):
    return filter_reasons(pod_requirements(spec), n, now)


@pytest.mark.parametrize(
    "operator, values, labels, fits",
    [
        ("In", ["a", "b"], {"k": "a"}, True),
        ("In", ["a"], {"k": "c"}, False),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", [], {"k": ""}, True),
        ("Exists", [], {}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["4"], {"k": "8"}, True),
        ("Gt", ["8"], {"k": "8"}, False),
        ("Gt", ["4"], {"k": "eight"}, False),
        ("Lt", ["4"], {"k": "2"}, True),
        ("Lt", ["4"], {}, False),
    ],
)
def test_node_affinity_operators(operator, values, labels, fits):
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": operator, "values": values}]}]
                }
            }
        }
    }
    assert (reasons(spec, node(labels=labels)) == []) is fits


def test_terms_are_ored_and_expressions_anded_and_empty_terms_match_nothing():
    a, b = node("a", {"zone": "z1", "gpu": "h100"}), node("b", {"zone": "z2", "gpu": "l4"})
    terms = [
        {
            "matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["z1"]},
                {"key": "gpu", "operator": "In", "values": ["l4"]},
            ]
        },
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]},
    ]
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    }
    assert reasons(spec, a) != [] and reasons(spec, b) == []
    empty = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}
    }
    assert reasons(empty, a) == ["node(s) didn't match Pod's node affinity/selector"]


def test_match_fields_on_the_node_name_and_node_selector_anded():
    spec = {
        "nodeSelector": {"gpu": "h100"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        },
    }
    assert reasons(spec, node("a", {"gpu": "h100"})) == []
    assert reasons(spec, node("b", {"gpu": "h100"})) != []
    assert reasons(spec, node("a", {"gpu": "l4"})) != []


def _pinned(*terms):
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}
                        for names in terms
                    ]
                }
            }
        }
    }


def test_node_affinity_prefilter_words_the_nodes_it_leaves_out():
    """Counterexamples of the oracle (tests/upstream/test_oracle.py, the scheduler of v1.37.2): when every required term
    names nodes (as a DaemonSet's pods do), NodeAffinity's PreFilter keeps those alone and the framework words
    the others by the plugin; terms that name no common node fail the PreFilter, a message of its own."""
    nodes = [node("a"), node("b")]
    spec = _pinned(["a"])
    assert reasons(spec, nodes[0]) == []
    assert reasons(spec, nodes[1]) == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]
    result = ClusterModel(nodes).evaluate(pod_requirements(_pinned(["x"])))
    assert result.summary() == "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    conflict = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                                {"key": "metadata.name", "operator": "In", "values": ["b"]},
                            ]
                        }
                    ]
                }
            }
        }
    }
    result = ClusterModel(nodes).evaluate(pod_requirements(conflict))
    assert result.summary() == "0/2 nodes are available: pod affinity terms conflict."
    # a term without a node name keeps every node: the node affinity filter words the misses as before
    mixed = _pinned(["a"])
    mixed["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].append(
        {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
    )
    assert reasons(mixed, nodes[1]) == ["node(s) didn't match Pod's node affinity/selector"]


def test_preferred_affinity_never_filters():
    spec = {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [{"key": "nope", "operator": "Exists"}]}}
                ]
            }
        }
    }
    assert reasons(spec, node()) == []


@pytest.mark.parametrize(
    "toleration, tolerated",
    [
        ({"key": "gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "value": "present"}, True),  # operator defaults to Equal, any effect
        ({"key": "gpu", "operator": "Equal", "value": "other"}, False),
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # empty key + Exists tolerates everything
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_taint_toleration(toleration, tolerated):
    tainted = node(taints=[Taint("gpu", "present", "NoSchedule")])
    found = reasons({"tolerations": [toleration]}, tainted)
    assert (found == []) is tolerated
    if not tolerated:
        assert found == ["node(s) had untolerated taint(s)"]  # 1.34+: the taint is not named
        named = filter_reasons(pod_requirements({"tolerations": [toleration]}), tainted, False, named_taints=True)
        assert named == ["node(s) had untolerated taint {gpu: present}"]  # up to 1.33


def test_prefer_no_schedule_taints_do_not_filter():
    assert reasons({}, node(taints=[Taint("soft", "", "PreferNoSchedule")])) == []
    assert reasons({}, node(taints=[Taint("hard", "", "NoExecute")])) == ["node(s) had untolerated taint(s)"]


def test_cordoned_nodes_and_node_name():
    cordoned = node("c", unschedulable=True)
    assert reasons({}, cordoned) == ["node(s) were unschedulable"]
    assert (
        reasons(
            {
                "tolerations": [
                    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
                ]
            },
            cordoned,
        )
        == []
    )
    assert reasons({"nodeName": "other"}, node("n")) == ["node(s) didn't match the requested node name"]
    # a pod bound with nodeName skips the scheduler: cordon and NoSchedule taints do not stop it
    assert reasons({"nodeName": "c"}, cordoned) == []


def test_filters_run_in_the_schedulers_order():
    n = node(taints=[Taint("gpu", "", "NoSchedule")], labels={"a": "b"}, nvidia_com_gpu=1)
    spec = {"nodeSelector": {"a": "c"}, "containers": [{"resources": {"limits": {"nvidia.com/gpu": 4}}}]}
    assert reasons(spec, n) == ["node(s) had untolerated taint(s)"]  # TaintToleration before NodeAffinity


def test_resources_fit_counts_every_insufficient_resource():
    n = node(cpu=4, memory=2**30, nvidia_com_gpu=1, pods=110)
    spec = {"containers": [{"resources": {"requests": {"cpu": "8", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 2}}}]}
    assert reasons(spec, n) == ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
    assert reasons({"containers": [{}]}, node(pods=0)) == ["Too many pods"]


def test_effective_pod_request():
    spec = {
        "initContainers": [
            {"name": "init", "resources": {"requests": {"cpu": "4"}}},
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            {
                "name": "late-init",
                "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
            },
        ],
        "containers": [
            {"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "2"}}},
            {"resources": {"requests": {"memory": "1Gi"}}},
        ],
        "overhead": {"cpu": "250m"},
    }
    requests = pod_requests(spec)
    # cpu: max(app 2 + sidecar 1, init 4, late-init 2 + sidecar 1) + overhead = 4.25
    assert requests["cpu"] == Fraction(17, 4)
    assert requests["nvidia.com/gpu"] == 2
    assert requests["memory"] == 2**30


def test_summary_is_the_schedulers_fit_error():
    nodes = [node(f"gpu-{i}", nvidia_com_gpu=8) for i in range(4)] + [
        node(f"cpu-{i}", {"pool": "cpu"}) for i in range(8)
    ]
    spec = {
        "nodeSelector": {},
        "containers": [{"resources": {"limits": {"nvidia.com/gpu": 16}}}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "DoesNotExist"}]}]
                }
            }
        },
    }
    result = ClusterModel(nodes).evaluate(pod_requirements(spec))
    assert result.summary() == (
        "0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector."
    )


LABELS = st.dictionaries(st.sampled_from(["zone", "gpu", "rack"]), st.sampled_from(["a", "b", "1", "8"]), max_size=3)
NODES = st.lists(
    st.builds(
        lambda labels, taint, cordon, gpus, cpu: NodeInfo(
            "",
            labels,
            (Taint("gpu", "x", "NoSchedule"),) if taint else (),
            cordon,
            {"nvidia.com/gpu": Fraction(gpus), "cpu": Fraction(cpu), "pods": Fraction(110)},
            {},
        ),
        LABELS,
        st.booleans(),
        st.booleans(),
        st.integers(0, 8),
        st.integers(1, 64),
    ),
    min_size=1,
    max_size=30,
)
EXPRESSION = st.builds(
    lambda key, op, values: {"key": key, "operator": op, "values": values},
    st.sampled_from(["zone", "gpu", "rack"]),
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
    st.lists(st.sampled_from(["a", "b", "1", "8"]), min_size=1, max_size=2),
)
POD = st.builds(
    lambda selector, terms, gpus, tolerate: {
        "nodeSelector": selector,
        **(
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
                        }
                    }
                }
            }
            if terms
            else {}
        ),
        "tolerations": [{"operator": "Exists"}] if tolerate else [],
        "containers": [{"resources": {"limits": {"nvidia.com/gpu": gpus}}}],
    },
    LABELS,
    st.lists(st.lists(EXPRESSION, max_size=2), max_size=2),
    st.integers(0, 9),
    st.booleans(),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(NODES, POD)
def test_grouping_never_changes_the_answer(nodes, pod_spec):
    for index, n in enumerate(nodes):
        n.name = f"node-{index}"
        n.labels["kubernetes.io/hostname"] = n.name
    pod = pod_requirements(pod_spec)
    result = ClusterModel(nodes).evaluate(pod)
    brute = {n.name for n in nodes if not filter_reasons(pod, n, False)}
    assert {n.name for n in result.fitting} == brute
    assert sum(result.reasons.values()) >= len(nodes) - len(brute)


TOLERATING_POD = st.builds(
    lambda spec, key, value, gpus: {
        **spec,
        "tolerations": [{"key": key, "operator": "Equal", "value": value, "effect": "NoSchedule"}],
        "containers": [{"resources": {"limits": {"nvidia.com/gpu": gpus, "memory": "1536Mi"}}}],
    },
    POD,
    st.sampled_from(["gpu", "dedicated"]),
    st.sampled_from(["a", "b", ""]),
    st.sampled_from([1, "1", 2, "0.5"]),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TOLERATING_POD, TOLERATING_POD)
def test_two_pods_have_one_signature_exactly_when_the_scheduler_sees_one_pod(first, second):
    """The memos key on the signature: plain values that compare and hash as the fields do (1 and "1" GPU
    are one request), so two pods share a verdict exactly when every scheduling field is equal."""
    a, b = pod_requirements(first), pod_requirements(second)
    fields_equal = a.requests == b.requests and (
        a.node_selector,
        a.affinity_terms,
        a.tolerations,
        a.node_name,
        a.dra_resources,
        a.host_ports,
    ) == (b.node_selector, b.affinity_terms, b.tolerations, b.node_name, b.dra_resources, b.host_ports)
    assert (a.signature() == b.signature()) is fields_equal
    if fields_equal:
        assert hash(a.signature()) == hash(b.signature())


def _changed(value):
    """Another value of a field's type (one each of str, bool and tuple: the fields of Requirement and Toleration)."""
    return {str: lambda v: v + "-other", bool: lambda v: not v, tuple: lambda v: (*v, "other")}[type(value)](value)


# Another value of each PodRequirements field: a field added to it must be added here (and to its signature).
_OTHER_POD_FIELDS = {
    "requests": {"nvidia.com/gpu": Fraction(2)},
    "node_selector": (),
    "affinity_terms": None,
    "tolerations": (),
    "node_name": "gpu-node-0",
    "dra_resources": frozenset({"example.com/gpu"}),
    "host_ports": (32222,),
}


def test_pods_that_differ_in_any_one_field_have_other_signatures():
    """The scheduler model's memos and over-tight-affinity's verdicts (kept per inventory for the webhook's
    reviews) key on the signature: every field of the pod, of each requirement and of each toleration is in it,
    so no two pods that the scheduler tells apart share a verdict; equal pods share one."""
    requirement = Requirement("nodeSelector a=b", ("nodeSelector", "a"), "a", "In", ("b",))
    toleration = Toleration("gpu", "Equal", "a", "NoSchedule")
    pod = PodRequirements({"nvidia.com/gpu": Fraction(1)}, (requirement,), ((requirement,),), (toleration,), "")
    assert replace(pod).signature() == pod.signature()
    variants = [replace(pod, **{f.name: _OTHER_POD_FIELDS[f.name]}) for f in fields(PodRequirements)]
    selections = []  # matching_groups keys on the selection alone: the node selector and the affinity terms
    for f in fields(Requirement):
        changed = replace(requirement, **{f.name: _changed(getattr(requirement, f.name))})
        selections += [replace(pod, node_selector=(changed,)), replace(pod, affinity_terms=((changed,),))]
    for f in fields(Toleration):
        variants.append(
            replace(pod, tolerations=(replace(toleration, **{f.name: _changed(getattr(toleration, f.name))}),))
        )
    variants += selections
    assert all(variant.signature() != pod.signature() for variant in variants)
    assert len({variant.signature() for variant in variants}) == len(variants)
    assert all(variant.selection_signature() != pod.selection_signature() for variant in selections)


@pytest.mark.parametrize(
    ("version", "named"),
    [("1.30", True), ("1.33", True), ("1.34", False), ("1.35", False), ("1.37", False), ("2.0", False)],
)
def test_the_taint_is_named_in_the_reason_up_to_1_33(version, named):
    """kubernetes#134740 (1.35; cherry-picked to 1.34 as #135023) replaced "untolerated taint {key: value}"."""
    assert names_untolerated_taints(version) is named


def test_remembered_amounts_keep_each_yaml_type_apart():
    # the amounts are remembered per scalar: a YAML true after a 1, or a long string, is still no quantity
    first = resource_list({"nvidia.com/gpu": 1, "cpu": "1", "memory": 1.0})
    assert first == {"nvidia.com/gpu": 1, "cpu": 1, "memory": 1}
    assert resource_list({"nvidia.com/gpu": True, "cpu": "x", "memory": "1" * 4001}) == {}
    # the API server parses a quantity of any length (resource.ParseQuantity): 101 digits are an amount
    assert resource_list({"memory": "1" * 101}) == {"memory": int("1" * 101)}
    assert resource_list({"cpu": " 500m ", "memory": "1" + " " * 200}) == {"cpu": Fraction(1, 2), "memory": 1}


def test_a_pod_taking_a_host_port_holds_its_node_alone():
    """NodePorts: no two pods take one host port on a node. With hostNetwork a container port is a host port
    (defaultHostNetworkPorts); a written hostPort is one too; a pod on the pod network takes none."""
    gpu_node = node("gpu-0", nvidia_com_gpu=8, pods=110)
    worker = {
        "containers": [
            {"name": "w", "ports": [{"containerPort": 32222}], "resources": {"limits": {"nvidia.com/gpu": 1}}}
        ]
    }
    assert copies_on(pod_requirements(worker), gpu_node) == 8
    assert pod_requirements({**worker, "hostNetwork": True}).host_ports == (32222,)
    assert copies_on(pod_requirements({**worker, "hostNetwork": True}), gpu_node) == 1
    written = {"containers": [{"name": "w", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    assert pod_requirements(written).host_ports == (8080,)
    assert copies_on(pod_requirements(written), gpu_node) == 1
