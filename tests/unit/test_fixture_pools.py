"""A repository's test, fixture and example folders are not its cluster (issue #28 §2): node pools under ``tests/``,
``test/e2e``, ``examples/`` or ``hack/`` serve the workloads of that folder only, and a workload there is not judged
by the pools the repository deploys (inputs/terraform_clusters FIXTURE_FOLDERS). Shaped as kueue keeps its
ClusterQueues under ``site/static/examples``, KAI-Scheduler a NodePool under ``test/e2e/scale`` and gpulint itself
Karpenter NodePools under ``tests/``. The whole-repository run and a file checked alone (pre-commit) agree."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.cluster_layout import gpu_pod, node_pool

DEPLOYED = "deploy/vllm/pod.yaml"
POD = gpu_pod()
CPU_POOL = node_pool()
GPU_POOL = node_pool("g6e")


@pytest.mark.parametrize("named", [".", DEPLOYED])  # as CI and as pre-commit run it
def test_a_test_folders_pools_are_not_the_cluster(cluster_repo, named):
    # failing before: the CPU-only pool of a test fixture was "the cluster", so the deployed GPU pod had no GPU node
    cluster_repo.write({"tests/fixtures/karpenter/pool.yaml": CPU_POOL, DEPLOYED: POD})
    assert cluster_repo.unknown(named) == []


@pytest.mark.parametrize("named", [".", DEPLOYED])
def test_the_deployed_pools_judge_without_the_examples(cluster_repo, named):
    # failing before: an example's GPU pool of the same name made the repository's CPU-only cluster look able to serve it
    files = {"deploy/karpenter/pool.yaml": CPU_POOL, "examples/gpu/pool.yaml": GPU_POOL, DEPLOYED: POD}
    cluster_repo.write(files)
    assert cluster_repo.unknown(named) == [(DEPLOYED, "warning")]
    (said,) = [said for _, _, rule, _, said in check_serious(named) if rule == "gpu-resource-unknown"]
    assert "(deploy/karpenter/pool.yaml), not those of examples/ (a test or example folder's" in said


@pytest.mark.parametrize("named", [".", "examples/gpu/pod.yaml"])
def test_an_example_is_not_judged_by_the_deployed_pools(cluster_repo, named):
    # the reverse: the repository's own pools say nothing of where its examples run
    cluster_repo.write({"deploy/karpenter/pool.yaml": CPU_POOL, "examples/gpu/pod.yaml": POD})
    assert cluster_repo.unknown(named) == []


@pytest.mark.parametrize("named", [".", "test/e2e/workloads/pod.yaml"])
def test_a_fixture_folders_own_workloads_see_its_pools(cluster_repo, named):
    # the trap: the folder's pools still judge its workloads, across its subfolders (pools/ beside workloads/)
    files = {"test/e2e/pools/pool.yaml": CPU_POOL, "test/e2e/workloads/pod.yaml": POD}
    cluster_repo.write(files)
    assert cluster_repo.unknown(named) == [("test/e2e/workloads/pod.yaml", "warning")]


def test_a_folder_named_like_a_fixture_is_not_one(cluster_repo):
    # the trap: only a folder named test, tests, testdata, e2e, fixtures, example(s) or hack is one
    files = {"latest/karpenter/pool.yaml": CPU_POOL, "contests/pod.yaml": POD}
    cluster_repo.write(files)
    assert cluster_repo.unknown(".") == [("contests/pod.yaml", "warning")]
