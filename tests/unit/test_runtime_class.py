"""RuntimeClass: unknown classes and nodeSelector conflicts (runtime-class-unknown), the class's scheduling
in the scheduler model, and the gpu-runtime-class configuration key with its --fix."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml
from conftest import REPO, by_rule, lint_text, run_cli, said

from gpulint.kube.runtime_class import admit
from gpulint.lint.config import Config, ConfigError, from_mapping
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

STACK = str(REPO / "rules" / "inventories" / "gpu-stack")
UNKNOWN = "runtime-class-unknown"
MISSING = "gpu-runtime-class"
NVIDIA_CLASS = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "nvidia"},
    "handler": "nvidia",
    "scheduling": {
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    },
}


def lint(text: str, inventory=None, **config):
    return lint_text(text, "p.yaml", Config(**config), inventory)


def gpu_pod(extra: str = "", gpus: int = 1) -> str:
    spec = textwrap.indent(textwrap.dedent(extra).strip("\n"), "  ") + "\n" if extra.strip() else ""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: cuda, namespace: ml}\nspec:\n"
        f"{spec}"
        "  containers:\n  - name: cuda\n    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0\n"
        f"    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )


@pytest.fixture(scope="module")
def stack():
    return load_inventory([STACK])


@pytest.fixture
def tainted_pools(tmp_path):
    """Two tainted GPU pools (pool=gpu publishes 8 GPUs a node; pool=other too) and RuntimeClass nvidia."""

    def node(name, pool):
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pool": pool}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}},
        }

    items = [node("g0", "gpu"), node("g1", "gpu"), node("o0", "other"), NVIDIA_CLASS]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return load_inventory([str(path)])


# ----------------------------------------------------------------- the admission plugin's merge


def test_admit_merges_node_selector_and_tolerations_and_sets_overhead():
    runtime_class = {**NVIDIA_CLASS, "overhead": {"podFixed": {"cpu": "250m"}}}
    spec = {"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "x", "operator": "Exists"}]}
    admitted = admit(spec, runtime_class)
    assert admitted.conflict == ""
    assert admitted.spec["nodeSelector"] == {"zone": "a", "pool": "gpu"}
    assert [t["key"] for t in admitted.spec["tolerations"]] == ["x", "nvidia.com/gpu"]
    assert admitted.spec["overhead"] == {"cpu": "250m"}
    assert spec == {"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "x", "operator": "Exists"}]}


def test_admit_same_value_is_no_conflict_another_value_is():
    assert admit({"nodeSelector": {"pool": "gpu"}}, NVIDIA_CLASS).conflict == ""
    conflict = admit({"nodeSelector": {"pool": "cpu"}}, NVIDIA_CLASS)
    assert conflict.conflict == (
        "conflict: runtimeClass.scheduling.nodeSelector[pool] = gpu; pod.spec.nodeSelector[pool] = cpu"
    )
    assert conflict.conflict_key == "pool"


# ----------------------------------------------------------------- runtime-class-unknown


def test_unknown_runtime_class_is_rejected_with_the_admission_message(stack):
    (finding,) = by_rule(lint(gpu_pod("runtimeClassName: nvidia-container-runtime"), stack), UNKNOWN)
    assert finding.severity == Severity.ERROR
    assert (finding.line, finding.column) == (5, 21)
    assert (
        finding.message
        == 'the API server rejects this pod: pod rejected: RuntimeClass "nvidia-container-runtime" not found'
    )
    assert finding.notes == ("did you mean nvidia?", "RuntimeClasses in the cluster: nvidia")


def test_a_workloads_pods_are_rejected_not_the_workload(stack):
    deployment = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: vllm}
    spec:
      selector: {matchLabels: {app: vllm}}
      template:
        metadata: {labels: {app: vllm}}
        spec:
          runtimeClassName: kata-nvidia
          containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3}]
    """
    (finding,) = by_rule(lint(deployment, stack), UNKNOWN)
    assert "rejects every pod Deployment vllm creates (FailedCreate)" in finding.message
    assert "RuntimeClasses in the cluster: nvidia" in said(finding)


def test_without_runtime_classes_in_the_inventory_nothing_is_proven(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {nvidia.com/gpu: 1}}\n")
    assert by_rule(lint(gpu_pod("runtimeClassName: whatever"), load_inventory([str(nodes)])), UNKNOWN) == []
    assert by_rule(lint(gpu_pod("runtimeClassName: whatever")), UNKNOWN) == []


def test_a_runtime_class_in_the_linted_files_exists(stack):
    text = gpu_pod("runtimeClassName: kata") + "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\n"
    text += "metadata: {name: kata}\nhandler: kata-qemu\n"
    assert by_rule(lint(text, stack), UNKNOWN) == []


def test_node_selector_conflict_points_at_the_pods_entry(tainted_pools):
    (finding,) = by_rule(lint(gpu_pod("runtimeClassName: nvidia\nnodeSelector: {pool: other}"), tainted_pools), UNKNOWN)
    assert (finding.line, finding.column) == (6, 24)
    assert "conflict: runtimeClass.scheduling.nodeSelector[pool] = gpu; pod.spec.nodeSelector[pool] = other" in (
        finding.message
    )


# ----------------------------------------------------------------- the class's scheduling in the scheduler model


def test_the_runtime_class_tolerations_let_a_gpu_pod_past_the_taint(tainted_pools):
    assert by_rule(lint(gpu_pod("runtimeClassName: nvidia"), tainted_pools), "gpu-unschedulable") == []
    (without,) = by_rule(lint(gpu_pod(""), tainted_pools), "gpu-unschedulable")
    assert "node(s) had untolerated taint(s)" in without.notes[0]  # the scheduler's summary
    assert "carry the taint {nvidia.com/gpu: }" in " ".join(without.notes)


def test_the_runtime_class_node_selector_narrows_where_the_pod_fits(tainted_pools):
    (finding,) = by_rule(lint(gpu_pod("runtimeClassName: nvidia", gpus=8 * 3), tainted_pools), "gpu-unschedulable")
    assert (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient nvidia.com/gpu."
        in finding.notes[0]
    )


def test_a_daemonset_tolerating_only_through_its_runtime_class_gets_no_pod_on_the_gpu_nodes(stack):
    """The DaemonSet controller picks nodes by the pod template; the class's tolerations reach only the pods it
    makes (kubernetes/kubernetes#111590), so the tainted GPU nodes get no exporter."""
    daemonset = """
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: dcgm-exporter}
    spec:
      selector: {matchLabels: {app: dcgm-exporter}}
      template:
        metadata: {labels: {app: dcgm-exporter}}
        spec:
          runtimeClassName: nvidia
          containers: [{name: exporter, image: "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04"}]
    """
    found = by_rule(lint(daemonset, stack), "daemonset-coverage")
    # the controller's view, once: the coverage names the taint; the class's tolerations are not told again
    assert any("(DCGM exporter) selects 0 of 6 NVIDIA GPU nodes" in f.message for f in found), found
    assert not [f for f in found if "only RuntimeClass nvidia's scheduling.tolerations admit" in f.message], found
    tolerated = daemonset.replace(
        "runtimeClassName: nvidia",
        "runtimeClassName: nvidia\n          nodeSelector: {pool: gpu}\n"
        "          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
    )
    assert not [f for f in by_rule(lint(tolerated, stack), "daemonset-coverage") if "RuntimeClass" in f.message]
    (finding,) = by_rule(
        lint(daemonset.replace("runtimeClassName: nvidia", "hostPID: true"), stack), "daemonset-coverage"
    )
    assert "(DCGM exporter) selects 0 of 6 NVIDIA GPU nodes" in finding.message


# ----------------------------------------------------------------- gpu-runtime-class


def test_gpu_pod_without_the_configured_class_is_reported_with_a_fix():
    (finding,) = by_rule(lint(gpu_pod(""), gpu_runtime_class="nvidia"), MISSING)
    assert finding.severity == Severity.WARNING
    assert (finding.line, finding.column) == (5, 3)
    assert finding.fix is not None and finding.fix.value == "nvidia"


@pytest.mark.parametrize(
    "text",
    [
        gpu_pod("runtimeClassName: kata-nvidia"),  # a class chosen on purpose
        gpu_pod("runtimeClassName: nvidia"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: nginx}]\n",
    ],
)
def test_pods_with_a_class_or_without_gpus_are_left_alone(text):
    assert by_rule(lint(text, gpu_runtime_class="nvidia"), MISSING) == []


def test_without_the_configuration_key_the_rule_is_off():
    assert by_rule(lint(gpu_pod("")), MISSING) == []


def test_cli_fix_sets_the_runtime_class_in_each_template(write, tmp_path):
    (tmp_path / ".gpulint.yaml").write_text("gpu-runtime-class: nvidia\n")
    path = write(
        "job.yaml",
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          template:
            spec:
              restartPolicy: Never  # keep this comment
              containers:
              - name: train
                image: registry.example.com/train:1.0
                resources:
                  limits: {nvidia.com/gpu: 2}
        """,
    )
    result = run_cli("check", "--fix", "--select", MISSING, "--config", str(tmp_path / ".gpulint.yaml"), str(path))
    assert result.exit_code == 0, result.stdout
    fixed = path.read_text()
    assert yaml.safe_load(fixed)["spec"]["template"]["spec"]["runtimeClassName"] == "nvidia"
    assert "# keep this comment" in fixed
    again = run_cli("check", "--select", MISSING, "--config", str(tmp_path / ".gpulint.yaml"), str(path))
    assert again.exit_code == 0 and "gpu-runtime-class" not in again.stdout


@pytest.mark.parametrize("value", ["Nvidia", "", 3, ["nvidia"]])
def test_configuration_refuses_a_name_that_is_no_runtime_class(value):
    with pytest.raises(ConfigError, match="'gpu-runtime-class' must be the name of a RuntimeClass"):
        from_mapping({"gpu-runtime-class": value}, ".gpulint.yaml", set())


def test_configuration_reads_the_key():
    assert from_mapping({"gpu-runtime-class": "nvidia"}, ".gpulint.yaml", set()).gpu_runtime_class == "nvidia"
