"""Kubernetes' verdicts against gpulint's, case by case.

Each ``tests/upstream/<family>/*.yaml`` file holds cases translated from one upstream test:

    family: dra-cel
    kubernetes: "1.37"            # the release the cases were read from
    source: kubernetes/dynamic-resource-allocation cel/compile_test.go
    test: TestCEL
    cases:
    - name: runtime-error-lookup-identifier     # the upstream case name
      ...inputs...                              # the family's input fields
      kubernetes: "match-error: no such key: noSuchAttr"   # the verdict Kubernetes reaches
      differs: why gpulint deliberately answers otherwise  # optional; then `gpulint:` pins its answer

A judge computes gpulint's verdict for one case in the same vocabulary. A case agrees when the
verdicts are equal; for error verdicts the Kubernetes text must appear in gpulint's message.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpulint.kube.cel import cost as cel_cost
from gpulint.kube.cel.engine import MAX_COST, CelEngine, CelProblem
from gpulint.kube.dra.allocation import slice_devices

ROOT = Path(__file__).parent


@dataclass
class Case:
    family: str
    file: str
    name: str
    data: dict[str, Any]
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.family}/{Path(self.file).stem}/{self.name}"

    @property
    def expected(self) -> str:
        return str(self.data["kubernetes"])

    @property
    def differs(self) -> str:
        return str(self.data.get("differs") or "")


def load_cases(root: Path = ROOT) -> list[Case]:
    cases = []
    for path in sorted(root.glob("*/*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        header = {k: v for k, v in document.items() if k != "cases"}
        for data in document["cases"]:
            cases.append(Case(document["family"], str(path.relative_to(root)), str(data["name"]), data, header))
    return cases


def agrees(expected: str, actual: str) -> bool:
    """Equal verdicts; an error verdict ("kind: text") agrees when gpulint's text contains Kubernetes'."""
    if expected == actual:
        return True
    kind, sep, text = expected.partition(": ")
    return bool(sep) and actual.startswith(kind + ": ") and text in actual[len(kind) + 2 :]


# --------------------------------------------------------------------------- dra-cel


def _dra_device(data: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "driver": data.get("driver", ""),
        "devices": [
            {
                "name": "device",
                "attributes": data.get("attributes") or {},
                "capacity": data.get("capacity") or {},
                **(
                    {"allowMultipleAllocations": data["allowMultipleAllocations"]}
                    if "allowMultipleAllocations" in data
                    else {}
                ),
            }
        ],
    }
    (device,) = slice_devices(spec)
    return device.cel_view


def judge_dra_cel(case: Case) -> str:
    """Compile as the API server does, estimate the cost, then match one device as the scheduler does."""
    engine = CelEngine()
    compiled = engine.compile(case.data["expression"])
    if isinstance(compiled, CelProblem):
        return f"compile-error: {compiled.message}" if compiled.evaluable else f"not-evaluable: {compiled.message}"
    if "cost" in case.data and compiled.checked is not None:
        found = cel_cost.estimate(compiled.checked, cel_cost.dra_sizes, MAX_COST).cost[1]
        if found != case.data["cost"]:
            return f"cost {found}"
    result = engine.evaluate(compiled, _dra_device(case.data))
    if isinstance(result, str):
        return f"match-error: {result}"
    return "match" if result else "no-match"


JUDGES: dict[str, Callable[[Case], str]] = {
    "dra-cel": judge_dra_cel,
}


def verdict(case: Case) -> str:
    return JUDGES[case.family](case)


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
