"""Where a CustomResourceDefinition's schema puts pod templates, so its custom resources' pods are found
from the schema, not only by their shape (issue #28).

A structural schema says what the API server keeps: a field it does not describe is pruned
(apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go), unless the node is
``x-kubernetes-preserve-unknown-fields``. So, read from a CRD version's ``openAPIV3Schema``:

- a node whose ``properties`` hold ``containers`` as a list is a PodSpec (controller-gen writes a
  ``corev1.PodSpec`` so, and a ``PodTemplateSpec`` as ``metadata`` and such a ``spec``): a pod template
  there is one, whatever its containers say (an image the controller fills in included);
- a node that keeps unknown fields (``x-kubernetes-preserve-unknown-fields``, an
  ``x-kubernetes-embedded-resource``) holds what the schema does not describe: pod specs there are
  still found by their shape;
- any other described field holds no pod: what the schema does not describe is pruned before a
  controller reads it.

Pattern steps are those of gpulint.kube.workloads: a key, ``"[]"`` (every item of a list) and
``"{}"`` (every value of a mapping).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence, text

Pattern = tuple[str, ...]

# The walk of one version's schema is bounded: a CRD is data from a repository or a cluster.
MAX_SCHEMA_DEPTH = 32
MAX_SCHEMA_NODES = 20_000


@dataclass(frozen=True)
class SchemaTemplates:
    """One CRD version's pod templates: where its schema puts PodSpecs, and where it keeps unknown fields."""

    pod_specs: tuple[Pattern, ...]  # from the object's root to each PodSpec
    opaque: tuple[Pattern, ...]  # from the root to each node that keeps fields the schema does not describe


class SchemaBound(dict[str, Any]):
    """A custom resource's data with its CRD's pod templates (found by the resolver); the mapping itself is
    the object as written."""

    def __init__(self, data: dict[str, Any], templates: SchemaTemplates) -> None:
        super().__init__(data)
        self.templates = templates


class CrdTemplates:
    """The pod templates of a set of CRDs, by (group, version, kind): each served version's schema is
    walked when a custom resource of it is first met (an inventory may hold hundreds of CRDs), and the
    first CRD of a kind wins (the resolver lists the linted ones first)."""

    def __init__(self, crds: Iterable[dict[str, Any]]) -> None:
        self._schemas: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._walked: dict[tuple[str, str, str], SchemaTemplates] = {}
        for crd in crds:
            spec = mapping(crd.get("spec"))
            group, kind = text(spec.get("group")), text(mapping(spec.get("names")).get("kind"))
            if not group or not kind:
                continue
            shared = mapping(mapping(spec.get("validation")).get("openAPIV3Schema"))  # apiextensions v1beta1
            for version in sequence(spec.get("versions")):
                name = text(mapping(version).get("name"))
                schema = mapping(mapping(mapping(version).get("schema")).get("openAPIV3Schema")) or shared
                if name and schema:
                    self._schemas.setdefault((group, name, kind), schema)

    def get(self, group: str, version: str, kind: str) -> SchemaTemplates | None:
        key = (group, version, kind)
        found = self._walked.get(key)
        if found is None:
            schema = self._schemas.get(key)
            if schema is None:
                return None
            found = self._walked[key] = templates_of(schema)  # two threads may both walk it: the same value
        return found


def templates_of(schema: dict[str, Any]) -> SchemaTemplates:
    """The pod templates an ``openAPIV3Schema`` describes under its ``spec``."""
    pod_specs: list[Pattern] = []
    opaque: list[Pattern] = []
    if _keeps_unknown(schema) and "spec" not in mapping(schema.get("properties")):
        opaque.append(("spec",))  # the whole object is left undescribed
    else:
        spec = mapping(mapping(schema.get("properties")).get("spec"))
        _walk(spec, ("spec",), pod_specs, opaque, [MAX_SCHEMA_NODES])
    return SchemaTemplates(tuple(pod_specs), tuple(opaque))


def _walk(
    node: dict[str, Any], at: Pattern, pod_specs: list[Pattern], opaque: list[Pattern], budget: list[int]
) -> None:
    budget[0] -= 1
    if budget[0] < 0 or len(at) > MAX_SCHEMA_DEPTH or not node:
        return
    properties = mapping(node.get("properties"))
    if _is_pod_spec(properties):
        pod_specs.append(at)  # its containers are not pods: nothing under it is another template
        return
    if _keeps_unknown(node):
        opaque.append(at)  # what it holds beyond its properties is kept: found by shape
        return
    for key, child in properties.items():
        if isinstance(key, str) and isinstance(child, dict):
            _walk(child, (*at, key), pod_specs, opaque, budget)
    items = node.get("items")
    if isinstance(items, dict):
        _walk(items, (*at, "[]"), pod_specs, opaque, budget)
    values = node.get("additionalProperties")
    if isinstance(values, dict):
        _walk(values, (*at, "{}"), pod_specs, opaque, budget)
    for alternatives in ("allOf", "anyOf", "oneOf"):
        for alternative in sequence(node.get(alternatives)):
            if isinstance(alternative, dict):
                _walk(alternative, at, pod_specs, opaque, budget)


def _is_pod_spec(properties: dict[str, Any]) -> bool:
    containers = mapping(properties.get("containers"))
    return containers.get("type") == "array" or isinstance(containers.get("items"), dict)


def _keeps_unknown(node: dict[str, Any]) -> bool:
    return (
        node.get("x-kubernetes-preserve-unknown-fields") is True or node.get("x-kubernetes-embedded-resource") is True
    )


def patterns_in_order(templates: SchemaTemplates) -> Iterator[tuple[Pattern, bool]]:
    """Each pattern, and whether it is a PodSpec (True) or a node to search by shape (False)."""
    for pattern in templates.pod_specs:
        yield pattern, True
    for pattern in templates.opaque:
        yield pattern, False
