"""A folder whose own Terraform (or eksctl) creates a cluster is that cluster: its node pools judge its workloads
and no other folder's (inputs/terraform_clusters, lint.run), shaped as aws-ia/terraform-aws-eks-blueprints'
`patterns/<name>/` and a monorepo's `clusters/dev` and `clusters/prod` write them (issue #28 §2)."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_cli, said

from gpulint.lint.inputs.terraform_clusters import roots_of_tree


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # a work tree: the walk's boundary
    return tmp_path


def write_tree(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


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
CPU_POOL = """
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: %s
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
          requirements:
          - key: karpenter.k8s.aws/instance-family
            operator: In
            values: [m7i, c7i]
    """
GPU_POD = """
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
            nvidia.com/gpu: 8
            vpc.amazonaws.com/efa: 1
    """


@pytest.mark.parametrize("named", [".", "patterns/multi-node-vllm/pod.yaml"])  # as CI and as pre-commit run it
def test_pools_of_another_pattern_do_not_judge_a_pattern_with_its_own_cluster(repo, named):
    write_tree(
        repo,
        {
            "patterns/multi-node-vllm/eks.tf": EKS_MODULE % MANAGED_GPU_GROUP,
            "patterns/multi-node-vllm/pod.yaml": GPU_POD,
            "patterns/karpenter/eks.tf": EKS_MODULE % "",
            "patterns/karpenter/karpenter.yaml": CPU_POOL % "default",
        },
    )
    result = run_cli("check", named, "--format", "json")
    assert found(result) == [], result.stdout


@pytest.mark.parametrize("named", [".", "patterns/multi-node-vllm/pod.yaml"])
def test_without_terraform_the_repositorys_pools_are_still_assumed_the_cluster(repo, named):
    write_tree(
        repo,
        {"patterns/multi-node-vllm/pod.yaml": GPU_POD, "patterns/karpenter/karpenter.yaml": CPU_POOL % "default"},
    )
    result = run_cli("check", named, "--format", "json")
    assert found(result) == [("patterns/multi-node-vllm/pod.yaml", "warning")] * 2, result.stdout


def test_a_patterns_own_pools_judge_its_workloads(repo):
    """The trap: the pattern's Terraform creates no node group, so its Karpenter pools are its cluster's pools."""
    write_tree(
        repo,
        {
            "patterns/karpenter/eks.tf": EKS_MODULE % "",
            "patterns/karpenter/karpenter.yaml": CPU_POOL % "default",
            "patterns/karpenter/pod.yaml": GPU_POD,
        },
    )
    result = run_cli("check", ".", "--format", "json")
    assert found(result) == [("patterns/karpenter/pod.yaml", "warning")] * 2, result.stdout


def test_pools_not_all_in_the_linted_files_leave_the_resource_unknown(repo):
    write_tree(
        repo,
        {
            "patterns/karpenter-mng/eks.tf": EKS_MODULE % MANAGED_GPU_GROUP,
            "patterns/karpenter-mng/karpenter.yaml": CPU_POOL % "default",
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
    "clusters/prod/pools.yaml": CPU_POOL % "gpu",
    "clusters/dev/cluster.yaml": """
        apiVersion: eksctl.io/v1alpha5
        kind: ClusterConfig
        metadata: {name: dev, region: us-west-2}
        """,
    "clusters/dev/pools.yaml": (CPU_POOL % "gpu").replace("[m7i, c7i]", "[g6e]"),
}


@pytest.mark.parametrize(("cluster", "expected"), [("dev", []), ("prod", ["warning"])])
def test_a_monorepos_clusters_each_judge_their_own_workloads(repo, cluster, expected):
    write_tree(repo, {**MONOREPO, f"clusters/{cluster}/apps/pod.yaml": GPU_POD.replace("vpc.amazonaws.com/efa: 1", "")})
    result = run_cli("check", ".", "--format", "json")
    assert [severity for _, severity in found(result)] == expected, result.stdout


def test_a_workload_in_no_cluster_folder_is_judged_by_no_clusters_pools(repo):
    write_tree(repo, {**MONOREPO, "examples/pod.yaml": GPU_POD})
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
    "platform/pool.yaml": (CPU_POOL % "example").replace("[m7i, c7i]", "[g6]"),
    "apps/train/pod.yaml": AFFINITY_POD,
    "clusters/prod/apps/pod.yaml": AFFINITY_POD,
}


def affinity(findings: list[dict]) -> list[tuple]:
    return [(f["path"], f["line"], f["severity"], said(f)) for f in findings if f["rule"] == "over-tight-affinity"]


@pytest.mark.parametrize(
    ("workload", "pools"), [("apps/train/pod.yaml", "platform/pool.yaml"), ("clusters/prod/apps/pod.yaml", "")]
)
def test_a_file_checked_alone_is_judged_by_the_pools_of_the_whole_runs_cluster(repo, workload, pools):
    """As pre-commit runs it (the file alone, the repository index read for the rest) and as CI runs it (the whole
    repository): the same verdict against the same pools, never another cluster folder's."""
    write_tree(repo, GITOPS)
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


def test_the_note_counts_the_pool_files_it_does_not_show(repo):
    write_tree(
        repo,
        {
            **{f"karpenter/{n}/pool.yaml": (CPU_POOL % n).replace("[m7i, c7i]", "[g6]") for n in "abcde"},
            "apps/pod.yaml": AFFINITY_POD,
        },
    )
    (text,) = [f[3] for f in affinity(run_cli("check", "apps/pod.yaml", "--format", "json").json()["findings"])]
    assert "(karpenter/a/pool.yaml, karpenter/b/pool.yaml, karpenter/c/pool.yaml and 2 more)" in text
