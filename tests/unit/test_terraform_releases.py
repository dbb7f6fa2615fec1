"""A chart of the repository that a Terraform `helm_release` installs is rendered with the values the Terraform
gives it (render/releases, inputs/hcl), shaped as aws-ia/terraform-aws-eks-blueprints' patterns write them; a value
written with an expression only Terraform computes is given but not known: never made up."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_cli, said

from gpulint.lint.inputs import hcl
from gpulint.lint.inputs.render.releases import Releases


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_tree(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def serious(result) -> list[tuple[str, str, str]]:
    return [
        (f["path"], f["rule"], f["severity"])
        for f in result.json()["findings"]
        if f["severity"] in ("error", "warning")
    ]


# A pattern's chart whose Deployment is named from a value only the Terraform gives (values.yaml lacks it).
DEMO_CHART = {
    "patterns/lattice/charts/demo/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "patterns/lattice/charts/demo/values.yaml": "awsAccountID: to-replace\nallowedNamespace:\n",
    "patterns/lattice/charts/demo/templates/deploy.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}-{{ .Values.version }}
          labels: {account: "{{ .Values.awsAccountID }}"}
        spec:
          selector: {matchLabels: {app: demo}}
          template:
            metadata: {labels: {app: demo}}
            spec:
              containers:
              - name: app
                image: public.ecr.aws/nginx/nginx:1.27
                resources: {limits: {cpu: 100m, memory: 64Mi}}
        """,
}
DEMO_RELEASE = """
    resource "helm_release" "demo_application" {
      name             = "demo-${terraform.workspace}"
      chart            = "./charts/demo"
      create_namespace = true
      namespace        = local.app_namespace

      values = [
        <<EOF
        awsAccountID: "${data.aws_caller_identity.current.account_id}"
        version : "v1"
        allowedCluster: ${terraform.workspace == "cluster1" ? "eks-cluster2" : "eks-cluster1"}
        allowedNamespace: "apps"
      EOF
      ]
    }
    """


def test_a_value_the_terraform_gives_a_local_chart_is_its_value(repo, render_tools):
    write_tree(repo, {**DEMO_CHART, "patterns/lattice/eks.tf": DEMO_RELEASE})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert serious(result) == [], result.stdout


def test_without_the_terraform_the_chart_is_refused_as_before(repo, render_tools):
    """The same chart with no release: its defaults name the Deployment `release-name-`, which the API refuses."""
    write_tree(repo, DEMO_CHART)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert ("patterns/lattice/charts/demo/templates/deploy.yaml", "api-rejected", "error") in serious(result)


def test_a_release_of_a_remote_chart_of_the_same_name_gives_the_local_one_nothing(repo, render_tools):
    remote = DEMO_RELEASE.replace(
        'chart            = "./charts/demo"', 'repository = "https://example.github.io"\n  chart = "./charts/demo"'
    )
    write_tree(repo, {**DEMO_CHART, "patterns/lattice/eks.tf": remote})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert ("patterns/lattice/charts/demo/templates/deploy.yaml", "api-rejected", "error") in serious(result)


# A Karpenter pool chart whose zones come from Terraform (`set_list` of `local.azs`); its default `[]` does not render.
POOL_CHART = {
    "patterns/bottlerocket/karpenter-resources/Chart.yaml": "apiVersion: v2\nname: karpenter-resources\nversion: 0.1.0\n",
    "patterns/bottlerocket/karpenter-resources/values.yaml": "nodepool:\n  zone: []\n",
    "patterns/bottlerocket/karpenter-resources/templates/nodepool.yaml": """
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata:
          name: default
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
              requirements:
              - key: topology.kubernetes.io/zone
                operator: In
                values: {{- toYaml .Values.nodepool.zone | nindent 8 }}
              - key: kubernetes.io/arch
                operator: In
                values: [amd64]
        """,
}
POOL_RELEASE = """
    resource "helm_release" "karpenter_resources" {
      name  = "karpenter-resources"
      chart = "./karpenter-resources"
      set_list {
        name  = "nodepool.zone"
        value = %s
      }
    }
    """


def test_a_value_of_a_terraform_expression_leaves_the_chart_not_checked(repo, render_tools):
    write_tree(repo, {**POOL_CHART, "patterns/bottlerocket/addons.tf": POOL_RELEASE % "local.azs"})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    template = "patterns/bottlerocket/karpenter-resources/templates/nodepool.yaml"
    assert serious(result) == [(template, "not-rendered", "warning")], result.stdout
    message = said(result.json()["findings"][0])
    assert "release 'karpenter-resources' of patterns/bottlerocket/addons.tf:1" in message
    assert "gives .Values.nodepool.zone with an expression gpulint does not evaluate" in message


def test_a_literal_set_list_renders_the_chart(repo, render_tools):
    write_tree(repo, {**POOL_CHART, "patterns/bottlerocket/addons.tf": POOL_RELEASE % '["us-west-2a", "us-west-2b"]'})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert serious(result) == [], result.stdout


def test_without_the_terraform_the_pool_chart_fails_as_before(repo, render_tools):
    write_tree(repo, POOL_CHART)
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert serious(result) == [
        ("patterns/bottlerocket/karpenter-resources/templates/nodepool.yaml", "not-rendered", "error")
    ]


def test_a_fault_in_a_template_that_reads_no_unknown_value_stays_an_error(repo, render_tools):
    broken = {
        **POOL_CHART,
        "patterns/bottlerocket/karpenter-resources/templates/other.yaml": "a: {{ .Values.x | nope }}\n",
    }
    write_tree(repo, {**broken, "patterns/bottlerocket/addons.tf": POOL_RELEASE % "local.azs"})
    result = run_cli("check", ".", "--helm", render_tools["helm"], "--format", "json")
    assert ("patterns/bottlerocket/karpenter-resources/templates/other.yaml", "not-rendered", "error") in serious(
        result
    )


def test_provider_v3_sets_files_and_yamlencode_in_the_providers_order(tmp_path):
    write_tree(
        tmp_path,
        {
            "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
            "infra/values/app.yaml": "gpus: 2\nimage:\n  tag: ${tag}\n",
            "infra/main.tf": """
                # provider v3: set is a list of objects
                resource "helm_release" "app" {
                  name      = "app"
                  namespace = "ml" // a comment
                  chart     = "${path.module}/../charts/app"
                  values = [
                    file("${path.module}/values/app.yaml"),
                    templatefile("values/app.yaml", { tag = var.tag }),
                    yamlencode({
                      replicas = 3
                      "zone.name" = var.zone
                      labels = { team = "ml", owner = local.owner }
                    }),
                  ]
                  set = [
                    { name = "a.b", value = "x,y" },
                    { name = "port", value = "80", type = "string" },
                    { name = "id", value = module.eks.cluster_name },
                  ]
                  set_string {
                    name  = "tag"
                    value = "1.0"
                  }
                }
                """,
        },
    )
    (release,) = Releases(str(tmp_path)).of(str(tmp_path / "charts" / "app"))
    assert (release.name, release.namespace, release.origin) == ("app", "ml", "infra/main.tf:2")
    assert release.layers == (
        {"gpus": 2, "image": {"tag": "${tag}"}},  # file() reads the text as it is
        {"gpus": 2},  # templatefile() fills `${tag}` in: not known
        {"replicas": 3, "labels": {"team": "ml"}},
    )
    assert release.set_values == ("a.b=x\\,y",)
    assert release.set_strings == ("port=80", "tag=1.0")
    assert release.unknown == ("image.tag", "zone.name", "labels.owner", "id")


def test_a_terraform_file_that_is_not_hcl_gives_no_release(tmp_path):
    write_tree(
        tmp_path,
        {
            "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
            "main.tf": 'resource "helm_release" "app" {\n  chart = "./charts/app"\n  values = [<<EOT\na: 1\n',
        },
    )
    assert Releases(str(tmp_path)).of(str(tmp_path / "charts" / "app")) == []


def test_hcl_literals_as_terraform_reads_them():
    (block,) = hcl.parse(
        textwrap.dedent(
            """
            /* a block comment
               over lines */
            locals {
              text   = "a\\"b\\u00e9 $${x}"
              number = -1.5
              list   = [1, "two", true, null,]
              ref    = var.x
              cond   = var.x ? 1 : 2
              loop   = [for z in var.zones : z]
              indented = <<-EOT
                  first
                    second
                EOT
            }
            """
        )
    )
    assert block.type == "locals" and block.line == 4
    values = block.attributes
    assert values["text"] == 'a"bé ${x}'
    assert values["number"] == -1.5
    assert values["list"] == [1, "two", True, None]
    assert values["ref"] is hcl.UNKNOWN and values["cond"] is hcl.UNKNOWN and values["loop"] is hcl.UNKNOWN
    assert values["indented"] == "first\n  second\n"


@pytest.mark.parametrize("text", ['a = "open\n', "b {\n", "c = [1, 2\n", 'd = "${x"\n', "e = <<EOT\nno end\n"])
def test_hcl_that_is_not_closed_is_refused(text):
    with pytest.raises(hcl.HclError):
        hcl.parse(text)
