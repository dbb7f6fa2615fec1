"""A Karpenter pool's kubelet settings change what its nodes leave allocatable (issue #29 section 5): maxPods,
kubeReserved, systemReserved and evictionHard on the EC2NodeClass (karpenter.k8s.aws/v1 spec.kubelet), applied to
Karpenter's own figures as karpenter-provider-aws pkg/providers/instancetype/types.go computes them."""

from __future__ import annotations

from fractions import Fraction

from conftest import DATA, check_json, inventory_args, run_cli, said

KARPENTER = str(DATA / "elastic" / "karpenter")
TOLERATE_GPU = "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"

# The EC2NodeClass the pools of tests/data/elastic/karpenter reference, as the Karpenter docs write one.
NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: KarpenterNodeRole-ml
  amiSelectorTerms: [{{alias: {alias}}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: ml}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: ml}}}}]
  kubelet:
{kubelet}
---
"""
AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: monitoring}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: registry.example.com/agent:3.2
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 16Mi}}
---
"""


def job(memory: str) -> str:
    """A 4-GPU Job: only g5.12xlarge (173400Mi allocatable with Karpenter's defaults) of the GPU pool holds it."""
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
{TOLERATE_GPU}      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          requests: {{memory: {memory}}}
          limits: {{nvidia.com/gpu: 4}}
"""


def verdicts(write, manifest: str) -> list[dict]:
    found = check_json(str(write("workload.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(KARPENTER))
    return [f for f in found if f["rule"] == "gpu-unschedulable"]


def node_class(kubelet: str, alias: str = "al2023@latest") -> str:
    return NODE_CLASS.format(kubelet=kubelet, alias=alias)


def test_system_reserved_memory_is_taken_from_allocatable(write):
    reserved = node_class("    systemReserved: {cpu: 500m, memory: 2Gi}")
    assert verdicts(write, reserved + job("171352Mi")) == []
    (never,) = verdicts(write, reserved + job("171353Mi"))
    assert never["severity"] == "error"
    assert "at most 171352Mi memory (g5.12xlarge)" in said(never) and "the pod asks for 171353Mi" in said(never)
    assert verdicts(write, job("171353Mi")) == []  # Karpenter's defaults alone: it fits


def test_kube_reserved_replaces_the_default_which_may_leave_more_room(write):
    """The default reserves 11Mi per ENI-limited pod + 255Mi (8362Mi on a g5.12xlarge): 1Gi leaves 7338Mi more."""
    reserved = node_class("    kubeReserved: {cpu: 200m, memory: 1Gi}")
    assert verdicts(write, reserved + job("180738Mi")) == []
    (never,) = verdicts(write, reserved + job("180739Mi"))
    assert "at most 180738Mi memory (g5.12xlarge)" in said(never)


def test_an_eviction_threshold_in_percent(write):
    reserved = node_class('    evictionHard: {memory.available: "10%"}')
    (never,) = verdicts(write, reserved + job("173000Mi"))
    assert "memory" in said(never)
    assert verdicts(write, reserved + job("156160Mi")) == []
    disabled = node_class('    evictionHard: {memory.available: "100%"}')  # the kubelet's "disabled"
    assert verdicts(write, disabled + job("173500Mi")) == []


def test_max_pods_counts_the_daemon_pods_and_the_pod(write):
    tight = node_class("    maxPods: 1")
    (never,) = verdicts(write, tight + AGENT + job("1Gi"))
    assert "pods" in said(never) and never["severity"] == "error"
    assert verdicts(write, node_class("    maxPods: 2") + AGENT + job("1Gi")) == []
    assert verdicts(write, AGENT + job("1Gi")) == []
    # gpulint explain gives the same cause
    path = write("workload.yaml", tight + AGENT + job("1Gi"))
    explained = run_cli("explain", str(path), "--inventory", KARPENTER)
    assert "at most 0 pods left after the DaemonSets' requests (g5.12xlarge" in explained.stdout


def test_max_pods_on_a_family_whose_memory_reservation_follows_it_keeps_the_larger_memory(write):
    """AL2023 reserves memory for the ENI-limited pod count whatever maxPods says; Bottlerocket for maxPods, so
    fewer pods leave it more memory: the larger figure is kept, never a false "never fits"."""
    assert verdicts(write, node_class("    maxPods: 110", "bottlerocket@latest") + job("173401Mi")) == []
    (never,) = verdicts(write, node_class("    maxPods: 110") + job("173401Mi"))
    assert "at most 173400Mi memory (g5.12xlarge)" in said(never)


def test_the_default_reservations_reproduce_karpenters_figures_for_every_shipped_aws_row():
    """kubeReserved 0 gives back what the default reserved: capacity for cpu (Karpenter's tiers, exactly), and
    capacity less the VM overhead (7.5%) and the 100Mi eviction threshold for memory."""
    from gpulint.kube.pools.kubelet import MIB, KubeletSettings, allocatable_with
    from gpulint.lint.world.node_catalog import shipped_catalog

    rows = [row for row in shipped_catalog().rows.values() if row.provider == "aws"]
    zero = KubeletSettings(kube_reserved={"cpu": Fraction(0), "memory": Fraction(0)})
    off = set()
    for row in rows:
        freed = allocatable_with(row.allocatable, row.capacity, zero)
        assert freed["cpu"] == row.capacity["cpu"], row.name
        whole = row.capacity["memory"] * Fraction(925, 1000) - 100 * MIB
        assert freed["memory"] >= whole - MIB, row.name  # never credited less than Karpenter reserves
        if freed["memory"] - whole > MIB:
            off.add(row.name)
    assert len(rows) == 77 and off == set()


# The cluster's DaemonSets, as `kubectl get daemonsets -A -o yaml` lists them: on EKS the VPC CNI and
# kube-proxy run on every node and request nothing the scheduler counts but a pod each.
CLUSTER_DAEMONS = """\
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: aws-node, namespace: kube-system}
  spec:
    selector: {matchLabels: {k8s-app: aws-node}}
    template:
      metadata: {labels: {k8s-app: aws-node}}
      spec:
        tolerations: [{operator: Exists}]
        containers: [{name: aws-node, image: amazon-k8s-cni:v1.18.3}]
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: kube-proxy, namespace: kube-system}
  spec:
    selector: {matchLabels: {k8s-app: kube-proxy}}
    template:
      metadata: {labels: {k8s-app: kube-proxy}}
      spec:
        tolerations: [{operator: Exists}]
        containers: [{name: kube-proxy, image: kube-proxy:v1.30.0}]
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: windows-agent, namespace: kube-system}
  spec:
    selector: {matchLabels: {app: windows-agent}}
    template:
      metadata: {labels: {app: windows-agent}}
      spec:
        nodeSelector: {kubernetes.io/os: windows}
        tolerations: [{operator: Exists}]
        containers: [{name: agent, image: agent:1.0}]
"""


def with_cluster_daemons(write, manifest: str) -> list[dict]:
    daemons = write("daemonsets.yaml", CLUSTER_DAEMONS)
    found = check_json(
        str(write("workload.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(KARPENTER, daemons)
    )
    return [f for f in found if f["rule"] == "gpu-unschedulable"]


def test_the_inventorys_daemonsets_take_their_pods_under_max_pods(write):
    """karpenter-provider-aws#6884: maxPods 1 on an EC2NodeClass; the cluster's DaemonSets (none of them linted,
    none requesting cpu or memory) take the node's only pod before the GPU pod can."""
    (never,) = with_cluster_daemons(write, node_class("    maxPods: 2") + job("1Gi"))
    assert "at most 0 pods left after the DaemonSets' requests" in said(never) and never["severity"] == "error"
    # two Linux daemons and the pod: 3 pods; the Windows agent never lands on these nodes
    assert with_cluster_daemons(write, node_class("    maxPods: 3") + job("1Gi")) == []
    assert with_cluster_daemons(write, job("1Gi")) == []  # the ENI-limited default holds them all


def test_a_linted_daemonset_replaces_the_inventorys_copy(write):
    """The linted DaemonSet is the change under review: kube-proxy moved to Windows nodes no longer counts."""
    moved = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-proxy, namespace: kube-system}
spec:
  selector: {matchLabels: {k8s-app: kube-proxy}}
  template:
    metadata: {labels: {k8s-app: kube-proxy}}
    spec:
      nodeSelector: {kubernetes.io/os: windows}
      tolerations: [{operator: Exists}]
      containers: [{name: kube-proxy, image: kube-proxy:v1.30.0}]
---
"""
    assert with_cluster_daemons(write, node_class("    maxPods: 2") + moved + job("1Gi")) == []
