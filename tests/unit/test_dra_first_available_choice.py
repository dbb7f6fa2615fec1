"""Which firstAvailable subrequest the allocator takes (the dra allocate oracle family compares it with the devices
the scheduler's Reserve allocates): allocateOne tries a request's subrequests in order, each with every choice of
the later requests, and keeps the first that completes (k8s.io/dynamic-resource-allocation v0.37.2
structured/internal/stable allocator_stable.go), so a claim that prefers four GPUs gets the two a node has
through its fallback, and the fallback's count is what the pod holds."""

import json
import textwrap

from conftest import run_cli

from gpulint.kube.dra.allocation import claim_spec_of
from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
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
metadata: {name: node-a-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
  - {name: gpu-1, attributes: {model: {string: a100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
  - {name: gpu-1, attributes: {model: {string: h100}}}
  - {name: gpu-2, attributes: {model: {string: h100}}}
  - {name: gpu-3, attributes: {model: {string: h100}}}
"""

# another pod's claim holds two of node-b's GPUs
HELD = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: ml, uid: 0d9c3f5e-8a1b-4c2d-9e7f-000000000002}
spec:
  devices:
    requests:
    - {name: held, exactly: {deviceClassName: gpu.example.com, count: 2}}
status:
  allocation:
    devices:
      results:
      - {request: held, driver: gpu.example.com, pool: node-b, device: gpu-0}
      - {request: held, driver: gpu.example.com, pool: node-b, device: gpu-1}
  reservedFor:
  - {resource: pods, name: other, uid: 0d9c3f5e-8a1b-4c2d-9e7f-000000000003}
"""

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpus, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: four, deviceClassName: gpu.example.com, count: 4}
      - name: two-h100
        deviceClassName: gpu.example.com
        count: 2
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "h100"'}
      - {name: one, deviceClassName: gpu.example.com, count: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - {name: gpus, resourceClaimName: gpus}
  containers:
  - name: main
    image: registry.example.com/train:1
    resources:
      claims:
      - {name: gpus}
"""


def chosen(cluster: str, now: bool = False) -> dict[str, tuple[str, ...]]:
    inventory = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=cluster.encode())])
    run = LintRun(Config(), [Source("pod.yaml", content=CLAIM.encode())], inventory)
    run.report()
    claim = next(o for f in run.files for o in f.objects if o.kind == "ResourceClaim")
    dra = run.resolver.dra
    specs = (claim_spec_of(claim.data, claim.kind),)
    verdicts = dra.verdicts_now(specs) if now else dra.verdicts(specs)
    return {n.name: v.chosen for g, v in verdicts for n in g.nodes if v.fits}


def test_the_first_subrequest_that_completes_is_the_one_allocated():
    # node-a has two GPUs, one of them an h100: neither four nor two h100s, so the last subrequest
    assert chosen(CLUSTER) == {"node-a": ("gpu/one",), "node-b": ("gpu/four",)}


def test_devices_other_claims_hold_move_the_choice_to_a_later_subrequest():
    # trap: on the empty cluster node-b gives four; with two held it gives the two h100s left, not one device
    assert chosen(CLUSTER + HELD) == {"node-a": ("gpu/one",), "node-b": ("gpu/four",)}
    assert chosen(CLUSTER + HELD, now=True) == {"node-a": ("gpu/one",), "node-b": ("gpu/two-h100",)}


def test_explain_names_the_subrequest_the_allocator_takes(tmp_path):
    (tmp_path / "pod.yaml").write_text(CLAIM)
    (tmp_path / "cluster.yaml").write_text(textwrap.dedent(CLUSTER))
    result = run_cli("explain", str(tmp_path / "pod.yaml"), "--inventory", str(tmp_path / "cluster.yaml"),
                     "--format", "json", "--object", "Pod/ml/trainer")  # fmt: skip
    (explanation,) = json.loads(result.stdout)["explanations"]
    (step,) = [s for s in explanation["steps"] if s["title"] == "DRA claims"]
    assert step["lines"][-1] == "firstAvailable: the allocator takes gpu/one on 1 node, gpu/four on 1 node"
