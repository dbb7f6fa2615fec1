"""Verdicts that `check` (the rules) and `explain` share, so the two cannot disagree.

Each answers one question about a pod template, a claim or a gang against the resolver's view
of the cluster; the rules word them as findings, `explain` as steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube.daemonset import Coverage, coverage, first_untolerated, may_select, selects, untolerated_taint
from gpulint.kube.dra.allocation import Alternative, ClaimSpec, NodeVerdict, Request, claim_spec_of
from gpulint.kube.fields import dig, mapping
from gpulint.kube.gangs.members import Gang, GangVerdict, NewNodes, member_demand, pack, pack_with_new_nodes
from gpulint.kube.gangs.packing import PoolLimit
from gpulint.kube.gpu_stack import (
    NFD_WORKER,
    NVIDIA,
    OPERATOR_OPERANDS,
    StackComponent,
    advertises_gpus,
    node_names,
    pool_vendors,
    present_but_silent,
    stack_component,
    taint_text,
    vendor_of_resource,
)
from gpulint.kube.pools.fit import FITS, LIMITED, NEVER, UNKNOWN, PoolFit, daemon_overhead, fit_pool, label_failure
from gpulint.kube.pools.gke import with_class_tolerations
from gpulint.kube.pools.model import NodePool, PoolSpec, Template
from gpulint.kube.quantity import QuantityError, format_amount, quantity_from_yaml
from gpulint.kube.queueing.workload import queue_name
from gpulint.kube.refs import Path
from gpulint.kube.resources import is_extended, scheduler_managed
from gpulint.kube.runtime_class import admit
from gpulint.kube.scheduler import (
    FitResult,
    NodeInfo,
    PodRequirements,
    Taint,
    Toleration,
    names_untolerated_taints,
    pod_requirements,
)
from gpulint.kube.topology_spread import SpreadBound, own_hard_constraints, spread_bound
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, containers, effective_pod_spec, part_fact
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.runtime_classes import runtime_class_admission
from gpulint.lint.world.chart_releases import ChartRelease, daemon_spec
from gpulint.lint.world.inventory import HasData
from gpulint.lint.world.resolver import Resolver
from gpulint.lint.world.shapes import of_shape

if TYPE_CHECKING:  # the DRA model (and CEL with it) loads only when a check needs it
    from gpulint.kube.dra.devices import DeviceGroup
    from gpulint.kube.queueing.assign import FlavorPin


def admitted_pod_spec(kind: str, spec: dict[str, Any], resolver: Resolver) -> dict[str, Any]:
    """The pod spec the scheduler sees: controller-added tolerations, and its RuntimeClass's scheduling and overhead."""
    admitted = runtime_class_admission(spec, resolver)
    return effective_pod_spec(kind, admitted.spec if admitted is not None else spec)


def kueue_pins(obj: KubeObject, resolver: Resolver) -> dict[Path, FlavorPin]:
    """Pod spec path -> what Kueue adds to the pods of a queued object once its ClusterQueue admits it: the
    flavor's nodeLabels as a nodeSelector and its tolerations (kubernetes-sigs/kueue v0.19.2 pkg/podset/podset.go
    FromAssignment, applied by Merge when the job starts), when the flavor is certain, or each candidate's labels as
    alternatives (kube/queueing/assign FlavorPin: a relaxation, as the gang packing uses it). Empty for an object
    no LocalQueue in reach queues. Worked out once per inventory in the object's facts while it is checked
    (each of its pod templates asks); read only."""
    return obj.facts.fact("kueue pins", resolver, _kueue_pins, obj, resolver)


def _kueue_pins(obj: KubeObject, resolver: Resolver) -> dict[Path, FlavorPin]:
    name = queue_name(obj.facts)
    if name is None or name.as_annotation:
        return {}
    from gpulint.kube.queueing.assign import flavor_pins  # Kueue's flavor assignment, only for queued objects

    return flavor_pins(resolver.kueue, obj.ref.namespace, obj.facts)


def kueue_admitted(site: PodSpecSite, pins: dict[Path, FlavorPin]) -> PodSpecSite:
    """The pod set as Kueue starts it (``pins``: kueue_pins of its object)."""
    pin = pins.get(site.path)
    return replace(site, spec=pin.apply(site.spec)) if pin is not None else site


def written_requirements(
    kind: str, spec: dict[str, Any], resolver: Resolver, facts: ObjectFacts | None = None
) -> PodRequirements:
    """The scheduler's requirements of the pod as written (``effective_pod_spec``: a DaemonSet's controller-added
    tolerations), without Kueue's pins or its RuntimeClass: once per pod spec in its object's ``facts``, and per
    pod shape in a review snapshot."""
    key = ("written requirements", kind)
    return part_fact(facts, spec, key, _written_of_shape, kind, spec, resolver, facts, against=resolver)


def _written_of_shape(
    kind: str, spec: dict[str, Any], resolver: Resolver, facts: ObjectFacts | None
) -> PodRequirements:
    return of_shape(resolver.pod_shapes, ("written requirements", kind), (spec,), facts, _written, kind, spec, facts)


def _written(kind: str, spec: dict[str, Any], facts: ObjectFacts | None) -> PodRequirements:
    return pod_requirements(effective_pod_spec(kind, spec), facts=facts)


def gpu_pod_requirements(
    kind: str, site: PodSpecSite, inventory: Resolver, facts: ObjectFacts | None = None
) -> PodRequirements | None:
    """Scheduler requirements of a pod that asks for an extended resource (None for other pods).

    A scheduler extender's shares no node publishes (HAMi's nvidia.com/gpumem and gpucores, which its
    KubeSchedulerConfiguration marks ignoredByScheduler: NodeResourcesFit skips them) are the extender's
    to judge: left out here, as gpu-resource-unknown's note says.

    Extended resources backed by a DeviceClass (DRA extended resources) and published by
    no node are served by the DynamicResources plugin, not NodeResourcesFit: left out here.
    Worked out once per pod template and inventory in the ``facts`` of its object while it is checked
    (several rules ask).
    """
    key = ("gpu pod requirements", kind)
    return part_fact(
        facts, site.spec, key, _gpu_pod_requirements_of_shape, kind, site, inventory, facts, against=inventory
    )


def _gpu_pod_requirements_of_shape(
    kind: str, site: PodSpecSite, inventory: Resolver, facts: ObjectFacts | None
) -> PodRequirements | None:
    key = ("gpu pod requirements", kind, site.path)
    return of_shape(inventory.pod_shapes, key, (site.spec,), facts, _gpu_pod_requirements, kind, site, inventory, facts)


def _gpu_pod_requirements(
    kind: str, site: PodSpecSite, inventory: Resolver, facts: ObjectFacts | None
) -> PodRequirements | None:
    requirements = with_extended_resource_tolerations(
        with_class_tolerations(
            pod_requirements(
                admitted_pod_spec(kind, site.spec, inventory),
                inventory.gates.enabled("TaintTolerationComparisonOperators"),
                facts,
            )
        ),
        inventory,
    )
    extended = [name for name in requirements.requests if is_extended(name)]
    if not extended:
        return None
    requirements = without_extender_shares(requirements, inventory)
    backed = set(inventory.dra_extended_resources())
    dra_only = backed - inventory.published_resources
    if dra_only & set(extended):
        requests = {k: v for k, v in requirements.requests.items() if k not in dra_only}
        requirements = replace(requirements, requests=requests)
    if backed & set(extended):
        # published by some nodes' device plugins: checked there, left to DRA on the others
        requirements = replace(requirements, dra_resources=frozenset(backed & set(extended)))
    return requirements


def extender_shares(names: Iterable[str], resolver: Resolver) -> dict[str, str]:
    """Of ``names``, the shares a scheduler extender accounts for and no node offers, with the extender's plugin:
    HAMi's nvidia.com/gpumem and gpucores, which its KubeSchedulerConfiguration marks ignoredByScheduler
    (Project-HAMi/HAMi charts/hami/templates/_helpers.tpl), so NodeResourcesFit skips them."""
    offered = resolver.offered_resources
    return {name: plugin for name in names if name not in offered and (plugin := scheduler_managed(name))}


def without_extender_shares(pod: PodRequirements, resolver: Resolver) -> PodRequirements:
    """The pod the kube-scheduler's NodeResourcesFit judges: without the extender's shares (extender_shares).
    The one place that decides it, for a single pod's verdict and for a gang's members alike."""
    shares = extender_shares(pod.requests, resolver)
    if not shares:
        return pod
    return replace(pod, requests={k: v for k, v in pod.requests.items() if k not in shares})


def with_extended_resource_tolerations(pod: PodRequirements, resolver: Resolver) -> PodRequirements:
    """The pod as the ExtendedResourceToleration admission plugin leaves it, when the cluster runs it:
    a toleration (key = the resource, operator Exists, effect NoSchedule) for every extended resource
    requested (kubernetes/kubernetes plugin/pkg/admission/extendedresourcetoleration/admission.go)."""
    if not resolver.extended_resource_toleration:
        return pod
    added = tuple(
        Toleration(name, "Exists", "", "NoSchedule")
        for name in sorted(pod.requests)
        if is_extended(name) and Toleration(name, "Exists", "", "NoSchedule") not in pod.tolerations
    )
    return replace(pod, tolerations=pod.tolerations + added) if added else pod


def pool_fits(
    pod: PodRequirements, resolver: Resolver, namespace_class: str = "", priorities: bool = False
) -> list[PoolFit]:
    """How each node pool answers the pod: fits after a scale-up, never, cannot be chosen, limited, unknown.
    ``namespace_class``: the default ComputeClass of the pod's namespace, which GKE selects for it; ``priorities``:
    the pools GKE may create for a class that gives only what its priorities describe are those priorities' (else
    one unknown answer for them)."""
    named = names_untolerated_taints(resolver.gates.version)
    fits = [fit_pool(pod, pool, resolver.daemon_pods, named) for pool in resolver.pools]
    created = gke_created_pool(pod, resolver, namespace_class)
    if created is None:
        return fits
    by_class = class_priority_fits(pod, resolver, namespace_class) if priorities else None
    return [*fits, created] if by_class is None else [*fits, *by_class]


def class_priority_fits(pod: PodRequirements, resolver: Resolver, namespace_class: str = "") -> list[PoolFit] | None:
    """How the pools of the pod's ComputeClass's priorities answer it, when the class gives only those
    (whenUnsatisfiable DoNotScaleUp, gpulint/kube/pools/gke_classes.py); None when they do not decide: no such
    class read, a priority whose nodes are not known."""
    from gpulint.kube.pools.gke import selected_class

    if any(is_extended(resource) and resource != "nvidia.com/gpu" for resource in pod.requests):
        return None  # what a priority's node offers of any other extended resource is not stated
    name = selected_class(pod, namespace_class)
    compute_class = resolver.compute_classes.get(name) if name else None
    if compute_class is None or not compute_class.restricts:
        return None
    from gpulint.kube.pools.gke_classes import class_pools

    read = {pool.name for pool in resolver.pools if pool.spec.gke}
    found = class_pools(compute_class, resolver.pool_catalog, read, pod.label_keys())
    if found.undecided or not found.pools:
        return None  # (none: every priority names node pools read, which answer for themselves)
    named = names_untolerated_taints(resolver.gates.version)
    return [fit_pool(pod, pool, resolver.daemon_pods, named) for pool in found.pools]


def gke_created_pool(pod: PodRequirements, resolver: Resolver, namespace_class: str = "") -> PoolFit | None:
    """An unknown answer for the pool GKE may create for the pod, which no node-pools list shows (None when the
    inventory shows no GKE cluster, or GKE is proven not to create one)."""
    auto = resolver.gke_auto_creation
    why = auto.serves(pod, namespace_class) if auto is not None else ""
    if auto is None or not why:
        return None
    return PoolFit(NodePool(PoolSpec(*auto.pool, ""), [], open_types=True), UNKNOWN, why)


def asks_pools(resolver: Resolver) -> bool:
    """Node pools answer for a pod: pools are read, or the cluster is GKE's (a pool it may create)."""
    return bool(resolver.pools) or resolver.gke_auto_creation is not None


def scale_up_verdict(fits: list[PoolFit]) -> tuple[str, list[PoolFit]]:
    """The best answer the pools give (fits > unknown > limited > never/excluded) and the pools giving it."""
    for state in (FITS, UNKNOWN, LIMITED):
        chosen = [fit for fit in fits if fit.state == state]
        if chosen:
            return state, chosen
    return NEVER, fits


def describe_scale_up(fit: PoolFit) -> str:
    best = fit.best()
    types = first_and_more([t.name for t in fit.fitting])
    room = "" if fit.room is None else f"; room for {fit.room} more of these pods"
    return f"{fit.pool.title} adds a node ({types}){room}" if best else fit.pool.title


def selection_leaves_no_node(pod: PodRequirements, resolver: Resolver, namespace_class: str = "") -> bool:
    """The pod's required node affinity/selector leaves no node that offers its extended resources.

    One cause, one finding: over-tight-affinity reports it (with the scheduler's summary), and
    gpu-unschedulable, which would report the same pod as unschedulable, leaves it to that rule.
    With node pools, it must also match no node a pool can add (when one does, gpu-unschedulable
    judges what the pool's nodes offer).
    """
    if not pod.requirements() or (asks_pools(resolver) and pools_matching(pod, resolver, namespace_class)):
        return False
    groups = resolver.model.matching_groups(pod)
    if not groups:
        return True
    wanted = [name for name in pod.requests if is_extended(name)]
    return bool(wanted) and not any(
        all(group.representative.allocatable.get(name, 0) > 0 for name in wanted) for group in groups
    )


def pools_matching(pod: PodRequirements, inventory: Resolver, namespace_class: str = "") -> list[str]:
    """The pools whose nodes the pod's node selection allows (labels only: taints and resources are
    gpu-unschedulable's)."""
    matching = [
        pool.title
        for pool in inventory.pools
        if not label_failure(pod, pool.labels, pool, None)
        and (
            not pool.templates
            or pool.open_types
            or any(not label_failure(pod, t.labels, pool, t) for t in pool.templates)
        )
    ]
    created = gke_created_pool(pod, inventory, namespace_class)
    return matching if created is None else [*matching, created.pool.title]


def pool_label_reasons(pod: PodRequirements, inventory: Resolver) -> str:
    reasons = []
    for pool in inventory.pools:
        why = label_failure(pod, pool.labels, pool, None) or next(
            (label_failure(pod, t.labels, pool, t) for t in pool.templates), ""
        )
        reasons.append(f"{pool.title}: {why}")
    return "; ".join(reasons)


def selection_limits_replicas(pod: PodRequirements, pods: int | None, resolver: Resolver) -> tuple[int, int] | None:
    """(pods that fit on the nodes the selection allows, pods that would fit without it) when the
    workload's pods do not all fit because of its required node affinity/selector; else None."""
    if not pods or pods < 2 or not pod.requests or not pod.requirements() or resolver.pools:
        return None
    model = resolver.model
    fit_here = model.placeable(pod)
    if fit_here >= pods:
        return None
    fit_anywhere = model.placeable(
        PodRequirements(pod.requests, (), None, pod.tolerations, pod.node_name, pod.dra_resources)
    )
    return (fit_here, fit_anywhere) if fit_anywhere >= pods else None


def scheduling_hint(result: FitResult, pod: PodRequirements, inventory: Resolver) -> str:
    """The smallest change that would help, read off why the nodes the pod may use failed.

    The scheduler reports each node's first failing filter, so a node outside the pod's node
    selection may be counted under its taint: the hint looks only at the nodes the selection allows.
    """
    in_reach = [(group, reasons) for group, reasons in result.failing if pod.matches_affinity(group.representative)]
    if not in_reach:
        return (
            ""
            if result.fitting or not result.failing
            else " No node matches the pod's nodeSelector/required node affinity."
        )
    first: Counter[str] = Counter()
    for group, reasons in in_reach:
        first[reasons[0]] += len(group)
    reason, _ = first.most_common(1)[0]
    if reason.startswith("Insufficient "):
        resource = reason.removeprefix("Insufficient ")
        candidates = [g.representative for g, r in in_reach if all(x.startswith("Insufficient") for x in r)]
        largest = max((n.allocatable.get(resource, Fraction(0)) for n in candidates), default=Fraction(0))
        asked = pod.requests.get(resource, Fraction(0))
        return (
            f" The largest node that passes the other filters offers {format_amount(largest)} {resource}; "
            f"this pod asks for {format_amount(asked)}."
        )
    if reason.startswith("node(s) had untolerated taint"):
        # the scheduler's reason names no taint since 1.34: read the most common one off the nodes
        taints: Counter[Taint] = Counter()
        for group, reasons in in_reach:
            taint = untolerated_taint(pod, group.representative) if reasons[0] == reason else None
            if taint is not None:
                taints[taint] += len(group)
        if taints:
            common = taints.most_common(1)[0][0]
            return (
                f" Most nodes the pod's node selection allows carry the taint {{{common.key}: {common.value}}}: "
                "add a matching toleration if the pod belongs there."
            )
    return ""


def referenced_claim(obj: KubeObject, entry: dict[str, Any], resolver: Resolver) -> tuple[HasData | None, str]:
    """The claim (or template) data a pod's resourceClaims entry points at, if the linted set or inventory has it,
    and the kind the entry names ("" when it names neither)."""
    namespace = obj.ref.namespace
    if isinstance(entry.get("resourceClaimTemplateName"), str):
        return resolver.find_claim(
            "ResourceClaimTemplate", namespace, entry["resourceClaimTemplateName"]
        ), "ResourceClaimTemplate"
    if isinstance(entry.get("resourceClaimName"), str):
        return resolver.find_claim("ResourceClaim", namespace, entry["resourceClaimName"]), "ResourceClaim"
    return None, ""


def claim_entries(
    obj: KubeObject, site: PodSpecSite, resolver: Resolver
) -> Iterator[tuple[dict[str, Any], HasData | None, str]]:
    """(entry, the claim it names where found, its kind) for each of the pod template's ``resourceClaims``."""
    entries = site.spec.get("resourceClaims")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            yield (entry, *referenced_claim(obj, entry, resolver))


def referenced_claims(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> list[ClaimSpec]:
    """The parsed claims a pod template references (those the linted files or the inventory hold); one missing
    is claim-reference-invalid's."""
    return [claim_spec_of(located.data, kind) for _, located, kind in claim_entries(obj, site, resolver) if located]


def extended_resource_claim(site: PodSpecSite, resolver: Resolver) -> tuple[ClaimSpec, Path] | None:
    """A DRA-backed extended resource (DeviceClass.extendedResourceName) as the claim the scheduler makes for it."""
    backed = resolver.dra_extended_resources()
    published = resolver.published_resources
    requests = []
    where: Path = ()
    for container_path, container in containers(site.spec):
        limits = mapping(mapping(container.get("resources")).get("limits"))
        for name, value in limits.items():
            if not (is_extended(name) and name in backed and name not in published):
                continue
            try:
                quantity = quantity_from_yaml(value)
            except QuantityError:
                continue  # gpu-non-integer reports it
            if not quantity.is_integer() or quantity.value < 1:
                continue
            alternative = Alternative(name, backed[name], (), False, int(quantity.value), (), ())
            requests.append(Request(f"{container.get('name')}-{name}", (), (alternative,), False))
            where = where or (*site.path, *container_path, "resources", "limits", name)
    if not requests:
        return None
    return ClaimSpec(tuple(requests), (), ()), where


def allocation_error(verdicts: list[tuple[DeviceGroup, NodeVerdict]]) -> str | None:
    """Why the allocator errors on a node, None when it errors on none. The scheduler's
    findNodesThatPassFilters fails the whole attempt on a filter's error, whatever the other nodes offer, and
    each retry meets it again: for a pod, decisive over the nodes it may use."""
    for group, verdict in verdicts:
        if verdict.error:
            others = f" (and {len(group.nodes) - 1} identical)" if len(group.nodes) > 1 else ""
            return (
                f"the scheduler's allocator fails on node {group.nodes[0].name}{others}: {verdict.reason}; "
                "such an error fails the whole scheduling attempt, and every retry, whatever other nodes offer"
            )
    return None


def allocation_failure(verdicts: list[tuple[DeviceGroup, NodeVerdict]], total: int) -> str | None:
    """None when some node fits or the answer is unknown; else why, from the node that came closest."""
    if any(verdict.fits is not False for _, verdict in verdicts):
        return None
    group, best = max(verdicts, key=lambda item: item[1].score)
    if best.score[0] <= 0 and max(best.score) <= 0:
        return f"no node of {total} has a device for it: {best.reason}"
    others = f" (and {len(group.nodes) - 1} identical)" if len(group.nodes) > 1 else ""
    return (
        f"no node of {total} can satisfy it: {best.reason}, on the node that comes closest, "
        f"{group.nodes[0].name}{others}"
    )


def role_pods(role: str) -> str:
    """The member pods by their role: "worker pods"; a Job's members are just "pods"; a role named in the
    plural (a Kueue pod set "workers") is quoted rather than doubled ("'workers' pods", not "workers pods")."""
    if role == "pod":
        return "pods"
    return f"'{role}' pods" if role.endswith("s") else f"{role} pods"


def describe_gang(gang: Gang, result: GangVerdict, key: str) -> str:
    """One line: what the gang needs at once and what the best domain holds (gang_detail says why)."""
    main = result.main
    assert main is not None
    where = f" in one {key}" if key else ""
    best = result.best()
    if key and best and not best.domain:  # no node carries the label
        return f"{gang.system} needs its pods placed at once{where}, but no node carries the label {key}"
    domain = f"the best {key.rsplit('/', 1)[-1]} ({best.domain})" if key and best else "the cluster"
    held = best.placeable if best else 0
    pods = role_pods(main.role)
    return f"{gang.system} needs {result.required_main} {pods} x {member_demand(main)} placed at once{where}; {domain} fits {held}"


def gang_detail(gang: Gang, result: GangVerdict, key: str) -> tuple[str, ...]:
    """What follows describe_gang's line: Kueue's words for a missing level, or why the other members do not fit."""
    best = result.best()
    if key and best and not best.domain:
        return (f"no topology domains at level: {key}",)
    return (best.reason,) if best and best.reason and len(gang.members) > 1 else ()


GANG_MEMO = "gang-verdict"


def admitted_gang(gang: Gang, resolver: Resolver) -> Gang:
    """The gang's members as the scheduler sees their pods, as every single pod's verdict has them: with the
    tolerations the ExtendedResourceToleration admission plugin adds (else a GKE gang of accelerator pods would not
    fit the accelerator nodes' taints its pods in fact tolerate), without a scheduler extender's shares (else a gang
    of HAMi pods would need nvidia.com/gpumem no node publishes). Idempotent: the gang's answers admit it once."""
    members = [
        replace(m, pod=without_extender_shares(with_extended_resource_tolerations(m.pod, resolver), resolver))
        for m in gang.members
    ]
    if all(a.pod is m.pod for a, m in zip(members, gang.members, strict=True)):
        return gang
    return replace(gang, members=members)


def gang_verdict(
    gang: Gang, resolver: Resolver, memo: Callable[[Any, Callable[[], Any]], Any], topology_key: str | None = None
) -> GangVerdict:
    """Packing is the expensive part: one verdict per distinct gang shape and topology per run (the
    members' roles included: the verdict's words name them)."""
    gang = admitted_gang(gang, resolver)
    key = (
        GANG_MEMO,
        tuple((m.pod.signature(), m.count, m.role) for m in gang.members),
        gang.required,
        gang.topology_key if topology_key is None else topology_key,
        gang.slice_key,
        gang.slice_size,
    )
    return memo(key, lambda: pack(gang, resolver.model, topology_key))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class DaemonSetVerdict:
    """How a DaemonSet's pods cover the nodes they are expected on (the DaemonSet controller's view)."""

    component: StackComponent | None  # the GPU infrastructure it runs, if it runs one
    pod: PodRequirements
    expected: str  # "GPU nodes", "NVIDIA GPU nodes", or "nodes its node selection matches"
    coverage: Coverage

    @property
    def reaches_none(self) -> bool:
        """GPU infrastructure that runs on none of its vendor's GPU nodes: daemonset-coverage's error."""
        return self.component is not None and not self.coverage.runs

    @property
    def selects_none(self) -> bool:
        """GPU infrastructure whose node selection matches none of the GPU nodes (no taint is why)."""
        return self.reaches_none and not self.coverage.blocked and bool(self.coverage.outside_selection)


def daemonset_verdict(kind: str, site: PodSpecSite, resolver: Resolver) -> DaemonSetVerdict | None:
    """None when there is nothing to expect: no node it should run on, or no node selection to read intent from.

    GPU infrastructure must run on every GPU node of its vendor; any other DaemonSet, on the
    nodes its own node selection names (a DaemonSet with none is meant for every node it tolerates).
    """
    pod = daemon_pod(kind, site.spec, resolver)
    component = stack_component(site.spec)
    if component is not None:
        target = resolver.gpu_nodes(component.vendor)
        expected = f"{component.vendor} GPU nodes" if component.vendor else "GPU nodes"
    elif _names_a_pool(pod):
        target = [node for node in resolver.nodes if selects(pod, node)]
        if len(target) == len(resolver.nodes):
            return None  # a selection that keeps every node says nothing about where it must run
        expected = "nodes its node selection matches"
    else:
        return None
    if not target:
        return None
    verdict = DaemonSetVerdict(component, pod, expected, coverage(pod, target))
    if component is None and verdict.coverage.runs:
        return None  # another DaemonSet reaching part of its pool may be meant to (a taint keeps it off the rest)
    return verdict


def operator_operands_verdict(policy: dict[str, Any], resolver: Resolver) -> DaemonSetVerdict | None:
    """The GPU operator's DaemonSets (device plugin, GFD, DCGM exporter, validator...) as a ClusterPolicy makes them.

    The operator selects the GPU nodes itself (nvidia.com/gpu.deploy.<operand>=true, set on the nodes
    NFD finds NVIDIA PCI devices on) and, when ``spec.daemonsets.tolerations`` is set, replaces every
    operand's tolerations with it (NVIDIA/gpu-operator controllers/object_controls.go,
    applyCommonDaemonsetConfig); unset, the operands keep their own, which tolerate nvidia.com/gpu.
    """
    daemonsets = mapping(mapping(policy.get("spec")).get("daemonsets"))
    tolerations = daemonsets.get("tolerations")
    if not isinstance(tolerations, list) or not tolerations:
        return None
    target = resolver.gpu_nodes(NVIDIA)
    if not target:
        return None
    pod = pod_requirements(effective_pod_spec("DaemonSet", {"tolerations": tolerations}))
    return DaemonSetVerdict(OPERATOR_OPERANDS, pod, "NVIDIA GPU nodes", coverage(pod, target))


# The GPU operator takes a node for a GPU node (labels it nvidia.com/gpu.present and nvidia.com/gpu.deploy.<operand>,
# which its operands select) when node-feature-discovery found an NVIDIA PCI device on it, or when it is labelled
# nvidia.com/gpu.present=true (NVIDIA/gpu-operator controllers/state_manager.go gpuNodeLabels, hasGPULabels,
# hasCommonGPULabel); the chart deploys NFD itself unless nfd.enabled is false.
NFD_LABEL_PREFIX = "feature.node.kubernetes.io/"
NFD_GROUPS = ("nfd.k8s-sigs.io", "nfd.openshift.io")  # NodeFeatureRule, NodeFeatureDiscovery (the NFD operator)
GITOPS_RELEASES = ("HelmRelease", "Application")  # a chart installed from Git may bring NFD with it


def operator_nodes_unlabelled(resolver: Resolver) -> list[NodeInfo]:
    """The NVIDIA GPU nodes (by their labels, or their instance type in the catalog) the GPU operator will not take
    for GPU nodes: they publish no NVIDIA resource, carry no node-feature-discovery label at all (NFD never ran
    there) nor nvidia.com/gpu.present=true, and node-feature-discovery runs nowhere: the inventory lists the
    cluster's DaemonSets (a complete catalog: a chart installed with the operator, as nfd.enabled does by default,
    would be there) and neither they nor the linted files run an NFD worker, and no NFD object or GitOps release
    that may install it is linted. Empty when any of that is not so."""
    if not resolver.lists("DaemonSet"):
        return []  # the cluster's DaemonSets unknown: NFD may come with the operator's chart
    unlabelled = [
        node
        for node in resolver.gpu_nodes(NVIDIA)
        if not advertises_gpus(node, NVIDIA)
        and node.labels.get("nvidia.com/gpu.present") != "true"
        and not any(key.startswith(NFD_LABEL_PREFIX) for key in node.labels)
    ]
    if not unlabelled:
        return []
    if any(stack_component(spec) is NFD_WORKER for spec in resolver.daemon_specs):
        return []
    if any(obj.ref.group in NFD_GROUPS or obj.kind in GITOPS_RELEASES for obj in resolver.linted):
        return []
    return unlabelled


@dataclass(frozen=True)
class PoolBlock:
    """A node pool whose new GPU nodes carry a taint the GPU infrastructure's pods do not tolerate."""

    pool: NodePool
    taint: Taint


@dataclass(frozen=True)
class DaemonCoverage:
    """Where one DaemonSet pod template runs, as daemonset-coverage judges it and `explain` shows it: the nodes
    it is expected on, and the node pools whose new GPU nodes it never reaches."""

    verdict: DaemonSetVerdict | None  # None: no node it is expected on, or no node selection to read intent from
    component: StackComponent | None  # the GPU infrastructure it runs
    blocks: tuple[PoolBlock, ...]  # the pools, leaving out a taint the nodes' verdict names already
    refuses: bool  # pools_refuse: a blocked pool is an error
    runtime: RuntimeClassPlacement | None = None  # its RuntimeClass's scheduling, which the controller never sees


@dataclass(frozen=True)
class RuntimeClassPlacement:
    """A DaemonSet whose RuntimeClass has a scheduling section. The DaemonSet controller decides which nodes get a
    pod from the pod template alone (kubernetes/kubernetes pkg/controller/daemon daemon_controller.go
    NodeShouldRunDaemonPod), and the RuntimeClass admission plugin merges the class's nodeSelector and tolerations
    into each pod only when it is created (kubernetes#111590)."""

    name: str  # the RuntimeClass
    pending: tuple[NodeInfo, ...]  # nodes the controller makes a pod for that the class's nodeSelector excludes
    skipped: tuple[NodeInfo, ...]  # nodes only the class's tolerations admit: the controller makes no pod there


def runtime_class_placement(kind: str, spec: dict[str, Any], resolver: Resolver) -> RuntimeClassPlacement | None:
    """None without a RuntimeClass with scheduling, or when the API server rejects every pod (a conflict:
    runtime-class-unknown says so)."""
    name = spec.get("runtimeClassName")
    runtime_class = resolver.runtime_classes.get(name) if isinstance(name, str) else None
    scheduling = mapping(mapping(runtime_class).get("scheduling"))
    if runtime_class is None or not (scheduling.get("nodeSelector") or scheduling.get("tolerations")):
        return None
    admitted = admit(spec, runtime_class)
    if admitted.conflict:
        return None
    made = coverage(daemon_pod(kind, spec, resolver), resolver.nodes).runs
    merged = _scheduled_daemon_pod(kind, admitted.spec, resolver)
    pending = tuple(node for node in made if not selects(merged, node))
    skipped = tuple(node for node in coverage(merged, resolver.nodes).runs if node not in made)
    return RuntimeClassPlacement(str(name), pending, skipped)


def pools_refuse(component: StackComponent, resolver: Resolver) -> bool:
    """A pool the component never reaches keeps the GPUs it adds unadvertised, on a cluster the inventory vouches
    for (not pools read from files assumed to be this cluster's): daemonset-coverage's error."""
    return component.advertises and not resolver.cluster_assumed


def describe_taint(taint: Taint) -> str:
    """A taint as ``kubectl taint`` writes it: key=value:Effect."""
    return taint_text(taint.key, taint.value, taint.effect)


def daemon_coverage(kind: str, site: PodSpecSite, resolver: Resolver) -> DaemonCoverage:
    """A DaemonSet pod template against the nodes and, for GPU infrastructure, the node pools."""
    verdict = daemonset_verdict(kind, site, resolver)
    component = stack_component(site.spec)
    runtime = runtime_class_placement(kind, site.spec, resolver) if kind == "DaemonSet" else None
    if runtime is not None and verdict is not None:  # one cause, one finding: the coverage names its taints
        told = verdict.coverage.blocked_nodes()
        runtime = replace(runtime, skipped=tuple(node for node in runtime.skipped if node not in told))
    if component is None or not resolver.pools:
        return DaemonCoverage(verdict, component, (), False, runtime)
    pod = verdict.pod if verdict is not None else daemon_pod(kind, site.spec, resolver)
    reported = set(verdict.coverage.blocked) if verdict is not None else set()
    blocks = tuple(block for block in blocked_pools(component, pod, resolver) if block.taint not in reported)
    return DaemonCoverage(verdict, component, blocks, pools_refuse(component, resolver), runtime)


def blocked_pools(component: StackComponent, pod: PodRequirements, resolver: Resolver) -> list[PoolBlock]:
    """The pools that add GPU nodes of the component's vendor whose taints (spec.taints; startupTaints are taken
    off once the node is ready) keep the DaemonSet's pods off them, as the DaemonSet controller decides: every
    NoSchedule/NoExecute taint must be tolerated. A pool another linted DaemonSet of the same component reaches
    is left out (one DaemonSet per pool is a common layout)."""
    found = []
    for pool in resolver.pools:
        if not _reaches_vendor(component, pool) or not may_select(pod, pool.labels):
            continue
        taint = first_untolerated(pod, pool.spec.taints)
        if taint is not None and not _reached_by_another(component, pool, resolver):
            found.append(PoolBlock(pool, taint))
    return found


def _reaches_vendor(component: StackComponent, pool: NodePool) -> bool:
    vendors = pool_vendors(pool)
    return component.vendor in vendors if component.vendor else bool(vendors)


def _reached_by_another(component: StackComponent, pool: NodePool, resolver: Resolver) -> bool:
    for obj in resolver.linted.of_kind("apps", "DaemonSet"):
        for site in obj.facts.sites():
            if stack_component(site.spec) is not component:
                continue
            pod = daemon_pod(obj.kind, site.spec, resolver)
            if may_select(pod, pool.labels) and first_untolerated(pod, pool.spec.taints) is None:
                return True
    return False


def daemon_pod(kind: str, spec: dict[str, Any], resolver: Resolver) -> PodRequirements:
    """A DaemonSet's pod as the controller decides where to make it: the template, its tolerations added, and not
    its RuntimeClass's scheduling, which joins each pod only when it is created (RuntimeClassPlacement)."""
    return _scheduled_daemon_pod(kind, spec, resolver)


def _scheduled_daemon_pod(kind: str, spec: dict[str, Any], resolver: Resolver) -> PodRequirements:
    """``spec`` (the template, or the pod its RuntimeClass admitted) with the tolerations the controller adds."""
    comparisons = resolver.gates.enabled("TaintTolerationComparisonOperators")
    return pod_requirements(effective_pod_spec(kind, spec), comparisons)


def chart_verdict(release: ChartRelease, resolver: Resolver) -> tuple[DaemonSetVerdict | None, list[PoolBlock]]:
    """The DaemonSets a GPU stack chart's values make, against the GPU nodes and the GPU pools."""
    component = release.daemons.component
    pod = pod_requirements(effective_pod_spec("DaemonSet", daemon_spec(release)))
    target = resolver.gpu_nodes(component.vendor)
    expected = f"{component.vendor} GPU nodes" if component.vendor else "GPU nodes"
    verdict = DaemonSetVerdict(component, pod, expected, coverage(pod, target)) if target else None
    return verdict, blocked_pools(component, pod, resolver) if resolver.pools else []


@dataclass(frozen=True)
class HeldDevices:
    """A linted DaemonSet whose pods ask for an accelerator: one runs on every node it selects and tolerates."""

    name: str
    pod: PodRequirements  # as the controller places it (daemon_pod)
    scheduled: PodRequirements  # as the scheduler reads it: its RuntimeClass's scheduling joined

    def lands_on(self, node: NodeInfo) -> bool:
        """The controller makes a pod for the node, and the scheduler can bind it there."""
        placed = selects(self.pod, node) and untolerated_taint(self.pod, node) is None
        return placed and selects(self.scheduled, node)


def gpu_daemons(resolver: Resolver) -> list[HeldDevices]:
    """The linted DaemonSets whose pods request an extended resource (once per run)."""
    return resolver.run_fact("gpu daemons", _gpu_daemons, resolver)


def _gpu_daemons(resolver: Resolver) -> list[HeldDevices]:
    found = []
    for obj in resolver.linted.of_kind("apps", "DaemonSet"):
        for site in obj.facts.sites():
            pod = daemon_pod("DaemonSet", site.spec, resolver)
            if any(is_extended(name) for name in pod.requests):
                scheduled = _scheduled_daemon_pod(
                    "DaemonSet", admitted_pod_spec("DaemonSet", site.spec, resolver), resolver
                )
                found.append(HeldDevices(obj.ref.name, pod, scheduled))
    return found


def operator_operand_pods(policy: dict[str, Any]) -> PodRequirements | None:
    """The operands' pods as spec.daemonsets.tolerations makes them (None: not set, each keeps its own)."""
    tolerations = mapping(mapping(policy.get("spec")).get("daemonsets")).get("tolerations")
    if not isinstance(tolerations, list) or not tolerations:
        return None
    return pod_requirements(effective_pod_spec("DaemonSet", {"tolerations": tolerations}))


# Labels every node carries: selecting on them says "Linux nodes", not "these nodes".
_PLATFORM_LABELS = frozenset(
    {"kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch"}
)


def _names_a_pool(pod: PodRequirements) -> bool:
    return bool(pod.node_name) or any(
        requirement.field or requirement.key not in _PLATFORM_LABELS for requirement in pod.requirements()
    )


def silent_gpu_nodes(resource: str, resolver: Resolver) -> str:
    """Why no node publishes an NVIDIA resource, when GFD/NFD say the GPUs are there ("" otherwise)."""
    if vendor_of_resource(resource) != NVIDIA:
        return ""
    silent = present_but_silent(resolver.nodes)
    if not silent:
        return ""
    return (
        f" {len(silent)} node{'s are' if len(silent) > 1 else ' is'} labelled nvidia.com/gpu.present=true but "
        f"advertise{'' if len(silent) > 1 else 's'} no NVIDIA GPU resource ({node_names(silent)}): the device "
        "plugin is not running or not registered there (daemonset-coverage checks its DaemonSet)."
    )


def gang_pool_bound(gang: Gang, resolver: Resolver) -> tuple[int | None, str]:
    """With node pools: an upper bound on the gang's pods that can be placed at once - each member's
    copies on the empty nodes plus the room its pools may still add (None: a pool without a known
    bound can add them) - and the pools' part, for the message. Members compete for the same nodes,
    so the sum only bounds from above: a gang past it is proven unsatisfiable."""
    total = 0
    parts: list[str] = []
    for member in gang.members:
        pod = with_extended_resource_tolerations(member.pod, resolver)
        fits = [fit for fit in pool_fits(pod, resolver) if fit.state in (FITS, UNKNOWN)]
        if any(fit.state == UNKNOWN or fit.room is None for fit in fits):
            return None, ""
        room = sum(fit.room or 0 for fit in fits)
        total += min(member.count, resolver.model.placeable(pod) + room)
        parts += [f"{fit.pool.title} may add room for {fit.room}" for fit in fits]
    return total, "; ".join(parts)


def pools_in_backoff(gang: Gang, resolver: Resolver) -> list[NodePool]:
    """The pools that would add a node for a member of the gang but add none while Cluster Autoscaler's backoff of
    their node group lasts (core/scaleup/orchestrator: "in backoff after failed scale-up")."""
    found: dict[int, NodePool] = {}
    for member in gang.members:
        for fit in pool_fits(with_extended_resource_tolerations(member.pod, resolver), resolver):
            if fit.state == LIMITED and fit.pool.group is not None and fit.pool.group.in_backoff:
                found[id(fit.pool)] = fit.pool
    return list(found.values())


HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class PoolGangVerdict:
    """A gang against the nodes and the nodes its pools can add: "unsatisfiable" (proven), "fits"
    (a placement exists, or no proof either way) or "unknown" (a pool's answer is unknown)."""

    state: str
    message: str = ""
    notes: tuple[str, ...] = ()
    layout: tuple[str, ...] = ()  # "fits": a placement, in words (Placement.layout)


def gang_with_pools(gang: Gang, resolver: Resolver) -> PoolGangVerdict:
    """The whole gang must fit at once within what the nodes hold and the pools may still add (their max
    size and limits, counting what already runs). Proven by three tests, cheapest first: the members'
    copies (each member alone), the gang's total of each resource the pools' limits bound, then packing
    onto the nodes plus the nodes each pool may add, its instance types sharing its max size and limits."""
    required = [(m, m.count) for m in gang.members if m.count]
    fits_of = {
        m.pod.signature(): pool_fits(with_extended_resource_tolerations(m.pod, resolver), resolver) for m, _ in required
    }
    if any(fit.state == UNKNOWN for fits in fits_of.values() for fit in fits):
        return PoolGangVerdict("unknown")
    bound, parts = gang_pool_bound(gang, resolver)
    if bound is not None and bound < gang.required:
        return PoolGangVerdict(
            "unsatisfiable",
            f"{gang.system} needs {gang.required} pods placed at once, but the nodes and the nodes its pools can "
            f"still add hold at most {bound} of them",
            (parts or "no pool can add a node for them",),
        )
    if gang.required >= gang.total:
        short, offers = _short_resource(gang, resolver, fits_of)
        if short:
            return PoolGangVerdict("unsatisfiable", f"{gang.system} needs {short}", offers)
    new, shown = _new_nodes(gang, resolver, fits_of)
    key = gang.topology_key if _decidable_key(gang.topology_key, new) else ""
    verdict = pack_with_new_nodes(gang, resolver.model, new, key)
    notes = (f"the pools may add: {shown}",) if shown else ()
    if verdict.unsatisfiable:
        where = f" in one {key}" if key else ""
        cause = (topology_cause(key, POOLS_WHOLE),) if key and _fits_in_all(gang, resolver, new) else ()
        return PoolGangVerdict(
            "unsatisfiable",
            f"{gang.system} needs {gang.required} pods placed at once{where}; neither the nodes nor the nodes its "
            "pools can still add hold them",
            (*notes, *cause),
        )
    fitting = verdict.fitting_domains()
    return PoolGangVerdict("fits", layout=fitting[0].layout if fitting else ())


CLUSTER_WHOLE = "the cluster as a whole could hold the gang"
POOLS_WHOLE = "the nodes and the nodes its pools can still add, across every domain, could hold the gang"


def topology_cause(key: str, whole: str) -> str:
    """The note for a gang that fits without its topology requirement: the requirement is the cause."""
    return f"the topology requirement '{key}' is the cause: {whole}"


def _fits_in_all(gang: Gang, resolver: Resolver, new: list[NewNodes]) -> bool:
    """The gang is proven to fit the nodes plus the pools' new nodes without its topology requirement."""
    return bool(pack_with_new_nodes(gang, resolver.model, new, "").fitting_domains())


def gang_pool_domains(gang: Gang, resolver: Resolver) -> GangVerdict | None:
    """With node pools: the gang per domain of its topology key on the nodes plus the new nodes the
    pools may add there (each pool may put all it adds in any one of its domains). None when a pool's
    answer is unknown or the pools' domains for the key are not known."""
    if not gang.topology_key:
        return None
    fits_of = {
        m.pod.signature(): pool_fits(with_extended_resource_tolerations(m.pod, resolver), resolver)
        for m in gang.members
        if m.count
    }
    if any(fit.state == UNKNOWN for fits in fits_of.values() for fit in fits):
        return None
    new, _ = _new_nodes(gang, resolver, fits_of)
    if not _decidable_key(gang.topology_key, new):
        return None
    return pack_with_new_nodes(gang, resolver.model, new, gang.topology_key)


def _short_resource(gang: Gang, resolver: Resolver, fits_of: dict[Any, list[PoolFit]]) -> tuple[str, tuple[str, ...]]:
    """The first resource the gang needs more of, in all, than the nodes its members can use hold plus
    what the pools may still add ("" when none), and what each offers: a pool's limit caps the capacity
    of all its new nodes."""
    demand: dict[str, Fraction] = {}
    for member in gang.members:
        for name, amount in member.pod.requests.items():
            if is_extended(name):
                demand[name] = demand.get(name, Fraction(0)) + amount * member.count
    usable = {id(n): n for m in gang.members for n in resolver.model.evaluate(m.pod).fitting}
    fitting = {id(fit.pool): fit for fits in fits_of.values() for fit in fits if fit.state == FITS}
    for name, needed in sorted(demand.items()):
        supply = sum((n.allocatable.get(name, Fraction(0)) for n in usable.values()), Fraction(0))
        offers = [f"the nodes its members can use: {format_amount(supply)}"]
        for fit in fitting.values():
            pool = fit.pool
            if name in pool.spec.limits:
                rest = max(pool.remaining()[name], Fraction(0))
                offers.append(
                    f"{pool.title}: {format_amount(rest)} under its limit {format_amount(pool.spec.limits[name])} "
                    f"({format_amount(pool.in_use(name))} in use)"
                )
            else:
                left = pool.nodes_left()
                if left is None:
                    return "", ()
                largest = max((t.allocatable.get(name, Fraction(0)) for t in fit.fitting), default=Fraction(0))
                rest = left * largest
                offers.append(f"{pool.title}: {left} more node(s) of at most {format_amount(largest)}")
            supply += rest
        if needed > supply:
            message = (
                f"{format_amount(needed)} {name} at once, but the nodes and the nodes its pools can still add "
                f"offer at most {format_amount(supply)}"
            )
            return message, tuple(offers)
    return "", ()


def _new_nodes(gang: Gang, resolver: Resolver, fits_of: dict[Any, list[PoolFit]]) -> tuple[list[NewNodes], str]:
    """The nodes each pool may still add for the gang, per instance type: each type at most as many as
    the pool's max size and limits allow (and one per pod), all its types together within them."""
    pods = sum(m.count for m in gang.members)
    by_pool: dict[int, list[tuple[Any, PoolFit]]] = {}
    for signature, fits in fits_of.items():
        for fit in fits:
            if fit.state == FITS:
                by_pool.setdefault(id(fit.pool), []).append((signature, fit))
    out: list[NewNodes] = []
    shown: list[str] = []
    for entries in by_pool.values():
        pool = entries[0][1].pool
        limit = PoolLimit(pool.nodes_left(), tuple(sorted(pool.remaining().items())))
        key = f"{pool.title}#{id(pool)}"  # its types share the limit; two pools alike in name never do
        names = list(dict.fromkeys(t.name for _, fit in entries for t in fit.fitting))
        counts: dict[str, int] = {}
        for name in names:
            template = next(t for _, fit in entries for t in fit.fitting if t.name == name)
            count = _nodes_of(pool, template, pods)
            if count <= 0:
                continue
            overhead = daemon_overhead(template, pool, resolver.daemon_pods)
            allocatable = {r: a - overhead.get(r, Fraction(0)) for r, a in template.allocatable.items()}
            if not template.exact:  # what is not known of it (cpu, memory...): never what keeps a member off it
                allocatable |= {r: UNSTATED for r in UNSTATED_NATIVE if not template.judged(r)}
            allocatable |= {r: UNSTATED for r in template.unjudged}
            takes = frozenset(s for s, fit in entries if any(t.name == name for t in fit.fitting))
            domain = template.labels.get(gang.topology_key) if gang.topology_key else None
            domains: tuple[str, ...] | None = ()
            if gang.topology_key == HOSTNAME:
                domains = None
            elif domain is not None and domain.values is not None:
                domains = tuple(domain.allowed())
            cost = {r: template.capacity.get(r, Fraction(0)) for r in pool.spec.limits}
            out.append(NewNodes(f"{pool.title}: {name}", allocatable, takes, count, domains, key, limit, cost))
            counts[name if template.instance_type else ""] = count
        parts = [f"{count} new node(s)" + (f" of {name}" if name else "") for name, count in counts.items()]
        if parts:
            together = " (all together within its max size and limits)" if len(parts) > 1 else ""
            shown.append(f"{pool.title}: {', '.join(parts)}{together}")
    return out, "; ".join(shown)


# What a node of a type whose cpu and memory the catalog does not state (a GKE type, a pool stating only
# its accelerators) holds of them, for packing: more than any gang asks.
UNSTATED = Fraction(10**18)
UNSTATED_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods")


def _nodes_of(pool: NodePool, template: Template, pods: int) -> int:
    """Nodes of one type the pool may still add: its max size and its limits (never more than ``pods``)."""
    count = pods
    left = pool.nodes_left()
    if left is not None:
        count = min(count, left)
    for resource, rest in pool.remaining().items():
        per_node = template.capacity.get(resource, Fraction(0))
        if per_node > 0:
            count = min(count, int(max(rest, Fraction(0)) // per_node))
    return count


def _decidable_key(key: str, new: list[NewNodes]) -> bool:
    """The topology key's domains are known for every new node (a finite list, or each node its own)."""
    return bool(key) and all(n.domains is None or n.domains for n in new)


def emptied_offers(inventory: Resolver) -> frozenset[str]:
    """What the pools whose requirements leave no catalogued type would offer without the requirement that
    empties them: a resource only they could offer is missing for that reason (gpu-unschedulable words it,
    gpu-resource-unknown leaves it)."""
    return frozenset(name for pool in inventory.pools if pool.filtered_out for name in pool.emptied_offers)


def spread_limits(
    obj_data: dict[str, Any], site: PodSpecSite, pod: PodRequirements, fitting: list[NodeInfo], inventory: Resolver
) -> list[SpreadBound]:
    """The hard topology spreads over the workload's own pods that let fewer of them run than it makes
    (kube/topology_spread): a domain they count where no node can hold one caps every other at maxSkew.
    ``fitting``: the nodes where the pod passes every filter on the empty cluster. gpu-unschedulable's
    warning and explain's step."""
    if not site.pods or site.pods < 2:
        return []
    labels = mapping(mapping(dig(obj_data, *site.template_path, "metadata")).get("labels"))
    found = []
    for constraint in own_hard_constraints(site.spec, labels):
        bound = spread_bound(constraint, pod, inventory.nodes, inventory.model.matching_affinity(pod), fitting)
        if bound is not None and bound.most < site.pods:
            found.append(bound)
    return found


def grows_any(fits: list[PoolFit]) -> bool:
    """A pool may add a node for the pod (or whether one can is unknown)."""
    return any(fit.state in (FITS, UNKNOWN) for fit in fits)
