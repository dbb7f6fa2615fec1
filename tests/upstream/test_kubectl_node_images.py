"""What the real `kubectl get nodes -o yaml` prints, from a real API server (etcd and kube-apiserver of
k8s.io/kubernetes v1.37.2 on loopback, tests/kube_control_plane.py), read by the inventory's fast reader with
each Node's images cut unread (gpulint/lint/inputs/fast_yaml.py ``_cut_node_images``): the same nodes as the
full loader reads, compacted, and as `kubectl get nodes -o json` gives.

Each Node's status is written through the status subresource, as a kubelet reports it: images as containerd
names them (registry digests and tags, ECR hosts that start with digits), labels that YAML 1.1 reads otherwise.

Deselect with `-m "not apiserver"`. Skips when Go or etcd is missing, and fails instead under CI=true.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from k8s_binaries import binaries
from kube_control_plane import ControlPlane, programs

from gpulint.lint.inputs import fast_yaml
from gpulint.lint.inputs.loader import load_text
from gpulint.lint.world.inventory import compact_item, load_inventory

pytestmark = pytest.mark.apiserver

IMAGES = [
    {
        "names": [
            "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",
            "registry.k8s.io/pause:3.10",
        ],
        "sizeBytes": 320368,
    },
    {
        "names": [
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni@sha256:"
            "5b3ba1b3b2bda1b1b9a6c8e1e6a2f0f0d7c2d7c4f1f9d6c5b6e1f6a7d8c9b0a1",
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1",
        ],
        "sizeBytes": 44170536,
    },
    {"names": ["nvcr.io/nvidia/k8s-device-plugin:v0.17.0"], "sizeBytes": 98436121},
    {"names": ["sha256:3f5a0b7c9d1e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e0f2a"], "sizeBytes": 1024},
]
# an image name YAML 1.1 reads as a boolean: kubectl quotes it, and that Node's images are read, not cut
QUOTED = [{"names": ["yes"], "sizeBytes": 1}]


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs the real control plane: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[ControlPlane]:
    tools, found = binaries(), programs()
    for missing in (tools, found):
        if isinstance(missing, str):
            unavailable(missing)
    assert not isinstance(tools, str) and not isinstance(found, str)
    plane = ControlPlane(tmp_path_factory.mktemp("control-plane"), tools["kubectl"])
    try:
        plane.start(found, scheduler=False)
        yield plane
    finally:
        plane.stop()


def add_node(cluster: ControlPlane, name: str, images: list[dict]) -> None:
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true", "on": "yes", "rack": "010"}
    labels["nvidia.com/cuda.runtime-version.full"] = "12.8"
    cluster.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    amounts = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    status: dict = {"capacity": amounts, "allocatable": amounts, "conditions": [{"type": "Ready", "status": "True"}]}
    if images:
        status["images"] = images
    patch = json.dumps({"status": status})
    cluster.kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", patch)


def test_kubectl_get_nodes_yaml_is_read_with_the_images_cut_as_the_loader_reads_it(cluster, tmp_path: Path):
    for index in range(4):
        add_node(cluster, f"gpu-{index}", IMAGES[index:] + IMAGES[:index])
    add_node(cluster, "gpu-quoted", QUOTED + IMAGES)
    add_node(cluster, "gpu-no-images", [])
    text = cluster.kubectl("get", "nodes", "-o", "yaml").stdout
    assert "\n    images:\n    - names:\n      - registry.k8s.io/pause" in text  # kubectl's layout, as the cut expects
    assert fast_yaml._cut_node_images(text).count == 4  # the quoted name's Node is read whole, the last has none

    fast, data = fast_yaml.load_unambiguous(text, compact_item, node_images_dropped=True)
    loaded = load_text("nodes.yaml", text)
    assert fast and not loaded.problems
    whole = copy.deepcopy(loaded.documents[0].data)
    whole["items"] = [compact_item(item) for item in whole["items"]]
    assert data == whole and repr(data) == repr(whole)

    # the inventory from it is the one `kubectl get nodes -o json` gives
    (tmp_path / "nodes.yaml").write_text(text)
    (tmp_path / "nodes.json").write_text(cluster.kubectl("get", "nodes", "-o", "json").stdout)
    from_yaml = load_inventory([str(tmp_path / "nodes.yaml")])
    from_json = load_inventory([str(tmp_path / "nodes.json")])
    assert len(from_yaml.nodes) == 6
    assert [vars(n) for n in from_yaml.nodes] == [vars(n) for n in from_json.nodes]
    assert {k: v.data for k, v in from_yaml.node_objects.items()} == {
        k: v.data for k, v in from_json.node_objects.items()
    }
