"""The Training Operator's (Kubeflow Trainer v1) webhooks on PyTorchJob, TFJob, XGBoostJob, PaddleJob and JAXJob.

The Training Operator (kubeflow/trainer v1.9.4, ``pkg/webhooks/<framework>/*_webhook.go``): a job's name is
a DNS-1035 label; each replica type is one the framework has (after the defaulting webhook's
case fix, ``master`` -> ``Master``), has containers with images and one named for the framework
(``pytorch``, ``tensorflow``, ``xgboost``, ``paddle``, ``jax``); a PyTorchJob's or XGBoostJob's
Master has 1 replica (unset is defaulted to 1), an XGBoostJob has a Master, a TFJob at most one
Chief or Master.

The Training Operator's PyTorchJob elastic policy (v1.9.4 ``pytorchjob_webhook.go`` validateSpec): a Worker spec
(from v1.9.0), and not both ``elasticPolicy.nProcPerNode`` and ``nprocPerNode``; a replica type other than Master
with at least one replica (from v1.9.0).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.names import (
    dns1035_label,
)
from gpulint.kube.operators.common import Refusal, Submitted, gated
from gpulint.kube.refs import Path
from gpulint.kube.releases import Installed, Span
from gpulint.kube.validation.errors import (
    FORBIDDEN,
    INVALID,
    REQUIRED,
    FieldError,
    not_supported,
)

GROUP = "kubeflow.org"
# Where a Training Operator release is written: its image (manifests/base/deployment.yaml kubeflow/training-operator,
# ghcr.io/kubeflow/training-v1/training-operator from v1.9; the standalone overlay tags it with a commit, v1-04f9f13
# at v1.8.1, which names no release) and its repository (kubectl apply -k
# "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1"), renamed kubeflow/trainer,
# whose v2 tags are Trainer v2's.
INSTALLED = Installed(
    ("kubeflow/training-operator", "kubeflow/training-v1/training-operator"),
    repositories=("kubeflow/training-operator", "kubeflow/trainer"),
    major=1,
)


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
# The checks v1.9.0 began (pytorchjob_webhook.go at v1.8.1 and v1.9.0, kubeflow/trainer#2278 fixed by #2320): a
# PyTorchJob's replicas other than Master's at least 1, and an elastic one's Worker spec. v1.8 takes both; v1.7 and
# earlier validate in the controller, which checks neither.
SINCE_V1_9 = Span((1, 9))
_CHECKED_ROLES = frozenset({"PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"})  # TFJob checks no role names


def _training_job(data: dict[str, Any], kind: str) -> Iterator[FieldError]:
    """What every release with a webhook (v1.8 on) refuses."""
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
    if job.master_required and "Master" not in roles:
        at = ("spec", job.specs)
        yield FieldError(at, REQUIRED, detail="must be present", shown=(*at, "Master"), keys=frozenset({2}))
    if kind == "TFJob" and sum(role in ("Chief", "Master") for role in roles) > 1:
        yield FieldError(("spec", job.specs), FORBIDDEN, detail="must not have more than 1 Chief or Master role")


def _pytorch_since_v1_9(data: dict[str, Any]) -> Iterator[FieldError]:
    """validatePyTorchReplicaSpecs: replicas other than Master's at least 1; validateSpec: an elastic PyTorchJob
    rendezvouses through its workers, so it needs a Worker spec. The replica types are read as the defaulting webhook
    leaves them (case fixed)."""
    specs = mapping(dig(data, "spec", "pytorchReplicaSpecs"))
    for written, replica in specs.items():
        replicas = integer(mapping(replica).get("replicas"))
        if str(written).lower() != "master" and isinstance(replica, dict) and replicas is not None and replicas < 1:
            at: Path = ("spec", "pytorchReplicaSpecs", written, "replicas")
            yield FieldError(at, FORBIDDEN, detail="must be at least 1", keys=frozenset({2}))
    if isinstance(dig(data, "spec", "elasticPolicy"), dict) and not any(str(w).lower() == "worker" for w in specs):
        at = ("spec", "pytorchReplicaSpecs", "Worker")
        detail = "must be configured if elastic policy is used"
        yield FieldError(at[:-1], REQUIRED, detail=detail, shown=at)  # found where the Worker would be


def _pytorch_nproc(data: dict[str, Any]) -> Iterator[FieldError]:
    """validateSpec (v1.8 on): ``elasticPolicy.nProcPerNode`` (deprecated) may not be given beside ``nprocPerNode``."""
    spec = mapping(data.get("spec"))
    elastic = spec.get("elasticPolicy")
    if isinstance(elastic, dict) and elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        yield FieldError(
            ("spec", "elasticPolicy", "nProcPerNode"), FORBIDDEN, detail="must not be used with spec.nprocPerNode"
        )


def refusals(submitted: Submitted) -> list[Refusal]:
    data, kind = submitted.data, submitted.kind
    found = [_refusal(error) for error in _training_job(data, kind)]
    if kind == "PyTorchJob":
        for error in _pytorch_since_v1_9(data):
            found += gated(_refusal(error), SINCE_V1_9, submitted.releases)
        found += [_refusal(error) for error in _pytorch_nproc(data)]
    return found


def _refusal(error: FieldError) -> Refusal:
    return Refusal(error.path, "The Training Operator", error.message(), error)
