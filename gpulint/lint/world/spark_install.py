"""Whether the Spark operator's mutating webhook runs, as the linted files set it (kube/spark.py; the inventory's
operator Deployments are read in inventory.py): the v1 operator Deployment's ``-enable-webhook`` flag, or a release of
the ``spark-operator`` chart that writes ``webhook.enable``. A repository may hold several clusters' installs: the
switch is known only when all agree."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpulint.kube import spark
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.world.chart_releases import CHART_INSTALLERS, chart_values


def spark_switches(linted: LintedSet) -> tuple[spark.WebhookSwitch, ...]:
    """Every setting of the switch the linted files write (once per linted set)."""
    found: tuple[spark.WebhookSwitch, ...] = linted.fact("spark webhook switches", _switches, linted)
    return found


def _switches(linted: LintedSet) -> tuple[spark.WebhookSwitch, ...]:
    found: list[spark.WebhookSwitch] = []
    for obj in linted.of_kind("apps", "Deployment"):
        where = f"Deployment {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        switch = spark.deployment_switch(obj.data, where)
        if switch is not None:
            found.append(switch)
    for group, kind in CHART_INSTALLERS:
        for obj in linted.of_kind(group, kind):
            for given in chart_values(obj.data):
                if given.chart != spark.CHART:
                    continue
                switch = spark.values_switch(given.values, f"{kind} {obj.ref.name}")
                if switch is None or given.outside("webhook"):
                    found.append(spark.WebhookSwitch(True, ""))  # not written here, or maybe elsewhere: not known
                else:
                    found.append(switch)
    return tuple(found)


def webhook_off(switches: Iterable[spark.WebhookSwitch]) -> str:
    """Where the switch is set off, when every install found sets it off ("": on, unknown or none found)."""
    listed = list(switches)
    if not listed or any(s.enabled for s in listed):
        return ""
    return "; ".join(dict.fromkeys(s.where for s in listed))


def bound(data: dict[str, Any], switches: Iterable[spark.WebhookSwitch]) -> dict[str, Any]:
    where = webhook_off(switches)
    return spark.BoundSparkApplication(data, where) if where else data
