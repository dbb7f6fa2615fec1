"""A file that holds a Cluster API ``Cluster`` with its MachineDeployments is one cluster: its pools are its own
workloads', never the next file's (issue #28 §2). Shaped as kubernetes-sigs/cluster-api-provider-azure keeps one
cluster per flavor under ``templates/`` and ``templates/test/ci/`` (``cluster-template-prow.yaml``,
``cluster-template-prow-nvidia-gpu.yaml``, each ``${CLUSTER_NAME}-md-0`` in ``default``), here as
``clusterctl generate cluster`` writes them out. Decided from the files' shape, not their folder's name: one such
file alone is still the repository's cluster."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

TEMPLATE = """
    apiVersion: cluster.x-k8s.io/v1beta1
    kind: Cluster
    metadata:
      name: capz
      namespace: default
    spec:
      clusterNetwork:
        pods:
          cidrBlocks: [192.168.0.0/16]
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: AzureCluster
        name: capz
    ---
    apiVersion: cluster.x-k8s.io/v1beta1
    kind: MachineDeployment
    metadata:
      name: capz-md-0
      namespace: default
      annotations:
        cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "3"
        cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
        capacity.cluster-autoscaler.kubernetes.io/memory: "112G"
        capacity.cluster-autoscaler.kubernetes.io/cpu: "6"
        capacity.cluster-autoscaler.kubernetes.io/maxPods: "110"
        {gpu}
    spec:
      clusterName: capz
      replicas: 0
      selector:
        matchLabels: null
      template:
        spec:
          clusterName: capz
          version: v1.33.1
          bootstrap:
            configRef:
              apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
              kind: KubeadmConfigTemplate
              name: capz-md-0
          infrastructureRef:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: AzureMachineTemplate
            name: capz-md-0
    """
GPU = """capacity.cluster-autoscaler.kubernetes.io/gpu-type: "nvidia.com/gpu"
        capacity.cluster-autoscaler.kubernetes.io/gpu-count: "1\""""
POD = """
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: cuda-vector-add
      namespace: default
    spec:
      restartPolicy: OnFailure
      containers:
      - name: cuda-vector-add
        image: registry.k8s.io/cuda-vector-add:v0.1
        resources:
          limits:
            nvidia.com/gpu: 1
    """
CPU_TEMPLATE = TEMPLATE.replace("        {gpu}\n", "")
GPU_TEMPLATE = TEMPLATE.replace("{gpu}", GPU)
GIT = {".git/HEAD": "ref: refs/heads/main\n"}
DEFAULT = "templates/test/ci/cluster-template-prow.yaml"
NVIDIA = "templates/test/ci/cluster-template-prow-nvidia-gpu.yaml"


def unknown(named: str) -> list[tuple[str, str]]:
    return [(path, rule) for path, _, rule, _, _ in check_serious(named) if rule.startswith("gpu-")]


@pytest.mark.parametrize("named", [".", DEFAULT])  # as CI and as pre-commit run it
def test_a_gpu_pod_in_a_cpu_clusters_template_is_judged_by_its_own_pools(repo, named):
    # failing before: the nvidia-gpu flavor's capz-md-0 was the same cluster's, so the CPU flavor looked able to run it
    write_tree(repo, {**GIT, DEFAULT: CPU_TEMPLATE + POD, NVIDIA: GPU_TEMPLATE})
    assert unknown(named) == [(DEFAULT, "gpu-resource-unknown")]


@pytest.mark.parametrize("named", [".", NVIDIA])
def test_a_gpu_pod_in_the_gpu_clusters_template_is_clean(repo, named):
    write_tree(repo, {**GIT, DEFAULT: CPU_TEMPLATE, NVIDIA: GPU_TEMPLATE + POD})
    assert unknown(named) == []


def test_one_cluster_file_is_the_repositorys_cluster(repo):
    # the trap: one file with a Cluster says nothing of other files; a workload beside it is judged by its pools
    write_tree(repo, {**GIT, "cluster/cluster.yaml": CPU_TEMPLATE, "deploy/pod.yaml": POD.replace("---", "")})
    assert unknown(".") == [("deploy/pod.yaml", "gpu-resource-unknown")]


def test_pools_without_a_cluster_in_their_file_stay_one_cluster(repo):
    # the trap: MachineDeployments split from their Cluster (a kustomize flavor's machine-deployment.yaml) are not
    # a cluster per file
    pools = CPU_TEMPLATE[CPU_TEMPLATE.index("apiVersion: cluster.x-k8s.io/v1beta1\n    kind: MachineDeployment") :]
    files = {**GIT, "clusters/a/md.yaml": "\n    " + pools, "clusters/b/md.yaml": "\n    " + pools}
    write_tree(repo, {**files, "deploy/pod.yaml": POD.replace("---", "")})
    assert unknown(".") == [("deploy/pod.yaml", "gpu-resource-unknown")]
