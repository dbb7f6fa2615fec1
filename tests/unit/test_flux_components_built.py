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


# ------------------------------------------ one substituteFrom ConfigMap per cluster (joryirving's cluster-info)


def cluster(name: str, gpus: str) -> dict[str, str]:
    """``flux bootstrap --path=kubernetes/clusters/<name>``: the cluster's apps Kustomization builds a folder with no
    kustomization (Flux generates one listing the folders below that hold one) and substitutes from the ConfigMap
    beside it, one of that name per cluster."""
    return {
        f"kubernetes/clusters/{name}/apps.yaml": f"""
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata:
              name: cluster-apps
              namespace: flux-system
            spec:
              interval: 1h
              path: ./kubernetes/apps/{name}
              postBuild:
                substituteFrom:
                  - kind: ConfigMap
                    name: cluster-info
              sourceRef:
                kind: GitRepository
                name: flux-system
            """,
        f"kubernetes/clusters/{name}/cluster-info.yaml": f"""
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: cluster-info
              namespace: flux-system
            data:
              CLUSTER: {name}
              GPUS: "{gpus}"
            """,
        f"kubernetes/apps/{name}/media/kustomization.yaml": """
            resources:
              - ./transcode.yaml
            """,
        f"kubernetes/apps/{name}/media/transcode.yaml": COMPONENT[WORKER].replace("${APP}", "${CLUSTER}"),
    }


def test_each_cluster_substitutes_from_its_own_config_map(repo, render_tools):
    # main's cluster-info gives a limit below the request: refused there; lab's covers it
    write_tree(repo, {**cluster("main", "0"), **cluster("lab", "1")})
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [("kubernetes/apps/main/media/transcode.yaml", "gpu-request-without-limit")], found
    alone = check_serious("kubernetes/apps/main/media/transcode.yaml", "--kubectl", render_tools["kubectl"])
    assert alone == found


def test_a_config_map_several_folders_hold_outside_the_clusters_stays_unknown(repo, render_tools):
    # trap: the apps Kustomization is not in a clusters/<name> folder and the ConfigMap is in two places
    files = {
        name.replace("kubernetes/clusters/main/", "kubernetes/flux/"): text
        for name, text in cluster("main", "0").items()
    }
    files["kubernetes/examples/cluster-info.yaml"] = files["kubernetes/flux/cluster-info.yaml"]
    write_tree(repo, files)
    assert check_serious(".", "--kubectl", render_tools["kubectl"]) == []
    del files["kubernetes/examples/cluster-info.yaml"]
    write_tree(repo, files)
    (repo / "kubernetes/examples/cluster-info.yaml").unlink()
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [("kubernetes/apps/main/media/transcode.yaml", "gpu-request-without-limit")], found


def test_a_folder_below_one_with_its_own_kustomization_is_not_in_the_generated_build(repo, render_tools):
    # trap: kubernetes/apps/main holds a kustomization that does not list media/: Flux builds only what it lists
    files = {**cluster("main", "0"), **cluster("lab", "1")}
    files["kubernetes/apps/main/kustomization.yaml"] = "resources: []\n"
    write_tree(repo, files)
    assert check_serious(".", "--kubectl", render_tools["kubectl"]) == []


# ------------------------------------------ spec.commonMetadata: set on every object Flux applies

TRAIN = {
    "apps/train/ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: train
          namespace: flux-system
        spec:
          interval: 1h
          path: ./apps/train/app
          targetNamespace: ml
          commonMetadata:
            {field}:
              kueue.x-k8s.io/queue-name: gpu
          sourceRef:
            kind: GitRepository
            name: flux-system
        """,
    "apps/train/app/kustomization.yaml": """
        resources:
          - ./job.yaml
          - ./queue.yaml
        """,
    "apps/train/app/queue.yaml": """
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: LocalQueue
        metadata:
          name: gpu
        spec:
          clusterQueue: cluster-gpu
        ---
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: ClusterQueue
        metadata:
          name: cluster-gpu
        spec:
          namespaceSelector: {}
          resourceGroups:
            - coveredResources: [nvidia.com/gpu]
              flavors:
                - name: default-flavor
                  resources:
                    - name: nvidia.com/gpu
                      nominalQuota: 8
        ---
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: ResourceFlavor
        metadata:
          name: default-flavor
        """,
    "apps/train/app/job.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: train
                  image: ghcr.io/example/train:v1
                  resources:
                    limits: {nvidia.com/gpu: 1}
        """,
}


def train(field: str) -> dict[str, str]:
    return {**TRAIN, "apps/train/ks.yaml": TRAIN["apps/train/ks.yaml"].replace("{field}", field)}


def test_a_queue_flux_gives_as_an_annotation_is_not_read_by_kueue(repo, render_tools):
    write_tree(repo, train("annotations"))
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [("apps/train/app/job.yaml", "queue-reference-invalid")], found
    assert check_serious("apps/train/app/job.yaml", "--kubectl", render_tools["kubectl"]) == found


def test_a_queue_flux_gives_as_a_label_is_clean(repo, render_tools):
    write_tree(repo, train("labels"))
    assert check_serious(".", "--kubectl", render_tools["kubectl"]) == []
    # the label is read: a ClusterQueue with no resource groups can never admit the Job
    files = train("labels")
    queues = files["apps/train/app/queue.yaml"]
    files["apps/train/app/queue.yaml"] = queues[: queues.index("resourceGroups:")] + "resourceGroups: []\n"
    write_tree(repo, files)
    found = check_serious(".", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [("apps/train/app/job.yaml", "queue-unadmittable")], found


def test_common_metadata_of_a_kustomization_building_another_folder_is_not_applied(repo, render_tools):
    # trap: the Kustomization builds the folder above, which holds its own kustomization not listing app/
    files = train("annotations")
    files["apps/train/ks.yaml"] = files["apps/train/ks.yaml"].replace("./apps/train/app", "./apps/train")
    files["apps/train/kustomization.yaml"] = "resources: []\n"
    write_tree(repo, files)
    assert check_serious(".", "--kubectl", render_tools["kubectl"]) == []


def test_two_files_of_a_component_named_together_say_its_finding_once(repo, render_tools):
    # pre-commit names every changed file: the component is judged through one build, once
    files = tree("0")
    files["kubernetes/components/gpu/kustomization.yaml"] += "  - ./service.yaml\n"
    files["kubernetes/components/gpu/service.yaml"] = APP["kubernetes/apps/media/jellyfin/app/service.yaml"].replace(
        "name: jellyfin", "name: ${APP}-transcode"
    )
    files |= {  # a second app built with it: each named file is not judged again through the other
        name.replace("jellyfin", "plex"): text.replace("jellyfin", "plex")
        for name, text in files.items()
        if name.startswith("kubernetes/apps/media/jellyfin/")
    }
    write_tree(repo, files)
    found = check_serious(WORKER, "kubernetes/components/gpu/service.yaml", "--kubectl", render_tools["kubectl"])
    assert rules(found) == [(WORKER, "gpu-request-without-limit")], found
