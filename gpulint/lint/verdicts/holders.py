"""The long-running workloads deployed with a pod that hold the devices it needs on every node it can use.

A chart's Deployment that holds a node's one iGPU leaves its CronJob's pods Pending at every run
(NodeResourcesFit, kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go, v1.37:
"Insufficient gpu.intel.com/i915"). A repository is not one cluster: only workloads that deploy together
are counted - one namespace, and one render (a chart's `helm template`: one release; an overlay's `kustomize
build`), whatever files its objects come from and whatever their labels; else one file (a manifest applied
whole, a rendered stream) or one Helm release (`app.kubernetes.io/instance` and `helm.sh/chart` alike, as every
chart library labels them). Two renders are two units, even of one base: each deploys on its own.
Proof or silence: a holder counts only when all its pods run and can run only on the nodes the pod can use,
and nothing may add a node (no node pool may grow for either, no node from a managed pool).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from gpulint.kube.fields import dig, mapping, text
from gpulint.kube.pools.fit import FITS, UNKNOWN, PoolFit
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import FitResult, PodRequirements, copies_on
from gpulint.kube.workloads import ObjectFacts
from gpulint.lint.findings import ObjectRef
from gpulint.lint.inputs.linted_set import LintedObject
from gpulint.lint.verdicts.shared import daemon_pod, gpu_pod_requirements, pool_fits
from gpulint.lint.world.cross_file import RELEASE_LABELS
from gpulint.lint.world.resolver import Resolver

# The controllers whose pods run all the time (kind -> one pod per node, not per replica).
_LONG_RUNNING = {"Deployment": False, "StatefulSet": False, "DaemonSet": True}
# Autoscalers that set a workload's replicas (spec.scaleTargetRef): its count is theirs, not the manifest's.
SCALERS = (("autoscaling", "HorizontalPodAutoscaler"), ("keda.sh", "ScaledObject"))


class _Placed(Protocol):
    @property
    def ref(self) -> ObjectRef: ...

    @property
    def data(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Unit:
    """What makes objects deploy together: their namespace, and their render, else their file or Helm release."""

    namespace: str
    source: tuple[str, str]  # ("render", the chart or overlay as displayed) or ("file", the file as written)
    release: tuple[str, str] | None  # never for a render: it is its own release


def unit_of(obj: _Placed, file: str, render: str = "") -> Unit:
    """``render``: the chart or overlay whose render made ``obj`` (LocatedDocument.render), '' for a file."""
    if render:  # the labels of two overlays of one base (or one chart) are alike: they are still two units
        return Unit(obj.ref.namespace, ("render", render), None)
    labels = mapping(dig(obj.data, "metadata", "labels"))
    release = tuple(text(labels.get(key)) for key in RELEASE_LABELS)
    return Unit(obj.ref.namespace, ("file", file), (release[0], release[1]) if all(release) else None)


@dataclass(frozen=True)
class Holder:
    kind: str
    name: str
    pod: PodRequirements
    held: dict[str, Fraction]  # extended resource -> what its pods hold on the nodes the starved pod can use


@dataclass(frozen=True)
class Starved:
    """The pod fits none of the nodes it can use once the holders run."""

    holders: tuple[Holder, ...]
    resources: tuple[str, ...]  # each short on every node the pod can use
    nodes: int  # the nodes the pod can use (on the empty cluster)
    offered: dict[str, Fraction]  # what those nodes have of each resource
    summary: str  # the scheduler's FailedScheduling message once the holders run


def scaled(ref: ObjectRef, resolver: Resolver) -> bool:
    """An autoscaler sets the workload's replicas (it may shrink them)."""
    for group, kind in SCALERS:
        for scaler in resolver.linted.of_kind(group, kind):
            target = mapping(dig(scaler.data, "spec", "scaleTargetRef"))
            if target.get("name") == ref.name and target.get("kind", "Deployment") == ref.kind:
                return True
    return False


def starved(obj: _Placed, unit: Unit, pod: PodRequirements, empty: FitResult, resolver: Resolver) -> Starved | None:
    """The unit's long-running holders leave less of an extended resource than ``pod`` asks for on every node
    it can use (None: room is left, or nothing proves the holders take it)."""
    if not resolver.node_labels_proven or _growing(
        pod, resolver, resolver.namespace_class(unit.namespace, obj.ref.kind)
    ):
        return None  # a node pool (or a managed node group) may add a node
    usable = empty.fitting
    names = {node.name for node in usable}
    holders = [
        holder
        for other in _deployed_with(unit, resolver)
        if other.ref != obj.ref
        for holder in _holders(other, names, resolver)
    ]
    if not any(not _LONG_RUNNING[holder.kind] for holder in holders):
        return None  # DaemonSets alone: gpu-unschedulable's DaemonSet finding judges every linted one
    offered = {
        name: sum((node.allocatable.get(name, Fraction(0)) for node in usable), Fraction(0)) for name in pod.requests
    }
    short = []
    for resource, amount in sorted(pod.requests.items()):
        if not is_extended(resource):
            continue
        taken = sum((holder.held.get(resource, Fraction(0)) for holder in holders), Fraction(0))
        if taken > offered[resource]:
            return None  # the holders do not all fit: which pods run is the scheduler's choice
        if taken and offered[resource] - taken < amount:
            short.append(resource)  # less left on all of them together than the pod asks on one
    if not short:
        return None
    counted = tuple(holder for holder in holders if any(holder.held.get(r) for r in short))
    reasons = Counter(empty.reasons)
    for resource in short:
        reasons[f"Insufficient {resource}"] += len(usable)
    summary = FitResult(empty.total, [], reasons, []).summary()
    return Starved(counted, tuple(short), len(usable), {r: offered[r] for r in short}, summary)


def _deployed_with(unit: Unit, resolver: Resolver) -> list[LintedObject]:
    """The linted long-running workloads of the unit (indexed once per run: every CronJob asks)."""
    index = resolver.run_fact("long-running workloads by unit", _by_unit, resolver)
    found = index.get((unit.namespace, unit.source), [])
    if unit.release is not None:
        found = found + [obj for obj in index.get((unit.namespace, ("release", *unit.release)), []) if obj not in found]
    return found


def _by_unit(resolver: Resolver) -> dict[tuple[str, Any], list[LintedObject]]:
    index: dict[tuple[str, Any], list[LintedObject]] = {}
    for obj in resolver.linted:  # in the order they are written: the message names them so
        if obj.ref.group != "apps" or obj.ref.kind not in _LONG_RUNNING:
            continue
        unit = unit_of(obj, obj.file, obj.render)
        index.setdefault((unit.namespace, unit.source), []).append(obj)
        if unit.release is not None:
            index.setdefault((unit.namespace, ("release", *unit.release)), []).append(obj)
    return index


def _growing(pod: PodRequirements, resolver: Resolver, namespace_class: str = "") -> list[PoolFit]:
    """The node pools that may add a node for the pod (``namespace_class``: the default ComputeClass of its GKE
    namespace, which GKE selects for it)."""
    return [fit for fit in pool_fits(pod, resolver, namespace_class) if fit.state in (FITS, UNKNOWN)]


def _holders(other: LintedObject, names: set[str], resolver: Resolver) -> list[Holder]:
    per_node = _LONG_RUNNING[other.ref.kind]
    if not per_node and scaled(other.ref, resolver):
        return []  # an autoscaler may shrink it
    found = []
    for site in ObjectFacts.afresh(other.data).sites():
        if per_node:
            pod: PodRequirements | None = daemon_pod("DaemonSet", site.spec, resolver)
            if pod is not None and not any(is_extended(name) for name in pod.requests):
                pod = None
        else:
            pod = gpu_pod_requirements(other.ref.kind, site, resolver)
        chosen = resolver.namespace_class(other.ref.namespace, other.ref.kind)
        if pod is None or site.completed_by or (not per_node and _growing(pod, resolver, chosen)):
            continue
        held = _held(pod, site.pods, per_node, names, resolver)
        if held:
            found.append(Holder(other.ref.kind, other.ref.name, pod, held))
    return found


def _held(
    pod: PodRequirements,
    replicas: int | None,
    per_node: bool,
    names: set[str],
    resolver: Resolver,
) -> dict[str, Fraction]:
    """What the workload's pods hold on the usable nodes; {} when that is not certain."""
    fits = resolver.model.evaluate(pod).fitting
    if per_node:  # one pod on each node it fits
        copies = sum(1 for node in fits if node.name in names)
    else:
        if not replicas or not fits or any(node.name not in names for node in fits):
            return {}  # none, or it may run elsewhere
        if sum(copies_on(pod, node) for node in fits) < replicas:
            return {}  # not all of them run
        copies = replicas
    return {name: amount * copies for name, amount in pod.requests.items() if is_extended(name) and copies}
