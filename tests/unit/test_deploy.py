"""The webhook's plain deploy manifests (deploy/gpulint.yaml, rendered from deploy/chart): linted clean by
gpulint, valid against the schemas, safe defaults. tests/integration/test_chart.py renders the chart itself."""

import yaml
from conftest import REPO, run_cli


def objects():
    return [doc for doc in yaml.safe_load_all((REPO / "deploy" / "gpulint.yaml").read_text()) if doc]


def test_gpulint_lints_its_own_deploy_manifests_clean():
    report = run_cli("check", str(REPO / "deploy" / "gpulint.yaml"), "--fail-on", "info", "--format", "json")
    assert report.exit_code == 0, report.stdout
    assert report.json()["findings"] == [] and report.json()["summary"]["objects"] >= 9


def test_webhook_configuration_defaults():
    by_kind = {}
    for obj in objects():
        by_kind.setdefault(obj["kind"], []).append(obj)
    (deployment,) = by_kind["Deployment"]
    assert deployment["spec"]["replicas"] == 2
    assert by_kind["PodDisruptionBudget"][0]["spec"]["minAvailable"] == 1
    (config,) = by_kind["ValidatingWebhookConfiguration"]
    (hook,) = config["webhooks"]
    assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 5 and hook["sideEffects"] == "None"
    excluded = hook["namespaceSelector"]["matchExpressions"][0]
    assert excluded["operator"] == "NotIn" and {"kube-system", "gpulint-system"} <= set(excluded["values"])
    assert hook["clientConfig"]["service"]["path"] == "/validate"
    assert config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "gpulint-system/gpulint"
    assert {"Issuer", "Certificate", "ClusterRole", "ClusterRoleBinding", "ServiceAccount", "Service"} <= set(by_kind)
    rules = by_kind["ClusterRole"][0]["rules"]
    assert rules and all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in rules)  # read-only
