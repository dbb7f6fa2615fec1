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


# What users call the device behind a resource name, for messages ("4 TPU pods", not "4 GPU pods").
ACCELERATOR_NOUNS: tuple[tuple[str, str], ...] = (
    ("nvidia.com/gpu", "GPU"),
    ("nvidia.com/gpu.shared", "GPU"),
    ("nvidia.com/mig-*", "GPU"),
    ("nvidia.com/*gpu*", "GPU"),
    ("amd.com/gpu", "AMD GPU"),
    ("gpu.intel.com/*", "Intel GPU"),
    ("habana.ai/gaudi", "Gaudi"),
    ("aws.amazon.com/neuron*", "Neuron"),
    ("google.com/tpu", "TPU"),
)


def accelerator_noun(names: Iterable[str]) -> str:
    """One word for the accelerators ``names`` ask for: "TPU", "GPU"; "accelerator" when they differ
    or none is known."""
    nouns = {_accelerator_noun(name) for name in names}
    return nouns.pop() if len(nouns) == 1 else "accelerator"


@short_strings_remembered(1024)  # a pure function of a resource name, asked for each finding about its pods
def _accelerator_noun(name: str) -> str:
    return next((noun for pattern, noun in ACCELERATOR_NOUNS if fnmatch.fnmatchcase(name, pattern)), "accelerator")


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
