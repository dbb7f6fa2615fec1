"""feature-gate-required: a manifest uses a feature that is alpha or off by default in the target version."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.features import stage
from gpulint.kube.fields import mapping
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("feature-gate-required", Severity.INFO)
API_GROUPS = frozenset({"resource.k8s.io", "scheduling.k8s.io"})
DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule"})
RULE_ID = SPEC.id


def _uses(obj: KubeObject) -> Iterator[tuple[str, tuple, str]]:
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
    for site in pod_spec_sites(data):
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
            f"uses {what}, which needs the {gate} feature gate ({phase} in Kubernetes {version}); "
            f"the gate {stated}: "
            f"enable {gate}=true on the API server and scheduler, or the field is dropped/the object "
            "refused",
            notes=_notes(gate, obj),
            severity=severity,
        )
