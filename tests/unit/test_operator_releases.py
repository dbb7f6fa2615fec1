"""Kueue's and Knative Serving's releases read wherever a repository or a cluster pins them (one walker,
lint/world/chart_releases.operator_installs), and the checks that differ by release: Kueue's worker-group limit
on a queued RayJob (kubernetes-sigs/kueue#780: 7 before v0.18, 9 in v0.18, 17 since v0.19) and the mount paths
Knative Serving reserved before v1.13 (knative/serving#14686, fixed by #14719). Through the gpulint CLI on files laid
out as repositories and inventories lay them out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.kube.knative import serving_releases
from gpulint.kube.operators.kueue import POD_SET_LIMITS, controller_releases, worker_group_limit
from gpulint.kube.releases import all_before

_GROUP = (
    "    - {groupName: stage%d, replicas: 1, rayStartParams: {}, template: {spec: {containers: [{name: worker, "
    "image: 'rayproject/ray:2.41.0-gpu', resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n"
)
RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: mm-batch-0612
  namespace: data-pipelines
  labels: {kueue.x-k8s.io/queue-name: pipelines}
spec:
  entrypoint: python /app/pipeline.py
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
      template:
        spec:
          containers:
          - {name: ray-head, image: rayproject/ray-ml:2.23.0-py310-gpu}
    workerGroupSpecs:
"""
# config/components/manager and charts/kueue: the controller Deployment, image registry.k8s.io/kueue/kueue:<release>
KUEUE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: kueue-controller-manager, namespace: kueue-system}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      containers:
      - name: manager
        image: registry.k8s.io/kueue/kueue:%s
"""
# An Argo CD Application of the kueue chart, as the Kueue docs' helm install (oci://registry.k8s.io/kueue/charts)
ARGO = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: kueue, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: kueue-system}
  source:
    repoURL: registry.k8s.io/kueue/charts
    chart: kueue
    targetRevision: %s
"""
HELMFILE = """\
repositories:
  - {name: kueue, url: registry.k8s.io/kueue/charts, oci: true}
releases:
  - name: kueue
    namespace: kueue-system
    chart: kueue/kueue
    version: %s
    values:
      - enablePrometheus: true
"""


def _rayjob(groups: int) -> str:
    return RAYJOB + "".join(_GROUP % i for i in range(groups))


def _findings(*args: str) -> list[dict[str, object]]:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1, 2), run.stderr
    found: list[dict[str, object]] = json.loads(run.stdout)["findings"]
    return found


def _group_limits(*args: str) -> list[str]:
    return [
        f"{f['severity']} {str(f['message']).rpartition(': ')[2]}"
        for f in _findings(*args)
        if f["rule"] == "operator-rejected" and "workerGroupSpecs: Too many" in str(f["message"])
    ]


@pytest.mark.parametrize(
    ("version", "groups", "expected"),
    [
        ("0.17.0", 8, ["error must have at most 7 items"]),
        ("0.17.0", 7, []),
        ("v0.18.2", 10, ["error must have at most 9 items"]),
        ("0.18.2", 9, []),
        ("0.19.1", 8, []),
        ("0.19.1", 18, ["error must have at most 18 items"]),
        ("0.1.0", 8, ["error must have at most 7 items"]),  # the chart's version before v0.13
    ],
)
def test_argo_application_of_the_kueue_chart(tmp_path: Path, version: str, groups: int, expected: list[str]) -> None:
    (tmp_path / "kueue.yaml").write_text(ARGO % version)
    (tmp_path / "rayjob.yaml").write_text(_rayjob(groups))
    assert _group_limits(str(tmp_path)) == expected


@pytest.mark.parametrize(("version", "expected"), [("0.16.4", ["error must have at most 7 items"]), ("0.19.0", [])])
def test_helmfile_release_of_the_kueue_chart(tmp_path: Path, version: str, expected: list[str]) -> None:
    (tmp_path / "helmfile.yaml").write_text(HELMFILE % version)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "rayjob.yaml").write_text(_rayjob(8))
    assert _group_limits(str(tmp_path / "helmfile.yaml"), str(tmp_path / "jobs")) == expected


def test_the_inventory_s_controller_decides_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "rayjob.yaml").write_text(_rayjob(8))
    (tmp_path / "cluster.yaml").write_text(KUEUE % "v0.17.4")
    found = [
        f
        for f in _findings(str(tmp_path / "rayjob.yaml"), "--inventory", str(tmp_path / "cluster.yaml"))
        if f["rule"] == "operator-rejected"
    ]
    assert [f["severity"] for f in found] == ["error"]
    assert "v0.17.4 (Deployment kueue-system/kueue-controller-manager of the inventory)" in str(found[0]["notes"])


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ((KUEUE % "v0.17.4", KUEUE.replace("kueue-system", "kueue-b") % "v0.19.2"), []),  # two clusters disagree
        ((KUEUE % "main",), []),  # a branch names no release
        ((KUEUE % "v0.17.4", KUEUE.replace("kueue-system", "kueue-b") % "latest"), []),  # one not known
        ((), []),  # none found
    ],
)
def test_disagreeing_or_unknown_releases_keep_v0_19_s_limit(
    tmp_path: Path, files: tuple[str, ...], expected: list[str]
) -> None:
    for i, text in enumerate(files):
        (tmp_path / f"kueue-{i}.yaml").write_text(text)
    (tmp_path / "rayjob.yaml").write_text(_rayjob(8))
    assert _group_limits(str(tmp_path)) == expected


def test_worker_group_limit_per_release() -> None:
    assert worker_group_limit(("v0.9.1",)) == ((0, 0), 7, False)
    assert worker_group_limit(("v0.18.0",)) == ((0, 18), 9, False)
    assert worker_group_limit(("v0.17.2", "v0.18.6")) == ((0, 18), 9, False)  # the newest's
    assert worker_group_limit(("v0.17.2", "${KUEUE_VERSION}")) == POD_SET_LIMITS[-1]
    assert worker_group_limit(()) == POD_SET_LIMITS[-1]
    assert controller_releases(
        {"spec": {"template": {"spec": {"containers": [{"image": "registry.k8s.io/kueue/kueue:v0.13.4@sha256:ab"}]}}}}
    ) == ["v0.13.4"]


# knative/serving config/core/deployments/controller.yaml as the release YAML has it (the version label set, the
# image by digest)
SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller
  namespace: knative-serving
  labels: {app.kubernetes.io/component: controller, app.kubernetes.io/name: knative-serving, app.kubernetes.io/version: "%s"}
spec:
  selector: {matchLabels: {app: controller}}
  template:
    metadata: {labels: {app: controller}}
    spec:
      containers:
      - name: controller
        image: %s
"""
RELEASED = "gcr.io/knative-releases/knative.dev/serving/cmd/controller@sha256:5f3d8c0b5d8a2c1b4b3f"
KSVC = """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: whisper-large, namespace: speech}
spec:
  template:
    spec:
      containers:
      - name: whisper
        image: registry.example.com/speech/whisper-server:3.1
        ports: [{containerPort: 9000}]
        resources: {limits: {nvidia.com/gpu: "1"}}
        volumeMounts: [{name: scratch, mountPath: /tmp}]
      volumes: [{name: scratch, emptyDir: {}}]
"""
OPERATOR_CR = """\
apiVersion: operator.knative.dev/v1beta1
kind: KnativeServing
metadata: {name: knative-serving, namespace: knative-serving}
spec: {version: "%s"}
"""


def _reserved_tmp(*args: str) -> list[str]:
    return [
        str(f["severity"])
        for f in _findings(*args)
        if f["rule"] == "knative-field-disallowed" and '"/tmp" is a reserved path' in str(f["message"])
    ]


@pytest.mark.parametrize(
    ("inventory", "files", "expected"),
    [
        (SERVING % ("1.12.3", RELEASED), "", ["error"]),
        (SERVING % ("1.13.0", RELEASED), "", []),
        (SERVING % ("1.12.3", RELEASED), OPERATOR_CR % "1.14", ["info"]),  # the inventory and the files disagree
        (SERVING % ("devel", "ko://knative.dev/serving/cmd/controller"), "", []),  # the source tree: not known
        ("", OPERATOR_CR % "1.11", ["error"]),
        ("", OPERATOR_CR % "1.11" + "---\n" + OPERATOR_CR.replace("knative-serving}", "serving-b}") % "", ["info"]),
    ],
)
def test_knative_reserved_tmp_by_release(tmp_path: Path, inventory: str, files: str, expected: list[str]) -> None:
    (tmp_path / "service.yaml").write_text(KSVC + ("---\n" + files if files else ""))
    args = [str(tmp_path / "service.yaml")]
    if inventory:
        (tmp_path / "cluster.yaml").write_text(inventory)
        args += ["--inventory", str(tmp_path / "cluster.yaml")]
    assert _reserved_tmp(*args) == expected


def test_serving_release_readers() -> None:
    tagged = {
        "spec": {
            "template": {
                "spec": {"containers": [{"image": "mirror.example/knative.dev/serving/cmd/activator:v1.10.2"}]}
            }
        }
    }
    assert serving_releases(tagged) == ["v1.10.2"]
    other = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"image": "gcr.io/knative-releases/knative.dev/eventing/cmd/controller:v1.10.2"}]
                }
            }
        }
    }
    assert serving_releases(other) == []
    assert all_before(["1.12.3", "v1.9"], (1, 13)) is True
    assert all_before(["1.12.3", "1.13.0"], (1, 13)) is None
    assert all_before(["1.13.0"], (1, 13)) is False
    assert all_before([], (1, 13)) is None


# ray-project/kuberay helm-chart/kuberay-operator: the operator Deployment, image quay.io/kuberay/operator:<release>
KUBERAY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: kuberay-operator, namespace: ray-system}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: kuberay-operator}}
  template:
    metadata: {labels: {app.kubernetes.io/name: kuberay-operator}}
    spec:
      containers:
      - name: kuberay-operator
        image: quay.io/kuberay/operator:%s
"""
RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: llm-serving, namespace: ray}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: ray-head, image: rayproject/ray:2.41.0}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 4
    minReplicas: 4
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.41.0-gpu
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _kuberay_refusals(root: Path) -> list[str]:
    return [
        str(f["message"]).partition("refuses this RayCluster: ")[2]
        for f in _findings(str(root))
        if f["rule"] == "operator-rejected" and "KubeRay" in str(f["message"])
    ]


@pytest.mark.parametrize(
    ("operators", "expected"),
    [
        (("v1.6.0",), ["worker group gpu has minReplicas 4 greater than maxReplicas 2"]),
        (("v1.5.1",), []),  # v1.5 ran maxReplicas workers: no refusal
        (("v1.5.1", "v1.6.0"), ["worker group gpu has minReplicas 4 greater than maxReplicas 2"]),  # one refuses
        (("latest",), ["worker group gpu has minReplicas 4 greater than maxReplicas 2"]),  # not known
        ((), ["worker group gpu has minReplicas 4 greater than maxReplicas 2"]),  # none found
    ],
)
def test_kuberay_replica_bounds_by_release(tmp_path: Path, operators: tuple[str, ...], expected: list[str]) -> None:
    for i, tag in enumerate(operators):
        (tmp_path / f"operator-{i}.yaml").write_text(KUBERAY.replace("ray-system", f"ray-system-{i}") % tag)
    (tmp_path / "cluster.yaml").write_text(RAYCLUSTER)
    assert _kuberay_refusals(tmp_path) == expected


def test_an_older_kuberay_goes_on_to_the_checks_it_runs(tmp_path: Path) -> None:
    """v1.4 runs no replica-bound or rayStartParams check but does check the name; v1.3 checks none of them."""
    long_name = RAYCLUSTER.replace("llm-serving", "llm-serving-" + "x" * 50).replace(
        "rayStartParams: {}\n    template:\n      spec:\n        containers:\n        - name: ray-worker",
        "rayStartParams: {num-gpus: '1'}\n    template:\n      spec:\n        containers:\n        - name: ray-worker",
    )
    (tmp_path / "cluster.yaml").write_text(long_name)
    (tmp_path / "operator.yaml").write_text(KUBERAY % "v1.4.2")
    assert _kuberay_refusals(tmp_path) == ["RayCluster name should be no more than 53 characters"]
    (tmp_path / "operator.yaml").write_text(KUBERAY % "v1.3.2")
    assert _kuberay_refusals(tmp_path) == []


RAYJOB_TTL = """\
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: train, namespace: ray}
spec:
  entrypoint: python train.py
  ttlSecondsAfterFinished: 600
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - {name: ray-head, image: rayproject/ray:2.41.0}
"""


def test_a_rayjob_ttl_without_shutdown_is_refused_from_kuberay_1_4_only(tmp_path: Path) -> None:
    """v1.3 takes a TTL without shutdownAfterJobFinishes (and ignores it); v1.4 refuses it (#3653), in
    these words from v1.5."""
    (tmp_path / "job.yaml").write_text(RAYJOB_TTL)
    (tmp_path / "operator.yaml").write_text(KUBERAY % "v1.3.2")
    refused = [f for f in _findings(str(tmp_path)) if f["rule"] == "operator-rejected"]
    assert refused == []
    (tmp_path / "operator.yaml").write_text(KUBERAY % "v1.5.1")
    refused = [str(f["message"]) for f in _findings(str(tmp_path)) if f["rule"] == "operator-rejected"]
    assert [m.partition("refuses this RayJob: ")[2] for m in refused] == [
        "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot have "
        "TTLSecondsAfterFinished"
    ]
