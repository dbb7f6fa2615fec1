"""What an EKS node group (or an Auto Scaling group) Cluster Autoscaler grows from scratch can hold: its AWS
template takes allocatable to be capacity (kubernetes/autoscaler cluster-autoscaler-1.36.1
cloudprovider/aws/aws_manager.go buildNodeFromTemplate: 110 pods, the type's vCPUs and memory). The shipped
rows' allocatable is Karpenter's estimate (7.5% VM overhead, then kube-reserved and eviction), which can be lower
than what such a node reports (pytorch/ci-infra#1082: 58981Mi measured on g6.4xlarge, 57691Mi in the row): a pod
between the two is scaled up for and may run, so only capacity bounds it."""

from __future__ import annotations

from conftest import DATA, run_cli

EKS = DATA / "elastic" / "eks"  # gpu-a10g: g5.12xlarge (48 vCPUs, 192 GiB, 4 A10G), max 2 nodes

# A fine-tune that takes a whole g5.12xlarge: its 4 GPUs and most of its memory.
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: train
        image: registry.example.com/finetune:2.1
        resources:
          requests: {cpu: "<CPU>", memory: <MEMORY>, ephemeral-storage: <DISK>}
          limits: {nvidia.com/gpu: 4}
"""


def _findings(write, cpu: str = "40", memory: str = "150Gi", disk: str = "10Gi") -> list[dict]:
    job = write("job.yaml", JOB.replace("<CPU>", cpu).replace("<MEMORY>", memory).replace("<DISK>", disk))
    report = run_cli("check", str(job), "--inventory", str(EKS), "--ignore", "dev-shm-missing", "--format", "json")
    return report.json()["findings"]


def test_a_pod_that_fits_the_node_fits(write):
    assert _findings(write) == []


def test_memory_between_karpenters_estimate_and_capacity_is_no_reason(write):
    """180Gi: above Karpenter's 169.3Gi for g5.12xlarge, below its 192Gi: the autoscaler's template holds it."""
    assert _findings(write, memory="180Gi") == []


def test_more_memory_than_the_type_has_never_fits(write):
    (finding,) = _findings(write, memory="200Gi")
    assert finding["rule"] == "gpu-unschedulable" and finding["severity"] == "error"
    assert (
        "EKS node group gpu-a10g: its instance type g5.12xlarge has 192Gi memory; the pod asks for 200Gi"
        in (finding["notes"][0])
    )


def test_more_cpus_than_the_type_has_never_fits(write):
    (finding,) = _findings(write, cpu="49")
    assert "its instance type g5.12xlarge has 48 cpu; the pod asks for 49" in finding["notes"][0]


def test_the_disk_is_the_launch_templates(write):
    """Karpenter's rows assume a 20Gi root volume; a node group's disk is its launch template's or diskSize."""
    assert _findings(write, disk="100Gi") == []
