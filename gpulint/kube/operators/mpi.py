"""The MPI operator's controller validation of an MPIJob (no webhook).

The MPI operator (kubeflow/mpi-operator v0.4.0 to v0.8.0, kubeflow.org/v2beta1): no webhook; the controller
defaults the MPIJob (pkg/apis/kubeflow/v2beta1/default.go: Launcher replicas 1 and restartPolicy OnFailure, Worker
replicas 0 and restartPolicy Never, cleanPodPolicy None, slotsPerWorker 1, sshAuthMountPath /root/.ssh,
mpiImplementation OpenMPI), then validates it (pkg/apis/kubeflow/validation/validation.go ValidateMPIJob) and on an
error records the event ValidationError "Found validation errors: ..." and does nothing more. The CRD's schema
has the mpiImplementation enum (the API server's, api-rejected); the rest is the controller's alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.names import (
    dns1035_label,
)
from gpulint.kube.operators.common import Refusal, Submitted, aggregate
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import (
    INVALID,
    REQUIRED,
    FieldError,
    not_supported,
)

GROUP = "kubeflow.org"
MPI_V2 = "kubeflow.org/v2beta1"
MPI_REFUSES = "the controller records the event ValidationError and creates no launcher, workers or Services"
# sets.String.List(): sorted. managedBy since v0.6.0 (releases before have no such field: it is dropped).
MPI_RESTART_POLICIES = ("Never", "OnFailure")
MPI_CLEAN_POD_POLICIES = ("All", "None", "Running")
MPI_MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
MPI_RUN_POLICY_COUNTS = ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit")  # ValidateNonnegativeField
NEGATIVE = "must be greater than or equal to 0"  # apimachinery's IsNegativeErrorMsg
_MPI_DEFAULTS = {"Launcher": (1, "OnFailure"), "Worker": (0, "Never")}  # replicas, restartPolicy


def _mpi_job(data: dict[str, Any]) -> Iterator[FieldError]:
    """ValidateMPIJob on the defaulted job, in its order, the checks the CRD's schema does not make."""
    specs = dig(data, "spec", "mpiReplicaSpecs")
    workers = mapping(specs).get("Worker")
    count = integer(workers.get("replicas"), 0) if isinstance(workers, dict) else None
    name = text(dig(data, "metadata", "name"))
    if name:  # validateMPIJobName: the last worker's hostname, <name>-worker-<replicas - 1> (worker-0 at least)
        hostname = f"{name}-worker-{max((count or 0) - 1, 0)}"
        problems = dns1035_label(hostname)
        if problems:
            detail = (
                f'will not able to create pod and service with invalid DNS label "{hostname}": {", ".join(problems)}'
            )
            yield FieldError(("metadata", "name"), INVALID, name, detail)
    if not isinstance(specs, dict):
        return  # absent: the schema requires it (schema-invalid)
    for role in ("Launcher", "Worker"):
        yield from _mpi_replica(specs, role)
    spec = mapping(data.get("spec"))
    slots = integer(spec.get("slotsPerWorker"))
    if slots is not None and slots < 0:
        yield FieldError(("spec", "slotsPerWorker"), INVALID, slots, NEGATIVE)
    yield from _mpi_run_policy(mapping(spec.get("runPolicy")))


def _mpi_replica(specs: dict[str, Any], role: str) -> Iterator[FieldError]:
    """validateLauncherReplicaSpec / validateWorkerReplicaSpec, after the defaults (an omitted Worker is not checked)."""
    at: Path = ("spec", "mpiReplicaSpecs", role)
    keys = frozenset({2})
    spec = specs.get(role)
    if not isinstance(spec, dict):
        if role == "Launcher":
            yield FieldError(at, REQUIRED, detail="must have Launcher replica spec", keys=keys)
        return
    default_replicas, default_policy = _MPI_DEFAULTS[role]
    policy = spec.get("restartPolicy") or default_policy
    if isinstance(policy, str) and policy not in MPI_RESTART_POLICIES:
        yield replace(not_supported((*at, "restartPolicy"), policy, MPI_RESTART_POLICIES), keys=keys)
    containers = dig(spec, "template", "spec", "containers")
    if isinstance(containers, list) and not containers:
        where: Path = (*at, "template", "spec", "containers")
        yield FieldError(where, REQUIRED, detail="must define at least one container", keys=keys)
    replicas = integer(spec.get("replicas"), default_replicas)
    if replicas is None:
        return  # not a number: the schema's
    if role == "Launcher" and replicas != 1:
        yield FieldError((*at, "replicas"), INVALID, replicas, "must be 1", keys=keys)
    if role == "Worker" and replicas <= 0:
        shown: Path = (*at, "replicas")
        place = shown if "replicas" in spec else at  # defaulted to 0: the spec that omits it
        yield FieldError(place, INVALID, replicas, "must be greater than or equal to 1", shown=shown, keys=keys)


def _mpi_run_policy(policy: dict[str, Any]) -> Iterator[FieldError]:
    """validateRunPolicy: cleanPodPolicy (None when unset), the counts not negative, managedBy one of two."""
    at: Path = ("spec", "runPolicy")
    clean = policy.get("cleanPodPolicy")
    if isinstance(clean, str) and clean not in MPI_CLEAN_POD_POLICIES:
        yield not_supported((*at, "cleanPodPolicy"), clean, MPI_CLEAN_POD_POLICIES)
    for key in MPI_RUN_POLICY_COUNTS:
        value = integer(policy.get(key))
        if value is not None and value < 0:
            yield FieldError((*at, key), INVALID, value, NEGATIVE)
    managed = policy.get("managedBy")
    if isinstance(managed, str) and managed not in MPI_MANAGED_BY:
        yield not_supported((*at, "managedBy"), managed, MPI_MANAGED_BY)


def refusals(submitted: Submitted) -> list[Refusal]:
    """A v2beta1 MPIJob's validation errors, aggregated into the event's one message."""
    if text(submitted.data.get("apiVersion")) != MPI_V2:
        return []
    found = list(_mpi_job(submitted.data))
    if not found:
        return []
    words = f"Found validation errors: {aggregate([error.message() for error in found])}"
    return [Refusal(found[0].path, "The MPI operator", words, controller=MPI_REFUSES)]
