"""api-rejected on ResourceSlices: what the API server's validation refuses (pkg/apis/resource/validation
validateResourceSliceSpec), worded and placed as it words it; a driver's real slices pass."""

import textwrap

import pytest
from conftest import by_rule

from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun

# The shape the NVIDIA GPU DRA driver publishes: a node-local pool, GPUs with attributes and capacity.
GOOD = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu.nvidia.com-x7k2p}
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
      productName: {string: NVIDIA H100 80GB HBM3}
      cudaComputeCapability: {version: 9.0.0}
      driverVersion: {version: 570.124.6}
      resource.kubernetes.io/pcieRoot: {string: pci0000:17}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-1
    attributes:
      type: {string: gpu}
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
"""


def rejected(text: str, **gates: bool) -> list[tuple[int, int, str]]:
    body = textwrap.dedent(text).lstrip("\n")
    findings = LintRun(Config(feature_gates=gates), [Source("slice.yaml", content=body.encode())]).report().findings
    return [(f.line, f.column, _field_error(f)) for f in by_rule(findings, "api-rejected")]


def _field_error(finding) -> str:
    """The API server's message: the finding's own line, or past 160 characters its note (the line is short)."""
    return finding.notes[0] if finding.notes else finding.message.removeprefix("the API server rejects this object: ")


def test_a_drivers_slice_is_accepted():
    assert rejected(GOOD) == []


def test_exactly_one_node_selection():
    both = GOOD.replace("  nodeName: node-a\n", "  nodeName: node-a\n  allNodes: true\n")
    assert rejected(both) == [
        (
            5,
            3,
            'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
            "`perDeviceNodeSelection` is required, but multiple fields are set",
        )
    ]
    none = GOOD.replace("  nodeName: node-a\n", "")
    ((line, _, message),) = rejected(none)
    assert line == 5 and message == (
        "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    )
    two_terms = GOOD.replace(
        "  nodeName: node-a\n",
        "  nodeSelector:\n    nodeSelectorTerms:\n    - matchFields: [{key: metadata.name, operator: In, values: [node-a]}]\n"
        "    - matchFields: [{key: metadata.name, operator: In, values: [node-b]}]\n",
    )
    ((line, _, message),) = rejected(two_terms)
    assert line == 8 and message.startswith("spec.nodeSelector.nodeSelectorTerms: Invalid value: ")
    assert message.endswith("must have exactly one node selector term")
    assert rejected(GOOD.replace("nodeName: node-a", "allNodes: false")) == [
        (
            5,
            3,
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        ),
        (6, 13, "spec.allNodes: Invalid value: false: must be either unset or set to true"),
    ]


def test_pool_and_device_names():
    found = rejected(
        GOOD.replace("generation: 1, resourceSliceCount: 1", "generation: -1, resourceSliceCount: 0").replace(
            "- name: gpu-1", "- name: gpu-0"
        )
    )
    assert (7, 36, "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero") in found
    assert (7, 60, "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero") in found
    assert (18, 5, 'spec.devices[1]: Duplicate value: "gpu-0"') in found
    # a MIG device name with the profile's dot is not a DNS label
    ((line, column, message),) = rejected(GOOD.replace("- name: gpu-1", "- name: gpu-0-mig-1g.10gb-0"))
    assert (line, column) == (18, 11)
    assert message == 'spec.devices[1].name: Invalid value: "gpu-0-mig-1g.10gb-0": must not contain dots'


def test_attribute_values():
    # CUDA's "9.0" is not semver: drivers publish 9.0.0
    found = rejected(GOOD.replace("cudaComputeCapability: {version: 9.0.0}", "cudaComputeCapability: {version: '9.0'}"))
    assert found == [
        (
            13,
            40,
            'spec.devices[0].attributes[cudaComputeCapability].version: Invalid value: "9.0": must be a string '
            "compatible with semver.org spec 2.0.0",
        )
    ]
    two = GOOD.replace("type: {string: gpu}", "type: {string: gpu, int: 1}", 1)
    ((line, column, message),) = rejected(two)
    assert (line, column) == (11, 13)
    assert message == (
        'spec.devices[0].attributes[type]: Invalid value: "{int, string}": must specify exactly one of: '
        "`int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"
    )
    empty_list = GOOD.replace("type: {string: gpu}", "type: {strings: []}", 1)
    assert rejected(empty_list, DRAListTypeAttributes=True) == [
        (11, 23, "spec.devices[0].attributes[type].strings: Invalid value: []: must not be empty if specified")
    ]


def test_fields_of_disabled_gates_are_dropped_before_validation():
    """resourceslice/strategy.go dropDisabledFields (1.37): with DRAListTypeAttributes off a list attribute is
    dropped, leaving an attribute without a value; with DRAPartitionableDevices off the counters go (found by the
    dra validate oracle family). An alpha gate not stated may be on: only what both ways refuse is reported."""
    listed = GOOD.replace("type: {string: gpu}", "type: {strings: [gpu]}", 1)
    assert rejected(listed) == []
    ((_, _, message),) = rejected(listed, DRAListTypeAttributes=False)
    assert message == (
        'spec.devices[0].attributes[type]: Invalid value: "": must specify one of: '
        "`int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"
    )
    assert rejected(listed, DRAListTypeAttributes=True) == []
    counters = GOOD.replace("  devices:\n", "  sharedCounters: [{name: gpu-0-counters, counters: {}}]\n  devices:\n")
    assert rejected(counters, DRAPartitionableDevices=False) == []
    # the schema's required fields inside a dropped field are never validated either (schema-invalid)
    policy = GOOD.replace("memory: {value: 80Gi}", "memory: {value: 80Gi, requestPolicy: {validRange: {}}}", 1)
    body = textwrap.dedent(policy).lstrip("\n").encode()
    for gates, expected in (({"DRAConsumableCapacity": False}, []), ({}, ['"min" is required'])):
        found = LintRun(Config(feature_gates=gates), [Source("slice.yaml", content=body)]).report().findings
        assert [f.message.rpartition("Required value: ")[2] for f in by_rule(found, "schema-invalid")] == expected
    assert [m for _, _, m in rejected(counters)] == [
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
        "spec.sharedCounters[0].counters: Required value",
    ]


def test_capacity_request_policy_needs_multiple_allocations():
    policy = GOOD.replace(
        "memory: {value: 80Gi}\n  - name: gpu-1",
        "memory: {value: 80Gi, requestPolicy: {default: 10Gi, validRange: {min: 10Gi, step: 10Gi}}}\n  - name: gpu-1",
    )
    assert rejected(policy) == [
        (17, 44, "spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true")
    ]
    shared = policy.replace("  - name: gpu-0\n", "  - name: gpu-0\n    allowMultipleAllocations: true\n")
    assert rejected(shared) == []
    zero_step = shared.replace("step: 10Gi", "step: 0")
    ((_, _, message),) = rejected(zero_step)
    assert (
        message
        == 'spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: "0": must be greater than zero'
    )


def test_taints_and_the_device_limit():
    tainted = GOOD.replace(
        "  - name: gpu-1\n",
        "  - name: gpu-1\n    taints: [{key: gpu.nvidia.com/xid, value: '79', effect: PreferNoSchedule}]\n",
    )
    ((line, column, message),) = rejected(tainted)
    assert (line, column) == (19, 61)
    assert message == (
        'spec.devices[1].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: '
        '"NoSchedule", "NoExecute", "None"'
    )
    devices = "".join(f"  - name: gpu-{index}\n" for index in range(65))
    base = GOOD.split("  devices:\n")[0] + "  devices:\n"
    assert rejected(base + devices) == []  # 65 plain devices: under 128
    with_taint = base + devices.replace(
        "  - name: gpu-0\n", "  - name: gpu-0\n    taints: [{key: example.com/t, effect: NoSchedule}]\n"
    )
    assert rejected(with_taint) == [(9, 3, "spec.devices: Too many: 65: must have at most 64 items")]


def test_shared_counters_and_per_device_node_selection():
    counters = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: node-a-counters}
    spec:
      driver: gpu.nvidia.com
      nodeName: node-a
      pool: {name: node-a, generation: 1, resourceSliceCount: 2}
      sharedCounters:
      - name: gpu-0-counter-set
        counters: {memory: {value: 80Gi}}
      - name: gpu-0-counter-set
        counters: {multiprocessors: {value: "98"}}
    """
    assert rejected(counters) == [(11, 5, 'spec.sharedCounters[1]: Duplicate value: "gpu-0-counter-set"')]
    both = (
        counters.replace(
            "      - name: gpu-0-counter-set\n        counters: {multiprocessors",
            "      - name: gpu-1-counter-set\n        counters: {multiprocessors",
        )
        + "  devices: [{name: gpu-0}]\n"
    )
    assert rejected(both) == [(5, 3, 'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed')]
    per_device = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: fabric}
    spec:
      driver: gpu.nvidia.com
      perDeviceNodeSelection: true
      pool: {name: fabric, generation: 1, resourceSliceCount: 1}
      devices:
      - {name: gpu-0, nodeName: node-a}
      - {name: gpu-1}
    """
    assert rejected(per_device) == [
        (
            10,
            5,
            "spec.devices[1]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
            "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )
    ]
    node_local = per_device.replace("perDeviceNodeSelection: true", "nodeName: node-a").replace(
        "- {name: gpu-1}", "- {name: gpu-1, allNodes: true}"
    )
    assert [m for _, _, m in rejected(node_local)] == [
        "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        "spec.devices[1]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ]


def test_the_inventory_command_warns_about_slices_the_api_server_would_refuse(tmp_path):
    import json

    from conftest import run_cli

    good = tmp_path / "good"
    good.mkdir()
    (good / "slices.yaml").write_text(textwrap.dedent(GOOD).lstrip("\n"), encoding="utf-8")
    clean = run_cli("inventory", "--inventory", str(good))
    assert clean.exit_code == 0 and "would refuse" not in clean.stdout
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "slices.yaml").write_text(
        textwrap.dedent(GOOD).lstrip("\n").replace("- name: gpu-1", "- name: gpu-0-mig-1g.10gb-0"), encoding="utf-8"
    )
    text = run_cli("inventory", "--inventory", str(bad))
    assert text.exit_code == 0  # a warning: the cluster accepted them (or the inventory was written by hand)
    assert "Warning: inventory objects the API server would refuse" in text.stdout
    assert (
        "slices.yaml:18:11: ResourceSlice node-a-gpu.nvidia.com-x7k2p: spec.devices[1].name: Invalid value: "
        '"gpu-0-mig-1g.10gb-0": must not contain dots'
    ) in text.stdout
    data = json.loads(run_cli("inventory", "--inventory", str(bad), "--format", "json").stdout)
    (problem,) = data["summary"]["resourceSliceProblems"]
    assert problem.endswith('spec.devices[1].name: Invalid value: "gpu-0-mig-1g.10gb-0": must not contain dots')
    (rejected,) = data["summary"]["rejectedObjects"]
    assert (rejected["line"], rejected["column"], rejected["field"]) == (18, 11, "spec.devices[1].name")


def test_the_dra_fixture_inventory_holds_only_slices_the_api_server_accepts():
    """tests/data/dra/slices.yaml stands for what a cluster holds: every slice in it must pass the same
    validation (MIG device names without dots, as the API server requires of a DNS label)."""
    from conftest import DATA

    from gpulint.kube.validation.resource_slice import resource_slice_spec
    from gpulint.lint.world.inventory import load_inventory

    inventory = load_inventory([DATA / "dra"])
    assert len(inventory.slices) >= 6
    problems = [
        (located.data["metadata"]["name"], error.message())
        for located in inventory.slices
        for error in resource_slice_spec(located.data.get("spec"), ("spec",))
    ]
    assert problems == []


@pytest.mark.slow
def test_the_cheap_first_pass_over_devices_never_hides_an_error():
    """_plain_device lets the common device skip the full check: it must only ever say yes when the full check
    (validateDevice) finds nothing. Devices drawn from names, attribute and capacity shapes near every limit."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from gpulint.kube.validation.resource_slice import _device, _plain_device

    names = st.sampled_from(["gpu-0", "GPU_0", "", "a" * 63, "a" * 64, "gpu.0", "-gpu", 7])
    keys = st.sampled_from(
        ["type", "uuid", "gpu.nvidia.com/model", "a" * 32, "a" * 33, "bad key", "a/b/c", "/x", "x/", "9lives"]
    )
    values = st.one_of(
        st.fixed_dictionaries({"string": st.sampled_from(["gpu", "x" * 64, "x" * 65, 3])}),
        st.fixed_dictionaries({"version": st.sampled_from(["1.2.3", "1.2", "v1.2.3", "1.2.3-rc.1"])}),
        st.fixed_dictionaries({"int": st.sampled_from([0, None, 7])}),
        st.fixed_dictionaries({"bool": st.just(True)}),
        st.fixed_dictionaries({"strings": st.sampled_from([[], ["a"]])}),
        st.just({"string": "a", "int": 1}),
        st.just({}),
        st.just("gpu"),
    )
    capacities = st.one_of(
        st.just({"value": "80Gi"}), st.just({"value": "1", "requestPolicy": {"default": "1"}}), st.just("80Gi")
    )
    devices = st.fixed_dictionaries(
        {"name": names},
        optional={
            "attributes": st.dictionaries(keys, values, max_size=34),
            "capacity": st.dictionaries(keys, capacities, max_size=3),
            "taints": st.just([{"key": "k", "effect": "NoSchedule"}]),
            "allowMultipleAllocations": st.booleans(),
        },
    )

    @settings(max_examples=400, deadline=None)
    @given(devices)
    def plain_means_valid(device):
        if _plain_device(device):
            assert list(_device(device, ("spec", "devices", 0), False)) == []

    plain_means_valid()
    assert _plain_device(
        {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}, "capacity": {"memory": {"value": "80Gi"}}}
    )


def test_quantities_the_decoder_refuses_are_schema_invalid():
    """Quantity.UnmarshalJSON (apimachinery v0.37.2): ParseQuantity's refusal of a capacity, a counter or a claim's
    capacity request ends the request (a 400) before validation; spaces around it are trimmed, a null is zero, and
    a missing value is the zero Quantity (found by the dra validate oracle family)."""

    def schema_errors(text: str) -> list[str]:
        body = textwrap.dedent(text).lstrip("\n")
        findings = LintRun(Config(), [Source("slice.yaml", content=body.encode())]).report().findings
        return [f.notes[0] if f.notes else f.message for f in by_rule(findings, "schema-invalid")]

    assert schema_errors(GOOD.replace("memory: {value: 80Gi}", "memory: {value: ' 80Gi '}", 1)) == []
    assert schema_errors(GOOD.replace("memory: {value: 80Gi}", "memory: {value: null}", 1)) == []
    assert schema_errors(GOOD.replace("memory: {value: 80Gi}", "memory: {}", 1)) == []
    assert schema_errors(GOOD.replace("memory: {value: 80Gi}", "memory: {value: 80GB}", 1)) == [
        'spec.devices[0].capacity.memory.value: Invalid value: "80GB": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ]
    claim = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: shared-gpu, namespace: ml}
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com, capacity: {requests: {memory: 10e}}}
    """
    assert schema_errors(claim) == [
        'spec.devices.requests[0].exactly.capacity.requests.memory: Invalid value: "10e": unable to parse quantity\'s '
        "suffix"
    ]


def test_binding_conditions():
    """validateDeviceBindingParameters (1.37): each list only with the other, no repeats, no condition in both; with
    DRADeviceBindingConditions off (or DRAResourceClaimDeviceStatus) the fields are dropped first (found by the dra
    validate oracle family)."""
    bound = GOOD.replace(
        "  - name: gpu-1\n",
        "    bindingConditions: [dra.example.com/attached, dra.example.com/attached]\n"
        "    bindingFailureConditions: [dra.example.com/attached]\n"
        "  - name: gpu-1\n"
        "    bindingConditions: [dra.example.com/attached]\n",
    )
    assert [m for _, _, m in rejected(bound)] == [
        'spec.devices[0].bindingConditions[1]: Duplicate value: "dra.example.com/attached"',
        'spec.devices[0].bindingFailureConditions[0]: Invalid value: "dra.example.com/attached": '
        "bindingFailureConditions must not overlap with bindingConditions",
        "spec.devices[1].bindingFailureConditions: Invalid value: []: "
        "bindingFailureConditions are required to use bindingConditions",
    ]
    assert rejected(bound, DRADeviceBindingConditions=False) == []
