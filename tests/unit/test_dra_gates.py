"""Feature gates that reach the DRA allocator model, and what the allocator does with the gated fields:
shared counters (DRAPartitionableDevices), shared devices with capacity (DRAConsumableCapacity), device
taints (DRADeviceTaints), prioritized lists, admin access and DRA-backed extended resources."""

import textwrap

from conftest import by_rule

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def inventory(text: str):
    return load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=dedent(text).encode())])


def shown(finding) -> str:
    return "\n".join((finding.message, *finding.notes))


def lint(text: str, cluster=None, **config):
    source = Source("manifests.yaml", content=dedent(text).encode())
    return LintRun(Config(**config), [source], cluster).report().findings


NODE = """
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels: {kubernetes.io/hostname: gpu-node-1, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}
"""

# The NVIDIA DRA driver's partitionable A100: one counter set per GPU, MIG devices that consume it
# (two slices of one pool: in 1.37 a slice holds devices or shared counters, not both).
PARTITIONED = (
    NODE
    + """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-1-gpu.nvidia.com-counters}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 3, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0-counter-set
    counters:
      memory: {value: 80Gi}
      multiprocessors: {value: "98"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-1-gpu.nvidia.com-devices}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 3, resourceSliceCount: 2}
  devices:
"""
    + "".join(
        f"""
  - name: gpu-0-mig-3g-40gb-{index}
    attributes:
      type: {{string: mig}}
      profile: {{string: 3g.40gb}}
    capacity:
      memory: {{value: 40Gi}}
    consumesCounters:
    - counterSet: gpu-0-counter-set
      counters:
        memory: {{value: 40Gi}}
        multiprocessors: {{value: "42"}}"""
        for index in range(3)
    )
    + "\n"
)


def mig_claim(count: int) -> str:
    return f"""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: migs, namespace: ml}}
        spec:
          devices:
            requests:
            - name: migs
              exactly:
                deviceClassName: mig.nvidia.com
                count: {count}
                selectors:
                - cel: {{expression: "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}
        """


def test_mig_devices_share_their_gpus_counters():
    cluster = inventory(PARTITIONED)
    # three 3g.40gb placements are published, but the GPU's 80Gi (and 98 SMs) hold only two at once
    (finding,) = by_rule(lint(mig_claim(3), cluster), "claim-unsatisfiable")
    assert (finding.line, finding.severity) == (7, Severity.ERROR)
    assert "the requests need 3 devices together; 3 candidate devices" in shown(finding)
    assert "shared counters do not allow it" in shown(finding)
    assert not by_rule(lint(mig_claim(2), cluster), "claim-unsatisfiable")


def test_counters_are_ignored_and_their_devices_refused_with_partitionable_devices_off():
    cluster = inventory(PARTITIONED)
    # the allocator skips the counter slice; a device consuming counters is never allocated
    (finding,) = by_rule(
        lint(mig_claim(1), cluster, feature_gates={"DRAPartitionableDevices": False}), "claim-unsatisfiable"
    )
    assert (
        "needs 1 device of class mig.nvidia.com; 3 pass the class selectors and 0 its own selectors (3 more it cannot get: device gpu.nvidia.com/gpu-node-1/gpu-0-mig-3g-40gb-0 consumes counters, and DRAPartitionableDevices is off)"
        in shown(finding)
    )
    assert not by_rule(lint(mig_claim(1), cluster), "claim-unsatisfiable")


def test_a_pool_naming_a_missing_counter_set_is_invalid():
    broken = PARTITIONED.replace("- name: gpu-0-counter-set", "- name: gpu-1-counter-set")
    cluster = inventory(broken)
    (finding,) = by_rule(lint(mig_claim(1), cluster), "claim-unsatisfiable")
    assert "no node of 1 has a device for it" in shown(finding)
    all_request = mig_claim(1).replace("count: 1", "allocationMode: All")
    (finding,) = by_rule(lint(all_request, cluster), "claim-unsatisfiable")
    assert "is currently invalid (counter set gpu-0-counter-set not found)" in shown(finding)


PER_DEVICE = (
    NODE
    + """
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-2
  labels: {kubernetes.io/hostname: gpu-node-2}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  perDeviceNodeSelection: true
  pool: {name: fabric, generation: 1, resourceSliceCount: 1}
  devices:
  - name: mig-a
    nodeName: gpu-node-2
    attributes: {type: {string: mig}, profile: {string: 3g.40gb}}
  - name: mig-b
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [gpu-node-2]}
    attributes: {type: {string: mig}, profile: {string: 3g.40gb}}
"""
)


def test_devices_selecting_their_own_nodes_are_allocatable_there():
    cluster = inventory(PER_DEVICE)
    # both devices select gpu-node-2: a claim of two fits there, a claim of three nowhere
    assert not by_rule(lint(mig_claim(2), cluster), "claim-unsatisfiable")
    (finding,) = by_rule(lint(mig_claim(3), cluster), "claim-unsatisfiable")
    assert "needs 3 devices of class mig.nvidia.com; 2 pass the class selectors" in shown(finding)
    assert "gpu-node-2" in shown(finding)


SHARED = (
    NODE
    + """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-1-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    attributes: {type: {string: mig}, profile: {string: 3g.40gb}}
    capacity:
      memory:
        value: 40Gi
        requestPolicy:
          default: 10Gi
          validRange: {min: 10Gi, step: 10Gi}
"""
)


def shared_pod(first: str, second: str) -> str:
    claims = "".join(
        f"""
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: share-{index}, namespace: ml}}
        spec:
          devices:
            requests:
            - name: slice
              exactly:
                deviceClassName: mig.nvidia.com
                capacity:
                  requests: {{memory: {memory}}}
        """
        for index, memory in enumerate((first, second))
    )
    return (
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: two-tenants, namespace: ml}
        spec:
          resourceClaims:
          - {name: a, resourceClaimName: share-0}
          - {name: b, resourceClaimName: share-1}
          containers:
          - name: main
            image: registry.example.com/infer:1.4
            resources:
              claims: [{name: a}, {name: b}]
        """
        + claims
    )


def test_a_shared_device_serves_requests_within_its_capacity():
    cluster = inventory(SHARED)
    assert not by_rule(lint(shared_pod("20Gi", "20Gi"), cluster), "claim-unsatisfiable")
    # 25Gi rounds up to the policy's step: 30Gi twice is more than the device's 40Gi
    (finding,) = by_rule(lint(shared_pod("25Gi", "20Gi"), cluster), "claim-unsatisfiable")
    assert "capacity of shared devices do not allow it" in shown(finding)
    # a request for a capacity the device does not have never gets it
    (finding,) = by_rule(
        lint(shared_pod("20Gi", "20Gi").replace("{memory: 20Gi}", "{cores: 2}", 1), cluster), "claim-unsatisfiable"
    )
    assert "0 its own selectors" in shown(finding)


def test_a_range_of_milli_values_rounds_as_the_allocator_rounds_it():
    # the oracle's case (dra allocate, session 23): two 300m shares of a device of 1 core, a 250m step. With
    # DRAFractionalCapacityRange off (1.37's default) the allocator rounds each up on integers (Quantity.Value()):
    # 1 core each, 2 in all, no room; with it on, 500m each, room for both
    cores = SHARED.replace(
        "memory:\n        value: 40Gi\n        requestPolicy:\n          default: 10Gi\n"
        "          validRange: {min: 10Gi, step: 10Gi}",
        "cores:\n        value: '1'\n        requestPolicy:\n          default: 500m\n"
        "          validRange: {min: 250m, step: 250m}",
    )
    assert "cores:" in cores
    pod = shared_pod("300m", "300m").replace("{memory: 300m}", "{cores: 300m}")
    (finding,) = by_rule(lint(pod, inventory(cores)), "claim-unsatisfiable")
    assert "capacity of shared devices do not allow it" in shown(finding)
    assert not by_rule(lint(pod, inventory(cores), feature_gates={"DRAFractionalCapacityRange": True}),
                       "claim-unsatisfiable")  # fmt: skip
    # off, even 500m is a whole core; one share of it fits
    assert by_rule(lint(pod.replace("300m", "500m"), inventory(cores)), "claim-unsatisfiable")
    one = pod.replace("- {name: b, resourceClaimName: share-1}\n", "").replace("[{name: a}, {name: b}]", "[{name: a}]")
    assert not by_rule(lint(one, inventory(cores)), "claim-unsatisfiable")


def test_with_consumable_capacity_off_the_capacity_request_is_dropped_and_the_device_is_exclusive():
    cluster = inventory(SHARED)
    findings = lint(shared_pod("20Gi", "20Gi"), cluster, feature_gates={"DRAConsumableCapacity": False})
    # one device, two claims: without allowMultipleAllocations only one gets it
    (finding,) = by_rule(findings, "claim-unsatisfiable")
    assert "the requests need 2 distinct devices together; 1 candidate devices" in shown(finding)
    gated = by_rule(findings, "feature-gate-required")
    assert {f.severity for f in gated} == {Severity.WARNING}
    assert any("uses capacity requests, which needs the DRAConsumableCapacity feature gate" in f.message for f in gated)


def test_one_inventory_checked_under_other_gates_gets_each_their_features():
    """The DRA features of an inventory are worked out once per inventory and set of gates (the webhook's
    reviews share them): one inventory linted with DRAConsumableCapacity off, on, then off again."""
    cluster = inventory(SHARED)
    off = {"DRAConsumableCapacity": False}
    for config in (off, {}, off, {}):
        found = by_rule(lint(shared_pod("20Gi", "20Gi"), cluster, feature_gates=config), "claim-unsatisfiable")
        assert bool(found) is (config == off), config


TAINTED = (
    NODE
    + """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-1-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: mig-0
    attributes: {type: {string: mig}, profile: {string: 3g.40gb}}
  - name: mig-1
    attributes: {type: {string: mig}, profile: {string: 3g.40gb}}
    taints:
    - {key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule}
"""
)

ALL_MIGS = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: all-migs, namespace: ml}
    spec:
      devices:
        requests:
        - name: migs
          exactly:
            deviceClassName: mig.nvidia.com
            allocationMode: All
    """


def test_an_all_request_fails_on_a_tainted_device_it_does_not_tolerate():
    cluster = inventory(TAINTED)
    (finding,) = by_rule(lint(ALL_MIGS, cluster), "claim-unsatisfiable")
    assert (
        "needs every one of the 2 matching devices, and device gpu.nvidia.com/gpu-node-1/mig-1 has the taint"
        in shown(finding)
    )
    tolerating = ALL_MIGS + "        tolerations: [{key: gpu.nvidia.com/xid, operator: Exists}]\n"
    assert not by_rule(lint(tolerating, cluster), "claim-unsatisfiable")
    assert not by_rule(lint(ALL_MIGS, cluster, feature_gates={"DRADeviceTaints": False}), "claim-unsatisfiable")


FIRST_AVAILABLE = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: any-mig, namespace: ml}
    spec:
      spec:
        devices:
          requests:
          - name: mig
            firstAvailable:
            - {name: big, deviceClassName: mig.nvidia.com, count: 2}
            - {name: small, deviceClassName: mig.nvidia.com, count: 1}
    """


def test_gated_dra_fields_are_named_with_their_gate():
    # on by default in 1.37: nothing to say
    assert not by_rule(lint(FIRST_AVAILABLE), "feature-gate-required")
    # stated off: a warning at the field
    (finding,) = by_rule(lint(FIRST_AVAILABLE, feature_gates={"DRAPrioritizedList": False}), "feature-gate-required")
    assert (finding.line, finding.column, finding.severity) == (10, 9, Severity.WARNING)
    assert "uses firstAvailable (prioritized list), which needs the DRAPrioritizedList feature gate" in shown(finding)
    assert "is disabled in --feature-gates" in shown(finding)
    # capacity requests: alpha, off by default, in 1.34 (the first release serving resource.k8s.io/v1); beta in 1.36
    sized = FIRST_AVAILABLE.replace("count: 1}", "count: 1, capacity: {requests: {memory: 10Gi}}}")
    (finding,) = by_rule(lint(sized, kubernetes_version="1.34"), "feature-gate-required")
    assert (finding.line, finding.column, finding.severity) == (11, 78, Severity.INFO)  # the capacity value
    assert "uses capacity requests, which needs the DRAConsumableCapacity feature gate (alpha in Kubernetes 1.34)" in (
        shown(finding)
    )
    assert not by_rule(lint(sized, kubernetes_version="1.36"), "feature-gate-required")


def test_a_prioritized_list_with_the_gate_off_is_not_called_unsatisfiable():
    # the API server drops firstAvailable: feature-gate-required says so, the allocator does not guess
    cluster = inventory(TAINTED)
    findings = lint(
        FIRST_AVAILABLE.replace("count: 2", "count: 5"), cluster, feature_gates={"DRAPrioritizedList": False}
    )
    assert not by_rule(findings, "claim-unsatisfiable")
    assert by_rule(findings, "feature-gate-required")
    assert by_rule(
        lint(FIRST_AVAILABLE.replace("count: 1", "count: 5").replace("count: 2", "count: 5"), cluster),
        "claim-unsatisfiable",
    )


EXTENDED = """
apiVersion: v1
kind: Node
metadata: {name: dra-node, labels: {kubernetes.io/hostname: dra-node}}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
  extendedResourceName: nvidia.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-node
  pool: {name: dra-node, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {type: {string: gpu}}}
"""

EXTENDED_POD = """
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer, namespace: ml}
    spec:
      containers:
      - name: main
        image: registry.example.com/train:2.1
        resources:
          limits: {nvidia.com/gpu: 1}
    """


def test_a_dra_backed_extended_resource_needs_dra_extended_resource():
    cluster = inventory(EXTENDED)
    assert not by_rule(lint(EXTENDED_POD, cluster), "gpu-resource-unknown")
    # with the gate off the scheduler ignores extendedResourceName: no node offers nvidia.com/gpu
    findings = lint(EXTENDED_POD, cluster, feature_gates={"DRAExtendedResource": False})
    assert by_rule(findings, "gpu-resource-unknown")


PLUGIN_NODE = """
---
apiVersion: v1
kind: Node
metadata: {name: plugin-node, labels: {kubernetes.io/hostname: plugin-node}}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "1"}
"""


def test_a_node_without_the_extended_resource_leaves_it_to_dra():
    # shouldDelegateResourceToDRA: the device plugin's node is checked by NodeResourcesFit; on the DRA
    # node, which publishes no nvidia.com/gpu, a DeviceClass serves it (two GPUs there)
    two_gpus = EXTENDED.replace(
        "  - {name: gpu-0, attributes: {type: {string: gpu}}}\n",
        "  - {name: gpu-0, attributes: {type: {string: gpu}}}\n  - {name: gpu-1, attributes: {type: {string: gpu}}}\n",
    )
    assert "gpu-1" in two_gpus
    cluster = inventory(two_gpus + PLUGIN_NODE)
    pod = EXTENDED_POD.replace("nvidia.com/gpu: 1}", "nvidia.com/gpu: 2}")
    assert not by_rule(lint(pod, cluster), "gpu-unschedulable")
    # with the gate off nothing serves two GPUs: one on the plugin's node, none published on the other
    (finding,) = by_rule(lint(pod, cluster, feature_gates={"DRAExtendedResource": False}), "gpu-unschedulable")
    assert finding.severity is Severity.ERROR


UNTAINTED = TAINTED.replace('    taints:\n    - {key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule}\n', "")

RULE = """
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: drain-mig-1}
spec:
  deviceSelector: {driver: gpu.nvidia.com, pool: gpu-node-1, device: mig-1}
  taint: {key: example.com/maintenance, value: drain, effect: NoExecute}
"""

TWO_MIGS = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: two-migs, namespace: ml}
    spec:
      devices:
        requests:
        - name: migs
          exactly: {deviceClassName: mig.nvidia.com, count: 2}
    """


def test_a_device_taint_rule_taints_the_devices_it_selects():
    assert "taints" not in UNTAINTED
    assert not by_rule(lint(TWO_MIGS, inventory(UNTAINTED)), "claim-unsatisfiable")
    cluster = inventory(UNTAINTED + RULE)
    (finding,) = by_rule(lint(TWO_MIGS, cluster), "claim-unsatisfiable")
    assert "needs 2 devices of class mig.nvidia.com; 2 pass the class selectors and 1 its own selectors" in shown(
        finding
    )
    assert "has the taint example.com/maintenance=drain:NoExecute" in shown(finding)
    tolerating = TWO_MIGS.replace(
        "count: 2}", "count: 2, tolerations: [{key: example.com/maintenance, operator: Exists}]}"
    )
    assert not by_rule(lint(tolerating, cluster), "claim-unsatisfiable")
    # the rule in the linted files counts as well, and DRADeviceTaints off ignores it
    assert by_rule(lint(TWO_MIGS + RULE.replace("\n", "\n    "), inventory(UNTAINTED)), "claim-unsatisfiable")
    assert not by_rule(lint(TWO_MIGS, cluster, feature_gates={"DRADeviceTaints": False}), "claim-unsatisfiable")
    # the scheduler's ResourceSlice tracker applies rules only with DRADeviceTaintRules (GA in 1.37, off by
    # default in 1.36: pkg/features/kube_features.go v1.37.2)
    assert not by_rule(lint(TWO_MIGS, cluster, feature_gates={"DRADeviceTaintRules": False}), "claim-unsatisfiable")


def test_a_device_taint_rule_without_a_device_taints_the_whole_pool():
    pool_rule = RULE.replace(", device: mig-1}", "}")
    (finding,) = by_rule(lint(ALL_MIGS, inventory(UNTAINTED + pool_rule)), "claim-unsatisfiable")
    assert "needs every one of the 2 matching devices, and device gpu.nvidia.com/gpu-node-1/mig-0 has the taint" in (
        shown(finding)
    )
    other_pool = RULE.replace("pool: gpu-node-1", "pool: gpu-node-2")
    assert not by_rule(lint(ALL_MIGS, inventory(UNTAINTED + other_pool)), "claim-unsatisfiable")


def test_a_device_taint_rule_without_a_selector_taints_no_device():
    # the API server accepts a rule without deviceSelector, and the ResourceSlice tracker's applyPatches skips
    # it: "No selector matches no devices" (k8s.io/dynamic-resource-allocation v0.37.2 resourceslice/tracker)
    no_selector = RULE.replace("  deviceSelector: {driver: gpu.nvidia.com, pool: gpu-node-1, device: mig-1}\n", "")
    assert "deviceSelector" not in no_selector
    assert not by_rule(lint(ALL_MIGS, inventory(UNTAINTED + no_selector)), "claim-unsatisfiable")
    # an empty selector selects every device
    every = RULE.replace("{driver: gpu.nvidia.com, pool: gpu-node-1, device: mig-1}", "{}")
    (finding,) = by_rule(lint(ALL_MIGS, inventory(UNTAINTED + every)), "claim-unsatisfiable")
    assert "has the taint example.com/maintenance=drain:NoExecute" in shown(finding)


def test_a_shared_device_serves_one_request_once():
    # allocateOne moves on to the next device for a request's next unit: one shared device is one unit
    two = shared_pod("10Gi", "10Gi").replace("capacity:\n                  requests: {memory: 10Gi}", "count: 2", 1)
    assert "count: 2" in two
    (finding,) = by_rule(lint(two, inventory(SHARED)), "claim-unsatisfiable")
    assert "needs 2 devices of class mig.nvidia.com; 1 pass the class selectors and 1 its own selectors" in shown(
        finding
    )
    huge = two.replace("count: 2", "count: 5000")  # no search of 5000 levels: the claim limit decides first
    (finding,) = by_rule(lint(huge, inventory(SHARED)), "claim-unsatisfiable")
    assert "number of requested devices 5000 exceeds the claim limit of 32" in shown(finding)


def admin_pod(second_admin: bool, devices: int, admin_first: bool = False) -> tuple[str, object]:
    claims = "".join(
        f"""
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: ml}}
        spec:
          devices:
            requests:
            - name: mig
              exactly: {{deviceClassName: mig.nvidia.com{", adminAccess: true" if admin else ""}}}
        """
        for name, admin in (("workload", False), ("monitor", second_admin))
    )
    entries = ["- {name: a, resourceClaimName: workload}", "- {name: b, resourceClaimName: monitor}"]
    pod = """
        apiVersion: v1
        kind: Pod
        metadata: {name: monitored, namespace: ml}
        spec:
          resourceClaims:
          ENTRIES
          containers:
          - name: main
            image: registry.example.com/infer:1.4
            resources:
              claims: [{name: a}, {name: b}]
        """
    pod = pod.replace("ENTRIES", "\n          ".join(entries[::-1] if admin_first else entries))
    slice_devices = "".join(
        f"  - name: mig-{i}\n    attributes: {{type: {{string: mig}}, profile: {{string: 3g.40gb}}}}\n"
        for i in range(devices)
    )
    cluster = inventory(UNTAINTED.split("  devices:\n")[0] + "  devices:\n" + slice_devices)
    return pod + claims, cluster


def test_an_admin_access_claim_shares_the_device_another_claim_of_the_pod_takes():
    # allocateOne skips the in-use check for adminAccess: a monitoring claim reaches the workload's device
    text, cluster = admin_pod(second_admin=True, devices=1)
    assert not by_rule(lint(text, cluster), "claim-unsatisfiable")
    # without adminAccess the two claims need two devices: one is not enough, two are
    text, cluster = admin_pod(second_admin=False, devices=1)
    (finding,) = by_rule(lint(text, cluster), "claim-unsatisfiable")
    assert "the requests need 2 distinct devices together; 1 candidate devices" in shown(finding)
    text, cluster = admin_pod(second_admin=False, devices=2)
    assert not by_rule(lint(text, cluster), "claim-unsatisfiable")


def test_a_device_an_earlier_claim_takes_with_admin_access_is_in_use_for_a_later_claim_without():
    # allocateDevice marks an adminAccess device as allocating for its claim, and deviceInUse then refuses it to a
    # request without adminAccess of any claim: with the monitor's claim first, one device does not serve both
    # (Kubernetes: "cannot allocate all claims"; oracle, session 22), two do
    text, cluster = admin_pod(second_admin=True, devices=1, admin_first=True)
    (finding,) = by_rule(lint(text, cluster), "claim-unsatisfiable")
    assert "the requests need 2 distinct devices together; 1 candidate devices" in shown(finding)
    text, cluster = admin_pod(second_admin=True, devices=2, admin_first=True)
    assert not by_rule(lint(text, cluster), "claim-unsatisfiable")


def test_a_configs_gates_are_worked_out_once_and_follow_its_overrides():
    import pickle

    config = Config(kubernetes_version="1.33", feature_gates={"DRAPrioritizedList": True})
    assert config.gates is config.gates  # asked per object by several rules: built once per Config
    assert config.gates.enabled("DRAPrioritizedList") and not config.gates.enabled("DRAAdminAccess")
    newer = config.with_overrides(kubernetes_version="1.34")  # a new Config: its own gates
    assert newer.gates.enabled("DRAAdminAccess") and newer.gates.version == "1.34"
    sent = pickle.loads(pickle.dumps(config))  # what --jobs workers receive
    assert sent == config and sent.gates == config.gates
