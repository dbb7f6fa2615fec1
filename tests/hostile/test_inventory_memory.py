"""An inventory file is bounded in memory whatever its shape (issue #33): values, depth, aliases and objects.

Inventories that are not kubectl's output (flow style, written by hand or by another tool) are read by yaml-rs
whole or by the loader: each is held to MAX_YAML_NODES (yaml-rs costs up to ~170 bytes a value held whole, the
loader ~400). And however few values it has, a file holds at most MAX_INVENTORY_OBJECTS documents and List items:
2,000,000 `{}` items (6 MB) took 10 GiB in `gpulint inventory`, an object and a finding each. Past any bound:
file:line:col and exit 2, in bounded memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.lint.world import inventory as inventory_module
from gpulint.lint.world.inventory import InventoryError, load_inventory

MIB = 1024 * 1024
WRAPPER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(done.returncode)
"""


def measured(path: Path) -> tuple[int, list[str], int]:
    """`gpulint inventory --inventory path`: its exit code, its stderr's lines and its peak RSS."""
    command = [sys.executable, "-m", "gpulint", "inventory", "--inventory", str(path), "--format", "json"]
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, timeout=600)
    *errors, rss = done.stderr.strip().splitlines()
    return done.returncode, errors, int(rss)


@pytest.mark.timed
@pytest.mark.slow
def test_a_60_mib_flow_style_inventory_is_refused_in_bounded_memory(tmp_path):
    # 20 million `{}` items: under the 25,000,000 values of JSON and kubectl's YAML, read item by item, but in flow
    # style it is read whole (yaml-rs: ~3.4 GiB), then by the loader (~8 GiB): each is held to MAX_YAML_NODES
    path = tmp_path / "inventory.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems: [" + "{}," * (20 * MIB) + "{}]\n")
    assert path.stat().st_size > 60 * MIB
    start = time.perf_counter()
    code, errors, rss = measured(path)
    assert code == 2, errors
    assert f"{path}:3:" in errors[-1] and "holds more than 5,000,000 YAML values" in errors[-1], errors
    assert rss < 400 * MIB, rss / MIB
    # counted once, to 5,000,000 events: 23 s at load 15 (244 s when counted to 25,000,000 first, then again)
    assert time.perf_counter() - start < 120


def test_a_list_of_many_empty_items_is_refused_before_its_objects_are_made(tmp_path):
    # my own attack: few values, many objects. 400,000 `{}` (1.2-2 MB) under every value budget, in each reader
    flow = tmp_path / "flow.yaml"
    flow.write_text("apiVersion: v1\nkind: List\nitems: [" + "{}," * 399_999 + "{}]\n")
    block = tmp_path / "block.yaml"
    block.write_text("apiVersion: v1\nkind: List\nitems:\n" + "- {}\n" * 400_000)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [{}] * 400_000}))
    array = tmp_path / "array.json"
    array.write_text(json.dumps([{}] * 400_000))
    positions = {flow: "1:1", block: "1:1", listed: "1:1", array: "1:1"}
    for path, position in positions.items():
        code, errors, rss = measured(path)
        assert code == 2, (path, errors)
        assert f"{path}:{position}: inventory: holds more than 300,000 objects" in errors[-1], errors
        assert "Traceback" not in "\n".join(errors)
        assert rss < 400 * MIB, (path, rss / MIB)  # ~2 GiB before (an object and a finding each)


@pytest.mark.parametrize("reader", ["flow", "block", "json", "array", "documents"])
def test_an_inventory_holds_objects_up_to_the_bound_in_every_reader(tmp_path, monkeypatch, reader):
    monkeypatch.setattr(inventory_module, "MAX_INVENTORY_OBJECTS", 50)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}

    def write(count: int) -> str:
        nodes = [{**node, "metadata": {"name": f"n{i}"}} for i in range(count)]
        path = tmp_path / f"{reader}-{count}.txt"
        if reader == "flow":
            path.write_text("apiVersion: v1\nkind: List\nitems: " + json.dumps(nodes) + "\n")
        elif reader == "block":
            items = "".join(f"- {json.dumps(n)}\n" for n in nodes)
            path.write_text("apiVersion: v1\nkind: List\nitems:\n" + items)
        elif reader == "json":
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
        elif reader == "array":
            path.write_text(json.dumps(nodes))
        else:
            path.write_text("".join(f"---\n{json.dumps(n)}\n" for n in nodes))
        return str(path)

    assert len(load_inventory([write(50)]).nodes) == 50
    with pytest.raises(InventoryError, match="holds more than 50 objects"):
        load_inventory([write(51)])


def test_a_deep_inventory_is_refused_with_its_position(tmp_path):
    for name, text in {
        "deep.yaml": "apiVersion: v1\nkind: List\nitems: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "deep.json": '{"apiVersion": "v1", "kind": "List", "items": ' + "[" * 100_000 + "]" * 100_000 + "}",
    }.items():
        path = tmp_path / name
        path.write_text(text)
        code, errors, rss = measured(path)
        assert code == 2 and "exceeded maximum nesting depth" in errors[-1], errors
        assert errors[-1].startswith(f"{path}:"), errors
        assert rss < 200 * MIB, rss / MIB


def test_an_alias_bomb_in_an_inventory_is_refused(tmp_path):
    lines = ['  a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 12):
        name, before = chr(97 + level), chr(96 + level)
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{before}"] * 10) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n" + "\n".join(lines) + "\n")
    code, errors, rss = measured(path)
    assert code == 2 and "an alias bomb" in errors[-1] and errors[-1].startswith(f"{path}:1:1:"), errors
    assert rss < 200 * MIB, rss / MIB
    # the same refusal from check (what CI runs)
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n")
    result = run_cli("check", str(pod), "--inventory", str(path))
    assert result.exit_code == 2 and "alias bomb" in result.stderr
