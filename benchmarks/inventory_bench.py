#!/usr/bin/env python3
"""How fast and how big: loading a cluster inventory as `kubectl get nodes -o yaml|json` prints it.

Generates Nodes shaped like real GPU nodes (about 40 labels, annotations, conditions, addresses,
~40 cached images, nodeInfo: ~12 KB of YAML each), then measures, each in a fresh process:

- baseline: ``json.load`` of the JSON export of the same nodes: the floor any tool reading it pays
  (the same baseline for the YAML file: the same fleet);
- load: ``load_inventory`` (the inventory gpulint's rules use), then the cluster model built;
- inventory, check, explain: the commands, run in-process as the CLI runs them (``gpulint inventory
  --format json``; ``check`` and ``explain`` of one GPU pod against the inventory).

It prints CPU seconds, peak resident memory and the ratio of each to the baseline measured in the
same run (the machines are noisy: only the ratios travel).

    python benchmarks/inventory_bench.py [--nodes 5000 20000] [--formats yaml,json] [--what load,inventory]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

MODELS = [
    ("NVIDIA-H100-80GB-HBM3", 8, "p5.48xlarge"),
    ("NVIDIA-A100-SXM4-80GB", 8, "p4de.24xlarge"),
    ("NVIDIA-L4", 4, "g6.12xlarge"),
]


def node(index: int, rng: random.Random) -> dict:
    model, gpus, instance = MODELS[index % len(MODELS)]
    name = f"ip-10-{index // 250}-{index % 250}-{rng.randint(1, 254)}.ec2.internal"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": f"us-east-1{'abc'[index % 3]}",
        "failure-domain.beta.kubernetes.io/zone": f"us-east-1{'abc'[index % 3]}",
        "topology.k8s.aws/zone-id": f"use1-az{index % 3 + 1}",
        "eks.amazonaws.com/nodegroup": f"gpu-{instance.split('.')[0]}",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": model,
        "nvidia.com/gpu.count": str(gpus),
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/gpu.family": "hopper",
        "nvidia.com/gpu.machine": instance,
        "nvidia.com/cuda.driver-version.full": "570.124.06",
        "nvidia.com/cuda.driver.major": "570",
        "nvidia.com/cuda.runtime-version.full": "12.8",
        "nvidia.com/gfd.timestamp": str(1_760_000_000 + index),
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
        "nvidia.com/gpu.deploy.container-toolkit": "true",
        "nvidia.com/gpu.deploy.driver": "pre-installed",
        "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
        "feature.node.kubernetes.io/kernel-version.full": "6.1.128-136.201.amzn2023.x86_64",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/pci-1d0f.present": "true",
        "feature.node.kubernetes.io/system-os_release.ID": "amzn",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla",
        "vpc.amazonaws.com/efa.present": "true",
        "topology.kubernetes.io/rack": f"rack-{index // 32}",
    }
    images = [
        {
            "names": [
                f"registry.example.com/ml/image-{i}@sha256:{rng.getrandbits(256):064x}",
                f"registry.example.com/ml/image-{i}:v1.{i}",
            ],
            "sizeBytes": rng.randint(10**7, 10**10),
        }
        for i in range(40)
    ]
    conditions = [
        {
            "type": kind,
            "status": "True" if kind == "Ready" else "False",
            "lastHeartbeatTime": "2026-12-01T10:00:00Z",
            "lastTransitionTime": "2026-11-20T08:00:00Z",
            "reason": f"Kubelet{kind}",
            "message": f"kubelet reports {kind}",
        }
        for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
    ]
    resources = {
        "cpu": "192",
        "memory": "2097152Mi",
        "pods": "110",
        "ephemeral-storage": "3750Gi",
        "nvidia.com/gpu": str(gpus),
        "vpc.amazonaws.com/efa": "32",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"{rng.getrandbits(128):032x}",
            "resourceVersion": str(1000 + index),
            "creationTimestamp": "2026-11-20T08:00:00Z",
            "labels": labels,
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": f"10.0.{index // 250}.{index % 250}",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "nfd.node.kubernetes.io/feature-labels": ",".join(k for k in labels if k.startswith("feature."))[:200],
            },
        },
        "spec": {
            "providerID": f"aws:///us-east-1a/i-{rng.getrandbits(64):016x}",
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        },
        "status": {
            "capacity": resources,
            "allocatable": {**resources, "cpu": "191450m", "memory": "2080000Mi"},
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{index // 250}.{index % 250}"},
                {"type": "Hostname", "address": name},
                {"type": "InternalDNS", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": f"{rng.getrandbits(128):032x}",
                "systemUUID": f"{rng.getrandbits(128):032x}",
                "bootID": f"{rng.getrandbits(128):032x}",
                "kernelVersion": "6.1.128-136.201.amzn2023.x86_64",
                "osImage": "Amazon Linux 2023.6.20250203",
                "containerRuntimeVersion": "containerd://1.7.25",
                "kubeletVersion": "v1.33.0-eks-1",
                "kubeProxyVersion": "v1.33.0-eks-1",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": images,
        },
    }


def write_inventory(directory: Path, nodes: int, seed: int = 3) -> dict[str, Path]:
    rng = random.Random(seed)
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [node(i, rng) for i in range(nodes)],
    }
    paths = {"yaml": directory / f"nodes-{nodes}.yaml", "json": directory / f"nodes-{nodes}.json"}
    if not paths["yaml"].exists():
        # as kubectl prints it: block style, 2-space indent, keys in order
        paths["yaml"].write_text(
            yaml.dump(listing, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False, width=1 << 30)
        )
        paths["json"].write_text(json.dumps(listing, indent=4))
    return paths


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: trainer
    image: registry.example.com/ml/trainer:1
    resources: {limits: {nvidia.com/gpu: 8}}
    volumeMounts: [{name: shm, mountPath: /dev/shm}]
  volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""

MEASURE = r"""
import contextlib, io, json, sys, time
path, what, manifests = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.process_time()
if what == "baseline":
    with open(path, "rb") as handle:
        count = len(json.load(handle)["items"])
elif what == "load":
    from gpulint.lint.world.inventory import load_inventory
    inventory = load_inventory([path])
    inventory.model  # the grouped node model the rules read
    count = len(inventory.nodes)
else:
    from gpulint.cli.main import cli
    args = {
        "inventory": ["inventory", "--inventory", path, "--format", "json"],
        "check": ["check", manifests, "--inventory", path],
        "explain": ["explain", manifests, "--inventory", path],
    }[what]
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # the CLI writes bytes to a buffer
    with contextlib.redirect_stdout(out):
        try:
            cli.main(args, standalone_mode=False)
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    if code not in (0, 1):
        raise SystemExit(f"exit {code}")
    out.flush()
    count = json.loads(out.buffer.getvalue())["summary"]["nodes"] if what == "inventory" else -1
cpu = time.process_time() - start
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report its parent's peak
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"cpu": cpu, "peak": peak, "nodes": count}))
"""


def measure(path: Path, what: str, manifests: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), what, str(manifests)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--formats", default="yaml,json")
    parser.add_argument("--what", default="load,inventory,check,explain")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "gpulint-inventory-bench"))
    args = parser.parse_args()
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    manifests = directory / "manifests"
    manifests.mkdir(exist_ok=True)
    (manifests / "trainer.yaml").write_text(POD)
    print(f"load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}")
    print("| inventory | size | what | CPU | peak RSS | CPU / baseline | peak / baseline |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for nodes in args.nodes:
        paths = write_inventory(directory, nodes)
        base = measure(paths["json"], "baseline", manifests)
        size = paths["json"].stat().st_size / 2**20
        print(
            f"| {nodes} nodes | {size:.0f} MiB | baseline: json.load | {base['cpu']:.2f} s | {base['peak'] / 2**20:.0f} MiB | 1 | 1 |"
        )
        for fmt in args.formats.split(","):
            path = paths[fmt]
            size = path.stat().st_size / 2**20
            for what in args.what.split(","):
                ours = measure(path, what, manifests)
                if "error" in ours:
                    print(f"| {nodes} nodes, {fmt} | {size:.0f} MiB | {what} | failed: {ours['error'][:80]} | | | |")
                    continue
                print(
                    f"| {nodes} nodes, {fmt} | {size:.0f} MiB | {what} | {ours['cpu']:.2f} s | {ours['peak'] / 2**20:.0f} MiB "
                    f"| {ours['cpu'] / base['cpu']:.2f}x | {ours['peak'] / base['peak']:.2f}x |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
