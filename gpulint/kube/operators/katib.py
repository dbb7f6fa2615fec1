"""Katib's Experiment webhook, and the Service its controller names after the Experiment.

Katib (kubeflow/katib v0.19.0, ``pkg/webhook/v1beta1/experiment/validator/validator.go`` ValidateExperiment,
after the mutating webhook's defaults): the name and the trial counts; the controller names the suggestion's
Service ``<experiment>-<algorithm>`` (``pkg/controller.v1beta1/util/suggestion.go`` GetSuggestionServiceName).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.operators.common import Refusal, Submitted, service_refused
from gpulint.kube.validation.errors import (
    INVALID,
    FieldError,
)

GROUP = "kubeflow.org"
# Katib's name check is regexp MatchString, anchored at the start only: a name that starts like a DNS-1035 label
# passes even with a dot later, and its suggestion's Service (<experiment>-<algorithm>) is then refused.
KATIB_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?")
KATIB_NAME_MAX = 40
KATIB_NAME_WORDS = (
    "name must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
    "with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is "
    "'^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
)
KATIB_PARALLEL_DEFAULT = 3  # experiment_defaults.go setDefaultParallelTrialCount (DefaultTrialParallelCount)
KATIB_SERVICE_FAILS = "the suggestion's Service is never created: the Experiment runs no trials"


def _katib_experiment(data: dict[str, Any]) -> Iterator[Refusal]:
    found = list(_katib_webhook(data))
    yield from (Refusal(error.path, "Katib", error.message(), error) for error in found)
    name = text(dig(data, "metadata", "name"))
    algorithm = text(dig(data, "spec", "algorithm", "algorithmName"))
    if not found and name and algorithm and (words := service_refused(f"{name}-{algorithm}")):
        yield Refusal(("metadata", "name"), "Katib", words, controller=KATIB_SERVICE_FAILS)


def _katib_webhook(data: dict[str, Any]) -> Iterator[FieldError]:
    name = text(dig(data, "metadata", "name"))
    if name and (not KATIB_NAME.match(name) or len(name) > KATIB_NAME_MAX):
        yield FieldError(("metadata", "name"), INVALID, name, KATIB_NAME_WORDS)
    spec = mapping(data.get("spec"))
    failed, most = integer(spec.get("maxFailedTrialCount")), integer(spec.get("maxTrialCount"))
    parallel = integer(spec.get("parallelTrialCount"), KATIB_PARALLEL_DEFAULT)
    if failed is not None and failed < 0:
        yield FieldError(("spec", "maxFailedTrialCount"), INVALID, failed, "should not be less than 0")
    for key, value in (("maxTrialCount", most), ("parallelTrialCount", parallel)):
        if value is not None and value <= 0:
            yield FieldError(("spec", key), INVALID, value, "must be greater than 0")
    if most is None:
        return
    for key, value in (("maxFailedTrialCount", failed), ("parallelTrialCount", parallel)):
        if value is not None and value > most:
            yield FieldError(("spec", key), INVALID, value, "should be less than or equal to spec.maxTrialCount")


def refusals(submitted: Submitted) -> list[Refusal]:
    return list(_katib_experiment(submitted.data))
