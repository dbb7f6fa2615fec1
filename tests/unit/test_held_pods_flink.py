"""Flink's pod templates named by its configuration (gpulint/kube/held_pods.py flink_templates): a
``kubernetes.pod-template-file.*`` option of the ``flink-conf.yaml`` / ``config.yaml`` a ConfigMap holds, naming a
file that is another key of the same ConfigMap, makes that key's document the JobManager's or TaskManager's pod,
whether or not it lists ``flink-main-container``."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from conftest import check_json
from rule_harness import findings_of

from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.inputs.loader import load_text

REJECTED = "api-rejected"

# Shaped like Flink's native Kubernetes docs ("Pod Template") and the session clusters users keep in a repository:
# the conf directory a ConfigMap, its TaskManager template a sidecar and the GPU nodes' toleration (Flink makes the
# main container and gives it the GPUs of external-resource.gpu.*).
NATIVE = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: flink-config
      namespace: flink
    data:
      flink-conf.yaml: |
        jobmanager.rpc.address: flink-jobmanager
        taskmanager.numberOfTaskSlots: 1
        external-resources: gpu
        external-resource.gpu.amount: 1
        external-resource.gpu.kubernetes.config-key: nvidia.com/gpu
        kubernetes.pod-template-file.taskmanager: /opt/flink/conf/taskmanager-pod-template.yaml
      taskmanager-pod-template.yaml: |
        apiVersion: v1
        kind: Pod
        metadata:
          name: taskmanager-pod-template
        spec:
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              value: "present"
              effect: NoSchedule
          containers:
            - name: log-shipper
              image: fluent/fluent-bit:3.0
      log4j-console.properties: |
        rootLogger.level = INFO
"""


def _without(text: str, needle: str) -> str:
    """The text without its line holding ``needle``."""
    return "".join(line for line in text.splitlines(keepends=True) if needle not in line)


FIXED = _without(NATIVE, 'value: "present"')


def _sites(text: str) -> list[tuple[str, str]]:
    data = load_text("cm.yaml", textwrap.dedent(text)).documents[0].data
    return [(str(site.path[1]), site.role) for site in pod_spec_sites(data)]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def test_the_taskmanager_template_the_configuration_names_is_the_taskmanagers_pod():
    assert _sites(NATIVE) == [("taskmanager-pod-template.yaml", "Flink TaskManager")]
    found = findings_of(REJECTED, NATIVE)
    assert [(f.severity, f.line) for f in found] == [("error", _line_of(NATIVE, "operator: Exists"))], found
    assert "value must be empty when `operator` is 'Exists'" in found[0].message


def test_the_fixed_template_is_clean():
    assert _sites(FIXED) == [("taskmanager-pod-template.yaml", "Flink TaskManager")]
    assert findings_of(None, FIXED) == []


def test_config_yaml_nests_the_default_template_for_both():
    """Flink 1.19's config.yaml is standard YAML: the option may be written nested; `.default` is the
    fallback of both the JobManager's and the TaskManager's."""
    text = NATIVE.replace(
        "      flink-conf.yaml: |\n",
        "      config.yaml: |\n        kubernetes:\n          pod-template-file:\n"
        "            default: /opt/flink/conf/taskmanager-pod-template.yaml\n",
    )
    text = _without(text, "kubernetes.pod-template-file.taskmanager")
    assert _sites(text) == [("taskmanager-pod-template.yaml", "Flink JobManager and TaskManager")]
    assert len(findings_of(REJECTED, text)) == 1


def test_the_deprecated_key_still_names_it():
    text = NATIVE.replace("kubernetes.pod-template-file.taskmanager:", "kubernetes.pod-template-file:")
    assert _sites(text) == [("taskmanager-pod-template.yaml", "Flink JobManager and TaskManager")]


def test_the_operators_default_configuration_gives_only_the_taskmanagers_pod():
    """The Flink operator writes the JobManager's template itself while its startup probe is on (the default):
    only FlinkDeployments without a podTemplate of their own start their TaskManagers from the file."""
    operator = NATIVE.replace("name: flink-config", "name: flink-operator-config").replace(
        "jobmanager.rpc.address: flink-jobmanager", "kubernetes.operator.reconcile.interval: 15 s"
    )
    operator = operator.replace("pod-template-file.taskmanager:", "pod-template-file.default:")
    assert _sites(operator) == [
        (
            "taskmanager-pod-template.yaml",
            "Flink TaskManager (of each FlinkDeployment without a podTemplate of its own)",
        )
    ]
    assert len(findings_of(REJECTED, operator)) == 1
    jm_only = operator.replace("pod-template-file.default:", "pod-template-file.jobmanager:")
    assert _sites(jm_only) == []  # replaced by the operator's own: not what any pod is made from
    probe_off = jm_only.replace("reconcile.interval: 15 s", "jm-deployment.startup.probe.enabled: false")
    assert _sites(probe_off) == [("taskmanager-pod-template.yaml", "Flink JobManager")]


def test_traps_a_path_elsewhere_a_file_that_is_no_pod_and_no_option():
    elsewhere = NATIVE.replace("/opt/flink/conf/taskmanager-pod-template.yaml", "/opt/flink/templates/tm.yaml")
    assert _sites(elsewhere) == []  # another ConfigMap's file: this document is no one's known pod
    log4j = NATIVE.replace("/opt/flink/conf/taskmanager-pod-template.yaml", "/opt/flink/conf/log4j-console.properties")
    assert _sites(log4j) == []
    unnamed = _without(NATIVE, "kubernetes.pod-template-file.taskmanager")
    assert _sites(unnamed) == [] and findings_of(None, unnamed) == []


def test_generated_by_kustomize_the_finding_is_in_the_template_file(tmp_path: Path, kubectl: Path):
    """The conf directory made by a configMapGenerator from the files beside it (as flink-kubernetes-operator's
    examples and users' session clusters do): the finding is at the line of the template file."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    overlay = tmp_path / "flink-session"
    overlay.mkdir()
    data = load_text("cm.yaml", textwrap.dedent(NATIVE)).documents[0].data["data"]
    for name in ("flink-conf.yaml", "taskmanager-pod-template.yaml"):
        (overlay / name).write_text(data[name], encoding="utf-8")
    (overlay / "kustomization.yaml").write_text(
        "namespace: flink\nconfigMapGenerator:\n  - name: flink-config\n    files:\n"
        "      - flink-conf.yaml\n      - taskmanager-pod-template.yaml\n",
        encoding="utf-8",
    )
    found = [f for f in check_json(str(overlay), "--kubectl", str(kubectl)) if f["rule"] == REJECTED]
    template = data["taskmanager-pod-template.yaml"]
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [
        ("taskmanager-pod-template.yaml", _line_of(template, "operator: Exists"))
    ], found
