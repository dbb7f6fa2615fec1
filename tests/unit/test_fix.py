"""--fix and --diff: exact edits, everything else byte-for-byte, idempotent, atomic."""

import copy
import difflib
import json
import os
import re

import pytest
import yaml
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.output.fix import fix_text
from gpulint.lint.run import LintRun

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


# These tests are about the text edits of gpu-request-without-limit's fixes (other rules' fixes,
# such as dev-shm-missing's, have their own tests).
REQUEST_LIMIT = Config(select=("gpu-request-without-limit",))


def fixes_for(text: str, path: str = "f.yaml"):
    report = LintRun(REQUEST_LIMIT, [Source(path, content=text.encode())]).report().files[0]
    return [f.fix for f in report.findings if f.fix is not None]


def apply(text: str) -> str:
    outcome = fix_text("f.yaml", text, fixes_for(text))
    return text if outcome.new_text is None else outcome.new_text


def test_fix_touches_only_the_fixed_lines():
    fixed = apply(MIXED)
    assert fixed == MIXED.replace(
        '              cpu: "8"\n', '              cpu: "8"\n              nvidia.com/gpu: "2"\n'
    ).replace(
        "{requests: {nvidia.com/gpu: 1}}", "{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}"
    ).replace("        amd.com/gpu: 1\n", "        amd.com/gpu: 2\n").replace(
        "        nvidia.com/gpu: 1\n        cpu: 1\n",
        "        nvidia.com/gpu: 1\n        cpu: 1\n      limits:\n        nvidia.com/gpu: 1\n",
    )
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
    result = run_cli("check", "--select", "gpu-request-without-limit", "--fix", "--unsafe-fixes", str(bad), str(clean))
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
    assert (
        fixes_for(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
            "    image: i\n    resources: {limits: {nvidia.com/gpu: 0.5}}\n"
        )
        == []
    )


def test_stdin_is_never_fixed():
    result = run_cli("check", "--fix", "-", input=MIXED)
    assert "not applied to standard input" in result.stderr


LAYOUT = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([2, 4]),
        "seq_indented": st.booleans(),
        "flow_resources": st.booleans(),
        "has_limits": st.booleans(),
        "request": st.sampled_from(["1", "2", '"4"', "'8'", "16"]),
        "limit": st.sampled_from(["1", "2", "8"]),
        "comment": st.sampled_from(["", "  # why", "    # gpus for training"]),
        "extra": st.sampled_from(["", "cpu: 1", "memory: 4Gi"]),
        "crlf": st.booleans(),
    }
)


def render(layout) -> str:
    i = " " * layout["indent"]
    dash = i if layout["seq_indented"] else ""
    item = dash + "- "
    body = dash + "  "
    lines = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        f"{i}name: p",
        "spec:",
        f"{i}containers:",
        f"{i}{item}name: c",
        f"{i}{body}image: i",
    ]
    if layout["flow_resources"]:
        limits = f", limits: {{nvidia.com/gpu: {layout['limit']}}}" if layout["has_limits"] else ""
        lines.append(
            f"{i}{body}resources: {{requests: {{nvidia.com/gpu: {layout['request']}}}{limits}}}" + layout["comment"]
        )
    else:
        lines += [
            f"{i}{body}resources:",
            f"{i}{body}{i}requests:",
            f"{i}{body}{i}{i}nvidia.com/gpu: {layout['request']}{layout['comment']}",
        ]
        if layout["extra"]:
            lines.append(f"{i}{body}{i}{i}{layout['extra']}")
        if layout["has_limits"]:
            lines += [f"{i}{body}{i}limits:", f"{i}{body}{i}{i}nvidia.com/gpu: {layout['limit']}"]
    lines.append(f"{i}{body}env: []")
    newline = "\r\n" if layout["crlf"] else "\n"
    return newline.join(lines) + newline


@pytest.mark.slow
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


def test_two_fixes_that_create_the_same_parent_share_it():
    # Planned on one parse, both fixes want to create `limits:`; they must make one mapping, not two keys.
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n"
        "    resources:\n      requests:\n        nvidia.com/gpu: 2\n        example.com/fpga: '1'\n"
        "    env: []\n"
    )
    assert apply(text) == text.replace(
        "    env: []\n", "      limits:\n        nvidia.com/gpu: 2\n        example.com/fpga: '1'\n    env: []\n"
    )
    flow = text.replace(
        "    resources:\n      requests:\n        nvidia.com/gpu: 2\n        example.com/fpga: '1'\n",
        "    resources: {requests: {nvidia.com/gpu: 2, example.com/fpga: '1'}}\n",
    )
    assert apply(flow) == flow.replace("'1'}}", "'1'}, limits: {nvidia.com/gpu: 2, example.com/fpga: '1'}}")


def test_keys_that_yaml_would_read_as_other_types_are_quoted():
    from gpulint.lint.findings import Fix

    text = "a:\n  b: 1\n"
    outcome = fix_text("f.yaml", text, [Fix(0, ("a", "yes", "null", "x"), 1, "")])
    assert outcome.new_text == 'a:\n  b: 1\n  "yes":\n    "null":\n      x: 1\n'


# --- item 6: random manifests with fixable findings --------------------------------------------------

EXTENDED = ["nvidia.com/gpu", "amd.com/gpu", "example.com/fpga"]
AMOUNTS = st.sampled_from([1, 2, 8, "2", "4"])
AMOUNT_MAPS = st.dictionaries(st.sampled_from([*EXTENDED, "cpu"]), AMOUNTS, max_size=3)
CONTAINERS = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["main", "side"]), "image": st.just("i")},
        optional={
            "resources": st.fixed_dictionaries(
                {"requests": st.dictionaries(st.sampled_from([*EXTENDED, "cpu"]), AMOUNTS, min_size=1, max_size=3)},
                optional={"limits": AMOUNT_MAPS},
            )
        },
    ),
    min_size=1,
    max_size=3,
)
PODS = st.lists(CONTAINERS, min_size=1, max_size=3)
STYLE = st.fixed_dictionaries(
    {
        "format": st.sampled_from(["yaml", "yaml", "json"]),
        "indent": st.sampled_from([1, 2, 4]),
        "seq_indented": st.booleans(),
        "flow_resources": st.booleans(),
        "quote": st.sampled_from(['"', "'"]),
        "comments": st.booleans(),
        "crlf": st.booleans(),
        "final_newline": st.booleans(),
        "json_layout": st.sampled_from([{}, {"indent": 2}, {"indent": "\t"}, {"separators": (",", ":")}]),
    }
)


def pod(containers, index: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}"}, "spec": {"containers": containers}}


def same_amount(a, b) -> bool:
    return int(a) == int(b)


def intended(document: dict) -> dict:
    """The rule's fixes, computed on plain data: a missing limit gets the request, a different request the limit."""
    fixed = copy.deepcopy(document)
    for container in fixed["spec"]["containers"]:
        resources = container.get("resources", {})
        for name, amount in resources.get("requests", {}).items():
            if name not in EXTENDED:
                continue
            limits = resources.setdefault("limits", {})
            if name not in limits:
                limits[name] = amount
            elif not same_amount(amount, limits[name]):
                resources["requests"][name] = limits[name]
    return fixed


class YamlWriter:
    def __init__(self, style) -> None:
        self.style, self.lines, self.notes = style, [], 0

    def note(self) -> str:
        self.notes += 1
        return f"  # note-{self.notes}" if self.style["comments"] else ""

    def scalar(self, value) -> str:
        return f"{self.style['quote']}{value}{self.style['quote']}" if isinstance(value, str) else str(value)

    def flow(self, value) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {self.flow(v)}" for k, v in value.items()) + "}"
        return self.scalar(value)

    def mapping(self, mapping: dict, indent: int, first_prefix: str | None = None) -> None:
        step = self.style["indent"]
        for number, (key, value) in enumerate(mapping.items()):
            pad = first_prefix if number == 0 and first_prefix is not None else " " * indent
            if isinstance(value, dict) and value and not (key == "resources" and self.style["flow_resources"]):
                if self.style["comments"] and key in ("resources", "limits"):
                    self.lines.append(" " * indent + f"# about {key} {self.notes}")
                self.lines.append(f"{pad}{key}:{self.note()}")
                self.mapping(value, indent + step)
            elif isinstance(value, list):
                self.lines.append(f"{pad}{key}:")
                dash = indent + step if self.style["seq_indented"] else indent
                for item in value:
                    self.mapping(item, dash + 2, " " * dash + "- ")
            else:
                self.lines.append(f"{pad}{key}: {self.flow(value)}{self.note()}")


def render_manifest(documents: list[dict], style) -> tuple[str, str]:
    """(file name, text) of the documents in one of many real-world layouts."""
    newline = "\r\n" if style["crlf"] else "\n"
    if style["format"] == "json":
        text = json.dumps(documents[0], **style["json_layout"])
        return "m.json", text.replace("\n", newline) + (newline if style["final_newline"] else "")
    chunks = []
    for document in documents:
        writer = YamlWriter(style)
        writer.mapping(document, 0)
        chunks.append(newline.join(writer.lines))
    text = (newline + "---" + newline).join(chunks)
    return "m.yaml", text + (newline if style["final_newline"] else "")


def fix_file_text(name: str, text: str) -> str:
    report = LintRun(REQUEST_LIMIT, [Source(name, content=text.encode())]).report().files[0]
    fixes = [f.fix for f in report.findings if f.fix is not None]
    outcome = fix_text(name, text, fixes)
    assert not outcome.refused, outcome.refused
    return text if outcome.new_text is None else outcome.new_text


def parse(name: str, text: str) -> list:
    if name.endswith(".json"):
        return [json.loads(text)]
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(PODS, STYLE)
def test_fixed_text_parses_to_the_intended_data_and_nothing_else_changes(pods, style):
    documents = [pod(containers, index) for index, containers in enumerate(pods)]
    name, text = render_manifest(documents, style)
    assert parse(name, text) == documents[: len(parse(name, text))]  # the generator writes what it means
    fixed = fix_file_text(name, text)
    assert parse(name, fixed) == [intended(d) for d in parse(name, text)]
    assert fix_file_text(name, fixed) == fixed  # idempotent
    newline = "\r\n" if style["crlf"] else "\n"
    old_lines, new_lines = text.split(newline), fixed.split(newline)
    assert fixed.count("\r") == fixed.count("\r\n") == (fixed.count("\n") if style["crlf"] else 0)
    assert re.findall(r"# [^\r\n]*", fixed) == re.findall(r"# [^\r\n]*", text)  # every comment, in order
    # Every old line is still there, in order: unchanged, or with text only added (a JSON comma, an entry in a
    # flow mapping), or with only an amount changed (the request set to the limit).
    position = 0
    for line in old_lines:
        while position < len(new_lines) and not only_insertions(amounts(line), amounts(new_lines[position])):
            position += 1
        assert position < len(new_lines), f"lost or changed: {line!r}"
        position += 1
    assert fixed.endswith(newline) == text.endswith(newline)


def amounts(line: str) -> str:
    return re.sub(r"[\"']?\b\d+\b[\"']?", "N", line)


def only_insertions(old: str, new: str) -> bool:
    return all(
        tag in ("equal", "insert") for tag, *_ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    )


def test_anchors_and_aliases_are_fixed_where_they_are_written():
    # An alias shares its node with the anchor, whose marks point elsewhere in the file.
    shared_requests = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
        "    image: i\n    resources:\n      requests: &r\n        nvidia.com/gpu: 1\n  - name: d\n"
        "    image: i\n    resources:\n      requests: *r\n    env: []\n"
    )
    limits = "      limits:\n        nvidia.com/gpu: 1\n"
    assert apply(shared_requests) == shared_requests.replace("  - name: d", limits + "  - name: d").replace(
        "*r\n", "*r\n" + limits
    )
    anchored_amount = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
        "    image: i\n    resources:\n      requests:\n        nvidia.com/gpu: &n !!int 1\n"
        "  - name: d\n    image: i\n    resources:\n      requests:\n        amd.com/gpu: *n\n"
    )
    fixed = apply(anchored_amount)  # the value is copied with its tag, never with its anchor (defined once)
    assert (
        fixed
        == anchored_amount.replace("  - name: d", "      limits:\n        nvidia.com/gpu: !!int 1\n  - name: d")
        + "      limits:\n        amd.com/gpu: !!int 1\n"
    )
    assert fixes_for(fixed) == []
