"""A webhook snapshot keeps the scheduler's verdicts on each pod shape it reviews (lint/world/shapes.py, issue
#31): a review then answers exactly as a review worked out afresh would, the verdicts are shared only by Pods
reviewed against the same snapshot, and the memo is bounded and dropped with its snapshot."""

from __future__ import annotations

import copy
import gc
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from rule_cases import CASES, parse

from gpulint.lint.config import Config
from gpulint.lint.engine import Routes
from gpulint.lint.findings import Finding, Severity
from gpulint.lint.review import ReviewSnapshot
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_configured_inventory
from gpulint.lint.world.shapes import MAX_SHAPE_CHARS, SHAPES, PodShapes

RUNNABLE = ("kind: Node", "kind: ResourceSlice", "kind: NodePool")  # an inventory the scheduler's verdicts read


def _documents(text: str) -> list[Any]:
    try:
        return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]
    except yaml.YAMLError:
        return []


def _pods(text: str) -> list[dict[str, Any]]:
    return [d for d in _documents(text) if d.get("apiVersion") == "v1" and d.get("kind") == "Pod"]


def _case_inventories() -> list[tuple[str, dict[str, str]]]:
    """Of each rule's cases, the first inventory that holds nodes or pools: what the rule reads of a cluster."""
    found: list[tuple[str, dict[str, str]]] = []
    for path in sorted(CASES.glob("*.md")):
        for case in parse(path).cases:
            if any(marker in text for text in case.inventory.values() for marker in RUNNABLE):
                found.append((f"{path.stem}: {case.title}", case.inventory))
                break
    return found


def _case_pods() -> list[dict[str, Any]]:
    """Every v1 Pod of the rule cases that asks for an extended resource (written as users write them)."""
    return [
        pod
        for path in sorted(CASES.glob("*.md"))
        for case in parse(path).cases
        for text in case.files.values()
        for pod in _pods(text)
        if "/" in str(_requests(pod))
    ]


def _requests(pod: dict[str, Any]) -> list[Any]:
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    return [c.get("resources") for c in spec.get("containers") or () if isinstance(c, dict)]


INVENTORIES = _case_inventories()
PODS = _case_pods()


def _snapshot(tmp_path: Path, files: dict[str, str]) -> tuple[Config, ReviewSnapshot, Any]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = Config(inventory=(str(tmp_path),))
    cluster = load_configured_inventory(config)
    return config, ReviewSnapshot.build(config, cluster), cluster


def _afresh(config: Config, obj: dict[str, Any], cluster: Any) -> list[Finding]:
    """The findings of the object reviewed the way `gpulint check` lints it: nothing kept by pod shape."""
    run = LintRun.for_object(config, obj, cluster, Routes.of(config))
    return [f for f in run.report().findings if not (f.run_note and f.severity is Severity.INFO)]


def test_the_cases_hold_enough_pods_and_inventories_to_judge_the_memo():
    assert len(PODS) >= 80 and len(INVENTORIES) >= 15


@pytest.mark.parametrize("name,files", INVENTORIES, ids=[name for name, _ in INVENTORIES])
def test_every_pod_reviewed_after_every_other_is_answered_as_afresh(tmp_path, name, files):
    """Every GPU Pod of the rule cases, reviewed one after another against one snapshot, finds exactly what it
    finds worked out afresh; reviewed again under another name (its shape's verdicts now the memo's), what it
    found the first time."""
    config, snapshot, cluster = _snapshot(tmp_path, files)
    first = []
    for pod in PODS:
        found = snapshot.review(pod).findings
        assert found == _afresh(config, pod, cluster), pod["metadata"]
        first.append(found)
    kept = len(snapshot._shapes)
    for pod, found in zip(PODS, first, strict=True):
        renamed = copy.deepcopy(pod)
        name = str(pod["metadata"].get("name"))
        renamed["metadata"]["name"] = f"{name}-renamed"
        again = snapshot.review(renamed).findings
        assert [repr(f).replace(f"{name}-renamed", name) for f in again] == [repr(f) for f in found], name
    assert len(snapshot._shapes) == kept  # nothing new: every verdict of the renamed pods was the memo's


GPU_NODES = """apiVersion: v1
kind: Node
metadata:
  name: gpu-0
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing}
status:
  capacity: {cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "32"}
  allocatable: {cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "32"}
"""


def _gpu_pod(name: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "containers": [{"name": "t", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]
        },
    }


def test_pods_of_one_shape_share_its_verdicts_and_another_shape_has_its_own(tmp_path):
    config, snapshot, cluster = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    shapes = snapshot._shapes
    first = snapshot.review(_gpu_pod("a", 4))
    assert "gpu-sharing" in {f.rule for f in first.findings}  # 4 time-sliced replicas
    kept = len(shapes)
    assert kept >= 2  # the pod's GPU requirements, the sharing and the scheduling verdicts
    second = _gpu_pod("b", 4)
    assert snapshot.review(second).findings == _afresh(config, second, cluster)
    assert len(shapes) == kept  # the same shape under another name: nothing new kept, the memo's verdicts
    other = snapshot.review(_gpu_pod("c", 1))
    assert len(shapes) > kept and "gpu-sharing" not in {f.rule for f in other.findings}


def test_a_review_of_more_than_pods_works_its_verdicts_out_afresh(tmp_path):
    """A List that holds a RuntimeClass beside the Pod changes what the scheduler sees of it: nothing of its
    shape is read from the memo, nor kept in it."""
    config, snapshot, cluster = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    pod = _gpu_pod("a", 4)
    pod["spec"]["runtimeClassName"] = "nvidia"
    runtime = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "nvidia"},
        "handler": "nvidia",
        "scheduling": {"nodeSelector": {"pool": "absent"}},
    }
    listed = {"apiVersion": "v1", "kind": "List", "items": [runtime, pod]}
    assert snapshot.review(listed).findings == _afresh(config, listed, cluster)
    assert len(snapshot._shapes) == 0
    alone = snapshot.review(pod)  # the Pod alone: the cluster's RuntimeClasses (none), kept by shape
    assert len(snapshot._shapes) > 0 and alone.findings == _afresh(config, pod, cluster)


def test_a_check_of_files_keeps_nothing_by_shape(tmp_path):
    config, _, cluster = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    run = LintRun.for_object(config, _gpu_pod("a", 4), cluster, Routes.of(config))
    assert run.resolver.pod_shapes is None


def test_the_memo_is_bounded_and_a_new_snapshot_starts_empty(tmp_path):
    config, snapshot, cluster = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    object.__setattr__(snapshot, "_shapes", PodShapes(12))  # SHAPES, made small: the same LRU
    for gpus in range(1, 9):  # 8 shapes, several verdicts each: more than are kept
        pod = _gpu_pod(f"p{gpus}", gpus)
        assert snapshot.review(pod).findings == _afresh(config, pod, cluster)
    assert len(snapshot._shapes) == 12
    again = ReviewSnapshot.build(config, cluster)
    assert len(again._shapes) == 0 and again._shapes is not snapshot._shapes and again._shapes._kept.size == SHAPES


def test_a_spec_too_long_to_keep_is_judged_afresh_and_not_kept(tmp_path):
    config, snapshot, cluster = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    pod = _gpu_pod("long", 4)
    pod["spec"]["containers"][0]["env"] = [{"name": "BLOB", "value": "x" * MAX_SHAPE_CHARS}]
    assert snapshot.review(pod).findings == _afresh(config, pod, cluster)
    assert len(snapshot._shapes) == 0


def test_a_full_memo_holds_a_bounded_amount_of_memory(tmp_path):
    """Verdicts on pods whose specs are at the length limit: what the memo holds of each shape, measured as what
    dropping it frees (docs/performance.md: SHAPES of them bound the memo); the scheduler's own memos are the
    snapshot's either way."""
    _, snapshot, _ = _snapshot(tmp_path, {"nodes.yaml": GPU_NODES})
    shapes = 40
    tracemalloc.start()
    try:
        for index in range(shapes):
            pod = _gpu_pod(f"p{index}", 1 + index % 8)
            pod["spec"]["containers"][0]["env"] = [{"name": "X", "value": f"{index}".ljust(MAX_SHAPE_CHARS - 400, "x")}]
            snapshot.review(pod)
        kept = len(snapshot._shapes)
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        object.__setattr__(snapshot, "_shapes", PodShapes())
        gc.collect()
        held = full - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept >= 2 * shapes  # each shape's GPU requirements, sharing and scheduling verdicts
    # a shape's key (its spec's text, shared by its verdicts) and its verdicts: under 16 KiB and 8 KiB
    print(f"memo: {kept} verdicts, {held / shapes:.0f} bytes a shape")
    assert 0 < held / shapes < MAX_SHAPE_CHARS + 8 * 1024, held / shapes
