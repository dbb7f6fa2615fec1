"""The Spark operator: the driver and executor pods of a SparkApplication, and what its webhook adds to them.

Sources, kubeflow/spark-operator v2.5.2: api/v1beta2/sparkapplication_types.go (SparkPodSpec: cores, coreRequest,
coreLimit, memory, memoryOverhead, gpu {name, quantity}, instances; ScheduledSparkApplication's spec.template is a
SparkApplicationSpec); internal/controller/sparkapplication/submission.go (cores, memory, instances and the
application's spec.nodeSelector reach Spark as --conf; below Spark 3.0.0 or without the role's ``template`` the pod
is labelled ``sparkoperator.k8s.io/mutated-by-spark-operator`` for the webhook); internal/webhook/
sparkpod_defaulter.go (mutateSparkPod: the role's env, volumeMounts, hostNetwork, initContainers, sidecars,
priorityClassName, schedulerName, nodeSelector, affinity, tolerations, memoryLimit, gpu, securityContext and
podSecurityContext reach the pod only through this mutating webhook). The switch: the chart's ``webhook.enable``
(charts/spark-operator-chart/values.yaml, true since v2; GoogleCloudPlatform/spark-on-k8s-operator v1beta2-1.3.8
chart: false) and, before v2, the operator's ``-enable-webhook`` flag (main.go, default false). Where it lands: the
pod webhook of a MutatingWebhookConfiguration, ``mutate--v1-pod.sparkoperator.k8s.io`` from v2 (the chart's
templates/webhook/mutatingwebhookconfiguration.yaml, v2.0.0-v2.5.2, rendered only under ``webhook.enable``; the
webhook server only patches its caBundle: internal/controller/mutatingwebhookconfiguration), and
``webhook.sparkoperator.k8s.io`` before (v1beta2-1.3.8-3.1.1 pkg/webhook/webhook.go: the operator registers it
itself as ``spark-webhook-config`` under ``-enable-webhook``).

Spark's own pod building (apache/spark v3.5.0 resource-managers/kubernetes BasicExecutorFeatureStep,
BasicDriverFeatureStep, KubernetesUtils.buildResourcesQuantities): cpu request = coreRequest or cores (default 1),
cpu limit = coreLimit, memory request and limit = memory (default 1g) + overhead (memoryOverhead, else the larger
of the overhead factor's share and 384 MiB; the factor spark.<role>.memoryOverheadFactor, else
spark.kubernetes.memoryOverheadFactor, else 0.4 for a Python or R application and 0.1 for the JVM's:
NON_JVM_MEMORY_OVERHEAD_FACTOR), the role's settings falling back to their sparkConf keys, and each
``spark.<role>.resource.<name>.amount`` with its ``.vendor`` a limit ``<vendor>/<name>``. Executors: instances,
else spark.executor.instances, else 2 (SchedulerBackendUtils.DEFAULT_NUMBER_EXECUTORS); unknown with dynamic
allocation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import decimal, dig, integer, mapping, sequence, text
from gpulint.kube.pod_views import PodView, ViewBuilder
from gpulint.kube.refs import Path

GROUP = "sparkoperator.k8s.io"
KINDS = ("SparkApplication", "ScheduledSparkApplication")
CHART = "spark-operator"
CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}
# SparkPodSpec fields only the mutating webhook puts in the pod (mutateSparkPod): pod spec field -> role field
WEBHOOK_POD_FIELDS = (
    ("nodeSelector", "nodeSelector"),
    ("affinity", "affinity"),
    ("tolerations", "tolerations"),
    ("schedulerName", "schedulerName"),
    ("priorityClassName", "priorityClassName"),
    ("hostNetwork", "hostNetwork"),
    ("securityContext", "podSecurityContext"),
)
WEBHOOK_OFF_NOTE = (
    "the Spark operator's mutating webhook is off ({where}): the {role}'s {fields} never reach its pods "
    "(they are applied by the webhook only)"
)
_JAVA_MEMORY = re.compile(r"^\s*(\d+)\s*([kmgtp]?)b?\s*$", re.IGNORECASE)
_MIB_PER_UNIT = {"": 1.0, "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0**2, "p": 1024.0**3}
MIN_OVERHEAD_MIB = 384
OVERHEAD_FACTOR = 0.1
NON_JVM_OVERHEAD_FACTOR = 0.4
DEFAULT_EXECUTORS = 2


class BoundSparkApplication(dict[str, Any]):
    """A SparkApplication (or ScheduledSparkApplication) with its operator's webhook known off: ``where`` names
    the setting that says so."""

    def __init__(self, data: dict[str, Any], where: str) -> None:
        super().__init__(data)
        self.webhook_off = where


def _java_mib(value: Any) -> int | None:
    """A Java memory string (``4g``, ``512m``; no unit: MiB) in MiB."""
    found = _JAVA_MEMORY.match(str(value)) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if found is None:
        return None
    return int(int(found.group(1)) * _MIB_PER_UNIT[found.group(2).lower()])


def _conf(app: dict[str, Any]) -> dict[str, Any]:
    return mapping(app.get("sparkConf"))


def _count(value: Any, default: int | None) -> int | None:
    """An integer field, or a sparkConf value (text)."""
    return decimal(value.strip()) if isinstance(value, str) else integer(value, default)


def _setting(app: dict[str, Any], pod_spec: dict[str, Any], field: str, conf_key: str) -> Any:
    """A role's setting: its SparkPodSpec field, else the sparkConf key (the operator passes sparkConf first, then
    the role's fields as --conf: the field wins)."""
    written = pod_spec.get(field)
    return written if written not in (None, "") else _conf(app).get(conf_key)


def _overhead_factor(app: dict[str, Any], role: str) -> float:
    for value in (
        _conf(app).get(f"spark.{role}.memoryOverheadFactor"),
        app.get("memoryOverheadFactor"),  # passed as spark.kubernetes.memoryOverheadFactor, after sparkConf
        _conf(app).get("spark.kubernetes.memoryOverheadFactor"),
    ):
        try:
            factor = float(str(value))
        except ValueError:
            continue
        if 0 < factor < 1:
            return factor
    return NON_JVM_OVERHEAD_FACTOR if text(app.get("type")) in ("Python", "R") else OVERHEAD_FACTOR


def _resources(app: dict[str, Any], role: str, pod_spec: dict[str, Any], webhook: bool) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    cores = _count(_setting(app, pod_spec, "cores", f"spark.{role}.cores"), 1) or 1
    requests["cpu"] = text(_setting(app, pod_spec, "coreRequest", f"spark.kubernetes.{role}.request.cores")) or str(
        cores
    )
    core_limit = text(_setting(app, pod_spec, "coreLimit", f"spark.kubernetes.{role}.limit.cores"))
    if core_limit:
        limits["cpu"] = core_limit
    memory = _java_mib(_setting(app, pod_spec, "memory", f"spark.{role}.memory") or "1g")
    if memory is not None:
        written = _setting(app, pod_spec, "memoryOverhead", f"spark.{role}.memoryOverhead")
        overhead = _java_mib(written) if written not in (None, "") else None
        if overhead is None:
            overhead = max(math.floor(memory * _overhead_factor(app, role)), MIN_OVERHEAD_MIB)
        requests["memory"] = limits["memory"] = f"{memory + overhead}Mi"
    conf = _conf(app)
    prefix = f"spark.{role}.resource."
    for key, amount in conf.items():
        if isinstance(key, str) and key.startswith(prefix) and key.endswith(".amount"):
            name = key[len(prefix) : -len(".amount")]
            vendor = text(conf.get(f"{prefix}{name}.vendor"))
            if vendor and name:
                limits[f"{vendor}/{name}"] = amount
    gpu = mapping(pod_spec.get("gpu"))
    if webhook and text(gpu.get("name")) and (integer(gpu.get("quantity"), 0) or 0) > 0:
        limits[text(gpu["name"])] = gpu["quantity"]  # addGPU
    return {"requests": requests, "limits": limits}


def _written(pod_spec: dict[str, Any]) -> list[str]:
    fields = [role_field for _, role_field in WEBHOOK_POD_FIELDS if pod_spec.get(role_field) not in (None, "", [], {})]
    fields += [key for key in ("gpu", "env", "volumeMounts", "sidecars", "initContainers") if pod_spec.get(key)]
    return fields


def pod_view(role: str) -> ViewBuilder:
    """The view builder of the driver's or an executor's pod (workloads.TemplateSite.view)."""

    def view(
        obj: dict[str, Any], owner_path: Path, owner: dict[str, Any], spec_path: Path, spec: dict[str, Any]
    ) -> PodView | None:
        app = owner
        pod_spec = spec
        if isinstance(pod_spec.get("template"), dict):
            return None  # Spark merges the role's pod template (Spark 3 and on): not modelled, nothing guessed
        webhook = not isinstance(obj, BoundSparkApplication)
        c0 = (*spec_path, "containers", 0)
        container: dict[str, Any] = {
            "name": CONTAINERS[role],
            "image": text(pod_spec.get("image")) or text(app.get("image")),
            "resources": _resources(app, role, pod_spec, webhook),
        }
        aliases: list[tuple[Path, Path]] = [((*c0, "resources"), spec_path), ((*c0, "image"), spec_path)]
        view_spec: dict[str, Any] = {}
        node_selector = {**mapping(app.get("nodeSelector"))}  # spark.kubernetes.node.selector.*: no webhook
        if node_selector:
            aliases.append(((*spec_path, "nodeSelector"), (*owner_path, "nodeSelector")))
        if webhook:
            for key in ("env", "volumeMounts", "securityContext"):
                if key in pod_spec:
                    container[key] = pod_spec[key]
                    aliases.append(((*c0, key), (*spec_path, key)))
            for pod_field, role_field in WEBHOOK_POD_FIELDS:
                if pod_spec.get(role_field) in (None, "", [], {}):
                    continue
                if pod_field == "nodeSelector":
                    node_selector.update(mapping(pod_spec[role_field]))
                else:
                    view_spec[pod_field] = pod_spec[role_field]
                aliases.append(((*spec_path, pod_field), (*spec_path, role_field)))
            if text(app.get("batchScheduler")):
                view_spec["schedulerName"] = text(app["batchScheduler"])  # addSchedulerName: preferred
                aliases.append(((*spec_path, "schedulerName"), (*owner_path, "batchScheduler")))
            sidecars = [c for c in sequence(pod_spec.get("sidecars")) if isinstance(c, dict)]
            inits = [c for c in sequence(pod_spec.get("initContainers")) if isinstance(c, dict)]
            for index, _ in enumerate(sidecars):
                aliases.append(((*spec_path, "containers", index + 1), (*spec_path, "sidecars", index)))
            if inits:
                view_spec["initContainers"] = inits
            mounted = {text(mapping(m).get("name")) for m in sequence(pod_spec.get("volumeMounts"))}
            volumes = [v for v in sequence(app.get("volumes")) if text(mapping(v).get("name")) in mounted]
            if volumes:
                view_spec["volumes"] = volumes
        else:
            sidecars = []
        if node_selector:
            view_spec["nodeSelector"] = node_selector
        view_spec["containers"] = [container, *sidecars]
        aliases.append((c0, spec_path))
        note = ""
        if isinstance(obj, BoundSparkApplication) and _written(pod_spec):
            note = WEBHOOK_OFF_NOTE.format(where=obj.webhook_off, role=role, fields=", ".join(_written(pod_spec)))
        return PodView(view_spec, tuple(aliases), faithful=False, dropped=note)

    return view


def executor_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """instances, else spark.executor.instances, else Spark's 2; unknown under dynamic allocation."""
    if dig(owner, "dynamicAllocation", "enabled") is True:
        return None
    conf = _conf(owner)
    if str(conf.get("spark.dynamicAllocation.enabled", "")).strip().lower() == "true":
        return None
    written = dig(owner, "executor", "instances")
    if written is not None:
        return integer(written, None)
    if "spark.executor.instances" in conf:
        return _count(conf["spark.executor.instances"], None)
    return DEFAULT_EXECUTORS


# ---------------------------------------------------------------------------------------- the webhook switch


@dataclass(frozen=True)
class WebhookSwitch:
    enabled: bool
    words: str  # what sets it, as a note words it after where it is ("sets webhook.enable: false"; "": not known)


NOT_KNOWN = WebhookSwitch(True, "")  # an install that may run the webhook: the switch is never counted off
# The webhooks that mutate the driver and executor pods, by name (v2's, v1's): see the module's sources.
POD_WEBHOOKS = ("mutate--v1-pod.sparkoperator.k8s.io", "webhook.sparkoperator.k8s.io")
# Any of the operator's webhooks: the chart renders them together under webhook.enable, so one of another name (a
# release not known here may rename the pod webhook) leaves the switch on, never off.
OPERATOR_WEBHOOK_DOMAIN = ".sparkoperator.k8s.io"
_FLAG = re.compile(r"^--?enable-webhook(?:=(.*))?$")


def deployment_switch(data: dict[str, Any]) -> WebhookSwitch | None:
    """The v1 operator's ``-enable-webhook`` flag in a Deployment running the operator (default false), None for
    any other Deployment (v2 runs its webhook as a Deployment of its own: the controller's args do not say)."""
    for container in sequence(dig(data, "spec", "template", "spec", "containers")):
        container = mapping(container)
        image = text(container.get("image"))
        if "spark-operator" not in image and "spark-on-k8s-operator" not in image:
            continue
        args = [text(a) for a in (*sequence(container.get("command")), *sequence(container.get("args")))]
        if any(a in ("controller", "webhook") for a in args):
            return None  # v2's `spark-operator controller start`: no such flag
        if any("$" in a or "{{" in a for a in args):
            return None  # a substituted argument might be the flag
        value: str | None = None
        for arg in args:
            found = _FLAG.match(arg)
            if found is not None:
                value = (found.group(1) or "true").strip().lower()
        if value is None:
            return WebhookSwitch(False, "runs the operator without -enable-webhook, which defaults to false")
        if value in ("true", "false", "1", "0", "t", "f"):
            enabled = value in ("true", "1", "t")
            return WebhookSwitch(enabled, f"runs the operator with -enable-webhook={value}")
        return None
    return None


def values_switch(values: dict[str, Any]) -> WebhookSwitch | None:
    """The chart's ``webhook.enable`` when written (its default changed with v2: unwritten, not known)."""
    enable = dig(values, "webhook", "enable")
    if isinstance(enable, bool):
        return WebhookSwitch(enable, f"sets webhook.enable: {str(enable).lower()}")
    return None


def configurations_switch(configurations: Iterable[dict[str, Any]]) -> WebhookSwitch:
    """The switch as a complete list of MutatingWebhookConfigurations sets it: on when one holds the operator's
    pod webhook or any other of its webhooks, else off (the pods are created with nothing to mutate them)."""
    for configuration in configurations:
        for webhook in sequence(configuration.get("webhooks")):
            name = text(mapping(webhook).get("name"))
            if name.endswith(OPERATOR_WEBHOOK_DOMAIN):
                found = text(mapping(configuration.get("metadata")).get("name"))
                return WebhookSwitch(True, f"holds the MutatingWebhookConfiguration {found} with the webhook {name}")
    return WebhookSwitch(
        False, f"holds no MutatingWebhookConfiguration with the operator's pod webhook ({POD_WEBHOOKS[0]})"
    )


def chart_controller(data: dict[str, Any]) -> bool:
    """Whether a Deployment is the controller the v2 chart renders (labelled ``helm.sh/chart: spark-operator-<version>``
    and ``app.kubernetes.io/component: controller``, running ``spark-operator controller start``): the chart's render
    then holds its MutatingWebhookConfiguration exactly when the webhook is on."""
    labels = mapping(dig(data, "metadata", "labels"))
    if (
        not text(labels.get("helm.sh/chart")).startswith(CHART + "-")
        or labels.get("app.kubernetes.io/component") != "controller"
    ):
        return False
    containers = map(mapping, sequence(dig(data, "spec", "template", "spec", "containers")))
    return any("controller" in map(text, sequence(c.get("args"))) for c in containers)
