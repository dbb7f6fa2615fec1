"""Resource names as Kubernetes classifies them (pkg/apis/core/helper/helpers.go)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from gpulint.kube.lru import short_strings_remembered

_QUALIFIED_NAME = re.compile(
    r"^(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"(?=.{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)

# Device-plugin resource names that mean "an accelerator" for the GPU-specific rules.
DEFAULT_GPU_RESOURCES: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "nvidia.com/mig-*",
    "amd.com/gpu",
    "gpu.intel.com/*",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron*",
    "google.com/tpu",
    "nvidia.com/*gpu*",
)


def is_native(name: str) -> bool:
    """IsNativeResource: unprefixed, or in the kubernetes.io namespace."""
    return "/" not in name or "kubernetes.io/" in name


@short_strings_remembered(4096)  # a pure function of a name, asked for every resource of every container by many rules
def is_extended(name: str) -> bool:
    """IsExtendedResourceName: not native, not ``requests.*``, and a qualified name."""
    if is_native(name) or name.startswith("requests."):
        return False
    return _QUALIFIED_NAME.match("requests." + name) is not None


def is_gpu(name: str, extra_patterns: Iterable[str] = ()) -> bool:
    patterns = extra_patterns if isinstance(extra_patterns, tuple) else tuple(extra_patterns)
    return _is_gpu(name, patterns)


@short_strings_remembered(4096)  # a pure function of a name and the configured patterns; real manifests repeat names
def _is_gpu(name: str, extra_patterns: tuple[str, ...]) -> bool:
    return _gpu_resource_pattern(extra_patterns).match(name) is not None


@lru_cache(maxsize=64)
def _gpu_resource_pattern(extra_patterns: tuple[str, ...]) -> re.Pattern[str]:
    """The glob patterns as one regex (what fnmatch.fnmatchcase does per pattern, in one pass)."""
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in (*DEFAULT_GPU_RESOURCES, *extra_patterns)))


@dataclass(frozen=True)
class AcceleratorFamily:
    """A family of devices, and which of the runtime rules' CUDA/NCCL reasoning holds for it.

    The runtime rules (dev-shm-missing, parallelism-mismatch, gpu-visibility-override) were written
    for NVIDIA GPUs; each asks the family of the device it saw before it reasons, and names it."""

    name: str  # in messages: "NVIDIA GPU", "Neuron device"
    noun: str  # one word for a pod's devices ("4 TPU pods")
    patterns: tuple[str, ...]  # resource names (globs)
    collective: str  # the collective library its ranks use on one node ("" for none the rules know)
    # The collective library's intra-node transport goes through /dev/shm (NCCL, and RCCL, a fork of it: the
    # SHM transport). False: the devices talk over their own links (NeuronLink, Gaudi's integrated RoCE
    # ports, TPU ICI), or it is not verified (oneCCL).
    collective_shm: bool
    # Several processes of a pod on these devices (a rank per device, a server's workers, PyTorch DataLoader
    # workers, Ray's object store) exchange data through /dev/shm. False for TPUs: one JAX/XLA process per
    # host drives all its chips.
    processes_share_memory: bool
    # Each unit is a device of its own that can be a collective peer. False: a MIG slice (CUDA enumerates
    # one MIG device per process, with no peer-to-peer between slices) or a time-sliced replica (two may
    # be the same GPU).
    peers: bool
    # Ranks one unit holds for tensor parallelism and launchers (vLLM's --tensor-parallel-size, torchrun's
    # --nproc-per-node count them): 1 for a GPU or a NeuronCore; None when it depends on the node (a Neuron
    # device holds 2 NeuronCores on inf2/trn1, 4 on inf1, 4 logical ones on trn2; a TPU chip is one JAX
    # device up to v6e, two on TPU7x).
    ranks_per_unit: int | None
    # What a rank finds when there is no device left for it, as its runtime words it ("" when unknown).
    missing_device: str
    visibility_variables: tuple[str, ...]  # the variables its runtime reads to pick devices


_NVIDIA_VISIBLE = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
_CUDA_ORDINAL = "CUDA error: invalid device ordinal"
# Sources: NCCL user guide (Troubleshooting, Shared memory); ROCm/rccl (a fork of NCCL, the same SHM
# transport); NVIDIA MIG user guide (CUDA Device Enumeration: a process enumerates a single MIG device;
# no GPU-to-GPU P2P in MIG mode); NVIDIA/k8s-device-plugin (time-slicing: replicas of one GPU, "requesting
# more than one shared GPU does not guarantee access to more compute"); AWS Neuron docs (Inferentia2 and
# Trainium: 2 NeuronCore-v2 per device; Inferentia: 4 NeuronCore-v1; Trainium2: 8 physical NeuronCore-v3,
# grouped in 4 logical NeuronCores by the default LNC=2; vLLM's tensor-parallel size and torchrun's ranks
# count NeuronCores); GKE TPU docs (google.com/tpu counts chips; JAX/XLA collectives run over ICI; a TPU7x
# chip has two TensorCores, each a JAX device: jax/_src/mesh_utils.py builds TPU7x meshes as (x, y, z, core));
# Intel Gaudi docs (HCCL over the Gaudi's integrated RoCE ports).
ACCELERATOR_FAMILIES: tuple[AcceleratorFamily, ...] = (
    AcceleratorFamily(
        name="NVIDIA MIG slice",
        noun="GPU",
        patterns=("nvidia.com/mig-*",),
        collective="NCCL",
        collective_shm=True,
        processes_share_memory=True,
        peers=False,
        ranks_per_unit=1,
        missing_device=_CUDA_ORDINAL,
        visibility_variables=_NVIDIA_VISIBLE,
    ),
    AcceleratorFamily(
        name="shared NVIDIA GPU",
        noun="GPU",
        patterns=("nvidia.com/gpu.shared",),
        collective="NCCL",
        collective_shm=True,
        processes_share_memory=True,
        peers=False,
        ranks_per_unit=1,
        missing_device=_CUDA_ORDINAL,
        visibility_variables=_NVIDIA_VISIBLE,
    ),
    AcceleratorFamily(
        name="NVIDIA GPU",
        noun="GPU",
        patterns=("nvidia.com/gpu", "nvidia.com/*gpu*"),
        collective="NCCL",
        collective_shm=True,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=1,
        missing_device=_CUDA_ORDINAL,
        visibility_variables=_NVIDIA_VISIBLE,
    ),
    AcceleratorFamily(
        name="AMD GPU",
        noun="AMD GPU",
        patterns=("amd.com/gpu",),
        collective="RCCL",
        collective_shm=True,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=1,
        missing_device="HIP error: invalid device ordinal",
        visibility_variables=("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"),
    ),
    AcceleratorFamily(
        name="Intel GPU",
        noun="Intel GPU",
        patterns=("gpu.intel.com/*",),
        collective="oneCCL",
        collective_shm=False,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=1,
        missing_device="",
        visibility_variables=("ZE_AFFINITY_MASK",),
    ),
    AcceleratorFamily(
        name="Gaudi",
        noun="Gaudi",
        patterns=("habana.ai/gaudi",),
        collective="HCCL",
        collective_shm=False,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=1,
        missing_device="",
        visibility_variables=("HABANA_VISIBLE_DEVICES",),
    ),
    AcceleratorFamily(
        name="NeuronCore",
        noun="Neuron",
        patterns=("aws.amazon.com/neuroncore",),
        collective="Neuron collectives",
        collective_shm=False,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=1,
        missing_device="",
        visibility_variables=("NEURON_RT_VISIBLE_CORES",),
    ),
    AcceleratorFamily(
        name="Neuron device",
        noun="Neuron",
        patterns=("aws.amazon.com/neuron", "aws.amazon.com/neurondevice", "aws.amazon.com/neuron*"),
        collective="Neuron collectives",
        collective_shm=False,
        processes_share_memory=True,
        peers=True,
        ranks_per_unit=None,
        missing_device="",
        visibility_variables=("NEURON_RT_VISIBLE_CORES",),
    ),
    AcceleratorFamily(
        name="TPU chip",
        noun="TPU",
        patterns=("google.com/tpu",),
        collective="",
        collective_shm=False,
        processes_share_memory=False,
        peers=True,
        ranks_per_unit=None,  # one JAX device per chip, two on TPU7x: by the node's TPU generation
        missing_device="",
        visibility_variables=("TPU_VISIBLE_CHIPS",),
    ),
)
# A resource the configuration's gpu-resources adds and no family claims: the GPU rules as they were.
OTHER_ACCELERATOR = AcceleratorFamily(
    name="accelerator",
    noun="accelerator",
    patterns=("*",),
    collective="",
    collective_shm=True,
    processes_share_memory=True,
    peers=True,
    ranks_per_unit=1,
    missing_device="",
    visibility_variables=_NVIDIA_VISIBLE,
)


@short_strings_remembered(1024)  # a pure function of a resource name, asked for each container the runtime rules read
def accelerator_family(name: str) -> AcceleratorFamily:
    """The family of the device behind a resource name (OTHER_ACCELERATOR when none is known)."""
    return next(
        (f for f in ACCELERATOR_FAMILIES if any(fnmatch.fnmatchcase(name, p) for p in f.patterns)), OTHER_ACCELERATOR
    )


def accelerator_noun(names: Iterable[str]) -> str:
    """One word for the accelerators ``names`` ask for: "TPU", "GPU"; "accelerator" when they differ
    or none is known."""
    nouns = {accelerator_family(name).noun for name in names}
    return nouns.pop() if len(nouns) == 1 else "accelerator"


@dataclass(frozen=True)
class DevicePluginResource:
    """A resource name a real device plugin (or GPU-sharing scheduler) defines.

    ``node_published`` False: nodes never publish it; a scheduler extender accounts for it (HAMi marks its
    shares ``ignoredByScheduler``, so NodeResourcesFit skips them and HAMi's /filter judges them)."""

    pattern: str  # a name, or a glob (nvidia.com/mig-*)
    plugin: str
    node_published: bool = True


_HAMI = "HAMi"
# Sources: NVIDIA/k8s-device-plugin (nvidia.com/gpu, .shared with renameByDefault, MIG mixed strategy);
# Project-HAMi/HAMi charts/hami/values.yaml (resourceMem, resourceMemPercentage, resourceCores, resourcePriority,
# the mlu/dcu/metax names) and templates/_helpers.tpl (every one managed with ignoredByScheduler: true);
# ROCm/k8s-device-plugin; intel/intel-device-plugins-for-kubernetes; HabanaAI/habana-k8s-device-plugin;
# aws-neuron/neuron-device-plugin; GKE TPU nodes; AliyunContainerService/gpushare-device-plugin.
DEVICE_PLUGIN_RESOURCES: tuple[DevicePluginResource, ...] = (
    DevicePluginResource("nvidia.com/gpu", "the NVIDIA device plugin"),
    DevicePluginResource("nvidia.com/gpu.shared", "the NVIDIA device plugin (time-slicing/MPS)"),
    DevicePluginResource("nvidia.com/mig-*", "the NVIDIA device plugin (MIG mixed strategy)"),
    DevicePluginResource("nvidia.com/gpumem", _HAMI, node_published=False),
    DevicePluginResource("nvidia.com/gpumem-percentage", _HAMI, node_published=False),
    DevicePluginResource("nvidia.com/gpucores", _HAMI, node_published=False),
    DevicePluginResource("nvidia.com/priority", _HAMI, node_published=False),
    DevicePluginResource("cambricon.com/vmlu", _HAMI, node_published=False),
    DevicePluginResource("cambricon.com/mlu.smlu.vmemory", _HAMI, node_published=False),
    DevicePluginResource("cambricon.com/mlu.smlu.vcore", _HAMI, node_published=False),
    DevicePluginResource("hygon.com/dcunum", _HAMI, node_published=False),
    DevicePluginResource("hygon.com/dcumem", _HAMI, node_published=False),
    DevicePluginResource("hygon.com/dcucores", _HAMI, node_published=False),
    DevicePluginResource("metax-tech.com/sgpu", _HAMI, node_published=False),
    DevicePluginResource("metax-tech.com/vcore", _HAMI, node_published=False),
    DevicePluginResource("metax-tech.com/vmemory", _HAMI, node_published=False),
    DevicePluginResource("amd.com/gpu", "the AMD GPU device plugin"),
    DevicePluginResource("gpu.intel.com/i915", "the Intel GPU device plugin"),
    DevicePluginResource("gpu.intel.com/xe", "the Intel GPU device plugin"),
    DevicePluginResource("habana.ai/gaudi", "the Habana Gaudi device plugin"),
    DevicePluginResource("aws.amazon.com/neuron", "the AWS Neuron device plugin"),
    DevicePluginResource("aws.amazon.com/neuroncore", "the AWS Neuron device plugin"),
    DevicePluginResource("aws.amazon.com/neurondevice", "the AWS Neuron device plugin"),
    DevicePluginResource("google.com/tpu", "GKE's TPU device plugin"),
    DevicePluginResource("aliyun.com/gpu-mem", "the Alibaba Cloud GPU-sharing device plugin"),
)


def device_plugin_resource(name: str) -> DevicePluginResource | None:
    """The known device-plugin resource ``name`` is, if it is one."""
    return next((known for known in DEVICE_PLUGIN_RESOURCES if fnmatch.fnmatchcase(name, known.pattern)), None)


def scheduler_managed(name: str) -> str:
    """The plugin whose scheduler extender accounts for ``name`` (a share nodes never publish), else ""."""
    known = device_plugin_resource(name)
    return known.plugin if known is not None and not known.node_published else ""
