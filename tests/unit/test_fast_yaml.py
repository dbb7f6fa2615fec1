"""The fast inventory reader (yaml-rs) answers only when its answer is gpulint's own loader's.

YAML 1.1 (what Kubernetes and gpulint read) and YAML 1.2 (yaml-rs) disagree on plain scalars
such as `yes`, `010`, `1e3` and `12:30`, on non-string keys, anchors, merge keys and tags; the
fast path must fall back for every one of them. Hypothesis writes documents from a vocabulary
of exactly those spellings, plain and quoted, block and flow, and the two readers must agree
whenever the fast one answers."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpulint.lint.inputs.fast_yaml import load_unambiguous
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.world.inventory import load_inventory

TRICKY = [
    "yes", "no", "on", "off", "y", "n", "Yes", "OFF", "true", "False", "null", "~", "Null",
    "010", "0o17", "0x1F", "0b101", "1_000", "+1", "-0", "1.", ".5", "1e3", "1.5e3", "1e+3", "6.02E+23",
    "12:30", "1:20:30.5", "99999999999999999999999", ".inf", "-.Inf", ".nan",
    "2026-01-01", "2026-01-01T10:00:00Z", "10.0.0.1", "570.124.06", "3750Gi", "191450m", "v1.2.3",
    "nvidia.com/gpu", "NVIDIA-H100-80GB-HBM3", "a b", "say no", "x: y", "#not", "-", "?", "=", "<<",
    "", "8", "0", "-1", "1.50",
]  # fmt: skip


def scalar_text(value: str, style: str) -> str:
    if style == "double":
        return json.dumps(value)
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    return value  # plain: may not even parse (then both readers must say so, or the fast one steps aside)


scalars = st.builds(scalar_text, st.sampled_from(TRICKY), st.sampled_from(["plain", "plain", "double", "single"]))
keys = st.one_of(st.sampled_from(["name", "labels", "gpu.count", "nvidia.com/gpu", "a-b"]), scalars)


def block(value: object, indent: int) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return " {}\n"
        return "\n" + "".join(f"{pad}{k}:{block(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return " []\n"
        return "\n" + "".join(f"{pad}-{block(v, indent + 2)}" for v in value)
    return f" {value}\n"


def flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return str(value)


trees = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=12,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    root = draw(st.dictionaries(keys, trees, min_size=1, max_size=5))
    prefix = draw(st.sampled_from(["", "---\n", "# a comment\n"]))
    body = flow(root) + "\n" if draw(st.booleans()) else block(root, 0).lstrip("\n")
    suffix = draw(st.sampled_from(["", "", "---\nb: 1\n", "...\n"]))
    return prefix + body + suffix


@settings(max_examples=400, deadline=None)
@given(documents())
# What hypothesis found on the way (each once read differently by the two readers):
@pytest.mark.slow
@example("1e3: []\n")
@example("010:\n  - y\n")
@example("{name: 0x1F, labels: [?]}\n")
@example('name:\n  : "yes"\n')
@example("#not: []\n")  # no document at all: the loader has none, yaml-rs said None
def test_whenever_the_fast_reader_answers_it_agrees_with_gpulints_loader(text):
    fast, data = load_unambiguous(text)
    if not fast:
        return
    loaded = load_text("doc.yaml", text)
    assert not loaded.problems, (text, loaded.problems)
    assert [document.data for document in loaded.documents] == [data], text
    assert repr([document.data for document in loaded.documents]) == repr([data]), text  # types too: 1 vs 1.0 vs True


def test_kubectl_output_takes_the_fast_path_and_reads_the_same(tmp_path):
    """What `kubectl get nodes -o yaml` prints (go-yaml quotes what YAML 1.1 would read otherwise)."""
    nodes = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"gpu-{i}",
                    "labels": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8", "on": "yes"},
                    "creationTimestamp": "2026-11-20T08:00:00Z",
                },
                "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
                "status": {
                    "capacity": {"cpu": "192", "nvidia.com/gpu": "8", "memory": "2097152Mi"},
                    "addresses": [{"type": "InternalIP", "address": f"10.0.0.{i}"}],
                    "images": [{"names": [f"registry.example.com/x:{i}"], "sizeBytes": 1234567890 + i}],
                },
            }
            for i in range(3)
        ],
    }
    text = yaml.safe_dump(nodes, sort_keys=False)  # PyYAML quotes like go-yaml: 'true', '8', 'yes'
    fast, data = load_unambiguous(text)
    assert fast
    assert data == load_text("nodes.yaml", text).documents[0].data == nodes


def test_every_inventory_in_the_repo_loads_the_same_either_way(monkeypatch):
    import gpulint.lint.inputs.fast_yaml as fast_yaml_module  # the inventory loader imports it when it reads YAML

    paths = sorted(str(p) for p in (REPO / "examples" / "inventory").rglob("*.yaml")) + sorted(
        str(p) for p in (REPO / "rules" / "inventories").rglob("*.yaml")
    )
    assert paths
    fast = load_inventory(paths)
    monkeypatch.setattr(fast_yaml_module, "load_unambiguous", lambda *args, **kwargs: (False, None))
    slow = load_inventory(paths)
    assert [n.name for n in fast.nodes] == [n.name for n in slow.nodes]
    assert {k: v.data for k, v in fast.node_objects.items()} == {k: v.data for k, v in slow.node_objects.items()}
    assert [vars(n) for n in fast.nodes] == [vars(n) for n in slow.nodes]
    assert [s.data for s in fast.slices] == [s.data for s in slow.slices]
    assert {k: v.data for k, v in fast.device_classes.items()} == {k: v.data for k, v in slow.device_classes.items()}


@pytest.mark.slow
def test_an_inventory_over_the_manifest_limit_is_read_and_a_huge_one_refused_unread(tmp_path):
    from gpulint.lint.world.inventory import MAX_INVENTORY_FILE_BYTES, InventoryError

    node = "- apiVersion: v1\n  kind: Node\n  metadata: {name: n%d}\n  status: {capacity: {nvidia.com/gpu: '8'}}\n"
    padding = "# " + "x" * 1000 + "\n"
    big = tmp_path / "nodes.yaml"
    with big.open("w") as out:  # ~70 MB: over the 64 MiB a manifest may have
        out.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(70_000):
            out.write(node % i if i < 2 else padding)
    assert big.stat().st_size > 64 * 1024 * 1024
    assert len(load_inventory([str(big)]).nodes) == 2
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as out:
        out.truncate(MAX_INVENTORY_FILE_BYTES + 1)  # sparse: no disk used
    try:
        load_inventory([str(huge)])
    except InventoryError as exc:
        assert "over the limit of 1073741824 bytes (1 GiB, inventory file size)" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a file over the inventory limit was read")


def test_a_long_plain_scalar_is_judged_without_being_remembered():
    """The verdict on a plain scalar is remembered for short ones only: a webhook reads its inventory again and
    again for months, and a long one (base64 certificate data that starts with a digit) would stay in memory."""
    import gpulint.lint.inputs.fast_yaml as fast_yaml_module

    certificate = "1" + "QUJD" * 1000
    text = f"data:\n  cert: {certificate}\n  port: 8080x\n"
    fast_yaml_module._agree.cache_clear()
    fast, data = load_unambiguous(text)
    assert fast and data == load_text("cm.yaml", text).documents[0].data == {
        "data": {"cert": certificate, "port": "8080x"}
    }
    assert fast_yaml_module._agree.cache_info().currsize == 1  # "8080x", not the certificate


def test_a_key_ending_in_a_capital_letter_does_not_send_the_text_to_the_empty_key_search(monkeypatch):
    """The search for an empty key (": value" with no key) runs only where a delimiter, blanks or dashes and ":"
    follow each other; it once ran for most Nodes, whose NFD labels end in "ID:", over the whole text."""
    import gpulint.lint.inputs.fast_yaml as fast_yaml_module

    class Refused:
        def search(self, *args: object) -> None:
            raise AssertionError("searched for an empty key")

    monkeypatch.setattr(fast_yaml_module, "_EMPTY_KEY", Refused())
    text = "metadata:\n  labels:\n    feature.node.kubernetes.io/system-os_release.ID: amzn\n    DD: x\n"
    assert load_unambiguous(text) == (True, load_text("node.yaml", text).documents[0].data)
    with pytest.raises(AssertionError, match="empty key"):
        load_unambiguous("name:\n  : x\n")
