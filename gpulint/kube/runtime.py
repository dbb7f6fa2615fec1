"""What a GPU container meets after it is scheduled: its GPUs, its peers, the processes it starts.

Pure readers of pod specs for the runtime rules (shared memory, parallelism, GPU visibility,
RDMA): how many GPUs a container holds, whether its pod is one rank of a distributed job,
the variables a controller injects into it, and the launchers its command line starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube.commandline import (
    Command,
    ConfigMaps,
    Env,
    Origin,
    Word,
    config_map_value,
    container_commands,
    image_name,
    referenced_config_maps,
)
from gpulint.kube.distributed import distributed_kind
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.launchers import MPIRUN, VLLM, Launch, Launcher, parse
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.resources import AcceleratorFamily, accelerator_family, is_gpu
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, api_group, part_fact

# Images whose entrypoint is a launcher: their containers often give only ``args``.
IMAGE_ENTRYPOINTS: dict[str, Launcher] = {"vllm/vllm-openai": VLLM}

VISIBILITY_VARIABLES = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")

# Images whose server runs a model over all the container's GPUs from one process (layers split across
# them, no collective library between processes): Ollama's runner and llama.cpp's server (--split-mode).
SINGLE_PROCESS_IMAGES = frozenset({"ollama/ollama", "ggml-org/llama.cpp", "ggerganov/llama.cpp"})

# Programs that hold a container's GPUs without processes that share memory: the vendors' device query
# tools (they print and exit), a GPU burn-in (gpu_burn forks a process per GPU that report through pipes),
# and the shell's bookkeeping around them. `sleep` and `sshd` are not among them: MPI launchers and
# `kubectl exec` start the real ranks inside a container that only waits.
_NO_SHARED_MEMORY_PROGRAMS = frozenset(
    {"nvidia-smi", "hl-smi", "rocm-smi", "amd-smi", "xpu-smi", "neuron-ls", "gpu_burn", "gpu-burn"}
    | {"echo", "printf", "true", "date", "hostname", "env", "cat", "ls", "set", "export", "cd"}
)


# Placeholders whose own entrypoint only waits: the pause image (scale tests, capacity reservations) and
# the perf-tests `sleep` image of Kueue's samples (its args are a duration).
_WAITING_IMAGES = frozenset({"pause", "k8s-staging-perf-tests/sleep"})
# Base images with no GPU user space (busybox's applets or a distribution's base system: no CUDA/ROCm
# libraries, no NCCL, no PyTorch): a `sleep` in them is a placeholder too, for no multi-GPU program is
# exec'd into them (HAMi's demo pods sleep in ubuntu for `kubectl exec ... nvidia-smi`; the container
# toolkit mounts the driver's libraries and nvidia-smi, never CUDA's runtime or NCCL). Names as Docker Hub,
# Red Hat's and ECR Public's registries spell them; an image built on one (`org/ubuntu-cuda`) is none.
_BARE_IMAGES = frozenset(
    {"busybox", "alpine", "ubuntu", "debian", "centos", "fedora", "almalinux", "rockylinux", "amazonlinux"}
    | {"rockylinux/rockylinux", "amazonlinux/amazonlinux", "ubi8", "ubi9", "ubi8/ubi", "ubi9/ubi"}
    | {"ubi8/ubi-minimal", "ubi9/ubi-minimal"}
)
# Images whose own entrypoint is a web server with no GPU framework (Kueue's and LeaderWorkerSet's samples
# give nginx GPUs to show placement): with no `command`, nothing in them uses the GPUs or /dev/shm.
_NO_GPU_SERVER_IMAGES = frozenset({"nginx", "nginx-slim", "nginxinc/nginx-unprivileged", "httpd"})


def runs_no_shared_memory(container: Mapping[str, Any]) -> bool:
    """The container holds GPUs but starts nothing that shares memory through /dev/shm: a placeholder that
    only waits (the pause or perf-tests sleep image, `sleep` in busybox or a distribution's base image), a
    web server's own entrypoint (nginx), or a command line made only of device query tools and a burn-in.
    A command gpulint cannot read, or any other image's own entrypoint, is no evidence; `sleep` in any
    other image is none either."""
    image = image_name(container)
    bare = image.removeprefix("library/")
    own_entrypoint_idle = (
        bare in _WAITING_IMAGES or bare in _NO_GPU_SERVER_IMAGES or image.rsplit("/", 1)[-1] == "pause"
    )
    if not container.get("command") and own_entrypoint_idle:
        return True
    commands = container_commands(container)
    if not commands:
        return False
    programs = [command.words[0].text for command in commands if command.words]
    return all(
        p is not None and _shares_no_memory(p.rstrip("/").rsplit("/", 1)[-1], waiting_is_idle=bare in _BARE_IMAGES)
        for p in programs
    )


# JAX's images (ROCm's, NVIDIA's): JAX runs one process per host that drives every local GPU (jax.devices(),
# pmap, pjit), as on TPUs; a process per GPU needs a launcher (mpirun, srun) or jax.distributed's settings.
_JAX_IMAGES = frozenset({"rocm/jax", "rocm/jax-community", "nvidia/jax"})
_PYTHON = frozenset({"python", "python3"})


def one_jax_process(container: Mapping[str, Any]) -> bool:
    """A JAX image whose command line starts Python directly, and nothing else: one process holds all the
    container's GPUs, so no processes share memory through /dev/shm."""
    if image_name(container) not in _JAX_IMAGES:
        return False
    commands = container_commands(container)
    programs = [command.words[0].text for command in commands if command.words]
    return bool(programs) and all(p is not None and p.rsplit("/", 1)[-1] in _PYTHON for p in programs)


def _shares_no_memory(program: str, *, waiting_is_idle: bool) -> bool:
    return program in _NO_SHARED_MEMORY_PROGRAMS or (waiting_is_idle and program == "sleep")


# GPU-named resources that measure a share of a device, not devices (HAMi's gpumem/gpucores).
_NOT_DEVICES = re.compile(r".*(mem|memory|cores|percentage)$")


@short_strings_remembered(1024)
def counts_devices(name: str, patterns: tuple[str, ...] = ()) -> bool:
    """A resource that counts GPUs (remembered per name: real manifests repeat a handful of names)."""
    return is_gpu(name, patterns) and not _NOT_DEVICES.fullmatch(name)


def container_gpus(
    container: Mapping[str, Any], patterns: Iterable[str] = (), facts: ObjectFacts | None = None
) -> int | None:
    """The whole GPUs of one kind (device-plugin resource) the container holds, the largest count
    when it asks for several kinds; None: none asked. Read once per container in the ``facts`` of its
    object while it is checked (with gpu_resource_name: _container_gpus finds both)."""
    patterns = tuple(patterns)
    return part_fact(facts, container, ("gpus", patterns), _container_gpus, container, patterns)[0]


def gpu_resource_name(
    container: Mapping[str, Any], patterns: Iterable[str] = (), facts: ObjectFacts | None = None
) -> str:
    """The container's first device resource (as messages name its GPUs); nvidia.com/gpu when it has none."""
    patterns = tuple(patterns)
    return part_fact(facts, container, ("gpus", patterns), _container_gpus, container, patterns)[1]


def _container_gpus(container: Mapping[str, Any], patterns: tuple[str, ...]) -> tuple[int | None, str]:
    """(container_gpus, gpu_resource_name)."""
    total = None
    resource = ""
    for name, value in _gpu_amounts(container).items():
        if not counts_devices(name, patterns):
            continue
        resource = resource or name
        if type(value) is int:  # the common case, without a Fraction: a YAML integer is a whole count
            count = value
        else:
            try:
                quantity = quantity_from_yaml(value)
            except QuantityError:
                continue  # gpu-non-integer reports it
            if not quantity.is_integer():
                continue
            count = int(quantity.value)
        if count >= 1:
            total = max(total or 0, count)  # two vendors' GPUs are not one pool
    return total, resource or "nvidia.com/gpu"


def _gpu_amounts(container: Mapping[str, Any]) -> dict[str, Any]:
    """Extended resources by limit; a request without a limit counts too (the pod is refused until
    the limit is added, gpu-request-without-limit says so, and then holds that many)."""
    resources = mapping(container.get("resources"))
    return {**mapping(resources.get("requests")), **mapping(resources.get("limits"))}


def container_family(
    container: Mapping[str, Any], patterns: Iterable[str] = (), facts: ObjectFacts | None = None
) -> AcceleratorFamily:
    """The family of the devices the container holds (of its first device resource)."""
    return accelerator_family(gpu_resource_name(container, patterns, facts))


# NeuronCores one Neuron device holds, by the instance family (AWS Neuron docs, Inf1/Inf2/Trn1/Trn2
# architecture): Inferentia 4 NeuronCore-v1; Inferentia2 and Trainium 2 NeuronCore-v2; Trainium2 8
# physical NeuronCore-v3, which the default logical-NeuronCore configuration (LNC=2) shows as 4.
NEURON_CORES_PER_DEVICE: dict[str, int] = {"inf1": 4, "inf2": 2, "trn1": 2, "trn1n": 2, "trn2": 4, "trn2u": 4}
_LNC_VARIABLE = "NEURON_LOGICAL_NC_CONFIG"
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_INSTANCE_FAMILY_LABEL = "karpenter.k8s.aws/instance-family"


@dataclass(frozen=True)
class DeviceRanks:
    """What a container's devices hold for the launchers' rank counts."""

    ranks: int  # vLLM tensor-parallel ranks, torchrun processes
    devices: int  # the resource's count
    resource: str
    family: AcceleratorFamily

    def holding(self) -> str:
        """ "4 nvidia.com/gpu", "1 aws.amazon.com/neuron (2 NeuronCores)", "4 google.com/tpu (8 JAX devices)"."""
        extra = f" ({self.ranks} {self._part()}s)" if self.ranks != self.devices else ""
        return f"{self.devices} {self.resource}{extra}"

    def unit(self, count: int) -> str:
        """The unit the ranks count, for "N ... stay idle"."""
        name = self._part() if self.ranks != self.devices or self.family.name == "NeuronCore" else self.family.noun
        return f"{name}{'s' if count != 1 else ''}"

    def _part(self) -> str:
        return "JAX device" if self.family.noun == "TPU" else "NeuronCore"


def device_ranks(
    container: Mapping[str, Any],
    spec: Mapping[str, Any],
    patterns: Iterable[str] = (),
    facts: ObjectFacts | None = None,
) -> DeviceRanks | None:
    """The ranks the container's devices hold; None when it holds none, or when that depends on a node the
    pod does not pin (a Neuron device on an unknown instance type)."""
    patterns = tuple(patterns)
    devices = container_gpus(container, patterns, facts)
    if not devices:
        return None
    resource = gpu_resource_name(container, patterns, facts)
    family = accelerator_family(resource)
    per_unit = family.ranks_per_unit
    if per_unit is None:
        per_unit = (_tpu_devices_per_chip if family.noun == "TPU" else _neuron_cores_per_device)(container, spec)
        if per_unit is None:
            return None
    return DeviceRanks(devices * per_unit, devices, resource, family)


# JAX devices one google.com/tpu chip is, by GKE's TPU accelerator label (GKE "Plan TPUs": the label values;
# JAX: v4 and v5p fuse a chip's two TensorCores in one device (megacore), v5e and v6e have one, TPU7x has
# two it shows as two devices: jax/_src/mesh_utils.py, the (x, y, z, core) mesh of TPU7x).
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_DEVICES_PER_CHIP: dict[str, int] = {
    "tpu-v4-podslice": 1,
    "tpu-v5-lite-device": 1,
    "tpu-v5-lite-podslice": 1,
    "tpu-v5p-slice": 1,
    "tpu-v6e-slice": 1,
    "tpu7x": 2,
}


def _tpu_devices_per_chip(container: Mapping[str, Any], spec: Mapping[str, Any]) -> int | None:
    """None when the pod does not pin a TPU generation gpulint knows (a ComputeClass may choose it)."""
    chosen = _selected_values(spec, (TPU_ACCELERATOR_LABEL,))
    counts = {TPU_DEVICES_PER_CHIP.get(value) for value in chosen}
    return counts.pop() if len(counts) == 1 and None not in counts else None


def _selected_values(spec: Mapping[str, Any], labels: tuple[str, ...]) -> set[str]:
    """The values of ``labels`` the pod's nodeSelector or required node affinity (In) asks for."""
    found: set[str] = set()
    selector = mapping(spec.get("nodeSelector"))
    found.update(text(selector[label]) for label in labels if label in selector)
    terms = sequence(
        dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    )
    for term in terms:
        for item in sequence(mapping(term).get("matchExpressions")):
            expression = mapping(item)
            if expression.get("operator") == "In" and text(expression.get("key")) in labels:
                found.update(text(value) for value in sequence(expression.get("values")))
    return found


def _neuron_cores_per_device(container: Mapping[str, Any], spec: Mapping[str, Any]) -> int | None:
    families = _selected_instance_families(spec)
    if not families or any(name not in NEURON_CORES_PER_DEVICE for name in families):
        return None  # no instance family pinned, or one whose devices gpulint does not know
    cores = {NEURON_CORES_PER_DEVICE[name] for name in families}
    if len(cores) != 1:
        return None  # several families with different NeuronCores per device
    per_device = cores.pop()
    if families & {"trn2", "trn2u"}:
        found = env_value(container, _LNC_VARIABLE)
        value = text(mapping(found[1]).get("value")).strip() if found else "2"
        if value not in ("1", "2"):
            return None
        per_device = 8 // int(value)
    return per_device


def _selected_instance_families(spec: Mapping[str, Any]) -> set[str]:
    """The EC2 instance families (inf2, trn1) the pod's nodeSelector or required node affinity pins."""
    types = _selected_values(spec, _INSTANCE_TYPE_LABELS)
    return {value.split(".", 1)[0] for value in types} | _selected_values(spec, (_INSTANCE_FAMILY_LABEL,))


def main_containers(spec: Mapping[str, Any]) -> list[tuple[Path, dict[str, Any]]]:
    """The app containers (not init or ephemeral ones), with their path from the pod spec (a list, not a
    generator: most rules ask, of pods with one or two containers)."""
    items = spec.get("containers")
    if not isinstance(items, list):
        return []
    return [(("containers", index), container) for index, container in enumerate(items) if isinstance(container, dict)]


def pod_gpus(spec: Mapping[str, Any], patterns: Iterable[str] = (), facts: ObjectFacts | None = None) -> int:
    patterns = tuple(patterns)
    return part_fact(facts, spec, ("pod gpus", patterns), _pod_gpus, spec, patterns, facts)


def _pod_gpus(spec: Mapping[str, Any], patterns: tuple[str, ...], facts: ObjectFacts | None) -> int:
    return sum(container_gpus(container, patterns, facts) or 0 for _, container in main_containers(spec))


def is_distributed(api_version: str, kind: str) -> bool:
    return distributed_kind(api_version, kind) is not None


def injected_env(obj: Mapping[str, Any], site: PodSpecSite) -> dict[str, str | None]:
    """Variables a controller sets in the pod's containers that the manifest does not list.

    LeaderWorkerSet (pkg/utils/pod: LWS_GROUP_SIZE, LWS_LEADER_ADDRESS, LWS_WORKER_INDEX, LWS_NAME)
    and the Kubeflow training operator (PET_NPROC_PER_NODE from ``spec.nprocPerNode``, and the
    rendezvous variables). A value the controller decides at run time is known to exist, not known.
    """
    group, kind = api_group(text(obj.get("apiVersion"))), text(obj.get("kind"))
    spec = mapping(obj.get("spec"))
    if (group, kind) == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
        size = integer(dig(spec, "leaderWorkerTemplate", "size"), 1)
        return {
            "LWS_GROUP_SIZE": None if size is None else str(size),
            "LWS_LEADER_ADDRESS": None,
            "LWS_WORKER_INDEX": None,
            "LWS_NAME": None,
        }
    if (group, kind) == ("kubeflow.org", "PyTorchJob"):
        nproc = spec.get("nprocPerNode")
        if nproc is None:
            nproc = dig(spec, "elasticPolicy", "nProcPerNode")
        env: dict[str, str | None] = {name: None for name in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")}
        if isinstance(nproc, (str, int)) and not isinstance(nproc, bool):
            env["PET_NPROC_PER_NODE"] = str(nproc)
        return env
    if (group, kind) == ("batch.volcano.sh", "Job"):
        return _volcano_host_env(obj)
    return {}


# Volcano's svc plugin (volcano-sh/volcano v1.15.1 pkg/controllers/job/plugins/svc/svc.go GenerateHosts,
# OnPodCreate; const.go): for each task, the key <task>.host of the ConfigMap <job>-svc mounted at
# /etc/volcano holds the task's hostnames one a line, and VC_<TASK>_HOSTS (comma-separated) and VC_<TASK>_NUM
# are set in every container unless the plugin's --inject-hosts-env is false ("-" in a task name becomes "_").
VOLCANO_HOSTS_DIR = "/etc/volcano"
_MAX_VOLCANO_HOSTS = 4096  # replicas beyond this are not listed (a file gpulint does not build)


def _volcano_hosts(obj: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """Each task's hostnames as the svc plugin writes them, by the task's key (``-`` as ``_``); None without the
    plugin, a job name or a known replica count for every task."""
    spec = mapping(obj.get("spec"))
    job = text(dig(obj, "metadata", "name"))
    if "svc" not in mapping(spec.get("plugins")) or not job:
        return None
    hosts: dict[str, list[str]] = {}
    for task in sequence(spec.get("tasks")):
        name, replicas = text(mapping(task).get("name")), integer(mapping(task).get("replicas"))
        if not name or replicas is None or replicas > _MAX_VOLCANO_HOSTS:
            return None
        pod = mapping(dig(task, "template", "spec"))
        hostname, subdomain = text(pod.get("hostname")), text(pod.get("subdomain")) or job
        # a task that sets its hostname lists it once, whatever its replicas
        names = [hostname] if hostname else [f"{job}-{name}-{index}" for index in range(replicas)]
        hosts[name.replace("-", "_")] = [f"{host}.{subdomain}" for host in names]
    return hosts


def _volcano_host_env(obj: Mapping[str, Any]) -> dict[str, str | None]:
    hosts = _volcano_hosts(obj)
    if hosts is None:
        return {}
    arguments = sequence(mapping(dig(obj, "spec", "plugins")).get("svc"))
    known = not any("inject-hosts-env" in text(argument) for argument in arguments)  # else maybe turned off
    env: dict[str, str | None] = {}
    for key, names in hosts.items():
        env[f"VC_{key.upper()}_HOSTS"] = ",".join(names) if known else None
        env[f"VC_{key.upper()}_NUM"] = str(len(names)) if known else None
    return env


def controller_files(obj: Mapping[str, Any]) -> dict[str, str]:
    """Files a controller writes into the containers of the object's pods, by path: Volcano's host lists."""
    hosts = _volcano_hosts(obj) if api_group(text(obj.get("apiVersion"))) == "batch.volcano.sh" else None
    if not hosts or text(obj.get("kind")) != "Job":
        return {}
    return {f"{VOLCANO_HOSTS_DIR}/{key}.host": "\n".join(names) for key, names in hosts.items()}


@dataclass(frozen=True)
class ContainerLaunches:
    commands: tuple[Command, ...]
    launches: tuple[Launch, ...]
    entrypoint: bool  # the launches are the image's entrypoint with the container's args


def container_launches(
    container: Mapping[str, Any],
    injected: Env | None = None,
    config_maps: ConfigMaps | None = None,
    facts: ObjectFacts | None = None,
    files: Mapping[str, str] | None = None,
) -> ContainerLaunches:
    """The container's commands and the launchers they start (read once per container, injected variables and
    ConfigMaps in the ``facts`` of its object while it is checked: several rules ask). ``files``: what a
    controller writes into the container (controller_files)."""
    held = referenced_config_maps(container, config_maps) if config_maps else {}
    key = (
        "launches",
        tuple(injected.items()) if injected else (),
        tuple((name, tuple(sorted(data.items()))) for name, data in held.items()),
        tuple(sorted(files.items())) if files else (),
    )
    return part_fact(facts, container, key, _container_launches, container, injected, held, files)


def _container_launches(
    container: Mapping[str, Any], injected: Env | None, config_maps: ConfigMaps, files: Mapping[str, str] | None
) -> ContainerLaunches:
    entrypoint = IMAGE_ENTRYPOINTS.get(image_name(container)) if "command" not in container else None
    if not container.get("command") and not container.get("args"):
        return ContainerLaunches((), (), entrypoint is not None)  # the image's entrypoint alone: no flag to read
    commands = tuple(container_commands(container, injected, config_maps, files))
    if entrypoint is not None:
        launch = parse(commands[0], entrypoint) if commands else None
        return ContainerLaunches(commands, (launch,) if launch else (), True)
    launches = tuple(
        _with_env_defaults(launch, container, config_maps)
        for command in commands
        if (launch := parse(command)) is not None
    )
    return ContainerLaunches(commands, launches, False)


def _with_env_defaults(launch: Launch, container: Mapping[str, Any], config_maps: ConfigMaps) -> Launch:
    """Flags the launcher reads from a variable when they are not given (torchrun's PET_NPROC_PER_NODE),
    from ``VAR=x`` in front of the command or the container's ``env``."""
    values = dict(launch.values)
    for flag, variable in launch.launcher.env.items():
        if flag in values:
            continue
        if variable in launch.assignments:
            assigned = launch.assignments[variable]
            origin = launch.program.origin if launch.program else Origin((), 0)
            values[flag] = Word(assigned, origin)
            continue
        found = env_value(container, variable)
        if found is not None:
            index, item = found
            value = config_map_value(item, config_maps) if "valueFrom" in item else item.get("value")
            known = isinstance(value, (str, int)) and not isinstance(value, bool)
            values[flag] = Word(str(value) if known else None, Origin(("env", index, "value"), 0))
    return replace(launch, values=values)


def multiprocess_server(
    container: Mapping[str, Any],
    injected: Env | None = None,
    config_maps: ConfigMaps | None = None,
    facts: ObjectFacts | None = None,
) -> tuple[str, int] | None:
    """(launcher, processes) of a launcher in the container known to start several GPU processes."""
    for launch in container_launches(container, injected, config_maps, facts).launches:
        processes = launch_processes(launch)
        if processes is not None and processes > 1 and launch.launcher is not MPIRUN:
            return launch.launcher.name, processes
    return None


def launch_processes(launch: Launch) -> int | None:
    """GPU processes the launch starts in this container (None: not known offline)."""
    name = launch.launcher.name
    if launch.opaque:
        return None  # a word gpulint cannot read may give any flag
    if name in ("vLLM", "SGLang"):
        product = 1
        for flag in ("tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size"):
            if launch.has(flag):
                value = launch.number(flag)
                if value is None:
                    return None
                product *= value
        return product
    if name == "torchrun":
        value = launch.number("nproc-per-node")
        word = launch.values.get("nproc-per-node")
        if value is not None:
            return value
        return 1 if word is None else None
    if name == "DeepSpeed":
        return launch.number("num-gpus")  # without it: every GPU of the pod
    return None


def mounts_dev_shm(container: Mapping[str, Any]) -> bool:
    return any(
        isinstance(mount, dict) and text(mount.get("mountPath")).rstrip("/") == "/dev/shm"
        for mount in sequence(container.get("volumeMounts"))
    )


EnvEntry = tuple[int, Any]  # (index in ``env``, the entry)


def env_entries(container: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, EnvEntry]:
    """The last ``env`` entry (the one the kubelet keeps) of each of ``names`` the container sets, by name."""
    found: dict[str, EnvEntry] = {}
    for index, item in enumerate(sequence(container.get("env"))):
        if isinstance(item, dict) and item.get("name") in names:
            found[item["name"]] = (index, item)
    return found


def env_value(container: Mapping[str, Any], name: str) -> EnvEntry | None:
    """(index, entry) of the last ``env`` entry named ``name``."""
    return env_entries(container, (name,)).get(name)


@dataclass(frozen=True)
class EnvSetting:
    """Where a container's variable is set and to what, as the kubelet builds the environment."""

    path: Path  # from the container: the ``env`` entry's value or valueFrom, or the ``envFrom`` source
    value: str | None  # None: not known offline (a Secret, the downward API, a ConfigMap not held)
    source: str = ""  # "ConfigMap 'x', key 'K'" when the value comes from one; "" when written in ``env``


def env_settings(
    container: Mapping[str, Any], names: tuple[str, ...], config_maps: ConfigMaps
) -> dict[str, EnvSetting]:
    """The settings of ``names`` the container makes: ``envFrom`` sources in order (a later one wins), then ``env``
    entries, which win over every source (kubelet makeEnvironmentVariables). A source gpulint does not hold
    (a Secret, a ConfigMap of no linted file or inventory) is not counted: the names it defines are not known."""
    found: dict[str, EnvSetting] = {}
    for index, source in enumerate(sequence(container.get("envFrom"))):
        source = mapping(source)
        name = text(mapping(source.get("configMapRef")).get("name"))
        data = config_maps.get(name) if name else None
        if data is None:
            continue
        prefix = text(source.get("prefix"))
        for variable in names:
            key = variable[len(prefix) :] if variable.startswith(prefix) else None
            if key is not None and isinstance(data.get(key), str):
                found[variable] = EnvSetting(("envFrom", index), data[key], f"ConfigMap '{name}', key '{key}'")
    for variable, (index, item) in env_entries(container, names).items():
        found[variable] = _env_setting(index, item, config_maps)
    return found


def unknown_env_sources(
    container: Mapping[str, Any], names: tuple[str, ...], config_maps: ConfigMaps
) -> tuple[str, ...]:
    """The ``envFrom`` sources whose keys gpulint does not hold - a Secret, a ConfigMap of no linted file or
    inventory - that could define one of ``names`` (no prefix, or one a name starts with): whether the container
    sets those names is unknown, so nothing is said on the assumption that it does not."""
    found = []
    for source in sequence(container.get("envFrom")):
        source = mapping(source)
        prefix = text(source.get("prefix"))
        if not any(name.startswith(prefix) for name in names):
            continue
        secret = text(mapping(source.get("secretRef")).get("name"))
        config_map = text(mapping(source.get("configMapRef")).get("name"))
        if secret:
            found.append(f"Secret '{secret}'")
        elif config_map and config_maps.get(config_map) is None:
            found.append(f"ConfigMap '{config_map}'")
    return tuple(found)


def _env_setting(index: int, item: Mapping[str, Any], config_maps: ConfigMaps) -> EnvSetting:
    if "valueFrom" in item:
        ref = mapping(mapping(item.get("valueFrom")).get("configMapKeyRef"))
        source = f"ConfigMap '{text(ref.get('name'))}', key '{text(ref.get('key'))}'" if ref else ""
        return EnvSetting(("env", index, "valueFrom"), config_map_value(item, config_maps), source)
    value = item.get("value")
    known = isinstance(value, (str, int)) and not isinstance(value, bool)
    return EnvSetting(("env", index, "value"), str(value) if known else None)
