"""Labels as their owners read them (issue #28 section 5): Karpenter reads a requirement on a deprecated
label as one on the stable label (kubernetes-sigs/karpenter pkg/apis/v1/labels.go NormalizedLabels, and
the cloud providers' CSI zone labels); every node carries both forms with one value."""

from __future__ import annotations

from conftest import DATA, check_json, inventory_args, said

from gpulint.kube.pools.labels import karpenter_key, node_key
from gpulint.kube.scheduler import NodeInfo

ELASTIC = DATA / "elastic"
KARPENTER = str(ELASTIC / "karpenter")
EKS = str(ELASTIC / "eks")
TOLERATE_GPU = "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"


def gpu_job(selector: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
{TOLERATE_GPU}      nodeSelector: {{{selector}}}
      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def serious(write, manifest: str, *inventory: str) -> list[dict]:
    found = check_json(str(write("job.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(*inventory))
    return [f for f in found if f["severity"] in ("error", "warning")]


def test_karpenter_reads_deprecated_labels_as_the_stable_ones(write):
    """A selector written with beta.kubernetes.io/instance-type was 'does not have known values' on a NodePool."""
    for selector in (
        "beta.kubernetes.io/instance-type: g5.12xlarge",
        "failure-domain.beta.kubernetes.io/zone: us-west-2a",
        "failure-domain.beta.kubernetes.io/region: us-west-2",
        "beta.kubernetes.io/os: linux",
        "topology.ebs.csi.aws.com/zone: us-west-2a",  # karpenter-provider-aws adds the EBS CSI zone label
    ):
        assert serious(write, gpu_job(selector), KARPENTER) == [], selector


def test_a_normalized_label_must_still_match_the_pool(write):
    (error,) = serious(write, gpu_job("beta.kubernetes.io/instance-type: p4d.24xlarge"), KARPENTER)
    assert error["severity"] == "error"
    assert "Karpenter NodePool gpu" in said(error)
    # Azure's CSI zone label is no alias on an AWS NodePool
    (error,) = serious(write, gpu_job("topology.disk.csi.azure.com/zone: us-west-2a"), KARPENTER)
    assert 'label "topology.disk.csi.azure.com/zone" does not have known values' in said(error)


def test_a_managed_node_group_s_nodes_carry_both_labels(write):
    assert serious(write, gpu_job("beta.kubernetes.io/instance-type: g5.12xlarge"), EKS) == []
    (error,) = serious(write, gpu_job("beta.kubernetes.io/instance-type: p4d.24xlarge"), EKS)
    assert "EKS node group gpu-a10g" in said(error)


GPU_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: g5.12xlarge
    topology.kubernetes.io/zone: us-west-2a
spec:
  taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
status:
  capacity: {cpu: "48", memory: 192Gi, pods: "110", nvidia.com/gpu: "4"}
  allocatable: {cpu: "47", memory: 180Gi, pods: "110", nvidia.com/gpu: "4"}
"""


def test_an_inventory_node_answers_the_deprecated_twin_of_its_labels(write):
    nodes = str(write("inventory/nodes.yaml", GPU_NODE))
    assert serious(write, gpu_job("beta.kubernetes.io/instance-type: g5.12xlarge"), nodes) == []
    assert serious(write, gpu_job("beta.kubernetes.io/arch: amd64"), nodes) == []
    (error,) = serious(write, gpu_job("beta.kubernetes.io/arch: arm64"), nodes)
    assert error["severity"] == "error"


def test_the_tables():
    assert karpenter_key("beta.kubernetes.io/instance-type", "") == "node.kubernetes.io/instance-type"
    assert karpenter_key("topology.ebs.csi.aws.com/zone", "aws") == "topology.kubernetes.io/zone"
    assert karpenter_key("topology.ebs.csi.aws.com/zone", "azure") == "topology.ebs.csi.aws.com/zone"
    assert karpenter_key("topology.disk.csi.azure.com/zone", "azure") == "topology.kubernetes.io/zone"
    assert node_key("topology.ebs.csi.aws.com/zone") == "topology.ebs.csi.aws.com/zone"  # the CSI driver's
    node = NodeInfo.from_object({"metadata": {"name": "n", "labels": {"kubernetes.io/arch": "arm64"}}})
    assert node.labels == {"kubernetes.io/arch": "arm64", "beta.kubernetes.io/arch": "arm64"}
    both = NodeInfo.from_object(
        {"metadata": {"name": "n", "labels": {"kubernetes.io/os": "linux", "beta.kubernetes.io/os": "windows"}}}
    )
    assert both.labels["beta.kubernetes.io/os"] == "windows"  # a node's own label is never overwritten
