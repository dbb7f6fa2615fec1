"""operator-rejected: an operator's own admission webhook (Kueue, Volcano, JobSet, LeaderWorkerSet, Training Operator,
Trainer, KServe, Knative Serving, KAITO, Katib) or its controller's validation (KubeRay, the MPI operator) refuses the object,
or the Service its controller names after it (KAITO, Katib, the NIM operator), worded as it words it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gpulint.kube import knative, kserve
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.kserve_runtimes import BUILT_IN
from gpulint.kube.operators import CHECKS, kaito
from gpulint.kube.operators import kserve as kserve_operator
from gpulint.kube.refs import Path
from gpulint.kube.typos import typo_of
from gpulint.kube.wording import first_and_more
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Refused, Refuses, Severity, refusing, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.refusal import operator_refusals
from gpulint.lint.world.rejections import rejection_text

SPEC = RuleSpec(
    "operator-rejected",
    Severity.ERROR,
    kinds=frozenset({kind for _, kind in CHECKS}) | frozenset(knative.KINDS),  # Knative's are Service and Configuration
)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.ref.group == knative.GROUP and obj.kind in knative.KINDS:
        yield from refusing(_knative_scale(obj, ctx), Refuses.OBJECT)
        return
    if obj.ref.group == kserve.GROUP and obj.kind == "InferenceService":
        yield from refusing(_kserve_knative_scale(obj, ctx), Refuses.SERVICE)
        # no runtime: the controller makes no Deployment or Knative Service for the predictor, so no pods
        yield from refusing(_kserve_runtime_missing(obj, ctx), Refuses.RECONCILE)
        yield from _kserve_pod_mutator(obj, ctx)
    if obj.ref.group == kaito.KAITO_GROUP and obj.kind == "Workspace":
        yield from _kaito_preferred_unlabelled(obj, ctx)
    for refusal in operator_refusals(obj, ctx.resolver, ctx.memo):
        if refusal.controller:  # no webhook: the operator's controller validates what the API server stored
            subject = f"{refusal.operator} refuses this {obj.kind}"
        else:
            subject = f"{refusal.operator}'s webhook rejects this {obj.kind}"
        if refusal.error is not None:
            brief, notes = rejection_text(refusal.error, subject)
        else:
            brief, notes = split_long(f"{subject}: {refusal.words}")
        notes = (*notes, *(note for note in (refusal.controller, refusal.before, refusal.release) if note))
        severity = None
        if refusal.since:  # older releases, still run, accept it
            severity = Severity.WARNING
            notes = (*notes, f"{refusal.operator} {refusal.since} and later refuse it; earlier releases accept it")
        if refusal.uncertain:  # the releases found disagree: the clusters that run the others take it
            severity = Severity.WARNING
            notes = (*notes, refusal.uncertain)
        if refusal.optional:  # only an opt-in webhook refuses it; without it the object is taken and misbehaves
            severity = Severity.WARNING
            notes = (*notes, refusal.optional)
        refused = Refused(Refuses.RECONCILE if refusal.controller else Refuses.OBJECT, certain=severity is None)
        yield Diagnostic(
            RULE_ID, refusal.path, brief, notes=notes, inputs=refusal.inputs, severity=severity, refused=refused
        )


def _kserve_runtime_missing(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """The runtime a predictor's model names, found neither among the namespace's ServingRuntimes nor the
    ClusterServingRuntimes (GetServingRuntime): the controller cannot reconcile the predictor. Said only where the
    cluster's ClusterServingRuntimes are known whole; a warning while its ServingRuntimes are not."""
    name = kserve.runtime_name(obj.data)
    resolver = ctx.resolver
    namespace = obj.ref.namespace
    if not name or not resolver.reference_proven_absent:
        return
    if any(resolver.workload_runtime(kserve.GROUP, kind, namespace, name) for kind in kserve.RUNTIME_KINDS):
        return
    file = obj.document.path
    if not resolver.catalog_complete("ClusterServingRuntime", file):
        return  # a chart, an operator or another folder may install it
    if not resolver.lists("ClusterServingRuntime") and any(b.name == name for b in BUILT_IN):
        return  # declared whole for the files, but KServe's own runtimes manifest installs this one
    elsewhere = [other for other in resolver.namespaces_of(kserve.GROUP, "ServingRuntime", name) if other != namespace]
    known = resolver.workload_runtime_names(kserve.GROUP, "ClusterServingRuntime")
    close = typo_of(name, known)
    hint = f"; did you mean '{close}'?" if close else ""
    notes = [
        f"KServe's controller fails to reconcile the predictor ({kserve.RUNTIME_NOT_RECOGNIZED}) and the "
        "InferenceService never becomes Ready; its webhook does not check the name",
        f"clusterservingruntimes.{kserve.GROUP} in the cluster: {', '.join(sorted(known)) or 'none'}",
    ]
    if elsewhere:
        notes.append(
            f"a ServingRuntime '{name}' is in namespace {', '.join(elsewhere)}: KServe reads only the "
            f"InferenceService's own ('{namespace}')"
        )
    namespaced = resolver.catalog_complete("ServingRuntime", file)
    if not namespaced:
        notes.append(
            f"unless namespace '{namespace}' holds a ServingRuntime '{name}': the inventory does not list "
            "ServingRuntimes (or declare them complete in .gpulint.yaml: complete: [ServingRuntime])"
        )
    yield Diagnostic(
        RULE_ID,
        ("spec", "predictor", "model", "runtime"),
        f"KServe refuses this InferenceService: No ServingRuntimes or ClusterServingRuntimes with the name: "
        f"{name}{hint}",
        notes=tuple(notes),
        severity=None if namespaced else Severity.WARNING,
    )


def _kserve_pod_mutator(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A predictor whose storageUri only KServe's pod mutator fetches (its storage initializer), in a namespace the
    mutator's namespaceSelector leaves out: the inventory's (or linted) configuration, else as KServe installs it."""
    found = kserve_operator.predictor_storage_uri(obj.data)
    labels = ctx.resolver.namespace_labels(obj.ref.namespace)
    if found is None or labels is None:
        return
    webhook = ctx.resolver.mutating_webhook(kserve_operator.POD_MUTATOR)
    source = "as the cluster's MutatingWebhookConfiguration holds it"
    if webhook is None:
        webhook, source = kserve_operator.SHIPPED_POD_MUTATOR, "as KServe installs it (config/webhook/manifests.yaml)"
    if kserve_operator.pod_mutator_reaches(webhook, obj.ref.name, labels):
        return
    path, uri = found
    selector = mapping(webhook.get("namespaceSelector"))
    keys = [
        *mapping(selector.get("matchLabels")),
        *(text(mapping(e).get("key")) for e in sequence(selector.get("matchExpressions"))),
    ]
    held = ", ".join(f"{key}={labels[key]}" for key in dict.fromkeys(keys) if key in labels) or "no such label"
    yield Diagnostic(
        RULE_ID,
        path,
        f"KServe's pod mutator is not called on this InferenceService's pods: namespace '{obj.ref.namespace}' "
        f"({held}) is outside its namespaceSelector ({kserve_operator.selector_words(selector)}), so no storage "
        f"initializer fetches {uri} and the predictor starts without its model",
        notes=(
            f"webhook {kserve_operator.POD_MUTATOR}, {source}",
            *(
                (
                    "KServe serves no InferenceService in a control-plane namespace (its own, or Kubeflow's kubeflow): "
                    "deploy it to a user namespace (a Kubeflow profile's)",
                )
                if "control-plane" in keys
                else ()
            ),
        ),
        severity=Severity.WARNING,
    )


def _kaito_preferred_unlabelled(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """The inventory's preferred nodes of a Workspace, none carrying its labelSelector's labels, and no other node
    that does: KAITO uses none of them and asks for a new node (a NodeClaim) instead."""
    found = kaito.byo_selector(obj.data)
    nodes = ctx.resolver.nodes
    if found is None or not nodes:
        return
    labels, preferred = found
    if any(all(node.labels.get(key) == value for key, value in labels.items()) for node in nodes):
        return  # a node carries them: KAITO may use it
    held = [node for node in nodes if node.name in preferred]
    if not held:
        return  # the preferred nodes are not in the inventory: nothing is known of their labels
    wanted = ", ".join(f"{key}={value}" for key, value in labels.items())
    names = first_and_more([node.name for node in held], 3, noun="nodes")
    yield Diagnostic(
        RULE_ID,
        ("resource", "labelSelector", "matchLabels"),
        f"KAITO does not use preferred node {names}: it lacks the Workspace's resource.labelSelector "
        f"({wanted}), which KAITO selects nodes by and its pods require, so it asks for a new node (a NodeClaim) "
        "instead, which stays Pending where no node provisioner runs",
        notes=(
            "no node of the inventory carries " + wanted,
            f"label the node (kubectl label node {held[0].name} {wanted}), or select on a label it has",
        ),
        severity=Severity.WARNING,
        inputs=tuple(("resource", "labelSelector", "matchLabels", key) for key in labels),  # ${MODEL}: not known yet
    )


def _knative_scale(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A Knative Service's or Configuration's autoscaling annotations: none on its own metadata, valid ones on the
    revision template, against config-autoscaler when the linted files hold it (its defaults otherwise)."""
    webhook = f"Knative's webhook rejects this {obj.kind}: validation failed"
    for key in knative.misplaced_autoscaling(mapping(dig(obj.data, "metadata", "annotations"))):
        brief, notes = split_long(f'{webhook}: invalid key name "{key}": metadata.annotations')
        notes = (*notes, knative.MISPLACED_DETAIL)  # apis.FieldError's Details, on the line under it
        yield Diagnostic(RULE_ID, ("metadata", "annotations", key), brief, on_key=True, notes=notes)
    annotations = mapping(dig(obj.data, "spec", "template", "metadata", "annotations"))
    config = knative.autoscaler_config(
        ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.AUTOSCALER_CONFIG)
    )
    for problem in knative.scale_problems(annotations, config):
        brief, notes = split_long(f"{webhook}: {problem.message}")
        if problem.by_limit:
            notes = (
                *notes,
                f"max-scale-limit is {config.max_scale_limit} in ConfigMap knative-serving/config-autoscaler",
            )
        severity = None
        if problem.unless:  # the cluster's setting decides, and the linted files do not hold it: its default refuses
            severity = Severity.WARNING
            notes = (
                *notes,
                f"unless ConfigMap knative-serving/config-autoscaler sets {problem.unless} (its default refuses)",
            )
        yield Diagnostic(
            RULE_ID,
            ("spec", "template", "metadata", "annotations", problem.key),
            brief,
            notes=notes,
            severity=severity,
        )
    yield from _knative_timeout(obj, ctx, webhook)
    spec = mapping(dig(obj.data, "spec", "template", "spec"))
    path = ("spec", "template", "spec", "containerConcurrency")
    yield from _knative_concurrency(spec.get("containerConcurrency"), path, ctx, webhook)


def _kserve_knative_scale(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """In Knative mode KServe copies the InferenceService's annotations, but min-scale and max-scale (which it writes
    from minReplicas and maxReplicas), onto each component's revision template (generateMetadata, with
    constants.ServiceAnnotationDisallowedList): Knative's webhook validates them there against config-autoscaler."""
    mode = kserve.deployment_mode(obj.data, ctx.kserve_default_mode())
    if mode is kserve.DeploymentMode.OTHER:
        return
    written = mapping(dig(obj.data, "metadata", "annotations"))
    copied = {key: value for key, value in written.items() if key not in kserve.KNATIVE_SCALE_SET_BY_KSERVE}
    config = knative.autoscaler_config(
        ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.AUTOSCALER_CONFIG)
    )
    subject = "Knative's webhook rejects the Knative Service KServe makes for this InferenceService"
    for problem in knative.scale_problems(copied, config):
        message = problem.message.replace(knative.TEMPLATE_ANNOTATIONS, "metadata.annotations", 1)
        brief, notes = split_long(f"{subject}: validation failed: {message}")
        notes = (
            *notes,
            "KServe copies the InferenceService's annotations onto the revision template of the Knative Service it "
            f"makes for each component; Knative validates them there: {problem.message}",
        )
        if problem.by_limit:
            notes = (
                *notes,
                f"max-scale-limit is {config.max_scale_limit} in ConfigMap knative-serving/config-autoscaler",
            )
        severity = None
        if problem.unless:
            notes = (
                *notes,
                f"unless ConfigMap knative-serving/config-autoscaler sets {problem.unless} (its default refuses)",
            )
        if problem.unless or mode is kserve.DeploymentMode.ASSUMED_KNATIVE:
            severity = Severity.WARNING
        if mode is kserve.DeploymentMode.ASSUMED_KNATIVE:
            notes = (*notes, kserve.ASSUMED_KNATIVE_NOTE)
        yield Diagnostic(RULE_ID, ("metadata", "annotations", problem.key), brief, notes=notes, severity=severity)
    copied_note = "KServe copies the component's containerConcurrency into the Knative Service it makes for it"
    extra = (
        (copied_note, kserve.ASSUMED_KNATIVE_NOTE) if mode is kserve.DeploymentMode.ASSUMED_KNATIVE else (copied_note,)
    )
    for component in kserve.KNATIVE_COMPONENTS:
        concurrency = dig(obj.data, "spec", component, "containerConcurrency")
        path = ("spec", component, "containerConcurrency")
        for found in _knative_concurrency(concurrency, path, ctx, f"{subject}: validation failed", extra):
            assumed = mode is kserve.DeploymentMode.ASSUMED_KNATIVE
            yield replace(found, severity=Severity.WARNING) if assumed else found


_DEFAULTS_SOURCE = f"ConfigMap {knative.CONFIG_NAMESPACE}/{knative.DEFAULTS_CONFIG}"


def _config_defaults(ctx: CheckContext) -> tuple[dict[str, Any] | None, frozenset[str] | None]:
    """config-defaults' data when the linted files or inventory hold it, else the keys known to be set in it."""
    defaults = ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.DEFAULTS_CONFIG)
    if defaults is not None:
        return defaults, None
    return None, ctx.resolver.config_map_keys(knative.CONFIG_NAMESPACE, knative.DEFAULTS_CONFIG)


def _unless_raised(key: str, default: object) -> str:
    return (
        f"unless {_DEFAULTS_SOURCE} (or a KnativeServing's spec.config.defaults) raises {key} (its default, "
        f"{default}, refuses)"
    )


def _knative_concurrency(
    concurrency: object, path: Path, ctx: CheckContext, webhook: str, extra: tuple[str, ...] = ()
) -> Iterator[Diagnostic]:
    """A revision's containerConcurrency outside config-defaults' bounds (container-concurrency-max-limit)."""
    defaults, keys = _config_defaults(ctx)
    problem = knative.concurrency_problem(concurrency, defaults, keys)
    if problem is None:
        return
    brief, notes = split_long(f"{webhook}: {problem.message}")
    if problem.unless:
        notes = (*notes, _unless_raised(problem.unless, knative.DEFAULT_MAX_CONTAINER_CONCURRENCY))
    elif defaults is not None:
        notes = (
            *notes,
            f"{knative.MAX_CONTAINER_CONCURRENCY} bounds every revision's containerConcurrency; "
            f"{_DEFAULTS_SOURCE} sets it",
        )
    notes = (*notes, *extra)
    yield Diagnostic(RULE_ID, path, brief, notes=notes, severity=Severity.WARNING if problem.unless else None)


def _knative_timeout(obj: KubeObject, ctx: CheckContext, webhook: str) -> Iterator[Diagnostic]:
    """A revision template's timeoutSeconds over config-defaults' max-revision-timeout-seconds."""
    spec = mapping(dig(obj.data, "spec", "template", "spec"))
    defaults, keys = _config_defaults(ctx)
    problem = knative.timeout_problem(spec, defaults, keys)
    if problem is None:
        return
    brief, notes = split_long(f"{webhook}: {problem.message}")
    if problem.unless:
        notes = (*notes, _unless_raised(problem.unless, knative.DEFAULT_MAX_REVISION_TIMEOUT))
    else:
        notes = (*notes, f"{knative.MAX_REVISION_TIMEOUT} bounds every revision's timeout; {_DEFAULTS_SOURCE} sets it")
    yield Diagnostic(
        RULE_ID,
        ("spec", "template", "spec", "timeoutSeconds"),
        brief,
        notes=notes,
        severity=Severity.WARNING if problem.unless else None,
    )
