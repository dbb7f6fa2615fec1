"""The webhook inside a real API server: etcd, kube-apiserver and kube-scheduler (k8s.io/kubernetes v1.37.2)
on loopback, `gpulint serve` registered by the ValidatingWebhookConfiguration that deploy/chart renders,
and the real kubectl creating GPU Pods, Deployments, Jobs and ResourceClaims.

The registration is the chart's own (rules, failurePolicy, timeoutSeconds, sideEffects, selectors, caBundle
with tls.mode=secret) but for one field: clientConfig.service becomes clientConfig.url on 127.0.0.1,
because the API server reaches a Service through its endpoints and those may not be loopback addresses
(ValidateEndpointIP, pkg/apis/core/validation). controller-runtime's envtest registers webhooks the same way.

Deselect with `-m "not apiserver"`. Skips when Go or etcd is missing, and fails instead under CI=true.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml
from conftest import REPO, run_cli
from k8s_binaries import binaries
from kube_control_plane import WEBHOOK_USER, ControlPlane, programs
from webhook_helpers import Server, issue_pair

pytestmark = pytest.mark.apiserver

NAMESPACE = "ml"
RELEASE_NAMESPACE = "gpulint-system"
DENIED = 'admission webhook "validate.gpulint.io" denied the request: gpulint denied this object:'
UNSCHEDULABLE = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs the real control plane: {reason}")
    pytest.skip(reason)


# --- objects ---------------------------------------------------------------------------------------


def gpu_container(gpus: int, requests_only: bool = False) -> dict[str, Any]:
    amount = {"nvidia.com/gpu": gpus}
    resources = {"requests": amount} if requests_only else {"limits": amount}
    return {"name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "resources": resources}


def pod(name: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"containers": [gpu_container(gpus)]},
    }


def deployment(name: str, gpus: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [gpu_container(gpus)]}},
        },
    }


def job(name: str, gpus: int, requests_only: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [gpu_container(gpus, requests_only)]},
            }
        },
    }


def claim(name: str, device_class: str, count: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class, "count": count}}]}
        },
    }


def device_class(driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def resource_slice(driver: str, node: str, devices: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}} for i in range(devices)],
        },
    }


def add_node(cluster: ControlPlane, name: str, gpus: int) -> None:
    """A Node object with GPU capacity: created bare, its status written through the status subresource
    (as a kubelet and its device plugin would report it). The TaintNodesByCondition admission plugin
    gives a new Node the not-ready taint; with no node lifecycle controller to lift it once the Node
    reports Ready, the test lifts it."""
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    cluster.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    set_gpus(cluster, name, gpus)
    cluster.kubectl("taint", "node", name, "node.kubernetes.io/not-ready:NoSchedule-")


def set_gpus(cluster: ControlPlane, name: str, gpus: int) -> None:
    amounts = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
    status = {"status": {"capacity": amounts, "allocatable": amounts, "conditions": [ready]}}
    cluster.kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", json.dumps(status))


# --- the chart ----------------------------------------------------------------------------------------


def render_chart(helm: Path, directory: Path, ca: trustme.CA, **values: Any) -> list[dict[str, Any]]:
    """deploy/chart rendered by helm template, its certificate given as a Secret and CA (tls.mode=secret)."""
    tls = {"mode": "secret", "secretName": "gpulint-tls", "caBundle": base64.b64encode(ca.cert_pem.bytes()).decode()}
    values_file = directory / "values.json"
    values_file.write_text(json.dumps({"tls": tls, **values}))
    rendered = subprocess.run(
        [str(helm), "template", "gpulint", str(REPO / "deploy" / "chart"), "--namespace", RELEASE_NAMESPACE,
         "-f", str(values_file)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def rendered(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


def registration(docs: list[dict[str, Any]], port: int) -> dict[str, Any]:
    """The chart's ValidatingWebhookConfiguration, its Service reference turned into a loopback URL."""
    (config,) = rendered(docs, "ValidatingWebhookConfiguration")
    for webhook in config["webhooks"]:
        client = webhook["clientConfig"]
        service = client.pop("service")
        assert (service["name"], service["namespace"]) == ("gpulint", RELEASE_NAMESPACE)
        client["url"] = f"https://127.0.0.1:{port}{service['path']}"
    return config


def serve_arguments(docs: list[dict[str, Any]]) -> list[str]:
    """The Deployment's `gpulint serve` arguments but where to listen and the certificate's paths."""
    (deploy,) = rendered(docs, "Deployment")
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[0] == "serve"
    local = ("--tls-cert=", "--tls-key=", "--port=")
    return [arg for arg in args[1:] if not arg.startswith(local)]


# --- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tools() -> dict[str, Path]:
    found = binaries()
    if isinstance(found, str):
        unavailable(found)
    assert not isinstance(found, str)
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, tools) -> Iterator[ControlPlane]:
    found = programs()
    if isinstance(found, str):
        unavailable(found)
    assert not isinstance(found, str)
    plane = ControlPlane(tmp_path_factory.mktemp("control-plane"), tools["kubectl"])
    try:
        plane.start(found, scheduler=True)
        namespaces = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in (NAMESPACE, RELEASE_NAMESPACE)
        ]
        plane.apply(*namespaces)
        # No controller-manager: the namespace's default ServiceAccount, which Pods name, is made by hand.
        plane.apply(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NAMESPACE}}
        )
        add_node(plane, "n0", 8)
        plane.apply(device_class("gpu.example.com"), resource_slice("gpu.example.com", "n0", 1))
        # gpulint reads the cluster as the chart's ServiceAccount, with the chart's ClusterRole and nothing more.
        docs = render_chart(tools["helm"], plane.directory, trustme.CA())
        roles = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
        plane.apply(*(doc for kind in roles for doc in rendered(docs, kind)))
        yield plane
    finally:
        plane.stop()


@contextmanager
def gpulint_webhook(cluster: ControlPlane, helm: Path, directory: Path, **values: Any) -> Iterator[Server]:
    """`gpulint serve` with the chart's arguments and --kubeconfig, registered as the chart registers it;
    the registration removed and the server stopped on the way out."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    cert, key = issue_pair(ca, directory)
    docs = render_chart(helm, directory, ca, **values)
    server = Server(
        directory, *serve_arguments(docs), "--kubeconfig", str(cluster.webhook_kubeconfig), cert=cert, key=key, ca=ca
    )
    try:
        # Ready only once the live inventory has listed every API it watches, as the chart's permissions let it.
        wait(lambda: server.get("/readyz")[0] == 200, 60, lambda: server.get("/readyz")[1])
        cluster.apply(registration(docs, server.port))
        # The API server's informer picks the registration up soon after: until gpulint answers a probe.
        probe = pod("probe", 16)
        wait(
            lambda: "gpulint" in cluster.create(probe, "--dry-run=server").stderr,
            60,
            lambda: cluster.create(probe, "--dry-run=server").stderr,
        )
        yield server
    finally:
        cluster.kubectl("delete", "validatingwebhookconfiguration", "gpulint", "--ignore-not-found", check=False)
        server.process.send_signal(signal.SIGCONT)  # a test may have paused it
        server.stop()


def wait(condition: Callable[[], bool], timeout: float, explain: Callable[[], object] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout} s: {explain()}")


def name_of(obj: dict[str, Any]) -> str:
    return f"{obj['kind'].lower()}/{obj['metadata']['name']}"


def exists(cluster: ControlPlane, obj: dict[str, Any]) -> bool:
    found = cluster.kubectl("get", "-n", NAMESPACE, name_of(obj), "--ignore-not-found", "-o", "name")
    return bool(found.stdout.strip())


# --- the tests -------------------------------------------------------------------------------------


def test_bad_objects_are_denied_with_gpulints_message_and_clean_ones_admitted(cluster, tools, tmp_path):
    with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail"):
        for obj in (pod("too-big", 16), deployment("too-big", 16), job("too-big", 16)):
            denied = cluster.create(obj)
            assert denied.returncode != 0 and DENIED in denied.stderr, denied.stderr
            assert "- gpu-unschedulable: this pod can never be scheduled on this cluster" in denied.stderr
            assert UNSCHEDULABLE in denied.stderr
            assert not exists(cluster, obj)
        denied = cluster.create(claim("no-class", "gpu.missing.example.com"))
        assert (
            DENIED in denied.stderr
            and "- device-class-unknown: DeviceClass 'gpu.missing.example.com' does not exist" in denied.stderr
        )
        denied = cluster.create(claim("two", "gpu.example.com", count=2))  # the one slice offers one device
        assert DENIED in denied.stderr and "- claim-unsatisfiable:" in denied.stderr

        for obj in (pod("fits", 1), deployment("fits", 1), job("fits", 1), claim("one", "gpu.example.com")):
            created = cluster.create(obj)
            assert created.returncode == 0, created.stderr
            assert created.stdout.strip().endswith(f"/{obj['metadata']['name']} created"), created.stdout
            assert exists(cluster, obj)
        # Findings below the deny level come back as warnings, and kubectl prints them.
        warned = cluster.create(pod("two-gpus", 2))
        assert warned.returncode == 0, warned.stderr
        assert "Warning: gpulint dev-shm-missing: container 'train' (2 nvidia.com/gpu)" in warned.stderr


def test_the_api_servers_own_validation_answers_before_the_webhook_in_the_words_gpulint_quotes(
    cluster, tools, tmp_path
):
    with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail") as server:
        reviews = len(server.events("review"))
        rejected = cluster.create(job("requests-only", 1, requests_only=True))
        assert rejected.returncode != 0 and "validate.gpulint.io" not in rejected.stderr
        quoted = "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
        assert quoted in rejected.stderr
        assert len(server.events("review")) == reviews  # never reached the webhook
        # gpulint check says it in the same words, for the same object in a file.
        manifest = tmp_path / "job.yaml"
        manifest.write_text(json.dumps(job("requests-only", 1, requests_only=True)))
        checked = run_cli("check", str(manifest), "--color", "never")
        assert checked.exit_code == 1 and quoted in checked.stdout


def test_server_side_dry_run_reaches_gpulint_flagged_and_stores_nothing(cluster, tools, tmp_path):
    with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail") as server:
        before = len(server.events("review"))
        denied = cluster.create(pod("dry-too-big", 16), "--dry-run=server")
        assert DENIED in denied.stderr and UNSCHEDULABLE in denied.stderr
        admitted = cluster.create(pod("dry-fits", 1), "--dry-run=server")
        assert admitted.returncode == 0 and "pod/dry-fits created (server dry run)" in admitted.stdout
        assert not exists(cluster, pod("dry-fits", 1))
        wait(lambda: len(server.events("review")) >= before + 2, 10)
        reviews = server.events("review")[before:]
        assert [(r["result"], r["dry_run"]) for r in reviews] == [("denied", True), ("allowed", True)]


def test_live_inventory_follows_the_api_servers_nodes_slices_and_classes(cluster, tools, tmp_path):
    def denial(obj: dict[str, Any]) -> str:
        """gpulint's denial, or "" when admitted (with or without warnings)."""
        answer = cluster.create(obj, "--dry-run=server")
        return "" if answer.returncode == 0 else answer.stderr

    big = pod("big", 16)
    with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail"):
        try:
            assert UNSCHEDULABLE in denial(big)
            add_node(cluster, "big", 16)
            wait(lambda: denial(big) == "", 30, lambda: denial(big))
            set_gpus(cluster, "big", 4)  # its device plugin now reports fewer
            wait(
                lambda: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu." in denial(big),
                30,
                lambda: denial(big),
            )
            set_gpus(cluster, "big", 16)
            wait(lambda: denial(big) == "", 30, lambda: denial(big))
        finally:
            cluster.kubectl("delete", "node", "big", "--ignore-not-found")
        wait(lambda: UNSCHEDULABLE in denial(big), 30, lambda: denial(big))

        later = claim("later", "gpu.later.example.com")
        assert "device-class-unknown" in denial(later)
        try:
            cluster.apply(device_class("gpu.later.example.com"))
            # The class exists now, but no slice publishes a device it selects.
            wait(lambda: "claim-unsatisfiable" in denial(later), 30, lambda: denial(later))
            cluster.apply(resource_slice("gpu.later.example.com", "n0", 2))
            wait(lambda: denial(later) == "", 30, lambda: denial(later))
            cluster.kubectl("delete", "resourceslice", "n0-gpu.later.example.com")
            wait(lambda: "claim-unsatisfiable" in denial(later), 30, lambda: denial(later))
        finally:
            cluster.kubectl("delete", "resourceslice", "n0-gpu.later.example.com", "--ignore-not-found")
            cluster.kubectl("delete", "deviceclass", "gpu.later.example.com", "--ignore-not-found")


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_failure_policy_and_timeout_as_configured(cluster, tools, tmp_path, policy):
    timeout = 2
    clean, bad = pod("while-down", 1), pod("bad-while-down", 16)
    with gpulint_webhook(
        cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy=policy, timeoutSeconds=timeout
    ) as server:
        server.process.send_signal(signal.SIGSTOP)  # accepts connections (the kernel does) and never answers
        started = time.monotonic()
        hung = cluster.create(clean, "--dry-run=server")
        elapsed = time.monotonic() - started
        assert timeout <= elapsed < timeout + 10, elapsed
        if policy == "Fail":
            assert hung.returncode != 0 and 'failed calling webhook "validate.gpulint.io"' in hung.stderr, hung.stderr
            assert "context deadline exceeded" in hung.stderr or "Timeout" in hung.stderr, hung.stderr
        else:
            assert hung.returncode == 0, hung.stderr
            assert cluster.create(bad, "--dry-run=server").returncode == 0  # Ignore admits even what gpulint would deny
        server.process.send_signal(signal.SIGCONT)
        assert cluster.create(clean, "--dry-run=server").returncode == 0
        assert DENIED in cluster.create(bad, "--dry-run=server").stderr

        server.stop()  # nothing listens on its port any more
        down = cluster.create(clean, "--dry-run=server")
        if policy == "Fail":
            assert down.returncode != 0 and "connection refused" in down.stderr, down.stderr
        else:
            assert down.returncode == 0, down.stderr


def test_the_scheduler_leaves_pending_what_gpulint_warned_of_and_binds_what_fits(cluster, tools, tmp_path):
    # The chart's default: dry-run mode, every finding a warning, nothing denied.
    with gpulint_webhook(cluster, tools["helm"], tmp_path):
        pending, fits = pod("pending", 16), pod("schedules", 1)
        created = cluster.create(pending)
        assert created.returncode == 0, created.stderr
        warning = next(line for line in created.stderr.splitlines() if "gpulint gpu-unschedulable" in line)
        assert "this pod can never be scheduled on this cluster" in warning
        assert cluster.create(fits).returncode == 0

        def condition(name: str) -> dict[str, Any] | None:
            conditions = cluster.get("pod", "-n", NAMESPACE, name)["status"].get("conditions", [])
            return next((c for c in conditions if c["type"] == "PodScheduled"), None)

        wait(lambda: condition("pending") is not None, 60, lambda: cluster.log("kube-scheduler")[-2000:])
        scheduled = condition("pending")
        assert scheduled is not None and (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
        # The scheduler's own words start with the line gpulint printed at admission.
        assert scheduled["message"].startswith(UNSCHEDULABLE), scheduled["message"]
        wait(lambda: cluster.get("pod", "-n", NAMESPACE, "schedules")["spec"].get("nodeName") == "n0", 60)


def test_gpulint_reads_the_cluster_as_the_charts_service_account(cluster):
    """The chart's ClusterRole is what the webhook above needed: the same identity may list and watch what
    the live inventory reads, and may not write."""
    can = lambda *args: cluster.kubectl("auth", "can-i", *args, "--as", WEBHOOK_USER, check=False).stdout.strip()
    assert can("watch", "nodes") == "yes"
    assert can("list", "resourceslices.resource.k8s.io") == "yes"
    assert can("create", "pods", "-n", NAMESPACE) == "no"
    assert can("watch", "configmaps/cluster-autoscaler-status", "-n", "kube-system") == "yes"
    assert can("list", "configmaps", "-n", "kube-system") == "no"  # that one ConfigMap, no other
    assert can("watch", "daemonsets.apps", "-A") == "yes"  # every node's daemonset overhead
    assert can("update", "daemonsets.apps", "-n", "kube-system") == "no"


# --- node pools: the nodes that can exist ------------------------------------------------------------


def pool_crd(group: str, kind: str, plural: str, versions: tuple[str, ...], namespaced: bool) -> dict[str, Any]:
    """A minimal CustomResourceDefinition for a node-pool kind: a structural schema that keeps every field
    (the real CRDs' validation is theirs; gpulint reads what the API server stores). The first version is
    the storage version; all are served, so discovery offers each."""
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [
                {"name": version, "served": True, "storage": index == 0, "schema": schema}
                for index, version in enumerate(versions)
            ],
        },
    }


POOL_CRDS = (
    pool_crd("karpenter.sh", "NodePool", "nodepools", ("v1",), namespaced=False),
    pool_crd("karpenter.k8s.aws", "EC2NodeClass", "ec2nodeclasses", ("v1",), namespaced=False),
    pool_crd("cluster.x-k8s.io", "MachineDeployment", "machinedeployments", ("v1beta2", "v1beta1"), namespaced=True),
    pool_crd("cluster.x-k8s.io", "MachineSet", "machinesets", ("v1beta2", "v1beta1"), namespaced=True),
)
POOL_LABEL = "gpulint.example.com/pool"
# Shaped like the Karpenter docs' GPU NodePool: the g5 family (at most 8 GPUs, g5.48xlarge), its nodes labelled.
NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "training"},
    "spec": {
        "template": {
            "metadata": {"labels": {POOL_LABEL: "training"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}],
            },
        },
        "limits": {"nvidia.com/gpu": 64},
    },
}
# A cluster-api MachineDeployment at zero replicas whose nodes have 16 GPUs (Cluster Autoscaler's scale-from-zero
# annotations), written at v1beta1 while the API server stores and gpulint reads v1beta2.
MACHINE_DEPLOYMENT = {
    "apiVersion": "cluster.x-k8s.io/v1beta1",
    "kind": "MachineDeployment",
    "metadata": {
        "name": "hgx-md-0",
        "namespace": NAMESPACE,
        "annotations": {
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0",
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "2",
            "capacity.cluster-autoscaler.kubernetes.io/cpu": "192",
            "capacity.cluster-autoscaler.kubernetes.io/memory": "2048Gi",
            "capacity.cluster-autoscaler.kubernetes.io/gpu-type": "nvidia.com/gpu",
            "capacity.cluster-autoscaler.kubernetes.io/gpu-count": "16",
        },
    },
    "spec": {"clusterName": "gpu", "replicas": 0, "template": {"spec": {"clusterName": "gpu"}}},
}


AUTOSCALER_STATUS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
    "data": {
        "status": "autoscalerStatus: Running\nnodeGroups:\n- name: aks-gpupool-31415926-vmss\n  health:\n"
        "    status: Healthy\n    cloudProviderTarget: 1\n    minSize: 0\n    maxSize: 4\n"
    },
}


def machine_set(owner: str = "") -> dict[str, Any]:
    """MACHINE_DEPLOYMENT's node group as a MachineSet; ``owner``: the MachineDeployment that made it."""
    obj = json.loads(json.dumps(MACHINE_DEPLOYMENT))
    obj["kind"] = "MachineSet"
    obj["metadata"]["name"] = f"{owner}-7f9c4" if owner else "hgx-ms-0"
    if owner:
        uid = "0b7e4c1a-5d2f-4e8b-9a3c-6f1d2e3b4c5d"
        reference = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "name": owner, "uid": uid}
        obj["metadata"]["ownerReferences"] = [reference]
    return obj


def test_live_inventory_follows_node_pools_as_they_are_created_and_deleted(cluster, tools, tmp_path):
    """The pool kinds installed as CRDs (before gpulint starts: discovery looks again only every 5 minutes), then
    a NodePool and a MachineDeployment created and deleted with kubectl: a pod that fits only a node a pool can
    add is admitted while the pool exists, and denied again once it is deleted."""

    def denial(obj: dict[str, Any]) -> str:
        answer = cluster.create(obj, "--dry-run=server")
        return "" if answer.returncode == 0 else answer.stderr

    pooled = pod("pooled", 8)
    pooled["spec"]["nodeSelector"] = {POOL_LABEL: "training"}  # no node carries it: only the pool's will
    sixteen = pod("sixteen", 16)  # n0 has 8 GPUs
    try:
        cluster.apply(*POOL_CRDS)
        for crd in POOL_CRDS:
            cluster.kubectl("wait", "--for=condition=Established", f"crd/{crd['metadata']['name']}", "--timeout=60s")
        with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail") as server:
            assert DENIED in denial(pooled) and UNSCHEDULABLE in denial(sixteen)
            cluster.apply(NODEPOOL)
            wait(lambda: denial(pooled) == "", 30, lambda: denial(pooled))
            too_big = pod("pooled-nine", 9)
            too_big["spec"]["nodeSelector"] = {POOL_LABEL: "training"}
            refused = denial(too_big)  # the pool's largest g5 has 8 GPUs
            assert "none of its 1 node pool can add a node for it" in refused, refused
            cluster.kubectl("delete", "nodepool", "training")
            wait(lambda: DENIED in denial(pooled), 30, lambda: denial(pooled))

            cluster.apply(MACHINE_DEPLOYMENT)
            wait(lambda: denial(sixteen) == "", 30, lambda: denial(sixteen))
            listed = [e for e in server.events("live_inventory_discovered")]
            assert any("MachineDeployment.cluster.x-k8s.io/v1beta2" in e["served"] for e in listed), listed
            cluster.kubectl("delete", "machinedeployment", "-n", NAMESPACE, "hgx-md-0")
            wait(lambda: UNSCHEDULABLE in denial(sixteen), 30, lambda: denial(sixteen))

            # The same node group as a MachineSet: one a MachineDeployment owns is not a group of its own.
            owned = machine_set(owner="hgx-md-1")
            cluster.apply(owned)
            cluster.apply(machine_set())
            wait(lambda: denial(sixteen) == "", 30, lambda: denial(sixteen))
            cluster.kubectl("delete", "machineset", "-n", NAMESPACE, "hgx-ms-0")
            wait(lambda: UNSCHEDULABLE in denial(sixteen), 30, lambda: denial(sixteen))  # the owned one is no pool

            # Cluster Autoscaler's status names a scale set no pool describes, below its max: it may add a node
            # of any shape. Read through the chart's Role (list/watch on that one name, in kube-system).
            cluster.apply(AUTOSCALER_STATUS)
            wait(lambda: denial(sixteen) == "", 30, lambda: denial(sixteen))
            cluster.kubectl("delete", "configmap", "-n", "kube-system", "cluster-autoscaler-status")
            wait(lambda: UNSCHEDULABLE in denial(sixteen), 30, lambda: denial(sixteen))
    finally:
        cluster.kubectl(
            "delete", "configmap", "-n", "kube-system", "cluster-autoscaler-status", "--ignore-not-found", check=False
        )
        cluster.kubectl("delete", "nodepool", "training", "--ignore-not-found", check=False)
        cluster.kubectl("delete", "machinedeployment", "-n", NAMESPACE, "hgx-md-0", "--ignore-not-found", check=False)
        for name in ("hgx-ms-0", "hgx-md-1-7f9c4"):
            cluster.kubectl("delete", "machineset", "-n", NAMESPACE, name, "--ignore-not-found", check=False)
        for crd in POOL_CRDS:
            cluster.kubectl("delete", "crd", crd["metadata"]["name"], "--ignore-not-found", check=False)


# --- cluster-api Machines and Cluster Autoscaler's Deployment --------------------------------------------------

MACHINE_CRD = pool_crd("cluster.x-k8s.io", "Machine", "machines", ("v1beta2", "v1beta1"), namespaced=True)
CAPI_CRDS = (*POOL_CRDS[2:], MACHINE_CRD)  # MachineDeployments, MachineSets, Machines
PROVIDER_ID = "aws:///us-east-1a/i-0c2f4e6a8b0d1f3a5"
VALIDATION = "gpu.example.com/validation"  # an operator's taint while a new node's GPUs are burned in


def gpu_md_1() -> list[dict[str, Any]]:
    """A MachineDeployment whose scale-from-zero annotations say 8 GPUs, the MachineSet it made, and that
    MachineSet's Machine of node capi-0 (written at v1beta1; stored and read at v1beta2)."""
    group = json.loads(json.dumps(MACHINE_DEPLOYMENT))
    group["metadata"]["name"] = "gpu-md-1"
    group["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/gpu-count"] = "8"
    group["spec"]["replicas"] = 1
    owned = machine_set(owner="gpu-md-1")
    owned["spec"]["replicas"] = 1
    reference = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "name": owned["metadata"]["name"]}
    machine = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Machine",
        "metadata": {
            "name": f"{owned['metadata']['name']}-q8m4x",
            "namespace": NAMESPACE,
            "ownerReferences": [{**reference, "uid": "8e1d2c3b-4a5f-4e6d-8c7b-9a0b1c2d3e4f", "controller": True}],
        },
        "spec": {"clusterName": "gpu", "providerID": PROVIDER_ID, "bootstrap": {"dataSecretName": "gpu-md-1"}},
    }
    return [group, owned, machine]


def cluster_autoscaler(*flags: str) -> dict[str, Any]:
    """Cluster Autoscaler's Deployment as its Helm chart renders it for the clusterapi provider (trimmed)."""
    labels = {"app.kubernetes.io/name": "clusterapi-cluster-autoscaler"}
    command = ["./cluster-autoscaler", "--cloud-provider=clusterapi", "--namespace=kube-system", *flags]
    container = {
        "name": "clusterapi-cluster-autoscaler",
        "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.1",
        "command": command,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cluster-autoscaler", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def test_live_inventory_follows_machines_and_the_autoscalers_taint_flags(cluster, tools, tmp_path):
    """16 GPUs asked; n0 has 8, gpu-md-1's annotations say 8, its live node capi-0 has 16 but a taint the pod does
    not tolerate. The Machine created ties capi-0 to gpu-md-1 (the autoscaler copies it, taint and all: denied for
    the taint); the autoscaler's Deployment updated with --status-taint drops the taint from the copy (admitted: it
    fits a node a scale-up adds); with --startup-taint capi-0 is no template and the annotations' 8 stand."""

    def denial(obj: dict[str, Any]) -> str:
        answer = cluster.create(obj, "--dry-run=server")
        return "" if answer.returncode == 0 else answer.stderr

    sixteen = pod("sixteen", 16)
    eight = "MachineDeployment gpu-md-1: its nodes have 8 nvidia.com/gpu; the pod asks for 16"
    tainted = "MachineDeployment gpu-md-1: node(s) had untolerated taint(s)"
    group, owned, machine = gpu_md_1()
    try:
        cluster.apply(*CAPI_CRDS)
        for crd in CAPI_CRDS:
            cluster.kubectl("wait", "--for=condition=Established", f"crd/{crd['metadata']['name']}", "--timeout=60s")
        # The chart's ServiceAccount may watch the Machines, and the Deployments of kube-system only.
        can = lambda *args: cluster.kubectl("auth", "can-i", *args, "--as", WEBHOOK_USER, check=False).stdout.strip()
        assert can("watch", "machines.cluster.x-k8s.io", "-A") == "yes"
        assert can("watch", "deployments.apps", "-n", "kube-system") == "yes"
        assert can("list", "deployments.apps", "-n", NAMESPACE) == "no"
        assert can("update", "deployments.apps", "-n", "kube-system") == "no"
        add_node(cluster, "capi-0", 16)
        taint = {"key": VALIDATION, "value": "pending", "effect": "NoSchedule"}
        cluster.kubectl(
            "patch", "node", "capi-0", "--type=merge", "-p",
            json.dumps({"spec": {"providerID": PROVIDER_ID, "taints": [taint]}}),
        )  # fmt: skip
        cluster.apply(group, owned, cluster_autoscaler())
        with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail") as server:
            assert eight in denial(sixteen), denial(sixteen)
            cluster.apply(machine)
            wait(lambda: tainted in denial(sixteen), 30, lambda: denial(sixteen))
            listed = [e for e in server.events("live_inventory_discovered")]
            assert any("Machine.cluster.x-k8s.io/v1beta2" in e["served"] for e in listed), listed
            assert any("Deployment.apps/v1" in e["served"] for e in listed), listed

            cluster.apply(cluster_autoscaler(f"--status-taint={VALIDATION}"))
            wait(lambda: denial(sixteen) == "", 30, lambda: denial(sixteen))
            cluster.apply(cluster_autoscaler(f"--startup-taint={VALIDATION}"))
            wait(lambda: eight in denial(sixteen), 30, lambda: denial(sixteen))
    finally:
        cluster.kubectl(
            "delete", "deployment", "-n", "kube-system", "cluster-autoscaler", "--ignore-not-found", check=False
        )
        cluster.kubectl("delete", "node", "capi-0", "--ignore-not-found", check=False)
        for crd in CAPI_CRDS:  # their objects go with them
            cluster.kubectl("delete", "crd", crd["metadata"]["name"], "--ignore-not-found", check=False)


# --- the cluster's own admission: ValidatingAdmissionPolicies and mutating webhooks -------------------------

POLICED = "gpulint.example.com/policed"  # only pods with this label are bound: the other tests' pods are not
TEAM_POLICY = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "gpu-team"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
            ]
        },
        "validations": [
            {
                "expression": "has(object.metadata.labels) && 'team' in object.metadata.labels",
                "message": "a GPU pod names its team",
            }
        ],
    },
}


def team_binding(action: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"gpu-team-{action.lower()}"},
        "spec": {
            "policyName": "gpu-team",
            "validationActions": [action],
            "matchResources": {"objectSelector": {"matchLabels": {POLICED: "true"}}},
        },
    }


# Shaped like a sidecar injector's registration (Istio's, the Kubeflow PodDefaults'): pods it selects get containers
# and fields from it. Served nowhere (the port is closed, and failurePolicy Ignore): the API server goes on without it.
NAMER = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "namer"},
    "webhooks": [
        {
            "name": "namer.example.com",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Ignore",
            "timeoutSeconds": 2,
            "clientConfig": {"url": "https://127.0.0.1:1/mutate", "caBundle": base64.b64encode(b"-" * 64).decode()},
            "objectSelector": {"matchLabels": {"inject.example.com/names": "true"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        }
    ],
}


def test_live_inventory_reads_the_clusters_admission_policies_as_the_api_server_enforces_them(cluster, tmp_path):
    """A ValidatingAdmissionPolicy bound with Deny, created in the API server: `gpulint check --live-inventory`
    (as the chart's ServiceAccount) refuses the pod in the API server's own words, which the API server then
    gives to kubectl; a pod the binding does not select is admitted by both."""
    policed = pod("policed", 1)
    policed["metadata"]["labels"] = {POLICED: "true"}
    free = pod("free", 1)
    live = ("--live-inventory", "--kubeconfig", str(cluster.webhook_kubeconfig), "--no-live-pods", "--format", "json")

    def rejections(obj: dict[str, Any]) -> list[str]:
        manifest = tmp_path / f"{obj['metadata']['name']}.yaml"
        manifest.write_text(yaml.safe_dump(obj))
        found = json.loads(run_cli("check", str(manifest), *live).stdout)["findings"]
        return [f["message"] for f in found if f["rule"] == "api-rejected"]

    assert rejections(policed) == []
    try:
        cluster.apply(TEAM_POLICY, team_binding("Deny"))
        wait(lambda: "denied request" in cluster.create(policed, "--dry-run=server").stderr, 30)
        refused = cluster.create(policed, "--dry-run=server")
        words = (
            "ValidatingAdmissionPolicy 'gpu-team' with binding 'gpu-team-deny' denied request: a GPU pod names its team"
        )
        assert refused.returncode != 0 and words in refused.stderr, refused.stderr
        assert rejections(policed) == [f"the API server rejects this object: {words}"]
        assert cluster.create(free, "--dry-run=server").returncode == 0 and rejections(free) == []
    finally:
        cluster.kubectl(
            "delete", "validatingadmissionpolicybinding", "gpu-team-deny", "--ignore-not-found", check=False
        )
        cluster.kubectl("delete", "validatingadmissionpolicy", "gpu-team", "--ignore-not-found", check=False)


def test_the_webhooks_live_inventory_follows_admission_policies_as_they_are_bound_and_unbound(cluster, tools, tmp_path):
    """A Warn binding created and deleted while `gpulint serve` runs: the API server warns, and gpulint's own
    warning (api-rejected, from the policy its live inventory watched in) comes and goes with it."""
    policed = pod("policed", 1)
    policed["metadata"]["labels"] = {POLICED: "true"}
    ours = "Warning: gpulint api-rejected"
    with gpulint_webhook(cluster, tools["helm"], tmp_path, dryRun=False, failurePolicy="Fail") as server:
        warned = lambda: cluster.create(policed, "--dry-run=server").stderr  # noqa: E731
        assert ours not in warned()
        try:
            cluster.apply(TEAM_POLICY, team_binding("Warn"))
            wait(lambda: ours in warned(), 30, warned)
            said = warned()
            assert "Validation failed for ValidatingAdmissionPolicy 'gpu-team' with binding 'gpu-team-warn'" in said
            listed = server.events("live_inventory_discovered")
            assert any(
                "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io/v1" in e["served"] for e in listed
            )
            cluster.kubectl("delete", "validatingadmissionpolicybinding", "gpu-team-warn")
            wait(lambda: ours not in warned(), 30, warned)
        finally:
            cluster.kubectl(
                "delete", "validatingadmissionpolicybinding", "gpu-team-warn", "--ignore-not-found", check=False
            )
            cluster.kubectl("delete", "validatingadmissionpolicy", "gpu-team", "--ignore-not-found", check=False)


def test_live_inventory_reads_the_mutating_webhooks_the_api_server_calls_before_its_schema_check(cluster, tmp_path):
    """A pod whose container has no name: the API server refuses it (spec.containers[0].name: Required value) and
    so does gpulint; once a MutatingWebhookConfiguration that selects the pod is registered, gpulint reads it live
    and no longer calls the name missing (the webhook may set it), while a pod it does not select stays refused."""
    nameless = pod("nameless", 1)
    del nameless["spec"]["containers"][0]["name"]
    injected = json.loads(json.dumps(nameless))
    injected["metadata"]["labels"] = {"inject.example.com/names": "true"}
    live = ("--live-inventory", "--kubeconfig", str(cluster.webhook_kubeconfig), "--no-live-pods", "--format", "json")

    def missing(obj: dict[str, Any], name: str) -> list[str]:
        manifest = tmp_path / f"{name}.yaml"
        manifest.write_text(yaml.safe_dump(obj))
        found = json.loads(run_cli("check", str(manifest), *live).stdout)["findings"]
        return [f["message"] for f in found if f["rule"] == "schema-invalid"]

    refused = cluster.create(nameless, "--dry-run=server")
    assert refused.returncode != 0 and "spec.containers[0].name: Required value" in refused.stderr, refused.stderr
    assert any("Required value" in m for m in missing(injected, "injected"))
    try:
        cluster.apply(NAMER)
        assert missing(injected, "injected") == []
        assert any("Required value" in m for m in missing(nameless, "nameless"))
    finally:
        cluster.kubectl("delete", "mutatingwebhookconfiguration", "namer", "--ignore-not-found", check=False)


TIME_SLICING = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  tesla-t4: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
    config:
      name: time-slicing-config
---
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: ml
spec:
  containers:
  - name: notebook
    image: quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27
    resources:
      limits:
        nvidia.com/gpu.shared: 1
"""


def test_live_nodes_say_whether_a_label_only_device_plugin_config_reaches_any(cluster, tmp_path):
    """The GPU operator's ClusterPolicy names a time-slicing ConfigMap and no default: only nodes labelled
    nvidia.com/device-plugin.config=tesla-t4 advertise nvidia.com/gpu.shared. The live nodes decide: none labelled,
    a warning; once `kubectl label node` (the operator docs' way) gives n0 the entry, nothing."""
    manifest = tmp_path / "time-slicing.yaml"
    manifest.write_text(TIME_SLICING)
    live = ("--live-inventory", "--kubeconfig", str(cluster.webhook_kubeconfig), "--no-live-pods", "--format", "json")

    def said() -> list[tuple[str, str]]:
        found = json.loads(run_cli("check", str(manifest), *live).stdout)["findings"]
        return [
            (f["severity"], "\n".join([f["message"], *f["notes"]]))
            for f in found
            if f["rule"] == "device-plugin-config"
        ]

    label = "nvidia.com/device-plugin.config"
    assert [severity for severity, message in said() if "which no node of the inventory advertises" in message] == [
        "warning"
    ]
    try:
        cluster.kubectl("label", "node", "n0", f"{label}=tesla-t4")
        assert said() == []
    finally:
        cluster.kubectl("label", "node", "n0", f"{label}-", check=False)
