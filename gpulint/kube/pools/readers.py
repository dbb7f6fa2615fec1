"""Readers: each pool description gpulint understands, turned into a ``PoolSpec``.

- Karpenter ``karpenter.sh/v1`` (and ``v1beta1``) NodePool: template labels, requirements,
  taints, startupTaints, limits, weight, status.resources; the NodeClass reference picks the
  provider's catalog (kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go).
- cluster-api MachineDeployment / MachineSet / MachinePool with Cluster Autoscaler's
  scale-from-zero annotations (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi/README.md).
- The JSON the clouds' CLIs print, recognised by shape (they carry no apiVersion/kind):
  ``gcloud container node-pools describe|list --format json`` (a pool has ``config.machineType``),
  ``aws eks describe-nodegroup`` (``{"nodegroup": {"nodegroupName": ...}}``),
  ``az aks nodepool show|list`` (``vmSize``), and ``aws autoscaling describe-auto-scaling-groups``
  (``{"AutoScalingGroups": [...]}``) with Cluster Autoscaler's ``k8s.io/cluster-autoscaler/node-template/*`` tags.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import decimal, integer, mapping, sequence, text
from gpulint.kube.pools.kinds import CAPI_GROUP, CAPI_KINDS, KARPENTER_GROUP
from gpulint.kube.pools.kubelet import KubeletSettings, kubelet_settings, root_volume
from gpulint.kube.pools.labels import EKS_AUTO_GROUP, EKS_AUTO_NODE_LABELS, karpenter_key
from gpulint.kube.pools.model import PoolRequirement, PoolSpec
from gpulint.kube.quantity import amount_or_none, amounts
from gpulint.kube.refs import Path
from gpulint.kube.scheduler import Taint

CAPI_MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
CAPI_MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
CAPACITY = "capacity.cluster-autoscaler.kubernetes.io/"
NODE_TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"
# The NodeClass group names the cloud whose catalog a Karpenter NodePool draws from.
NODECLASS_PROVIDERS = {"karpenter.k8s.aws": "aws", "karpenter.azure.com": "azure", EKS_AUTO_GROUP: "aws"}
CLOUD_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
GKE_GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")  # GKE taints GPU node pools automatically

# Label keys: the node label that names the pool, per system.
KARPENTER_POOL_LABEL = "karpenter.sh/nodepool"
GKE_POOL_LABEL = "cloud.google.com/gke-nodepool"
EKS_POOL_LABEL = "eks.amazonaws.com/nodegroup"
AKS_POOL_LABEL = "kubernetes.azure.com/agentpool"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"


def _labels(raw: Any) -> dict[str, str]:
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in mapping(raw).items() if v is not None}


def _taints(raw: Any) -> tuple[Taint, ...]:
    taints = []
    for taint in sequence(raw):
        if isinstance(taint, dict) and text(taint.get("key")):
            effect = text(taint.get("effect"))
            taints.append(Taint(taint["key"], str(taint.get("value") or ""), CLOUD_EFFECTS.get(effect, effect)))
        elif isinstance(taint, str):  # "key=value:Effect" (AKS nodeTaints, the CA annotation)
            parsed = parse_taint(taint)
            if parsed:
                taints.append(parsed)
    return tuple(taints)


def parse_taint(spec: str) -> Taint | None:
    body, _, effect = spec.strip().rpartition(":")
    key, _, value = body.partition("=")
    return Taint(key, value, effect) if key and effect else None


def _int(value: Any) -> int | None:
    if isinstance(value, str):
        return decimal(value.strip())
    return integer(value)


# --------------------------------------------------------------------------- Karpenter


def node_class_group(ref: dict[str, Any]) -> str:
    """The API group of the NodeClass a NodePool names: karpenter.sh/v1 writes ``group``, v1beta1 an
    ``apiVersion`` (kubernetes-sigs/karpenter pkg/apis/v1beta1/nodeclaim.go NodeClassReference, v0.37)."""
    return text(ref.get("group")) or text(ref.get("apiVersion")).rpartition("/")[0]


def karpenter_nodepool(data: dict[str, Any], file: str) -> PoolSpec:
    metadata, spec = mapping(data.get("metadata")), mapping(data.get("spec"))
    template = mapping(spec.get("template"))
    template_spec = mapping(template.get("spec"))
    requirements = []
    for item in sequence(template_spec.get("requirements")):
        if isinstance(item, dict) and text(item.get("key")):
            values = tuple(str(v) for v in sequence(item.get("values")) if not isinstance(v, (dict, list)))
            requirements.append(PoolRequirement(item["key"], text(item.get("operator")), values))
    node_class = mapping(template_spec.get("nodeClassRef"))
    group = node_class_group(node_class)
    provider = NODECLASS_PROVIDERS.get(group, "")
    # Karpenter reads a requirement on a deprecated label as one on the stable label
    requirements = [replace(r, key=karpenter_key(r.key, provider)) for r in requirements]
    name = text(metadata.get("name"))
    labels = {**_labels(mapping(template.get("metadata")).get("labels")), KARPENTER_POOL_LABEL: name}
    if group == EKS_AUTO_GROUP:
        labels.update(EKS_AUTO_NODE_LABELS)
    limits = amounts(spec.get("limits"))
    status = amounts(mapping(data.get("status")).get("resources"))
    return PoolSpec(
        "Karpenter NodePool",
        name,
        file,
        ("spec",),
        labels=labels,
        requirements=requirements,
        taints=_taints(template_spec.get("taints")),
        startup_taints=_taints(template_spec.get("startupTaints")),
        max_size=int(limits["nodes"]) if "nodes" in limits else None,
        limits={k: v for k, v in limits.items() if k != "nodes"},
        usage=status,
        node_label=KARPENTER_POOL_LABEL,
        weight=_int(spec.get("weight")) or 0,
        karpenter=True,
        provider=provider,
        node_class=(group, text(node_class.get("name"))),
        kubelet=kubelet_settings(template_spec.get("kubelet")),  # karpenter.sh/v1beta1 (v1: on the NodeClass)
    )


def node_class_zones(data: Any) -> Iterator[tuple[tuple[str, str], tuple[str, ...]]]:
    """The zones each EC2NodeClass of a document launches nodes in: the zones of the subnets it
    resolved (``status.subnets[].zone``, karpenter-provider-aws pkg/apis/v1 ec2nodeclass_status.go:
    "resolved Subnet selector values utilized for node launch"). A NodeClass without them says nothing."""
    for _path, item in _items(data):
        api_version, kind = text(item.get("apiVersion")), text(item.get("kind"))
        group = api_version.rpartition("/")[0]
        if kind != "EC2NodeClass" or group != "karpenter.k8s.aws":
            continue
        subnets = sequence(mapping(item.get("status")).get("subnets"))
        zones = tuple(sorted({text(s.get("zone")) for s in subnets if isinstance(s, dict) and text(s.get("zone"))}))
        name = text(mapping(item.get("metadata")).get("name"))
        if zones and name:
            yield (group, name), zones


def node_class_kubelets(data: Any) -> Iterator[tuple[tuple[str, str], KubeletSettings]]:
    """The kubelet settings each EC2NodeClass of a document gives its nodes (karpenter-provider-aws pkg/apis/v1
    ec2nodeclass.go ``spec.kubelet``: maxPods, podsPerCore, kubeReserved, systemReserved, evictionHard), with
    its AMI family (``amiFamily``, or the family of an ``amiSelectorTerms`` alias such as al2023@latest)."""
    for _path, item in _items(data):
        api_version, kind = text(item.get("apiVersion")), text(item.get("kind"))
        group = api_version.rpartition("/")[0]
        if kind != "EC2NodeClass" or group != "karpenter.k8s.aws":
            continue
        spec = mapping(item.get("spec"))
        aliases = {
            text(mapping(term).get("alias")).partition("@")[0] for term in sequence(spec.get("amiSelectorTerms"))
        }
        family = text(spec.get("amiFamily")) or (aliases.pop() if len(aliases) == 1 else "")
        settings = kubelet_settings(spec.get("kubelet"), family)
        volume = root_volume(spec.get("blockDeviceMappings"), family)
        if volume is not None:  # the disk it gives its nodes sizes their ephemeral-storage
            settings = replace(settings or KubeletSettings(ami_family=family.lower()), root_volume=volume)
        name = text(mapping(item.get("metadata")).get("name"))
        if settings is not None and name:
            yield (group, name), settings


# --------------------------------------------------------------------------- cluster-api


def capi_pool(data: dict[str, Any], file: str) -> PoolSpec:
    metadata, spec = mapping(data.get("metadata")), mapping(data.get("spec"))
    annotations = {str(k): str(v) for k, v in mapping(metadata.get("annotations")).items()}
    capacity: dict[str, Fraction] = {}
    for key, resource in (("cpu", "cpu"), ("memory", "memory"), ("ephemeral-disk", "ephemeral-storage")):
        amount = amount_or_none(annotations.get(CAPACITY + key))
        if amount is not None:
            capacity[resource] = amount
    max_pods = _int(annotations.get(CAPACITY + "maxPods"))
    if capacity:
        capacity["pods"] = Fraction(max_pods if max_pods is not None else 110)  # the README's default
    gpus = _int(annotations.get(CAPACITY + "gpu-count"))
    gpu_type = annotations.get(CAPACITY + "gpu-type", "")
    if gpus and gpu_type:
        capacity[gpu_type] = Fraction(gpus)
    labels = _labels(mapping(mapping(spec.get("template")).get("metadata")).get("labels"))
    labels.update(_label_list(annotations.get(CAPACITY + "labels", "")))
    replicas = _int(spec.get("replicas"))
    minimum, maximum = _int(annotations.get(CAPI_MIN)), _int(annotations.get(CAPI_MAX))
    return PoolSpec(
        str(data.get("kind")),
        text(metadata.get("name")),
        file,
        ("metadata", "annotations"),
        namespace=text(metadata.get("namespace")) or "default",
        labels=labels,
        taints=tuple(t for t in map(parse_taint, annotations.get(CAPACITY + "taints", "").split(",")) if t),
        capacity=capacity or None,
        min_size=minimum if maximum is not None else replicas,
        max_size=maximum if maximum is not None else replicas,  # not autoscaled: its replicas
    )


def _label_list(raw: str) -> dict[str, str]:
    labels = {}
    for part in raw.split(","):
        key, sep, value = part.strip().partition("=")
        if key and sep:
            labels[key] = value
    return labels


# --------------------------------------------------------------------------- the clouds' JSON


def gke_node_pool(data: dict[str, Any], file: str, path: Path = ()) -> PoolSpec:
    config = mapping(data.get("config"))
    name = text(data.get("name"))
    machine = text(config.get("machineType"))
    labels = {**_labels(config.get("labels")), GKE_POOL_LABEL: name}
    if machine:
        labels[INSTANCE_TYPE] = machine
    if config.get("spot") is True:
        labels["cloud.google.com/gke-spot"] = "true"
    capacity: dict[str, Fraction] = {}
    taints = list(_taints(config.get("taints")))
    for accelerator in sequence(config.get("accelerators")):
        count = _int(mapping(accelerator).get("acceleratorCount"))
        kind = text(mapping(accelerator).get("acceleratorType"))
        if count and kind:
            labels["cloud.google.com/gke-accelerator"] = kind
            capacity["nvidia.com/gpu"] = Fraction(count)
    if capacity and GKE_GPU_TAINT not in taints:
        taints.append(GKE_GPU_TAINT)
    autoscaling = mapping(data.get("autoscaling"))
    zones = [str(z) for z in sequence(data.get("locations"))] or [""]
    if autoscaling.get("enabled") is True:
        maximum = _gke_size(autoscaling, "totalMaxNodeCount", "maxNodeCount", len(zones))
        minimum = _gke_size(autoscaling, "totalMinNodeCount", "minNodeCount", len(zones))
    else:
        initial = _int(data.get("initialNodeCount"))
        maximum = minimum = initial * len(zones) if initial is not None else None
    return PoolSpec(
        "GKE node pool",
        name,
        file,
        path,
        labels=labels,
        taints=tuple(taints),
        instance_types=(machine,) if machine else (),
        accelerators=capacity,
        min_size=minimum,
        max_size=maximum,
        zones=tuple(z for z in zones if z),
        node_label=GKE_POOL_LABEL,
        gke=True,
        image_type=text(config.get("imageType")),
        accelerators_complete=True,  # GKE attaches GPUs through config.accelerators only
        provider="gcp",
    )


def _gke_size(autoscaling: dict[str, Any], total_key: str, per_zone_key: str, zones: int) -> int | None:
    """A total, or a per-location count times the locations (the API reference: per location)."""
    total = _int(autoscaling.get(total_key))
    per_zone = _int(autoscaling.get(per_zone_key))
    return total if total is not None else (per_zone * zones if per_zone is not None else None)


def eks_nodegroup(data: dict[str, Any], file: str, path: Path = ()) -> PoolSpec:
    name = text(data.get("nodegroupName"))
    labels = {**_labels(data.get("labels")), EKS_POOL_LABEL: name}
    capacity_type = text(data.get("capacityType"))
    if capacity_type:
        labels["eks.amazonaws.com/capacityType"] = capacity_type
    scaling = mapping(data.get("scalingConfig"))
    tags = {str(k): str(v) for k, v in mapping(data.get("tags")).items()}
    template_labels, template_taints, resources = node_template_tags(tags)
    labels.update(template_labels)
    return PoolSpec(
        "EKS node group",
        name,
        file,
        path,
        labels=labels,
        taints=(*_taints(data.get("taints")), *template_taints),
        instance_types=tuple(str(t) for t in sequence(data.get("instanceTypes"))),
        accelerators=resources,
        min_size=_int(scaling.get("minSize")),
        max_size=_int(scaling.get("maxSize")),
        node_label=EKS_POOL_LABEL,
        provider="aws",
    )


def aks_nodepool(data: dict[str, Any], file: str, path: Path = ()) -> PoolSpec:
    name = text(data.get("name"))
    size = text(data.get("vmSize"))
    labels = {**_labels(data.get("nodeLabels")), AKS_POOL_LABEL: name, "agentpool": name}
    if size:
        labels[INSTANCE_TYPE] = size
    mode = text(data.get("mode"))
    if mode:
        labels["kubernetes.azure.com/mode"] = mode.lower()
    autoscaled = data.get("enableAutoScaling") is True
    return PoolSpec(
        "AKS node pool",
        name,
        file,
        path,
        labels=labels,
        taints=_taints(data.get("nodeTaints")),
        instance_types=(size,) if size else (),
        min_size=_int(data.get("minCount")) if autoscaled else _int(data.get("count")),
        max_size=_int(data.get("maxCount")) if autoscaled else _int(data.get("count")),
        node_label=AKS_POOL_LABEL,
        provider="azure",
    )


def auto_scaling_group(data: dict[str, Any], file: str, path: Path = ()) -> PoolSpec:
    tags = {
        text(tag.get("Key")): str(tag.get("Value") or "")
        for tag in sequence(data.get("Tags"))
        if isinstance(tag, dict) and text(tag.get("Key"))
    }
    labels, taints, resources = node_template_tags(tags)
    overrides = sequence(
        mapping(mapping(mapping(data.get("MixedInstancesPolicy")).get("LaunchTemplate"))).get("Overrides")
    )
    types = tuple(text(mapping(o).get("InstanceType")) for o in overrides if text(mapping(o).get("InstanceType")))
    return PoolSpec(
        "Auto Scaling group",
        text(data.get("AutoScalingGroupName")),
        file,
        path,
        labels=labels,
        taints=taints,
        instance_types=types,
        accelerators=resources,
        min_size=_int(data.get("MinSize")),
        max_size=_int(data.get("MaxSize")),
        provider="aws",
    )


def node_template_tags(tags: dict[str, str]) -> tuple[dict[str, str], tuple[Taint, ...], dict[str, Fraction]]:
    """Cluster Autoscaler's scale-from-zero tags (cloudprovider/aws README, "Auto-Discovery Setup"):
    ``node-template/label/<key>: <value>``, ``node-template/taint/<key>: <value>:<effect>``,
    ``node-template/resources/<resource>: <quantity>``."""
    labels, taints, resources = {}, [], {}
    for key, value in tags.items():
        if not key.startswith(NODE_TEMPLATE):
            continue
        kind, _, name = key.removeprefix(NODE_TEMPLATE).partition("/")
        if kind == "label" and name:
            labels[name] = value
        elif kind == "taint" and name:
            taint_value, _, effect = value.rpartition(":")
            if effect:
                taints.append(Taint(name, taint_value, effect))
        elif kind == "resources" and name:
            amount = amount_or_none(value)
            if amount is not None:
                resources[name] = amount
    return labels, tuple(taints), resources


# --------------------------------------------------------------------------- recognition


def pools_in_document(data: Any, file: str) -> Iterator[PoolSpec]:
    """Every pool a parsed document describes (a Kubernetes object, or a cloud CLI's JSON)."""
    for path, item in _items(data):
        reader = _reader(item)
        if reader is not None:
            yield reader(item, file, path)


def _items(data: Any) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The document itself, a List's items, or the arrays the CLIs print (``node-pools list``)."""
    if isinstance(data, list):
        for index, item in enumerate(data):
            if isinstance(item, dict):
                yield (index,), item
        return
    if not isinstance(data, dict):
        return
    if text(data.get("kind")).endswith("List") and isinstance(data.get("items"), list):
        for index, item in enumerate(sequence(data.get("items"))):
            if isinstance(item, dict):
                yield ("items", index), item
        return
    if isinstance(data.get("nodegroup"), dict):  # aws eks describe-nodegroup
        yield ("nodegroup",), data["nodegroup"]
        return
    if isinstance(data.get("nodePools"), list):  # gcloud container clusters describe
        for index, item in enumerate(data["nodePools"]):
            if isinstance(item, dict):
                yield ("nodePools", index), item
        return
    if isinstance(data.get("AutoScalingGroups"), list):
        for index, item in enumerate(data["AutoScalingGroups"]):
            if isinstance(item, dict):
                yield ("AutoScalingGroups", index), item
        return
    yield (), data


Reader = Callable[..., PoolSpec]


def _reader(item: dict[str, Any]) -> Reader | None:
    api_version, kind = text(item.get("apiVersion")), text(item.get("kind"))
    group = api_version.rpartition("/")[0]
    if kind == "NodePool" and group == KARPENTER_GROUP:
        return lambda data, file, path: karpenter_nodepool(data, file)
    if kind in CAPI_KINDS and group == CAPI_GROUP:
        if kind == "MachineSet" and _owned_by_machine_deployment(item):
            return None  # its MachineDeployment is the node group
        return lambda data, file, path: capi_pool(data, file)
    if api_version or kind:
        return None  # another Kubernetes object
    if isinstance(item.get("config"), dict) and text(item["config"].get("machineType")) and text(item.get("name")):
        return gke_node_pool
    if text(item.get("nodegroupName")):
        return eks_nodegroup
    if text(item.get("vmSize")) and text(item.get("name")):
        return aks_nodepool
    if text(item.get("AutoScalingGroupName")):
        return auto_scaling_group
    return None


def _owned_by_machine_deployment(item: dict[str, Any]) -> bool:
    """A MachineSet a MachineDeployment owns is no node group of its own: Cluster Autoscaler's clusterapi
    provider skips it (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi clusterapi_controller.go
    listResources, clusterapi_utils.go machineSetHasMachineDeploymentOwnerRef: an owner of that kind with a name)."""
    owners = sequence(mapping(item.get("metadata")).get("ownerReferences"))
    return any(
        isinstance(owner, dict) and owner.get("kind") == "MachineDeployment" and text(owner.get("name"))
        for owner in owners
    )
