"""One size rule for inventory files (issue #31): `inventory`, `check`, `explain` and `serve` accept and
refuse the same files, by the one function every command reads them with (lint/world/inventory.py
collect_inventory). The limit is the inventory's (1 GiB: a 20,000-node `kubectl get nodes -o json` is
about 365 MiB), not the manifests' 64 MiB `max-file-bytes`, which linted files keep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from support.inventories import NODE, inventory_commands

from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import DEFAULT_MAX_FILE_BYTES
from gpulint.lint.world.inventory import MAX_INVENTORY_FILE_BYTES, InventoryError, collect_inventory, load_inventory
from gpulint.webhook import server as webhook_server
from gpulint.webhook.server import ServeOptions, Webhook

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: c
    image: trainer:1
    resources: {limits: {nvidia.com/gpu: 9}}
"""


def _past_manifest_limit(tmp_path: Path) -> Path:
    """`kubectl get nodes -o json` of one node, indented as kubectl indents, then padded with whitespace past
    the manifests' limit: what a fleet's export is, as far as sizes go, in a second to write."""
    path = tmp_path / "nodes.json"
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE]}, indent=4)
    with path.open("w") as handle:
        handle.write(text)
        handle.write(" " * (DEFAULT_MAX_FILE_BYTES + 1024 - len(text)) + "\n")
    assert path.stat().st_size > DEFAULT_MAX_FILE_BYTES
    return path


def _past_inventory_limit(tmp_path: Path) -> Path:
    """A sparse file past the inventory limit: refused from its size, unread."""
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_INVENTORY_FILE_BYTES + 1)
    return path


def _refusal(path: Path) -> str:
    return (
        f"gpulint: error: --inventory: {path}: file is {MAX_INVENTORY_FILE_BYTES + 1} bytes, over the limit of "
        f"{MAX_INVENTORY_FILE_BYTES} bytes (1 GiB, inventory file size)"
    )


def test_collect_inventory_is_bounded_by_the_inventory_limit(tmp_path):
    big = _past_manifest_limit(tmp_path)
    assert [source.display for source in collect_inventory([str(big)])] == [str(big)]
    with pytest.raises(InventoryError, match="over the limit of 1073741824 bytes"):
        collect_inventory([str(_past_inventory_limit(tmp_path))])


@pytest.fixture
def manifests(tmp_path):
    directory = tmp_path / "manifests"
    directory.mkdir()
    (directory / "pod.yaml").write_text(POD)
    return directory


def test_every_command_accepts_an_inventory_past_the_manifest_limit(tmp_path, manifests):
    inventory = _past_manifest_limit(tmp_path)
    results = {name: run_cli(*args) for name, args in inventory_commands(inventory, manifests).items()}
    for name, result in results.items():
        assert result.exit_code in (0, 1), (name, result.stderr)
        assert "over the limit" not in result.stderr, name
    assert json.loads(results["inventory"].stdout)["summary"]["nodes"] == 1
    # nine GPUs fit on none of the inventory's nodes (one, of eight GPUs): both commands read it
    assert "gpu-unschedulable" in {f["rule"] for f in json.loads(results["check"].stdout)["findings"]}
    assert "gpu-unschedulable" in results["explain"].stdout
    assert len(load_inventory([str(inventory)]).nodes) == 1


def test_every_command_refuses_an_inventory_past_the_inventory_limit_alike(tmp_path, manifests):
    inventory = _past_inventory_limit(tmp_path)
    for name, args in inventory_commands(inventory, manifests).items():
        result = run_cli(*args)
        assert result.exit_code == 2, name
        assert result.stderr.strip() == _refusal(inventory), name
        assert result.stdout == "", name


def test_serve_accepts_and_refuses_the_same_files(tmp_path, monkeypatch):
    events: list[tuple[str, dict]] = []
    monkeypatch.setattr(webhook_server, "log", lambda event, **fields: events.append((event, fields)))
    accepted = Webhook(Config(inventory=(str(_past_manifest_limit(tmp_path)),)), ServeOptions())
    assert accepted.snapshot.inventory is not None and len(accepted.snapshot.inventory.nodes) == 1
    assert accepted.ready
    huge = _past_inventory_limit(tmp_path)
    refused = Webhook(Config(inventory=(str(huge),)), ServeOptions())
    assert refused.snapshot.inventory is None and not refused.ready
    rejected = [fields for event, fields in events if event == "inventory_rejected"]
    assert [fields["error"] for fields in rejected] == [_refusal(huge).removeprefix("gpulint: error: ")]
