"""A GKE ComputeClass's priorities as the node pools GKE may create for a pod of the class.

With `whenUnsatisfiable: DoNotScaleUp` a pod selecting the class (its nodeSelector, or its namespace's default
class) gets a new node only of a shape one of the class's priorities describes (GoogleCloudPlatform/
cluster-autoscaler: organizer.go drops the class's node groups no priority matches; a class pod's GPUs are the
priority's). A pod asking for more GPUs than any priority's node has, or for a GPU type no priority names, stays
Pending: a warning. ScaleUpAnyway, an unstated whenUnsatisfiable, or a priority whose nodes gpulint cannot tell
keep the answer unknown (info). The classes are shaped as GoogleCloudPlatform/accelerated-platforms writes them
(platforms/gke/base/core/custom_compute_class: gpu-l4-24gb-s8-x1), the cluster as `kubectl get nodes` shows a
GKE Standard cluster with an e2 default pool and an L4 pool."""

from __future__ import annotations

import json

from conftest import said
from support import gke
from support.gke import NODES, default_node, deployment, node_list
from support.pools import findings

L4_PRIORITY = {
    "gpu": {"count": 1, "driverVersion": "latest", "type": "nvidia-l4"},
    "machineType": "g2-standard-8",
    "maxPodsPerNode": 32,
    "spot": False,
}


def compute_class(name: str = "gpu-l4-24gb-s8-x1", when: str | None = "DoNotScaleUp", priorities=None) -> dict:
    """accelerated-platforms' gpu-l4-24gb-s8-x1: on-demand, then Spot, g2-standard-8 with one L4."""
    spec: dict = {
        "activeMigration": {"optimizeRulePriority": True},
        "nodePoolConfig": {"imageStreaming": {"enabled": True}},
        "nodePoolAutoCreation": {"enabled": True},
        "priorities": priorities if priorities is not None else [L4_PRIORITY, {**L4_PRIORITY, "spot": True}],
    }
    if when is not None:
        spec["whenUnsatisfiable"] = when
    return {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": name}, "spec": spec}


def pod(
    selector: str = "cloud.google.com/compute-class: gpu-l4-24gb-s8-x1",
    gpus: int = 1,
    namespace: str = "inference",
    tolerations: str = "",
) -> str:
    return deployment(selector, gpus, namespace=namespace, tolerations=tolerations)


def inventory(tmp_path, *documents: dict, nodes: str = NODES) -> str:
    return gke.inventory(tmp_path / "inventory", nodes, *documents)


def unschedulable(found: list[dict]) -> list[dict]:
    return [f for f in found if f["rule"] in ("gpu-unschedulable", "over-tight-affinity")]


def test_more_gpus_than_any_priority_gives_is_a_warning(write, tmp_path):
    found = unschedulable(findings(write, pod(gpus=8), inventory(tmp_path, compute_class())))
    assert [(f["rule"], f["severity"]) for f in found] == [("gpu-unschedulable", "warning")], found
    text = said(found[0])
    assert "ComputeClass gpu-l4-24gb-s8-x1" in text and "DoNotScaleUp" in text
    assert "GKE ComputeClass gpu-l4-24gb-s8-x1 priority 1: its instance type g2-standard-8 has 1 nvidia.com/gpu" in text
    assert "the pod asks for 8" in text


def test_a_gpu_type_no_priority_names_is_a_warning(write, tmp_path):
    selector = "cloud.google.com/compute-class: gpu-l4-24gb-s8-x1, cloud.google.com/gke-accelerator: nvidia-h100-80gb"
    found = unschedulable(findings(write, pod(selector), inventory(tmp_path, compute_class())))
    assert [(f["rule"], f["severity"]) for f in found] == [("gpu-unschedulable", "warning")], found
    assert "cloud.google.com/gke-accelerator In [nvidia-l4]" in said(found[0])


def test_a_pod_a_priority_fits_is_clean(write, tmp_path):
    # no node of the class exists yet: GKE creates a g2-standard-8 with one L4 for it
    assert unschedulable(findings(write, pod(gpus=1), inventory(tmp_path, compute_class()))) == []


def test_a_spot_pod_on_a_class_with_a_spot_priority_is_clean(write, tmp_path):
    selector = "cloud.google.com/compute-class: gpu-l4-24gb-s8-x1, cloud.google.com/gke-spot: 'true'"
    assert unschedulable(findings(write, pod(selector), inventory(tmp_path, compute_class()))) == []
    on_demand = compute_class(priorities=[L4_PRIORITY])  # the trap: on-demand only, and the pod wants Spot
    found = unschedulable(findings(write, pod(selector), inventory(tmp_path / "b", on_demand)))
    assert [f["severity"] for f in found] == ["warning"], found


def test_a_label_the_class_does_not_state_is_no_reason(write, tmp_path):
    # workload separation: GKE labels the nodes it creates with what the pod selects and tolerates
    selector = "cloud.google.com/compute-class: gpu-l4-24gb-s8-x1, team: research"
    tolerations = "tolerations: [{key: team, operator: Equal, value: research, effect: NoSchedule}]"
    manifest = pod(selector, tolerations=tolerations)
    assert unschedulable(findings(write, manifest, inventory(tmp_path, compute_class()))) == []


def test_without_do_not_scale_up_it_stays_unknown(write, tmp_path):
    # ScaleUpAnyway falls back to any node auto-provisioning creates; unstated, the default is the GKE version's
    for index, when in enumerate(("ScaleUpAnyway", None)):
        found = unschedulable(findings(write, pod(gpus=8), inventory(tmp_path / str(index), compute_class(when=when))))
        assert [f["severity"] for f in found] == ["info"], (when, found)
        assert "GKE may create a node pool for ComputeClass gpu-l4-24gb-s8-x1" in said(found[0])


def test_a_priority_whose_nodes_are_not_known_keeps_it_unknown(write, tmp_path):
    # an A3 family without its GPU stated, a Pod family (Autopilot), node pools not read: GKE may give 8 GPUs
    for index, priority in enumerate(
        ({"machineFamily": "a3"}, {"podFamily": "general-purpose"}, {"nodepools": ["h100-pool"]})
    ):
        classes = compute_class(priorities=[L4_PRIORITY, priority])
        found = unschedulable(findings(write, pod(gpus=8), inventory(tmp_path / str(index), classes)))
        assert [f["severity"] for f in found] == ["info"], (priority, found)


def test_a_shared_or_partitioned_gpu_keeps_it_unknown(write, tmp_path):
    # time-sharing (or MIG partitions) makes a node with one L4 offer several nvidia.com/gpu
    shared = {
        **L4_PRIORITY,
        "gpu": {
            **L4_PRIORITY["gpu"],
            "gpuSharing": {"gpuSharingStrategy": "time-sharing", "maxSharedClientsPerGPU": 8},
        },
    }
    found = unschedulable(findings(write, pod(gpus=8), inventory(tmp_path, compute_class(priorities=[shared]))))
    assert [f["severity"] for f in found] == ["info"], found


def test_another_extended_resource_keeps_it_unknown(write, tmp_path):
    # what a priority's node offers of anything but its GPUs is not stated (the L4 node here has a NIC resource)
    nic = NODES.replace('nvidia.com/gpu: "1", pods', 'nvidia.com/gpu: "1", example.com/rdma: "1", pods')
    manifest = pod(gpus=1).replace(
        'limits: {nvidia.com/gpu: "1"}', 'limits: {nvidia.com/gpu: "1", example.com/rdma: "1"}'
    )
    found = unschedulable(findings(write, manifest, inventory(tmp_path, compute_class(), nodes=nic)))
    assert [f["severity"] for f in found] == ["info"], found


def test_a_cpu_family_priority_gives_no_gpu(write, tmp_path):
    # a class pod's GPUs are its priority's: an N4 priority without one makes nodes without GPUs
    classes = compute_class(priorities=[{"machineFamily": "n4", "minCores": 16}])
    found = unschedulable(findings(write, pod(gpus=1), inventory(tmp_path, classes)))
    assert [f["severity"] for f in found] == ["warning"], found


def test_a_linted_class_is_the_one_gke_would_use(write, tmp_path):
    # the class under review in the same change as the workload: the inventory has none of that name
    manifest = pod(gpus=8) + "---\n" + json.dumps(compute_class())
    found = unschedulable(findings(write, manifest, inventory(tmp_path)))
    assert [f["severity"] for f in found] == ["warning"], found


def test_the_namespace_default_class_restricts_its_pods(write, tmp_path):
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "inference", "labels": {"cloud.google.com/default-compute-class": "gpu-l4-24gb-s8-x1"}},
    }
    found = unschedulable(findings(write, pod("", gpus=8), inventory(tmp_path, compute_class(), namespace)))
    assert [f["severity"] for f in found] == ["warning"], found
    assert "ComputeClass gpu-l4-24gb-s8-x1" in said(found[0])


def test_priorities_read_from_a_class():
    from gpulint.kube.pools.gke import ClassPriority
    from gpulint.kube.pools.gke import compute_class as read

    found = read(compute_class(priorities=[L4_PRIORITY, {"tpu": {"type": "tpu-v5-lite-podslice", "count": 4}}]))
    assert found.restricts and found.when_unsatisfiable == "DoNotScaleUp"
    assert found.priorities == (
        ClassPriority("", "g2-standard-8", "nvidia-l4", 1, "latest", False),
        ClassPriority(unmodelled=("tpu",)),
    )
    # a template's placeholders are no count: the GPU is not known from the priority
    templated = read(compute_class(priorities=[{"machineType": "${MACHINE_TYPE}", "gpu": {"count": "${N}"}}]))
    assert templated.priorities[0].unmodelled == ("gpu",)


CPU_ONLY = node_list(default_node())


def test_a_class_that_makes_gpu_nodes_names_the_gpu_before_any_node_has_one(write, tmp_path):
    # the cluster's GPU pools are all GKE's to create: GKE's device plugin publishes nvidia.com/gpu on them
    classes = inventory(tmp_path, compute_class(), nodes=CPU_ONLY)
    assert [f["rule"] for f in findings(write, pod(gpus=1), classes) if f["rule"] != "dev-shm-missing"] == []
    found = [f for f in findings(write, pod(gpus=8), classes) if f["rule"] != "dev-shm-missing"]
    assert [(f["rule"], f["severity"]) for f in found] == [("gpu-unschedulable", "warning")], found
    # the trap: a class of CPU nodes names no GPU; no node publishes one either
    cpu = inventory(tmp_path / "cpu", compute_class(priorities=[{"machineFamily": "n4"}]), nodes=CPU_ONLY)
    assert "gpu-resource-unknown" in [f["rule"] for f in findings(write, pod(gpus=1), cpu)]
