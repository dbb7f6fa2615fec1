"""Running the renderers the user chose: bounded in time and output, with nothing a repository configures.

Helm loads plugins (post-renderers, getters) from ``$HELM_PLUGINS`` and reads repositories and
registries from its config home; kustomize runs exec and container plugins only when asked
(``--enable-alpha-plugins``, ``--enable-exec``) and legacy plugins from ``$KUSTOMIZE_PLUGIN_HOME``;
git (which kustomize runs for a remote base) reads system and global configuration. Every one of
those points at an empty temporary directory or is switched off, and gpulint never passes the flags.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulint.lint.errors import ToolError as ToolError  # defined apart: see gpulint.lint.errors

if TYPE_CHECKING:
    import subprocess

# shutil, subprocess, signal and tempfile are imported when a renderer is looked for or run: a run
# without charts or overlays (a pre-commit hook on one manifest) does neither.

# The output of one render is bounded like a file (gpulint.lint.inputs.sources.DEFAULT_MAX_FILE_BYTES).
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_ERROR_BYTES = 64 * 1024

INSTALL_HINTS = {
    "helm": "install Helm (https://helm.sh/docs/intro/install/) or give its path with --helm PATH",
    "kustomize": "install kubectl (its `kubectl kustomize` builds overlays) or kustomize "
    "(https://kubectl.docs.kubernetes.io/installation/kustomize/), or give a path with --kubectl/--kustomize",
}


@dataclass(frozen=True)
class Tool:
    name: str  # helm, kustomize, kubectl
    path: str


def find(name: str, explicit: str = "") -> Tool | None:
    """The binary named on the command line (or in the configuration), else the one on PATH."""
    import shutil

    if explicit:
        path = shutil.which(explicit) if os.sep not in explicit else explicit
        if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise ToolError(f"--{name}: {explicit}: not an executable file")
        return Tool(name, os.path.abspath(path))
    path = shutil.which(name)
    return Tool(name, path) if path else None


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: bytes
    stderr: str
    timed_out: bool = False
    too_large: bool = False


def _environment(home: str, git_protocols: str) -> dict[str, str]:
    """A clean environment: PATH (kustomize finds git and helm through it), locale, and every
    configuration and plugin directory pointed at ``home``, which is empty. ``git_protocols``: the
    transports git may use for a remote base (none, unless the user allowed remote bases)."""
    keep = {key: os.environ[key] for key in ("PATH", "SYSTEMROOT", "TMPDIR") if key in os.environ}
    empty = {
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, "config"),
        "XDG_CACHE_HOME": os.path.join(home, "cache"),
        "XDG_DATA_HOME": os.path.join(home, "data"),
        "HELM_PLUGINS": os.path.join(home, "helm-plugins"),
        "HELM_CONFIG_HOME": os.path.join(home, "helm-config"),
        "HELM_CACHE_HOME": os.path.join(home, "helm-cache"),
        "HELM_DATA_HOME": os.path.join(home, "helm-data"),
        "HELM_REPOSITORY_CONFIG": os.path.join(home, "helm-config", "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": os.path.join(home, "helm-cache", "repository"),
        "HELM_REGISTRY_CONFIG": os.path.join(home, "helm-config", "registry.json"),
        "KUSTOMIZE_PLUGIN_HOME": os.path.join(home, "kustomize-plugins"),
        "KUBECONFIG": os.path.join(home, "kubeconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        # a list of none refuses every transport (ext::, file::, ssh, http): git fetches nothing
        "GIT_ALLOW_PROTOCOL": git_protocols or "none",
        "LC_ALL": "C",
    }
    for key in ("HELM_PLUGINS", "HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME", "KUSTOMIZE_PLUGIN_HOME"):
        os.makedirs(empty[key], exist_ok=True)
    return {**keep, **empty}


def _limit_output(limit: int) -> None:  # pragma: no cover - runs in the child
    import resource

    # A renderer that writes without end is stopped by the kernel (SIGXFSZ) at the limit.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit + 1, limit + 1))


def run(argv: list[str], cwd: str, timeout: float, limit: int = MAX_OUTPUT_BYTES, git_protocols: str = "") -> Result:
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpulint-render-") as home:
        out_path, err_path = os.path.join(home, "stdout"), os.path.join(home, "stderr")
        env = _environment(os.path.join(home, "home"), git_protocols)
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    start_new_session=True,  # a timeout kills the renderer and what it started (git, helm)
                    preexec_fn=(lambda: _limit_output(limit)) if os.name == "posix" else None,
                )
            except OSError as exc:
                return Result(127, b"", f"cannot run {argv[0]}: {exc.strerror or exc}")
            timed_out = False
            try:
                returncode = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(process)
                returncode = process.wait()
        size = os.path.getsize(out_path)
        too_large = size > limit or returncode == -getattr(signal, "SIGXFSZ", -1)
        stdout = b""
        if not too_large:
            with open(out_path, "rb") as handle:
                stdout = handle.read(limit + 1)
        with open(err_path, "rb") as handle:
            stderr = handle.read(MAX_ERROR_BYTES).decode("utf-8", "replace")
    return Result(returncode, stdout, stderr, timed_out, too_large)


def _kill(process: subprocess.Popen[bytes]) -> None:
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
