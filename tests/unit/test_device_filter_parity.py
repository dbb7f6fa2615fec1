"""The filters a GPU-sharing scheduler adds on the nodes the kube-scheduler's pass are verdicts `explain` shows
in its capacity step and summary, and the rules word (issue #30): KAI's GPU-memory label (gpu-unschedulable)
and HAMi's and Volcano's device count (gpu-sharing). Each case runs both commands on one file and one
inventory, shaped as the reports they come from (a DGX Spark GB10, HAMi's and Volcano's example pods)."""

from __future__ import annotations

import json

from conftest import run_cli

KAI_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: gpu-memory
  labels: {kai.scheduler/queue: default-queue}
  annotations:
    gpu-memory: "2000"
spec:
  schedulerName: SCHEDULER
  containers:
  - name: ubuntu
    image: ubuntu
    args: ["sleep", "infinity"]
"""
SPARK = """\
apiVersion: v1
kind: Node
metadata:
  name: spark-01
  labels: {kubernetes.io/hostname: spark-01, nvidia.com/gpu.present: "true", nvidia.com/gpu.count: "1", LABELS}
status:
  capacity: {cpu: "20", memory: 119Gi, pods: "110", nvidia.com/gpu: "1"}
  allocatable: {cpu: "20", memory: 119Gi, pods: "110", nvidia.com/gpu: "1"}
"""
NO_MEMORY = "nvidia.com/gpu.product: NVIDIA-GB10"  # GB10 reports no memory total: GFD sets no label
MEMORY = "nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.memory: '23034'"

HAMI_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  containers:
  - name: ubuntu-container
    image: ubuntu:22.04
    command: ["bash", "-c", "sleep 86400"]
    resources:
      limits:
        nvidia.com/gpu: 2
"""
HAMI_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: h100-0
  labels: {kubernetes.io/hostname: h100-0}
  annotations:
    hami.io/node-nvidia-register: "REGISTER"
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "20"}
  allocatable: {cpu: "32", memory: 250Gi, pods: "110", nvidia.com/gpu: "20"}
"""
ONE_H100 = "GPU-5d2b1c3e-8a41-4f0e-9c7a-0b6f2d9e1a44,10,81559,100,NVIDIA-NVIDIA H100 PCIe,0,true:"
TWO_H100 = ONE_H100 + ONE_H100.replace("GPU-5d2b", "GPU-6e3c").replace(",0,true", ",1,true")

VOLCANO_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: pod2}
spec:
  schedulerName: volcano
  containers:
  - name: pod1-ctr
    image: ubuntu:20.04
    command: ["sleep", "100000"]
    resources:
      limits:
        volcano.sh/vgpu-memory: 2048
        volcano.sh/vgpu-number: 2
"""
VOLCANO_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: devsrv01
  labels: {kubernetes.io/hostname: devsrv01LABELS}
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "110", volcano.sh/vgpu-number: "4", volcano.sh/vgpu-memory: "24564"}
  allocatable: {cpu: "32", memory: 126Gi, pods: "110", volcano.sh/vgpu-number: "4", volcano.sh/vgpu-memory: "24564"}
"""


def _run(write, manifest: str, nodes: str, rule: str) -> tuple[list[dict], dict]:
    """check's findings of ``rule`` and explain's only explanation, on the same file and inventory."""
    path, inventory = write("repo/pod.yaml", manifest), write("inventory/nodes.yaml", nodes)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert checked.exit_code == explained.exit_code == 0, explained.stderr
    (explanation,) = json.loads(explained.stdout)["explanations"]
    return [f for f in checked.json()["findings"] if f["rule"] == rule], explanation


def _capacity(explanation: dict) -> dict:
    (step,) = [step for step in explanation["steps"] if step["title"] == "Capacity vs allocatable"]
    return step


def test_a_kai_gpu_memory_pod_no_node_labels_fails_the_capacity_step_check_warns_on(write):
    findings, explanation = _run(
        write, KAI_POD.replace("SCHEDULER", "kai-scheduler"), SPARK.replace("LABELS", NO_MEMORY), "gpu-unschedulable"
    )
    (finding,) = findings
    assert finding["severity"] == "warning"
    refusal = finding["notes"][0]
    assert refusal == "KAI: node is not a gpu node or the gpu memory count on the node was not synced yet"
    capacity = _capacity(explanation)
    assert capacity["status"] == "FAIL"
    (line,) = capacity["lines"]  # no extended resource: the verdict is the step's only line
    assert line.startswith("gpu-memory: asks 2000 MiB of a GPU; ")
    assert "none of the 1 node the other filters pass has the label (spark-01)" in line
    assert line.endswith(refusal)
    assert explanation["scheduler"] == f"1/1 nodes pass every filter of the kube-scheduler, but {refusal}"


def test_a_kai_gpu_memory_pod_with_a_labelled_node_passes_and_check_is_silent(write):
    nodes = SPARK.replace("LABELS", NO_MEMORY) + "---\n" + SPARK.replace("spark-01", "l4-01").replace("LABELS", MEMORY)
    findings, explanation = _run(write, KAI_POD.replace("SCHEDULER", "kai-scheduler"), nodes, "gpu-unschedulable")
    assert findings == []
    assert _capacity(explanation) == {
        "title": "Capacity vs allocatable",
        "status": "ok",
        "lines": ["no extended resources requested"],
    }
    assert explanation["scheduler"] == "2/2 nodes pass every filter"


def test_a_gpu_memory_annotation_the_default_scheduler_never_reads_is_no_verdict_trap(write):
    manifest = KAI_POD.replace("  schedulerName: SCHEDULER\n", "")
    findings, explanation = _run(write, manifest, SPARK.replace("LABELS", NO_MEMORY), "gpu-unschedulable")
    assert findings == []
    assert _capacity(explanation)["status"] == "ok"
    assert explanation["scheduler"] == "1/1 nodes pass every filter"


def test_two_hami_vgpus_on_one_physical_gpu_fail_the_capacity_step_check_warns_on(write):
    findings, explanation = _run(write, HAMI_POD, HAMI_NODE.replace("REGISTER", ONE_H100), "gpu-sharing")
    (finding,) = findings
    refusal = finding["notes"][1]
    assert refusal == "HAMi's scheduler: NodeInsufficientDevice on h100-0 (request devices nums 2, node device nums 1)"
    capacity = _capacity(explanation)
    assert capacity["status"] == "FAIL"
    assert capacity["lines"][-1] == (
        "container 'ubuntu-container': asks 2 nvidia.com/gpu; HAMi gives a container at most one of each physical "
        f"GPU, and the nodes it can use have at most 1: {refusal}"
    )
    assert explanation["scheduler"] == f"1/1 nodes pass every filter of the kube-scheduler, but {refusal}"


def test_two_hami_vgpus_on_two_physical_gpus_pass_and_check_is_silent(write):
    findings, explanation = _run(write, HAMI_POD, HAMI_NODE.replace("REGISTER", TWO_H100), "gpu-sharing")
    assert findings == []
    capacity = _capacity(explanation)
    assert capacity["status"] == "ok"
    assert capacity["lines"] == ["nvidia.com/gpu: asks 2; largest node capacity 20, allocatable 20, free now 20"]


def test_two_volcano_vgpus_on_one_card_fail_the_capacity_step_check_warns_on(write):
    nodes = VOLCANO_NODE.replace("LABELS", ", nvidia.com/gpu.count: '1'")
    findings, explanation = _run(write, VOLCANO_POD, nodes, "gpu-sharing")
    (finding,) = findings
    refusal = finding["notes"][1]
    assert refusal == "Volcano: no enough gpu cards on node devsrv01 (1)"
    capacity = _capacity(explanation)
    assert capacity["status"] == "FAIL"
    assert capacity["lines"][-1].endswith(f"at most 1: {refusal}")
    assert explanation["scheduler"].endswith(f"but {refusal}")


def test_volcano_vgpus_on_a_node_whose_cards_nothing_counts_are_no_verdict_trap(write):
    findings, explanation = _run(write, VOLCANO_POD, VOLCANO_NODE.replace("LABELS", ""), "gpu-sharing")
    assert findings == []
    assert _capacity(explanation)["status"] == "ok"
    assert explanation["scheduler"] == "1/1 nodes pass every filter"


# The GPU Operator's time-slicing ConfigMap (its docs' shape) and a T4 node GFD labels time-sliced 4 ways
TIME_SLICING = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  tesla-t4: |-
    version: v1
    sharing:
      timeSlicing:
        failRequestsGreaterThanOne: FAIL
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: v1
kind: Pod
metadata: {name: two-units}
spec:
  containers:
  - name: infer
    image: vllm/vllm-openai:v0.10.1
    resources:
      limits: {nvidia.com/gpu: UNITS}
"""
T4 = """\
apiVersion: v1
kind: Node
metadata:
  name: t4-0
  labels: {kubernetes.io/hostname: t4-0, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: Tesla-T4-SHARED, nvidia.com/gpu.count: "4", nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "16"}
  allocatable: {cpu: "62", memory: 240Gi, pods: "110", nvidia.com/gpu: "16"}
"""


def _shared(write, fail: str, units: int) -> tuple[list[dict], dict]:
    manifest = TIME_SLICING.replace("FAIL", fail).replace("UNITS", str(units))
    path, inventory = write("repo/pod.yaml", manifest), write("inventory/nodes.yaml", T4)
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli(
        "explain", str(path), "--inventory", str(inventory), "--format", "json", "--object", "Pod/two-units"
    )
    assert explained.exit_code == checked.exit_code, explained.stderr
    (explanation,) = json.loads(explained.stdout)["explanations"]
    return [f for f in checked.json()["findings"] if f["rule"] == "gpu-sharing"], explanation


def test_two_units_the_device_plugin_refuses_fail_the_capacity_step_check_errs_on(write):
    (finding,), explanation = _shared(write, "true", 2)
    assert finding["severity"] == "error"
    refusal, admission = finding["notes"][0], finding["notes"][1]
    capacity = _capacity(explanation)
    assert capacity["status"] == "FAIL"
    assert capacity["lines"][-1] == (
        "container 'infer': asks 2 nvidia.com/gpu; on every node it can use it is a time-sliced replica of a whole "
        f"GPU, 4 per device: {refusal}: {admission}"
    )
    assert (
        explanation["scheduler"]
        == f"1/1 nodes pass every filter of the kube-scheduler, but {refusal} (UnexpectedAdmissionError)"
    )


def test_two_time_sliced_units_the_plugin_allows_are_info_check_warns_on(write):
    (finding,), explanation = _shared(write, "false", 2)
    assert finding["severity"] == "warning"
    capacity = _capacity(explanation)
    assert capacity["status"] == "info"
    assert capacity["lines"][-1].endswith(
        "the units may be replicas of one physical GPU, no more GPU than 1 is guaranteed"
    )
    assert explanation["scheduler"] == "1/1 nodes pass every filter"


def test_one_time_sliced_unit_passes_and_check_is_silent(write):
    findings, explanation = _shared(write, "true", 1)
    assert findings == []
    assert _capacity(explanation)["status"] == "ok"


A100 = """\
apiVersion: v1
kind: Node
metadata:
  name: NAME
  labels: {kubernetes.io/hostname: NAME, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: PRODUCT, nvidia.com/gpu.count: "COUNT", nvidia.com/gpu.replicas: "1", nvidia.com/gpu.sharing-strategy: none, nvidia.com/mig.strategy: single}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "COUNT"}
  allocatable: {cpu: "62", memory: 240Gi, pods: "110", nvidia.com/gpu: "COUNT"}
"""
MIG = A100.replace("NAME", "a100-mig-0").replace("PRODUCT", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb").replace("COUNT", "56")
WHOLE = A100.replace("NAME", "a100-0").replace("PRODUCT", "NVIDIA-A100-SXM4-40GB").replace("COUNT", "8")
NOTEBOOK = """\
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec:
  containers:
  - name: jupyter
    image: quay.io/jupyter/pytorch-notebook:cuda12-latest
    resources:
      limits: {nvidia.com/gpu: 1}
"""


def test_a_gpu_that_is_a_mig_slice_on_some_nodes_is_info_in_the_capacity_step_check_warns_on(write):
    (finding,), explanation = _run(write, NOTEBOOK, MIG + "---\n" + WHOLE, "gpu-sharing")
    assert (
        finding["message"] == "nvidia.com/gpu is a MIG slice on 1 of the 2 nodes this pod can use and a whole GPU on 1"
    )
    capacity = _capacity(explanation)
    assert capacity["status"] == "info"
    assert capacity["lines"][-1] == (
        "nvidia.com/gpu is a MIG slice on 1 of the nodes it can use (a100-mig-0) and a whole GPU on 1 (a100-0): "
        "where it lands decides which it gets"
    )


def test_a_gpu_pinned_to_the_mig_nodes_passes_and_check_is_silent(write):
    pinned = NOTEBOOK.replace(
        "spec:\n", "spec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}\n", 1
    )
    findings, explanation = _run(write, pinned, MIG + "---\n" + WHOLE, "gpu-sharing")
    assert findings == []
    assert _capacity(explanation)["status"] == "ok"
