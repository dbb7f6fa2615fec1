"""The source lines quoted under findings (lint/findings.py ``excerpts``; the markdown formatter shows them)."""

from __future__ import annotations

import textwrap

from conftest import run_cli

from gpulint.lint.findings import MAX_EXCERPT, excerpts

DEPLOYMENT = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: trainer
      namespace: ml
    spec:
      template:
        spec:
          containers:
          - name: trainer
            image: registry.example.com/ml/trainer:1.4
            resources:
              requests:
                nvidia.com/gpu: 2
    """
)


def test_each_line_asked_for_by_its_1_based_number_and_no_other():
    quoted = excerpts(DEPLOYMENT, {14, 1, 10})
    assert quoted == {1: "apiVersion: apps/v1", 10: "      - name: trainer", 14: "            nvidia.com/gpu: 2"}
    assert list(quoted) == [1, 10, 14]  # in line order, as the findings are sorted


def test_lines_outside_the_text_are_left_out():
    assert excerpts(DEPLOYMENT, {0, 15, 99}) == {}  # 14 lines: line 15 is past the last newline
    assert excerpts(DEPLOYMENT, {14, 15}) == {14: "            nvidia.com/gpu: 2"}
    assert excerpts("", {1}) == {}
    assert excerpts(DEPLOYMENT, set()) == {}


def test_a_last_line_without_a_newline_and_windows_line_ends():
    crlf = DEPLOYMENT.replace("\n", "\r\n").rstrip("\r\n")
    assert excerpts(crlf, {2, 14}) == {2: "kind: Deployment", 14: "            nvidia.com/gpu: 2"}


def test_a_long_line_is_cut_and_a_line_of_the_limit_is_not():
    at_limit = "  command: " + "x" * (MAX_EXCERPT - len("  command: "))
    over = at_limit + "y"
    quoted = excerpts(f"kind: Pod\n{at_limit}\n{over}\n", {2, 3})
    assert quoted[2] == at_limit and len(at_limit) == MAX_EXCERPT
    assert quoted[3] == at_limit + "…"


def test_markdown_quotes_the_line_of_each_finding_in_a_crlf_file(tmp_path):
    manifest = tmp_path / "trainer.yaml"
    manifest.write_bytes(DEPLOYMENT.replace("\n", "\r\n").encode())
    run = run_cli(
        "check", str(manifest), "--format", "markdown", "--exit-zero", "--select", "gpu-request-without-limit"
    )
    assert "line 14, column 13" in run.stdout
    assert "  ```yaml\n              nvidia.com/gpu: 2\n  ```" in run.stdout
