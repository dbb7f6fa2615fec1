"""Cluster API node groups matched to their live nodes as Cluster Autoscaler's clusterapi provider matches them
(kubernetes/autoscaler cluster-autoscaler-1.36.1 cloudprovider/clusterapi/clusterapi_controller.go
findScalableResourceByProviderID): node providerID -> MachinePool providerIDList, or Machine -> its MachineSet
-> its MachineDeployment. A group with a live node takes its template from that node, not from its
scale-from-zero annotations (processors/nodeinfosprovider/mixed_nodeinfos_processor.go)."""

from __future__ import annotations

import shutil

import pytest
from conftest import DATA, run_cli

from gpulint.kube.pools.capi import CapiIndex, normalized_provider_id

CAPI = DATA / "elastic" / "capi"
PROVIDER_ID = "aws:///us-east-1a/i-0c2f4e6a8b0d1f3a5"

# `kubectl get machinesets,machines -A -o yaml`, trimmed: the MachineSet gpu-md-0 made and its one Machine.
MACHINES = """\
apiVersion: v1
kind: List
items:
- apiVersion: cluster.x-k8s.io/v1beta1
  kind: MachineSet
  metadata:
    name: gpu-md-0-7c9f8d6b5
    namespace: default
    labels: {cluster.x-k8s.io/cluster-name: demo, cluster.x-k8s.io/deployment-name: gpu-md-0}
    ownerReferences:
    - {apiVersion: cluster.x-k8s.io/v1beta1, kind: MachineDeployment, name: gpu-md-0, uid: 5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f, controller: true}
  spec:
    clusterName: demo
    replicas: 1
    selector: {matchLabels: {cluster.x-k8s.io/cluster-name: demo, cluster.x-k8s.io/deployment-name: gpu-md-0}}
- apiVersion: cluster.x-k8s.io/v1beta1
  kind: Machine
  metadata:
    name: gpu-md-0-7c9f8d6b5-q8m4x
    namespace: default
    labels: {cluster.x-k8s.io/cluster-name: demo, cluster.x-k8s.io/deployment-name: gpu-md-0, cluster.x-k8s.io/set-name: gpu-md-0-7c9f8d6b5}
    ownerReferences:
    - {apiVersion: cluster.x-k8s.io/v1beta1, kind: MachineSet, name: gpu-md-0-7c9f8d6b5, uid: 8e1d2c3b-4a5f-4e6d-8c7b-9a0b1c2d3e4f, controller: true}
  spec:
    clusterName: demo
    providerID: <PROVIDER_ID>
  status:
    nodeRef: {apiVersion: v1, kind: Node, name: ip-10-0-44-17.ec2.internal}
    phase: Running
"""

# The Machine's node. Its kubelet was not given the label the MachineDeployment's annotation promises
# (KubeadmConfigTemplate without kubeletExtraArgs node-labels): the autoscaler copies what the node carries.
NODE = """\
---
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-44-17.ec2.internal
  annotations:
    cluster.x-k8s.io/cluster-name: demo
    cluster.x-k8s.io/cluster-namespace: default
    cluster.x-k8s.io/machine: gpu-md-0-7c9f8d6b5-q8m4x
    cluster.x-k8s.io/owner-kind: MachineSet
    cluster.x-k8s.io/owner-name: gpu-md-0-7c9f8d6b5
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: ip-10-0-44-17.ec2.internal
    topology.kubernetes.io/zone: us-east-1a<LABELS>
spec:
  providerID: aws:///us-east-1a/i-0c2f4e6a8b0d1f3a5
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
status:
  capacity: {cpu: "16", memory: 128G, ephemeral-storage: 100Gi, pods: "200", nvidia.com/gpu: "2"}
  allocatable: {cpu: 15890m, memory: 125G, ephemeral-storage: 95Gi, pods: "200", nvidia.com/gpu: "2"}
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {node.example.com/accelerator: a100}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {nvidia.com/gpu: 2}
"""

LABELLED = "\n    node.example.com/accelerator: a100"


def _findings(tmp_path, machines: str | None = MACHINES, labels: str = "") -> list[dict]:
    inventory = tmp_path / "inventory"
    inventory.mkdir(exist_ok=True)
    shutil.copy(CAPI / "machinedeployments.yaml", inventory / "machinedeployments.yaml")
    (inventory / "nodes.yaml").write_text((CAPI / "nodes.yaml").read_text() + NODE.replace("<LABELS>", labels))
    if machines is not None:
        (inventory / "machines.yaml").write_text(machines.replace("<PROVIDER_ID>", PROVIDER_ID))
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    report = run_cli("check", str(job), "--inventory", str(inventory), "--format", "json").json()
    return [f for f in report["findings"] if f["rule"] in ("gpu-unschedulable", "over-tight-affinity")]


def test_the_node_the_autoscaler_copies_lacks_the_label_the_annotation_promises(tmp_path):
    (finding,) = _findings(tmp_path)
    assert finding["rule"] == "over-tight-affinity" and finding["severity"] == "error"
    assert (
        "MachineDeployment gpu-md-0: nodeSelector node.example.com/accelerator=a100: its nodes do not carry "
        "node.example.com/accelerator" in finding["notes"][0]
    )


def test_a_node_carrying_the_label_lets_the_group_scale_up(tmp_path):
    assert _findings(tmp_path, labels=LABELLED) == []


def test_without_the_machines_the_annotations_stand(tmp_path):
    """The node cannot be tied to the group: its scale-from-zero annotations are the template, as before."""
    assert _findings(tmp_path, machines=None) == []


def test_machine_sets_and_machines_read_from_separate_files_still_link(tmp_path):
    """`kubectl get machinesets -A -o yaml > cluster-api.yaml`, then the Machines on their own: the MachineSets read
    first are kept for the Machines read after them (the node is tied to gpu-md-0 and its missing label shows)."""
    head, _, machine = MACHINES.partition("- apiVersion: cluster.x-k8s.io/v1beta1\n  kind: Machine\n")
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory" / "cluster-api.yaml").write_text(head)
    machines = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: cluster.x-k8s.io/v1beta1\n  kind: Machine\n" + machine
    (finding,) = _findings(tmp_path, machines=machines)
    assert finding["rule"] == "over-tight-affinity"


def test_a_machine_whose_machine_set_is_not_held_ties_the_node_to_no_group(tmp_path):
    only_machine = MACHINES.replace("  kind: MachineSet\n", "  kind: MachineSetTemplate\n")
    assert _findings(tmp_path, machines=only_machine) == []


def test_a_machine_without_a_provider_id_is_found_by_the_node_annotation(tmp_path):
    """OpenStack's actuator leaves spec.providerID unset: findMachineByProviderID reads the node's annotations."""
    without = MACHINES.replace("    providerID: <PROVIDER_ID>\n", "")
    (finding,) = _findings(tmp_path, machines=without)
    assert finding["rule"] == "over-tight-affinity"


def test_a_machine_pool_lists_its_nodes_by_provider_id(tmp_path):
    pool = (CAPI / "machinedeployments.yaml").read_text().replace("kind: MachineDeployment", "kind: MachinePool")
    pool += f"""\
  providerIDList: ["{PROVIDER_ID}"]
"""
    inventory = tmp_path / "inventory"
    inventory.mkdir(exist_ok=True)
    (inventory / "machinepool.yaml").write_text(pool.replace("  replicas: 0\n", "  replicas: 1\n"))
    (inventory / "nodes.yaml").write_text((CAPI / "nodes.yaml").read_text() + NODE.replace("<LABELS>", ""))
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    report = run_cli("check", str(job), "--inventory", str(inventory), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "over-tight-affinity"]
    assert "MachinePool gpu-md-0" in finding["notes"][0]


@pytest.mark.parametrize(
    ("provider_id", "normalized"),
    [
        ("aws:///us-east-1a/i-0c2f4e6a8b0d1f3a5", "i-0c2f4e6a8b0d1f3a5"),
        ("gce://ml-project/us-central1-a/gke-node-1", "gke-node-1"),
        (
            "azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/0",
            "azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/0",
        ),
    ],
)
def test_provider_ids_are_normalized_as_the_autoscaler_does(provider_id, normalized):
    assert normalized_provider_id(provider_id) == normalized


def test_a_machine_set_of_its_own_is_the_group():
    index = CapiIndex()
    index.add(
        {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "metadata": {"name": "ms", "namespace": "ns"}}
    )
    index.add(
        {
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "Machine",
            "metadata": {"name": "m", "namespace": "ns", "ownerReferences": [{"kind": "MachineSet", "name": "ms"}]},
            "spec": {"providerID": "aws:///z/i-1"},
        }
    )
    assert index.group_of({"spec": {"providerID": "aws:///z/i-1"}}) == ("MachineSet", "ns", "ms")
    assert index.group_of({"spec": {"providerID": "aws:///z/i-2"}}) is None
