"""The GPU stack against an inventory: DaemonSet coverage (daemonset-coverage), silent GPU nodes."""

from __future__ import annotations

import textwrap

import pytest
from conftest import REPO, by_rule, lint_text, run_cli, said

from gpulint.kube.commandline import MAX_WORDS
from gpulint.kube.gpu_stack import gpu_nodes, image_repository, stack_component
from gpulint.kube.scheduler import NodeInfo
from gpulint.kube.workloads import effective_pod_spec
from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

STACK = str(REPO / "rules" / "inventories" / "gpu-stack")
RULE = "daemonset-coverage"


def lint(text: str, inventory, **config):
    return lint_text(text, "ds.yaml", Config(**config), inventory)


@pytest.fixture(scope="module")
def stack():
    return load_inventory([STACK])


def node(name: str, labels: dict | None = None, taints: list | None = None, allocatable: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": "8", "pods": "110", **(allocatable or {})}},
    }


def inventory_of(tmp_path, *nodes: dict):
    import json

    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(nodes)}))
    return load_inventory([str(path)])


def daemonset(spec: str, name: str = "nvidia-device-plugin-daemonset", image: str = "") -> str:
    """A DaemonSet shaped like NVIDIA's static deployment; ``spec`` is more of the pod spec."""
    image = image or "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
    extra = textwrap.indent(textwrap.dedent(spec).strip("\n"), "      ") + "\n" if spec.strip() else ""
    return (
        "apiVersion: apps/v1\nkind: DaemonSet\n"
        f"metadata: {{name: {name}, namespace: kube-system}}\n"
        "spec:\n  selector:\n    matchLabels: {name: ds}\n  template:\n    metadata:\n      labels: {name: ds}\n"
        "    spec:\n"
        f"{extra}"
        "      containers:\n"
        f"      - name: ctr\n        image: {image}\n"
    )


# ----------------------------------------------------------------- recognising the stack


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}, "NVIDIA device plugin"),
        (
            {"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "command": ["nvidia-device-plugin"]},
            "NVIDIA device plugin",
        ),
        (
            {"image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "command": ["/usr/bin/gpu-feature-discovery"]},
            "GPU feature discovery",
        ),
        ({"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "command": ["mps-control-daemon"]}, None),
        ({"image": "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04"}, "DCGM exporter"),
        ({"image": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.3.0"}, "GPU operator validator"),
        ({"image": "registry.k8s.io/nfd/node-feature-discovery:v0.16.0", "command": ["nfd-worker"]}, "NFD worker"),
        ({"image": "registry.k8s.io/nfd/node-feature-discovery:v0.16.0", "command": ["nfd-master"]}, None),
        ({"image": "rocm/k8s-device-plugin:1.25.2.8"}, "AMD GPU device plugin"),
        (
            {"image": "rocm/k8s-device-plugin:labeller-1.25.2.8", "command": ["./k8s-node-labeller"]},
            "AMD GPU node labeller",
        ),
        ({"image": "docker.io/example/my-k8s-device-plugin-fork:1"}, None),  # a name that only contains it
        ({"image": "fluent/fluent-bit:3.0"}, None),
    ],
)
def test_stack_components_are_known_by_image_and_command(container, expected):
    found = stack_component({"containers": [{"name": "c", **container}]})
    assert (found.name if found else None) == expected


def test_the_helm_charts_config_manager_sidecar_does_not_hide_the_plugin():
    spec = {
        "containers": [
            {
                "name": "nvidia-device-plugin-sidecar",
                "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                "command": ["config-manager"],
            },
            {
                "name": "nvidia-device-plugin-ctr",
                "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                "command": ["nvidia-device-plugin"],
            },
        ]
    }
    assert stack_component(spec).name == "NVIDIA device plugin"


def test_image_repository_drops_tag_and_digest_but_keeps_a_registry_port():
    assert image_repository("nvcr.io/nvidia/k8s-device-plugin:v0.17.0") == "nvcr.io/nvidia/k8s-device-plugin"
    assert image_repository("localhost:5000/k8s-device-plugin@sha256:abc") == "localhost:5000/k8s-device-plugin"


def test_gpu_nodes_by_resource_or_label():
    nodes = [
        NodeInfo.from_object(node("a", allocatable={"nvidia.com/gpu": "8"})),
        NodeInfo.from_object(node("b", labels={"feature.node.kubernetes.io/pci-10de.present": "true"})),
        NodeInfo.from_object(node("c", labels={"nvidia.com/gpu.present": "false"})),
        NodeInfo.from_object(node("d", allocatable={"amd.com/gpu": "8"})),
        NodeInfo.from_object(node("e")),
    ]
    assert [n.name for n in gpu_nodes(nodes, "NVIDIA")] == ["a", "b"]
    assert [n.name for n in gpu_nodes(nodes)] == ["a", "b", "d"]


def test_daemon_pods_on_the_host_network_tolerate_network_unavailable():
    def keys(spec):
        return {t["key"] for t in effective_pod_spec("DaemonSet", spec)["tolerations"]}

    assert "node.kubernetes.io/network-unavailable" in keys({"hostNetwork": True})
    assert "node.kubernetes.io/network-unavailable" not in keys({})
    assert "node.kubernetes.io/unschedulable" in keys({})


# ----------------------------------------------------------------- daemonset-coverage: failing


def test_device_plugin_without_the_gpu_toleration_reaches_no_gpu_node(stack):
    (finding,) = by_rule(lint(daemonset(""), stack), RULE)
    assert finding.severity == Severity.ERROR
    assert (finding.line, finding.column) == (11, 7)  # the pod spec: it has no tolerations
    assert (
        "selects 0 of 6 NVIDIA GPU nodes: all carry the untolerated taint nvidia.com/gpu:NoSchedule" in finding.message
    )
    assert "6 of them advertise no GPU resource" in said(finding)


def test_a_toleration_for_another_taint_is_pointed_at(stack):
    (finding,) = by_rule(lint(daemonset("tolerations: [{key: CriticalAddonsOnly, operator: Exists}]"), stack), RULE)
    assert (finding.line, finding.column) == (11, 7)
    assert "nvidia.com/gpu:NoSchedule" in finding.message


def test_equal_without_a_value_does_not_tolerate_a_taint_with_one(tmp_path):
    inventory = inventory_of(
        tmp_path,
        *(
            node(
                f"g{i}",
                {"nvidia.com/gpu.present": "true"},
                [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            )
            for i in range(3)
        ),
    )
    (finding,) = by_rule(lint(daemonset("tolerations: [{key: nvidia.com/gpu, effect: NoSchedule}]"), inventory), RULE)
    assert "nvidia.com/gpu=present:NoSchedule" in finding.message


def test_some_gpu_nodes_out_of_reach_is_a_warning_naming_them(tmp_path):
    gpu = {"nvidia.com/gpu.present": "true"}
    inventory = inventory_of(
        tmp_path,
        node("g0", gpu, allocatable={"nvidia.com/gpu": "8"}),
        node("g1", gpu, allocatable={"nvidia.com/gpu": "8"}),
        node("g2", gpu, [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]),
    )
    (finding,) = by_rule(lint(daemonset(""), inventory), RULE)
    assert finding.severity == Severity.WARNING
    assert (
        "selects 2 of 3 NVIDIA GPU nodes: 1 carries the untolerated taint dedicated=training:NoSchedule (g2)"
        in finding.message
    )


def test_a_node_selector_that_matches_no_gpu_node(stack):
    # nvidia.com/gpu is a resource, not a label: a common slip
    (finding,) = by_rule(
        lint(daemonset('nodeSelector: {nvidia.com/gpu: "true"}\ntolerations: [{operator: Exists}]'), stack), RULE
    )
    assert finding.severity == Severity.WARNING
    assert "its nodeSelector/required node affinity matches none of them" in finding.message
    assert (finding.line, finding.column) == (11, 7)


def test_a_daemonset_for_a_tainted_pool_that_tolerates_nothing(stack):
    text = daemonset('nodeSelector: {nvidia.com/gpu.present: "true"}', name="node-tuner", image="example.com/tuner:1")
    (finding,) = by_rule(lint(text, stack), RULE)
    assert finding.severity == Severity.WARNING
    assert "this DaemonSet selects 0 of 6 nodes its node selection matches" in finding.message


def test_cli_reports_the_static_deployment_shape_without_toleration(write):
    path = write("ds.yaml", daemonset(""))
    result = run_cli("check", str(path), "--inventory", STACK, "--select", RULE)
    assert result.exit_code == 1
    assert f"{path}:11:7: error[daemonset-coverage]" in result.stdout


# ----------------------------------------------------------------- daemonset-coverage: clean (traps)


def test_nvidias_static_deployment_tolerating_the_gpu_taint_is_clean(stack):
    text = daemonset(
        """
        tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
        priorityClassName: system-node-critical
        """
    )
    assert by_rule(lint(text, stack), RULE) == []


def test_tolerate_everything(stack):
    assert by_rule(lint(daemonset("tolerations: [{operator: Exists}]"), stack), RULE) == []


def test_gfd_with_nfd_affinity_and_toleration_is_clean(stack):
    text = daemonset(
        """
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: feature.node.kubernetes.io/pci-10de.present, operator: In, values: ["true"]}
              - matchExpressions:
                - {key: nvidia.com/gpu.present, operator: In, values: ["true"]}
        """,
        name="gpu-feature-discovery",
    )
    assert by_rule(lint(text, stack), RULE) == []


def test_controller_tolerations_cover_cordoned_and_pressured_nodes(tmp_path):
    gpu = {"nvidia.com/gpu.present": "true"}
    cordoned = node("g0", gpu, [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    cordoned["spec"]["unschedulable"] = True
    inventory = inventory_of(
        tmp_path,
        cordoned,
        node("g1", gpu, [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]),
        node("g2", gpu, [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
        node("g3", gpu, [{"key": "example.com/maintenance", "effect": "PreferNoSchedule"}]),
    )
    assert by_rule(lint(daemonset(""), inventory), RULE) == []


def test_network_unavailable_is_tolerated_only_on_the_host_network(tmp_path):
    gpu = {"nvidia.com/gpu.present": "true"}
    inventory = inventory_of(
        tmp_path, node("g0", gpu, [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}])
    )
    assert by_rule(lint(daemonset("hostNetwork: true"), inventory), RULE) == []
    (finding,) = by_rule(lint(daemonset(""), inventory), RULE)
    assert "node.kubernetes.io/network-unavailable:NoSchedule" in finding.message


def test_other_daemonsets_that_keep_off_tainted_gpu_nodes_are_silent(stack):
    # a log shipper for Linux nodes, kept off the GPU nodes by their taint: that is what the taint is for
    text = daemonset("nodeSelector: {kubernetes.io/os: linux}", name="fluent-bit", image="fluent/fluent-bit:3.0")
    assert by_rule(lint(text, stack), RULE) == []
    assert by_rule(lint(daemonset("", name="fluent-bit", image="fluent/fluent-bit:3.0"), stack), RULE) == []


def test_mps_control_daemon_for_mps_nodes_is_not_expected_everywhere(stack):
    text = daemonset(
        """
        nodeSelector: {nvidia.com/mps.capable: "true"}
        containers:
        - name: mps-control-daemon-ctr
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
          command: [mps-control-daemon]
        """
    ).replace("      containers:\n      - name: ctr\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n", "")
    assert by_rule(lint(text, stack), RULE) == []


def test_no_gpu_nodes_no_finding(tmp_path):
    inventory = inventory_of(tmp_path, node("cpu-0"), node("cpu-1", taints=[{"key": "a", "effect": "NoSchedule"}]))
    assert by_rule(lint(daemonset(""), inventory), RULE) == []


def test_without_an_inventory_the_rule_is_skipped():
    body = daemonset("").encode()
    assert by_rule(LintRun(Config(), [Source("ds.yaml", content=body)]).report().findings, RULE) == []


# ----------------------------------------------------------------- gpu-resource-unknown names the silent nodes


def test_gpu_resource_unknown_names_nodes_labelled_present_that_advertise_nothing(stack):
    pod = """
    apiVersion: v1
    kind: Pod
    metadata: {name: cuda}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: cuda
        image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
        resources: {limits: {nvidia.com/gpu: 1}}
    """
    (finding,) = by_rule(lint(pod, stack), "gpu-resource-unknown")
    assert "6 nodes are labelled nvidia.com/gpu.present=true but advertise no NVIDIA GPU resource" in said(finding)
    assert "a100-0, a100-1, a100-2, a100-3, a100-4 and 1 more" in said(finding)


# ----------------------------------------------------------------- the GPU operator's ClusterPolicy

CLUSTER_POLICY = """
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  operator: {defaultRuntime: containerd}
  daemonsets:
    priorityClassName: system-node-critical
TOLERATIONS
  devicePlugin: {enabled: true}
"""


def test_cluster_policy_tolerations_replace_the_operands_own(stack):
    text = CLUSTER_POLICY.replace("TOLERATIONS", "    tolerations:\n    - {key: CriticalAddonsOnly, operator: Exists}")
    (finding,) = by_rule(lint(text, stack), RULE)
    assert finding.severity == Severity.ERROR and (finding.line, finding.column) == (8, 5)
    assert "this ClusterPolicy's DaemonSets (the GPU operator's device plugin, GFD, DCGM exporter and validator) " in (
        finding.message
    )
    assert finding.message.endswith("select 0 of 6 NVIDIA GPU nodes")
    assert finding.notes[0].startswith("all carry the untolerated taint nvidia.com/gpu:NoSchedule (a100-0, ")
    assert "to spec.daemonsets.tolerations" in said(finding)


@pytest.mark.parametrize(
    "tolerations",
    [
        "",  # unset: the operands keep their own tolerations, which cover nvidia.com/gpu
        "    tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}",
    ],
)
def test_cluster_policy_that_tolerates_the_gpu_taint_or_keeps_the_defaults(stack, tolerations):
    assert by_rule(lint(CLUSTER_POLICY.replace("TOLERATIONS", tolerations), stack), RULE) == []


def test_a_command_line_over_the_bounds_is_not_read():
    # A component known by its command is not recognised from a line gpulint does not read (the same bound
    # as every rule that reads command lines: gpulint.kube.commandline.MAX_WORDS).
    nfd = {"name": "c", "image": "registry.k8s.io/nfd/node-feature-discovery:v0.16.0", "command": ["nfd-worker"]}
    assert stack_component({"containers": [{**nfd, "args": ["-v"] * (MAX_WORDS - 1)}]}) is not None
    assert stack_component({"containers": [{**nfd, "args": ["-v"] * MAX_WORDS}]}) is None
