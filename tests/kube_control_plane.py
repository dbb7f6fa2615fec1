"""A real Kubernetes control plane on loopback for the tests: Debian's etcd, and kube-apiserver and
kube-scheduler built from k8s.io/kubernetes v1.37.2 (tests/apiserver/go.mod).

The two programs are built once into a cache keyed by go.mod, go.sum and the Go version
(~/.cache/gpulint-tests/kube-<key>/), by `python tests/kube_control_plane.py build` (.ci/run) or by the
first test that needs them. Every process listens on 127.0.0.1 only, on ports the kernel chose free,
writes into a temporary directory and is killed when the test module ends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

GO_MODULE = Path(__file__).parent / "apiserver"
PROGRAMS = {
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
}
BUILD_TIMEOUT = 3600  # seconds for both programs, cold, on 2 busy cores (docs/apiserver.md has the figures)
START_TIMEOUT = 180  # seconds until etcd, the API server or the scheduler answers healthy
ADMIN_TOKEN = "gpulint-test-admin"
# gpulint's own identity: what the chart's ServiceAccount is called, so the chart's ClusterRoleBinding applies.
WEBHOOK_TOKEN = "gpulint-test-webhook"
WEBHOOK_USER = "system:serviceaccount:gpulint-system:gpulint"
SCHEDULER_TOKEN = "gpulint-test-scheduler"


def cache_root() -> Path:
    root = os.environ.get("GPULINT_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpulint-tests")
    return Path(root)


def build_key(go: str) -> str:
    version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=True)
    digest = hashlib.sha256(version.stdout.strip().encode())
    for name in ("go.mod", "go.sum"):
        digest.update((GO_MODULE / name).read_bytes())
    return digest.hexdigest()[:16]


def build(go: str, timeout: float = BUILD_TIMEOUT) -> dict[str, Path] | str:
    """The cached programs, built first when missing; or why they cannot be had."""
    target = cache_root() / f"kube-{build_key(go)}"
    paths = {name: target / name for name in PROGRAMS}
    if all(path.is_file() for path in paths.values()):
        return paths
    target.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    for name, package in PROGRAMS.items():
        if paths[name].is_file():
            continue
        # Built beside, then renamed: a concurrent run never starts half a binary.
        partial = target / f".{name}-{os.getpid()}"
        try:
            built = subprocess.run(
                [go, "build", "-o", str(partial), package],
                cwd=GO_MODULE, capture_output=True, text=True, check=False,
                timeout=max(1.0, deadline - time.monotonic()),
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"go build {package} took longer than {timeout:.0f} s"
        if built.returncode != 0:
            return f"go build {package} failed: {built.stderr.strip()[-600:]}"
        os.replace(partial, paths[name])
    return paths


def programs() -> dict[str, Path] | str:
    """kube-apiserver, kube-scheduler and etcd, or why they cannot be had (Go or etcd missing, build failed)."""
    etcd = shutil.which("etcd")
    if etcd is None:
        return "etcd is not installed (Debian: apt-get install etcd-server)"
    go = shutil.which("go")
    if go is None:
        return "Go is not installed: kube-apiserver is built from k8s.io/kubernetes (tests/apiserver/go.mod)"
    built = build(go)
    if isinstance(built, str):
        return built
    return {**built, "etcd": Path(etcd)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(probe: Any, timeout: float, what: str, process: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log else ""
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{tail}")
        result = probe()
        if result:
            return result
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log else ""
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s:\n{tail}")


def kubeconfig(server: str, ca_pem: bytes, token: str, user: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "local",
                "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
        "current-context": "local",
    }


@dataclass
class ControlPlane:
    """etcd, kube-apiserver and (optionally) kube-scheduler, running; stop() ends them all."""

    directory: Path
    kubectl_path: Path
    processes: list[subprocess.Popen] = field(default_factory=list)
    server: str = ""
    ca: trustme.CA = field(default_factory=trustme.CA)
    admin_kubeconfig: Path = Path()
    webhook_kubeconfig: Path = Path()

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.kubectl_path), "--kubeconfig", str(self.admin_kubeconfig), *args],
            input=input, capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{done.stderr}")
        return done

    def apply(self, *objects: dict[str, Any], extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        items = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        return self.kubectl("apply", "-f", "-", *extra, input=json.dumps(items))

    def create(self, obj: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
        """`kubectl create -f -`, unchecked: the caller reads the answer (a denial is on stderr)."""
        return self.kubectl("create", "-f", "-", *extra, input=json.dumps(obj), check=False)

    def get(self, *args: str) -> dict[str, Any]:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def start(self, found: dict[str, Path], scheduler: bool) -> None:
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        etcd_log = self.directory / "etcd.log"
        self._spawn(
            [
                str(found["etcd"]), "--name", "test", "--data-dir", str(self.directory / "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-cluster", f"test=http://127.0.0.1:{peer_port}",
            ],
            etcd_log,
        )  # fmt: skip
        wait_until(
            lambda: _http_ok(f"http://127.0.0.1:{etcd_port}/health"),
            START_TIMEOUT, "etcd", self.processes[-1], etcd_log,
        )  # fmt: skip

        certs = self.directory / "certs"
        certs.mkdir()
        serving = self.ca.issue_cert("127.0.0.1", "localhost")
        serving.private_key_pem.write_to_path(str(certs / "apiserver.key"))
        serving.cert_chain_pems[0].write_to_path(str(certs / "apiserver.crt"))
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (certs / "sa.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        (certs / "sa.pub").write_bytes(
            key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        (certs / "tokens.csv").write_text(
            f'{ADMIN_TOKEN},admin,admin,"system:masters"\n'
            f'{WEBHOOK_TOKEN},{WEBHOOK_USER},gpulint,"system:serviceaccounts,system:serviceaccounts:gpulint-system"\n'
            f"{SCHEDULER_TOKEN},system:kube-scheduler,scheduler\n"
        )
        api_log = self.directory / "kube-apiserver.log"
        self._spawn(
            [
                str(found["kube-apiserver"]),
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
                f"--tls-cert-file={certs / 'apiserver.crt'}", f"--tls-private-key-file={certs / 'apiserver.key'}",
                f"--cert-dir={certs}", f"--token-auth-file={certs / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={certs / 'sa.pub'}",
                f"--service-account-signing-key-file={certs / 'sa.key'}",
                "--service-cluster-ip-range=10.0.0.0/24",
                # Endpoints may not hold loopback addresses: no reconciler for the `kubernetes` Service.
                "--endpoint-reconciler-type=none",
                "--profiling=false", "--v=1",
            ],
            api_log,
        )  # fmt: skip
        self.server = f"https://127.0.0.1:{api_port}"
        ca_pem = self.ca.cert_pem.bytes()
        context = ssl.create_default_context(cadata=ca_pem.decode())
        wait_until(
            lambda: _http_ok(f"{self.server}/readyz", context, ADMIN_TOKEN),
            START_TIMEOUT, "kube-apiserver", self.processes[-1], api_log,
        )  # fmt: skip
        self.admin_kubeconfig = self._write_kubeconfig("admin", ADMIN_TOKEN, "admin")
        self.webhook_kubeconfig = self._write_kubeconfig("webhook", WEBHOOK_TOKEN, "gpulint")
        if scheduler:
            self._start_scheduler(found["kube-scheduler"], context)

    def _start_scheduler(self, program: Path, context: ssl.SSLContext) -> None:
        port = free_port()
        config = self._write_kubeconfig("scheduler", SCHEDULER_TOKEN, "scheduler")
        log = self.directory / "kube-scheduler.log"
        self._spawn(
            [
                str(program), f"--kubeconfig={config}",
                f"--authentication-kubeconfig={config}", f"--authorization-kubeconfig={config}",
                "--bind-address=127.0.0.1", f"--secure-port={port}", "--leader-elect=false", "--v=1",
            ],
            log,
        )  # fmt: skip
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE  # its own self-signed cert
        wait_until(
            lambda: _http_ok(f"https://127.0.0.1:{port}/healthz", unverified),
            START_TIMEOUT, "kube-scheduler", self.processes[-1], log,
        )  # fmt: skip

    def _write_kubeconfig(self, name: str, token: str, user: str) -> Path:
        path = self.directory / f"{name}.kubeconfig"
        path.write_text(json.dumps(kubeconfig(self.server, self.ca.cert_pem.bytes(), token, user)))
        return path

    def _spawn(self, command: list[str], log: Path) -> None:
        with log.open("wb") as out:
            # Its own process group: stop() ends the program and anything it started, and nothing else.
            self.processes.append(
                subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
            )  # fmt: skip

    def log(self, name: str) -> str:
        return (self.directory / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=20)


def _http_ok(url: str, context: ssl.SSLContext | None = None, token: str | None = None) -> bool:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def main(argv: list[str]) -> int:
    if argv != ["build"]:
        print("usage: python tests/kube_control_plane.py build", file=sys.stderr)
        return 2
    go = shutil.which("go")
    if go is None:
        print("Go is not installed", file=sys.stderr)
        return 1
    started = time.monotonic()
    built = build(go)
    if isinstance(built, str):
        print(built, file=sys.stderr)
        return 1
    print(f"kube-apiserver and kube-scheduler in {built['kube-apiserver'].parent} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
