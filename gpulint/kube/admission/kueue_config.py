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

from gpulint.kube.fields import dig, sequence, text

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


@dataclass(frozen=True)
class KueueConfig:
    """The settings of a Kueue Configuration that decide whether and how a job is queued."""

    where: str  # the object it was read from, for messages
    manage_without_queue_name: bool
    frameworks: frozenset[str]
    managed_namespaces: dict[str, Any]  # managedJobsNamespaceSelector, defaulted

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
        )

    def manages(self, group: str, kind: str) -> bool:
        return framework_name(group, kind) in self.frameworks
