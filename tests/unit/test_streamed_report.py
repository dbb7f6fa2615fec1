"""`gpulint check` writes its json, text and SARIF reports as the files are checked (issue #31): the same text as a
report made whole, and memory that holds a few files' findings, not all of them."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from conftest import REPO, run_cli

import gpulint.cli.check
import gpulint.lint.engine
import gpulint.lint.run
from gpulint.cli.check import run_check
from gpulint.lint.config import Config

EXAMPLES = REPO / "examples"

# A custom resource with pod templates: read by its shape, which schema-invalid says once for the run (a run
# note naming the first three places "and 2 more places"), not once per object.
TRAINER = """\
apiVersion: train.example.com/v1
kind: Trainer
metadata: {{name: t{index}, namespace: ml}}
spec:
  template:
    spec:
      containers:
      - name: main
        image: registry.example.com/ml/trainer:1.0
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

CLEAN_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: clean, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example.com/ml/trainer:1.0
"""


def _tree(root: Path) -> Path:
    """The examples' manifests six times over, five Trainers, and a baseline written from the first copy, one
    of whose files has since been fixed (its baseline entries are stale)."""
    apps = root / "apps"
    apps.mkdir(parents=True)
    for copy in range(6):
        for manifest in sorted((EXAMPLES / "manifests").glob("*.yaml")):
            shutil.copy(manifest, apps / f"{copy}-{manifest.name}")
    for index in range(5):
        (apps / f"trainer-{index}.yaml").write_text(TRAINER.format(index=index))
    baseline = root / "baseline.json"
    written = run_cli("check", *map(str, sorted(apps.glob("0-*.yaml"))), "--write-baseline", str(baseline))
    assert written.exit_code == 0, written.stderr
    (apps / "0-batch-job.yaml").write_text(CLEAN_JOB)
    return baseline


@pytest.mark.parametrize("output_format", ["json", "text", "sarif"])
def test_a_report_written_as_files_are_checked_is_the_whole_report_s_text(output_format, tmp_path, monkeypatch):
    baseline = _tree(tmp_path)
    inventory = str(EXAMPLES / "inventory")
    args = ["check", str(tmp_path / "apps"), "--format", output_format, "--inventory", inventory]
    args += ["--baseline", str(baseline)]
    with monkeypatch.context() as patch:
        patch.setattr(gpulint.cli.check, "get_streamed", lambda name: None)  # the report made whole, then written
        whole = run_cli(*args, "--jobs", "1")
    assert whole.exit_code == 1
    text = whole.stdout
    if output_format == "sarif":  # results only: the run notes are taken out, the baseline's findings left out
        assert '"results": [' in text and "were read by their shape" not in text
    else:  # what the stream must carry through to the end: a run note with its count, the baseline, stale entries
        assert "and 2 more places" in text and "in the baseline" in text and "no longer occur" in text
    assert run_cli(*args, "--jobs", "1") == whole
    forked: list[int] = []
    real = gpulint.lint.run._parallel_reports
    monkeypatch.setattr(gpulint.lint.run, "_parallel_reports", lambda run, n: forked.append(n) or real(run, n))
    assert run_cli(*args, "--jobs", "2") == whole
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)  # one parse at a time
    assert run_cli(*args, "--jobs", "1") == whole
    assert run_cli(*args, "--jobs", "2") == whole
    monkeypatch.setattr(gpulint.lint.run, "REPORTS_A_MESSAGE", 1)  # the workers' reports one file a message
    assert run_cli(*args, "--jobs", "3") == whole
    assert forked == [2, 2, 3]


def test_the_workers_are_dealt_files_in_file_order_by_bytes():
    from gpulint.lint.inputs.sources import Source

    sizes = [10, 10, 50, 10, 10, 10, 10]
    sources = [Source(f"f{index}", content=b"x" * size) for index, size in enumerate(sizes)]
    # each file to the worker with the fewest bytes so far: both move through the files side by side
    assert gpulint.lint.run._shares(sources, 2) == [[0, 2], [1, 3, 4, 5, 6]]
    assert gpulint.lint.run._shares(sources[:1], 3) == [[0]]


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p{index}, namespace: ml}}
spec:
  containers:
  - name: main
    image: registry.example.com/ml/trainer:1.0
    resources:
      requests: {{nvidia.com/gpu: 1}}
"""


def _held_while_written(root: Path, files: int, jobs: int) -> int:
    """The most memory Python holds (tracemalloc) while `check`'s json report of ``files`` Pods, each with a
    finding, is written."""
    folder = root / f"{files}-{jobs}"
    folder.mkdir(parents=True)
    for index in range(files):
        (folder / f"pod-{index:04d}.yaml").write_text(POD.format(index=index))
    tracemalloc.start()
    try:
        result = run_check([str(folder)], Config(), "json", jobs=jobs)
        held = 0
        for _ in result.pieces():
            held = max(held, tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert result.failed
    return held


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_writing_the_report_holds_a_few_files_findings_not_all(jobs, tmp_path, monkeypatch):
    # Measured against the same run made to hold its whole report, growing from 100 to 400 files: streamed,
    # what grows is the sources (read before the run) and the file list, ~0.5-0.8 KiB a file here; whole, the
    # findings too, ~2.7 KiB a file (Python 3.11). The bound sits between the two with room on each side.
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)  # one parse at a time, as a large input is
    _held_while_written(tmp_path / "warm", 60, jobs)  # the rules' modules imported, their tables built
    streamed = _held_while_written(tmp_path, 400, jobs) - _held_while_written(tmp_path, 100, jobs)
    monkeypatch.setattr(gpulint.cli.check, "get_streamed", lambda name: None)
    whole = _held_while_written(tmp_path / "whole", 400, jobs) - _held_while_written(tmp_path / "whole", 100, jobs)
    assert whole > 300 * 2048  # the findings held are what the bound is about
    assert streamed < 0.6 * whole


SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: gpu-node-{index}-gpu.nvidia.com}}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-{index}
  pool: {{name: gpu-node-{index}, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
    attributes:
      type: {{string: gpu}}
      productName: {{string: NVIDIA A100-SXM4-80GB}}
      architecture: {{string: Ampere}}
      driverVersion: {{version: 550.54.15}}
      cudaComputeCapability: {{version: 8.0.0}}
    capacity:
      memory: {{value: 80Gi}}
  - name: gpu-1
    attributes:
      type: {{string: gpu}}
      productName: {{string: NVIDIA A100-SXM4-80GB}}
      architecture: {{string: Ampere}}
      driverVersion: {{version: 550.54.15}}
      cudaComputeCapability: {{version: 8.0.0}}
    capacity:
      memory: {{value: 80Gi}}
"""


def test_the_objects_a_streamed_run_keeps_share_their_repeated_strings():
    """The objects other files read (every ResourceSlice here) are kept until the run ends; a fleet's slices
    repeat their keys and attribute values, and each parse makes its own copies."""
    from gpulint.lint.inputs.sources import Source

    sources = [Source(f"slice-{index}.yaml", content=SLICE.format(index=index).encode()) for index in range(200)]
    streamed = gpulint.lint.run._shared_streamed(sources, everything=False)
    plain = [gpulint.lint.run.shared_objects(gpulint.lint.run.parse_source(source), False) for source in sources]
    assert [[obj.data for obj in objects] for objects in streamed.shared] == [
        [obj.data for obj in objects] for objects in plain
    ]
    assert sum(map(len, plain)) == 200

    def held(compact: bool) -> int:
        """What the objects taken from the 200 parses hold once the parses are dropped."""
        tracemalloc.start()
        try:
            kept = []
            for source in sources:
                objects = gpulint.lint.run.shared_objects(gpulint.lint.run.parse_source(source), False)
                kept.append([gpulint.lint.run._compact(obj) for obj in objects] if compact else objects)
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    assert held(compact=True) < 0.8 * held(compact=False)  # 0.6x measured (Python 3.11)


@pytest.mark.slow
def test_a_worker_whose_reports_fall_short_is_an_error_not_a_wait(tmp_path, monkeypatch):
    for index in range(60):
        (tmp_path / f"pod-{index:02d}.yaml").write_text(POD.format(index=index))
    real_send = gpulint.lint.run._send
    dropped: list[object] = []

    def send(conn, value):  # in the workers: the first batch of reports lost on the way
        if isinstance(value, tuple) and value[1] is None and not dropped:
            dropped.append(value)
            return
        real_send(conn, value)

    monkeypatch.setattr(gpulint.lint.run, "_send", send)
    with pytest.raises(RuntimeError, match=r"^a worker sent fewer reports than the 30 files it checked$"):
        run_cli("check", str(tmp_path), "--format", "json", "--jobs", "2")


CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu-{index}.example.com}}
spec:
  selectors:
  - cel: {{expression: "device.driver == 'gpu.example.com'"}}
"""


def _pods_and_classes(root: Path, pods: int, classes: int) -> Path:
    """``pods`` Pods, each with a finding, and ``classes`` DeviceClasses, which other files' checks read."""
    root.mkdir()
    for index in range(pods):
        (root / f"pod-{index:04d}.yaml").write_text(POD.format(index=index))
    for index in range(classes):
        (root / f"class-{index:04d}.yaml").write_text(CLASS.format(index=index))
    return root


def test_a_streamed_run_builds_its_linted_set_once_before_the_checking_workers_fork(tmp_path, monkeypatch):
    """--jobs N over a large input: the run builds the linted set and its engines once and the checking workers
    inherit them (docs/performance.md: each worker building its own held N+1 copies); a small input's workers,
    which keep their parses, build their own."""
    tree = _pods_and_classes(tmp_path / "tree", 40, 20)
    built = tmp_path / "built"
    real = gpulint.lint.run.scoped_engines

    def scoped_engines(run, linted):  # in whichever process builds them: the run or a worker
        with built.open("a") as out:
            out.write(f"{os.getpid()} {sum(1 for _ in linted)}\n")
        return real(run, linted)

    monkeypatch.setattr(gpulint.lint.run, "scoped_engines", scoped_engines)
    args = ["check", str(tree), "--format", "json"]
    serial = run_cli(*args, "--jobs", "1")
    assert serial.exit_code == 1 and len(serial.json()["findings"]) == 40
    built.unlink()
    kept = run_cli(*args, "--jobs", "2")
    assert kept == serial
    workers = [line.split()[0] for line in built.read_text().splitlines()]  # two workers, each its own
    assert len(set(workers)) == 2 and str(os.getpid()) not in workers
    built.unlink()
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    import jsonschema_rs

    compiled = tmp_path / "compiled"
    real_compile = jsonschema_rs.validator_for

    def validator_for(schema, *args, **kwargs):  # the schema validators: v1 Pod's is ~12 MiB
        with compiled.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return real_compile(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema_rs, "validator_for", validator_for)
    for jobs in ("2", "3"):
        gpulint.lint.engine._schema_store.cache_clear()  # compiled afresh by this run, not inherited from the last
        assert run_cli(*args, "--jobs", jobs) == serial
        assert built.read_text() == f"{os.getpid()} 20\n"  # once, in the run, with the objects other files read
        # the kinds the first set of workers saw (Pod, DeviceClass) compiled once, in the run, before the fork
        assert compiled.read_text() == f"{os.getpid()}\n" * 2
        built.unlink()
        compiled.unlink()


def test_a_rendered_source_is_parsed_once_by_the_run_in_a_streamed_forked_run(tmp_path, monkeypatch):
    """Placing a chart's documents reads its templates (render/helm.py): in a streamed run with workers, the run
    parses a rendered source itself and the worker that checks it inherits that parse; its findings are those of
    one process."""
    from gpulint.lint.inputs.render.rendered import Rendered
    from gpulint.lint.inputs.sources import Source
    from gpulint.lint.run import LintRun

    mapped = tmp_path / "mapped"

    def mapper(loaded):
        with mapped.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return loaded

    chart = b"---\n".join(POD.format(index=f"c{index}").encode() for index in range(3))
    sources = [Source(f"pod-{index:02d}.yaml", content=POD.format(index=index).encode()) for index in range(60)]
    sources.insert(30, Source("chart", rendered=Rendered("helm", "chart", output=chart, mapper=mapper)))
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)

    def findings(jobs: int) -> list[tuple[str, int, str]]:
        run = LintRun(Config(), sources, streamed=True)
        return [(report.path, f.line, f.message) for report in run.file_reports(jobs) for f in report.findings]

    serial = findings(1)
    assert [path for path, _, _ in serial].count("chart") == 3 and len(serial) == 63
    mapped.unlink()
    assert findings(2) == serial
    assert mapped.read_text() == f"{os.getpid()}\n"


def _slice(index: int, devices: int) -> str:
    """A ResourceSlice of ``devices`` GPUs: DRA objects are read by other files' checks, so a streamed run keeps
    every one of them in its linted set."""
    device = (
        "  - name: gpu-{g}\n    attributes:\n      type: {{string: gpu}}\n      uuid: {{string: GPU-{index}-{g}}}\n"
        "      productName: {{string: NVIDIA A100-SXM4-80GB}}\n      driverVersion: {{version: 550.54.15}}\n"
        "    capacity:\n      memory: {{value: 80Gi}}\n"
    )
    return (
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: node-{index}-gpu}}\nspec:\n"
        f"  driver: gpu.nvidia.com\n  nodeName: node-{index}\n"
        f"  pool: {{name: node-{index}, generation: 1, resourceSliceCount: 1}}\n  devices:\n"
        + "".join(device.format(g=g, index=index) for g in range(devices))
    )


def _worker_private_memory(folder: str) -> tuple[int, list[int]]:
    """The linted set's traced size, and each checking worker's private memory at its end, for a streamed
    --jobs 2 run over `folder`. Run in a fresh interpreter: forked from a long-lived test process, the workers
    also copy the pages that process's own earlier tests left half used."""
    from gpulint.lint.inputs.sources import Source

    sources = [Source(str(path), content=path.read_bytes()) for path in sorted(Path(folder).glob("*.yaml"))]
    tracemalloc.start()
    try:
        shared = gpulint.lint.run._shared_streamed(sources, everything=False)
        linted = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert sum(map(len, shared.shared)) == 600 and linted > 20 * 2**20
    del shared
    private = Path(folder) / "private"
    real_send = gpulint.lint.run._send

    def send(conn, value):  # a checking worker's last message: what it holds that no other process does
        if isinstance(value, tuple) and isinstance(value[1], frozenset):
            rollup = dict(line.split(":", 1) for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:])
            with private.open("a") as out:
                out.write(f"{sum(int(rollup[k].split()[0]) for k in ('Private_Clean', 'Private_Dirty')) * 1024}\n")
        real_send(conn, value)

    gpulint.lint.run._send = send  # this interpreter is thrown away after the measurement
    gpulint.lint.run.KEPT_SOURCE_BYTES = 0
    result = run_check([folder], Config(), "json", jobs=2)
    assert sum(len(piece) for piece in result.pieces()) > 0 and result.failed
    return linted, [int(line) for line in private.read_text().split()]


def _measured_in(folder: str, answers) -> None:
    try:
        answers.put(_worker_private_memory(folder))
    except BaseException as exc:  # the test raises it: a silent child would leave it waiting
        answers.put(exc)
        raise


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="reads a process's memory from /proc")
def test_a_streamed_run_s_checking_workers_share_its_linted_set_and_schemas(tmp_path):
    """Each checking worker of a streamed --jobs 2 run holds, of its own, less than the linted set: the run built
    it (and compiled the schemas) before forking them. Measured (Python 3.11, 2026-12-06): a linted set of 23 MiB
    (traced); each worker's private memory 18 MiB at its end (parses made and dropped, the pages it wrote), 45 MiB
    when every worker built its own set and compiled its own v1 Pod validator (~12 MiB, outside Python's heap)."""
    for index in range(600):
        (tmp_path / f"slice-{index:04d}.yaml").write_text(_slice(index, 24))
    for index in range(100):
        (tmp_path / f"pod-{index:04d}.yaml").write_text(POD.format(index=index))
    context = multiprocessing.get_context("spawn")
    answers = context.SimpleQueue()
    measure = context.Process(target=_measured_in, args=(str(tmp_path), answers))  # not daemonic: it forks
    measure.start()
    answer = answers.get()
    measure.join()
    if isinstance(answer, BaseException):
        raise answer
    linted, held = answer
    assert len(held) == 2
    assert max(held) < 1.25 * linted
