"""autopilot-rejected: GKE Autopilot's admission (GKE Warden) refuses a pod that requests GPUs without selecting their type, tolerates the GPU taint without requesting one, or asks more CPU or memory beside its GPUs than Autopilot allows, worded as Warden words it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.pools.gke import COMPUTE_CLASS
from gpulint.kube.quantity import amount_or_none, format_amount, format_bytes
from gpulint.kube.workloads import PodSpecSite, containers, extended_resource_path
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, refusing
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.refusal import template_refuses
from gpulint.lint.world.resolver import Resolver

# Needs no nodes: the repository's own files may say Autopilot (lint/inputs/autopilot_setup.py).
SPEC = RuleSpec("autopilot-rejected", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id

GPU = "nvidia.com/gpu"
GPU_TYPE = "cloud.google.com/gke-accelerator"
# The labels whose selection tells Autopilot the GPU a pod needs: a GPU type, or a ComputeClass with a GPU rule.
TYPE_KEYS = (GPU_TYPE, COMPUTE_CLASS)
# A namespace's default ComputeClass: GKE adds its nodeSelector to a pod that selects none (how-to/
# run-pods-default-compute-classes; the second for all but DaemonSet pods).
NAMESPACE_DEFAULTS = ("cloud.google.com/default-compute-class", "cloud.google.com/default-compute-class-non-daemonset")
# GKE Warden's words (GoogleCloudPlatform/ai-on-gke#983, 2025-02-17, on a GKE Autopilot cluster).
REFUSAL = (
    "GKE Warden rejected the request: [denied by autogke-gpu-limitation] When requesting 'nvidia.com/gpu' "
    "resources, you must specify either node selector 'cloud.google.com/gke-accelerator' with accelerator type or "
    "node selector 'cloud.google.com/compute-class' with existing custom compute class which has at least one GPU "
    "priority rule."
)
# The same webhook on a pod that tolerates the GPU taint without requesting a GPU (skypilot-org/skypilot#4542,
# 2025-01-07; GoogleCloudPlatform/k8s-stackdriver#1081, 2026-03-04: the custom metrics adapter's tolerations).
TOLERATION_REFUSAL = (
    "GKE Warden rejected the request: [denied by autogke-gpu-limitation] The toleration with key 'nvidia.com/gpu' "
    "and operator 'Exists' cannot be specified if the pod does not request to use GPU in Autopilot."
)
# The most CPU and memory a pod may request beside its GPUs, by GPU type and count, as Warden enforced it: only
# rows GKE printed (a type or count without a row gives no verdict). argoproj/argo-workflows#13073 (2024-05-21):
# one nvidia-tesla-a100, "higher than the Autopilot maximum of '11'" (cpu) and "of '74Gi'" (memory).
GPU_MAXIMA: dict[tuple[str, int], tuple[Fraction, Fraction]] = {
    ("nvidia-tesla-a100", 1): (Fraction(11), Fraction(74 * 2**30)),
}
LIMIT_REFUSAL = "GKE Warden rejected the request: [denied by autogke-pod-limit-constraints] {what} requested by {whose} for workload '{name}' is higher than the Autopilot maximum of '{maximum}'."


@dataclass(frozen=True)
class Autopilot:
    """What says the pod's cluster is Autopilot, and whether that is proof enough for an error."""

    proven: bool  # the cluster's description or the configuration says it (not the nodes' names, or a file)
    note: str


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: GKE Warden judges the pod template with a built-in workload, else each pod at its create."""
    return refusing(_found(obj, site, ctx), template_refuses(obj.ref))


def _found(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if site.completed_by:
        return  # the selector may come from the object that completes the pod
    gpu = _requests_gpu(site)
    tolerations = [] if gpu else _gpu_tolerations(site)
    if not gpu and not tolerations:
        return  # nothing Autopilot's GPU rules judge: no word on the cluster is needed
    autopilot = _autopilot(obj, ctx)
    if autopilot is None:
        return
    resolver = ctx.resolver
    notes = [autopilot.note]
    for index in tolerations:
        severity = Severity.ERROR if autopilot.proven else Severity.WARNING
        path = (*site.path, "tolerations", index)
        yield Diagnostic(RULE_ID, path, TOLERATION_REFUSAL, severity=severity, notes=tuple(notes))
    if not gpu:
        return
    if _selects_type(site.spec):
        yield from _over_maxima(obj, site, autopilot)
        return
    defaults = _namespace_defaults(obj, resolver)
    if defaults:
        return  # GKE selects the namespace's default ComputeClass for it
    if defaults is None:
        notes.append(
            f"the inventory does not list namespace {obj.ref.namespace or 'default'}: a default ComputeClass it "
            "names (cloud.google.com/default-compute-class) would be selected for the pod"
        )
    proven = defaults is not None and autopilot.proven
    path = extended_resource_path(site, frozenset({GPU})) or site.path
    yield Diagnostic(
        RULE_ID, path, REFUSAL, severity=Severity.ERROR if proven else Severity.WARNING, notes=tuple(notes)
    )


def _autopilot(obj: KubeObject, ctx: CheckContext) -> Autopilot | None:
    """Whether the pod's cluster is GKE Autopilot, and on whose word: the inventory's, the configuration's
    (``gke-autopilot``), else the repository's own files when the inventory says nothing of the cluster.
    ``gke-autopilot: false`` wins over both: the user says the linted files deploy elsewhere."""
    resolver, declared = ctx.resolver, ctx.config.gke_autopilot
    if declared is False:
        return None
    if resolver.autopilot:
        return Autopilot(_described_autopilot(resolver), "the cluster is GKE Autopilot: " + _evidence(resolver))
    if declared:
        note = f"the configuration says gke-autopilot: true ({ctx.config.source or '.gpulint.yaml'})"
        return Autopilot(True, note)
    if resolver.gke_known or not obj.document.path:
        return None  # the inventory shows the cluster, and it is not Autopilot
    path = obj.document.path
    word = ctx.memo(("autopilot-word", path), lambda: resolver.cluster_words.autopilot(path))
    if word is None:
        return None
    return Autopilot(
        False,
        f"{word.where} creates a GKE Autopilot cluster ({word.says}), the nearest cluster the repository "
        "creates: the workload is taken to deploy to it (a warning: nothing else says which cluster it is)",
    )


def _over_maxima(obj: KubeObject, site: PodSpecSite, autopilot: Autopilot) -> Iterator[Diagnostic]:
    """What the pod asks beside its GPUs over Autopilot's maxima for their type and count (a cited row only)."""
    if obj.kind == "DaemonSet":
        return  # DaemonSets have maxima of their own
    gpu_type = mapping(site.spec.get("nodeSelector")).get(GPU_TYPE)
    count = _gpu_count(site.spec)
    maxima = GPU_MAXIMA.get((str(gpu_type), count)) if isinstance(gpu_type, str) and count else None
    if maxima is None:
        return
    for resource, maximum, shown in (("cpu", maxima[0], format_amount), ("memory", maxima[1], format_bytes)):
        total, largest_init = _requested(site.spec, resource)
        for asked, what, whose in ((largest_init, "Max", "init containers"), (total, "Total", "containers")):
            if asked is not None and asked > maximum:
                message = LIMIT_REFUSAL.format(
                    what=f"{what} {resource}", whose=whose, name=obj.ref.name, maximum=shown(maximum)
                )
                note = f"{resource} requested: {shown(asked)} beside {count} {gpu_type}"
                severity = Severity.ERROR if autopilot.proven else Severity.WARNING
                yield Diagnostic(RULE_ID, site.path, message, severity=severity, notes=(autopilot.note, note))


def _gpu_count(spec: dict) -> int:
    """The GPUs the pod's app containers request (0: none, or one not written as a whole number)."""
    total = 0
    for container in sequence(spec.get("containers")):
        resources = mapping(mapping(container).get("resources"))
        amount = _request(resources, GPU)
        if amount is not None and amount.denominator != 1:
            return 0
        total += int(amount or 0)
    return total


def _requested(spec: dict, resource: str) -> tuple[Fraction | None, Fraction | None]:
    """The sum of the app containers' requests of ``resource`` and the largest init container's (None: not
    known, a value not a quantity, or no init container asks it). A request left out is the limit's."""
    total: Fraction | None = Fraction(0)
    for container in sequence(spec.get("containers")):
        amount = _request(mapping(mapping(container).get("resources")), resource)
        if amount is None and _written(container, resource):
            total = None  # written, but no quantity: the sum is not known
            break
        total = (total or Fraction(0)) + (amount or 0)
    largest: Fraction | None = None
    for container in sequence(spec.get("initContainers")):
        amount = _request(mapping(mapping(container).get("resources")), resource)
        if amount is not None and (largest is None or amount > largest):
            largest = amount
    return total, largest


def _request(resources: dict, resource: str) -> Fraction | None:
    for section in ("requests", "limits"):  # the API server defaults a request left out to its limit
        value = mapping(resources.get(section)).get(resource)
        if value is not None:
            return amount_or_none(value)
    return None


def _written(container: object, resource: str) -> bool:
    resources = mapping(mapping(container).get("resources"))
    return any(resource in mapping(resources.get(section)) for section in ("requests", "limits"))


def _gpu_tolerations(site: PodSpecSite) -> list[int]:
    """The indexes of the pod's tolerations of the GPU taint by key with operator Exists."""
    return [
        index
        for index, toleration in enumerate(sequence(site.spec.get("tolerations")))
        if mapping(toleration).get("key") == GPU and mapping(toleration).get("operator") == "Exists"
    ]


def _requests_gpu(site: PodSpecSite) -> bool:
    for _path, container in containers(site.spec):
        resources = mapping(container.get("resources"))
        if any(GPU in mapping(resources.get(section)) for section in ("limits", "requests")):
            return True
    return False


def _selects_type(spec: dict) -> bool:
    """The pod names a GPU type or a ComputeClass: in its nodeSelector, or anywhere in its node affinity (read
    leniently: Warden's words name the node selector, and a pod that names the label elsewhere is left alone)."""
    if any(key in mapping(spec.get("nodeSelector")) for key in TYPE_KEYS):
        return True
    node_affinity = mapping(mapping(spec.get("affinity")).get("nodeAffinity"))
    required = mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = [*sequence(required.get("nodeSelectorTerms"))]
    terms += [
        mapping(p).get("preference")
        for p in sequence(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ]
    return any(
        mapping(expression).get("key") in TYPE_KEYS
        for term in terms
        for expression in sequence(mapping(term).get("matchExpressions"))
    )


def _namespace_defaults(obj: KubeObject, resolver: Resolver) -> list[str] | None:
    """The default ComputeClass labels of the object's namespace ([]: none; None: the namespace is not known)."""
    namespace = resolver.namespaces.get(obj.ref.namespace or "default")
    if namespace is None:
        return [] if resolver.lists("Namespace") else None  # listed whole: it has none (or does not exist)
    labels = mapping(mapping(namespace.get("metadata")).get("labels"))
    keys = NAMESPACE_DEFAULTS if obj.kind != "DaemonSet" else NAMESPACE_DEFAULTS[:1]
    return [str(labels[key]) for key in keys if labels.get(key)]


def _described_autopilot(resolver: Resolver) -> bool:
    """The cluster's description says Autopilot (``autopilot.enabled``), not only its nodes' names."""
    inventory = resolver.inventory
    return inventory is not None and inventory.gke is not None and inventory.gke.autopilot


def _evidence(resolver: Resolver) -> str:
    if _described_autopilot(resolver):
        return "its description (gcloud container clusters describe) has autopilot.enabled"
    return "its nodes are named gk3-..., as GKE names an Autopilot cluster's nodes"
