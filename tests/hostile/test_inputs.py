"""Hostile user inputs (issue #11): each ended in "internal error" (exit 3) or a traceback.

Every case runs the real CLI on real files in a temporary directory and asserts the exit code,
the ``file:line:col`` of the message and that nothing crashed. Bad manifests are findings
(exit 1); a bad inventory, policy or configuration is a usage error (exit 2); `explain` fails
the way `check` does.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO, run_cli

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
      - name: c
        image: i
        resources:
          requests: {nvidia.com/gpu: 1}
    """)
NODE = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: n}
    spec:
      taints: 5
    status:
      capacity: {nvidia.com/gpu: 8}
      allocatable: {nvidia.com/gpu: 8}
    """)
BINDING = textwrap.dedent("""\
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata: {name: b}
    spec: {policyName: v}
    """)


def vap(spec: str) -> str:
    return (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: v}\n"
        + spec
        + BINDING
    )


@dataclass
class Case:
    files: dict[str, str | bytes]
    args: tuple[str, ...]
    exit_code: int
    expected: tuple[str, ...]  # fragments of stdout + stderr, file:line:col first
    forbidden: tuple[str, ...] = field(default=())


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case):
    _write(tmp_path, case.files)
    monkeypatch.chdir(tmp_path)  # relative paths in messages; no configuration found above
    result = run_cli(*case.args)  # an exception would fail the test with its traceback
    output = result.stdout + result.stderr
    assert result.exit_code == case.exit_code, output
    for fragment in case.expected:
        assert fragment in output, output
    for fragment in ("Traceback", "internal error", *case.forbidden):
        assert fragment not in output, output
    return result


CASES = {
    # YAML and values
    "yaml tag that does not fit its value": Case(
        {"pod.yaml": POD.replace("metadata: {name: p}", "metadata: {name: p}\nx: !!int abc")},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:4:4: error[yaml-invalid] cannot decode !!str `abc` as a !!int",),
    ),
    "!!bool on a word": Case(
        {"pod.yaml": POD.replace("    image: i", "    image: i\n    stdin: !!bool maybe")},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:8:12: error[yaml-invalid] cannot decode !!str `maybe` as a !!bool",),
    ),
    "integer of 5,000 digits": Case(
        {"pod.yaml": POD.replace("spec:\n", "spec:\n  priority: " + "9" * 5000 + "\n")},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:5:13: error[schema-invalid] Pod/p: spec.priority: Invalid value",),
        forbidden=("9" * 300,),
    ),
    "kind: List with items: 5": Case(
        {"list.yaml": "apiVersion: v1\nkind: List\nitems: 5\n"},
        ("check", "list.yaml"),
        1,
        (
            "list.yaml:3:8: error[schema-invalid] List/: items: Invalid value: List.items must be a list of objects, "
            "not a number",
        ),
    ),
    "kind: List with an item that is a number": Case(
        {"list.yaml": "apiVersion: v1\nkind: List\nitems:\n- 5\n"},
        ("check", "list.yaml"),
        1,
        (
            "list.yaml:4:3: error[schema-invalid] List/: items[0]: Invalid value: each item of a List must be an "
            "object, not a number",
        ),
    ),
    # encodings
    "UTF-16 without a BOM is refused clearly": Case(
        {"pod.yaml": POD.encode("utf-16-le")},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:1:1: error[yaml-invalid] UTF-16 or UTF-32 without a byte-order mark",),
    ),
    "UTF-16 BOM over bytes that are not UTF-16": Case(
        {"pod.yaml": b"\xff\xfe" + "kind: Pod\n".encode("utf-16-le") + b"\x00\xd8"},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:2:1: error[yaml-invalid] not valid UTF-16",),
    ),
    # inventories: exit 2 with file:line:col, for check and explain alike
    "deeply nested JSON inventory": Case(
        {"pod.yaml": POD, "deep.json": '{"a":' * 3000 + "1" + "}" * 3000},
        ("check", "pod.yaml", "--inventory", "deep.json"),
        2,
        ("deep.json:1:", "inventory: YAML syntax error", "nesting depth"),
    ),
    "Node whose spec.taints is a number": Case(
        {"pod.yaml": POD, "node.yaml": NODE},
        ("check", "pod.yaml", "--inventory", "node.yaml"),
        2,
        ("node.yaml:5:11: inventory: Node/n: spec.taints must be a list of taints, not a number",),
    ),
    "Node whose spec.taints is a number, as kubectl's JSON": Case(
        {
            "pod.yaml": POD,
            "node.json": json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": 5}}],
                },
                indent=1,
            ),
        },
        ("check", "pod.yaml", "--inventory", "node.json"),
        2,
        ("node.json:12:15: inventory: Node/n: spec.taints must be a list of taints, not a number",),
    ),
    "explain with a deeply nested JSON inventory": Case(
        {"pod.yaml": POD, "deep.json": '{"a":' * 3000 + "1" + "}" * 3000},
        ("explain", "pod.yaml", "--inventory", "deep.json"),
        2,
        ("deep.json:1:", "nesting depth"),
    ),
    "explain with a Node whose spec.taints is a number": Case(
        {"pod.yaml": POD, "node.yaml": NODE},
        ("explain", "pod.yaml", "--inventory", "node.yaml"),
        2,
        ("node.yaml:5:11: inventory: Node/n: spec.taints must be a list of taints",),
    ),
    "explain with an inventory that has a bad YAML tag": Case(
        {"pod.yaml": POD, "inv.yaml": NODE.replace("taints: 5", "unschedulable: !!bool perhaps")},
        ("explain", "pod.yaml", "--inventory", "inv.yaml"),
        2,
        ("inv.yaml:5:18: inventory: cannot decode",),
    ),
    "explain with a missing inventory": Case(
        {"pod.yaml": POD}, ("explain", "pod.yaml", "--inventory", "nowhere"), 2, ("nowhere: no such file",)
    ),
    "explain on a manifest with a bad YAML tag: exit 1 as check": Case(
        {"pod.yaml": POD.replace("name: p}", "name: !!int p}"), "node.yaml": NODE.replace("taints: 5", "taints: []")},
        ("explain", "pod.yaml", "--inventory", "node.yaml"),
        1,
        ("pod.yaml:3:18: cannot decode",),
    ),
    # gangs
    "Workload whose spec.podGroups is a number": Case(
        {
            "job.yaml": textwrap.dedent("""\
            apiVersion: scheduling.k8s.io/v1alpha1
            kind: Workload
            metadata: {name: train, namespace: ml}
            spec: {podGroups: 5}
            ---
            apiVersion: batch/v1
            kind: Job
            metadata: {name: j, namespace: ml}
            spec:
              parallelism: 2
              template:
                spec:
                  restartPolicy: Never
                  workloadRef: {name: train, podGroup: workers}
                  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
            """),
            "node.yaml": NODE.replace("taints: 5", "taints: []"),
        },
        ("check", "job.yaml", "--inventory", "node.yaml", "--kubernetes-version", "1.35"),
        1,
        (
            "job.yaml:4:19: error[schema-invalid] Workload/ml/train: spec.podGroups: Invalid value: 5 is not of type",
            "job.yaml:15:77: warning[gpu-unschedulable]",
        ),
    ),
    "indexed Job whose pod template labels are a number": Case(
        {
            "job.yaml": textwrap.dedent("""\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: j, namespace: ml}
            spec:
              parallelism: 4
              completions: 4
              completionMode: Indexed
              template:
                metadata: {labels: 5}
                spec:
                  restartPolicy: Never
                  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
            """)
        },
        ("check", "job.yaml"),
        1,
        (
            "job.yaml:9:24: error[schema-invalid] Job/ml/j: spec.template.metadata.labels: Invalid value",
            # the API server refuses the Job itself (schema-invalid): the gang verdict on its pods is held back
            "job.yaml:4:1: info[gang-missing] Job/ml/j: not judged (1 finding held back): this Job makes no pods",
            "Job starts 4 GPU pods",
        ),
    ),
    "Kueue pod group total count of 5,000 digits": Case(
        {
            "pod.yaml": POD.replace(
                "metadata: {name: p}",
                "metadata:\n  name: p\n"
                "  labels: {kueue.x-k8s.io/pod-group-name: g}\n"
                "  annotations: {kueue.x-k8s.io/pod-group-total-count: '" + "9" * 5000 + "'}",
            ),
            "node.yaml": NODE.replace("taints: 5", "taints: []"),
        },
        ("explain", "pod.yaml", "--inventory", "node.yaml"),
        1,
        ("12:18: error[gpu-request-without-limit]", "5. Gang and topology: ok", "no gang: pods are placed one by one"),
    ),
    # policies: exit 2 with file:line:col
    "ValidatingAdmissionPolicy with spec: 5": Case(
        {"pod.yaml": POD, "vap.yaml": vap("spec: 5\n")},
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:4:7: policy: spec must be a mapping, not a number",),
    ),
    "ValidatingAdmissionPolicy with validations: [5]": Case(
        {"pod.yaml": POD, "vap.yaml": vap("spec:\n  validations: [5]\n")},
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:5:17: policy: a validation must be a mapping, not a number",),
    ),
    "ValidatingAdmissionPolicy with matchConstraints: []": Case(
        {"pod.yaml": POD, "vap.yaml": vap("spec:\n  matchConstraints: []\n  validations: [{expression: 'true'}]\n")},
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:5:21: policy: spec.matchConstraints must be a mapping, not a list",),
    ),
    "ValidatingAdmissionPolicy with resourceRules: 5": Case(
        {
            "pod.yaml": POD,
            "vap.yaml": vap("spec:\n  matchConstraints: {resourceRules: 5}\n  validations: [{expression: 'true'}]\n"),
        },
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:5:37: policy: spec.matchConstraints.resourceRules must be a list, not a number",),
    ),
    "binding whose objectSelector is a string": Case(
        {
            "pod.yaml": POD,
            "vap.yaml": vap("spec:\n  matchConstraints: {}\n  validations: [{expression: 'true'}]\n").replace(
                "spec: {policyName: v}", "spec: {policyName: v, matchResources: {objectSelector: x}}"
            ),
        },
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:11:56: policy: spec.matchResources.objectSelector must be a mapping, not a string",),
    ),
    "binding whose policyName is a list": Case(
        {
            "pod.yaml": POD,
            "vap.yaml": vap("spec:\n  validations: [{expression: 'true'}]\n").replace(
                "policyName: v", "policyName: []"
            ),
        },
        ("check", "pod.yaml", "--policy", "vap.yaml"),
        2,
        ("vap.yaml:10:20: policy: binding names ValidatingAdmissionPolicy a list",),
    ),
    "gpulint Policy whose metadata is a string": Case(
        {
            "pod.yaml": POD,
            "policy.yaml": "apiVersion: gpulint.io/v1alpha1\nkind: Policy\nmetadata: hello\n"
            "spec:\n  validations: [{expression: 'true'}]\n",
        },
        ("check", "pod.yaml", "--policy", "policy.yaml"),
        2,
        ("policy.yaml:3:11: policy: metadata must be a mapping, not a string",),
    ),
    "policy inside a List: the position is the item's": Case(
        {
            "pod.yaml": POD,
            "policy.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: gpulint.io/v1alpha1\n"
            "  kind: Policy\n  metadata: {name: p}\n  spec: {validations: 5}\n",
        },
        ("check", "pod.yaml", "--policy", "policy.yaml"),
        2,
        ("policy.yaml:7:23: policy: validations must be a non-empty list",),
    ),
    "library policy named by a path": Case(
        {"pod.yaml": POD},
        ("check", "pod.yaml", "--policy", "gpulint:../policies/require-gpu-memory-limit"),
        2,
        ("no such library policy", "require-gpu-memory-limit"),
    ),
    "library policy named by an absolute path": Case(
        {"pod.yaml": POD},
        ("check", "pod.yaml", "--policy", f"gpulint:{REPO}/rules/policies/require-gpu-memory-limit"),
        2,
        ("no such library policy",),
    ),
    # configuration: exit 2 with file:line:col
    "pyproject.toml with a number for select": Case(
        {"pod.yaml": POD, "pyproject.toml": '[project]\nname = "x"\n\n[tool.gpulint]\nselect = 5\n'},
        ("check", "pod.yaml"),
        2,
        ("pyproject.toml:5:10: 'select' must be a list of strings",),
    ),
    "pyproject.toml with a list for a severity": Case(
        {"pod.yaml": POD, "pyproject.toml": '[tool.gpulint.severity]\ngpu-non-integer = ["x"]\n'},
        ("check", "pod.yaml"),
        2,
        ("pyproject.toml:2:19: 'severity.gpu-non-integer': unknown severity 'a list'",),
    ),
    "pyproject.toml whose tool is a number": Case(
        {"pod.yaml": POD, "pyproject.toml": "tool = 5  # [tool.gpulint] is not here\n"},
        ("check", "pod.yaml"),
        1,
        ("pod.yaml:9:18: error[gpu-request-without-limit]",),
    ),
    ".gpulint.yaml with a bad YAML tag": Case(
        {"pod.yaml": POD, ".gpulint.yaml": "select: !!int abc\n"},
        ("check", "pod.yaml"),
        2,
        (".gpulint.yaml:1:9: invalid YAML: cannot decode !!str `abc` as a !!int",),
    ),
    ".gpulint.yaml with a list of numbers": Case(
        {"pod.yaml": POD, ".gpulint.yaml": "fail-on: error\nignore: [5]\n"},
        ("check", "pod.yaml"),
        2,
        (".gpulint.yaml:2:9: 'ignore' must be a list of strings",),
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_hostile_input_is_a_message_not_a_crash(case: Case, tmp_path, monkeypatch):
    _run(tmp_path, monkeypatch, case)


def test_a_policy_directory_with_entries_that_cannot_be_read(tmp_path, monkeypatch):
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    (policies / "ok.yaml").write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: Policy\nmetadata: {name: a}\n"
        "spec: {validations: [{expression: 'true'}]}\n"
    )
    (policies / "loop.yaml").symlink_to("loop.yaml")
    os.mkfifo(policies / "fifo.yaml")  # would block a reader forever
    _run(
        tmp_path,
        monkeypatch,
        Case(
            {"pod.yaml": POD},
            ("check", "pod.yaml", "--policy", "policies"),
            2,
            (
                "policies/dangling.yaml: skipped: a symbolic link",
                "policies/loop.yaml: skipped: a broken symbolic link",
                "policies/fifo.yaml: skipped: a FIFO",
                "a policy file must be a regular file",
            ),
        ),
    )


def test_a_policy_file_name_too_long_for_the_file_system(tmp_path, monkeypatch):
    long_name = "p" * 300 + ".yaml"  # NAME_MAX is 255: stat() fails with ENAMETOOLONG
    _run(tmp_path, monkeypatch, Case({"pod.yaml": POD}, ("check", "pod.yaml", "--policy", long_name), 2, ("ppppp",)))


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github", "junit"])
def test_a_file_name_that_is_not_utf8_in_every_format(output_format, tmp_path, monkeypatch):
    name = os.fsdecode(b"bad\xff.yaml")  # what the file system hands Python: "bad\udcff.yaml"
    Path(tmp_path, name).write_text(POD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", ".", "--format", output_format, "--output", "report")
    assert result.exit_code == 1, result.stderr
    report = (tmp_path / "report").read_bytes()
    if output_format in ("text", "github"):  # the name as the file system has it, as ls prints it
        location = b"bad\xff.yaml:9:18:" if output_format == "text" else b"file=bad\xff.yaml,line=9,col=18,"
        assert location in report
        return
    text = report.decode("utf-8")  # machine formats are valid UTF-8
    if output_format == "json":
        assert json.loads(text)["findings"][0]["path"] == name  # lossless: "\udcff" escaped
    elif output_format == "sarif":
        (location,) = json.loads(text)["runs"][0]["results"][0]["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.yaml"
        assert location["physicalLocation"]["region"] == {"startLine": 9, "startColumn": 18}
    else:
        import xml.dom.minidom

        case = xml.dom.minidom.parseString(report).getElementsByTagName("testcase")[0]
        assert case.getAttribute("name") == "bad\ufffd.yaml"


def test_output_never_overwrites_a_file_being_checked(tmp_path, monkeypatch):
    _run(
        tmp_path,
        monkeypatch,
        Case(
            {"pod.yaml": POD},
            ("check", "pod.yaml", "--output", "pod.yaml"),
            2,
            ("--output: pod.yaml is one of the files to check",),
        ),
    )
    assert (tmp_path / "pod.yaml").read_text() == POD


@pytest.mark.parametrize(
    "name",
    [
        "yaml tag that does not fit its value",
        "explain with a deeply nested JSON inventory",
        "ValidatingAdmissionPolicy with spec: 5",
    ],
)
def test_the_installed_entry_point_exits_with_the_same_codes(name, tmp_path):
    """The real process, through gpulint.cli.main.main (where an exception would become exit 3)."""
    import subprocess
    import sys

    case = CASES[name]
    _write(tmp_path, case.files)
    env = {**os.environ, "PYTHONPATH": str(REPO), "GPULINT_DEBUG": ""}
    result = subprocess.run(
        [sys.executable, "-m", "gpulint", *case.args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    output = result.stdout + result.stderr
    assert result.returncode == case.exit_code, output
    assert case.expected[0] in output and "internal error" not in output and "Traceback" not in output


CLUSTER = NODE.replace("taints: 5", "taints: []")
PARITY = [
    name
    for name, case in CASES.items()
    if case.args[0] == "check" and not {"--policy", "--format", "--kubernetes-version"} & set(case.args)
]


@pytest.mark.parametrize("name", PARITY)
def test_explain_exits_as_check_does_on_the_same_input(name, tmp_path, monkeypatch):
    """The same files, the same inventory (a one-node cluster when the case has none): the same exit code."""
    case = CASES[name]
    files = dict(case.files)
    args = list(case.args[1:])
    if "--inventory" not in args:
        files["cluster.yaml"] = CLUSTER
        args += ["--inventory", "cluster.yaml"]
    _write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    check, explain = run_cli("check", *args), run_cli("explain", *args)
    assert explain.exit_code == check.exit_code, (check.stdout + check.stderr, explain.stdout + explain.stderr)
    assert "internal error" not in explain.stdout + explain.stderr


def test_jobs_beyond_what_the_machine_can_hold_is_a_usage_error(tmp_path):
    """-j 1000 on 300 files forked 300 workers with two pipes each: past the descriptor limit, exit 3."""
    import resource
    import subprocess
    import sys

    for index in range(300):
        (tmp_path / f"c{index}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{index}}}\n")

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    env = {**os.environ, "PYTHONPATH": str(REPO), "GPULINT_DEBUG": ""}
    result = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", ".", "-j", "1000"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=few_descriptors,
    )
    assert result.returncode == 2, result.stderr
    assert "'--jobs' / '-j': 1000 is not in the range 0<=x<=64" in result.stderr
