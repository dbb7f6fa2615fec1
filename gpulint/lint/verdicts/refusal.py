"""An object's admission verdict: is its create refused, by whom and why (#30 step 1: a verdict with a cause).

An object its operator's webhook (or controller's validation) or the API server refuses makes no pods: the create
is refused, or a Job-like custom resource never reaches its controller, or the pods its controller creates are
refused. The rules about running pods (their scheduling, gangs, what runs in them) then speak of pods that never
exist; the engine holds their findings back beside the refusal (lint/engine.py, RuleSpec.of_pods) and `explain`
says the object is not scheduled. Built from the same checks operator-rejected and api-rejected word, and only
from their certainties: a refusal of some releases only (``since``), of an opt-in webhook (``optional``), of a
Kueue integration a linted Configuration leaves off, of a setting the linted files do not hold (Knative's
``unless``), is no refusal here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube import knative, kserve
from gpulint.kube.dra.gates import gate_extremes, prepared_for_create
from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import dig, mapping
from gpulint.kube.held_pods import HELD_IN
from gpulint.kube.operators import RELEASED, cluster_queue_schema_errors, kserve_config_gpu_types, kuberay, refusals
from gpulint.kube.operators import Refusal as OperatorRefusal
from gpulint.kube.refs import ObjectRef, Path
from gpulint.kube.validation import core
from gpulint.kube.validation.errors import FieldError
from gpulint.kube.validation.objects import BUILT_IN, DRA_API, dra_spec, object_meta
from gpulint.kube.validation.scheduling import scheduling_spec
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.findings import Refuses
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.queues import kueue_config
from gpulint.lint.world.rejections import API_REJECTED
from gpulint.lint.world.resolver import Resolver

OPERATOR_REJECTED = "operator-rejected"
_API_ERRORS = "api-errors"  # ObjectFacts keys
_POD_ERRORS = "pod-errors"
_KUEUE_RELEASE_GROUPS = frozenset({kuberay.GROUP})  # the kinds whose Kueue refusal depends on its release
Memo = Callable[[Any, Callable[[], Any]], Any]


def _computed(_key: Any, compute: Callable[[], Any]) -> Any:
    """No memo: computed on each call (explain, one object at a time)."""
    return compute()


NOT_SCHEDULED = "not scheduled: the object is refused at admission"
# How a rule's findings on the pods of a refused object are said, in one info (lint/engine.py): "not judged (N held
# back): this <Kind> <what is refused>"
NOT_JUDGED = "not judged ("
HELD_BACK = "makes no pods while it is refused at admission"
PODS_REFUSED = "makes pods that are refused at creation"  # admitted itself; each pod its controller makes is not
POD_REFUSED = "is refused at admission"  # a Pod: it is the pod
SERVICE_REFUSED = "makes no pods while the Knative Service made for it is refused at admission"
RECONCILE_REFUSED = "makes no pods while its controller fails to reconcile it"  # admitted; nothing is made
HELD_BACK_WORDS = {
    Refuses.OBJECT: HELD_BACK,
    Refuses.PODS: PODS_REFUSED,
    Refuses.SERVICE: SERVICE_REFUSED,
    Refuses.RECONCILE: RECONCILE_REFUSED,
}


@dataclass(frozen=True)
class Refusal:
    """Why the object's create (or its pods') is refused: who refuses, in its words, and the rule that words it."""

    by: str  # "the Training Operator's webhook", "KubeRay", "the API server"
    reason: str  # the refusal's own words
    rule: str  # operator-rejected or api-rejected: where the finding that names it is reported
    path: Path = ()  # the refused field, where that finding is
    held_back: str = HELD_BACK  # what is refused, as the info that stands for the held-back findings says it

    def words(self) -> str:
        """One line: "refused by X: reason" (a rule's error is its own words)."""
        return f"refused by {self.by}: {self.reason}" if self.by else self.reason


def held_back_words(what: Refuses, ref: ObjectRef) -> str:
    """What is refused, said for the object's kind: a Pod is itself the pod refused, whatever refuses it."""
    return POD_REFUSED if (ref.group, ref.kind) == ("", "Pod") else HELD_BACK_WORDS[what]


def template_refuses(ref: ObjectRef) -> Refuses:
    """What an invalid pod template refuses: the API server validates the pod templates of its own workloads with
    the object (ValidatePodTemplateSpec in pkg/apis/core/validation), as GKE's Warden does
    (rules/autopilot-rejected.yaml); a custom resource's, or one held in a ConfigMap, only when its pods are
    created."""
    return Refuses.OBJECT if ref.api_version in BUILT_IN and (ref.group, ref.kind) not in HELD_IN else Refuses.PODS


def refused_error(what: Refuses, rule: str, message: str, ref: ObjectRef) -> Refusal:
    """The refusal an error words (Finding.refused), what it refuses said for the object's kind."""
    return Refusal("", message, rule, held_back=held_back_words(what, ref))


def operator_refusals(obj: KubeObject, resolver: Resolver, memo: Memo = _computed) -> list[OperatorRefusal]:
    """The refusals of the operators that validate the object's kind (kube/operators), less Kueue's for a kind
    whose integration a linted Kueue Configuration leaves off (Kueue registers no webhook for it then). ``memo``:
    the run's (CheckContext.memo), for the releases installed."""
    gpu_types = resolver.linted.fact("kserve gpu types", _kserve_gpu_types, resolver.linted)
    group = obj.ref.group
    kueue_releases = memo(("kueue-releases",), resolver.kueue_installs) if group in _KUEUE_RELEASE_GROUPS else ()
    kuberay_releases = memo(("kuberay-releases",), resolver.kuberay_installs) if group == kuberay.GROUP else ()
    operator = RELEASED.get(group)
    releases = memo(("releases", operator), lambda: resolver.operator_installs(operator)) if operator else ()
    gpu_types = gpu_types if group == kserve.GROUP else frozenset()
    found = refusals(obj.data, group, obj.kind, gpu_types, kueue_releases, kuberay_releases, releases)
    if found and obj.name_chosen_at_install():  # a name limit the chart meets under a short release is not its own
        short = refusals(
            obj.shortest_release_data(), group, obj.kind, gpu_types, kueue_releases, kuberay_releases, releases
        )
        found = [refusal for refusal in found if any(other.path == refusal.path for other in short)]
    if not found:
        return []
    config = kueue_config(resolver)
    integration = obj.ref.group != "kueue.x-k8s.io"  # Kueue's own kinds are always validated
    return [
        refusal
        for refusal in found
        if not (
            refusal.operator == "Kueue"
            and integration
            and config is not None
            and not config.manages(obj.ref.group, obj.kind)
        )
    ]


def _kserve_gpu_types(linted: LintedSet) -> frozenset[str]:
    """The GPU resource types a linted inferenceservice-config (any namespace: kserve, or kubeflow in Kubeflow) adds."""
    for config in linted.of_kind("", "ConfigMap"):
        if config.ref.name == kserve.CONFIG_MAP:
            return kserve_config_gpu_types(mapping(config.data.get("data")).get("multiNode"))
    return frozenset()


def pod_errors(obj: KubeObject, gates: FeatureGates) -> Iterator[FieldError]:
    """The API server's errors on the object's pod templates, validated as pods."""
    for site in obj.facts.sites():
        errors = _site_errors(obj, site, gates)
        if site.substituted:  # Argo's {{...}}: the value the pod gets is not written here
            errors = (e for e in errors if not (isinstance(e.value, str) and site.substituted in e.value))
        yield from errors


def _site_errors(obj: KubeObject, site: PodSpecSite, gates: FeatureGates) -> Iterator[FieldError]:
    if site.template_path:  # a template's labels (a Pod's are its own metadata's)
        template = mapping(dig(obj.data, *site.template_path, "metadata"))
        if template.get("labels"):
            yield from core.labels(template["labels"], (*site.template_path, "metadata", "labels"))
        if template.get("annotations"):
            yield from core.metadata_annotations(
                template["annotations"], (*site.template_path, "metadata", "annotations")
            )
    yield from core.pod_spec(site.spec, site.path, gates)


def api_errors(obj: KubeObject, gates: FeatureGates) -> Iterator[FieldError]:
    """The API server's validation of the object as created (a built-in workload's pod templates with it)."""
    yield from object_meta(obj.kind, obj.api_version, obj.data)
    if obj.api_version in BUILT_IN and (obj.ref.group, obj.kind) not in HELD_IN:
        yield from pod_errors(obj, gates)
    if obj.api_version.startswith(DRA_API):
        yield from _dra_errors(obj, gates)
    yield from scheduling_spec(obj.kind, obj.api_version, obj.data, gates)
    if obj.ref.group == "kueue.x-k8s.io" and obj.kind == "ClusterQueue":  # its CRD's validation rule
        yield from cluster_queue_schema_errors(obj.data)
    if obj.api_version == "v1" and obj.kind == "ResourceQuota":
        yield from core.quota_resource_names(dig(obj.data, "spec", "hard"), ("spec", "hard"), ("spec", "hard"))
    if obj.api_version == "v1" and obj.kind == "LimitRange":
        yield from core.limit_range(obj.data.get("spec"), ("spec",))


def kept_api_errors(obj: KubeObject, gates: FeatureGates) -> tuple[FieldError, ...]:
    """``api_errors`` of an object, worked out once while it is checked: api-rejected reads them all, the
    admission verdict on a rule's pod findings (``object_refusal``) the first."""
    return obj.facts.fact(_API_ERRORS, gates, _all_of, api_errors, obj, gates)


def kept_pod_errors(obj: KubeObject, gates: FeatureGates) -> tuple[FieldError, ...]:
    """``pod_errors`` of an object, worked out once while it is checked (as ``kept_api_errors``)."""
    return obj.facts.fact(_POD_ERRORS, gates, _all_of, pod_errors, obj, gates)


def _all_of(
    errors: Callable[[KubeObject, FeatureGates], Iterator[FieldError]], obj: KubeObject, gates: FeatureGates
) -> tuple[FieldError, ...]:
    return tuple(errors(obj, gates))


def _dra_errors(obj: KubeObject, gates: FeatureGates) -> list[FieldError]:
    """A resource.k8s.io object validated as created: without the fields of disabled gates; with gates the
    configuration does not state, only the errors found whichever way they are set."""
    kind, api_version = obj.kind, obj.api_version
    first, *others = (
        list(dra_spec(kind, api_version, prepared_for_create(kind, api_version, obj.data, each)))
        for each in gate_extremes(gates)
    )
    found = [{error.message() for error in other} for other in others]
    return [error for error in first if all(error.message() in messages for messages in found)]


def _operator_refusal(obj: KubeObject, resolver: Resolver, memo: Memo) -> Refusal | None:
    for refusal in operator_refusals(obj, resolver, memo):
        if refusal.since or refusal.optional or refusal.uncertain:  # some releases, or an opt-in webhook: not certain
            continue
        operator = "the " + refusal.operator[4:] if refusal.operator.startswith("The ") else refusal.operator
        by = operator if refusal.controller else f"{operator}'s webhook"
        reason = refusal.error.message() if refusal.error is not None else refusal.words
        # a controller's validation: the object is admitted and its controller makes nothing of it
        held_back = RECONCILE_REFUSED if refusal.controller else HELD_BACK
        return Refusal(by, reason, OPERATOR_REJECTED, refusal.path, held_back)
    if obj.ref.group == knative.GROUP and obj.kind in knative.KINDS:
        return _knative_refusal(obj, resolver)
    return None


def _knative_refusal(obj: KubeObject, resolver: Resolver) -> Refusal | None:
    """Knative's webhook on a Service's or Configuration's autoscaling annotations, revision timeout and
    containerConcurrency: only where its refusal does not hang on a ConfigMap the linted files do not hold
    (operator-rejected's errors)."""
    by = "Knative's webhook"
    for key in knative.misplaced_autoscaling(mapping(dig(obj.data, "metadata", "annotations"))):
        message = f'invalid key name "{key}": metadata.annotations'
        return Refusal(by, message, OPERATOR_REJECTED, ("metadata", "annotations", key))
    annotations = mapping(dig(obj.data, "spec", "template", "metadata", "annotations"))
    config = knative.autoscaler_config(resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.AUTOSCALER_CONFIG))
    for problem in knative.scale_problems(annotations, config):
        if not problem.unless:
            return Refusal(
                by, problem.message, OPERATOR_REJECTED, ("spec", "template", "metadata", "annotations", problem.key)
            )
    defaults = resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.DEFAULTS_CONFIG)
    keys = None if defaults is not None else resolver.config_map_keys(knative.CONFIG_NAMESPACE, knative.DEFAULTS_CONFIG)
    timeout = knative.timeout_problem(mapping(dig(obj.data, "spec", "template", "spec")), defaults, keys)
    if timeout is not None and not timeout.unless:
        return Refusal(by, timeout.message, OPERATOR_REJECTED, ("spec", "template", "spec", "timeoutSeconds"))
    concurrency = knative.concurrency_problem(
        dig(obj.data, "spec", "template", "spec", "containerConcurrency"), defaults, keys
    )
    if concurrency is not None and not concurrency.unless:
        path = ("spec", "template", "spec", "containerConcurrency")
        return Refusal(by, concurrency.message, OPERATOR_REJECTED, path)
    return None


def object_refusal(obj: KubeObject, resolver: Resolver, gates: FeatureGates, memo: Memo = _computed) -> Refusal | None:
    """The first certain refusal of the object's create, or of the pods it makes; None when it is admitted as
    far as gpulint knows. The operator's first (its webhook answers after the API server's schema, but an
    operator's refusal is the one the user reads first for a custom resource), then the API server's."""
    found = _admission_refusal(obj, resolver, gates, memo)
    if found is not None and (obj.ref.group, obj.kind) == ("", "Pod"):
        return replace(found, held_back=POD_REFUSED)
    return found


def _admission_refusal(obj: KubeObject, resolver: Resolver, gates: FeatureGates, memo: Memo) -> Refusal | None:
    found = _operator_refusal(obj, resolver, memo)
    if found is not None:
        return found
    for error in kept_api_errors(obj, gates):
        return Refusal("the API server", error.message(), API_REJECTED, error.path)
    if obj.api_version not in BUILT_IN or (obj.ref.group, obj.kind) in HELD_IN:
        for error in kept_pod_errors(obj, gates):  # the pods its controller creates are refused: none runs
            message = f"the pods it creates: {error.message()}"
            return Refusal("the API server", message, API_REJECTED, error.path, PODS_REFUSED)
    for site in obj.facts.sites():
        name = site.spec.get("priorityClassName")
        if isinstance(name, str) and name and not (site.substituted and site.substituted in name):
            if resolver.priority_class_missing(name, obj.document.path):
                path = (*site.path, "priorityClassName")
                # the Priority admission plugin judges pods only: a workload is admitted, each of its pods refused
                message = f"no PriorityClass with name {name} was found"
                return Refusal("the API server", message, API_REJECTED, path, PODS_REFUSED)
    return None
