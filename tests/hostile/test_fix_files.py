"""`gpulint check --fix` / `--diff` on the files people really have: links, other encodings,
JSON, odd permissions, full disks, files edited while gpulint runs. Nothing is ever lost.

Most tests run the real CLI as a subprocess on real files; the few that must interleave
with a run (a file edited between lint and fix, a write failing halfway) use click's runner
in-process with real files on disk.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import run_cli

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata:
      name: p  # keep me
    spec:
      containers:
      - name: c
        image: i
        resources:
          requests:
            nvidia.com/gpu: 1
    """)
FIXED = POD + "      limits:\n        nvidia.com/gpu: 1\n"
POD_DATA = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": 1}}}]},
}
FIXED_DATA = json.loads(json.dumps(POD_DATA))
FIXED_DATA["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": 1}


def gpulint(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, check=False
    )


def entries(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


# --- item 1: one pass, one verification ---------------------------------------------------------


@pytest.mark.timed
@pytest.mark.slow
def test_a_thousand_fixes_take_seconds_not_minutes(tmp_path):
    # Before: the file was parsed again after every fix - 1,000 fixes took ~100 s.
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: p", "spec:", "  containers:"]
    for i in range(1000):
        lines += [f"  - name: c{i}", "    image: i", "    resources:", "      requests:", "        nvidia.com/gpu: 1"]
    big = tmp_path / "big.yaml"
    big.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    done = gpulint("check", "--fix", str(big))
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert f"gpulint: {big}: applied 1000 fixes" in done.stderr
    assert elapsed < 20, f"--fix of 1,000 fixes took {elapsed:.1f} s"
    fixed = big.read_text()
    assert fixed.count("      limits:\n        nvidia.com/gpu: 1\n") == 1000
    assert "No problems found" in gpulint("check", str(big)).stdout


# --- item 2: symbolic links ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_symlinked_manifest_fixes_its_target_and_stays_a_link(tmp_path):
    shared, manifests = tmp_path / "shared", tmp_path / "manifests"
    shared.mkdir()
    manifests.mkdir()
    target = shared / "gpu.yaml"
    target.write_text(POD)
    (manifests / "gpu.yaml").symlink_to("../shared/gpu.yaml")
    (manifests / "again.yaml").symlink_to("gpu.yaml")  # a link to a link
    before = target.stat().st_ino
    done = gpulint("check", "--fix", str(manifests / "again.yaml"))
    assert done.returncode == 0, done.stderr
    assert os.readlink(manifests / "gpu.yaml") == "../shared/gpu.yaml"
    assert os.readlink(manifests / "again.yaml") == "gpu.yaml"
    assert target.read_text() == FIXED
    assert target.stat().st_ino != before  # replaced atomically, next to the target
    assert entries(shared) == ["gpu.yaml"] and entries(manifests) == ["again.yaml", "gpu.yaml"]


# --- item 3: hard links ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_hard_linked_manifest_keeps_its_inode_and_both_names_see_the_fix(tmp_path):
    first = tmp_path / "a.yaml"
    first.write_text(POD)
    second = tmp_path / "b.yaml"
    os.link(first, second)
    inode = first.stat().st_ino
    done = gpulint("check", "--fix", str(first))
    assert done.returncode == 0, done.stderr
    assert first.stat().st_ino == second.stat().st_ino == inode and first.stat().st_nlink == 2
    assert second.read_text() == FIXED
    assert entries(tmp_path) == ["a.yaml", "b.yaml"]


@pytest.mark.slow
def test_a_file_named_twice_or_through_two_hard_links_is_fixed_once(tmp_path):
    first = tmp_path / "a.yaml"
    first.write_text(POD)
    os.link(first, tmp_path / "b.yaml")
    done = gpulint("check", "--fix", "a.yaml", "./a.yaml", "b.yaml", str(first), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("applied 1 fix") == 1 and "not fixed" not in done.stderr
    assert first.read_text() == FIXED
    assert entries(tmp_path) == ["a.yaml", "b.yaml"]


# --- item 4: mode, owner, encodings ----------------------------------------------------------------


@pytest.mark.slow
def test_mode_and_owner_are_kept(tmp_path):
    manifest = tmp_path / "owned.yaml"
    manifest.write_text(POD)
    os.chmod(manifest, 0o2640)  # setgid too: chown after chmod would drop it
    owner = (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        owner = (12345, 23456)
        os.chown(manifest, *owner)
    done = gpulint("check", "--fix", str(manifest))
    assert done.returncode == 0, done.stderr
    status = manifest.stat()
    assert manifest.read_text() == FIXED
    assert stat.S_IMODE(status.st_mode) == 0o2640
    assert (status.st_uid, status.st_gid) == owner


ENCODINGS = {  # name: (BOM, codec, line break)
    "utf8-crlf.yaml": (b"", "utf-8", "\r\n"),
    "utf8-bom.yaml": (b"\xef\xbb\xbf", "utf-8", "\n"),
    "utf8-bom-crlf.yaml": (b"\xef\xbb\xbf", "utf-8", "\r\n"),
    "utf16le.yaml": (b"\xff\xfe", "utf-16-le", "\n"),
    "utf16be-crlf.yaml": (b"\xfe\xff", "utf-16-be", "\r\n"),
    "utf32le.yaml": (b"\xff\xfe\x00\x00", "utf-32-le", "\n"),
    "utf16le.json": (b"\xff\xfe", "utf-16-le", "\r\n"),
}


def encoded(text: str, bom: bytes, codec: str, newline: str) -> bytes:
    return bom + text.replace("\n", newline).encode(codec)


@pytest.mark.slow
def test_encoding_bom_and_line_breaks_are_kept(tmp_path):
    # Before: a BOM was refused and UTF-16 crashed --fix with a traceback (exit 3).
    json_text = json.dumps(POD_DATA, indent=2) + "\n"
    for name, (bom, codec, newline) in ENCODINGS.items():
        (tmp_path / name).write_bytes(encoded(json_text if name.endswith(".json") else POD, bom, codec, newline))
    done = gpulint("check", "--fix", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name, (bom, codec, newline) in ENCODINGS.items():
        want = json.dumps(FIXED_DATA, indent=2) + "\n" if name.endswith(".json") else FIXED
        assert (tmp_path / name).read_bytes() == encoded(want, bom, codec, newline), name
    assert entries(tmp_path) == sorted(ENCODINGS)


# --- item 5: JSON stays JSON, in its own layout ----------------------------------------------------

JSON_LAYOUTS = {
    "indent4.json": {"indent": 4},
    "tabs-crlf.json": {"indent": "\t"},
    "compact.json": {"separators": (",", ":")},
    "one-line.json": {},
    "indent1.json": {"indent": 1, "separators": (",", ": ")},
}


def test_json_is_fixed_in_json_keeping_its_layout(tmp_path):
    # Before: `, limits: {nvidia.com/gpu: 1}}` (YAML flow syntax) was spliced into the JSON.
    for name, layout in JSON_LAYOUTS.items():
        text = json.dumps(POD_DATA, **layout)
        (tmp_path / name).write_bytes(text.replace("\n", "\r\n" if "crlf" in name else "\n").encode())
    done = gpulint("check", "--fix", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name, layout in JSON_LAYOUTS.items():
        fixed = (tmp_path / name).read_bytes().decode()
        assert json.loads(fixed) == FIXED_DATA, name
        want = json.dumps(FIXED_DATA, **layout)
        assert fixed == want.replace("\n", "\r\n" if "crlf" in name else "\n"), name


# --- item 7: --diff for the same files; it must apply with patch(1) to what --fix writes -----------


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_diff_applies_with_patch_to_exactly_what_fix_writes(tmp_path):
    files = {
        "crlf.yaml": POD.replace("\n", "\r\n").encode(),
        "bom.json": b"\xef\xbb\xbf" + json.dumps(POD_DATA).encode() + b"\n",  # the BOM is on the changed line
        "no-final-newline.yaml": POD.rstrip("\n").encode(),
        "pretty.json": json.dumps(POD_DATA, indent=2).encode(),
        # U+2028 is a line break to str.splitlines(), not to patch(1)
        "line-separator.yaml": (POD + '    command: ["a\u2028b"]\n').encode(),
    }
    patched, fixed = tmp_path / "patched", tmp_path / "fixed"
    for directory in (patched, fixed):
        directory.mkdir()
        for name, raw in files.items():
            (directory / name).write_bytes(raw)
    diff = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--diff", "."],
        cwd=patched,
        capture_output=True,
        timeout=60,
        check=False,
    )  # bytes: the CRs are the point
    assert diff.returncode == 1, diff.stderr
    assert [(patched / name).read_bytes() for name in files] == list(files.values())  # --diff writes nothing
    assert b"\\ No newline at end of file" in diff.stdout and b"nvidia.com/gpu: 1\r\n" in diff.stdout
    applied = subprocess.run(
        ["patch", "-p1", "--quiet", "--batch"],
        input=diff.stdout,
        cwd=patched,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert gpulint("check", "--fix", ".", cwd=fixed).returncode == 0
    for name in files:
        assert (patched / name).read_bytes() == (fixed / name).read_bytes(), name
    assert entries(patched) == entries(fixed) == sorted(files)


# --- item 4/7: nothing written, nothing left behind, when writing is impossible ---------------------


@pytest.fixture
def read_only_directory(tmp_path):
    """A directory no one may create files in - as root too (chattr +i), else by its mode."""
    directory = tmp_path / "locked"
    directory.mkdir()
    (directory / "pod.yaml").write_text(POD)
    if os.geteuid() != 0:
        directory.chmod(0o555)
        yield directory
        directory.chmod(0o755)
        return
    locked = (
        subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False)
        if shutil.which("chattr")
        else None
    )
    if locked is None or locked.returncode != 0:
        pytest.skip("running as root on a file system without chattr +i: no real read-only directory")
    try:
        yield directory
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


@pytest.mark.slow
def test_a_directory_without_write_permission_is_reported_and_left_alone(read_only_directory):
    manifest = read_only_directory / "pod.yaml"
    done = gpulint("check", "--fix", str(manifest))
    assert done.returncode == 1  # the finding is still there
    assert f"gpulint: {manifest}: not fixed: cannot create a temporary file next to it" in done.stderr
    assert "Traceback" not in done.stderr
    assert manifest.read_text() == POD and entries(read_only_directory) == ["pod.yaml"]


def _padded_pod(size: int) -> str:
    """POD grown by a comment to ``size`` bytes, so that the fix needs one more 4 KiB page."""
    return POD + "#" * (size - len(POD) - 1) + "\n"


FULL_DISK = r"""
set -u
mount -t tmpfs -o size=64k,mode=755 tmpfs "$DISK"
cp "$SRC/pod.yaml" "$DISK/atomic.yaml"
cp "$SRC/pod.yaml" "$DISK/linked.yaml" && ln "$DISK/linked.yaml" "$DISK/linked2.yaml"
dd if=/dev/zero of="$DISK/fill" bs=4096 2>/dev/null
"$PY" -m gpulint check --fix "$DISK/atomic.yaml" "$DISK/linked.yaml" >/dev/null 2>"$OUT/full.err"
ls -a "$DISK" >"$OUT/full.ls"
cp "$DISK/atomic.yaml" "$DISK/linked.yaml" "$OUT/"
stat -c '%i %h' "$DISK/linked.yaml" "$DISK/linked2.yaml" >"$OUT/full.stat"
rm "$DISK/fill"
"$PY" -m gpulint check --fix "$DISK/atomic.yaml" "$DISK/linked.yaml" >/dev/null 2>"$OUT/room.err"
stat -c '%i %h' "$DISK/linked.yaml" "$DISK/linked2.yaml" >"$OUT/room.stat"
cp "$DISK/linked2.yaml" "$OUT/"
"""


@pytest.mark.slow
def test_a_full_disk_leaves_every_file_as_it_was_and_no_temporary_file(tmp_path):
    """A real full file system: a 64 KiB tmpfs, mounted in a private mount namespace."""
    source, disk, out = tmp_path / "src", tmp_path / "disk", tmp_path / "out"
    for directory in (source, disk, out):
        directory.mkdir()
    original = _padded_pod(4090)  # 4,090 bytes + the 36 of the fix: one more page
    (source / "pod.yaml").write_text(original)
    namespace = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        namespace.insert(1, "--map-root-user")
    environment = {**os.environ, "DISK": str(disk), "SRC": str(source), "OUT": str(out), "PY": sys.executable}
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a small file system privately")
    done = subprocess.run(
        [*namespace, "sh", "-c", FULL_DISK], env=environment, capture_output=True, text=True, timeout=60, check=False
    )
    if not (out / "full.err").exists():
        pytest.skip(f"cannot mount a private tmpfs here: {done.stderr.strip()}")
    errors = (out / "full.err").read_text()
    assert errors.count("not fixed: cannot write it (No space left on device); left unchanged") == 2, errors
    assert "Traceback" not in errors
    assert (out / "atomic.yaml").read_text() == original and (out / "linked.yaml").read_text() == original
    assert (out / "full.ls").read_text().split() == [".", "..", "atomic.yaml", "fill", "linked.yaml", "linked2.yaml"]
    inode = (out / "full.stat").read_text().split()
    assert inode[1] == inode[3] == "2" and inode[0] == inode[2]
    # With room again, the same run fixes both, and the hard link still holds.
    assert (out / "room.err").read_text().count("applied 1 fix") == 2
    assert (out / "room.stat").read_text().split() == inode
    assert (out / "linked2.yaml").read_text() == original.replace(POD, FIXED)


def test_a_write_that_fails_halfway_into_a_hard_linked_file_puts_the_old_bytes_back(tmp_path, monkeypatch):
    """In place (a hard link): the first write lands partly, the next one fails (EIO)."""
    first = tmp_path / "a.yaml"
    first.write_text(POD)
    os.link(first, tmp_path / "b.yaml")
    real_pwrite = os.pwrite
    calls = []

    def failing_pwrite(descriptor, data, offset):
        calls.append(offset)
        if len(calls) == 1:
            return real_pwrite(descriptor, bytes(data[:40]).upper(), offset)  # a torn write
        if len(calls) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_pwrite(descriptor, data, offset)

    monkeypatch.setattr(os, "pwrite", failing_pwrite)
    result = run_cli("check", "--fix", str(first))
    assert f"gpulint: {first}: not fixed: cannot write it (Input/output error); left unchanged" in result.stderr
    assert first.read_text() == POD and first.stat().st_nlink == 2
    assert entries(tmp_path) == ["a.yaml", "b.yaml"] and result.exit_code == 1


def test_a_failing_rename_leaves_no_temporary_file(tmp_path, monkeypatch):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)

    def refuse(source, target):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "replace", refuse)
    result = run_cli("check", "--fix", str(manifest))
    assert "not fixed: cannot write it (Invalid cross-device link); left unchanged" in result.stderr
    assert manifest.read_text() == POD and entries(tmp_path) == ["pod.yaml"]


# --- item 7: the file changes under gpulint ---------------------------------------------------------

EDITED = POD.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 4")


def test_a_file_edited_between_lint_and_fix_is_not_touched(tmp_path, monkeypatch):
    from gpulint.lint.run import LintRun

    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    real_report = LintRun.report

    def lint_then_edit(*args, **kwargs):
        report = real_report(*args, **kwargs)
        manifest.write_text(EDITED)  # the user saves in an editor while gpulint runs
        return report

    monkeypatch.setattr(LintRun, "report", lint_then_edit)
    result = run_cli("check", "--fix", str(manifest))
    assert f"gpulint: {manifest}: not fixed: it changed after it was linted; run gpulint again" in result.stderr
    assert manifest.read_text() == EDITED and entries(tmp_path) == ["pod.yaml"]


def test_a_file_edited_while_its_fix_is_built_is_not_overwritten(tmp_path, monkeypatch):
    import gpulint.lint.output.fix

    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    real_prepare = gpulint.lint.output.fix.prepare_fix

    def prepare_then_edit(*args, **kwargs):
        prepared = real_prepare(*args, **kwargs)
        manifest.write_text(EDITED)
        return prepared

    monkeypatch.setattr(gpulint.lint.output.fix, "prepare_fix", prepare_then_edit)
    result = run_cli("check", "--fix", str(manifest))
    assert "not fixed: it changed while it was being fixed; left unchanged" in result.stderr
    assert manifest.read_text() == EDITED and entries(tmp_path) == ["pod.yaml"]


@pytest.mark.slow
def test_a_named_pipe_is_linted_but_never_fixed(tmp_path):
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf '%s' \"$0\" > '{fifo}'", POD])
    try:
        done = gpulint("check", "--fix", str(fifo), timeout=30)
    finally:
        writer.wait(timeout=30)
    assert done.returncode == 1 and "gpu-request-without-limit" in done.stdout
    assert "fixes are not applied to standard input or a pipe" in done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and entries(tmp_path) == ["pod.yaml"]


@pytest.mark.slow
def test_extended_attributes_are_kept(tmp_path):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    try:
        os.setxattr(manifest, "user.reviewed-by", b"platform-team")
    except (AttributeError, OSError) as exc:
        pytest.skip(f"no user extended attributes here: {exc}")
    done = gpulint("check", "--fix", str(manifest))
    assert done.returncode == 0, done.stderr
    assert manifest.read_text() == FIXED
    assert os.getxattr(manifest, "user.reviewed-by") == b"platform-team"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["plain", "hard-linked", "through a symlink", "0555"])
def test_a_read_only_file_is_not_replaced_behind_its_back(tmp_path, how):
    """A rename needs only the directory's permission: it would have gone round the file's own; and root
    (the tests run as root, as CI containers do) may write any file: the mode bits decide (issue #33: as
    root, --fix rewrote a 0444 file). A hard link is written in place, a symlink's target is the file."""
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    manifest.chmod(0o555 if how == "0555" else 0o444)
    named = manifest
    if how == "hard-linked":
        os.link(manifest, tmp_path / "other.yaml")
    elif how == "through a symlink":
        named = tmp_path / "link.yaml"
        named.symlink_to("pod.yaml")
    done = gpulint("check", "--fix", str(named))
    assert f"gpulint: {named}: not fixed: the file is read-only; left unchanged" in done.stderr
    assert done.returncode == 1 and manifest.read_text() == POD
    assert stat.S_IMODE(manifest.stat().st_mode) == (0o555 if how == "0555" else 0o444)
    assert not [name for name in entries(tmp_path) if "gpulint-tmp" in name]


def test_a_file_writable_by_its_group_only_is_still_fixed(tmp_path):
    """The trap: a write bit for anyone is not read-only (root writes it, as `vim` would)."""
    if os.geteuid() != 0:
        pytest.skip("only root may write a file whose owner has no write bit")
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    manifest.chmod(0o464)
    done = gpulint("check", "--fix", str(manifest))
    assert done.returncode == 0, done.stderr
    assert manifest.read_text() == FIXED and stat.S_IMODE(manifest.stat().st_mode) == 0o464


@pytest.mark.slow
def test_json_is_recognised_by_content_and_old_mac_line_breaks_are_kept(tmp_path):
    (tmp_path / "kubectl-output.yaml").write_text(json.dumps(POD_DATA, indent=4))  # kubectl get -o json > x.yaml
    (tmp_path / "yaml-in.json").write_text(POD)
    (tmp_path / "cr.yaml").write_bytes(POD.replace("\n", "\r").encode())
    done = gpulint("check", "--fix", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "kubectl-output.yaml").read_text() == json.dumps(FIXED_DATA, indent=4)
    assert (tmp_path / "yaml-in.json").read_text() == FIXED
    assert (tmp_path / "cr.yaml").read_bytes() == FIXED.replace("\n", "\r").encode()
