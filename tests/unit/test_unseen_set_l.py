"""Causes of false findings met on set L of held-out public repositories (docs/precision.md, "Set L"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied): lower-case single-brace fill-ins the reader replaces."""

from __future__ import annotations

import subprocess
from functools import partial

import pytest
from conftest import errors_and_warnings, lint_text, run_cli, said
from support.trees import write_tree

from gpulint.lint.findings import Severity

# KServe's torchserve samples: `image: {username}/torchserve:latest`, and the README says "replace {username}
# with your Docker Hub username"; its BentoML sample writes `{docker_username}/iris-classifier`.
ISVC = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: torchserve-custom-gpu
spec:
  predictor:
    containers:
    - image: {image}
      name: kserve-container
      resources:
        limits:
          nvidia.com/gpu: 1
"""


serious = partial(errors_and_warnings, fields=("rule", "line"))


@pytest.mark.parametrize("image", ["{username}/torchserve-gpu:latest", "{docker_username}/iris-classifier"])
def test_a_lower_case_fill_in_starting_a_value_makes_a_template(image):
    findings = lint_text(ISVC.replace("{image}", image), "docs/samples/v1beta1/custom/torchserve/gpu.yaml")
    assert [(f.rule, f.severity, f.line, f.column) for f in findings] == [("not-rendered", Severity.INFO, 8, 14)]
    assert image.split("/")[0] + " is a single-brace fill-in" in findings[0].message


def test_the_image_written_out_is_checked():
    findings = lint_text(ISVC.replace("{image}", "docker.io/kserve/torchserve-gpu:latest"))
    assert not any(f.rule == "not-rendered" for f in findings)


@pytest.mark.parametrize(
    "line",
    [
        "    - image: {a: b}/torchserve",  # a flow mapping with a value: no fill-in
        "    - image: {username} /torchserve",  # the brace closes a mapping, then text
        '    - args: ["--url={host}/v1", [unclosed]',  # inside a quoted string the brace is text; the error is elsewhere
    ],
)
def test_other_refused_braces_stay_yaml_errors(line):
    text = ISVC.replace("    - image: {image}", line)
    assert [rule for rule, _ in serious(lint_text(text))] == ["yaml-invalid"]


# bentoml/yatai-deployment, as operator-sdk scaffolds every operator: config/manifests/kustomization.yaml lists
# bases/<project>.clusterserviceversion.yaml, which `operator-sdk generate kustomize manifests` (the Makefile's
# bundle target) writes before `kustomize build config/manifests`; nothing else holds it.
OPERATOR = {
    "config/manifests/kustomization.yaml": "resources:\n- bases/gpu-operator.clusterserviceversion.yaml\n- ../samples\n",
    "config/samples/kustomization.yaml": "resources:\n- sample.yaml\n",
    "config/samples/sample.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sample}\ndata: {a: b}\n",
    "Makefile": """
        .PHONY: bundle
        bundle: manifests kustomize
        \t{generator} generate kustomize manifests -q
        \t$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle -q --overwrite
        """,
}


def generated_findings(repo, render_tools, files: dict[str, str]) -> list[tuple[str, str, str]]:
    write_tree(repo, files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--format", "json")
    return [(f["path"], f["severity"], said(f)) for f in result.json()["findings"] if f["rule"] == "not-rendered"]


@pytest.mark.parametrize("generator", ["operator-sdk", "$(OPERATOR_SDK)"])
def test_a_csv_base_operator_sdk_generates_is_not_checked_not_broken(repo, render_tools, generator):
    files = {**OPERATOR, "Makefile": OPERATOR["Makefile"].replace("{generator}", generator)}
    ((path, severity, message),) = generated_findings(repo, render_tools, files)
    assert (path, severity) == ("config/manifests/kustomization.yaml", "warning")
    assert "Makefile generates it" in message


@pytest.mark.parametrize(
    "makefile",
    [
        "bundle:\n\t$(OPERATOR_SDK) generate bundle -q\n",  # another generator: not the base's
        "bundle:\n\t$(OPERATOR_SDK) generate kustomize manifests -q\n",  # the right one, but the file is no CSV base
    ],
)
def test_an_absent_base_nothing_generates_stays_a_broken_overlay(repo, render_tools, makefile):
    files = {**OPERATOR, "Makefile": makefile}
    if "kustomize manifests" in makefile:
        files["config/manifests/kustomization.yaml"] = "resources:\n- bases/gpu-operator.yaml\n- ../samples\n"
    ((path, severity, _),) = generated_findings(repo, render_tools, files)
    assert (path, severity) == ("config/manifests/kustomization.yaml", "error")


# kserve/kserve's test/overlays/istio: its one resource is istio's manifest, generated-manifest.yaml, which nothing in
# the checkout writes (the repository's validate-manifests workflow skips the overlay); two patches edit it.
ISTIO_OVERLAY = {
    "test/overlays/istio/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization

        resources:
        - {resource}

        patches:
        - path: istiod_deployment_patch.yaml
        """,
    "test/overlays/istio/istiod_deployment_patch.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: istiod
          namespace: istio-system
        spec:
          replicas: 1
        """,
}
ISTIOD = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: istiod
  namespace: istio-system
spec:
  selector: {matchLabels: {app: istiod}}
  template:
    metadata: {labels: {app: istiod}}
    spec:
      containers:
      - name: discovery
        image: docker.io/istio/pilot:1.27.0
"""


def istio_overlay(resource: str) -> dict[str, str]:
    kustomization = ISTIO_OVERLAY["test/overlays/istio/kustomization.yaml"].replace("{resource}", resource)
    return {**ISTIO_OVERLAY, "test/overlays/istio/kustomization.yaml": kustomization}


@pytest.mark.parametrize("name", ["generated-manifest.yaml", "generated.yaml", "istio.generated.yaml"])
def test_an_absent_resource_named_generated_is_not_checked_not_broken(repo, render_tools, name):
    ((path, severity, message),) = generated_findings(repo, render_tools, istio_overlay(name))
    assert (path, severity) == ("test/overlays/istio/kustomization.yaml", "warning")
    assert f"'{name}' is not in the checkout" in message
    assert "its name says it is generated output" in message


def test_the_generated_resource_present_is_built_and_checked(repo, render_tools):
    files = {**istio_overlay("generated-manifest.yaml"), "test/overlays/istio/generated-manifest.yaml": ISTIOD}
    assert generated_findings(repo, render_tools, files) == []


@pytest.mark.parametrize("name", ["generator.yaml", "generate.yaml", "regenerated.yaml", "manifest.yaml"])
def test_an_absent_resource_whose_name_says_nothing_stays_a_broken_overlay(repo, render_tools, name):
    ((path, severity, message),) = generated_findings(repo, render_tools, istio_overlay(name))
    assert (path, severity) == ("test/overlays/istio/kustomization.yaml", "error")
    assert f"accumulating resources from '{name}'" in message
    assert "no such file or directory" in message
