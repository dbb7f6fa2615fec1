"""Hostile inputs to `gpulint check`'s reading of paths: repositories that try to run commands,
symlinks out of the tree, FIFOs, devices, endless and huge files, process substitution.

Every run is a real `python -m gpulint` subprocess (so PYTHONPATH can point it at another
checkout), with its address space capped so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

MIB = 1024 * 1024
LIMIT = 64 * MIB
MEMORY_CAP = 1024 * MIB
BAD_POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: NAME}
    spec:
      containers:
      - name: c
        image: i
        resources:
          requests: {nvidia.com/gpu: 1}
    """)
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"]


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def gpulint(
    *args: str | Path, cwd: Path | None = None, timeout: float = 30, stdin=subprocess.DEVNULL, shell: bool = False
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "gpulint", *map(str, args)]
    if shell:  # through bash, for process substitution: args are one bash word list
        command = ["bash", "-c", "exec " + " ".join(command)]
    return subprocess.run(
        command, cwd=cwd, stdin=stdin, capture_output=True, text=True, timeout=timeout, preexec_fn=_cap_memory
    )


def report(result: subprocess.CompletedProcess) -> dict:
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def linted(result: subprocess.CompletedProcess, root: Path) -> list[str]:
    """The files with a finding (every test file holds one bad pod), relative to ``root``."""
    return sorted(os.path.relpath(f["path"], root) for f in report(result)["findings"])


def bad(path: Path, name: str = "bad") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BAD_POD.replace("NAME", name))
    return path


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True)


# Issue #11, item 1: the directory walk ran `git ls-files`, which runs core.fsmonitor.


@pytest.mark.slow
def test_a_repository_cannot_make_the_walk_run_a_command(tmp_path):
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", str(repo))
    bad(repo / "apps" / "job.yaml")
    marker = tmp_path / "pwned"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    for directory in (repo, repo / "apps"):  # the repository's top, and a directory inside it
        result = gpulint("check", directory, "--format", "json")
        assert result.returncode == 1 and linted(result, repo) == ["apps/job.yaml"]
        assert not marker.exists(), "linting the repository ran its core.fsmonitor command"
    git(repo, "status")  # the trap is armed: git itself runs it
    assert marker.exists()


def _git_visible(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "--cached", "--others", "--exclude-standard", "-z").stdout
    return sorted(p for p in out.split("\0") if p.endswith(".yaml"))


@pytest.mark.slow
def test_ignore_files_of_plain_paths_match_git_without_a_pattern_matcher(tmp_path):
    """`git init`'s info/exclude (comments only) and a .gitignore of plain paths: the same files as git lists, and
    neither pathspec nor RE2 imported for them (their import was ~0.05 s of a warm pre-commit run)."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    for name in ("a.yaml", "build/out.yaml", "src/build/x.yaml", "root.yaml", "src/root.yaml", "keep/k.yaml"):
        bad(repo / name)
    (repo / ".gitignore").write_text("# plain paths only\n\nbuild/\n/root.yaml\nkeep\n!keep/k.yaml\n")
    assert linted(gpulint("check", repo, "--format", "json"), repo) == _git_visible(repo) == ["a.yaml", "src/root.yaml"]
    probe = "import sys; from gpulint.lint.inputs.file_walk import Walk; n = len(list(Walk(sys.argv[1], ()).files()))"
    probe += "; print(n, 'pathspec' in sys.modules, 're2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["2", "False", "False"]


@pytest.mark.slow
def test_gitignore_rules_match_git(tmp_path):
    """Nested .gitignore files, info/exclude, negations, anchors, directory patterns, `**`, a file
    git tracks although a pattern matches it: the same files as `git ls-files -co --exclude-standard`."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    files = [
        "a.yaml",
        "skip.yaml",
        "keep-skip.yaml",
        "build/out.yaml",
        "build/keep.yaml",
        "src/build/x.yaml",
        "src/app.yaml",
        "src/gen/z.yaml",
        "src/gen/keep/k.yaml",
        "src/deep/er/local.yaml",
        "root.yaml",
        "src/root.yaml",
        "logs/today/x.yaml",
        "docs/a/b/c/doc.yaml",
        "excluded/e.yaml",
        "forced/f.yaml",
        "charts/templates/t.yaml",
        "charts/values.yaml",
        "dir-only",
        "dir-only.yaml",
    ]
    for index, name in enumerate(files):
        bad(repo / name, f"p{index}")
    (repo / ".gitignore").write_text(
        textwrap.dedent("""\
        # comments and blank lines

        *skip.yaml
        !keep-*.yaml
        build/
        /root.yaml
        logs/**
        docs/**/c/
        forced/
        charts/*
        !charts/values.yaml
        dir-only/
        """)
    )
    (repo / "src" / ".gitignore").write_text("gen/*\n!gen/keep/\nlocal.yaml\n")
    (repo / "src" / "deep" / ".gitignore").write_text("!local.yaml\n")  # a deeper file overrides
    (repo / ".git" / "info" / "exclude").write_text("excluded/\n")
    git(repo, "add", "-f", "forced/f.yaml")  # tracked: listed although ignored
    expected = _git_visible(repo)
    assert "forced/f.yaml" in expected and "src/deep/er/local.yaml" in expected and "a.yaml" in expected
    assert linted(gpulint("check", repo, "--format", "json"), repo) == expected
    # A directory named inside the repository: the rules from above it still apply.
    src = [p for p in expected if p.startswith("src/")]
    assert linted(gpulint("check", repo / "src", "--format", "json"), repo) == src


@pytest.mark.slow
def test_a_named_directory_that_git_ignores_is_read_with_its_own_rules(tmp_path):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / ".gitignore").write_text("vendor/\n")
    bad(repo / "vendor" / "chart" / "a.yaml")
    bad(repo / "vendor" / "chart" / "tmp" / "b.yaml")
    (repo / "vendor" / ".gitignore").write_text("tmp/\n")
    assert linted(gpulint("check", repo, "--format", "json"), repo) == []
    assert linted(gpulint("check", repo / "vendor", "--format", "json"), repo) == ["vendor/chart/a.yaml"]


@pytest.mark.slow
def test_a_nested_repository_follows_its_own_rules(tmp_path):
    outer = tmp_path / "outer"
    git(tmp_path, "init", "-q", str(outer))
    (outer / ".gitignore").write_text("*.gen.yaml\n")
    inner = outer / "vendor" / "lib"
    git(tmp_path, "init", "-q", str(inner))
    (inner / ".gitignore").write_text("scratch/\n")
    bad(inner / "x.gen.yaml")  # the outer rule does not reach into another repository (git agrees)
    bad(inner / "scratch" / "s.yaml")
    bad(outer / "y.gen.yaml")
    assert _git_visible(inner) == ["x.gen.yaml"]
    assert linted(gpulint("check", outer, "--format", "json"), outer) == ["vendor/lib/x.gen.yaml"]


@pytest.mark.timed
@pytest.mark.slow
def test_a_hostile_ignore_pattern_cannot_stall_the_walk(tmp_path):
    """A backtracking matcher takes minutes on `*a*a*a*a*…c` against a long name; RE2 does not."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / ".gitignore").write_text("*a" * 30 + "*c\n")
    bad(repo / ("a" * 200 + ".yaml"))
    started = time.monotonic()
    result = gpulint("check", repo, "--format", "json", timeout=20)
    assert result.returncode == 1 and time.monotonic() - started < 10


@pytest.mark.slow
@pytest.mark.parametrize("what", ["garbage", "fifo", "truncated"])
def test_a_hostile_git_index_is_data(tmp_path, what):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    bad(repo / "a.yaml")
    bad(repo / "ignored.yaml")
    (repo / ".gitignore").write_text("ignored.yaml\n")
    index = repo / ".git" / "index"
    if what == "fifo":
        os.mkfifo(index)
    elif what == "garbage":
        index.write_bytes(b"DIRC\x00\x00\x00\x02\xff\xff\xff\xff" + os.urandom(500))
    else:
        git(repo, "add", "-f", "ignored.yaml")
        index.write_bytes(index.read_bytes()[:-40])  # an entry cut short
    result = gpulint("check", repo, "--format", "json", timeout=20)
    # The index is unusable, the .gitignore still applies; the note says what that costs.
    assert result.returncode == 1 and linted(result, repo) == ["a.yaml"]
    (note,) = report(result)["notes"][:1]
    assert "index" in note and ("not used: a FIFO" in note if what == "fifo" else "gpulint can read" in note)


@pytest.mark.slow
@pytest.mark.parametrize("version, object_format", [(2, "sha1"), (3, "sha1"), (4, "sha1"), (4, "sha256")])
def test_the_index_is_read_as_git_lists_it(tmp_path, version, object_format):
    from gpulint.lint.inputs.gitignore import Scope, scope_for_walk

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", f"--object-format={object_format}", str(repo))
    names = ["a.yaml", "ab.yaml", "abc/d.yaml", "abc/de/f.yaml", "b" * 200 + ".yaml", "z/é.yaml", "new.yaml"]
    for name in names:
        bad(repo / name)
    (repo / ".gitignore").write_text("*.yaml\n")
    git(repo, "add", "-f", *names[:-1])
    git(repo, "add", "-f", "--intent-to-add", "new.yaml")  # an extended-flags entry (index v3+)
    git(repo, "update-index", "--index-version", str(version))
    listed = set(git(repo, "-c", "core.quotePath=false", "ls-files", "-z").stdout.split("\0")) - {""}
    notes: list[str] = []
    scope = scope_for_walk(os.path.realpath(repo), notes)
    assert isinstance(scope, Scope) and scope.repository is not None
    assert scope.repository.tracked == listed and notes == []
    assert linted(gpulint("check", repo, "--format", "json"), repo) == sorted(names)


@pytest.mark.slow
def test_an_ignore_file_that_is_a_fifo_or_too_big_does_not_hang(tmp_path):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    bad(repo / "a.yaml")
    os.mkfifo(repo / ".gitignore")
    result = gpulint("check", repo, "--format", "json", timeout=20)
    assert linted(result, repo) == ["a.yaml"]
    assert any(".gitignore: not used: a FIFO" in note for note in report(result)["notes"])
    (repo / ".gitignore").unlink()
    with open(repo / ".gitignore", "wb") as handle:
        handle.truncate(17 * MIB)  # sparse: all NULs
    result = gpulint("check", repo, timeout=20)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f".gitignore: file is {17 * MIB} bytes, over the limit of {16 * MIB} bytes" in result.stderr


# Item 2: symlinks.


@pytest.mark.slow
def test_the_walk_does_not_follow_symlinks_out_of_the_tree(tmp_path):
    outside = bad(tmp_path / "secrets" / "secret.yaml", "secret")
    tree = tmp_path / "tree"
    bad(tree / "own.yaml")
    (tree / "leak.yaml").symlink_to(outside)
    (tree / "leakdir").symlink_to(outside.parent, target_is_directory=True)
    result = gpulint("check", tree, "--format", "json")
    assert result.returncode == 1 and linted(result, tree) == ["own.yaml"]
    assert any(
        "leak.yaml: skipped: a symbolic link to" in note and "outside" in note for note in report(result)["notes"]
    )
    # Named on the command line, a link is the user's choice: followed.
    assert linted(gpulint("check", tree / "leak.yaml", "--format", "json"), tree) == ["leak.yaml"]


@pytest.mark.slow
def test_symlinks_inside_the_tree_give_no_duplicates_and_no_loops(tmp_path):
    tree = tmp_path / "tree"
    bad(tree / "apps" / "real.yaml")
    (tree / "apps" / "alias.yaml").symlink_to("real.yaml")  # sorts first: still shown under its own name
    (tree / "apps" / "loop").symlink_to("..", target_is_directory=True)
    (tree / "current").symlink_to("apps", target_is_directory=True)
    (tree / "dangling.yaml").symlink_to("nowhere.yaml")
    (tree / "self.yaml").symlink_to("self.yaml")
    (tree / "zz").mkdir()
    os.link(tree / "apps" / "real.yaml", tree / "zz" / "hard.yaml")  # one file, two names: linted once
    result = gpulint("check", tree, "--format", "json", timeout=20)
    assert result.returncode == 1 and linted(result, tree) == ["apps/real.yaml"]
    notes = report(result)["notes"]
    assert any("dangling.yaml: skipped: a broken symbolic link" in note for note in notes)


@pytest.mark.slow
def test_an_in_tree_link_to_a_hidden_file_is_read_once(tmp_path):
    tree = tmp_path / "tree"
    bad(tree / ".rendered" / "all.yaml")
    (tree / "all.yaml").symlink_to(".rendered/all.yaml")
    assert linted(gpulint("check", tree, "--format", "json"), tree) == ["all.yaml"]


# Item 3: file types and sizes are checked before reading.


@pytest.mark.slow
def test_a_fifo_in_a_linted_directory_is_skipped_not_waited_for(tmp_path):
    bad(tmp_path / "a.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.yaml"))
    try:
        result = gpulint("check", tmp_path, "--format", "json", timeout=20)
    finally:
        server.close()
    assert result.returncode == 1 and linted(result, tmp_path) == ["a.yaml"]
    notes = report(result)["notes"]
    assert any(note.endswith("pipe.yaml: skipped: a FIFO (named pipe), not a regular file") for note in notes)
    assert any(note.endswith("sock.yaml: skipped: a socket, not a regular file") for note in notes)
    text = gpulint("check", tmp_path, timeout=20)
    assert "note: " in text.stdout and "pipe.yaml: skipped" in text.stdout


@pytest.mark.timed
@pytest.mark.slow
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_named_on_the_command_line_is_refused_unread(device):
    started = time.monotonic()
    result = gpulint("check", device, timeout=20)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{device}: a character device, not a regular file or pipe; not read" in result.stderr
    assert time.monotonic() - started < 10


@pytest.mark.timed
@pytest.mark.slow
def test_a_huge_sparse_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "apps" / "big.yaml"
    big.parent.mkdir()
    with open(big, "wb") as handle:
        handle.truncate(10 * 1024**3)
    bad(tmp_path / "apps" / "a.yaml")
    expected = f"big.yaml: file is {10 * 1024**3} bytes, over the limit of {LIMIT} bytes (64 MiB, max-file-bytes)"
    for target in (big, tmp_path):  # named, and met in a walk
        started = time.monotonic()
        result = gpulint("check", target, timeout=20)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert expected in result.stderr
        assert time.monotonic() - started < 10


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    from gpulint.lint.inputs.collect import collect_all
    from gpulint.lint.inputs.sources import SourceError

    path = tmp_path / "edge.yaml"
    path.write_bytes(b"#" * 100)
    assert collect_all([str(path)], limit=100).sources[0].read() == b"#" * 100
    path.write_bytes(b"#" * 101)
    with pytest.raises(SourceError, match=r"edge.yaml: file is 101 bytes, over the limit of 100 bytes"):
        collect_all([str(path)], limit=100)
    with pytest.raises(SourceError, match=r"edge.yaml: file is 101 bytes, over the limit of 100 bytes"):
        collect_all([str(tmp_path)], limit=100)


# Item 4: a pipe is read exactly once.


@pytest.mark.slow
def test_process_substitution_is_read_once_and_its_findings_reported(tmp_path):
    manifest = bad(tmp_path / "f.yaml", "piped")
    result = gpulint("check", f"<(cat '{manifest}')", "--format", "json", shell=True)
    assert result.returncode == 1, result.stderr
    (finding,) = report(result)["findings"]
    assert finding["path"].startswith("/dev/fd/") and finding["object"]["name"] == "piped"
    # With a cross-file object beside it (the inventory scan reads every source first).
    inventory_objects = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: gpu.example.com}
        ---
        """)
    manifest.write_text(inventory_objects + BAD_POD.replace("NAME", "piped"))
    result = gpulint("check", f"<(cat '{manifest}')", "--format", "json", shell=True)
    assert result.returncode == 1 and [f["rule"] for f in report(result)["findings"]] == ["gpu-request-without-limit"]


@pytest.mark.slow
def test_a_named_fifo_waits_for_its_writer(tmp_path):
    fifo = tmp_path / "stream.yaml"
    os.mkfifo(fifo)

    def write_when_read() -> None:
        deadline = time.monotonic() + 20
        while True:  # a non-blocking open fails until gpulint has opened the pipe to read it
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w") as stream:
            stream.write(BAD_POD.replace("NAME", "late"))

    writer = threading.Thread(target=write_when_read)
    writer.start()
    try:
        result = gpulint("check", fifo, "--format", "json", "--fix", timeout=20)
    finally:
        writer.join()
    assert result.returncode == 1 and report(result)["findings"][0]["object"]["name"] == "late"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # --fix did not replace the pipe with a file


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.slow
def test_explain_and_inventory_read_a_pipe_once():
    """Both read their inputs twice: explain found no pod (exit 2), inventory a false clean."""
    job = EXAMPLES / "manifests" / "cluster-fit.yaml"
    result = gpulint(
        "explain",
        f"<(cat '{job}')",
        "--object",
        "Job/ml-research/llm-eval-16gpu",
        "--inventory",
        EXAMPLES / "inventory",
        shell=True,
    )
    # exit 1, as `check` exits for this Job (gpu-unschedulable): explain and check share their verdicts
    assert result.returncode == 1 and "nvidia.com/gpu: asks 16; largest node capacity 8" in result.stdout
    nodes = EXAMPLES / "inventory" / "nodes.yaml"
    result = gpulint("inventory", "--inventory", f"<(cat '{nodes}')", "--format", "json", shell=True)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {f["rule"] for f in findings} == {"stale-gpu-label"} and len(findings) == 2


@pytest.mark.slow
def test_an_endless_pipe_is_refused_at_the_limit():
    result = gpulint("check", "<(yes 'a: b')", shell=True, timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"input is more than {LIMIT} bytes, over the limit of {LIMIT} bytes" in result.stderr


# Item 5: stdin.


@pytest.mark.slow
def test_endless_stdin_is_refused_at_the_limit():
    with open("/dev/zero", "rb") as zero:
        result = gpulint("check", "-", stdin=zero, timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"<stdin>: input is more than {LIMIT} bytes, over the limit of {LIMIT} bytes" in result.stderr


@pytest.mark.slow
def test_closed_stdin_is_a_usage_error():
    command = f"exec {sys.executable} -m gpulint check - <&-"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30, preexec_fn=_cap_memory)
    assert result.returncode == 2 and "standard input is closed" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.slow
def test_stdin_named_twice_is_read_once(tmp_path):
    with open(bad(tmp_path / "f.yaml"), "rb") as manifest:
        result = gpulint("check", "-", "-", "--format", "json", stdin=manifest)
    assert result.returncode == 1 and len(report(result)["findings"]) == 1


# Siblings found on the way.


@pytest.mark.slow
def test_a_very_deep_directory_tree_is_walked():
    """os.walk recursed once per level: a deep enough tree was a RecursionError (exit 3)."""
    # Outside pytest's tmp_path: pytest removes old ones with a recursive rmtree, which this depth breaks.
    levels = [tempfile.mkdtemp(prefix="gpulint-deep-")]
    try:
        for _ in range(1100):  # not os.makedirs: it recurses once per level too
            levels.append(os.path.join(levels[-1], "d"))
            os.mkdir(levels[-1])
        pod = bad(Path(levels[-1]) / "p.yaml")
        result = gpulint("check", levels[0], "--format", "json", timeout=60)
    finally:
        if os.path.exists(os.path.join(levels[-1], "p.yaml")):
            os.unlink(os.path.join(levels[-1], "p.yaml"))
        for level in reversed(levels):
            os.rmdir(level)
    assert result.returncode == 1 and report(result)["findings"][0]["path"] == str(pod)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_file_or_directory_is_a_usage_error(tmp_path):
    bad(tmp_path / "a.yaml").chmod(0)
    result = gpulint("check", tmp_path)
    assert result.returncode == 2 and "a.yaml: cannot read: Permission denied" in result.stderr
    (tmp_path / "a.yaml").unlink()
    locked = tmp_path / "locked"
    bad(locked / "b.yaml")
    locked.chmod(0)
    try:
        result = gpulint("check", tmp_path)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 2 and "locked: cannot read the directory: Permission denied" in result.stderr


@pytest.mark.slow
def test_git_is_not_needed(tmp_path):
    """No git on PATH: a repository's .gitignore is still honoured."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / ".gitignore").write_text("out/\n")
    bad(repo / "a.yaml")
    bad(repo / "out" / "b.yaml")
    bare_path = tmp_path / "bin"
    bare_path.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", str(repo), "--format", "json"],
        env={**os.environ, "PATH": str(bare_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shutil.which("git", path=str(bare_path)) is None
    assert linted(result, repo) == ["a.yaml"]
