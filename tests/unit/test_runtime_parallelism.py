"""parallelism-mismatch: launchers' process counts against the GPUs of the pod (or the LWS group)."""

from __future__ import annotations

from rule_harness import assert_findings, findings_of

RULE = "parallelism-mismatch"


def deployment(container: str) -> str:
    return (
        """
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: inference}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
"""
        + container
    )


def test_vllm_tensor_parallel_over_the_limit_in_args_list():
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: [--model, meta-llama/Llama-3.1-70B-Instruct, -tp, "4", --pipeline_parallel_size, "2"]
        resources:
          limits: {nvidia.com/gpu: 4}
"""),
        [(13, 66, "vLLM starts 8 GPU processes (tensor-parallel-size 4 x pipeline-parallel-size 2)")],
    )


def test_vllm_fewer_processes_than_gpus_is_a_warning_at_the_flag():
    found = assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [python3, -m, vllm.entrypoints.openai.api_server]
        args: ["--model=meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=2"]
        resources:
          limits: {nvidia.com/gpu: 8}
"""),
        [(14, 84, "holds 8 nvidia.com/gpu: 6 GPUs stay idle")],
    )
    assert found[0].severity == "warning"


def test_single_gpu_inference_pod_is_clean():
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: [--model, Qwen/Qwen2.5-7B-Instruct]
        resources:
          limits: {nvidia.com/gpu: 1}
"""),
        [],
    )


def test_flag_from_an_unresolvable_variable_is_silent():
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [sh, -c, "vllm serve $MODEL --tensor-parallel-size $(TP_SIZE)"]
        envFrom:
        - configMapRef: {name: serving}
        resources:
          limits: {nvidia.com/gpu: 4}
"""),
        [],
    )


def test_dollar_paren_expanded_from_env_as_kubernetes_does():
    # $(TP) comes from env (Kubernetes expands it before the shell runs); $$ stays a literal $.
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command:
        - /bin/bash
        - -c
        - |
          echo "cost: $$5" && \\
          exec vllm serve $MODEL \\
            --tensor-parallel-size $(TP)
        env:
        - {name: TP, value: "8"}
        - {name: MODEL, value: meta-llama/Llama-3.1-70B-Instruct}
        resources:
          limits: {nvidia.com/gpu: 4}
"""),
        [(19, 36, "vLLM starts 8 GPU processes (tensor-parallel-size 8)")],
    )


def test_visible_devices_set_by_hand_silences_the_count():
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [sh, -c, "CUDA_VISIBLE_DEVICES=0,1 vllm serve m -tp 2"]
        resources:
          limits: {nvidia.com/gpu: 4}
"""),
        [],
    )


def test_torchrun_nproc_spellings_and_gpu_keyword():
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: pytorch/pytorch:2.4.0
        command: [torchrun, {flag}, train.py, --epochs, "3"]
        resources:
          limits: {nvidia.com/gpu: 4}
"""
    assert_findings(RULE, job.replace("{flag}", "--nproc_per_node=8"), [(11, 46, "torchrun starts 8 GPU processes")])
    assert_findings(RULE, job.replace("{flag}", "--nproc-per-node=gpu"), [])
    assert_findings(RULE, job.replace("{flag}", "--standalone"), [])  # default 1 via PET_* absent: not a claim


def test_pytorchjob_nproc_per_node_through_pet_variable():
    found = assert_findings(
        RULE,
        """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: llm}
        spec:
          nprocPerNode: "4"
          pytorchReplicaSpecs:
            Worker:
              replicas: 2
              template:
                spec:
                  containers:
                  - name: pytorch
                    image: registry.example.com/train:1
                    command: [torchrun, train.py]
                    resources: {limits: {nvidia.com/gpu: 8}}
        """,
        [(5, 17, "torchrun starts 4 GPU processes (nprocPerNode 4) but the 'Worker' container 'pytorch' holds 8")],
    )
    assert found[0].severity == "warning"


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: nccl-tests}
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/openmpi:0.6.0
            command: [mpirun, --allow-run-as-root, -np, "NP", -x, NCCL_DEBUG=INFO, all_reduce_perf, -b, 8, -e, 8G]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/openmpi:0.6.0
            resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_mpirun_np_against_workers_times_slots():
    assert_findings(RULE, MPIJOB.replace('"NP"', '"16"'), [])
    found = assert_findings(RULE, MPIJOB.replace('"NP"', '"32"'), [(14, 58, "Open MPI refuses")])
    assert found[0].severity == "error"
    assert_findings(RULE, MPIJOB.replace('"NP"', '"8"'), [(14, 58, "8 GPUs stay idle")])
    assert_findings(RULE, MPIJOB.replace('"NP"', '"32", --oversubscribe'), [])


def test_slots_per_worker_over_the_gpus():
    assert_findings(
        RULE,
        MPIJOB.replace('"NP"', '"16"').replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4"),
        [(5, 19, "slotsPerWorker 8 puts 8 MPI ranks on each worker")],
    )


HOROVOD = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: tensorflow-benchmarks}
spec:
  runPolicy: {cleanPodPolicy: Running}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow-benchmarks
            image: mpioperator/tensorflow-benchmarks:latest
            command: [mpirun, --allow-run-as-root, -bind-to, none, -map-by, slot, -x, NCCL_DEBUG=INFO, RUN]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow-benchmarks
            image: mpioperator/tensorflow-benchmarks:latest
            resources: {limits: {nvidia.com/gpu: 4}}
"""
SCRIPT = "python, scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py, --model=resnet101, --variable_update=horovod"


def test_default_slots_per_worker_with_mpirun_without_np_leaves_gpus_idle():
    """The MPI operator defaults slotsPerWorker to 1 (v2beta1 default.go SetDefaults_MPIJob) and writes
    slots=1 per worker in the hostfile: mpirun without -np starts one Horovod rank per 4-GPU worker."""
    found = assert_findings(
        RULE,
        HOROVOD.replace("RUN", SCRIPT),
        [(14, 23, "slotsPerWorker unset (the MPI operator's default, 1) gives each worker 1 MPI rank(s)")],
    )
    assert found[0].severity == "warning" and "6 GPUs stay idle while allocated" in found[0].message
    # written, and -np equal to the slots: the same, at slotsPerWorker
    written = HOROVOD.replace("  runPolicy:", "  slotsPerWorker: 1\n  runPolicy:").replace("RUN", f"-np, 2, {SCRIPT}")
    assert_findings(RULE, written, [(5, 19, "slotsPerWorker 1 gives each worker 1 MPI rank(s)")])
    # the fixed twin: one slot per GPU
    fixed = HOROVOD.replace("  runPolicy:", "  slotsPerWorker: 4\n  runPolicy:").replace("RUN", SCRIPT)
    assert_findings(RULE, fixed, [])


def test_one_rank_per_worker_that_uses_the_node_s_gpus_itself_is_clean():
    for runs in (
        "torchrun, --nproc-per-node=4, train.py",  # a launcher per node starts the GPU processes
        "bash, /opt/run.sh",
        "python, -m, torch.distributed.run, --nproc-per-node=4, train.py",
        "all_reduce_perf, -b, 8, -e, 8G, -g, 4",  # nccl-tests: 4 GPUs per rank
        f"-npernode, 4, {SCRIPT}",  # ranks per node chosen by mpirun
        f"--map-by, ppr:4:node, {SCRIPT}",
    ):
        assert_findings(RULE, HOROVOD.replace("RUN", runs), [])
    # nccl-tests without -g: one GPU per rank
    assert_findings(RULE, HOROVOD.replace("RUN", "all_reduce_perf, -b, 8, -e, 8G"), [(14, 23, "6 GPUs stay idle")])
    # Intel MPI and MPICH decide the count without -np otherwise
    assert_findings(
        RULE, HOROVOD.replace("RUN", SCRIPT).replace("  runPolicy:", "  mpiImplementation: Intel\n  runPolicy:"), []
    )
    # one GPU per worker: nothing idles
    assert_findings(RULE, HOROVOD.replace("RUN", SCRIPT).replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 1"), [])


def test_leaderworkerset_group_counts_all_its_pods():
    lws = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm-405b}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.10.1
          command: [sh, -c, "ray start --head && vllm serve meta-llama/Llama-3.1-405B -tp 8 -pp PP"]
          resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.10.1
          command: [sh, -c, "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert_findings(RULE, lws.replace("PP", "2"), [])
    assert_findings(RULE, lws.replace("PP", "4"), [(13, 91, "vLLM needs 32 GPUs across the group")])


def test_sglang_nnodes_from_lws_group_size():
    lws = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: sglang}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: sglang
          image: lmsysorg/sglang:latest
          command: [python3, -m, sglang.launch_server, --model-path, m, --tp, "TP", --nnodes, $(LWS_GROUP_SIZE)]
          resources: {limits: {nvidia.com/gpu: "1"}}
"""
    assert_findings(RULE, lws.replace('"TP"', '"2"'), [])
    assert_findings(
        RULE,
        lws.replace('"TP"', '"4"'),
        [(12, 80, "SGLang starts 2 GPU processes (tensor-parallel-size 4 / nnodes 2)")],
    )


def test_ray_num_gpus_against_the_ray_container():
    cluster = """
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: serve}
spec:
  headGroupSpec:
    rayStartParams: {num-gpus: "0"}
    template:
      spec:
        containers:
        - {name: ray-head, image: rayproject/ray:2.52.0}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    rayStartParams: {num-gpus: "N"}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0-gpu
          resources: {limits: {nvidia.com/gpu: 4}}
"""
    assert_findings(RULE, cluster.replace('"N"', '"4"'), [])
    assert_findings(RULE, cluster.replace('"N"', '"8"'), [(14, 32, "Ray schedules tasks on 4 GPUs that do not exist")])


RAYSERVICE = """
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: text-summarizer
spec:
  serveConfigV2: |
    applications:
      - name: text_summarizer
        import_path: text_summarizer.text_summarizer:deployment
        deployments:
          - name: Summarizer
            num_replicas: REPLICAS
            ray_actor_options:
              num_gpus: GPUS
  rayClusterConfig:
    rayVersion: '2.41.0'
    headGroupSpec:
      rayStartParams:
        num-gpus: "0"
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray-ml:2.41.0.deprecated-py39-gpu
    workerGroupSpecs:
      - replicas: 2
        minReplicas: 1
        maxReplicas: 2
        groupName: gpu-group
        rayStartParams: {}
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray-ml:2.41.0.deprecated-py39-gpu
                resources:
                  limits: {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}
"""


def serve(replicas: str = "1", gpus: str = "1") -> str:
    return RAYSERVICE.replace("REPLICAS", replicas).replace("GPUS", gpus)


def test_a_serve_replica_that_asks_more_gpus_than_any_ray_node_has():
    found = assert_findings(
        RULE,
        serve(gpus="2"),
        [(14, 25, "Serve deployment 'Summarizer' asks num_gpus 2 per replica, but no node of the Ray cluster")],
    )
    assert found[0].severity == "error" and "has more than 1 GPU: Ray never places the replica" in found[0].message
    assert_findings(RULE, serve(gpus="1"), [])
    assert_findings(RULE, serve(gpus="0.5", replicas="4"), [])  # fractions share a GPU
    # num-gpus overrides the container's limit, as KubeRay passes it to ray start
    logical = serve(gpus="2").replace("rayStartParams: {}", 'rayStartParams: {num-gpus: "2"}')
    assert_findings(RULE, logical.replace(", nvidia.com/gpu: 1}", "}"), [])


def test_serve_replicas_that_need_more_gpus_than_the_cluster_has():
    found = assert_findings(
        RULE, serve(replicas="3"), [(6, 3, "the Serve deployments need at least 3 GPUs for the replicas they start")]
    )
    assert found[0].severity == "warning" and "but the Ray cluster has 2: replicas stay pending" in found[0].message
    assert_findings(RULE, serve(replicas="2"), [])
    # autoscaling: the least replicas Serve starts against the most nodes the autoscaler adds
    autoscaled = serve().replace("num_replicas: 1", "autoscaling_config: {min_replicas: 1, max_replicas: 8}")
    assert_findings(RULE, autoscaled, [])
    in_tree = serve(replicas="3").replace("    rayVersion:", "    enableInTreeAutoscaling: true\n    rayVersion:")
    assert_findings(RULE, in_tree.replace("maxReplicas: 2", "maxReplicas: 4"), [])
    assert_findings(RULE, in_tree, [(6, 3, "need at least 3 GPUs")])


def test_serve_configs_gpulint_does_not_model_are_left_alone():
    # Ray Serve LLM builds its deployments from llm_configs; placement group bundles reserve GPUs per bundle
    llm = serve(gpus="2").replace(
        "        deployments:", "        args: {llm_configs: []}\n        deployments_unused:"
    )
    assert_findings(RULE, llm, [])
    bundles = serve(gpus="2").replace(
        "            ray_actor_options:",
        "            placement_group_bundles: [{GPU: 1}, {GPU: 1}]\n            ray_actor_options:",
    )
    assert_findings(RULE, bundles, [])
    assert_findings(
        RULE, serve(gpus="2").replace("  serveConfigV2: |", "  serveConfigV2: |\n    {{ .Values.serve }}"), []
    )


def test_trainjob_num_proc_per_node():
    assert_findings(
        RULE,
        """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata: {name: llama}
        spec:
          runtimeRef: {name: torch-distributed}
          trainer:
            numNodes: 2
            numProcPerNode: 8
            resourcesPerNode:
              limits: {nvidia.com/gpu: 4}
        """,
        [(8, 21, "torchrun starts 8 GPU processes (numProcPerNode 8)")],
    )


RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed-1proc
spec:
  mlPolicy:
    numNodes: 1
    torch:
      numProcPerNode: NPROC
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
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      RESOURCES
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fsdp
  namespace: ml
spec:
  runtimeRef:
    name: torch-distributed-1proc
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 4
"""


def runtime(nproc: str = "1", resources: str = "") -> str:
    return RUNTIME.replace("NPROC", nproc).replace("RESOURCES", resources or "args: [train.py]")


def test_trainjob_num_proc_per_node_against_the_runtime_container():
    """Without resourcesPerNode the trainer container of the runtime holds the node's GPUs (Trainer's torch plugin
    reads them there); the runtime's own torch numProcPerNode is gone since v2.2.0 and is not read."""
    assert_findings(RULE, runtime("1"), [])  # resourcesPerNode 4, auto processes: one per GPU
    own = runtime("1", "resources: {limits: {nvidia.com/gpu: 8}}")
    own = own[: own.index("  trainer:\n    numNodes")] + "  trainer:\n    numNodes: 2\n    numProcPerNode: 2\n"
    found = assert_findings(
        RULE, own, [(36, 21, "torchrun starts 2 GPU processes (numProcPerNode 2) but the runtime's trainer container")]
    )
    assert "6 GPUs stay idle while allocated" in found[0].message
    assert_findings(RULE, own.replace("numProcPerNode: 2", "numProcPerNode: 8"), [])


def test_commands_that_are_not_launchers_are_ignored():
    assert (
        findings_of(
            RULE,
            deployment("""
      - name: app
        image: nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04
        command: [sh, -c, "nvidia-smi && python serve.py --tensor-parallel-size 8 && sleep infinity"]
        resources:
          limits: {nvidia.com/gpu: 2}
"""),
        )
        == []
    )


def test_a_word_written_as_it_runs_points_at_each_of_its_characters():
    """A plain word's origins are one run made on demand: each index and slice is the origin of that character,
    as a word whose characters were recorded one by one."""
    from gpulint.kube.commandline import Origin, OriginRun, Word

    path = ("args", 2)
    run = OriginRun(path, 0, len("--tensor-parallel-size=8"))
    written = tuple(Origin(path, offset) for offset in range(len("--tensor-parallel-size=8")))
    assert tuple(run) == written and len(run) == len(written) and run == written
    assert run[23] == Origin(path, 23) and run[-1] == Origin(path, 23)
    assert tuple(run[23:]) == written[23:] and tuple(run[5:9]) == written[5:9] and tuple(run[30:]) == ()
    assert tuple(run[::2]) == written[::2]
    word = Word("--tensor-parallel-size=8", Origin(path, 0), run)
    assert word.at(23) == Origin(path, 23)
    assert word.at(24) == word.at(-1) == Origin(path, 0)  # outside the word: its start


def test_a_repeated_command_line_is_read_for_each_pod_and_a_variable_keeps_lines_apart():
    """A command line without '$' is remembered by its strings (charts repeat them): each pod's GPUs still decide
    and each finding points into its own object. One that reads a variable is read with each container's env:
    the same strings with another TP give another count."""
    server = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: inference}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [sh, -c, "exec vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size {tp}"]
        env: [{{name: TP, value: "{env}"}}]
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""
    fixed = "---".join(
        server.format(name=name, tp="4", env="4", gpus=gpus) for name, gpus in (("a", 4), ("b", 8), ("c", 2))
    )
    assert_findings(
        RULE,
        fixed,
        [
            (28, 101, "vLLM starts 4 GPU processes (tensor-parallel-size 4) but container 'vllm' holds 8"),
            (44, 101, "vLLM starts 4 GPU processes (tensor-parallel-size 4) but container 'vllm' has 2"),
        ],
    )
    read = "---".join(server.format(name=name, tp="$(TP)", env=tp, gpus=4) for name, tp in (("a", 4), ("b", 8)))
    assert_findings(RULE, read, [(28, 101, "vLLM starts 8 GPU processes (tensor-parallel-size 8) but container")])


def test_a_script_s_quotes_comments_and_continuations_are_read_as_the_shell_reads_them():
    """Runs of ordinary characters are taken in one step: quotes, a '#' inside a word, a comment, a line
    continuation and an expansion still end or join words where the shell does, and the flag's value is pointed at."""
    assert_findings(
        RULE,
        deployment("""
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command:
        - bash
        - -c
        - |
          set -e  # -tp 2 in a comment is not read
          exec vllm serve 'models/llama#70b' --port=80#80 \\
            --tensor-parallel-size "${TP}"x'y' -pp 1
          exec vllm serve m -tp "$TP"
        env: [{name: TP, value: "8"}]
        resources:
          limits: {nvidia.com/gpu: 4}
"""),
        [(20, 34, "vLLM starts 8 GPU processes (tensor-parallel-size 8)")],  # "${TP}"x'y' is one word: 8xy
    )
