"""operator-rejected: an operator's own admission webhook refuses the object (Kueue, Volcano, JobSet, LeaderWorkerSet, Training Operator, Trainer), worded as it words it."""

from __future__ import annotations

from collections.abc import Iterator

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
        }
    ),
)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
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
        subject = f"{refusal.operator}'s webhook rejects this {obj.kind}"
        if refusal.error is not None:
            brief, notes = rejection_text(refusal.error, subject)
        else:
            brief, notes = split_long(f"{subject}: {refusal.words}")
        yield Diagnostic(RULE_ID, refusal.path, brief, notes=notes, inputs=refusal.inputs)
