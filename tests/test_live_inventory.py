"""The live inventory: the official kubernetes client against a local HTTPS server speaking list/watch."""

import json
import queue
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import trustme
from kubernetes import client
from webhook_helpers import gpu_pod, review

from gpulint.lint.config import Config
from gpulint.webhook.server import ServeOptions, Webhook


def node(name: str, gpus: int) -> dict:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": {"cpu": "64", "pods": "110", "nvidia.com/gpu": str(gpus)}},
    }


class FakeApiServer:
    """Serves NodeList / ResourceSliceList / DeviceClassList and streams watch events from queues."""

    def __init__(self, tmp_path):
        self.lists = {
            "/api/v1/nodes": [node("n0", 8), node("n1", 8)],
            "/apis/resource.k8s.io/v1/resourceslices": [],
            "/apis/resource.k8s.io/v1/deviceclasses": [],
        }
        self.events = {path: queue.Queue() for path in self.lists}
        self.authorizations: list[str] = []
        self.watch_versions: list[str] = []
        self.stopping = threading.Event()
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        self.ca_file = tmp_path / "ca.pem"
        ca.cert_pem.write_to_path(str(self.ca_file))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert.configure_cert(context)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                return

            def do_GET(self):
                url = urlparse(self.path)
                query = parse_qs(url.query)
                fake.authorizations.append(self.headers.get("Authorization", ""))
                if url.path not in fake.lists:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if query.get("watch", ["false"])[0].lower() != "true":
                    kind = url.path.rsplit("/", 1)[1]
                    body = json.dumps(
                        {
                            "kind": kind,
                            "apiVersion": "v1",
                            "metadata": {"resourceVersion": "10"},
                            "items": fake.lists[url.path],
                        }
                    ).encode()
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                # a watch: one JSON event per chunk, as the API server streams them
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                fake.watch_versions.append(query.get("resourceVersion", [""])[0])
                deadline = time.time() + 20
                while time.time() < deadline and not fake.stopping.is_set():
                    try:
                        event = fake.events[url.path].get(timeout=0.1)
                    except queue.Empty:
                        continue
                    data = json.dumps(event).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def configuration(self) -> client.Configuration:
        configuration = client.Configuration()
        configuration.host = f"https://127.0.0.1:{self.server.server_address[1]}"
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.api_key = {"authorization": "test-token"}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        return configuration

    def stop(self):
        self.stopping.set()
        self.server.shutdown()


@pytest.fixture
def api(tmp_path):
    fake = FakeApiServer(tmp_path)
    yield fake
    fake.stop()


def allowed(webhook: Webhook, gpus: int) -> bool:
    return webhook.review(json.dumps(review(gpu_pod(gpus))).encode()).body["response"]["allowed"]


def wait_for(predicate, seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_live_inventory_lists_then_follows_watch_events(api):
    webhook = Webhook(Config(), ServeOptions(live_inventory=True), api=client.ApiClient(api.configuration()))
    try:
        assert wait_for(lambda: webhook.ready)
        assert len(webhook.snapshot.inventory.nodes) == 2
        assert allowed(webhook, 8) and not allowed(webhook, 16)
        assert "Bearer test-token" in api.authorizations
        assert wait_for(lambda: len(api.watch_versions) == 3) and set(api.watch_versions) == {"10"}
        api.events["/api/v1/nodes"].put({"type": "ADDED", "object": node("big", 16)})
        assert wait_for(lambda: allowed(webhook, 16))
        assert len(webhook.snapshot.inventory.nodes) == 3
        api.events["/api/v1/nodes"].put({"type": "DELETED", "object": node("big", 16)})
        assert wait_for(lambda: not allowed(webhook, 16))
    finally:
        webhook.stop()


def test_not_ready_until_every_resource_is_listed(tmp_path):
    configuration = client.Configuration()
    configuration.host = "https://127.0.0.1:9"  # nothing listens: lists fail and are retried
    webhook = Webhook(Config(), ServeOptions(live_inventory=True), api=client.ApiClient(configuration))
    try:
        time.sleep(0.5)
        assert webhook.ready is False
        answered = webhook.review(json.dumps(review(gpu_pod(16))).encode())
        status, answer = answered.status, answered.body
        assert status == 200 and answer["response"]["allowed"] is True  # no inventory: the inventory rules skip
    finally:
        webhook.stop()
