"""operator-rejected: an operator's own admission webhook (Kueue, Volcano, JobSet, LeaderWorkerSet, Training Operator,
Trainer, KServe, Knative Serving, KAITO, Katib) or its controller's validation (KubeRay, the MPI operator) refuses the object,
or the Service its controller names after it (KAITO, Katib, the NIM operator), worded as it words it."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube import knative
from gpulint.kube.fields import dig, mapping
from gpulint.kube.operator_webhooks import refusals
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.verdicts.queues import kueue_config
from gpulint.lint.world.rejections import rejection_text

SPEC = RuleSpec(
    "operator-rejected",
    Severity.ERROR,
    kinds=frozenset(
        {
            "RayJob",
            "RayCluster",
            "RayService",
            "MPIJob",
            "ClusterQueue",
            "Queue",
            "Job",
            "JobSet",
            "LeaderWorkerSet",
            "PyTorchJob",
            "TFJob",
            "XGBoostJob",
            "PaddleJob",
            "JAXJob",
            "TrainJob",
            "InferenceService",
            "Workspace",  # KAITO's
            "Experiment",  # Katib's
            "NIMService",
            "Service",  # Knative's (serving.knative.dev)
            "Configuration",
        }
    ),
)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.ref.group == knative.GROUP and obj.kind in knative.KINDS:
        yield from _knative_scale(obj, ctx)
        return
    found = refusals(obj.data, obj.ref.group, obj.kind)
    if not found:
        return
    config = kueue_config(ctx.resolver)
    for refusal in found:
        integration = obj.ref.group != "kueue.x-k8s.io"  # Kueue's own kinds are always validated
        if (
            refusal.operator == "Kueue"
            and integration
            and config is not None
            and not config.manages(obj.ref.group, obj.kind)
        ):
            continue  # the integration is off: Kueue registers no webhook for the kind
        if refusal.controller:  # no webhook: the operator's controller validates what the API server stored
            subject = f"{refusal.operator} refuses this {obj.kind}"
        else:
            subject = f"{refusal.operator}'s webhook rejects this {obj.kind}"
        if refusal.error is not None:
            brief, notes = rejection_text(refusal.error, subject)
        else:
            brief, notes = split_long(f"{subject}: {refusal.words}")
        notes = (*notes, *(note for note in (refusal.controller, refusal.before) if note))
        yield Diagnostic(RULE_ID, refusal.path, brief, notes=notes, inputs=refusal.inputs)


def _knative_scale(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """A Knative Service's or Configuration's scale bounds, against config-autoscaler's max-scale-limit when the
    linted files hold it (no limit is assumed otherwise)."""
    annotations = mapping(dig(obj.data, "spec", "template", "metadata", "annotations"))
    limit = knative.max_scale_limit(ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.AUTOSCALER_CONFIG))
    for problem in knative.scale_problems(annotations, limit):
        brief, notes = split_long(f"Knative's webhook rejects this {obj.kind}: validation failed: {problem.message}")
        where = f"max-scale-limit is {limit} in ConfigMap knative-serving/config-autoscaler"
        yield Diagnostic(
            RULE_ID,
            ("spec", "template", "metadata", "annotations", problem.key),
            brief,
            notes=(*notes, where) if problem.by_limit else notes,
        )
