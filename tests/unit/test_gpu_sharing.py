"""GPU sharing from GPU feature discovery's labels: gpu-sharing, and `gpulint inventory` telling units apart."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import REPO, by_rule, lint_text, run_cli, said

from gpulint.kube.gpu_sharing import MPS, NONE, TIME_SLICING, breakdown, node_resource
from gpulint.kube.scheduler import NodeInfo
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

SHARING = str(REPO / "rules" / "inventories" / "gpu-sharing")
RULE = "gpu-sharing"


def node(name: str, labels: dict, allocatable: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110", **allocatable}},
    }


def info(labels: dict, allocatable: dict, resource: str = "nvidia.com/gpu"):
    return node_resource(NodeInfo.from_object(node("n", labels, allocatable)), resource)


def inventory_of(tmp_path, *nodes):
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(nodes)}))
    return load_inventory([str(path)])


def lint(text: str, inventory):
    return by_rule(lint_text(text, "p.yaml", inventory=inventory), RULE)


def pod(gpus: int, extra: str = "", resource: str = "nvidia.com/gpu") -> str:
    spec = textwrap.indent(textwrap.dedent(extra).strip("\n"), "  ") + "\n" if extra.strip() else ""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n"
        f"{spec}"
        "  containers:\n  - name: train\n    image: registry.example.com/train:1.0\n"
        f"    resources:\n      limits: {{{resource}: {gpus}}}\n"
    )


@pytest.fixture(scope="module")
def sharing():
    return load_inventory([SHARING])


# ----------------------------------------------------------------- what a unit is


def test_time_sliced_nodes_from_gfd_labels():
    found = info(
        {
            "nvidia.com/gpu.replicas": "4",
            "nvidia.com/gpu.sharing-strategy": "time-slicing",
            "nvidia.com/gpu.product": "Tesla-T4-SHARED",
        },
        {"nvidia.com/gpu": "16"},
    )
    assert (found.shared, found.strategy, found.replicas, found.devices, found.mig_slice) == (
        True,
        TIME_SLICING,
        4,
        4,
        False,
    )


def test_older_gfd_without_a_strategy_label_still_marks_shared_products():
    found = info({"nvidia.com/gpu.product": "Tesla-T4-SHARED"}, {"nvidia.com/gpu": "16"})
    assert found.strategy == TIME_SLICING and found.devices is None  # replicas unknown: the GPUs behind are too


def test_mps_and_renamed_shared_resources():
    labels = {
        "nvidia.com/gpu.replicas": "10",
        "nvidia.com/gpu.sharing-strategy": "mps",
        "nvidia.com/gpu.product": "NVIDIA-A10",
    }
    found = info(labels, {"nvidia.com/gpu.shared": "40"}, "nvidia.com/gpu.shared")
    assert (found.strategy, found.devices) == (MPS, 4)


@pytest.mark.parametrize(
    ("labels", "allocatable", "resource", "mig"),
    [
        (
            {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/mig.strategy": "single"},
            {"nvidia.com/gpu": "56"},
            "nvidia.com/gpu",
            True,
        ),
        ({"nvidia.com/mig.strategy": "mixed"}, {"nvidia.com/mig-3g.20gb": "2"}, "nvidia.com/mig-3g.20gb", True),
        (
            {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.replicas": "1"},
            {"nvidia.com/gpu": "8"},
            "nvidia.com/gpu",
            False,
        ),
    ],
)
def test_mig_slices_and_whole_gpus(labels, allocatable, resource, mig):
    found = info(labels, allocatable, resource)
    assert found.mig_slice is mig and found.strategy == NONE and not found.shared


def test_other_resources_are_not_read():
    assert info({}, {"amd.com/gpu": "8"}, "amd.com/gpu") is None
    assert info({}, {}, "nvidia.com/gpu") is None


def test_breakdown_counts_units_as_what_they_are(sharing):
    counted = breakdown(sharing.nodes)
    assert (counted.physical, counted.whole) == (24, 16)
    assert counted.replicas == {TIME_SLICING: 32} and counted.replicated_gpus == {TIME_SLICING: 8}
    assert counted.mig == {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb": 112}


# ----------------------------------------------------------------- gpu-sharing: failing


def test_several_time_sliced_units_warn(sharing):
    (finding,) = lint(pod(2, "nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}"), sharing)
    assert finding.severity == Severity.WARNING
    assert (finding.line, finding.column) == (10, 32)
    assert "asks for 2 nvidia.com/gpu, but on every node it can use nvidia.com/gpu is a time-sliced replica" in (
        finding.message
    )
    assert "where failRequestsGreaterThanOne is set" in said(finding)


def test_mps_refuses_more_than_one_by_default(tmp_path):
    labels = {
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "mps",
        "nvidia.com/gpu.product": "NVIDIA-L4",
    }
    inventory = inventory_of(tmp_path, node("l4-0", labels, {"nvidia.com/gpu": "16"}))
    (finding,) = lint(pod(2), inventory)
    assert finding.severity == Severity.ERROR
    assert "UnexpectedAdmissionError (maximum request size for shared resources is 1; found 2)" in said(finding)


def test_the_linted_plugin_configuration_decides_time_slicing(sharing):
    config = """
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: time-slicing-config, namespace: gpu-operator}
    data:
      any: |-
        version: v1
        sharing:
          timeSlicing:
            failRequestsGreaterThanOne: FAIL
            resources:
            - {name: nvidia.com/gpu, replicas: 4}
    """
    text = pod(2, "nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}") + textwrap.dedent(config)
    (refused,) = lint(text.replace("FAIL", "true"), sharing)
    assert refused.severity == Severity.ERROR
    (allowed,) = lint(text.replace("FAIL", "false"), sharing)
    assert allowed.severity == Severity.WARNING and "failRequestsGreaterThanOne is set" not in allowed.message


def test_some_shared_nodes_among_the_candidates_are_named(tmp_path):
    shared = {
        "nvidia.com/gpu.replicas": "2",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.product": "NVIDIA-L4-SHARED",
    }
    inventory = inventory_of(
        tmp_path,
        node("l4-0", shared, {"nvidia.com/gpu": "8"}),
        node("l4-1", {"nvidia.com/gpu.product": "NVIDIA-L4"}, {"nvidia.com/gpu": "4"}),
    )
    (finding,) = lint(pod(2), inventory)
    assert "on 1 of the 2 nodes it can use nvidia.com/gpu is a time-sliced replica" in finding.message
    assert "the nodes: l4-0" in finding.notes


def test_a_pod_that_does_not_pin_the_product_across_mig_single_nodes(sharing):
    (finding,) = lint(pod(1), sharing)
    assert "nvidia.com/gpu is a MIG slice on 2 of the 6 nodes this pod can use" in finding.message
    assert "NVIDIA-A100-SXM4-40GB, Tesla-T4-SHARED" in said(finding)


def test_a_renamed_shared_resource_warns_where_the_whole_gpus_beside_it_do_not(tmp_path):
    # renameByDefault: the replicas are nvidia.com/gpu.shared (labelled under the original name); the
    # other node's nvidia.com/gpu are whole GPUs. Which names some node shares decides, name by name.
    renamed = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.product": "NVIDIA-L4-SHARED"}
    inventory = inventory_of(
        tmp_path,
        node("l4-0", renamed, {"nvidia.com/gpu.shared": "16"}),
        node("h100-0", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, {"nvidia.com/gpu": "8"}),
    )
    (finding,) = lint(pod(2, resource="nvidia.com/gpu.shared"), inventory)
    assert "asks for 2 nvidia.com/gpu.shared, but on every node it can use" in finding.message
    assert lint(pod(2), inventory) == []


def test_what_the_inventory_shares_is_worked_out_once_for_every_pod(tmp_path, monkeypatch):
    """The webhook checks every review against the same inventory: what each node's resources are is read
    once, not once per pod, and the second pod gets the same answer."""
    import gpulint.lint.verdicts.device_filters as rule  # the verdict gpu-sharing words and explain shows

    mps = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "mps"}
    inventory = inventory_of(
        tmp_path, node("l4-0", mps, {"nvidia.com/gpu": "16"}), node("cpu-0", {}, {}), node("cpu-1", {}, {})
    )
    reads: list[str] = []
    real = rule.node_resource
    monkeypatch.setattr(rule, "node_resource", lambda node, resource: reads.append(resource) or real(node, resource))
    (first,) = lint(pod(2), inventory)
    read_for_the_first = len(reads)
    (second,) = lint(pod(3), inventory)
    assert (first.severity, second.severity) == (Severity.ERROR, Severity.ERROR)
    assert "found 3" in said(second)
    assert read_for_the_first > 0 and len(reads) == read_for_the_first


def test_vgpu_device_bounds_are_read_once_per_inventory(tmp_path, monkeypatch):
    """HAMi's registered devices are read once per inventory (a webhook review walked every node for them),
    and each pod still gets the answer for the nodes it can use: a node whose devices are not registered
    keeps the rule silent, one pinned that registers a single GPU is refused two (HAMi v2.10.0
    pkg/scheduler/score.go NodeInsufficientDevice)."""
    import gpulint.lint.verdicts.device_filters as rule  # the verdict gpu-sharing words

    register = "GPU-5d2b1c3e-8a41-4f0e-9c7a-0b6f2d9e1a44,10,81559,100,NVIDIA-NVIDIA H100 PCIe,0,true:"
    hami = node("h100-0", {"pool": "hami"}, {"nvidia.com/gpu": "10"})
    hami["metadata"]["annotations"] = {"hami.io/node-nvidia-register": register}
    inventory = inventory_of(tmp_path, hami, node("h100-1", {"pool": "plain"}, {"nvidia.com/gpu": "10"}))
    reads: list[str] = []
    real = rule.device_bound
    monkeypatch.setattr(rule, "device_bound", lambda data, labels, name: reads.append(name) or real(data, labels, name))
    assert lint(pod(2), inventory) == []  # h100-1's devices are not known: it may have two
    read_for_the_first = len(reads)
    (pinned,) = lint(pod(2, "nodeSelector: {pool: hami}"), inventory)
    assert "HAMi gives a container at most one of each physical GPU" in pinned.message
    assert "NodeInsufficientDevice on h100-0 (request devices nums 2, node device nums 1)" in said(pinned)
    assert read_for_the_first == 2 and len(reads) == read_for_the_first


def test_no_registered_devices_no_finding_and_no_walk(tmp_path, monkeypatch):
    """A fleet no vGPU scheduler registered (the common case) is read once, then never walked per pod."""
    import gpulint.lint.verdicts.device_filters as rule  # the verdict gpu-sharing words

    inventory = inventory_of(tmp_path, *(node(f"h100-{i}", {}, {"nvidia.com/gpu": "8"}) for i in range(3)))
    reads: list[str] = []
    real = rule.device_bound
    monkeypatch.setattr(rule, "device_bound", lambda data, labels, name: reads.append(name) or real(data, labels, name))
    assert lint(pod(2), inventory) == []
    assert lint(pod(4), inventory) == []
    assert reads == ["nvidia.com/gpu"] * 3


# ----------------------------------------------------------------- gpu-sharing: clean (traps)


@pytest.mark.parametrize(
    "text",
    [
        pod(1, "nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}"),  # one replica is what sharing is for
        pod(4, "nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}"),  # whole GPUs
        pod(1, "nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}"),  # a slice, on purpose
    ],
)
def test_single_units_and_pinned_pods_are_clean(sharing, text):
    assert lint(text, sharing) == []


def test_a_fleet_without_sharing_labels_is_silent(tmp_path):
    inventory = inventory_of(
        tmp_path, node("h100-0", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, {"nvidia.com/gpu": "8"})
    )
    assert lint(pod(8), inventory) == []


# ----------------------------------------------------------------- gpulint inventory


def test_inventory_command_tells_physical_replicated_and_mig_apart():
    text = run_cli("inventory", "--inventory", SHARING)
    assert "physical GPUs      24 (+ the GPUs split into the MIG slices below)" in text.stdout
    assert "time-slicing units 32 over 8 devices" in text.stdout
    assert "MIG slices         112  NVIDIA-A100-SXM4-40GB-MIG-1g.5gb" in text.stdout
    data = run_cli("inventory", "--inventory", SHARING, "--format", "json").json()
    assert data["summary"]["nvidiaGpus"]["physicalGpus"] == 24 and data["summary"]["nvidiaGpus"]["sharedUnits"] == {
        "time-slicing": 32
    }


# Volcano's default scheduler configuration (installer/helm/chart/volcano/config/volcano-scheduler.conf) and the
# GPU-share example of docs/user-guide/how_to_use_gpu_sharing.md.
VOLCANO_CONF = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-scheduler-configmap
  namespace: volcano-system
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
        enablePreemptable: false
      - name: conformance
    - plugins:
      - name: overcommit
      - name: drf
        enablePreemptable: false
      - name: predicates
      - name: proportion
      - name: nodeorder
      - name: binpackARGS
"""
GPU_SHARE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: gpu-pod1
spec:
  schedulerName: volcano
  containers:
    - name: cuda-container
      image: nvidia/cuda:10.1-base-ubuntu18.04
      command: ["sleep"]
      args: ["100000"]
      resources:
        limits:
          volcano.sh/gpu-memory: 1024
"""
DEVICESHARE = "\n      - name: deviceshare\n        arguments:\n          deviceshare.GPUSharingEnable: true"
OLD_PREDICATE = "\n      - name: predicates\n        arguments:\n          predicate.GPUSharingEnable: true"


def volcano(switch: str = "", pod: str = GPU_SHARE_POD) -> str:
    return VOLCANO_CONF.replace("ARGS", switch) + "---\n" + pod


def test_a_volcano_gpu_share_needs_the_schedulers_switch():
    """volcano-sh/devices#10: with GPUSharingEnable off the scheduler binds the pod with no GPU chosen and the
    device plugin's Allocate fails; no inventory is needed, the switch is in the linted ConfigMap."""
    (finding,) = by_rule(lint_text(volcano()), RULE)
    assert finding.severity is Severity.WARNING
    assert said(finding).startswith(
        "container 'cuda-container' asks volcano.sh/gpu-memory, which Volcano's scheduler allocates only with "
        "GPUSharingEnable on\nvolcano-scheduler.conf in ConfigMap volcano-system/volcano-scheduler-configmap leaves "
        "it off"
    )
    assert "failed to find gpu id" in said(finding)
    assert by_rule(lint_text(volcano(DEVICESHARE)), RULE) == []  # v1.9.0 on
    assert by_rule(lint_text(volcano(OLD_PREDICATE)), RULE) == []  # before
    quoted = DEVICESHARE.replace("true", '"true"')
    assert by_rule(lint_text(volcano(quoted)), RULE) == []  # GetBool reads a string too


def test_each_volcano_share_has_its_own_switch():
    number = GPU_SHARE_POD.replace("volcano.sh/gpu-memory: 1024", "volcano.sh/gpu-number: 1")
    (finding,) = by_rule(lint_text(volcano(DEVICESHARE, number)), RULE)
    assert "asks volcano.sh/gpu-number, which Volcano's scheduler allocates only with GPUNumberEnable on" in (
        said(finding)
    )
    vgpu = GPU_SHARE_POD.replace("volcano.sh/gpu-memory: 1024", "volcano.sh/vgpu-number: 1")
    assert len(by_rule(lint_text(volcano(DEVICESHARE, vgpu)), RULE)) == 1
    assert by_rule(lint_text(volcano(DEVICESHARE.replace("GPUSharingEnable", "VGPUEnable"), vgpu)), RULE) == []


def test_a_volcano_job_takes_volcano_as_its_scheduler():
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: share-job
spec:
  minAvailable: 1
  tasks:
  - name: worker
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: worker
          image: nvidia/cuda:12.4.1-base-ubuntu22.04
          resources:
            limits:
              volcano.sh/gpu-memory: 2048
"""
    assert len(by_rule(lint_text(volcano("", job)), RULE)) == 1
    other = job.replace("  minAvailable: 1\n", "  minAvailable: 1\n  schedulerName: kai-scheduler\n")
    assert by_rule(lint_text(volcano("", other)), RULE) == []


def test_no_volcano_share_verdict_without_its_configuration_or_its_scheduler():
    assert by_rule(lint_text(GPU_SHARE_POD), RULE) == []  # the cluster's configuration may turn it on
    unnamed = GPU_SHARE_POD.replace("  schedulerName: volcano\n", "")
    assert by_rule(lint_text(volcano("", unnamed)), RULE) == []  # a webhook may still make it Volcano's
    on = VOLCANO_CONF.replace("ARGS", DEVICESHARE).replace("name: volcano-scheduler-configmap", "name: volcano-b")
    assert by_rule(lint_text(volcano() + "---\n" + on), RULE) == []  # a repository is not one cluster
