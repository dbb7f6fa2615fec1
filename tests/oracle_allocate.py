"""The `dra allocate` family: a pod with ResourceClaims on a snapshot of nodes, ResourceSlices and
DeviceClasses, scheduled by the scheduler's DynamicResources plugin (tests/oracle/dra_allocate.go) and linted
by gpulint as `check` lints it (the pod and its claims or claim templates as manifests, the cluster as the
inventory). docs/oracle.md says what is compared and why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st
from oracle_families import CEL_EXPRESSION

from gpulint.kube.dra.allocation import claim_spec_of
from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.verdicts.scheduling import dra_verdict, pod_sites, scheduling_verdict
from gpulint.lint.verdicts.shared import claim_entries
from gpulint.lint.world.inventory import load_inventory

DRIVER = "gpu.example.com"
NAMESPACE = "default"
POD = "trainer"
POD_UID = "0d9c3f5e-8a1b-4c2d-9e7f-000000000001"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
NODE_NAMES = ["node-a", "node-b", "node-c"]
ZONES = ["z1", "z2"]
MODELS = ["a100", "h100"]
# What makes gpulint say the pod stays Pending for its claims (judges.ALLOCATION_RULES, and the pod's own verdict)
STOPPING_RULES = frozenset(
    {
        "claim-unsatisfiable",
        "gpu-unschedulable",
        "device-class-unknown",
        "cel-invalid",
        "feature-gate-required",
        "api-rejected",
        "claim-reference-invalid",
    }
)

# --------------------------------------------------------------------------- the cluster


def _node(name: str, zone: str) -> dict[str, Any]:
    amounts = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
        "status": {"capacity": amounts, "allocatable": amounts},
    }


NODES = st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*[st.builds(_node, st.just(n), st.sampled_from(ZONES)) for n in names]).map(list)
)

_TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from([f"{DRIVER}/unhealthy", "maintenance"]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", "None"]),
    },
    optional={"value": st.sampled_from(["true", "ecc"])},
)
_DEVICE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["gpu-0", "gpu-1", "gpu-2", "gpu-3"]),
        "attributes": st.fixed_dictionaries(
            {"model": st.fixed_dictionaries({"string": st.sampled_from(MODELS)})},
            optional={
                "index": st.fixed_dictionaries({"int": st.integers(0, 3)}),
                "driverVersion": st.fixed_dictionaries({"version": st.sampled_from(["1.0.0", "12.4.0"])}),
                "numa": st.fixed_dictionaries({"int": st.integers(0, 1)}),
            },
        ),
        "capacity": st.fixed_dictionaries(
            {"memory": st.fixed_dictionaries({"value": st.sampled_from(["40Gi", "80Gi"])})}
        ),
    },
)
# a device is tainted now and then: most of a pool's devices are free to allocate
_DEVICE = st.tuples(
    _DEVICE, st.one_of(st.just([]), st.just([]), st.just([]), st.lists(_TAINT, min_size=1, max_size=2))
).map(lambda drawn: {**drawn[0], "taints": drawn[1]} if drawn[1] else drawn[0])

# consumable capacity (DRAConsumableCapacity, beta in 1.37): a device several claims share, its memory with a
# requestPolicy as drivers publish one (k8s.io/api resource/v1 CapacityRequestPolicy: a default with validValues or
# a validRange), now and then a shape the API server refuses (the dra validate family leaves such a case out)
_POLICY = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "default": st.sampled_from(["10Gi", "20Gi"]),
            "validRange": st.fixed_dictionaries(
                {"min": st.sampled_from(["10Gi", "5Gi"])},
                optional={"max": st.sampled_from(["40Gi", "80Gi", "30Gi"]), "step": st.sampled_from(["10Gi", "5Gi"])},
            ),
        }  # fmt: skip
    ),
    st.fixed_dictionaries(
        {
            "default": st.sampled_from(["10Gi", "20Gi"]),
            "validValues": st.sampled_from([["10Gi", "20Gi", "40Gi"], ["20Gi", "80Gi"], ["10Gi"]]),
        }  # fmt: skip
    ),
)


# a capacity of fractional amounts (cores): a range of milli values, which the allocator rounds up as integers unless
# DRAFractionalCapacityRange (beta in 1.37, off at the default compatibility version) is on
_CORES = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "value": st.sampled_from(["2", "1500m"]),
            "requestPolicy": st.fixed_dictionaries(
                {
                    "default": st.sampled_from(["500m", "1"]),
                    "validRange": st.fixed_dictionaries(
                        {"min": st.sampled_from(["250m", "500m"])}, optional={"step": st.sampled_from(["250m", "500m"])}
                    ),
                }
            ),
        }  # fmt: skip
    ),
)


def _shared(device: dict[str, Any], policy: dict[str, Any] | None, cores: dict[str, Any] | None) -> dict[str, Any]:
    memory = device["capacity"]["memory"]
    capacity = {"memory": {**memory, "requestPolicy": policy} if policy is not None else memory}
    if cores is not None:
        capacity["cores"] = cores
    return {**device, "allowMultipleAllocations": True, "capacity": capacity}


# binding conditions (DRADeviceBindingConditions, beta in 1.37): a device the scheduler binds only once its driver
# reports the conditions (k8s.io/api resource/v1 Device.BindingConditions), maybe bound to the node it is on
_BINDING = st.fixed_dictionaries(
    {
        "bindingConditions": st.sampled_from([["example.com/ready"], ["example.com/ready", "example.com/attached"]]),
        "bindingFailureConditions": st.sampled_from([["example.com/failed"], []]),
    },
    optional={"bindsToNode": st.booleans()},
)
_DEVICE = st.tuples(
    _DEVICE,
    st.sampled_from(["plain", "plain", "plain", "shared", "binding"]),
    _POLICY,
    _BINDING,
    _CORES,
).map(
    lambda drawn: (
        _shared(drawn[0], drawn[2], drawn[4])
        if drawn[1] == "shared"
        else ({**drawn[0], **drawn[3]} if drawn[1] == "binding" else drawn[0])
    )
)


def _unique_names(devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for device in devices:
        if device["name"] not in seen:
            seen.add(device["name"])
            out.append(device)
    return out


# mostly devices, sometimes an empty slice
_DEVICES = st.one_of(st.lists(_DEVICE, min_size=1, max_size=4), st.lists(_DEVICE, max_size=4)).map(_unique_names)
# where a pool's devices are: one node (maybe one not in the snapshot), the nodes a selector picks, every node,
# or per device (perDeviceNodeSelection)
_PLACEMENT = st.one_of(
    st.sampled_from([*NODE_NAMES, *NODE_NAMES, "node-gone"]).map(lambda n: {"nodeName": n}),
    st.sampled_from(ZONES).map(
        lambda z: {
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": [z]}]}]
            }
        }
    ),
    st.just({"allNodes": True}),
    st.just({"perDeviceNodeSelection": True}),
)
_PER_DEVICE = st.one_of(st.sampled_from(NODE_NAMES).map(lambda n: {"nodeName": n}), st.just({"allNodes": True}))


@st.composite
def _pool(draw: Any, name: str) -> list[dict[str, Any]]:
    """A pool's slices: its generation's (all of them, or fewer than resourceSliceCount: incomplete), and
    maybe a slice of an older generation (the allocator ignores it)."""
    driver = draw(st.sampled_from([DRIVER, DRIVER, DRIVER, "other.example.com"]))
    generation = draw(st.integers(1, 2))
    count = draw(st.sampled_from([1, 1, 2]))
    # partitionable devices (DRAPartitionableDevices): a slice of the pool holds its shared counters (a slice has
    # either devices or counters), and each device consumes some of them
    counters = draw(st.sampled_from([None, None, None, "80Gi", "120Gi", "160Gi"]))
    count += counters is not None
    published = draw(st.sampled_from([count, count, count, count - 1])) if count > 1 else 1
    slices = []
    for index in range(published):
        placement = draw(_PLACEMENT)
        if counters is not None and index == count - 1:
            placement = {"allNodes": True} if "perDeviceNodeSelection" in placement else placement
            shared = [{"name": "gpu-counters", "counters": {"memory": {"value": counters}}}]
            slices.append((generation, index, count, {**placement, "sharedCounters": shared}, None))
            continue
        devices = draw(_DEVICES)
        if "perDeviceNodeSelection" in placement:
            devices = [{**d, **draw(_PER_DEVICE)} for d in devices]
        if counters is not None:
            use = {"memory": {"value": draw(st.sampled_from(["40Gi", "80Gi"]))}}
            devices = [{**d, "consumesCounters": [{"counterSet": "gpu-counters", "counters": use}]} for d in devices]
        slices.append((generation, index, count, placement, devices))
    if generation == 2 and draw(st.booleans()):
        slices.append((1, 0, 1, draw(_PLACEMENT.filter(lambda p: "perDeviceNodeSelection" not in p)), draw(_DEVICES)))
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-g{gen}-{index}"},
            "spec": {
                "driver": driver,
                "pool": {"name": name, "generation": gen, "resourceSliceCount": count},
                **placement,
                **({"devices": devices} if devices is not None else {}),
            },
        }
        for gen, index, count, placement, devices in slices
    ]


# at least one pool: without ResourceSlices gpulint has no catalog of devices (docs/oracle.md)
SLICES = st.lists(st.sampled_from(["pool-0", "pool-1", "pool-2"]), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*[_pool(n) for n in names]).map(lambda pools: [s for pool in pools for s in pool])
)


def _class(name: str, expressions: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


CLASSES = st.builds(
    lambda generated: [
        _class("gpu", [f'device.driver == "{DRIVER}"']),
        _class("a100", [f'device.driver == "{DRIVER}"', f'device.attributes["{DRIVER}"].model == "a100"']),
        _class("any", []),
        _class("generated", [generated]),
    ],
    st.one_of(st.sampled_from([f'device.attributes["{DRIVER}"].model == "h100"', "true"]), CEL_EXPRESSION),
)

_RULE_SELECTOR = st.one_of(
    st.none(),  # no selector: the tracker taints no device (applyPatches)
    st.fixed_dictionaries(
        {},
        optional={
            "driver": st.sampled_from([DRIVER, "other.example.com"]),
            "pool": st.sampled_from(["pool-0", "pool-1", "pool-2"]),
            "device": st.sampled_from(["gpu-0", "gpu-1", "gpu-2", "gpu-3"]),
        },
    ),
)
_RULE_TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from([f"{DRIVER}/unhealthy", "maintenance"]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", "None"]),
    },
    optional={"value": st.sampled_from(["true", "ecc"])},
)


def _rule(index: int, selector: dict[str, Any] | None, taint: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"taint": taint}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": f"rule-{index}"},
            "spec": spec}  # fmt: skip


# DeviceTaintRules (DRADeviceTaintRules, GA in 1.37): the ResourceSlice tracker adds their taint to the devices
# they select before the allocator sees them (k8s.io/dynamic-resource-allocation v0.37.2 resourceslice/tracker)
RULES = st.one_of(
    st.just([]),
    st.just([]),
    st.lists(st.tuples(_RULE_SELECTOR, _RULE_TAINT), min_size=1, max_size=2).map(
        lambda drawn: [_rule(i, selector, taint) for i, (selector, taint) in enumerate(drawn)]
    ),
)

# The gates of taints, GA in 1.37 and not locked (pkg/features/kube_features.go v1.37.2): DRADeviceTaints (the
# allocator heeds taints and tolerations) and DRADeviceTaintRules (the tracker applies the rules), which depends
# on it (Kubernetes refuses it on with DRADeviceTaints off); stated on both sides, mostly left at their defaults
_TAINT_GATES = st.one_of(
    st.just({}),
    st.just({}),
    st.just({"DRADeviceTaints": False, "DRADeviceTaintRules": False}),
    st.fixed_dictionaries({}, optional={"DRADeviceTaints": st.just(True), "DRADeviceTaintRules": st.booleans()}),
)
# With DRAConsumableCapacity and DRADeviceBindingConditions off (both beta, on by default) the scheduler runs the
# structured allocator's stable variant, which visits pools in no fixed order, instead of the incubating one
# (structured/allocator.go v0.37.2): now and then
ALLOCATE_GATES = st.tuples(
    _TAINT_GATES,
    st.sampled_from(
        [
            {},
            {},
            {},
            {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False},
            # the allocator's milli arithmetic for ranges of fractional amounts (beta, off by default in 1.37; it
            # depends on DRAConsumableCapacity)
            {"DRAFractionalCapacityRange": True},
        ]
    ),
).map(lambda drawn: {**drawn[0], **drawn[1]})

# --------------------------------------------------------------------------- the pod and its claims

_SELECTOR = st.one_of(
    st.sampled_from(
        [
            f'device.attributes["{DRIVER}"].model == "h100"',
            f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0',
        ]
    ),
    st.sampled_from(
        [
            f'device.attributes["{DRIVER}"].model == "h100"',
            f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0',
            f'device.attributes["{DRIVER}"].index < 2',
            f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("2.0.0"))',
            f'"numa" in device.attributes["{DRIVER}"]',
        ]
    ),
    CEL_EXPRESSION,
)
_TOLERATION = st.one_of(
    st.just({"operator": "Exists"}),
    st.fixed_dictionaries({"key": st.just(f"{DRIVER}/unhealthy"), "operator": st.just("Exists")}),
    st.fixed_dictionaries(
        {"key": st.just(f"{DRIVER}/unhealthy"), "operator": st.just("Equal"), "value": st.just("true")},
        optional={"effect": st.sampled_from(["NoSchedule", "NoExecute"])},
    ),
    st.fixed_dictionaries(
        {"key": st.just("maintenance"), "operator": st.just("Equal"), "value": st.sampled_from(["ecc", ""])},
        optional={"effect": st.sampled_from(["NoSchedule", "NoExecute"])},
    ),
)


def _body(admin: bool) -> st.SearchStrategy[dict[str, Any]]:
    mode = st.one_of(
        st.integers(1, 3).map(lambda n: {"allocationMode": "ExactCount", "count": n}),
        st.just({"allocationMode": "All"}),
        st.just({}),
        st.just({}),
    )
    optional: dict[str, Any] = {
        "selectors": st.lists(st.builds(lambda e: {"cel": {"expression": e}}, _SELECTOR), min_size=1, max_size=2),
        "tolerations": st.lists(_TOLERATION, min_size=1, max_size=2),
        # a share of a device's capacity (DRAConsumableCapacity), or of one no device has
        "capacity": st.fixed_dictionaries(
            {
                "requests": st.one_of(
                    st.dictionaries(
                        st.sampled_from(["memory", "memory", "bandwidth"]),
                        st.sampled_from(["5Gi", "10Gi", "15Gi", "30Gi", "50Gi", "100Gi"]),
                        min_size=1,
                        max_size=1,
                    ),
                    st.fixed_dictionaries({"cores": st.sampled_from(["300m", "600m", "1", "1200m"])}),
                )
            }
        ),
    }
    if admin:
        optional["adminAccess"] = st.just(True)
    return st.builds(
        lambda klass, m, rest: {"deviceClassName": klass, **m, **rest},
        st.sampled_from(["gpu", "gpu", "gpu", "gpu", "a100", "any", "generated", "missing"]),
        mode,
        st.fixed_dictionaries({}, optional=optional),
    )


@st.composite
def _claim_spec(draw: Any, admin: bool) -> dict[str, Any]:
    requests = []
    for index in range(draw(st.integers(1, 2))):
        if draw(st.integers(0, 3)) == 0:
            subs = [{"name": f"sub-{i}", **draw(_body(False))} for i in range(draw(st.integers(1, 3)))]
            if len(subs) > 1 and draw(st.booleans()):
                # the shape real claims give a prioritized list: the most wanted first, then fewer devices of any
                # class (so that the allocator often takes a later subrequest)
                for i, sub in enumerate(subs):
                    sub.pop("allocationMode", None)
                    sub["count"] = len(subs) + 1 - i if i < len(subs) - 1 else 1
                    sub["deviceClassName"] = sub["deviceClassName"] if i == 0 else draw(st.sampled_from(["gpu", "any"]))
            requests.append({"name": f"req-{index}", "firstAvailable": subs})
        else:
            requests.append({"name": f"req-{index}", "exactly": draw(_body(admin))})
    devices: dict[str, Any] = {"requests": requests}
    if draw(st.integers(0, 2)) == 0:
        names = [r["name"] for r in requests]
        chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
        attribute = draw(st.sampled_from([f"{DRIVER}/model", f"{DRIVER}/numa", "model"]))
        devices["constraints"] = [{"matchAttribute": attribute, **({"requests": chosen} if chosen else {})}]
    return {"devices": devices}


@st.composite
def _held(draw: Any, slices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Maybe a claim of another pod, allocated and reserved, that holds some of the published devices."""
    published = sorted(
        {
            (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"], d.get("allowMultipleAllocations") is True)
            for s in slices
            for d in s["spec"].get("devices", [])
        }
    )
    if not published or draw(st.integers(0, 2)) != 2:  # the simplest draw holds nothing
        return []
    taken = draw(st.lists(st.sampled_from(published), min_size=1, max_size=2, unique_by=lambda t: t[:3]))
    results = []
    for index, (driver, pool, device, multiple) in enumerate(taken):
        result = {"request": "held", "driver": driver, "pool": pool, "device": device}
        if multiple and draw(st.integers(0, 3)) != 0:
            # a share of a device with allowMultipleAllocations (resource/v1 DeviceRequestAllocationResult: a
            # shareID and the capacity it consumes), as the allocator records one
            used = draw(st.sampled_from(["10Gi", "20Gi", "40Gi"]))
            result |= {"shareID": f"0d9c3f5e-8a1b-4c2d-9e7f-00000000010{index}", "consumedCapacity": {"memory": used}}
        results.append(result)
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "held", "namespace": NAMESPACE, "uid": "0d9c3f5e-8a1b-4c2d-9e7f-000000000002"},
            "spec": {
                "devices": {"requests": [{"name": "held", "exactly": {"deviceClassName": "any", "count": len(taken)}}]}
            },
            "status": {
                "allocation": {"devices": {"results": results}},
                "reservedFor": [{"resource": "pods", "name": "other", "uid": "0d9c3f5e-8a1b-4c2d-9e7f-000000000003"}],
            },
        }
    ]


@st.composite
def allocate_case(draw: Any) -> dict[str, Any]:
    """Both sides' inputs: ``manifests`` (what gpulint lints) and ``oracle`` (the cluster the scheduler sees,
    with template claims made as the resourceclaim controller makes them)."""
    admin = draw(st.integers(0, 5)) == 0
    nodes, slices, classes, rules = draw(NODES), draw(SLICES), draw(CLASSES), draw(RULES)
    held = draw(_held(slices))
    pod_claims: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []  # the oracle's
    templates: list[dict[str, Any]] = []  # gpulint's
    direct: list[dict[str, Any]] = []  # gpulint's
    statuses = []
    for index in range(draw(st.integers(1, 2))):
        spec = draw(_claim_spec(admin))
        ref = f"c{index}"
        if draw(st.booleans()):
            name = f"claim-{index}"
            pod_claims.append({"name": ref, "resourceClaimName": name})
            claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}  # fmt: skip
            direct.append(claim)
            claims.append(claim)
        else:
            template = f"template-{index}"
            pod_claims.append({"name": ref, "resourceClaimTemplateName": template})
            templates.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": template, "namespace": NAMESPACE},
                    "spec": {"spec": spec},
                }
            )
            # pkg/controller/resourceclaim/controller.go handleClaim: generateName <pod>-<podClaim>-, owned by
            # the pod (controller), annotated with the pod claim's name, recorded in the pod's status
            generated = f"{POD}-{ref}-{'x7k2q'[: index + 4]}"
            claims.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "name": generated,
                        "namespace": NAMESPACE,
                        "annotations": {"resource.kubernetes.io/pod-claim-name": ref},
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "name": POD,
                                "uid": POD_UID,
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }  # fmt: skip
                        ],
                    },
                    "spec": spec,
                }
            )
            statuses.append({"name": ref, "resourceClaimName": generated})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": NAMESPACE},
        "spec": {
            "resourceClaims": pod_claims,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/train:1",
                    "resources": {"claims": [{"name": c["name"]} for c in pod_claims]},
                }
            ],
        },
    }
    oracle_pod = {**pod, "metadata": {**pod["metadata"], "uid": POD_UID}}
    if statuses:
        oracle_pod["status"] = {"resourceClaimStatuses": statuses}
    return {
        "admin": admin,
        "nodes": nodes,
        "slices": slices,
        "classes": classes,
        "held": held,
        "rules": rules,
        "manifests": [pod, *direct, *templates],
        "oracle": {
            "pod": oracle_pod,
            "nodes": nodes,
            "slices": slices,
            "classes": classes,
            "claims": [*held, *claims],
            "taintRules": rules,
        },
    }


def created_objects(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects the API server must accept for the case to be a cluster (the dra validate family asks)."""
    return [*case["slices"], *case["classes"], *[m for m in case["manifests"] if m["kind"] != "Pod"]]


def accepted_cases(oracle: Any, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases whose every object the API server creates (one round trip)."""
    objects = [created_objects(case) for case in cases]
    asked = [{"object": o, "admin_namespace": case["admin"]} for case, objs in zip(cases, objects) for o in objs]
    verdicts = iter(oracle.ask("dra_validate", asked))
    out = []
    for case, objs in zip(cases, objects):
        refused = [v for v in (next(verdicts) for _ in objs) if v["errors"] or v.get("decode_error")]
        if not refused:
            out.append(case)
    return out


# --------------------------------------------------------------------------- gpulint's answer


def _documents(objects: list[dict[str, Any]]) -> bytes:
    return yaml.safe_dump_all(objects, sort_keys=False).encode()


@dataclass(frozen=True)
class GpulintAnswer:
    """What gpulint's check says of the case: the findings by which the pod stays Pending for its claims, and the
    DRA verdict check and explain share (scheduling.dra_verdict), per node."""

    stops: list[str]
    nodes: dict[str, bool | None]  # per node on the empty cluster: the claims fit, do not, or unknown
    now: dict[str, bool | None]  # the same with the devices other pods' claims hold taken (verdicts_now)
    # per pod claim, the devices the allocator must give each request on a node, by the name of the alternative it
    # takes (the request's, or the firstAvailable subrequest's "req/sub" gpulint's allocator chooses there, with the
    # devices other pods' claims hold taken; ExactCount: its count; All: every device the class and selectors
    # match there); a claim's requests whose subrequest gpulint cannot tell are left out
    counts: Callable[[str], dict[str, dict[str, int]]]


def _run(case: dict[str, Any], gates: dict[str, bool]) -> LintRun:
    namespace: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    if case["admin"]:
        namespace["metadata"]["labels"] = {ADMIN_LABEL: "true"}
    cluster = [*case["nodes"], *case["classes"], *case["slices"], *case["held"], *case["rules"]]
    inventory = load_inventory(["inventory.yaml"], [Source("inventory.yaml", content=_documents(cluster))])
    source = Source("pod.yaml", content=_documents([namespace, *case["manifests"]]))
    return LintRun(Config(feature_gates=dict(gates) if gates else None), [source], inventory)


def gpulint_answer(case: dict[str, Any], gates: dict[str, bool]) -> GpulintAnswer:
    run = _run(case, gates)
    findings = run.report().findings
    stops = [
        f"{f.rule} ({f.severity.name.lower()}): {f.message}"
        for f in findings
        if f.rule in STOPPING_RULES and f.severity in (Severity.ERROR, Severity.WARNING)
    ]
    resolver = run.resolver
    obj = next(o for parsed in run.files for o in parsed.objects if o.kind == "Pod")
    site = pod_sites(obj)[0]
    fit = scheduling_verdict(obj.kind, site, resolver, namespace=obj.ref.namespace).fit
    verdict = dra_verdict(obj, site, resolver, fit)
    nodes = {n.name: v.fits for g, v in verdict.answers for n in g.nodes} if verdict is not None else {}
    dra = resolver.dra
    entries = [(entry, located, kind) for entry, located, kind in claim_entries(obj, site, resolver) if located]
    claims = tuple(claim_spec_of(located.data, kind) for _, located, kind in entries)
    verdicts_now = {n.name: (g, v) for g, v in dra.verdicts_now(claims) for n in g.nodes} if dra.has_devices else {}
    now = {name: v.fits for name, (_, v) in verdicts_now.items()}

    def counts(node: str) -> dict[str, dict[str, int]]:
        group, verdict = verdicts_now[node]
        chosen = iter(verdict.chosen or [None] * sum(len(c.requests) for c in claims))
        out: dict[str, dict[str, int]] = {}
        for (entry, _, _), claim in zip(entries, claims):
            requests = out.setdefault(str(entry.get("name")), {})
            for request in claim.requests:
                name = next(chosen)
                if not request.first_available:
                    name = request.alternatives[0].name if request.alternatives else None
                alternative = next((a for a in request.alternatives if a.name == name), None)
                if alternative is not None:
                    requests[alternative.name] = (
                        len(dra.allocator.selected(alternative, group.devices))
                        if alternative.all_devices
                        else alternative.count
                    )
        return out

    return GpulintAnswer(stops, nodes, now, counts)


# what feature-gate-required says of a request's field the API server drops while its gate is off
# (pkg/registry/resource/resourceclaim/strategy.go dropDisabledFields, v1.37.2)
DROPPED_REQUEST_FIELDS = (
    "uses device tolerations, which needs the DRADeviceTaints",
    "uses capacity requests, which needs the DRAConsumableCapacity",
)


def _dropped_field(stop: str) -> bool:
    """feature-gate-required's warning that the API server drops a request's tolerations (DRADeviceTaints off) or
    capacity requests (DRAConsumableCapacity off): true, and no stop, for the claim is created without them and the
    allocator then ignores device taints (Features.DeviceTaints), or gives the request whole devices."""
    return stop.startswith("feature-gate-required") and any(field in stop for field in DROPPED_REQUEST_FIELDS)


def _runtime_error(stop: str) -> bool:
    """cel-invalid's warning on a selector's runtime error the allocator may never evaluate (a later firstAvailable
    subrequest, a device an ExactCount request may have its count before): whether the claim aborts depends on the
    order it visits devices in (docs/oracle.md). Its errors are compared."""
    return stop.startswith("cel-invalid (warning): CEL runtime error on device")


def empty_cluster(case: dict[str, Any]) -> dict[str, Any]:
    """The oracle's case without the claims other pods hold: claim-unsatisfiable's errors judge the empty
    cluster (the devices held now are freed in time; its "now" view is a warning on a claim alone)."""
    held = {c["metadata"]["name"] for c in case["held"]}
    oracle = case["oracle"]
    return {**oracle, "claims": [c for c in oracle["claims"] if c["metadata"]["name"] not in held]}


def compare_allocate(
    case: dict[str, Any], answer: dict[str, Any], empty: dict[str, Any], gates: dict[str, bool]
) -> list[str]:
    """Kubernetes schedules the pod somewhere (a node passes every filter, DynamicResources' among them) or not
    (its "0/N nodes are available" summary, or a filter's error); gpulint must not say the pod stays Pending
    where it schedules now (``answer``), and should say so where it cannot schedule on the empty cluster
    (``empty``: the same without the claims other pods hold). Node by node, gpulint's DRA verdict (unknown aside)
    must be the scheduler's: on the empty cluster against ``empty``, with the held devices taken against
    ``answer``; on the node Reserve allocates on, each request gets the devices gpulint counts for it."""
    gpulint = gpulint_answer(case, gates)
    stops = [stop for stop in gpulint.stops if not _dropped_field(stop)]
    return [*_compare_pod(stops, answer, empty), *compare_nodes(gpulint, answer, empty)]


def _fits(reasons: list[str] | None) -> bool | None:
    return None if reasons is None else not reasons


def compare_nodes(gpulint: GpulintAnswer, answer: dict[str, Any], empty: dict[str, Any]) -> list[str]:
    """Per node and per request (a filter's error fails the whole attempt: no node is judged then)."""
    found = []
    for said, told, view in ((gpulint.nodes, empty, "empty cluster"), (gpulint.now, answer, "now")):
        if told.get("error"):
            continue
        for node, fits in sorted(said.items()):
            kube = _fits(told["nodes"].get(node))
            if fits is not None and kube is not None and fits != kube:
                found.append(
                    f"node {node} ({view}): Kubernetes {'fits' if kube else told['nodes'][node]}; "
                    f"gpulint {'fits' if fits else 'does not fit'}"
                )
    node = answer.get("node")
    if node and not answer.get("error") and gpulint.now.get(node):
        counted = gpulint.counts(node)
        for claim, requests in counted.items():
            got = answer["requests"].get(claim, {})
            known = {name.split("/")[0] for name in requests}
            # a subrequest Kubernetes allocates that gpulint's choice is not (its count is 0 on gpulint's side)
            other = {name: 0 for name in got if name.split("/")[0] in known and name not in requests}
            for request, count in {**requests, **other}.items():
                if got.get(request, 0) != count:
                    found.append(
                        f"claim {claim} request {request} on {node}: Kubernetes allocates {got.get(request, 0)} "
                        f"device(s) {answer['devices'].get(claim)}; gpulint counts {count}"
                    )
    return found


def _compare_pod(stops: list[str], answer: dict[str, Any], empty: dict[str, Any]) -> list[str]:
    # a warning on a runtime error is no stop (the allocator may not reach it); cel-invalid's error on one is
    if not answer.get("error") and not answer["summary"] and stops and not all(_runtime_error(s) for s in stops):
        return [f"false error: Kubernetes allocates on {answer['node']} {answer['devices']}; gpulint: {stops}"]
    if stops:
        return []
    if empty.get("error"):
        # a filter's error fails the whole scheduling attempt, and every retry. gpulint says so for a request for
        # all devices over an incomplete or invalid pool (Allocate validates every request first); the other
        # errors (a selector's CEL runtime error, an All request past a constraint) depend on the order the
        # allocator visits devices in, and gpulint judges that node alone: docs/oracle.md, open (a miss)
        # a claim's selector failing where the allocator evaluates it: cel-invalid warns at least (a class's in the
        # inventory is no linted object: open, docs/oracle.md)
        claim_selector = " filter plugin: claim " in empty["error"] and "CEL runtime error" in empty["error"]
        if "asks for all devices, but resource pool" in empty["error"] or claim_selector:
            return [f"miss: Kubernetes fails every scheduling attempt: {empty['error']!r}; gpulint says nothing"]
        return []
    if empty["summary"]:
        return [f"miss: Kubernetes {empty['summary']!r}; gpulint says nothing"]
    return []


def admin_order_case(admin_first: bool) -> dict[str, Any]:
    """A recorded case (random seed, session 22): a pod's two claims of one device each on a node with one GPU, one
    claim with adminAccess. The allocator takes claims in the pod's order: a later adminAccess request shares the
    device an earlier claim took, a later request without it does not (deviceInUse)."""
    claims = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": name, "namespace": NAMESPACE},
         "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "gpu", **admin}}]}}}
        for name, admin in (("claim-0", {"adminAccess": True}), ("claim-1", {}))
    ]  # fmt: skip
    order = claims if admin_first else claims[::-1]
    pod_claims = [{"name": f"c{i}", "resourceClaimName": c["metadata"]["name"]} for i, c in enumerate(order)]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": NAMESPACE},
        "spec": {
            "resourceClaims": pod_claims,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/train:1",
                    "resources": {"claims": [{"name": c["name"]} for c in pod_claims]},
                }
            ],
        },
    }
    nodes = [_node("node-a", "z1")]
    slices = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "pool-0"},
         "spec": {"driver": DRIVER, "nodeName": "node-a", "pool": {"name": "pool-0", "generation": 1,
                  "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}}
    ]  # fmt: skip
    classes = [_class("gpu", [f'device.driver == "{DRIVER}"'])]
    oracle_pod = {**pod, "metadata": {**pod["metadata"], "uid": POD_UID}}
    return {
        "admin": True,
        "nodes": nodes,
        "slices": slices,
        "classes": classes,
        "held": [],
        "rules": [],
        "manifests": [pod, *claims],
        "oracle": {"pod": oracle_pod, "nodes": nodes, "slices": slices, "classes": classes, "claims": claims,
                   "taintRules": []},
    }  # fmt: skip
