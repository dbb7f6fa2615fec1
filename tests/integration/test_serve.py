"""The admission webhook, served for real over TLS on loopback, talked to with a real HTTPS client."""

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import trustme
from webhook_helpers import BAD_POD, GOOD_POD, Client, Server, gpu_pod, issue_pair, nodes_yaml, review

pytestmark = pytest.mark.integration


@pytest.fixture
def server(tmp_path):
    running = Server(tmp_path)
    yield running
    running.stop()


@pytest.mark.slow
def test_allow_deny_and_warnings(server):
    status, answer = server.post(review(GOOD_POD, "uid-good"))
    assert status == 200 and answer["response"] == {"uid": "uid-good", "allowed": True}
    status, answer = server.post(review(BAD_POD, "uid-bad"))
    response = answer["response"]
    assert response["uid"] == "uid-bad" and response["allowed"] is False
    assert "gpu-request-without-limit" in response["status"]["message"] and response["status"]["code"] == 403
    unknown_field = {**GOOD_POD, "spec": {**GOOD_POD["spec"], "tolerationz": []}}
    status, answer = server.post(review(unknown_field))
    assert answer["response"]["allowed"] is True
    assert any('unknown field "spec.tolerationz"' in w for w in answer["response"]["warnings"])


@pytest.mark.slow
def test_suppression_annotation_and_delete(server):
    exempt = {**BAD_POD, "metadata": {"name": "bad", "annotations": {"gpulint.io/ignore": "gpu-request-without-limit"}}}
    assert server.post(review(exempt))[1]["response"]["allowed"] is True
    assert server.post(review(None, operation="DELETE"))[1]["response"] == {"uid": "uid-1", "allowed": True}


@pytest.mark.slow
def test_bad_requests(server):
    assert server.post(b"{not json")[0] == 400
    status, answer = server.post(
        {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {"uid": "x"}}
    )
    assert status == 400 and "admission.k8s.io/v1" in answer["error"]
    assert server.post({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})[0] == 400
    # the server answers 413 from the headers alone, without reading the body
    connection = server.connection()
    connection.putrequest("POST", "/validate")
    connection.putheader("Content-Length", str(3 * 1024 * 1024 + 1))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and b"over" in response.read()
    connection.close()
    assert server.get("/nope")[0] == 404


@pytest.mark.slow
def test_concurrent_requests(server):
    def one(index: int) -> bool:
        obj = BAD_POD if index % 2 else GOOD_POD
        status, answer = server.post(review(obj, f"uid-{index}"))
        return (
            status == 200
            and answer["response"]["uid"] == f"uid-{index}"
            and answer["response"]["allowed"] is (index % 2 == 0)
        )

    with ThreadPoolExecutor(max_workers=16) as pool:
        assert all(pool.map(one, range(64)))


@pytest.mark.slow
def test_health_metrics_and_json_logs(server):
    server.post(review(BAD_POD))
    assert server.get("/healthz") == (200, "ok\n")
    assert server.get("/readyz")[0] == 200
    status, metrics = server.get("/metrics")
    assert status == 200
    assert 'gpulint_requests_total{path="/validate",result="denied"} 1' in metrics
    assert "gpulint_denials_total 1" in metrics
    assert 'gpulint_review_duration_seconds_bucket{le="+Inf"} 1' in metrics
    time.sleep(0.2)
    reviews = [event for event in server.log if event["event"] == "review"]
    assert reviews and reviews[-1]["uid"] == "uid-1" and reviews[-1]["result"] == "denied"
    assert reviews[-1]["dry_run"] is False


def test_a_server_side_dry_run_gets_the_same_answer_and_the_log_says_it_was_one(server):
    """kubectl --dry-run=server: the API server sends dryRun true (a webhook with sideEffects None is
    called on dry runs); the denial is the same, and the review's log line tells the two apart."""
    dry = review(BAD_POD, uid="uid-dry")
    dry["request"]["dryRun"] = True
    status, body = server.post(dry)
    assert status == 200 and body["response"]["allowed"] is False
    assert body["response"]["status"] == server.post(review(BAD_POD))[1]["response"]["status"]
    server.wait_for("review")
    time.sleep(0.2)
    flags = {event["uid"]: event["dry_run"] for event in server.events("review")}
    assert flags == {"uid-dry": True, "uid-1": False}


@pytest.mark.slow
def test_dry_run_mode_never_denies(tmp_path):
    running = Server(tmp_path, "--dry-run-mode")
    try:
        answer = running.post(review(BAD_POD))[1]["response"]
        assert answer["allowed"] is True and any("gpu-request-without-limit" in w for w in answer["warnings"])
    finally:
        running.stop()


@pytest.mark.slow
def test_inventory_reload_mid_traffic(tmp_path):
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "nodes.yaml").write_text(nodes_yaml(8))
    running = Server(tmp_path, inventory=str(inventory))
    try:
        assert running.get("/readyz")[0] == 200
        answer = running.post(review(gpu_pod(16)))[1]["response"]
        assert answer["allowed"] is False and "gpu-unschedulable" in answer["status"]["message"]
        # a half-written file never replaces a good inventory
        (inventory / "nodes.yaml").write_text(nodes_yaml(16)[:90])
        time.sleep(1.0)
        assert running.post(review(gpu_pod(16)))[1]["response"]["allowed"] is False
        assert any(event["event"] == "inventory_rejected" for event in running.log)
        # the new inventory lands atomically (write + rename), and requests keep flowing meanwhile
        staged = tmp_path / "staged.yaml"
        staged.write_text(nodes_yaml(16))
        os.replace(staged, inventory / "nodes.yaml")
        deadline = time.time() + 10
        while time.time() < deadline:
            if running.post(review(gpu_pod(16)))[1]["response"]["allowed"]:
                break
            time.sleep(0.1)
        assert running.post(review(gpu_pod(16)))[1]["response"]["allowed"] is True
        assert "gpulint_inventory_age_seconds" in running.get("/metrics")[1]
    finally:
        running.stop()


@pytest.mark.slow
def test_sigterm_lets_in_flight_requests_finish(tmp_path):
    running = Server(tmp_path)
    body = json.dumps(review(GOOD_POD, "uid-in-flight")).encode()
    tls = running.start_slow_review(body, 10)
    time.sleep(0.3)
    running.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    answer = running.finish_slow_review(tls, body, 10, b"uid-in-flight")
    assert b"HTTP/1.1 200" in answer and b'"allowed": true' in answer
    assert running.process.wait(timeout=15) == 0
    assert any(event["event"] == "shutdown" for event in running.log)


def test_failure_mode_answers_when_gpulint_itself_fails(tmp_path, monkeypatch):
    from gpulint.lint.config import Config
    from gpulint.webhook import server as serve_module

    monkeypatch.setattr(serve_module, "decide", lambda *args: (_ for _ in ()).throw(RuntimeError("boom")))
    for mode, allowed in (("allow", True), ("deny", False)):
        webhook = serve_module.Webhook(Config(), serve_module.ServeOptions(failure_mode=mode))
        answer = webhook.review(json.dumps(review(GOOD_POD)).encode())
        assert answer.status == 200 and answer.body["response"]["allowed"] is allowed


def test_references_to_other_objects_are_not_judged_one_object_at_a_time(tmp_path):
    from gpulint.lint.config import Config
    from gpulint.webhook import server as serve_module

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "in-the-cluster"}],
            "schedulingGroup": {"podGroupName": "also-in-the-cluster"},
            "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpus"}]}}],
        },
    }
    webhook = serve_module.Webhook(Config(feature_gates={"GenericWorkload": True}), serve_module.ServeOptions())
    answer = webhook.review(json.dumps(review(pod)).encode()).body["response"]
    assert answer == {"uid": "uid-1", "allowed": True}


def test_policies_are_enforced_at_admission(tmp_path):
    from gpulint.lint.config import Config
    from gpulint.webhook import server as serve_module

    webhook = serve_module.Webhook(
        Config(policies=("gpulint:forbid-gpu-in-non-gpu-namespaces",)), serve_module.ServeOptions()
    )
    answer = webhook.review(json.dumps(review(GOOD_POD)).encode()).body["response"]  # namespace ml: no GPU quota
    assert answer["allowed"] is False and "forbid-gpu-in-non-gpu-namespaces" in answer["status"]["message"]


@pytest.mark.slow
def test_renewed_certificate_is_served_without_a_restart(tmp_path):
    running = Server(tmp_path)
    try:
        first = running.connection()
        first.request("GET", "/healthz")
        first.getresponse().read()
        old_serial = ssl.DER_cert_to_PEM_cert(first.sock.getpeercert(binary_form=True))
        first.close()
        renewed = trustme.CA()  # cert-manager renews in place (here: a new CA too, to tell them apart)
        cert = renewed.issue_cert("localhost", "127.0.0.1")
        cert.private_key_pem.write_to_path(str(running.key))
        cert.cert_chain_pems[0].write_to_path(str(running.cert))
        context = ssl.create_default_context()
        renewed.configure_trust(context)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=context, timeout=5)
                connection.request("GET", "/healthz")
                assert connection.getresponse().status == 200
                new_serial = ssl.DER_cert_to_PEM_cert(connection.sock.getpeercert(binary_form=True))
                connection.close()
                break
            except ssl.SSLError:
                time.sleep(0.2)
        else:
            raise AssertionError("the renewed certificate was never served")
        assert new_serial != old_serial
        deadline = time.time() + 5
        while time.time() < deadline and not any(e["event"] == "certificate_reloaded" for e in running.log):
            time.sleep(0.1)
        assert any(event["event"] == "certificate_reloaded" for event in running.log)
    finally:
        running.stop()


def test_reviews_beyond_the_concurrency_limit_get_503(monkeypatch):
    from gpulint.lint.config import Config
    from gpulint.webhook import server as serve_module

    release = threading.Event()
    real_decide = serve_module.decide

    def slow_decide(*args):
        release.wait(10)
        return real_decide(*args)

    monkeypatch.setattr(serve_module, "decide", slow_decide)
    webhook = serve_module.Webhook(Config(), serve_module.ServeOptions(max_concurrency=1))
    body = json.dumps(review(GOOD_POD)).encode()
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(webhook.review, body)
        deadline = time.time() + 5
        while webhook.slots._value and time.time() < deadline:  # the first review holds the only slot
            time.sleep(0.01)
        answer = webhook.review(body)
        assert answer.status == 503 and "too many reviews" in answer.body["error"]
        release.set()
        assert first.result().status == 200
    assert webhook.review(body).status == 200  # the slot was released


@pytest.mark.slow
def test_a_broken_log_pipe_neither_fails_reviews_nor_blocks_shutdown(tmp_path):
    """stderr is the container runtime's pipe: when its reader goes away, writes raise BrokenPipeError.
    Reviews must still be answered, and SIGTERM must still stop the server (the shutdown logs first)."""
    ca = trustme.CA()
    cert, key = issue_pair(ca, tmp_path)
    command = [sys.executable, "-m", "gpulint", "serve", "--tls-cert", str(cert), "--tls-key", str(key)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", "0"], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        port = json.loads(process.stderr.readline())["port"]
        process.stderr.close()  # the log's reader is gone
        client = Client(port, ca)
        for index in range(3):
            status, answer = client.post(review(BAD_POD, f"uid-{index}"))
            assert status == 200 and answer["response"]["allowed"] is False
        assert client.get("/healthz") == (200, "ok\n")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
