"""GKE's node pool auto-creation and Autopilot, asked of a GKE cluster whose inventory is its nodes
(`kubectl get nodes -o yaml`, or the live inventory's), with no `gcloud container node-pools list`.

Nodes labelled `cloud.google.com/gke-nodepool` are a GKE cluster's: a pod that selects a ComputeClass or a GKE
label no node carries may get a pool GKE creates for it (node auto-provisioning, a class's nodePoolAutoCreation),
so "matches no node" is unknown (info), as with a node-pools list and no cluster description. An Autopilot cluster
(the description's `autopilot.enabled`, or nodes named `gk3-...` as GKE names Autopilot nodes) creates the nodes
its pods need: what no node fits now is unknown, never an error. The nodes are shaped as GKE labels and taints them
(a g2-standard-8 L4 pool beside the e2 default pool)."""

from __future__ import annotations

from conftest import said
from support.gke import default_node, deployment, l4_node, node_list, placement
from support.gke import inventory as gke_inventory
from support.pools import findings


def pod(selector: str = "", gpus: int = 1, tolerations: str = "") -> str:
    return deployment(selector, gpus, tolerations=tolerations)


def nodes(tmp_path, prefix: str = "gke", pool: str = "l4-pool", *, gke: bool = True, objects=(), described=None) -> str:
    """`kubectl get nodes -o yaml` of the cluster (``gke`` False: the same nodes without GKE's pool label, any
    other cluster's), with ``objects`` and a ``described`` cluster beside them."""
    text = node_list(default_node(prefix), l4_node(prefix, pool))
    if not gke:
        text = "\n".join(line for line in text.splitlines() if "gke-nodepool" not in line) + "\n"
    return gke_inventory(tmp_path / "inventory", text, *objects, described=described)


def test_a_compute_class_no_gke_node_carries_is_unknown_not_a_warning(write, tmp_path):
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), nodes(tmp_path)))
    assert list(found) == ["gpu-unschedulable"], found
    info = found["gpu-unschedulable"]
    assert info["severity"] == "info"
    assert "GKE may create a node pool for ComputeClass l4-class" in said(info)


def test_a_gpu_type_no_gke_node_has_is_unknown(write, tmp_path):
    found = placement(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-h100-80gb"), nodes(tmp_path)))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "GKE node auto-provisioning may create a node pool for the GPU type" in said(found["gpu-unschedulable"])


def test_the_same_nodes_without_gke_pool_labels_keep_the_error(write, tmp_path):
    # no node is a GKE pool's: nothing creates a pool, and the nodes are every node there is
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), nodes(tmp_path, gke=False)))
    assert found["over-tight-affinity"]["severity"] == "error", found
    assert "gpu-unschedulable" not in found


def test_a_custom_label_the_pod_does_not_tolerate_still_warns_on_gke_nodes(write, tmp_path):
    # auto-creation carries GKE's labels, or a custom one whose taint the pod tolerates (workload separation)
    found = placement(findings(write, pod("team: research"), nodes(tmp_path)))
    assert found["over-tight-affinity"]["severity"] == "warning", found


def test_a_watched_class_without_auto_creation_stays_unknown_while_auto_provisioning_is_unknown(write, tmp_path):
    # nodes alone never say node auto-provisioning is off: GKE may still create the class's pool
    watched = {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": "l4-class"},
        "spec": {"nodePoolAutoCreation": {"enabled": False}},
    }
    inventory = nodes(tmp_path, objects=(watched,))
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_a_pod_that_fits_a_gke_node_is_clean(write, tmp_path):
    # its one replica fills the one L4 node, and the next rollout's surge pod may get a node GKE creates: no
    # rollout warning either (node auto-provisioning is not known off)
    assert placement(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4"), nodes(tmp_path))) == {}


def test_autopilot_nodes_make_a_pod_no_node_fits_now_unknown(write, tmp_path):
    # 4 L4s: Autopilot creates a g2-standard-48 for it; no node of the moment has more than 1
    inventory = nodes(tmp_path, prefix="gk3", pool="nap-1tq6p2x3")
    found = placement(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
    assert list(found) == ["gpu-unschedulable"], found
    info = found["gpu-unschedulable"]
    assert info["severity"] == "info"
    assert "GKE Autopilot creates the nodes its pods need" in said(info)
    assert "clusters describe" not in said(info)  # already known: nothing to add


def test_autopilot_nodes_make_a_pod_selecting_nothing_unknown(write, tmp_path):
    inventory = nodes(tmp_path, prefix="gk3", pool="nap-1tq6p2x3")
    found = placement(findings(write, pod(gpus=4), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_standard_nodes_leave_a_pod_selecting_nothing_decided(write, tmp_path):
    # the trap: gke- names are a Standard cluster's, where nothing creates a pool for a pod that selects nothing
    found = placement(findings(write, pod(gpus=4), nodes(tmp_path)))
    assert found["gpu-unschedulable"]["severity"] == "error", found


def test_a_gk3_name_without_a_gke_pool_label_is_no_autopilot_node(write, tmp_path):
    found = placement(findings(write, pod(gpus=4), nodes(tmp_path, prefix="gk3", gke=False)))
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
    inventory = nodes(tmp_path, described=AUTOPILOT_CLUSTER)
    found = placement(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "GKE Autopilot creates the nodes its pods need" in said(found["gpu-unschedulable"])


def test_a_standard_description_with_auto_provisioning_off_decides(write, tmp_path):
    standard = {**AUTOPILOT_CLUSTER, "autopilot": {}, "autoscaling": {"autoscalingProfile": "BALANCED"}}
    inventory = nodes(tmp_path, described=standard)
    found = placement(findings(write, pod("cloud.google.com/gke-accelerator: nvidia-l4", gpus=4), inventory))
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
    return gke_inventory(tmp_path / prefix, node_list(default_node(prefix)))


def test_autopilot_creates_gpu_nodes_so_no_node_publishing_the_gpu_yet_is_no_warning(write, tmp_path):
    manifest = pod("cloud.google.com/gke-accelerator: nvidia-l4")
    found = {f["rule"]: f for f in findings(write, manifest, cpu_only(tmp_path, "gk3"))}
    assert "gpu-resource-unknown" not in found, found
    assert found["gpu-unschedulable"]["severity"] == "info"
    # the trap: a Standard cluster's nodes prove nothing of a pool at zero, and nothing says GKE publishes it
    standard = {f["rule"]: f for f in findings(write, manifest, cpu_only(tmp_path, "gke"))}
    assert "gpu-resource-unknown" in standard, standard
