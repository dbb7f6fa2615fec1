"""Causes of false findings met on set L of held-out public repositories (docs/precision.md, "Set L"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied): lower-case single-brace fill-ins the reader replaces."""

from __future__ import annotations

import pytest
from conftest import lint_text

from gpulint.lint.findings import Severity

# KServe's torchserve samples: `image: {username}/torchserve:latest`, and the README says "replace {username}
# with your Docker Hub username"; its BentoML sample writes `{docker_username}/iris-classifier`.
ISVC = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: torchserve-custom-gpu
spec:
  predictor:
    containers:
    - image: {image}
      name: kserve-container
      resources:
        limits:
          nvidia.com/gpu: 1
"""


def serious(findings):
    return [(f.rule, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]


@pytest.mark.parametrize("image", ["{username}/torchserve-gpu:latest", "{docker_username}/iris-classifier"])
def test_a_lower_case_fill_in_starting_a_value_makes_a_template(image):
    findings = lint_text(ISVC.replace("{image}", image), "docs/samples/v1beta1/custom/torchserve/gpu.yaml")
    assert [(f.rule, f.severity, f.line, f.column) for f in findings] == [("not-rendered", Severity.INFO, 8, 14)]
    assert image.split("/")[0] + " is a single-brace fill-in" in findings[0].message


def test_the_image_written_out_is_checked():
    findings = lint_text(ISVC.replace("{image}", "docker.io/kserve/torchserve-gpu:latest"))
    assert not any(f.rule == "not-rendered" for f in findings)


@pytest.mark.parametrize(
    "line",
    [
        "    - image: {a: b}/torchserve",  # a flow mapping with a value: no fill-in
        "    - image: {username} /torchserve",  # the brace closes a mapping, then text
        '    - args: ["--url={host}/v1", [unclosed]',  # inside a quoted string the brace is text; the error is elsewhere
    ],
)
def test_other_refused_braces_stay_yaml_errors(line):
    text = ISVC.replace("    - image: {image}", line)
    assert [rule for rule, _ in serious(lint_text(text))] == ["yaml-invalid"]
