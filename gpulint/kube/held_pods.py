"""Pod specs held in configuration: a document in a ConfigMap's data that a program reads and makes pods from.

Such a document is a pod template that no controller of Kubernetes knows: the program that reads it merges it
with a pod of its own and creates that pod. One row per kind of holder, each with the code that reads it; a
holder is recognised by what its document says, never by a key's name alone (a ConfigMap's data is free text).
The paths of a held pod run through the string (``data.job-pod.yaml.spec``): LocatedDocument.locate places a
finding at its field's line and column inside the string (a ``|`` block, as these are written, or any other
style). gpulint does not edit the text a string holds, so a held pod's findings offer no fix.

Only a document the reader would take as a whole pod template is read. A document holding template statements
(``{% ... %}``) is not; a field holding a placeholder (``${GPUS}``, ``{{ .gpus }}``) is left out, and the pod
is then not all known (``completed_by``), as for an Argo template's parameters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.embedded import NotParsed, load_embedded
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.placeholders import HELD_FILL_IN
from gpulint.kube.pod_views import PodView
from gpulint.kube.refs import Path

_STATEMENT = "{%"  # a Jinja statement: the document's shape itself is still to come
PLACEHOLDERS = "the values of its placeholders (filled in before the program reads it)"


@dataclass(frozen=True)
class HeldPod:
    """One pod a holder's document makes: where its pod spec is (from the object's root, through the string),
    the element holding its metadata, how many pods, and the pod the reader builds."""

    path: Path
    template_path: Path
    role: str
    pods: int | None
    view: PodView


# (path of the document in the object, the document) -> the pod the reader builds from it, or None
Reader = Callable[[Path, dict[str, Any]], "HeldPod | None"]


@dataclass(frozen=True)
class Holder:
    """A kind of document that holds a pod template, and the program that reads it."""

    name: str  # as messages and docs name it
    source: str  # the upstream code that reads it (file and release)
    markers: tuple[str, ...]  # text every such document holds (a cheap test before it is parsed)
    read: Reader
    shape: re.Pattern[str] | None = None  # a finer test of the text than the markers, before it is parsed


# ------------------------------------------------------------------------- ARC runner container hooks

# actions/runner-container-hooks v0.8.1, packages/k8s: readExtensionFromFile (src/k8s/utils.ts) reads the file
# ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE names as a V1PodTemplateSpec; createJobPod (src/k8s/index.ts) builds the
# workflow job's pod and mergePodSpecWithOptions merges the template's spec into it: containers whose name starts
# with "$" are left out (they extend the hook's own), the others appended; volumes appended; every other field
# replaces the hook's. createContainerSpec (src/hooks/prepare-job.ts) merges the container "$job" into the job
# container (mergeContainerWithOptions: name and image kept, env, volumeMounts and ports appended, every other
# field replaced) and "$<service>" into a service container of the workflow's.
ARC_PREFIX = "$"
ARC_JOB = "$job"
# A container named with ARC_PREFIX, as YAML or JSON writes the key (`- name: $job`, `"name": "$redis"`): a
# script holding a "$" and "containers" is no hook template and is not parsed.
ARC_EXTENSION_NAME = re.compile(r"""\bname["']?\s*:\s*["']?\$""")
# src/hooks/constants.ts: the job container's volumes (CONTAINER_VOLUMES), emptyDirs of the pod (createJobPod)
ARC_MOUNTS = (
    {"name": "externals", "mountPath": "/__e"},
    {"name": "work", "mountPath": "/__w"},
    {"name": "github", "mountPath": "/github"},
)
ARC_VOLUMES = tuple({"name": mount["name"], "emptyDir": {}} for mount in ARC_MOUNTS)
ARC_HOOK = "ARC runner container hook template"


def _arc_hook(path: Path, document: dict[str, Any]) -> HeldPod | None:
    spec = document.get("spec")
    if not isinstance(spec, dict):
        return None
    listed = sequence(spec.get("containers"))
    named = [(index, c, text(c.get("name"))) for index, c in enumerate(listed) if isinstance(c, dict)]
    if not any(name.startswith(ARC_PREFIX) for _, _, name in named):
        return None  # no container the hook merges: nothing says the runner reads it
    spec_path = (*path, "spec")
    containers: list[dict[str, Any]] = []
    aliases: list[tuple[Path, Path]] = [(spec_path, spec_path)]  # written as in the pod, in a string: no fix
    job = next(((index, c) for index, c, name in named if name == ARC_JOB), None)
    own_mounts = sequence(job[1].get("volumeMounts")) if job is not None else []
    job_container = {**(job[1] if job is not None else {"name": ARC_JOB}), "volumeMounts": [*own_mounts, *ARC_MOUNTS]}
    job_container.pop("image", None)  # the workflow's `container: image:` (the template's is ignored)
    containers.append(job_container)
    if job is not None:
        aliases.append(((*spec_path, "containers", 0), (*spec_path, "containers", job[0])))
    for index, container, name in named:
        if not name.startswith(ARC_PREFIX):
            aliases.append(((*spec_path, "containers", len(containers)), (*spec_path, "containers", index)))
            containers.append(container)
    view = {
        **spec,
        "containers": containers,
        "volumes": [*sequence(spec.get("volumes")), *ARC_VOLUMES],
        "restartPolicy": spec.get("restartPolicy", "Never"),
    }
    # A "$<service>" container joins the pod only with a service the workflow declares: the pod without it is
    # the least the workflow's pod holds.
    return HeldPod(spec_path, path, "workflow job", 1, PodView(view, tuple(aliases), faithful=False))


# ------------------------------------------------------------------ whole Pods read as a base pod

# A program that starts from a whole Pod it reads from a file and sets the rest of each pod itself: the fields it
# sets are not known here, and the pod is not all known (its own additions: completed_by).
# Airflow's KubernetesExecutor (apache-airflow-providers-cncf-kubernetes pod_generator.py PodGenerator
# construct_pod): the pod_template_file's pod, its first container merged with the worker container "base" (image,
# args, env), then each task's executor_config pod_override.
AIRFLOW_CONTAINER = "base"
AIRFLOW = "each task's pod_override (Airflow's KubernetesExecutor sets the image and command and merges it)"
# Spark on Kubernetes (apache/spark resource-managers/kubernetes BasicDriverFeatureStep, BasicExecutorFeatureStep;
# docs/running-on-kubernetes.md "Pod Template"): spark.kubernetes.{driver,executor}.podTemplateFile's pod, its
# Spark container (named so by default, Constants.scala DEFAULT_DRIVER_CONTAINER_NAME) given the image, command,
# CPU, memory and the GPUs spark.*.resource.gpu.amount asks for.
SPARK_CONTAINERS = {"spark-kubernetes-driver": "Spark driver", "spark-kubernetes-executor": "Spark executor"}
SPARK = "Spark (the image, command, CPU, memory and GPU amounts of its configuration)"
# Flink's native Kubernetes mode (apache/flink flink-kubernetes KubernetesUtils.loadPodFromTemplateFile, Constants
# MAIN_CONTAINER_NAME): kubernetes.pod-template-file.{default,jobmanager,taskmanager}'s pod, its container
# "flink-main-container" given the image, command, CPU, memory and external resources (GPUs) of the configuration.
FLINK_CONTAINER = "flink-main-container"
FLINK = "Flink (the image, command, CPU, memory and external resources of its configuration)"


def _whole_pod(reader: Callable[[list[Any]], tuple[str, str] | None]) -> Reader:
    """A whole Pod (``kind: Pod``) whose containers ``reader`` takes for its own: (role, what completes it)."""

    def read(path: Path, document: dict[str, Any]) -> HeldPod | None:
        spec = document.get("spec")
        if document.get("kind") != "Pod" or not isinstance(spec, dict):
            return None
        found = reader(sequence(spec.get("containers")))
        if found is None:
            return None
        spec_path = (*path, "spec")
        view = PodView(spec, ((spec_path, spec_path),), found[1], faithful=False)
        return HeldPod(spec_path, path, found[0], None, view)

    return read


def _airflow(containers: list[Any]) -> tuple[str, str] | None:
    first = containers[0] if containers else None
    return ("Airflow task", AIRFLOW) if text(mapping(first).get("name")) == AIRFLOW_CONTAINER else None


def _spark(containers: list[Any]) -> tuple[str, str] | None:
    roles = [SPARK_CONTAINERS[name] for c in containers if (name := text(mapping(c).get("name"))) in SPARK_CONTAINERS]
    return (roles[0], SPARK) if roles else None


def _flink(containers: list[Any]) -> tuple[str, str] | None:
    named = any(text(mapping(c).get("name")) == FLINK_CONTAINER for c in containers)
    return ("Flink JobManager or TaskManager", FLINK) if named else None


# Flink's configuration names its pod templates by path (apache/flink release-1.20 flink-kubernetes
# KubernetesConfigOptions: KUBERNETES_POD_TEMPLATE "kubernetes.pod-template-file.default", deprecated key
# "kubernetes.pod-template-file"; JOB_MANAGER_POD_TEMPLATE and TASK_MANAGER_POD_TEMPLATE fall back to it). A
# ConfigMap holding the configuration (flink-conf.yaml; config.yaml, standard YAML, from Flink 1.19) is mounted
# as the conf directory, so a path whose file is another key of the same ConfigMap names that key's document,
# read as the pod (KubernetesUtils.loadPodFromTemplateFile), with or without flink-main-container (Flink then
# makes the main container itself).
FLINK_CONFIGS = ("flink-conf.yaml", "config.yaml")
FLINK_JM, FLINK_TM = "Flink JobManager", "Flink TaskManager"
FLINK_TEMPLATE_KEYS = {
    FLINK_JM: (
        "kubernetes.pod-template-file.jobmanager",
        "kubernetes.pod-template-file.default",
        "kubernetes.pod-template-file",
    ),
    FLINK_TM: (
        "kubernetes.pod-template-file.taskmanager",
        "kubernetes.pod-template-file.default",
        "kubernetes.pod-template-file",
    ),
}
# The Flink Kubernetes operator's default configuration (its flink-operator-config ConfigMap, mounted as the
# operator's conf directory) holds its own options. apache/flink-kubernetes-operator release-1.15.0
# FlinkConfigBuilder.applyPodTemplate: a FlinkDeployment's own podTemplate replaces both templates, and the
# JobManager's is always replaced while the startup probe is enabled (its default); the TaskManager's of a
# FlinkDeployment with no podTemplate (and no ephemeral storage) is the configuration's.
FLINK_MARKER = "pod-template-file"
FLINK_OPERATOR_PREFIX = "kubernetes.operator."
FLINK_OPERATOR_PROBE = "kubernetes.operator.jm-deployment.startup.probe.enabled"
FLINK_OPERATOR_TM = "Flink TaskManager (of each FlinkDeployment without a podTemplate of its own)"
FLINK_CONFIGURED = "Flink pod template named by its configuration (kubernetes.pod-template-file)"
FLINK_CONFIGURED_SOURCE = (
    "apache/flink release-1.20 flink-kubernetes (KubernetesConfigOptions.KUBERNETES_POD_TEMPLATE, "
    "KubernetesUtils.loadPodFromTemplateFile); apache/flink-kubernetes-operator release-1.15.0 "
    "(FlinkConfigBuilder.applyPodTemplate)"
)
MAX_FLINK_DEPTH = 8  # config.yaml nests keys by their dots: kubernetes.pod-template-file.default is 3 deep


def flink_templates(data: dict[str, Any]) -> dict[str, str]:
    """The keys of a ConfigMap's ``data`` that its Flink configuration names as pod templates -> the role of
    the pods made from each ("Flink JobManager and TaskManager" when both are)."""
    options: dict[str, str] = {}
    for name in FLINK_CONFIGS:
        written = data.get(name)
        if isinstance(written, str) and FLINK_MARKER in written:  # parsed only when it names a template
            options.update(_flink_options(written))
    if not options:
        return {}
    operator = any(option.startswith(FLINK_OPERATOR_PREFIX) for option in options)
    roles: dict[str, list[str]] = {}
    for role, keys in FLINK_TEMPLATE_KEYS.items():
        if operator and role == FLINK_JM and options.get(FLINK_OPERATOR_PROBE, "true").lower() != "false":
            continue  # the operator writes the JobManager's template itself
        path = next((options[key] for key in keys if options.get(key)), "")
        held = path.rstrip("/").rpartition("/")[2]
        if held and isinstance(data.get(held), str) and held not in FLINK_CONFIGS:
            roles.setdefault(held, []).append(FLINK_OPERATOR_TM if operator and role == FLINK_TM else role)
    both = f"{FLINK_JM} and TaskManager"
    return {key: named[0] if len(named) == 1 else both for key, named in roles.items()}


def _flink_options(document: str) -> dict[str, str]:
    """Flink's options as ``key: value`` (config.yaml may nest them by their dots; flink-conf.yaml is read a
    line at a time, ``key: value``, by Flink's own parser before 1.19)."""
    parsed = load_embedded(document)
    if isinstance(parsed, dict):
        return dict(_flattened(parsed, "", 0))
    options: dict[str, str] = {}
    for line in document.splitlines():
        key, colon, value = line.partition(": ")
        if colon and not key.lstrip().startswith("#"):
            options[key.strip()] = value.split(" #", 1)[0].strip().strip("'\"")
    return options


def _flattened(value: dict[str, Any], prefix: str, depth: int) -> Iterator[tuple[str, str]]:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and depth < MAX_FLINK_DEPTH:
            yield from _flattened(item, f"{name}.", depth + 1)
        elif isinstance(item, bool):
            yield name, str(item).lower()
        elif isinstance(item, (str, int, float)):
            yield name, str(item)


def _flink_configured(role: str) -> Reader:
    """A pod template Flink's configuration names: the pod's spec, whatever containers it lists."""

    def read(path: Path, document: dict[str, Any]) -> HeldPod | None:
        spec = document.get("spec")
        if document.get("kind", "Pod") != "Pod" or not isinstance(spec, dict):
            return None
        spec_path = (*path, "spec")
        return HeldPod(spec_path, path, role, None, PodView(spec, ((spec_path, spec_path),), FLINK, faithful=False))

    return read


HOLDERS: tuple[Holder, ...] = (
    Holder(
        ARC_HOOK,
        "actions/runner-container-hooks v0.8.1 packages/k8s (utils.ts readExtensionFromFile, "
        "mergePodSpecWithOptions; prepare-job.ts createContainerSpec)",
        (ARC_PREFIX, "containers"),
        _arc_hook,
        ARC_EXTENSION_NAME,
    ),
    Holder(
        "Airflow KubernetesExecutor pod_template_file",
        "apache-airflow-providers-cncf-kubernetes pod_generator.py (PodGenerator.construct_pod, reconcile_pods)",
        ("Pod", AIRFLOW_CONTAINER),
        _whole_pod(_airflow),
    ),
    Holder(
        "Spark pod template (spark.kubernetes.driver/executor.podTemplateFile)",
        "apache/spark resource-managers/kubernetes (KubernetesDriverBuilder, KubernetesExecutorBuilder, "
        "BasicDriverFeatureStep, BasicExecutorFeatureStep)",
        ("Pod", "spark-kubernetes-"),
        _whole_pod(_spark),
    ),
    Holder(
        "Flink pod template (kubernetes.pod-template-file)",
        "apache/flink flink-kubernetes (KubernetesUtils.loadPodFromTemplateFile, Constants.MAIN_CONTAINER_NAME)",
        ("Pod", FLINK_CONTAINER),
        _whole_pod(_flink),
    ),
)

# Where each kind keeps the documents a program reads: (api group, kind) -> the field whose values are documents
HELD_IN: dict[tuple[str, str], Path] = {("", "ConfigMap"): ("data",)}


def held_pods(obj: dict[str, Any], group: str, kind: str) -> Iterator[HeldPod]:
    """The pods the documents of ``obj`` (a ConfigMap's data) make, in the order of its keys."""
    field = HELD_IN.get((group, kind))
    if field is None:
        return
    data = mapping(dig(obj, *field))
    configured = flink_templates(data)
    for key, value in data.items():
        if not isinstance(value, str) or _STATEMENT in value:
            continue
        holders = [
            h for h in HOLDERS if all(m in value for m in h.markers) and (h.shape is None or h.shape.search(value))
        ]
        if key in configured:  # named by the configuration beside it: what it is, whatever it holds
            holders = [Holder(FLINK_CONFIGURED, FLINK_CONFIGURED_SOURCE, (), _flink_configured(configured[key]))]
        if not holders:
            continue
        document = load_embedded(value)
        if isinstance(document, NotParsed) or not isinstance(document, dict):
            continue
        known = _without_placeholders(document)
        for holder in holders:
            pod = holder.read((*field, key), known)
            if pod is None:
                continue
            if known != document and not pod.view.completed_by:
                pod = HeldPod(
                    pod.path,
                    pod.template_path,
                    pod.role,
                    pod.pods,
                    PodView(pod.view.spec, pod.view.aliases, PLACEHOLDERS, faithful=pod.view.faithful),
                )
            yield pod
            break  # one reader per document


def _without_placeholders(value: Any) -> Any:
    """The document without the fields whose key or value holds a placeholder (list items stay, in place, so
    that paths into the document still hold)."""
    if isinstance(value, dict):
        return {
            k: _without_placeholders(v)
            for k, v in value.items()
            if not (isinstance(k, str) and HELD_FILL_IN.search(k))
            and not (isinstance(v, str) and HELD_FILL_IN.search(v))
        }
    if isinstance(value, list):
        return [_without_placeholders(item) for item in value]
    return value
