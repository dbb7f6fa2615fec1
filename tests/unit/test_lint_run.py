"""Issue #12, "One parse, one world": the user-visible bugs it names, reproduced through the CLI on real files.

- objects other files refer to (claim templates, DeviceClasses, gang groups) were found by a byte regex that
  could not read JSON: a Pod whose ResourceClaimTemplate is in ``claim.json`` was told it does not exist;
- every linted file is parsed once per invocation (check, check --inventory, --policy, --fix, explain);
- forked workers see the objects of files other workers hold;
- the webhook lints the object itself: ``per-path-ignores`` (globs over file paths) never exempt a review.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA, run_cli, said
from webhook_helpers import BAD_POD, Server, review

DRA_INVENTORY = str(DATA / "dra")


def _complete(write, *kinds: str) -> str:
    """A configuration declaring that the linted files hold every object of ``kinds`` (outside the linted folder,
    passed with --config): only then is a reference found nowhere reported missing (docs/catalogs.md)."""
    return str(write("config/complete.yaml", f"complete: [{', '.join(kinds)}]\n"))


def _findings(result) -> list[tuple[str, str, int, int, str, str]]:
    """(file name, rule, line, column, severity, message) of a JSON report; claim-unsatisfiable's message
    with the allocator's detail from its notes (the whole answer these tests pin)."""
    return [
        (Path(f["path"]).name, f["rule"], f["line"], f["column"], f["severity"], _with_detail(f))
        for f in result.json()["findings"]
    ]


def _with_detail(finding: dict) -> str:
    if finding["rule"] != "claim-unsatisfiable" or not finding["notes"]:
        return said(finding)
    return f"{finding['message']}: {finding['notes'][0]}"


# --------------------------------------------------------------------------- cross-file objects in JSON

CLAIM_TEMPLATE_JSON = """\
{
  "apiVersion": "resource.k8s.io/v1",
  "kind": "ResourceClaimTemplate",
  "metadata": {"name": "single-gpu", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
  ]}}}
}
"""

POD_WITH_CLAIM = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: ml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: {template}
  containers:
  - name: main
    image: registry.example.com/trainer:1.0
    resources:
      claims:
      - name: gpu
        request: {request}
"""


def test_claim_template_in_a_json_file_is_found(write, tmp_path):
    write("claim.json", CLAIM_TEMPLATE_JSON)
    write("pod.yaml", POD_WITH_CLAIM.format(name="trainer", template="single-gpu", request="gpu"))
    result = run_cli("check", str(tmp_path), "--format", "json", "--select", "claim-reference-invalid")
    assert result.exit_code == 0 and result.json()["findings"] == []
    # The template's requests are read from the JSON too, and a name it does not have is still reported.
    write("typo.yaml", POD_WITH_CLAIM.format(name="typo", template="single-gpus", request="gpu"))
    write("wrong-request.yaml", POD_WITH_CLAIM.format(name="wrong", template="single-gpu", request="gpus"))
    config = _complete(write, "ResourceClaimTemplate")
    result = run_cli(
        "check",
        str(tmp_path / "claim.json"),
        str(tmp_path / "pod.yaml"),
        str(tmp_path / "typo.yaml"),
        str(tmp_path / "wrong-request.yaml"),
        "--format",
        "json",
        "--select",
        "claim-reference-invalid",
        "--config",
        config,
    )
    assert _findings(result) == [
        (
            "typo.yaml",
            "claim-reference-invalid",
            9,
            32,
            "error",
            "ResourceClaimTemplate 'single-gpus' is not among the linted files (namespace ml); the pod stays Pending "
            "until it exists",
        ),
        (
            "wrong-request.yaml",
            "claim-reference-invalid",
            16,
            18,
            "error",
            "container 'main' asks for request 'gpus' of claim 'gpu', which has only gpu",
        ),
    ]


# `kubectl get deviceclasses -o json` output: a List.
DEVICE_CLASSES_JSON = """\
{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "h100.example.com"},
   "spec": {"selectors": [{"cel": {"expression":
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}]}}
]}
"""

H100_TEMPLATES = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: eight-h100
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: h100.example.com
          allocationMode: ExactCount
          count: 8
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: nine-h100
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: h100.example.com
          allocationMode: ExactCount
          count: 9
"""

TYPO_CLASS_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: typo, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: h100.exmple.com}
"""


def test_device_class_in_a_json_file_is_known(write, tmp_path):
    write("classes.json", DEVICE_CLASSES_JSON)
    write("claims.yaml", H100_TEMPLATES)
    result = run_cli("check", str(tmp_path), "--format", "json", "--select", "device-class-unknown")
    assert result.exit_code == 0 and result.json()["findings"] == []
    write("typo.yaml", TYPO_CLASS_TEMPLATE)
    result = run_cli("check", str(tmp_path), "--format", "json", "--select", "device-class-unknown")
    assert _findings(result) == [
        (
            "typo.yaml",
            "device-class-unknown",
            9,
            36,
            "info",  # the cluster's classes are not known: a likely typo, no proof (before: a warning)
            "DeviceClass 'h100.exmple.com' is not defined in the linted files and no DRA driver gpulint knows installs "
            "it; did you mean 'h100.example.com'?\nif a driver installs it, add `kubectl get deviceclasses -o yaml` to "
            "the inventory",
        )
    ]


def test_device_class_in_a_json_file_is_allocated_from_with_an_inventory(write, tmp_path):
    """The inventory lists the cluster's classes, and the linted JSON adds one: claim-unsatisfiable judges
    claims of that class on the inventory's devices (16 H100s, 8 per node), device-class-unknown is silent."""
    write("classes.json", DEVICE_CLASSES_JSON)
    write("claims.yaml", H100_TEMPLATES)
    result = run_cli(
        "check",
        str(tmp_path),
        "--format",
        "json",
        "--inventory",
        DRA_INVENTORY,
        "--select",
        "device-class-unknown,claim-unsatisfiable",
    )
    assert result.exit_code == 1
    assert _findings(result) == [
        (
            "claims.yaml",
            "claim-unsatisfiable",
            25,
            7,
            "error",
            "the claim can never be allocated: no node of 5 can satisfy it: request 'gpus' needs 9 devices of class "
            "h100.example.com; 8 pass the class selectors and 8 its own selectors, on the node that comes closest, "
            "dgx-0",
        )
    ]


PODGROUP_JSON = """\
{
  "apiVersion": "scheduling.x-k8s.io/v1alpha1",
  "kind": "PodGroup",
  "metadata": {"name": "trainers", "namespace": "ml"},
  "spec": {"minMember": 8, "scheduleTimeoutSeconds": 60}
}
"""

COSCHEDULED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ml
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    metadata:
      labels:
        scheduling.x-k8s.io/pod-group: {group}
    spec:
      schedulerName: scheduler-plugins-scheduler
      restartPolicy: Never
      containers:
      - name: worker
        image: registry.example.com/train:1.0
        resources:
          limits:
            nvidia.com/gpu: 8
"""


def test_pod_group_in_a_json_file_is_found(write, tmp_path):
    write("podgroup.json", PODGROUP_JSON)
    write("job.yaml", COSCHEDULED_JOB.format(name="train", pods=8, group="trainers"))
    result = run_cli("check", str(tmp_path), "--format", "json", "--select", "gang-inconsistent")
    assert result.exit_code == 0 and result.json()["findings"] == []
    # minMember is read from the JSON group; a name no group has is a mistake (the repository keeps its groups).
    write(
        "job.yaml",
        COSCHEDULED_JOB.format(name="train", pods=4, group="trainers")
        + "---\n"
        + COSCHEDULED_JOB.format(name="eval", pods=1, group="trainer"),
    )
    config = _complete(write, "PodGroup")  # the repository keeps its groups: a name no group has is a mistake
    result = run_cli(
        "check",
        str(tmp_path / "podgroup.json"),
        str(tmp_path / "job.yaml"),
        "--format",
        "json",
        "--select",
        "gang-inconsistent",
        "--config",
        config,
    )
    assert _findings(result) == [
        (
            "job.yaml",
            "gang-inconsistent",
            12,
            40,
            "error",
            "coscheduling PodGroup trainers: its group requires 8 pods at once but this object creates only 4\nthe "
            "gang can never reach quorum and its pods wait forever",
        ),
        (
            "job.yaml",
            "gang-inconsistent",
            34,
            40,
            "error",
            "the pods join coscheduling PodGroup 'trainer', which does not exist: they stay unschedulable "
            "until it exists\ndid you mean 'trainers'?",
        ),
    ]


# --------------------------------------------------------------------------- parsed once


@pytest.fixture
def parses(monkeypatch) -> Counter:
    """Parses by path: calls of gpulint.lint.inputs.loader.load_bytes wherever gpulint calls it from (its module and
    every module that imported the name: gpulint.lint.run, the inventory, policies, configuration), and
    inventory files read by the fast readers."""
    import gpulint.cli.check  # noqa: E401,F401
    import gpulint.cli.explain
    import gpulint.lint.config
    import gpulint.lint.inputs.loader
    import gpulint.lint.policies
    import gpulint.lint.run  # noqa: F401
    import gpulint.lint.world.inventory

    counts: Counter = Counter()
    original = gpulint.lint.inputs.loader.load_bytes

    def counting(path, raw, **limits):
        counts[path] += 1
        return original(path, raw, **limits)

    # Inventory files that need no positions are read once by the fast readers instead (JSON, yaml-rs).
    original_fast = gpulint.lint.world.inventory._fast_documents

    def counting_fast(display, raw, *rest):
        documents = original_fast(display, raw, *rest)
        if documents is not None:
            counts[display] += 1
        return documents

    monkeypatch.setattr(gpulint.lint.world.inventory, "_fast_documents", counting_fast)
    patched = []
    for name, module in list(sys.modules.items()):
        if name.startswith("gpulint") and getattr(module, "load_bytes", None) is original:
            monkeypatch.setattr(module, "load_bytes", counting)
            patched.append(name)
    assert "gpulint.lint.inputs.loader" in patched and "gpulint.lint.run" in patched, patched
    return counts


# A policy that reads every linted object: each Pod's claim templates must be among the linted files.
OBJECTS_POLICY = """\
apiVersion: gpulint.io/v1alpha1
kind: Policy
metadata: {name: claim-templates-in-repository}
spec:
  severity: warning
  match: {kinds: [Pod]}
  validations:
  - expression: >-
      !has(object.spec.resourceClaims) || object.spec.resourceClaims.all(c,
        !has(c.resourceClaimTemplateName) || objects.exists(o, o.kind == "ResourceClaimTemplate" &&
        o.metadata.name == c.resourceClaimTemplateName))
    message: a claim template of this pod is not in the repository
  docs: {summary: Claim templates live in the repository., rationale: r, example: e, useInstead: u}
"""

LINTED_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: spare-h100}
spec:
  driver: gpu.nvidia.com
  nodeName: dgx-1
  pool: {name: spare, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-8
    attributes:
      type: {string: gpu}
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
"""


def _dra_repository(write) -> list[Path]:
    """Linted files with DRA objects (a class, a slice, templates) and pods that use them, JSON and YAML."""
    return [
        write("repo/classes.json", DEVICE_CLASSES_JSON),
        write("repo/claims.yaml", H100_TEMPLATES),
        write("repo/slice.yaml", LINTED_SLICE),
        write(
            "repo/ten.yaml", H100_TEMPLATES.split("---\n")[1].replace("nine", "ten").replace("count: 9", "count: 10")
        ),
        write("repo/claim.json", CLAIM_TEMPLATE_JSON),
        write("repo/pod.yaml", POD_WITH_CLAIM.format(name="trainer", template="single-gpu", request="gpu")),
        write("repo/typo.yaml", POD_WITH_CLAIM.format(name="typo", template="single-gpus", request="gpu")),
    ]


def _linted_counts(parses: Counter, files: list[Path]) -> dict[str, int]:
    return {Path(path).name: parses[path] for path in map(str, files)}


def test_check_parses_each_linted_file_once(write, parses):
    files = _dra_repository(write)
    policy = write("policy.yaml", OBJECTS_POLICY)
    result = run_cli(
        "check",
        str(files[0].parent),
        "--config",
        _complete(write, "ResourceClaimTemplate"),
        "--format",
        "json",
        "--inventory",
        DRA_INVENTORY,
        "--policy",
        str(policy),
        "--jobs",
        "1",
    )
    # The run really used the linted set (the JSON class, the slice that puts a 9th H100 on dgx-1), the
    # inventory (the other 16 H100s) and the policy's `objects`.
    assert [(name, rule, message) for name, rule, _, _, _, message in _findings(result)] == [
        (
            "ten.yaml",
            "claim-unsatisfiable",
            "the claim can never be allocated: no node of 5 can satisfy it: request 'gpus' needs 10 devices of class "
            "h100.example.com; 9 pass the class selectors and 9 its own selectors, on the node that comes closest, "
            "dgx-1",
        ),
        ("typo.yaml", "claim-templates-in-repository", "a claim template of this pod is not in the repository"),
        (
            "typo.yaml",
            "claim-reference-invalid",
            "ResourceClaimTemplate 'single-gpus' is not among the linted files (namespace ml); the pod stays Pending "
            "until it exists",
        ),
    ]
    assert result.json()["summary"]["files"] == len(files)
    assert _linted_counts(parses, files) == {path.name: 1 for path in files}
    inventory_files = [str(DATA / "dra" / name) for name in ("classes.yaml", "nodes.yaml", "slices.yaml")]
    assert {Path(p).name: parses[p] for p in inventory_files} == {"classes.yaml": 1, "nodes.yaml": 1, "slices.yaml": 1}
    assert parses[str(policy)] == 1


def test_a_large_check_holds_one_parse_at_a_time_and_reports_the_same(write, parses, monkeypatch):
    """Over KEPT_SOURCE_BYTES of sources, `check` parses each file for the objects other files read, drops the
    parse, and parses the file again to check it: the same report as the run that keeps every parse (the
    claim template found in another file, the 9th H100 on a linted slice), with one parse alive at a time."""
    import weakref

    import gpulint.lint.engine
    import gpulint.lint.run

    files = _dra_repository(write)
    config = _complete(write, "ResourceClaimTemplate")
    args = ("check", str(files[0].parent), "--config", config, "--format", "json", "--inventory", DRA_INVENTORY)
    alive: list[weakref.ref] = []
    held: list[int] = []
    real_parse, real_check = gpulint.lint.run.parse_source, gpulint.lint.engine.Engine.check_file

    def parse(source, *rest):
        parsed = real_parse(source, *rest)
        alive.append(weakref.ref(parsed))
        return parsed

    def check(self, parsed, *rest, **options):
        held.append(sum(ref() is not None for ref in alive))
        return real_check(self, parsed, *rest, **options)

    monkeypatch.setattr(gpulint.lint.run, "parse_source", parse)
    monkeypatch.setattr(gpulint.lint.engine.Engine, "check_file", check)
    kept = run_cli(*args, "--jobs", "1")
    assert held == [len(files)] * len(files)  # below the threshold every parse is kept: parsed once
    assert _linted_counts(parses, files) == {path.name: 1 for path in files}
    assert [(f[0], f[1]) for f in _findings(kept)] == [
        ("ten.yaml", "claim-unsatisfiable"),
        ("typo.yaml", "claim-reference-invalid"),
    ]

    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    parses.clear()
    alive.clear()
    held.clear()
    streamed = run_cli(*args, "--jobs", "1")
    assert (streamed.stdout, streamed.exit_code) == (kept.stdout, kept.exit_code)
    assert held == [1] * len(files)  # only the file being checked
    assert _linted_counts(parses, files) == {path.name: 2 for path in files}

    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)  # and each worker with its share
    parallel = run_cli(*args, "--jobs", "2")
    assert (parallel.stdout, parallel.exit_code) == (kept.stdout, kept.exit_code)


def test_explain_parses_each_linted_file_once(write, parses):
    files = _dra_repository(write)
    result = run_cli("explain", str(files[0].parent), "--inventory", DRA_INVENTORY, "--format", "json")
    headings = [e["heading"] for e in json.loads(result.stdout)["explanations"]]
    assert "Pod/ml/trainer (1 pod)" in headings and "ResourceClaimTemplate/ml/nine-h100" in headings
    assert _linted_counts(parses, files) == {path.name: 1 for path in files}


def test_fix_parses_again_only_the_fixed_files(write, parses, tmp_path):
    fixable = write(
        "repo/unlimited.yaml",
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: unlimited, namespace: ml}
        spec:
          containers:
          - name: main
            image: registry.example.com/trainer:1.0
            resources:
              requests: {nvidia.com/gpu: 2}
    """,
    )
    files = [*_dra_repository(write), fixable]
    result = run_cli(
        "check",
        str(tmp_path / "repo"),
        "--config",
        _complete(write, "ResourceClaimTemplate"),
        "--format",
        "json",
        "--inventory",
        DRA_INVENTORY,
        "--fix",
        "--ignore",
        "dev-shm-missing",
    )
    assert result.stderr == f"gpulint: {fixable}: applied 1 fix\n"
    assert fixable.read_text().endswith(
        "      requests: {nvidia.com/gpu: 2}\n      limits:\n        nvidia.com/gpu: 2\n"
    )
    # The report is of the files as they are now: the fixed file read and parsed again, the others as parsed.
    assert [(name, rule, line) for name, rule, line, *_ in _findings(result)] == [
        ("ten.yaml", "claim-unsatisfiable", 10),
        ("typo.yaml", "claim-reference-invalid", 9),
        ("unlimited.yaml", "gpu-resource-unknown", 11),
    ]  # the inventory's nodes publish no nvidia.com/gpu
    expected = {path.name: 1 for path in files} | {"unlimited.yaml": 2}
    assert _linted_counts(parses, files) == expected


# --------------------------------------------------------------------------- forked workers


def test_parallel_workers_see_objects_of_other_workers(tmp_path, monkeypatch):
    """60 files over 2 workers: the claim template is in the first file (JSON), the DeviceClass in the last,
    and every file between has pods that use them, so whatever the split, a worker resolves references
    to objects only the other worker parsed."""
    import gpulint.lint.run

    (tmp_path / "f00-template.json").write_text(CLAIM_TEMPLATE_JSON.replace("gpu.nvidia.com", "gpu.example.com"))
    expected = []
    for index in range(1, 59):
        template = "single-gpus" if index % 20 == 7 else "single-gpu"  # files 7, 27, 47: a typo
        request = "gpus" if index == 33 else "gpu"
        name = f"f{index:02d}-pod.yaml"
        (tmp_path / name).write_text(POD_WITH_CLAIM.format(name=f"worker-{index}", template=template, request=request))
        if template != "single-gpu":
            expected.append(
                (
                    name,
                    "claim-reference-invalid",
                    9,
                    32,
                    "error",
                    "ResourceClaimTemplate 'single-gpus' is not among the linted files (namespace ml); the "
                    "pod stays Pending until it exists",
                )
            )
        if request != "gpu":
            expected.append(
                (
                    name,
                    "claim-reference-invalid",
                    16,
                    18,
                    "error",
                    "container 'main' asks for request 'gpus' of claim 'gpu', which has only gpu",
                )
            )
    (tmp_path / "f59-class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com'\"}\n"
    )
    assert len(list(tmp_path.iterdir())) >= gpulint.lint.run.PARALLEL_MIN_FILES + 12

    forked = []
    real_parallel = gpulint.lint.run._parallel_reports
    monkeypatch.setattr(
        gpulint.lint.run,
        "_parallel_reports",
        lambda run, workers: forked.append(workers) or real_parallel(run, workers),
    )
    config = tmp_path.parent / f"{tmp_path.name}-complete.yaml"  # outside the linted folder
    config.write_text("complete: [ResourceClaimTemplate]\n")
    args = (
        "check",
        str(tmp_path),
        "--config",
        str(config),
        "--format",
        "json",
        "--select",
        "claim-reference-invalid,device-class-unknown",
    )
    serial = run_cli(*args, "--jobs", "1")
    assert forked == []
    before = _children()
    parallel = run_cli(*args, "--jobs", "2")
    assert forked == [2]  # the forked path ran
    assert _children() <= before and multiprocessing.active_children() == []  # every worker reaped
    assert parallel.stdout == serial.stdout and parallel.exit_code == serial.exit_code == 1
    assert _findings(parallel) == expected
    # --jobs 0 (the default): one worker per CPU the process may run on (its affinity mask, as a
    # container's cpuset or taskset sets it), not per CPU of the machine
    monkeypatch.setattr(gpulint.lint.run.os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    default = run_cli(*args)
    assert forked == [2, 3] and default.stdout == serial.stdout


def _children() -> set[str]:
    """This process's child processes from /proc, as "pid" or, unreaped, "pid Z". Only that state counts: a live
    child another test started (a CEL sandbox, the oracle) may run or sleep from one reading to the next."""
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue  # ended while listed
        if int(parent) == os.getpid():
            children.add(f"{stat.parent.name} Z" if state == "Z" else stat.parent.name)
    return children


def _sixty_pods(root: Path) -> list[str]:
    for index in range(60):
        (root / f"f{index:02d}-pod.yaml").write_text(
            POD_WITH_CLAIM.format(name=f"p{index}", template="single-gpu", request="gpu")
        )
    return ["check", str(root), "--format", "json", "--jobs", "2"]


def _in_the_worker(phase: str, path_end: str, then: Callable[[], None], monkeypatch) -> None:
    """``then`` runs in the worker that parses or checks the file whose name ends with ``path_end``
    (the run itself parses and checks nothing when it forks)."""
    import gpulint.lint.engine
    import gpulint.lint.run

    if phase == "parsing":
        real_parse = gpulint.lint.run.parse_source

        def parse_source(source, *rest):
            if source.display.endswith(path_end):
                then()
            return real_parse(source, *rest)

        monkeypatch.setattr(gpulint.lint.run, "parse_source", parse_source)
        return
    real_check = gpulint.lint.engine.Engine.check_file

    def check_file(self, parsed, *args, **kwargs):
        if parsed.path.endswith(path_end):
            then()
        return real_check(self, parsed, *args, **kwargs)

    monkeypatch.setattr(gpulint.lint.engine.Engine, "check_file", check_file)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists child processes from /proc")
@pytest.mark.parametrize("streamed", [False, True], ids=["kept", "streamed"])
@pytest.mark.parametrize("phase", ["parsing", "checking"])
def test_a_worker_killed_mid_run_is_named_and_no_worker_is_left_behind(phase, streamed, tmp_path, monkeypatch):
    import gpulint.lint.run

    if streamed:  # the first set of workers parses, the second set checks (run._shared_first)
        monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    args = _sixty_pods(tmp_path)
    _in_the_worker(phase, "f31-pod.yaml", lambda: os.kill(os.getpid(), signal.SIGKILL), monkeypatch)
    before = _children()
    with pytest.raises(RuntimeError) as failed:
        run_cli(*args)
    assert (
        str(failed.value)
        == "a worker process ended without answering (killed by SIGKILL); --jobs 1 checks in one process"
    )
    assert _children() <= before and multiprocessing.active_children() == []  # the other one killed and both reaped


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists child processes from /proc")
@pytest.mark.parametrize("streamed", [False, True], ids=["kept", "streamed"])
@pytest.mark.parametrize("phase", ["parsing", "checking"])
def test_a_worker_s_exception_reaches_the_run_with_its_traceback(phase, streamed, tmp_path, monkeypatch):
    import gpulint.lint.run

    if streamed:
        monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)

    def fail() -> None:
        raise ValueError(f"a bug in {phase}")

    args = _sixty_pods(tmp_path)
    _in_the_worker(phase, "f07-pod.yaml", fail, monkeypatch)
    before = _children()
    with pytest.raises(RuntimeError) as failed:
        run_cli(*args)
    message = str(failed.value)
    assert message.startswith("a worker failed:\nTraceback (most recent call last):\n")
    assert message.endswith(f"ValueError: a bug in {phase}\n")
    assert _children() <= before and multiprocessing.active_children() == []


# --------------------------------------------------------------------------- the webhook has no path

PER_PATH_CONFIG = 'per-path-ignores: {"ml/*": [gpu-request-without-limit]}\n'
NO_LIMIT = "container 'c' requests nvidia.com/gpu: 1 but sets no limit for it; the API server rejects the Pod"
NO_LIMIT_NOTES = (
    "  spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources\n"
    "  set limits.nvidia.com/gpu to 1: extended resources are requested through limits (the request defaults "
    "to the limit)"
)
BAD_POD_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: ml}
spec:
  containers:
  - name: c
    image: i
    resources:
      requests: {nvidia.com/gpu: 1}
"""


def test_per_path_ignores_exempt_files_not_admission_reviews(write, tmp_path):
    from gpulint.lint.config import Config
    from gpulint.lint.findings import Severity
    from gpulint.lint.review import ReviewSnapshot
    from gpulint.webhook.admission_review import decide

    config_path = write(".gpulint.yaml", PER_PATH_CONFIG)
    write("ml/pod.yaml", BAD_POD_YAML)
    write("other/pod.yaml", BAD_POD_YAML)
    result = run_cli("check", str(tmp_path), "--config", str(config_path), "--format", "json")
    assert _findings(result) == [
        ("pod.yaml", "gpu-request-without-limit", 9, 18, "error", NO_LIMIT + "\n" + NO_LIMIT_NOTES.replace("  ", ""))
    ]
    assert result.json()["findings"][0]["path"] == str(tmp_path / "other" / "pod.yaml")
    assert result.json()["summary"]["suppressed"] == 1

    # A review of the same object, in namespace ml, with the configuration that file holds: the object has no
    # path, and no path glob applies to it (the webhook once linted it as the file "Pod/ml/bad").
    config = Config(per_path_ignores={"ml/*": ("gpu-request-without-limit",)}, root=str(tmp_path))
    reviewer = ReviewSnapshot.build(config, None, Severity.ERROR, dry_run=False)
    decision = decide(review(BAD_POD)["request"], reviewer)
    assert decision.allowed is False
    assert [(f.rule, f.message) for f in decision.findings] == [("gpu-request-without-limit", NO_LIMIT)]


@pytest.mark.slow
def test_webhook_server_denies_despite_per_path_ignores(tmp_path):
    config_path = tmp_path / ".gpulint.yaml"
    config_path.write_text(PER_PATH_CONFIG)
    server = Server(tmp_path, "--config", str(config_path))
    try:
        status, answer = server.post(review(BAD_POD, "uid-ml"))
    finally:
        server.stop()
    response = answer["response"]
    assert status == 200 and response["uid"] == "uid-ml" and response["allowed"] is False
    assert (
        response["status"]["message"]
        == f"gpulint denied this object:\n- gpu-request-without-limit: {NO_LIMIT}\n{NO_LIMIT_NOTES}"
    )


# --------------------------------------------------------------------------- pod templates found once

DEPLOYMENT_WITH_GPUS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 2
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      containers:
      - name: main
        image: registry.example.com/ml/trainer:1.0
        resources:
          requests: {nvidia.com/gpu: 2}
"""


def test_each_object_s_pod_templates_are_found_once_per_check_and_never_kept_after(monkeypatch):
    """Every rule that reads pod templates asks for them; while the engine checks one object they are
    worked out once (they were ~30 times), and outside that check nothing is remembered: an object
    changed afterwards is read afresh."""
    import gpulint.kube.workloads as workloads
    from gpulint.lint.config import Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.run import LintRun

    found: list[str] = []
    real = workloads._pod_spec_sites

    def counted(obj):
        found.append(obj.get("kind"))
        return real(obj)

    monkeypatch.setattr(workloads, "_pod_spec_sites", counted)
    run = LintRun(Config(), [Source("deploy.yaml", content=DEPLOYMENT_WITH_GPUS.encode())])
    report = run.report(1)
    assert "gpu-request-without-limit" in {f.rule for f in report.findings}
    assert found == ["Deployment"]

    (obj,) = run.objects()
    (site,) = workloads.pod_spec_sites(obj.data)
    assert site.pods == 2
    obj.data["spec"]["replicas"] = 5
    (site,) = workloads.pod_spec_sites(obj.data)
    assert site.pods == 5 and found == ["Deployment", "Deployment", "Deployment"]


TORCHRUN_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      containers:
      - name: main
        image: registry.example.com/ml/trainer:1.0
        command: [torchrun, --nproc-per-node, "4", train.py]
        resources:
          limits: {nvidia.com/gpu: 1}
      - name: sidecar
        image: registry.example.com/ml/exporter:1.0
        command: [sh, -c, "exec exporter --port 9400"]
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def test_each_container_s_gpus_and_command_line_are_read_once_per_check(monkeypatch):
    """The runtime rules (dev-shm-missing, parallelism-mismatch, gpu-visibility-override, rdma-memlock-missing)
    each ask every container for its GPUs and its launchers; while one object is checked that is worked out
    once per container, and outside a check it is read afresh."""
    import gpulint.kube.runtime as runtime
    from gpulint.lint.config import Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.run import LintRun

    gpus: list[str] = []
    launches: list[str] = []
    real_gpus, real_launches = runtime._container_gpus, runtime._container_launches

    def counted_gpus(container, patterns):
        gpus.append(container.get("name"))
        return real_gpus(container, patterns)

    def counted_launches(container, injected, config_maps, files):
        launches.append(container.get("name"))
        return real_launches(container, injected, config_maps, files)

    monkeypatch.setattr(runtime, "_container_gpus", counted_gpus)
    monkeypatch.setattr(runtime, "_container_launches", counted_launches)
    run = LintRun(Config(), [Source("deploy.yaml", content=TORCHRUN_DEPLOYMENT.encode())])
    report = run.report(1)
    mismatch = [said(f) for f in report.findings if f.rule == "parallelism-mismatch"]
    assert mismatch and mismatch[0].startswith("torchrun starts 4 GPU processes (--nproc-per-node 4)")
    assert sorted(gpus) == ["main", "sidecar"]
    assert sorted(launches) == ["main", "sidecar"]

    (obj,) = run.objects()
    main = obj.data["spec"]["template"]["spec"]["containers"][0]
    assert runtime.container_gpus(main) == 1
    main["resources"]["limits"]["nvidia.com/gpu"] = 4
    assert runtime.container_gpus(main) == 4 and gpus.count("main") == 3


def test_each_object_s_pod_templates_are_found_once_for_the_pod_template_rules(monkeypatch):
    """gpu-non-integer, gpu-request-without-limit and gpu-resource-unknown read every container's resources, one
    pod template at a time (Scope.POD_TEMPLATE): the engine finds the object's templates once and hands each to
    every such rule; outside a check they are found afresh."""
    import gpulint.kube.workloads as workloads
    from gpulint.lint.config import Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.registry import all_rules
    from gpulint.lint.rule_spec import Scope
    from gpulint.lint.run import LintRun

    listed: list[str] = []
    real = workloads._pod_spec_sites

    def counted(obj):
        listed.append(obj["metadata"]["name"])
        return real(obj)

    monkeypatch.setattr(workloads, "_pod_spec_sites", counted)
    text = TORCHRUN_DEPLOYMENT.replace("limits: {nvidia.com/gpu: 1}\n", "limits: {nvidia.com/gpu: 0.5}\n", 1)
    rules = ("gpu-non-integer", "gpu-request-without-limit", "host-network-dns", "runtime-class-unknown")
    assert all(all_rules()[rule].scope is Scope.POD_TEMPLATE for rule in rules)
    run = LintRun(Config(select=rules), [Source("deploy.yaml", content=text.encode())])
    found = [said(f).splitlines()[0] for f in run.report(1).findings]
    assert found == [
        'spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "0.5": must be an integer'
    ]
    assert listed.count("trainer") == 1
    (obj,) = run.objects()
    (site,) = workloads.pod_spec_sites(obj.data)
    assert [block.container for block in workloads.site_resources(site)] == ["main", "sidecar"]
    assert listed.count("trainer") == 2


def test_a_pod_spec_s_remembered_requests_never_answer_for_another_pod_spec():
    """An object's facts name a part by identity and hold it: a pod spec built and dropped during a check
    (a TrainJob's resourcesPerNode) cannot leave its answer to the next one at the same address."""
    from gpulint.kube.scheduler import pod_requests
    from gpulint.kube.workloads import ObjectFacts

    facts = ObjectFacts({"kind": "Deployment"})
    for count in (1, 2, 3, 4, 5, 6, 7, 8) * 4:
        spec = {"containers": [{"resources": {"requests": {"nvidia.com/gpu": count}}}]}
        assert pod_requests(spec, facts)["nvidia.com/gpu"] == count


TWO_GPU_NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-a
    labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status:
    allocatable: {cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-b
    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
  status:
    allocatable: {cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
"""

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      limits: {nvidia.com/gpu: 16}
"""


def test_a_pod_s_scheduler_requirements_are_read_once_per_check(monkeypatch):
    """gpu-unschedulable, gpu-sharing, over-tight-affinity, stale-gpu-label and the gang rules each run the
    scheduler's filters for the pod; its requirements are read from the spec once while it is checked."""
    import gpulint.kube.scheduler as scheduler
    import gpulint.lint.verdicts.shared as verdicts
    from gpulint.lint.config import Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.run import LintRun
    from gpulint.lint.world.inventory import load_inventory

    read: list[str] = []
    gpu_pods: list[str] = []
    real, real_gpu = scheduler._pod_requirements, verdicts._gpu_pod_requirements

    def counted(spec, taint_comparisons, facts):
        read.append(spec["containers"][0]["name"])
        return real(spec, taint_comparisons, facts)

    def counted_gpu(kind, site, inventory, facts):
        gpu_pods.append(kind)
        return real_gpu(kind, site, inventory, facts)

    monkeypatch.setattr(scheduler, "_pod_requirements", counted)
    monkeypatch.setattr(verdicts, "_gpu_pod_requirements", counted_gpu)
    inventory = load_inventory(["nodes.yaml"], [Source("nodes.yaml", content=TWO_GPU_NODES.encode())])
    run = LintRun(Config(), [Source("pod.yaml", content=GPU_POD.encode())], inventory)
    report = run.report(1)
    (unschedulable,) = [f for f in report.findings if f.rule == "gpu-unschedulable"]
    assert "0/2 nodes are available" in said(unschedulable)
    assert read == ["main"] and gpu_pods == ["Pod"]


def test_a_pod_template_s_gang_groups_are_read_once_per_check(monkeypatch):
    """The gang rules, the Kueue pod group and the resolver each ask which groups a pod template joins;
    while its object is checked that is read once (and its answer is not shared with the caller)."""
    import gpulint.kube.gangs.members as members
    from gpulint.lint.config import Config
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.run import LintRun
    from gpulint.lint.world.inventory import load_inventory

    read: list[str] = []
    real = members._group_references

    def counted(obj_data, site, namespace):
        read.append(obj_data["metadata"]["name"])
        return real(obj_data, site, namespace)

    monkeypatch.setattr(members, "_group_references", counted)
    pod = GPU_POD.replace(
        "metadata: {name: trainer, namespace: ml}",
        "metadata: {name: trainer, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: trainers}}",
    )
    inventory = load_inventory(["nodes.yaml"], [Source("nodes.yaml", content=TWO_GPU_NODES.encode())])
    run = LintRun(Config(), [Source("pod.yaml", content=pod.encode())], inventory)
    run.report(1)
    assert read.count("trainer") == 1
    (obj,) = run.objects()
    (site,) = obj.facts.sites()
    (ref,) = members.group_references(obj.facts, site, "ml")
    assert (ref.system, ref.name) == ("coscheduling", "trainers")


def test_a_streamed_check_keeps_a_render_s_parse_and_parses_plain_files_again(monkeypatch):
    """Placing a chart's documents in its templates reads the templates (render/helm.py): a rendered source's
    parse is kept from the first pass to its checks, never made twice; a plain file's is made again."""
    import gpulint.lint.run
    from gpulint.lint.inputs.render.rendered import Rendered
    from gpulint.lint.inputs.sources import Source

    seen: list[object] = []

    def mapper(loaded):
        seen.append(loaded.path)  # what reads the templates
        return loaded

    pod = POD_WITH_CLAIM.format(name="p", template="single-gpu", request="gpu").encode()
    sources = [
        Source("pod.yaml", content=pod),
        Source("chart", rendered=Rendered("helm", "chart", output=pod, mapper=mapper)),
    ]
    real = gpulint.lint.run.parse_source
    parsed_paths: list[str] = []
    monkeypatch.setattr(gpulint.lint.run, "parse_source", lambda s, *r: parsed_paths.append(s.display) or real(s, *r))
    streamed = gpulint.lint.run._shared_streamed(sources, everything=False)
    assert [[obj.ref.kind for obj in objects] for objects in streamed.shared] == [["Pod"], ["Pod"]]
    checked = [streamed.parsed(index, source) for index, source in enumerate(sources)]
    assert [p.path for p in checked] == ["pod.yaml", "chart"]
    assert parsed_paths == ["pod.yaml", "chart", "pod.yaml"] and seen == ["chart"]
    assert streamed.kept == {}  # handed over: nothing held after its checks
