"""Knative Serving's own restrictions on the pod spec of a Service or Configuration.

Source: knative/serving pkg/apis/serving/fieldmask.go (PodSpecMask: a field behind a feature flag is
dropped from the allowed mask while the flag is Disabled, and ValidatePodSpec then reports it with
apis.ErrDisallowedFields, "must not set the field(s)"), pkg/apis/config/features.go (the flags, their
defaults in defaultFeaturesConfig, read from the ConfigMap config-features in knative-serving; a value
is Enabled, Allowed or Disabled, case-insensitive, anything else leaves the default).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping
from gpulint.kube.placeholders import SHORT_PLACEHOLDER
from gpulint.kube.quantity import go_duration

GROUP = "serving.knative.dev"
OPERATOR_GROUP = "operator.knative.dev"  # the Knative operator's KnativeServing
KINDS = ("Service", "Configuration")
CONFIG_NAMESPACE = "knative-serving"
CONFIG_NAME = "config-features"
OPERATOR_KIND = "KnativeServing"
CONFIG_PREFIX = "config-"


def operator_config(serving: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The data a KnativeServing's spec.config writes into the ConfigMap ``name`` of its namespace (None: none).

    Source: knative/operator pkg/reconciler/common/configmaps.go ConfigMapTransform (v1.x): spec.config is keyed by
    ConfigMap name, the "config-" prefix optional; the full name is looked up first, and its keys overwrite the
    shipped ConfigMap's (whose data is only an ``_example``, so every other key keeps Knative's default).
    """
    config = mapping(mapping(serving.get("spec")).get("config"))
    for key in (name, name.removeprefix(CONFIG_PREFIX)):
        written = config.get(key)
        if isinstance(written, dict):
            return {str(k): v for k, v in written.items()}
    return None


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


# Volume sources behind feature flags (knative/serving pkg/apis/serving/fieldmask.go VolumeSourceMask and
# k8s_validation.go validateVolume, knative-v1.2 onward; both flags Disabled by default): a persistentVolumeClaim
# volume needs kubernetes.podspec-persistent-volume-claim, and one whose source is not readOnly also
# kubernetes.podspec-persistent-volume-write (the volume source's readOnly, whatever the mounts say).
PVC_FLAG = "kubernetes.podspec-persistent-volume-claim"
PVC_WRITE_FLAG = "kubernetes.podspec-persistent-volume-write"


@dataclass(frozen=True)
class FlagRefusal:
    path: tuple[str | int, ...]  # relative to the pod spec
    flag: str
    message: str  # Knative's words; empty for a masked field (must not set the field(s): <path>)
    what: str  # what the pod does, for the wording of a KServe component ("mounts a persistentVolumeClaim")


def _volume_refusals(spec: Mapping[str, Any]) -> Iterator[FlagRefusal]:
    """What validateVolume says of each persistentVolumeClaim volume while its flags are off, in its order."""
    for index, volume in enumerate(spec.get("volumes") or ()):
        claim = mapping(volume).get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if not isinstance(claim, dict):
            continue
        name = str(claim.get("claimName", ""))
        path: tuple[str | int, ...] = ("volumes", index, "persistentVolumeClaim")
        what = "mounts a persistentVolumeClaim"
        yield FlagRefusal(
            path,
            PVC_FLAG,
            f"Persistent volume claim support is disabled, but found persistent volume claim {name}",
            what,
        )
        if claim.get("readOnly") is not True:
            yield FlagRefusal(
                path,
                PVC_WRITE_FLAG,
                f"Persistent volume write support is disabled, but found persistent volume claim {name} that is "
                "not read-only",
                what,
            )


# Environment sources behind a flag (knative/serving pkg/apis/serving/fieldmask.go EnvVarSourceMask, kept while
# kubernetes.podspec-fieldref is not Disabled, its default; k8s_validation.go validateEnvValueFrom, for every
# container and init container): the downward API (fieldRef, resourceFieldRef); configMapKeyRef and secretKeyRef
# are always allowed.
FIELD_REF_FLAG = "kubernetes.podspec-fieldref"
FIELD_REF_SOURCES = ("fieldRef", "resourceFieldRef")


def _env_refusals(spec: Mapping[str, Any]) -> Iterator[FlagRefusal]:
    for group in ("containers", "initContainers"):
        for index, container in enumerate(spec.get(group) or ()):
            for position, env in enumerate(mapping(container).get("env") or ()):
                source = mapping(mapping(env).get("valueFrom"))
                for key in FIELD_REF_SOURCES:
                    if isinstance(source.get(key), dict):
                        what = f"reads env {mapping(env).get('name', '')} from the downward API ({key})"
                        yield FlagRefusal((group, index, "env", position, "valueFrom", key), FIELD_REF_FLAG, "", what)


# Added Linux capabilities behind a flag (knative/serving pkg/apis/serving/fieldmask.go CapabilitiesMask, since
# knative-v0.24, serving#11410: drop is always kept, add only while kubernetes.containerspec-addcapabilities is not
# Disabled, its default), on a serving container's securityContext.
ADD_CAPABILITIES_FLAG = "kubernetes.containerspec-addcapabilities"


def _capability_refusals(spec: Mapping[str, Any]) -> Iterator[FlagRefusal]:
    for index, container in enumerate(spec.get("containers") or ()):
        added = mapping(mapping(mapping(container).get("securityContext")).get("capabilities")).get("add")
        if isinstance(added, list) and added:
            what = f"adds the Linux capabilities {', '.join(str(name) for name in added)} to container {index}"
            yield FlagRefusal(
                ("containers", index, "securityContext", "capabilities", "add"), ADD_CAPABILITIES_FLAG, "", what
            )


def flag_refusals(spec: Mapping[str, Any]) -> list[FlagRefusal]:
    """The parts of a pod spec below its top-level fields that a Knative feature flag keeps off by default."""
    return [*_volume_refusals(spec), *_env_refusals(spec), *_capability_refusals(spec)]


# Names, paths and ports Knative keeps for itself, refused whatever the flags (knative/serving knative-v1.23.0
# pkg/apis/serving/k8s_validation.go: reservedEnvVars, and reservedSidecarEnvVars without PORT for a container
# without ports among several, since knative-v0.16, serving#8438; reservedContainerNames; reservedPaths, which
# also held /tmp, /var and /var/log until knative-v1.13, serving#14719: RESERVED_PATHS_BEFORE; reservedPorts:
# knative.dev/networking BackendHTTPPort, BackendHTTP2Port, QueueAdminPort, AutoscalingQueueMetricsPort,
# UserQueueMetricsPort, and the profiling port). The messages are validate's, validateEnvVar's,
# validateVolumeMounts' and validateContainerPortBasic's.
RESERVED_ENV = ("PORT", "K_SERVICE", "K_CONFIGURATION", "K_REVISION")
SIDECAR_ENV_ALLOWED = ("PORT",)  # Knative sets PORT on the serving container only
RESERVED_CONTAINER_NAMES = ("queue-proxy",)
RESERVED_PATHS = ("/", "/dev", "/dev/log")
# knative-v1.12.4 and earlier k8s_validation.go reservedPaths; knative-v1.13.0 dropped them (serving#14719)
RESERVED_PATHS_BEFORE = ("/tmp", "/var", "/var/log")
PATHS_FREED = (1, 13)
RESERVED_PORTS = (8012, 8013, 8022, 9090, 9091, 8008)


@dataclass(frozen=True)
class ReservedUse:
    path: tuple[str | int, ...]  # relative to the pod spec
    message: str  # Knative's words, before ": <field path>"
    why: str  # what Knative keeps it for
    until: bool = False  # reserved only by releases before PATHS_FREED


def _clean(path: str) -> str:
    """Go's path.Clean for an absolute path: repeated and trailing slashes and . segments go."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return "/" + "/".join(parts) if path.startswith("/") else path


def reserved_uses(spec: Mapping[str, Any], older: bool = False) -> list[ReservedUse]:
    """The containers' uses of a name, mount path or port Knative reserves, in the containers' order; ``older``:
    also the paths releases before knative-v1.13 reserve (RESERVED_PATHS_BEFORE)."""
    paths = (*RESERVED_PATHS, *RESERVED_PATHS_BEFORE) if older else RESERVED_PATHS
    containers = [c if isinstance(c, dict) else {} for c in spec.get("containers") or ()]
    found: list[ReservedUse] = []
    for index, container in enumerate(containers):
        serving = len(containers) == 1 or bool(container.get("ports"))
        name = container.get("name")
        if name in RESERVED_CONTAINER_NAMES:
            found.append(
                ReservedUse(("containers", index, "name"), f'"{name}" is a reserved container name', "its own sidecar")
            )
        for position, env in enumerate(container.get("env") or ()):
            env_name = mapping(env).get("name")
            if env_name in RESERVED_ENV and (serving or env_name not in SIDECAR_ENV_ALLOWED):
                why = (
                    "what it sets itself: PORT is the serving container's port"
                    if env_name == "PORT"
                    else "what it sets itself: the Service, Configuration and Revision names"
                )
                found.append(
                    ReservedUse(
                        ("containers", index, "env", position, "name"),
                        f'"{env_name}" is a reserved environment variable',
                        why,
                    )
                )
        for position, mount in enumerate(container.get("volumeMounts") or ()):
            mount_path = mapping(mount).get("mountPath")
            if isinstance(mount_path, str) and _clean(mount_path) in paths:
                found.append(
                    ReservedUse(
                        ("containers", index, "volumeMounts", position, "mountPath"),
                        f'mountPath "{_clean(mount_path)}" is a reserved path',
                        "the container's own filesystem",
                        _clean(mount_path) in RESERVED_PATHS_BEFORE,
                    )
                )
        for position, port in enumerate((container.get("ports") or ())[:1]):  # the user port; validateContainerPorts
            number = mapping(port).get("containerPort")
            if isinstance(number, int) and not isinstance(number, bool) and number in RESERVED_PORTS:
                found.append(
                    ReservedUse(
                        ("containers", index, "ports", position, "containerPort"),
                        f"invalid value: {number} is a reserved port",
                        "its queue-proxy sidecar, which listens there in the same pod",
                    )
                )
    return found


# Where a Knative Serving install writes its release (knative/serving config/core/deployments/*.yaml,
# knative-v1.0 onward: every Deployment of serving-core.yaml is labelled app.kubernetes.io/name knative-serving and
# app.kubernetes.io/version, "devel" in the source tree and the release, "1.13.0", in the released YAML; its images
# are ko://knative.dev/serving/cmd/<component> in the tree, gcr.io/knative-releases/knative.dev/serving/cmd/
# <component>@sha256:... released, a mirror's tag otherwise; before v1.0 the label was serving.knative.dev/release
# "v0.26.0"). The Knative operator's KnativeServing names the release it installs in spec.version (knative/operator
# pkg/apis/operator/base/common.go CommonSpec.Version: "1.13", "1.13.0"; none: the operator's own, not written).
SERVING_IMAGE = "knative.dev/serving/cmd/"
_VERSION_LABELS = ("app.kubernetes.io/version", "serving.knative.dev/release")


def serving_releases(deployment: Mapping[str, Any]) -> list[str]:
    """The Knative Serving release a Deployment of Serving runs, as written ("": one whose release is not written,
    the source tree's); none for another Deployment."""
    pod = mapping(mapping(mapping(deployment.get("spec")).get("template")).get("spec"))
    images = [mapping(c).get("image") for c in pod.get("containers") or ()]
    tags = []
    for image in images:
        name, _, tag = (image if isinstance(image, str) else "").partition("@")[0].rpartition(":")
        if SERVING_IMAGE in (name if name and "/" not in tag else ""):
            tags.append(tag)
        elif isinstance(image, str) and SERVING_IMAGE in image:
            tags.append("")  # a digest or ko://: the tag names no release
    if not tags:
        return []
    labels = mapping(mapping(deployment.get("metadata")).get("labels"))
    for key in _VERSION_LABELS:
        version = labels.get(key)
        if isinstance(version, str) and version and version != "devel":
            return [version]
    return [tags[0]]


def operator_releases(serving: Mapping[str, Any]) -> list[str]:
    """The release a KnativeServing asks the Knative operator for ("": the operator's own, not written)."""
    version = mapping(serving.get("spec")).get("version")
    return [version if isinstance(version, str) else ""]


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


# Knative Serving's autoscaling annotations, as its webhook validates them (knative/serving knative-v1.23,
# pkg/apis/autoscaling/annotation_validation.go ValidateAnnotations, on a revision template; the keys and their
# older spellings in register.go, the first present wins). The cluster's side is the ConfigMap config-autoscaler
# (pkg/autoscaler/config/config.go: max-scale-limit, 0 = no limit; allow-zero-initial-scale, false;
# pod-autoscaler-class, kpa). The errors are knative.dev/pkg apis.FieldError's, the paths under the template.
AUTOSCALER_CONFIG = "config-autoscaler"
MAX_SCALE_LIMIT = "max-scale-limit"
ALLOW_ZERO_INITIAL_SCALE = "allow-zero-initial-scale"
POD_AUTOSCALER_CLASS = "pod-autoscaler-class"
GROUP_PREFIX = "autoscaling.knative.dev"
KPA = "kpa.autoscaling.knative.dev"
HPA = "hpa.autoscaling.knative.dev"
CLASS_KEY = "autoscaling.knative.dev/class"
METRIC_KEY = "autoscaling.knative.dev/metric"
ACTIVATION_KEY = "autoscaling.knative.dev/activation-scale"


def _keys(name: str, old: str = "") -> tuple[str, ...]:
    return (f"{GROUP_PREFIX}/{name}", f"{GROUP_PREFIX}/{old}") if old else (f"{GROUP_PREFIX}/{name}",)


MIN_SCALE_KEYS = _keys("min-scale", "minScale")
MAX_SCALE_KEYS = _keys("max-scale", "maxScale")
INITIAL_SCALE_KEYS = _keys("initial-scale", "initialScale")
ALGORITHM_KEYS = _keys("metric-aggregation-algorithm", "metricAggregationAlgorithm")
ALGORITHMS = ("linear", "weighted-exponential", "weightedExponential")
KPA_METRICS = ("concurrency", "rps")
INT32_MAX = 2**31 - 1
TEMPLATE_ANNOTATIONS = "spec.template.metadata.annotations"


@dataclass(frozen=True)
class FloatBounds:
    """A float annotation's range, as validateFloats words it (``expected low <= v <= high``)."""

    keys: tuple[str, ...]
    low: float
    high: float | None = None  # None: only the lower bound, worded ``target v should be at least low``


FLOATS = (
    FloatBounds(_keys("panic-window-percentage", "panicWindowPercentage"), 1, 100),
    FloatBounds(_keys("panic-threshold-percentage", "panicThresholdPercentage"), 110, 1000),
    FloatBounds(_keys("target"), 0.01),
    FloatBounds(_keys("target-utilization-percentage", "targetUtilizationPercentage"), 1, 100),
)
BURST_KEYS = _keys("target-burst-capacity", "targetBurstCapacity")
HOUR = 3600.0


@dataclass(frozen=True)
class DurationBounds:
    """A duration annotation: its range (Go's Duration.String() of the bounds) and whether it must be whole seconds."""

    keys: tuple[str, ...]
    low: float
    low_text: str
    whole_seconds: bool


DURATIONS = (  # in ValidateAnnotations' order: window, last pod retention, scale-down delay
    DurationBounds(_keys("window"), 6.0, "6s", True),
    DurationBounds(_keys("scale-to-zero-pod-retention-period", "scaleToZeroPodRetentionPeriod"), 0.0, "0s", False),
    DurationBounds(_keys("scale-down-delay", "scaleDownDelay"), 0.0, "0s", True),
)
_GO_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_GO_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class AutoscalerConfig:
    """config-autoscaler as far as the linted files tell: None where they do not hold the ConfigMap."""

    max_scale_limit: int | None = None
    allow_zero_initial_scale: bool | None = None
    pod_autoscaler_class: str | None = None


def autoscaler_config(data: Mapping[str, object] | None) -> AutoscalerConfig:
    if data is None:
        return AutoscalerConfig()
    limit = str(data.get(MAX_SCALE_LIMIT, "0")).strip()
    limit_number = _go_int32(limit)  # cm.AsInt32: one it refuses leaves the limit unknown
    allow = str(data.get(ALLOW_ZERO_INITIAL_SCALE, "false")).strip().lower()
    return AutoscalerConfig(
        max_scale_limit=limit_number if limit_number is not None and 0 <= limit_number <= INT32_MAX else None,
        allow_zero_initial_scale=allow in ("1", "t", "true"),  # strconv.ParseBool
        pod_autoscaler_class=str(data.get(POD_AUTOSCALER_CLASS, KPA)).strip(),
    )


@dataclass(frozen=True)
class ScaleProblem:
    key: str  # the annotation the refusal points at
    message: str  # as apis.FieldError.Error() words it
    by_limit: bool = False  # config-autoscaler's max-scale-limit decides it
    # config-autoscaler's key that decides it when the linted files do not hold the ConfigMap (its default refuses)
    unless: str = ""


def _get(annotations: Mapping[str, object], keys: tuple[str, ...]) -> tuple[str, str | None]:
    """kmap.KeyPriority.Get: the first of ``keys`` present and its value; ("", None) when none is or the value is
    still a template (left to the webhook)."""
    for key in keys:
        if key in annotations:
            value = str(annotations[key])
            return (key, None) if SHORT_PLACEHOLDER.search(value) else (key, value)
    return "", None


def _go_float(value: str) -> float | None:
    return float(value) if _GO_FLOAT.fullmatch(value) else None


def _go_int32(value: str) -> int | None:
    """strconv.ParseInt(v, 10, 32), out-of-range values included (the caller words the range): one of more digits
    than an int64 holds is taken as INT32_MAX + 1 or its negative (Python converts no more than 4,300 digits)."""
    if not _GO_INT.fullmatch(value):
        return None
    if len(value.lstrip("+-").lstrip("0")) > 18:
        return -(INT32_MAX + 1) if value.startswith("-") else INT32_MAX + 1
    return int(value)


def _at(key: str) -> str:
    return f"{TEMPLATE_ANNOTATIONS}.{key}"


def _scale(annotations: Mapping[str, object], keys: tuple[str, ...], found: list[ScaleProblem]) -> tuple[str, int]:
    """getIntGE0: the key and the value (0 when absent or refused); a negative or out-of-range number refused."""
    key, value = _get(annotations, keys)
    number = _go_int32(value) if value is not None else None
    if number is None:
        return "", 0  # absent, or not a number: left to the webhook's wording
    if number < 0 or number > INT32_MAX:
        found.append(ScaleProblem(key, f"expected 0 <= {value} <= {INT32_MAX}: {_at(key)}"))
        return key, 0
    return key, number


def _min_max_scale(annotations: Mapping[str, object], config: AutoscalerConfig) -> list[ScaleProblem]:
    """validateMinMaxScale (the activation-scale bounds since knative-v1.4, v0.34.0)."""
    found: list[ScaleProblem] = []
    _, low = _scale(annotations, MIN_SCALE_KEYS, found)
    max_key, high = _scale(annotations, MAX_SCALE_KEYS, found)
    if high != 0 and high < low:
        paths = f"{_at(MAX_SCALE_KEYS[0])}, {_at(MIN_SCALE_KEYS[0])}"  # the constants, whichever key is written
        found.append(ScaleProblem(max_key, f"max-scale={high} is less than min-scale={low}: {paths}"))
    limit = config.max_scale_limit
    if max_key and limit:
        if high > limit:
            found.append(ScaleProblem(max_key, f"expected 1 <= {high} <= {limit}: {_at(max_key)}", by_limit=True))
        if high == 0:
            words = f"max-scale=0 (unlimited), must be less than {limit}: {_at(max_key)}"
            found.append(ScaleProblem(max_key, words, by_limit=True))
    key, value = _get(annotations, (ACTIVATION_KEY,))
    active = _go_int32(value) if value is not None else None
    if active is not None and abs(active) <= INT32_MAX:
        if low > active:
            found.append(ScaleProblem(key, f"min-scale={low} is greater than activation-scale={active}: {_at(key)}"))
        elif high != 0 and high < active:
            found.append(ScaleProblem(key, f"max-scale={high} is less than activation-scale={active}: {_at(key)}"))
        elif active < 2:
            found.append(ScaleProblem(key, f"activation-scale={active} must be greater than 1: {_at(key)}"))
    return found


def _floats(annotations: Mapping[str, object]) -> Iterator[ScaleProblem]:
    """validateFloats: a value that is not a number is left to the webhook (a template, most often)."""
    for bounds in FLOATS:
        key, value = _get(annotations, bounds.keys)
        number = _go_float(value) if value is not None else None
        if number is None:
            continue
        if bounds.high is None:
            if number < bounds.low:
                yield ScaleProblem(key, f"target {value} should be at least {bounds.low:g}: {_at(key)}")
        elif not bounds.low <= number <= bounds.high:
            yield ScaleProblem(key, f"expected {bounds.low:g} <= {value} <= {bounds.high:g}: {_at(key)}")
    key, value = _get(annotations, BURST_KEYS)
    burst = _go_float(value) if value is not None else None
    if burst is not None and burst < 0 and burst != -1:
        yield ScaleProblem(key, f"invalid value: {value}: {_at(key)}")


def _durations(annotations: Mapping[str, object]) -> Iterator[ScaleProblem]:
    """validateWindow, validateLastPodRetention, validateScaleDownDelay (time.ParseDuration)."""
    for bounds in DURATIONS:
        key, value = _get(annotations, bounds.keys)
        seconds = go_duration(value) if value is not None else None
        if seconds is None:
            continue
        if not bounds.low <= seconds <= HOUR:
            yield ScaleProblem(key, f"expected {bounds.low_text} <= {value} <= 1h0m0s: {_at(key)}")
        elif bounds.whole_seconds and abs(seconds - round(seconds)) > 1e-9:
            yield ScaleProblem(key, f"must be specified with at most second precision: {_at(key)}")


def _class(annotations: Mapping[str, object]) -> Iterator[ScaleProblem]:
    """validateClass: a class in Knative's own domain must be kpa or hpa (others are custom autoscalers')."""
    key, written = _get(annotations, (CLASS_KEY,))
    if written is not None and written.endswith(".knative.dev") and written not in (KPA, HPA):
        yield ScaleProblem(key, f"invalid value: {written}: {_at(key)}")


def _metric(annotations: Mapping[str, object], config: AutoscalerConfig) -> Iterator[ScaleProblem]:
    """validateMetric (the class written, else config-autoscaler's pod-autoscaler-class, kpa by default: kpa takes
    concurrency or rps, hpa any metric but none) and validateAlgorithm (only under a written kpa class)."""
    key, written = _get(annotations, (CLASS_KEY,))
    metric_key, metric = _get(annotations, (METRIC_KEY,))
    if metric is not None:
        chosen = written if key else config.pod_autoscaler_class
        unless = "" if key or chosen is not None else POD_AUTOSCALER_CLASS
        chosen = chosen if chosen is not None else KPA
        if (chosen == KPA and metric not in KPA_METRICS) or (chosen == HPA and metric == ""):
            yield ScaleProblem(metric_key, f"invalid value: {metric}: {_at(METRIC_KEY)}", unless=unless)
    if written == KPA:
        key, algorithm = _get(annotations, ALGORITHM_KEYS)
        if algorithm and algorithm not in ALGORITHMS:
            yield ScaleProblem(key, f"invalid value: {algorithm}: {_at(key)}")


def _initial_scale(annotations: Mapping[str, object], config: AutoscalerConfig) -> Iterator[ScaleProblem]:
    """validateInitialScale: not negative, and 0 only where config-autoscaler allows it (false by default)."""
    key, value = _get(annotations, INITIAL_SCALE_KEYS)
    number = _go_int32(value) if value is not None else None
    if number is None:
        return
    if number < 0:
        yield ScaleProblem(key, f"invalid value: {value}: {_at(key)} must be greater than 0")
    elif number == 0 and not config.allow_zero_initial_scale:
        unless = ALLOW_ZERO_INITIAL_SCALE if config.allow_zero_initial_scale is None else ""
        yield ScaleProblem(key, f"invalid value: {value}: {_at(key)}=0 not allowed by cluster", unless=unless)


def scale_problems(annotations: Mapping[str, object], config: AutoscalerConfig) -> list[ScaleProblem]:
    """ValidateAnnotations on a revision template, in its order. Values that are not numbers or durations are left
    to the webhook's own wording (a template still to be filled in, most often)."""
    return [
        *_class(annotations),
        *_min_max_scale(annotations, config),
        *_floats(annotations),
        *_durations(annotations),
        *_metric(annotations, config),
        *_initial_scale(annotations, config),
    ]


# pkg/apis/serving/metadata_validation.go ValidateHasNoAutoscalingAnnotation (since v0.18.0): a Service's or
# Configuration's own metadata may hold no autoscaling annotation (they act only on the revision template).
MISPLACED_DETAIL = 'autoscaling annotations must be put under "spec.template.metadata.annotations" to work'


def misplaced_autoscaling(annotations: Mapping[str, object]) -> list[str]:
    """The keys of the object's own annotations that Knative refuses there."""
    return [str(key) for key in annotations if str(key).startswith(GROUP_PREFIX)]


# A revision's request timeout, bounded by config-defaults (knative/serving pkg/apis/serving/v1/revision_validation.go
# validateTimeoutSeconds, knative-v1.0 onward: a non-zero spec.timeoutSeconds outside 0..max-revision-timeout-seconds
# is refused with apis.ErrOutOfBoundsValue; pkg/apis/config/defaults.go: the maximum is read with cm.AsInt64 and is
# 600 by default, DefaultMaxRevisionTimeoutSeconds).
DEFAULTS_CONFIG = "config-defaults"
MAX_REVISION_TIMEOUT = "max-revision-timeout-seconds"
DEFAULT_MAX_REVISION_TIMEOUT = 600


def timeout_problem(
    spec: Mapping[str, Any], defaults: Mapping[str, object] | None, keys: frozenset[str] | None
) -> ScaleProblem | None:
    """The refusal of a revision template's spec.timeoutSeconds (``spec``: the template's spec), against
    config-defaults' values (``defaults``), else its keys alone (the inventory's: a maximum it sets but does not
    show leaves no proof), else Knative's default maximum, worded then as holding unless the cluster raised it."""
    timeout = spec.get("timeoutSeconds")
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout == 0:
        return None  # absent, zero (the default applies) or not a number yet: the webhook's own wording
    unless = ""
    if defaults is not None:
        written = defaults.get(MAX_REVISION_TIMEOUT)
        limit = DEFAULT_MAX_REVISION_TIMEOUT if written is None else _go_int64(str(written).strip())
        if limit is None:
            return None  # Knative refuses the ConfigMap itself and keeps its previous settings: unknown
    elif keys is not None and MAX_REVISION_TIMEOUT in keys:
        return None
    else:
        limit = DEFAULT_MAX_REVISION_TIMEOUT
        unless = "" if keys is not None else MAX_REVISION_TIMEOUT
    if 0 <= timeout <= limit:
        return None
    return ScaleProblem(
        "timeoutSeconds", f"expected 0 <= {timeout} <= {limit}: spec.template.spec.timeoutSeconds", unless=unless
    )


# A revision's containerConcurrency, bounded by config-defaults (knative/serving pkg/apis/serving/metadata_validation.go
# ValidateContainerConcurrency, called from RevisionSpec.Validate since knative-v0.15: outside
# minimum..container-concurrency-max-limit it is refused with apis.ErrOutOfBoundsValue; the minimum is 0, 1 when
# allow-container-concurrency-zero is false; pkg/apis/config/defaults.go: the maximum is read with cm.AsInt64,
# 1000 by default, DefaultMaxRevisionContainerConcurrency). KServe copies a component's containerConcurrency into
# the Knative Service it makes (pkg/controller/v1beta1/inferenceservice/reconcilers/knative).
MAX_CONTAINER_CONCURRENCY = "container-concurrency-max-limit"
ALLOW_CONCURRENCY_ZERO = "allow-container-concurrency-zero"
DEFAULT_MAX_CONTAINER_CONCURRENCY = 1000
CONCURRENCY_FIELD = "spec.template.spec.containerConcurrency"


def concurrency_problem(
    concurrency: object, defaults: Mapping[str, object] | None, keys: frozenset[str] | None
) -> ScaleProblem | None:
    """The refusal of a revision's containerConcurrency against config-defaults' values (``defaults``), else its
    keys alone (a maximum the inventory sets but does not show leaves no proof), else Knative's defaults, worded
    then as holding unless the cluster raised the maximum."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int):
        return None  # absent or not a number yet: the schema's or the webhook's own wording
    unless = ""
    minimum = 0
    if defaults is not None:
        written = defaults.get(MAX_CONTAINER_CONCURRENCY)
        limit = DEFAULT_MAX_CONTAINER_CONCURRENCY if written is None else _go_int64(str(written).strip())
        if limit is None:
            return None  # Knative refuses the ConfigMap itself and keeps its previous settings: unknown
        if str(defaults.get(ALLOW_CONCURRENCY_ZERO, "true")).strip() in ("0", "f", "F", "FALSE", "false", "False"):
            minimum = 1  # cm.AsBool: strconv.ParseBool's false
    elif keys is not None and (MAX_CONTAINER_CONCURRENCY in keys or ALLOW_CONCURRENCY_ZERO in keys):
        return None
    else:
        limit = DEFAULT_MAX_CONTAINER_CONCURRENCY
        unless = "" if keys is not None else MAX_CONTAINER_CONCURRENCY
    if minimum <= concurrency <= limit:
        return None
    if concurrency < minimum:
        unless = ""  # below zero is refused whatever the maximum
    message = f"expected {minimum} <= {concurrency} <= {limit}: {CONCURRENCY_FIELD}"
    return ScaleProblem("containerConcurrency", message, unless=unless)


def _go_int64(value: str) -> int | None:
    """strconv.ParseInt(v, 10, 64), as cm.AsInt64 reads it."""
    if not _GO_INT.fullmatch(value):
        return None
    number = int(value) if len(value) < 30 else None
    return number if number is not None and -(2**63) <= number < 2**63 else None
