"""`gpulint explain`: why would this pod be Pending? Answered in the order operators diagnose it.

1. resource name and count, 2. capacity vs allocatable, 3. node affinity and taints
(a per-node table, identical nodes once with a count), 4. DRA, 5. gang and topology,
then the scheduler's own summary and the kubectl commands that confirm it live.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from gpulint.kube.dra.allocation import ClaimSpec, claim_spec_of
from gpulint.kube.gangs.members import Gang, gangs_of, pack
from gpulint.kube.gangs.packing import WORK_BUDGET
from gpulint.kube.pools.fit import EXCLUDED, FITS, LIMITED, NEVER, UNKNOWN, PoolFit
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import is_extended, scheduler_managed
from gpulint.kube.scheduler import (
    AFFINITY_REASONS,
    REASON_NODE_NAME,
    REASON_UNSCHEDULABLE,
    FitResult,
    NodeGroup,
    PodRequirements,
    pod_requirements,
)
from gpulint.kube.workloads import PodSpecSite, effective_pod_spec, pod_spec_sites, template_metadata
from gpulint.lint.admission import (
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
from gpulint.lint.engine import with_runtime
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inventory import GANG_OBJECT_KINDS
from gpulint.lint.objects import KubeObject
from gpulint.lint.resolver import Resolver
from gpulint.lint.verdicts import (
    allocation_failure,
    describe_gang,
    describe_scale_up,
    extended_resource_claim,
    gang_detail,
    gang_with_pools,
    gpu_pod_requirements,
    kueue_admitted,
    kueue_pins,
    pool_fits,
    referenced_claims,
    role_pods,
    scale_up_verdict,
    scheduling_hint,
)

OK, FAIL, INFO = "ok", "FAIL", "info"
EXPLAIN_JSON_VERSION = 1  # bumped when the shape of `explain --format json` changes
NO_GANG = "no gang: pods are placed one by one"


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


def _names(group: NodeGroup, limit: int = 3) -> str:
    names = [node.name for node in group.nodes[:limit]]
    more = f" (+{len(group) - limit})" if len(group) > limit else ""
    return ", ".join(names) + more


def explain_site(
    obj: KubeObject, site: PodSpecSite, inventory: Resolver, gang: Step | None = None, admission: Step | None = None
) -> SiteExplanation:
    # The requirements gpu-unschedulable judges: DRA-backed extended resources are the DRA step's.
    pod = gpu_pod_requirements(obj.kind, site, inventory) or pod_requirements(effective_pod_spec(obj.kind, site.spec))
    dra_backed = set(inventory.dra_extended_resources()) - inventory.published_resources
    model = inventory.model
    result: FitResult = model.evaluate(pod)
    role = f", '{site.role}' pod template" if site.role else ""
    count = "" if site.pods is None else f" ({site.pods} pod{'s' if site.pods != 1 else ''})"
    heading = f"{obj.ref.display()}{role}{count}"
    steps: list[Step] = [admission] if admission is not None else []

    # 1. resource names and counts
    everything = pod_requirements(effective_pod_spec(obj.kind, site.spec)).requests
    extended = {name: amount for name, amount in everything.items() if is_extended(name)}
    known = inventory.offered_resources | inventory.dra_extended_resources().keys()
    unknown = [name for name in extended if name not in known]
    shares = {name: plugin for name in unknown if (plugin := scheduler_managed(name))}
    unknown = [name for name in unknown if name not in shares]
    lines = [
        "effective pod request: "
        + (", ".join(f"{n} {format_amount(a)}" for n, a in sorted(pod.requests.items())) or "nothing")
    ]
    if site.completed_by:  # the checks that need the whole pod stayed silent: say why
        lines.append(f"not all of the pod is known here: {site.completed_by} supplies part of it")
    nothing = "no node publishes it, no node pool offers it" if inventory.pools else "no node publishes it"
    lines += [f"{name}: {nothing} and no DeviceClass backs it" for name in unknown]
    lines += [
        f"{name}: a {plugin} share: {plugin}'s scheduler extender accounts for it; nodes do not publish it"
        for name, plugin in shares.items()
    ]
    fractional = [name for name, amount in extended.items() if amount.denominator != 1]
    lines += [
        f"{name}: {format_amount(extended[name])} is not a whole number (the API server rejects it)"
        for name in fractional
    ]
    status = FAIL if unknown or fractional else INFO if shares else OK
    steps.append(Step("Resource names and counts", status, lines))

    # the nodes the pools can add (the same verdicts gpu-unschedulable words)
    fits = pool_fits(pod, inventory) if inventory.pools and obj.kind != "DaemonSet" else []
    scales_up = any(fit.state == FITS for fit in fits)

    # 2. capacity vs allocatable
    lines = []
    status = OK
    for name, amount in sorted(extended.items()):
        if name in dra_backed:
            lines.append(
                f"{name}: asks {format_amount(amount)}; served by DRA (a DeviceClass's extendedResourceName): "
                "see the DRA step"
            )
            continue
        largest_capacity = max((n.capacity.get(name, Fraction(0)) for n in inventory.nodes), default=Fraction(0))
        largest_allocatable = max((n.allocatable.get(name, Fraction(0)) for n in inventory.nodes), default=Fraction(0))
        largest_free = max((n.free(name) for n in inventory.nodes), default=Fraction(0))
        offered = [(t.allocatable.get(name, Fraction(0)), t.name) for p in inventory.pools for t in p.templates]
        largest_new = max(offered, default=None)
        added = (
            f"; the largest node a pool can add offers {format_amount(largest_new[0])} ({largest_new[1]})"
            if largest_new
            else ""
        )
        lines.append(
            f"{name}: asks {format_amount(amount)}; largest node capacity {format_amount(largest_capacity)}, "
            f"allocatable {format_amount(largest_allocatable)}, free now {format_amount(largest_free)}{added}"
        )
        if amount > largest_allocatable and not scales_up:
            status = FAIL
    if result.fits and site.pods and site.pods > 1:  # the same count gpu-unschedulable judges
        placed = model.placeable(pod)
        if placed < site.pods:
            status = FAIL
            lines.append(
                f"the workload runs {site.pods} of these pods, but only {placed} fit on the empty cluster "
                f"at once; the other {site.pods - placed} would stay Pending"
            )
    steps.append(Step("Capacity vs allocatable", status, lines or ["no extended resources requested"]))

    # 3. affinity and taints
    affinity_failures = sum(c for r, c in result.reasons.items() if r in AFFINITY_REASONS)
    taint_failures = sum(c for r, c in result.reasons.items() if r.startswith("node(s) had untolerated taint"))
    other = sum(c for r, c in result.reasons.items() if r in (REASON_UNSCHEDULABLE, REASON_NODE_NAME))
    lines = [
        f"{len(pod.requirements())} required node selection term(s); {affinity_failures} node(s) excluded by "
        f"affinity/selector, {taint_failures} by untolerated taints, {other} cordoned or not the named node"
    ]
    steps.append(
        Step(
            "Node affinity and taints",
            FAIL if not result.fits and not scales_up and (affinity_failures or taint_failures) else OK,
            lines,
        )
    )
    if inventory.pools:
        steps.append(_pools_step(fits, result, obj.kind))

    steps.append(_dra_step(obj, site, inventory, result))
    steps.append(gang or _gang_step(obj, inventory))

    by_result: dict[str, list] = {}
    if result.fitting:
        by_result["fits"] = list(result.fitting)
    for group, reasons in result.failing:  # rows with the same verdict are shown once
        by_result.setdefault("; ".join(reasons), []).extend(group.nodes)
    table = [(_names(NodeGroup(nodes)), len(nodes), verdict) for verdict, nodes in by_result.items()]
    summary = (
        f"{len(result.fitting)}/{result.total} nodes pass every filter"
        if result.fits
        else result.summary() + ("" if fits else scheduling_hint(result, pod, inventory))
    )
    if not result.fits and scales_up:
        best = next(fit for fit in fits if fit.state == FITS)
        summary += f" Then {describe_scale_up(best)}; the pod waits until the node is ready."
    return SiteExplanation(heading, steps, table, summary, _commands(obj, site, pod, result))


def _pools_step(fits: list[PoolFit], result: FitResult, kind: str) -> Step:
    """What each node pool would do for the pod: add a node (which type), never, limited, unknown."""
    if kind == "DaemonSet":
        return Step(
            "Node pools", OK, ["a DaemonSet's pods run on the nodes that exist; they never make a pool add one"]
        )
    lines = []
    for fit in fits:
        if fit.state == FITS:
            lines.append(f"{describe_scale_up(fit)}: fits after a scale-up")
        else:
            lines.append(f"{fit.pool.title}: {POOL_STATES[fit.state]}: {fit.why}")
    state, _ = scale_up_verdict(fits)
    if result.fits or state == FITS:
        status = OK
    elif state in (UNKNOWN, LIMITED):
        status = INFO
    else:
        status = FAIL
    return Step("Node pools", status, lines)


POOL_STATES = {
    NEVER: "never fits",
    EXCLUDED: "cannot be chosen",
    LIMITED: "cannot grow",  # its limits, its max size, or Cluster Autoscaler's backoff
    UNKNOWN: "unknown",
}


def _gang_step(obj: KubeObject, inventory: Resolver) -> Step:
    gangs = gangs_of(obj, inventory)
    if not gangs:
        return Step("Gang and topology", OK, [NO_GANG])
    lines, status = [], OK
    for gang in gangs:
        where = f" in one {gang.topology_key}" if gang.topology_key else ""
        lines.append(f"{gang.system}: {gang.required} of {gang.total} pods at once{where}")
        if inventory.pools:  # the nodes that can exist: gang-unsatisfiable's verdict
            status = _gang_with_pools(gang, inventory, lines, status)
            continue
        result = pack(gang, inventory.model)
        if result.main is None:
            lines.append("  which members must run together is not determined: not evaluated")
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
        best = result.best()
        if gang.topology_key and result.unsatisfiable and best is not None:
            lines.append(
                f"  to make it fit: at most {best.placeable} {role_pods(result.main.role)} per domain, "
                f"smaller pods, or a wider topology than {gang.topology_key}"
            )
    return Step("Gang and topology", status, lines)


def _gang_with_pools(gang: Gang, inventory: Resolver, lines: list[str], status: str) -> str:
    verdict = gang_with_pools(gang, inventory)
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


def _dra_step(obj: KubeObject, site: PodSpecSite, inventory: Resolver, result: FitResult) -> Step:
    entries = site.spec.get("resourceClaims")
    entries = entries if isinstance(entries, list) else []
    if not entries and extended_resource_claim(site, inventory) is None:
        return Step("DRA claims", OK, ["no resource claims"])
    claims = referenced_claims(obj, site, inventory)
    extended = extended_resource_claim(site, inventory)
    if extended is not None:
        claims.append(extended[0])
    lines = [f"{len(entries)} resource claim(s); {len(claims)} found in the linted files or the inventory"]
    if not claims or not inventory.dra.has_devices:
        lines.append("no ResourceSlices in the inventory: allocation not evaluated")
        return Step("DRA claims", INFO, lines)
    allowed = frozenset(node.name for node in result.fitting)
    lines += rejected_inventory(inventory)
    verdicts = inventory.dra.verdicts(tuple(claims), allowed)
    fitting = sum(len(group.nodes) for group, verdict in verdicts if verdict.fits)
    if fitting:
        lines.append(
            f"the claims can be allocated on {fitting} of the {len(allowed)} nodes that pass the other filters"
        )
        return Step("DRA claims", OK, lines)
    reason = allocation_failure(verdicts, len(inventory.nodes)) if verdicts else None
    lines.append(reason or "no node that passes the other filters publishes devices")
    return Step("DRA claims", FAIL, lines)


def _commands(obj: KubeObject, site: PodSpecSite, pod: PodRequirements, result: FitResult) -> list[str]:
    namespace = f" -n {obj.ref.namespace}" if obj.ref.namespace else ""
    commands = [f"kubectl get events{namespace} --field-selector reason=FailedScheduling"]
    labels = template_metadata(obj.data, site).get("labels")
    labels = labels if isinstance(labels, dict) else {}
    if labels:
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        commands.append(f"kubectl describe pods{namespace} -l {selector}")
    elif obj.kind == "Pod":
        commands.append(f"kubectl describe pod{namespace} {obj.ref.name}")
    commands.append("kubectl get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.count,topology.kubernetes.io/zone")
    # A node the pod's node selection excludes is never a node the pod touches (the scheduler names only a
    # node's first failing filter, so a tainted node may be outside the selection too): describe one in reach.
    touched = [
        group
        for group, _ in result.failing
        if pod.matches_affinity(group.representative) and pod.node_name in ("", group.representative.name)
    ]
    if touched:
        commands.append(
            f"kubectl describe node {touched[0].representative.name}   # taints, labels, Allocated resources"
        )
    return commands


def explain_objects(
    objects: list[KubeObject],
    inventory: Resolver,
    findings: Sequence[Finding] | Callable[[KubeObject], list[Finding]] = (),
) -> list[SiteExplanation]:
    """An explanation per pod template, and one per object that has none but that `check` judges
    (claims, claim templates, gang groups); each ends with `check`'s own findings on the object
    (``findings``: all of them, or a function giving an object's own, as for a rendered chart whose
    findings are in its templates' files)."""
    out = []
    for written in objects:
        own = findings(written) if callable(findings) else _own_findings(written, findings)
        obj = with_runtime(written, inventory)  # a TrainJob's pods are its runtime's, as check builds them
        sites = list(pod_spec_sites(obj.data))
        gang = _gang_step(obj, inventory) if sites else None  # the object's gangs, packed once for all its sites
        admission = admission_step(obj, inventory) if sites else None
        pins = kueue_pins(obj, inventory) if sites else {}  # a queued workload's pods as Kueue starts them
        explained = [explain_site(obj, kueue_admitted(site, pins), inventory, gang, admission) for site in sites]
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
        steps.append(_claim_step(claim_spec_of(obj.data, obj.kind), inventory))
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


def _claim_step(claim: ClaimSpec, inventory: Resolver) -> Step:
    dra = inventory.dra
    if not inventory.has_nodes or not dra.has_devices:
        return Step("DRA allocation", INFO, ["no ResourceSlices in the inventory: allocation not evaluated"])
    if not claim.requests:
        return Step("DRA allocation", INFO, ["the claim has no requests"])
    rejected = rejected_inventory(inventory)
    reason = allocation_failure(dra.verdicts((claim,)), len(inventory.nodes))
    if reason is not None:
        return Step("DRA allocation", FAIL, [*rejected, f"the claim can never be allocated: {reason}"])
    fitting = sum(len(group.nodes) for group, verdict in dra.verdicts((claim,)) if verdict.fits)
    return Step(
        "DRA allocation",
        OK,
        [*rejected, f"the claim can be allocated on {fitting} of the {len(inventory.nodes)} nodes"],
    )


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
