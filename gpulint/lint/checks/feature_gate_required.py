"""feature-gate-required: a manifest uses a feature that is alpha or off by default in the target version."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.features import stage
from gpulint.kube.fields import dig, mapping, sequence
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.dra_objects import CLAIM_KINDS, is_dra

SPEC = RuleSpec("feature-gate-required", Severity.INFO)
API_GROUPS = frozenset({"resource.k8s.io", "scheduling.k8s.io"})
DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule"})
RULE_ID = SPEC.id


# DRA fields behind a gate (the API server drops them from new objects while it is off, and the
# allocator ignores them): pkg/registry/resource/*/strategy.go dropDisabled*Fields, by place.
REQUEST_FIELDS = (  # an `exactly` request (the request itself in v1beta1) or a firstAvailable subrequest
    ("adminAccess", "DRAAdminAccess", "adminAccess"),
    ("capacity", "DRAConsumableCapacity", "capacity requests"),
    ("tolerations", "DRADeviceTaints", "device tolerations"),
)
SLICE_FIELDS = (
    ("sharedCounters", "DRAPartitionableDevices", "shared counters"),
    ("perDeviceNodeSelection", "DRAPartitionableDevices", "per-device node selection"),
)
DEVICE_FIELDS = (
    ("consumesCounters", "DRAPartitionableDevices", "consumesCounters"),
    ("allowMultipleAllocations", "DRAConsumableCapacity", "allowMultipleAllocations"),
    ("taints", "DRADeviceTaints", "device taints"),
    ("bindingConditions", "DRADeviceBindingConditions", "bindingConditions"),
    ("bindingFailureConditions", "DRADeviceBindingConditions", "bindingFailureConditions"),
    ("bindsToNode", "DRADeviceBindingConditions", "bindsToNode"),
)


def _gated(holder: dict, base: tuple, table: tuple[tuple[str, str, str], ...]) -> Iterator[tuple[str, tuple, str]]:
    for field, gate, what in table:
        if holder.get(field) not in (None, [], {}):
            yield gate, (*base, field), what


def _dra_uses(obj: KubeObject) -> Iterator[tuple[str, tuple, str]]:
    if not obj.api_version.startswith("resource.k8s.io/"):
        return  # not a DRA object (is_dra's first test, once)
    if is_dra(obj, *CLAIM_KINDS):
        from gpulint.kube.dra.allocation import claim_spec_path  # the DRA model: for DRA claims only

        base = claim_spec_path(obj.kind)
        flat = not obj.api_version.endswith(("/v1", "/v1beta2"))
        devices = mapping(dig(obj.data, *base))
        for index, request in enumerate(sequence(devices.get("requests"))):
            path = (*base, "requests", index)
            request = mapping(request)
            if request.get("firstAvailable"):
                yield "DRAPrioritizedList", (*path, "firstAvailable"), "firstAvailable (prioritized list)"
            for sub_index, sub in enumerate(sequence(request.get("firstAvailable"))):
                yield from _gated(mapping(sub), (*path, "firstAvailable", sub_index), REQUEST_FIELDS)
            exactly = request if flat else mapping(request.get("exactly"))
            yield from _gated(exactly, path if flat else (*path, "exactly"), REQUEST_FIELDS)
        for index, constraint in enumerate(sequence(devices.get("constraints"))):
            if mapping(constraint).get("distinctAttribute"):
                path = (*base, "constraints", index, "distinctAttribute")
                yield "DRAConsumableCapacity", path, "distinctAttribute"
    elif is_dra(obj, "DeviceClass") and mapping(obj.data.get("spec")).get("extendedResourceName"):
        yield "DRAExtendedResource", ("spec", "extendedResourceName"), "a DRA-backed extended resource"
    elif is_dra(obj, "ResourceSlice"):
        spec = mapping(obj.data.get("spec"))
        yield from _gated(spec, ("spec",), SLICE_FIELDS)
        for index, device in enumerate(sequence(spec.get("devices"))):
            basic = mapping(device).get("basic")
            body, path = (
                (basic, ("spec", "devices", index, "basic"))
                if isinstance(basic, dict)
                else (
                    mapping(device),
                    ("spec", "devices", index),
                )
            )
            yield from _gated(body, path, DEVICE_FIELDS)
    elif is_dra(obj, "DeviceTaintRule"):
        yield "DRADeviceTaints", ("kind",), "the DeviceTaintRule API"


def _uses(obj: KubeObject) -> Iterator[tuple[str, tuple, str]]:
    yield from _dra_uses(obj)
    data, group = obj.data, obj.ref.group
    spec = mapping(data.get("spec"))
    if group == "scheduling.k8s.io" and obj.kind in ("Workload", "PodGroup", "CompositePodGroup"):
        yield "GenericWorkload", ("kind",), f"the {obj.kind} API"
        if obj.kind == "CompositePodGroup" or "compositePodGroupTemplates" in spec:
            yield "CompositePodGroup", ("kind",), "composite pod groups (multi-level topology)"
        listed = spec.get("podGroupTemplates")
        templates = listed if isinstance(listed, list) else [spec]
        for index, template in enumerate(templates):
            if not isinstance(template, dict):
                continue
            base = ("spec", "podGroupTemplates", index) if "podGroupTemplates" in spec else ("spec",)
            if isinstance(template.get("schedulingConstraints"), dict):
                yield "TopologyAwareWorkloadScheduling", (*base, "schedulingConstraints"), "topology constraints"
            if template.get("resourceClaims"):
                yield "DRAWorkloadResourceClaims", (*base, "resourceClaims"), "pod-group resource claims"
    if group == "resource.k8s.io" and obj.kind in DRA_KINDS:
        yield "DynamicResourceAllocation", ("kind",), f"the {obj.kind} API"
    if group == "batch" and obj.kind == "Job" and isinstance(spec.get("scheduling"), dict):
        yield "WorkloadWithJob", ("spec", "scheduling"), "Job spec.scheduling"
    for site in obj.facts.sites():
        for field in ("schedulingGroup", "workloadRef"):
            if isinstance(site.spec.get(field), dict):
                yield "GenericWorkload", (*site.path, field), f"pod spec.{field}"
        if isinstance(site.spec.get("resourceClaims"), list) and site.spec["resourceClaims"]:
            yield "DynamicResourceAllocation", (*site.path, "resourceClaims"), "pod spec.resourceClaims"


def _notes(gate: str, obj: KubeObject) -> tuple[str, ...]:
    if gate != "DynamicResourceAllocation":
        return ()
    served = obj.api_version if obj.ref.group == "resource.k8s.io" else "resource.k8s.io/<version>"
    return (
        "kube-controller-manager and the kubelet need the gate too, and a beta or alpha API version is "
        f"served only when kube-apiserver's --runtime-config enables it ({served}=true)",
    )


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    version = ctx.config.kubernetes_version
    given = ctx.config.feature_gates
    if obj.ref.group in API_GROUPS and not ctx.schemas.has_schema(obj.api_version, obj.kind):
        return  # an API version the release does not serve: api-version-unavailable says so
    seen = set()
    for gate, path, what in _uses(obj):
        if (gate, path) in seen:
            continue
        seen.add((gate, path))
        phase, default_on = stage(gate, version)
        if phase == "unavailable":  # the field does not exist in that release: schema-invalid says so
            continue
        enabled = given.get(gate, default_on) if given is not None else default_on
        if enabled:
            continue
        severity = Severity.WARNING if given is not None else Severity.INFO
        stated = "is disabled in --feature-gates" if given is not None and gate in given else "is off by default"
        yield Diagnostic(
            RULE_ID,
            path,
            f"uses {what}, which needs the {gate} feature gate ({phase} in Kubernetes {version}); the gate {stated}",
            severity=severity,
            notes=(
                f"enable {gate}=true on the API server and scheduler, or the field is dropped/the object refused",
                *_notes(gate, obj),
            ),
        )
