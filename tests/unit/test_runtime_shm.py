"""dev-shm-missing: GPU containers that keep the runtime's 64 MiB /dev/shm, and its --fix."""

from __future__ import annotations

import textwrap

from conftest import run_cli
from rule_harness import assert_findings, findings_of

RULE = "dev-shm-missing"

VLLM_TP4 = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-70b, namespace: inference}
spec:
  replicas: 1
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
        resources:
          limits:
            nvidia.com/gpu: 4
"""


def test_multi_gpu_vllm_without_dev_shm():
    assert_findings(RULE, VLLM_TP4, [(11, 15, "'vllm' (4 nvidia.com/gpu")])


def test_memory_emptydir_at_dev_shm_is_clean():
    fixed = VLLM_TP4 + textwrap.indent(
        "  volumeMounts:\n  - {name: dshm, mountPath: /dev/shm}\nvolumes:\n- name: dshm\n  emptyDir: {medium: Memory}\n",
        "      ",
    )
    assert_findings(RULE, fixed, [])


def with_shm(size_limit: str) -> str:
    limit = f", sizeLimit: {size_limit}" if size_limit else ""
    return VLLM_TP4 + textwrap.indent(
        "  volumeMounts:\n  - {name: dshm, mountPath: /dev/shm}\nvolumes:\n- name: dshm\n"
        f"  emptyDir: {{medium: Memory{limit}}}\n",
        "      ",
    )


def test_a_dev_shm_no_bigger_than_the_runtime_default_is_reported_at_its_size_limit():
    (finding,) = assert_findings(
        RULE, with_shm("64Mi"), [(21, 47, "container 'vllm' (4 nvidia.com/gpu) mounts a /dev/shm of sizeLimit 64Mi")]
    )
    assert "no more than the runtime's 64 MiB default it replaces" in finding.message
    assert_findings(RULE, with_shm("32M"), [(21, 47, "sizeLimit 32M")])
    # the fixed twins: a larger limit, or none
    assert_findings(RULE, with_shm("16Gi"), [])
    assert_findings(RULE, with_shm("65Mi"), [])
    assert_findings(RULE, with_shm(""), [])


def test_a_small_dev_shm_traps():
    # one GPU, one process: 64 MiB is enough, whatever the limit
    single = with_shm("64Mi").replace('"--tensor-parallel-size", "4"', '"--tensor-parallel-size", "1"')
    assert_findings(RULE, single.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 1"), [])
    # a disk-backed emptyDir's sizeLimit is an eviction threshold, not the mount's size
    assert_findings(RULE, with_shm("64Mi").replace("medium: Memory, ", ""), [])
    # a limit gpulint cannot read is not judged
    assert_findings(RULE, with_shm("lots"), [])


def test_host_ipc_pod_uses_the_node_shm():
    assert_findings(RULE, VLLM_TP4.replace("      containers:", "      hostIPC: true\n      containers:"), [])


def test_single_gpu_inference_pod_is_clean():
    # The common case: one GPU, tensor parallel size 1 (or none): one process, no NCCL.
    single = VLLM_TP4.replace('"--tensor-parallel-size", "4"', '"--tensor-parallel-size", "1"').replace(
        "nvidia.com/gpu: 4", "nvidia.com/gpu: 1"
    )
    assert_findings(RULE, single, [])


def test_cpu_pod_and_hami_memory_shares_are_not_gpu_counts():
    assert_findings(
        RULE,
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: vgpu}
        spec:
          containers:
          - name: app
            image: ubuntu:22.04
            resources:
              limits:
                nvidia.com/gpu: 1
                nvidia.com/gpumem: 3000
                nvidia.com/gpucores: 30
          - name: sidecar
            image: busybox
        """,
        [],
    )


def test_one_gpu_torchrun_with_several_processes_in_sh_c():
    assert_findings(
        RULE,
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: ddp-smoke}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: train
                image: pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime
                command: ["/bin/bash", "-c"]
                args:
                - |
                  pip install -r requirements.txt && \\
                  torchrun --standalone --nproc_per_node=$(NPROC) train.py
                env:
                - {name: NPROC, value: "2"}
                resources:
                  limits: {nvidia.com/gpu: 1}
        """,
        [(9, 15, "'train' (torchrun, 2 GPU processes) has no memory-backed emptyDir")],
    )


def test_unresolved_process_count_is_silent():
    # The count comes from a Secret: gpulint cannot know it, so it does not guess.
    assert_findings(
        RULE,
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: ddp}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: train
                image: pytorch/pytorch:2.4.0
                command: [sh, -c, "torchrun --nproc-per-node=$NPROC train.py"]
                env:
                - name: NPROC
                  valueFrom: {secretKeyRef: {name: job, key: nproc}}
                resources:
                  limits: {nvidia.com/gpu: 1}
        """,
        [],
    )


def test_distributed_ranks_with_one_gpu_each():
    assert_findings(
        RULE,
        """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: mnist-ddp}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers:
                  - name: pytorch
                    image: kubeflow/pytorch-dist-mnist:latest
                    resources: {limits: {nvidia.com/gpu: 1}}
            Worker:
              replicas: 3
              template:
                spec:
                  containers:
                  - name: pytorch
                    image: kubeflow/pytorch-dist-mnist:latest
                    resources: {limits: {nvidia.com/gpu: 1}}
        """,
        [(11, 19, "one rank of a distributed PyTorchJob"), (19, 19, "one rank of a distributed PyTorchJob")],
    )


def test_fix_adds_volume_and_mount_keeping_comments(write):
    path = write(
        "deploy.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: llama}
        spec:
          selector: {matchLabels: {app: llama}}
          template:
            metadata: {labels: {app: llama}}
            spec:
              containers:
              - name: vllm   # the server
                image: vllm/vllm-openai:v0.10.1
                args: [--model, m, -tp, "2"]
                resources:
                  limits: {nvidia.com/gpu: 2}
                volumeMounts:
                - name: cache
                  mountPath: /root/.cache
              volumes:
              - name: cache
                emptyDir: {}
        """,
    )
    result = run_cli("check", "--select", RULE, "--fix", str(path))
    assert "applied 1 fix" in result.stderr, result.stderr
    assert path.read_text() == textwrap.dedent(
        """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: llama}
        spec:
          selector: {matchLabels: {app: llama}}
          template:
            metadata: {labels: {app: llama}}
            spec:
              containers:
              - name: vllm   # the server
                image: vllm/vllm-openai:v0.10.1
                args: [--model, m, -tp, "2"]
                resources:
                  limits: {nvidia.com/gpu: 2}
                volumeMounts:
                - name: cache
                  mountPath: /root/.cache
                - name: dshm
                  mountPath: /dev/shm
              volumes:
              - name: cache
                emptyDir: {}
              - name: dshm
                emptyDir:
                  medium: Memory
        """
    )
    assert run_cli("check", "--select", RULE, str(path)).exit_code == 0


def test_fix_creates_missing_lists_for_every_container(write):
    path = write(
        "pod.yaml",
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: two}
        spec:
          containers:
            - name: a
              image: x
              resources: {limits: {nvidia.com/gpu: 2}}
            - name: b
              image: x
              resources: {limits: {nvidia.com/gpu: 2}}
        """,
    )
    run_cli("check", "--select", RULE, "--fix", str(path))
    assert path.read_text() == textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: two}
        spec:
          containers:
            - name: a
              image: x
              resources: {limits: {nvidia.com/gpu: 2}}
              volumeMounts: [{name: dshm, mountPath: /dev/shm}]
            - name: b
              image: x
              resources: {limits: {nvidia.com/gpu: 2}}
              volumeMounts: [{name: dshm, mountPath: /dev/shm}]
          volumes: [{name: dshm, emptyDir: {medium: Memory}}]
        """
    )


RAY_CLUSTER = """
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {name: raycluster-gpu, namespace: ml}
    spec:
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers:
            - {name: ray-head, image: rayproject/ray:2.9.0-gpu, resources: {limits: {cpu: "2"}}}
      workerGroupSpecs:
      - groupName: gpu-group
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            containers:
            - {name: ray-worker, image: rayproject/ray:2.9.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}}
    """


def test_a_ray_worker_is_a_rank_for_dev_shm_but_ray_needs_no_gang():
    # kube/distributed.py: Ray's pods are ranks of one program (each needs /dev/shm), but Ray schedules its
    # tasks on the workers that exist, so gang-missing does not ask for a gang; a PyTorchJob's ranks do need one.
    # KubeRay mounts /dev/shm in the Ray container itself unless rayStartParams sets plasma-directory.
    assert findings_of(None, RAY_CLUSTER) == []
    plasma = RAY_CLUSTER.replace(
        "replicas: 2\n        rayStartParams: {}", "replicas: 2\n        rayStartParams: {plasma-directory: /tmp}"
    )
    found = findings_of(None, plasma)
    assert [(f.rule, f.line) for f in found] == [("dev-shm-missing", 18)]
    assert "one rank of a distributed RayCluster" in found[0].message
    pytorch = """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: ddp, namespace: ml}
        spec:
          pytorchReplicaSpecs:
            Worker:
              replicas: 2
              template:
                spec:
                  containers:
                  - {name: pytorch, image: registry.example.com/ddp:1.0, resources: {limits: {nvidia.com/gpu: 1}}}
        """
    assert [f.rule for f in findings_of(None, pytorch)] == ["gang-missing", "dev-shm-missing"]
