"""Policies as code: gpulint Policies and ValidatingAdmissionPolicies evaluated offline."""

import json
import textwrap

import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.lint.policies import PolicyError, load_policies, parse_field_path

POLICY = """
apiVersion: gpulint.io/v1alpha1
kind: Policy
metadata: {name: gpu-pods-need-memory}
spec:
  severity: error
  match: {kinds: [Pod, apps/Deployment], namespaces: [ml]}
  variables:
  - name: gpuContainers
    expression: >-
      object.spec.containers.filter(c, has(c.resources) && has(c.resources.limits) &&
        "nvidia.com/gpu" in c.resources.limits)
  validations:
  - expression: variables.gpuContainers.all(c, "memory" in c.resources.limits)
    messageExpression: '"no memory limit on " + variables.gpuContainers.filter(c, !("memory" in c.resources.limits)).map(c, c.name).join(", ")'
    fieldPath: spec.containers[0].resources
  docs:
    summary: GPU pods set a memory limit.
    rationale: A GPU worker without a memory limit can be evicted by node memory pressure.
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: %s}
spec:
  containers:
  - name: trainer
    image: i
    resources:
      limits: {nvidia.com/gpu: 1%s}
"""


def check(write, manifest: str, *policies: str, extra=()):
    paths = []
    for index, text in enumerate(policies):
        paths += ["--policy", str(write(f"policies/p{index}.yaml", text))]
    target = write("app.yaml", manifest)
    return run_cli("check", str(target), *paths, "--format", "json", *extra)


def test_policy_finding_with_message_expression_and_field_path(write):
    result = check(write, POD % ("ml", ""), POLICY)
    (finding,) = result.json()["findings"]
    assert finding["rule"] == "gpu-pods-need-memory" and finding["severity"] == "error"
    assert finding["message"] == "no memory limit on trainer"
    assert (finding["line"], finding["column"]) == (8, 5)  # spec.containers[0].resources
    assert result.exit_code == 1


def test_policy_match_and_passing_objects(write):
    assert check(write, POD % ("ml", ", memory: 8Gi"), POLICY).json()["findings"] == []
    assert check(write, POD % ("other", ""), POLICY).json()["findings"] == []  # namespace not matched


def test_policy_findings_use_suppressions_and_severity_config(write):
    suppressed = POD.replace(
        "metadata: {name: p, namespace: %s}",
        "metadata: {name: p, namespace: %s, annotations: {gpulint.io/ignore: gpu-pods-need-memory}}",
    )
    assert check(write, suppressed % ("ml", ""), POLICY).json()["summary"]["suppressed"] == 1
    docs = run_cli("rule", "gpu-pods-need-memory", "--policy", str(write("p.yaml", POLICY)))
    assert "GPU pods set a memory limit." in docs.stdout and "memory pressure" in docs.stdout


@pytest.mark.parametrize(
    "broken, position, words",
    [
        ("object.spec.containers.all(c, c.name ==)", (13, 56), "compilation failed"),
        ("object.spec.containers.frobnicate()", (13, 50), "undeclared reference to 'frobnicate'"),
    ],
)
def test_policy_cel_errors_have_exact_positions(write, broken, position, words):
    text = POLICY.replace('variables.gpuContainers.all(c, "memory" in c.resources.limits)', broken)
    path = write("bad.yaml", text)
    result = run_cli("check", str(write("app.yaml", POD % ("ml", ""))), "--policy", str(path))
    assert result.exit_code == 2
    assert f"{path}:{position[0]}:{position[1]}: policy: CEL" in result.stderr and words in result.stderr


def test_policy_shape_errors(write):
    bad = POLICY.replace("name: gpu-pods-need-memory", "name: Not_Kebab").replace("severity: error", "severity: fatal")
    result = run_cli("check", str(write("app.yaml", POD % ("ml", ""))), "--policy", str(write("bad.yaml", bad)))
    assert result.exit_code == 2 and "metadata.name (the rule id)" in result.stderr
    clash = POLICY.replace("name: gpu-pods-need-memory", "name: gpu-non-integer")
    result = run_cli("check", str(write("app.yaml", POD % ("ml", ""))), "--policy", str(write("c.yaml", clash)))
    assert result.exit_code == 2 and "id of a built-in rule" in result.stderr


def test_policy_sees_the_inventory_and_other_objects(write):
    inventory = write(
        "inv/nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {gpu: h100}}\n"
        "status: {capacity: {nvidia.com/gpu: '8'}}\n",
    )
    policy = """
        apiVersion: gpulint.io/v1alpha1
        kind: Policy
        metadata: {name: service-for-every-deployment}
        spec:
          severity: warning
          match: {kinds: [apps/Deployment]}
          validations:
          - expression: objects.exists(o, o.kind == "Service" && o.metadata.name == object.metadata.name)
            message: every Deployment needs a Service of the same name
          - expression: inventory.nodes.exists(n, n.metadata.labels.gpu == "h100")
            message: the cluster has no H100 node
    """
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i}]}\n"
    )
    service = "---\napiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {ports: [{port: 80}]}\n"
    result = check(write, deployment, textwrap.dedent(policy), extra=("--inventory", str(inventory)))
    assert [f["message"] for f in result.json()["findings"]] == ["every Deployment needs a Service of the same name"]
    result = check(write, deployment + service, textwrap.dedent(policy), extra=("--inventory", str(inventory)))
    assert result.json()["findings"] == []


VAP = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-gpus}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  matchConditions:
  - name: has-gpus
    expression: object.spec.containers.exists(c, has(c.resources.limits) && "nvidia.com/gpu" in c.resources.limits)
  validations:
  - expression: >-
      object.spec.containers.all(c, !has(c.resources.limits) || !("nvidia.com/gpu" in c.resources.limits) ||
        int(c.resources.limits["nvidia.com/gpu"]) <= int(params.data.maxGpus))
    messageExpression: '"at most " + params.data.maxGpus + " GPUs per container"'
  - expression: authorizer.group("").resource("pods").check("create").allowed()
    message: needs the authorizer
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-gpus-ml}
spec:
  policyName: max-gpus
  validationActions: [Warn]
  paramRef: {name: gpu-limits, namespace: ml}
  matchResources:
    objectSelector:
      matchExpressions: [{key: exempt, operator: DoesNotExist}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gpu-limits, namespace: ml}
data: {maxGpus: "4"}
"""


def test_validating_admission_policy_offline(write):
    result = check(
        write, (POD % ("ml", "")).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8"), VAP, extra=("--select", "max-gpus")
    )
    findings = result.json()["findings"]
    assert [(f["rule"], f["severity"], f["message"]) for f in findings] == [
        ("max-gpus", "warning", "at most 4 GPUs per container"),
        (
            "max-gpus",
            "info",
            "policy max-gpus could not be evaluated offline on this object: uses 'authorizer', "
            "which only the API server has",
        ),
    ]
    assert result.exit_code == 0  # Warn: not a failure
    small = check(write, POD % ("ml", ""), VAP).json()["findings"]
    assert [f["severity"] for f in small] == ["info"]  # only the authorizer expression is left
    exempt = POD.replace("namespace: %s}", "namespace: %s, labels: {exempt: 'yes'}}")
    assert check(write, exempt % ("ml", ""), VAP).json()["findings"] == []  # the binding's objectSelector
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n"
    findings = check(write, deployment, VAP).json()["findings"]
    assert [f for f in findings if f["rule"] == "max-gpus"] == []  # resourceRules: pods only


def test_deny_binding_is_an_error_and_missing_params_are_not_evaluable(write):
    deny = VAP.replace("validationActions: [Warn]", "validationActions: [Deny]")
    result = check(write, (POD % ("ml", "")).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8"), deny)
    assert result.exit_code == 1 and result.json()["findings"][0]["severity"] == "error"
    no_params = VAP.replace("paramRef: {name: gpu-limits", "paramRef: {name: other")
    (finding,) = check(write, POD % ("ml", ""), no_params).json()["findings"]
    assert finding["severity"] == "info" and "no params object" in finding["message"]


def test_shipped_policy_library(write):
    result = run_cli(
        "check",
        str(write("app.yaml", POD % ("ml-research", ""))),
        "--policy",
        "gpulint:require-gpu-memory-limit",
        "--format",
        "json",
    )
    (finding,) = result.json()["findings"]
    assert finding["rule"] == "require-gpu-memory-limit" and finding["message"].endswith("trainer")
    listing = run_cli("rules", "--policy", "gpulint:all").stdout
    for name in (
        "require-gpu-memory-limit",
        "require-gang-for-multi-worker-gpu-jobs",
        "restrict-gpu-models-per-namespace",
        "forbid-gpu-in-non-gpu-namespaces",
    ):
        assert name in listing
    assert run_cli("check", str(write("x.yaml", "a: 1\n")), "--policy", "gpulint:nope").exit_code == 2


def test_field_paths():
    assert parse_field_path("spec.containers[0].resources") == ("spec", "containers", 0, "resources")
    assert parse_field_path("metadata.labels['app.kubernetes.io/name']") == (
        "metadata",
        "labels",
        "app.kubernetes.io/name",
    )
    assert parse_field_path("spec..x[") is None


EXPRESSIONS = st.lists(
    st.sampled_from(
        [
            "object",
            ".",
            "spec",
            "metadata",
            "name",
            "containers",
            "podSpecs",
            "inventory",
            "nodes",
            "objects",
            "variables",
            "v",
            "size(",
            ")",
            "(",
            "[",
            "]",
            "0",
            "1",
            '"x"',
            "==",
            "&&",
            "||",
            "!",
            ".all(",
            ".exists(",
            "c",
            ",",
            "has(",
            "true",
            "false",
            "params",
            "authorizer",
            "+",
            " ",
        ]
    ),
    max_size=20,
).map("".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, EXPRESSIONS)
def test_random_policies_never_crash(tmp_path_factory, variable, expression):
    root = tmp_path_factory.mktemp("random")
    policy = {
        "apiVersion": "gpulint.io/v1alpha1",
        "kind": "Policy",
        "metadata": {"name": "random"},
        "spec": {
            "variables": [{"name": "v", "expression": variable or "1"}],
            "validations": [{"expression": expression or "true", "message": "m"}],
        },
    }
    (root / "policy.json").write_text(json.dumps(policy))
    (root / "app.yaml").write_text(POD % ("ml", ""))
    try:
        load_policies((str(root / "policy.json"),))
    except PolicyError as exc:
        assert "policy.json:" in str(exc)
        return
    result = run_cli("check", str(root / "app.yaml"), "--policy", str(root / "policy.json"), "--format", "json")
    assert result.exit_code in (0, 1) and "Traceback" not in result.stderr


def test_a_configuration_names_its_policies_like_built_in_rules(tmp_path, monkeypatch):
    """Policies load before the configuration's rule ids are checked: severity, ignore and
    per-path-ignores may name a policy (they were refused as unknown rules)."""
    (tmp_path / ".gpulint.yaml").write_text(
        "policies: ['gpulint:require-gpu-memory-limit']\n"
        "severity: {require-gpu-memory-limit: error}\n"
        "per-path-ignores: {'legacy/*': [require-gpu-memory-limit]}\n"
    )
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (tmp_path / "legacy").mkdir()
    (tmp_path / "pod.yaml").write_text(pod)
    (tmp_path / "legacy" / "pod.yaml").write_text(pod)
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", ".", "--format", "json")
    assert result.exit_code == 1
    assert [(f["path"], f["rule"], f["severity"]) for f in result.json()["findings"]] == [
        ("pod.yaml", "require-gpu-memory-limit", "error")
    ]
    assert run_cli("check", ".", "--ignore", "require-gpu-memory-limit").exit_code == 0
    typo = run_cli("check", ".", "--ignore", "require-gpu-memory-limt")
    assert typo.exit_code == 2 and "did you mean 'require-gpu-memory-limit'?" in typo.stderr


VERSIONED_VAP = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: versioned}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: 'true && %s'
    message: m
"""


@pytest.mark.parametrize(
    "expression, name, at, refused, accepted, arrives",
    [
        # apiserver pkg/cel/environment base.go: each library's IntroducedVersion; a new expression gets the
        # libraries of the compatibility version (the release before the API server's)
        ('quantity("1Gi").isGreaterThan(quantity("1Mi"))', "quantity", "(", "1.28", "1.29", "1.28"),
        ('["a"].join(",") == "a"', "join", "(", "1.29", "1.30", "1.29"),  # strings extension v2
        ('isIP("10.0.0.1")', "isIP", "(", "1.30", "1.31", "1.30"),
        ('cidr("10.0.0.0/8").containsIP("10.1.2.3")', "cidr", "(", "1.30", "1.31", "1.30"),
        ('!format.dns1123Label().validate("a").hasValue()', "format", "format", "1.31", "1.32", "1.31"),
        ('semver("1.2.3").major() == 1', "semver", "(", "1.33", "1.34", "1.33"),
    ],
)
def test_a_vap_gets_the_libraries_its_api_server_gives_new_expressions(
    write, expression, name, at, refused, accepted, arrives
):
    path = write("vap.yaml", VERSIONED_VAP % expression)
    with pytest.raises(PolicyError) as error:
        load_policies((str(path),), refused)
    (line,) = [line for line in str(error.value).splitlines() if "vap.yaml" in line]
    assert f"undeclared reference to '{name}'" in line
    assert f"this function arrives in {arrives}, usable in new expressions from {accepted})" in line
    # where cel-go places it (a call: its parenthesis); the string starts at column 18, after 'true && '
    column = 18 + len("true && ") + expression.index(at)
    assert line.startswith(f"{path}:9:{column}: policy: CEL compilation failed: ")
    assert len(load_policies((str(path),), accepted)) == 0  # loads (no binding: no rule)
    assert len(load_policies((str(path),))) == 0  # the default version


def test_gpulint_policies_are_not_versioned_only_vaps(write):
    """A gpulint Policy runs only in gpulint: every library, whatever the cluster's version."""
    policy = POLICY.replace('.join(", ")', '.join(", ") + (isIP("10.0.0.1") ? "" : "")')
    path = write("policy.yaml", policy)
    assert [p.name for p in load_policies((str(path),), "1.29")] == ["gpu-pods-need-memory"]


def test_check_refuses_a_vap_too_new_for_the_cluster_with_exit_2(write):
    vap = VAP.replace("int(params.data.maxGpus))", 'int(params.data.maxGpus)) && isIP("10.0.0.1")')
    result = check(write, POD % ("ml", ""), vap, extra=("--kubernetes-version", "1.30"))
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "undeclared reference to 'isIP'" in result.stderr
    assert "Kubernetes 1.30 gives new expressions the CEL libraries of 1.29" in result.stderr
    assert check(write, POD % ("ml", ""), vap, extra=("--kubernetes-version", "1.31")).exit_code in (0, 1)


ADMISSION_VAP = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: admission-env}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  variables:
  - {name: x, expression: 'object.metadata.name != ""'}
  validations:
  - expression: '%s'
    message: m
"""


@pytest.mark.parametrize(
    "expression, said, at",
    [
        # apiserver v0.37.2 plugin/cel/composition.go: `variables` is an object type with a field per variable
        ("variables['x']", "found no matching overload for '_[_]' applied to '(kubernetes.variables, string)'", "["),
        ("object.spec.containers.all(c, variables[0] == c)", "'(kubernetes.variables, int)'", "["),
        # cel/environment/base.go declares no ext.Bindings: cel.bind is a call of `bind` on an undeclared `cel`
        ("cel.bind(n, object.metadata.name, n != '')", "undeclared reference to 'cel' (in container '')", "c"),
    ],
)
def test_a_vap_refuses_what_the_admission_environment_does_not_declare(write, expression, said, at):
    path = write("vap.yaml", ADMISSION_VAP.replace("'%s'", json.dumps(expression)))
    with pytest.raises(PolicyError) as error:
        load_policies((str(path),))
    (line,) = [line for line in str(error.value).splitlines() if "vap.yaml" in line]
    assert said in line
    assert line.startswith(f"{path}:11:{18 + expression.index(at)}: policy: CEL compilation failed: ")


@pytest.mark.parametrize(
    "expression",
    [
        "variables.x",
        "has(variables.x) && variables.x",
        '"cel.bind(" != "" && variables.x',  # in a string
        "[1].all(variables, variables == 1)",  # a comprehension's own variable of that name
    ],
)
def test_a_vap_reading_its_variables_by_field_loads(write, expression):
    path = write("vap.yaml", ADMISSION_VAP.replace("'%s'", json.dumps(expression)))
    assert load_policies((str(path),)) == []  # loads (no binding: no rule)


def test_gpulint_policies_keep_the_engine_environment(write):
    """A gpulint Policy runs only in gpulint: cel.bind and variables["x"] as the documents of docs/policies.md."""
    policy = POLICY.replace(
        '.join(", ")', '.join(", ") + cel.bind(s, "", s) + (variables["gpuContainers"] == [] ? "" : "")'
    )
    path = write("policy.yaml", policy)
    assert [p.name for p in load_policies((str(path),))] == ["gpu-pods-need-memory"]
