from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from oracle_client import Oracle, build, go_command
from support.cluster_layout import GIT_HEAD
from support.trees import write_tree

from gpulint.cli.main import cli
from gpulint.lint.config import Config
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import ClusterInventory

# The tests root (its folders: unit, rules, integration, hostile, fuzz, upstream), its data and the checkout:
# a test finds its files from these, never from its own __file__, so that it may move between folders.
TESTS = Path(__file__).parent
DATA = TESTS / "data"
REPO = TESTS.parent

# A cluster's DeviceClasses, exported with its nodes (kubectl get nodes,resourceslices,deviceclasses): with them
# listed, gpu-resource-unknown may say no DeviceClass backs a name
DEVICE_CLASSES = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
"""


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


def lint_text(
    text: str, path: str = "manifest.yaml", config: Config | None = None, inventory: ClusterInventory | None = None
) -> list[Finding]:
    """Lint YAML text (dedented) as one file, as gpulint check does (one LintRun: its cluster objects join
    the inventory's), and return its findings."""
    body = textwrap.dedent(text).lstrip("\n")
    return LintRun(config or Config(), [Source(path, content=body.encode())], inventory).report().findings


def check_json(*args: str) -> list[dict]:
    """`gpulint check ARGS --format json`: the findings (the run must lint: exit 0 or 1)."""
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    findings: list[dict] = run.json()["findings"]
    return findings


def inventory_args(*paths: str | Path) -> list[str]:
    """--inventory PATH for each path."""
    return [arg for path in paths for arg in ("--inventory", str(path))]


def by_rule(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder the test runs in, as a user runs gpulint from their repository's root."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@dataclass(frozen=True)
class ClusterRepo:
    """A git work tree the cluster-scope tests write (support/cluster_layout.py), run from its root."""

    root: Path

    def write(self, files: dict[str, str]) -> None:
        write_tree(self.root, {**GIT_HEAD, **files})

    def unknown(self, named: str) -> list[tuple[str, str]]:
        """The gpu-resource-unknown errors and warnings of `gpulint check NAMED`: (path, severity)."""
        found = check_serious(named)
        return [(path, severity) for path, _, rule, severity, _ in found if rule == "gpu-resource-unknown"]


@pytest.fixture
def cluster_repo(repo: Path) -> ClusterRepo:
    return ClusterRepo(repo)


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


# The modules one xdist worker runs whole under `-n 2` (the README's and .ci/run's test command): the API
# server's, whose module fixture starts a control plane, and the oracle families (minutes of one module). Each is one work unit,
# and xdist hands out the units with the most tests first, so these start at once while the other worker takes
# the rest test by test. Named here, not by xdist_group marks: xdist 3.8 renames `item._nodeid`, which pytest 9.2
# no longer reads, so those marks group nothing.
ONE_WORKER = frozenset(
    {
        "tests/upstream/test_apiserver_roundtrip.py",
        "tests/upstream/test_kubectl_node_images.py",
        "tests/upstream/test_oracle.py",
    }
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") not in ("load", "loadgroup"):  # `-n 2` alone means load
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModulesOnOneWorker(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER else super()._split_scope(nodeid)

    return ModulesOnOneWorker(config, log)


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


@pytest.fixture
def make_api(tmp_path: Path):
    """Starts local Kubernetes API servers (tests/support/fake_apiserver.py) serving what it is given; stops them."""
    from support.fake_apiserver import FakeApiServer  # trustme and the kubernetes client: only where a test asks

    servers: list[FakeApiServer] = []

    def make(served: dict[str, dict[str, list[dict]]]) -> FakeApiServer:
        servers.append(FakeApiServer(tmp_path, served))
        return servers[-1]

    yield make
    for server in servers:
        server.stop()


def said(finding: Finding | dict | Any) -> str:
    """A finding's first line and the notes under it, one per line, as the text formatter prints them
    (a JSON finding, a Finding, or rule_harness's Found, whose message already holds its notes)."""
    if isinstance(finding, dict):
        return "\n".join((finding["message"], *finding.get("notes", ())))
    return "\n".join((finding.message, *getattr(finding, "notes", ())))


# What the unseen-repository tests compare of each error and warning: the fields of a JSON finding, and what it said
SERIOUS_FIELDS = ("path", "line", "rule", "severity", "said")


def errors_and_warnings(found: Run | Iterable[Finding], fields: Sequence[str] = SERIOUS_FIELDS) -> list[tuple]:
    """The errors and warnings of `gpulint check --format json` (a Run) or of lint_text's findings, each as the
    tuple of ``fields``: path, line, rule, severity (as JSON writes it) and said."""
    if isinstance(found, Run):
        return [
            tuple(said(f) if name == "said" else f[name] for name in fields)
            for f in found.json()["findings"]
            if f["severity"] in ("error", "warning")
        ]
    return [tuple(_finding_field(f, name) for name in fields) for f in found if f.severity >= Severity.WARNING]


def _finding_field(finding: Finding, name: str) -> Any:
    """A Finding's field under the name JSON gives it."""
    if name == "said":
        return said(finding)
    if name == "path":
        return finding.file
    if name == "severity":
        return finding.severity.name.lower()
    return getattr(finding, name)


def check_serious(*args: str, fields: Sequence[str] = SERIOUS_FIELDS) -> list[tuple]:
    """`gpulint check ARGS` as JSON: its errors and warnings as ``fields`` (errors_and_warnings)."""
    result = run_cli("check", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return errors_and_warnings(result, fields)


# The Kubernetes oracle (tests/oracle), one process for the session: test_oracle.py and
# test_oracle_policy_cost.py ask it. Under CI a missing Go toolchain fails rather than skips.
@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    go = go_command()
    if go is None:
        message = "the Go toolchain is not installed: the Kubernetes oracle (tests/oracle) cannot be built"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    process = Oracle(build(go))
    process.start()
    yield process
    process.close()
    counts = os.environ.get("ORACLE_COUNTS")  # scripts/oracle_batch.py reads how many cases each family ran
    if counts:
        Path(counts).write_text(json.dumps(process.asked), encoding="utf-8")
