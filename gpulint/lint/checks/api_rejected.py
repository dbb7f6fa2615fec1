"""api-rejected: the API server refuses the object (validation beyond the OpenAPI schema), worded as it words it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.kube.fields import dig, mapping
from gpulint.kube.held_pods import HELD_IN
from gpulint.kube.validation import core
from gpulint.kube.validation.errors import FieldError
from gpulint.kube.validation.objects import BUILT_IN, admin_access_request
from gpulint.kube.validation.resource import ADMIN_NAMESPACE_LABEL
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Refused, Refuses, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.refusal import kept_api_errors, kept_pod_errors
from gpulint.lint.world.rejections import API_REJECTED, rejection_text

if TYPE_CHECKING:  # the policy model is loaded only when the inventory holds policies
    from gpulint.lint.policies import Policy

SPEC = RuleSpec(API_REJECTED, Severity.ERROR)
RULE_ID = SPEC.id
# A ResourceQuota an operator creates from a field of its own object: (group, kind) -> (the field, the quota's
# name, who makes it). Kubeflow's profile controller: kf-resource-quota from spec.resourceQuotaSpec
# (components/profile-controller/controllers/profile_controller.go, KFQUOTA).
QUOTAS_MADE_FROM = {
    ("kubeflow.org", "Profile"): (("spec", "resourceQuotaSpec"), "kf-resource-quota", "Kubeflow's profile controller")
}


def _made_quota(obj: KubeObject) -> Iterator[Diagnostic]:
    """The ResourceQuota an operator makes from the object (QUOTAS_MADE_FROM), refused by the API server."""
    made = QUOTAS_MADE_FROM.get((obj.ref.group, obj.kind))
    if made is None:
        return
    spec, name, maker = made
    subject = f"the API server rejects the ResourceQuota {name} that {maker} makes from it"
    for error in core.quota_resource_names(dig(obj.data, *spec, "hard"), (*spec, "hard"), ("spec", "hard")):
        yield _diagnostic(error, subject)


# The StatefulSet controller labels each pod controller-revision-hash=<StatefulSet name>-<revision hash>
# (kubernetes pkg/controller/history/controller_history.go ControllerRevisionName: the hash is a uint32's decimal
# digits through rand.SafeEncodeString, 10 characters unless it is below 10^9), and a label value holds at most 63
# characters: past 52 the API server refuses every pod (kubernetes/kubernetes#64023). Kinds whose controller makes
# a StatefulSet of their own name: (group, kind) -> who makes it.
STATEFULSETS_MADE_BY = {("apps", "StatefulSet"): "", ("kubeflow.org", "Notebook"): "Kubeflow's notebook controller"}
LABEL_VALUE_MAX = 63
REVISION_HASH_MAX = 10


def _revision_label_too_long(obj: KubeObject) -> Iterator[Diagnostic]:
    maker = STATEFULSETS_MADE_BY.get((obj.ref.group, obj.kind))
    name = obj.ref.name
    # `{{ .Release.Name }}-...` rendered as helm template's stand-in: judged as the shortest release would name it
    judged = obj.shortest_release_data()["metadata"]["name"] if obj.name_chosen_at_install() else name
    if maker is None or not name or len(judged) + 1 + REVISION_HASH_MAX <= LABEL_VALUE_MAX:
        return
    shortest = len(judged) + 1 + REVISION_HASH_MAX - 1  # a hash below 10^9 is 9 characters
    made = f"of the StatefulSet {maker} makes for this {obj.kind}" if maker else "this StatefulSet creates"
    brief = (
        f"the API server rejects every pod {made}: metadata.labels: Invalid value: "
        f'"{name}-<revision hash>": must be no more than {LABEL_VALUE_MAX} characters'
    )
    notes = (
        "the StatefulSet controller labels each pod controller-revision-hash=<StatefulSet name>-<hash of up to "
        f"{REVISION_HASH_MAX} characters>: a name of {len(name)} characters leaves no room for it; keep the name "
        f"to {LABEL_VALUE_MAX - 1 - REVISION_HASH_MAX} characters",
        *(
            (f"a {len(name)}-character name fits only when the revision hash is below 10^9 (9 characters)",)
            if shortest <= LABEL_VALUE_MAX
            else ()
        ),
    )
    severity = Severity.WARNING if shortest <= LABEL_VALUE_MAX else None
    # the StatefulSet is admitted; each pod it makes is refused at its create
    refused = Refused(Refuses.PODS, certain=severity is None)
    yield Diagnostic(RULE_ID, ("metadata", "name"), brief, notes=notes, severity=severity, refused=refused)


def _missing_priority_classes(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """The Priority admission plugin (plugin/pkg/admission/priority/admission.go admitPod): a pod naming a
    PriorityClass that does not exist is forbidden. Judged only when the catalog of PriorityClasses is complete."""
    pod = obj.kind == "Pod" and not obj.ref.group
    subject = f'the API server rejects this Pod: pods "{obj.ref.name}" is forbidden' if pod else None
    for site in obj.facts.sites():
        name = site.spec.get("priorityClassName")
        if not isinstance(name, str) or not name or (site.substituted and site.substituted in name):
            continue
        if ctx.resolver.priority_class_missing(name, obj.document.path):
            yield Diagnostic(
                RULE_ID,
                (*site.path, "priorityClassName"),
                f"{subject or 'the API server rejects the pods it creates'}: "
                f"no PriorityClass with name {name} was found",
                refused=Refused(Refuses.PODS),  # the plugin judges pods only: a workload is admitted
            )


# The PodNodeSelector admission plugin (plugin/pkg/admission/podnodeselector/admission.go Admit): a namespace's
# annotation, read with labels.ConvertSelectorToLabelsMap, is merged into every pod's nodeSelector; a key both set
# to different values (labels.Conflicts) is Forbidden. The plugin is off unless the API server enables it, and the
# annotation does nothing then: a warning.
NAMESPACE_NODE_SELECTOR = "scheduler.alpha.kubernetes.io/node-selector"
NODE_SELECTOR_CONFLICT = "pod node label selector conflicts with its namespace node label selector"


def _selector_map(value: object) -> dict[str, str] | None:
    """ConvertSelectorToLabelsMap: ``k=v`` pairs separated by commas (None: not such a list, which the plugin
    refuses with its own error)."""
    if not isinstance(value, str):
        return None
    out: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in value.split(","))):
        key, sep, val = pair.partition("=")
        if not sep or "=" in val or not key.strip():
            return None
        out[key.strip()] = val.strip()
    return out


def _namespace_selector_conflicts(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    namespace = ctx.resolver.namespaces.get(obj.ref.namespace) if obj.ref.namespace else None
    annotation = mapping(dig(namespace, "metadata", "annotations")).get(NAMESPACE_NODE_SELECTOR) if namespace else None
    pinned = _selector_map(annotation)
    if not pinned:
        return
    pod = obj.kind == "Pod" and not obj.ref.group
    subject = (
        f'the API server rejects this Pod: pods "{obj.ref.name}" is forbidden'
        if pod
        else "the API server rejects the pods it creates"
    )
    for site in obj.facts.sites():
        selector = mapping(site.spec.get("nodeSelector"))
        clashes = [key for key, value in selector.items() if key in pinned and pinned[key] != value]
        if not clashes:
            continue
        key = clashes[0]
        yield Diagnostic(
            RULE_ID,
            (*site.path, "nodeSelector", key),
            f"{subject}: {NODE_SELECTOR_CONFLICT}",
            notes=(
                f"namespace {obj.ref.namespace}'s {NAMESPACE_NODE_SELECTOR} sets {key}={pinned[key]}; "
                f"the pod's nodeSelector sets {key}={selector[key]}",
                "where the API server runs the PodNodeSelector admission plugin (off unless enabled; without it the "
                "annotation does nothing)",
            ),
            severity=Severity.WARNING,
        )


def _admin_access_forbidden(obj: KubeObject, ctx: CheckContext) -> FieldError | None:
    """AuthorizedForAdmin: a claim (template) asking for admin access is refused unless its namespace is labelled
    resource.kubernetes.io/admin-access: "true". Judged only for a namespace the linted files or the inventory
    hold (its labels known) and when DRAAdminAccess is on (off, the API server drops the field)."""
    error = admin_access_request(obj.kind, obj.api_version, obj.data)
    if error is None or not obj.ref.namespace or not ctx.config.gates.enabled("DRAAdminAccess"):
        return None
    namespace = ctx.resolver.namespaces.get(obj.ref.namespace)
    if namespace is None:
        return None
    labels = mapping(dig(namespace, "metadata", "labels"))
    return None if labels.get(ADMIN_NAMESPACE_LABEL) == "true" else error


def _cluster_policies(ctx: CheckContext) -> tuple[Policy, ...]:
    located = [(item.data, item.file) for item in ctx.resolver.inventory_admission_policies()]
    if not located:
        return ()  # the CEL engine is loaded only for a cluster that has policies (tests/unit/test_startup.py)
    from gpulint.lint.policies import cluster_policies

    found: tuple[Policy, ...] = ctx.memo(
        "cluster-admission-policies", lambda: cluster_policies(located, ctx.config.kubernetes_version)
    )
    return found


def _policy_denials(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """The cluster's ValidatingAdmissionPolicies (the inventory's, with their bindings) on the object as written,
    worded as k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go words their outcome: a Deny
    binding refuses the request, a Warn one answers with a warning. Nothing is said where the outcome is not
    known offline (a namespace whose labels no file holds, params the inventory lacks, an expression that fails
    here): the same evaluation as a --policy VAP's (lint/policies)."""
    policies = _cluster_policies(ctx)
    if not policies:
        return
    from gpulint.lint.policies import evaluate, failed_to_evaluate, policy_engine

    for policy in policies:
        named = f"ValidatingAdmissionPolicy '{policy.name}' with binding '{policy.binding}'"
        for found in evaluate(policy, obj, ctx, policy_engine()):
            if found.severity is Severity.ERROR:
                yield Diagnostic(
                    RULE_ID,
                    found.path,
                    f"the API server rejects this object: {named} denied request: {found.message}",
                    on_key=found.on_key,
                    notes=found.notes,
                    # a Deny binding's false validation refuses the create; a failed evaluation, its failurePolicy
                    refused=Refused(Refuses.OBJECT, certain=not failed_to_evaluate(found.message)),
                )
            elif found.severity is Severity.WARNING:
                yield Diagnostic(
                    RULE_ID,
                    found.path,
                    f"the API server admits this object with a warning: Validation failed for {named}: {found.message}",
                    severity=Severity.WARNING,
                    on_key=found.on_key,
                    notes=found.notes,
                )


def _diagnostic(error: FieldError, subject: str, refuses: Refuses | None = None) -> Diagnostic:
    brief, notes = rejection_text(error, subject)
    refused = None if refuses is None else Refused(refuses)
    return Diagnostic(RULE_ID, error.path, brief, on_key=error.at_key, notes=notes, refused=refused)


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for error in kept_api_errors(obj, ctx.config.gates):
        message = error.message()
        if message not in seen:
            seen.add(message)
            yield _diagnostic(error, "the API server rejects this object", Refuses.OBJECT)
    admin = _admin_access_forbidden(obj, ctx)
    if admin is not None:
        yield _diagnostic(admin, "the API server rejects this object", Refuses.OBJECT)
    yield from _missing_priority_classes(obj, ctx)
    yield from _namespace_selector_conflicts(obj, ctx)
    yield from _made_quota(obj)
    yield from _revision_label_too_long(obj)
    yield from _policy_denials(obj, ctx)
    held = (obj.ref.group, obj.kind) in HELD_IN
    if obj.api_version not in BUILT_IN or held:
        # a custom resource's pod templates are not validated as pods until its controller creates them, nor a pod
        # template held in a ConfigMap until the program that reads it does (kube/held_pods)
        subject = (
            "the API server rejects the pods made from it" if held else "the API server rejects the pods it creates"
        )
        for error in kept_pod_errors(obj, ctx.config.gates):
            message = error.message()
            if message not in seen:
                seen.add(message)
                yield _diagnostic(error, subject, Refuses.PODS)
