"""Numbers written as text in manifests (flags, annotations, labels, ``host:slots``) are read as Kubernetes'
Go code reads them: a superscript digit or a number of thousands of digits is "not a number", never an
internal error (``str.isdigit`` takes ``"²"``, which ``int`` refuses; Python converts at most 4,300 digits)."""

from __future__ import annotations

import pytest
from conftest import lint_text
from hypothesis import given
from hypothesis import strategies as st

from gpulint.kube.fields import counted, decimal

HUGE = "9" * 5000


@given(st.text(max_size=24))
def test_a_decimal_is_ascii_digits_an_int64_holds(word):
    expected = int(word) if word and len(word) <= 18 and all("0" <= c <= "9" for c in word) else None
    assert decimal(word) == expected
    assert counted(word) == (expected or None)


TORCHRUN = """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: train
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: train
            image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
            command: ["torchrun", "--nproc_per_node=NPROC", "train.py"]
            resources:
              limits:
                nvidia.com/gpu: 2
    """
MPIRUN = TORCHRUN.replace(
    '["torchrun", "--nproc_per_node=NPROC", "train.py"]',
    '["mpirun", "-H", "worker-0:NPROC,worker-1:2", "python", "x.py"]',
)
KNATIVE = """
    apiVersion: serving.knative.dev/v1
    kind: Service
    metadata:
      name: llm
    spec:
      template:
        metadata:
          annotations:
            autoscaling.knative.dev/min-scale: "NPROC"
        spec:
          containers:
          - image: vllm/vllm-openai:v0.6.3
            resources:
              limits:
                nvidia.com/gpu: 1
    """


@pytest.mark.parametrize("manifest", [TORCHRUN, MPIRUN, KNATIVE], ids=["torchrun", "mpirun-hosts", "knative-min-scale"])
@pytest.mark.parametrize("number", ["\u00b2", HUGE])
def test_a_number_no_int_holds_is_no_internal_error(manifest, number):
    findings = lint_text(manifest.replace("NPROC", number))
    assert not [f for f in findings if "internal error" in f.message], [f.message for f in findings]


def test_a_written_number_still_counts():
    """The same torchrun with 4 processes on 2 GPUs is still said (the fix reads numbers, it does not drop them)."""
    findings = lint_text(TORCHRUN.replace("NPROC", "4"))
    assert [f.rule for f in findings if f.rule == "parallelism-mismatch"] == ["parallelism-mismatch"]
