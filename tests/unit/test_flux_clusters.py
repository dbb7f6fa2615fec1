"""Flux's ``clusters/<name>`` layout: each folder bootstraps a cluster, and the folders its Flux Kustomizations name
in ``spec.path`` deploy to it, so their node pools judge their workloads and no other cluster's (inputs/
terraform_clusters, issue #28 §2), shaped as joryirving/home-ops writes ``kubernetes/clusters/{main,test,utility}``
over ``kubernetes/apps/<cluster>``. The whole-repository run and a file checked alone (pre-commit) agree."""

from __future__ import annotations

import pytest
from support.cluster_layout import gpu_pod, node_pool

POD = gpu_pod()
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
    "kubernetes/clusters/main/apps.yaml": APPS % "main",
    "kubernetes/clusters/lab/apps.yaml": APPS % "lab",
    "kubernetes/apps/main/karpenter/pool.yaml": node_pool("m7i, c7i"),  # main: CPU only
    "kubernetes/apps/lab/karpenter/pool.yaml": node_pool("g6e"),  # lab: GPUs, a pool of the same name
}
MAIN_POD = "kubernetes/apps/main/vllm/pod.yaml"
LAB_POD = "kubernetes/apps/lab/vllm/pod.yaml"


@pytest.mark.parametrize("named", [".", MAIN_POD])  # as CI and as pre-commit run it
def test_a_clusters_workload_is_judged_by_its_own_clusters_pools(cluster_repo, named):
    # failing before: lab's GPU pool was main's too, so main's GPU pod looked schedulable
    cluster_repo.write({**TWO_CLUSTERS, MAIN_POD: POD})
    assert cluster_repo.unknown(named) == [(MAIN_POD, "warning")]


@pytest.mark.parametrize("named", [".", LAB_POD])
def test_a_workload_its_clusters_pools_serve_is_clean(cluster_repo, named):
    cluster_repo.write({**TWO_CLUSTERS, LAB_POD: POD})
    assert cluster_repo.unknown(named) == []


def test_one_clusters_folder_is_the_repositorys_one_cluster(cluster_repo):
    # the trap: a single bootstrap folder says nothing about which pools serve which folder
    files = {k: v for k, v in TWO_CLUSTERS.items() if not k.startswith("kubernetes/clusters/lab/")}
    cluster_repo.write({**files, MAIN_POD: POD})
    assert cluster_repo.unknown(".") == []


def test_a_folder_both_clusters_build_is_in_neither(cluster_repo):
    # the trap: a shared folder deploys to both clusters; neither cluster's pools alone judge it
    shared = APPS.replace("name: cluster-apps", "name: shared") % "shared"
    files = {
        **TWO_CLUSTERS,
        "kubernetes/clusters/main/shared.yaml": shared,
        "kubernetes/clusters/lab/shared.yaml": shared,
        "kubernetes/apps/shared/vllm/pod.yaml": POD,
    }
    cluster_repo.write(files)
    assert cluster_repo.unknown(".") == cluster_repo.unknown("kubernetes/apps/shared/vllm/pod.yaml")
    assert ("kubernetes/apps/shared/vllm/pod.yaml", "error") not in cluster_repo.unknown(".")
