"""A folder whose own Terraform (or eksctl) creates a cluster is that cluster: its node pools judge its workloads
and no other folder's (inputs/terraform_clusters, lint.run), shaped as aws-ia/terraform-aws-eks-blueprints'
`patterns/<name>/` and a monorepo's `clusters/dev` and `clusters/prod` write them (issue #28 §2)."""

from __future__ import annotations

import pytest
from conftest import run_cli, said
from support.cluster_layout import gpu_pod, node_pool
from support.trees import write_tree

from gpulint.lint.inputs.terraform_clusters import roots_of_tree


def found(result, rule: str = "gpu-resource-unknown") -> list[tuple[str, str]]:
    return [(f["path"], f["severity"]) for f in result.json()["findings"] if f["rule"] == rule]


EKS_MODULE = """
    module "eks" {
      source  = "terraform-aws-modules/eks/aws"
      version = "~> 20.31"

      cluster_name    = local.name
      cluster_version = "1.31"
    %s
    }
    """
MANAGED_GPU_GROUP = """
      eks_managed_node_groups = {
        nvidia-efa = {
          ami_type       = "AL2023_x86_64_NVIDIA"
          instance_types = ["g6e.12xlarge"]
          min_size       = 2
        }
      }
"""
GPU_POD = gpu_pod(8, efa=True)


@pytest.mark.parametrize("named", [".", "patterns/multi-node-vllm/pod.yaml"])  # as CI and as pre-commit run it
def test_pools_of_another_pattern_do_not_judge_a_pattern_with_its_own_cluster(cluster_repo, named):
    cluster_repo.write(
        {
            "patterns/multi-node-vllm/eks.tf": EKS_MODULE % MANAGED_GPU_GROUP,
            "patterns/multi-node-vllm/pod.yaml": GPU_POD,
            "patterns/karpenter/eks.tf": EKS_MODULE % "",
            "patterns/karpenter/karpenter.yaml": node_pool(),
        },
    )
    result = run_cli("check", named, "--format", "json")
    assert found(result) == [], result.stdout


@pytest.mark.parametrize("named", [".", "patterns/multi-node-vllm/pod.yaml"])
def test_without_terraform_the_repositorys_pools_are_still_assumed_the_cluster(cluster_repo, named):
    cluster_repo.write(
        {"patterns/multi-node-vllm/pod.yaml": GPU_POD, "patterns/karpenter/karpenter.yaml": node_pool()},
    )
    result = run_cli("check", named, "--format", "json")
    assert found(result) == [("patterns/multi-node-vllm/pod.yaml", "warning")] * 2, result.stdout


def test_a_patterns_own_pools_judge_its_workloads(cluster_repo):
    """The trap: the pattern's Terraform creates no node group, so its Karpenter pools are its cluster's pools."""
    cluster_repo.write(
        {
            "patterns/karpenter/eks.tf": EKS_MODULE % "",
            "patterns/karpenter/karpenter.yaml": node_pool(),
            "patterns/karpenter/pod.yaml": GPU_POD,
        },
    )
    result = run_cli("check", ".", "--format", "json")
    assert found(result) == [("patterns/karpenter/pod.yaml", "warning")] * 2, result.stdout


def test_pools_not_all_in_the_linted_files_leave_the_resource_unknown(cluster_repo):
    cluster_repo.write(
        {
            "patterns/karpenter-mng/eks.tf": EKS_MODULE % MANAGED_GPU_GROUP,
            "patterns/karpenter-mng/karpenter.yaml": node_pool(),
            "patterns/karpenter-mng/pod.yaml": GPU_POD,
        },
    )
    result = run_cli("check", ".", "--format", "json")
    assert found(result) == [("patterns/karpenter-mng/pod.yaml", "info")] * 2, result.stdout
    message = said(next(f for f in result.json()["findings"] if f["rule"] == "gpu-resource-unknown"))
    assert "patterns/karpenter-mng/eks.tf:1 (eks_managed_node_groups) creates node groups" in message


# A monorepo of two clusters on two clouds whose pools share a name.
MONOREPO = {
    "clusters/prod/main.tf": """
        resource "aws_eks_cluster" "prod" {
          name     = "prod"
          role_arn = aws_iam_role.cluster.arn
          vpc_config { subnet_ids = var.subnets }
        }
        """,
    "clusters/prod/pools.yaml": node_pool(name="gpu"),
    "clusters/dev/cluster.yaml": """
        apiVersion: eksctl.io/v1alpha5
        kind: ClusterConfig
        metadata: {name: dev, region: us-west-2}
        """,
    "clusters/dev/pools.yaml": node_pool("g6e", "gpu"),
}


@pytest.mark.parametrize(("cluster", "expected"), [("dev", []), ("prod", ["warning"])])
def test_a_monorepos_clusters_each_judge_their_own_workloads(cluster_repo, cluster, expected):
    cluster_repo.write({**MONOREPO, f"clusters/{cluster}/apps/pod.yaml": gpu_pod(8)})
    result = run_cli("check", ".", "--format", "json")
    assert [severity for _, severity in found(result)] == expected, result.stdout


def test_a_workload_in_no_cluster_folder_is_judged_by_no_clusters_pools(cluster_repo):
    cluster_repo.write({**MONOREPO, "examples/pod.yaml": GPU_POD})
    result = run_cli("check", ".", "--format", "json")
    assert found(result) == [], result.stdout


def test_the_roots_and_the_node_groups_they_create(tmp_path):
    write_tree(
        tmp_path,
        {
            "a/main.tf": EKS_MODULE % MANAGED_GPU_GROUP,
            "b/main.tf": 'resource "google_container_cluster" "gke" {\n  name = "b"\n}\n',
            "c/main.tf": 'module "gke" {\n  source = "terraform-google-modules/kubernetes-engine/google"\n}\n',
            "d/main.tf": 'resource "azurerm_kubernetes_cluster" "aks" {\n  default_node_pool {\n    name = "x"\n  }\n}\n',
            "e/main.tf": 'module "vpc" {\n  source = "terraform-aws-modules/vpc/aws"\n}\n',  # no cluster
            "f/broken.tf": 'resource "aws_eks_cluster" "x" {\n',  # not HCL: no cluster read
        },
    )
    roots = {r.folder.rsplit("/", 1)[1]: r.pools_elsewhere for r in roots_of_tree(str(tmp_path))}
    assert roots == {
        "a": "a/main.tf:1 (eks_managed_node_groups)",
        "b": "b/main.tf:1 (google_container_cluster)",  # a GKE cluster has a default pool
        "c": "",
        "d": "d/main.tf:1 (default_node_pool)",
    }


# A GitOps monorepo: two clusters' folders, a platform's shared pools, and workloads in and out of a cluster folder.
AFFINITY_POD = GPU_POD.replace(
    "    spec:\n", "    spec:\n      nodeSelector: {karpenter.k8s.aws/instance-family: p5}\n", 1
)
GITOPS = {
    **MONOREPO,
    "platform/pool.yaml": node_pool("g6", "example"),
    "apps/train/pod.yaml": AFFINITY_POD,
    "clusters/prod/apps/pod.yaml": AFFINITY_POD,
}


def affinity(findings: list[dict]) -> list[tuple]:
    return [(f["path"], f["line"], f["severity"], said(f)) for f in findings if f["rule"] == "over-tight-affinity"]


@pytest.mark.parametrize(
    ("workload", "pools"), [("apps/train/pod.yaml", "platform/pool.yaml"), ("clusters/prod/apps/pod.yaml", "")]
)
def test_a_file_checked_alone_is_judged_by_the_pools_of_the_whole_runs_cluster(cluster_repo, workload, pools):
    """As pre-commit runs it (the file alone, the repository index read for the rest) and as CI runs it (the whole
    repository): the same verdict against the same pools, never another cluster folder's."""
    cluster_repo.write(GITOPS)
    whole = [f for f in run_cli("check", ".", "--format", "json").json()["findings"] if f["path"] == workload]
    alone = run_cli("check", workload, "--format", "json").json()["findings"]
    strip = [
        (path, line, severity, text.replace("repository's files", "linted files"))
        for path, line, severity, text in affinity(alone)
    ]
    assert strip == affinity(whole) and len(strip) == 1, (whole, alone)
    text = affinity(alone)[0][3]
    assert "clusters/dev/" not in text
    if pools:  # judged by an assumed cluster: the note names the files the pools came from, not linted here
        assert "NodePool gpu" not in text
        assert f"the node pools of the repository's files ({pools})" in text
        assert f"the node pools of the linted files ({pools})" in affinity(whole)[0][3]
    else:  # the cluster folder's own pools, of its own Terraform's cluster
        assert "NodePool gpu" in text and "NodePool example" not in text


def test_the_note_counts_the_pool_files_it_does_not_show(cluster_repo):
    cluster_repo.write(
        {
            **{f"karpenter/{n}/pool.yaml": node_pool("g6", n) for n in "abcde"},
            "apps/pod.yaml": AFFINITY_POD,
        },
    )
    (text,) = [f[3] for f in affinity(run_cli("check", "apps/pod.yaml", "--format", "json").json()["findings"])]
    assert "(karpenter/a/pool.yaml, karpenter/b/pool.yaml, karpenter/c/pool.yaml and 2 more)" in text
