"""A gang in one zone, on the nodes GKE node pools can add: over-tight-topology's warning (one zone alone can
host it) and gang-unsatisfiable's error (no zone can) agree with `explain`'s gang step, which reads the same
LoneDomain and pool verdict (issue #30; before, explain was silent on the pools path). The GKE L4 pool of
tests/data/elastic/gke (g2-standard-24, 2 GPUs a node, at most 2 nodes, us-central1-a) and its copy in
us-central1-b with at most ``max_b`` nodes; a Volcano Job of 2-GPU workers in one zone (Kueue's
podset-required-topology, as a TAS workload writes it)."""

from __future__ import annotations

import json

import pytest
from conftest import DATA, run_cli

ZONE = "topology.kubernetes.io/zone"
JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: llm, namespace: ml}
spec:
  minAvailable: WORKERS
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: WORKERS
    template:
      metadata:
        annotations: {kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/zone}
      spec:
        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
        containers:
        - name: w
          image: registry.example.com/llm:1.0
          resources: {limits: {nvidia.com/gpu: 2}}
"""
LONE = f"  only {ZONE}=us-central1-a can host the whole gang (2 domains exist); any failure there blocks it"
POOLS_NOTE = f"  the {ZONE} domains include those its node pools can add nodes in"


def _pools(tmp_path, max_b: int) -> str:
    """The cluster's description (`gcloud container clusters describe`: node auto-provisioning off, so the listed
    pools are every node it can add) with the L4 pool and its copy in us-central1-b."""
    cluster = json.loads((DATA / "elastic" / "gke" / "cluster.json").read_text())
    (pool_a,) = [pool for pool in cluster["nodePools"] if pool["name"] == "l4-pool"]
    pool_b = json.loads(json.dumps(pool_a)) | {"name": "l4-pool-b", "locations": ["us-central1-b"]}
    pool_b["autoscaling"]["maxNodeCount"] = max_b
    inventory = tmp_path / f"pools-{max_b}"
    inventory.mkdir(exist_ok=True)
    (inventory / "cluster.json").write_text(json.dumps(cluster | {"nodePools": [pool_a, pool_b]}))
    return str(inventory)


def _run(write, tmp_path, workers: int, max_b: int) -> tuple[list[dict], dict]:
    path = write(f"repo/job-{workers}.yaml", JOB.replace("WORKERS", str(workers)))
    inventory = _pools(tmp_path, max_b)
    checked = run_cli("check", str(path), "--inventory", inventory, "--format", "json")
    explained = run_cli("explain", str(path), "--inventory", inventory, "--format", "json")
    assert explained.exit_code == checked.exit_code, explained.stderr  # 1: an error among the findings
    (explanation,) = json.loads(explained.stdout)["explanations"]
    (step,) = [step for step in explanation["steps"] if step["title"] == "Gang and topology"]
    rules = ("over-tight-topology", "gang-unsatisfiable")
    return [f for f in checked.json()["findings"] if f["rule"] in rules], step


@pytest.mark.parametrize("max_b", [0, 1, 2, 3])
@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_the_gang_step_says_the_lone_zone_where_check_warns_and_fails_where_it_errs(write, tmp_path, workers, max_b):
    findings, step = _run(write, tmp_path, workers, max_b)
    rules = {f["rule"] for f in findings}
    assert ("gang-unsatisfiable" in rules) == (step["status"] == "FAIL"), (findings, step)
    warned = [f for f in findings if f["rule"] == "over-tight-topology"]
    said = [line for line in step["lines"] if "can host the whole gang" in line]
    assert [f["message"] for f in warned] == [line.strip() for line in said], (findings, step)
    if warned and "gang-unsatisfiable" not in rules:
        assert step["status"] == "info"


def test_one_zone_of_two_holding_both_workers_is_the_warning_and_the_step_says_it(write, tmp_path):
    (finding,), step = _run(write, tmp_path, workers=2, max_b=1)
    assert finding["rule"] == "over-tight-topology"
    assert finding["notes"] == [POOLS_NOTE.strip()]
    assert step["status"] == "info"
    assert step["lines"][-2:] == [LONE, POOLS_NOTE]


def test_both_zones_holding_the_gang_is_clean_in_both(write, tmp_path):
    findings, step = _run(write, tmp_path, workers=2, max_b=2)
    assert findings == []
    assert step["status"] == "ok"
    assert not any("can host the whole gang" in line for line in step["lines"])
