"""scripts/fuzz_atheris.py: its harness runs every target on the seed corpus, turns a check that raises
into a crash (not an "internal error" finding), and the script skips cleanly without atheris.
(CI runs the fuzzer itself briefly, after pytest.)"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "fuzz_atheris.py"


@pytest.fixture(scope="module")
def fuzzer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_atheris", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness(fuzzer: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> object:
    return fuzzer.Harness(str(tmp_path_factory.mktemp("harness")))


@pytest.mark.slow
def test_every_target_runs_the_example_seeds(fuzzer: ModuleType, harness: object, tmp_path: Path) -> None:
    fuzzer.seed_corpus(tmp_path)
    seeds = sorted([*tmp_path.glob("seed-manifests-*"), tmp_path / "seed-review", tmp_path / "seed-http"])
    assert {fuzzer.TARGETS[p.read_bytes()[0]] for p in seeds} == set(fuzzer.TARGETS)
    for seed in seeds:
        harness.run(seed.read_bytes())  # the examples crash nothing


def test_a_check_that_raises_is_a_crash_with_its_traceback(fuzzer: ModuleType, harness: object) -> None:
    def broken(*arguments: object) -> list:  # (obj, ctx), or (obj, site, ctx) for a pod-template rule
        raise KeyError("spec")

    rules = dict(harness.rules)
    rules["gpu-non-integer"] = fuzzer._raising(dataclasses.replace(rules["gpu-non-integer"], check=broken))
    source = harness.source("pod.yaml", content=(REPO / "examples" / "manifests" / "training-pod.yaml").read_bytes())
    run = harness.lint_run(harness.config, [source], harness.inventory, rules=rules)
    with pytest.raises(fuzzer.CheckCrashed, match="the gpu-non-integer check raised KeyError") as crash:
        run.report()  # the engine would have reported "internal error in gpulint's ..." and gone on
    assert isinstance(crash.value.__cause__, KeyError)


def test_keep_going_writes_each_failure_once_with_the_shortest_input(fuzzer: ModuleType, tmp_path: Path) -> None:
    try:
        raise ValueError("boom")
    except ValueError as exc:
        failure = exc
    for data in (b"\x00long input", b"\x00short", b"\x00a much longer input"):
        fuzzer._keep(str(tmp_path), "check", data, failure)
    crashes = sorted(tmp_path.glob("crash-*"))
    assert [p.suffix for p in crashes] == ["", ".txt"]
    assert crashes[0].read_bytes() == b"\x00short"
    assert crashes[1].read_text().startswith("check  ValueError\n")


def test_without_atheris_the_script_says_so_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "atheris.py").write_text('raise ImportError("no wheel for this platform")\n')
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "10"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "fuzz_atheris: atheris is not installed (pip install atheris); skipping\n"


def test_the_http_target_holds_the_strict_and_the_lenient_reader_together(fuzzer: ModuleType, harness: object) -> None:
    http = bytes([fuzzer.TARGETS.index("http")])
    harness.run(http + b"Host: x\r\nContent-Length: 5\r\n\r\nhello")
    harness.run(http + b"Host: x\r\nTransfer-Encoding : chunked\r\n\r\n")  # refused by the strict checks
    harness.run(http + b"X: " + b"a" * 70000 + b"\r\n\r\n")  # over the stdlib's line bound


def test_a_checkout_named_gpulint_is_not_the_package(fuzzer: ModuleType, tmp_path: Path) -> None:
    """A clone's folder is named gpulint by default: its tests' frames are not gpulint's."""
    checkout = tmp_path / "gpulint" / "tests"
    checkout.mkdir(parents=True)
    raising = compile("def fail():\n    raise ValueError('boom')\n", str(checkout / "test_x.py"), "exec")
    scope: dict[str, object] = {}
    exec(raising, scope)  # a frame whose file name holds "/gpulint/" outside the package
    try:
        scope["fail"]()  # type: ignore[operator]
    except ValueError as exc:
        failure = exc
    fuzzer._keep(str(tmp_path), "check", b"\x00x", failure)
    assert next(tmp_path.glob("crash-*.txt")).read_text().startswith("check  ValueError\n")


def test_the_innermost_package_frame_names_the_crash(fuzzer: ModuleType, tmp_path: Path) -> None:
    from gpulint.kube.quantity import QuantityError, parse_quantity

    try:
        parse_quantity("not a quantity")
    except QuantityError as exc:
        failure = exc
    fuzzer._keep(str(tmp_path), "check", b"\x00x", failure)
    assert next(tmp_path.glob("crash-*.txt")).read_text().startswith("check kube/quantity.py:")
