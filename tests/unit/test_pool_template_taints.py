"""The taints Cluster Autoscaler copies into a node group's template from a live node of the group
(kubernetes/autoscaler cluster-autoscaler-1.36.1 utils/taints/taints.go SanitizeTaints and
FilterOutNodesWithStartupTaints; config/flags/flags.go for --startup-taint, --ignore-taint,
--startup-taint-prefix and --status-taint): a taint it keeps that the pod does not tolerate means the group
cannot add a node for the pod; one its flags may drop is unproven while its Deployment is not read."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from gpulint.kube.pools.autoscaler_taints import UNKNOWN, TaintConfig, autoscaler_taint_config
from gpulint.kube.scheduler import Taint

# `aws eks describe-nodegroup`: the taint comes from the launch template's kubelet flags
# (--register-with-taints), so the node group's own "taints" does not show it.
NODEGROUP = {
    "nodegroup": {
        "nodegroupName": "gpu-a10g",
        "clusterName": "ml",
        "version": "1.33",
        "status": "ACTIVE",
        "capacityType": "ON_DEMAND",
        "scalingConfig": {"minSize": 1, "maxSize": 4, "desiredSize": 1},
        "instanceTypes": ["g5.4xlarge"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "launchTemplate": {"name": "gpu-a10g-lt", "version": "3", "id": "lt-0a1b2c3d4e5f60718"},
        "labels": {"accelerator": "a10g"},
        "tags": {"k8s.io/cluster-autoscaler/enabled": "true", "k8s.io/cluster-autoscaler/ml": "owned"},
    }
}

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-12-34.us-west-2.compute.internal
  labels:
    eks.amazonaws.com/nodegroup: gpu-a10g
    eks.amazonaws.com/capacityType: ON_DEMAND
    accelerator: a10g
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: g5.4xlarge
    topology.kubernetes.io/zone: us-west-2a
spec:
  taints:
  - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}<TAINTS>
status:
  capacity: {cpu: "16", memory: 65049812Ki, ephemeral-storage: 104845292Ki, pods: "234", nvidia.com/gpu: "1"}
  allocatable: {cpu: 15890m, memory: 64033508Ki, ephemeral-storage: 95551679124, pods: "234", nvidia.com/gpu: "1"}
"""

# As the cluster-autoscaler chart (charts/cluster-autoscaler, autoDiscovery on AWS) renders it, trimmed.
AUTOSCALER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cluster-autoscaler-aws-cluster-autoscaler
  namespace: kube-system
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: aws-cluster-autoscaler}
  template:
    metadata:
      labels: {app.kubernetes.io/name: aws-cluster-autoscaler}
    spec:
      serviceAccountName: cluster-autoscaler-aws-cluster-autoscaler
      containers:
      - name: aws-cluster-autoscaler
        image: registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0
        command:
        - ./cluster-autoscaler
        - --cloud-provider=aws
        - --namespace=kube-system
        - --node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/ml
        - --logtostderr=true
        - --stderrthreshold=info
        - --v=4<FLAGS>
"""


def _job(toleration: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: finetune, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{accelerator: a10g}}
      tolerations: [{toleration}]
      containers:
      - name: train
        image: registry.example.com/finetune:2.1
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


# The toleration GKE's documentation shows: it does not tolerate the node's nvidia.com/gpu=true.
PRESENT = "{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}"
EXISTS = "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"


def _findings(tmp_path, toleration=PRESENT, taints="", flags="", autoscaler=True, nodegroup=None, linted_flags=None):
    """``linted_flags``: the linted files hold a Deployment of the autoscaler too, with these flags."""
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "nodegroup.json").write_text(json.dumps(nodegroup or NODEGROUP))
    (inventory / "nodes.yaml").write_text(NODE.replace("<TAINTS>", taints))
    if autoscaler:
        (inventory / "cluster-autoscaler.yaml").write_text(AUTOSCALER.replace("<FLAGS>", flags))
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "job.yaml").write_text(_job(toleration))
    if linted_flags is not None:
        (manifests / "cluster-autoscaler.yaml").write_text(AUTOSCALER.replace("<FLAGS>", linted_flags))
    run = run_cli("check", str(manifests), "--inventory", str(inventory), "--format", "json")
    return [f for f in run.json()["findings"] if f["rule"] == "gpu-unschedulable"]


def test_a_taint_the_autoscaler_copies_keeps_the_group_from_scaling_up(tmp_path):
    (finding,) = _findings(tmp_path)
    assert finding["severity"] == "error"
    assert "none of its 1 node pool can add a node for it" in finding["message"]
    assert finding["notes"][0] == "EKS node group gpu-a10g: node(s) had untolerated taint(s)"


def test_a_linted_autoscaler_deployment_proves_no_flag(tmp_path):
    """It may be another cluster's (clusters/dev, clusters/prod): only the inventory's says what this one drops."""
    (finding,) = _findings(tmp_path, autoscaler=False, linted_flags="")
    assert finding["severity"] == "info"


def test_a_linted_autoscaler_deployment_may_drop_a_taint(tmp_path):
    """The change under review makes the node's taint a status taint: the template would not carry it."""
    assert _findings(tmp_path, linted_flags="\n        - --status-taint=nvidia.com/gpu") == []


def test_a_pod_tolerating_the_copied_taint_scales_the_group_up(tmp_path):
    assert _findings(tmp_path, toleration=EXISTS) == []


def test_without_the_autoscaler_deployment_a_taint_only_the_node_carries_is_unproven(tmp_path):
    """A --status-taint flag gpulint has not read may drop it: unknown, never an error."""
    (finding,) = _findings(tmp_path, autoscaler=False)
    assert finding["severity"] == "info"
    assert "carries taint nvidia.com/gpu=true:NoSchedule" in finding["notes"][1]
    assert finding["notes"][2] == "add the Deployment that runs Cluster Autoscaler to the inventory to check"


def test_a_taint_the_node_group_states_is_proven_without_the_deployment(tmp_path):
    stated = json.loads(json.dumps(NODEGROUP))
    stated["nodegroup"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    (finding,) = _findings(tmp_path, autoscaler=False, nodegroup=stated)
    assert finding["severity"] == "error"


@pytest.mark.parametrize(
    ("taints", "flags"),
    [
        # dropped from the template: SanitizeTaints
        ("\n  - {key: node.kubernetes.io/memory-pressure, effect: NoSchedule}", ""),
        ("\n  - {key: DeletionCandidateOfClusterAutoscaler, value: '1765000000', effect: PreferNoSchedule}", ""),
        ("\n  - {key: status-taint.cluster-autoscaler.kubernetes.io/gpu-health, value: xid79, effect: NoSchedule}", ""),
        (
            "\n  - {key: nvidia.com/gpu-unhealthy, value: xid79, effect: NoSchedule}",
            "\n        - --status-taint=nvidia.com/gpu-unhealthy",
        ),
        # the node is no template candidate (treated as unready); the node group's template has no taint
        ("\n  - {key: startup-taint.cluster-autoscaler.kubernetes.io/driver, effect: NoSchedule}", ""),
        (
            "\n  - {key: node.cilium.io/agent-not-ready, value: 'true', effect: NoSchedule}",
            "\n        - --startup-taint\n        - node.cilium.io/agent-not-ready",
        ),
        (
            "\n  - {key: readiness.k8s.io/gpu-driver, effect: NoSchedule}",
            "\n        - --startup-taint-prefix=readiness.k8s.io/",
        ),
    ],
    ids=[
        "condition",
        "deletion-candidate",
        "status-prefix",
        "status-flag",
        "startup-prefix",
        "startup-flag",
        "startup-prefix-flag",
    ],
)
def test_taints_the_autoscaler_drops_leave_the_group_open(tmp_path, taints, flags):
    """The pod tolerates nvidia.com/gpu; every other taint of the node is one the template does not keep."""
    assert _findings(tmp_path, toleration=EXISTS, taints=taints, flags=flags) == []


def test_a_taint_a_flag_does_not_name_stays(tmp_path):
    taints = "\n  - {key: dedicated, value: finetune, effect: NoSchedule}"
    (finding,) = _findings(tmp_path, toleration=EXISTS, taints=taints, flags="\n        - --status-taint=other")
    assert finding["severity"] == "error"


def test_kept_follows_sanitize_taints():
    config = TaintConfig(frozenset({"a/startup"}), frozenset({"a/status"}), ("ready.example.com/",), True)
    taints = [
        Taint("ToBeDeletedByClusterAutoscaler", "1765000000", "NoSchedule"),
        Taint("node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule"),
        Taint("ignore-taint.cluster-autoscaler.kubernetes.io/x", "", "NoSchedule"),
        Taint("a/startup", "", "NoSchedule"),
        Taint("a/status", "", "NoExecute"),
        Taint("ready.example.com/cni", "", "NoSchedule"),
        Taint("nvidia.com/gpu", "present", "NoSchedule"),
    ]
    assert config.kept(taints) == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert UNKNOWN.kept(taints[-2:]) == tuple(taints[-2:])


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        # the chart's command line, both spellings of a Go flag's value
        (
            {
                "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0",
                "command": ["./cluster-autoscaler", "--status-taint=a", "-startup-taint", "b", "--ignore-taint=c"],
            },
            TaintConfig(frozenset({"b", "c"}), frozenset({"a"}), (), True),
        ),
        # args only: the image's entrypoint is the autoscaler
        (
            {"image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0", "args": ["--startup-taint-prefix=r/"]},
            TaintConfig(frozenset(), frozenset(), ("r/",), True),
        ),
        # a value from the environment gpulint cannot read: the flags are not known
        (
            {
                "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0",
                "command": ["./cluster-autoscaler", "--status-taint=$(TAINTS)"],
                "env": [{"name": "TAINTS", "valueFrom": {"secretKeyRef": {"name": "ca", "key": "taints"}}}],
            },
            TaintConfig(),
        ),
    ],
    ids=["command", "args", "unresolved"],
)
def test_the_flags_are_read_from_the_deployment(container, expected):
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [container]}}}}
    assert autoscaler_taint_config(deployment) == expected


def test_a_deployment_that_does_not_run_the_autoscaler_says_nothing():
    container = {"image": "registry.example.com/web:1.0", "command": ["web", "--status-taint=a"]}
    assert (
        autoscaler_taint_config({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [container]}}}})
        is None
    )


@pytest.mark.parametrize(
    ("taint", "config", "copied"),
    [
        ("startup-taint.cluster-autoscaler.kubernetes.io/driver", UNKNOWN, False),
        (
            "node.cilium.io/agent-not-ready",
            TaintConfig(frozenset({"node.cilium.io/agent-not-ready"}), known=True),
            False,
        ),
        ("status-taint.cluster-autoscaler.kubernetes.io/gpu-health", UNKNOWN, True),  # ready: copied, taint dropped
        ("node.cilium.io/agent-not-ready", UNKNOWN, True),  # copied and kept, but a flag may name it: unproven
    ],
)
def test_a_node_with_a_startup_taint_is_no_template(taint, config, copied):
    import yaml

    from gpulint.kube.pools.binding import bind
    from gpulint.kube.pools.readers import eks_nodegroup
    from gpulint.kube.scheduler import NodeInfo
    from gpulint.lint.world.node_catalog import shipped_catalog

    node = yaml.safe_load(NODE.replace("<TAINTS>", f"\n  - {{key: {taint}, effect: NoSchedule}}"))
    pool = bind(
        eks_nodegroup(NODEGROUP["nodegroup"], "nodegroup.json"), shipped_catalog(), [NodeInfo.from_object(node)], config
    )
    assert bool(pool.template_node) is copied
    gpu = Taint("nvidia.com/gpu", "true", "NoSchedule")
    other = Taint(taint, "", "NoSchedule")
    if not copied:
        assert pool.taints == ()  # the node group's own template: no taint stated
    elif config is UNKNOWN and not taint.startswith("status-taint."):
        assert pool.taints == (gpu, other) and not pool.taint_proven(other)
    else:
        assert pool.taints == (gpu,)
