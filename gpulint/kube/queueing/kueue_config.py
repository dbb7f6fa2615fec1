"""Kueue's manager Configuration (config.kueue.x-k8s.io): what it manages and how.

Kueue reads it from the file ``controller_manager_config.yaml`` of its ConfigMap (``kueue-manager-config``
in the release manifests, ``<release>-manager-config`` from the chart). Defaults from kubernetes-sigs/kueue
v0.19.2 ``apis/config/v1beta2/defaults.go``: ``integrations.frameworks`` empty is ``[batch/job]``;
``managedJobsNamespaceSelector`` absent excludes ``kube-system`` and Kueue's own namespace
(``namespace``, default ``kueue-system``). The framework names are each integration's ``FrameworkName``
(``pkg/controller/jobs/*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.quantity import go_duration
from gpulint.kube.workloads import containers

CONFIG_GROUP = "config.kueue.x-k8s.io"
CONFIG_KIND = "Configuration"
CONFIG_FILE = "controller_manager_config.yaml"  # the ConfigMap key Kueue's manager mounts
DEFAULT_NAMESPACE = "kueue-system"
DEFAULT_FRAMEWORKS = frozenset({"batch/job"})
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# (api group, kind) -> the integration's FrameworkName where it is not "<group>/<lowercase kind>".
_FRAMEWORK_NAMES = {
    ("batch", "Job"): "batch/job",
    ("batch", "CronJob"): "batch/job",  # Kueue manages the Jobs a CronJob creates
    ("", "Pod"): "pod",
    ("apps", "Deployment"): "deployment",
    ("apps", "StatefulSet"): "statefulset",
}


def framework_name(group: str, kind: str) -> str:
    return _FRAMEWORK_NAMES.get((group, kind), f"{group}/{kind.lower()}")


def is_configuration(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("kind") == CONFIG_KIND
        and text(data.get("apiVersion")).startswith(CONFIG_GROUP + "/")
    )


# waitForPodsReady.timeout when not written: v1beta1 (`enable: true`) defaultPodsReadyTimeout, v1beta2 (the block
# written) DefaultWaitForPodsReadyTimeout (apis/config/v1beta{1,2}/defaults.go, v0.19.2).
_PODS_READY_TIMEOUT = {"v1beta1": 5 * 60.0, "v1beta2": 30 * 60.0}


@dataclass(frozen=True)
class PodsReady:
    """waitForPodsReady as Kueue's workload controller applies it (reconcileNotReadyTimeout): an admitted Workload
    not PodsReady ``timeout`` seconds after its Admitted condition is evicted (PodsReadyTimeout) and requeued."""

    timeout: float  # seconds
    timeout_text: str  # as written (or the default), for messages
    block_admission: bool  # no other workload is admitted in any ClusterQueue while one waits
    backoff_limit: int | None  # requeuingStrategy.backoffLimitCount: deactivated past it (None: requeued forever)


def pods_ready(data: dict[str, Any]) -> PodsReady | None:
    """The waitForPodsReady a Configuration turns on, or None: off (v1beta1 without ``enable: true``), not written
    (v1beta2 turns it on by default, but a v1beta1 file converted leaves it off: unknown), or a timeout that does
    not read as a duration. Conversion: a v1beta1 blockAdmission not written is true; v1beta2's default is false."""
    version = text(data.get("apiVersion")).rpartition("/")[2]
    block = data.get("waitForPodsReady")
    if version not in _PODS_READY_TIMEOUT or not isinstance(block, dict):
        return None
    if version == "v1beta1" and block.get("enable") is not True:
        return None
    written = block.get("timeout")
    seconds = go_duration(written) if isinstance(written, str) else None if written is not None else 0.0
    if seconds is None or seconds < 0 or (seconds == 0 and version == "v1beta1" and written is not None):
        return None
    if seconds == 0:
        seconds, written = _PODS_READY_TIMEOUT[version], f"{int(_PODS_READY_TIMEOUT[version] // 60)}m (the default)"
    admission = block.get("blockAdmission")
    limit = integer(dig(block, "requeuingStrategy", "backoffLimitCount"))
    return PodsReady(
        seconds,
        str(written),
        admission is True or (admission is None and version == "v1beta1"),
        limit,
    )


@dataclass(frozen=True)
class ReadyBound:
    """The earliest a container of the pod can be Ready, and the probe field that says so."""

    seconds: int
    container: str
    path: tuple[Any, ...]  # to initialDelaySeconds, from the pod spec
    probe: str


def earliest_ready(spec: dict[str, Any]) -> ReadyBound | None:
    """A pod is Ready when every container is; a container is not Ready before its readiness probe first succeeds,
    and no readiness probe runs before its startup probe succeeds: neither probe runs before its
    initialDelaySeconds (kubelet prober). The largest such delay over the pod's containers (None: no delay)."""
    found: ReadyBound | None = None
    for path, container in containers(spec):
        for probe in ("startupProbe", "readinessProbe"):
            delay = integer(mapping(container.get(probe)).get("initialDelaySeconds"))
            if delay is not None and delay > 0 and (found is None or delay > found.seconds):
                name = text(container.get("name"))
                found = ReadyBound(delay, name, (*path, probe, "initialDelaySeconds"), probe)
    return found


@dataclass(frozen=True)
class KueueConfig:
    """The settings of a Kueue Configuration that decide whether and how a job is queued."""

    where: str  # the object it was read from, for messages
    manage_without_queue_name: bool
    frameworks: frozenset[str]
    managed_namespaces: dict[str, Any]  # managedJobsNamespaceSelector, defaulted
    pods_ready: PodsReady | None = None  # waitForPodsReady, when it is on
    # integrations.podOptions' namespaceSelector or podSelector, kept by the pod webhook for backwards
    # compatibility (pkg/controller/jobs/pod/pod_webhook.go Default): which Pods it gates is then theirs too
    pod_selectors: bool = False

    @classmethod
    def of(cls, data: dict[str, Any], where: str) -> KueueConfig:
        namespace = text(data.get("namespace")) or DEFAULT_NAMESPACE
        frameworks = frozenset(text(f) for f in sequence(dig(data, "integrations", "frameworks")) if text(f))
        selector = data.get("managedJobsNamespaceSelector")
        if not isinstance(selector, dict):
            selector = {
                "matchExpressions": [
                    {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": ["kube-system", namespace]}
                ]
            }
        return cls(
            where,
            data.get("manageJobsWithoutQueueName") is True,
            frameworks or DEFAULT_FRAMEWORKS,
            selector,
            pods_ready(data),
            any(
                key in mapping(dig(data, "integrations", "podOptions")) for key in ("namespaceSelector", "podSelector")
            ),
        )

    def manages(self, group: str, kind: str) -> bool:
        return framework_name(group, kind) in self.frameworks
