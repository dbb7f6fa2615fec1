"""Causes of false findings met on set K of held-out public repositories (docs/precision.md, "Set K"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied): workloads of several pods that join one native PodGroup, and names a test script fills in."""

from __future__ import annotations

import textwrap

from conftest import lint_text, said

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
