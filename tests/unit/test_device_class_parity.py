"""A claim naming a DeviceClass the cluster does not define: device-class-unknown's error, and `explain`'s DRA
steps fail with it instead of reporting the allocator's answer for a class it does not know (issue #30). The
cluster's classes are known whole only when the inventory lists them: without, no step fails."""

from __future__ import annotations

import json
import textwrap

from conftest import DATA, run_cli
from support.manifests import TWO_CLAIM_POD

DRA = DATA / "dra"
ABSENT = "DeviceClass 'gpu.nvidia' does not exist: the scheduler leaves the pod Pending with \"device class gpu.nvidia does not exist\""


def _templates(second_class: str) -> str:
    """Two claim templates (a: one GPU of gpu.nvidia.com, b: one of ``second_class``) and the pod naming both."""
    return (
        textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {{name: a, namespace: ml}}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly: {{deviceClassName: gpu.nvidia.com}}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {{name: b, namespace: ml}}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly: {{deviceClassName: {second_class}}}
        ---
        """)
        + TWO_CLAIM_POD
    )


def _run(write, manifest: str, *inventory: str) -> tuple[list[dict], dict[str, dict]]:
    path = write("repo/claims.yaml", manifest)
    given = [arg for name in inventory for arg in ("--inventory", str(DRA / name))]
    checked = run_cli("check", str(path), *given, "--format", "json")
    explained = run_cli("explain", str(path), *given, "--format", "json")
    assert checked.exit_code == explained.exit_code, explained.stderr
    steps = {
        f"{e['heading']}: {step['title']}": step
        for e in json.loads(explained.stdout)["explanations"]
        for step in e["steps"]
        if step["title"] != "gpulint check"
    }
    return [f for f in checked.json()["findings"] if f["rule"] == "device-class-unknown"], steps


def test_a_class_the_cluster_does_not_define_fails_the_claim_and_pod_steps_check_reports(write):
    findings, steps = _run(write, _templates("gpu.nvidia"), "nodes.yaml", "slices.yaml", "classes.yaml")
    (finding,) = findings
    assert finding["severity"] == "error" and finding["object"]["name"] == "b"
    assert finding["message"] == ABSENT
    assert steps["ResourceClaimTemplate/ml/b: DRA allocation"] == {
        "title": "DRA allocation",
        "status": "FAIL",
        "lines": [ABSENT],
    }
    assert steps["ResourceClaimTemplate/ml/a: DRA allocation"]["status"] == "ok"
    pod = steps["Pod/ml/p (1 pod): DRA claims"]
    assert pod["status"] == "FAIL" and pod["lines"][-1] == ABSENT


def test_classes_the_cluster_defines_pass_both_steps_and_check_is_silent(write):
    findings, steps = _run(write, _templates("gpu.nvidia.com"), "nodes.yaml", "slices.yaml", "classes.yaml")
    assert findings == []
    assert steps["ResourceClaimTemplate/ml/b: DRA allocation"]["status"] == "ok"
    assert steps["Pod/ml/p (1 pod): DRA claims"]["status"] == "ok"


def test_an_inventory_without_the_clusters_classes_proves_no_class_absent_trap(write):
    """Nodes and ResourceSlices but no DeviceClass list: a driver may install gpu.nvidia; check says so as info."""
    findings, steps = _run(write, _templates("gpu.nvidia"), "nodes.yaml", "slices.yaml")
    assert {f["severity"] for f in findings} == {"info"}
    assert ABSENT not in steps["ResourceClaimTemplate/ml/b: DRA allocation"]["lines"]
    assert steps["ResourceClaimTemplate/ml/b: DRA allocation"]["status"] != "FAIL"
    assert ABSENT not in steps["Pod/ml/p (1 pod): DRA claims"]["lines"]


# NVIDIA's DRA driver's IMEX channel example: the ComputeDomain's controller makes the template, with the
# channel class its driver installs
COMPUTE_DOMAIN = """\
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex-channel-injection, namespace: ml}
spec:
  numNodes: 1
  channel:
    resourceClaimTemplate:
      name: imex-channel-0
---
apiVersion: v1
kind: Pod
metadata: {name: imex-channel-injection, namespace: ml}
spec:
  containers:
  - name: ctr
    image: ubuntu:22.04
    command: ["bash", "-c"]
    args: ["ls -la /dev/nvidia-caps-imex-channels; trap 'exit 0' TERM; sleep 9999 & wait"]
    resources:
      claims:
      - name: imex-channel-0
  resourceClaims:
  - name: imex-channel-0
    resourceClaimTemplateName: imex-channel-0
"""


def test_a_compute_domains_channel_template_is_not_judged_by_its_class_trap(write):
    """The inventory lists DeviceClasses without the channel class: check judges no linted claim, and the pod's
    DRA step does not say the driver's class is missing."""
    findings, steps = _run(write, COMPUTE_DOMAIN, "nodes.yaml", "slices.yaml", "classes.yaml")
    assert findings == []
    dra = steps["Pod/ml/imex-channel-injection (1 pod): DRA claims"]
    assert not any("does not exist" in line for line in dra["lines"])
