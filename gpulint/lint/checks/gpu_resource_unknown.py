"""gpu-resource-unknown: an extended resource that no node publishes and no DeviceClass backs."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from gpulint.kube.resources import device_plugin_resource, is_extended, scheduler_managed
from gpulint.kube.typos import typo_of
from gpulint.kube.workloads import PodSpecSite, site_resources
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import Need, RuleSpec, Scope
from gpulint.lint.verdicts.scheduling import resource_names_unproven
from gpulint.lint.verdicts.shared import emptied_offers, silent_gpu_nodes
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec(
    "gpu-resource-unknown", Severity.ERROR, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, of_pods=True
)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    inventory = ctx.cluster
    if inventory is None:
        return
    published = inventory.published_resources  # some node has it: known, whatever else is (most names)
    known: AbstractSet[str] | None = None  # worked out for the first name no node publishes
    extended_known: list[str] = []
    for block in site_resources(site):
        shares: list[tuple[Path, str, str]] = []  # (path, name, plugin): one finding for a container's shares
        for section, values in (("limits", block.limits), ("requests", block.requests)):
            for name in values:
                if name in published or not is_extended(name):
                    continue
                if known is None:
                    known = inventory.offered_resources | inventory.dra_extended_resources().keys()
                    extended_known = sorted(name for name in known if is_extended(name))
                if name in known:
                    continue
                if name in emptied_offers(inventory):
                    continue  # a pool would offer it but for a requirement of its own: gpu-unschedulable's
                if section == "requests" and name in block.limits:
                    continue  # reported once, at the limit
                share = scheduler_managed(name)  # explain's step 1 asks the same
                if share:
                    shares.append(((*block.path, section, name), name, share))
                    continue
                plugin = device_plugin_resource(name)
                renamed = f"{name}.shared"
                # a real device plugin's resource is never a typo of another one; its shared copy is the rename
                close = renamed if renamed in published else None if plugin else typo_of(name, extended_known)
                hint = f"; did you mean {close}?" if close else ""
                shared = (RENAMED_SHARE.format(name=name, renamed=renamed),) if close == renamed else ()
                asked = f"{name} (advertised by {plugin.plugin})" if plugin else name
                offered = ", ".join(extended_known[:8]) or "none"
                total = len(inventory.nodes)
                unproven = resource_names_unproven(inventory, obj.document.path)
                if unproven:
                    yield Diagnostic(
                        RULE_ID,
                        (*block.path, section, name),
                        f"container '{block.container}' asks for {asked}, which {_none_of(total)} publishes"
                        f"{' and no node pool offers' if inventory.pools else ''}{hint}",
                        notes=(
                            *shared,
                            unproven,
                            *((silent,) if (silent := silent_gpu_nodes(name, inventory).strip()) else ()),
                        ),
                        on_key=True,
                        # node groups of the cluster's own Terraform that no linted file describes: unknown
                        severity=Severity.INFO if inventory.pools_elsewhere else Severity.WARNING,
                        pinned=True,  # no proof either way: raising the rule must not make it an error
                    )
                    continue
                pools = (
                    f", no node pool's instance types offer ({len(inventory.pools)} pools)" if inventory.pools else ""
                )
                silent = silent_gpu_nodes(name, inventory).strip()
                lead = f"container '{block.container}' asks for {asked}, which {_none_of(total)}"
                full = f"{lead} publishes{pools} and no DeviceClass backs{hint}"
                brief = first_line(full, f"{lead} publishes{' or its node pools offer' if pools else ''}{hint}")
                yield Diagnostic(
                    RULE_ID,
                    (*block.path, section, name),
                    brief,
                    notes=(
                        *(
                            ()
                            if brief == full
                            else (f"{pools.lstrip(', ') or 'no node publishes it'}, and no DeviceClass backs it",)
                        ),
                        f'the pod would stay Pending with "0/{total} nodes are available: {total} Insufficient {name}."',
                        f"extended resources in this cluster: {offered}",
                        *shared,
                        *((silent,) if silent else ()),
                        "a DeviceClass backs an extended resource with spec.extendedResourceName",
                    ),
                    on_key=True,
                )
        if shares:
            yield _scheduler_managed(block.container, shares, inventory)


# NVIDIA/k8s-device-plugin api/config/v1 replicas.go (ReplicatedResources.UnmarshalJSON: with renameByDefault a
# resource's Rename is ResourceName.DefaultSharedRename, its name + ".shared"); the README's shared access section.
RENAMED_SHARE = (
    "the nodes publish {renamed}: the device plugin's time-slicing or MPS config with renameByDefault: true "
    "renames the shared {name}, so only {renamed} can be asked for"
)

KARPENTER_EXTENDED = (
    "Karpenter and Cluster Autoscaler judge a new node by its instance type or template, which carries no such "
    "resource, so neither adds a node for the pod (kubernetes-sigs/karpenter#751; HAMi's scale-up design, "
    "docs/develop/dry-run-filter-design.md); a node that runs the plugin already can still take it"
)


def _scheduler_managed(container: str, shares: list[tuple[Path, str, str]], inventory: Resolver) -> Diagnostic:
    """Shares a scheduler extender accounts for: nodes never publish them, so their absence proves nothing; with
    node pools, no new node carries them, so a pod no existing node serves waits (a warning, never an error).
    Reported once per container, at the first."""
    path, _, plugin = shares[0]
    names = [name for _, name, _ in shares]
    name = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    share, it = (f"a {plugin} share", "it") if len(names) == 1 else (f"{plugin} shares", "them")
    managed = (
        f"{plugin}'s scheduler extender accounts for {it} (ignoredByScheduler: NodeResourcesFit skips {it}); "
        f"nodes do not publish {it}"
    )
    if not inventory.pools:
        return Diagnostic(
            RULE_ID,
            path,
            f"container '{container}' asks for {name}, {share} no node publishes: only "
            f"{plugin}'s scheduler can place the pod",
            notes=(managed,),
            on_key=True,
            severity=Severity.INFO,
            pinned=True,
        )
    return Diagnostic(
        RULE_ID,
        path,
        f"container '{container}' asks for {name}, {share} that no node pool's instance types offer: no pool "
        "adds a node for the pod",
        notes=(managed, KARPENTER_EXTENDED),
        on_key=True,
        severity=Severity.WARNING,
        pinned=True,
    )


def _none_of(nodes: int) -> str:
    """With nodes known, how many; with node pools only (no inventory of nodes), not "none of the 0 nodes"."""
    return f"none of the {nodes} nodes in the inventory" if nodes else "no known node"
