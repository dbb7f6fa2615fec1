"""The Service the NIM operator's controller names after a NIMService.

The NIM operator (NVIDIA/k8s-nim-operator v3.1.2): its NIMService webhook does not check the name, and the
standalone controller renders the NIMService's Service with its name (``api/apps/v1alpha1/nimservice_types.go``
GetServiceParams, ``manifests/service.yaml``), which must be a DNS-1035 label.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, text
from gpulint.kube.operators.common import Refusal, Submitted, service_refused

# The NIM operator names the NIMService's Service after it; a model name with a dot (llama-3.1-8b-instruct) is a
# valid NIMService and Deployment name, not a Service one.
NIM_GROUP = "apps.nvidia.com"
NIM_SERVICE_FAILS = "the controller's render of the Service fails on each reconcile: the NIMService never gets ready"


def _nim_service(data: dict[str, Any]) -> Iterator[Refusal]:
    if text(dig(data, "spec", "inferencePlatform")) not in ("", "standalone"):
        return  # on KServe it makes an InferenceService, which KServe's own rules judge
    name = text(dig(data, "metadata", "name"))
    if name and (words := service_refused(name)):
        yield Refusal(("metadata", "name"), "The NIM operator", words, controller=NIM_SERVICE_FAILS)


GROUP = NIM_GROUP


def refusals(submitted: Submitted) -> list[Refusal]:
    return list(_nim_service(submitted.data))
