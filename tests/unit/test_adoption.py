"""Adopting gpulint on a repository with history: fix safety, baselines, notes, CI output formats."""

from __future__ import annotations

import itertools
import json
import os
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from conftest import run_cli

from gpulint.lint.findings import Diagnostic

# A training Job as the Kubernetes docs' "Schedule GPUs" page shapes a GPU pod.
TRAINING_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
        resources:
          requests:
            nvidia.com/gpu: 1
          limits:
            nvidia.com/gpu: 2
      - name: sidecar
        image: busybox:1.36
        resources:
          requests:
            nvidia.com/gpu: 1
      volumes:
      - {name: shm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}
"""

INFO_PODGROUP = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: trainers
  namespace: ml
spec:
  schedulingPolicy:
    gang:
      minCount: 2
"""


# --- fix safety ----------------------------------------------------------------------------------


def test_a_fix_must_declare_its_safety():
    with pytest.raises(ValueError, match="must state fix_safety"):
        Diagnostic("gpu-request-without-limit", ("spec",), "m", fix_path=("spec", "x"), fix_value=1)


def test_fix_applies_only_safe_fixes_and_shows_both_choices(write):
    job = write("job.yaml", TRAINING_JOB)
    result = run_cli("check", "--fix", str(job), "--color", "never")
    assert result.stderr == f"gpulint: {job}: applied 1 fix\n"
    fixed = job.read_text()
    # the sidecar's missing limit is copied from its request; the trainer's 1-vs-2 is left to a person
    assert fixed == TRAINING_JOB.replace(
        "            nvidia.com/gpu: 1\n",
        "            nvidia.com/gpu: 1\n          limits:\n            nvidia.com/gpu: 1\n",
    ).replace(
        "            nvidia.com/gpu: 1\n          limits:\n            nvidia.com/gpu: 1\n          limits:\n",
        "            nvidia.com/gpu: 1\n          limits:\n",
        1,
    )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{job}:16:29: error[gpu-request-without-limit] Job/ml/finetune: container 'trainer' requests "
        "nvidia.com/gpu: 1 but its limit is 2; the API server rejects the Pod"
    )
    assert lines[1] == (
        '    spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be equal to '
        "nvidia.com/gpu limit of 2"
    )
    assert "either set the request to 2 (the container holds 2 nvidia.com/gpu) or lower the limit to 1" in lines[2]
    assert lines[4] == "    fix (unsafe, --unsafe-fixes): set requests.nvidia.com/gpu to the limit 2"
    assert lines[-1] == "Found 1 error, 0 warnings in 1 file, 1 object (1 more with --unsafe-fixes)."


def test_unsafe_fixes_apply_both(write):
    job = write("job.yaml", TRAINING_JOB)
    result = run_cli("check", "--fix", "--unsafe-fixes", str(job))
    assert result.exit_code == 0, result.stdout
    assert result.stderr == f"gpulint: {job}: applied 2 fixes\n"
    assert job.read_text().count("nvidia.com/gpu: 2") == 2


def test_fix_with_diff_prints_the_diff_and_writes_nothing(write):
    job = write("job.yaml", TRAINING_JOB)
    result = run_cli("check", "--fix", "--diff", str(job))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- a/{job}\n+++ b/{job}\n")
    added = [line for line in result.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+          limits:", "+            nvidia.com/gpu: 1"]  # the sidecar only: the safe fix
    assert job.read_text() == TRAINING_JOB
    unsafe = run_cli("check", "--diff", "--unsafe-fixes", str(job))
    assert "-            nvidia.com/gpu: 1\n+            nvidia.com/gpu: 2\n" in unsafe.stdout


def test_diff_of_stdin_is_printed(write):
    result = run_cli("check", "--diff", "-", input=TRAINING_JOB)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/<stdin>\n+++ b/<stdin>\n@@ ")
    assert "+          limits:\n+            nvidia.com/gpu: 1\n" in result.stdout
    assert result.stderr == ""
    refused = run_cli("check", "--fix", "-", input=TRAINING_JOB)
    assert "fixes are not applied to standard input or a pipe (--diff prints them)" in refused.stderr


# --- baseline ------------------------------------------------------------------------------------


def _baselined_repo(write, tmp_path):
    job = write("apps/job.yaml", TRAINING_JOB)
    baseline = tmp_path / ".gpulint-baseline.json"
    result = run_cli("check", str(job), "--write-baseline", str(baseline))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(f"gpulint: wrote 2 findings to the baseline {baseline};")
    return job, baseline


def test_write_baseline_records_findings_for_people_too(write, tmp_path):
    job, baseline = _baselined_repo(write, tmp_path)
    document = json.loads(baseline.read_text())
    assert document["version"] == 1
    entries = document["findings"]
    assert [(e["rule"], e["path"], e["object"], e["field"]) for e in entries] == [
        (
            "gpu-request-without-limit",
            "apps/job.yaml",
            "Job/ml/finetune",
            "spec.template.spec.containers[name=sidecar].resources.requests[nvidia.com/gpu]",
        ),
        (
            "gpu-request-without-limit",
            "apps/job.yaml",
            "Job/ml/finetune",
            "spec.template.spec.containers[name=trainer].resources.requests[nvidia.com/gpu]",
        ),
    ]
    assert all(len(e["fingerprint"]) == 32 for e in entries)
    assert sorted(os.listdir(tmp_path)) == [".gpulint-baseline.json", "apps"]  # no temporary file left


def test_baseline_survives_line_shifts_and_edits_elsewhere(write, tmp_path, monkeypatch):
    job, baseline = _baselined_repo(write, tmp_path)
    shifted = (
        "# moved down by a comment and a new label\n"
        + TRAINING_JOB.replace("  namespace: ml\n", "  namespace: ml\n  labels: {team: research}\n")
        # a container inserted before the others: their indexes change, their names do not
        .replace(
            "      containers:\n",
            "      containers:\n      - name: init-data\n        image: busybox:1.36\n",
        )
        .replace("restartPolicy: Never", "restartPolicy: OnFailure")
    )
    job.write_text(shifted)
    monkeypatch.chdir(tmp_path / "apps")  # another working directory, another spelling of the path
    result = run_cli("check", "job.yaml", "--baseline", str(baseline))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "No problems found in 1 file, 1 object (2 in the baseline)."


def test_baseline_reports_a_new_finding_and_counts_repeats(write, tmp_path):
    job, baseline = _baselined_repo(write, tmp_path)
    job.write_text(
        TRAINING_JOB
        + "---\n"
        + TRAINING_JOB.replace("name: finetune", "name: finetune-2").replace(
            "limits:\n            nvidia.com/gpu: 2", "limits:\n            nvidia.com/gpu: 4"
        )
    )
    result = run_cli("check", str(job), "--baseline", str(baseline), "--format", "json")
    assert result.exit_code == 1
    report = result.json()
    assert sorted((f["object"]["name"], f["field"].split("[name=")[1].split("]")[0]) for f in report["findings"]) == [
        ("finetune-2", "sidecar"),
        ("finetune-2", "trainer"),
    ]
    assert report["summary"]["baselined"] == 2


def test_baseline_from_the_configuration_and_stale_entries(write, tmp_path, monkeypatch):
    job, baseline = _baselined_repo(write, tmp_path)
    write(".gpulint.yaml", "baseline: .gpulint-baseline.json\n")
    job.write_text(TRAINING_JOB.replace("          limits:\n            nvidia.com/gpu: 2\n", ""))
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "apps")
    # the trainer now has no limit at all: a different finding; the old one is gone from the file
    assert result.exit_code == 1
    assert "requests nvidia.com/gpu: 1 but sets no limit for it" in result.stdout
    assert (
        "note: 1 finding in the baseline .gpulint-baseline.json no longer occurs; "
        "`--write-baseline .gpulint-baseline.json` drops it" in result.stdout
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"version": 1, "findings": [\n  {"fingerprint": "x"},\n  oops]}',
            "bad.json:3:3: the baseline is not valid JSON: Expecting value",
        ),
        ('{"version": 2, "findings": []}', "bad.json: baseline version 2 is not supported"),
        ("[]", 'bad.json: not a gpulint baseline (expected {"version": 1, "findings": [...]}'),
        ('{"version": 1, "findings": [{"rule": "x"}]}', "bad.json: findings[0] has no 'fingerprint' string"),
        (b"\xff\xfe{", "bad.json: the baseline is not UTF-8 text"),
    ],
)
def test_a_bad_baseline_is_exit_2_with_a_clear_message(write, tmp_path, content, message):
    job = write("job.yaml", TRAINING_JOB)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run_cli("check", str(job), "--baseline", str(bad))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("gpulint: error: ")
    assert message in result.stderr.replace(str(tmp_path) + "/", "")


def test_a_missing_baseline_says_how_to_write_one(write, tmp_path):
    job = write("job.yaml", TRAINING_JOB)
    result = run_cli("check", str(job), "--baseline", str(tmp_path / "none.json"))
    assert result.exit_code == 2
    assert f"{tmp_path / 'none.json'}: no such baseline file (write one with `gpulint check --write-baseline" in (
        result.stderr
    )


def test_write_baseline_replaces_a_planted_symlink_without_following_it(write, tmp_path):
    job = write("job.yaml", TRAINING_JOB)
    victim = write("victim.txt", "keep me\n")
    link = tmp_path / "baseline.json"
    link.symlink_to(victim)
    assert run_cli("check", str(job), "--write-baseline", str(link)).exit_code == 0
    assert victim.read_text() == "keep me\n"
    assert not link.is_symlink() and json.loads(link.read_text())["version"] == 1


# --- output formats ------------------------------------------------------------------------------


def test_junit_info_findings_are_passed_testcases_with_output(write):
    info = write("podgroup.yaml", INFO_PODGROUP)
    suite = ET.fromstring(run_cli("check", str(info), "--format", "junit").stdout).find("testsuite")
    assert suite.get("failures") == "0"
    (case,) = suite.findall("testcase")
    assert case.find("failure") is None
    assert "info[feature-gate-required] PodGroup/ml/trainers: uses the PodGroup API" in case.find("system-out").text
    failing = ET.fromstring(run_cli("check", str(info), "--format", "junit", "--fail-on", "info").stdout)
    assert failing.find("testsuite").get("failures") == "1"


def test_github_annotates_info_only_when_it_fails_the_run(write):
    info = write("podgroup.yaml", INFO_PODGROUP)
    job = write("job.yaml", TRAINING_JOB)
    lines = run_cli("check", str(info), str(job), "--format", "github").stdout.splitlines()
    assert [line.split(" ")[0] for line in lines[:-1]] == ["::error", "::error"]
    error = lines[0]
    # the notes travel in the annotation's body (%0A is a newline there)
    assert "the API server rejects the Pod%0A    spec.template" not in error
    assert "the API server rejects the Pod%0Aspec.template.spec.containers[0].resources.requests" in error
    asked = run_cli("check", str(info), "--format", "github", "--fail-on", "info").stdout.splitlines()
    assert asked[0].startswith(f"::notice file={info},line=2,col=7,title=gpulint feature-gate-required::")


# The fields GitLab reads from a Code Quality report, as its documentation lists them
# (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): all required.
GITLAB_CODE_QUALITY_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "not": {"pattern": "^(/|\\./)"}},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def test_gitlab_code_quality_report(write, tmp_path, monkeypatch):
    write("apps/job.yaml", TRAINING_JOB)
    write("apps/copy.yaml", TRAINING_JOB)
    write("apps/podgroup.yaml", INFO_PODGROUP)
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "./apps", "--format", "gitlab")
    assert result.exit_code == 1
    issues = json.loads(result.stdout)
    jsonschema.validate(issues, GITLAB_CODE_QUALITY_SCHEMA)
    assert len({issue["fingerprint"] for issue in issues}) == len(issues) == 5  # GitLab keeps one per fingerprint
    trainer = next(i for i in issues if i["location"] == {"path": "apps/job.yaml", "lines": {"begin": 16}})
    assert trainer["check_name"] == "gpulint/gpu-request-without-limit"
    assert trainer["severity"] == "major"
    assert trainer["description"].startswith("Job/ml/finetune: container 'trainer' requests nvidia.com/gpu: 1")
    assert "must be equal to nvidia.com/gpu limit of 2" in trainer["content"]["body"]
    assert {i["severity"] for i in issues} == {"major", "info"}
    # the same finding keeps its fingerprint when lines move
    (tmp_path / "apps/job.yaml").write_text("# a comment\n" + TRAINING_JOB)
    again = json.loads(run_cli("check", "./apps", "--format", "gitlab").stdout)
    moved = next(i for i in again if i["location"] == {"path": "apps/job.yaml", "lines": {"begin": 17}})
    assert moved["fingerprint"] == trainer["fingerprint"]


def test_markdown_pull_request_comment(write, tmp_path, monkeypatch):
    write("apps/job.yaml", TRAINING_JOB)
    write("apps/podgroup.yaml", INFO_PODGROUP)
    monkeypatch.chdir(tmp_path)
    text = run_cli("check", "apps", "--format", "markdown").stdout
    assert text.startswith(
        "## gpulint\n\n| errors | warnings | infos | files | objects | suppressed | in the baseline |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n| 2 | 0 | 1 | 2 | 2 | 0 | 0 |\n"
    )
    assert (
        "\n### `apps/job.yaml`\n\n- 🔴 **error** [`gpu-request-without-limit`] line 16, column 29: `Job/ml/finetune`: "
        in text
    )
    assert "  ```yaml\n              nvidia.com/gpu: 1\n  ```\n" in text
    # messages, notes and fixes hold values from the manifests: code spans, never markup (issue #33)
    assert '  - `spec.template.spec.containers[0].resources.requests: Invalid value: "1"' in text
    assert "  - fix (unsafe, `--unsafe-fixes`): `set requests.nvidia.com/gpu to the limit 2`" in text
    assert text.index("apps/job.yaml") < text.index("apps/podgroup.yaml")
    assert text.rstrip().endswith(
        "Found 2 errors, 0 warnings, 1 info in 2 files, 2 objects (1 fixable with --fix; 1 more with --unsafe-fixes)."
    )


def test_markdown_escapes_what_would_break_the_comment(write):
    from gpulint.report.markdown import _code, _fence

    assert _code("a|b\n<script> @admin") == "`a|b\\x0a<script> @admin`"  # in a code span: no HTML, no mention
    assert _code("x `y`") == "`` x `y` ``"  # a backtick inside cannot end the span
    assert _code("") == ""
    assert _fence("x: ```` y") == "`````"


def test_sarif_carries_notes_and_fix_safety(write):
    job = write("job.yaml", TRAINING_JOB)
    log = json.loads(run_cli("check", str(job), "--format", "sarif").stdout)
    results = log["runs"][0]["results"]
    trainer = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 16)
    first, *rest = trainer["message"]["text"].split("\n")
    assert first.endswith("but its limit is 2; the API server rejects the Pod")
    assert rest[0].startswith("spec.template.spec.containers[0].resources.requests: Invalid value")
    assert trainer["properties"]["fixSafety"] == "unsafe"
    assert trainer["partialFingerprints"]["gpulint/v1"]


# --- suppressions --------------------------------------------------------------------------------

SUPPRESSED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: ml
  annotations:
    gpulint.io/ignore: "gpu-non-integr, schema-invalid # fractional GPUs come from HAMi"
spec:
  containers:
  - name: notebook
    image: jupyter/base-notebook:2024-05-20
    resources:
      requests:
        nvidia.com/gpu: 1  # gpulint: disable=gpu-request-witout-limit
      limits:
        cpu: 2  # gpulint: disable=all-rules
"""


def test_unknown_rule_in_a_suppression_is_a_warning_at_the_id_with_did_you_mean(write):
    pod = write("pod.yaml", SUPPRESSED_POD)
    result = run_cli("check", str(pod), "--format", "json")
    found = [(f["rule"], f["line"], f["column"], f["message"]) for f in result.json()["findings"]]
    assert found == [
        (
            "suppression-invalid",
            7,
            25,
            "suppression names unknown rule 'gpu-non-integr'; did you mean 'gpu-non-integer'?",
        ),
        (
            "gpu-request-without-limit",
            14,
            9,
            "container 'notebook' requests nvidia.com/gpu: 1 but sets no limit for it; the API server rejects the Pod",
        ),
        (
            "suppression-invalid",
            14,
            47,
            "suppression names unknown rule 'gpu-request-witout-limit'; did you mean 'gpu-request-without-limit'?",
        ),
        (
            "suppression-invalid",
            16,
            36,
            "suppression names unknown rule 'all-rules' (`gpulint rules` lists them)",
        ),
    ]
    assert {f["severity"] for f in result.json()["findings"] if f["rule"] == "suppression-invalid"} == {"warning"}


REASONS_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: a
    image: i
    resources:
      requests: {nvidia.com/gpu: 1}  # gpulint: disable=gpu-request-without-limit
  - name: b
    image: i
    resources:
      requests: {nvidia.com/gpu: 1}  # gpulint: disable=gpu-request-without-limit -- the admission webhook adds it
"""


def test_require_reason_honours_only_suppressions_with_one(write, tmp_path):
    pod = write("pod.yaml", REASONS_POD)
    config = write(".gpulint.yaml", "suppressions: {require-reason: true}\n")
    result = run_cli("check", str(pod), "--config", str(config), "--format", "json")
    found = [(f["rule"], f["line"], f["column"]) for f in result.json()["findings"]]
    assert found == [("gpu-request-without-limit", 9, 18), ("suppression-invalid", 9, 38)]
    message = result.json()["findings"][1]["message"]
    assert message == (
        "comment `# gpulint: disable=...` gives no reason, which the configuration requires "
        "(suppressions.require-reason); it suppresses nothing until it does: # gpulint: disable=RULE -- why"
    )
    assert result.json()["summary"]["suppressed"] == 1
    # without the key both are honoured
    assert run_cli("check", str(pod)).exit_code == 0


def test_disallow_in_keeps_control_with_the_configuration(write, tmp_path):
    write(
        ".gpulint.yaml",
        "suppressions:\n  disallow-in: [prod/*]\nper-path-ignores:\n  prod/legacy.yaml: [gpu-request-without-limit]\n",
    )
    prod = write("prod/pod.yaml", REASONS_POD)
    legacy = write("prod/legacy.yaml", REASONS_POD)
    dev = write("dev/pod.yaml", REASONS_POD)
    result = run_cli("check", str(tmp_path), "--config", str(tmp_path / ".gpulint.yaml"), "--format", "json")
    found = sorted((os.path.relpath(f["path"], tmp_path), f["rule"], f["line"]) for f in result.json()["findings"])
    assert ("dev/pod.yaml", "gpu-request-without-limit", 9) not in found  # honoured outside prod/
    assert [f for f in found if f[0] == "prod/pod.yaml"] == [
        ("prod/pod.yaml", "gpu-request-without-limit", 9),
        ("prod/pod.yaml", "gpu-request-without-limit", 13),
        ("prod/pod.yaml", "suppression-invalid", 9),
        ("prod/pod.yaml", "suppression-invalid", 13),
    ]
    # the central team's per-path-ignores still apply; the in-file comments are still not honoured
    assert [f[1] for f in found if f[0] == "prod/legacy.yaml"] == ["suppression-invalid", "suppression-invalid"]
    message = next(f["message"] for f in result.json()["findings"] if f["rule"] == "suppression-invalid")
    assert "in-manifest suppressions are disallowed for 'prod/*' (suppressions.disallow-in)" in message
    assert dev.exists() and legacy.exists() and prod.exists()


UNUSED_POD = """\
# gpulint: disable-file=gang-missing -- the Job is not distributed any more
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
  annotations:
    gpulint.io/ignore: "gpu-unschedulable -- pinned to the reserved node on purpose"
spec:
  containers:
  - name: trainer
    image: i
    resources:
      requests: {nvidia.com/gpu: 1}  # gpulint: disable=gpu-request-without-limit,gpu-non-integer -- webhook
"""


def test_report_unused_names_only_suppressions_of_rules_that_ran(write):
    pod = write("pod.yaml", UNUSED_POD)
    result = run_cli("check", str(pod), "--report-unused", "--format", "json")
    found = [(f["rule"], f["line"], f["column"], f["message"]) for f in result.json()["findings"]]
    # gang-missing ran and found nothing; gpu-unschedulable did not run (no inventory): not called unused
    assert found == [
        ("suppression-unused", 1, 25, "unused suppression: 'gang-missing' reports nothing it covers"),
        ("suppression-unused", 14, 83, "unused suppression: 'gpu-non-integer' reports nothing it covers"),
    ]
    assert result.exit_code == 0  # warnings
    assert run_cli("check", str(pod), "--format", "json").json()["findings"] == []  # only on request


def test_unused_all_only_when_every_rule_ran(write):
    pod = write("pod.yaml", UNUSED_POD.replace("gpu-request-without-limit,gpu-non-integer", "all"))
    found = run_cli("check", str(pod), "--report-unused", "--format", "json").json()["findings"]
    assert [f["line"] for f in found] == [1]  # `all` on line 14 suppressed the limit finding: used


def test_suppression_config_is_validated(write):
    pod = write("pod.yaml", REASONS_POD)
    bad = write("bad.yaml", "suppressions:\n  require-reasons: true\n")
    result = run_cli("check", str(pod), "--config", str(bad))
    assert result.exit_code == 2
    assert "bad.yaml:2:20: unknown key 'suppressions.require-reasons'" in result.stderr
    worse = write("worse.yaml", "suppressions: {report-unused: yes please}\n")
    assert (
        "'suppressions.report-unused' must be true or false"
        in run_cli("check", str(pod), "--config", str(worse)).stderr
    )


# --- rule discovery ------------------------------------------------------------------------------


def test_rule_suggests_the_rules_a_partial_name_belongs_to():
    result = run_cli("rule", "gpu-request")
    assert result.exit_code == 2
    assert "no rule or library policy 'gpu-request'; did you mean 'gpu-request-without-limit'?" in result.stderr
    gangs = run_cli("rule", "gang").stderr
    assert "did you mean one of 'gang-inconsistent', 'gang-missing', 'gang-unsatisfiable'?" in gangs
    typo = run_cli("rule", "gpu-non-interger").stderr
    assert "did you mean 'gpu-non-integer'?" in typo
    assert "did you mean" not in run_cli("rule", "kueue").stderr  # nothing close: no guess
    assert "(`gpulint rules` lists them)" in run_cli("rule", "kueue").stderr


def test_rules_lists_the_library_and_rule_prints_a_library_policy():
    listing = run_cli("rules").stdout
    library = listing.split("Library policies", 1)[1].splitlines()[2:]
    assert [line.split()[0] for line in library] == [
        "gpulint:forbid-gpu-in-non-gpu-namespaces",
        "gpulint:require-gang-for-multi-worker-gpu-jobs",
        "gpulint:require-gpu-memory-limit",
        "gpulint:restrict-gpu-models-per-namespace",
    ]
    assert library[0].endswith("(example: adapt before use)")
    assert library[2].split()[1] == "warning" and "example" not in library[2]
    as_json = json.loads(run_cli("rules", "--format", "json").stdout)
    entry = next(e for e in as_json if e["id"] == "gpulint:restrict-gpu-models-per-namespace")
    assert entry["library"] is True and entry["example"] is True
    docs = run_cli("rule", "gpulint:require-gpu-memory-limit")
    assert docs.exit_code == 0
    assert docs.stdout.startswith(
        "# require-gpu-memory-limit (warning)\n\nLoad it with `--policy gpulint:require-gpu-memory-limit` "
        "(or `--policy gpulint:all`).\n"
    )
    assert "## What it does" in docs.stdout
    example = run_cli("rule", "restrict-gpu-models-per-namespace").stdout  # the bare name works too
    assert "`--policy gpulint:all` leaves it out" in example


def test_policy_all_leaves_out_the_examples_with_placeholder_namespaces(write):
    # A GPU pod in a namespace docs/policies.md's example lists no quota for: only the example policy objects
    pod = write(
        "pod.yaml",
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: notebook, namespace: data-science}
        spec:
          containers:
          - name: notebook
            image: jupyter/base-notebook:2024-05-20
            resources:
              limits: {nvidia.com/gpu: 1, memory: 16Gi}
        """,
    )
    everything = run_cli("check", str(pod), "--policy", "gpulint:all", "--format", "json").json()
    assert everything["findings"] == []
    asked = run_cli(
        "check", str(pod), "--policy", "gpulint:forbid-gpu-in-non-gpu-namespaces", "--format", "json"
    ).json()
    assert [f["rule"] for f in asked["findings"]] == ["forbid-gpu-in-non-gpu-namespaces"]


# --- the first screen: the README's excerpt, the docs' whole output ---------------------------------


def _first_output_block(path) -> str:
    text = path.read_text(encoding="utf-8")
    opening = text.index("```\n", text.index("The first command prints")) + 4
    return text[opening : text.index("\n```\n", opening)]


def test_first_screen_output_is_what_gpulint_prints(monkeypatch):
    from conftest import REPO

    monkeypatch.chdir(REPO)
    result = run_cli("check", "examples/", "--inventory", "examples/inventory", "--color", "never")
    assert result.exit_code == 1
    real = [line if len(line) <= 160 else line[:159] + "…" for line in result.stdout.splitlines()]
    whole = _first_output_block(REPO / "docs" / "index.md")
    assert whole == "\n".join(real), "docs/index.md's first output block is stale; replace it with:\n" + "\n".join(real)
    # The README shows some findings whole (each with all its notes, in order) and the summary line.
    excerpt = _first_output_block(REPO / "README.md").splitlines()
    assert excerpt[-1] == real[-1] and excerpt[-1].startswith("Found ")
    findings = [line for line in excerpt[:-1] if not line.startswith(" ")]
    assert findings, "README.md shows no finding"
    at = 0
    for first in findings:
        start = excerpt.index(first)
        notes = list(itertools.takewhile(lambda line: line.startswith(" "), excerpt[start + 1 : -1]))
        assert first in real[at:], f"README.md's output excerpt is stale (or out of order) at: {first}"
        at = real.index(first, at)
        whole = list(itertools.takewhile(lambda line: line.startswith(" "), real[at + 1 :]))
        assert notes == whole, f"README.md's excerpt shows {first} without all its notes as printed"
        at += 1


def test_baseline_entries_of_files_not_linted_are_not_stale(write, tmp_path):
    # pre-commit passes only the changed files: the rest of the baseline is not "no longer occurring"
    job = write("apps/job.yaml", TRAINING_JOB)
    other = write("apps/other.yaml", TRAINING_JOB.replace("name: finetune", "name: other"))
    baseline = tmp_path / "baseline.json"
    assert run_cli("check", str(job), str(other), "--write-baseline", str(baseline)).exit_code == 0
    result = run_cli("check", str(job), "--baseline", str(baseline))
    assert result.exit_code == 0
    assert "no longer occur" not in result.stdout
    assert result.stdout.splitlines()[-1] == "No problems found in 1 file, 1 object (2 in the baseline)."


@pytest.mark.slow
def test_markdown_stays_within_a_pull_request_comment(write, tmp_path):
    for index in range(400):
        write(f"apps/job-{index:03}.yaml", TRAINING_JOB.replace("name: finetune", f"name: finetune-{index}"))
    text = run_cli("check", str(tmp_path / "apps"), "--format", "markdown").stdout
    assert len(text) < 65_536
    assert "more findings, not shown: a comment holds at most 65,536 characters" in text
    assert text.rstrip().endswith(
        "Found 800 errors, 0 warnings in 400 files, 400 objects (400 fixable with --fix; 400 more with --unsafe-fixes)."
    )


def test_write_baseline_never_overwrites_a_manifest(write):
    job = write("job.yaml", TRAINING_JOB)
    result = run_cli("check", str(job), "--write-baseline", str(job))
    assert result.exit_code == 2
    assert "is one of the files to check; the baseline would overwrite it" in result.stderr
    assert job.read_text() == TRAINING_JOB


def test_a_rule_that_ran_only_in_part_is_not_said_unused(write):
    """gpu-sharing runs without an inventory for what the files alone show (Volcano's share switch): a
    suppression of one of its inventory findings is not called unused when no inventory was given."""
    pod = write(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: notebook}\nspec:\n  containers:\n  - name: jupyter\n"
        "    image: quay.io/jupyter/pytorch-notebook:cuda12-latest\n    resources:\n"
        "      limits: {nvidia.com/gpu: 2}  # gpulint: disable=gpu-sharing -- the T4 pool shares 4 ways\n",
    )
    found = run_cli("check", str(pod), "--report-unused", "--format", "json").json()["findings"]
    assert [f for f in found if f["rule"] == "suppression-unused"] == []
