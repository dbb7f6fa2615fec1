"""network-reference-invalid: a Multus secondary network the pod joins is not found in its namespace, or names a
device-plugin resource the pod does not request."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from gpulint.kube import networks
from gpulint.kube.fields import mapping, text
from gpulint.kube.gpu_stack import image_repository
from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.workloads import PodSpecSite, containers, template_metadata
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.world.kinds import only_elsewhere, unproven
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("network-reference-invalid", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id
# k8snetworkplumbingwg/network-resources-injector: a mutating webhook that adds the resourceName requests itself
INJECTOR_IMAGE = "network-resources-injector"


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    raw = annotations.get(networks.NETWORKS_ANNOTATION)
    if not isinstance(raw, str):
        return
    selections = networks.pod_networks(raw)
    if selections is None:
        return
    path = (*site.template_path, "metadata", "annotations", networks.NETWORKS_ANNOTATION)
    yield from _check_site(obj, site, selections, path, ctx.resolver)


def _check_site(
    obj: KubeObject, site: PodSpecSite, selections: list[networks.NetworkSelection], path: Path, resolver: Resolver
) -> Iterator[Diagnostic]:
    needed: dict[str, list[str]] = {}  # resource -> the networks that take one device of it each
    for selection in selections:
        namespace = selection.namespace or obj.ref.namespace
        found = resolver.network_attachment(namespace, selection.name)
        if found is None:
            yield from _missing(obj, selection.name, namespace, path, resolver)
            continue
        resource = text(found.get(networks.RESOURCE_ANNOTATION)).strip()
        if resource:
            needed.setdefault(resource, []).append(selection.name)
    if not needed or _injected(resolver):
        return
    for resource, names in sorted(needed.items()):
        asked = _requested(site, resource)
        if asked is not None and asked > len(names):
            yield _unattached(resource, names, asked, path)
        if asked is None or asked >= len(names):
            continue
        joins = (
            f"'{names[0]}', whose NetworkAttachmentDefinition names"
            if len(names) == 1
            else f"{len(names)} networks ({', '.join(sorted(set(names)))}) on"
        )
        yield Diagnostic(
            RULE_ID,
            path,
            f"the pod joins {joins} the device-plugin resource {resource}, but its containers request {asked} of it",
            notes=(
                f"Multus hands each such network one of the {resource} devices kubelet allocated to the pod "
                f"({networks.RESOURCE_ANNOTATION}): {len(names)} needed, the CNI gets no device for the rest",
                f"request {resource}: {len(names)} in a container's limits (unless the network resources injector "
                "adds it)",
            ),
            severity=Severity.WARNING,
        )


def _unattached(resource: str, names: list[str], asked: int, path: Path) -> Diagnostic:
    """More devices of a network's resource than the pod joins networks naming it: Multus attaches one interface
    per network listed, each from one of the pod's devices, so the rest are allocated and never attached
    (k8snetworkplumbingwg/sriov-network-operator#767: two VFs requested, one interface)."""
    joined = len(names)
    networks_named = ", ".join(sorted(set(names)))
    return Diagnostic(
        RULE_ID,
        path,
        f"the pod requests {asked} {resource} but joins {networks_named} "
        f"{'once' if joined == 1 else f'{joined} times'}: only {joined} of its {asked} devices "
        f"{'gets' if joined == 1 else 'get'} an interface",
        notes=(
            f"Multus attaches one interface per network listed in {networks.NETWORKS_ANNOTATION}, each taking one "
            f"of the {resource} devices kubelet allocated to the pod; the other {asked - joined} stay unattached",
            "list the network once per device (name it again, with its own interface name), or request fewer",
        ),
        severity=Severity.WARNING,
    )


def _missing(obj: KubeObject, name: str, namespace: str, path: Path, resolver: Resolver) -> Iterator[Diagnostic]:
    """Multus fails the pod's sandbox (event NoNetworkFound) when the network is not in the namespace it reads."""
    kind = networks.KIND
    complete = resolver.reference_proven_absent and resolver.catalog_complete(kind, obj.document.path)
    elsewhere = (
        [ns for ns in resolver.namespaces_of(networks.GROUP, kind, name) if ns != namespace] if namespace else []
    )
    said = f"cannot find a network-attachment-definition ({name}) in namespace ({namespace or 'of the pod'})"
    if elsewhere:
        reader = "the pod's" if namespace == obj.ref.namespace else "the annotation's"
        head = only_elsewhere(f"{kind} '{name}'", elsewhere, namespace, reader)
        notes: tuple[str, ...] = (
            f"Multus: {said}; a network without a namespace is the pod's (write <namespace>/{name} to use another)",
        )
    elif complete:
        head = f"Multus {said}: the pod never gets its network and stays ContainerCreating"
        notes = ()
    else:
        return
    yield Diagnostic(
        RULE_ID,
        path,
        head,
        notes=(*notes, *(() if complete else (unproven(kind),))),
        severity=None if complete else Severity.INFO,
        pinned=not complete,
    )


def _requested(site: PodSpecSite, resource: str) -> int | None:
    """The devices of ``resource`` the pod's containers request (None: a quantity not known)."""
    total = Fraction(0)
    for _, container in containers(site.spec):
        resources = mapping(container.get("resources"))
        for section in ("limits", "requests"):
            value = mapping(resources.get(section)).get(resource)
            if value is None:
                continue
            try:
                total += quantity_from_yaml(value).value
            except QuantityError:
                return None
            break  # a limit counts once (a request equal to it is the same devices)
    return int(total)


def _injected(resolver: Resolver) -> bool:
    """The linted files run the network resources injector, which adds the requests at admission."""
    return any(
        image_repository(text(container.get("image"))).endswith(INJECTOR_IMAGE)
        for obj in resolver.linted.of_kind("apps", "Deployment")
        for site in obj.facts.sites()
        for _, container in containers(site.spec)
    )
