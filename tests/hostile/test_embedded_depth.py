"""Recursion through embedded documents (issue #33, medium).

An Argo `podSpecPatch` string nested deep ended `gpulint check` with RecursionError (exit 3) and made the
webhook admit the workflow unchecked: the manifest's depth is bounded by the loader, the document inside a
string was parsed apart without a bound. Every string parsed apart now counts its nesting first
(gpulint/kube/embedded.py); what nests too deep is "not known", never a crash.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from support.manifests import WORKFLOW

from gpulint.kube.embedded import MAX_EMBEDDED_DEPTH, NotParsed, load_embedded, nests_deeper


def deep_mapping(levels: int) -> str:
    return (
        '{"containers": [{"name": "main", "env": [{"name": "X", "valueFrom": '
        + '{"a": ' * levels
        + "1"
        + "}" * levels
        + "}]}]}"
    )


def deep_list(levels: int) -> str:
    return '{"containers": [{"name": "main", "args": ' + "[" * levels + '"x"' + "]" * levels + "}]}"


@pytest.mark.parametrize("shape", [deep_mapping, deep_list])
@pytest.mark.parametrize("levels", [400, 1000, 20000])
def test_a_deeply_nested_pod_spec_patch_is_no_crash(tmp_path, monkeypatch, shape, levels):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wf.yaml").write_text(WORKFLOW.format(patch=shape(levels)))
    result = run_cli("check", "wf.yaml", "--format", "json")
    assert result.exit_code == 1, result.stderr  # the workflow's own error is still found
    findings = json.loads(result.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["gpu-request-without-limit"], findings
    assert "internal error" not in result.stdout + result.stderr


def test_a_shallow_pod_spec_patch_is_still_applied(tmp_path, monkeypatch):
    """The trap: a real patch (the request fixed by the patch) is read as before."""
    monkeypatch.chdir(tmp_path)
    patch = '{"containers": [{"name": "main", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}'
    (tmp_path / "wf.yaml").write_text(WORKFLOW.format(patch=patch))
    result = run_cli("check", "wf.yaml", "--format", "json")
    assert json.loads(result.stdout)["findings"] == [], result.stdout


def test_a_block_style_pod_spec_patch_nested_deep_is_no_crash(tmp_path, monkeypatch):
    """One more of the class: block style (one space of indent a level) under the workflow's own
    podSpecPatch, which libyaml's flow-level bound does not stop and PyYAML composed recursively."""
    monkeypatch.chdir(tmp_path)
    levels = 1500
    nested = "".join(" " * (4 + level) + "a:\n" for level in range(levels)) + " " * (4 + levels) + "b: 1\n"
    workflow = WORKFLOW.format(patch="{}").replace(
        "  entrypoint: main\n", "  entrypoint: main\n  podSpecPatch: |\n    containers:\n    - name: main\n" + nested
    )
    (tmp_path / "wf.yaml").write_text(workflow)
    result = run_cli("check", "wf.yaml", "--format", "json")
    assert result.exit_code == 1, result.stderr
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["gpu-request-without-limit"]


def test_load_embedded_counts_without_recursion():
    assert load_embedded("[" * 100_000 + "]" * 100_000) == NotParsed(
        f"it nests deeper than {MAX_EMBEDDED_DEPTH} levels"
    )
    assert load_embedded("a: [1, {b: 2}]") == {"a": [1, {"b": 2}]}
    assert isinstance(load_embedded("a: &x 1\nb: *x"), NotParsed)
    assert load_embedded("a: [") == NotParsed("not YAML")
    value: list = []
    for _ in range(50_000):
        value = [value]
    assert nests_deeper(value, 256) and not nests_deeper([[1]], 2) and nests_deeper([[[1]]], 2)


@pytest.mark.parametrize(
    "held",
    [
        # a hook template nested 20,000 levels under its $job container
        '{"spec": {"containers": [{"name": "$job", "env": ' + "[" * 20000 + "1" + "]" * 20000 + "}]}}",
        # an alias bomb shaped as a hook template
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nspec:\n  containers:\n  - name: $job\n    env: [*c, *c, *c]\n",
    ],
)
def test_a_hostile_pod_spec_held_in_a_config_map_is_no_crash(tmp_path, monkeypatch, held):
    """A ConfigMap's data is read as a pod template (gpulint/kube/held_pods.py) only within the same bounds."""
    monkeypatch.chdir(tmp_path)
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hook"}, "data": {"job.yaml": held}}
    (tmp_path / "cm.yaml").write_text(json.dumps(manifest))
    result = run_cli("check", "cm.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["findings"] == []
    assert "internal error" not in result.stdout + result.stderr
