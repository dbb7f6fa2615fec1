"""Pod specs held in configuration (gpulint/kube/held_pods.py): a pod template written as a document in a
ConfigMap's data, which a program reads and makes pods from, gets the pod rules; each finding sits at its
field's line and column inside the string."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import yaml
from rule_harness import findings_of, raw_findings_of

from gpulint.kube import held_pods as held_pods_module
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.inputs.loader import load_text

SHM = "dev-shm-missing"

# Shaped like pytorch/ci-infra's runner.yaml.tpl (the hook ConfigMap of an ARC runner in kubernetes mode) and
# ARC's docs (docs/gha-runner-scale-set-controller: "Configuring the runner container hook extension").
HOOK = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: arc-runner-hook-l-x86iavx512-45-172-t4-4
      namespace: arc-runners
    data:
      job-pod.yaml: |
        metadata:
          labels:
            runner-type: gpu
        spec:
          nodeSelector:
            instance-type: "g4dn.12xlarge"
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              effect: NoSchedule
          containers:
            - name: "$job"
              resources:
                limits:
                  cpu: "45"
                  memory: "172Gi"
                  nvidia.com/gpu: 4
              volumeMounts:
                - name: git-cache
                  mountPath: /opt/git-cache
          volumes:
            - name: git-cache
              hostPath:
                path: /mnt/git-cache
"""
DSHM_MOUNT = """\
                - name: git-cache
                  mountPath: /opt/git-cache
                - name: dshm
                  mountPath: /dev/shm
"""
DSHM_VOLUME = """\
          volumes:
            - name: dshm
              emptyDir:
                medium: Memory
"""


def _fixed(text: str) -> str:
    mounts = "                - name: git-cache\n                  mountPath: /opt/git-cache\n"
    return text.replace(mounts, DSHM_MOUNT).replace("          volumes:\n", DSHM_VOLUME, 1)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def test_hook_template_without_dev_shm_is_found_inside_the_block():
    found = [f for f in findings_of(None, HOOK) if f.rule == SHM]
    assert len(found) == 1, found
    assert found[0].severity == "warning"
    assert "container '$job' (4 nvidia.com/gpu) has no memory-backed emptyDir at /dev/shm" in found[0].message
    # the container's item inside the `|` block, not the data key
    assert (found[0].line, found[0].column) == (_line_of(HOOK, '- name: "$job"'), 17)


def test_hook_template_with_dev_shm_is_clean():
    assert findings_of(None, _fixed(HOOK)) == []


def test_a_held_pods_finding_offers_no_fix():
    raw = [f for f in raw_findings_of(SHM, HOOK) if f["rule"] == SHM]
    assert raw and all(f.get("fix") is None for f in raw), raw
    assert not any("--fix" in note for f in raw for note in f["notes"])


def test_gpu_limits_in_the_hook_template_meet_the_cluster(tmp_path: Path):
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "t4-1", "labels": {"instance-type": "g4dn.12xlarge"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "47", "memory": "180Gi", "pods": "110", "nvidia.com/gpu": "4"}},
    }
    inventory = tmp_path / "nodes.yaml"
    inventory.write_text(yaml.safe_dump(node), encoding="utf-8")
    eight = _fixed(HOOK).replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 8")
    found = [f for f in findings_of("gpu-unschedulable", eight, inventory=[str(inventory)])]
    assert [f.rule for f in found] == ["gpu-unschedulable"], found
    assert found[0].line > _line_of(eight, "job-pod.yaml: |")  # inside the block
    assert findings_of("gpu-unschedulable", _fixed(HOOK), inventory=[str(inventory)]) == []


def test_the_hook_builds_the_job_container_from_dollar_job():
    """mergePodSpecWithOptions: "$"-named containers are left out of the pod (they extend the hook's), the others
    appended after the job container; the hook's volumes appended; the job container keeps no template image."""
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: hook}
        data:
          extension: |
            spec:
              containers:
                - name: sidecar
                  image: busybox
                - name: $redis
                  resources: {limits: {memory: 1Gi}}
                - name: $job
                  image: ignored:latest
                  resources: {limits: {nvidia.com/gpu: 2}}
    """
    data = load_text("hook.yaml", textwrap.dedent(text)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert site.path == ("data", "extension", "spec")
    names = [c["name"] for c in site.spec["containers"]]
    assert names == ["$job", "sidecar"]
    assert "image" not in site.spec["containers"][0]
    assert [v["name"] for v in site.spec["volumes"]] == ["externals", "work", "github"]
    assert site.spec["restartPolicy"] == "Never"
    aliases = dict(site.aliases)
    assert aliases[("data", "extension", "spec", "containers", 0)] == ("data", "extension", "spec", "containers", 2)
    assert aliases[("data", "extension", "spec", "containers", 1)] == ("data", "extension", "spec", "containers", 0)


def test_a_pod_spec_no_program_is_known_to_read_is_left_alone():
    """A ConfigMap's data is free text: a pod-shaped document with no "$" container (a copy of a manifest, a
    chart's values) says nothing about who reads it."""
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: saved-pod}
        data:
          pod.yaml: |
            spec:
              containers:
                - name: trainer
                  image: pytorch/pytorch:2.4.0
                  resources: {limits: {nvidia.com/gpu: 8}}
          script.sh: |
            for c in $containers; do echo "$c"; done
    """
    data = load_text("cm.yaml", textwrap.dedent(text)).documents[0].data
    assert list(pod_spec_sites(data)) == []
    assert findings_of(SHM, text) == []


def test_a_script_with_a_dollar_and_containers_is_not_parsed(monkeypatch):
    """A ConfigMap's script that holds "$" and "containers" but names no "$" container is no hook template
    (runner-container-hooks v0.8.1 reads only containers named "$job" or "$<service>"): it is not parsed at all,
    while a hook template whose only extension is a service container is."""
    calls: list[str] = []
    real = held_pods_module.load_embedded

    def spy(text: str) -> object:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(held_pods_module, "load_embedded", spy)
    script = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: debug-tools}
        data:
          names.sh: |
            pod=$(kubectl get pod -l app=trainer -o name)
            kubectl get "$pod" -o jsonpath='{.spec.containers[*].name}'
    """
    data = load_text("cm.yaml", textwrap.dedent(script)).documents[0].data
    assert list(pod_spec_sites(data)) == []
    assert calls == []
    service = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: hook}
        data:
          extension: |
            {"spec": {"containers": [{"name": "$redis", "resources": {"limits": {"memory": "1Gi"}}}]}}
    """
    data = load_text("hook.yaml", textwrap.dedent(service)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert [c["name"] for c in site.spec["containers"]] == ["$job"]
    assert len(calls) == 1


def test_a_placeholder_makes_its_field_unknown():
    """`nvidia.com/gpu: ${GPUS}` is filled in before the runner reads the file: not a count, and the pod is not
    all known, so its absent /dev/shm proves nothing."""
    text = HOOK.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: ${GPUS}")
    assert findings_of(None, text) == []
    data = load_text("hook.yaml", textwrap.dedent(text)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert "nvidia.com/gpu" not in site.spec["containers"][0]["resources"]["limits"]
    assert site.completed_by


def test_a_template_statement_leaves_the_document_unread():
    text = HOOK.replace("        spec:\n", "        {% if gpu %}\n        spec:\n", 1)
    data = load_text("hook.yaml", textwrap.dedent(text)).documents[0].data
    assert list(pod_spec_sites(data)) == []


def test_a_field_inside_a_folded_or_quoted_string_is_placed_by_its_characters():
    """locate follows a path into any string that holds the document (locate_in_string matches characters)."""
    doc = {"spec": {"containers": [{"name": "$job", "resources": {"limits": {"nvidia.com/gpu": 4}}}]}}
    quoted = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q}\ndata:\n  job.json: " + json.dumps(json.dumps(doc))
    document = load_text("q.yaml", quoted).documents[0]
    path = ("data", "job.json", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    line, column = document.locate(path)
    assert line == 5
    assert quoted.splitlines()[4][column - 1 :].startswith("4}")
    # a string that holds no such field: its key, as for any field that is not there
    assert document.locate(("data", "job.json", "metadata")) == document.locate(("data", "job.json"), on_key=True)


def test_pytorchci490_is_caught():
    folder = Path(__file__).parents[1] / "heldout5" / "pytorchci490-hook-template-no-shm"
    broken = [f for f in findings_of(None, (folder / "broken.yaml").read_text()) if f.rule == SHM]
    assert len(broken) == 1 and "container '$job' (4 nvidia.com/gpu)" in broken[0].message
    assert findings_of(None, (folder / "fixed.yaml").read_text()) == []


# Shaped like the Airflow chart's files/pod-template-file.kubernetes-helm-yaml as rendered into its ConfigMap
AIRFLOW = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: airflow-pod-template
      namespace: airflow
    data:
      pod_template_file.yaml: |
        apiVersion: v1
        kind: Pod
        metadata:
          name: placeholder-name
        spec:
          containers:
            - name: base
              image: apache/airflow:2.10.5
              resources:
                limits:
                  nvidia.com/gpu: 2
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              effect: NoSchedule
          restartPolicy: Never
"""


def test_airflow_pod_template_is_the_pod_each_task_starts_from():
    data = load_text("cm.yaml", textwrap.dedent(AIRFLOW)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert (site.path, site.role, site.pods) == (("data", "pod_template_file.yaml", "spec"), "Airflow task", None)
    assert "pod_override" in site.completed_by  # each task may add to it: absence proves nothing
    assert findings_of(None, AIRFLOW) == []  # two GPUs, no /dev/shm: a task's pod_override may mount it


def test_a_rejected_field_of_a_held_pod_is_an_error_at_its_line():
    text = AIRFLOW.replace("operator: Exists\n", 'operator: Exists\n              value: "true"\n')
    found = findings_of("api-rejected", text)
    assert [(f.rule, f.severity, f.line) for f in found] == [("api-rejected", "error", _line_of(text, "operator:"))]
    assert found[0].message.startswith("the API server rejects the pods made from it: ")
    assert "value must be empty when `operator` is 'Exists'" in found[0].message


def test_spark_pod_template_is_read_by_its_container_name():
    """Spark names its container spark-kubernetes-driver / -executor unless the template names it (docs/
    running-on-kubernetes.md, pod template properties); a Pod in a ConfigMap named otherwise is no one's known."""
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: spark-templates}
        data:
          executor-pod-template.yaml: |
            apiVersion: v1
            kind: Pod
            spec:
              nodeSelector:
                cloud.google.com/gke-accelerator: nvidia-l4
              containers:
                - name: spark-kubernetes-executor
                  resources:
                    limits:
                      nvidia.com/gpu: 0.5
          other-pod.yaml: |
            apiVersion: v1
            kind: Pod
            spec:
              containers:
                - name: worker
                  resources:
                    limits:
                      nvidia.com/gpu: 0.5
    """
    data = load_text("cm.yaml", textwrap.dedent(text)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert (site.role, site.path[1]) == ("Spark executor", "executor-pod-template.yaml")
    found = findings_of("gpu-non-integer", text)
    assert [f.line for f in found] == [_line_of(text, "nvidia.com/gpu: 0.5")]


def test_flink_pod_template_is_read_by_its_main_container():
    """Flink's native mode: the template's flink-main-container is the JobManager's or TaskManager's."""
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: flink-pod-template, namespace: flink}
        data:
          taskmanager-pod-template.yaml: |
            apiVersion: v1
            kind: Pod
            metadata:
              name: taskmanager-pod-template
            spec:
              containers:
                - name: flink-main-container
                  resources:
                    limits:
                      nvidia.com/gpu: 1.5
    """
    data = load_text("cm.yaml", textwrap.dedent(text)).documents[0].data
    (site,) = pod_spec_sites(data)
    assert site.role == "Flink JobManager or TaskManager" and "Flink" in site.completed_by
    found = findings_of("gpu-non-integer", text)
    assert [f.line for f in found] == [_line_of(text, "nvidia.com/gpu: 1.5")]


def test_a_hook_template_in_a_chart_is_placed_in_its_template_file(tmp_path: Path, helm: Path):
    """A chart's ConfigMap template (shaped like gha-runner-scale-set-experimental's hook_extension.yaml): the
    finding is at the field's line in the template, inside its `|` block, after Helm renders it."""
    from conftest import run_cli

    chart = tmp_path / "arc-gpu-runner"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: arc-gpu-runner\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("gpus: 4\n", encoding="utf-8")
    template = textwrap.dedent(
        """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {{ .Release.Name }}-hook-extension
        data:
          extension: |
            spec:
              containers:
                - name: $job
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .Values.gpus }}
        """
    )
    (chart / "templates" / "hook-extension.yaml").write_text(template, encoding="utf-8")
    run = run_cli("check", str(chart), "--helm", str(helm), "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    found = [f for f in run.json()["findings"] if f["rule"] == SHM]
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [
        ("hook-extension.yaml", _line_of(template, "- name: $job"))
    ], run.json()["findings"]


def test_every_holder_is_documented_with_the_code_that_reads_it():
    """docs/held-pods.md lists each row of the table, citing the code the row cites."""
    from gpulint.kube.held_pods import HOLDERS

    page = (Path(__file__).parents[2] / "docs" / "held-pods.md").read_text(encoding="utf-8")
    for holder in HOLDERS:
        words = [word.strip("(),;") for word in holder.source.split()]
        cited = [w for w in words[1:] if any(ch.isupper() or ch in "._" for ch in w)]  # files, functions, release
        assert words[0] in page and cited, holder.name
        assert [w for w in cited if w not in page] == [], holder.name


def test_explain_shows_the_held_pod_and_the_same_cause(tmp_path: Path):
    """`gpulint explain` names the hook template's pod and gives the check's finding at the same place."""
    from conftest import run_cli

    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "t4-1", "labels": {"instance-type": "g4dn.12xlarge"}},
        "status": {"allocatable": {"cpu": "47", "memory": "180Gi", "pods": "110", "nvidia.com/gpu": "4"}},
    }
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(node), encoding="utf-8")
    (tmp_path / "hook.yaml").write_text(textwrap.dedent(HOOK), encoding="utf-8")
    args = (str(tmp_path / "hook.yaml"), "--inventory", str(tmp_path / "nodes.yaml"), "--format", "json")
    explained = run_cli("explain", *args).json()["explanations"]
    checked = [f for f in run_cli("check", *args).json()["findings"] if f["rule"] == SHM]
    assert len(explained) == 1 and "'workflow job' pod template" in explained[0]["heading"]
    lines = [line for step in explained[0]["steps"] if step["title"] == "gpulint check" for line in step["lines"]]
    assert [line.split(" ", 1)[0] for line in lines if SHM in line] == [
        f"{checked[0]['path']}:{checked[0]['line']}:{checked[0]['column']}:"
    ]
