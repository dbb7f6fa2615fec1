"""Hypothesis strategies for random manifests: JSON values, quantities, pods, workloads, DRA claims and gangs.
test_properties.py lints them; the fuzz strategies (fuzz/fuzz_strategies.py) build on them."""

from __future__ import annotations

from hypothesis import strategies as st

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
QUANTITY = st.one_of(
    st.integers(-5, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.sampled_from(["1", "0.5", "500m", "1e-1", "1Ki", "abc", "", " 2 ", "1e999999", "9" * 200]),
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.text(max_size=5), "image": st.just("i")},
    optional={
        "resources": st.fixed_dictionaries(
            {},
            optional={
                "requests": st.one_of(
                    JSON_VALUES,
                    st.dictionaries(st.sampled_from(["nvidia.com/gpu", "cpu", "x.io/y"]), QUANTITY, max_size=3),
                ),
                "limits": st.one_of(
                    JSON_VALUES,
                    st.dictionaries(st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]), QUANTITY, max_size=2),
                ),
            },
        )
    },
)
POD_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(JSON_VALUES, st.lists(CONTAINER, max_size=3)),
        "initContainers": st.lists(CONTAINER, max_size=2),
    },
)
MANIFEST = st.one_of(
    st.fixed_dictionaries(
        {
            "apiVersion": st.just("v1"),
            "kind": st.just("Pod"),
            "metadata": st.one_of(JSON_VALUES, st.just({"name": "p"})),
            "spec": POD_SPEC,
        }
    ),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["apps/v1", "batch/v1", "kubeflow.org/v1", "ray.io/v1"]),
            "kind": st.sampled_from(["Deployment", "Job", "PyTorchJob", "RayCluster", "CronJob"]),
            "spec": st.one_of(
                JSON_VALUES,
                st.fixed_dictionaries(
                    {
                        "replicas": JSON_VALUES,
                        "template": st.fixed_dictionaries({"spec": POD_SPEC}),
                        "pytorchReplicaSpecs": st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=2),
                        "workerGroupSpecs": st.lists(JSON_VALUES, max_size=2),
                    }
                ),
            ),
        }
    ),
    st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.just("List"), "items": st.lists(JSON_VALUES, max_size=3)}
    ),
)
CLAIM = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"]),
        "kind": st.sampled_from(["ResourceClaim", "ResourceClaimTemplate", "DeviceClass"]),
        "metadata": st.just({"name": "c", "namespace": "ml"}),
        "spec": st.one_of(
            JSON_VALUES,
            st.fixed_dictionaries(
                {
                    "devices": st.fixed_dictionaries(
                        {
                            "requests": st.lists(
                                st.fixed_dictionaries(
                                    {"name": st.sampled_from(["a", "b"])},
                                    optional={
                                        "exactly": st.fixed_dictionaries(
                                            {"deviceClassName": st.sampled_from(["gpu.nvidia.com", "x", ""])},
                                            optional={
                                                "count": st.one_of(st.integers(-1, 12), JSON_VALUES),
                                                "allocationMode": st.sampled_from(["All", "ExactCount", "?"]),
                                                "selectors": st.lists(
                                                    st.fixed_dictionaries(
                                                        {
                                                            "cel": st.fixed_dictionaries(
                                                                {
                                                                    "expression": st.sampled_from(
                                                                        [
                                                                            'device.attributes["gpu.nvidia.com"].type == "gpu"',
                                                                            "device.x",
                                                                            "1 +",
                                                                            "true",
                                                                            'quantity("1") == 1',
                                                                        ]
                                                                    )
                                                                }
                                                            )
                                                        }
                                                    ),
                                                    max_size=2,
                                                ),
                                            },
                                        ),
                                        "firstAvailable": st.lists(JSON_VALUES, max_size=2),
                                    },
                                ),
                                max_size=3,
                            ),
                            "constraints": st.lists(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "requests": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
                                        "matchAttribute": st.sampled_from(["resource.kubernetes.io/pcieRoot", "x", ""]),
                                    },
                                ),
                                max_size=2,
                            ),
                        }
                    )
                }
            ),
        ),
    }
)
GANG = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["batch.volcano.sh/v1alpha1", "scheduling.k8s.io/v1beta1", "kubeflow.org/v1"]),
        "kind": st.sampled_from(["Job", "PodGroup", "Workload", "PyTorchJob"]),
        "metadata": st.just({"name": "g", "namespace": "ml"}),
        "spec": st.one_of(
            JSON_VALUES,
            st.fixed_dictionaries(
                {},
                optional={
                    "minAvailable": st.one_of(st.integers(-1, 80), JSON_VALUES),
                    "schedulingPolicy": st.one_of(JSON_VALUES, st.just({"gang": {"minCount": 3}})),
                    "schedulingConstraints": st.just({"topology": [{"key": "topology.kubernetes.io/rack"}]}),
                    "runPolicy": st.just({"schedulingPolicy": {"minAvailable": 2}}),
                    "tasks": st.lists(
                        st.fixed_dictionaries(
                            {
                                "replicas": st.integers(0, 70),
                                "template": st.fixed_dictionaries(
                                    {
                                        "metadata": st.just(
                                            {
                                                "annotations": {
                                                    "kueue.x-k8s.io/podset-required-topology": "topology.kubernetes.io/rack"
                                                }
                                            }
                                        ),
                                        "spec": POD_SPEC,
                                    }
                                ),
                            }
                        ),
                        max_size=2,
                    ),
                },
            ),
        ),
    }
)
