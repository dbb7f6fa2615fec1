"""Causes of false findings met on set Q of held-out public repositories (docs/precision.md, "Set Q": serving
stacks, cloud blueprints, Flux home-labs), each with a failing, a clean and a trap case written the way those
repositories write them (no file of theirs is copied). Real kubectl builds every overlay."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

# ------------------------------------------ an overlay Flux builds with the components its Kustomization lists

# A home-lab app: its overlay patches the database Cluster that a shared component adds, and the app's Flux
# Kustomization lists that component (Flux appends spec.components to the folder's kustomization).
FLUX_APP = {
    "components/cnpg/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./cluster.yaml
        """,
    "components/cnpg/cluster.yaml": """
        apiVersion: postgresql.cnpg.io/v1
        kind: Cluster
        metadata:
          name: ${APP}-postgres
        spec:
          instances: 1
        """,
    "apps/media/photos/app/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ./ml.yaml
        patches:
          - path: ./patches/cnpg.yaml
        """,
    "apps/media/photos/app/patches/cnpg.yaml": """
        apiVersion: postgresql.cnpg.io/v1
        kind: Cluster
        metadata:
          name: ${APP}-postgres
        spec:
          instances: 2
        """,
    "apps/media/photos/app/ml.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: photos-ml
        spec:
          selector:
            matchLabels: {app: photos-ml}
          template:
            metadata:
              labels: {app: photos-ml}
            spec:
              containers:
                - name: ml
                  image: ghcr.io/example/photos-ml:v1.0.0-cuda
                  resources:
                    limits: {nvidia.com/gpu: 1}
        """,
    "apps/media/photos/kustomization.yaml": """
        resources:
          - ./app.ks.yaml
        """,
}

FLUX_KS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: &app photos
    spec:
      interval: 10m
      path: {path}
      components:
        - ../../../../components/cnpg/
      sourceRef:
        kind: GitRepository
        name: flux-system
      postBuild:
        substitute:
          APP: *app
    """

OVERLAY = "apps/media/photos/app/kustomization.yaml"


def not_rendered(found: list[tuple[str, int, str, str, str]]) -> list[tuple[str, str]]:
    return [(path, severity) for path, _, rule, severity, _ in found if rule == "not-rendered"]


# The component also runs the app's GPU worker; the overlay's patch gives it the GPU (a request with no limit, which
# the API server refuses for an extended resource) or leaves it alone.
GPU_COMPONENT = {
    "components/cnpg/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./cluster.yaml
          - ./worker.yaml
        """,
    "components/cnpg/worker.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: ${APP}-worker
        spec:
          selector:
            matchLabels: {app: worker}
          template:
            metadata:
              labels: {app: worker}
            spec:
              containers:
                - name: worker
                  image: ghcr.io/example/worker:v1.0.0
        """,
}
GPU_PATCH = """
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: ${APP}-worker
        spec:
          template:
            spec:
              containers:
                - name: worker
                  resources:
                    requests: {nvidia.com/gpu: 1}
        """


def flux_app(**replaced: str) -> dict[str, str]:
    return {**FLUX_APP, "apps/media/photos/app.ks.yaml": FLUX_KS.format(path="./apps/media/photos/app"), **replaced}


def test_an_overlay_whose_patch_target_a_flux_component_adds_is_built_with_the_component(repo, render_tools):
    # kubectl alone misses the patch's target; built with the components the Flux Kustomization lists, it is checked
    write_tree(repo, flux_app())
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert not_rendered(found) == [], found
    before = (repo / OVERLAY).read_text()
    assert "components" not in before  # the render copy is completed, never the user's file


def test_a_patch_on_what_a_flux_component_adds_is_checked(repo, render_tools):
    # failing before: the patch that requests the GPU was never read (the overlay not built, a patch not read raw)
    patch = "apps/media/photos/app/patches/cnpg.yaml"
    write_tree(repo, flux_app(**GPU_COMPONENT, **{patch: FLUX_APP[patch] + GPU_PATCH}))
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert [(path, rule) for path, _, rule, _, _ in found] == [(patch, "gpu-request-without-limit")], found


def test_a_finding_in_a_flux_component_is_said_once(repo, render_tools):
    # the component's own file holds the fault: the build places it there, and the file is not checked alone again
    worker = GPU_COMPONENT["components/cnpg/worker.yaml"].replace(
        "image: ghcr.io/example/worker:v1.0.0",
        "image: ghcr.io/example/worker:v1.0.0\n                  resources:"
        "\n                    requests: {nvidia.com/gpu: 1}",
    )
    write_tree(repo, flux_app(**{**GPU_COMPONENT, "components/cnpg/worker.yaml": worker}))
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert [(path, rule) for path, _, rule, _, _ in found] == [
        ("components/cnpg/worker.yaml", "gpu-request-without-limit")
    ], found


def test_an_absent_component_flux_is_told_to_ignore_is_left_out(repo, render_tools):
    # spec.ignoreMissingComponents: Flux skips the absent one and builds with the rest; without it, it refuses
    ks = FLUX_KS.format(path="./apps/media/photos/app").replace(
        "        - ../../../../components/cnpg/\n",
        "        - ../../../../components/cnpg/\n        - ../../../../components/absent/\n",
    )
    ignoring = ks.replace("      interval: 10m\n", "      interval: 10m\n      ignoreMissingComponents: true\n")
    write_tree(repo, flux_app(**{"apps/media/photos/app.ks.yaml": ignoring}))
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == []
    write_tree(repo, {"apps/media/photos/app.ks.yaml": ks})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == [(OVERLAY, "warning")]


OTHER_COMPONENT = {  # a Component that adds no database: the patch's target is missing under Flux too
    "components/dragonfly/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./dragonfly.yaml
        """,
    "components/dragonfly/dragonfly.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: ${APP}-dragonfly
        """,
}


def test_a_finding_in_a_component_two_flux_apps_share_is_said_once(repo, render_tools):
    # two apps built with one component: its objects are alike in both (${APP} is Flux's to fill in), said by the first
    worker = GPU_COMPONENT["components/cnpg/worker.yaml"].replace(
        "image: ghcr.io/example/worker:v1.0.0",
        "image: ghcr.io/example/worker:v1.0.0\n                  resources:\n                    requests: {nvidia.com/gpu: 1}",
    )
    files = flux_app(**{**GPU_COMPONENT, "components/cnpg/worker.yaml": worker})
    files |= {
        name.replace("photos", "videos"): text.replace("photos", "videos")
        for name, text in files.items()
        if name.startswith("apps/media/photos/")
    }
    write_tree(repo, files)
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert [(path, rule) for path, _, rule, _, _ in found] == [
        ("components/cnpg/worker.yaml", "gpu-request-without-limit")
    ], found


@pytest.mark.parametrize(
    ("component", "files"),
    [
        (
            "../../../../../outside/cnpg/",
            {},
        ),  # outside the repository: Flux's filesystem refuses it, gpulint reads it not
        ("../../../../components/absent/", {}),  # missing: Flux refuses the Kustomization unless told to ignore it
        ("../../../../components/dragonfly/", OTHER_COMPONENT),  # built with it, the target is still missing
    ],
)
def test_an_overlay_flux_completes_with_a_component_not_at_hand_is_not_checked(repo, render_tools, component, files):
    ks = FLUX_KS.format(path="./apps/media/photos/app").replace("../../../../components/cnpg/", component)
    write_tree(repo, {**FLUX_APP, **files, "apps/media/photos/app.ks.yaml": ks})
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert not_rendered(found) == [(OVERLAY, "warning")], found


def test_the_same_app_with_its_component_listed_in_the_overlay_is_checked(repo, render_tools):
    # clean: the overlay names the component itself, so kubectl builds what Flux builds
    files = dict(FLUX_APP)
    files[OVERLAY] = FLUX_APP[OVERLAY].replace(
        "        patches:\n", "        components:\n          - ../../../../components/cnpg/\n        patches:\n"
    )
    write_tree(repo, {**files, "apps/media/photos/app.ks.yaml": FLUX_KS.format(path="./apps/media/photos/app")})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == []


@pytest.mark.parametrize(
    "path",
    [
        "./apps/media/photos",  # the folder above: the components go to that folder's kustomization, not this one
        "./apps/media/videos/app",  # another app's folder
    ],
)
def test_an_overlay_no_flux_kustomization_completes_is_still_refused(repo, render_tools, path):
    write_tree(repo, {**FLUX_APP, "apps/media/photos/app.ks.yaml": FLUX_KS.format(path=path)})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == [(OVERLAY, "error")]


def test_a_flux_kustomization_without_components_completes_nothing(repo, render_tools):
    # the trap: Flux builds the folder, but adds nothing that holds the patch's target - it fails under Flux too
    ks = FLUX_KS.format(path="./apps/media/photos/app").replace(
        "      components:\n        - ../../../../components/cnpg/\n", ""
    )
    write_tree(repo, {**FLUX_APP, "apps/media/photos/app.ks.yaml": ks})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == [(OVERLAY, "error")]


def test_a_flux_component_does_not_excuse_a_missing_file(repo, render_tools):
    # the trap: a file the overlay lists that does not exist fails wherever it is built
    files = dict(FLUX_APP)
    files[OVERLAY] = FLUX_APP[OVERLAY].replace("./ml.yaml", "./ml-server.yaml")
    write_tree(repo, {**files, "apps/media/photos/app.ks.yaml": FLUX_KS.format(path="./apps/media/photos/app")})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == [(OVERLAY, "error")]


# ------------------------------- an overlay a script builds with the restrictor off, the flag held in a variable

# A serving stack's runtimes: a base whose transformer lives in a sibling folder, a namespaced variant over it, and
# the install script that moves to config/ and builds either with the flag read from kustomize's own help.
RUNTIMES = {
    "config/default/labels.yaml": """
        apiVersion: builtin
        kind: LabelTransformer
        metadata:
          name: labels
        labels:
          app.kubernetes.io/part-of: serving
        fieldSpecs:
          - path: metadata/labels
            create: true
        """,
    "config/runtimes/kustomization.yaml": """
        resources:
          - triton.yaml
        transformers:
          - ../default/labels.yaml
        """,
    "config/runtimes/triton.yaml": """
        apiVersion: serving.kserve.io/v1alpha1
        kind: ClusterServingRuntime
        metadata:
          name: triton-2.x
        spec:
          supportedModelFormats:
            - name: onnx
          containers:
            - name: triton
              image: nvcr.io/nvidia/tritonserver:23.04-py3
              resources:
                limits: {nvidia.com/gpu: 1}
        """,
    "config/namespace-runtimes/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ../runtimes
        """,
}

INSTALL = """
    #!/usr/bin/env bash
    set -euo pipefail
    cd config
    # Older versions of kustomize spell the flag differently.
    restrictor_arg=$( kustomize build --help | grep -o -E "\\-\\-load.restrictor[^,]+" | sed -E "s/(--load.restrictor).+'(.*none)'/\\1 \\2/I" )
    if [[ $namespace_scope_mode == "true" ]]; then
        kustomize build namespace-runtimes ${restrictor_arg} | kubectl apply -f -
    else
        kustomize build runtimes ${restrictor_arg} | kubectl apply -f -
    fi
    """

NAMESPACED = "config/namespace-runtimes/kustomization.yaml"


def test_an_overlay_a_script_builds_with_the_restrictor_flag_in_a_variable_is_not_checked(repo, render_tools):
    write_tree(repo, {**RUNTIMES, "scripts/install.sh": INSTALL})
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert not_rendered(found) == [(NAMESPACED, "warning")], found
    message = next(said for _, _, rule, _, said in found if rule == "not-rendered")
    assert "scripts/install.sh builds it with --load-restrictor=LoadRestrictionsNone" in message


@pytest.mark.parametrize(
    "script",
    [
        # the variable holds another flag: the build is restricted
        INSTALL.replace(
            'grep -o -E "\\-\\-load.restrictor[^,]+" | sed -E "s/(--load.restrictor).+\'(.*none)\'/\\1 \\2/I"',
            "echo --enable-helm",
        ),
        # the script moves elsewhere: `namespace-runtimes` is another folder's
        INSTALL.replace("cd config", "cd deploy"),
        # the restrictor variable is assigned but the build does not use it
        INSTALL.replace("namespace-runtimes ${restrictor_arg}", "namespace-runtimes"),
    ],
)
def test_a_script_that_does_not_build_the_overlay_unrestricted_excuses_nothing(repo, render_tools, script):
    write_tree(repo, {**RUNTIMES, "scripts/install.sh": script})
    assert not_rendered(check_serious(".", "--kubectl", render_tools["kubectl"])) == [(NAMESPACED, "error")]
