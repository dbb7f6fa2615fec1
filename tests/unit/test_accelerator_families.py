"""Accelerator families (gpulint/kube/resources.py ACCELERATOR_FAMILIES): the runtime rules reason about
CUDA and NCCL only where that reasoning holds for the device a pod asks for, and name the device."""

from __future__ import annotations

from rule_harness import assert_findings, findings_of

from gpulint.kube.resources import accelerator_family
from gpulint.kube.runtime import device_ranks

SHM = "dev-shm-missing"
PARALLEL = "parallelism-mismatch"
VISIBILITY = "gpu-visibility-override"


def test_every_device_plugin_resource_has_its_family():
    families = {
        "nvidia.com/gpu": ("NVIDIA GPU", "NCCL"),
        "nvidia.com/mig-1g.10gb": ("NVIDIA MIG slice", "NCCL"),
        "nvidia.com/gpu.shared": ("shared NVIDIA GPU", "NCCL"),
        "amd.com/gpu": ("AMD GPU", "RCCL"),
        "gpu.intel.com/i915": ("Intel GPU", "oneCCL"),
        "gpu.intel.com/xe": ("Intel GPU", "oneCCL"),
        "habana.ai/gaudi": ("Gaudi", "HCCL"),
        "aws.amazon.com/neuron": ("Neuron device", "Neuron collectives"),
        "aws.amazon.com/neurondevice": ("Neuron device", "Neuron collectives"),
        "aws.amazon.com/neuroncore": ("NeuronCore", "Neuron collectives"),
        "google.com/tpu": ("TPU chip", ""),
        "example.com/fpga": ("accelerator", ""),
    }
    assert {name: (accelerator_family(name).name, accelerator_family(name).collective) for name in families} == families
    assert [name for name in families if accelerator_family(name).collective_shm] == [
        "nvidia.com/gpu",
        "nvidia.com/mig-1g.10gb",
        "nvidia.com/gpu.shared",
        "amd.com/gpu",
        "example.com/fpga",
    ]
    assert [name for name in families if not accelerator_family(name).processes_share_memory] == ["google.com/tpu"]


# --- dev-shm-missing ---------------------------------------------------------------------------------

TPU_JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: maxtext-v5e, namespace: default}
spec:
  replicatedJobs:
  - name: slice
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          spec:
            nodeSelector:
              cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice
              cloud.google.com/gke-tpu-topology: 2x4
            containers:
            - name: jax-tpu
              image: us-docker.pkg.dev/cloud-tpu-images/jax-stable-stack/tpu:jax0.4.35-rev1
              command: [python3, -m, MaxText.train, MaxText/configs/base.yml]
              resources:
                limits: {DEVICE: 4}
"""


def test_tpu_ranks_get_no_nccl_shared_memory_advice():
    """JAX on TPUs runs its collectives over ICI: a multi-host TPU JobSet is no NCCL job."""
    assert_findings(SHM, TPU_JOBSET.replace("DEVICE", "google.com/tpu"), [])


def test_the_same_jobset_on_gpus_still_needs_dev_shm():
    (finding,) = assert_findings(
        SHM, TPU_JOBSET.replace("DEVICE", "nvidia.com/gpu"), [(19, 21, "'jax-tpu' (4 nvidia.com/gpu)")]
    )
    assert "multi-GPU programs exchange data through NCCL's shared memory" in finding.message


def single_server(image: str, limits: str, args: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm, namespace: inference}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: llm}}}}
  template:
    metadata: {{labels: {{app: llm}}}}
    spec:
      containers:
      - name: server
        image: {image}
        {args}
        ports: [{{containerPort: 11434}}]
        resources:
          limits: {{{limits}}}
"""


def test_ollama_over_two_gpus_is_one_process():
    """Ollama's runner splits a model's layers over the GPUs from one process: no NCCL, no shared memory."""
    assert_findings(SHM, single_server("ollama/ollama:0.5.7", "nvidia.com/gpu: 2"), [])
    assert_findings(SHM, single_server("ghcr.io/ggml-org/llama.cpp:server-cuda", "nvidia.com/gpu: 2"), [])
    # an image gpulint knows nothing of keeps the multi-GPU reasoning
    assert_findings(
        SHM,
        single_server("registry.example.com/llm-server:2.1", "nvidia.com/gpu: 2"),
        [(11, 15, "'server' (2 nvidia.com/gpu)")],
    )


def test_mig_slices_and_shared_replicas_are_not_nccl_peers():
    """A CUDA process enumerates one MIG device, and MIG has no peer-to-peer; two time-sliced replicas may be
    the same GPU. Neither makes a multi-GPU NCCL program."""
    image = "registry.example.com/batch-infer:1.0"
    assert_findings(SHM, single_server(image, "nvidia.com/mig-1g.10gb: 2"), [])
    assert_findings(SHM, single_server(image, "nvidia.com/gpu.shared: 2"), [])
    assert_findings(SHM, single_server(image, "nvidia.com/gpu: 2"), [(11, 15, "(2 nvidia.com/gpu)")])


def test_amd_gpus_name_rccl():
    (finding,) = assert_findings(
        SHM,
        single_server("rocm/vllm:rocm6.3.1_vllm_0.8.5", "amd.com/gpu: 4"),
        [(11, 15, "'server' (4 amd.com/gpu)")],
    )
    assert "through RCCL's shared memory" in finding.message


def test_neuron_gaudi_and_intel_processes_share_memory_without_nccl():
    """Several processes over Neuron devices, Gaudis or Intel GPUs (a rank per device, DataLoader workers, Ray's
    object store) share /dev/shm; their collectives do not go through it, so NCCL is not cited."""
    (finding,) = assert_findings(
        SHM,
        single_server("rayproject/ray:2.22.0-py310-neuron", "aws.amazon.com/neuron: 12"),
        [(11, 15, "'server' (12 aws.amazon.com/neuron)")],
    )
    assert "programs over several Neuron devices run a process per device" in finding.message
    assert "NCCL" not in finding.message and "PyTorch DataLoader workers fail with" in finding.message
    gaudi = single_server("vault.habana.ai/gaudi-docker/1.19.0/pytorch:2.5.1", "habana.ai/gaudi: 8")
    assert_findings(SHM, gaudi, [(11, 15, "'server' (8 habana.ai/gaudi)")])
    intel = single_server("intel/intel-extension-for-pytorch:2.5.10-xpu", "gpu.intel.com/i915: 2")
    assert_findings(SHM, intel, [(11, 15, "'server' (2 gpu.intel.com/i915)")])


def test_torchrun_over_neuroncores_shares_memory():
    """trn1.32xlarge: torchrun starts 32 processes, one per NeuronCore of its 16 devices."""
    trn1 = single_server(
        "public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04",
        "aws.amazon.com/neuron: 16",
        "command: [torchrun, --nproc_per_node=32, train.py]",
    ).replace(
        "    spec:\n      containers:",
        "    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: trn1.32xlarge}\n      containers:",
    )
    assert_findings(SHM, trn1, [(12, 15, "'server' (16 aws.amazon.com/neuron)")])
    assert_findings(PARALLEL, trn1, [])  # 16 devices are 32 NeuronCores
    # the family pinned as Karpenter's NodePools label it, by required node affinity, is read the same
    affinity = (
        "    spec:\n      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [trn1]}]}]}}}\n"
        "      containers:"
    )
    by_family = trn1.replace(
        "    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: trn1.32xlarge}\n      containers:", affinity
    )
    assert "instance-family" in by_family
    assert_findings(PARALLEL, by_family, [])
    # 64 ranks over trn1's 32 NeuronCores: known only from the family the affinity pins
    over = by_family.replace("--nproc_per_node=32", "--nproc_per_node=64")
    assert [f.rule for f in findings_of(PARALLEL, over)] == [PARALLEL]
    unpinned = over.replace("karpenter.k8s.aws/instance-family", "example.com/pool")
    assert findings_of(PARALLEL, unpinned) == []  # the trap: no family pinned, no NeuronCore count


def test_vllm_on_one_neuron_device_is_one_process():
    """vLLM's Neuron backend drives every NeuronCore from one process: tensor-parallel size 2 starts no second."""
    neuron = single_server(
        "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.24.1-ubuntu22.04",
        "aws.amazon.com/neuron: 1",
        'args: ["--model", "meta-llama/Llama-3.1-8B", "--device", "neuron", "--tensor-parallel-size", "2"]',
    )
    assert_findings(SHM, neuron, [])
    # on one GPU the same flags start two processes (and fail: parallelism-mismatch says so)
    gpu = neuron.replace(
        "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.24.1-ubuntu22.04",
        "vllm/vllm-openai:v0.10.1",
    ).replace("aws.amazon.com/neuron: 1", "nvidia.com/gpu: 1")
    assert_findings(SHM, gpu, [(11, 15, "'server' (vLLM, 2 GPU processes)")])


RAY = """
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: raycluster-gpu, namespace: ml}
spec:
  headGroupSpec:
    rayStartParams: {dashboard-host: 0.0.0.0}
    template:
      spec:
        containers:
        - {name: ray-head, image: rayproject/ray:2.41.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}}
  workerGroupSpecs:
  - groupName: gpu-group
    replicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: ray-worker, image: rayproject/ray:2.41.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_a_single_gpu_ray_head_is_no_rank():
    """The head runs Ray's control plane and the driver; Ray puts the program's ranks on the workers (whose
    /dev/shm KubeRay mounts itself unless rayStartParams sets plasma-directory)."""
    assert_findings(SHM, RAY, [])
    plasma = RAY.replace("rayStartParams: {}", "rayStartParams: {plasma-directory: /tmp}")
    (finding,) = assert_findings(SHM, plasma, [(18, 18, "'ray-worker' (one rank of a distributed RayCluster)")])
    assert "NCCL and DataLoader workers use /dev/shm" in finding.message


# --- parallelism-mismatch ----------------------------------------------------------------------------


def neuron_vllm(resource: str, count: int, tp: int, selector: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm-neuron, namespace: inference}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: vllm-neuron}}}}
  template:
    metadata: {{labels: {{app: vllm-neuron}}}}
    spec:
      {selector or "schedulerName: default-scheduler"}
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.24.1-ubuntu22.04
        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --device, neuron, --tensor-parallel-size, "{tp}"]
        resources:
          limits: {{{resource}: {count}}}
"""


INF2 = "nodeSelector: {node.kubernetes.io/instance-type: inf2.xlarge}"


def test_one_inferentia2_device_holds_two_neuroncores_for_tensor_parallelism():
    """vLLM's tensor-parallel size counts NeuronCores: tp 2 on one inf2 device is the correct deployment."""
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuron", 1, 2, INF2), [])
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuron", 1, 2), [])  # instance type unknown: silent
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuroncore", 2, 2), [])


def test_more_ranks_than_neuroncores_is_still_an_error_naming_the_device():
    (finding,) = assert_findings(
        PARALLEL,
        neuron_vllm("aws.amazon.com/neuron", 1, 4, INF2),
        [
            (
                14,
                109,
                "vLLM starts 4 ranks (tensor-parallel-size 4) but container 'vllm' has 1 aws.amazon.com/neuron (2 NeuronCores)",
            )
        ],
    )
    assert finding.severity == "error"
    assert "CUDA" not in finding.message and "vLLM cannot place 4 ranks on 2 NeuronCores" in finding.message
    (finding,) = assert_findings(
        PARALLEL,
        neuron_vllm("aws.amazon.com/neuroncore", 2, 8),
        [(14, 109, "but container 'vllm' has 2 aws.amazon.com/neuroncore")],
    )
    assert finding.severity == "error"


def test_trainium_instance_families_and_logical_cores():
    trn1 = "nodeSelector: {karpenter.k8s.aws/instance-family: trn1}"
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuron", 16, 32, trn1), [])
    trn2 = "nodeSelector: {node.kubernetes.io/instance-type: trn2.48xlarge}"
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuron", 16, 64, trn2), [])  # LNC=2: 4 per device
    assert_findings(
        PARALLEL,
        neuron_vllm("aws.amazon.com/neuron", 16, 32, trn2),
        [(14, 109, "holds 16 aws.amazon.com/neuron (64 NeuronCores): 32 NeuronCores stay idle")],
    )
    mixed = (
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [inf2.48xlarge, "
        "trn2.48xlarge]}]}]}}}"
    )
    assert_findings(PARALLEL, neuron_vllm("aws.amazon.com/neuron", 12, 64, mixed), [])  # 2 or 4 per device


def test_neuron_lnc_1_shows_all_eight_trainium2_cores():
    spec = neuron_vllm(
        "aws.amazon.com/neuron", 1, 8, "nodeSelector: {node.kubernetes.io/instance-type: trn2.3xlarge}"
    ).replace("        resources:", "        env: [{name: NEURON_LOGICAL_NC_CONFIG, value: '1'}]\n        resources:")
    assert_findings(PARALLEL, spec, [])
    held = device_ranks(
        {"resources": {"limits": {"aws.amazon.com/neuron": 1}}},
        {"nodeSelector": {"node.kubernetes.io/instance-type": "trn2.3xlarge"}},
    )
    assert held is not None and held.ranks == 4


def test_gpus_keep_their_cuda_wording_and_gaudi_does_not_get_it():
    gpu = single_server(
        "vllm/vllm-openai:v0.10.1", "nvidia.com/gpu: 4", 'args: ["--model", "m", "--tensor-parallel-size", "8"]'
    )
    (finding,) = findings_of(PARALLEL, gpu)
    assert "vLLM starts 8 GPU processes (tensor-parallel-size 8) but container 'server' has 4 nvidia.com/gpu" in (
        finding.message
    )
    assert "local_world_size (8) must be less than or equal to the number of visible devices (4)" in finding.message
    gaudi = single_server(
        "vault.habana.ai/gaudi-docker/1.19.0/pytorch:2.5.1",
        "habana.ai/gaudi: 4",
        'command: [vllm, serve, m, --tensor-parallel-size, "8"]',
    )
    (finding,) = findings_of(PARALLEL, gaudi)
    assert "vLLM starts 8 ranks (tensor-parallel-size 8) but container 'server' has 4 habana.ai/gaudi" in (
        finding.message
    )
    assert "CUDA" not in finding.message


def test_ray_num_gpus_is_not_compared_with_tpus():
    """KubeRay derives num-gpus from limits whose name ends in "gpu"; a TPU worker's num-gpus is a logical one."""
    tpu = RAY.replace("rayStartParams: {}", "rayStartParams: {num-gpus: '0'}").replace(
        "ray-worker, image: rayproject/ray:2.41.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}",
        "ray-worker, image: rayproject/ray:2.41.0-py310, resources: {limits: {google.com/tpu: 4}}",
    )
    assert_findings(PARALLEL, tpu, [])
    gpu = RAY.replace("rayStartParams: {}", "rayStartParams: {num-gpus: '2'}")
    assert_findings(PARALLEL, gpu, [(14, 32, "rayStartParams num-gpus 2 but the Ray container 'ray-worker' has 1")])


# --- gpu-visibility-override -------------------------------------------------------------------------


def test_cuda_variables_mean_nothing_to_a_gaudi_and_something_to_an_amd_gpu():
    """A CUDA_VISIBLE_DEVICES left in from a GPU template changes nothing on a Gaudi; HIP reads it too."""
    env = "env: [{name: CUDA_VISIBLE_DEVICES, value: '0'}]"
    gaudi = single_server("vault.habana.ai/gaudi-docker/1.19.0/pytorch:2.5.1", "habana.ai/gaudi: 8", env)
    assert_findings(VISIBILITY, gaudi, [])
    amd = single_server("rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0", "amd.com/gpu: 8", env)
    assert_findings(VISIBILITY, amd, [(13, 51, "holds 8 GPUs but CUDA_VISIBLE_DEVICES=0 shows the process 1")])
