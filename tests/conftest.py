from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli.main import cli
from gpulint.lint.config import Config
from gpulint.lint.findings import Finding
from gpulint.lint.run import LintRun
from gpulint.lint.sources import Source

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


def run_cli(*args: str, input: str | bytes | None = None) -> Run:
    runner = CliRunner()
    result = runner.invoke(cli, list(args), input=input, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def lint_text(text: str, path: str = "manifest.yaml", config: Config | None = None) -> list[Finding]:
    """Lint YAML text (dedented) as one file and return its findings."""
    body = textwrap.dedent(text).lstrip("\n")
    return LintRun(config or Config(), [Source(path, content=body.encode())]).report().findings


def by_rule(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


def _k8s_binary(name: str) -> Path:
    from k8s_binaries import binaries

    found = binaries()
    if isinstance(found, str):
        pytest.skip(f"no {name}: {found}")
    return found[name]


@pytest.fixture(scope="session")
def helm() -> Path:
    """The real helm binary (tests/k8s_binaries.py)."""
    return _k8s_binary("helm")


@pytest.fixture(scope="session")
def kubectl() -> Path:
    """The real kubectl binary, kustomize built in (tests/k8s_binaries.py)."""
    return _k8s_binary("kubectl")


@pytest.fixture(scope="session")
def render_tools(helm: Path, kubectl: Path) -> dict[str, str]:
    """Both renderers, as the rendering tests pass them (--helm, --kubectl)."""
    return {"helm": str(helm), "kubectl": str(kubectl)}
