"""An allocator error on one node fails the whole scheduling attempt (the dra allocate oracle family found it):
Allocate validates every request and subrequest first, and one asking for all devices errors on a node that
sees an incomplete or invalid pool ("asks for all devices, but resource pool ... is currently being updated",
k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/stable allocator_stable.go); the scheduler's
findNodesThatPassFilters then fails the attempt whatever the other nodes offer."""

import json
import textwrap

from conftest import run_cli

from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {kubernetes.io/hostname: gpu-a, pool: train}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b, labels: {kubernetes.io/hostname: gpu-b, pool: spare}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-a-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: gpu-a
  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
  - {name: gpu-1, attributes: {model: {string: h100}}}
---
# the driver on gpu-b publishes its pool in two slices and the second is not there yet
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-b-gpu.example.com-0}
spec:
  driver: gpu.example.com
  nodeName: gpu-b
  pool: {name: gpu-b, generation: 3, resourceSliceCount: 2}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
"""


def pod(requests: str, node_selector: str = "") -> str:
    return (
        textwrap.dedent(
            """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: gpus, namespace: ml}
        spec:
          spec:
            devices:
              requests:
        """
        )
        + textwrap.indent(textwrap.dedent(requests), " " * 6)
        + textwrap.dedent(
            f"""
        ---
        apiVersion: v1
        kind: Pod
        metadata: {{name: trainer, namespace: ml}}
        spec:
          {node_selector or "restartPolicy: Never"}
          resourceClaims:
          - {{name: gpus, resourceClaimTemplateName: gpus}}
          containers:
          - name: main
            image: registry.example.com/train:1
            resources:
              claims:
              - {{name: gpus}}
        """
        )
    )


def findings(manifest: str, cluster: str = CLUSTER) -> list[str]:
    inventory = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=cluster.encode())])
    run = LintRun(Config(), [Source("pod.yaml", content=manifest.encode())], inventory)
    found = run.report().findings
    return [" ".join([f.message, *f.notes]) for f in found if f.rule == "claim-unsatisfiable"]


FIRST_AVAILABLE = """
- name: gpu
  firstAvailable:
  - {name: two, deviceClassName: gpu.example.com, count: 2}
  - {name: all, deviceClassName: gpu.example.com, allocationMode: All}
"""


def test_an_all_subrequest_errors_on_a_node_with_an_incomplete_pool_and_the_pod_stays_pending():
    # gpu-a could give two GPUs at once, but the allocator errors on gpu-b first (every subrequest is validated)
    (found,) = findings(pod(FIRST_AVAILABLE))
    assert "the scheduler's allocator fails on node gpu-b" in found
    assert (
        "request 'gpu/all' asks for all devices, but resource pool gpu.example.com/gpu-b is currently being updated"
        in found
    )
    assert "fails the whole scheduling attempt" in found


def test_a_pod_kept_off_the_node_with_the_incomplete_pool_is_allocated():
    # the filters before DynamicResources leave gpu-b out: its pool is never looked at
    assert findings(pod(FIRST_AVAILABLE, "nodeSelector: {pool: train}")) == []


def test_an_exact_count_request_takes_devices_from_an_incomplete_pool_without_error():
    # only a request for all devices needs the whole pool; two GPUs fit gpu-a (gpu-b has one)
    assert findings(pod("- {name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}")) == []


def test_explain_fails_the_dra_step_as_check_does(write):
    cluster, manifest = write("cluster.yaml", CLUSTER), write("pod.yaml", pod(FIRST_AVAILABLE))
    checked = run_cli("check", str(manifest), "--inventory", str(cluster), "--format", "json")
    explained = run_cli("explain", str(manifest), "--inventory", str(cluster), "--format", "json")
    assert checked.exit_code == explained.exit_code == 1
    explanations = json.loads(explained.stdout)["explanations"]  # the template's, then the pod's
    (dra,) = [step for e in explanations for step in e["steps"] if step["title"] == "DRA claims"]
    assert dra["status"] == "FAIL"
    assert any("the scheduler's allocator fails on node gpu-b" in line for line in dra["lines"])


# isSelectable evaluates a request's selectors in order and stops at the first that does not match: gpu-0 of
# gpu-b (no "index" attribute, 40Gi) never meets the second selector (the oracle's seed 4 found cel-invalid's
# runtime error on it, where Kubernetes allocates)
MEMORY_FIRST = """
- name: gpu
  exactly:
    deviceClassName: gpu.example.com
    allocationMode: All
    selectors:
    - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}
    - cel: {expression: 'device.attributes["gpu.example.com"].index < 2'}
"""
INDEXED = (
    CLUSTER.split("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice")[0]
    + """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-a-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: gpu-a
  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {index: {int: 0}}, capacity: {memory: {value: 80Gi}}}
  - {name: gpu-1, attributes: {index: {int: 1}}, capacity: {memory: {value: 80Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-b-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: gpu-b
  pool: {name: gpu-b, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: l4}}, capacity: {memory: {value: 40Gi}}}
"""
)


def cel_findings(manifest: str) -> list[str]:
    inventory = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=INDEXED.encode())])
    run = LintRun(Config(), [Source("pod.yaml", content=manifest.encode())], inventory)
    return [f.message for f in run.report().findings if f.rule == "cel-invalid"]


def test_a_selector_is_not_evaluated_on_a_device_an_earlier_selector_refused():
    assert cel_findings(pod(MEMORY_FIRST)) == []


def test_the_same_selectors_in_the_other_order_fail_on_that_device():
    first, second = MEMORY_FIRST.split("    - cel:")[1:]
    swapped = MEMORY_FIRST.replace(first, "\x00").replace(second, first).replace("\x00", second)
    assert cel_findings(pod(swapped)) == ["CEL runtime error on device gpu.example.com/gpu-b/gpu-0: no such key: index"]


# The scheduler's PreFilter refuses a claim whose request or subrequest names a class that does not exist ("request
# gpu/sub-0: device class missing does not exist", on every node), whatever its other subrequests offer; the oracle
# found gpulint's allocator taking such a class for one without selectors and saying the claims fit node by node.
# An inventory that lists no DeviceClass does not say which exist (device-class-unknown stays silent).
NO_CLASSES = "\n---\n".join(doc for doc in CLUSTER.split("\n---\n") if "kind: DeviceClass" not in doc)


def test_a_class_the_inventory_lacks_leaves_the_allocation_unknown_where_it_would_fit(write):
    assert "DeviceClass" not in NO_CLASSES and NO_CLASSES.count("kind: ResourceSlice") == 2
    one = pod("- {name: gpu, exactly: {deviceClassName: gpu.example.com}}")
    cluster, manifest = write("cluster.yaml", NO_CLASSES), write("pod.yaml", one)
    explained = run_cli("explain", str(manifest), "--inventory", str(cluster), "--format", "json")
    explanations = json.loads(explained.stdout)["explanations"]
    (dra,) = [step for e in explanations for step in e["steps"] if step["title"] == "DRA claims"]
    assert dra["status"] == "info"
    assert "allocation not evaluated: device class gpu.example.com is not in the inventory" in dra["lines"]
    assert findings(one, NO_CLASSES) == []


def test_a_class_the_inventory_lacks_cannot_make_room_for_more_devices_than_a_node_has(write):
    # whatever the class selects, no node has five devices: the claims never fit (explain's DRA step says so)
    five = pod("- {name: gpu, exactly: {deviceClassName: gpu.example.com, count: 5}}")
    cluster, manifest = write("cluster.yaml", NO_CLASSES), write("pod.yaml", five)
    explained = run_cli("explain", str(manifest), "--inventory", str(cluster), "--format", "json")
    explanations = json.loads(explained.stdout)["explanations"]
    (dra,) = [step for e in explanations for step in e["steps"] if step["title"] == "DRA claims"]
    assert dra["status"] == "FAIL"
    assert any("needs 5 devices of class gpu.example.com" in line for line in dra["lines"])


# The allocator's visiting order decides whether an ExactCount request reaches a failing device: its incubating
# variant (1.37's default, with DRAConsumableCapacity or the binding conditions' gates on) sorts pools by driver and
# name and slices by name (pools_incubating.go sortPoolsByID, sortSlicesByName); the stable one (those gates off)
# ranges over a map of pools (pools_stable.go GatherPools).
TWO_POOLS = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0a}
spec:
  driver: gpu.example.com
  nodeName: gpu-0
  pool: {name: gpu-0a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-9, attributes: {model: {string: h100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0b}
spec:
  driver: gpu.example.com
  nodeName: gpu-0
  pool: {name: gpu-0b, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}, index: {int: 0}}}
"""

ONE_LOW_INDEX = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].index < 2'}
"""


def runtime_errors(gates: dict[str, bool] | None) -> list[tuple[str, str]]:
    inventory = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=TWO_POOLS.encode())])
    run = LintRun(Config(feature_gates=gates), [Source("claim.yaml", content=ONE_LOW_INDEX.encode())], inventory)
    found = run.report().findings
    return [(f.severity.name, f.message) for f in found if f.rule == "cel-invalid"]


def test_a_failing_device_in_the_pool_visited_first_fails_every_attempt():
    # pool gpu-0a sorts first: the allocator evaluates gpu-9 before it could have its one device from gpu-0b
    assert runtime_errors(None) == [
        ("ERROR", "CEL runtime error on device gpu.example.com/gpu-0a/gpu-9: no such key: index")
    ]


def test_with_the_stable_allocator_the_pools_come_in_any_order():
    # trap: with both gates off the scheduler runs the stable variant, which may visit gpu-0b first and allocate
    gates = {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}
    assert [severity for severity, _ in runtime_errors(gates)] == ["WARNING"]
