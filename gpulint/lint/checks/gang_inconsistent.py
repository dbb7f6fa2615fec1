"""gang-inconsistent: a gang whose minimum exceeds its pods, whose group is missing, or whose members
name different schedulers."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import counted, dig, integer, mapping, sequence, text
from gpulint.kube.gangs.members import group_minimum, group_references, reported_gangs
from gpulint.kube.typos import typo_of
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Path, Severity, first_line
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.kinds import only_elsewhere, unproven

SPEC = RuleSpec("gang-inconsistent", Severity.ERROR, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.ref.group == "jobset.x-k8s.io" and obj.kind == "JobSet":
        yield from _kai_jobset_tails(obj)
    for gang in reported_gangs(obj, ctx.resolver):
        if gang.required > gang.total and gang.counted:  # a count not written is no evidence of too few
            source = "its group" if gang.declared_by_group else "it"
            if gang.joiners > 1:
                creators = f"the {gang.joiners} objects that join it create"
            else:
                creators = "this object creates" if gang.declared_by_group else "the workload creates"
            head = f"{gang.system}: {source} requires {gang.required} pods at once but {creators} only {gang.total}"
            roles = f" ({gang.roles()})" if gang.roles() else ""
            brief = first_line(f"{head}{roles}", head)
            yield Diagnostic(
                RULE_ID,
                gang.path,
                brief,
                notes=(
                    *((f"members: {gang.roles()}",) if roles and brief == head else ()),
                    REFUSED_AT_ADMISSION.get(gang.system, "the gang can never reach quorum and its pods wait forever"),
                ),
            )
        schedulers = sorted({member.scheduler for member in gang.members})
        if len(schedulers) > 1:
            yield Diagnostic(
                RULE_ID,
                gang.members[0].path,
                first_line(
                    f"{gang.system}: its members name different schedulers ({', '.join(schedulers)})",
                    f"{gang.system}: its members name different schedulers",
                ),
                notes=(f"schedulers: {', '.join(schedulers)}; one scheduler must place the whole gang",),
            )
    for site in obj.facts.sites():
        for ref in group_references(obj.facts, site, obj.ref.namespace):
            _minimum, _topology, _gang, found = group_minimum(ref, ctx.resolver)
            if found or not ctx.resolver.reference_proven_absent:
                continue
            group, kind = SYSTEM_OBJECTS[ref.system]
            label = (
                f"{'Volcano ' if ref.system == 'volcano' else 'coscheduling ' if ref.system == 'coscheduling' else ''}"
                f"{kind} '{ref.name}'"
            )
            complete = ctx.resolver.catalog_complete(kind, obj.document.path)  # the cluster's groups known whole
            elsewhere = ctx.resolver.namespaces_of(group, kind, ref.name) if ref.namespace else []
            if elsewhere:  # the scheduler looks the group up in the pods' namespace only
                head = only_elsewhere(f"the pods join {label}, which", elsewhere, ref.namespace, "the pods'")
                yield _undefined(
                    ref.path,
                    head,
                    (f"a pod's group is looked up in the pod's own namespace; create it in {ref.namespace}",)
                    + (() if complete else (unproven(kind),)),
                    None if complete else Severity.INFO,
                )
                continue
            known = sorted(name for (g, k, _ns, name) in ctx.resolver.gang_object_keys() if (g, k) == (group, kind))
            close = typo_of(ref.name, known)
            if complete:
                hint = f"did you mean '{close}'?" if close else f"defined: {', '.join(known[:6]) or 'none'}"
                yield _undefined(ref.path, f"the pods join {label}, which does not exist", (hint,))
            elif close:  # a controller or another overlay may create it: only a likely typo is said
                yield _undefined(
                    ref.path,
                    f"the pods join {label}, which no linted file defines",
                    (f"did you mean '{close}'?", unproven(kind)),
                    Severity.INFO,
                )


# Gangs whose operator refuses the object itself when its minimum exceeds its pods, in its own words:
# Volcano v1.15.1 pkg/webhooks/admission/jobs/validate/admit_job.go validateJobCreate (totalReplicas <
# job.Spec.MinAvailable).
REFUSED_AT_ADMISSION = {
    "Volcano Job": "Volcano's webhook refuses the Job: job 'minAvailable' should not be greater than total replicas in tasks",
}

SYSTEM_OBJECTS = {
    "PodGroup": ("scheduling.k8s.io", "PodGroup"),
    "Workload": ("scheduling.k8s.io", "Workload"),
    "coscheduling": ("scheduling.x-k8s.io", "PodGroup"),
    "volcano": ("scheduling.volcano.sh", "PodGroup"),
}


def _undefined(path: Path, lead: str, notes: tuple[str, ...], severity: Severity | None = None) -> Diagnostic:
    """A group the pods join that no file defines: they stay unschedulable (said on the line when it fits)."""
    full = f"{lead}: they stay unschedulable until it exists"
    brief = first_line(full, lead)
    more = () if brief == full else ("they stay unschedulable until it exists",)
    return Diagnostic(RULE_ID, path, brief, notes=(*more, *notes), severity=severity, pinned=severity is not None)


# KAI Scheduler groups a JobSet's pods as one PodGroup with a sub-group per replica of each replicatedJob,
# each needing `parallelism` pods alive at once (or the template's kai.scheduler/batch-min-member): KAI
# v0.17.0 pkg/podgrouper/podgrouper/plugins/jobset/jobset_grouper.go singleReplicaSubGroupMinMember, and
# pkg/scheduler/api/podgroup_info/subgroup_info/podset.go IsReadyForScheduling (alive tasks - Succeeded
# ones are not - at least minAvailable). The Job controller keeps min(parallelism, completions left) pods.
KAI_SCHEDULER = "kai-scheduler"
KAI_MIN_MEMBER = "kai.scheduler/batch-min-member"


def _kai_jobset_tails(obj: KubeObject) -> Iterator[Diagnostic]:
    """A replicatedJob whose last pods are fewer than its KAI gang: once the pods before them have
    finished together, the last ones are never ready for scheduling."""
    for index, job in enumerate(sequence(dig(obj.data, "spec", "replicatedJobs"))):
        job_spec = mapping(dig(job, "template", "spec"))
        if text(dig(job_spec, "template", "spec", "schedulerName")) != KAI_SCHEDULER:
            continue
        parallelism = integer(job_spec.get("parallelism"), 1)
        completions = integer(job_spec.get("completions"))
        override = text(mapping(dig(job, "template", "metadata", "annotations")).get(KAI_MIN_MEMBER))
        minimum = counted(override) or parallelism
        if not parallelism or not completions or not minimum or completions <= parallelism:
            continue
        tail = completions % parallelism
        if tail == 0 or tail >= minimum:
            continue
        name = text(mapping(job).get("name")) or str(index)
        yield Diagnostic(
            RULE_ID,
            ("spec", "replicatedJobs", index, "template", "spec", "completions"),
            f"KAI gangs each replica of replicatedJob '{name}' at {minimum} pods, but its last {tail} of "
            f"{completions} completions may run alone: they can wait forever",
            severity=Severity.WARNING,
            notes=(
                f"the Job keeps min(parallelism {parallelism}, completions left) pods; when the pods before the "
                f"last {tail} finish together, only {tail} are alive and KAI needs {minimum} to schedule any",
                f"make completions a multiple of parallelism, or set the template annotation {KAI_MIN_MEMBER}: "
                f'"{tail}" (or lower)',
            ),
        )
