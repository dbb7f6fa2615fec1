"""What a GKE node pool Cluster Autoscaler grows from scratch can hold: its GCE template subtracts the kernel's
reservation, GKE's kube-reserved and the 100Mi eviction threshold from the machine type's vCPUs and memory
(kubernetes/autoscaler cluster-autoscaler-1.36.1 cloudprovider/gce/templates.go, gce_reserved.go). Only a custom
machine type's name states its size (machine_types.go NewCustomMachineType); a predefined type's is the shipped
catalog's (catalog/gcp.yaml, from the Compute Engine API's machine-types list)."""

from __future__ import annotations

import json

from conftest import run_cli

from gpulint.kube.pools.gce import (
    GIB,
    MIB,
    MachineSize,
    custom_machine,
    kernel_reserved,
    kube_reserved_cpu,
    kube_reserved_memory,
    template_allocatable,
)

# A pool of `gcloud container node-pools list --format=json`, trimmed: an N1 custom machine (8 vCPUs, 30GiB) with a T4,
# scaled from zero, no node in the inventory.
POOL = {
    "autoscaling": {"enabled": True, "locationPolicy": "ANY", "maxNodeCount": 4, "minNodeCount": 0},
    "config": {
        "accelerators": [
            {
                "acceleratorCount": "1",
                "acceleratorType": "nvidia-tesla-t4",
                "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
            }
        ],
        "diskSizeGb": 100,
        "imageType": "COS_CONTAINERD",
        "machineType": "n1-custom-8-30720",
    },
    "initialNodeCount": 0,
    "locations": ["us-central1-b"],
    "name": "t4-pool",
    "status": "RUNNING",
    "version": "1.33.2-gke.1240000",
}

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: whisper-batch, namespace: speech}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {cloud.google.com/gke-accelerator: <GPU>}
      containers:
      - name: transcribe
        image: registry.example.com/whisper:large-v3
        resources:
          requests: {cpu: "<CPU>", memory: <MEMORY>, ephemeral-storage: <DISK>}
          limits: {nvidia.com/gpu: 1}
"""


def _check(tmp_path, manifest, machine="", image="", gpu="", gpus="1", max_nodes=4) -> list[dict]:
    pool = json.loads(json.dumps(POOL))
    pool["config"]["machineType"] = machine or pool["config"]["machineType"]
    pool["config"]["accelerators"][0].update(acceleratorType=gpu or "nvidia-tesla-t4", acceleratorCount=gpus)
    pool["config"]["imageType"] = image or pool["config"]["imageType"]
    pool["autoscaling"]["maxNodeCount"] = max_nodes
    inventory = tmp_path / "inventory"
    inventory.mkdir(parents=True)
    # as `gcloud container clusters describe --format json` prints it: node auto-provisioning off (false is omitted),
    # so no pool GKE would create for the GPU type the Job selects can take it either
    cluster = {"name": "speech", "autoscaling": {"autoscalingProfile": "BALANCED"}, "nodePools": [pool]}
    (inventory / "cluster.json").write_text(json.dumps(cluster))
    (tmp_path / "workload.yaml").write_text(manifest)
    report = run_cli(
        "check", str(tmp_path / "workload.yaml"), "--inventory", str(inventory), "--ignore", "dev-shm-missing",
        "--format", "json",
    )  # fmt: skip
    return report.json()["findings"]


def _findings(tmp_path, cpu="6", memory="24Gi", disk="20Gi", machine="", image="", gpu="") -> list[dict]:
    job = JOB.replace("<GPU>", gpu or "nvidia-tesla-t4").replace("<CPU>", cpu).replace("<MEMORY>", memory)
    return _check(tmp_path, job.replace("<DISK>", disk), machine, image, gpu)


def test_a_pod_that_fits_the_template_fits(tmp_path):
    assert _findings(tmp_path) == []


def test_more_memory_than_the_template_leaves_cannot_scale_up(tmp_path):
    """28Gi: below the machine's 30GiB, above what is left after the kernel, kube-reserved and eviction."""
    (finding,) = _findings(tmp_path, memory="28Gi")
    assert finding["rule"] == "gpu-unschedulable" and finding["severity"] == "error"
    assert (
        "GKE node pool t4-pool: its instance type n1-custom-8-30720 has 25.9Gi memory; the pod asks for 28Gi"
        in finding["notes"][0]
    )


def test_every_vcpu_of_the_machine_is_more_than_allocatable(tmp_path):
    (finding,) = _findings(tmp_path, cpu="8")
    assert "its instance type n1-custom-8-30720 has 7.91 cpu; the pod asks for 8" in finding["notes"][0]


def test_the_disk_is_not_judged(tmp_path):
    """The template's disk is the instance template's boot disk, which the node pool JSON does not settle."""
    assert _findings(tmp_path, disk="500Gi") == []


A100 = {"machine": "a2-highgpu-1g", "gpu": "nvidia-tesla-a100"}


def test_a_predefined_machine_type_is_judged_on_its_catalog_size(tmp_path):
    """a2-highgpu-1g: 12 vCPUs and 85GiB in the Compute Engine API's machine-types list (catalog/gcp.yaml); the
    template leaves 76.6Gi of memory and 11.9 cpu. 77Gi is below the machine's 85GiB, above what is left."""
    (finding,) = _findings(tmp_path, memory="77Gi", **A100)
    assert finding["rule"] == "gpu-unschedulable" and finding["severity"] == "error"
    assert "its instance type a2-highgpu-1g has 76.6Gi memory; the pod asks for 77Gi" in finding["notes"][0]
    (finding,) = _findings(tmp_path / "cpu", cpu="12", **A100)
    assert "its instance type a2-highgpu-1g has 11.9 cpu; the pod asks for 12" in finding["notes"][0]


def test_a_pod_within_the_predefined_types_template_fits(tmp_path):
    assert _findings(tmp_path, cpu="11", memory="76Gi", disk="500Gi", **A100) == []


def test_a_predefined_type_no_source_sizes_is_not_judged(tmp_path):
    """a4x-highgpu-4g-nolssd: xpk states its 4 GB200s, no fetched source its vCPUs or memory: silence."""
    assert _findings(tmp_path, cpu="500", memory="4000Gi", machine="a4x-highgpu-4g-nolssd", gpu="nvidia-gb200") == []


def test_an_n1_type_the_pool_attaches_gpus_to_is_judged_on_its_listed_size(tmp_path):
    """n1-standard-8 with a T4, GKE's own GPU example: 8 vCPUs and 30GiB in the machine-types list (the shipped
    catalog's machine-sizes), so the same 25.9Gi and 7.91 cpu as n1-custom-8-30720."""
    (finding,) = _findings(tmp_path, memory="26Gi", machine="n1-standard-8")
    assert finding["rule"] == "gpu-unschedulable" and finding["severity"] == "error"
    assert "its instance type n1-standard-8 has 25.9Gi memory; the pod asks for 26Gi" in finding["notes"][0]
    assert _findings(tmp_path / "fits", cpu="7", memory="25Gi", machine="n1-standard-8") == []


def test_a_machine_type_the_list_does_not_size_is_not_judged(tmp_path):
    """n1-highcpu-16: gcloud's 14.40GB is no whole number of MiB, so no size is listed: 100Gi is silence."""
    assert _findings(tmp_path, cpu="40", memory="100Gi", machine="n1-highcpu-16") == []


def test_a_windows_image_of_a_predefined_type_is_bounded_by_the_machine(tmp_path):
    """No kernel estimate for Windows: the machine's 85GiB bounds it, the template's 76.6Gi does not."""
    assert _findings(tmp_path, memory="84Gi", image="WINDOWS_LTSC_CONTAINERD", **A100) == []
    (finding,) = _findings(tmp_path / "more", memory="90Gi", image="WINDOWS_LTSC_CONTAINERD", **A100)
    assert "its instance type a2-highgpu-1g has 85Gi memory; the pod asks for 90Gi" in finding["notes"][0]


def test_a_windows_image_is_not_judged(tmp_path):
    """The template's kernel estimate is for COS and Ubuntu only."""
    assert _findings(tmp_path, memory="28Gi", image="WINDOWS_LTSC_CONTAINERD") == []


def test_an_ubuntu_image_is_judged(tmp_path):
    (finding,) = _findings(tmp_path, memory="28Gi", image="UBUNTU_CONTAINERD")
    assert finding["rule"] == "gpu-unschedulable"


# A Volcano gang of T4 workers, each with a GPU and 20Gi of memory.
GANG = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: asr-finetune, namespace: speech}
spec:
  minAvailable: <N>
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: <N>
    template:
      spec:
        restartPolicy: OnFailure
        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}
        containers:
        - name: worker
          image: registry.example.com/asr:2.0
          resources:
            requests: {cpu: "2", memory: <MEMORY>}
            limits: {nvidia.com/gpu: 1}
"""


def _gang(tmp_path, workers: int, memory: str = "20Gi") -> list[dict]:
    """Two n1-custom-16-61440 nodes with 4 T4s each: about 53.5Gi allocatable, so two 20Gi workers a node."""
    manifest = GANG.replace("<N>", str(workers)).replace("<MEMORY>", memory)
    return _check(tmp_path, manifest, machine="n1-custom-16-61440", gpus="4", max_nodes=2)


def test_a_gang_the_templates_memory_holds(tmp_path):
    assert [f for f in _gang(tmp_path, 4) if f["severity"] == "error"] == []


def test_a_gang_the_templates_memory_does_not_hold(tmp_path):
    """Five workers: the GPUs of two nodes would take eight, their memory only four."""
    (error,) = [f for f in _gang(tmp_path, 5) if f["severity"] == "error"]
    assert error["rule"] == "gang-unsatisfiable", error
    assert "needs 5 pods placed at once" in error["message"] and "hold at most 4" in error["message"]


def test_a_gang_small_enough_is_bounded_by_gpus(tmp_path):
    assert [f for f in _gang(tmp_path, 8, memory="8Gi") if f["severity"] == "error"] == []


# Two roles in one gang: a leader with more memory, the rest as above.
LEADER = """\
  - name: leader
    replicas: 1
    template:
      spec:
        restartPolicy: OnFailure
        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}
        containers:
        - name: leader
          image: registry.example.com/asr:2.0
          resources:
            requests: {cpu: "2", memory: 30Gi}
            limits: {nvidia.com/gpu: 1}
"""


def test_a_gang_of_two_shapes_packed_into_the_templates_memory(tmp_path):
    """Leader (30Gi) and one worker on one node, two workers on the other: a third worker has no room left."""
    for workers, errors in ((3, []), (4, ["gang-unsatisfiable"])):
        manifest = GANG.replace("<N>", str(workers + 1), 1).replace("<N>", str(workers)).replace("<MEMORY>", "20Gi")
        found = _check(tmp_path / str(workers), manifest + LEADER, machine="n1-custom-16-61440", gpus="4", max_nodes=2)
        assert [f["rule"] for f in found if f["severity"] == "error"] == errors, found


def test_custom_machine_names():
    """machine_types.go NewCustomMachineType and its tests: the family prefix is optional for N1, e2's shared-core
    custom types have 2 vCPUs, an extended-memory suffix is ignored."""
    assert custom_machine("custom-8-30720") == MachineSize(8, 30720 * MIB)
    assert custom_machine("n2-custom-48-184320-ext") == MachineSize(48, 184320 * MIB)
    assert custom_machine("e2-custom-micro-2048") == MachineSize(2, 2048 * MIB)
    bad = ("n1-standard-8", "g2-standard-24", "custom-8", "n2-custom-x-1024", "custom", "custom-0-1024", "custom-2-0")
    for name in (*bad, "custom-2-" + "9" * 5000, "n1-custom-٣-1024"):
        assert custom_machine(name) is None, name


def test_kernel_reservation_matches_the_autoscalers_cos_estimate():
    """gce_reserved_test.go TestCalculateKernelReservedLinux, COS cases: memory/64, 16MiB, 64MiB above 3GiB,
    8MiB up to 8GiB, and the correction min(0.00175 x memory, 248MiB)."""
    assert kernel_reserved(3 * GIB) == 48 * MIB + 16 * MIB + 8 * MIB + int(0.00175 * 3 * GIB)
    assert kernel_reserved(4 * GIB) == 64 * MIB + 16 * MIB + 64 * MIB + 8 * MIB + int(0.00175 * 4 * GIB)
    assert kernel_reserved(256 * GIB) == 4 * GIB + 16 * MIB + 64 * MIB + 248 * MIB


def test_gke_kube_reserved_tiers():
    """GKE's formula: memory 25% of the first 4GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2%
    above 128GiB (255MiB below 1GiB); CPU 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4."""
    assert kube_reserved_memory(4 * GIB) == GIB
    assert kube_reserved_memory(16 * GIB) == GIB + 819 * MIB + 819 * MIB  # 0.8GiB each, rounded down to MiB
    assert kube_reserved_memory(512 * MIB) == 255 * MIB
    assert kube_reserved_cpu(1) * 1000 == 60
    assert kube_reserved_cpu(4) * 1000 == 80
    assert kube_reserved_cpu(64) * 1000 == 230
    allocatable = template_allocatable(MachineSize(8, 30 * GIB))
    assert allocatable["cpu"] * 1000 == 7910
