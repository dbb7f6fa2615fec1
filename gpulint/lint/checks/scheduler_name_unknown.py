"""scheduler-name-unknown: a schedulerName no scheduler answers to (the pods stay Pending without an event)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.kube.commandline import written_words
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.typos import typo_of
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.kinds import unproven
from gpulint.lint.world.resolver import Resolver

SPEC = RuleSpec("scheduler-name-unknown", Severity.WARNING, of_pods=True)
RULE_ID = SPEC.id
DEFAULT_SCHEDULER = "default-scheduler"
SCHEDULERS = "KubeSchedulerConfiguration"  # the kind of the profiles that name schedulers (gpulint/lint/world/kinds.py)
# The names the schedulers GPU clusters run answer to, as their charts install them.
KNOWN_SCHEDULERS = {
    DEFAULT_SCHEDULER: "kube-scheduler",
    "volcano": "Volcano",
    "kai-scheduler": "KAI Scheduler",
    "scheduler-plugins-scheduler": "scheduler-plugins (coscheduling)",
    "yunikorn": "Apache YuniKorn",
    "koord-scheduler": "Koordinator",
    "hami-scheduler": "HAMi",
    "stork": "Stork",
}
# A KubeSchedulerConfiguration profile (in a ConfigMap) or the legacy --scheduler-name flag declares a name.
_PROFILE = re.compile(r"^\s*-?\s*schedulerName:\s*[\"']?([A-Za-z0-9][-A-Za-z0-9_.]*)", re.MULTILINE)
_FLAG = re.compile(r"^--scheduler-name=(.+)$")


def declared_schedulers(resolver: Resolver) -> set[str]:
    """Scheduler names the linted files declare (profiles in ConfigMaps, --scheduler-name flags) and those
    the inventory's running pods were placed by."""
    names: set[str] = set()
    for obj in resolver.linted.of_kind("", "ConfigMap"):
        for value in mapping(obj.data.get("data")).values():
            if isinstance(value, str) and "KubeSchedulerConfiguration" in value:
                names.update(_PROFILE.findall(value))
    for kind in ("Deployment", "StatefulSet", "DaemonSet"):
        for obj in resolver.linted.of_kind("apps", kind):
            for site in obj.facts.sites():
                for container in sequence(site.spec.get("containers")):
                    for arg in written_words(mapping(container)) or []:
                        found = _FLAG.match(arg) if isinstance(arg, str) else None
                        if found:
                            names.add(found.group(1))
    for pod in resolver.pods:
        if dig(pod.data, "spec", "nodeName"):
            names.add(text(dig(pod.data, "spec", "schedulerName")) or DEFAULT_SCHEDULER)
    return names


def _uses(obj: KubeObject) -> Iterator[tuple[Path, str]]:
    spec = mapping(obj.data.get("spec"))
    if obj.ref.group == "batch.volcano.sh" and isinstance(spec.get("schedulerName"), str):
        yield ("spec", "schedulerName"), spec["schedulerName"]
    for site in obj.facts.sites():
        name = site.spec.get("schedulerName")
        if isinstance(name, str) and name:
            yield (*site.path, "schedulerName"), name


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    uses = list(_uses(obj))
    if not uses:
        return
    known = set(KNOWN_SCHEDULERS) | ctx.memo(("declared-schedulers",), lambda: declared_schedulers(ctx.resolver))
    running = bool(ctx.resolver.pods)
    # No API lists the schedulers a cluster runs: the names are known whole only when the configuration
    # declares that the linted files hold every scheduler profile (complete: [KubeSchedulerConfiguration]).
    complete = ctx.resolver.reference_proven_absent and ctx.resolver.catalog_complete(SCHEDULERS, obj.document.path)
    for path, name in uses:
        if name in known:
            continue
        close = typo_of(name, known)
        if close or complete:
            hint = f"; did you mean '{close}'?" if close else ""
            yield Diagnostic(
                RULE_ID,
                path,
                f"schedulerName '{name}' is the name of no scheduler{hint}",
                notes=(
                    "kube-scheduler ignores a pod whose schedulerName none of its profiles has, so it stays Pending "
                    "with no event",
                    *(() if complete else (unproven(SCHEDULERS),)),
                ),
                severity=None if complete else Severity.INFO,
                pinned=not complete,  # a scheduler installed elsewhere may answer to it: no verdict
            )
        elif running:
            yield Diagnostic(
                RULE_ID,
                path,
                f"no running pod in the inventory was placed by a scheduler named '{name}', and no linted "
                "file declares one: if none answers to it, the pods stay Pending with no event",
                severity=Severity.INFO,
                pinned=True,
            )
