"""rdma-memlock-missing and host-network-dns: GPU pods on RDMA fabrics and on the host network."""

from __future__ import annotations

from conftest import run_cli
from rule_harness import assert_findings

NCCL_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: nccl
  annotations: {k8s.v1.cni.cncf.io/networks: "ib-net-0,ib-net-1"}
spec:
  containers:
  - name: nccl
    image: nvcr.io/nvidia/pytorch:24.05-py3
    SECURITY
    resources:
      limits: {nvidia.com/gpu: 1, RDMA}
"""


def test_rdma_resource_without_ipc_lock():
    assert_findings(
        "rdma-memlock-missing",
        NCCL_POD.replace("    SECURITY\n", "").replace("RDMA", "rdma/hca_shared_devices_a: 1"),
        [(8, 11, "asks for the RDMA device rdma/hca_shared_devices_a but cannot lock memory")],
    )


def test_multus_network_alone_counts_and_ipc_lock_or_privileged_is_clean():
    bare = NCCL_POD.replace(", RDMA", "")
    assert_findings(
        "rdma-memlock-missing",
        bare.replace("    SECURITY\n", ""),
        [(8, 11, "joins the secondary networks 'ib-net-0,ib-net-1'")],
    )
    assert_findings(
        "rdma-memlock-missing", bare.replace("SECURITY", "securityContext: {capabilities: {add: [IPC_LOCK]}}"), []
    )
    assert_findings("rdma-memlock-missing", bare.replace("SECURITY", "securityContext: {privileged: true}"), [])


def test_null_annotations_on_a_template_are_no_networks():
    """`annotations:` left empty (null) in a Job's pod template, as a Helm values hole renders it: the RDMA
    device alone decides, with no internal error (found by the pipeline fuzzer)."""
    job = """
    apiVersion: batch/v1
    kind: Job
    metadata: {name: nccl-test}
    spec:
      template:
        metadata:
          annotations:
        spec:
          restartPolicy: Never
          containers:
          - name: nccl
            image: nvcr.io/nvidia/pytorch:24.05-py3
            resources:
              limits: {nvidia.com/gpu: 8, LIMIT}
    """
    assert_findings("rdma-memlock-missing", job.replace(", LIMIT", ""), [])
    assert_findings(
        "rdma-memlock-missing",
        job.replace("LIMIT", "rdma/hca_shared_devices_a: 1"),
        [(11, 15, "asks for the RDMA device rdma/hca_shared_devices_a but cannot lock memory")],
    )


EFA_JOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llama-pretrain, namespace: training}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
        METADATA
        spec:
          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
          containers:
          - name: pytorch
            image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/llama-train:efa-1.2
            env:
            - {name: FI_PROVIDER, value: efa}
            - {name: FI_EFA_USE_DEVICE_RDMA, value: "1"}
            resources:
              limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32, hugepages-2Mi: 5120Mi, memory: 1000Gi}
"""


def test_efa_on_eks_needs_no_ipc_lock():
    """The EKS-optimized AMIs and Bottlerocket run containers with an unlimited memlock: an EFA pod without
    IPC_LOCK registers its memory (awslabs/amazon-eks-ami #595, bottlerocket-core-kit #141)."""
    assert_findings("rdma-memlock-missing", EFA_JOB.replace("        METADATA\n", ""), [])


def test_efa_with_another_rdma_device_or_a_multus_network_still_counts():
    other = EFA_JOB.replace("        METADATA\n", "").replace("efa: 32,", "efa: 32, rdma/hca_shared_devices_a: 1,")
    assert_findings(
        "rdma-memlock-missing",
        other,
        [(12, 19, "asks for the RDMA device rdma/hca_shared_devices_a but cannot lock memory")],
    )
    multus = EFA_JOB.replace("METADATA", "metadata: {annotations: {k8s.v1.cni.cncf.io/networks: sriov-ib0}}")
    assert_findings("rdma-memlock-missing", multus, [(13, 19, "joins the secondary networks 'sriov-ib0'")])


def test_cpu_pod_with_an_sriov_nic_is_not_a_gpu_pod():
    assert_findings(
        "rdma-memlock-missing",
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: dpdk}
        spec:
          containers:
          - name: app
            image: dpdk:latest
            resources: {limits: {intel.com/sriov_netdevice: 1}}
        """,
        [],
    )


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            hostNetwork: true
            DNS
            containers:
            - name: train
              image: registry.example.com/pretrain:1
              resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_host_network_gpu_job_without_cluster_first_with_host_net():
    assert_findings(
        "host-network-dns",
        JOBSET.replace("            DNS\n", ""),
        [
            (
                14,
                13,
                "its JobSet's peers (the master or leader Service, the headless Service of the ranks) do not resolve",
            )
        ],
    )
    assert_findings(
        "host-network-dns", JOBSET.replace("DNS", "dnsPolicy: ClusterFirst"), [(15, 24, "dnsPolicy ClusterFirst:")]
    )
    assert_findings("host-network-dns", JOBSET.replace("DNS", "dnsPolicy: ClusterFirstWithHostNet"), [])


def test_host_network_daemonset_and_cpu_pods_are_clean():
    assert_findings(
        "host-network-dns",
        """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: exporter}
        spec:
          selector: {matchLabels: {app: e}}
          template:
            metadata: {labels: {app: e}}
            spec:
              hostNetwork: true
              containers:
              - {name: e, image: e, resources: {limits: {nvidia.com/gpu: 1}}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: cpu}
        spec:
          hostNetwork: true
          containers: [{name: c, image: busybox}]
        """,
        [],
    )


def test_host_network_dns_fix(write):
    path = write("jobset.yaml", JOBSET.replace("            DNS\n", ""))
    result = run_cli("check", "--select", "host-network-dns", "--fix", str(path))
    assert "applied 1 fix" in result.stderr
    assert path.read_text().endswith('\n            dnsPolicy: "ClusterFirstWithHostNet"\n')  # the pod spec's last key
    assert run_cli("check", "--select", "host-network-dns", str(path)).exit_code == 0
