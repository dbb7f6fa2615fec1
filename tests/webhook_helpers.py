"""The admission webhook served for real over TLS on loopback (a `gpulint serve` subprocess, or the same
server in-process when a test needs options the CLI does not expose), and clients that talk to it."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import trustme

from gpulint.lint.config import Config
from gpulint.webhook.server import ServeOptions, build_server

BAD_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "bad"},
    "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": 1}}}]},
}
GOOD_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "good"},
    "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
}


def gpu_pod(gpus: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{gpus}"},
        "spec": {
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
        },
    }


def review(obj: dict | None, uid: str = "uid-1", operation: str = "CREATE") -> dict:
    request = {
        "uid": uid,
        "operation": operation,
        "namespace": "ml",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
    }
    if obj is not None:
        request["object"] = obj
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def nodes_yaml(gpus: int, count: int = 3) -> str:
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        f"- apiVersion: v1\n  kind: Node\n  metadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}\n"
        f"  status:\n    capacity: {{cpu: '64', pods: '110', nvidia.com/gpu: '{gpus}'}}\n"
        for i in range(count)
    )


def issue_pair(ca: trustme.CA, directory: Path) -> tuple[Path, Path]:
    cert = ca.issue_cert("localhost", "127.0.0.1")
    directory.mkdir(parents=True, exist_ok=True)
    cert.private_key_pem.write_to_path(str(directory / "tls.key"))
    cert.cert_chain_pems[0].write_to_path(str(directory / "tls.crt"))
    return directory / "tls.crt", directory / "tls.key"


class ResponseReader:
    """HTTP/1.1 responses, one after another, from a raw socket (pipelined answers may share a read)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed before a whole response: {self.data[:200]!r}")
        self.data += chunk

    def read(self, timeout: float = 10, head: bool = False) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (lower-case names) and body (none for an answer to HEAD)."""
        self.sock.settimeout(timeout)
        while b"\r\n\r\n" not in self.data:
            self._more()
        lines_text, _, self.data = self.data.partition(b"\r\n\r\n")
        lines = lines_text.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = 0 if head else int(headers.get("content-length", "0"))
        while len(self.data) < length:
            self._more()
        body, self.data = self.data[:length], self.data[length:]
        return int(lines[0].split()[1]), headers, body


def read_response(sock: socket.socket, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    return ResponseReader(sock).read(timeout)


def closed_by_server(sock: socket.socket, timeout: float = 5) -> bool:
    """Does the server close the connection within ``timeout`` (after whatever it still sends)?"""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            if sock.recv(65536) == b"":
                return True
    except (ConnectionError, ssl.SSLError):
        return True
    except TimeoutError:
        return False
    return False


class Client:
    """TLS clients for a server on 127.0.0.1:port that trusts ``ca``."""

    def __init__(self, port: int, ca: trustme.CA) -> None:
        self.port = port
        self.client_context = ssl.create_default_context()
        ca.configure_trust(self.client_context)

    def connection(self, timeout: float = 10) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.client_context, timeout=timeout)

    def raw(self, timeout: float = 10) -> ssl.SSLSocket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return self.client_context.wrap_socket(sock, server_hostname="localhost")

    def post(self, body: bytes | dict, path: str = "/validate", timeout: float = 10) -> tuple[int, dict]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        connection = self.connection(timeout)
        connection.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        return response.status, json.loads(payload) if payload else {}

    def get(self, path: str) -> tuple[int, str]:
        connection = self.connection()
        connection.request("GET", path)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        return response.status, text

    def start_slow_review(self, body: bytes, first: int, path: str = "/validate") -> ssl.SSLSocket:
        """A review whose body is only partly sent: it stays in flight until finish_slow_review."""
        tls = self.raw()
        tls.sendall(
            f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n".encode()
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[:first]
        )
        return tls

    @staticmethod
    def finish_slow_review(tls: ssl.SSLSocket, body: bytes, first: int, marker: bytes) -> bytes:
        tls.sendall(body[first:])
        reply = b""
        while marker not in reply:
            chunk = tls.recv(65536)
            if not chunk:
                break
            reply += chunk
        tls.close()
        return reply


class Server(Client):
    """`python -m gpulint serve` in a subprocess, its JSON log lines collected."""

    def __init__(
        self,
        tmp_path: Path,
        *extra: str,
        inventory: str | None = None,
        cert: Path | None = None,
        key: Path | None = None,
        ca: trustme.CA | None = None,
    ) -> None:
        if cert is None:
            ca = trustme.CA()
            cert, key = issue_pair(ca, tmp_path)
        assert ca is not None and key is not None
        self.ca, self.cert, self.key = ca, cert, key
        command = [
            sys.executable,
            "-m",
            "gpulint",
            "serve",
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--inventory-poll-seconds",
            "0.2",
            *extra,
        ]
        if inventory:
            command += ["--inventory", inventory]
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        self.log: list[dict] = []
        self.raw_lines: list[str] = []
        port = None
        deadline = time.time() + 20
        while port is None and time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            event = json.loads(line)
            self.log.append(event)
            if event["event"] == "serving":
                port = event["port"]
        assert port, self.log
        super().__init__(port, ca)
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()

    def _read_log(self) -> None:
        for line in self.process.stderr:
            self.raw_lines.append(line)
            self.log.append(json.loads(line))  # a traceback (not JSON) fails the test that reads it

    def events(self, name: str) -> list[dict]:
        return [event for event in self.log if event["event"] == name]

    def wait_for(self, name: str, timeout: float = 5) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = self.events(name)
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError(f"no {name} event in {self.log}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=15)


class InProcess(Client):
    """The server of `gpulint serve`, run in a thread with options the CLI does not expose."""

    def __init__(self, tmp_path: Path, **options) -> None:
        ca = trustme.CA()
        cert, key = issue_pair(ca, tmp_path)
        self.server, self.webhook = build_server(
            Config(), ServeOptions(host="127.0.0.1", port=0, tls_cert=str(cert), tls_key=str(key), **options)
        )
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        super().__init__(self.server.server_address[1], ca)

    def stop(self) -> None:
        self.webhook.stop()
        self.server.begin_shutdown()
        self.server.shutdown()
        self.server.server_close()
