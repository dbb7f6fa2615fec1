"""Every overlay a Flux Kustomization builds is built with the components it lists (fluxcd/pkg kustomize v1.39.0,
kustomize_generator.go appends ``spec.components`` to the folder's kustomization), not only one kubectl refuses
without them; a component's file checked alone is judged through the overlay Flux builds with it. Written the way the
home-lab monorepos write them (zhorvath83's ``components/gpu``: a ResourceClaimTemplate named ``${APP}-gpu``, each
app's Kustomization substituting APP); no file of theirs is copied. Real kubectl builds every overlay."""

from __future__ import annotations

from conftest import check_serious, run_cli
from support.trees import write_tree

# The component: a GPU claim template and a worker that asks for it, both named after the app Flux fills in.
COMPONENT = {
    "kubernetes/components/gpu/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./worker.yaml
        """,
    "kubernetes/components/gpu/worker.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: ${APP}-transcode
        spec:
          selector:
            matchLabels: {app: transcode}
          template:
            metadata:
              labels: {app: transcode}
            spec:
              containers:
                - name: transcode
                  image: ghcr.io/example/transcode:v1.0.0
                  resources:
                    limits: {nvidia.com/gpu: "${GPUS}"}
                    requests: {nvidia.com/gpu: "1"}
        """,
}

# The app's overlay builds alone (nothing in it patches what the component adds): only Flux adds the component.
APP = {
    "kubernetes/apps/media/jellyfin/app/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - ./service.yaml
        """,
    "kubernetes/apps/media/jellyfin/app/service.yaml": """
        apiVersion: v1
        kind: Service
        metadata:
          name: jellyfin
        spec:
          ports:
            - port: 8096
        """,
    "kubernetes/apps/media/jellyfin/kustomization.yaml": """
        resources:
          - ./ks.yaml
        """,
    "kubernetes/apps/media/jellyfin/ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: &app jellyfin
        spec:
          interval: 1h
          path: ./kubernetes/apps/media/jellyfin/app
          components:
            - ../../../../components/gpu
          sourceRef:
            kind: GitRepository
            name: flux-system
          postBuild:
            substitute:
              APP: *app
              GPUS: "{gpus}"
        """,
}

WORKER = "kubernetes/components/gpu/worker.yaml"
KS = "kubernetes/apps/media/jellyfin/ks.yaml"


def tree(gpus: str) -> dict[str, str]:
    return {**COMPONENT, **APP, KS: APP[KS].replace("{gpus}", gpus)}


def rules(found: list[tuple]) -> list[tuple[str, str]]:
    return [(path, rule) for path, _, rule, _, _ in found]


def test_an_overlay_flux_builds_with_a_component_is_checked_with_it(repo, render_tools):
    # the limit Flux fills in is below the request: the API server refuses the Deployment's pods
    write_tree(repo, tree("0"))
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [(WORKER, "gpu-request-without-limit")], found


def test_the_same_overlay_with_a_limit_that_covers_the_request_is_clean(repo, render_tools):
    write_tree(repo, tree("1"))
    assert check_serious(".", "--kubectl", render_tools["kubectl"]) == []


def test_the_component_file_alone_agrees_with_the_whole_repository(repo, render_tools):
    # pre-commit names the changed file: it is judged as Flux builds it, with the app's values, as the CI run judges it
    write_tree(repo, tree("0"))
    whole = check_serious(".", "--kubectl", render_tools["kubectl"])
    alone = check_serious(WORKER, "--kubectl", render_tools["kubectl"])
    assert whole and alone == whole
    write_tree(repo, tree("1"))
    assert check_serious(WORKER, "--kubectl", render_tools["kubectl"]) == []


def test_the_component_file_alone_shows_no_placeholder_flux_fills_in(repo, render_tools):
    write_tree(repo, tree("1"))
    result = run_cli("check", WORKER, "--kubectl", render_tools["kubectl"], "--format", "json")
    infos = [f for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert result.exit_code == 0 and infos == [], infos


def test_a_component_no_flux_kustomization_lists_is_read_as_written(repo, render_tools):
    # trap: the app's Kustomization lists no component; the file alone keeps its placeholders (nothing fills them)
    files = tree("1")
    files[KS] = "\n".join(line for line in files[KS].splitlines() if "components" not in line)
    write_tree(repo, files)
    result = run_cli("check", WORKER, "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [f["rule"] for f in result.json()["findings"]] == ["not-rendered"], result.json()


def test_an_overlay_that_fails_with_its_component_is_checked_as_written(repo, render_tools):
    # trap: a component that is no Component kind: Flux's build would fail; gpulint builds the overlay as written,
    # never calling the component's objects the overlay's
    files = tree("0")
    files["kubernetes/components/gpu/kustomization.yaml"] = (
        COMPONENT["kubernetes/components/gpu/kustomization.yaml"]
        .replace("kind: Component", "kind: Kustomization")
        .replace("v1alpha1", "v1beta1")
    )
    write_tree(repo, files)
    found = check_serious("kubernetes/apps", "--kubectl", render_tools["kubectl"])
    assert found == [], found
