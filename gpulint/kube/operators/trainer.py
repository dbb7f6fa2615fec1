"""Kubeflow Trainer v2's TrainJob webhook."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.trainjob import GROUP as TRAINER_GROUP
from gpulint.kube.trainjob import BoundTrainJob

GROUP = TRAINER_GROUP

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


def refusals(submitted: Submitted) -> list[Refusal]:
    """A TrainJob bound to its runtime (the runtime's ML policy decides)."""
    data = submitted.data
    return list(_trainjob_reserved_envs(data)) if isinstance(data, BoundTrainJob) else []
