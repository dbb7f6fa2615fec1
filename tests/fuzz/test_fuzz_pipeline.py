"""The whole pipeline under generated and mutated input (issue #11, "tests that keep it so").

Realistic GPU manifests, inventories, policies and AdmissionReviews (tests/fuzz/fuzz_strategies.py),
mutated and written as odd YAML, go through the real entry points: `gpulint check` (every output
format, with and without an inventory and policies, --fix on a temporary copy), `gpulint explain`,
`gpulint inventory`, `gpulint rules --policy`, and the webhook's review path (in process, and a few
through a real HTTPS server on loopback).

Properties: exit code 0, 1 or 2, never 3; no traceback; no "internal error" finding; a usage error
says what is wrong; every output format is well formed; bounded time and memory per example;
--fix output re-parses to the intended data, and a second --fix changes nothing.

CI runs a modest number of examples; GPULINT_FUZZ_EXAMPLES=2000 runs longer locally, and
GPULINT_FUZZ_COLLECT=DIR writes each distinct failure to DIR (smallest input kept) and keeps going.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzz_strategies as fs
import pytest
from click.testing import CliRunner
from conftest import DATA, REPO
from fuzz_support import bounded, collecting, skip_known
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpulint.cli.main import cli
from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.review import MAX_WARNING_LENGTH, MAX_WARNINGS, ReviewSnapshot
from gpulint.webhook.admission_review import BadReview, decide, parse_review
from gpulint.webhook.server import ServeOptions, Webhook

EXAMPLES = int(os.environ.get("GPULINT_FUZZ_EXAMPLES") or 0)
FORMATS = ("text", "json", "sarif", "github", "junit")
EXAMPLE_INVENTORIES = (str(REPO / "examples" / "inventory"), str(DATA / "dra"), str(DATA / "racks"))


def fuzz(ci_examples: int) -> settings:
    return settings(
        max_examples=EXAMPLES or ci_examples,
        deadline=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )


# --------------------------------------------------------------------------- the CLI, in process


@dataclass
class Outcome:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    error: str  # the traceback of an exception that escaped the command (`gpulint` would exit 3)
    stdout_bytes: bytes = b""  # as written (click's .stdout turns CRLF into LF)

    def describe(self) -> str:
        return (
            f"gpulint {' '.join(self.args)} -> exit {self.code}\n{self.error}"
            f"--- stderr ---\n{self.stderr[-3000:]}\n--- stdout ---\n{self.stdout[-3000:]}"
        )


def gpulint(*args: str, stdin: bytes | None = None) -> Outcome:
    """The click command as `gpulint` runs it; an escaping exception is what main() turns into exit 3."""
    result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=True)
    error = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        error = "".join(traceback.format_exception(*result.exc_info))
    return Outcome(
        tuple(args), 3 if error else result.exit_code, result.stdout, result.stderr, error, result.stdout_bytes
    )


def assert_clean(outcome: Outcome) -> None:
    output = outcome.stdout + outcome.stderr
    if outcome.code == 3 or "internal error" in output:
        skip_known(outcome.error + output)
    assert outcome.code in (0, 1, 2), outcome.describe()
    assert "Traceback" not in output, outcome.describe()
    assert "internal error" not in output, outcome.describe()
    if outcome.code == 2:
        assert outcome.stderr.strip(), f"a usage error without a message\n{outcome.describe()}"


def assert_well_formed(output_format: str, outcome: Outcome, fail_on: Severity) -> None:
    """The report parses in its format, and the exit code agrees with its findings."""
    if outcome.code == 2:
        return
    text = outcome.stdout
    if output_format == "json":
        document = json.loads(text)
        for finding in document["findings"]:
            assert finding["line"] >= 1 and finding["column"] >= 1, finding
        failing = [f for f in document["findings"] if Severity.parse(f["severity"]) >= fail_on]
        assert outcome.code == (1 if failing else 0), outcome.describe()
    elif output_format == "sarif":
        assert json.loads(text)["version"] == "2.1.0"
    elif output_format == "junit":
        ET.fromstring(text.encode())
    elif output_format == "github":
        lines = text.rstrip("\n").split("\n")
        assert all(line.startswith("::") for line in lines[:-1]), outcome.describe()
    else:
        assert text.rstrip("\n").rsplit("\n", 1)[-1].startswith(("Found ", "No problems")), outcome.describe()


@dataclass
class Workspace:
    """Generated files in a fresh directory, which is also the working directory (no stray config)."""

    root: Path

    def write(self, name: str, raw: bytes) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        return str(path)


@contextlib.contextmanager
def workspace() -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="gpulint-fuzz-") as directory, contextlib.chdir(directory):
        yield Workspace(Path(directory))


# --------------------------------------------------------------------------- inputs

MANIFEST_FILES = st.lists(fs.file_bytes(fs.MANIFEST_OBJECTS), min_size=1, max_size=2)
# Generated inventories, written plainly (their objects mutated) or oddly; or the repository's own.
GENERATED_INVENTORY = st.one_of(
    fs.INVENTORY_OBJECTS.map(
        lambda objects: fs.dump_yaml(objects[0], False) + "".join("---\n" + fs.dump_yaml(o, False) for o in objects[1:])
    ).map(str.encode),
    fs.INVENTORY_OBJECTS.map(
        lambda objects: fs.dump_json({"apiVersion": "v1", "kind": "List", "items": objects}, None).encode()
    ),
    fs.file_bytes(fs.INVENTORY_OBJECTS),
)
INVENTORY = st.one_of(st.none(), st.sampled_from(EXAMPLE_INVENTORIES), GENERATED_INVENTORY)
POLICY = st.one_of(
    st.none(),
    st.none(),
    st.sampled_from(("gpulint:all", "gpulint:require-gpu-memory-limit")),
    fs.file_bytes(fs.POLICY_OBJECTS),
    fs.POLICY_OBJECTS.map(lambda objects: "---\n".join(fs.dump_yaml(o, False) for o in objects)).map(str.encode),
)


def _place(space: Workspace, name: str, value: str | bytes | None) -> list[str]:
    """A path for an inventory or policy that is generated bytes, a repository path, or none."""
    if value is None:
        return []
    return [space.write(name, value)] if isinstance(value, bytes) else [value]


# --------------------------------------------------------------------------- properties: check


@pytest.mark.slow
@fuzz(50)
@given(
    files=MANIFEST_FILES,
    inventory=INVENTORY,
    policy=POLICY,
    output_format=st.sampled_from(FORMATS),
    fail_on=st.sampled_from(("error", "warning", "info")),
    version=st.sampled_from(("1.30", "1.33", "1.34", "1.35", "1.36", "1.37")),
    stdin=st.booleans(),
    config=st.one_of(st.none(), st.none(), fs.CONFIG_FILES),
    walk=st.one_of(st.none(), st.none(), fs.GITIGNORE),
)
@collecting
def test_check(
    files: list[bytes],
    inventory: Any,
    policy: Any,
    output_format: str,
    fail_on: str,
    version: str,
    stdin: bool,
    config: tuple[str, bytes] | None,
    walk: bytes | None,
) -> None:
    with workspace() as space, bounded("gpulint check"):
        if config is not None:  # found by walking up from the working directory
            space.write(*config)
        named = [space.write(f"m{i}.yaml", raw) for i, raw in enumerate(files)][stdin:]
        if walk is not None:  # the directory is walked, with this .gitignore
            space.write(".gitignore", walk)
            named = ["."]
        args = [*named, "--format", output_format, "--fail-on", fail_on, "--kubernetes-version", version]
        args += [a for path in _place(space, "inventory/cluster.yaml", inventory) for a in ("--inventory", path)]
        args += [a for path in _place(space, "policies/policy.yaml", policy) for a in ("--policy", path)]
        if stdin:
            args.append("-")
        outcome = gpulint("check", *args, stdin=files[0] if stdin else None)
        assert_clean(outcome)
        assert_well_formed(output_format, outcome, Severity.parse(fail_on))


@pytest.mark.slow
@fuzz(20)
@given(
    files=MANIFEST_FILES,
    inventory=st.sampled_from(EXAMPLE_INVENTORIES) | GENERATED_INVENTORY,
    output_format=st.sampled_from(("text", "json")),
    selector=st.sampled_from((None, "Pod/pod", "Job/ml/job", "Deployment/x/y/z", "", "/")),
)
@collecting
def test_explain(files: list[bytes], inventory: Any, output_format: str, selector: str | None) -> None:
    with workspace() as space, bounded("gpulint explain"):
        paths = [space.write(f"m{i}.yaml", raw) for i, raw in enumerate(files)]
        args = ["explain", *paths, "--format", output_format, "--inventory", *_place(space, "inv.yaml", inventory)]
        if selector is not None:
            args += ["--object", selector]
        outcome = gpulint(*args)
        assert_clean(outcome)
        if outcome.code == 0 and output_format == "json":
            json.loads(outcome.stdout)


@pytest.mark.slow
@fuzz(20)
@given(inventory=GENERATED_INVENTORY, output_format=st.sampled_from(("text", "json")))
@collecting
def test_inventory(inventory: bytes, output_format: str) -> None:
    with workspace() as space, bounded("gpulint inventory"):
        outcome = gpulint("inventory", "--inventory", space.write("inv.yaml", inventory), "--format", output_format)
        assert_clean(outcome)
        if outcome.code != 2 and output_format == "json":
            json.loads(outcome.stdout)


@fuzz(20)
@given(policy=fs.file_bytes(fs.POLICY_OBJECTS), command=st.sampled_from(("rules", "rule")))
@collecting
def test_policy_rules(policy: bytes, command: str) -> None:
    with workspace() as space, bounded("gpulint rules --policy"):
        path = space.write("policy.yaml", policy)
        args = ["rules", "--format", "json"] if command == "rules" else ["rule", "team-rule"]
        assert_clean(gpulint(*args, "--policy", path))


# --------------------------------------------------------------------------- properties: --fix

MISSING = object()


def _differences(old: Any, new: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any, Any]]:
    """(path, old, new) where two documents differ; MISSING for an absent key."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            d
            for key in [*old, *(k for k in new if k not in old)]
            for d in _differences(old.get(key, MISSING), new.get(key, MISSING), (*path, key))
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for index, pair in enumerate(zip(old, new)) for d in _differences(*pair, (*path, index))]
    same = type(old) is type(new) and (old == new or old != old and new != new)  # NaN equals NaN here
    return [] if same else [(path, old, new)]


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        if isinstance(data, dict):
            data = data.get(step, MISSING)
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return MISSING
    return data


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


SHM_ITEMS = {
    "volumeMounts": lambda item: set(item) == {"name", "mountPath"} and item["mountPath"] == "/dev/shm",
    "volumes": lambda item: set(item) == {"name", "emptyDir"} and item["emptyDir"] == {"medium": "Memory"},
}


def _shm_append(path: tuple[Any, ...], old: Any, new: Any) -> bool:
    """dev-shm-missing's fix: one memory-backed emptyDir added to a pod's volumes, one /dev/shm mount
    added to a container's volumeMounts (each list created when absent)."""
    accepts = SHM_ITEMS.get(path[-1]) if path else None
    before = [] if old is MISSING else old
    return (
        accepts is not None
        and isinstance(before, list)
        and isinstance(new, list)
        and new[: len(before)] == before
        and len(new) == len(before) + 1
        and isinstance(new[-1], dict)
        and accepts(new[-1])
    )


def assert_intended_edit(before: Any, after: Any) -> None:
    """Every change is one gpu-request-without-limit fix (a limit set to its request, or a request
    set to its limit) or one dev-shm-missing fix. Nothing else in the document moves."""
    for path, old, new in _differences(before, after):
        change = f"--fix changed more than a fix: {path}: {'(absent)' if old is MISSING else repr(old)} -> {new!r}"
        if _shm_append(path, old, new):
            continue
        assert len(path) >= 2 and path[-2] in ("limits", "requests") or path[-1] == "limits", change
        if path[-1] == "limits":  # the whole limits mapping was added
            requests = _at(before, (*path[:-1], "requests"))
            assert old in (MISSING, None) and isinstance(new, dict), change
            assert all(_same(value, _at(requests, (name,))) for name, value in new.items()), change
        elif path[-2] == "limits":
            assert old is MISSING and _same(new, _at(before, (*path[:-2], "requests", path[-1]))), change
        else:
            assert old is not MISSING and _same(new, _at(before, (*path[:-2], "limits", path[-1]))), change


BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _bom(raw: bytes) -> bytes:
    return next((bom for bom in BOMS if raw.startswith(bom)), b"")


def _load(raw: bytes) -> tuple[list[Any], str, bool]:
    """The documents' data, the decoded text, and whether it loads without problems."""
    try:
        loaded = load_bytes("f.yaml", raw)
    except Exception:
        skip_known(traceback.format_exc())
        raise
    return [document.data for document in loaded.documents], loaded.text, not loaded.problems


FIX_FILE = (
    st.lists(fs.mutated(fs.FIXABLE_WORKLOADS, max_mutations=1), min_size=1, max_size=3)
    .flatmap(fs.stream_text)
    .flatmap(fs.encoded)
)


def assert_diff_applies(diff: bytes, directory: Path, raw: bytes, fixed: bytes) -> None:
    """`patch` turns the original into what --fix wrote, byte for byte (UTF-8 files: the diff is UTF-8)."""
    if shutil.which("patch") is None or _bom(raw) not in (b"", b"\xef\xbb\xbf"):
        return
    directory.mkdir()
    (directory / "manifest.yaml").write_bytes(raw)
    applied = subprocess.run(
        ["patch", "-p1", "--batch", "--silent", "-d", str(directory)],
        input=diff,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (directory / "manifest.yaml").read_bytes() == fixed, "the --diff output is not what --fix wrote"


@pytest.mark.slow
@fuzz(40)
@given(raw=FIX_FILE)
@collecting
def test_fix_reparses_to_the_intended_data_and_is_idempotent(raw: bytes) -> None:
    assert_fix_idempotent(raw)


@pytest.mark.slow
@fuzz(15)
@given(raw=FIX_FILE)
@collecting
def test_unsafe_fixes_reach_their_fixpoint_in_one_run(raw: bytes) -> None:
    """A request set to its limit lifts the API server's refusal: the pod findings it held back, and their
    fixes, come in the same run's next pass (cli/fix_passes.py)."""
    assert_fix_idempotent(raw, "--unsafe-fixes")


def assert_fix_idempotent(raw: bytes, *options: str) -> None:
    """--diff is what --fix writes, --fix changes only what fixes change, and a second --fix changes nothing."""
    with workspace() as space, bounded("gpulint check --fix"):
        space.write("manifest.yaml", raw)
        before, text, parses = _load(raw)
        preview = gpulint("check", "manifest.yaml", "--diff", *options)  # relative: the diff's a/ and b/ paths apply
        assert_clean(preview)
        assert Path("manifest.yaml").read_bytes() == raw, "--diff changed the file"
        first = gpulint("check", "manifest.yaml", "--fix", "--format", "json", *options)
        assert_clean(first)
        fixed = Path("manifest.yaml").read_bytes()
        assert (preview.stdout != "") == (fixed != raw), f"--diff and --fix disagree:\n{preview.stdout}"
        if fixed != raw:
            assert parses, "a file with YAML problems was rewritten"
            assert _bom(fixed) == _bom(raw), "--fix changed the byte-order mark"
            after, fixed_text, parses_after = _load(fixed)
            assert parses_after, fixed_text
            assert len(after) == len(before)
            for old, new in zip(before, after):
                assert_intended_edit(old, new)
            if "\r\n" in text and text.count("\n") == text.count("\r\n"):
                assert fixed_text.count("\n") == fixed_text.count("\r\n"), "--fix mixed LF into a CRLF file"
            assert_diff_applies(preview.stdout_bytes, space.root / "patched", raw, fixed)
        second = gpulint("check", "manifest.yaml", "--fix", "--format", "json", *options)
        assert_clean(second)
        assert Path("manifest.yaml").read_bytes() == fixed, "a second --fix changed the file again"
        diff = gpulint("check", "manifest.yaml", "--diff", *options)
        assert_clean(diff)
        assert diff.stdout == "", f"--diff after --fix still shows changes:\n{diff.stdout}"


# --------------------------------------------------------------------------- properties: admission


@pytest.fixture(scope="module")
def webhooks(tmp_path_factory: pytest.TempPathFactory) -> list[Webhook]:
    """Webhooks as `gpulint serve` builds them: no inventory, the example cluster, policies too."""
    policies = ("gpulint:all",)
    return [
        Webhook(Config(), ServeOptions()),
        Webhook(Config(inventory=(str(REPO / "examples" / "inventory"),)), ServeOptions()),
        Webhook(Config(inventory=(str(DATA / "dra"),), policies=policies), ServeOptions(dry_run=True)),
    ]


@pytest.mark.slow
@fuzz(100)
@given(body=fs.review_body(), which=st.integers(0, 2), deny_on=st.sampled_from(list(Severity)))
@collecting
def test_admission_decide(webhooks: list[Webhook], body: bytes, which: int, deny_on: Severity) -> None:
    webhook = webhooks[which]
    assume(len(body) <= ServeOptions().max_body_bytes)  # the server answers 413 without reading a larger one
    with bounded("admission review"):
        try:
            request = parse_review(body)
        except BadReview as exc:
            assert str(exc)
            return
        reviews = ReviewSnapshot.build(webhook.config, webhook.snapshot.inventory, deny_on, webhook.options.dry_run)
        decision = decide(request, reviews)
        answer = json.loads(json.dumps(decision.response()))
        response = answer["response"]
        assert response["uid"] == request["uid"]
        assert len(response.get("warnings", ())) <= MAX_WARNINGS + 1
        assert all(len(w) <= MAX_WARNING_LENGTH for w in response.get("warnings", ()))
        internal = [f.message for f in decision.findings if "internal error" in f.message]
        if internal:
            skip_known("\n".join(internal))
        assert not internal, internal
        if request.get("operation") not in ("CREATE", "UPDATE") or webhook.options.dry_run:
            assert response["allowed"] is True


@pytest.fixture(scope="module")
def https_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from webhook_helpers import Server

    server = Server(tmp_path_factory.mktemp("webhook"), inventory=str(REPO / "examples" / "inventory"))
    yield server
    server.stop()


GPULINT_FAILED = ("review_failed", "review_timeout", "connection_error")


@pytest.mark.slow
@fuzz(15)
@given(body=fs.review_body())
@collecting
def test_webhook_over_https(https_server: Any, body: bytes) -> None:
    """The same reviews through a real server: an answer for each, and gpulint never fails on one."""
    assume(len(body) <= ServeOptions().max_body_bytes)  # larger: 413, and the connection closed mid-upload
    with bounded("POST /validate"):
        seen, seen_lines = len(https_server.log), len(https_server.raw_lines)
        status, answer = https_server.post(body)
        assert status in (200, 400), (status, answer)
        if status == 200:
            assert answer["kind"] == "AdmissionReview" and "allowed" in answer["response"]
        deadline = time.monotonic() + 5  # the server logs the review just after answering it
        while not any(e["event"] == "review" for e in https_server.log[seen:]) and time.monotonic() < deadline:
            time.sleep(0.01)
        lines = https_server.raw_lines[seen_lines:]
        assert all(line.startswith("{") for line in lines), lines  # a traceback is not a log line
        failures = [e for e in https_server.log[seen:] if e["event"] in GPULINT_FAILED]
        assert not failures, failures
