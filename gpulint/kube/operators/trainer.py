"""Kubeflow Trainer v2's TrainJob webhook, and its TrainingRuntime and ClusterTrainingRuntime webhooks.

The runtime webhooks (kubeflow/trainer pkg/webhooks/trainingruntime_webhook.go and clustertrainingruntime_webhook.go
validateReplicatedJobs, v2.0 onward): a replicated Job labelled trainer.kubeflow.org/trainjob-ancestor-step as the
trainer or an initializer runs once (replicas "always must be 1"); the number of nodes is mlPolicy.numNodes, which
the trainer Job's parallelism and completions carry. v2.0.0 refused replicas other than 1 on every replicated Job;
from v2.0.1 (trainer#2533) only on those.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.operators.common import Refusal, Submitted, aggregate
from gpulint.kube.trainjob import ANCESTOR_LABEL, BoundTrainJob
from gpulint.kube.trainjob import GROUP as TRAINER_GROUP
from gpulint.kube.validation.errors import INVALID, FieldError

GROUP = TRAINER_GROUP
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
# pkg/constants/constants.go: the ancestor steps whose replicated Job runs once
SINGLE_REPLICA_STEPS = frozenset({"trainer", "model-initializer", "dataset-initializer"})

# Kubeflow Trainer v2 (v2.3.0 pkg/constants/constants.go): the variables its ML policy plugins set in the trainer's
# container, which a TrainJob's spec.trainer.env may not set (torch.go and mpi.go Validate).
RESERVED_TRAINER_ENVS = {
    "torch": frozenset({"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}),
    "mpi": frozenset(
        {
            "OMPI_MCA_orte_default_hostfile",
            "OMPI_MCA_plm_rsh_args",
            "OMPI_MCA_orte_keep_fqdn_hostnames",
            "OMPI_MCA_orte_set_default_slots",
        }
    ),
}


def _trainjob_reserved_envs(data: BoundTrainJob) -> Iterator[Refusal]:
    """The Trainer's TrainJob webhook runs its runtime's ML policy plugins' Validate: with mlPolicy.torch (or
    .mpi), spec.trainer.env must not set the variables the plugin sets ("must not have reserved envs")."""
    policy = mapping(dig(data.runtime, "spec", "mlPolicy"))
    env = sequence(dig(data, "spec", "trainer", "env"))
    names = [text(mapping(item).get("name")) for item in env]
    for source, reserved in RESERVED_TRAINER_ENVS.items():
        if source not in policy:
            continue
        found = [index for index, name in enumerate(names) if name in reserved]
        if found:
            listed = " ".join(sorted({names[index] for index in found}))
            yield Refusal(
                ("spec", "trainer", "env", found[0], "name"),
                "The Trainer",
                f"spec.trainer.env: must not have reserved envs, invalid envs configured: [{listed}]",
            )


def _runtime_replicas(data: dict[str, Any]) -> Iterator[Refusal]:
    """validateReplicatedJobs: an ancestor step's replicated Job with replicas other than 1 (JobSet defaults an
    unset replicas to 1), the errors aggregated as the webhook returns them."""
    jobs = sequence(dig(data, "spec", "template", "spec", "replicatedJobs"))
    errors = []
    for index, job in enumerate(map(mapping, jobs)):
        ancestor = text(dig(job, "template", "metadata", "labels", ANCESTOR_LABEL))
        replicas = job.get("replicas", 1)
        if (
            ancestor in SINGLE_REPLICA_STEPS
            and isinstance(replicas, int)
            and not isinstance(replicas, bool)
            and replicas != 1
        ):
            at = ("spec", "template", "spec", "replicatedJobs", index, "replicas")
            errors.append(FieldError(at, INVALID, replicas, "always must be 1"))
    if errors:
        words = aggregate([error.message() for error in errors])
        yield Refusal(errors[0].path, "The Trainer", words, errors[0])


def runtime_refusals(submitted: Submitted) -> list[Refusal]:
    """A TrainingRuntime or ClusterTrainingRuntime."""
    return list(_runtime_replicas(submitted.data))


def refusals(submitted: Submitted) -> list[Refusal]:
    """A TrainJob bound to its runtime (the runtime's ML policy decides)."""
    data = submitted.data
    return list(_trainjob_reserved_envs(data)) if isinstance(data, BoundTrainJob) else []
