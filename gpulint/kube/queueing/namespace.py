"""A namespace's LimitRanges and ResourceQuotas, as the API server applies them to a Pod at creation.

Order (kube-apiserver): API defaulting (a container's missing request = its limit), then the
LimitRanger admission plugin fills in LimitRange defaults (``default`` for missing limits,
``defaultRequest`` for missing requests; a LimitRange item's own defaulting makes ``max`` the
default limit and the default limit the default request), then object validation (a request
above its limit; an extended-resource request different from its limit), then LimitRanger's
min/max checks, then the ResourceQuota plugin (``exceeded quota``, ``must specify``).

Sources: kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go (defaulting,
``minimum %s usage per %s is %s, but request is %s``, ``maximum %s usage per %s is %s, but limit
is %s``, limitRequestRatioConstraint ``%s max limit to request ratio per %s is %s, but provided ratio is
%f``), pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem, pkg/quota/v1/evaluator/core/
pods.go (what a pod is charged: ``requests.<extended>`` only; cpu/memory quotas require every
container to set them), staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota
(``exceeded quota: %s, requested: %s, used: %s, limited: %s``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.limit_range import RESOURCE_LISTS, defaulted_item
from gpulint.kube.quantity import QuantityError, format_amount, quantity_from_yaml
from gpulint.kube.refs import Path
from gpulint.kube.resources import is_extended
from gpulint.kube.scheduler import resource_list
from gpulint.kube.workloads import containers

if TYPE_CHECKING:
    from gpulint.kube.dra.allocation import ClaimSpec

Resources = dict[str, Fraction]


@dataclass(frozen=True)
class LimitItem:
    """One Container item of a LimitRange, after the item's own API defaulting."""

    source: str  # the LimitRange's name
    default: tuple[tuple[str, Fraction], ...]
    default_request: tuple[tuple[str, Fraction], ...]
    minimum: tuple[tuple[str, Fraction], ...]
    maximum: tuple[tuple[str, Fraction], ...]
    written_default: frozenset[str]  # keys the object writes under default (the rest come from max)
    texts: tuple[tuple[str, str], ...] = ()  # "section/resource" -> the quantity as written, for messages
    ratio: tuple[tuple[str, Fraction], ...] = ()  # maxLimitRequestRatio: the most a limit may be of its request

    def text_of(self, section: str, resource: str, amount: Fraction) -> str:
        return dict(self.texts).get(f"{section}/{resource}", format_amount(amount))


# the section each of RESOURCE_LISTS keeps its texts under (LimitItem.texts)
_TEXT_SECTIONS = ("max", "min", "limits", "requests")


def limit_items(data: dict[str, Any]) -> list[LimitItem]:
    """The Container items of a LimitRange (SetDefaults_LimitRangeItem applied)."""
    name = text(dig(data, "metadata", "name"))
    items = []
    for raw in sequence(dig(data, "spec", "limits")):
        raw = mapping(raw)
        if raw.get("type") != "Container":
            continue
        written = {field: resource_list(raw.get(field)) for field in RESOURCE_LISTS}
        amounts = defaulted_item("Container", written)
        texts = defaulted_item("Container", {field: _texts(raw.get(field)) for field in RESOURCE_LISTS})
        maximum, minimum, default, default_request = (amounts[field] for field in RESOURCE_LISTS)
        # "section/resource" -> text: max and min as written, limits and requests as defaulted
        shown = {
            f"{section}/{resource}": value
            for field, section in zip(RESOURCE_LISTS, _TEXT_SECTIONS, strict=True)
            for resource, value in texts[field].items()
        }
        items.append(
            LimitItem(
                name,
                tuple(sorted(default.items())),
                tuple(sorted(default_request.items())),
                tuple(sorted(minimum.items())),
                tuple(sorted(maximum.items())),
                frozenset(written["default"]),
                tuple(sorted({**shown, **_ratio_texts(raw)}.items())),
                tuple(sorted(resource_list(raw.get("maxLimitRequestRatio")).items())),
            )
        )
    return items


def _ratio_texts(raw: dict[str, Any]) -> dict[str, str]:
    return {f"ratio/{resource}": value for resource, value in _texts(raw.get("maxLimitRequestRatio")).items()}


def _texts(values: Any) -> dict[str, str]:
    """Resource -> the quantity as written (Kubernetes prints quantities in the form they were given)."""
    out = {}
    for name, value in mapping(values).items():
        try:
            out[str(name)] = quantity_from_yaml(value).text
        except QuantityError:
            continue
    return out


@dataclass(frozen=True)
class Injected:
    """A value the LimitRanger wrote into a container."""

    container: str
    path: Path  # the container, relative to the pod spec
    section: str  # "limits" or "requests"
    resource: str
    amount: Fraction
    source: str  # the LimitRange
    from_max: bool = False  # the default limit came from ``max`` (no ``default`` written)
    text: str = ""  # the amount as the LimitRange writes it


def with_limit_ranges(spec: dict[str, Any], items: Iterable[LimitItem]) -> tuple[dict[str, Any], list[Injected]]:
    """The pod spec after API defaulting and LimitRanger's defaults; and what the LimitRanger added."""
    items = list(items)
    out = dict(spec)
    injected: list[Injected] = []
    for list_name in ("initContainers", "containers"):
        if not isinstance(spec.get(list_name), list):
            continue
        new_list = []
        for index, container in enumerate(spec[list_name]):
            if not isinstance(container, dict):
                new_list.append(container)
                continue
            resources = mapping(container.get("resources"))
            limits = dict(mapping(resources.get("limits")))
            requests = dict(mapping(resources.get("requests")))
            for name, value in limits.items():  # API defaulting: a missing request is the limit
                requests.setdefault(name, value)
            name_of = text(container.get("name"))
            for item in items:  # mergeContainerResources: only what is missing; the first LimitRange wins
                # (section, what the LimitRange injects, the container's own); a default limit that the
                # LimitRange does not write under ``default`` came from its ``max``
                sections = (("limits", item.default, limits), ("requests", item.default_request, requests))
                for section, defaults, own in sections:
                    for resource, amount in defaults:
                        if resource in own:
                            continue
                        own[resource] = item.text_of(section, resource, amount)
                        from_max = section == "limits" and resource not in item.written_default
                        where = (list_name, index)
                        injected.append(
                            Injected(name_of, where, section, resource, amount, item.source, from_max, own[resource])
                        )
            new_list.append({**container, "resources": {**resources, "limits": limits, "requests": requests}})
        out[list_name] = new_list
    return out, injected


@dataclass(frozen=True)
class Violation:
    path: Path  # relative to the pod spec
    message: str  # the API server's words


def _amounts(values: Any) -> Resources:
    return resource_list(values)


def limit_violations(spec: dict[str, Any], items: Iterable[LimitItem]) -> Iterator[Violation]:
    """Object validation and LimitRanger validation of the defaulted pod spec."""
    items = list(items)
    for path, container in containers(spec):
        if path[0] == "ephemeralContainers":
            continue
        resources = mapping(container.get("resources"))
        limits = _amounts(resources.get("limits"))
        requests = _amounts(resources.get("requests"))
        shown = {
            **{f"limits/{k}": v for k, v in _texts(resources.get("limits")).items()},
            **{f"requests/{k}": v for k, v in _texts(resources.get("requests")).items()},
        }
        where = (*path, "resources")
        for resource, request in sorted(requests.items()):
            limit = limits.get(resource)
            if is_extended(resource):
                if limit is None:
                    yield Violation(
                        (*where, "limits"), "Required value: Limit must be set for non overcommitable resources"
                    )
                elif limit != request:
                    yield Violation(
                        (*where, "requests", resource),
                        f'Invalid value: "{shown[f"requests/{resource}"]}": must be equal to {resource} limit of '
                        f"{shown[f'limits/{resource}']}",
                    )
            elif limit is not None and request > limit:
                yield Violation(
                    (*where, "requests", resource),
                    f'Invalid value: "{shown[f"requests/{resource}"]}": must be less than or equal to {resource} limit of '
                    f"{shown[f'limits/{resource}']}",
                )
        for item in items:
            for resource, enforced in item.minimum:
                minimum_request = requests.get(resource)
                if minimum_request is None:
                    yield Violation(
                        where,
                        f"minimum {resource} usage per Container is {item.text_of('min', resource, enforced)}.  No request is specified",
                    )
                elif minimum_request < enforced:
                    yield Violation(
                        where,
                        f"minimum {resource} usage per Container is {item.text_of('min', resource, enforced)}, but request is "
                        f"{shown[f'requests/{resource}']}",
                    )
            for resource, enforced in item.maximum:
                limit = limits.get(resource)
                if limit is None:
                    yield Violation(
                        where,
                        f"maximum {resource} usage per Container is {item.text_of('max', resource, enforced)}.  No limit is specified",
                    )
                elif limit > enforced:
                    yield Violation(
                        where,
                        f"maximum {resource} usage per Container is {item.text_of('max', resource, enforced)}, but limit is "
                        f"{shown[f'limits/{resource}']}",
                    )
            for resource, enforced in item.ratio:
                message = _ratio_violation(
                    resource, item.text_of("ratio", resource, enforced), enforced, requests, limits
                )
                if message:
                    yield Violation(where, message)


def _ratio_violation(
    resource: str, shown: str, enforced: Fraction, requests: Resources, limits: Resources
) -> str | None:
    """limitRequestRatioConstraint: a container's limit over its request at most the item's ratio; both must
    be stated and above zero."""
    prefix = f"{resource} max limit to request ratio per Container is {shown}, but"
    request, limit = requests.get(resource), limits.get(resource)
    if not request:
        return f"{prefix} no request is specified or request is 0"
    if not limit:
        return f"{prefix} no limit is specified or limit is 0"
    observed = limit / request
    return f"{prefix} provided ratio is {float(observed):f}" if observed > enforced else None


# --------------------------------------------------------------------------- ResourceQuota

# Quota keys that make every container state the value (pods.go validationSet), with what it needs.
MUST_SPECIFY = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.cpu": ("requests", "cpu"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}


@dataclass(frozen=True)
class ScopeRequirement:
    """One scope of a quota: ``spec.scopes`` entries are ``Exists``; ``spec.scopeSelector.matchExpressions``
    name an operator and values (only PriorityClass reads them)."""

    scope: str
    operator: str = "Exists"
    values: tuple[str, ...] = ()


def _scope_requirements(spec: dict[str, Any]) -> tuple[ScopeRequirement, ...]:
    """getScopeSelectorsFromQuota: the scopes, then the scopeSelector's expressions."""
    found = [ScopeRequirement(str(scope)) for scope in sequence(spec.get("scopes"))]
    for expression in sequence(dig(spec, "scopeSelector", "matchExpressions")):
        expression = mapping(expression)
        found.append(
            ScopeRequirement(
                text(expression.get("scopeName")),
                text(expression.get("operator")),
                tuple(str(value) for value in sequence(expression.get("values"))),
            )
        )
    return tuple(found)


def _qos_amounts(resources: Any) -> bool:
    """Any positive cpu or memory request or limit (qos.GetPodQOS counts only those two, above zero)."""
    for section in ("requests", "limits"):
        for name, amount in _amounts(mapping(resources).get(section)).items():
            if name in ("cpu", "memory") and amount > 0:
                return True
    return False


def is_best_effort(spec: dict[str, Any]) -> bool:
    """QoS class BestEffort: no container (init containers included) and no pod-level resources state a
    positive cpu or memory request or limit. GPUs and other extended resources do not count."""
    if _qos_amounts(spec.get("resources")):
        return False
    return not any(
        _qos_amounts(container.get("resources"))
        for path, container in containers(spec)
        if path[0] != "ephemeralContainers"
    )


def is_terminating(spec: dict[str, Any]) -> bool:
    """IsTerminating: activeDeadlineSeconds set and at least zero."""
    deadline = spec.get("activeDeadlineSeconds")
    return isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0


def uses_cross_namespace_affinity(spec: dict[str, Any]) -> bool:
    """usesCrossNamespacePodAffinity: a pod (anti-)affinity term naming namespaces or a namespaceSelector."""
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = mapping(dig(spec, "affinity", kind))
        preferred = sequence(rules.get("preferredDuringSchedulingIgnoredDuringExecution"))
        terms = [*sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))]
        terms += [mapping(weighted).get("podAffinityTerm") for weighted in preferred]
        for term in map(mapping, terms):
            if sequence(term.get("namespaces")) or term.get("namespaceSelector") is not None:
                return True
    return False


def _priority_class_matches(requirement: ScopeRequirement, name: str | None) -> bool | None:
    """podMatchesSelector: the requirement as a label selector on {PriorityClass: name}, an empty name no
    label at all (so NotIn and DoesNotExist match it). ``name``: the pod's priorityClassName after the
    Priority admission plugin, which runs first and gives a pod without one the global default class's
    name (or none, when no class is the default); None when that is not known."""
    if name is None:
        return None
    operators = {
        "Exists": bool(name),
        "DoesNotExist": not name,
        "In": bool(name) and name in requirement.values,
        "NotIn": not name or name not in requirement.values,
    }
    return operators.get(requirement.operator)  # any other operator is refused by validation: not judged


def priority_class_name(spec: dict[str, Any], default: str | None) -> str | None:
    """The pod's priorityClassName as the quota plugin sees it: its own, else ``default`` (the global default
    PriorityClass's name, "" when none is the default, None when that is not known)."""
    name = spec.get("priorityClassName")
    return name if isinstance(name, str) and name else default


# Scope -> whether a pod spec matches it (pkg/quota/v1/evaluator/core/pods.go podMatchesScopeFunc).
POD_SCOPES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "Terminating": is_terminating,
    "NotTerminating": lambda spec: not is_terminating(spec),
    "BestEffort": is_best_effort,
    "NotBestEffort": lambda spec: not is_best_effort(spec),
    "CrossNamespacePodAffinity": uses_cross_namespace_affinity,
    "VolumeAttributesClass": lambda spec: False,  # a PersistentVolumeClaim scope: no pod matches it
}


@dataclass(frozen=True)
class Quota:
    name: str
    hard: tuple[tuple[str, Fraction], ...]
    used: tuple[tuple[str, Fraction], ...]
    used_known: bool
    scopes: tuple[ScopeRequirement, ...] = ()

    @classmethod
    def of(cls, data: dict[str, Any]) -> Quota:
        spec = mapping(data.get("spec"))
        status = mapping(data.get("status"))
        return cls(
            text(dig(data, "metadata", "name")),
            tuple(sorted(resource_list(spec.get("hard")).items())),
            tuple(sorted(resource_list(status.get("used")).items())),
            isinstance(status.get("used"), dict),
            _scope_requirements(spec),
        )

    def covers_priority_class(self, spec: dict[str, Any]) -> bool:
        """The quota selects the pod by a PriorityClass scope (so a limited PriorityClass scope is covered)."""
        return any(r.scope == "PriorityClass" for r in self.scopes) and self.applies_to(spec) is True

    def applies_to(self, spec: dict[str, Any], default_priority_class: str | None = None) -> bool | None:
        """Whether the quota covers a pod of this spec (every scope must match; None: not known here).
        ``spec``: the pod as the quota plugin sees it, LimitRange defaults applied; ``default_priority_class``:
        the name a pod without priorityClassName gets ("" none, None not known)."""
        priority = priority_class_name(spec, default_priority_class)
        answers = [self._matches(requirement, spec, priority) for requirement in self.scopes]
        if False in answers:
            return False
        return None if None in answers else True

    @staticmethod
    def _matches(requirement: ScopeRequirement, spec: dict[str, Any], priority: str | None) -> bool | None:
        if requirement.scope == "PriorityClass":
            return _priority_class_matches(requirement, priority)
        judge = POD_SCOPES.get(requirement.scope)
        return judge(spec) if judge is not None else None

    def describe_scopes(self) -> str:
        """The scopes as written, for messages: "PriorityClass In (high)", "NotBestEffort"."""
        parts = []
        for r in self.scopes:
            values = f" ({', '.join(r.values)})" if r.values else ""
            parts.append(r.scope if r.operator == "Exists" else f"{r.scope} {r.operator}{values}")
        return ", ".join(parts)


def pod_charge(spec: dict[str, Any], requests: Resources, limits: Resources) -> Resources:
    """podComputeUsageHelper: what one pod is charged (requests/limits are the effective pod values)."""
    charged: Resources = {"pods": Fraction(1)}
    for native in ("cpu", "memory", "ephemeral-storage"):
        if native in requests:
            charged[native] = requests[native]
            charged[f"requests.{native}"] = requests[native]
        if native in limits:
            charged[f"limits.{native}"] = limits[native]
    for name, amount in requests.items():
        if name.startswith("hugepages-"):
            charged[name] = amount
            charged[f"requests.{name}"] = amount
        elif is_extended(name):
            charged[f"requests.{name}"] = amount  # extended resources are charged only as requests.<name>
    return charged


def pod_limits(spec: dict[str, Any]) -> Resources:
    """PodLimits for cpu/memory/ephemeral-storage: the sum of app containers (init peaks aside)."""
    total: Resources = {}
    for container in sequence(spec.get("containers")):
        for name, amount in _amounts(mapping(mapping(container).get("resources")).get("limits")).items():
            total[name] = total.get(name, Fraction(0)) + amount
    return total


def missing_for_quota(spec: dict[str, Any], quota: Quota) -> list[str]:
    """``must specify limits.cpu for: train`` parts: cpu/memory quotas need every container to state them."""
    hard = {name for name, _ in quota.hard}
    parts = []
    for key in sorted(hard & set(MUST_SPECIFY)):
        section, resource = MUST_SPECIFY[key]
        missing = []
        for list_name in ("containers", "initContainers"):
            for container in sequence(spec.get(list_name)):
                values = mapping(mapping(mapping(container).get("resources")).get(section))
                if resource not in values:
                    missing.append(text(mapping(container).get("name")))
        if missing:
            parts.append(f"{key} for: {','.join(sorted(missing))}")
    return parts


def uncounted_keys(quota: Quota) -> list[tuple[str, str]]:
    """Hard keys for extended resources that no pod is ever charged: (key, what to write instead)."""
    out = []
    for key, _ in quota.hard:
        bare = key.removeprefix("limits.")
        if not _device_resource(bare):
            continue
        if key.startswith("limits.") or not key.startswith("requests."):
            out.append((key, "requests." + bare))
    return out


# Quota keys with a slash that name no container resource: object counts, storage and DRA classes.
_NOT_DEVICE = ("count/", ".storageclass.storage.k8s.io/", ".deviceclass.resource.k8s.io/")


def _device_resource(name: str) -> bool:
    return is_extended(name) and not any(marker in name or name.startswith(marker) for marker in _NOT_DEVICE)


ALLOCATION_RESULTS_MAX_SIZE = 32  # resource.k8s.io: the most devices one allocation holds ("All" is charged so)
CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"


def claim_charge(claims: Iterable[ClaimSpec]) -> Resources:
    """What the ResourceClaims a pod gets from its templates are charged (pkg/quota/v1/evaluator/core/
    resource_claims.go): one claim each, and per device class ``<class>.deviceclass.resource.k8s.io/devices``:
    the exact count, "All" as the most an allocation can hold, a firstAvailable request as its largest
    alternative per class."""
    charged: Resources = {}
    for claim in claims:
        charged[CLAIM_COUNT] = charged.get(CLAIM_COUNT, Fraction(0)) + 1
        for request in claim.requests:
            largest: dict[str, int] = {}
            for alternative in request.alternatives:
                count = ALLOCATION_RESULTS_MAX_SIZE if alternative.all_devices else alternative.count
                largest[alternative.class_name] = max(largest.get(alternative.class_name, 0), count)
            for class_name, count in largest.items():
                key = f"{class_name}.deviceclass.resource.k8s.io/devices"
                charged[key] = charged.get(key, Fraction(0)) + count
    return charged
