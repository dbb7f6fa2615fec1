"""Flux's ``clusters/<name>`` layout: each folder bootstraps a cluster, and the folders its Flux Kustomizations name
in ``spec.path`` deploy to it, so their node pools judge their workloads and no other cluster's (inputs/
terraform_clusters, issue #28 §2), shaped as joryirving/home-ops writes ``kubernetes/clusters/{main,test,utility}``
over ``kubernetes/apps/<cluster>``. The whole-repository run and a file checked alone (pre-commit) agree."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

POOL = """
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: default
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
          requirements:
          - key: karpenter.k8s.aws/instance-family
            operator: In
            values: [%s]
    """
POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: vllm
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        resources:
          limits:
            nvidia.com/gpu: 1
    """
APPS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: cluster-apps
      namespace: flux-system
    spec:
      interval: 1h
      path: ./kubernetes/apps/%s
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
    """
TWO_CLUSTERS = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "kubernetes/clusters/main/apps.yaml": APPS % "main",
    "kubernetes/clusters/lab/apps.yaml": APPS % "lab",
    "kubernetes/apps/main/karpenter/pool.yaml": POOL % "m7i, c7i",  # main: CPU only
    "kubernetes/apps/lab/karpenter/pool.yaml": POOL % "g6e",  # lab: GPUs, a pool of the same name
}
MAIN_POD = "kubernetes/apps/main/vllm/pod.yaml"
LAB_POD = "kubernetes/apps/lab/vllm/pod.yaml"


def unknown(named: str) -> list[tuple[str, str]]:
    return [(path, severity) for path, _, rule, severity, _ in check_serious(named) if rule == "gpu-resource-unknown"]


@pytest.mark.parametrize("named", [".", MAIN_POD])  # as CI and as pre-commit run it
def test_a_clusters_workload_is_judged_by_its_own_clusters_pools(repo, named):
    # failing before: lab's GPU pool was main's too, so main's GPU pod looked schedulable
    write_tree(repo, {**TWO_CLUSTERS, MAIN_POD: POD})
    assert unknown(named) == [(MAIN_POD, "warning")]


@pytest.mark.parametrize("named", [".", LAB_POD])
def test_a_workload_its_clusters_pools_serve_is_clean(repo, named):
    write_tree(repo, {**TWO_CLUSTERS, LAB_POD: POD})
    assert unknown(named) == []


def test_one_clusters_folder_is_the_repositorys_one_cluster(repo):
    # the trap: a single bootstrap folder says nothing about which pools serve which folder
    files = {k: v for k, v in TWO_CLUSTERS.items() if not k.startswith("kubernetes/clusters/lab/")}
    write_tree(repo, {**files, MAIN_POD: POD})
    assert unknown(".") == []


def test_a_folder_both_clusters_build_is_in_neither(repo):
    # the trap: a shared folder deploys to both clusters; neither cluster's pools alone judge it
    shared = APPS.replace("name: cluster-apps", "name: shared") % "shared"
    files = {
        **TWO_CLUSTERS,
        "kubernetes/clusters/main/shared.yaml": shared,
        "kubernetes/clusters/lab/shared.yaml": shared,
        "kubernetes/apps/shared/vllm/pod.yaml": POD,
    }
    write_tree(repo, files)
    assert unknown(".") == unknown("kubernetes/apps/shared/vllm/pod.yaml")
    assert ("kubernetes/apps/shared/vllm/pod.yaml", "error") not in unknown(".")
