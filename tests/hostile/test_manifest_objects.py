"""A manifest file of many tiny objects is bounded in memory (issue #33): objects, not only values.

A List of 100,000 `{}` items (500 KB, 100,000 values: far under MAX_YAML_NODES) took 322 MB and 29 s in
`gpulint check`, an object and a schema-invalid finding each; at the node budget that is ~15 GB from a 6 MB file.
A file now holds at most MAX_OBJECTS documents and List items, counted before it is parsed, on every path that
reads manifests: past it, file:line:col of the first object past the bound and exit 2 (the repository index skips
the file with a note). Each case runs the real `gpulint` in a child process whose peak RSS is measured.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.lint.inputs import yaml_budget
from gpulint.lint.inputs.yaml_budget import MAX_OBJECTS, over_budget

MIB = 1024 * 1024
OVER = MAX_OBJECTS + 50_000
WRAPPER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, input=sys.stdin.read())
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(done.returncode)
"""
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"


def measured(*args: str, cwd: Path | None = None, stdin: str = "") -> tuple[int, list[str], int]:
    """`gpulint args...`: its exit code, its stderr's lines and its peak RSS."""
    command = [sys.executable, "-m", "gpulint", *args]
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, timeout=600, cwd=cwd, input=stdin
    )
    *errors, rss = done.stderr.strip().splitlines()
    return done.returncode, errors, int(rss)


def block_list(items: int) -> str:
    return "apiVersion: v1\nkind: List\nitems:\n" + "- {}\n" * items


def flow_list(items: int) -> str:
    return "apiVersion: v1\nkind: List\nitems: [" + "{}," * (items - 1) + "{}]\n"


def documents(count: int) -> str:
    return "---\n{}\n" * count


def markers(count: int) -> str:
    # my own attack: bare document markers, 4 bytes a document and no value but the implicit null of each
    return "---\n" * count


SHAPES = {"block": block_list, "flow": flow_list, "documents": documents, "markers": markers}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_file_of_many_tiny_objects_is_refused_in_bounded_memory(tmp_path, shape):
    path = tmp_path / f"{shape}.yaml"
    path.write_text(SHAPES[shape](OVER))
    code, errors, rss = measured("check", str(path), "--format", "json")
    assert code == 2, errors
    assert "Traceback" not in "\n".join(errors)
    message = errors[-1]
    assert message.startswith(f"gpulint: error: {path}:"), message
    assert (
        f"holds more than {MAX_OBJECTS:,} objects (documents and List items); not read (max objects a file)" in message
    )
    line, column = (int(part) for part in message.split(f"{path}:")[1].split(":")[:2])
    text = path.read_text().splitlines()[line - 1]
    # the first object past the bound: the item's `{`, or the document's `---` (its first line, its column 1)
    assert text[column - 1] in "{-", (line, column, text[column - 1 : column + 5])
    # 322 MB for 100,000 `{}` items before (~3.3 KB an object and its finding): now the count alone (27-39 MB)
    assert rss < 150 * MIB, rss / MIB


def test_stdin_explain_and_two_workers_are_held_to_the_bound(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text(block_list(OVER))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    position = f"{MAX_OBJECTS + 3}:3"
    code, errors, rss = measured("check", "-", "--stdin-filename", "piped.yaml", stdin=path.read_text())
    assert code == 2 and f"piped.yaml:{position}: holds more than" in errors[-1], errors
    assert rss < 150 * MIB, rss / MIB
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    code, errors, _ = measured("explain", str(path), "--inventory", str(nodes))
    assert code == 2 and f"{path}:{position}: holds more than" in errors[-1], errors
    code, errors, _ = measured("check", str(pod), str(path), "--jobs", "2")
    assert code == 2 and f"{path}:{position}: holds more than" in errors[-1], errors


def test_a_streamed_run_is_held_to_the_bound(tmp_path):
    # over KEPT_SOURCE_BYTES (6 MiB) of sources, a run streams: the bound is met before any file is parsed
    padded = tmp_path / "padded.yaml"
    padded.write_text("".join(f"---\n# {'x' * 100}\n{{}}\n" for _ in range(OVER)))
    assert padded.stat().st_size > 6 * MIB
    code, errors, rss = measured("check", str(padded), "--format", "json")
    assert code == 2 and f"{padded}:{MAX_OBJECTS * 3 + 1}:1: holds more than" in errors[-1], errors
    assert rss < 150 * MIB, rss / MIB


def test_the_repository_index_skips_a_file_over_the_bound_with_a_note(tmp_path):
    """pre-commit lints the changed files; the rest of the repository is indexed: a file there past the bound is
    skipped with a note (the index is then incomplete), never a crash, never 300 MB."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "big.yaml").write_text(block_list(OVER))
    code, errors, rss = measured("check", "pod.yaml", "--output", "report.txt", cwd=tmp_path)
    assert code in (0, 1), errors
    errors = (tmp_path / "report.txt").read_text().splitlines()
    assert any(
        f"repository index: {Path('big.yaml')}:{MAX_OBJECTS + 3}:3: holds more than {MAX_OBJECTS:,} objects" in e
        for e in errors
    ), errors
    assert rss < 150 * MIB, rss / MIB


def test_a_rendered_chart_is_held_to_the_bound(tmp_path, render_tools, monkeypatch):
    monkeypatch.setattr(yaml_budget, "MAX_OBJECTS", 50)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: many\nversion: 0.1.0\n")
    loop = "{{- range until 60 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{{ . }}\n{{- end }}\n"
    (chart / "templates" / "many.yaml").write_text(loop)
    result = run_cli("check", str(chart), "--helm", render_tools["helm"])
    assert result.exit_code == 2, result.stderr
    assert "holds more than 50 objects (documents and List items); not read (max objects a file)" in result.stderr
    (chart / "templates" / "many.yaml").write_text(loop.replace("60", "50"))
    result = run_cli("check", str(chart), "--helm", render_tools["helm"])
    assert result.exit_code in (0, 1), result.stderr


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_file_holds_objects_up_to_the_bound(write, monkeypatch, shape):
    """The edge, in every shape: MAX_OBJECTS objects are read and linted; one more is refused. A List counts as a
    document besides its items."""
    monkeypatch.setattr(yaml_budget, "MAX_OBJECTS", 60)
    within = 59 if shape in ("block", "flow") else 60
    result = run_cli("check", str(write(f"{shape}-in.yaml", SHAPES[shape](within))), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    result = run_cli("check", str(write(f"{shape}-over.yaml", SHAPES[shape](within + 1))), "--format", "json")
    assert result.exit_code == 2 and "holds more than 60 objects" in result.stderr, result.stderr


def test_what_is_not_an_object_is_not_counted():
    """The traps: lists that are no List's items (nested, in a ConfigMap's data, a pod's containers) and
    punctuation in strings are read, however many."""
    nested = "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  data:\n    items: [" + "{}," * 500 + "{}]\n"
    assert over_budget(nested.encode(), object_limit=10) is None
    containers = POD.replace("[{name: c, image: i}]", "[" + "{name: c, image: i}," * 500 + "{name: d, image: i}]")
    assert over_budget(containers.encode(), object_limit=10) is None
    script = "apiVersion: v1\nkind: ConfigMap\ndata:\n  run.sh: |\n" + "    - {a: 1}, ---, {b: 2}\n" * 500
    assert over_budget(script.encode(), object_limit=10) is None
    # a top-level sequence of scalars is one document, no objects
    assert over_budget(("- 1\n" * 500).encode(), object_limit=10) is None
