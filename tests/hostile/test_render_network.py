"""A repository chooses no network request (issue #33, high).

A kustomization `resources: [http://127.0.0.1:PORT/...]` was fetched by kustomize, then `git fetch`ed: blind
SSRF from a CI runner. `check`, `explain` and `inventory` open no connection: a remote base is not rendered
(a warning says so) unless the user gives --render-remote-bases, which allows https only. A real listener on
127.0.0.1 records whether anyone connected; the real kubectl renders.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits: {nvidia.com/gpu: 1}
"""


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections (an HTTP request, a TLS hello, a git fetch)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.contacts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.contacts += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def gpulint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GPULINT")}
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def overlay(tmp_path: Path, kustomization: str) -> Path:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "overlay").mkdir()
    (repo / "overlay" / "kustomization.yaml").write_text(kustomization)
    (repo / "overlay" / "pod.yaml").write_text(POD)
    return repo


@pytest.mark.parametrize("command", [("check", "."), ("inventory", "."), ("explain", "overlay")])
def test_a_remote_base_is_not_fetched_by_default(tmp_path, listener, render_tools, command):
    url = f"http://127.0.0.1:{listener.port}/deploy/pod.yaml"  # the attack as found
    repo = overlay(tmp_path, f"resources:\n- pod.yaml\n- {url}\n")
    result = gpulint(repo, *command, "--kubectl", render_tools["kubectl"])
    assert listener.contacts == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if command[0] == "check":
        assert f"overlay/kustomization.yaml:3:1: warning[not-rendered] remote base '{url}' was not fetched" in (
            result.stdout
        )
        assert "--render-remote-bases" in result.stdout


@pytest.mark.parametrize(
    "entry",
    [
        "http://127.0.0.1:{port}/deploy/pod.yaml",  # the flag allows https only
        "ssh://git@127.0.0.1:{port}/org/repo//deploy",
        "git::http://127.0.0.1:{port}/org/repo",
    ],
)
def test_the_user_flag_allows_https_only(tmp_path, listener, render_tools, entry):
    entry = entry.format(port=listener.port)
    repo = overlay(tmp_path, f"resources:\n- pod.yaml\n- {entry}\n")
    result = gpulint(repo, "check", ".", "--kubectl", render_tools["kubectl"], "--render-remote-bases")
    assert listener.contacts == 0, result.stdout + result.stderr
    assert "only https remote bases are fetched" in result.stdout


def test_a_remote_transformer_in_a_base_is_not_fetched(tmp_path, listener, render_tools):
    # one more of the class: the remote entry hides in a base's transformers, not the overlay's resources
    repo = overlay(tmp_path, "resources:\n- pod.yaml\n- ../base\n")
    (repo / "base").mkdir()
    (repo / "base" / "kustomization.yaml").write_text(
        f"resources: []\ntransformers:\n- https://127.0.0.1:{listener.port}/org/repo//transformers\n"
    )
    result = gpulint(repo, "check", ".", "--kubectl", render_tools["kubectl"])
    assert listener.contacts == 0, result.stdout + result.stderr
    assert "base/kustomization.yaml:3:1: warning[not-rendered] remote base" in result.stdout


def test_with_the_user_flag_an_https_base_is_fetched(tmp_path, listener, render_tools):
    # the trap: the user's explicit flag does reach the network (our listener speaks no TLS: the render fails)
    repo = overlay(tmp_path, f"resources:\n- pod.yaml\n- https://127.0.0.1:{listener.port}/deploy/pod.yaml\n")
    result = gpulint(repo, "check", ".", "--kubectl", render_tools["kubectl"], "--render-remote-bases")
    assert listener.contacts >= 1, result.stdout + result.stderr
    assert "warning[not-rendered]" in result.stdout
