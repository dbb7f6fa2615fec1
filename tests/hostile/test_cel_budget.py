"""CEL that grows values exponentially, through every place gpulint evaluates CEL: each must end as a
finding (Kubernetes' words) within seconds and bounded memory, never a hang, a crash or an OOM kill.

The CLI runs as a real subprocess under a small wrapper that reports the peak RSS of the CLI and
everything it waited for (RUSAGE_CHILDREN), including the CEL sandbox worker.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import said

pytestmark = pytest.mark.timed  # wall-clock bounds: CI runs these apart (docs/development.md)

MIB = 1024 * 1024
# A CLI run is ~100 MiB; the sandbox worker is capped at its start size + 512 MiB of address space.
# The bug this guards against took 3.5 GB.
RSS_LIMIT = 900 * MIB
WRAPPER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(done.returncode)
"""


def bind_bomb(levels: int = 12, seed: str = '"abcdefgh"') -> str:
    """Nested cel.bind, each quadrupling a string: 8 x 4**11 = 33,554,432 characters at 12 levels."""
    text = f"cel.bind(a0, {seed}, "
    for i in range(1, levels):
        text += f"cel.bind(a{i}, a{i - 1} + a{i - 1} + a{i - 1} + a{i - 1}, "
    return text + f"a{levels - 1}.size() > 0" + ")" * levels


BOMB = bind_bomb()
# without cel.bind (a ValidatingAdmissionPolicy's environment has none): each replace() multiplies the string by 9
LITERAL_BOMB = '"abcdefgh"' + '.replace("", "abcdefgh")' * 7 + ".size() > 0"


def gpulint(*args: str, timeout: float = 60) -> tuple[int, dict, int, float]:
    """(exit code, JSON report, peak RSS in bytes, seconds) of `gpulint check --format json ...`."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, sys.executable, "-m", "gpulint", "check", "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    elapsed = time.perf_counter() - start
    *errors, rss = done.stderr.strip().splitlines()
    assert done.returncode in (0, 1), (done.returncode, "\n".join(errors))
    return done.returncode, json.loads(done.stdout), int(rss), elapsed


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


INVENTORY = """
    apiVersion: v1
    kind: Node
    metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
    status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.example.com}
    spec:
      selectors:
      - cel: {expression: 'device.driver == "gpu.example.com"'}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: s1}
    spec:
      driver: gpu.example.com
      nodeName: n1
      pool: {name: p1, generation: 1, resourceSliceCount: 1}
      devices:
      - name: g0
        attributes:
          model: {string: MODEL}
"""


@pytest.mark.slow
def test_the_409_byte_resource_claim_is_a_cost_finding(tmp_path):
    claim = write(
        tmp_path / "claim.yaml",
        f"""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: c}}
        spec:
          devices:
            requests:
            - name: g
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: '{BOMB}'
    """,
    )
    assert len(BOMB) == 409
    inventory = write(tmp_path / "inventory.yaml", INVENTORY.replace("MODEL", "h100"))
    code, report, rss, elapsed = gpulint(str(claim), "--inventory", str(inventory))
    (finding,) = findings(report, "cel-invalid")
    assert code == 1 and finding["severity"] == "error"
    assert (
        "too complex, exceeds cost limit: estimated cost 10,066,511 exceeds budget by factor of 10.1x"
        in finding["message"]
    )
    # at the concatenation that crosses the limit, inside the expression
    line = claim.read_text().splitlines()[finding["line"] - 1]
    assert line[finding["column"] - 1 :].startswith("a10 + a10 + a10 + a10")
    assert rss < RSS_LIMIT and elapsed < 15


@pytest.mark.slow
def test_a_device_class_selector_bomb_is_a_cost_finding(tmp_path):
    klass = write(
        tmp_path / "class.yaml",
        f"""
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {{name: bomb}}
        spec:
          selectors:
          - cel:
              expression: >-
                {bind_bomb(14, "device.driver")}
    """,
    )
    inventory = write(tmp_path / "inventory.yaml", INVENTORY.replace("MODEL", "h100"))
    code, report, rss, elapsed = gpulint(str(klass), "--inventory", str(inventory))
    (finding,) = findings(report, "cel-invalid")
    assert "too complex, exceeds cost limit" in finding["message"] and "more than 100x" in said(finding)
    assert finding["line"] == 8 and code == 1
    assert rss < RSS_LIMIT and elapsed < 15


def claim_with(tmp_path: Path, selector: str) -> Path:
    return write(
        tmp_path / "claim.yaml",
        f"""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: c}}
        spec:
          devices:
            requests:
            - name: g
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel: {{expression: '{selector}'}}
    """,
    )


MODEL = 'device.attributes["gpu.example.com"].model'
GROWS = f'{MODEL}.replace("", {MODEL}).replace("", {MODEL})'  # a 20,000-character model: 20,001 x 20,000 x ...


@pytest.mark.slow
def test_huge_attribute_values_in_an_inventory_slice_are_over_the_cost_limit(tmp_path):
    # Within the API server's sizes (attribute strings <= 64) this selector is cheap.
    claim = claim_with(tmp_path, f"{GROWS}.size() > 0")
    small = write(tmp_path / "small.yaml", INVENTORY.replace("MODEL", "h100"))
    code, report, _, _ = gpulint(str(claim), "--inventory", str(small))
    assert code == 0 and report["findings"] == []
    huge = write(tmp_path / "huge.yaml", INVENTORY.replace("MODEL", "x" * 20_000))
    code, report, rss, elapsed = gpulint(str(claim), "--inventory", str(huge))
    (finding,) = findings(report, "cel-invalid")
    assert re.search(
        r"CEL runtime error on device gpu.example.com/p1/g0: operation cancelled: actual cost limit "
        r"exceeded\nits cost with these inputs is at least [\d,]{9,}, over the limit of 1,000,000",
        said(finding),
    )
    assert rss < RSS_LIMIT and elapsed < 15


@pytest.mark.slow
def test_an_evaluation_the_estimate_cannot_decide_is_stopped_in_the_sandbox(tmp_path):
    # `||` may stop after its left side, so only evaluating tells: the worker runs out of memory or time
    claim = claim_with(tmp_path, f'device.driver == "other.example.com" || {GROWS}.size() > 0')
    huge = write(tmp_path / "huge.yaml", INVENTORY.replace("MODEL", "x" * 20_000))
    code, report, rss, elapsed = gpulint(str(claim), "--inventory", str(huge))
    (finding,) = findings(report, "cel-invalid")
    assert (
        "CEL runtime error on device gpu.example.com/p1/g0: operation cancelled: actual cost limit exceeded\n"
        "its estimated cost with these inputs is over the limit of 1,000,000, and gpulint stopped"
    ) in said(finding)
    assert rss < RSS_LIMIT and elapsed < 15


@pytest.mark.slow
def test_policy_and_validating_admission_policy_bombs_are_findings(tmp_path):
    pod = write(
        tmp_path / "pod.yaml",
        f"""
        apiVersion: v1
        kind: Pod
        metadata: {{name: trainer-{"x" * 55}}}
        spec:
          containers:
          - {{name: main, image: example.com/trainer:1}}
    """,
    )
    name = "object.metadata.name"
    grows = f'{name}.replace("", {name}).replace("", {name}).replace("", {name}).replace("", {name})'
    policies = write(
        tmp_path / "policies.yaml",
        f"""
        apiVersion: gpulint.io/v1alpha1
        kind: Policy
        metadata: {{name: bomb-by-name}}
        spec:
          match: {{kinds: [Pod]}}
          validations:
          - expression: '{bind_bomb(12, name)}'
            message: never
          - expression: '({name}.startsWith("trainer") ? {grows} : "").size() > 0'
            message: never either
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {{name: literal-bomb}}
        spec:
          matchConstraints:
            resourceRules:
            - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}}
          validations:
          - expression: '{LITERAL_BOMB}'
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {{name: literal-bomb}}
        spec: {{policyName: literal-bomb, validationActions: [Deny]}}
    """,
    )
    code, report, rss, elapsed = gpulint(str(pod), "--policy", str(policies))
    by_name = findings(report, "bomb-by-name")
    assert len(by_name) == 2 and all(f["severity"] == "error" for f in by_name)
    texts = [said(f) for f in by_name]
    # with DYN-typed variables `+` may be integer addition, so the estimate's minimum cannot decide; cel-go charges
    # a concatenation of two computed strings next to nothing (the policy_budget oracle), so the bind bomb is not
    # counted past the limit either: the worker stops both, on memory or CPU time
    stopped = (
        "actual cost limit exceeded\nits estimated cost with these inputs is over the limit of 1,000,000, and gpulint"
    )
    assert all(stopped in t for t in texts), texts
    (vap,) = findings(report, "literal-bomb")
    assert (
        "operation cancelled: actual cost limit exceeded (its cost with these inputs is at least 1," in vap["message"]
        and vap["severity"] == "error"
    )
    assert code == 1 and rss < RSS_LIMIT and elapsed < 20
    # the same VAP with the bind bomb: the API server does not create it (no cel.bind in the admission
    # environment), so neither does gpulint load it
    text = policies.read_text().replace(LITERAL_BOMB, BOMB)
    bind = write(tmp_path / "bind.yaml", text)
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", str(pod), "--policy", str(bind)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "undeclared reference to 'cel'" in done.stderr, done.stderr


@pytest.mark.slow
def test_mixed_attribute_types_under_a_comparing_selector_are_per_device_errors(tmp_path):
    inventory = write(
        tmp_path / "inventory.yaml",
        INVENTORY.replace(
            """
      - name: g0
        attributes:
          model: {string: MODEL}
""",
            """
      - name: g0
        attributes:
          index: {int: 3}
      - name: g1
        attributes:
          index: {string: three}
      - name: g2
        attributes:
          index: {bool: true}
""",
        ),
    )
    claim = write(
        tmp_path / "claim.yaml",
        """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: c}
        spec:
          devices:
            requests:
            - name: g
              exactly:
                deviceClassName: gpu.example.com
                count: 2  # only g0 matches without an error: the allocator reaches g1 (with 1, maybe not)
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].index > 2'}
    """,
    )
    code, report, _, _ = gpulint(str(claim), "--inventory", str(inventory))
    (finding,) = findings(report, "cel-invalid")
    assert "CEL runtime error on device gpu.example.com/p1/g1" in finding["message"]
    assert "No matching overloads" in finding["message"] and code == 1


def claim_review(uid: str, selector: str) -> dict:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": uid, "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "g",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "selectors": [{"cel": {"expression": selector}}],
                        },
                    }
                ]
            }
        },
    }
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": "CREATE",
            "namespace": "ml",
            "object": claim,
            "kind": {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"},
        },
    }


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.slow
def test_the_webhook_denies_cel_bombs_in_bounded_memory(tmp_path):
    from webhook_helpers import Server

    inventory = write(tmp_path / "inventory.yaml", INVENTORY.replace("MODEL", "x" * 20_000))
    server = Server(tmp_path, inventory=str(inventory))
    try:
        start = time.perf_counter()
        status, answer = server.post(claim_review("bomb", BOMB))  # the 409-byte claim, as the API server sends it
        assert status == 200 and answer["response"]["allowed"] is False
        assert "too complex, exceeds cost limit" in answer["response"]["status"]["message"]
        # a selector only the huge inventory attribute makes expensive: stopped where it can be stopped
        status, answer = server.post(
            claim_review("huge", f'device.driver == "other.example.com" || {GROWS}.size() > 0')
        )
        assert status == 200 and answer["response"]["allowed"] is False
        assert "operation cancelled: actual cost limit exceeded" in answer["response"]["status"]["message"]
        # the server keeps serving, and fast, after both
        status, answer = server.post(claim_review("fine", 'device.attributes["gpu.example.com"].model.size() > 0'))
        assert status == 200 and answer["response"]["allowed"] is True
        assert time.perf_counter() - start < 15
        assert peak_rss(server.process.pid) < RSS_LIMIT
    finally:
        server.stop()
