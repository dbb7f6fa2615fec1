"""scheduling.k8s.io validation of Workload and PodGroup (Kubernetes 1.37: v1beta1 and v1alpha3, served when
GenericWorkload is on) and CompositePodGroup (v1alpha3, with CompositePodGroup), beyond what the OpenAPI schema
says.

Translated from kubernetes v1.37.2: the declarative rules of k8s.io/api scheduling/v1beta1/types.go (its
``+k8s:`` tags, generated into pkg/apis/scheduling/v1beta1/zz_generated.validations.go) and the handwritten
ones of pkg/apis/scheduling/validation/validation.go (ValidateWorkloadSpec, ValidatePodGroup), as a create
meets them: the strategy's PrepareForCreate (pkg/registry/scheduling/*/strategy.go) first
drops the fields of disabled gates and resets a PodGroup's status, and defaulting gives a PodGroup its
``disruptionMode``. The oracle's ``gang_validate`` family (docs/oracle.md) checks it against that code.

The API server decodes JSON into Go types: a null or missing pointer is unset, a null list is empty, a null
string is "". A value of the wrong JSON type is the decoder's 400 (schema-invalid says so): skipped here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gpulint.kube import names
from gpulint.kube.features import FeatureGates
from gpulint.kube.fields import mapping
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import DUPLICATE, INVALID, REQUIRED, FieldError, not_supported, too_many

# The versions of that shape (1.36's v1alpha2 and 1.35's v1alpha1 had others: not checked here)
API_VERSIONS = ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3")
# each kind at the versions 1.37 serves it (storage_scheduling.go: CompositePodGroup at v1alpha3 alone); their
# names are DNS subdomains (validateWorkloadName, ValidatePodGroupName, validateCompositePodGroupName)
SERVED = {
    "Workload": API_VERSIONS,
    "PodGroup": API_VERSIONS,
    "CompositePodGroup": ("scheduling.k8s.io/v1alpha3",),
}
KINDS = tuple(SERVED)
TEMPLATES_MAX = 8  # WorkloadMaxPodGroupTemplates: +k8s:maxItems=8 on each template list
CLAIMS_MAX = 4  # MaxPodGroupResourceClaims
TOPOLOGY_MAX = 1  # +k8s:maxItems=1 on schedulingConstraints.topology
DEPTH_MAX = 4  # WorkloadMaxTemplateDepth: a composite template nests at most 3 deep
PRIORITY_MAX = 1_000_000_000  # HighestUserDefinablePriority
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")

# The fields PrepareForCreate drops when their gate is off (dropDisabled*Fields), per kind of template.
_GROUP_GATED = (
    ("schedulingConstraints", "TopologyAwareWorkloadScheduling"),
    ("resourceClaims", "DRAWorkloadResourceClaims"),
    ("preemptionPolicy", "PodGroupPreemptionPolicy"),
)
_POD_GROUP_GATED = (*_GROUP_GATED, ("parentCompositePodGroupName", "CompositePodGroup"))
_COMPOSITE_GATED = (
    ("preemptionPolicy", "PodGroupPreemptionPolicy"),
    ("compositePodGroupTemplates", "CompositePodGroup"),
)
_COMPOSITE_GROUP_GATED = (("preemptionPolicy", "PodGroupPreemptionPolicy"),)  # dropDisabledPreemptionPolicyField


def validated(kind: str, api_version: str) -> bool:
    """Whether gpulint validates ``kind`` at ``api_version`` as the API server would (a version it serves)."""
    return api_version in SERVED.get(kind, ())


def dropped(kind: str, api_version: str, path: Path, gates: FeatureGates) -> bool:
    """Whether the create strategy drops the field at ``path`` (or one holding it): a field of a disabled gate,
    at any depth of a Workload's template tree. A gate not stated is its release's default (off for all four
    in 1.37): what lies in its fields is then never called refused, whatever the cluster runs."""
    if not validated(kind, api_version):
        return False
    for index, step in enumerate(path):
        if not isinstance(step, str) or index == 0:
            continue
        holder = path[index - 2] if index >= 2 else kind  # the template list, or the object at spec level
        gated = dict(
            _POD_GROUP_GATED
            if holder == "PodGroup"
            else _COMPOSITE_GROUP_GATED
            if holder == "CompositePodGroup"
            else _GROUP_GATED
            if holder == "podGroupTemplates"
            else _COMPOSITE_GATED
            if holder in ("compositePodGroupTemplates", "Workload")
            else ()
        )
        if step in gated and not gates.enabled(gated[step]):
            return True
    return False


Check = Callable[[Any, Path, FeatureGates], Iterator[FieldError]]


def _kept(body: Any, gated: tuple[tuple[str, str], ...], gates: FeatureGates) -> dict[str, Any]:
    """The object as PrepareForCreate leaves it: without the fields of disabled gates."""
    found = mapping(body)
    return {key: value for key, value in found.items() if not any(key == f and not gates.enabled(g) for f, g in gated)}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    """A string field as decoded (null is ""); None for a value of another type (a decoding error)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _union(
    body: dict[str, Any], members: tuple[str, ...], path: Path, is_set: Callable[[Any], bool]
) -> Iterator[FieldError]:
    """validate.Union: exactly one member set."""
    listed = ", ".join(f"`{m}`" for m in members)
    chosen = [m for m in members if is_set(body.get(m))]
    if len(chosen) > 1:
        yield FieldError(path, INVALID, "{" + ", ".join(chosen) + "}", f"must specify exactly one of: {listed}")
    elif not chosen:
        yield FieldError(path, INVALID, "", f"must specify one of: {listed}")


def _pointer_set(value: Any) -> bool:
    return value is not None


def _list_set(value: Any) -> bool:
    return bool(_list(value))


def _short_name(value: Any, path: Path) -> Iterator[FieldError]:
    """+k8s:required +k8s:format=k8s-short-name (a DNS label)."""
    text = _text(value)
    if text == "":
        yield FieldError(path, REQUIRED)
    elif text is not None:
        yield from (FieldError(path, INVALID, text, message) for message in names.dns1123_label(text))


def _long_name(value: Any, path: Path, required: bool = False) -> Iterator[FieldError]:
    """+k8s:format=k8s-long-name (a DNS subdomain); an optional value is not checked when empty."""
    text = _text(value)
    if text == "":
        if required:
            yield FieldError(path, REQUIRED)
        return
    if text is not None:
        yield from (FieldError(path, INVALID, text, message) for message in names.dns1123_subdomain(text))


def _path_segment(value: Any, path: Path) -> Iterator[FieldError]:
    """+k8s:required +k8s:format=k8s-path-segment-name (content.IsPathSegmentName)."""
    text = _text(value)
    if text == "":
        yield FieldError(path, REQUIRED)
    elif text in (".", ".."):
        yield FieldError(path, INVALID, text, f"may not be '{text}'")
    elif text is not None:
        for part in ("/", "%"):
            if part in text:
                yield FieldError(path, INVALID, text, f"may not contain '{part}'")


def _minimum_one(body: dict[str, Any], name: str, path: Path) -> Iterator[FieldError]:
    """+k8s:required +k8s:minimum=1 on an int32 (0, null or missing: required)."""
    value = body.get(name)
    number = 0 if value is None else _int(value)
    if number == 0:
        yield FieldError((*path, name), REQUIRED)
    elif number is not None and number < 1:
        yield FieldError((*path, name), INVALID, number, "must be greater than or equal to 1")


def _items(
    value: Any, maximum: int, path: Path, each: Callable[[Any, Path], Iterator[FieldError]]
) -> Iterator[FieldError]:
    """+k8s:maxItems (short-circuits), +k8s:listType=map keyed by name (a duplicate name), then each item."""
    items = _list(value)
    if len(items) > maximum:
        yield too_many(path, len(items), maximum)
        return
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = _text(mapping(item).get("name"))
        if name is not None and isinstance(item, dict):
            if name in seen:
                yield FieldError((*path, index), DUPLICATE, {"name": name})
            seen.add(name)
    for index, item in enumerate(items):
        if isinstance(item, dict):
            yield from each(item, (*path, index))


def _topology(constraints: Any, path: Path) -> Iterator[FieldError]:
    def key(item: Any, where: Path) -> Iterator[FieldError]:
        text = _text(mapping(item).get("key"))
        if text == "":
            yield FieldError((*where, "key"), REQUIRED)
        elif text is not None:
            yield from (FieldError((*where, "key"), INVALID, text, m) for m in names.qualified_name(text))

    if isinstance(constraints, dict):
        topology = _list(constraints.get("topology"))
        if len(topology) > TOPOLOGY_MAX:
            yield too_many((*path, "topology"), len(topology), TOPOLOGY_MAX)
            return
        for index, item in enumerate(topology):
            yield from key(item, (*path, "topology", index))


def _claim(claim: dict[str, Any], path: Path) -> Iterator[FieldError]:
    yield from _union(claim, ("resourceClaimName", "resourceClaimTemplateName"), path, _pointer_set)
    yield from _short_name(claim.get("name"), (*path, "name"))
    for field in ("resourceClaimName", "resourceClaimTemplateName"):
        if claim.get(field) is not None:  # an optional pointer: set, its value is checked even when empty
            text = _text(claim[field])
            if text is not None:
                for message in names.dns1123_subdomain(text):
                    yield FieldError((*path, field), INVALID, text, message)


def _policy(body: dict[str, Any], path: Path, minimum: str) -> Iterator[FieldError]:
    """schedulingPolicy (basic or gang, the gang's ``minimum`` at least 1) and schedulingConstraints: every
    template, a PodGroup and a CompositePodGroup."""
    policy = mapping(body.get("schedulingPolicy"))
    yield from _union(policy, ("basic", "gang"), (*path, "schedulingPolicy"), _pointer_set)
    if isinstance(policy.get("gang"), dict):
        yield from _minimum_one(policy["gang"], minimum, (*path, "schedulingPolicy", "gang"))
    yield from _topology(body.get("schedulingConstraints"), (*path, "schedulingConstraints"))


def _group_fields(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    """What a pod group template and a PodGroup's spec share."""
    yield from _policy(body, path, "minCount")
    yield from _items(body.get("resourceClaims"), CLAIMS_MAX, (*path, "resourceClaims"), _claim)
    yield from _shared(body, path)


def _shared(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    """disruptionMode, priorityClassName, priority and preemptionPolicy: every template and a PodGroup."""
    if isinstance(body.get("disruptionMode"), dict):
        yield from _union(body["disruptionMode"], ("single", "all"), (*path, "disruptionMode"), _pointer_set)
    yield from _long_name(body.get("priorityClassName"), (*path, "priorityClassName"))
    priority = _int(body.get("priority"))
    if priority is not None and priority > PRIORITY_MAX:
        yield FieldError((*path, "priority"), INVALID, priority, f"must be less than or equal to {PRIORITY_MAX}")
    policy = body.get("preemptionPolicy")
    if isinstance(policy, str) and policy not in PREEMPTION_POLICIES:
        yield not_supported((*path, "preemptionPolicy"), policy, PREEMPTION_POLICIES)


def _pod_group_template(gates: FeatureGates) -> Callable[[Any, Path], Iterator[FieldError]]:
    def each(template: Any, path: Path) -> Iterator[FieldError]:
        kept = _kept(template, _GROUP_GATED, gates)
        yield from _short_name(kept.get("name"), (*path, "name"))
        yield from _group_fields(kept, path)

    return each


def _composite_template(gates: FeatureGates, depth: int = 1) -> Callable[[Any, Path], Iterator[FieldError]]:
    """A composite template at ``depth`` (1: the spec's own). Past DEPTH_MAX the tree is refused already and
    what lies below is not walked: bounded work on a hostile tree."""

    def each(template: Any, path: Path) -> Iterator[FieldError]:
        kept = _kept(template, _COMPOSITE_GATED, gates)
        yield from _short_name(kept.get("name"), (*path, "name"))
        yield from _policy(kept, path, "minGroupCount")
        yield from _shared(kept, path)
        yield from _items(
            kept.get("podGroupTemplates"), TEMPLATES_MAX, (*path, "podGroupTemplates"), _pod_group_template(gates)
        )
        if depth < DEPTH_MAX:
            nested = _composite_template(gates, depth + 1)
            composites = kept.get("compositePodGroupTemplates")
            yield from _items(composites, TEMPLATES_MAX, (*path, "compositePodGroupTemplates"), nested)

    return each


def _composites(body: dict[str, Any], gates: FeatureGates, depth: int = 0) -> list[dict[str, Any]]:
    """A template's composite children as PrepareForCreate leaves them (none without CompositePodGroup); none
    below DEPTH_MAX (``depth``: the template's own, 0 for the spec), where the tree is refused already."""
    if not gates.enabled("CompositePodGroup") or depth >= DEPTH_MAX:
        return []
    return [item for item in _list(body.get("compositePodGroupTemplates")) if isinstance(item, dict)]


def _children(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in _list(body.get("podGroupTemplates")) if isinstance(item, dict)]


def _template_names(spec: dict[str, Any], path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """validateWorkloadTemplateNamesUniqueness: a name once in the whole tree (a duplicate within one list is
    the declarative rule's)."""
    seen = {name for item in _children(spec) if (name := _text(item.get("name"))) is not None}

    def composite_list(where: Path, templates: list[dict[str, Any]], depth: int) -> Iterator[FieldError]:
        listed = []
        for index, child in enumerate(templates):
            name = _text(child.get("name"))
            if name in seen:
                yield FieldError((*where, "compositePodGroupTemplates", index, "name"), DUPLICATE, name)
            listed.append(name)
        seen.update(name for name in listed if name is not None)
        for index, child in enumerate(templates):
            yield from composite(child, (*where, "compositePodGroupTemplates", index), depth)

    def composite(template: dict[str, Any], where: Path, depth: int) -> Iterator[FieldError]:
        listed = []
        for index, child in enumerate(_children(template)):
            name = _text(child.get("name"))
            if name in seen:
                yield FieldError((*where, "podGroupTemplates", index, "name"), DUPLICATE, name)
            listed.append(name)
        seen.update(name for name in listed if name is not None)
        yield from composite_list(where, _composites(template, gates, depth), depth + 1)

    yield from composite_list(path, _composites(spec, gates), 1)


def _too_deep(template: dict[str, Any], depth: int, gates: FeatureGates) -> bool:
    if depth == DEPTH_MAX:
        return True
    return any(_too_deep(child, depth + 1, gates) for child in _composites(template, gates, depth))


def _priority(template: dict[str, Any]) -> tuple[str | None, Any]:
    return _text(template.get("priorityClassName")), _int(template.get("priority"))


def _priorities(spec: dict[str, Any], path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """validateWorkloadPriority: every template of the tree with one priorityClassName and priority."""
    found: set[tuple[str | None, Any]] = {_priority(t) for t in _children(spec)}
    if len(found) > 1:
        yield FieldError(path, INVALID, None, "detected multiple priority configurations")
        return

    def walk(template: dict[str, Any], depth: int) -> None:
        found.add(_priority(template))
        for child in _composites(template, gates, depth):
            walk(child, depth + 1)
        found.update(_priority(child) for child in _children(template))

    for template in _composites(spec, gates):
        walk(template, 1)
    if len(found) > 1:
        detail = "all priority and priorityClassName values must be identical, detected multiple values"
        yield FieldError(path, INVALID, None, detail)


def _childless(
    templates: list[dict[str, Any]], path: Path, gates: FeatureGates, depth: int = 1
) -> Iterator[FieldError]:
    """validateCompositePodGroupTemplateHasAtLeastOneChild (above DEPTH_MAX: deeper, the tree is refused already)."""
    for index, template in enumerate(templates):
        where = (*path, index)
        nested = _composites(template, gates, depth)
        if depth < DEPTH_MAX and not _children(template) and not nested:
            name = _text(template.get("name"))
            detail = "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"
            yield FieldError(where, INVALID, name or "", detail)
        yield from _childless(nested, (*where, "compositePodGroupTemplates"), gates, depth + 1)


def workload_spec(spec: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """Validate_WorkloadSpec, then ValidateWorkloadSpec."""
    body = _kept(spec, (("compositePodGroupTemplates", "CompositePodGroup"),), gates)
    yield from _union(body, ("podGroupTemplates", "compositePodGroupTemplates"), path, _list_set)
    reference = body.get("controllerRef")
    if isinstance(reference, dict):
        yield from _long_name(reference.get("apiGroup"), (*path, "controllerRef", "apiGroup"))
        yield from _path_segment(reference.get("kind"), (*path, "controllerRef", "kind"))
        yield from _path_segment(reference.get("name"), (*path, "controllerRef", "name"))
    templates = (*path, "podGroupTemplates")
    yield from _items(body.get("podGroupTemplates"), TEMPLATES_MAX, templates, _pod_group_template(gates))
    composites = (*path, "compositePodGroupTemplates")
    yield from _items(body.get("compositePodGroupTemplates"), TEMPLATES_MAX, composites, _composite_template(gates))
    yield from _template_names(body, path, gates)
    for index, template in enumerate(_composites(body, gates)):
        if _too_deep(template, 1, gates):
            yield FieldError((*composites, index), INVALID, None, f"maximum template hierarchy depth is {DEPTH_MAX}")
    yield from _priorities(body, path, gates)
    yield from _childless(_composites(body, gates), composites, gates)


def _parent_name(body: dict[str, Any], path: Path) -> Iterator[FieldError]:
    """parentCompositePodGroupName, an optional pointer: set, even "" is checked."""
    if body.get("parentCompositePodGroupName") is not None:
        text = _text(body["parentCompositePodGroupName"])
        if text is not None:
            for message in names.dns1123_subdomain(text):
                yield FieldError((*path, "parentCompositePodGroupName"), INVALID, text, message)


def pod_group_spec(spec: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """Validate_PodGroupSpec (its disruptionMode defaulted to single), then ValidatePodGroup."""
    body = _kept(spec, _POD_GROUP_GATED, gates)
    if body.get("parentCompositePodGroupName") is not None and body.get("workloadRef") is None:
        yield FieldError((*path, "workloadRef"), REQUIRED, detail="must be set when parentCompositePodGroupName is set")
    yield from _parent_name(body, path)
    reference = body.get("workloadRef")
    if isinstance(reference, dict):
        yield from _long_name(reference.get("workloadName"), (*path, "workloadRef", "workloadName"), required=True)
        yield from _short_name(reference.get("templateName"), (*path, "workloadRef", "templateName"))
    yield from _group_fields(body, path)


def composite_pod_group_spec(spec: Any, path: Path, gates: FeatureGates) -> Iterator[FieldError]:
    """Validate_CompositePodGroupSpec (v1alpha3; its disruptionMode defaulted to single); the handwritten
    ValidateCompositePodGroup checks its metadata alone."""
    body = _kept(spec, _COMPOSITE_GROUP_GATED, gates)
    yield from _parent_name(body, path)
    reference = body.get("workloadRef")
    if reference is None:
        yield FieldError((*path, "workloadRef"), REQUIRED)
    elif isinstance(reference, dict):
        yield from _long_name(reference.get("workloadName"), (*path, "workloadRef", "workloadName"), required=True)
        yield from _short_name(reference.get("templateName"), (*path, "workloadRef", "templateName"))
    yield from _policy(body, path, "minGroupCount")
    yield from _shared(body, path)


SPECS: dict[str, Check] = {
    "Workload": workload_spec,
    "PodGroup": pod_group_spec,
    "CompositePodGroup": composite_pod_group_spec,
}
# The gates whose fields PrepareForCreate drops
FIELD_GATES = (
    "TopologyAwareWorkloadScheduling",
    "DRAWorkloadResourceClaims",
    "PodGroupPreemptionPolicy",
    "CompositePodGroup",
)


def scheduling_spec(kind: str, api_version: str, data: dict[str, Any], gates: FeatureGates) -> list[FieldError]:
    """The spec validation of a scheduling.k8s.io Workload or PodGroup; nothing for other objects.

    A field whose gate the configuration does not state may be dropped or kept, and either can make an error
    (a Workload of composite templates alone has no templates once they are dropped): only the errors found
    both with every unstated gate on and with every one off are the API server's."""
    validate = SPECS.get(kind)
    if validate is None or not validated(kind, api_version):
        return []
    unstated = [gate for gate in FIELD_GATES if not gates.is_stated(gate)]
    if not unstated:
        return list(validate(data.get("spec"), ("spec",), gates))
    stated = dict(gates.stated)
    on, off = (FeatureGates.of(gates.version, {**stated, **dict.fromkeys(unstated, value)}) for value in (True, False))
    without = {error.message() for error in validate(data.get("spec"), ("spec",), off)}
    return [error for error in validate(data.get("spec"), ("spec",), on) if error.message() in without]
