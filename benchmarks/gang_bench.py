#!/usr/bin/env python3
"""Benchmark gang placement in-process: 1,000 pods on 5,000 nodes (the fleet of bench.py: 4 GPU
models, 3 zones, racks of 32, some tainted, some cordoned), on the whole cluster and per zone and
per rack; the same gang on node pools only (several instance types per pool, sharing its max size
and limits); and the worst case: a gang the search cannot decide, which runs to the work budget.

Each figure is also given as a ratio to a baseline measured in the same process: one pass of
the scheduler filters for the gang's pod shapes over the same nodes (what every inventory rule
pays anyway), so the ratios compare across machines. Times are CPU time of this single-threaded
process (the wall time on an idle machine; wall time is shown too).

    python benchmarks/gang_bench.py [--nodes 5000] [--pods 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from gpulint.kube.gangs.members import Gang, Member, NewNodes, pack, pack_with_new_nodes
from gpulint.kube.gangs.packing import WORK_BUDGET, PoolLimit
from gpulint.kube.scheduler import ClusterModel, NodeInfo, pod_requirements

GPU_MODELS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4", "NVIDIA-L40S"]
ZONE, RACK = "topology.kubernetes.io/zone", "topology.kubernetes.io/rack"


def fleet(nodes: int, seed: int = 11) -> list[NodeInfo]:
    """The nodes of bench.py's generated inventory, built without a YAML round trip."""
    rng = random.Random(seed)
    out = []
    for index in range(nodes):
        model = GPU_MODELS[index % len(GPU_MODELS)]
        gpus = 4 if model == "NVIDIA-L4" else 8
        spec: dict[str, Any] = {}
        if model != "NVIDIA-L4":
            spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        if rng.random() < 0.01:
            spec = {"unschedulable": True}
        amounts = {"cpu": "190", "memory": "2000Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
        out.append(
            NodeInfo.from_object(
                {
                    "metadata": {
                        "name": f"node-{index}",
                        "labels": {
                            "kubernetes.io/hostname": f"node-{index}",
                            ZONE: f"zone-{index % 3}",
                            RACK: f"rack-{index // 32}",
                            "nvidia.com/gpu.product": model,
                            "nvidia.com/gpu.count": str(gpus),
                        },
                    },
                    "spec": spec,
                    "status": {"capacity": amounts, "allocatable": amounts},
                }
            )
        )
    return out


def member(role: str, count: int, requests: dict[str, str], gpus: int = 0) -> Member:
    resources: dict[str, Any] = {"requests": requests}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    spec = {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": role, "image": "i", "resources": resources}],
    }
    return Member(role, ("spec",), pod_requirements(spec), count, "volcano")


def big_gang(pods: int = 1000, topology: str = "") -> Gang:
    """A training job: a launcher, 8-GPU workers, 1-GPU evaluators and CPU-only data loaders."""
    workers = pods * 6 // 10
    evaluators = pods * 2 // 10
    loaders = pods - 1 - workers - evaluators
    members = [
        member("launcher", 1, {"cpu": "8", "memory": "32Gi"}),
        member("worker", workers, {"cpu": "20", "memory": "200Gi"}, gpus=8),
        member("evaluator", evaluators, {"cpu": "4", "memory": "32Gi"}, gpus=1),
        member("loader", loaders, {"cpu": "2", "memory": "8Gi"}),
    ]
    return Gang("Volcano Job", members, pods, ("spec",), topology)


def undecidable_gang() -> tuple[Gang, list[NodeInfo]]:
    """Sixteen CPU pods of ten sizes from 32 to 44 CPUs on seven nodes of 100 (three-partition-like):
    the totals allow them, no placement exists, and the proof needs ~650,000 search steps."""
    sizes = [(32, 1), (33, 2), (35, 2), (36, 2), (37, 1), (38, 2), (40, 1), (42, 2), (43, 2), (44, 1)]
    members = [member(f"s{size}", count, {"cpu": str(size)}) for size, count in sizes]
    amounts = {"cpu": "100", "pods": "110"}
    nodes = [
        NodeInfo.from_object({"metadata": {"name": f"cpu-{i}"}, "status": {"allocatable": amounts}}) for i in range(7)
    ]
    return Gang("Volcano Job", members, sum(c for _, c in sizes), ("spec",)), nodes


def twelve_on_eleven() -> tuple[Gang, list[NodeInfo]]:
    """The case from issue #11: 12 GPU pods (6 x 6 GPUs, 6 x 5 GPUs) on 11 nodes of 8 GPUs."""
    members = [member("big", 6, {}, gpus=6), member("small", 6, {}, gpus=5)]
    amounts = {"cpu": "64", "pods": "110", "nvidia.com/gpu": "8"}
    nodes = [
        NodeInfo.from_object({"metadata": {"name": f"gpu-{i}"}, "status": {"allocatable": amounts}}) for i in range(11)
    ]
    return Gang("Volcano Job", members, 12, ("spec",)), nodes


INSTANCE_TYPES = [  # (name, GPUs, CPUs, memory GiB)
    ("8-gpu", 8, 190, 2000),
    ("4-gpu", 4, 96, 1000),
    ("1-gpu", 1, 16, 128),
    ("cpu", 0, 64, 256),
]


def pools_for(gang: Gang, pools: int = 3, max_nodes: int = 400, gpu_limit: int = 3000) -> list[NewNodes]:
    """``pools`` pools of the four instance types each: at most ``max_nodes`` nodes and ``gpu_limit``
    GPUs a pool, each member on the types with the resources it asks for (GPU pods on GPU types)."""
    out = []
    for index in range(pools):
        limit = PoolLimit(max_nodes, (("nvidia.com/gpu", Fraction(gpu_limit)),))
        for name, gpus, cpu, memory in INSTANCE_TYPES:
            amounts = {"cpu": Fraction(cpu), "memory": Fraction(memory * 2**30), "pods": Fraction(110)}
            if gpus:
                amounts["nvidia.com/gpu"] = Fraction(gpus)
            takes = frozenset(m.pod.signature() for m in gang.members if gpus or "nvidia.com/gpu" not in m.pod.requests)
            count = min(max_nodes, gpu_limit // gpus if gpus else max_nodes)
            cost = {"nvidia.com/gpu": Fraction(gpus)}
            out.append(NewNodes(f"pool-{index}: {name}", amounts, takes, count, (), f"pool-{index}", limit, cost))
    return out


def cpu_pool(gang: Gang) -> list[NewNodes]:
    """The undecidable gang's nodes as a pool of at most 7 nodes, of 100 or 96 CPUs."""
    limit = PoolLimit(7)
    takes = frozenset(m.pod.signature() for m in gang.members)
    return [
        NewNodes(f"cpu: {cpus}", {"cpu": Fraction(cpus), "pods": Fraction(110)}, takes, 7, (), "cpu", limit, {})
        for cpus in (100, 96)
    ]


def pool_verdict(gang: Gang, nodes: list[NodeInfo], new: list[NewNodes]) -> str:
    result = pack_with_new_nodes(gang, ClusterModel(nodes), new, "")
    return "unsatisfiable" if result.unsatisfiable else "undecided" if result.undecided else "fits"


def filter_pass(gang: Gang, nodes: list[NodeInfo]) -> None:
    """The baseline: the scheduler filters for each pod shape over the nodes, on a fresh model."""
    model = ClusterModel(nodes)
    for each in gang.members:
        model.evaluate(each.pod)


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds (single-threaded: the same on an idle machine)."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def verdict(gang: Gang, nodes: list[NodeInfo]) -> str:
    result = pack(gang, ClusterModel(nodes))
    if result.unsatisfiable:
        return "unsatisfiable"
    if result.undecided:
        return "undecided"
    return f"fits ({len(result.fitting_domains())} domains)" if gang.topology_key else "fits"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    nodes = fleet(args.nodes)
    cases: list[tuple[str, Gang, list[NodeInfo]]] = [
        (f"{args.pods} pods (4 shapes) on {args.nodes} nodes, whole cluster", big_gang(args.pods), nodes),
        (f"the same, in one zone ({ZONE})", big_gang(args.pods, ZONE), nodes),
        (f"the same, in one rack ({RACK}, {(args.nodes + 31) // 32} racks)", big_gang(args.pods, RACK), nodes),
        ("issue #11: 12 GPU pods on 11 nodes", *twelve_on_eleven()),
        (f"worst case: undecidable, runs to the work budget ({WORK_BUDGET:,} steps)", *undecidable_gang()),
    ]
    print(
        f"{args.nodes} nodes; median of {args.repeat}; baseline = one scheduler-filter pass of the gang's "
        "pod shapes over the same nodes"
    )
    print(
        "| gang | verdict | baseline (CPU) | packing, filters included (CPU) | the same, wall | "
        "packing / baseline |\n|---|---|---:|---:|---:|---:|"
    )
    for title, gang, on in cases:
        _, baseline = timed(lambda: filter_pass(gang, on), args.repeat)  # noqa: B023 - timed() calls it at once
        wall, cpu = timed(lambda: pack(gang, ClusterModel(on)), args.repeat)  # noqa: B023
        print(
            f"| {title} | {verdict(gang, on)} | {baseline * 1000:.1f} ms | {cpu * 1000:.1f} ms | "
            f"{wall * 1000:.1f} ms | {cpu / baseline:.1f}x |"
        )
    small = fleet(args.nodes // 10)
    gang = big_gang(args.pods)
    hard, _ = undecidable_gang()
    pool_cases: list[tuple[str, Gang, list[NodeInfo], list[NewNodes]]] = [
        (
            f"{args.pods} pods on {len(small)} nodes + 3 pools x 4 instance types (400 nodes, 3,000 GPUs each)",
            gang,
            small,
            pools_for(gang),
        ),
        ("the same, a 620-GPU limit per pool (tight)", gang, small, pools_for(gang, gpu_limit=620)),
        ("the same, 60 nodes per pool (too few)", gang, small, pools_for(gang, max_nodes=60)),
        ("worst case on a pool: the undecidable gang, 7 nodes of 2 types", hard, [], cpu_pool(hard)),
    ]
    for title, gang, on, new in pool_cases:
        _, baseline = timed(lambda: filter_pass(gang, on), args.repeat)  # noqa: B023
        wall, cpu = timed(lambda: pack_with_new_nodes(gang, ClusterModel(on), new, ""), args.repeat)  # noqa: B023
        print(
            f"| {title} | {pool_verdict(gang, on, new)} | {baseline * 1000:.1f} ms | {cpu * 1000:.1f} ms | "
            f"{wall * 1000:.1f} ms | {cpu / baseline:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
