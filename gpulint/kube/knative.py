"""Knative Serving's own restrictions on the pod spec of a Service or Configuration.

Source: knative/serving pkg/apis/serving/fieldmask.go (PodSpecMask: a field behind a feature flag is
dropped from the allowed mask while the flag is Disabled, and ValidatePodSpec then reports it with
apis.ErrDisallowedFields, "must not set the field(s)"), pkg/apis/config/features.go (the flags, their
defaults in defaultFeaturesConfig, read from the ConfigMap config-features in knative-serving; a value
is Enabled, Allowed or Disabled, case-insensitive, anything else leaves the default).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GROUP = "serving.knative.dev"
KINDS = ("Service", "Configuration")
CONFIG_NAMESPACE = "knative-serving"
CONFIG_NAME = "config-features"

# Pod spec fields that matter to GPU scheduling -> the flag that allows them (all Disabled by default).
FEATURE_FLAGS = {
    "nodeSelector": "kubernetes.podspec-nodeselector",
    "tolerations": "kubernetes.podspec-tolerations",
    "affinity": "kubernetes.podspec-affinity",
    "runtimeClassName": "kubernetes.podspec-runtimeclassname",
    "schedulerName": "kubernetes.podspec-schedulername",
    "priorityClassName": "kubernetes.podspec-priorityclassname",
    "topologySpreadConstraints": "kubernetes.podspec-topologyspreadconstraints",
    "hostIPC": "kubernetes.podspec-hostipc",
    "hostNetwork": "kubernetes.podspec-hostnetwork",
    "initContainers": "kubernetes.podspec-init-containers",
}


# A node label only one managed platform puts on its nodes -> the flags that platform's own Knative Serving
# enables. CoreWeave Cloud runs Knative Serving for its tenants with its own settings (docs.coreweave.com,
# "Get Started with Inference": Knative defaults adjusted by CoreWeave), and its inference examples
# (coreweave/kubernetes-cloud online-inference: KFServing InferenceServices and Knative Services) all place
# their pods by node affinity on its gpu.nvidia.com/class label.
PLATFORM_FLAGS: dict[str, frozenset[str]] = {
    "gpu.nvidia.com/class": frozenset({"kubernetes.podspec-affinity"}),
}


def platform_flags(label_keys: frozenset[str]) -> frozenset[str]:
    """The flags enabled where a pod that selects these node labels runs (PLATFORM_FLAGS)."""
    return frozenset(flag for key in label_keys for flag in PLATFORM_FLAGS.get(key, ()))


# A label only one platform's own tooling writes on the objects it makes -> the flags that platform's Knative
# Serving enables. Open Data Hub and OpenShift AI: the dashboard labels what it creates and lists
# `opendatahub.io/dashboard`, and the ODH operator, managing KServe's serverless stack, creates the
# KnativeServing with affinity, nodeSelector and tolerations enabled (opendatahub-io/opendatahub-operator
# components/kserve/resources/serving-install/knative-serving.tmpl.yaml, spec.config.features).
MAKER_FLAGS: dict[str, frozenset[str]] = {
    "opendatahub.io/dashboard": frozenset(
        {"kubernetes.podspec-affinity", "kubernetes.podspec-nodeselector", "kubernetes.podspec-tolerations"}
    ),
}


def maker_flags(object_labels: Mapping[str, object]) -> frozenset[str]:
    """The flags enabled where an object with these labels of its own runs (MAKER_FLAGS)."""
    return frozenset(flag for key in object_labels for flag in MAKER_FLAGS.get(key, ()))


class FlagState(enum.Enum):
    ALLOWED = "allowed"  # Enabled or Allowed
    DISABLED = "disabled"  # Disabled, or the default because the configuration does not set it
    SET = "set"  # the configuration sets it, to a value gpulint does not know (the inventory's keys)
    UNKNOWN = "unknown"  # the configuration is not known


def flag_state(key: str, values: dict[str, object] | None, keys: frozenset[str] | None) -> FlagState:
    """``values``: config-features' data when its values are known; ``keys``: its keys alone (the
    inventory keeps no values); neither: the configuration is not known."""
    if values is not None:
        raw = values.get(key)
        if isinstance(raw, str) and raw.lower() in ("enabled", "allowed"):
            return FlagState.ALLOWED
        return FlagState.DISABLED
    if keys is not None:
        return FlagState.SET if key in keys else FlagState.DISABLED
    return FlagState.UNKNOWN


# Source: knative/serving pkg/apis/serving/k8s_validation.go validateContainersPorts (ValidatePodSpec,
# under "containers[*]"): the ports of every container counted together.
MORE_THAN_ONE_PORT = "more than one container port is set"
ONE_PORT_DETAILS = "Only a single port is allowed across all containers"
MISSING_FIELD = "missing field(s)"


@dataclass(frozen=True)
class PortProblem:
    path: tuple[str | int, ...]  # relative to the pod spec: the port past the first, or the containers
    message: str  # Knative's words, before ": <field path>"
    details: str = ""


def port_problems(spec: dict[str, Any]) -> list[PortProblem]:
    """Knative refuses a pod spec with more than one port across its containers, and one of several
    containers without any port (it would not know which one serves)."""
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    ports = [
        ("containers", i, "ports", j)
        for i, container in enumerate(containers)
        for j, _ in enumerate(container.get("ports") or ())
    ]
    if len(ports) > 1:
        return [PortProblem(ports[1], MORE_THAN_ONE_PORT, ONE_PORT_DETAILS)]
    if not ports and len(containers) > 1:
        return [PortProblem(("containers",), MISSING_FIELD)]
    return []


# Knative Serving's autoscaling annotations on a revision template, as its webhook validates them
# (knative/serving knative-v1.23, pkg/apis/autoscaling/annotation_validation.go validateMinMaxScale and
# validateMaxScaleWithinLimit; the keys and their older spellings in pkg/apis/autoscaling/register.go, the first
# present wins). max-scale-limit is the ConfigMap config-autoscaler's (pkg/autoscaler/config/config.go; 0, the
# default, is no limit); the errors are knative.dev/pkg apis.FieldError's, the paths under the template.
AUTOSCALER_CONFIG = "config-autoscaler"
MAX_SCALE_LIMIT = "max-scale-limit"
MIN_SCALE_KEYS = ("autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale")
MAX_SCALE_KEYS = ("autoscaling.knative.dev/max-scale", "autoscaling.knative.dev/maxScale")
INT32_MAX = 2**31 - 1
TEMPLATE_ANNOTATIONS = "spec.template.metadata.annotations"


@dataclass(frozen=True)
class ScaleProblem:
    key: str  # the annotation the refusal points at
    message: str  # as apis.FieldError.Error() words it
    by_limit: bool = False  # config-autoscaler's max-scale-limit decides it


def _scale(annotations: Mapping[str, object], keys: tuple[str, ...]) -> tuple[str, int | None]:
    """The first of ``keys`` present and its value when it is an int32 >= 0 (getIntGE0); ("", None) when absent."""
    for key in keys:
        if key in annotations:
            value = str(annotations[key]).strip()
            number = int(value) if value.isdigit() else None
            return key, number if number is not None and number <= INT32_MAX else None
    return "", None


def max_scale_limit(config: Mapping[str, object] | None) -> int | None:
    """config-autoscaler's max-scale-limit; None when the ConfigMap is unknown or the value is not a number."""
    if config is None:
        return None
    value = str(config.get(MAX_SCALE_LIMIT, "0")).strip()
    return int(value) if value.isdigit() else None


def scale_problems(annotations: Mapping[str, object], limit: int | None) -> list[ScaleProblem]:
    """max-scale below min-scale (max-scale 0 is no maximum), and max-scale above, or 0 under, a known limit.
    Values that are not numbers are left to the webhook's own wording (not said here)."""
    min_key, low = _scale(annotations, MIN_SCALE_KEYS)
    max_key, high = _scale(annotations, MAX_SCALE_KEYS)
    found = []
    if max_key and high is not None and high != 0 and high < (low or 0):
        paths = f"{TEMPLATE_ANNOTATIONS}.{max_key}, {TEMPLATE_ANNOTATIONS}.{min_key}"
        found.append(ScaleProblem(max_key, f"max-scale={high} is less than min-scale={low}: {paths}"))
    if max_key and high is not None and limit:
        where = f"{TEMPLATE_ANNOTATIONS}.{max_key}"
        if high > limit:
            found.append(ScaleProblem(max_key, f"expected 1 <= {high} <= {limit}: {where}", by_limit=True))
        if high == 0:
            found.append(
                ScaleProblem(max_key, f"max-scale=0 (unlimited), must be less than {limit}: {where}", by_limit=True)
            )
    return found
