"""Inventories read an item at a time (issue #31): a List's items are parsed a few at a time, JSON by the json
module's own scanner and YAML a chunk of items at a time, and each Node is compacted as it is read (the images
cached on it, its volumes and its apply bookkeeping dropped), so a fleet's full node trees are never held. The
answers are those of reading the file whole: the same data, the same errors at the same places."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from gpulint.kube.scheduler import NodeInfo
from gpulint.lint.inputs import fast_yaml
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.world.inventory import InventoryError, _json, compact_item, load_inventory


def node(index: int) -> dict:
    """A Node as `kubectl get nodes -o json` prints one, trimmed to a few of each field."""
    name = f"gpu-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.present": "true"},
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"v1","kind":"Node"}',
            },
            "managedFields": [{"manager": "kubelet", "operation": "Update", "fieldsType": "FieldsV1"}],
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "96", "memory": "1024Gi", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "95", "memory": "1000Gi", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.33.1"},
            "images": [{"names": [f"registry.example.com/trainer@sha256:{index:064x}"], "sizeBytes": 10**9}],
            "volumesInUse": ["kubernetes.io/csi/ebs.csi.aws.com^vol-1"],
        },
    }


def listing(count: int) -> dict:
    return {"apiVersion": "v1", "items": [node(i) for i in range(count)], "kind": "List", "metadata": {}}


def compacted(data: dict) -> dict:
    data = copy.deepcopy(data)
    data["items"] = [compact_item(item) for item in data["items"]]
    return data


def test_a_node_is_kept_without_what_nothing_reads_and_with_everything_the_model_reads():
    full = node(1)
    kept = compact_item(copy.deepcopy(full))
    assert "images" not in kept["status"] and "volumesInUse" not in kept["status"]
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["annotations"] == {"node.alpha.kubernetes.io/ttl": "0"}
    for section in ("capacity", "allocatable", "conditions", "nodeInfo"):
        assert kept["status"][section] == full["status"][section]
    assert kept["spec"] == full["spec"] and kept["metadata"]["labels"] == full["metadata"]["labels"]
    assert vars(NodeInfo.from_object(kept)) == vars(NodeInfo.from_object(full))
    # anything else, and a Node of another version, is kept as it is
    pod = {"apiVersion": "v1", "kind": "Pod", "status": {"images": []}}
    assert compact_item(copy.deepcopy(pod)) == pod
    beta = {**copy.deepcopy(full), "apiVersion": "v1beta1"}
    assert compact_item(copy.deepcopy(beta)) == beta


@pytest.mark.parametrize("indent", [None, 4])
def test_json_read_item_by_item_is_json_loads_with_the_nodes_compacted(indent):
    data = listing(5)
    raw = json.dumps(data, indent=indent).encode()
    assert _json(raw) == compacted(data)
    assert list(_json(raw)) == list(data)  # key order too
    array = json.dumps(data["items"], indent=indent).encode()  # the clouds' list commands print bare arrays
    assert _json(array) == [compact_item(item) for item in copy.deepcopy(data["items"])]


@pytest.mark.parametrize(
    "text",
    [
        '{"items": [], "kind": "List"}',
        '{"kind": "List", "items": [1, "two", null, {"a": [3]}]}',
        '{"items": [1], "items": [2, 3], "kind": "List"}',  # a repeated key: the last value, at the first place
        '  \n{ "items" :[ {"x":1} ,{"y":2}\t] }\r\n',
        '{"items": {"not": "a list"}}',
        "[]",
        '[{"a": 1}, {"b": [true, false, null, 1.5e3]}]',
        '{"a": "\\u00e9t\\u00e9", "items": ["\\ud83d\\ude00"]}',
        '"just a string"',
    ],
)
def test_json_read_item_by_item_answers_as_json_loads(text):
    assert _json(text.encode()) == json.loads(text)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-8-sig"])
def test_json_in_another_unicode_encoding_is_read_as_json_loads_reads_it(encoding):
    raw = json.dumps(listing(2)).encode(encoding)
    assert _json(raw) == json.loads(raw) == listing(2)


@pytest.mark.parametrize(
    "text",
    [
        '{"items": [1, 2}',
        '{"items": [1 2]}',
        '{"items": [1, 2]} extra',
        '{"items": [1, 2],}',
        '{"items": [1,]}',
        "{items: [1]}",
        '{"items" [1]}',
        '{"items": [1, 2]',
        "[1, 2",
    ],
)
def test_broken_json_is_refused_as_json_loads_refuses_it(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        _json(text.encode())


def test_a_broken_json_inventory_is_reported_where_it_breaks(tmp_path):
    broken = tmp_path / "nodes.json"
    text = json.dumps(listing(2), indent=4)
    broken.write_text(text.replace('"kind": "Node"', '"kind": "Node",,', 1))
    with pytest.raises(InventoryError) as raised:
        load_inventory([str(broken)])
    line = text.splitlines().index('            "kind": "Node",') + 1
    assert f"{broken}:{line}:" in str(raised.value)


def kubectl_yaml(count: int) -> str:
    # as kubectl prints it: block style, items at column 0, every string YAML 1.1 would misread quoted
    return yaml.safe_dump(listing(count), sort_keys=False, width=1 << 30)


def test_yaml_read_a_chunk_of_items_at_a_time_is_the_loaders_answer(monkeypatch):
    text = kubectl_yaml(12)
    whole = load_text("nodes.yaml", text).documents[0].data
    for chunk in (1, 3000, 1 << 20):  # one item a chunk, a few, all
        monkeypatch.setattr(fast_yaml, "CHUNK_CHARS", chunk)
        fast, data = fast_yaml.load_unambiguous(text, compact_item)
        assert fast and data == compacted(whole)


@pytest.mark.parametrize(
    "text",
    [
        # a quoted scalar that runs over a line starting with "- ": one item, not two
        'apiVersion: v1\nkind: List\nitems:\n- a: "x\n- y"\n- b: 2\n',
        # a literal block whose text has such a line
        "kind: List\nitems:\n- a: |\n    x\n    - y\n- b: 3\nmetadata: {}\n",
        # a comment at column 0 between items, and keys after the items
        "kind: List\nitems:\n- a: 1\n# between\n- b: 2\nmetadata:\n  resourceVersion: ''\n",
        # "items:" inside a quoted scalar, and a real one after it
        'a: "x\nitems:\n- y\n"\nitems: []\n',
        # a flow sequence across item lines
        "kind: List\nitems:\n- [1,\n  2]\n- 3\n",
    ],
)
def test_yaml_items_are_read_apart_only_where_it_means_the_same(monkeypatch, text):
    monkeypatch.setattr(fast_yaml, "CHUNK_CHARS", 1)
    fast, data = fast_yaml.load_unambiguous(text, compact_item)
    loaded = load_text("inventory.yaml", text)
    if fast:  # else the full loader reads it, as before
        assert not loaded.problems and data == loaded.documents[0].data


def test_an_inventory_reads_the_same_nodes_from_json_yaml_and_the_full_loader(tmp_path, monkeypatch):
    data = listing(30)
    (tmp_path / "nodes.json").write_text(json.dumps(data, indent=4))
    (tmp_path / "nodes.yaml").write_text(kubectl_yaml(30))
    monkeypatch.setattr(fast_yaml, "CHUNK_CHARS", 4096)
    from_json = load_inventory([str(tmp_path / "nodes.json")])
    from_yaml = load_inventory([str(tmp_path / "nodes.yaml")])
    monkeypatch.setattr(fast_yaml, "load_unambiguous", lambda *args: (False, None))
    from_loader = load_inventory([str(tmp_path / "nodes.yaml")])
    for inventory in (from_json, from_yaml, from_loader):
        assert [vars(n) for n in inventory.nodes] == [vars(NodeInfo.from_object(item)) for item in data["items"]]
        assert {k: v.data for k, v in inventory.node_objects.items()} == {
            item["metadata"]["name"]: item for item in compacted(data)["items"]
        }
