"""`gpulint explain`: why would this pod be Pending? Answered in the order operators diagnose it.

Before the scheduler: the queue and quota, the RuntimeClass. Then 1. resource name and count,
2. capacity vs allocatable, 3. node affinity and taints (a per-node table, identical nodes once
with a count; a DaemonSet's coverage of the nodes it must run on), the node pools, 4. DRA, the GPU
visibility variables, 5. gang and topology, then the scheduler's own summary and the kubectl
commands that confirm it live. Each step words the verdict the rules word (lint/verdicts/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from gpulint.lint.config import Config
from gpulint.lint.engine import with_runtime
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.device_filters import (
    GPU_MEMORY_LABEL,
    KAI_GPU_MEMORY,
    KAI_GPU_MEMORY_REFUSAL,
    SHARED_REFUSAL,
    GpuMemoryVerdict,
    MigMixture,
    SharedRequest,
    VgpuExcess,
    gpu_memory_verdict,
    sharing_verdict,
    vgpu_excesses,
)
from gpulint.lint.verdicts.pod_affinity import PodAffinityVerdict, pod_affinity_verdict
from gpulint.lint.verdicts.queues import (
    admission_verdict,
    batch_queue_problems,
    kai_limit_problems,
    kueue_config_problems,
    pod_group_problems,
    queue_route,
    quota_charges,
    uncharging_quotas,
    volcano_capability_problems,
)
from gpulint.lint.verdicts.refusal import NOT_SCHEDULED, Refusal, object_refusal
from gpulint.lint.verdicts.runtime_classes import RuntimeClassVerdict, site_runtime_class_verdict
from gpulint.lint.verdicts.scheduling import (
    WORK_BUDGET,
    GangAnswer,
    LoneDomain,
    PodSpecSite,
    SchedulingVerdict,
    SiteDetail,
    claim_verdict,
    dra_verdict,
    format_amount,
    gang_answers,
    lone_domain,
    pod_sites,
    pool_answer,
    scheduling_verdict,
    site_detail,
    template_labels,
)
from gpulint.lint.verdicts.shared import (
    DaemonCoverage,
    daemon_coverage,
    describe_gang,
    describe_scale_up,
    describe_taint,
    gang_detail,
    grows_any,
    kueue_admitted,
    kueue_pins,
    role_pods,
    spread_limits,
)
from gpulint.lint.verdicts.visibility import (
    CUDA_IDLE,
    CUDA_IMAGE,
    CUDA_OUT_OF_RANGE,
    CUDA_UUIDS,
    HIDES_GPUS,
    IGNORED_ENVVAR,
    MIG_DEVICES,
    PRIVILEGED_SEES_ALL,
    REPLACES_GPUS,
    UNCOUNTED_GPUS,
    VisibilityProblem,
    envvar_gate,
    visibility_problems,
)
from gpulint.lint.world.config_maps import held_config_maps
from gpulint.lint.world.inventory import GANG_OBJECT_KINDS
from gpulint.lint.world.resolver import Resolver

OK, FAIL, INFO = "ok", "FAIL", "info"
EXPLAIN_JSON_VERSION = 1  # bumped when the shape of `explain --format json` changes
NO_GANG = "no gang: pods are placed one by one"
NO_EXTENDED = "no extended resources requested"


@dataclass
class Step:
    title: str
    status: str
    lines: list[str] = field(default_factory=list)


@dataclass
class SiteExplanation:
    heading: str
    steps: list[Step]
    table: list[tuple[str, int, str]]  # nodes, count, result
    summary: str
    commands: list[str]


def object_matches(obj: KubeObject, selector: str | None) -> bool:
    """``--object`` is KIND/NAME or KIND/NAMESPACE/NAME (kind case-insensitive)."""
    if not selector:
        return True
    parts = selector.split("/")
    if len(parts) == 2:
        kind, name, namespace = parts[0], parts[1], None
    elif len(parts) == 3:
        kind, namespace, name = parts
    else:
        return False
    return (
        obj.kind.lower() == kind.lower()
        and obj.ref.name == name
        and (namespace is None or obj.ref.namespace == namespace)
    )


def _names(nodes: tuple[str, ...], limit: int = 3) -> str:
    more = f" (+{len(nodes) - limit})" if len(nodes) > limit else ""
    return ", ".join(nodes[:limit]) + more


def explain_site(
    obj: KubeObject,
    site: PodSpecSite,
    inventory: Resolver,
    gang: Step | None = None,
    admission: Step | None = None,
    as_written: PodSpecSite | None = None,
    gpu_resources: tuple[str, ...] = (),
    refusal: Refusal | None = None,
) -> SiteExplanation:
    """One pod template as it starts (``as_written``: before Kueue's pins, when they apply); ``refusal``: the
    object's create is refused (its admission verdict), so the pod is not scheduled at all."""
    verdict = scheduling_verdict(obj.kind, site, inventory, as_written, namespace=obj.ref.namespace)
    detail = site_detail(verdict, inventory, obj.document.path)
    pod, result = verdict.pod, verdict.fit
    role = f", '{site.role}' pod template" if site.role else ""
    count = "" if site.pods is None else f" ({site.pods} pod{'s' if site.pods != 1 else ''})"
    heading = f"{obj.ref.display()}{role}{count}"
    steps: list[Step] = [admission] if admission is not None else []
    if refusal is not None:
        steps.insert(0, _refusal_step(refusal))
    runtime = site_runtime_class_verdict(obj, site, inventory)
    if runtime is not None:
        steps.append(_runtime_class_step(runtime))
    steps.append(_resources_step(verdict, detail, site, bool(inventory.pools)))
    memory = gpu_memory_verdict(obj, site, inventory)  # as gpu-unschedulable judges it: the pod as it starts
    vgpus = vgpu_excesses(obj.kind, as_written or site, inventory, obj.facts)  # as gpu-sharing: as written
    sharing = sharing_verdict(obj.kind, as_written or site, inventory, obj.facts)  # as gpu-sharing: as written
    shares = sharing.shared
    capacity = _shared_units(_device_filters(_capacity_step(verdict, detail, site), memory, vgpus), shares)
    steps.append(_mig_mixture(capacity, sharing.mixture))

    # 3. affinity and taints
    excluded = detail.excluded
    lines = [
        f"{len(pod.requirements())} required node selection term(s); {excluded.affinity} node(s) excluded by "
        f"affinity/selector, {excluded.taints} by untolerated taints, {excluded.other} cordoned or not the named node"
    ]
    limited = verdict.selection_limits  # over-tight-affinity's warning: the selection keeps pods Pending
    if limited is not None:
        lines.append(
            f"the nodes its required node affinity/selector allows hold only {limited[0]} of the workload's "
            f"{site.pods} pods on the empty cluster; {limited[1]} would fit without it"
        )
    blocked = not result.fits and not verdict.scales_up and (excluded.affinity or excluded.taints)
    steps.append(Step("Node affinity and taints", FAIL if blocked or limited is not None else OK, lines))
    affinity = pod_affinity_verdict(obj, site, inventory, result)  # as gpu-unschedulable judges it
    if affinity is not None:
        steps.append(_pod_affinity_step(affinity))
    if obj.kind == "DaemonSet" and obj.ref.group == "apps":
        steps.append(_coverage_step(daemon_coverage(obj.kind, site, inventory)))
    if inventory.pools or verdict.pools:
        steps.append(_pools_step(verdict, obj.kind))
    spreads = spread_limits(obj.data, site, pod, result.fitting, inventory) if result.fits else []
    if spreads and not grows_any(list(verdict.pools)):  # as gpu-unschedulable
        steps.append(
            Step(
                "Topology spread",
                FAIL,
                [
                    f"maxSkew {b.constraint.max_skew} over {b.constraint.key} counts {', '.join(b.empty)}, where no "
                    f"node can hold a pod: at most {b.most} of the {site.pods} pods run "
                    f"({b.constraint.max_skew} in each of {', '.join(b.holding)})"
                    for b in spreads
                ],
            )
        )

    steps.append(_dra_step(obj, site, inventory, verdict))
    problems = visibility_problems(
        obj, site, gpu_resources, lambda ns: held_config_maps(inventory, ns), inventory, envvar_gate(inventory.linted)
    )
    if problems:  # gpu-visibility-override's warnings: the pod runs, with other GPUs than it was given
        steps.append(Step("GPU visibility", INFO, [_VISIBILITY[p.kind](p) for p in problems]))
    steps.append(gang or _gang_step(obj, inventory))

    table = [(_names(row.nodes), len(row.nodes), row.result) for row in detail.rows]
    summary = (
        f"{len(result.fitting)}/{result.total} nodes pass every filter"
        if result.fits
        else verdict.cause.reason + verdict.cause.hint
    )
    if affinity is not None and affinity.blocked:
        summary = affinity.fit.summary()
    refusals = (
        ([KAI_GPU_MEMORY_REFUSAL] if memory is not None else [])
        + [excess.refusal for excess in vgpus]
        + [f"{SHARED_REFUSAL} (UnexpectedAdmissionError)" for request in shares if _refused(request)]
    )
    if result.fits and refusals:  # the kube-scheduler's filters pass, the GPU-sharing scheduler's do not
        summary += f" of the kube-scheduler, but {refusals[0]}"
    best = verdict.scale_up()
    if not result.fits and best is not None:
        summary += f" Then {describe_scale_up(best)}; the pod waits until the node is ready."
    if refusal is not None:  # no pod exists to schedule: what follows judges it as if the object were admitted
        summary = f"{NOT_SCHEDULED}: {refusal.words()}"
    return SiteExplanation(heading, steps, table, summary, _commands(obj, site, detail))


def _runtime_class_step(verdict: RuntimeClassVerdict) -> Step:
    """Before the scheduler: the RuntimeClass admission plugin (runtime-class-unknown's verdict)."""
    title = "RuntimeClass"
    given = [f"{verdict.injected_by} gives the pod runtimeClassName {verdict.name}"] if verdict.injected_by else []
    if verdict.missing:
        close = verdict.close()
        return Step(
            title,
            FAIL,
            [
                *given,
                f'pod rejected: RuntimeClass "{verdict.name}" not found'
                + (f" (did you mean {close}?)" if close else ""),
                f"RuntimeClasses in the cluster: {', '.join(verdict.known or ()) or 'none'}",
            ],
        )
    if verdict.admitted is None:
        return Step(
            title,
            INFO,
            [
                *given,
                f"RuntimeClass {verdict.name}: not in the inventory, which does not list every RuntimeClass: "
                "whether it exists is not known",
            ],
        )
    if verdict.conflict:
        return Step(title, FAIL, [*given, f"pod rejected: {verdict.conflict}"])
    return Step(title, OK, [*given, f"RuntimeClass {verdict.name} exists; its scheduling and overhead join the pod"])


_VISIBILITY: dict[str, Callable[[VisibilityProblem], str]] = {
    HIDES_GPUS: lambda p: (
        f"container '{p.container}' asks for {p.gpus} {p.resource}, but NVIDIA_VISIBLE_DEVICES={p.written}"
        f"{p.origin} exposes none of them"
    ),
    REPLACES_GPUS: lambda p: (
        f"container '{p.container}': NVIDIA_VISIBLE_DEVICES={p.value}{p.origin}, set by hand, replaces the GPUs "
        "the device plugin allocated"
    ),
    UNCOUNTED_GPUS: lambda p: (
        f"container '{p.container}' takes its GPUs from {p.given_by}, but NVIDIA_VISIBLE_DEVICES={p.value}{p.origin} "
        "replaces them, or shows it GPUs the scheduler does not count where they give none"
        if p.given_by
        else f"container '{p.container}' requests no GPU, but NVIDIA_VISIBLE_DEVICES={p.value}{p.origin} shows it "
        "GPUs the scheduler does not count"
    ),
    CUDA_UUIDS: lambda p: (
        f"container '{p.container}': CUDA_VISIBLE_DEVICES{p.origin} names devices by UUID, usually not those "
        "allocated to it"
    ),
    CUDA_OUT_OF_RANGE: lambda p: (
        f"container '{p.container}': CUDA_VISIBLE_DEVICES={p.value}{p.origin} names index {p.first_missing}, past "
        f"its {p.gpus} GPU{'s' if p.gpus > 1 else ''}: the process gets {p.usable}"
    ),
    CUDA_IDLE: lambda p: (
        f"container '{p.container}': CUDA_VISIBLE_DEVICES={p.value}{p.origin} shows {p.shown} of its {p.gpus} "
        "GPUs: the others stay idle"
    ),
    CUDA_IMAGE: lambda p: (
        f"container '{p.container}' requests no GPU, but {p.reason} and runs a CUDA image ({p.image}): it sees "
        "every GPU of the node"
    ),
    IGNORED_ENVVAR: lambda p: (
        f"container '{p.container}' {f'takes its GPUs from {p.given_by}' if p.given_by else 'requests no GPU'}; "
        f"NVIDIA_VISIBLE_DEVICES={p.value}{p.origin} is ignored by the toolkit (ClusterPolicy {p.policy}): "
        f"{'it gets only the GPUs they request' if p.given_by else 'it gets no GPU'}"
    ),
    PRIVILEGED_SEES_ALL: lambda p: (
        f"container '{p.container}' holds {p.gpus} {p.resource} but is privileged: on {p.nodes} ({p.most}) it sees "
        "every GPU of the node"
    ),
    MIG_DEVICES: lambda p: (
        f"container '{p.container}' asks for {p.gpus} MIG devices ({p.value}): "
        + ("it sees one profile's devices only" if p.most > 1 else "CUDA runs on one of them")
    ),
}


def _resources_step(verdict: SchedulingVerdict, detail: SiteDetail, site: PodSpecSite, pools: bool) -> Step:
    """1. resource names and counts"""
    extended = verdict.extended
    lines = [
        "effective pod request: "
        + (", ".join(f"{n} {format_amount(a)}" for n, a in sorted(verdict.pod.requests.items())) or "nothing")
    ]
    if site.completed_by:  # the checks that need the whole pod stayed silent: say why
        lines.append(f"not all of the pod is known here: {site.completed_by} supplies part of it")
    nothing = "no node publishes it, no node pool offers it" if pools else "no node publishes it"
    if detail.unproven:  # gpu-resource-unknown's warning: the inventory cannot tell
        lines += [
            f"{name}: {nothing}; the inventory cannot tell whether it exists: {detail.unproven}"
            for name in detail.unknown
        ]
    else:
        lines += [f"{name}: {nothing} and no DeviceClass backs it" for name in detail.unknown]
    lines += [
        f"{name}: a {plugin} share: {plugin}'s scheduler extender accounts for it; nodes do not publish it"
        for name, plugin in detail.shares
    ]
    lines += [
        f"{name}: {format_amount(extended[name])} is not a whole number (the API server rejects it)"
        for name in detail.fractional
    ]
    proven_unknown = detail.unknown and not detail.unproven
    status = FAIL if proven_unknown or detail.fractional else INFO if detail.shares or detail.unknown else OK
    return Step("Resource names and counts", status, lines)


def _capacity_step(verdict: SchedulingVerdict, detail: SiteDetail, site: PodSpecSite) -> Step:
    """2. capacity vs allocatable"""
    lines = []
    status = OK
    for row in detail.capacity:
        if row.by_dra:
            lines.append(
                f"{row.resource}: asks {format_amount(row.asked)}; served by DRA (a DeviceClass's "
                "extendedResourceName): see the DRA step"
            )
            continue
        if row.extender:
            lines.append(
                f"{row.resource}: asks {format_amount(row.asked)}; {row.extender}'s scheduler extender accounts "
                "for it on the nodes the other filters pass (the kube-scheduler ignores it)"
            )
            continue
        added = (
            f"; the largest node a pool can add offers {format_amount(row.largest_new[0])} ({row.largest_new[1]})"
            if row.largest_new
            else ""
        )
        lines.append(
            f"{row.resource}: asks {format_amount(row.asked)}; largest node capacity {format_amount(row.capacity)}, "
            f"allocatable {format_amount(row.allocatable)}, free now {format_amount(row.free)}{added}"
        )
        if row.asked > row.allocatable and not verdict.scales_up:
            status = FAIL
    placed = verdict.placeable
    if placed is not None and site.pods and placed < site.pods:  # the same count gpu-unschedulable judges
        status = FAIL
        lines.append(
            f"the workload runs {site.pods} of these pods, but only {placed} fit on the empty cluster "
            f"at once; the other {site.pods - placed} would stay Pending"
        )
    return Step("Capacity vs allocatable", status, lines or [NO_EXTENDED])


def _device_filters(step: Step, memory: GpuMemoryVerdict | None, vgpus: Sequence[VgpuExcess]) -> Step:
    """The capacity step with the filters a GPU-sharing scheduler adds on the nodes the others pass: KAI's
    GPU-memory label (gpu-unschedulable's verdict), HAMi's and Volcano's device count (gpu-sharing's)."""
    lines = [] if memory is None and not vgpus else [line for line in step.lines if line != NO_EXTENDED]
    if memory is not None:
        usable = len(memory.usable)
        lines.append(
            f"{KAI_GPU_MEMORY}: asks {memory.asked} MiB of a GPU; KAI Scheduler places it only on a node labelled "
            f"{GPU_MEMORY_LABEL}, and none of the {usable} node{'s' if usable != 1 else ''} the other filters "
            f"pass has the label ({_names(memory.usable)}): {KAI_GPU_MEMORY_REFUSAL}"
        )
    for excess in vgpus:
        _, most = excess.most
        lines.append(
            f"container '{excess.container}': asks {excess.amount} {excess.resource}; {most.scheduler} gives a "
            f"container at most one of each physical GPU, and the nodes it can use have at most {most.devices}: "
            f"{excess.refusal}"
        )
    return Step(step.title, FAIL, lines) if lines else step


def _refused(request: SharedRequest) -> bool:
    """The device plugin refuses the container on every node it can use (gpu-sharing's error)."""
    return request.refused is True and request.everywhere


def _shared_units(step: Step, shares: Sequence[SharedRequest]) -> Step:
    """The capacity step with the containers asking for several units of a time-sliced or MPS share: refused
    by the device plugin (failRequestsGreaterThanOne), or more units that are not more GPU."""
    if not shares:
        return step
    lines, status = [line for line in step.lines if line != NO_EXTENDED], step.status
    for request in shares:
        where = (
            "every node it can use"
            if request.everywhere
            else f"{len(request.shared)} of the {request.usable} nodes it can use "
            f"({_names(tuple(node.name for node in request.shared))})"
        )
        head = f"container '{request.container}': asks {request.amount} {request.resource}; on {where} it is {request.unit}"
        if _refused(request):
            status = FAIL
            lines.append(f"{head}: {SHARED_REFUSAL}: {request.admission_error}")
        else:
            status = INFO if status == OK else status
            lines.append(f"{head}: the units may be replicas of one physical GPU, no more GPU than 1 is guaranteed")
    return Step(step.title, status, lines)


def _mig_mixture(step: Step, mixture: MigMixture | None) -> Step:
    """The capacity step with gpu-sharing's MIG mixture: which GPU the pod gets depends on where it lands."""
    if mixture is None:
        return step
    slices = _names(tuple(node.name for node in mixture.slices))
    whole = _names(tuple(node.name for node in mixture.whole))
    line = (
        f"nvidia.com/gpu is a MIG slice on {len(mixture.slices)} of the nodes it can use ({slices}) and "
        f"{mixture.whole_unit} on {len(mixture.whole)} ({whole}): where it lands decides which it gets"
    )
    return Step(step.title, INFO if step.status == OK else step.status, [*step.lines, line])


def _coverage_step(covered: DaemonCoverage) -> Step:
    """Where a DaemonSet's pods run (daemonset-coverage's verdict): the nodes it is expected on, and for GPU
    infrastructure the node pools whose new GPU nodes it never reaches."""
    verdict, component = covered.verdict, covered.component
    named = f" ({component.name})" if component is not None else ""
    lines, status = [], OK
    if verdict is None:
        lines.append(
            f"GPU infrastructure{named}: the inventory has no GPU node of its vendor"
            if component is not None
            else "runs no GPU infrastructure, and its node selection names no nodes it misses: nothing it must run on"
        )
    else:
        cover = verdict.coverage
        lines.append(f"runs on {len(cover.runs)} of {len(cover.target)} {verdict.expected}{named}")
        for taint, count in cover.taints_by_count():
            lines.append(
                f"{count} carry the untolerated taint {describe_taint(taint)} ({_names(tuple(node.name for node in cover.blocked[taint]))})"
            )
        if cover.outside_selection:
            lines.append(
                f"{len(cover.outside_selection)} are outside its nodeSelector/required node affinity "
                f"({_names(tuple(node.name for node in cover.outside_selection))})"
            )
        if cover.blocked:
            status = FAIL if verdict.reaches_none else INFO
        elif verdict.selects_none:
            status = INFO
    for block in covered.blocks:
        lines.append(
            f"{block.pool.title} adds GPU nodes with the untolerated taint {describe_taint(block.taint)}: it never runs there"
        )
        status = FAIL if covered.refuses else INFO if status == OK else status
    runtime = covered.runtime
    if runtime is not None and runtime.pending:  # daemonset-coverage's error
        lines.append(
            f"the controller makes pods on {len(runtime.pending)} node(s) RuntimeClass {runtime.name}'s "
            f"scheduling.nodeSelector excludes ({_names(tuple(node.name for node in runtime.pending))}): "
            "they stay Pending"
        )
        status = FAIL
    if runtime is not None and runtime.skipped:  # its warning
        lines.append(
            f"the controller makes no pod on {len(runtime.skipped)} node(s) only RuntimeClass {runtime.name}'s "
            f"scheduling.tolerations admit ({_names(tuple(node.name for node in runtime.skipped))}): it checks "
            "the template's tolerations"
        )
        status = INFO if status == OK else status
    return Step("DaemonSet coverage", status, lines)


def _pools_step(verdict: SchedulingVerdict, kind: str) -> Step:
    """What each node pool would do for the pod: add a node (which type), never, limited, unknown."""
    if kind == "DaemonSet":
        return Step(
            "Node pools", OK, ["a DaemonSet's pods run on the nodes that exist; they never make a pool add one"]
        )
    lines = []
    for fit in verdict.pools:
        state, why = pool_answer(fit)
        lines.append(
            f"{fit.pool.title}: {state}: {why}" if state else f"{describe_scale_up(fit)}: fits after a scale-up"
        )
    if verdict.fit.fits or verdict.scales_up:
        status = OK
    elif verdict.scale_up_doubtful:
        status = INFO
    else:
        status = FAIL
    return Step("Node pools", status, lines)


def _gang_step(obj: KubeObject, inventory: Resolver) -> Step:
    answers = gang_answers(obj, inventory)
    if not answers:
        return Step("Gang and topology", OK, [NO_GANG])
    lines: list[str] = []
    status = OK
    for answer in answers:
        gang = answer.gang
        where = f" in one {gang.topology_key}" if gang.topology_key else ""
        lines.append(f"{gang.system}: {gang.required} of {gang.total} pods at once{where}")
        lone = lone_domain(gang, inventory, packed=answer.packed)  # over-tight-topology's warning
        if answer.packed is None:  # the nodes that can exist: gang-unsatisfiable's verdict
            status = _lone_domain(lone, lines, _gang_with_pools(answer, lines, status))
            continue
        result = answer.packed
        if result.main is None:
            lines.append("  which members must run together is not determined: not evaluated")
            status = _lone_domain(lone, lines, status)
            continue
        fitting = result.fitting_domains()
        if result.unsatisfiable:
            status = FAIL
            lines.append(f"  cannot be placed: {describe_gang(gang, result, gang.topology_key)}")
            lines.extend(f"    {detail}" for detail in gang_detail(gang, result, gang.topology_key))
        elif result.undecided:  # neither proven: said, never a failure
            status = INFO if status == OK else status
            lines.append(f"  could not decide within the work budget ({WORK_BUDGET:,} search steps) whether it fits")
        elif fitting:
            names = ", ".join(p.domain or "the cluster" for p in fitting[:5])
            lines.append(f"  fits in {len(fitting)} domain(s): {names}")
            where = f" in {fitting[0].domain}" if fitting[0].domain else ""
            lines.extend(f"    a placement{where}: {line}" for line in fitting[0].layout)
        status = _lone_domain(lone, lines, status)
        best = result.best()
        if gang.topology_key and result.unsatisfiable and best is not None:
            lines.append(
                f"  to make it fit: at most {best.placeable} {role_pods(result.main.role)} per domain, "
                f"smaller pods, or a wider topology than {gang.topology_key}"
            )
    return Step("Gang and topology", status, lines)


def _lone_domain(lone: LoneDomain | None, lines: list[str], status: str) -> str:
    """over-tight-topology's warning, said (never a failure) after the gang's verdict."""
    if lone is None:
        return status
    lines.append(
        f"  only {lone.key}={lone.domain} can host the whole gang ({lone.domains} domains exist); any failure "
        "there blocks it"
    )
    if lone.with_pools:
        lines.append(f"  the {lone.key} domains include those its node pools can add nodes in")
    return INFO if status == OK else status


def _gang_with_pools(answer: GangAnswer, lines: list[str], status: str) -> str:
    verdict = answer.with_pools
    assert verdict is not None
    if verdict.state == "unsatisfiable":
        lines += [f"  cannot be placed: {verdict.message}", *(f"  {note}" for note in verdict.notes)]
        return FAIL
    if verdict.state == "unknown":
        lines.append(
            "  a node pool's instance types are not in the node catalog, or no source vouches for them: not evaluated"
        )
        return INFO if status == OK else status
    lines.append("  fits on the nodes and the nodes its pools can still add")
    lines.extend(f"    a placement: {line}" for line in verdict.layout)
    return status


def _pod_affinity_step(verdict: PodAffinityVerdict) -> Step:
    """InterPodAffinity, after the node filters: where the pods its required pod affinity names can run."""
    if verdict.missing_key:  # the terms JobSet's pod webhook gives a leader pod: no node carries their key
        lines = [
            f"JobSet's pod webhook gives each Job's leader pod a required pod affinity and anti-affinity over "
            f"{verdict.missing_key} (exclusive-topology), which no node the pod fits on carries",
            verdict.fit.summary(),
        ]
        return Step("Inter-pod affinity", FAIL, lines)
    if verdict.lws is not None:  # the term LWS's pod webhook gives the workers: no domain shared with the leader
        shared = verdict.lws.shared
        lines = [
            f"LWS's pod webhook gives {shared.who} a required pod affinity over {shared.key} ({shared.name}); "
            f"the leader ({verdict.peers_text()}) can run on {verdict.peer_nodes_text()}, with "
            f"{', '.join(verdict.lws.leader_values)}, the workers fit only where it is "
            f"{', '.join(verdict.lws.worker_values)}",
            verdict.fit.summary(),
        ]
        return Step("Inter-pod affinity", FAIL, lines)
    lines = [
        f"{len(verdict.terms)} required pod affinity term(s) over {verdict.topology()}; the linted pods they match: "
        f"{verdict.peers_text()}, which can run on {verdict.peer_nodes_text()}",
    ]
    passing = verdict.fit.fitting_count
    if passing:
        lines.append(f"{passing} node(s) that pass the other filters share a domain with one of them")
        return Step("Inter-pod affinity", OK, lines)
    lines.append(verdict.fit.summary())
    return Step("Inter-pod affinity", FAIL, lines)


def _dra_step(obj: KubeObject, site: PodSpecSite, inventory: Resolver, verdict: SchedulingVerdict) -> Step:
    dra = dra_verdict(obj, site, inventory, verdict.fit)
    if dra is None:
        return Step("DRA claims", OK, ["no resource claims"])
    lines = [f"{dra.entries} resource claim(s); {dra.found} found in the linted files or the inventory"]
    if dra.absent:  # device-class-unknown's error: the allocator is not asked
        return Step("DRA claims", FAIL, [*lines, *_absent_classes(dra.absent)])
    if not dra.evaluated:
        lines.append("no ResourceSlices in the inventory: allocation not evaluated")
        return Step("DRA claims", INFO, lines)
    lines += rejected_inventory(inventory)
    if dra.error is not None:  # claim-unsatisfiable's error: the attempt fails on that node, whatever others offer
        lines.append(dra.error)
        return Step("DRA claims", FAIL, lines)
    if dra.fitting:
        lines.append(
            f"the claims can be allocated on {dra.fitting} of the {dra.allowed} nodes that pass the other filters"
        )
        taken = dra.subrequests()
        return Step("DRA claims", OK, [*lines, *([taken] if taken else [])])
    if dra.unknown is not None:
        lines.append(f"allocation not evaluated: {dra.unknown}")
        return Step("DRA claims", INFO, lines)
    lines.append(dra.reason or "no node that passes the other filters publishes devices")
    return Step("DRA claims", FAIL, lines)


def _commands(obj: KubeObject, site: PodSpecSite, detail: SiteDetail) -> list[str]:
    namespace = f" -n {obj.ref.namespace}" if obj.ref.namespace else ""
    commands = [f"kubectl get events{namespace} --field-selector reason=FailedScheduling"]
    labels = template_labels(obj, site)
    if labels:
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        commands.append(f"kubectl describe pods{namespace} -l {selector}")
    elif obj.kind == "Pod":
        commands.append(f"kubectl describe pod{namespace} {obj.ref.name}")
    commands.append("kubectl get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.count,topology.kubernetes.io/zone")
    if detail.touched:
        commands.append(f"kubectl describe node {detail.touched}   # taints, labels, Allocated resources")
    return commands


def _refusal_step(refusal: Refusal) -> Step:
    """The object's admission verdict (operator-rejected's or api-rejected's certainty): it makes no pods."""
    return Step(
        "Admission (the object's create)",
        FAIL,
        [refusal.words(), "it makes no pods; the steps below judge its pods as if it were admitted"],
    )


def explain_objects(
    objects: list[KubeObject],
    inventory: Resolver,
    findings: Sequence[Finding] | Callable[[KubeObject], list[Finding]] = (),
    gpu_resources: tuple[str, ...] = (),
    config: Config | None = None,
) -> list[SiteExplanation]:
    """An explanation per pod template, and one per object that has none but that `check` judges
    (claims, claim templates, gang groups); each ends with `check`'s own findings on the object
    (``findings``: all of them, or a function giving an object's own, as for a rendered chart whose
    findings are in its templates' files)."""
    out = []
    for written in objects:
        own = findings(written) if callable(findings) else _own_findings(written, findings)
        obj = with_runtime(written, inventory)  # a TrainJob's pods are its runtime's, as check builds them
        sites = pod_sites(obj)
        gang = _gang_step(obj, inventory) if sites else None  # the object's gangs, packed once for all its sites
        admission = admission_step(obj, inventory) if sites else None
        refusal = object_refusal(obj, inventory, (config or Config()).gates) if sites else None
        pins = kueue_pins(obj, inventory) if sites else {}  # a queued workload's pods as Kueue starts them
        explained = [
            explain_site(obj, kueue_admitted(site, pins), inventory, gang, admission, site, gpu_resources, refusal)
            for site in sites
        ]
        if not explained:
            steps = _object_steps(obj, inventory)
            if not steps and not own:
                continue
            explained = [SiteExplanation(obj.ref.display(), steps, [], "", [])]
        for explanation in explained:
            explanation.steps.append(_findings_step(own))
        out.extend(explained)
    return out


def _own_findings(obj: KubeObject, findings: Sequence[Finding]) -> list[Finding]:
    return [
        f for f in findings if f.file == obj.document.path and f.obj == obj.ref and f.document == obj.document.index
    ]


def _show(resource: str, amount: Fraction) -> str:
    """Bytes in binary units, as kubectl shows memory (256Gi); other amounts as they are."""
    if resource.removeprefix("requests.").removeprefix("limits.") in ("memory", "ephemeral-storage") and (
        amount.denominator == 1 and amount >= 1024
    ):
        for suffix, power in (("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
            if amount % (1 << power) == 0:
                return f"{amount // (1 << power)}{suffix}"
    return format_amount(amount)


def admission_step(obj: KubeObject, inventory: Resolver) -> Step | None:
    """Before the scheduler: the queue the workload waits in, the flavor and quota arithmetic, and the
    namespace's quota - the verdicts queue-reference-invalid and queue-unadmittable report."""
    route = queue_route(obj, inventory)
    problems = [
        *(route.problems if route is not None else []),
        *batch_queue_problems(obj, inventory),
        *pod_group_problems(obj, inventory),
        *kueue_config_problems(obj, inventory),
        *volcano_capability_problems(obj, inventory),
        *kai_limit_problems(obj, inventory),
    ]
    charges = quota_charges(obj, inventory)
    uncharging = uncharging_quotas(obj, inventory)
    if route is None and not problems and not charges and not uncharging:
        return None
    lines, status = [], OK
    for quota, why in uncharging:  # a scoped quota the pods fall outside of: it never refuses them
        lines.append(f"ResourceQuota {quota.name} (scopes {quota.describe_scopes()}): {why}")
    for quota, sites in charges:  # the namespace's quota, as the API server charges the workload's pods
        pods = sum(site.pods for site in sites)
        for key, hard in quota.hard:
            total = sum((site.charged.get(key, Fraction(0)) * site.pods for site in sites), Fraction(0))
            if total:
                over = total > hard
                status = FAIL if over else status
                lines.append(
                    f"ResourceQuota {quota.name}: {key} {_show(key, total)} for {pods} pod(s) of "
                    f"{_show(key, hard)} hard{' - above it' if over else ''}"
                )
        for site in sites:
            if site.missing:
                status = FAIL
                lines.append(f"ResourceQuota {quota.name}: must specify {'; '.join(site.missing)}")
    if route is not None:
        target = f"LocalQueue {route.queue.name}"
        if route.local is not None:
            target += f" -> ClusterQueue {route.local.cluster_queue}"
        if route.cluster is not None and route.cluster.cohort:
            target += f" (cohort {route.cluster.cohort})"
        lines.append(f"Kueue: {target}")
    for problem in problems:
        lines.extend(problem.lines)
        status = FAIL if problem.proven else INFO if status == OK else status
    found = admission_verdict(obj, inventory)
    if found is not None:
        _route, verdict = found
        for choice in verdict.choices:
            for attempt in choice.attempts:
                amounts = ", ".join(
                    f"{name} {_show(name, amount)} of at most "
                    f"{_show(name, inventory.kueue.potential_available(verdict.queue, (attempt.flavor, name)))}"
                    for name, amount in sorted(choice.requests.items())
                )
                outcome = "fits" if attempt.now else attempt.reason
                lines.append(f"pod set {choice.pod_set}, flavor {attempt.flavor}: {amounts}: {outcome}")
        if verdict.never:
            status = FAIL
            lines += [f"never admitted: {reason}" for reason in verdict.never]
        elif verdict.doubtful:
            lines += [f"admitted only if Kueue's configuration transforms it: {reason}" for reason in verdict.doubtful]
        elif verdict.waits:
            status = INFO if status == OK else status
            lines += [f"waits for quota: {reason}" for reason in verdict.waits]
        else:
            lines.append("admitted: every pod set has a flavor within the quota")
    return Step("Admission (queue and quota)", status, lines)


def _object_steps(obj: KubeObject, inventory: Resolver) -> list[Step]:
    """What `check` judges on an object without pods: a claim's allocation, a group's packing."""
    steps = []
    if obj.ref.group == "resource.k8s.io" and obj.kind in ("ResourceClaim", "ResourceClaimTemplate"):
        steps.append(_claim_step(obj, inventory))
    gang = _gang_step(obj, inventory)
    if gang.lines != [NO_GANG]:
        steps.append(gang)
    elif obj.kind in GANG_OBJECT_KINDS:  # a group alone: its members are the workloads that join it
        steps.append(
            Step(
                "Gang group",
                OK,
                [
                    "its members are placed with the workloads that name this group; "
                    "explain those to see the gang packed"
                ],
            )
        )
    return steps


def _claim_step(obj: KubeObject, inventory: Resolver) -> Step:
    verdict = claim_verdict(obj, inventory)
    assert verdict is not None  # a resource.k8s.io claim or claim template
    if verdict.absent:  # device-class-unknown's error: the allocator is not asked
        return Step("DRA allocation", FAIL, _absent_classes(verdict.absent))
    if not verdict.evaluated:
        return Step("DRA allocation", INFO, ["no ResourceSlices in the inventory: allocation not evaluated"])
    if not verdict.requests:
        return Step("DRA allocation", INFO, ["the claim has no requests"])
    rejected = rejected_inventory(inventory)
    if verdict.reason is not None:
        return Step("DRA allocation", FAIL, [*rejected, f"the claim can never be allocated: {verdict.reason}"])
    return Step(
        "DRA allocation",
        OK,
        [*rejected, f"the claim can be allocated on {verdict.fitting} of the {len(inventory.nodes)} nodes"],
    )


def _absent_classes(names: tuple[str, ...]) -> list[str]:
    """DeviceClasses the cluster does not define, in the scheduler's words for a pod whose claim names one."""
    return [
        f"DeviceClass '{name}' does not exist: the scheduler leaves the pod Pending with \"device class {name} "
        'does not exist"'
        for name in names
    ]


def rejected_inventory(inventory: Resolver) -> list[str]:
    """The inventory's DRA objects the API server would refuse (check's api-rejected warnings), which the
    allocation read as written: how many, and the first."""
    rejections = inventory.inventory_rejections
    if not rejections:
        return []
    objects = len({(r.file, r.ref) for r in rejections})
    return [
        f"read as written: {objects} inventory object{'s' if objects > 1 else ''} the API server would reject "
        f"(first: {rejections[0].summary_line()})"
    ]


def _findings_step(findings: list[Finding]) -> Step:
    if not findings:
        return Step("gpulint check", OK, ["no findings"])
    worst = max(f.severity for f in findings)
    lines = [
        "\n".join(
            (f"{f.file}:{f.line}:{f.column}: {f.severity}[{f.rule}] {f.message}", *(f"    {note}" for note in f.notes))
        )
        for f in findings
    ]
    return Step("gpulint check", FAIL if worst >= Severity.ERROR else INFO, lines)


def render_json(explanations: list[SiteExplanation]) -> str:
    import json

    return (
        json.dumps(
            {
                "version": EXPLAIN_JSON_VERSION,
                "explanations": [
                    {
                        "heading": e.heading,
                        "steps": [
                            {"title": step.title, "status": step.status, "lines": step.lines} for step in e.steps
                        ],
                        "nodes": [
                            {"nodes": names, "count": count, "result": result} for names, count, result in e.table
                        ],
                        "scheduler": e.summary,
                        "commands": e.commands,
                    }
                    for e in explanations
                ],
            },
            indent=2,
        )
        + "\n"
    )


def render(explanations: list[SiteExplanation]) -> str:
    out: list[str] = []
    for explanation in explanations:
        out.append(f"== {explanation.heading}")
        for number, step in enumerate(explanation.steps, 1):
            out.append(f"{number}. {step.title}: {step.status}")
            out.extend(f"     {line}" for line in step.lines)
        if explanation.table:
            width = max((len(names) for names, _, _ in explanation.table), default=5)
            out.append("   nodes".ljust(width + 5) + "  count  result")
            for names, count, result in explanation.table:
                out.append(f"   {names:<{width}}  {count:>5}  {result}")
        if explanation.summary:
            out.append(f"Scheduler: {explanation.summary}")
        if explanation.commands:
            out.append("Confirm on the live cluster:")
            out.extend(f"   {command}" for command in explanation.commands)
        out.append("")
    return "\n".join(out)
