"""`--live-inventory` for check, explain and inventory: the cluster as it is now, read once.

The same discovery and lists as the webhook's live inventory (gpulint/lint/live_inventory.py);
the objects then go through the same inventory loader as ``--inventory`` files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported when used: `gpulint rules` does not pay for the inventory's modules
    from gpulint.lint.inventory import ClusterInventory
    from gpulint.lint.sources import Source


@dataclass(frozen=True)
class LiveCluster:
    kubeconfig: str | None = None
    context: str | None = None
    pods: bool = True  # one read: running pods are worth their cost ("does not fit now")


def live_options(command: Callable[..., None]) -> Callable[..., None]:
    """--live-inventory, --kubeconfig, --context, --live-pods/--no-live-pods."""
    for option in reversed(
        (
            click.option(
                "--live-inventory",
                is_flag=True,
                help="Read the inventory from the cluster now (the current kubeconfig context, or --context): "
                "the API versions it serves, its Nodes, DRA objects, gang objects and running Pods.",
            ),
            click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig for --live-inventory."),
            click.option("--context", "kube_context", help="Kubeconfig context for --live-inventory."),
            click.option(
                "--live-pods/--no-live-pods",
                default=True,
                show_default=True,
                help="With --live-inventory: read running Pods too (what is in use now).",
            ),
        )
    ):
        command = option(command)
    return command


def live_cluster(
    live_inventory: bool, kubeconfig: str | None, kube_context: str | None, pods: bool
) -> LiveCluster | None:
    if not live_inventory:
        if kubeconfig or kube_context:
            raise click.UsageError("--kubeconfig and --context are options of --live-inventory")
        return None
    return LiveCluster(kubeconfig, kube_context, pods)


def read_live(cluster: LiveCluster) -> tuple[ClusterInventory, list[Source]]:
    """The cluster's inventory and the sources it was read from; InventoryError (exit 2) when it cannot be read."""
    from gpulint.lint.inventory import InventoryError, load_inventory
    from gpulint.lint.live_inventory import (
        LiveInventoryError,
        Transport,
        api_configuration,
        read_cluster,
        selected_apis,
    )

    try:
        transport = Transport(api_configuration(cluster.kubeconfig, cluster.context))
        sources, kinds = read_cluster(transport, selected_apis(cluster.pods))
    except LiveInventoryError as exc:
        raise InventoryError(f"--live-inventory: {exc}") from None
    inventory = load_inventory([source.display for source in sources], sources)
    inventory.listed_kinds |= kinds
    return inventory, sources
