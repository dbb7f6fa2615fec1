"""What the operators' own admission webhooks (or, where they have none, their controllers) refuse, worded as they
word it: one module per operator, and one table from an object's group and kind to the checks that judge it, in the
order their refusals are said. Kueue's checks stand beside the operator's own on the kinds it manages.

Knative Serving's annotation validation is ``gpulint/kube/knative.py`` (operator-rejected reads its config)."""

from __future__ import annotations

from typing import Any

from gpulint.kube.operators import (
    jobset,
    kaito,
    katib,
    kserve,
    kuberay,
    kueue,
    lws,
    mpi,
    nim,
    spark,
    trainer,
    training_operator,
    volcano,
)
from gpulint.kube.operators.common import Check, Refusal, Submitted
from gpulint.kube.operators.kserve import kserve_config_gpu_types
from gpulint.kube.operators.kueue import cluster_queue_schema_errors

__all__ = ["CHECKS", "RELEASED", "Refusal", "cluster_queue_schema_errors", "kserve_config_gpu_types", "refusals"]

# (group, kind) -> the checks, in order (kube-linter's object matchers: a kind is judged by the operators that
# validate it, and a new operator is its module and its rows).
CHECKS: dict[tuple[str, str], tuple[Check, ...]] = {
    **{(kuberay.GROUP, kind): (kuberay.refusals, kueue.ray_refusals) for kind in kuberay.KUBERAY_CLUSTER_SPECS},
    (kserve.GROUP, "InferenceService"): (kserve.inference_service_refusals,),
    (kserve.GROUP, "ServingRuntime"): (kserve.runtime_refusals,),
    (kserve.GROUP, "ClusterServingRuntime"): (kserve.runtime_refusals,),
    (mpi.GROUP, "MPIJob"): (mpi.refusals,),
    (volcano.JOB_GROUP, "Job"): (volcano.job_refusals,),
    (volcano.QUEUE_GROUP, "Queue"): (volcano.queue_refusals,),
    (kueue.GROUP, "ClusterQueue"): (kueue.cluster_queue_refusals,),
    (jobset.GROUP, "JobSet"): (jobset.refusals, kueue.podset_group_refusals),
    **{(training_operator.GROUP, kind): (training_operator.refusals,) for kind in training_operator.TRAINING_JOBS},
    (kaito.GROUP, "Workspace"): (kaito.refusals,),
    (katib.GROUP, "Experiment"): (katib.refusals,),
    (nim.GROUP, "NIMService"): (nim.refusals,),
    (trainer.GROUP, "TrainJob"): (trainer.refusals,),
    **{(trainer.GROUP, kind): (trainer.runtime_refusals,) for kind in trainer.RUNTIME_KINDS},
    (lws.GROUP, "LeaderWorkerSet"): (lws.refusals, kueue.podset_group_refusals),
    **{(spark.GROUP, kind): (spark.refusals,) for kind in spark.KINDS},
}


# The groups whose operator's checks differ by release: the operator, as lint/world/operator_releases.py reads it.
RELEASED: dict[str, str] = {
    volcano.JOB_GROUP: "volcano",
    volcano.QUEUE_GROUP: "volcano",
    training_operator.GROUP: "training-operator",
    jobset.GROUP: "jobset",
    lws.GROUP: "lws",
}


def refusals(
    data: dict[str, Any],
    group: str,
    kind: str,
    kserve_gpu_types: frozenset[str] = frozenset(),
    kueue_releases: tuple[tuple[str, str], ...] = (),
    kuberay_releases: tuple[tuple[str, str], ...] = (),
    releases: tuple[tuple[str, str], ...] = (),
) -> list[Refusal]:
    """``kserve_gpu_types``: the GPU resource types a linted inferenceservice-config adds to KServe's;
    ``kueue_releases``, ``kuberay_releases``: the Kueue and KubeRay releases installed, as written, and where;
    ``releases``: those of the operator whose kind it is (RELEASED), likewise."""
    submitted = Submitted(data, kind, kserve_gpu_types, kueue_releases, kuberay_releases, releases)
    return [refusal for check in CHECKS.get((group, kind), ()) for refusal in check(submitted)]
