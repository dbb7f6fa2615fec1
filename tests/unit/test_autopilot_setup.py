"""GKE Autopilot known from the repository's own files, and Autopilot's CPU and memory maxima beside a GPU (#29, #32).

Held-out misses (tests/heldout3 substratus8, stackdriver1079; tests/heldout10 argo13073) were Autopilot refusals
that nothing in the linted files placed on Autopilot. A repository that deploys to GKE often creates the cluster
too: Terraform's google_container_cluster with enable_autopilot = true (GoogleCloudPlatform/accelerated-platforms
container_cluster_ap), the terraform-google-modules beta-autopilot-* modules (GoogleCloudPlatform/ai-on-gke
modules/gke-autopilot-*), `gcloud container clusters create-auto` in a guide, Config Connector's ContainerCluster.
Such a word places the workloads nearest to it on Autopilot, as a warning; a Standard cluster as near, a mode left
to a variable, or an inventory that shows the cluster says nothing. Written the way those repositories write them;
no file of theirs is copied."""

from __future__ import annotations

import subprocess
import textwrap

import pytest
from conftest import run_cli
from support.manifests import vllm_deployment
from support.spies import calls_by_process
from support.trees import write_tree

from gpulint.lint.inputs.autopilot_setup import words_of_file, words_of_tree

VLLM = vllm_deployment(
    "metadata: {name: mistral-7b-instruct-vllm, namespace: default}",
    """
    image: substratusai/vllm:v0.2.1
    resources:
      limits:
        nvidia.com/gpu: 1
    """,
)
SELECTED = VLLM.replace(
    "    spec:\n      containers:",
    "    spec:\n      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:",
)

A100_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: gait-train, namespace: training}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-tesla-a100
      containers:
      - name: train
        image: us-docker.pkg.dev/example/gait/train:2.1
        resources:
          requests: {cpu: "CPU", memory: MEMORY, nvidia.com/gpu: "GPUS"}
          limits: {cpu: "CPU", memory: MEMORY, nvidia.com/gpu: "GPUS"}
"""

AUTOPILOT_TF = """
resource "google_container_cluster" "ml" {
  name     = "ml-autopilot"
  location = var.region

  enable_autopilot = true
  release_channel {
    channel = "REGULAR"
  }
}
"""
STANDARD_TF = """
resource "google_container_cluster" "ml" {
  name                     = "ml-standard"
  location                 = var.region
  remove_default_node_pool = true
  initial_node_count       = 1
}

resource "google_container_node_pool" "gpu" {
  name    = "l4"
  cluster = google_container_cluster.ml.id
  node_config {
    machine_type = "g2-standard-8"
  }
}
"""
MODULE_TF = """
module "gke" {
  source  = "terraform-google-modules/kubernetes-engine/google//modules/beta-autopilot-private-cluster"
  version = "~> 28.0"
  project_id = var.project_id
  name       = var.cluster_name
}
"""
CONFIG_CONNECTOR = """
apiVersion: container.cnrm.cloud.google.com/v1beta1
kind: ContainerCluster
metadata:
  name: ml-autopilot
spec:
  location: us-central1
  enableAutopilot: true
"""
GUIDE = """
# Serve Mistral on GKE

Create an Autopilot cluster:

```bash
gcloud container clusters create-auto ml-autopilot \\
    --region us-central1 --release-channel rapid
```
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def autopilot_findings(*args: str) -> list[tuple[str, int, str, str]]:
    """(path, line, severity, the note naming where the cluster is said to be Autopilot) of each finding."""
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return [
        (f["path"], f["line"], f["severity"], _said(f["notes"]))
        for f in run.json()["findings"]
        if f["rule"] == "autopilot-rejected"
    ]


def _said(notes: list[str]) -> str:
    """Where the finding's notes say the cluster is Autopilot: the file:line, or the configuration."""
    said = next(note for note in notes if "creates a GKE Autopilot cluster" in note or "gke-autopilot" in note)
    return said.split(" ")[0] if "creates" in said else "configuration"


def messages(*args: str) -> list[str]:
    """The findings' messages whole (the JSON output splits the text at its first colon: message, notes[0])."""
    run = run_cli("check", *args, "--format", "json")
    findings = run.json()["findings"]
    return [f"{f['message']}: {f['notes'][0]}" for f in findings if f["rule"] == "autopilot-rejected"]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("infra/main.tf", AUTOPILOT_TF, "infra/main.tf:5"),
        ("terraform/gke.tf", MODULE_TF, "terraform/gke.tf:1"),
        ("config-connector/cluster.yaml", CONFIG_CONNECTOR, "config-connector/cluster.yaml:2"),
        ("README.md", GUIDE, "README.md:6"),
        (
            "Makefile",
            "cluster:\n\t@gcloud container clusters create-auto $(CLUSTER) --region $(REGION)\n",
            "Makefile:2",
        ),
        (
            ".github/workflows/e2e.yaml",
            "jobs:\n  e2e:\n    steps:\n    - run: gcloud beta container clusters create-auto e2e\n",
            ".github/workflows/e2e.yaml:4",
        ),
    ],
    ids=["terraform", "module", "config-connector", "guide", "makefile", "workflow"],
)
def test_a_cluster_the_repository_creates_as_autopilot_places_its_gpu_pods_there(repo, name, text, where):
    write_tree(repo, {"k8s/vllm.yaml": VLLM, name: text})
    assert autopilot_findings(".") == [("k8s/vllm.yaml", 16, "warning", where)]
    assert autopilot_findings("k8s/vllm.yaml") == [("k8s/vllm.yaml", 16, "warning", where)]  # as pre-commit names it


def test_a_pod_that_selects_the_gpu_type_is_admitted(repo):
    write_tree(repo, {"k8s/vllm.yaml": SELECTED, "infra/main.tf": AUTOPILOT_TF})
    assert autopilot_findings(".") == []


@pytest.mark.parametrize(
    "files",
    [
        {"infra/main.tf": STANDARD_TF},
        {"infra/main.tf": AUTOPILOT_TF.replace("  enable_autopilot = true", "  # enable_autopilot = true")},
        {
            "infra/main.tf": AUTOPILOT_TF.replace("/*", "").replace(
                "  enable_autopilot = true", "  /* enable_autopilot = true */"
            )
        },
        {"infra/main.tf": AUTOPILOT_TF.replace("enable_autopilot = true", "enable_autopilot = var.autopilot")},
        {"infra/main.tf": AUTOPILOT_TF.replace("enable_autopilot = true", "enable_autopilot = false")},
        # an Autopilot and a Standard cluster as near the workload: which one it deploys to is not known
        {"infra/autopilot/main.tf": AUTOPILOT_TF, "infra/standard/main.tf": STANDARD_TF},
        {"README.md": GUIDE, "docs/standard.md": "```\ngcloud container clusters create ml --num-nodes 1\n```\n"},
        # the command in prose or commented out, never run
        {"docs/modes.md": "Autopilot clusters come from `gcloud container clusters create-auto`, not create.\n"},
        {"setup.sh": "#!/bin/bash\n# gcloud container clusters create-auto ml --region us-central1\n"},
        {
            "config-connector/cluster.yaml": CONFIG_CONNECTOR.replace(
                "enableAutopilot: true", "enableAutopilot: {{ .Values.autopilot }}"
            )
        },
        {"terraform/gke.tf": MODULE_TF.replace("beta-autopilot-private-cluster", "beta-private-cluster")},
        # the configuration says the linted files deploy elsewhere
        {"infra/main.tf": AUTOPILOT_TF, ".gpulint.yaml": "gke-autopilot: false\n"},
    ],
    ids=[
        "standard",
        "commented",
        "block-comment",
        "variable",
        "false",
        "both-as-near",
        "guides-of-both",
        "prose",
        "commented-command",
        "templated",
        "standard-module",
        "configured-false",
    ],
)
def test_no_autopilot_word_the_workload_can_be_held_to_says_nothing(repo, files):
    write_tree(repo, {"k8s/vllm.yaml": VLLM, **files})
    assert autopilot_findings(".") == []


def test_the_nearest_cluster_is_the_workloads_and_a_farther_one_is_not(repo):
    write_tree(
        repo,
        {
            "tutorials/autopilot/terraform/main.tf": AUTOPILOT_TF,
            "tutorials/autopilot/k8s/vllm.yaml": VLLM,
            "tutorials/standard/terraform/main.tf": STANDARD_TF,
            "tutorials/standard/k8s/vllm.yaml": VLLM,
        },
    )
    where = "tutorials/autopilot/terraform/main.tf:5"
    assert autopilot_findings(".") == [("tutorials/autopilot/k8s/vllm.yaml", 16, "warning", where)]


def test_an_inventory_that_shows_the_cluster_decides_over_the_repositorys_files(repo):
    node = """
    apiVersion: v1
    kind: Node
    metadata:
      name: gke-ml-standard-l4-8c1a2b3c-x7k2
      labels: {cloud.google.com/gke-nodepool: l4, cloud.google.com/gke-accelerator: nvidia-l4}
    status:
      allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
    """
    write_tree(repo, {"k8s/vllm.yaml": VLLM, "infra/main.tf": AUTOPILOT_TF, "inventory/nodes.yaml": node})
    assert autopilot_findings("k8s", "--inventory", "inventory") == []


def test_the_configuration_may_declare_autopilot(repo):
    adapter = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: custom-metrics-stackdriver-adapter, namespace: custom-metrics}
    spec:
      selector:
        matchLabels: {run: adapter}
      template:
        metadata:
          labels: {run: adapter}
        spec:
          tolerations:
          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
          containers:
          - name: pod-custom-metrics-stackdriver-adapter
            image: gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.15.2-gke.1
    """
    write_tree(repo, {"k8s/adapter.yaml": adapter, ".gpulint.yaml": "gke-autopilot: true\n"})
    assert autopilot_findings(".") == [("k8s/adapter.yaml", 12, "error", "configuration")]
    write_tree(repo, {".gpulint.yaml": "gke-autopilot: auto\n"})
    assert autopilot_findings(".") == []


def a100_job(cpu: str, memory: str, gpus: str = "1") -> str:
    return A100_JOB.replace("CPU", cpu).replace("MEMORY", memory).replace("GPUS", gpus)


def test_cpu_and_memory_over_autopilots_maxima_beside_one_a100_are_refused(repo):
    write_tree(repo, {"k8s/train.yaml": a100_job("16", "96Gi"), "infra/main.tf": AUTOPILOT_TF})
    assert messages(".") == [
        "GKE Warden rejected the request: [denied by autogke-pod-limit-constraints] Total cpu requested by "
        "containers for workload 'gait-train' is higher than the Autopilot maximum of '11'.",
        "GKE Warden rejected the request: [denied by autogke-pod-limit-constraints] Total memory requested by "
        "containers for workload 'gait-train' is higher than the Autopilot maximum of '74Gi'.",
    ]
    assert {f[2] for f in autopilot_findings(".")} == {"warning"}


@pytest.mark.parametrize(
    ("cpu", "memory", "gpus"),
    [
        ("11", "74Gi", "1"),  # at the maxima
        ("10500m", "70Gi", "1"),
        ("16", "96Gi", "2"),  # two A100s: no row GKE printed, no verdict
    ],
)
def test_within_the_maxima_or_without_a_cited_row_nothing_is_said(repo, cpu, memory, gpus):
    write_tree(repo, {"k8s/train.yaml": a100_job(cpu, memory, gpus), "infra/main.tf": AUTOPILOT_TF})
    assert autopilot_findings(".") == []


def test_another_gpu_type_has_no_cited_row(repo):
    job = a100_job("40", "160Gi").replace("nvidia-tesla-a100", "nvidia-l4")
    write_tree(repo, {"k8s/train.yaml": job, "infra/main.tf": AUTOPILOT_TF})
    assert autopilot_findings(".") == []


def test_an_init_container_over_the_maximum_is_refused_as_warden_words_it(repo):
    job = a100_job("8", "64Gi").replace(
        "      containers:\n",
        "      initContainers:\n      - name: fetch\n        image: busybox\n"
        "        resources: {requests: {cpu: '12', memory: 8Gi}}\n      containers:\n",
    )
    write_tree(repo, {"k8s/train.yaml": job, "infra/main.tf": AUTOPILOT_TF})
    assert messages(".") == [
        "GKE Warden rejected the request: [denied by autogke-pod-limit-constraints] Max cpu requested by "
        "init containers for workload 'gait-train' is higher than the Autopilot maximum of '11'."
    ]


@pytest.mark.parametrize(
    "variant",
    [
        "heldout3/substratus8-autopilot-no-accelerator-selector",
        "heldout3/stackdriver1079-autopilot-gpu-toleration-no-request",
        "heldout10/argo13073-autopilot-a100-cpu-over-max",
    ],
)
def test_the_heldout_autopilot_twins_are_told_apart_beside_the_repositorys_autopilot_cluster(repo, variant):
    from pathlib import Path

    twins = Path(__file__).parents[1] / variant
    write_tree(repo, {"infra/main.tf": AUTOPILOT_TF})
    for twin in ("broken", "fixed"):
        (repo / f"{twin}.yaml").write_bytes((twins / f"{twin}.yaml").read_bytes())
    assert {f[0] for f in autopilot_findings(".")} == {"broken.yaml"}


def test_words_name_the_line_that_says_the_mode():
    words = words_of_file("main.tf", textwrap.dedent(AUTOPILOT_TF).lstrip() + "\n" + textwrap.dedent(STANDARD_TF))
    assert [(w.line, w.autopilot, w.says) for w in words] == [
        (5, True, "enable_autopilot = true"),
        (12, False, 'resource "google_container_cluster"'),
        (19, False, 'resource "google_container_node_pool"'),
    ]
    crossplane = (
        "apiVersion: container.gcp.upbound.io/v1beta2\nkind: Cluster\nmetadata: {name: ml}\n"
        "spec:\n  forProvider:\n    enableAutopilot: true\n---\n"
        "apiVersion: container.gcp.upbound.io/v1beta2\nkind: NodePool\nmetadata: {name: l4}\n"
    )
    assert [(w.line, w.autopilot) for w in words_of_file("crossplane/gke.yaml", crossplane)] == [(2, True), (9, False)]


def test_the_walk_skips_vendored_and_hidden_trees(repo):
    write_tree(
        repo,
        {
            "vendor/modules/gke/main.tf": AUTOPILOT_TF,
            ".terraform/modules/gke/main.tf": AUTOPILOT_TF,
            "infra/main.tf": STANDARD_TF,
        },
    )
    assert [w.where for w in words_of_tree(str(repo))] == ["infra/main.tf:1", "infra/main.tf:8"]


def test_a_pre_commit_run_reads_again_only_the_setup_files_that_changed(repo, monkeypatch):
    """Inside a repository the index keeps its cache for (pre-commit), each setup file's cluster words are kept
    beside it by the index's test (size, mtime, inode): a warm run reads no unchanged file (a repository of 10,000
    manifests was read up to 5,000 files deep on every run), a changed file says what it says now, and a cache whose
    entries are not as gpulint writes them is dropped whole. A directory walked without the index writes none."""
    import json

    from gpulint.lint.inputs import setup_walk

    service = "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\nspec: {ports: [{port: 8000}]}\n"
    write_tree(repo, {"infra/main.tf": AUTOPILOT_TF, "docs/guide.md": "# Serve\n", "k8s/vllm.yaml": VLLM})
    write_tree(repo, {"k8s/service.yaml": service})
    assert len(autopilot_findings(".")) == 1
    assert not (repo / ".gpulint_cache").exists()
    read: list[str] = []
    text_of = setup_walk.file_text
    monkeypatch.setattr(setup_walk, "file_text", lambda path, *rest: read.append(path) or text_of(path, *rest))
    first = autopilot_findings("k8s/vllm.yaml")
    assert len(first) == 1 and "infra/main.tf:5" in first[0][3]
    assert sorted(read) == ["docs/guide.md", "infra/main.tf", "k8s/service.yaml", "k8s/vllm.yaml"]
    cache = repo / ".gpulint_cache" / "setup-autopilot-v1.json"
    assert json.loads(cache.read_text())["files"]["infra/main.tf"][3] == [[5, True, "enable_autopilot = true"]]
    read.clear()
    assert autopilot_findings("k8s/vllm.yaml") == first
    assert read == []
    (repo / "infra/main.tf").write_text(STANDARD_TF, encoding="utf-8")
    assert autopilot_findings("k8s/vllm.yaml") == []
    assert read == ["infra/main.tf"]
    document = json.loads(cache.read_text())
    document["files"]["infra/main.tf"][3] = [[5, 1, "enable_autopilot = true"]]  # 1 is no mode
    cache.write_text(json.dumps(document), encoding="utf-8")
    read.clear()
    assert autopilot_findings("k8s/vllm.yaml") == []
    assert sorted(read) == ["docs/guide.md", "infra/main.tf", "k8s/service.yaml", "k8s/vllm.yaml"]


def test_one_walk_by_the_run_whether_it_checks_alone_or_forks_its_workers(repo, monkeypatch):
    """The repository is walked once, by the run, before any worker forks (each would walk it again otherwise);
    the findings are the same with 1, 2 or 3 workers, kept or streamed."""
    import os

    import gpulint.lint.run
    from gpulint.lint.inputs import autopilot_setup

    write_tree(repo, {"infra/main.tf": AUTOPILOT_TF, **{f"k8s/vllm-{n}.yaml": VLLM for n in range(3)}})
    taken = calls_by_process(monkeypatch, autopilot_setup, "words_of_tree", repo.parent / f"{repo.name}-walks")
    alone = run_cli("check", ".", "--format", "json", "--jobs", "1")
    assert len([f for f in alone.json()["findings"] if f["rule"] == "autopilot-rejected"]) == 3
    assert taken() == [str(os.getpid())]
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    for streamed in (False, True):
        if streamed:
            monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
        for jobs in ("2", "3"):
            run = run_cli("check", ".", "--format", "json", "--jobs", jobs)
            assert (run.stdout, run.exit_code) == (alone.stdout, alone.exit_code), (streamed, jobs)
            assert taken() == [str(os.getpid())], (streamed, jobs)


def test_a_run_without_a_gpu_pod_walks_nothing(repo, monkeypatch):
    from gpulint.lint.inputs import autopilot_setup

    cpu = VLLM.replace("            nvidia.com/gpu: 1\n", "            cpu: 1\n")
    write_tree(repo, {"infra/main.tf": AUTOPILOT_TF, "k8s/web.yaml": cpu})
    read: list[str] = []
    monkeypatch.setattr(autopilot_setup, "words_of_tree", lambda root, *rest: read.append(root) or [])
    assert autopilot_findings(".") == []
    assert read == []


@pytest.mark.parametrize(("said", "errors"), [("true", 3), ("false", 0)])
def test_a_configured_gke_autopilot_walks_nothing_before_the_workers_fork(repo, monkeypatch, said, errors):
    """The configuration's word decides: the repository's clusters are never read, by the run or its workers."""
    import gpulint.lint.run
    from gpulint.lint.inputs import autopilot_setup

    files = {f"k8s/vllm-{n}.yaml": VLLM for n in range(3)}
    write_tree(repo, {"infra/main.tf": AUTOPILOT_TF, ".gpulint.yaml": f"gke-autopilot: {said}\n", **files})
    taken = calls_by_process(monkeypatch, autopilot_setup, "words_of_tree", repo.parent / f"{repo.name}-walks")
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    run = run_cli("check", ".", "--format", "json", "--jobs", "2")
    assert run.exit_code in (0, 1), run.stderr
    assert len([f for f in run.json()["findings"] if f["rule"] == "autopilot-rejected"]) == errors
    assert taken() == []


def test_a_gke_autopilot_value_that_is_no_switch_is_a_usage_error_at_its_place(repo):
    write_tree(repo, {"k8s/vllm.yaml": VLLM, ".gpulint.yaml": "select: [autopilot-rejected]\ngke-autopilot: maybe\n"})
    run = run_cli("check", ".")
    assert run.exit_code == 2
    assert ".gpulint.yaml:2:16: 'gke-autopilot' must be true, false or auto, not 'maybe'" in run.stderr
