#!/usr/bin/env python3
"""gpulint beside kubeconform on the same corpora, in one run: CPU, wall time and peak memory.

kubeconform v0.7.0 is a Go tool pinned in benchmarks/kubeconform/go.mod; it is built once into
~/.cache/gpulint-bench/kubeconform-<key>/ (the key hashes go.mod, go.sum and the Go version). It reads
the same JSON schemas gpulint ships (schemas/v1.37 and schemas/crds), laid out in a temporary folder as
a kubeconform schema location, so nothing is fetched. The corpus is bench.py's, at each size.

    python benchmarks/kubeconform_bench.py [--documents 5000 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench import LIBYAML_LOAD, compare, generate

HERE = Path(__file__).resolve().parent
MODULE = HERE / "kubeconform"
SCHEMAS = HERE.parent / "schemas"
RELEASE = "v1.37"
PACKAGE = "github.com/yannh/kubeconform/cmd/kubeconform"
# kubeconform's template fields (pkg/registry/registry.go): Group is the apiVersion before its "/" (or
# the version itself for the core group), ResourceAPIVersion after it, ResourceKind the kind in lower case.
TEMPLATE = "{{ .Group }}/{{ .ResourceAPIVersion }}/{{ .ResourceKind }}.json"


def kubeconform(go: str) -> Path:
    version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=True, timeout=60)
    digest = hashlib.sha256(version.stdout.strip().encode())
    for name in ("go.mod", "go.sum"):
        digest.update((MODULE / name).read_bytes())
    cache = Path(os.path.expanduser("~")) / ".cache" / "gpulint-bench" / f"kubeconform-{digest.hexdigest()[:16]}"
    program = cache / "kubeconform"
    if not program.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f".kubeconform-{os.getpid()}"
        subprocess.run([go, "build", "-o", str(partial), PACKAGE], cwd=MODULE, check=True, timeout=1800)
        os.replace(partial, program)
    return program


def schema_location(target: Path) -> str:
    """gpulint's schemas as a kubeconform folder: one self-contained file per kind (a release's kinds share
    _definitions.json, which is merged into each)."""
    release = SCHEMAS / RELEASE
    shared = json.loads((release / "_definitions.json").read_text())["$defs"]
    for folder, defs in ((release, shared), (SCHEMAS / "crds", None)):
        for gvk, filename in json.loads((folder / "index.json").read_text()).items():
            *api_version, kind = gvk.split("/")
            group, version = (api_version[0], api_version[-1])
            schema = json.loads((folder / filename).read_text())
            if defs is not None:
                schema["$defs"] = {**defs, **schema.get("$defs", {})}
            path = target / group / version / f"{kind.lower()}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(schema))
    return str(target / TEMPLATE)


def summary(program: Path, location: str, corpus: Path) -> dict[str, int]:
    done = subprocess.run(
        [str(program), "-schema-location", location, "-summary", "-output", "json", str(corpus)],
        capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    return json.loads(done.stdout)["summary"]


def compiled(command: list[str]) -> None:
    """Run ``command`` once, untimed, letting Python write its bytecode: a gpulint installed by pip has its
    modules compiled, and a run that compiles them each time (PYTHONDONTWRITEBYTECODE, an editable install)
    spent about 0.35 s CPU more per process on this machine (a one-file check: 0.5 s against 0.85-0.9 s)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=1800)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--gpulint", default=shutil.which("gpulint") or os.path.join(os.path.dirname(sys.executable), "gpulint")
    )
    parser.add_argument(
        "--before",
        help="another gpulint (the code before a change) run interleaved with the same commands: its CPU and the ratio",
    )
    args = parser.parse_args()
    go = shutil.which("go")
    if go is None:
        print(
            "Go is not installed: kubeconform is built from the module proxy (benchmarks/kubeconform)", file=sys.stderr
        )
        return 1
    program = kubeconform(go)
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{started}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"medians of {args.repeat} interleaved runs; peak is the largest resident set of any run")
    print(
        "| documents (files) | kubeconform: valid / invalid / errors / skipped | libyaml load: CPU / peak "
        "| kubeconform `-n 1`: wall / CPU / peak | kubeconform `-n 2`: wall / CPU / peak "
        "| gpulint `--jobs 1`: wall / CPU / peak | gpulint `--jobs 2`: wall / CPU / peak "
        "| gpulint / kubeconform, 1 worker: CPU / peak |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="gpulint-kubeconform-") as tmp:
        location = schema_location(Path(tmp) / "schemas")
        for documents in args.documents:
            corpus = Path(tmp) / f"corpus-{documents}"
            files = max(1, documents // 10)
            generate(corpus, documents, files)
            counted = summary(program, location, corpus)
            kc = [str(program), "-schema-location", location, "-summary"]
            lint = [args.gpulint, "check", "--format", "json", "--output", os.devnull, "--exit-zero"]
            commands = {
                "load": [[sys.executable, "-c", LIBYAML_LOAD, str(corpus)]],
                "kc1": [[*kc, "-n", "1", str(corpus)]],
                "kc2": [[*kc, "-n", "2", str(corpus)]],
                "one": [[*lint, "--jobs", "1", str(corpus)]],
                "two": [[*lint, "--jobs", "2", str(corpus)]],
            }
            if args.before:
                for jobs in ("1", "2"):
                    commands[f"before{jobs}"] = [[args.before, *lint[1:], "--jobs", jobs, str(corpus)]]
            for name in ("one", *(f"before{jobs}" for jobs in ("1", "2") if args.before)):
                compiled(commands[name][0])
            results = compare(commands, args.repeat)
            shutil.rmtree(corpus)
            load, kc1, kc2, one, two = (results[k] for k in ("load", "kc1", "kc2", "one", "two"))
            cells = [f"{wall:.2f} s / {cpu:.2f} s / {peak:.0f} MiB" for cpu, wall, peak in (kc1, kc2, one, two)]
            print(
                f"| {documents:,} ({files:,}) | {counted['valid']:,} / {counted['invalid']:,} / {counted['errors']:,} / {counted['skipped']:,} "
                f"| {load[0]:.2f} s / {load[2]:.0f} MiB | {' | '.join(cells)} "
                f"| {one[0] / kc1[0]:.2f}x / {one[2] / kc1[2]:.2f}x |"
            )
            if args.before:
                for jobs, now, kc in (("1", one, kc1), ("2", two, kc2)):
                    cpu, wall, peak = results[f"before{jobs}"]
                    print(
                        f"|   before, `--jobs {jobs}`: {wall:.2f} s / {cpu:.2f} s / {peak:.0f} MiB, "
                        f"{cpu / kc[0]:.2f}x kubeconform `-n {jobs}`; now / before: CPU {now[0] / cpu:.2f}x, "
                        f"peak {now[2] / peak:.2f}x |"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
