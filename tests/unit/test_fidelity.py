"""Where gpulint used to differ from Kubernetes (issue #18): list-typed attributes, the allocator
against allocated devices, typed CEL, node-affinity terms the scheduler cannot parse."""

import textwrap

import pytest
import yaml
from conftest import by_rule, lint_text, run_cli

from gpulint.kube.cel.engine import CelEngine, CelProblem, Compiled, device_value
from gpulint.kube.dra.allocation import Allocator, SelectorCache, parse_claim_spec, slice_devices
from gpulint.kube.scheduler import NodeInfo, pod_requirements

SLICE = """
driver: net.example.com
nodeName: node-1
pool: {name: node-1, generation: 1, resourceSliceCount: 1}
devices:
- name: nic-0
  attributes:
    vlans: {ints: [10, 20]}
    ports: {strings: [eth0, eth1]}
    firmware: {versions: [1.2.0, 1.3.0]}
    rdma: {bools: [true]}
    numa: {int: 0}
- name: nic-1
  attributes:
    vlans: {ints: [20, 30]}
    ports: {strings: [eth2]}
    firmware: {versions: [1.3.0]}
    rdma: {bools: [false]}
    numa: {int: 1}
- name: nic-2
  attributes:
    vlans: {ints: [40]}
    ports: {strings: [eth3]}
    firmware: {versions: [2.0.0]}
    rdma: {bools: [false]}
    numa: {int: 1}
"""
CLASSES = {"nic": {"spec": {"selectors": [{"cel": {"expression": "device.driver == 'net.example.com'"}}]}}}


def devices(text: str = SLICE):
    return slice_devices(yaml.safe_load(textwrap.dedent(text)))


def claim(requests: list[dict], constraints: list[dict] | None = None):
    return parse_claim_spec(
        "resource.k8s.io/v1", {"requests": requests, "constraints": constraints or []}, ("spec", "devices")
    )


def exactly(name: str, count: int | None = None, mode: str = "ExactCount", selector: str = "", **extra) -> dict:
    body: dict = {"deviceClassName": "nic", "allocationMode": mode, **extra}
    if count is not None:
        body["count"] = count
    if selector:
        body["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": body}


def allocate(spec, in_use=frozenset(), found=None):
    allocator = Allocator(CLASSES, SelectorCache(CelEngine()))
    return allocator.fits([spec], found if found is not None else devices(), "node-1", in_use)


# ----------------------------------------------------------------- list-typed attributes


@pytest.mark.parametrize(
    "selector",
    [
        'size(device.attributes["net.example.com"].vlans) == 2',
        'device.attributes["net.example.com"].vlans.exists(v, v == 20)',
        'device.attributes["net.example.com"].vlans.all(v, v >= 10)',
        '20 in device.attributes["net.example.com"].vlans',
        '"eth1" in device.attributes["net.example.com"].ports',
        'device.attributes["net.example.com"].firmware.exists(v, v.isGreaterThan(semver("1.2.5")))',
        'device.attributes["net.example.com"].rdma[0]',
    ],
)
def test_list_attributes_are_cel_lists(selector):
    (nic0, *_) = devices()
    engine = CelEngine()
    compiled = engine.compile(selector)
    assert isinstance(compiled, Compiled), compiled
    assert engine.evaluate(compiled, nic0.cel_view) is True


def test_list_attributes_in_a_claim_are_not_unsatisfiable():
    spec = claim([exactly("nics", 2, selector='device.attributes["net.example.com"].vlans.exists(v, v == 20)')])
    assert allocate(spec).fits is True
    spec = claim([exactly("nics", 3, selector='device.attributes["net.example.com"].vlans.exists(v, v == 20)')])
    assert allocate(spec).fits is False


def test_match_attribute_on_lists_needs_a_common_value():
    # the allocator keeps the intersection of the chosen devices' values non-empty
    same_vlan = [{"matchAttribute": "net.example.com/vlans"}]
    assert allocate(claim([exactly("nics", 2)], same_vlan)).fits is True  # nic-0 and nic-1 share 20
    verdict = allocate(claim([exactly("nics", 3)], same_vlan))
    assert verdict.fits is False and "must share one net.example.com/vlans" in verdict.reason


def test_match_attribute_compares_types_as_kubernetes_does():
    # int 1 and bool true are different values (Python would call them equal)
    text = """
    driver: net.example.com
    nodeName: node-1
    pool: {name: node-1, generation: 1, resourceSliceCount: 1}
    devices:
    - {name: a, attributes: {flag: {int: 1}}}
    - {name: b, attributes: {flag: {bool: true}}}
    """
    verdict = allocate(claim([exactly("nics", 2)], [{"matchAttribute": "net.example.com/flag"}]), found=devices(text))
    assert verdict.fits is False


def test_match_attribute_needs_the_domain():
    # lookupAttribute: a name without a domain finds nothing, so no device can be chosen
    assert allocate(claim([exactly("nics", 1)], [{"matchAttribute": "numa"}])).fits is False
    assert allocate(claim([exactly("nics", 1)], [{"matchAttribute": "net.example.com/numa"}])).fits is True


# ----------------------------------------------------------------- allocationMode All, allocated devices, adminAccess


def test_all_fails_when_a_matching_device_is_allocated():
    spec = claim([exactly("nics", mode="All")])
    assert allocate(spec).fits is True
    verdict = allocate(spec, in_use=frozenset({"net.example.com/node-1/nic-1"}))
    assert verdict.fits is False
    assert "needs every one of the 3 matching devices, and 1 of them is already allocated" in verdict.reason


def test_all_is_not_narrowed_by_match_attribute():
    spec = claim([exactly("nics", mode="All")], [{"matchAttribute": "net.example.com/numa"}])
    verdict = allocate(spec)
    assert verdict.fits is False and "do not all have the same net.example.com/numa" in verdict.reason
    one_numa = claim(
        [exactly("nics", mode="All", selector='device.attributes["net.example.com"].numa == 1')],
        [{"matchAttribute": "net.example.com/numa"}],
    )
    assert allocate(one_numa).fits is True


def test_admin_access_may_use_allocated_devices():
    held = frozenset(f"net.example.com/node-1/nic-{i}" for i in range(3))
    assert allocate(claim([exactly("nics", 2)]), in_use=held).fits is False
    assert allocate(claim([exactly("nics", 2, adminAccess=True)]), in_use=held).fits is True
    assert allocate(claim([exactly("nics", mode="All", adminAccess=True)]), in_use=held).fits is True


def test_distinct_attribute_follows_the_allocator():
    # one request: each device differs from the one before it (numa 0, 1, then 1 is refused; 3 devices need 2 values)
    assert allocate(claim([exactly("nics", 3)], [{"distinctAttribute": "net.example.com/numa"}])).fits is not False
    three = [exactly(name, 1) for name in ("a", "b", "c")]
    verdict = allocate(claim(three, [{"distinctAttribute": "net.example.com/numa"}]))
    assert verdict.fits is False and "needs at least 3 different values" in verdict.reason


# ----------------------------------------------------------------- typed CEL


DEVICE = {
    "driver": "gpu.nvidia.com",
    "attributes": {"gpu.nvidia.com": {"driverVersion": device_value({"version": "570.124.6"})}},
    "capacity": {"gpu.nvidia.com": {"memory": device_value({"value": "80Gi"})}},
    "allowMultipleAllocations": False,
}


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ('device.capacity["gpu.nvidia.com"].memory == 1', "'_==_' applied to '(kubernetes.Quantity, int)'"),
        ('device.capacity["gpu.nvidia.com"].memory.startsWith("8")', "'startsWith' applied to '(kubernetes.Quantity"),
        ("device.attributes[true] == {}", "'_[_]' applied to '(map(string, map(string, any)), bool)'"),
        ("device.driver == 1", "'_==_' applied to '(string, int)'"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ('device.capacity["gpu.nvidia.com"].memory', "not kubernetes.Quantity"),
        ('quantity("1").sign() == 1', "'sign'"),  # a global function in Kubernetes
    ],
)
def test_type_errors_are_compile_errors(expression, words):
    problem = CelEngine().compile(expression)
    assert isinstance(problem, CelProblem) and problem.evaluable, problem
    assert words in problem.message


@pytest.mark.parametrize(
    "expression",
    [
        'has(device.driver) && device.driver == "gpu.nvidia.com"',
        'sign(quantity("-3")) == -1',
        '!quantity("9999999999999999999999999999999999999G").isInteger()',
        'quantity("9223372036854775807").isInteger() && !quantity("9223372036854775808").isInteger()',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
    ],
)
def test_typed_expressions_still_run(expression):
    engine = CelEngine()
    compiled = engine.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    assert engine.evaluate(compiled, DEVICE) is True


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        # (a map keyed by versions fails on its own: "hash of unhashable type cel.Semver", as in Kubernetes; an
        # index by a version is no qualifier in cel-go, interpreter/attributes.go newQualifier)
        ('{"1.0.0": 1}[device.attributes["gpu.nvidia.com"].driverVersion] == 1', "invalid qualifier type: cel.Semver"),
        ('[device.attributes["gpu.nvidia.com"].driverVersion][0]', "kubernetes.Semver"),
    ],
)
def test_internal_value_tags_never_reach_messages(expression, shown):
    engine = CelEngine()
    compiled = engine.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    message = engine.evaluate(compiled, DEVICE)
    assert isinstance(message, str) and shown in message and "\ue000" not in message


# ----------------------------------------------------------------- node-affinity terms the scheduler cannot parse


NODE = NodeInfo("gpu-1", {"nvidia.com/gpu.present": "true", "tier": "a"}, (), False, {}, {})


@pytest.mark.parametrize(
    "expression",
    [
        {"key": "nvidia.com/gpu.present", "operator": "Exists", "values": ["true"]},
        {"key": "tier", "operator": "NotIn", "values": ["not a label value"]},
        {"key": "tier", "operator": "Gt", "values": ["one"]},
        {"key": "bad key!", "operator": "DoesNotExist"},
    ],
)
def test_a_term_that_does_not_parse_matches_no_node(expression):
    terms = [{"matchExpressions": [expression]}]
    pod = pod_requirements(
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}
    )
    assert pod.matches_affinity(NODE) is False
    # another term that parses still matches
    terms.append({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]})
    pod = pod_requirements(
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}
    )
    assert pod.matches_affinity(NODE) is True


def test_match_fields_reads_only_the_node_name():
    def fields(key: str, operator: str, values: list[str]):
        term = {"matchFields": [{"key": key, "operator": operator, "values": values}]}
        return pod_requirements(
            {
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
                }
            }
        )

    assert fields("metadata.name", "In", ["gpu-1"]).matches_affinity(NODE) is True
    assert fields("metadata.name", "In", ["gpu-1", "gpu-2"]).matches_affinity(NODE) is False  # must have one element
    assert fields("metadata.uid", "In", ["gpu-1"]).matches_affinity(NODE) is False
    assert fields("metadata.uid", "NotIn", ["gpu-1"]).matches_affinity(NODE) is True


def test_unparsable_affinity_in_a_manifest_is_not_called_schedulable(write):
    manifest = write(
        "pod.yaml",
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: p, namespace: ml}
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: nvidia.com/gpu.present, operator: Exists, values: ["true"]}
          containers:
          - name: c
            image: example/c
            resources: {limits: {nvidia.com/gpu: 1}}
        """,
    )
    nodes = write(
        "cluster/nodes.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata: {name: gpu-1, labels: {nvidia.com/gpu.present: "true"}}
        status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
        """,
    )
    report = run_cli("check", str(manifest), "--inventory", str(nodes.parent), "--format", "json").json()
    rules = {f["rule"] for f in report["findings"]}
    assert rules & {"over-tight-affinity", "gpu-unschedulable"}, report["findings"]


# ----------------------------------------------------------------- feature gates reach the models


def test_feature_gates_follow_the_version_table():
    from gpulint.kube.features import FeatureGates, stage

    assert stage("DRAConsumableCapacity", "1.35") == ("alpha", False)
    assert stage("DRAConsumableCapacity", "1.36") == ("beta", True)
    assert stage("DRAListTypeAttributes", "1.35") == ("unavailable", False)
    assert FeatureGates.of("1.37", {"DRAListTypeAttributes": True}).enabled("DRAListTypeAttributes")
    assert not FeatureGates.of("1.37", {"DRAAdminAccess": False}).enabled("DRAAdminAccess")


SELECTOR_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: ml}}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: net.example.com
        selectors:
        - cel: {{expression: '{expression}'}}
"""


@pytest.mark.parametrize(
    ("expression", "config", "words"),
    [
        ('device.attributes["net.example.com"].vlans.includes(20)', {}, "undeclared reference to 'includes'"),
        (
            "device.allowMultipleAllocations",
            {"kubernetes_version": "1.35"},
            "undefined field 'allowMultipleAllocations'",
        ),
    ],
)
def test_new_selectors_compile_in_the_environment_the_gates_give(expression, config, words):
    from gpulint.lint.config import Config

    def cel_findings(**settings):
        text = SELECTOR_CLAIM.format(expression=expression)
        return by_rule(lint_text(text, config=Config(**settings)), "cel-invalid")

    (finding,) = cel_findings(**config)
    assert words in finding.message and "off by default" in finding.message
    assert cel_findings(feature_gates={"DRAListTypeAttributes": True, "DRAConsumableCapacity": True}) == []


def test_gt_lt_tolerations_need_their_gate():
    from gpulint.kube.scheduler import Taint

    spec = {"tolerations": [{"key": "gpu.example.com/memory", "operator": "Gt", "value": "40"}]}
    taint = Taint("gpu.example.com/memory", "80", "NoSchedule")
    assert not pod_requirements(spec).tolerations[0].tolerates(taint)
    assert pod_requirements(spec, taint_comparisons=True).tolerations[0].tolerates(taint)
    assert (
        not pod_requirements(spec, taint_comparisons=True)
        .tolerations[0]
        .tolerates(Taint("gpu.example.com/memory", "20", "NoSchedule"))
    )
    # both values must be canonical decimal integers (compareNumericValues)
    assert (
        not pod_requirements(spec, taint_comparisons=True)
        .tolerations[0]
        .tolerates(Taint("gpu.example.com/memory", "080", "NoSchedule"))
    )


# ----------------------------------------------------------------- resource pools


def test_pools_as_the_allocator_gathers_them():
    from gpulint.kube.dra.allocation import node_devices

    def spec(node, pool, generation, count, *devices):
        return {
            "driver": "driver-a",
            "nodeName": node,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": [{"name": d} for d in devices],
        }

    nodes = [NodeInfo(n, {}, (), False, {}, {}) for n in ("node-1", "node-2")]
    # a pool of two slices on two nodes is complete: each node sees its own slice's devices
    found = node_devices([spec("node-1", "shared", 1, 2, "a"), spec("node-2", "shared", 1, 2, "b")], nodes)
    assert [d.name for d in found["node-1"].devices] == ["a"] and not found["node-1"].blocked
    # a newer generation elsewhere makes this node's slice obsolete; one slice of two is incomplete
    found = node_devices([spec("node-1", "p", 1, 2, "a"), spec("node-2", "p", 2, 2, "b")], nodes)
    assert found["node-1"].devices == [] and not found["node-1"].blocked
    assert found["node-2"].devices == [] and "driver-a/p is currently being updated" in found["node-2"].blocked
    # the same device name twice in a pool: invalid
    found = node_devices([spec("node-1", "p", 1, 2, "a"), spec("node-1", "p", 1, 2, "a")], nodes)
    assert found["node-1"].devices == [] and "currently invalid" in found["node-1"].blocked
    # a hand-written inventory without resourceSliceCount is trusted
    loose = {"driver": "driver-a", "nodeName": "node-1", "pool": {"name": "p"}, "devices": [{"name": "a"}]}
    assert [d.name for d in node_devices([loose], nodes)["node-1"].devices] == ["a"]
