"""Every inventory reader is bounded by values, not only bytes (issue #33): an inventory file is counted before
any reader runs. JSON and kubectl's YAML are read without positions (at most ~80 bytes a value, measured) and
hold at most MAX_INVENTORY_NODES; anything else goes through the loader, which keeps a position on every value
(~400 bytes), and holds at most the manifests' MAX_YAML_NODES. Past either: file:line:col and exit 2, for
`inventory`, `check`, `explain` and `serve` alike. Before, an inventory that was not plain kubectl output
fell back to the loader with no budget: a 1 GiB flow list would have needed ~200 GiB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from support.inventories import NODE, inventory_commands

from gpulint.lint.config import Config
from gpulint.lint.inputs.yaml_budget import MAX_YAML_NODES
from gpulint.lint.world import inventory as inventory_module
from gpulint.lint.world.inventory import load_inventory
from gpulint.webhook import server as webhook_server
from gpulint.webhook.server import ServeOptions, Webhook

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers: [{name: c, image: i}]\n"


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    directory = tmp_path / "manifests"
    directory.mkdir()
    (directory / "pod.yaml").write_text(POD)
    return directory


def flow_inventory(tmp_path: Path, values: int) -> Path:
    """Not kubectl's output (two documents, a flow list in a ConfigMap): the loader reads it."""
    path = tmp_path / "inventory.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: pad}\n"
        "  data: {pad: x}\n  extra: [" + ",".join(["1"] * values) + "]\n---\napiVersion: v1\nkind: List\nitems: []\n"
    )
    return path


def json_inventory(tmp_path: Path, nodes: int) -> Path:
    path = tmp_path / "nodes.json"
    items = [{**NODE, "metadata": {**NODE["metadata"], "name": f"gpu-{i}"}} for i in range(nodes)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4))
    return path


def refused_alike(inventory: Path, manifests: Path, position: str) -> None:
    for name, args in inventory_commands(inventory, manifests).items():
        result = run_cli(*args)
        assert result.exit_code == 2, (name, result.stderr)
        assert f"{inventory}:{position}:" in result.stderr and ": inventory: holds more than" in result.stderr, name
        assert "Traceback" not in result.stderr and result.stdout == "", name


@pytest.mark.slow
def test_an_inventory_the_loader_reads_is_held_to_the_manifests_node_budget(tmp_path, manifests):
    # the attack as found, at its real size: 5,000,001 values in a flow list (10 MB, under every byte limit)
    inventory = flow_inventory(tmp_path, MAX_YAML_NODES + 1)
    result = run_cli(*inventory_commands(inventory, manifests)["inventory"])
    assert result.exit_code == 2 and ":8:" in result.stderr, result.stderr
    assert "holds more than 5,000,000 YAML values" in result.stderr
    assert "`kubectl get -o json` or `-o yaml`" in result.stderr


def test_every_command_refuses_such_an_inventory_alike(tmp_path, manifests, monkeypatch):
    monkeypatch.setattr(inventory_module, "MAX_YAML_NODES", 1_000)
    refused_alike(flow_inventory(tmp_path, 1_000), manifests, "8")
    # under it, the same shape is read
    small = flow_inventory(tmp_path, 900)
    assert run_cli(*inventory_commands(small, manifests)["inventory"]).exit_code == 0


def test_json_is_held_to_the_inventory_budget_and_counted_outside_its_strings(tmp_path, manifests, monkeypatch):
    # 200 nodes of 36 values; the strings hold many more commas and colons than the values
    inventory = json_inventory(tmp_path, 200)
    monkeypatch.setattr(inventory_module, "MAX_INVENTORY_NODES", 5_000)
    refused_alike(inventory, manifests, "1:1")
    monkeypatch.setattr(inventory_module, "MAX_INVENTORY_NODES", 8_000)
    assert len(load_inventory([str(inventory)]).nodes) == 200
    padded = dict(NODE, metadata={**NODE["metadata"], "annotations": {"a": ",:,:[{" * 5_000}})
    path = tmp_path / "padded.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [padded]}))
    assert len(load_inventory([str(path)]).nodes) == 1


def test_json_whose_marks_stay_under_the_budget_is_not_counted_outside_its_strings(tmp_path, monkeypatch):
    """The exact count (a regular expression over the text, and a copy of it: ~15 s for a 20,000-node `kubectl get
    -o json`) runs only when the JSON's own marks, strings included, pass the budget: dashes and question marks,
    which YAML's bound counts twice, say nothing of JSON's values."""
    from gpulint.lint.inputs import yaml_budget

    padded = dict(NODE, metadata={**NODE["metadata"], "annotations": {"a": "-?" * 20_000}})
    raw = json.dumps({"apiVersion": "v1", "kind": "List", "items": [padded]}).encode()
    assert yaml_budget.node_bound(raw) > 40_000  # YAML's bound is over the budget below, JSON's is not

    class Refused:
        def sub(self, *args: object) -> bytes:
            raise AssertionError("counted outside its strings")

    monkeypatch.setattr(yaml_budget, "_JSON_STRING", Refused())
    assert yaml_budget.too_many_values(raw, 40_000) is None
    # past the budget by its marks, it is still counted exactly, and refused only if its values pass it
    with pytest.raises(AssertionError, match="counted outside its strings"):
        yaml_budget.too_many_values(raw, 30)


def test_a_wide_json_list_of_empty_maps_is_refused_before_it_is_read(tmp_path, manifests, monkeypatch):
    # my own variant: the fast reader's worst shape, ~80 bytes of memory a value; it had no bound but bytes
    monkeypatch.setattr(inventory_module, "MAX_INVENTORY_NODES", 10_000)
    path = tmp_path / "wide.json"
    path.write_text("[" + ",".join(["{}"] * 10_000) + "]")
    refused_alike(path, manifests, "1:1")


def test_serve_refuses_the_same_inventory(tmp_path, monkeypatch):
    monkeypatch.setattr(inventory_module, "MAX_YAML_NODES", 1_000)
    events: list[tuple[str, dict]] = []
    monkeypatch.setattr(webhook_server, "log", lambda event, **fields: events.append((event, fields)))
    refused = Webhook(Config(inventory=(str(flow_inventory(tmp_path, 1_000)),)), ServeOptions())
    assert refused.snapshot.inventory is None and not refused.ready
    (error,) = [fields["error"] for event, fields in events if event == "inventory_rejected"]
    assert "inventory.yaml:8:" in error and "holds more than 1,000 YAML values" in error
