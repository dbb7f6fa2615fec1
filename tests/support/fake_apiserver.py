"""A local HTTPS server that speaks the Kubernetes API (discovery, paged lists, watch streams, bearer
tokens), the objects it serves and the webhook and CLI that read it: the live-inventory tests and the webhook
tests that judge against a live cluster use it. The `make_api` fixture (conftest.py) starts and stops it."""

from __future__ import annotations

import json
import queue
import re
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import trustme
from kubernetes import client
from webhook_helpers import review

from gpulint.lint.config import Config
from gpulint.webhook.server import ServeOptions, Webhook

TOKEN = "test-token"


def node(name: str, gpus: int) -> dict:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": {"cpu": "64", "pods": "110", "nvidia.com/gpu": str(gpus)}},
    }


def device_class(name: str) -> dict:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": {"selectors": [{"cel": {"expression": "true"}}]}}


class FakeApiServer:
    """``served`` maps a group version ("v1", "resource.k8s.io/v1beta1") to {plural: [items]}."""

    def __init__(self, tmp_path: Path, served: dict[str, dict[str, list[dict]]]) -> None:
        self.served = served
        self.events: dict[str, queue.Queue] = {
            self.path(gv, plural): queue.Queue() for gv, table in served.items() for plural in table
        }
        self.requests: list[str] = []  # path?query of every GET
        self.authorizations: list[str] = []
        self.watch_versions: list[tuple[str, str]] = []
        self.gone_once: set[str] = set()  # collection paths whose next watch answers 410 Gone
        self.held: dict[str, threading.Event] = {}  # collection paths whose lists wait for their event
        self.failing: dict[str, tuple[int, str]] = {}  # collection paths whose lists answer this status
        self.forbidden_cluster_wide: set[str] = set()  # collection paths listed in one namespace only (a Role's grant)
        self.endless: dict[str, int] = {}  # collection paths whose every page has a continue token, and its items
        self.token = TOKEN  # the token it accepts: change it and the webhook's has expired
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

            def send_json(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                fake.requests.append(self.path)
                fake.authorizations.append(self.headers.get("Authorization", ""))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    self.send_json(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
                    return
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                scoped = re.fullmatch(r"(/api/v1|/apis/[^/]+/[^/]+)/namespaces/([^/]+)/([^/]+)", url.path)
                if scoped:  # one namespace of a collection: its objects there, its events
                    url = url._replace(path=f"{scoped.group(1)}/{scoped.group(3)}")
                    query["namespace"] = scoped.group(2)
                answer = fake.discovery(url.path)
                if answer is not None:
                    self.send_json(200, answer)
                elif url.path not in fake.events:
                    self.send_json(
                        404,
                        {"kind": "Status", "code": 404, "message": "the server could not find the requested resource"},
                    )
                elif query.get("watch") == "true":
                    self.stream_watch(url.path, query)
                elif url.path in fake.forbidden_cluster_wide and "namespace" not in query:
                    message = f"cannot list resource at the cluster scope: {url.path}"
                    self.send_json(403, {"kind": "Status", "code": 403, "reason": "Forbidden", "message": message})
                elif url.path in fake.failing:
                    code, message = fake.failing[url.path]
                    self.send_json(code, {"kind": "Status", "code": code, "message": message})
                else:
                    held = fake.held.get(url.path)
                    if held is not None:
                        held.wait(20)
                    self.send_json(200, fake.page(url.path, query))

            def stream_watch(self, path: str, query: dict[str, str]) -> None:
                fake.watch_versions.append((path, query.get("resourceVersion", "")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def send(event: dict) -> None:
                    data = json.dumps(event).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

                if path in fake.gone_once:
                    fake.gone_once.discard(path)
                    send(
                        {
                            "type": "ERROR",
                            "object": {
                                "kind": "Status",
                                "code": 410,
                                "reason": "Expired",
                                "message": "too old resource version",
                            },
                        }
                    )
                else:
                    send({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "11"}}})
                    deadline = time.time() + 20
                    while time.time() < deadline and not fake.stopping.is_set():
                        try:
                            event = fake.events[path].get(timeout=0.1)
                        except queue.Empty:
                            continue
                        send(event)
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def path(group_version: str, plural: str) -> str:
        return f"/api/{group_version}/{plural}" if "/" not in group_version else f"/apis/{group_version}/{plural}"

    def discovery(self, path: str) -> dict | None:
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            groups: dict[str, list[str]] = {}
            for group_version in self.served:
                if "/" in group_version:
                    group, version = group_version.split("/")
                    groups.setdefault(group, []).append(version)
            return {
                "kind": "APIGroupList",
                "groups": [
                    {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]}
                    for g, vs in groups.items()
                ],
            }
        group_version = path.removeprefix("/apis/").removeprefix("/api/")
        if path.count("/") in (2, 3) and group_version in self.served:
            return {
                "kind": "APIResourceList",
                "groupVersion": group_version,
                "resources": [
                    {"name": plural, "verbs": ["get", "list", "watch"]} for plural in self.served[group_version]
                ],
            }
        return None

    def page(self, path: str, query: dict[str, str]) -> dict:
        group_version, plural = path.removeprefix("/apis/").removeprefix("/api/").rsplit("/", 1)
        if path in self.endless:  # a list that never ends: each page a few new objects and another token
            start = int(query.get("continue", "0"))
            count = self.endless[path]
            items = [{"metadata": {"name": f"o{start + i}", "uid": f"uid-o{start + i}"}} for i in range(count)]
            return {
                "kind": "List",
                "metadata": {"resourceVersion": "10", "continue": str(start + count)},
                "items": items,
            }
        items = self.served[group_version][plural]
        if "namespace" in query:
            items = [item for item in items if item.get("metadata", {}).get("namespace") == query["namespace"]]
        limit = int(query.get("limit", "0")) or len(items)
        start = int(query.get("continue", "0"))
        rest = items[start + limit :]
        metadata = {"resourceVersion": "10", **({"continue": str(start + limit)} if rest else {})}
        return {
            "kind": "List",
            "apiVersion": group_version,
            "metadata": metadata,
            "items": items[start : start + limit],
        }

    def configuration(self) -> client.Configuration:
        configuration = client.Configuration()
        configuration.host = f"https://127.0.0.1:{self.server.server_address[1]}"
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.api_key = {"authorization": TOKEN}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        return configuration

    def kubeconfig(self, tmp_path: Path) -> Path:
        """A kubeconfig as `kubectl config view --raw` writes one, with two contexts."""
        path = tmp_path / "kubeconfig"
        server = f"https://127.0.0.1:{self.server.server_address[1]}"
        path.write_text(
            f"""apiVersion: v1
kind: Config
current-context: elsewhere
clusters:
- name: gpu
  cluster: {{server: "{server}", certificate-authority: "{self.ca_file}"}}
- name: nowhere
  cluster: {{server: "https://127.0.0.1:9", certificate-authority: "{self.ca_file}"}}
users:
- name: ml-admin
  user: {{token: {TOKEN}}}
contexts:
- name: gpu-cluster
  context: {{cluster: gpu, user: ml-admin}}
- name: elsewhere
  context: {{cluster: nowhere, user: ml-admin}}
""",
            encoding="utf-8",
        )
        return path

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()


DRA_V1 = {
    "resourceslices": [],
    "deviceclasses": [device_class("gpu.nvidia.com")],
    "resourceclaims": [],
    "resourceclaimtemplates": [],
}


def cluster(nodes: list[dict], **groups: dict[str, list[dict]]) -> dict[str, dict[str, list[dict]]]:
    served: dict[str, dict[str, list[dict]]] = {"v1": {"nodes": nodes, "namespaces": [], "pods": [], "configmaps": []}}
    for group_version, table in groups.items():
        served[group_version.replace("__", "/")] = table
    return served


def allowed(webhook: Webhook, obj: dict) -> bool:
    return webhook.review(json.dumps(review(obj)).encode()).body["response"]["allowed"]


def wait_for(predicate, seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def serve(api: FakeApiServer, **options) -> Webhook:
    return Webhook(Config(), ServeOptions(live_inventory=True, **options), api=api.configuration())


def gpulint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        resources:
          limits: {nvidia.com/gpu: 16}
"""
