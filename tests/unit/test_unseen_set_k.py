"""Causes of false findings met on set K of held-out public repositories (docs/precision.md, "Set K"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied): workloads of several pods that join one native PodGroup, and names a test script fills in."""

from __future__ import annotations

import textwrap

from conftest import errors_and_warnings, lint_text, said

from gpulint.lint.findings import Severity

# JobSet's workload-aware scheduling examples: a JobSet whose pods join a scheduling.k8s.io PodGroup by
# `schedulingGroup`, beside a second example (another folder) whose JobSet joins a group of the same name.
PODGROUP = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: trainers-workers
  namespace: default
spec:
  schedulingPolicy:
    gang:
      minCount: %d
"""

JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: %s
  namespace: default
spec:
  replicatedJobs:
  - name: workers
    replicas: %d
    template:
      spec:
        completions: 2
        parallelism: 2
        template:
          spec:
            schedulingGroup:
              podGroupName: trainers-workers
            containers:
            - name: worker
              image: registry.example.com/trainer:2.1
              resources:
                requests: {cpu: "4"}
"""


def _gang_findings(minimum: int, *jobsets: tuple[str, int]) -> list:
    text = "---".join([PODGROUP % minimum, *(JOBSET % jobset for jobset in jobsets)])
    return [f for f in lint_text(text) if f.rule == "gang-inconsistent"]


def test_a_jobset_alone_in_its_group_counts_its_pods():
    assert _gang_findings(6, ("trainer", 3)) == []  # 3 jobs x 2 pods


def test_each_workload_that_joins_a_group_counts_all_its_pods():
    """Two JobSets (3 x 2 and 2 x 2 pods) join one PodGroup of minCount 6: each was counted as one pod, and
    the group 'required 6 pods but the 2 objects that join it create only 2'."""
    assert _gang_findings(6, ("trainer", 3), ("tas-trainer", 2)) == []


def test_workloads_that_join_a_group_with_too_few_pods_are_still_reported():
    (finding,) = _gang_findings(12, ("trainer", 3), ("tas-trainer", 2))
    assert said(finding).startswith(
        "PodGroup trainers-workers: its group requires 12 pods at once but the 2 objects that join it create only 10"
    ), said(finding)


def test_pods_of_one_group_still_count_one_each():
    pod = textwrap.dedent("""
        apiVersion: v1
        kind: Pod
        metadata: {name: member-%d, namespace: default}
        spec:
          schedulingGroup: {podGroupName: trainers-workers}
          containers:
          - {name: worker, image: registry.example.com/trainer:2.1}
        """)
    text = "---".join([PODGROUP % 3, *(pod % i for i in range(2))])
    (finding,) = [f for f in lint_text(text) if f.rule == "gang-inconsistent"]
    assert "the 2 objects that join it create only 2" in said(finding)


# NVIDIA's DRA driver's bats tests: one Pod spec a test copies N times, `sed "s/__INDEX__/${i}/g"`, before it
# applies them; the file's comment says the index is filled in.
STRESS_POD = """
# Pod referencing a shared claim; the test writes one copy per index.
apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  containers:
  - name: ctr
    image: ubuntu:24.04
    command: ["bash", "-lc", "nvidia-smi -L; sleep 60"]
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimName: shared-gpu
"""


def _serious(text: str) -> list[tuple]:
    return errors_and_warnings(lint_text(text), ("rule", "line"))


def test_a_double_underscore_fill_in_in_a_name_is_a_placeholder():
    findings = lint_text(STRESS_POD % "stress-pod-__INDEX__")
    assert [(f.rule, f.severity, f.line) for f in findings] == [("not-rendered", Severity.INFO, 5)]
    assert said(findings[0]).startswith("template: __INDEX__ is a placeholder")


def test_a_double_underscore_fill_in_where_a_number_goes_is_a_placeholder():
    text = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bench}
        spec:
          replicas: __REPLICAS__
          selector: {matchLabels: {app: bench}}
          template:
            metadata: {labels: {app: bench}}
            spec:
              containers:
              - {name: bench, image: registry.example.com/bench:1.0}
        """
    assert _serious(text) == []


def test_a_pod_with_a_plain_name_is_still_checked():
    assert _serious(STRESS_POD % "stress-pod-0") == []


def test_names_kubernetes_refuses_are_still_refused():
    # lower-case dunders, single underscores and capitals are written names, not fill-ins
    for name in ("stress-pod-__index__", "stress_pod", "Stress-Pod", "stress-pod-_INDEX_"):
        assert ("api-rejected", 5) in _serious(STRESS_POD % name), name


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: default}
spec:
  replicas: %s
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      schedulingGroup: {podGroupName: trainers-workers}
      containers:
      - {name: server, image: registry.example.com/server:1.0}
"""


def test_a_pod_count_not_written_is_no_evidence_of_too_few_pods():
    """`replicas: ${REPLICAS}` (envsubst): the count is unknown, not 0, alone or beside another joiner."""
    for joiners in (("a",), ("a", "b")):
        text = "---".join([PODGROUP % 2, *(DEPLOYMENT % (name, "${REPLICAS}") for name in joiners)])
        assert [f for f in lint_text(text) if f.rule == "gang-inconsistent"] == [], joiners
    text = "---".join([PODGROUP % 4, DEPLOYMENT % ("a", "1"), DEPLOYMENT % ("b", "2")])
    (finding,) = [f for f in lint_text(text) if f.rule == "gang-inconsistent"]
    assert "the 2 objects that join it create only 3" in said(finding)
