"""mpijob-launcher: an MPIJob launcher that deadlocks with its gang, or holds GPUs it never uses."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import dig, integer, mapping, text
from gpulint.kube.runtime import container_gpus, container_launches, gpu_resource_name, main_containers
from gpulint.kube.workloads import ObjectFacts, PodSpecSite, api_group
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("mpijob-launcher", Severity.WARNING, kinds=frozenset({"MPIJob"}), of_pods=True)
RULE_ID = SPEC.id
# Schedulers that gang-schedule the PodGroup the MPI operator creates (minMember = workers + 1).
# KAI's pod grouper leaves the launcher out while it does not exist (kai-scheduler PR #75).
GANG_SCHEDULERS = frozenset({"volcano", "scheduler-plugins-scheduler", "scheduler-plugins"})
_LAUNCH_PROGRAMS = frozenset({"mpirun", "horovodrun"})


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if api_group(obj.api_version) != "kubeflow.org":
        return
    spec = mapping(obj.data.get("spec"))
    sites = {site.role: site for site in obj.facts.sites()}
    workers = sites.get("Worker")
    launcher = sites.get("Launcher")
    if workers is not None and workers.pods is not None:
        yield from _wait_for_workers(spec, sites, workers.pods)
    if launcher is not None and spec.get("runLauncherAsWorker") is not True:
        yield from _idle_launcher_gpus(launcher, ctx.config.gpu_resources, obj.facts)


def _wait_for_workers(spec: dict, sites: dict[str, PodSpecSite], workers: int) -> Iterator[Diagnostic]:
    if spec.get("launcherCreationPolicy") != "WaitForWorkersReady":
        return
    policy = dig(spec, "runPolicy", "schedulingPolicy")
    schedulers = {text(site.spec.get("schedulerName")) for site in sites.values()}
    gang_scheduler = next((name for name in sorted(schedulers) if name in GANG_SCHEDULERS), "")
    if not isinstance(policy, dict) and not gang_scheduler:
        return  # no gang: the workers start alone, then the launcher
    explicit = integer(mapping(policy).get("minAvailable"))
    minimum = explicit if explicit is not None else workers + 1
    if minimum <= workers:
        return
    source = (
        f"schedulingPolicy.minAvailable {minimum}"
        if explicit is not None
        else f"the gang's default minimum of workers + launcher = {minimum}"
    )
    yield Diagnostic(
        RULE_ID,
        ("spec", "launcherCreationPolicy"),
        f"launcherCreationPolicy WaitForWorkersReady with a gang minimum of {minimum} that counts the launcher is a "
        "deadlock: the job stays Pending with its GPUs reserved",
        notes=(
            f"the operator creates the launcher only once all {workers} workers are Ready, but {source} counts the "
            f"launcher: the gang scheduler{f' ({gang_scheduler})' if gang_scheduler else ''} waits for {minimum} "
            "pods, the operator for the workers to run (kubeflow/mpi-operator#608)",
            f"set runPolicy.schedulingPolicy.minAvailable to {workers}, or use launcherCreationPolicy AtStartup",
        ),
        severity=Severity.ERROR if explicit is not None else None,
    )


def _idle_launcher_gpus(launcher: PodSpecSite, patterns: tuple[str, ...], facts: ObjectFacts) -> Iterator[Diagnostic]:
    for container_path, container in main_containers(launcher.spec):
        gpus = container_gpus(container, patterns, facts)
        if not gpus:
            continue
        found = container_launches(container, facts=facts)
        programs = {(command.words[0].text or "").rsplit("/", 1)[-1] for command in found.commands if command.words}
        if not any(launch.launcher.name == "mpirun" for launch in found.launches) and not programs & _LAUNCH_PROGRAMS:
            continue  # the launcher runs something else: it may use its GPUs
        resource = gpu_resource_name(container, patterns, facts)
        limits = mapping(mapping(container.get("resources")).get("limits"))
        section = "limits" if resource in limits else "requests"
        yield Diagnostic(
            RULE_ID,
            (*launcher.path, *container_path, "resources", section, resource),
            f"the launcher container '{text(container.get('name'))}' asks for {gpus} {resource} but only runs "
            "mpirun: these GPUs stay idle for the whole job",
            notes=(
                "the MPI operator lists only the workers in the hostfile (the launcher too only with "
                "runLauncherAsWorker: true)",
                "remove them from the launcher, or set runLauncherAsWorker: true",
            ),
            on_key=True,
        )
