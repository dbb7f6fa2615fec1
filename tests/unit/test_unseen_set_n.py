"""Causes of false findings met on set N of held-out public repositories (docs/precision.md, "Set N": GitOps
monorepos and a platform repository), each with a failing, a clean and a trap case written the way those
repositories write them (no file of theirs is copied)."""

from __future__ import annotations

import os
import subprocess
from functools import partial

import pytest
from conftest import errors_and_warnings, lint_text, run_cli, said
from support.trees import write_tree

from gpulint.lint.findings import Severity
from gpulint.lint.inputs import sed_words


def not_rendered(result) -> list[tuple[str, str]]:
    return [
        (f["path"], f["severity"])
        for f in result.json()["findings"]
        if f["rule"] == "not-rendered" and f["severity"] in ("error", "warning")
    ]


# ------------------------------------------------- overlays Flux builds, whose inputs lie outside their folder

# A Flux monorepo of several clusters: each cluster's Flux Kustomization builds its own apps folder, whose
# per-namespace overlays share a replacements file and a component kept two folders up.
FLUX_APPS = {
    "kubernetes/components/replacements/ks.yaml": """
        - source:
            kind: Namespace
            fieldPath: metadata.name
          targets:
            - select:
                kind: ConfigMap
              fieldPaths:
                - data.namespace
              options:
                create: true
        """,
    "kubernetes/components/namespace/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./namespace.yaml
        """,
    "kubernetes/components/namespace/namespace.yaml": """
        apiVersion: v1
        kind: Namespace
        metadata:
          name: _
        """,
    "kubernetes/apps/main/llm/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: llm
        components:
          - ../../../components/namespace
        replacements:
          - path: ../../../components/replacements/ks.yaml
        resources:
          - ./settings.yaml
        """,
    "kubernetes/apps/main/llm/settings.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          model: qwen3
        """,
}
FLUX_CLUSTER = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: cluster-apps
      namespace: flux-system
    spec:
      interval: 1h
      path: {path}
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
    """


@pytest.mark.parametrize("path", ["./kubernetes/apps/main", "./kubernetes/apps/main/llm", "kubernetes/apps/${CLUSTER}"])
def test_an_overlay_flux_builds_with_inputs_outside_its_folder_is_not_checked(repo, render_tools, path):
    write_tree(repo, {**FLUX_APPS, "kubernetes/clusters/main/apps.yaml": FLUX_CLUSTER.format(path=path)})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [("kubernetes/apps/main/llm/kustomization.yaml", "warning")], result.stdout
    message = said(next(f for f in result.json()["findings"] if f["rule"] == "not-rendered"))
    assert "the Flux Kustomization at kubernetes/clusters/main/apps.yaml:8 builds it" in message
    assert "load restrictor off" in message
    # kustomize's wrapper quotes the builtin's whole config before the cause: the cause comes first
    assert message.startswith("kubectl kustomize failed: builtin ReplacementTransformer: security"), message


def test_an_overlay_flux_builds_whose_inputs_are_inside_is_checked(repo, render_tools):
    files = dict(FLUX_APPS)
    files["kubernetes/apps/main/llm/kustomization.yaml"] = "resources:\n  - ./settings.yaml\n"
    write_tree(repo, {**files, "kubernetes/clusters/main/apps.yaml": FLUX_CLUSTER.format(path="./kubernetes/apps")})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [], result.stdout


@pytest.mark.parametrize(
    "path",
    [
        "./kubernetes/apps/test",  # another cluster's folder
        "./",  # the root names no overlay
        "${APPS}",  # a path of variables alone names nothing
        "./kubernetes/apps/main/llm-extra",  # a folder whose name only starts alike
    ],
)
def test_an_overlay_no_flux_kustomization_builds_is_still_refused(repo, render_tools, path):
    write_tree(repo, {**FLUX_APPS, "kubernetes/clusters/main/apps.yaml": FLUX_CLUSTER.format(path=path)})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [("kubernetes/apps/main/llm/kustomization.yaml", "error")], result.stdout


def test_a_kustomize_kustomization_with_a_path_key_is_no_flux_kustomization(repo, render_tools):
    not_flux = FLUX_CLUSTER.format(path="./kubernetes/apps/main").replace(
        "kustomize.toolkit.fluxcd.io/v1", "kustomize.config.k8s.io/v1beta1"
    )
    write_tree(repo, {**FLUX_APPS, "kubernetes/clusters/main/other.yaml": not_flux})
    result = run_cli("check", "kubernetes/apps", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [("kubernetes/apps/main/llm/kustomization.yaml", "error")], result.stdout


# -------------------------------------------------------- a Go template's braces in a kustomization's comment

WEBHOOK_OVERLAY = {
    "kubernetes/components/repos/app-template/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        resources:
          - ./ocirepository.yaml
        """,
    "kubernetes/components/repos/app-template/ocirepository.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: OCIRepository
        metadata:
          name: app-template
        spec:
          interval: 1h
          ref:
            tag: 4.4.0
          url: oci://ghcr.io/bjw-s-labs/helm/app-template
        """,
    "kubernetes/apps/selfhosted/webhook/app/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        components:
          - ../../../../components/repos/app-template
        configMapGenerator:
          - files:
              - hooks.yaml=./resources/hooks.yaml
            name: webhook-configmap
        generatorOptions:
          annotations:
            # substitution is off here: hooks.yaml uses `{{ getenv "TOKEN" }}`, which webhook expands itself
            kustomize.toolkit.fluxcd.io/substitute: disabled
          disableNameSuffixHash: true
        """,
    "kubernetes/apps/selfhosted/webhook/app/resources/hooks.yaml": """
        - id: renovate
          execute-command: /scripts/run.sh
        """,
}


def test_template_braces_in_a_comment_leave_the_overlay_plain_yaml(repo, render_tools):
    write_tree(repo, WEBHOOK_OVERLAY)
    result = run_cli("check", "kubernetes/apps", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [], result.stdout
    assert {f["rule"] for f in result.json()["findings"]} <= {"not-rendered"}, result.stdout


def test_a_value_of_template_braces_is_still_a_template():
    findings = lint_text(
        """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings  # {{ not a template: a comment }}
        data:
          url: {{ .Values.url }}
        """,
        "chart-less/configmap.yaml",
    )
    assert [(f.rule, f.severity, f.line) for f in findings] == [("not-rendered", Severity.INFO, 6)]


def test_a_hash_inside_a_quoted_value_opens_no_comment():
    findings = lint_text(
        """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          channel: "#general" {{ .Values.more }}
        """,
        "chart-less/configmap.yaml",
    )
    assert [(f.rule, f.severity) for f in findings] == [("not-rendered", Severity.INFO)]


# ------------------------------------------------------- a policy engine's patterns are not pod templates

KYVERNO = """
    apiVersion: {api}
    kind: ClusterPolicy
    metadata:
      name: inject-sidecar
    spec:
      rules:
        - name: inject-envoy
          match:
            any:
              - resources:
                  kinds:
                    - Deployment
          mutate:
            patchStrategicMerge:
              spec:
                template:
                  metadata:
                    annotations:
                      (vpc-lattices-svcs.amazonaws.com/agent-inject): "true"
                  spec:
                    containers:
                      - name: envoy-sigv4
                        image: public.ecr.aws/aws-observability/aws-sigv4-proxy:1.10
                        resources:
                          limits:
                            nvidia.com/gpu: 1
"""


def test_a_kyverno_policys_patch_is_not_read_as_a_pod_template():
    findings = lint_text(KYVERNO.format(api="kyverno.io/v1"), "charts/platform/templates/policy.yaml")
    assert [(f.rule, f.severity) for f in findings if f.severity != Severity.INFO] == []


def test_the_same_pod_shape_in_another_custom_resource_is_still_read():
    findings = lint_text(KYVERNO.format(api="example.com/v1"), "charts/platform/templates/policy.yaml")
    assert "api-rejected" in [f.rule for f in findings if f.severity == Severity.ERROR]


# ---------------------------------------------------------- a name's word that a script beside it fills in with sed

WIPE_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: disk-wipe-HOSTNAME
      namespace: kube-system
    spec:
      restartPolicy: Never
      nodeName: HOSTNAME
      containers:
        - name: disk-wipe
          image: ubuntu:24.04
          command: ["/bin/sh", "-c", "sgdisk --zap-all /dev/nvme0n1"]
    """
WIPE_SCRIPT = """
    #!/usr/bin/env bash
    for i in node-1 node-2 node-3; do
      cat wipe-rook.yaml | sed -e "s/HOSTNAME/$i/g" | kubectl apply -f -
    done
    """


serious_rules = partial(errors_and_warnings, fields=("path", "rule"))


def test_a_name_word_a_script_beside_it_replaces_with_sed_is_a_fill_in(repo):
    write_tree(
        repo, {"hack/wipe-rook.yaml": WIPE_POD, "hack/wipe-shell.yaml": WIPE_POD, "hack/wipe-rook.sh": WIPE_SCRIPT}
    )
    result = run_cli("check", "hack", "--format", "json")
    assert serious_rules(result) == [], result.stdout
    assert any("HOSTNAME is a placeholder" in f["message"] for f in result.json()["findings"]), result.stdout


def test_a_folders_scripts_are_read_once_for_the_files_and_the_repository_index(repo, monkeypatch):
    """Two manifests of the folder named (as pre-commit names them) and a third read through the repository index:
    the collection's one reader reads the folder's scripts once for the run (inputs/sed_words.FolderScripts)."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the index reads the rest of the work tree
    names = ("hack/wipe-rook.yaml", "hack/wipe-shell.yaml", "hack/wipe-ssd.yaml")
    write_tree(repo, {**dict.fromkeys(names, WIPE_POD), "hack/wipe-rook.sh": WIPE_SCRIPT})
    read: list[str] = []
    real = sed_words._sed_words

    def counted(directory: str, exclude: tuple[str, ...]) -> frozenset[str]:
        read.append(os.path.realpath(directory))
        return real(directory, exclude)

    monkeypatch.setattr(sed_words, "_sed_words", counted)
    result = run_cli("check", *names[:2], "--format", "json")
    assert serious_rules(result) == [], result.stdout
    assert read == [os.path.realpath(repo / "hack")]


def test_a_name_with_the_word_filled_in_is_checked_as_any_name(repo):
    write_tree(repo, {"hack/wipe-rook.yaml": WIPE_POD.replace("HOSTNAME", "node-1"), "hack/wipe-rook.sh": WIPE_SCRIPT})
    result = run_cli("check", "hack", "--format", "json")
    assert result.json()["findings"] == [], result.stdout


def _git(repo, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.mark.parametrize(
    "left_out",
    [
        {".gitignore": "*.sh\n"},  # a script each clone generates, or one kept locally
        {"hack/.gitignore": "/wipe-rook.sh\n"},
        {".git/info/exclude": "hack/wipe-*.sh\n"},
        {".gpulint.yaml": "exclude: ['hack/wipe-rook.sh']\n"},
        {".gpulint.yaml": "exclude: ['*.sh']\n"},
    ],
)
def test_a_script_the_walk_leaves_out_fills_in_no_word(repo, left_out):
    """A script git ignores (.gitignore, .git/info/exclude) is in no other checkout, and one gpulint's exclude names
    is not the user's: the word it replaces is no fill-in, so the name is refused as anywhere else."""
    _git(repo, "init", "-q")
    write_tree(repo, {"hack/wipe-rook.yaml": WIPE_POD, "hack/wipe-rook.sh": WIPE_SCRIPT})
    (repo / ".git/info").mkdir(exist_ok=True)
    for name, text in left_out.items():
        (repo / name).write_text(text)
    result = run_cli("check", "hack", "--format", "json")
    assert serious_rules(result) == [("hack/wipe-rook.yaml", "api-rejected")], result.stdout
    alone = run_cli("check", "hack/wipe-rook.yaml", "--format", "json")  # as pre-commit names it
    assert serious_rules(alone) == [("hack/wipe-rook.yaml", "api-rejected")], alone.stdout


@pytest.mark.parametrize(
    "setup",
    [
        "tracked",  # a file in git's index is never ignored, whatever the patterns say (git add -f)
        "no work tree",  # outside a git work tree no .gitignore applies, as git has it
        "negated",  # a later "!" pattern re-includes it
    ],
)
def test_a_script_git_keeps_fills_in_words_whatever_an_ignore_file_says(repo, setup):
    ignore = "*.sh\n!wipe-rook.sh\n" if setup == "negated" else "*.sh\n"
    write_tree(repo, {"hack/wipe-rook.yaml": WIPE_POD, "hack/wipe-rook.sh": WIPE_SCRIPT})
    (repo / ".gitignore").write_text(ignore)
    if setup != "no work tree":
        _git(repo, "init", "-q")
    if setup == "tracked":
        _git(repo, "add", "-f", "hack/wipe-rook.sh")
    result = run_cli("check", "hack", "--format", "json")
    assert serious_rules(result) == [], result.stdout


@pytest.mark.parametrize(
    "files",
    [
        {"hack/wipe-rook.yaml": WIPE_POD},  # no script fills it in
        {"hack/wipe-rook.yaml": WIPE_POD, "scripts/wipe.sh": WIPE_SCRIPT},  # the script is in another folder
        {"hack/wipe-rook.yaml": WIPE_POD, "hack/wipe-rook.sh": WIPE_SCRIPT.replace("HOSTNAME", "NODENAME")},
        # the script names the word but replaces another one
        {"hack/wipe-rook.yaml": WIPE_POD, "hack/wipe-rook.sh": 'echo HOSTNAME; sed -e "s/REGION/eu/" a.yaml\n'},
    ],
)
def test_a_name_word_no_script_of_its_folder_replaces_is_still_refused(repo, files):
    write_tree(repo, files)
    result = run_cli("check", "hack", "--format", "json")
    assert serious_rules(result) == [("hack/wipe-rook.yaml", "api-rejected")], result.stdout


# --------------------------------------------------- a builtin's failure worded with its cause, not its config


def test_a_helm_chart_overlay_says_why_it_was_not_built(repo, render_tools):
    write_tree(
        repo,
        {
            "components/arc-controller/kustomization.yaml": """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                helmCharts:
                  - name: gha-runner-scale-set-controller
                    releaseName: arc-controller
                    namespace: actions-runner-system
                    repo: oci://ghcr.io/actions/actions-runner-controller-charts
                    version: "0.14.2"
                    includeCRDs: true
                """
        },
    )
    result = run_cli("check", "components", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert not_rendered(result) == [("components/arc-controller/kustomization.yaml", "warning")], result.stdout
    message = said(next(f for f in result.json()["findings"] if f["rule"] == "not-rendered"))
    assert message.startswith(
        "kubectl kustomize failed: builtin HelmChartInflationGenerator: must specify --enable-helm"
    ), message
    assert "releaseName: arc-controller" not in message
