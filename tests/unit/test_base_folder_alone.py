"""A kustomize base folder checked alone (`gpulint check path/to/base`, or its files as pre-commit passes them) is
built as the overlays over it build it, each its own render, in trees shaped like kubeflow/manifests'
`apps/*/upstream` (docs/precision.md, "Set M per unit"); with real kubectl."""

from __future__ import annotations

import subprocess
from functools import partial

from conftest import errors_and_warnings, run_cli
from support.trees import write_tree

UPSTREAM = "apps/jupyter/notebook-controller/upstream"

# manager/ is a base whose Deployment has no selector: default/ gives it one through commonLabels, base/ builds
# default/, and two overlays (kubeflow, standalone) build base/, as kubeflow/manifests' notebook-controller does
NOTEBOOK_CONTROLLER = {
    f"{UPSTREAM}/manager/kustomization.yaml": "resources:\n- manager.yaml\n",
    f"{UPSTREAM}/manager/manager.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: deployment
        spec:
          template:
            spec:
              containers:
              - name: manager
                image: ghcr.io/kubeflow/kubeflow/notebook-controller:v1.10.0
        """,
    f"{UPSTREAM}/default/kustomization.yaml": """
        namespace: notebook-controller-system
        namePrefix: notebook-controller-
        commonLabels:
          app: notebook-controller
          kustomize.component: notebook-controller
        bases:
        - ../manager
        """,
    f"{UPSTREAM}/base/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ../default
        images:
        - name: ghcr.io/kubeflow/kubeflow/notebook-controller
          newTag: v1.10.0
        """,
    f"{UPSTREAM}/overlays/kubeflow/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ../../base
        namespace: kubeflow
        """,
    f"{UPSTREAM}/overlays/standalone/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ../../base
        namespace: notebook-controller-system
        """,
}


serious = partial(errors_and_warnings, fields=("path", "rule"))


def check(kubectl: str, *paths: str):
    return run_cli("check", *paths, "--kubectl", kubectl, "--format", "json")


def in_work_tree(repo, files: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the overlays over a base are looked for in it
    write_tree(repo, files)


def test_a_base_folder_named_alone_is_built_by_the_overlays_over_it(repo, render_tools):
    in_work_tree(repo, NOTEBOOK_CONTROLLER)
    for folder in ("manager", "default", "base"):
        result = check(render_tools["kubectl"], f"{UPSTREAM}/{folder}")
        assert serious(result) == [], (folder, result.stdout)
        assert result.json()["summary"]["objects"] == 2, result.stdout  # one Deployment per overlay over it


def test_a_base_folders_files_as_pre_commit_passes_them(repo, render_tools):
    in_work_tree(repo, NOTEBOOK_CONTROLLER)
    result = check(
        render_tools["kubectl"], f"{UPSTREAM}/manager/kustomization.yaml", f"{UPSTREAM}/manager/manager.yaml"
    )
    assert serious(result) == [], result.stdout


def test_a_base_folder_no_overlay_reads_is_built_alone(repo, render_tools):
    # the trap: nothing builds manager/ with labels, so its Deployment has no selector however it is applied
    in_work_tree(repo, {k: v for k, v in NOTEBOOK_CONTROLLER.items() if "/manager/" in k})
    result = check(render_tools["kubectl"], f"{UPSTREAM}/manager")
    assert serious(result) == [(f"{UPSTREAM}/manager/manager.yaml", "schema-invalid")], result.stdout


def test_two_overlays_that_disagree_each_say_what_they_build(repo, render_tools):
    # standalone/ builds manager/ directly, without default/'s labels: its Deployment has no selector, the kubeflow
    # overlay's has one; the base is not judged by a merge of the two, the one that refuses says so at the base's file
    files = {
        **NOTEBOOK_CONTROLLER,
        f"{UPSTREAM}/overlays/standalone/kustomization.yaml": "resources:\n- ../../manager\nnamespace: standalone\n",
    }
    in_work_tree(repo, files)
    result = check(render_tools["kubectl"], f"{UPSTREAM}/manager")
    assert serious(result) == [(f"{UPSTREAM}/manager/manager.yaml", "schema-invalid")], result.stdout
    assert result.json()["summary"]["objects"] == 2, result.stdout
    verbose = run_cli("check", f"{UPSTREAM}/manager", "--kubectl", render_tools["kubectl"], "-v")
    assert (
        f"checked as the overlays over it build it: {UPSTREAM}/overlays/kubeflow, {UPSTREAM}/overlays/standalone"
        in verbose.stderr + verbose.stdout
    )


def test_an_overlay_over_the_base_that_does_not_build_leaves_it_built_alone(repo, render_tools):
    # the trap: the only overlay over the base lists a file the checkout lacks: its failure is its own unit's to
    # say, and the base is checked as it builds alone (its Deployment without a selector)
    files = {
        **{k: v for k, v in NOTEBOOK_CONTROLLER.items() if "/overlays/standalone/" not in k},
        f"{UPSTREAM}/overlays/kubeflow/kustomization.yaml": "resources:\n- ../../base\n- istio-gateway.yaml\n",
    }
    in_work_tree(repo, files)
    result = check(render_tools["kubectl"], f"{UPSTREAM}/manager")
    assert serious(result) == [(f"{UPSTREAM}/manager/manager.yaml", "schema-invalid")], result.stdout


def test_an_overlay_named_is_built_as_named(repo, render_tools):
    # the trap for the walk: an overlay nothing builds is its own unit, whatever lies beside it
    in_work_tree(repo, NOTEBOOK_CONTROLLER)
    result = check(render_tools["kubectl"], f"{UPSTREAM}/overlays/kubeflow")
    assert serious(result) == [], result.stdout
    assert result.json()["summary"]["objects"] == 1, result.stdout


def test_a_kustomization_named_alone_is_built_as_its_folder_is(repo, render_tools):
    # pre-commit names only the kustomization when only it changed: it was skipped as no manifest, nothing checked
    files = {
        **NOTEBOOK_CONTROLLER,
        f"{UPSTREAM}/overlays/standalone/kustomization.yaml": "resources:\n- ../../manager\nnamespace: standalone\n",
    }
    in_work_tree(repo, files)
    result = check(render_tools["kubectl"], f"{UPSTREAM}/manager/kustomization.yaml")
    assert serious(result) == [(f"{UPSTREAM}/manager/manager.yaml", "schema-invalid")], result.stdout
    result = check(render_tools["kubectl"], f"{UPSTREAM}/overlays/kubeflow/kustomization.yaml")
    assert serious(result) == [], result.stdout
    assert result.json()["summary"]["objects"] == 1, result.stdout


def test_a_components_kustomization_named_alone_says_only_its_own_files(repo, render_tools):
    # the trap: nothing lists the Component, so it is built alone as kustomize builds one named directly
    # (api/krusty/component_test.go, v5.8.1); the manager's schema-invalid is the manager unit's, not said here
    files = {
        **NOTEBOOK_CONTROLLER,
        f"{UPSTREAM}/components/istio/kustomization.yaml": """
            apiVersion: kustomize.config.k8s.io/v1alpha1
            kind: Component
            resources:
            - ../../manager
            """,
    }
    in_work_tree(repo, files)
    result = check(render_tools["kubectl"], f"{UPSTREAM}/components/istio/kustomization.yaml")
    assert serious(result) == [], result.stdout
    assert result.json()["summary"]["objects"] == 1, result.stdout


def test_findings_of_the_overlay_over_a_base_are_its_own_units(repo, render_tools):
    # the trap for the builder: a Flux repository's kubernetes/apps/ lists every namespace's folder; checking ai/
    # alone builds it through apps/, but the media/ Deployment's refusal is the media/ unit's, not ai/'s
    files = {
        "kubernetes/apps/kustomization.yaml": "resources:\n- ai\n- media\n",
        "kubernetes/apps/ai/kustomization.yaml": "namespace: ai\nresources:\n- ollama.yaml\n",
        "kubernetes/apps/ai/ollama.yaml": """
            apiVersion: v1
            kind: Pod
            metadata:
              name: ollama
            spec:
              containers:
              - name: ollama
                image: ollama/ollama:0.12.3
                resources:
                  limits:
                    nvidia.com/gpu: 1
            """,
        "kubernetes/apps/media/kustomization.yaml": "namespace: media\nresources:\n- plex.yaml\n",
        "kubernetes/apps/media/plex.yaml": """
            apiVersion: v1
            kind: Pod
            metadata:
              name: Plex
            spec:
              containers:
              - name: plex
                image: plexinc/pms-docker:1.42.1
            """,
    }
    in_work_tree(repo, files)
    result = check(render_tools["kubectl"], "kubernetes/apps/ai")
    assert serious(result) == [], result.stdout
    result = check(render_tools["kubectl"], "kubernetes/apps/media")
    assert [path for path, _ in serious(result)] == ["kubernetes/apps/media/plex.yaml"], result.stdout
