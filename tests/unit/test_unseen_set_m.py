"""Causes of false findings met on set M of held-out public repositories (docs/precision.md, "Set M"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied)."""

from __future__ import annotations

import subprocess
from functools import partial

import pytest
from conftest import errors_and_warnings, lint_text, run_cli, said
from support.trees import write_tree

from gpulint.lint.findings import Severity

serious = partial(errors_and_warnings, fields=("path", "line", "rule", "severity"))


# ---------------------------------------- overlays a script or Makefile builds, restrictor off, through variables

# A Cluster API provider's layout: each flavor patches with a file of a shared folder outside its own, and
# hack/gen-flavors.sh builds every flavor in a loop; e2e templates are built by the Makefile through variables.
FLAVORS = {
    "templates/azure-cluster-identity/identity-ref.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          identity: workload
        """,
    "templates/flavors/base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
    "templates/flavors/base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "templates/flavors/gpu/kustomization.yaml": """
        resources:
        - ../base
        patches:
        - path: ../../azure-cluster-identity/identity-ref.yaml
        """,
    "test/e2e/data/infra/v1beta1/cluster-template-aks/kustomization.yaml": """
        resources:
        - ../../../../../../templates/flavors/base
        patches:
        - path: ../../../../../../templates/azure-cluster-identity/identity-ref.yaml
        """,
}
GEN_FLAVORS = """
    #!/usr/bin/env bash
    set -o errexit
    REPO_ROOT=$(dirname "${BASH_SOURCE[0]}")/..
    flavors_dir="${REPO_ROOT}/templates/flavors/"

    for name in $(find "${flavors_dir}"* -maxdepth 0 -type d -print0 | xargs -0 -I {} basename {} | grep -v base); do
      ${KUSTOMIZE} build --load-restrictor LoadRestrictionsNone "${flavors_dir}${name}" > "${REPO_ROOT}/templates/cluster-template-${name}.yaml"
    done
    """
MAKEFILE = """
    ROOT_DIR_RELATIVE := .
    ROOT_DIR := $(shell dirname $(realpath $(firstword $(MAKEFILE_LIST))))
    E2E_DATA_DIR ?= $(ROOT_DIR)/test/e2e/data
    AZURE_TEMPLATES := $(E2E_DATA_DIR)/infra

    generate-e2e-templates:
    \t$(KUSTOMIZE) build $(AZURE_TEMPLATES)/v1beta1/cluster-template-aks --load-restrictor LoadRestrictionsNone > $(AZURE_TEMPLATES)/v1beta1/cluster-template-aks.yaml
    """


def _overlay_findings(result) -> list[tuple[str, str]]:
    return [(path, severity) for path, _, rule, severity in serious(result) if rule == "not-rendered"]


def test_overlays_a_script_builds_in_a_loop_with_the_restrictor_off_are_not_checked(repo, render_tools):
    write_tree(repo, {**FLAVORS, "hack/gen-flavors.sh": GEN_FLAVORS, "Makefile": MAKEFILE})
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert _overlay_findings(result) == [
        ("templates/flavors/gpu/kustomization.yaml", "warning"),
        ("test/e2e/data/infra/v1beta1/cluster-template-aks/kustomization.yaml", "warning"),
    ], result.stdout
    messages = [said(f) for f in result.json()["findings"] if f["rule"] == "not-rendered"]
    assert "hack/gen-flavors.sh builds it with --load-restrictor=LoadRestrictionsNone" in messages[0]
    assert "Makefile builds it with --load-restrictor=LoadRestrictionsNone" in messages[1]
    assert not any(m.startswith("kubectl kustomize failed: E1") for m in messages), messages  # klog's err=< form


def test_the_same_overlays_with_nothing_that_builds_them_so_are_errors(repo, render_tools):
    write_tree(repo, FLAVORS)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert _overlay_findings(result) == [
        ("templates/flavors/gpu/kustomization.yaml", "error"),
        ("test/e2e/data/infra/v1beta1/cluster-template-aks/kustomization.yaml", "error"),
    ], result.stdout


@pytest.mark.parametrize(
    "script",
    [
        # the loop's folder is another one
        GEN_FLAVORS.replace(
            'flavors_dir="${REPO_ROOT}/templates/flavors/"', 'flavors_dir="${REPO_ROOT}/templates/addons/"'
        ),
        # a path that is all variables names no overlay
        GEN_FLAVORS.replace('"${flavors_dir}${name}"', '"${dir}"'),
        # the restrictor left on
        GEN_FLAVORS.replace("--load-restrictor LoadRestrictionsNone ", ""),
    ],
)
def test_a_loop_that_does_not_build_the_overlay_unrestricted_leaves_it_an_error(repo, render_tools, script):
    write_tree(repo, {**FLAVORS, "hack/gen-flavors.sh": script})
    result = run_cli("check", "templates", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert _overlay_findings(result) == [("templates/flavors/gpu/kustomization.yaml", "error")], result.stdout


# ------------------------------------------------------------- an anchor defined again, as go-yaml (Flux) reads it

# billimek/k8s-gitops' HelmReleases (bjw-s' app-template): `port: &port 32400` in the controller's probes, and again
# in the service further down; each alias refers to the latest definition.
HELMRELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: plex
  namespace: default
spec:
  interval: 30m
  chartRef:
    kind: OCIRepository
    name: app-template
  values:
    controllers:
      plex:
        containers:
          app:
            probes:
              liveness: &probes
                enabled: true
                spec:
                  httpGet:
                    path: /identity
                    port: &port 32400
              readiness: *probes
    service:
      app:
        ports:
          http:
            port: &port 32401
            targetPort: *port
"""


def test_an_anchor_defined_again_is_read_as_go_yaml_reads_it():
    findings = lint_text(HELMRELEASE, "kubernetes/default/plex/plex.yaml")
    assert [(f.rule, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)] == []


def test_an_alias_reads_the_latest_definition_of_its_anchor():
    from gpulint.lint.inputs.loader import load_text

    loaded = load_text("plex.yaml", "---\nname: a\n---\n" + HELMRELEASE)
    assert loaded.problems == []
    values = loaded.documents[1].data["spec"]["values"]
    assert values["service"]["app"]["ports"]["http"]["targetPort"] == 32401
    assert values["controllers"]["plex"]["containers"]["app"]["probes"]["readiness"]["spec"]["httpGet"]["port"] == 32400
    assert [d.index for d in loaded.documents] == [0, 1]


def test_an_alias_to_no_anchor_is_still_a_yaml_error():
    findings = lint_text(HELMRELEASE.replace("targetPort: *port", "targetPort: *nope"))
    assert [(f.rule, f.severity) for f in findings if f.rule == "yaml-invalid"] == [("yaml-invalid", Severity.ERROR)]


# ----------------------------------------------------- a kro ResourceGraphDefinition's ${...} CEL expressions

# The EKS workshop's kro module: a ResourceGraphDefinition whose Deployment takes its labels from the instance's
# spec; kro fills them in when it makes the Deployment.
RGD = """
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: web-application
spec:
  schema:
    apiVersion: v1alpha1
    kind: WebApplication
    spec:
      appName: string | required=true
      replicas: integer | default=1
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.spec.appName}
      spec:
        replicas: ${schema.spec.replicas}
        selector:
          matchLabels:
            app.kubernetes.io/name: ${schema.spec.appName}
        template:
          metadata:
            labels:
              app.kubernetes.io/name: {label}
          spec:
            containers:
            - name: app
              image: public.ecr.aws/aws-containers/retail-store-sample-ui:1.2.1
"""


def test_a_kro_expression_in_a_label_is_a_fill_in():
    findings = lint_text(RGD.replace("{label}", "${schema.spec.appName}"), "kro/rgds/webapp-rgd.yaml")
    assert [(f.rule, f.severity) for f in findings if f.severity != Severity.INFO] == []
    assert any(f.rule == "not-rendered" and "${schema.spec.appName}" in f.message for f in findings)


def test_a_label_written_out_wrongly_in_the_same_template_is_still_refused():
    findings = lint_text(RGD.replace("{label}", "web app!"), "kro/rgds/webapp-rgd.yaml")
    assert [f.rule for f in findings if f.severity == Severity.ERROR] == ["api-rejected"]


# ------------------------------------------- a selector on a label only an EKS managed node group sets

# The EKS workshop: Karpenter NodePools in some modules, and a spot module whose Terraform makes an EKS managed node
# group with capacity type SPOT; its Deployment selects `eks.amazonaws.com/capacityType: SPOT`.
NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: inferentia
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: inferentia}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [inf2]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""
SPOT_WORKLOAD = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: catalog
spec:
  selector: {matchLabels: {app: catalog}}
  template:
    metadata: {labels: {app: catalog}}
    spec:
      nodeSelector:
        {selector}
      containers:
      - name: catalog
        image: public.ecr.aws/aws-containers/retail-store-sample-catalog:1.2.1
"""


def spot_findings(repo, selector: str) -> list[tuple[str, int, str, str]]:
    write_tree(
        repo,
        {
            "modules/aiml/inferentia/nodepool.yaml": NODEPOOL,
            "modules/mng/spot/deployment.yaml": SPOT_WORKLOAD.replace("{selector}", selector),
        },
    )
    result = run_cli("check", ".", "--format", "json")
    return [f for f in serious(result) if f[2] == "over-tight-affinity"]


def test_a_pod_on_an_eks_managed_spot_node_group_is_not_judged_by_karpenter_pools(repo):
    assert spot_findings(repo, "eks.amazonaws.com/capacityType: SPOT") == []


def test_karpenters_own_capacity_type_is_still_judged_by_the_pools(repo):
    # the trap: the pools speak for karpenter.sh/capacity-type, and none offers spot
    assert [f[:3] for f in spot_findings(repo, "karpenter.sh/capacity-type: spot")] == [
        ("modules/mng/spot/deployment.yaml", 11, "over-tight-affinity")
    ]


# ------------------------------------------- overlays a failed overlay builds from, rendered in its place

# kubeflow/manifests: example/ builds every application's overlay, and one of them a remote base gpulint does not
# fetch; each application's base Deployment gets its selector from the base's commonLabels.
KUBEFLOW = {
    "example/kustomization.yaml": """
        resources:
        - ../apps/poddefaults/overlays/cert-manager
        - ../apps/pipeline/third-party/argo
        """,
    "apps/pipeline/third-party/argo/kustomization.yaml": """
        resources:
        - https://github.com/argoproj/argo-workflows/manifests/base/workflow-controller?ref=v3.7.3
        """,
    "apps/poddefaults/overlays/cert-manager/kustomization.yaml": "resources:\n- ../../base\nnamespace: kubeflow\n",
    "apps/poddefaults/base/kustomization.yaml": """
        resources:
        - deployment.yaml
        commonLabels:
          app: poddefaults
        patches:
        - path: patches/add_controller_config.yaml
        """,
    "apps/poddefaults/base/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: deployment
        spec:
          template:
            spec:
              containers:
              - name: admission-webhook
                image: ghcr.io/kubeflow/kubeflow/poddefaults-webhook:v1.10.0
        """,
    "apps/poddefaults/base/patches/add_controller_config.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: deployment
        spec:
          template:
            spec:
              containers:
              - name: admission-webhook
                args: [--v=2]
        """,
    # a patch no kustomization lists any more, in the folder the base reads its patches from
    "apps/poddefaults/base/patches/add_service_account.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: deployment
        spec:
          template:
            spec:
              serviceAccountName: poddefaults
        """,
}


def test_the_overlays_a_failed_overlay_lists_are_rendered_alone(repo, render_tools):
    write_tree(repo, KUBEFLOW)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [("apps/pipeline/third-party/argo/kustomization.yaml", 2, "not-rendered", "warning")], (
        result.stdout
    )


def test_a_base_that_is_broken_alone_is_still_refused_through_its_overlay(repo, render_tools):
    # the trap: without commonLabels the Deployment has no selector however it is built
    files = {**KUBEFLOW, "apps/poddefaults/base/kustomization.yaml": "resources:\n- deployment.yaml\n"}
    del files["apps/poddefaults/base/patches/add_controller_config.yaml"]
    write_tree(repo, files)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    found = [f for f in serious(result) if f[0] == "apps/poddefaults/base/deployment.yaml"]
    assert [(f[2], f[3]) for f in found] == [("schema-invalid", "error")], result.stdout


def test_a_patches_folder_no_kustomization_reads_from_is_still_linted(repo, render_tools):
    # the trap: the folder is named patches, but no kustomization reads a patch from it
    files = {k: v for k, v in KUBEFLOW.items() if k.startswith("apps/poddefaults/base/patches/")}
    write_tree(repo, files)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert {f[0] for f in serious(result)} == {
        "apps/poddefaults/base/patches/add_controller_config.yaml",
        "apps/poddefaults/base/patches/add_service_account.yaml",
    }, result.stdout


def test_a_folder_that_only_holds_the_word_patch_is_no_patch_folder(repo, render_tools):
    # the trap: dispatcher/ holds the base's resource and, beside it, a manifest applied alone
    files = {
        "deploy/kustomization.yaml": "resources:\n- dispatcher/deployment.yaml\n",
        "deploy/dispatcher/deployment.yaml": KUBEFLOW["apps/poddefaults/base/deployment.yaml"],
        "deploy/dispatcher/job.yaml": KUBEFLOW["apps/poddefaults/base/patches/add_service_account.yaml"],
    }
    write_tree(repo, files)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert "deploy/dispatcher/job.yaml" in {f[0] for f in serious(result)}, result.stdout


# Cluster API Azure's aks-clusterclass flavor: its kustomization reads no patches any more, and its patches/ folder
# still holds the partial AzureManagedControlPlaneTemplate it once patched with
AKS_CLUSTERCLASS = {
    "templates/flavors/aks-clusterclass/kustomization.yaml": "namespace: default\nresources:\n- cm.yaml\n",
    "templates/flavors/aks-clusterclass/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
    "templates/flavors/aks-clusterclass/patches/identity-ref.yaml": KUBEFLOW[
        "apps/poddefaults/base/patches/add_service_account.yaml"
    ],
}


@pytest.mark.parametrize("named", [".", "templates/flavors/aks-clusterclass/patches/identity-ref.yaml"])
def test_a_patches_folder_of_an_overlay_that_reads_no_patches_is_not_linted(repo, render_tools, named):
    write_tree(repo, AKS_CLUSTERCLASS)
    result = run_cli("check", named, "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [], result.stdout


def test_a_patches_folder_that_is_an_overlay_itself_is_linted(repo, render_tools):
    # the trap: patches/ has its own kustomization (an overlay), so what it lists is rendered and refused
    files = {
        **AKS_CLUSTERCLASS,
        "templates/flavors/aks-clusterclass/patches/kustomization.yaml": "resources:\n- identity-ref.yaml\n",
    }
    write_tree(repo, files)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert {f[0] for f in serious(result)} == {"templates/flavors/aks-clusterclass/patches/identity-ref.yaml"}, (
        result.stdout
    )


# ------------------------------------------- a base's file named alone is built as the overlay over it builds it

# kubeflow/manifests' notebook-controller: manager/ is a base that default/ builds with the commonLabels that make the
# Deployment's selector; base/ builds default/, and overlays/kubeflow builds base/.
NOTEBOOK_CONTROLLER = {
    "upstream/manager/kustomization.yaml": "resources:\n- manager.yaml\n",
    "upstream/manager/manager.yaml": KUBEFLOW["apps/poddefaults/base/deployment.yaml"],
    "upstream/default/kustomization.yaml": """
        namespace: notebook-controller-system
        namePrefix: notebook-controller-
        commonLabels:
          app: notebook-controller
        bases:
        - ../manager
        """,
    "upstream/base/kustomization.yaml": "resources:\n- ../default\n",
    "upstream/overlays/kubeflow/kustomization.yaml": "resources:\n- ../../base\nnamespace: kubeflow\n",
}


def test_a_bases_file_named_alone_is_built_by_the_overlays_over_it(repo, render_tools):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the overlays over it are looked for in its work tree
    write_tree(repo, NOTEBOOK_CONTROLLER)
    result = run_cli("check", "upstream/manager/manager.yaml", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [], result.stdout


def test_outside_a_work_tree_a_bases_file_is_built_as_named(repo, render_tools):
    # the trap for the walk: no git work tree bounds it, so gpulint looks for no overlay over the base
    write_tree(repo, NOTEBOOK_CONTROLLER)
    result = run_cli("check", "upstream/manager/manager.yaml", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [(f[0], f[2]) for f in serious(result)] == [("upstream/manager/manager.yaml", "schema-invalid")], (
        result.stdout
    )


def test_a_base_no_overlay_builds_is_built_alone(repo, render_tools):
    # the trap: nothing builds manager/ with labels, so its Deployment has no selector however it is applied
    write_tree(repo, {k: v for k, v in NOTEBOOK_CONTROLLER.items() if k.startswith("upstream/manager/")})
    result = run_cli("check", "upstream/manager/manager.yaml", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert [(f[0], f[2], f[3]) for f in serious(result)] == [
        ("upstream/manager/manager.yaml", "schema-invalid", "error")
    ], result.stdout


def test_an_overlay_over_a_base_that_lists_a_remote_resource_is_not_its_builder(repo, render_tools):
    # the trap for the builder: overlays/kubeflow also lists a remote base gpulint does not fetch; default/ builds
    files = {
        **NOTEBOOK_CONTROLLER,
        "upstream/overlays/kubeflow/kustomization.yaml": """
            resources:
            - ../../base
            - https://github.com/kubeflow/manifests/common/istio/kubeflow-istio-resources/base?ref=v1.10.0
            """,
    }
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_tree(repo, files)
    result = run_cli("check", "upstream/manager/manager.yaml", "--kubectl", render_tools["kubectl"], "--format", "json")
    assert serious(result) == [], result.stdout
