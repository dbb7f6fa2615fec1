"""Admission verdicts that the rules and `explain` share: which queue an object is submitted to,
whether that queue exists and takes its namespace, and whether its quota can ever admit it.

The model is gpulint.kube.queueing; this module looks the objects up through the resolver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.gangs.members import KUEUE_TOTAL_ANNOTATION, gangs_of, kueue_group_members, kueue_group_total
from gpulint.kube.quantity import format_amount
from gpulint.kube.queueing.batch_queues import (
    KAI_GROUP,
    KAI_QUEUE_LABEL,
    KAI_SCHEDULER,
    RUNAI_QUEUE_LABEL,
    VOLCANO_GROUP,
    QueueUse,
    kai_ancestry,
    kai_at_once,
    kai_queue,
    least_at_once,
    volcano_first_pods,
    volcano_queue,
)
from gpulint.kube.queueing.keys import Misplaced, misplaced_keys
from gpulint.kube.queueing.kueue_config import (
    CONFIG_FILE,
    CONFIG_GROUP,
    CONFIG_KIND,
    KueueConfig,
    earliest_ready,
    framework_name,
    is_configuration,
)
from gpulint.kube.queueing.kueue_kinds import KUEUE_GROUP
from gpulint.kube.queueing.workload import (
    QUEUE_LABEL,
    QueueName,
    integration,
    is_kueue_framework,
    labels_path,
    queue_name,
)
from gpulint.kube.refs import ObjectLike, Path
from gpulint.kube.scheduler import pod_requests, resource_list
from gpulint.kube.selectors import label_text, selector_matches
from gpulint.kube.typos import typo_of
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import api_group, effective_pod_spec
from gpulint.lint.findings import first_line, tail_or_note
from gpulint.lint.inputs.linted_set import LintedSet
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.world.kinds import unproven
from gpulint.lint.world.resolver import Resolver

if TYPE_CHECKING:  # the admission models are imported where an object meets a queue or a quota
    from gpulint.kube.dra.allocation import ClaimSpec
    from gpulint.kube.queueing.assign import AdmissionVerdict
    from gpulint.kube.queueing.kueue import AdmissionCheck, CheckConfig, ClusterQueue, LocalQueue, ParametersRef
    from gpulint.kube.queueing.namespace import Quota

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every Namespace
MAX_EMBEDDED_CONFIG = 256 * 1024  # a manager configuration is a few dozen lines
DEFAULT_LOCAL_QUEUE = "default"  # Kueue labels an unlabelled job with it when it exists (LocalQueue defaulting)
# The kinds manageJobsWithoutQueueName is judged for: batch jobs, whose Workload is suspended (pods,
# Deployments, StatefulSets and LeaderWorkerSets are also held, but often by design of a serving namespace).
_UNQUEUED_JUDGED = frozenset(
    {
        ("batch", "Job"),
        ("batch", "CronJob"),
        ("jobset.x-k8s.io", "JobSet"),
        ("kubeflow.org", "PyTorchJob"),
        ("kubeflow.org", "TFJob"),
        ("kubeflow.org", "MPIJob"),
        ("kubeflow.org", "XGBoostJob"),
        ("kubeflow.org", "PaddleJob"),
        ("kubeflow.org", "JAXJob"),
        ("ray.io", "RayJob"),
        ("ray.io", "RayCluster"),
        ("trainer.kubeflow.org", "TrainJob"),
    }
)


@dataclass(frozen=True)
class Problem:
    """A wiring problem: where, what, and whether it is proven (error) or only likely (warning).

    ``message`` is one line of at most FIRST_LINE_MAX characters in the admitting program's words (what
    Kueue, Volcano or KAI does); ``notes`` carry the names and the arithmetic that do not fit on it."""

    path: Path
    message: str
    proven: bool
    notes: tuple[str, ...] = ()
    # No verdict: a name found nowhere, while the set of its kind is not known whole (info, never raised)
    unknown: bool = False

    @property
    def lines(self) -> tuple[str, ...]:
        """The message and its notes, as `explain` and `inventory` print them."""
        return (self.message, *self.notes)


def _listing(
    head: str, label: str, names: Sequence[str], *notes: str, joiner: str = ","
) -> tuple[str, tuple[str, ...]]:
    """Kueue's ``<reason>: a,b`` (``label`` ``:`` or ``, found:``) with the names on the first line when they
    fit, else the reason alone and a ``<what>: a,b`` note (the missing ones, the ones found)."""
    joined = joiner.join(names)
    what = label.strip(" ,:") or " ".join(head.split()[-2:])  # found, or "missing AdmissionCheck(s)"
    return tail_or_note(head, f"{label}{joined}", f"{what}: {joined}", *notes)


@dataclass
class QueueRoute:
    """Object -> LocalQueue -> ClusterQueue, as far as the known objects go."""

    queue: QueueName
    local: LocalQueue | None = None
    cluster: ClusterQueue | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """The route reaches a ClusterQueue that would judge the workload."""
        return self.cluster is not None and not any(p.proven for p in self.problems)


def _namespace(obj: KubeObject) -> str:
    return obj.ref.namespace


def namespace_labels(resolver: Resolver, namespace: str) -> dict[str, str] | None:
    """The labels of a namespace, when known (the API server's metadata.name label included)."""
    data = resolver.namespaces.get(namespace)
    if data is None:
        return None
    labels = {str(k): label_text(v) for k, v in mapping(dig(data, "metadata", "labels")).items()}
    labels.setdefault(NAMESPACE_NAME_LABEL, namespace)
    return labels


def _selector_keys(selector: dict[str, object]) -> set[str]:
    keys = set(mapping(selector.get("matchLabels")))
    for expression in sequence(selector.get("matchExpressions")):
        if isinstance(expression, dict) and isinstance(expression.get("key"), str):
            keys.add(expression["key"])
    return keys


def _did_you_mean(name: str, known: list[str]) -> str:
    close = typo_of(name, known)
    if close:
        return f"did you mean '{close}'?"
    if not known:
        return ""
    return f"defined: {first_and_more(sorted(known), 6)}"


def _hinted(head: str, hint: str, *notes: str) -> tuple[str, tuple[str, ...]]:
    """``head; hint`` when it fits on the first line, else the hint is the first note."""
    return tail_or_note(head, f"; {hint}" if hint else "", hint, *notes)


def _missing(
    resolver: Resolver, kind: str, file: str, path: Path, head: str, names: str, hint: str, *notes: str
) -> Problem | None:
    """A ``kind`` named ``names`` found nowhere: it does not exist when the set of the kind is known whole
    (``head``, an error); otherwise only a likely typo is said, as info (``hint`` names the close one)."""
    if resolver.catalog_complete(kind, file):
        message, more = _hinted(head, hint, *notes)
        return Problem(path, message, True, more)
    if not hint.startswith("did you mean"):
        return None  # made elsewhere (Terraform, an operator, a chart not linted, another overlay): no proof
    message, more = _hinted(f"{names} is not among the linted files", hint, *notes, unproven(kind))
    return Problem(path, message, False, more, unknown=True)


def queue_route(obj: KubeObject, resolver: Resolver) -> QueueRoute | None:
    """None when the object is not submitted to a Kueue queue (or is of a kind Kueue does not manage)."""
    if integration(obj.data) is None:
        return None
    name = queue_name(obj.facts)
    if name is None:
        return None
    config = kueue_config(resolver)
    if config is not None and not config.manages(obj.ref.group, obj.kind):
        return None  # kueue_config_problems: Kueue ignores the label
    route = QueueRoute(name)
    if name.as_annotation:
        route.problems.append(
            Problem(
                name.path,
                f"the queue is given as the annotation {name.path[-1]}, which Kueue does not read: it reads the label",
                False,
                (
                    f"the {obj.kind} is not queued (Kueue ignores it, or suspends it forever when "
                    "manageJobsWithoutQueueName is on); make it a label",
                ),
            )
        )
        return route
    setup = resolver.kueue
    namespace = _namespace(obj)
    route.local = setup.local_queue(namespace, name.name)
    file = obj.document.path
    if route.local is None:
        known = sorted({n for (ns, n) in setup.local_queues if ns == namespace or not namespace or not ns})
        where = f" in namespace {namespace}" if namespace else ""
        problem = _missing(
            resolver,
            "LocalQueue",
            file,
            name.path,
            f"LocalQueue {name.name} doesn't exist{where}: Kueue leaves the workload pending (inadmissible)",
            f"LocalQueue {name.name}{where}",
            _did_you_mean(name.name, known),
        )
        route.problems.extend([problem] if problem else [])
        return route
    if setup.is_ambiguous("LocalQueue", (route.local.namespace, route.local.name)):
        return route  # two different definitions among the linted files: which one applies is unknown
    if not namespace and len({q.cluster_queue for (_, n), q in setup.local_queues.items() if n == name.name}) > 1:
        # a manifest without a namespace goes where `kubectl -n` sends it: LocalQueues of that name in several
        # namespaces (two examples' `lq`) lead to different ClusterQueues, and which one applies is unknown
        return route
    if route.local.stopped:
        route.problems.append(
            Problem(
                name.path,
                f"LocalQueue {name.name} is stopped (stopPolicy: {route.local.stop_policy}): nothing it "
                "holds is admitted until the policy is set back to None",
                False,
            )
        )
    if setup.is_ambiguous("ClusterQueue", route.local.cluster_queue):
        return route
    route.cluster = setup.cluster_queue(route.local.cluster_queue)
    if route.cluster is None:
        problem = _missing(
            resolver,
            "ClusterQueue",
            file,
            name.path,
            f"LocalQueue {name.name} points at ClusterQueue {route.local.cluster_queue}, which doesn't exist",
            f"ClusterQueue {route.local.cluster_queue} (of LocalQueue {name.name})",
            _did_you_mean(route.local.cluster_queue, sorted(setup.cluster_queues)),
        )
        route.problems.extend([problem] if problem else [])
        return route
    route.problems.extend(_cluster_queue_problems(route.cluster, namespace, name, resolver, file))
    return route


def _cluster_queue_problems(
    queue: ClusterQueue, namespace: str, name: QueueName, resolver: Resolver, file: str
) -> list[Problem]:
    problems = []
    if queue.stopped:
        problems.append(
            Problem(
                name.path,
                f"ClusterQueue {queue.name} is stopped (stopPolicy: {queue.stop_policy}): it admits nothing "
                "until the policy is set back to None",
                False,
            )
        )
    missing = [f for f in queue.flavor_names() if f not in resolver.kueue.flavors]
    if missing and resolver.catalog_complete("ResourceFlavor", file):
        message, notes = _listing(
            f"ClusterQueue {queue.name} is inactive (Can't admit new workloads): it references missing "
            "ResourceFlavor(s)",
            ": ",
            missing,
            "it admits nothing until they exist",
        )
        problems.append(Problem(name.path, message, True, notes))
    problems.extend(admission_check_problems(queue, name.path, resolver, file))
    if namespace:
        selector = queue.namespace_selector
        labels = namespace_labels(resolver, namespace)
        known = selector is None or labels is not None or _selector_keys(selector) <= {NAMESPACE_NAME_LABEL}
        if known and not queue.admits_namespace(labels or {NAMESPACE_NAME_LABEL: namespace}):
            why = (
                f"ClusterQueue {queue.name} has no namespaceSelector (null selects no namespace; {{}} selects all)"
                if selector is None
                else f"ClusterQueue {queue.name} has a namespaceSelector that excludes namespace {namespace}"
            )
            problems.append(
                Problem(
                    name.path,
                    f"workload namespace doesn't match ClusterQueue selector: ClusterQueue {queue.name} admits "
                    f"nothing from namespace {namespace}",
                    True,
                    (why,),
                )
            )
    return problems


MULTIKUEUE = "kueue.x-k8s.io/multikueue"
PROVISIONING = "kueue.x-k8s.io/provisioning-request"


def admission_check_problems(queue: ClusterQueue, path: Path, resolver: Resolver, file: str = "") -> list[Problem]:
    """Kueue marks a ClusterQueue inactive (pkg/cache/scheduler/clusterqueue.go updateWithAdmissionChecks,
    inactiveReason) when an AdmissionCheck it names is missing or not Active, or when its checks combine
    MultiKueue with another MultiKueue or a ProvisioningRequest check: nothing is admitted."""
    if not queue.admission_checks:
        return []
    checks = resolver.kueue.admission_checks
    inactive = f"ClusterQueue {queue.name} is inactive (Can't admit new workloads): it references"
    problems = []
    missing = [check for check in queue.admission_checks if check not in checks]
    if missing and resolver.catalog_complete("AdmissionCheck", file):
        message, notes = _listing(
            f"{inactive} missing AdmissionCheck(s)", ": ", missing, "its workloads stay pending until they exist"
        )
        problems.append(Problem(path, message, True, notes))
    found = [checks[check] for check in queue.admission_checks if check in checks]
    why = {check.name: _inactive_condition(check, resolver, file) for check in found if check.active is not True}
    proven = [name for name, condition in why.items() if condition is not None and condition.proven]
    if proven:
        message, notes = _listing(
            f"{inactive} inactive AdmissionCheck(s)",
            ": ",
            proven,
            *(f"AdmissionCheck {name}: {why[name]}" for name in proven),
            "its controller never marks it Active as written: the queue's workloads stay pending",
        )
        problems.append(Problem(path, message, True, notes))
    off = [
        check.name
        for check in found
        if check.name not in proven and (check.active is False or why.get(check.name) is not None)
    ]
    if off:
        message, notes = _listing(
            f"{inactive} inactive AdmissionCheck(s)",
            ": ",
            off,
            *(f"AdmissionCheck {name}: {why[name]}" for name in off if why.get(name) is not None),
            "their controller reports Active False; the queue's workloads stay pending until it marks them Active",
        )
        problems.append(Problem(path, message, False, notes))
    multikueue = [check.name for check in found if check.controller == MULTIKUEUE]
    provisioning = [check.name for check in found if check.controller == PROVISIONING]
    refused = f"ClusterQueue {queue.name} is inactive: Cannot"
    if len(multikueue) > 1:
        message, notes = _listing(
            f"{refused} use multiple MultiKueue AdmissionChecks on the same ClusterQueue", ", found: ", multikueue
        )
        problems.append(Problem(path, message, True, notes))
    per_flavor = [check for check in multikueue if check in queue.checks_per_flavor]
    if per_flavor:
        message, notes = _listing(f"{refused} specify MultiKueue AdmissionCheck per flavor", ", found: ", per_flavor)
        problems.append(Problem(path, message, True, notes))
    if multikueue and provisioning:
        message, notes = _listing(
            f"{refused} use both MultiKueue and ProvisioningRequest AdmissionChecks together",
            ", found: ",
            [",".join(multikueue), ",".join(provisioning)],
            joiner=", ",
        )
        problems.append(Problem(path, message, True, notes))
    return problems


@dataclass(frozen=True)
class InactiveCondition:
    """The Active condition a built-in check controller writes on an AdmissionCheck it cannot use."""

    reason: str
    message: str
    proven: bool  # from the objects themselves (complete catalogs), not from a status that may change

    def __str__(self) -> str:
        return f"Active False ({self.reason}): {self.message}"


# controllerName -> (the kind its parameters must name, the Active condition's reason, its message prefix)
CHECK_CONTROLLERS = {
    PROVISIONING: ("ProvisioningRequestConfig", "BadParametersRef", ""),
    MULTIKUEUE: ("MultiKueueConfig", "BadConfig", "Cannot load the AdmissionChecks parameters: "),
}


def _inactive_condition(check: AdmissionCheck, resolver: Resolver, file: str) -> InactiveCondition | None:
    """Why Kueue's provisioning or MultiKueue controller marks the check inactive (pkg/util/admissioncheck
    ConfigFromRef; the controllers' admission check reconcilers), when the objects show it."""
    row = CHECK_CONTROLLERS.get(check.controller)
    if row is None:
        return None
    kind, reason, prefix = row
    error = _parameters_error(check.parameters, kind, resolver, file)
    if error is not None:
        return InactiveCondition(reason, prefix + error, True)
    if check.controller != MULTIKUEUE or check.parameters is None:
        return None
    config = resolver.kueue.check_configs.get((kind, check.parameters.name))
    return _unusable_clusters(config, resolver, file) if config is not None else None


def _parameters_error(ref: ParametersRef | None, kind: str, resolver: Resolver, file: str) -> str | None:
    """ConfigFromRef's error (refValidForGK, then the object lookup), when it is certain."""
    if ref is None:
        return "missing parameters reference"
    if not ref.name:
        return "empty name: bad parameters reference"
    if ref.api_group != KUEUE_GROUP:
        return f'wrong group "{ref.api_group}", expecting "{KUEUE_GROUP}": bad parameters reference'
    if ref.kind != kind:
        return f'wrong kind "{ref.kind}", expecting "{kind}": bad parameters reference'
    if (kind, ref.name) not in resolver.kueue.check_configs and resolver.catalog_complete(kind, file):
        return f'{kind.lower()}s.{KUEUE_GROUP} "{ref.name}" not found'
    return None


def _unusable_clusters(config: CheckConfig, resolver: Resolver, file: str) -> InactiveCondition | None:
    """MultiKueue's NoUsableClusters: every cluster of the config missing or not Active. Proven only when every
    one is missing from a complete catalog (a cluster's Active is its connection now, which may come back)."""
    known = resolver.kueue.multikueue_clusters
    complete = resolver.catalog_complete("MultiKueueCluster", file)
    missing = [name for name in config.clusters if name not in known and complete]
    off = [name for name in config.clusters if name in known and known[name].active is False]
    if not config.clusters or len(missing) + len(off) < len(config.clusters):
        return None
    parts = [f"Missing clusters: [{' '.join(missing)}]"] if missing else []
    parts += [f"Inactive clusters: [{' '.join(off)}]"] if off else []
    return InactiveCondition("NoUsableClusters", ", ".join(parts), not off)


def admission_verdict(obj: KubeObject, resolver: Resolver) -> tuple[QueueRoute, AdmissionVerdict] | None:
    """The flavor assignment of the object's Workload in its ClusterQueue (None without a usable route)."""
    route = queue_route(obj, resolver)
    if route is None or not route.usable or route.cluster is None or not resolver.kueue.tree_is_sound(route.cluster):
        return None
    from gpulint.kube.queueing.assign import assign, demands_of

    items = resolver.limit_items(obj.ref.namespace)
    group = kueue_group_members(obj, resolver)
    if group is None:
        demands = demands_of(obj.facts, items)
    elif distinct_pods(group[1]) > (kueue_group_total(group[1][0].data) or len(group[1])):
        return None  # Kueue deletes the Pods past the count, the last created: which ones stay is not known
    else:  # one Workload of every known Pod of the group, a pod set each (named by the Pod)
        demands = [
            replace(demand, name=joiner.ref.name or text(dig(joiner.data, "metadata", "generateName")) or demand.name)
            for joiner in group[1]
            for demand in demands_of(joiner.facts, items)
        ]
    demands = [d for d in demands if d.count > 0]
    if not demands:
        return None
    return route, assign(resolver.kueue, route.cluster, demands)


def speaks_for_group(obj: KubeObject, resolver: Resolver) -> bool:
    """Whether the object reports on its Workload: always, but for a Kueue pod group only its first known Pod."""
    group = kueue_group_members(obj, resolver)
    return group is None or group[1][0].ref == obj.ref


def pod_group_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """Kueue refuses to compose a pod group's Workload when its Pods disagree (pod_controller.go
    validatePodGroupMetadata): the queue name or the total count; it never admits the group."""
    group = kueue_group_members(obj, resolver)
    if group is None:
        return []
    if group[1][0].ref == obj.ref:
        return _excess_pods(group[0].name, group[1])
    first = group[1][0]
    problems = []
    mine, theirs = queue_name(obj.facts), queue_name(first.facts)
    if mine is not None and theirs is not None and mine.name != theirs.name:
        message, notes = tail_or_note(
            f"pods '{first.ref.name}' and '{obj.ref.name}' has different queue names",
            f": {theirs.name}!={mine.name}",
            f"{theirs.name}!={mine.name}",
            f"Kueue never makes the Workload of pod group {group[0].name}, and no pod of it starts",
        )
        problems.append(Problem(mine.path, message, True, notes))
    total, first_total = kueue_group_total(obj.data), kueue_group_total(first.data)
    if total is not None and first_total is not None and total != first_total:
        message, notes = tail_or_note(
            f"pods '{first.ref.name}' and '{obj.ref.name}' has different '{KUEUE_TOTAL_ANNOTATION}' values",
            f": {first_total}!={total}",
            f"{first_total}!={total}",
            f"Kueue never makes the Workload of pod group {group[0].name}",
        )
        problems.append(Problem(("metadata", "annotations", KUEUE_TOTAL_ANNOTATION), message, True, notes))
    return problems


def distinct_pods(pods: Sequence[ObjectLike]) -> int:
    """How many Pods these objects make: one Pod name written twice (a base and an overlay) is one Pod, each
    generateName a Pod of its own."""
    named = {(pod.ref.namespace, pod.ref.name) for pod in pods if pod.ref.name}
    return len(named) + sum(1 for pod in pods if not pod.ref.name)


def _excess_pods(group: str, pods: Sequence[ObjectLike]) -> list[Problem]:
    """More Pods of a group in the files than its ``pod-group-total-count``: when it makes the group's Workload,
    Kueue finalizes and deletes the active Pods past the count, the ones created last (pod_controller.go
    ConstructComposableWorkload, removeExcessPods: event ExcessPodDeleted `Excess pod deleted`). Pods that
    disagree on the count are refused before that (reported on the others)."""
    totals = {kueue_group_total(pod.data) for pod in pods}
    total, known = next(iter(totals)), distinct_pods(pods)
    if len(totals) != 1 or total is None or known <= total:
        return []
    return [
        Problem(
            ("metadata", "annotations", KUEUE_TOTAL_ANNOTATION),
            f"pod group {group} has {known} pods but '{KUEUE_TOTAL_ANNOTATION}' is {total}: Kueue deletes the "
            f"{known - total} created last (Excess pod deleted)",
            True,
        )
    ]


def kueue_config(resolver: Resolver) -> KueueConfig | None:
    """The Kueue manager Configuration among the linted files (a Configuration object, or the
    ``controller_manager_config.yaml`` of a ConfigMap); None when there is none, or several that differ
    (which one the cluster runs is unknown). The inventory keeps no ConfigMap values."""
    configs = resolver.linted.fact("kueue configurations", _kueue_configs, resolver.linted)
    if not configs or any(replace(c, where="") != replace(configs[0], where="") for c in configs[1:]):
        return None
    return configs[0]


def _kueue_configs(linted: LintedSet) -> tuple[KueueConfig, ...]:
    found = [
        KueueConfig.of(obj.data, f"the Kueue Configuration in {obj.file}")
        for obj in linted.of_kind(CONFIG_GROUP, CONFIG_KIND)
    ]
    for obj in linted.of_kind("", "ConfigMap"):
        raw = mapping(obj.data.get("data")).get(CONFIG_FILE)
        if not isinstance(raw, str) or len(raw) > MAX_EMBEDDED_CONFIG:
            continue
        loaded = load_text(f"{obj.file} data.{CONFIG_FILE}", raw)
        documents = [d.data for d in loaded.documents if d.data is not None]
        if not loaded.problems and len(documents) == 1 and is_configuration(documents[0]):
            where = "/".join(filter(None, (obj.ref.namespace, obj.ref.name)))
            found.append(KueueConfig.of(mapping(documents[0]), f"the Kueue Configuration in ConfigMap {where}"))
    return tuple(found)


WORKLOAD_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def workload_priority_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A job Kueue manages whose kueue.x-k8s.io/priority-class label names a WorkloadPriorityClass that does not
    exist: Kueue makes no Workload for it (kueue pkg/controller/jobframework/reconciler.go ExtractPriority, the
    event WorkloadPriorityClassNotFound), so it stays suspended. Judged from a complete catalog only."""
    if integration(obj.data) is None or queue_name(obj.facts) is None:
        return []
    meta = labels_path(obj.data)
    name = mapping(dig(obj.data, *meta, "labels")).get(WORKLOAD_PRIORITY_LABEL)
    if not isinstance(name, str) or not name or not resolver.workload_priority_class_missing(name, obj.document.path):
        return []
    return [
        Problem(
            (*meta, "labels", WORKLOAD_PRIORITY_LABEL),
            f'Kueue makes no Workload for this {obj.kind}: WorkloadPriorityClass "{name}" not found',
            True,
            ("the job stays suspended until the class exists (event WorkloadPriorityClassNotFound)",),
        )
    ]


def kueue_config_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """What Kueue's Configuration does to the object: a queue-name label Kueue ignores because the kind's
    integration is not enabled; a job without one that manageJobsWithoutQueueName suspends for good."""
    how = integration(obj.data)
    config = kueue_config(resolver) if is_kueue_framework(obj.data) else None
    if config is None:
        return []
    group, kind = obj.ref.group, obj.kind
    name = queue_name(obj.facts)
    if name is not None and not name.as_annotation:
        if config.manages(group, kind):
            return _pods_ready_problems(obj, config) if how is not None else []
        if (name.on_pods or how is None) and config.manages("", "Pod"):
            # the pods may carry the label (the Spark operator copies a SparkApplication's labels to its
            # driver): Kueue's pod integration may gate and admit each of them
            return []
        framework = framework_name(group, kind)
        return [
            Problem(
                name.path,
                f"Kueue does not manage this {kind}: {framework} is not among the enabled integrations.frameworks",
                False,
                (
                    f"{config.where} enables {', '.join(sorted(config.frameworks))}",
                    f"the {QUEUE_LABEL} label is ignored: the {kind} runs at once, outside the queue and its quota",
                ),
            )
        ]
    if name is not None or how is None or not config.manage_without_queue_name or not _unqueued_judged(obj, config):
        return []
    if not config.manages(group, kind):
        return []
    return _unqueued_problems(obj, config, resolver)


# The kinds whose Workload is PodsReady only when its pods are Ready (a finished pod does not count): the pods
# serve until stopped (Kueue pkg/controller/jobs: pod.PodsReady, statefulset, leaderworkerset; a Deployment's
# pods are pod-integration Workloads). A Job counts Succeeded pods too (job.PodsReady): a short one may finish first.
_READY_ONLY = frozenset(
    {("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")}
)


def _pods_ready_problems(obj: KubeObject, config: KueueConfig) -> list[Problem]:
    """A queued workload whose pods cannot be Ready before waitForPodsReady.timeout: Kueue evicts it at every
    admission (Exceeded the PodsReady timeout) and requeues it, forever or until backoffLimitCount deactivates it."""
    ready = config.pods_ready
    if ready is None or (obj.ref.group, obj.kind) not in _READY_ONLY:
        return []
    for site in obj.facts.sites():
        bound = earliest_ready(site.spec)
        if bound is None or bound.seconds < ready.timeout:
            continue
        after = (
            f"after {ready.backoff_limit} requeues Kueue deactivates it: exceeding the maximum number of re-queuing "
            "retries"
            if ready.backoff_limit is not None
            else "with no requeuingStrategy.backoffLimitCount it is requeued and evicted again, forever"
        )
        return [
            Problem(
                (*site.path, *bound.path),
                f"Kueue evicts this {obj.kind} at every admission: its pods cannot be Ready before "
                f"{bound.seconds}s, and waitForPodsReady.timeout is {ready.timeout_text}",
                False,
                (
                    f"{bound.probe}.initialDelaySeconds of container '{bound.container}' is {bound.seconds}s; "
                    f"set in {config.where}",
                    f"Exceeded the PodsReady timeout: the Workload is evicted (PodsReadyTimeout); {after}",
                    *(
                        ("blockAdmission is on: while it waits, no other workload is admitted in any ClusterQueue",)
                        if ready.block_admission
                        else ()
                    ),
                    "raise waitForPodsReady.timeout above the pods' startup, or lower the probe's delay",
                ),
            )
        ]
    return []


def _unqueued_judged(obj: KubeObject, config: KueueConfig) -> bool:
    """A kind manageJobsWithoutQueueName is judged for; a Pod written alone too: the pod webhook gates every Pod of
    a managed namespace that no Kueue-managed job owns (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobs/pod/
    pod_webhook.go Default: the namespace selectors, LocalQueue defaulting, then suspend when the Pod has a queue
    name or manageJobsWithoutQueueName is on), unless podOptions' selectors choose Pods as well."""
    if (obj.ref.group, obj.kind) in _UNQUEUED_JUDGED:
        return True
    owned = bool(sequence(dig(obj.data, "metadata", "ownerReferences")))
    return (obj.ref.group, obj.kind) == ("", "Pod") and not owned and not config.pod_selectors


def _unqueued_problems(obj: KubeObject, config: KueueConfig, resolver: Resolver) -> list[Problem]:
    namespace = _namespace(obj)
    selector = config.managed_namespaces
    labels = namespace_labels(resolver, namespace) if namespace else None
    if labels is None:
        if not _selector_keys(selector) <= {NAMESPACE_NAME_LABEL}:
            return []  # whether managedJobsNamespaceSelector selects the namespace is unknown
        labels = {NAMESPACE_NAME_LABEL: namespace} if namespace else None
    if labels is not None and not selector_matches(selector, labels):
        return []
    if labels is None and not selector_matches(selector, {NAMESPACE_NAME_LABEL: "default"}):
        return []  # no namespace: applied to the context's, "default" unless the selector says otherwise
    setup = resolver.kueue
    if any(n == DEFAULT_LOCAL_QUEUE and (ns == namespace or not ns or not namespace) for ns, n in setup.local_queues):
        return []  # Kueue gives it the namespace's default LocalQueue
    where = f" in namespace {namespace}" if namespace else ""
    # The default LocalQueue may be made elsewhere (another overlay, Terraform): its absence is proof only from a
    # complete catalog (the inventory's, or `complete:`); likely when the files define this namespace's other
    # LocalQueues (its queues are managed here); otherwise the finding is info.
    complete = bool(namespace) and resolver.catalog_complete("LocalQueue", obj.document.path)
    managed_here = bool(namespace) and any(ns == namespace for ns, _ in setup.local_queues)
    return [
        Problem(
            (*labels_path(obj.data), "labels")
            if mapping(dig(obj.data, *labels_path(obj.data))).get("labels")
            else labels_path(obj.data),
            f"Kueue suspends this {obj.kind}: manageJobsWithoutQueueName is true and it has no {QUEUE_LABEL} label",
            complete,
            (
                f"set in {config.where}; no LocalQueue named {DEFAULT_LOCAL_QUEUE}{where} to default it to",
                "the Workload is not considered for admission until the job has the label: it never starts",
            ),
            unknown=not complete and not managed_here,
        )
    ]


def _kai_parent_queue(use: QueueUse, children: list[str]) -> Problem:
    """KAI schedules jobs from leaf queues only (NVIDIA/KAI-Scheduler v0.17.0 pkg/scheduler/actions/utils/
    job_order_by_queue.go PushJob: "job <%v> is targeting a non-leaf queue <%v>", and the job is left out).
    A warning: the child queues may be in the linted files only."""
    shown = _first_children(children)
    return Problem(
        use.path,
        f"KAI Scheduler Queue {use.name} is a parent queue: the scheduler skips a job that targets a non-leaf "
        "queue, so its pods stay Pending",
        False,
        (f"its child queues: {shown}; submit to one of them (a leaf queue)",),
    )


def _first_children(children: list[str]) -> str:
    return first_and_more(children)


VOLCANO_ROOT_QUEUE = "root"  # the hierarchy's root, which Volcano's controller creates


def _volcano_root_queue(use: QueueUse) -> Problem:
    """Volcano's job webhook (v1.15.1 pkg/webhooks/admission/jobs/validate/admit_job.go validateJobCreate,
    "validate hierarchical queue") refuses a Job submitted to the root queue."""
    return Problem(
        use.path,
        "Volcano's admission webhook refuses the Job: can not submit job to root queue",
        True,
        ("submit it to a leaf queue (one no other queue names as its spec.parent)",),
    )


def _volcano_parent_queue(use: QueueUse, children: list[str]) -> Problem:
    """The same webhook refuses a Job submitted to a queue that other queues name as their spec.parent ("can
    only submit job to leaf queue"). A warning: the child queues may be in the linted files only, and the
    webhook counts those the cluster holds when the Job is created."""
    shown = _first_children(children)
    return Problem(
        use.path,
        f"Volcano Queue {use.name} is a parent queue: Volcano's admission webhook refuses the Job "
        "(can only submit job to leaf queue)",
        False,
        (f"its child queues: {shown}; submit to one of them (a leaf queue)",),
    )


def _misplaced(wrong: Misplaced, kind: str) -> Problem:
    if wrong.template is not None:
        where = ".".join(str(step) for step in (*wrong.template, "metadata", "annotations"))
        return Problem(
            wrong.path,
            f"{wrong.key} is written on the {kind}'s own metadata, but {wrong.reader} reads it from the pod "
            f"template's annotations ({where}): as written the pods get no topology request",
            False,
            ("Kueue builds each PodSet's topology request from its pod template's metadata only",),
        )
    return Problem(
        wrong.path,
        f"{wrong.key} is written as {'an annotation' if wrong.expected == 'labels' else 'a label'}, but "
        f"{wrong.reader} reads it from the {wrong.expected}: as written it has no effect",
        False,
    )


def batch_queue_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A Volcano or KAI Scheduler queue that does not exist or is closed; a legacy KAI queue label; a queue
    or group key written as a label where an annotation is read, or the reverse."""
    problems = [_misplaced(wrong, obj.kind) for wrong in misplaced_keys(obj.facts)]
    kai, legacy = kai_queue(obj.facts)
    if legacy is not None:
        problems.append(
            Problem(
                legacy,
                f"the pods ask for kai-scheduler with the legacy label {RUNAI_QUEUE_LABEL}; KAI Scheduler reads "
                f"{KAI_QUEUE_LABEL} (its pod grouper's queue label key) unless its configuration names the old one",
                False,
            )
        )
    for use in (volcano_queue(obj.facts), kai):
        if use is None:
            continue
        queues = resolver.batch_queues(use.group)
        volcano_job = obj.ref.group == "batch.volcano.sh" and obj.kind == "Job"
        if volcano_job and use.name == VOLCANO_ROOT_QUEUE:
            problems.append(_volcano_root_queue(use))
            continue
        listed = resolver.lists("Queue") and any(
            str(d.get("apiVersion", "")).startswith(use.group + "/") for d in resolver.inventory_admission_objects()
        )
        found = queues.get(use.name)
        if found is None:
            if use.defaulted and not listed:
                continue  # the scheduler's default queue exists unless the inventory shows otherwise
            refused = (
                "Volcano's admission webhook refuses the Job: unable to find job queue"
                if obj.kind == "Job" and use.system == "Volcano"
                else "its pods stay Pending"
            )
            complete = listed or (resolver.linted.complete and resolver.declared.covers("Queue", obj.document.path))
            if complete:
                message, notes = _hinted(
                    f"{use.system} Queue {use.name} doesn't exist: {refused}", _did_you_mean(use.name, sorted(queues))
                )
                problems.append(Problem(use.path, message, True, notes))
            elif (hint := _did_you_mean(use.name, sorted(queues))).startswith("did you mean"):
                message, notes = _hinted(f"{use.system} Queue {use.name} is not among the linted files", hint)
                problems.append(Problem(use.path, message, False, (*notes, unproven("Queue")), unknown=True))
            continue
        if use.group == KAI_GROUP and (children := sorted(q.name for q in queues.values() if q.parent == use.name)):
            problems.append(_kai_parent_queue(use, children))
            continue
        if volcano_job:
            if children := sorted(q.name for q in queues.values() if q.parent == use.name):
                problems.append(_volcano_parent_queue(use, children))
                continue
        if use.system == "Volcano" and found.state and found.state != "Open":
            head = f"Volcano Queue {use.name} is {found.state}"
            problems.append(
                Problem(
                    use.path,
                    f"{head}: Volcano's admission webhook refuses the Job",
                    True,
                    (f"can only submit job to queue with state `Open`, queue `{use.name}` status is `{found.state}`",),
                )
                if obj.kind == "Job"
                else Problem(use.path, f"{head}: nothing new is scheduled from it", True)
            )
    return problems


def volcano_capability_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A Volcano Job whose gang needs more at once than its Queue's capability, or a PodGroup whose
    minResources do: the queue never allocates (or enqueues) past its capability, so it never runs."""
    use = volcano_queue(obj.facts)
    found = resolver.batch_queues(use.group).get(use.name) if use is not None else None
    if use is None or found is None or not found.capability:
        return []
    if obj.kind == "PodGroup":
        need = resource_list(dig(obj.data, "spec", "minResources"))
        who = "the PodGroup's minResources ask"
    else:
        gang = next((g for g in gangs_of(obj, resolver) if g.system == "Volcano Job"), None)
        if gang is None:
            return []
        need = least_at_once([(dict(m.pod.requests), m.count) for m in gang.members], gang.required)
        who = f"the {gang.required} pods the Job needs at once (minAvailable) ask at least"
    over = [(name, need[name], cap) for name, cap in found.capability if need.get(name, Fraction(0)) > cap]
    return [
        Problem(
            use.path,
            first_line(
                f"Volcano Queue {use.name} never runs this {obj.kind}: queue resource quota insufficient "
                f"({name} capability {format_amount(cap)})",
                f"Volcano Queue {use.name} never runs this {obj.kind}: queue resource quota insufficient",
            ),
            True,
            (
                f"{who} {format_amount(amount)} {name}, above the queue's capability of {format_amount(cap)}; "
                "it stays Pending",
            ),
        )
        for name, amount, cap in over
    ]


def volcano_task_order_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A Volcano Job whose PodGroup minResources - the first minAvailable pods in task order - ask for more than
    its queue can ever hold, while minAvailable pods of it would fit: Volcano's proportion plugin enqueues a
    PodGroup only while its minResources fit the queue's realCapability (the cluster's nodes minus every queue's
    guarantee, plus its own, within its capability; pkg/scheduler/plugins/proportion/proportion.go), so the Job
    stays Pending and no pod is made. Only on a cluster whose nodes the inventory lists and no autoscaler grows."""
    use = volcano_queue(obj.facts)
    if obj.kind != "Job" or use is None or not resolver.nodes or resolver.pools:
        return []
    queues = resolver.batch_queues(use.group)
    found = queues.get(use.name)
    gang = next((g for g in gangs_of(obj, resolver) if g.system == "Volcano Job"), None)
    if found is None or gang is None:
        return []
    by_path = {m.path: dict(m.pod.requests) for m in gang.members}
    tasks = sequence(dig(obj.data, "spec", "tasks"))
    first = volcano_first_pods(
        obj.data, [by_path.get(("spec", "tasks", index, "template", "spec")) for index in range(len(tasks))]
    )
    if first is None:
        return []
    least = least_at_once([(dict(m.pod.requests), m.count) for m in gang.members], gang.required)
    capability, guarantee = dict(found.capability), dict(found.guarantee)
    problems = []
    for name, amount in sorted(first.requests.items()):
        offered = sum((node.allocatable.get(name, Fraction(0)) for node in resolver.nodes), Fraction(0))
        if not offered:
            continue  # no node has it: gpu-resource-unknown's subject
        guaranteed = sum((dict(q.guarantee).get(name, Fraction(0)) for q in queues.values()), Fraction(0))
        real = max(offered - guaranteed, Fraction(0)) + guarantee.get(name, Fraction(0))
        if name in capability:
            real = min(real, capability[name])
        if amount <= real or least.get(name, Fraction(0)) > real:
            continue  # fits, or no choice of pods would: another verdict's subject
        taken = ", ".join(f"{task} {pods}" for task, pods in first.taken)
        problems.append(
            Problem(
                use.path,
                f"Volcano Queue {use.name} never enqueues this Job: its PodGroup's minResources ask "
                f"{format_amount(amount)} {name}, above the {format_amount(real)} the queue can hold",
                False,
                (
                    f"Volcano sums minResources from the first {gang.required} pods (minAvailable) in task order "
                    f"({taken}), while the {gang.required} of its pods that ask least need "
                    f"{format_amount(least.get(name, Fraction(0)))} {name}",
                    "the proportion plugin enqueues a PodGroup only while its minResources fit the queue's "
                    "realCapability (the cluster's nodes minus the queues' guarantees, within its capability)",
                    "list first the tasks whose pods the Job can start with, or give them a higher priorityClassName",
                ),
            )
        )
    return problems


def volcano_guarantee_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A Volcano Queue whose guarantee, summed with every other queue's, is above what the inventory's nodes
    offer (no node pool can add more): Volcano's proportion and capacity plugins give each queue the cluster
    minus all guarantees (clamped at 0) plus its own, so the queues without a guarantee get none of it."""
    if (obj.kind, api_group(text(obj.data.get("apiVersion")))) != ("Queue", VOLCANO_GROUP) or resolver.pools:
        return []
    queues = resolver.batch_queues(VOLCANO_GROUP)
    mine = queues.get(obj.ref.name)
    if mine is None or not mine.guarantee or not resolver.nodes:
        return []
    problems = []
    for name, _amount in mine.guarantee:
        total = sum((dict(q.guarantee).get(name, Fraction(0)) for q in queues.values()), Fraction(0))
        offered = sum((node.allocatable.get(name, Fraction(0)) for node in resolver.nodes), Fraction(0))
        if total > offered:
            problems.append(
                Problem(
                    ("spec", "guarantee", "resource", name),
                    f"the Volcano Queues' guarantees sum to {format_amount(total)} {name}, above the "
                    f"{format_amount(offered)} the cluster's nodes offer: queues without a guarantee get none of it",
                    False,
                    (
                        "each queue's realCapability is the cluster minus every queue's guarantee (at least 0) plus its own",
                    ),
                )
            )
    return problems


def kai_limit_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """A workload for kai-scheduler whose pods allocated at once (a Kubeflow job's PodGroup, else one pod) ask
    for more GPUs, CPU or memory than its KAI queue's (or a parent's) limit: KAI never schedules it (OverLimit).
    A limit not written is 0 for KAI: nothing of that resource is allowed."""
    use, _legacy = kai_queue(obj.facts)
    if use is None:
        return []
    per_pod = [
        (pod_requests(effective_pod_spec(obj.kind, site.spec), obj.facts), 1 if site.pods is None else site.pods)
        for site in obj.facts.sites()
        if site.spec.get("schedulerName") == KAI_SCHEDULER
    ]
    need, pods = kai_at_once(obj.data, per_pod)
    who = f"a pod of this {obj.kind}" if pods == 1 else f"this {obj.kind} (its PodGroup's {pods} pods at once)"
    problems = []
    for queue in kai_ancestry(resolver.batch_queues(use.group), use.name):
        whose = "" if queue.name == use.name else f" (a parent of {use.name})"
        for cap in queue.limits:
            asked = need.get(cap.unit.resource, Fraction(0))
            if not asked or asked <= cap.limit:
                continue
            unit = cap.unit.unit
            unwritten = (
                ()
                if cap.written
                else (f"spec.resources.{cap.unit.key}.limit is not written: KAI reads 0; -1 is no limit",)
            )
            problems.append(
                Problem(
                    use.path,
                    f"KAI Queue {queue.name}{whose} never schedules {who}: {queue.name} quota has reached the "
                    f"allowable limit of {cap.unit.words}",
                    True,
                    (
                        f"Limit is {cap.unit.show(cap.limit)} {unit}, currently 0 {unit} allocated and workload "
                        f"requested {cap.unit.show(asked)} {unit}",
                        *unwritten,
                    ),
                )
            )
    return problems


# --------------------------------------------------------------------------- namespace quota


@dataclass(frozen=True)
class SiteCharge:
    """What each pod of one template is charged by one ResourceQuota, or why the quota refuses it outright."""

    path: Path  # the pod spec
    pods: int
    charged: dict[str, Fraction]
    missing: tuple[str, ...]  # `must specify` parts: a cpu/memory quota key the containers do not state


def quota_charges(obj: KubeObject, resolver: Resolver) -> list[tuple[Quota, list[SiteCharge]]]:
    """Per ResourceQuota of the object's namespace, the pod templates it covers and what their pods are charged
    (after the namespace's LimitRange defaults; a pod's claims from templates count toward device-class quotas)."""
    quotas = resolver.quotas(obj.ref.namespace)
    if not quotas:
        return []
    from gpulint.kube.queueing.namespace import (
        claim_charge,
        missing_for_quota,
        pod_charge,
        pod_limits,
        with_limit_ranges,
    )

    items = resolver.limit_items(obj.ref.namespace)
    default_priority = resolver.default_priority_class(obj.document.path)
    out: list[tuple[Quota, list[SiteCharge]]] = [(quota, []) for quota in quotas]
    for site in obj.facts.sites():
        spec, _ = with_limit_ranges(effective_pod_spec(obj.kind, site.spec), items)
        charged = pod_charge(spec, pod_requests(spec, obj.facts), pod_limits(spec))
        charged.update(claim_charge(_claim_templates(obj, site.spec, resolver)))  # one claim per pod per template
        for quota, sites in out:
            if quota.applies_to(spec, default_priority):
                sites.append(SiteCharge(site.path, site.pods or 0, charged, tuple(missing_for_quota(spec, quota))))
    return [(quota, sites) for quota, sites in out if sites]


def uncharging_quotas(obj: KubeObject, resolver: Resolver) -> list[tuple[Quota, str]]:
    """The namespace's scoped ResourceQuotas that charge none of the object's pods, and why: their scopes do
    not match the pods, or whether they do is not known (the class a pod without priorityClassName gets)."""
    quotas = [quota for quota in resolver.quotas(obj.ref.namespace) if quota.scopes]
    if not quotas:
        return []
    from gpulint.kube.queueing.namespace import with_limit_ranges

    items = resolver.limit_items(obj.ref.namespace)
    default_priority = resolver.default_priority_class(obj.document.path)
    specs = [with_limit_ranges(effective_pod_spec(obj.kind, site.spec), items)[0] for site in obj.facts.sites()]
    out = []
    for quota in quotas:
        answers = [quota.applies_to(spec, default_priority) for spec in specs]
        if specs and True not in answers:
            why = "not judged: the pods' PriorityClass is not known" if None in answers else "does not cover the pods"
            out.append((quota, why))
    return out


def _claim_templates(obj: KubeObject, spec: dict[str, Any], resolver: Resolver) -> list[ClaimSpec]:
    """The ResourceClaimTemplates the pod's claims are made from (each pod gets its own claims)."""
    out = []
    for entry in sequence(spec.get("resourceClaims")):
        name = entry.get("resourceClaimTemplateName") if isinstance(entry, dict) else None
        if isinstance(name, str):
            found = resolver.find_claim("ResourceClaimTemplate", obj.ref.namespace, name)
            if found is not None:
                from gpulint.kube.dra.allocation import claim_spec_of  # the DRA model: for DRA claims only

                out.append(claim_spec_of(found.data, "ResourceClaimTemplate"))
    return out
