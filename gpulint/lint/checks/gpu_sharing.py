"""gpu-sharing: GPUs that are replicas or MIG slices, asked for as if they were whole GPUs, Volcano GPU shares its
scheduler's configuration does not turn on, and a KAI gpu-fraction its admission webhook refuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.kube.fields import dig, mapping, text
from gpulint.kube.gpu_sharing import NVIDIA_GPU
from gpulint.kube.gpu_stack import node_names
from gpulint.kube.kai_admission import DEFAULT_SCHEDULER_NAME, GPU_FRACTION, fraction_refusal
from gpulint.kube.volcano_scheduler import CONF_KEY, SWITCHES, enabled_switches, switch_words
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite, extended_resource_path, site_resources, template_metadata
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope

if TYPE_CHECKING:
    from gpulint.lint.verdicts.device_filters import MigMixture, ReservationEvicted, SharedRequest, VgpuExcess

# The Volcano share switch is read from the linted files alone; the rest needs the inventory's nodes.
SPEC = RuleSpec(
    "gpu-sharing", Severity.WARNING, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, in_part=True, of_pods=True
)
RULE_ID = SPEC.id
VOLCANO = "volcano"
VOLCANO_JOB = ("batch.volcano.sh", "Job")  # its pods take the job's schedulerName, volcano by default


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    yield from _volcano_share_off(obj, site, ctx)
    yield from _kai_fraction_refused(obj, site, ctx)
    resolver = ctx.cluster
    if resolver is None:
        return
    # imported here: without nodes the rule runs in part (the Volcano switch), and a one-file check stays lean
    from gpulint.lint.verdicts.device_filters import kai_reservation_evicted, sharing_verdict, vgpu_excesses

    verdict = sharing_verdict(obj.kind, site, resolver, obj.facts)  # the one explain shows
    yield from (_shared_request(request) for request in verdict.shared)
    # HAMi and Volcano's device count, on the nodes the other filters pass (the verdict explain shows)
    yield from (_too_many_vgpus(excess) for excess in vgpu_excesses(obj.kind, site, resolver, obj.facts))
    if verdict.mixture is not None:
        yield _mig_mixture(site, verdict.mixture)
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    evicted = kai_reservation_evicted(obj.kind, site, resolver, dict(annotations))
    if evicted is not None:
        yield _reservation_evicted(site, evicted)


def _kai_fraction_refused(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A gpu-fraction KAI's pod admission refuses: its pods are never created."""
    admission = ctx.resolver.kai_admission
    scheduler = admission.scheduler_name if admission is not None else DEFAULT_SCHEDULER_NAME
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    words = fraction_refusal(site.spec, dict(annotations), scheduler)
    if words is None:
        return
    value = annotations[GPU_FRACTION]
    subject = "the pod" if obj.kind == "Pod" else "every pod of this template"
    yield Diagnostic(
        RULE_ID,
        (*site.template_path, "metadata", "annotations", GPU_FRACTION),
        f"KAI's admission webhook rejects {subject}: {words} (gpu-fraction: {value!r})",
        notes=(
            "a GPU fraction is a share of one GPU, strictly between 0 and 1; ask for whole GPUs with "
            f"{NVIDIA_GPU} in the container's limits instead",
        ),
    )


def _reservation_evicted(site: PodSpecSite, evicted: ReservationEvicted) -> Diagnostic:
    """KAI's GPU reservation pod, without tolerations, evicted from every node the fraction pod can use."""
    nodes = first_and_more([f"{node} ({taint})" for node, taint in evicted.taints], 3, noun="nodes")
    binder = (
        "the binder places the reservation pod by nodeName, passing NoSchedule taints but not NoExecute ones "
        "(v0.17.0 gives it the fraction pod's tolerations)"
    )
    head = (
        f"KAI binds this GPU fraction ({evicted.fraction}) through a reservation pod with no tolerations, which the "
        "taint manager evicts from every node the pod can use"
    )
    path = (*site.path[:-1], "metadata", "annotations", evicted.key)
    if evicted.proven:
        return Diagnostic(
            RULE_ID,
            path,
            f"{head}: the fraction is never bound",
            notes=(
                f"NoExecute taints: {nodes}",
                f"KAI {evicted.release}: {binder}",
                "ask for a whole GPU, or leave a GPU node without the NoExecute taint",
            ),
        )
    # before v0.17.0 only: a warning would be false where a later release runs
    known = f"KAI {evicted.release}" if evicted.release else "no KAI Config image tag, chart version or image"
    return Diagnostic(
        RULE_ID,
        path,
        f"{head} under KAI before v0.17.0: there the fraction is never bound",
        severity=Severity.INFO,
        notes=(
            f"NoExecute taints: {nodes}",
            f"the KAI release is not known ({known}); before v0.17.0 {binder}",
            "pin KAI v0.17.0 or later, ask for a whole GPU, or leave a GPU node without the NoExecute taint",
        ),
    )


def _too_many_vgpus(excess: VgpuExcess) -> Diagnostic:
    """A container asking for more vGPUs than the nodes it can use have GPUs (the verdict explain shows)."""
    node, most = excess.most
    head = (
        f"container '{excess.container}' asks for {excess.amount} {excess.resource}, but {most.scheduler} gives a "
        f"container at most one of each physical GPU and the nodes it can use have at most {most.devices}"
    )
    known = excess.bounds
    return Diagnostic(
        RULE_ID,
        excess.path,
        first_line(f"{head}: its pods stay Pending", head),
        notes=(
            f"physical GPUs: {first_and_more([f'{n} {b.devices}' for n, b in known], 5, noun='nodes')}",
            excess.refusal,
            f"ask for at most {most.devices}, or pin nodes with more GPUs",
        ),
    )


def _shared_request(request: SharedRequest) -> Diagnostic:
    """More than one unit of a shared resource is not more GPU (the verdict explain shows)."""
    from gpulint.lint.verdicts.device_filters import SHARED_REFUSAL

    name, amount = request.resource, request.amount
    where = (
        "every node it can use"
        if request.everywhere
        else f"{len(request.shared)} of the {request.usable} nodes it can use"
    )
    head = f"container '{request.container}' asks for {amount} {name}, but on {where} {name} is {request.unit}"
    what = (f"the nodes: {node_names(request.shared)}",) if not request.everywhere else ()
    if request.refused is True and request.everywhere:
        return Diagnostic(
            RULE_ID,
            request.path,
            first_line(f"{head}: {SHARED_REFUSAL}", head),
            severity=Severity.ERROR,
            notes=(*what, SHARED_REFUSAL, request.admission_error, "ask for 1, or for whole GPUs"),
        )
    maybe = (
        ("the device plugin rejects it with UnexpectedAdmissionError where failRequestsGreaterThanOne is set",)
        if request.refused is None
        else ()
    )
    return Diagnostic(
        RULE_ID,
        request.path,
        head,
        notes=(
            *what,
            f"the {amount} units may be replicas of the same physical GPU, each shared with other pods: "
            "no more compute or memory than 1 is guaranteed",
            *maybe,
            "ask for 1, or pin nodes with whole GPUs",
        ),
    )


def _mig_mixture(site: PodSpecSite, mixture: MigMixture) -> Diagnostic:
    """Under the single MIG strategy nvidia.com/gpu is a slice on some nodes and a whole GPU on others."""
    slices, whole = mixture.slices, mixture.whole
    return Diagnostic(
        RULE_ID,
        extended_resource_path(site, frozenset({NVIDIA_GPU})) or site.path,
        f"nvidia.com/gpu is a MIG slice on {len(slices)} of the {len(slices) + len(whole)} nodes this pod can use "
        f"and {mixture.whole_unit} on {len(whole)}",
        notes=(
            f"MIG slices (the single MIG strategy): {', '.join(mixture.slice_products) or node_names(slices)}; "
            f"whole: {', '.join(mixture.whole_products) or node_names(whole)}",
            "where it lands decides which it gets: pin the product with a nodeSelector on nvidia.com/gpu.product",
        ),
    )


def _volcano_share_off(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A Volcano GPU share asked of Volcano's scheduler while every volcano-scheduler.conf among the linted files
    leaves its switch off (none among them: nothing is said)."""
    if _scheduler(obj, site) != VOLCANO:
        return  # another scheduler, or one a webhook may still set: Volcano's configuration says nothing of it
    asked = [
        (block, kind, name)
        for block in site_resources(site)
        for kind, values in (("limits", block.limits), ("requests", block.requests))
        for name in values
        if name in SWITCHES
    ]
    configs: list[tuple[str, frozenset[str]]] = (
        ctx.memo(("volcano-scheduler-configs",), lambda: _volcano_configs(ctx)) if asked else []
    )  # each ConfigMap's configuration parsed once per run, not once per pod
    seen: set[tuple[str, str]] = set()
    for block, kind, name in asked:
        switch = SWITCHES[name]
        if not configs or (block.container, name) in seen or any(switch in on for _, on in configs):
            continue
        seen.add((block.container, name))
        yield Diagnostic(
            RULE_ID,
            (*block.path, kind, name),
            f"container '{block.container}' asks {name}, which Volcano's scheduler allocates only with {switch} on",
            on_key=True,
            notes=(
                f"{CONF_KEY} in {', '.join(where for where, _ in configs)} leaves it off",
                "the scheduler binds the pod without choosing a GPU, and the device plugin's Allocate finds none "
                "on it (failed to find candidate pod / failed to find gpu id): the kubelet rejects the pod "
                "(UnexpectedAdmissionError)",
                f"turn it on: {switch_words(switch)}",
            ),
        )


def _scheduler(obj: KubeObject, site: PodSpecSite) -> str:
    named = text(site.spec.get("schedulerName"))
    if named or (obj.ref.group, obj.kind) != VOLCANO_JOB:
        return named
    return text(dig(obj.data, "spec", "schedulerName")) or VOLCANO


def _volcano_configs(ctx: CheckContext) -> list[tuple[str, frozenset[str]]]:
    """Each Volcano scheduler configuration the linted files hold: where, and the switches it turns on."""
    found = []
    for config_map in ctx.resolver.linted.of_kind("", "ConfigMap"):
        conf = mapping(config_map.data.get("data")).get(CONF_KEY)
        on = enabled_switches(conf) if isinstance(conf, str) else None
        if on is not None:
            meta = mapping(config_map.data.get("metadata"))
            found.append((f"ConfigMap {text(meta.get('namespace')) or 'default'}/{text(meta.get('name'))}", on))
    return found
