"""A ConfigMap is its cluster's: a copy in ``clusters/prod``'s folders neither satisfies nor contradicts a workload
``clusters/dev`` deploys (issue #28 §2), as pools already are scoped (lint.run, inputs/terraform_clusters). The
linted files holding a ConfigMap or Secret now split the run by cluster as a pool does.

Shaped as the Flux monorepos that keep one folder of apps per cluster (joryirving/home-ops
``kubernetes/clusters/{main,test}`` over ``kubernetes/apps/<cluster>``): prod holds the model ConfigMap, dev's comes
from elsewhere (an ExternalSecret, a chart, the cluster). The whole-repository run (CI) and the file alone
(pre-commit) agree."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

APPS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: cluster-apps
      namespace: flux-system
    spec:
      interval: 1h
      path: ./kubernetes/apps/%s
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
    """
CONFIG = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: model-config
      namespace: ai
    data:
      MODEL_ID: meta-llama/Llama-3.1-8B-Instruct
      workflows: "2"
    """
DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: vllm
      namespace: ai
    spec:
      selector:
        matchLabels: {app: vllm}
      template:
        metadata:
          labels: {app: vllm}
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.8.5
              env:
                - name: MODEL
                  valueFrom:
                    configMapKeyRef: {name: model-config, key: %s}
              resources:
                limits:
                  nvidia.com/gpu: 1
    """
WORKFLOW = """
    apiVersion: argoproj.io/v1alpha1
    kind: Workflow
    metadata:
      name: finetune
      namespace: ai
    spec:
      entrypoint: train
      synchronization:
        semaphores:
          - configMapKeyRef: {name: model-config, key: %s}
      templates:
        - name: train
          container:
            image: nvcr.io/nvidia/pytorch:24.05-py3
            resources:
              limits:
                nvidia.com/gpu: 1
    """
TWO_CLUSTERS = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "kubernetes/clusters/dev/apps.yaml": APPS % "dev",
    "kubernetes/clusters/prod/apps.yaml": APPS % "prod",
    "kubernetes/apps/prod/ai/configmap.yaml": CONFIG,
}
DEV = "kubernetes/apps/dev/ai/workload.yaml"
PROD = "kubernetes/apps/prod/ai/workload.yaml"


def rules(named: str) -> list[tuple[str, str, str]]:
    return [(path, rule, severity) for path, _, rule, severity, _ in check_serious(named)]


@pytest.mark.parametrize("named", [".", DEV])  # as CI and as pre-commit run it
@pytest.mark.parametrize("workload", [DEPLOYMENT % "MODEL_NAME", WORKFLOW % "finetune"])
def test_another_clusters_only_copy_does_not_judge_a_workload(repo, named, workload):
    # failing before (whole run): dev's workload was judged against prod's copy, whose keys differ
    write_tree(repo, {**TWO_CLUSTERS, DEV: workload})
    assert rules(named) == []


@pytest.mark.parametrize("named", [".", PROD])
@pytest.mark.parametrize(
    ("workload", "rule"),
    [(DEPLOYMENT % "MODEL_NAME", "env-reference-invalid"), (WORKFLOW % "finetune", "queue-reference-invalid")],
)
def test_a_clusters_own_copy_still_judges_its_workload(repo, named, workload, rule):
    write_tree(repo, {**TWO_CLUSTERS, PROD: workload})
    assert rules(named) == [(PROD, rule, "error")]


def test_a_clusters_own_copy_that_has_the_key_is_clean(repo):
    write_tree(repo, {**TWO_CLUSTERS, PROD: DEPLOYMENT % "MODEL_ID", DEV: DEPLOYMENT % "MODEL_ID"})
    assert rules(".") == []


def test_one_clusters_folder_keeps_the_repositorys_one_cluster(repo):
    # the trap: with one bootstrap folder the repository is one cluster, and its only copy judges every workload
    files = {k: v for k, v in TWO_CLUSTERS.items() if "clusters/dev" not in k}
    write_tree(repo, {**files, DEV: DEPLOYMENT % "MODEL_NAME"})
    assert rules(".") == [(DEV, "env-reference-invalid", "error")]


def test_an_examples_copy_does_not_judge_the_projects_workload(repo):
    # an example folder is its own scope (FIXTURE_FOLDERS): its ConfigMap says nothing of the deployed one's keys
    write_tree(
        repo,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "examples/model-config.yaml": CONFIG,
            "deploy/vllm.yaml": DEPLOYMENT % "MODEL_NAME",
        },
    )
    assert rules(".") == []


# KServe's inferenceservice-config as each cluster's folder holds it (kserve/kserve config/configmap/inferenceservice.yaml
# `deploy`), and an InferenceService of the apps both clusters build: Standard mode in both, so no Knative Service
KSERVE_CONFIG = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: inferenceservice-config
      namespace: kserve
    data:
      deploy: '{"defaultDeploymentMode": "RawDeployment"}'
    """
ISVC = """
    apiVersion: serving.kserve.io/v1beta1
    kind: InferenceService
    metadata:
      name: llm
      namespace: ai
    spec:
      predictor:
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
        model:
          modelFormat: {name: huggingface}
          storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
          resources:
            limits:
              nvidia.com/gpu: 1
    """
SHARED = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "kubernetes/clusters/dev/apps.yaml": APPS % "shared",
    "kubernetes/clusters/prod/apps.yaml": APPS % "shared",
    "kubernetes/apps/shared/ai/llm.yaml": ISVC,
}


def test_the_clusters_that_build_a_shared_app_hold_its_settings(repo):
    # failing before: the shared app saw neither cluster's KServe configuration, so Knative mode was assumed
    write_tree(
        repo,
        {
            **SHARED,
            "kubernetes/clusters/dev/kserve-config.yaml": KSERVE_CONFIG,
            "kubernetes/clusters/prod/kserve-config.yaml": KSERVE_CONFIG,
        },
    )
    assert rules(".") == []


def test_a_shared_app_without_its_clusters_settings_is_still_judged(repo):
    # the trap: no cluster holds KServe's configuration, so its default (Knative mode) is assumed, as a warning
    write_tree(repo, SHARED)
    assert rules(".") == [("kubernetes/apps/shared/ai/llm.yaml", "knative-field-disallowed", "warning")]
