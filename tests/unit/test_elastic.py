"""Elastic clusters: an inventory is proof of absence only when it describes every node that can exist."""

from __future__ import annotations

import yaml
from conftest import DATA, DEVICE_CLASSES, check_json, inventory_args, run_cli, said

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.review import ReviewSnapshot
from gpulint.lint.world.inventory import load_inventory
from gpulint.webhook.admission_review import decide

ELASTIC = DATA / "elastic"

# A GPU Job shaped like the Karpenter docs' GPU workloads: it targets the GPU NodePool, tolerates its taint.
GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        karpenter.sh/nodepool: gpu
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def _check(write, manifest: str, *inventory: str) -> list[dict]:
    return check_json(str(write("job.yaml", manifest)), *inventory_args(*inventory))


def _rules(findings: list[dict], rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule]


def test_scale_from_zero_inventory_cannot_prove_a_gpu_resource_unknown(write):
    findings = _check(write, GPU_JOB, str(ELASTIC / "system-nodes.yaml"))
    assert not [f for f in findings if f["severity"] == "error"], findings
    (unknown,) = _rules(findings, "gpu-resource-unknown")
    assert unknown["severity"] == "warning"
    assert "no node in it publishes any extended resource" in said(unknown)
    assert (unknown["line"], unknown["column"]) == (16, 20)
    (affinity,) = _rules(findings, "over-tight-affinity")
    assert affinity["severity"] == "info"
    assert "GPU pool at zero nodes" in affinity["notes"][-1]


def test_one_gpu_node_proves_the_names_of_gpu_resources(write, tmp_path):
    gpu_node = write(
        "inv/gpu-node.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata:
          name: ip-192-168-80-3.us-west-2.compute.internal
          labels: {karpenter.sh/nodepool: gpu, node.kubernetes.io/instance-type: g5.xlarge}
        status:
          capacity: {cpu: "4", memory: 16093156Ki, pods: "58", nvidia.com/gpu: "1"}
          allocatable: {cpu: 3920m, memory: 15378404Ki, pods: "58", nvidia.com/gpu: "1"}
        """,
    )
    typo = GPU_JOB.replace("{nvidia.com/gpu: 1}", "{nvidia.com/gpus: 1}")
    classes = str(write("inv/deviceclasses.yaml", DEVICE_CLASSES))
    findings = _check(write, typo, str(ELASTIC / "system-nodes.yaml"), str(gpu_node), classes)
    (unknown,) = _rules(findings, "gpu-resource-unknown")
    assert unknown["severity"] == "error"
    assert unknown["message"].endswith("; did you mean nvidia.com/gpu?")
    clean = _check(write, GPU_JOB, str(ELASTIC / "system-nodes.yaml"), str(gpu_node))
    assert not _rules(clean, "gpu-resource-unknown") and not _rules(clean, "over-tight-affinity")


def test_raising_the_rule_does_not_turn_unknown_into_an_error(write):
    config = write(".gpulint.yaml", "severity: {gpu-resource-unknown: error, over-tight-affinity: error}\n")
    path = write("job.yaml", GPU_JOB)
    run = run_cli(
        "check", str(path), "--config", str(config), "--inventory", str(ELASTIC / "system-nodes.yaml"),
        "--format", "json",
    )  # fmt: skip
    assert run.exit_code == 0, run.stdout
    severities = {f["rule"]: f["severity"] for f in run.json()["findings"]}
    assert severities == {"gpu-resource-unknown": "warning", "over-tight-affinity": "info"}


CPU_POD_ON_MISSING_LABEL = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      nodeSelector: {workload-class: latency}
      tolerations: [{operator: Exists}]
      containers:
      - name: api
        image: registry.example.com/api:2.1
        resources: {requests: {cpu: 500m}}
"""


def test_a_label_no_node_carries_is_proven_absent_only_without_autoscaled_pools(write):
    pooled = _rules(_check(write, CPU_POD_ON_MISSING_LABEL, str(ELASTIC / "system-nodes.yaml")), "over-tight-affinity")
    assert [f["severity"] for f in pooled] == ["warning"]
    assert "autoscaled or managed pools" in pooled[0]["notes"][-1]
    static = write(
        "static/nodes.yaml",
        (ELASTIC / "system-nodes.yaml").read_text().replace("karpenter.sh/nodepool: system", "team: platform"),
    )
    proven = _rules(_check(write, CPU_POD_ON_MISSING_LABEL, str(static)), "over-tight-affinity")
    assert [f["severity"] for f in proven] == ["error"]
    assert "matches none of the 2 nodes" in proven[0]["message"]


VOLCANO_GPU_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi-train, namespace: ml}
spec:
  minAvailable: 3
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: worker
          image: registry.example.com/mpi:1.0
          resources:
            limits: {nvidia.com/gpu: 8}
"""


def test_a_gang_of_gpu_pods_is_not_unsatisfiable_on_a_cluster_without_gpu_nodes(write):
    findings = _check(write, VOLCANO_GPU_JOB, str(ELASTIC / "system-nodes.yaml"))
    assert not _rules(findings, "gang-unsatisfiable")
    assert [f["severity"] for f in _rules(findings, "gpu-resource-unknown")] == ["warning"]


def _admit(pod: dict, *inventory: str) -> tuple[bool, str, list[str]]:
    reviewer = ReviewSnapshot.build(Config(), load_inventory(list(inventory)), Severity.ERROR, dry_run=False)
    request = {"uid": "u1", "operation": "CREATE", "namespace": "ml", "object": pod}
    decision = decide(request, reviewer)
    return decision.allowed, decision.message, decision.warnings


def _pod_of(job_yaml: str) -> dict:
    template = yaml.safe_load(job_yaml)["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": template["spec"]}


def test_the_webhook_allows_a_gpu_pod_on_a_scale_from_zero_cluster(write):
    allowed, message, warnings = _admit(_pod_of(GPU_JOB), str(ELASTIC / "system-nodes.yaml"))
    assert allowed, message
    assert any(w.startswith("gpulint gpu-resource-unknown:") for w in warnings)
    # the same typo is denied once a GPU node proves the cluster's resource names
    gpu_node = write(
        "gpu-node.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata: {name: gpu-1, labels: {karpenter.sh/nodepool: gpu}}
        status: {allocatable: {cpu: "4", memory: 16Gi, pods: "58", nvidia.com/gpu: "1"}}
        """,
    )
    typo = _pod_of(GPU_JOB.replace("{nvidia.com/gpu: 1}", "{nvidia.com/gpus: 1}"))
    classes = str(write("deviceclasses.yaml", DEVICE_CLASSES))
    allowed, message, _ = _admit(typo, str(ELASTIC / "system-nodes.yaml"), str(gpu_node), classes)
    assert not allowed and "gpu-resource-unknown" in message
