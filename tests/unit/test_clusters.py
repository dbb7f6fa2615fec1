"""A repository is not one cluster, and absence is evidence only from a complete catalog (issue #28, 1-2).

Shaped like real GitOps repositories: a monorepo with clusters/dev on AWS (a Karpenter NodePool) and
clusters/prod on GCP (a cluster-api MachineDeployment) whose pools share a name, a platform repository
with example pools, and an example scaled to replicas: 0.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli, said

from gpulint.lint.config import ClusterScope, Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun, scoped_resolvers
from gpulint.lint.world.cross_file import CROSS_FILE_KINDS
from gpulint.lint.world.inventory import INVENTORY_KINDS
from gpulint.lint.world.kinds import BY_KEY, DECLARABLE, KINDS, Complete
from gpulint.lint.world.live_inventory import INVENTORY_APIS, InventoryApi

DEV_POOL = """\
# Karpenter on EKS: g5 instances, at most 4 GPUs a node
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g5"]
        - key: karpenter.k8s.aws/instance-size
          operator: In
          values: ["xlarge", "2xlarge", "12xlarge"]
      taints:
        - key: nvidia.com/gpu
          value: "true"
          effect: NoSchedule
  limits:
    nvidia.com/gpu: 16
"""
PROD_POOL = """\
# cluster-api on GCP, scaled from zero by the Cluster Autoscaler: 8 GPUs a node
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: gpu
  namespace: prod
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "4"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
    capacity.cluster-autoscaler.kubernetes.io/memory: "680G"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "96"
    capacity.cluster-autoscaler.kubernetes.io/gpu-type: "nvidia.com/gpu"
    capacity.cluster-autoscaler.kubernetes.io/gpu-count: "8"
    capacity.cluster-autoscaler.kubernetes.io/taints: "nvidia.com/gpu=present:NoSchedule"
spec:
  clusterName: prod
  replicas: 0
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: prod
      version: v1.33.1
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: gpu}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: GCPMachineTemplate, name: gpu}
"""
EXAMPLE_POOL = """\
# An example for the platform's users: copy it into your cluster's folder and adapt it.
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["g4dn.xlarge"]
      taints:
        - key: nvidia.com/gpu
          effect: NoSchedule
"""
# An example in a platform repository, scaled to replicas: 0: one GPU a node
EXAMPLE_ZERO = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: gpu-example
  namespace: default
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "2"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
    capacity.cluster-autoscaler.kubernetes.io/memory: "64G"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "16"
    capacity.cluster-autoscaler.kubernetes.io/gpu-type: "nvidia.com/gpu"
    capacity.cluster-autoscaler.kubernetes.io/gpu-count: "1"
spec:
  clusterName: example
  replicas: 0
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: example
      version: v1.33.1
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: gpu}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: AWSMachineTemplate, name: gpu}
"""


def job(gpus: int, name: str = "train") -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def monorepo(root: Path, dev_gpus: int = 2, prod_gpus: int = 8) -> Path:
    return tree(
        root,
        {
            "clusters/dev/karpenter/nodepools.yaml": DEV_POOL,
            "clusters/dev/apps/train.yaml": job(dev_gpus),
            "clusters/prod/capi/machinedeployments.yaml": PROD_POOL,
            "clusters/prod/apps/train.yaml": job(prod_gpus),
        },
    )


MAPPING = """\
clusters:
  dev:
    paths: ["clusters/dev/*"]
    inventory: [clusters/dev/karpenter]
  prod:
    paths: ["clusters/prod/*"]
    inventory: [clusters/prod/capi]
"""


def check(root: Path, *args: str, monkeypatch) -> list[dict]:
    monkeypatch.chdir(root)
    result = run_cli("check", ".", "--format", "json", "--ignore", "dev-shm-missing", *args)
    assert result.exit_code in (0, 1), result.stderr
    return [f for f in result.json()["findings"] if f["rule"] != "schema-invalid"]


# --------------------------------------------------------------------------- the kind table


def test_the_kind_table_has_a_row_for_every_kind_the_inventory_reads():
    assert set(INVENTORY_KINDS) <= {row.kind for row in KINDS}


def test_every_watched_kinds_paths_come_from_its_row():
    """The live inventory lists and watches each kind at its row's group, plural, scope and versions (newest
    first): a version added to the row (v1alpha3 Workloads, 21f3ee6) is discovered with nothing else to touch."""
    for api in INVENTORY_APIS:
        row = BY_KEY[api.group, api.kind]
        assert row.plural, api
        assert row.namespaced or not api.namespace, api  # one namespace of a namespaced kind alone
        scope = f"/namespaces/{api.namespace}" if api.namespace else ""
        root = f"/apis/{row.group}" if row.group else "/api"
        assert [api.collection_path(v) for v in api.versions] == [
            f"{root}/{v}{scope}/{row.plural}" for v in row.versions
        ]
    apis = {(api.group, api.kind): api for api in INVENTORY_APIS}
    rules = apis["resource.k8s.io", "DeviceTaintRule"]
    assert [rules.collection_path(v) for v in rules.versions] == [
        "/apis/resource.k8s.io/v1/devicetaintrules",
        "/apis/resource.k8s.io/v1beta2/devicetaintrules",
        "/apis/resource.k8s.io/v1alpha3/devicetaintrules",
    ]
    assert apis["", "ConfigMap"].collection_path("v1") == "/api/v1/namespaces/kube-system/configmaps"
    widened = InventoryApi(replace(BY_KEY["scheduling.k8s.io", "PodGroup"], versions=("v1", "v1beta1")))
    assert widened.collection_path(widened.versions[0]) == "/apis/scheduling.k8s.io/v1/podgroups"


def test_the_cross_file_table_is_the_kind_tables_column():
    assert {row.key for row in KINDS if row.crosses_files} == CROSS_FILE_KINDS
    assert ("kueue.x-k8s.io", "LocalQueue") in CROSS_FILE_KINDS and ("", "Pod") not in CROSS_FILE_KINDS


def test_only_kinds_whose_set_can_be_complete_can_be_declared():
    assert {"LocalQueue", "ClusterQueue", "TrainingRuntime", "KubeSchedulerConfiguration"} <= DECLARABLE
    assert "Node" not in DECLARABLE and "NodePool" not in DECLARABLE  # an autoscaled pool's nodes are in no list
    assert BY_KEY[("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration")].complete is Complete.DECLARED


# --------------------------------------------------------------------------- the configuration


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("complete: [LocalQeue]\n", "1:11", "'complete' names 'LocalQeue', which is not a kind whose set"),
        ("complete: [LocalQeue]\n", "1:11", "did you mean 'LocalQueue'?"),
        ("complete:\n  NodePool: ['**']\n", "2:13", "'complete' names 'NodePool'"),
        ("complete:\n  LocalQueue: []\n", "2:15", "'complete.LocalQueue' must list at least one path glob"),
        ("complete: 3\n", "1:11", "'complete' must be a list of kinds"),
        ("clusters: [dev]\n", "1:11", "'clusters' must map cluster names to {paths:"),
        ("clusters:\n  dev: {inventory: [inv]}\n", "2:8", "'clusters.dev' needs 'paths'"),
        ("clusters:\n  dev: {paths: [a], pools: [b]}\n", "2:8", "unknown key 'clusters.dev.pools'"),
    ],
)
def test_a_bad_complete_or_clusters_key_is_a_usage_error_at_its_place(tmp_path, monkeypatch, text, where, message):
    (tmp_path / ".gpulint.yaml").write_text(text)
    (tmp_path / "job.yaml").write_text(job(1))
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "job.yaml")
    assert result.exit_code == 2
    assert f".gpulint.yaml:{where}: " in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_clusters_inventory_that_cannot_be_read_is_a_usage_error(tmp_path, monkeypatch):
    monorepo(tmp_path)
    (tmp_path / ".gpulint.yaml").write_text(MAPPING.replace("clusters/prod/capi", "inventory/missing"))
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", ".")
    assert result.exit_code == 2 and "inventory/missing" in result.stderr and "Traceback" not in result.stderr


# --------------------------------------------------------------------------- a repository is not one cluster


def test_a_monorepo_without_a_mapping_judges_against_its_pools_as_an_assumption_at_most_a_warning(
    tmp_path, monkeypatch
):
    # prod asks for 16 GPUs: no pool of either cluster has a node that big
    found = check(monorepo(tmp_path, prod_gpus=16), monkeypatch=monkeypatch)
    (finding,) = found
    assert (finding["rule"], finding["severity"], finding["path"]) == (
        "gpu-unschedulable",
        "warning",
        "clusters/prod/apps/train.yaml",
    )
    notes = said(finding)
    assert "assumed: no --inventory names the cluster this workload deploys to" in notes
    assert "clusters/dev/karpenter/nodepools.yaml, clusters/prod/capi/machinedeployments.yaml" in notes


def test_a_monorepo_with_a_mapping_judges_each_workload_against_its_own_cluster(tmp_path, monkeypatch):
    # 8 GPUs: prod's MachineDeployment has 8 a node, dev's Karpenter pool at most 4 (g5.12xlarge)
    root = monorepo(tmp_path, dev_gpus=8, prod_gpus=8)
    assert check(root, monkeypatch=monkeypatch) == []  # without the mapping, prod's pool serves dev's job too
    (root / ".gpulint.yaml").write_text(MAPPING)
    (finding,) = check(root, monkeypatch=monkeypatch)
    assert (finding["rule"], finding["severity"], finding["path"]) == (
        "gpu-unschedulable",
        "error",
        "clusters/dev/apps/train.yaml",
    )
    assert "Karpenter NodePool gpu: every instance type it allows has at most 4 nvidia.com/gpu" in said(finding)
    assert "MachineDeployment" not in said(finding) and "assumed" not in said(finding)
    # the boundary: 4 GPUs fit dev's largest node
    (root / "clusters/dev/apps/train.yaml").write_text(job(4))
    assert check(root, monkeypatch=monkeypatch) == []


def test_explain_judges_each_workload_against_its_clusters_inventory_as_check_does(tmp_path, monkeypatch):
    root = monorepo(tmp_path, dev_gpus=8, prod_gpus=8)
    (root / ".gpulint.yaml").write_text(MAPPING)
    monkeypatch.chdir(root)
    dev = run_cli("explain", "clusters/dev/apps/train.yaml")
    assert dev.exit_code == 1
    assert "4. Node pools: FAIL" in dev.stdout and "error[gpu-unschedulable]" in dev.stdout
    prod = run_cli("explain", "clusters/prod/apps/train.yaml")
    assert prod.exit_code == 0
    assert "MachineDeployment gpu adds a node" in prod.stdout and "Karpenter" not in prod.stdout


def test_pools_of_one_name_in_two_folders_are_kept_apart_never_merged(tmp_path, monkeypatch):
    """A platform repository: the dev cluster's pool and an example for users share the name gpu. Before,
    the file read last replaced the other (the example's g4dn.xlarge stood for the cluster's g5 pool)."""
    root = tree(
        tmp_path,
        {
            "clusters/dev/karpenter/nodepools.yaml": DEV_POOL,
            "examples/karpenter/nodepool.yaml": EXAMPLE_POOL,
            "clusters/dev/apps/train.yaml": job(16),
        },
    )
    (finding,) = check(root, monkeypatch=monkeypatch)
    assert finding["severity"] == "warning"
    notes = said(finding)
    assert "Karpenter NodePool gpu (clusters/dev/karpenter/nodepools.yaml): every instance type it allows" in notes
    assert "Karpenter NodePool gpu (examples/karpenter/nodepool.yaml): its instance type g4dn.xlarge" in notes
    # 4 GPUs: the dev pool's g5.12xlarge holds them, whatever the example allows
    (root / "clusters/dev/apps/train.yaml").write_text(job(4))
    assert check(root, monkeypatch=monkeypatch) == []


def test_a_mapped_cluster_does_not_take_the_example_pools_of_a_shared_folder(tmp_path, monkeypatch):
    root = tree(
        tmp_path,
        {
            "clusters/dev/karpenter/nodepools.yaml": DEV_POOL,
            "examples/karpenter/nodepool.yaml": EXAMPLE_POOL,
            "clusters/dev/apps/train.yaml": job(8),
            ".gpulint.yaml": 'clusters:\n  dev: {paths: ["clusters/dev/*"]}\n',  # its own files describe it
        },
    )
    (finding,) = check(root, monkeypatch=monkeypatch)
    assert finding["severity"] == "error" and "examples/" not in said(finding) and "g4dn" not in said(finding)


def test_an_example_scaled_to_zero_is_no_cluster_a_workload_errs_against(tmp_path, monkeypatch):
    # before: "can never be scheduled on this cluster" as an error, the example's 1-GPU nodes standing for the
    # cluster the job deploys to
    root = tree(tmp_path, {"examples/capi/machinedeployment.yaml": EXAMPLE_ZERO, "apps/train.yaml": job(2)})
    (finding,) = check(root, monkeypatch=monkeypatch)
    assert (finding["rule"], finding["severity"]) == ("gpu-unschedulable", "warning")
    assert "MachineDeployment gpu-example: its nodes have 1 nvidia.com/gpu; the pod asks for 2" in said(finding)
    assert "node pools of the linted files (examples/capi/machinedeployment.yaml)" in said(finding)
    (root / "apps/train.yaml").write_text(job(1))
    assert check(root, monkeypatch=monkeypatch) == []


def test_an_inventory_given_judges_for_certain(tmp_path, monkeypatch):
    root = monorepo(tmp_path, prod_gpus=16)
    found = check(root, "--inventory", str(root / "clusters/prod/capi"), monkeypatch=monkeypatch)
    (finding,) = [f for f in found if f["path"] == "clusters/prod/apps/train.yaml"]
    assert finding["severity"] == "error" and "assumed" not in said(finding)


QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: 4}
"""


def test_a_quota_of_another_clusters_folder_is_at_most_a_warning_without_a_mapping(tmp_path, monkeypatch):
    root = tree(
        tmp_path,
        {
            "clusters/dev/quotas/ml.yaml": QUOTA,
            "clusters/prod/apps/train.yaml": job(8),
        },
    )
    (finding,) = check(root, "--select", "resource-quota-exceeded", monkeypatch=monkeypatch)
    assert finding["severity"] == "warning"
    assert "judged against the ResourceQuotas of the linted files" in said(finding)
    # mapped: dev's quota is dev's; the prod job meets none
    (root / ".gpulint.yaml").write_text(
        'clusters:\n  dev: {paths: ["clusters/dev/*"]}\n  prod: {paths: ["clusters/prod/*"]}\n'
    )
    assert check(root, "--select", "resource-quota-exceeded", monkeypatch=monkeypatch) == []
    # the job in dev's own folder: dev's quota refuses it, for certain
    (root / "clusters/dev/apps").mkdir(parents=True)
    (root / "clusters/dev/apps/train.yaml").write_text(job(8))
    (finding,) = check(root, "--select", "resource-quota-exceeded", monkeypatch=monkeypatch)
    assert (finding["path"], finding["severity"]) == ("clusters/dev/apps/train.yaml", "error")


# --------------------------------------------------------------------------- absence and complete catalogs

LOCAL_QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %s, namespace: %s}
spec: {clusterQueue: cluster-queue}
"""


def queued(queue: str, namespace: str = "team-a") -> str:
    return job(1).replace(
        "metadata: {name: train, namespace: ml}",
        f"""metadata:
  name: train
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: {queue}}}""",
    )


def queue_findings(root: Path, monkeypatch) -> list[dict]:
    return check(root, "--select", "queue-reference-invalid", monkeypatch=monkeypatch)


def test_a_queue_made_elsewhere_is_not_reported_while_an_example_folder_has_queues(tmp_path, monkeypatch):
    """The team's LocalQueue comes from the platform's Terraform; the repository's examples folder holds the
    Kueue docs' sample queue in the same namespace: before, that made the missing name a warning."""
    root = tree(
        tmp_path,
        {
            "examples/kueue/local-queue.yaml": LOCAL_QUEUE % ("user-queue", "team-a"),
            "apps/train.yaml": queued("gpu-reserved"),
        },
    )
    assert queue_findings(root, monkeypatch) == []


def test_a_typo_of_a_queue_the_files_define_is_info_until_the_queues_are_declared_complete(tmp_path, monkeypatch):
    root = tree(
        tmp_path,
        {"queues/team-a.yaml": LOCAL_QUEUE % ("user-queue", "team-a"), "jobs/train.yaml": queued("user-queu")},
    )
    (finding,) = queue_findings(root, monkeypatch)
    assert finding["severity"] == "info" and "did you mean 'user-queue'?" in finding["message"]
    (root / ".gpulint.yaml").write_text("complete: [LocalQueue]\n")
    (finding,) = queue_findings(root, monkeypatch)
    assert finding["severity"] == "error"
    assert finding["message"].startswith("LocalQueue user-queu doesn't exist in namespace team-a")
    # configured severities never raise the info: it is no verdict
    (root / ".gpulint.yaml").write_text("severity: {queue-reference-invalid: error}\n")
    (finding,) = queue_findings(root, monkeypatch)
    assert finding["severity"] == "info"


def test_a_queue_of_the_same_name_in_another_namespace_is_no_match(tmp_path, monkeypatch):
    root = tree(
        tmp_path,
        {
            "queues/team-b.yaml": LOCAL_QUEUE % ("user-queue", "team-b"),
            "jobs/train.yaml": queued("user-queue", namespace="team-a"),
            ".gpulint.yaml": "complete: [LocalQueue]\n",
        },
    )
    (finding,) = queue_findings(root, monkeypatch)
    assert finding["severity"] == "error"
    assert finding["message"].startswith("LocalQueue user-queue doesn't exist in namespace team-a")
    # the same name in the job's namespace: found
    (root / "queues/team-a.yaml").write_text(LOCAL_QUEUE % ("user-queue", "team-a"))
    assert queue_findings(root, monkeypatch) == []


def test_completeness_is_declared_per_scope(tmp_path, monkeypatch):
    """prod's queues are all in the repository; dev's come from a chart: only prod's jobs are judged."""
    root = tree(
        tmp_path,
        {
            "clusters/prod/queues.yaml": LOCAL_QUEUE % ("user-queue", "team-a"),
            "clusters/prod/jobs/train.yaml": queued("research"),
            "clusters/dev/jobs/train.yaml": queued("research"),
            ".gpulint.yaml": "complete:\n  LocalQueue: ['clusters/prod/*']\n",
        },
    )
    (finding,) = queue_findings(root, monkeypatch)
    assert (finding["path"], finding["severity"]) == ("clusters/prod/jobs/train.yaml", "error")


def test_the_inventory_listing_the_kind_is_a_complete_catalog(tmp_path, monkeypatch):
    root = tree(
        tmp_path,
        {
            "inventory/queues.yaml": LOCAL_QUEUE % ("user-queue", "team-a"),
            "repo/jobs/train.yaml": queued("research"),
        },
    )
    monkeypatch.chdir(root / "repo")
    result = run_cli("check", ".", "--format", "json", "--inventory", str(root / "inventory"))
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "queue-reference-invalid"]
    assert finding["severity"] == "error" and "LocalQueue research doesn't exist in namespace team-a" in said(finding)


def test_forked_workers_judge_each_file_against_its_cluster_as_one_process_does(tmp_path, monkeypatch):
    root = monorepo(tmp_path, dev_gpus=8, prod_gpus=8)
    (root / ".gpulint.yaml").write_text(MAPPING)
    for index in range(50):  # enough files for the run to fork its workers
        (root / f"clusters/prod/apps/copy-{index}.yaml").write_text(job(16 if index == 7 else 8, f"train-{index}"))
    split = check(root, "--jobs", "2", monkeypatch=monkeypatch)
    assert split == check(root, "--jobs", "1", monkeypatch=monkeypatch)
    assert sorted((f["path"], f["severity"]) for f in split) == [
        ("clusters/dev/apps/train.yaml", "error"),
        ("clusters/prod/apps/copy-7.yaml", "error"),
    ]


# --------------------------------------------------------------------------- node classes and compute classes

# Shaped as karpenter-provider-azure's examples (examples/v1beta1) and GoogleCloudPlatform/accelerated-platforms'
# classes (platforms/gke/base/core/custom_compute_class: gpu-l4-24gb-s8-x1)
AKS_NODE_CLASS = """\
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata:
  name: gpu
spec:
  imageFamily: {family}
  osDiskSizeGB: {disk}
"""
EC2_NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu
spec:
  amiSelectorTerms: [{{alias: al2023@latest}}]
  role: KarpenterNodeRole-{family}
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: {family}}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: {family}}}}}]
  blockDeviceMappings: [{{deviceName: /dev/xvda, ebs: {{volumeSize: {disk}Gi}}}}]
"""
COMPUTE_CLASS = """\
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata:
  name: gpu-l4-24gb-s8-x1
spec:
  nodePoolAutoCreation: {{enabled: true}}
  whenUnsatisfiable: DoNotScaleUp
  priorities:
  - machineType: g2-standard-{disk}
    gpu: {{type: nvidia-l4, count: 1, driverVersion: latest}}
    spot: {family}
"""
NODE_CLASS_LIKE = [
    ("karpenter.azure.com", "AKSNodeClass", AKS_NODE_CLASS, ("Ubuntu2204", "AzureLinux", "Ubuntu2204")),
    ("karpenter.k8s.aws", "EC2NodeClass", EC2_NODE_CLASS, ("dev", "prod", "platform")),
    ("cloud.google.com", "ComputeClass", COMPUTE_CLASS, ("false", "true", "false")),
]


@pytest.mark.parametrize(
    ("group", "kind", "text", "families"), NODE_CLASS_LIKE, ids=("AKSNodeClass", "EC2NodeClass", "ComputeClass")
)
def test_a_mapped_cluster_reads_only_its_own_node_classes(group, kind, text, families):
    """A two-cluster monorepo with a node class of one name in each cluster's folder and in a shared platform
    folder: each mapped cluster reads its own, the files in no cluster the shared one. Before, AKSNodeClass and
    ComputeClass were not marked as describing a cluster, and both mapped clusters read the shared folder's too."""
    files = {
        "clusters/eastus/nodeclasses.yaml": text.format(family=families[0], disk=8),
        "clusters/westus/nodeclasses.yaml": text.format(family=families[1], disk=16),
        "platform/nodeclasses.yaml": text.format(family=families[2], disk=32),
    }
    sources = [Source(path, content=body.encode()) for path, body in files.items()]
    scopes = tuple(ClusterScope(name, (f"clusters/{name}/*",), ()) for name in ("eastus", "westus"))
    run = LintRun(Config(clusters=scopes), sources, scoped=[(scope, None) for scope in scopes])
    read = [sorted(obj.file for obj in r.linted.of_kind(group, kind)) for r in scoped_resolvers(run, run.linted)]
    assert read == [
        ["platform/nodeclasses.yaml"],
        ["clusters/eastus/nodeclasses.yaml"],
        ["clusters/westus/nodeclasses.yaml"],
    ]


GKE_NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-ml-default-pool-8f2c1d3e-k9wz
    labels:
      cloud.google.com/gke-nodepool: default-pool
      cloud.google.com/machine-family: e2
      kubernetes.io/hostname: gke-ml-default-pool-8f2c1d3e-k9wz
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: e2-standard-4
      topology.kubernetes.io/zone: us-central1-a
  status:
    capacity: {cpu: "4", memory: 16374524Ki, pods: "110"}
    allocatable: {cpu: 3920m, memory: 13207804Ki, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-ml-l4-pool-5b7e9a21-tq4m
    labels:
      cloud.google.com/gke-accelerator: nvidia-l4
      cloud.google.com/gke-nodepool: l4-pool
      cloud.google.com/machine-family: g2
      kubernetes.io/hostname: gke-ml-l4-pool-5b7e9a21-tq4m
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: g2-standard-8
      topology.kubernetes.io/zone: us-central1-a
  spec:
    taints:
    - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  status:
    capacity: {cpu: "8", memory: 32880372Ki, nvidia.com/gpu: "1", pods: "110"}
    allocatable: {cpu: 7910m, memory: 29004532Ki, nvidia.com/gpu: "1", pods: "110"}
"""


def class_job(gpus: int, name: str = "train") -> str:
    selector = "      nodeSelector: {cloud.google.com/compute-class: gpu-l4-24gb-s8-x1}\n"
    return job(gpus, name).replace("      restartPolicy: Never\n", "      restartPolicy: Never\n" + selector)


def gke_monorepo(root: Path, class_in: str) -> Path:
    return tree(
        root,
        {
            "inventory/gke/nodes.yaml": GKE_NODES,
            "clusters/gke/apps/train.yaml": class_job(8),
            f"{class_in}/computeclass.yaml": COMPUTE_CLASS.format(family="false", disk=8),
            ".gpulint.yaml": 'clusters:\n  gke: {paths: ["clusters/gke/*"], inventory: [inventory/gke]}\n',
        },
    )


def test_a_mapped_gke_cluster_takes_its_own_compute_class_not_a_shared_folders(tmp_path, monkeypatch):
    # 8 GPUs of a class whose only priority is a g2-standard-8 with one L4: GKE creates no node that holds them
    (own,) = check(gke_monorepo(tmp_path / "own", "clusters/gke/classes"), monkeypatch=monkeypatch)
    assert (own["rule"], own["severity"]) == ("gpu-unschedulable", "warning"), own
    assert "ComputeClass gpu-l4-24gb-s8-x1" in said(own) and "DoNotScaleUp" in said(own)
    # the same class in a shared folder may be another cluster's: the class the pod selects is not known
    (shared,) = check(gke_monorepo(tmp_path / "shared", "platform/classes"), monkeypatch=monkeypatch)
    assert (shared["rule"], shared["severity"]) == ("gpu-unschedulable", "info"), shared


def test_forked_workers_read_a_compute_class_of_another_file_as_one_process_does(tmp_path, monkeypatch):
    """Before, a ComputeClass did not cross files: split over workers, the pod's class was unknown (info)."""
    root = gke_monorepo(tmp_path, "clusters/gke/classes")
    for index in range(50):  # enough files for the run to fork its workers
        (root / f"clusters/gke/apps/copy-{index}.yaml").write_text(class_job(8 if index == 7 else 1, f"t-{index}"))
    split = check(root, "--jobs", "2", monkeypatch=monkeypatch)
    assert split == check(root, "--jobs", "1", monkeypatch=monkeypatch)
    assert sorted((f["path"], f["severity"]) for f in split) == [
        ("clusters/gke/apps/copy-7.yaml", "warning"),
        ("clusters/gke/apps/train.yaml", "warning"),
    ]
