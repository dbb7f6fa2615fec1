#!/usr/bin/env python3
"""Load test of `gpulint serve` on loopback: GPU Pod AdmissionReviews at a fixed rate.

Starts the webhook (TLS certificates from trustme, a generated inventory of --nodes nodes),
sends --rate requests/s for --seconds over keep-alive HTTPS connections, and reports the
achieved rate and the p50/p99 latency. Bounded in count and time; loopback only.

    python benchmarks/webhook_load.py [--rate 200] [--seconds 10] [--nodes 1000]
"""

from __future__ import annotations

import argparse
import http.client
import json
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
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        context = ssl.create_default_context()
        ca.configure_trust(context)
        total = int(args.rate * args.seconds)
        latencies: list[float] = []
        errors = 0
        lock = threading.Lock()
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
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    print(
        f"{len(ordered)} GPU Pod reviews at a target of {args.rate:.0f}/s against a {args.nodes}-node inventory, "
        f"{args.connections} keep-alive connections"
    )
    print("| measurement | result |\n|---|---:|")
    print(f"| achieved rate | {len(ordered) / elapsed:.0f} requests/s |")
    print(f"| p50 latency | {p50:.1f} ms |")
    print(f"| p99 latency | {p99:.1f} ms |")
    print(f"| errors | {errors} |")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
