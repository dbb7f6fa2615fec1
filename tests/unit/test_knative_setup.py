"""Knative feature flags a repository's own setup turns on (issue #28: NVIDIA/nim-deploy in set B).

nim-deploy serves NIMs through KServe in Knative mode (its InferenceServices carry Knative autoscaling
annotations and no deployment mode) and pins each to a GPU type with a predictor nodeSelector; its
kserve/scripts/setup.sh runs `kubectl patch configmap config-features -n knative-serving` to enable
kubernetes.podspec-nodeselector first. The flag is on in the cluster the repository deploys to: the field is
not refused. Written the way those repositories write them; no file of theirs is copied."""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from conftest import run_cli
from support.spies import calls_by_process
from support.trees import write_tree

import gpulint.lint.run
from gpulint.lint.config import Config
from gpulint.lint.inputs import knative_setup
from gpulint.lint.inputs.knative_setup import enabled_flags
from gpulint.lint.run import LintRun

ISVC = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  annotations:
    autoscaling.knative.dev/target: "10"
  name: llama3-8b-instruct-2xh100
spec:
  predictor:
    minReplicas: 1
    model:
      modelFormat: {name: nvidia-nim-llama3-8b-instruct}
      resources:
        limits: {nvidia.com/gpu: "2"}
      runtime: nvidia-nim-llama3-8b-instruct-1.0.0
      storageUri: pvc://nvidia-nim-pvc/
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-H100-SXM4-80GB
"""

KSVC = """
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: whisper}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
      - image: ghcr.io/example/whisper:1.2
        resources:
          limits: {nvidia.com/gpu: 1}
"""

SETUP = """
#!/bin/bash
set -euo pipefail
# NIMs require enabling NodeSelectors to specify GPU types
kubectl patch configmap config-features -n knative-serving --type merge -p '{"data":{"kubernetes.podspec-nodeselector":"enabled"}}'
kubectl patch configmap config-features -n knative-serving --type merge -p '{"data":{"kubernetes.podspec-volumes-emptydir":"enabled"}}'
"""

INSTALL_GUIDE = """
# Node scheduling

Enable the flags in the KnativeServing resource before installing Knative:

```yaml
spec:
  config:
    features:
      kubernetes.podspec-nodeselector: "enabled"
      kubernetes.podspec-tolerations: "Enabled"
```
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def knative_findings(*args: str) -> list[tuple[str, int, str]]:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return [
        (f["path"], f["line"], f["severity"]) for f in run.json()["findings"] if f["rule"] == "knative-field-disallowed"
    ]


def test_a_flag_the_repositorys_setup_script_enables_is_not_refused(repo):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC, "kserve/scripts/setup.sh": SETUP})
    assert knative_findings(".") == []
    assert knative_findings("kserve/nim-models/llama3.yaml") == []  # as pre-commit names it


def test_a_knative_service_whose_flag_an_install_guide_enables_is_not_refused(repo):
    write_tree(repo, {"serving/whisper.yaml": KSVC, "docs/node-scheduling.md": INSTALL_GUIDE})
    assert knative_findings(".") == []


def test_without_the_script_the_assumed_knative_mode_still_warns(repo):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC})
    assert knative_findings(".") == [("kserve/nim-models/llama3.yaml", 16, "warning")]


@pytest.mark.parametrize(
    "script",
    [
        # another flag enabled
        "kubectl patch configmap config-features -n knative-serving -p "
        '\'{"data":{"kubernetes.podspec-volumes-emptydir":"enabled"}}\'\n',
        # the flag switched off
        "kubectl patch configmap config-features -n knative-serving -p "
        '\'{"data":{"kubernetes.podspec-nodeselector":"disabled"}}\'\n',
        # the flag named in prose, set nowhere
        "echo 'config-features: Knative refuses nodeSelector unless kubernetes.podspec-nodeselector is enabled'\n",
        # the flag set in another ConfigMap than Knative's
        'kubectl patch configmap my-settings -p \'{"data":{"kubernetes.podspec-nodeselector":"enabled"}}\'\n',
    ],
)
def test_a_script_that_does_not_enable_the_flag_keeps_the_warning(repo, script):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC, "kserve/scripts/setup.sh": script})
    assert knative_findings(".") == [("kserve/nim-models/llama3.yaml", 16, "warning")]


def test_a_linted_config_features_is_the_verdict_whatever_a_script_says(repo):
    config = """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: config-features, namespace: knative-serving}
    data:
      kubernetes.podspec-tolerations: enabled
    """
    write_tree(repo, {"serving/whisper.yaml": KSVC, "serving/config.yaml": config, "scripts/setup.sh": SETUP})
    assert knative_findings(".") == [("serving/whisper.yaml", 7, "error")]


def test_the_scan_names_the_file_and_skips_vendored_and_hidden_trees(repo):
    write_tree(
        repo,
        {
            "kserve/scripts/setup.sh": SETUP,
            "vendor/knative.dev/serving/README.md": INSTALL_GUIDE,
            ".cache/guide.md": INSTALL_GUIDE,
            ".github/workflows/ci.yaml": "jobs:\n  e2e:\n    steps:\n    - run: kubectl patch configmap/config-features "
            '--patch \'{"data":{"kubernetes.podspec-affinity":"enabled"}}\'\n',
        },
    )
    assert enabled_flags(str(repo)) == {
        "kubernetes.podspec-affinity": ".github/workflows/ci.yaml",
        "kubernetes.podspec-nodeselector": "kserve/scripts/setup.sh",
        "kubernetes.podspec-volumes-emptydir": "kserve/scripts/setup.sh",
    }


# The same predictor pinned by a toleration instead (kubernetes.podspec-tolerations)
TOLERATING = ISVC.replace("llama3-8b-instruct-2xh100", "mistral-7b-instruct-1xl4").replace(
    "    nodeSelector:\n      nvidia.com/gpu.product: NVIDIA-H100-SXM4-80GB\n",
    "    tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n",
)
TOLERATIONS_ON = (
    "kubectl patch configmap config-features -n knative-serving --type merge "
    '-p \'{"data":{"kubernetes.podspec-tolerations":"enabled"}}\'\n'
)


@pytest.mark.parametrize(
    "files",
    [
        {".gitignore": "scratch/\n", "scratch/setup.sh": SETUP},  # a local script git never sees
        {".gitignore": "*.sh\n", "kserve/scripts/setup.sh": SETUP},
        {".git/info/exclude": "/notes/\n", "notes/install.md": INSTALL_GUIDE},
        {".gpulint.yaml": "exclude: [hack]\n", "hack/setup.sh": SETUP},  # the configuration's exclude
    ],
    ids=["gitignored-folder", "gitignored-suffix", "info-exclude", "configured-exclude"],
)
def test_a_flag_enabled_only_in_an_ignored_or_excluded_file_does_not_count(repo, files):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC, **files})
    assert knative_findings(".") == [("kserve/nim-models/llama3.yaml", 16, "warning")]
    assert knative_findings("kserve/nim-models/llama3.yaml") == [("kserve/nim-models/llama3.yaml", 16, "warning")]


@pytest.mark.parametrize(
    "files",
    [
        {".gitignore": "*.sh\n!setup.sh\n", "kserve/scripts/setup.sh": SETUP},  # ignored, then taken back
        {".gitignore": "/scripts/\n", "kserve/scripts/setup.sh": SETUP},  # anchored: another folder of that name
        {".gpulint.yaml": "exclude: [nim-models/old]\n", "kserve/scripts/setup.sh": SETUP},
    ],
    ids=["negated", "anchored-elsewhere", "exclude-elsewhere"],
)
def test_trap_a_setup_file_the_ignore_rules_do_not_reach_still_counts(repo, files):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC, **files})
    assert knative_findings(".") == []
    # the linted folder alone: the setup is the work tree's, outside the folder named
    assert knative_findings("kserve/nim-models") == []


def test_a_setup_file_reached_through_a_symbolic_link_is_not_read(repo):
    write_tree(repo, {"kserve/nim-models/llama3.yaml": ISVC, "kserve/notes.txt": SETUP})
    (repo / "kserve/scripts").mkdir()
    (repo / "kserve/scripts/setup.sh").symlink_to("../notes.txt")
    assert knative_findings(".") == [("kserve/nim-models/llama3.yaml", 16, "warning")]


def test_the_setup_is_read_once_per_run_and_every_split_or_streamed_run_reads_the_same(repo, monkeypatch):
    write_tree(
        repo,
        {
            "kserve/nim-models/llama3.yaml": ISVC,
            "kserve/nim-models/mistral.yaml": TOLERATING,
            "kserve/scripts/setup.sh": SETUP,  # nodeSelector on
            ".gitignore": "scratch/\n",
            "scratch/tolerations.sh": TOLERATIONS_ON,  # tolerations on, in a file git never sees
            "serving/whisper.yaml": KSVC,
        },
    )
    walks = counted_walks(repo, monkeypatch)
    kept = run_cli("check", ".", "--format", "json", "--jobs", "1")
    assert [(f["path"], f["line"]) for f in kept.json()["findings"] if f["rule"] == "knative-field-disallowed"] == [
        ("kserve/nim-models/mistral.yaml", 16)
    ]
    assert walks() == [str(os.getpid())]
    for how, run in split_runs(monkeypatch):
        assert (run.stdout, run.exit_code) == (kept.stdout, kept.exit_code), how
        assert walks() == [str(os.getpid())], how  # one walk, by the run itself


def counted_walks(repo, monkeypatch) -> Callable[[], list[str]]:
    """The setup walks counted from whichever process walks: the function returns the walkers' process ids since
    it was last called."""
    return calls_by_process(monkeypatch, knative_setup, "enabled_flags", repo.parent / f"{repo.name}-walks")


def split_runs(monkeypatch) -> Iterator[tuple[tuple[bool, str], Any]]:
    """``gpulint check .`` in one process and split between forked workers (2 and 3), each kept or streamed."""
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    for streamed in (False, True):
        if streamed:
            monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
        for jobs in ("1", "2", "3"):
            yield (streamed, jobs), run_cli("check", ".", "--format", "json", "--jobs", jobs)


CONFIG_FEATURES = """
apiVersion: v1
kind: ConfigMap
metadata: {name: config-features, namespace: knative-serving}
data:
  kubernetes.podspec-affinity: enabled
"""


@pytest.mark.parametrize(
    ("namespace", "walked"),
    [("knative-serving", False), ("knative-serving-staging", True)],  # another namespace's is not Knative's
)
def test_a_linted_config_features_decides_every_flag_and_no_setup_file_is_read(repo, monkeypatch, namespace, walked):
    """With config-features linted, the setup scripts are never read: not by the run, nor by any forked or
    streamed worker (each would walk the tree itself if the run had not, before forking)."""
    write_tree(
        repo,
        {
            "kserve/nim-models/llama3.yaml": ISVC,
            "kserve/nim-models/mistral.yaml": TOLERATING,
            "kserve/scripts/setup.sh": SETUP,
            "serving/whisper.yaml": KSVC,
            "serving/config-features.yaml": CONFIG_FEATURES.replace("knative-serving", namespace),
        },
    )
    walks = counted_walks(repo, monkeypatch)
    kept = run_cli("check", ".", "--format", "json", "--jobs", "1")
    found = [
        (f["path"], f["line"], f["severity"])
        for f in kept.json()["findings"]
        if f["rule"] == "knative-field-disallowed"
    ]
    if walked:  # config-features unknown: setup.sh enables nodeSelector; tolerations stay off by default
        assert found == [("kserve/nim-models/mistral.yaml", 16, "warning")]
    else:  # the linted ConfigMap is the verdict: nodeSelector and tolerations off, whatever setup.sh says (a
        # warning for an InferenceService, whose Knative mode is assumed)
        assert found == [
            ("kserve/nim-models/llama3.yaml", 16, "warning"),
            ("kserve/nim-models/mistral.yaml", 16, "warning"),
            ("serving/whisper.yaml", 7, "error"),
        ]
    assert walks() == ([str(os.getpid())] if walked else [])
    for how, run in split_runs(monkeypatch):
        assert (run.stdout, run.exit_code) == (kept.stdout, kept.exit_code), how
        assert walks() == ([str(os.getpid())] if walked else []), how


def test_a_run_without_a_gated_object_reads_no_setup_file(repo, monkeypatch):
    plain = KSVC.replace("serving.knative.dev/v1", "apps/v1").replace("kind: Service", "kind: Deployment")
    write_tree(repo, {"apps/whisper.yaml": plain, "kserve/scripts/setup.sh": SETUP})
    read: list[str] = []
    monkeypatch.setattr(knative_setup, "enabled_flags", lambda root, *rest: read.append(root) or {})
    assert knative_findings(".") == []
    assert read == []
    write_tree(repo, {"serving/whisper.yaml": KSVC})
    knative_findings(".")
    assert read == [str(repo.resolve())]  # the work tree, once


def test_an_admission_review_reads_no_setup_file(repo):
    # the webhook judges one object, with no file: the repository it runs beside says nothing of the cluster
    write_tree(repo, {"kserve/scripts/setup.sh": SETUP})
    run = LintRun.for_object(Config(), yaml.safe_load(textwrap.dedent(KSVC)), None)
    found = [f for f in run.report().findings if f.rule == "knative-field-disallowed"]
    assert [(f.severity.name, "nodeSelector" in f.message) for f in found] == [("WARNING", True)]
    assert run.setup.knative_flags.by_root == {}
