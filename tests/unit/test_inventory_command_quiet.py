"""`gpulint inventory` does not parse again with positions the inventory files its own rules would find nothing in
(issue #31: a 5,000-node file took seconds and a GiB more): each document a v1 Node (or a List of them) the schema
takes whole, none of them with stale GPU labels. Its output is the same as linting every file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli

import gpulint.lint.run as lint_run
from gpulint.cli.inventory import QuietFiles

INVENTORIES = [
    REPO / "examples" / "inventory",
    *sorted((REPO / "rules" / "inventories").iterdir()),
    *sorted((REPO / "tests" / "data").iterdir()),
]

NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {name}
    labels: {{kubernetes.io/hostname: {name}, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}}
  spec:
    taints: [{{key: nvidia.com/gpu, value: "true", effect: NoSchedule}}]
  status:
    capacity: {{cpu: "192", memory: 2Ti, nvidia.com/gpu: "{gpus}"}}
    allocatable: {{cpu: "191", memory: 2000Gi, nvidia.com/gpu: "{gpus}"}}
    images:
    - names: [registry.example.com/trainer:1]
      sizeBytes: 1000
"""


def nodes_file(path: Path, *nodes: str) -> Path:
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(nodes))
    return path


def every_file_linted(monkeypatch) -> None:
    monkeypatch.setattr(QuietFiles, "to_lint", lambda self, sources, inventory: (list(sources), []))


def outputs(*args: str) -> tuple:
    text, data = run_cli("inventory", *args), run_cli("inventory", *args, "--format", "json")
    return text.exit_code, text.stdout, text.stderr, data.exit_code, data.stdout


@pytest.mark.parametrize("inventory", INVENTORIES, ids=lambda path: path.name)
def test_the_output_is_the_same_as_linting_every_file(monkeypatch, inventory):
    quiet = outputs("--inventory", str(inventory))
    every_file_linted(monkeypatch)
    assert quiet == outputs("--inventory", str(inventory))


def parsed_files(monkeypatch) -> list[str]:
    parsed: list[str] = []
    parse = lint_run.parse_source
    monkeypatch.setattr(
        lint_run, "parse_source", lambda source, *rest: parsed.append(source.display) or parse(source, *rest)
    )
    return parsed


def test_a_clean_node_file_is_not_parsed_again_and_its_counts_stay(tmp_path, monkeypatch):
    clean = nodes_file(tmp_path / "nodes.yaml", NODE.format(name="h100-1", gpus=8), NODE.format(name="h100-2", gpus=8))
    parsed = parsed_files(monkeypatch)
    quiet = outputs("--inventory", str(clean))
    assert parsed == []
    assert "No problems found in 1 file, 2 objects." in quiet[1]
    every_file_linted(monkeypatch)
    assert quiet == outputs("--inventory", str(clean))
    assert parsed == [str(clean), str(clean)]


@pytest.mark.parametrize(
    "bad, rule",
    [
        # the label says 8 GPUs, the node publishes 4: stale-gpu-label at the label
        (NODE.format(name="h100-2", gpus=4), "stale-gpu-label"),
        # a field the Node schema does not have, in what the inventory drops (status.images): schema-invalid
        (NODE.format(name="h100-2", gpus=8).replace("sizeBytes: 1000", "sizeBytes: 1000\n      digest: x"), None),
        # a Pod beside the nodes: another kind, linted as before
        (
            "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers: [{name: c, image: i}]\n",
            None,
        ),
    ],
)
def test_a_file_with_something_to_say_is_linted_as_before(tmp_path, monkeypatch, bad, rule):
    path = nodes_file(tmp_path / "nodes.yaml", NODE.format(name="h100-1", gpus=8), bad)
    parsed = parsed_files(monkeypatch)
    quiet = outputs("--inventory", str(path))
    assert parsed == [str(path), str(path)]
    if rule is not None:
        assert rule in {finding["rule"] for finding in json.loads(quiet[4])["findings"]}
    every_file_linted(monkeypatch)
    assert quiet == outputs("--inventory", str(path))
