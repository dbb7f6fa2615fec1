"""What every operator module shares: a refusal, what a check is asked, and the API server's answer to a Service
an operator's controller names after the object."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpulint.kube.names import dns1035_label
from gpulint.kube.refs import Path
from gpulint.kube.releases import Span, release_of, runs
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
    uncertain: str = ""  # set when the releases found disagree on it: which of them refuse it (a warning)


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
    # the releases installed of the operator whose kind it is (operators.RELEASED), likewise
    releases: tuple[tuple[str, str], ...] = ()


Check = Callable[[Submitted], list[Refusal]]


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several as [a, b]."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def service_refused(service: str) -> str:
    """The API server's answer to a Service of this name (ValidateObjectMeta with NameIsDNS1035Label), or ""."""
    problems = dns1035_label(service)
    errors = [FieldError(("metadata", "name"), INVALID, service, problem).message() for problem in problems]
    return f'Service "{service}" is invalid: {aggregate(errors)}' if errors else ""


def gated(refusal: Refusal, span: Span, releases: tuple[tuple[str, str], ...]) -> Iterator[Refusal]:
    """The refusal as the operator's releases found decide it: none when none of them runs the check; with the
    releases named when every one does; a warning naming those that refuse it when they disagree. When none is
    found or one names no release: the refusal of a check the newest release runs, nothing of one it dropped."""
    written = [release for release, _ in releases]
    if not written or any(release_of(release) is None for release in written):
        if span.until is None:
            yield refusal
        return
    found = runs(written, span)
    if found is False:
        return
    named = ", ".join(f"{release} ({where})" for release, where in releases)
    note = f"the {refusal.operator.removeprefix('The ')} releases found: {named}"
    if found:
        yield replace(refusal, release=note)
    else:
        yield replace(
            refusal, release=note, uncertain=f"{refusal.operator} {span.words()} refuse it; the others take it"
        )
