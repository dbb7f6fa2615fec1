"""Where each kind keeps its pod templates, and how many pods each template makes.

One table; adding a CRD is one entry. A path pattern is a tuple of mapping keys,
``"[]"`` (every item of a list) and ``"{}"`` (every value of a mapping).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from gpulint.kube import held_pods, jupyterhub, kserve, spark, trainjob
from gpulint.kube import pod_views as views
from gpulint.kube.crd_templates import SchemaBound, patterns_in_order
from gpulint.kube.fields import decimal, dig, integer, mapping, sequence, text
from gpulint.kube.refs import Path

PodCount = Callable[[dict[str, Any], dict[str, Any]], "int | None"]  # (object, owner) -> pods


def field_count(*factors: tuple[Path, int], absolute: bool = False) -> PodCount:
    """Pods = product of integer fields (each with its API default), read from the owner (or the object)."""

    def count(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
        total = 1
        for path, default in factors:
            value = integer(dig(obj if absolute else owner, *path), default)
            if value is None:
                return None
            total *= value
        return total

    return count


def _job_pods(job_spec: Any) -> int | None:
    """Pods a Job runs at once: parallelism (default 1), capped by completions when set."""
    parallelism = integer(dig(job_spec, "parallelism"), 1)
    completions = integer(dig(job_spec, "completions"), None)
    if parallelism is None:
        return None
    return min(parallelism, completions) if completions is not None else parallelism


def _constant(pods: int | None) -> PodCount:
    return lambda obj, owner: pods


NOTEBOOK_STOPPED = "kubeflow-resource-stopped"


def _notebook_pods(obj: dict[str, Any]) -> int:
    return 0 if NOTEBOOK_STOPPED in mapping(dig(obj, "metadata", "annotations")) else 1


def _lws_workers(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    # size counts the leader; without a leaderTemplate the leader uses the worker template.
    replicas = integer(dig(obj, "spec", "replicas"), 1)
    size = integer(dig(owner, "size"), 1)
    if replicas is None or size is None:
        return None
    has_leader_template = isinstance(owner.get("leaderTemplate"), dict)
    return replicas * (size - 1 if has_leader_template else size)


@dataclass(frozen=True)
class TemplateSite:
    owner: Path  # pattern of the element that owns the template (and its counts)
    spec: Path  # from the owner to the PodSpec
    pods: PodCount
    role: str = ""  # a name for the template ("worker", "leader"); "{}" keys name themselves
    view: views.ViewBuilder | None = None  # the pod a controller builds from it (pod_views); None: a PodSpec
    runs: bool = True  # False: a shape others read (a PodTemplate object); no container of it ever starts
    resources_from: str = ""  # the objects whose resources its containers take (a runtime's users)


@dataclass(frozen=True)
class PodSpecSite:
    """One pod spec inside an object."""

    path: Path  # from the object root to the PodSpec
    spec: dict[str, Any]
    pods: int | None  # how many pods this template makes (None: depends on the cluster)
    role: str
    template_path: Path  # from the object root to the element holding metadata (labels, annotations)
    # A controller-built pod (pod_views): where its fields were written, and what else supplies some
    # of them (then a field the object leaves out may still be set: absence proves nothing).
    aliases: views.Aliases = ()
    completed_by: str = ""
    faithful: bool = True  # a fix written for the pod applies to the object (see pod_views.PodView)
    unfaithful: tuple[Path, ...] = ()  # aliases whose fix would not apply (a field set in another object)
    names: tuple[tuple[Path, str], ...] = ()  # how messages name virtual places (a TrainJob's runtime part)
    runs: bool = True  # see TemplateSite.runs
    resources_from: str = ""  # see TemplateSite.resources_from: a resource it does not request may be given
    substituted: str = ""  # see pod_views.PodView.substituted
    dropped: str = ""  # see pod_views.PodView.dropped
    defaulted: tuple[str, ...] = ()  # see pod_views.PodView.defaulted


_DEPLOYMENT_LIKE = (TemplateSite(("spec",), ("template", "spec"), field_count((("replicas",), 1))),)
_REPLICA_SPECS = lambda field: (
    TemplateSite(("spec", field, "{}"), ("template", "spec"), field_count((("replicas",), 1))),
)
_RAY_CLUSTER = lambda prefix: (
    TemplateSite((*prefix, "headGroupSpec"), ("template", "spec"), _constant(1), "head"),
    TemplateSite(
        (*prefix, "workerGroupSpecs", "[]"),
        ("template", "spec"),
        field_count((("replicas",), 1), (("numOfHosts",), 1)),
        "worker",
    ),
)


def _knative_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """The revision's initial pods: min-scale (the autoscaler keeps at least that many), else 1."""
    annotations = mapping(dig(owner, "metadata", "annotations"))
    value = str(annotations.get("autoscaling.knative.dev/min-scale", "")).strip()
    return max(decimal(value) or 1, 1)


def _llm_workload_pods(obj: dict[str, Any], owner: dict[str, Any]) -> int | None:
    """replicas (default 1) without a worker; with one, a LeaderWorkerSet sized by the parallelism."""
    return integer(owner.get("replicas"), 1) if not isinstance(owner.get("worker"), dict) else None


_PRESETS = "the LLMInferenceServiceConfig presets (KServe merges their pod spec into this one)"
_LLM_MAIN = views.slotted((views.Slot(("containers",), "main", is_list=True),), lambda spec: _PRESETS)
_LLM_WORKER = views.slotted((views.Slot(("containers",), "main", is_list=True),), lambda spec: _PRESETS)
_LLM_INFERENCE_SERVICE = (
    TemplateSite(("spec",), ("template",), _llm_workload_pods, "decode", _LLM_MAIN),
    TemplateSite(("spec",), ("worker",), _constant(None), "decode worker", _LLM_WORKER),
    TemplateSite(("spec", "prefill"), ("template",), _llm_workload_pods, "prefill", _LLM_MAIN),
    TemplateSite(("spec", "prefill"), ("worker",), _constant(None), "prefill worker", _LLM_WORKER),
)
# A training runtime's JobSet template makes pods only for the TrainJobs that name it; the trainer's
# container takes each one's trainer.resourcesPerNode (kube/trainjob.py), and their pods are judged there.
_TRAINING_RUNTIME = (
    TemplateSite(
        ("spec", "template", "spec", "replicatedJobs", "[]"),
        ("template", "spec", "template", "spec"),
        _constant(0),
        resources_from="the TrainJobs that use it (trainer.resourcesPerNode)",
    ),
)
# A ServingRuntime makes no pods itself: its containers are completed by each InferenceService using it
# (the predictor's model resources are merged into kserve-container, kube/kserve.py).
_ISVCS = "the InferenceServices that use it (the predictor's resources)"
_SERVING_RUNTIME = (
    TemplateSite(("spec",), (), _constant(0), "runtime", kserve.KSERVE_CUSTOM, resources_from=_ISVCS),
    TemplateSite(
        ("spec",), ("workerSpec",), _constant(0), "runtime worker", kserve.KSERVE_RUNTIME_WORKER, resources_from=_ISVCS
    ),
)
# Knative names an unnamed container user-container (serving's DefaultUserContainerName).
_KNATIVE = (
    TemplateSite(
        ("spec", "template"),
        ("spec",),
        _knative_pods,
        "",
        views.slotted((views.Slot(("containers",), "user-container", is_list=True),)),
    ),
)
_SPARK = lambda prefix: (
    TemplateSite(prefix, ("driver",), _constant(1), "driver", spark.pod_view("driver")),
    TemplateSite(prefix, ("executor",), spark.executor_pods, "executor", spark.pod_view("executor")),
)
_ARGO = lambda prefix: (TemplateSite((*prefix, "templates", "[]"), (), _constant(1), "", views.argo_template),)

# (api group, kind) -> template sites. The group is the apiVersion without its version.
TEMPLATE_SITES: dict[tuple[str, str], tuple[TemplateSite, ...]] = {
    ("", "Pod"): (TemplateSite((), ("spec",), _constant(1)),),
    # No controller of Kubernetes makes pods from a PodTemplate object: the cluster autoscaler reads one a
    # ProvisioningRequest names as the shape of the capacity to provision (autoscaling.x-k8s.io podSets).
    ("", "PodTemplate"): (TemplateSite(("template",), ("spec",), _constant(0), runs=False),),
    ("", "ReplicationController"): _DEPLOYMENT_LIKE,
    ("apps", "Deployment"): _DEPLOYMENT_LIKE,
    ("apps", "ReplicaSet"): _DEPLOYMENT_LIKE,
    ("apps", "StatefulSet"): _DEPLOYMENT_LIKE,
    ("apps", "DaemonSet"): (TemplateSite(("spec",), ("template", "spec"), _constant(None)),),
    ("batch", "Job"): (TemplateSite(("spec",), ("template", "spec"), lambda obj, owner: _job_pods(owner)),),
    ("batch", "CronJob"): (
        TemplateSite(("spec", "jobTemplate", "spec"), ("template", "spec"), lambda obj, owner: _job_pods(owner)),
    ),
    ("jobset.x-k8s.io", "JobSet"): (
        TemplateSite(
            ("spec", "replicatedJobs", "[]"),
            ("template", "spec", "template", "spec"),
            lambda obj, owner: _mul(integer(dig(owner, "replicas"), 1), _job_pods(dig(owner, "template", "spec"))),
        ),
    ),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        TemplateSite(
            ("spec", "leaderWorkerTemplate"),
            ("leaderTemplate", "spec"),
            field_count((("spec", "replicas"), 1), absolute=True),
            "leader",
        ),
        TemplateSite(("spec", "leaderWorkerTemplate"), ("workerTemplate", "spec"), _lws_workers, "worker"),
    ),
    ("kubeflow.org", "PyTorchJob"): _REPLICA_SPECS("pytorchReplicaSpecs"),
    ("kubeflow.org", "TFJob"): _REPLICA_SPECS("tfReplicaSpecs"),
    ("kubeflow.org", "MPIJob"): _REPLICA_SPECS("mpiReplicaSpecs"),
    ("kubeflow.org", "XGBoostJob"): _REPLICA_SPECS("xgbReplicaSpecs"),
    ("kubeflow.org", "PaddleJob"): _REPLICA_SPECS("paddleReplicaSpecs"),
    ("kubeflow.org", "JAXJob"): _REPLICA_SPECS("jaxReplicaSpecs"),
    ("ray.io", "RayCluster"): _RAY_CLUSTER(("spec",)),
    ("ray.io", "RayJob"): (
        *_RAY_CLUSTER(("spec", "rayClusterSpec")),
        TemplateSite(("spec", "submitterPodTemplate"), ("spec",), _constant(1), "submitter"),
    ),
    ("ray.io", "RayService"): _RAY_CLUSTER(("spec", "rayClusterConfig")),
    ("batch.volcano.sh", "Job"): (
        TemplateSite(("spec", "tasks", "[]"), ("template", "spec"), field_count((("replicas",), 1))),
    ),
    # A Workload written as an object: a pod set's template and count (default 1), named by its name (kueue
    # v0.19.2 apis/kueue/v1beta1 and v1beta2 workload_types.go PodSet; both versions are served).
    ("kueue.x-k8s.io", "Workload"): (
        TemplateSite(("spec", "podSets", "[]"), ("template", "spec"), field_count((("count",), 1))),
    ),
    (trainjob.GROUP, "TrainingRuntime"): _TRAINING_RUNTIME,
    (trainjob.GROUP, "ClusterTrainingRuntime"): _TRAINING_RUNTIME,
    ("serving.knative.dev", "Service"): _KNATIVE,
    ("serving.knative.dev", "Configuration"): _KNATIVE,
    ("serving.kserve.io", "InferenceService"): (
        TemplateSite(("spec", "predictor"), (), kserve.kserve_predictor_pods, "predictor", kserve.KSERVE_PREDICTOR),
        TemplateSite(
            ("spec", "predictor"), ("workerSpec",), kserve.kserve_worker_pods, "predictor worker", kserve.worker_view
        ),
        TemplateSite(("spec", "transformer"), (), kserve.kserve_predictor_pods, "transformer", kserve.KSERVE_CUSTOM),
        TemplateSite(("spec", "explainer"), (), kserve.kserve_predictor_pods, "explainer", kserve.KSERVE_EXPLAINER),
    ),
    # KFServing's v1beta1 InferenceService (the group before KServe v0.7; no multi-node workerSpec)
    (kserve.KFSERVING_GROUP, "InferenceService"): (
        TemplateSite(("spec", "predictor"), (), kserve.kserve_predictor_pods, "predictor", kserve.KFSERVING_PREDICTOR),
        TemplateSite(("spec", "transformer"), (), kserve.kserve_predictor_pods, "transformer", kserve.KSERVE_CUSTOM),
        TemplateSite(("spec", "explainer"), (), kserve.kserve_predictor_pods, "explainer", kserve.KSERVE_EXPLAINER),
    ),
    ("serving.kserve.io", "ServingRuntime"): _SERVING_RUNTIME,
    ("serving.kserve.io", "ClusterServingRuntime"): _SERVING_RUNTIME,
    ("serving.kserve.io", "LLMInferenceService"): _LLM_INFERENCE_SERVICE,
    ("serving.kserve.io", "LLMInferenceServiceConfig"): _LLM_INFERENCE_SERVICE,
    ("argoproj.io", "Workflow"): _ARGO(("spec",)),
    ("argoproj.io", "WorkflowTemplate"): _ARGO(("spec",)),
    ("argoproj.io", "ClusterWorkflowTemplate"): _ARGO(("spec",)),
    ("argoproj.io", "CronWorkflow"): _ARGO(("spec", "workflowSpec")),
    ("apps.nvidia.com", "NIMService"): (
        TemplateSite(("spec",), (), views.nim_service_pods, "", views.nim_service_site("")),
        TemplateSite(("spec",), (), views.nim_service_pods, "leader", views.nim_service_site("leader")),
        TemplateSite(("spec",), (), views.nim_service_workers, "worker", views.nim_service_site("worker")),
    ),
    ("apps.nvidia.com", "NIMCache"): (TemplateSite(("spec",), (), _constant(1), "caching job", views.nim_cache),),
    # Kubeflow's notebook controller (kubeflow/kubeflow components/notebook-controller/controllers/
    # notebook_controller.go generateStatefulSet): a StatefulSet of the Notebook's name and its spec.template as is
    # (it adds the NB_PREFIX env, a default port and fsGroup, no resources), 1 replica, 0 while the Notebook carries
    # the annotation kubeflow-resource-stopped.
    ("kubeflow.org", "Notebook"): (
        TemplateSite(("spec",), ("template", "spec"), lambda obj, owner: _notebook_pods(obj)),
    ),
    # The Spark operator's driver and executor pods (kube/spark.py); a ScheduledSparkApplication runs its template.
    (spark.GROUP, "SparkApplication"): _SPARK(("spec",)),
    (spark.GROUP, "ScheduledSparkApplication"): _SPARK(("spec", "template")),
    ("production-stack.vllm.ai", "VLLMRuntime"): (
        TemplateSite(("spec",), (), views.vllm_runtime_pods, "", views.vllm_runtime),
    ),
}

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _mul(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def expand(data: Any, pattern: Path, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every concrete (path, value) matching ``pattern`` in ``data``."""
    if not pattern:
        yield prefix, data
        return
    step, rest = pattern[0], pattern[1:]
    if step == "[]":
        if isinstance(data, list):
            for index, item in enumerate(data):
                yield from expand(item, rest, (*prefix, index))
    elif step == "{}":
        if isinstance(data, dict):
            for key, value in data.items():
                yield from expand(value, rest, (*prefix, key))
    elif isinstance(data, dict) and step in data:
        yield from expand(data[step], rest, (*prefix, step))


_T = TypeVar("_T")


@dataclass(eq=False, slots=True)
class ObjectFacts:
    """What is worked out of one object once while the engine checks it, as the kube-scheduler's CycleState
    holds a pod's facts for one cycle: its pod templates, what ``fact`` and ``part`` are asked of it and of
    its parts (a container, a pod spec). The engine builds one per object it checks and hands it down with
    the object (``KubeObject.facts``); any other object gets ``ObjectFacts.afresh``, which keeps nothing.
    Nothing changes the object while its facts are kept."""

    data: dict[str, Any]
    keeps: bool = True
    _sites: tuple[PodSpecSite, ...] | None = None
    # Made on the first fact kept (most objects keep none of one kind or the other): one is built per object.
    # key -> (the inventory it was read against, value)
    _kept: dict[Hashable, tuple[object, object]] | None = None
    # (key, id(part), id(against)) -> (the part, against, value): both held, so their ids name no other value
    # while the facts are kept
    _parts: dict[tuple[Hashable, int, int], tuple[object, object, object]] | None = None

    @classmethod
    def afresh(cls, data: dict[str, Any]) -> ObjectFacts:
        """Facts of an object nobody is checking: each is worked out when asked, and not kept."""
        return cls(data, keeps=False)

    def sites(self) -> tuple[PodSpecSite, ...]:
        """The object's pod templates, in its order."""
        if self._sites is None:
            sites = tuple(_pod_spec_sites(self.data))
            if not self.keeps:
                return sites
            self._sites = sites
        return self._sites

    def fact(self, key: Hashable, against: object, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)``, done once per ``key`` as long as it is asked against the same ``against`` (an
        inventory). A function and its arguments, not a closure: the callers ask on every rule, and a
        closure made per call costs more than the lookup."""
        if not self.keeps:
            return work(*args)
        if self._kept is None:
            self._kept = {}
        kept = self._kept.get(key)
        if kept is not None and kept[0] is against:
            return kept[1]  # type: ignore[return-value]  # stored by this key's own work
        value = work(*args)
        self._kept[key] = (against, value)
        return value

    def part(self, part: object, key: Hashable, work: Callable[..., _T], *args: Any, against: object = None) -> _T:
        """``work(*args)`` for ``part`` of the object (a container, a pod spec), done once per ``key``: the
        runtime rules ask the same questions of each container (its GPUs, its command line). ``work`` reads
        only ``part``, what ``key`` names and ``against`` (an inventory)."""
        return part_fact(self, part, key, work, *args, against=against)


def pod_spec_sites(obj: dict[str, Any]) -> Iterator[PodSpecSite]:
    """The object's pod templates, found afresh (an object being checked has them in ``ObjectFacts.sites``)."""
    return _pod_spec_sites(obj)


def part_fact(
    facts: ObjectFacts | None, part: object, key: Hashable, work: Callable[..., _T], *args: Any, against: object = None
) -> _T:
    """``facts.part(...)``, or ``work(*args)`` for a part of no object being checked. The lookup is here, not
    in a call to ``facts.part``: the rules ask ~20 times per pod (30,000 times in a 5,000-document run), and a
    second call passing ``*args`` and ``against`` on cost more than the lookup (3.1 against 1.2 us a hit)."""
    if facts is None or not facts.keeps:
        return work(*args)
    parts = facts._parts
    if parts is None:
        parts = facts._parts = {}
    slot = (key, id(part), id(against))
    kept = parts.get(slot)
    if kept is not None and kept[0] is part and kept[1] is against:
        return kept[2]  # type: ignore[return-value]  # stored by this key's own work
    value = work(*args)
    parts[slot] = (part, against, value)
    return value


def _pod_spec_sites(obj: dict[str, Any]) -> Iterator[PodSpecSite]:
    if isinstance(obj, jupyterhub.JupyterHubValues):  # no object: the user pods KubeSpawner makes from it
        for hub_pod in jupyterhub.hub_pods(obj):
            made = hub_pod.view
            yield PodSpecSite(
                hub_pod.path,
                made.spec,
                None,
                hub_pod.role,
                hub_pod.path,
                made.aliases,
                made.completed_by,
                False,
                names=made.names,
            )
        return
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return
    if isinstance(obj, trainjob.BoundTrainJob):  # its runtime found: the pods the trainer controller builds
        for pod in trainjob.composed_pods(obj, obj.runtime):
            built = pod.view
            yield PodSpecSite(
                pod.path, built.spec, pod.pods, pod.role, pod.path, built.aliases, "", True, built.unfaithful, pod.names
            )
        return
    group = api_group(api_version)
    if (group, kind) in held_pods.HELD_IN:  # pod templates written as documents in its data (a ConfigMap's)
        for held in held_pods.held_pods(obj, group, kind):
            built = held.view
            yield PodSpecSite(
                held.path,
                built.spec,
                held.pods,
                held.role,
                held.template_path,
                built.aliases,
                built.completed_by,
                built.faithful,
                built.unfaithful,
                built.names,
            )
        return
    sites = TEMPLATE_SITES.get((group, kind))
    if sites is None:
        if isinstance(obj, SchemaBound):  # its CRD is known: the pods are where its schema says
            yield from _schema_sites(obj, kind)
        elif read_by_shape(api_version, kind):
            yield from _shaped_sites(obj, kind)
        return
    for site in sites:
        for owner_path, owner in expand(obj, site.owner):
            if not isinstance(owner, dict):
                continue
            for spec_path, spec in expand(owner, site.spec, owner_path):
                if not isinstance(spec, dict):
                    continue
                view = site.view(obj, owner_path, owner, spec_path, spec) if site.view is not None else None
                if site.view is not None and view is None:
                    continue  # no pod here (an Argo steps template, a predictor without containers)
                role = (
                    site.role
                    or (str(owner_path[-1]) if site.owner[-1:] == ("{}",) else "")
                    or str(owner.get("name") or owner.get("groupName") or "")
                )  # Volcano tasks, JobSet, Ray, Argo templates
                pods = site.pods(obj, owner)
                # A negative count is refused by the API server (schema-invalid says so): no pods.
                count = None if pods is None else max(pods, 0)
                template_path = spec_path[:-1] if site.spec else spec_path  # an Argo template holds its metadata
                if view is None:
                    yield PodSpecSite(
                        spec_path,
                        spec,
                        count,
                        role,
                        template_path,
                        runs=site.runs,
                        resources_from=site.resources_from,
                    )
                else:
                    yield PodSpecSite(
                        spec_path,
                        view.spec,
                        count,
                        role,
                        template_path,
                        view.aliases,
                        view.completed_by,
                        view.faithful,
                        view.unfaithful,
                        view.names,
                        substituted=view.substituted,
                        resources_from=site.resources_from,
                        dropped=view.dropped,
                        defaulted=view.defaulted,
                    )


# A custom resource with no row above (an Argo Rollout, a Kubeflow Notebook, AIBrix, llmaz...) still holds
# pod templates its controller turns into pods: found by their shape, a mapping whose `containers` is a list
# of containers with images. Bounded: the walk reads at most this deep and this many mappings and lists.
MAX_SHAPE_DEPTH = 12
MAX_SHAPE_NODES = 4096


# Kinds whose pods gpulint builds another way: a TrainJob's come from its runtime (trainjob.composed_pods).
MODELLED_ELSEWHERE = frozenset({(trainjob.GROUP, "TrainJob")})
# Policy engines' groups: a pod-shaped part of their objects is a pattern matched against other objects or an overlay
# merged into them, with the engine's own syntax in its keys (Kyverno's anchors `(key)`, `+(key)`, `=(key)` in
# `validate.pattern` and `mutate.patchStrategicMerge`; Gatekeeper's mutators), never a pod the API server receives.
POLICY_GROUPS = frozenset(
    {
        "kyverno.io",
        "policies.kyverno.io",
        "mutations.gatekeeper.sh",
        "templates.gatekeeper.sh",
        "constraints.gatekeeper.sh",
        "policies.kubewarden.io",
    }
)


def read_by_shape(api_version: str, kind: str) -> bool:
    """A custom resource's kind (its group has a dot, as every CRD's must) that gpulint has no model of, and whose
    group makes pods (not a policy engine's)."""
    group = api_group(api_version)
    return (
        "." in group
        and group not in POLICY_GROUPS
        and (group, kind) not in TEMPLATE_SITES
        and (group, kind) not in MODELLED_ELSEWHERE
    )


def _is_pod_spec(value: dict[str, Any]) -> bool:
    items = value.get("containers")
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(item, dict) for item in items)
        and any(isinstance(item.get("image"), str) for item in items)
    )


def _shaped_sites(obj: dict[str, Any], kind: str) -> Iterator[PodSpecSite]:
    """The pod specs under a custom resource's spec, found by their shape. How many pods each makes, and what
    the controller adds (volumes, a runtime class, sidecars), gpulint cannot know: ``completed_by`` says so, and
    the rules that need the whole pod or its count stay silent."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    completed_by = f"the {kind} controller (gpulint reads this custom resource's pod templates by their shape)"
    budget = [MAX_SHAPE_NODES]
    for path, found in _find_pod_specs(spec, ("spec",), budget):
        template_path = path[:-1] if path[-1] == "spec" and len(path) > 2 else path
        yield PodSpecSite(path, found, None, _shape_role(obj, path), template_path, completed_by=completed_by)


def _schema_sites(obj: SchemaBound, kind: str) -> Iterator[PodSpecSite]:
    """The pod specs of a custom resource whose CRD's schema is known (kube/crd_templates): each PodSpec the
    schema describes, and those found by shape where the schema keeps fields it does not describe. As by
    shape, the controller's additions and the pod count are unknown."""
    completed_by = f"the {kind} controller (gpulint reads this custom resource's pod templates from its CRD)"
    seen: set[Path] = set()
    budget = [MAX_SHAPE_NODES]
    for pattern, is_pod_spec in patterns_in_order(obj.templates):
        for path, value in expand(obj, pattern):
            if not isinstance(value, dict):
                continue
            found = [(path, value)] if is_pod_spec else _find_pod_specs(value, path, budget)
            for spec_path, spec in found:
                if spec_path in seen or not isinstance(spec.get("containers"), list):
                    continue
                seen.add(spec_path)
                template_path = spec_path[:-1] if spec_path[-1] == "spec" and len(spec_path) > 2 else spec_path
                role = _shape_role(obj, spec_path)
                yield PodSpecSite(spec_path, spec, None, role, template_path, completed_by=completed_by)


def _find_pod_specs(value: Any, path: Path, budget: list[int]) -> Iterator[tuple[Path, dict[str, Any]]]:
    budget[0] -= 1
    if budget[0] < 0 or len(path) > MAX_SHAPE_DEPTH:
        return
    if isinstance(value, dict):
        if _is_pod_spec(value):
            yield path, value  # a pod spec's own fields hold no further pod (its containers are not pods)
            return
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                yield from _find_pod_specs(item, (*path, key), budget)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                yield from _find_pod_specs(item, (*path, index), budget)


def _shape_role(obj: dict[str, Any], path: Path) -> str:
    """A name for a template found by shape: the nearest named list item or mapping key above it
    (``workerTemplate``, a group's ``name``), skipping the generic ``spec`` and ``template``."""
    for depth in range(len(path) - 1, 0, -1):
        step = path[depth]
        if isinstance(step, int):
            item = mapping(dig(obj, *path[: depth + 1]))
            named = item.get("name") or item.get("groupName")  # as the table's rows name Ray groups
            if isinstance(named, str) and named:
                return named
        elif step not in ("spec", "template", "podSpec", "podTemplate"):
            return str(step)
    return ""


@dataclass(frozen=True)
class Written:
    path: Path  # where the field was written in the object
    moved: bool  # it sits elsewhere than in the pod (a controller-built pod's field)
    faithful: bool  # in the same shape as in the pod (a fix for the pod's field applies there)


def written_path(sites: Iterable[PodSpecSite], path: Path) -> Written:
    """Where the field at ``path`` of a controller-built pod (of the object's ``sites``) was written in the
    object (``path`` itself for a plain pod template): a NIMService container's resources are its spec.resources."""
    for site in sites:
        for virtual, real in sorted(site.aliases, key=lambda alias: -len(alias[0])):
            if path[: len(virtual)] == virtual:
                return Written((*real, *path[len(virtual) :]), True, site.faithful and virtual not in site.unfaithful)
    return Written(path, False, True)


def template_metadata(data: dict[str, Any], site: PodSpecSite) -> dict[str, Any]:
    """The metadata of the pod template at ``site`` (for a Pod: the object's own)."""
    metadata = dig(data, *site.template_path, "metadata")
    return metadata if isinstance(metadata, dict) else {}  # mapping(), inline: asked by many rules


def containers(spec: dict[str, Any]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path relative to the pod spec, container) for every container, init and ephemeral included."""
    for list_name in CONTAINER_LISTS:
        items = spec.get(list_name)
        if isinstance(items, list):
            for index, container in enumerate(items):
                if isinstance(container, dict):
                    yield (list_name, index), container


@dataclass(frozen=True)
class ContainerResources:
    path: Path  # from the object root to the container's ``resources``
    container: str
    requests: dict[str, Any]
    limits: dict[str, Any]
    completed_by: str = ""  # the site's (PodSpecSite.completed_by)


def site_resources(site: PodSpecSite) -> Iterator[ContainerResources]:
    """The resources block of every container of the pod spec at ``site`` (gpu-non-integer,
    gpu-request-without-limit and gpu-resource-unknown read them, one pod template at a time)."""
    for container_path, container in containers(site.spec):
        resources = container.get("resources")
        if isinstance(resources, dict):
            yield ContainerResources(
                (*site.path, *container_path, "resources"),
                text(container.get("name")),
                mapping(resources.get("requests")),
                mapping(resources.get("limits")),
                site.completed_by,
            )


# Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util).
DAEMONSET_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
# ...and, to a pod on the host network, the one for a node whose network is not configured yet.
HOST_NETWORK_DAEMON_TOLERATION = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def effective_pod_spec(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The pod spec as the scheduler sees it (controller-added tolerations included)."""
    if kind != "DaemonSet":
        return spec
    tolerations = [t for t in sequence(spec.get("tolerations")) if isinstance(t, dict)]
    added = [*DAEMONSET_TOLERATIONS, *((HOST_NETWORK_DAEMON_TOLERATION,) if spec.get("hostNetwork") is True else ())]
    return {**spec, "tolerations": [*tolerations, *added]}


def extended_resource_path(site: PodSpecSite, names: frozenset[str] | None = None) -> Path | None:
    """Path to the first extended resource a container of ``site`` asks for (the limit, else the request)."""
    from gpulint.kube.resources import is_extended

    for container_path, container in containers(site.spec):
        resources = container.get("resources")
        if not isinstance(resources, dict):
            continue
        for section in ("limits", "requests"):
            values = resources.get(section)
            if isinstance(values, dict):
                for name in values:
                    if is_extended(name) and (names is None or name in names):
                        return (*site.path, *container_path, "resources", section, name)
    return None
