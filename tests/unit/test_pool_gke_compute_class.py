"""GKE ComputeClasses and node pool auto-creation against a GKE node-pools list (gpulint/kube/pools/gke.py).

A pod that selects a ComputeClass, or a GKE label GKE's auto-creation puts on the pools it creates, matches no
pool of `gcloud container node-pools list` and may still get a node: "never" only once the cluster's description
says node auto-provisioning is off and the inventory's ComputeClass does not enable nodePoolAutoCreation. The
manifests are shaped like GKE's ComputeClass docs and the GKE 1.32 DRA + Custom Compute Class demo (pools created
with `--node-labels/--node-taints cloud.google.com/compute-class=<class>`, a Deployment with the nodeSelector
alone)."""

from __future__ import annotations

import json
import shutil

from conftest import said
from support.gke import deployment, placement
from support.pools import ELASTIC, findings


def pod(selector: str, tolerations: str = "") -> str:
    return deployment(selector, tolerations=tolerations)


def l4_class(auto_creation: bool | None) -> str:
    """The ComputeClass as `kubectl get computeclass -o yaml` prints it (the pools it names, or auto-creation)."""
    creation = "" if auto_creation is None else f"  nodePoolAutoCreation:\n    enabled: {str(auto_creation).lower()}\n"
    return (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata:\n  name: l4-class\nspec:\n"
        f"{creation}  priorities:\n  - machineFamily: g2\n    gpu: {{type: nvidia-l4, count: 1}}\n"
        "  - nodepools: [l4-pool]\n  whenUnsatisfiable: DoNotScaleUp\n"
    )


def gke_inventory(tmp_path, *, cluster: dict | None = None, classes: str = "", label_l4: bool = False) -> str:
    """The GKE inventory of tests/data/elastic/gke: its pools as `gcloud container node-pools list --format json`
    prints them, or (``cluster``) inside a `gcloud container clusters describe --format json`; ``label_l4``: l4-pool made a member of l4-class as the
    docs have operators do it (node label and taint)."""
    folder = tmp_path / "gke"
    folder.mkdir(parents=True)
    shutil.copy(ELASTIC / "gke" / "nodes.yaml", folder / "nodes.yaml")
    pools = json.loads((ELASTIC / "gke" / "cluster.json").read_text())["nodePools"]
    if label_l4:
        config = pools[1]["config"]
        config["labels"]["cloud.google.com/compute-class"] = "l4-class"
        config["taints"] = [{"key": "cloud.google.com/compute-class", "value": "l4-class", "effect": "NO_SCHEDULE"}]
    described = pools if cluster is None else {**cluster, "nodePools": pools}
    (folder / "pools.json").write_text(json.dumps(described))
    if classes:
        (folder / "computeclasses.yaml").write_text(classes)
    return str(folder)


# NAP off: gcloud prints the cluster's autoscaling without enableNodeAutoprovisioning (false is omitted)
NAP_OFF = {"name": "ml", "location": "us-central1", "autoscaling": {"autoscalingProfile": "BALANCED"}}
NAP_ON = {**NAP_OFF, "autoscaling": {"enableNodeAutoprovisioning": True, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}}


def test_a_compute_class_against_a_node_pools_list_is_unknown_not_an_error(write, tmp_path):
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), gke_inventory(tmp_path)))
    assert list(found) == ["gpu-unschedulable"], found
    info = found["gpu-unschedulable"]
    assert info["severity"] == "info"
    assert "GKE may create a node pool for ComputeClass l4-class" in said(info)
    assert "gcloud container clusters describe --format json" in said(info)
    assert "--node-catalog" not in said(info)  # the catalog would not decide it


def test_a_gpu_type_with_auto_provisioning_unknown_is_unknown(write, tmp_path):
    selector = "cloud.google.com/gke-accelerator: nvidia-h100-80gb"
    found = placement(findings(write, pod(selector), gke_inventory(tmp_path)))
    assert list(found) == ["gpu-unschedulable"], found
    assert "GKE node auto-provisioning may create a node pool for the GPU type" in said(found["gpu-unschedulable"])


def test_auto_provisioning_on_leaves_a_gpu_type_no_pool_has_unknown(write, tmp_path):
    selector = "cloud.google.com/gke-accelerator: nvidia-h100-80gb"
    found = placement(findings(write, pod(selector), gke_inventory(tmp_path, cluster=NAP_ON)))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_auto_creation_proven_off_keeps_the_error(write, tmp_path):
    # the cluster says NAP is off and the inventory's l4-class enables no auto-creation: no pool carries the label
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(None))
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory))
    error = found["over-tight-affinity"]
    assert error["severity"] == "error"
    assert "GKE node pool l4-pool: nodeSelector cloud.google.com/compute-class=l4-class: its nodes do not carry" in (
        said(error)
    )


def test_a_gpu_type_no_pool_has_with_auto_provisioning_off_is_an_error(write, tmp_path):
    selector = "cloud.google.com/gke-accelerator: nvidia-h100-80gb"
    found = placement(findings(write, pod(selector), gke_inventory(tmp_path, cluster=NAP_OFF)))
    assert found["over-tight-affinity"]["severity"] == "error"
    assert "its nodes carry cloud.google.com/gke-accelerator In [nvidia-l4]" in said(found["over-tight-affinity"])


def test_a_class_that_creates_pools_serves_with_auto_provisioning_off(write, tmp_path):
    # the class creates the pool of its first priority (a G2 with one L4): the pod fits it (test_pool_gke_priorities)
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(True))
    assert placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory)) == {}


def test_a_class_the_inventory_lacks_is_unknown_with_auto_provisioning_off(write, tmp_path):
    # absence is evidence only from a complete catalog: the class may exist and create pools
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(None).replace("l4-class", "t4-class"))
    found = placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found


def test_a_pool_labelled_and_tainted_for_the_class_serves_its_pods(write, tmp_path):
    # GKE gives a pod that selects a class the toleration of the class's taint: no untolerated-taint error
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(None), label_l4=True)
    assert placement(findings(write, pod("cloud.google.com/compute-class: l4-class"), inventory)) == {}


def test_the_class_taint_of_another_class_still_keeps_the_pod_off(write, tmp_path):
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(None), label_l4=True)
    # the pod selects the pool by name, not the class: GKE adds no toleration, the class's taint refuses it
    found = placement(findings(write, pod("cloud.google.com/gke-nodepool: l4-pool"), inventory))
    assert found["gpu-unschedulable"]["severity"] == "error"
    assert "GKE node pool l4-pool: node(s) had untolerated taint(s)" in said(found["gpu-unschedulable"])


def test_a_custom_label_without_a_toleration_is_still_an_error(write, tmp_path):
    # auto-creation makes pools for GKE's labels, or a custom label the pod also tolerates (workload separation)
    found = placement(findings(write, pod("team: research"), gke_inventory(tmp_path)))
    assert found["over-tight-affinity"]["severity"] == "error"


def test_workload_separation_is_unknown(write, tmp_path):
    tolerations = "tolerations: [{key: team, operator: Equal, value: research, effect: NoSchedule}]"
    found = placement(findings(write, pod("team: research", tolerations), gke_inventory(tmp_path)))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "label (team)" in said(found["gpu-unschedulable"])


def test_the_clusters_default_class_that_creates_pools_makes_any_pod_unknown(write, tmp_path):
    # a pod selecting no class gets the cluster's default ComputeClass ("default"): GKE may create its pool
    selector = "cloud.google.com/gke-accelerator: nvidia-l4"
    asks_three = pod(selector).replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "3"')
    created = gke_inventory(tmp_path, cluster=NAP_OFF, classes=_default_class(True))
    found = placement(findings(write, asks_three, created))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "the cluster's default ComputeClass (default, nodePoolAutoCreation)" in said(found["gpu-unschedulable"])


def test_a_default_class_without_auto_creation_leaves_the_error(write, tmp_path):
    selector = "cloud.google.com/gke-accelerator: nvidia-l4"
    asks_three = pod(selector).replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "3"')
    (tmp_path / "b").mkdir()
    found = placement(
        findings(write, asks_three, gke_inventory(tmp_path / "b", cluster=NAP_OFF, classes=_default_class(False)))
    )
    assert found["gpu-unschedulable"]["severity"] == "error"
    assert "its instance type g2-standard-24 has 2 nvidia.com/gpu; the pod asks for 3" in said(
        found["gpu-unschedulable"]
    )


def test_a_pod_naming_an_existing_pool_gets_no_created_pool(write, tmp_path):
    # GKE names the pools it creates itself: a pod that selects l4-pool by name waits for l4-pool alone
    asks_three = pod("cloud.google.com/gke-nodepool: l4-pool").replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "3"')
    found = placement(
        findings(write, asks_three, gke_inventory(tmp_path, cluster=NAP_ON, classes=_default_class(True)))
    )
    assert found["gpu-unschedulable"]["severity"] == "error"


def _default_class(enabled: bool) -> str:
    return (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata:\n  name: default\nspec:\n"
        f"  nodePoolAutoCreation:\n    enabled: {str(enabled).lower()}\n  priorities:\n  - machineFamily: n4\n"
        "  whenUnsatisfiable: ScaleUpAnyway\n"
    )


def test_compute_classes_in_a_list_are_read(tmp_path):
    from gpulint.kube.pools.gke import gke_auto_creation

    listed = {"apiVersion": "v1", "kind": "List", "items": [{**_class_data("a", True)}, {**_class_data("b", False)}]}
    state = gke_auto_creation(listed, None)
    assert state is not None
    assert {name: c.auto_creation for name, c in state.classes.items()} == {"a": True, "b": False}
    assert state.autoprovisioning is None
    assert gke_auto_creation({"apiVersion": "v1", "kind": "ConfigMap"}, None) is None
    described = gke_auto_creation({**NAP_ON, "nodePools": []}, state)
    assert described is state and state.autoprovisioning is True


def _class_data(name: str, enabled: bool) -> dict:
    return {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": name},
        "spec": {"nodePoolAutoCreation": {"enabled": enabled}, "priorities": [{"machineFamily": "g2"}]},
    }


def _namespace(labels: str) -> str:
    """The workload's Namespace as `kubectl get namespace inference -o yaml` prints it (trimmed)."""
    return f"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: inference\n  labels: {{{labels}}}\n"


H100 = "cloud.google.com/gke-accelerator: nvidia-h100-80gb"


def test_a_namespace_default_class_that_creates_pools_decides_its_pods(write, tmp_path):
    # GKE writes the namespace's default class into the pod's node selector: it creates only what that class's
    # priorities describe (DoNotScaleUp), an L4 pool, never the H100 the pod selects
    namespace = _namespace("cloud.google.com/default-compute-class: l4-class")
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(True) + namespace)
    found = placement(findings(write, pod(H100), inventory))
    assert [f["severity"] for f in found.values()] == ["warning"], found
    assert "ComputeClass l4-class describe would hold it" in said(found["gpu-unschedulable"])
    # the trap: without whenUnsatisfiable GKE may fall back to any node: GKE may create the class's pool
    unstated = l4_class(True).replace("  whenUnsatisfiable: DoNotScaleUp\n", "")
    inventory = gke_inventory(tmp_path / "unstated", cluster=NAP_OFF, classes=unstated + namespace)
    found = placement(findings(write, pod(H100), inventory))
    assert [f["severity"] for f in found.values()] == ["info"], found
    assert "ComputeClass l4-class, its namespace's default (nodePoolAutoCreation" in said(found["gpu-unschedulable"])


def test_a_namespace_without_the_label_leaves_the_error(write, tmp_path):
    inventory = gke_inventory(tmp_path, cluster=NAP_OFF, classes=l4_class(True) + _namespace("team: ml"))
    found = placement(findings(write, pod(H100), inventory))
    assert found["over-tight-affinity"]["severity"] == "error", found


def test_the_namespace_default_comes_before_the_clusters_default(write, tmp_path):
    # the cluster's default class creates pools, but the namespace names l4-class, which does not: GKE selects
    # l4-class for the pod, and no pool of 2 L4s holds 3
    asks_three = pod("cloud.google.com/gke-accelerator: nvidia-l4").replace(
        'nvidia.com/gpu: "1"', 'nvidia.com/gpu: "3"'
    )
    classes = (
        _default_class(True) + "---\n" + l4_class(None) + _namespace("cloud.google.com/default-compute-class: l4-class")
    )
    found = placement(findings(write, asks_three, gke_inventory(tmp_path, cluster=NAP_OFF, classes=classes)))
    assert found["gpu-unschedulable"]["severity"] == "error", found
    assert "g2-standard-24 has 2 nvidia.com/gpu; the pod asks for 3" in said(found["gpu-unschedulable"])


def test_a_class_of_pools_read_alone_stays_unknown(write, tmp_path):
    # its priorities name only node pools the inventory lists: GKE creates none for it, and gpulint does not
    # turn that into an error (the pools read answer for themselves; a pool not labelled for the class cannot)
    only_pools = l4_class(True).replace("  - machineFamily: g2\n    gpu: {type: nvidia-l4, count: 1}\n", "")
    assert "machineFamily" not in only_pools
    eight = pod("cloud.google.com/compute-class: l4-class").replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "8"')
    found = placement(findings(write, eight, gke_inventory(tmp_path, cluster=NAP_OFF, classes=only_pools)))
    assert [f["severity"] for f in found.values()] == ["info"], found
