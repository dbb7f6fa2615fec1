"""The DRA and gang rules word the verdicts `explain` shows (issue #30 step 1): claim-unsatisfiable reads the
DraVerdict and ClaimVerdict of explain's DRA steps, gang-unsatisfiable and over-tight-topology the GangAnswer
of its gang step. Each case runs both commands on one file and one inventory."""

from __future__ import annotations

import json
import textwrap

from conftest import DATA, run_cli
from support.manifests import TWO_CLAIM_POD

DRA = str(DATA / "dra")
RACKS = str(DATA / "racks")


def _run(path, inventory: str) -> tuple[list[dict], dict[str, dict]]:
    checked = run_cli("check", str(path), "--inventory", inventory, "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", inventory, "--format", "json")
    assert checked.exit_code in (0, 1) and explained.exit_code == checked.exit_code, explained.stderr
    steps: dict[str, dict] = {}
    for explanation in json.loads(explained.stdout)["explanations"]:
        for step in explanation["steps"]:
            steps.setdefault(f"{explanation['heading']}: {step['title']}", step)
    return checked.json()["findings"], steps


def _claims(count: int) -> str:
    templates = "".join(
        f"""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {{name: {name}, namespace: ml}}
        spec:
          spec:
            devices:
              requests:
              - name: gpus
                exactly: {{deviceClassName: gpu.nvidia.com, count: {count}}}
        ---"""
        for name in ("a", "b")
    )
    return textwrap.dedent(templates) + "\n" + TWO_CLAIM_POD


def test_claims_that_fit_no_node_together_fail_the_dra_step_check_reports(write):
    """6 + 6 GPUs: each template fits a node of 8 alone, the pod's two claims fit none together."""
    findings, steps = _run(write("pod.yaml", _claims(6)), DRA)
    (finding,) = [f for f in findings if f["rule"] == "claim-unsatisfiable"]
    assert finding["message"].startswith("the pod's claims cannot be allocated together on one node: no node of ")
    dra = steps["Pod/ml/p (1 pod): DRA claims"]
    assert dra["status"] == "FAIL"
    # the same allocator answer: the closest node and its reason, counted over every node in explain
    detail = finding["notes"][-1]
    assert any(detail in line for line in dra["lines"]), (detail, dra["lines"])


def test_claims_that_fit_together_pass_the_dra_step_and_check_is_silent(write):
    findings, steps = _run(write("pod.yaml", _claims(2)), DRA)
    assert [f for f in findings if f["rule"] == "claim-unsatisfiable"] == []
    assert steps["Pod/ml/p (1 pod): DRA claims"]["status"] == "ok"
    assert steps["ResourceClaimTemplate/ml/a: DRA allocation"]["status"] == "ok"


def test_a_claim_template_no_node_holds_fails_its_step_check_reports(write):
    findings, steps = _run(write("pod.yaml", _claims(16)), DRA)
    reported = [f for f in findings if f["rule"] == "claim-unsatisfiable"]
    # each template's own finding; the pod's claims are not judged together once one alone cannot fit
    assert sorted(f["object"]["name"] for f in reported) == ["a", "b"]
    step = steps["ResourceClaimTemplate/ml/a: DRA allocation"]
    assert step["status"] == "FAIL"
    assert step["lines"][-1] == "the claim can never be allocated: " + reported[0]["message"].split(": ", 1)[1] + (
        ": " + reported[0]["notes"][0] if reported[0]["notes"] else ""
    )


def _gang(workers: int) -> str:
    return textwrap.dedent(f"""
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {{name: llm, namespace: ml}}
        spec:
          minAvailable: {workers}
          schedulerName: volcano
          tasks:
          - name: worker
            replicas: {workers}
            template:
              metadata:
                annotations: {{kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack}}
              spec:
                containers:
                - name: w
                  image: registry.example.com/llm:1.0
                  resources: {{limits: {{nvidia.com/gpu: 8}}}}
        """)


def test_a_gang_its_topology_makes_unplaceable_fails_the_gang_step_check_reports_once(write):
    """5 workers x 8 GPUs in one rack: the best rack holds 4, the cluster more."""
    findings, steps = _run(write("job.yaml", _gang(5)), RACKS)
    (finding,) = [f for f in findings if f["rule"] in ("gang-unsatisfiable", "over-tight-topology")]
    assert finding["rule"] == "gang-unsatisfiable"
    assert any("is the cause: the cluster as a whole could hold the gang" in note for note in finding["notes"])
    gang = steps["Job/ml/llm, 'worker' pod template (5 pods): Gang and topology"]
    assert gang["status"] == "FAIL"
    assert f"  cannot be placed: {finding['message']}" in gang["lines"]


def test_a_gang_only_one_rack_holds_is_info_in_the_gang_step_as_check_warns(write):
    findings, steps = _run(write("job.yaml", _gang(4)), RACKS)
    assert [f for f in findings if f["rule"] == "gang-unsatisfiable"] == []
    # only r1 holds it: over-tight-topology's warning, which the gang step says too
    (tight,) = [f for f in findings if f["rule"] == "over-tight-topology"]
    gang = steps["Job/ml/llm, 'worker' pod template (4 pods): Gang and topology"]
    assert gang["status"] == "info"
    assert f"  {tight['message']}" in gang["lines"]


KUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: l40s}
spec:
  nodeLabels: {kubernetes.io/hostname: l40s-0}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: l40s
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 512Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: ml}
spec: {clusterQueue: cluster-queue}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, count: %d}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: infer
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: gpus}
      containers:
      - name: c
        image: registry.example.com/infer:1.0
        resources:
          requests: {cpu: "1"}
          claims: [{name: gpus}]
"""


def test_a_queued_pods_claim_is_judged_on_its_flavors_nodes_as_explain_shows(write):
    """Kueue's flavor puts the pods on l40s-0 (4 GPUs): a 6-GPU claim fits dgx-0 and dgx-1, never there."""
    findings, steps = _run(write("job.yaml", KUEUE % 6), DRA)
    (finding,) = [f for f in findings if f["rule"] == "claim-unsatisfiable"]
    assert finding["object"]["kind"] == "Job"
    assert finding["message"].startswith("the pod's claim cannot be allocated on any node the pod may use")
    assert "allow 1 of the 5 nodes" in finding["notes"][0]
    assert steps["Job/ml/infer (1 pod): DRA claims"]["status"] == "FAIL"


def test_a_queued_pods_claim_its_flavors_node_holds(write):
    findings, steps = _run(write("job.yaml", KUEUE % 4), DRA)
    assert [f for f in findings if f["rule"] == "claim-unsatisfiable"] == []
    assert steps["Job/ml/infer (1 pod): DRA claims"]["status"] == "ok"
