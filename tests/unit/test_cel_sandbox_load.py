"""A CEL verdict does not depend on how busy the machine is.

Evaluations the cost estimate cannot bound run in a worker process (gpulint.kube.cel.sandbox). Its
limit is CPU time, so a worker the machine does not schedule (here: stopped with SIGSTOP, as a
loaded machine would starve it) is not "over the cost limit"; one that gets no CPU at all within
WALL_SECONDS gives no verdict, and the finding says so (info), never a failure. Before this, a
worker that took more than its wall-clock second to start made a library policy's example fall
back to a bare "failed: variables.hasGang || ..." under load."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from rule_harness import findings_of

from gpulint.kube.cel import sandbox
from gpulint.kube.cel.engine import UNDECIDED, CelEngine
from gpulint.kube.cel.sandbox import Sandbox
from gpulint.kube.dra.allocation import Device, Selector, SelectorCache, SelectorOutcome
from gpulint.lint.policies.evaluation import policy_engine

# A policy whose validation the estimate cannot bound (a string built from a list's size): it runs in the worker.
POLICY = """\
apiVersion: gpulint.io/v1alpha1
kind: Policy
metadata: {name: short-gpu-summary}
spec:
  severity: error
  match: {kinds: [batch/Job]}
  variables:
  - name: gpuPods
    expression: >-
      podSpecs.filter(p, p.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) &&
        c.resources.limits.exists(r, r.startsWith("nvidia.com/"))))
  validations:
  - expression: '("GPU pod templates: " + string(variables.gpuPods.size())).size() < 20'
    messageExpression: '"GPU pod templates: " + string(variables.gpuPods.size())'
"""
JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  completions: 4
  parallelism: 4
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:25.01-py3
        resources: {limits: {nvidia.com/gpu: 8}}
"""


def stalled(pid: int, seconds: float) -> threading.Timer:
    """The worker gets no CPU for ``seconds`` (SIGSTOP, then SIGCONT)."""
    os.kill(pid, signal.SIGSTOP)
    timer = threading.Timer(seconds, os.kill, (pid, signal.SIGCONT))
    timer.start()
    return timer


def worker_pid(box: Sandbox) -> int:
    assert box._process is not None and box._process.poll() is None
    return box._process.pid


@pytest.mark.slow
def test_time_a_worker_waits_for_the_cpu_is_not_counted():
    box = Sandbox(("object",), timeout=0.5)
    try:
        assert box.evaluate("object.n + 1", {"object": {"n": 1}}, False).value == 2
        timer = stalled(worker_pid(box), 1.5)  # three times its limit, in wall time
        outcome = box.evaluate("object.n + 2", {"object": {"n": 1}}, False)
        timer.join()
        assert (outcome.value, outcome.stopped, outcome.undecided) == (3, "", False)
    finally:
        box.close()


@pytest.mark.slow
def test_a_worker_that_gets_no_cpu_is_undecided_and_the_next_evaluation_answers(monkeypatch):
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 0.5)
    box = Sandbox(("object",), timeout=0.5)
    try:
        assert box.evaluate("object.n + 1", {"object": {"n": 1}}, False).value == 2
        os.kill(worker_pid(box), signal.SIGSTOP)  # killed, stopped or not, when the evaluation gives up
        outcome = box.evaluate("object.n + 2", {"object": {"n": 1}}, False)
        assert outcome.undecided and "less than 0.5 s of CPU time in 0.5 s" in outcome.stopped
        assert box.evaluate("object.n + 3", {"object": {"n": 1}}, False).value == 4  # a new worker
    finally:
        box.close()


def policy_findings(tmp_path: Path) -> list:
    (tmp_path / "policy.yaml").write_text(POLICY, encoding="utf-8")
    return findings_of(None, JOB, config={"policies": [str(tmp_path / "policy.yaml")], "select": ["short-gpu-summary"]})


@pytest.mark.slow
def test_a_policy_evaluated_in_a_starved_worker_is_undecided_info_not_a_failure(tmp_path, monkeypatch):
    (decided,) = policy_findings(tmp_path)  # "GPU pod templates: 1" is 20 characters
    assert (decided.severity, decided.line, decided.message) == ("error", 1, "GPU pod templates: 1")
    engine = policy_engine()
    assert engine._sandbox is not None
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 0.5)
    os.kill(worker_pid(engine._sandbox), signal.SIGSTOP)
    (undecided,) = policy_findings(tmp_path)
    assert undecided.severity == "info"
    assert undecided.message.startswith(f"policy short-gpu-summary: {UNDECIDED}")
    assert "a busy machine" in undecided.message and "not a verdict" in undecided.message
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 10.0)
    assert [f.message for f in policy_findings(tmp_path)] == ["GPU pod templates: 1"]


def test_a_failing_message_expression_falls_back_to_the_expression_and_says_why(tmp_path, monkeypatch):
    # the validation is decided in-process; only its message needs the worker
    text = POLICY.replace(
        """'("GPU pod templates: " + string(variables.gpuPods.size())).size() < 20'""", "variables.gpuPods.size() < 1"
    )
    assert text != POLICY
    (tmp_path / "policy.yaml").write_text(text, encoding="utf-8")
    config = {"policies": [str(tmp_path / "policy.yaml")], "select": ["short-gpu-summary"]}
    assert [f.message for f in findings_of(None, JOB, config=config)] == ["GPU pod templates: 1"]
    engine = policy_engine()
    assert engine._sandbox is not None
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 0.5)
    os.kill(worker_pid(engine._sandbox), signal.SIGSTOP)
    (finding,) = findings_of(None, JOB, config=config)
    assert finding.severity == "error"  # the validation failed: that is decided
    first, note = finding.message.split("\n", 1)
    assert first == "failed: variables.gpuPods.size() < 1"
    assert note.startswith(f"its messageExpression failed: {UNDECIDED}")


@pytest.fixture(autouse=True)
def _fresh_policy_worker():
    """Each test starts the policy engine's worker anew (a stopped one is never left behind)."""
    engine = policy_engine()
    engine.close()
    yield
    engine.close()


@pytest.mark.slow
def test_a_device_selector_evaluated_in_a_starved_worker_is_assumed_to_match_and_not_cached(monkeypatch):
    view = {
        "driver": "gpu.example.com",
        "attributes": {"gpu.example.com": {"model": "x" * 5000}},
        "capacity": {},
        "allowMultipleAllocations": False,
    }
    device = Device("gpu.example.com", "p1", "g0", cel_view=view, shape=("big",), common_shape=("big",))
    model = 'device.attributes["gpu.example.com"].model'
    # its result has 25 million characters: more than gpulint builds in-process (MAX_BUILT)
    selector = Selector(f'{model}.replace("", {model}).size() > 1', ("spec",))
    engine = CelEngine()
    cache = SelectorCache(engine)
    try:
        assert engine.evaluate(engine.compile('device.driver == "gpu.example.com"'), view) is True
        warm = cache.outcome(Selector(f'{model}.replace("", {model}).size() > 0', ("spec",)), device)
        assert (warm.matches, warm.error, warm.undecided) == (True, "", "")
        assert engine._sandbox is not None  # the worker decided it
        monkeypatch.setattr(sandbox, "WALL_SECONDS", 0.5)
        os.kill(worker_pid(engine._sandbox), signal.SIGSTOP)
        starved = cache.outcome(selector, device)
        assert starved.matches and not starved.error and starved.undecided.startswith(UNDECIDED)
        monkeypatch.setattr(sandbox, "WALL_SECONDS", 10.0)
        assert cache.outcome(selector, device) == SelectorOutcome(True)  # asked again, and answered
    finally:
        engine.close()
