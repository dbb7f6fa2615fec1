"""Charts and overlays linted where they live, with the real helm and kubectl (tests/k8s_binaries.py).

Every finding is asserted at its template, base or patch file and line. The charts and overlays
are written like real ones: helpers, ranges, conditionals, values files; bases with overlays that
patch them both ways (strategic merge and JSON 6902, in files and inline).
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import DATA, said
from conftest import run_cli as _run_cli
from support.trees import write_tree

pytestmark = pytest.mark.integration

FLEET = str(DATA / "fleet")


def run_cli(*args: str, **kwargs):  # these tests are about where rendered findings land, not /dev/shm
    if args and args[0] == "check":
        args = (*args, "--ignore", "dev-shm-missing")
    return _run_cli(*args, **kwargs)


CHART = {
    "Chart.yaml": """
        apiVersion: v2
        name: gpu-inference
        description: vLLM inference servers, one Deployment per model
        type: application
        version: 0.3.0
        appVersion: "0.6.3"
    """,
    "values.yaml": """
        image:
          repository: vllm/vllm-openai
          tag: v0.6.3
        models:
          - name: llama-8b
            gpus: 1
          - name: llama-70b
            gpus: 4
        warmup: false
        resources:
          requests:
            nvidia.com/gpu: 2
        tolerations:
          - key: nvidia.com/gpu
            operator: Exists
            effect: NoSchedule
    """,
    "templates/_helpers.tpl": """
        {{- define "gpu-inference.fullname" -}}
        {{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
        {{- end }}

        {{- define "gpu-inference.labels" -}}
        app.kubernetes.io/name: {{ .Chart.Name }}
        app.kubernetes.io/instance: {{ .Release.Name }}
        {{- end }}
    """,
    # line 25: the GPU request of every model (a range: one Deployment per model)
    "templates/deployment.yaml": """
        {{- range .Values.models }}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ include "gpu-inference.fullname" $ }}-{{ .name }}
          labels:
            {{- include "gpu-inference.labels" $ | nindent 4 }}
        spec:
          replicas: 1
          selector:
            matchLabels:
              model: {{ .name }}
          template:
            metadata:
              labels:
                model: {{ .name }}
            spec:
              containers:
                - name: vllm
                  image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag }}"
                  args: ["--model", "{{ .name }}", "--tensor-parallel-size", "{{ .gpus }}"]
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .gpus }}
              {{- with $.Values.tolerations }}
              tolerations:
                {{- toYaml . | nindent 8 }}
              {{- end }}
        {{- end }}
    """,
    # line 14: resources come from values through toYaml; only rendered when warmup is on
    "templates/warmup-job.yaml": """
        {{- if .Values.warmup }}
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: {{ include "gpu-inference.fullname" . }}-warmup
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: warmup
                  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
                  resources:
                    {{- toYaml .Values.resources | nindent 12 }}
        {{- end }}
    """,
    "templates/tests/test-connection.yaml": """
        apiVersion: v1
        kind: Pod
        metadata:
          name: "{{ include "gpu-inference.fullname" . }}-test"
          annotations:
            "helm.sh/hook": test
        spec:
          restartPolicy: Never
          containers:
            - name: curl
              image: curlimages/curl:8.10.1
              resources:
                requests:
                  nvidia.com/gpu: 1
    """,
}


CHART = {name: textwrap.dedent(text).lstrip("\n") for name, text in CHART.items()}


def places(stdout: str, rule: str | None = None) -> list[str]:
    """file:line:col rule of every finding, in output order."""
    found = []
    for line in stdout.splitlines():
        head, _, rest = line.partition(": ")
        if rest and head.count(":") == 2 and "[" in rest:
            name = rest.split("[", 1)[1].split("]", 1)[0]
            if rule is None or name == rule:
                found.append(f"{head} {name}")
    return found


# ---------------------------------------------------------------------------------------------- Helm


def test_chart_findings_are_at_the_template_line_that_produced_them(repo, render_tools):
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    result = run_cli("check", "charts", "--helm", render_tools["helm"], "--set", "warmup=true", "--color", "never")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert places(result.stdout) == [
        # a value from values.yaml through toYaml: the toYaml line of the template
        "charts/gpu-inference/templates/warmup-job.yaml:14:13 gpu-request-without-limit",
    ]
    assert "Job/release-name-gpu-inference-warmup" in result.stdout
    assert "<stdin>" not in result.stdout and "Chart.yaml" not in result.stdout


def test_a_range_maps_every_iteration_to_the_loop_body(repo, render_tools):
    chart = dict(CHART)
    chart["templates/deployment.yaml"] = CHART["templates/deployment.yaml"].replace("limits:", "requests:")
    write_tree(repo / "gpu-inference", chart, dedent=False)
    result = run_cli("check", "gpu-inference", "--helm", render_tools["helm"])
    assert places(result.stdout) == [
        "gpu-inference/templates/deployment.yaml:25:15 gpu-request-without-limit",
        "gpu-inference/templates/deployment.yaml:25:15 gpu-request-without-limit",
    ]
    assert "llama-8b" in result.stdout and "llama-70b" in result.stdout


def test_values_files_and_per_chart_configuration(repo, render_tools):
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    (repo / "prod-values.yaml").write_text("warmup: true\nresources:\n  limits:\n    nvidia.com/gpu: 2\n")
    clean = run_cli("check", "charts", "--helm", render_tools["helm"], "--values", "prod-values.yaml")
    assert clean.exit_code == 0, clean.stdout
    assert "3 objects" in clean.stdout  # two Deployments and the warm-up Job, rendered with the values file
    # The repository's configuration sets the chart's values; the program comes from the command line
    # (a repository's configuration may not name one: tests/hostile/test_repository_config.py).
    (repo / ".gpulint.yaml").write_text("render:\n  charts:\n    charts/gpu-inference:\n      set: [warmup=true]\n")
    configured = run_cli("check", "charts", "--helm", render_tools["helm"])
    assert places(configured.stdout) == [
        "charts/gpu-inference/templates/warmup-job.yaml:14:13 gpu-request-without-limit"
    ]


def test_chart_tests_are_skipped_unless_asked(repo, render_tools):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    assert places(run_cli("check", "gpu-inference", "--helm", render_tools["helm"]).stdout) == []
    asked = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--helm-tests")
    assert places(asked.stdout) == [
        "gpu-inference/templates/tests/test-connection.yaml:14:11 gpu-request-without-limit"
    ]


def test_suppression_comment_in_the_template(repo, render_tools):
    chart = dict(CHART)
    chart["templates/warmup-job.yaml"] = CHART["templates/warmup-job.yaml"].replace(
        "resources:\n", "resources:  # gpulint: disable=gpu-request-without-limit\n", 1
    )
    write_tree(repo / "c", chart, dedent=False)
    result = run_cli("check", "c", "--helm", render_tools["helm"], "--set", "warmup=true")
    # the comment is on the template line above the toYaml line the finding is placed at: not this one
    assert places(result.stdout) == ["c/templates/warmup-job.yaml:14:13 gpu-request-without-limit"]
    chart["templates/warmup-job.yaml"] = CHART["templates/warmup-job.yaml"].replace(
        "{{- toYaml .Values.resources | nindent 12 }}",
        "# gpulint: disable=gpu-request-without-limit\n            {{- toYaml .Values.resources | nindent 12 }}",
    )
    write_tree(repo / "c", chart, dedent=False)
    result = run_cli("check", "c", "--helm", render_tools["helm"], "--set", "warmup=true")
    assert places(result.stdout) == [] and "1 suppressed" in result.stdout


def test_a_missing_required_value_is_an_error_at_its_template(repo, render_tools):
    chart = dict(CHART)
    chart["templates/deployment.yaml"] = CHART["templates/deployment.yaml"].replace(
        'image: "{{ $.Values.image.repository }}',
        'image: "{{ required "image.registry is required" $.Values.image.registry }}/{{ $.Values.image.repository }}',
    )
    write_tree(repo / "gpu-inference", chart, dedent=False)
    (repo / "job.yaml").write_text(
        textwrap.dedent(
            """
        apiVersion: v1
        kind: Pod
        metadata: {name: other}
        spec:
          containers:
          - name: c
            image: i
            resources: {requests: {nvidia.com/gpu: 1}}
        """
        ).lstrip()
    )
    result = run_cli("check", ".", "--helm", render_tools["helm"])
    assert result.exit_code == 1
    assert places(result.stdout) == [
        "gpu-inference/templates/deployment.yaml:21:22 not-rendered",
        "job.yaml:8:28 gpu-request-without-limit",  # the other files are still linted
    ]
    assert (
        "helm template failed: execution error at (gpu-inference/templates/deployment.yaml:21:21): image.registry is required"
        in result.stdout
    )


def test_an_unvendored_dependency_is_a_warning_at_chart_yaml(repo, render_tools):
    chart = dict(CHART)
    chart["Chart.yaml"] = CHART["Chart.yaml"] + (
        "dependencies:\n  - name: redis\n    version: 20.1.0\n    repository: oci://registry-1.docker.io/bitnamicharts\n"
    )
    write_tree(repo / "gpu-inference", chart, dedent=False)
    result = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--format", "json")
    assert result.exit_code == 0, result.stdout
    (finding,) = result.json()["findings"]
    assert (finding["path"], finding["line"], finding["severity"], finding["rule"]) == (
        "gpu-inference/Chart.yaml",
        7,
        "warning",
        "not-rendered",
    )
    assert "missing in charts/ directory: redis" in said(finding) and "helm dependency build" in said(finding)


def test_without_helm_the_chart_is_a_warning_and_other_files_are_linted(repo, monkeypatch):
    """Issue #28: a chart never read used to pass ("No problems found in 0 files", exit 0) as a note."""
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    (repo / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}\n"
    )
    monkeypatch.setenv("PATH", str(repo / "no-binaries-here"))
    result = run_cli("check", ".")
    assert places(result.stdout) == [
        "gpu-inference/Chart.yaml:1:1 not-rendered",
        "pod.yaml:6:48 gpu-request-without-limit",
    ]
    line = next(line for line in result.stdout.splitlines() if line.startswith("gpu-inference/Chart.yaml"))
    assert "warning[not-rendered] Helm chart not rendered: no helm binary" in line
    assert "https://helm.sh/docs/intro/install/" in result.stdout and "--helm PATH" in result.stdout
    assert "1 error, 1 warning" in result.stdout


def test_a_chart_alone_without_helm_fails_under_fail_on_warning(repo, monkeypatch):
    """As pre-commit passes one template: the chart is named, counted, and --fail-on decides."""
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    monkeypatch.setenv("PATH", str(repo / "no-binaries-here"))
    template = "gpu-inference/templates/deployment.yaml"
    assert run_cli("check", template).exit_code == 0
    strict = run_cli("check", template, "--fail-on", "warning")
    assert strict.exit_code == 1
    assert places(strict.stdout) == ["gpu-inference/Chart.yaml:1:1 not-rendered"]
    assert "No problems found" not in strict.stdout


def test_an_explicit_helm_that_is_no_executable_is_a_usage_error(repo):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    result = run_cli("check", "gpu-inference", "--helm", str(repo / "nope" / "helm"))
    assert result.exit_code == 2 and "--helm:" in result.stderr and "not an executable file" in result.stderr


def test_fix_refuses_template_logic_with_a_message(repo, render_tools):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    before = (repo / "gpu-inference/templates/warmup-job.yaml").read_text()
    result = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--set", "warmup=true", "--fix")
    assert (
        "gpu-inference/templates/warmup-job.yaml: not fixed: the field is rendered by a Helm template" in result.stderr
    )
    assert (repo / "gpu-inference/templates/warmup-job.yaml").read_text() == before
    assert "fixable" not in result.stdout


# --------------------------------------------------------------------------------------- helm | gpulint


def test_piped_helm_template_output_is_reported_at_the_templates(repo, render_tools):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    rendered = subprocess.run(
        [render_tools["helm"], "template", "llm", "gpu-inference", "--set", "warmup=true", "--skip-tests"],
        capture_output=True,
        check=True,
    ).stdout
    result = run_cli("check", "-", input=rendered)
    assert places(result.stdout) == ["gpu-inference/templates/warmup-job.yaml:14:13 gpu-request-without-limit"]
    os.chdir(repo / "gpu-inference")  # helm template . | gpulint check -
    inside = run_cli("check", "-", input=rendered)
    assert places(inside.stdout) == ["templates/warmup-job.yaml:14:13 gpu-request-without-limit"]


def test_stdin_filename_names_plain_piped_input(repo):
    result = run_cli(
        "check",
        "-",
        "--stdin-filename",
        "apps/pod.yaml",
        input="apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}\n",
    )
    assert places(result.stdout) == ["apps/pod.yaml:6:48 gpu-request-without-limit"]
    (repo / ".gpulint.yaml").write_text("exclude: [apps/*]\n")
    excluded = run_cli("check", "-", "--stdin-filename", "apps/pod.yaml", "--force-exclude", input="kind: [\n")
    assert excluded.exit_code == 0 and places(excluded.stdout) == []


# ------------------------------------------------------------------------------------------ kustomize

OVERLAYS = {
    "base/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - deployment.yaml
          - service.yaml
    """,
    "base/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm
          labels:
            app: vllm
        spec:
          selector:
            matchLabels:
              app: vllm
          template:
            metadata:
              labels:
                app: vllm
            spec:
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.6.3
                  ports:
                    - containerPort: 8000
                  resources:
                    limits:
                      nvidia.com/gpu: 1
    """,
    "base/service.yaml": """
        apiVersion: v1
        kind: Service
        metadata:
          name: vllm
        spec:
          selector:
            app: vllm
          ports:
            - port: 8000
    """,
    "overlays/prod/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: inference
        namePrefix: prod-
        resources:
          - ../../base
        patches:
          - path: gpu-patch.yaml
          - target:
              kind: Deployment
              name: vllm
            patch: |-
              - op: replace
                path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu
                value: 1.5
    """,
    # the strategic-merge patch: line 12 asks for 2 GPUs while the base limits 1
    "overlays/prod/gpu-patch.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm
        spec:
          template:
            spec:
              containers:
                - name: vllm
                  resources:
                    requests:
                      nvidia.com/gpu: 2
    """,
}


OVERLAYS = {name: textwrap.dedent(text).lstrip("\n") for name, text in OVERLAYS.items()}


def test_overlay_findings_are_at_the_patch_or_base_that_set_the_field(repo, render_tools):
    write_tree(repo, OVERLAYS, dedent=False)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"])
    found = places(result.stdout)
    # the JSON 6902 patch inline in kustomization.yaml set the limit to 1.5 (line 15, its `value`);
    # the strategic-merge patch file set the request (line 12)
    assert "overlays/prod/kustomization.yaml:15:16 gpu-non-integer" in found
    assert "overlays/prod/gpu-patch.yaml:12:31 gpu-request-without-limit" in found
    assert all(not f.startswith("base/") for f in found), found  # the base renders through the overlay only
    assert all("schema-invalid" not in f for f in found), found  # the patch is never linted as a whole object
    assert "Deployment/inference/prod-vllm" in result.stdout


def test_base_findings_are_at_the_base_resource(repo, render_tools):
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].split("patches:")[0]
    files["base/deployment.yaml"] = OVERLAYS["base/deployment.yaml"].replace("limits:", "requests:")
    del files["overlays/prod/gpu-patch.yaml"]
    write_tree(repo, files, dedent=False)
    result = run_cli("check", "overlays/prod", "--kubectl", render_tools["kubectl"])
    assert places(result.stdout) == ["base/deployment.yaml:23:15 gpu-request-without-limit"]


@pytest.mark.slow
def test_fix_edits_the_patch_that_set_the_field(repo, render_tools):
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].split("  - target:")[0]
    write_tree(repo, files, dedent=False)
    # the patch's request differs from its limit: which one was meant is a guess, so the fix is unsafe
    safe_only = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--fix")
    assert safe_only.exit_code == 1 and "(1 more with --unsafe-fixes)" in safe_only.stdout
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "--fix", "--unsafe-fixes")
    assert "gpulint: overlays/prod/gpu-patch.yaml: applied 1 fix" in result.stderr
    assert "nvidia.com/gpu: 1\n" in (repo / "overlays/prod/gpu-patch.yaml").read_text()
    assert (repo / "base/deployment.yaml").read_text() == OVERLAYS["base/deployment.yaml"]
    assert result.exit_code == 0, result.stdout  # rendered again after the fix: nothing left


@pytest.mark.slow
def test_fix_renders_again_until_the_base_needs_no_fix(repo, render_tools):
    """The base asks a GPU through requests alone on the host network: the API server refuses the Deployment, so
    host-network-dns on its pods is held back. The first pass sets the limit in the base, the overlay is rendered
    again, the second sets dnsPolicy (cli/fix_passes.py)."""
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].split("patches:")[0]
    files["base/deployment.yaml"] = (
        OVERLAYS["base/deployment.yaml"]
        .replace("limits:", "requests:")
        .replace("      containers:", "      hostNetwork: true\n      containers:")
    )
    del files["overlays/prod/gpu-patch.yaml"]
    write_tree(repo, files, dedent=False)
    # --diff writes nothing, so the overlay cannot be rendered again: the base gets its first pass (docs/fixes.md)
    diff = run_cli("check", "overlays/prod", "--kubectl", render_tools["kubectl"], "--diff")
    assert "+            limits:" in diff.stdout and "dnsPolicy" not in diff.stdout and diff.stderr == ""
    result = run_cli("check", "overlays/prod", "--kubectl", render_tools["kubectl"], "--fix")
    fixed = (repo / "base/deployment.yaml").read_text()
    assert "limits:" in fixed and "dnsPolicy: " in fixed, (result.stderr, fixed)
    assert result.stderr == "gpulint: base/deployment.yaml: applied 2 fixes\n" and result.exit_code == 0
    again = run_cli("check", "overlays/prod", "--kubectl", render_tools["kubectl"], "--fix")
    assert again.stderr == "" and (repo / "base/deployment.yaml").read_text() == fixed


def test_overlay_failures_are_findings_at_the_kustomization(repo, render_tools):
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].replace(
        "  - ../../base\n", "  - ../../base\n  - gpu-quota.yaml\n"
    )
    write_tree(repo, files, dedent=False)
    result = run_cli("check", "overlays/prod", "--kubectl", render_tools["kubectl"], "--format", "json")
    (finding,) = result.json()["findings"]
    assert (finding["path"], finding["line"], finding["severity"]) == ("overlays/prod/kustomization.yaml", 7, "error")
    assert "gpu-quota.yaml" in said(finding) and "no such file or directory" in said(finding)
    assert "gpulint" not in said(finding)  # nothing of the wrapper gpulint builds with


def test_an_unreachable_remote_base_is_a_warning(repo, render_tools):
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].replace(
        "  - ../../base\n", "  - ../../base\n  - https://gitlab.example.invalid/platform/gpu-quota?ref=v1.2.0\n"
    )
    write_tree(repo, files, dedent=False)
    # the user allowed remote bases (https); by default none is fetched (tests/hostile/test_render_network.py)
    result = run_cli(
        "check", "overlays/prod", "--kubectl", render_tools["kubectl"], "--format", "json", "--render-remote-bases"
    )
    assert result.exit_code == 0, result.stdout
    (finding,) = result.json()["findings"]
    assert (finding["path"], finding["line"], finding["severity"]) == ("overlays/prod/kustomization.yaml", 7, "warning")
    assert "the overlay was not checked" in said(finding)


def test_without_kubectl_the_overlay_resources_are_linted_raw_and_patches_skipped(repo, monkeypatch):
    write_tree(repo, OVERLAYS, dedent=False)
    monkeypatch.setenv("PATH", str(repo / "no-binaries-here"))
    result = run_cli("check", ".")
    # the base is fine on its own; the patches are partial objects, and the overlay is a warning
    assert places(result.stdout) == ["overlays/prod/kustomization.yaml:1:1 not-rendered"]
    assert "kustomize overlay not rendered" in result.stdout and "no kustomize or kubectl binary" in result.stdout


# vllm-project/aibrix's layout: an overlay whose sub-overlay reaches a base three levels up, each
# kustomization repeating `apiVersion` at its end (kustomize keeps the last key and builds it)
GATEWAY = {
    "config/gateway/gateway-plugin/kustomization.yaml": """
        resources:
        - gateway-plugin.yaml
    """,
    # line 20: a GPU request with no limit, to show the base was rendered
    "config/gateway/gateway-plugin/gateway-plugin.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: gateway-plugins
          namespace: aibrix-system
        spec:
          selector:
            matchLabels:
              app: gateway-plugins
          template:
            metadata:
              labels:
                app: gateway-plugins
            spec:
              containers:
                - name: gateway-plugin
                  image: aibrix/gateway-plugins:nightly
                  resources:
                    requests:
                      nvidia.com/gpu: 1
    """,
    "config/experimentals/gpu-optimizer/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization

        resources:
        - gateway-plugin

        apiVersion: kustomize.config.k8s.io/v1beta1
    """,
    "config/experimentals/gpu-optimizer/gateway-plugin/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization

        namespace: aibrix-system

        namePrefix: aibrix-

        resources:
        - ../../../gateway/gateway-plugin

        patches:
        - patch: |-  # Use the '|' and '-' for inline patching
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: gateway-plugins
            spec:
              template:
                spec:
                  containers:
                    - name: gateway-plugin
                      env:
                        - name: AIBRIX_GPU_OPTIMIZER_TRACING_FLAG
                          value: "true"
          target:
            kind: Deployment
            name: gateway-plugins

        apiVersion: kustomize.config.k8s.io/v1beta1
    """,
}
GATEWAY = {name: textwrap.dedent(text).lstrip("\n") for name, text in GATEWAY.items()}


def test_a_kustomization_repeating_a_key_renders_with_every_base_it_reaches(repo, render_tools):
    write_tree(repo, GATEWAY, dedent=False)
    built = subprocess.run(
        [render_tools["kubectl"], "kustomize", "config/experimentals/gpu-optimizer"], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr  # kustomize builds it as written
    assert "AIBRIX_GPU_OPTIMIZER_TRACING_FLAG" in built.stdout
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"])
    assert places(result.stdout) == [
        "config/gateway/gateway-plugin/gateway-plugin.yaml:20:15 gpu-request-without-limit"
    ]
    assert "Deployment/aibrix-system/aibrix-gateway-plugins" in result.stdout


# an overlay inflating a chart the repository vendors beside it (`helmGlobals.chartHome: ../charts`):
# kustomize looks for the chart on the disk, outside the overlay's root, and reads the values in it
CHART_HOME = {
    "charts/vllm/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
    "charts/vllm/values.yaml": "gpus: 1\n",
    "charts/vllm/templates/pod.yaml": """
        apiVersion: v1
        kind: Pod
        metadata:
          name: {{ .Release.Name }}
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.6.3
              resources:
                requests:
                  nvidia.com/gpu: {{ .Values.gpus }}
    """,
    "deploy/prod/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        helmGlobals:
          chartHome: ../../charts
        helmCharts:
          - name: vllm
            releaseName: prod
            valuesFile: values.yaml
    """,
    "deploy/prod/values.yaml": "gpus: 2\n",
}
CHART_HOME = {name: textwrap.dedent(text).lstrip("\n") for name, text in CHART_HOME.items()}


def test_an_overlay_inflates_a_chart_from_a_chart_home_outside_its_root(repo, render_tools):
    write_tree(repo, CHART_HOME, dedent=False)
    tools = ["--kubectl", render_tools["kubectl"], "--helm", render_tools["helm"]]
    built = subprocess.run(
        [render_tools["kubectl"], "kustomize", "deploy/prod", "--enable-helm", "--helm-command", render_tools["helm"]],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0 and "nvidia.com/gpu: 2" in built.stdout, built.stderr
    result = run_cli("check", "deploy", *tools, "--kustomize-enable-helm", "--format", "json")
    (finding,) = result.json()["findings"]
    assert (finding["rule"], finding["object"]["name"]) == ("gpu-request-without-limit", "prod"), result.stdout
    assert "requests nvidia.com/gpu: 2 " in finding["message"]  # the overlay's values, over the chart's


def test_a_chart_home_outside_the_repository_is_left_out(repo, render_tools):
    files = {name: text for name, text in CHART_HOME.items() if name.startswith("deploy/")}
    files["deploy/prod/kustomization.yaml"] = files["deploy/prod/kustomization.yaml"].replace(
        "../../charts", "../../../charts"
    )
    (repo / "inner").mkdir()
    write_tree(
        repo, {f"charts/{name}": text for name, text in CHART_HOME.items() if name.startswith("charts/")}, dedent=False
    )
    write_tree(repo / "inner", files, dedent=False)
    subprocess.run(["git", "init", "-q", str(repo / "inner")], check=True)
    result = run_cli(
        "check",
        "inner/deploy",
        "--kubectl",
        render_tools["kubectl"],
        "--helm",
        render_tools["helm"],
        "--kustomize-enable-helm",
        "--format",
        "json",
    )
    messages = [f["message"] for f in result.json()["findings"]]
    assert any("'../../../charts' leads outside the repository" in m for m in messages), messages
    assert all("gpu-request-without-limit" != f["rule"] for f in result.json()["findings"])


# ------------------------------------------------------------------------------------------ security


def renderer(repo: Path, name: str, script: str) -> Path:
    """An executable ``name`` in the repository's bin/ running ``script``: a renderer that misbehaves."""
    fake = repo / "bin" / name
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(script)
    fake.chmod(0o755)
    return fake


FAKE_RENDERER = """#!/bin/sh
# prints what a renderer would see of the environment gpulint gives it, then a manifest
for variable in HOME HELM_PLUGINS HELM_CONFIG_HOME HELM_DATA_HOME KUSTOMIZE_PLUGIN_HOME GIT_CONFIG_GLOBAL; do
  eval "value=\\$$variable"
  echo "# $variable=$value" >&2
done
ls -A "$HELM_PLUGINS" >&2
echo "$@" >&2
exit 3
"""


def test_renderers_get_empty_plugin_and_config_directories(repo, monkeypatch):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    fake = renderer(repo, "helm", FAKE_RENDERER)
    plugins = repo / "user-plugins"
    (plugins / "evil").mkdir(parents=True)
    monkeypatch.setenv("HELM_PLUGINS", str(plugins))
    monkeypatch.setenv("HOME", str(repo))
    result = run_cli("check", "gpu-inference", "--helm", str(fake), "--format", "json")
    (finding,) = result.json()["findings"]
    message = said(finding)
    assert str(plugins) not in message and "evil" not in message
    assert "HELM_PLUGINS=/" in message and "gpulint-render-" in message
    assert "GIT_CONFIG_GLOBAL=/dev/null" in message
    assert "template release-name" in message and "--skip-tests" in message
    assert "--post-renderer" not in message and "--dependency-update" not in message


def test_a_renderer_that_never_ends_is_stopped(repo):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    fake = renderer(repo, "helm", "#!/bin/sh\nexec sleep 60\n")
    (repo / ".gpulint.yaml").write_text("render:\n  timeout: 1\n")
    result = run_cli("check", "gpu-inference", "--helm", str(fake), "--format", "json")
    (finding,) = result.json()["findings"]
    assert finding["severity"] == "warning" and "did not finish within 1 s" in finding["message"]


def test_an_overlay_whose_build_never_ends_is_stopped(repo):
    write_tree(repo, OVERLAYS, dedent=False)
    fake = renderer(repo, "kubectl", "#!/bin/sh\nexec sleep 60\n")
    (repo / ".gpulint.yaml").write_text("render:\n  timeout: 1\n")
    result = run_cli("check", "overlays/prod", "--kubectl", str(fake), "--format", "json")
    stopped = [f for f in result.json()["findings"] if "did not finish" in f["message"]]
    assert [(f["severity"], f["message"]) for f in stopped] == [
        ("warning", "kubectl kustomize did not finish within 1 s; the overlay was not checked")
    ], result.json()


def test_a_renderer_that_prints_without_end_is_stopped_at_the_output_bound(repo):
    write_tree(repo / "gpu-inference", CHART, dedent=False)
    fake = renderer(repo, "helm", "#!/bin/sh\nexec cat /dev/zero\n")
    result = run_cli("check", "gpu-inference", "--helm", str(fake), "--format", "json")
    (finding,) = result.json()["findings"]
    assert (finding["severity"], finding["message"]) == (
        "warning",
        "helm template printed more than 64 MiB; the chart was not checked",
    )


def test_entries_a_kustomization_lists_only_in_comments_are_neither_rendered_nor_linted_raw(repo, render_tools):
    """A kubebuilder scaffold: optional patches and components switched off by commenting them out."""
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].split("patches:")[0] + (
        "# [MONITORING] uncomment to scrape the server\n"
        "#- ../../components/monitoring\n"
        "patches:\n"
        "#- path: gpu-patch.yaml  # two GPUs per replica\n"
    )
    files["components/monitoring/kustomization.yaml"] = "resources:\n- pod.yaml\n"
    files["components/monitoring/pod.yaml"] = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: probe}\nspec:\n"
        "  containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}]\n"
    )
    write_tree(repo, files, dedent=False)
    result = run_cli("check", ".", "--kubectl", render_tools["kubectl"], "-v")
    assert result.exit_code == 0, result.stdout
    assert places(result.stdout) == []
    assert (
        "note: overlays/prod/gpu-patch.yaml: skipped: listed only in a comment of overlays/prod/kustomization.yaml"
        in result.stdout
    )
    assert "in 1 file, 2 objects" in result.stdout  # the overlay rendered, and nothing else


def test_a_chart_that_fails_on_its_namespace_says_how_to_give_one(repo, render_tools):
    chart = dict(CHART)
    chart["templates/validation.yaml"] = (
        '{{- if eq .Release.Namespace "default" }}\n'
        "{{- fail \"Running in the 'default' namespace is not recommended.\" }}\n"
        "{{- end }}\n"
    )
    write_tree(repo / "gpu-inference", chart, dedent=False)
    # it installs with --namespace, as its docs say: rendered in a namespace named after the chart, and said
    refused = run_cli("check", "gpu-inference", "--helm", render_tools["helm"])
    assert refused.exit_code == 0 and places(refused.stdout) == ["gpu-inference/Chart.yaml:1:1 not-rendered"]
    assert "info[not-rendered]" in refused.stdout
    assert "rendered in namespace 'gpu-inference', as it installs with --namespace" in refused.stdout
    assert "give its namespace under render.charts in .gpulint.yaml" in refused.stdout
    (repo / ".gpulint.yaml").write_text("render:\n  charts:\n    gpu-inference: {namespace: inference, release: llm}\n")
    passing = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--format", "json")
    assert passing.exit_code == 0 and passing.json()["findings"] == []


def test_fix_goes_to_values_yaml_for_a_value_the_chart_prints_from_it(repo, render_tools):
    chart = dict(CHART)
    chart["values.yaml"] = CHART["values.yaml"].replace("warmup: false", "warmup: true")
    write_tree(repo / "gpu-inference", chart, dedent=False)
    template = (repo / "gpu-inference/templates/warmup-job.yaml").read_text()
    result = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--diff")
    assert result.stdout.startswith("--- a/gpu-inference/values.yaml\n+++ b/gpu-inference/values.yaml\n"), result.stdout
    fixed = run_cli("check", "gpu-inference", "--helm", render_tools["helm"], "--fix")
    assert "gpulint: gpu-inference/values.yaml: applied 1 fix" in fixed.stderr
    assert fixed.exit_code == 0, fixed.stdout  # rendered again: the Job now has its limit
    values = (repo / "gpu-inference/values.yaml").read_text()
    assert "resources:\n  requests:\n    nvidia.com/gpu: 2\n  limits:\n    nvidia.com/gpu: 2\n" in values
    assert (repo / "gpu-inference/templates/warmup-job.yaml").read_text() == template


def test_files_named_as_pre_commit_names_them_render_their_chart_or_overlay(repo, render_tools):
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    write_tree(repo / "deploy", OVERLAYS, dedent=False)
    changed = (
        "charts/gpu-inference/templates/warmup-job.yaml",
        "charts/gpu-inference/values.yaml",  # the same chart: rendered once
        "deploy/overlays/prod/gpu-patch.yaml",
    )
    result = run_cli(
        "check", *changed, "--helm", render_tools["helm"], "--kubectl", render_tools["kubectl"], "--set", "warmup=true"
    )
    assert places(result.stdout) == [
        "charts/gpu-inference/templates/warmup-job.yaml:14:13 gpu-request-without-limit",
        "deploy/overlays/prod/gpu-patch.yaml:12:31 gpu-request-without-limit",
        "deploy/overlays/prod/kustomization.yaml:15:16 gpu-non-integer",
    ]
    assert "in 2 files" in result.stdout  # the chart and the overlay, nothing raw


def test_a_library_chart_is_not_rendered_on_its_own(repo, render_tools):
    write_tree(
        repo / "charts" / "common",
        {
            "Chart.yaml": "apiVersion: v2\nname: common\ntype: library\nversion: 1.2.0\n",
            "templates/_labels.tpl": '{{- define "common.labels" -}}\napp.kubernetes.io/name: {{ .Chart.Name }}\n{{- end }}\n',
        },
        dedent=False,
    )
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    result = run_cli("check", "charts", "--helm", render_tools["helm"], "-v")
    assert result.exit_code == 0, result.stdout
    assert "note: charts/common: skipped: a library chart" in result.stdout
    assert "not-rendered" not in result.stdout and "in 1 file" in result.stdout


# ------------------------------------------------------------------------------------------ explain


def test_explain_renders_a_chart_as_check_does_and_points_at_its_templates(repo, render_tools):
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    args = ("charts/gpu-inference", "--helm", render_tools["helm"], "--set", "warmup=true")
    check = _run_cli("check", *args, "--color", "never")
    args = (*args, "--inventory", FLEET)
    result = _run_cli("explain", *args, "--object", "Job/release-name-gpu-inference-warmup")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "== Job/release-name-gpu-inference-warmup" in result.stdout
    # the findings check reports on the Job, at the same template line
    assert "charts/gpu-inference/templates/warmup-job.yaml:14:13" in check.stdout
    assert "charts/gpu-inference/templates/warmup-job.yaml:14:13: error[gpu-request-without-limit]" in result.stdout
    assert "<stdin>" not in result.stdout and "_helpers.tpl" not in result.stdout
    deployments = _run_cli("explain", *args, "--object", "Deployment/release-name-gpu-inference-llama-70b")
    assert deployments.exit_code == 0, deployments.stdout + deployments.stderr
    assert "== Deployment/release-name-gpu-inference-llama-70b" in deployments.stdout
    assert "4 nvidia.com/gpu" in deployments.stdout


def test_explain_without_helm_names_the_chart_and_reads_no_template_raw(repo, monkeypatch):
    write_tree(repo / "charts" / "gpu-inference", CHART, dedent=False)
    monkeypatch.setenv("PATH", str(repo / "no-binaries"))
    result = _run_cli("explain", "charts", "--inventory", FLEET)
    assert "charts/gpu-inference/Chart.yaml:1:1: Helm chart not rendered: no helm binary" in result.stderr
    assert result.stdout == ""  # nothing rendered: no template read raw
    assert result.exit_code == 0  # as `check` decides: a warning, under the default --fail-on error


def test_explain_renders_an_overlay_and_points_at_the_patch(repo, render_tools):
    files = dict(OVERLAYS)
    files["overlays/prod/kustomization.yaml"] = OVERLAYS["overlays/prod/kustomization.yaml"].split("  - target:")[0]
    write_tree(repo, files, dedent=False)
    result = _run_cli("explain", "overlays/prod", "--kubectl", render_tools["kubectl"], "--inventory", FLEET)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "== Deployment/inference/prod-vllm" in result.stdout
    assert "overlays/prod/gpu-patch.yaml:12:31: error[gpu-request-without-limit]" in result.stdout
    assert "base/deployment.yaml" not in result.stdout


def test_explain_renders_a_bad_chart_as_a_finding_not_a_traceback(repo, render_tools):
    files = dict(CHART)
    files["templates/warmup-job.yaml"] = (
        "{{- if .Values.warmup }}\nkind: Job\n{{ .Values.missing.field }}\n{{- end }}\n"
    )
    write_tree(repo / "charts" / "gpu-inference", files, dedent=False)
    result = _run_cli(
        "explain", "charts/gpu-inference", "--helm", render_tools["helm"], "--set", "warmup=true", "--inventory", FLEET
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "charts/gpu-inference/templates/warmup-job.yaml:3:" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
