"""env-reference-invalid: a GPU pod's container takes its environment from a ConfigMap or Secret that is not in the
pod's namespace, or from a key it does not have (the kubelet's CreateContainerConfigError)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.resources import is_gpu
from gpulint.kube.typos import typo_of
from gpulint.kube.workloads import PodSpecSite, containers
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.world.kinds import only_elsewhere, unproven
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("env-reference-invalid", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id

# Where a container names a ConfigMap or Secret for its environment: (list, field under an item, kind, the API's
# resource word in the kubelet's error).
_REFERENCES = (
    ("env", ("valueFrom", "configMapKeyRef"), "ConfigMap", "configmap"),
    ("env", ("valueFrom", "secretKeyRef"), "Secret", "secret"),
    ("envFrom", ("configMapRef",), "ConfigMap", "configmap"),
    ("envFrom", ("secretRef",), "Secret", "secret"),
)


@dataclass(frozen=True)
class _Reference:
    kind: str
    resource: str  # "configmap": the kubelet's NotFound error names the resource so
    name: str
    path: Path  # the reference's name field, from the object
    container: str
    key: str = ""  # configMapKeyRef / secretKeyRef: the key read


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    patterns = ctx.config.gpu_resources
    if not _has_devices(site, patterns):
        return  # the rule speaks for GPU pods only
    for reference in _references(site):
        yield from _resolve(obj, reference, ctx)


def _has_devices(site: PodSpecSite, patterns: tuple[str, ...]) -> bool:
    if sequence(site.spec.get("resourceClaims")):
        return True
    return any(
        is_gpu(name, patterns)
        for _, container in containers(site.spec)
        for section in ("limits", "requests")
        for name in mapping(mapping(container.get("resources")).get(section))
    )


def _references(site: PodSpecSite) -> Iterator[_Reference]:
    """The ConfigMaps and Secrets the containers' environments need (``optional: true`` ones are skipped by the
    kubelet when missing, and are not counted)."""
    for container_path, container in containers(site.spec):
        for list_name, fields, kind, resource in _REFERENCES:
            for index, item in enumerate(sequence(container.get(list_name))):
                ref: Any = item
                for field in fields:
                    ref = mapping(ref).get(field)
                ref = mapping(ref)
                name = text(ref.get("name"))
                if not name or ref.get("optional") is True:
                    continue
                path = (*site.path, *container_path, list_name, index, *fields, "name")
                yield _Reference(kind, resource, name, path, text(container.get("name")), text(ref.get("key")))


def _resolve(obj: KubeObject, ref: _Reference, ctx: CheckContext) -> Iterator[Diagnostic]:
    namespace, resolver = obj.ref.namespace, ctx.resolver
    if _found(resolver, ref.kind, namespace, ref.name):
        keys = resolver.agreed_keys(ref.kind, namespace, ref.name) if ref.key else None
        if keys is not None and ref.key not in keys:
            yield _missing_key(ref, namespace, keys)
        return
    complete = resolver.reference_proven_absent and resolver.catalog_complete(ref.kind, obj.document.path)
    elsewhere = [ns for ns in resolver.namespaces_of("", ref.kind, ref.name) if ns != namespace] if namespace else []
    said = f'{ref.resource} "{ref.name}" not found'
    consequence = f"container '{ref.container}' fails to start with CreateContainerConfigError ({said})"
    if elsewhere:
        head = only_elsewhere(f"{ref.kind} '{ref.name}'", elsewhere, namespace)
        message = f"{head}: {consequence}" if complete else head
        notes: tuple[str, ...] = (
            f"the kubelet reads a container's {ref.kind}s in the pod's own namespace; create it in {namespace}, "
            "or mark the reference optional: true",
        )
    elif complete:
        message = f"{ref.kind} '{ref.name}' does not exist: {consequence}"
        notes = (f"create the {ref.kind}, or mark the reference optional: true",)
    else:
        return
    yield Diagnostic(
        RULE_ID,
        ref.path,
        message,
        notes=(*notes, *(() if complete else (unproven(ref.kind),))),
        severity=None if complete else Severity.INFO,
        pinned=not complete,
    )


def _missing_key(ref: _Reference, namespace: str, keys: frozenset[str]) -> Diagnostic:
    """The kubelet's words (makeEnvironmentVariables): the key is looked up in the object's ``data``."""
    close = typo_of(ref.key, sorted(keys))
    return Diagnostic(
        RULE_ID,
        (*ref.path[:-1], "key"),
        f"couldn't find key {ref.key} in {ref.kind} {namespace or '<namespace>'}/{ref.name}: container "
        f"'{ref.container}' fails to start with CreateContainerConfigError",
        notes=(
            f"did you mean '{close}'?" if close else f"its keys: {', '.join(sorted(keys)[:8]) or 'none'}",
            "add the key, or mark the reference optional: true",
        ),
    )


def _found(resolver: Resolver, kind: str, namespace: str, name: str) -> bool:
    if kind == "ConfigMap":
        return resolver.config_map_keys(namespace, name) is not None
    return resolver.linted.find("", kind, namespace, name) is not None
