"""autopilot-rejected: GKE Autopilot's admission (GKE Warden) refuses a pod that requests GPUs without selecting their type, or tolerates the GPU taint without requesting one, worded as Warden words it."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.pools.gke import COMPUTE_CLASS
from gpulint.kube.workloads import PodSpecSite, containers, extended_resource_path
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("autopilot-rejected", Severity.ERROR, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE)
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


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    resolver = ctx.cluster
    if resolver is None or not resolver.autopilot:
        return
    if site.completed_by:
        return  # the selector may come from the object that completes the pod
    described = _described_autopilot(resolver)
    evidence = "the cluster is GKE Autopilot: " + _evidence(resolver)
    if not _requests_gpu(site):
        for index, toleration in enumerate(sequence(site.spec.get("tolerations"))):
            if mapping(toleration).get("key") == GPU and mapping(toleration).get("operator") == "Exists":
                path = (*site.path, "tolerations", index)
                severity = Severity.ERROR if described else Severity.WARNING
                yield Diagnostic(RULE_ID, path, TOLERATION_REFUSAL, severity=severity, notes=(evidence,))
        return
    if _selects_type(site.spec):
        return
    defaults = _namespace_defaults(obj, resolver)
    if defaults:
        return  # GKE selects the namespace's default ComputeClass for it
    notes = [evidence]
    if defaults is None:
        notes.append(
            f"the inventory does not list namespace {obj.ref.namespace or 'default'}: a default ComputeClass it "
            "names (cloud.google.com/default-compute-class) would be selected for the pod"
        )
    proven = defaults is not None and described
    path = extended_resource_path(site, frozenset({GPU})) or site.path
    yield Diagnostic(
        RULE_ID, path, REFUSAL, severity=Severity.ERROR if proven else Severity.WARNING, notes=tuple(notes)
    )


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
