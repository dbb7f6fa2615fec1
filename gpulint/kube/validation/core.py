"""core/v1 validation of what decides GPU placement (kubernetes/kubernetes
pkg/apis/core/validation/validation.go): tolerations, node affinity, nodeSelector, container
resource names, and object names and labels."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube import names
from gpulint.kube.features import FeatureGates
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import FORBIDDEN, INVALID, REQUIRED, FieldError, not_supported, too_long
from gpulint.kube.validation.resource import is_extended_resource_name

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
ANNOTATIONS_MAX = 256 * 1024  # TotalAnnotationSizeLimitB


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value if isinstance(value, str) else None


def label_name(key: str, path: Path) -> Iterator[FieldError]:
    """ValidateLabelName."""
    for message in names.qualified_name(key):
        yield FieldError(path, INVALID, key, message)


def labels(value: Any, path: Path) -> Iterator[FieldError]:
    """ValidateLabels: every key a qualified name, every value a label value (the errors name the map)."""
    if not isinstance(value, dict):
        return
    for key, raw in value.items():
        for message in names.qualified_name(str(key)):
            yield FieldError((*path, key), INVALID, str(key), message, shown=path, at_key=True)
        text = _text(raw)
        if text is not None:
            for message in names.label_value(text):
                yield FieldError((*path, key), INVALID, text, message, shown=path)


def metadata_annotations(value: Any, path: Path) -> Iterator[FieldError]:
    """ValidateAnnotations: every key a qualified name (case does not matter), keys and values together at
    most 256 KiB (the errors name the map)."""
    if not isinstance(value, dict):
        return
    size = 0
    for key, raw in value.items():
        text = str(key)
        for message in names.qualified_name(text.lower()):
            yield FieldError((*path, key), INVALID, text, message, shown=path, keys=frozenset({len(path)}), at_key=True)
        size += len(text.encode()) + len((_text(raw) or "").encode())
    if size > ANNOTATIONS_MAX:
        yield too_long(path, ANNOTATIONS_MAX)


def object_name(value: Any, path: Path) -> Iterator[FieldError]:
    """NameIsDNSSubdomain, the rule for pods, workloads, claims and classes."""
    if isinstance(value, str) and value:
        for message in names.dns1123_subdomain(value):
            yield FieldError(path, INVALID, value, message)


def tolerations(value: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """ValidateTolerations."""
    comparisons = gates.enabled("TaintTolerationComparisonOperators")
    for index, toleration in enumerate(_items(value)):
        if not isinstance(toleration, dict):
            continue
        at = (*path, index)
        key = _text(toleration.get("key")) or ""
        operator = _text(toleration.get("operator")) or ""
        tolerated = _text(toleration.get("value")) or ""
        effect = _text(toleration.get("effect")) or ""
        if key:
            yield from label_name(key, (*at, "key"))
        if not key and operator != "Exists":
            yield FieldError(
                (*at, "operator"),
                INVALID,
                operator,
                'operator must be Exists when `key` is empty, which means "match all values and all keys"',
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            yield FieldError(
                (*at, "effect"), INVALID, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
            )
        if operator in ("", "Equal"):
            problems = names.label_value(tolerated)
            if problems:
                yield FieldError((*at, "operator"), INVALID, tolerated, ";".join(problems))
        elif operator == "Exists":
            if tolerated:
                yield FieldError(
                    (*at, "operator"), INVALID, toleration, "value must be empty when `operator` is 'Exists'"
                )
        elif not (operator in ("Gt", "Lt") and comparisons):
            yield not_supported((*at, "operator"), operator, TOLERATION_OPERATORS)
        if effect and effect not in TAINT_EFFECTS:
            yield not_supported((*at, "effect"), effect, TAINT_EFFECTS)


def _requirement(requirement: Any, path: Path, label_values: bool) -> Iterator[FieldError]:
    """ValidateNodeSelectorRequirement."""
    if not isinstance(requirement, dict):
        return
    operator = _text(requirement.get("operator")) or ""
    values = [_text(v) or "" for v in _items(requirement.get("values"))]
    if operator in ("In", "NotIn"):
        if not values:
            yield FieldError((*path, "values"), REQUIRED, detail="must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            yield FieldError(
                (*path, "values"),
                FORBIDDEN,
                detail="may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            yield FieldError(
                (*path, "values"), REQUIRED, detail="must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
    else:
        yield FieldError((*path, "operator"), INVALID, operator, "not a valid selector operator")
    yield from label_name(_text(requirement.get("key")) or "", (*path, "key"))
    if label_values:
        for index, value in enumerate(values):
            for message in names.label_value(value):
                yield FieldError((*path, "values", index), INVALID, value, message)


def _field_requirement(requirement: Any, path: Path) -> Iterator[FieldError]:
    """ValidateNodeFieldSelectorRequirement: metadata.name, In or NotIn, one value, a node name."""
    if not isinstance(requirement, dict):
        return
    operator = _text(requirement.get("operator")) or ""
    values = [_text(v) or "" for v in _items(requirement.get("values"))]
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            yield FieldError(
                (*path, "values"),
                REQUIRED,
                detail="must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        yield FieldError((*path, "operator"), INVALID, operator, "not a valid selector operator")
    key = _text(requirement.get("key")) or ""
    if key != "metadata.name":
        yield FieldError((*path, "key"), INVALID, key, "not a valid field selector key")
    else:
        for index, value in enumerate(values):
            for message in names.dns1123_subdomain(value):
                yield FieldError((*path, "values", index), INVALID, value, message)


def _term(term: Any, path: Path, label_values: bool) -> Iterator[FieldError]:
    if not isinstance(term, dict):
        return
    for index, requirement in enumerate(_items(term.get("matchExpressions"))):
        yield from _requirement(requirement, (*path, "matchExpressions", index), label_values)
    for index, requirement in enumerate(_items(term.get("matchFields"))):
        yield from _field_requirement(requirement, (*path, "matchFields", index))


def node_affinity(affinity: Any, path: Path) -> Iterator[FieldError]:
    """validateNodeAffinity: the required selector (label values checked, as on create) and the preferred terms."""
    if not isinstance(affinity, dict):
        return
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        at = (*path, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        terms = _items(required.get("nodeSelectorTerms"))
        if not terms:
            yield FieldError(at, REQUIRED, detail="must have at least one node selector term")
        for index, term in enumerate(terms):
            yield from _term(term, (*at, index), True)
    for index, preferred in enumerate(_items(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        if not isinstance(preferred, dict):
            continue
        at = (*path, "preferredDuringSchedulingIgnoredDuringExecution", index)
        weight = preferred.get("weight")
        if isinstance(weight, int) and not isinstance(weight, bool) and not 1 <= weight <= 100:
            yield FieldError((*at, "weight"), INVALID, weight, "must be in the range 1-100")
        yield from _term(preferred.get("preference"), (*at, "preference"), False)


def resource_name(name: str, path: Path) -> Iterator[FieldError]:
    """validateContainerResourceName: a qualified name (validateResourceName; when it is not, that is the
    error reported), then a standard name, or an extended one with a domain."""
    problems = names.qualified_name(name)
    if problems:
        for message in problems:
            yield FieldError(path, INVALID, name, message, keys=_resource_key(path))
        return
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            yield FieldError(
                path, INVALID, name, "must be a standard resource for containers", keys=_resource_key(path)
            )
    elif "kubernetes.io/" not in name and not is_extended_resource_name(name):
        yield FieldError(
            path, INVALID, name, "doesn't follow extended resource name standard", keys=_resource_key(path)
        )


def _resource_key(path: Path) -> frozenset[int]:
    return frozenset({len(path) - 1})  # resources.limits[gpu]


def pod_spec(spec: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    if not isinstance(spec, dict):
        return
    yield from labels(spec.get("nodeSelector"), (*path, "nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, dict):
        yield from node_affinity(affinity.get("nodeAffinity"), (*path, "affinity", "nodeAffinity"))
    yield from tolerations(spec.get("tolerations"), (*path, "tolerations"), gates)
    for key in ("initContainers", "containers"):
        for index, container in enumerate(_items(spec.get(key))):
            resources = container.get("resources") if isinstance(container, dict) else None
            for part in ("limits", "requests"):
                listed = resources.get(part) if isinstance(resources, dict) else None
                for name in listed if isinstance(listed, dict) else ():
                    yield from resource_name(str(name), (*path, key, index, "resources", part, name))


def node_selector(selector: Any, path: Path) -> Iterator[FieldError]:
    """ValidateNodeSelector (label values checked): at least one term, then each term's requirements."""
    if not isinstance(selector, dict):
        return
    at = (*path, "nodeSelectorTerms")
    terms = _items(selector.get("nodeSelectorTerms"))
    if not terms:
        yield FieldError(at, REQUIRED, detail="must have at least one node selector term")
    for index, term in enumerate(terms):
        yield from _term(term, (*at, index), True)
