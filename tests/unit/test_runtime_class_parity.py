"""A pod naming a RuntimeClass: runtime-class-unknown's error and `explain`'s "RuntimeClass" step read one
RuntimeClassVerdict (issue #30). A vLLM Deployment naming nvidia, the handler's name nvidia-container-runtime
(a common chart default), a typo, or nothing; with or without a nodeSelector the class's contradicts; against
an inventory listing the RuntimeClass nvidia (GPU nodes tainted nvidia.com/gpu:NoSchedule, as GPU feature
discovery labels them) or listing no RuntimeClass (nothing is proven absent)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      RUNTIME
      SELECTOR
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: [--model, Qwen/Qwen2.5-7B-Instruct]
        resources:
          limits: {nvidia.com/gpu: 1}
"""
NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-0
    labels: {kubernetes.io/hostname: a100-0, kubernetes.io/os: linux, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8"}
  spec:
    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  status:
    capacity: {cpu: "128", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
    allocatable: {cpu: "126", memory: 1000Gi, pods: "110", nvidia.com/gpu: "8"}
"""
RUNTIME_CLASS = """\
- apiVersion: node.k8s.io/v1
  kind: RuntimeClass
  metadata: {name: nvidia}
  handler: nvidia
  scheduling:
    nodeSelector: {nvidia.com/gpu.present: "true"}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
"""
SELECTORS = {
    "none": "",
    "agrees": 'nodeSelector: {nvidia.com/gpu.present: "true"}',
    "contradicts": 'nodeSelector: {nvidia.com/gpu.present: "false"}',
}


def _run(write, name: str, selector: str, listed: bool) -> tuple[list[dict], list[dict]]:
    runtime = f"runtimeClassName: {name}" if name else ""
    path = write("repo/vllm.yaml", DEPLOYMENT.replace("RUNTIME", runtime).replace("SELECTOR", SELECTORS[selector]))
    inventory = write("inventory/nodes.yaml", NODES + (RUNTIME_CLASS if listed else ""))
    checked = run_cli("check", str(path), "--inventory", str(inventory), "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", str(inventory), "--format", "json")
    assert explained.exit_code == checked.exit_code, explained.stderr  # 1: an error among the findings
    (explanation,) = json.loads(explained.stdout)["explanations"]
    steps = [step for step in explanation["steps"] if step["title"] == "RuntimeClass"]
    return [f for f in checked.json()["findings"] if f["rule"] == "runtime-class-unknown"], steps


@pytest.mark.parametrize("listed", [False, True])
@pytest.mark.parametrize("selector", sorted(SELECTORS))
@pytest.mark.parametrize("name", ["nvidia", "nvidia-container-runtime", "nvidai", ""])
def test_the_runtime_class_step_fails_exactly_where_check_rejects_the_pod(write, name, selector, listed):
    findings, steps = _run(write, name, selector, listed)
    if not name:
        assert findings == [] and steps == []  # no class named: no admission step
        return
    (step,) = steps
    assert (step["status"] == "FAIL") == bool(findings), (findings, step)


def test_the_handlers_name_is_rejected_naming_the_class_it_meant(write):
    (finding,), (step,) = _run(write, "nvidia-container-runtime", "none", listed=True)
    assert finding["message"].endswith('pod rejected: RuntimeClass "nvidia-container-runtime" not found')
    assert finding["notes"] == ["did you mean nvidia?", "RuntimeClasses in the cluster: nvidia"]
    assert step == {
        "title": "RuntimeClass",
        "status": "FAIL",
        "lines": [
            'pod rejected: RuntimeClass "nvidia-container-runtime" not found (did you mean nvidia?)',
            "RuntimeClasses in the cluster: nvidia",
        ],
    }


def test_a_contradicting_node_selector_is_the_plugins_conflict_in_both(write):
    (finding,), (step,) = _run(write, "nvidia", "contradicts", listed=True)
    conflict = "conflict: runtimeClass.scheduling.nodeSelector[nvidia.com/gpu.present] = true; "
    conflict += "pod.spec.nodeSelector[nvidia.com/gpu.present] = false"
    assert conflict.startswith(finding["message"].split("(FailedCreate): ")[1])  # the rest in the json's detail
    assert step["status"] == "FAIL" and step["lines"] == [f"pod rejected: {conflict}"]


def test_an_inventory_listing_no_runtime_class_proves_nothing_absent(write):
    """The trap: without the cluster's RuntimeClasses, a class the inventory does not hold may exist."""
    findings, (step,) = _run(write, "nvidia-container-runtime", "none", listed=False)
    assert findings == []
    assert step["status"] == "info"
    assert "whether it exists is not known" in step["lines"][0]


def test_the_class_that_exists_passes(write):
    findings, (step,) = _run(write, "nvidia", "agrees", listed=True)
    assert findings == []
    assert step == {
        "title": "RuntimeClass",
        "status": "ok",
        "lines": ["RuntimeClass nvidia exists; its scheduling and overhead join the pod"],
    }
