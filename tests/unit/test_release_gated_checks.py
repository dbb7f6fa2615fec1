"""The Volcano, Training Operator, JobSet and LeaderWorkerSet webhook checks that began or ended with a release,
judged by the releases a repository installs (lint/world/operator_releases.py READERS): none where every release
found predates a check or postdates its removal, an error naming them where every one runs it, a warning where they
disagree, and the newest release's verdict where none is found or one names no release. Through the gpulint CLI on
files laid out as repositories lay them out: a kustomization's remote base (kubectl apply -k
"github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1", the Training Operator's install
instructions), a release asset, charts through Flux and Argo CD, the controller's or webhook's Deployment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.kube.releases import Span, git_release, runs

# An elastic PyTorchJob without a Worker spec (kubeflow/trainer#2278: v1.8 took it and its operator crashed)
ELASTIC = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llama-elastic, namespace: training}
spec:
  elasticPolicy: {rdzvBackend: c10d, minReplicas: 1, maxReplicas: 4}
  nprocPerNode: "8"
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.05-py3
            resources: {limits: {nvidia.com/gpu: 8}}
"""
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
- job.yaml
"""
ELASTIC_WORDS = "spec.pytorchReplicaSpecs.Worker: Required value: must be configured if elastic policy is used"


def _findings(*args: str) -> list[dict[str, object]]:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1, 2), run.stderr
    found: list[dict[str, object]] = json.loads(run.stdout)["findings"]
    return found


def _refused(root: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    """Each operator-rejected finding: its severity, its words after the subject, the notes on releases."""
    return [
        (
            str(f["severity"]),
            str(f["message"]).partition(": ")[2],
            tuple(str(n) for n in f.get("notes") or () if "release" in str(n) or "refuse it" in str(n)),
        )
        for f in _findings(str(root))
        if f["rule"] == "operator-rejected"
    ]


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        # the release that took it, as its install instructions pin it
        ("github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1", []),
        ("https://github.com/kubeflow/trainer.git//manifests/overlays/standalone?ref=v1.7.0", []),
        (
            "github.com/kubeflow/trainer/manifests/overlays/standalone?ref=v1.9.3",
            [("error", ELASTIC_WORDS, ("the Training Operator releases found: v1.9.3 (kustomize remote bases",))],
        ),
        # unpinned (the default branch), another repository's ref, a Trainer v2 tag: the newest v1 release's verdict
        ("github.com/kubeflow/training-operator/manifests/overlays/standalone", [("error", ELASTIC_WORDS, ())]),
        (
            "https://github.com/kubeflow/manifests/apps/training-operator/upstream?ref=v1.8.0",
            [("error", ELASTIC_WORDS, ())],
        ),
        ("https://github.com/kubeflow/trainer/manifests/overlays/manager?ref=v2.0.0", [("error", ELASTIC_WORDS, ())]),
    ],
)
def test_elastic_worker_check_by_the_remote_base_s_ref(
    tmp_path: Path, base: str, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION % base)
    (tmp_path / "job.yaml").write_text(ELASTIC)
    found = [
        (s, m, tuple(n.partition(" (")[0] + " (kustomize remote bases" if "(" in n else n for n in notes))
        for s, m, notes in _refused(tmp_path)
    ]
    assert found == expected


ARGO_TRAINING = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: training-operator, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://github.com/kubeflow/training-operator.git
    targetRevision: %s
    path: manifests/overlays/standalone
  destination: {server: "https://kubernetes.default.svc", namespace: kubeflow}
"""


def test_argo_cd_git_source_and_disagreeing_releases(tmp_path: Path) -> None:
    """An Argo CD Application of the operator's repository at v1.8.0 takes the job; with another cluster's at
    v1.9.1 beside it, a warning names both."""
    (tmp_path / "job.yaml").write_text(ELASTIC)
    (tmp_path / "argo.yaml").write_text(ARGO_TRAINING % "v1.8.0")
    assert _refused(tmp_path) == []
    (tmp_path / "argo2.yaml").write_text(ARGO_TRAINING.replace("name: training-operator", "name: to-next") % "v1.9.1")
    assert _refused(tmp_path) == [
        (
            "warning",
            ELASTIC_WORDS,
            (
                "the Training Operator releases found: v1.8.0 (Application training-operator), "
                "v1.9.1 (Application to-next)",
                "The Training Operator v1.9 and later refuse it; the others take it",
            ),
        )
    ]


QUEUE = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 1
  reclaimable: true
  deserved: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "16"}
  capability: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
"""
# The admission webhook's Deployment as the chart renders it (templates/admission.yaml)
WEBHOOK = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: volcano-admission, namespace: %s}
spec:
  selector: {matchLabels: {app: volcano-admission}}
  template:
    metadata: {labels: {app: volcano-admission}}
    spec:
      containers:
      - name: admission
        image: docker.io/volcanosh/vc-webhook-manager:%s
        args: [--enabled-admission=/jobs/mutate,/jobs/validate,/queues/mutate,/queues/validate]
"""
QUEUE_WORDS = 'requestBody.spec.deserved.nvidia.com/gpu: Invalid value: "16"'  # the rest in a note (split_long)


@pytest.mark.parametrize(
    ("webhooks", "expected"),
    [
        ((("volcano-system", "v1.12.2"),), []),  # validate_queue.go checks it from v1.13.0 (volcano#4293)
        (
            (("volcano-system", "v1.13.0"),),
            [
                (
                    "error",
                    QUEUE_WORDS,
                    ("the Volcano releases found: v1.13.0 (Deployment volcano-system/volcano-admission)",),
                )
            ],
        ),
        (
            (("volcano-system", "v1.12.2"), ("volcano-next", "v1.15.1")),
            [
                (
                    "warning",
                    QUEUE_WORDS,
                    (
                        "the Volcano releases found: v1.15.1 (Deployment volcano-next/volcano-admission), v1.12.2 "
                        "(Deployment volcano-system/volcano-admission)",
                        "Volcano v1.13 and later refuse it; the others take it",
                    ),
                )
            ],
        ),
        ((("volcano-system", "latest"),), [("error", QUEUE_WORDS, ())]),  # no release named: the newest's
        ((), [("error", QUEUE_WORDS, ())]),
    ],
)
def test_queue_check_by_the_webhook_s_release(
    tmp_path: Path, webhooks: tuple[tuple[str, str], ...], expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    for namespace, tag in webhooks:
        (tmp_path / f"webhook-{namespace}.yaml").write_text(WEBHOOK % (namespace, tag))
    assert _refused(tmp_path) == expected


# An MPI Volcano Job whose hosts are one task (the launcher): v1.6.0 to v1.14.x refuse it, v1.15.0 takes it
MPI_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: nccl-allreduce, namespace: research}
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins: {mpi: ["--master=mpimaster", "--port=22"], ssh: [], svc: []}
  tasks:
  - name: mpimaster
    replicas: 1
    template:
      spec:
        containers:
        - {name: mpimaster, image: nvcr.io/nvidia/pytorch:24.05-py3, command: [mpirun, -np, "8", all_reduce_perf]}
  - name: trainer
    replicas: 1
    template:
      spec:
        containers:
        - {name: trainer, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: 8}}}
"""
FLUX_VOLCANO = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: volcano, namespace: volcano-system}
spec:
  interval: 30m
  chart:
    spec:
      chart: volcano
      version: "%s"
      sourceRef: {kind: HelmRepository, name: volcano-sh}
  values:
    custom: {scheduler_replicas: 1}
"""
MPI_WORDS = "The specified mpi worker task was not found"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.14.1", [("error", MPI_WORDS, ("the Volcano releases found: 1.14.1 (HelmRelease volcano)",))]),
        ("1.15.0", []),
        ("1.15.x", []),  # a range names no release: only the newest's verdict, and v1.15 takes it
    ],
)
def test_mpi_worker_task_by_the_chart_s_version(
    tmp_path: Path, version: str, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    (tmp_path / "job.yaml").write_text(MPI_JOB)
    (tmp_path / "volcano.yaml").write_text(FLUX_VOLCANO % version)
    assert _refused(tmp_path) == expected


def test_mpi_worker_task_with_its_worker_named(tmp_path: Path) -> None:
    """--worker names the task v1.14 looks for: the trap twin of the refused Job."""
    (tmp_path / "job.yaml").write_text(MPI_JOB.replace('"--port=22"', '"--worker=trainer", "--port=22"'))
    (tmp_path / "volcano.yaml").write_text(FLUX_VOLCANO % "1.14.1")
    assert _refused(tmp_path) == []


PARTITIONED = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: pretrain, namespace: research}
spec:
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 8
    minAvailable: 8
    partitionPolicy: {totalPartitions: 2, partitionSize: 4}
    template:
      spec:
        containers:
        - {name: worker, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: 8}}}
"""
VOLCANO_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- https://raw.githubusercontent.com/volcano-sh/volcano/%s/installer/volcano-development.yaml
- job.yaml
"""
PARTITION_WORDS = "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: worker, job: pretrain"


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        # v1.14.x compares minAvailable with minPartitions x partitionSize even with minPartitions unset
        ("v1.14.0", [("error", PARTITION_WORDS, ("the Volcano releases found: v1.14.0 (kustomize remote bases",))]),
        ("v1.15.1", []),  # only when minPartitions > 0 (admit_job.go at v1.15.0)
        ("release-1.13", []),  # no partitionPolicy before v1.14: the CRD prunes it
        ("master", []),  # a branch names no release: v1.15's verdict
    ],
)
def test_partition_min_available_by_the_release_asset(
    tmp_path: Path, reference: str, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    (tmp_path / "kustomization.yaml").write_text(VOLCANO_KUSTOMIZATION % reference)
    (tmp_path / "job.yaml").write_text(PARTITIONED)
    found = [
        (s, m, tuple(n.partition(" (")[0] + " (kustomize remote bases" for n in notes))
        for s, m, notes in _refused(tmp_path)
    ]
    assert found == expected


def test_git_release_reads_the_shapes_repositories_write() -> None:
    repositories = ("kubeflow/training-operator", "volcano-sh/volcano", "kubernetes-sigs/jobset")
    assert [
        git_release(url, repositories)
        for url in (
            "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1",
            "https://github.com/kubernetes-sigs/jobset/releases/download/v0.5.2/manifests.yaml",
            "https://raw.githubusercontent.com/volcano-sh/volcano/release-1.10/installer/volcano-development.yaml",
            "https://github.com/volcano-sh/volcano/raw/v1.12.0/installer/volcano-development.yaml",
            "git@github.com:kubeflow/training-operator.git",
            "https://github.com/kubeflow/manifests/apps?ref=v1.8.0",
            "github.com/kubernetes-sigs/jobset/config/default?ref=main",
        )
    ] == ["v1.8.1", "v0.5.2", "1.10", "v1.12.0", "", None, "main"]


def test_a_span_s_verdict_on_the_releases_found() -> None:
    dropped = Span((1, 6), (1, 15))
    assert dropped.words() == "v1.6 to v1.14"
    assert Span((1, 13)).words() == "v1.13 and later"
    assert [runs(found, dropped) for found in (["v1.14.2"], ["1.15.0"], ["v1.5.0", "v1.16.0"], ["v1.14", "v1.15"])] == [
        True,
        False,
        False,
        None,
    ]
    assert runs([], dropped) is None
    assert runs(["latest"], dropped) is None


JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: research}
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - {name: failOnDriver, action: FailJobSet, targetReplicatedJobs: [drivers]}
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: driver, image: nvcr.io/nvidia/pytorch:24.05-py3}
  - name: workers
    replicas: 2
    dependsOn: [{name: driver, status: Ready}]
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: worker, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: 8}}}
"""
# The JobSet chart through Argo CD (oci://registry.k8s.io/jobset/charts, versioned as the release)
ARGO_JOBSET = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: jobset, namespace: argocd}
spec:
  project: default
  source: {repoURL: registry.k8s.io/jobset/charts, chart: jobset, targetRevision: %s}
  destination: {server: "https://kubernetes.default.svc", namespace: jobset-system}
"""
RULE_WORDS = "invalid replicatedJob name 'drivers' in failure policy does not appear in .spec.ReplicatedJobs"


@pytest.mark.parametrize(
    ("install", "expected"),
    [
        # failurePolicy.rules came with v0.6.0: v0.5.2's CRD prunes them
        (KUSTOMIZATION % "https://github.com/kubernetes-sigs/jobset/releases/download/v0.5.2/manifests.yaml", []),
        (ARGO_JOBSET % "0.8.0", [("error", RULE_WORDS, ("the JobSet releases found: 0.8.0 (Application jobset)",))]),
        (ARGO_JOBSET % "main", [("error", RULE_WORDS, ())]),
    ],
)
def test_jobset_failure_rules_by_release(
    tmp_path: Path, install: str, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    (tmp_path / "job.yaml").write_text(JOBSET)
    (tmp_path / ("kustomization.yaml" if "Kustomization" in install else "argo.yaml")).write_text(install)
    assert _refused(tmp_path) == expected


def test_the_inventory_s_webhook_decides_and_is_named(tmp_path: Path) -> None:
    """The cluster's Volcano v1.14 (its webhook Deployment in the inventory) refuses the MPI Job without its worker
    task; with v1.15 there, nothing is said."""
    (tmp_path / "job.yaml").write_text(MPI_JOB)
    (tmp_path / "cluster.yaml").write_text(WEBHOOK % ("volcano-system", "v1.14.4"))
    args = (str(tmp_path / "job.yaml"), "--inventory", str(tmp_path / "cluster.yaml"))
    found = [(f["severity"], f["message"], f["notes"]) for f in _findings(*args) if f["rule"] == "operator-rejected"]
    assert found == [
        (
            "error",
            f"Volcano's webhook rejects this Job: {MPI_WORDS}",
            ["the Volcano releases found: v1.14.4 (Deployment volcano-system/volcano-admission of the inventory)"],
        )
    ]
    (tmp_path / "cluster.yaml").write_text(WEBHOOK % ("volcano-system", "v1.15.0"))
    assert [f for f in _findings(*args) if f["rule"] == "operator-rejected"] == []


# Eight workers in sub-groups of four beside the leader (a vLLM multi-host layout); LeaderExcluded wants size - 1
# divisible by the sub-group size
LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm-405b, namespace: serving}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 8
    subGroupPolicy: {subGroupSize: 4, subGroupPolicyType: LeaderExcluded}
    workerTemplate:
      spec:
        containers:
        - {name: vllm, image: vllm/vllm-openai:v0.8.5, resources: {limits: {nvidia.com/gpu: 8}}}
"""
LWS_CONTROLLER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: lws-controller-manager, namespace: lws-system}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      containers:
      - {name: manager, image: registry.k8s.io/lws/lws:%s, args: [--config=/controller_manager_config.yaml]}
"""


@pytest.mark.parametrize(
    ("tag", "severity"),
    [("v0.5.1", None), ("v0.6.2", "error"), ("main", "error")],  # subGroupPolicyType came with v0.6.0
)
def test_leader_excluded_by_the_controller_s_release(tmp_path: Path, tag: str, severity: str | None) -> None:
    (tmp_path / "lws.yaml").write_text(LWS)
    (tmp_path / "controller.yaml").write_text(LWS_CONTROLLER % tag)
    found = [s for s, _, _ in _refused(tmp_path)]
    assert found == ([severity] if severity else [])
    # the size - 1 split is one every release takes: the trap twin
    (tmp_path / "lws.yaml").write_text(LWS.replace("size: 8", "size: 9"))
    assert _refused(tmp_path) == []
