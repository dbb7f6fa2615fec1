"""The Training Operator's (Kubeflow Trainer v1) webhooks on PyTorchJob, TFJob, XGBoostJob, PaddleJob and JAXJob.

The Training Operator (kubeflow/trainer v1.9.4, ``pkg/webhooks/<framework>/*_webhook.go``): a job's name is
a DNS-1035 label; each replica type is one the framework has (after the defaulting webhook's
case fix, ``master`` -> ``Master``), has containers with images and one named for the framework
(``pytorch``, ``tensorflow``, ``xgboost``, ``paddle``, ``jax``); a PyTorchJob's or XGBoostJob's
Master has 1 replica (unset is defaulted to 1), an XGBoostJob has a Master, a TFJob at most one
Chief or Master.

The Training Operator's PyTorchJob elastic policy (v1.9.4 ``pytorchjob_webhook.go`` validateSpec): a Worker spec
with at least one replica, and not both ``elasticPolicy.nProcPerNode`` and ``nprocPerNode``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.names import (
    dns1035_label,
)
from gpulint.kube.operators.common import Refusal, Submitted
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import (
    FORBIDDEN,
    INVALID,
    REQUIRED,
    FieldError,
    not_supported,
)

GROUP = "kubeflow.org"


@dataclass(frozen=True)
class TrainingJob:
    specs: str  # the replica specs field
    container: str  # the container the operator runs the framework in
    roles: tuple[str, ...]  # the replica types, in the operator's case
    master_of_one: bool = False  # Master must have exactly 1 replica
    master_required: bool = False


TRAINING_JOBS = {
    "PyTorchJob": TrainingJob("pytorchReplicaSpecs", "pytorch", ("Master", "Worker"), master_of_one=True),
    "TFJob": TrainingJob("tfReplicaSpecs", "tensorflow", ("PS", "Worker", "Chief", "Master", "Evaluator")),
    "XGBoostJob": TrainingJob(
        "xgbReplicaSpecs", "xgboost", ("Master", "Worker"), master_of_one=True, master_required=True
    ),
    "PaddleJob": TrainingJob("paddleReplicaSpecs", "paddle", ("Master", "Worker")),
    "JAXJob": TrainingJob("jaxReplicaSpecs", "jax", ("Worker",)),
}
_CHECKED_ROLES = frozenset({"PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"})  # TFJob checks no role names


def _training_job(data: dict[str, Any], kind: str) -> Iterator[FieldError]:
    job = TRAINING_JOBS[kind]
    name = dig(data, "metadata", "name")
    if isinstance(name, str) and name:
        errors = dns1035_label(name)
        if errors:
            yield FieldError(("metadata", "name"), INVALID, name, f"should match: {','.join(errors)}")
    specs = dig(data, "spec", job.specs)
    if not isinstance(specs, dict):
        return  # absent: the schema requires it (schema-invalid)
    camel = {role.lower(): role for role in job.roles}
    roles = []
    for written, replica in specs.items():
        role = camel.get(str(written).lower(), str(written))  # the defaulting webhook fixes the case first
        roles.append(role)
        at: Path = ("spec", job.specs, written)
        keys = frozenset({2})
        if kind in _CHECKED_ROLES and role not in job.roles:
            yield replace(not_supported(at, role, job.roles), keys=keys)
        containers = dig(replica, "template", "spec", "containers")
        if not isinstance(containers, list) or not containers:
            yield FieldError((*at, "template", "spec", "containers"), REQUIRED, detail="must be specified", keys=keys)
            continue
        named = [mapping(container) for container in containers]
        if not any(text(container.get("name")) == job.container for container in named):
            shown = job.container if kind != "PaddleJob" else f'"{job.container}"'
            yield FieldError(
                (*at, "template", "spec", "containers"),
                REQUIRED,
                detail=f"must have at least one container with name {shown}",
                keys=keys,
            )
        if job.master_of_one and role == "Master" and integer(mapping(replica).get("replicas"), 1) != 1:
            yield FieldError((*at, "replicas"), FORBIDDEN, detail="must be 1", keys=keys)
        elif role != "Master" and kind == "PyTorchJob":
            replicas = integer(mapping(replica).get("replicas"))
            if replicas is not None and replicas < 1:
                yield FieldError((*at, "replicas"), FORBIDDEN, detail="must be at least 1", keys=keys)
    if kind == "PyTorchJob":
        yield from _pytorch_elastic(data, specs)
    if job.master_required and "Master" not in roles:
        at = ("spec", job.specs)
        yield FieldError(at, REQUIRED, detail="must be present", shown=(*at, "Master"), keys=frozenset({2}))
    if kind == "TFJob" and sum(role in ("Chief", "Master") for role in roles) > 1:
        yield FieldError(("spec", job.specs), FORBIDDEN, detail="must not have more than 1 Chief or Master role")


def _pytorch_elastic(data: dict[str, Any], specs: dict[str, Any]) -> Iterator[FieldError]:
    """validateSpec: an elastic PyTorchJob rendezvouses through its workers, so it needs a Worker spec with at
    least one replica; ``elasticPolicy.nProcPerNode`` (deprecated) may not be given beside ``nprocPerNode``.
    The replica types are read as the defaulting webhook leaves them (case fixed)."""
    spec = mapping(data.get("spec"))
    elastic = spec.get("elasticPolicy")
    if not isinstance(elastic, dict):
        return
    workers = [replica for written, replica in specs.items() if str(written).lower() == "worker"]
    at: Path = ("spec", "pytorchReplicaSpecs", "Worker")
    if not workers:
        detail = "must be configured if elastic policy is used"
        yield FieldError(at[:-1], REQUIRED, detail=detail, shown=at)  # found where the Worker would be
    else:
        replicas = integer(mapping(workers[0]).get("replicas"))
        if replicas is not None and replicas < 1:
            detail = "must be at least 1 worker if elastic policy is used"
            yield FieldError((*at, "replicas"), FORBIDDEN, detail=detail)
    if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        yield FieldError(
            ("spec", "elasticPolicy", "nProcPerNode"), FORBIDDEN, detail="must not be used with spec.nprocPerNode"
        )


def refusals(submitted: Submitted) -> list[Refusal]:
    errors = _training_job(submitted.data, submitted.kind)
    return [Refusal(error.path, "The Training Operator", error.message(), error) for error in errors]
