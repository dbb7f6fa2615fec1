#!/usr/bin/env python3
"""Benchmark gpulint end to end, as a user runs it.

Generates a GitOps-like corpus (GPU Pods, Deployments, Jobs, PyTorchJobs, DRA
ResourceClaimTemplates with CEL selectors, Nodes with ~40 labels; some broken on
purpose), then times `gpulint check` on it and on one file (the pre-commit case).

    python benchmarks/bench.py [--documents 5000] [--files 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

GPU_MODELS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4", "NVIDIA-L40S"]


def pod_spec(rng: random.Random, indent: str) -> str:
    gpus = rng.choice([1, 2, 4, 8])
    request = (
        f"\n{indent}      requests:\n{indent}        nvidia.com/gpu: {gpus if rng.random() > 0.05 else 1}"
        if rng.random() < 0.3
        else ""
    )
    value = gpus if rng.random() > 0.03 else "0.5"
    return (
        f"{indent}nodeSelector:\n{indent}  nvidia.com/gpu.product: {rng.choice(GPU_MODELS)}\n"
        f"{indent}tolerations:\n{indent}- key: nvidia.com/gpu\n{indent}  operator: Exists\n"
        f"{indent}  effect: NoSchedule\n"
        f"{indent}containers:\n{indent}- name: main\n{indent}  image: registry.example.com/ml/trainer:1.{rng.randint(0, 9)}\n"
        f"{indent}  command: [python, train.py, --epochs, '10']\n"
        f"{indent}  env:\n{indent}  - name: NCCL_DEBUG\n{indent}    value: INFO\n"
        f"{indent}  resources:\n{indent}    limits:\n{indent}      nvidia.com/gpu: {value}\n"
        f"{indent}      memory: 64Gi\n{indent}      cpu: '16'{request}\n"
        f"{indent}  volumeMounts:\n{indent}  - name: data\n{indent}    mountPath: /data\n"
        f"{indent}volumes:\n{indent}- name: data\n{indent}  persistentVolumeClaim:\n{indent}    claimName: data\n"
    )


def document(rng: random.Random, n: int) -> str:
    kind = n % 6
    meta = f"metadata:\n  name: obj-{n}\n  namespace: team-{n % 17}\n  labels:\n    app: app-{n}\n"
    if kind == 0:
        return f"apiVersion: v1\nkind: Pod\n{meta}spec:\n" + pod_spec(rng, "  ")
    if kind == 1:
        return (
            f"apiVersion: apps/v1\nkind: Deployment\n{meta}spec:\n  replicas: 2\n"
            f"  selector:\n    matchLabels:\n      app: app-{n}\n  template:\n    metadata:\n"
            f"      labels:\n        app: app-{n}\n    spec:\n" + pod_spec(rng, "      ")
        )
    if kind == 2:
        return (
            f"apiVersion: batch/v1\nkind: Job\n{meta}spec:\n  parallelism: 4\n  completions: 4\n"
            f"  template:\n    spec:\n      restartPolicy: Never\n" + pod_spec(rng, "      ")
        )
    if kind == 3:
        return (
            f"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n{meta}spec:\n  pytorchReplicaSpecs:\n"
            f"    Worker:\n      replicas: 4\n      template:\n        spec:\n" + pod_spec(rng, "          ")
        )
    if kind == 4:
        return (
            f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n{meta}spec:\n  spec:\n"
            f"    devices:\n      requests:\n      - name: gpus\n        exactly:\n"
            f"          deviceClassName: gpu.nvidia.com\n          count: {rng.choice([1, 2, 4])}\n"
            f"          selectors:\n          - cel:\n              expression: >-\n"
            f'                device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100") &&\n'
            f'                device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0\n'
        )
    labels = "".join(f"    feature.node.kubernetes.io/cpu-cpuid.FEATURE{i}: 'true'\n" for i in range(30))
    model = rng.choice(GPU_MODELS)
    return (
        f"apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-node-{n}\n  labels:\n"
        f"    kubernetes.io/hostname: gpu-node-{n}\n    topology.kubernetes.io/zone: zone-{n % 3}\n"
        f"    nvidia.com/gpu.product: {model}\n    nvidia.com/gpu.count: '8'\n{labels}"
        f"spec:\n  taints:\n  - key: nvidia.com/gpu\n    value: present\n    effect: NoSchedule\n"
        f"status:\n  capacity:\n    cpu: '192'\n    memory: 2Ti\n    nvidia.com/gpu: '8'\n    pods: '110'\n"
        f"  allocatable:\n    cpu: '190'\n    memory: 1900Gi\n    nvidia.com/gpu: '8'\n    pods: '110'\n"
    )


def generate(root: Path, documents: int, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    per_file = max(1, documents // files)
    written = 0
    for index in range(files):
        folder = root / f"team-{index % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        docs = [document(rng, written + i) for i in range(per_file)]
        (folder / f"manifests-{index}.yaml").write_text("---\n".join(docs))
        written += per_file
    return written


def generate_fleet(path: Path, nodes: int, seed: int = 11) -> None:
    """An inventory of ``nodes`` GPU nodes: 4 models, 3 zones, racks of 32, some tainted, some cordoned."""
    rng = random.Random(seed)
    items = []
    for index in range(nodes):
        model = GPU_MODELS[index % len(GPU_MODELS)]
        gpus = 4 if model == "NVIDIA-L4" else 8
        taint = (
            "  spec:\n    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n"
            if model != "NVIDIA-L4"
            else ""
        )
        if rng.random() < 0.01:
            taint = "  spec:\n    unschedulable: true\n"
        items.append(
            f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-{index}\n    labels:\n"
            f"      kubernetes.io/hostname: node-{index}\n      topology.kubernetes.io/zone: zone-{index % 3}\n"
            f"      topology.kubernetes.io/rack: rack-{index // 32}\n      nvidia.com/gpu.product: {model}\n"
            f"      nvidia.com/gpu.count: '{gpus}'\n{taint}"
            f"  status:\n    capacity: {{cpu: '192', memory: 2Ti, pods: '110', nvidia.com/gpu: '{gpus}'}}\n"
            f"    allocatable: {{cpu: '190', memory: 2000Gi, pods: '110', nvidia.com/gpu: '{gpus}'}}\n"
        )
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(items))


def generate_dra_cluster(path: Path, nodes: int, gpus: int = 8, seed: int = 5) -> None:
    """Nodes with ``gpus`` GPUs each published in ResourceSlices (4 per PCIe root), plus DeviceClasses."""
    rng = random.Random(seed)
    docs = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
        "  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com' && "
        "device.attributes['gpu.nvidia.com'].type == 'gpu'\"}\n"
    ]
    for index in range(nodes):
        model = rng.choice(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"])
        memory = "48Gi" if "L40S" in model else "80Gi"
        devices = "".join(
            f"  - name: gpu-{g}\n    attributes:\n      type: {{string: gpu}}\n"
            f"      uuid: {{string: GPU-{index:05d}-{g}}}\n      productName: {{string: {model}}}\n"
            f"      driverVersion: {{version: 570.124.6}}\n"
            f"      resource.kubernetes.io/pcieRoot: {{string: pci0000:{'17' if g < gpus // 2 else '97'}}}\n"
            f"    capacity:\n      memory: {{value: {memory}}}\n"
            for g in range(gpus)
        )
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{index}\n  labels: "
            f"{{kubernetes.io/hostname: node-{index}}}\nstatus:\n  capacity: {{cpu: '96', pods: '110'}}\n"
        )
        docs.append(
            f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: node-{index}-gpus}}\n"
            f"spec:\n  driver: gpu.nvidia.com\n  nodeName: node-{index}\n"
            f"  pool: {{name: node-{index}, generation: 1, resourceSliceCount: 1}}\n  devices:\n{devices}"
        )
    path.write_text("---\n".join(docs))


def generate_claims(root: Path, claims: int, seed: int = 9) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    docs = []
    for index in range(claims):
        count = rng.choice([1, 2, 4, 6, 8, 9])
        product = rng.choice(["H100", "A100", "L40S", "B200"])
        memory = rng.choice(["40Gi", "80Gi"])
        constraint = (
            ("      constraints:\n      - requests: [gpus]\n        matchAttribute: resource.kubernetes.io/pcieRoot\n")
            if rng.random() < 0.3
            else ""
        )
        docs.append(
            f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: claim-{index}}}\n"
            f"spec:\n  spec:\n    devices:\n      requests:\n      - name: gpus\n        exactly:\n"
            f"          deviceClassName: gpu.nvidia.com\n          count: {count}\n          selectors:\n"
            f"          - cel:\n              expression: >-\n"
            f'                device.attributes["gpu.nvidia.com"].productName.contains("{product}") &&\n'
            f'                device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{memory}")) >= 0\n'
            + constraint
        )
    for chunk in range(0, claims, 50):
        (root / f"claims-{chunk}.yaml").write_text("---\n".join(docs[chunk : chunk + 50]))


def generate_gangs(root: Path, gangs: int, seed: int = 13) -> None:
    """Volcano Jobs of 2-64 workers, half of them confined to one rack through Kueue's annotation."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    docs = []
    for index in range(gangs):
        workers = rng.randint(2, 64)
        gpus = rng.choice([1, 2, 4, 8])
        topology = (
            "\n        annotations: {kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack}"
            if index % 2
            else " {}"
        )
        docs.append(
            f"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: gang-{index}, namespace: ml}}\n"
            f"spec:\n  minAvailable: {workers}\n  schedulerName: volcano\n  tasks:\n  - name: worker\n"
            f"    replicas: {workers}\n    template:\n      metadata:{topology}\n      spec:\n"
            f"        tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n        containers:\n"
            f"        - name: w\n          image: registry.example.com/train:1.0\n"
            f"          resources: {{limits: {{nvidia.com/gpu: {gpus}, cpu: '8'}}}}\n"
        )
    for chunk in range(0, gangs, 20):
        (root / f"gangs-{chunk}.yaml").write_text("---\n".join(docs[chunk : chunk + 20]))


# The baseline of the CLI figures: merely loading the same files with libyaml (PyYAML's C composer,
# nodes with positions, as gpulint needs them), every file's nodes kept as gpulint keeps its parsed files,
# with the cyclic collector off (else it rescans the kept nodes again and again: 5x the CPU).
# The two baselines, each the same files read with PyYAML's libyaml binding and kept: composed (the node
# trees with their marks, the collector off - what gpulint's parse costs at the least, as gpulint keeps
# the nodes to place its findings) and loaded (`yaml.load_all`: the values, as a program that merely
# loads its manifests does; slower, since values are built in Python, and smaller, since no node is kept).
LIBYAML_COMPOSE = """
import gc, sys, yaml
from pathlib import Path
gc.disable()
kept = [list(yaml.compose_all(p.read_bytes(), Loader=yaml.CSafeLoader)) for p in sorted(Path(sys.argv[1]).rglob("*.yaml"))]
"""
LIBYAML_LOAD = """
import sys, yaml
from pathlib import Path
kept = [list(yaml.load_all(p.read_bytes(), Loader=yaml.CSafeLoader)) for p in sorted(Path(sys.argv[1]).rglob("*.yaml"))]
"""


def cpu_and_peak(*commands: list[str]) -> tuple[float, float, float]:
    """The commands run at once: (CPU seconds of the processes and their children, wall seconds until
    the last one ends, peak RSS in MiB of the largest of them)."""
    started = time.perf_counter()
    processes = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    usages = [os.wait4(process.pid, 0)[2] for process in processes]
    wall = time.perf_counter() - started
    return sum(u.ru_utime + u.ru_stime for u in usages), wall, max(u.ru_maxrss for u in usages) / 1024


def compare(commands: dict[str, list[list[str]]], repeat: int) -> dict[str, tuple[float, float, float]]:
    """Median CPU, wall and peak of each entry (its commands run at once), the entries run in turn
    (interleaved), so a machine that gets busier or quieter during the run weighs on every entry alike."""
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, together in commands.items():
            runs[name].append(cpu_and_peak(*together))
    return {
        name: (
            statistics.median(r[0] for r in results),
            statistics.median(r[1] for r in results),
            max(r[2] for r in results),
        )
        for name, results in runs.items()
    }


def timed(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=5000, help="inventory size for the cluster-model run")
    parser.add_argument("--workloads", type=int, default=2000, help="workload documents for the cluster-model run")
    parser.add_argument("--claims", type=int, default=500, help="DRA claims for the allocator run")
    parser.add_argument("--gangs", type=int, default=200, help="gangs (2-64 members) for the packing run")
    parser.add_argument(
        "--gpulint", default=shutil.which("gpulint") or os.path.join(os.path.dirname(sys.executable), "gpulint")
    )
    parser.add_argument(
        "--ratios",
        type=int,
        nargs="*",
        metavar="DOCUMENTS",
        help="only the side-by-side run: for each corpus size, gpulint's CPU, wall time and peak memory "
        "against merely loading the same files with libyaml, 2 workers against 1, and the ceiling of 2 workers "
        "here: two one-worker runs at once, each on half of the files",
    )
    parser.add_argument(
        "--memory",
        type=int,
        nargs="*",
        metavar="DOCUMENTS",
        help="only the memory run: for each corpus size, the peak memory of `gpulint check --jobs 1` and of "
        "`--jobs 2` (its processes together), and each size's peak against the first size's",
    )
    args = parser.parse_args()
    if args.ratios:
        return ratios(args.gpulint, args.ratios, args.repeat)
    if args.memory:
        return memory(args.gpulint, args.memory, args.repeat)
    with tempfile.TemporaryDirectory(prefix="gpulint-bench-") as tmp:
        corpus = Path(tmp) / "corpus"
        count = generate(corpus, args.documents, args.files)
        size = sum(p.stat().st_size for p in corpus.rglob("*.yaml"))
        lint = [args.gpulint, "check", str(corpus), "--format", "json", "--output", os.devnull, "--exit-zero"]
        wall = timed(lint, args.repeat)
        serial = timed([*lint, "--jobs", "1"], args.repeat)
        one_file = next(corpus.rglob("*.yaml"))
        single = Path(tmp) / "one.yaml"
        single.write_text(one_file.read_text().split("---\n")[0])
        one = timed([args.gpulint, "check", str(single), "--exit-zero"], max(5, args.repeat))
        help_only = timed([args.gpulint, "--version"], max(5, args.repeat))
        fleet = Path(tmp) / "fleet.yaml"
        generate_fleet(fleet, args.nodes)
        workloads = Path(tmp) / "workloads"
        generate(workloads, args.workloads, max(1, args.workloads // 10), seed=3)
        cluster = timed(
            [
                args.gpulint,
                "check",
                str(workloads),
                "--inventory",
                str(fleet),
                "--format",
                "json",
                "--output",
                os.devnull,
                "--exit-zero",
            ],
            args.repeat,
        )
        dra_cluster = Path(tmp) / "dra-cluster.yaml"
        generate_dra_cluster(dra_cluster, args.nodes)
        dra_cluster_size = dra_cluster.stat().st_size
        claims = Path(tmp) / "claims"
        generate_claims(claims, args.claims)
        allocator = timed(
            [
                args.gpulint,
                "check",
                str(claims),
                "--inventory",
                str(dra_cluster),
                "--format",
                "json",
                "--output",
                os.devnull,
                "--exit-zero",
            ],
            args.repeat,
        )
        gang_dir = Path(tmp) / "gangs"
        generate_gangs(gang_dir, args.gangs)
        fleet_json = Path(tmp) / "fleet.json"
        fleet_json.write_text(json.dumps(yaml.load(fleet.read_text(), Loader=yaml.CSafeLoader)))
        packing = timed(
            [
                args.gpulint,
                "check",
                str(gang_dir),
                "--inventory",
                str(fleet_json),
                "--format",
                "json",
                "--output",
                os.devnull,
                "--exit-zero",
            ],
            args.repeat,
        )
        dra_json = Path(tmp) / "dra-cluster.json"  # what `kubectl get ... -o json` saves
        dra_json.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": list(yaml.load_all(dra_cluster.read_text(), Loader=yaml.CSafeLoader)),
                }
            )
        )
        allocator_json = timed(
            [
                args.gpulint,
                "check",
                str(claims),
                "--inventory",
                str(dra_json),
                "--format",
                "json",
                "--output",
                os.devnull,
                "--exit-zero",
            ],
            args.repeat,
        )
    print(f"corpus: {count} documents in {args.files} files ({size / 1e6:.1f} MB); {os.cpu_count()} cores")
    print("| measurement | result |\n|---|---:|")
    print(f"| `gpulint check` on the corpus, all cores | {wall:.2f} s = {count / wall:,.0f} documents/s |")
    print(f"| the same, `--jobs 1` | {serial:.2f} s = {count / serial:,.0f} documents/s |")
    print(f"| one-file run (pre-commit) | {one * 1000:.0f} ms wall |")
    print(f"| `gpulint --version` (start-up floor) | {help_only * 1000:.0f} ms wall |")
    print(
        f"| {args.workloads} workload documents against a {args.nodes}-node inventory (all rules) | {cluster:.2f} s |"
    )
    print(
        f"| {args.claims} DRA claims (CEL selectors, some with matchAttribute) against {args.nodes} nodes x 8 GPUs "
        f"in ResourceSlices, inventory as JSON | {allocator_json:.2f} s |"
    )
    print(f"| the same, inventory as YAML ({dra_cluster_size / 1e6:.0f} MB) | {allocator:.2f} s |")
    print(f"| {args.gangs} gangs of 2-64 members (half within one rack) against {args.nodes} nodes | {packing:.2f} s |")
    return 0


def ratios(gpulint: str, sizes: list[int], repeat: int) -> int:
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} at the start; medians of {repeat} interleaved runs")
    print(
        "| documents (files) | libyaml compose: CPU / peak | libyaml load: CPU / peak | `--jobs 1`: wall / CPU / peak "
        "| CPU ratio (compose / load) | peak ratio (compose / load) | `--jobs 2`: wall / CPU | 2 workers vs 1: wall "
        "| per-core efficiency | ceiling: two `--jobs 1` on halves at once, wall / CPU / per-core | 2 workers of ceiling |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for documents in sizes:
        with tempfile.TemporaryDirectory(prefix="gpulint-ratios-") as tmp:
            corpus = Path(tmp) / "corpus"
            files = max(1, documents // 10)
            generate(corpus, documents, files)
            lint = [gpulint, "check", "--format", "json", "--output", os.devnull, "--exit-zero"]
            halves = _halves(corpus)
            results = compare(
                {
                    "compose": [[sys.executable, "-c", LIBYAML_COMPOSE, str(corpus)]],
                    "load": [[sys.executable, "-c", LIBYAML_LOAD, str(corpus)]],
                    "one": [[*lint, "--jobs", "1", str(corpus)]],
                    "two": [[*lint, "--jobs", "2", str(corpus)]],
                    # What this machine gives two processes that share nothing: the most 2 workers can reach here.
                    "halves": [[*lint, "--jobs", "1", *half] for half in halves],
                },
                repeat,
            )
        compose, load, one, two, pair = (results[k] for k in ("compose", "load", "one", "two", "halves"))
        print(
            f"| {documents:,} ({files:,}) | {compose[0]:.2f} s / {compose[2]:.0f} MiB "
            f"| {load[0]:.2f} s / {load[2]:.0f} MiB | {one[1]:.2f} s / {one[0]:.2f} s / {one[2]:.0f} MiB "
            f"| {one[0] / compose[0]:.2f}x / {one[0] / load[0]:.2f}x | {one[2] / compose[2]:.2f}x / {one[2] / load[2]:.2f}x "
            f"| {two[1]:.2f} s / {two[0]:.2f} s | {two[1] / one[1]:.2f}x | {one[1] / two[1] / 2:.0%} "
            f"| {pair[1]:.2f} s / {pair[0]:.2f} s / {one[1] / pair[1] / 2:.0%} | {pair[1] / two[1]:.0%} |"
        )
    return 0


def _tree_memory(pid: int) -> tuple[int, int]:
    """Resident bytes of ``pid`` and its descendants now, summed, and their proportional share (PSS: a page
    forked workers still share with the run counted once, split between them); (0, 0) once gone. Linux /proc."""
    rss, pss, pending = 0, 0, [pid]
    while pending:
        current = pending.pop()
        try:
            rss += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            pss += _pss(current)
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue  # ended between two reads
    return rss, pss


def _pss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def peak_memory(command: list[str]) -> tuple[float, float, float, float]:
    """(CPU seconds, peak RSS in MiB of the largest process, peak in MiB of the process and its workers
    together, sampled every 10 ms: their resident sets summed, and their proportional sets summed) of one run
    of ``command``."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    together = proportional = 0
    while process.poll() is None:
        rss, pss = _tree_memory(process.pid)
        together, proportional = max(together, rss), max(proportional, pss)
        time.sleep(0.01)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # of every child waited for so far: differences below
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, together / 2**20, proportional / 2**20


def memory(gpulint: str, sizes: list[int], repeat: int) -> int:
    """Peak memory of `gpulint check` as the corpus grows (issue #31: at most 1.5x from 5,000 to 50,000
    documents, and 300 MiB at 50,000, workers together). Each size runs in a fresh process tree; the
    largest process's peak is the kernel's count (wait4), the workers' total is sampled."""
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} at the start; largest of {repeat} runs")
    print(
        "| documents (files) | `--jobs 1`: CPU / peak | `--jobs 2`: CPU / peak of the largest process / all "
        "processes together, resident sets summed / proportional sets summed | `--jobs 2` together against "
        "`--jobs 1` (summed / proportional) | `--jobs 1` peak against the first size "
        "| `--jobs 2` together against the first size (summed / proportional) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    first: tuple[float, float, float] | None = None
    for documents in sizes:
        with tempfile.TemporaryDirectory(prefix="gpulint-memory-") as tmp:
            corpus = Path(tmp) / "corpus"
            files = max(1, documents // 10)
            generate(corpus, documents, files)
            lint = [gpulint, "check", "--format", "json", "--output", os.devnull, "--exit-zero", str(corpus)]
            one, two = [], []
            for _ in range(repeat):
                one.append(_measured([*lint, "--jobs", "1"]))
                two.append(_measured([*lint, "--jobs", "2"]))
        cpu1, peak1 = statistics.median(r[0] for r in one), max(r[1] for r in one)
        cpu2, largest2 = statistics.median(r[0] for r in two), max(r[1] for r in two)
        together2, proportional2 = max(r[2] for r in two), max(r[3] for r in two)
        first = first or (peak1, together2, proportional2)
        print(
            f"| {documents:,} ({files:,}) | {cpu1:.2f} s / {peak1:.0f} MiB | {cpu2:.2f} s / {largest2:.0f} MiB / "
            f"{together2:.0f} MiB / {proportional2:.0f} MiB | {together2 / peak1:.2f}x / {proportional2 / peak1:.2f}x "
            f"| {peak1 / first[0]:.2f}x | {together2 / first[1]:.2f}x / {proportional2 / first[2]:.2f}x |"
        )
    return 0


def _measured(command: list[str]) -> tuple[float, float, float, float]:
    """peak_memory() in a child of its own, so that the kernel's peak (RUSAGE_CHILDREN) is this run's alone."""
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench; "
        "print(json.dumps(bench.peak_memory(sys.argv[2:])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent), *command],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cpu, largest, together, proportional = json.loads(out)
    return cpu, largest, together, proportional


def _halves(corpus: Path) -> list[list[str]]:
    """The corpus's folders in two halves of the same number of files (generate() deals files out to
    20 folders in turn)."""
    folders = sorted((str(p) for p in corpus.iterdir() if p.is_dir()), key=lambda p: int(p.rpartition("-")[2]))
    if len(folders) < 2:
        raise SystemExit("--ratios: a corpus of at least 20 documents (2 files) is needed to split it in halves")
    middle = len(folders) // 2
    return [folders[:middle], folders[middle:]]


if __name__ == "__main__":
    sys.exit(main())
