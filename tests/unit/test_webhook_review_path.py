"""What a review shares with the reviews before it (issue #19): the threads reviews run in, the rules
routed once, and the schemas of the inventory's CRDs built once per inventory - and what it must not
share (a reviewed CRD never changes how the next review validates)."""

from __future__ import annotations

import json
import ssl
import threading
import time

import pytest
import yaml
from conftest import REPO
from support.crds import CRD, INSTANCE
from webhook_helpers import GOOD_POD, review

from gpulint.lint import engine as engine_module
from gpulint.lint.bounds import CLIENT_GONE, DEADLINE, Watchdog
from gpulint.lint.config import Config
from gpulint.lint.engine import Deadline, DeadlineExceeded
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.run import LintRun
from gpulint.webhook import server as serve_module
from gpulint.webhook.server import ServeOptions, Webhook


def wait_until(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# ---------------------------------------------------------------- the review's thread and its watchdog


def test_the_watchdog_takes_over_a_review_at_its_deadline_and_only_then():
    watchdog = Watchdog()
    reasons: list[str] = []
    try:
        finished = watchdog.watch(time.monotonic() + 0.05, reasons.append)
        assert watchdog.finish(finished) is True  # finished first: its own thread answers
        stuck = watchdog.watch(time.monotonic() + 0.05, reasons.append)
        assert wait_until(lambda: reasons == [DEADLINE])  # the unfinished one, at its deadline
        assert watchdog.finish(stuck) is False  # taken over: its thread must not answer too
        stuck.join_late()
        time.sleep(0.1)
        assert reasons == [DEADLINE]  # the finished one was never taken over
        assert watchdog.running == 0
    finally:
        watchdog.stop()


def test_a_deadline_earlier_than_the_watchdogs_sleep_wakes_it():
    watchdog = Watchdog(poll_seconds=30)  # without a wake-up it would sleep 30 s
    taken = threading.Event()
    try:
        late = watchdog.watch(time.monotonic() + 20, lambda _reason: None)
        time.sleep(0.05)  # the watchdog sleeps until the first review's deadline
        started = time.monotonic()
        soon = watchdog.watch(time.monotonic() + 0.1, lambda _reason: taken.set())
        assert taken.wait(5) and time.monotonic() - started < 2
        assert watchdog.finish(soon) is False and watchdog.finish(late) is True
    finally:
        watchdog.stop()


def test_a_review_whose_client_left_is_taken_over_after_a_poll():
    watchdog = Watchdog(poll_seconds=0.05)
    gone = threading.Event()
    reasons: list[str] = []
    try:
        watch = watchdog.watch(time.monotonic() + 30, reasons.append, gone.is_set)
        time.sleep(0.2)
        assert reasons == []  # its client is still there
        gone.set()
        assert wait_until(lambda: reasons == [CLIENT_GONE])
        assert watchdog.finish(watch) is False
    finally:
        watchdog.stop()


def _watchdog_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "review-watchdog"]


def test_a_stopped_watchdog_ends_once_its_reviews_have_and_starts_again_for_a_new_one():
    before = len(_watchdog_threads())
    watchdog = Watchdog()
    reasons: list[str] = []
    watch = watchdog.watch(time.monotonic() + 0.3, reasons.append)
    watchdog.stop()
    assert wait_until(lambda: reasons == [DEADLINE])  # a review running at the stop keeps its deadline
    watchdog.finish(watch)
    assert wait_until(lambda: len(_watchdog_threads()) == before)
    again = watchdog.watch(time.monotonic() + 0.05, reasons.append)  # a request still arriving at shutdown
    assert wait_until(lambda: reasons == [DEADLINE, DEADLINE])
    watchdog.finish(again)
    assert wait_until(lambda: len(_watchdog_threads()) == before)


def test_a_review_runs_in_the_callers_thread_and_is_answered_at_its_deadline_when_stuck(monkeypatch):
    real_decide = serve_module.decide
    release = threading.Event()
    idents: list[int] = []

    def recording_decide(request, *args):
        idents.append(threading.get_ident())
        if request["uid"] == "stuck":
            release.wait(10)
        return real_decide(request, *args)

    monkeypatch.setattr(serve_module, "decide", recording_decide)
    webhook = Webhook(Config(), ServeOptions(max_concurrency=1))
    sent: list[tuple[float, serve_module.Answer]] = []
    try:
        answer = webhook.review(json.dumps(review(GOOD_POD, "a")).encode())
        assert answer is not None and answer.body["response"]["uid"] == "a" and answer.sent_at is None
        assert idents == [threading.get_ident()]  # no hand-off to another thread
        outcome: list[serve_module.Answer | None] = []
        started = time.monotonic()
        reviewing = threading.Thread(
            target=lambda: outcome.append(
                webhook.review(
                    json.dumps(review(GOOD_POD, "stuck")).encode(),
                    time.monotonic() + 0.3,
                    on_late=lambda late: sent.append((time.monotonic(), late)),
                )
            )
        )
        reviewing.start()
        assert wait_until(lambda: bool(sent))  # answered at the deadline while the check is still stuck
        assert sent[0][0] - started < 3 and not outcome
        late = sent[0][1]
        assert late.result == "timeout" and late.body["response"]["uid"] == "stuck"
        assert late.body["response"]["allowed"] is True  # failure mode allow: admitted, with a warning
        assert webhook.review(json.dumps(review(GOOD_POD, "b")).encode()).status == 503  # its slot is still held
        release.set()
        reviewing.join(10)
        assert outcome and outcome[0] is not None and outcome[0].sent_at is not None  # sent, not to send again
        after = webhook.review(json.dumps(review(GOOD_POD, "after")).encode())
        assert after is not None and after.result == "allowed"  # the slot came back when the check stopped
    finally:
        release.set()
        webhook.stop()


def test_a_review_that_raises_is_answered_by_the_failure_mode_and_frees_its_slot(monkeypatch):
    webhook = Webhook(Config(), ServeOptions(max_concurrency=1))
    cases = (
        (ValueError("boom"), "failed", "gpulint could not check this object (ValueError)"),
        (TimeoutError(), "failed", "gpulint could not check this object (TimeoutError)"),
        (DeadlineExceeded(), "timeout", "gpulint could not finish checking this object before the review's deadline"),
    )
    try:
        for error, result, reason in cases:

            def raising(*_args, error=error):
                raise error

            monkeypatch.setattr(serve_module, "decide", raising)
            answer = webhook.review(json.dumps(review(GOOD_POD, "u")).encode())
            assert answer is not None and answer.result == result
            assert answer.body["response"]["allowed"] is True  # failure mode allow: admitted, with a warning
            assert answer.body["response"]["warnings"] == [f"{reason}; it was admitted unchecked"]

        def interrupted(*_args):
            raise KeyboardInterrupt

        monkeypatch.setattr(serve_module, "decide", interrupted)
        with pytest.raises(KeyboardInterrupt):  # not the review's to answer: it reaches the request's thread
            webhook.review(json.dumps(review(GOOD_POD, "u")).encode())
        monkeypatch.undo()
        after = webhook.review(json.dumps(review(GOOD_POD, "after")).encode())
        assert after is not None and after.result == "allowed"  # the one slot was freed by each failed review
    finally:
        webhook.stop()


# ---------------------------------------------------------------- built once per inventory


def crd_webhook(tmp_path) -> Webhook:
    (tmp_path / "crds.yaml").write_text(CRD)
    return Webhook(Config(inventory=(str(tmp_path),)), ServeOptions())


def decide_on(webhook: Webhook, obj: dict, uid: str = "u") -> dict:
    answer = webhook.review(json.dumps(review(obj, uid)).encode())
    assert answer is not None
    return answer.body["response"]


def runs_of_reviews(monkeypatch: pytest.MonkeyPatch) -> list[LintRun]:
    """The LintRun each review builds, as the review facade builds it."""
    built: list[LintRun] = []
    real = LintRun.for_object

    def recording(cls: type[LintRun], *args: object) -> LintRun:
        built.append(real(*args))
        return built[-1]

    monkeypatch.setattr(LintRun, "for_object", classmethod(recording))
    return built


@pytest.mark.slow
def test_the_inventorys_crds_validate_every_review_with_schemas_built_once(tmp_path, monkeypatch):
    webhook = crd_webhook(tmp_path)
    runs = runs_of_reviews(monkeypatch)
    try:
        good, bad = yaml.safe_load(INSTANCE), yaml.safe_load(INSTANCE.replace("  workers: 4\n", "  worker: 4\n"))
        assert decide_on(webhook, good)["allowed"] is True
        refused = decide_on(webhook, bad)
        assert refused["allowed"] is False
        assert 'spec: Required value: "workers" is required' in refused["status"]["message"]
        (unknown,) = refused["warnings"]
        assert unknown.endswith('unknown field "spec.worker" in ml.example.com/v1 FineTune')
        stores = {id(run.engine.context.schemas) for run in runs}
        assert len(runs) == 2 and len(stores) == 1  # the same store (and its compiled validators) for every review
    finally:
        webhook.stop()


def test_a_reviewed_crd_does_not_change_how_the_next_review_validates(tmp_path):
    """A CRD under review that makes `workers` optional is judged with its own schema, and the instance
    reviewed next is still validated against the inventory's CRD (the cluster's), not the reviewed one."""
    webhook = crd_webhook(tmp_path)
    try:
        looser = yaml.safe_load(CRD.replace("required: [model, workers]", "required: [model]"))
        assert looser != yaml.safe_load(CRD)
        assert decide_on(webhook, looser, "crd")["allowed"] is True
        missing = yaml.safe_load(INSTANCE.replace("  workers: 4\n", ""))
        refused = decide_on(webhook, missing, "instance")
        assert refused["allowed"] is False
        assert 'spec: Required value: "workers" is required' in refused["status"]["message"]
    finally:
        webhook.stop()


def test_reviews_share_the_routed_rules(tmp_path, monkeypatch):
    config = Config(inventory=(str(tmp_path),))
    (tmp_path / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus:\n  capacity: {cpu: '8', pods: '110', nvidia.com/gpu: '8'}\n"
    )
    webhook = Webhook(config, ServeOptions())
    runs = runs_of_reviews(monkeypatch)
    try:
        for uid in ("first", "second"):
            assert decide_on(webhook, GOOD_POD, uid)["allowed"] is True
        engines = [run.engine for run in runs]
        assert engines[0]._runnable is engines[1]._runnable  # routed once, not per review
        assert engines[0]._routed("Pod") is engines[1]._routed("Pod")  # and once per kind
        pod_rules = {rule_id for rule_id, _, _ in engines[0]._routed("Pod")}
        assert "gpu-unschedulable" in pod_rules and "training-runtime-unknown" not in pod_rules  # a TrainJob's
        assert "gpu-unschedulable" in {rule_id for rule_id, _, _ in engines[0]._runnable}
    finally:
        webhook.stop()


GPU_NODES = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
    f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: gpu-{i}\n    labels:\n"
    f"      kubernetes.io/hostname: gpu-{i}\n      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
    f"  status:\n    capacity: {{cpu: '192', memory: 2Ti, pods: '110', nvidia.com/gpu: '8'}}\n"
    for i in range(40)
)
SELECTING_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 2}}}],
    },
}


def test_concurrent_first_reviews_work_out_the_inventorys_facts_once(tmp_path, monkeypatch):
    """Eight reviews arriving together on a new inventory (eight keep-alive connections) wait for the one
    working out a fact of the inventory - which nodes' labels are stale, the nodes grouped for the
    scheduler - instead of each working it out (issue #19: a 1,000-node inventory's facts eight times)."""
    from gpulint.kube import scheduler
    from gpulint.lint.checks import stale_gpu_label

    calls: dict[str, int] = {"stale": 0, "groups": 0}

    def slowly(name: str, original):
        def counted(*args, **kwargs):
            calls[name] += 1
            time.sleep(0.05)  # the other reviews arrive while it runs
            return original(*args, **kwargs)

        return counted

    monkeypatch.setattr(stale_gpu_label, "stale_nodes", slowly("stale", stale_gpu_label.stale_nodes))
    monkeypatch.setattr(scheduler, "group_nodes", slowly("groups", scheduler.group_nodes))
    (tmp_path / "nodes.yaml").write_text(GPU_NODES)
    webhook = Webhook(Config(inventory=(str(tmp_path),)), ServeOptions())
    start, answers = threading.Barrier(8), []
    try:

        def one(uid: str) -> None:
            start.wait(5)
            answers.append(decide_on(webhook, SELECTING_POD, uid))

        threads = [threading.Thread(target=one, args=(f"u{i}",)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        webhook.stop()
    assert calls == {"stale": 1, "groups": 1}
    assert len(answers) == 8 and all(a["allowed"] is True for a in answers)
    assert {json.dumps({k: v for k, v in a.items() if k != "uid"}, sort_keys=True) for a in answers} == {
        json.dumps({k: v for k, v in answers[0].items() if k != "uid"}, sort_keys=True)
    }


# ---------------------------------------------------------------- the HTTP exchange around a review


def test_an_answer_is_one_write_with_a_date_formatted_once_a_second(tmp_path, monkeypatch):
    import trustme
    from webhook_helpers import Client, issue_pair

    ca = trustme.CA()
    cert, key = issue_pair(ca, tmp_path)
    server, webhook = serve_module.build_server(
        Config(), ServeOptions(host="127.0.0.1", port=0, tls_cert=str(cert), tls_key=str(key))
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    writes: list[bytes] = []
    real = ssl.SSLSocket.sendall

    def recording(self, data, *args):
        if self.server_side:  # the client runs in this process too
            writes.append(bytes(data))
        return real(self, data, *args)

    monkeypatch.setattr(ssl.SSLSocket, "sendall", recording)
    try:
        status, answer = Client(server.server_address[1], ca).post(review(GOOD_POD, "one-write"))
        assert status == 200 and answer["response"]["uid"] == "one-write"
        (sent,) = writes
        head, _, body = sent.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\nServer: gpulint Python/")
        assert b"\r\nContent-Type: application/json\r\nContent-Length: %d" % len(body) in head
        assert json.loads(body)["response"]["uid"] == "one-write"
        sent_date = head.split(b"\r\nDate: ")[1].split(b"\r\n")[0].decode()
        assert sent_date.endswith(" GMT") and server._date[1] == sent_date  # formatted once, kept for its second
    finally:
        webhook.stop()
        server.shutdown()
        server.server_close()


def test_the_body_depth_limit_counts_brackets_outside_strings():
    import pytest

    from gpulint.webhook.admission_review import MAX_BODY_DEPTH, BadReview, parse_review

    def body(nested: int, annotation: str = "") -> bytes:
        # review, request, object, spec: 4 levels; then ``nested`` lists
        pod = {**GOOD_POD, "metadata": {"name": "p", "annotations": {"a": annotation}}}
        pod["spec"] = {**GOOD_POD["spec"], "x": json.loads("[" * nested + "]" * nested)}
        return json.dumps(review(pod)).encode()

    assert parse_review(body(MAX_BODY_DEPTH - 4))["uid"] == "uid-1"
    with pytest.raises(BadReview, match="nests deeper than"):
        parse_review(body(MAX_BODY_DEPTH - 3))
    shallow_but_bracketed = body(1, "[{" * 1000)  # brackets in a string are text: no depth
    assert parse_review(shallow_but_bracketed)["uid"] == "uid-1"


@pytest.mark.slow
def test_the_in_process_review_benchmark_runs():
    import subprocess
    import sys

    script = REPO / "benchmarks" / "webhook_review.py"
    run = subprocess.run(
        [sys.executable, str(script), "--nodes", "20", "--batches", "1", "--rules", "--paced", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ") and " µs |" in line]
    assert any(row.startswith("| the checks (LintRun.report) |") for row in rows)
    assert any(row.startswith("| gpu-unschedulable |") for row in rows), run.stdout
    assert any(row.startswith("| decide |") and row.endswith("x |") for row in rows), run.stdout
    assert any(row.startswith("| a fixed workload, not gpulint's") for row in rows), run.stdout
    assert "| back to back | 1 ms idle before each | ratio |" in run.stdout


@pytest.mark.slow
def test_the_load_benchmark_runs_against_a_real_server_in_rounds():
    import subprocess
    import sys

    script = REPO / "benchmarks" / "webhook_load.py"
    run = subprocess.run(
        [
            sys.executable,
            str(script),
            "--nodes",
            "20",
            "--rate",
            "40",
            "--seconds",
            "1",
            "--rounds",
            "2",
            "--warmup",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr  # 0: every review and /healthz answered as expected
    rows = {line.split(" | ")[0].lstrip("| "): line for line in run.stdout.splitlines() if line.startswith("| ")}
    assert "2 rounds: median [lowest-highest]" in run.stdout
    cpu = rows["server CPU per request (ms)"]
    assert cpu.count("[") == 2 and cpu.endswith("x |"), cpu  # reviews and the /healthz baseline, each a range
    assert rows["errors"].startswith("| errors | 0 | 0 |")


def test_the_watchdog_keeps_nothing_of_a_review_once_it_has_ended():
    """A review's ``late`` closure holds the request and the inventory snapshot: a watchdog holding it would
    keep a swapped-out inventory alive (and frozen by the swap's gc.freeze for good)."""
    import gc
    import weakref

    class Snapshot:
        pass

    watchdog = Watchdog()
    try:
        for taken in (False, True):
            snapshot = Snapshot()
            alive = weakref.ref(snapshot)
            watch = watchdog.watch(time.monotonic() + (0.05 if taken else 30), lambda _reason, held=snapshot: held)
            del snapshot
            if taken:
                assert wait_until(lambda watch=watch: watch.taken)
            assert watchdog.finish(watch) is not taken
            watch.join_late()
            del watch
            gc.collect()
            assert wait_until(lambda alive=alive: alive() is None), taken
    finally:
        watchdog.stop()


def _engine_with_checks(*checks):
    """A review's run whose Pod is checked by ``checks`` alone, under the ids of the first enabled rules
    (in rule order: the engine runs them in that order)."""
    run = LintRun.for_object(Config(), dict(GOOD_POD), None)
    ids = [rule_id for rule_id, _, _ in run.engine._runnable[: len(checks)]]
    run.engine._checks_by_kind["Pod"] = dict(zip(ids, checks))
    return run, ids


def test_a_review_cancelled_during_a_check_stops_before_the_next_rule():
    deadline = Deadline(time.monotonic() + 60)
    ran = []

    def cancels(obj, ctx):
        ran.append("first")
        deadline.cancel()  # as the watchdog does from its own thread
        yield from ()

    def later(obj, ctx):
        ran.append("second")
        yield from ()

    run, _ = _engine_with_checks(cancels, later)
    with pytest.raises(DeadlineExceeded):
        run.report(deadline=deadline)
    assert ran == ["first"]
    assert deadline.expired


def test_a_review_cancelled_while_a_check_yields_stops_at_its_next_finding():
    deadline = Deadline(time.monotonic() + 60)
    produced = []

    def many(obj, ctx):
        for index in range(1000):
            if index == 3:
                deadline.cancel()
            produced.append(index)
            yield Diagnostic(ids[0], (), f"finding {index}")

    run, ids = _engine_with_checks(many)
    with pytest.raises(DeadlineExceeded):
        run.report(deadline=deadline)
    assert produced == [0, 1, 2, 3]
    run, ids = _engine_with_checks(many)  # not cancelled, no deadline: every finding
    produced.clear()
    assert len(run.report().findings) == 1000


def test_a_past_deadline_stops_a_review_before_its_first_rule():
    ran = []

    def first(obj, ctx):
        ran.append("first")
        yield from ()

    run, _ = _engine_with_checks(first)
    with pytest.raises(DeadlineExceeded):
        run.report(deadline=Deadline(time.monotonic() - 1))
    assert ran == []


def test_a_review_cancelled_while_a_lists_objects_are_prepared_stops_between_them(monkeypatch):
    """An abandoned review holds its slot until its next deadline check. Every object of a List had its facts
    built before the first check: seconds for the 16000-pod List of tests/hostile, its slot held all along."""
    deadline = Deadline(time.monotonic() + 60)
    pods = {"apiVersion": "v1", "kind": "List", "items": [dict(GOOD_POD)] * 1000}
    prepared = []
    real_with_facts = engine_module.with_facts

    def with_facts(obj):
        prepared.append(obj)
        if len(prepared) == 3:
            deadline.cancel()  # as the watchdog does from its own thread when the client has gone
        return real_with_facts(obj)

    monkeypatch.setattr(engine_module, "with_facts", with_facts)
    with pytest.raises(DeadlineExceeded):
        LintRun.for_object(Config(), pods, None).report(deadline=deadline)
    assert len(prepared) == 3
    prepared.clear()  # not cancelled: every object checked
    report = LintRun.for_object(Config(), pods, None).report(deadline=Deadline(time.monotonic() + 60))
    assert len(prepared) == 1000 and report.files[0].objects == 1000


def test_a_review_cancelled_after_its_last_check_does_not_sort_its_findings(monkeypatch):
    deadline = Deadline(time.monotonic() + 60)
    suppressed = []
    real_suppress = engine_module.Engine._suppress

    def last(obj, ctx):
        deadline.cancel()
        yield from ()

    def suppress(self, *args):
        suppressed.append(args)
        return real_suppress(self, *args)

    monkeypatch.setattr(engine_module.Engine, "_suppress", suppress)
    run, _ = _engine_with_checks(last)
    with pytest.raises(DeadlineExceeded):
        run.report(deadline=deadline)
    assert suppressed == []


def test_a_check_that_raises_is_reported_and_the_next_rules_still_run():
    def broken(obj, ctx):
        yield from ()  # a generator, as the checks are
        raise ValueError("boom")

    def finds(obj, ctx):
        yield Diagnostic(ids[1], ("spec",), "the next rule's finding")

    run, ids = _engine_with_checks(broken, finds)
    findings = run.report(deadline=Deadline(time.monotonic() + 60)).findings
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        (
            ids[0],
            Severity.INFO,
            f"internal error in gpulint's {ids[0]} check (ValueError: boom); this object was not fully checked - "
            "please report it",
        ),
        (ids[1], run.rules[ids[1]].severity, "the next rule's finding"),
    ]


def _refuse_to_start_once(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """The first thread named ``name`` fails to start, as in a process at its thread limit; the list says
    whether that happened."""
    real_start = threading.Thread.start
    refused: list[str] = []

    def start(thread: threading.Thread) -> None:
        if thread.name == name and not refused:
            refused.append(name)
            raise RuntimeError("can't start new thread")
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    return refused


def test_a_watchdog_that_cannot_start_a_thread_leaves_the_review_to_answer_itself_and_tries_again(monkeypatch):
    watchdog = Watchdog(poll_seconds=0.05)
    reasons: list[str] = []
    refused = _refuse_to_start_once(monkeypatch, "review-late")
    try:
        watch = watchdog.watch(time.monotonic() + 0.05, reasons.append)
        assert wait_until(lambda: reasons == [DEADLINE])  # refused once, taken over at the next look
        assert refused and watchdog.finish(watch) is False
    finally:
        watchdog.stop()


def test_a_client_that_cannot_be_asked_counts_as_gone():
    watchdog = Watchdog(poll_seconds=0.05)
    reasons: list[str] = []

    def broken() -> bool:
        raise ValueError("file descriptor cannot be a negative integer (-1)")

    try:
        watch = watchdog.watch(time.monotonic() + 30, reasons.append, broken)
        assert wait_until(lambda: reasons == [CLIENT_GONE])
        assert watchdog.finish(watch) is False
    finally:
        watchdog.stop()


def test_a_watchdog_whose_thread_cannot_start_lets_the_review_run_and_starts_with_the_next(monkeypatch):
    watchdog = Watchdog(poll_seconds=0.05)
    refused = _refuse_to_start_once(monkeypatch, "review-watchdog")
    reasons: list[str] = []
    try:
        first = watchdog.watch(time.monotonic() + 30, reasons.append)  # no watchdog thread: the review runs anyway
        assert refused and watchdog.finish(first) is True
        second = watchdog.watch(time.monotonic() + 0.05, reasons.append)  # started now, and keeps the deadline
        assert wait_until(lambda: reasons == [DEADLINE])
        assert watchdog.finish(second) is False
    finally:
        watchdog.stop()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the MemoryError, on purpose
def test_a_watchdog_thread_that_dies_is_replaced_by_the_next_review(monkeypatch):
    watchdog = Watchdog(poll_seconds=0.05)
    reasons: list[str] = []
    real_take_due = Watchdog._take_due
    failures: list[int] = []

    def failing_once(self: Watchdog, now: float) -> float:
        # Only this test's watchdog fails: a watchdog another test left running shares the patched class,
        # and its thread taking the one failure left this one alive (seen in CI).
        if self is watchdog and not failures:
            failures.append(1)
            raise MemoryError
        return real_take_due(self, now)

    monkeypatch.setattr(Watchdog, "_take_due", failing_once)
    try:
        first = watchdog.watch(time.monotonic() + 30, reasons.append)  # its thread dies at its first look
        assert wait_until(lambda: watchdog._thread is None) and failures
        second = watchdog.watch(time.monotonic() + 0.05, reasons.append)  # a new thread, which watches both
        assert wait_until(lambda: reasons == [DEADLINE])
        assert watchdog.finish(second) is False and watchdog.finish(first) is True
    finally:
        watchdog.stop()
