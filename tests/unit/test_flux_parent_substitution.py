"""A parent Flux Kustomization's post-build substitution over the app Kustomizations it builds, as kustomize-controller
runs it (fluxcd/pkg kustomize v1.39.0 kustomize_varsub.go ``SubstituteVariables``: each object of the parent's
build, a child Kustomization too, is substituted with the parent's variables; nothing is inherited otherwise).

Shaped as the Flux home-lab monorepos that do it (joryirving/home-ops, haraldkoch/kochhaus-home): a
``clusters/<name>/apps.yaml`` ``cluster-apps`` substitutes from the cluster's own ``cluster-info`` ConfigMap and
patches every app's Kustomization with ``postBuild.substitute: {VAR: ${VAR}}``; an app passes ``${VAR}`` on in its
own ``substitute``, or names its folder ``./kubernetes/apps/${CLUSTER}/...``. Real kubectl builds each overlay; no
file of those repositories is copied."""

from __future__ import annotations

from conftest import check_serious
from support.trees import write_tree

BASE_DEPLOYMENT = "kubernetes/apps/base/ai/ollama/app/deployment.yaml"
DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: ${APP}
    spec:
      selector:
        matchLabels: {app: ollama}
      template:
        metadata:
          labels: {app: ollama}
        spec:
          containers:
            - name: ollama
              image: docker.io/ollama/ollama:0.5.7
              resources:
                requests:
                  nvidia.com/gpu: 2
                limits:
                  nvidia.com/gpu: ${GPU_COUNT}
    """
OVERLAY = """
    apiVersion: kustomize.config.k8s.io/v1beta1
    kind: Kustomization
    resources:
      - ./deployment.yaml
    """
CLUSTER_APPS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: cluster-apps
      namespace: flux-system
    spec:
      interval: 1h
      path: ./kubernetes/apps/{cluster}
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
      postBuild:
        substituteFrom:
          - kind: {kind}
            name: cluster-info
      patches:
        - patch: |-
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata:
              name: not-used
            spec:
              postBuild:
                substitute:
                  CLUSTER: ${CLUSTER}
          target:
            group: kustomize.toolkit.fluxcd.io
            kind: Kustomization
    """
CLUSTER_INFO = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: cluster-info
      namespace: flux-system
    data:
      CLUSTER: {cluster}
      NODE_GPUS: "{gpus}"
    """
APP_KS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: ollama
      namespace: flux-system
    spec:
      targetNamespace: ai
      interval: 1h
      path: {path}
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
      postBuild:
        substitute:
          APP: ollama
          GPU_COUNT: "{value}"
    """


def cluster(
    name: str, gpus: str, *, path: str = "./kubernetes/apps/base/ai/ollama/app", value: str = "${NODE_GPUS}"
) -> dict[str, str]:
    """The files of one cluster: its bootstrap folder and the app's Kustomization in its own apps folder."""
    return {
        f"kubernetes/clusters/{name}/apps.yaml": CLUSTER_APPS.replace("{cluster}", name).replace("{kind}", "ConfigMap"),
        f"kubernetes/clusters/{name}/cluster-info.yaml": CLUSTER_INFO.replace("{cluster}", name).replace(
            "{gpus}", gpus
        ),
        f"kubernetes/apps/{name}/ai/ollama.yaml": APP_KS.replace("{path}", path).replace("{value}", value),
        f"kubernetes/apps/{name}/kustomization.yaml": OVERLAY.replace("./deployment.yaml", "./ai/ollama.yaml"),
    }


BASE = {BASE_DEPLOYMENT: DEPLOYMENT, "kubernetes/apps/base/ai/ollama/app/kustomization.yaml": OVERLAY}


def serious(kubectl: str, *args: str) -> list[tuple[str, str]]:
    return [(path, rule) for path, _, rule, _, _ in check_serious(*(args or (".",)), "--kubectl", kubectl)]


def test_a_value_the_parent_passes_down_is_checked(repo, render_tools):
    # failing before: the app's GPU_COUNT was "${NODE_GPUS}" as written, so the limit stayed a placeholder; Flux
    # deploys cluster-info's 1 against a request of 2
    write_tree(repo, {**BASE, **cluster("main", "1")})
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert [(path, rule) for path, _, rule, _, _ in found] == [(BASE_DEPLOYMENT, "gpu-request-without-limit")]
    assert "sets ${GPU_COUNT} (line 19) to '1' from spec.postBuild.substitute" in found[0][4], found[0][4]


def test_the_value_that_matches_the_request_is_clean(repo, render_tools):
    write_tree(repo, {**BASE, **cluster("main", "2")})
    assert serious(render_tools["kubectl"]) == []


def test_the_file_checked_alone_is_judged_as_flux_deploys_it(repo, render_tools):
    write_tree(repo, {**BASE, **cluster("main", "1")})
    assert serious(render_tools["kubectl"], BASE_DEPLOYMENT) == [(BASE_DEPLOYMENT, "gpu-request-without-limit")]


def test_two_clusters_sharing_the_app_with_their_own_values_apply_neither(repo, render_tools):
    # each cluster's cluster-apps fills its own cluster-info in (CLUSTER differs too): the shared base is deployed
    # with both, so its fields are compared whole and neither is applied
    write_tree(repo, {**BASE, **cluster("main", "1"), **cluster("test", "1")})
    assert serious(render_tools["kubectl"]) == []


def test_a_parent_whose_values_are_in_a_secret_leaves_the_value_unknown(repo, render_tools):
    files = {**BASE, **cluster("main", "1")}
    apps = "kubernetes/clusters/main/apps.yaml"
    files[apps] = CLUSTER_APPS.replace("{cluster}", "main").replace("{kind}", "Secret")
    write_tree(repo, files)
    assert serious(render_tools["kubectl"]) == []


def test_an_escaped_variable_reaches_the_app_as_written(repo, render_tools):
    # $${NODE_GPUS}: the parent writes ${NODE_GPUS}, which the app's own build does not set: unknown
    write_tree(repo, {**BASE, **cluster("main", "1", value="$${NODE_GPUS}")})
    assert serious(render_tools["kubectl"]) == []


def test_a_folder_named_by_the_parents_cluster_is_that_clusters_alone(repo, render_tools):
    # failing before: ./kubernetes/apps/${CLUSTER}/... matched both clusters' folders, so the two apps' differing
    # values cancelled each other; each cluster's app builds its own folder
    files: dict[str, str] = {}
    for name, gpus in (("main", "1"), ("test", "2")):
        files |= cluster(name, gpus, path="./kubernetes/apps/${CLUSTER}/ai/ollama/app")
        files[f"kubernetes/apps/{name}/ai/ollama/app/deployment.yaml"] = DEPLOYMENT
        files[f"kubernetes/apps/{name}/ai/ollama/app/kustomization.yaml"] = OVERLAY
    write_tree(repo, files)
    assert serious(render_tools["kubectl"]) == [
        ("kubernetes/apps/main/ai/ollama/app/deployment.yaml", "gpu-request-without-limit")
    ]
