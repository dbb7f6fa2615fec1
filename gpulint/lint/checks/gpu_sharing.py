"""gpu-sharing: GPUs that are replicas or MIG slices, asked for as if they were whole GPUs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpulint.kube.device_plugin_config import sharing_settings
from gpulint.kube.gpu_sharing import MPS, NVIDIA_GPU, NodeResource, node_resource
from gpulint.kube.gpu_stack import node_names
from gpulint.kube.scheduler import FitResult, NodeInfo
from gpulint.kube.workloads import PodSpecSite, containers, extended_resource_path
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.verdicts.device_filters import VgpuExcess, vgpu_excesses, whole_count
from gpulint.lint.verdicts.shared import gpu_pod_requirements
from gpulint.lint.world.config_maps import device_plugin_configs
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("gpu-sharing", Severity.WARNING, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    resolver = ctx.cluster
    if resolver is None:
        return
    pod = gpu_pod_requirements(obj.kind, site, resolver, obj.facts)
    if pod is None:
        return
    fit = resolver.model.evaluate(pod)
    if fit.fits:  # else gpu-unschedulable says why
        yield from _multi_unit_requests(site, fit, ctx)
    # HAMi and Volcano's device count, on the nodes the other filters pass (the verdict explain shows)
    yield from (_too_many_vgpus(excess) for excess in vgpu_excesses(obj.kind, site, resolver, obj.facts))
    if not fit.fits:
        return
    if NVIDIA_GPU in pod.requests and _sharing(resolver).gpu_mixed:
        yield from _mig_mixture(site, _on_nodes(resolver, fit.fitting, NVIDIA_GPU))


def _advertised(resolver: Resolver, resource: str) -> dict[int, tuple[NodeInfo, NodeResource | None]]:
    """id(node) -> the inventory node and what ``resource`` is there, worked out once per inventory (a webhook
    review would otherwise redo it for every node)."""
    return resolver.cluster_fact(
        ("gpu-sharing", resource), lambda: {id(node): (node, node_resource(node, resource)) for node in resolver.nodes}
    )


@dataclass(frozen=True)
class _Sharing:
    """What the rule needs of the inventory for every pod, worked out once per inventory."""

    shared: frozenset[str]  # the resources shared (time-slicing, MPS) on some node
    gpu_mixed: bool  # nvidia.com/gpu is a MIG slice on some nodes, a whole GPU on others


def _sharing(resolver: Resolver) -> _Sharing:
    def compute() -> _Sharing:
        advertised = [  # what each node's resources are (None: not an NVIDIA resource, or none of it)
            info
            for node in resolver.nodes
            for name in node.allocatable
            if (info := node_resource(node, name)) is not None
        ]
        gpu_slices = {info.mig_slice for info in advertised if info.resource == NVIDIA_GPU}
        return _Sharing(frozenset(info.resource for info in advertised if info.shared), len(gpu_slices) == 2)

    return resolver.cluster_fact(("gpu-sharing", "sharing"), compute)


def _on_nodes(resolver: Resolver, nodes: list[NodeInfo], resource: str) -> list[tuple[NodeInfo, NodeResource]]:
    """(node, what ``resource`` is there) for the nodes that advertise it."""
    table = _advertised(resolver, resource)
    found = []
    for node in nodes:
        known = table.get(id(node))
        info = known[1] if known is not None and known[0] is node else node_resource(node, resource)
        if info is not None:
            found.append((node, info))
    return found


def _multi_unit_requests(site: PodSpecSite, fit: FitResult, ctx: CheckContext) -> Iterator[Diagnostic]:
    """The device plugin allocates per container: more than one unit of a shared resource is not more GPU.
    The nodes the pod fits (``fit``) are listed only for a resource some node shares."""
    shared_somewhere = _sharing(ctx.resolver).shared  # the candidates are the inventory's nodes
    if not shared_somewhere:
        return
    for container_path, container in containers(site.spec):
        limits = container.get("resources", {}).get("limits") if isinstance(container.get("resources"), dict) else None
        if not isinstance(limits, dict):
            continue
        for name, raw in limits.items():
            if str(name) not in shared_somewhere:
                continue
            amount = whole_count(raw)
            if amount is None or amount < 2:
                continue
            infos = _on_nodes(ctx.resolver, fit.fitting, str(name))
            shared = [(node, info) for node, info in infos if info.shared]
            if not shared:
                continue
            path = (*site.path, *container_path, "resources", "limits", name)
            yield _shared_request(str(container.get("name") or ""), str(name), amount, infos, shared, path, ctx)


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
            f"physical GPUs: {', '.join(f'{n} {b.devices}' for n, b in known[:5])}"
            + (f" and {len(known) - 5} more nodes" if len(known) > 5 else ""),
            excess.refusal,
            f"ask for at most {most.devices}, or pin nodes with more GPUs",
        ),
    )


def _shared_request(
    container: str,
    name: str,
    amount: int,
    infos: list[tuple[NodeInfo, NodeResource]],
    shared: list[tuple[NodeInfo, NodeResource]],
    path: tuple[object, ...],
    ctx: CheckContext,
) -> Diagnostic:
    everywhere = len(shared) == len(infos)
    where = "every node it can use" if everywhere else f"{len(shared)} of the {len(infos)} nodes it can use"
    sample = shared[0][1]
    nodes = f" ({node_names(node for node, _ in shared)})" if not everywhere else ""
    strategies = {info.strategy for _, info in shared}
    refused = _refused(strategies, ctx)
    head = f"container '{container}' asks for {amount} {name}, but on {where} {name} is {sample.describe()}"
    what = (f"the nodes: {nodes.strip(' ()')}",) if nodes else ()
    if refused is True and everywhere:
        return Diagnostic(
            RULE_ID,
            path,
            first_line(f"{head}: the device plugin refuses more than one shared unit per container", head),
            severity=Severity.ERROR,
            notes=(
                *what,
                "the device plugin refuses more than one shared unit per container",
                f"failRequestsGreaterThanOne{' (the MPS default)' if MPS in strategies else ''}: the pod fails with "
                f"UnexpectedAdmissionError (maximum request size for shared resources is 1; found {amount})",
                "ask for 1, or for whole GPUs",
            ),
        )
    maybe = (
        ("the device plugin rejects it with UnexpectedAdmissionError where failRequestsGreaterThanOne is set",)
        if refused is None
        else ()
    )
    return Diagnostic(
        RULE_ID,
        path,
        head,
        notes=(
            *what,
            f"the {amount} units may be replicas of the same physical GPU, each shared with other pods: "
            "no more compute or memory than 1 is guaranteed",
            *maybe,
            "ask for 1, or pin nodes with whole GPUs",
        ),
    )


def _refused(strategies: set[str], ctx: CheckContext) -> bool | None:
    """Whether the device plugin refuses requests > 1 for these strategies: from the configurations among the
    linted files (config.go: MPS defaults failRequestsGreaterThanOne to true); None: not known."""
    settings = ctx.memo(("gpu-sharing", "plugin-settings"), lambda: _plugin_settings(ctx.resolver))
    answers = []
    for strategy in strategies:
        found = [fail for kind, fail in settings if kind == strategy]
        if found:
            answers.append(all(found))
        elif strategy == MPS:
            answers.append(True)
        else:
            return None  # time-slicing without a configuration at hand: the default is false, but who knows
    return all(answers) if answers else None


def _plugin_settings(resolver: Resolver) -> list[tuple[str, bool | None]]:
    settings: list[tuple[str, bool | None]] = []
    for config in device_plugin_configs(resolver.linted):
        strategy, fail = sharing_settings(config)
        if strategy != "none":
            settings.append((strategy, fail is True))
    return settings


def _mig_mixture(site: PodSpecSite, advertised: list[tuple[NodeInfo, NodeResource]]) -> Iterator[Diagnostic]:
    """Under the single MIG strategy nvidia.com/gpu is a slice on some nodes and a whole GPU on others."""
    slices: list[tuple[NodeInfo, NodeResource]] = []
    whole: list[tuple[NodeInfo, NodeResource]] = []
    for node, info in advertised:
        (slices if info.mig_slice else whole).append((node, info))
    if not (slices and whole):
        return
    total = len(slices) + len(whole)
    slice_products = sorted({info.product for _, info in slices if info.product})
    whole_products = sorted({info.product for _, info in whole if info.product})
    yield Diagnostic(
        RULE_ID,
        extended_resource_path(site, frozenset({NVIDIA_GPU})) or site.path,
        f"nvidia.com/gpu is a MIG slice on {len(slices)} of the {total} nodes this pod can use and "
        f"{'a whole GPU or a replica of one' if any(i.shared for _, i in whole) else 'a whole GPU'} "
        f"on {len(whole)}",
        notes=(
            f"MIG slices (the single MIG strategy): {', '.join(slice_products) or node_names(n for n, _ in slices)}; "
            f"whole: {', '.join(whole_products) or node_names(n for n, _ in whole)}",
            "where it lands decides which it gets: pin the product with a nodeSelector on nvidia.com/gpu.product",
        ),
    )
