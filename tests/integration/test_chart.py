"""The webhook's Helm chart (deploy/chart), rendered and linted by the real helm binary.

What a user installs must be what the code expects: the rendered serve arguments are accepted by
`gpulint serve`, the RBAC grants exactly what the live inventory watches, the generated
certificate names the Service and is signed by the CA in the webhook configuration, the
configuration and policies it mounts are read by gpulint, and the plain manifests in
deploy/gpulint.yaml are a fresh render of the chart."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import REPO, run_cli
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import padding

from gpulint.cli.main import cli
from gpulint.lint.world.live_inventory import INVENTORY_APIS

pytestmark = pytest.mark.integration

CHART = REPO / "deploy" / "chart"
NAMESPACE = "gpu-guard"


def helm_run(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=120, check=False)


def render(helm: Path, *values: str, files: tuple[str, ...] = ()) -> list[dict]:
    sets = [arg for value in values for arg in ("--set", value)] + [a for f in files for a in ("--set-file", f)]
    done = helm_run(helm, "template", "gpulint", str(CHART), "--namespace", NAMESPACE, *sets)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def one(objects: list[dict], kind: str) -> dict:
    (found,) = [obj for obj in objects if obj["kind"] == kind]
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    "values",
    [
        (),
        ("tls.mode=generate", "liveInventory.pods=true", "dryRun=false", "failurePolicy=Fail"),
        ("liveInventory.enabled=false", "inventoryConfigMap=gpu-inventory", "replicas=1"),
        ("tls.mode=secret", "tls.secretName=mine", "tls.caBundle=Zm9v"),
    ],
)
def test_helm_lint_is_clean_and_gpulint_lints_the_render_clean(helm, values, tmp_path):
    sets = [arg for value in values for arg in ("--set", value)]
    linted = helm_run(helm, "lint", str(CHART), "--strict", *sets)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    rendered = tmp_path / "rendered.yaml"
    done = helm_run(helm, "template", "gpulint", str(CHART), "--namespace", NAMESPACE, *sets)
    rendered.write_text(done.stdout, encoding="utf-8")
    # gpulint's own schema and rules over its own install: valid objects, no finding of any severity
    report = run_cli("check", str(rendered), "--fail-on", "info", "--format", "json")
    assert report.exit_code == 0, report.stdout
    assert report.json()["findings"] == []


def test_defaults_are_safe_for_a_first_install(helm):
    objects = render(helm)
    deployment = one(objects, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert deployment["spec"]["replicas"] == 2
    assert one(objects, "PodDisruptionBudget")["spec"]["minAvailable"] == 1
    assert spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert "--live-inventory" in container["args"] and "--dry-run-mode" in container["args"]
    assert "--live-pods" not in container["args"]
    # 16 MiB of review bodies x ~35 bytes a byte, under the 1 GiB limit with the server and its inventory
    assert "--max-inflight-bytes=16777216" in container["args"] and container["resources"]["limits"]["memory"] == "1Gi"
    hook = one(objects, "ValidatingWebhookConfiguration")["webhooks"][0]
    assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 5 and hook["sideEffects"] == "None"
    system = hook["namespaceSelector"]["matchExpressions"][0]
    assert system == {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", NAMESPACE]}
    assert hook["clientConfig"]["service"] == {
        "name": "gpulint",
        "namespace": NAMESPACE,
        "path": "/validate",
        "port": 443,
    }
    certificate = one(objects, "Certificate")
    assert certificate["spec"]["dnsNames"] == [f"gpulint.{NAMESPACE}.svc", f"gpulint.{NAMESPACE}.svc.cluster.local"]


@pytest.mark.parametrize("pods", [False, True])
def test_rbac_grants_list_and_watch_on_exactly_what_the_live_inventory_reads(helm, pods):
    role = one(render(helm, f"liveInventory.pods={str(pods).lower()}"), "ClusterRole")
    granted = {
        (group, resource) for rule in role["rules"] for group in rule["apiGroups"] for resource in rule["resources"]
    }
    assert all(rule["verbs"] == ["list", "watch"] for rule in role["rules"])  # read-only
    # the webhook watches every API but the snapshot-only ones (read by --live-inventory with the user's credentials)
    watched = {
        (api.group, api.plural)
        for api in INVENTORY_APIS
        if (pods or not api.optional) and not api.namespace and not api.snapshot_only
    }
    assert granted == watched
    # An API read in one namespace (by name, or all its objects there): a Role there grants list and watch on that
    # name only (on that namespace only).
    (role,) = [r for r in render(helm, f"liveInventory.pods={str(pods).lower()}") if r["kind"] == "Role"]
    named = {
        (role["metadata"]["namespace"], group, resource, name)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in rule.get("resourceNames", [""])
    }
    assert all(rule["verbs"] == ["list", "watch"] for rule in role["rules"])
    selected = {
        (api.namespace, api.group, api.plural, api.field_selector.removeprefix("metadata.name="))
        for api in INVENTORY_APIS
        if api.namespace
    }
    assert named == selected


def test_no_rbac_and_no_token_without_the_live_inventory(helm):
    objects = render(helm, "liveInventory.enabled=false", "inventoryConfigMap=gpu-inventory")
    assert not [obj for obj in objects if obj["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    spec = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert spec["automountServiceAccountToken"] is False
    assert "--inventory=/inventory" in spec["containers"][0]["args"]
    assert {"name": "inventory", "configMap": {"name": "gpu-inventory"}} in spec["volumes"]


def test_generated_certificate_names_the_service_and_is_signed_by_the_webhook_ca_bundle(helm):
    objects = render(helm, "tls.mode=generate")
    secret = one(objects, "Secret")
    hook = one(objects, "ValidatingWebhookConfiguration")["webhooks"][0]
    assert secret["type"] == "kubernetes.io/tls"
    assert secret["data"]["ca.crt"] == hook["clientConfig"]["caBundle"]
    ca = x509.load_pem_x509_certificate(base64.b64decode(hook["clientConfig"]["caBundle"]))
    cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    ca.public_key().verify(
        cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm
    )  # type: ignore[union-attr,call-arg,arg-type]
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert f"gpulint.{NAMESPACE}.svc" in names
    assert "cert-manager.io/inject-ca-from" not in (
        one(objects, "ValidatingWebhookConfiguration")["metadata"].get("annotations") or {}
    )
    assert not [obj for obj in objects if obj["kind"] in ("Certificate", "Issuer")]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (("timeoutSeconds=60",), "timeoutSeconds"),
        (("failurePolicy=Maybe",), "failurePolicy"),
        (("tls.mode=secret",), "is required with tls.mode=secret"),
        (("liveInventory.enabled=false",), "give the webhook an inventory"),
        (("livInventory.enabled=true",), "livInventory"),  # a typo in a value name is refused, not ignored
    ],
)
def test_bad_values_are_refused_with_a_message(helm, values, message):
    sets = [arg for value in values for arg in ("--set", value)]
    done = helm_run(helm, "template", "gpulint", str(CHART), *sets)
    assert done.returncode != 0 and message in done.stderr


def test_rendered_serve_arguments_configuration_and_policies_are_what_gpulint_accepts(helm, tmp_path):
    policy = sorted((REPO / "rules" / "policies").glob("*.yaml"))[0]  # as a user passes one: --set-file
    objects = render(
        helm,
        "dryRun=false",
        "denyOn=warning",
        "liveInventory.pods=true",
        "config.fail-on=warning",
        "config.ignore[0]=gpu-nic-locality",
        files=(f"policies.gpu\\.yaml={policy}",),
    )
    config_map = one(objects, "ConfigMap")
    (container,) = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[0] == "serve" and "--dry-run-mode" not in args and "--deny-on=warning" in args
    mounted = tmp_path / "etc-gpulint"
    mounted.mkdir()
    for name, text in config_map["data"].items():
        (mounted / name).write_text(text, encoding="utf-8")
    for name in ("tls.crt", "tls.key"):
        (tmp_path / name).write_text("", encoding="utf-8")
    local = [arg.replace("/etc/gpulint", str(mounted)).replace("/tls/", f"{tmp_path}/") for arg in args[1:]]
    serve = cli.commands["serve"]  # type: ignore[attr-defined]
    context = serve.make_context("serve", list(local))  # every option exists and every value parses
    assert context.params["live_inventory"] and context.params["live_pods"]
    assert context.params["deny_on"] == "warning"
    # The mounted configuration and policy are read by gpulint as they are
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n")
    config_arg = next(arg for arg in local if arg.startswith("--config="))
    policy_args = [arg for arg in local if arg.startswith("--policy=")]
    result = CliRunner().invoke(cli, ["check", str(manifest), config_arg, *policy_args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_plain_manifests_are_a_fresh_render_of_the_chart(helm):
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_deploy", REPO / "scripts" / "render_deploy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (REPO / "deploy" / "gpulint.yaml").read_text(encoding="utf-8")
    assert module.render(str(helm)) == committed, "run: python scripts/render_deploy.py"


def test_the_image_runs_what_the_chart_asks_as_the_user_the_chart_expects(helm):
    """No daemon here to build the image: hold the Dockerfile and the chart together instead."""
    lines = [line.split("#")[0].strip() for line in (REPO / "Dockerfile").read_text(encoding="utf-8").splitlines()]
    instructions = [line for line in lines if line]
    user = next(line.split()[1] for line in instructions if line.startswith("USER "))
    uid, gid = (int(part) for part in user.split(":"))
    assert 'ENTRYPOINT ["gpulint"]' in instructions
    assert any("'.[live]'" in line for line in instructions if line.startswith("RUN pip wheel"))  # the live client
    for line in instructions:
        if line.startswith("COPY ") and "--from" not in line:
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), source
    spec = one(render(helm), "Deployment")["spec"]["template"]["spec"]
    assert (spec["securityContext"]["runAsUser"], spec["securityContext"]["runAsGroup"]) == (uid, gid) != (0, 0)
    assert spec["containers"][0]["args"][0] == "serve"


def network_policy(objects: list[dict]) -> dict:
    policy = one(objects, "NetworkPolicy")
    deployment = one(objects, "Deployment")
    assert policy["spec"]["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]  # egress stays open: the live inventory reads the API
    (rule,) = policy["spec"]["ingress"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert rule["ports"] == [{"protocol": "TCP", "port": container["ports"][0]["containerPort"]}]
    return rule


def test_a_network_policy_lets_only_the_api_server_in(helm):
    """SECURITY.md assumes that only the API server reaches the webhook (issue #33: a tenant's pod holding
    every connection slot). The API server is no pod: it is let in by address, and pods are kept out."""
    default = network_policy(render(helm))
    assert default["from"] == [{"ipBlock": {"cidr": "0.0.0.0/0"}}, {"ipBlock": {"cidr": "::/0"}}]
    # the pod networks excluded, each from the block of its own family (an except outside its cidr is invalid)
    excluded = network_policy(render(helm, "networkPolicy.podCIDRs={10.244.0.0/16,fd00:10:244::/56}"))
    assert excluded["from"] == [
        {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.244.0.0/16"]}},
        {"ipBlock": {"cidr": "::/0", "except": ["fd00:10:244::/56"]}},
    ]
    # the control plane's addresses, when known, and nothing else; more peers for the metrics' scraper
    scraper = "networkPolicy.extraFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring"
    known = network_policy(render(helm, "networkPolicy.apiServerCIDRs={172.18.0.2/32,172.18.0.3/32}", scraper))
    assert known["from"] == [
        {"ipBlock": {"cidr": "172.18.0.2/32"}},
        {"ipBlock": {"cidr": "172.18.0.3/32"}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}},
    ]
    assert not [obj for obj in render(helm, "networkPolicy.enabled=false") if obj["kind"] == "NetworkPolicy"]


def test_the_notes_say_when_the_network_policy_admits_pods(helm):
    def notes(*values: str) -> str:
        sets = [arg for value in values for arg in ("--set", value)]
        done = helm_run(helm, "install", "gpulint", str(CHART), "--dry-run", "--namespace", NAMESPACE, *sets)
        assert done.returncode == 0, done.stderr
        return done.stdout.partition("NOTES:")[2]

    assert "pods can reach it" in notes()
    assert "pods can reach it" not in notes("networkPolicy.podCIDRs={10.244.0.0/16}")
