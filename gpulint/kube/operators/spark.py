"""Spark's own refusal of a resource it is asked to request without its vendor.

Spark on Kubernetes (apache/spark v3.5.0 resource-managers/kubernetes: KubernetesUtils.buildResourcesQuantities for
the driver, BasicExecutorFeatureStep for the executors) makes each ``spark.<role>.resource.<name>.amount`` a
container limit ``<vendor>/<name>`` and throws ``Resource: <name> was requested, but vendor was not specified.``
when ``spark.<role>.resource.<name>.vendor`` is not set (the vendor config is read on Kubernetes only, since
Spark 3.0: SPARK-27362). The Spark operator passes ``spec.sparkConf`` to spark-submit as ``--conf``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, text
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.spark import GROUP, KINDS

__all__ = ["GROUP", "KINDS", "refusals"]

ROLES = {
    "driver": "spark-submit fails while it builds the driver pod: the application fails at submission",
    "executor": "the driver fails each time it builds an executor pod: no executor is made",
}


def _missing_vendor(app: dict[str, Any], at: tuple[str, ...]) -> Iterator[Refusal]:
    spec = mapping(dig(app, *at))
    if text(spec.get("sparkVersion")).startswith(("1.", "2.")) or spec.get("sparkConfigMap"):
        return  # before Spark 3.0 the keys mean nothing; a mounted spark-defaults.conf may name the vendor
    conf = mapping(spec.get("sparkConf"))
    for key in conf:
        for role, fails in ROLES.items():
            prefix = f"spark.{role}.resource."
            if not (isinstance(key, str) and key.startswith(prefix) and key.endswith(".amount")):
                continue
            name = key[len(prefix) : -len(".amount")]
            if name and not text(conf.get(f"{prefix}{name}.vendor")):
                words = f"Resource: {name} was requested, but vendor was not specified."
                yield Refusal((*at, "sparkConf", key), "Spark", words, controller=fails)


def refusals(submitted: Submitted) -> list[Refusal]:
    at = ("spec", "template") if submitted.kind == "ScheduledSparkApplication" else ("spec",)
    return list(_missing_vendor(submitted.data, at))
