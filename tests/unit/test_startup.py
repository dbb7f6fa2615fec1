"""What a trivial run imports: a pre-commit hook runs gpulint once per commit on a file or two, so
start-up is paid every time. These tests hold the import set of `gpulint --version` and of a one-file
check, so a module-level import of something heavy (the Kubernetes client, the CEL engine, the
workers' multiprocessing, the webhook) does not creep back in unnoticed."""

import json
import subprocess
import sys

import pytest
from conftest import REPO

from gpulint.lint.rule_index import RULE_INDEX

# Runs gpulint's entry point in a fresh interpreter and writes the modules loaded by its exit.
_PROBE = """
import atexit, json, os, sys
out = sys.argv[1]
def record(*_):
    with open(out, "w") as file:
        file.write(json.dumps(sorted(sys.modules)))
atexit.register(record)
leave = os._exit  # gpulint check leaves without the interpreter's teardown (and its atexit calls)
os._exit = lambda status: (record(), leave(status))
sys.argv = ["gpulint", *sys.argv[2:]]
from gpulint.cli.main import main
main()
"""

# Never needed to read and check one plain manifest without an inventory.
NOT_FOR_A_PLAIN_FILE = (
    "kubernetes",  # --live-inventory only
    "urllib3",
    "cel_expr_python",  # only for a CEL expression (DRA selectors, policies)
    "yaml_rs",  # inventories only
    "multiprocessing",  # --jobs workers, for large inputs only
    "gpulint.kube.cel.sandbox",  # evaluations the cost estimate cannot bound
    "gpulint.lint.world.live_inventory",
    "gpulint.lint.output.fix",
    "gpulint.cli.explain",
    "gpulint.webhook",
    "gpulint.lint.policies",  # --policy only (its errors are caught by their gpulint.lint.errors type)
    "gpulint.kube.cel.engine",  # CEL, and the DRA claim model and allocator that evaluate it: DRA objects only
    "gpulint.kube.dra.allocation",
    "gpulint.lint.verdicts.shared",  # the cluster verdicts: an inventory's nodes, pools or RuntimeClasses only
    "gpulint.kube.gangs.packing",  # packing a gang: an inventory's nodes only
    "gpulint.kube.queueing.kueue",  # Kueue's model and flavor assignment: a workload that names a queue only
    "gpulint.kube.queueing.assign",
    "gpulint.kube.queueing.namespace",  # LimitRanges and ResourceQuotas: a namespace that has them only
    "gpulint.kube.pools.readers",  # node pools (Karpenter, cluster-api, the clouds'): an inventory or files with pools
    "gpulint.kube.pools.model",
    "gpulint.kube.pools.catalog",
    "gpulint.kube.pools.binding",
    "hashlib",  # fingerprints: baselines, SARIF and GitLab reports only
    "gpulint.lint.output.baseline",
    "gpulint.lint.inputs.render.tools",  # finding helm, kustomize or kubectl: charts and overlays only
    "subprocess",  # renderers (helm, kustomize): charts and overlays only
    "shutil",
    "tempfile",
)
# Nor for printing the version.
NOT_FOR_THE_VERSION = (
    *NOT_FOR_A_PLAIN_FILE,
    "jsonschema_rs",
    "gpulint.lint.engine",
    "gpulint.lint.checks",
    "gpulint.lint.world.resolver",
    "gpulint.lint.run",
    "gpulint.cli.check",
)

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
"""


def imported(tmp_path, *args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    out = tmp_path / "modules.json"
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *args], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    return set(json.loads(out.read_text())), run


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if any(m == name or m.startswith(name + ".") for m in modules))


def test_the_version_loads_no_checks_engine_or_optional_dependency(tmp_path):
    modules, run = imported(tmp_path, "--version")
    assert run.returncode == 0 and "gpulint, version" in run.stdout
    assert loaded(modules, NOT_FOR_THE_VERSION) == []


@pytest.mark.slow
def test_a_one_file_check_loads_only_what_the_file_needs(tmp_path):
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    modules, run = imported(tmp_path, "check", "pod.yaml")
    assert run.returncode == 0, run.stderr
    assert "1 file, 1 object" in run.stdout
    assert "gpulint.lint.engine" in modules and "jsonschema_rs" in modules  # it did check the pod
    assert loaded(modules, NOT_FOR_A_PLAIN_FILE) == []


def check_modules(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in modules if m.startswith("gpulint.lint.checks.")}


def routed(kind: str, available: frozenset = frozenset()) -> set[str]:
    """The rule modules the index routes an object of this kind to, with these needs met."""
    return {
        module
        for module, spec, has_check in RULE_INDEX
        if has_check and (spec.needs <= available or spec.in_part) and spec.reads(kind)
    }


@pytest.mark.slow
def test_a_one_file_check_imports_only_the_rules_its_kinds_reach(tmp_path):
    """Rules for other kinds (DRA claims, DaemonSets, MPIJobs...) and rules skipped for want of an inventory
    are never imported for one Pod."""
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    modules, run = imported(tmp_path, "check", "pod.yaml")
    assert run.returncode == 0, run.stderr
    assert check_modules(modules) == routed("Pod")
    assert {"gpu_unschedulable", "cel_invalid", "daemonset_coverage"}.isdisjoint(check_modules(modules))


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("rules",),
        ("rule", "gpu-unschedulable"),
        ("check", "--select", "gpu-non-integer", "--ignore", "dev-shm-missing", "pod.yaml"),
    ],
)
def test_listing_rules_and_validating_rule_ids_import_no_rule(tmp_path, args):
    (tmp_path / "pod.yaml").write_text(GPU_POD.replace("limits: {nvidia.com/gpu: 1}", "limits: {cpu: 1}"))
    modules, run = imported(tmp_path, *args)
    assert run.returncode == 0, run.stderr
    expected = routed("Pod") & {"gpu_non_integer"} if args[0] == "check" else set()
    assert check_modules(modules) == expected


CLAIM = (
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
    "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
    "        selectors:\n        - cel: {expression: 'device.driver == \"gpu.nvidia.com\"'}\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("manifest", "args", "needed"),
    [
        (
            CLAIM,
            (),
            (
                "cel_expr_python",
                "gpulint.kube.cel.engine",
                "gpulint.kube.dra.allocation",
                "gpulint.lint.checks.cel_invalid",
                "gpulint.lint.checks.device_class_unknown",
            ),
        ),
        (
            GPU_POD,
            ("--inventory", str(REPO / "examples" / "inventory")),
            (
                "gpulint.lint.checks.gpu_unschedulable",
                "gpulint.lint.checks.over_tight_affinity",
                "gpulint.lint.verdicts.shared",
                "gpulint.kube.gangs.packing",
            ),
        ),
    ],
)
def test_what_a_file_needs_is_loaded_when_it_needs_it(tmp_path, manifest, args, needed):
    """The other side of the guard: the lazy imports still happen when the input calls for them."""
    (tmp_path / "input.yaml").write_text(manifest)
    modules, run = imported(tmp_path, "check", "input.yaml", *args)
    assert run.returncode in (0, 1), run.stderr
    assert [name for name in needed if name not in modules] == []


@pytest.mark.slow
def test_a_webhook_imports_every_check_before_its_first_review(tmp_path):
    """A server pays the imports once, at start: no review (and no request thread) imports a rule module."""
    probe = (
        "import json, sys\n"
        "from gpulint.lint.config import Config\n"
        "from gpulint.lint.review import ReviewSnapshot\n"
        "ReviewSnapshot.build(Config())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    with_checks = {module for module, _, has_check in RULE_INDEX if has_check}
    assert check_modules(set(json.loads(run.stdout))) == with_checks
