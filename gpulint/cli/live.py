"""The cluster a command reads: `--live-inventory` (with --kubeconfig, --context, --live-pods) or the
configured inventory (``--inventory`` / ``inventory:``), for check, explain and inventory alike.

``live_options`` turns the four options into one value, a ``LiveCluster`` or None, passed to the
command as ``live``; ``load_cluster`` is the one loader every command reads its inventory with. The
live read uses the same discovery and lists as the webhook's live inventory
(gpulint/lint/world/live_inventory.py); the objects then go through the same inventory loader as
``--inventory`` files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # imported when used: `gpulint rules` does not pay for the inventory's modules
    from gpulint.lint.config import ClusterScope, Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.world.inventory import ClusterInventory, Inspect


@dataclass(frozen=True)
class LiveCluster:
    kubeconfig: str | None = None
    context: str | None = None
    pods: bool = True  # one read: running pods are worth their cost ("does not fit now")


_OPTIONS = (
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


def live_options(command: Callable[..., None]) -> Callable[..., None]:
    """--live-inventory, --kubeconfig, --context, --live-pods/--no-live-pods, given to ``command`` as one
    keyword argument, ``live``: a LiveCluster, or None without --live-inventory."""

    @functools.wraps(command)
    def with_live(
        *args: Any,
        live_inventory: bool,
        kubeconfig: str | None,
        kube_context: str | None,
        live_pods: bool,
        **kwargs: Any,
    ) -> None:
        command(*args, live=live_cluster(live_inventory, kubeconfig, kube_context, live_pods), **kwargs)

    wrapped: Callable[..., None] = with_live
    for option in reversed(_OPTIONS):
        wrapped = option(wrapped)
    return wrapped


def live_cluster(
    live_inventory: bool, kubeconfig: str | None, kube_context: str | None, pods: bool
) -> LiveCluster | None:
    if not live_inventory:
        if kubeconfig or kube_context:
            raise click.UsageError("--kubeconfig and --context are options of --live-inventory")
        return None
    return LiveCluster(kubeconfig, kube_context, pods)


def check_live_or_files(config: Config, live: LiveCluster | None) -> None:
    """The cluster comes from one place: the API server or the inventory files, never both."""
    if live is not None and config.inventory:
        raise click.UsageError("--live-inventory reads the cluster: give it or --inventory (or 'inventory:'), not both")


def load_cluster(
    config: Config, live: LiveCluster | None, sources: list[Source] | None = None, inspect: Inspect | None = None
) -> tuple[ClusterInventory | None, list[Source]]:
    """The cluster read now (``live``), else the configured inventory (from ``sources`` when the caller
    has read them already, each file's data shown to ``inspect``), else None; with the sources it came
    from. InventoryError (exit 2) when it cannot be read."""
    if live is not None:
        return read_live(live)
    if not config.inventory:
        return None, []
    from gpulint.lint.world.inventory import load_configured_inventory

    return load_configured_inventory(config, sources, inspect), list(sources or ())


def load_scoped(config: Config) -> list[tuple[ClusterScope, ClusterInventory | None]]:
    """Each cluster of ``clusters:`` with its inventory read; InventoryError (exit 2) when one cannot be read."""
    if not config.clusters:
        return []
    from gpulint.lint.world.inventory import load_inventory
    from gpulint.lint.world.node_catalog import load_catalog

    catalog = load_catalog(config.node_catalog)
    return [
        (scope, load_inventory(list(scope.inventory), None, catalog, config.extended_resource_toleration))
        if scope.inventory
        else (scope, None)
        for scope in config.clusters
    ]


def read_live(cluster: LiveCluster) -> tuple[ClusterInventory, list[Source]]:
    """The cluster's inventory and the sources it was read from; InventoryError (exit 2) when it cannot be read."""
    from gpulint.lint.world.inventory import InventoryError, load_inventory
    from gpulint.lint.world.live_inventory import (
        LiveInventoryError,
        Transport,
        api_configuration,
        partial_kinds,
        read_cluster,
        selected_apis,
    )

    apis = selected_apis(cluster.pods)
    try:
        transport = Transport(api_configuration(cluster.kubeconfig, cluster.context))
        sources, kinds = read_cluster(transport, apis)
    except LiveInventoryError as exc:
        raise InventoryError(f"--live-inventory: {exc}") from None
    inventory = load_inventory([source.display for source in sources], sources)
    inventory.listed_kinds = (inventory.listed_kinds - partial_kinds(apis)) | kinds  # one ConfigMap read: not all
    return inventory, sources
