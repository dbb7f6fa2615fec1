#!/usr/bin/env python3
"""Where a webhook review's CPU goes, in process: the reviews of benchmarks/webhook_load.py (GPU Pods
against a generated inventory of --nodes nodes) through the handler's own call (Webhook.review), then
each stage on its own: parsing the AdmissionReview, building the review's LintRun (linted set,
resolver, engine), the checks, and the rest of the decision. Each figure is the lowest CPU time per
review over many small batches, interleaved: on a shared machine the lowest is the one least inflated
by the other processes. The rules' own costs are listed with --rules. With --paced MS, `decide` also
runs one review at a time with MS milliseconds idle before each (as a server receives them), beside
the same reviews back to back: the median CPU per review of each (time.thread_time()), and the
same for a fixed workload that is not gpulint's, which says how much this machine itself inflates
work that runs once every few milliseconds.

With --sample N, `decide` runs N times over the reviews while a thread samples the main thread's stack every
0.3 ms: the share of samples each function is on the stack (inclusive), which cProfile's per-call cost distorts
for code of many small calls. Python checks for a thread switch at function entries and loop jumps, so a
function's own (self) share is biased to small functions' entries: read the inclusive shares.

    python benchmarks/webhook_review.py [--nodes 1000] [--batches 60] [--rules] [--paced 10] [--sample 4000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from webhook_load import inventory, review  # noqa: E402

BATCH = 20  # reviews per timed batch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--rules", action="store_true", help="also the CPU per review of each rule")
    parser.add_argument("--paced", type=float, default=0, help="also decide with MS ms idle before each review")
    parser.add_argument("--sample", type=int, default=0, help="also sample the stacks of N decides")
    args = parser.parse_args()
    from gpulint.lint.config import Config
    from gpulint.lint.engine import Deadline, Routes
    from gpulint.lint.run import LintRun
    from gpulint.webhook import server
    from gpulint.webhook.admission_review import decide, parse_review

    try:  # the review facade (#30 step 7): a snapshot per inventory, its deny_on and dry run its own
        from gpulint.lint.review import ReviewSnapshot  # noqa: F401
    except ImportError:  # before it: the server's options were passed to each decide
        real_decide = decide

        def decide(request, reviewer, deadline):  # type: ignore[no-redef]
            return real_decide(request, reviewer, webhook.options.deny_on, False, deadline)

    server.log = lambda *_args, **_fields: None  # the log line is the server's, not the review's
    with tempfile.TemporaryDirectory(prefix="gpulint-review-") as tmp:
        path = Path(tmp) / "inventory.json"
        inventory(path, args.nodes)
        config = Config(inventory=(str(path),))
        webhook = server.Webhook(config, server.ServeOptions())
    bodies = [review(index) for index in range(400)]
    reviewer = webhook.snapshot.reviewer
    requests = [parse_review(body) for body in bodies]

    cluster = webhook.snapshot.inventory
    routes = Routes.of(config)
    # the snapshot's verdicts by pod shape (lint/world/shapes.py), as its reviews read them; none before them
    shapes = getattr(reviewer, "_shapes", None)
    kept = () if shapes is None else (shapes,)

    def run_of(index: int) -> LintRun:
        return LintRun.for_object(config, requests[index]["object"], cluster, routes, *kept)

    def built(index: int) -> None:
        run_of(index).engine  # noqa: B018 (the property builds it)

    stages: dict[str, Callable[[int], object]] = {
        "Webhook.review (what the handler calls) + the answer's JSON": lambda i: json.dumps(
            webhook.review(bodies[i], time.monotonic() + 9).body  # type: ignore[union-attr]
        ),
        "decide (no thread, no parsing)": lambda i: decide(requests[i], reviewer, Deadline(time.monotonic() + 9)),
        "parse_review (JSON, depth, envelope)": lambda i: parse_review(bodies[i]),
        "LintRun, resolver and engine of one object": built,
        "the checks (LintRun.report)": lambda i: run_of(i).report(deadline=Deadline(time.monotonic() + 9)),
    }
    for index in range(len(bodies)):  # warm: every lazy import and per-inventory fact
        for stage in stages.values():
            stage(index)
    best = {name: float("inf") for name in stages}
    for batch in range(args.batches):
        for name, stage in stages.items():
            started = time.process_time()
            for offset in range(BATCH):
                stage((batch * BATCH + offset) % len(bodies))
            best[name] = min(best[name], (time.process_time() - started) / BATCH)
    print(
        f"CPU per review, in process, {args.nodes}-node inventory: lowest of {args.batches} batches of {BATCH}; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print("| stage | CPU per review |\n|---|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e6:.0f} µs |")
    if args.rules:
        _rules(run_of, len(bodies))
    if args.paced:
        _paced(stages["decide (no thread, no parsing)"], bodies, args.paced / 1000)
    if args.sample:
        _sampled(stages["decide (no thread, no parsing)"], args.sample, len(bodies))
    return 0


def _sampled(stage: Callable[[int], object], count: int, reviews: int, top: int = 40) -> None:
    """``count`` reviews while another thread samples the main thread's stack: each function's inclusive share."""
    main_thread = threading.main_thread().ident
    on_stack: Counter[str] = Counter()
    samples = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal samples
        while not done.wait(0.0003):
            frame = sys._current_frames().get(main_thread)  # noqa: SLF001 (the stdlib's sampling hook)
            seen = set()
            frame = frame.f_back if frame is not None else None  # the stage's own frame: below it, gpulint's
            while frame is not None and frame.f_code.co_filename != __file__:
                code = frame.f_code
                seen.add(f"{code.co_filename.rpartition('gpulint/')[2]}:{code.co_firstlineno}({code.co_name})")
                frame = frame.f_back
            on_stack.update(seen)
            samples += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # the sampler must get the GIL between the reviews' calls
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        for index in range(count):
            stage(index % reviews)
    finally:
        done.set()
        sampler.join()
        sys.setswitchinterval(interval)
    print(f"\n| function (on the stack in {samples} samples of {count} decides) | share |\n|---|---:|")
    for name, seen in on_stack.most_common(top):
        print(f"| {name} | {100 * seen / max(samples, 1):.1f}% |")


def _paced(stage: Callable[[int], object], bodies: list[bytes], idle: float) -> None:
    """The same reviews back to back and with ``idle`` seconds of sleep before each, alternating in
    rounds: the median thread CPU per review of each. Beside them, the machine's own factor: a fixed
    workload that is not gpulint's (decoding and encoding eight reviews' JSON) timed the same two ways."""

    def fixed(index: int) -> None:
        for body in bodies[index % 40 : index % 40 + 8]:
            json.dumps(json.loads(body))

    print(f"\n| one at a time, median thread CPU | back to back | {idle * 1000:g} ms idle before each | ratio |")
    print("|---|---:|---:|---:|")
    for name, work in (
        ("decide", stage),
        ("a fixed workload, not gpulint's (8 reviews' JSON decoded, encoded)", fixed),
    ):
        times: dict[float, list[float]] = {0.0: [], idle: []}
        for round_start in range(0, len(bodies), 50):
            for gap, sample in times.items():
                for index in range(round_start, min(len(bodies), round_start + 50)):
                    if gap:
                        time.sleep(gap)
                    started = time.thread_time()
                    work(index)
                    sample.append(time.thread_time() - started)
        warm, cold = (statistics.median(sample) * 1e6 for sample in times.values())
        print(f"| {name} | {warm:.0f} µs | {cold:.0f} µs | {cold / warm:.1f}x |")


def _rules(run_of: Callable[[int], object], count: int) -> None:
    """Each rule's check over the same objects, in the engine's order and context (its memo shared by the
    rules of one review, the pod templates found once), as Engine._check_objects runs them."""
    from gpulint.lint.engine import object_diagnostics, with_facts, with_runtime

    totals: dict[str, float] = {}
    for index in range(count):
        run = run_of(index)
        engine = run.engine  # type: ignore[attr-defined]
        obj = with_facts(with_runtime(run.files[0].objects[0], engine.context.resolver))  # type: ignore[attr-defined]
        for rule_id, rule, check in engine._routed(obj.kind):
            started = time.process_time()
            list(object_diagnostics(rule, check, obj, engine.context))
            totals[rule_id] = totals.get(rule_id, 0.0) + time.process_time() - started
    print("\n| rule | CPU per review |\n|---|---:|")
    for rule_id, seconds in sorted(totals.items(), key=lambda item: -item[1])[:15]:
        print(f"| {rule_id} | {seconds / count * 1e6:.0f} µs |")


if __name__ == "__main__":
    sys.exit(main())
