"""Capacity over time (issue #29 section 5): a Deployment that fills the room its GPU pods have, rolled with the
default RollingUpdate (maxUnavailable 25% of 1-3 replicas is 0), never completes its next rollout."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import by_rule, lint_text

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

RULE = "gpu-unschedulable"

# A single-GPU vLLM server as the vLLM docs' Kubernetes deployment writes it.
VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-server
  namespace: default
spec:
  replicas: REPLICAS
STRATEGY  selector:
    matchLabels:
      app.kubernetes.io/name: vllm
  template:
    metadata:
      labels:
        app.kubernetes.io/name: vllm
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        command: ["/bin/sh", "-c"]
        args: ["vllm serve meta-llama/Llama-3.2-1B-Instruct"]
        ports:
        - containerPort: 8000
        resources:
          limits:
            cpu: "10"
            memory: 20G
            nvidia.com/gpu: "1"
          requests:
            cpu: "2"
            memory: 6G
            nvidia.com/gpu: "1"
"""


def _nodes(tmp_path: Path, count: int, gpus: int) -> str:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"gpu-{i}", "labels": {"nvidia.com/gpu.present": "true"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}},
        }
        for i in range(count)
    ]
    path = tmp_path / f"nodes-{count}-{gpus}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    return str(path)


def _found(tmp_path: Path, replicas: int, nodes: int, gpus: int, strategy: str = "") -> list:
    text = VLLM.replace("REPLICAS", str(replicas)).replace("STRATEGY", strategy)
    return by_rule(lint_text(text, "vllm.yaml", Config(), load_inventory([_nodes(tmp_path, nodes, gpus)])), RULE)


def test_a_deployment_that_fills_its_gpus_never_completes_a_default_rolling_update(tmp_path: Path):
    (finding,) = _found(tmp_path, 1, 1, 1)
    assert finding.severity == Severity.WARNING
    assert finding.message == (
        "this Deployment's next rollout never completes: its 1 replicas fill all the room its pods have and "
        "maxUnavailable is 0"
    )
    notes = "\n".join(finding.notes)
    assert "maxSurge 25% -> 1, maxUnavailable 25% -> 0 (the default RollingUpdate)" in notes
    assert "room for 2 at once; the cluster holds 1" in notes
    assert finding.line == 7  # spec.replicas
    (three,) = _found(tmp_path, 3, 3, 1)
    assert "its 3 replicas" in three.message


def test_an_explicit_max_unavailable_zero_with_any_replica_count(tmp_path: Path):
    strategy = "  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n"
    (finding,) = _found(tmp_path, 4, 2, 2, strategy)
    assert finding.line == 8  # spec.strategy
    assert "maxSurge 1 -> 1, maxUnavailable 0 -> 0:" in "\n".join(finding.notes)


def test_trap_recreate_room_to_spare_or_max_unavailable_from_four_replicas(tmp_path: Path):
    assert _found(tmp_path, 1, 1, 1, "  strategy:\n    type: Recreate\n") == []
    assert _found(tmp_path, 1, 1, 2) == []  # a second GPU for the surge pod
    assert _found(tmp_path, 4, 4, 1) == []  # 25% of 4 is 1 unavailable: an old pod goes first
    both_zero = "  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 0}\n"
    assert _found(tmp_path, 2, 2, 1, both_zero) == []  # both 0: the controller makes maxUnavailable 1


def test_trap_a_node_pool_that_can_add_the_surge_pods_node(tmp_path: Path):
    pool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
        "      requirements:\n"
        "      - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.2xlarge]}\n---\n"
    )
    text = pool + VLLM.replace("REPLICAS", "1").replace("STRATEGY", "")
    inventory = load_inventory([_nodes(tmp_path, 1, 1)])
    assert by_rule(lint_text(text, "vllm.yaml", Config(), inventory), RULE) == []


# ----------------------------------------------------------------- DaemonSets that hold GPUs

# A GPU health probe run as a DaemonSet that asks for a GPU to test (a pattern seen in cluster add-on repos).
HEALTH_DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: gpu-health-check
  namespace: monitoring
spec:
  selector:
    matchLabels: {app: gpu-health-check}
  template:
    metadata:
      labels: {app: gpu-health-check}
    spec:
SELECTOR      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: probe
        image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
        command: ["sh", "-c", "while true; do nvidia-smi -q > /dev/null; sleep 60; done"]
        resources:
          limits: {nvidia.com/gpu: 1}
"""

TRAINING_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune-8gpu
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: ["torchrun", "--nproc_per_node=GPUS", "train.py"]
        resources:
          limits: {nvidia.com/gpu: GPUS}
"""


def _held(tmp_path: Path, gpus: int, selector: str = "") -> list:
    text = HEALTH_DAEMONSET.replace("SELECTOR", selector) + "---\n" + TRAINING_JOB.replace("GPUS", str(gpus))
    return by_rule(lint_text(text, "cluster.yaml", Config(), load_inventory([_nodes(tmp_path, 2, 8)])), RULE)


def test_a_daemonset_that_requests_a_gpu_on_every_node_leaves_no_node_whole(tmp_path: Path):
    (finding,) = _held(tmp_path, 8)
    assert finding.severity == Severity.WARNING
    assert finding.message == "this pod fits no node once DaemonSet gpu-health-check takes its nvidia.com/gpu there"
    assert "the 2 nodes it fits on each run a pod of gpu-health-check" in finding.notes[0]


def test_trap_room_left_beside_the_daemon_or_a_daemonset_on_other_nodes(tmp_path: Path):
    assert _held(tmp_path, 7) == []
    assert _held(tmp_path, 8, "      nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n") == []


def test_trap_an_autoscaler_sets_the_replicas(tmp_path: Path):
    hpa = (
        "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: vllm, namespace: default}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm-server}\n"
        "  minReplicas: 1\n  maxReplicas: 4\n"
    )
    text = VLLM.replace("REPLICAS", "1").replace("STRATEGY", "") + hpa
    assert by_rule(lint_text(text, "vllm.yaml", Config(), load_inventory([_nodes(tmp_path, 1, 1)])), RULE) == []
