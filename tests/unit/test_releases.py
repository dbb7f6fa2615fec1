"""render/releases: where a repository gives its charts values, read as each tool reads them (no helm needed)."""

from __future__ import annotations

import base64
import os

from support.trees import write_tree

from gpulint.lint.inputs.parsed_once import Parses
from gpulint.lint.inputs.render import releases as releases_module
from gpulint.lint.inputs.render.releases import MAX_BYTES, Releases

CHART = {"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n", "charts/app/values.yaml": "a: 1\n"}


def releases(root) -> list:
    return Releases(str(root)).of(str(root / "charts" / "app"))


def test_a_values_file_linked_out_of_the_repository_is_not_read(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("secret: 1\n")
    repo = tmp_path / "repo"
    write_tree(
        repo, {**CHART, "helmfile.yaml": "releases:\n- name: app\n  chart: ./charts/app\n  values: [values/app.yaml]\n"}
    )
    (repo / "values").mkdir()
    os.symlink(outside, repo / "values" / "app.yaml")
    assert releases(repo) == []


def test_a_values_file_larger_than_values_are_is_not_read(tmp_path):
    write_tree(
        tmp_path, {**CHART, "helmfile.yaml": "releases:\n- name: app\n  chart: ./charts/app\n  values: [big.yaml]\n"}
    )
    (tmp_path / "big.yaml").write_text("a: " + "x" * (MAX_BYTES + 1) + "\n")
    assert releases(tmp_path) == []


def test_the_walk_ends_after_so_many_names_of_any_kind(tmp_path, monkeypatch):
    """Files that are not YAML count too: a tree of many of them is not listed to its end."""
    helmfile = "releases:\n- name: app\n  chart: ../charts/app\n  values: [{a: 2}]\n"
    write_tree(tmp_path, {**CHART, "z/helmfile.yaml": helmfile, **{f"a/{n}.txt": "" for n in range(20)}})
    assert len(releases(tmp_path)) == 1
    monkeypatch.setattr(releases_module, "MAX_ENTRIES", 20)
    assert releases(tmp_path) == []


def test_flux_layers_in_helm_controllers_order_with_a_secret(tmp_path):
    encoded = base64.b64encode(b"gpus: 4\n").decode()
    write_tree(
        tmp_path,
        {
            **CHART,
            "flux/app.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: app, namespace: ml}
                spec:
                  targetNamespace: serving
                  chart:
                    spec:
                      chart: ./charts/app
                      sourceRef: {kind: GitRepository, name: repo}
                      valuesFiles: [charts/app/values-prod.yaml]
                  valuesFrom:
                    - {kind: Secret, name: app-values}
                    - {kind: ConfigMap, name: app-model, valuesKey: model, targetPath: model.name}
                    - {kind: ConfigMap, name: absent, optional: true}
                  values: {replicas: 2}
                """,
            "charts/app/values-prod.yaml": "a: 2\n",
            "flux/secret.yaml": f"apiVersion: v1\nkind: Secret\nmetadata: {{name: app-values, namespace: ml}}\ndata:\n  values.yaml: {encoded}\n",
            "flux/model.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-model}\ndata:\n  model: llama, 8b\n",
        },
    )
    (release,) = releases(tmp_path)
    assert (release.name, release.namespace, release.origin) == ("serving-app", "serving", "flux/app.yaml:1")
    assert release.layers == (str(tmp_path / "charts/app/values-prod.yaml"), {"gpus": 4}, {"replicas": 2})
    assert release.set_values == ("model.name=llama\\, 8b",)


def test_flux_target_path_values_are_merged_in_their_place(tmp_path):
    """helm-controller (ChartValuesFromReferences) merges a targetPath value in its place: spec.values, merged last,
    wins over it at the same path; a quoted value is a string without its quotes (ReplacePathValue)."""
    write_tree(
        tmp_path,
        {
            **CHART,
            "flux/app.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: app, namespace: ml}
                spec:
                  chart: {spec: {chart: ./charts/app, sourceRef: {kind: GitRepository, name: repo}}}
                  valuesFrom:
                    - {kind: ConfigMap, name: app-model, valuesKey: model, targetPath: model.name}
                    - {kind: ConfigMap, name: app-model, valuesKey: gpus, targetPath: gpus}
                    - {kind: ConfigMap, name: app-model, valuesKey: tag, targetPath: image.tag}
                  values: {model: {name: llama}, image: {repository: vllm}}
                """,
            "flux/model.yaml": """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: app-model}
                data: {model: mistral, gpus: "2", tag: "'0.6'"}
                """,
        },
    )
    (release,) = releases(tmp_path)
    assert release.layers == ({"model": {"name": "llama"}, "image": {"repository": "vllm"}},)
    assert (release.set_values, release.set_strings) == (("gpus=2",), ("image.tag=0.6",))


def test_a_flux_configmap_of_another_namespace_is_not_the_one(tmp_path):
    write_tree(
        tmp_path,
        {
            **CHART,
            "flux/app.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: app, namespace: ml}
                spec:
                  chart: {spec: {chart: ./charts/app, sourceRef: {kind: GitRepository, name: repo}}}
                  valuesFrom: [{kind: ConfigMap, name: app-values}]
                """,
            "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-values, namespace: dev}\ndata:\n  values.yaml: 'a: 3'\n",
        },
    )
    assert releases(tmp_path) == []


def test_argo_application_set_with_a_literal_path_and_templated_one(tmp_path):
    template = """
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: apps}
        spec:
          generators: [{list: {elements: [{env: prod}]}}]
          template:
            metadata: {name: 'app-{{env}}'}
            spec:
              source:
                path: PATH
                helm: {valueFiles: [values.yaml], parameters: [{name: a, value: "5", forceString: true}]}
              destination: {namespace: serving}
        """
    write_tree(tmp_path, {**CHART, "argo/literal.yaml": template.replace("PATH", "charts/app")})
    (release,) = releases(tmp_path)
    assert (release.name, release.namespace, release.set_strings) == ("apps", "serving", ("a=5",))
    write_tree(tmp_path, {"argo/literal.yaml": template.replace("PATH", "'charts/{{env}}'")})
    assert releases(tmp_path) == []


def test_a_release_readers_parse_is_handed_on_once_and_only_for_the_same_bytes(tmp_path):
    """parsed_once: the run lints the readers' parse of a file only when it read the same bytes, and only once (a
    second parse, a split run's worker or a fix's rerun, makes its own objects)."""
    path = str(tmp_path / "app.yaml")
    raw = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n"
    parses = Parses()
    assert parses.load(path, raw) is parses.load(path, raw)  # the readers parse it once
    kept = parses.taken(path)
    assert parses.taken(path) is None
    loaded = kept.take(raw, "deploy/app.yaml")
    assert loaded.path == "deploy/app.yaml" and [d.path for d in loaded.documents] == ["deploy/app.yaml"]
    assert loaded.documents[0].data["metadata"] == {"name": "app"}
    assert kept.take(raw, "deploy/app.yaml") is None
    parses.load(path, raw)
    assert parses.taken(path).take(raw.replace(b"app", b"web"), "deploy/app.yaml") is None  # changed since read
