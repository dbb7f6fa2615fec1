"""Inventory objects the API server would refuse (issue #18): `check` reports them as api-rejected warnings at
their field in the inventory file, worded as the API server words them (pkg/apis/resource/validation
validation.go); `gpulint inventory` and `explain` list the same ones (gpulint/lint/world/rejections.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import run_cli, said

from gpulint.lint.config import Config
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

# A cluster as `kubectl get nodes,resourceslices,deviceclasses,devicetaintrules -o yaml` prints it, edited by
# hand: a driver name with an underscore, an attribute name over 32 characters, a device name twice in one
# slice, a counter name that is no DNS label, an extendedResourceName without a domain, a Node's taint effect
# on a device taint.
BAD = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-1
    labels: {kubernetes.io/hostname: gpu-node-1, nvidia.com/gpu.present: "true"}
  status:
    capacity: {cpu: "96", memory: 1024Gi, pods: "110"}
    allocatable: {cpu: "96", memory: 1000Gi, pods: "110"}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata:
    name: gpu-node-1-gpu.nvidia.com-7xk2p
  spec:
    driver: gpu_nvidia.com
    nodeName: gpu-node-1
    pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      attributes:
        type: {string: gpu}
        productName: {string: NVIDIA H100 80GB HBM3}
        architectureGenerationOfTheGraphicsProcessor: {string: Hopper}
      capacity:
        memory: {value: 80Gi}
    - name: gpu-0
      attributes:
        type: {string: gpu}
      capacity:
        memory: {value: 80Gi}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata:
    name: gpu-node-1-counters-9qz4d
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-node-1
    pool: {name: gpu-node-1-mig, generation: 1, resourceSliceCount: 1}
    sharedCounters:
    - name: gpu-0-counter-set
      counters:
        memorySlices: {value: "8"}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata:
    name: gpu.nvidia.com
  spec:
    selectors:
    - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
    extendedResourceName: gpu
- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata:
    name: gpu-maintenance
  spec:
    deviceSelector: {driver: gpu.nvidia.com, pool: gpu-node-1}
    taint: {key: maintenance, value: planned, effect: PreferNoSchedule}
"""
SUBJECT = "the API server would reject this inventory object: "
EXPECTED = [
    (17, 13, "ResourceSlice", 'spec.driver: Invalid value: "gpu_nvidia.com"'),
    (25, 9, "ResourceSlice", "spec.devices[0].attributes: Too long: may not be more than 32 bytes"),
    (28, 7, "ResourceSlice", 'spec.devices[1]: Duplicate value: "gpu-0"'),
    (44, 9, "ResourceSlice", 'spec.sharedCounters[0].counters: Invalid value: "memorySlices"'),
    (52, 27, "DeviceClass", 'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'),
    (
        59,
        55,
        "DeviceTaintRule",
        'spec.taint.effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute", "None"',
    ),
]
# The same cluster as the API server holds it: every field the twin of a failing one, valid.
GOOD = (
    BAD.replace("driver: gpu_nvidia.com", "driver: gpu.nvidia.com")
    .replace("architectureGenerationOfTheGraphicsProcessor", "architecture")
    .replace(
        "    - name: gpu-0\n      attributes:\n        type: {string: gpu}\n      capacity:",
        "    - name: gpu-1\n      attributes:\n        type: {string: gpu}\n      capacity:",
    )
    .replace("memorySlices", "memory-slices")
    .replace("extendedResourceName: gpu", "extendedResourceName: nvidia.com/gpu")
    .replace("effect: PreferNoSchedule", "effect: NoSchedule")
)
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec:
  containers:
  - name: notebook
    image: registry.example.com/notebook:1.0
"""


def _project(tmp_path: Path, inventory: str, name: str = "cluster.yaml") -> tuple[Path, Path]:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / name).write_text(inventory, encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pod.yaml").write_text(POD, encoding="utf-8")
    return tmp_path / "app", tmp_path / "cluster"


def _check(*args: str) -> tuple[int, list[dict]]:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["findings"]


def _placed(findings: list[dict]) -> list[tuple[int, int, str, str]]:
    return [
        (f["line"], f["column"], f["object"]["kind"], f["message"].removeprefix(SUBJECT))
        for f in findings
        if f["rule"] == "api-rejected"
    ]


def test_an_edited_yaml_inventory_is_reported_at_each_field_as_the_api_server_words_it(tmp_path):
    app, cluster = _project(tmp_path, BAD)
    code, findings = _check(str(app), "--inventory", str(cluster))
    assert code == 0  # warnings: the manifest under review is not at fault
    assert _placed(findings) == EXPECTED
    assert {f["severity"] for f in findings} == {"warning"}
    assert {f["path"] for f in findings} == {str(cluster / "cluster.yaml")}
    driver = findings[0]
    assert driver["object"]["name"] == "gpu-node-1-gpu.nvidia.com-7xk2p"
    assert said(driver).splitlines()[1].startswith('spec.driver: Invalid value: "gpu_nvidia.com": a lowercase RFC 1123')
    assert "exported from another Kubernetes version" in said(driver)
    assert all(len(f["message"]) <= 160 for f in findings)


def test_the_valid_twin_of_each_field_is_silent(tmp_path):
    app, cluster = _project(tmp_path, GOOD)
    code, findings = _check(str(app), "--inventory", str(cluster))
    assert (code, findings) == (0, [])
    assert load_inventory([str(cluster)]).rejections == []


def test_a_json_inventory_is_placed_in_the_json_text(tmp_path):
    """kubectl get -o json: read without positions, parsed again for them only because an object fails."""
    data = yaml.safe_load(BAD)
    text = json.dumps(data, indent=4)
    app, cluster = _project(tmp_path, text, "cluster.json")
    _, findings = _check(str(app), "--inventory", str(cluster))
    lines = text.splitlines()
    placed = _placed(findings)
    assert [(kind, message) for _, _, kind, message in placed] == [(k, m) for _, _, k, m in EXPECTED]
    line, column = placed[0][:2]
    assert lines[line - 1][column - 1 :] == '"gpu_nvidia.com",'
    line, column = placed[2][:2]  # the duplicate device: its list item
    assert lines[line - 1].strip() == "{" and '"name": "gpu-0"' in lines[line]


def test_a_json_array_of_objects_is_placed_too(tmp_path):
    """The clouds' list commands print bare arrays: each item is an object, located within the array."""
    items = yaml.safe_load(BAD)["items"]
    text = json.dumps(items, indent=2)
    app, cluster = _project(tmp_path, text, "cluster.json")
    _, findings = _check(str(app), "--inventory", str(cluster))
    placed = _placed(findings)
    assert len(placed) == len(EXPECTED)
    line, column = placed[-1][:2]
    assert text.splitlines()[line - 1][column - 1 :] == '"PreferNoSchedule"'


def test_an_inventory_file_linted_too_is_reported_once_by_the_rule_itself(tmp_path):
    _, cluster = _project(tmp_path, BAD)
    code, findings = _check(str(cluster), "--inventory", str(cluster))
    rejected = [f for f in findings if f["rule"] == "api-rejected"]
    assert code == 1 and {f["severity"] for f in rejected} == {"error"}  # a linted file: it is to be applied
    assert not any(f["message"].startswith(SUBJECT) for f in rejected)
    assert (25, 9) in {(f["line"], f["column"]) for f in rejected}  # the too long attribute name: at the key


def test_the_rule_switched_off_or_ignored_for_the_inventory_path_is_silent(tmp_path):
    app, cluster = _project(tmp_path, BAD)
    config = tmp_path / ".gpulint.yaml"
    config.write_text("ignore: [api-rejected]\n", encoding="utf-8")
    assert _check(str(app), "--inventory", str(cluster), "--config", str(config))[1] == []
    config.write_text("per-path-ignores:\n  cluster/*.yaml: [api-rejected]\n", encoding="utf-8")
    run = run_cli("check", str(app), "--inventory", str(cluster), "--config", str(config), "--format", "json")
    assert run.json()["findings"] == [] and run.json()["summary"]["suppressed"] == len(EXPECTED)


def test_a_severity_set_for_the_rule_does_not_make_the_inventory_an_error(tmp_path):
    app, cluster = _project(tmp_path, BAD)
    config = tmp_path / ".gpulint.yaml"
    config.write_text("severity: {api-rejected: error}\n", encoding="utf-8")
    code, findings = _check(str(app), "--inventory", str(cluster), "--config", str(config))
    assert code == 0 and {f["severity"] for f in findings} == {"warning"}


def test_the_text_report_counts_only_the_linted_files(tmp_path):
    app, cluster = _project(tmp_path, BAD)
    run = run_cli("check", str(app), "--inventory", str(cluster))
    assert run.exit_code == 0
    assert (
        f"{cluster / 'cluster.yaml'}:28:7: warning[api-rejected] ResourceSlice/gpu-node-1-gpu.nvidia.com-7xk2p"
        in run.stdout
    )
    assert run.stdout.rstrip().endswith("Found 0 errors, 6 warnings in 1 file, 1 object.")


def test_the_inventory_command_lists_the_same_rejections(tmp_path):
    _, cluster = _project(tmp_path, BAD)
    text = run_cli("inventory", "--inventory", str(cluster))
    assert text.exit_code == 0
    listed = [line.strip() for line in text.stdout.splitlines() if line.startswith(f"  {cluster}")]
    assert listed == [
        f"{cluster / 'cluster.yaml'}:{line}:{column}: {kind} {name}: {message}"
        for (line, column, kind, _), name, message in zip(
            EXPECTED,
            ["gpu-node-1-gpu.nvidia.com-7xk2p"] * 3
            + ["gpu-node-1-counters-9qz4d", "gpu.nvidia.com", "gpu-maintenance"],
            [r.error.message() for r in load_inventory([str(cluster)]).rejections],
            strict=True,
        )
    ]
    data = json.loads(run_cli("inventory", "--inventory", str(cluster), "--format", "json").stdout)["summary"]
    assert len(data["resourceSliceProblems"]) == 4
    assert [(r["line"], r["column"], r["object"]["kind"]) for r in data["rejectedObjects"]] == [
        (line, column, kind) for line, column, kind, _ in EXPECTED
    ]


def test_explain_names_them_where_it_allocates(tmp_path):
    _, cluster = _project(tmp_path, BAD)
    claim = tmp_path / "claim.yaml"
    claim.write_text(
        textwrap.dedent(
            """\
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaim
            metadata: {name: one-gpu}
            spec:
              devices:
                requests:
                - name: gpu
                  exactly: {deviceClassName: gpu.nvidia.com}
            """
        ),
        encoding="utf-8",
    )
    run = run_cli("explain", str(claim), "--inventory", str(cluster))
    assert (
        f"read as written: 4 inventory objects the API server would reject (first: {cluster / 'cluster.yaml'}:17:13: "
        'ResourceSlice gpu-node-1-gpu.nvidia.com-7xk2p: spec.driver: Invalid value: "gpu_nvidia.com": a lowercase'
    ) in run.stdout


def test_an_admission_review_is_judged_without_the_inventory_s_own_problems(tmp_path):
    """The webhook lints the object under review: the inventory's problems are no reason to deny it."""
    _, cluster = _project(tmp_path, BAD)
    inventory = load_inventory([str(cluster)])
    assert len(inventory.rejections) == len(EXPECTED)
    run = LintRun.for_object(Config(), yaml.safe_load(POD), inventory)
    assert run.report().findings == []
    assert run.inventory_reports() == []


@pytest.mark.slow
def test_the_webhook_counts_them_in_its_log_and_admits_the_review(tmp_path):
    from webhook_helpers import GOOD_POD, Server, review

    _, cluster = _project(tmp_path, BAD)
    running = Server(tmp_path, inventory=str(cluster))
    try:
        answer = running.post(review(GOOD_POD))[1]["response"]
        assert answer["allowed"] is True
        assert not any("api-rejected" in warning for warning in answer.get("warnings", []))
        loaded = [event for event in running.log if event["event"] == "inventory_loaded"]
        assert loaded and loaded[-1]["rejected_objects"] == 4
    finally:
        running.stop()


def test_a_linted_device_taint_rule_is_validated_as_the_api_server_does():
    """validateDeviceTaintRuleSpec: the selector's driver, pool and device names, and the taint (errors: linted)."""
    from conftest import by_rule, lint_text

    rule = """
    apiVersion: resource.k8s.io/v1
    kind: DeviceTaintRule
    metadata: {name: gpu-0-maintenance}
    spec:
      deviceSelector: {driver: gpu.nvidia.com, pool: gpu-node-1, device: GPU_0}
      taint: {key: nvidia.com/maintenance, effect: NoExecute}
    """
    found = by_rule(lint_text(rule), "api-rejected")
    assert [(f.line, f.column, f.severity.name, f.message) for f in found] == [
        (
            5,
            70,
            "ERROR",
            'the API server rejects this object: spec.deviceSelector.device: Invalid value: "GPU_0"',
        )
    ]
    assert said(found[0]).splitlines()[1].endswith("regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    assert by_rule(lint_text(rule.replace("GPU_0", "gpu-0")), "api-rejected") == []


# Two slices of one pool, each one valid, that repeat a device name: the API server stores both (it validates a
# slice alone), and the allocator finds the pool invalid (GatherPools). What the resource slice controller
# publishes when its informer cache was out of date (allocator_testing.go "duplicate-slice").
DUPLICATE_ACROSS_SLICES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-1
    labels: {kubernetes.io/hostname: gpu-node-1}
  status:
    capacity: {cpu: "96", memory: 1024Gi, pods: "110"}
    allocatable: {cpu: "96", memory: 1000Gi, pods: "110"}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-node-1-gpu.nvidia.com-a1}
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-node-1
    pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 2}
    devices:
    - name: gpu-0
      attributes: {type: {string: gpu}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-node-1-gpu.nvidia.com-b2}
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-node-1
    pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 2}
    devices:
    - name: gpu-0
      attributes: {type: {string: gpu}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors:
    - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
"""
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-gpu}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
"""


def _claim_findings(tmp_path: Path, inventory: str) -> list[dict]:
    (tmp_path / "cluster").mkdir(exist_ok=True)
    (tmp_path / "cluster" / "cluster.yaml").write_text(inventory, encoding="utf-8")
    (tmp_path / "claim.yaml").write_text(CLAIM, encoding="utf-8")
    return _check(str(tmp_path / "claim.yaml"), "--inventory", str(tmp_path / "cluster"))[1]


def test_a_failed_allocation_on_a_node_with_an_invalid_pool_says_so_as_allocate_does(tmp_path):
    (finding,) = _claim_findings(tmp_path, DUPLICATE_ACROSS_SLICES)  # each slice is valid: no api-rejected
    assert (finding["rule"], finding["line"]) == ("claim-unsatisfiable", 7)
    assert (
        said(finding)
        .splitlines()[1]
        .startswith(
            "invalid resource pools were encountered (resource pool gpu.nvidia.com/gpu-node-1 is currently invalid "
            "(duplicate device name gpu-0)); request 'gpu' needs 1 device"
        )
    )
    # the twin: one device name each, the pool is valid and gives two GPUs
    head, _, tail = DUPLICATE_ACROSS_SLICES.rpartition("- name: gpu-0")
    assert _claim_findings(tmp_path, f"{head}- name: gpu-1{tail}") == []


def test_an_invalid_pool_does_not_stop_an_allocation_another_pool_satisfies(tmp_path):
    """Allocate skips invalid pools while it searches; only when it finds nothing does it name them."""
    other_pool = DUPLICATE_ACROSS_SLICES.replace(
        "- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass",
        "- apiVersion: resource.k8s.io/v1\n  kind: ResourceSlice\n  metadata: {name: gpu-node-1-nic}\n"
        "  spec:\n    driver: gpu.nvidia.com\n    nodeName: gpu-node-1\n"
        "    pool: {name: gpu-node-1-extra, generation: 1, resourceSliceCount: 1}\n"
        "    devices:\n    - name: gpu-7\n"
        "- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass",
    )
    assert _claim_findings(tmp_path, other_pool) == []


@pytest.mark.slow
def test_a_live_inventory_names_the_api_it_was_read_from_and_the_webhook_s_watch_skips_them(tmp_path):
    """--live-inventory: the findings name the list read (live:deviceclasses...), placed in its JSON, one field a
    line; the webhook's live watch does not validate (the cluster stored the objects) and never fails for them."""
    from support.fake_apiserver import (
        DRA_V1,
        JOB,
        FakeApiServer,
        allowed,
        cluster,
        device_class,
        gpulint,
        node,
        serve,
        wait_for,
    )

    bad_class = {**device_class("gpu.nvidia.com"), "spec": {"extendedResourceName": "gpu", "selectors": []}}
    api = FakeApiServer(
        tmp_path, cluster([node("n0", 8)], **{"resource.k8s.io__v1": {**DRA_V1, "deviceclasses": [bad_class]}})
    )
    try:
        (tmp_path / "job.yaml").write_text(JOB.replace("nvidia.com/gpu: 16", "nvidia.com/gpu: 8"), encoding="utf-8")
        live = ("--live-inventory", "--kubeconfig", str(api.kubeconfig(tmp_path)), "--context", "gpu-cluster")
        checked = gpulint("check", "job.yaml", *live, "--format", "json", cwd=tmp_path)
        assert checked.returncode == 0, checked.stderr
        (finding,) = [f for f in json.loads(checked.stdout)["findings"] if f["rule"] == "api-rejected"]
        assert finding["path"] == "live:deviceclasses.resource.k8s.io" and finding["severity"] == "warning"
        assert finding["message"] == SUBJECT + (
            'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'
        )
        assert finding["line"] > 1  # inside the listed object, not at the top of the list
        webhook = serve(api)
        try:
            assert wait_for(lambda: webhook.ready)
            assert allowed(webhook, yaml.safe_load(POD))
            stored = webhook.snapshot.inventory
            assert stored.device_classes and stored.rejections == []
        finally:
            webhook.stop()
    finally:
        api.stop()


def test_a_multi_document_inventory_read_with_positions_is_placed_without_a_second_parse(tmp_path, monkeypatch):
    """Several documents go to gpulint's own loader (positions included): the failing objects are placed as read."""
    import gpulint.lint.world.rejections as rejections

    documents = "---\n".join(yaml.safe_dump(item, sort_keys=False) for item in yaml.safe_load(BAD)["items"])
    (tmp_path / "cluster.yaml").write_text(documents, encoding="utf-8")
    monkeypatch.setattr(rejections, "load_bytes", None)  # never called: a second parse would fail here
    found = load_inventory([str(tmp_path / "cluster.yaml")]).rejections
    assert len(found) == len(EXPECTED)
    lines = documents.splitlines()
    for rejection in found:
        assert rejection.excerpt == lines[rejection.line - 1]
    driver = found[0]
    assert lines[driver.line - 1][driver.column - 1 :] == "gpu_nvidia.com"


def test_a_file_too_large_to_parse_with_positions_is_reported_at_its_start(tmp_path, monkeypatch):
    import gpulint.lint.world.rejections as rejections

    (tmp_path / "cluster.json").write_text(json.dumps(yaml.safe_load(BAD)), encoding="utf-8")
    monkeypatch.setattr(rejections, "MAX_FILE_BYTES", 1024)
    found = load_inventory([str(tmp_path / "cluster.json")]).rejections
    assert [(r.line, r.column) for r in found] == [(1, 1)] * len(EXPECTED)
    assert [r.error.message() for r in found][2] == 'spec.devices[1]: Duplicate value: "gpu-0"'
    assert "not placed at the field: the file is 0 MiB, over the 0 MiB" in said(found[0].finding())


SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: gpu-node-1-gpus
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
"""


def test_a_second_copy_of_a_name_with_another_spec_is_reported_and_the_first_is_read(tmp_path):
    """Two exports in one inventory folder: the cluster holds one ResourceSlice per name."""
    (tmp_path / "a-monday.yaml").write_text(SLICE, encoding="utf-8")
    (tmp_path / "b-tuesday.yaml").write_text(SLICE.replace("generation: 1", "generation: 2"), encoding="utf-8")
    (tmp_path / "c-copy.yaml").write_text(SLICE, encoding="utf-8")  # the same object again: nothing to say
    inventory = load_inventory([str(tmp_path)])
    (found,) = inventory.rejections
    assert (found.file, found.line, found.column) == (str(tmp_path / "b-tuesday.yaml"), 4, 9)
    assert found.finding().message == SUBJECT + 'metadata.name: Duplicate value: "gpu-node-1-gpus"'
    assert f"another ResourceSlice of this name, with another spec, is in {tmp_path / 'a-monday.yaml'}" in said(
        found.finding()
    )
    assert [s.data["spec"]["pool"]["generation"] for s in inventory.slices] == [1]
    # within one file, and for DeviceTaintRules too (one rule per name taints the devices)
    rule = (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: drain}\n"
        "spec:\n  deviceSelector: {driver: gpu.nvidia.com}\n  taint: {key: drain, effect: NoSchedule}\n"
    )
    (tmp_path / "rules.yaml").write_text(rule + "---\n" + rule.replace("NoSchedule", "NoExecute"), encoding="utf-8")
    inventory = load_inventory([str(tmp_path / "rules.yaml")])
    (found,) = inventory.rejections
    assert (found.line, "is earlier in this file" in said(found.finding())) == (10, True)
    assert [r.data["spec"]["taint"]["effect"] for r in inventory.taint_rules] == ["NoSchedule"]


def test_a_stored_class_keeps_parameters_that_predate_the_size_limit(tmp_path):
    """validateRawExtension limits opaque parameters to 10 KiB on create only (1.32): a class the cluster stored
    before is grandfathered in, so the inventory's copy is silent where the same class, linted, is refused."""
    from conftest import by_rule, lint_text

    big = {"apiVersion": "gpu.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"note": "x" * 11000}}
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {
            "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
            "config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": big}}],
        },
    }
    (tmp_path / "classes.json").write_text(json.dumps(device_class, indent=2), encoding="utf-8")
    assert load_inventory([str(tmp_path / "classes.json")]).rejections == []
    (refused,) = by_rule(lint_text(yaml.safe_dump(device_class)), "api-rejected")
    assert refused.message.endswith("spec.config[0].opaque.parameters: Too long: may not be more than 10240 bytes")


def test_past_fifty_in_a_file_one_finding_counts_the_rest(tmp_path):
    """An inventory from another release can fail the same way on every slice: the report stays readable."""
    slices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"node-{i}-gpus"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": f"node-{i}",
                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"cudaDriverVersion": {"version": "v12.4"}}}],
            },
        }
        for i in range(60)
    ]
    app, cluster = _project(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": slices}, indent=1))
    code, findings = _check(str(app), "--inventory", str(cluster))
    assert code == 0 and len(findings) == 51
    listed = [f for f in findings if f["message"].startswith(SUBJECT)]
    assert len(listed) == 50 and listed[0]["object"]["name"] == "node-0-gpus"
    (rest,) = [f for f in findings if not f["message"].startswith(SUBJECT)]
    assert rest["message"] == (
        "and 10 more errors in 10 inventory objects of this file that the API server would reject, not listed one by one"
    )
    assert rest["object"]["name"] == "node-50-gpus" and rest["notes"][0].startswith("the first: ")
    assert "must be a string compatible with semver.org spec 2.0.0" in rest["notes"][0]


# A node's slice as `kubectl get resourceslices -o yaml` prints it, its driver name edited by hand (an underscore).
EDITED_SLICE = """\
apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata:
    name: gpu-node-1-gpu.nvidia.com-7xk2p
  spec:
    driver: gpu_nvidia.com
    nodeName: gpu-node-1
    pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
"""


@pytest.mark.parametrize(
    ("format_", "placed"),
    [
        ("text", lambda out, path: f"{path}:9:13: warning[api-rejected]" in out),
        (
            "json",
            lambda out, path: (
                [(f["path"], f["line"], f["column"]) for f in json.loads(out)["findings"]] == [(path, 9, 13)]
            ),
        ),
        (
            "sarif",
            lambda out, path: (
                [
                    (loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["region"])
                    for result in json.loads(out)["runs"][0]["results"]
                    for loc in result["locations"]
                ]
                == [(path, {"startLine": 9, "startColumn": 13})]
            ),
        ),
        ("github", lambda out, path: f"::warning file={path},line=9,col=13,title=gpulint api-rejected::" in out),
        ("junit", lambda out, path: f"{path}:9:13: warning[api-rejected]" in out),
        (
            "gitlab",
            lambda out, path: [i["location"] for i in json.loads(out)] == [{"path": path, "lines": {"begin": 9}}],
        ),
        (
            "markdown",
            lambda out, path: "[`api-rejected`] line 9, column 13:" in out and "driver: gpu_nvidia.com" in out,
        ),
    ],
)
def test_an_inventory_finding_has_its_position_in_every_report_format(tmp_path, monkeypatch, format_, placed):
    """The inventory file's object the API server would reject is placed at its field (file:line:col) whatever
    the format, as a linted file's finding is."""
    monkeypatch.chdir(tmp_path)
    Path("cluster.yaml").write_text(EDITED_SLICE, encoding="utf-8")
    Path("pod.yaml").write_text(POD, encoding="utf-8")
    run = run_cli("check", "pod.yaml", "--inventory", "cluster.yaml", "--format", format_)
    assert run.exit_code == 0, run.stderr
    assert placed(run.stdout, "cluster.yaml"), run.stdout
