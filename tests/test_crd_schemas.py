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
