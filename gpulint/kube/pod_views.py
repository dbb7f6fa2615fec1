"""The pods that controllers build from kinds whose pod template is not a plain PodSpec.

KServe's predictor is a PodSpec with a model-format shorthand container; an Argo template holds one
container (or a container set) and inherits scheduling fields from its workflow; the NIM and vLLM
production-stack operators build the whole pod from a few fields. A view is the pod spec the
controller makes, plus where each of its fields was written (``aliases``: the path of a field in
the view -> the path in the object that set it), so a finding points at the user's own line.

KServe's are in kube/kserve.py. Sources: argoproj/argo-workflows workflow/controller/workflowpod.go (addSchedulingConstraints; the main
container is "main"; processPodSpecPatch: the workflow's podSpecPatch, then the template's, each a
strategic merge patch of the built pod spec, kube/strategic.py); NVIDIA/k8s-nim-operator api/apps/v1alpha1/nimservice_types.go (container
"<name>-ctr", the dshm emptyDir, GetReplicas, GetLWSSize) and controller/platform/standalone
(addGPUResources); vllm-project/production-stack operator/internal/controller/vllmruntime_controller.go.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gpulint.kube.embedded import NotParsed, load_embedded
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.refs import Path
from gpulint.kube.strategic import patch_pod_spec, patched_paths

Aliases = tuple[tuple[Path, Path], ...]


@dataclass(frozen=True)
class PodView:
    spec: dict[str, Any]
    aliases: Aliases = ()  # absolute path in the view -> absolute path in the object
    completed_by: str = ""  # what else supplies fields of the pod ("" when the object says it all)
    # Each field of the view sits in the object in the same shape (a container moved, not built from
    # other fields): a fix written for the pod applies to the object.
    faithful: bool = True
    unfaithful: tuple[Path, ...] = ()  # virtual prefixes whose fields were written elsewhere in another shape
    names: tuple[tuple[Path, str], ...] = ()  # how messages name virtual places another object supplies
    # Text the controller replaces in every field of the template when it creates the pod (Argo's {{...}}
    # parameters, in a key, a value or a list item): a value holding it is not the pod's value yet.
    substituted: str = ""
    # What the controller leaves out of the pod that the object writes, said with every finding on the pod
    # (the Spark operator's webhook-only fields when its webhook is off).
    dropped: str = ""
    # Pod spec fields the controller sets by default, which the object does not write (a NIMCache's nodeSelector).
    defaulted: tuple[str, ...] = ()


# (path relative to the template element, the name the controller gives an unnamed container, is a list)
@dataclass(frozen=True)
class Slot:
    path: Path
    name: str = ""
    is_list: bool = False


# (object, owner path, owner, spec path, spec) -> the pod the controller builds, or None (no pod here)
ViewBuilder = Callable[[dict[str, Any], Path, dict[str, Any], Path, dict[str, Any]], "PodView | None"]


@dataclass
class _Containers:
    items: list[dict[str, Any]] = field(default_factory=list)
    aliases: list[tuple[Path, Path]] = field(default_factory=list)


def _gather(spec_path: Path, spec: dict[str, Any], slots: tuple[Slot, ...]) -> _Containers:
    """The containers at ``slots``, in order, as the view's ``containers`` list (unnamed ones named)."""
    gathered = _Containers()
    for slot in slots:
        value = dig(spec, *slot.path)
        found = [((*slot.path, i), c) for i, c in enumerate(sequence(value))] if slot.is_list else [(slot.path, value)]
        for path, container in found:
            if not isinstance(container, dict):
                continue
            index = len(gathered.items)
            named = container if text(container.get("name")) or not slot.name else {**container, "name": slot.name}
            gathered.items.append(named)
            gathered.aliases.append(((*spec_path, "containers", index), (*spec_path, *path)))
    return gathered


def slotted(slots: tuple[Slot, ...], completed_by: Callable[[dict[str, Any]], str] | None = None) -> ViewBuilder:
    """A PodSpec whose containers sit in other fields (KServe's ``model``, Argo's ``container``)."""

    def view(obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]):
        gathered = _gather(spec_path, spec, slots)
        if not gathered.items:
            return None
        return PodView(
            {**spec, "containers": gathered.items},
            tuple(gathered.aliases),
            completed_by(spec) if completed_by is not None else "",
        )

    return view


# -------------------------------------------------------------------------------------------- Argo

ARGO_MAIN = "main"
ARGO_SLOTS = (
    Slot(("container",), ARGO_MAIN),
    Slot(("script",), ARGO_MAIN),
    Slot(("containerSet", "containers"), is_list=True),
    Slot(("sidecars",), is_list=True),
)
# Scheduling fields a template takes from its workflow when it sets none (workflowpod.go
# addSchedulingConstraints): template field -> workflow spec field.
ARGO_INHERITED = {
    "nodeSelector": "nodeSelector",
    "affinity": "affinity",
    "tolerations": "tolerations",
    "schedulerName": "schedulerName",
    "priorityClassName": "podPriorityClassName",
    "securityContext": "securityContext",
    "resourceClaims": "resourceClaims",  # workflowpod.go: the template's, else the workflow's
}


def _workflow_spec(obj: dict[str, Any], owner_path: Path) -> tuple[Path, dict[str, Any]]:
    """The WorkflowSpec that holds the template (a CronWorkflow's is spec.workflowSpec)."""
    spec_path = owner_path[:-2]  # .../templates/<i>
    return spec_path, mapping(dig(obj, *spec_path))


# workflow/common/util.go SubstituteParams: the template, marshalled to JSON, has every {{...}} replaced
ARGO_EXPRESSION = "{{"
ARGO_PARAMETERS = "the values of its {{...}} parameters (Argo substitutes them when it creates the pod)"


def argo_storage_known(obj: dict[str, Any], template_path: Path) -> bool:
    """No {{...}} parameter decides what the Argo template at ``template_path`` mounts where or what its
    containers request: none in a volume mount's name or path, in a volume's name or emptyDir, in a container's
    resources, or for a whole list (a parameter elsewhere - the arguments, a claim's name - leaves the mounts and
    the devices as written)."""
    template = mapping(dig(obj, *template_path))
    _, workflow = _workflow_spec(obj, template_path)
    containers = [template.get("container"), template.get("script")]
    containers += sequence(mapping(template.get("containerSet")).get("containers"))
    mounts = [mapping(c).get("volumeMounts") for c in containers]
    volumes = [template.get("volumes"), workflow.get("volumes")]
    return not (
        any(_parameterized(listed, ("name", "mountPath", "subPath", "subPathExpr")) for listed in mounts)
        or any(_parameterized(listed, ("name", "emptyDir")) for listed in volumes)
        or any(_has_parameter(mapping(c).get("resources")) for c in containers)
    )


def _parameterized(listed: Any, keys: tuple[str, ...]) -> bool:
    """The list, or one of its items, or one of ``keys`` of an item, holds an Argo expression."""
    if isinstance(listed, str):
        return "{{" in listed
    return any(
        _has_parameter(item) if not isinstance(item, dict) else any(_has_parameter(item.get(k)) for k in keys)
        for item in sequence(listed)
    )


def _has_parameter(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(_has_parameter(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_parameter(v) for v in value)
    return False


def argo_template(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView | None:
    gathered = _gather(spec_path, spec, ARGO_SLOTS)
    if not any(isinstance(spec.get(key), dict) for key in ("container", "script", "containerSet")):
        return None  # steps, dag, resource, suspend, http, plugin: no pod of its own containers
    workflow_path, workflow = _workflow_spec(obj, owner_path)
    view = {key: value for key, value in spec.items() if key not in ("container", "script", "containerSet")}
    view["containers"] = gathered.items
    aliases = list(gathered.aliases)
    for key, workflow_key in ARGO_INHERITED.items():
        if spec.get(key) in (None, "", [], {}) and workflow.get(workflow_key) not in (None, "", [], {}):
            view[key] = workflow[workflow_key]
            aliases.append(((*spec_path, key), (*workflow_path, workflow_key)))
    for key in ("hostNetwork", "dnsPolicy", "dnsConfig", "imagePullSecrets"):  # the workflow's alone
        if key in workflow:
            view[key] = workflow[key]
            aliases.append(((*spec_path, key), (*workflow_path, key)))
    volumes = [*sequence(spec.get("volumes")), *sequence(workflow.get("volumes"))]
    if volumes:
        view["volumes"] = volumes
        own = len(sequence(spec.get("volumes")))
        aliases += [
            ((*spec_path, "volumes", own + i), (*workflow_path, "volumes", i)) for i in range(len(volumes) - own)
        ]
    patched = _argo_patches(view, (("workflow", workflow_path, workflow), ("template", spec_path, spec)), spec_path)
    if patched.aliases:  # the patch's word is the last: it replaces the places it sets
        aliases = [alias for alias in aliases if alias[0] not in {virtual for virtual, _ in patched.aliases}]
    known = _without_parameters(patched.spec)
    completed_by = patched.unknown or _argo_completed_by(spec, workflow)
    if known != patched.spec and not completed_by:
        completed_by = ARGO_PARAMETERS
    unfaithful = tuple(virtual for virtual, _ in patched.aliases)
    return PodView(
        known, (*patched.aliases, *aliases), completed_by, unfaithful=unfaithful, substituted=ARGO_EXPRESSION
    )


@dataclass(frozen=True)
class _Patched:
    spec: dict[str, Any]
    aliases: Aliases = ()  # the places a podSpecPatch set -> the podSpecPatch
    unknown: str = ""  # a podSpecPatch gpulint cannot apply: what it is (absence then proves nothing)


def _argo_patches(
    view: dict[str, Any], holders: tuple[tuple[str, Path, dict[str, Any]], ...], spec_path: Path
) -> _Patched:
    """The pod with the workflow's podSpecPatch, then the template's, applied as strategic merge
    patches of the pod spec (workflowpod.go processPodSpecPatch, util.ApplyPodSpecPatch)."""
    aliases: dict[Path, Path] = {}
    unknown = ""
    for who, holder_path, holder in holders:
        written = holder.get("podSpecPatch")
        if not isinstance(written, str) or not written.strip():
            continue
        patch = _parse_patch(written)
        if isinstance(patch, str):
            unknown = unknown or f"the {who}'s podSpecPatch ({patch})"
            continue
        view = patch_pod_spec(view, patch)
        for place in patched_paths(view, patch):
            aliases[(*spec_path, *place)] = (*holder_path, "podSpecPatch")
    return _Patched(view, tuple(aliases.items()), unknown)


def _parse_patch(written: str) -> dict[str, Any] | str:
    """The patch a podSpecPatch string holds (YAML or JSON), or why it is not known here."""
    if "{{" in written:
        return "its {{...}} parameters are substituted when Argo creates the pod"
    if "&" in written:  # anchors could expand without bound: not read
        return "YAML anchors, which gpulint does not expand in a podSpecPatch"
    patch = load_embedded(written)
    if isinstance(patch, NotParsed) and patch.reason != "not YAML":
        return patch.reason
    if not isinstance(patch, dict):
        return "not a pod spec: Argo fails the pod with 'invalid podSpecPatch'"
    return patch


def _without_parameters(value: Any) -> Any:
    """The pod without the fields whose values hold an Argo expression ({{inputs.parameters.gpus}}):
    Argo substitutes them when it creates the pod, so they are not known here (list items stay, in
    place, so that paths into the template still hold)."""
    if isinstance(value, dict):
        return {k: _without_parameters(v) for k, v in value.items() if not (isinstance(v, str) and "{{" in v)}
    if isinstance(value, list):
        return [_without_parameters(item) for item in value]
    return value


def _argo_completed_by(spec: dict[str, Any], workflow: dict[str, Any]) -> str:
    boundaries = [
        t for t in sequence(workflow.get("templates")) if isinstance(t, dict) and ("steps" in t or "dag" in t)
    ]
    for key in ("nodeSelector", "affinity", "tolerations"):
        if not spec.get(key) and any(t.get(key) for t in boundaries):
            return f"the {key} of the steps or DAG template that runs it"
    return ""


# -------------------------------------------------------------------------------------- NIM operator

NIM_GPU = "nvidia.com/gpu"
# The caching Job's node selector when the NIMCache sets none (k8s-nim-operator v1.0.1-v3.1.2
# api/apps/v1alpha1/nimcache_types.go GetNodeSelectors): NFD's label for a node with an NVIDIA PCI device.
NIM_CACHE_NODE_SELECTOR = (("feature.node.kubernetes.io/pci-10de.present", "true"),)


def _image(image: Any, repository: str = "repository", tag: str = "tag") -> str:
    image = mapping(image)
    name, version = text(image.get(repository)), text(image.get(tag)) or str(image.get(tag) or "")
    return f"{name}:{version}" if name and version else name


# A multi-node NIMService is a LeaderWorkerSet (manifests/lws.yaml): its leader's container is
# "nim-leader", its workers' "nim-worker"; a single-node one is a Deployment of "<name>-ctr".
NIM_LEADER, NIM_WORKER = "nim-leader", "nim-worker"


def nim_service_site(role: str) -> ViewBuilder:
    """The NIMService's pod of ``role``: "" (its Deployment's), "leader" or "worker" (its
    LeaderWorkerSet's, when multiNode is set); None where the NIMService has no such pod."""

    def view(obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]):
        if bool(role) != isinstance(spec.get("multiNode"), dict):
            return None
        built = nim_service(obj, owner_path, owner, spec_path, spec)
        if not role:
            return built
        container = {**built.spec["containers"][0], "name": NIM_LEADER if role == "leader" else NIM_WORKER}
        return replace(built, spec={**built.spec, "containers": [container]})

    return view


def nim_service(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView:
    """The pod of a NIMService's Deployment (or of each LeaderWorkerSet pod when multiNode is set)."""
    resources = mapping(spec.get("resources"))
    multi_node = mapping(spec.get("multiNode"))
    gpus = integer(dig(multi_node, "parallelism", "tensor"), 1)
    if not _names_gpu(resources) and multi_node and not spec.get("draResources") and gpus is not None:
        # addGPUResources: a multi-node NIM gets the tensor parallelism's GPUs per pod (not known: a placeholder)
        resources = {
            "requests": {**mapping(resources.get("requests")), NIM_GPU: gpus},
            "limits": {**mapping(resources.get("limits")), NIM_GPU: gpus},
        }
    name = text(dig(obj, "metadata", "name"))
    container: dict[str, Any] = {
        "name": f"{name}-ctr",
        "image": _image(spec.get("image")),
        "command": spec.get("command") or [],
        "args": spec.get("args") or [],
        "env": spec.get("env") or [],
        "resources": resources,
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    view: dict[str, Any] = {
        key: spec[key]
        for key in ("nodeSelector", "tolerations", "affinity", "schedulerName", "runtimeClassName", "priorityClassName")
        if key in spec
    }
    view["containers"] = [container]
    view["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    c0 = (*spec_path, "containers", 0)
    aliases: Aliases = (
        ((*c0, "resources"), (*spec_path, "resources")),
        ((*c0, "image"), (*spec_path, "image")),
        ((*c0, "env"), (*spec_path, "env")),
        ((*c0, "command"), (*spec_path, "command")),
        ((*c0, "args"), (*spec_path, "args")),
        (c0, spec_path),
    )
    return PodView(view, aliases, faithful=False)


def _names_gpu(resources: dict[str, Any]) -> bool:
    return any(NIM_GPU in mapping(resources.get(section)) for section in ("requests", "limits"))


def nim_service_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """GetReplicas (the HPA's minReplicas when autoscaling): the Deployment's pods, or the
    LeaderWorkerSet's groups (one leader each)."""
    if dig(owner, "scale", "enabled") is True:
        return integer(dig(owner, "scale", "hpa", "minReplicas"), 1)
    return integer(owner.get("replicas"), 1)


def nim_service_workers(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """Each group's workers: the LeaderWorkerSet size (GetLWSSize: the pipeline parallelism) minus its leader."""
    replicas = nim_service_pods(obj, owner)
    size = integer(dig(owner, "multiNode", "parallelism", "pipeline"), 1)
    return None if replicas is None or size is None else replicas * max(size - 1, 0)


def nim_cache(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView:
    """The caching Job's pod: CPU and memory only (spec.resources has no GPU field). With no nodeSelector the
    operator gives the Job NFD's NVIDIA PCI label (NIMCache.GetNodeSelectors, v1.0.1 on): the GPU nodes."""
    resources = mapping(spec.get("resources"))
    amounts = {key: resources[key] for key in ("cpu", "memory") if key in resources}
    container = {"name": "nim-cache-ctr", "env": spec.get("env") or [], "resources": {"requests": amounts}}
    view: dict[str, Any] = {
        key: spec[key] for key in ("nodeSelector", "tolerations", "runtimeClassName") if key in spec
    }
    c0 = (*spec_path, "containers", 0)
    aliases: list[tuple[Path, Path]] = [((*c0, "resources", "requests"), (*spec_path, "resources")), (c0, spec_path)]
    defaulted: tuple[str, ...] = ()
    if spec.get("nodeSelector") is None and "gpuSelectors" not in spec:  # v1.0.0's field had no default
        view["nodeSelector"] = dict(NIM_CACHE_NODE_SELECTOR)
        aliases.append(((*spec_path, "nodeSelector"), (*spec_path, "nodeSelector")))  # where it would be written
        defaulted = ("nodeSelector",)
    view["containers"] = [container]
    return PodView(view, tuple(aliases), faithful=False, defaulted=defaulted)


# ------------------------------------------------------------------------------ vLLM production-stack


def vllm_runtime(
    obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
) -> PodView:
    """The Deployment's pod that the production-stack operator builds (deploymentVLLM)."""
    deploy = mapping(spec.get("deploymentConfig"))
    vllm = mapping(spec.get("vllmConfig"))
    amounts = mapping(deploy.get("resources"))
    deploy_path = (*spec_path, "deploymentConfig")
    c0 = (*spec_path, "containers", 0)
    resources: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}}
    aliases: list[tuple[Path, Path]] = []
    for field_name, resource in (
        ("cpu", "cpu"),
        ("memory", "memory"),
        ("gpu", text(amounts.get("gpuType")) or NIM_GPU),
    ):
        if amounts.get(field_name) not in (None, ""):
            for section in ("requests", "limits"):
                resources[section][resource] = amounts[field_name]
                aliases.append(((*c0, "resources", section, resource), (*deploy_path, "resources", field_name)))
    args = [text(dig(spec, "model", "modelURL")), "--host", "0.0.0.0"]
    tensor = integer(vllm.get("tensorParallelSize"), 0)
    if tensor:
        args += ["--tensor-parallel-size", str(tensor)]
        aliases.append(((*c0, "args"), (*spec_path, "vllmConfig", "tensorParallelSize")))
    mounts, volumes = [], []
    if text(deploy.get("shmSize")):
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": deploy["shmSize"]}})
    container = {
        "name": "vllm",
        "image": "/".join(x for x in (text(dig(deploy, "image", "registry")), text(dig(deploy, "image", "name"))) if x),
        "command": ["/opt/venv/bin/vllm", "serve"],
        "args": args,
        "resources": resources,
        "volumeMounts": mounts,
    }
    view: dict[str, Any] = {
        "containers": [container],
        "runtimeClassName": text(deploy.get("runtimeClass")) or "nvidia",  # the CRD's default
        "volumes": volumes,
    }
    aliases += [((*spec_path, "runtimeClassName"), (*deploy_path, "runtimeClass")), (c0, deploy_path)]
    if "toleration" in deploy:
        view["tolerations"] = deploy["toleration"]
        aliases.append(((*spec_path, "tolerations"), (*deploy_path, "toleration")))
    if deploy.get("nodeSelectorTerms"):
        required = (*spec_path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        view["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": deploy["nodeSelectorTerms"]}
            }
        }
        aliases.append(((*required, "nodeSelectorTerms"), (*deploy_path, "nodeSelectorTerms")))
        aliases.append(((*spec_path, "affinity"), (*deploy_path, "nodeSelectorTerms")))
    return PodView(view, tuple(aliases), faithful=False)


def vllm_runtime_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    return integer(dig(owner, "deploymentConfig", "replicas"), 1)
