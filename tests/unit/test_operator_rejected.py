"""operator-rejected: what Kueue's RayJob/RayCluster webhooks (kubernetes-sigs/kueue v0.19.2) and Volcano's
job webhook (volcano-sh/volcano v1.15.1 admit_job.go) refuse. Manifests shaped like KubeRay's and Kueue's
samples (ray-job.sample.yaml, site/content/en/docs/tasks/run/rayjobs) and Volcano's (example/)."""

from __future__ import annotations

from rule_harness import findings_of

RULE = "operator-rejected"

RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-sample
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: local-queue
spec:
  entrypoint: python /home/ray/samples/sample_code.py
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    rayVersion: '2.41.0'
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.41.0
    workerGroupSpecs:
    - groupName: small-group
      replicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.41.0
            resources:
              limits:
                nvidia.com/gpu: 1
"""

RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: raycluster-kuberay
  labels:
    kueue.x-k8s.io/queue-name: local-queue
spec:
  enableInTreeAutoscaling: true
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.41.0
  workerGroupSpecs:
  - groupName: workergroup
    replicas: 1
    minReplicas: 1
    maxReplicas: 4
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.41.0
"""


def messages(text: str, **kwargs) -> list[str]:
    return [f"{f.line}:{f.column} {f.message}" for f in findings_of(RULE, text, **kwargs)]


def test_a_queued_rayjob_that_keeps_its_cluster_is_refused():
    broken = RAYJOB.replace("  shutdownAfterJobFinishes: true\n", "  shutdownAfterJobFinishes: false\n")
    (finding,) = findings_of(RULE, broken)
    assert (finding.line, finding.column, finding.severity) == (10, 29, "error")
    assert finding.message == (
        "Kueue's webhook rejects this RayJob: spec.shutdownAfterJobFinishes: Invalid value: false: "
        "a kueue managed job should delete the cluster after finishing"
    )
    # unset is Go's false: the same refusal, at the spec
    (finding,) = findings_of(RULE, RAYJOB.replace("  shutdownAfterJobFinishes: true\n", ""))
    assert finding.line == 9 and "spec.shutdownAfterJobFinishes: Invalid value: false" in finding.message
    assert findings_of(RULE, RAYJOB) == []


def test_a_rayjob_not_queued_is_not_kueues_to_refuse():
    unqueued = RAYJOB.replace("  labels:\n    kueue.x-k8s.io/queue-name: local-queue\n", "")
    assert (
        findings_of(RULE, unqueued.replace("shutdownAfterJobFinishes: true", "shutdownAfterJobFinishes: false")) == []
    )
    # the label written as an annotation is not read either
    annotated = RAYJOB.replace("  labels:\n", "  annotations:\n").replace("true\n", "false\n", 1)
    assert findings_of(RULE, annotated) == []


def test_cluster_selector_and_cluster_spec():
    both = RAYJOB.replace("  rayClusterSpec:\n", "  clusterSelector:\n    ray.io/cluster: shared\n  rayClusterSpec:\n")
    (finding,) = findings_of(RULE, both)
    assert "spec.clusterSelector: Invalid value:" in finding.message
    assert "a kueue managed job should not use an existing cluster" in finding.message
    # an existing cluster alone: Kueue does not manage the RayJob (v0.19), no refusal
    selector_only = (
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: on-shared\n  labels:\n"
        "    kueue.x-k8s.io/queue-name: local-queue\nspec:\n  entrypoint: python job.py\n"
        "  clusterSelector:\n    ray.io/cluster: shared\n"
    )
    assert findings_of(RULE, selector_only) == []
    neither = selector_only.replace(
        "  clusterSelector:\n    ray.io/cluster: shared\n", "  shutdownAfterJobFinishes: true\n"
    )
    (finding,) = findings_of(RULE, neither)
    assert "spec.rayClusterSpec: Required value: rayClusterSpec is required for Kueue-managed jobs" in finding.message


def test_autoscaling_head_group_name_and_pod_set_count():
    autoscaled = RAYJOB.replace(
        "    rayVersion: '2.41.0'\n", "    rayVersion: '2.41.0'\n    enableInTreeAutoscaling: true\n"
    )
    (finding,) = findings_of(RULE, autoscaled)
    assert "a kueue managed job should only use autoscaling when workload slicing is enabled" in (finding.message)
    elastic = autoscaled.replace("  labels:\n", '  annotations:\n    kueue.x-k8s.io/elastic-job: "true"\n  labels:\n')
    assert findings_of(RULE, elastic) == []
    head = RAYJOB.replace("groupName: small-group", "groupName: head")
    (finding,) = findings_of(RULE, head)
    assert (finding.line, finding.column) == (21, 18)
    assert 'spec.rayClusterSpec.workerGroupSpecs[0].groupName: Forbidden: "head" is reserved for the head group' in (
        finding.message
    )
    group = RAYJOB[RAYJOB.index("    - groupName: small-group") :]
    many = RAYJOB + "".join(group.replace("small-group", f"group-{i}") for i in range(17))
    (finding,) = findings_of(RULE, many)
    assert "spec.rayClusterSpec.workerGroupSpecs: Too many: 19: must have at most 18 items" in (finding.message)
    assert findings_of(RULE, RAYJOB + "".join(group.replace("small-group", f"g{i}") for i in range(16))) == []


def test_a_queued_autoscaling_raycluster_is_refused_unless_elastic():
    (finding,) = findings_of(RULE, RAYCLUSTER)
    assert finding.line == 8
    assert "a kueue-managed RayCluster can use autoscaling only as an elastic job" in (finding.message)
    fixed = RAYCLUSTER.replace("  enableInTreeAutoscaling: true\n", "")
    assert findings_of(RULE, fixed) == []
    elastic = RAYCLUSTER.replace("  labels:\n", '  annotations:\n    kueue.x-k8s.io/elastic-job: "true"\n  labels:\n')
    assert findings_of(RULE, elastic) == []
    # a RayCluster needs no shutdown setting: that is a RayJob's
    assert all("shutdown" not in m for m in messages(RAYCLUSTER))


def test_a_kueue_configuration_without_the_ray_integrations_registers_no_ray_webhook():
    config = (
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
        "integrations:\n  frameworks:\n  - batch/job\n---\n"
    )
    assert findings_of(RULE, config + RAYCLUSTER) == []
    with_ray = config.replace("  - batch/job\n", "  - batch/job\n  - ray.io/raycluster\n")
    assert len(findings_of(RULE, with_ray + RAYCLUSTER)) == 1


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mpi-job
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    ssh: []
    svc: []
    mpi: ["--master=mpimaster", "--worker=mpiworker", "--port=22"]
  tasks:
  - replicas: 1
    name: mpimaster
    template:
      spec:
        containers:
        - name: mpimaster
          image: volcanosh/example-mpi:0.0.3
          command: ["/bin/sh", "-c", "mpiexec --allow-run-as-root --hostfile /etc/volcano/mpiworker.host -np 2 mpi_hello_world"]
  - replicas: 2
    name: mpiworker
    template:
      spec:
        containers:
        - name: mpiworker
          image: volcanosh/example-mpi:0.0.3
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_volcano_job_webhook():
    assert findings_of(RULE, VOLCANO) == []
    (finding,) = findings_of(RULE, VOLCANO.replace("--master=mpimaster", "--master=launcher"))
    assert finding.message == "Volcano's webhook rejects this Job: The specified mpi master task was not found"
    assert finding.line == 11
    # without --master the plugin looks for a task named master
    (finding,) = findings_of(RULE, VOLCANO.replace('"--master=mpimaster", ', ""))
    assert "mpi master task was not found" in finding.message
    duplicated = VOLCANO.replace("name: mpiworker\n    template", "name: mpimaster\n    template")
    (finding,) = findings_of(RULE, duplicated)
    assert finding.message == "Volcano's webhook rejects this Job: duplicated task name mpimaster;"
    assert finding.line == 22
    too_few = VOLCANO.replace(
        "  - replicas: 2\n    name: mpiworker\n", "  - replicas: 2\n    minAvailable: 3\n    name: mpiworker\n"
    )
    (finding,) = findings_of(RULE, too_few)
    assert "'minAvailable' is greater than 'replicas' in task: mpiworker, job: mpi-job;" in finding.message
    typo = VOLCANO.replace("    svc: []\n", "    svc: []\n    pytorh: []\n")
    (finding,) = findings_of(RULE, typo)
    assert finding.message == "Volcano's webhook rejects this Job: unable to find job plugin: pytorh;"
    assert findings_of(RULE, VOLCANO.replace("    svc: []\n", "    svc: []\n    pytorch: []\n    env: []\n")) == []


def test_a_batch_job_is_not_volcanos():
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: pi\n        image: perl:5.34\n"
    )
    assert findings_of(RULE, job) == []


JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: NAME
spec:
  successPolicy:
    operator: All
    targetReplicatedJobs:
    - workers
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: driver
              image: python:3.12
  - name: workers
    replicas: 4
    dependsOn:
    - name: driver
      status: Ready
    template:
      spec:
        completionMode: Indexed
        completions: 2
        parallelism: 2
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: worker
              image: nvcr.io/nvidia/pytorch:24.05-py3
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


def jobset(name: str = "llama-pretrain") -> str:
    return JOBSET.replace("NAME", name)


def test_jobset_names_its_jobs_and_pods_within_63_characters():
    assert findings_of(RULE, jobset()) == []
    # workers: <name>-workers-3 fits at 63 characters, its pods <job>-1-abcde do not
    name = "x" * (63 - len("-workers-3"))
    (finding,) = findings_of(RULE, jobset(name))
    assert (finding.line, finding.column) == (21, 11)
    assert "pod names generated for this JobSet will exceed 63 characters" in finding.message
    longer = "x" * 60
    found = findings_of(RULE, jobset(longer))
    assert [f.line for f in found] == [11, 21, 21]  # driver's job name; workers' job and pod names
    assert "job names generated for this JobSet will exceed 63 characters" in found[0].message
    # JobSet's defaulting webhook makes a Job with no completionMode Indexed: its pod names are checked the same
    (unwritten,) = findings_of(RULE, jobset(name).replace("        completionMode: Indexed\n", ""))
    assert "pod names generated for this JobSet will exceed 63 characters" in unwritten.message
    assert findings_of(RULE, jobset(name).replace("completionMode: Indexed", "completionMode: NonIndexed")) == []
    # the fixed twin: a shorter name
    assert findings_of(RULE, jobset("x" * 40)) == []
    # no name (generateName): nothing to judge
    assert findings_of(RULE, JOBSET.replace("  name: NAME\n", "  generateName: run-\n")) == []


def test_jobset_references_between_replicated_jobs():
    first = jobset().replace(
        "  - name: driver\n    replicas: 1\n",
        "  - name: driver\n    replicas: 1\n    dependsOn:\n    - {name: workers, status: Complete}\n",
    )
    found = findings_of(RULE, first)
    assert "DependsOn can't be set for the first ReplicatedJob" in found[0].message
    assert "replicatedJob: driver cannot depend on replicatedJob: workers" in found[1].message
    typo = jobset().replace("    - name: driver\n      status: Ready", "    - name: drivers\n      status: Ready")
    (finding,) = findings_of(RULE, typo)
    assert finding.message == (
        "JobSet's webhook rejects this JobSet: replicatedJob: workers cannot depend on replicatedJob: drivers"
    )
    target = jobset().replace("    targetReplicatedJobs:\n    - workers", "    targetReplicatedJobs:\n    - worker")
    (finding,) = findings_of(RULE, target)
    assert "invalid replicatedJob name 'worker' does not appear in .spec.ReplicatedJobs" in finding.message
    failure = jobset().replace(
        "  replicatedJobs:\n",
        "  failurePolicy:\n    maxRestarts: 3\n    rules:\n    - name: fail_driver\n      action: FailJobSet\n"
        "      targetReplicatedJobs: [launcher]\n  replicatedJobs:\n",
    )
    (finding,) = findings_of(RULE, failure)
    assert "invalid replicatedJob name 'launcher' in failure policy does not appear" in finding.message
    coordinator = jobset().replace(
        "  replicatedJobs:\n", "  coordinator:\n    replicatedJob: leader\n  replicatedJobs:\n"
    )
    (finding,) = findings_of(RULE, coordinator)
    assert "coordinator replicatedJob leader does not exist" in finding.message
    fixed = coordinator.replace("replicatedJob: leader", "replicatedJob: workers")
    assert findings_of(RULE, fixed) == []


def test_jobset_failure_policy_rules_coordinator_and_subdomain():
    """jobset v0.12.0 jobset_webhook.go: validateFailurePolicy (v0.6.0 on: rule names, unnamed ones named
    failurePolicyRule<index> by the defaulting webhook; the Job reasons), validateCoordinator, the subdomain."""

    def with_spec(lines: str) -> str:
        return jobset().replace("spec:\n  successPolicy:", "spec:\n" + lines + "  successPolicy:", 1)

    rules = (
        "  failurePolicy:\n    maxRestarts: 3\n    rules:\n"
        "    - name: restart-on-preemption\n      action: RestartJobSet\n"
        "      onJobFailureReasons: [PodFailurePolicy]\n"
        "    - action: FailJobSet\n      onJobFailureReasons: [BackoffLimitExceeded]\n"
    )
    (finding,) = findings_of(RULE, with_spec(rules))
    assert "invalid failure policy rule name 'restart-on-preemption', a failure policy rule name must start" in (
        finding.message
    )  # a dash is not among the characters a rule name may hold
    fixed = rules.replace("restart-on-preemption", "restart_on_preemption")
    assert findings_of(RULE, with_spec(fixed)) == []
    (finding,) = findings_of(RULE, with_spec(fixed.replace("[BackoffLimitExceeded]", "[OOMKilled]")))
    assert finding.message.endswith(
        "invalid job failure reason 'OOMKilled' in failure policy is not a recognized job failure reason"
    )
    twice = fixed.replace("    - action: FailJobSet\n", "    - name: restart_on_preemption\n      action: FailJobSet\n")
    (finding,) = findings_of(RULE, with_spec(twice))
    assert finding.message.endswith(
        "rule names are not unique, rules with indices [0 1] all have the same name 'restart_on_preemption'"
    )

    coordinator = "  coordinator:\n    replicatedJob: workers\n    jobIndex: 0\n    podIndex: 0\n"
    assert findings_of(RULE, with_spec(coordinator)) == []
    (finding,) = findings_of(RULE, with_spec(coordinator.replace("jobIndex: 0", "jobIndex: 4")))
    assert finding.message.endswith("coordinator job index 4 is invalid for replicatedJob workers")
    (finding,) = findings_of(RULE, with_spec(coordinator.replace("podIndex: 0", "podIndex: 2")))
    assert finding.message.endswith("coordinator pod index 2 is invalid for replicatedJob workers job index 0")
    (finding,) = findings_of(RULE, with_spec(coordinator.replace("workers", "driver")))
    assert finding.message.endswith(
        "job for coordinator pod must be indexed completion mode, and completions number must be set"
    )
    # JobSet's defaulting webhook makes a Job with no completionMode Indexed (jobset/examples/simple/coordinator.yaml)
    unwritten = jobset().replace("        completionMode: Indexed\n", "")
    assert (
        findings_of(RULE, unwritten.replace("spec:\n  successPolicy:", "spec:\n" + coordinator + "  successPolicy:", 1))
        == []
    )
    non_indexed = jobset().replace("completionMode: Indexed", "completionMode: NonIndexed")
    assert (
        len(
            findings_of(
                RULE, non_indexed.replace("spec:\n  successPolicy:", "spec:\n" + coordinator + "  successPolicy:", 1)
            )
        )
        == 1
    )

    (finding,) = findings_of(RULE, with_spec("  network:\n    subdomain: llama3.1-pretrain\n"))
    assert 'spec.network.subdomain: Invalid value: "llama3.1-pretrain": a DNS-1035 label must consist of' in (
        finding.message
    )
    assert (
        findings_of(RULE, with_spec("  network:\n    enableDNSHostnames: true\n    subdomain: llama-pretrain\n")) == []
    )


def test_volcano_lifecycle_policies():
    restart = VOLCANO.replace(
        "  tasks:\n",
        "  policies:\n  - event: PodEvicted\n    action: RestartJob\n  - event: PodFailed\n    action: AbortJob\n  tasks:\n",
    )
    assert findings_of(RULE, restart) == []
    twice = restart.replace("event: PodFailed", "event: PodEvicted")
    (finding,) = findings_of(RULE, twice)
    assert finding.message == "Volcano's webhook rejects this Job: duplicate event PodEvicted  across different policy"
    assert finding.line == 15  # the second policy
    # the same event in one policy's events and event is one event
    assert (
        findings_of(RULE, restart.replace("- event: PodEvicted\n", "- event: PodEvicted\n    events: [PodEvicted]\n"))
        == []
    )
    both = restart.replace(
        "  - event: PodFailed\n    action: AbortJob\n", "  - event: PodFailed\n    exitCode: 3\n    action: AbortJob\n"
    )
    (finding,) = findings_of(RULE, both)
    assert "must not specify event and exitCode simultaneously" in finding.message
    zero = restart.replace("  - event: PodFailed\n    action: AbortJob\n", "  - exitCode: 0\n    action: AbortJob\n")
    (finding,) = findings_of(RULE, zero)
    assert "0 is not a valid error code" in finding.message
    typo = restart.replace("action: RestartJob", "action: RestartJobs")
    (finding,) = findings_of(RULE, typo)
    assert 'spec.policies: Invalid value: "RestartJobs": invalid policy action' in finding.message
    task_level = VOLCANO.replace(
        "    name: mpiworker\n",
        "    name: mpiworker\n    policies:\n    - event: TaskCompleted\n      action: CompleteJob\n    - event: '*'\n      action: RestartTask\n",
    )
    (finding,) = findings_of(RULE, task_level)
    assert "if there's * here, no other policy should be here" in finding.message


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: NAME
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    restartPolicy: RecreateGroupOnPodRestart
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          resources:
            limits:
              nvidia.com/gpu: "8"
"""


def lws(name: str = "vllm-llama3-405b") -> str:
    return LWS.replace("NAME", name)


def test_leader_worker_set_name_is_a_dns_1035_label():
    assert findings_of(RULE, lws()) == []
    (finding,) = findings_of(RULE, lws("vllm-llama3.1-405b"))
    assert (finding.line, finding.column) == (4, 9)
    assert finding.message.startswith(
        'LeaderWorkerSet\'s webhook rejects this LeaderWorkerSet: metadata.name: Invalid value: "vllm-llama3.1-405b"'
    )
    assert "a DNS-1035 label must consist of lower case alphanumeric characters or '-'" in finding.message
    assert len(findings_of(RULE, lws("405b-llama"))) == 1  # a DNS-1035 label starts with a letter


def test_leader_worker_set_sub_groups_and_rollout():
    def sub(size: int, sub_size: int, kind: str = "") -> str:
        policy = f"    subGroupPolicy:\n      subGroupSize: {sub_size}\n" + (
            f"      subGroupPolicyType: {kind}\n" if kind else ""
        )
        return lws().replace("    size: 4\n", f"    size: {size}\n{policy}")

    assert findings_of(RULE, sub(4, 2)) == []
    assert findings_of(RULE, sub(5, 2)) == []  # size - 1 divides: the leader apart
    (finding,) = findings_of(RULE, sub(8, 3))
    assert (
        "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize: Invalid value: 3: size or size - 1 must be divisible"
        in (finding.message)
    )
    (finding,) = findings_of(RULE, sub(4, 2, "LeaderExcluded"))
    assert "size-1 must be divisible by subGroupSize when using LeaderExcluded" in finding.message
    assert findings_of(RULE, sub(5, 2, "LeaderExcluded")) == []
    found = findings_of(RULE, sub(2, 4))
    assert ["subGroupSize cannot be larger than size" in f.message for f in found] == [False, True]  # LWS says both
    frozen = lws().replace(
        "  leaderWorkerTemplate:\n",
        "  rolloutStrategy:\n    type: RollingUpdate\n    rollingUpdateConfiguration:\n      maxUnavailable: 0\n"
        "      maxSurge: 0\n  leaderWorkerTemplate:\n",
    )
    (finding,) = findings_of(RULE, frozen)
    assert "maxUnavailable: Invalid value: 0: must not be 0 when `maxSurge` is 0" in finding.message
    assert findings_of(RULE, frozen.replace("maxSurge: 0", "maxSurge: 1")) == []
    assert findings_of(RULE, frozen.replace("maxUnavailable: 0", "maxUnavailable: 50%")) == []
    assert len(findings_of(RULE, frozen.replace("maxUnavailable: 0", "maxUnavailable: 10%"))) == 1  # rounds down to 0


def test_leader_worker_set_sizes_percentages_and_sub_group_topology():
    """generalValidate (lws v0.10.0): size at least 1, replicas 0 to 1000000, a rolling update's maxUnavailable and
    maxSurge an integer of at least 0 or a percent of at most 100%, a partition not negative; the
    subgroup-exclusive-topology annotation (v0.3.0 on) only with a subGroupPolicy."""
    (finding,) = findings_of(RULE, lws().replace("    size: 4\n", "    size: 0\n"))
    assert finding.message.endswith(
        "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1"
    )
    (finding,) = findings_of(RULE, lws().replace("  replicas: 2\n", "  replicas: -1\n"))
    assert "spec.replicas: Invalid value: -1: replicas must be equal or greater than 0" in finding.message
    assert findings_of(RULE, lws().replace("  replicas: 2\n", "  replicas: 0\n")) == []  # scaled to zero

    def rolling(lines: str) -> str:
        return lws().replace(
            "  leaderWorkerTemplate:\n",
            "  rolloutStrategy:\n    type: RollingUpdate\n    rollingUpdateConfiguration:\n"
            + lines
            + "  leaderWorkerTemplate:\n",
        )

    (finding,) = findings_of(RULE, rolling("      maxSurge: 150%\n"))
    assert 'maxSurge: Invalid value: "150%": must not be greater than 100%' in finding.message
    (finding,) = findings_of(RULE, rolling(f"      maxSurge: {'9' * 5000}%\n"))  # Atoi saturates: over 100%
    assert "must not be greater than 100%" in finding.message
    (finding,) = findings_of(RULE, rolling("      maxUnavailable: one\n"))
    assert "a valid percent string must be a numeric string followed by an ending '%'" in finding.message
    (finding,) = findings_of(RULE, rolling("      partition: -1\n"))
    assert "partition: Invalid value: -1: must be greater than or equal to 0" in finding.message
    assert findings_of(RULE, rolling("      maxUnavailable: 25%\n      maxSurge: 100%\n      partition: 1\n")) == []

    exclusive = lws().replace(
        "  name: vllm-llama3-405b\n",
        "  name: vllm-llama3-405b\n  annotations:\n    leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: "
        "cloud.google.com/gke-nodepool\n",
    )
    (finding,) = findings_of(RULE, exclusive)
    assert (finding.line, finding.column) == (6, 62)
    assert finding.message.endswith("cannot have subgroup-exclusive-topology without subGroupSize set")
    grouped = exclusive.replace("    size: 4\n", "    size: 4\n    subGroupPolicy:\n      subGroupSize: 2\n")
    assert findings_of(RULE, grouped) == []
    # the group-wide annotation needs no sub groups
    whole = exclusive.replace("subgroup-exclusive-topology", "exclusive-topology")
    assert findings_of(RULE, whole) == []


PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-simple
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]
            resources:
              limits:
                nvidia.com/gpu: 1
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]
            resources:
              limits:
                nvidia.com/gpu: 1
"""


def test_training_operator_demands_the_framework_container():
    assert findings_of(RULE, PYTORCHJOB) == []
    renamed = PYTORCHJOB.replace("- name: pytorch\n", "- name: trainer\n", 1)
    (finding,) = findings_of(RULE, renamed)
    assert finding.message.startswith("The Training Operator's webhook rejects this PyTorchJob: ")
    assert (
        "spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at least one "
        "container with name pytorch"
    ) in finding.message
    assert (finding.line, finding.column) == (13, 11)
    # the replica type's case is fixed by the defaulting webhook first
    assert (
        findings_of(RULE, PYTORCHJOB.replace("    Master:", "    master:").replace("    Worker:", "    worker:")) == []
    )


def test_training_operator_replicas_names_and_roles():
    (finding,) = findings_of(RULE, PYTORCHJOB.replace("      replicas: 1\n", "      replicas: 2\n", 1))
    assert "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1" in finding.message
    assert findings_of(RULE, PYTORCHJOB.replace("      replicas: 1\n", "", 1)) == []  # defaulted to 1
    (finding,) = findings_of(RULE, PYTORCHJOB.replace("    Worker:", "    Workers:"))
    assert 'spec.pytorchReplicaSpecs[Workers]: Unsupported value: "Workers"' in finding.message
    (finding,) = findings_of(RULE, PYTORCHJOB.replace("name: pytorch-simple", "name: llama3.1-finetune"))
    assert 'metadata.name: Invalid value: "llama3.1-finetune": should match: a DNS-1035 label' in finding.message
    tfjob = (
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: dist-mnist\nspec:\n  tfReplicaSpecs:\n"
        + "".join(
            f"    {role}:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
            "          - name: tensorflow\n            image: kubeflow/tf-dist-mnist-test:latest\n"
            for role in ("Chief", "Master", "Worker")
        )
    )
    (finding,) = findings_of(RULE, tfjob)
    assert "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role" in finding.message
    assert findings_of(RULE, tfjob.replace("    Master:", "    PS:")) == []


# ------------------------------------------------------------------ KubeRay's own spec validation (v1.6 on)

GPU_RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: embeddings-batch
  namespace: ray
spec:
  rayVersion: "2.40.0"
  headGroupSpec:
    rayStartParams: {num-cpus: "0"}
    template:
      spec:
        containers:
        - {name: ray-head, image: "rayproject/ray:2.40.0-py310"}
  workerGroupSpecs:
  - groupName: gpu-workers
    replicas: 4
    minReplicas: 4
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.40.0-py310-gpu
          resources:
            limits: {nvidia.com/gpu: "1"}
"""


def test_kuberay_refuses_a_worker_group_whose_minimum_exceeds_its_maximum():
    """ValidateRayClusterSpec (validation.go, ray-operator v1.6.0): the controller records InvalidRayClusterSpec and
    creates no pods; no Kueue label is needed, KubeRay validates every cluster."""
    (finding,) = findings_of(RULE, GPU_RAYCLUSTER)
    assert (finding.line, finding.column) == (17, 18)  # minReplicas of the group
    assert finding.message == (
        "KubeRay refuses this RayCluster: worker group gpu-workers has minReplicas 4 greater than maxReplicas 2\n"
        "KubeRay validates the spec before it reconciles (event InvalidRayClusterSpec) and creates no pods"
    )
    assert findings_of(RULE, GPU_RAYCLUSTER.replace("maxReplicas: 2", "maxReplicas: 4")) == []


def test_kuberay_bounds_left_to_the_crd_defaults_are_not_judged():
    """The CRD defaults minReplicas to 0 and maxReplicas to 2147483647: one bound alone cannot cross the other."""
    only_min = GPU_RAYCLUSTER.replace("    maxReplicas: 2\n", "")
    assert findings_of(RULE, only_min) == []
    only_max = GPU_RAYCLUSTER.replace("    minReplicas: 4\n", "")
    assert findings_of(RULE, only_max) == []


def test_kuberay_checks_the_cluster_of_a_rayservice_and_a_rayjob():
    workers = GPU_RAYCLUSTER[GPU_RAYCLUSTER.index("  headGroupSpec:") :]
    service = (
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: llm-serve}\nspec:\n"
        "  serveConfigV2: |\n    applications: []\n  rayClusterConfig:\n"
        + "\n".join("  " + line if line else line for line in workers.splitlines())
        + "\n"
    )
    (finding,) = findings_of(RULE, service)
    assert finding.message.startswith(
        "KubeRay refuses this RayService: worker group gpu-workers has minReplicas 4 greater than maxReplicas 2\n"
    )
    assert "event InvalidRayServiceSpec" in finding.message
    job = service.replace("kind: RayService", "kind: RayJob").replace("rayClusterConfig:", "rayClusterSpec:")
    job = job.replace("  serveConfigV2: |\n    applications: []\n", "  entrypoint: python embed.py\n")
    (finding,) = findings_of(RULE, job)
    assert "event InvalidRayJobSpec" in finding.message


# ------------------------------------------------------------------ the MPI operator's validation (v2beta1)

MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: megatron-gpt-2node
spec:
  slotsPerWorker: 8
  runLauncherAsWorker: true
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: nvcr.io/nvidia/nemo:24.07
            command: [mpirun, --allow-run-as-root, -np, "16", python, pretrain.py]
            resources:
              limits: {nvidia.com/gpu: 8}
    Worker:
      template:
        spec:
          containers:
          - name: worker
            image: nvcr.io/nvidia/nemo:24.07
            resources:
              limits: {nvidia.com/gpu: 8}
"""


def test_an_mpijob_worker_without_replicas_is_defaulted_to_none_and_refused():
    """mpi-operator default.go sets Worker replicas to 0, validation.go wants at least 1 (kubeflow/mpi-operator#833:
    the launcher Job never shows up)."""
    (finding,) = findings_of(RULE, MPIJOB)
    assert (finding.line, finding.column) == (22, 7)  # the Worker spec that omits replicas
    assert finding.message == (
        "The MPI operator refuses this MPIJob: Found validation errors: spec.mpiReplicaSpecs[Worker].replicas: "
        "Invalid value: 0: must be greater than or equal to 1\n"
        "the controller records the event ValidationError and creates no launcher, workers or Services"
    )
    assert findings_of(RULE, MPIJOB.replace("    Worker:\n", "    Worker:\n      replicas: 1\n")) == []


def test_an_mpijob_launcher_of_two_and_a_name_that_is_no_dns_label():
    broken = MPIJOB.replace("    Worker:\n", "    Worker:\n      replicas: 2\n")
    broken = broken.replace("      replicas: 1\n", "      replicas: 2\n", 1).replace("megatron-gpt-2node", "3d-unet")
    (finding,) = findings_of(RULE, broken)
    # two errors, aggregated as Go prints them: too long for the line, so whole in the note under it
    assert finding.message.startswith(
        'The MPI operator refuses this MPIJob: Found validation errors\n[metadata.name: Invalid value: "3d-unet": '
        'will not able to create pod and service with invalid DNS label "3d-unet-worker-1": a DNS-1035 label'
    )
    assert "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1]" in finding.message


def test_a_v1_mpijob_is_not_the_mpi_operators():
    """kubeflow.org/v1 MPIJob is the Training Operator's, with other defaults: not judged by these rules."""
    assert findings_of(RULE, MPIJOB.replace("kubeflow.org/v2beta1", "kubeflow.org/v1")) == []


# ------------------------------------------------------------------ KServe's InferenceService webhook

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama31-8b-chat
  annotations:
    serving.kserve.io/deploymentMode: RawDeployment
spec:
  predictor:
    minReplicas: 2
    maxReplicas: 1
    model:
      modelFormat: {name: huggingface}
      args: [--model_id=meta-llama/Llama-3.1-8B-Instruct]
      resources:
        limits: {nvidia.com/gpu: "1"}
"""


def test_kserve_refuses_a_minimum_above_the_maximum():
    (finding,) = findings_of(RULE, ISVC)
    assert (finding.line, finding.column) == (9, 18)
    assert (
        finding.message
        == "KServe's webhook rejects this InferenceService: 'MinReplicas' cannot be greater than MaxReplicas"
    )
    assert findings_of(RULE, ISVC.replace("maxReplicas: 1", "maxReplicas: 3")) == []
    assert findings_of(RULE, ISVC.replace("maxReplicas: 1", "maxReplicas: 0")) == []  # 0: no limit
    # the default minimum (1) is not above a maximum of 1
    assert findings_of(RULE, ISVC.replace("    minReplicas: 2\n", "")) == []


MULTINODE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
  annotations:
    serving.kserve.io/deploymentMode: Standard
spec:
  predictor:
    model:
      runtime: kserve-huggingfaceserver-multinode
      modelFormat: {name: huggingface}
      storageUri: pvc://llama-3-8b-pvc/hf/8b_instruction_tuned
    workerSpec:
      pipelineParallelSize: 2
      tensorParallelSize: 1
"""


def test_kserve_multinode_needs_autoscaling_off():
    """validateMultiNodeVariables (v0.19): 'none' (v0.15.2 on); v0.15.0 asked for 'external', which is let be. Left
    out, every release with a multi-node controller (v0.15.0 on; v0.14 had the field and ignored it) refuses it."""
    (finding,) = findings_of(RULE, MULTINODE)
    assert finding.severity == "error"
    assert finding.message == (
        'KServe\'s webhook rejects this InferenceService: the InferenceService "huggingface-llama3" is invalid: '
        "Multinode only supports 'none' autoscaler()"
    )
    for allowed in ("none", "external"):
        fixed = MULTINODE.replace("Standard\n", f"Standard\n    serving.kserve.io/autoscalerClass: {allowed}\n")
        assert findings_of(RULE, fixed) == []
    hpa = MULTINODE.replace("Standard\n", "Standard\n    serving.kserve.io/autoscalerClass: hpa\n")
    (finding,) = findings_of(RULE, hpa)
    assert (finding.line, finding.column) == (7, 40) and finding.message.endswith("autoscaler(hpa)")


# ------------------------------------------------------------------ Knative's autoscaling annotations

KSVC = """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: whisper-large-v3
  namespace: speech
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "0"
        autoscaling.knative.dev/max-scale: "10"
    spec:
      containers:
      - image: ghcr.io/speaches-ai/speaches:0.7.0-cuda
        resources:
          limits: {nvidia.com/gpu: "1"}
"""

AUTOSCALER_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-autoscaler
  namespace: knative-serving
data:
  max-scale: "2"
  max-scale-limit: "4"
---
"""


def test_knative_refuses_a_max_scale_above_the_clusters_limit():
    (finding,) = findings_of(RULE, AUTOSCALER_CONFIG + KSVC)
    assert finding.message == (
        "Knative's webhook rejects this Service: validation failed: expected 1 <= 10 <= 4: "
        "spec.template.metadata.annotations.autoscaling.knative.dev/max-scale\n"
        "max-scale-limit is 4 in ConfigMap knative-serving/config-autoscaler"
    )
    assert findings_of(RULE, AUTOSCALER_CONFIG + KSVC.replace('max-scale: "10"', 'max-scale: "4"')) == []
    # without config-autoscaler among the files the limit is unknown: no limit is assumed
    assert findings_of(RULE, KSVC) == []


def test_knative_numbers_of_any_length_are_read_as_go_reads_them():
    """getIntGE0 (strconv.ParseInt, 32 bits): a number past int64 is out of bounds, not a crash; a max-scale-limit
    cm.AsInt32 cannot read (a superscript digit) leaves the limit unknown."""
    huge = "9" * 5000
    (finding,) = findings_of(RULE, KSVC.replace('max-scale: "10"', f'max-scale: "{huge}"'))
    assert f"expected 0 <= {huge} <= 2147483647" in finding.message
    assert findings_of(RULE, AUTOSCALER_CONFIG.replace('"4"', '"\u00b2"') + KSVC) == []


def test_knative_refuses_a_max_scale_below_the_min_scale():
    broken = KSVC.replace('min-scale: "0"', 'min-scale: "3"').replace('max-scale: "10"', 'max-scale: "2"')
    (finding,) = findings_of(RULE, broken)
    assert finding.message.startswith("Knative's webhook rejects this Service: validation failed: max-scale=2 is less")
    unlimited = KSVC.replace('min-scale: "0"', 'min-scale: "3"').replace('max-scale: "10"', 'max-scale: "0"')
    assert findings_of(RULE, unlimited) == []  # 0 is no maximum
    old_keys = broken.replace("min-scale", "minScale").replace("max-scale", "maxScale")
    assert len(findings_of(RULE, old_keys)) == 1


def test_kuberay_refuses_a_cluster_name_that_is_no_dns1035_label():
    """ValidateRayClusterMetadata (v1.4.0 on): a model name with a dot is a valid object name, not a KubeRay one
    (the cluster's Services and pods are named after it)."""
    fixed = GPU_RAYCLUSTER.replace("maxReplicas: 2", "maxReplicas: 4")
    (finding,) = findings_of(RULE, fixed.replace("name: embeddings-batch", "name: llama-3.1-8b"))
    assert (finding.line, finding.column) == (4, 9)
    assert finding.message.startswith(
        "KubeRay refuses this RayCluster: RayCluster name should be a valid DNS1035 label\n[a DNS-1035 label must "
    )  # the regular expression makes it too long for the line: it is the note under it
    assert finding.message.endswith("(event InvalidRayClusterMetadata) and creates nothing")
    # the name is checked first: the crossed bounds of the broken cluster are not said beside it
    (first,) = findings_of(RULE, GPU_RAYCLUSTER.replace("name: embeddings-batch", "name: llama-3.1-8b"))
    assert "DNS1035" in first.message


def test_kuberay_name_lengths_leave_room_for_the_clusters_suffix():
    fixed = GPU_RAYCLUSTER.replace("maxReplicas: 2", "maxReplicas: 4")
    assert findings_of(RULE, fixed.replace("embeddings-batch", "e" * 53)) == []
    (finding,) = findings_of(RULE, fixed.replace("embeddings-batch", "e" * 54))
    assert "RayCluster name should be no more than 53 characters" in finding.message
    job = fixed.replace("kind: RayCluster", "kind: RayJob").replace("\nspec:\n", "\nspec:\n  rayClusterSpec:\n", 1)
    job = job.replace("\n  ", "\n    ").replace("\n    rayClusterSpec:", "\n  rayClusterSpec:")
    assert findings_of(RULE, job.replace("embeddings-batch", "j" * 47)) == []
    (finding,) = findings_of(RULE, job.replace("embeddings-batch", "j" * 48))
    assert "The RayJob metadata is invalid: RayJob name should be no more than 47 characters" in finding.message


def test_kuberay_refuses_gpus_given_twice_to_a_group():
    """validateRayGroupResources (v1.5.0 on): num-gpus in rayStartParams beside the group's own resources."""
    fixed = GPU_RAYCLUSTER.replace("maxReplicas: 2", "maxReplicas: 4")
    broken = fixed.replace(
        "    rayStartParams: {}\n", '    rayStartParams: {num-gpus: "1"}\n    resources: {GPU: "1"}\n'
    )
    (finding,) = findings_of(RULE, broken)
    assert finding.message.startswith(
        "KubeRay refuses this RayCluster: resource fields should not be set in both rayStartParams and Resources for "
        "gpu-workers group; please use only one"
    )
    assert findings_of(RULE, fixed.replace("    rayStartParams: {}\n", '    rayStartParams: {num-gpus: "1"}\n')) == []


def test_kserve_multinode_storage_and_parallel_sizes():
    """validateMultiNodeVariables (v0.19, multi-node since v0.15.0): the model is read from a PVC (or an OCI image,
    v0.16 on), the parallel sizes come from the workerSpec, not the model's env, and are at least 1."""
    off = MULTINODE.replace("Standard\n", "Standard\n    serving.kserve.io/autoscalerClass: none\n")
    hub = off.replace("pvc://llama-3-8b-pvc/hf/8b_instruction_tuned", "hf://meta-llama/Meta-Llama-3-8B-Instruct")
    (finding,) = findings_of(RULE, hub)
    assert finding.message.endswith("Multinode only supports 'pvc' and 'oci' Storage Protocol(hf)")
    assert (
        findings_of(RULE, off.replace("pvc://llama-3-8b-pvc/hf/8b_instruction_tuned", "oci://registry/llama3:8b")) == []
    )
    unset = off.replace("      storageUri: pvc://llama-3-8b-pvc/hf/8b_instruction_tuned\n", "")
    (finding,) = findings_of(RULE, unset)
    assert finding.message.endswith("StorageURI must be set for multinode enabled")
    env = off.replace(
        "      modelFormat:", "      env:\n      - {name: TENSOR_PARALLEL_SIZE, value: '2'}\n      modelFormat:"
    )
    (finding,) = findings_of(RULE, env)
    assert finding.message.endswith("setting TENSOR_PARALLEL_SIZE in environment variables is not allowed")
    zero = off.replace("tensorParallelSize: 1", "tensorParallelSize: 0")
    (finding,) = findings_of(RULE, zero)
    assert finding.message.endswith("WorkerSpec.TensorParallelSize cannot be less than 1(0)")
    # KServe stops at its first error: one finding for the first of several
    (finding,) = findings_of(
        RULE, hub.replace("serving.kserve.io/autoscalerClass: none", "serving.kserve.io/autoscalerClass: hpa")
    )
    assert finding.message.endswith("Storage Protocol(hf)")


def test_a_single_node_inferenceservice_is_no_multinode_one():
    """Without a workerSpec nothing of the multi-node rules applies (an hf:// model, the default autoscaler)."""
    single = MULTINODE.replace(
        "pvc://llama-3-8b-pvc/hf/8b_instruction_tuned", "hf://meta-llama/Meta-Llama-3-8B-Instruct"
    )
    single = single[: single.index("    workerSpec:")]
    assert findings_of(RULE, single) == []


# KAITO's example examples/inference/kaito_workspace_phi_3.5-instruct.yaml (v0.12.0).
KAITO_WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: NAME
resource:
  instanceType: "Standard_NC24ads_A100_v4"
  labelSelector:
    matchLabels:
      apps: phi-3-5
inference:
  preset:
    name: phi-3.5-mini-instruct
"""


def test_kaito_refuses_a_workspace_name_with_a_dot():
    """workspace_validation.go Validate (v0.4.0 on, kaito#725): the name is a DNS-1123 label; older releases took it
    and the Service the controller names after the Workspace was refused."""
    assert findings_of(RULE, KAITO_WORKSPACE.replace("NAME", "workspace-phi-3-5-mini")) == []
    (finding,) = findings_of(RULE, KAITO_WORKSPACE.replace("NAME", "workspace-phi-3.5-mini"))
    assert (finding.line, finding.column) == (4, 9)
    assert finding.message.startswith(
        "KAITO's webhook rejects this Workspace: validation failed: invalid value: must not contain dots: name\n"
        "releases before v0.4.0 took it and the Service named after it was refused: "
        'Service "workspace-phi-3.5-mini" is invalid: metadata.name: Invalid value: "workspace-phi-3.5-mini": '
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-'"
    )


def test_kaito_webhook_takes_a_leading_digit_that_the_service_refuses():
    """A DNS-1123 label may start with a digit, a DNS-1035 label (a Service's name) may not."""
    (finding,) = findings_of(RULE, KAITO_WORKSPACE.replace("NAME", "3-5-mini-phi"))
    assert finding.message.startswith(
        'KAITO refuses this Workspace: Service "3-5-mini-phi" is invalid: metadata.name: Invalid value: "3-5-mini-phi"'
    )
    assert finding.message.endswith("fails on each reconcile: the Workspace gets no endpoint")


def test_a_workspace_of_another_operator_is_not_kaitos():
    other = KAITO_WORKSPACE.replace("kaito.sh/v1beta1", "app.terraform.io/v1alpha2").replace("NAME", "infra.gpu-pool")
    assert findings_of(RULE, other) == []


# Katib's example examples/v1beta1/hp-tuning/random.yaml (v0.19.0), with a GPU trial.
KATIB_EXPERIMENT = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  namespace: kubeflow
  name: NAME
spec:
  objective:
    type: minimize
    goal: 0.001
    objectiveMetricName: loss
  algorithm:
    algorithmName: random
  parallelTrialCount: 3
  maxTrialCount: 12
  maxFailedTrialCount: 3
  parameters:
    - name: lr
      parameterType: double
      feasibleSpace:
        min: "0.01"
        max: "0.05"
  trialTemplate:
    primaryContainerName: training-container
    trialParameters:
      - name: learningRate
        description: Learning rate for the training model
        reference: lr
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            containers:
              - name: training-container
                image: ghcr.io/kubeflow/katib/pytorch-mnist-gpu:latest
                command: ["python3", "/opt/pytorch-mnist/mnist.py", "--lr=${trialParameters.learningRate}"]
                resources:
                  limits:
                    nvidia.com/gpu: 1
            restartPolicy: Never
"""


def katib(name: str = "random") -> str:
    return KATIB_EXPERIMENT.replace("NAME", name)


def test_katib_refuses_an_experiment_name_that_starts_with_a_digit():
    """validator.go ValidateExperiment (v0.12.0 on, katib#1541 after katib#1538): at most 40 characters, starting
    like a DNS-1035 label."""
    assert findings_of(RULE, katib()) == []
    (finding,) = findings_of(RULE, katib("1524-test"))
    assert (finding.line, finding.column) == (5, 9)
    assert finding.message.startswith("Katib's webhook rejects this Experiment: metadata.name: Invalid value")
    assert "start with an alphabetic character" in finding.message
    assert findings_of(RULE, katib("e" * 40)) == []
    assert len(findings_of(RULE, katib("e" * 41))) == 1


def test_katib_takes_a_dot_its_suggestion_service_cannot():
    """Katib's expression is anchored at the start only: 'bert.lr' passes, and the suggestion's Service
    'bert.lr-random' (GetSuggestionServiceName) is refused."""
    (finding,) = findings_of(RULE, katib("bert.lr"))
    assert finding.message.startswith(
        'Katib refuses this Experiment: Service "bert.lr-random" is invalid: metadata.name: Invalid value: "bert.lr-random"'
    )
    assert finding.message.endswith("the suggestion's Service is never created: the Experiment runs no trials")


def test_katib_trial_counts_after_its_defaults():
    """parallelTrialCount defaults to 3 before the validating webhook runs: a maxTrialCount of 2 refuses it."""
    unset = katib().replace("  parallelTrialCount: 3\n", "")
    assert findings_of(RULE, unset) == []
    two = unset.replace("maxTrialCount: 12", "maxTrialCount: 2").replace(
        "maxFailedTrialCount: 3", "maxFailedTrialCount: 1"
    )
    (finding,) = findings_of(RULE, two)
    assert "spec.parallelTrialCount: Invalid value: 3: should be less than or equal to spec.maxTrialCount" in (
        finding.message
    )
    messages = [
        f.message for f in findings_of(RULE, katib().replace("maxFailedTrialCount: 3", "maxFailedTrialCount: -1"))
    ]
    assert messages == [
        "Katib's webhook rejects this Experiment: spec.maxFailedTrialCount: Invalid value: -1: should not be less than 0"
    ]


def test_an_argo_rollouts_experiment_is_not_katibs():
    rollout = katib("1524-test").replace("kubeflow.org/v1beta1", "argoproj.io/v1alpha1")
    assert findings_of(RULE, rollout) == []


# The NIM operator's sample config/samples/nim/serving/advanced/dra/manual/llm.yaml (v3.1.2), without DRA.
NIM_SERVICE = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: NAME
  namespace: nim-service
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct
    tag: "1.12.0"
    pullPolicy: IfNotPresent
    pullSecrets:
      - ngc-secret
  authSecret: ngc-api-secret
  storage:
    nimCache:
      name: meta-llama3-2-1b-instruct
      profile: ''
  replicas: 1
  resources:
    limits:
      nvidia.com/gpu: 1
  expose:
    service:
      type: ClusterIP
      port: 8000
"""


def test_the_nim_operator_names_the_service_after_the_nimservice():
    """GetServiceParams (params.Name = the NIMService's name) and no name check in its webhook: the model's
    version dot makes a valid NIMService and Deployment, not a Service."""
    assert findings_of(RULE, NIM_SERVICE.replace("NAME", "meta-llama3-2-1b-instruct")) == []
    (finding,) = findings_of(RULE, NIM_SERVICE.replace("NAME", "llama-3.2-1b-instruct"))
    assert (finding.line, finding.column) == (4, 9)
    assert finding.message.startswith(
        'The NIM operator refuses this NIMService: Service "llama-3.2-1b-instruct" is invalid: metadata.name: '
        'Invalid value: "llama-3.2-1b-instruct"\na DNS-1035 label must consist of'
    )  # the regular expression makes it too long for the line: it is the note under it
    on_kserve = NIM_SERVICE.replace("NAME", "llama-3.2-1b-instruct").replace(
        "spec:\n", "spec:\n  inferencePlatform: kserve\n", 1
    )
    assert findings_of(RULE, on_kserve) == []  # an InferenceService then, judged by KServe's rules
    cache = NIM_SERVICE.replace("kind: NIMService", "kind: NIMCache").replace("NAME", "llama-3.2-1b-instruct")
    assert findings_of(RULE, cache) == []  # a NIMCache makes a PVC and a Job: a dot is fine there


# ------------------------------------------------------------------ Knative's other autoscaling annotations
# knative/serving knative-v1.23 pkg/apis/autoscaling/annotation_validation.go ValidateAnnotations; shapes from
# knative/docs code-samples/serving/autoscale-go and the GPU services of the corpus.


def _said(finding) -> str:
    """The message on one line, as the webhook words it: split_long breaks a long one at a ": " into a note."""
    return finding.message.replace("\n", ": ")


def _ksvc(annotations: str, own: str = "") -> str:
    head = KSVC.replace("  namespace: speech\n", "  namespace: speech\n" + own) if own else KSVC
    return head.replace(
        '        autoscaling.knative.dev/min-scale: "0"\n        autoscaling.knative.dev/max-scale: "10"\n',
        annotations,
    )


def test_knative_refuses_autoscaling_annotations_on_the_service_itself():
    """ValidateHasNoAutoscalingAnnotation (v0.18 on): they act only on the revision template."""
    own = '  annotations:\n    autoscaling.knative.dev/min-scale: "1"\n'
    (finding,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/max-scale: "4"\n', own))
    assert (finding.line, finding.column) == (7, 5)  # the key
    assert _said(finding) == (
        "Knative's webhook rejects this Service: validation failed: invalid key name "
        '"autoscaling.knative.dev/min-scale": metadata.annotations: '
        'autoscaling annotations must be put under "spec.template.metadata.annotations" to work'
    )
    # other annotations on the Service (serving.knative.dev/rollout-duration, a team's own) are not autoscaling's
    other = '  annotations:\n    serving.knative.dev/rollout-duration: "380s"\n    example.com/team: speech\n'
    assert findings_of(RULE, _ksvc('        autoscaling.knative.dev/max-scale: "4"\n', other)) == []


def test_knative_activation_scale_between_min_and_max_and_above_one():
    def scaled(activation: str, low: str = "0", high: str = "10") -> list:
        return findings_of(
            RULE,
            _ksvc(
                f'        autoscaling.knative.dev/min-scale: "{low}"\n'
                f'        autoscaling.knative.dev/max-scale: "{high}"\n'
                f'        autoscaling.knative.dev/activation-scale: "{activation}"\n'
            ),
        )

    (one,) = scaled("1")
    assert _said(one).endswith(
        "validation failed: activation-scale=1 must be greater than 1: "
        "spec.template.metadata.annotations.autoscaling.knative.dev/activation-scale"
    )
    (below,) = scaled("2", low="3")
    assert "min-scale=3 is greater than activation-scale=2" in _said(below)
    (above,) = scaled("12")
    assert "max-scale=10 is less than activation-scale=12" in _said(above)
    assert scaled("3") == [] and scaled("12", high="0") == []  # max-scale 0: no maximum


def test_knative_metric_must_suit_the_class():
    """validateMetric: the KPA takes concurrency or rps; cpu and memory need the HPA class. With no class written,
    config-autoscaler's pod-autoscaler-class decides (kpa by default): a warning while it is not linted."""
    hpa_cpu = '        autoscaling.knative.dev/class: "hpa.autoscaling.knative.dev"\n        autoscaling.knative.dev/metric: "cpu"\n'
    assert findings_of(RULE, _ksvc(hpa_cpu)) == []
    (kpa,) = findings_of(RULE, _ksvc(hpa_cpu.replace("hpa.", "kpa.")))
    assert kpa.severity == "error" and _said(kpa).endswith(
        "validation failed: invalid value: cpu: spec.template.metadata.annotations.autoscaling.knative.dev/metric"
    )
    no_class = '        autoscaling.knative.dev/metric: "cpu"\n'
    (default,) = findings_of(RULE, _ksvc(no_class))
    assert default.severity == "warning"
    assert _said(default).endswith(
        "unless ConfigMap knative-serving/config-autoscaler sets pod-autoscaler-class (its default refuses)"
    )
    hpa_default = AUTOSCALER_CONFIG.replace(
        '  max-scale: "2"\n', '  pod-autoscaler-class: "hpa.autoscaling.knative.dev"\n'
    )
    assert findings_of(RULE, hpa_default + _ksvc(no_class)) == []
    (known,) = findings_of(RULE, AUTOSCALER_CONFIG + _ksvc(no_class))
    assert known.severity == "error"
    # a class in Knative's domain is kpa or hpa on a Service (Eventing's keda class is its sources'); a class outside
    # it is a custom autoscaler's, left alone with its metric
    (keda,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/class: "keda.autoscaling.knative.dev"\n'))
    assert _said(keda).endswith(
        "invalid value: keda.autoscaling.knative.dev: spec.template.metadata.annotations.autoscaling.knative.dev/class"
    )
    assert findings_of(RULE, _ksvc('        autoscaling.knative.dev/class: "keda.sh/autoscaler"\n' + no_class)) == []


def test_knative_target_utilization_and_window_ranges():
    (utilization,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/target-utilization-percentage: "150"\n'))
    assert "validation failed: expected 1 <= 150 <= 100:" in _said(utilization)
    (target,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/target: "0"\n'))
    assert "validation failed: target 0 should be at least 0.01:" in _said(target)
    (window,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/window: "2s"\n'))
    assert "validation failed: expected 6s <= 2s <= 1h0m0s:" in _said(window)
    (precision,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/scale-down-delay: "1500ms"\n'))
    assert "must be specified with at most second precision" in _said(precision)
    (burst,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/target-burst-capacity: "-2"\n'))
    assert "invalid value: -2:" in _said(burst)
    fine = (
        '        autoscaling.knative.dev/target-utilization-percentage: "70"\n'
        '        autoscaling.knative.dev/target: "0.5"\n'
        '        autoscaling.knative.dev/window: "90s"\n'
        '        autoscaling.knative.dev/scale-down-delay: "15m"\n'
        '        autoscaling.knative.dev/scale-to-zero-pod-retention-period: "1m5s"\n'
        '        autoscaling.knative.dev/target-burst-capacity: "-1"\n'
        '        autoscaling.knative.dev/panic-threshold-percentage: "200.0"\n'
    )
    assert findings_of(RULE, _ksvc(fine)) == []
    # a value still to be filled in is the template's, not Knative's
    assert findings_of(RULE, _ksvc('        autoscaling.knative.dev/target: "${TARGET}"\n')) == []


def test_knative_initial_scale_zero_needs_the_cluster_to_allow_it():
    zero = _ksvc('        autoscaling.knative.dev/initial-scale: "0"\n')
    (unknown,) = findings_of(RULE, zero)
    assert unknown.severity == "warning"
    assert (
        "invalid value: 0: spec.template.metadata.annotations.autoscaling.knative.dev/initial-scale=0 not allowed by cluster"
        in _said(unknown)
    )
    allowed = AUTOSCALER_CONFIG.replace('  max-scale: "2"\n', '  allow-zero-initial-scale: "true"\n')
    assert findings_of(RULE, allowed + zero) == []
    (refused,) = findings_of(RULE, AUTOSCALER_CONFIG.replace('  max-scale-limit: "4"\n', "") + zero)
    assert refused.severity == "error"
    (negative,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/initialScale: "-1"\n'))
    assert negative.severity == "error" and _said(negative).endswith("initialScale must be greater than 0")
    assert findings_of(RULE, _ksvc('        autoscaling.knative.dev/initial-scale: "2"\n')) == []


def test_knative_negative_scale_bounds():
    (finding,) = findings_of(RULE, _ksvc('        autoscaling.knative.dev/min-scale: "-1"\n'))
    assert _said(finding).endswith(
        "expected 0 <= -1 <= 2147483647: spec.template.metadata.annotations.autoscaling.knative.dev/min-scale"
    )


# ------------------------------------------------------------------ the MPI operator's other checks
# kubeflow/mpi-operator v0.8.0 pkg/apis/kubeflow/validation/validation.go, on examples/v2beta1 shapes.

FIXED_MPIJOB = MPIJOB.replace("    Worker:\n", "    Worker:\n      replicas: 2\n")


def test_an_mpijob_replica_restart_policy_is_never_or_on_failure():
    """validateReplicaSpec: the CRD's description lists Always and ExitCode (the Training Operator's), the
    controller takes Never and OnFailure only (the defaults: OnFailure for the Launcher, Never for Workers)."""
    broken = FIXED_MPIJOB.replace("    Worker:\n", "    Worker:\n      restartPolicy: ExitCode\n")
    (finding,) = findings_of(RULE, broken)
    assert _said(finding).startswith(
        "The MPI operator refuses this MPIJob: Found validation errors: spec.mpiReplicaSpecs[Worker].restartPolicy: "
        'Unsupported value: "ExitCode": supported values: "Never", "OnFailure"'
    )
    fine = FIXED_MPIJOB.replace("    Worker:\n", "    Worker:\n      restartPolicy: OnFailure\n")
    assert findings_of(RULE, fine) == []
    # the pod template's own restartPolicy is the pod's, not the replica spec's
    pod_level = FIXED_MPIJOB.replace(
        "        spec:\n          containers:\n          - name: worker",
        "        spec:\n          restartPolicy: Always\n          containers:\n          - name: worker",
    )
    assert findings_of(RULE, pod_level) == []


def test_an_mpijob_run_policy_and_slots():
    """validateRunPolicy: cleanPodPolicy None, Running or All; the counts not negative; managedBy (v0.6.0 on) the
    operator or MultiKueue. validateMPIJobSpec: slotsPerWorker not negative (0 is accepted)."""
    broken = FIXED_MPIJOB.replace("cleanPodPolicy: Running", "cleanPodPolicy: OnCompletion\n    backoffLimit: -1")
    (finding,) = findings_of(RULE, broken)
    assert (finding.line, finding.column) == (9, 21)
    assert _said(finding).startswith(
        "The MPI operator refuses this MPIJob: Found validation errors: "
        '[spec.runPolicy.cleanPodPolicy: Unsupported value: "OnCompletion": supported values: "All", "None", "Running", '
        "spec.runPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0]"
    )
    managed = FIXED_MPIJOB.replace(
        "cleanPodPolicy: Running", "cleanPodPolicy: Running\n    managedBy: kueue.x-k8s.io/multikueue"
    )
    assert findings_of(RULE, managed) == []
    (other,) = findings_of(RULE, managed.replace("kueue.x-k8s.io/multikueue", "kueue"))
    assert 'spec.runPolicy.managedBy: Unsupported value: "kueue"' in _said(other)
    (slots,) = findings_of(RULE, FIXED_MPIJOB.replace("slotsPerWorker: 8", "slotsPerWorker: -1"))
    assert "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0" in _said(slots)
    assert findings_of(RULE, FIXED_MPIJOB.replace("slotsPerWorker: 8", "slotsPerWorker: 0")) == []


# ------------------------------------------------------------------ KServe's other InferenceService checks
# kserve/kserve v0.20.0 pkg/apis/serving/v1beta1/inference_service_validation.go, on docs/samples shapes.

SERVERLESS = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: flan-t5-small
  annotations:
    serving.kserve.io/deploymentMode: Serverless
spec:
  predictor:
    scaleMetric: concurrency
    scaleTarget: 4
    model:
      modelFormat: {name: huggingface}
      args: [--model_name=t5, --model_id=google/flan-t5-small]
      resources:
        limits: {nvidia.com/gpu: "1"}
"""


def test_kserve_refuses_a_name_with_a_dot_or_a_leading_digit():
    """validateInferenceServiceName (v0.5 on): a valid object name is not always a valid InferenceService name."""
    (finding,) = findings_of(RULE, SERVERLESS.replace("flan-t5-small", "llama-3.1-8b"))
    assert (finding.line, finding.column) == (4, 9)
    assert _said(finding).startswith(
        'KServe\'s webhook rejects this InferenceService: the InferenceService "llama-3.1-8b" is invalid: a '
        "InferenceService name must consist of lower case alphanumeric characters or '-'"
    )
    assert len(findings_of(RULE, SERVERLESS.replace("flan-t5-small", "7b-chat"))) == 1
    assert findings_of(RULE, SERVERLESS) == []


def test_kserve_autoscaler_class_and_scale_metric_per_mode():
    """validateInferenceServiceAutoscaler: hpa, external, keda, none (kpa is Knative's class annotation, not this
    one); validateAutoScalingCompExtension: the Knative mode's KPA takes concurrency or rps, Standard with hpa takes
    cpu or memory."""
    kpa = SERVERLESS.replace("Serverless\n", "Serverless\n    serving.kserve.io/autoscalerClass: kpa\n")
    (finding,) = findings_of(RULE, kpa)
    assert _said(finding).endswith("[kpa] is not a supported autoscaler class type")
    (cpu,) = findings_of(RULE, SERVERLESS.replace("scaleMetric: concurrency", "scaleMetric: cpu"))
    assert (cpu.line, _said(finding) and _said(cpu).endswith("[cpu] is not a supported metric")) == (9, True)
    raw = SERVERLESS.replace("Serverless\n", "RawDeployment\n    serving.kserve.io/autoscalerClass: hpa\n")
    (concurrency,) = findings_of(RULE, raw)
    assert _said(concurrency).endswith("[concurrency] is not a supported metric")
    assert (
        findings_of(
            RULE,
            raw.replace("scaleMetric: concurrency", "scaleMetric: cpu").replace("scaleTarget: 4", "scaleTarget: 60"),
        )
        == []
    )
    (over,) = findings_of(
        RULE, raw.replace("scaleMetric: concurrency", "scaleMetric: cpu").replace("scaleTarget: 4", "scaleTarget: 160")
    )
    assert _said(over).endswith("the target utilization percentage should be a [1-100] integer")
    # KServe's `metric == cpu && target < 1 || target > 100`: a memory target above 100 is refused too
    memory = raw.replace("scaleMetric: concurrency", "scaleMetric: memory").replace(
        "scaleTarget: 4", "scaleTarget: 200"
    )
    (refused,) = findings_of(RULE, memory)
    assert _said(refused).endswith("the target utilization percentage should be a [1-100] integer")
    # no deployment mode written: the installation's default decides, and it is not known
    unwritten = SERVERLESS.replace("  annotations:\n    serving.kserve.io/deploymentMode: Serverless\n", "")
    assert findings_of(RULE, unwritten.replace("scaleMetric: concurrency", "scaleMetric: cpu")) == []
    keda = SERVERLESS.replace("Serverless\n", "Standard\n    serving.kserve.io/autoscalerClass: keda\n")
    (finding,) = findings_of(RULE, keda)
    assert _said(finding).endswith("ScaleMetric is not supported for KEDA")


def test_kserve_exactly_one_predictor_implementation():
    """validateExactlyOneImplementation: a model and a container named kserve-container are two; sidecars are not."""
    both = SERVERLESS.replace(
        "    model:\n",
        "    containers:\n    - name: kserve-container\n      image: kserve/huggingfaceserver:v0.15.2-gpu\n    model:\n",
    )
    (finding,) = findings_of(RULE, both)
    assert _said(finding).endswith("must be specified in PredictorSpec")
    assert "exactly one of [Name, SKLearn, XGBoost, Tensorflow, PyTorch" in _said(finding)
    sidecar = both.replace("name: kserve-container", "name: model-downloader")
    assert findings_of(RULE, sidecar) == []
    # the defaulting webhook makes the first framework written the model, replacing a model beside it: one left
    framework = SERVERLESS.replace(
        "    model:\n", "    sklearn:\n      storageUri: gs://kfserving-examples/models/sklearn/1.0/model\n    model:\n"
    )
    assert findings_of(RULE, framework) == []
    (finding,) = findings_of(RULE, framework.replace("    model:\n", "    xgboost:\n"))
    assert (finding.line, finding.column) == (14, 7) and finding.message.endswith("must be specified in PredictorSpec")
    custom = SERVERLESS[: SERVERLESS.index("    model:\n")] + (
        "    containers:\n    - name: kserve-container\n      image: vllm/vllm-openai:v0.6.3\n"
        "      resources: {limits: {nvidia.com/gpu: '1'}}\n"
    )
    assert findings_of(RULE, custom) == []


def test_kserve_blocked_env_and_predictor_container_name():
    """validateBlockedEnvVars (v0.18 on): PYTHONPATH in any component container; validatePredictor (v0.16 on): no
    `name` on the model's or a framework's container (the defaulter moves a framework's container to the model).
    Releases before them still run: warnings that name the release."""
    env = SERVERLESS.replace(
        "      resources:\n", "      env:\n      - {name: PYTHONPATH, value: /workspace}\n      resources:\n"
    )
    (finding,) = findings_of(RULE, env)
    assert finding.severity == "warning"
    assert _said(finding).endswith(
        'the InferenceService "flan-t5-small" is invalid: setting PYTHONPATH in container "" is not allowed for '
        "security reasons: KServe v0.18.0 and later refuse it; earlier releases accept it"
    )
    assert findings_of(RULE, env.replace("PYTHONPATH", "HF_HOME")) == []
    named = SERVERLESS.replace("    model:\n", "    model:\n      name: kserve-container\n")
    (finding,) = findings_of(RULE, named)
    assert finding.severity == "warning" and "the 'name' field is not allowed in standard predictor" in finding.message
    assert "KServe v0.16.0 and later refuse it" in finding.message
    # KFServing 0.5's samples named the framework container: the same once written as serving.kserve.io
    triton = SERVERLESS.replace(
        "    model:\n      modelFormat: {name: huggingface}\n", "    triton:\n      name: kfserving-container\n"
    )
    (finding,) = findings_of(RULE, triton)
    assert (finding.line, finding.column) == (12, 13)


def test_kserve_multinode_gpu_resource_types():
    """validateMultiNodeVariables (v0.15.1 on): a multi-node model or worker asks only for resources of the GPU
    types KServe knows, unless serving.kserve.io/gpu-resource-types or inferenceservice-config's multiNode
    customGPUResourceTypeList adds them (an RDMA device, a MIG profile)."""
    off = MULTINODE.replace("Standard\n", "Standard\n    serving.kserve.io/autoscalerClass: none\n")
    rdma = off.replace(
        "      storageUri:", "      resources:\n        limits: {nvidia.com/gpu: '8', rdma/ib: '1'}\n      storageUri:"
    )
    (finding,) = findings_of(RULE, rdma)
    assert (finding.line, finding.column) == (14, 9)
    assert 'the InferenceService "huggingface-llama3" is invalid: Unknown GPU resource type' in _said(finding)
    assert _said(finding).endswith(
        "Set 'serving.kserve.io/gpu-resource-types' annotation to use custom gpu resource type"
    )
    annotated = rdma.replace("none\n", "none\n    serving.kserve.io/gpu-resource-types: '[\"rdma/ib\"]'\n")
    assert findings_of(RULE, annotated) == []
    # an annotation that is no JSON list is KServe's own error, not said; one nested without end does not crash
    for written in ("rdma/ib", "[" * 100_000):
        odd = rdma.replace("none\n", f"none\n    serving.kserve.io/gpu-resource-types: '{written}'\n")
        assert findings_of(RULE, odd) == []
    config = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: inferenceservice-config, namespace: kserve}
data:
  multiNode: |-
    {"customGPUResourceTypeList": ["rdma/ib"]}
---
"""
    assert findings_of(RULE, config + rdma) == []
    plain = off.replace(
        "      storageUri:", "      resources:\n        limits: {nvidia.com/gpu: '8', memory: 200Gi}\n      storageUri:"
    )
    assert findings_of(RULE, plain) == []
    worker = (
        off + "      containers:\n      - name: worker-container\n        resources: {limits: {hugepages-2Mi: 1Gi}}\n"
    )
    (finding,) = findings_of(RULE, worker)
    assert _said(finding).endswith("use custom gpu resource type")


def test_knative_operator_settings_are_the_clusters_autoscaler_config():
    """The Knative operator writes a KnativeServing's spec.config.autoscaler into config-autoscaler."""
    serving = """\
apiVersion: operator.knative.dev/v1beta1
kind: KnativeServing
metadata:
  name: knative-serving
  namespace: knative-serving
spec:
  config:
    autoscaler:
      allow-zero-initial-scale: "true"
---
"""
    zero = _ksvc('        autoscaling.knative.dev/initial-scale: "0"\n')
    assert findings_of(RULE, serving + zero) == []
    (refused,) = findings_of(RULE, serving.replace('"true"', '"false"') + zero)
    assert refused.severity == "error"


MULTINODE_RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: kserve-huggingfaceserver-multinode
spec:
  annotations:
    prometheus.kserve.io/port: "8080"
  supportedModelFormats:
  - {name: huggingface, version: "1", autoSelect: true, priority: 2}
  protocolVersions: [v2, v1]
  containers:
  - name: kserve-container
    image: kserve/huggingfaceserver:v0.15.2-gpu
    args: [--model_name=llama3]
    env:
    - {name: RAY_PORT, value: "6379"}
    resources:
      limits: {cpu: "4", memory: 12Gi, nvidia.com/gpu: "1"}
  workerSpec:
    pipelineParallelSize: 1
    tensorParallelSize: 1
    containers:
    - name: worker-container
      image: kserve/huggingfaceserver:v0.15.2-gpu
      resources:
        limits: {cpu: "4", memory: 12Gi, nvidia.com/gpu: "1"}
"""


def test_kserve_multinode_serving_runtime():
    """The ServingRuntime webhook's validateMultiNodeSpec (v0.20.0; shaped as config/runtimes/
    kserve-huggingfaceserver-multinode.yaml): known GPU types only (the runtime's spec.annotations may add some),
    no parallel sizes in the kserve-container's env, sizes of at least 1."""
    assert findings_of(RULE, MULTINODE_RUNTIME) == []
    rdma = MULTINODE_RUNTIME.replace(
        '        limits: {cpu: "4", memory: 12Gi, nvidia.com/gpu: "1"}\n',
        '        limits: {cpu: "4", memory: 12Gi, nvidia.com/gpu: "1", rdma/rdma_shared_device_a: "1"}\n',
    )
    (finding,) = findings_of(RULE, rdma)
    assert (finding.line, finding.column) == (26, 9)
    assert finding.severity == "error"
    assert _said(finding) == (
        "KServe's webhook rejects this ClusterServingRuntime: the ClusterServingRuntime "
        "kserve-huggingfaceserver-multinode is invalid: unknown GPU resource type in a container(worker-container)"
    )
    listed = rdma.replace(
        '    prometheus.kserve.io/port: "8080"\n',
        '    prometheus.kserve.io/port: "8080"\n    serving.kserve.io/gpu-resource-types: \'["rdma/rdma_shared_device_a"]\'\n',
    )
    assert findings_of(RULE, listed) == []
    env = MULTINODE_RUNTIME.replace(
        '    - {name: RAY_PORT, value: "6379"}\n', "    - {name: TENSOR_PARALLEL_SIZE, value: '2'}\n"
    )
    (finding,) = findings_of(RULE, env)
    assert finding.message.endswith("setting TENSOR_PARALLEL_SIZE in environment variables is not allowed")
    (finding,) = findings_of(RULE, MULTINODE_RUNTIME.replace("pipelineParallelSize: 1", "pipelineParallelSize: 0"))
    assert finding.message.endswith("the WorkerSpec.PipelineParallelSize cannot be less than 1(0)")
    # a single-node runtime's env and resources are its own (no workerSpec: nothing of this applies)
    single = env[: env.index("  workerSpec:")]
    assert findings_of(RULE, single) == []
    disabled = rdma.replace("spec:\n", "spec:\n  disabled: true\n", 1)
    assert findings_of(RULE, disabled) == []
