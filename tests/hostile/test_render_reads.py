"""A renderer reads nothing outside the repository (issue #33, high).

helm follows a symbolic link in a chart: `chart/leak.txt -> ../../secret` and `.Files.Get "leak.txt"` printed
the runner's file in a finding (the pod's invalid name). kustomize builds a base anywhere on the disk that a
directory link or a `../..` path reaches. Both now render a copy of the repository that holds no link out.
Every case runs the real `gpulint` with the real helm and kubectl, from the checkout, as CI does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SECRET = "ghp-secret-runner-token-0123456789"
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits: {{nvidia.com/gpu: 1}}
      requests: {{nvidia.com/gpu: 2}}
"""


def gpulint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GPULINT")}
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def checkout(tmp_path: Path) -> Path:
    """A pull request's checkout and, beside it on the runner, a secret and another project's overlay."""
    repo = tmp_path / "work" / "checkout"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "secret").write_text(SECRET + "\n")
    other = tmp_path / "work" / "other-project"  # another checkout on the same runner
    other.mkdir()
    (other / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (other / "pod.yaml").write_text(POD.format(name=SECRET))
    return repo


def test_a_chart_link_out_of_the_repository_is_not_read_by_helm(tmp_path, render_tools):
    repo = checkout(tmp_path)
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    os.symlink("../../../secret", chart / "leak.txt")  # the attack as found
    (chart / "templates" / "pod.yaml").write_text(POD.format(name='{{ .Files.Get "leak.txt" | trim }}'))
    result = gpulint(repo, "check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert SECRET not in result.stdout + result.stderr
    assert result.returncode == 1, result.stderr
    # the rest of the chart is still checked, and the link is named
    assert "chart/leak.txt" in result.stdout and "leads out of the repository" in result.stdout
    assert "gpu-request-without-limit" in result.stdout


def test_a_template_that_is_a_link_out_is_not_rendered(tmp_path, render_tools):
    repo = checkout(tmp_path)
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    os.symlink("../../../other-project/pod.yaml", chart / "templates" / "stolen.yaml")
    result = gpulint(repo, "check", ".", "--helm", render_tools["helm"])
    assert SECRET not in result.stdout + result.stderr
    assert "chart/templates/stolen.yaml" in result.stdout


def test_a_link_inside_the_repository_is_still_followed(tmp_path, render_tools):
    repo = checkout(tmp_path)
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "shared").mkdir()
    (repo / "shared" / "name.txt").write_text("trainer\n")
    os.symlink("../shared/name.txt", chart / "name.txt")
    (chart / "templates" / "pod.yaml").write_text(POD.format(name='{{ .Files.Get "name.txt" | trim }}'))
    result = gpulint(repo, "check", ".", "--helm", render_tools["helm"])
    assert "Pod/trainer" in result.stdout and "leads out" not in result.stdout, result.stdout


def test_a_kustomize_base_outside_the_repository_is_not_built(tmp_path, render_tools):
    repo = checkout(tmp_path)
    overlay = repo / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n- pod.yaml\n- ../../other-project\n")
    (overlay / "pod.yaml").write_text(POD.format(name="trainer"))
    result = gpulint(repo, "check", ".", "--kubectl", render_tools["kubectl"])
    assert SECRET not in result.stdout + result.stderr
    assert "overlay/kustomization.yaml:3:1" in result.stdout and "leads outside the repository" in result.stdout


def test_a_kustomize_directory_link_out_is_not_built(tmp_path, render_tools):
    repo = checkout(tmp_path)
    overlay = repo / "overlay"
    overlay.mkdir()
    os.symlink("../../other-project", overlay / "base")
    (overlay / "kustomization.yaml").write_text("resources:\n- pod.yaml\n- base\n")
    (overlay / "pod.yaml").write_text(POD.format(name="trainer"))
    result = gpulint(repo, "check", ".", "--kubectl", render_tools["kubectl"])
    assert SECRET not in result.stdout + result.stderr
    assert "overlay/base" in result.stdout
