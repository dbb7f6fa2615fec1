"""service-dns-mismatch: a rank is told to reach a host named like its workload's pods that none of them gets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.commandline import container_env
from gpulint.kube.pod_dns import HostName, PodNames, hosts_in, mismatch, pod_names
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
    kinds=frozenset({"JobSet", "Job", "StatefulSet", "LeaderWorkerSet", "MPIJob"}),
    scope=Scope.POD_TEMPLATE,
)
RULE_ID = SPEC.id

# Variables the launchers read the rendezvous host from (torch.distributed's env:// init, torchrun's
# PET_ twins, JAX's jax.distributed.initialize): the ranks all dial the host written.
HOST_VARIABLES = ("MASTER_ADDR", "PET_MASTER_ADDR", "JAX_COORDINATOR_ADDRESS")
# Launcher flags (gpulint.kube.launchers' canonical names) that name the rendezvous host.
HOST_FLAGS = {"master-addr": "--master_addr", "rdzv-endpoint": "--rdzv_endpoint"}


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if site.completed_by or not site.runs:
        return
    names = pod_names(obj.data)
    if names is None or not names.sets:
        return
    namespace = obj.ref.namespace
    injected = injected_env(obj.data, site)
    config_maps = namespace_config_maps(ctx, namespace)
    services = _services(ctx, namespace)
    for container_path, container in main_containers(site.spec):
        base = (*site.path, *container_path)
        seen: set[HostName] = set()  # a host judged once per container (MASTER_ADDR, then the flag that reads it)
        written = env_entries(container, HOST_VARIABLES)
        env = container_env(container, injected, config_maps).values if written else {}  # $(VAR) expanded
        values = ((name, env.get(name)) for name in HOST_VARIABLES if name in written)
        for variable, value, host in hosts_in((n, v) for n, v in values if v is not None):
            seen.add(host)
            index, item = written[variable]
            where = (*base, "env", index, "valueFrom" if "valueFrom" in item else "value")  # a ConfigMap's key
            yield from _judge(variable, value, host, names, namespace, services, where, None)
        for launch in container_launches(container, injected, config_maps, obj.facts).launches:
            for flag, spelt in HOST_FLAGS.items():
                word = launch.values.get(flag)
                if word is None or word.text is None:
                    continue  # not given, or not known offline
                for _, value, host in hosts_in(iter([(spelt, word.text)])):
                    if host in seen:
                        continue  # the variable it expands was judged where it is written
                    seen.add(host)
                    where = (*base, *word.origin.path)
                    yield from _judge(spelt, value, host, names, namespace, services, where, word.origin.offset)


def _judge(
    variable: str,
    value: str,
    host: HostName,
    names: PodNames,
    namespace: str,
    services: frozenset[str],
    path: tuple[Any, ...],
    offset: int | None,
) -> Iterator[Diagnostic]:
    if host.namespace and namespace and host.namespace != namespace:
        return  # another namespace's pods or Service
    found = mismatch(variable, value, host, names, lambda name: name in services)
    if found is None:
        return
    made = (
        f"the {names.owner.split(' ')[0]} controller creates the headless Service {names.service}, "
        "which answers only for its pods"
        if names.service_made
        else f"the pods answer as <hostname>.{names.service} once a headless Service {names.service} selects them"
    )
    yield Diagnostic(
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
