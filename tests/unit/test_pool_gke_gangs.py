"""Gangs on GKE clusters shown by their nodes: what GKE may create for the members decides as it does for one pod.

A gang the nodes of the moment cannot hold is unknown (info), not a warning or an error, where GKE creates nodes
the nodes do not show: on Autopilot (its nodes named gk3-...), and on Standard for members whose ComputeClass (their
nodeSelector, or their namespace's default class, which GKE writes into their nodeSelector) may get a pool GKE
creates. The gang is a LeaderWorkerSet of vLLM pods as the LeaderWorkerSet docs and GKE's multi-host serving
tutorial write it, four L4 GPUs a pod; the nodes are a g2-standard-8 L4 pool's, one L4 each."""

from __future__ import annotations

import textwrap

from conftest import check_json, inventory_args, said
from support.gke import inventory as gke_inventory
from support.gke import l4_node, node_list


def lws(selector: str = "cloud.google.com/gke-accelerator: nvidia-l4") -> str:
    """vLLM multi-host serving queued in Kueue: a leader and three workers, four L4s each, the workers in one zone
    (Kueue's Topology Aware Scheduling, as GKE's docs for it annotate the pod set)."""
    return textwrap.dedent(f"""\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata:
          name: vllm
          namespace: inference
          labels: {{kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          replicas: 1
          leaderWorkerTemplate:
            size: 4
            leaderTemplate:
              spec:
                nodeSelector: {{{selector}}}
                containers:
                - {{name: vllm-leader, image: vllm/vllm-openai:v0.6.4, resources: {{limits: {{nvidia.com/gpu: "4"}}}}}}
            workerTemplate:
              metadata:
                annotations: {{kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/zone}}
              spec:
                nodeSelector: {{{selector}}}
                containers:
                - {{name: vllm-worker, image: vllm/vllm-openai:v0.6.4, resources: {{limits: {{nvidia.com/gpu: "4"}}}}}}
        """)


def inventory(tmp_path, prefix: str, pool: str, *documents: dict, described: dict | None = None) -> str:
    """The cluster's L4 nodes, its ``documents`` and its ``described`` cluster."""
    return gke_inventory(tmp_path / prefix, node_list(l4_node(prefix, pool)), *documents, described=described)


def gang(write, manifest: str, folder: str) -> list[dict]:
    found = check_json(str(write("lws.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(folder))
    return [f for f in found if f["rule"] == "gang-unsatisfiable"]


def test_a_gang_on_autopilot_nodes_is_unknown(write, tmp_path):
    # Autopilot creates g2-standard-48s with four L4s for them: the one-L4 nodes of the moment prove nothing
    found = gang(write, lws(), inventory(tmp_path, "gk3", "nap-1tq6p2x3"))
    assert [f["severity"] for f in found] == ["info"], found
    assert "GKE Autopilot creates the nodes its pods need" in said(found[0])
    assert "whether GKE creates nodes that hold it is unknown" in said(found[0])


def test_the_same_gang_on_standard_nodes_is_an_error(write, tmp_path):
    # the trap: a Standard cluster creates no pool for pods selecting a GPU type unless auto-provisioning is on,
    # and a description says it is off
    described = {
        "name": "ml",
        "location": "us-central1",
        "autoscaling": {"autoscalingProfile": "BALANCED"},
        "nodePools": [{"name": "l4-pool", "config": {"machineType": "g2-standard-8"}}],
    }
    found = gang(write, lws(), inventory(tmp_path, "gke", "l4-pool", described=described))
    assert [f["severity"] for f in found] == ["error"], found


def namespace(labels: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "inference", "labels": labels}}


def test_a_namespace_default_class_reaches_the_gang_members(write, tmp_path):
    # GKE writes the namespace's class into every member's nodeSelector: it may create that class's pool
    compute_class = {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": "l4-x4"},
        "spec": {"nodePoolAutoCreation": {"enabled": True}, "priorities": [{"machineFamily": "g2"}]},
    }
    labelled = namespace({"cloud.google.com/default-compute-class": "l4-x4"})
    found = gang(write, lws(""), inventory(tmp_path, "gke", "l4-pool", compute_class, labelled))
    assert [f["severity"] for f in found] == ["info"], found
    assert "ComputeClass l4-x4, its namespace's default" not in said(found[0])  # the class is the pods' own now
    assert "GKE may create a node pool for ComputeClass l4-x4" in said(found[0])
    # the trap: a namespace without the label leaves the members selecting nothing GKE creates a pool for
    found = gang(write, lws(""), inventory(tmp_path / "b", "gke", "l4-pool", compute_class, namespace({})))
    assert [f["severity"] for f in found] == ["error"], found
