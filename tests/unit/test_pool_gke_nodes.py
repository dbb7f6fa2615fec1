"""GKE's node pool auto-creation and Autopilot, asked of a GKE cluster whose inventory is its nodes
(`kubectl get nodes -o yaml`, or the live inventory's), with no `gcloud container node-pools list`.

Nodes labelled `cloud.google.com/gke-nodepool` are a GKE cluster's: a pod that selects a ComputeClass or a GKE
label no node carries may get a pool GKE creates for it (node auto-provisioning, a class's nodePoolAutoCreation),
so "matches no node" is unknown (info), as with a node-pools list and no cluster description. An Autopilot cluster
(the description's `autopilot.enabled`, or nodes named `gk3-...` as GKE names Autopilot nodes) creates the nodes
its pods need: what no node fits now is unknown, never an error. The nodes are shaped as GKE labels and taints them
(a g2-standard-8 L4 pool beside the e2 default pool)."""

from __future__ import annotations

import json

from conftest import said
from support.pools import findings

DEFAULT_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {prefix}-ml-default-pool-8f2c1d3e-k9wz
    labels:
      cloud.google.com/gke-nodepool: default-pool
      cloud.google.com/gke-os-distribution: cos
      cloud.google.com/machine-family: e2
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: {prefix}-ml-default-pool-8f2c1d3e-k9wz
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: e2-standard-4
      topology.kubernetes.io/zone: us-central1-a
  status:
    capacity: {{cpu: "4", memory: 16374524Ki, pods: "110"}}
    allocatable: {{cpu: 3920m, memory: 13207804Ki, pods: "110"}}
"""
L4_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {prefix}-ml-{pool}-5b7e9a21-tq4m
    labels:
      cloud.google.com/gke-accelerator: nvidia-l4
      cloud.google.com/gke-boot-disk: pd-balanced
      cloud.google.com/gke-gpu: "true"
      cloud.google.com/gke-nodepool: {pool}
      cloud.google.com/machine-family: g2
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: {prefix}-ml-{pool}-5b7e9a21-tq4m
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: g2-standard-8
      topology.kubernetes.io/zone: us-central1-a
  spec:
    taints:
    - {{key: nvidia.com/gpu, value: present, effect: NoSchedule}}
  status:
    capacity: {{cpu: "8", memory: 32880372Ki, nvidia.com/gpu: "1", pods: "110"}}
    allocatable: {{cpu: 7910m, memory: 29004532Ki, nvidia.com/gpu: "1", pods: "110"}}
"""

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-l4, namespace: inference}
spec:
  replicas: 1
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      nodeSelector: {%s}
      %s
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.4
        resources:
          limits: {nvidia.com/gpu: "%d"}
"""


def pod(selector: str = "", gpus: int = 1, tolerations: str = "") -> str:
    return POD % (selector, tolerations, gpus)


def nodes(tmp_path, prefix: str = "gke", pool: str = "l4-pool", *, gke: bool = True, extra: str = "") -> str:
    """`kubectl get nodes -o yaml` of the cluster: Standard nodes are named gke-<cluster>-<pool>-..., Autopilot's
    gk3-<cluster>-<pool>-... (``gke`` False: the same nodes without GKE's pool label, any other cluster's)."""
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        + DEFAULT_NODE.format(prefix=prefix)
        + L4_NODE.format(prefix=prefix, pool=pool)
    )
    if not gke:
        text = "\n".join(line for line in text.splitlines() if "gke-nodepool" not in line) + "\n"
    folder = tmp_path / "inventory"
    folder.mkdir()
    (folder / "nodes.yaml").write_text(text)
    if extra:
        (folder / "more.yaml").write_text(extra)
    return str(folder)


def rules(found: list[dict]) -> dict[str, dict]:
    return {f["rule"]: f for f in found if f["rule"] in ("over-tight-affinity", "gpu-unschedulable")}


def test_a_compute_class_no_gke_node_carries_is_unknown_not_a_warning(write, tmp_path):
    found = rules(findings(write, pod("cloud.google.com/compute-class: l4-class"), nodes(tmp_path)))
    assert list(found) == ["gpu-unschedulable"], found
    info = found["gpu-unschedulable"]
    assert info["severity"] == "info"
    assert "GKE may create a node pool for ComputeClass l4-class" in said(info)


def test_a_gpu_type_no_gke_node_has_is_unknown(write, tmp_path):
    found = rules(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-h100-80gb"), nodes(tmp_path)))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "GKE node auto-provisioning may create a node pool for the GPU type" in said(found["gpu-unschedulable"])


def test_the_same_nodes_without_gke_pool_labels_keep_the_error(write, tmp_path):
    # no node is a GKE pool's: nothing creates a pool, and the nodes are every node there is
    found = rules(findings(write, pod("cloud.google.com/compute-class: l4-class"), nodes(tmp_path, gke=False)))
    assert found["over-tight-affinity"]["severity"] == "error", found
    assert "gpu-unschedulable" not in found


def test_a_custom_label_the_pod_does_not_tolerate_still_warns_on_gke_nodes(write, tmp_path):
    # auto-creation carries GKE's labels, or a custom one whose taint the pod tolerates (workload separation)
    found = rules(findings(write, pod("team: research"), nodes(tmp_path)))
    assert found["over-tight-affinity"]["severity"] == "warning", found


def test_a_watched_class_without_auto_creation_stays_unknown_while_auto_provisioning_is_unknown(write, tmp_path):
    # nodes alone never say node auto-provisioning is off: GKE may still create the class's pool
    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "cloud.google.com/v1",
                "kind": "ComputeClass",
                "metadata": {"name": "l4-class"},
                "spec": {"nodePoolAutoCreation": {"enabled": False}},
            }
        ],
    }
    inventory = nodes(tmp_path, extra=json.dumps(listed))
    found = rules(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_a_pod_that_fits_a_gke_node_is_clean(write, tmp_path):
    # its one replica fills the one L4 node, and the next rollout's surge pod may get a node GKE creates: no
    # rollout warning either (node auto-provisioning is not known off)
    assert rules(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4"), nodes(tmp_path))) == {}


def test_autopilot_nodes_make_a_pod_no_node_fits_now_unknown(write, tmp_path):
    # 4 L4s: Autopilot creates a g2-standard-48 for it; no node of the moment has more than 1
    inventory = nodes(tmp_path, prefix="gk3", pool="nap-1tq6p2x3")
    found = rules(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
    assert list(found) == ["gpu-unschedulable"], found
    info = found["gpu-unschedulable"]
    assert info["severity"] == "info"
    assert "GKE Autopilot creates the nodes its pods need" in said(info)
    assert "clusters describe" not in said(info)  # already known: nothing to add


def test_autopilot_nodes_make_a_pod_selecting_nothing_unknown(write, tmp_path):
    inventory = nodes(tmp_path, prefix="gk3", pool="nap-1tq6p2x3")
    found = rules(findings(write, pod(gpus=4), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_standard_nodes_leave_a_pod_selecting_nothing_decided(write, tmp_path):
    # the trap: gke- names are a Standard cluster's, where nothing creates a pool for a pod that selects nothing
    found = rules(findings(write, pod(gpus=4), nodes(tmp_path)))
    assert found["gpu-unschedulable"]["severity"] == "error", found


def test_a_gk3_name_without_a_gke_pool_label_is_no_autopilot_node(write, tmp_path):
    found = rules(findings(write, pod(gpus=4), nodes(tmp_path, prefix="gk3", gke=False)))
    assert found["gpu-unschedulable"]["severity"] == "error", found


AUTOPILOT_CLUSTER = {
    "name": "ml",
    "location": "us-central1",
    "autopilot": {"enabled": True},
    "autoscaling": {"enableNodeAutoprovisioning": True, "autoscalingProfile": "OPTIMIZE_UTILIZATION"},
    "nodePools": [
        {
            "name": "default-pool",
            "config": {"machineType": "e2-standard-4", "imageType": "COS_CONTAINERD"},
            "autoscaling": {"enabled": True, "autoprovisioned": True, "maxNodeCount": 1000},
            "locations": ["us-central1-a"],
        }
    ],
}


def test_an_autopilot_description_makes_what_no_pool_fits_unknown(write, tmp_path):
    inventory = nodes(tmp_path, extra=json.dumps(AUTOPILOT_CLUSTER))
    found = rules(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "GKE Autopilot creates the nodes its pods need" in said(found["gpu-unschedulable"])


def test_a_standard_description_with_auto_provisioning_off_decides(write, tmp_path):
    standard = {**AUTOPILOT_CLUSTER, "autopilot": {}, "autoscaling": {"autoscalingProfile": "BALANCED"}}
    inventory = nodes(tmp_path, extra=json.dumps(standard))
    found = rules(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
    assert "info" not in [f["severity"] for f in found.values()], found


def test_autopilot_is_read_from_a_description_and_from_node_names():
    from gpulint.kube.pools.gke import GkeAutoCreation, gke_auto_creation, gke_nodes

    state = gke_auto_creation(AUTOPILOT_CLUSTER, None)
    assert state is not None and state.autopilot and state.autoprovisioning
    standard = gke_auto_creation({**AUTOPILOT_CLUSTER, "autopilot": {"enabled": False}, "autoscaling": {}}, None)
    assert standard is not None and not standard.autopilot and standard.autoprovisioning is False
    seen = gke_nodes([("gk3-ml-pool-2-2c9a6f1e-8xkd", {"cloud.google.com/gke-nodepool": "pool-2"})])
    assert seen.gke and seen.autopilot
    assert GkeAutoCreation().with_nodes(seen).autopilot
    assert not gke_nodes(
        [("gke-ml-default-pool-8f2c1d3e-k9wz", {"cloud.google.com/gke-nodepool": "default-pool"})]
    ).autopilot
    assert not gke_nodes([("gk3-lab-0", {"kubernetes.io/hostname": "gk3-lab-0"})]).gke


def cpu_only(tmp_path, prefix: str) -> str:
    """An Autopilot (gk3-) or Standard (gke-) cluster before any GPU pod ran: its e2 node alone."""
    folder = tmp_path / prefix
    folder.mkdir()
    (folder / "nodes.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + DEFAULT_NODE.format(prefix=prefix))
    return str(folder)


def test_autopilot_creates_gpu_nodes_so_no_node_publishing_the_gpu_yet_is_no_warning(write, tmp_path):
    manifest = pod("cloud.google.com/gke-accelerator: nvidia-l4")
    found = {f["rule"]: f for f in findings(write, manifest, cpu_only(tmp_path, "gk3"))}
    assert "gpu-resource-unknown" not in found, found
    assert found["gpu-unschedulable"]["severity"] == "info"
    # the trap: a Standard cluster's nodes prove nothing of a pool at zero, and nothing says GKE publishes it
    standard = {f["rule"]: f for f in findings(write, manifest, cpu_only(tmp_path, "gke"))}
    assert "gpu-resource-unknown" in standard, standard
