"""KServe's runtime selection: the ServingRuntime an InferenceService's predictor gets when its model names none,
and the ClusterServingRuntimes each KServe release installs.

Sources, kserve/kserve: pkg/apis/serving/v1beta1/predictor_model.go (GetSupportingRuntimes: the namespace's
ServingRuntimes first, then the ClusterServingRuntimes, each list filtered - not disabled, not multiModel, a
supportedModelFormat with autoSelect whose name (and version, when the model gives one) is the model's, the
model's protocolVersion (v1 by default) among the runtime's protocolVersions (any when it lists none), a
workerSpec exactly when the predictor has one - and sorted by the format's priority, highest first, a runtime
with a priority before one without; ties keep the order of creationTimestamp, newest first, then the name);
pkg/controller/v1beta1/inferenceservice/components/predictor.go (the first runtime is used; none: "No runtime
found to support predictor with model type"). A tie decided by creationTimestamp is not known from files: no
runtime is chosen then.

The installed runtimes: config/runtimes/*.yaml and the Helm chart (charts/kserve-resources
templates/clusterservingruntimes.yaml v0.11-v0.16, charts/kserve-runtime-configs from v0.17) of v0.11.0 to
v0.20.0. kserve-huggingfaceserver's /dev/shm: no install of v0.11-v0.13 mounts one; from v0.14.0 the YAML
install's copy does (kserve#3910), while the chart of v0.14.0-v0.16.0 does only with
kserve.servingruntime.huggingfaceserver.devShm.enabled (false by default); from v0.17.0 the chart deep-merges
its values into the YAML install's runtimes (templates/runtimes/resources.yaml, kserve-common.deepMerge keeps
the volumeMounts and volumes the values do not replace), so every install mounts one (helm template of
v0.14.0-v0.20.0 checked). The table keeps the chart's defaults. Every runtime's
kserve-container requests and limits 1 CPU and 2Gi. The multi-node runtime (kserve-huggingfaceserver-multinode,
v0.15.0 on) is not in the table: a predictor with a workerSpec gets no built-in runtime here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text

CONTROLLER_IMAGE = "kserve/kserve-controller"  # config/manager/manager.yaml: tagged with the release
_RELEASE = re.compile(r"v?0\.(\d+)\.\d+")  # an exact release: a range or a branch says none
FIRST_RELEASE, LAST_RELEASE = 11, 20  # v0.<minor>: the releases the table holds
_RESOURCES = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
_PYTHON_ARGS = ("--model_name={{.Name}}", "--model_dir=/mnt/models", "--http_port=8080")


@dataclass(frozen=True)
class Format:
    name: str
    version: str | None
    priority: int | None  # None: no priority (releases before v0.12 gave none)


@dataclass(frozen=True)
class Era:
    """A runtime as the releases since ``since`` (a v0 minor) install it, until the next era."""

    since: int
    formats: tuple[Format, ...]  # those with autoSelect: true
    protocols: tuple[str, ...]


class Installed(dict[str, Any]):
    """A ClusterServingRuntime as a KServe release installs it (the table's), not one the files or the
    inventory hold."""


@dataclass(frozen=True)
class BuiltIn:
    name: str
    image: str
    args: tuple[str, ...]
    eras: tuple[Era, ...]  # oldest first; the runtime is not installed before the first
    command: tuple[str, ...] = ()
    # (from, every): from v0.<from> the YAML install mounts a memory-backed /dev/shm in it and the chart only when
    # its values say so; from v0.<every> every install does
    dev_shm_by_install: tuple[int, int] | None = None

    def era(self, minor: int) -> Era | None:
        return next((era for era in reversed(self.eras) if era.since <= minor), None)

    def runtime(self, minor: int) -> Installed | None:
        """The ClusterServingRuntime as release v0.<minor> installs it, None when it installs none."""
        era = self.era(minor)
        if era is None:
            return None
        container: dict[str, Any] = {"name": "kserve-container", "image": self.image, "resources": _RESOURCES}
        if self.command:
            container["command"] = list(self.command)
        if self.args:
            container["args"] = list(self.args)
        formats = [
            {"name": f.name, "autoSelect": True}
            | ({"version": f.version} if f.version is not None else {})
            | ({"priority": f.priority} if f.priority is not None else {})
            for f in era.formats
        ]
        spec = {"supportedModelFormats": formats, "protocolVersions": list(era.protocols), "containers": [container]}
        return Installed(
            {
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "ClusterServingRuntime",
                "metadata": {"name": self.name},
                "spec": spec,
            }
        )


def _f(name: str, version: str | None, priority: int | None) -> Format:
    return Format(name, version, priority)


def _each(versions: Iterable[tuple[str, str]], priority: int | None) -> tuple[Format, ...]:
    return tuple(_f(name, version, priority) for name, version in versions)


_TRITON = (("tensorrt", "8"), ("tensorflow", "1"), ("tensorflow", "2"), ("onnx", "1"), ("triton", "2"))
_MLSERVER_0 = (("sklearn", "0"), ("xgboost", "1"), ("lightgbm", "3"), ("mlflow", "1"))
_MLSERVER_12 = (
    *_each((("sklearn", "0"), ("sklearn", "1"), ("xgboost", "1"), ("lightgbm", "3")), 2),
    _f("mlflow", "1", 1),
)
_MLSERVER_14 = (
    *_each((("sklearn", "0"), ("sklearn", "1"), ("xgboost", "1"), ("xgboost", "2")), 2),
    *_each((("lightgbm", "3"), ("lightgbm", "4")), 2),
    *_each((("mlflow", "1"), ("mlflow", "2")), 1),
)
_V1, _V1V2 = ("v1",), ("v1", "v2")

BUILT_IN: tuple[BuiltIn, ...] = (
    BuiltIn(
        "kserve-huggingfaceserver",
        "kserve/huggingfaceserver",
        ("--model_name={{.Name}}",),
        (Era(12, (_f("huggingface", "1", 1),), ("v2", "v1")),),
        dev_shm_by_install=(14, 17),  # the YAML install's copy mounts one (kserve#3910); the chart's from v0.17
    ),
    BuiltIn(
        "kserve-tritonserver",
        "nvcr.io/nvidia/tritonserver",
        (
            "tritonserver",
            "--model-store=/mnt/models",
            "--grpc-port=9000",
            "--http-port=8080",
            "--allow-grpc=true",
            "--allow-http=true",
        ),
        (Era(11, _each(_TRITON, None), ("v2", "grpc-v2")), Era(12, _each(_TRITON, 1), ("v2", "grpc-v2"))),
    ),
    BuiltIn(
        "kserve-torchserve",
        "pytorch/torchserve-kfs",
        (
            "torchserve",
            "--start",
            "--model-store=/mnt/models/model-store",
            "--ts-config=/mnt/models/config/config.properties",
        ),
        (
            Era(11, (_f("pytorch", "1", None),), ("v1", "v2", "grpc-v1")),
            Era(12, (_f("pytorch", "1", 2),), ("v1", "v2", "grpc-v2")),
        ),
    ),
    BuiltIn(
        "kserve-tensorflow-serving",
        "tensorflow/serving",
        (
            "--model_name={{.Name}}",
            "--port=9000",
            "--rest_api_port=8080",
            "--model_base_path=/mnt/models",
            "--rest_api_timeout_in_ms=60000",
        ),
        (
            Era(11, _each((("tensorflow", "1"), ("tensorflow", "2")), None), ("v1", "grpc-v1")),
            Era(12, _each((("tensorflow", "1"), ("tensorflow", "2")), 2), ("v1", "grpc-v1")),
        ),
        command=("/usr/bin/tensorflow_model_server",),
    ),
    BuiltIn(
        "kserve-openvino",
        "openvino/model_server",
        (
            "--model_name={{.Name}}",
            "--model_path=/mnt/models",
            "--port=9000",
            "--rest_port=8080",
            "--file_system_poll_wait_seconds=0",
        ),
        (
            Era(
                17,
                (_f("openvino", "10", 1), _f("onnx", "1", 2), _f("tensorflow", "1", 3), _f("huggingface", None, None)),
                ("v1", "v2", "grpc-v2"),
            ),
        ),
    ),
    BuiltIn(
        "kserve-vllmserver",
        "kserve/vllmserver",
        ("--port=8080", "--served-model-name={{.Name}}", "--model=/mnt/models"),
        (Era(20, (_f("vLLM", "1", 1),), ()),),
        command=("python", "-m", "vllm.entrypoints.openai.api_server"),
    ),
    BuiltIn(
        "kserve-mlserver",
        "docker.io/seldonio/mlserver",
        (),
        (Era(11, _each(_MLSERVER_0, None), ("v2",)), Era(12, _MLSERVER_12, ("v2",)), Era(14, _MLSERVER_14, ("v2",))),
    ),
    BuiltIn(
        "kserve-sklearnserver",
        "kserve/sklearnserver",
        _PYTHON_ARGS,
        (Era(11, (_f("sklearn", "1", None),), _V1), Era(12, (_f("sklearn", "1", 1),), _V1V2)),
    ),
    BuiltIn(
        "kserve-xgbserver",
        "kserve/xgbserver",
        (*_PYTHON_ARGS, "--nthread=1"),
        (
            Era(11, (_f("xgboost", "1", None),), _V1),
            Era(12, (_f("xgboost", "1", 1),), _V1V2),
            Era(17, (_f("xgboost", "2", 1),), _V1V2),
        ),
    ),
    BuiltIn(
        "kserve-lgbserver",
        "kserve/lgbserver",
        (*_PYTHON_ARGS, "--nthread=1"),
        (
            Era(11, (_f("lightgbm", "3", None),), _V1),
            Era(12, (_f("lightgbm", "3", 1),), _V1V2),
            Era(17, (_f("lightgbm", "4", 1),), _V1V2),
        ),
    ),
    BuiltIn(
        "kserve-paddleserver",
        "kserve/paddleserver",
        _PYTHON_ARGS,
        (Era(11, (_f("paddle", "2", None),), _V1), Era(12, (_f("paddle", "2", 1),), _V1V2)),
    ),
    BuiltIn(
        "kserve-pmmlserver",
        "kserve/pmmlserver",
        _PYTHON_ARGS,
        (
            Era(11, _each((("pmml", "3"), ("pmml", "4")), None), _V1),
            Era(12, _each((("pmml", "3"), ("pmml", "4")), 1), _V1V2),
        ),
    ),
    BuiltIn(
        "kserve-autogluonserver",
        "kserve/autogluonserver",
        _PYTHON_ARGS,
        (Era(20, (_f("autogluon", "1", 1),), _V1V2),),
    ),
)


@dataclass(frozen=True)
class Choice:
    """The runtime KServe gives a predictor: ``runtime`` (None: none, or one the files cannot tell)."""

    runtime: dict[str, Any] | None
    ambiguous: bool = False  # several runtimes tie, and creationTimestamp decides among them


def _supports(model: dict[str, Any], spec: dict[str, Any], multinode: bool) -> bool:
    fmt = mapping(model.get("modelFormat"))
    name, version = text(fmt.get("name")), fmt.get("version")
    label = f"{name}:{version}" if isinstance(version, str) and version else name
    labels: set[str] = set()
    for supported in sequence(spec.get("supportedModelFormats")):
        supported = mapping(supported)
        if supported.get("autoSelect") is True:
            labels.add(text(supported.get("name")))
            if isinstance(supported.get("version"), str):
                labels.add(f"{text(supported.get('name'))}:{supported['version']}")
    protocol = text(model.get("protocolVersion")) or "v1"
    protocols = [text(p) for p in sequence(spec.get("protocolVersions"))]
    return (
        bool(name)
        and label in labels
        and spec.get("disabled") is not True
        and spec.get("multiModel") is not True
        and (not protocols or protocol in protocols)
        and isinstance(spec.get("workerSpec"), dict) == multinode
    )


def _priority(spec: dict[str, Any], name: str) -> int | None:
    for supported in sequence(spec.get("supportedModelFormats")):
        if text(mapping(supported).get("name")) == name:
            value = mapping(supported).get("priority")
            return value if isinstance(value, int) and not isinstance(value, bool) else None
    return None


def _first(model: dict[str, Any], runtimes: Sequence[dict[str, Any]], multinode: bool) -> Choice:
    name = text(dig(model, "modelFormat", "name"))
    found = [r for r in runtimes if _supports(model, mapping(r.get("spec")), multinode)]
    if not found:
        return Choice(None)
    ranked = sorted(found, key=lambda r: _rank(_priority(mapping(r.get("spec")), name)))
    top = [
        r
        for r in ranked
        if _rank(_priority(mapping(r.get("spec")), name)) == _rank(_priority(mapping(ranked[0].get("spec")), name))
    ]
    return Choice(ranked[0]) if len(top) == 1 else Choice(None, ambiguous=True)


def _rank(priority: int | None) -> tuple[int, int]:
    return (1, 0) if priority is None else (0, -priority)


def choose(
    model: dict[str, Any], namespaced: Sequence[dict[str, Any]], cluster: Sequence[dict[str, Any]], multinode: bool
) -> Choice:
    """GetSupportingRuntimes' first: the namespace's runtimes before the cluster's."""
    own = _first(model, namespaced, multinode)
    return own if own.runtime is not None or own.ambiguous else _first(model, cluster, multinode)


def choose_installed(
    model: dict[str, Any], namespaced: Sequence[dict[str, Any]], cluster: Sequence[dict[str, Any]], multinode: bool
) -> Choice:
    """The runtime KServe gives the predictor where the cluster's ClusterServingRuntimes are ``cluster`` and
    those a release installs (a runtime of the same name in ``cluster`` replaces the release's). The release
    is not known: chosen only when every release that has a runtime for the model chooses the same one."""
    names = {text(dig(r, "metadata", "name")) for r in cluster}
    chosen: list[dict[str, Any]] = []
    for minor in range(FIRST_RELEASE, LAST_RELEASE + 1):
        installed = [r for r in (b.runtime(minor) for b in BUILT_IN if b.name not in names) if r is not None]
        choice = choose(model, namespaced, [*cluster, *installed], multinode)
        if choice.ambiguous:
            return choice
        if choice.runtime is not None:
            chosen.append(choice.runtime)
    if not chosen or any(_pod_of(r) != _pod_of(chosen[0]) for r in chosen):
        return Choice(None, ambiguous=bool(chosen))
    return Choice(chosen[-1])


def _pod_of(runtime: dict[str, Any]) -> tuple[str, str]:
    """What of a runtime makes the predictor's pod: its name and its pod spec (not its formats)."""
    spec = {
        k: v for k, v in mapping(runtime.get("spec")).items() if k not in ("supportedModelFormats", "protocolVersions")
    }
    return text(dig(runtime, "metadata", "name")), repr(sorted(spec.items()))


@dataclass(frozen=True)
class KServeInstall:
    """A KServe install as far as the files show it: its release v0.<minor>, and when KServe's chart installs it,
    whether its values mount /dev/shm in kserve-huggingfaceserver (None: not the chart, or values not known)."""

    minor: int
    chart_dev_shm: bool | None = None


def dev_shm_depends_on_install(name: str) -> bool:
    """Whether the built-in runtime ``name`` has a /dev/shm in some release's install and none in another: then
    only the install decides it (``dev_shm_mounted``)."""
    found = next((b for b in BUILT_IN if b.name == name), None)
    return found is not None and found.dev_shm_by_install is not None


def dev_shm_mounted(name: str, install: KServeInstall) -> bool | None:
    """Whether that install's built-in runtime ``name`` mounts a memory-backed /dev/shm; None: not known (a
    release whose YAML install and chart differ, installed in a way the files do not say)."""
    found = next((b for b in BUILT_IN if b.name == name), None)
    if found is None or found.dev_shm_by_install is None:
        return False
    since, every = found.dev_shm_by_install
    if install.minor < since:
        return False
    if install.minor >= every:
        return True
    return install.chart_dev_shm


def release_minor(version: str) -> int | None:
    """v0.<minor> of an exact KServe release or chart version ("v0.14.0", "0.14.1"); None for anything else."""
    matched = _RELEASE.fullmatch(version)
    return int(matched.group(1)) if matched else None


def controller_releases(deployment: dict[str, Any]) -> list[int]:
    """The releases (v0.<minor>) of the KServe controller images a Deployment runs (none for another Deployment)."""
    pod = mapping(dig(deployment, "spec", "template", "spec"))
    found = []
    for container in map(mapping, sequence(pod.get("containers"))):
        name, _, tag = text(container.get("image")).partition("@")[0].rpartition(":")
        minor = release_minor(tag) if name.endswith(CONTROLLER_IMAGE) and "/" not in tag else None
        if minor is not None:
            found.append(minor)
    return found
