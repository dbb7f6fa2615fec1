"""Cluster Autoscaler's status ConfigMap in the inventory (gpulint/lint/world/autoscaler_status.py): a node group the
autoscaler may still grow and that no pool gpulint reads describes leaves "can never be scheduled" unproven.

The ConfigMaps are shaped as the autoscaler writes them: YAML from 1.30 (clusterstate/api/types.go), the text
of earlier releases (clusterstate.go buildHealthStatusNodeGroup), as `kubectl get cm -n kube-system
cluster-autoscaler-status -o yaml` prints them."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_cli, said

from gpulint.kube.pools.model import PoolSpec
from gpulint.lint.world.autoscaler_status import NodeGroupStatus, describes, node_groups

NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-0
    labels: {kubernetes.io/hostname: gpu-0}
  status:
    capacity: {cpu: "48", memory: 384Gi, pods: "110", nvidia.com/gpu: "4"}
    allocatable: {cpu: "47", memory: 380Gi, pods: "110", nvidia.com/gpu: "4"}
"""

YAML_STATUS = """\
time: 2026-11-30 09:12:41.125476354 +0000 UTC
autoscalerStatus: Running
clusterWide:
  health:
    status: Healthy
    nodeCounts:
      registered: {total: 2, ready: 2}
    lastProbeTime: "2026-11-30T09:12:41Z"
  scaleUp: {status: NoActivity}
  scaleDown: {status: NoCandidates}
nodeGroups:
- name: {group}
  health:
    status: Healthy
    nodeCounts:
      registered: {total: {target}, ready: {target}}
    cloudProviderTarget: {target}
    minSize: 0
    maxSize: 4
  scaleUp: {status: NoActivity, backoffInfo: {}}
  scaleDown: {status: NoCandidates}
"""

LEGACY_STATUS = """\
Cluster-autoscaler status at 2024-03-11 10:02:17.311841394 +0000 UTC:
Cluster-wide:
  Health:      Healthy (ready=2 unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered=2 longUnregistered=0)
               LastProbeTime:      2024-03-11 10:02:17.30822365 +0000 UTC m=+3601.297000001
  ScaleUp:     NoActivity (ready=2 registered=2)
  ScaleDown:   NoCandidates (candidates=0)

NodeGroups:
  Name:        MachineDeployment/default/gpu-md-0
  Health:      Healthy (ready=1 unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered=1 longUnregistered=0 cloudProviderTarget=1 (minSize=0, maxSize=3))
               LastProbeTime:      2024-03-11 10:02:17.30822365 +0000 UTC m=+3601.297000001
  ScaleUp:     NoActivity (ready=1 cloudProviderTarget=1)
  ScaleDown:   NoCandidates (candidates=0)

  Name:        eks-gpu-a100-54c6b8f2-3d1e-4a6b-9f0e-7c2d1b3a4e5f
  Health:      Healthy (ready=2 unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered=2 longUnregistered=0 cloudProviderTarget=2 (minSize=0, maxSize=2))
  ScaleUp:     NoActivity (ready=2 cloudProviderTarget=2)
"""

# A cluster-api MachineDeployment whose nodes have 4 GPUs (the autoscaler's scale-from-zero annotations).
MACHINE_DEPLOYMENT = """\
- apiVersion: cluster.x-k8s.io/v1beta1
  kind: MachineDeployment
  metadata:
    name: gpu-md-0
    namespace: default
    annotations:
      cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
      cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "4"
      capacity.cluster-autoscaler.kubernetes.io/cpu: "48"
      capacity.cluster-autoscaler.kubernetes.io/memory: 384Gi
      capacity.cluster-autoscaler.kubernetes.io/gpu-type: nvidia.com/gpu
      capacity.cluster-autoscaler.kubernetes.io/gpu-count: "4"
  spec: {clusterName: demo, replicas: 1, template: {spec: {clusterName: demo}}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources: {limits: {nvidia.com/gpu: 8}}
"""


def status_map(status: str, namespace: str = "kube-system", name: str = "cluster-autoscaler-status") -> str:
    body = textwrap.indent(status, "      ")
    return f"""\
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: {name}
    namespace: {namespace}
    annotations: {{cluster-autoscaler.kubernetes.io/last-updated: "2026-11-30 09:12:41.125476354 +0000 UTC"}}
  data:
    status: |
{body}"""


def check(tmp_path, *items: str) -> tuple[int, list[dict]]:
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(items), encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    run = run_cli("check", str(tmp_path / "pod.yaml"), "--inventory", str(inventory), "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, [f for f in run.json()["findings"] if f["rule"] == "gpu-unschedulable"]


def yaml_status(group: str, target: int) -> str:
    return YAML_STATUS.replace("{group}", group).replace("{target}", str(target))


def test_a_node_group_no_pool_describes_that_may_grow_leaves_the_verdict_open(tmp_path):
    code, (finding,) = check(tmp_path, NODE, status_map(yaml_status("aks-gpupool-31415926-vmss", 1)))
    assert code == 0 and finding["severity"] == "info"
    assert finding["message"] == "no node fits this pod now, and whether a node pool can add one is unknown"
    assert (
        "Cluster Autoscaler may grow node groups whose nodes no pool read describes: aks-gpupool-31415926-vmss"
        in said(finding)
    )


@pytest.mark.parametrize(
    "items",
    [
        pytest.param((NODE,), id="no-status"),
        pytest.param((NODE, status_map(yaml_status("aks-gpupool-31415926-vmss", 4))), id="group-at-max-size"),
        pytest.param((NODE, status_map(yaml_status("aks-gpupool-31415926-vmss", 1), "monitoring")), id="other-ns"),
        pytest.param((NODE, status_map(yaml_status("aks-gpupool-31415926-vmss", 1), name="ca-status")), id="other"),
    ],
)
def test_without_a_node_group_that_may_grow_the_error_stands(tmp_path, items):
    code, (finding,) = check(tmp_path, *items)
    assert code == 1 and finding["severity"] == "error"
    assert finding["message"] == "this pod can never be scheduled on this cluster, even empty"


def test_a_node_group_a_pool_describes_is_judged_by_the_pool(tmp_path):
    """The legacy text names the MachineDeployment (4 GPUs a node, read from its annotations) and an EKS group at
    its max: nothing unknown may grow, so 8 GPUs are still never schedulable."""
    code, (finding,) = check(tmp_path, NODE, MACHINE_DEPLOYMENT, status_map(LEGACY_STATUS))
    assert code == 1 and finding["severity"] == "error"
    assert "none of its 1 node pool can add a node for it" in finding["message"]
    # without the MachineDeployment, the group it names may add nodes of any shape
    code, (finding,) = check(tmp_path, NODE, status_map(LEGACY_STATUS))
    assert code == 0 and finding["severity"] == "info"
    assert said(finding).endswith("no pool read describes: MachineDeployment/default/gpu-md-0")


def test_both_formats_are_read():
    legacy = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"status": LEGACY_STATUS}}
    legacy["metadata"] = {"name": "cluster-autoscaler-status", "namespace": "kube-system"}
    assert node_groups([legacy]) == [
        NodeGroupStatus("MachineDeployment/default/gpu-md-0", 0, 3, 1, 1),
        NodeGroupStatus("eks-gpu-a100-54c6b8f2-3d1e-4a6b-9f0e-7c2d1b3a4e5f", 0, 2, 2, 2),
    ]
    current = {**legacy, "data": {"status": yaml_status("gke-prod-gpu-pool-0c1d2e3f-grp", 2)}}
    assert node_groups([current]) == [NodeGroupStatus("gke-prod-gpu-pool-0c1d2e3f-grp", 0, 4, 2, 2)]
    assert node_groups([{**legacy, "data": {"status": "- not: [a status"}}]) == []  # unreadable: nothing


@pytest.mark.parametrize(
    ("system", "name", "group", "same"),
    [
        ("MachineDeployment", "gpu-md-0", "MachineDeployment/default/gpu-md-0", True),
        ("MachineSet", "gpu-md-0", "MachineDeployment/default/gpu-md-0", False),
        ("EKS node group", "gpu", "eks-gpu-54c6b8f2-3d1e-4a6b-9f0e-7c2d1b3a4e5f", True),
        ("EKS node group", "gpu", "eks-gpu-a100-54c6b8f2-3d1e-4a6b-9f0e-7c2d1b3a4e5f", False),  # another group
        ("AKS node pool", "gpupool", "aks-gpupool-31415926-vmss", True),
        ("AKS node pool", "gpu", "aks-gpupool-31415926-vmss", False),
        ("Auto Scaling group", "gpu-asg", "gpu-asg", True),
        ("GKE node pool", "gpu-pool", "gke-prod-gpu-pool-0c1d2e3f-grp", False),  # not exact: left unmatched
    ],
)
def test_a_pool_is_a_node_group_only_by_its_exact_id(system, name, group, same):
    assert describes(PoolSpec(system, name, "cluster.yaml"), group) is same


SELECTING_POD = POD.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 1").replace(
    "spec:\n", "spec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n", 1
)


@pytest.mark.parametrize(
    ("status", "severity"),
    [
        pytest.param(None, "error", id="no-status"),
        pytest.param(yaml_status("aks-gpupool-31415926-vmss", 4), "error", id="group-at-max-size"),
        pytest.param(yaml_status("aks-gpupool-31415926-vmss", 1), "warning", id="group-may-grow"),
    ],
)
def test_a_label_no_node_carries_is_proven_absent_only_without_a_group_that_may_grow(tmp_path, status, severity):
    """A node group no pool describes may add nodes with any labels (an H100 scale set labelled by GPU feature
    discovery once it boots): the selection that matches no node is then a warning, not an error."""
    items = (NODE, status_map(status)) if status else (NODE,)
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(items), encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(SELECTING_POD, encoding="utf-8")
    run = run_cli("check", str(tmp_path / "pod.yaml"), "--inventory", str(inventory), "--format", "json")
    found = [f for f in run.json()["findings"] if f["rule"] == "over-tight-affinity"]
    assert [f["severity"] for f in found] == [severity], run.stdout
    assert run.exit_code == (1 if severity == "error" else 0)


@pytest.mark.parametrize(
    ("group", "severity"), [("MachineDeployment/default/gpu-md-0", "error"), ("gpu-asg", "warning")]
)
def test_with_pools_a_label_none_of_them_adds_is_an_error_only_when_they_are_every_group(tmp_path, group, severity):
    """The MachineDeployment is the autoscaler's only group: its nodes lack the label, an error. A second group
    (an Auto Scaling group no pool read describes) may carry it: a warning."""
    status = yaml_status(group, 1)
    if group != "MachineDeployment/default/gpu-md-0":
        status = status.replace("nodeGroups:\n", "nodeGroups:\n- name: MachineDeployment/default/gpu-md-0\n", 1)
    inventory = tmp_path / "cluster.yaml"
    body = NODE + MACHINE_DEPLOYMENT + status_map(status)
    inventory.write_text("apiVersion: v1\nkind: List\nitems:\n" + body, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(SELECTING_POD, encoding="utf-8")
    run = run_cli("check", str(tmp_path / "pod.yaml"), "--inventory", str(inventory), "--format", "json")
    found = [f for f in run.json()["findings"] if f["rule"] == "over-tight-affinity"]
    assert [f["severity"] for f in found] == [severity], run.stdout
    assert "and no node that its 1 node pool can add" in found[0]["message"]


def gang(workers: int) -> str:
    """A Volcano Job of one-GPU workers that must all start at once (minAvailable)."""
    return f"""\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: mpi-train, namespace: ml}}
spec:
  minAvailable: {workers}
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: {workers}
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: worker
          image: registry.example.com/mpi:1.0
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    ("items", "severity"),
    [
        pytest.param((NODE,), "error", id="nodes-only"),
        pytest.param((NODE, status_map(yaml_status("aks-gpupool-31415926-vmss", 1))), "warning", id="group-may-grow"),
        pytest.param((NODE, MACHINE_DEPLOYMENT), "error", id="pool"),
        pytest.param(
            (NODE, MACHINE_DEPLOYMENT, status_map(yaml_status("aks-gpupool-31415926-vmss", 1))),
            "warning",
            id="pool-and-group-may-grow",
        ),
    ],
)
def test_a_gang_too_big_for_what_is_read_is_an_error_only_when_the_pools_are_every_group(tmp_path, items, severity):
    """4 GPUs on the node (and 4 a node on at most 4 MachineDeployment nodes): all the workers at once never fit what
    is read (24 workers, at most 20 GPUs); a scale set that may grow could add room, so then it is a warning naming it."""
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(items), encoding="utf-8")
    (tmp_path / "job.yaml").write_text(gang(24), encoding="utf-8")
    run = run_cli("check", str(tmp_path / "job.yaml"), "--inventory", str(inventory), "--format", "json")
    found = [f for f in run.json()["findings"] if f["rule"] == "gang-unsatisfiable"]
    assert [f["severity"] for f in found] == [severity], run.stdout
    if severity == "warning":
        notes = said(found[0]).splitlines()[1:]
        assert any(note.endswith("no pool read describes: aks-gpupool-31415926-vmss") for note in notes)


def md_status(scale_up: str, registered: int, target: int | None = None) -> str:
    """The MachineDeployment's group in the YAML status (1.30 on): maxSize 4, its registered nodes, and its scaleUp
    condition as the autoscaler writes it."""
    status = yaml_status("MachineDeployment/default/gpu-md-0", registered)
    if target is not None:
        status = status.replace(f"cloudProviderTarget: {registered}", f"cloudProviderTarget: {target}")
    if not registered:  # a zero count is left out (omitempty)
        status = status.replace("    nodeCounts:\n      registered: {total: 0, ready: 0}\n", "")
    return status.replace("  scaleUp: {status: NoActivity, backoffInfo: {}}\n", scale_up)


MD_BACKOFF = """\
  scaleUp:
    status: Backoff
    backoffInfo: {errorCode: ProvisioningFailed, errorMessage: Machine provisioning failed}
    lastProbeTime: "2026-11-30T09:12:41Z"
    lastTransitionTime: "2026-11-30T09:02:11Z"
"""
MD_NO_ACTIVITY = "  scaleUp: {status: NoActivity}\n"
LEGACY_BACKOFF = LEGACY_STATUS.replace(
    "  ScaleUp:     NoActivity (ready=1 cloudProviderTarget=1)",
    "  ScaleUp:     Backoff (ready=1 cloudProviderTarget=1)",
)


def md_node(index: int) -> str:
    """A node of the MachineDeployment, as cluster-api's machine controller annotates it."""
    return f"""\
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-md-0-7d9f8c6b5-x{index}q2z
    labels: {{kubernetes.io/hostname: gpu-md-0-7d9f8c6b5-x{index}q2z}}
    annotations:
      cluster.x-k8s.io/cluster-name: demo
      cluster.x-k8s.io/machine: gpu-md-0-7d9f8c6b5-x{index}q2z
      cluster.x-k8s.io/owner-kind: MachineSet
      cluster.x-k8s.io/owner-name: gpu-md-0-7d9f8c6b5
  status:
    capacity: {{cpu: "48", memory: 384Gi, pods: "110", nvidia.com/gpu: "4"}}
    allocatable: {{cpu: "47", memory: 380Gi, pods: "110", nvidia.com/gpu: "4"}}
"""


def status_of(status: str) -> list:
    data = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"status": status}}
    data["metadata"] = {"name": "cluster-autoscaler-status", "namespace": "kube-system"}
    return node_groups([data])


def test_backoff_and_registered_nodes_are_read_in_both_formats():
    (current,) = status_of(md_status(MD_BACKOFF, 0))
    assert (current.registered, current.backoff) == (0, "ProvisioningFailed: Machine provisioning failed")
    assert current.in_backoff and current.left() == 4
    assert current.skipped() == "in backoff after failed scale-up (ProvisioningFailed: Machine provisioning failed)"
    (quiet,) = status_of(md_status(MD_NO_ACTIVITY, 3))
    assert (quiet.registered, quiet.backoff, quiet.left(), quiet.skipped()) == (3, None, 1, "")
    legacy, eks = status_of(LEGACY_BACKOFF)
    assert (legacy.registered, legacy.backoff) == (1, "") and legacy.skipped() == "in backoff after failed scale-up"
    # the EKS group has all its nodes: its max size, not a backoff, is why the autoscaler skips it
    assert eks.backoff is None
    assert eks.skipped() == "max node group size reached (Cluster Autoscaler's status: maxSize=2, 2 nodes registered)"


def test_a_legacy_backoff_belongs_to_its_own_group_only():
    """The cluster-wide ScaleUp line, and a group whose Health line is unreadable, come before or after a group:
    their Backoff is not the readable group's."""
    cluster_wide = LEGACY_STATUS.replace("  ScaleUp:     NoActivity (ready=2 registered=2)", "  ScaleUp:     Backoff")
    unreadable = LEGACY_STATUS.replace(
        "\n  Name:        eks-gpu-a100",
        "\n  Name:        aks-gpupool-31415926-vmss\n  Health:      <unknown>\n"
        "  ScaleUp:     Backoff (ready=0 cloudProviderTarget=0)\n\n  Name:        eks-gpu-a100",
    )
    for text in (cluster_wide, unreadable):
        assert [group.backoff for group in status_of(text)] == [None, None]


def test_nodes_asked_for_but_not_registered_still_count_as_room():
    """cloudProviderTarget 4 of maxSize 4 with 2 nodes registered: the autoscaler adds no more, but 2 nodes are on
    their way; only all 4 registered leaves no room."""
    (coming,) = status_of(md_status(MD_NO_ACTIVITY, 2, target=4))
    assert coming.left() == 2 and coming.skipped() == ""
    (full,) = status_of(md_status(MD_NO_ACTIVITY, 4))
    assert full.left() == 0 and full.skipped().startswith("max node group size reached")


ONE_GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm-serve}
spec:
  replicas: 24
  selector: {matchLabels: {app: llm-serve}}
  template:
    metadata: {labels: {app: llm-serve}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def rule_findings(tmp_path, rule: str, manifest: str, *items: str) -> list[dict]:
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(items), encoding="utf-8")
    (tmp_path / "workload.yaml").write_text(manifest, encoding="utf-8")
    run = run_cli("check", str(tmp_path / "workload.yaml"), "--inventory", str(inventory), "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return [f for f in run.json()["findings"] if f["rule"] == rule]


THREE_MD_NODES = (md_node(0), md_node(1), md_node(2))


@pytest.mark.parametrize(
    ("status", "room"),
    [
        pytest.param("", None, id="no-status"),  # the annotation's max size, its nodes not identified: 4 more
        pytest.param(md_status(MD_NO_ACTIVITY, 3), "may add room for 4 more", id="one-node-left"),
        pytest.param(md_status(MD_NO_ACTIVITY, 4), "may add room for 0 more", id="at-max-size"),
    ],
)
def test_replicas_count_only_the_nodes_the_group_may_still_add(tmp_path, status, room):
    """24 one-GPU replicas; 16 GPUs on the nodes (gpu-0 and three of the MachineDeployment's). The annotation says
    max 4 nodes and does not say which nodes are the group's; the autoscaler's status does: 3 of 4 registered."""
    items = (NODE, *THREE_MD_NODES, MACHINE_DEPLOYMENT) + ((status_map(status),) if status else ())
    found = rule_findings(tmp_path, "gpu-unschedulable", ONE_GPU_DEPLOYMENT, *items)
    if room is None:
        assert found == []
        return
    (warning,) = found
    assert warning["severity"] == "warning"
    assert "only 16 fit on the empty cluster at once (on 4 nodes that pass every filter)" in warning["message"]
    assert f"its node pools {room}" in said(warning)
    if "0 more" in room:
        assert "max node group size reached (Cluster Autoscaler's status: maxSize=4, 4 nodes registered)" in said(
            warning
        )


def pool_verdict(tmp_path, status: str) -> list[dict]:
    """A 4-GPU pod on a cluster whose only GPU capacity is the MachineDeployment's (4 GPUs a node, max 4), scaled
    to zero: its failed scale-up was reverted (clusterstate.go: the target decreased after a timeout)."""
    pod = POD.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4")
    return rule_findings(
        tmp_path, "gpu-unschedulable", pod, MACHINE_DEPLOYMENT, *((status_map(status),) if status else ())
    )


@pytest.mark.parametrize(
    ("status", "why"),
    [
        pytest.param(
            md_status(MD_BACKOFF, 0),
            "in backoff after failed scale-up (ProvisioningFailed: Machine provisioning failed)",
            id="yaml",
        ),
        pytest.param(
            LEGACY_BACKOFF.replace(
                "registered=1 longUnregistered=0 cloudProviderTarget=1",
                "registered=0 longUnregistered=0 cloudProviderTarget=0",
            ),
            "in backoff after failed scale-up",
            id="legacy-text",
        ),
    ],
)
def test_a_group_in_backoff_adds_no_node_now(tmp_path, status, why):
    assert pool_verdict(tmp_path, md_status(MD_NO_ACTIVITY, 0)) == []  # not in backoff: it adds the node
    (finding,) = pool_verdict(tmp_path, status)
    assert finding["severity"] == "warning"
    assert (
        finding["message"]
        == "this pod fits a node that a pool can add, but Cluster Autoscaler will not grow the pool now"
    )
    assert f"MachineDeployment gpu-md-0: {why}" in said(finding)
    assert "until the backoff ends" in said(finding)


def test_explain_says_the_group_is_in_backoff(tmp_path):
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text(
        "apiVersion: v1\nkind: List\nitems:\n" + MACHINE_DEPLOYMENT + status_map(md_status(MD_BACKOFF, 0)),
        encoding="utf-8",
    )
    (tmp_path / "pod.yaml").write_text(POD.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4"), encoding="utf-8")
    run = run_cli("explain", str(tmp_path / "pod.yaml"), "--inventory", str(inventory))
    assert (
        "MachineDeployment gpu-md-0: cannot grow: in backoff after failed scale-up "
        "(ProvisioningFailed: Machine provisioning failed)" in run.stdout
    ), run.stdout


@pytest.mark.parametrize(
    ("workers", "status", "severity"),
    [
        pytest.param(20, md_status(MD_NO_ACTIVITY, 3), None, id="fits-the-last-node"),
        pytest.param(24, "", None, id="no-status"),  # the annotation alone: 4 more nodes of 4
        pytest.param(24, md_status(MD_NO_ACTIVITY, 3), "error", id="one-node-left"),
        pytest.param(20, md_status(MD_BACKOFF, 3), "warning", id="backoff"),
    ],
)
def test_a_gang_counts_the_nodes_the_autoscaler_may_still_add(tmp_path, workers, status, severity):
    """One-GPU workers that must all start at once: 16 GPUs on the nodes, and the MachineDeployment's group has 3
    of its 4 nodes registered. 24 never fit (an error: the autoscaler never grows it past maxSize); 20 fit with the
    last node, but not while the group is in backoff (a warning that says the backoff may end)."""
    items = (NODE, *THREE_MD_NODES, MACHINE_DEPLOYMENT) + ((status_map(status),) if status else ())
    found = rule_findings(tmp_path, "gang-unsatisfiable", gang(workers), *items)
    assert [f["severity"] for f in found] == ([severity] if severity else []), found
    if severity == "warning":
        assert (
            "MachineDeployment gpu-md-0: in backoff after failed scale-up (ProvisioningFailed: Machine provisioning "
            "failed); it may add nodes once the backoff ends" in said(found[0])
        )


def test_a_group_no_pool_describes_is_named_with_its_backoff(tmp_path):
    status = yaml_status("aks-gpupool-31415926-vmss", 1).replace(
        "  scaleUp: {status: NoActivity, backoffInfo: {}}\n",
        "  scaleUp:\n    status: Backoff\n    backoffInfo: {errorCode: OverconstrainedAllocationRequest, "
        "errorMessage: Allocation failed}\n",
    )
    code, (finding,) = check(tmp_path, NODE, status_map(status))
    assert code == 0 and finding["severity"] == "info"
    assert said(finding).endswith(
        "no pool read describes: aks-gpupool-31415926-vmss (in backoff after failed scale-up now)"
    )


def test_a_backoff_leaves_the_error_of_a_gang_the_pool_never_fits(tmp_path):
    """8-GPU workers: no node (4 GPUs) and no node of the MachineDeployment (4 GPUs) ever holds one, backoff or
    not: the error stands."""
    items = (NODE, *THREE_MD_NODES, MACHINE_DEPLOYMENT, status_map(md_status(MD_BACKOFF, 3)))
    eight = gang(2).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8")
    found = rule_findings(tmp_path, "gang-unsatisfiable", eight, *items)
    assert [f["severity"] for f in found] == ["error"], found
    assert "backoff" not in said(found[0])


def test_a_group_at_its_target_max_with_nodes_still_to_register_leaves_the_verdict_open(tmp_path):
    """cloudProviderTarget 4 of maxSize 4, but 2 nodes registered: the autoscaler asks for no more, yet 2 nodes of a
    shape no pool read describes are on their way, and the pod may fit them."""
    status = yaml_status("aks-gpupool-31415926-vmss", 4).replace(
        "registered: {total: 4, ready: 4}", "registered: {total: 2, ready: 2}"
    )
    code, (finding,) = check(tmp_path, NODE, status_map(status))
    assert code == 0 and finding["severity"] == "info"
    assert said(finding).endswith("no pool read describes: aks-gpupool-31415926-vmss")
