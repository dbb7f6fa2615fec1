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
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from gpulint.kube.cel import cost as cel_cost
from gpulint.kube.cel.engine import MAX_COST, QUANTITY_TAG, SEMVER_TAG, CelEngine, CelOptional, CelProblem
from gpulint.kube.cel.library import FORMAT_TAG
from gpulint.kube.dra.allocation import device_tolerations, slice_devices
from gpulint.kube.features import FeatureGates
from gpulint.kube.quantity import format_amount
from gpulint.kube.scheduler import NodeInfo, Taint, filter_reasons, pod_requests, pod_requirements
from gpulint.kube.validation.errors import FieldError
from gpulint.lint.config import Config
from gpulint.lint.engine import Engine, object_diagnostics
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import dra_extended_resources, load_inventory

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
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)  # libyaml: parsed at collection
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
    if case.data.get("environment") == "NewExpressions" and not isinstance(compiled, CelProblem):
        # a selector being stored: the environment follows the gates (upstream's Features)
        gates = FeatureGates.of(str(case.header["kubernetes"]), case.data.get("gates") or {})
        compiled = engine.new_expression_problem(case.data["expression"], gates) or compiled
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


# --------------------------------------------------------------------------- dra-allocator

NAMESPACE = "default"
# What makes gpulint say a claim will not be allocated (the API server refusing it counts: no allocation either;
# so does a gated field the API server drops while its gate is off: the claim is not allocated as written).
ALLOCATION_RULES = (
    "feature-gate-required",
    "claim-unsatisfiable",
    "cel-invalid",
    "device-class-unknown",
    "api-rejected",
    "claim-reference-invalid",
)


def _documents(*objects: dict[str, Any]) -> bytes:
    return yaml.safe_dump_all(list(objects), sort_keys=False).encode()


def _allocator_inventory(case: Case) -> list[dict[str, Any]]:
    """The node the upstream test allocates for, its classes, its ResourceSlices and, for its
    allocatedDevices (and allocatedCapacityDevices), a claim that holds them."""
    node = case.data.get("node", "node-1")
    labels = case.data.get("nodeLabels") or case.header["nodes"][node]  # upstream's node(name, region)
    objects: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": labels}}]
    for klass in case.data.get("classes", case.header["classes"]):
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": klass["name"]},
                "spec": klass["spec"],
            }
        )
    for index, spec in enumerate(case.data.get("slices") or []):
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"slice-{index}"},
                "spec": spec,
            }
        )
    held = case.data.get("allocated") or []
    shared = case.data.get("allocatedCapacity") or {}  # shared allocations: a shareID and the capacity they use
    if held or shared:
        results = [dict(zip(("driver", "pool", "device"), key.split("/")), request="held") for key in held]
        results += [
            {
                **dict(zip(("driver", "pool", "device"), key.split("/"))),
                "request": "held",
                "shareID": f"00000000-0000-4000-8000-{index:012d}",
                "consumedCapacity": capacity,
            }
            for index, (key, capacity) in enumerate(shared.items())
        ]
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "holder", "namespace": NAMESPACE},
                "spec": {"devices": {"requests": [{"name": "held", "exactly": {"deviceClassName": "class-a"}}]}},
                "status": {"allocation": {"devices": {"results": results}}},
            }
        )
    return objects


def _allocator_manifests(case: Case) -> list[dict[str, Any]]:
    """The claims to allocate; several are allocated together, for one pod."""
    claims = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": claim["name"], "namespace": NAMESPACE},
            "spec": {"devices": claim["devices"]},
        }
        for claim in case.data["claims"]
    ]
    if len(claims) < 2:
        return claims
    refs = [{"name": f"c{i}", "resourceClaimName": c["metadata"]["name"]} for i, c in enumerate(claims)]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "consumer", "namespace": NAMESPACE},
        "spec": {
            "resourceClaims": refs,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example.com/c:1",
                    "resources": {"claims": [{"name": r["name"]} for r in refs]},
                }
            ],
        },
    }
    return [*claims, pod]


def judge_dra_allocator(case: Case) -> str:
    """gpulint check on the claims with the node, classes and slices as the inventory."""
    inventory = load_inventory(
        ["inventory.yaml"], [Source("inventory.yaml", content=_documents(*_allocator_inventory(case)))]
    )
    config = Config(feature_gates=case.data.get("gates"))
    source = Source("claims.yaml", content=_documents(*_allocator_manifests(case)))
    findings = LintRun(config, [source], inventory).report().findings
    stopped = [f for f in findings if f.rule in ALLOCATION_RULES and f.severity in (Severity.ERROR, Severity.WARNING)]
    return "fails" if stopped else "allocates"


# --------------------------------------------------------------------------- node-affinity


def judge_node_affinity(case: Case) -> str:
    """The scheduler model's NodeAffinity filter: the pod's nodeSelector and required node affinity on one node."""
    node = NodeInfo(str(case.data.get("node", "node")), dict(case.data.get("labels") or {}), (), False, {}, {})
    return "matches" if pod_requirements(case.data["pod"] or {}).matches_affinity(node) else "no-match"


# --------------------------------------------------------------------------- taint-toleration


def judge_taint_toleration(case: Case) -> str:
    """The scheduler model's toleration (kube.scheduler.Toleration.tolerates) with the case's gates, or
    (``device: true``) the allocator's DRA device toleration."""
    raw = case.data["taint"]
    if case.data.get("device"):
        (toleration,) = device_tolerations([case.data["toleration"]])
        found = toleration.tolerates((str(raw.get("key", "")), str(raw.get("value", "")), str(raw.get("effect", ""))))
        return "tolerated" if found else "not-tolerated"
    gates = FeatureGates.of(str(case.header["kubernetes"]), case.data.get("gates") or {})
    pod = pod_requirements(
        {"tolerations": [case.data["toleration"]]}, gates.enabled("TaintTolerationComparisonOperators")
    )
    taint = Taint(str(raw.get("key", "")), str(raw.get("value", "")), str(raw.get("effect", "")))
    return "tolerated" if pod.tolerations[0].tolerates(taint) else "not-tolerated"


# --------------------------------------------------------------------------- cel-library


def _cel_value(value: Any) -> str:
    if isinstance(value, CelOptional):  # as cel-go prints it: optional.none(), optional.of(v)
        return f"optional.of({_cel_value(value.value)})" if value.present else "optional.none()"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):  # how the engine carries net.IP and net.CIDR
        text = bytes(value).decode()
        return f'cidr("{text}")' if "/" in text else f'ip("{text}")'
    if isinstance(value, str) and value.startswith(FORMAT_TAG):
        return f"format.{value[len(FORMAT_TAG) :]}()"
    if isinstance(value, list):
        return "[" + ", ".join(_cel_value(item) for item in value) + "]"
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return "kubernetes.Quantity"
    if isinstance(value, str) and value.startswith(SEMVER_TAG):
        return "kubernetes.Semver"
    return repr(value) if isinstance(value, float) else str(value)


def _library_test_sizes(path: tuple[str, ...]) -> tuple[int, int] | None:
    """The size estimator of apiserver pkg/cel/library cost_test.go (testCostEstimator): strings and
    bytes of unknown size are 0..12 long."""
    return (0, 12) if path in (("@type", "string"), ("@type", "bytes")) else None


def judge_cel_library(case: Case) -> str:
    """An expression in the environment policies get (the base environment's libraries at the case's
    Kubernetes version); with ``cost``, its estimated cost as cost_test.go's estimator gives it."""
    engine = CelEngine(variables=("object",), version=str(case.data.get("version", case.header["kubernetes"])))
    if "cost" in case.data:
        checked = engine.checked(case.data["expression"])
        if isinstance(checked, CelProblem):
            return f"compile-error: {checked.message}"
        low, high = cel_cost.estimate(checked, _library_test_sizes, MAX_COST).cost
        return f"cost: {low}..{high}"
    compiled = engine.compile(case.data["expression"])
    if isinstance(compiled, CelProblem):
        return f"compile-error: {compiled.message}" if compiled.evaluable else f"not-evaluable: {compiled.message}"
    value, error = engine.run(compiled, {})
    return f"runtime-error: {error}" if error else f"value: {_cel_value(value)}"


# --------------------------------------------------------------------------- api-validation

VALIDATION_RULES = ("api-rejected", "cel-invalid", "claim-reference-invalid")


def _field(path: tuple[Any, ...]) -> str:
    return FieldError(path, "").field


def judge_api_validation(case: Case) -> str:
    """The field paths the API server's validation names, as gpulint's rules report them (the paths of
    their diagnostics; a duplicate is named at the item, as validateSet does)."""
    config = Config()
    run = LintRun(config, [Source("object.yaml", content=_documents(case.data["object"]))])
    context = Engine(config, run.resolver, run.rules).context
    paths: set[str] = set()
    for obj in (found for parsed in run.files for found in parsed.objects):
        for rule in VALIDATION_RULES:
            check = run.rules[rule].check
            for diagnostic in object_diagnostics(run.rules[rule], check, obj, context) if check is not None else ():
                if diagnostic.severity in (None, Severity.ERROR):
                    paths.add(_field(tuple(diagnostic.path)))
    return "invalid: " + "; ".join(sorted(paths)) if paths else "valid"


# --------------------------------------------------------------------------- core-validation

# The rules that report what the API server refuses in a pod (each worded as it words it).
POD_REJECTION_RULES = ("api-rejected", "gpu-request-without-limit", "gpu-non-integer")


def judge_core_validation(case: Case) -> str:
    """gpulint check on the Pod: valid, or "invalid: " and its rejection findings' messages and notes
    (upstream's expectedError is a text that appears in the API server's errors)."""
    source = Source("pod.yaml", content=_documents(case.data["object"]))
    findings = LintRun(Config(), [source]).report().findings
    messages = sorted(
        "; ".join((f.message, *f.notes))  # the API server's own words may be in the notes
        for f in findings
        if f.rule in POD_REJECTION_RULES and f.severity is Severity.ERROR
    )
    return "invalid: " + " | ".join(messages) if messages else "valid"


# --------------------------------------------------------------------------- pod-requests


def judge_pod_requests(case: Case) -> str:
    """The scheduler model's effective pod request (kube.scheduler.pod_requests)."""
    requests = pod_requests(case.data["pod"])
    return "; ".join(f"{name}={format_amount(amount)}" for name, amount in sorted(requests.items()))


# --------------------------------------------------------------------------- scheduler


def judge_scheduler(case: Case) -> str:
    """The scheduler model's filters (kube.scheduler.filter_reasons: unschedulable, TaintToleration,
    NodeAffinity, NodeResourcesFit) for one pod on one node that already runs ``pods``; with
    ``deviceClasses``, the extended resources they back are the DRA plugin's where the node has none."""
    node = NodeInfo.from_object(case.data["node"])
    for spec in case.data.get("pods") or []:
        for name, amount in pod_requests(spec).items():
            node.used[name] = node.used.get(name, Fraction(0)) + amount
        node.pod_count += 1
    gates = FeatureGates.of(str(case.header["kubernetes"]), case.data.get("gates") or {})
    pod = pod_requirements(case.data["pod"] or {}, gates.enabled("TaintTolerationComparisonOperators"))
    classes = case.data.get("deviceClasses", case.header.get("deviceClasses")) or []
    if classes and gates.enabled("DRAExtendedResource"):
        # the cluster's DeviceClasses, as gpu_pod_requirements gives them to the filters
        backed = dra_extended_resources({c["metadata"]["name"]: SimpleNamespace(data=c) for c in classes})
        pod = replace(pod, dra_resources=frozenset(backed) & frozenset(pod.requests))
    reasons = filter_reasons(pod, node, now=True)
    return "unschedulable: " + ", ".join(reasons) if reasons else "fits"


JUDGES: dict[str, Callable[[Case], str]] = {
    "scheduler": judge_scheduler,
    "pod-requests": judge_pod_requests,
    "api-validation": judge_api_validation,
    "core-validation": judge_core_validation,
    "cel-library": judge_cel_library,
    "taint-toleration": judge_taint_toleration,
    "node-affinity": judge_node_affinity,
    "dra-cel": judge_dra_cel,
    "dra-allocator": judge_dra_allocator,
}


def verdict(case: Case) -> str:
    return JUDGES[case.family](case)


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
