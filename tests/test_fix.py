"""--fix and --diff: exact edits, everything else byte-for-byte, idempotent, atomic."""
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from gpulint.config import Config
from gpulint.engine import FileLinter
from gpulint.fix import fix_text
from gpulint.sources import Source

MIXED = """\
# Training job for the vision team
apiVersion: batch/v1
kind: Job
metadata:
  name: train   # keep this comment
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: "registry.example.com/trainer:1.0"
          resources:
            requests:
              nvidia.com/gpu: "2"  # two GPUs
              cpu: '4'

            # limits come next
            limits:
              cpu: "8"
        - name: sidecar
          image: busybox
          resources: {requests: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    resources:
      requests:
        amd.com/gpu: 1
      limits:
        amd.com/gpu: 2
  - name: d
    image: i
    resources:
      requests:
        nvidia.com/gpu: 1
        cpu: 1
    env: []
"""


def fixes_for(text: str, path: str = "f.yaml"):
    report = FileLinter(Config()).lint(Source(path, content=text.encode()))
    return [f.fix for f in report.findings if f.fix is not None]


def apply(text: str) -> str:
    outcome = fix_text("f.yaml", text, fixes_for(text))
    return text if outcome.new_text is None else outcome.new_text


def test_fix_touches_only_the_fixed_lines():
    fixed = apply(MIXED)
    assert fixed == MIXED.replace(
        '              cpu: "8"\n', '              cpu: "8"\n              nvidia.com/gpu: "2"\n').replace(
        "{requests: {nvidia.com/gpu: 1}}", "{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}").replace(
        "        amd.com/gpu: 1\n", "        amd.com/gpu: 2\n").replace(
        "        nvidia.com/gpu: 1\n        cpu: 1\n",
        "        nvidia.com/gpu: 1\n        cpu: 1\n      limits:\n        nvidia.com/gpu: 1\n")
    assert fixes_for(fixed) == []


def test_fix_is_idempotent_and_keeps_crlf():
    crlf = MIXED.replace("\n", "\r\n")
    once = apply(crlf)
    assert once != crlf and "\r\n" in once and "\n" not in once.replace("\r\n", "")
    assert apply(once) == once


def test_cli_fix_writes_atomically_and_leaves_clean_files_alone(write, tmp_path):
    bad = write("bad.yaml", MIXED)
    clean = write("clean.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:   {name: c}\n")
    os.chmod(bad, 0o640)
    before = os.stat(clean).st_mtime_ns
    result = run_cli("check", "--fix", str(bad), str(clean))
    assert result.exit_code == 0, result.stdout
    assert "applied 4 fixes" in result.stderr
    assert os.stat(clean).st_mtime_ns == before
    assert oct(os.stat(bad).st_mode & 0o777) == "0o640"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "clean.yaml"]  # no temp files left
    assert "# keep this comment" in bad.read_text()


def test_diff_prints_and_changes_nothing(write):
    bad = write("bad.yaml", MIXED)
    result = run_cli("check", "--diff", str(bad))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- a/{bad}\n+++ b/{bad}\n")
    assert '+              nvidia.com/gpu: "2"' in result.stdout
    assert bad.read_text() == MIXED


def test_files_with_yaml_problems_are_not_fixed(write):
    text = MIXED + "---\nkind: [\n"
    bad = write("broken.yaml", text)
    result = run_cli("check", "--fix", str(bad))
    assert bad.read_text() == text
    assert "not fixed" in result.stderr and result.exit_code == 1


def test_non_integer_values_have_no_automatic_fix():
    assert fixes_for("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                     "    image: i\n    resources: {limits: {nvidia.com/gpu: 0.5}}\n") == []


def test_stdin_is_never_fixed():
    result = run_cli("check", "--fix", "-", input=MIXED)
    assert "not applied to standard input" in result.stderr


LAYOUT = st.fixed_dictionaries({
    "indent": st.sampled_from([2, 4]),
    "seq_indented": st.booleans(),
    "flow_resources": st.booleans(),
    "has_limits": st.booleans(),
    "request": st.sampled_from(["1", "2", '"4"', "'8'", "16"]),
    "limit": st.sampled_from(["1", "2", "8"]),
    "comment": st.sampled_from(["", "  # why", "    # gpus for training"]),
    "extra": st.sampled_from(["", "cpu: 1", "memory: 4Gi"]),
    "crlf": st.booleans(),
})


def render(layout) -> str:
    i = " " * layout["indent"]
    dash = i if layout["seq_indented"] else ""
    item = dash + "- "
    body = dash + "  "
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", f"{i}name: p", "spec:", f"{i}containers:",
             f"{i}{item}name: c", f"{i}{body}image: i"]
    if layout["flow_resources"]:
        limits = f", limits: {{nvidia.com/gpu: {layout['limit']}}}" if layout["has_limits"] else ""
        lines.append(f"{i}{body}resources: {{requests: {{nvidia.com/gpu: {layout['request']}}}{limits}}}"
                     + layout["comment"])
    else:
        lines += [f"{i}{body}resources:", f"{i}{body}{i}requests:",
                  f"{i}{body}{i}{i}nvidia.com/gpu: {layout['request']}{layout['comment']}"]
        if layout["extra"]:
            lines.append(f"{i}{body}{i}{i}{layout['extra']}")
        if layout["has_limits"]:
            lines += [f"{i}{body}{i}limits:", f"{i}{body}{i}{i}nvidia.com/gpu: {layout['limit']}"]
    lines.append(f"{i}{body}env: []")
    newline = "\r\n" if layout["crlf"] else "\n"
    return newline.join(lines) + newline


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(LAYOUT)
def test_fix_property_fixes_everything_once_and_is_idempotent(layout):
    text = render(layout)
    once = apply(text)
    assert fixes_for(once) == []  # every fixable finding is gone
    assert apply(once) == once  # and a second --fix changes nothing
    for line in text.splitlines():  # nothing the user wrote is lost, comments included
        if "nvidia.com/gpu" not in line:
            assert line in once.splitlines()
