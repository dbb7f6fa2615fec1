#!/usr/bin/env python3
"""Coverage-guided fuzzing of the whole gpulint pipeline with atheris (libFuzzer for Python).

Each input's first byte picks a target, the rest is the payload:

  0 check      bytes -> loader -> objects -> every rule, against the example cluster inventory
               (plus the input's own DeviceClasses, claims and gang groups), then explain and
               every output format, each of which must parse and print nothing a terminal or CI
               runner acts on (report_is_safe)
  1 admission  bytes -> AdmissionReview -> the webhook's decide(); YAML that is not a review is
               wrapped in one, so mutations of manifests reach decide() too
  2 policy     bytes -> policy file -> load_policies -> each policy evaluated on the examples
  3 fix        bytes -> a file -> `gpulint check --fix` (run_check), twice: the result must
               re-parse and the second run must change nothing

A crash is an exception out of gpulint (or a check that failed internally: its traceback is
kept), a report that does not parse in its format, or a --fix that breaks the file. libFuzzer
also stops on a slow input (-timeout, seconds) or one that needs too much memory (-rss_limit_mb).

  python scripts/fuzz_atheris.py --max-time 60            # a minute, corpus seeded from examples/
  python scripts/fuzz_atheris.py --runs 5000 --corpus fuzz-corpus/   # keep what it learns
  python scripts/fuzz_atheris.py crash-1234abcd           # re-run one input (libFuzzer arguments pass through)
  python scripts/fuzz_atheris.py --max-time 3600 --keep-going found/ -rss_limit_mb=4096   # an hour

Long runs: the fuzzing process grows by some 30 KB per input under atheris (the harness alone, fed
the same kind of inputs without it, stays flat), so 100,000 inputs need -rss_limit_mb=4096; an
oom-* input that does not reproduce on its own is that growth, not the input.

Without atheris (atheris 3.0 has wheels for CPython 3.11-3.13 on Linux x86_64), the script says
so and exits 0, so CI stays green where it cannot be installed.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGETS = ("check", "admission", "policy", "fix", "http")
SEED_DIRS = ("examples", "tests/data", "rules/policies")
# Tokens libFuzzer splices into inputs: YAML syntax and the fields gpulint reads; HTTP framing.
DICTIONARY = (
    "\r\n",
    " :",
    "Transfer-Encoding: chunked",
    "Content-Length: ",
    "Host: ",
    "Expect: 100-continue",
    "---",
    "...",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!!int ",
    "!!binary ",
    "!!set ",
    "!custom ",
    "? ",
    "|-",
    ">+",
    "'",
    '"',
    "\\u0000",
    "\r\n",
    "\t",
    "# gpulint: disable=all",
    "{{ .Values.x }}",
    "apiVersion: ",
    "kind: ",
    "kind: List",
    "items:",
    "metadata:",
    "name: ",
    "namespace: ",
    "spec:",
    "template:",
    "containers:",
    "initContainers:",
    "resources:",
    "requests:",
    "limits:",
    "nvidia.com/gpu",
    "amd.com/gpu",
    "replicas: ",
    "parallelism: ",
    "minAvailable: ",
    "minMember: ",
    "tasks:",
    "pytorchReplicaSpecs:",
    "nodeSelector:",
    "affinity:",
    "tolerations:",
    "taints:",
    "topologyKey: ",
    "resourceClaims:",
    "resourceClaimTemplateName: ",
    "deviceClassName: ",
    "count: ",
    "selectors:",
    "cel:",
    "expression: ",
    "device.attributes",
    "device.capacity",
    "quantity(",
    "semver(",
    ".compareTo(",
    "matchAttribute: ",
    "firstAvailable:",
    "allocationMode: All",
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaimTemplate",
    "PodGroup",
    "scheduling.x-k8s.io/pod-group",
    "kueue.x-k8s.io/podset-required-topology",
    "gpulint.io/ignore",
    "validations:",
    "variables:",
    "messageExpression: ",
    "fieldPath: ",
    "policyName: ",
    "paramRef:",
    '"operation": "CREATE"',
    '"object": ',
    '"uid": ',
    "1e999",
    "-1",
    "9223372036854775808",
    "0.5",
    "500m",
    "1Ki",
)

try:
    import atheris
except ImportError:  # pragma: no cover - depends on the platform
    atheris = None


# Bugs found and reported whose owners have not fixed them yet (tests/hostile/test_fuzz.py has an xfail
# test for each): an input that hits one is not a new crash. Remove an entry when its test passes.
KNOWN_BUGS: tuple[tuple[str, str], ...] = ()  # (what, traceback pattern) of open, reported bugs: none now


class CheckCrashed(BaseException):
    """A rule's check raised. A BaseException, so the engine's `except Exception` (which turns
    a crash into an "internal error" finding) lets it through with its traceback."""


class Harness:
    """The pipeline, set up once; ``run`` feeds it one input."""

    def __init__(self, workdir: str) -> None:
        from gpulint.lint.config import Config
        from gpulint.lint.engine import enabled_rules
        from gpulint.lint.findings import Severity
        from gpulint.lint.inputs.loader import load_bytes
        from gpulint.lint.inputs.objects import objects_in
        from gpulint.lint.inputs.sources import Source
        from gpulint.lint.review import ReviewSnapshot
        from gpulint.lint.run import LintRun
        from gpulint.lint.world.inventory import load_inventory
        from gpulint.webhook.admission_review import BadReview, decide, parse_review

        self.workdir = workdir
        self.keep_going = os.environ.get("GPULINT_FUZZ_KEEP_GOING", "")  # a directory: record crashes, go on
        self.config = Config()
        inventory = load_inventory([str(REPO / "examples" / "inventory"), str(REPO / "tests" / "data" / "dra")])
        self.inventory = inventory
        self.reviewers = [
            ReviewSnapshot.build(self.config, inventory, deny_on) for deny_on in (Severity.ERROR, Severity.INFO)
        ]
        self.decide, self.parse_review, self.bad_review = decide, parse_review, BadReview
        self.load_bytes, self.objects_in, self.source = load_bytes, objects_in, Source
        self.lint_run = LintRun
        self.rules = {rule_id: _raising(rule) for rule_id, rule in enabled_rules(self.config).items()}
        examples = sorted((REPO / "examples" / "manifests").glob("*.yaml"))
        self.example_objects = [
            obj
            for path in examples
            for document in load_bytes(str(path), path.read_bytes()).documents
            for obj in objects_in(document)
        ]

    def run(self, data: bytes) -> None:
        if not data:
            return
        target, payload = TARGETS[data[0] % len(TARGETS)], data[1:]
        try:
            getattr(self, f"_{target}")(payload)
        except (Exception, CheckCrashed) as exc:
            if _known(exc):
                return
            if not self.keep_going:
                raise
            _keep(self.keep_going, target, data, exc)  # long runs: written down, and on to the next input
        finally:
            # A run freezes what it parsed (gc.freeze), right for one invocation; this process makes
            # thousands, and frozen garbage with cycles would never be freed.
            gc.unfreeze()

    # ------------------------------------------------------------------ targets

    def _check(self, payload: bytes) -> None:
        from gpulint.cli.explain import explain_objects, render, render_json
        from gpulint.report import FORMATS, FormatOptions, encode, get_formatter

        source = self.source("fuzz.yaml", content=payload)
        run = self.lint_run(self.config, [source], self.inventory, rules=self.rules)
        report = run.report()
        for name in FORMATS:
            rendered = get_formatter(name)(report, self.rules, FormatOptions())
            report_is_safe(name, encode(rendered, name))
            if name in ("json", "sarif", "gitlab"):
                json.loads(rendered)
            elif name == "junit":
                ET.fromstring(rendered.encode())
        explanations = explain_objects(run.objects(), run.resolver, report.findings)
        render(explanations)
        json.loads(render_json(explanations))

    def _admission(self, payload: bytes) -> None:
        try:
            request = self.parse_review(payload)
        except self.bad_review:
            request = self._wrapped(payload)
            if request is None:
                return
        for reviewer in self.reviewers:
            decision = self.decide(request, reviewer)
            json.dumps(decision.response())
            internal = [f.message for f in decision.findings if "internal error" in f.message]
            assert not internal, internal

    def _wrapped(self, payload: bytes) -> dict[str, Any] | None:
        """A manifest as the API server would send it: the object of a CREATE review, in JSON."""
        for document in self.load_bytes("fuzz.yaml", payload).documents:
            if isinstance(document.data, dict):
                try:
                    obj = json.loads(json.dumps(document.data, default=str))
                except (ValueError, RecursionError):
                    return None  # not JSON-representable: the API server would never send it
                return {"uid": "fuzz", "operation": "CREATE", "namespace": "ml", "object": obj}
        return None

    def _http(self, payload: bytes) -> None:
        """A request's header block as the webhook reads it: the stdlib's reader raises only its own bounds,
        and a block the strict RFC 9112 checks accept is read whole - no line taken for the end of the
        headers or the body (the lenient reader's desync with a proxy in front)."""
        import io
        from http.client import HTTPException, parse_headers

        from gpulint.webhook.headers import field_problem

        max_line, max_headers = 65536, 100  # http.client's bounds on a header line and on their count
        reader = io.BytesIO(payload)
        lines: list[bytes] = []
        while len(lines) <= max_headers:
            line = reader.readline(max_line + 1)
            lines.append(line)
            if line in (b"\r\n", b"\n", b"") or len(line) > max_line:
                break
        problem = field_problem(lines)
        assert problem is None or isinstance(problem, str)
        try:
            message = parse_headers(io.BytesIO(payload))
        except HTTPException:
            return  # over the stdlib's bounds: 431
        fields = [line for line in lines if line not in (b"\r\n", b"\n", b"")]
        if problem is None and all(line.endswith(b"\n") for line in fields):
            assert len(message) == len(fields), (len(message), fields[:5])
            for (name, _), line in zip(message.items(), fields):
                assert line.startswith(name.encode("latin-1") + b":"), (name, line[:80])

    def _policy(self, payload: bytes) -> None:
        from gpulint.lint.policies import PolicyError, evaluate, load_policies, policy_engine

        path = os.path.join(self.workdir, "policy.yaml")
        with open(path, "wb") as handle:
            handle.write(payload)
        try:
            policies = load_policies((path,))
        except PolicyError as error:
            assert str(error)
            return
        context = self.lint_run(self.config, (), self.inventory).engine.context
        for policy in policies:
            for obj in self.example_objects:
                list(evaluate(policy, obj, context, policy_engine()))

    def _fix(self, payload: bytes) -> None:
        from gpulint.cli.check import run_check

        path = os.path.join(self.workdir, "manifest.yaml")
        with open(path, "wb") as handle:
            handle.write(payload)
        run_check([path], self.config, "json", fix=True)
        fixed = Path(path).read_bytes()
        if fixed != payload:
            loaded = self.load_bytes(path, fixed)
            assert not loaded.problems, f"--fix wrote a file that does not parse: {loaded.problems[0]}"
        run_check([path], self.config, "json", fix=True)
        assert Path(path).read_bytes() == fixed, "a second --fix changed the file again"


# What no report may print of the text it did not write: control characters (ESC, BEL, CR: terminal
# escapes, OSC 52, a new line), C1 controls and their bytes, separators, bidirectional overrides.
_UNSAFE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\udc80-\udc9f]"
)
# A line a CI runner takes as a command (GitHub `::x::`, `##[x]`, Azure `##vso[`), and the ones gpulint writes
_COMMAND = re.compile(r"\s*(::|##)")
_OWN_COMMANDS = {
    "github": re.compile(r"::(error|warning|notice) file=[^,:\n]*,line=\d+,col=\d+,title=[^,:\n]*::"),
    "markdown": re.compile(r"## gpulint$|### (`|$)"),
}


def report_is_safe(name: str, output: bytes) -> None:
    """AssertionError when a report in format ``name`` holds a character a terminal or a CI log acts on,
    or a line a CI runner would read as a command that gpulint did not write."""
    text = output.decode("utf-8", "surrogateescape")
    unsafe = _UNSAFE.search(text)
    assert unsafe is None, f"{name}: {unsafe.group()!r} printed raw at {unsafe.start()}"
    own = _OWN_COMMANDS.get(name)
    for line in text.split("\n"):
        if _COMMAND.match(line):
            assert own is not None and own.match(line), f"{name}: a line a CI runner reads as a command: {line!r}"


def _known(exc: BaseException) -> bool:
    import re
    import traceback

    text = "".join(traceback.format_exception(exc))
    return any(re.search(pattern, text) for _, pattern in KNOWN_BUGS)


def _keep(directory: str, target: str, data: bytes, exc: BaseException) -> None:
    """One file per distinct failure (its innermost gpulint frame and type), the shortest input kept."""
    import hashlib
    import traceback

    cause = exc.__cause__ or exc
    where = _innermost_site(cause) or _innermost_site(exc)
    signature = f"{target} {where} {type(cause).__name__}"
    stem = Path(directory) / ("crash-" + hashlib.sha1(signature.encode()).hexdigest()[:12])
    if stem.exists() and stem.stat().st_size <= len(data):
        return
    stem.write_bytes(data)
    stem.with_suffix(".txt").write_text(signature + "\n\n" + "".join(traceback.format_exception(exc))[-8000:])


def _innermost_site(exc: BaseException) -> str:
    """The innermost frame of ``exc`` in the gpulint package, as "lint/engine.py:check" ("" when none).

    Frames are told by the package's own folder, not by "/gpulint/" in the path: a clone is named
    gpulint by default, and then every file of the checkout (tests, scripts) would look like one."""
    import traceback

    import gpulint

    package = os.path.join(os.path.dirname(os.path.abspath(gpulint.__file__)), "")
    inside = [
        (path, frame.name)
        for frame in traceback.extract_tb(exc.__traceback__)
        if (path := os.path.abspath(frame.filename)).startswith(package)
    ]
    return f"{inside[-1][0][len(package) :]}:{inside[-1][1]}" if inside else ""


def _raising(rule: Any) -> Any:
    if rule.check is None:
        return rule
    check = rule.check

    def run(obj: Any, *rest: Any) -> list[Any]:  # (ctx), or (site, ctx) for a pod-template check
        try:
            return list(check(obj, *rest))
        except Exception as exc:
            raise CheckCrashed(f"the {rule.id} check raised {type(exc).__name__}: {exc}") from exc

    return dataclasses.replace(rule, check=run)


# ---------------------------------------------------------------------- corpus and command line


def seed_corpus(directory: Path) -> None:
    """One input per target and example file: manifests, inventories, policies, reviews."""
    directory.mkdir(parents=True, exist_ok=True)
    files = sorted(p for root in SEED_DIRS for p in (REPO / root).rglob("*.yaml"))
    for path in files:
        raw = path.read_bytes()
        for target in range(len(TARGETS)):
            (directory / f"seed-{path.parent.name}-{path.stem}-{TARGETS[target]}").write_bytes(bytes([target]) + raw)
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "seed",
            "operation": "CREATE",
            "namespace": "ml",
            "object": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": 1}}}]},
            },
        },
    }
    (directory / "seed-review").write_bytes(b"\x01" + json.dumps(review).encode())
    head = (  # the headers of a review as kube-apiserver sends it
        b"Host: gpulint-webhook.gpulint-system.svc:443\r\nUser-Agent: kube-apiserver-admission\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, */*\r\nAccept-Encoding: gzip\r\n"
        b"Content-Length: 512\r\n\r\n"
    )
    (directory / "seed-http").write_bytes(bytes([TARGETS.index("http")]) + head)


def write_dictionary(path: Path) -> None:
    """libFuzzer's format: one quoted token a line, escaped as \\xNN where not printable ASCII."""

    def quoted(token: str) -> str:
        return "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else f"\\x{ord(ch):02x}" for ch in token)

    path.write_text("".join(f'"{quoted(token)}"\n' for token in DICTIONARY), encoding="ascii")


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="Other arguments go to libFuzzer (e.g. -timeout=10, a crash file)."
    )
    parser.add_argument("--runs", type=int, help="stop after N inputs")
    parser.add_argument("--max-time", type=int, help="stop after S seconds")
    parser.add_argument("--corpus", type=Path, help="corpus directory, kept between runs (default: a temporary one)")
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=Path("fuzz-artifacts"),
        help="where crashing inputs are copied (default: fuzz-artifacts/, created on a crash)",
    )
    parser.add_argument("--seed", type=int, help="libFuzzer's random seed (fixed: reproducible runs)")
    parser.add_argument(
        "--keep-going",
        type=Path,
        metavar="DIR",
        help="long runs: write each distinct failure to DIR (crash-ID and crash-ID.txt) and go on",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # the fuzzing process itself
    return parser.parse_known_args(argv)


def fuzz(libfuzzer: list[str]) -> None:
    """The fuzzing process: libFuzzer ends it (exit 0 when done, non-zero on a crash)."""
    import importlib
    import pkgutil

    with atheris.instrument_imports(include=["gpulint"]):  # coverage feedback from gpulint's code only
        import gpulint

        for module in pkgutil.walk_packages(gpulint.__path__, "gpulint."):
            if module.name == "gpulint.__main__":  # runs the CLI when imported
                continue
            try:
                importlib.import_module(module.name)
            except ImportError:  # an optional dependency (the live inventory's kubernetes client)
                pass
    harness = Harness(tempfile.mkdtemp(prefix="work-", dir=os.environ["GPULINT_FUZZ_WORKDIR"]))
    atheris.Setup(libfuzzer, harness.run)
    atheris.Fuzz()


def main(argv: list[str]) -> int:
    args, passthrough = parse_args(argv[1:])
    if atheris is None:
        print("fuzz_atheris: atheris is not installed (pip install atheris); skipping", file=sys.stderr)
        return 0
    if args.child:
        fuzz([argv[0], *passthrough])
        return 0
    # libFuzzer exits the process without Python's cleanup, so it runs in a child process and
    # this one keeps the temporary files tidy and reports the crashing inputs.
    with tempfile.TemporaryDirectory(prefix="gpulint-atheris-") as workdir:
        reproducing = any(not a.startswith("-") for a in passthrough)  # crash files named: run just those
        corpus = args.corpus or Path(workdir) / "corpus"
        if not reproducing and (not corpus.is_dir() or not any(corpus.iterdir())):
            seed_corpus(corpus)
        crashes = Path(workdir) / "crashes"
        crashes.mkdir()
        dictionary = Path(workdir) / "gpulint.dict"
        write_dictionary(dictionary)
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            f"-artifact_prefix={crashes}/",
            f"-dict={dictionary}",
            "-timeout=10",
            "-rss_limit_mb=2048",
            "-max_len=65536",
            *passthrough,
        ]
        if args.runs is not None:
            command.append(f"-runs={args.runs}")
        if args.max_time is not None:
            command.append(f"-max_total_time={args.max_time}")
        environment = {**os.environ, "GPULINT_FUZZ_WORKDIR": workdir}
        if args.keep_going:
            args.keep_going.mkdir(parents=True, exist_ok=True)
            environment["GPULINT_FUZZ_KEEP_GOING"] = str(args.keep_going.resolve())
        if args.seed is not None:  # the same inputs in the same order: set iteration order fixed too
            command.append(f"-seed={args.seed}")
            environment["PYTHONHASHSEED"] = "0"
        if not reproducing:
            command.append(str(corpus))
        status = subprocess.run(command, env=environment, check=False).returncode
        found = sorted(crashes.iterdir())
        if found:
            args.artifacts.mkdir(parents=True, exist_ok=True)
            for path in found:
                shutil.copy(path, args.artifacts / path.name)
                print(
                    f"fuzz_atheris: crashing input: {args.artifacts / path.name} "
                    f"(re-run: python {Path(argv[0]).name} {args.artifacts / path.name})",
                    file=sys.stderr,
                )
        return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
