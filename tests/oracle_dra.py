"""The `dra validate` family (docs/oracle.md): resource.k8s.io ResourceClaims, ResourceClaimTemplates,
DeviceClasses and ResourceSlices shaped as real DRA drivers publish and real workloads ask for them (NVIDIA's
k8s-dra-driver-gpu: gpu.nvidia.com, its MIG counters and GpuConfig parameters; the example driver:
gpu.example.com), each field valid most of the time and now and then one of its edges, so that most objects
are accepted or refused for one reason; compared with gpulint's rules that say the API server refuses one."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st
from oracle_families import (
    _LABEL_KEYS_ODD,
    _OBJECT_NAME,
    _SHORT_NAME,
    _mostly,
    _typed,
    compare_created,
)

_VERSIONS = ["resource.k8s.io/v1", "resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"]
_DRIVER = _mostly(
    ["gpu.nvidia.com", "gpu.example.com", "compute-domain.nvidia.com"],
    ["", "GPU.nvidia.com", "gpu", "-gpu.example.com", "x" * 64 + ".com", "a_b.com", "gpu.example.com."],
)
_CLASS_NAME = _typed(
    _mostly(["gpu.nvidia.com", "mig.nvidia.com", "gpu.example.com"], ["", "GPU", "-a", "x" * 254, "a_b"])
)
_QUALIFIED = _mostly(
    ["gpu.nvidia.com/productName", "resource.kubernetes.io/pcieRoot", "gpu.example.com/model", "model"],
    ["", "/model", "gpu.nvidia.com/", "Bad Name", "a/b/c", "x" * 33, "gpu.nvidia.com/" + "x" * 33, "-a/b"],
)
# selectors: valid, refused by the compiler, of the wrong type, over the cost limit, unknown fields
_EXPRESSION = _mostly(
    [
        'device.driver == "gpu.nvidia.com"',
        'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        'device.attributes["gpu.example.com"].model == "LATEST-GPU-MODEL"',
        'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.0.0"))',
        'device.attributes["gpu.nvidia.com"].type == "mig"',
        "true",
    ],
    [
        "",
        "device.driver == 1",
        'device.driver = "x"',
        "device.attributes",
        "1 + 1",
        'device.nosuch == "a"',
        'device.attributes["gpu.nvidia.com"].index > 1.5',
        "[1, 2, 3].all(x, [1, 2, 3].all(y, [1, 2, 3].all(z, true)))",
        'device.attributes["gpu.nvidia.com"].productName.matches("[")',
        "x" * 10,
        None,
    ],
)
_SELECTORS = st.lists(st.fixed_dictionaries({"cel": st.fixed_dictionaries({"expression": _EXPRESSION})}), max_size=2)
_QUANTITY = _typed(
    _mostly(["81559Mi", "80Gi", "40Gi", "1", "0", " 2Gi "], ["-1", "abc", "1.5.5", "", "1e", "Mi", "1Qi"])
)
_COUNT = _typed(_mostly([1, 2, 8], [0, -1, 2**31]))
_MODE = _mostly(["ExactCount", "All"], ["", "Some", "all"])
_TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": _mostly(["example.com/unhealthy", "gpu.nvidia.com/xid"], ["", "bad key", "-a"]),
        "operator": _mostly(["Exists", "Equal"], ["", "In"]),
        "value": _mostly(["true", ""], ["a b", "x" * 64]),
        "effect": _mostly(["NoSchedule", "NoExecute"], ["PreferNoSchedule", "None", "x"]),
        "tolerationSeconds": _mostly([0, 300], [-1]),
    },
)


def _request_body(flat_name: Any = None) -> st.SearchStrategy[dict[str, Any]]:
    """An exact request's (or a subrequest's) fields: a class, selectors, a mode and a count."""
    head = {} if flat_name is None else {"name": flat_name}
    return st.fixed_dictionaries(
        {**head, "deviceClassName": _CLASS_NAME},
        optional={
            "selectors": _SELECTORS,
            "allocationMode": _MODE,
            "count": _COUNT,
            "tolerations": st.lists(_TOLERATION, max_size=2),
            # consumable capacity (DRAConsumableCapacity): the amounts a request takes of a shared device
            "capacity": st.fixed_dictionaries(
                {"requests": st.dictionaries(st.sampled_from(["memory", "cores"]), _QUANTITY, max_size=1)}
            ),
        },
    )


_SUBREQUESTS = st.lists(
    st.builds(lambda body, name: {"name": name, **body}, _request_body(), _SHORT_NAME), min_size=1, max_size=3
)


def _request(name: Any, shape: str, flat: bool, admin: bool) -> st.SearchStrategy[dict[str, Any]]:
    """A request of v1/v1beta2 (``exactly`` or ``firstAvailable``) or of v1beta1 (its fields inline)."""
    extra = {"adminAccess": admin} if admin else {}
    if shape == "first":
        return _SUBREQUESTS.map(lambda subs: {"name": name, "firstAvailable": subs})
    if shape == "both":  # a union of two members, or none
        return _request_body().map(lambda body: {"name": name, "exactly": {**body, **extra}, "firstAvailable": []})
    if shape == "none":
        return st.just({"name": name})
    if flat:
        return _request_body().map(lambda body: {"name": name, **body, **extra})
    return _request_body().map(lambda body: {"name": name, "exactly": {**body, **extra}})


def _requests(flat: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    request = st.builds(
        lambda name, shape, admin: (name, shape, admin),
        _SHORT_NAME,
        _mostly(["exact", "exact", "first"], ["both", "none"]),
        _mostly([False, False, False], [True], odds=6),
    ).flatmap(lambda drawn: _request(drawn[0], drawn[1], flat, drawn[2]))
    return st.lists(request, min_size=0, max_size=3).filter(lambda found: len(found) > 0 or flat)


def _references(requests: list[dict[str, Any]]) -> st.SearchStrategy[list[str]]:
    names = [r["name"] for r in requests if isinstance(r.get("name"), str)]
    subs = [
        f"{r['name']}/{s.get('name')}"
        for r in requests
        if isinstance(r.get("name"), str)
        for s in r.get("firstAvailable") or []
    ]
    return st.lists(_mostly(names + subs or ["gpu"], ["missing", "", "a/b/c", "gpu/"]), max_size=2)


_PARAMETERS = _mostly(
    [
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}},
        {"apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig"},
        {},
    ],
    [None, "text", [1], {"x": "y" * 10241}],
)
_OPAQUE = st.fixed_dictionaries({"driver": _DRIVER, "parameters": _PARAMETERS})


def _claim_spec(flat: bool) -> st.SearchStrategy[dict[str, Any]]:
    def rest(requests: list[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        refs = _references(requests)
        constraint = st.one_of(
            st.fixed_dictionaries({"matchAttribute": _QUALIFIED}, optional={"requests": refs}),
            st.fixed_dictionaries({"distinctAttribute": _QUALIFIED}, optional={"requests": refs}),
            st.fixed_dictionaries({}, optional={"requests": refs}),
        )
        config = st.fixed_dictionaries({"opaque": _OPAQUE}, optional={"requests": refs})
        return st.fixed_dictionaries(
            {"requests": st.just(requests)},
            optional={"constraints": st.lists(constraint, max_size=2), "config": st.lists(config, max_size=2)},
        )

    devices = _requests(flat).flatmap(rest)
    return st.fixed_dictionaries({"devices": _typed(devices)})


_ATTRIBUTE = _mostly(
    [{"string": "NVIDIA H100 80GB HBM3"}, {"int": 0}, {"int": 7}, {"bool": True}, {"version": "12.4.0"}],
    [{}, {"string": "x" * 65}, {"version": "1.2"}, {"version": "v1.2.3"}, {"int": 1, "bool": True}, {"string": ""}],
)
_ATTRIBUTE_NAME = _mostly(
    ["productName", "index", "uuid", "cudaComputeCapability", "resource.kubernetes.io/pcieRoot", "type"],
    ["", "Bad Name", "x" * 33, "a/b/c", "gpu.nvidia.com/x", "-a"],
)
# a capacity's or a counter's value, now and then absent (a plain Quantity: Go reads 0)
_AMOUNT = st.integers(0, 11).flatmap(lambda n: st.just({}) if n == 0 else st.fixed_dictionaries({"value": _QUANTITY}))
_CAPACITY = st.dictionaries(_mostly(["memory", "multiprocessors"], ["", "Memory", "x" * 33]), _AMOUNT, max_size=2)
_DEVICE_TAINT = st.fixed_dictionaries(
    {
        "key": _mostly(["gpu.nvidia.com/xid", "example.com/unhealthy"], ["", "bad key", None]),
        "effect": _mostly(["NoSchedule", "NoExecute", "None"], ["", "PreferNoSchedule", "x"]),
    },
    optional={"value": _mostly(["48", ""], ["a b"])},
)
_COUNTER_SET_NAME = _mostly(["gpu-0-counter-set", "gpu-1"], ["", "Bad", "x" * 64])
_COUNTERS = st.dictionaries(_mostly(["memory", "multiprocessors"], ["", "Memory"]), _AMOUNT, max_size=2)


_POLICY = st.fixed_dictionaries(
    {},
    optional={
        "default": _QUANTITY,
        "validRange": st.fixed_dictionaries({}, optional={"min": _QUANTITY, "max": _QUANTITY, "step": _QUANTITY}),
        "validValues": st.lists(_QUANTITY, max_size=2),
    },
)
# consumable capacity (DRAConsumableCapacity): a shared device's capacity with a request policy
_SHARED_CAPACITY = st.dictionaries(
    st.sampled_from(["memory", "cores"]),
    st.fixed_dictionaries({"value": _QUANTITY}, optional={"requestPolicy": _POLICY}),
    max_size=2,
)
_CONDITIONS = st.lists(_mostly(["dra.example.com/is-prepared", "ready"], ["", "Bad Name", "a/b/c"]), max_size=2)


def _device(nested: bool) -> st.SearchStrategy[dict[str, Any]]:
    body = st.fixed_dictionaries(
        {},
        optional={
            "attributes": st.dictionaries(_ATTRIBUTE_NAME, _ATTRIBUTE, max_size=3),
            "capacity": st.one_of(_CAPACITY, _SHARED_CAPACITY),
            "allowMultipleAllocations": st.booleans(),
            "bindingConditions": _CONDITIONS,
            "bindingFailureConditions": _CONDITIONS,
            "bindsToNode": st.booleans(),
            "taints": st.lists(_DEVICE_TAINT, max_size=1),
            "consumesCounters": st.lists(
                st.fixed_dictionaries({"counterSet": _COUNTER_SET_NAME, "counters": _COUNTERS}), max_size=1
            ),
        },
    )
    name = _mostly(["gpu-0", "gpu-1", "gpu-0-mig-1g10gb-0", "x" * 63], ["", "GPU-0", "x" * 64, "a.b"])
    if nested:  # v1beta1: the fields under `basic`
        return st.builds(lambda n, b: {"name": n, "basic": b}, name, body)
    return st.builds(lambda n, b: {"name": n, **b}, name, body)


_NODE_SELECTION = _mostly(
    [{"nodeName": "gpu-node-1"}, {"nodeName": "gpu-node-1"}, {"allNodes": True}],
    [
        {},
        {"nodeName": "gpu-node-1", "allNodes": True},
        {"nodeName": "Bad_Node"},
        {"allNodes": False},
        {"nodeSelector": {"nodeSelectorTerms": []}},
        {
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "example.com/rack", "operator": "In", "values": ["r1"]}]}
                ]
            }
        },
    ],
)


def _slice_spec(nested: bool) -> st.SearchStrategy[dict[str, Any]]:
    pool = st.fixed_dictionaries(
        {
            "name": _mostly(["gpu-node-1", "pool/a"], ["", "/a", "a//b", "Bad_Pool", "x" * 254]),
            "resourceSliceCount": _typed(_mostly([1, 2], [0, -1])),
        },
        optional={"generation": _typed(_mostly([0, 1], [-1]))},  # the schema requires it, Go reads 0
    )
    devices = st.lists(_device(nested), max_size=3)
    shared = st.lists(st.fixed_dictionaries({"name": _COUNTER_SET_NAME, "counters": _COUNTERS}), max_size=1)
    return st.builds(
        lambda driver, pool, selection, devices, extra: {
            "driver": driver,
            "pool": pool,
            **selection,
            "devices": devices,
            **extra,
        },
        _DRIVER,
        pool,
        _NODE_SELECTION,
        devices,
        st.fixed_dictionaries({}, optional={"sharedCounters": shared}),
    )


_CLASS_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "selectors": _SELECTORS,
        "config": st.lists(st.fixed_dictionaries({"opaque": _OPAQUE}), max_size=1),
        "extendedResourceName": _mostly(
            ["nvidia.com/gpu", "example.com/gpu"],
            ["gpu", "", "kubernetes.io/gpu", "requests.nvidia.com/gpu", "nvidia.com/" + "g" * 64, None],
        ),
    },
)


def _spec(kind: str, version: str) -> st.SearchStrategy[Any]:
    flat = version.endswith("/v1beta1")
    if kind == "ResourceClaim":
        return _claim_spec(flat)
    if kind == "ResourceClaimTemplate":
        return st.fixed_dictionaries({"spec": _claim_spec(flat)})
    if kind == "DeviceClass":
        return _CLASS_SPEC
    return _slice_spec(flat)


_NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate"})


def _dra_object(version: str, kind: str) -> st.SearchStrategy[dict[str, Any]]:
    metadata = {"name": _OBJECT_NAME, **({"namespace": st.just("default")} if kind in _NAMESPACED else {})}
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(version),
            "kind": st.just(kind),
            "metadata": st.fixed_dictionaries(
                metadata,
                optional={
                    "labels": st.dictionaries(
                        _mostly(["app", "example.com/team"], _LABEL_KEYS_ODD), st.just("x"), max_size=1
                    )
                },
            ),
            "spec": _typed(_spec(kind, version)),
        }
    )


_KINDS = ["ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"]
DRA_CASE = st.builds(
    lambda obj, admin: {"object": obj, "admin_namespace": admin},
    st.tuples(st.sampled_from(_VERSIONS), st.sampled_from(_KINDS)).flatmap(lambda vk: _dra_object(*vk)),
    st.booleans(),
)
# the beta gates of 1.37 whose fields the create strategies drop (the GA ones are locked on); gpulint models each
DRA_GATES = st.fixed_dictionaries(
    {
        "DRAConsumableCapacity": st.booleans(),
        "DRADeviceBindingConditions": st.booleans(),
        "DRAPartitionableDevices": st.booleans(),
        "DRAListTypeAttributes": st.booleans(),
    }
)
# the rules that say the API server refuses an object: its schema, its validation (selectors: cel-invalid; a
# request's shape: claim-reference-invalid), an API version it does not serve
DRA_RULES = frozenset(
    {"schema-invalid", "api-rejected", "cel-invalid", "claim-reference-invalid", "api-version-unavailable"}
)
_REJECTS = "the API server rejects this object: "


def gpulint_dra_rejections(case: dict[str, Any], gates: dict[str, bool]) -> list[tuple[str, str]]:
    """(field, error) of each of gpulint's error findings that say the API server refuses the case's object, linted
    beside its namespace (labelled for admin access or not, as the oracle's)."""
    from conftest import lint_text

    from gpulint.lint.config import Config
    from gpulint.lint.findings import Severity

    obj = case["object"]
    labels = {"resource.kubernetes.io/admin-access": "true"} if case["admin_namespace"] else {}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": labels}}
    text = yaml.safe_dump_all([obj, namespace], allow_unicode=True)
    config = Config(feature_gates=dict(gates), select=tuple(sorted(DRA_RULES)))
    out = []
    for found in lint_text(text, config=config):
        if found.rule not in DRA_RULES or found.severity != Severity.ERROR or found.obj.kind != obj["kind"]:
            continue
        text = found.notes[0] if found.rule == "api-rejected" and found.notes else found.message.removeprefix(_REJECTS)
        out.append((text.split(": ")[0] if found.rule == "api-rejected" else "", f"{found.rule}: {text}"))
    return out


def _internal(field: str) -> str:
    """A field as the internal type names it: v1beta1's devices keep their fields under ``basic`` and its requests
    inline, where Kubernetes' validation (of the internal type) names ``exactly``."""
    return field.replace(".basic.", ".").replace(".exactly.", ".")


def compare_dra_validate(case: dict[str, Any], answer: dict[str, Any], gates: dict[str, bool]) -> list[str]:
    return compare_created(gpulint_dra_rejections(case, gates), answer, _internal)
