"""Gangs of heterogeneous roles (leader + workers, launcher + workers, head + worker groups, a JobSet's
replicated jobs) on a Karpenter NodePool of several instance types, packed exactly within the pool's
limits. The pool (the Karpenter docs' GPU NodePool) may launch g5.xlarge (4 vCPUs, 1 GPU), g5.2xlarge
(8 vCPUs, 1 GPU) and g5.12xlarge (48 vCPUs, 4 GPUs); its limits here are 3 GPUs and 12 CPUs of capacity
(Karpenter counts each new node's capacity against them: kubernetes-sigs/karpenter
pkg/controllers/provisioning/scheduling/scheduler.go, filterByRemainingResources and subtractMax).

Every gang below has a 6-CPU role (only a g5.2xlarge holds it: 6 + 3 CPUs exceed its allocatable, the
g5.12xlarge exceeds the CPU limit) and 3-CPU roles (a g5.xlarge each). One 6-CPU pod and one 3-CPU pod
fit as a mix, 8 + 4 = 12 CPUs: clean (main said "only a mix of instance types holds them: not proven
to fit"). One more 3-CPU pod needs 8 + 4 + 4 = 16 CPUs: proven not to fit, though 3 GPUs are within
the limit and every instance type alone is too."""

import textwrap

import pytest
from conftest import DATA, check_json, inventory_args, run_cli

TOLERATION = "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"
SHORT = "pods placed at once; neither the nodes nor the nodes its pools can still add hold them"


def limited(tmp_path, cpus: int, only_gpu_pool: bool = False) -> str:
    """The Karpenter fixture's NodePools, the GPU one limited to 3 GPUs and ``cpus`` CPUs; without the
    default NodePool (whose c, m and r types the catalog does not all describe) when ``only_gpu_pool``."""
    inventory = tmp_path / f"limited-{cpus}-{only_gpu_pool}"
    inventory.mkdir()
    documents = (DATA / "elastic" / "karpenter" / "nodepools.yaml").read_text().split("\n---\n")
    if only_gpu_pool:
        documents = [d for d in documents if "  name: default\nspec:\n  template:" not in d]
    text = "\n---\n".join(documents)
    (inventory / "nodepools.yaml").write_text(
        text.replace("    nvidia.com/gpu: 4\n", f"    nvidia.com/gpu: 3\n    cpu: {cpus}\n")
    )
    return str(inventory)


@pytest.fixture
def pools(tmp_path) -> str:
    return limited(tmp_path, 12)


def gang_findings(write, manifest: str, inventory: str) -> list[dict]:
    found = check_json(str(write("gang.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(inventory))
    return [f for f in found if f["rule"] == "gang-unsatisfiable"]


def container(name: str, cpu: int) -> str:
    return (
        f"[{{name: {name}, image: registry.example.com/{name}:1.0, "
        f"resources: {{requests: {{cpu: {cpu}}}, limits: {{nvidia.com/gpu: 1}}}}}}]"
    )


def leader_worker_set(size: int) -> str:
    """A multi-node vLLM deployment (LeaderWorkerSet docs): the leader runs the API server and rank 0."""
    return textwrap.dedent(f"""\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata:
          name: vllm
          namespace: team-a
          labels: {{kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          replicas: 1
          leaderWorkerTemplate:
            size: {size}
            leaderTemplate:
              spec:
                tolerations: [{TOLERATION}]
                containers: {container("vllm-leader", 6)}
            workerTemplate:
              spec:
                tolerations: [{TOLERATION}]
                containers: {container("vllm-worker", 3)}
        """)


def mpi_job(workers: int) -> str:
    """An MPIJob (kubeflow/mpi-operator v2beta1) whose launcher also trains (runLauncherAsWorker),
    gang-scheduled by Volcano through runPolicy.schedulingPolicy."""
    return textwrap.dedent(f"""\
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {{name: tensorflow-benchmarks, namespace: ml}}
        spec:
          slotsPerWorker: 1
          runLauncherAsWorker: true
          runPolicy:
            cleanPodPolicy: Running
            schedulingPolicy: {{minAvailable: {workers + 1}}}
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  schedulerName: volcano
                  tolerations: [{TOLERATION}]
                  containers: {container("launcher", 6)}
            Worker:
              replicas: {workers}
              template:
                spec:
                  schedulerName: volcano
                  tolerations: [{TOLERATION}]
                  containers: {container("worker", 3)}
        """)


def ray_cluster(small: int) -> str:
    """A RayCluster queued in Kueue: a CPU head and two GPU worker groups, all on the GPU NodePool."""
    return textwrap.dedent(f"""\
        apiVersion: ray.io/v1
        kind: RayCluster
        metadata:
          name: raycluster-gpu
          namespace: team-a
          labels: {{kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          headGroupSpec:
            rayStartParams: {{}}
            template:
              spec:
                tolerations: [{TOLERATION}]
                tolerations: [{TOLERATION}]
                containers:
                - {{name: ray-head, image: rayproject/ray:2.9.0, resources: {{requests: {{cpu: 1, memory: 2Gi}}}}}}
          workerGroupSpecs:
          - groupName: large
            replicas: 1
            minReplicas: 1
            maxReplicas: 1
            rayStartParams: {{}}
            template:
              spec:
                tolerations: [{TOLERATION}]
                containers: {container("ray-worker", 6)}
          - groupName: small
            replicas: {small}
            minReplicas: {small}
            maxReplicas: {small}
            rayStartParams: {{}}
            template:
              spec:
                tolerations: [{TOLERATION}]
                containers: {container("ray-worker", 3)}
        """)


def job_set(workers: int) -> str:
    """A JobSet queued in Kueue: a driver job and a workers job, admitted whole."""
    return textwrap.dedent(f"""\
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: trainer
          namespace: team-a
          labels: {{kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          replicatedJobs:
          - name: driver
            replicas: 1
            template:
              spec:
                parallelism: 1
                completions: 1
                template:
                  spec:
                    restartPolicy: Never
                    tolerations: [{TOLERATION}]
                    containers: {container("driver", 6)}
          - name: workers
            replicas: 1
            template:
              spec:
                parallelism: {workers}
                completions: {workers}
                template:
                  spec:
                    restartPolicy: Never
                    tolerations: [{TOLERATION}]
                    containers: {container("worker", 3)}
        """)


@pytest.mark.parametrize(
    ("build", "system", "pods"),
    [
        (leader_worker_set, "Kueue workload (queue user-queue) needs", 1),
        (mpi_job, "MPIJob", 0),
        (job_set, "Kueue workload (queue user-queue) needs", 0),
    ],
    ids=["leaderworkerset", "mpijob", "jobset"],
)
def test_a_leader_and_workers_on_a_mix_of_instance_types(write, pools, build, system, pods):
    # ``pods``: a LeaderWorkerSet's size counts its leader; the others count workers
    assert gang_findings(write, build(1 + pods), pools) == []
    (error,) = gang_findings(write, build(2 + pods), pools)
    assert error["severity"] == "error"
    assert error["message"].startswith(system), error["message"]
    assert f"needs 3 {SHORT}" in error["message"], error["message"]
    assert any("1 new node(s) of g5.2xlarge, 3 new node(s) of g5.xlarge" in note for note in error["notes"]), error


def test_a_ray_head_and_worker_groups_on_a_mix(write, tmp_path):
    # a GPU-only cluster: the 1-CPU head shares the large worker's g5.2xlarge (6 + 1 of 8 vCPUs); large +
    # 1 small fit as a mix, large + 2 small need 16 CPUs of a 12-CPU limit
    pools = limited(tmp_path, 12, only_gpu_pool=True)
    assert gang_findings(write, ray_cluster(1), pools) == []
    (error,) = gang_findings(write, ray_cluster(2), pools)
    assert error["severity"] == "error"
    assert f"needs 4 {SHORT}" in error["message"], error["message"]


def test_a_bigger_limit_is_a_fit_not_a_warning(write, tmp_path):
    # trap: with 16 CPUs under the limit the gangs above fit (8 + 4 + 4): no finding at all
    roomier = limited(tmp_path, 16, only_gpu_pool=True)
    for manifest in (leader_worker_set(3), mpi_job(2), job_set(2), ray_cluster(2)):
        assert gang_findings(write, manifest, roomier) == [], manifest


def test_explain_shows_where_each_role_goes(write, pools):
    run = run_cli("explain", str(write("gang.yaml", leader_worker_set(2))), *inventory_args(pools))
    assert run.exit_code == 0, run.stderr
    assert "a placement: 1 new node (Karpenter NodePool gpu: g5.2xlarge): 1 leader" in run.stdout, run.stdout
    assert "a placement: 1 new node (Karpenter NodePool gpu: g5.xlarge): 1 worker" in run.stdout


def test_explain_shows_the_nodes_that_exist_too(write):
    # tests/data/racks: the launcher and both workers (1 GPU each) fit together on one node
    run = run_cli("explain", str(write("gang.yaml", mpi_job(2))), *inventory_args(DATA / "racks"))
    assert run.exit_code == 0, run.stderr
    assert "fits in 1 domain(s): the cluster\n" in run.stdout
    assert "a placement: node r3-0: 1 Launcher, 2 Worker\n" in run.stdout, run.stdout


def volcano_job_set(workers: int) -> str:
    """A JobSet whose pods join a Volcano PodGroup (minMember: all of them) by annotation."""
    template = """\
          - name: {name}
            replicas: 1
            template:
              spec:
                parallelism: {count}
                completions: {count}
                template:
                  metadata:
                    annotations: {{scheduling.k8s.io/group-name: trainer}}
                  spec:
                    schedulerName: volcano
                    restartPolicy: Never
                    tolerations: [{toleration}]
                    containers: {containers}
"""
    head = textwrap.dedent(f"""\
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: PodGroup
        metadata: {{name: trainer, namespace: team-a}}
        spec:
          minMember: {workers + 1}
        ---
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {{name: trainer, namespace: team-a}}
        spec:
          replicatedJobs:
        """)
    jobs = [("driver", 1, container("driver", 6)), ("workers", workers, container("worker", 3))]
    return head + "".join(
        template.format(name=name, count=count, toleration=TOLERATION, containers=containers)
        for name, count, containers in jobs
    )


def test_a_job_set_in_a_volcano_pod_group_on_a_mix(write, pools):
    assert gang_findings(write, volcano_job_set(1), pools) == []
    (error,) = gang_findings(write, volcano_job_set(2), pools)
    assert error["severity"] == "error"
    assert error["message"].startswith(f"Volcano PodGroup trainer needs 3 {SHORT}"), error["message"]
