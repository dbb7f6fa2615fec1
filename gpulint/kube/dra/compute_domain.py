"""NVIDIA's ComputeDomain (resource.nvidia.com): the ResourceClaimTemplate its controller creates.

The compute-domain controller of NVIDIA/k8s-dra-driver-gpu creates, in the ComputeDomain's
namespace, a ResourceClaimTemplate named by ``spec.channel.resourceClaimTemplate.name``
(cmd/compute-domain-controller/resourceclaimtemplate.go, WorkloadResourceClaimTemplateManager.Create,
from templates/compute-domain-workload-claim-template.tmpl.yaml): one request ``channel`` of the
class ``compute-domain-default-channel.nvidia.com``, configured with a ComputeDomainChannelConfig.
Pods reference that template; it never appears in a repository.
"""

from __future__ import annotations

from typing import Any

from gpulint.kube.fields import dig, mapping, text

GROUP = "resource.nvidia.com"
KIND = "ComputeDomain"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DRIVER = "compute-domain.nvidia.com"


def is_compute_domain(data: Any) -> bool:
    return (
        isinstance(data, dict) and data.get("kind") == KIND and text(data.get("apiVersion")).rpartition("/")[0] == GROUP
    )


def template_name(data: dict[str, Any]) -> str:
    return text(dig(data, "spec", "channel", "resourceClaimTemplate", "name"))


def generated_template(data: dict[str, Any]) -> dict[str, Any]:
    """The ResourceClaimTemplate the controller creates for the ComputeDomain ``data``."""
    metadata = mapping(data.get("metadata"))
    parameters: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "ComputeDomainChannelConfig",
        "domainID": text(metadata.get("uid")) or f"<uid of ComputeDomain {text(metadata.get('name'))}>",
    }
    mode = dig(data, "spec", "channel", "allocationMode")
    if isinstance(mode, str) and mode:
        parameters["allocationMode"] = mode
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": template_name(data), "namespace": text(metadata.get("namespace"))},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "channel", "exactly": {"deviceClassName": CHANNEL_CLASS}}],
                    "config": [{"requests": ["channel"], "opaque": {"driver": DRIVER, "parameters": parameters}}],
                }
            }
        },
    }
