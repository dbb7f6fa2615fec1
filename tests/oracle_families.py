"""The oracle's case families: hypothesis strategies biased to the edges, and gpulint's answer to each case
compared with Kubernetes' (tests/oracle). ``compare_*`` returns the disagreements, each a sentence; the
deliberate differences of docs/oracle.md are left out here, each at the line that names it."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from gpulint.kube.cel import cost as cel_cost
from gpulint.kube.cel.engine import MAX_COST, NO_VERDICT, CelEngine, CelProblem
from gpulint.kube.dra.allocation import slice_devices
from gpulint.kube.features import FeatureGates, stage
from gpulint.kube.quantity import MAX_EXPONENT, MAX_TEXT, QuantityError, parse_quantity
from gpulint.kube.scheduler import ClusterModel, NodeInfo, filter_reasons, pod_requirements

# --------------------------------------------------------------------------- quantities

CASES = int(os.environ.get("ORACLE_CASES", "2000"))  # per family: 2,000 in CI
# the dra allocate family: 500 in CI (its cases cost about four of the others': docs/oracle.md)
ALLOCATE_CASES = int(os.environ.get("ORACLE_CASES", "500"))


def family_settings(batch: int, cases: int = CASES) -> settings:
    """``batch`` cases per example (one round trip; a batch must stay within hypothesis' bytes per example)."""
    return settings(ORACLE_SETTINGS, max_examples=-(-cases // batch))


ORACLE_SETTINGS = settings(
    deadline=None,
    derandomize=os.environ.get("CI") == "true" or os.environ.get("ORACLE_DERANDOMIZE") == "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    database=None,
    # no shrinking: each step would be a round trip of a whole batch; the failure prints each disagreeing
    # case on its own, which is small already (it becomes a regression test where it shows a gpulint bug)
    phases=[Phase.explicit, Phase.generate],
)


_DIGITS = st.text("0123456789", min_size=0, max_size=24)
_LONG_DIGITS = st.integers(0, 10**40).map(str)
# past 100 characters (ParseQuantity has no length limit): long runs, and zero runs a tiny exponent scales back
_HUGE_DIGITS = st.one_of(
    st.integers(10**99, 10**400).map(str),
    st.builds(lambda n, tail: "1" + "0" * n + tail, st.integers(90, 300), st.sampled_from(["", "1", "9"])),
    st.text("0123456789", min_size=100, max_size=300),
)
_SUFFIXES = st.sampled_from(
    # every suffix, then the near misses (case, doubled letters, a bare exponent letter)
    ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    + ["K", "ki", "mi", "Kii", "i", "e", "E", "e+", "e-", "µ", "mm", "kk", "Mn", "1", " "]
)
_EXPONENTS = st.builds(
    lambda letter, sign, digits: f"{letter}{sign}{digits}",
    st.sampled_from(["e", "E"]),
    st.sampled_from(["", "+", "-"]),
    st.one_of(
        st.integers(0, 30).map(str),
        st.sampled_from(["63", "64", "65", "100", "1000", "007", "0", "-150", "-250", "-300", "200"]),
        # past int32, wrapping to small exponents (ParseQuantity converts the int64 to int32), and past int64
        # (ErrSuffix). Not near -2^31 or 2^31: Kubernetes itself builds numbers of 2^31 digits there
        st.builds(
            lambda turns, small: str(turns * 2**32 + small), st.sampled_from([-2, -1, 1, 2]), st.integers(-12, 12)
        ),
        st.sampled_from(["9223372036854775807", "9223372036854775808", "18446744073709551617", "9" * 30]),
    ),
)
_NUMBERS = st.one_of(
    _DIGITS,
    st.builds(lambda a, b: f"{a}.{b}", _DIGITS, _DIGITS),
    _LONG_DIGITS,
    st.builds(lambda a, b: f"{a}.{b}", _LONG_DIGITS, _LONG_DIGITS),
    _HUGE_DIGITS,
    st.builds(lambda a, b: f"{a}.{b}", _HUGE_DIGITS, _HUGE_DIGITS),
    st.sampled_from(["0", "1", "9223372036854775807", "9223372036854775808", "0.000000001", "0.0000000001"]),
)
QUANTITY_TEXT = st.one_of(
    st.builds(
        lambda sign, number, suffix: sign + number + suffix,
        st.sampled_from(["", "", "+", "-", "--", "+-"]),
        _NUMBERS,
        st.one_of(_SUFFIXES, _EXPONENTS),
    ),
    st.text(max_size=8),  # anything at all, unicode digits included
    st.builds(lambda pad, text: pad + text + pad, st.sampled_from([" ", "\t"]), st.sampled_from(["1", "1Gi"])),
)
QUANTITY_CASE = st.fixed_dictionaries({"text": QUANTITY_TEXT, "other": QUANTITY_TEXT})


def _huge_exponent(text: str) -> bool:
    """Past gpulint's MAX_EXPONENT as ParseQuantity reads the exponent: an int64 wrapped to int32."""
    found = re.search(r"[eE]([+-]?[0-9]+)$", text)
    if found is None or not -(2**63) <= int(found.group(1)) < 2**63:
        return False
    return (int(found.group(1)) + 2**31) % 2**32 - 2**31 > MAX_EXPONENT


def _decimal(text: str) -> Fraction:
    return Fraction(Decimal(text))


def compare_quantity(case: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    text = case["text"]
    if len(text) > MAX_TEXT or _huge_exponent(text):  # docs/oracle.md: gpulint's bounds
        return []
    try:
        mine = parse_quantity(text)
    except QuantityError as exc:
        if answer["ok"]:
            return [f"{text!r}: gpulint refuses it ({exc}), Kubernetes reads {answer['canonical']}"]
        return []
    if not answer["ok"]:
        return [f"{text!r}: gpulint reads {mine.value}, Kubernetes refuses it ({answer['error']})"]
    out = []
    theirs = _decimal(answer["decimal"])
    if mine.value != theirs:
        out.append(f"{text!r}: gpulint reads {mine.value}, Kubernetes {answer['decimal']} ({answer['canonical']})")
    # docs/oracle.md: MilliValue is an int64 in Kubernetes (it wraps past it) and odd for negative values
    if 0 <= mine.value * 1000 < 2**63 and mine.milli_value() != answer["milli"]:
        out.append(f"{text!r}: MilliValue gpulint {mine.milli_value()}, Kubernetes {answer['milli']}")
    if answer.get("cmp") is not None and len(case["other"]) <= MAX_TEXT and not _huge_exponent(case["other"]):
        try:
            other = parse_quantity(case["other"]).value
        except QuantityError as exc:
            return [*out, f"{case['other']!r}: gpulint refuses it ({exc}), Kubernetes compares it"]
        mine_cmp = (mine.value > other) - (mine.value < other)
        if mine_cmp != answer["cmp"]:
            out.append(f"{text!r} vs {case['other']!r}: Cmp gpulint {mine_cmp}, Kubernetes {answer['cmp']}")
    return out


# --------------------------------------------------------------------------- scheduling

LABEL_KEYS = ["nvidia.com/gpu.product", "zone", "gpu", "kubernetes.io/hostname", "node.kubernetes.io/instance-type"]
LABEL_VALUES = ["", "a", "A100", "H100", "10", "-3", "007", "2", "1e3", "x_y.z", "ü"]
NODE_NAMES = ["node-a", "node-b", "node-c", "gpu-1", "gpu-2", "cpu-1"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
RESOURCES = ["cpu", "memory", "nvidia.com/gpu", "example.com/foo", "ephemeral-storage"]
_AMOUNTS = {
    "cpu": ["0", "100m", "500m", "1", "2", "3.5", "8", "64", "1001m"],
    "memory": ["0", "1Ki", "1Gi", "16Gi", "17179869184", "1G", "512Mi", "80Gi"],
    "nvidia.com/gpu": ["0", "1", "2", "4", "8", "16"],
    "example.com/foo": ["0", "1", "3", "10"],
    "ephemeral-storage": ["0", "1Gi", "100Gi"],
    "pods": ["110", "110", "110", "2", "1", "0"],
}

_label_value = st.sampled_from(LABEL_VALUES)
_labels = st.dictionaries(st.sampled_from(LABEL_KEYS), _label_value, max_size=4)
_taint = st.fixed_dictionaries(
    {
        "key": st.sampled_from(LABEL_KEYS + ["node.kubernetes.io/unschedulable", "dedicated"]),
        "effect": st.sampled_from(EFFECTS),
    },
    optional={"value": _label_value},
)


def _resource_list(names: list[str]) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.sampled_from(names), st.none()).flatmap(
        lambda chosen: st.fixed_dictionaries({name: st.sampled_from(_AMOUNTS[name]) for name in chosen})
    )


# a kubelet always reports the pods a node holds (a node without would be full: "Too many pods")
_node_resources = st.builds(
    lambda listed, pods: {**listed, "pods": pods}, _resource_list(RESOURCES), st.sampled_from(_AMOUNTS["pods"])
)
_node_status = st.one_of(
    st.fixed_dictionaries({"allocatable": _node_resources}),
    st.fixed_dictionaries({"capacity": _node_resources}),
    st.fixed_dictionaries({"capacity": _node_resources, "allocatable": _node_resources}),
)


def _node(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries({"name": st.just(name)}, optional={"labels": _labels}),
            "spec": st.fixed_dictionaries(
                {}, optional={"unschedulable": st.booleans(), "taints": st.lists(_taint, max_size=3)}
            ),
            "status": _node_status,
        }
    )


NODES = st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=5, unique=True).flatmap(
    lambda names: st.tuples(*(_node(name) for name in names)).map(list)
)

_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "in", ""]
_requirement = st.fixed_dictionaries(
    {"key": st.sampled_from(LABEL_KEYS + ["", "bad key", "a/b/c"]), "operator": st.sampled_from(_OPERATORS)},
    optional={"values": st.lists(_label_value, max_size=3)},
)
_field_requirement = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["metadata.name", "metadata.name", "spec.nodeName"]),
        "operator": st.sampled_from(_OPERATORS),
    },
    optional={"values": st.lists(st.sampled_from(NODE_NAMES + ["nowhere"]), max_size=2)},
)
_term = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(_requirement, max_size=3),
        "matchFields": st.lists(_field_requirement, max_size=2),
    },
)
_affinity = st.fixed_dictionaries(
    {
        "nodeAffinity": st.fixed_dictionaries(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                    {"nodeSelectorTerms": st.lists(_term, max_size=3)}
                )
            }
        )
    }
)
_toleration = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(LABEL_KEYS + ["node.kubernetes.io/unschedulable", "dedicated", ""]),
        "operator": st.sampled_from(["Equal", "Exists", "Gt", "Lt", ""]),
        "value": _label_value,
        "effect": st.sampled_from(EFFECTS + [""]),
    },
)
_container_resources = st.fixed_dictionaries(
    {}, optional={"requests": _resource_list(RESOURCES), "limits": _resource_list(RESOURCES)}
)


def _containers(prefix: str, sidecars: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    container = st.fixed_dictionaries(
        {"resources": _container_resources},
        optional={"restartPolicy": st.just("Always")} if sidecars else {},
    )
    return st.lists(container, max_size=3).map(
        lambda items: [{"name": f"{prefix}{i}", "image": "img", **item} for i, item in enumerate(items)]
    )


POD_SPEC = st.fixed_dictionaries(
    {"containers": _containers("c", False).filter(bool)},
    optional={
        "initContainers": _containers("i", True),
        "nodeSelector": st.dictionaries(st.sampled_from(LABEL_KEYS), _label_value, max_size=2),
        "affinity": _affinity,
        "tolerations": st.lists(_toleration, max_size=3),
        "overhead": _resource_list(["cpu", "memory"]),
        "nodeName": st.sampled_from(NODE_NAMES + ["nowhere"]),
    },
)
SCHEDULE_CASE = st.fixed_dictionaries(
    {
        "pod": st.fixed_dictionaries({"metadata": st.just({"name": "p", "namespace": "default"}), "spec": POD_SPEC}),
        "nodes": NODES,
    }
)


def gpulint_schedule(case: dict[str, Any], taint_comparisons: bool) -> tuple[dict[str, list[str]], str]:
    """Per node, the reasons gpulint's model gives (empty: fits); and its summary when no node fits."""
    nodes = [NodeInfo.from_object(node) for node in case["nodes"]]
    pod = pod_requirements(case["pod"]["spec"], taint_comparisons)
    reasons = {node.name: sorted(filter_reasons(pod, node, now=False)) for node in nodes}
    result = ClusterModel(nodes).evaluate(pod)
    return reasons, "" if result.fits else result.summary()


def _node_counts_pods(node: dict[str, Any]) -> bool:
    status = node.get("status") or {}
    return "pods" in (status.get("allocatable") if "allocatable" in status else status.get("capacity") or {})


def compare_schedule(case: dict[str, Any], answer: dict[str, Any], taint_comparisons: bool) -> list[str]:
    if not all(_node_counts_pods(node) for node in case["nodes"]):
        return []  # docs/oracle.md: a node with no pods count (a partial inventory) is not "Too many pods"
    mine, summary = gpulint_schedule(case, taint_comparisons)
    bound = case["pod"]["spec"].get("nodeName")
    if bound:
        # docs/oracle.md: a pod with spec.nodeName never meets the scheduler; gpulint models the kubelet that
        # admits it (past cordons and NoSchedule taints). Both refuse every other node.
        return [f"node {name}: gpulint fits it" for name in answer["nodes"] if name != bound and not mine.get(name)]
    out = []
    for name, reasons in answer["nodes"].items():
        if mine.get(name) != reasons:
            out.append(f"node {name}: gpulint {mine.get(name)}, Kubernetes {reasons}")
    if summary != answer["summary"]:
        out.append(f"summary: gpulint {summary!r}, Kubernetes {answer['summary']!r}")
    return out


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# --------------------------------------------------------------------------- DRA CEL selectors

DRIVER = "gpu.example.com"
_DOMAINS = [DRIVER, "other.example.com", "dra.k8s.io"]
_ATTRIBUTE_NAMES = ["model", "index", "healthy", "version", "uuid"]
_CAPACITY_NAMES = ["memory", "cores"]
_INT_EDGES = [0, 1, -1, 3, 2**31, 2**63 - 1, -(2**63)]
_VERSIONS = ["1.0.0", "1.2.3", "2.0.0-rc.1", "0.0.1+build.5", "10.20.30"]
_attribute_value = st.one_of(
    st.fixed_dictionaries({"string": st.sampled_from(["a100", "A100", "", "ü-100", "x" * 64])}),
    st.fixed_dictionaries({"int": st.one_of(st.sampled_from(_INT_EDGES), st.integers(-(2**63), 2**63 - 1))}),
    st.fixed_dictionaries({"bool": st.booleans()}),
    st.fixed_dictionaries({"version": st.sampled_from(_VERSIONS)}),
    # list attributes (DRAListTypeAttributes): each a CEL list of the scalars
    st.fixed_dictionaries({"versions": st.lists(st.sampled_from(_VERSIONS), min_size=1, max_size=3)}),
    st.fixed_dictionaries({"strings": st.lists(st.sampled_from(["a100", "1.2.3", ""]), min_size=1, max_size=3)}),
    st.fixed_dictionaries({"ints": st.lists(st.sampled_from(_INT_EDGES), min_size=1, max_size=3)}),
)


def _qualified(names: list[str]) -> st.SearchStrategy[str]:
    # never both "model" and "<driver>/model": one device may not list a name twice (ResourceSlice validation)
    return st.builds(
        lambda domain, name: name if domain == "" else f"{domain}/{name}",
        st.sampled_from(["", "", "other.example.com"]),
        st.sampled_from(names),
    )


_DEVICE = st.fixed_dictionaries(
    {
        "driver": st.just(DRIVER),
        "attributes": st.dictionaries(_qualified(_ATTRIBUTE_NAMES), _attribute_value, max_size=4),
        "capacity": st.dictionaries(
            _qualified(_CAPACITY_NAMES),
            st.fixed_dictionaries({"value": st.sampled_from(["0", "1", "40Gi", "80Gi", "1500m", "16", "1e3"])}),
            max_size=2,
        ),
    },
    optional={"allowMultipleAllocations": st.booleans()},
)

_dom = st.sampled_from(_DOMAINS)
_attr = st.builds(lambda d, n: f'device.attributes["{d}"].{n}', _dom, st.sampled_from(_ATTRIBUTE_NAMES))
_cap = st.builds(lambda d, n: f'device.capacity["{d}"].{n}', _dom, st.sampled_from(_CAPACITY_NAMES))
_literal = st.sampled_from(['"a100"', '"A100"', '""', "1", "3", "-1", "true", "9223372036854775807", "1.5", "'ü-100'"])
_quantity_literal = st.sampled_from(
    ['"1"', '"40Gi"', '"80Gi"', '"1500m"', '"0"', '"bad"', '"1e3"', f'"{"1" * 121}"', f'"1{"0" * 250}e-250"']
)
_ATOM = st.one_of(
    st.builds(lambda a, lit, op: f"{a} {op} {lit}", _attr, _literal, st.sampled_from(["==", "!=", ">", "<", ">="])),
    st.builds(lambda a: f"has({a})", _attr),
    st.builds(lambda d, n: f'"{n}" in device.attributes["{d}"]', _dom, st.sampled_from(_ATTRIBUTE_NAMES)),
    st.builds(
        lambda c, q, op: f"{c}.compareTo(quantity({q})) {op} 0",
        _cap,
        _quantity_literal,
        st.sampled_from([">=", "<", "=="]),
    ),
    st.builds(
        lambda c, q, f: f"{c}.{f}(quantity({q}))",
        _cap,
        _quantity_literal,
        st.sampled_from(["isGreaterThan", "isLessThan"]),
    ),
    st.builds(lambda a, v: f'{a}.isGreaterThan(semver("{v}"))', _attr, st.sampled_from(["1.2.3", "0.0.0", "bad"])),
    # what a version (kubernetes.Semver) has and lacks: equality, membership, map keys, size, +, fields
    st.builds(lambda a, op: f'{a} {op} semver("1.2.3")', _attr, st.sampled_from(["==", "!="])),
    # `in` a list of constants or a map literal, and map keys, hash a version: the whole evaluation fails in
    # Kubernetes, whatever ||, && or ?: around it would decide
    st.builds(
        lambda a, items: f"{a} in {items}",
        _attr,
        st.sampled_from(['[semver("1.2.3")]', "[]", '["1.2.3"]', '{"1.2.3": 1}', "[1, 2]"]),
    ),
    st.builds(lambda a: f"{{{a}: 1}}.size() == 1", _attr),
    # literals of mixed types do not compile (cel.HomogeneousAggregateLiterals)
    st.builds(lambda a, b: f"[{a}, {b}].size() == 2", st.one_of(_attr, _literal), st.one_of(_attr, _literal)),
    st.builds(lambda a, b: f'{{"k": {a}, "j": {b}}}.size() == 2', st.one_of(_attr, _literal), _literal),
    st.sampled_from(['[[1], ["a"]].size() == 2', "[dyn(1), 2].size() == 2", "[[], [1]].size() == 2"]),
    st.builds(
        lambda a, shape: shape.format(a=a),
        _attr,
        st.sampled_from(["size({a}) > 0", '{a} + "x" != ""', "has({a}.x)", '[{a}] == ["1.2.3"]']),
    ),
    st.builds(lambda a, v: f"{a}.includes({v})", _attr, st.sampled_from(['semver("1.2.3")', '"a100"', "3"])),
    st.builds(lambda a: f'{a}.exists(x, x == "1.2.3")', _attr),
    st.builds(lambda a, f: f'{a}.{f}("a")', _attr, st.sampled_from(["startsWith", "endsWith", "contains", "matches"])),
    st.builds(lambda d: f'size(device.attributes["{d}"]) > 1', _dom),
    st.builds(lambda d: f'device.attributes["{d}"].exists(k, k.startsWith("m"))', _dom),
    st.builds(lambda d: f'device.attributes["{d}"].all(k, k != "")', _dom),
    st.builds(lambda a, b: f"{a} + {b} > 0", st.sampled_from(_INT_EDGES), st.sampled_from(_INT_EDGES)),
    st.builds(lambda a: f"1 / {a} == 0", st.sampled_from([0, 1, -1])),
    st.sampled_from(
        [
            'device.driver == "gpu.example.com"',
            "device.allowMultipleAllocations",
            "true",
            "false",
            "[1, 2, 3].all(x, x > 0)",
            '"a" + "b" == "ab"',
            "1",
            '"x"',
            'device.attributes["gpu.example.com"].model',
            "device.driver ==",
            "(",
            "device.unknown == 1",
            "device.attributes.model == 1",
            'device.attributes["gpu.example.com"]["model"] == "a100"',
            '["a", "b"].map(x, x + x).size() == 2',
            'int(device.attributes["gpu.example.com"].index) > 0',
        ]
    ),
)
CEL_EXPRESSION = st.recursive(
    _ATOM,
    lambda inner: st.one_of(
        st.builds(lambda a, b, op: f"({a}) {op} ({b})", inner, inner, st.sampled_from(["&&", "||"])),
        st.builds(lambda a: f"!({a})", inner),
        st.builds(lambda a, b, c: f"({a}) ? ({b}) : ({c})", inner, inner, inner),
    ),
    max_leaves=4,
)
CEL_CASE = st.builds(lambda expression, device: {"expression": expression, **device}, CEL_EXPRESSION, _DEVICE)


def cel_device(case: dict[str, Any]) -> dict[str, Any]:
    device = {"name": "d", "attributes": case["attributes"], "capacity": case["capacity"]}
    if "allowMultipleAllocations" in case:
        device["allowMultipleAllocations"] = case["allowMultipleAllocations"]
    (found,) = slice_devices({"driver": case["driver"], "devices": [device]})
    return found.cel_view


_MAP_KEY = re.compile(r'\{device\.attributes\["([^"]+)"\]\.(\w+): ')


def _list_keyed_map(case: dict[str, Any]) -> bool:
    """Whether the expression builds a map literal keyed by one of the device's list attributes."""
    for domain, name in _MAP_KEY.findall(case["expression"]):
        value = case["attributes"].get(name if domain == case["driver"] else f"{domain}/{name}", {})
        if any(kind in value for kind in ("versions", "strings", "ints")):
            return True
    return False


def compare_cel(case: dict[str, Any], answer: dict[str, Any], engine: CelEngine, gates: FeatureGates) -> list[str]:
    expression = case["expression"]
    compiled = engine.compile(expression)
    if isinstance(compiled, CelProblem) and not compiled.evaluable:
        return []  # docs/oracle.md: gpulint says it cannot evaluate this offline (and so claims nothing)
    over_cost = answer.get("cost") is not None and answer["cost"] > MAX_COST
    out = []
    # creating a claim with the selector: the API server's verdict
    created = compiled if isinstance(compiled, CelProblem) else engine.new_expression_problem(expression, gates)
    if bool(created) != bool(answer["create_error"]):
        mine = created.message if created else "accepts it"
        out.append(f"create {expression!r}: gpulint {mine!r}, Kubernetes {answer['create_error'] or 'accepts it'!r}")
    # the stored selector: compile, cost, evaluation on the device as the scheduler does
    if isinstance(compiled, CelProblem):
        if not answer["compile_error"] and not over_cost:
            out.append(f"compile {expression!r}: gpulint {compiled.message!r}, Kubernetes compiles it")
        return out
    if answer["compile_error"]:
        return [*out, f"compile {expression!r}: gpulint compiles it, Kubernetes {answer['compile_error']!r}"]
    if compiled.checked is not None:
        cost = cel_cost.estimate(compiled.checked, cel_cost.dra_sizes, MAX_COST).cost[1]
        if cost != answer.get("cost"):
            out.append(f"cost {expression!r}: gpulint {cost}, Kubernetes {answer['cost']}")
    result = engine.evaluate(compiled, cel_device(case))
    theirs = answer.get("match")
    if isinstance(result, str) and result.startswith(NO_VERDICT):
        return out  # no verdict: gpulint claims nothing on this device
    if isinstance(result, str) and _list_keyed_map(case):
        return out  # docs/oracle.md, a deliberate difference: cel-cpp has no map keyed by a list
    if isinstance(result, str):
        if theirs is not None:
            out.append(f"evaluate {expression!r}: gpulint error {result!r}, Kubernetes {theirs}")
    elif theirs is None:
        out.append(f"evaluate {expression!r}: gpulint {result}, Kubernetes error {answer.get('eval_error')!r}")
    elif result != theirs:
        out.append(f"evaluate {expression!r}: gpulint {result}, Kubernetes {theirs}")
    return out


# --------------------------------------------------------------------------- API validation of pods

_RESOURCE_NAMES = [
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "example.com/foo",
    "hugepages-2Mi",
    "gpu",
    "kubernetes.io/gpu",
    "requests.nvidia.com/gpu",
    "example.com/",
    "a/b/c",
    "nvidia.com/gpu ",
    "ünicode.com/gpu",
    "x" * 64 + ".com/gpu",
]
_VALIDATED_AMOUNTS = ["0", "1", "2", "0.5", "500m", "1Gi", "1.5", "100m", "8"]
_validated_resources = st.fixed_dictionaries(
    {},
    optional={
        "requests": st.dictionaries(st.sampled_from(_RESOURCE_NAMES), st.sampled_from(_VALIDATED_AMOUNTS), max_size=3),
        "limits": st.dictionaries(st.sampled_from(_RESOURCE_NAMES), st.sampled_from(_VALIDATED_AMOUNTS), max_size=3),
    },
)
_LABEL_KEYS_ODD = LABEL_KEYS + ["", "-bad", "a/b/c", "x" * 64, "example.com/" + "y" * 63, "ü", "UPPER.example.com/k"]
_LABEL_VALUES_ODD = LABEL_VALUES + ["-x", "x-", "a b", "z" * 64, "z" * 63]
_odd_requirement = st.fixed_dictionaries(
    {"key": st.sampled_from(_LABEL_KEYS_ODD), "operator": st.sampled_from(_OPERATORS)},
    optional={"values": st.lists(st.sampled_from(_LABEL_VALUES_ODD), max_size=3)},
)
_odd_term = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(_odd_requirement, max_size=2),
        "matchFields": st.lists(_field_requirement, max_size=2),
    },
)
_odd_toleration = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(_LABEL_KEYS_ODD),
        "operator": st.sampled_from(["Equal", "Exists", "Gt", "Lt", "", "exists"]),
        "value": st.sampled_from(_LABEL_VALUES_ODD + ["5", "-5", "05", "+5"]),
        "effect": st.sampled_from(EFFECTS + ["", "NoScheduleX"]),
        "tolerationSeconds": st.sampled_from([0, 60, -1]),
    },
)
VALIDATED_POD_SPEC = st.fixed_dictionaries(
    {
        "containers": st.lists(st.fixed_dictionaries({"resources": _validated_resources}), min_size=1, max_size=2).map(
            lambda items: [{"name": f"c{i}", "image": "img", **item} for i, item in enumerate(items)]
        )
    },
    optional={
        "nodeSelector": st.dictionaries(
            st.sampled_from(_LABEL_KEYS_ODD), st.sampled_from(_LABEL_VALUES_ODD), max_size=2
        ),
        "affinity": st.fixed_dictionaries(
            {
                "nodeAffinity": st.fixed_dictionaries(
                    {},
                    optional={
                        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                            {"nodeSelectorTerms": st.lists(_odd_term, max_size=2)}
                        ),
                        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
                            st.fixed_dictionaries(
                                {"weight": st.sampled_from([0, 1, 100, 101]), "preference": _odd_term}
                            ),
                            max_size=2,
                        ),
                    },
                )
            }
        ),
        "tolerations": st.lists(_odd_toleration, max_size=3),
    },
)
VALIDATE_CASE = st.fixed_dictionaries(
    {
        "pod": st.fixed_dictionaries(
            {
                "apiVersion": st.just("v1"),
                "kind": st.just("Pod"),
                "metadata": st.fixed_dictionaries(
                    {"name": st.just("p"), "namespace": st.just("default")},
                    optional={
                        "labels": st.dictionaries(
                            st.sampled_from(_LABEL_KEYS_ODD), st.sampled_from(_LABEL_VALUES_ODD), max_size=2
                        )
                    },
                ),
                "spec": VALIDATED_POD_SPEC,
            }
        )
    }
)

# the rules that say the API server refuses a Pod (api-rejected words its field errors; the other two are
# validateResourceRequirements' extended-resource checks)
VALIDATION_RULES = frozenset({"api-rejected", "gpu-non-integer", "gpu-request-without-limit"})


def gpulint_rejections(pod: dict[str, Any], gates: dict[str, bool]) -> list[str]:
    """The messages of gpulint's findings that say the API server refuses ``pod``."""
    from conftest import lint_text  # the test suite's way to lint one file (tests/conftest.py)

    from gpulint.lint.config import Config

    config = Config(feature_gates=dict(gates), select=tuple(sorted(VALIDATION_RULES)))
    found = lint_text(yaml.safe_dump(pod, allow_unicode=True), config=config)
    return [f"{f.rule}: {f.message}" for f in found if f.rule in VALIDATION_RULES]


_OUT_OF_SCOPE = re.compile(
    r"must be less than or equal to (cpu|memory|ephemeral-storage|hugepages-\S+|\S*kubernetes\.io/\S+) limit"
    r"|must be equal to hugepages-\S+ limit"
    r"|^Limit must be set for non overcommitable resources$|is not positive integer multiple of hugepages-"
    r"|^HugePages require cpu or memory$"
)


def compare_validate(case: dict[str, Any], answer: dict[str, Any], gates: dict[str, bool]) -> list[str]:
    mine = gpulint_rejections(case["pod"], gates)
    theirs = [f"{e['field']}: {e['type']}: {e['bad_value']}: {e['detail']}" for e in answer["errors"]]
    if not mine and all(_OUT_OF_SCOPE.search(e["detail"]) for e in answer["errors"]):
        theirs = []  # docs/oracle.md: checks gpulint leaves to the API server (a miss, never a false error)
    if bool(mine) != bool(theirs):
        return [f"gpulint {mine or 'accepts it'}, Kubernetes {theirs or 'accepts it'}"]
    return []


# --------------------------------------------------------------------------- feature gate defaults


def compare_gate_defaults(version: str, answer: dict[str, Any]) -> list[str]:
    out = []
    for gate, found in answer.items():
        stage_name, default = stage(gate, version)
        if not found["known"]:
            out.append(f"{gate}: gpulint knows it ({stage_name}), Kubernetes {version} has no such gate")
        elif default != found["default"]:
            out.append(f"{gate}: gpulint default {default}, Kubernetes {version} {found['default']}")
        elif stage_name.upper() != (found["prerelease"] or "GA"):
            out.append(f"{gate}: gpulint stage {stage_name}, Kubernetes {version} {found['prerelease'] or 'GA'}")
    return out


# --------------------------------------------------------------------------- scheduling.k8s.io gangs

# Workload and PodGroup (scheduling.k8s.io v1beta1, v1alpha3 in 1.37): served when GenericWorkload is on. Each
# field is valid most of the time and now and then one of its edges (a bad value, null, a wrong JSON type), so
# that most objects are accepted or refused for one reason: a false error hides behind no other error.
_GANG_API_VERSIONS = ["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"]
_BAD_TYPES = ["1", True, 1.5, [], {}]


def _mostly(valid: list[Any], edges: list[Any], odds: int = 12) -> st.SearchStrategy[Any]:
    """A valid value, or once in ``odds`` draws an edge."""
    return st.integers(0, odds - 1).flatmap(lambda n: st.sampled_from(edges if n == 0 else valid))


def _typed(good: st.SearchStrategy[Any], odds: int = 30) -> st.SearchStrategy[Any]:
    """``good``, or once in ``odds`` draws null or a value of the wrong JSON type (the decoder's 400)."""
    return st.integers(0, odds - 1).flatmap(lambda n: st.sampled_from([None, *_BAD_TYPES]) if n == 0 else good)


# object names: DNS subdomains; template, claim and topology names: DNS labels (k8s-short-name)
_OBJECT_NAME = _mostly(["train", "train.a", "w-0", "x" * 253], ["Train", "-a", "a..b", "x" * 254, "ü", ""])
_SHORT_NAMES = ["workers", "leader", "w-0", "ps", "x" * 63]
_SHORT_NAME = _typed(_mostly(_SHORT_NAMES, ["", "A", "-x", "x.y", "x" * 64, "ü", "a_b"]))
_LONG_NAME = _mostly(["high", "gpu.example.com", "x" * 253], ["", "High", "-a", "x" * 254, "a_b"])
_PRIORITY = _typed(_mostly([0, 1, -1, 10**9, -(2**31)], [10**9 + 1, 2**31 - 1]))
_MIN_COUNT = _typed(_mostly([1, 2, 8, 2**31 - 1], [0, -1]))
_GANG = st.fixed_dictionaries({"minCount": _MIN_COUNT})


def _policy(shape: Any) -> st.SearchStrategy[Any]:
    if shape == "gang":
        return st.fixed_dictionaries({"gang": _GANG})
    if shape == "both":
        return st.fixed_dictionaries({"basic": st.just({}), "gang": _GANG})
    return st.just(shape)


_SCHEDULING_POLICY = _mostly(
    [{"basic": {}}, "gang", "gang"], [{}, "both", {"basic": None}, {"gang": None}, {"basic": {"x": 1}}]
).flatmap(_policy)
_DISRUPTION = _mostly([{"single": {}}, {"all": {}}], [{}, {"single": {}, "all": {}}, {"single": None}])
_PREEMPTION = _mostly(["PreemptLowerPriority", "Never"], ["never", ""])


def _claim_of(name: Any, which: str, target: str) -> dict[str, Any]:
    if which == "neither":
        return {"name": name}
    if which == "both":
        return {"name": name, "resourceClaimName": target, "resourceClaimTemplateName": target}
    return {"name": name, which: target}


_claim = st.builds(
    _claim_of, _SHORT_NAME, _mostly(["resourceClaimName", "resourceClaimTemplateName"], ["neither", "both"]), _LONG_NAME
)
_TOPOLOGY_KEY = _mostly(
    ["topology.kubernetes.io/zone", "rack", "example.com/block"], ["", "bad key", "a/b/c", "x" * 64]
)
_CONSTRAINTS = st.one_of(
    st.fixed_dictionaries({"topology": st.lists(st.fixed_dictionaries({"key": _TOPOLOGY_KEY}), max_size=1)}),
    st.fixed_dictionaries(
        {"topology": st.lists(st.fixed_dictionaries({"key": _TOPOLOGY_KEY}), min_size=2, max_size=3)}
    ),
    st.just({}),
)
_CLAIMS = st.one_of(
    st.lists(_claim, max_size=4, unique_by=lambda claim: str(claim.get("name"))), st.lists(_claim, max_size=5)
)
# what a pod group template and a PodGroup's spec have, each field present or not
_GROUP_FIELDS = {
    "schedulingConstraints": _CONSTRAINTS,
    "resourceClaims": _CLAIMS,
    "disruptionMode": _DISRUPTION,
    "preemptionPolicy": _PREEMPTION,
}
_PRIORITY_FIELDS = {"priorityClassName": _LONG_NAME, "priority": _PRIORITY}
_POD_GROUP_TEMPLATE = st.fixed_dictionaries(
    {"name": _SHORT_NAME, "schedulingPolicy": _SCHEDULING_POLICY}, optional=_GROUP_FIELDS
)


def _named(templates: list[dict[str, Any]]) -> bool:
    return len({str(t.get("name")) for t in templates}) == len(templates)


def _templates(template: st.SearchStrategy[dict[str, Any]], least: int = 1) -> st.SearchStrategy[Any]:
    """Mostly 1-3 templates of distinct names; now and then none, nine, or names drawn as they come."""
    return _mostly(["few", "few", "few", "any"], ["none", "nine"]).flatmap(
        lambda size: (
            st.lists(template, min_size=least, max_size=3).filter(_named)
            if size == "few"
            else st.lists(template, min_size=least, max_size=3)
            if size == "any"
            else st.just([])
            if size == "none"
            else st.lists(template, min_size=9, max_size=9)
        )
    )


_COMPOSITE_POLICY = _mostly(
    [{"basic": {}}, {"gang": {"minGroupCount": 1}}, {"gang": {"minGroupCount": 2}}],
    [{}, {"gang": {"minGroupCount": 0}}, {"gang": {}}, {"basic": {}, "gang": {"minGroupCount": 1}}],
)
_COMPOSITE_TEMPLATE = st.recursive(
    st.fixed_dictionaries(
        {
            "name": _SHORT_NAME,
            "schedulingPolicy": _COMPOSITE_POLICY,
            "podGroupTemplates": _templates(_POD_GROUP_TEMPLATE),
        },
        optional={"schedulingConstraints": _CONSTRAINTS, "disruptionMode": _DISRUPTION},
    ),
    lambda inner: st.fixed_dictionaries(
        {
            "name": _SHORT_NAME,
            "schedulingPolicy": _COMPOSITE_POLICY,
            "compositePodGroupTemplates": st.lists(inner, min_size=1, max_size=2),
        },
        optional={"podGroupTemplates": _templates(_POD_GROUP_TEMPLATE, 0)},
    ),
    max_leaves=4,
)


_TEMPLATE_LISTS = ("podGroupTemplates", "compositePodGroupTemplates")


def _priorities(spec: dict[str, Any], priority: dict[str, Any], odd: dict[str, Any] | None) -> dict[str, Any]:
    """The same priority on every template of the tree (validateWorkloadPriority), and now and then another on
    the first one."""

    def walk(templates: list[Any]) -> list[Any]:
        return [
            {**t, **priority, **{k: walk(t[k]) for k in _TEMPLATE_LISTS if isinstance(t.get(k), list)}}
            for t in templates
        ]

    out = {**spec, **{k: walk(spec[k]) for k in _TEMPLATE_LISTS if isinstance(spec.get(k), list)}}
    for key in _TEMPLATE_LISTS:
        if odd is not None and isinstance(out.get(key), list) and out[key]:
            out[key] = [{**out[key][0], **odd}, *out[key][1:]]
            break
    return out


_CONTROLLER_REF = st.fixed_dictionaries(
    {
        "kind": _mostly(["Job", "JobSet", "LeaderWorkerSet"], ["", "a/b", "..", "a%b"]),
        "name": _mostly(["train", "Train", "job.0"], ["", "a/b", ".", "a%b"]),
    },
    optional={"apiGroup": _mostly(["batch", "jobset.x-k8s.io", ""], ["Bad_Group", "-a"])},
)
_WORKLOAD_SPEC = st.builds(
    lambda shape, templates, composites, reference, priority, odd: _priorities(
        {
            **({"podGroupTemplates": templates} if shape in ("templates", "both") else {}),
            **({"compositePodGroupTemplates": composites} if shape in ("composites", "both") else {}),
            **({"podGroupTemplates": None} if shape == "null" else {}),
            **reference,
        },
        priority,
        odd,
    ),
    _mostly(["templates", "templates", "composites"], ["both", "none", "null"]),
    _templates(_POD_GROUP_TEMPLATE),
    st.lists(_COMPOSITE_TEMPLATE, min_size=1, max_size=2),
    st.fixed_dictionaries({}, optional={"controllerRef": _CONTROLLER_REF}),
    st.fixed_dictionaries({}, optional=_PRIORITY_FIELDS),
    _mostly([None], [{"priority": 7}, {"priorityClassName": "other"}]),
)
_CONDITION = st.fixed_dictionaries(
    {"type": st.sampled_from(["PodGroupInitiallyScheduled", "DisruptionTarget"])},
    optional={
        "status": _typed(st.sampled_from(["True", "False"]), 10),
        "reason": st.just("Scheduled"),
        "message": st.just(""),
        "lastTransitionTime": st.just("2026-01-01T00:00:00Z"),
    },
)
_POD_GROUP_SPEC = st.fixed_dictionaries(
    {"schedulingPolicy": _SCHEDULING_POLICY},
    optional={
        **_GROUP_FIELDS,
        **_PRIORITY_FIELDS,
        "workloadRef": st.fixed_dictionaries(
            {
                "workloadName": _mostly(["train", "train.a"], ["", "Train"]),
                "templateName": _SHORT_NAME,
            }
        ),
        "parentCompositePodGroupName": _mostly(["replica-0", "outer.a"], ["", "Outer"]),
    },
)


_COMPOSITE_GROUP_POLICY = _mostly(
    [{"basic": {}}, {"gang": {"minGroupCount": 1}}, {"gang": {"minGroupCount": 4}}],
    [
        {},
        {"gang": {"minGroupCount": 0}},
        {"gang": {"minGroupCount": -1}},
        {"gang": {}},
        {"gang": None},
        {"basic": {}, "gang": {"minGroupCount": 1}},
        {"gang": {"minGroupCount": "1"}},
    ],
)
# a CompositePodGroup (v1alpha3 only): what a workload controller copies from a composite template, and the
# reference to it (required)
_COMPOSITE_POD_GROUP_SPEC = st.fixed_dictionaries(
    {
        "schedulingPolicy": _COMPOSITE_GROUP_POLICY,
        "workloadRef": _mostly(
            [{"workloadName": "train", "templateName": "replica"}, {"workloadName": "train.a", "templateName": "w-0"}],
            [None, {}, {"workloadName": "", "templateName": "r"}, {"workloadName": "Train", "templateName": "R"}],
        ),
    },
    optional={
        "parentCompositePodGroupName": _mostly(["replica-0", "outer.a"], ["", "Outer", None, "x" * 254]),
        "schedulingConstraints": _CONSTRAINTS,
        "disruptionMode": _DISRUPTION,
        "preemptionPolicy": _PREEMPTION,
        **_PRIORITY_FIELDS,
    },
)


def _gang_object(api_version: str, kind: str, spec: st.SearchStrategy[Any], extra: dict[str, Any]) -> Any:
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(api_version),
            "kind": st.just(kind),
            "metadata": st.fixed_dictionaries(
                {"name": _OBJECT_NAME, "namespace": st.just("default")},
                optional={
                    "labels": st.dictionaries(
                        _mostly(["app", "example.com/team"], _LABEL_KEYS_ODD), st.just("x"), max_size=1
                    )
                },
            ),
            "spec": _typed(spec),
        },
        optional=extra,
    )


GANG_CASE = (
    st.sampled_from(_GANG_API_VERSIONS)
    .flatmap(
        lambda version: st.one_of(
            _gang_object(version, "Workload", _WORKLOAD_SPEC, {}),
            _gang_object(
                version,
                "PodGroup",
                _POD_GROUP_SPEC,
                {"status": st.fixed_dictionaries({"conditions": st.lists(_CONDITION)})},
            ),
            *(
                [
                    _gang_object(
                        version,
                        "CompositePodGroup",
                        _COMPOSITE_POD_GROUP_SPEC,
                        {"status": st.fixed_dictionaries({"conditions": st.lists(_CONDITION)})},
                    )
                ]
                if version.endswith("/v1alpha3")
                else []
            ),
        )
    )
    .map(lambda obj: {"object": obj})
)
# the gates of the fields PrepareForCreate drops (CompositePodGroup needs TopologyAwareWorkloadScheduling)
GANG_GATES = st.fixed_dictionaries(
    {
        "GenericWorkload": st.just(True),
        "TopologyAwareWorkloadScheduling": st.booleans(),
        "DRAWorkloadResourceClaims": st.booleans(),
        "PodGroupPreemptionPolicy": st.booleans(),
    }
).flatmap(
    lambda gates: st.builds(
        lambda composite: {**gates, "CompositePodGroup": composite and gates["TopologyAwareWorkloadScheduling"]},
        st.booleans(),
    )
)


def gang_gates(case: dict[str, Any], gates: dict[str, bool]) -> dict[str, bool]:
    """The gates a case is created under: a CompositePodGroup is served only with its gate (and the one it
    depends on), a cluster without it has no such API to create one through (api-version-unavailable's case)."""
    if case["object"].get("kind") == "CompositePodGroup":
        return {**gates, "CompositePodGroup": True, "TopologyAwareWorkloadScheduling": True}
    return gates


# the rules that say the API server refuses an object: its schema (a decoding error, a required field), its
# validation, an API version it does not serve
GANG_RULES = frozenset({"schema-invalid", "api-rejected", "api-version-unavailable"})


_REQUIRED = re.compile(r'Required value: "([^"]+)" is required')
_REJECTS = "the API server rejects this object: "


def gpulint_gang_rejections(obj: dict[str, Any], gates: dict[str, bool]) -> list[tuple[str, str]]:
    """(field, error) of each of gpulint's findings that say the API server refuses ``obj``: the field as the
    API server names it (a required field: the field itself, not the object that lacks it)."""
    from conftest import lint_text

    from gpulint.lint.config import Config
    from gpulint.lint.findings import Severity

    config = Config(feature_gates=dict(gates), select=tuple(sorted(GANG_RULES)))
    out = []
    for found in lint_text(yaml.safe_dump(obj, allow_unicode=True), config=config):
        if found.rule not in GANG_RULES or found.severity != Severity.ERROR:
            continue
        text = found.notes[0] if found.rule == "api-rejected" and found.notes else found.message.removeprefix(_REJECTS)
        field = "" if text.startswith(f"{obj['kind']}: ") else text.split(": ")[0]
        required = _REQUIRED.search(text) if found.rule == "schema-invalid" else None
        if required:
            field = f"{field}.{required.group(1)}" if field else required.group(1)
        out.append((field, f"{found.rule}: {text}"))
    return out


def _related(one: str, other: str) -> bool:
    """The same field, or one inside the other (a union names its struct, a missing spec its first field)."""
    return one == other or any(a.startswith(b + sep) for a, b in ((one, other), (other, one)) for sep in ".[")


def compare_gang_validate(case: dict[str, Any], answer: dict[str, Any], gates: dict[str, bool]) -> list[str]:
    return compare_created(gpulint_gang_rejections(case["object"], gates), answer)


def compare_created(
    mine: list[tuple[str, str]], answer: dict[str, Any], field_of: Callable[[str], str] = str
) -> list[str]:
    """An object created through the API server's strategy: the verdict, then each field gpulint says is refused
    (``mine``: field, message), one Kubernetes refuses too (when the object decodes; a decoding error ends the
    request before validation). ``field_of`` names a field as Kubernetes' validation does; a finding without a
    field (the whole object) is judged by the verdict alone."""
    # docs/oracle.md: an object without a name is left to generators and overlays (api-rejected's rule doc)
    errors = [e for e in answer["errors"] if (e["field"], e["type"]) != ("metadata.name", "Required value")]
    theirs = [f"{e['field']}: {e['type']}: {e['bad_value']}: {e['detail']}" for e in errors]
    if answer.get("decode_error"):
        theirs.append(answer["decode_error"])
    if bool(mine) != bool(theirs):
        return [f"gpulint {[m for _, m in mine] or 'accepts it'}, Kubernetes {theirs or 'accepts it'}"]
    if answer.get("decode_error"):
        return []
    fields = [field_of(e["field"]) for e in errors]
    return [
        f"gpulint {error!r}, Kubernetes refuses only {theirs}"
        for field, error in mine
        if field and not any(_related(field_of(field), other) for other in fields)
    ]
