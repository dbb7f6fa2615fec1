"""A required field a mutating webhook may set before the schema check (docs/precision.md, set M): the repositories'
shapes are Cluster API's Azure provider's (controller-gen's config/webhook/manifests.yaml and config/crd/bases, the
flavors generated into templates/), written here, not copied."""

from __future__ import annotations

import subprocess

import pytest
from conftest import lint_text, run_cli
from support.trees import write_tree

from gpulint.kube.mutating_webhooks import CreateRequest, Scope, guessed_plural, webhook_may_mutate
from gpulint.lint.findings import Severity

CRD = """
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: azuremachinetemplates.infrastructure.cluster.x-k8s.io
    spec:
      group: infrastructure.cluster.x-k8s.io
      names:
        kind: AzureMachineTemplate
        listKind: AzureMachineTemplateList
        plural: azuremachinetemplates
        singular: azuremachinetemplate
      scope: Namespaced
      versions:
      - name: v1beta1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {type: string}
              kind: {type: string}
              metadata: {type: object}
              spec:
                type: object
                required: [template]
                properties:
                  template:
                    type: object
                    required: [spec]
                    properties:
                      spec:
                        type: object
                        required: [vmSize]
                        properties:
                          vmSize: {type: string}
                          osDisk:
                            type: object
                            properties:
                              diskSizeGB: {type: integer}
                              osType: {type: string}
    """


def webhooks(group: str = "infrastructure.cluster.x-k8s.io", operations: tuple[str, ...] = ("CREATE", "UPDATE")) -> str:
    """controller-gen's layout of a defaulting webhook (kubebuilder's +kubebuilder:webhook marker)."""
    listed = "\n".join(f"            - {operation}" for operation in operations)
    return f"""
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: MutatingWebhookConfiguration
        metadata:
          name: mutating-webhook-configuration
        webhooks:
        - admissionReviewVersions:
          - v1
          - v1beta1
          clientConfig:
            service:
              name: webhook-service
              namespace: system
              path: /mutate-infrastructure-cluster-x-k8s-io-v1beta1-azuremachinetemplate
          failurePolicy: Fail
          matchPolicy: Equivalent
          name: default.azuremachinetemplate.infrastructure.cluster.x-k8s.io
          rules:
          - apiGroups:
            - {group}
            apiVersions:
            - v1beta1
            operations:
{listed}
            resources:
            - azuremachinetemplates
          sideEffects: None
        """


# A flavor generated into templates/ (hack/gen-flavors.sh), the VM size left to the webhook's defaulting
TEMPLATE = """
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureMachineTemplate
    metadata:
      name: ${CLUSTER_NAME}-md-0
      namespace: default
    spec:
      template:
        spec:
          osDisk:
            diskSizeGB: 128
            osType: Linux
    """


TEMPLATE_PATH = "templates/cluster-template-clusterclass-rke2.yaml"
FLAVOR_FILE = "templates/flavors/gpu/machine.yaml"


def capz(root, configuration: str | None) -> None:
    files = {
        "config/crd/bases/infrastructure.cluster.x-k8s.io_azuremachinetemplates.yaml": CRD,
        "templates/cluster-template-clusterclass-rke2.yaml": TEMPLATE,
    }
    if configuration is not None:
        files["config/webhook/manifests.yaml"] = configuration
        files["config/webhook/kustomization.yaml"] = "resources:\n- manifests.yaml\n"
    write_tree(root, files)


def findings(*args: str) -> list[dict]:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    found: list[dict] = run.json()["findings"]
    return found


def required_errors(found: list[dict]) -> list[tuple[str, int]]:
    return [
        (f["path"], f["line"])
        for f in found
        if f["rule"] == "schema-invalid" and f["severity"] == "error" and "Required value" in f["message"]
    ]


def test_a_required_field_no_webhook_sets_is_refused(repo):
    capz(repo, None)
    assert required_errors(findings(".")) == [("templates/cluster-template-clusterclass-rke2.yaml", 9)]


def test_a_required_field_the_providers_defaulting_webhook_may_set_is_not_checked(repo):
    capz(repo, webhooks())
    assert required_errors(findings(".")) == []
    assert required_errors(findings(".", "--jobs", "2")) == []  # split runs hand the configuration over
    run = run_cli("check", ".")
    assert "required fields of infrastructure.cluster.x-k8s.io/v1beta1 AzureMachineTemplate not checked" in run.stdout
    assert "mutating webhook 'default.azuremachinetemplate.infrastructure.cluster.x-k8s.io' may set them" in run.stdout


@pytest.mark.parametrize(
    ("group", "refused"), [("infrastructure.cluster.x-k8s.io", []), ("cluster.x-k8s.io", [(TEMPLATE_PATH, 9)])]
)
def test_the_template_named_alone_reads_the_webhook_from_the_repository_index(repo, group, refused):
    """pre-commit names the changed file alone: the work tree's webhook configuration and CRD still count."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    capz(repo, webhooks(group))
    assert required_errors(findings(TEMPLATE_PATH)) == refused


@pytest.mark.parametrize(
    ("group", "operations"),
    [
        ("cluster.x-k8s.io", ("CREATE", "UPDATE")),  # Cluster API core's webhook: another group
        ("infrastructure.cluster.x-k8s.io", ("UPDATE",)),  # called on update only: the create is refused
    ],
)
def test_a_webhook_that_does_not_match_the_create_leaves_the_error(repo, group, operations):
    capz(repo, webhooks(group, operations))
    assert required_errors(findings(".")) == [("templates/cluster-template-clusterclass-rke2.yaml", 9)]


def test_other_refusals_stay_errors_beside_a_defaulting_webhook(repo):
    """A webhook may add a missing field; gpulint does not assume it rewrites a wrong one."""
    capz(repo, webhooks())
    (repo / "templates/cluster-template-clusterclass-rke2.yaml").write_text(
        TEMPLATE.replace("diskSizeGB: 128", "diskSizeGB: large").replace("\n    ", "\n").lstrip()
    )
    found = findings(".")
    assert required_errors(found) == []
    errors = [f["message"] for f in found if f["severity"] == "error"]
    assert len(errors) == 1 and errors[0].startswith('spec.template.spec.osDisk.diskSizeGB: Invalid value: "large"')


def test_the_inventorys_webhook_configuration_counts(repo):
    capz(repo, None)
    write_tree(repo, {"inventory/webhooks.yaml": webhooks()})
    assert required_errors(findings("templates", "config", "--inventory", "inventory")) == []


# ---------------------------------------------------------------- how admission matches a create (webhook.go)

CREATE = CreateRequest("apps", "v1", "deployments", Scope.NAMESPACED, {"app": "x"}, None)


def rule(**fields):
    base = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}
    return {"name": "w.example.com", "rules": [{**base, **fields}]}


@pytest.mark.parametrize(
    ("webhook", "called"),
    [
        (rule(), True),
        (rule(apiGroups=["*"], apiVersions=["*"], operations=["*"], resources=["*"]), True),
        (rule(resources=["*/*"]), True),
        (rule(resources=["deployments/*"]), True),  # every subresource and the resource itself
        (rule(resources=["deployments/scale"]), False),
        (rule(resources=["*/status"]), False),
        (rule(resources=["statefulsets"]), False),
        (rule(apiGroups=["extensions"]), False),
        (rule(operations=["UPDATE", "DELETE"]), False),
        (rule(apiVersions=["v1beta1"]), True),  # matchPolicy Equivalent, v1's default: converted and called
        ({**rule(apiVersions=["v1beta1"]), "matchPolicy": "Exact"}, False),
        (rule(scope="Namespaced"), True),
        (rule(scope="Cluster"), False),
        ({**rule(), "objectSelector": {"matchLabels": {"app": "x"}}}, True),
        ({**rule(), "objectSelector": {"matchLabels": {"app": "y"}}}, False),
        ({**rule(), "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}}, True),
        # the namespace's labels are not known here: it may match
        ({**rule(), "namespaceSelector": {"matchLabels": {"inject": "true"}}}, True),
        ({**rule(), "matchConditions": [{"name": "c", "expression": "false"}]}, True),  # CEL: not evaluated
        ({"name": "w", "rules": []}, False),
    ],
)
def test_a_create_is_matched_as_the_api_server_matches_it(webhook, called):
    assert webhook_may_mutate(webhook, CREATE) is called


def test_a_known_namespace_is_matched_by_its_labels_and_its_name():
    selector = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}}
    team_a = CreateRequest("apps", "v1", "deployments", Scope.NAMESPACED, {}, {"kubernetes.io/metadata.name": "team-a"})
    team_b = CreateRequest("apps", "v1", "deployments", Scope.NAMESPACED, {}, {"kubernetes.io/metadata.name": "team-b"})
    assert webhook_may_mutate({**rule(), **selector}, team_a)
    assert not webhook_may_mutate({**rule(), **selector}, team_b)
    cluster_scoped = CreateRequest("apps", "v1", "deployments", Scope.CLUSTER, {}, None)
    assert webhook_may_mutate({**rule(), "namespaceSelector": {"matchLabels": {"x": "y"}}}, cluster_scoped)


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("AzureMachineTemplate", "azuremachinetemplates"),
        ("Ingress", "ingresses"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
    ],
)
def test_a_kind_without_a_crd_is_named_as_kubectl_guesses(kind, plural):
    assert guessed_plural(kind) == plural


def test_a_pods_containers_stay_required_beside_a_webhook_for_deployments():
    found = lint_text(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec: {}
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: MutatingWebhookConfiguration
        metadata: {name: m}
        webhooks:
        - name: deployments.example.com
          rules:
          - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
        """
    )
    assert [f.message for f in found if f.severity is Severity.ERROR] == [
        'spec: Required value: "containers" is required'
    ]


# -------------------------------------------- a file named alone in a kustomize folder reads the repository's index


@pytest.mark.parametrize(("configuration", "refused"), [(None, [(FLAVOR_FILE, 9)]), (webhooks(), [])])
def test_a_flavor_file_named_alone_is_judged_by_the_work_trees_crds_and_webhooks(
    repo, render_tools, configuration, refused
):
    """pre-commit names a flavor's file: gpulint builds its overlay, and the CRD and webhook configuration of the
    rest of the work tree judge what it builds (before, the overlay's objects met no CRD: nothing was checked)."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    capz(repo, configuration)
    write_tree(
        repo, {FLAVOR_FILE: TEMPLATE, "templates/flavors/gpu/kustomization.yaml": "resources:\n- machine.yaml\n"}
    )
    found = findings(FLAVOR_FILE, "--kubectl", render_tools["kubectl"])
    assert [(f["path"], f["line"]) for f in found if f["severity"] == "error"] == refused
