"""What every operator module shares: a refusal, what a check is asked, and the API server's answer to a Service
an operator's controller names after the object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.names import dns1035_label
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import INVALID, FieldError


@dataclass(frozen=True)
class Refusal:
    """One reason an operator's webhook refuses the object: where, and its words."""

    path: Path
    operator: str
    words: str
    error: FieldError | None = None  # Kueue's: a field.Error, worded as apimachinery words it
    inputs: tuple[Path, ...] = ()  # other fields the refused value is made from (a Job name from metadata.name)
    controller: str = ""  # set when the operator's controller refuses it (no webhook): what it does then
    before: str = ""  # what older releases, which took the object, did with it instead
    since: str = ""  # the release that began refusing it, when releases still run that accept it (a warning)
    optional: str = ""  # set when only an opt-in webhook refuses it: what happens where it is not installed (a warning)
    release: str = ""  # the operator's releases found in the files, when they decide it


@dataclass(frozen=True)
class Submitted:
    """What an operator's webhook (or controller) is asked to admit: the object, its kind, and what the linted set
    tells of the installation (the GPU resource types a linted inferenceservice-config adds to KServe's)."""

    data: dict[str, Any]
    kind: str
    kserve_gpu_types: frozenset[str] = frozenset()
    # the Kueue releases the files and the inventory install, as written, each with where it is written
    kueue_releases: tuple[tuple[str, str], ...] = ()
    kuberay_releases: tuple[tuple[str, str], ...] = ()  # the KubeRay releases installed, likewise


Check = Callable[[Submitted], list[Refusal]]


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several as [a, b]."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def service_refused(service: str) -> str:
    """The API server's answer to a Service of this name (ValidateObjectMeta with NameIsDNS1035Label), or ""."""
    problems = dns1035_label(service)
    errors = [FieldError(("metadata", "name"), INVALID, service, problem).message() for problem in problems]
    return f'Service "{service}" is invalid: {aggregate(errors)}' if errors else ""
