"""service-dns-mismatch: a rank is told to reach a host named like its workload's pods that none of them gets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.commandline import container_env
from gpulint.kube.fields import sequence
from gpulint.kube.pod_dns import (
    Mismatch,
    PodNames,
    ServiceNames,
    host_name,
    mismatch,
    pod_names,
    service_host,
    service_mismatch,
    service_names,
)
from gpulint.kube.runtime import container_launches, env_entries, injected_env, main_containers
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.world.config_maps import namespace_config_maps

SPEC = RuleSpec(
    "service-dns-mismatch",
    Severity.WARNING,
    kinds=frozenset(
        {
            "JobSet",
            "Job",
            "StatefulSet",
            "LeaderWorkerSet",
            "MPIJob",
            "PyTorchJob",
            "RayCluster",
            "RayJob",
            "RayService",
            "TrainJob",
        }
    ),
    scope=Scope.POD_TEMPLATE,
)
RULE_ID = SPEC.id

# Variables the launchers read the rendezvous host from (torch.distributed's env:// init, torchrun's
# PET_ twins, JAX's jax.distributed.initialize, Ray's ray.init()): the ranks all dial the host written.
HOST_VARIABLES = ("MASTER_ADDR", "PET_MASTER_ADDR", "JAX_COORDINATOR_ADDRESS", "RAY_ADDRESS")
# Launcher flags (gpulint.kube.launchers' canonical names) that name the rendezvous host.
HOST_FLAGS = {"master-addr": "--master_addr", "rdzv-endpoint": "--rdzv_endpoint", "address": "--address"}


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if site.completed_by or not site.runs:
        return
    names, made = pod_names(obj.data), service_names(obj.data)
    if names is not None and not names.sets:
        names = None
    if names is None and made is None:
        return
    namespace = obj.ref.namespace
    injected = injected_env(obj.data, site)
    config_maps = namespace_config_maps(ctx, namespace)
    services = _services(ctx, namespace)
    appended = dict(made.appended) if made is not None else {}
    for container_path, original in main_containers(site.spec):
        base = (*site.path, *container_path)
        # the kubelet keeps the last entry of a name: the operator's, appended after the container's own
        container = {**original, "env": [*sequence(original.get("env")), *_entries(appended)]} if appended else original
        seen: set[object] = set()  # a host judged once per container (MASTER_ADDR, then the flag that reads it)
        written = {name: entry for name, entry in env_entries(original, HOST_VARIABLES).items() if name not in appended}
        env = container_env(container, injected, config_maps).values if written else {}  # $(VAR) expanded
        for variable, (index, item) in written.items():
            value = env.get(variable)
            if value is None or _templated(value):
                continue
            seen.add(_host(value))
            where = (*base, "env", index, "valueFrom" if "valueFrom" in item else "value")  # a ConfigMap's key
            yield from _judge(variable, value, names, made, namespace, services, where, None)
        for launch in container_launches(container, injected, config_maps, obj.facts).launches:
            for flag, spelt in HOST_FLAGS.items():
                word = launch.values.get(flag)
                if word is None or word.text is None or _templated(word.text) or _host(word.text) in seen:
                    continue  # not given, not known offline, or the variable it expands was judged where written
                seen.add(_host(word.text))
                where = (*base, *word.origin.path)
                yield from _judge(spelt, word.text, names, made, namespace, services, where, word.origin.offset)


def _entries(variables: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in variables.items()]


def _host(value: str) -> object:
    return host_name(value), service_host(value)


def _templated(value: str) -> bool:
    return "{{" in value or "${" in value  # a template's placeholder (Helm, envsubst): not the value the pod gets


def _judge(
    variable: str,
    value: str,
    names: PodNames | None,
    made: ServiceNames | None,
    namespace: str,
    services: frozenset[str],
    path: tuple[Any, ...],
    offset: int | None,
) -> Iterator[Diagnostic]:
    host = host_name(value) if names is not None else None
    if names is not None and host is not None and not _elsewhere(host.namespace, namespace):
        found = mismatch(variable, value, host, names, lambda name: name in services)
        if found is not None:
            yield _diagnostic(found, path, offset, _made_note(names))
    service = service_host(value) if made is not None else None
    if made is not None and service is not None and not _elsewhere(service.namespace, namespace):
        found = service_mismatch(variable, value, service, made, lambda name: name in services)
        if found is not None:
            note = f"no other Service of that shape is {made.owner}'s, and none answers for its pods"
            yield _diagnostic(found, path, offset, note)


def _elsewhere(written: str, namespace: str) -> bool:
    return bool(written and namespace and written != namespace)  # another namespace's pods or Service


def _made_note(names: PodNames) -> str:
    if names.service_made:
        return (
            f"the {names.owner.removeprefix('the ').split(' ')[0]} controller creates the headless Service {names.service}, "
            "which answers only for its pods"
        )
    return f"the pods answer as <hostname>.{names.service} once a headless Service {names.service} selects them"


def _diagnostic(found: Mismatch, path: tuple[Any, ...], offset: int | None, made: str) -> Diagnostic:
    return Diagnostic(
        RULE_ID,
        path,
        found.message,
        severity=None if found.certain else Severity.INFO,
        pinned=not found.certain,
        offset=offset,
        notes=(
            made,
            "the ranks fail to resolve it and the rendezvous never forms "
            '("Name or service not known", gai error -2), holding their GPUs until the job times out',
        ),
    )


def _services(ctx: CheckContext, namespace: str) -> frozenset[str]:
    """The names of the linted Services that may be in ``namespace`` (a Service without one may be applied to it)."""
    found: frozenset[str] = ctx.memo(
        (RULE_ID, "services", namespace),
        lambda: frozenset(
            service.ref.name
            for service in ctx.resolver.linted.of_kind("", "Service")
            if service.ref.namespace in (namespace, "") or not namespace
        ),
    )
    return found
