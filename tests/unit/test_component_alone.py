"""A kustomize Component checked alone (pre-commit names one of its files, or its folder), as kustomize builds it:
through the first plain kustomization that lists it in ``components:``, else alone, as kustomize builds a Component
named directly (api/krusty/component_test.go, v5.8.1). Shaped as kubeflow/manifests writes them
(``common/oauth2-proxy/components/*`` listed by ``overlays/*``; ``applications/kserve/models-web-app/components``);
no file of theirs is copied. Real kubectl builds every overlay."""

from __future__ import annotations

import subprocess

from conftest import run_cli
from support.trees import write_tree

APP = "applications/serving/web-app"
PATCH = f"{APP}/components/gpu/deployment-gpu.yaml"

BASE = {
    f"{APP}/base/kustomization.yaml": "resources:\n- deployment.yaml\n",
    f"{APP}/base/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web-app}
        spec:
          selector:
            matchLabels: {app: web-app}
          template:
            metadata:
              labels: {app: web-app}
            spec:
              containers:
                - name: web-app
                  image: ghcr.io/example/web-app:v1.0.0
        """,
    f"{APP}/components/gpu/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        patches:
          - path: deployment-gpu.yaml
        """,
    f"{APP}/overlays/gpu/kustomization.yaml": "resources:\n- ../../base\ncomponents:\n- ../../components/gpu\n",
}


def gpu_patch(request: str, limit: str) -> dict[str, str]:
    return {
        PATCH: f"""
            apiVersion: apps/v1
            kind: Deployment
            metadata: {{name: web-app}}
            spec:
              template:
                spec:
                  containers:
                    - name: web-app
                      resources:
                        requests: {{nvidia.com/gpu: "{request}"}}
                        limits: {{nvidia.com/gpu: "{limit}"}}
            """
    }


def findings(repo, kubectl: str, files: dict[str, str], named: str) -> list[tuple[str, str, str]]:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the kustomizations listing it are looked for in it
    write_tree(repo, files)
    result = run_cli("check", named, "--kubectl", kubectl, "--format", "json")
    return [(f["path"], f["rule"], f["severity"]) for f in result.json()["findings"]]


def serious(found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [f for f in found if f[2] in ("error", "warning")]


def test_a_components_patch_alone_is_checked_as_the_overlay_listing_it_builds_it(repo, render_tools):
    # failing: the API server refuses an extended resource whose request differs from its limit; before, the patch
    # named alone was skipped in silence
    found = serious(findings(repo, render_tools["kubectl"], {**BASE, **gpu_patch("2", "1")}, PATCH))
    assert found and {path for path, _, _ in found} == {PATCH}, found
    assert all(severity == "error" for _, _, severity in found), found


def test_the_component_folder_alone_agrees_with_its_patch_alone(repo, render_tools):
    files = {**BASE, **gpu_patch("2", "1")}
    by_folder = serious(findings(repo, render_tools["kubectl"], files, f"{APP}/components/gpu"))
    assert by_folder == serious(findings(repo, render_tools["kubectl"], files, PATCH)), by_folder


def test_a_clean_component_alone_says_nothing(repo, render_tools):
    # clean: the patch alone is a partial Deployment (no selector, no image): never read as a plain manifest
    files = {**BASE, **gpu_patch("1", "1")}
    assert serious(findings(repo, render_tools["kubectl"], files, PATCH)) == []
    assert serious(findings(repo, render_tools["kubectl"], files, f"{APP}/components/gpu")) == []


def test_the_overlays_own_objects_are_not_said_in_the_components_unit(repo, render_tools):
    # trap: the base's container has a fault of its own (request 2, limit 1) the patch leaves alone: the overlay's
    # unit says it, the Component's does not
    files = {**BASE, **gpu_patch("2", "1")}
    files[f"{APP}/base/deployment.yaml"] = BASE[f"{APP}/base/deployment.yaml"].rstrip() + (
        '\n                  resources:\n                    requests: {nvidia.com/gpu: "2"}\n'
        '                    limits: {nvidia.com/gpu: "1"}\n'
    )
    files[PATCH] = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-app}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: web-app\n          env: [{name: MODE, value: gpu}]\n"
    )
    overlay = serious(findings(repo, render_tools["kubectl"], files, f"{APP}/overlays/gpu"))
    assert overlay, overlay
    assert serious(findings(repo, render_tools["kubectl"], files, PATCH)) == []


def test_a_component_nothing_lists_is_built_alone_and_says_what_it_did_not_check(repo, render_tools):
    # trap: no kustomization lists it; built alone its patch has no target (kustomize: "no matches for Id"), which
    # is no fault of the Component's: said as info, never an error
    files = {k: v for k, v in {**BASE, **gpu_patch("2", "1")}.items() if "/overlays/" not in k}
    found = findings(repo, render_tools["kubectl"], files, PATCH)
    assert serious(found) == [], found
    assert (f"{APP}/components/gpu/kustomization.yaml", "not-rendered", "info") in found, found


def test_a_component_nothing_lists_with_its_own_objects_is_checked_alone(repo, render_tools):
    # failing: a Component that holds its own GPU Deployment (bjw-s-labs/home-ops' components/ shape) is checked
    # as kustomize builds it alone
    files = {
        "kubernetes/components/worker/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- ./worker.yaml\n"
        ),
        "kubernetes/components/worker/worker.yaml": BASE[f"{APP}/base/deployment.yaml"].replace(
            "image: ghcr.io/example/web-app:v1.0.0",
            'image: ghcr.io/example/web-app:v1.0.0\n                  resources:\n                    requests: {nvidia.com/gpu: "2"}\n                    limits: {nvidia.com/gpu: "1"}',
        ),
    }
    found = serious(findings(repo, render_tools["kubectl"], files, "kubernetes/components/worker"))
    assert found and {path for path, _, _ in found} == {"kubernetes/components/worker/worker.yaml"}, found
