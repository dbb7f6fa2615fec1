"""Kueue's waitForPodsReady (issue #29 section 2): a queued workload whose pods cannot be Ready before the timeout
is evicted at every admission. Shaped like Kueue's docs (tasks/manage/setup_wait_for_pods_ready: the ConfigMap
kueue-manager-config with waitForPodsReady) and a vLLM server Deployment whose probe waits for the model load."""

from __future__ import annotations

import textwrap

from rule_harness import findings_of

from gpulint.kube.queueing.kueue_config import pods_ready

RULE = "queue-reference-invalid"


def manager_config(block: str, version: str = "v1beta1") -> str:
    embedded = textwrap.indent(
        f"apiVersion: config.kueue.x-k8s.io/{version}\nkind: Configuration\nhealth:\n"
        "  healthProbeBindAddress: :8081\nintegrations:\n  frameworks:\n  - batch/job\n  - pod\n  - deployment\n"
        f"{textwrap.dedent(block)}",
        "    ",
    )
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
        f"data:\n  controller_manager_config.yaml: |\n{embedded}"
    )


ENABLED = """\
waitForPodsReady:
  enable: true
  timeout: 10m
  requeuingStrategy:
    timestamp: Eviction
    backoffLimitCount: 5
"""

SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-llama3-70b
  namespace: inference
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  replicas: 1
  selector:
    matchLabels: {app: vllm-llama3-70b}
  template:
    metadata:
      labels: {app: vllm-llama3-70b}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Meta-Llama-3-70B-Instruct", "--tensor-parallel-size", "4"]
        ports:
        - containerPort: 8000
        readinessProbe:
          httpGet: {path: /health, port: 8000}
          initialDelaySeconds: DELAY
          periodSeconds: 10
        resources:
          limits:
            nvidia.com/gpu: 4
"""


def _findings(config: str, delay: int) -> list:
    return findings_of(RULE, config + "---\n" + SERVER.replace("DELAY", str(delay)))


def test_a_readiness_delay_past_the_timeout_is_evicted_at_every_admission():
    (finding,) = [f for f in _findings(manager_config(ENABLED), 900) if "PodsReady" in f.message]
    assert finding.severity == "warning"
    assert finding.message.startswith(
        "Kueue evicts this Deployment at every admission: its pods cannot be Ready before 900s, and "
        "waitForPodsReady.timeout is 10m\n"
    )
    config_lines = manager_config(ENABLED).count("\n") + 1  # and the document separator
    assert finding.line == config_lines + SERVER.splitlines().index("          initialDelaySeconds: DELAY") + 1
    notes = finding.message
    assert "Exceeded the PodsReady timeout" in notes
    assert "after 5 requeues Kueue deactivates it: exceeding the maximum number of re-queuing retries" in notes
    assert "blockAdmission is on" in notes  # v1beta1's conversion turns it on when not written


def test_v1beta2_default_timeout_is_30_minutes_and_block_admission_off():
    config = manager_config("waitForPodsReady:\n  requeuingStrategy: {backoffBaseSeconds: 60}\n", "v1beta2")
    assert not [f for f in _findings(config, 900) if "PodsReady" in f.message]
    (finding,) = [f for f in _findings(config, 1800) if "PodsReady" in f.message]
    assert "waitForPodsReady.timeout is 30m (the default)" in finding.message
    assert "blockAdmission" not in finding.message
    assert "requeued and evicted again, forever" in finding.message


def test_trap_a_delay_within_the_timeout_or_waitforpodsready_off():
    assert not [f for f in _findings(manager_config(ENABLED), 300) if "PodsReady" in f.message]
    off = ENABLED.replace("enable: true", "enable: false")
    assert not [f for f in _findings(manager_config(off), 900) if "PodsReady" in f.message]
    # v1beta1 without `enable`: off; v1beta2 without the block: not written, so not judged
    assert not [f for f in _findings(manager_config("manageJobsWithoutQueueName: false\n"), 3600)]
    assert not [f for f in _findings(manager_config("", "v1beta2"), 3600) if "PodsReady" in f.message]


def test_trap_a_job_may_finish_before_its_readiness_delay():
    job = SERVER.replace("apps/v1", "batch/v1").replace("kind: Deployment", "kind: Job")
    job = job.replace("  replicas: 1\n  selector:\n    matchLabels: {app: vllm-llama3-70b}\n", "")
    job = job.replace("    spec:\n      containers:", "    spec:\n      restartPolicy: Never\n      containers:")
    found = findings_of(RULE, manager_config(ENABLED) + "---\n" + job.replace("DELAY", "900"))
    assert not [f for f in found if "PodsReady" in f.message]


def test_the_timeout_is_read_as_kueue_reads_it():
    def config(block: dict, version: str = "v1beta1") -> dict:
        return {"apiVersion": f"config.kueue.x-k8s.io/{version}", "kind": "Configuration", "waitForPodsReady": block}

    assert pods_ready(config({"enable": True})).timeout == 300  # v1beta1 defaultPodsReadyTimeout
    assert pods_ready(config({"enable": True, "timeout": "1h30m"})).timeout == 5400
    assert pods_ready(config({"enable": True, "timeout": "ten minutes"})) is None  # not a duration: unknown
    assert pods_ready(config({"timeout": "5m"})) is None  # v1beta1 without enable: off
    ready = pods_ready(config({"timeout": "0s", "blockAdmission": True}, "v1beta2"))
    assert ready.timeout == 1800 and ready.block_admission and ready.backoff_limit is None
