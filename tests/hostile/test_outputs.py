"""What a pull request can plant for the CI step that lints it: a symlink at the report's path, a huge
configuration file. Both through the real CLI."""

import json
import os

from conftest import run_cli

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_output_replaces_a_planted_symlink_instead_of_writing_through_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    victim = tmp_path / "outside" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("export PATH=/usr/bin\n")
    os.symlink(victim, tmp_path / "gpulint.sarif")  # what a malicious pull request commits
    result = run_cli("check", "pod.yaml", "--format", "sarif", "--output", "gpulint.sarif")
    assert result.exit_code == 0
    assert victim.read_text() == "export PATH=/usr/bin\n"
    report = tmp_path / "gpulint.sarif"
    assert not report.is_symlink() and '"version": "2.1.0"' in report.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpulint.sarif", "outside", "pod.yaml"]  # no temp file


def test_a_huge_configuration_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    with open(tmp_path / ".gpulint.yaml", "wb") as handle:
        handle.truncate(4 * 1024**3)  # sparse: 4 GiB that would take minutes and memory to read
    result = run_cli("check", "pod.yaml")
    assert result.exit_code == 2
    assert "over the limit of 1048576 bytes (1 MiB, configuration size)" in result.stderr


def test_output_into_a_pipe_writes_into_it_and_leaves_it_a_pipe(tmp_path, monkeypatch):
    """`--output /dev/null` (the benchmarks') or a FIFO: the device is written into, not replaced by a
    regular file (which, as root, put a file in place of /dev/null)."""
    import stat
    import threading

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("check", "pod.yaml", "--format", "json", "--output", str(fifo))
    if not received:  # a FIFO replaced never gets its writer: open it to let the reader go
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
    reader.join(timeout=10)
    assert result.exit_code == 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(received[0])["summary"]["files"] == 1
