"""A Flux Kustomization's post-build substitution and target namespace, applied to the overlay it builds as
kustomize-controller applies them (fluxcd/pkg kustomize v1.39.0, kustomize_varsub.go and kustomize_generator.go),
in the shapes of Flux home-lab monorepos (a ``cluster-settings`` ConfigMap beside ``flux-system``, ``${APP}`` and
``${VAR:=default}`` in an app's HelmRelease or Deployment, a Secret of cluster secrets). Real kubectl builds each
overlay; no file of those repositories is copied."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

from gpulint.lint.inputs.render.flux_post_build import FluxBuild, Variable, substitute

DEPLOYMENT = "kubernetes/apps/ai/ollama/app/deployment.yaml"

# The GPU count is a variable: the limit from the cluster's settings, the request as written. The API server refuses
# an extended resource whose request differs from its limit.
APP = {
    "kubernetes/apps/ai/ollama/app/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ./deployment.yaml
        """,
    DEPLOYMENT: """
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
                  env:
                    - {name: TZ, value: "${TIMEZONE:=Etc/UTC}"}
                  resources:
                    requests:
                      nvidia.com/gpu: 2
                    limits:
                      nvidia.com/gpu: ${GPU_COUNT}
        """,
    "kubernetes/flux/cluster-settings.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cluster-settings
          namespace: flux-system
        data:
          GPU_COUNT: "{gpus}"
          CLUSTER_DOMAIN: example.com
        """,
}
KS = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: &app ollama
      namespace: flux-system
    spec:
      targetNamespace: ai
      interval: 30m
      path: ./kubernetes/apps/ai/ollama/app
      prune: true
      sourceRef:
        kind: GitRepository
        name: home-kubernetes
      postBuild:
        substitute:
          APP: *app
        substituteFrom:
          - kind: ConfigMap
            name: cluster-settings
    """
KS_FILE = "kubernetes/apps/ai/ollama/ks.yaml"


def flux_app(gpus: str = "1", ks: str = KS) -> dict[str, str]:
    settings = "kubernetes/flux/cluster-settings.yaml"
    return {**APP, settings: APP[settings].replace("{gpus}", gpus), KS_FILE: ks}


def serious(kubectl: str) -> list[tuple[str, int, str, str]]:
    return [(path, line, rule, severity) for path, line, rule, severity, _ in check_serious(".", "--kubectl", kubectl)]


def test_a_value_from_the_cluster_settings_is_checked_where_the_template_writes_it(repo, render_tools):
    # failing before: the limit was a placeholder, not checked; Flux deploys a limit of 1 against a request of 2
    write_tree(repo, flux_app(gpus="1"))
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert [(path, line, rule, severity) for path, line, rule, severity, _ in found] == [
        (DEPLOYMENT, 19, "gpu-request-without-limit", "error")
    ]
    # the variable is named with where its value comes from
    assert found[0][4].endswith(
        "Flux's post-build substitution sets ${GPU_COUNT} (line 21) to '1' from "
        "ConfigMap cluster-settings (kubernetes/flux/cluster-settings.yaml:1)"
    ), found[0][4]


def test_the_same_value_matching_the_request_is_clean(repo, render_tools):
    write_tree(repo, flux_app(gpus="2"))
    assert serious(render_tools["kubectl"]) == []


def test_a_file_checked_alone_is_judged_as_flux_deploys_it(repo, render_tools):
    # pre-commit names the changed file: the overlay that lists it is built, substituted the same way
    write_tree(repo, flux_app(gpus="1"))
    found = check_serious(DEPLOYMENT, "--kubectl", render_tools["kubectl"])
    assert [(path, rule) for path, _, rule, _, _ in found] == [(DEPLOYMENT, "gpu-request-without-limit")]


@pytest.mark.parametrize(
    "change",
    [
        # a Secret after the ConfigMap may set any variable: its values are not in the files
        "          - kind: Secret\n            name: cluster-secrets\n",
        # a ConfigMap the repository does not hold: made in the cluster, unknown
        "          - kind: ConfigMap\n            name: cluster-overrides\n            optional: true\n",
    ],
)
def test_a_source_whose_values_are_not_in_the_files_leaves_the_value_unknown(repo, render_tools, change):
    ks = KS.rstrip(" ") + change
    write_tree(repo, flux_app(gpus="1", ks=ks))
    assert serious(render_tools["kubectl"]) == []


def test_substitution_disabled_on_the_object_leaves_it_as_written(repo, render_tools):
    deployment = APP[DEPLOYMENT].replace(
        "          name: ${APP}\n",
        "          name: ${APP}\n          annotations:\n            kustomize.toolkit.fluxcd.io/substitute: disabled\n",
    )
    write_tree(repo, {**flux_app(gpus="1"), DEPLOYMENT: deployment})
    assert serious(render_tools["kubectl"]) == []


def test_two_clusters_building_the_folder_with_their_own_settings_apply_neither(repo, render_tools):
    # clusters/home and clusters/lab both build the app, each with its own variables: which one holds is not known
    other = KS.replace("name: cluster-settings", "name: lab-settings").replace("APP: *app", "APP: lab")
    write_tree(repo, {**flux_app(gpus="1"), "kubernetes/apps/ai/ollama/ks-lab.yaml": other})
    assert serious(render_tools["kubectl"]) == []


def test_the_target_namespace_is_set_on_the_built_objects(repo, render_tools):
    # the quota of the namespace Flux deploys to holds one GPU; the Deployment wants two replicas of one
    quota = """
        apiVersion: v1
        kind: ResourceQuota
        metadata:
          name: gpus
          namespace: ai
        spec:
          hard:
            requests.nvidia.com/gpu: "1"
        """
    deployment = APP[DEPLOYMENT].replace("  selector:", "  replicas: 2\n          selector:", 1)
    deployment = deployment.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1")
    files = {**flux_app(gpus="1"), DEPLOYMENT: deployment, "kubernetes/apps/ai/quota.yaml": quota}
    write_tree(repo, files)
    assert [rule for _, _, rule, _ in serious(render_tools["kubectl"])] == ["resource-quota-exceeded"]
    write_tree(repo, {KS_FILE: KS.replace("targetNamespace: ai", "targetNamespace: games")})
    assert serious(render_tools["kubectl"]) == []


SETTINGS = Variable("1", "ConfigMap cluster-settings (cluster-settings.yaml:1)")


@pytest.mark.parametrize(
    ("written", "variables", "complete", "deployed"),
    [
        ("limit: ${GPU_COUNT}", {"GPU_COUNT": SETTINGS}, True, "limit: 1"),
        ("limit: $GPU_COUNT", {"GPU_COUNT": SETTINGS}, True, "limit: 1"),
        ("tz: ${TIMEZONE:=Etc/UTC}", {"GPU_COUNT": SETTINGS}, True, "tz: Etc/UTC"),
        # a default is Flux's only when nothing unread may set the variable
        ("tz: ${TIMEZONE:=Etc/UTC}", {"GPU_COUNT": SETTINGS}, False, "tz: ${TIMEZONE:=Etc/UTC}"),
        ("host: ${SUB:=${GPU_COUNT}}.lan", {"GPU_COUNT": SETTINGS}, True, "host: 1.lan"),
        ("cmd: echo $$HOME $HOME", {"GPU_COUNT": SETTINGS}, True, "cmd: echo $HOME $HOME"),
        ("n: ${GPU_COUNT:0:1}", {"GPU_COUNT": SETTINGS}, True, "n: ${GPU_COUNT:0:1}"),
        ("n: ${UNSET}", {"GPU_COUNT": SETTINGS}, True, "n: ${UNSET}"),
    ],
)
def test_envsubst_as_flux_reads_it(written, variables, complete, deployed):
    build = FluxBuild("ks.yaml:1", None, True, variables, complete)
    assert substitute(written.encode(), build) == deployed.encode()


# The home-ops template's parent: `cluster-apps` builds kubernetes/apps and patches every app's Kustomization
# there, except those labelled out, to substitute from cluster-settings.
PARENT = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: cluster-apps
      namespace: flux-system
    spec:
      interval: 1h
      path: ./kubernetes/apps
      sourceRef:
        kind: GitRepository
        name: flux-system
      patches:
        - patch: |-
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata:
              name: _
            spec:
              postBuild:
                substituteFrom:
                  - kind: ConfigMap
                    name: cluster-settings
          target:
            group: kustomize.toolkit.fluxcd.io
            kind: Kustomization
            labelSelector: substitution.flux.home.arpa/disabled notin (true)
    """
CHILD = KS.replace(
    "        substituteFrom:\n          - kind: ConfigMap\n            name: cluster-settings\n", ""
).replace("  namespace: flux-system\n", "  namespace: flux-system\n      labels:\n        {label}\n")


@pytest.mark.parametrize(("label", "found"), [("app: ollama", 1), ("substitution.flux.home.arpa/disabled: 'true'", 0)])
def test_a_parent_kustomization_patches_its_apps_to_substitute_from_the_settings(repo, render_tools, label, found):
    # failing before (label selected): the ConfigMap is named only in the parent's patch of the app's Kustomization
    ks = CHILD.replace("{label}", label)
    write_tree(repo, {**flux_app(gpus="1", ks=ks), "kubernetes/flux/cluster/ks.yaml": PARENT})
    assert [rule for _, _, rule, _ in serious(render_tools["kubectl"])] == ["gpu-request-without-limit"] * found


def test_a_finding_past_the_text_held_gets_no_note():
    from gpulint.lint.inputs.render.flux_post_build import filled_in_notes

    assert filled_in_notes([], 3, {"APP": "'photos' from spec.postBuild.substitute (ks.yaml)"}) == ()
    assert filled_in_notes(["  name: ${APP}"], 1, {"APP": "'photos' from x"}) == (
        "Flux's post-build substitution sets ${APP} (line 1) to 'photos' from x",
    )
