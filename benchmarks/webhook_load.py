#!/usr/bin/env python3
"""Load test of `gpulint serve` on loopback: GPU Pod AdmissionReviews at a fixed rate.

Starts the webhook (TLS certificates from trustme, a generated inventory of --nodes nodes),
sends --rate requests/s for --seconds over keep-alive HTTPS connections, and reports the
achieved rate, the p50/p99 latency seen by the clients and by the server (its log's `ms`, from a
request's first byte to its answer sent), and the server's CPU time per review. The baseline, in
the same run and at the same rate over the same connections: `GET /healthz`, which costs the
same TLS, HTTP and logging but no review; the ratios say what a review adds. The first
--warmup reviews (200) go first and are reported apart: they set up the server's per-inventory
caches, which a p99 over the measured reviews should not count. Bounded in count and time;
loopback only.

    python benchmarks/webhook_load.py [--rate 200] [--seconds 10] [--nodes 1000] [--warmup 200] [--rounds 1]
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import trustme


def inventory(path: Path, nodes: int) -> None:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"node-{i}",
                "labels": {
                    "kubernetes.io/hostname": f"node-{i}",
                    "topology.kubernetes.io/zone": f"zone-{i % 3}",
                    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                },
            },
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "192", "memory": "2Ti", "pods": "110", "nvidia.com/gpu": "8"}},
        }
        for i in range(nodes)
    ]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def review(index: int) -> bytes:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"trainer-{index}", "namespace": "ml"},
        "spec": {
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/trainer:1.0",
                    "resources": {"limits": {"nvidia.com/gpu": 1 + index % 8, "memory": "64Gi"}},
                }
            ],
        },
    }
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": f"uid-{index}", "operation": "CREATE", "namespace": "ml", "object": pod},
        }
    ).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument(
        "--warmup",
        type=int,
        default=200,
        help="reviews sent first and reported apart (the first reviews set up caches)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="baseline and review phases alternated this many times: medians and ranges over the rounds",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpulint-load-") as tmp:
        root = Path(tmp)
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        cert.private_key_pem.write_to_path(str(root / "tls.key"))
        cert.cert_chain_pems[0].write_to_path(str(root / "tls.crt"))
        inventory(root / "inventory.json", args.nodes)
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpulint",
                "serve",
                "--tls-cert",
                str(root / "tls.crt"),
                "--tls-key",
                str(root / "tls.key"),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--inventory",
                str(root / "inventory.json"),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        while port is None:
            event = json.loads(server.stderr.readline())
            port = event.get("port") if event["event"] == "serving" else None
        server_ms: list[float] = []
        threading.Thread(target=_server_log, args=(server, server_ms), daemon=True).start()
        context = ssl.create_default_context()
        ca.configure_trust(context)
        total = int(args.rate * args.seconds)
        load = os.getloadavg()[0]
        warmup = _phase(server.pid, port, context, args, args.warmup, healthz=False) if args.warmup else None
        warmup_ms = sorted(server_ms)
        rounds: list[tuple[_Phase, _Phase, list[float]]] = []
        for _ in range(args.rounds):
            baseline = _phase(server.pid, port, context, args, total, healthz=True)
            server_ms.clear()
            reviews = _phase(server.pid, port, context, args, total, healthz=False)
            time.sleep(0.5)  # the last log lines
            rounds.append((baseline, reviews, sorted(server_ms)))
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print(
        f"{total} GPU Pod reviews at a target of {args.rate:.0f}/s against a {args.nodes}-node inventory, "
        f"{args.connections} keep-alive connections; {os.cpu_count()} CPUs, load average {load:.1f} at the start"
        + (f"; {args.rounds} rounds: median [lowest-highest]" if args.rounds > 1 else "")
    )
    print("| measurement | reviews | `GET /healthz` (baseline) | ratio |\n|---|---:|---:|---:|")
    figures: dict[str, list[tuple[float, float]]] = {}
    for baseline, reviews, served in rounds:
        figures.setdefault("achieved rate (requests/s)", []).append((reviews.rate, baseline.rate))
        for name, key in (("client p50 (ms)", 0.5), ("client p99 (ms)", 0.99)):
            figures.setdefault(name, []).append((reviews.percentile(key), baseline.percentile(key)))
        figures.setdefault("server p50 (ms)", []).append((_percentile(served, 0.5), math.nan))
        figures.setdefault("server p99 (ms)", []).append((_percentile(served, 0.99), math.nan))
        figures.setdefault("server CPU per request (ms)", []).append((reviews.cpu_ms, baseline.cpu_ms))
        figures.setdefault("a review's own CPU (the difference, ms)", []).append(
            (reviews.cpu_ms - baseline.cpu_ms, math.nan)
        )
    for name, pairs in figures.items():
        ours, base = _spread([p[0] for p in pairs]), _spread([p[1] for p in pairs])
        ratio = statistics.median(p[0] / p[1] for p in pairs) if not math.isnan(pairs[0][1]) else math.nan
        print(f"| {name} | {ours} | {base if base else ''} | {f'{ratio:.1f}x' if not math.isnan(ratio) else ''} |")
    review_errors, baseline_errors = sum(r.errors for _, r, _ in rounds), sum(b.errors for b, _, _ in rounds)
    print(f"| errors | {review_errors} | {baseline_errors} | |")
    if warmup is not None:
        print(
            f"| the first {args.warmup} reviews, sent before these (warm-up): server p99 / CPU per review | "
            f"{_percentile(warmup_ms, 0.99):.1f} ms / {warmup.cpu_ms:.2f} ms | | |"
        )
    return 0 if review_errors == baseline_errors == 0 and (warmup is None or warmup.errors == 0) else 1


def _spread(values: list[float]) -> str:
    """One figure, or the median of several with their range."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return ""
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


class _Phase:
    def __init__(self, latencies: list[float], elapsed: float, errors: int, cpu_seconds: float) -> None:
        self.latencies = sorted(latencies)
        self.rate = len(latencies) / elapsed
        self.errors = errors
        self.cpu_ms = cpu_seconds * 1000 / max(1, len(latencies))

    def percentile(self, share: float) -> float:
        return _percentile(self.latencies, share) * 1000


def _percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def _server_log(server: subprocess.Popen, server_ms: list[float]) -> None:
    for line in server.stderr:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "review" and "ms" in event:
            server_ms.append(event["ms"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _phase(pid: int, port: int, context: ssl.SSLContext, args: argparse.Namespace, total: int, healthz: bool) -> _Phase:
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    cpu_before = _cpu_seconds(pid)
    start = time.perf_counter() + 0.5

    def worker(offset: int) -> None:
        nonlocal errors
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        for index in range(offset, total, args.connections):
            due = start + index / args.rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent = time.perf_counter()
            try:
                if healthz:
                    connection.request("GET", "/healthz")
                    response = connection.getresponse()
                    ok = response.status == 200 and bool(response.read())
                else:
                    connection.request(
                        "POST",
                        "/validate?timeout=10s",
                        body=review(index),  # as kube-apiserver
                        headers={"Content-Type": "application/json", "Accept": "application/json"},
                    )
                    response = connection.getresponse()
                    answer = json.loads(response.read())
                    ok = response.status == 200 and answer["response"]["uid"] == f"uid-{index}"
            except (OSError, http.client.HTTPException, ValueError):
                ok = False
                connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
            with lock:
                latencies.append(time.perf_counter() - sent)
                errors += not ok

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    return _Phase(latencies, elapsed, errors, _cpu_seconds(pid) - cpu_before)


if __name__ == "__main__":
    sys.exit(main())
