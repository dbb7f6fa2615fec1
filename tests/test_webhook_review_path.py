"""What a review shares with the reviews before it (issue #19): the threads reviews run in, the rules
routed once, and the schemas of the inventory's CRDs built once per inventory - and what it must not
share (a reviewed CRD never changes how the next review validates)."""

from __future__ import annotations

import json
import threading
import time

import yaml
from test_linted_crds import CRD, INSTANCE
from webhook_helpers import GOOD_POD, review

from gpulint.lint.config import Config
from gpulint.lint.inventory import load_configured_inventory
from gpulint.lint.run import LintRun
from gpulint.webhook import server as serve_module
from gpulint.webhook.server import ServeOptions, Webhook
from gpulint.webhook.workers import ReviewThreads


def wait_until(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# ---------------------------------------------------------------- the threads reviews run in


def test_an_idle_review_thread_runs_the_next_review():
    threads = ReviewThreads()
    ran: list[int] = []
    try:
        for _ in range(3):
            done = threading.Event()
            threads.run(lambda done=done: (ran.append(threading.get_ident()), done.set()))
            assert done.wait(5)
            assert wait_until(lambda: threads.idle == 1)
        assert len(set(ran)) == 1, ran
    finally:
        threads.stop()


def test_a_stuck_review_does_not_hold_up_the_next_one():
    threads = ReviewThreads()
    release, second = threading.Event(), threading.Event()
    idents: list[int] = []
    try:
        threads.run(lambda: (idents.append(threading.get_ident()), release.wait(10)))
        threads.run(lambda: (idents.append(threading.get_ident()), second.set()))
        assert second.wait(5)  # ran in a thread of its own while the first is still stuck
        assert len(set(idents)) == 2
        assert wait_until(lambda: threads.idle == 1)  # only the one that finished waits for work
    finally:
        release.set()
        threads.stop()


def test_idle_review_threads_end():
    threads = ReviewThreads(idle_seconds=0.05)
    done = threading.Event()
    threads.run(done.set)
    assert done.wait(5)
    assert wait_until(lambda: not any(t.name == "review" and t.is_alive() for t in _review_threads(threads)))
    assert threads.idle == 0
    again = threading.Event()
    threads.run(again.set)  # a new thread when none is idle
    assert again.wait(5)
    threads.stop()


def _review_threads(threads: ReviewThreads) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "review" and t._target == threads._serve]  # type: ignore[attr-defined]


def test_stop_ends_the_idle_review_threads():
    threads = ReviewThreads()
    done = threading.Event()
    threads.run(done.set)
    assert done.wait(5) and wait_until(lambda: threads.idle == 1)
    threads.stop()
    assert wait_until(lambda: not _review_threads(threads))


def test_the_webhooks_reviews_reuse_their_thread_and_a_timed_out_one_keeps_its_own(monkeypatch):
    real_decide = serve_module.decide
    release = threading.Event()
    idents: list[int] = []

    def recording_decide(request, *args):
        idents.append(threading.get_ident())
        if request["uid"] == "stuck":
            release.wait(10)
        return real_decide(request, *args)

    monkeypatch.setattr(serve_module, "decide", recording_decide)
    webhook = Webhook(Config(), ServeOptions())
    try:
        for uid in ("a", "b"):
            answer = webhook.review(json.dumps(review(GOOD_POD, uid)).encode())
            assert answer is not None and answer.body["response"]["uid"] == uid
            assert wait_until(lambda: webhook.threads.idle == 1)
        assert idents[0] == idents[1]
        stuck = webhook.review(json.dumps(review(GOOD_POD, "stuck")).encode(), time.monotonic() + 0.3)
        assert stuck is not None and stuck.result == "timeout"
        after = webhook.review(json.dumps(review(GOOD_POD, "after")).encode())
        assert after is not None and after.result == "allowed" and idents[-1] != idents[-2]
    finally:
        release.set()
        webhook.stop()


# ---------------------------------------------------------------- built once per inventory


def crd_webhook(tmp_path) -> Webhook:
    (tmp_path / "crds.yaml").write_text(CRD)
    return Webhook(Config(inventory=(str(tmp_path),)), ServeOptions())


def decide_on(webhook: Webhook, obj: dict, uid: str = "u") -> dict:
    answer = webhook.review(json.dumps(review(obj, uid)).encode())
    assert answer is not None
    return answer.body["response"]


def test_the_inventorys_crds_validate_every_review_with_schemas_built_once(tmp_path):
    webhook = crd_webhook(tmp_path)
    try:
        good, bad = yaml.safe_load(INSTANCE), yaml.safe_load(INSTANCE.replace("  workers: 4\n", "  worker: 4\n"))
        assert decide_on(webhook, good)["allowed"] is True
        refused = decide_on(webhook, bad)
        assert refused["allowed"] is False
        assert 'spec: Required value: "workers" is required' in refused["status"]["message"]
        (unknown,) = refused["warnings"]
        assert unknown.endswith('unknown field "spec.worker" in ml.example.com/v1 FineTune')
        reviewer = webhook.snapshot.reviewer
        stores = {
            id(LintRun.for_object(reviewer.config, obj, reviewer.cluster, reviewer.routes).engine.context.schemas)
            for obj in (good, bad)
        }
        assert len(stores) == 1  # the same store (and its compiled validators) for every review
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


def test_reviews_share_the_routed_rules(tmp_path):
    config = Config(inventory=(str(tmp_path),))
    (tmp_path / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus:\n  capacity: {cpu: '8', pods: '110', nvidia.com/gpu: '8'}\n"
    )
    webhook = Webhook(config, ServeOptions())
    try:
        reviewer = webhook.snapshot.reviewer
        engines = [
            LintRun.for_object(config, GOOD_POD, load_configured_inventory(config), reviewer.routes).engine
            for _ in range(2)
        ]
        assert engines[0]._runnable is engines[1]._runnable  # routed once, not per review
        assert engines[0]._routed("Pod") is engines[1]._routed("Pod")  # and once per kind
        pod_rules = {rule_id for rule_id, _, _ in engines[0]._routed("Pod")}
        assert "gpu-unschedulable" in pod_rules and "device-plugin-config" not in pod_rules
        assert "gpu-unschedulable" in {rule_id for rule_id, _, _ in engines[0]._runnable}
    finally:
        webhook.stop()
