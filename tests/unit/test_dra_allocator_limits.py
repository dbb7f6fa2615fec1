"""What the structured allocator refuses beyond selectors and counts, as upstream's TestAllocator shows it
(tests/upstream/dra-allocator): a claim's constraints hold among that claim's requests only, one claim
holds at most 32 devices, distinctAttribute over list attributes, and devices with binding conditions
while DRADeviceBindingConditions is off."""

import textwrap

import pytest
from conftest import by_rule, said

from gpulint.kube.dra.gates import gates_in_use
from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def gpus(count: int, extra: str = "", roots: int = 2) -> str:
    """One node with ``count`` GPUs of the NVIDIA DRA driver, split over ``roots`` PCIe roots; ``extra``:
    more fields of every device (YAML lines indented by four)."""
    devices = "".join(
        f"  - name: gpu-{index}\n"
        "    attributes:\n"
        "      type: {string: gpu}\n"
        f"      resource.kubernetes.io/pcieRoot: {{string: pci0000:{index % roots:02x}}}\n" + extra
        for index in range(count)
    )
    return (
        dedent(
            """
            apiVersion: v1
            kind: Node
            metadata:
              name: gpu-node-1
              labels: {kubernetes.io/hostname: gpu-node-1}
            ---
            apiVersion: resource.k8s.io/v1
            kind: DeviceClass
            metadata: {name: gpu.nvidia.com}
            spec:
              selectors:
              - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
            ---
            apiVersion: resource.k8s.io/v1
            kind: ResourceSlice
            metadata: {name: gpu-node-1-gpu.nvidia.com}
            spec:
              driver: gpu.nvidia.com
              nodeName: gpu-node-1
              pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
              devices:
            """
        )
        + devices
    )


def lint(manifests: str, cluster: str, **config):
    inventory = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=cluster.encode())])
    source = Source("manifests.yaml", content=dedent(manifests).encode())
    return by_rule(LintRun(Config(**config), [source], inventory).report().findings, "claim-unsatisfiable")


# A trainer pod with two claims: two GPUs on one PCIe root for the model, one more for a sidecar.
TWO_CLAIMS = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: model, namespace: ml}
    spec:
      devices:
        requests:
        - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
        - {name: peer, exactly: {deviceClassName: gpu.nvidia.com}}
        constraints:
        - {matchAttribute: resource.kubernetes.io/pcieRoot}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: sidecar, namespace: ml}
    spec:
      devices:
        requests:
        - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer, namespace: ml}
    spec:
      resourceClaims:
      - {name: model, resourceClaimName: model}
      - {name: sidecar, resourceClaimName: sidecar}
      containers:
      - name: main
        image: registry.example.com/train:2.1
        resources:
          claims: [{name: model}, {name: sidecar}]
    """


def test_a_claims_constraint_does_not_reach_the_other_claims_of_the_pod():
    # gpu-0, gpu-2 share root 00 for the model claim; the sidecar takes gpu-1 on root 01
    # (the sidecar's request is also named gpu: the constraint is the model claim's alone)
    assert not lint(TWO_CLAIMS, gpus(3))
    # every root holds one GPU: the model claim's two requests cannot share one
    (finding,) = lint(TWO_CLAIMS, gpus(3, roots=3))
    assert "must share one resource.kubernetes.io/pcieRoot" in said(finding)


def claim(counts: tuple[int, ...], mode: str = "") -> str:
    requests = "".join(
        f"\n        - {{name: r{index}, exactly: {{deviceClassName: gpu.nvidia.com, {mode or f'count: {count}'}}}}}"
        for index, count in enumerate(counts)
    )
    return f"""
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {{name: all-gpus, namespace: ml}}
    spec:
      devices:
        requests:{requests}
    """


def test_one_claim_holds_at_most_32_devices():
    cluster = gpus(40)
    assert not lint(claim((16, 16)), cluster)
    (finding,) = lint(claim((16, 16, 1)), cluster)
    assert "number of requested devices 33 exceeds the claim limit of 32" in said(finding)
    assert "no node of 1 can satisfy it" in said(finding)
    # allocationMode All asks for every matching device: 40 on this node, 32 on the smaller one
    (finding,) = lint(claim((0,), mode="allocationMode: All"), cluster)
    assert "number of requested devices 40 exceeds the claim limit of 32" in said(finding)
    assert not lint(claim((0,), mode="allocationMode: All"), gpus(32))


DISTINCT = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: spread, namespace: ml}
    spec:
      devices:
        requests:
        - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
        constraints:
        - {distinctAttribute: gpu.nvidia.com/nvlinkDomains}
    """


def test_distinct_list_attributes_need_two_devices_without_a_common_value():
    def domains(*lists: str) -> str:
        cluster = gpus(len(lists))
        for index, values in enumerate(lists):
            cluster = cluster.replace(
                f"- name: gpu-{index}\n    attributes:\n",
                f"- name: gpu-{index}\n    attributes:\n      nvlinkDomains: {{strings: [{values}]}}\n",
            )
        return cluster

    assert "nvlinkDomains: {strings: [a, b]}" in domains("a, b", "b, c")
    (finding,) = lint(DISTINCT, domains("a, b", "b, c"))
    assert "distinctAttribute gpu.nvidia.com/nvlinkDomains needs 2 devices whose values differ" in said(finding)
    assert not lint(DISTINCT, domains("a, b", "b, c", "d"))  # gpu-2 shares nothing with either
    assert not lint(DISTINCT, domains("a, b", "c"))


ONE_GPU = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: one, namespace: ml}
    spec:
      devices:
        requests:
        - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
    """


def test_devices_with_binding_conditions_need_dra_device_binding_conditions():
    # a fabric-attached GPU the driver binds before the pod starts (KEP-5007)
    cluster = gpus(1, extra="    bindingConditions: [FabricAttached]\n    bindingFailureConditions: [FabricFailed]\n")
    assert "bindingConditions: [FabricAttached]" in cluster
    assert not lint(ONE_GPU, cluster)  # 1.37: the gate is on (beta since 1.36)
    (finding,) = lint(ONE_GPU, cluster, feature_gates={"DRADeviceBindingConditions": False})
    assert "0 pass the class selectors" in said(finding)
    assert "1 device with bindingConditions not selected (DRADeviceBindingConditions" in said(finding)
    assert lint(ONE_GPU, cluster, feature_gates={"DRAResourceClaimDeviceStatus": False})
    assert not lint(ONE_GPU, gpus(1), feature_gates={"DRADeviceBindingConditions": False})


def test_binding_conditions_in_a_resource_slice_name_their_gate():
    # the API server drops them from new ResourceSlices while DRADeviceBindingConditions is off
    published = gpus(1, extra="    bindingConditions: [FabricAttached]\n    bindsToNode: true\n")

    def gated(version: str):
        source = Source("slices.yaml", content=published.encode())
        findings = LintRun(Config(kubernetes_version=version), [source]).report().findings
        return by_rule(findings, "feature-gate-required")

    first, second = gated("1.35")  # alpha, off by default
    assert (first.line, second.line) == (26, 27)
    assert "uses bindingConditions, which needs the DRADeviceBindingConditions feature gate (alpha" in said(first)
    assert "uses bindsToNode, which needs the DRADeviceBindingConditions feature gate" in said(second)
    assert not gated("1.36")


def test_an_inventory_slice_with_gated_fields_proves_a_default_off_gate_on():
    # 1.35: DRADeviceBindingConditions is alpha and off by default, but the API server drops
    # bindingConditions from slices while it is off: this exported slice was written with it on.
    cluster = gpus(1, extra="    bindingConditions: [FabricAttached]\n")
    assert not lint(ONE_GPU, cluster, kubernetes_version="1.35")
    # what --feature-gates states wins over the evidence
    (finding,) = lint(ONE_GPU, cluster, kubernetes_version="1.35", feature_gates={"DRADeviceBindingConditions": False})
    assert "bindingConditions not selected" in said(finding)
    (finding,) = lint(
        ONE_GPU, cluster, kubernetes_version="1.35", feature_gates={"DRAResourceClaimDeviceStatus": False}
    )
    assert "bindingConditions not selected" in said(finding)


@pytest.mark.parametrize(
    ("spec", "gates"),
    [
        ({"sharedCounters": [{"name": "gpu-0"}]}, {"DRAPartitionableDevices"}),
        ({"perDeviceNodeSelection": True}, {"DRAPartitionableDevices"}),
        ({"devices": [{"name": "a", "consumesCounters": [{"counterSet": "gpu-0"}]}]}, {"DRAPartitionableDevices"}),
        ({"devices": [{"name": "a", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}, {"DRADeviceTaints"}),
        ({"devices": [{"name": "a", "allowMultipleAllocations": True}]}, {"DRAConsumableCapacity"}),
        ({"devices": [{"name": "a", "allowMultipleAllocations": False}]}, set()),
        (
            {"devices": [{"name": "a", "bindsToNode": True}]},
            {"DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"},
        ),
        ({"devices": [{"name": "a", "taints": []}], "nodeName": "n"}, set()),
        ({"devices": "not a list"}, set()),
    ],
)
def test_the_gates_a_stored_slice_proves_on(spec, gates):
    assert gates_in_use([spec]) == gates
