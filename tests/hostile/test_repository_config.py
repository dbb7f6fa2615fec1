"""A repository's own configuration runs nothing and reads nothing outside the repository (issue #33).

A pull request writes `.gpulint.yaml` (or `[tool.gpulint]`), and CI runs `gpulint check .` on its checkout,
as the GitHub Action does. Before, `render: {helm: tools/helm}` made gpulint execute the repository's
script, and `inventory: ../../secret` printed a runner file's bytes in a parse error. Every case runs the
real `gpulint` in a subprocess from the checkout, as CI does; the attacker's program would leave a marker.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer}
    spec:
      containers:
      - name: c
        image: i
        resources:
          limits: {nvidia.com/gpu: 1}
          requests: {nvidia.com/gpu: 2}
    """)
SECRET = "ghp_SECRET_RUNNER_TOKEN_0123456789"


def gpulint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GPULINT")}
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A pull request's checkout (a git work tree with a chart and an overlay) and the marker its program
    would write; beside it, outside the checkout, a runner file holding a credential."""
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)  # a work tree as actions/checkout leaves it
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: trainer\nversion: 0.1.0\n")
    (repo / "chart" / "templates" / "pod.yaml").write_text(POD)
    (repo / "overlay").mkdir()
    (repo / "overlay" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (repo / "overlay" / "pod.yaml").write_text(POD)
    marker = tmp_path / "ran"
    tools = repo / "tools"
    tools.mkdir()
    for name in ("helm", "kustomize", "kubectl"):
        program = tools / name
        program.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        program.chmod(0o755)
    (tmp_path / "runner-secret.yaml").write_text(f"token: {SECRET}\n  bad: [indentation\n")
    return repo, marker


@pytest.mark.slow
@pytest.mark.parametrize("key", ["helm", "kustomize", "kubectl"])
@pytest.mark.parametrize(
    "how",
    ["found", "pyproject", "--config inside", "--config from elsewhere"],
)
def test_a_repository_configuration_never_runs_a_program_it_names(tmp_path, key, how):
    repo, marker = checkout(tmp_path)
    cwd, args = repo, ["check", "."]
    if how == "pyproject":
        config = repo / "pyproject.toml"
        config.write_text(f'[project]\nname = "x"\n\n[tool.gpulint.render]\n{key} = "tools/{key}"\n')
    else:
        config = repo / ("ci/gpulint.yaml" if how.startswith("--config") else ".gpulint.yaml")
        config.parent.mkdir(exist_ok=True)
        config.write_text(f"render:\n  timeout: 10\n  {key}: ../tools/{key}\n")
    if how == "--config inside":
        args += ["--config", "ci/gpulint.yaml"]
    if how == "--config from elsewhere":  # run from outside the checkout, naming the checkout and its file
        cwd, args = tmp_path, ["check", "checkout", "--config", "checkout/ci/gpulint.yaml"]
    result = gpulint(cwd, *args)
    assert not marker.exists(), f"the repository's {key} ran"
    assert result.returncode == 2, result.stdout + result.stderr
    line = 5 if how == "pyproject" else 3
    assert f"gpulint.yaml:{line}:" in result.stderr or f"pyproject.toml:{line}:" in result.stderr, result.stderr
    assert f"'render.{key}' names a program to run" in result.stderr
    assert f"--{key}" in result.stderr  # what to do instead
    assert "Traceback" not in result.stderr


def test_a_repository_configuration_cannot_turn_on_kustomize_running_helm(tmp_path):
    repo, _ = checkout(tmp_path)
    (repo / ".gpulint.yaml").write_text("render:\n  kustomize-enable-helm: true\n")
    result = gpulint(repo, "check", ".")
    assert result.returncode == 2
    assert ".gpulint.yaml:2:26: 'render.kustomize-enable-helm' lets kustomize run helm" in result.stderr


@pytest.mark.slow
def test_the_users_own_configuration_outside_the_repository_names_the_program(tmp_path, helm):
    """The trap: the same key in a file outside the checkout is the user's, and the real helm renders."""
    repo, marker = checkout(tmp_path)
    user = tmp_path / "home" / "gpulint.yaml"
    user.parent.mkdir()
    user.write_text(f"render:\n  helm: {helm}\n")
    result = gpulint(repo, "check", "chart", "--config", str(user), "--ignore", "dev-shm-missing")
    assert result.returncode == 1, result.stderr
    assert "chart/templates/pod.yaml:10:34: error[gpu-request-without-limit]" in result.stdout
    assert not marker.exists()


@pytest.mark.slow
def test_the_command_line_names_the_program(tmp_path, helm):
    repo, _ = checkout(tmp_path)
    (repo / ".gpulint.yaml").write_text("render:\n  timeout: 30\n")  # a repository's harmless render keys stay
    result = gpulint(repo, "check", "chart", "--helm", str(helm), "--ignore", "dev-shm-missing")
    assert result.returncode == 1, result.stderr
    assert "chart/templates/pod.yaml:10:34: error[gpu-request-without-limit]" in result.stdout


PATH_KEYS = {
    "inventory": "inventory: [{path}]",
    "policies": "policies: [{path}]",
    "baseline": "baseline: {path}",
    "node-catalog": "node-catalog: [{path}]",
    "schema-location": "schema-location: [{path}]",
    "render.charts": "render:\n  charts:\n    chart:\n      values: [{path}]",
    "clusters.dev.inventory": "clusters:\n  dev:\n    paths: ['*']\n    inventory: [{path}]",
}


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PATH_KEYS))
@pytest.mark.parametrize("way", ["dot-dot", "symbolic link", "absolute"])
def test_a_repository_configuration_reads_nothing_outside_the_repository(tmp_path, key, way):
    repo, _ = checkout(tmp_path)
    secret = tmp_path / "runner-secret.yaml"
    if way == "dot-dot":
        path = "../runner-secret.yaml"
    elif way == "absolute":
        path = str(secret)
    else:  # a link planted in the pull request, pointing out of the checkout
        (repo / "inventory").symlink_to(tmp_path)
        path = "inventory/runner-secret.yaml"
    (repo / ".gpulint.yaml").write_text(PATH_KEYS[key].format(path=path) + "\n")
    result = gpulint(repo, "check", ".", "--no-render")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"'{key}' leads outside the repository" in result.stderr
    assert ".gpulint.yaml:" in result.stderr
    assert SECRET not in result.stdout + result.stderr


@pytest.mark.slow
def test_paths_elsewhere_in_the_same_repository_are_read(tmp_path):
    """The trap: a configuration in a subfolder names an inventory higher up in its own work tree."""
    repo, _ = checkout(tmp_path)
    (repo / "inventory").mkdir()
    (repo / "inventory" / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {nvidia.com/gpu: 8}\n"
    )
    team = repo / "teams" / "ml"
    team.mkdir(parents=True)
    (team / "pod.yaml").write_text(POD)
    (team / ".gpulint.yaml").write_text("inventory: [../../inventory]\n")
    result = gpulint(team, "check", ".")
    assert result.returncode == 1, result.stderr
    assert "pod.yaml:10:34: error[gpu-request-without-limit]" in result.stdout


@pytest.mark.slow
def test_a_users_configuration_outside_may_name_files_anywhere(tmp_path):
    repo, _ = checkout(tmp_path)
    shared = tmp_path / "fleet"
    shared.mkdir()
    (shared / "nodes.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {}}\n")
    user = tmp_path / "gpulint.yaml"
    user.write_text("inventory: [fleet]\n")
    result = gpulint(repo, "check", "overlay/pod.yaml", "--config", str(user))
    assert result.returncode == 1, result.stderr
    assert "gpu-resource-unknown" in result.stdout or "Insufficient nvidia.com/gpu" in result.stdout, result.stdout
