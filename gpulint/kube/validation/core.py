"""core/v1 validation of what decides GPU placement (kubernetes/kubernetes
pkg/apis/core/validation/validation.go): tolerations, node affinity, nodeSelector, container
resource names, and object names and labels."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from typing import Any

from gpulint.kube import names
from gpulint.kube.features import FeatureGates
from gpulint.kube.go_text import quote
from gpulint.kube.limit_range import RESOURCE_LISTS, defaulted_item
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.quantity import QuantityError, parse_quantity, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import FORBIDDEN, INVALID, REQUIRED, FieldError, not_supported, too_long
from gpulint.kube.validation.resource import is_extended_resource_name

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# pkg/apis/core/helper/helpers.go standardQuotaResources (IsStandardQuotaResourceName: these, and names under
# hugepages- or requests.hugepages-, IsQuotaHugePageResourceName)
STANDARD_QUOTA_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
    }
)
QUOTA_HUGEPAGES_PREFIXES = ("hugepages-", "requests.hugepages-")
# component-helpers resource.SupportedPodLevelResources, listed sorted as field.NotSupported prints it
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")
ANNOTATIONS_MAX = 256 * 1024  # TotalAnnotationSizeLimitB
# Manifests and inventories repeat the same label keys, values and resource names thousands of times: the
# verdict on one string is remembered (bounded in number and length: a webhook runs for months).
STRING_MEMO = 8192


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value if isinstance(value, str) else None


@short_strings_remembered(STRING_MEMO)
def _key_problems(key: str) -> tuple[str, ...]:
    """IsQualifiedName's problems with a label key (or a toleration's, an annotation's, a resource's name)."""
    return tuple(names.qualified_name(key))


@short_strings_remembered(STRING_MEMO)
def _value_problems(value: str) -> tuple[str, ...]:
    """IsValidLabelValue's problems."""
    return tuple(names.label_value(value))


def label_name(key: str, path: Path) -> Iterator[FieldError]:
    """ValidateLabelName."""
    for message in _key_problems(key):
        yield FieldError(path, INVALID, key, message)


def labels(value: Any, path: Path) -> Iterator[FieldError]:
    """ValidateLabels: every key a qualified name, every value a label value (the errors name the map)."""
    if not isinstance(value, dict):
        return
    for key, raw in value.items():
        for message in _key_problems(str(key)):
            yield FieldError((*path, key), INVALID, str(key), message, shown=path, at_key=True)
        text = raw if type(raw) is str else _text(raw)
        if text is not None:
            for message in _value_problems(text):
                yield FieldError((*path, key), INVALID, text, message, shown=path)


def metadata_annotations(value: Any, path: Path) -> Iterator[FieldError]:
    """ValidateAnnotations: every key a qualified name (case does not matter), keys and values together at
    most 256 KiB (the errors name the map)."""
    if not isinstance(value, dict):
        return
    size = 0
    for key, raw in value.items():
        text = str(key)
        for message in _key_problems(text.lower()):
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
    for index, toleration in enumerate(_items(value)):
        if not isinstance(toleration, dict):
            continue
        at = (*path, index)
        key = _text(toleration.get("key")) or ""
        operator = _text(toleration.get("operator")) or ""
        tolerated = _text(toleration.get("value")) or ""
        effect = _text(toleration.get("effect")) or ""
        if key and _key_problems(key):
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
            problems = _value_problems(tolerated)
            if problems:
                yield FieldError((*at, "operator"), INVALID, tolerated, ";".join(problems))
        elif operator == "Exists":
            if tolerated:
                yield FieldError(
                    (*at, "operator"), INVALID, toleration, "value must be empty when `operator` is 'Exists'"
                )
        elif operator in ("Gt", "Lt") and gates.enabled("TaintTolerationComparisonOperators"):
            yield from _compared_value(tolerated, (*at, "value"))
        else:
            yield not_supported((*at, "operator"), operator, TOLERATION_OPERATORS)
        if effect and effect not in TAINT_EFFECTS:
            yield not_supported((*at, "effect"), effect, TAINT_EFFECTS)


def _compared_value(value: str, path: Path) -> Iterator[FieldError]:
    """A Gt or Lt toleration's value: content.IsDecimalInteger, then strconv.ParseInt(value, 10, 64)."""
    if not value:
        yield FieldError(path, INVALID, value, "must be non-empty")
    elif not names.DECIMAL_INTEGER.fullmatch(value):
        yield FieldError(path, INVALID, value, "must be a valid decimal integer in canonical form")
    if names.parse_int64(value) is None:
        reason = "value out of range" if names.SIGNED_DIGITS.fullmatch(value) else "invalid syntax"
        yield FieldError(path, INVALID, value, f"strconv.ParseInt: parsing {quote(value)}: {reason}")


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
            for message in _value_problems(value):
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


@short_strings_remembered(STRING_MEMO)
def _resource_name_problems(name: str) -> tuple[str, ...]:
    """validateContainerResourceName: a qualified name (validateResourceName; when it is not, that is the
    error reported), then a standard name, or an extended one with a domain."""
    problems = _key_problems(name)
    if problems:
        return problems
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            return ("must be a standard resource for containers",)
    elif "kubernetes.io/" not in name and not is_extended_resource_name(name):
        return ("doesn't follow extended resource name standard",)
    return ()


def quota_resource_names(hard: Any, path: Path, shown: Path) -> Iterator[FieldError]:
    """ValidateResourceQuotaSpec's names: ValidateResourceQuotaResourceName on every key of ``hard`` (a qualified
    name; without a domain, a standard resource and one quota tracks: requestsGpu is neither, the GPU's quota key
    is requests.nvidia.com/gpu). ``shown``: the path the API server names (spec.hard of the ResourceQuota)."""
    if not isinstance(hard, dict):
        return
    for name in hard:
        if not isinstance(name, str):
            continue
        at, named = (*path, name), (*shown, name)
        key = frozenset({len(named) - 1})
        problems = _key_problems(name)
        if not problems and "/" not in name and not name.startswith(QUOTA_HUGEPAGES_PREFIXES):
            # one finding: a name that is no standard resource type is no quota resource either (the API server
            # lists both; the second says why)
            problems = () if name in STANDARD_QUOTA_RESOURCES else ("must be a standard resource for quota",)
        for message in problems:
            yield FieldError(at, INVALID, name, message, shown=named, keys=key, at_key=True)


def _limit_quantities(raw: Any) -> dict[str, Any]:
    """A LimitRange item's resource list: name -> Quantity (values that are no quantity are the schema's)."""
    found: dict[str, Any] = {}
    for name, value in (raw if isinstance(raw, dict) else {}).items():
        try:
            found[str(name)] = quantity_from_yaml(value)
        except QuantityError:
            continue
    return found


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource (no domain, or kubernetes.io's) that is not a huge page size."""
    return ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")


def limit_range(spec: Any, path: Path) -> Iterator[FieldError]:
    """ValidateLimitRange's comparisons within each item, after SetDefaults_LimitRangeItem (a Container item's
    missing default limit is its max, its missing default request its default limit, else its min): min above
    max, the default request outside min..max or above the default limit, the default limit outside min..max, a
    maxLimitRequestRatio below 1, and for a resource that may not be overcommitted (an extended resource such as
    a GPU, a huge page size) a default limit other than its default request."""
    for index, item in enumerate(_items(spec.get("limits") if isinstance(spec, dict) else None)):
        if not isinstance(item, dict):
            continue
        at = (*path, "limits", index)
        lists = {field: _limit_quantities(item.get(field)) for field in RESOURCE_LISTS}
        defaulted = defaulted_item(item.get("type"), lists)
        high, low, default, request = (defaulted[field] for field in RESOURCE_LISTS)
        ratios = _limit_quantities(item.get("maxLimitRequestRatio"))
        for name in sorted({*low, *high, *default, *request, *ratios}):
            key = frozenset({len(at) + 1})
            lo, hi, de, rq, ratio = (
                low.get(name),
                high.get(name),
                default.get(name),
                request.get(name),
                ratios.get(name),
            )
            # ValidateLimitRange's orderings, in its order: (smaller, its name, larger, its name, the field blamed
            # and the value it shows)
            orderings = (
                (lo, "min value", hi, "max value", "min", lo),
                (lo, "min value", rq, "default request value", "defaultRequest", rq),
                (rq, "default request value", hi, "max value", "defaultRequest", rq),
                (rq, "default request value", de, "default limit value", "defaultRequest", rq),
                (lo, "min value", de, "default value", "default", lo),
                (de, "default value", hi, "max value", "default", hi),
            )
            for small, small_name, large, large_name, blamed, shown in orderings:
                if small is not None and large is not None and small.value > large.value:
                    detail = f"{small_name} {small} is greater than {large_name} {large}"
                    yield FieldError((*at, blamed, name), INVALID, str(shown), detail, keys=key)
            if ratio is not None and ratio.value < 1:
                detail = f"ratio {ratio} is less than 1"
                yield FieldError((*at, "maxLimitRequestRatio", name), INVALID, str(ratio), detail, keys=key)
            if not _overcommit_allowed(name) and de is not None and rq is not None and de.value != rq.value:
                detail = f"default value {de} must equal to defaultRequest value {rq} in {name}"
                yield FieldError((*at, "defaultRequest", name), INVALID, str(rq), detail, keys=key)


def resource_name(name: str, path: Path) -> Iterator[FieldError]:
    """validateContainerResourceName (the errors name the resource: resources.limits[gpu])."""
    for message in _resource_name_problems(name):
        yield FieldError(path, INVALID, name, message, keys=_resource_key(path))


def _resource_key(path: Path) -> frozenset[int]:
    return frozenset({len(path) - 1})  # resources.limits[gpu]


def _container_resources(containers: Any, path: Path) -> Iterator[FieldError]:
    """The resource names of a list of containers' limits and requests."""
    for index, container in enumerate(_items(containers)):
        resources = container.get("resources") if isinstance(container, dict) else None
        if not isinstance(resources, dict):
            continue
        for part in ("limits", "requests"):
            listed = resources.get(part)
            for name in listed if isinstance(listed, dict) else ():
                if _resource_name_problems(str(name)):  # the path is built only for a name that is wrong
                    yield from resource_name(str(name), (*path, index, "resources", part, name))
                elif str(name).startswith("hugepages-") and isinstance(listed, dict):
                    yield from _huge_pages(str(name), listed[name], (*path, index, "resources", part, name))


def _huge_pages(name: str, amount: Any, path: Path) -> Iterator[FieldError]:
    """validateResourceQuantityHugePageValue (pkg/apis/core/validation): a huge page quantity is a whole number of
    pages (IsHugePageResourceValueDivisible), checked for every new pod."""
    try:
        quantity = quantity_from_yaml(amount)
    except QuantityError:
        return  # schema-invalid says so
    shown = quantity.text
    try:
        size = parse_quantity(name.removeprefix("hugepages-")).value
    except QuantityError:
        size = Fraction(0)
    page = int(size) if size > 0 and size.denominator == 1 else 0  # a page size of whole bytes, or none
    if not page or math.ceil(quantity.value) % page:
        yield FieldError(
            path, INVALID, shown, f"{shown} is not positive integer multiple of {name}", keys=_resource_key(path)
        )


def _pod_level_resources(resources: Any, path: Path) -> Iterator[FieldError]:
    """validatePodResourceName: the pod's own spec.resources (PodLevelResources) takes cpu, memory and
    hugepages-* only; a GPU belongs in a container's resources."""
    if not isinstance(resources, dict):
        return
    for part in ("limits", "requests"):
        listed = resources.get(part)
        for name in listed if isinstance(listed, dict) else ():
            text = str(name)
            if text not in ("cpu", "memory") and not text.startswith("hugepages-"):
                at = (*path, "resources", part, name)
                yield replace(not_supported(at, text, POD_LEVEL_RESOURCES), keys=_resource_key(at))


def pod_spec(spec: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    if not isinstance(spec, dict):
        return
    if spec.get("resources") and gates.enabled("PodLevelResources"):  # with the gate off the field is dropped
        yield from _pod_level_resources(spec["resources"], path)
    # each part's path is built only when the part is there (a pod spec rarely has them all)
    selector = spec.get("nodeSelector")
    if selector:
        yield from labels(selector, (*path, "nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, dict) and affinity.get("nodeAffinity"):
        yield from node_affinity(affinity["nodeAffinity"], (*path, "affinity", "nodeAffinity"))
    listed = spec.get("tolerations")
    if listed:
        yield from tolerations(listed, (*path, "tolerations"), gates)
    for key in ("initContainers", "containers"):
        if spec.get(key):
            yield from _container_resources(spec[key], (*path, key))


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
