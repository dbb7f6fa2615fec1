"""schema-invalid for the custom resources gpulint reads (schemas/crds/, from the projects' CRDs)."""

import pytest
from conftest import by_rule, lint_text

from gpulint.lint.findings import Severity

# Shaped like kubeflow/training-operator v1.9.0 examples/pytorch/simple.yaml.
PYTORCHJOB = """
apiVersion: "kubeflow.org/v1"
kind: PyTorchJob
metadata:
  name: pytorch-simple
  namespace: kubeflow
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
              command: ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]
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
              resources:
                limits:
                  nvidia.com/gpu: "1"
                requests:
"""

# Shaped like kubeflow/mpi-operator v0.8.0 examples/v2beta1/pi/pi.yaml.
MPIJOB_V2 = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
    ttlSecondsAfterFinished: 60
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:openmpi
            name: mpi-launcher
            command: [mpirun]
            args: ["-n", "2", /home/mpiuser/pi]
            resources:
              limits: {cpu: 1, memory: 1Gi}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:openmpi
            name: mpi-worker
            resources:
              limits: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}
"""

# Shaped like kubeflow/training-operator v1.9.0 examples/mpi/tensorflow-mnist.yaml.
MPIJOB_V1 = """
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: tensorflow-mnist
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: docker.io/kubeflow/mpi-horovod-mnist
            name: mpi-launcher
            command: [mpirun]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: docker.io/kubeflow/mpi-horovod-mnist
            name: mpi-worker
            resources:
              limits:
                nvidia.com/gpu: 1
"""

# Shaped like kubernetes-sigs/jobset v0.12.0 site/static/examples/failure-policy/restartjobset-action.yaml:
# the failure policy rule has no name, which the JobSet webhook fills in before the schema is checked.
JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: restartjobset-action-example
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
      - action: RestartJobSet
        targetReplicatedJobs:
        - leader
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        backoffLimit: 0
        completions: 2
        parallelism: 2
        template:
          spec:
            containers:
            - name: leader
              image: docker.io/library/bash:4.4
              command: [bash, -xc, "sleep 1000"]
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


@pytest.mark.parametrize(
    "text", [PYTORCHJOB, MPIJOB_V2, MPIJOB_V1, JOBSET], ids=["pytorch", "mpi-v2", "mpi-v1", "jobset"]
)
def test_documented_manifests_are_clean(text):
    assert by_rule(lint_text(text), "schema-invalid") == []


@pytest.mark.parametrize(
    ("text", "good", "typo", "line", "source"),
    [
        (PYTORCHJOB, "pytorchReplicaSpecs:", "pytorchReplicaSpec:", 7, "kubeflow/training-operator v1.9.0"),
        (MPIJOB_V2, "mpiReplicaSpecs:", "mpiReplicaSpec:", 11, "kubeflow/mpi-operator v0.8.0"),
        (MPIJOB_V1, "mpiReplicaSpecs:", "mpiReplicasSpecs:", 9, "kubeflow/training-operator v1.9.0"),
        (JOBSET, "replicatedJobs:", "replicatedJob:", 12, "kubernetes-sigs/jobset v0.12.0"),
    ],
    ids=["pytorch", "mpi-v2", "mpi-v1", "jobset"],
)
def test_a_typo_in_the_replica_specs_is_reported_at_its_line(text, good, typo, line, source):
    findings = by_rule(lint_text(text.replace(good, typo)), "schema-invalid")
    unknown = [f for f in findings if f.severity == Severity.WARNING]
    assert [(f.line, f.column) for f in unknown] == [(line, 3)]
    assert f'unknown field "spec.{typo[:-1]}"' in unknown[0].message
    assert f"CRD of {source}" in unknown[0].message


def test_a_misspelt_resources_key_inside_a_replica_template_is_reported():
    findings = by_rule(
        lint_text(
            MPIJOB_V2.replace(
                "            resources:\n              limits: {cpu: 1, memory: 1Gi, nvidia",
                "            resource:\n              limits: {cpu: 1, memory: 1Gi, nvidia",
            )
        ),
        "schema-invalid",
    )
    assert [(f.line, f.severity) for f in findings] == [(30, Severity.WARNING)]
    assert 'unknown field "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource"' in findings[0].message


def test_wrong_types_are_errors_at_the_value():
    findings = by_rule(
        lint_text(
            PYTORCHJOB.replace(
                "replicas: 1\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727\n              command",
                "replicas: two\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727\n              command",
                1,
            )
        ),
        "schema-invalid",
    )
    assert [(f.line, f.severity) for f in findings] == [(9, Severity.ERROR)]
    assert "spec.pytorchReplicaSpecs.Master.replicas: Invalid value" in findings[0].message


def test_a_missing_required_field_is_an_error():
    findings = by_rule(
        lint_text(JOBSET.replace("  - name: leader\n    replicas: 1", "  - replicas: 1")), "schema-invalid"
    )
    assert [(f.severity, f.line) for f in findings] == [(Severity.ERROR, 13)]
    assert '"name" is required' in findings[0].message


def test_kinds_without_a_bundled_schema_are_not_checked():
    text = JOBSET.replace("jobset.x-k8s.io/v1alpha2", "jobset.x-k8s.io/v1alpha1").replace(
        "replicatedJobs:", "replicatedJob:"
    )
    assert by_rule(lint_text(text), "schema-invalid") == []


# Shaped like kubernetes-sigs/lws v0.10.0 docs/examples/sample/lws.yaml: no rolloutStrategy or
# networkConfig (the LWS webhook defaults them), and an int-or-string maxSurge.
LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: leaderworkerset-sample
spec:
  replicas: 3
  rolloutStrategy:
    rollingUpdateConfiguration:
      maxSurge: 25%
  leaderWorkerTemplate:
    size: 4
    workerTemplate:
      spec:
        containers:
        - name: nginx
          image: nginxinc/nginx-unprivileged:1.27
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def test_leaderworkerset_is_checked_and_webhook_defaults_are_not_required():
    assert by_rule(lint_text(LWS), "schema-invalid") == []
    findings = by_rule(lint_text(LWS.replace("    workerTemplate:", "    workersTemplate:")), "schema-invalid")
    unknown = [f for f in findings if f.severity == Severity.WARNING]
    assert [(f.line, f.column) for f in unknown] == [(12, 5)]
    assert 'unknown field "spec.leaderWorkerTemplate.workersTemplate"' in unknown[0].message
    assert "CRD of kubernetes-sigs/lws v0.10.0" in unknown[0].message


# ----------------------------------------------------------------- Trainer v2, Ray, Volcano, Kueue, Karpenter

# Shaped like kubeflow/trainer v2.3.0 manifests/base/runtimes/torch_distributed.yaml and
# examples/yaml/01-multi-node.yaml.
TRAINER = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-local
  namespace: ml
spec:
  mlPolicy:
    numNodes: 2
    torch:
      numProcPerNode: auto  # Trainer v2.0/v2.1; v2.2 dropped it (accepted: clusters still run those)
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: multi-node-example
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: torch-distributed
  trainer:
    numNodes: 3
    command: [torchrun, train.py]
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 8
"""

# Shaped like ray-project/kuberay v1.7.0 ray-operator/config/samples/ray-job.resources.yaml,
# ray-cluster.sample.yaml and ray-service.sample.yaml, with GPU workers.
RAY = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-sample
spec:
  entrypoint: python /home/ray/samples/sample_code.py
  entrypointNumGpus: 0.5
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams:
        num-cpus: "3"
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
            ports:
            - containerPort: 6379
              name: gcs-server
            resources:
              limits: {cpu: "1", memory: 5Gi}
    workerGroupSpecs:
    - replicas: 1
      minReplicas: 1
      maxReplicas: 5
      groupName: gpu-group
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.52.0-gpu
            resources:
              limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: raycluster-kuberay
spec:
  rayVersion: "2.52.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
  workerGroupSpecs:
  - replicas: 2
    groupName: workergroup
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0-gpu
          resources:
            limits: {nvidia.com/gpu: 1}
---
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: rayservice-sample
spec:
  serveConfigV2: |
    applications:
      - name: fruit_app
        import_path: fruit.deployment_graph
  rayClusterConfig:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
    workerGroupSpecs:
    - replicas: 1
      groupName: small-group
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.52.0-gpu
            resources:
              limits: {nvidia.com/gpu: 1}
"""

# Shaped like volcano-sh/volcano v1.15.1 example/job.yaml, example/deployment/queue.yaml and a
# PodGroup as the Volcano docs show it.
VOLCANO = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: test-job
spec:
  minAvailable: 3
  schedulerName: volcano
  policies:
    - event: PodEvicted
      action: RestartJob
  plugins:
    ssh: []
    env: []
    svc: []
  maxRetry: 5
  queue: default
  tasks:
    - replicas: 3
      name: worker
      template:
        spec:
          containers:
            - image: nvcr.io/nvidia/pytorch:25.01-py3
              name: worker
              resources:
                limits:
                  nvidia.com/gpu: 1
          restartPolicy: OnFailure
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: research
spec:
  weight: 1
  reclaimable: false
  capability:
    cpu: 64
    nvidia.com/gpu: 16
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: training
spec:
  minMember: 4
  queue: research
  minResources:
    nvidia.com/gpu: 4
"""

# Shaped like kubernetes-sigs/kueue v0.19.2 site/static/examples/admin/single-clusterqueue-setup.yaml
# and tas/sample-queues.yaml.
KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: tas-flavor
spec:
  nodeLabels:
    cloud.provider.com/node-group: tas-node-group
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: default
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: research
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: tas-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: 36Gi
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: user-queue
spec:
  clusterQueue: cluster-queue
"""

# Shaped like aws/karpenter-provider-aws v1.14.1 examples/v1/general-purpose.yaml, for GPU instances.
KARPENTER = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["p5", "g6e"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
      taints:
        - key: nvidia.com/gpu
          effect: NoSchedule
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
  limits:
    nvidia.com/gpu: 64
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-ml-cluster
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: ml-cluster
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: ml-cluster
  amiSelectorTerms:
    - alias: al2023@latest
"""

# v1beta1 (Kueue before v0.15) names the cohort `cohort`; v1beta2 renamed it `cohortName`.
KUEUE_V1BETA1 = KUEUE.replace("kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1").replace("cohortName:", "cohort:")
FAMILIES = {"trainer": TRAINER, "ray": RAY, "volcano": VOLCANO, "kueue": KUEUE, "kueue-v1beta1": KUEUE_V1BETA1}
FAMILIES["karpenter"] = KARPENTER


@pytest.mark.parametrize("text", list(FAMILIES.values()), ids=list(FAMILIES))
def test_documented_manifests_of_the_other_workload_projects_are_clean(text):
    assert by_rule(lint_text(text), "schema-invalid") == []


@pytest.mark.parametrize(
    ("family", "good", "typo", "field", "source"),
    [
        ("ray", "  rayClusterSpec:", "  rayClusterSpc:", "spec.rayClusterSpc", "ray-project/kuberay v1.7.0"),
        (
            "ray",
            "  workerGroupSpecs:\n  - replicas: 2",
            "  workerGroupSpec:\n  - replicas: 2",
            "spec.workerGroupSpec",
            "",
        ),
        ("ray", "  rayClusterConfig:", "  rayClusterConf:", "spec.rayClusterConf", ""),
        ("trainer", "  runtimeRef:", "  runtimeref:", "spec.runtimeref", "kubeflow/trainer v2.3.0"),
        ("trainer", "    numNodes: 2", "    numNode: 2", "spec.mlPolicy.numNode", ""),
        ("trainer", "    resourcesPerNode:", "    resourcesPerNodes:", "spec.trainer.resourcesPerNodes", ""),
        ("volcano", "  tasks:", "  task:", "spec.task", "volcano-sh/volcano v1.15.1"),
        ("volcano", "  minMember: 4", "  minMembers: 4", "spec.minMembers", ""),
        ("volcano", "  reclaimable: false", "  reclaimeable: false", "spec.reclaimeable", ""),
        ("kueue", "  resourceGroups:", "  resourceGroup:", "spec.resourceGroup", "kubernetes-sigs/kueue v0.19.2"),
        ("kueue", "  clusterQueue: cluster-queue", "  clusterqueue: cluster-queue", "spec.clusterqueue", ""),
        ("kueue", "  nodeLabels:", "  nodeLabel:", "spec.nodeLabel", ""),
        ("kueue", "  levels:", "  level:", "spec.level", ""),
        ("kueue-v1beta1", "  cohort: research", "  cohortName: research", "spec.cohortName", ""),
        ("karpenter", "      nodeClassRef:", "      nodeClass:", "spec.template.spec.nodeClass", "aws/karpenter"),
        ("karpenter", "  amiSelectorTerms:", "  amiSelectorTerm:", "spec.amiSelectorTerm", ""),
    ],
)
def test_a_typo_in_another_projects_kind_is_reported_at_its_line(family, good, typo, field, source):
    text = FAMILIES[family].replace(good, typo, 1)
    findings = by_rule(lint_text(text), "schema-invalid")
    line = next(n for n, row in enumerate(text.lstrip("\n").splitlines(), 1) if row == typo.splitlines()[0])
    unknown = [f for f in findings if f.message.startswith(f'unknown field "{field}"')]
    assert [(f.line, f.severity) for f in unknown] == [(line, Severity.WARNING)], findings
    assert f"CRD of {source}" in unknown[0].message
