"""Required pod affinity is judged alike however a run reads the other files (lint/verdicts/pod_affinity.py).

The pods a pod may join are every running pod template of the files applied with it. One process holds every
file whole; a run split over workers (``--jobs``) and a streamed one (over KEPT_SOURCE_BYTES) carry the templates
of the objects that do not cross files as outlines (lint/world/pod_outlines.py); a pre-commit run of one file
reads the others through the repository index, which keeps their outlines per file (lint/inputs/repo_index.py).
Each tree below is checked every way, and every way must give the one process's findings: a peer in another
file, in another namespace (with and without a namespaceSelector), and a peer whose label is still to be filled
in (no verdict).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from support.index_cache import outlines_text, read_index, write_index
from support.inventories import TWO_CPU_ONE_GPU

import gpulint.lint.run
from gpulint.lint.inputs.repo_index import CACHE_DIR, CACHE_FILE, CACHE_FORMAT

# loft-sh/devpod-provider-kubernetes#63, as a tree of files: a GPU pod that follows a helper pod
# by required pod affinity; the helper's replicas run where their own tolerations and node selector let them.
# A Deployment (it does not cross files: only its outline reaches another file's checks), on one node.
HELPER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: helper}}}}
  template:
    metadata: {{labels: {labels}}}
    spec:
      nodeSelector: {{kubernetes.io/hostname: {node}}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
      - {{name: cache, image: redis:7.2, resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}}}
"""
TRAINER = """\
apiVersion: v1
kind: Pod
metadata: {{name: trainer, namespace: ml, labels: {{app: trainer}}}}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{app: {selects}}}}}
        topologyKey: kubernetes.io/hostname{namespaces}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
  containers:
  - {{name: train, image: registry.example.com/train:1.0, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""
ANY_NAMESPACE = "\n        namespaceSelector: {}"
BLOCKED = "this pod cannot be scheduled beside the pods its required pod affinity (kubernetes.io/hostname) matches"


def helper(node: str, namespace: str = "ml", labels: str = "{app: helper}", name: str = "helper") -> str:
    return HELPER.format(name=name, namespace=namespace, labels=labels, node=node)


def trainer(selects: str = "helper", namespaces: str = "") -> str:
    return TRAINER.format(selects=selects, namespaces=namespaces)


# name -> (files besides trainer.yaml, the trainer, the one process's pod-affinity messages)
TREES: dict[str, tuple[dict[str, str], str, list[str]]] = {
    "peer in another file, on the GPU node": ({"helper.yaml": helper("gpu-1")}, trainer(), []),
    "peer in another file, off the GPU node": ({"helper.yaml": helper("cpu-1")}, trainer(), [BLOCKED]),
    # the term's namespaceSelector reaches the helper in its own namespace
    "namespaceSelector, peer in another namespace on the GPU node": (
        {"cache/helper.yaml": helper("gpu-1", namespace="cache")},
        trainer(namespaces=ANY_NAMESPACE),
        [],
    ),
    "namespaceSelector, peer in another namespace off the GPU node": (
        {"cache/helper.yaml": helper("cpu-1", namespace="cache")},
        trainer(namespaces=ANY_NAMESPACE),
        [BLOCKED],
    ),
    # without one the term reads the trainer's namespace only: the replica on gpu-1 in another does not count
    "no namespaceSelector, the other namespace's peer on the GPU node": (
        {"cache/helper.yaml": helper("gpu-1", namespace="cache"), "helper.yaml": helper("cpu-1")},
        trainer(),
        [BLOCKED],
    ),
    # a label still to be filled in (envsubst): the replica on gpu-1 may be a helper once it is; no verdict
    "a peer's label still to be filled in": (
        {
            "helper.yaml": helper("cpu-1"),
            "gpu-helper.yaml": helper("gpu-1", labels='{app: "${HELPER_APP}"}', name="gpu-helper"),
        },
        trainer(),
        [],
    ),
    # the trap: a label written in full that the selector requires otherwise cannot match, whatever is filled in
    "a placeholder beside a label that rules the peer out": (
        {
            "helper.yaml": helper("cpu-1"),
            "gpu-helper.yaml": helper("gpu-1", labels='{app: other, version: "${VERSION}"}', name="gpu-helper"),
        },
        trainer(),
        [BLOCKED],
    ),
    "a selector still to be filled in": ({"helper.yaml": helper("cpu-1")}, trainer(selects='"${APP}"'), []),
}


def write_tree(root: Path, files: dict[str, str], trainer_text: str) -> None:
    for name, text in {**files, "trainer.yaml": trainer_text}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def affinity_findings(*args: str) -> list[tuple[str, int, int, str]]:
    """The pod-affinity findings of trainer.yaml: where, and what they say (message and notes)."""
    run = run_cli("check", *args, "--format", "json", "--select", "gpu-unschedulable")
    assert run.exit_code in (0, 1), run.stderr
    return [
        (os.path.basename(f["path"]), f["line"], f["column"], f["message"] + "\n" + "\n".join(f.get("notes", [])))
        for f in json.loads(run.stdout)["findings"]
        if "pod affinity" in f["message"] and f["path"].endswith("trainer.yaml")
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TREES))
def test_every_way_of_reading_the_tree_judges_pod_affinity_alike(name, tmp_path, monkeypatch):
    files, trainer_text, expected = TREES[name]
    tree = tmp_path / "tree"
    write_tree(tree, files, trainer_text)
    inventory = tmp_path / "nodes.yaml"
    inventory.write_text(TWO_CPU_ONE_GPU, encoding="utf-8")
    args = (str(tree), "--inventory", str(inventory))
    single = affinity_findings(*args, "--jobs", "1")
    assert [message.split("\n")[0] for *_, message in single] == expected
    runs = {}
    with monkeypatch.context() as patch:
        patch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
        runs["--jobs 2"] = affinity_findings(*args, "--jobs", "2")
        patch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)  # one parse at a time, as over 6 MiB
        runs["streamed"] = affinity_findings(*args, "--jobs", "1")
        runs["streamed --jobs 2"] = affinity_findings(*args, "--jobs", "2")
    # pre-commit on the trainer's file: the others through the repository index, cold and then from its cache
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    one_file = (str(tree / "trainer.yaml"), "--inventory", str(inventory))
    runs["index, cold"] = affinity_findings(*one_file)
    assert (tree / CACHE_DIR / CACHE_FILE).is_file()
    runs["index, warm"] = affinity_findings(*one_file)
    assert runs == dict.fromkeys(runs, single)


def test_without_outlines_the_index_says_nothing(tmp_path, monkeypatch):
    """The index's outlines are what the pre-commit verdict stands on: withheld, it abstains (the trap)."""
    files, trainer_text, expected = TREES["peer in another file, off the GPU node"]
    write_tree(tmp_path / "tree", files, trainer_text)
    (tmp_path / "nodes.yaml").write_text(TWO_CPU_ONE_GPU, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path / "tree")], check=True)
    one_file = (str(tmp_path / "tree" / "trainer.yaml"), "--inventory", str(tmp_path / "nodes.yaml"))
    assert [message.split("\n")[0] for *_, message in affinity_findings(*one_file)] == expected == [BLOCKED]
    explained = run_cli("explain", *one_file)  # explain reads the repository as check does: the same cause
    assert "Inter-pod affinity: FAIL" in explained.stdout and "Deployment/ml/helper, which can run on cpu-1" in (
        explained.stdout
    )
    monkeypatch.setattr("gpulint.cli.check.names_pod_affinity", lambda sources: False)
    assert affinity_findings(*one_file) == []
    assert "Inter-pod affinity: FAIL" not in run_cli("explain", *one_file).stdout


def test_a_cache_written_by_the_previous_format_is_dropped(tmp_path):
    """A format-5 cache (no outlines) whose stat signatures match every file is not read: each file is parsed
    again and the run judges as a cold one does."""
    files, trainer_text, expected = TREES["peer in another file, off the GPU node"]
    tree = tmp_path / "tree"
    write_tree(tree, files, trainer_text)
    (tmp_path / "nodes.yaml").write_text(TWO_CPU_ONE_GPU, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    one_file = (str(tree / "trainer.yaml"), "--inventory", str(tmp_path / "nodes.yaml"))
    cold = affinity_findings(*one_file)
    cache = tree / CACHE_DIR / CACHE_FILE
    written, after = read_index(cache)
    assert written["format"] == CACHE_FORMAT == 8 and json.loads(outlines_text(cache, "helper.yaml"))
    # as format 6 wrote it: the same stat and objects, the outlines' text within the table, on one line
    files = {
        key: {**entry, "outlines": after[slice(*entry["outlines"])].decode()} for key, entry in written["files"].items()
    }
    cache.write_text(json.dumps({**written, "format": 6, "files": files}))
    assert affinity_findings(*one_file) == cold and [m.split("\n")[0] for *_, m in cold] == expected
    assert read_index(cache)[0]["format"] == CACHE_FORMAT  # rewritten in this format


@pytest.mark.parametrize("written", ["not json", '[{"name": 1, "kind": "Pod"}]', '{"name": "x"}', "[" * 100_000])
def test_outlines_not_as_written_send_their_file_to_the_index_again(tmp_path, written):
    """A cached file's outlines are read only by a run that carries them, and checked then: when they are off,
    that file is parsed again (and its entry rewritten), and the run judges as a cold one does."""
    files, trainer_text, expected = TREES["peer in another file, off the GPU node"]
    tree = tmp_path / "tree"
    write_tree(tree, files, trainer_text)
    (tmp_path / "nodes.yaml").write_text(TWO_CPU_ONE_GPU, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    one_file = (str(tree / "trainer.yaml"), "--inventory", str(tmp_path / "nodes.yaml"))
    cold = affinity_findings(*one_file)
    cache = tree / CACHE_DIR / CACHE_FILE
    document, after = read_index(cache)
    good = outlines_text(cache, "helper.yaml")
    document["files"]["helper.yaml"]["outlines"] = [len(after), len(after) + len(written.encode())]
    write_index(cache, document, after + written.encode())
    assert affinity_findings(*one_file) == cold and [m.split("\n")[0] for *_, m in cold] == expected
    assert outlines_text(cache, "helper.yaml") == good


@pytest.mark.slow
def test_pre_commit_judges_pod_affinity_with_the_peer_in_an_unchanged_file(tmp_path):
    """The real pre-commit: only the changed trainer is passed; the helper it follows is in a file that did not
    change, off the GPU node, then moved onto it."""
    if not (REPO / ".pre-commit-hooks.yaml").is_file() or not (REPO / ".git").exists():
        raise AssertionError("run the tests from a git checkout of gpulint")
    files, trainer_text, _ = TREES["peer in another file, off the GPU node"]
    work = tmp_path / "gitops"
    write_tree(work, files, trainer_text.replace("train:1.0", "train:0.9"))
    (work / "cluster").mkdir()
    (work / "cluster" / "nodes.yaml").write_text(TWO_CPU_ONE_GPU, encoding="utf-8")  # the inventory, not a manifest
    (work / ".gpulint.yaml").write_text("inventory: [cluster/nodes.yaml]\nexclude: [cluster]\n", encoding="utf-8")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], cwd=work, check=True)
    (work / "trainer.yaml").write_text(trainer_text, encoding="utf-8")
    subprocess.run([*git, "add", "trainer.yaml"], cwd=work, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or "pre-commit"

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run(
            [pre_commit, "try-repo", str(REPO), "gpulint", "--verbose", "--files", "trainer.yaml"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    blocked = try_repo()
    assert f"trainer.yaml:8:9: warning[gpu-unschedulable] Pod/ml/trainer: {BLOCKED}" in blocked.stdout, (
        blocked.stdout + blocked.stderr
    )
    assert "Deployment/ml/helper can run on cpu-1" in blocked.stdout
    (work / "helper.yaml").write_text(helper("gpu-1"), encoding="utf-8")  # not passed: read through the index
    passing = try_repo()
    assert passing.returncode == 0 and "pod affinity" not in passing.stdout, passing.stdout + passing.stderr
