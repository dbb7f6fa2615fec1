"""Hypothesis strategies for the whole-pipeline fuzz tests.

Three layers: realistic objects (GPU workloads, DRA claims and classes, gang groups, policies,
inventories, AdmissionReviews), structural mutations of those objects (dropped keys, wrong
types, huge or negative numbers, deep nesting, blown-up lists), and renderings as odd YAML
(tags, anchors and aliases, merge keys, multi-document streams, CRLF, BOM, UTF-16, bytes
that are not UTF-8). The simple random values and manifests of tests/support/strategies.py are
reused, not repeated.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st
from support.strategies import CLAIM, GANG, JSON_VALUES, MANIFEST, QUANTITY

# --------------------------------------------------------------------------- vocabulary

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb", "gpu.intel.com/i915", "nvidia.com/gpus")
OTHER_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage", "rdma/ib")
PRODUCTS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4", "Tesla-T4", "")
ZONES = ("us-east-1a", "us-east-1b", "")
RACKS = ("rack-a1", "rack-a2", "rack-b1")
NODE_NAMES = ("n0", "n1", "n2", "h100-a-0", "")
NAMESPACES = ("ml", "ml-research", "default", "")
LABEL_KEYS = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.memory",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/rack",
    "kubernetes.io/hostname",
    "nvidia.com/mig.capable",
    "node.kubernetes.io/instance-type",
)
TOPOLOGY_KEYS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/rack", "kubernetes.io/hostname", "x")
DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "gpu.amd.com", "missing.example.com", "")
DRIVERS = ("gpu.nvidia.com", "gpu.amd.com", "")

# CEL: valid device selectors and policy expressions, broken ones, and expensive ones (the
# cost limit must stop them, not a timeout).
DEVICE_CEL = (
    'device.driver == "gpu.nvidia.com"',
    'device.attributes["gpu.nvidia.com"].type == "gpu"',
    'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")',
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
    'device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:17"',
    "device.productName",
    "1 +",
    "",
    "true",
    "device.attributes.exists(d, true)",
    '"a".matches("(a+)+$")',
    'quantity("1e999999") == quantity("1")',
    'semver("999999999999999999999.0.0") != null',
    "[1,2,3,4,5,6,7,8].all(a, [1,2,3,4,5,6,7,8].all(b, [1,2,3,4,5,6,7,8].all(c, a + b + c > 0)))",
    '"x".repeat(100000).size() > 0',
    "device.attributes['gpu.nvidia.com'].architecture in ['Hopper', 'Ampere']",
)
POLICY_CEL = (
    "true",
    "false",
    "object.kind == 'Pod'",
    "has(object.metadata.namespace)",
    "podSpecs.all(p, p.spec.containers.all(c, !has(c.resources.requests) || has(c.resources.limits)))",
    "object.metadata.name.size() < 64",
    "inventory.nodes.size() >= 0",
    "objects.size() > 0",
    "params.spec.max >= 1",
    "variables.gpus <= 8",
    "request.operation == 'CREATE'",
    "authorizer.group('').resource('pods').check('create').allowed()",
    "object.spec.replicas > 1 ?",
    "object.nope.nope",
    "1 / 0 == 1",
    "'a' + 1",
    "object.spec.containers.map(c, c.name).join(',')",
    "podSpecs.exists(p, p.spec.containers.exists(c, has(c.resources.limits) && "
    "c.resources.limits.exists(r, r.startsWith('nvidia.com/'))))",
    "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a+b+c > 0)))",
)
# Random CEL-ish text: for the parser, the type checker and the cost estimator.
CEL_TOKENS = (
    "device",
    "object",
    "podSpecs",
    "variables",
    "params",
    ".",
    "attributes",
    "capacity",
    "driver",
    "spec",
    '["gpu.nvidia.com"]',
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ",",
    ":",
    "?",
    ".?",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "in",
    "1",
    "-1",
    "1.5",
    "9223372036854775807",
    "'a'",
    '"x"',
    "b'x'",
    "true",
    "null",
    ".all(x, ",
    ".exists(x, ",
    ".map(x, ",
    ".filter(x, ",
    ".exists_one(x, ",
    "x",
    ".size()",
    "has(",
    ".matches(",
    "'(a+)+$'",
    "quantity('1Gi')",
    "semver('1.0.0')",
    ".compareTo(",
    ".isGreaterThan(",
    "string(",
    "int(",
    "dyn(",
    "duration('1s')",
    "timestamp('2020-01-01T00:00:00Z')",
    "optional.of(1)",
    ".orValue(",
    "[1,2,3]",
    "{'a': 1}",
    ".repeat(100000)",
    ".split(',')",
    ".join(',')",
    "cel.bind(v, ",
    "math.greatest(",
    "lists.range(1000)",
)
CEL_TEXT = st.lists(st.sampled_from(CEL_TOKENS), min_size=1, max_size=12).map(" ".join)
POLICY_CEL_VALUES = st.one_of(st.sampled_from(POLICY_CEL), st.sampled_from(POLICY_CEL), CEL_TEXT, JSON_VALUES)

# --------------------------------------------------------------------------- values

NAME = st.sampled_from(("train", "worker", "infer", "a", "x" * 80, "UPPER", "é", ""))
GPU_AMOUNT = st.one_of(st.integers(0, 16), st.sampled_from(("1", "8", "0.5", "500m", "2k", "1Gi", "-1")), QUANTITY)
CPU_AMOUNT = st.sampled_from(("500m", "2", "64", "190", "1Gi", "512Mi", 4, 0.5))
HUGE_NUMBERS = (10**20, -(10**20), 2**63, -(2**63) - 1, 10**400, 1e308, -1e-308, 2**31, -1, 0)
ODD_SCALARS = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    "",
    "x",
    "1e3",
    "0x10",
    "~",
    "null",
    "yes",
    "NaN",
    "∞",
    "\u202e",
    "a" * 10_000,
    [],
    {},
    [[]],
    {"a": {}},
    [None],
    {"": None},
)


def _labels(keys: tuple[str, ...], values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), values, max_size=4)


LABEL_VALUES = st.one_of(
    st.sampled_from(PRODUCTS + ZONES + RACKS + NODE_NAMES + ("8", "true", "81559")), st.integers(0, 8)
)

# --------------------------------------------------------------------------- pod specs


def resources() -> st.SearchStrategy[dict[str, Any]]:
    amounts = st.dictionaries(st.sampled_from(GPU_RESOURCES + OTHER_RESOURCES), GPU_AMOUNT | CPU_AMOUNT, max_size=3)
    return st.fixed_dictionaries(
        {},
        optional={
            "requests": amounts,
            "limits": amounts,
            "claims": st.lists(st.fixed_dictionaries({"name": NAME}), max_size=2),
        },
    )


CONTAINER = st.fixed_dictionaries(
    {"name": NAME, "image": st.just("registry.example.com/ml/trainer:1")},
    optional={"resources": resources(), "restartPolicy": st.sampled_from(("Always", "Never"))},
)

NODE_SELECTOR_TERM = st.fixed_dictionaries(
    {
        "matchExpressions": st.lists(
            st.fixed_dictionaries(
                {
                    "key": st.sampled_from(LABEL_KEYS),
                    "operator": st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus")),
                },
                optional={"values": st.lists(LABEL_VALUES, max_size=3)},
            ),
            max_size=3,
        )
    }
)
AFFINITY = st.fixed_dictionaries(
    {},
    optional={
        "nodeAffinity": st.fixed_dictionaries(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                    {"nodeSelectorTerms": st.lists(NODE_SELECTOR_TERM, max_size=2)}
                )
            }
        ),
        "podAntiAffinity": st.fixed_dictionaries(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": st.lists(
                    st.fixed_dictionaries(
                        {
                            "topologyKey": st.sampled_from(TOPOLOGY_KEYS),
                            "labelSelector": st.just({"matchLabels": {"app": "train"}}),
                        }
                    ),
                    max_size=2,
                )
            }
        ),
    },
)
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(("nvidia.com/gpu", "node.kubernetes.io/unschedulable", "")),
        "operator": st.sampled_from(("Exists", "Equal")),
        "value": st.sampled_from(("present", "")),
        "effect": st.sampled_from(("NoSchedule", "NoExecute", "")),
    },
)
POD_CLAIM = st.fixed_dictionaries(
    {"name": NAME},
    optional={
        "resourceClaimTemplateName": st.sampled_from(("one-h100", "four-local-h100", "t", "missing")),
        "resourceClaimName": st.sampled_from(("shared-gpu", "c", "missing")),
    },
)


def pod_spec(container: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"containers": st.lists(container, min_size=1, max_size=3)},
        optional={
            "initContainers": st.lists(container, max_size=2),
            "nodeSelector": _labels(LABEL_KEYS, LABEL_VALUES),
            "affinity": AFFINITY,
            "tolerations": st.lists(TOLERATION, max_size=2),
            "topologySpreadConstraints": st.lists(
                st.fixed_dictionaries(
                    {
                        "maxSkew": st.integers(-1, 3),
                        "topologyKey": st.sampled_from(TOPOLOGY_KEYS),
                        "whenUnsatisfiable": st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
                    }
                ),
                max_size=2,
            ),
            "schedulerName": st.sampled_from(("volcano", "default-scheduler", "scheduler-plugins-scheduler")),
            "resourceClaims": st.lists(POD_CLAIM, max_size=2),
            "schedulingGroup": st.fixed_dictionaries({"podGroupName": st.sampled_from(("g", "pg", "missing"))}),
            "workloadRef": st.fixed_dictionaries({"name": st.sampled_from(("w", "missing")), "podGroup": NAME}),
            "nodeName": st.sampled_from(NODE_NAMES),
        },
    )


TEMPLATE_ANNOTATIONS = {
    "kueue.x-k8s.io/podset-required-topology": st.sampled_from(TOPOLOGY_KEYS),
    "kueue.x-k8s.io/podset-slice-required-topology": st.sampled_from(TOPOLOGY_KEYS),
    "kueue.x-k8s.io/podset-slice-size": st.sampled_from(("2", "0", "-1", "x", "99999999999")),
    "kueue.x-k8s.io/pod-group-total-count": st.sampled_from(("4", "0", "x")),
    "scheduling.k8s.io/group-name": st.sampled_from(("g", "missing")),
    "gpulint.io/ignore": st.sampled_from(("all", "gpu-request-without-limit", "nope", "")),
}
TEMPLATE_LABELS = {
    "scheduling.x-k8s.io/pod-group": st.sampled_from(("g", "missing")),
    "kueue.x-k8s.io/pod-group-name": st.sampled_from(("g", "kg")),
    "kueue.x-k8s.io/queue-name": st.just("q"),
    "app": st.just("train"),
}


def template(container: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"spec": pod_spec(container)},
        optional={
            "metadata": st.fixed_dictionaries(
                {},
                optional={
                    "labels": st.fixed_dictionaries({}, optional=TEMPLATE_LABELS),
                    "annotations": st.fixed_dictionaries({}, optional=TEMPLATE_ANNOTATIONS),
                },
            )
        },
    )


# Names objects have and names references use overlap, so the claims, classes and gang groups of a
# run (in the same file or another) are found by the pods that name them.
REFERENCED_NAMES = ("t", "g", "w", "shared-gpu", "one-h100")


def metadata(kind_name: str = "x") -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": st.sampled_from((kind_name, "a", *REFERENCED_NAMES))},
        optional={
            "namespace": st.sampled_from(NAMESPACES),
            "labels": st.fixed_dictionaries({}, optional=TEMPLATE_LABELS),
            "annotations": st.fixed_dictionaries({}, optional=TEMPLATE_ANNOTATIONS),
        },
    )


def _object(api_version: str, kind: str, spec: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"apiVersion": st.just(api_version), "kind": st.just(kind), "metadata": metadata(kind.lower()), "spec": spec}
    )


REPLICAS = st.one_of(st.integers(0, 70), st.sampled_from((None, -1, 10**9)))
RUN_POLICY = st.fixed_dictionaries(
    {
        "schedulingPolicy": st.fixed_dictionaries(
            {}, optional={"minAvailable": REPLICAS, "queue": st.just("q"), "priorityClass": st.just("high")}
        )
    }
)


def workloads(container: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Every kind of workload gpulint reads pod templates from, with containers from ``container``."""
    spec, tmpl = pod_spec(container), template(container)
    replica_spec = st.fixed_dictionaries(
        {"replicas": REPLICAS, "template": tmpl}, optional={"restartPolicy": st.just("OnFailure")}
    )
    return st.one_of(
        _object("v1", "Pod", spec),
        _object("apps/v1", "Deployment", st.fixed_dictionaries({"replicas": REPLICAS, "template": tmpl})),
        _object("apps/v1", "StatefulSet", st.fixed_dictionaries({"replicas": REPLICAS, "template": tmpl})),
        _object("apps/v1", "DaemonSet", st.fixed_dictionaries({"template": tmpl})),
        _object(
            "batch/v1",
            "Job",
            st.fixed_dictionaries(
                {"template": tmpl},
                optional={
                    "parallelism": REPLICAS,
                    "completions": REPLICAS,
                    "completionMode": st.just("Indexed"),
                    "scheduling": st.fixed_dictionaries({"gang": st.fixed_dictionaries({"minCount": REPLICAS})}),
                },
            ),
        ),
        _object(
            "batch/v1",
            "CronJob",
            st.fixed_dictionaries(
                {
                    "schedule": st.just("* * * * *"),
                    "jobTemplate": st.fixed_dictionaries(
                        {"spec": st.fixed_dictionaries({"template": tmpl, "parallelism": REPLICAS})}
                    ),
                }
            ),
        ),
        _object(
            "kubeflow.org/v1",
            "PyTorchJob",
            st.fixed_dictionaries(
                {
                    "pytorchReplicaSpecs": st.dictionaries(
                        st.sampled_from(("Master", "Worker")), replica_spec, max_size=2
                    )
                },
                optional={"runPolicy": RUN_POLICY},
            ),
        ),
        _object(
            "kubeflow.org/v2beta1",
            "MPIJob",
            st.fixed_dictionaries(
                {"mpiReplicaSpecs": st.dictionaries(st.sampled_from(("Launcher", "Worker")), replica_spec, max_size=2)},
                optional={"runPolicy": RUN_POLICY},
            ),
        ),
        _object(
            "batch.volcano.sh/v1alpha1",
            "Job",
            st.fixed_dictionaries(
                {
                    "minAvailable": REPLICAS,
                    "schedulerName": st.just("volcano"),
                    "tasks": st.lists(
                        st.fixed_dictionaries({"name": NAME, "replicas": REPLICAS, "template": tmpl}), max_size=3
                    ),
                }
            ),
        ),
        _object(
            "jobset.x-k8s.io/v1alpha2",
            "JobSet",
            st.fixed_dictionaries(
                {
                    "replicatedJobs": st.lists(
                        st.fixed_dictionaries(
                            {
                                "name": NAME,
                                "replicas": REPLICAS,
                                "template": st.fixed_dictionaries(
                                    {"spec": st.fixed_dictionaries({"parallelism": REPLICAS, "template": tmpl})}
                                ),
                            }
                        ),
                        max_size=2,
                    )
                }
            ),
        ),
        _object(
            "leaderworkerset.x-k8s.io/v1",
            "LeaderWorkerSet",
            st.fixed_dictionaries(
                {
                    "replicas": REPLICAS,
                    "leaderWorkerTemplate": st.fixed_dictionaries(
                        {"size": REPLICAS, "workerTemplate": tmpl}, optional={"leaderTemplate": tmpl}
                    ),
                }
            ),
        ),
        _object(
            "ray.io/v1",
            "RayCluster",
            st.fixed_dictionaries(
                {
                    "headGroupSpec": st.fixed_dictionaries({"template": tmpl}),
                    "workerGroupSpecs": st.lists(
                        st.fixed_dictionaries(
                            {"groupName": NAME, "replicas": REPLICAS, "numOfHosts": REPLICAS, "template": tmpl}
                        ),
                        max_size=2,
                    ),
                }
            ),
        ),
    )


WORKLOADS = workloads(CONTAINER)
# Containers that ask for a GPU in requests only, or with a different limit: what --fix repairs.
FIXABLE_CONTAINER = st.fixed_dictionaries(
    {
        "name": NAME,
        "image": st.just("i"),
        "resources": st.fixed_dictionaries(
            {
                "requests": st.dictionaries(
                    st.sampled_from(GPU_RESOURCES),
                    st.one_of(st.integers(1, 8), st.sampled_from(("1", "2", "8"))),
                    min_size=1,
                    max_size=2,
                )
            },
            optional={
                "limits": st.dictionaries(
                    st.sampled_from(GPU_RESOURCES + ("cpu",)), st.one_of(st.integers(1, 8), st.just("4")), max_size=2
                )
            },
        ),
    }
)
FIXABLE_WORKLOADS = workloads(st.one_of(FIXABLE_CONTAINER, CONTAINER))

# --------------------------------------------------------------------------- DRA and gangs

SELECTORS = st.lists(
    st.fixed_dictionaries(
        {
            "cel": st.fixed_dictionaries(
                {"expression": st.one_of(st.sampled_from(DEVICE_CEL), st.sampled_from(DEVICE_CEL), CEL_TEXT)}
            )
        }
    ),
    max_size=2,
)
EXACTLY = st.fixed_dictionaries(
    {"deviceClassName": st.sampled_from(DEVICE_CLASSES)},
    optional={
        "count": st.one_of(st.integers(-1, 12), st.sampled_from((10**9, 2**63))),
        "selectors": SELECTORS,
        "allocationMode": st.sampled_from(("ExactCount", "All", "?")),
        "adminAccess": st.booleans(),
    },
)
DEVICE_REQUEST = st.fixed_dictionaries(
    {"name": st.sampled_from(("gpu", "gpus", "a", "b"))},
    optional={
        "exactly": EXACTLY,
        "firstAvailable": st.lists(
            st.fixed_dictionaries({"name": st.sampled_from(("big", "small"))}).flatmap(
                lambda sub: EXACTLY.map(lambda e: {**sub, **e})
            ),
            max_size=3,
        ),
        # v1beta1 keeps the request fields flat
        "deviceClassName": st.sampled_from(DEVICE_CLASSES),
        "count": st.integers(-1, 12),
        "selectors": SELECTORS,
    },
)
DEVICES = st.fixed_dictionaries(
    {"requests": st.lists(DEVICE_REQUEST, max_size=3)},
    optional={
        "constraints": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "requests": st.lists(st.sampled_from(("gpu", "gpus", "a", "zzz")), max_size=2),
                    "matchAttribute": st.sampled_from(
                        ("resource.kubernetes.io/pcieRoot", "gpu.nvidia.com/productName", "x", "")
                    ),
                    "distinctAttribute": st.sampled_from(("resource.kubernetes.io/pcieRoot", "x")),
                },
            ),
            max_size=2,
        )
    },
)
DRA_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2")
DRA_OBJECTS = st.one_of(
    st.sampled_from(DRA_VERSIONS).flatmap(
        lambda v: _object(v, "ResourceClaim", st.fixed_dictionaries({"devices": DEVICES}))
    ),
    st.sampled_from(DRA_VERSIONS).flatmap(
        lambda v: _object(
            v, "ResourceClaimTemplate", st.fixed_dictionaries({"spec": st.fixed_dictionaries({"devices": DEVICES})})
        )
    ),
    st.sampled_from(DRA_VERSIONS).flatmap(
        lambda v: _object(
            v,
            "DeviceClass",
            st.fixed_dictionaries(
                {},
                optional={
                    "selectors": SELECTORS,
                    "extendedResourceName": st.sampled_from(("nvidia.com/gpu", "example.com/dra-gpu")),
                },
            ),
        )
    ),
)
GROUP_OBJECTS = st.one_of(
    _object(
        "scheduling.x-k8s.io/v1alpha1",
        "PodGroup",
        st.fixed_dictionaries(
            {"minMember": REPLICAS},
            optional={
                "minResources": st.dictionaries(
                    st.sampled_from(GPU_RESOURCES + OTHER_RESOURCES), GPU_AMOUNT, max_size=2
                )
            },
        ),
    ),
    _object(
        "scheduling.volcano.sh/v1beta1",
        "PodGroup",
        st.fixed_dictionaries(
            {"minMember": REPLICAS},
            optional={"minResources": st.dictionaries(st.sampled_from(GPU_RESOURCES), GPU_AMOUNT, max_size=2)},
        ),
    ),
    _object(
        "scheduling.k8s.io/v1alpha2",
        "PodGroup",
        st.fixed_dictionaries(
            {},
            optional={
                "schedulingPolicy": st.fixed_dictionaries({"gang": st.fixed_dictionaries({"minCount": REPLICAS})}),
                "schedulingConstraints": st.fixed_dictionaries(
                    {"topology": st.lists(st.fixed_dictionaries({"key": st.sampled_from(TOPOLOGY_KEYS)}), max_size=1)}
                ),
            },
        ),
    ),
    _object(
        "scheduling.k8s.io/v1alpha1",
        "Workload",
        st.fixed_dictionaries(
            {
                "podGroups": st.lists(
                    st.fixed_dictionaries(
                        {
                            "name": NAME,
                            "policy": st.fixed_dictionaries({"gang": st.fixed_dictionaries({"minCount": REPLICAS})}),
                        }
                    ),
                    max_size=2,
                )
            }
        ),
    ),
)

# --------------------------------------------------------------------------- inventory

CAPACITY = st.dictionaries(
    st.sampled_from(("nvidia.com/gpu", "amd.com/gpu", "cpu", "memory", "pods")),
    st.one_of(st.sampled_from(("8", "0", "7", "190", "2015Gi", "110", "-1", "1e9")), GPU_AMOUNT),
    max_size=5,
)
NODE = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Node"),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(NODE_NAMES)}, optional={"labels": _labels(LABEL_KEYS, LABEL_VALUES)}
        ),
    },
    optional={
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "unschedulable": st.booleans(),
                "taints": st.lists(
                    st.fixed_dictionaries(
                        {
                            "key": st.sampled_from(("nvidia.com/gpu", "dedicated")),
                            "effect": st.sampled_from(("NoSchedule", "NoExecute", "X")),
                        },
                        optional={"value": st.just("present")},
                    ),
                    max_size=2,
                ),
            },
        ),
        "status": st.fixed_dictionaries({}, optional={"capacity": CAPACITY, "allocatable": CAPACITY}),
    },
)
ATTRIBUTE = st.one_of(
    st.fixed_dictionaries({"string": st.sampled_from(("gpu", "mig", "NVIDIA H100 80GB HBM3", "Hopper", "pci0000:17"))}),
    st.fixed_dictionaries({"int": st.sampled_from((0, 1, -1, 2**63))}),
    st.fixed_dictionaries({"bool": st.booleans()}),
    st.fixed_dictionaries({"version": st.sampled_from(("9.0.0", "570.124.6", "1.2", "v1", "1.0.0-rc.1+b"))}),
    JSON_VALUES,
)
DEVICE = st.fixed_dictionaries(
    {"name": st.sampled_from(("gpu-0", "gpu-1", "mig-0", ""))},
    optional={
        "attributes": st.dictionaries(
            st.sampled_from(
                (
                    "type",
                    "productName",
                    "architecture",
                    "driverVersion",
                    "resource.kubernetes.io/pcieRoot",
                    "gpu.nvidia.com/index",
                )
            ),
            ATTRIBUTE,
            max_size=4,
        ),
        "capacity": st.dictionaries(
            st.sampled_from(("memory", "cores")),
            st.fixed_dictionaries({"value": st.sampled_from(("80Gi", "0", "-1", "1e999", "x"))}),
            max_size=2,
        ),
    },
)
RESOURCE_SLICE = st.sampled_from(DRA_VERSIONS).flatmap(
    lambda v: st.fixed_dictionaries(
        {
            "apiVersion": st.just(v),
            "kind": st.just("ResourceSlice"),
            "metadata": st.fixed_dictionaries({"name": st.sampled_from(("s0", "s1", "s2"))}),
            "spec": st.fixed_dictionaries(
                {"driver": st.sampled_from(DRIVERS), "devices": st.lists(DEVICE, max_size=3)},
                optional={
                    "nodeName": st.sampled_from(NODE_NAMES),
                    "allNodes": st.booleans(),
                    "pool": st.fixed_dictionaries(
                        {
                            "name": st.sampled_from(NODE_NAMES),
                            "generation": st.integers(0, 2),
                            "resourceSliceCount": st.integers(0, 2),
                        }
                    ),
                },
            ),
        }
    )
)
RUNNING_POD = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Pod"),
        "metadata": st.just({"name": "running", "namespace": "ml"}),
        "spec": st.fixed_dictionaries(
            {"nodeName": st.sampled_from(NODE_NAMES), "containers": st.lists(CONTAINER, min_size=1, max_size=2)}
        ),
    },
    optional={"status": st.fixed_dictionaries({"phase": st.sampled_from(("Running", "Succeeded", "Pending"))})},
)
INVENTORY_OBJECT = st.one_of(NODE, NODE, RESOURCE_SLICE, DRA_OBJECTS, RUNNING_POD, GROUP_OBJECTS)

# --------------------------------------------------------------------------- policies

POLICY = st.fixed_dictionaries(
    {
        "apiVersion": st.just("gpulint.io/v1alpha1"),
        "kind": st.just("Policy"),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(("team-rule", "other-rule", "Bad Name", "gpu-non-integer"))}
        ),
        "spec": st.fixed_dictionaries(
            {
                "validations": st.lists(
                    st.fixed_dictionaries(
                        {"expression": POLICY_CEL_VALUES},
                        optional={
                            "message": st.sampled_from(("no", "")),
                            "messageExpression": POLICY_CEL_VALUES,
                            "fieldPath": st.sampled_from(
                                ("spec.containers[0].resources", "spec[", "metadata.name", "x..y")
                            ),
                        },
                    ),
                    min_size=1,
                    max_size=2,
                )
            },
            optional={
                "severity": st.sampled_from(("error", "warning", "info", "fatal")),
                "match": st.fixed_dictionaries(
                    {},
                    optional={
                        "kinds": st.lists(st.sampled_from(("*", "Pod", "apps/Deployment", "Job")), max_size=2),
                        "namespaces": st.lists(st.sampled_from(NAMESPACES), max_size=2),
                        "labelSelector": st.just({"matchLabels": {"app": "train"}}),
                    },
                ),
                "variables": st.lists(
                    st.fixed_dictionaries({"name": st.sampled_from(("gpus", "v")), "expression": POLICY_CEL_VALUES}),
                    max_size=2,
                ),
                "docs": st.fixed_dictionaries({}, optional={"summary": st.just("s")}),
            },
        ),
    }
)
VAP_NAME = st.sampled_from(("gpu-limit", "other"))
VAP = st.fixed_dictionaries(
    {
        "apiVersion": st.just("admissionregistration.k8s.io/v1"),
        "kind": st.just("ValidatingAdmissionPolicy"),
        "metadata": st.fixed_dictionaries({"name": VAP_NAME}),
        "spec": st.fixed_dictionaries(
            {
                "matchConstraints": st.fixed_dictionaries(
                    {
                        "resourceRules": st.lists(
                            st.fixed_dictionaries(
                                {
                                    "apiGroups": st.just(["", "apps", "batch"]),
                                    "apiVersions": st.just(["*"]),
                                    "operations": st.sampled_from((["CREATE"], ["*"], ["DELETE"])),
                                    "resources": st.sampled_from((["pods"], ["deployments", "jobs"], ["*"])),
                                }
                            ),
                            max_size=2,
                        )
                    }
                ),
                "validations": st.lists(
                    st.fixed_dictionaries({"expression": POLICY_CEL_VALUES}), min_size=1, max_size=2
                ),
            },
            optional={
                "paramKind": st.just({"apiVersion": "example.com/v1", "kind": "GpuLimits"}),
                "matchConditions": st.lists(
                    st.fixed_dictionaries({"name": NAME, "expression": POLICY_CEL_VALUES}), max_size=2
                ),
                "variables": st.lists(
                    st.fixed_dictionaries({"name": st.just("gpus"), "expression": POLICY_CEL_VALUES}), max_size=1
                ),
            },
        ),
    }
)
BINDING = st.fixed_dictionaries(
    {
        "apiVersion": st.just("admissionregistration.k8s.io/v1"),
        "kind": st.just("ValidatingAdmissionPolicyBinding"),
        "metadata": st.just({"name": "binding"}),
        "spec": st.fixed_dictionaries(
            {"policyName": st.one_of(VAP_NAME, JSON_VALUES)},
            optional={
                "validationActions": st.lists(st.sampled_from(("Deny", "Warn", "Audit", "Bogus")), max_size=2),
                "paramRef": st.sampled_from(({"name": "limits"}, {"selector": {"matchLabels": {"a": "b"}}}, {})),
                "matchResources": st.just({"namespaceSelector": {"matchLabels": {"gpu": "yes"}}}),
            },
        ),
    }
)
PARAMS = st.fixed_dictionaries(
    {
        "apiVersion": st.just("example.com/v1"),
        "kind": st.just("GpuLimits"),
        "metadata": st.just({"name": "limits", "labels": {"a": "b"}}),
        "spec": st.fixed_dictionaries({"max": st.one_of(st.integers(-1, 9), JSON_VALUES)}),
    }
)
POLICY_OBJECTS = st.lists(st.one_of(POLICY, POLICY, VAP, BINDING, PARAMS), min_size=1, max_size=4)

# --------------------------------------------------------------------------- configuration (.gpulint.yaml)

RULE_IDS = st.sampled_from(
    (
        "gpu-request-without-limit",
        "schema-invalid",
        "gang-missing",
        "claim-unsatisfiable",
        "all",
        "nope",
        "GPU-NON-INTEGER",
        "",
    )
)
RULE_LIST = st.one_of(st.lists(RULE_IDS, max_size=3), RULE_IDS)
CONFIG = st.fixed_dictionaries(
    {},
    optional={
        "select": RULE_LIST,
        "ignore": RULE_LIST,
        "severity": st.dictionaries(RULE_IDS, st.sampled_from(("error", "warning", "info", "off", 1)), max_size=2),
        "per-path-ignores": st.dictionaries(
            st.sampled_from(("m0.yaml", "*.yaml", "**/x", "[", "")), RULE_LIST, max_size=2
        ),
        "gpu-resources": st.lists(st.sampled_from(GPU_RESOURCES + ("example.com/*", "")), max_size=2),
        "gpu-runtime-class": st.sampled_from(("nvidia", "Nvidia", "", 3)),
        "kubernetes-version": st.sampled_from(("1.35", "1.37", 1.36, "2.0", "v1.36", "")),
        "fail-on": st.sampled_from(("error", "warning", "info", "never", None)),
        "exclude": st.lists(st.sampled_from(("m1.yaml", "**", "*.yaml", "[", "/")), max_size=2),
        "feature-gates": st.one_of(
            st.sampled_from(("GenericWorkload=true", "A=maybe", "=", "")),
            st.dictionaries(
                st.sampled_from(("GenericWorkload", "CompositePodGroup", "Bogus")),
                st.sampled_from((True, False, "yes", 1)),
                max_size=2,
            ),
        ),
        "policies": st.lists(st.sampled_from(("gpulint:all", "gpulint:nope", "policies", "missing.yaml")), max_size=2),
        "inventory": st.lists(st.sampled_from(("inventory", "missing", "m0.yaml")), max_size=2),
    },
)
CONFIG_FILES = st.one_of(
    st.builds(lambda c: (".gpulint.yaml", c), CONFIG.map(lambda c: yaml.safe_dump(c).encode())),
    st.builds(
        lambda b: (".gpulint.yaml", b),
        st.sampled_from((b"", b"- a\n", b"select: [\n", b"\xff\xfe\x00", b"select: *a\n", b"? [a]\n: b\n")),
    ),
    st.builds(
        lambda b: ("pyproject.toml", b"[tool.gpulint]\n" + b),
        st.sampled_from(
            (
                b"select = ['gpu-request-without-limit']\n",
                b"select = 5\n",
                b"fail-on = 'x'\n",
                b"= broken",
                b"\xff",
                b"[tool.gpulint.severity]\nschema-invalid = 'info'\n",
                b"inventory = ['missing']\n",
            )
        ),
    ),
)

GITIGNORE = st.lists(
    st.sampled_from(
        (
            "*.yaml",
            "!m0.yaml",
            "m1.yaml",
            "inventory/",
            "/policies",
            "**/cluster.yaml",
            "[",
            "\\",
            "!",
            "#",
            "",
            "*.y[a",
            "m?.yaml",
            "**",
            "a/**/b",
            " ",
            "x" * 300,
            "\udcff",
            "\x00",
        )
    ),
    max_size=4,
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogateescape"))
NAMESPACE = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Namespace"),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(NAMESPACES)},
            optional={
                "labels": st.dictionaries(st.sampled_from(("gpu", "team")), st.sampled_from(("yes", "no")), max_size=2)
            },
        ),
    }
)

# --------------------------------------------------------------------------- mutations


# A marker for "write this value with this YAML tag" (JSON renderings drop the tag).
@dataclass(frozen=True)
class Tagged:
    tag: str
    value: Any


TAGS = (
    "!!str",
    "!!int",
    "!!float",
    "!!bool",
    "!!null",
    "!!binary",
    "!!timestamp",
    "!!set",
    "!!omap",
    "!!seq",
    "!!map",
    "!custom",
    "!!python/object:os.system",
    "tag:example.com,2000:x",
)


def paths_of(value: Any, prefix: tuple[Any, ...] = (), limit: int = 400) -> list[tuple[Any, ...]]:
    """Every path into a JSON-like value (breadth-first, at most ``limit``)."""
    out: list[tuple[Any, ...]] = [prefix]
    queue = [(prefix, value)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            out.append((*path, key))
            queue.append(((*path, key), child))
    return out[:limit]


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        root = root[step]
    return root


def _nest(value: Any, depth: int, as_list: bool) -> Any:
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


def _reaches(root: Any, target: Any) -> bool:
    """Whether ``target`` (by identity) is ``root`` or inside it: an alias to it would make a cycle."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Tagged):
            stack.append(node.value)
    return False


# A shared subtree is written out in full each time it occurs (JSON has no aliases): mutations that
# share or repeat subtrees stay under this many written nodes, or the generator (not gpulint) would
# be what runs out of memory.
MAX_EXPANDED_NODES = 50_000


def _expanded_size(value: Any, limit: int = MAX_EXPANDED_NODES) -> int:
    """Nodes as JSON would write them (a shared subtree counted each time); counting stops past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Tagged):
            stack.append(node.value)
    return count


MUTATIONS = (
    "drop",
    "wrong_type",
    "huge_number",
    "deep_nesting",
    "blow_up_list",
    "tag",
    "alias",
    "odd_key",
    "json_value",
)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[Any], max_mutations: int = 3) -> Any:
    """``base``'s value with 0..max_mutations structural mutations at random paths."""
    value = copy.deepcopy(draw(base))  # strategies may hand out shared objects (st.just): never mutate those
    blown_up = False
    for _ in range(draw(st.integers(0, max_mutations))):
        paths = [p for p in paths_of(value) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _get(value, path[:-1])
        key = path[-1]
        operation = draw(st.sampled_from(MUTATIONS))
        if operation == "drop":
            del parent[key]
        elif operation == "wrong_type":
            parent[key] = copy.deepcopy(draw(st.sampled_from(ODD_SCALARS)))
        elif operation == "huge_number":
            parent[key] = draw(st.sampled_from(HUGE_NUMBERS))
        elif operation == "deep_nesting":  # below, at and beyond the loader's depth limit (256)
            parent[key] = _nest(parent[key], draw(st.sampled_from((30, 250, 257, 400))), draw(st.booleans()))
        elif operation == "blow_up_list" and not blown_up:  # once: lists of lists would grow without bound
            old = parent[key]
            parent[key] = [old] * draw(st.sampled_from((2, 50, 300)))
            blown_up = True
            if _expanded_size(value) > MAX_EXPANDED_NODES:
                parent[key] = old
        elif operation == "tag":
            parent[key] = Tagged(draw(st.sampled_from(TAGS)), parent[key])
        elif operation == "alias":  # the same object in two places: written as an anchor and an alias
            other = _get(value, draw(st.sampled_from(paths)))
            old = parent[key]
            if not _reaches(other, parent):
                parent[key] = other
                if _expanded_size(value) > MAX_EXPANDED_NODES:
                    parent[key] = old
        elif operation == "odd_key" and isinstance(parent, dict):
            parent[draw(st.sampled_from((1, None, True, 1.5, "", "<<", "a" * 300, "apiVersion")))] = parent.pop(key)
        elif operation == "json_value":
            parent[key] = draw(JSON_VALUES)
    return value


# --------------------------------------------------------------------------- rendering as YAML/JSON text


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes Tagged values with their tag and any key type."""


def _represent_tagged(dumper: yaml.SafeDumper, tagged: Tagged) -> yaml.Node:
    node = dumper.represent_data(tagged.value)
    node.tag = tagged.tag if not tagged.tag.startswith("!!") else "tag:yaml.org,2002:" + tagged.tag[2:]
    return node


_Dumper.add_representer(Tagged, _represent_tagged)


def _plain(value: Any) -> Any:
    """JSON view of a value: tags dropped, odd keys as strings, non-finite floats as strings."""
    if isinstance(value, Tagged):
        return _plain(value.value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def dump_yaml(value: Any, flow: bool, width: int = 80) -> str:
    try:
        return yaml.dump(
            value, Dumper=_Dumper, default_flow_style=flow, sort_keys=False, allow_unicode=True, width=width
        )
    except (yaml.YAMLError, RecursionError, ValueError):  # nesting beyond the emitter: write it as JSON
        return dump_json(value, indent=None)


def dump_json(value: Any, indent: int | None) -> str:
    try:
        return json.dumps(_plain(value), indent=indent)
    except (RecursionError, ValueError):
        return "{}"


@st.composite
def document_text(draw: st.DrawFn, value: Any) -> str:
    style = draw(st.sampled_from(("block", "block", "flow", "json", "json-indent")))
    if style == "json":
        return dump_json(value, None)
    if style == "json-indent":
        return dump_json(value, 2)
    return dump_yaml(value, style == "flow", draw(st.sampled_from((80, 20, 10_000))))


DECORATIONS = (
    "comment",
    "disable",
    "directive",
    "empty_doc",
    "end_marker",
    "merge_key",
    "alias_bomb",
    "helm",
    "tab",
    "truncate",
    "long_line",
    "dup_key",
    "null_doc",
    "list_wrap",
    "deep_flow",
    "deep_json",
)
DEEP = (300, 3000, 100_000)
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
MERGE_DOC = (
    "base: &base {apiVersion: v1, kind: Pod, metadata: {name: merged}}\n"
    "pod:\n  <<: *base\n  spec:\n    containers:\n    - name: c\n      image: i\n"
    "      resources: {requests: {nvidia.com/gpu: 1}}\n"
)


@st.composite
def stream_text(draw: st.DrawFn, documents: list[Any]) -> str:
    """A multi-document YAML stream of ``documents`` with some odd YAML around them."""
    if documents and draw(st.integers(0, 5)) == 0:  # kubectl's List wrapping
        documents = [{"apiVersion": "v1", "kind": "List", "items": documents}]
    texts = [draw(document_text(d)) for d in documents]
    for _ in range(draw(st.integers(0, 2))):
        decoration = draw(st.sampled_from(DECORATIONS))
        index = draw(st.integers(0, max(0, len(texts) - 1))) if texts else 0
        if not texts:
            texts.append("")
        text = texts[index]
        if decoration == "comment":
            texts[index] = "# a comment\n" + text
        elif decoration == "disable":
            texts[index] = (
                draw(
                    st.sampled_from(
                        (
                            "# gpulint: disable=all\n",
                            "# gpulint: disable-file\n",
                            "# gpulint: disable-next-line=gpu-request-without-limit why\n",
                            "# gpulint: disable=nope\n",
                        )
                    )
                )
                + text
            )
        elif decoration == "directive":
            texts[index] = "%YAML 1.1\n---\n" + text
        elif decoration == "empty_doc":
            texts.insert(index, "")
        elif decoration == "end_marker":
            texts[index] = text + "...\n"
        elif decoration == "merge_key":
            texts.insert(index, MERGE_DOC)
        elif decoration == "alias_bomb":
            texts.insert(index, ALIAS_BOMB)
        elif decoration == "helm":
            texts[index] = text.replace("name:", "name: {{ .Values.name }}\n  x:", 1)
        elif decoration == "tab":
            texts[index] = text.replace("  ", "\t", 1)
        elif decoration == "truncate" and text:
            texts[index] = text[: draw(st.integers(0, len(text) - 1))]
        elif decoration == "long_line":
            texts[index] = text + "# " + "x" * 100_000 + "\n"
        elif decoration == "dup_key":
            texts[index] = "kind: Pod\n" + text
        elif decoration == "null_doc":
            texts.insert(index, "~\n")
        elif decoration == "list_wrap":
            texts[index] = "- " + text.replace("\n", "\n  ")
        elif decoration == "deep_flow":  # libyaml's nesting limit and the loader's depth limit
            depth = draw(st.sampled_from(DEEP))
            texts.insert(index, "deep: " + "[" * depth + "]" * depth + "\n")
        elif decoration == "deep_json":  # a whole file of JSON nesting: inventories read JSON with the json module
            depth = draw(st.sampled_from(DEEP))
            opening, closing = draw(st.sampled_from((("[", "]"), ('{"a": ', "}"))))
            return opening * depth + "1" + closing * depth
    separator = draw(st.sampled_from(("---\n", "\n---\n", "--- \n", "---\n# between\n")))
    return separator.join(texts)


ENCODINGS = ("utf-8",) * 6 + ("crlf", "mixed-crlf", "bom", "utf-16", "bad-byte", "latin-1", "nul")


@st.composite
def encoded(draw: st.DrawFn, text: str) -> bytes:
    """``text`` as file bytes: plain UTF-8 mostly, else CRLF, a BOM, UTF-16, stray bytes."""
    encoding = draw(st.sampled_from(ENCODINGS))
    if encoding == "crlf":
        return text.replace("\n", "\r\n").encode()
    if encoding == "mixed-crlf":
        return text.replace("\n", "\r\n", text.count("\n") // 2).encode()
    if encoding == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if encoding == "utf-16":
        return text.encode("utf-16")
    if encoding == "latin-1":
        return text.encode("latin-1", "replace") + b"\n# caf\xe9\n"
    raw = text.encode()
    position = draw(st.integers(0, len(raw)))
    return raw[:position] + (b"\xff\xfe\x80" if encoding == "bad-byte" else b"\x00") + raw[position:]


def file_bytes(objects: st.SearchStrategy[list[Any]]) -> st.SearchStrategy[bytes]:
    """Files of the given objects, with odd YAML and odd encodings."""
    return objects.flatmap(stream_text).flatmap(encoded)


MANIFEST_OBJECT = st.one_of(
    mutated(WORKLOADS),
    mutated(WORKLOADS),
    mutated(DRA_OBJECTS),
    mutated(GROUP_OBJECTS),
    MANIFEST,
    CLAIM,
    GANG,
    NAMESPACE,
)
MANIFEST_OBJECTS = st.lists(MANIFEST_OBJECT, min_size=1, max_size=4)
INVENTORY_OBJECTS = st.lists(mutated(INVENTORY_OBJECT, max_mutations=1), min_size=1, max_size=8)

# --------------------------------------------------------------------------- AdmissionReviews

REVIEW_REQUEST = st.fixed_dictionaries(
    {
        "uid": st.sampled_from(("uid-1", "705ab4f5-6393-11e8-b7cc-42010a800002")),
        "operation": st.sampled_from(("CREATE", "UPDATE", "DELETE", "CONNECT", "create")),
        "object": mutated(st.one_of(WORKLOADS, DRA_OBJECTS, GROUP_OBJECTS)),
    },
    optional={
        "namespace": st.sampled_from(NAMESPACES),
        "kind": st.fixed_dictionaries(
            {
                "group": st.sampled_from(("", "apps", "batch")),
                "version": st.just("v1"),
                "kind": st.sampled_from(("Pod", "Deployment", "Job")),
            }
        ),
        "oldObject": st.one_of(st.none(), WORKLOADS),
        "dryRun": st.booleans(),
        "userInfo": st.just({"username": "system:serviceaccount:ml:ci", "groups": ["system:authenticated"]}),
    },
)
REVIEW = mutated(
    st.fixed_dictionaries(
        {"apiVersion": st.just("admission.k8s.io/v1"), "kind": st.just("AdmissionReview"), "request": REVIEW_REQUEST}
    ),
    max_mutations=2,
)


@st.composite
def review_body(draw: st.DrawFn) -> bytes:
    """An AdmissionReview as the API server would send it, or a mangled body."""
    body = dump_json(draw(REVIEW), indent=draw(st.sampled_from((None, 1))))
    mangle = draw(st.sampled_from(("none", "none", "none", "truncate", "bytes", "utf-16", "yaml", "deep")))
    raw = body.encode()
    if mangle == "truncate":
        return raw[: draw(st.integers(0, len(raw)))]
    if mangle == "bytes":
        return draw(st.binary(max_size=200))
    if mangle == "utf-16":
        return body.encode("utf-16")
    if mangle == "yaml":
        return dump_yaml(json.loads(body), False).encode()
    if mangle == "deep":  # the json module's recursion limit, inside a well-formed review
        depth = draw(st.sampled_from((500, 5000, 100_000)))
        return (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", '
            b'"operation": "CREATE", "object": {"apiVersion": "v1", "kind": "Pod", "spec": '
            + b"[" * depth
            + b"]" * depth
            + b"}}}"
        )
    return raw
