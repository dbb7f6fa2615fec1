"""Whether the Spark operator's mutating webhook runs, as the linted files set it (kube/spark.py; the inventory's
operator Deployments are read in inventory.py): the v1 operator Deployment's ``-enable-webhook`` flag, or a release of
the ``spark-operator`` chart that writes ``webhook.enable`` (the walk is chart_releases.operator_installs), or the v2
chart rendered here, whose render holds its pod webhook's MutatingWebhookConfiguration exactly when the webhook is
on. A repository may hold several clusters' installs: the switch is known only when all agree."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpulint.kube import mutating_webhooks, spark
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.world.chart_releases import ChartValues, ReleaseReader, operator_installs

Placed = tuple[spark.WebhookSwitch, str]  # a setting of the switch, and where it is written ("HelmRelease spark")


def spark_switches(linted: LintedSet) -> tuple[Placed, ...]:
    """Every setting of the switch the linted files write (once per linted set)."""
    found: tuple[Placed, ...] = linted.fact("spark webhook switches", _switches, linted)
    return found


def _switches(linted: LintedSet) -> tuple[Placed, ...]:
    return (*operator_installs(linted, SPARK), *_rendered_switches(linted))


def _rendered_switches(linted: LintedSet) -> list[Placed]:
    """The switch of each render (a chart, or an overlay inflating it) that makes the v2 chart's controller: the
    render's whole output is linted with it, so its MutatingWebhookConfigurations are the release's."""
    renders = dict.fromkeys(
        obj.render for obj in linted.of_kind("apps", "Deployment") if obj.render and spark.chart_controller(obj.data)
    )
    configurations = linted.of_kind(mutating_webhooks.GROUP, mutating_webhooks.KIND)
    return [
        (spark.configurations_switch(c.data for c in configurations if c.render == render), f"the render of {render}")
        for render in renders
    ]


def _deployment_switches(data: dict[str, Any]) -> tuple[spark.WebhookSwitch, ...]:
    switch = spark.deployment_switch(data)
    return () if switch is None else (switch,)


def _chart_switch(_data: dict[str, Any], given: ChartValues) -> spark.WebhookSwitch | None:
    if given.chart != spark.CHART:
        return None
    switch = spark.values_switch(given.values)
    if switch is None or given.outside("webhook"):
        return spark.NOT_KNOWN  # not written here, or maybe elsewhere
    return switch


SPARK = ReleaseReader(_deployment_switches, _chart_switch)


def webhook_off(switches: Iterable[Placed]) -> str:
    """Where the switch is set off, when every install found sets it off ("": on, unknown or none found)."""
    listed = list(switches)
    if not listed or any(switch.enabled for switch, _ in listed):
        return ""
    return "; ".join(dict.fromkeys(f"{where} {switch.words}" for switch, where in listed))


def bound(data: dict[str, Any], switches: Iterable[Placed]) -> dict[str, Any]:
    where = webhook_off(switches)
    return spark.BoundSparkApplication(data, where) if where else data
