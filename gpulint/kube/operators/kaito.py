"""KAITO's Workspace webhook, and the Service its controller names after the Workspace.

KAITO (kaito-project/kaito v0.12.0, ``api/v1alpha1|v1beta1/workspace_validation.go`` Validate, since v0.4.0):
a Workspace's name is a DNS-1123 label; the controller names the Workspace's Service after it
(``pkg/workspace/manifests/manifests.go`` GenerateServiceManifest), which must be a DNS-1035 label.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.names import (
    dns1123_label,
)
from gpulint.kube.operators.common import Refusal, Submitted, service_refused

# KAITO's webhook is knative's: apis.ErrInvalidValue(<IsDNS1123Label's messages>, "name"), denied as
# "validation failed: invalid value: <messages>: name". A name it takes may still start with a digit (a DNS-1123
# label may, a DNS-1035 one may not), and releases before v0.4.0 took any name (kaito#725): the Service the
# controller names after the Workspace is then refused.
KAITO_GROUP = "kaito.sh"
KAITO_SERVICE_FAILS = "the controller's create of the Service fails on each reconcile: the Workspace gets no endpoint"


def _kaito_workspace(data: dict[str, Any]) -> Iterator[Refusal]:
    name = text(dig(data, "metadata", "name"))
    if not name:
        return
    service = service_refused(name)
    if problems := dns1123_label(name):
        words = f"validation failed: invalid value: {', '.join(problems)}: name"
        before = (
            f"releases before v0.4.0 took it and the Service named after it was refused: {service}" if service else ""
        )
        yield Refusal(("metadata", "name"), "KAITO", words, before=before)
    elif service:
        yield Refusal(("metadata", "name"), "KAITO", service, controller=KAITO_SERVICE_FAILS)


GROUP = KAITO_GROUP


def refusals(submitted: Submitted) -> list[Refusal]:
    return list(_kaito_workspace(submitted.data))


def byo_selector(workspace: dict[str, Any]) -> tuple[dict[str, str], tuple[str, ...]] | None:
    """A Workspace's resource.labelSelector matchLabels and its preferredNodes, when it names both and no
    matchExpressions (KAITO lists nodes by the matchLabels: pkg/workspace/controllers getAllQualifiedNodes,
    v0.4.0-v0.7.x; from v0.8 preferredNodes is ignored and the labels alone select; every release gives the pods
    a required node affinity of them: pkg/workspace/manifests)."""
    resource = mapping(workspace.get("resource"))
    selector = mapping(resource.get("labelSelector"))
    labels = {text(key): text(value) for key, value in mapping(selector.get("matchLabels")).items()}
    preferred = tuple(text(name) for name in sequence(resource.get("preferredNodes")) if text(name))
    if not labels or not preferred or selector.get("matchExpressions"):
        return None
    return labels, preferred
