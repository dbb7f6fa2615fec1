"""JobSet's webhook.

JobSet (kubernetes-sigs/jobset v0.12.0): ``pkg/webhooks/jobset_webhook.go`` ValidateCreate: the names
of the Jobs and pods it generates (``pkg/util/placement`` GenJobName ``<jobset>-<replicatedJob>-<index>``,
GenPodName ``<job>-<pod index>`` plus a 5-character suffix) must be DNS-1035 labels, dependsOn may
name only an earlier replicatedJob (and not be set on the first), and the success policy, the
failure policy's rules and the coordinator must name replicatedJobs that exist; validateFailurePolicy (rule names,
Job failure reasons), validateCoordinator (its indices) and the network subdomain (a DNS-1035 label).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.names import (
    DNS1123_LABEL_MAX,
    dns1035_label,
    dns1123_subdomain,
    max_len_error,
)
from gpulint.kube.operators.common import Refusal, Submitted, gated
from gpulint.kube.refs import Path
from gpulint.kube.releases import Installed, Span
from gpulint.kube.validation.errors import (
    INVALID,
    FieldError,
)

GROUP = "jobset.x-k8s.io"
# Where a JobSet release is written: its image (config/components/manager registry.k8s.io/jobset/jobset:<release>),
# the chart ``jobset`` (charts/jobset, versioned as the release, "0.10.0"; its values' image.tag), and
# kubernetes-sigs/jobset (releases/download/<release>/manifests.yaml, a remote base's ref).
INSTALLED = Installed(("jobset/jobset",), ("jobset",), ("image", "tag"), ("kubernetes-sigs/jobset",))
# The fields later releases added (api/jobset/v1alpha2/jobset_types.go at each tag), with the webhook's checks on
# them: failurePolicy.rules and coordinator v0.6.0, a replicatedJob's dependsOn v0.8.0. An older release's CRD
# prunes them, and its webhook never sees them.
RULES_AND_COORDINATOR = Span((0, 6))
DEPENDS_ON = Span((0, 8))
Releases = tuple[tuple[str, str], ...]
JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
POD_SUFFIX = "-abcde"  # the 5 random characters the Job controller appends to a pod's name


def _jobset(data: dict[str, Any], releases: Releases) -> Iterator[Refusal]:
    spec = mapping(data.get("spec"))
    name = text(dig(data, "metadata", "name"))
    jobs = [mapping(job) for job in sequence(spec.get("replicatedJobs"))]
    names: list[str] = []
    for index, job in enumerate(jobs):
        at: Path = ("spec", "replicatedJobs", index)
        job_name = text(job.get("name"))
        if name and job_name:
            yield from _generated_names(name, job, at)
        names.append(job_name)  # as JobSet inserts it before checking dependsOn
        depends = sequence(job.get("dependsOn"))
        if index == 0 and job.get("dependsOn") is not None:
            refusal = Refusal((*at, "dependsOn"), "JobSet", "DependsOn can't be set for the first ReplicatedJob")
            yield from gated(refusal, DEPENDS_ON, releases)
        for position, item in enumerate(map(mapping, depends)):
            other = text(item.get("name"))
            if other not in names:
                refusal = Refusal(
                    (*at, "dependsOn", position, "name"),
                    "JobSet",
                    f"replicatedJob: {job_name} cannot depend on replicatedJob: {other}",
                )
                yield from gated(refusal, DEPENDS_ON, releases)
    known = set(names)
    for position, target in enumerate(sequence(dig(spec, "successPolicy", "targetReplicatedJobs"))):
        if text(target) not in known:
            yield Refusal(
                ("spec", "successPolicy", "targetReplicatedJobs", position),
                "JobSet",
                f"invalid replicatedJob name '{text(target)}' does not appear in .spec.ReplicatedJobs",
            )
    for refusal in _jobset_failure_rules(spec, known):
        yield from gated(refusal, RULES_AND_COORDINATOR, releases)
    coordinator = mapping(spec.get("coordinator"))
    if isinstance(coordinator.get("replicatedJob"), str):
        for refusal in _jobset_coordinator(coordinator, jobs):
            yield from gated(refusal, RULES_AND_COORDINATOR, releases)
    subdomain = dig(spec, "network", "subdomain")
    if isinstance(subdomain, str) and subdomain:
        yield from _jobset_subdomain(subdomain)


# pkg/webhooks/jobset_webhook.go validateFailurePolicy (v0.6.0 on, with the rules): a rule's name (the defaulting
# webhook names an unnamed rule failurePolicyRule<index>) of 1 to 128 characters matching ruleNameFmt, named once;
# onJobFailureReasons among the Job conditions' reasons.
JOBSET_RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
JOBSET_RULE_NAME_MAX = 128
JOBSET_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"


def _jobset_failure_rules(spec: dict[str, Any], known: set[str]) -> Iterator[Refusal]:
    at: Path = ("spec", "failurePolicy", "rules")
    named: dict[str, list[int]] = {}
    for rule_index, rule in enumerate(map(mapping, sequence(dig(spec, "failurePolicy", "rules")))):
        name = text(rule.get("name")) or f"failurePolicyRule{rule_index}"
        if len(name) > JOBSET_RULE_NAME_MAX:
            words = (
                f"invalid failure policy rule name of length {len(name)}, the rule name must be at least 1 characters "
                f"long and at most {JOBSET_RULE_NAME_MAX} characters long"
            )
            yield Refusal((*at, rule_index, "name"), "JobSet", words)
        named.setdefault(name, []).append(rule_index)
        if not JOBSET_RULE_NAME.fullmatch(name):
            words = (
                f"invalid failure policy rule name '{name}', a failure policy rule name must start with an alphabetic "
                "character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an "
                "alphanumeric character or '_'"
            )
            yield Refusal((*at, rule_index, "name"), "JobSet", words)
        for position, target in enumerate(sequence(rule.get("targetReplicatedJobs"))):
            if text(target) not in known:
                yield Refusal(
                    (*at, rule_index, "targetReplicatedJobs", position),
                    "JobSet",
                    f"invalid replicatedJob name '{text(target)}' in failure policy does not appear in "
                    ".spec.ReplicatedJobs",
                )
        for position, reason in enumerate(sequence(rule.get("onJobFailureReasons"))):
            if text(reason) not in JOBSET_FAILURE_REASONS:
                words = f"invalid job failure reason '{text(reason)}' in failure policy is not a recognized job failure reason"
                yield Refusal((*at, rule_index, "onJobFailureReasons", position), "JobSet", words)
    for name, indices in named.items():
        if len(indices) > 1:
            shown = "[" + " ".join(map(str, indices)) + "]"  # Go's %v of a []int
            words = f"rule names are not unique, rules with indices {shown} all have the same name '{name}'"
            yield Refusal((*at, indices[1], "name"), "JobSet", words)


def _jobset_coordinator(coordinator: dict[str, Any], jobs: list[dict[str, Any]]) -> Iterator[Refusal]:
    """validateCoordinator: the replicatedJob exists, the job index is one of its replicas, its Job is Indexed with
    completions, and the pod index is one of them (the first problem only, as JobSet returns it)."""
    at: Path = ("spec", "coordinator")
    name = text(coordinator.get("replicatedJob"))
    job = next((job for job in jobs if text(job.get("name")) == name), None)
    if job is None:
        yield Refusal((*at, "replicatedJob"), "JobSet", f"coordinator replicatedJob {name} does not exist")
        return
    job_index, pod_index = integer(coordinator.get("jobIndex"), 0), integer(coordinator.get("podIndex"), 0)
    replicas = integer(job.get("replicas"), 1)
    if job_index is None or pod_index is None or replicas is None:
        return
    if job_index < 0 or job_index >= replicas:
        yield Refusal(
            (*at, "jobIndex"), "JobSet", f"coordinator job index {job_index} is invalid for replicatedJob {name}"
        )
        return
    template = mapping(dig(job, "template", "spec"))
    completions = integer(template.get("completions"))
    if not _indexed(template) or completions is None:
        words = "job for coordinator pod must be indexed completion mode, and completions number must be set"
        yield Refusal((*at, "replicatedJob"), "JobSet", words)
        return
    if pod_index < 0 or pod_index >= completions:
        words = f"coordinator pod index {pod_index} is invalid for replicatedJob {name} job index {job_index}"
        yield Refusal((*at, "podIndex"), "JobSet", words)


def _indexed(job_spec: dict[str, Any]) -> bool:
    """Whether a replicatedJob's Job is Indexed once JobSet's defaulting webhook (v0.3 on) set an unset
    completionMode to Indexed."""
    return job_spec.get("completionMode", "Indexed") in ("Indexed", None)


def _jobset_subdomain(subdomain: str) -> Iterator[Refusal]:
    """spec.network.subdomain: a DNS-1123 subdomain and a DNS-1035 label (no dot: it is the headless Service's
    name)."""
    at: Path = ("spec", "network", "subdomain")
    messages = [*dns1123_subdomain(subdomain)]
    for message in dns1035_label(subdomain):
        messages.append(SUBDOMAIN_TOO_LONG if message == max_len_error(DNS1123_LABEL_MAX) else message)
    for message in messages:
        error = FieldError(at, INVALID, subdomain, message)
        yield Refusal(at, "JobSet", error.message(), error)


_JOBSET_NAME: tuple[Path, ...] = (("metadata", "name"),)  # the generated names start with it


def _generated_names(jobset: str, job: dict[str, Any], at: Path) -> Iterator[Refusal]:
    """The longest Job name (the last replica's) and, for an Indexed Job with completions, the longest pod name."""
    replicas = integer(job.get("replicas"), 1)
    if replicas is None or replicas < 1:
        return
    longest_job = f"{jobset}-{text(job.get('name'))}-{replicas - 1}"
    for message in dns1035_label(longest_job):
        message = JOB_NAME_TOO_LONG if message == max_len_error(DNS1123_LABEL_MAX) else message
        error = FieldError((*at, "name"), INVALID, longest_job, message)
        yield Refusal(error.path, "JobSet", error.message(), error, _JOBSET_NAME)
    template = mapping(dig(job, "template", "spec"))
    completions = integer(template.get("completions"))
    if _indexed(template) and completions is not None and completions > 0:
        longest_pod = f"{longest_job}-{completions - 1}{POD_SUFFIX}"
        for message in dns1035_label(longest_pod):
            if message == max_len_error(DNS1123_LABEL_MAX):
                # JobSet names the Job's name as the invalid value, whatever the pod's
                error = FieldError((*at, "name"), INVALID, longest_job, POD_NAME_TOO_LONG)
                yield Refusal(error.path, "JobSet", error.message(), error, _JOBSET_NAME)


def refusals(submitted: Submitted) -> list[Refusal]:
    """The JobSet webhook's own (Kueue's on the pod set groups are kueue.py's)."""
    return list(_jobset(submitted.data, submitted.releases))
