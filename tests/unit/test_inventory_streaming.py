"""Inventories read an item at a time (issue #31): a List's items are parsed a few at a time, JSON by the json
module's own scanner and YAML a chunk of items at a time, and each Node is compacted as it is read (the images
cached on it, its volumes and its apply bookkeeping dropped), so a fleet's full node trees are never held. The
answers are those of reading the file whole: the same data, the same errors at the same places."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

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
    monkeypatch.setattr(fast_yaml, "load_unambiguous", lambda *args, **kwargs: (False, None))
    from_loader = load_inventory([str(tmp_path / "nodes.yaml")])
    for inventory in (from_json, from_yaml, from_loader):
        assert [vars(n) for n in inventory.nodes] == [vars(NodeInfo.from_object(item)) for item in data["items"]]
        assert {k: v.data for k, v in inventory.node_objects.items()} == {
            item["metadata"]["name"]: item for item in compacted(data)["items"]
        }


# --- a Node's images cut unread ---------------------------------------------------------------------
# `kubectl get nodes -o yaml` prints each Node's cached images (two thirds of its text) in one regular shape;
# compact_item drops them, so the fast reader cuts that text out before it is scanned or parsed. Hypothesis
# writes Lists in kubectl's layout, the images in its shape and in every way out of it, and the reader must
# answer as the full loader does with the items compacted, whenever it answers.

KUBELET_NAMES = [
    "registry.k8s.io/pause:3.9", "nvcr.io/nvidia/k8s-device-plugin@sha256:" + "ab" * 32,
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2", "busybox:1.36", "sha256:" + "0" * 64,
]  # fmt: skip
OTHER_NAMES = ["yes", "no", "on", "y", "null", "010", "1e3", "12:30", "1.5", "a b", "x:", "#x", "-x", "'q'", "a/b c"]
SIZES = ["123456", "0", "999999999999999999"]
OTHER_SIZES = ["010", "9999999999999999999", "1e3", '"12"', "-1", "0x1F", "1_000"]
LABELS = ["true", "yes", "010", "8", "nvidia.com/gpu", "a b", "12:30", ""]


def plain_or_quoted(value: str, plain: bool) -> str:
    """Plain whatever it reads as, or as go-yaml prints a string: quoted when YAML would read it otherwise."""
    if plain and value and value.strip() == value:
        return value
    try:
        same = bool(value) and yaml.safe_load(value) == value
    except yaml.YAMLError:
        same = False
    return value if same else json.dumps(value)


@st.composite
def image_block(draw: st.DrawFn) -> str:
    """A Node's images as kubectl prints them, or with one thing that is not kubectl's (then it is read, not cut)."""
    lines = ["    images:\n"]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        lines.append("    - names:\n")
        names = draw(st.lists(st.sampled_from(KUBELET_NAMES), min_size=1, max_size=3))
        lines += [f"      - {name}\n" for name in names]
        lines.append(f"      sizeBytes: {draw(st.sampled_from(SIZES))}\n")
    change = draw(st.sampled_from(["kubectl's"] * 7 + ["name", "plain name", "size", "line", "no names"]))
    names_at = [i for i, line in enumerate(lines) if line.startswith("      - ")]
    sizes_at = [i for i, line in enumerate(lines) if line.startswith("      sizeBytes")]
    if change in ("name", "plain name"):
        name = plain_or_quoted(draw(st.sampled_from(OTHER_NAMES)), plain=change == "plain name")
        lines[draw(st.sampled_from(names_at))] = f"      - {name}\n"
    elif change == "size":
        lines[draw(st.sampled_from(sizes_at))] = f"      sizeBytes: {draw(st.sampled_from(OTHER_SIZES))}\n"
    elif change == "line":
        lines.insert(draw(st.integers(min_value=1, max_value=len(lines))), draw(st.sampled_from(OUT_OF_SHAPE)))
    elif change == "no names":
        lines = ["    images:\n", "    - names: []\n", "      sizeBytes: 1\n"]
    return "".join(lines)


OUT_OF_SHAPE = [
    "\n",
    "    # a comment\n",
    "      sizeBytes: 1\n",
    "      names: []\n",
    "    - names:\n",
    "       - x/y\n",
]


@st.composite
def kubectl_node(draw: st.DrawFn, index: int) -> str:
    version = draw(st.sampled_from(["v1"] * 6 + ["v1beta1"]))
    kind = draw(st.sampled_from(["Node"] * 6 + ["Pod"]))
    label = plain_or_quoted(draw(st.sampled_from(LABELS)), draw(st.sampled_from([False, False, False, True])))
    where = draw(st.sampled_from(["status"] * 12 + ["metadata", "spec", "twice", "none", "quoted", "flow"]))
    images = draw(image_block())
    text = f"- apiVersion: {version}\n  kind: {kind}\n  metadata:\n"
    if where == "metadata":
        text += images
    if where == "quoted":  # an annotation whose double-quoted text runs over lines shaped like images
        text += '    annotations:\n      note: "x\n' + images + '      y"\n'
    text += f"    labels:\n      gpu: {label}\n    name: n{index}\n  spec:\n"
    text += images if where == "spec" else "    unschedulable: false\n"
    text += '  status:\n    capacity:\n      nvidia.com/gpu: "8"\n'
    if where in ("status", "twice"):
        text += images
    if where == "twice":
        text += images
    if where == "flow":
        text += "    images: []\n"
    return text + "    nodeInfo:\n      kubeletVersion: v1.33.1\n"


@st.composite
def kubectl_lists(draw: st.DrawFn) -> str:
    nodes = [draw(kubectl_node(i)) for i in range(draw(st.integers(min_value=1, max_value=4)))]
    tail = draw(st.sampled_from(['kind: List\nmetadata:\n  resourceVersion: ""\n', "kind: List\n", ""]))
    return "apiVersion: v1\nitems:\n" + "".join(nodes) + tail


def compacted_by_the_loader(text: str) -> dict | None:
    loaded = load_text("nodes.yaml", text)
    if loaded.problems or len(loaded.documents) != 1:
        return None
    data = copy.deepcopy(loaded.documents[0].data)
    data["items"] = [compact_item(item) for item in data["items"]]
    return data


@settings(max_examples=300, deadline=None)
@given(kubectl_lists(), st.sampled_from([1, 1 << 20]))
@pytest.mark.slow
def test_node_images_cut_unread_answer_as_the_loader_with_the_nodes_compacted(text, chunk):
    original = fast_yaml.CHUNK_CHARS
    try:
        fast_yaml.CHUNK_CHARS = chunk  # hypothesis runs the examples itself: no fixture around each
        fast, data = fast_yaml.load_unambiguous(text, compact_item, node_images_dropped=True)
    finally:
        fast_yaml.CHUNK_CHARS = original
    if not fast:
        return
    expected = compacted_by_the_loader(text)
    assert expected is not None, text
    assert data == expected, text
    assert repr(data) == repr(expected), text  # types too: "010" vs 8 vs 10


def test_kubectl_printed_images_are_cut_and_nothing_else_is(monkeypatch):
    images = "    images:\n    - names:\n      - registry.k8s.io/pause:3.9\n      sizeBytes: 123\n"
    node = "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n{i}\n  status:\n{images}    nodeInfo: {{}}\n"
    text = "apiVersion: v1\nitems:\n" + "".join(node.format(i=i, images=images) for i in range(3)) + "kind: List\n"
    assert fast_yaml._cut_node_images(text).count == 3
    fast, data = fast_yaml.load_unambiguous(text, compact_item, node_images_dropped=True)
    assert fast and data == compacted_by_the_loader(text)
    # the cut text is never read: a spy on the reader sees no image
    seen: list[str] = []
    real = fast_yaml.yaml_rs.loads
    monkeypatch.setattr(fast_yaml.yaml_rs, "loads", lambda chunk, **kw: seen.append(chunk) or real(chunk, **kw))
    assert fast_yaml.load_unambiguous(text, compact_item, node_images_dropped=True)[0]
    assert seen and not any("pause" in chunk for chunk in seen)
    # images under metadata, a Pod's, a v1beta1 Node's: cut, found out of place, and the text read uncut
    for moved in (
        text.replace("  metadata:\n    name: n1\n", "  metadata:\n" + images + "    name: n1\n"),
        text.replace("kind: Node\n  metadata:\n    name: n2", "kind: Pod\n  metadata:\n    name: n2"),
        text.replace(
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n0",
            "- apiVersion: v1beta1\n  kind: Node\n  metadata:\n    name: n0",
        ),
    ):
        seen.clear()
        fast, data = fast_yaml.load_unambiguous(moved, compact_item, node_images_dropped=True)
        assert fast and data == compacted_by_the_loader(moved)
        assert any("pause" in chunk for chunk in seen)
