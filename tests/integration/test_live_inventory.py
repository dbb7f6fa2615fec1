"""The live inventory against a local HTTPS server that speaks the Kubernetes API: discovery
(/api, /apis, each group version's resource list), paged lists (limit/continue), watch streams
(chunked, one JSON event a line, bookmarks, 410 Gone) and bearer-token authentication.

The webhook watches; `check`, `explain` and `inventory --live-inventory` read once, through a real
kubeconfig file that points at the server (the CLI runs as a subprocess, as a user runs it)."""

from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import trustme
from kubernetes import client
from support.fake_apiserver import (
    DRA_V1,
    JOB,
    TOKEN,
    FakeApiServer,
    allowed,
    cluster,
    gpulint,
    node,
    serve,
    wait_for,
)
from webhook_helpers import gpu_pod, review

from gpulint.kube.pools.gke import ComputeClass, GkeAutoCreation
from gpulint.kube.pools.gke import compute_class as read_class
from gpulint.lint.config import Config
from gpulint.lint.world.live_inventory import CRD_PAGE_SIZE, INVENTORY_APIS, PAGE_SIZE, LiveInventory, Transport
from gpulint.webhook.server import ServeOptions, Webhook

pytestmark = pytest.mark.integration


def settled_looks(looks: list[int], quiet_for: float = 0.3) -> bool:
    """True when the count in `looks` did not move for `quiet_for` seconds."""
    before = looks[0]
    time.sleep(quiet_for)
    return looks[0] == before


@pytest.mark.slow
def test_lists_then_follows_watch_events(make_api):
    api = make_api(cluster([node("n0", 8), node("n1", 8)], **{"resource.k8s.io__v1": DRA_V1}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready)
        assert len(webhook.snapshot.inventory.nodes) == 2
        assert allowed(webhook, gpu_pod(8)) and not allowed(webhook, gpu_pod(16))
        assert set(api.authorizations) == {f"Bearer {TOKEN}"}
        nodes = "/api/v1/nodes"
        assert wait_for(lambda: (nodes, "10") in api.watch_versions)
        api.events[nodes].put({"type": "ADDED", "object": node("big", 16)})
        assert wait_for(lambda: allowed(webhook, gpu_pod(16)))
        assert len(webhook.snapshot.inventory.nodes) == 3
        api.events[nodes].put({"type": "DELETED", "object": node("big", 16)})
        assert wait_for(lambda: not allowed(webhook, gpu_pod(16)))
    finally:
        webhook.stop()


def test_a_node_read_live_is_kept_as_an_inventory_file_keeps_it(make_api):
    """Without its cached images and volumes (issue #31: two thirds of a node, read by nothing), as
    lint/world/inventory.py compact_item keeps a Node of an inventory file."""
    listed = node("n0", 8)
    listed["status"]["images"] = [{"names": ["registry.example.com/trainer:1"], "sizeBytes": 10**9}]
    listed["status"]["volumesInUse"] = ["kubernetes.io/csi/ebs.csi.aws.com^vol-1"]
    listed["status"]["allocatable"] = {"cpu": "63", "nvidia.com/gpu": "8"}
    webhook = serve(make_api(cluster([listed])))
    try:
        assert wait_for(lambda: webhook.ready)
        kept = webhook.snapshot.inventory.node_objects["n0"].data
        assert kept["status"] == {
            "capacity": listed["status"]["capacity"],
            "allocatable": {"cpu": "63", "nvidia.com/gpu": "8"},
        }
        assert kept["metadata"]["labels"] == {"kubernetes.io/hostname": "n0"}
        assert allowed(webhook, gpu_pod(8)) and not allowed(webhook, gpu_pod(16))
    finally:
        webhook.stop()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("groups", "dra_version"),
    [
        ({"resource.k8s.io__v1": DRA_V1, "resource.k8s.io__v1beta1": DRA_V1}, "v1"),  # 1.34+: both served
        ({"resource.k8s.io__v1beta1": DRA_V1}, "v1beta1"),  # 1.32/1.33 with DRA enabled
        ({"resource.k8s.io__v1beta2": DRA_V1, "resource.k8s.io__v1beta1": DRA_V1}, "v1beta2"),
        ({}, None),  # DRA not served at all: no such objects, and ready all the same
    ],
)
def test_discovery_watches_the_served_dra_version_and_is_ready_without_one(make_api, groups, dra_version):
    api = make_api(cluster([node("n0", 8)], **groups))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        listed = {urlparse(r).path for r in api.requests if "watch=true" not in r and "limit=" in r}
        dra_lists = {p for p in listed if "resource.k8s.io" in p}
        if dra_version is None:
            assert dra_lists == set()
        else:
            assert dra_lists == {f"/apis/resource.k8s.io/{dra_version}/{plural}" for plural in DRA_V1}
        inventory = webhook.snapshot.inventory
        assert inventory is not None and len(inventory.nodes) == 1
        # Unserved or empty, DeviceClass is a kind the cluster was asked for: absence is proof.
        assert inventory.lists("DeviceClass")
        assert set(inventory.device_classes) == ({"gpu.nvidia.com"} if dra_version else set())
        assert "/api/v1/pods" not in listed  # pods are watched only with --live-pods
    finally:
        webhook.stop()


GANG_V1ALPHA3 = {
    "workloads": [{"metadata": {"name": "train", "namespace": "ml"}, "spec": {"podGroupTemplates": []}}],
    "podgroups": [{"metadata": {"name": "train-workers", "namespace": "ml"}, "spec": {"schedulingPolicy": {}}}],
    # a LeaderWorkerSet-like controller's replica: the parent its PodGroups name (parentCompositePodGroupName)
    "compositepodgroups": [
        {
            "metadata": {"name": "train-replica-0", "namespace": "ml"},
            "spec": {
                "workloadRef": {"workloadName": "train", "templateName": "replica"},
                "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]},
            },
        }
    ],
}


@pytest.mark.slow
def test_a_cluster_serving_workloads_and_pod_groups_only_at_v1alpha3_is_read_at_it(make_api):
    """Kubernetes 1.37 serves scheduling.k8s.io Workload and PodGroup at v1beta1 and v1alpha3, each behind
    --runtime-config, and CompositePodGroup at v1alpha3 alone (pkg/registry/scheduling/rest/storage_scheduling.go,
    v1.37.2): a cluster that turned on only v1alpha3 is listed at v1alpha3, and its gang objects are found as the
    v1beta1 ones would be, the CompositePodGroup a PodGroup names as its parent too."""
    api = make_api(cluster([node("n0", 8)], **{"scheduling.k8s.io__v1alpha3": GANG_V1ALPHA3}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        listed = {urlparse(r).path for r in api.requests if "watch=true" not in r and "limit=" in r}
        assert {p for p in listed if "scheduling.k8s.io" in p} == {
            "/apis/scheduling.k8s.io/v1alpha3/workloads",
            "/apis/scheduling.k8s.io/v1alpha3/podgroups",
            "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups",
        }
        inventory = webhook.snapshot.inventory
        assert inventory is not None
        assert inventory.find_gang_object("scheduling.k8s.io", "Workload", "ml", "train") is not None
        assert inventory.find_gang_object("scheduling.k8s.io", "PodGroup", "ml", "train-workers") is not None
        composite = inventory.find_gang_object("scheduling.k8s.io", "CompositePodGroup", "ml", "train-replica-0")
        assert composite is not None and composite["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    finally:
        webhook.stop()


def test_not_ready_until_every_served_api_is_listed_and_readyz_says_what_it_waits_for(make_api):
    configuration = client.Configuration()
    configuration.host = "https://127.0.0.1:9"  # nothing listens: discovery fails and is retried
    webhook = Webhook(Config(), ServeOptions(live_inventory=True), api=configuration)
    try:
        time.sleep(0.3)
        assert webhook.ready is False
        assert webhook.waiting_for() == "listing API discovery"
        answered = webhook.review(json.dumps(review(gpu_pod(16))).encode())
        assert answered.status == 200 and answered.body["response"]["allowed"] is True  # no inventory: rules skip
    finally:
        webhook.stop()


def test_gone_watch_relists_and_paged_lists_are_read_whole(make_api, monkeypatch):
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "RETRY_SECONDS", 0.2)  # the relist after 410 Gone comes sooner than 2 s
    many = [node(f"n{i}", 8) for i in range(PAGE_SIZE + 7)]  # two pages
    api = make_api(cluster(many, **{"resource.k8s.io__v1": DRA_V1}))
    api.gone_once.add("/api/v1/nodes")
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready)
        assert len(webhook.snapshot.inventory.nodes) == PAGE_SIZE + 7
        assert any("continue=" in r for r in api.requests if r.startswith("/api/v1/nodes"))
        # 410 Gone on the first watch: listed again, then watched from the new list
        assert wait_for(lambda: [p for p, _ in api.watch_versions].count("/api/v1/nodes") >= 2, seconds=30)
        node_lists = [
            r for r in api.requests if r.startswith("/api/v1/nodes?") and "watch=true" not in r and "continue" not in r
        ]
        assert len(node_lists) >= 2
    finally:
        webhook.stop()


def test_live_pods_watches_running_pods_only(make_api):
    api = make_api(cluster([node("n0", 8)]))
    webhook = serve(api, live_pods=True)
    try:
        assert wait_for(lambda: webhook.ready)
        pod_lists = [r for r in api.requests if r.startswith("/api/v1/pods?")]
        assert pod_lists and all(
            "fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed" in r for r in pod_lists
        )
    finally:
        webhook.stop()


@pytest.mark.slow
def test_an_api_installed_later_is_discovered(make_api, monkeypatch):
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "REDISCOVER_SECONDS", 0.2)
    api = make_api(cluster([node("n0", 8)]))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready)
        api.served["resource.k8s.io/v1"] = DRA_V1  # the DRA API appears (an upgrade, a feature gate)
        for plural in DRA_V1:
            api.events[FakeApiServer.path("resource.k8s.io/v1", plural)] = queue.Queue()
        assert wait_for(lambda: webhook.ready and "gpu.nvidia.com" in webhook.snapshot.inventory.device_classes)
    finally:
        webhook.stop()


# --- an API that cannot be listed -------------------------------------------------------------

# What the API server answers a list of custom resources whose conversion webhook is down.
CONVERSION_DOWN = (
    500,
    'conversion webhook for kueue.x-k8s.io/v1beta1, Kind=LocalQueue failed: Post "https://kueue-webhook-service.'
    'kueue-system.svc:443/convert?timeout=30s": dial tcp 10.96.0.12:443: connect: connection refused',
)
KUEUE = {"clusterqueues": [], "localqueues": [], "resourceflavors": []}


class Served:
    """The webhook over HTTPS on loopback, its live inventory read from ``api``."""

    def __init__(self, tmp_path: Path, api: FakeApiServer) -> None:
        from webhook_helpers import Client, issue_pair

        from gpulint.webhook.server import build_server

        ca = trustme.CA()
        cert, key = issue_pair(ca, tmp_path / "tls")
        options = ServeOptions(host="127.0.0.1", port=0, tls_cert=str(cert), tls_key=str(key), live_inventory=True)
        self.server, self.webhook = build_server(Config(), options, api.configuration())
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.client = Client(self.server.server_address[1], ca)

    def metric(self, name: str) -> str | None:
        lines = self.client.get("/metrics")[1].splitlines()
        return next((line.rpartition(" ")[2] for line in lines if line.startswith(name + " ")), None)

    def stop(self) -> None:
        self.webhook.stop()
        self.server.shutdown()
        self.server.server_close()


def test_an_api_that_cannot_be_listed_holds_back_nothing_and_readyz_names_it(make_api, tmp_path):
    """The attack as found: one API's list fails (a CRD whose conversion webhook is down). Before, every later
    inventory update waited for it, nodes included, while /readyz said ready. Now the rest is published, the
    failing kind is not taken as listed (its absence proves nothing), and /readyz and /metrics say so."""
    api = make_api(cluster([node("n0", 8)], **{"kueue.x-k8s.io__v1beta1": KUEUE}))
    api.failing["/apis/kueue.x-k8s.io/v1beta1/localqueues"] = CONVERSION_DOWN
    served = Served(tmp_path, api)
    try:
        assert wait_for(lambda: served.webhook.ready), served.webhook.waiting_for()
        inventory = served.webhook.snapshot.inventory
        assert inventory.lists("ClusterQueue") and not inventory.lists("LocalQueue")
        status, text = served.client.get("/readyz")
        assert status == 200
        assert text.startswith("ready; stale: localqueues.kueue.x-k8s.io (ApiStatusError: GET ")
        assert "HTTP 500 conversion webhook for kueue.x-k8s.io/v1beta1, Kind=LocalQueue failed" in text
        assert served.metric('gpulint_inventory_api_synced{api="localqueues.kueue.x-k8s.io"}') == "0"
        assert served.metric('gpulint_inventory_api_synced{api="nodes.core"}') == "1"
        assert int(served.metric('gpulint_inventory_api_errors_total{api="localqueues.kueue.x-k8s.io"}')) >= 1
        nodes = "/api/v1/nodes"
        assert wait_for(lambda: (nodes, "10") in api.watch_versions)
        api.events[nodes].put({"type": "ADDED", "object": node("big", 16)})  # updates go on
        assert wait_for(lambda: allowed(served.webhook, gpu_pod(16)))
        del api.failing["/apis/kueue.x-k8s.io/v1beta1/localqueues"]  # the conversion webhook is back
        assert wait_for(lambda: served.client.get("/readyz")[1] == "ready\n", 5)
        assert wait_for(lambda: served.webhook.snapshot.inventory.lists("LocalQueue"))
    finally:
        served.stop()


def test_an_api_listed_once_that_fails_its_relist_is_stale_not_frozen(make_api, tmp_path, monkeypatch):
    """Our own attack of the same class: an API listed at start whose relist later fails (its watch ended with
    410 Gone while its conversion webhook is down). Its objects stay (the last listing), but its kind is no
    longer taken as listed, /readyz names it, and the other APIs' updates go on."""
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "RETRY_SECONDS", 0.2)
    api = make_api(cluster([node("n0", 8)], **{"resource.k8s.io__v1": DRA_V1}))
    served = Served(tmp_path, api)
    classes = "/apis/resource.k8s.io/v1/deviceclasses"
    try:
        assert wait_for(lambda: served.webhook.ready and served.client.get("/readyz")[1] == "ready\n")
        assert wait_for(lambda: (classes, "10") in api.watch_versions)
        api.failing[classes] = (503, "the server is currently unable to handle the request")
        gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
        api.events[classes].put({"type": "ERROR", "object": gone})
        assert wait_for(lambda: "stale: deviceclasses.resource.k8s.io" in served.client.get("/readyz")[1])
        assert wait_for(lambda: not served.webhook.snapshot.inventory.lists("DeviceClass"))
        assert "gpu.nvidia.com" in served.webhook.snapshot.inventory.device_classes  # the last listing, kept
        assert served.metric('gpulint_inventory_api_synced{api="deviceclasses.resource.k8s.io"}') == "0"
        api.events["/api/v1/nodes"].put({"type": "ADDED", "object": node("big", 16)})
        assert wait_for(lambda: allowed(served.webhook, gpu_pod(16)))
    finally:
        served.stop()


def test_a_list_that_never_ends_is_bounded_and_named(make_api, tmp_path, monkeypatch):
    """The attack as found: a list whose every page has a continue token (a broken or hostile aggregated API)
    grew memory without bound, and the inventory was never published. Now a list ends at MAX_LIST_ITEMS objects
    (300,000; 40 here) or MAX_LIST_PAGES pages (10,000; 30 here), and that API is named stale. Our own attack of
    the same class: pages with no objects at all, each with a token, end at the page bound."""
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "MAX_LIST_ITEMS", 40)
    monkeypatch.setattr(live, "MAX_LIST_PAGES", 30)
    api = make_api(cluster([node("n0", 8)], **{"kueue.x-k8s.io__v1beta1": KUEUE}))
    api.endless["/apis/kueue.x-k8s.io/v1beta1/clusterqueues"] = 3  # 3 objects a page: past 40 objects
    api.endless["/apis/kueue.x-k8s.io/v1beta1/localqueues"] = 0  # empty pages: past 30 pages
    served = Served(tmp_path, api)
    try:
        assert wait_for(lambda: served.webhook.ready), served.webhook.waiting_for()
        text = served.client.get("/readyz")[1]
        assert (
            "clusterqueues.kueue.x-k8s.io (LiveInventoryError: list clusterqueues.kueue.x-k8s.io: over 40 objects"
            in text
        )
        assert "localqueues.kueue.x-k8s.io (LiveInventoryError: list localqueues.kueue.x-k8s.io: over 30 pages" in text
        assert len(served.webhook.snapshot.inventory.nodes) == 1
        pages = [r for r in api.requests if r.startswith("/apis/kueue.x-k8s.io/v1beta1/localqueues?")]
        assert len(pages) <= 30 * 3  # at most three attempts so far, each cut at 30 pages
    finally:
        served.stop()


def test_an_expired_token_shows_in_the_metrics(make_api, tmp_path, monkeypatch):
    """The attack as found: after the token expires, every list fails with 401 and the inventory stays as it
    was; only the log said so. Now /metrics counts the 401s and says the credentials are rejected, and /readyz
    names what is stale. Our own: a token that works again clears the gauge."""
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "RETRY_SECONDS", 0.2)
    api = make_api(cluster([node("n0", 8)]))
    served = Served(tmp_path, api)
    nodes = "/api/v1/nodes"
    try:
        assert wait_for(lambda: served.webhook.ready and (nodes, "10") in api.watch_versions)
        assert served.metric("gpulint_inventory_credentials_rejected") == "0"
        api.token = "rotated"  # the webhook's token is no longer accepted
        gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
        api.events[nodes].put({"type": "ERROR", "object": gone})  # the watch ends: a relist, refused
        assert wait_for(lambda: served.metric("gpulint_inventory_credentials_rejected") == "1")
        assert int(served.metric("gpulint_inventory_unauthorized_total")) >= 1
        assert (
            "stale: nodes.core (ApiStatusError: GET /api/v1/nodes: HTTP 401 Unauthorized)"
            in served.client.get("/readyz")[1]
        )
        api.token = TOKEN
        assert wait_for(lambda: served.metric("gpulint_inventory_credentials_rejected") == "0")
    finally:
        served.stop()


# --- the CLI: one read through a kubeconfig, as a user runs it ---------------------------------


@pytest.mark.slow
def test_cli_check_explain_and_inventory_read_the_cluster_through_a_kubeconfig_context(make_api, tmp_path):
    api = make_api(cluster([node("n0", 8), node("n1", 8)], **{"resource.k8s.io__v1": DRA_V1}))
    kubeconfig = api.kubeconfig(tmp_path)
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    live = ("--live-inventory", "--kubeconfig", str(kubeconfig), "--context", "gpu-cluster")

    checked = gpulint("check", "job.yaml", *live, cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert "job.yaml:12:" in checked.stdout and "error[gpu-unschedulable]" in checked.stdout
    assert "0/2 nodes are available: 2 Insufficient nvidia.com/gpu" in checked.stdout

    explained = gpulint("explain", "job.yaml", *live, cwd=tmp_path)
    assert explained.returncode == 1, explained.stderr
    assert "Insufficient nvidia.com/gpu" in explained.stdout

    summary = gpulint("inventory", *live, "--format", "json", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["summary"]["nodes"] == 2


@pytest.mark.slow
def test_cli_live_inventory_errors_are_usage_errors(make_api, tmp_path):
    api = make_api(cluster([node("n0", 8)]))
    kubeconfig = api.kubeconfig(tmp_path)
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    # the kubeconfig's current context points at a port nothing listens on
    unreachable = gpulint("check", "job.yaml", "--live-inventory", "--kubeconfig", str(kubeconfig), cwd=tmp_path)
    assert unreachable.returncode == 2
    assert unreachable.stderr.startswith("gpulint: error: --live-inventory: GET /apis:")
    assert "Traceback" not in unreachable.stderr

    missing = gpulint("check", "job.yaml", "--live-inventory", "--kubeconfig", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2 and "cannot load the cluster configuration" in missing.stderr

    context_alone = gpulint("check", "job.yaml", "--context", "gpu-cluster", cwd=tmp_path)
    assert context_alone.returncode == 2 and "options of --live-inventory" in context_alone.stderr

    both = gpulint("check", "job.yaml", "--live-inventory", "--inventory", "x.yaml", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr


def test_every_inventory_api_names_versions_newest_first():
    rank = {"v2": -1, "v1": 0, "v1beta2": 1, "v1beta1": 2, "v1alpha3": 3, "v1alpha2": 4, "v1alpha1": 5}
    for api in INVENTORY_APIS:
        assert list(api.versions) == sorted(api.versions, key=rank.__getitem__), api


def test_the_publisher_sleeps_until_an_api_still_being_listed_is_listed(make_api):
    """Watch events on the APIs listed so far mark the inventory dirty, but nothing is published until
    every served API is listed; meanwhile the publisher waits on a condition, woken only by a change
    (it used to poll at 20 Hz). Once the last list arrives, one inventory holds everything."""
    api = make_api(cluster([node("n0", 8)], **{"resource.k8s.io__v1": DRA_V1}))
    slices = "/apis/resource.k8s.io/v1/resourceslices"
    api.held[slices] = threading.Event()
    published: list = []
    live = LiveInventory(Transport(api.configuration()), published.append, lambda *a, **k: None)
    looks = [0]
    synced = live._settled

    def counted() -> bool:
        looks[0] += 1
        return synced()

    live._settled = counted  # type: ignore[method-assign]
    live.start()
    try:
        nodes = "/api/v1/nodes"
        assert wait_for(lambda: (nodes, "10") in api.watch_versions)
        for name in ("n1", "n2", "n3"):
            api.events[nodes].put({"type": "ADDED", "object": node(name, 8)})
        assert wait_for(lambda: api.events[nodes].empty())
        # The events reach the tables and wake the publisher; on a loaded machine that takes a while,
        # so wait until it has stopped looking rather than for a fixed time.
        assert wait_for(lambda: settled_looks(looks))
        quiet = looks[0]
        time.sleep(0.6)  # nothing changes: a poller would look ~12 times
        assert looks[0] == quiet
        assert published == [] and live.pending() == ["resourceslices.resource.k8s.io"]
        api.held[slices].set()
        assert wait_for(lambda: live.ready)
        assert len(published) == 1 and {n.name for n in published[0].nodes} == {"n0", "n1", "n2", "n3"}
    finally:
        api.held[slices].set()
        live.stop()


# --- node pools: the nodes that can exist -------------------------------------------------------


def cpu_node(name: str) -> dict:
    """A system node of a scale-from-zero cluster: no GPU, no extended resource."""
    labels = {"kubernetes.io/hostname": name, "karpenter.sh/nodepool": "system"}
    return {"metadata": {"name": name, "uid": f"uid-{name}", "labels": labels}, "status": {"capacity": {"cpu": "4"}}}


# Shaped like the Karpenter docs' GPU NodePool (karpenter.sh/docs/concepts/nodepools): the g5 family,
# whose largest type (g5.48xlarge) has 8 GPUs; as the API server returns it (no apiVersion per item).
GPU_NODEPOOL = {
    "metadata": {"name": "gpu", "uid": "uid-nodepool-gpu", "resourceVersion": "11"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}],
            }
        },
        "limits": {"nvidia.com/gpu": 64},
    },
}
# A cluster-api MachineDeployment at zero replicas with the autoscaler's scale-from-zero annotations.
GPU_MACHINE_DEPLOYMENT = {
    "metadata": {
        "name": "gpu-md-0",
        "namespace": "default",
        "uid": "uid-md",
        "annotations": {
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0",
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "3",
            "capacity.cluster-autoscaler.kubernetes.io/cpu": "32",
            "capacity.cluster-autoscaler.kubernetes.io/memory": "256G",
            "capacity.cluster-autoscaler.kubernetes.io/gpu-type": "nvidia.com/gpu",
            "capacity.cluster-autoscaler.kubernetes.io/gpu-count": "4",
        },
    },
    "spec": {"clusterName": "demo", "replicas": 0, "template": {"spec": {"clusterName": "demo"}}},
}


@pytest.mark.slow
def test_node_pools_are_listed_and_watched_and_the_webhook_allows_what_a_pool_would_serve(make_api):
    api = make_api(cluster([cpu_node("system-0")], **{"karpenter.sh__v1": {"nodepools": []}}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        # no GPU node and no pool: nothing proves a GPU pod cannot run (a warning, admitted)
        assert allowed(webhook, gpu_pod(9))
        nodepools = "/apis/karpenter.sh/v1/nodepools"
        assert wait_for(lambda: any(path == nodepools for path, _ in api.watch_versions))
        api.events[nodepools].put({"type": "ADDED", "object": GPU_NODEPOOL})
        # the NodePool's g5 types: 8 GPUs fit a g5.48xlarge after a scale-up, 9 fit no type it allows
        assert wait_for(lambda: not allowed(webhook, gpu_pod(9)))
        assert allowed(webhook, gpu_pod(8))
        (pool,) = webhook.snapshot.inventory.pool_specs
        assert (pool.system, pool.name, pool.provider) == ("Karpenter NodePool", "gpu", "aws")
        api.events[nodepools].put({"type": "DELETED", "object": GPU_NODEPOOL})
        assert wait_for(lambda: allowed(webhook, gpu_pod(9)))
    finally:
        webhook.stop()


def test_cluster_api_machine_deployments_are_read_at_the_served_version(make_api):
    api = make_api(
        cluster(
            [cpu_node("system-0")], **{"cluster.x-k8s.io__v1beta1": {"machinedeployments": [GPU_MACHINE_DEPLOYMENT]}}
        )
    )
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        listed = {urlparse(r).path for r in api.requests if "watch=true" not in r and "limit=" in r}
        assert "/apis/cluster.x-k8s.io/v1beta1/machinedeployments" in listed
        assert "/apis/cluster.x-k8s.io/v1beta2/machinedeployments" not in listed  # not served
        (pool,) = webhook.snapshot.inventory.pool_specs
        assert (pool.system, pool.name, pool.max_size) == ("MachineDeployment", "gpu-md-0", 3)
        assert allowed(webhook, gpu_pod(4)) and not allowed(webhook, gpu_pod(5))
    finally:
        webhook.stop()


@pytest.mark.slow
def test_cli_live_inventory_reads_node_pools(make_api, tmp_path):
    api = make_api(cluster([cpu_node("system-0")], **{"karpenter.sh__v1": {"nodepools": [GPU_NODEPOOL]}}))
    kubeconfig = api.kubeconfig(tmp_path)
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    live = ("--live-inventory", "--kubeconfig", str(kubeconfig), "--context", "gpu-cluster")
    checked = gpulint("check", "job.yaml", *live, cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert "error[gpu-unschedulable]" in checked.stdout
    assert "Karpenter NodePool gpu: every instance type it allows has at most 8 nvidia.com/gpu" in checked.stdout
    (tmp_path / "job.yaml").write_text(JOB.replace("nvidia.com/gpu: 16", "nvidia.com/gpu: 8"), encoding="utf-8")
    scaled = gpulint("check", "job.yaml", *live, "--ignore", "dev-shm-missing", cwd=tmp_path)
    assert scaled.returncode == 0, scaled.stdout + scaled.stderr


EC2_NODECLASS = {
    "metadata": {"name": "default", "uid": "uid-nodeclass"},
    "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "KarpenterNodeRole-demo"},
    "status": {"subnets": [{"id": "subnet-0a1b2c3d4e5f60718", "zone": "us-west-2a", "zoneID": "usw2-az1"}]},
}


def zonal_gpu_pod(zone: str) -> dict:
    pod = gpu_pod(1)
    pod["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": zone}
    return pod


@pytest.mark.slow
def test_the_ec2nodeclass_read_live_gives_the_zones_its_nodepool_launches_in(make_api):
    served = {"karpenter.sh__v1": {"nodepools": [GPU_NODEPOOL]}, "karpenter.k8s.aws__v1": {"ec2nodeclasses": []}}
    api = make_api(cluster([cpu_node("system-0")], **served))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert allowed(webhook, zonal_gpu_pod("us-west-2b"))  # no NodeClass status: any zone
        nodeclasses = "/apis/karpenter.k8s.aws/v1/ec2nodeclasses"
        assert wait_for(lambda: any(path == nodeclasses for path, _ in api.watch_versions))
        api.events[nodeclasses].put({"type": "ADDED", "object": EC2_NODECLASS})
        assert wait_for(lambda: not allowed(webhook, zonal_gpu_pod("us-west-2b")))
        assert allowed(webhook, zonal_gpu_pod("us-west-2a"))
    finally:
        webhook.stop()


# A kubebuilder CRD as the API server serves it: descriptions on every field, status, printer columns.
FINETUNE_CRD = {
    "metadata": {"name": "finetunes.ml.example.com", "uid": "uid-crd-finetune", "resourceVersion": "12"},
    "spec": {
        "group": "ml.example.com",
        "names": {"kind": "FineTune", "listKind": "FineTuneList", "plural": "finetunes", "singular": "finetune"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "additionalPrinterColumns": [{"name": "Model", "type": "string", "jsonPath": ".spec.model"}],
                "schema": {
                    "openAPIV3Schema": {
                        "description": "FineTune is the Schema for the finetunes API.",
                        "type": "object",
                        "properties": {
                            "spec": {
                                "description": "FineTuneSpec defines the desired state of FineTune.",
                                "type": "object",
                                "required": ["model"],
                                "properties": {
                                    "model": {"description": "The model to fine-tune.", "type": "string"},
                                    # a field named "description" is a field, not documentation
                                    "description": {"type": "string"},
                                    "output": {"type": "object", "properties": {"bucket": {"type": "string"}}},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
    "status": {"acceptedNames": {"kind": "FineTune", "plural": "finetunes"}, "storedVersions": ["v1"]},
}
# An in-house RayJob CRD that keeps unknown fields in spec: the cluster enforces it, not kuberay's bundled one.
RAYJOB_CRD = {
    "metadata": {"name": "rayjobs.ray.io", "uid": "uid-crd-rayjob"},
    "spec": {
        "group": "ray.io",
        "names": {"kind": "RayJob", "plural": "rayjobs"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                    }
                },
            }
        ],
    },
}
FINETUNE_TYPO = {
    "apiVersion": "ml.example.com/v1",
    "kind": "FineTune",
    "metadata": {"name": "llama-sft"},
    "spec": {"model": "meta-llama/Llama-3.1-8B", "description": "sft", "outputs": {"bucket": "s3://models"}},
}
RAYJOB_TYPO = {
    "apiVersion": "ray.io/v1",
    "kind": "RayJob",
    "metadata": {"name": "train"},
    "spec": {"entrypoint": "python train.py", "rayClusterSpc": {}},
}


def schema_warnings(webhook: Webhook, obj: dict) -> list[str]:
    body = webhook.review(json.dumps(review(obj)).encode()).body
    return [w for w in body["response"].get("warnings", []) if w.startswith("gpulint schema-invalid:")]


@pytest.mark.slow
def test_a_crd_added_by_watch_validates_its_instances_and_deleting_it_returns_to_the_bundled_schema(make_api):
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    api = make_api(cluster([node("n0", 8)], **{"apiextensions.k8s.io__v1": {"customresourcedefinitions": []}}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        # no CRD: FineTune has no schema (not checked); RayJob has kuberay's bundled one
        assert schema_warnings(webhook, FINETUNE_TYPO) == []
        (bundled,) = schema_warnings(webhook, RAYJOB_TYPO)
        assert 'unknown field "spec.rayClusterSpc"' in bundled and "kuberay" in bundled
        assert wait_for(lambda: any(path == crds for path, _ in api.watch_versions))
        api.events[crds].put({"type": "ADDED", "object": FINETUNE_CRD})
        api.events[crds].put({"type": "ADDED", "object": RAYJOB_CRD})
        assert wait_for(lambda: schema_warnings(webhook, FINETUNE_TYPO) != [])
        (typo,) = schema_warnings(webhook, FINETUNE_TYPO)
        assert typo.startswith('gpulint schema-invalid: unknown field "spec.outputs" in ml.example.com/v1 FineTune')
        assert "CRD finetunes.ml.example.com in live" in typo
        assert schema_warnings(webhook, RAYJOB_TYPO) == []  # the cluster's RayJob CRD keeps unknown fields
        # kept of a CRD: what the schema code reads (no descriptions, no status, no printer columns)
        (kept,) = [crd.data for crd in webhook.snapshot.inventory.crds if crd.data["metadata"]["name"][0] == "f"]
        text = json.dumps(kept)
        assert "the Schema for" not in text and "The model to fine-tune" not in text
        assert "status" not in kept and "additionalPrinterColumns" not in text
        spec_fields = kept["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        assert set(spec_fields) == {"model", "description", "output"}
        api.events[crds].put({"type": "DELETED", "object": FINETUNE_CRD})
        api.events[crds].put({"type": "DELETED", "object": RAYJOB_CRD})
        assert wait_for(lambda: schema_warnings(webhook, FINETUNE_TYPO) == [])
        assert wait_for(lambda: len(schema_warnings(webhook, RAYJOB_TYPO)) == 1)
        assert "kuberay" in schema_warnings(webhook, RAYJOB_TYPO)[0]
    finally:
        webhook.stop()


def test_crds_are_listed_in_small_pages(make_api):
    many = [
        {**FINETUNE_CRD, "metadata": {"name": f"finetunes{i}.ml.example.com", "uid": f"uid-crd-{i}"}}
        for i in range(CRD_PAGE_SIZE + 3)
    ]
    api = make_api(cluster([node("n0", 8)], **{"apiextensions.k8s.io__v1": {"customresourcedefinitions": many}}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert len(webhook.snapshot.inventory.crds) == CRD_PAGE_SIZE + 3
        pages = [r for r in api.requests if r.startswith("/apis/apiextensions.k8s.io/v1/customresourcedefinitions?")]
        assert [parse_qs(urlparse(r).query)["limit"] for r in pages if "watch" not in r] == [[str(CRD_PAGE_SIZE)]] * 2
    finally:
        webhook.stop()


GPU_SLICE = {
    "metadata": {"name": "n0-gpu.nvidia.com-4x7qd", "uid": "uid-slice-n0"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "n0",
        "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}],
    },
}
MAINTENANCE_RULE = {
    "metadata": {"name": "drain-n0-gpu-0", "uid": "uid-rule"},
    "spec": {
        "deviceSelector": {"driver": "gpu.nvidia.com", "pool": "n0", "device": "gpu-0"},
        "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "NoSchedule"},
    },
}


def one_gpu_claim(*tolerations: dict) -> dict:
    request: dict = {"deviceClassName": "gpu.nvidia.com", "count": 1}
    if tolerations:
        request["tolerations"] = list(tolerations)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "one-gpu", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}},
    }


@pytest.mark.slow
@pytest.mark.parametrize("rule_version", ["v1", "v1alpha3"])
def test_a_device_taint_rule_added_by_watch_makes_an_untolerating_claim_unallocatable(make_api, rule_version):
    dra = {**DRA_V1, "resourceslices": [GPU_SLICE]}
    groups = {"resource.k8s.io__v1": dra, f"resource.k8s.io__{rule_version}": {"devicetaintrules": []}}
    if rule_version == "v1":
        groups = {"resource.k8s.io__v1": {**dra, "devicetaintrules": []}}
    api = make_api(cluster([node("n0", 0)], **groups))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        rules = f"/apis/resource.k8s.io/{rule_version}/devicetaintrules"
        assert wait_for(lambda: any(path == rules for path, _ in api.watch_versions))
        assert allowed(webhook, one_gpu_claim())
        api.events[rules].put({"type": "ADDED", "object": MAINTENANCE_RULE})
        assert wait_for(lambda: not allowed(webhook, one_gpu_claim()))
        assert len(webhook.snapshot.inventory.taint_rules) == 1
        # a claim that tolerates the taint may still take the device; another key does not help
        assert allowed(webhook, one_gpu_claim({"key": "example.com/maintenance", "operator": "Exists"}))
        assert not allowed(webhook, one_gpu_claim({"key": "example.com/other", "operator": "Exists"}))
        api.events[rules].put({"type": "DELETED", "object": MAINTENANCE_RULE})
        assert wait_for(lambda: allowed(webhook, one_gpu_claim()))
    finally:
        webhook.stop()


# --- the pool watch: discovery, a pool API that cannot be listed, 410 Gone, MachineSets ------------

NODEPOOLS = "/apis/karpenter.sh/v1/nodepools"
FORBIDDEN = (
    403,
    'nodepools.karpenter.sh is forbidden: User "system:serviceaccount:gpulint-system:gpulint" cannot list '
    'resource "nodepools" in API group "karpenter.sh" at the cluster scope',
)


def answer(webhook: Webhook, obj: dict) -> dict:
    return webhook.review(json.dumps(review(obj)).encode()).body["response"]


@pytest.mark.slow
def test_a_pool_api_not_served_is_absent_and_one_not_listed_leaves_the_pool_set_open(make_api, tmp_path, monkeypatch):
    """Karpenter not installed: no NodePool exists, so 8 GPUs on a 4-GPU cluster is denied. Installed but
    forbidden (the ClusterRole lacks nodepools): a pool not read may add the node, so it is admitted and /readyz
    names the stale API; the list is retried every RETRY_SECONDS, not in a loop. Once listed, the pool's g5 types
    decide: 8 GPUs fit a g5.48xlarge, 9 fit none. Its watch ends with 410 Gone after the pool was deleted: the
    relist drops it and 8 GPUs are denied again."""
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "RETRY_SECONDS", 0.2)
    absent = make_api(cluster([node("gpu-0", 4)]))
    webhook = serve(absent)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert not any(r.startswith("/apis/karpenter.sh/") for r in absent.requests)  # discovery said: not served
        assert webhook.snapshot.inventory.lists("NodePool")
        assert "gpu-unschedulable" in answer(webhook, gpu_pod(8))["status"]["message"]
    finally:
        webhook.stop()

    api = make_api(cluster([node("gpu-0", 4)], **{"karpenter.sh__v1": {"nodepools": [GPU_NODEPOOL]}}))
    api.failing[NODEPOOLS] = FORBIDDEN
    served = Served(tmp_path, api)
    try:
        assert wait_for(lambda: served.webhook.ready), served.webhook.waiting_for()
        assert (
            "stale: nodepools.karpenter.sh (ApiStatusError: GET /apis/karpenter.sh/v1/nodepools: HTTP 403"
            in (served.client.get("/readyz")[1])
        )
        inventory = served.webhook.snapshot.inventory
        assert not inventory.lists("NodePool") and inventory.unlisted_kinds == {"NodePool"}
        assert answer(served.webhook, gpu_pod(8))["allowed"] is True
        lists = lambda: len([r for r in api.requests if r.startswith(NODEPOOLS + "?") and "watch" not in r])
        before = lists()
        time.sleep(1.0)
        assert 2 <= lists() - before <= 7  # retried every 0.2 s while forbidden, not in a tight loop

        del api.failing[NODEPOOLS]  # the ClusterRole is fixed
        assert wait_for(lambda: served.webhook.snapshot.inventory.lists("NodePool"))
        assert wait_for(lambda: served.webhook.snapshot.inventory.pool_specs != [])
        assert answer(served.webhook, gpu_pod(8))["allowed"] is True  # after a scale-up
        denied = answer(served.webhook, gpu_pod(9))
        assert denied["allowed"] is False
        assert "none of its 1 node pool can add a node for it" in denied["status"]["message"]

        api.served["karpenter.sh/v1"]["nodepools"] = []  # deleted while the watch was down
        assert wait_for(lambda: (NODEPOOLS, "10") in api.watch_versions)
        gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
        api.events[NODEPOOLS].put({"type": "ERROR", "object": gone})
        assert wait_for(lambda: served.webhook.snapshot.inventory.pool_specs == [])
        assert answer(served.webhook, gpu_pod(8))["allowed"] is False
    finally:
        served.stop()


def machine_set(name: str, gpus: int, owner: str = "") -> dict:
    """A cluster-api MachineSet with the autoscaler's scale-from-zero annotations; ``owner``: the
    MachineDeployment that made it (as the MachineDeployment controller sets the reference)."""
    obj = json.loads(json.dumps(GPU_MACHINE_DEPLOYMENT))
    obj["metadata"].update(name=name, uid=f"uid-{name}")
    obj["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/gpu-count"] = str(gpus)
    if owner:
        obj["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "cluster.x-k8s.io/v1beta1",
                "kind": "MachineDeployment",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return obj


def test_machine_sets_are_watched_and_one_a_machine_deployment_owns_is_not_a_pool(make_api):
    sets = [machine_set("gpu-ms-0", 4), machine_set("big-md-0-7f9c4", 8, owner="big-md-0")]
    api = make_api(cluster([cpu_node("system-0")], **{"cluster.x-k8s.io__v1beta1": {"machinesets": sets}}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert [pool.name for pool in webhook.snapshot.inventory.pool_specs] == ["gpu-ms-0"]
        assert allowed(webhook, gpu_pod(4)) and not allowed(webhook, gpu_pod(8))
    finally:
        webhook.stop()


# Cluster Autoscaler's status ConfigMap (1.30+ YAML) naming an AKS scale set no pool gpulint reads describes.
AUTOSCALER_STATUS = {
    "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system", "uid": "uid-ca-status"},
    "data": {
        "status": "autoscalerStatus: Running\nnodeGroups:\n- name: aks-gpupool-31415926-vmss\n  health:\n"
        "    status: Healthy\n    cloudProviderTarget: 1\n    minSize: 0\n    maxSize: 4\n"
        "  scaleUp: {status: NoActivity}\n"
    },
}


def test_the_autoscaler_status_config_map_is_watched_by_name_and_its_groups_leave_the_verdict_open(make_api):
    api = make_api(cluster([node("gpu-0", 4)]))
    webhook = serve(api)
    configmaps = "/api/v1/configmaps"  # the fake serves kube-system's from the same collection
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        watched = [r for r in api.requests if r.startswith("/api/v1/namespaces/kube-system/configmaps?")]
        assert watched and all("fieldSelector=metadata.name%3Dcluster-autoscaler-status" in r for r in watched)
        assert not any(r.startswith(configmaps + "?") for r in api.requests)  # never every ConfigMap
        assert not allowed(webhook, gpu_pod(8))
        assert wait_for(lambda: (configmaps, "10") in api.watch_versions)
        api.events[configmaps].put({"type": "ADDED", "object": AUTOSCALER_STATUS})
        assert wait_for(lambda: allowed(webhook, gpu_pod(8)))  # a scale set may add a node of any shape
        inventory = webhook.snapshot.inventory
        assert [g.name for g in inventory.autoscaler_groups] == ["aks-gpupool-31415926-vmss"]
        assert not inventory.lists("ConfigMap")  # one ConfigMap read: a missing one is not proven missing
        api.events[configmaps].put({"type": "DELETED", "object": AUTOSCALER_STATUS})
        assert wait_for(lambda: not allowed(webhook, gpu_pod(8)))
    finally:
        webhook.stop()


def test_cli_live_inventory_reads_the_autoscaler_status_but_not_as_every_config_map(make_api, tmp_path):
    from gpulint.cli.live import LiveCluster, read_live

    api = make_api(cluster([node("gpu-0", 4)]))
    api.served["v1"]["configmaps"] = [AUTOSCALER_STATUS]
    inventory, _sources = read_live(LiveCluster(str(api.kubeconfig(tmp_path)), "gpu-cluster"))
    assert [g.name for g in inventory.autoscaler_groups] == ["aks-gpupool-31415926-vmss"]
    assert inventory.lists("Node") and not inventory.lists("ConfigMap")


# --- cluster-api Machines and Cluster Autoscaler's Deployment: the template a live node gives its group ----------

CAPI_PROVIDER_ID = "aws:///us-east-1a/i-0c2f4e6a8b0d1f3a5"
VALIDATION = "gpu.example.com/validation"  # an operator's taint while a new node's GPUs are burned in
MACHINES = "/apis/cluster.x-k8s.io/v1beta1/machines"
DEPLOYMENTS = "/apis/apps/v1/deployments"  # the fake serves kube-system's from the same collection


def capi_node() -> dict:
    """gpu-md-0's one node: 8 GPUs, where its scale-from-zero annotations say 4; still tainted."""
    obj = node("capi-0", 8)
    obj["spec"] = {
        "providerID": CAPI_PROVIDER_ID,
        "taints": [{"key": VALIDATION, "value": "pending", "effect": "NoSchedule"}],
    }
    return obj


# As `kubectl get machine -o json` shows one the MachineSet controller made (its managedFields cut short).
CAPI_MACHINE = {
    "metadata": {
        "name": "gpu-md-0-7c9f8d6b5-q8m4x",
        "namespace": "default",
        "uid": "uid-machine-q8m4x",
        "resourceVersion": "12",
        "labels": {"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/set-name": "gpu-md-0-7c9f8d6b5"},
        "ownerReferences": [
            {
                "apiVersion": "cluster.x-k8s.io/v1beta1",
                "kind": "MachineSet",
                "name": "gpu-md-0-7c9f8d6b5",
                "uid": "uid-gpu-md-0-7c9f8d6b5",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": [{"manager": "manager", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1"}],
    },
    "spec": {
        "clusterName": "demo",
        "providerID": CAPI_PROVIDER_ID,
        "bootstrap": {"dataSecretName": "gpu-md-0-7c9f8d6b5-q8m4x"},
        "infrastructureRef": {"kind": "AWSMachine", "name": "gpu-md-0-7c9f8d6b5-q8m4x"},
    },
    "status": {"nodeRef": {"kind": "Node", "name": "capi-0"}, "phase": "Running"},
}


def autoscaler(*flags: str) -> dict:
    """Cluster Autoscaler's Deployment as its Helm chart renders it for the clusterapi provider (trimmed)."""
    container = {
        "name": "clusterapi-cluster-autoscaler",
        "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.1",
        "command": ["./cluster-autoscaler", "--cloud-provider=clusterapi", "--namespace=kube-system", *flags],
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "300Mi"}},
    }
    return {
        "metadata": {"name": "cluster-autoscaler", "namespace": "kube-system", "uid": "uid-ca"},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
    }


COREDNS = {
    "metadata": {"name": "coredns", "namespace": "kube-system", "uid": "uid-coredns"},
    "spec": {
        "template": {"spec": {"containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.12.0"}]}}
    },
}


def capi_cluster(machines: list[dict]) -> dict:
    deployment = json.loads(json.dumps(GPU_MACHINE_DEPLOYMENT))
    deployment["spec"]["replicas"] = 1
    machine_sets = [machine_set("gpu-md-0-7c9f8d6b5", 4, owner="gpu-md-0")]
    return cluster(
        [capi_node()],
        **{
            "cluster.x-k8s.io__v1beta1": {
                "machinedeployments": [deployment],
                "machinesets": machine_sets,
                "machines": machines,
            },
            "apps__v1": {"deployments": [COREDNS, autoscaler()]},
        },
    )


def pod(gpus: int) -> dict:
    """A GPU pod that tolerates no taint."""
    obj = gpu_pod(gpus)
    del obj["spec"]["tolerations"]
    return obj


def denial(webhook: Webhook, obj: dict) -> str:
    response = answer(webhook, obj)
    return "" if response["allowed"] else response["status"]["message"]


@pytest.mark.slow
def test_a_machine_ties_a_node_to_its_group_and_the_autoscalers_flags_decide_its_template(make_api):
    """8 GPUs asked; the group's annotations say 4, its live node has 8 but a taint the pod does not tolerate. The
    Machine, once watched, ties the node to the group (the autoscaler copies it: the taint stays, denied); the
    Deployment updated with --status-taint drops the taint from the copy (admitted: a scale-up fits it); with
    --startup-taint instead the node is no template and the annotations stand (denied); the Machine deleted, the
    node is tied to no group."""
    api = make_api(capi_cluster([]))
    webhook = serve(api)
    four = "MachineDeployment gpu-md-0: its nodes have 4 nvidia.com/gpu; the pod asks for 8"
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        read = [r for r in api.requests if urlparse(r).path.endswith("/deployments")]
        assert read and all(r.startswith("/apis/apps/v1/namespaces/kube-system/deployments?") for r in read)
        inventory = webhook.snapshot.inventory
        assert inventory.autoscaler_taints is not None and inventory.autoscaler_taints.known
        assert not inventory.lists("Deployment")  # kube-system's only
        assert four in denial(webhook, pod(8))

        assert wait_for(lambda: (MACHINES, "10") in api.watch_versions)
        api.events[MACHINES].put({"type": "ADDED", "object": CAPI_MACHINE})
        assert wait_for(
            lambda: "MachineDeployment gpu-md-0: node(s) had untolerated taint(s)" in denial(webhook, pod(8))
        )

        flagged = autoscaler(f"--status-taint={VALIDATION}")
        api.events[DEPLOYMENTS].put({"type": "MODIFIED", "object": flagged})
        assert wait_for(lambda: denial(webhook, pod(8)) == "")  # a node the group adds has 8 GPUs, no taint
        assert denial(webhook, pod(9))

        api.events[DEPLOYMENTS].put({"type": "MODIFIED", "object": autoscaler(f"--startup-taint={VALIDATION}")})
        assert wait_for(lambda: four in denial(webhook, pod(8)))

        api.events[DEPLOYMENTS].put({"type": "MODIFIED", "object": flagged})
        assert wait_for(lambda: denial(webhook, pod(8)) == "")
        api.events[MACHINES].put({"type": "DELETED", "object": CAPI_MACHINE})
        assert wait_for(lambda: four in denial(webhook, pod(8)))
        api.events[DEPLOYMENTS].put({"type": "DELETED", "object": flagged})
        assert wait_for(lambda: webhook.snapshot.inventory.autoscaler_taints is None)
    finally:
        webhook.stop()


def test_machines_not_listed_leave_the_groups_template_open(make_api, tmp_path, monkeypatch):
    """Forbidden to list Machines (a chart older than the webhook): the live node the autoscaler would copy is
    unknown, so the annotations' 4 GPUs prove nothing about 8 (admitted), and /readyz names the stale API."""
    import gpulint.lint.world.live_inventory as live

    monkeypatch.setattr(live, "RETRY_SECONDS", 0.2)
    api = make_api(capi_cluster([CAPI_MACHINE]))
    message = 'machines.cluster.x-k8s.io is forbidden: User "system:serviceaccount:gpulint-system:gpulint" cannot list'
    api.failing[MACHINES] = (403, message)
    served = Served(tmp_path, api)
    try:
        assert wait_for(lambda: served.webhook.ready), served.webhook.waiting_for()
        assert "stale: machines.cluster.x-k8s.io (ApiStatusError" in served.client.get("/readyz")[1]
        assert answer(served.webhook, pod(8))["allowed"] is True
        del api.failing[MACHINES]
        assert wait_for(lambda: served.webhook.snapshot.inventory.lists("Machine"))
        assert wait_for(lambda: "untolerated taint" in denial(served.webhook, pod(8)))
    finally:
        served.stop()


def test_cli_live_inventory_reads_machines_and_the_autoscalers_flags(make_api, tmp_path):
    from gpulint.cli.live import LiveCluster, read_live

    api = make_api(capi_cluster([CAPI_MACHINE]))
    api.served["apps/v1"]["deployments"] = [COREDNS, autoscaler(f"--status-taint={VALIDATION}")]
    inventory, sources = read_live(LiveCluster(str(api.kubeconfig(tmp_path)), "gpu-cluster"))
    read = {source.display: json.loads(source.read())["items"] for source in sources}
    # kept: what capi.py and autoscaler_taints.py read; another Deployment of kube-system by name only
    (machine,) = read["live:machines.cluster.x-k8s.io"]
    assert machine["spec"] == {"providerID": CAPI_PROVIDER_ID} and "status" not in machine
    assert machine["metadata"]["ownerReferences"] == [{"kind": "MachineSet", "name": "gpu-md-0-7c9f8d6b5"}]
    coredns, kept = read["live:deployments.apps"]
    assert "spec" not in coredns
    (container,) = kept["spec"]["template"]["spec"]["containers"]
    assert set(container) == {"name", "image", "command", "env"}
    assert inventory.capi is not None
    assert inventory.capi.group_of(inventory.node_objects["capi-0"].data) == (
        "MachineDeployment",
        "default",
        "gpu-md-0",
    )
    assert inventory.autoscaler_taints is not None and inventory.autoscaler_taints.status == {VALIDATION}
    assert inventory.lists("Machine") and not inventory.lists("Deployment")


# --- The operators' controller Deployments, in any namespace: their releases (lint/world/operator_releases.py) ------

# config/components/manager as kubectl shows it (trimmed): the Kueue controller, its release in the image tag
KUEUE_CONTROLLER = {
    "metadata": {
        "name": "kueue-controller-manager",
        "namespace": "kueue-system",
        "uid": "uid-kueue",
        "labels": {"control-plane": "controller-manager"},
    },
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "manager",
                        "image": "registry.k8s.io/kueue/kueue:v0.17.2",
                        "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
                        "env": [{"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                    }
                ]
            }
        }
    },
}
SHOP = {  # an application Deployment: read by name only
    "metadata": {"name": "shop", "namespace": "web", "uid": "uid-shop"},
    "spec": {"template": {"spec": {"containers": [{"name": "shop", "image": "registry.example.com/shop:2.4"}]}}},
}
EIGHT_GROUP_RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: mm-batch
  namespace: pipelines
  labels: {kueue.x-k8s.io/queue-name: pipelines}
spec:
  entrypoint: python pipeline.py
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: head, image: "rayproject/ray:2.41.0"}]}}
    workerGroupSpecs:
""" + "".join(
    f"    - {{groupName: s{i}, replicas: 1, rayStartParams: {{}}, "
    f'template: {{spec: {{containers: [{{name: w, image: "rayproject/ray:2.41.0-gpu"}}]}}}}}}\n'
    for i in range(8)
)


@pytest.mark.slow
def test_cli_reads_operator_deployments_in_any_namespace_and_reads_on_without_the_grant(make_api, tmp_path):
    """--live-inventory lists Deployments cluster-wide for the operators' releases: the Kueue controller in
    kueue-system is kept as its image, any other Deployment by name; Kueue v0.17 then refuses a RayJob of 8 worker
    groups. Without the grant (403 at the cluster scope) the read goes on and the release is unknown: nothing said.
    The webhook never asks (its chart grants no cluster-wide Deployment read: test_chart)."""
    from gpulint.cli.live import LiveCluster, read_live

    api = make_api(cluster([node("n0", 8)], **{"apps__v1": {"deployments": [COREDNS, KUEUE_CONTROLLER, SHOP]}}))
    kubeconfig = api.kubeconfig(tmp_path)
    inventory, sources = read_live(LiveCluster(str(kubeconfig), "gpu-cluster"))
    read = {source.display: json.loads(source.read())["items"] for source in sources}
    kept = {item["metadata"]["name"]: item for item in read["live:deployments.apps/operators"]}
    assert set(kept) == {"coredns", "kueue-controller-manager", "shop"}
    assert "spec" not in kept["coredns"] and "spec" not in kept["shop"]
    (container,) = kept["kueue-controller-manager"]["spec"]["template"]["spec"]["containers"]
    assert container == {"name": "manager", "image": "registry.k8s.io/kueue/kueue:v0.17.2"}  # no args, no env
    assert any(r.startswith(DEPLOYMENTS + "?") for r in api.requests)  # cluster-wide
    assert not inventory.lists("Deployment")

    (tmp_path / "rayjob.yaml").write_text(EIGHT_GROUP_RAYJOB, encoding="utf-8")
    live = ("--live-inventory", "--kubeconfig", str(kubeconfig), "--context", "gpu-cluster")
    checked = gpulint("check", "rayjob.yaml", *live, cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert "Too many: 8: must have at most 7 items" in checked.stdout
    assert "v0.17.2 (Deployment kueue-system/kueue-controller-manager of the inventory)" in checked.stdout

    api.forbidden_cluster_wide.add(DEPLOYMENTS)
    inventory, sources = read_live(LiveCluster(str(kubeconfig), "gpu-cluster"))
    assert "live:deployments.apps/operators" not in {source.display for source in sources}
    assert "live:deployments.apps" in {source.display for source in sources}  # kube-system's, as before
    unknown = gpulint("check", "rayjob.yaml", *live, cwd=tmp_path)
    assert unknown.returncode in (0, 1), unknown.stderr  # the other rules' findings stand (the queue, no GPUs)
    assert "error[operator-rejected]" in checked.stdout and "error[operator-rejected]" not in unknown.stdout

    # the webhook never asks: test_a_machine_ties_a_node_to_its_group... sees it read kube-system's alone


# --- DaemonSets and GKE ComputeClasses --------------------------------------------------------------------

DAEMONSETS = "/apis/apps/v1/daemonsets"
COMPUTECLASSES = "/apis/cloud.google.com/v1/computeclasses"
# karpenter-provider-aws#6884, as tests/rules/gpu-unschedulable.md has it: an EC2NodeClass whose maxPods the
# cluster's DaemonSets fill, and the NodePool of 1-GPU types that uses it.
MAXPODS_NODEPOOL = {
    "metadata": {"name": "gpu", "uid": "uid-nodepool-maxpods"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [
                    {
                        "key": "node.kubernetes.io/instance-type",
                        "operator": "In",
                        "values": ["g5.2xlarge", "g6.2xlarge"],
                    }
                ],
            }
        }
    },
}
MAXPODS_NODECLASS = {
    "metadata": {"name": "gpu", "uid": "uid-nodeclass-maxpods"},
    "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "KarpenterNodeRole", "kubelet": {"maxPods": 2}},
}


def daemon_set(name: str, **pod: object) -> dict:
    """A kube-system DaemonSet as the API server returns it, shaped like EKS's aws-node and kube-proxy: it
    tolerates every taint and requests nothing but a pod."""
    labels = {"k8s-app": name}
    return {
        "metadata": {"name": name, "namespace": "kube-system", "uid": f"uid-ds-{name}", "resourceVersion": "12"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": name, "image": f"602401143452.dkr.ecr.us-west-2.amazonaws.com/{name}:1"}],
                    "volumes": [{"name": "lib-modules", "hostPath": {"path": "/lib/modules"}}],
                    **pod,
                },
            },
        },
    }


@pytest.mark.slow
def test_daemon_sets_added_by_watch_fill_a_pools_max_pods_and_one_moved_off_it_frees_a_pod(make_api):
    """maxPods 2 on the EC2NodeClass: with no DaemonSet a 1-GPU pod fits a g5.2xlarge after a scale-up; aws-node
    and kube-proxy, added by watch, take both pods (denied, worded as Karpenter's daemonset overhead); kube-proxy
    modified to select Windows nodes leaves one (admitted); the DaemonSet deleted, the same."""
    served = {
        "karpenter.sh__v1": {"nodepools": [MAXPODS_NODEPOOL]},
        "karpenter.k8s.aws__v1": {"ec2nodeclasses": [MAXPODS_NODECLASS]},
        "apps__v1": {"daemonsets": []},
    }
    api = make_api(cluster([cpu_node("system-0")], **served))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert webhook.snapshot.inventory.lists("DaemonSet")
        assert denial(webhook, gpu_pod(1)) == ""
        assert wait_for(lambda: (DAEMONSETS, "10") in api.watch_versions)
        api.events[DAEMONSETS].put({"type": "ADDED", "object": daemon_set("aws-node", hostNetwork=True)})
        api.events[DAEMONSETS].put({"type": "ADDED", "object": daemon_set("kube-proxy", hostNetwork=True)})
        assert wait_for(lambda: "left after the DaemonSets' requests" in denial(webhook, gpu_pod(1)))
        kept = webhook.snapshot.inventory.daemon_sets[("kube-system", "aws-node")]
        pod = kept["spec"]["template"]["spec"]
        assert pod["containers"] == [{"name": "aws-node"}] and "volumes" not in pod  # no image, no volumes kept

        windows = daemon_set("kube-proxy", hostNetwork=True, nodeSelector={"kubernetes.io/os": "windows"})
        api.events[DAEMONSETS].put({"type": "MODIFIED", "object": windows})
        assert wait_for(lambda: denial(webhook, gpu_pod(1)) == "")
        api.events[DAEMONSETS].put({"type": "DELETED", "object": windows})
        assert wait_for(lambda: ("kube-system", "kube-proxy") not in webhook.snapshot.inventory.daemon_sets)
        assert denial(webhook, gpu_pod(1)) == ""
    finally:
        webhook.stop()


def compute_class(name: str, auto_creation: bool, priorities: list | None = None) -> dict:
    """A ComputeClass as GKE's docs write one (about-custom-compute-classes): GPU priorities, then pool
    auto-creation on or off."""
    written = [{"gpu": {"type": "nvidia-l4", "count": 1}}, {"machineFamily": "g2", "spot": True}]
    return {
        "metadata": {"name": name, "uid": f"uid-cc-{name}", "resourceVersion": "12"},
        "spec": {
            "priorities": written if priorities is None else priorities,
            "nodePoolAutoCreation": {"enabled": auto_creation},
            "whenUnsatisfiable": "DoNotScaleUp",
        },
    }


def kept_class(name: str, auto_creation: bool, priorities: list | None = None) -> ComputeClass:
    """What the inventory reads of compute_class(...) (as the API server serves it: with its kind)."""
    served = {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        **compute_class(name, auto_creation, priorities),
    }
    return read_class(served)


def test_compute_classes_are_watched_where_served_and_kept_as_their_auto_creation(make_api):
    absent = make_api(cluster([node("gpu-0", 4)]))
    webhook = serve(absent)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert not any(r.startswith("/apis/cloud.google.com/") for r in absent.requests)  # not GKE: not served
        assert webhook.snapshot.inventory.gke is None
    finally:
        webhook.stop()

    api = make_api(cluster([node("gpu-0", 4)], **{"cloud.google.com__v1": {"computeclasses": []}}))
    webhook = serve(api)
    classes = lambda: (webhook.snapshot.inventory.gke or GkeAutoCreation()).classes
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert webhook.snapshot.inventory.lists("ComputeClass") and classes() == {}
        assert wait_for(lambda: (COMPUTECLASSES, "10") in api.watch_versions)
        api.events[COMPUTECLASSES].put({"type": "ADDED", "object": compute_class("default", True)})
        assert wait_for(lambda: classes() == {"default": kept_class("default", True)})
        api.events[COMPUTECLASSES].put({"type": "MODIFIED", "object": compute_class("default", False)})
        assert wait_for(lambda: classes() == {"default": kept_class("default", False)})
        api.events[COMPUTECLASSES].put({"type": "DELETED", "object": compute_class("default", False)})
        assert wait_for(lambda: classes() == {})
    finally:
        webhook.stop()


def test_cli_live_inventory_reads_daemon_sets_and_compute_classes_as_their_files_are_read(make_api, tmp_path):
    from gpulint.cli.live import LiveCluster, read_live

    served = {
        "apps__v1": {"daemonsets": [daemon_set("aws-node", hostNetwork=True)]},
        "cloud.google.com__v1": {"computeclasses": [compute_class("l4-class", True)]},
    }
    api = make_api(cluster([cpu_node("system-0")], **served))
    inventory, sources = read_live(LiveCluster(str(api.kubeconfig(tmp_path)), "gpu-cluster"))
    read = {source.display: json.loads(source.read())["items"] for source in sources}
    (daemon,) = read["live:daemonsets.apps"]
    assert daemon["spec"] == {
        "template": {
            "spec": {"hostNetwork": True, "tolerations": [{"operator": "Exists"}], "containers": [{"name": "aws-node"}]}
        }
    }
    (kept,) = read["live:computeclasses.cloud.google.com"]
    assert kept["spec"] == compute_class("l4-class", True)["spec"]  # all it has is what the models read
    assert set(inventory.daemon_sets) == {("kube-system", "aws-node")}
    assert inventory.gke is not None and inventory.gke.classes == {"l4-class": kept_class("l4-class", True)}
    assert inventory.gke.classes["l4-class"].restricts
    assert inventory.lists("DaemonSet") and inventory.lists("ComputeClass")


def gke_node(name: str, pool: str) -> dict:
    """A GKE node as the API server returns it: its pool's label and four L4s (a g2-standard-48)."""
    labels = {
        "kubernetes.io/hostname": name,
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "node.kubernetes.io/instance-type": "g2-standard-48",
    }
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels},
        "status": {"capacity": {"cpu": "48", "pods": "110", "nvidia.com/gpu": "4"}},
    }


def class_pod(gpus: int) -> dict:
    """A GPU pod that selects a ComputeClass (the GKE docs' nodeSelector)."""
    obj = pod(gpus)
    obj["spec"]["nodeSelector"] = {"cloud.google.com/compute-class": "l4-class"}
    return obj


def test_gke_nodes_read_live_ask_whether_gke_creates_a_node(make_api):
    """8 GPUs asked of g2-standard-48 nodes with 4: a Standard cluster's nodes (gke-...) refuse it; an Autopilot
    cluster's (gk3-...), which creates the nodes its pods need, admit it. A pod selecting a ComputeClass no node
    carries is admitted with no warning on GKE nodes (GKE may create the class's pool, the watched class says so),
    and so is the 8-GPU pod once its Namespace names that class as its default (GKE selects it for the pod)."""
    served = {"cloud.google.com__v1": {"computeclasses": [compute_class("l4-class", True)]}}
    standard = make_api(cluster([gke_node("gke-ml-l4-pool-5b7e9a21-tq4m", "l4-pool")], **served))
    webhook = serve(standard)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert "can never be scheduled" in denial(webhook, pod(8))
        response = answer(webhook, class_pod(1))
        assert response["allowed"] and not any("over-tight-affinity" in w for w in response.get("warnings", []))
    finally:
        webhook.stop()
    autopilot = make_api(cluster([gke_node("gk3-ml-nap-1tq6p2x3-5b7e9a21-tq4m", "nap-1tq6p2x3")]))
    webhook = serve(autopilot)
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert denial(webhook, pod(8)) == ""
    finally:
        webhook.stop()
    # the pods' namespace names a default ComputeClass: GKE selects it for the 8-GPU pod, and may create its pool
    labelled = cluster([gke_node("gke-ml-l4-pool-5b7e9a21-tq4m", "l4-pool")], **served)
    labelled["v1"]["namespaces"] = [
        {
            "metadata": {
                "name": "ml",
                "uid": "uid-ns-ml",
                "labels": {"cloud.google.com/default-compute-class": "l4-class"},
            }
        }
    ]
    webhook = serve(make_api(labelled))
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert denial(webhook, pod(8)) == ""
    finally:
        webhook.stop()


def test_a_watched_class_whose_priorities_hold_no_such_pod_warns(make_api):
    """The watched class keeps its priorities: once they are all G2s with one L4 (DoNotScaleUp), GKE creates no
    node the 8-GPU pod of the class fits (a warning, admitted); the 1-GPU pod fits the node it creates."""
    served = {"cloud.google.com__v1": {"computeclasses": [compute_class("l4-class", True)]}}
    api = make_api(cluster([gke_node("gke-ml-l4-pool-5b7e9a21-tq4m", "l4-pool")], **served))
    webhook = serve(api)
    warned = lambda gpus: [w for w in answer(webhook, class_pod(gpus)).get("warnings", []) if "gpu-unschedulable" in w]
    try:
        assert wait_for(lambda: webhook.ready), webhook.waiting_for()
        assert not any("ComputeClass l4-class describe" in w for w in warned(8))  # a G2 priority without its GPU
        assert wait_for(lambda: (COMPUTECLASSES, "10") in api.watch_versions)
        g2 = [
            {"machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}, "spot": spot}
            for spot in (False, True)
        ]
        api.events[COMPUTECLASSES].put({"type": "MODIFIED", "object": compute_class("l4-class", True, g2)})
        assert wait_for(lambda: any("ComputeClass l4-class describe would hold it" in w for w in warned(8)))
        assert answer(webhook, class_pod(8))["allowed"]
        assert warned(1) == []
    finally:
        webhook.stop()


QUEUED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-eval
  labels:
    kueue.x-k8s.io/queue-name: user-queue
    kueue.x-k8s.io/priority-class: {priority}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: eval
        image: nvcr.io/nvidia/pytorch:24.10-py3
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.slow
def test_cli_live_inventory_reads_kueues_workload_priority_classes(make_api, tmp_path):
    """Kueue makes no Workload for a job whose priority class is missing (WorkloadPriorityClassNotFound): the
    live list of classes is the complete catalog that proves it, as an inventory file's list does."""
    prod = {"metadata": {"name": "prod", "uid": "uid-prod"}, "value": 10000}
    api = make_api(cluster([node("n0", 8)], **{"kueue.x-k8s.io__v1beta2": {"workloadpriorityclasses": [prod]}}))
    live = ("--live-inventory", "--kubeconfig", str(api.kubeconfig(tmp_path)), "--context", "gpu-cluster")
    (tmp_path / "missing.yaml").write_text(QUEUED_JOB.format(priority="production"), encoding="utf-8")
    (tmp_path / "listed.yaml").write_text(QUEUED_JOB.format(priority="prod"), encoding="utf-8")

    missing = gpulint("check", "missing.yaml", *live, cwd=tmp_path)
    assert "error[queue-reference-invalid]" in missing.stdout and "WorkloadPriorityClass" in missing.stdout
    listed = gpulint("check", "listed.yaml", *live, cwd=tmp_path)
    assert "WorkloadPriorityClass" not in listed.stdout, listed.stdout
