"""Which MutatingWebhookConfigurations the API server calls on an object's create.

Mutating admission runs before the API server validates the object against its schema (k8s.io/apiserver v0.37.2
``pkg/endpoints/handlers/create.go``: ``mutatingAdmission.Admit`` inside the request, then ``r.Create``, whose
``rest.BeforeCreate`` runs ``strategy.Validate``; validating admission last). A webhook that may add a field is
one the request matches as ``pkg/admission/plugin/webhook/generic/webhook.go`` ``ShouldCallHook`` decides:
a rule (``predicates/rules/rules.go``: group, version, operation, resource and subresource, scope), or with
``matchPolicy: Equivalent`` (v1's default) the same resource at another version; then the namespace selector
(``predicates/namespace/matcher.go``), the object selector (``predicates/object/matcher.go``) and
``matchConditions``. What gpulint cannot know (a namespace's labels, a CEL condition) may match.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.selectors import selector_matches

GROUP = "admissionregistration.k8s.io"
KIND = "MutatingWebhookConfiguration"
CREATE = "CREATE"
# The API server labels every namespace with its own name (NamespaceDefaultLabelName, since 1.21).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


class Scope(enum.Enum):
    NAMESPACED = "Namespaced"
    CLUSTER = "Cluster"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class CreateRequest:
    """An object's create, as admission sees it. ``namespace_labels`` is None where the namespace's labels are not
    known (no namespace written, or one neither the linted files nor the inventory hold)."""

    group: str
    version: str
    resource: str  # the plural
    scope: Scope
    labels: Mapping[str, Any]
    namespace_labels: Mapping[str, Any] | None


def guessed_plural(kind: str) -> str:
    """The resource of a kind no CRD names: kubectl's ``meta.UnsafeGuessKindToResource`` (apimachinery v0.37.2
    ``pkg/api/meta/restmapper.go``), as kubebuilder names a CRD's plural."""
    lower = kind.lower()
    if not lower:
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def _listed(values: Any, wanted: str) -> bool:
    return any(text(value) in ("*", wanted) for value in sequence(values))


def _rule_matches(rule: Mapping[str, Any], request: CreateRequest, any_version: bool) -> bool:
    if not _listed(rule.get("operations"), CREATE) or not _listed(rule.get("apiGroups"), request.group):
        return False
    if not any_version and not _listed(rule.get("apiVersions"), request.version):
        return False
    resources = [text(entry).partition("/") for entry in sequence(rule.get("resources"))]
    # a create names no subresource: "x" and "*" match it, and so do "x/*" and "*/*"; "x/status" does not
    if not any(res in ("*", request.resource) and (not slash or sub == "*") for res, slash, sub in resources):
        return False
    scope = text(rule.get("scope")) or "*"
    if scope == "*" or request.scope is Scope.UNKNOWN:
        return True
    return scope == request.scope.value


def _selector_may_match(selector: Any, labels: Mapping[str, Any] | None) -> bool:
    if not isinstance(selector, dict) or not selector:
        return True  # absent or empty: every object (v1's default)
    return labels is None or selector_matches(selector, dict(labels))


def webhook_may_mutate(webhook: Mapping[str, Any], request: CreateRequest) -> bool:
    """Whether the API server may call this webhook (one entry of a configuration's ``webhooks``) on the create."""
    rules = [mapping(rule) for rule in sequence(webhook.get("rules"))]
    # Equivalent (v1's default): a rule for another version of the resource is called with the object converted
    equivalent = text(webhook.get("matchPolicy")) != "Exact"
    if not any(_rule_matches(rule, request, any_version=False) for rule in rules) and not (
        equivalent and any(_rule_matches(rule, request, any_version=True) for rule in rules)
    ):
        return False
    if request.scope is not Scope.CLUSTER and not _selector_may_match(
        webhook.get("namespaceSelector"), request.namespace_labels
    ):
        return False  # a cluster-scoped object other than a Namespace is never exempted by namespace
    return _selector_may_match(webhook.get("objectSelector"), request.labels)  # a CEL matchCondition may match


def mutating_webhooks(configuration: Mapping[str, Any], request: CreateRequest) -> Iterator[str]:
    """The names of the configuration's webhooks the API server may call on the create, in its order."""
    for webhook in sequence(configuration.get("webhooks")):
        webhook = mapping(webhook)
        if webhook_may_mutate(webhook, request):
            yield text(webhook.get("name")) or text(mapping(configuration.get("metadata")).get("name"))
