"""Causes of false findings met on set R of held-out public repositories (docs/precision.md, "Set R": Volcano and
Slurm setups, Triton's tutorials, GitOps home clusters), each with a failing, a clean and a trap case written the
way those repositories write them (no file of theirs is copied). Real kubectl builds every overlay."""

from __future__ import annotations

from conftest import check_serious
from support.trees import write_tree

# ------------------------------------------ a transformers folder whose kustomization names a shared folder

# A Flux home cluster: each namespace folder lists `transformers: [./transformers]`, a kustomization that sets the
# namespace and takes the NamespaceTransformer from one shared folder (kustomize accumulates a transformers entry as
# it does a resource, so a folder there is a kustomization with its own bases).
SHARED_TRANSFORMER = {
    "kubernetes/transformers/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ./transformer.yaml
        """,
    "kubernetes/transformers/transformer.yaml": """
        apiVersion: builtin
        kind: NamespaceTransformer
        metadata:
          name: apply-ns
          namespace: .invalid
        unsetOnly: false
        fieldSpecs:
          - path: metadata/namespace
            create: true
        """,
    "kubernetes/apps/ai/transformers/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: ai
        resources:
          - ../../../transformers
        """,
    "kubernetes/apps/ai/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ./ollama.yaml
        transformers:
          - ./transformers
        """,
    # a true finding inside the overlay shows it was built and checked
    "kubernetes/apps/ai/ollama.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: ollama
        spec:
          selector:
            matchLabels: {app: ollama}
          template:
            metadata:
              labels: {app: ollama}
            spec:
              containers:
                - name: ollama
                  image: docker.io/ollama/ollama:0.9.6
                  env:
                    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
                  resources:
                    limits: {nvidia.com/gpu: 1}
        """,
}
OVERLAY = "kubernetes/apps/ai/kustomization.yaml"
WORKLOAD = "kubernetes/apps/ai/ollama.yaml"


def test_a_transformers_folder_naming_a_shared_folder_is_built_with_it(repo, render_tools):
    write_tree(repo, SHARED_TRANSFORMER)
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "rule", "object"))
    # built: the namespace the transformer folder sets is on the object (read raw, it has none)
    object_ = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ai", "name": "ollama"}
    assert found == [(WORKLOAD, "gpu-visibility-override", object_)], found


def test_a_self_contained_transformers_folder_builds_as_before(repo, render_tools):
    # clean: the folder holds its transformer itself
    tree = {
        **SHARED_TRANSFORMER,
        "kubernetes/apps/ai/transformers/kustomization.yaml": """
            apiVersion: kustomize.config.k8s.io/v1beta1
            kind: Kustomization
            namespace: ai
            resources:
              - ./transformer.yaml
            """,
        "kubernetes/apps/ai/transformers/transformer.yaml": SHARED_TRANSFORMER[
            "kubernetes/transformers/transformer.yaml"
        ],
    }
    write_tree(repo, tree)
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "rule"))
    assert found == [(WORKLOAD, "gpu-visibility-override")], found


def test_a_transformers_folder_naming_an_absent_folder_is_still_refused(repo, render_tools):
    # trap: kubectl refuses the repository's own folder too (the shared folder is not there)
    tree = {k: v for k, v in SHARED_TRANSFORMER.items() if not k.startswith("kubernetes/transformers/")}
    write_tree(repo, tree)
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    refused = [(path, severity) for path, _, rule, severity, _ in found if rule == "not-rendered"]
    assert refused == [(OVERLAY, "error")], found
