"""daemonset-coverage: a DaemonSet cannot land on nodes it must run on (the GPU stack first)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from gpulint.kube.daemonset import Coverage, coverage
from gpulint.kube.fields import dig, mapping
from gpulint.kube.gpu_stack import (
    AMD,
    NVIDIA,
    OPERATOR_OPERANDS,
    StackComponent,
    advertises_gpus,
    gpu_nodes,
    node_names,
    resource_plugin,
)
from gpulint.kube.scheduler import NodeInfo, Taint
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec
from gpulint.lint.verdicts.shared import (
    DaemonSetVerdict,
    PoolBlock,
    RuntimeClassPlacement,
    blocked_pools,
    chart_verdict,
    daemon_coverage,
    daemon_pod,
    describe_taint,
    gpu_pod_requirements,
    operator_nodes_unlabelled,
    operator_operand_pods,
    operator_operands_verdict,
    pools_refuse,
)
from gpulint.lint.world.chart_releases import ChartRelease, chart_releases
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec(
    "daemonset-coverage",
    Severity.ERROR,
    kinds=frozenset({"DaemonSet", "ClusterPolicy", "DeviceConfig", "HelmRelease", "Application"}),
    needs=frozenset({Need.NODES}),
    of_pods=True,
)
RULE_ID = SPEC.id
SHOWN_NODES = 5


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    resolver = ctx.cluster
    if resolver is None:
        return
    if obj.kind == "ClusterPolicy" and obj.ref.group == "nvidia.com":
        operands = operator_operands_verdict(obj.data, resolver)
        site = PodSpecSite(("spec", "daemonsets"), {"tolerations": []}, None, "", ())
        reported: set[Taint] = set()
        if operands is not None and operands.coverage.blocked:
            found = _finding(site, operands, "this ClusterPolicy's DaemonSets", "select", "spec.daemonsets.tolerations")
            reported = set(operands.coverage.blocked)
            if found is not None:
                yield found
        unlabelled = operator_nodes_unlabelled(resolver)
        if unlabelled and not reported:
            yield _unlabelled_finding(site, unlabelled, len(resolver.gpu_nodes(NVIDIA)))
        yield from _sandbox_default(obj, resolver)
        pod = operator_operand_pods(obj.data)
        if pod is not None and resolver.pools:
            blocks = blocked_pools(OPERATOR_OPERANDS, pod, resolver)
            yield from _pool_findings(
                site, OPERATOR_OPERANDS, blocks, reported, resolver, "this ClusterPolicy's DaemonSets"
            )
        return
    if obj.kind == "DeviceConfig" and obj.ref.group == "amd.com":
        yield from _device_config(obj, resolver)
        return
    if obj.kind in ("HelmRelease", "Application"):
        for release in chart_releases(obj.data):
            yield from _chart_findings(release, resolver)
        return
    if obj.ref.group != "apps":
        return
    for site in obj.facts.sites():
        covered = daemon_coverage(obj.kind, site, resolver)  # the one explain shows
        if covered.verdict is not None:
            found = _finding(site, covered.verdict)
            if found is not None:
                yield found
        if covered.component is not None:
            yield from _pool_findings(site, covered.component, list(covered.blocks), set(), resolver)
        yield from _resource_plugin(obj, site, resolver)
        if covered.runtime is not None:
            yield from _runtime_class_placement(site, covered.runtime)


# The GPU operator's sandbox workloads (NVIDIA/gpu-operator controllers/state_manager.go): with
# sandboxWorkloads.enabled a GPU node's workload is its nvidia.com/gpu.workload.config label, else
# sandboxWorkloads.defaultWorkload; only a "container" node gets the container operands (driver, toolkit, device
# plugin: nvidia.com/gpu), a vm-passthrough or vm-vgpu node the VFIO manager and the sandbox device plugin, which
# advertises the GPU's PCI device name instead.
WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"
CONTAINER_WORKLOAD = "container"


def _sandbox_default(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    sandbox = mapping(dig(obj.data, "spec", "sandboxWorkloads"))
    default = sandbox.get("defaultWorkload")
    if sandbox.get("enabled") is not True or not isinstance(default, str) or default in ("", CONTAINER_WORKLOAD):
        return
    nodes = resolver.gpu_nodes(NVIDIA)
    if not nodes or any(node.labels.get(WORKLOAD_LABEL) == CONTAINER_WORKLOAD for node in nodes):
        return  # some GPU node is kept for containers: the default is the virtual machines' choice
    defaulted = [node for node in nodes if WORKLOAD_LABEL not in node.labels]
    if not defaulted:
        return
    yield Diagnostic(
        RULE_ID,
        ("spec", "sandboxWorkloads", "defaultWorkload"),
        f"with sandboxWorkloads.defaultWorkload {default}, the GPU operator runs no container operands (the device "
        f"plugin among them) on {len(defaulted)} of the {len(nodes)} NVIDIA GPU node(s) "
        f"({node_names(defaulted, SHOWN_NODES)}), which carry no {WORKLOAD_LABEL} label, and no GPU node is "
        "labelled for containers: no pod gets nvidia.com/gpu",
        severity=Severity.WARNING,
        notes=(
            f"a node without {WORKLOAD_LABEL} takes the default workload; a {default} node gets the VFIO manager "
            "and the sandbox device plugin, which advertises the GPU's PCI device name, not nvidia.com/gpu",
            f"keep defaultWorkload: {CONTAINER_WORKLOAD} and label the virtual machines' nodes "
            f"{WORKLOAD_LABEL}={default}, unless this cluster runs only virtual machines on its GPUs",
        ),
    )


def _unlabelled_finding(site: PodSpecSite, nodes: list[NodeInfo], total: int) -> Diagnostic:
    """GPU nodes the GPU operator does not take for GPU nodes (operator_nodes_unlabelled): its operands, the device
    plugin among them, never run there and they never advertise nvidia.com/gpu."""
    return Diagnostic(
        RULE_ID,
        site.path,
        f"the GPU operator makes none of this ClusterPolicy's DaemonSets on {len(nodes)} of the {total} NVIDIA GPU "
        f"node(s) ({node_names(nodes, SHOWN_NODES)}), which carry no node-feature-discovery label while nothing "
        "here runs node feature discovery",
        severity=Severity.WARNING,
        notes=(
            "the GPU operator deploys its operands only on nodes NFD labels with an NVIDIA PCI device "
            "(feature.node.kubernetes.io/pci-10de.present) or labelled nvidia.com/gpu.present=true; elsewhere it "
            "logs: Could not get any nodes to match nvidia.com/gpu.present label",
            "install NFD (the gpu-operator chart's nfd.enabled, true by default, or the NFD operator), or label "
            "the GPU nodes nvidia.com/gpu.present=true",
        ),
    )


def _runtime_class_placement(site: PodSpecSite, placement: RuntimeClassPlacement) -> Iterator[Diagnostic]:
    """The nodes where the pods the controller makes (from the template alone) and the pods the RuntimeClass
    admission plugin lets through part ways (RuntimeClassPlacement)."""
    name, where = placement.name, (*site.path, "runtimeClassName")
    if placement.pending:
        yield Diagnostic(
            RULE_ID,
            where,
            f"the DaemonSet controller makes pods on {len(placement.pending)} node(s) RuntimeClass {name}'s "
            f"scheduling.nodeSelector excludes ({_names(list(placement.pending))}): they stay Pending",
            notes=(
                "the controller picks nodes from the pod template alone; the RuntimeClass admission plugin adds "
                "the class's nodeSelector to each pod it makes, and the scheduler then finds: node(s) didn't match "
                "Pod's node affinity/selector",
                f"give the template the nodeSelector of RuntimeClass {name} (and the tolerations it needs)",
            ),
            on_key=True,
        )
    if placement.skipped:
        yield Diagnostic(
            RULE_ID,
            where,
            f"the DaemonSet controller makes no pod on {len(placement.skipped)} node(s) only RuntimeClass {name}'s "
            f"scheduling.tolerations admit ({_names(list(placement.skipped))}): it checks the template's tolerations",
            notes=(f"copy the tolerations of RuntimeClass {name} into the pod template",),
            on_key=True,
            severity=Severity.WARNING,
        )


def _resource_plugin(obj: KubeObject, site: PodSpecSite, resolver: Resolver) -> Iterator[Diagnostic]:
    """A device plugin of a resource GPU jobs ask for beside their GPUs (the EFA plugin's vpc.amazonaws.com/efa)
    that runs on none of the nodes where the linted pods asking for that resource can run (every filter passed
    but the resource itself): no node there will advertise it, and the pods stay Pending (aws-do-eks#56: an
    instance-type allowlist without p5en.48xlarge). Said only when it covers none of them: a workload that may
    also run on nodes the plugin leaves out (types without EFA) is not a failure."""
    found = resource_plugin(site.spec)
    if found is None:
        return
    resource, plugin = found
    pod = daemon_pod(obj.kind, site.spec, resolver)
    target: dict[str, NodeInfo] = {}
    askers: list[str] = []
    for other in resolver.linted:
        for other_site in other.facts.sites():
            asking = gpu_pod_requirements(other.kind, other_site, resolver, other.facts)
            if asking is None or asking.requests.get(resource, 0) <= 0:
                continue
            without = replace(asking, requests={k: v for k, v in asking.requests.items() if k != resource})
            nodes = resolver.model.evaluate(without).fitting
            if nodes:
                askers.append(f"{other.kind} {other.ref.name}")
                target.update((node.name, node) for node in nodes)
    if not target:
        return
    covered = coverage(pod, target.values())
    if covered.runs:
        return
    nodes = list(target.values())
    selection = bool(covered.outside_selection)
    why = "its nodeSelector/required node affinity leaves them out" if selection else _blocked_reasons(covered, False)
    yield Diagnostic(
        RULE_ID,
        _selection_path(site) if selection else _tolerations_path(site),
        f"the {plugin} runs on none of the {len(nodes)} nodes where {', '.join(sorted(set(askers)))} can run "
        f"({node_names(nodes)}): {why}",
        notes=(
            f"no node there advertises {resource}, so pods asking for it stay Pending (Insufficient {resource})",
            "let the plugin's node affinity or selector take these nodes (an instance-type allowlist needs the "
            "new types), or its tolerations their taints",
        ),
        severity=Severity.WARNING,
    )


def _device_config(obj: KubeObject, resolver: Resolver) -> Iterator[Diagnostic]:
    """An AMD GPU operator DeviceConfig whose spec.selector (the node selector of the device plugin, node
    labeller and driver it deploys) matches none of the inventory's AMD GPU nodes. Not said when a component sets
    a selector of its own, or node pools may add nodes."""
    spec = mapping(obj.data.get("spec"))
    selector = mapping(spec.get("selector"))
    components = [mapping(spec.get(key)) for key in ("devicePlugin", "driver")]
    if not selector or resolver.pools or any("selector" in str(k).lower() for c in components for k in c):
        return
    wanted = {str(k): v for k, v in selector.items()}
    if not all(isinstance(v, str) for v in wanted.values()):
        return
    amd = gpu_nodes(resolver.nodes, AMD)
    if not amd or any(all(node.labels.get(k) == v for k, v in wanted.items()) for node in amd):
        return
    shown = ", ".join(f"{k}={v}" for k, v in wanted.items())
    labels = sorted({k for node in amd for k in node.labels if k.startswith("feature.node.kubernetes.io/amd-")})
    yield Diagnostic(
        RULE_ID,
        ("spec", "selector"),
        f"this DeviceConfig selects 0 of {len(amd)} nodes with AMD GPUs ({_names(amd)}): spec.selector {shown} "
        "matches none of them, so the operator runs no device plugin there and they advertise no amd.com/gpu",
        notes=(
            *((f"the AMD GPU nodes carry {', '.join(labels)} (amd-vgpu: SR-IOV virtual functions)",) if labels else ()),
            "select a label the GPU nodes carry; a node with virtual functions needs a DeviceConfig of its own",
        ),
        on_key=True,
        severity=Severity.WARNING,
    )


def _chart_findings(release: ChartRelease, resolver: Resolver) -> Iterator[Diagnostic]:
    """A GPU stack chart installed by a HelmRelease or an Application: its values' tolerations (the chart's
    default when they set none) against the GPU nodes and pools."""
    verdict, blocks = chart_verdict(release, resolver)
    key = ".".join(release.daemons.tolerations)
    path = release.path[:-1] if release.written else release.path
    site = PodSpecSite(path, {"tolerations": release.tolerations} if release.written else {}, None, "", ())
    who = f"the {release.chart} chart's {release.daemons.title}"
    verb = "selects" if release.daemons.title != "DaemonSets" else "select"
    fix_at = f"the values' {key}" + ("" if release.written else " (the chart's default list is replaced)")
    reported: set[Taint] = set()
    if verdict is not None and verdict.coverage.blocked:
        reported = set(verdict.coverage.blocked)
        found = _finding(site, verdict, who, verb, fix_at, named=False)
        if found is not None:
            yield found
    yield from _pool_findings(site, release.daemons.component, blocks, reported, resolver, who, named=False)


def _pool_findings(
    site: PodSpecSite,
    component: StackComponent,
    blocks: list[PoolBlock],
    reported: set[Taint],
    resolver: Resolver,
    who: str = "this DaemonSet",
    named: bool = True,
) -> Iterator[Diagnostic]:
    """A pool whose new GPU nodes the GPU infrastructure never reaches (a taint the nodes' finding names already
    is not said again): its GPUs are never advertised, so the pods that made the autoscaler add the node wait."""
    for block in blocks:
        if block.taint in reported:
            continue
        taint = describe_taint(block.taint)
        consequence = (
            "no GPU there is ever advertised: the GPU pods the pool's nodes are added for stay Pending"
            if component.advertises
            else "the GPUs of its nodes go without it"
        )
        assumed = resolver.cluster_assumed
        yield Diagnostic(
            RULE_ID,
            _tolerations_path(site),
            f"{who}{f' ({component.name})' if named else ''} cannot run on the nodes {block.pool.title} adds: "
            f"they carry the untolerated taint {taint}",
            on_key="tolerations" in site.spec,
            severity=Severity.ERROR if pools_refuse(component, resolver) else Severity.WARNING,
            notes=(
                consequence,
                f"add a toleration for {taint} if it belongs there",
                *((f"the pool is read from {block.pool.spec.file}: assumed to be this cluster's",) if assumed else ()),
            ),
        )


def _finding(
    site: PodSpecSite,
    verdict: DaemonSetVerdict,
    who: str = "this DaemonSet",
    verb: str = "selects",
    fix_at: str = "its pod template",
    named: bool = True,
) -> Diagnostic | None:
    cover = verdict.coverage
    total = len(cover.target)
    subject = who + (f" ({verdict.component.name})" if verdict.component and named else "")
    if cover.blocked:
        severity = Severity.ERROR if verdict.reaches_none else Severity.WARNING
        why = _blocked_reasons(cover)
        consequence = _consequence(verdict)
        head = f"{subject} {verb} {len(cover.runs)} of {total} {verdict.expected}"
        brief = first_line(f"{head}: {why}", f"{head}: {_blocked_reasons(cover, names=False)}", head)
        return Diagnostic(
            RULE_ID,
            _tolerations_path(site),
            brief,
            on_key="tolerations" in site.spec,
            severity=severity,
            notes=(
                *(() if brief == f"{head}: {why}" else (why,)),
                *((consequence.removeprefix(" - "),) if consequence else ()),
                f"add a toleration for {_taint_list(cover)} to {fix_at} if it belongs there",
            ),
        )
    if verdict.selects_none:
        return Diagnostic(
            RULE_ID,
            _selection_path(site),
            f"{subject} selects 0 of {total} {verdict.expected}: its nodeSelector/required node affinity "
            "matches none of them",
            notes=(
                f"not selected: {_names(cover.outside_selection)}; the GPUs there stay unusable until it runs on them",
            ),
            on_key=True,
            severity=Severity.WARNING,
        )
    return None


def _blocked_reasons(cover: Coverage, names: bool = True) -> str:
    parts = []
    everything = not cover.runs and not cover.outside_selection
    for taint, count in cover.taints_by_count():
        nodes = cover.blocked[taint]
        who = ("all" if len(cover.blocked) == 1 else f"{count}") if everything else f"{count}"
        verb = "carries" if count == 1 and who != "all" else "carry"
        parts.append(
            f"{who} {verb} the untolerated taint {describe_taint(taint)}" + (f" ({_names(nodes)})" if names else "")
        )
    reasons = "; ".join(parts)
    if cover.outside_selection:
        reasons += f"; {len(cover.outside_selection)} are outside its node selection"
    return reasons


def _consequence(verdict: DaemonSetVerdict) -> str:
    component = verdict.component
    if component is None or not component.advertises:
        return ""
    silent = [node for node in verdict.coverage.blocked_nodes() if not advertises_gpus(node, component.vendor)]
    if not silent:
        return ""
    verb = "advertises" if len(silent) == 1 else "advertise"
    return f" - {len(silent)} of them {verb} no GPU resource, so no GPU pod can be scheduled there"


def _taint_list(cover: Coverage) -> str:
    return ", ".join(describe_taint(taint) for taint, _ in cover.taints_by_count())


def _names(nodes: list[NodeInfo]) -> str:
    return node_names(nodes, SHOWN_NODES)


def _tolerations_path(site: PodSpecSite) -> Path:
    return (*site.path, "tolerations") if "tolerations" in site.spec else site.path


def _selection_path(site: PodSpecSite) -> Path:
    if "nodeSelector" in site.spec:
        return (*site.path, "nodeSelector")
    if "affinity" in site.spec:
        return (*site.path, "affinity")
    return (*site.path, "nodeName") if "nodeName" in site.spec else site.path
